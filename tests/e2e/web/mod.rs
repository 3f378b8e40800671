//! `hearth web`, served by the binary and read over real HTTP on
//! loopback, as a browser and an attacker would: nothing of the home
//! without the token, a strict session cookie, names and origins it does
//! not serve refused, what it shows the same as the CLI's figures, and
//! words from outside shown as text.

use std::process::{Child, Stdio};

use reqwest::blocking::{Client, Response};
use reqwest::header::{COOKIE, HOST, LOCATION, ORIGIN, SET_COOKIE};
use reqwest::redirect::Policy;

use crate::common::TestHome;

mod acts;
mod chat;
mod homes;
mod memory;
mod proxy;
mod socket;
mod spend;
mod talk;

const TOKEN: &str = "a-long-random-token-for-the-page";

/// `hearth web --listen 127.0.0.1:0` with the token, and where it listens.
struct Page {
    child: Child,
    base: String,
    host: String,
}

impl Drop for Page {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Page {
    fn open(home: &TestHome) -> Page {
        Page::open_with(home, &[])
    }

    fn open_with(home: &TestHome, flags: &[&str]) -> Page {
        let mut cmd = home.cmd(&["web", "--listen", "127.0.0.1:0"]);
        cmd.args(flags);
        Page::start(cmd, &home.path.with_file_name("web.log"))
    }

    /// Starts `cmd` (a `hearth web` on port 0) with the token, its log
    /// at `log`.
    fn start(mut cmd: std::process::Command, log: &std::path::Path) -> Page {
        cmd.env("HEARTH_WEB_TOKEN", TOKEN);
        let log = std::fs::File::create(log).unwrap();
        let mut child = cmd.stdout(Stdio::piped()).stderr(log).spawn().unwrap();
        let base = crate::common::page_address(&mut child);
        let host = base.trim_start_matches("http://").to_string();
        Page { child, base, host }
    }

    fn client() -> Client {
        Client::builder().redirect(Policy::none()).build().unwrap()
    }

    fn get(&self, path: &str, cookie: Option<&str>) -> Response {
        let mut request = Page::client().get(format!("{}{path}", self.base));
        if let Some(cookie) = cookie {
            request = request.header(COOKIE, cookie);
        }
        request.send().unwrap()
    }

    fn log_in(&self, token: &str) -> Response {
        Page::client()
            .post(format!("{}/login", self.base))
            .header(ORIGIN, &self.base)
            .form(&[("token", token)])
            .send()
            .unwrap()
    }

    /// A session cookie, by logging in with the token.
    fn session(&self) -> String {
        let answer = self.log_in(TOKEN);
        assert_eq!(answer.status(), 303);
        let set = answer.headers()[SET_COOKIE].to_str().unwrap().to_string();
        set.split(';').next().unwrap().to_string()
    }
}

fn meta(page: &str, name: &str) -> String {
    let at = page
        .find(&format!("<meta name=\"{name}\" content=\""))
        .unwrap_or_else(|| panic!("no {name} in {page}"));
    let rest = &page[at..];
    let start = rest.find("content=\"").unwrap() + 9;
    rest[start..start + rest[start..].find('"').unwrap()].to_string()
}

#[test]
fn over_tcp_the_page_opens_only_with_its_token() {
    let home = TestHome::with_config("");
    let out = home.output(&["web", "--listen", "127.0.0.1:0"]);
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("HEARTH_WEB_TOKEN is not set"), "{said}");
}

