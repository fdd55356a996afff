//! `airlock eval text`: runs the text scanner over the held-out part of the labelled corpora
//! and prints, per corpus, n and the detection rate (recall for attack and crisis sets, false
//! positives for benign sets) with a Wilson 95% interval, and recall at 1% false positives for
//! the score. Writes a ROC plot (SVG). Exits 1 when a floor (`--min-recall`, `--max-fpr`,
//! `--floors FILE`) is not met, 3 when the corpora are missing or a floor names no corpus.
//!
//! Only items the model never trained on are reported: see `airlock_shield::corpus` for the
//! split and `docs/evaluation.md` for which corpus parts are train and which held out.
//!
//! `--loso` adds the leave-one-out table (see `text_loso.rs`): each source trained and
//! calibrated without, then scanned whole. Its floors are the `[loso]` tables of the floors file.

use std::collections::BTreeMap;
use std::path::PathBuf;

use airlock_shield::corpus::{Label, Sample, Split, load_all, load_team};
use airlock_shield::report::{Rate, recall_above, roc, roc_svg, threshold_at_fpr};
use airlock_shield::{Direction, Scanner};
use anyhow::{Context, Result, bail};

use crate::EXIT_ERROR;

#[derive(clap::Args)]
pub struct Args {
    /// Directory holding the shared corpora.
    #[arg(long, default_value = "../shared/corpora")]
    corpora: PathBuf,
    /// Fail unless CORPUS's recall is at least VALUE (repeatable), e.g. inthewild=0.95.
    #[arg(long = "min-recall", value_parser = parse_floor)]
    min_recall: Vec<(String, f64)>,
    /// Fail unless CORPUS's false-positive rate is at most VALUE (repeatable), e.g. notinject=0.01.
    #[arg(long = "max-fpr", value_parser = parse_floor)]
    max_fpr: Vec<(String, f64)>,
    /// A TOML file with `[min_recall]` and `[max_fpr]` tables of corpus = value.
    #[arg(long)]
    floors: Option<PathBuf>,
    /// Where to write the ROC plot.
    #[arg(long, default_value = "target/airlock-eval/text-roc.svg")]
    roc: PathBuf,
    /// Print the table as Markdown (for docs/evaluation.md).
    #[arg(long)]
    markdown: bool,
    /// Evaluate these weights instead of the compiled-in ones (a candidate from the trainer).
    #[arg(long)]
    weights: Option<PathBuf>,
    /// Exit 0 with a notice when the corpora directory is missing.
    #[arg(long)]
    allow_missing: bool,
    /// The team's labelled sets (`<group>/<family>.jsonl`); skipped with a notice when missing.
    #[arg(long, default_value = "datasets/text")]
    datasets: PathBuf,
    /// Also run leave-one-out: each source trained and calibrated without, then scanned whole
    /// (about a second per source in a release build); checks the floors file's `[loso]` tables.
    #[arg(long)]
    loso: bool,
}

fn parse_floor(s: &str) -> Result<(String, f64), String> {
    let (k, v) = s
        .split_once('=')
        .ok_or_else(|| format!("`{s}`: expected CORPUS=VALUE"))?;
    let v: f64 = v
        .parse()
        .map_err(|_| format!("`{s}`: VALUE must be a number"))?;
    if !(0.0..=1.0).contains(&v) {
        return Err(format!("`{s}`: VALUE must be in [0, 1]"));
    }
    Ok((k.to_string(), v))
}

#[derive(serde::Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct FloorFile {
    #[serde(default)]
    pub(super) min_recall: BTreeMap<String, f64>,
    #[serde(default)]
    pub(super) max_fpr: BTreeMap<String, f64>,
    /// Floors on the leave-one-out figures (`--loso`), by corpus name as its table prints it.
    #[serde(default)]
    pub(super) loso: Option<Box<FloorFile>>,
}

/// One corpus's outcome.
pub(super) struct Row {
    pub(super) corpus: String,
    pub(super) direction: Direction,
    pub(super) label: Label,
    pub(super) flagged: Rate,
    pub(super) scores: Vec<f32>,
}

