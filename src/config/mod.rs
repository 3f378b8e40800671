//! `hearth.toml`: the operator's configuration, never written by the agent.
//!
//! Every key is optional and has the default of DESIGN 13. An unknown key is
//! an error that names it, because a typo (`intreval_s`) silently ignored is
//! a setting the operator believes in and does not have.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The configuration's file name, at the home's root.
pub const FILE: &str = "hearth.toml";

pub mod collab;
pub mod consolidation;
mod git;
pub mod jobs;
pub mod mail;
mod model;
pub mod notify;
pub mod prices;
pub mod secret_url;
mod validate;
pub mod web;

pub(crate) use validate::line_of_key;
use validate::Invalid;

pub use git::GitConfig;
pub use model::{ModelConfig, ProviderKind, RerankConfig};

/// A `hearth.toml` that could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("could not read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// The file is not valid TOML, or has a key hearth does not know.
    #[error("{}:{line}:{column}: {message}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// The line, 1-based.
        line: usize,
        /// The column, 1-based.
        column: usize,
        /// What is wrong (unknown keys list the keys expected).
        message: String,
    },
    /// A value hearth cannot use.
    #[error("{}{}: {message}", path.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The line of the key, when it is written in the file.
        line: Option<usize>,
        /// What is wrong.
        message: String,
    },
}

impl ConfigError {
    /// The line of the file the error is on, as written (a password in a
    /// URL masked), for a message that shows it: `2 | interval_s = "30s"`.
    pub fn quoted_line(&self) -> Option<String> {
        let (path, line) = match self {
            ConfigError::Parse { path, line, .. } => (path, *line),
            ConfigError::Invalid {
                path,
                line: Some(line),
                ..
            } => (path, *line),
            _ => return None,
        };
        let text = std::fs::read_to_string(path).ok()?;
        let written = text.lines().nth(line.checked_sub(1)?)?;
        let cut: String = written.chars().take(200).collect();
        Some(format!("{line} | {}", secret_url::masked(&cut)))
    }

    /// What the operator can do about it.
    pub fn hint(&self) -> String {
        match self {
            ConfigError::Read { path, source } => crate::io_hint::io_hint(source, path),
            ConfigError::Parse { path, .. } | ConfigError::Invalid { path, .. } => format!(
                "fix {} (every key is optional; docs/configuration.md lists them)",
                path.display()
            ),
        }
    }
}

/// The whole `hearth.toml`, one field per section.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// `[model]`: the provider of the agent's ticks.
    pub model: ModelConfig,
    /// `[rerank]`: the model that reranks recall's candidates.
    pub rerank: RerankConfig,
    /// `[tick]`: the schedule and bounds of a tick.
    pub tick: TickConfig,
    /// `[healer]`: when to heal, when to give up.
    pub healer: HealerConfig,
    /// `[recovery]`: what a bounded retry may spend.
    pub recovery: RecoveryConfig,
    /// `[ask]`: the shell-side door.
    pub ask: AskConfig,
    /// `[budget]`: the daily spend limit and prices.
    pub budget: BudgetConfig,
    /// `[boot]`: the identity layer.
    pub boot: BootConfig,
    /// `[context]`: the conversation's size.
    pub context: ContextConfig,
    /// `[brake]`: required reading before writing.
    pub brake: BrakeConfig,
    /// `[recall]`: how many candidates and results.
    pub recall: RecallConfig,
    /// `[tools]`: bounds on the agent's tools.
    pub tools: ToolsConfig,
    /// `[git]`: the operator's name, and push.
    pub git: GitConfig,
    /// `[flares]`: what runs on a new flare.
    pub flares: FlaresConfig,
    /// `[metrics]`: where the supervisor writes its metrics.
    pub metrics: MetricsConfig,
    /// `[peers]`: the other homes on this host, by name (read only).
    pub peers: collab::Peers,
    /// `[collaborations]`: where collaborations may work, how long.
    pub collaborations: collab::CollaborationsConfig,
    /// `[consolidation]`: when the agent proposes a consolidation.
    pub consolidation: consolidation::ConsolidationConfig,
    /// `[notify]`: the operator's phone and inbox, and the dead-man ping.
    pub notify: notify::NotifyConfig,
    /// `[jobs]`: when a job that does not do its work is flared.
    pub jobs: jobs::JobsConfig,
    /// `[web]`: where the operator's page is, for the notices' links.
    pub web: web::WebConfig,
    /// `[mail]`: talking with the agent by mail.
    pub mail: mail::MailConfig,
}

