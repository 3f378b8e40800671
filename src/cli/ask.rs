//! `hearth ask "QUESTION"`: the shell-side door to the same agent. The
//! answer streams to stdout (flushed per chunk); `--json` prints one object
//! at the end instead. Piped input is part of the question, bounded.

use std::io::{IsTerminal, Write};
use std::path::Path;

use hearth::ask::{self, Question};
use hearth::config::Config;

use super::{CommandError, Env, Exit};

#[derive(clap::Args)]
pub struct Args {
    /// The question (piped input goes with it as an attachment).
    question: Vec<String>,
    /// Print one JSON object at the end instead of streaming.
    #[arg(long, conflicts_with = "stream_json")]
    json: bool,
    /// Stream JSON lines for a program (the page's chat API): `{"text":
    /// …}` as the answer comes, then `{"asked": …}`, or `{"refused":
    /// {"message", "hint", "budget"}}` when no answer could be had.
    #[arg(long, hide = true)]
    stream_json: bool,
    /// Offer the model only the tools that do not write.
    #[arg(long)]
    read_only: bool,
    /// Print the estimated tokens per part, the usage and the cost on stderr.
    #[arg(long)]
    verbose: bool,
    /// Piped input is your own words: without this, it is content from
    /// outside, and the agent's writes to its identity in this ask become
    /// a proposal (`hearth proposals`).
    #[arg(long)]
    stdin_is_mine: bool,
}

pub fn run(env: &Env, flag: Option<&Path>, args: Args) -> Result<Exit, CommandError> {
    let home = env.open_home(flag)?;
    let config = Config::load(&home.config_path())?;
    env.require_key(&config.model)?;
    let question = question_of(env, &config, &args)?;
    let (json, stream_json) = (args.json, args.stream_json);
    let mut out = std::io::stdout();
    // The answer streams as it comes; an attempt thrown away and asked
    // again is followed by a line that says so (`--json` prints only the
    // answer that is kept).
    let mut on_text = |chunk: &str| {
        let line;
        let shown = match (json, stream_json) {
            (true, _) => return,
            (_, true) => {
                line = format!("{}\n", serde_json::json!({ "text": chunk }));
                line.as_str()
            }
            _ => chunk,
        };
        // A closed pipe ends the printing, not the ask: the answer is
        // still stored.
        let _ = out.write_all(shown.as_bytes());
        let _ = out.flush();
    };
    interrupt_commits_what_was_written(&home, env.clock);
    let asked = ask::ask(&home, &config, &question, env.clock.now(), &mut on_text);
    let asked = match (asked, stream_json) {
        (Ok(asked), true) => {
            outln!("{}", serde_json::json!({ "asked": asked }));
            return Ok(Exit::Success);
        }
        (Err(e), true) => {
            let budget = matches!(e, ask::AskError::Budget(_));
            let refused =
                serde_json::json!({"message": e.to_string(), "hint": e.hint(), "budget": budget});
            outln!("{}", serde_json::json!({ "refused": refused }));
            return Ok(Exit::Error);
        }
        (asked, false) => asked?,
    };
    if json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&asked).expect("an answer serialises")
        );
    } else if !asked.answer.ends_with('\n') {
        outln!();
    }
    if args.verbose {
        eprintln!(
            "tier: {:?}; tokens by part: {:?}; usage: {} in, {} out; cost ${:.6}",
            asked.tier, asked.tokens, asked.usage.0, asked.usage.1, asked.cost_usd
        );
    }
    if !asked.complete {
        return Err(CommandError::new(
            anyhow::anyhow!("the answer is incomplete: {}", asked.problems.join("; ")),
            "it is stored in state/sessions.jsonl marked incomplete; ask again",
        ));
    }
    Ok(Exit::Success)
}

/// The question the arguments and piped input ask.
fn question_of(env: &Env, config: &Config, args: &Args) -> Result<Question, CommandError> {
    let stdin = std::io::stdin();
    let attachment = if stdin.is_terminal() {
        None
    } else {
        let read = ask::Attachment::read(stdin.lock())?;
        (read.bytes > 0).then_some(read)
    };
    let mut text = args.question.join(" ");
    if text.trim().is_empty() {
        if attachment.is_none() {
            return Err(CommandError::usage(
                "hearth ask needs a question",
                "hearth ask \"what did you learn today?\"  (or: git diff | hearth ask \"review this\")",
            ));
        }
        text = "What do you make of this?".into();
    }
    Ok(Question {
        text,
        attachment,
        read_only: args.read_only,
        stdin_is_mine: args.stdin_is_mine,
        relayed_by: None,
        api_key: env.api_key(&config.model),
        environment: env.vars().clone(),
    })
}

/// Ctrl-C, SIGTERM or a closed terminal in the middle of an ask: what its
/// tools wrote until then is committed as the ask's, marked interrupted
/// (`ask::journal`), and the process exits as the signal would have ended
/// it. Without this the operator's next hand-edit commit took it all.
fn interrupt_commits_what_was_written(home: &hearth::home::Home, clock: hearth::clock::Clock) {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
        return; // the default action stays; the next look finishes the ask
    };
    let home = home.clone();
    std::thread::spawn(move || {
        if let Some(signal) = signals.forever().next() {
            // The call in progress ends (and is named in the journal) and
            // no other starts: nothing is written after the commit below.
            let _stopped = hearth::tools::stop_calls();
            let name = match signal {
                SIGINT => "interrupted (SIGINT)",
                SIGTERM => "terminated (SIGTERM)",
                _ => "its terminal closed (SIGHUP)",
            };
            for subject in ask::journal::finish(&home, ask::journal::Whose::Mine, name, clock.now())
            {
                eprintln!("\nhearth: {name}; committed what the ask wrote: {subject}");
            }
            std::process::exit(128 + signal);
        }
    });
}
