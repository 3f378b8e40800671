//! `hearth web --listen unix:PATH`, for `ssh -L`: a socket of mode 0600
//! that serves this account without the token — and still only the names
//! a forwarded browser uses, and still nothing from another page.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::process::Stdio;

use crate::common::TestHome;

/// `hearth web --listen unix:…` for `home`, without the token, once it
/// listens: the child and its socket.
fn on_a_socket(home: &TestHome) -> (std::process::Child, std::path::PathBuf) {
    let socket = home.path.with_file_name("web.sock");
    let mut cmd = home.cmd(&["web", "--listen", &format!("unix:{}", socket.display())]);
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.contains("unix:"), "{line}");
    (child, socket)
}

/// One raw HTTP/1.1 request over the socket: the status and the body.
fn ask(socket: &std::path::Path, request: &str) -> (u16, String) {
    let mut stream = UnixStream::connect(socket).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let status = answer
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status: {answer}"));
    (status, answer)
}

#[test]
fn on_a_unix_socket_the_page_is_this_accounts_alone_and_still_checks_names() {
    let home = TestHome::with_config("");
    home.ok(&["run", "--ticks", "1"]);
    let (mut child, socket) = on_a_socket(&home);
    let mode = std::fs::metadata(&socket).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "this account alone");

    // Through `ssh -L 8780:SOCKET`, the browser says localhost:8780.
    let (status, page) = ask(
        &socket,
        "GET / HTTP/1.1\r\nHost: localhost:8780\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(status, 200, "no token needed on the socket: {page}");
    let head = home.git(&["rev-parse", "HEAD"]);
    assert!(
        page.contains(String::from_utf8_lossy(&head.stdout).trim()),
        "{page}"
    );
    let (status, _) = ask(
        &socket,
        "GET / HTTP/1.1\r\nHost: attacker.example:8780\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(status, 421, "a rebound name is refused on the socket too");
    let (status, _) = ask(
        &socket,
        "POST /proposals/1/accept HTTP/1.1\r\nHost: localhost:8780\r\n\
         Origin: http://attacker.example\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(status, 403, "a form from another page is refused");
    let _ = child.kill();
    let _ = child.wait();
}

/// The smaller doors an attacker found (issue 66, item 7): two `Host`
/// headers, an absolute-form target naming another host, an `https`
/// origin on an http page, an act's body that is not a form.
#[test]
fn a_request_that_names_two_hosts_another_scheme_or_no_form_is_refused() {
    let home = TestHome::with_config("");
    home.ok(&["run", "--ticks", "1"]);
    let (mut child, socket) = on_a_socket(&home);
    let cases = [
        (
            "GET / HTTP/1.1\r\nHost: localhost:8780\r\nHost: attacker.example\r\n\
             Connection: close\r\n\r\n",
            400,
            "two Host headers",
        ),
        (
            "GET http://attacker.example/ HTTP/1.1\r\nHost: localhost:8780\r\n\
             Connection: close\r\n\r\n",
            400,
            "an absolute target naming another host",
        ),
        (
            "POST /proposals/1/accept HTTP/1.1\r\nHost: localhost:8780\r\n\
             Origin: https://localhost:8780\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            403,
            "an https origin on an http page",
        ),
        (
            "POST /proposals/1/accept HTTP/1.1\r\nHost: localhost:8780\r\n\
             Origin: http://localhost:8780\r\nContent-Type: application/json\r\n\
             Content-Length: 14\r\nConnection: close\r\n\r\n{\"commit\":\"x\"}",
            415,
            "a body that is not a form",
        ),
        (
            "GET / HTTP/1.1\r\nHost: localhost:8780\r\nConnection: close\r\n\r\n",
            200,
            "the plain request still passes",
        ),
    ];
    for (request, want, what) in cases {
        let (status, answer) = ask(&socket, request);
        assert_eq!(status, want, "{what}: {answer}");
    }
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
#[ignore = "needs root to act as another account; .ci/run runs it as root (cargo test -- --ignored)"]
fn another_account_on_the_host_gets_nothing_of_the_page() {
    let home = TestHome::with_config("");
    home.ok(&["run", "--ticks", "1"]);
    // The other account may walk to the socket: only its mode keeps it out.
    std::fs::set_permissions(
        home.path.parent().unwrap(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let (mut child, socket) = on_a_socket(&home);
    let tcp = super::Page::open(&home);
    let port = tcp.host.rsplit(':').next().unwrap().to_string();
    // As `nobody`: the socket refuses the connection; the port gives the
    // login and nothing of the home.
    let probe = format!(
        "import socket, http.client\n\
         s = socket.socket(socket.AF_UNIX)\n\
         try:\n    s.connect({:?}); print('unix: connected')\n\
         except PermissionError: print('unix: refused')\n\
         c = http.client.HTTPConnection('127.0.0.1', {port})\n\
         c.request('GET', '/memory/identity.md')\n\
         r = c.getresponse()\n\
         print('tcp:', r.status, r.getheader('Location'))\n",
        socket.display().to_string()
    );
    let out = crate::common::as_nobody(&probe);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        said,
        "unix: refused\ntcp: 303 /login?next=%2Fmemory%2Fidentity%2Emd\n"
    );
    let _ = child.kill();
    let _ = child.wait();
}
