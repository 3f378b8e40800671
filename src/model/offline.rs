//! The default provider: no network, no key, deterministic. It answers each
//! inbox message with a `send` that quotes the question and says plainly that
//! no model is configured, so a new home runs end to end on a fresh machine
//! and the operator sees the whole loop (inbox → tick → outbox → commit)
//! before spending a cent.

use serde_json::json;

use super::{InboxFact, ModelError, Provider, Reply, Request, TurnFacts, Usage};
use crate::conversation::{estimate_tokens, Block, Role};

/// How much of a question the reply quotes.
const QUOTE_CHARS: usize = 2000;

/// The provider of a home with no model configured.
pub struct Offline;

impl Provider for Offline {
    fn name(&self) -> &str {
        "offline"
    }

    fn complete(
        &mut self,
        request: &Request<'_>,
        on_text: &mut dyn FnMut(&str),
    ) -> Result<Reply, ModelError> {
        let answering_tools = request.messages.last().is_some_and(|m| {
            m.role == Role::User
                && m.content
                    .iter()
                    .any(|b| matches!(b, Block::ToolResult { .. }))
        });
        let no_facts = TurnFacts::default();
        let facts = request.facts.unwrap_or(&no_facts);
        if let Some(question) = &facts.ask {
            // `hearth ask`: a plain answer, streamed, no tool call.
            let text = ask_answer(question);
            for chunk in text.split_inclusive('\n') {
                on_text(chunk);
            }
            return Ok(Reply {
                usage: Usage {
                    input_tokens: estimate_tokens(&request_text(request)),
                    output_tokens: crate::conversation::estimate_tokens(&text),
                    ..Usage::default()
                },
                content: vec![Block::Text { text }],
                ..Reply::default()
            });
        }
        if let Some(job) = facts.job.as_ref().filter(|_| !answering_tools) {
            return Ok(job_letter(request, job, facts.tick, on_text));
        }
        let mut content = Vec::new();
        let text = if answering_tools && facts.job.is_some() {
            "Sent the job's letter. No model is configured, so nothing else was done.".to_string()
        } else if answering_tools {
            format!(
                "Replied to {} inbox message(s). No model is configured, so nothing else was done this tick.",
                facts.inbox.len()
            )
        } else if facts.inbox.is_empty() {
            format!(
                "Tick {}: the inbox is empty. (offline provider: no model is configured, so the agent only answers messages.)",
                facts.tick
            )
        } else {
            format!("Answering {} inbox message(s).", facts.inbox.len())
        };
        on_text(&text);
        content.push(Block::Text { text });
        if !answering_tools {
            for (i, message) in facts.inbox.iter().enumerate() {
                content.push(Block::ToolUse {
                    id: format!("offline-{}-{}", facts.tick, i + 1),
                    name: "send".into(),
                    input: json!({
                        "subject": subject_for(message),
                        "body": reply_body(message, facts.tick),
                        "in_reply_to": message.rel,
                    }),
                });
            }
        }
        let input = request_text(request);
        let output = serde_json::to_string(&content).unwrap_or_default();
        Ok(Reply {
            stop_reason: Some(if answering_tools || facts.inbox.is_empty() {
                "end_turn".into()
            } else {
                "tool_use".into()
            }),
            content,
            usage: Usage {
                input_tokens: estimate_tokens(&input),
                output_tokens: estimate_tokens(&output),
                ..Usage::default()
            },
            ..Reply::default()
        })
    }
}

/// A job's run: a letter saying the job ran and that no model carried
/// out its prompt (so a job that expects `sent` is done, and one that
/// expects a file is honestly unmet).
fn job_letter(
    request: &Request<'_>,
    job: &InboxFact,
    tick: u64,
    on_text: &mut dyn FnMut(&str),
) -> Reply {
    let text = format!("Running {}.", job.rel);
    on_text(&text);
    let prompt: String = job.text.chars().take(QUOTE_CHARS).collect();
    let quoted: String = prompt.lines().map(|l| format!("> {l}\n")).collect();
    let content = vec![
        Block::Text { text },
        Block::ToolUse {
            id: format!("offline-{tick}-job"),
            name: "send".into(),
            input: json!({
                "subject": format!("{} ran", job.rel),
                "body": format!(
                    "The job {} ran at tick {tick}. No model is configured (the offline \
                     provider), so its prompt was not carried out:\n\n{quoted}",
                    job.rel
                ),
            }),
        },
    ];
    let output = serde_json::to_string(&content).unwrap_or_default();
    Reply {
        stop_reason: Some("tool_use".into()),
        content,
        usage: Usage {
            input_tokens: estimate_tokens(&request_text(request)),
            output_tokens: estimate_tokens(&output),
            ..Usage::default()
        },
        ..Reply::default()
    }
}

/// `Re:` and what the message is about (`mailbox::inbox::subject_of`).
fn subject_for(message: &InboxFact) -> String {
    let subject = crate::mailbox::inbox::subject_of(&message.text);
    format!("Re: {subject}")
}

/// The request's text, for an honest estimate of its tokens.
fn request_text(request: &Request<'_>) -> String {
    request
        .system
        .iter()
        .map(|b| b.text.as_str())
        .chain(request.messages.iter().flat_map(|m| {
            m.content.iter().map(|b| match b {
                Block::Text { text } => text.as_str(),
                Block::ToolResult { content, .. } => content.as_str(),
                Block::ToolUse { .. } | Block::Thinking { .. } | Block::RedactedThinking { .. } => {
                    ""
                }
            })
        }))
        .collect()
}

