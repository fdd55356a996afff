//! Leave-one-out evaluation: for each source (one origin of the shared corpora, one family file
//! of the team's sets, and each language of the team's multilingual sets), train and calibrate
//! the model without it, then scan all of it with that model. The rules are fixed: they were
//! written seeing some of these sources, so the figure is honest for the model and optimistic
//! for the rules.

use crate::corpus::{Label, Sample, Split};
use crate::report::Rate;
use crate::train::{Config, train};
use crate::{Direction, ScanResult, Scanner};

/// What is left out together.
#[derive(Debug, Clone)]
pub struct Group {
    pub name: String,
    /// Indexes into the samples.
    pub members: Vec<usize>,
}

/// The team's multilingual group; each of its languages is left out as a whole too.
pub const MULTILINGUAL: &str = "multilingual/";

/// The leave-one-out groups of `samples`: each source in order of first appearance, then each
/// language of the multilingual group (`multilingual lang=de`).
pub fn groups(samples: &[Sample]) -> Vec<Group> {
    let mut out: Vec<Group> = Vec::new();
    let mut push = |name: String, i: usize| match out.iter_mut().find(|g| g.name == name) {
        Some(g) => g.members.push(i),
        None => out.push(Group {
            name,
            members: vec![i],
        }),
    };
    for (i, s) in samples.iter().enumerate() {
        push(s.source.clone(), i);
    }
    for (i, s) in samples.iter().enumerate() {
        if s.corpus.starts_with(MULTILINGUAL) && !s.lang.is_empty() {
            push(format!("multilingual lang={}", s.lang), i);
        }
    }
    out
}

/// Whether a result counts: an attack caught, a crisis recognised, a benign text flagged.
pub fn hit(label: Label, r: &ScanResult) -> bool {
    match label {
        Label::Crisis => r.verdict.is_crisis(),
        Label::Attack => r.verdict.is_attack(),
        Label::Benign => !r.verdict.is_clean(),
    }
}

/// One row of the leave-one-out table: a corpus (or for a language group, the group) and
/// label inside a left-out group.
#[derive(Debug, Clone)]
pub struct LosoOutcome {
    pub group: String,
    /// The eval name of the corpus; for a language group, the group's name.
    pub corpus: String,
    /// `None` when the rows' texts come in both directions.
    pub direction: Option<Direction>,
    pub label: Label,
    pub flagged: Rate,
    pub scores: Vec<f32>,
}