pub fn run(mut args: Args) -> Result<u8> {
    if !args.corpora.is_dir() {
        if args.allow_missing {
            println!(
                "airlock eval text: corpora not found at {}; skipped",
                args.corpora.display()
            );
            return Ok(0);
        }
        eprintln!(
            "airlock: error: corpora not found at {} (pass --corpora DIR, or --allow-missing to skip)",
            args.corpora.display()
        );
        return Ok(EXIT_ERROR);
    }
    let mut loso_floors = FloorFile::default();
    if let Some(f) = &args.floors {
        let src = std::fs::read_to_string(f).with_context(|| format!("reading {}", f.display()))?;
        let ff: FloorFile = toml::from_str(&src).with_context(|| format!("in {}", f.display()))?;
        args.min_recall.extend(ff.min_recall);
        args.max_fpr.extend(ff.max_fpr);
        if let Some(l) = ff.loso {
            if l.loso.is_some() {
                bail!("{}: [loso] cannot hold another [loso]", f.display());
            }
            loso_floors = *l;
        }
    }
    let mut samples = load_all(&args.corpora)?;
    if args.datasets.is_dir() {
        samples.extend(load_team(&args.datasets)?);
    } else {
        println!(
            "airlock eval text: the team's sets not found at {}; shared corpora only",
            args.datasets.display()
        );
    }
    let held: Vec<&Sample> = samples.iter().filter(|s| s.split == Split::Test).collect();
    let mut scanner = Scanner::builtin()?;
    if let Some(w) = &args.weights {
        let bytes =
            std::fs::read(w).with_context(|| format!("reading --weights {}", w.display()))?;
        scanner.set_model(
            airlock_shield::model::Model::from_bytes(&bytes)
                .with_context(|| format!("in --weights {}", w.display()))?,
        );
    }

    let bar = indicatif::ProgressBar::new(held.len() as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} texts {elapsed}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let mut rows: Vec<Row> = Vec::new();
    let started = std::time::Instant::now();
    let mut bytes = 0usize;
    for s in &held {
        let r = scanner.scan(&s.text, s.direction);
        bytes += s.text.len();
        let hit = match s.label {
            Label::Crisis => r.verdict.is_crisis(),
            Label::Attack => r.verdict.is_attack(),
            Label::Benign => !r.verdict.is_clean(),
        };
        let row = match rows
            .iter_mut()
            .find(|x| x.corpus == s.corpus && x.label == s.label)
        {
            Some(x) => x,
            None => {
                rows.push(Row {
                    corpus: s.corpus.clone(),
                    direction: s.direction,
                    label: s.label,
                    flagged: Rate { k: 0, n: 0 },
                    scores: Vec::new(),
                });
                let last = rows.len() - 1;
                &mut rows[last]
            }
        };
        row.flagged.n += 1;
        row.flagged.k += usize::from(hit);
        row.scores.push(r.score);
        bar.inc(1);
    }
    bar.finish_and_clear();
    let elapsed = started.elapsed();

    // Score thresholds at 1% false positives, pooled over each direction's benign sets.
    let mut thresholds = BTreeMap::new();
    let mut curves = Vec::new();
    for dir in [Direction::User, Direction::Tool] {
        let neg: Vec<f32> = rows
            .iter()
            .filter(|r| r.direction == dir && r.label == Label::Benign)
            .flat_map(|r| r.scores.iter().copied())
            .collect();
        let pos: Vec<f32> = rows
            .iter()
            .filter(|r| r.direction == dir && r.label == Label::Attack)
            .flat_map(|r| r.scores.iter().copied())
            .collect();
        thresholds.insert(dir_name(dir), threshold_at_fpr(&neg, 0.01));
        if !neg.is_empty() && !pos.is_empty() {
            curves.push((
                format!("{} attacks vs benign", dir_name(dir)),
                roc(&pos, &neg),
            ));
        }
    }
    print_table(&rows, &thresholds, args.markdown);
    println!(
        "\n{} held-out texts, {:.1} MB in {:.2} s; recall@1%FPR uses the score threshold at 1% false positives over all benign held-out sets of the same direction (user {:.3}, tool {:.3}).",
        held.len(),
        bytes as f64 / 1e6,
        elapsed.as_secs_f64(),
        thresholds.get("user").copied().unwrap_or(0.0),
        thresholds.get("tool").copied().unwrap_or(0.0),
    );
    if let Some(parent) = args.roc.parent() {
        std::fs::create_dir_all(parent).ok();
    }
    std::fs::write(&args.roc, roc_svg("airlock-shield ROC (held-out)", &curves))
        .with_context(|| format!("writing {}", args.roc.display()))?;
    println!("ROC plot: {}", args.roc.display());

    let held_code = check_floors(&rows, &args.min_recall, &args.max_fpr)?;
    if !args.loso {
        if loso_floors.loso.is_none()
            && (!loso_floors.min_recall.is_empty() || !loso_floors.max_fpr.is_empty())
        {
            println!("(the floors file's [loso] tables are checked with --loso)");
        }
        return Ok(held_code);
    }
    println!();
    let loso_code = super::text_loso::run(&samples, &loso_floors, args.markdown)?;
    Ok(held_code.max(loso_code))
}