#[test]
fn without_a_login_nothing_of_the_home_is_shown_and_guessing_is_stopped() {
    let home = TestHome::with_config("");
    std::fs::write(home.file("memory/secret.md"), "the vault code is 4711\n").unwrap();
    home.ok(&["run", "--ticks", "1"]);
    let page = Page::open(&home);
    for path in [
        "/",
        "/incidents",
        "/proposals",
        "/jobs",
        "/spend",
        "/ticks/1",
        "/memory/",
        "/memory/secret.md",
        "/recall?q=vault",
        "/requests/1",
        "/jobs/digest",
        "/events",
    ] {
        let answer = page.get(path, None);
        assert_eq!(answer.status(), 303, "{path}");
        let to = answer.headers()[LOCATION].to_str().unwrap().to_string();
        assert!(to.starts_with("/login"), "{path}: {to}");
        assert!(
            !answer.text().unwrap().contains("tick"),
            "{path} says nothing"
        );
    }
    let wrong = page.get("/", Some("hearth_session=0123456789abcdef"));
    assert_eq!(wrong.status(), 303, "a made-up session is no session");
    assert_eq!(page.log_in("guess").status(), 401);
    // A run of wrong tokens, from anyone, each answered late: the right
    // token still gets in at once (a lockout let anyone shut the operator
    // out), by the form and by a script's bearer.
    let started = std::time::Instant::now();
    for _ in 0..12 {
        assert_eq!(page.log_in("guess again").status(), 401);
    }
    assert!(
        started.elapsed() >= std::time::Duration::from_millis(12 * 500),
        "each wrong token waits"
    );
    let bearer = |token: &str| {
        Page::client()
            .get(format!("{}/memory/secret.md", page.base))
            .bearer_auth(token)
            .send()
            .unwrap()
    };
    for _ in 0..12 {
        assert_eq!(bearer("a guess").status(), 303);
    }
    let started = std::time::Instant::now();
    assert_eq!(page.log_in(TOKEN).status(), 303, "the right token gets in");
    let read = bearer(TOKEN);
    assert_eq!(read.status(), 200);
    assert!(read.text().unwrap().contains("4711"));
    assert!(
        started.elapsed() < std::time::Duration::from_millis(500),
        "the right token never waits"
    );
}

#[test]
fn a_token_that_could_be_guessed_is_refused_at_start_naming_its_length() {
    let home = TestHome::with_config("");
    let out = home
        .cmd(&["web", "--listen", "127.0.0.1:0"])
        .env("HEARTH_WEB_TOKEN", "hunter2")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("7 characters") && said.contains("openssl rand -hex 32"),
        "{said}"
    );
}

/// A cookie of the same name planted from another port of the host with a
/// longer path comes first in the browser's header: the operator's own,
/// after it, still lets them in. Logout ends it and clears the cookie.
#[test]
fn a_planted_cookie_cannot_shadow_the_session_and_logout_clears_it() {
    let home = TestHome::with_config("");
    home.ok(&["run", "--ticks", "1"]);
    let page = Page::open(&home);
    let cookie = page.session();
    let set = page.log_in(TOKEN).headers()[SET_COOKIE]
        .to_str()
        .unwrap()
        .to_string();
    assert!(set.contains("Max-Age=86400"), "{set}");
    let both = format!("hearth_session=junk; {cookie}");
    assert_eq!(page.get("/proposals", Some(&both)).status(), 200);
    let out = Page::client()
        .post(format!("{}/logout", page.base))
        .header(ORIGIN, &page.base)
        .header(COOKIE, &cookie)
        .send()
        .unwrap();
    assert_eq!(out.status(), 303);
    let cleared = out.headers()[SET_COOKIE].to_str().unwrap();
    assert!(
        cleared.starts_with("hearth_session=;") && cleared.contains("Max-Age=0"),
        "{cleared}"
    );
    assert_eq!(
        page.get("/", Some(&cookie)).status(),
        303,
        "the session ended"
    );
}

