//! Embeds every `rules/shell/*.toml` pack into the binary twice: as text (for tests and the
//! policy tools, which re-read the TOML) and pre-parsed as a static table, so a hook process
//! starts without parsing TOML (~15M instructions saved on every agent action). A pack that
//! is not valid TOML, or a rule missing a field, fails the build with the file and rule named.
//!
//! For each pattern it also works out the literals every match must begin with (and whether
//! matches must start at the beginning of the text), so that a candidate rule whose literals
//! are absent is skipped without compiling its regex (~2M instructions each, paid per hook
//! process).

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
        emit_pack(&name, &text, &mut table);
    }
    texts.push(']');
    table.push(']');
    let out = PathBuf::from(env::var_os("OUT_DIR").unwrap_or_default());
    for (file, body) in [("packs.rs", texts), ("table.rs", table)] {
        if let Err(e) = fs::write(out.join(file), body) {
            panic!("cannot write {file}: {e}");
        }
    }
}

fn emit_pack(name: &str, text: &str, out: &mut String) {
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
        let on = match r.get("on").and_then(|v| v.as_str()).unwrap_or("command") {
            "command" => "Command",
            "pipeline" => "Pipeline",
            "redirect" => "Redirect",
            "code" => "Code",
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
        let id = str_field(r, "id", &at);
        let full_id = format!("{pack}.{id}");
        let pattern = str_field(r, "pattern", &at);
        let literals = match prefix_literals(&pattern) {
            Some((anchored, lits)) => {
                let lits: Vec<String> = lits.iter().map(|l| format!("&{l:?}")).collect();
                format!("Some(({anchored}, &[{}]))", lits.join(", "))
            }
            None => "None".to_string(),
        };
        let unless = match r.get("unless").and_then(|v| v.as_str()) {
            Some(u) => format!("Some({u:?})"),
            None => "None".to_string(),
        };
        let _ = writeln!(
            out,
            "    StaticRule {{ pack: {pack:?}, id: {id:?}, full_id: {full_id:?}, on: Target::{on}, keywords: &{:?}, pattern: {pattern:?}, literals: {literals}, unless: {unless}, decision: Decision::{decision}, tier: {tier}, severity: Severity::{severity}, message: {:?}, remediation: {:?}, examples: &{:?}, counter_examples: &{:?} }},",
            strs(r, "keywords", &at)
                .iter()
                .map(|k| k.to_ascii_lowercase())
                .collect::<Vec<_>>(),
            str_field(r, "message", &at),
            r.get("remediation").and_then(|v| v.as_str()).unwrap_or(""),
            strs(r, "match", &at),
            strs(r, "not_match", &at),
        );
    }
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
