//! `hearth ask` against a model that knows only what each request tells it
//! (the secret-word test): what was said at one door is known at the other,
//! across processes and after the history rotates.

use std::io::Read;
use std::time::{Duration, Instant};

use serde_json::json;

use super::*;

/// The text of a request: its system blocks and every message, as a model
/// would read it.
fn request_text(body: &Value) -> String {
    body.to_string().replace("\\n", "\n")
}

fn text_answer(t: &str) -> Answer {
    stream(anthropic::message(t, &[], 10, 5))
}

fn tool(name: &str, input: Value) -> Answer {
    let args = input.to_string();
    stream(anthropic::message(
        "",
        &[("k1", name, &[args.as_str()])],
        10,
        5,
    ))
}

/// The question this request carries: an ask's `Question:` line, or the
/// newest inbox message of a tick.
fn question_of(text: &str) -> String {
    if let Some(i) = text.rfind("Question: ") {
        return text[i..].lines().next().unwrap_or("").to_lowercase();
    }
    let Some(i) = text.rfind("<inbox-message") else {
        return String::new();
    };
    text[i..].lines().nth(1).unwrap_or("").to_lowercase()
}

/// A model with no memory of its own: a new word on request; the word
/// given earlier if the request shows it; else it searches with `recall`,
/// and answers from what the tool returned. A tick answers with `send`.
fn secret_keeper(body: &Value) -> Answer {
    let text = request_text(body);
    let is_tick = !text.contains("This is `hearth ask`") && text.contains("<inbox-message");
    let last = body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .cloned()
        .unwrap_or_default();
    let answering_tool = last.to_string().contains("tool_result");
    let question = question_of(&text);
    let reply = if answering_tool
        && is_tick
        && last.to_string().contains("\"k1\"")
        && !text.contains("[called recall]")
        && !last.to_string().contains("secret word is")
        && !text.contains("tool_use_id\":\"k2")
    {
        // The send went out: done.
        return text_answer("Done.");
    } else if answering_tool && last.to_string().contains("secret word is") {
        let after = last.to_string();
        let i = after.find("secret word is ").unwrap() + "secret word is ".len();
        let word: String = after[i..]
            .chars()
            .take_while(|c| c.is_ascii_uppercase())
            .collect();
        format!("From my memory: the secret word was {word}.")
    } else if answering_tool {
        "I searched and found no secret word.".to_string()
    } else if question.contains("new secret word") {
        "Your new secret word is PERIHELION.".to_string()
    } else if question.contains("secret word") {
        match text.find("secret word is ") {
            Some(i) => {
                let word: String = text[i + "secret word is ".len()..]
                    .chars()
                    .take_while(|c| c.is_ascii_uppercase())
                    .collect();
                format!("The secret word I gave you was {word}.")
            }
            None => return tool("recall", json!({"query": "new secret word is"})),
        }
    } else {
        "Noted.".to_string()
    };
    if is_tick && !answering_tool {
        let inbox_path = text
            .rfind("<inbox-message path=\"")
            .map(|i| text[i + 21..].split('"').next().unwrap_or("").to_string())
            .unwrap_or_default();
        return tool(
            "send",
            json!({"subject": "re", "body": reply, "in_reply_to": inbox_path}),
        );
    }
    if is_tick {
        // A tick that searched: send what it found.
        return tool("send", json!({"subject": "re", "body": reply}));
    }
    text_answer(&reply)
}

