//! Real mail peers for the tests: Debian's Dovecot serving IMAP (IDLE,
//! `imaps://` and STARTTLS) with a certificate of a CA made for the test,
//! mail delivered into it by `doveadm save`; dnsmasq serving a DKIM key on
//! 127.0.0.1; and dkimpy signing mail with the private half. `.ci/run`
//! installs them; a test without them fails with the fix.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The fix, when a peer is missing.
const INSTALL: &str = "apt-get install dovecot-imapd dnsmasq-base openssl (as .ci/run does)";

fn run(cmd: &mut Command) -> std::process::Output {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{cmd:?} could not run ({e}); fix: {INSTALL}"));
    assert!(out.status.success(), "{cmd:?}: {out:?}");
    out
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn wait_for_port(port: u16, what: &str, log: &Path) {
    let start = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "{what} never listened on {port}: {}",
            std::fs::read_to_string(log).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A CA and a certificate it signed for 127.0.0.1 and localhost.
pub struct Certs {
    /// The CA's certificate (what `SSL_CERT_FILE` points at).
    pub ca: PathBuf,
    /// The server's certificate and key.
    pub cert: PathBuf,
    /// Its key.
    pub key: PathBuf,
}

impl Certs {
    /// Made with `openssl` in `dir`.
    pub fn make(dir: &Path) -> Certs {
        let p = |name: &str| dir.join(name);
        run(Command::new("openssl")
            .args([
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
            ])
            .args(["-subj", "/CN=hearth test CA"])
            .arg("-keyout")
            .arg(p("ca.key"))
            .arg("-out")
            .arg(p("ca.pem")));
        run(Command::new("openssl")
            .args([
                "req",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-subj",
                "/CN=localhost",
            ])
            .arg("-keyout")
            .arg(p("server.key"))
            .arg("-out")
            .arg(p("server.csr")));
        std::fs::write(
            p("san.ext"),
            "subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n",
        )
        .unwrap();
        run(Command::new("openssl")
            .args(["x509", "-req", "-days", "2", "-CAcreateserial"])
            .arg("-in")
            .arg(p("server.csr"))
            .arg("-CA")
            .arg(p("ca.pem"))
            .arg("-CAkey")
            .arg(p("ca.key"))
            .arg("-extfile")
            .arg(p("san.ext"))
            .arg("-out")
            .arg(p("server.pem")));
        Certs {
            ca: p("ca.pem"),
            cert: p("server.pem"),
            key: p("server.key"),
        }
    }
}

/// Dovecot, serving one account (`agent`, password [`Dovecot::PASSWORD`])
/// over `imaps://` and STARTTLS, on ports of its own.
pub struct Dovecot {
    child: Child,
    /// Where its configuration, certificates and mail are.
    pub dir: tempfile::TempDir,
    /// `imaps://127.0.0.1:PORT`.
    pub imaps: u16,
    /// `imap://127.0.0.1:PORT` (STARTTLS).
    pub imap: u16,
    /// The CA that signed its certificate.
    pub ca: PathBuf,
}

impl Drop for Dovecot {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Dovecot {
    /// The account's password.
    pub const PASSWORD: &'static str = "a-mailbox-password";

    /// Starts it in the foreground, on free ports of 127.0.0.1.
    pub fn start() -> Dovecot {
        Dovecot::start_with("")
    }

    /// [`Dovecot::start`] with `extra` added to its configuration.
    pub fn start_with(extra: &str) -> Dovecot {
        let dir = tempfile::tempdir().unwrap();
        let certs = Certs::make(dir.path());
        let (imaps, imap) = (free_port(), free_port());
        let d = dir.path().display();
        std::fs::write(
            dir.path().join("users"),
            format!("agent:{{PLAIN}}{}::::::\n", Dovecot::PASSWORD),
        )
        .unwrap();
        for sub in ["run", "state", "mail"] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        }
        // Dovecot keeps mail as an account of its own (never root's): the
        // account `nobody`, which must reach its mail here.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        std::os::unix::fs::chown(dir.path().join("mail"), Some(65534), Some(65534)).unwrap();
        let conf = format!(
            "base_dir = {d}/run\nstate_dir = {d}/state\nlog_path = {d}/dovecot.log\n\
             protocols = imap\nlisten = 127.0.0.1\nssl = required\n\
             ssl_cert = <{cert}\nssl_key = <{key}\ndisable_plaintext_auth = yes\n\
             auth_mechanisms = plain login\n\
             mail_location = maildir:{d}/mail/%u\n\
             passdb {{\n  driver = passwd-file\n  args = scheme=PLAIN username_format=%u {d}/users\n}}\n\
             userdb {{\n  driver = static\n  args = uid=65534 gid=65534 home={d}/mail/%u\n}}\n\
             service imap-login {{\n  inet_listener imap {{\n    port = {imap}\n  }}\n  \
             inet_listener imaps {{\n    port = {imaps}\n    ssl = yes\n  }}\n}}\n\
             service stats {{\n  unix_listener stats-reader {{\n    mode = 0600\n  }}\n  \
             unix_listener stats-writer {{\n    mode = 0600\n  }}\n}}\n{extra}\n",
            cert = certs.cert.display(),
            key = certs.key.display(),
        );
        let conf_path = dir.path().join("dovecot.conf");
        std::fs::write(&conf_path, conf).unwrap();
        let child = Dovecot::spawn(dir.path());
        Dovecot {
            child,
            ca: certs.ca,
            imaps,
            imap,
            dir,
        }
    }

    /// `dovecot -F` with the configuration in `dir`, once it listens.
    fn spawn(dir: &Path) -> Child {
        let log = dir.join("stderr.log");
        let child = Command::new("dovecot")
            .arg("-F")
            .arg("-c")
            .arg(dir.join("dovecot.conf"))
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap_or_else(|e| panic!("dovecot could not start ({e}); fix: {INSTALL}"));
        let conf = std::fs::read_to_string(dir.join("dovecot.conf")).unwrap();
        for port in conf
            .lines()
            .filter_map(|l| l.trim().strip_prefix("port = "))
            .filter_map(|p| p.parse().ok())
        {
            wait_for_port(port, "dovecot", &log);
        }
        child
    }

    /// Stops the server, dropping every connection (what a crash or a
    /// restart of the operator's mail server does), until [`Dovecot::restart`].
    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        // Its login processes go with their master; the ports free once
        // they have.
        for port in [self.imaps, self.imap] {
            let start = Instant::now();
            while std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                assert!(
                    start.elapsed() < Duration::from_secs(20),
                    "dovecot kept {port}"
                );
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }

    /// Starts it again, as it was (its mail, ports and certificate).
    pub fn restart(&mut self) {
        self.child = Dovecot::spawn(self.dir.path());
    }

    /// Delivers `raw` into the account's INBOX, as an MTA's delivery
    /// agent does (`doveadm save`).
    pub fn deliver(&self, raw: &[u8]) {
        use std::io::Write;
        let mut child = Command::new("doveadm")
            .arg("-c")
            .arg(self.dir.path().join("dovecot.conf"))
            .args(["save", "-u", "agent", "-m", "INBOX"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("doveadm could not run ({e}); fix: {INSTALL}"));
        child.stdin.take().unwrap().write_all(raw).unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "doveadm save: {out:?}");
    }

    /// Delivers `raw` while the server is down, as a local delivery agent
    /// does: a file in the Maildir's `new/`, which the server finds when
    /// it is back.
    pub fn deliver_to_maildir(&self, raw: &[u8]) {
        let new = self.dir.path().join("mail/agent/new");
        std::fs::create_dir_all(&new).unwrap();
        let name = format!("{}.hearth-test.{}", std::process::id(), raw.len());
        let path = new.join(name);
        std::fs::write(&path, raw).unwrap();
        std::os::unix::fs::chown(&path, Some(65534), Some(65534)).unwrap();
    }

    /// The flags of every mail in INBOX, by UID (`doveadm fetch`).
    pub fn seen(&self) -> Vec<(u32, bool)> {
        let out = run(Command::new("doveadm")
            .arg("-c")
            .arg(self.dir.path().join("dovecot.conf"))
            .args(["fetch", "-u", "agent", "uid flags", "mailbox", "INBOX"]));
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        let mut mails = Vec::new();
        let mut uid = None;
        for line in text.lines() {
            if let Some(n) = line.strip_prefix("uid: ") {
                uid = n.trim().parse().ok();
            }
            if let (Some(flags), Some(n)) = (line.strip_prefix("flags:"), uid) {
                mails.push((n, flags.contains("\\Seen")));
                uid = None;
            }
        }
        mails
    }

    /// Makes the server renumber INBOX (a new UIDVALIDITY, the same mail),
    /// as a restored or rebuilt mailbox does.
    pub fn renumber(&self) {
        run(Command::new("doveadm")
            .arg("-c")
            .arg(self.dir.path().join("dovecot.conf"))
            .args(["mailbox", "update", "-u", "agent", "--uid-validity"])
            .arg(format!("{}", 1_900_000_000 + std::process::id() % 1000))
            .arg("INBOX"));
    }
}

/// dnsmasq answering TXT queries for DKIM keys on 127.0.0.1.
pub struct Dns {
    child: Child,
    /// Where it answers (`[mail] dns`).
    pub addr: String,
}

impl Drop for Dns {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Dns {
    /// Serves `records` (`name`, `text`) as TXT records.
    pub fn start(records: &[(&str, &str)], log: &Path) -> Dns {
        let port = free_port();
        let mut cmd = Command::new("dnsmasq");
        cmd.args([
            "--keep-in-foreground",
            "--no-resolv",
            "--no-hosts",
            "--bind-interfaces",
        ])
        .args(["--listen-address=127.0.0.1", "--user=root", "--pid-file"])
        .arg(format!("--port={port}"))
        .arg("--log-queries")
        .arg(format!("--log-facility={}", log.display()));
        for (name, text) in records {
            // TXT strings are at most 255 bytes: a long one is split
            // (dnsmasq splits at commas; on its command line, quotes are
            // kept as text).
            let parts: Vec<String> = text
                .as_bytes()
                .chunks(250)
                .map(|c| String::from_utf8_lossy(c).into_owned())
                .collect();
            cmd.arg(format!("--txt-record={name},{}", parts.join(",")));
        }
        let child = cmd
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("dnsmasq could not start ({e}); fix: {INSTALL}"));
        // It answers on UDP; give it the moment it takes to bind.
        let start = Instant::now();
        loop {
            let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
            socket
                .set_read_timeout(Some(Duration::from_millis(200)))
                .unwrap();
            // A query for `.` of type NS: any answer means it is up.
            let query = [0x12, 0x34, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 1];
            socket.send_to(&query, ("127.0.0.1", port)).unwrap();
            let mut buf = [0u8; 512];
            if socket.recv_from(&mut buf).is_ok() {
                break;
            }
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "dnsmasq never answered: {}",
                std::fs::read_to_string(log).unwrap_or_default()
            );
        }
        Dns {
            child,
            addr: format!("127.0.0.1:{port}"),
        }
    }
}

/// A DKIM key pair for `domain` (selector `test`): the private key's
/// PEM, and the TXT record (`test._domainkey.DOMAIN`, `v=DKIM1; …`).
pub fn dkim_key(dir: &Path, domain: &str) -> (PathBuf, (String, String)) {
    let key = dir.join(format!("{domain}.key"));
    run(Command::new("openssl")
        .args(["genrsa", "-out"])
        .arg(&key)
        .arg("2048"));
    let out = run(Command::new("openssl")
        .args(["rsa", "-pubout", "-in"])
        .arg(&key));
    // The PEM's body is the key's DER in base64, as the record carries it.
    let public: String = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.starts_with("-----"))
        .collect();
    (
        key,
        (
            format!("test._domainkey.{domain}"),
            format!("v=DKIM1; k=rsa; p={public}"),
        ),
    )
}

/// `raw` signed by dkimpy with `key` as `domain` (selector `test`).
pub fn dkim_sign(python: &Path, raw: &[u8], domain: &str, key: &Path) -> Vec<u8> {
    use std::io::Write;
    let script = "import sys, dkim\n\
                  raw = sys.stdin.buffer.read()\n\
                  key = open(sys.argv[2], 'rb').read()\n\
                  sig = dkim.sign(raw, b'test', sys.argv[1].encode(), key, \
                  include_headers=[b'from', b'to', b'subject', b'date', b'message-id'])\n\
                  sys.stdout.buffer.write(sig + raw)\n";
    let mut child = Command::new(python)
        .args(["-c", script, domain])
        .arg(key)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(raw).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "dkimpy: {out:?}");
    out.stdout
}
