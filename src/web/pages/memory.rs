//! `/memory/`, `/memory/PATH`, `/recall?q=`: the memory read-only — the
//! files, one file line by line with who wrote each line and which came
//! from outside (`view::memory`), and a search as `hearth recall` makes
//! it, each hit cited `path:line@commit` and linked to its line.

use super::{in_link, Frame};
use crate::home::Home;
use crate::view::memory::{self, WrittenBy};
use maud::{html, Markup};

/// The page of the memory file `path` (`memory/a b.md`), under `frame`.
fn link(frame: &Frame, path: &str) -> String {
    frame.to(&format!("/{}", in_link(path)))
}

/// `/memory/`: every file under `memory/`, linked.
pub fn memory(frame: &Frame, home: &Home) -> Markup {
    let (files, more) = memory::list(home);
    let body = html! {
        @if files.is_empty() { p { "memory/ holds no file." } }
        table {
            @for f in &files {
                tr {
                    td { a href=(link(frame, &f.path)) { code { (f.path) } } }
                    td { (f.bytes) " bytes" }
                }
            }
        }
        @if more > 0 { p class="attention" { (more) " more files are not listed." } }
    };
    frame.page("memory", body)
}

/// `/memory/PATH`: one file, each line with its citation and who wrote
/// it; outside lines marked with why. `None`: not a memory file.
pub fn memory_file(frame: &Frame, home: &Home, path: &str) -> Option<Markup> {
    let vouched = crate::provenance::vouch::Vouched::load_or_none(home);
    let file = match memory::file(home, path, &vouched) {
        Ok(file) => file,
        Err(memory::NotShown::Unreadable { path, source }) => {
            let body = html! { p class="trouble" { (path) ": " (source.to_string()) } };
            return Some(frame.page(&path, body));
        }
        Err(_) => return None,
    };
    let outside = file.lines.iter().filter(|l| l.outside.is_some()).count();
    let body = html! {
        p {
            (file.lines.len()) " lines; "
            @if outside == 0 { "none from outside." } @else { span class="attention" { (outside) " from outside (marked)." } }
        }
        @if let Some(why) = &file.unproven { p class="trouble" { "Who wrote these lines cannot be told (" (why) "): every line counts as outside." } }
        @if file.not_utf8 { p class="attention" { "This file is not valid UTF-8: bytes that are not are shown as �." } }
        table class="lines" {
            @for line in &file.lines {
                tr id=(format!("L{}", line.n)) class=[line.outside.as_ref().map(|_| "outside")] {
                    td { a href=(format!("#L{}", line.n)) { small { (line.citation(&file.path)) } } }
                    td { code { (line.text) } }
                    td {
                        small {
                            @match &line.written {
                                WrittenBy::Uncommitted => "not committed yet",
                                WrittenBy::Tick { n, .. } => { "the agent, " a href=(frame.to(&format!("/ticks/{n}"))) { "tick " (n) } },
                                WrittenBy::Proposal { n, .. } => { "proposal " (n) ", accepted" },
                                WrittenBy::By { author, .. } => (author),
                                WrittenBy::Unknown => "cannot tell",
                            }
                            @if let Some(chain) = &line.outside { br; span class="attention" { "outside: " (chain) } }
                        }
                    }
                }
            }
        }
        @if file.left_out > 0 { p class="attention" { (file.left_out) " more bytes are not shown." } }
    };
    Some(frame.page(&file.path, body))
}

/// `/recall?q=…`: the memory searched as `hearth recall --no-rerank`
/// does (the same index, the same citations). A page's GET spends
/// nothing and commits nothing, so the model's rerank — a paid call on
/// the ledger — stays with `hearth recall` on the server.
pub fn recall(frame: &Frame, home: &Home, query: &str) -> Markup {
    use crate::recall::answer::{answer, RecallQuestion, Rerank};
    let config = crate::config::Config::load(&home.config_path()).unwrap_or_default();
    let found = (!query.trim().is_empty()).then(|| {
        answer(
            home,
            &RecallQuestion {
                query,
                k: config.recall.results.max(1),
                candidates: config.recall.candidates,
                rerank: Rerank::Skip("the page spends nothing: `hearth recall` reranks"),
                walk: false,
            },
        )
    });
    let body = html! {
        form method="get" action=(frame.to("/recall")) {
            input type="search" name="q" value=(query) aria-label="words to look for";
            " " button type="submit" { "Recall" }
        }
        @match &found {
            None => p { "Words to look for in the memory, as " code { "hearth recall" } " does." },
            Some(Err(e)) => p class="trouble" { (e.to_string()) },
            Some(Ok(answer)) => {
                @if let Some(why) = &answer.lexical_because { p { small { "In the index's order: " (why) "." } } }
                @if answer.results.is_empty() { p { "Nothing in the memory matches." } }
                @for hit in &answer.results {
                    @let to = if hit.path.starts_with("memory/") { Some(format!("{}#L{}", link(frame, &hit.path), hit.start)) } else { None };
                    h2 {
                        @match &to { Some(to) => a href=(to) { code { (hit.citation) } }, None => code { (hit.citation) } }
                        " " small { (hit.by) }
                    }
                    @if !hit.heading.is_empty() { p { strong { (hit.heading) } } }
                    pre { code { (hit.excerpt) } }
                    @if !hit.note.is_empty() { p class="attention" { small { (hit.note) } } }
                }
                @for skipped in &answer.skipped { p class="attention" { small { (skipped) } } }
            }
        }
    };
    frame.page("recall", body)
}