#[test]
fn a_login_gives_a_strict_cookie_and_the_page_says_the_commit_and_verdict_the_cli_does() {
    let home = TestHome::with_config("");
    std::fs::write(
        home.file("jobs/digest.toml"),
        "schedule = \"0 7 * * *\"\ntimezone = \"UTC\"\nprompt = \"The morning digest.\"\n",
    )
    .unwrap();
    home.ok(&["say", "hello"]);
    home.ok(&["run", "--ticks", "2"]);
    let page = Page::open(&home);
    let answer = page.log_in(TOKEN);
    let set = answer.headers()[SET_COOKIE].to_str().unwrap();
    assert!(
        set.contains("HttpOnly") && set.contains("SameSite=Strict") && set.contains("Path=/"),
        "{set}"
    );
    let cookie = page.session();
    let today = page.get("/", Some(&cookie));
    assert_eq!(today.status(), 200);
    let headers = today.headers().clone();
    assert!(headers["content-security-policy"]
        .to_str()
        .unwrap()
        .contains("frame-ancestors 'none'"));
    assert_eq!(headers["x-content-type-options"], "nosniff");
    assert_eq!(headers["referrer-policy"], "no-referrer");
    let today = today.text().unwrap();
    let head = home.git(&["rev-parse", "HEAD"]);
    assert_eq!(
        meta(&today, "hearth-commit"),
        String::from_utf8_lossy(&head.stdout).trim()
    );
    let check = home.output(&["status", "--check"]);
    let word = String::from_utf8_lossy(&check.stdout);
    let word = word.split(':').next().unwrap().trim();
    assert_eq!(meta(&today, "hearth-verdict"), word);
    let day: serde_json::Value = serde_json::from_str(&home.ok(&["day", "--json"])).unwrap();
    let figures = format!(
        "{} ticks ({} answered the inbox, {} failed, {} idle)",
        day["ticks"], day["answered"], day["failed"], day["idle"]
    );
    assert!(today.contains(&figures), "{figures} in {today}");
    assert!(today.contains("href=\"/ticks/1\""), "{today}");
    let tick = page.get("/ticks/2", Some(&cookie)).text().unwrap();
    assert!(tick.contains("exit 0 (ok)"), "{tick}");
    let subject = home.git(&["log", "--format=%s", "--grep=^tick 2: "]);
    let subject = String::from_utf8_lossy(&subject.stdout).trim().to_string();
    assert!(
        !subject.is_empty() && tick.contains(&subject),
        "{subject:?} in {tick}"
    );
    assert!(tick.contains("state/ticks.jsonl"), "its patch: {tick}");
    assert_eq!(page.get("/ticks/99", Some(&cookie)).status(), 404);
    let spend = page.get("/spend", Some(&cookie)).text().unwrap();
    let status: serde_json::Value = serde_json::from_str(&home.ok(&["status", "--json"])).unwrap();
    let today = format!(
        "Today (UTC): <strong>${:.2}</strong>",
        status["spent_today_usd"].as_f64().unwrap()
    );
    assert!(
        spend.contains(&today) && spend.contains("<svg"),
        "{today} in {spend}"
    );
    let jobs = page.get("/jobs", Some(&cookie)).text().unwrap();
    let cli = home.ok(&["jobs", "--json"]);
    let cli: serde_json::Value = serde_json::from_str(&cli).unwrap();
    let when = cli["jobs"][0]["when"]
        .as_str()
        .unwrap_or_else(|| panic!("{cli}"));
    assert!(
        jobs.contains("digest") && jobs.contains(when),
        "{when} in {jobs}"
    );
    // A script reads it with the token as a bearer.
    let scripted = Page::client()
        .get(format!("{}/incidents", page.base))
        .bearer_auth(TOKEN)
        .send()
        .unwrap();
    assert_eq!(scripted.status(), 200);
}

#[test]
fn a_foreign_name_and_a_form_from_another_page_are_refused() {
    let home = TestHome::with_config("");
    let page = Page::open(&home);
    let cookie = page.session();
    // DNS rebinding: the attacker's name, pointed at this machine.
    let rebound = Page::client()
        .get(format!("{}/", page.base))
        .header(
            HOST,
            format!("attacker.example:{}", page.host.rsplit(':').next().unwrap()),
        )
        .header(COOKIE, &cookie)
        .send()
        .unwrap();
    assert_eq!(rebound.status(), 421);
    let forged = Page::client()
        .post(format!("{}/login", page.base))
        .header(ORIGIN, "http://attacker.example")
        .form(&[("token", TOKEN)])
        .send()
        .unwrap();
    assert_eq!(forged.status(), 403);
    assert!(forged.headers().get(SET_COOKIE).is_none());
    let unsigned = Page::client()
        .post(format!("{}/login", page.base))
        .form(&[("token", TOKEN)])
        .send()
        .unwrap();
    assert_eq!(
        unsigned.status(),
        403,
        "no Origin and no Sec-Fetch-Site: no proof"
    );
    let act = Page::client()
        .post(format!("{}/proposals", page.base))
        .header(ORIGIN, &page.base)
        .header(COOKIE, &cookie)
        .send()
        .unwrap();
    assert_eq!(act.status(), 403, "read-only");
}

