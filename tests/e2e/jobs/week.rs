//! The guide's three jobs: they load as written, and a simulated week of
//! them.

use std::time::Duration;

use serde_json::Value;

use super::{last_message, planned_day, stream, JobHome};
use crate::common::model_server::{Answer, ModelServer};
use crate::common::TestHome;

#[test]
fn the_guides_three_jobs_load_and_say_when_they_run() {
    let guide =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/guide.md")).unwrap();
    let home = TestHome::new();
    home.ok(&["init"]);
    std::fs::create_dir_all(home.file("jobs")).unwrap();
    let mut names = Vec::new();
    for block in guide.split("```toml\n").skip(1) {
        let block = block.split("```").next().unwrap();
        let Some(name) = block
            .strip_prefix("# jobs/")
            .and_then(|r| r.split('\n').next())
        else {
            continue;
        };
        std::fs::write(home.file(&format!("jobs/{name}")), block).unwrap();
        names.push(name.trim_end_matches(".toml").to_string());
    }
    assert_eq!(names, ["morning-digest", "app-watch", "week"]);
    let list: Value = serde_json::from_str(&home.ok(&["jobs", "--json"])).unwrap();
    assert_eq!(list["unusable"], serde_json::json!([]), "{list}");
    let when: Vec<&str> = list["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["when"].as_str().unwrap())
        .collect();
    assert!(
        when.contains(&"every day at 07:00 (Europe/Berlin)"),
        "{when:?}"
    );
    assert!(when.contains(&"every hour at :05 (host time)"), "{when:?}");
    assert!(when.contains(&"Sundays at 18:00 (host time)"), "{when:?}");
}

/// The model of the guide's jobs: the digest and the week are written
/// where their prompts say, and new commits that touch the payment code
/// are told in a letter.
fn guide_worker(body: &Value) -> Answer {
    let last = last_message(body);
    if last.contains("tool_result") || !last.contains("<job-prompt") {
        return stream("Nothing else needs doing.", &[]);
    }
    let day = planned_day(&last);
    let (tool, args) = if last.contains("morning's digest") {
        ("write", format!("{{\"path\": \"memory/digests/{day}.md\", \"content\": \"# {day}\\n\\nQuiet seas.\\n\"}}"))
    } else if last.contains("week's journal") {
        ("write", format!("{{\"path\": \"memory/weeks/{day}.md\", \"content\": \"# The week to {day}\\n\\nThe ferry ran late twice.\\n\"}}"))
    } else if last.contains("payment") {
        ("send", format!("{{\"subject\": \"payment code changed {day}\", \"body\": \"A commit touched payments/ today.\"}}"))
    } else {
        return stream("Nothing to do.", &[]);
    };
    stream("On it.", &[("toolu_1", tool, &[args.as_str()])])
}

#[test]
fn a_week_of_the_guides_three_jobs() {
    let guide =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/guide.md")).unwrap();
    let server = ModelServer::start(vec![Answer::Respond(guide_worker)]);
    let app = tempfile::tempdir().unwrap();
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .current_dir(app.path())
            .args(["-c", "user.name=dev", "-c", "user.email=dev@localhost"])
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    git(&["init", "-q", "-b", "main"]);
    git(&["commit", "-q", "--allow-empty", "-m", "start"]);
    let mut jobs = Vec::new();
    for block in guide.split("```toml\n").skip(1) {
        let block = block.split("```").next().unwrap();
        if let Some(name) = block
            .strip_prefix("# jobs/")
            .and_then(|r| r.split('\n').next())
        {
            let text = block
                .replace("/srv/src/app", &app.path().display().to_string())
                .replace("origin/main", "main");
            jobs.push((name.trim_end_matches(".toml").to_string(), text));
        }
    }
    let named: Vec<(&str, &str)> = jobs.iter().map(|(n, t)| (n.as_str(), t.as_str())).collect();
    // Monday 23 November 2026, 00:00 UTC; a week to the next Monday.
    let h = JobHome::new(&server, &named, "2026-11-23T00:00:00Z");
    h.home.ok(&["trust"]);
    let supervisor = h.home.spawn_with(h.cmd(&["run"]));
    let now = || {
        chrono::DateTime::parse_from_rfc3339(std::fs::read_to_string(&h.clock).unwrap().trim())
            .unwrap()
            .with_timezone(&chrono::Utc)
    };
    // A commit to the payment code on Tuesday and on Thursday afternoon.
    let mut commits = vec!["2026-11-26T14:20:00Z", "2026-11-24T14:20:00Z"];
    let end = chrono::DateTime::parse_from_rfc3339("2026-11-30T00:00:00Z").unwrap();
    let started = std::time::Instant::now();
    while now() < end {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the week took too long:\n{}",
            h.home.log()
        );
        if let Some(at) = commits.last() {
            if now() >= chrono::DateTime::parse_from_rfc3339(at).unwrap() {
                std::fs::create_dir_all(app.path().join("payments")).unwrap();
                std::fs::write(app.path().join("payments/fee.rs"), at).unwrap();
                git(&["add", "-A"]);
                git(&["commit", "-q", "-m", "payments: the fee changes"]);
                commits.pop();
            }
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    crate::common::signal(&supervisor, libc::SIGTERM);
    crate::common::finish(supervisor, Duration::from_secs(30));
    let list = h.stdout(&["jobs"]);
    println!("$ hearth jobs\n{list}");
    for name in ["morning-digest", "app-watch", "week"] {
        println!(
            "$ hearth jobs show {name}\n{}",
            h.stdout(&["jobs", "show", name])
        );
    }
    // The digest every morning (07:00 Berlin is 06:00 UTC), done by its file.
    let digests = h.outcomes("morning-digest");
    assert_eq!(digests.len(), 7, "{digests:?}");
    assert!(digests.iter().all(|o| o.ends_with(" done")), "{digests:?}");
    assert!(digests[0].starts_with("2026-11-23T06:00"), "{digests:?}");
    // The week on Sunday at 18:00.
    assert_eq!(h.outcomes("week"), ["2026-11-29T18:00 done"]);
    // The watch: the first look sees the branch (news), each commit is
    // news at a :05 after it (the test sees the simulated clock pass
    // 14:20 a moment late, so which hour is not asserted), and every other
    // hour is skipped for nothing.
    let watch = h.outcomes("app-watch");
    let done: Vec<&str> = watch
        .iter()
        .filter(|o| o.ends_with(" done"))
        .map(|o| &o[..10])
        .collect();
    assert_eq!(
        done,
        ["2026-11-23", "2026-11-24", "2026-11-26"],
        "{watch:?}"
    );
    assert!(watch.contains(&"2026-11-23T00:05 done".to_string()));
    let skipped = watch
        .iter()
        .filter(|o| o.ends_with(" skipped") && o.as_str() < "2026-11-30")
        .count();
    assert_eq!(skipped, 7 * 24 - 3, "{watch:?}");
    assert!(list.contains("misses:  0"), "{list}");
    // The day at a glance: each run, and the watch's skipped hours in one line.
    let day = h.stdout(&["day", "--since", "2026-11-29T00:00:00Z"]);
    println!("$ hearth day --since 2026-11-29T00:00:00Z\n{day}");
    assert!(
        day.contains("job morning-digest")
            && day.contains("done: wrote memory/digests/2026-11-29.md"),
        "{day}"
    );
    assert!(
        day.contains("job week") && day.contains("done: wrote memory/weeks/2026-11-29.md"),
        "{day}"
    );
    // 24 hours of the 29th, and the 30th's first when the test stopped late.
    assert!(
        day.contains("skipped 24 time(s): its check found nothing to do")
            || day.contains("skipped 25 time(s): its check found nothing to do"),
        "{day}"
    );
}
