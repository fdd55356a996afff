//! Typed answers in a chat: `/approve CODE`, `/deny CODE reason` (Telegram, also
//! `/approve@botname CODE`) and `!approve CODE` / `!deny CODE reason` (Discord's fallback). CODE is
//! what the message showed: the action's tier-4 code, or a random code below tier 4. Anything
//! else is not a command and is ignored.

/// A typed answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Typed {
    pub approve: bool,
    /// Upper-cased.
    pub code: String,
    pub reason: String,
}

/// The longest text read as a command; longer messages are not answers.
const MAX_COMMAND: usize = 2048;

/// The command `text` holds, if it is one.
pub fn parse(text: &str) -> Option<Typed> {
    if text.len() > MAX_COMMAND {
        return None;
    }
    let text = text.trim();
    let (word, rest) = match text.split_once(char::is_whitespace) {
        Some((w, r)) => (w, r.trim()),
        None => (text, ""),
    };
    let word = word.split_once('@').map_or(word, |(w, _)| w);
    let approve = match word.to_ascii_lowercase().as_str() {
        "/approve" | "!approve" => true,
        "/deny" | "!deny" => false,
        _ => return None,
    };
    let (code, reason) = match rest.split_once(char::is_whitespace) {
        Some((c, r)) => (c, r.trim()),
        None => (rest, ""),
    };
    if code.is_empty() || code.len() > 16 || !code.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return None;
    }
    Some(Typed {
        approve,
        code: code.to_ascii_uppercase(),
        reason: reason.chars().take(500).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands() {
        assert_eq!(
            parse("/approve k7p2qx"),
            Some(Typed {
                approve: true,
                code: "K7P2QX".into(),
                reason: String::new()
            })
        );
        assert_eq!(
            parse("/deny@airlock_bot K7P2QX  not on a Friday "),
            Some(Typed {
                approve: false,
                code: "K7P2QX".into(),
                reason: "not on a Friday".into()
            })
        );
        assert!(parse("!approve AB12").is_some_and(|t| t.approve));
        assert_eq!(parse("/approve"), None);
        assert_eq!(parse("/approve ../../x"), None);
        assert_eq!(parse("approve K7P2QX"), None);
        assert_eq!(parse("/start"), None);
        assert_eq!(parse(&"/deny X ".repeat(1000)), None);
    }
}