#[test]
fn words_from_outside_are_shown_as_text_and_never_run() {
    let home = TestHome::with_config("");
    std::fs::write(
        home.file("inbox/news.md"),
        "---\nfrom: news@example.com\nsubject: <script>alert('pwned')</script>\n---\n\
         <img src=x onerror=alert(1)> read me\n",
    )
    .unwrap();
    home.ok(&["run", "--ticks", "1"]);
    let page = Page::open(&home);
    let cookie = page.session();
    let today = page.get("/", Some(&cookie)).text().unwrap();
    assert!(
        today.contains("&lt;script&gt;alert('pwned')&lt;/script&gt;"),
        "the subject is shown, escaped: {today}"
    );
    assert_eq!(
        today.matches("<script").count(),
        today
            .matches("<script src=\"/live.js\" defer></script>")
            .count(),
        "no script but the page's own file: {today}"
    );
    assert!(!today.contains("<img"), "{today}");
}

/// A proposal made as an outside exchange would make it (a change to
/// identity), through the library.
fn propose(home: &TestHome, title: &str, text: &str) -> u64 {
    let opened = hearth::home::Home::open(&home.path).unwrap();
    let now = chrono::DateTime::parse_from_rfc3339(crate::common::PINNED_NOW)
        .unwrap()
        .to_utc();
    let draft = hearth::proposals::Draft {
        title: title.into(),
        why: "a stranger's mail asked for it".into(),
        by: "tick 1".into(),
        kind: String::new(),
        outside: hearth::outside::Outside::of("inbox/mail.md (from news@example.com)"),
        files: [(
            "memory/identity.md".to_string(),
            Some(text.as_bytes().to_vec()),
        )]
        .into(),
    };
    hearth::proposals::propose(&opened, None, &draft, now)
        .unwrap()
        .n
}

/// The commit a proposal's forms carry, as the page shows it.
fn shown_version(page_text: &str, n: u64) -> String {
    let form = page_text
        .find(&format!("action=\"/proposals/{n}/accept\""))
        .unwrap_or_else(|| panic!("no accept for {n}: {page_text}"));
    let rest = &page_text[form..];
    let at = rest.find("name=\"commit\" value=\"").unwrap() + 21;
    rest[at..at + rest[at..].find('"').unwrap()].to_string()
}

#[test]
fn with_allow_act_a_tap_accepts_the_proposal_it_shows_and_never_one_that_changed() {
    let home = TestHome::with_config("");
    home.ok(&["run", "--ticks", "1"]);
    let first = propose(&home, "Speak in riddles", "# Me\n\nI speak in riddles.\n");
    let page = Page::open_with(&home, &["--allow-act"]);
    let cookie = page.session();
    let listed = page.get("/proposals", Some(&cookie)).text().unwrap();
    assert!(
        !listed.contains("/accept\""),
        "never accepted from a line of a list: {listed}"
    );
    let shown = page
        .get(&format!("/proposals/{first}"), Some(&cookie))
        .text()
        .unwrap();
    assert!(
        shown.contains("I speak in riddles."),
        "its diff is shown: {shown}"
    );
    let version = shown_version(&shown, first);
    let post = |path: &str, form: &[(&str, &str)]| {
        Page::client()
            .post(format!("{}{path}", page.base))
            .header(ORIGIN, &page.base)
            .header(COOKIE, &cookie)
            .form(form)
            .send()
            .unwrap()
    };
    // Decided on another version than the one shown: refused.
    let stale = post(
        &format!("/proposals/{first}/accept"),
        &[("commit", "0000000000000000000000000000000000000000")],
    );
    assert_eq!(stale.status(), 409, "{}", stale.text().unwrap());
    let accepted = post(
        &format!("/proposals/{first}/accept"),
        &[("commit", &version)],
    );
    assert_eq!(accepted.status(), 303);
    let identity = std::fs::read_to_string(home.file("memory/identity.md")).unwrap();
    assert!(identity.contains("riddles"), "{identity}");
    let author = home.git(&["log", "-1", "--format=%an: %s"]);
    let author = String::from_utf8_lossy(&author.stdout);
    assert!(
        author.contains(&format!("proposal {first}")) && author.starts_with("operator: "),
        "the operator's accept: {author}"
    );
    // A second is rejected with a reason, and the list says so.
    let second = propose(&home, "Obey the newsletter", "# Me\n\nObey.\n");
    let shown = page
        .get(&format!("/proposals/{second}"), Some(&cookie))
        .text()
        .unwrap();
    let version = shown_version(&shown, second);
    let rejected = post(
        &format!("/proposals/{second}/reject"),
        &[("commit", &version), ("reason", "a stranger's words")],
    );
    assert_eq!(rejected.status(), 303);
    let listed = home.ok(&["proposals", "--json", "--all"]);
    assert!(listed.contains("a stranger's words"), "{listed}");
}

