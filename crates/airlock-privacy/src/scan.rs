//! The scanner: one keyword automaton over the text picks the keyed rules to try and where
//! (each only in a window around its keywords' occurrences), one automaton of every shape rule
//! runs over the text once, then each candidate match must pass its rule's checks. Overlapping
//! findings are resolved to the earliest (then the longest, then the earlier rule).

use std::ops::Range;
use std::sync::Arc;

use aho_corasick::{AhoCorasick, MatchKind};
use regex_automata::meta::Regex;
use regex_automata::{Anchored, Input};

use super::rules::{self, Kind, Rule, RuleError};
use super::validate;

/// Which rules run: secrets, personal data, and rule ids turned off one by one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    pub secrets: bool,
    pub personal: bool,
    /// Rule ids not run.
    pub off: Vec<String>,
}

impl Default for Selection {
    fn default() -> Self {
        Selection {
            secrets: true,
            personal: true,
            off: Vec::new(),
        }
    }
}

impl Selection {
    fn wants(&self, r: &Rule) -> bool {
        let kind = match r.kind {
            Kind::Secret => self.secrets,
            Kind::Personal => self.personal,
        };
        kind && !self.off.contains(&r.id)
    }
}

/// Something found: the rule, its kind, and the byte span to replace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub rule: Arc<str>,
    pub kind: Kind,
    pub span: Range<usize>,
}

/// The compiled scanner (build once, share).
#[derive(Debug)]
pub struct Scanner {
    rules: Vec<Rule>,
    ids: Vec<Arc<str>>,
    keywords: Option<AhoCorasick>,
    /// The rule of each keyword pattern.
    keyword_rule: Vec<usize>,
    shapes: Option<Regex>,
    /// The rule of each shape pattern.
    shape_rule: Vec<usize>,
}

impl Scanner {
    /// The built-in rules, as `selection` chooses.
    pub fn builtin(selection: &Selection) -> Result<Scanner, RuleError> {
        Scanner::new(rules::load()?, selection)
    }

    pub fn new(all: Vec<Rule>, selection: &Selection) -> Result<Scanner, RuleError> {
        let rules: Vec<Rule> = all.into_iter().filter(|r| selection.wants(r)).collect();
        let mut words = Vec::new();
        let mut keyword_rule = Vec::new();
        let mut shape_patterns = Vec::new();
        let mut shape_rule = Vec::new();
        for (i, r) in rules.iter().enumerate() {
            if r.keywords.is_empty() {
                shape_patterns.push(r.pattern.as_str());
                shape_rule.push(i);
            }
            for k in &r.keywords {
                words.push(k.as_str());
                keyword_rule.push(i);
            }
        }
        let err = |message: String| RuleError::Rule {
            file: "rules/privacy".into(),
            id: "*".into(),
            message,
        };
        let keywords = if words.is_empty() {
            None
        } else {
            Some(
                AhoCorasick::builder()
                    .ascii_case_insensitive(true)
                    .match_kind(MatchKind::Standard)
                    .build(&words)
                    .map_err(|e| err(e.to_string()))?,
            )
        };
        let shapes = if shape_patterns.is_empty() {
            None
        } else {
            Some(rules::compile_shapes(&shape_patterns).map_err(err)?)
        };
        let ids = rules.iter().map(|r| Arc::from(r.id.as_str())).collect();
        Ok(Scanner {
            rules,
            ids,
            keywords,
            keyword_rule,
            shapes,
            shape_rule,
        })
    }

    /// The rules this scanner runs.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// Whether the prefilter would let rule `id` try `text` (its keyword occurs, or it is a
    /// shape rule and the shape automaton matches the text).
    pub fn prefilter_admits(&self, id: &str, text: &str) -> bool {
        let Some(i) = self.rules.iter().position(|r| r.id == id) else {
            return false;
        };
        if self.rules[i].keywords.is_empty() {
            return self.shapes.as_ref().is_some_and(|s| {
                s.find_iter(text)
                    .any(|m| self.shape_rule.get(m.pattern().as_usize()) == Some(&i))
            });
        }
        self.keywords.as_ref().is_some_and(|ac| {
            ac.find_overlapping_iter(text)
                .any(|m| self.keyword_rule.get(m.pattern().as_usize()) == Some(&i))
        })
    }