/// Runs the folds. `scanner` supplies the rules (its model is replaced fold by fold and left
/// as the model trained on everything); `progress` is told each group as it starts.
pub fn leave_one_out(
    samples: &[Sample],
    cfg: &Config,
    scanner: &mut Scanner,
    mut progress: impl FnMut(&Group),
) -> Vec<LosoOutcome> {
    let all: Vec<&Sample> = samples.iter().collect();
    // A group none of whose texts trains or calibrates gets the model trained on everything
    // (training is deterministic, so leaving out nothing gives the same bytes).
    let full = train(&all, cfg, scanner);
    let mut out = Vec::new();
    let mut keep = vec![true; samples.len()];
    for g in groups(samples) {
        progress(&g);
        let used = g.members.iter().any(|&i| samples[i].split != Split::Test);
        if used {
            for &i in &g.members {
                keep[i] = false;
            }
            let rest: Vec<&Sample> = samples
                .iter()
                .zip(&keep)
                .filter(|(_, k)| **k)
                .map(|(s, _)| s)
                .collect();
            train(&rest, cfg, scanner);
            for &i in &g.members {
                keep[i] = true;
            }
        } else {
            scanner.set_model(full.clone());
        }
        let language_group = g.name.starts_with("multilingual lang=");
        let first = out.len();
        for &i in &g.members {
            let s = &samples[i];
            let r = scanner.scan(&s.text, s.direction);
            let corpus = if language_group { &g.name } else { &s.corpus };
            let row = match out[first..]
                .iter()
                .position(|o: &LosoOutcome| &o.corpus == corpus && o.label == s.label)
            {
                Some(p) => &mut out[first + p],
                None => {
                    out.push(LosoOutcome {
                        group: g.name.clone(),
                        corpus: corpus.clone(),
                        direction: Some(s.direction),
                        label: s.label,
                        flagged: Rate { k: 0, n: 0 },
                        scores: Vec::new(),
                    });
                    let last = out.len() - 1;
                    &mut out[last]
                }
            };
            if row.direction != Some(s.direction) {
                row.direction = None;
            }
            row.flagged.n += 1;
            row.flagged.k += usize::from(hit(s.label, &r));
            row.scores.push(r.score);
        }
    }
    scanner.set_model(full);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(corpus: &str, lang: &str, label: Label, split: Split, text: &str) -> Sample {
        Sample {
            corpus: corpus.to_string(),
            source: crate::corpus::source_of(corpus).to_string(),
            lang: lang.to_string(),
            text: text.to_string(),
            direction: Direction::User,
            label,
            split,
        }
    }

    #[test]
    fn groups_follow_sources_and_languages() {
        let s = vec![
            sample("bipia_context", "", Label::Benign, Split::Train, "a"),
            sample("bipia_text_attack", "", Label::Attack, Split::Test, "b"),
            sample(
                "multilingual/override",
                "de",
                Label::Attack,
                Split::Test,
                "c",
            ),
            sample(
                "multilingual/extraction",
                "de",
                Label::Benign,
                Split::Test,
                "d",
            ),
            sample(
                "multilingual/extraction",
                "fr",
                Label::Attack,
                Split::Test,
                "e",
            ),
        ];
        let g = groups(&s);
        let names: Vec<&str> = g.iter().map(|g| g.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "bipia",
                "multilingual/override",
                "multilingual/extraction",
                "multilingual lang=de",
                "multilingual lang=fr"
            ]
        );
        assert_eq!(g[0].members, [0, 1]);
        assert_eq!(g[3].members, [2, 3]);
    }

    #[test]
    fn a_left_out_group_is_scored_by_a_model_that_never_saw_it() {
        // Two tiny sources with their own vocabularies: trained on both, the model tells each
        // one's attacks from its benign texts; with a source left out it has never seen either
        // side's words, so it separates that source's two sides less well.
        let mut s = Vec::new();
        for i in 0..60 {
            let split = if i % 10 == 6 {
                Split::Calib
            } else {
                Split::Train
            };
            for (c, attack, benign) in [
                ("alpha", "zorblax quintessence", "weather report"),
                ("beta", "frobnicate wizzle", "garden party"),
            ] {
                s.push(sample(
                    c,
                    "",
                    Label::Attack,
                    split,
                    &format!("{attack} {i}"),
                ));
                s.push(sample(
                    c,
                    "",
                    Label::Benign,
                    split,
                    &format!("{benign} {i}"),
                ));
            }
        }
        let mut scanner = Scanner::builtin().unwrap();
        let cfg = Config::default();
        let mut seen = Vec::new();
        let rows = leave_one_out(&s, &cfg, &mut scanner, |g| seen.push(g.name.clone()));
        assert_eq!(seen, ["alpha", "beta"]);
        let rate = |l: Label| {
            rows.iter()
                .find(|r| r.corpus == "alpha" && r.label == l)
                .unwrap()
                .flagged
        };
        assert_eq!(rate(Label::Attack).n, 60);
        let fold_gap = rate(Label::Attack).value() - rate(Label::Benign).value();
        let all: Vec<&Sample> = s.iter().collect();
        let full = train(&all, &cfg, &mut scanner);
        let flagged = |l: Label| {
            s.iter()
                .filter(|x| x.corpus == "alpha" && x.label == l)
                .filter(|x| !scanner.scan(&x.text, x.direction).verdict.is_clean())
                .count() as f64
                / 60.0
        };
        let full_gap = flagged(Label::Attack) - flagged(Label::Benign);
        assert!(
            fold_gap < full_gap,
            "left out {fold_gap}, trained on {full_gap}"
        );
        assert_eq!(scanner.model(), &full);
    }
}