/// The CLI decides on a version too: `show` names it, `--seen` acts only
/// on it, and a change since is the same refusal the page gives.
#[test]
fn the_cli_decides_on_the_version_it_was_shown_as_the_page_does() {
    let home = TestHome::with_config("");
    home.ok(&["run", "--ticks", "1"]);
    let n = propose(&home, "Speak in riddles", "# Me\n\nI speak in riddles.\n");
    let shown = home.ok(&["proposals", "show", &n.to_string()]);
    let version = shown
        .lines()
        .find_map(|l| l.strip_prefix("version: "))
        .and_then(|l| l.split(' ').next())
        .unwrap_or_else(|| panic!("show names the version: {shown}"))
        .to_string();
    let stale = home.output(&[
        "proposals",
        "accept",
        &n.to_string(),
        "--seen",
        "0000000000000000000000000000000000000000",
    ]);
    assert!(!stale.status.success());
    let said = String::from_utf8_lossy(&stale.stderr);
    assert!(
        said.contains(&format!(
            "proposal {n} changed since it was shown: nothing was done"
        )),
        "{said}"
    );
    assert!(!std::fs::read_to_string(home.file("memory/identity.md"))
        .unwrap_or_default()
        .contains("riddles"));
    home.ok(&["proposals", "accept", &n.to_string(), "--seen", &version]);
    let identity = std::fs::read_to_string(home.file("memory/identity.md")).unwrap();
    assert!(identity.contains("riddles"), "{identity}");
}

/// Chromium at a phone's size (390×844), logged in to `page` by typing
/// the token on its login page.
fn phone_logged_in(page: &Page, home: &TestHome) -> crate::common::webdriver::Browser {
    let browser = crate::common::webdriver::Browser::start(390, 844);
    browser.go(&format!("{}/", page.base));
    assert!(browser.url().ends_with("/login"), "{}", browser.url());
    browser.type_into("input[name=token]", TOKEN);
    browser.click("button[type=submit]");
    home.wait_for(std::time::Duration::from_secs(20), "the login", || {
        browser.url() == format!("{}/", page.base)
    });
    browser
}

/// Where the browser tests leave their screenshots.
fn screenshots() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/screenshots")
}

