//! The kernel's sandbox around every process hearth starts for a tool — an
//! operator tool, an MCP server, a job's check, `[flares] exec`, a request
//! the operator approved — so that what such a process can reach is set by
//! the kernel, not by path checks in hearth.
//!
//! It is bubblewrap (Debian's `bubblewrap`, the sandbox Flatpak and Codex
//! run on): one small setuid-free program that puts the process in its own
//! user, mount, pid, network, IPC and UTS namespaces, where:
//!
//! - the system is read-only; `/tmp` is the process's own, empty;
//! - the home is read-only, and its `.git/`, `.hearth/`, `tools/`, `jobs/`
//!   and `hearth.toml` are not there; the other homes beside it (its
//!   parent folder) and `/run` (the doors' sockets, the session bus) are
//!   not there either, nor `/etc/hearth` (the service's environment file);
//! - it writes only what its grant names (a collaboration's workdir, what
//!   the manifest grants with `write = [...]`);
//! - it sees no process of hearth's (its own pid namespace, so no
//!   `/proc/PID/environ` of the tick or the supervisor to read);
//! - it reaches no network unless the grant says `network = true`.
//!
//! So a write in the home is hearth's or the operator's by construction,
//! and the hand-edit rule holds. A sandbox that cannot be set up is never
//! skipped: the process does not run ([`available`] says why and the fix).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The sandbox's program, where Debian puts it.
pub const BWRAP: &str = "/usr/bin/bwrap";

static PROGRAM: OnceLock<PathBuf> = OnceLock::new();

/// Runs the sandbox with `program` from now on (the binary finds `bwrap`
/// on hearth's own `PATH` at start: the library reads no environment).
/// The first word holds.
pub fn use_program(program: PathBuf) {
    let _ = PROGRAM.set(program);
}

/// The sandbox's program: the one [`use_program`] named, else [`BWRAP`].
fn program() -> &'static Path {
    PROGRAM.get().map_or(Path::new(BWRAP), PathBuf::as_path)
}

/// The names inside the home a sandboxed process never sees: git's
/// internals (a hook, `core.fsmonitor`), hearth's runtime files, the
/// operator's commands and settings.
const HIDDEN: [&str; 5] = [".git", ".hearth", "tools", "jobs", "hearth.toml"];

/// What one sandboxed process may reach.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Jail {
    /// The home: read-only, without its `.git/`, `.hearth/`, `tools/`, `jobs/`
    /// and `hearth.toml`; the homes beside it hidden.
    pub home: PathBuf,
    /// Where the process starts (the home, or a granted workdir).
    pub cwd: PathBuf,
    /// What it may write: each an absolute path that exists.
    pub write: Vec<PathBuf>,
    /// What it may read besides the system and the home (the host's
    /// `/tmp` and the homes' folder are hidden).
    pub read: Vec<PathBuf>,
    /// Its own folder that outlives it, under the home's `.hearth/`
    /// (never committed): given as `HEARTH_SCRATCH`.
    pub scratch: Option<PathBuf>,
    /// Whether it may reach the network.
    pub network: bool,
}

impl Jail {
    /// A jail in `home`, started there, writing nothing, offline.
    pub fn in_home(home: &Path) -> Jail {
        Jail {
            home: home.to_path_buf(),
            cwd: home.to_path_buf(),
            write: Vec::new(),
            read: Vec::new(),
            scratch: None,
            network: false,
        }
    }

    /// The argv that runs `argv` inside this jail: `bwrap`, its
    /// arguments, `--`, then `argv` unchanged. The environment is the
    /// caller's to clear and set, as for any command.
    pub fn argv(&self, argv: &[String]) -> Vec<OsString> {
        let own_proc = probed().map_or(true, |p| p.own_proc);
        self.argv_with(argv, own_proc)
    }

