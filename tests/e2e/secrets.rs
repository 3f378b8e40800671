//! No process hearth starts reads hearth's secrets (issue 66, item 1). Run
//! as an ordinary account, as a service runs: a tool (in a tick, a job's
//! run, an ask, a chat client's ask through the page, and approved from
//! the page), a job's check and `[flares]
//! exec` each walk their ancestors' `/proc/PID/environ` and their own, and
//! find neither the model's key nor a door's token. Before, a
//! tool read the key from the tick's and the supervisor's environ, and a
//! check and `[flares] exec` had it in their own.
//!
//! Root only: hearth must run as another account than the test's (root
//! reads every process whatever its flags).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::common::model_server::{anthropic, Answer, ModelServer};
use crate::common::{TestHome, PINNED_NOW};

const KEY: &str = "sk-ant-SECRET-of-the-model";
const WEB_TOKEN: &str = "web-SECRET-token-of-the-page-0123456789";

/// Walks from itself up through its ancestors, noting for each whether
/// its environ could be read and whether a secret was in it; writes what
/// it found to `OUT/KIND-PID`, and says "walked" (a check's "work to do").
const WALKER: &str = r#"
import os, sys, time
out, kind = sys.argv[1], sys.argv[2]
pid, chain, leaks = os.getpid(), [], []
while pid > 1:
    try:
        comm = open(f'/proc/{pid}/comm').read().strip()
        stat = open(f'/proc/{pid}/stat').read()
    except OSError:
        break
    try:
        env = open(f'/proc/{pid}/environ', 'rb').read()
        chain.append(f'{comm}:read')
        if b'SECRET' in env:
            leaks.append(f'{comm}:{pid}')
    except OSError:
        chain.append(f'{comm}:refused')
    pid = int(stat.rsplit(')', 1)[1].split()[1])
# Every process it can see at all, and whose environ it can read.
for entry in os.listdir('/proc'):
    if not entry.isdigit():
        continue
    try:
        comm = open(f'/proc/{entry}/comm').read().strip()
    except OSError:
        continue
    if comm == 'hearth':
        chain.append('seen-hearth')
    try:
        if b'SECRET' in open(f'/proc/{entry}/environ', 'rb').read():
            leaks.append(f'{comm}:{entry}')
    except OSError:
        pass
# In a pid namespace every walker may be pid 2: the time tells them apart.
# Written aside and renamed: a walker still running (`[flares] exec` runs in
# the background) is never read half-written.
name = f'{kind}-{os.getpid()}-{time.time_ns()}'
with open(os.path.join(out, '.' + name), 'w') as f:
    f.write(' '.join(chain) + '\nleaks:' + ' '.join(leaks) + '\n')
os.replace(os.path.join(out, '.' + name), os.path.join(out, name))
print('walked')
"#;

/// Calls the `spy` tool once per exchange, then says it is done.
fn spy_caller(body: &Value) -> Answer {
    let last = body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .map(Value::to_string)
        .unwrap_or_default();
    // A stranger's message asks for the acting tool, which then waits for
    // the operator's approval; everything else calls the read-only spy.
    let tool = if last.contains("newsletter") {
        "act"
    } else {
        "spy"
    };
    let events = if last.contains("tool_result") {
        anthropic::message("Done.", &[], 10, 1)
    } else {
        anthropic::message("", &[("toolu_spy", tool, &["{}"])], 10, 1)
    };
    Answer::Stream { events, hang: None }
}

/// `hearth ARGS` as `nobody`, with the key and the page's token in its
/// environment as a service's unit would give them (not yet started).
fn nobody_cmd(home: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new("setpriv");
    cmd.args(["--reuid=nobody", "--regid=nogroup", "--clear-groups"])
        .arg(crate::common::HEARTH)
        .arg("--home")
        .arg(home)
        .args(args)
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", home.parent().unwrap())
        .env("HEARTH_NOW", PINNED_NOW)
        .env("ANTHROPIC_API_KEY", KEY)
        .env("HEARTH_WEB_TOKEN", WEB_TOKEN)
        .env("HEARTH_MCP_TOKEN", WEB_TOKEN);
    cmd
}

