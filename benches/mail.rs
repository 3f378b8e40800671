//! From a mail delivered to the server to its inbox message committed:
//! Debian's Dovecot (IDLE) and `hearth run`, as a user runs them, beside
//! what a user would otherwise have — a cron job that fetches every
//! minute (its wait, on average, is half the minute). Target (issue 69):
//! within 2 s with IDLE.
//!
//! `cargo bench --bench mail` (as root: Dovecot keeps its test mailbox as
//! `nobody`)

#![allow(clippy::disallowed_methods)] // fixtures, not state

#[path = "../tests/common/mod.rs"]
mod common;

use std::time::{Duration, Instant};

use common::mail_server::Dovecot;
use common::TestHome;

const RUNS: usize = 15;

fn main() {
    let dovecot = Dovecot::start();
    let home = TestHome::with_config(&format!(
        "[mail]\nimap = \"imaps://127.0.0.1:{}\"\nuser = \"agent\"\noperator = [\"ada@example.org\"]\n\
         dns = \"127.0.0.1:9\"\n",
        dovecot.imaps
    ));
    let mut cmd = home.cmd(&["run"]);
    cmd.env("HEARTH_MAIL_PASSWORD", Dovecot::PASSWORD)
        .env("SSL_CERT_FILE", &dovecot.ca);
    let supervisor = home.spawn_with(cmd);
    let committed = |n: usize| {
        let log = home.git(&["log", "--format=%s"]);
        String::from_utf8_lossy(&log.stdout)
            .lines()
            .filter(|s| s.starts_with("mail: inbox/"))
            .count()
            >= n
    };
    let mut lags = Vec::new();
    for n in 1..=RUNS {
        let raw = format!(
            "From: ada@example.org\r\nTo: agent@example.org\r\nSubject: run {n}\r\n\
             Message-ID: <run-{n}@example.org>\r\n\r\nThe heron, run {n}.\r\n"
        );
        let at = Instant::now();
        dovecot.deliver(raw.as_bytes());
        while !committed(n) {
            assert!(
                at.elapsed() < Duration::from_secs(60),
                "mail {n} never came"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        lags.push(at.elapsed());
    }
    common::finish_after_term(supervisor);
    lags.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let (p50, max) = (ms(lags[RUNS / 2]), ms(lags[RUNS - 1]));
    println!("a mail delivered (doveadm save) to its inbox message committed, {RUNS} runs\n");
    println!("| way | p50 | max | target |");
    println!("|---|---|---|---|");
    println!("| hearth, IMAP IDLE | {p50:.0} ms | {max:.0} ms | ≤ 2000 ms |");
    println!("| a fetch each minute (cron), on average | 30000 ms | 60000 ms | |");
    println!("\nIDLE / a fetch each minute: {:.3}×", p50 / 30_000.0);
}
