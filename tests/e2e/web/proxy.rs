//! The page behind nginx with TLS, configured as `docs/operations.md`
//! says: the login's cookie is Secure, a decision posted through the
//! proxy is taken (the browser's origin is the proxy's name), the live
//! stream is not held back, and a name the page was not given is refused.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use reqwest::blocking::Client;
use reqwest::header::{COOKIE, LOCATION, ORIGIN, SET_COOKIE};

use super::{propose, shown_version, Page, TOKEN};
use crate::common::TestHome;

const NAME: &str = "agent.example";

/// nginx on a free port of 127.0.0.1, TLS for `agent.example`, proxying
/// to `upstream` with the server block of the docs.
struct Nginx {
    child: Child,
    port: u16,
    dir: PathBuf,
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Nginx {
    fn start(dir: &Path, upstream: &str) -> Nginx {
        let nginx = Path::new("/usr/sbin/nginx");
        assert!(
            nginx.is_file(),
            "this test runs the page behind a real nginx: install it \
             (`apt-get install nginx-light`; .ci/run does)"
        );
        crate::common::tls::self_signed(dir, NAME, &format!("DNS:{NAME}"));
        let port = crate::common::ports::free_port();
        let d = dir.display();
        // The docs' server block, on a test port; the rest is what nginx
        // needs to run unprivileged in a directory of its own.
        let config = format!(
            "daemon off;\nworker_processes 1;\npid {d}/nginx.pid;\nerror_log {d}/error.log;\n\
             events {{ worker_connections 64; }}\n\
             http {{\n  access_log off;\n  client_body_temp_path {d}/body;\n  proxy_temp_path {d}/proxy;\n\
             fastcgi_temp_path {d}/fastcgi;\n  uwsgi_temp_path {d}/uwsgi;\n  scgi_temp_path {d}/scgi;\n\
             server {{\n    listen 127.0.0.1:{port} ssl;\n    server_name {NAME};\n\
             ssl_certificate {d}/cert.pem;\n    ssl_certificate_key {d}/key.pem;\n\
             location / {{\n      proxy_pass http://{upstream};\n      proxy_set_header Host $http_host;\n\
             proxy_buffering off;\n      proxy_read_timeout 1h;\n    }}\n  }}\n}}\n"
        );
        std::fs::write(dir.join("nginx.conf"), config).unwrap();
        let child = Command::new(nginx)
            .arg("-p")
            .arg(dir)
            .arg("-c")
            .arg(dir.join("nginx.conf"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        crate::common::ports::wait_until(port, true, "nginx", || {
            std::fs::read_to_string(dir.join("error.log")).unwrap_or_default()
        });
        Nginx {
            child,
            port,
            dir: dir.to_path_buf(),
        }
    }

    /// A client that reaches `agent.example` at this nginx and trusts its
    /// certificate, as a browser with the name in DNS would.
    fn client(&self) -> Client {
        let pem = std::fs::read(self.dir.join("cert.pem")).unwrap();
        Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .add_root_certificate(reqwest::Certificate::from_pem(&pem).unwrap())
            .resolve(NAME, ([127, 0, 0, 1], self.port).into())
            .build()
            .unwrap()
    }

    fn origin(&self) -> String {
        format!("https://{NAME}:{}", self.port)
    }
}

#[test]
fn behind_nginx_with_tls_the_page_logs_in_securely_and_takes_a_decision() {
    let home = TestHome::with_config("");
    home.ok(&["run", "--ticks", "1"]);
    let n = propose(&home, "Speak in riddles", "# Me\n\nI speak in riddles.\n");
    let dir = tempfile::tempdir().unwrap();
    // The page on loopback first, to learn its port; nginx in front.
    let probe = Page::open_with(&home, &["--allow-act", "--behind-https"]);
    let upstream = probe.host.clone();
    let nginx = Nginx::start(dir.path(), &upstream);
    let public = format!("{NAME}:{}", nginx.port);
    drop(probe);
    let serve = |flags: &[&str]| {
        let mut cmd = home.cmd(&["web", "--listen", &upstream]);
        cmd.args(flags);
        Page::start(cmd, &home.path.with_file_name("web.log"))
    };
    let page = serve(&["--allow-act", "--behind-https", "--host", &public]);
    let client = nginx.client();
    let origin = nginx.origin();

    let login = client
        .post(format!("{origin}/login"))
        .header(ORIGIN, &origin)
        .form(&[("token", TOKEN)])
        .send()
        .unwrap();
    assert_eq!(login.status(), 303, "{:?}", login.text());
    let set = login.headers()[SET_COOKIE].to_str().unwrap().to_string();
    assert!(set.contains("Secure") && set.contains("HttpOnly"), "{set}");
    let cookie = set.split(';').next().unwrap().to_string();

    let shown = client
        .get(format!("{origin}/proposals/{n}"))
        .header(COOKIE, &cookie)
        .send()
        .unwrap()
        .text()
        .unwrap();
    let version = shown_version(&shown, n);
    let accepted = client
        .post(format!("{origin}/proposals/{n}/accept"))
        .header(ORIGIN, &origin)
        .header(COOKIE, &cookie)
        .form(&[("commit", version.as_str())])
        .send()
        .unwrap();
    assert_eq!(accepted.status(), 303, "{:?}", accepted.text());
    assert_eq!(accepted.headers()[LOCATION], "/proposals");
    let identity = std::fs::read_to_string(home.file("memory/identity.md")).unwrap();
    assert!(identity.contains("riddles"), "{identity}");

    // The live stream comes through as it is written (proxy_buffering off).
    let mut events = client
        .get(format!("{origin}/events"))
        .header(COOKIE, &cookie)
        .send()
        .unwrap();
    let mut first = [0u8; 64];
    let read = std::io::Read::read(&mut events, &mut first).unwrap();
    assert!(
        String::from_utf8_lossy(&first[..read]).starts_with("event: commit"),
        "{:?}",
        String::from_utf8_lossy(&first[..read])
    );

    // The same proxy in front of a page not told its name: refused.
    drop(events);
    drop(page);
    let _unnamed = serve(&["--allow-act"]);
    let refused = client.get(format!("{origin}/login")).send().unwrap();
    assert_eq!(refused.status(), 421);
}
