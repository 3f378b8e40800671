//! The prices hearth ships, so that `[budget] daily_usd` bounds the spend of
//! a real model out of the box (DESIGN 6). Dollars per million tokens, as
//! the providers' pricing pages list them (Anthropic: "Model pricing", 5-minute
//! cache writes, 1-hour writes at twice the input price; OpenAI: "Pricing",
//! standard tier, where a cache write costs what an input token does).
//! `docs/models.md` shows and dates the table; a test holds the two
//! together. A
//! `[budget.prices."MODEL"]` entry always wins over it.
//!
//! Names are matched as the APIs and gateways spell them: a provider prefix
//! (`anthropic/`, `openai/`) and a date suffix (`-20250929`, `-2024-08-06`)
//! or `-latest` are dropped, then the name must match an entry exactly, so
//! `gpt-4o-mini` is never priced as `gpt-4o`.

use super::Price;

/// (model, input, cache write, cache read, output), per million tokens.
const TABLE: &[(&str, f64, f64, f64, f64)] = &[
    // Anthropic.
    ("claude-fable-5-1", 10.0, 12.50, 0.25, 50.0),
    ("claude-fable-5", 10.0, 12.50, 1.0, 50.0),
    ("claude-opus-5", 5.0, 6.25, 0.50, 25.0),
    ("claude-sonnet-5-5", 2.0, 2.50, 0.10, 10.0),
    ("claude-sonnet-5", 2.0, 2.50, 0.20, 10.0),
    ("claude-haiku-5-5", 0.10, 0.125, 0.01, 0.50),
    ("claude-opus-4-8", 5.0, 6.25, 0.50, 25.0),
    ("claude-opus-4-7", 5.0, 6.25, 0.50, 25.0),
    ("claude-opus-4-6", 5.0, 6.25, 0.50, 25.0),
    ("claude-opus-4-5", 5.0, 6.25, 0.50, 25.0),
    ("claude-opus-4-1", 15.0, 18.75, 1.50, 75.0),
    ("claude-opus-4", 15.0, 18.75, 1.50, 75.0),
    ("claude-opus-4-0", 15.0, 18.75, 1.50, 75.0),
    ("claude-sonnet-4-6", 3.0, 3.75, 0.30, 15.0),
    ("claude-sonnet-4-5", 3.0, 3.75, 0.30, 15.0),
    ("claude-sonnet-4", 3.0, 3.75, 0.30, 15.0),
    ("claude-sonnet-4-0", 3.0, 3.75, 0.30, 15.0),
    ("claude-3-7-sonnet", 3.0, 3.75, 0.30, 15.0),
    ("claude-3-5-sonnet", 3.0, 3.75, 0.30, 15.0),
    ("claude-haiku-4-5", 1.0, 1.25, 0.10, 5.0),
    ("claude-3-5-haiku", 0.80, 1.0, 0.08, 4.0),
    ("claude-3-haiku", 0.25, 0.30, 0.03, 1.25),
    ("claude-3-opus", 15.0, 18.75, 1.50, 75.0),
    // OpenAI.
    ("gpt-5.5", 5.0, 5.0, 0.50, 30.0),
    ("gpt-5.4", 2.50, 2.50, 0.25, 15.0),
    ("gpt-5.4-mini", 0.75, 0.75, 0.075, 4.50),
    ("gpt-5.4-nano", 0.20, 0.20, 0.02, 1.25),
    ("gpt-5.1", 1.25, 1.25, 0.125, 10.0),
    ("gpt-5", 1.25, 1.25, 0.125, 10.0),
    ("gpt-5-mini", 0.25, 0.25, 0.025, 2.0),
    ("gpt-5-nano", 0.05, 0.05, 0.005, 0.40),
    ("gpt-4.1", 2.0, 2.0, 0.50, 8.0),
    ("gpt-4.1-mini", 0.40, 0.40, 0.10, 1.60),
    ("gpt-4.1-nano", 0.10, 0.10, 0.025, 0.40),
    ("gpt-4o", 2.50, 2.50, 1.25, 10.0),
    ("gpt-4o-mini", 0.15, 0.15, 0.075, 0.60),
    ("o1", 15.0, 15.0, 7.50, 60.0),
    ("o3", 2.0, 2.0, 0.50, 8.0),
    ("o3-mini", 1.10, 1.10, 0.55, 4.40),
    ("o4-mini", 1.10, 1.10, 0.275, 4.40),
];