fn ask(home: &TestHome, question: &str) -> String {
    let out = home.keyed(&["ask", question], KEY).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The first message of the newest ask request (not a warm-digest call).
fn last_user_text(server: &ModelServer) -> String {
    server
        .received()
        .iter()
        .rev()
        .map(|r| request_text(&r.body["messages"][0]))
        .find(|t| t.contains("This is `hearth ask`"))
        .unwrap()
}

#[test]
fn the_secret_word_given_in_one_process_is_known_in_the_next() {
    let server = ModelServer::start(vec![Answer::Respond(secret_keeper)]);
    let home = home_for(&server, "");
    assert!(ask(&home, "give me a new secret word").contains("PERIHELION"));
    let answer = ask(&home, "what is the secret word you gave me last?");
    assert!(answer.contains("PERIHELION"), "{answer}");
    let second = last_user_text(&server);
    let hot = &second
        [second.find("<hot-memory>").expect("hot memory")..second.find("</hot-memory>").unwrap()];
    assert!(hot.contains("PERIHELION"), "found in hot memory: {hot}");
    // The same system blocks as a tick: the prompt cache serves both doors.
    let requests = server.received();
    assert_eq!(requests[0].body["system"], requests[1].body["system"]);
    let log = home.git(&["log", "--format=%s"]);
    assert!(String::from_utf8_lossy(&log.stdout)
        .contains("ask: what is the secret word you gave me last?"));
}

#[test]
fn a_word_sent_by_a_tick_is_known_to_ask_and_a_word_given_by_ask_to_the_inbox() {
    let server = ModelServer::start(vec![Answer::Respond(secret_keeper)]);
    let home = home_for(&server, "");
    home.ok(&["say", "give me a new secret word"]);
    assert!(run(&home, "1").status.success());
    let answer = ask(&home, "what is the secret word you gave me last?");
    assert!(answer.contains("PERIHELION"), "tick → ask: {answer}");

    let home = home_for(&server, "");
    assert!(ask(&home, "give me a new secret word").contains("PERIHELION"));
    home.ok(&["say", "what was the secret word you gave me before?"]);
    assert!(run(&home, "1").status.success());
    let sent: String = home
        .list("outbox")
        .iter()
        .map(|n| home.read(&format!("outbox/{n}")))
        .collect();
    assert!(
        sent.contains("The secret word I gave you was PERIHELION"),
        "ask → tick: {sent}"
    );
}

#[test]
fn after_the_history_rotates_the_word_comes_back_through_recall() {
    let server = ModelServer::start(vec![Answer::Respond(secret_keeper)]);
    let home = home_for(&server, "[context]\nhistory_tokens = 1000\n");
    home.ok(&["say", "give me a new secret word"]);
    assert!(run(&home, "1").status.success());
    for n in 0..10 {
        home.ok(&[
            "say",
            &format!("filler note {n}: {}", "the weather was mild. ".repeat(20)),
        ]);
        assert!(run(&home, "1").status.success());
    }
    assert!(
        !home.read("state/messages.json").contains("PERIHELION"),
        "rotated out"
    );
    for n in 0..7 {
        ask(&home, &format!("noted {n}?"));
    }
    let answer = ask(&home, "what is the secret word you gave me last?");
    assert!(answer.contains("PERIHELION"), "{answer}");
    assert!(
        request_text(&server.received().last().unwrap().body).contains("state/archive/"),
        "found in an archived turn, through the recall tool"
    );
}

#[test]
fn a_killed_ask_keeps_its_question_and_the_next_ask_sees_it() {
    let mut events = anthropic::message("The answer is long and slow", &[], 10, 5);
    events.truncate(4);
    let server = ModelServer::start(vec![
        Answer::Paced {
            events,
            pause: Duration::from_millis(400),
        },
        Answer::Respond(secret_keeper),
    ]);
    let home = home_for(&server, "");
    let cmd = home.keyed(&["ask", "tell me about the mountain pass"], KEY);
    let child = home.spawn_with(cmd);
    home.wait_for(Duration::from_secs(10), "the question on disk", || {
        home.file("state/sessions.jsonl").exists()
            && home.read("state/sessions.jsonl").contains("mountain pass")
    });
    std::thread::sleep(Duration::from_millis(300));
    crate::common::signal(&child, libc::SIGKILL);
    crate::common::finish(child, Duration::from_secs(5));
    for line in home.read("state/sessions.jsonl").lines() {
        serde_json::from_str::<Value>(line).expect("every line parses");
    }
    ask(&home, "anything new?");
    let seen = last_user_text(&server);
    assert!(seen.contains("tell me about the mountain pass"), "{seen}");
    assert!(seen.contains("interrupted"), "{seen}");
}

#[test]
fn the_answer_streams_before_the_server_has_sent_it_all() {
    let server = ModelServer::start(vec![Answer::Paced {
        events: anthropic::message("first half, then the second half", &[], 10, 5),
        pause: Duration::from_millis(150),
    }]);
    let home = home_for(&server, "");
    let mut child = home
        .keyed(&["ask", "stream please"], KEY)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let started = Instant::now();
    let mut first = [0u8; 5];
    stdout.read_exact(&mut first).unwrap();
    let at_first = started.elapsed();
    assert!(
        child.try_wait().unwrap().is_none(),
        "still streaming when the first chunk arrived"
    );
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).unwrap();
    let total = started.elapsed();
    assert!(child.wait().unwrap().success());
    assert_eq!(
        format!("{}{rest}", String::from_utf8_lossy(&first)).trim(),
        "first half, then the second half"
    );
    assert!(
        at_first + Duration::from_millis(300) < total,
        "first {at_first:?}, all {total:?}"
    );
}

