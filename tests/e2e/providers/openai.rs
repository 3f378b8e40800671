//! The OpenAI-compatible provider, end to end against a local server.

use super::*;

pub(super) fn openai_home(server: &ModelServer, model: &str) -> TestHome {
    TestHome::with_config(&format!(
        "[model]\nprovider = \"openai\"\nmodel = \"{model}\"\nbase_url = \"{}/v1\"\napi_key_env = \"OLLAMA_KEY\"\ntimeout_s = 2\nmax_retries = 1\nretry_base_ms = 10\n[budget.prices.\"{model}\"]\ninput_per_mtok = 1.0\noutput_per_mtok = 2.0\n",
        server.url
    ))
}

pub(super) fn run_openai(home: &TestHome) -> std::process::Output {
    home.cmd(&["run", "--ticks", "1"])
        .env("OLLAMA_KEY", KEY)
        .output()
        .unwrap()
}

#[test]
fn a_full_openai_compatible_tick_with_a_fragmented_tool_call() {
    use crate::common::model_server::openai;
    let server = ModelServer::start(vec![
        stream(openai::completion(
            "Sending a reply.",
            &[(
                "call_1",
                "send",
                &["{\"body\": \"hel", "lo from llama\"", "}"],
            )],
            500,
            40,
        )),
        stream(openai::completion("Done.", &[], 600, 5)),
    ]);
    let home = openai_home(&server, "llama3.1");
    home.ok(&["say", "say hello"]);
    let out = run_openai(&home);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tick = &home.ticks()[0];
    assert_eq!(tick["class"], "ok", "{tick}");
    assert_eq!(tick["tokens"]["in"], 1100);
    assert_eq!(tick["tokens"]["out"], 45);
    let outbox = home.list("outbox");
    assert_eq!(outbox.len(), 1);
    assert!(home
        .read(&format!("outbox/{}", outbox[0]))
        .contains("hello from llama"));

    let requests = server.received();
    assert_eq!(requests[0].path, "/v1/chat/completions");
    assert_eq!(
        requests[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(requests[0].body["stream_options"]["include_usage"], true);
    assert_eq!(requests[0].body["messages"][0]["role"], "system");
    let second = requests[1].body["messages"].as_array().unwrap();
    assert_eq!(second[second.len() - 2]["tool_calls"][0]["id"], "call_1");
    assert_eq!(second.last().unwrap()["role"], "tool");
    assert_eq!(second.last().unwrap()["tool_call_id"], "call_1");
    assert_key_never_written(&home, &out.stderr);
}

#[test]
fn an_openai_stream_without_done_is_model_limitation() {
    use crate::common::model_server::openai;
    let mut events = openai::completion("cut", &[], 5, 1);
    events.pop();
    let server = ModelServer::start(vec![stream(events)]);
    let home = openai_home(&server, "llama3.1");
    assert!(run_openai(&home).status.success());
    assert_eq!(home.ticks()[0]["class"], "model-limitation");
}

/// What a prefix cache (llama.cpp's `cache_prompt`, vLLM's, OpenAI's)
/// needs: each tick's request begins with the last tick's, byte for byte.
#[test]
fn each_ticks_request_begins_with_the_last_ones_byte_for_byte() {
    use crate::common::model_server::openai;
    let server = ModelServer::start(vec![stream(openai::completion(
        "Noted; nothing else to do.",
        &[],
        500,
        8,
    ))]);
    let home = openai_home(&server, "llama3.1");
    for _ in 0..3 {
        let out = run_openai(&home);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let requests = server.received();
    assert_eq!(requests.len(), 3);
    for pair in requests.windows(2) {
        let (before, after) = (&pair[0].body, &pair[1].body);
        let sent = before["messages"].as_array().unwrap();
        let next = after["messages"].as_array().unwrap();
        assert!(next.len() > sent.len());
        for (i, (a, b)) in sent.iter().zip(next).enumerate() {
            assert_eq!(
                a.to_string(),
                b.to_string(),
                "message {i} changed between ticks"
            );
        }
        assert_eq!(next[sent.len()]["role"], "assistant");
        assert_eq!(before["tools"].to_string(), after["tools"].to_string());
        // A compatible server gets no field it might refuse.
        assert!(after.get("prompt_cache_key").is_none());
    }
}