    /// [`Jail::argv`], with a `/proc` of its own or the host's (read-only,
    /// through the system's bind) as the kernel allows.
    fn argv_with(&self, argv: &[String], own_proc: bool) -> Vec<OsString> {
        let mut out: Vec<OsString> = vec![program().into()];
        let mut arg = |items: &[&dyn AsRef<std::ffi::OsStr>]| {
            out.extend(items.iter().map(|i| i.as_ref().to_os_string()));
        };
        // --die-with-parent: killing the sandbox's group (a timeout, the
        // tick's end) ends everything inside; --new-session: no terminal
        // to push keystrokes into.
        arg(&[&"--die-with-parent", &"--new-session", &"--unshare-all"]);
        if self.network {
            arg(&[&"--share-net"]);
        }
        arg(&[&"--ro-bind", &"/", &"/", &"--dev", &"/dev"]);
        if own_proc {
            arg(&[&"--proc", &"/proc"]);
        }
        arg(&[&"--tmpfs", &"/tmp", &"--tmpfs", &"/run"]);
        if self.network {
            // The name server's file, where the host keeps it under /run
            // (systemd-resolved's stub, resolvconf's).
            let resolv = std::fs::canonicalize("/etc/resolv.conf").ok();
            if let Some(dir) = resolv
                .as_deref()
                .filter(|r| r.starts_with("/run"))
                .and_then(Path::parent)
            {
                arg(&[&"--ro-bind-try", &dir, &dir]);
            }
        }
        // What is hidden is an empty tmpfs, made read-only once every
        // mount inside it is made: a write there fails, never lands.
        let mut hiding: Vec<PathBuf> = vec!["/run".into()];
        if Path::new("/etc/hearth").is_dir() {
            hiding.push("/etc/hearth".into());
            arg(&[&"--tmpfs", &"/etc/hearth"]);
        }
        if let Some(beside) = self.home.parent().filter(|p| p.parent().is_some()) {
            hiding.push(beside.to_path_buf());
            arg(&[&"--tmpfs", &beside]);
        }
        arg(&[&"--ro-bind", &self.home, &self.home]);
        for name in HIDDEN {
            let path = self.home.join(name);
            match std::fs::symlink_metadata(&path) {
                Ok(meta) if meta.is_dir() => {
                    arg(&[&"--tmpfs", &path]);
                    hiding.push(path);
                }
                Ok(_) => arg(&[&"--ro-bind", &"/dev/null", &path]),
                Err(_) => {}
            }
        }
        for path in self.read.iter().chain(&self.programs(argv, &hiding)) {
            arg(&[&"--ro-bind", path, path]);
        }
        for path in &self.write {
            arg(&[&"--bind", path, path]);
        }
        if let Some(scratch) = &self.scratch {
            arg(&[&"--bind", scratch, scratch]);
            arg(&[&"--setenv", &"HEARTH_SCRATCH", scratch]);
        }
        for path in &hiding {
            arg(&[&"--remount-ro", path]);
        }
        arg(&[&"--chdir", &self.cwd, &"--"]);
        out.extend(argv.iter().map(OsString::from));
        out
    }

    /// The folders a command's own files live in, where the jail would
    /// hide them: for each absolute path `argv` names (the program, a
    /// script it is given) under a hidden folder (`/tmp`, the homes'
    /// folder), that folder's entry it is in, shown read-only — a venv in
    /// `~/venvs/mcp` or a checkout in `/tmp/build` is the tool itself.
    fn programs(&self, argv: &[String], hiding: &[PathBuf]) -> Vec<PathBuf> {
        let mut shown: Vec<PathBuf> = Vec::new();
        let roots = hiding
            .iter()
            .map(PathBuf::as_path)
            .chain([Path::new("/tmp")]);
        let roots: Vec<&Path> = roots.collect();
        for named in argv.iter().map(Path::new).filter(|p| p.is_absolute()) {
            if named.starts_with(&self.home) || !named.exists() {
                continue;
            }
            for root in &roots {
                let Ok(rest) = named.strip_prefix(root) else {
                    continue;
                };
                if let Some(first) = rest.components().next() {
                    let entry = root.join(first);
                    if !shown.contains(&entry) && !self.home.starts_with(&entry) {
                        shown.push(entry);
                    }
                }
            }
        }
        shown
    }

    /// A `std` command for `argv` inside this jail.
    pub fn command(&self, argv: &[String]) -> std::process::Command {
        let argv = self.argv(argv);
        let mut command = std::process::Command::new(&argv[0]);
        command.args(&argv[1..]);
        command
    }
}

