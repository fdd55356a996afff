//! `airlock eval commands`: runs every labelled shell command of the dcg, tirith and Hermes
//! corpora through `airlock_shell::analyse` in-process and prints, per corpus, recall on the
//! dangerous commands, the share of benign commands that were asked or denied, and the misses.
//! Floors (`--min-recall`, `--max-benign-asked`, per-corpus overrides) turn it into a CI gate:
//! the exit code is 1 when any corpus is under a floor.

use super::commands_score::{Miss, MissKind, Tally, reason_names};
use super::corpus_commands::{Case, Skipped, load_all};
use airlock_core::{Assessment, Decision, Finding, ReasonCode, Severity, Tier};
use anyhow::{Result, anyhow};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Instant;

#[derive(clap::Args)]
pub struct Args {
    /// Directory holding the corpora (`dcg/`, `tirith/`, `hermes_vectors.jsonl`).
    #[arg(long, default_value = "../shared/corpora")]
    corpora: PathBuf,
    /// Only this corpus (repeatable): dcg, tirith, hermes.
    #[arg(long = "corpus", value_name = "NAME")]
    only: Vec<String>,
    /// How many misses to list per corpus and kind (0 lists none).
    #[arg(long, default_value_t = 25, value_name = "N")]
    misses: usize,
    /// Print one JSON document instead of the table.
    #[arg(long)]
    json: bool,
    /// Also print the figures per source file.
    #[arg(long)]
    by_file: bool,
    /// Floor: every corpus's recall on dangerous commands must be at least this (0..1).
    #[arg(long, value_name = "RATIO")]
    min_recall: Option<f64>,
    /// Ceiling: every corpus's share of benign commands asked or denied must be at most this.
    #[arg(long, value_name = "RATIO")]
    max_benign_asked: Option<f64>,
    /// Per-corpus recall floor, `CORPUS=RATIO` (repeatable); overrides --min-recall.
    #[arg(long, value_name = "CORPUS=RATIO", value_parser = parse_override)]
    min_recall_for: Vec<(String, f64)>,
    /// Per-corpus benign ceiling, `CORPUS=RATIO` (repeatable); overrides --max-benign-asked.
    #[arg(long, value_name = "CORPUS=RATIO", value_parser = parse_override)]
    max_benign_asked_for: Vec<(String, f64)>,
}

fn parse_override(s: &str) -> Result<(String, f64), String> {
    let (name, value) = s
        .split_once('=')
        .ok_or_else(|| format!("expected CORPUS=RATIO, got `{s}`"))?;
    let v: f64 = value
        .parse()
        .map_err(|_| format!("`{value}` is not a number"))?;
    if !(0.0..=1.0).contains(&v) {
        return Err(format!("{v} is outside 0..1"));
    }
    Ok((name.to_string(), v))
}

/// The figures for one corpus.
#[derive(Serialize)]
struct CorpusReport {
    name: &'static str,
    #[serde(flatten)]
    tally: Tally,
    recall: Option<f64>,
    benign_asked_share: Option<f64>,
    hard_deny_rate: Option<f64>,
    skipped: BTreeMap<String, usize>,
    notes: Vec<String>,
    mean_micros: f64,
    min_recall: Option<f64>,
    max_benign_asked: Option<f64>,
    pass: bool,
    by_file: BTreeMap<String, Tally>,
    missed: Vec<Miss>,
    false_positives: Vec<Miss>,
    hard_not_denied: Vec<Miss>,
    denied_not_denied: Vec<Miss>,
}

#[derive(Serialize)]
struct Report {
    corpora_dir: String,
    pass: bool,
    corpora: Vec<CorpusReport>,
}