pub(super) fn dir_name(d: Direction) -> &'static str {
    match d {
        Direction::User => "user",
        Direction::Tool => "tool",
    }
}

pub(super) fn print_table(rows: &[Row], thresholds: &BTreeMap<&str, f32>, markdown: bool) {
    if markdown {
        println!("| corpus | dir | label | n | metric | value | 95% CI | recall@1%FPR |");
        println!("|---|---|---|---:|---|---:|---|---:|");
    } else {
        println!(
            "{:<26} {:<4} {:<7} {:>5}  {:<6} {:>7}  {:<17} {:>12}",
            "corpus", "dir", "label", "n", "metric", "value", "95% CI", "recall@1%FPR"
        );
    }
    for r in rows {
        let (lo, hi) = r.flagged.wilson();
        let metric = if r.label == Label::Benign {
            "FPR"
        } else {
            "recall"
        };
        let at1 = if r.label == Label::Benign {
            "-".to_string()
        } else {
            let t = thresholds
                .get(dir_name(r.direction))
                .copied()
                .unwrap_or(0.0);
            format!("{:.1}%", 100.0 * recall_above(&r.scores, t).value())
        };
        let label = match r.label {
            Label::Attack => "attack",
            Label::Crisis => "crisis",
            Label::Benign => "benign",
        };
        let value = format!("{:.1}%", 100.0 * r.flagged.value());
        let ci = format!("[{:.1}, {:.1}]%", 100.0 * lo, 100.0 * hi);
        if markdown {
            println!(
                "| {} | {} | {label} | {} | {metric} | {value} | {ci} | {at1} |",
                r.corpus,
                dir_name(r.direction),
                r.flagged.n
            );
        } else {
            println!(
                "{:<26} {:<4} {label:<7} {:>5}  {metric:<6} {value:>7}  {ci:<17} {at1:>12}",
                r.corpus,
                dir_name(r.direction),
                r.flagged.n
            );
        }
    }
}

pub(super) fn check_floors(
    rows: &[Row],
    min_recall: &[(String, f64)],
    max_fpr: &[(String, f64)],
) -> Result<u8> {
    let mut failed = Vec::new();
    for (name, floor) in min_recall {
        let Some(r) = rows
            .iter()
            .find(|r| r.corpus == *name && r.label != Label::Benign)
        else {
            if rows.iter().any(|r| r.corpus == *name) {
                bail!(
                    "--min-recall {name}: a benign corpus has a false-positive rate, not a recall"
                );
            }
            bail!("--min-recall {name}: no such corpus (see the table for names)");
        };
        if r.flagged.value() < *floor {
            failed.push(format!(
                "{name}: recall {:.2}% is under the floor {:.2}%",
                100.0 * r.flagged.value(),
                100.0 * floor
            ));
        }
    }
    for (name, ceiling) in max_fpr {
        let Some(r) = rows
            .iter()
            .find(|r| r.corpus == *name && r.label == Label::Benign)
        else {
            if rows.iter().any(|r| r.corpus == *name) {
                bail!("--max-fpr {name}: not a benign corpus");
            }
            bail!("--max-fpr {name}: no such corpus (see the table for names)");
        };
        if r.flagged.value() > *ceiling {
            failed.push(format!(
                "{name}: false-positive rate {:.2}% is over the ceiling {:.2}%",
                100.0 * r.flagged.value(),
                100.0 * ceiling
            ));
        }
    }
    if failed.is_empty() {
        if !min_recall.is_empty() || !max_fpr.is_empty() {
            println!("all floors met");
        }
        Ok(0)
    } else {
        for f in &failed {
            eprintln!("airlock eval text: FLOOR FAILED: {f}");
        }
        Ok(1)
    }
}
