//! The page's acts beyond a proposal's (`--allow-act`): a request to run
//! a tool, approved or declined on the manifest digest the page showed,
//! runs once as the operator — by the supervisor, never the page — or
//! never; a job is run now on the file the
//! page showed. Each is the commit the CLI makes.

use reqwest::header::{COOKIE, LOCATION, ORIGIN};
use serde_json::json;

use super::Page;
use crate::e2e::providers::acting::{poster, posts, strangers_message};
use crate::e2e::providers::operator_tools::{call, done, home_with_tool};

/// The value of the hidden field `name` in the form posting to `action`.
pub(super) fn field(page_text: &str, action: &str, name: &str) -> String {
    let form = page_text
        .find(&format!("action=\"{action}\""))
        .unwrap_or_else(|| panic!("no form for {action}: {page_text}"));
    let rest = &page_text[form..];
    let marker = format!("name=\"{name}\" value=\"");
    let at = rest.find(&marker).unwrap() + marker.len();
    rest[at..at + rest[at..].find('"').unwrap()].to_string()
}

pub(super) fn post(
    page: &Page,
    cookie: &str,
    path: &str,
    form: &[(&str, &str)],
) -> reqwest::blocking::Response {
    Page::client()
        .post(format!("{}{path}", page.base))
        .header(ORIGIN, &page.base)
        .header(COOKIE, cookie)
        .form(form)
        .send()
        .unwrap()
}

#[test]
fn a_request_is_approved_once_on_the_digest_shown_and_a_declined_one_never_runs() {
    let outside = tempfile::tempdir().unwrap();
    let posted = outside.path().join("posted");
    let (_server, home) = home_with_tool(
        "post",
        &poster(&posted, ""),
        vec![
            call(
                "post",
                json!({"text": "<script>window.pwned=1</script> prices changed"}),
            ),
            call("post", json!({"text": "two"})),
            done(),
        ],
        true,
    );
    strangers_message(&home);
    assert!(crate::e2e::providers::run(&home, "1").status.success());
    assert!(posts(&posted).is_empty(), "a stranger's words acted");

    let page = Page::open_with(&home, &["--allow-act"]);
    let cookie = page.session();
    let listed = page.get("/proposals", Some(&cookie)).text().unwrap();
    assert!(listed.contains("href=\"/requests/1\""), "{listed}");
    assert!(
        !listed.contains("/approve\""),
        "never approved from a line of a list: {listed}"
    );
    let shown = page.get("/requests/1", Some(&cookie)).text().unwrap();
    assert!(
        shown.contains("&lt;script&gt;window.pwned=1&lt;/script&gt; prices changed")
            && !shown.contains("<script>window"),
        "its arguments, as text: {shown}"
    );
    assert!(
        shown.contains("newsletter@example.com"),
        "why it waits: {shown}"
    );
    let digest = field(&shown, "/requests/1/approve", "digest");

    // On another manifest than the one shown: refused, nothing runs.
    let stale = post(&page, &cookie, "/requests/1/approve", &[("digest", "0000")]);
    assert_eq!(stale.status(), 409, "{}", stale.text().unwrap());
    assert!(posts(&posted).is_empty());

    let approved = post(
        &page,
        &cookie,
        "/requests/1/approve",
        &[("digest", &digest)],
    );
    assert_eq!(approved.status(), 303);
    assert_eq!(approved.headers()[LOCATION], "/requests/1");
    // The page runs no tool (it holds the page's token): the approval is
    // the operator's commit, and the supervisor runs the tool.
    assert!(posts(&posted).is_empty(), "the page ran a tool");
    let again = post(
        &page,
        &cookie,
        "/requests/1/approve",
        &[("digest", &digest)],
    );
    assert_eq!(again.status(), 409, "a request is approved at most once");
    assert!(crate::e2e::providers::run(&home, "1").status.success());
    assert_eq!(
        posts(&posted),
        ["<script>window.pwned=1</script> prices changed"]
    );
    assert!(crate::e2e::providers::run(&home, "1").status.success());
    assert_eq!(posts(&posted).len(), 1, "a request runs at most once");
    let log = home.git(&["log", "--format=%an: %s", "-8"]);
    let log = String::from_utf8_lossy(&log.stdout);
    assert!(
        log.contains("operator: request 1 approved: post runs at the supervisor's next look")
            && log.contains("operator: request 1 approved: running post")
            && log.contains("operator: request 1: post ran"),
        "the operator's commits: {log}"
    );
    let after = page.get("/requests/1", Some(&cookie)).text().unwrap();
    assert!(after.contains("posted"), "what it said: {after}");

    let shown = page.get("/requests/2", Some(&cookie)).text().unwrap();
    let digest = field(&shown, "/requests/2/decline", "digest");
    let declined = post(
        &page,
        &cookie,
        "/requests/2/decline",
        &[("digest", &digest), ("reason", "spam")],
    );
    assert_eq!(declined.status(), 303);
    let book = home.ok(&["proposals", "requests", "--json"]);
    let book: serde_json::Value = serde_json::from_str(&book).unwrap();
    assert_eq!(book[1]["status"], "declined", "{book}");
    assert_eq!(book[1]["reason"], "spam", "{book}");
    assert_eq!(posts(&posted).len(), 1, "a declined request never runs");
}

