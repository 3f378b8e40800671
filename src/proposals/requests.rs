//! Requests: calls of tools that act outside the home, made by an exchange
//! that had read content from outside the operator, which therefore did
//! not run (`provenance::gate`). Each waits here for the operator: `hearth
//! proposals` lists it with its arguments, `approve N` runs it once as the
//! operator, `decline N` drops it. The book, `state/requests.json`, is
//! committed at every change, so the history says who asked, on what
//! outside words, and what the operator did.
//!
//! A request runs at most once: it is marked running (and committed)
//! before the tool starts, so a kill in the middle leaves it `running`,
//! never open again.

use crate::mailbox::cause::Cause;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::ProposalError;
use crate::home::layout::rel;
use crate::home::lock::CommitLock;
use crate::home::Home;
use crate::json_file::{self, JsonFile};
use crate::mailbox::outbox::{self, About, Letter};
use crate::repo::{trailers, Identity, Repo};

/// What became of a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ToolRequestState {
    /// Waiting for the operator.
    Open,
    /// Approved from the page: the supervisor runs it at its next look
    /// (the page runs no tool: it holds the page's token).
    Approved,
    /// Approved and started; still so after a kill cut it (whether the
    /// tool finished is then unknown, and it never runs again).
    Running,
    /// Approved, and the tool ran and succeeded.
    Ran,
    /// Approved, and the tool ran and failed (or could not start).
    Failed,
    /// Declined.
    Declined,
}

impl ToolRequestState {
    /// As `hearth proposals` prints it.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolRequestState::Open => "open",
            ToolRequestState::Approved => "approved",
            ToolRequestState::Running => "running",
            ToolRequestState::Ran => "ran",
            ToolRequestState::Failed => "failed",
            ToolRequestState::Declined => "declined",
        }
    }
}

/// What a request asks the operator to allow.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RequestKind {
    /// A call of a tool that acts outside the home.
    #[default]
    Tool,
    /// A collaboration a peer founds here (`[collaborations] founding =
    /// "ask"`): `tool` names it, `file` the peer's handoff, `digest` the
    /// handoff's blob, `arguments` what it says (a peer's words).
    Founding,
}

impl RequestKind {
    fn is_tool(&self) -> bool {
        *self == RequestKind::Tool
    }
}

/// One request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolRequest {
    /// Its number (1, 2, …), what `approve` and `decline` take.
    pub n: u64,
    /// What it asks for (a tool call unless said).
    #[serde(default, skip_serializing_if = "RequestKind::is_tool")]
    pub kind: RequestKind,
    /// The tool, as the model called it.
    pub tool: String,
    /// Its manifest, relative to the home.
    pub file: String,
    /// The manifest's digest when the call was made: an approval runs
    /// only the tool that was asked for.
    pub digest: String,
    /// The arguments, as the model gave them (outside words, shown to the
    /// operator as they are).
    pub arguments: Value,
    /// Where it would run, when not the home (a collaboration's workdir).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workdir: Option<String>,
    /// Who asked: `tick 12`, `ask`.
    pub by: String,
    /// The outside content that made the exchange tainted (`tainted_by`
    /// in books written before one name was kept).
    #[serde(alias = "tainted_by")]
    pub outside: crate::outside::Outside,
    /// When it was asked for.
    pub created: DateTime<Utc>,
    /// What became of it.
    pub status: ToolRequestState,
    /// When it was decided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided: Option<DateTime<Utc>>,
    /// The operator's reason for a decline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// What the tool said when it ran (bounded), or why it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
}

/// What a request is made of before it is recorded.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolRequestDraft {
    /// What it asks for.
    pub kind: RequestKind,
    /// The tool, as the model called it.
    pub tool: String,
    /// Its manifest.
    pub file: String,
    /// The manifest's digest.
    pub digest: String,
    /// The arguments.
    pub arguments: Value,
    /// Where it would run, when not the home.
    pub workdir: Option<String>,
    /// `tick 12`, `ask`.
    pub by: String,
    /// The outside content behind it.
    pub outside: crate::outside::Outside,
}