/// Why the sandbox cannot be set up on this machine.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the tool sandbox (bubblewrap) cannot be set up here: {why}")]
pub struct Unavailable {
    /// What the system said.
    pub why: String,
}

impl Unavailable {
    /// What the operator can do about it.
    pub fn hint(&self) -> String {
        "install bubblewrap (`apt install bubblewrap`) and let this account make user \
         namespaces (Debian: sysctl kernel.unprivileged_userns_clone=1; under systemd, no \
         RestrictNamespaces= that forbids user, mnt, pid, net, ipc, uts); nothing runs \
         unsandboxed meanwhile. To run one tool without it, say sandbox = \"none\" in its \
         manifest and run `hearth trust`"
            .into()
    }
}

/// Whether the sandbox can be set up here: tried once per process (a
/// `true` in an empty jail), the answer kept.
pub fn available() -> Result<(), Unavailable> {
    probed().map(|_| ())
}

/// How the sandbox can be set up here, tried once per process.
fn probed() -> Result<Probed, Unavailable> {
    static PROBED: OnceLock<Result<Probed, Unavailable>> = OnceLock::new();
    PROBED.get_or_init(probe).clone()
}

/// What the probe found the kernel allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Probed {
    /// A `/proc` of the jail's own pid namespace can be mounted. Where the
    /// host's `/proc` is partly hidden (systemd's `ProtectKernelTunables`,
    /// `ProcSubset=pid`), the kernel refuses a fresh one inside a user
    /// namespace: the jail then shows the host's, read-only — its
    /// processes visible by name, but every hearth process that holds a
    /// secret is non-dumpable and in another user namespace, so no
    /// `environ` of theirs can be read.
    own_proc: bool,
}

fn probe() -> Result<Probed, Unavailable> {
    let mut first = None;
    for own_proc in [true, false] {
        // Any real folder does for a home here: what is tried is the sandbox.
        let jail = Jail::in_home(Path::new("/usr"));
        let out = jail
            .argv_with(&["/bin/true".to_string()], own_proc)
            .split_first()
            .map(|(program, args)| {
                std::process::Command::new(program)
                    .args(args)
                    .env_clear()
                    .stdin(std::process::Stdio::null())
                    .output()
            })
            .expect("an argv")
            .map_err(|e| Unavailable {
                why: format!("{} could not start ({e})", program().display()),
            })?;
        if out.status.success() {
            if !own_proc {
                tracing::warn!(
                    "the tool sandbox cannot mount a /proc of its own here ({}); tools see \
                     the host's processes by name (none of their environments)",
                    first.as_deref().unwrap_or("refused")
                );
            }
            return Ok(Probed { own_proc });
        }
        let said = crate::process::tail(&out.stderr, 300);
        if !said.contains("proc") || first.is_some() {
            return Err(Unavailable {
                why: first.unwrap_or(said),
            });
        }
        first = Some(said);
    }
    unreachable!("the loop returns")
}

/// Where each confined process keeps its own folder, in the home.
pub const SCRATCH: &str = ".hearth/scratch";

/// A configuration's sandbox keys, as written (a tool's manifest, a job's
/// file, `[flares]`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Keys<'a> {
    /// `"none"` to run unsandboxed; left out, the sandbox.
    pub sandbox: Option<&'a str>,
    /// `network = true`.
    pub network: bool,
    /// `write = [...]`.
    pub write: &'a [String],
    /// `read = [...]`.
    pub read: &'a [String],
}

/// How one configured process is confined: the kernel's sandbox with what
/// its configuration grants, or — only where the operator wrote `sandbox =
/// "none"` and trusted it with `hearth trust` — nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Confinement {
    /// In a [`Jail`] of the home, with these grants.
    Sandboxed {
        /// The home.
        home: PathBuf,
        /// What it may write besides a workdir it is started in.
        write: Vec<PathBuf>,
        /// What it may read besides the system and the home.
        read: Vec<PathBuf>,
        /// Its own folder under `.hearth/scratch/` (`HEARTH_SCRATCH`).
        scratch: PathBuf,
        /// Whether it may reach the network.
        network: bool,
    },
    /// With hearth's account's rights (the operator's choice, named by
    /// `hearth status`, `hearth audit` and the page).
    Unsandboxed,
}

