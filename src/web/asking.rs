//! How the page asks: `hearth ask` itself, run as a child, for the chat
//! API (`/v1`) and the thread (`/talk/ask`) — the same door as the shell,
//! its journal, commit and budget. The child gets the page's environment
//! but its doors' tokens: the page runs no tool, and the ask's tools are
//! the ask's children, never the token-holding page's.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::home::Home;

/// What an ask gave.
pub(super) struct AskEnded {
    /// It arrived whole.
    pub(super) complete: bool,
    /// The provider's usage (input, output).
    pub(super) usage: (u64, u64),
}

/// Why an ask gave no answer, in hearth's words (what went wrong; what
/// to do).
pub(super) enum NotAnswered {
    /// The budget is spent.
    Budget(String),
    /// Anything else: the model, the home, the child.
    Failed(String),
}

/// Asks `question` of `home` as the operator (the caller proved it),
/// streaming the answer to `on_text`, with `program` (the page's own
/// hearth) as a child.
pub(super) fn ask_of(
    program: &Path,
    home: &Home,
    question: String,
    environment: BTreeMap<String, String>,
    on_text: &mut dyn FnMut(&str),
) -> Result<AskEnded, NotAnswered> {
    use std::io::BufRead;
    let passed = environment
        .into_iter()
        .filter(|(name, _)| crate::process::passable(name));
    let mut child = std::process::Command::new(program)
        .arg("--home")
        .arg(home.root())
        .args(["ask", "--stream-json", "--"])
        .arg(&question)
        .env_clear()
        .envs(passed)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| {
            NotAnswered::Failed(format!("{} ask could not start: {e}", program.display()))
        })?;
    let stdout = child.stdout.take().expect("piped");
    let mut end: Option<Value> = None;
    for line in std::io::BufReader::new(stdout)
        .lines()
        .map_while(Result::ok)
    {
        let Ok(said) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        match said["text"].as_str() {
            Some(text) => on_text(text),
            None => end = Some(said),
        }
    }
    let out = child
        .wait_with_output()
        .map_err(|e| NotAnswered::Failed(format!("the ask could not be waited for: {e}")))?;
    match end {
        Some(end) if end["asked"].is_object() => {
            let asked = &end["asked"];
            let usage = &asked["usage"];
            Ok(AskEnded {
                complete: asked["complete"] == true,
                usage: (
                    usage[0].as_u64().unwrap_or(0),
                    usage[1].as_u64().unwrap_or(0),
                ),
            })
        }
        Some(end) if end["refused"]["budget"] == true => {
            Err(NotAnswered::Budget(refusal_of(&end["refused"])))
        }
        Some(end) => Err(NotAnswered::Failed(refusal_of(&end["refused"]))),
        None => Err(NotAnswered::Failed(format!(
            "the ask ended without an answer ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ))),
    }
}

/// A refused ask's words: what went wrong, and what to do.
fn refusal_of(refused: &Value) -> String {
    format!(
        "{}; {}",
        refused["message"].as_str().unwrap_or("the ask failed"),
        refused["hint"].as_str().unwrap_or("")
    )
}
