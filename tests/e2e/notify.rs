//! Off the box (issue 50): incidents reach real HTTP receivers once per
//! cause and once more when it clears, a receiver that is down gets the
//! notice when it is back, signatures verify with openssl as a receiver's
//! script would, the dead-man ping follows every tick, and no secret lands
//! in the home or the log.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::common::model_server::{anthropic, Answer, ModelServer};
use crate::common::receiver::{Receiver, Request};
use crate::common::{finish_after_term, TestHome};

const KEY: &str = "sk-ant-notify-DO-NOT-LEAK";
const SECRET: &str = "whsec-notify-DO-NOT-LEAK-4242";

/// Whether openssl, as a receiver's own script would, finds the body
/// signed with `SECRET`.
fn verifies(request: &Request) -> bool {
    let Some(signature) = request.header("X-Hearth-Signature") else {
        return false;
    };
    let dir = tempfile::tempdir().unwrap();
    let body = dir.path().join("body");
    std::fs::write(&body, &request.body).unwrap();
    let out = std::process::Command::new("openssl")
        .args(["dgst", "-sha256", "-hmac", SECRET, "-r"])
        .arg(&body)
        .output()
        .expect("openssl is installed (apt-get install openssl)");
    let text = String::from_utf8_lossy(&out.stdout);
    let hex = text.split_whitespace().next().unwrap_or("");
    signature == format!("sha256={hex}")
}

fn states(requests: &[Request], field: impl Fn(&Value) -> String) -> Vec<String> {
    requests.iter().map(|r| field(&r.json())).collect()
}

