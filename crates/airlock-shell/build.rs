//! Embeds every `rules/shell/*.toml` pack into the binary twice: as text (for tests and the
//! policy tools, which re-read the TOML) and pre-parsed as a static table, so a hook process
//! starts without parsing TOML (~15M instructions saved on every agent action). A pack that
//! is not valid TOML, or a rule missing a field, fails the build with the file and rule named.
//!
//! For each pattern it also works out the literals every match must begin with (and whether
//! matches must start at the beginning of the text), so that a candidate rule whose literals
//! are absent is skipped without compiling its regex (~2M instructions each, paid per hook
//! process).
//!
//! And it encodes each pattern's ASCII form (the same pattern with Unicode off, which matches
//! an ASCII text exactly when the pattern does) as a small postfix program that rebuilds the
//! parsed regex tree at run time without parsing (see `src/prebuilt.rs`): parsing the long
//! `(?x)` patterns was about a third of compiling them in a hook process.
//!
//! It also checks what loading a pack checks (unique ids, keywords, examples, message, tier)
//! and builds the packs' keyword indexes, so `RuleSet::builtin` neither checks nor indexes.

use std::{env, fmt::Write as _, fs, path::PathBuf};

fn main() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../rules/shell");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "toml"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    let mut texts = String::from("[\n");
    let mut table = String::from("&[\n");
    let mut pool = Pool::default();
    let mut index = Vec::new();
    let tables = dfa_tables();
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
        let name = f
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let _ = writeln!(
            texts,
            "    ({name:?}, include_str!({:?})),",
            f.display().to_string()
        );
        let text = fs::read_to_string(f).unwrap_or_else(|e| panic!("{name}: {e}"));
        emit_pack(&name, &text, &tables, &mut table, &mut pool, &mut index);
    }
    texts.push(']');
    table.push(']');
    let mut seen = std::collections::HashSet::new();
    for (id, _, _) in &index {
        if !seen.insert(id) {
            panic!("rules/shell: duplicate rule id {id:?}");
        }
    }
    let keywords = keyword_indexes(&index);
    let out = PathBuf::from(env::var_os("OUT_DIR").unwrap_or_default());
    emit_options(&out);
    emit_wrappers(&out);
    let mut spans = String::from("&[");
    for (a, b) in &pool.spans {
        let _ = write!(spans, "Span({a}, {b}), ");
    }
    spans.push(']');
    for (file, body) in [
        ("packs.rs", texts),
        ("table.rs", table),
        ("text.rs", format!("{:?}", pool.text)),
        ("spans.rs", spans),
        ("keywords.rs", keywords),
    ] {
        if let Err(e) = fs::write(out.join(file), body) {
            panic!("cannot write {file}: {e}");
        }
    }
    // raw, for `include_bytes!`: with the DFA tables it is megabytes, too long for a literal
    if let Err(e) = fs::write(out.join("bytes.bin"), &pool.bytes) {
        panic!("cannot write bytes.bin: {e}");
    }
}

/// The table's strings and byte strings, each stored once in one text or one byte string; the
/// table holds offsets into them (`Span`, `Spans` in `src/rules.rs`), not pointers, so loading
/// the binary relocates nothing in it (with `&'static str` fields, the table and its slices
/// were about 9,300 relocations and 160 KB that every process start wrote to).
#[derive(Default)]
struct Pool {
    text: String,
    bytes: Vec<u8>,
    /// `(start, end)` of each list entry, in `text` or `bytes`.
    spans: Vec<(usize, usize)>,
    seen_text: std::collections::HashMap<String, (usize, usize)>,
    seen_bytes: std::collections::HashMap<Vec<u8>, (usize, usize)>,
}

impl Pool {
    fn text_at(&mut self, s: &str) -> (usize, usize) {
        if let Some(&at) = self.seen_text.get(s) {
            return at;
        }
        let at = (self.text.len(), self.text.len() + s.len());
        self.text.push_str(s);
        self.seen_text.insert(s.to_string(), at);
        at
    }

