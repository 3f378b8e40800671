//! The warm digest, `state/warm.md` (at most [`MAX_CHARS`] characters): what
//! matters across past sessions — recurring topics, corrections the
//! operator made, preferences learned. Refreshed after every `[ask]
//! warm_every` asks by one bounded model call, or extractively (the
//! offline provider, or when the call fails), and committed with the ask.

use std::collections::BTreeMap;

use super::Question;
use crate::config::{Config, ProviderKind};
use crate::conversation::sessions::{self, SessionExchange};
use crate::conversation::{Block, Message, Role};
use crate::exchange::{cost_usd, ExchangeError};
use crate::home::layout::rel;
use crate::home::Home;
use crate::model::{self, Request};

/// The most the digest holds.
pub const MAX_CHARS: usize = 800;
/// How many recent exchanges it is made from.
const SOURCE: usize = 20;

/// Words that open a correction.
const CORRECTIONS: &[&str] = &[
    "no,",
    "no ",
    "actually",
    "that's wrong",
    "not quite",
    "wrong",
];
/// Words that state a preference.
const PREFERENCES: &[&str] = &[
    "i prefer",
    "please always",
    "always ",
    "never ",
    "don't ",
    "do not ",
];

/// A fresh digest when this ask, whose answer is `answer_line`, is the
/// `[ask] warm_every`th: by one model call (what it cost is returned), or
/// extractively (offline, or when the call fails: it costs nothing).
/// `None`: not this ask. Exchanges that carried outside words stay out.
/// Nothing is written: the caller writes it ([`write`]) under the commit
/// lock, once it knows the ask is still its own to finish.
pub(super) fn make(
    home: &Home,
    config: &Config,
    question: &Question,
    answer_line: &sessions::Line,
) -> Option<(String, f64)> {
    let mut lines = sessions::read(home);
    lines.push(answer_line.clone());
    let asks = lines.iter().filter(|l| l.kind == "question").count();
    if asks % config.ask.warm_every.max(1) as usize != 0 {
        return None;
    }
    let exchanges = super::outside::clean(sessions::exchanges(&lines));
    let (fresh, cost) = match config.model.provider {
        ProviderKind::Offline => (None, 0.0),
        _ => {
            let (fresh, usage) = summarise(config, question.api_key.as_deref(), &exchanges);
            (fresh, cost_usd(&usage, config.price().as_ref()))
        }
    };
    Some((fresh.unwrap_or_else(|| extract(&exchanges)), cost))
}

/// Writes the digest `make` made.
pub(super) fn write(home: &Home, digest: &str) -> Result<(), ExchangeError> {
    crate::atomic::write(&home.path(rel::WARM), digest.as_bytes())?;
    Ok(())
}

/// The digest without a model: the most frequent topic words of the
/// operator's recent questions, and their corrections and preferences
/// quoted, cut to [`MAX_CHARS`].
pub fn extract(exchanges: &[SessionExchange]) -> String {
    let recent = &exchanges[exchanges.len().saturating_sub(SOURCE)..];
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut corrections = Vec::new();
    let mut preferences = Vec::new();
    for x in recent {
        let asked = x.asked.trim();
        let lower = asked.to_lowercase();
        for word in lower.split(|c: char| !c.is_alphanumeric()) {
            if word.chars().count() >= 5 {
                *counts.entry(word.to_string()).or_default() += 1;
            }
        }
        let quote = || asked.chars().take(120).collect::<String>();
        if CORRECTIONS.iter().any(|w| lower.starts_with(w)) {
            corrections.push(quote());
        } else if PREFERENCES.iter().any(|w| lower.contains(w)) {
            preferences.push(quote());
        }
    }
    let mut topics: Vec<(String, usize)> = counts.into_iter().filter(|(_, n)| *n > 1).collect();
    topics.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut out = String::from("# Warm digest\n");
    if !topics.is_empty() {
        let words: Vec<String> = topics
            .iter()
            .take(8)
            .map(|(w, n)| format!("{w} ({n})"))
            .collect();
        out.push_str(&format!("\nRecurring topics: {}.\n", words.join(", ")));
    }
    for (title, items) in [("Corrections", &corrections), ("Preferences", &preferences)] {
        if !items.is_empty() {
            out.push_str(&format!("\n{title}:\n"));
            for item in items.iter().rev().take(4) {
                out.push_str(&format!("- {item}\n"));
            }
        }
    }
    if topics.is_empty() && corrections.is_empty() && preferences.is_empty() {
        out.push_str(&format!(
            "\n{} recent exchanges; nothing recurs yet.\n",
            recent.len()
        ));
    }
    cut(&out)
}

/// The digest from one bounded call to the agent's model, and what the
/// call used (it is paid for whether or not its text is kept); no digest
/// if the call fails (the caller falls back to [`extract`]).
pub fn summarise(
    config: &Config,
    api_key: Option<&str>,
    exchanges: &[SessionExchange],
) -> (Option<String>, model::Usage) {
    let recent = &exchanges[exchanges.len().saturating_sub(SOURCE)..];
    let Ok(mut provider) = model::provider_for(&config.model, api_key) else {
        return (None, model::Usage::default());
    };
    let prompt = format!(
        "Below are the latest exchanges between an operator and their agent. Write the agent's \
         warm digest: at most {MAX_CHARS} characters of markdown saying what matters across \
         sessions — recurring topics, corrections the operator made, preferences learned. \
         Only the digest, no preamble.\n\n{}",
        sessions::render(recent)
    );
    let messages = [Message {
        outside: crate::outside::Outside::none(),
        role: Role::User,
        content: vec![Block::Text { text: prompt }],
    }];
    let request = Request {
        system: &[],
        messages: &messages,
        tools: &[],
        max_tokens: 400,
        facts: None,
        cache: None,
        cache_key: None,
    };
    let Ok(reply) = provider.complete(&request, &mut |_| {}) else {
        return (None, model::Usage::default());
    };
    let text: String = crate::conversation::texts(&reply.content)
        .collect::<Vec<_>>()
        .join("\n");
    let digest =
        (reply.stop == model::Stop::Complete && !text.trim().is_empty()).then(|| cut(text.trim()));
    (digest, reply.usage)
}

/// At most [`MAX_CHARS`] characters, ending with a newline.
fn cut(text: &str) -> String {
    let mut out: String = text.chars().take(MAX_CHARS - 1).collect();
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::DateTime;

    fn asked(text: &str) -> SessionExchange {
        SessionExchange {
            outside: crate::outside::Outside::none(),
            time: DateTime::from_timestamp(1_800_000_000, 0).unwrap(),
            door: "ask".into(),
            asked: text.into(),
            said: "ok".into(),
            incomplete: false,
            answered: true,
        }
    }

    #[test]
    fn the_extract_names_topics_corrections_and_preferences_within_800_chars() {
        let x = vec![
            asked("what is the status of the lighthouse repairs?"),
            asked("No, the lighthouse is on the north pier"),
            asked("please always answer in metric units"),
            asked("when do the lighthouse repairs finish?"),
        ];
        let digest = extract(&x);
        assert!(digest.contains("lighthouse (3)"), "{digest}");
        assert!(digest.contains("Corrections:\n- No, the lighthouse is on the north pier"));
        assert!(digest.contains("Preferences:\n- please always answer in metric units"));
        let many: Vec<SessionExchange> = (0..50)
            .map(|i| asked(&format!("never forget item {i} {}", "x".repeat(200))))
            .collect();
        assert!(extract(&many).chars().count() <= MAX_CHARS);
    }
}