    /// Everything found in `text`, in order, not overlapping.
    pub fn scan(&self, text: &str) -> Vec<Finding> {
        let mut found: Vec<(usize, Range<usize>)> = Vec::new();
        self.keyed(text, &mut found);
        self.shaped(text, &mut found);
        // Earlier rules win overlaps (provider formats before the generic assignment rule,
        // secrets before personal data), then the earlier and longer match.
        found.sort_by(|a, b| {
            a.0.cmp(&b.0)
                .then(a.1.start.cmp(&b.1.start))
                .then(b.1.end.cmp(&a.1.end))
        });
        let mut kept: Vec<(usize, Range<usize>)> = Vec::with_capacity(found.len());
        for (rule, span) in found {
            if kept
                .iter()
                .all(|(_, k)| span.end <= k.start || k.end <= span.start)
            {
                kept.push((rule, span));
            }
        }
        kept.sort_by_key(|(_, s)| s.start);
        let out: Vec<Finding> = kept
            .into_iter()
            .map(|(rule, span)| Finding {
                rule: self.ids[rule].clone(),
                kind: self.rules[rule].kind,
                span,
            })
            .collect();
        out
    }

    fn keyed(&self, text: &str, found: &mut Vec<(usize, Range<usize>)>) {
        let Some(ac) = &self.keywords else { return };
        let len = text.len();
        let mut windows: Vec<(usize, usize, usize)> = Vec::new();
        for m in ac.find_overlapping_iter(text) {
            let Some(&i) = self.keyword_rule.get(m.pattern().as_usize()) else {
                continue;
            };
            let r = &self.rules[i];
            let start = m.start().saturating_sub(r.before);
            let end = r.after.map_or(len, |a| (m.end() + a).min(len));
            windows.push((i, start, end));
        }
        if windows.is_empty() {
            return;
        }
        windows.sort_unstable();
        let mut merged: Vec<(usize, usize, usize)> = Vec::new();
        for w in windows {
            match merged.last_mut() {
                Some(last) if last.0 == w.0 && w.1 <= last.2 => last.2 = last.2.max(w.2),
                _ => merged.push(w),
            }
        }
        for (i, start, end) in merged {
            let r = &self.rules[i];
            let input = Input::new(text).range(start..end);
            // The match first (a DFA), the group only inside it (captures are the slow part).
            for m in r.regex.find_iter(input) {
                let part = match r.group {
                    None => Some(m.range()),
                    Some(g) => {
                        let mut caps = r.regex.create_captures();
                        let at = Input::new(text).range(m.range()).anchored(Anchored::Yes);
                        r.regex.search_captures(&at, &mut caps);
                        caps.get_group(g).map(|s| s.range())
                    }
                };
                if let Some(part) = part {
                    self.accept(i, text, m.range(), part, found);
                }
            }
        }
    }

    fn shaped(&self, text: &str, found: &mut Vec<(usize, Range<usize>)>) {
        let Some(shapes) = &self.shapes else { return };
        for m in shapes.find_iter(text) {
            let Some(&i) = self.shape_rule.get(m.pattern().as_usize()) else {
                continue;
            };
            if self.accept(i, text, m.range(), m.range(), found) {
                continue;
            }
            // The first shape to match failed its checks: another may match at the same place
            // (a number that is no card may be a phone number).
            for &j in &self.shape_rule {
                if j == i {
                    continue;
                }
                let input = Input::new(text).range(m.start()..).anchored(Anchored::Yes);
                if let Some(m2) = self.rules[j].regex.find(input)
                    && self.accept(j, text, m2.range(), m2.range(), found)
                {
                    break;
                }
            }
        }
    }

    /// Records the match if it passes the rule's checks.
    fn accept(
        &self,
        i: usize,
        text: &str,
        m: Range<usize>,
        part: Range<usize>,
        found: &mut Vec<(usize, Range<usize>)>,
    ) -> bool {
        let r = &self.rules[i];
        let ok = !part.is_empty()
            && text.is_char_boundary(part.start)
            && text.is_char_boundary(part.end)
            && (r.kind != Kind::Secret
                || text
                    .get(part.clone())
                    .is_some_and(|v| !validate::placeholder(v)))
            && r.checks
                .iter()
                .all(|c| validate::passes(*c, text, m.clone(), part.clone()));
        if ok {
            found.push((i, part));
        }
        ok
    }
}
