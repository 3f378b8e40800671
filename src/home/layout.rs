//! The home as one map (DESIGN §2): every path hearth reads or writes, named
//! once. [`rel`] holds them as git and the ledgers name them (relative,
//! `/`-separated); [`Home`]'s methods give them as paths on disk. Code
//! elsewhere names a file of the home through these; what it still spells
//! itself is a prefix it tests (`memory/` in a path the agent wrote) and
//! the fixtures of its tests.

use std::path::PathBuf;

use super::Home;

/// The home's paths, relative to its root, as git names them.
pub mod rel {
    /// The operator's configuration; never written by the agent.
    pub const CONFIG: &str = crate::config::FILE;
    /// Markdown memory.
    pub const MEMORY: &str = "memory";
    /// The architectural layer: operator-owned, loaded in full every tick.
    pub const PROMPT: &str = "memory/prompt.md";
    /// The identity layer the agent curates, loaded in full every tick.
    pub const IDENTITY: &str = "memory/identity.md";
    /// What the agent is working on now (read into mission turns).
    pub const DIRECTIVE: &str = "memory/directive.md";
    /// The agent's state files.
    pub const STATE: &str = "state";
    /// The running conversation the model sees.
    pub const MESSAGES: &str = "state/messages.json";
    /// One JSON line per finished tick.
    pub const TICKS: &str = "state/ticks.jsonl";
    /// Failure streak, heals, panic.
    pub const HEALER: &str = "state/healer.json";
    /// Left by a heal, consumed by the next tick.
    pub const HEALER_NOTE: &str = "state/healer_note.json";
    /// The operator's word on outside lines (`hearth vouch`).
    pub const VOUCHED: &str = "state/vouched.json";
    /// Spend per UTC day.
    pub const BUDGET: &str = "state/budget.json";
    /// Which flares the operator has read.
    pub const FLARES_READ: &str = "state/flares_read.json";
    /// How far the operator has read the thread (`/talk`).
    pub const TALK_READ: &str = "state/talk_read.json";
    /// Conversation turns moved out of `messages.json`.
    pub const ARCHIVE: &str = "state/archive";
    /// Inbox messages the agent has read.
    pub const INBOX_ARCHIVE: &str = "state/inbox-archive";
    /// Operator → agent.
    pub const INBOX: &str = "inbox";
    /// Agent → operator: letters and flares.
    pub const OUTBOX: &str = "outbox";
    /// Never committed: index, locks, runtime files.
    pub const RUNTIME: &str = ".hearth";
    /// The journals of asks in progress (`ask::journal`), which
    /// `provenance` reads too: what a tainted ask wrote and has not
    /// committed yet is outside.
    pub const ASKS: &str = ".hearth/asks";
    /// What was said through either door (`hearth ask` and ticks).
    pub const SESSIONS: &str = "state/sessions.jsonl";
    /// When the identity memory was last consolidated, and how it ended.
    pub const CONSOLIDATION: &str = "state/consolidation.json";
    /// Proposals and what became of them (`hearth proposals`).
    pub const PROPOSALS: &str = "state/proposals.json";
    /// Calls of acting tools that wait for the operator (`proposals::requests`).
    pub const REQUESTS: &str = "state/requests.json";
    /// The peers' handoffs taken into this home, one JSON line each.
    pub const HANDOFFS: &str = "state/handoffs.jsonl";
    /// Model calls made outside ticks and asks (recall's rerank from the
    /// shell), one JSON line each with its cost.
    pub const CALLS: &str = "state/calls.jsonl";
    /// The warm digest `hearth ask` injects (at most 800 characters).
    pub const WARM: &str = "state/warm.md";
    /// Where `hearth jobs run NAME` asks a running supervisor for a run:
    /// an empty file per job, taken at the next turn.
    pub const JOB_REQUESTS: &str = ".hearth/job-requests";
    /// Changes with every event under `memory/` while a supervisor runs.
    pub const MEMORY_SEQ: &str = ".hearth/memory-seq";
    /// What the last pushes did (`[git] push`), for `hearth status`.
    pub const PUSH_STATE: &str = ".hearth/push.json";
    /// The mirrors of peers on other hosts (`NAME.git`, bare) and what
    /// their last fetches said (`NAME.json`).
    pub const PEER_MIRRORS: &str = ".hearth/peers";
    /// The boot assembled under a memory sequence token, for `hearth ask`.
    pub const BOOT_SNAPSHOT: &str = ".hearth/boot-snapshot.json";
    /// Every decision of the brake, one JSON line each; never rewound.
    pub const BRAKE_LOG: &str = "state/brake.jsonl";
    /// The operator's brake override (under `.hearth/`: no tool reaches it).
    pub const BRAKE_OVERRIDE: &str = ".hearth/brake-override.json";
    /// Operator-defined tools, one manifest each.
    pub const TOOLS: &str = "tools";
    /// Operator-defined jobs, one manifest each (DESIGN 19).
    pub const JOBS: &str = "jobs";
    /// The jobs' execution ledger.
    pub const JOB_RUNS: &str = "state/jobs.jsonl";
    /// Its full segments, rotated out whole.
    pub const JOB_SEGMENTS: &str = "state/jobs";
    /// When a supervisor first saw each job.
    pub const JOBS_SEEN: &str = "state/jobs-seen.json";
    /// What the operator trusted to run (digests), never committed.
    pub const TRUST: &str = ".hearth/trust.json";
    /// One record per collaboration this agent takes part in (DESIGN 14).
    pub const COLLABORATIONS: &str = "collaborations";
}