#[test]
fn a_refused_key_reaches_each_receiver_once_and_its_end_once_and_a_receiver_that_was_down_gets_both(
) {
    let refusing = Arc::new(AtomicBool::new(true));
    let r = refusing.clone();
    let server = ModelServer::start(vec![Answer::Computed(Arc::new(move |_| {
        if r.load(Ordering::SeqCst) {
            Answer::Status {
                status: 401,
                headers: vec![],
                body: anthropic::error_body("authentication_error", "invalid x-api-key"),
            }
        } else {
            Answer::Stream {
                events: anthropic::message("All well.", &[], 100, 5),
                hang: None,
            }
        }
    }))]);
    let ntfy = Receiver::start();
    let hook = Receiver::start();
    let ping = Receiver::start();
    hook.answer(500); // down at first
    let home = TestHome::with_config(&format!(
        "[model]\nprovider = \"anthropic\"\nmodel = \"claude-test\"\nbase_url = \"{}\"\n\
         timeout_s = 2\nmax_retries = 0\n[tick]\ninterval_s = 1\n\
         [healer]\noutage_backoff_ms = 100\noutage_backoff_max_ms = 300\n\
         [notify]\nntfy = \"{}/hearth-alerts\"\nwebhook = \"{}/hook\"\nping = \"{}/uuid-1\"\n\
         retry_ms = 200\n",
        server.url, ntfy.url, hook.url, ping.url
    ));
    let mut cmd = home.keyed(&["run"], KEY);
    cmd.env("HEARTH_WEBHOOK_SECRET", SECRET);
    let supervisor = home.spawn_with(cmd);

    home.wait_for(Duration::from_secs(30), "the ntfy notice", || {
        !ntfy.taken().is_empty()
    });
    home.wait_for(Duration::from_secs(30), "the webhook tried again", || {
        hook.received().len() >= 2
    });
    let status = home.ok(&["status"]);
    assert!(status.contains("NOTIFY:     webhook RETRYING"), "{status}");
    let metrics = home.ok(&["metrics"]);
    assert!(
        metrics.contains("hearth_notify_failing{target=\"webhook\"} 1"),
        "{metrics}"
    );
    // The operator sees one incident, however many ticks flared it, and
    // acknowledges its cause by its key.
    let listed = home.ok(&["flares"]);
    assert!(
        listed.contains("open incidents") && listed.contains("model: the model api refuses"),
        "{listed}"
    );
    let acked = home.ok(&["flares", "--ack", "model:"]);
    assert!(
        acked.contains("acknowledged the incident model:"),
        "{acked}"
    );
    assert!(home.ok(&["flares"]).contains("(acknowledged)"));
    hook.answer(200); // back
    home.wait_for(Duration::from_secs(30), "the webhook's notice", || {
        !hook.taken().is_empty()
    });
    refusing.store(false, Ordering::SeqCst); // the key works again
    let resolved = |rx: &Receiver, key: &str| {
        rx.taken()
            .iter()
            .any(|r| r.json()[key].to_string().contains("resolved"))
    };
    home.wait_for(Duration::from_secs(30), "the resolution at both", || {
        resolved(&ntfy, "tags") && resolved(&hook, "state")
    });
    // A few more good ticks: nothing more is sent.
    let ticks = home.ticks().len();
    home.wait_for(Duration::from_secs(30), "more ticks", || {
        home.ticks().len() >= ticks + 3
    });
    assert!(finish_after_term(supervisor).success());

    // ntfy: one notice opened (the key), one resolved, each once.
    let tags = states(&ntfy.taken(), |j| j["tags"].to_string());
    assert_eq!(tags.len(), 2, "{tags:?}");
    assert!(
        tags[0].contains("opened") && tags[0].contains("model"),
        "{tags:?}"
    );
    assert!(tags[1].contains("resolved"), "{tags:?}");
    let first = ntfy.taken()[0].json();
    assert_eq!(first["topic"], "hearth-alerts");
    assert_eq!(first["priority"], 5, "a refused key is critical: {first}");
    assert!(
        ntfy.taken().iter().all(|r| r.path == "/"),
        "ntfy's JSON publishing"
    );

    // The webhook: the same two, after its outage; signed; whole.
    let taken = hook.taken();
    let hook_states = states(&taken, |j| j["state"].as_str().unwrap_or("").to_string());
    assert_eq!(hook_states, ["opened", "resolved"], "once each");
    for request in &taken {
        assert!(
            verifies(request),
            "signature: {:?}",
            request.header("X-Hearth-Signature")
        );
        let body = request.json();
        for field in [
            "id", "time", "home", "kind", "severity", "title", "body", "incident", "state",
        ] {
            assert!(!body[field].is_null(), "{field} in {body}");
        }
    }
    assert_ne!(taken[0].json()["id"], taken[1].json()["id"]);
    assert!(hook.received().iter().any(|r| r.answered == 500));
    // While it was down, status named it; once it took the notices, no more.
    assert!(!home.ok(&["status"]).contains("NOTIFY:"));
    let log = home.read("state/notify.jsonl");
    assert!(
        log.contains("\"outcome\":\"retrying\"") && log.contains("\"outcome\":\"delivered\""),
        "{log}"
    );

    // The deliveries are hearth's records, never the operator's edits
    // (the incidents are too, but for the operator's acknowledgement).
    let paths = ["state/notify.jsonl", "state/notify-queue.json"];
    let log = home.git(&[&["log", "--format=%an: %s", "--"][..], &paths[..]].concat());
    let log = String::from_utf8_lossy(&log.stdout).into_owned();
    assert!(
        !log.is_empty() && log.lines().all(|a| a.starts_with("hearth: ")),
        "{log}"
    );

    // The ping saw ticks start, fail and succeed.
    let paths: Vec<String> = ping.received().into_iter().map(|r| r.path).collect();
    for want in ["/uuid-1/start", "/uuid-1/fail", "/uuid-1"] {
        assert!(paths.iter().any(|p| p == want), "{want} in {paths:?}");
    }

    // No secret anywhere in the home (or its git objects' plain text) or
    // the log.
    for entry in walkdir::WalkDir::new(&home.path).into_iter().flatten() {
        if entry.file_type().is_file() {
            let bytes = std::fs::read(entry.path()).unwrap_or_default();
            let text = String::from_utf8_lossy(&bytes);
            assert!(
                !text.contains(SECRET) && !text.contains(KEY),
                "a secret in {}",
                entry.path().display()
            );
        }
    }
    assert!(!home.log().contains(SECRET));
}

