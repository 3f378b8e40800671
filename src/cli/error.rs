//! The one user-facing error type: what went wrong (with its causes), what
//! to do about it, and the exit code. Every command returns it; `main`
//! prints it as `error:` / `caused by:` / `hint:`.

use std::process::ExitCode;

pub struct CommandError {
    pub error: anyhow::Error,
    pub hint: Option<String>,
    pub code: u8,
}

impl CommandError {
    pub fn new(error: impl Into<anyhow::Error>, hint: Option<String>) -> CommandError {
        CommandError {
            error: error.into(),
            hint,
            code: 1,
        }
    }

    pub fn print(&self) -> ExitCode {
        eprintln!("error: {}", self.error);
        for cause in self.error.chain().skip(1) {
            eprintln!("  caused by: {cause}");
        }
        if let Some(hint) = &self.hint {
            eprintln!("hint: {hint}");
        }
        ExitCode::from(self.code)
    }
}

macro_rules! with_hint {
    ($($ty:ty),* $(,)?) => {$(
        impl From<$ty> for CommandError {
            fn from(e: $ty) -> CommandError {
                let hint = e.hint();
                CommandError::new(e, hint)
            }
        }
    )*};
}

with_hint!(
    hearth::home::HomeError,
    hearth::home::lock::LockError,
    hearth::repo::RepoError,
    hearth::config::ConfigError,
    hearth::supervisor::SupervisorError,
    hearth::model::ModelError,
);

impl From<hearth::mailbox::MailboxError> for CommandError {
    fn from(e: hearth::mailbox::MailboxError) -> CommandError {
        CommandError::new(e, None)
    }
}

impl From<hearth::tick::TickError> for CommandError {
    fn from(e: hearth::tick::TickError) -> CommandError {
        CommandError::new(e, None)
    }
}

impl From<std::io::Error> for CommandError {
    fn from(e: std::io::Error) -> CommandError {
        CommandError::new(e, None)
    }
}
