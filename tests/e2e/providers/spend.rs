//! Spend is bounded out of the box: shipped prices for the providers'
//! current models, an unpriced remote model refused at start-up, a model on
//! this host free unless priced, and `hearth status` showing the day.

use super::*;

#[test]
fn an_unpriced_remote_model_with_a_daily_limit_is_refused_at_start_naming_the_key() {
    let home = TestHome::with_config(
        "[model]\nprovider = \"openai\"\nmodel = \"my-model\"\nbase_url = \"https://models.example.com/v1\"\n",
    );
    let out = home.keyed(&["run", "--ticks", "1"], KEY).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("[budget.prices.\"my-model\"]"), "{err}");
    assert!(err.contains("daily_usd = 0"), "the other way out: {err}");
    assert!(home.ticks().is_empty());
    let status = home.ok(&["status"]);
    assert!(
        status.contains("CONFIG:") && status.contains("my-model"),
        "{status}"
    );

    // Without a limit it is the operator's choice.
    std::fs::write(
        home.file("hearth.toml"),
        home.read("hearth.toml") + "[budget]\ndaily_usd = 0\n",
    )
    .unwrap();
    assert!(!home.ok(&["status"]).contains("CONFIG:"));
}

#[test]
fn a_shipped_price_bounds_a_real_model_warns_first_and_status_shows_the_day() {
    // claude-sonnet-4-5 at $3 per million input tokens, served on this host:
    // the shipped price applies (a loopback model is free only unpriced).
    let answer = || stream(anthropic::message("ok", &[], 1_000_000, 0));
    let server = ModelServer::start(vec![answer(), answer(), answer()]);
    let home = home_for(&server, "[budget]\ndaily_usd = 5.0\n");
    std::fs::write(
        home.file("hearth.toml"),
        home.read("hearth.toml")
            .replace("claude-test", "claude-sonnet-4-5-20250929"),
    )
    .unwrap();
    // Morning (UTC), so "before the day ends" does not hang on the hour
    // the test runs at.
    let out = home
        .keyed(&["run", "--ticks", "3"], KEY)
        .env("HEARTH_NOW", "2026-11-23T06:00:00Z")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let ticks = home.ticks();
    assert!(
        (ticks[0]["cost_usd"].as_f64().unwrap() - 3.0).abs() < 1e-9,
        "{}",
        ticks[0]
    );
    let classes: Vec<&str> = ticks.iter().map(|t| t["class"].as_str().unwrap()).collect();
    assert_eq!(classes, ["ok", "ok", "skipped"]);
    let budget_flares: Vec<String> = home
        .list("outbox")
        .into_iter()
        .filter(|n| n.contains("-flare-budget"))
        .collect();
    assert_eq!(
        budget_flares.len(),
        2,
        "the warning, then the stop itself: {budget_flares:?}"
    );
    let says = |what: &str| {
        budget_flares
            .iter()
            .filter(|f| home.read(&format!("outbox/{f}")).contains(what))
            .count()
    };
    assert_eq!(says("will run out today"), 1, "{budget_flares:?}");
    assert_eq!(says("the daily budget is spent"), 1, "{budget_flares:?}");
    // Both say what was spent as the ledger has it: $6.00 by 2 ticks.
    assert_eq!(says("The ticks spent $6.00 today (2 ticks)"), 1);
    let status = home.ok_with_env(&["status"], &[("HEARTH_NOW", "2026-11-23T07:00:00Z")]);
    let status = String::from_utf8_lossy(&status.stdout);
    assert!(
        status.contains("$6.00 today (UTC) of [budget] daily_usd = $5.00"),
        "{status}"
    );

    // The next day ticks run again, and the log says spending resumed.
    let out = home
        .keyed(&["run", "--ticks", "1"], KEY)
        .env("HEARTH_NOW", "2026-11-24T06:00:00Z")
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{log}");
    assert!(
        log.contains("spending resumed after the daily budget stopped ticks on 2026-11-23"),
        "{log}"
    );
    assert_eq!(home.ticks().last().unwrap()["class"], "ok");
}

#[test]
fn a_model_served_on_this_host_is_free_unless_priced() {
    let server = ModelServer::start(vec![stream(anthropic::message("ok", &[], 1_000_000, 0))]);
    let home = home_for(&server, "[budget]\ndaily_usd = 0.000001\n");
    let out = run(&home, "1");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(home.ticks()[0]["cost_usd"], 0.0);
}
