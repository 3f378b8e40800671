//! A read-only view of a directory: a bind mount remounted read only, as
//! systemd's `ReadOnlyPaths=` makes one. Unlike file modes, it holds for
//! root too, so a test run as root still sees every write refused.
//!
//! Mounting needs root and a kernel that lets this process mount (CI runs
//! as root on such a machine); elsewhere the tests that need it say loudly
//! why they were skipped.

use std::path::{Path, PathBuf};
use std::process::Command;

pub struct ReadOnlyView {
    at: PathBuf,
}

impl ReadOnlyView {
    /// Shows `source` at `at` (a new directory), read only.
    pub fn bind(source: &Path, at: &Path) -> Result<ReadOnlyView, String> {
        std::fs::create_dir_all(at).unwrap();
        let mount = |args: &[&str]| {
            let out = Command::new("mount")
                .args(args)
                .output()
                .map_err(|e| format!("mount: {e}"))?;
            if out.status.success() {
                Ok(())
            } else {
                Err(format!(
                    "mount {}: {}",
                    args.join(" "),
                    String::from_utf8_lossy(&out.stderr).trim()
                ))
            }
        };
        let (source, target) = (source.to_str().unwrap(), at.to_str().unwrap());
        mount(&["--bind", source, target])?;
        let view = ReadOnlyView {
            at: at.to_path_buf(),
        };
        mount(&["-o", "remount,bind,ro", target])?;
        // What the test relies on: nothing can be written through it.
        let probe = at.join(".probe");
        if std::fs::File::create(&probe).is_ok() {
            let _ = std::fs::remove_file(&probe);
            return Err(format!("{target} is not read only after the remount"));
        }
        Ok(view)
    }

    /// [`ReadOnlyView::bind`], or a failure that says why: the test is
    /// `#[ignore]`d, and run as root by `.ci/run`; it must not pass without
    /// having run.
    pub fn bind_or_fail(source: &Path, at: &Path) -> ReadOnlyView {
        ReadOnlyView::bind(source, at).unwrap_or_else(|e| {
            panic!("a read-only view needs a bind mount, and {e}: run this test as root")
        })
    }
}

impl Drop for ReadOnlyView {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.at).status();
    }
}