/// `[tick]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TickConfig {
    /// Seconds between ticks (an inbox message wakes the agent at once).
    pub interval_s: u64,
    /// A tick running longer is killed and counted as a crash.
    pub timeout_s: u64,
    /// Rounds of tool calls one tick may make.
    pub max_tool_rounds: u32,
    /// Cap on the agent's own `sleep`, in hours.
    pub max_sleep_h: u64,
    /// No tick starts with less room than this (MiB) on the filesystem
    /// that holds the home: its work could not be saved.
    pub min_free_mb: u64,
    /// An idle supervisor whose interval just outlives the provider's
    /// longest cache lifetime (up to 90 minutes) starts ticks early enough
    /// to read the conversation from the cache, when the last tick's
    /// tokens say that is cheaper. Never delays an inbox message.
    pub cache_aware: bool,
}

impl Default for TickConfig {
    fn default() -> Self {
        TickConfig {
            interval_s: 900,
            timeout_s: 600,
            max_tool_rounds: 16,
            max_sleep_h: 24,
            min_free_mb: 64,
            cache_aware: true,
        }
    }
}

/// `[healer]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HealerConfig {
    /// Failed ticks in a row before a heal.
    pub streak: u32,
    /// Heals allowed within `window_h` before panic.
    pub max_heals: u32,
    /// The window heals are counted in, in hours.
    pub window_h: u64,
    /// Minutes between panic flares.
    pub panic_flare_interval_min: u64,
    /// Quiet ticks in a row before a `quiet` flare.
    pub quiet_streak: u32,
    /// After a provider outage, the first wait before the next try; it
    /// doubles per outage in a row up to `outage_backoff_max_ms`.
    pub outage_backoff_ms: u64,
    /// The longest wait after outages in a row.
    pub outage_backoff_max_ms: u64,
    /// Minutes the model API may be unreachable, rate-limited or
    /// overloaded before one `outage` flare says so.
    pub outage_flare_min: u64,
}

impl Default for HealerConfig {
    fn default() -> Self {
        HealerConfig {
            streak: 5,
            max_heals: 3,
            window_h: 24,
            panic_flare_interval_min: 60,
            quiet_streak: 3,
            outage_backoff_ms: 10_000,
            outage_backoff_max_ms: 300_000,
            outage_flare_min: 30,
        }
    }
}

/// `[recovery]`: the bounded retry of DESIGN 7.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RecoveryConfig {
    /// Wall-clock seconds the retry may take.
    pub wall_s: u64,
    /// Tokens the retry may add.
    pub extra_tokens: u64,
}

impl Default for RecoveryConfig {
    fn default() -> Self {
        RecoveryConfig {
            wall_s: 3,
            extra_tokens: 1000,
        }
    }
}

/// `[ask]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AskConfig {
    /// Refresh `state/warm.md` after this many asks.
    pub warm_every: u32,
}

impl Default for AskConfig {
    fn default() -> Self {
        AskConfig { warm_every: 5 }
    }
}

/// `[budget]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BudgetConfig {
    /// 0 means no limit.
    pub daily_usd: f64,
    /// Prices by model name (`[budget.prices."claude-sonnet-4-5"]`).
    pub prices: BTreeMap<String, Price>,
}

