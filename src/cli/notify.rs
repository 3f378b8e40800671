//! `hearth notify test`: a test notice to every `[notify]` target, saying
//! what each answered. `hearth notify --unit-failed UNIT`: what systemd's
//! `OnFailure=` runs (`hearth-notify@.service`) when it gives up on a
//! hearth unit: the unit's last journal lines, through the same targets,
//! with no supervisor left to send them.

use std::path::Path;

use hearth::config::Config;
use hearth::notify::{targets, Notice, NoticeState, Severity};

use super::{CommandError, Env, Exit};

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Option<Sub>,
    /// systemd gave up on UNIT (its `OnFailure=`): send its last journal
    /// lines to every target.
    #[arg(long, value_name = "UNIT")]
    unit_failed: Option<String>,
}

#[derive(clap::Subcommand)]
enum Sub {
    /// Send a test notice to every target of [notify] and say what each answered.
    Test,
}

pub fn run(env: &Env, flag: Option<&Path>, args: Args) -> Result<Exit, CommandError> {
    // Run by systemd for a failed unit: its home is the unit's.
    let from_unit = args.unit_failed.as_deref().and_then(home_of_unit);
    let flag = flag.or(from_unit.as_deref());
    let home = env.open_home(flag)?;
    let config = Config::load(&home.config_path())?;
    let targets = targets::targets(&config.notify, &env.notify_secrets(&config.notify));
    let home_name = hearth::notify::incidents::home_name(&home);
    let now = env.clock.now();
    let notice = match (args.command, args.unit_failed) {
        (Some(Sub::Test), None) => Notice::new(
            &home_name,
            "test",
            Severity::Info,
            "a test notice".into(),
            format!(
                "`hearth notify test` on {}: if you read this, notices reach you here.",
                home.root().display()
            ),
            "test",
            NoticeState::Test,
            now,
        ),
        (None, Some(unit)) => Notice::new(
            &home_name,
            "unit-failed",
            Severity::Critical,
            format!("systemd gave up on {unit}"),
            format!(
                "systemd stopped restarting {unit}: the agent is not running.\n\nIts last \
                 journal lines:\n\n{}\n\nTo look: `systemctl status {unit}`, `journalctl -u \
                 {unit}`, `hearth status --home {}`.",
                journal_tail(&unit),
                home.root().display()
            ),
            &format!("unit-failed: {unit}"),
            NoticeState::UnitFailed,
            now,
        ),
        _ => {
            return Err(CommandError::usage(
                "say what to send: `hearth notify test` or `hearth notify --unit-failed UNIT`",
                "hearth notify --help",
            ))
        }
    };
    if targets.is_empty() {
        outln!(
            "[notify] names no target (ntfy, webhook, email): nothing to send; see \
             docs/operations.md"
        );
        return Ok(Exit::Error);
    }
    let mut failed = 0;
    for target in &targets {
        match target.send(&notice) {
            Ok(answer) => outln!("{:<8} delivered: {answer}", target.name()),
            Err(why) => {
                failed += 1;
                outln!("{:<8} FAILED: {why}", target.name());
            }
        }
    }
    Ok(if failed == 0 {
        Exit::Success
    } else {
        Exit::Error
    })
}

/// The home a shipped unit runs: `hearth.service` /var/lib/hearth,
/// `hearth@NAME.service` /var/lib/hearth/NAME.
fn home_of_unit(unit: &str) -> Option<std::path::PathBuf> {
    let name = unit.strip_suffix(".service").unwrap_or(unit);
    match name.strip_prefix("hearth@") {
        Some(instance)
            if !instance.is_empty()
                && !instance.contains(['/', '\\'])
                && !instance.starts_with('.') =>
        {
            Some(Path::new("/var/lib/hearth").join(instance))
        }
        _ if name == "hearth" => Some("/var/lib/hearth".into()),
        _ => None,
    }
}

/// The unit's last journal lines (or why there are none).
fn journal_tail(unit: &str) -> String {
    let out = std::process::Command::new("journalctl")
        .args(["-u", unit, "-n", "30", "--no-pager", "-o", "short-iso"])
        .output();
    match out {
        Ok(o) if o.status.success() && !o.stdout.is_empty() => {
            let text = String::from_utf8_lossy(&o.stdout);
            let tail: Vec<&str> = text.lines().rev().take(30).collect();
            tail.into_iter()
                .rev()
                .map(|l| format!("    {l}"))
                .collect::<Vec<_>>()
                .join("\n")
        }
        Ok(o) => format!(
            "    (journalctl said nothing: {})",
            String::from_utf8_lossy(&o.stderr).trim()
        ),
        Err(e) => format!("    (journalctl could not run: {e})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shipped_units_home_is_found_from_its_name() {
        assert_eq!(
            home_of_unit("hearth@alice.service"),
            Some("/var/lib/hearth/alice".into())
        );
        assert_eq!(
            home_of_unit("hearth.service"),
            Some("/var/lib/hearth".into())
        );
        assert_eq!(home_of_unit("hearth@../x.service"), None);
        assert_eq!(home_of_unit("nginx.service"), None);
    }
}
