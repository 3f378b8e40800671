//! The bearer token both doors take: read by one rule, compared in
//! constant time, and refused when it is short enough to guess.

/// The token of an `Authorization: Bearer TOKEN` header, the one rule both
/// HTTP doors read it by: the scheme's name in any case (RFC 9110, 11.1),
/// one or more spaces, then the token.
pub fn bearer(header: Option<&[u8]>) -> Option<&[u8]> {
    let header = header?.trim_ascii();
    let scheme = header.get(..6)?;
    let rest = header.get(6..)?;
    let token = rest.trim_ascii_start();
    (scheme.eq_ignore_ascii_case(b"bearer") && token.len() < rest.len() && !token.is_empty())
        .then_some(token)
}

/// Whether `given` is `token`, compared in time that does not depend on
/// where they differ: no byte is learned by timing. Both HTTP doors check
/// their tokens with it.
pub fn token_matches(given: &[u8], token: &str) -> bool {
    given.len() == token.len()
        && given
            .iter()
            .zip(token.as_bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

/// Whether a request may pass: with no token, every request (the door is
/// a Unix socket of this account's); with one, only those that carry it
/// as `Authorization: Bearer`.
pub fn authorized(header: Option<&[u8]>, token: Option<&str>) -> bool {
    let Some(token) = token else {
        return true;
    };
    bearer(header).is_some_and(|given| token_matches(given, token))
}

#[cfg(test)]
mod tests {
    use super::authorized;

    #[test]
    fn a_token_is_needed_when_one_is_set_and_must_match_whole() {
        assert!(authorized(None, None), "loopback without a token");
        assert!(authorized(Some(b"Bearer s3cret"), Some("s3cret")));
        assert!(authorized(Some(b"bearer s3cret"), Some("s3cret")));
        assert!(authorized(Some(b"BEARER  s3cret"), Some("s3cret")));
        assert!(!authorized(Some(b"Bearers3cret"), Some("s3cret")));
        assert!(!authorized(Some(b"Basic s3cret"), Some("s3cret")));
        assert!(!authorized(Some(b"Bearer "), Some("s3cret")));
        assert!(!authorized(None, Some("s3cret")));
        assert!(!authorized(Some(b"Bearer s3cre"), Some("s3cret")));
        assert!(!authorized(Some(b"Bearer s3cretX"), Some("s3cret")));
        assert!(
            !authorized(Some(b"s3cret"), Some("s3cret")),
            "the scheme is said"
        );
    }
}