impl Home {
    /// `rel` (one of [`rel`]'s, or below one) as a path on disk.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.root().join(rel)
    }
    /// The mirror of peer `name` on another host (`.hearth/peers/NAME.git`).
    pub fn peer_mirror(&self, name: &str) -> PathBuf {
        self.path(rel::PEER_MIRRORS).join(format!("{name}.git"))
    }

    /// `hearth.toml`.
    pub fn config_path(&self) -> PathBuf {
        self.path(rel::CONFIG)
    }
    /// `memory/`.
    pub fn memory_dir(&self) -> PathBuf {
        self.path(rel::MEMORY)
    }
    /// `memory/directive.md`.
    pub fn directive_path(&self) -> PathBuf {
        self.path(rel::DIRECTIVE)
    }
    /// `state/`.
    pub fn state_dir(&self) -> PathBuf {
        self.path(rel::STATE)
    }
    /// `state/messages.json`.
    pub fn messages_path(&self) -> PathBuf {
        self.path(rel::MESSAGES)
    }
    /// `state/ticks.jsonl`.
    pub fn ticks_path(&self) -> PathBuf {
        self.path(rel::TICKS)
    }
    /// `state/healer.json`.
    pub fn healer_path(&self) -> PathBuf {
        self.path(rel::HEALER)
    }
    /// `state/healer_note.json`.
    pub fn healer_note_path(&self) -> PathBuf {
        self.path(rel::HEALER_NOTE)
    }
    /// `state/budget.json`.
    pub fn budget_path(&self) -> PathBuf {
        self.path(rel::BUDGET)
    }
    /// `state/flares_read.json`.
    pub fn flares_read_path(&self) -> PathBuf {
        self.path(rel::FLARES_READ)
    }
    /// `state/archive/`.
    pub fn archive_dir(&self) -> PathBuf {
        self.path(rel::ARCHIVE)
    }
    /// `state/inbox-archive/`.
    pub fn inbox_archive_dir(&self) -> PathBuf {
        self.path(rel::INBOX_ARCHIVE)
    }
    /// `inbox/`.
    pub fn inbox_dir(&self) -> PathBuf {
        self.path(rel::INBOX)
    }
    /// `outbox/`.
    pub fn outbox_dir(&self) -> PathBuf {
        self.path(rel::OUTBOX)
    }
    /// `.hearth/`: never committed; locks and runtime files.
    pub fn runtime_dir(&self) -> PathBuf {
        self.path(rel::RUNTIME)
    }
    /// `.hearth/index/`: the recall index (a cache of the files).
    pub fn index_dir(&self) -> PathBuf {
        self.runtime_dir().join("index")
    }
    /// `.hearth/index.lock`: held while the index is built or updated.
    pub fn index_lock_path(&self) -> PathBuf {
        self.runtime_dir().join("index.lock")
    }
    /// `.hearth/run.lock`: one supervisor per home.
    pub fn run_lock_path(&self) -> PathBuf {
        self.runtime_dir().join("run.lock")
    }
    /// `.hearth/ask.lock`: held (shared) by each `hearth ask`, so the
    /// supervisor leaves what it writes to its own commit.
    pub fn ask_lock_path(&self) -> PathBuf {
        self.runtime_dir().join("ask.lock")
    }
    /// `.hearth/ask-gate.lock`: closed by a supervisor waiting to look
    /// for hand edits, so asks starting meanwhile wait their turn.
    pub fn ask_gate_path(&self) -> PathBuf {
        self.runtime_dir().join("ask-gate.lock")
    }
    /// `.hearth/commit.lock`: one committer at a time.
    pub fn commit_lock_path(&self) -> PathBuf {
        self.runtime_dir().join("commit.lock")
    }
    /// `.hearth/supervisor.json`: what the supervisor is doing, for status.
    pub fn supervisor_state_path(&self) -> PathBuf {
        self.runtime_dir().join("supervisor.json")
    }
    /// `.hearth/tick.json`: the tick in progress, for crash recovery.
    pub fn tick_marker_path(&self) -> PathBuf {
        self.runtime_dir().join("tick.json")
    }
    /// `.hearth/tick-report.json`: the running tick's report.
    pub fn tick_report_path(&self) -> PathBuf {
        self.runtime_dir().join("tick-report.json")
    }
    /// `.hearth/core-scan.json`: the boot's cache of core-memory scans.
    pub fn core_scan_path(&self) -> PathBuf {
        self.runtime_dir().join("core-scan.json")
    }
    /// `.hearth/last-stop.json`: when and why the supervisor last stopped.
    pub fn last_stop_path(&self) -> PathBuf {
        self.runtime_dir().join("last-stop.json")
    }
}