/// The rates a `[budget.prices]` entry leaves out, by the providers'
/// rules (Anthropic's multipliers of the input price).
impl Price {
    /// Per million cache reads.
    pub fn cache_read(&self) -> f64 {
        self.cache_read_per_mtok
            .unwrap_or(self.input_per_mtok * 0.1)
    }

    /// Per million cache writes with the 5-minute lifetime.
    pub fn cache_write(&self) -> f64 {
        self.cache_write_per_mtok
            .unwrap_or(self.input_per_mtok * 1.25)
    }

    /// Per million cache writes with the 1-hour lifetime.
    pub fn cache_write_1h(&self) -> f64 {
        self.cache_write_1h_per_mtok
            .unwrap_or(self.input_per_mtok * 2.0)
    }
}

/// The context window of `model`, in tokens, when hearth knows it (the
/// providers' model pages: Claude models 200,000 by default; GPT-4.1
/// 1,047,576; GPT-4o 128,000; GPT-5 400,000; o-series 200,000).
pub fn context_window(model: &str) -> Option<u64> {
    let name = canonical(model);
    let window = if name.starts_with("claude-") {
        200_000
    } else if name.starts_with("gpt-4.1") {
        1_047_576
    } else if name.starts_with("gpt-4o") {
        128_000
    } else if name.starts_with("gpt-5") {
        400_000
    } else if ["o1", "o3", "o3-mini", "o4-mini"].contains(&name.as_str()) {
        200_000
    } else {
        return None;
    };
    Some(window)
}

/// The shipped price of `model`, if hearth knows it.
pub fn shipped(model: &str) -> Option<Price> {
    let name = canonical(model);
    TABLE
        .iter()
        .find(|(n, ..)| *n == name)
        .map(|&(_, input, write, read, output)| Price {
            input_per_mtok: input,
            output_per_mtok: output,
            cache_read_per_mtok: Some(read),
            cache_write_per_mtok: Some(write),
            // Anthropic's 1-hour writes cost twice the input price; OpenAI
            // has one lifetime, priced as its only write.
            cache_write_1h_per_mtok: Some(if name.starts_with("claude-") {
                input * 2.0
            } else {
                write
            }),
        })
}

/// The model's name without a provider prefix, a date suffix or `-latest`.
fn canonical(model: &str) -> String {
    let lower = model.trim().to_ascii_lowercase();
    let mut name = lower.rsplit('/').next().unwrap_or("").to_string();
    if let Some(rest) = name.strip_suffix("-latest") {
        name = rest.to_string();
    }
    // -YYYYMMDD
    if let Some((head, tail)) = name.rsplit_once('-') {
        if tail.len() == 8 && tail.bytes().all(|b| b.is_ascii_digit()) {
            name = head.to_string();
        }
    }
    // -YYYY-MM-DD
    let parts: Vec<&str> = name.rsplitn(4, '-').collect();
    if parts.len() == 4
        && [4, 2, 2]
            .iter()
            .zip([parts[2], parts[1], parts[0]])
            .all(|(len, p)| p.len() == *len && p.bytes().all(|b| b.is_ascii_digit()))
    {
        name = parts[3].to_string();
    }
    name
}