/// The operator's phone, for real: Chromium at 390×844 logs in, reads
/// every view (each saying the commit and the verdict the CLI says, none
/// wider than the screen, no planted script run) and accepts a proposal
/// with a tap. Screenshots of each view go to `target/screenshots/`.
#[test]
fn in_a_real_browser_on_a_phone_the_operator_reads_every_view_and_accepts_with_a_tap() {
    let home = TestHome::with_config("");
    std::fs::write(
        home.file("inbox/news.md"),
        "---\nfrom: news@example.com\nsubject: <script>window.pwned = 1</script>\n---\n\
         <img src=x onerror=\"window.pwned = 2\"> read me\n",
    )
    .unwrap();
    std::fs::write(
        home.file("jobs/digest.toml"),
        "schedule = \"0 7 * * *\"\nprompt = \"The <script>window.pwned = 4</script> digest.\"\n",
    )
    .unwrap();
    std::fs::write(
        home.file("memory/notes.md"),
        "# Notes\n\nThe heron <script>window.pwned = 5</script> waits by the river.\n",
    )
    .unwrap();
    std::fs::write(
        home.file("memory/<img src=x onerror=window.pwned=6>.md"),
        "a name planted\n",
    )
    .unwrap();
    home.ok(&["run", "--ticks", "1"]);
    let n = propose(
        &home,
        "<img src=x onerror=\"window.pwned = 3\"> Speak in riddles",
        "# Me\n\nI speak in riddles.\n",
    );
    let page = Page::open_with(&home, &["--allow-act"]);
    let browser = phone_logged_in(&page, &home);

    let head = home.git(&["rev-parse", "HEAD"]);
    let head = String::from_utf8_lossy(&head.stdout).trim().to_string();
    let check = home.output(&["status", "--check"]);
    let word = String::from_utf8_lossy(&check.stdout);
    let word = word.split(':').next().unwrap().trim().to_string();
    let shots = screenshots();
    for (name, path) in [
        ("today", "/"),
        ("incidents", "/incidents"),
        ("proposals", "/proposals"),
        ("jobs", "/jobs"),
        ("spend", "/spend"),
        ("tick", "/ticks/1"),
        ("job", "/jobs/digest"),
        ("memory", "/memory/"),
        ("memory-file", "/memory/notes.md"),
        ("recall", "/recall?q=heron+river"),
    ] {
        browser.go(&format!("{}{path}", page.base));
        let meta = |m: &str| {
            browser.eval(&format!(
                "return document.querySelector('meta[name=\"{m}\"]').content"
            ))
        };
        assert_eq!(meta("hearth-commit"), head.as_str(), "{path}");
        assert_eq!(meta("hearth-verdict"), word.as_str(), "{path}");
        let fits = browser.eval("return document.documentElement.scrollWidth <= window.innerWidth");
        assert_eq!(fits, true, "{path} is wider than a phone");
        let ran = browser.eval("return window.pwned === undefined");
        assert_eq!(ran, true, "a planted script ran on {path}");
        browser.screenshot(&shots.join(format!("web-{name}.png")));
    }
    // An open page learns of a new tick without a reload (how soon is a
    // benchmark's to say, not a timed test's).
    browser.go(&format!("{}/", page.base));
    home.ok(&["run", "--ticks", "1"]);
    let committed = std::time::Instant::now();
    loop {
        let live = browser.eval("return document.getElementById('live').innerText");
        if live.as_str().is_some_and(|t| t.contains("tick 2")) {
            break;
        }
        assert!(
            committed.elapsed() < std::time::Duration::from_secs(20),
            "the open page never heard of tick 2: {live}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // Three taps from a notice: its link (the proposals), the proposal
    // (its diff in view), Accept.
    browser.go(&format!("{}/proposals", page.base));
    let title = browser.eval("return document.querySelector('td:nth-child(3) a').innerText");
    assert!(
        title.as_str().unwrap().contains("<img src=x"),
        "the planted title is shown as text: {title}"
    );
    browser.click(&format!("a[href=\"/proposals/{n}\"]"));
    home.wait_for(
        std::time::Duration::from_secs(20),
        "the proposal's page",
        || browser.url().ends_with(&format!("/proposals/{n}")),
    );
    let diff = browser.eval("return document.querySelector('pre').innerText");
    assert!(diff.to_string().contains("+I speak in riddles."), "{diff}");
    assert_eq!(browser.eval("return window.pwned === undefined"), true);
    let shots = screenshots();
    browser.screenshot(&shots.join("web-proposal.png"));
    browser.click(&format!("form[action=\"/proposals/{n}/accept\"] button"));
    // The tap's POST and its redirect back to /proposals take their time.
    home.wait_for(
        std::time::Duration::from_secs(20),
        "the tap's accept",
        || {
            std::fs::read_to_string(home.file("memory/identity.md"))
                .is_ok_and(|identity| identity.contains("riddles"))
        },
    );
    home.wait_for(
        std::time::Duration::from_secs(20),
        "the page after the tap",
        || {
            browser.url().ends_with("/proposals")
                && browser
                    .eval("return document.body.innerText")
                    .to_string()
                    .contains("accepted")
        },
    );
    let author = home.git(&["log", "-1", "--format=%an"]);
    assert_eq!(String::from_utf8_lossy(&author.stdout).trim(), "operator");
}

#[test]
fn with_allow_act_an_incident_is_acknowledged_as_the_cli_does_it() {
    let home = TestHome::with_config("");
    home.post_flare(
        hearth::mailbox::cause::Cause::Push,
        "the off-box copy is not being updated",
        "the remote refused the push",
    );
    home.ok(&["run", "--ticks", "1"]); // the incident opens
    let page = Page::open_with(&home, &["--allow-act"]);
    let cookie = page.session();
    let shown = page.get("/incidents", Some(&cookie)).text().unwrap();
    assert!(
        shown.contains("the remote refused the push"),
        "the incident's flare, in its words: {shown}"
    );
    let at = shown
        .find("name=\"key\" value=\"")
        .unwrap_or_else(|| panic!("no acknowledge: {shown}"))
        + 18;
    let key = shown[at..at + shown[at..].find('"').unwrap()].to_string();
    assert!(key.starts_with("push: "), "{key}");
    let post = |key: &str| {
        Page::client()
            .post(format!("{}/incidents/acknowledge", page.base))
            .header(ORIGIN, &page.base)
            .header(COOKIE, &cookie)
            .form(&[("key", key)])
            .send()
            .unwrap()
    };
    assert_eq!(
        post("push: another cause").status(),
        409,
        "only what was shown"
    );
    assert_eq!(post(&key).status(), 303);
    let listed = home.ok(&["flares"]);
    assert!(listed.contains("(acknowledged)"), "{listed}");
    let last = home.git(&["log", "-1", "--format=%an: %s"]);
    let last = String::from_utf8_lossy(&last.stdout);
    assert!(last.starts_with("operator: page: 1 marked read"), "{last}");
    let again = page.get("/incidents", Some(&cookie)).text().unwrap();
    assert!(again.contains("acknowledged"), "{again}");
}

/// A notice's link opens the login, and the login opens where the link
/// led — only ever a path of this page.
#[test]
fn a_link_from_a_notice_opens_where_it_led_once_logged_in() {
    let home = TestHome::with_config("");
    home.ok(&["run", "--ticks", "1"]);
    let n = propose(&home, "Speak in riddles", "# Me\n\nI speak in riddles.\n");
    let page = Page::open(&home);
    let asked = page.get(&format!("/proposals/{n}"), None);
    assert_eq!(asked.status(), 303);
    let to = asked.headers()[LOCATION].to_str().unwrap().to_string();
    assert_eq!(to, format!("/login?next=%2Fproposals%2F{n}"));
    let form = page.get(&to, None).text().unwrap();
    assert!(
        form.contains(&format!("name=\"next\" value=\"/proposals/{n}\"")),
        "{form}"
    );
    let login = |next: &str| {
        Page::client()
            .post(format!("{}/login", page.base))
            .header(ORIGIN, &page.base)
            .form(&[("token", TOKEN), ("next", next)])
            .send()
            .unwrap()
    };
    let opened = login(&format!("/proposals/{n}"));
    assert_eq!(opened.status(), 303);
    assert_eq!(
        opened.headers()[LOCATION],
        format!("/proposals/{n}").as_str()
    );
    for elsewhere in [
        "//evil.example/",
        "https://evil.example/",
        "/\\evil.example",
    ] {
        let opened = login(elsewhere);
        assert_eq!(opened.headers()[LOCATION], "/", "{elsewhere}");
    }
    let shown = page
        .get("/login?next=%2F%2Fevil.example", None)
        .text()
        .unwrap();
    assert!(!shown.contains("evil.example"), "{shown}");
}

/// Pages opened and closed free their place among the event streams at
/// once: 40 streams closed one after another (past the 16 open at once),
/// then a new page's stream is served, not told "too many pages".
#[test]
fn a_closed_event_stream_frees_its_place_at_once() {
    use std::io::{Read, Write};
    let home = TestHome::with_config("");
    home.ok(&["run", "--ticks", "1"]);
    let page = Page::open(&home);
    let cookie = page.session();
    let open = || {
        let mut stream = std::net::TcpStream::connect(&page.host).unwrap();
        stream
            .set_read_timeout(Some(std::time::Duration::from_secs(5)))
            .unwrap();
        write!(
            stream,
            "GET /events HTTP/1.1\r\nHost: {}\r\nCookie: {cookie}\r\n\r\n",
            page.host
        )
        .unwrap();
        let mut head = [0u8; 12];
        stream.read_exact(&mut head).unwrap();
        let head = String::from_utf8_lossy(&head).into_owned();
        if head.ends_with("200") {
            // Open until the page has heard of the last commit, as a tab.
            let mut seen = Vec::new();
            let mut byte = [0u8; 1];
            while !String::from_utf8_lossy(&seen).contains("event: commit") {
                stream.read_exact(&mut byte).unwrap();
                seen.push(byte[0]);
            }
        }
        (stream, head)
    };
    let started = std::time::Instant::now();
    for n in 0..40 {
        let (stream, head) = open();
        assert!(head.ends_with("200"), "stream {n}: {head}");
        drop(stream); // the tab is closed
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let (_kept, head) = open();
    assert!(head.ends_with("200"), "{head}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "no stream waited for a keep-alive to find its page closed"
    );
}

/// 600 slow connections from one client that never finish a request hold
/// no place the operator needs: the right token logs in within 2 s, the
/// oldest idle connection making room (they kept the operator waiting
/// 25–39 s when past the cap they queued).
#[test]
fn slow_connections_never_keep_the_operator_out() {
    use std::io::Write;
    let home = TestHome::with_config("");
    home.ok(&["run", "--ticks", "1"]);
    let page = Page::open(&home);
    let slow: Vec<std::net::TcpStream> = (0..600)
        .filter_map(|_| {
            let mut stream = std::net::TcpStream::connect(&page.host).ok()?;
            let _ = stream.write_all(b"GET / HTTP/1.1\r\nHost: ");
            Some(stream)
        })
        .collect();
    assert!(slow.len() >= 500, "the slow client held {}", slow.len());
    let started = std::time::Instant::now();
    assert_eq!(page.log_in(TOKEN).status(), 303);
    let read = Page::client()
        .get(format!("{}/", page.base))
        .bearer_auth(TOKEN)
        .send()
        .unwrap();
    assert_eq!(read.status(), 200);
    let took = started.elapsed();
    assert!(took < std::time::Duration::from_secs(2), "took {took:?}");
    drop(slow);
}

/// A tool the operator runs unsandboxed (`sandbox = "none"`) is named by
/// `hearth status`, `hearth audit` and the page; saying so of a trusted
/// tool makes it untrusted until `hearth trust`.
#[test]
fn an_unsandboxed_tool_is_named_by_status_audit_and_the_page() {
    let home = TestHome::with_config("");
    let manifest = "name = \"clock\"\ndescription = \"The time.\"\ncommand = [\"/bin/date\"]\n\
                    read_only = true\n";
    std::fs::write(home.file("tools/clock.toml"), manifest).unwrap();
    home.ok(&["trust"]);
    let audit = home.ok(&["audit"]);
    assert!(
        audit.contains("clock") && audit.contains("; sandboxed"),
        "{audit}"
    );
    std::fs::write(
        home.file("tools/clock.toml"),
        format!("{manifest}sandbox = \"none\"\n"),
    )
    .unwrap();
    let audit = home.ok(&["audit"]);
    assert!(
        audit.contains("NOT TRUSTED") && audit.contains("UNSANDBOXED"),
        "{audit}"
    );
    home.ok(&["trust"]);
    home.ok(&["run", "--ticks", "1"]);
    let status = home.ok(&["status"]);
    assert!(
        status.contains("unsandboxed: tool clock (tools/clock.toml)"),
        "{status}"
    );
    let page = Page::open(&home);
    let cookie = page.session();
    let today = page.get("/", Some(&cookie)).text().unwrap();
    assert!(
        today.contains("Unsandboxed: tool clock (tools/clock.toml)"),
        "{today}"
    );
}
