//! Scans generated benign ASCII prose (the bench's text) a fixed number of times, for
//! instruction counts under `valgrind --tool=callgrind`, which are repeatable on a loaded machine
//! where wall-clock figures are not:
//!
//! `cargo build --release -p airlock-shield --example scan_cost`
//! `valgrind --tool=callgrind target/release/examples/scan_cost 1048576 4`
//!
//! Arguments: bytes of prose (default 1 MiB), number of scans (default 4), direction
//! (`user` or `tool`, default `user`). The scanner is built before the timed part, so the counts
//! of `scan` are read from the profile's `airlock_shield::Scanner::scan` entry.

use std::hint::black_box;

use airlock_shield::{Direction, builtin};

const SENTENCES: &[&str] = &[
    "The committee met on Tuesday to review the budget for the coming year.",
    "Most of the discussion focused on maintenance of the older buildings near the river.",
    "A few members asked whether the library could stay open later during the exam season.",
    "The treasurer explained that heating costs had risen faster than expected last winter.",
    "After a short break, the group agreed to publish the minutes on the website by Friday.",
    "Volunteers will organise the spring market again, with stalls for local growers and bakers.",
    "Questions about parking were deferred until the traffic survey is finished in May.",
    "Everyone thanked the outgoing chair for six years of careful and patient work.",
];

/// The same prose as `benches/scan.rs`.
fn prose(bytes: usize) -> String {
    let mut out = String::with_capacity(bytes + 128);
    let mut i = 0usize;
    while out.len() < bytes {
        out.push_str(SENTENCES[i % SENTENCES.len()]);
        out.push(' ');
        if i % 5 == 4 {
            out.push_str(&format!("Item {} was noted.\n\n", i / 5));
        }
        i += 1;
    }
    out.truncate(bytes);
    out
}

fn main() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let bytes: usize = args
        .next()
        .map_or(Ok(1 << 20), |a| a.parse())
        .map_err(|e| format!("bytes: {e}"))?;
    let runs: usize = args
        .next()
        .map_or(Ok(4), |a| a.parse())
        .map_err(|e| format!("runs: {e}"))?;
    let dir = match args.next().as_deref() {
        None | Some("user") => Direction::User,
        Some("tool") => Direction::Tool,
        Some(o) => return Err(format!("direction: {o:?} is not user or tool")),
    };
    let scanner = builtin().map_err(|e| e.to_string())?;
    let text = prose(bytes);
    let mut clean = 0usize;
    for _ in 0..runs {
        let r = scanner.scan(black_box(&text), dir);
        clean += usize::from(r.verdict == airlock_shield::TextVerdict::Clean);
    }
    println!("{runs} scans of {} bytes, {clean} clean", text.len());
    Ok(())
}