    fn bytes_at(&mut self, b: &[u8]) -> (usize, usize) {
        if let Some(&at) = self.seen_bytes.get(b) {
            return at;
        }
        let at = (self.bytes.len(), self.bytes.len() + b.len());
        self.bytes.extend_from_slice(b);
        self.seen_bytes.insert(b.to_vec(), at);
        at
    }

    /// `Span(start, end)` of `s` in the text.
    fn str(&mut self, s: &str) -> String {
        let (a, b) = self.text_at(s);
        format!("Span({a}, {b})")
    }

    /// `Span(start, end)` of `b` in the byte string.
    fn bin(&mut self, b: &[u8]) -> String {
        let (a, b) = self.bytes_at(b);
        format!("Span({a}, {b})")
    }

    /// `Spans(first, end)`: the list's entries in `spans`, each a span of the text.
    fn strs(&mut self, list: &[String]) -> String {
        let first = self.spans.len();
        for s in list {
            let at = self.text_at(s);
            self.spans.push(at);
        }
        format!("Spans({first}, {})", self.spans.len())
    }

    /// `Spans(first, end)`: the list's entries in `spans`, each a span of the byte string.
    fn bins(&mut self, list: &[Vec<u8>]) -> String {
        let first = self.spans.len();
        for b in list {
            let at = self.bytes_at(b);
            self.spans.push(at);
        }
        format!("Spans({first}, {})", self.spans.len())
    }
}

/// Writes the pack's rules into `out` (their strings into `pool`) and pushes `(full id, target
/// index, keywords)` for each onto `index`. Checks what `RuleSet::load` checks for packs read
/// at run time, so the built-in table loads without checking again.
fn emit_pack(
    name: &str,
    text: &str,
    tables: &std::collections::HashMap<Vec<u8>, Vec<u8>>,
    out: &mut String,
    pool: &mut Pool,
    index: &mut Vec<(String, usize, Vec<String>)>,
) {
    let doc: toml::Table = text
        .parse()
        .unwrap_or_else(|e| panic!("rules/shell/{name}: invalid TOML: {e}"));
    let pack = str_field(&doc, "pack", name);
    let rules = doc
        .get("rules")
        .and_then(|r| r.as_array())
        .cloned()
        .unwrap_or_default();
    for r in rules {
        let Some(r) = r.as_table() else {
            panic!("rules/shell/{name}: [[rules]] entries must be tables");
        };
        let at = format!(
            "{name}: rule {:?}",
            r.get("id").and_then(|v| v.as_str()).unwrap_or("?")
        );
        let (on, on_index) = match r.get("on").and_then(|v| v.as_str()).unwrap_or("command") {
            // the order of `Target::ALL`
            "command" => ("Command", 0),
            "pipeline" => ("Pipeline", 1),
            "redirect" => ("Redirect", 2),
            "code" => ("Code", 3),
            other => panic!("{at}: unknown `on = {other:?}`"),
        };
        let decision = match str_field(r, "decision", &at).as_str() {
            "allow" => "Allow",
            "ask" => "Ask",
            "deny" => "Deny",
            other => panic!("{at}: unknown decision {other:?}"),
        };
        let severity = match str_field(r, "severity", &at).as_str() {
            "info" => "Info",
            "low" => "Low",
            "medium" => "Medium",
            "high" => "High",
            "critical" => "Critical",
            other => panic!("{at}: unknown severity {other:?}"),
        };
        let tier = r.get("tier").and_then(|v| v.as_integer()).unwrap_or(-1);
        if !(0..=4).contains(&tier) {
            panic!("{at}: tier must be 0-4");
        }
        let id = str_field(r, "id", &at);
        let full_id = format!("{pack}.{id}");
        let keywords: Vec<String> = strs(r, "keywords", &at)
            .iter()
            .map(|k| k.to_ascii_lowercase())
            .collect();
        if keywords.is_empty() || keywords.iter().any(|k| k.trim().is_empty()) {
            panic!("{at}: needs at least one non-empty keyword");
        }
        if strs(r, "match", &at).is_empty() {
            panic!("{at}: needs at least one `match` example");
        }
        if str_field(r, "message", &at).trim().is_empty() {
            panic!("{at}: needs a message");
        }
        index.push((full_id.clone(), on_index, keywords.clone()));
        let pattern = str_field(r, "pattern", &at);
        let literals = match prefix_literals(&pattern) {
            Some((anchored, lits)) => format!("Some(({anchored}, {}))", pool.bins(&lits)),
            None => "None".to_string(),
        };
        let unless_text = r.get("unless").and_then(|v| v.as_str());
        let unless = match unless_text {
            Some(u) => format!("Some({})", pool.str(u)),
            None => "None".to_string(),
        };
        let ascii_code = ascii_program(&pattern);
        let unless_code = unless_text.and_then(ascii_program);
        let mut some_bin = |b: Option<&Vec<u8>>| match b {
            Some(b) => format!("Some({})", pool.bin(b)),
            None => "None".to_string(),
        };
        let ascii = some_bin(ascii_code.as_ref());
        let unless_ascii = some_bin(unless_code.as_ref());
        // a table only for exactly the program it was made from
        let dfa = some_bin(ascii_code.as_ref().and_then(|c| tables.get(c)));
        let unless_dfa = some_bin(unless_code.as_ref().and_then(|c| tables.get(c)));
        let _ = writeln!(
            out,
            "    StaticRule {{ pack: {}, id: {}, full_id: {}, on: Target::{on}, keywords: {}, pattern: {}, literals: {literals}, unless: {unless}, ascii: {ascii}, unless_ascii: {unless_ascii}, dfa: {dfa}, unless_dfa: {unless_dfa}, decision: Decision::{decision}, tier: {tier}, severity: Severity::{severity}, message: {}, remediation: {}, examples: {}, counter_examples: {} }},",
            pool.str(&pack),
            pool.str(&id),
            pool.str(&full_id),
            pool.strs(&keywords),
            pool.str(&pattern),
            pool.str(&str_field(r, "message", &at)),
            pool.str(r.get("remediation").and_then(|v| v.as_str()).unwrap_or("")),
            pool.strs(&strs(r, "match", &at)),
            pool.strs(&strs(r, "not_match", &at)),
        );
    }
}

