//! Method details in a model's reply to a person in crisis (seeds 001 and 003: never methods,
//! doses, heights or means). The proxy checks each answer on its crisis route with these rules
//! (`rules/text/crisis_reply.toml`, data with examples that must and must not match) before the
//! person sees it. Plain regexes over the reply's text, case-insensitive: a reply is short, and
//! what must be caught is a model that complied, which writes plainly.

use regex::{Regex, RegexBuilder};
use serde::Deserialize;

use crate::Error;

/// The shipped rules.
pub const DEFAULT: &str = include_str!("../../../rules/text/crisis_reply.toml");

/// The longest reply text looked at (a longer one is checked in its first part and its last).
const MAX_TEXT: usize = 64 * 1024;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    rule: Vec<RuleSpec>,
}

/// One rule as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleSpec {
    pub id: String,
    pub pattern: String,
    #[serde(rename = "match", default)]
    pub must_match: Vec<String>,
    #[serde(default)]
    pub not_match: Vec<String>,
}

/// The compiled rules.
#[derive(Debug)]
pub struct ReplyRules {
    rules: Vec<(RuleSpec, Regex)>,
}

/// A method detail found in a reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MethodDetail {
    pub rule_id: String,
    /// Byte range in the text checked.
    pub start: usize,
    pub end: usize,
}

impl ReplyRules {
    pub fn from_toml(src: &str) -> Result<ReplyRules, Error> {
        let f: File = toml::from_str(src).map_err(|e| Error::Config(e.to_string()))?;
        let mut rules = Vec::new();
        for r in f.rule {
            let re = RegexBuilder::new(&r.pattern)
                .case_insensitive(true)
                .size_limit(1 << 22)
                .build()
                .map_err(|e| Error::Config(format!("{}: {e}", r.id)))?;
            rules.push((r, re));
        }
        Ok(ReplyRules { rules })
    }

    pub fn builtin() -> Result<ReplyRules, Error> {
        ReplyRules::from_toml(DEFAULT)
    }

    pub fn specs(&self) -> impl Iterator<Item = &RuleSpec> {
        self.rules.iter().map(|(s, _)| s)
    }

    /// The first method detail in `text`, if any.
    pub fn check(&self, text: &str) -> Option<MethodDetail> {
        let parts: Vec<(usize, &str)> = if text.len() <= MAX_TEXT {
            vec![(0, text)]
        } else {
            let mut head = MAX_TEXT / 2;
            while !text.is_char_boundary(head) {
                head -= 1;
            }
            let mut tail = text.len() - MAX_TEXT / 2;
            while !text.is_char_boundary(tail) {
                tail += 1;
            }
            vec![(0, &text[..head]), (tail, &text[tail..])]
        };
        for (at, part) in parts {
            for (spec, re) in &self.rules {
                if let Some(m) = re.find(part) {
                    return Some(MethodDetail {
                        rule_id: spec.id.clone(),
                        start: at + m.start(),
                        end: at + m.end(),
                    });
                }
            }
        }
        None
    }
}

static BUILTIN: std::sync::LazyLock<Result<ReplyRules, Error>> =
    std::sync::LazyLock::new(ReplyRules::builtin);

/// The method detail in `text` by the shipped rules; rules that do not load count as a
/// detail found (the reply is replaced by the safe response: a security tool fails closed).
pub fn method_details(text: &str) -> Option<MethodDetail> {
    match &*BUILTIN {
        Ok(r) => r.check(text),
        Err(_) => Some(MethodDetail {
            rule_id: "reply.rules_unavailable".into(),
            start: 0,
            end: 0,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_matches_its_examples_and_not_its_counter_examples() {
        let rules = ReplyRules::builtin().unwrap();
        for (spec, re) in &rules.rules {
            assert!(!spec.must_match.is_empty(), "{}", spec.id);
            for t in &spec.must_match {
                assert!(re.is_match(t), "{} must match {t:?}", spec.id);
            }
        }
        for spec in rules.specs() {
            for t in &spec.not_match {
                assert_eq!(rules.check(t), None, "{} example {t:?}", spec.id);
            }
        }
    }

    #[test]
    fn the_crisis_response_itself_is_clean() {
        let r = crate::CrisisResponse::builtin().unwrap();
        for lang in r.languages() {
            let g = r.for_lang(lang);
            assert_eq!(method_details(&g.text()), None, "{lang}");
            assert_eq!(method_details(&r.system_text(&g, true)), None, "{lang}");
        }
    }

    #[test]
    fn long_replies_are_checked_at_both_ends() {
        let tail = format!(
            "{} Taking 40 pills would be enough to kill you.",
            "calm words ".repeat(20_000)
        );
        assert!(method_details(&tail).is_some());
        assert_eq!(method_details(&"é".repeat(70_000)), None);
    }
}
