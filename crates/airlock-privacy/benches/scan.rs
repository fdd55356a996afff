//! Privacy scanner speed on text without secrets (goal ≥ 200 MB/s): prose, and this
//! repository's own Rust source (identifiers like `key` and `token`, numbers, `@`, URLs: the
//! keyword prefilter and the shape automaton both have work there).
//!
//! `cargo bench -p airlock-privacy --bench scan`

use std::hint::black_box;

use airlock_privacy::{Scanner, Selection};
use criterion::{Criterion, Throughput};

fn prose(bytes: usize) -> String {
    const SENTENCES: &[&str] = &[
        "The committee met on Tuesday to review the budget for the coming year.",
        "Most of the discussion focused on maintenance of the older buildings near the river.",
        "A few members asked whether the library could stay open later during the exam season.",
        "The treasurer explained that heating costs had risen faster than expected last winter.",
        "After a short break, the group agreed to publish the minutes on the website by Friday.",
        "Questions about parking were deferred until the traffic survey is finished in May.",
    ];
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

/// The repository's Rust sources (the crates this bench sits beside), about 1 MiB.
fn source(bytes: usize) -> String {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let mut files = Vec::new();
    for c in [
        "airlock-shell",
        "airlock-policy",
        "airlock-proxy",
        "airlock-confirm",
    ] {
        let dir = format!("{root}/{c}/src");
        let mut stack = vec![std::path::PathBuf::from(dir)];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().is_some_and(|x| x == "rs") {
                    files.push(p);
                }
            }
        }
    }
    files.sort();
    let mut out = String::new();
    for f in files {
        out.push_str(&std::fs::read_to_string(f).unwrap_or_default());
        if out.len() >= bytes {
            break;
        }
    }
    let mut end = bytes.min(out.len());
    while !out.is_char_boundary(end) {
        end -= 1;
    }
    out.truncate(end);
    out
}

fn benches(c: &mut Criterion) {
    let all = Scanner::builtin(&Selection::default()).unwrap_or_else(|e| panic!("{e}"));
    let secrets = Scanner::builtin(&Selection {
        personal: false,
        ..Selection::default()
    })
    .unwrap_or_else(|e| panic!("{e}"));
    let texts = [
        ("prose_1MiB", prose(1 << 20)),
        ("rust_source_1MiB", source(1 << 20)),
    ];
    let mut g = c.benchmark_group("privacy_scan");
    g.sample_size(20);
    for (name, text) in &texts {
        g.throughput(Throughput::Bytes(text.len() as u64));
        g.bench_function(format!("{name}/secrets"), |b| {
            b.iter(|| secrets.scan(black_box(text)))
        });
        g.bench_function(format!("{name}/secrets+personal"), |b| {
            b.iter(|| all.scan(black_box(text)))
        });
    }
    g.finish();
}

criterion::criterion_group!(group, benches);
criterion::criterion_main!(group);