/// Whether `base_url` names this host (Ollama, llama.cpp or vLLM served
/// locally): such a model costs nothing unless it is priced.
pub fn is_loopback(base_url: &str) -> bool {
    let Ok(url) = reqwest::Url::parse(base_url.trim()) else {
        return false;
    };
    let Some(host) = url.host_str() else {
        return false;
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_matched_as_apis_and_gateways_spell_them() {
        let sonnet = shipped("claude-sonnet-4-5-20250929").unwrap();
        assert_eq!(sonnet.input_per_mtok, 3.0);
        assert_eq!(shipped("anthropic/claude-sonnet-4-5"), Some(sonnet));
        assert_eq!(shipped("gpt-4o-2024-08-06").unwrap().output_per_mtok, 10.0);
        assert_eq!(shipped("gpt-4o-mini").unwrap().output_per_mtok, 0.60);
        assert_eq!(shipped("openai/o4-mini").unwrap().input_per_mtok, 1.10);
        assert_eq!(
            shipped("claude-3-5-haiku-latest").unwrap().input_per_mtok,
            0.80
        );
        assert_eq!(shipped("claude-test"), None);
        assert_eq!(shipped("llama3.1:8b"), None);
    }

    #[test]
    fn only_this_host_is_loopback() {
        for url in [
            "http://127.0.0.1:11434/v1",
            "http://localhost:8080",
            "http://[::1]:8000/v1",
            "http://127.1.2.3",
        ] {
            assert!(is_loopback(url), "{url}");
        }
        for url in [
            "https://api.openai.com/v1",
            "http://10.0.0.5:11434",
            "",
            "nonsense",
        ] {
            assert!(!is_loopback(url), "{url}");
        }
    }

    /// The rows of the price table in `docs/models.md`: (names, the five
    /// prices). A name starting with `-` continues the family of the full
    /// name before it (`claude-opus-4-5`, `-4-6` is `claude-opus-4-6`).
    fn documented() -> Vec<(Vec<String>, [f64; 5])> {
        let doc = include_str!("../../docs/models.md");
        let mut rows = Vec::new();
        let mut in_table = false;
        for line in doc.lines() {
            if line.starts_with("| model | input | cache write (5 min)") {
                in_table = true;
                continue;
            }
            if !in_table || line.starts_with("|---") {
                continue;
            }
            if !line.starts_with('|') {
                break;
            }
            let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
            let mut names = Vec::new();
            let mut family = String::new();
            for name in cells[0].split(", ").map(|n| n.trim_matches('`')) {
                let full = if name.starts_with('-') {
                    format!("{family}{name}")
                } else {
                    // The family: up to the first `-` followed by a digit.
                    let cut = name
                        .match_indices('-')
                        .find(|(i, _)| name[i + 1..].starts_with(|c: char| c.is_ascii_digit()))
                        .map_or(name.len(), |(i, _)| i);
                    family = name[..cut].to_string();
                    name.to_string()
                };
                names.push(full);
            }
            let price = |i: usize| cells[i].parse::<f64>().unwrap();
            rows.push((names, [price(1), price(2), price(3), price(4), price(5)]));
        }
        rows
    }

    #[test]
    fn the_documented_price_table_is_the_shipped_one() {
        let rows = documented();
        assert!(rows.len() >= 20, "the table in docs/models.md: {rows:?}");
        let mut seen = Vec::new();
        for (names, [input, write, write_1h, read, output]) in rows {
            for name in names {
                let p =
                    shipped(&name).unwrap_or_else(|| panic!("{name} is documented, not shipped"));
                let got = [
                    p.input_per_mtok,
                    p.cache_write(),
                    p.cache_write_1h(),
                    p.cache_read(),
                    p.output_per_mtok,
                ];
                for (doc, code) in [input, write, write_1h, read, output].iter().zip(got) {
                    assert!(
                        (doc - code).abs() < 1e-9,
                        "{name}: documented {doc}, shipped {code}"
                    );
                }
                seen.push(name);
            }
        }
        for (name, ..) in TABLE {
            // `-0` is an alias the APIs accept for the first release.
            let documented = seen.iter().any(|s| s == name || format!("{s}-0") == *name);
            assert!(documented, "{name} is shipped but not in docs/models.md");
        }
    }
}