impl Default for BudgetConfig {
    fn default() -> Self {
        BudgetConfig {
            daily_usd: 10.0,
            prices: BTreeMap::new(),
        }
    }
}

/// Dollars per million tokens for one model.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Price {
    /// Dollars per million input tokens.
    pub input_per_mtok: f64,
    /// Dollars per million output tokens.
    pub output_per_mtok: f64,
    /// Per million cache reads; none: a tenth of the input price.
    pub cache_read_per_mtok: Option<f64>,
    /// Per million cache writes with the 5-minute lifetime (or the
    /// provider's only one); none: 1.25 times the input price.
    pub cache_write_per_mtok: Option<f64>,
    /// Per million cache writes with the 1-hour lifetime; none: 2 times
    /// the input price (Anthropic's rule).
    pub cache_write_1h_per_mtok: Option<f64>,
}

/// `[boot]`: the identity layer (DESIGN 4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BootConfig {
    /// Tags that make a memory part of the identity layer.
    pub identity_tags: Vec<String>,
    /// The most characters of one identity memory.
    pub memory_cap_chars: usize,
    /// The most characters of the whole identity layer.
    pub identity_budget_chars: usize,
}

impl Default for BootConfig {
    fn default() -> Self {
        BootConfig {
            identity_tags: vec!["identity".into(), "facet:identity".into()],
            memory_cap_chars: 5000,
            identity_budget_chars: 40000,
        }
    }
}

/// The tick's context (DESIGN 5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ContextConfig {
    /// Past this many (estimated) tokens, the oldest turns of
    /// `state/messages.json` move to `state/archive/`.
    pub history_tokens: u64,
}

impl Default for ContextConfig {
    fn default() -> Self {
        ContextConfig {
            history_tokens: 60_000,
        }
    }
}

/// What the brake does (DESIGN 8).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BrakeMode {
    /// Nothing.
    Off,
    /// Log writes made before the required reads.
    #[default]
    Warn,
    /// Refuse them.
    Enforce,
}

/// `[brake]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BrakeConfig {
    /// Off, warn or enforce.
    pub mode: BrakeMode,
    /// Memories the operator requires reading before any write.
    pub must_read: Vec<String>,
}

/// `[recall]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RecallConfig {
    /// Lexical candidates the rerank chooses from.
    pub candidates: usize,
    /// Results shown.
    pub results: usize,
}

impl Default for RecallConfig {
    fn default() -> Self {
        RecallConfig {
            candidates: 20,
            results: 3,
        }
    }
}

/// Bounds on what the agent's tools may do in one go: a runaway model must
/// not fill the disk or spin through thousands of calls in one turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ToolsConfig {
    /// The largest file `write`, `append`, `edit` or `journal` may leave.
    pub max_write_bytes: u64,
    /// The most tool calls one model turn may make; the rest are refused.
    pub max_calls_per_turn: usize,
}

impl Default for ToolsConfig {
    fn default() -> Self {
        ToolsConfig {
            max_write_bytes: 1024 * 1024,
            max_calls_per_turn: 32,
        }
    }
}

/// `[flares]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FlaresConfig {
    /// Run with the flare's path on each new flare; empty: nothing runs.
    pub exec: String,
    /// The variables of hearth's environment `exec` gets, besides
    /// [`crate::process::ALWAYS_PASSED`]: a webhook's token, say. Nothing
    /// else crosses (never the model's key unless named here).
    pub env: Vec<String>,
    /// `"none"` runs `exec` outside the tool sandbox (`crate::jail`);
    /// left out, it runs inside.
    pub sandbox: Option<String>,
    /// Whether `exec` may reach the network (a notice it posts).
    pub network: bool,
    /// Absolute paths outside the home `exec` may write.
    pub write: Vec<String>,
    /// Absolute paths `exec` may read besides the system and the home.
    pub read: Vec<String>,
}

