//! Diagnostics: `tracing` to stderr, level from `RUST_LOG` (default info).
//!
//! Under journald (stderr is the stream `JOURNAL_STREAM` names), a line
//! carries no timestamp of its own, since journald adds one, and starts
//! with its level as a syslog priority (`<3>` error, `<4>` warning, `<6>`
//! info, `<7>` debug), which journald reads as the entry's priority
//! (sd-daemon(3)), so `journalctl -p warning -u hearth` shows warnings and
//! errors only. Elsewhere lines keep their timestamps.

use std::fmt;

use tracing::{Event, Level, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::EnvFilter;

pub fn init(journal_stream: Option<&str>) {
    // rmcp logs every connection and notification at info: its warnings
    // are what an operator needs.
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info,rmcp=warn"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false);
    if journal_stream.is_some_and(stderr_is) {
        builder.with_ansi(false).event_format(Journald).init();
    } else {
        builder
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .init();
    }
}

/// Whether stderr is the `DEVICE:INODE` journald said it connected; a
/// child that inherited the variable but writes elsewhere is not.
fn stderr_is(journal_stream: &str) -> bool {
    let Some((dev, ino)) = journal_stream.split_once(':') else {
        return false;
    };
    let (Ok(dev), Ok(ino)) = (dev.parse::<u64>(), ino.parse::<u64>()) else {
        return false;
    };
    use std::os::unix::fs::MetadataExt;
    let stderr = std::os::fd::AsFd::as_fd(&std::io::stderr())
        .try_clone_to_owned()
        .map(std::fs::File::from);
    stderr
        .and_then(|f| f.metadata())
        .is_ok_and(|m| m.dev() == dev && m.ino() == ino)
}

/// The syslog priority of a level, as sd-daemon(3) spells it.
pub fn priority(level: Level) -> u8 {
    match level {
        Level::ERROR => 3,
        Level::WARN => 4,
        Level::INFO => 6,
        Level::DEBUG | Level::TRACE => 7,
    }
}

struct Journald;

impl<S, N> FormatEvent<S, N> for Journald
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        write!(writer, "<{}>", priority(*event.metadata().level()))?;
        ctx.field_format().format_fields(writer.by_ref(), event)?;
        writeln!(writer)
    }
}
