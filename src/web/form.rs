//! The page's one kind of request body: a short
//! `application/x-www-form-urlencoded` form (a login, a decision), read
//! for one named field — and a query string (`/recall?q=…`), which is
//! written the same way.

/// The value of `name` in an `application/x-www-form-urlencoded` body.
pub(super) fn value(body: &[u8], name: &str) -> Option<String> {
    let text = std::str::from_utf8(body).ok()?;
    text.split('&')
        .filter_map(|pair| pair.split_once('='))
        .find(|(key, _)| *key == name)
        .map(|(_, value)| url_decode(value))
}

fn url_decode(value: &str) -> String {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
                match u8::from_str_radix(hex, 16) {
                    Ok(b) => {
                        out.push(b);
                        i += 2;
                    }
                    Err(_) => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_form_value_is_decoded() {
        assert_eq!(
            value(b"token=a%2Bb+c%21", "token").as_deref(),
            Some("a+b c!")
        );
        assert_eq!(
            value(b"x=1&token=s3cret", "token").as_deref(),
            Some("s3cret")
        );
        assert_eq!(value(b"x=1", "token"), None);
        assert_eq!(url_decode("100%"), "100%");
        assert_eq!(url_decode("%zz"), "%zz");
    }
}
