//! hearth keeps one LLM agent alive, one tick at a time, in a git repository
//! of plain files (the *home*). The library does the work; `src/main.rs` and
//! `src/cli/` are the only places that talk to the terminal, read the
//! environment or ask the system for the time, so every piece here can be
//! driven from a test with a path and a clock.
//!
//! Data flows home → boot → context → model → tools → commit, and every
//! module imports only from the layers below it (`scripts/layers.py` checks;
//! the binary's `cli` sits on top of them all):
//!
//! | layer | module | owns |
//! |---|---|---|
//! | 1 | [`supervisor`] | the long-running loop around ticks, systemd, status, commits of ticks and hand edits |
//! | 2 | [`healer`], [`ask`] | failure streaks, heals from the last good commit, panic, quiet failures, core-memory validation; `hearth ask`, the shell-side door (hot and warm memory, tiers) |
//! | 3 | [`tick`] | one tick, the door the supervisor opens: prepare (context assembly, the healer's note), the ledger |
//! | 3½ | [`exchange`] | one exchange under both doors: the budget gate, the tier table, the pure step, the driver, the report, exit classes, cost |
//! | 4 | [`tools`], [`brake`] | the built-in and operator tools, the path sandbox, trust; the brake's decisions and its log |
//! | 5 | [`boot`], [`recall`] | the identity layer and its audit; the index, rerank and cited answers |
//! | 6 | [`model`] | the provider seam, Anthropic, OpenAI-compatible, offline |
//! | 7 | [`conversation`] | the message format, `state/messages.json`, the archives |
//! | 8 | [`mailbox`] | inbox, outbox and flares |
//! | 9 | [`memory`] | memory files and their front matter |
//! | 10 | [`budget`] | the spend ledger |
//! | 11 | [`home`] | the home's layout (every path of DESIGN §2), discovery, `init`, locks |
//! | 12 | [`repo`] | every git operation (git2 stays inside this module) |
//! | 13 | [`config`], [`atomic`], [`json_file`], [`stamp`], [`clock`], [`process`] | `hearth.toml`; the one atomic write; hearth's own versioned JSON files; change stamps; the one source of "now"; process groups |

pub mod ask;
pub mod atomic;
pub mod boot;
pub mod bounded;
pub mod brake;
pub mod budget;
pub mod clock;
pub mod collab;
pub mod config;
pub mod conversation;
pub mod exchange;
pub mod healer;
pub mod home;
pub mod json_file;
pub mod mailbox;
pub mod memory;
pub mod model;
pub mod process;
pub mod recall;
pub mod repo;
pub mod stamp;
pub mod supervisor;
pub mod tick;
pub mod tools;
