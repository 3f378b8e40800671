//! `hearth audit [--json] [--strict]`: is the identity still loading cleanly?

use std::path::Path;

use hearth::boot::drift;
use hearth::config::Config;
use hearth::provenance;
use hearth::view::status::cache_warning;

use super::{CommandError, Env, Exit};

#[derive(clap::Args)]
pub struct Args {
    /// Print JSON.
    #[arg(long)]
    json: bool,
    /// Exit 1 when there is any drift, or an identity line from outside.
    #[arg(long)]
    strict: bool,
}

pub fn run(env: &Env, flag: Option<&Path>, args: Args) -> Result<Exit, CommandError> {
    let home = env.open_home(flag)?;
    // The audit is for when things are wrong: a broken hearth.toml must not
    // stop it.
    let config = Config::load(&home.config_path()).unwrap_or_else(|e| {
        tracing::warn!("{e}; auditing with the default [boot] settings");
        Config::default()
    });
    let audit = drift::audit(&home, &config.boot);
    let outside = hearth::provenance::identity::outside_lines(
        &home,
        &config,
        &hearth::exchange::ledger::tainted_ticks(&home),
    );
    // The prompt and the identity layer go into every request: if they
    // alone do not fit the model's context window, no tick can run.
    let window = config.context_window();
    let room = window.saturating_sub(u64::from(config.model.max_tokens));
    let fits = audit.estimated_tokens <= room;
    let (operator, problems) = hearth::tools::operator::load(&home, &hearth::tools::BUILTINS);
    if args.json {
        let mut value = serde_json::to_value(&audit).expect("audit serialises");
        value["context_window"] = window.into();
        value["room_tokens"] = room.into();
        value["fits"] = fits.into();
        value["outside"] = serde_json::to_value(&outside).expect("findings serialise");
        value["tools"] = operator
            .iter()
            .map(|t| {
                serde_json::json!({
                    "name": t.name,
                    "file": t.file,
                    "output_outside": t.untrusted,
                    "trust": t.trust_said(),
                    "sandboxed": !t.confinement.is_unsandboxed(),
                })
            })
            .collect::<Vec<_>>()
            .into();
        value["cache"] = serde_json::json!({
            "interval_s": config.tick.interval_s,
            "cache_aware": config.tick.cache_aware,
            "pays": cache_warning(&config).is_none(),
            "verdict": cache_verdict(&config),
        });
        outln!(
            "{}",
            serde_json::to_string_pretty(&value).expect("audit serialises")
        );
    } else {
        print_human(&audit)?;
        print_fit(&config, audit.estimated_tokens, fits)?;
        print_tools(&home, &operator, &problems)?;
        print_outside(&outside)?;
    }
    if !fits || !problems.is_empty() {
        return Ok(Exit::Error);
    }
    Ok(
        if args.strict
            && (!audit.drift.is_empty() || outside.iter().any(provenance::Finding::fails_strict))
        {
            Exit::Error
        } else {
            Exit::Success
        },
    )
}

/// Whether the prompt and identity layer fit the model's window, and
/// whether the tick interval lets the cache pay.
fn print_fit(config: &Config, estimated_tokens: u64, fits: bool) -> Result<(), CommandError> {
    let window = config.context_window();
    let room = window.saturating_sub(u64::from(config.model.max_tokens));
    if fits {
        outln!("context:        fits ({room} tokens of room, [model] context_tokens = {window} less max_tokens)");
    } else {
        outln!(
            "DOES NOT FIT:   the prompt and identity layer alone are ~{estimated_tokens} tokens, and the model has \
             room for {room} ([model] context_tokens = {window} less [model] max_tokens): every \
             tick fails as context-insufficiency until memory/prompt.md or the identity \
             memories are shortened"
        );
    }
    if let Some(verdict) = cache_verdict(config) {
        let label = if cache_warning(config).is_some() {
            "CACHE:         "
        } else {
            "cache:         "
        };
        outln!("{label} {verdict}");
    }
    Ok(())
}

/// Operator tools: a manifest that does not parse is named with file and
/// line; a tool changed since it was trusted will not run.
fn print_tools(
    home: &hearth::home::Home,
    operator: &[hearth::tools::operator::OperatorTool],
    problems: &[hearth::tools::operator::ManifestProblem],
) -> Result<(), CommandError> {
    let trusted = hearth::tools::trust::Trust::load(home);
    for tool in operator {
        let state = if trusted.trusts(&tool.file, &tool.digest) {
            "trusted"
        } else {
            "NOT TRUSTED (run `hearth trust` after checking it)"
        };
        outln!(
            "tool:           {} ({}) — {state}; {}; {}",
            tool.name,
            tool.file,
            tool.trust_said(),
            tool.sandbox_said()
        );
    }
    for problem in problems {
        outln!("BROKEN TOOL:    {problem}");
    }
    Ok(())
}

/// Identity lines that came from outside, accepted from it, or that read
/// like planted instructions.
fn print_outside(outside: &[provenance::Finding]) -> Result<(), CommandError> {
    for f in outside {
        let label = match f.kind {
            provenance::audit::FindingKind::Ancestry => "OUTSIDE:       ",
            provenance::audit::FindingKind::Accepted => "accepted:      ",
            provenance::audit::FindingKind::Phrase => "READS PLANTED: ",
        };
        outln!("{label} {}  ({})", f.why, f.text.trim());
    }
    if outside
        .iter()
        .any(|f| f.kind == provenance::audit::FindingKind::Ancestry)
    {
        outln!(
            "                outside lines: accept them through a proposal, rewrite them \
             yourself, or `hearth vouch PATH:LINE` once you have read them"
        );
    }
    Ok(())
}

fn print_human(audit: &drift::Audit) -> Result<(), CommandError> {
    outln!(
        "identity layer: {} memories in full ({} truncated), {} as titles",
        audit.rendered_full,
        audit.truncated,
        audit.rendered_as_titles
    );
    outln!(
        "budget:         {} of {} characters ({}%), ~{} tokens in the system prompt",
        audit.identity_chars,
        audit.budget_chars,
        audit.budget_percent,
        audit.estimated_tokens
    );
    if !audit.required_reads.is_empty() {
        outln!("required reads: {}", audit.required_reads.join(", "));
    }
    if audit.drift.is_empty() {
        outln!("drift:          none");
    } else {
        outln!("drift ({}):", audit.drift.len());
        for d in &audit.drift {
            let kind = serde_json::to_value(d.kind).expect("kind serialises");
            outln!(
                "  {} [{}]: {}",
                d.path,
                kind.as_str().unwrap_or("?"),
                d.detail
            );
        }
    }
    for problem in &audit.problems {
        outln!("problem:        {problem}");
    }
    Ok(())
}

/// Which cache lifetime serves the interval, for a model that caches.
fn cache_verdict(config: &Config) -> Option<String> {
    (config.model.provider != hearth::config::ProviderKind::Offline).then(|| {
        hearth::model::cache::verdict(
            std::time::Duration::from_secs(config.tick.interval_s),
            config.tick.cache_aware,
        )
    })
}