#[test]
fn notify_test_says_what_each_target_answered() {
    let ntfy = Receiver::start();
    let hook = Receiver::start();
    hook.answer(503);
    let home = TestHome::with_config(&format!(
        "[notify]\nntfy = \"{}/t\"\nwebhook = \"{}/hook\"\n",
        ntfy.url, hook.url
    ));
    let out = home
        .cmd(&["notify", "test"])
        .env("HEARTH_WEBHOOK_SECRET", SECRET)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("ntfy     delivered: 200 OK"), "{text}");
    // A test is not queued: status says nothing of it.
    assert!(text.contains("webhook  FAILED: 503"), "{text}");
    assert_eq!(ntfy.taken().len(), 1);
    assert_eq!(ntfy.taken()[0].json()["tags"][2], "test");

    // Without its key, the webhook gets nothing unsigned.
    hook.answer(200);
    let out = home.output(&["notify", "test"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("HEARTH_WEBHOOK_SECRET is not set"), "{text}");
    assert_eq!(hook.taken().len(), 0);
}

#[test]
fn a_config_broken_at_a_restart_is_sent_at_once_and_its_fix_resolves_it() {
    let ntfy = Receiver::start();
    let config = format!(
        "[tick]\ninterval_s = 3600\n[notify]\nntfy = \"{}/t\"\nretry_ms = 200\n",
        ntfy.url
    );
    let home = TestHome::with_config(&config.replace("3600", "\"1h\""));
    // On the system clock, as a service runs: a first try that fails (a
    // loaded machine) is tried again after `retry_ms`, which a pinned
    // clock never reaches. Its debug lines say why, should it time out.
    let mut cmd = home.unpinned(&["run"]);
    cmd.env(
        "RUST_LOG",
        "info,hearth::notify=debug,hearth::supervisor::config_wait=debug",
    );
    let supervisor = home.spawn_with(cmd);
    home.wait_for(Duration::from_secs(20), "the config notice", || {
        !ntfy.taken().is_empty()
    });
    let first = ntfy.taken()[0].json();
    assert!(
        first["title"].as_str().unwrap().contains("does not parse"),
        "{first}"
    );
    std::fs::write(home.file("hearth.toml"), &config).unwrap();
    home.wait_for(Duration::from_secs(20), "the resolution", || {
        ntfy.taken().len() >= 2
    });
    assert!(ntfy.taken()[1].json()["tags"]
        .to_string()
        .contains("resolved"));
    assert!(finish_after_term(supervisor).success());
    assert_eq!(ntfy.taken().len(), 2, "nothing twice");
}

/// The broken part is `[notify]` itself: the file's own targets cannot be
/// read, so the notice goes where the last committed `hearth.toml` that
/// parsed sends them, and the flare says so; a stop during the wait is
/// recorded as the operator's, not left for the next start to call a gap
/// of unknown cause.
#[test]
fn a_broken_notify_table_sends_the_config_notice_by_the_last_committed_config() {
    let ntfy = Receiver::start();
    let good = format!(
        "[tick]\ninterval_s = 3600\n[notify]\nntfy = \"{}/t\"\nretry_ms = 200\n",
        ntfy.url
    );
    let home = TestHome::with_config(&good);
    home.git(&["add", "hearth.toml"]);
    home.git(&["commit", "-qm", "the operator's config"]);
    let committed = String::from_utf8(home.git(&["rev-parse", "--short=7", "HEAD"]).stdout)
        .unwrap()
        .trim()
        .to_string();
    // A half-typed target: the whole file, and its [notify] alone, fail.
    std::fs::write(
        home.file("hearth.toml"),
        good.replace(
            &format!("ntfy = \"{}/t\"", ntfy.url),
            "ntfy = \"https://ntfy.sh/",
        ),
    )
    .unwrap();
    let supervisor = home.spawn_with(home.unpinned(&["run"]));
    home.wait_for(Duration::from_secs(20), "the config notice", || {
        !ntfy.taken().is_empty()
    });
    let notice = ntfy.taken()[0].json();
    assert!(
        notice["title"].as_str().unwrap().contains("does not parse"),
        "{notice}"
    );
    let flare = home
        .list("outbox")
        .into_iter()
        .find(|n| n.contains("-flare-config"))
        .map(|n| home.read(&format!("outbox/{n}")))
        .unwrap();
    assert!(
        flare.contains(&format!(
            "last committed hearth.toml that parsed (commit {committed})"
        )),
        "{flare}"
    );
    assert!(finish_after_term(supervisor).success(), "{}", home.log());
    let stop = home.read(".hearth/last-stop.json");
    assert!(stop.contains("while hearth.toml did not parse"), "{stop}");
}