/// `src/dfa_tables.bin` (see `src/dfa.rs`): each ASCII program with the DFA table made from it.
/// A missing or malformed file gives no tables (every rule then uses the lazy DFA); the test
/// that regenerates the file reports it.
fn dfa_tables() -> std::collections::HashMap<Vec<u8>, Vec<u8>> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src/dfa_tables.bin");
    println!("cargo:rerun-if-changed={}", path.display());
    let data = fs::read(&path).unwrap_or_default();
    let mut out = std::collections::HashMap::new();
    let mut at = 0;
    let next = |at: &mut usize| -> Option<Vec<u8>> {
        let n = u32::from_le_bytes(data.get(*at..*at + 4)?.try_into().ok()?) as usize;
        let part = data.get(*at + 4..*at + 4 + n)?.to_vec();
        *at += 4 + n;
        Some(part)
    };
    while at < data.len() {
        match (next(&mut at), next(&mut at)) {
            (Some(code), Some(table)) => {
                out.insert(code, table);
            }
            _ => return std::collections::HashMap::new(),
        }
    }
    out
}

fn str_field(t: &toml::Table, key: &str, at: &str) -> String {
    match t.get(key).and_then(|v| v.as_str()) {
        Some(s) => s.to_string(),
        None => panic!("{at}: missing string field `{key}`"),
    }
}

