//! Reads one JSON string per line from a file and prints each one's scan result as one JSON line,
//! as `airlock scan --jsonl` does, without building the CLI: for comparing the scanner's results
//! before and after a change to its speed (identical output, matches and spans included).
//!
//! `cargo run --release -p airlock-shield --example scan_jsonl -- FILE user|tool > OUT`

use std::io::{BufRead, Write};

use airlock_shield::{Direction, Scanner};

fn main() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: scan_jsonl FILE user|tool")?;
    let dir = match args.next().as_deref() {
        None | Some("user") => Direction::User,
        Some("tool") => Direction::Tool,
        Some(o) => return Err(format!("direction: {o:?} is not user or tool")),
    };
    let scanner = Scanner::builtin().map_err(|e| e.to_string())?;
    let file = std::fs::File::open(&path).map_err(|e| format!("{path}: {e}"))?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for line in std::io::BufReader::new(file).split(b'\n') {
        let line = line.map_err(|e| e.to_string())?;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let text: String = serde_json::from_slice(&line).map_err(|e| e.to_string())?;
        let r = scanner.scan(&text, dir);
        serde_json::to_writer(&mut out, &r).map_err(|e| e.to_string())?;
        writeln!(out).map_err(|e| e.to_string())?;
    }
    out.flush().map_err(|e| e.to_string())
}
