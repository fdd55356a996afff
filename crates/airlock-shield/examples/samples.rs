//! Writes every labelled text (shared corpora and the team's sets) as JSON lines with what the
//! rules and flags alone make of it, for offline model experiments that must reproduce the
//! whole scanner's verdict (`tools/static-embed/`):
//!
//! ```text
//! cargo run --release -p airlock-shield --features corpora --example samples -- \
//!     [--corpora ../shared/corpora] [--datasets datasets/text] > samples.jsonl
//! ```
//!
//! Each line: `corpus`, `source`, `lang`, `label`, `direction`, `split`, `text`, `miss` (the
//! chance that rules and flags alone miss an attack; the scanner flags an attack when
//! `1 - miss * (1 - model_score) >= 0.5`) and `crisis` (the rules' crisis verdict, which the
//! model does not change).

use std::io::Write;
use std::path::PathBuf;

use airlock_shield::corpus::{Label, Split, load_all, load_team};
use airlock_shield::{Direction, Scanner};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut corpora = PathBuf::from("../shared/corpora");
    let mut datasets = PathBuf::from("datasets/text");
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--corpora" => corpora = args.next().ok_or("--corpora needs a value")?.into(),
            "--datasets" => datasets = args.next().ok_or("--datasets needs a value")?.into(),
            _ => return Err(format!("unknown argument {a}").into()),
        }
    }
    let mut samples = load_all(&corpora)?;
    if datasets.is_dir() {
        samples.extend(load_team(&datasets)?);
    }
    let scanner = Scanner::builtin()?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for s in &samples {
        let (miss, _) = scanner.calibration_parts(&s.text, s.direction);
        let crisis = scanner.scan(&s.text, s.direction).verdict.is_crisis();
        let line = serde_json::json!({
            "corpus": s.corpus,
            "source": s.source,
            "lang": s.lang,
            "label": match s.label { Label::Attack => "attack", Label::Benign => "benign", Label::Crisis => "crisis" },
            "direction": match s.direction { Direction::User => "user", Direction::Tool => "tool" },
            "split": match s.split { Split::Train => "train", Split::Calib => "calib", Split::Test => "test" },
            "text": s.text,
            "miss": miss,
            "crisis": crisis,
        });
        writeln!(out, "{line}")?;
    }
    Ok(())
}
