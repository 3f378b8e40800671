//! Recall through the library: the same answer `hearth recall` prints,
//! cited uncommitted until the lines are committed, then by commit and
//! author.

use hearth::config::Config;
use hearth::recall::answer::{answer, Question, Rerank};
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
    let question = Question {
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
