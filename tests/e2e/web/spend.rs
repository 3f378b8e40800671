//! `/spend` against a model API that bills like Anthropic's: today's
//! figure is `status`'s, each tick's cost and cache share are its ledger
//! line's, and what is left of the cap is the cap less what was spent.

use super::Page;
use crate::common::{billing, TestHome};

#[test]
fn the_spend_page_shows_each_ticks_cost_and_cache_share_and_what_is_left_of_the_cap() {
    let clock_dir = tempfile::tempdir().unwrap();
    let clock = clock_dir.path().join("now");
    std::fs::write(&clock, "2026-03-02T09:00:00Z").unwrap();
    let (server, _books) = billing::serve(clock.clone(), billing::agent);
    let home = TestHome::with_config(&format!(
        "[model]\nprovider = \"anthropic\"\nmodel = \"claude-sonnet-4-5\"\nbase_url = \"{}\"\n\
         timeout_s = 5\n[tick]\ninterval_s = 900\n[budget]\ndaily_usd = 5\n",
        server.url
    ));
    std::fs::write(
        home.file("memory/notes.md"),
        "# Notes\n\n".to_string() + &"The tide is high. ".repeat(400),
    )
    .unwrap();
    home.ok(&["say", "read my notes, please"]);
    let out = home
        .keyed(&["run", "--ticks", "3"], "sk-ant-test")
        .env("HEARTH_SIM_CLOCK", &clock)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let now = "2026-03-02T12:00:00Z";
    let mut cmd = home.cmd(&["web", "--listen", "127.0.0.1:0"]);
    cmd.env("HEARTH_NOW", now);
    let page = Page::start(cmd, &home.path.with_file_name("web.log"));
    let cookie = page.session();
    let shown = page.get("/spend", Some(&cookie)).text().unwrap();

    let status = home.ok_with_env(&["status", "--json"], &[("HEARTH_NOW", now)]);
    let status: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    let spent = status["spent_today_usd"].as_f64().unwrap();
    assert!(spent > 0.0, "{status}");
    assert!(
        shown.contains(&format!("Today (UTC): <strong>${spent:.2}</strong>")),
        "status's ${spent:.4} in {shown}"
    );
    assert!(
        shown.contains(&format!("${:.2} left", 5.0 - spent)),
        "what is left of the cap: {shown}"
    );
    let ticks = home.ticks();
    assert_eq!(ticks.len(), 3);
    let mut cached = 0;
    for t in &ticks {
        let n = t["tick"].as_u64().unwrap();
        let tokens = &t["tokens"];
        let read = tokens["cache_read"].as_u64().unwrap_or(0);
        let sent = tokens["in"].as_u64().unwrap()
            + read
            + tokens["cache_write"].as_u64().unwrap_or(0)
            + tokens["cache_write_1h"].as_u64().unwrap_or(0);
        let share = format!("{:.0}%", read as f64 / sent as f64 * 100.0);
        cached += usize::from(read > 0);
        let at = shown
            .find(&format!("href=\"/ticks/{n}\""))
            .unwrap_or_else(|| panic!("tick {n} is not listed: {shown}"));
        let row = &shown[at..at + shown[at..].find("</tr>").unwrap()];
        assert!(
            row.contains(&format!("${:.4}", t["cost_usd"].as_f64().unwrap()))
                && row.contains(&format!("{sent} tokens"))
                && row.contains(&share),
            "tick {n}: {share} of {sent} from the cache, {t}: {row}"
        );
    }
    assert!(cached > 0, "the cache served no tick: {ticks:?}");
    assert!(shown.contains("3 paid calls"), "{shown}");
    assert!(shown.contains("<polyline"), "the burn-down: {shown}");
    // On a phone, the charts fit its width.
    let browser = super::phone_logged_in(&page, &home);
    browser.go(&format!("{}/spend", page.base));
    let fits = browser.eval("return document.documentElement.scrollWidth <= window.innerWidth");
    assert_eq!(fits, true, "/spend is wider than a phone");
    browser.screenshot(&super::screenshots().join("web-spend-billed.png"));
}
