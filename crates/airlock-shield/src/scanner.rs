//! The scanner: runs the rules over the raw, normalised, hidden and decoded forms of a text,
//! adds the statistical model and the normalisation flags, and turns the evidence into a verdict.
//!
//! Evidence combines by noisy-OR: each matched rule (counted once) and each evidential flag is
//! an independent chance that the text is an attack, and the model adds its calibrated score.
//! A verdict fires at 0.5.

use crate::Error;
use crate::crisis::CrisisResponse;
use crate::decode;
use crate::flags::Flags;
use crate::model::{Model, sigmoid};
use crate::normalise::{normalise, normalise_checked, prescan_features};
use crate::result::{
    CrisisAdvice, Direction, Match, ScanResult, Source, Span, TextVerdict, round3,
};
use crate::rules::{Kind, RuleSet};

/// Inputs longer than this are scanned on their first `MAX_INPUT` bytes and flagged.
pub const MAX_INPUT: usize = 1 << 20;
const MAX_EVIDENCE: usize = 160;
const MAX_MATCHES: usize = 32;

/// A compiled scanner.
#[derive(Debug)]
pub struct Scanner {
    rules: RuleSet,
    model: Model,
    crisis: CrisisResponse,
}

/// Evidence gathered for one text before it becomes a result.
struct Evidence {
    matches: Vec<Match>,
    rule_seen: Vec<u64>,
    attack_miss: f32,
    crisis_miss: f32,
}

impl Scanner {
    /// The shipped rules, weights and crisis response.
    pub fn builtin() -> Result<Scanner, Error> {
        Ok(Scanner {
            rules: RuleSet::builtin()?,
            model: Model::from_bytes(crate::model::WEIGHTS)?,
            crisis: CrisisResponse::builtin()?,
        })
    }

    pub fn new(rules: RuleSet, model: Model, crisis: CrisisResponse) -> Scanner {
        Scanner {
            rules,
            model,
            crisis,
        }
    }

    pub fn rules(&self) -> &RuleSet {
        &self.rules
    }

    pub fn model(&self) -> &Model {
        &self.model
    }

    /// Replaces the model (training uses this to calibrate thresholds on the whole scanner).
    pub fn set_model(&mut self, model: Model) {
        self.model = model;
    }

    /// Replaces the crisis response.
    pub fn set_crisis_response(&mut self, crisis: CrisisResponse) {
        self.crisis = crisis;
    }

    /// Scans `input` written in `dir`.
    pub fn scan(&self, input: &str, dir: Direction) -> ScanResult {
        let (mut ev, flags, logit, mut categories) = self.gather(input, dir);
        let lin = self.model.linear(dir);
        let model_score = if logit.is_finite() {
            sigmoid(logit - lin.threshold)
        } else {
            0.0
        };
        if model_score >= 0.5 {
            categories.push("statistical_model".to_string());
        }
        ev.attack_miss *= 1.0 - model_score;
        categories.sort();
        categories.dedup();
        let mut r = self.finish(ev, flags, dir, categories, model_score);
        if r.crisis.is_some() {
            // In the person's language: only crisis verdicts pay for recognising it.
            r.crisis = Some(CrisisAdvice::for_text(&self.crisis, input));
        }
        r
    }

    /// The crisis response in force.
    pub fn crisis_response(&self) -> &CrisisResponse {
        &self.crisis
    }

    /// For threshold calibration: the chance that rules and flags alone miss an attack (the
    /// noisy-OR complement before the model) and the model's highest window logit.
    pub fn calibration_parts(&self, input: &str, dir: Direction) -> (f32, f32) {
        let (ev, _, logit, _) = self.gather(input, dir);
        (ev.attack_miss, logit)
    }

