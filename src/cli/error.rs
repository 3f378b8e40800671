//! The one user-facing error type: what went wrong (with its causes), what
//! to do about it, and how `hearth` exits. Every command returns it; `main`
//! prints it as `error:` / `caused by:` / `hint:`. Every module's error
//! converts into it with its hint, and [`Exit`] is the one table of exit
//! statuses.

use std::process::ExitCode;

use hearth::exchange::class::Class;

/// How `hearth` ends: the one table of exit statuses (DESIGN 13: 1 on
/// error, 2 on misuse; DESIGN 3 and 7 for ticks and panic).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Done; also when stdout closed early (`hearth status | head -1`).
    Success,
    /// An error the message and hint explain; `audit --strict` found drift.
    Error,
    /// The command line was misused (clap exits 2 for its own findings).
    Usage,
    /// The healer gave up. The unit's `RestartPreventExitStatus=2` keeps
    /// hearth stopped until a human runs `hearth heal --resume`.
    Panic,
    /// A tick child ends with its class's code, which the supervisor reads.
    Tick(Class),
}

impl Exit {
    pub fn code(self) -> u8 {
        match self {
            Exit::Success => 0,
            Exit::Error => 1,
            Exit::Usage | Exit::Panic => 2,
            Exit::Tick(class) => u8::try_from(class.exit_code()).unwrap_or(1),
        }
    }
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> ExitCode {
        ExitCode::from(exit.code())
    }
}

/// An error as the user sees it: never without a hint, so every `error:`
/// line is followed by what to do about it.
#[derive(Debug)]
pub struct CommandError {
    pub error: anyhow::Error,
    pub hint: String,
    pub exit: Exit,
}

impl CommandError {
    pub fn new(error: impl Into<anyhow::Error>, hint: impl Into<String>) -> CommandError {
        CommandError {
            error: error.into(),
            hint: hint.into(),
            exit: Exit::Error,
        }
    }

    /// The command line asked for something that cannot be done as asked.
    pub fn usage(message: &str, hint: &str) -> CommandError {
        CommandError {
            error: anyhow::anyhow!("{message}"),
            hint: hint.into(),
            exit: Exit::Usage,
        }
    }

    /// Whoever read our output stopped reading (`| head`): not an error.
    fn is_broken_pipe(&self) -> bool {
        self.error
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    }

    pub fn print(&self) -> ExitCode {
        if self.is_broken_pipe() {
            return Exit::Success.into();
        }
        // stderr may be closed too; there is nowhere left to say so.
        use std::io::Write as _;
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "error: {}", self.error);
        for cause in self.error.chain().skip(1) {
            let _ = writeln!(err, "  caused by: {cause}");
        }
        let _ = writeln!(err, "hint: {}", self.hint);
        self.exit.into()
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
    hearth::model::ModelError,
    hearth::json_file::JsonFileError,
    hearth::mailbox::MailboxError,
    hearth::exchange::ExchangeError,
    hearth::healer::HealError,
    hearth::proposals::ProposalError,
    hearth::atomic::WriteError,
    hearth::recall::IndexError,
    hearth::conversation::store::ConversationError,
    hearth::clock::ClockError,
    hearth::ask::AskError,
    hearth::collab::store::RecordError,
    hearth::provenance::vouching::VouchError,
    hearth::tools::requested::ApproveError,
);

/// An I/O error that reached a command without a path: its kind's hint.
impl From<std::io::Error> for CommandError {
    fn from(e: std::io::Error) -> CommandError {
        let hint = hearth::io_hint::kind_hint(&e);
        CommandError::new(e, hint)
    }
}

impl From<hearth::supervisor::SupervisorError> for CommandError {
    fn from(e: hearth::supervisor::SupervisorError) -> CommandError {
        let exit = match e {
            hearth::supervisor::SupervisorError::Panicked { .. } => Exit::Panic,
            _ => Exit::Error,
        };
        let hint = e.hint();
        CommandError {
            error: e.into(),
            hint,
            exit,
        }
    }
}
