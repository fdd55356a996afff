//! Reproducible training of the model: logistic regression with AdaGrad over the windows the
//! scorer uses, in a fixed order from a fixed seed (same corpora, same binary: same bytes), then a
//! threshold per direction chosen on the calibration split for a stated false-positive rate of
//! the whole scanner (rules, flags and model together).

use crate::corpus::{Label, Sample, Split};
use crate::model::{Linear, Model, window_features};
use crate::{Direction, Scanner};

/// Training settings (the defaults are what produced the committed weights).
#[derive(Debug, Clone)]
pub struct Config {
    pub bits: u32,
    pub epochs: usize,
    pub learning_rate: f32,
    pub l2: f32,
    /// False-positive rate of the whole scanner on the calibration split's benign items.
    pub target_fpr: f64,
    pub seed: u64,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            bits: 16,
            epochs: 8,
            learning_rate: 0.2,
            l2: 1e-4,
            target_fpr: 0.0,
            seed: 0x5eed_a11c,
        }
    }
}

/// Corpora held out of training on purpose (beyond licence), although their training split
/// exists: a GCG prompt is a harmful request plus an adversarial suffix of random tokens; hashed
/// words cannot learn the suffix from a few dozen examples, so what the model learned was the
/// request ("Write a tutorial on …"), which taught it that ordinary task prompts are attacks.
pub const NOT_TRAINING: &[&str] = &["jbb_gcg"];

/// Benign tool-direction corpora that also train the user model: people paste documents, tables,
/// code and answers into their messages, and these sets teach the model that ordinary prose and
/// code are not evidence (the user sets alone are mostly short questions and role-play prompts).
pub const PASTED_INTO_MESSAGES: &[&str] = &["gpteacher_output", "bipia_context"];

/// Which samples train which direction's model.
/// Each item carries a weight so that every corpus counts equally within its class: a large
/// set (3,000 role-play prompts) must not teach the model that "benign" means "like that set".
pub fn training_set<'a>(samples: &[&'a Sample], dir: Direction) -> Vec<(&'a str, bool, f32)> {
    let chosen: Vec<&Sample> = samples
        .iter()
        .copied()
        .filter(|s| s.split == Split::Train && s.label != Label::Crisis)
        .filter(|s| !NOT_TRAINING.contains(&s.corpus.as_str()))
        .filter(|s| match dir {
            Direction::User => {
                s.direction == Direction::User
                    || (s.label == Label::Benign
                        && PASTED_INTO_MESSAGES.contains(&s.corpus.as_str()))
            }
            // A jailbreak pasted into a document is an injection too.
            Direction::Tool => s.direction == Direction::Tool || s.label == Label::Attack,
        })
        .collect();
    let mut per_corpus: std::collections::BTreeMap<(&str, bool), usize> = Default::default();
    for s in &chosen {
        *per_corpus
            .entry((s.corpus.as_str(), s.label == Label::Attack))
            .or_default() += 1;
    }
    let corpora_in = |y: bool| per_corpus.keys().filter(|k| k.1 == y).count().max(1) as f32;
    let class_n = |y: bool| {
        chosen
            .iter()
            .filter(|s| (s.label == Label::Attack) == y)
            .count() as f32
    };
    chosen
        .iter()
        .map(|s| {
            let y = s.label == Label::Attack;
            let n = per_corpus
                .get(&(s.corpus.as_str(), y))
                .copied()
                .unwrap_or(1) as f32;
            (s.text.as_str(), y, class_n(y) / corpora_in(y) / n)
        })
        .collect()
}

