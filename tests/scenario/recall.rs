//! Recall through the library: the same answer `hearth recall` prints,
//! cited uncommitted until the lines are committed, then by commit and
//! author.

use hearth::config::Config;
use hearth::home::Home;
use hearth::recall::answer::{answer, Answer, RecallQuestion, Rerank};
use hearth::repo::{Identity, Repo};

use super::{home, now};

#[test]
fn an_answer_cites_lines_and_who_committed_them() {
    let dir = tempfile::tempdir().unwrap();
    let home = home(&dir);
    std::fs::write(
        home.root().join("memory/birds.md"),
        "# Birds\n\nThe crow is clever.\n\nA heron waits\nby the river.\n",
    )
    .unwrap();
    let question = RecallQuestion {
        query: "heron river",
        k: 1,
        candidates: 10,
        rerank: Rerank::Skip("a test"),
        walk: false,
    };
    let before = answer(&home, &question).unwrap();
    assert_eq!(before.order, "lexical");
    assert_eq!(
        before.results[0].citation,
        "memory/birds.md:5-6@uncommitted"
    );

    let repo = Repo::open(home.root()).unwrap();
    let operator = Identity::operator(&Config::default().git);
    let commit = repo
        .commit(&["memory"], &operator, "birds", now())
        .unwrap()
        .unwrap();
    let after = answer(&home, &question).unwrap();
    let found = &after.results[0];
    assert_eq!(
        found.citation,
        format!("memory/birds.md:5-6@{}", found.commit)
    );
    assert!(
        commit.starts_with(&found.commit),
        "{commit} vs {}",
        found.commit
    );
    assert_eq!(found.by, "operator");
    assert!(after
        .render()
        .starts_with("(lexical) 1 result(s) for \"heron river\"\n1. memory/birds.md:5-6@"));
}

/// What `hearth recall --json -k 5 QUERY` answers, through the library.
fn recall(home: &Home, query: &str) -> Answer {
    answer(
        home,
        &RecallQuestion {
            query,
            k: 5,
            candidates: 30,
            rerank: Rerank::Skip("a test"),
            walk: false,
        },
    )
    .unwrap()
}

fn paths(found: &Answer) -> Vec<&str> {
    found.results.iter().map(|r| r.path.as_str()).collect()
}

#[test]
fn an_edit_without_a_supervisor_is_seen_by_the_next_recall() {
    let dir = tempfile::tempdir().unwrap();
    let home = home(&dir);
    std::fs::write(home.path("memory/notes.md"), "the walrus sings\n").unwrap();
    assert_eq!(paths(&recall(&home, "walrus")), ["memory/notes.md"]);
    std::fs::write(home.path("memory/notes.md"), "the pelican sings\n").unwrap();
    assert!(recall(&home, "walrus").results.is_empty());
    assert_eq!(paths(&recall(&home, "pelican")), ["memory/notes.md"]);
    std::fs::remove_file(home.path("memory/notes.md")).unwrap();
    let gone = recall(&home, "pelican");
    assert!(gone.results.is_empty());
    assert!(gone.render().contains("nothing relevant"));
}

#[test]
fn a_file_of_invalid_utf8_is_named_and_skipped_and_the_others_are_found() {
    let dir = tempfile::tempdir().unwrap();
    let home = home(&dir);
    std::fs::write(home.path("memory/bad.md"), b"line one\nflamingo \xff\xfe\n").unwrap();
    std::fs::write(
        home.path("memory/good.md"),
        b"a flamingo stands on one leg\n",
    )
    .unwrap();
    let found = recall(&home, "flamingo");
    assert_eq!(paths(&found), ["memory/good.md"]);
    assert!(
        found
            .skipped
            .iter()
            .any(|s| s.contains("memory/bad.md:2: not valid UTF-8")),
        "{:?}",
        found.skipped
    );
}

