//! `hearth day [--since WHEN] [--json]`: what the agent did since WHEN (by
//! default the last 24 hours), as a person reads it: messages answered with
//! their subjects, files written, letters sent, asks, proposals,
//! consolidations, flares and spend, idle ticks folded into one line.

use std::path::Path;

use chrono::{DateTime, Duration, Utc};

use hearth::view::day;

use super::{CommandError, Env, Exit};

#[derive(clap::Args)]
pub struct Args {
    /// From when: a time (2026-11-24T09:00:00Z) or a span back from now (24h, 90m, 2d).
    #[arg(long, value_name = "WHEN", default_value = "24h")]
    since: String,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

/// `WHEN` as a moment: RFC 3339, or a span back from `now`.
fn since(when: &str, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
    if let Ok(t) = DateTime::parse_from_rfc3339(when) {
        return Some(t.with_timezone(&Utc));
    }
    let (number, unit) = when.split_at(when.find(|c: char| !c.is_ascii_digit())?);
    let n: i64 = number.parse().ok()?;
    let span = match unit {
        "m" | "min" => Duration::minutes(n),
        "h" => Duration::hours(n),
        "d" => Duration::days(n),
        _ => return None,
    };
    Some(now - span)
}

pub fn run(env: &Env, flag: Option<&Path>, args: Args) -> Result<Exit, CommandError> {
    let home = env.open_home(flag)?;
    let now = env.clock.now();
    let Some(from) = since(&args.since, now) else {
        return Err(CommandError::usage(
            &format!("--since {:?} is neither a time nor a span", args.since),
            "hearth day --since 24h  (or 90m, 2d, or 2026-11-24T09:00:00Z)",
        ));
    };
    let day = day::day(&home, from, now);
    if args.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&day).expect("a day serialises")
        );
        return Ok(Exit::Success);
    }
    outln!(
        "since {}: {} ticks ({} answered the inbox, {} failed, {} idle), {} asks, ${:.2} spent{}",
        from.format("%Y-%m-%d %H:%M UTC"),
        day.ticks,
        day.answered,
        day.failed,
        day.idle,
        day.asks,
        day.spend_usd,
        match day.spent.calls > 0.0 {
            true => format!(" (${:.2} of it by recall's rerank)", day.spent.calls),
            false => String::new(),
        }
    );
    for event in &day.events {
        outln!(
            "{}  {:<14} {}",
            event.at.format("%m-%d %H:%M"),
            event.who,
            event.what
        );
    }
    if day.events.is_empty() {
        outln!("nothing happened");
    }
    for problem in &day.problems {
        outln!("problem: {problem}");
    }
    Ok(Exit::Success)
}

#[cfg(test)]
mod tests {
    use super::since;

    #[test]
    fn a_span_or_a_time() {
        let now = chrono::DateTime::parse_from_rfc3339("2026-11-24T09:00:00Z")
            .unwrap()
            .with_timezone(&chrono::Utc);
        assert_eq!(
            since("24h", now).unwrap().to_rfc3339(),
            "2026-11-23T09:00:00+00:00"
        );
        assert_eq!(
            since("90m", now).unwrap().to_rfc3339(),
            "2026-11-24T07:30:00+00:00"
        );
        assert_eq!(
            since("2d", now).unwrap().to_rfc3339(),
            "2026-11-22T09:00:00+00:00"
        );
        assert!(since("2026-11-24T08:00:00Z", now).is_some());
        assert!(since("soon", now).is_none());
        assert!(since("5y", now).is_none());
    }
}
