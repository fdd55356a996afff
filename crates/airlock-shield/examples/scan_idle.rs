//! What one scan costs when the machine was idle before it, as a proxy's scan of a request
//! that follows a model's answer is: the scanner's code, tables and the thread's stack have left
//! the caches by then, and a short text costs many times its warm figure.
//!
//! `cargo run --release -p airlock-shield --example scan_idle -- [PAUSE_MS] [RUNS] [TEXT]`
//!
//! Defaults: a 50 ms pause (a thread's sleep) before each timed scan, 300 runs, and the user
//! message of `airlock bench proxy`. Prints the median and 90th percentile after the pause, then
//! the same for scans run back to back.

use std::hint::black_box;
use std::time::{Duration, Instant};

use airlock_shield::{Direction, builtin};

const BENCH_MESSAGE: &str = "Run the test suite and tell me whether the build is green.";

fn main() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let pause: u64 = number(args.next(), 50)?;
    let runs: usize = number(args.next(), 300)?;
    let text = args.next().unwrap_or_else(|| BENCH_MESSAGE.to_string());
    if runs == 0 {
        return Err("RUNS must be at least 1".into());
    }
    let scanner = builtin().map_err(|e| e.to_string())?;
    black_box(scanner.scan(&text, Direction::User));
    let time = || {
        let start = Instant::now();
        black_box(scanner.scan(black_box(&text), Direction::User));
        start.elapsed()
    };
    let mut idle = Vec::with_capacity(runs);
    for _ in 0..runs {
        std::thread::sleep(Duration::from_millis(pause));
        idle.push(time());
    }
    let mut warm: Vec<Duration> = (0..runs.max(1000)).map(|_| time()).collect();
    println!(
        "{} bytes, {runs} scans after {pause} ms idle: {}",
        text.len(),
        summary(&mut idle)
    );
    println!("back to back: {}", summary(&mut warm));
    Ok(())
}

fn number<T: std::str::FromStr>(arg: Option<String>, default: T) -> Result<T, String> {
    arg.map_or(Ok(default), |a| {
        a.parse().map_err(|_| format!("not a number: {a}"))
    })
}

fn summary(v: &mut [Duration]) -> String {
    v.sort();
    let at = |q: usize| v[(v.len() * q / 100).min(v.len() - 1)];
    format!("p50 {:.1} µs, p90 {:.1} µs", micros(at(50)), micros(at(90)))
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}
