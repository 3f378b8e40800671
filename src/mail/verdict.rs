//! Whose a mail is: the operator's only when its `From` is one of the
//! operator's addresses *and* a DKIM signature of that address's domain
//! (or a parent of it: relaxed alignment) verifies, covering the whole
//! body and the `From` header. Anything else — a forged `From`, a
//! failing, missing or partial signature, a stranger — is outside words
//! from that sender, with what the check found. Pure: the signatures'
//! results in, the verdict out; the check itself is `dkim`.

/// One DKIM signature as checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signed {
    /// Its `d=` domain, lowercased.
    pub domain: String,
    /// Whether it verified.
    pub pass: bool,
    /// It covers the whole body (no `l=`) and signs `From`.
    pub whole: bool,
    /// What the check said, in a few words.
    pub said: String,
}

/// Whose a mail is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MailVerdict {
    /// The operator's, proven.
    Operator {
        /// How: the domain whose signature verified.
        domain: String,
    },
    /// Outside words.
    Outside {
        /// What the check found.
        why: String,
    },
}

impl std::fmt::Display for MailVerdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MailVerdict::Operator { domain } => {
                write!(f, "operator: a DKIM signature of {domain} verified")
            }
            MailVerdict::Outside { why } => write!(f, "outside: {why}"),
        }
    }
}

/// Whether `signer` may vouch for mail from `domain` (relaxed alignment:
/// the same domain or a parent of it, never a bare top-level name).
fn aligned(signer: &str, domain: &str) -> bool {
    signer.contains('.') && (domain == signer || domain.ends_with(&format!(".{signer}")))
}

/// The verdict on a mail from `from` with the signatures `signed`, for an
/// operator of the addresses `operators`.
pub fn judge(from: &str, operators: &[String], signed: &[Signed]) -> MailVerdict {
    let from = from.trim().to_lowercase();
    if from.is_empty() {
        return MailVerdict::Outside {
            why: "its From could not be read".into(),
        };
    }
    if !operators
        .iter()
        .any(|a| a.trim().eq_ignore_ascii_case(&from))
    {
        return MailVerdict::Outside {
            why: format!("{from} is not an operator address"),
        };
    }
    let domain = from.rsplit('@').next().unwrap_or("");
    if let Some(s) = signed
        .iter()
        .find(|s| s.pass && s.whole && aligned(&s.domain, domain))
    {
        return MailVerdict::Operator {
            domain: s.domain.clone(),
        };
    }
    let found = if signed.is_empty() {
        "no DKIM signature".to_string()
    } else {
        signed
            .iter()
            .map(|s| format!("d={}: {}", s.domain, s.said))
            .collect::<Vec<_>>()
            .join("; ")
    };
    MailVerdict::Outside {
        why: format!("From says {from}, but no aligned DKIM signature verified ({found})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signed(domain: &str, pass: bool, whole: bool) -> Signed {
        Signed {
            domain: domain.into(),
            pass,
            whole,
            said: if pass { "pass".into() } else { "fail".into() },
        }
    }

    #[test]
    fn only_an_operator_address_with_an_aligned_whole_signature_is_the_operator() {
        let ops = vec!["Ada@Example.org".to_string()];
        let ok = judge(
            "ada@example.org",
            &ops,
            &[signed("example.org", true, true)],
        );
        assert_eq!(
            ok,
            MailVerdict::Operator {
                domain: "example.org".into()
            }
        );
        let sub = judge(
            "ada@mail.example.org",
            &["ada@mail.example.org".into()],
            &[signed("example.org", true, true)],
        );
        assert!(
            matches!(sub, MailVerdict::Operator { .. }),
            "relaxed alignment"
        );
        for (from, sigs) in [
            ("ada@example.org", vec![]),
            ("ada@example.org", vec![signed("example.org", false, true)]),
            ("ada@example.org", vec![signed("evil.example", true, true)]),
            ("ada@example.org", vec![signed("org", true, true)]),
            ("ada@example.org", vec![signed("example.org", true, false)]),
            ("eve@example.org", vec![signed("example.org", true, true)]),
            ("", vec![signed("example.org", true, true)]),
        ] {
            assert!(
                matches!(judge(from, &ops, &sigs), MailVerdict::Outside { .. }),
                "{from} {sigs:?}"
            );
        }
    }
}