    fn gather(&self, input: &str, dir: Direction) -> (Evidence, Flags, f32, Vec<String>) {
        let mut flags = Flags::empty();
        let text = if input.len() > MAX_INPUT {
            flags |= Flags::TRUNCATED;
            let mut cut = MAX_INPUT;
            while !input.is_char_boundary(cut) {
                cut -= 1;
            }
            &input[..cut]
        } else {
            input
        };
        let mut ev = Evidence {
            matches: Vec::new(),
            rule_seen: vec![0; self.rules.rules.len().div_ceil(64)],
            attack_miss: 1.0,
            crisis_miss: 1.0,
        };

        // One pass answers the normaliser's fast-path check and the encoding check, and on clean
        // ASCII gives the rules the whitespace stretch of their windows and the model its score
        // (the fast path leaves the text as it is, so the model's text is this one).
        let mut scorer = self.model.scorer(dir);
        let (pre, scored, rare) =
            prescan_features(text.as_bytes(), dir == Direction::User, |u, b| {
                scorer.push(u, b)
            });
        let scored = scored && crate::normalise::FAST_PATHS;
        // Token soup is evidence in a person's message only (see `Flags::evidence`), so tool
        // text is not searched for it. When the prescan read the whole text it also found
        // whether the text holds one of soup's rare shapes, so soup's own first pass is spared.
        let soup = || {
            if scored {
                crate::soup::token_soup_given(text, rare)
            } else {
                crate::soup::token_soup(text)
            }
        };
        if dir == Direction::User && soup() {
            flags |= Flags::TOKEN_SOUP;
        }
        let stretch = if crate::normalise::FAST_PATHS {
            pre.stretch
        } else {
            None
        };
        self.rules.scan_with_stretch(text, dir, stretch, |h| {
            self.record(
                &mut ev,
                h.rule,
                Span {
                    start: h.start,
                    end: h.end,
                },
                Source::Raw,
                &text[h.start..h.end],
            );
        });

        let norm = normalise_checked(text, pre.fast);
        flags |= norm.flags;
        let mut logit = f32::NEG_INFINITY;
        if norm.changed() {
            self.rules.scan(&norm.text, dir, |h| {
                let (s, e) = norm.to_input_span(h.start, h.end, text);
                self.record(
                    &mut ev,
                    h.rule,
                    Span { start: s, end: e },
                    Source::Normalised,
                    &norm.text[h.start..h.end],
                );
            });
        }
        let text_logit = if scored && !norm.changed() {
            scorer.finish()
        } else {
            self.model.logit(&norm.text, dir)
        };
        logit = logit.max(text_logit);

        if let Some(hidden) = &norm.hidden {
            let hn = normalise(hidden);
            let whole = Span {
                start: 0,
                end: text.len(),
            };
            self.rules.scan(&hn.text, dir, |h| {
                self.record(
                    &mut ev,
                    h.rule,
                    whole,
                    Source::Hidden,
                    &hn.text[h.start..h.end],
                );
            });
            logit = logit.max(self.model.logit(&hn.text, dir));
        }

        if pre.may_encode {
            for seg in decode::decode_segments(text) {
                flags |= seg.kind;
                let source = match seg.kind {
                    Flags::BASE64 => Source::Base64,
                    Flags::HEX => Source::Hex,
                    Flags::URL_ENCODED => Source::UrlEncoded,
                    _ => Source::Rot13,
                };
                let span = Span {
                    start: seg.start,
                    end: seg.end,
                };
                let dn = normalise(&seg.text);
                self.rules.scan(&dn.text, dir, |h| {
                    self.record(&mut ev, h.rule, span, source, &dn.text[h.start..h.end]);
                });
                logit = logit.max(self.model.logit(&dn.text, dir));
            }
        }

        let mut categories: Vec<String> = ev.matches.iter().map(|m| m.category.clone()).collect();
        for (w, cat) in flags.evidence() {
            // Invisible characters are evidence in a person's message; in fetched documents they
            // are common markup noise, so there they only count as hidden text (tag characters).
            if dir == Direction::User || cat == "hidden_text" || cat == "input_too_large" {
                ev.attack_miss *= 1.0 - w;
                categories.push(cat.to_string());
            }
        }
        (ev, flags, logit, categories)
    }

    fn finish(
        &self,
        ev: Evidence,
        flags: Flags,
        dir: Direction,
        categories: Vec<String>,
        model_score: f32,
    ) -> ScanResult {
        let attack = 1.0 - ev.attack_miss;
        let crisis = 1.0 - ev.crisis_miss;
        let (is_attack, is_crisis) = (attack >= 0.5, crisis >= 0.5);
        let (verdict, confidence) = match (dir, is_attack, is_crisis) {
            (Direction::User, true, true) => (TextVerdict::CrisisUnderAttack, attack.min(crisis)),
            (_, false, true) => (TextVerdict::CrisisDetected, crisis),
            (Direction::User, true, false) => (TextVerdict::JailbreakDetected, attack),
            (Direction::Tool, true, _) => (TextVerdict::InjectionDetected, attack),
            (_, false, false) => (TextVerdict::Clean, 1.0 - attack.max(crisis)),
        };
        ScanResult {
            verdict,
            confidence: round3(confidence),
            score: round3(attack.max(crisis)),
            direction: dir,
            categories,
            matches: ev.matches,
            flags,
            model_score: round3(model_score),
            crisis: verdict
                .is_crisis()
                .then(|| CrisisAdvice::from(&self.crisis)),
        }
    }

    fn record(&self, ev: &mut Evidence, r: usize, span: Span, source: Source, seen: &str) {
        let rule = &self.rules.rules[r];
        let first = ev.rule_seen[r / 64] & (1 << (r % 64)) == 0;
        if first {
            ev.rule_seen[r / 64] |= 1 << (r % 64);
            match rule.kind {
                Kind::Attack => ev.attack_miss *= 1.0 - rule.weight,
                Kind::Crisis => ev.crisis_miss *= 1.0 - rule.weight,
            }
        }
        let dup = ev
            .matches
            .iter()
            .any(|m| m.rule_id == rule.id && m.span == span);
        if dup || ev.matches.len() >= MAX_MATCHES {
            return;
        }
        ev.matches.push(Match {
            rule_id: rule.id.clone(),
            category: rule.category.clone(),
            span,
            source,
            evidence: bounded(seen),
            message: rule.message.clone(),
        });
    }
}

fn bounded(s: &str) -> String {
    if s.len() <= MAX_EVIDENCE {
        return s.to_string();
    }
    let mut cut = MAX_EVIDENCE;
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}…", &s[..cut])
}
