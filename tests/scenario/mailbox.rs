//! The inbox, the flares and the conversation file through the library,
//! with the bad input a hand-edited home gets: invalid UTF-8, a huge
//! message, an editor's temp file, a broken `messages.json`.

use hearth::conversation::store::Conversation;
use hearth::conversation::{Block, Message, Role};
use hearth::mailbox::{flares, inbox, outbox};
use hearth::repo::{Identity, Repo};

use super::{home, now};

#[test]
fn a_message_of_invalid_utf8_is_read_with_a_note_and_archived_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let home = home(&dir);
    let bytes = b"caf\xe9 at noon?\n".to_vec();
    std::fs::write(home.path("inbox/latin1.md"), &bytes).unwrap();
    let pending = inbox::pending(&home).unwrap();
    assert_eq!(pending.len(), 1);
    let message = inbox::read(&home, &pending[0]).unwrap();
    assert!(message.text.contains("at noon?"), "{}", message.text);
    assert!(
        message.notes.iter().any(|n| n.contains("UTF-8")),
        "{:?}",
        message.notes
    );
    let archived = inbox::archive(&home, &message.rel).unwrap();
    assert_eq!(std::fs::read(home.path(&archived)).unwrap(), bytes);
    assert!(inbox::pending(&home).unwrap().is_empty());
}

#[test]
fn a_huge_message_is_cut_and_says_so_and_editor_files_are_not_messages() {
    let dir = tempfile::tempdir().unwrap();
    let home = home(&dir);
    let huge = "word ".repeat(100_000);
    std::fs::write(home.path("inbox/huge.md"), &huge).unwrap();
    std::fs::write(home.path("inbox/.huge.md.swp"), "vim's").unwrap();
    std::fs::write(home.path("inbox/notes.md~"), "a backup").unwrap();
    let pending = inbox::pending(&home).unwrap();
    assert_eq!(pending.len(), 1, "{pending:?}");
    let message = inbox::read(&home, &pending[0]).unwrap();
    assert!(
        message.text.len() <= inbox::MAX_MESSAGE_BYTES + 200,
        "{}",
        message.text.len()
    );
    assert!(!message.notes.is_empty(), "cut, and said");
    assert_eq!(message.size, huge.len() as u64);
}

#[test]
fn a_flare_is_unread_until_acknowledged() {
    let dir = tempfile::tempdir().unwrap();
    let home = home(&dir);
    let posted = outbox::post(
        &home,
        &outbox::Letter::flare(hearth::mailbox::cause::Cause::Gap, "a gap", "body\n"),
        now(),
    )
    .unwrap();
    let unread: Vec<_> = flares::list(&home)
        .into_iter()
        .filter(|f| !f.read)
        .collect();
    assert_eq!(unread.len(), 1);
    assert_eq!(unread[0].path, posted);
    let acked = flares::ack(&home, &[unread[0].id.clone()]).unwrap();
    assert_eq!(acked.len(), 1);
    assert!(flares::list(&home).iter().all(|f| f.read));
    assert!(flares::ack(&home, &["no-such-flare".into()]).is_err());

    // A unique prefix is enough; one that starts two ids says which.
    let later = now() + chrono::Duration::seconds(1);
    let second = outbox::post(
        &home,
        &outbox::Letter::flare(hearth::mailbox::cause::Cause::Gap, "b", "b\n"),
        later,
    )
    .unwrap();
    let third = outbox::post(
        &home,
        &outbox::Letter::flare(hearth::mailbox::cause::Cause::Push, "c", "c\n"),
        later + chrono::Duration::seconds(1),
    )
    .unwrap();
    let id = |rel: &str| {
        rel.trim_start_matches("outbox/")
            .trim_end_matches(".md")
            .to_string()
    };
    let (second, third) = (id(&second), id(&third));
    let common: String = second
        .chars()
        .zip(third.chars())
        .take_while(|(a, b)| a == b)
        .map(|(a, _)| a)
        .collect();
    let ambiguous = flares::ack(&home, std::slice::from_ref(&common))
        .unwrap_err()
        .to_string();
    assert!(ambiguous.contains("is the start of 2 ids"), "{ambiguous}");
    let unique = &third[..common.len() + 1];
    assert_eq!(flares::ack(&home, &[unique.to_string()]).unwrap(), [third]);
}

#[test]
fn a_broken_messages_json_is_read_from_its_last_committed_copy_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let home = home(&dir);
    let mut good = Conversation::new();
    good.messages.push(Message {
        outside: hearth::outside::Outside::none(),
        role: Role::User,
        content: vec![Block::Text {
            text: "remember the lamp".into(),
        }],
    });
    good.save(&home).unwrap();
    let repo = Repo::open(home.root()).unwrap();
    repo.commit(
        &["state"],
        &Identity::hearth(),
        "tick 1: exit 0 (ok)",
        now(),
    )
    .unwrap();
    std::fs::write(
        home.messages_path(),
        "{ \"version\": 1, \"messages\": [ oops",
    )
    .unwrap();
    let (read, broken) = Conversation::read(&home, Some(&repo)).unwrap();
    let broken = broken.expect("named as broken");
    assert!(
        broken.problem.starts_with("state/messages.json:1: "),
        "{}",
        broken.problem
    );
    assert!(broken.restored_from.is_some());
    assert_eq!(read.messages, good.messages);
    assert_eq!(broken.bytes, b"{ \"version\": 1, \"messages\": [ oops");
    // Without history it starts empty, and still says so.
    let (empty, broken) = Conversation::read(&home, None).unwrap();
    assert!(empty.messages.is_empty() && broken.unwrap().restored_from.is_none());
}