/// The book.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct RequestBook {
    requests: Vec<ToolRequest>,
}

impl JsonFile for RequestBook {
    const VERSION: u32 = 1;
}

/// The most of a tool's output the book keeps.
const RESULT_MAX: usize = 4000;

fn load(home: &Home) -> Result<RequestBook, ProposalError> {
    Ok(json_file::load(&home.path(rel::REQUESTS))?.unwrap_or_default())
}

fn save_and_commit(
    home: &Home,
    book: &RequestBook,
    who: &Identity,
    message: &str,
    now: DateTime<Utc>,
) -> Result<(), ProposalError> {
    json_file::save(&home.path(rel::REQUESTS), book)?;
    Repo::open(home.root())?.commit(&[rel::REQUESTS], who, message, now)?;
    Ok(())
}

/// Records `draft` as a request, or finds the open one that asks for the
/// same call (the model asking twice makes one request). Returns it, and
/// whether it is new; a new one posts a `request` flare unless one is
/// unread already.
pub fn ask(
    home: &Home,
    draft: ToolRequestDraft,
    now: DateTime<Utc>,
) -> Result<(ToolRequest, bool), ProposalError> {
    let _lock = CommitLock::acquire(home)?;
    let mut book = load(home)?;
    let same = book.requests.iter().find(|r| {
        r.status == ToolRequestState::Open
            && r.tool == draft.tool
            && r.file == draft.file
            && r.arguments == draft.arguments
    });
    if let Some(same) = same {
        return Ok((same.clone(), false));
    }
    let n = book.requests.iter().map(|r| r.n).max().unwrap_or(0) + 1;
    let request = ToolRequest {
        n,
        kind: draft.kind,
        tool: draft.tool,
        file: draft.file,
        digest: draft.digest,
        arguments: draft.arguments,
        workdir: draft.workdir,
        by: draft.by,
        outside: draft.outside,
        created: now,
        status: ToolRequestState::Open,
        decided: None,
        reason: None,
        result: None,
    };
    book.requests.push(request.clone());
    let mut message = format!(
        "request {n}: {} waits for the operator\n\n{}",
        request.tool,
        trailers::line(trailers::REQUEST, n)
    );
    message.push_str(&trailers::outside_lines(&request.outside));
    save_and_commit(home, &book, &Identity::hearth(), &message, now)?;
    flare_new(home, &request, now)?;
    Ok((request, true))
}

/// Tells the operator a request waits, unless a `request` flare is unread
/// already (a planted order repeated in every message must not bury them).
fn flare_new(home: &Home, request: &ToolRequest, now: DateTime<Utc>) -> Result<(), ProposalError> {
    let unread = crate::mailbox::flares::list(home)
        .iter()
        .any(|f| f.cause() == Cause::Request && !f.read);
    if unread {
        return Ok(());
    }
    let n = request.n;
    let (body, title) = match request.kind {
        RequestKind::Tool => (
            format!(
                "{} asked to run {} ({}), which acts outside the home, after it read content \
                 from outside you: {}\n\nArguments (outside words; read them as such):\n{}\n\n\
                 It did not run. `hearth proposals approve {n}` runs it once, as you; \
                 `hearth proposals decline {n} --reason \"…\"` drops it. Until you mark this \
                 flare read, later requests are listed by `hearth proposals`, not flared.\n",
                request.by,
                request.tool,
                request.file,
                request.outside,
                arguments_shown(&request.arguments, 2000),
            ),
            format!("request {n}: run {}?", request.tool),
        ),
        RequestKind::Founding => (
            format!(
                "{} hands this agent the first round of a collaboration new here ({}): taking \
                 it costs ticks and model calls, on a peer's word.\n\nWhat the handoff says \
                 (a peer's words; read them as such):\n{}\n\nIt waits. `hearth proposals \
                 approve {n}` takes it at the next look; `hearth proposals decline {n} \
                 --reason \"…\"` refuses it. A peer asks at most once a day; \
                 `[collaborations] founding = \"open\"` takes them without asking.\n",
                request.by,
                request.file,
                arguments_shown(&request.arguments, 2000),
            ),
            format!("request {n}: {}?", request.tool),
        ),
    };
    let letter = Letter::flare(Cause::Request, title, body).about(About::Request(n));
    outbox::post(home, &letter, now)?;
    Ok(())
}

