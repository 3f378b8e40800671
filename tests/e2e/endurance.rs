//! Months unattended: the history is packed as it grows and stays whole.

use crate::common::TestHome;

/// `git count-objects -v` as numbers.
fn count_objects(home: &TestHome) -> std::collections::HashMap<String, u64> {
    let out = home.git(&["count-objects", "-v"]);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(": ")?;
            Some((k.to_string(), v.trim().parse().ok()?))
        })
        .collect()
}

#[test]
fn the_history_is_packed_as_it_grows_and_nothing_is_lost() {
    let home = TestHome::with_config("[git]\npack_loose = 40\npack_max_packs = 3\n");
    home.ok(&["init"]);
    let mut log = String::new();
    for n in 0..6 {
        std::fs::write(home.file(&format!("inbox/{n}.md")), format!("note {n}\n")).unwrap();
        std::fs::write(
            home.file("memory/journal.md"),
            format!("# Journal\n\nentry {n}\n"),
        )
        .unwrap();
        let out = home.ok_with_env(&["run", "--ticks", "15"], &[]);
        log.push_str(&String::from_utf8_lossy(&out.stderr));
    }
    assert!(log.contains("packed the history"), "{log}");
    assert!(log.contains("one full pack"), "past 3 packs, one: {log}");
    let counts = count_objects(&home);
    assert!(
        counts["count"] < 40 + 20,
        "loose objects are packed once 40 pile up: {counts:?}"
    );
    assert!(counts["packs"] <= 3, "{counts:?}");
    let fsck = home.git(&["fsck", "--strict", "--no-dangling"]);
    assert!(
        fsck.status.success(),
        "{}",
        String::from_utf8_lossy(&fsck.stderr)
    );
    // Every tick and every hand edit is still in the history, readable.
    assert_eq!(home.ticks().len(), 90);
    let commits = home.history();
    assert_eq!(
        commits
            .iter()
            .filter(|c| c.summary.starts_with("tick "))
            .count(),
        90
    );
    assert_eq!(
        commits
            .iter()
            .filter(|c| c.author == "operator" && c.files.iter().any(|f| f == "memory/journal.md"))
            .count(),
        6
    );
    let first = home.git(&["log", "--reverse", "--format=%H", "--", "memory/journal.md"]);
    let first = String::from_utf8_lossy(&first.stdout)
        .lines()
        .next()
        .unwrap()
        .to_string();
    let show = home.git(&["show", &format!("{first}:memory/journal.md")]);
    assert_eq!(
        String::from_utf8_lossy(&show.stdout),
        "# Journal\n\nentry 0\n"
    );
    assert!(home.git(&["status", "--porcelain"]).stdout.is_empty());
}

/// A reflog line's time: "<old> <new> <name> <email> <seconds> <zone>\tmessage".
fn reflog_secs(line: &str) -> i64 {
    let head = line.split_once('\t').unwrap().0;
    let fields: Vec<&str> = head.split(' ').collect();
    fields[fields.len() - 2].parse().unwrap()
}

#[test]
fn reflog_entries_older_than_ninety_days_expire_when_the_history_is_packed() {
    let home = TestHome::with_config("[git]\npack_loose = 40\n");
    home.ok(&["init"]);
    home.ok(&["run", "--ticks", "3"]);
    // Age every entry so far by 100 days, as if written long ago: the
    // line ends "<seconds> <zone>\tmessage".
    let logs = [
        "HEAD".to_string(),
        format!(
            "refs/heads/{}",
            String::from_utf8_lossy(&home.git(&["branch", "--show-current"]).stdout).trim()
        ),
    ];
    let aged = |text: &str| {
        text.lines()
            .map(|line| {
                let (head, message) = line.split_once('\t').unwrap();
                let mut fields: Vec<String> = head.split(' ').map(String::from).collect();
                let at = fields.len() - 2;
                let secs: i64 = fields[at].parse().unwrap();
                fields[at] = (secs - 100 * 86_400).to_string();
                format!("{}\t{message}\n", fields.join(" "))
            })
            .collect::<String>()
    };
    let mut old = 0;
    let mut newest_aged = i64::MIN;
    for log in &logs {
        let path = home.file(&format!(".git/logs/{log}"));
        let text = aged(&std::fs::read_to_string(&path).unwrap());
        old += text.lines().count();
        newest_aged = newest_aged.max(text.lines().map(reflog_secs).max().unwrap());
        std::fs::write(&path, text).unwrap();
    }
    assert!(old >= 6, "{old}");

    let out = home.ok_with_env(&["run", "--ticks", "20"], &[]);
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(
        log.contains(&format!("expired {old} reflog entries older than 90 days")),
        "{log}"
    );
    for name in &logs {
        let text = std::fs::read_to_string(home.file(&format!(".git/logs/{name}"))).unwrap();
        assert!(!text.is_empty(), "{name}");
        let oldest_kept = text.lines().map(reflog_secs).min().unwrap();
        assert!(
            oldest_kept > newest_aged,
            "{name}: an aged entry is left: {text}"
        );
    }
    // The newer entries stay: `git reflog` still walks back through them.
    let reflog = home.git(&["reflog", "--format=%gs"]);
    let kept = String::from_utf8_lossy(&reflog.stdout).lines().count();
    assert!(kept >= 20, "{kept}");
    let fsck = home.git(&["fsck", "--strict", "--no-dangling"]);
    assert!(fsck.status.success());
}