#[test]
fn each_tier_gets_exactly_its_context_and_the_warm_digest_refreshes() {
    let server = ModelServer::start(vec![Answer::Respond(secret_keeper)]);
    let home = home_for(&server, "[ask]\nwarm_every = 3\n");
    std::fs::write(home.file("memory/directive.md"), "Map the coastline.\n").unwrap();
    std::fs::write(
        home.file("memory/coast.md"),
        "# Coast\n\nThe coastline has nine coves.\n",
    )
    .unwrap();
    for n in 0..8 {
        ask(&home, &format!("note number {n} please"));
    }
    let count = |text: &str| text.matches("operator: ").count();
    ask(&home, "what did you say last time?");
    let continuation = last_user_text(&server);
    assert_eq!(count(&continuation), 6, "hot 2 + 4 earlier: {continuation}");
    ask(&home, "what is our mission?");
    let mission = last_user_text(&server);
    assert_eq!(count(&mission), 8, "hot 2 + 6 earlier");
    assert!(mission.contains("Map the coastline."));
    ask(&home, "tell me about the coves");
    let knowledge = last_user_text(&server);
    assert_eq!(count(&knowledge), 2, "hot only");
    assert!(
        knowledge.contains("[memory/coast.md:3"),
        "recall with citations: {knowledge}"
    );
    let lines: Vec<Value> = home
        .read("state/sessions.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let last_q = lines
        .iter()
        .rev()
        .find(|l| l["kind"] == "question")
        .unwrap();
    assert_eq!(last_q["tier"], "knowledge");
    for part in ["system", "hot", "tier", "question"] {
        assert!(
            last_q["tokens"][part].as_u64().unwrap() > 0,
            "{part}: {last_q}"
        );
    }
    // 11 asks with warm_every = 3: refreshed by one bounded model call
    // (this model answers it "Noted."), bounded, committed.
    let warm = home.read("state/warm.md");
    assert!(
        warm.chars().count() <= 800 && warm.trim() == "Noted.",
        "{warm}"
    );
    let digest_calls = server
        .received()
        .iter()
        .filter(|r| request_text(&r.body).contains("Write the agent's warm digest"))
        .count();
    assert_eq!(digest_calls, 3);
    assert!(!home
        .git(&["log", "--format=%s", "--", "state/warm.md"])
        .stdout
        .is_empty());
    assert!(knowledge.contains("<warm-digest>"));
}

#[test]
fn what_an_ask_writes_is_the_asks_commit_even_when_a_tick_looks_for_hand_edits_meanwhile() {
    use std::sync::{Arc, Mutex};
    let home = TestHome::with_config("");
    let ledger = Arc::new(Mutex::new(home.file("state/ticks.jsonl")));
    // The ask writes a memory, and answers only once the supervisor has
    // run a tick (with its look for hand edits) after that write.
    let server = ModelServer::start(vec![Answer::Computed(Arc::new({
        let ledger = ledger.clone();
        move |body: &Value| {
            let text = request_text(body);
            if !text.contains("This is `hearth ask`") {
                return text_answer("Noted.");
            }
            let last = body["messages"]
                .as_array()
                .unwrap()
                .last()
                .unwrap()
                .to_string();
            if !last.contains("tool_result") {
                return tool(
                    "write",
                    json!({"path": "memory/notes/from-ask.md", "content": "# From the ask\n"}),
                );
            }
            let ledger = ledger.lock().unwrap().clone();
            let ticks = || {
                std::fs::read_to_string(&ledger)
                    .map(|t| t.lines().count())
                    .unwrap_or(0)
            };
            let deadline = Instant::now() + Duration::from_secs(15);
            while ticks() < 2 && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(10));
            }
            text_answer("Written.")
        }
    }))]);
    std::fs::write(
        home.file("hearth.toml"),
        format!(
            "[model]\nprovider = \"anthropic\"\nmodel = \"claude-test\"\nbase_url = \"{}\"\n\
             timeout_s = 30\nmax_retries = 0\n[tick]\ninterval_s = 3600\n",
            server.url
        ),
    )
    .unwrap();
    home.git(&["commit", "-qam", "config"]);
    let cmd = home.keyed(&["run"], KEY);
    let supervisor = home.spawn_with(cmd);
    home.wait_for(Duration::from_secs(20), "the first tick", || {
        home.ticks().len() == 1
    });

    let cmd = home.keyed(&["ask", "note something"], KEY);
    let asking = home.spawn_with(cmd);
    home.wait_for(Duration::from_secs(20), "the ask's write", || {
        home.file("memory/notes/from-ask.md").exists()
    });
    // The operator edits a memory by hand meanwhile, and a message makes
    // the supervisor tick (and look for hand edits) while the ask runs.
    std::fs::write(home.file("memory/by-hand.md"), "# By hand\n").unwrap();
    home.ok(&["say", "tick now"]);
    let asked = crate::common::finish(asking, Duration::from_secs(30));
    assert!(asked.success(), "{}", home.log());
    assert!(
        crate::common::finish_after_term(supervisor).success(),
        "{}",
        home.log()
    );

    let brought = |path: &str| {
        home.history()
            .into_iter()
            .rfind(|c| c.files.iter().any(|f| f == path))
            .unwrap_or_else(|| panic!("{path} never committed"))
    };
    let by_ask = brought("memory/notes/from-ask.md");
    assert!(
        by_ask.summary.starts_with("ask: note something") && by_ask.author == "hearth",
        "the ask's write is the ask's commit: {} by {}",
        by_ask.summary,
        by_ask.author
    );
    let by_hand = brought("memory/by-hand.md");
    assert_eq!(by_hand.author, "operator", "{}", by_hand.summary);
    assert!(home.git(&["status", "--porcelain"]).stdout.is_empty());
}

