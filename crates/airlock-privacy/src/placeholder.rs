//! Placeholders: a [`Vault`] lives for one request. It replaces each secret with
//! `[SECRET:<rule>#n]` (one way: the value is not kept) and each piece of personal data with
//! `[PII:<rule>#n]`, the same value always with the same placeholder; its [`Restorer`] puts the
//! personal data back into the answer, and a [`StreamRestorer`] does so across the chunks of a
//! streamed answer, holding back a placeholder cut between two chunks.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use super::rules::Kind;
use super::scan::Finding;

/// One value replaced: its rule, kind, placeholder and the value itself (for the caller to hash
/// before it drops the vault; never to be written anywhere).
#[derive(Debug, Clone)]
pub struct Replaced {
    pub rule: Arc<str>,
    pub kind: Kind,
    pub placeholder: String,
    pub value: String,
}

/// The placeholders of one request.
#[derive(Debug, Default)]
pub struct Vault {
    by_value: HashMap<(Kind, String), String>,
    counts: HashMap<(Kind, Arc<str>), usize>,
    replaced: Vec<Replaced>,
}

/// The longest placeholder a restorer looks for, `[PII:` included.
const MAX_PLACEHOLDER: usize = 64;
const PII_OPEN: &str = "[PII:";

impl Vault {
    pub fn new() -> Vault {
        Vault::default()
    }

    /// `text` with every finding (from a scan of this same text) replaced.
    pub fn redact(&mut self, text: &str, findings: &[Finding]) -> String {
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for f in findings {
            let (Some(before), Some(value)) =
                (text.get(at..f.span.start), text.get(f.span.clone()))
            else {
                continue;
            };
            out.push_str(before);
            out.push_str(&self.placeholder(f, value));
            at = f.span.end;
        }
        out.push_str(text.get(at..).unwrap_or_default());
        out
    }

    fn placeholder(&mut self, f: &Finding, value: &str) -> String {
        let key = (f.kind, value.to_string());
        if let Some(p) = self.by_value.get(&key) {
            return p.clone();
        }
        let n = self.counts.entry((f.kind, f.rule.clone())).or_default();
        *n += 1;
        let p = format!("[{}:{}#{}]", f.kind.tag(), f.rule, n);
        self.by_value.insert(key, p.clone());
        self.replaced.push(Replaced {
            rule: f.rule.clone(),
            kind: f.kind,
            placeholder: p.clone(),
            value: value.to_string(),
        });
        p
    }

    /// Every value replaced, in the order first seen.
    pub fn replaced(&self) -> &[Replaced] {
        &self.replaced
    }

    /// Whether nothing was replaced.
    pub fn is_empty(&self) -> bool {
        self.replaced.is_empty()
    }

    /// The restorer of this request's personal data (`None` when there is none).
    pub fn restorer(&self) -> Option<Restorer> {
        let map: HashMap<String, String> = self
            .replaced
            .iter()
            .filter(|r| r.kind == Kind::Personal)
            .map(|r| (r.placeholder.clone(), r.value.clone()))
            .collect();
        (!map.is_empty()).then_some(Restorer { map: Arc::new(map) })
    }
}

/// Puts personal data back in place of its placeholders.
#[derive(Debug, Clone)]
pub struct Restorer {
    map: Arc<HashMap<String, String>>,
}

impl Restorer {
    /// `text` with every known placeholder restored, each value passed through `escape` (for
    /// text inside a JSON string, its escaping).
    pub fn restore_with<'t>(&self, text: &'t str, escape: impl Fn(&str) -> String) -> Cow<'t, str> {
        if !text.contains(PII_OPEN) {
            return Cow::Borrowed(text);
        }
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(i) = rest.find(PII_OPEN) {
            out.push_str(&rest[..i]);
            let tail = &rest[i..];
            let close = tail.bytes().take(MAX_PLACEHOLDER).position(|b| b == b']');
            match close.and_then(|c| self.map.get(&tail[..=c]).map(|v| (c, v))) {
                Some((c, v)) => {
                    out.push_str(&escape(v));
                    rest = &tail[c + 1..];
                }
                None => {
                    out.push_str(PII_OPEN);
                    rest = &tail[PII_OPEN.len()..];
                }
            }
        }
        out.push_str(rest);
        Cow::Owned(out)
    }

    /// `text` with every known placeholder restored.
    pub fn restore<'t>(&self, text: &'t str) -> Cow<'t, str> {
        self.restore_with(text, str::to_string)
    }

    /// A restorer for one stream of text pieces (one choice of a streamed answer).
    pub fn stream(&self) -> StreamRestorer {
        StreamRestorer {
            restorer: self.clone(),
            held: String::new(),
        }
    }
}