/// Why a configuration's sandbox keys do not hold, with the fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeysRefused {
    /// `sandbox` names no sandbox.
    #[error(
        "sandbox = {named:?} is not a sandbox: leave it out (the kernel's sandbox), or say \
         \"none\" to run unsandboxed"
    )]
    NoSuchSandbox {
        /// What it named.
        named: String,
    },
    /// A `write` path that is not absolute.
    #[error("write = [{path:?}]: give absolute paths outside the home, e.g. \"/var/spool/agent\"")]
    WriteNotAbsolute {
        /// The path.
        path: PathBuf,
    },
    /// A `write` path in (or around) the home.
    #[error(
        "write = [{path:?}]: a tool never writes the home (its writes would pass for your hand \
         edits); grant a folder outside it"
    )]
    WriteInHome {
        /// The path.
        path: PathBuf,
    },
    /// A `read` path that is not absolute.
    #[error("read = [{path:?}]: give absolute paths, e.g. \"/srv/src/app\"")]
    ReadNotAbsolute {
        /// The path.
        path: PathBuf,
    },
}

impl KeysRefused {
    /// The key that does not hold, for the line that says it.
    pub fn key(&self) -> &'static str {
        match self {
            KeysRefused::NoSuchSandbox { .. } => "sandbox",
            KeysRefused::WriteNotAbsolute { .. } | KeysRefused::WriteInHome { .. } => "write",
            KeysRefused::ReadNotAbsolute { .. } => "read",
        }
    }
}

impl Confinement {
    /// The confinement a configuration's keys say, for the process
    /// `name` (`tool-weather`, `job-digest`, `flares`: its scratch folder's
    /// name) of `home`: `sandbox` (`"kernel"`, the default, or `"none"`),
    /// `network`, `write` (absolute paths outside the home) and `read`
    /// (absolute paths). Why not, when they do not hold.
    pub fn from_keys(home: &Path, name: &str, keys: &Keys<'_>) -> Result<Confinement, KeysRefused> {
        let Keys {
            sandbox,
            network,
            write,
            read,
        } = *keys;
        match sandbox {
            None | Some("kernel") => {}
            Some("none") => return Ok(Confinement::Unsandboxed),
            Some(other) => {
                return Err(KeysRefused::NoSuchSandbox {
                    named: other.to_string(),
                })
            }
        }
        let mut granted = Vec::new();
        for path in write {
            let path = PathBuf::from(path);
            if !path.is_absolute() {
                return Err(KeysRefused::WriteNotAbsolute { path });
            }
            if path.starts_with(home) || home.starts_with(&path) {
                return Err(KeysRefused::WriteInHome { path });
            }
            granted.push(path);
        }
        let mut readable = Vec::new();
        for path in read {
            let path = PathBuf::from(path);
            if !path.is_absolute() {
                return Err(KeysRefused::ReadNotAbsolute { path });
            }
            readable.push(path);
        }
        Ok(Confinement::Sandboxed {
            home: home.to_path_buf(),
            write: granted,
            read: readable,
            scratch: home.join(SCRATCH).join(name),
            network,
        })
    }

    /// Whether it runs outside the sandbox.
    pub fn is_unsandboxed(&self) -> bool {
        *self == Confinement::Unsandboxed
    }

    /// The argv that runs `argv` started in `cwd`: inside the jail (a
    /// workdir other than the home is writable too), or as it is. A
    /// sandbox that cannot be set up here is an error: never skipped.
    pub fn argv(&self, argv: &[String], cwd: &Path) -> Result<Vec<OsString>, Unavailable> {
        match self {
            Confinement::Unsandboxed => Ok(argv.iter().map(OsString::from).collect()),
            Confinement::Sandboxed {
                home,
                write,
                read,
                scratch,
                network,
            } => {
                available()?;
                let mut write = write.clone();
                if cwd != home.as_path() {
                    write.push(cwd.to_path_buf());
                }
                std::fs::create_dir_all(scratch).map_err(|e| Unavailable {
                    why: format!(
                        "its scratch folder {} cannot be made: {e}",
                        scratch.display()
                    ),
                })?;
                let jail = Jail {
                    home: home.clone(),
                    cwd: cwd.to_path_buf(),
                    write,
                    read: read.clone(),
                    scratch: Some(scratch.clone()),
                    network: *network,
                };
                Ok(jail.argv(argv))
            }
        }
    }