#[test]
fn a_corrupt_index_is_rebuilt_not_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let home = home(&dir);
    std::fs::write(home.path("memory/n.md"), "otters hold hands\n").unwrap();
    recall(&home, "otters");
    std::fs::write(home.path(".hearth/index/meta.json"), "{ not json").unwrap();
    assert_eq!(paths(&recall(&home, "otters")), ["memory/n.md"]);
}

#[test]
fn many_small_edits_keep_the_index_compact() {
    let dir = tempfile::tempdir().unwrap();
    let home = home(&dir);
    for i in 0..30 {
        std::fs::write(
            home.path(&format!("memory/n{}.md", i % 4)),
            format!("walrus note {i}\n\nthe tide was {i} metres\n"),
        )
        .unwrap();
        let found = recall(&home, "walrus");
        assert!(found.skipped.is_empty(), "edit {i}: {:?}", found.skipped);
    }
    let meta: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(home.path(".hearth/index/meta.json")).unwrap(),
    )
    .unwrap();
    let segments = meta["segments"].as_array().unwrap().len();
    assert!(segments <= 10, "{segments} segments after 30 edits");
    assert_eq!(
        recall(&home, "tide metres 29").results[0].excerpt,
        "the tide was 29 metres"
    );
}

#[test]
fn a_line_a_person_speaks_ranks_above_a_line_that_only_names_them() {
    use hearth::recall::index::{RecallIndex, Weights};
    let dir = tempfile::tempdir().unwrap();
    let home = home(&dir);
    std::fs::write(
        home.path("memory/harbour.md"),
        "# Harbour log\n\n\
         Tom: gulls again, Ingrid.\n\n\
         Ingrid: the gulls took bread from my hand on the pier this morning.\n\n\
         Tom: the ferry was late.\n",
    )
    .unwrap();
    let mut index = RecallIndex::open(&home).unwrap();
    index.reconcile(&home).unwrap();
    let first =
        |index: &RecallIndex| index.search("what about Ingrid and the gulls?", 3).unwrap()[0].start;
    assert_eq!(first(&index), 5, "Ingrid's own line, by its label");
    index.weights = Weights {
        subject: 0.0,
        ..Weights::default()
    };
    assert_eq!(
        first(&index),
        3,
        "without the label's weight the shorter line that names her wins"
    );
}

#[test]
fn a_question_that_asks_for_a_list_gathers_what_its_person_said_across_files() {
    use hearth::recall::index::{RecallIndex, Weights};
    let dir = tempfile::tempdir().unwrap();
    let home = home(&dir);
    let week = |n: usize, lines: &[&str]| {
        std::fs::write(
            home.path(&format!("memory/week{n}.md")),
            format!("# Week {n}\n\n{}\n", lines.join("\n\n")),
        )
        .unwrap();
    };
    week(
        1,
        &[
            "Tom: so many hobbies these days, Ingrid, I can't keep up with my hobbies.",
            "Ingrid: pottery on Tuesdays keeps me sane.",
            "Tom: the ferry was late again.",
        ],
    );
    week(
        2,
        &[
            "Tom: the harbour smelled of diesel.",
            "Ingrid: went sailing with my brother on Sunday.",
            "Tom: hobbies cost money, Ingrid.",
        ],
    );
    week(3, &["Tom: rain all week.", "Tom: the gulls are back."]);
    let mut index = RecallIndex::open(&home).unwrap();
    index.reconcile(&home).unwrap();
    let top = |index: &RecallIndex| -> Vec<String> {
        index
            .search("What hobbies does Ingrid have?", 2)
            .unwrap()
            .into_iter()
            .map(|h| h.text)
            .collect()
    };
    let found = top(&index);
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(
        found.iter().all(|t| t.starts_with("Ingrid:")),
        "her own lines, from two files: {found:?}"
    );
    index.weights = Weights {
        list_subject: Weights::default().subject,
        ..Weights::default()
    };
    let found = top(&index);
    assert!(
        found.iter().any(|t| t.starts_with("Tom:")),
        "with one subject weight for every question the lines that repeat the word win: {found:?}"
    );
}
