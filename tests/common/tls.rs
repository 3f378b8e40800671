//! A self-signed certificate for the tests' TLS servers (lighttpd for
//! git over https, nginx in front of the page), made by `openssl`.

use std::path::Path;
use std::process::{Command, Stdio};

/// Writes `key.pem` and `cert.pem` into `dir`: a certificate for `name`
/// (`DNS:agent.example`, `IP:127.0.0.1` as `subjectAltName` says it),
/// good for two days, not a CA (rustls refuses a CA as a server's own).
pub fn self_signed(dir: &Path, common_name: &str, alt_name: &str) {
    let made = Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
        ])
        .args(["-subj", &format!("/CN={common_name}")])
        .args(["-addext", &format!("subjectAltName={alt_name}")])
        .args(["-addext", "basicConstraints=critical,CA:FALSE"])
        .arg("-keyout")
        .arg(dir.join("key.pem"))
        .arg("-out")
        .arg(dir.join("cert.pem"))
        .stderr(Stdio::null())
        .status()
        .expect("openssl must be installed (`apt-get install openssl`; .ci/run does)");
    assert!(made.success(), "openssl could not make a certificate");
}