fn strs(t: &toml::Table, key: &str, at: &str) -> Vec<String> {
    match t.get(key) {
        None => Vec::new(),
        Some(v) => v
            .as_array()
            .unwrap_or_else(|| panic!("{at}: `{key}` must be a list of strings"))
            .iter()
            .map(|x| {
                x.as_str()
                    .unwrap_or_else(|| panic!("{at}: `{key}` must be a list of strings"))
                    .to_string()
            })
            .collect(),
    }
}

/// The literals every match of `pattern` begins with, and whether every match starts at the
/// beginning of the text (`^` without `(?m)`); `None` when there is no such finite set (or the
/// pattern does not parse: the tests report that).
fn prefix_literals(pattern: &str) -> Option<(bool, Vec<Vec<u8>>)> {
    use regex_syntax::hir::Look;
    use regex_syntax::hir::literal::{ExtractKind, Extractor};
    // the same syntax defaults as `regex::RegexBuilder`
    let hir = regex_syntax::ParserBuilder::new()
        .build()
        .parse(pattern)
        .ok()?;
    let anchored = hir.properties().look_set_prefix().contains(Look::Start);
    let seq = Extractor::new().kind(ExtractKind::Prefix).extract(&hir);
    let lits: Vec<Vec<u8>> = seq
        .literals()?
        .iter()
        .map(|l| l.as_bytes().to_vec())
        .collect();
    if lits.is_empty() || lits.iter().any(|l| l.is_empty()) {
        return None;
    }
    Some((anchored, lits))
}

/// The pattern's ASCII form (Unicode off, bytes mode, as `regex::bytes` with `unicode(false)`)
/// as a postfix program for `src/prebuilt.rs`; `None` when that form does not parse (a Unicode
/// property, say: the rule then always uses its Unicode regex).
fn ascii_program(pattern: &str) -> Option<Vec<u8>> {
    let hir = regex_syntax::ParserBuilder::new()
        .unicode(false)
        .utf8(false)
        .build()
        .parse(pattern)
        .ok()?;
    let mut out = Vec::new();
    encode(&hir, &mut out)?;
    Some(out)
}

fn put(out: &mut Vec<u8>, n: usize) -> Option<()> {
    out.extend_from_slice(&u32::try_from(n).ok()?.to_le_bytes());
    Some(())
}

/// Children first, then the node: `E` empty, `L` literal, `B` byte class, `U` Unicode class,
/// `K` look-around, `R` repetition, `C` capture, `S` concatenation, `A` alternation. Numbers
/// are u32 little-endian; `u32::MAX` stands for "none".
fn encode(hir: &regex_syntax::hir::Hir, out: &mut Vec<u8>) -> Option<()> {
    use regex_syntax::hir::{Class, HirKind};
    const NONE: usize = u32::MAX as usize;
    match hir.kind() {
        HirKind::Empty => out.push(b'E'),
        HirKind::Literal(l) => {
            out.push(b'L');
            put(out, l.0.len())?;
            out.extend_from_slice(&l.0);
        }
        HirKind::Class(Class::Bytes(c)) => {
            out.push(b'B');
            put(out, c.ranges().len())?;
            for r in c.ranges() {
                out.extend_from_slice(&[r.start(), r.end()]);
            }
        }
        HirKind::Class(Class::Unicode(c)) => {
            out.push(b'U');
            put(out, c.ranges().len())?;
            for r in c.ranges() {
                put(out, r.start() as usize)?;
                put(out, r.end() as usize)?;
            }
        }
        HirKind::Look(l) => {
            out.push(b'K');
            put(out, l.as_repr() as usize)?;
        }
        HirKind::Repetition(r) => {
            encode(&r.sub, out)?;
            out.push(b'R');
            put(out, r.min as usize)?;
            put(out, r.max.map_or(NONE, |m| m as usize))?;
            out.push(u8::from(r.greedy));
        }
        HirKind::Capture(c) => {
            encode(&c.sub, out)?;
            out.push(b'C');
            put(out, c.index as usize)?;
            match &c.name {
                Some(n) => {
                    put(out, n.len())?;
                    out.extend_from_slice(n.as_bytes());
                }
                None => put(out, NONE)?,
            }
        }
        HirKind::Concat(subs) | HirKind::Alternation(subs) => {
            for s in subs {
                encode(s, out)?;
            }
            out.push(if matches!(hir.kind(), HirKind::Concat(_)) {
                b'S'
            } else {
                b'A'
            });
            put(out, subs.len())?;
        }
    }
    Some(())
}