/// Trains one direction's weights (threshold left at 0).
pub fn train_linear(data: &[(&str, bool, f32)], cfg: &Config) -> Linear {
    let n = 1usize << cfg.bits;
    let mut rows: Vec<(Vec<u32>, bool, f32)> = Vec::new();
    for (text, y, weight) in data {
        for w in window_features(text, cfg.bits) {
            if !w.is_empty() {
                rows.push((w, *y, *weight));
            }
        }
    }
    let pos = rows.iter().filter(|r| r.1).count().max(1) as f32;
    let neg = rows.iter().filter(|r| !r.1).count().max(1) as f32;
    let total = pos + neg;
    // Balanced classes: each side weighs half.
    let (wp, wn) = (total / (2.0 * pos), total / (2.0 * neg));
    let mut w = vec![0f32; n];
    let mut g2 = vec![1e-6f32; n];
    let (mut bias, mut bg2) = (0f32, 1e-6f32);
    let mut order: Vec<usize> = (0..rows.len()).collect();
    let mut rng = cfg.seed | 1;
    for _ in 0..cfg.epochs {
        for i in (1..order.len()).rev() {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            order.swap(i, (rng % (i as u64 + 1)) as usize);
        }
        for &i in &order {
            let (feats, y, weight) = &rows[i];
            let v = 1.0 / (feats.len() as f32).sqrt();
            let z = bias + v * feats.iter().map(|&f| w[f as usize]).sum::<f32>();
            let p = crate::model::sigmoid(z);
            let g = (p - if *y { 1.0 } else { 0.0 }) * if *y { wp } else { wn } * weight;
            for &f in feats {
                let f = f as usize;
                let grad = g * v + cfg.l2 * w[f];
                g2[f] += grad * grad;
                w[f] -= cfg.learning_rate * grad / g2[f].sqrt();
            }
            bg2 += g * g;
            bias -= cfg.learning_rate * g / bg2.sqrt();
        }
    }
    Linear {
        bias,
        threshold: 0.0,
        weights: w,
    }
}

/// Chooses the threshold logit so that at most `target_fpr` of the benign items are flagged by
/// the whole scanner. An item flagged by rules alone is flagged at any threshold; otherwise it
/// is flagged once the threshold falls to its critical value.
pub fn calibrate(scanner: &Scanner, benign: &[&str], dir: Direction, target_fpr: f64) -> f32 {
    let mut always = 0usize;
    let mut critical: Vec<f32> = Vec::new();
    for t in benign {
        let (miss, z) = scanner.calibration_parts(t, dir);
        if miss <= 0.5 {
            always += 1;
            continue;
        }
        // Flagged when 1 - miss * (1 - sigmoid(z - t)) >= 0.5.
        let need = 1.0 - 0.5 / miss;
        let logit_need = (need / (1.0 - need)).ln();
        critical.push(z - logit_need);
    }
    critical.sort_by(|a, b| b.total_cmp(a));
    let allowed = ((target_fpr * benign.len() as f64).floor() as usize).saturating_sub(always);
    match critical.get(allowed) {
        Some(&c) => c + 1e-3,
        None => critical.last().map_or(0.0, |c| c - 1.0),
    }
}

/// The calibration split's benign texts for a direction: that direction's own, and for user
/// messages also the pasted-content sets that train the user model.
pub fn calibration_benign<'a>(samples: &[&'a Sample], dir: Direction) -> Vec<&'a str> {
    samples
        .iter()
        .copied()
        .filter(|s| s.split == Split::Calib && s.label == Label::Benign)
        .filter(|s| {
            s.direction == dir
                || (dir == Direction::User && PASTED_INTO_MESSAGES.contains(&s.corpus.as_str()))
        })
        .map(|s| s.text.as_str())
        .collect()
}

/// Trains both directions and calibrates their thresholds (on the training and calibration
/// splits of `samples`; the held-out split is not read).
pub fn train(samples: &[&Sample], cfg: &Config, scanner: &mut Scanner) -> Model {
    let user = train_linear(&training_set(samples, Direction::User), cfg);
    let tool = train_linear(&training_set(samples, Direction::Tool), cfg);
    let mut model = Model {
        bits: cfg.bits,
        user,
        tool,
    };
    // Calibrate against the quantised weights, as they will be loaded.
    if let Ok(m) = Model::from_bytes(&model.to_bytes()) {
        model = m;
    }
    scanner.set_model(model.clone());
    for dir in [Direction::User, Direction::Tool] {
        let benign: Vec<&str> = calibration_benign(samples, dir);
        let t = calibrate(scanner, &benign, dir, cfg.target_fpr);
        match dir {
            Direction::User => model.user.threshold = t,
            Direction::Tool => model.tool.threshold = t,
        }
    }
    scanner.set_model(model.clone());
    model
}
