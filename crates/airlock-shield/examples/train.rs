//! Trains the text model from the shared corpora and writes `model/text-model.bin`.
//!
//! ```text
//! cargo run --release -p airlock-shield --features corpora --example train -- \
//!     [--corpora ../shared/corpora] [--datasets datasets/text] \
//!     [--out crates/airlock-shield/model/text-model.bin] \
//!     [--l2 X] [--epochs N] [--learning-rate X] [--target-fpr F]   # defaults: what made the committed weights
//! ```
//!
//! Only the training split of permissively licensed corpora and of the team's sets is used
//! (see `corpus/`); the threshold is chosen on the calibration split. Deterministic: same corpora, same bytes.

use std::path::PathBuf;

use airlock_shield::corpus::{Label, Split, load_all, load_team};
use airlock_shield::train::{Config, calibration_benign, train};
use airlock_shield::{Direction, Scanner};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut corpora = PathBuf::from("../shared/corpora");
    let mut datasets = PathBuf::from("datasets/text");
    let mut out = PathBuf::from("crates/airlock-shield/model/text-model.bin");
    let mut cfg = Config::default();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--corpora" => corpora = args.next().ok_or("--corpora needs a value")?.into(),
            "--datasets" => datasets = args.next().ok_or("--datasets needs a value")?.into(),
            "--out" => out = args.next().ok_or("--out needs a value")?.into(),
            "--l2" => cfg.l2 = args.next().ok_or("--l2 needs a value")?.parse()?,
            "--epochs" => cfg.epochs = args.next().ok_or("--epochs needs a value")?.parse()?,
            "--target-fpr" => {
                cfg.target_fpr = args.next().ok_or("--target-fpr needs a value")?.parse()?
            }
            "--learning-rate" => {
                cfg.learning_rate = args
                    .next()
                    .ok_or("--learning-rate needs a value")?
                    .parse()?
            }
            _ => return Err(format!("unknown argument {a}").into()),
        }
    }
    let mut samples = load_all(&corpora)?;
    samples.extend(load_team(&datasets)?);
    let samples: Vec<&airlock_shield::corpus::Sample> = samples.iter().collect();
    for dir in [Direction::User, Direction::Tool] {
        let set = airlock_shield::train::training_set(&samples, dir);
        let pos = set.iter().filter(|s| s.1).count();
        println!("{dir:?}: {} training texts ({pos} attack)", set.len());
    }
    let mut scanner = Scanner::builtin()?;
    let model = train(&samples, &cfg, &mut scanner);
    for dir in [Direction::User, Direction::Tool] {
        let lin = model.linear(dir);
        let calib: Vec<_> = samples
            .iter()
            .filter(|s| s.split == Split::Calib && s.direction == dir)
            .collect();
        let benign = calibration_benign(&samples, dir);
        let fp = benign
            .iter()
            .filter(|t| !scanner.scan(t, dir).verdict.is_clean())
            .count();
        let attacks: Vec<_> = calib.iter().filter(|s| s.label == Label::Attack).collect();
        let tp = attacks
            .iter()
            .filter(|s| scanner.scan(&s.text, dir).verdict.is_attack())
            .count();
        println!(
            "{dir:?}: bias {:.3}, threshold logit {:.3}; calibration: {fp}/{} benign flagged, {tp}/{} attacks caught",
            lin.bias,
            lin.threshold,
            benign.len(),
            attacks.len()
        );
    }
    let bytes = model.to_bytes();
    std::fs::write(&out, &bytes)?;
    println!("wrote {} ({} bytes)", out.display(), bytes.len());
    Ok(())
}