/// The offline answer to `hearth ask`: says plainly that no model thought
/// about it, and what memory holds that matches the question.
fn ask_answer(question: &InboxFact) -> String {
    let mut text = String::from(
        "No model is configured for this hearth, so this answer is the offline provider's: \
         no model has thought about your question. Set `provider` and `model` under `[model]` \
         in hearth.toml for real answers.\n",
    );
    if question.recalled.is_empty() {
        text.push_str("\nMy memory holds nothing that matches your words.\n");
    } else {
        text.push_str("\nWhat my memory holds that matches your words (lexical recall):\n\n");
        for hit in &question.recalled {
            let excerpt: String = hit.text.split_whitespace().collect::<Vec<_>>().join(" ");
            let mut excerpt: String = excerpt.chars().take(200).collect();
            if hit.text.chars().count() > 200 {
                excerpt.push('…');
            }
            text.push_str(&format!("- {}: {excerpt}\n", hit.place));
        }
    }
    text
}

fn reply_body(message: &InboxFact, tick: u64) -> String {
    let mut body = String::new();
    let quoted: String = message.text.chars().take(QUOTE_CHARS).collect();
    for line in quoted.trim_end().lines() {
        body.push_str("> ");
        body.push_str(line);
        body.push('\n');
    }
    if message.text.chars().count() > QUOTE_CHARS {
        body.push_str("> …\n");
    }
    body.push('\n');
    body.push_str(&format!(
        "No model is configured for this hearth, so this is an automatic reply from the \
         offline provider. Your message ({}) was read at tick {tick} and kept in the \
         agent's history, but no model has thought about it.\n\n\
         To get real answers, set `provider` and `model` under `[model]` in hearth.toml \
         and put the API key in the environment (never in a file).\n",
        message.rel
    ));
    if message.recalled.is_empty() {
        body.push_str("\nMy memory holds nothing that matches your words.\n");
    } else {
        body.push_str("\nWhat my memory holds that matches your words (lexical recall):\n\n");
        for hit in &message.recalled {
            let excerpt: String = hit.text.split_whitespace().collect::<Vec<_>>().join(" ");
            let mut excerpt: String = excerpt.chars().take(200).collect();
            if hit.text.chars().count() > 200 {
                excerpt.push('…');
            }
            body.push_str(&format!("- {}: {excerpt}\n", hit.place));
        }
    }
    for note in &message.notes {
        body.push_str(&format!("\nNote: {note}.\n"));
    }
    body
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::Message;
    use crate::model::Recalled;

    fn facts() -> TurnFacts {
        TurnFacts {
            tick: 4,
            inbox: vec![InboxFact {
                rel: "inbox/a.md".into(),
                text: "hello, what is in your identity?\n".into(),
                notes: vec![],
                recalled: vec![Recalled {
                    place: "memory/identity.md:1-3".into(),
                    text: "I keep a garden\nof notes.".into(),
                }],
            }],
            ask: None,
            job: None,
        }
    }

    #[test]
    fn a_reply_is_titled_by_the_message_not_its_fence() {
        let fact = |text: &str| InboxFact {
            rel: "inbox/x.md".into(),
            text: text.into(),
            notes: Vec::new(),
            recalled: Vec::new(),
        };
        assert_eq!(
            subject_for(&fact(
                "---\nfrom: a@b.c\nsubject: \"Tide tables\"\n---\nhi\n"
            )),
            "Re: Tide tables"
        );
        assert_eq!(
            subject_for(&fact("---\nfrom: a@b.c\n---\n\nWhen is high tide?\n")),
            "Re: When is high tide?"
        );
        assert_eq!(subject_for(&fact("Plain words.\n")), "Re: Plain words.");
    }

    #[test]
    fn answers_each_inbox_message_with_send_then_stops() {
        let facts = facts();
        let user = Message {
            outside: crate::outside::Outside::none(),
            role: Role::User,
            content: vec![Block::Text {
                text: "turn".into(),
            }],
        };
        let messages = vec![user];
        let request = Request {
            system: &[],
            messages: &messages,
            tools: &[],
            max_tokens: 100,
            facts: Some(&facts),
            cache: None,
            cache_key: None,
        };
        let reply = Offline.complete(&request, &mut |_| {}).unwrap();
        let calls: Vec<_> = reply.tool_uses().collect();
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].1, "send");
        let body = calls[0].2["body"].as_str().unwrap();
        assert!(body.starts_with("> hello, what is in your identity?\n"));
        assert!(body.contains("No model is configured"));
        assert!(body.contains("- memory/identity.md:1-3: I keep a garden of notes.\n"));

        let mut messages = messages.clone();
        messages.push(Message {
            outside: crate::outside::Outside::none(),
            role: Role::Assistant,
            content: reply.content.clone(),
        });
        messages.push(Message {
            outside: crate::outside::Outside::none(),
            role: Role::User,
            content: vec![Block::ToolResult {
                tool_use_id: calls[0].0.into(),
                content: "sent".into(),
                is_error: false,
            }],
        });
        let request = Request {
            system: &[],
            messages: &messages,
            tools: &[],
            max_tokens: 100,
            facts: Some(&facts),
            cache: None,
            cache_key: None,
        };
        let second = Offline.complete(&request, &mut |_| {}).unwrap();
        assert_eq!(second.tool_uses().count(), 0);
    }
}