#[test]
fn a_clone_of_the_home_continues_with_the_next_tick_and_answers_nothing_twice() {
    let home = TestHome::with_config("");
    std::fs::write(
        home.file("memory/harbour.md"),
        "# Harbour\n\nThe harbour master is Ines.\n",
    )
    .unwrap();
    home.ok(&["say", "who runs the harbour?"]);
    home.ok(&["say", "and the lighthouse?"]);
    home.ok(&["run", "--ticks", "3"]);
    let answered = home.list("outbox").len();
    assert!(answered >= 1, "the first home answered");

    // Restore is one command: clone the history, run hearth on it.
    let copy = home.path.with_file_name("restored");
    let clone = std::process::Command::new("git")
        .args(["clone", "--quiet"])
        .arg(&home.path)
        .arg(&copy)
        .output()
        .unwrap();
    assert!(clone.status.success(), "{clone:?}");
    let restored = TestHome::at(&copy);
    restored.ok(&["run", "--ticks", "1"]);
    let ticks = restored.ticks();
    assert_eq!(ticks.last().unwrap()["tick"], 4, "numbering continues");
    assert!(
        ticks.last().unwrap().get("inbox").is_none(),
        "old messages are not answered again: {}",
        ticks.last().unwrap()
    );
    assert_eq!(restored.list("outbox").len(), answered, "no second answer");
    let found = restored.ok(&["recall", "--no-rerank", "harbour master"]);
    assert!(
        found.contains("memory/harbour.md:3"),
        "index rebuilt: {found}"
    );
    assert!(restored.git(&["status", "--porcelain"]).stdout.is_empty());
}

/// With the memory watcher up, the hand-edit commit looks only at the
/// memory files it names (and everything outside `memory/`): every kind of
/// edit still lands in a commit — in place, by rename, a directory moved,
/// a file deleted, a new file at the top of the home, a deleted one — and
/// edits made while no supervisor ran are found by the first, full look.
#[test]
fn hand_edits_land_in_commits_when_the_watcher_chooses_what_to_look_at() {
    use std::time::Duration;
    let home = crate::common::TestHome::with_config("[tick]\ninterval_s = 1\n");
    std::fs::create_dir_all(home.file("memory/birds")).unwrap();
    std::fs::write(home.file("memory/birds/wren.md"), "# Wren\n").unwrap();
    std::fs::write(home.file("memory/gone.md"), "# Soon gone\n").unwrap();
    std::fs::write(home.file("NOTES.txt"), "top-level notes\n").unwrap();
    home.ok(&["run", "--ticks", "1"]);
    let committed = |home: &crate::common::TestHome| {
        let out = home.git(&["ls-tree", "-r", "--name-only", "HEAD"]);
        String::from_utf8(out.stdout).unwrap()
    };
    let at_head = |home: &crate::common::TestHome, rel: &str| {
        let out = home.git(&["show", &format!("HEAD:{rel}")]);
        String::from_utf8(out.stdout).unwrap()
    };

    // While no supervisor runs.
    std::fs::write(home.file("memory/birds/wren.md"), "# Wren\n\nsings loud\n").unwrap();
    let supervisor = home.spawn(&["run"]);
    home.wait_for(Duration::from_secs(10), "the offline edit", || {
        at_head(&home, "memory/birds/wren.md").contains("sings loud")
    });

    // While it runs.
    std::fs::write(home.file("memory/new.md"), "# New\n").unwrap();
    std::fs::write(home.file("memory/.birds.swp"), "# swap\n").unwrap();
    std::fs::rename(home.file("memory/.birds.swp"), home.file("memory/saved.md")).unwrap();
    std::fs::rename(home.file("memory/birds"), home.file("memory/fowl")).unwrap();
    std::fs::remove_file(home.file("memory/gone.md")).unwrap();
    std::fs::write(home.file("TODO.txt"), "a new top-level file\n").unwrap();
    std::fs::remove_file(home.file("NOTES.txt")).unwrap();
    home.wait_for(Duration::from_secs(15), "every edit committed", || {
        let files = committed(&home);
        files.contains("memory/new.md\n")
            && files.contains("memory/saved.md\n")
            && files.contains("memory/fowl/wren.md\n")
            && !files.contains("memory/birds/")
            && !files.contains("memory/gone.md\n")
            && files.contains("TODO.txt\n")
            && !files.contains("NOTES.txt\n")
    });
    assert!(crate::common::finish_after_term(supervisor).success());
    let status = home.git(&["status", "--porcelain"]);
    assert_eq!(
        String::from_utf8_lossy(&status.stdout),
        "",
        "nothing left behind"
    );
}