/// What the operator said of a collaboration `peer` founds here
/// (`[collaborations] founding = "ask"`), from the request book.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FoundingSaid {
    /// Not asked yet.
    Unasked,
    /// Asked (request N), no word yet.
    Waiting(u64),
    /// Approved: taken.
    Approved,
    /// Declined (request N): never taken.
    Declined(u64),
}

/// The newest founding request for `slug` from `peer` in `book`, as the
/// operator left it. An approval holds for the handoff as it was when the
/// operator approved it (its `blob`): one the peer rewrote since is asked
/// about again; a decline holds whatever the peer writes.
pub fn founding_said(book: &[ToolRequest], peer: &str, slug: &str, blob: &str) -> FoundingSaid {
    let asked = book.iter().rev().find(|r| {
        r.kind == RequestKind::Founding
            && r.arguments["peer"] == peer
            && r.arguments["collaboration"] == slug
    });
    let Some(asked) = asked else {
        return FoundingSaid::Unasked;
    };
    match asked.status {
        // A founding is approved by approve_founding, never handed on.
        ToolRequestState::Open | ToolRequestState::Approved => FoundingSaid::Waiting(asked.n),
        ToolRequestState::Ran | ToolRequestState::Running if asked.digest == blob => {
            FoundingSaid::Approved
        }
        ToolRequestState::Ran | ToolRequestState::Running => FoundingSaid::Unasked,
        ToolRequestState::Declined | ToolRequestState::Failed => FoundingSaid::Declined(asked.n),
    }
}

/// Whether `peer` may be asked about another founding at `now`: at most
/// one request a day from each peer, so a peer's flood is one question a
/// day, not a flood of them.
pub fn may_ask_founding(book: &[ToolRequest], peer: &str, now: DateTime<Utc>) -> bool {
    !book.iter().any(|r| {
        r.kind == RequestKind::Founding
            && r.arguments["peer"] == peer
            && now - r.created < chrono::Duration::days(1)
    })
}

/// The arguments as one line of JSON, at most `max` characters.
pub fn arguments_shown(arguments: &Value, max: usize) -> String {
    let text = arguments.to_string();
    if text.chars().count() <= max {
        return text;
    }
    let cut: String = text.chars().take(max.saturating_sub(1)).collect();
    format!("{cut}…")
}

/// Every request, oldest first (none when the book does not exist yet).
pub fn list(home: &Home) -> Result<Vec<ToolRequest>, ProposalError> {
    Ok(load(home)?.requests)
}

/// The open request `n` of `book`, or why it cannot be decided.
fn open_one(book: &RequestBook, n: u64) -> Result<ToolRequest, ProposalError> {
    one_in(book, n, ToolRequestState::Open)
}

/// Request `n` when it is `state`; else why not.
fn one_in(
    book: &RequestBook,
    n: u64,
    state: ToolRequestState,
) -> Result<ToolRequest, ProposalError> {
    let request = book
        .requests
        .iter()
        .find(|r| r.n == n)
        .ok_or(ProposalError::NoRequest(n))?;
    if request.status != state {
        return Err(ProposalError::RequestDecided {
            n,
            status: request.status.as_str(),
        });
    }
    Ok(request.clone())
}

/// Request `n` if it is open (for the approver's checks before anything
/// is marked).
pub fn open(home: &Home, n: u64) -> Result<ToolRequest, ProposalError> {
    open_one(&load(home)?, n)
}

fn decide(
    home: &Home,
    n: u64,
    seen: Option<&str>,
    who: &Identity,
    now: DateTime<Utc>,
    change: impl FnOnce(&mut ToolRequest) -> String,
) -> Result<ToolRequest, ProposalError> {
    decide_from(home, n, ToolRequestState::Open, seen, who, now, change)
}

