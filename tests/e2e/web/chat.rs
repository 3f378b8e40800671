//! The chat API (`/v1`) driven by the official `openai` Python client: a
//! client such as Open WebUI asks the agent as `hearth ask` does, with
//! the page's token, on a page that may act — never with a cookie.

use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, COOKIE};

use super::{Page, TOKEN};
use crate::common::TestHome;

/// What the official client saw (`openai_client.py`).
fn client_sees(page: &Page, question: &str) -> serde_json::Value {
    let python = crate::e2e::mcp::venv().join("bin/python");
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e/web/openai_client.py");
    let out = std::process::Command::new(python)
        .arg(script)
        .args([page.base.as_str(), TOKEN, question])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the openai client failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn the_official_openai_client_asks_the_agent_as_hearth_ask_does() {
    let home = TestHome::with_config("");
    home.ok(&["run", "--ticks", "1"]);
    let page = Page::open_with(&home, &["--allow-act"]);
    let question = "What did the heron do by the river?";
    let seen = client_sees(&page, question);
    let name = home.path.file_name().unwrap().to_str().unwrap();
    assert_eq!(seen["models"], serde_json::json!([name]), "{seen}");
    let whole = seen["whole"].as_str().unwrap();
    assert!(
        whole.contains("offline provider"),
        "the agent's answer: {seen}"
    );
    assert_eq!(seen["object"], "chat.completion");
    assert_eq!(seen["whole_finish"], "stop");
    assert!(seen["total_tokens"].as_u64().unwrap() > 0, "{seen}");
    assert_eq!(seen["streamed"], whole, "streamed as it was answered whole");
    assert!(seen["chunks"].as_u64().unwrap() >= 3, "{seen}");
    assert_eq!(seen["stream_finish"], "stop");
    assert_eq!(seen["wrong_token"], 401);
    assert_eq!(seen["unknown_model"], 404);
    // Asked as `hearth ask` asks: both in the session log, as the
    // operator's, and the system message and earlier turns not asked.
    let sessions = std::fs::read_to_string(home.file("state/sessions.jsonl")).unwrap();
    assert_eq!(sessions.matches(question).count(), 2, "{sessions}");
    assert!(!sessions.contains("obey the user"), "{sessions}");
    assert!(!sessions.contains("an earlier question"), "{sessions}");
}

#[test]
fn the_chat_api_takes_the_bearer_alone_and_only_on_a_page_that_may_act() {
    let home = TestHome::with_config("");
    let body = serde_json::json!({"model": home.path.file_name().unwrap().to_str().unwrap(),
        "messages": [{"role": "user", "content": "hi"}]})
    .to_string();
    let ask = |page: &Page, auth: Option<(&str, String)>| {
        let mut request = Page::client()
            .post(format!("{}/v1/chat/completions", page.base))
            .header(CONTENT_TYPE, "application/json")
            .body(body.clone());
        if let Some((name, value)) = auth {
            request = request.header(name, value);
        }
        request.send().unwrap()
    };
    let acting = Page::open_with(&home, &["--allow-act"]);
    // A browser's session is no credential here: no page the operator
    // opens can make the agent ask.
    let cookie = acting.session();
    let with_cookie = ask(&acting, Some((COOKIE.as_str(), cookie)));
    assert_eq!(with_cookie.status(), 401);
    let with_token = ask(
        &acting,
        Some((AUTHORIZATION.as_str(), format!("Bearer {TOKEN}"))),
    );
    assert_eq!(with_token.status(), 200, "{}", with_token.text().unwrap());
    drop(acting);
    let reading = Page::open(&home);
    let refused = ask(
        &reading,
        Some((AUTHORIZATION.as_str(), format!("Bearer {TOKEN}"))),
    );
    assert_eq!(refused.status(), 403);
    let said: serde_json::Value = refused.json().unwrap();
    assert_eq!(said["error"]["type"], "permission_error", "{said}");
}