/// `bytes` as a Rust byte-string literal.
fn byte_string(bytes: &[u8]) -> String {
    let mut s = String::from("b\"");
    for &b in bytes {
        match b {
            b'"' | b'\\' => {
                s.push('\\');
                s.push(char::from(b));
            }
            0x20..=0x7e => s.push(char::from(b)),
            _ => {
                let _ = write!(s, "\\x{b:02x}");
            }
        }
    }
    s.push('"');
    s
}

/// The four keyword indexes (one per target, in `Target::ALL` order) as `KeywordIndex::new`
/// builds them, as a Rust array of statics: building them cost every hook process about 0.27M
/// instructions. A test checks they equal what `KeywordIndex::new` builds.
fn keyword_indexes(index: &[(String, usize, Vec<String>)]) -> String {
    let mut out = String::from("[\n");
    for target in 0..4 {
        let mut long: Vec<(u16, usize, usize, usize)> = Vec::new();
        let mut bytes: Vec<u8> = Vec::new();
        let mut pairs = vec![0u64; 1 << 10];
        let mut single: Vec<(u8, usize)> = Vec::new();
        let mut single_bytes = [0u64; 4];
        for (rule, (_, on, keywords)) in index.iter().enumerate() {
            if *on != target {
                continue;
            }
            for k in keywords {
                match k.as_bytes() {
                    [] => {}
                    [b] => {
                        let b = b.to_ascii_lowercase();
                        single.push((b, rule));
                        single_bytes[usize::from(b >> 6)] |= 1 << (b & 63);
                    }
                    [a, b, ..] => {
                        let pair = (u16::from(a.to_ascii_lowercase()) << 8)
                            | u16::from(b.to_ascii_lowercase());
                        pairs[usize::from(pair >> 6)] |= 1 << (pair & 63);
                        long.push((pair, bytes.len(), k.len(), rule));
                        bytes.extend(k.bytes().map(|c| c.to_ascii_lowercase()));
                    }
                }
            }
        }
        long.sort_unstable_by_key(|k| (k.0, k.1));
        // each pair's rank among the pairs present, and where its keywords begin in `long`
        let mut ranks: Vec<u32> = Vec::with_capacity(pairs.len());
        let mut seen = 0u32;
        for w in &pairs {
            ranks.push(seen);
            seen += w.count_ones();
        }
        let mut starts: Vec<u32> = Vec::new();
        for (n, k) in long.iter().enumerate() {
            if n == 0 || long[n - 1].0 != k.0 {
                starts.push(n as u32);
            }
        }
        starts.push(long.len() as u32);
        let _ = write!(out, "    KeywordIndex {{ long: Cow::Borrowed(&[");
        for (pair, start, len, rule) in &long {
            let _ = write!(
                out,
                "Keyword {{ pair: {pair}, start: {start}, len: {len}, rule: {rule} }}, "
            );
        }
        let _ = writeln!(
            out,
            "]), bytes: Cow::Borrowed({}), pairs: Cow::Borrowed(&{pairs:?}), ranks: Cow::Borrowed(&{ranks:?}), starts: Cow::Borrowed(&{starts:?}), single: Cow::Borrowed(&{single:?}), single_bytes: {single_bytes:?} }},",
            byte_string(&bytes)
        );
    }
    out.push(']');
    out
}