pub fn run(args: Args) -> Result<u8> {
    for v in [args.min_recall, args.max_benign_asked]
        .into_iter()
        .flatten()
    {
        if !(0.0..=1.0).contains(&v) {
            return Err(anyhow!("floors are ratios between 0 and 1, got {v}"));
        }
    }
    let loaded = load_all(&args.corpora, &args.only)?;
    let total: usize = loaded.iter().map(|(_, c, _)| c.len()).sum();
    let bar = progress(total as u64);
    let mut reports = Vec::new();
    for (name, cases, skipped) in loaded {
        bar.set_message(name);
        reports.push(score(name, &cases, skipped, &args, &bar));
    }
    bar.finish_and_clear();
    let pass = reports.iter().all(|r| r.pass);
    let report = Report {
        corpora_dir: args.corpora.display().to_string(),
        pass,
        corpora: reports,
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_text(&report, &args);
    }
    Ok(if pass { 0 } else { 1 })
}

/// A progress bar on stderr, hidden when stderr is not a terminal (CI logs stay clean).
fn progress(total: u64) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(total);
    if let Ok(style) = ProgressStyle::with_template("{msg:>7} [{bar:40}] {pos}/{len} {elapsed}") {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}

/// Analyses one command; a panic in the analyser is a bug that the eval reports as an internal
/// error (which denies, as airlock would fail closed).
fn assess(command: &str) -> Assessment {
    match std::panic::catch_unwind(|| airlock_shell::analyse(command)) {
        Ok(a) => a,
        Err(_) => Assessment::from_findings(
            vec![Finding::new(
                "eval.panic",
                ReasonCode::InternalError,
                Decision::Deny,
                Tier::Critical,
                Severity::Critical,
                "the analyser panicked on this input",
            )],
            Decision::Deny,
        ),
    }
}

fn score(
    name: &'static str,
    cases: &[Case],
    skipped: Skipped,
    args: &Args,
    bar: &ProgressBar,
) -> CorpusReport {
    let mut tally = Tally::default();
    let mut by_file: BTreeMap<String, Tally> = BTreeMap::new();
    let mut lists: [Vec<Miss>; 4] = Default::default();
    let started = Instant::now();
    for case in cases {
        let a = assess(&case.command);
        let kind = tally.add(case, &a);
        by_file.entry(case.set.clone()).or_default().add(case, &a);
        if let Some(kind) = kind {
            let slot = match kind {
                MissKind::Missed => 0,
                MissKind::FalsePositive => 1,
                MissKind::HardNotDenied => 2,
                MissKind::Denied => 3,
            };
            lists[slot].push(Miss {
                command: case.command.clone(),
                label: case.label.clone(),
                origin: case.origin.clone(),
                decision: a.decision,
                reasons: reason_names(&a),
            });
        }
        bar.inc(1);
    }
    let mean_micros = if cases.is_empty() {
        0.0
    } else {
        started.elapsed().as_secs_f64() * 1e6 / cases.len() as f64
    };
    let min_recall = floor_for(name, &args.min_recall_for, args.min_recall);
    let max_benign = floor_for(name, &args.max_benign_asked_for, args.max_benign_asked);
    let recall = tally.recall();
    let benign_share = tally.benign_asked_share();
    let pass = min_recall.is_none_or(|f| recall.is_none_or(|r| r >= f))
        && max_benign.is_none_or(|f| benign_share.is_none_or(|b| b <= f));
    let [missed, false_positives, hard_not_denied, denied_not_denied] = lists;
    CorpusReport {
        name,
        recall,
        benign_asked_share: benign_share,
        hard_deny_rate: tally.hard_deny_rate(),
        tally,
        skipped: skipped.counts,
        notes: skipped.notes,
        mean_micros,
        min_recall,
        max_benign_asked: max_benign,
        pass,
        by_file: if args.by_file {
            by_file
        } else {
            BTreeMap::new()
        },
        missed,
        false_positives,
        hard_not_denied,
        denied_not_denied,
    }
}

fn floor_for(name: &str, overrides: &[(String, f64)], default: Option<f64>) -> Option<f64> {
    overrides
        .iter()
        .rev()
        .find(|(n, _)| n == name)
        .map(|(_, v)| *v)
        .or(default)
}

fn pct(x: Option<f64>) -> String {
    x.map_or_else(|| "-".to_string(), |v| format!("{:.1}%", v * 100.0))
}