/// [`decide`], for a request that is `from` now (an approved one the
/// supervisor starts).
fn decide_from(
    home: &Home,
    n: u64,
    from: ToolRequestState,
    seen: Option<&str>,
    who: &Identity,
    now: DateTime<Utc>,
    change: impl FnOnce(&mut ToolRequest) -> String,
) -> Result<ToolRequest, ProposalError> {
    let _lock = CommitLock::acquire(home)?;
    let mut book = load(home)?;
    let mut request = one_in(&book, n, from)?;
    if seen.is_some_and(|seen| seen.is_empty() || seen != request.digest) {
        return Err(ProposalError::NotAsSeen { what: "request", n });
    }
    request.decided = Some(now);
    let message = change(&mut request);
    if let Some(slot) = book.requests.iter_mut().find(|r| r.n == n) {
        *slot = request.clone();
    }
    save_and_commit(home, &book, who, &message, now)?;
    Ok(request)
}

/// Marks open request `n` approved and running, one commit by `who`,
/// before the caller runs the tool. `seen`: the manifest digest the
/// decider was shown, checked under the commit lock.
pub fn begin(
    home: &Home,
    n: u64,
    seen: Option<&str>,
    who: &Identity,
    now: DateTime<Utc>,
) -> Result<ToolRequest, ProposalError> {
    decide(home, n, seen, who, now, running(n))
}

/// Marks request `n` running, and says so in its commit's message.
fn running(n: u64) -> impl FnOnce(&mut ToolRequest) -> String {
    move |r| {
        r.status = ToolRequestState::Running;
        format!(
            "request {n} approved: running {}\n\n{}",
            r.tool,
            trailers::line(trailers::REQUEST, n)
        )
    }
}

/// Approves open request `n` from the page, where no tool runs: one
/// commit by `who`; the supervisor runs it at its next look
/// ([`approved`], [`start_approved`]). `seen`, as for [`begin`].
pub fn approve_for_supervisor(
    home: &Home,
    n: u64,
    seen: Option<&str>,
    who: &Identity,
    now: DateTime<Utc>,
) -> Result<ToolRequest, ProposalError> {
    decide(home, n, seen, who, now, |r| {
        r.status = ToolRequestState::Approved;
        format!(
            "request {n} approved: {} runs at the supervisor's next look\n\n{}",
            r.tool,
            trailers::line(trailers::REQUEST, n)
        )
    })
}

/// The requests approved from the page that wait for the supervisor to
/// run them, oldest first.
pub fn approved(home: &Home) -> Result<Vec<ToolRequest>, ProposalError> {
    Ok(load(home)?
        .requests
        .into_iter()
        .filter(|r| r.status == ToolRequestState::Approved)
        .collect())
}

/// Marks approved request `n` running, one commit by `who`, before the
/// supervisor runs the tool.
pub fn start_approved(
    home: &Home,
    n: u64,
    who: &Identity,
    now: DateTime<Utc>,
) -> Result<ToolRequest, ProposalError> {
    decide_from(
        home,
        n,
        ToolRequestState::Approved,
        None,
        who,
        now,
        running(n),
    )
}

/// Approves the open founding request `n`: one commit by `who`; the
/// supervisor takes the handoff at its next look.
pub fn approve_founding(
    home: &Home,
    n: u64,
    seen: Option<&str>,
    who: &Identity,
    now: DateTime<Utc>,
) -> Result<ToolRequest, ProposalError> {
    decide(home, n, seen, who, now, |r| {
        r.status = ToolRequestState::Ran;
        r.result = Some("approved: the handoff is taken at the supervisor's next look".into());
        format!(
            "request {n} approved: {}\n\n{}",
            r.tool,
            trailers::line(trailers::REQUEST, n)
        )
    })
}

