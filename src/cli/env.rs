//! The environment, read once at start-up into one value; no other code of
//! hearth reads it. What the library needs from it (the home, the clock,
//! an API key, systemd's sockets, the test hooks) is handed down from here.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use hearth::clock::Clock;
use hearth::config::ModelConfig;
use hearth::home::{self, Home};
use hearth::model::{self, ModelError};
use hearth::tick::TestHooks;

use super::CommandError;

pub struct Env {
    pub hearth_home: Option<PathBuf>,
    pub cwd: PathBuf,
    pub exe: PathBuf,
    pub notify_socket: Option<String>,
    pub watchdog_usec: Option<String>,
    pub watchdog_pid: Option<String>,
    /// journald's `DEVICE:INODE` of our stderr, when it is connected.
    pub journal_stream: Option<String>,
    /// `HEARTH_NOW` (RFC 3339) pins the clock for the whole process;
    /// `HEARTH_SIM_CLOCK=FILE` simulates it (see [`Clock`]).
    pub clock: Clock,
    /// `HEARTH_TEST_TICK_DELAY`, `HEARTH_TEST_FAIL`: see [`TestHooks`].
    pub hooks: TestHooks,
    /// Every variable, for the API key `[model] api_key_env` names (known
    /// only once the config is read).
    vars: BTreeMap<String, String>,
}

impl Env {
    pub fn read() -> Result<Env, CommandError> {
        let vars: BTreeMap<String, String> = std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
            .filter(|(_, v)| !v.is_empty())
            .collect();
        let var = |name: &str| vars.get(name).cloned();
        let clock = Clock::from_env_value(var("HEARTH_NOW").as_deref())?;
        // A simulated month (tests, `cargo bench --bench soak`): the time
        // lives in a file every process of the home shares.
        let clock = match var("HEARTH_SIM_CLOCK") {
            Some(file) => {
                let start = match clock {
                    Clock::Pinned(t) => Some(t),
                    _ => None,
                };
                Clock::simulated(Path::new(&file), start)?
            }
            None => clock,
        };
        Ok(Env {
            hearth_home: std::env::var_os("HEARTH_HOME")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from),
            cwd: std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
            exe: std::env::current_exe().unwrap_or_else(|_| PathBuf::from("hearth")),
            notify_socket: var("NOTIFY_SOCKET"),
            watchdog_usec: var("WATCHDOG_USEC"),
            watchdog_pid: var("WATCHDOG_PID"),
            journal_stream: var("JOURNAL_STREAM"),
            clock,
            hooks: TestHooks::parse(
                var("HEARTH_TEST_TICK_DELAY").as_deref(),
                var("HEARTH_TEST_FAIL").as_deref(),
            ),
            vars,
        })
    }

    /// `name` on this process's `PATH`, as a shell would find it.
    pub fn find_program(&self, name: &str) -> Option<PathBuf> {
        let path = self.vars.get("PATH")?;
        std::env::split_paths(path)
            .map(|dir| dir.join(name))
            .find(|candidate| {
                std::fs::metadata(candidate).is_ok_and(|m| {
                    std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o111 != 0
                        && m.is_file()
                })
            })
    }

    /// `HEARTH_TEST_INTAKE_DELAY=MS`: the supervisor pauses this long
    /// between writing a peer's handoff into the inbox and recording it,
    /// so a test can `kill -9` it there (see `supervisor::peers`).
    pub fn intake_pause(&self) -> Option<Duration> {
        self.vars
            .get("HEARTH_TEST_INTAKE_DELAY")
            .and_then(|ms| ms.parse().ok())
            .map(Duration::from_millis)
    }

    /// `HEARTH_TEST_ACCEPT_PAUSE_MS=MS`: `hearth proposals accept` pauses
    /// this long between its writes, so a test can `kill -9` it midway
    /// (see `proposals::journal`).
    pub fn accept_pause(&self) -> Option<Duration> {
        self.vars
            .get("HEARTH_TEST_ACCEPT_PAUSE_MS")
            .and_then(|ms| ms.parse().ok())
            .map(Duration::from_millis)
    }

    /// `HEARTH_GIT_USERNAME` / `HEARTH_GIT_PASSWORD`, for `[git] push` to
    /// an `https://` remote (the SSH agent serves `ssh://` ones).
    pub fn remote_credentials(&self) -> hearth::repo::RemoteCredentials {
        hearth::repo::RemoteCredentials {
            username: self.vars.get("HEARTH_GIT_USERNAME").cloned(),
            password: self.vars.get("HEARTH_GIT_PASSWORD").cloned(),
        }
    }

    /// The secrets `[notify]`'s targets use, from the variables it names.
    pub fn notify_secrets(
        &self,
        config: &hearth::config::notify::NotifyConfig,
    ) -> hearth::notify::targets::Secrets {
        let var = |name: &str| {
            self.vars
                .get(name)
                .filter(|v| !v.trim().is_empty())
                .cloned()
        };
        hearth::notify::targets::Secrets {
            ntfy_token: var(&config.ntfy_token_env),
            webhook_secret: var(&config.webhook_secret_env),
            passed: hearth::process::ALWAYS_PASSED
                .iter()
                .filter_map(|name| Some((name.to_string(), self.vars.get(*name)?.clone())))
                .collect(),
        }
    }

    /// The home directory the user means (it may not exist yet).
    pub fn home_dir(&self, flag: Option<&Path>) -> Result<PathBuf, CommandError> {
        Ok(home::resolve(flag, self.hearth_home.as_deref(), &self.cwd)?)
    }

    /// The whole environment, for the variables operator tools may name.
    pub fn vars(&self) -> &BTreeMap<String, String> {
        &self.vars
    }

    /// An existing home.
    pub fn open_home(&self, flag: Option<&Path>) -> Result<Home, CommandError> {
        Ok(Home::open(&self.home_dir(flag)?)?)
    }

    /// The API key for `config`'s provider, if it needs one and it is set.
    pub fn api_key(&self, config: &ModelConfig) -> Option<String> {
        let variable = model::key_variable(config)?;
        self.vars
            .get(&variable)
            .filter(|k| !k.trim().is_empty())
            .cloned()
    }

    /// A provider that needs a key and has none fails here, at start-up,
    /// naming the variable, not as a string of failed ticks.
    pub fn require_key(&self, config: &ModelConfig) -> Result<(), CommandError> {
        match model::key_variable(config) {
            Some(variable) if self.api_key(config).is_none() => Err(ModelError::MissingKey {
                provider: config.provider.as_str(),
                variable,
            }
            .into()),
            _ => Ok(()),
        }
    }
}