/// `hearth web --allow-act` on `home` as `nobody`, and where it listens.
fn page_as_nobody(home: &Path) -> (std::process::Child, String) {
    let mut page = nobody_cmd(home, &["web", "--listen", "127.0.0.1:0", "--allow-act"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let base = crate::common::page_address(&mut page);
    (page, base)
}

/// Approves request `n` from the page, served by `hearth web` as `nobody`.
fn approve_from_the_page(home: &Path, n: u64) {
    let (mut page, base) = page_as_nobody(home);
    let client = reqwest::blocking::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let shown = client
        .get(format!("{base}/requests/{n}"))
        .bearer_auth(WEB_TOKEN)
        .send()
        .unwrap()
        .text()
        .unwrap();
    let marker = "name=\"digest\" value=\"";
    let at = shown.find(marker).expect("an approve form") + marker.len();
    let digest = &shown[at..at + shown[at..].find('"').unwrap()];
    let approved = client
        .post(format!("{base}/requests/{n}/approve"))
        .bearer_auth(WEB_TOKEN)
        .header(reqwest::header::ORIGIN, &base)
        .form(&[("digest", digest)])
        .send()
        .unwrap();
    let _ = page.kill();
    let _ = page.wait();
    assert_eq!(
        approved.status(),
        303,
        "{}",
        approved.text().unwrap_or_default()
    );
}

/// Asks through the page's chat API (`/v1/chat/completions`), served by
/// `hearth web` as `nobody`: its ask runs the tool too.
fn chat_from_the_page(home: &Path, question: &str) {
    let (mut page, base) = page_as_nobody(home);
    let model = home.file_name().unwrap().to_str().unwrap();
    let asked = reqwest::blocking::Client::new()
        .post(format!("{base}/v1/chat/completions"))
        .bearer_auth(WEB_TOKEN)
        .json(&serde_json::json!({"model": model,
            "messages": [{"role": "user", "content": question}]}))
        .send()
        .unwrap();
    let status = asked.status();
    let said = asked.text().unwrap_or_default();
    let _ = page.kill();
    let _ = page.wait();
    assert_eq!(status, 200, "{said}");
}

/// `hearth ARGS` as `nobody`, asserting exit 0.
fn as_nobody(home: &Path, args: &[&str]) -> std::process::Output {
    let out = nobody_cmd(home, args)
        .output()
        .expect("setpriv (util-linux) runs hearth as nobody");
    assert!(
        out.status.success(),
        "hearth {args:?} as nobody: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// What each walker of `kind` wrote: (its chain, its leaks).
fn walks(out: &Path, kind: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(out).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with(&format!("{kind}-")) {
            let text = std::fs::read_to_string(entry.path()).unwrap();
            let (chain, leaks) = text.split_once("\nleaks:").unwrap();
            found.push((chain.to_string(), leaks.trim().to_string()));
        }
    }
    found
}

fn world_writable(dir: &Path) {
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o1777)).unwrap();
}

#[test]
#[ignore = "needs root to run hearth as another account; .ci/run runs it as root (cargo test -- --ignored)"]
fn no_tool_check_or_flare_command_reads_a_key_or_token_from_any_ancestor() {
    let server = ModelServer::start(vec![Answer::Respond(spy_caller)]);
    let home = TestHome::new();
    let root: PathBuf = home.path.clone();
    world_writable(root.parent().unwrap());
    let out = tempfile::tempdir().unwrap();
    world_writable(out.path());
    let walker = out.path().join("walker.py");
    std::fs::write(&walker, WALKER).unwrap();
    let run = |kind: &str| {
        format!(
            "[\"/usr/bin/python3\", \"{}\", \"{}\", \"{kind}\"]",
            walker.display(),
            out.path().display()
        )
    };

    // Each walker runs in its sandbox, which writes only what it grants.
    let grant = format!("[{:?}]", out.path());
    as_nobody(&root, &["init"]);
    let config = format!(
        "[model]\nprovider = \"anthropic\"\nmodel = \"claude-test\"\nbase_url = \"{}\"\n\
         timeout_s = 5\nmax_retries = 1\nretry_base_ms = 10\n\
         [flares]\nexec = \"/usr/bin/python3 {} {} flare\"\nwrite = [{:?}]\n",
        server.url,
        walker.display(),
        out.path().display(),
        out.path()
    );
    let write = |rel: &str, text: &str| {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
    };
    write("hearth.toml", &config);
    write(
        "tools/spy.toml",
        &format!(
            "name = \"spy\"\ndescription = \"walks its ancestors\"\nread_only = true\n\
             command = {}\nwrite = {}\n[parameters]\ntype = \"object\"\n",
            run("tool"),
            grant
        ),
    );
    write(
        "tools/act.toml",
        &format!(
            "name = \"act\"\ndescription = \"acts outside the home\"\n\
             command = {}\nwrite = {}\n[parameters]\ntype = \"object\"\n",
            run("approved"),
            grant
        ),
    );
    write(
        "jobs/spy.toml",
        &format!(
            "schedule = \"0 7 * * *\"\ntimezone = \"UTC\"\nprompt = \"Look around.\"\n\
             check = {}\ncheck_output = \"mine\"\nwrite = {}\n",
            run("check"),
            grant
        ),
    );
    Command::new("chown")
        .args(["-R", "nobody:nogroup"])
        .arg(&root)
        .status()
        .unwrap();
    as_nobody(&root, &["trust"]);

    // A job's run: its check, then its tick's tool call.
    as_nobody(&root, &["jobs", "run", "spy"]);
    // A state file deleted by hand: put back, with a flare for `exec`.
    std::fs::remove_file(root.join("state/messages.json")).unwrap();
    // A tick of its own, and its flare announced meanwhile.
    as_nobody(&root, &["say", "look around"]);
    as_nobody(&root, &["run", "--ticks", "2"]);
    // An ask, whose exchange calls the tool too.
    as_nobody(&root, &["ask", "look around"]);
    // A stranger's message makes the acting tool a request; approved from
    // the page, the supervisor runs it.
    write(
        "inbox/newsletter.md",
        "---\nfrom: newsletter@example.com\nsubject: news\n---\nnewsletter: act now\n",
    );
    as_nobody(&root, &["run", "--ticks", "1"]);
    assert!(
        walks(out.path(), "approved").is_empty(),
        "a stranger's words acted"
    );
    approve_from_the_page(&root, 1);
    as_nobody(&root, &["run", "--ticks", "1"]);
    // A chat client's question, asked by the page's child `hearth ask`.
    let before = walks(out.path(), "tool").len();
    chat_from_the_page(&root, "look around");
    assert!(
        walks(out.path(), "tool").len() > before,
        "the chat ask's exchange called the tool"
    );

    for kind in ["tool", "check", "flare", "approved"] {
        let found = walks(out.path(), kind);
        assert!(!found.is_empty(), "the {kind} ran and walked");
        for (chain, leaks) in &found {
            assert!(
                leaks.is_empty(),
                "a {kind} read a secret from {leaks} (chain: {chain})"
            );
        }
    }
    // Each ran in its sandbox, in a pid namespace of its own: no process
    // of hearth's is there to see, let alone read.
    for kind in ["tool", "check", "flare", "approved"] {
        for (chain, _) in walks(out.path(), kind) {
            assert!(
                !chain.contains("hearth"),
                "a {kind} saw a hearth process: {chain}"
            );
        }
    }
    let tools = walks(out.path(), "tool").len();
    assert!(
        tools >= 4,
        "the tool ran in the job's tick, a tick, an ask and a chat ask: {tools}"
    );
}
