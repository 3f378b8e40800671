//! Where the identity's lines came from: for `hearth audit`, each line of
//! an identity-class memory whose ancestry touches outside content (its
//! commit's `Hearth-Outside` chain; for older commits the tick's ledger
//! line), lines accepted from a proposal made after outside content, and
//! lines that only read like planted rules; and for every door (a tick, an
//! ask), the judgment of the system blocks it is about to show. One
//! judgment, here: the doors call it, neither writes its own.
//!
//! The tick's ledger is not this room's to read (it is the exchange's
//! record, a layer up): the caller hands over what it says of older ticks
//! ([`TaintedTicks`]), and a door only when a line may need it.

use std::collections::BTreeMap;

use crate::config::Config;
use crate::home::layout::rel;
use crate::home::Home;
use crate::outside::Outside;
use crate::provenance;
use crate::repo::Repo;

/// What each tick that read outside content read, by tick number, as the
/// tick's ledger says: the account of commits made before hearth kept
/// `Hearth-Outside` trailers.
pub type TaintedTicks = BTreeMap<u64, Outside>;

/// Identity-class lines that came from an exchange which had read content
/// from outside (its commit's trailers, its ledger line in `tainted_ticks`,
/// or the accepted proposal, says so), and lines that read like planted
/// rules.
pub fn outside_lines(
    home: &Home,
    config: &Config,
    tainted_ticks: &TaintedTicks,
) -> Vec<provenance::Finding> {
    let tainted_proposals: BTreeMap<u64, Outside> = crate::proposals::list(home)
        .unwrap_or_else(|e| {
            tracing::warn!("{e}; lines from accepted proposals are not traced");
            Vec::new()
        })
        .into_iter()
        .filter(|p| !p.outside.is_empty())
        .map(|p| (p.n, p.outside))
        .collect();
    let repo = provenance::origins::open_repo(home);
    let vouched = provenance::vouch::Vouched::load_or_none(home);
    let mut found = Vec::new();
    let memory = home.path(rel::MEMORY);
    let mut files: Vec<_> = walkdir::WalkDir::new(&memory)
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file() && e.path().extension().is_some_and(|x| x == "md"))
        .map(|e| e.into_path())
        .collect();
    files.sort();
    for path in files {
        let rel = home.relative(&path);
        // Decoded as boot decodes it for the model (U+FFFD for bytes that
        // are not UTF-8): a file the model is shown is judged, never passed
        // over. One that cannot be read at all is shown as nothing.
        let Ok(bytes) = std::fs::read(&path) else {
            continue;
        };
        let text = String::from_utf8_lossy(&bytes).into_owned();
        // Judged where the words live: a symlink's target is read there.
        if path.is_symlink()
            || !provenance::identity_class(&rel, Some(&text), &text, &config.brake.must_read)
        {
            continue;
        }
        let origins = match repo.as_ref().map(|r| r.line_origins_on_disk(&rel)) {
            Ok(Ok(origins)) => origins,
            // Closed world: lines whose history cannot be read are not
            // shown as the operator's.
            Ok(Err(e)) => {
                found.extend(provenance::audit::unproven_lines(
                    &rel,
                    &text,
                    &e.to_string(),
                ));
                continue;
            }
            Err(e) => {
                found.extend(provenance::audit::unproven_lines(
                    &rel,
                    &text,
                    &e.to_string(),
                ));
                continue;
            }
        };
        found.extend(provenance::audit_lines(
            &rel,
            &text,
            &origins,
            tainted_ticks,
            &tainted_proposals,
            &vouched,
        ));
    }
    found
}

/// Judges the system blocks a door is about to show (the prompt and the
/// identity layer, assembled [`crate::model::SystemBlock::unjudged`]): each
/// block's mark becomes what [`of_system`] finds — nothing, when every line
/// is proven the operator's — and that is returned, for a door that
/// records it before the model is called (a tick killed midway is
/// committed as outside; the exchange takes the marks from the blocks).
pub fn judge_system(
    home: &Home,
    config: &Config,
    system: &mut [crate::model::SystemBlock],
    tainted_ticks: impl FnOnce() -> TaintedTicks,
) -> Outside {
    let found = of_system(home, config, system, tainted_ticks);
    for block in system {
        block.outside = found.clone();
    }
    found
}

/// What the system blocks (the prompt and the identity layer) carry from
/// outside, one source per named line: an identity-class line whose
/// ancestry is outside and that no accept or vouching cleared (one that
/// reached identity before hearth kept trailers, or past a gate since
/// mended). The exchange that is shown it is outside from its start.
/// Closed world: a history that cannot be read proves nothing, and says so.
/// The walk (and `tainted_ticks`) is paid only when a line of the blocks
/// has the words of a line an outside exchange once added.
pub fn of_system(
    home: &Home,
    config: &Config,
    system: &[crate::model::SystemBlock],
    tainted_ticks: impl FnOnce() -> TaintedTicks,
) -> Outside {
    let unproven = |why: String| {
        Outside::of(format!(
            "the identity layer (its origin could not be proven: {why})"
        ))
    };
    let words = match Repo::open(home.root()).map(|repo| repo.outside_words()) {
        Ok(Ok(words)) => words,
        Ok(Err(e)) => return unproven(e.to_string()),
        Err(e) => return unproven(e.to_string()),
    };
    let may_hold = system.iter().flat_map(|b| b.text.lines()).any(|line| {
        line.chars().any(char::is_alphanumeric)
            && words.lines.contains(&crate::repo::line_digest(line))
    });
    if !may_hold {
        return Outside::none();
    }
    outside_lines(home, config, &tainted_ticks())
        .into_iter()
        .filter(|f| f.kind == provenance::audit::FindingKind::Ancestry)
        .map(|f| format!("the identity layer: {}", f.why))
        .collect()
}

/// Where the lines of `memory/directive.md` came from, for a door that
/// quotes it (a tick's turn, an ask's mission tier): a source when any
/// line is outside and nobody vouched for it; an unreadable history is a
/// source too (closed world).
pub fn of_directive(home: &Home, vouched: &provenance::vouch::Vouched) -> Option<String> {
    provenance::origins::of_file(home, rel::DIRECTIVE, None, vouched)
}
