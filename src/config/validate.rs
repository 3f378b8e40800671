//! What `hearth.toml` may not say even when it parses: values hearth
//! cannot use, named with the line they are written on.

use std::path::Path;

use super::{collab, Config, ProviderKind};

impl Config {
    /// The first value hearth cannot use, if any.
    pub(super) fn validate(&self) -> Result<(), Invalid> {
        if let Some(problem) = self.web.problem() {
            return Err(Invalid::at("web", "url", problem));
        }
        if let Some(problem) = self.mail.problem() {
            return Err(Invalid::at("mail", "imap", problem));
        }
        let textfile = &self.metrics.textfile;
        if !textfile.is_empty() && !Path::new(textfile).is_absolute() {
            // Inside the home it would be committed as a hand edit every tick.
            return Err(Invalid::at(
                "metrics",
                "textfile",
                format!(
                    "[metrics] textfile = \"{textfile}\" must be an absolute path outside the \
                     home, e.g. /var/lib/prometheus/node-exporter/hearth.prom"
                ),
            ));
        }
        let at_least = |table: &'static str, key: &str, value: u64, least: u64| {
            (value < least).then(|| {
                Invalid::at(
                    table,
                    key,
                    format!("[{table}] {key} must be at least {least}"),
                )
            })
        };
        let checks = [
            // 0 would tick back to back, a paid model call each, until the
            // cap stops it (`hearth run --interval 0` still does, asked for
            // at a terminal).
            at_least("tick", "interval_s", self.tick.interval_s, 1),
            at_least("tick", "timeout_s", self.tick.timeout_s, 1),
            at_least("model", "timeout_s", self.model.timeout_s, 1),
            at_least(
                "context",
                "history_tokens",
                self.context.history_tokens,
                1000,
            ),
        ];
        if let Some(invalid) = checks.into_iter().flatten().next() {
            return Err(invalid);
        }
        collab::validate(&self.peers, &self.collaborations)?;
        self.validate_notify()?;
        if let Some(invalid) = at_least("healer", "streak", u64::from(self.healer.streak), 1) {
            return Err(invalid);
        }
        if self.budget.daily_usd < 0.0 || !self.budget.daily_usd.is_finite() {
            return Err(Invalid::at(
                "budget",
                "daily_usd",
                "[budget] daily_usd must be 0 (no limit) or more",
            ));
        }
        if self.budget.daily_usd > 0.0
            && self.model.provider != ProviderKind::Offline
            && self.price().is_none()
        {
            return Err(Invalid::at(
                "budget",
                "daily_usd",
                format!(
                "hearth does not know the price of the model \"{model}\", so [budget] daily_usd \
                 cannot bound its spend; add its price per million tokens:\n\n    \
                 [budget.prices.\"{model}\"]\n    input_per_mtok = …\n    output_per_mtok = …\n\n\
                 or set [budget] daily_usd = 0 to run it without a limit",
                model = self.model.model
            ),
            ));
        }
        Ok(())
    }
}

impl Config {
    /// `[notify]`'s URLs are http(s) and carry no password (the file is
    /// committed: a token belongs in the environment).
    fn validate_notify(&self) -> Result<(), Invalid> {
        let n = &self.notify;
        for (key, url) in [
            ("ntfy", &n.ntfy),
            ("webhook", &n.webhook),
            ("ping", &n.ping),
        ] {
            if url.is_empty() {
                continue;
            }
            if !(url.starts_with("https://") || url.starts_with("http://")) {
                return Err(Invalid::at(
                    "notify",
                    key,
                    format!("[notify] {key} must be an http:// or https:// URL"),
                ));
            }
            if super::secret_url::holds_password(url) {
                return Err(Invalid::at(
                    "notify",
                    key,
                    format!(
                        "[notify] {key} carries a password, and hearth.toml is committed; put \
                         the token in the environment ({})",
                        match key {
                            "ntfy" => format!("[notify] ntfy_token_env = {:?}", n.ntfy_token_env),
                            "webhook" => format!(
                                "the webhook signs with [notify] webhook_secret_env = {:?}",
                                n.webhook_secret_env
                            ),
                            _ => "a ping URL's secret is its path".into(),
                        }
                    ),
                ));
            }
        }
        if !n.email.is_empty() && (!n.email.contains('@') || n.email.contains(['\n', '\r'])) {
            return Err(Invalid::at(
                "notify",
                "email",
                "[notify] email must be one address, like ops@example.com",
            ));
        }
        Ok(())
    }
}

/// A value hearth cannot use: the key it is under, and what is wrong.
#[derive(Debug)]
pub(crate) struct Invalid {
    pub(super) table: &'static str,
    pub(super) key: String,
    pub(super) message: String,
}

impl Invalid {
    pub(crate) fn at(table: &'static str, key: &str, message: impl Into<String>) -> Invalid {
        Invalid {
            table,
            key: key.to_string(),
            message: message.into(),
        }
    }
}

/// The line `key = …` is written on under `[table]` (or `table.key` at the
/// top; with `table` empty, a top-level key or a `[key]` table), 1-based;
/// `None` when the value is a default, not written. Any TOML file's.
pub(crate) fn line_of_key(text: &str, table: &str, key: &str) -> Option<usize> {
    let mut current = String::new();
    let dotted = format!("{table}.{key}");
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if let Some(header) = line.strip_prefix('[') {
            current = header
                .trim_start_matches('[')
                .split(']')
                .next()
                .unwrap_or("")
                .trim()
                .to_string();
            if table.is_empty() && current == key {
                return Some(i + 1);
            }
            continue;
        }
        let Some((name, _)) = line.split_once('=') else {
            continue;
        };
        let name = name.trim().trim_matches('"');
        if (current == table && name == key) || (current.is_empty() && name == dotted) {
            return Some(i + 1);
        }
    }
    None
}
