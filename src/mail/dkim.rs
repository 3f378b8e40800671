//! The DKIM edge: each signature of a mail checked by a well-kept
//! library (Stalwart's `mail-auth`), its key looked up in DNS — at the
//! server `[mail] dns` names, or the system's. What it finds is plain
//! data for [`super::verdict::judge`]; a check that cannot be made is
//! said as such, and never passes.

use std::net::SocketAddr;

use mail_auth::hickory_resolver::config::{NameServerConfigGroup, ResolverConfig, ResolverOpts};
use mail_auth::{AuthenticatedMessage, DkimResult, MessageAuthenticator};

use super::verdict::Signed;

/// Why no signature could be checked.
#[derive(Debug, thiserror::Error)]
#[error("the DKIM check could not be made: {0}")]
pub struct Unchecked(String);

/// Each DKIM signature of `raw`, checked against the keys `dns` serves
/// (the system's resolver when `None`).
pub fn check(raw: &[u8], dns: Option<SocketAddr>) -> Result<Vec<Signed>, Unchecked> {
    let Some(message) = AuthenticatedMessage::parse(raw) else {
        return Ok(Vec::new());
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Unchecked(e.to_string()))?;
    let outputs = runtime.block_on(async {
        let authenticator = match dns {
            Some(addr) => {
                let servers =
                    NameServerConfigGroup::from_ips_clear(&[addr.ip()], addr.port(), true);
                MessageAuthenticator::new(
                    ResolverConfig::from_parts(None, vec![], servers),
                    ResolverOpts::default(),
                )
            }
            None => MessageAuthenticator::new_system_conf(),
        }
        .map_err(|e| Unchecked(e.to_string()))?;
        let outputs = authenticator.verify_dkim(&message).await;
        Ok::<_, Unchecked>(
            outputs
                .iter()
                .map(|output| {
                    let signature = output.signature();
                    Signed {
                        domain: signature.map(|s| s.d.to_lowercase()).unwrap_or_default(),
                        pass: matches!(output.result(), DkimResult::Pass),
                        whole: signature.is_some_and(|s| {
                            s.l == 0 && s.h.iter().any(|h| h.eq_ignore_ascii_case("from"))
                        }),
                        said: said(output.result()),
                    }
                })
                .collect::<Vec<_>>(),
        )
    })?;
    Ok(outputs)
}

/// A result in a few words.
fn said(result: &DkimResult) -> String {
    match result {
        DkimResult::Pass => "pass".into(),
        DkimResult::Neutral(e) => format!("neutral ({e})"),
        DkimResult::Fail(e) => format!("fail ({e})"),
        DkimResult::PermError(e) => format!("permanent error ({e})"),
        DkimResult::TempError(e) => format!("temporary error ({e})"),
        DkimResult::None => "none".into(),
    }
}