#[test]
fn the_warm_digests_model_call_is_counted_in_the_asks_spend() {
    let server = ModelServer::start(vec![Answer::Respond(secret_keeper)]);
    // Every call here uses 10 tokens in and 5 out: $0.015 at these prices.
    let home = home_for(
        &server,
        "[ask]\nwarm_every = 1\n[budget.prices.\"claude-test\"]\n\
         input_per_mtok = 1000.0\noutput_per_mtok = 1000.0\n",
    );
    ask(&home, "note this please");
    let calls = server.received().len();
    assert_eq!(calls, 2, "the answer, then the warm digest");
    let answer: Value = home
        .read("state/sessions.jsonl")
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .rfind(|l| l["kind"] == "answer")
        .unwrap();
    let cost = answer["cost_usd"].as_f64().unwrap();
    assert!(
        (cost - 0.03).abs() < 1e-9,
        "both calls are the ask's spend: {answer}"
    );
}

/// A model that, asked from the shell for a new word, gives it with `send`
/// and replies only "done" (issue 29: the word reached `outbox/`, stdout
/// said `done`, and the next ask had no word in its hot memory).
fn sends_from_the_shell(body: &Value) -> Answer {
    let text = request_text(body);
    let last = body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .cloned()
        .unwrap_or_default();
    if last.to_string().contains("tool_result") {
        return text_answer("done");
    }
    let question = question_of(&text);
    if question.contains("new secret word") {
        return tool(
            "send",
            json!({"subject": "your word", "body": "Your new secret word is HALCYON."}),
        );
    }
    match text.find("secret word is ") {
        Some(i) if question.contains("secret word") => {
            let word: String = text[i + "secret word is ".len()..]
                .chars()
                .take_while(|c| c.is_ascii_uppercase())
                .collect();
            text_answer(&format!("The secret word I gave you was {word}."))
        }
        _ => text_answer("I do not know."),
    }
}

#[test]
fn what_an_ask_sends_is_printed_and_in_the_next_asks_hot_memory() {
    let server = ModelServer::start(vec![Answer::Respond(sends_from_the_shell)]);
    let home = home_for(&server, "");
    let first = ask(&home, "give me a new secret word");
    assert!(first.contains("done"), "{first}");
    assert!(
        first.contains("[sent: your word] Your new secret word is HALCYON."),
        "what was sent is on stdout: {first}"
    );
    let second = ask(&home, "what is the secret word you gave me last?");
    assert!(second.contains("HALCYON"), "{second}");
    assert!(last_user_text(&server).contains("<hot-memory>"));
}