fn line(t: &Tally) -> String {
    let mut s = format!(
        "n={:<5} recall {:>6} ({}/{})  benign asked {:>5} ({}/{})",
        t.n,
        pct(t.recall()),
        t.detected,
        t.dangerous,
        pct(t.benign_asked_share()),
        t.benign_asked,
        t.benign,
    );
    if t.hard > 0 {
        s.push_str(&format!(
            "  hard denied {} ({}/{})",
            pct(t.hard_deny_rate()),
            t.hard_denied,
            t.hard
        ));
    }
    if t.not_denied > 0 {
        s.push_str(&format!(
            "  not-denied labels denied {}/{}",
            t.not_denied_but_denied, t.not_denied
        ));
    }
    if t.warn > 0 {
        s.push_str(&format!("  warn asked {}/{}", t.warn_asked, t.warn));
    }
    s
}

/// One command on one line: newlines and control characters escaped, long ones shortened.
fn shown(command: &str) -> String {
    let escaped: String = command.escape_debug().collect();
    if escaped.chars().count() > 150 {
        format!("{}…", escaped.chars().take(150).collect::<String>())
    } else {
        escaped
    }
}

fn print_text(report: &Report, args: &Args) {
    println!("airlock eval commands  (corpora: {})", report.corpora_dir);
    for c in &report.corpora {
        let verdict = if c.pass { "ok" } else { "UNDER FLOOR" };
        println!(
            "\n{:<7} {}  [{:.1} µs/command]  {verdict}",
            c.name,
            line(&c.tally),
            c.mean_micros
        );
        if let (Some(f), Some(r)) = (c.min_recall, c.recall)
            && r < f
        {
            println!(
                "        recall {} is under the floor {}",
                pct(Some(r)),
                pct(Some(f))
            );
        }
        if let (Some(f), Some(b)) = (c.max_benign_asked, c.benign_asked_share)
            && b > f
        {
            println!(
                "        benign asked {} is over the ceiling {}",
                pct(Some(b)),
                pct(Some(f))
            );
        }
        for (why, n) in &c.skipped {
            println!("        skipped {n}: {why}");
        }
        for note in &c.notes {
            println!("        note: {note}");
        }
        for (file, t) in &c.by_file {
            println!("    {file}\n        {}", line(t));
        }
        for (title, list) in [
            ("missed (dangerous, allowed)", &c.missed),
            (
                "false positives (benign, asked or denied)",
                &c.false_positives,
            ),
            ("hard class only asked", &c.hard_not_denied),
            (
                "denied although labelled only not-to-deny",
                &c.denied_not_denied,
            ),
        ] {
            if list.is_empty() || args.misses == 0 {
                continue;
            }
            println!("  {title}: {}", list.len());
            for m in list.iter().take(args.misses) {
                println!(
                    "    {:<5} {}  <{}> {}{}",
                    m.decision.as_str(),
                    shown(&m.command),
                    m.label,
                    m.origin,
                    if m.reasons.is_empty() {
                        String::new()
                    } else {
                        format!("  by {}", m.reasons.join(", "))
                    }
                );
            }
            if list.len() > args.misses {
                println!("    … {} more (raise --misses)", list.len() - args.misses);
            }
        }
    }
    println!(
        "\n{}",
        if report.pass {
            "all corpora meet their floors"
        } else {
            "some corpus is under a floor"
        }
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_parse_and_win() {
        assert_eq!(parse_override("dcg=0.5"), Ok(("dcg".to_string(), 0.5)));
        assert!(parse_override("dcg").is_err());
        assert!(parse_override("dcg=2").is_err());
        let o = vec![("tirith".to_string(), 0.9)];
        assert_eq!(floor_for("tirith", &o, Some(0.99)), Some(0.9));
        assert_eq!(floor_for("dcg", &o, Some(0.99)), Some(0.99));
        assert_eq!(floor_for("dcg", &o, None), None);
    }

    #[test]
    fn shown_keeps_one_line() {
        assert_eq!(shown("a\nb"), "a\\nb");
        assert!(shown(&"x".repeat(400)).ends_with('…'));
    }
}
