//! Time per rule on a text file (each rule's regex alone over the whole text, cold: for finding
//! the rule that makes the scanner slow), then the whole scanner's throughput, warm, by wall time
//! and by time on the CPU (the second is what a loaded machine does not distort).
//! `cargo run --release -p airlock-privacy --example rule_cost -- FILE`

use airlock_privacy::{Scanner, Selection};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: rule_cost FILE")?;
    let text = std::fs::read_to_string(path)?;
    for r in airlock_privacy::load()? {
        let re = regex_automata::meta::Regex::builder()
            .syntax(
                regex_automata::util::syntax::Config::new()
                    .unicode(false)
                    .utf8(false),
            )
            .build(&r.pattern)?;
        let t = std::time::Instant::now();
        let n = re.find_iter(&text).count();
        println!(
            "{:>10.2} ms {:>6} {}",
            t.elapsed().as_secs_f64() * 1e3,
            n,
            r.id
        );
    }
    for (name, personal) in [("secrets", false), ("secrets+personal", true)] {
        let s = Scanner::builtin(&Selection {
            personal,
            ..Selection::default()
        })?;
        let n = s.scan(&text).len(); // warm: the lazy DFA's states are built
        let (cpu0, t) = (on_cpu_ns(), std::time::Instant::now());
        const ROUNDS: u32 = 20;
        for _ in 0..ROUNDS {
            std::hint::black_box(s.scan(std::hint::black_box(&text)));
        }
        let wall = t.elapsed().as_secs_f64() / f64::from(ROUNDS);
        let cpu = match (cpu0, on_cpu_ns()) {
            (Some(a), Some(b)) => Some((b - a) as f64 / 1e9 / f64::from(ROUNDS)),
            _ => None,
        };
        let mb = text.len() as f64 / 1e6;
        println!(
            "whole scanner ({name}): {n} findings; {:.0} MB/s by wall time, {} by time on the CPU",
            mb / wall,
            cpu.map_or("?".into(), |c| format!("{:.0} MB/s", mb / c))
        );
    }
    Ok(())
}

/// This thread's time on a CPU (`/proc/thread-self/schedstat`, ns).
fn on_cpu_ns() -> Option<u64> {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}