/// Records what the approved request `n`'s run did, one commit by `who`.
pub fn finish(
    home: &Home,
    n: u64,
    outcome: Result<&str, &str>,
    who: &Identity,
    now: DateTime<Utc>,
) -> Result<ToolRequest, ProposalError> {
    let _lock = CommitLock::acquire(home)?;
    let mut book = load(home)?;
    let request = book
        .requests
        .iter_mut()
        .find(|r| r.n == n)
        .ok_or(ProposalError::NoRequest(n))?;
    let (status, said) = match outcome {
        Ok(out) => (ToolRequestState::Ran, out),
        Err(why) => (ToolRequestState::Failed, why),
    };
    request.status = status;
    request.result = Some(if said.chars().count() > RESULT_MAX {
        format!("{}…", said.chars().take(RESULT_MAX).collect::<String>())
    } else {
        said.to_string()
    });
    let message = format!(
        "request {n}: {} {}\n\n{}",
        request.tool,
        status.as_str(),
        trailers::line(trailers::REQUEST, n)
    );
    let request = request.clone();
    save_and_commit(home, &book, who, &message, now)?;
    Ok(request)
}

/// Declines open request `n`, saying why: one commit by `who`. `seen`,
/// as for [`begin`].
pub fn decline(
    home: &Home,
    n: u64,
    seen: Option<&str>,
    reason: Option<&str>,
    who: &Identity,
    now: DateTime<Utc>,
) -> Result<ToolRequest, ProposalError> {
    decide(home, n, seen, who, now, |r| {
        r.status = ToolRequestState::Declined;
        r.reason = reason.map(str::to_string);
        format!(
            "request {n} declined: {}\n\n{}{}",
            r.tool,
            reason.map(|r| format!("{r}\n\n")).unwrap_or_default(),
            trailers::line(trailers::REQUEST, n)
        )
    })
}

/// How many wait for the operator.
pub fn waiting(home: &Home) -> Result<usize, ProposalError> {
    Ok(list(home)?
        .iter()
        .filter(|r| r.status == ToolRequestState::Open)
        .count())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn founding(
        n: u64,
        peer: &str,
        slug: &str,
        blob: &str,
        status: ToolRequestState,
    ) -> ToolRequest {
        ToolRequest {
            n,
            kind: RequestKind::Founding,
            tool: format!("found the collaboration {slug} with {peer}"),
            file: format!("{peer}:outbox/x.md"),
            digest: blob.into(),
            arguments: serde_json::json!({"peer": peer, "collaboration": slug}),
            workdir: None,
            by: format!("peer {peer}"),
            outside: crate::outside::Outside::none(),
            created: DateTime::from_timestamp(1_790_000_000, 0).unwrap(),
            status,
            decided: None,
            reason: None,
            result: None,
        }
    }

    #[test]
    fn a_founding_is_taken_only_as_the_operator_approved_it() {
        let approved = [founding(1, "alice", "x", "b1", ToolRequestState::Ran)];
        assert_eq!(
            founding_said(&approved, "alice", "x", "b1"),
            FoundingSaid::Approved
        );
        // Rewritten by the peer since: asked about again.
        assert_eq!(
            founding_said(&approved, "alice", "x", "b2"),
            FoundingSaid::Unasked
        );
        // Another peer, another collaboration: never asked.
        assert_eq!(
            founding_said(&approved, "mallory", "x", "b1"),
            FoundingSaid::Unasked
        );
        assert_eq!(
            founding_said(&approved, "alice", "y", "b1"),
            FoundingSaid::Unasked
        );
        let declined = [founding(2, "alice", "x", "b1", ToolRequestState::Declined)];
        assert_eq!(
            founding_said(&declined, "alice", "x", "b2"),
            FoundingSaid::Declined(2)
        );
        let open = [founding(3, "alice", "x", "b1", ToolRequestState::Open)];
        assert_eq!(
            founding_said(&open, "alice", "x", "b1"),
            FoundingSaid::Waiting(3)
        );
        let day = chrono::Duration::days(1);
        let asked_at = open[0].created;
        assert!(!may_ask_founding(
            &open,
            "alice",
            asked_at + day - chrono::Duration::seconds(1)
        ));
        assert!(may_ask_founding(&open, "alice", asked_at + day));
        assert!(may_ask_founding(&open, "bob", asked_at));
    }
}
