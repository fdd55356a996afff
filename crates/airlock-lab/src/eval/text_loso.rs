//! `airlock eval text --loso`: the leave-one-out table. Each source of the shared corpora
//! (one origin: all of BIPIA, all of JailbreakBench), each family file of the team's sets and
//! each language of the team's multilingual sets is left out in turn: the model is trained and
//! its thresholds calibrated without it, then every text of it (train, calibration and held-out
//! parts alike) is scanned. The rules stay as built, so the figure is honest for the model and
//! optimistic for the rules, which were written seeing some of these sources.

use airlock_shield::Scanner;
use airlock_shield::corpus::{Label, Sample};
use airlock_shield::loso::{LosoOutcome, leave_one_out};
use airlock_shield::train::Config;
use anyhow::Result;

use super::text::{FloorFile, Row, check_floors, dir_name};

pub(super) fn run(samples: &[Sample], floors: &FloorFile, markdown: bool) -> Result<u8> {
    let mut scanner = Scanner::builtin()?;
    let started = std::time::Instant::now();
    let groups = airlock_shield::loso::groups(samples).len();
    let bar = indicatif::ProgressBar::new(groups as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} left out {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let rows = leave_one_out(samples, &Config::default(), &mut scanner, |g| {
        bar.set_message(g.name.clone());
        bar.inc(1);
    });
    bar.finish_and_clear();
    print_loso(&rows, markdown);
    println!(
        "\nleave-one-out: {groups} sources, each trained and calibrated without, then scanned whole; {:.1} s.",
        started.elapsed().as_secs_f64()
    );
    let as_rows: Vec<Row> = rows
        .iter()
        .map(|o| Row {
            corpus: o.corpus.clone(),
            direction: o.direction.unwrap_or(airlock_shield::Direction::User),
            label: o.label,
            flagged: o.flagged,
            scores: Vec::new(),
        })
        .collect();
    let min: Vec<(String, f64)> = floors.min_recall.clone().into_iter().collect();
    let max: Vec<(String, f64)> = floors.max_fpr.clone().into_iter().collect();
    if !min.is_empty() || !max.is_empty() {
        print!("leave-one-out floors: ");
    }
    check_floors(&as_rows, &min, &max)
}

fn print_loso(rows: &[LosoOutcome], markdown: bool) {
    if markdown {
        println!("| left out | corpus | dir | label | n | metric | value | 95% CI |");
        println!("|---|---|---|---|---:|---|---:|---|");
    } else {
        println!(
            "{:<26} {:<30} {:<4} {:<7} {:>5}  {:<6} {:>7}  {:<17}",
            "left out", "corpus", "dir", "label", "n", "metric", "value", "95% CI"
        );
    }
    for r in rows {
        let (lo, hi) = r.flagged.wilson();
        let metric = if r.label == Label::Benign {
            "FPR"
        } else {
            "recall"
        };
        let label = match r.label {
            Label::Attack => "attack",
            Label::Crisis => "crisis",
            Label::Benign => "benign",
        };
        let dir = r.direction.map_or("both", dir_name);
        let value = format!("{:.1}%", 100.0 * r.flagged.value());
        let ci = format!("[{:.1}, {:.1}]%", 100.0 * lo, 100.0 * hi);
        let n = r.flagged.n;
        if markdown {
            println!(
                "| {} | {} | {dir} | {label} | {n} | {metric} | {value} | {ci} |",
                r.group, r.corpus
            );
        } else {
            println!(
                "{:<26} {:<30} {dir:<4} {label:<7} {n:>5}  {metric:<6} {value:>7}  {ci:<17}",
                r.group, r.corpus
            );
        }
    }
}
