//! `hearth web --homes DIR` (hosts of `hearth@NAME`): an index of every
//! home under DIR with its verdict, each home's pages under `/h/NAME/`
//! with links that stay there, and no name that leads out of DIR.

use std::process::Command;

use reqwest::header::{COOKIE, LOCATION, ORIGIN};

use super::{meta, propose, Page};
use crate::common::{TestHome, HEARTH, PINNED_NOW};

#[test]
fn every_home_is_listed_with_its_verdict_and_served_under_its_name() {
    // The homes are directories of DIR, as /var/lib/hearth/NAME are; a
    // link there to a home elsewhere is not served.
    let dir = tempfile::tempdir().unwrap();
    let home_in_dir = |name: &str| {
        let home = TestHome::at(&dir.path().join(name));
        home.ok(&["init"]);
        home.ok(&["run", "--ticks", "1"]);
        home
    };
    let alice = home_in_dir("alice");
    let bob = home_in_dir("bob");
    let n = propose(&alice, "Speak in riddles", "# Me\n\nI speak in riddles.\n");
    std::fs::write(bob.file("hearth.toml"), "[model\n").unwrap(); // broken: trouble
    let elsewhere = TestHome::with_config("");
    std::os::unix::fs::symlink(&elsewhere.path, dir.path().join("linked")).unwrap();
    std::fs::create_dir(dir.path().join("not-a-home")).unwrap();
    let mut cmd = Command::new(HEARTH);
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HEARTH_NOW", PINNED_NOW)
        .args(["web", "--listen", "127.0.0.1:0", "--allow-act", "--homes"])
        .arg(dir.path());
    let page = Page::start(cmd, &dir.path().join("web.log"));
    let cookie = page.session();

    let index = page.get("/", Some(&cookie)).text().unwrap();
    assert!(
        index.contains("href=\"/h/alice/\"") && index.contains("href=\"/h/bob/\""),
        "{index}"
    );
    assert!(!index.contains("not-a-home"), "{index}");
    assert!(
        !index.contains("linked"),
        "a link to a home elsewhere: {index}"
    );
    assert_eq!(
        meta(&index, "hearth-verdict"),
        "trouble",
        "the worst of them: {index}"
    );
    for (name, home) in [("alice", &alice), ("bob", &bob)] {
        let check = home.output(&["status", "--check"]);
        let word = String::from_utf8_lossy(&check.stdout);
        let word = word.split(':').next().unwrap().trim().to_string();
        let shown = page
            .get(&format!("/h/{name}/"), Some(&cookie))
            .text()
            .unwrap();
        assert_eq!(meta(&shown, "hearth-verdict"), word, "{name}: {shown}");
        let head = home.git(&["rev-parse", "HEAD"]);
        assert_eq!(
            meta(&shown, "hearth-commit"),
            String::from_utf8_lossy(&head.stdout).trim(),
            "{name}"
        );
        assert!(
            shown.contains(&format!("href=\"/h/{name}/ticks/1\""))
                && shown.contains(&format!("href=\"/h/{name}/jobs\"")),
            "its links stay under its name: {shown}"
        );
        let tick = page.get(&format!("/h/{name}/ticks/1"), Some(&cookie));
        assert_eq!(tick.status(), 200, "{name}");
    }
    for path in [
        "/h/nobody/",
        "/h/..%2Fbob/",
        "/h/not-a-home/",
        "/jobs",
        "/h/.hidden/",
    ] {
        assert_eq!(page.get(path, Some(&cookie)).status(), 404, "{path}");
    }
    // An act is taken on the home whose page showed it, and leads back
    // under its name.
    let shown = page
        .get(&format!("/h/alice/proposals/{n}"), Some(&cookie))
        .text()
        .unwrap();
    let action = format!("action=\"/h/alice/proposals/{n}/accept\"");
    assert!(shown.contains(&action), "{shown}");
    let version = super::shown_version(&shown.replace("/h/alice", ""), n);
    let accepted = reqwest::blocking::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
        .post(format!("{}/h/alice/proposals/{n}/accept", page.base))
        .header(ORIGIN, &page.base)
        .header(COOKIE, &cookie)
        .form(&[("commit", version.as_str())])
        .send()
        .unwrap();
    assert_eq!(accepted.status(), 303);
    assert_eq!(accepted.headers()[LOCATION], "/h/alice/proposals");
    let identity = std::fs::read_to_string(alice.file("memory/identity.md")).unwrap();
    assert!(identity.contains("riddles"), "{identity}");
    let untouched = std::fs::read_to_string(bob.file("memory/identity.md")).unwrap();
    assert!(!untouched.contains("riddles"), "{untouched}");

    // Nothing of any home without a login.
    let anonymous = page.get("/h/alice/", None);
    assert_eq!(anonymous.status(), 303);
}