/// Compiles `rules/options/programs.toml` (options that write, run or take code, per program)
/// into a static table for `src/options.rs`, so a hook never parses it.
fn emit_options(out: &std::path::Path) {
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../rules/options/programs.toml");
    println!("cargo:rerun-if-changed={}", file.display());
    let text = fs::read_to_string(&file).unwrap_or_else(|e| panic!("rules/options: {e}"));
    let doc: toml::Table = text
        .parse()
        .unwrap_or_else(|e| panic!("rules/options/programs.toml: invalid TOML: {e}"));
    let programs = match doc.get("program") {
        Some(toml::Value::Array(a)) => a.clone(),
        _ => panic!("rules/options/programs.toml: no [[program]] entries"),
    };
    const KEYS: &[&str] = &[
        "names",
        "write",
        "write_operands",
        "run",
        "run_piped",
        "program",
        "code",
        "run_prefix",
        "match",
        "not_match",
    ];
    let strings = |t: &toml::Table, k: &str| -> Vec<String> {
        match t.get(k) {
            None => Vec::new(),
            Some(toml::Value::Array(a)) => a
                .iter()
                .map(|v| match v {
                    toml::Value::String(s) => s.clone(),
                    other => panic!("rules/options: `{k}` holds {other}, not a string"),
                })
                .collect(),
            Some(other) => panic!("rules/options: `{k}` is {other}, not a list"),
        }
    };
    let mut body = String::from("&[\n");
    for p in &programs {
        let toml::Value::Table(t) = p else {
            panic!("rules/options: [[program]] entries must be tables");
        };
        for k in t.keys() {
            if !KEYS.contains(&k.as_str()) {
                panic!("rules/options: unknown key `{k}`");
            }
        }
        let names = strings(t, "names");
        if names.is_empty() || strings(t, "match").is_empty() || strings(t, "not_match").is_empty()
        {
            panic!("rules/options: {names:?} needs names, match and not_match examples");
        }
        let operands: Vec<i64> = match t.get("write_operands") {
            None => Vec::new(),
            Some(toml::Value::Array(a)) => a
                .iter()
                .map(|v| {
                    v.as_integer().filter(|n| *n >= 1).unwrap_or_else(|| {
                        panic!("rules/options: write_operands must be positive integers")
                    })
                })
                .collect(),
            Some(_) => panic!("rules/options: write_operands must be a list"),
        };
        let _ = writeln!(
            body,
            "    ProgramOptions {{ names: &{names:?}, write: &{:?}, write_operands: &{operands:?}, run: &{:?}, run_piped: &{:?}, program: &{:?}, code: &{:?}, run_prefix: &{:?} }},",
            strings(t, "write"),
            strings(t, "run"),
            strings(t, "run_piped"),
            strings(t, "program"),
            strings(t, "code"),
            strings(t, "run_prefix"),
        );
    }
    body.push(']');
    if let Err(e) = fs::write(out.join("options.rs"), body) {
        panic!("cannot write options.rs: {e}");
    }
}

