//! What a consolidation exchange is told: the task and its rules (the
//! system block), and the identity-class memories in full with the
//! operator's lines marked, the diff since the last accepted
//! consolidation, and why it runs now (the user turn).

use std::collections::BTreeMap;

use crate::config::Config;

/// The mark on a line the operator wrote.
const OPERATOR: &str = "[operator] ";

/// `(system, user)` for a consolidation of `files`.
pub fn render(
    files: &BTreeMap<String, String>,
    operator_lines: &BTreeMap<String, Vec<String>>,
    since: &str,
    why: &str,
    config: &Config,
) -> (String, String) {
    let budget = config.boot.identity_budget_chars;
    let system = format!(
        "You are consolidating the identity memory of a long-lived agent: the files it loads \
         in full at every start. Make it shorter and clearer without losing anything that \
         matters: merge duplicates, tighten wording, and move detail that need not load every \
         time into ordinary memories (memory/notes/…, which are found by recall when needed).\n\n\
         Rules:\n\
         - Lines marked {OPERATOR}were written by the operator: never delete or change them \
           (the mark itself is not part of the line).\n\
         - Your writes do not change the files now: they become one proposal the operator \
           reviews. Use write, edit and append as usual; write a file with empty content to \
           remove it.\n\
         - For every file you remove lines from, call `removed` with where that content now \
           lives (a path) or why it may go.\n\
         - Remove at most {}% of the lines. The identity layer must end under {} characters \
           (80% of its budget of {budget}).\n\
         - If nothing needs to change, change nothing and say so.\n\
         End with one short paragraph saying what you changed and why.",
        config.consolidation.max_removed_pct,
        budget * 4 / 5,
    );
    let mut user = format!("Consolidation is due: {why}.\n\n");
    for (path, text) in files {
        let theirs = operator_lines.get(path).map(Vec::as_slice).unwrap_or(&[]);
        user.push_str(&format!("<file path=\"{path}\">\n"));
        for line in text.lines() {
            if !line.trim().is_empty() && theirs.iter().any(|l| l == line) {
                user.push_str(OPERATOR);
            }
            user.push_str(line);
            user.push('\n');
        }
        user.push_str("</file>\n\n");
    }
    if since.trim().is_empty() {
        user.push_str("(No earlier consolidation was accepted: there is no diff since one.)\n");
    } else {
        user.push_str(&format!(
            "What changed in memory/ since the last accepted consolidation:\n<diff>\n{}</diff>\n",
            since
        ));
    }
    (system, user)
}