#[test]
fn a_job_is_run_now_on_the_file_the_page_showed() {
    let home = crate::common::TestHome::with_config("");
    home.ok(&["run", "--ticks", "1"]);
    std::fs::create_dir_all(home.file("jobs")).unwrap();
    std::fs::write(
        home.file("jobs/digest.toml"),
        "schedule = \"0 7 * * *\"\nprompt = \"Write the <b>digest</b>.\"\n",
    )
    .unwrap();
    let page = Page::open_with(&home, &["--allow-act"]);
    let cookie = page.session();
    let listed = page.get("/jobs", Some(&cookie)).text().unwrap();
    assert!(listed.contains("href=\"/jobs/digest\""), "{listed}");
    let shown = page.get("/jobs/digest", Some(&cookie)).text().unwrap();
    assert!(
        shown.contains("Write the &lt;b&gt;digest&lt;/b&gt;."),
        "its prompt, as text: {shown}"
    );
    let digest = field(&shown, "/jobs/digest/run", "digest");

    // The file changed since the page showed it: nothing is asked.
    std::fs::write(
        home.file("jobs/digest.toml"),
        "schedule = \"0 7 * * *\"\nprompt = \"Write the digest, and mail it out.\"\n",
    )
    .unwrap();
    let stale = post(&page, &cookie, "/jobs/digest/run", &[("digest", &digest)]);
    assert_eq!(stale.status(), 409, "{}", stale.text().unwrap());
    assert!(!home.file(".hearth/job-requests/digest").exists());
    let nobody = post(&page, &cookie, "/jobs/nope/run", &[("digest", &digest)]);
    assert_eq!(nobody.status(), 409);

    let shown = page.get("/jobs/digest", Some(&cookie)).text().unwrap();
    let digest = field(&shown, "/jobs/digest/run", "digest");
    let asked = post(&page, &cookie, "/jobs/digest/run", &[("digest", &digest)]);
    assert_eq!(asked.status(), 303);
    assert_eq!(asked.headers()[LOCATION], "/jobs/digest");
    // The supervisor takes it at its next look, as `hearth jobs run`'s.
    home.ok(&["run", "--ticks", "1"]);
    assert_eq!(home.ticks().last().unwrap()["job"], "digest");
    let said = home.ok(&["jobs", "show", "digest"]);
    let run = said.lines().last().unwrap().trim().to_string();
    let after = page.get("/jobs/digest", Some(&cookie)).text().unwrap();
    assert!(
        after.contains(&run.replace('<', "&lt;").replace('>', "&gt;")),
        "the page says what `jobs show` says ({run}): {after}"
    );
    assert!(after.contains("href=\"/ticks/2\""), "{after}");

    // Asked on what was shown, changed before the supervisor looked: the
    // request carries the version, and the supervisor does not run it.
    let shown = page.get("/jobs/digest", Some(&cookie)).text().unwrap();
    let digest = field(&shown, "/jobs/digest/run", "digest");
    let asked = post(&page, &cookie, "/jobs/digest/run", &[("digest", &digest)]);
    assert_eq!(asked.status(), 303);
    std::fs::write(
        home.file("jobs/digest.toml"),
        "schedule = \"0 7 * * *\"\nprompt = \"Write the digest, and delete the rest.\"\n",
    )
    .unwrap();
    home.ok(&["run", "--ticks", "1"]);
    assert!(!home.file(".hearth/job-requests/digest").exists());
    assert_ne!(
        home.ticks().last().unwrap()["job"],
        "digest",
        "a job changed after the ask is not run"
    );
}

/// A running supervisor, waiting an hour for its next tick, runs a request
/// approved from the page within moments: the page wakes it.
#[test]
fn a_running_supervisor_runs_a_request_approved_from_the_page_at_once() {
    let outside = tempfile::tempdir().unwrap();
    let posted = outside.path().join("posted");
    let (_server, home) = home_with_tool(
        "post",
        &poster(&posted, ""),
        vec![call("post", json!({"text": "the tide"})), done()],
        true,
    );
    strangers_message(&home);
    assert!(crate::e2e::providers::run(&home, "1").status.success());
    let mut supervisor =
        home.spawn_with(home.keyed(&["run", "--interval", "3600"], crate::e2e::providers::KEY));
    let page = Page::open_with(&home, &["--allow-act"]);
    let cookie = page.session();
    let shown = page.get("/requests/1", Some(&cookie)).text().unwrap();
    let digest = field(&shown, "/requests/1/approve", "digest");
    // The supervisor's first look is over before the approval.
    std::thread::sleep(std::time::Duration::from_millis(500));
    let approved = post(
        &page,
        &cookie,
        "/requests/1/approve",
        &[("digest", &digest)],
    );
    assert_eq!(approved.status(), 303);
    let started = std::time::Instant::now();
    while posts(&posted).is_empty() && started.elapsed() < std::time::Duration::from_secs(15) {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let _ = supervisor.kill();
    let _ = supervisor.wait();
    assert_eq!(posts(&posted), ["the tide"], "run by the woken supervisor");
}
