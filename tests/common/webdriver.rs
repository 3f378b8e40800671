//! A real browser for the page's tests: Debian's Chromium, driven by
//! Debian's ChromeDriver over the W3C WebDriver protocol (plain JSON over
//! HTTP, so no client crate stands between the test and the standard).
//! `scripts/test` installs `chromium` and `chromium-driver`; a machine
//! without them fails the test with that fix.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// A ChromeDriver and one headless Chromium session of a phone's size.
pub struct Browser {
    driver: Child,
    base: String,
    session: String,
    client: reqwest::blocking::Client,
    _profile: tempfile::TempDir,
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self
            .client
            .delete(format!("{}/session/{}", self.base, self.session))
            .send();
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Browser {
    /// Starts ChromeDriver and a headless Chromium `width`×`height`.
    pub fn start(width: u32, height: u32) -> Browser {
        let driver_bin = "/usr/bin/chromedriver";
        assert!(
            std::path::Path::new(driver_bin).exists()
                && std::path::Path::new("/usr/bin/chromium").exists(),
            "no Chromium here: install Debian's chromium and chromium-driver (scripts/test does)"
        );
        let port = free_port();
        let driver = Command::new(driver_bin)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let base = format!("http://127.0.0.1:{port}");
        let client = reqwest::blocking::Client::builder()
            .timeout(Duration::from_secs(60))
            .build()
            .unwrap();
        let start = Instant::now();
        while client.get(format!("{base}/status")).send().is_err() {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "chromedriver did not start"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let profile = tempfile::tempdir().unwrap();
        let args = [
            "--headless".to_string(),
            "--no-sandbox".into(),
            "--disable-gpu".into(),
            "--disable-quic".into(),
            "--no-first-run".into(),
            "--disable-background-networking".into(),
            "--disable-component-update".into(),
            "--disable-sync".into(),
            format!("--user-data-dir={}", profile.path().display()),
            format!("--window-size={width},{height}"),
        ];
        let created: Value = client
            .post(format!("{base}/session"))
            .json(&json!({"capabilities": {"alwaysMatch": {
                "browserName": "chrome",
                "goog:chromeOptions": {"binary": "/usr/bin/chromium", "args": args}
            }}}))
            .send()
            .unwrap()
            .json()
            .unwrap();
        let session = created["value"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no session: {created}"))
            .to_string();
        Browser {
            driver,
            base,
            session,
            client,
            _profile: profile,
        }
    }

    fn call(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
        let url = format!("{}/session/{}{path}", self.base, self.session);
        let mut request = self.client.request(method, url);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let answer: Value = request.send().unwrap().json().unwrap();
        if answer["value"].get("error").is_some() {
            panic!("WebDriver {path}: {answer}");
        }
        answer["value"].clone()
    }

    /// Opens `url`.
    pub fn go(&self, url: &str) {
        self.call(reqwest::Method::POST, "/url", Some(json!({"url": url})));
    }

    /// The element `css` finds (its WebDriver id).
    pub fn find(&self, css: &str) -> String {
        let found = self.call(
            reqwest::Method::POST,
            "/element",
            Some(json!({"using": "css selector", "value": css})),
        );
        found
            .as_object()
            .and_then(|o| o.values().next())
            .and_then(Value::as_str)
            .unwrap_or_else(|| panic!("no element {css}: {found}"))
            .to_string()
    }

    /// Types `text` into the element `css`.
    pub fn type_into(&self, css: &str, text: &str) {
        let id = self.find(css);
        self.call(
            reqwest::Method::POST,
            &format!("/element/{id}/value"),
            Some(json!({"text": text})),
        );
    }

    /// Clicks the element `css`.
    pub fn click(&self, css: &str) {
        let id = self.find(css);
        self.call(
            reqwest::Method::POST,
            &format!("/element/{id}/click"),
            Some(json!({})),
        );
    }

    /// What `script` (a function body) returns in the page.
    pub fn eval(&self, script: &str) -> Value {
        self.call(
            reqwest::Method::POST,
            "/execute/sync",
            Some(json!({"script": script, "args": []})),
        )
    }

    /// The page's address now.
    pub fn url(&self) -> String {
        self.call(reqwest::Method::GET, "/url", None)
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// A PNG of the viewport, saved at `path`.
    pub fn screenshot(&self, path: &std::path::Path) {
        use base64_engine::decode;
        let png = self.call(reqwest::Method::GET, "/screenshot", None);
        let bytes = decode(png.as_str().unwrap());
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
}

/// Standard base64, decoded (WebDriver's screenshots).
mod base64_engine {
    pub fn decode(text: &str) -> Vec<u8> {
        let value = |c: u8| -> Option<u32> {
            Some(match c {
                b'A'..=b'Z' => c - b'A',
                b'a'..=b'z' => c - b'a' + 26,
                b'0'..=b'9' => c - b'0' + 52,
                b'+' => 62,
                b'/' => 63,
                _ => return None,
            } as u32)
        };
        let mut out = Vec::with_capacity(text.len() * 3 / 4);
        let (mut acc, mut bits) = (0u32, 0);
        for v in text.bytes().filter_map(value) {
            acc = (acc << 6) | v;
            bits += 6;
            if bits >= 8 {
                bits -= 8;
                out.push((acc >> bits) as u8);
                acc &= (1 << bits) - 1;
            }
        }
        out
    }
}
