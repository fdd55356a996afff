//! Lists the scanner's mistakes on one split of the shared corpora: benign texts it flags and
//! attack or crisis texts it misses, each with the rules that matched and the model's score, and
//! a per-corpus count. A development aid for rule and model work; the reported figures come
//! from `airlock eval text`.
//!
//! ```text
//! cargo run --release -p airlock-shield --features corpora --example errors -- \
//!     [--corpora ../shared/corpora] [--split test|calib|train] [--weights FILE] \
//!     [--corpus NAME] [--show fp|miss|all|norules|none] [--width 300] [--dump FILE.tsv]
//! ```

use std::collections::BTreeMap;
use std::path::PathBuf;

use airlock_shield::corpus::{Label, Split, load_all};
use airlock_shield::model::Model;
use airlock_shield::{Direction, Scanner};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut corpora = PathBuf::from("../shared/corpora");
    let mut split = Split::Test;
    let mut weights: Option<PathBuf> = None;
    let mut only: Option<String> = None;
    let mut show = "all".to_string();
    let mut width = 300usize;
    let mut dump: Option<PathBuf> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = || args.next().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "--corpora" => corpora = val()?.into(),
            "--split" => {
                split = match val()?.as_str() {
                    "test" => Split::Test,
                    "calib" => Split::Calib,
                    "train" => Split::Train,
                    s => return Err(format!("unknown split {s}").into()),
                }
            }
            "--weights" => weights = Some(val()?.into()),
            "--corpus" => only = Some(val()?),
            "--show" => show = val()?,
            "--width" => width = val()?.parse()?,
            "--dump" => dump = Some(val()?.into()),
            _ => return Err(format!("unknown argument {a}").into()),
        }
    }
    let samples = load_all(&corpora)?;
    let mut scanner = Scanner::builtin()?;
    if let Some(w) = &weights {
        scanner.set_model(Model::from_bytes(&std::fs::read(w)?)?);
    }
    let mut rows = String::new();
    let mut counts: BTreeMap<&str, (usize, usize, Label, Direction)> = BTreeMap::new();
    for s in samples.iter().filter(|s| s.split == split) {
        if only.as_deref().is_some_and(|c| c != s.corpus) {
            continue;
        }
        let r = scanner.scan(&s.text, s.direction);
        if dump.is_some() {
            let (miss, logit) = scanner.calibration_parts(&s.text, s.direction);
            let lin = scanner.model().linear(s.direction);
            rows.push_str(&format!(
                "{}\t{:?}\t{:?}\t{}\t{}\t{}\t{}\t{}\n",
                s.corpus,
                s.direction,
                s.label,
                miss,
                logit - lin.threshold,
                r.verdict.is_clean(),
                fnv(&s.text),
                rule_ids(&r)
            ));
        }
        let wrong = match s.label {
            Label::Benign => !r.verdict.is_clean(),
            Label::Attack => !r.verdict.is_attack(),
            Label::Crisis => !r.verdict.is_crisis(),
        };
        let e = counts
            .entry(s.corpus.as_str())
            .or_insert((0, 0, s.label, s.direction));
        e.0 += 1;
        e.1 += usize::from(wrong);
        let listed = match show.as_str() {
            "all" => wrong,
            "fp" => wrong && s.label == Label::Benign,
            "miss" => wrong && s.label != Label::Benign,
            // Attacks that no rule matched, caught or not (rule design on the training split).
            "norules" => s.label == Label::Attack && r.matches.is_empty(),
            _ => false,
        };
        if listed {
            let rules: Vec<String> = r
                .matches
                .iter()
                .map(|m| format!("{}: {}", m.rule_id, m.evidence))
                .collect();
            let mut t: String = s.text.chars().take(width).collect();
            t = t.replace('\n', " ⏎ ");
            println!(
                "[{}] {:?} model={:.3} score={:.3} rules={:?} cats={:?}\n    {}",
                s.corpus, r.verdict, r.model_score, r.score, rules, r.categories, t
            );
        }
    }
    if let Some(d) = &dump {
        std::fs::write(d, rows)?;
    }
    println!();
    for (c, (n, k, label, dir)) in &counts {
        let what = if *label == Label::Benign {
            "false positives"
        } else {
            "missed"
        };
        println!(
            "{c:24} {dir:?} {label:?}: {k}/{n} {what} ({:.1}%)",
            100.0 * *k as f64 / (*n).max(1) as f64
        );
    }
    Ok(())
}

fn fnv(s: &str) -> u64 {
    airlock_shield::corpus::fnv1a(s)
}

/// The distinct attack and crisis rules that matched, as `id=weight` separated by commas.
fn rule_ids(r: &airlock_shield::ScanResult) -> String {
    let mut ids: Vec<&str> = r.matches.iter().map(|m| m.rule_id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    ids.join(",")
}
