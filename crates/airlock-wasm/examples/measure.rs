//! Measures a WASM tool's cost in process: loading and running the smallest WASI command, and
//! a compute loop with airlock's fuel metering (in slices) against the same loop in a plain
//! `wasmi` engine without fuel. Run it in release:
//! `cargo run --release -p airlock-wasm --example measure` (figures in docs/benchmarks.md).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::{Duration, Instant};

use airlock_wasm::{Ending, Entry, Invocation, Limits, Output};

fn module(name: &str) -> Vec<u8> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/modules")
        .join(format!("{name}.wat"));
    wat::parse_file(p).unwrap()
}

fn invocation(entry: Entry) -> Invocation {
    Invocation {
        args: vec!["x".into()],
        env: Vec::new(),
        stdin: Vec::new(),
        preopens: Vec::new(),
        entry,
        stdout: Output::Capture,
        stderr: Output::Capture,
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let limits = Limits {
        fuel: u64::MAX / 2,
        timeout: Duration::from_secs(600),
        ..Limits::default()
    };
    let hello = module("hello");
    let runs: Vec<Duration> = (0..500)
        .map(|_| {
            let t = Instant::now();
            let o = airlock_wasm::run(&hello, invocation(Entry::Start), &limits).unwrap();
            assert_eq!(o.ending, Ending::Exited(0));
            t.elapsed()
        })
        .collect();
    println!(
        "hello: load + instantiate + run, median of 500: {:?}",
        median(runs)
    );

    let n: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(50_000_000);
    let count = module("count");
    let mut metered = Vec::new();
    let mut fueled = Vec::new();
    let mut plain = Vec::new();
    let mut fuel = 0;
    // a plain wasmi engine, with or without fuel metering, one call (no slices)
    let bare = |consume_fuel: bool| {
        let mut config = wasmi::Config::default();
        config.consume_fuel(consume_fuel);
        let engine = wasmi::Engine::new(&config);
        let m = wasmi::Module::new(&engine, &count).unwrap();
        let mut store = wasmi::Store::new(&engine, ());
        if consume_fuel {
            store.set_fuel(u64::MAX / 2).unwrap();
        }
        let linker = wasmi::Linker::<()>::new(&engine);
        let inst = linker.instantiate_and_start(&mut store, &m).unwrap();
        let f = inst.get_typed_func::<i64, i64>(&store, "count").unwrap();
        let t = Instant::now();
        assert_eq!(f.call(&mut store, n as i64).unwrap(), n as i64);
        t.elapsed()
    };
    for _ in 0..7 {
        let t = Instant::now();
        let o = airlock_wasm::run(
            &count,
            invocation(Entry::Export {
                name: "count".into(),
                params: vec![n.to_string()],
            }),
            &limits,
        )
        .unwrap();
        metered.push(t.elapsed());
        assert_eq!(o.results, [n.to_string()]);
        fuel = o.fuel_used;
        fueled.push(bare(true));
        plain.push(bare(false));
    }
    let per = |d: Duration| d.as_nanos() as f64 / n as f64;
    let (m, f, p) = (median(metered), median(fueled), median(plain));
    println!("count({n}), medians of 7 alternated runs ({fuel} fuel):");
    println!(
        "  airlock-wasm, fuel in 2^20 slices: {m:?} ({:.2} ns/iteration)",
        per(m)
    );
    println!(
        "  wasmi, fuel metered, one call:     {f:?} ({:.2} ns/iteration)",
        per(f)
    );
    println!(
        "  wasmi, no fuel:                    {p:?} ({:.2} ns/iteration)",
        per(p)
    );
    println!(
        "  fuel metering {:+.1}%, slices {:+.1}%, together {:+.1}%",
        (f.as_secs_f64() / p.as_secs_f64() - 1.0) * 100.0,
        (m.as_secs_f64() / f.as_secs_f64() - 1.0) * 100.0,
        (m.as_secs_f64() / p.as_secs_f64() - 1.0) * 100.0
    );
}
