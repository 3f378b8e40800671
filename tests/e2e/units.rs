//! The shipped systemd units: `systemd-analyze verify` is clean and the
//! offline security exposure stays at 1.5 or lower (DESIGN 12), 2.0 for a
//! supervisor's, which lets the tool sandbox make its namespaces. The units
//! are checked as installed, with `ExecStart` pointing at the built binary.

#![allow(clippy::disallowed_methods)] // fixtures, not state

use std::path::Path;
use std::process::Command;

fn installed_copy(dir: &Path, source: &str, name: &str) -> std::path::PathBuf {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(source)).unwrap();
    let text = text.replace("/usr/local/bin/hearth", crate::common::HEARTH);
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn analyze(args: &[&str]) -> std::process::Output {
    Command::new("systemd-analyze")
        .args(args)
        .output()
        .expect("systemd-analyze runs (Debian package `systemd`; .ci/run installs it)")
}

fn exposure(unit: &Path) -> f64 {
    let out = analyze(&["security", "--offline=true", unit.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.contains("Overall exposure level"))
        .unwrap_or_else(|| panic!("no exposure line: {text}"));
    let after = line.split(':').nth(1).unwrap().trim();
    after.split_whitespace().next().unwrap().parse().unwrap()
}

#[test]
fn units_verify_clean_and_expose_at_most_1_5() {
    let dir = tempfile::tempdir().unwrap();
    let single = installed_copy(dir.path(), "supervisor/hearth.service", "hearth.service");
    let template = installed_copy(dir.path(), "supervisor/hearth@.service", "hearth@.service");
    let instance = dir.path().join("hearth@alice.service");
    std::fs::copy(&template, &instance).unwrap();
    // What OnFailure= starts, beside them (verify looks for it there).
    let notify = installed_copy(
        dir.path(),
        "supervisor/hearth-notify@.service",
        "hearth-notify@.service",
    );
    let notify_instance = dir
        .path()
        .join("hearth-notify@hearth@alice.service.service");
    std::fs::copy(&notify, &notify_instance).unwrap();

    // The page's units, not enabled by the package, hardened the same.
    let web = installed_copy(
        dir.path(),
        "supervisor/hearth-web.service",
        "hearth-web.service",
    );
    let web_template = installed_copy(
        dir.path(),
        "supervisor/hearth-web@.service",
        "hearth-web@.service",
    );
    let web_instance = dir.path().join("hearth-web@alice.service");
    std::fs::copy(&web_template, &web_instance).unwrap();

    for unit in [&single, &instance, &notify_instance, &web, &web_instance] {
        let out = analyze(&["verify", unit.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() && err.trim().is_empty(),
            "{}: {err}",
            unit.display()
        );
        // A supervisor's unit lets the tool sandbox make its namespaces and
        // mounts (2.0); a unit that starts no tool keeps 1.5 (DESIGN 12).
        let name = unit.file_name().unwrap().to_string_lossy().into_owned();
        let bound = if name.starts_with("hearth.") || name.starts_with("hearth@") {
            2.0
        } else {
            1.5
        };
        let level = exposure(unit);
        assert!(level <= bound, "{} exposure {level}", unit.display());
    }
}

#[test]
fn when_systemd_gives_up_the_on_failure_unit_tells_the_operator_through_notify() {
    // The supervisor units name the notify template in OnFailure=, with
    // the failed unit as its instance.
    for source in ["supervisor/hearth.service", "supervisor/hearth@.service"] {
        let text =
            std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(source)).unwrap();
        assert!(
            text.contains("OnFailure=hearth-notify@%n.service"),
            "{source}"
        );
    }
    // Its ExecStart, with %i as systemd fills it in for hearth@alice, run
    // as systemd would (here --home stands for /var/lib/hearth/alice).
    let unit = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("supervisor/hearth-notify@.service"),
    )
    .unwrap();
    let exec = unit
        .lines()
        .find_map(|l| l.strip_prefix("ExecStart="))
        .unwrap()
        .replace("%i", "hearth@alice.service");
    let argv: Vec<&str> = exec.split_whitespace().collect();
    assert_eq!(argv[0], "/usr/local/bin/hearth");
    let ntfy = crate::common::receiver::Receiver::start();
    let home =
        crate::common::TestHome::with_config(&format!("[notify]\nntfy = \"{}/ops\"\n", ntfy.url));
    let out = home.output(&argv[1..]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sent = ntfy.taken();
    assert_eq!(sent.len(), 1);
    let body = sent[0].json();
    assert!(
        body["title"]
            .as_str()
            .unwrap()
            .contains("systemd gave up on hearth@alice.service"),
        "{body}"
    );
    assert_eq!(body["priority"], 5);
    assert!(
        body["message"].as_str().unwrap().contains("journal"),
        "{body}"
    );
}

#[test]
fn units_keep_the_contract_of_design_12() {
    for source in ["supervisor/hearth.service", "supervisor/hearth@.service"] {
        let text =
            std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(source)).unwrap();
        for line in [
            "Type=notify",
            "Restart=on-failure",
            "RestartSec=5s",
            "RestartPreventExitStatus=2",
            "StartLimitIntervalSec=",
            "StartLimitBurst=",
            "WatchdogSec=",
            "Environment=HOME=/var/lib/hearth",
            "ProtectSystem=strict",
            "NoNewPrivileges=yes",
            "ReadWritePaths=/var/lib/hearth",
        ] {
            assert!(text.contains(line), "{source} lacks {line}");
        }
    }
}
