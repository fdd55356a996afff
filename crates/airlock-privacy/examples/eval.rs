//! The privacy filter's detection figures: recall on `datasets/privacy` (one line per format in
//! `formats.tsv`, and the realistic files listed in `expected.tsv`), and what it finds in benign
//! text (files or directories given after `--benign`: JSON and JSON lines are read as their
//! string values, anything else as text). Secrets found in benign text are false positives;
//! personal data found there is counted and shown, for a person to judge.
//!
//! `cargo run --release -p airlock-privacy --example eval -- datasets/privacy --benign ../shared/corpora/alpacaeval …`

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use airlock_privacy::{Kind, Scanner, Selection};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dir = PathBuf::from(
        args.first()
            .ok_or("usage: eval DATASET_DIR [--benign PATH…]")?,
    );
    let benign: Vec<PathBuf> = args
        .iter()
        .skip_while(|a| *a != "--benign")
        .skip(1)
        .map(PathBuf::from)
        .collect();
    let s = Scanner::builtin(&Selection::default())?;

    // One line per format.
    let mut per_rule: BTreeMap<String, (u32, u32)> = BTreeMap::new();
    for line in std::fs::read_to_string(dir.join("formats.tsv"))?.lines() {
        let Some((rule, text)) = line.split_once('\t') else {
            continue;
        };
        if line.starts_with('#') {
            continue;
        }
        let text = text.replace("\\n", "\n");
        let e = per_rule.entry(rule.to_string()).or_default();
        e.1 += 1;
        if s.scan(&text).iter().any(|f| &*f.rule == rule) {
            e.0 += 1;
        } else {
            println!("missed {rule}: {}", clip(&text));
        }
    }
    let (hit, all) = per_rule
        .values()
        .fold((0, 0), |(h, a), (x, y)| (h + x, a + y));
    println!(
        "formats: {hit}/{all} lines found by their rule ({} rules)",
        per_rule.len()
    );

    // Realistic files.
    let mut found_values = 0;
    let mut expected = 0;
    let mut extra: Vec<String> = Vec::new();
    let mut by_file: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    for line in std::fs::read_to_string(dir.join("expected.tsv"))?.lines() {
        let parts: Vec<&str> = line.splitn(3, '\t').collect();
        if line.starts_with('#') || parts.len() != 3 {
            continue;
        }
        by_file
            .entry(parts[0].to_string())
            .or_default()
            .push((parts[1].to_string(), parts[2].to_string()));
    }
    for (file, want) in &by_file {
        let text = std::fs::read_to_string(dir.join(file))?;
        let found = s.scan(&text);
        for (rule, value) in want {
            expected += 1;
            if found.iter().any(|f| {
                text[f.span.clone()].contains(value.as_str())
                    || value.contains(&text[f.span.clone()])
            }) {
                found_values += 1;
            } else {
                println!("missed in {file}: {rule}");
            }
        }
        for f in &found {
            let t = &text[f.span.clone()];
            if !want
                .iter()
                .any(|(_, v)| t.contains(v.as_str()) || v.contains(t))
            {
                extra.push(format!("{file}: {} {}", f.rule, clip(t)));
            }
        }
    }
    println!("realistic files: {found_values}/{expected} labelled values found");
    for e in &extra {
        println!("  also found (unlabelled) {e}");
    }

    // Benign text.
    let mut texts = Vec::new();
    for p in &benign {
        collect(p, &mut texts)?;
    }
    let bytes: usize = texts.iter().map(String::len).sum();
    let mut secrets: BTreeMap<String, u32> = BTreeMap::new();
    let mut personal: BTreeMap<String, u32> = BTreeMap::new();
    let mut flagged_texts = 0;
    let mut shown = 0;
    for t in &texts {
        let found = s.scan(t);
        if found.iter().any(|f| f.kind == Kind::Secret) {
            flagged_texts += 1;
        }
        for f in found {
            let map = match f.kind {
                Kind::Secret => &mut secrets,
                Kind::Personal => &mut personal,
            };
            *map.entry(f.rule.to_string()).or_default() += 1;
            if shown < 60 && (f.kind == Kind::Secret || &*f.rule != "email") {
                shown += 1;
                let from = f.span.start.saturating_sub(20);
                let from = (0..=from)
                    .rev()
                    .find(|i| t.is_char_boundary(*i))
                    .unwrap_or(0);
                println!(
                    "  benign {} {}: …{}",
                    if f.kind == Kind::Secret {
                        "secret?"
                    } else {
                        "personal"
                    },
                    f.rule,
                    clip(&t[from..f.span.end])
                );
            }
        }
    }
    println!(
        "benign: {} texts, {:.1} MB; texts with a secret finding: {flagged_texts} ({:.3}%); secret findings {:?}; personal findings {:?}",
        texts.len(),
        bytes as f64 / 1e6,
        100.0 * f64::from(flagged_texts) / texts.len().max(1) as f64,
        secrets,
        personal
    );
    Ok(())
}

fn clip(t: &str) -> String {
    let t: String = t.chars().take(60).collect();
    t.replace('\n', "\\n")
}

fn collect(p: &Path, out: &mut Vec<String>) -> Result<(), Box<dyn std::error::Error>> {
    if p.is_dir() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(p)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        entries.sort();
        for e in entries {
            collect(&e, out)?;
        }
        return Ok(());
    }
    let name = p.to_string_lossy();
    if name.ends_with("LICENSE") || name.ends_with(".md") && name.contains("corpora") {
        return Ok(());
    }
    let Ok(text) = std::fs::read_to_string(p) else {
        return Ok(());
    };
    if name.ends_with(".json")
        && let Ok(v) = serde_json::from_str::<serde_json::Value>(&text)
    {
        strings(&v, out);
        return Ok(());
    }
    if name.ends_with(".jsonl") {
        for l in text.lines() {
            if let Ok(v) = serde_json::from_str::<serde_json::Value>(l) {
                strings(&v, out);
            }
        }
        return Ok(());
    }
    out.push(text);
    Ok(())
}

fn strings(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::String(s) => out.push(s.clone()),
        serde_json::Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        serde_json::Value::Object(o) => o.values().for_each(|x| strings(x, out)),
        _ => {}
    }
}