    /// [`Confinement::argv`] as a `std` command (its cwd set to `cwd`).
    pub fn command(
        &self,
        argv: &[String],
        cwd: &Path,
    ) -> Result<std::process::Command, Unavailable> {
        let argv = self.argv(argv, cwd)?;
        let mut command = std::process::Command::new(&argv[0]);
        command.args(&argv[1..]).current_dir(cwd);
        Ok(command)
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // fixtures, not state
mod tests {
    use super::*;

    fn words(argv: &[OsString]) -> String {
        argv.iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn a_jail_hides_the_homes_internals_and_grants_only_what_it_names() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("agent");
        for sub in [".git", ".hearth", "tools", "memory"] {
            std::fs::create_dir_all(home.join(sub)).unwrap();
        }
        std::fs::write(home.join("hearth.toml"), "").unwrap();
        let mut jail = Jail::in_home(&home);
        let offline = words(&jail.argv(&["/bin/true".into()]));
        let h = home.display();
        for hidden in [".git", ".hearth", "tools"] {
            assert!(
                offline.contains(&format!("--tmpfs {h}/{hidden}")),
                "{offline}"
            );
            assert!(
                offline.contains(&format!("--remount-ro {h}/{hidden}")),
                "{offline}"
            );
        }
        assert!(offline.contains(&format!("--ro-bind /dev/null {h}/hearth.toml")));
        assert!(
            offline.contains(&format!("--tmpfs {}", dir.path().display())),
            "the homes beside"
        );
        assert!(offline.contains("--unshare-all") && !offline.contains("--share-net"));
        assert!(
            offline.ends_with(&format!("--chdir {h} -- /bin/true")),
            "{offline}"
        );
        jail.network = true;
        jail.write = vec!["/var/spool/x".into()];
        let granted = words(&jail.argv(&["/bin/true".into()]));
        assert!(granted.contains("--share-net"), "{granted}");
        assert!(
            granted.contains("--bind /var/spool/x /var/spool/x"),
            "{granted}"
        );
    }

    #[test]
    fn a_tools_own_program_under_a_hidden_folder_is_shown_read_only() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("agent");
        std::fs::create_dir_all(&home).unwrap();
        let venv = dir.path().join("venvs/mcp/bin");
        std::fs::create_dir_all(&venv).unwrap();
        std::fs::write(venv.join("server"), "").unwrap();
        let jail = Jail::in_home(&home);
        let server = venv.join("server").display().to_string();
        let argv = words(&jail.argv(&[server, "/nonexistent/x".into()]));
        let shown = dir.path().join("venvs").display().to_string();
        assert!(
            argv.contains(&format!("--ro-bind {shown} {shown}")),
            "{argv}"
        );
        assert!(
            !argv.contains(&format!(
                "--ro-bind {} {}",
                dir.path().display(),
                dir.path().display()
            )),
            "never the homes' folder itself: {argv}"
        );
    }

    #[test]
    fn keys_that_would_let_a_tool_write_the_home_are_refused() {
        let home = Path::new("/var/lib/hearth/agent");
        let inside = vec!["/var/lib/hearth/agent/memory".to_string()];
        let above = vec!["/var/lib/hearth".to_string()];
        let relative = vec!["spool".to_string()];
        for write in [&inside, &above, &relative] {
            let keys = Keys {
                write,
                ..Keys::default()
            };
            assert!(
                Confinement::from_keys(home, "tool-x", &keys).is_err(),
                "{write:?}"
            );
        }
        let none = Keys {
            sandbox: Some("none"),
            ..Keys::default()
        };
        assert!(Confinement::from_keys(home, "tool-x", &none)
            .unwrap()
            .is_unsandboxed());
        let odd = Keys {
            sandbox: Some("docker"),
            ..Keys::default()
        };
        assert!(Confinement::from_keys(home, "tool-x", &odd).is_err());
    }
}
