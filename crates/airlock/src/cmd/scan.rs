//! `airlock scan`: scans text for jailbreaks, prompt injection and crisis signals.
//!
//! One text (argument, `--file` or `--stdin`) gives a human report or, with `--json`, one JSON
//! result; `--jsonl` reads one JSON string per input line and writes one JSON result per line.
//! Exit codes: 0 every text clean, 1 something detected, 3 error (bad input or flags).

use std::io::{BufRead, Read, Write};
use std::path::PathBuf;

use airlock_core::ReasonCode;
use airlock_shield::{CrisisResponse, Direction, ScanResult, Scanner};
use anyhow::{Context, Result, bail};

use super::EXIT_ERROR;

const EXIT_CLEAN: u8 = 0;
const EXIT_DETECTED: u8 = 1;

#[derive(clap::Args)]
pub struct Args {
    /// Who wrote the text: `user` (a person's message) or `tool` (tool output, documents).
    #[arg(long, default_value = "user", value_parser = parse_direction)]
    direction: Direction,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
    /// Read one JSON string per line from the file or stdin and print one JSON result per line.
    #[arg(long, conflicts_with = "text")]
    jsonl: bool,
    /// Read the text from this file.
    #[arg(long, conflicts_with_all = ["text", "stdin"])]
    file: Option<PathBuf>,
    /// Read the text from standard input.
    #[arg(long, conflicts_with = "text")]
    stdin: bool,
    /// A crisis-response file (TOML) replacing the shipped resources and trusted models.
    #[arg(long, env = "AIRLOCK_CRISIS_CONFIG")]
    crisis_config: Option<PathBuf>,
    /// The text to scan.
    text: Option<String>,
}

fn parse_direction(s: &str) -> Result<Direction, String> {
    s.parse()
}

pub fn run(args: Args) -> Result<u8> {
    let mut scanner = Scanner::builtin().context("building the text scanner")?;
    if let Some(path) = &args.crisis_config {
        let src = std::fs::read_to_string(path)
            .with_context(|| format!("reading --crisis-config {}", path.display()))?;
        let response = CrisisResponse::from_toml(&src)
            .with_context(|| format!("in --crisis-config {}", path.display()))?;
        scanner.set_crisis_response(response);
    }
    if args.jsonl {
        let input: Box<dyn BufRead> = match &args.file {
            Some(p) => Box::new(std::io::BufReader::new(
                std::fs::File::open(p).with_context(|| format!("opening {}", p.display()))?,
            )),
            None => Box::new(std::io::stdin().lock()),
        };
        return jsonl(&scanner, args.direction, input);
    }
    let bytes = match (&args.text, &args.file, args.stdin) {
        (Some(t), _, _) => t.clone().into_bytes(),
        (None, Some(p), _) => {
            std::fs::read(p).with_context(|| format!("reading {}", p.display()))?
        }
        (None, None, true) => {
            let mut b = Vec::new();
            std::io::stdin()
                .read_to_end(&mut b)
                .context("reading stdin")?;
            b
        }
        (None, None, false) => bail!("give the text to scan, or --file F, or --stdin"),
    };
    let Ok(text) = String::from_utf8(bytes) else {
        eprintln!(
            "airlock: error: {}: the input is not valid UTF-8, so it was not scanned",
            ReasonCode::NotUtf8
        );
        return Ok(EXIT_ERROR);
    };
    let result = scanner.scan(&text, args.direction);
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer(&mut out, &result)?;
        writeln!(out)?;
    } else {
        human(&mut out, &result, &text)?;
    }
    Ok(exit_for(&result))
}

fn exit_for(r: &ScanResult) -> u8 {
    if r.verdict.is_clean() {
        EXIT_CLEAN
    } else {
        EXIT_DETECTED
    }
}

fn jsonl(scanner: &Scanner, dir: Direction, input: Box<dyn BufRead>) -> Result<u8> {
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut code = EXIT_CLEAN;
    for (n, line) in input.split(b'\n').enumerate() {
        let line = line.context("reading input")?;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let parsed: Result<String, String> = match std::str::from_utf8(&line) {
            Err(_) => Err(ReasonCode::NotUtf8.as_str().to_string()),
            Ok(s) => serde_json::from_str::<String>(s)
                .map_err(|_| ReasonCode::MalformedInput.as_str().to_string()),
        };
        match parsed {
            Ok(text) => {
                let r = scanner.scan(&text, dir);
                code = code.max(exit_for(&r));
                serde_json::to_writer(&mut out, &r)?;
            }
            Err(reason) => {
                code = EXIT_ERROR;
                let e = serde_json::json!({
                    "error": reason,
                    "line": n + 1,
                    "message": "each input line must be one JSON string",
                });
                serde_json::to_writer(&mut out, &e)?;
            }
        }
        writeln!(out)?;
    }
    out.flush()?;
    Ok(code)
}

fn human(out: &mut impl Write, r: &ScanResult, text: &str) -> Result<()> {
    let dir = match r.direction {
        Direction::User => "user",
        Direction::Tool => "tool",
    };
    writeln!(
        out,
        "{}  confidence {:.3}  score {:.3}  ({dir} text, {} bytes)",
        r.verdict.as_str(),
        r.confidence,
        r.score,
        text.len()
    )?;
    if !r.categories.is_empty() {
        writeln!(out, "  categories: {}", r.categories.join(", "))?;
    }
    for m in &r.matches {
        writeln!(
            out,
            "  {} [{}..{}] {:?}: {:?}",
            m.rule_id, m.span.start, m.span.end, m.source, m.evidence
        )?;
    }
    let flags = r.flags.names();
    if !flags.is_empty() {
        writeln!(out, "  normalisation flags: {}", flags.join(", "))?;
    }
    writeln!(out, "  model score {:.3}", r.model_score)?;
    if let Some(c) = &r.crisis {
        writeln!(out, "\n{}\n{}", c.safety_question, c.message)?;
        for res in &c.resources {
            writeln!(out, "  - {} ({}): {}", res.name, res.region, res.contact)?;
        }
        if c.route_to_trusted_model {
            if c.trusted_models.is_empty() {
                writeln!(
                    out,
                    "  route to a trusted model (none configured: see --crisis-config)"
                )?;
            } else {
                writeln!(
                    out,
                    "  route to a trusted model: {}",
                    c.trusted_models.join(", ")
                )?;
            }
        }
    }
    Ok(())
}
