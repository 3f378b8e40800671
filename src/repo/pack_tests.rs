//! Tests of `repo/pack.rs`.

#![allow(clippy::disallowed_methods)] // fixtures, not state

use super::*;
use crate::repo::Identity;

fn now() -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::from_timestamp(1_700_000_000, 0).unwrap()
}

fn no_lock() -> Result<(), RepoError> {
    Ok(())
}

#[test]
fn a_pack_left_without_its_index_by_a_kill_is_removed_at_the_next_pack() {
    let dir = tempfile::tempdir().unwrap();
    let repo = Repo::init(dir.path()).unwrap();
    std::fs::write(dir.path().join("f.md"), "x\n").unwrap();
    repo.commit(&["."], &Identity::hearth(), "c", now())
        .unwrap();
    let pack_dir = dir.path().join(".git/objects/pack");
    std::fs::create_dir_all(&pack_dir).unwrap();
    let orphan = pack_dir.join(format!("pack-{}.pack", "a".repeat(40)));
    let fresh = pack_dir.join(format!("pack-{}.pack", "b".repeat(40)));
    std::fs::write(&orphan, vec![0u8; 685]).unwrap();
    std::fs::write(&fresh, vec![0u8; 10]).unwrap();
    let old = crate::clock::file_time_now() - std::time::Duration::from_secs(7200);
    std::fs::File::options()
        .write(true)
        .open(&orphan)
        .unwrap()
        .set_modified(old)
        .unwrap();
    repo.pack(false, &repo.loose_objects(), no_lock).unwrap();
    assert!(!orphan.exists(), "the orphan is gone");
    assert!(fresh.exists(), "a pack maybe being written is left");
    assert!(!repo.packs().is_empty(), "the real pack is installed");
}

#[test]
fn a_large_limit_is_judged_by_a_sample_and_still_packs_a_real_pile() {
    let dir = tempfile::tempdir().unwrap();
    let repo = Repo::init(dir.path()).unwrap();
    let policy = PackPolicy {
        loose_max: 1000,
        packs_max: 50,
    };
    // 400 loose objects (blobs, trees, commits): the sample says
    // "nowhere near", and nothing is read or packed.
    let mut n = 0;
    while repo.loose_objects().len() < 400 {
        n += 1;
        std::fs::write(dir.path().join("f.md"), format!("{n}\n")).unwrap();
        repo.commit(&["."], &Identity::hearth(), "c", now())
            .unwrap();
    }
    assert_eq!(
        repo.pack_if_due(policy, no_lock).unwrap(),
        Packed::default()
    );
    while repo.loose_objects().len() < 1600 {
        n += 1;
        std::fs::write(dir.path().join("f.md"), format!("{n}\n")).unwrap();
        repo.commit(&["."], &Identity::hearth(), "c", now())
            .unwrap();
    }
    let exact = repo.loose_objects().len();
    let estimate = repo.loose_estimate();
    assert!(
        estimate * 2 > exact && estimate < exact * 2,
        "a sample of 16 directories: {estimate} for {exact}"
    );
    let packed = repo.pack_if_due(policy, no_lock).unwrap();
    assert!(packed.objects >= exact, "{packed:?} for {exact} loose");
    assert!(repo.loose_objects().is_empty());
}

fn pack_bytes(dir: &std::path::Path) -> u64 {
    std::fs::read_dir(dir.join(".git/objects/pack"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "pack"))
        .map(|e| e.metadata().unwrap().len())
        .sum()
}

#[test]
fn a_full_repack_is_as_small_as_the_incremental_packs_it_replaces() {
    let dir = tempfile::tempdir().unwrap();
    let repo = Repo::init(dir.path()).unwrap();
    // Like state/messages.json under [context] history_tokens: a window
    // that slides, so every version is about the same size.
    let line = |n: usize| {
        format!(
            "turn {n}: the keeper logged the tide at {} and the wind {}\n",
            n * 7 % 24,
            n * 13 % 360
        )
    };
    for n in 0..640usize {
        let text: String = (n.saturating_sub(150)..=n).map(line).collect();
        std::fs::write(dir.path().join("messages.json"), text).unwrap();
        repo.commit(&["."], &Identity::hearth(), "tick", now())
            .unwrap();
        if n % 64 == 63 {
            repo.pack(false, &repo.loose_objects(), no_lock).unwrap();
        }
    }
    let incremental = pack_bytes(dir.path());
    let done = repo.pack(true, &repo.loose_objects(), no_lock).unwrap();
    assert!(done.full && done.packs_removed >= 10, "{done:?}");
    let full = pack_bytes(dir.path());
    // Without eras: 210,578 B for 171,134 B of incremental packs here
    // (and 104 MB for 17 MB on a real home of 8,500 ticks).
    assert!(
        full * 10 < incremental * 11,
        "the full pack ({full} B) must not be larger than the incremental ones ({incremental} B)"
    );
}
