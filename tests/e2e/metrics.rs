//! `hearth metrics` and `[metrics] textfile`: the Prometheus text format,
//! checked by Prometheus's own `promtool check metrics`.

#![allow(clippy::disallowed_methods)] // fixtures, not state

use std::process::{Command, Stdio};

use crate::common::TestHome;

/// `promtool check metrics` on `text`: its complaints, or `None` if it is
/// not installed (`.ci/run` installs Debian's `prometheus`).
fn promtool(text: &str) -> Option<String> {
    use std::io::Write;
    let mut child = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .ok()?;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    Some(if out.status.success() {
        said
    } else {
        format!("FAILED: {said}")
    })
}

fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

#[test]
fn the_supervisor_keeps_a_textfile_promtool_accepts_and_hearth_metrics_agrees() {
    let dir = tempfile::tempdir().unwrap();
    let textfile = dir.path().join("hearth.prom");
    let home = TestHome::with_config(&format!(
        "[metrics]\ntextfile = \"{}\"\n",
        textfile.display()
    ));
    home.ok(&["say", "hello"]);
    home.ok(&["say", "are you there?"]);
    home.ok(&["run", "--ticks", "3"]);

    let written = std::fs::read_to_string(&textfile).unwrap();
    assert_eq!(
        sample(&written, "hearth_ticks_total{class=\"ok\"}"),
        Some(3.0),
        "{written}"
    );
    assert_eq!(
        sample(&written, "hearth_ticks_total{class=\"crash\"}"),
        Some(0.0)
    );
    assert_eq!(
        sample(&written, "hearth_supervisor_up"),
        Some(0.0),
        "written at exit"
    );
    assert_eq!(
        sample(&written, "hearth_tick_duration_seconds_count"),
        Some(3.0)
    );
    assert!(sample(&written, "hearth_tokens_total{kind=\"input\"}").unwrap() > 0.0);
    assert_eq!(sample(&written, "hearth_inbox_messages"), Some(0.0));
    assert_eq!(sample(&written, "hearth_proposals_waiting"), Some(0.0));
    assert_eq!(sample(&written, "hearth_panic"), Some(0.0));
    let ended = home.ticks().last().unwrap()["end"]
        .as_str()
        .unwrap()
        .to_string();
    let ended = chrono::DateTime::parse_from_rfc3339(&ended)
        .unwrap()
        .timestamp() as f64;
    assert_eq!(
        sample(&written, "hearth_last_tick_timestamp_seconds"),
        Some(ended)
    );

    // The command reads the same ledger; a message now waits.
    home.ok(&["say", "one more"]);
    let printed = home.ok(&["metrics"]);
    assert_eq!(
        sample(&printed, "hearth_ticks_total{class=\"ok\"}"),
        Some(3.0)
    );
    assert_eq!(sample(&printed, "hearth_inbox_messages"), Some(1.0));
    for text in [&written, &printed] {
        match promtool(text) {
            Some(said) => assert!(
                !said.starts_with("FAILED") && said.trim().is_empty(),
                "{said}"
            ),
            // `.ci/run` installs it; anywhere else its absence fails the
            // test with the fix rather than passing it half-checked.
            None => panic!("{PROMTOOL_MISSING}"),
        }
    }
}

const PROMTOOL_MISSING: &str = "promtool is not installed, so the metrics' format cannot be \
     checked: install it (Debian: apt-get install prometheus; or the release from \
     https://prometheus.io/download/) and run the tests again";

#[test]
fn a_relative_textfile_is_refused_with_the_fix() {
    let home = TestHome::with_config("[metrics]\ntextfile = \"metrics.prom\"\n");
    let out = home.output(&["run", "--ticks", "1"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("must be an absolute path outside the home"),
        "{err}"
    );
}

#[test]
fn a_textfile_inside_the_home_is_refused_at_start_with_the_fix() {
    let home = TestHome::new();
    home.ok(&["init"]);
    let inside = home.file("metrics.prom");
    std::fs::write(
        home.file("hearth.toml"),
        format!("[metrics]\ntextfile = {:?}\n", inside.display().to_string()),
    )
    .unwrap();
    home.git(&["commit", "-qam", "metrics"]);
    let out = home.output(&["run", "--ticks", "2"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("is inside the home") && err.contains("hint: point [metrics] textfile"),
        "{err}"
    );
    assert!(home.ticks().is_empty(), "no tick ran");
    assert!(!inside.exists());
}

#[test]
fn a_ledger_that_cannot_be_read_keeps_the_last_counters_and_is_named() {
    let outside = tempfile::tempdir().unwrap();
    let textfile = outside.path().join("hearth.prom");
    let home = TestHome::with_config(&format!(
        "[metrics]\ntextfile = {:?}\n",
        textfile.display().to_string()
    ));
    home.ok(&["run", "--ticks", "3"]);
    let before = std::fs::read_to_string(&textfile).unwrap();
    assert_eq!(
        sample(&before, "hearth_ticks_total{class=\"ok\"}"),
        Some(3.0)
    );
    // A rotated segment that cannot be read (a directory where a file goes).
    let segment = home.file("state/ticks/0001.jsonl");
    std::fs::create_dir_all(&segment).unwrap();
    home.ok(&["run", "--ticks", "1"]);
    let after = std::fs::read_to_string(&textfile).unwrap();
    assert_eq!(
        sample(&after, "hearth_ticks_total{class=\"ok\"}"),
        Some(4.0),
        "the counters go on, not from zero: {after}"
    );
    let out = home.output(&["metrics"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("state/ticks/0001.jsonl"),
        "names the file: {err}"
    );
}

#[test]
fn the_shipped_alert_rules_are_valid_and_use_the_metrics_hearth_writes() {
    let rules = concat!(env!("CARGO_MANIFEST_DIR"), "/supervisor/hearth.rules.yml");
    let text = std::fs::read_to_string(rules).unwrap();
    let home = TestHome::with_config("");
    home.ok(&["run", "--ticks", "1"]);
    let metrics = home.ok(&["metrics"]);
    for name in [
        "hearth_last_tick_timestamp_seconds",
        "hearth_supervisor_up",
        "hearth_panic",
        "hearth_spend_usd_total",
        "hearth_budget_daily_usd",
    ] {
        assert!(text.contains(name), "{name} is alerted on");
        assert!(metrics.contains(&format!("\n{name} ")), "{name} is written");
    }
    match Command::new("promtool")
        .args(["check", "rules", rules])
        .output()
    {
        Ok(out) => assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        ),
        Err(_) => panic!("{PROMTOOL_MISSING}"),
    }
}