/// `rules/options/wrappers.toml` as a static table (`src/wrapper_table.rs`) and a `match` from
/// program name to entry, so finding a wrapper costs what the hand-written `match` did.
fn emit_wrappers(out: &std::path::Path) {
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../rules/options/wrappers.toml");
    println!("cargo:rerun-if-changed={}", file.display());
    let text = fs::read_to_string(&file).unwrap_or_else(|e| panic!("rules/options: {e}"));
    let doc: toml::Table = text
        .parse()
        .unwrap_or_else(|e| panic!("rules/options/wrappers.toml: invalid TOML: {e}"));
    let Some(toml::Value::Array(wrappers)) = doc.get("wrapper") else {
        panic!("rules/options/wrappers.toml: no [[wrapper]] entries");
    };
    const KEYS: &[&str] = &[
        "names",
        "valued",
        "operands",
        "operand",
        "script",
        "runs_nothing_with",
        "number",
        "no_command",
        "stdin_shell_with",
        "stdin_shell_letters",
        "examples",
    ];
    let strings = |t: &toml::Table, k: &str| -> Vec<String> {
        match t.get(k) {
            None => Vec::new(),
            Some(toml::Value::Array(a)) => a
                .iter()
                .map(|v| match v {
                    toml::Value::String(s) => s.clone(),
                    other => {
                        panic!("rules/options/wrappers.toml: `{k}` holds {other}, not a string")
                    }
                })
                .collect(),
            Some(other) => panic!("rules/options/wrappers.toml: `{k}` is {other}, not a list"),
        }
    };
    let mut body = String::from("&[\n");
    let mut index = String::from("match name {\n");
    let mut seen = std::collections::HashSet::new();
    for (i, w) in wrappers.iter().enumerate() {
        let toml::Value::Table(t) = w else {
            panic!("rules/options/wrappers.toml: [[wrapper]] entries must be tables");
        };
        for k in t.keys() {
            if !KEYS.contains(&k.as_str()) {
                panic!("rules/options/wrappers.toml: unknown key `{k}`");
            }
        }
        let names = strings(t, "names");
        let examples = match t.get("examples") {
            Some(toml::Value::Array(a)) if !a.is_empty() => a,
            _ => panic!("rules/options/wrappers.toml: {names:?} needs examples"),
        };
        for e in examples {
            let ok = matches!(e, toml::Value::Array(pair) if pair.len() == 2 && pair.iter().all(toml::Value::is_str));
            if !ok {
                panic!("rules/options/wrappers.toml: {names:?}: an example is [line, runs]");
            }
        }
        if names.is_empty() {
            panic!("rules/options/wrappers.toml: an entry has no names");
        }
        for n in &names {
            if !seen.insert(n.clone()) {
                panic!("rules/options/wrappers.toml: {n:?} is listed twice");
            }
        }
        let operands = match t.get("operands") {
            None => 0,
            Some(v) => v
                .as_integer()
                .filter(|n| (0..=4).contains(n))
                .unwrap_or_else(|| {
                    panic!("rules/options/wrappers.toml: {names:?}: operands is 0 to 4")
                }),
        };
        let duration = match t.get("operand").map(|v| v.as_str()) {
            None => false,
            Some(Some("duration")) => true,
            Some(_) => panic!("rules/options/wrappers.toml: {names:?}: operand is \"duration\""),
        };
        let script = match t.get("script") {
            None => false,
            Some(toml::Value::Boolean(b)) => *b,
            Some(_) => panic!("rules/options/wrappers.toml: {names:?}: script is true or false"),
        };
        let stdin_shell = match t.get("no_command").map(|v| v.as_str()) {
            None => false,
            Some(Some("stdin_shell")) => true,
            Some(_) => {
                panic!("rules/options/wrappers.toml: {names:?}: no_command is \"stdin_shell\"")
            }
        };
        let letters = match t.get("stdin_shell_letters") {
            None => String::new(),
            Some(toml::Value::String(s)) if s.chars().all(|c| c.is_ascii_alphabetic()) => s.clone(),
            Some(_) => {
                panic!("rules/options/wrappers.toml: {names:?}: stdin_shell_letters are letters")
            }
        };
        let _ = writeln!(
            body,
            "    Wrapper {{ valued: &{:?}, operands: {operands}, duration_operand: {duration}, script: {script}, runs_nothing_with: &{:?}, number: &{:?}, stdin_shell: {stdin_shell}, stdin_shell_with: &{:?}, stdin_shell_letters: {letters:?} }},",
            strings(t, "valued"),
            strings(t, "runs_nothing_with"),
            strings(t, "number"),
            strings(t, "stdin_shell_with"),
        );
        let alts: Vec<String> = names.iter().map(|n| format!("{n:?}")).collect();
        let _ = writeln!(index, "    {} => Some({i}),", alts.join(" | "));
    }
    body.push(']');
    index.push_str("    _ => None,\n}\n");
    for (name, text) in [("wrappers.rs", body), ("wrapper_index.rs", index)] {
        if let Err(e) = fs::write(out.join(name), text) {
            panic!("cannot write {name}: {e}");
        }
    }
}