impl FlaresConfig {
    /// What `hearth trust` trusts of it: the command, and that it runs
    /// unsandboxed when it does — so saying `sandbox = "none"` is trusted
    /// anew, never taken on the old word.
    pub fn trusted_text(&self) -> String {
        match self.sandbox.as_deref() {
            Some("none") if !self.exec.trim().is_empty() => {
                format!("{}\n[flares] sandbox = \"none\"", self.exec)
            }
            _ => self.exec.clone(),
        }
    }
}

/// `[metrics]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MetricsConfig {
    /// The file the supervisor writes its metrics to after every tick, in
    /// the Prometheus text format (for node_exporter's textfile collector:
    /// an absolute path ending in `.prom` in its
    /// `--collector.textfile.directory`); empty: none.
    pub textfile: String,
}

impl Config {
    /// Reads and validates `path`. A missing file is the all-defaults config:
    /// a home works with zero configuration.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Config::default()),
            Err(source) => {
                return Err(ConfigError::Read {
                    path: path.to_path_buf(),
                    source,
                })
            }
        };
        Config::parse(path, &text)
    }

    /// Parses `text` as the contents of `path` (named in every error).
    pub fn parse(path: &Path, text: &str) -> Result<Config, ConfigError> {
        let config: Config = toml::from_str(text).map_err(|e| {
            let (line, column) = e
                .span()
                .map(|span| line_and_column(text, span.start))
                .unwrap_or((1, 1));
            let mut message = e.message().trim().to_string();
            // toml says "duplicate key" and points at it: name it (a
            // table header, `[tick]` twice, is a duplicate table).
            let header = e
                .span()
                .and_then(|span| text.get(span.start.saturating_sub(1)..))
                .and_then(|rest| rest.lines().next())
                .map(str::trim)
                .filter(|l| l.starts_with('[') && l.ends_with(']'));
            if let (true, Some(header)) = (message.starts_with("duplicate key"), header) {
                message = format!("duplicate table `{header}` (each table once; merge the two)");
            } else if message.starts_with("duplicate key") {
                let key = e
                    .span()
                    .and_then(|span| text.get(span.start..))
                    .and_then(|rest| rest.split(['=', '\n']).next())
                    .map(|k| k.trim().trim_matches(['"', '\'']))
                    .filter(|k| !k.is_empty());
                if let Some(key) = key {
                    message = format!("duplicate key `{key}` (each key once per table)");
                }
            }
            ConfigError::Parse {
                path: path.to_path_buf(),
                line,
                column,
                message,
            }
        })?;
        config.validate().map_err(|e| ConfigError::Invalid {
            path: path.to_path_buf(),
            line: line_of_key(text, e.table, &e.key),
            message: e.message,
        })?;
        Ok(config)
    }

    /// The agent's model's context window: `[model] context_tokens`, else
    /// what hearth knows of the model, else 200,000.
    pub fn context_window(&self) -> u64 {
        if self.model.context_tokens > 0 {
            return self.model.context_tokens;
        }
        prices::context_window(&self.model.model).unwrap_or(200_000)
    }

    /// What the agent's model costs: `[budget.prices."MODEL"]`, else the
    /// shipped table, else nothing for the offline model or one served on
    /// this host (a loopback `base_url`). `None`: unknown.
    pub fn price(&self) -> Option<Price> {
        self.price_of(&self.model)
    }

    /// What `model` (the agent's, or the rerank's) costs, by the same
    /// rules as [`Config::price`].
    pub fn price_of(&self, model: &ModelConfig) -> Option<Price> {
        if let Some(price) = self.budget.prices.get(&model.model) {
            return Some(price.clone());
        }
        if let Some(price) = prices::shipped(&model.model) {
            return Some(price);
        }
        let free = model.provider == ProviderKind::Offline || prices::is_loopback(&model.base_url);
        free.then(Price::default)
    }
}

fn line_and_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.len() - before.rfind('\n').map(|i| i + 1).unwrap_or(0) + 1;
    (line, column)
}

#[cfg(test)]
mod tests;