/// Restores across pieces: a piece that ends with what may be the start of a placeholder
/// keeps that tail back until the next piece (or [`StreamRestorer::finish`]) shows what it is.
#[derive(Debug, Clone)]
pub struct StreamRestorer {
    restorer: Restorer,
    held: String,
}

impl StreamRestorer {
    /// The restored text that can be sent now.
    pub fn push(&mut self, piece: &str) -> String {
        let mut text = std::mem::take(&mut self.held);
        text.push_str(piece);
        let cut = open_tail(&text);
        self.held = text[cut..].to_string();
        self.restorer.restore(&text[..cut]).into_owned()
    }

    /// Whether text is held back.
    pub fn holding(&self) -> bool {
        !self.held.is_empty()
    }

    /// What is still held, restored as far as it can be (the stream ended).
    pub fn finish(&mut self) -> String {
        let text = std::mem::take(&mut self.held);
        self.restorer.restore(&text).into_owned()
    }
}

/// Where a trailing, unfinished placeholder starts (`text.len()` when there is none): a `[`
/// in the last [`MAX_PLACEHOLDER`] bytes, not closed, followed by what a placeholder could
/// begin with.
fn open_tail(text: &str) -> usize {
    let from = text.len().saturating_sub(MAX_PLACEHOLDER);
    let Some(i) = text
        .get(from..)
        .and_then(|t| t.rfind('['))
        .map(|i| from + i)
    else {
        // the window may start inside a character: look at bytes instead
        return text
            .as_bytes()
            .iter()
            .rposition(|b| *b == b'[')
            .filter(|&i| i >= from)
            .map_or(text.len(), |i| {
                if could_open(&text[i..]) {
                    i
                } else {
                    text.len()
                }
            });
    };
    if could_open(&text[i..]) {
        i
    } else {
        text.len()
    }
}

/// Whether `tail` (starting with `[`, not closed) is a prefix of some placeholder.
fn could_open(tail: &str) -> bool {
    if tail.contains(']') {
        return false;
    }
    if tail.len() <= PII_OPEN.len() {
        return PII_OPEN.starts_with(tail);
    }
    let Some(rest) = tail.strip_prefix(PII_OPEN) else {
        return false;
    };
    let (name, num) = rest.split_once('#').unwrap_or((rest, ""));
    name.bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        && num.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Scanner, Selection};

    #[test]
    fn same_value_same_placeholder_and_restored() {
        let s = Scanner::builtin(&Selection::default()).unwrap();
        let text =
            "mail jane.doe@acme-corp.com and jane.doe@acme-corp.com, key AKIAQYLPMN5HHHFPZAM2";
        let f = s.scan(text);
        let mut v = Vault::new();
        let out = v.redact(text, &f);
        assert_eq!(
            out,
            "mail [PII:email#1] and [PII:email#1], key [SECRET:aws_access_key#1]"
        );
        let r = v.restorer().unwrap();
        assert_eq!(
            r.restore("to [PII:email#1] not [PII:email#2] [SECRET:aws_access_key#1]"),
            "to jane.doe@acme-corp.com not [PII:email#2] [SECRET:aws_access_key#1]"
        );
    }

    #[test]
    fn a_placeholder_split_anywhere_is_restored() {
        let s = Scanner::builtin(&Selection::default()).unwrap();
        let mut v = Vault::new();
        v.redact(
            "x jane.doe@acme-corp.com",
            &s.scan("x jane.doe@acme-corp.com"),
        );
        let r = v.restorer().unwrap();
        let answer = "Hi [PII:email#1], [see] [PII:email#1]! [PII:";
        for cut in 0..=answer.len() {
            for cut2 in cut..=answer.len() {
                let mut st = r.stream();
                let mut out = st.push(&answer[..cut]);
                out.push_str(&st.push(&answer[cut..cut2]));
                out.push_str(&st.push(&answer[cut2..]));
                out.push_str(&st.finish());
                assert_eq!(
                    out,
                    "Hi jane.doe@acme-corp.com, [see] jane.doe@acme-corp.com! [PII:"
                );
            }
        }
    }
}
