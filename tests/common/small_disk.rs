//! A home on a disk of its own that a test can fill: a tmpfs of a few MiB
//! mounted on the home's directory, and a ballast file written until the
//! kernel says `ENOSPC`. Real full-disk errors, from every writer (hearth,
//! libgit2, tantivy), with nothing faked.
//!
//! Mounting needs root and a kernel that lets this process mount (CI runs
//! as root on such a machine). Elsewhere the full-disk tests say loudly
//! why they were skipped, and the soak runs without its full-disk fault.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::TestHome;

pub struct SmallDisk {
    mount: PathBuf,
    ballast: PathBuf,
}

impl SmallDisk {
    /// Mounts a tmpfs of `mib` MiB on `home`'s (new) directory.
    pub fn mount(home: &TestHome, mib: u64) -> Result<SmallDisk, String> {
        std::fs::create_dir_all(&home.path).unwrap();
        let out = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={mib}m,mode=0755"),
                "tmpfs",
            ])
            .arg(&home.path)
            .output()
            .map_err(|e| format!("mount: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "mount -t tmpfs: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(SmallDisk {
            mount: home.path.clone(),
            // Under `.hearth/`: never committed, never watched.
            ballast: home.path.join(".hearth/ballast"),
        })
    }

    /// [`SmallDisk::mount`], or why not where this machine cannot mount:
    /// for the soak, whose full-disk fault is one of many. The caller
    /// records the fault as not run (its report names it, and the soak test
    /// fails on it as root), so nothing passes as if it had run.
    pub fn mount_or_why(home: &TestHome, mib: u64) -> Result<SmallDisk, String> {
        SmallDisk::mount(home, mib)
            .map_err(|e| format!("a full disk needs a tmpfs, and {e} (run as root)"))
    }

    /// [`SmallDisk::mount`], or a failure that says why: for a test that
    /// is about a full disk (`#[ignore]`d, run as root by `.ci/run`), which
    /// must not pass without having run.
    pub fn mount_or_fail(home: &TestHome, mib: u64) -> SmallDisk {
        SmallDisk::mount(home, mib)
            .unwrap_or_else(|e| panic!("a full disk needs a tmpfs, and {e}: run this test as root"))
    }

    /// Fills the disk to the last byte.
    pub fn fill(&self) {
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.ballast)
            .unwrap();
        let block = vec![0u8; 64 * 1024];
        loop {
            match file.write(&block) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) if e.raw_os_error() == Some(libc::ENOSPC) => break,
                Err(e) => panic!("filling {}: {e}", self.ballast.display()),
            }
        }
        // Whatever a partial block leaves, a byte at a time.
        while file.write(&[0]).is_ok_and(|n| n == 1) {}
    }

    /// Fills the disk until `left` bytes are free (a disk that is low, not
    /// yet out of room).
    pub fn fill_leaving(&self, left: u64) {
        let free = fs_free(&self.mount);
        let size = free.saturating_sub(left);
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.ballast)
            .unwrap();
        let mut writer = std::io::BufWriter::new(file);
        let block = vec![0u8; 64 * 1024];
        let mut written = 0u64;
        while written < size {
            let n = (size - written).min(block.len() as u64) as usize;
            writer.write_all(&block[..n]).unwrap();
            written += n as u64;
        }
        writer.flush().unwrap();
    }

    /// Gives the room back.
    pub fn free(&self) {
        let _ = std::fs::remove_file(&self.ballast);
    }

    /// Whether the ballast is down (the disk is full).
    pub fn is_full(&self) -> bool {
        self.ballast.exists()
    }

    pub fn path(&self) -> &Path {
        &self.mount
    }
}

/// Free bytes on the filesystem holding `path`, as `df` says.
pub fn fs_free(path: &Path) -> u64 {
    let out = Command::new("df")
        .args(["--output=avail", "-B1"])
        .arg(path)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .nth(1)
        .and_then(|l| l.trim().parse().ok())
        .expect("df --output=avail")
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        // Lazy: a process still holding a file must not keep it mounted.
        let _ = Command::new("umount").arg("-l").arg(&self.mount).status();
    }
}