/// Nothing in any version names a target: the log and the flare say the
/// notice stays on the box, rather than nothing at all.
#[test]
fn a_config_notice_with_nowhere_to_go_says_so() {
    let home = TestHome::with_config("[notify]\nntfy = \"https://ntfy.sh/\n");
    let supervisor = home.spawn_with(home.unpinned(&["run"]));
    home.wait_for(Duration::from_secs(20), "the config flare", || {
        home.list("outbox")
            .iter()
            .any(|n| n.contains("-flare-config"))
    });
    assert!(finish_after_term(supervisor).success(), "{}", home.log());
    let flare = home
        .list("outbox")
        .into_iter()
        .find(|n| n.contains("-flare-config"))
        .map(|n| home.read(&format!("outbox/{n}")))
        .unwrap();
    assert!(flare.contains("this notice stays on the box"), "{flare}");
    assert!(
        home.log().contains("this notice stays on the box"),
        "{}",
        home.log()
    );
}

#[test]
fn mail_goes_through_the_hosts_sendmail_with_the_notice_as_a_plain_message() {
    let home = TestHome::with_config("");
    let dir = tempfile::tempdir().unwrap();
    let mailbox = dir.path().join("mailbox");
    // A sendmail stand-in: what an MTA's sendmail is given, kept whole.
    let sendmail = dir.path().join("sendmail");
    std::fs::write(
        &sendmail,
        format!(
            "#!/bin/sh\necho \"$@\" > {0}.args\nenv > {0}.env\ncat > {0}\n",
            mailbox.display()
        ),
    )
    .unwrap();
    std::process::Command::new("chmod")
        .args(["+x", sendmail.to_str().unwrap()])
        .status()
        .unwrap();
    std::fs::write(
        home.file("hearth.toml"),
        format!(
            "[notify]\nemail = \"ops@example.com\"\nsendmail = \"{}\"\n",
            sendmail.display()
        ),
    )
    .unwrap();
    // The key in hearth's environment never reaches the program it runs.
    let out = home.ok_with_env(
        &["notify", "test"],
        &[("ANTHROPIC_API_KEY", "sk-never-passed")],
    );
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(text.contains("email    delivered"), "{text}");
    let env = std::fs::read_to_string(mailbox.with_extension("env")).unwrap();
    assert!(!env.contains("sk-never-passed"), "{env}");
    assert!(env.contains("PATH="), "PATH is passed: {env}");
    let mail = std::fs::read_to_string(&mailbox).unwrap();
    assert!(mail.starts_with("To: ops@example.com\n"), "{mail}");
    assert!(
        mail.contains("Subject: [hearth agent] a test notice"),
        "{mail}"
    );
    assert!(
        mail.contains("if you read this, notices reach you here"),
        "{mail}"
    );
    let args = std::fs::read_to_string(mailbox.with_extension("args")).unwrap();
    assert_eq!(args.trim(), "-t -i");

    // One that refuses it is said so.
    std::fs::write(
        &sendmail,
        "#!/bin/sh\necho 'no route to host' >&2\nexit 75\n",
    )
    .unwrap();
    let out = home.output(&["notify", "test"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text.contains("email    FAILED") && text.contains("no route to host"),
        "{text}"
    );
}

#[test]
fn a_proposal_that_has_waited_a_day_is_named_in_a_reminder_once_a_day_with_its_command() {
    let ntfy = Receiver::start();
    let home = TestHome::with_config(&format!("[notify]\nntfy = \"{}/t\"\n", ntfy.url));
    // A proposal made two days before the pinned now, waiting since.
    let pinned = chrono::DateTime::parse_from_rfc3339(crate::common::PINNED_NOW)
        .unwrap()
        .to_utc();
    let h = hearth::home::Home::open(&home.path).unwrap();
    let draft = hearth::proposals::Draft {
        title: "change memory/identity.md after reading outside content".into(),
        why: "a stranger's message asked for it".into(),
        by: "tick 7".into(),
        kind: String::new(),
        outside: hearth::outside::Outside::of("inbox/x.md (from news@example.com)"),
        files: [(
            "memory/identity.md".to_string(),
            Some(b"# Who I am\n\nA rule from outside.\n".to_vec()),
        )]
        .into(),
    };
    hearth::proposals::propose(&h, None, &draft, pinned - chrono::Duration::days(2)).unwrap();

    let reminders = || {
        ntfy.taken()
            .into_iter()
            .filter(|r| r.json()["tags"].to_string().contains("reminder"))
            .count()
    };
    home.ok(&["run", "--ticks", "1"]);
    assert_eq!(reminders(), 1, "{:?}", ntfy.taken());
    let body = ntfy.taken().last().unwrap().json();
    assert!(
        body["title"]
            .as_str()
            .unwrap()
            .contains("1 proposal waits for you"),
        "{body}"
    );
    let message = body["message"].as_str().unwrap();
    assert!(
        message.contains("hearth proposals show 1")
            && message.contains("change memory/identity.md"),
        "{message}"
    );
    // The same day: nothing more.
    home.ok(&["run", "--ticks", "1"]);
    assert_eq!(reminders(), 1);
    // A day later, again.
    let later = (pinned + chrono::Duration::hours(25)).to_rfc3339();
    home.ok_with_env(&["run", "--ticks", "1"], &[("HEARTH_NOW", later.as_str())]);
    assert_eq!(reminders(), 2);
    // The metrics say how long it has waited.
    let metrics = home.ok(&["metrics"]);
    assert!(metrics.contains("hearth_proposals_waiting 1"), "{metrics}");
    assert!(
        metrics.contains("hearth_proposal_oldest_age_seconds"),
        "{metrics}"
    );
}

/// `[web] url` makes a notice carry a link to where the operator's page
/// shows it — ntfy opens it on a tap — and the link holds no secret; a
/// `[web] url` with one is refused at load.
#[test]
fn a_notice_links_to_the_page_that_shows_its_incident() {
    let ntfy = Receiver::start();
    let home = TestHome::with_config(&format!(
        "[notify]\nntfy = \"{}/t\"\n[web]\nurl = \"https://agent.example/\"\n",
        ntfy.url
    ));
    home.post_flare(
        hearth::mailbox::cause::Cause::Push,
        "the off-box copy is not being updated",
        "the remote refused the push",
    );
    home.ok(&["run", "--ticks", "1"]);
    let taken = ntfy.taken();
    let opened_notice = taken
        .iter()
        .map(|r| r.json())
        .find(|n| {
            n["title"]
                .as_str()
                .is_some_and(|t| t.contains("off-box copy"))
        })
        .unwrap_or_else(|| panic!("no notice of the flare: {taken:?}"));
    assert_eq!(opened_notice["click"], "https://agent.example/incidents");

    // A proposal's notice opens the proposal itself: what its flare says
    // it is about, not a word read back out of its subject.
    let opened = hearth::home::Home::open(&home.path).unwrap();
    let draft = hearth::proposals::Draft {
        title: "Speak in riddles".into(),
        why: "a stranger's mail asked for it".into(),
        by: "tick 1".into(),
        kind: String::new(),
        outside: hearth::outside::Outside::of("inbox/mail.md (from news@example.com)"),
        files: [(
            "memory/identity.md".to_string(),
            Some(b"# Me\n\nRiddles.\n".to_vec()),
        )]
        .into(),
    };
    let now = chrono::DateTime::parse_from_rfc3339(crate::common::PINNED_NOW)
        .unwrap()
        .to_utc();
    let n = hearth::proposals::propose(&opened, None, &draft, now)
        .unwrap()
        .n;
    home.ok(&["run", "--ticks", "1"]);
    let taken = ntfy.taken();
    let proposal_notice = taken
        .iter()
        .map(|r| r.json())
        .find(|n| {
            n["title"]
                .as_str()
                .is_some_and(|t| t.contains("Speak in riddles"))
        })
        .unwrap_or_else(|| panic!("no notice of the proposal: {taken:?}"));
    assert_eq!(
        proposal_notice["click"],
        format!("https://agent.example/proposals/{n}").as_str()
    );

    std::fs::write(
        home.file("hearth.toml"),
        "[web]\nurl = \"https://agent.example/?token=s3cret\"\n",
    )
    .unwrap();
    let refused = home.output(&["status", "--check"]);
    let said = String::from_utf8_lossy(&refused.stdout).into_owned()
        + &String::from_utf8_lossy(&refused.stderr);
    assert!(said.contains("a link never carries a secret"), "{said}");
}
