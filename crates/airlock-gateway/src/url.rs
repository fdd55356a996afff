//! Percent-encoding of one URL path segment, for ids and names that come from elsewhere (tool
//! names from MCP servers, approval ids typed by people): everything but RFC 3986's unreserved
//! characters is escaped, so a `/`, `?` or `#` in a name never changes which route is asked.

/// `s` as one path segment.
pub fn segment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_unreserved_characters_stay() {
        assert_eq!(segment("apr-1_a.b~c"), "apr-1_a.b~c");
        assert_eq!(segment("a/b?c#d e"), "a%2Fb%3Fc%23d%20e");
        assert_eq!(segment("é"), "%C3%A9");
    }
}
