//! Loaders for the labelled shell-command corpora (dcg, tirith, Hermes vectors) read at eval time
//! from `--corpora DIR`. Each corpus labels by its own philosophy; this module turns every label
//! into one [`Expect`] (the mapping is documented in `docs/evaluation.md`). Nothing here is
//! copied into the repository: the files are only read.

use anyhow::{Context, Result, bail};
use serde::Deserialize;
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

/// What airlock should answer for one labelled command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Expect {
    /// Must be detected: ask or deny. `hard` marks the corpus' "never run this" class, whose
    /// deny rate is reported as well.
    Dangerous { hard: bool },
    /// Must be allowed; an ask or a deny counts as a false positive.
    Benign,
    /// A check-specific "this particular guard does not fire" label: only a deny is an error.
    NotDenied,
    /// A corpus' "warn" label: reported, never held to a floor.
    Warn,
}

/// One labelled command.
#[derive(Debug, Clone)]
pub struct Case {
    /// The part of the corpus it comes from (a file, or a Hermes test file and check), for
    /// `--by-file`.
    pub set: String,
    /// The source file (relative to the corpora directory) and position, for the miss list.
    pub origin: String,
    /// The label as the corpus wrote it.
    pub label: String,
    pub expect: Expect,
    pub command: String,
}

/// Cases a corpus holds but that the eval leaves out, with the reason, and notes on how a file
/// had to be read.
#[derive(Debug, Default, Clone)]
pub struct Skipped {
    pub counts: BTreeMap<String, usize>,
    pub notes: Vec<String>,
}

impl Skipped {
    fn add(&mut self, why: &str) {
        *self.counts.entry(why.to_string()).or_default() += 1;
    }
}

/// Every corpus found under `dir`, in a fixed order. A missing corpus is an error: the eval must
/// not silently measure less than it claims.
pub fn load_all(dir: &Path, only: &[String]) -> Result<Vec<(&'static str, Vec<Case>, Skipped)>> {
    let mut out = Vec::new();
    for name in ["dcg", "tirith", "hermes"] {
        if !only.is_empty() && !only.iter().any(|o| o == name) {
            continue;
        }
        let mut skipped = Skipped::default();
        let cases = match name {
            "dcg" => load_dcg(dir, &mut skipped)?,
            "tirith" => load_tirith(dir, &mut skipped)?,
            _ => load_hermes(dir, &mut skipped)?,
        };
        out.push((name, dedupe(cases, &mut skipped), skipped));
    }
    if let Some(bad) = only
        .iter()
        .find(|o| !["dcg", "tirith", "hermes"].contains(&o.as_str()))
    {
        bail!("unknown corpus `{bad}` (known: dcg, tirith, hermes)");
    }
    Ok(out)
}

/// The same command with the same expectation counts once per corpus (dcg repeats its cases
/// across its canonical and regression files).
fn dedupe(cases: Vec<Case>, skipped: &mut Skipped) -> Vec<Case> {
    let mut seen = HashSet::new();
    let mut out = Vec::with_capacity(cases.len());
    for c in cases {
        if seen.insert((c.command.clone(), c.expect)) {
            out.push(c);
        } else {
            skipped.add("duplicate of an earlier case with the same label");
        }
    }
    out
}

fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))
}

fn rel(dir: &Path, path: &Path) -> String {
    path.strip_prefix(dir).unwrap_or(path).display().to_string()
}

/// Files under `root` whose name ends with `ext`, sorted, recursively.
fn files(root: &Path, ext: &str) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        let rd = std::fs::read_dir(&d).with_context(|| format!("cannot list {}", d.display()))?;
        for e in rd {
            let p = e?.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.to_string_lossy().ends_with(ext) {
                out.push(p);
            }
        }
    }
    out.sort();
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// dcg (MIT): regression corpus TOML, fixtures YAML, scenarios YAML, e2e text files.

#[derive(Deserialize)]
struct DcgCorpus {
    #[serde(default)]
    case: Vec<DcgCase>,
}

#[derive(Deserialize)]
struct DcgCase {
    command: Option<String>,
    expected: Option<String>,
    expected_decision: Option<String>,
    input_kind: Option<String>,
    id: Option<String>,
    description: Option<String>,
}

#[derive(Deserialize)]
struct DcgCommand {
    command: String,
}

#[derive(Deserialize)]
struct DcgEdgeCases {
    #[serde(default)]
    false_positives: Vec<DcgCommand>,
    #[serde(default)]
    false_negatives: Vec<DcgCommand>,
}

#[derive(Deserialize)]
struct DcgScenario {
    steps: Vec<DcgStep>,
}

#[derive(Deserialize)]
struct DcgStep {
    command: String,
    expected_decision: String,
}

/// dcg's allow / deny / warn (any case) as an expectation. dcg has no separate "hard" class:
/// every deny counts for recall only.
fn dcg_expect(label: &str) -> Option<Expect> {
    match label.to_ascii_lowercase().as_str() {
        "deny" | "block" => Some(Expect::Dangerous { hard: false }),
        "allow" => Some(Expect::Benign),
        "warn" => Some(Expect::Warn),
        _ => None,
    }
}

fn load_dcg(dir: &Path, skipped: &mut Skipped) -> Result<Vec<Case>> {
    let root = dir.join("dcg/tests");
    if !root.is_dir() {
        bail!("dcg corpus not found at {}", root.display());
    }
    let mut out = Vec::new();
    let mut push =
        |origin: String, label: &str, command: String, skipped: &mut Skipped| match dcg_expect(
            label,
        ) {
            Some(expect) => out.push(Case {
                set: origin.split(':').next().unwrap_or_default().to_string(),
                origin,
                label: label.to_string(),
                expect,
                command,
            }),
            None => skipped.add("dcg: unknown label"),
        };

    for f in files(&root.join("corpus"), ".toml")? {
        let text = read(&f)?;
        let parsed: DcgCorpus =
            toml::from_str(&text).with_context(|| format!("{}: invalid TOML", f.display()))?;
        for (i, c) in parsed.case.into_iter().enumerate() {
            if c.input_kind.as_deref().is_some_and(|k| k != "command") {
                skipped.add("dcg: hook-JSON input, not a command line");
                continue;
            }
            let (Some(command), Some(label)) = (c.command, c.expected.or(c.expected_decision))
            else {
                skipped.add("dcg: case without command or label");
                continue;
            };
            let name =
                c.id.or(c.description)
                    .unwrap_or_else(|| format!("#{}", i + 1));
            push(
                format!("{}: {name}", rel(dir, &f)),
                &label,
                command,
                skipped,
            );
        }
    }

    let fixtures = root.join("fixtures");
    for (file, label) in [
        ("destructive_commands.yaml", "deny"),
        ("safe_commands.yaml", "allow"),
    ] {
        let f = fixtures.join(file);
        let text = read(&f)?;
        let packs: Vec<(String, String)> =
            match serde_yaml_ng::from_str::<BTreeMap<String, Vec<DcgCommand>>>(&text) {
                Ok(packs) => packs
                    .into_iter()
                    .flat_map(|(p, list)| list.into_iter().map(move |c| (p.clone(), c.command)))
                    .collect(),
                Err(e) => {
                    let items = pack_commands_by_line(&text);
                    skipped.notes.push(format!(
                        "{} is not valid YAML ({e}); its {} commands were read line by line",
                        rel(dir, &f),
                        items.len()
                    ));
                    items
                }
            };
        for (pack, command) in packs {
            push(format!("{}: {pack}", rel(dir, &f)), label, command, skipped);
        }
    }
    let f = fixtures.join("edge_cases.yaml");
    let edge: DcgEdgeCases = serde_yaml_ng::from_str(&read(&f)?)
        .with_context(|| format!("{}: invalid YAML", f.display()))?;
    for c in edge.false_positives {
        push(
            format!("{}: false_positives", rel(dir, &f)),
            "allow",
            c.command,
            skipped,
        );
    }
    for c in edge.false_negatives {
        push(
            format!("{}: false_negatives", rel(dir, &f)),
            "deny",
            c.command,
            skipped,
        );
    }
    for f in files(&fixtures.join("scenarios"), ".yaml")? {
        let s: DcgScenario = serde_yaml_ng::from_str(&read(&f)?)
            .with_context(|| format!("{}: invalid YAML", f.display()))?;
        for (i, step) in s.steps.into_iter().enumerate() {
            push(
                format!("{}: step {}", rel(dir, &f), i + 1),
                &step.expected_decision,
                step.command,
                skipped,
            );
        }
    }

    let e2e = root.join("e2e/fixtures/commands");
    for (file, plain) in [
        ("dangerous.txt", Some("deny")),
        ("safe.txt", Some("allow")),
        ("edge_cases.txt", None),
        ("heredocs.txt", None),
    ] {
        let f = e2e.join(file);
        let escaped = file == "heredocs.txt";
        for (line, label, command) in parse_dcg_lines(&read(&f)?, plain, escaped) {
            push(format!("{}:{line}", rel(dir, &f)), &label, command, skipped);
        }
    }
    Ok(out)
}

/// Reads `pack:` / `  - command: "…"` lists line by line, for a fixture file whose YAML does
/// not parse (upstream's `destructive_commands.yaml` has a line with broken quoting).
fn pack_commands_by_line(text: &str) -> Vec<(String, String)> {
    let mut pack = String::new();
    let mut out = Vec::new();
    for line in text.lines() {
        if let Some(rest) = line.trim_start().strip_prefix("- command:") {
            out.push((pack.clone(), yaml_scalar(rest.trim())));
        } else if !line.starts_with([' ', '#']) && line.trim_end().ends_with(':') {
            pack = line.trim_end().trim_end_matches(':').to_string();
        }
    }
    out
}

/// A one-line YAML scalar: double-quoted (backslash escapes), single-quoted (`''`), or plain.
fn yaml_scalar(v: &str) -> String {
    if let Some(inner) = v.strip_prefix('"').and_then(|x| x.strip_suffix('"')) {
        let mut out = String::new();
        let mut chars = inner.chars();
        while let Some(c) = chars.next() {
            if c == '\\' {
                if let Some(n) = chars.next() {
                    out.push(n);
                }
            } else {
                out.push(c);
            }
        }
        out
    } else if let Some(inner) = v.strip_prefix('\'').and_then(|x| x.strip_suffix('\'')) {
        inner.replace("''", "'")
    } else {
        v.to_string()
    }
}

/// One command per line, `#` comments; with `plain = None` each line carries a `BLOCK:` /
/// `ALLOW:` / `WARN:` prefix. A heredoc opened on a line continues over the following lines
/// until its delimiter. `escaped` files write newlines as `\n` (and a backslash as `\\`).
fn parse_dcg_lines(text: &str, plain: Option<&str>, escaped: bool) -> Vec<(usize, String, String)> {
    let mut out = Vec::new();
    let mut lines = text.lines().enumerate();
    while let Some((i, raw)) = lines.next() {
        if raw.trim_start().starts_with('#') || (plain.is_some() && raw.trim().is_empty()) {
            continue;
        }
        let (label, body) = match plain {
            Some(l) => (l.to_string(), raw.to_string()),
            None => match raw.split_once(':') {
                Some((l, b)) if ["BLOCK", "ALLOW", "WARN"].contains(&l) => {
                    (l.to_string(), b.to_string())
                }
                _ => continue,
            },
        };
        let mut command = if escaped { unescape(&body) } else { body };
        // Only the prefixed files spread heredocs over several lines; a plain line such as
        // `echo $((1<<2))` must not swallow the lines after it.
        if let Some(delim) = open_heredoc(&command).filter(|_| plain.is_none()) {
            for (_, next) in lines.by_ref() {
                command.push('\n');
                command.push_str(next);
                if next.trim() == delim {
                    break;
                }
            }
        }
        out.push((i + 1, label, command));
    }
    out
}

/// The delimiter of a heredoc whose body is not on this (single) line.
fn open_heredoc(command: &str) -> Option<String> {
    if command.contains('\n') {
        return None;
    }
    let at = command.find("<<")?;
    let rest = command[at + 2..].trim_start_matches('-').trim_start();
    if rest.starts_with('<') {
        return None; // here-string
    }
    let delim: String = rest
        .trim_start_matches(['\'', '"'])
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    let starts_ok = delim
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    starts_ok.then_some(delim)
}

fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('\\') => out.push('\\'),
            Some(o) => {
                out.push('\\');
                out.push(o);
            }
            None => out.push('\\'),
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// tirith (AGPL-3.0): exec-context fixtures only, read at eval time, never copied.

#[derive(Deserialize)]
struct TirithFile {
    #[serde(default)]
    fixture: Vec<TirithFixture>,
}

#[derive(Deserialize)]
struct TirithFixture {
    name: String,
    input: String,
    context: String,
    #[serde(default)]
    shell: Option<String>,
    expected_action: String,
    #[serde(default)]
    expected_rules: Vec<String>,
}

fn load_tirith(dir: &Path, skipped: &mut Skipped) -> Result<Vec<Case>> {
    let root = dir.join("tirith/tests/fixtures");
    if !root.is_dir() {
        bail!("tirith corpus not found at {}", root.display());
    }
    let mut out = Vec::new();
    for f in files(&root, ".toml")? {
        // output.toml holds tool and terminal output (ANSI logs, prose with injected
        // instructions) checked before it reaches a model: the text scanner's ground, not
        // command lines
        let is_output = f.file_name().is_some_and(|n| n == "output.toml");
        let parsed: TirithFile =
            toml::from_str(&read(&f)?).with_context(|| format!("{}: invalid TOML", f.display()))?;
        for fx in parsed.fixture {
            if is_output {
                skipped.add("tirith: tool or terminal output (output.toml), not a command line");
                continue;
            }
            if fx.context != "exec" {
                skipped.add("tirith: paste or file context, not a command line");
                continue;
            }
            if fx.shell.as_deref().is_some_and(|s| s != "posix") {
                skipped.add(
                    "tirith: PowerShell / cmd.exe / fish input (airlock analyses POSIX shells)",
                );
                continue;
            }
            let needs_db = !fx.expected_rules.is_empty()
                && fx.expected_rules.iter().all(|r| r.starts_with("threat_"));
            if needs_db {
                skipped
                    .add("tirith: label comes from its threat-intelligence database (not shipped)");
                continue;
            }
            let expect = match fx.expected_action.as_str() {
                "block" => Expect::Dangerous { hard: false },
                "allow" => Expect::Benign,
                "warn" => Expect::Warn,
                _ => {
                    skipped.add("tirith: unknown label");
                    continue;
                }
            };
            out.push(Case {
                set: rel(dir, &f),
                origin: format!("{}: {}", rel(dir, &f), fx.name),
                label: fx.expected_action,
                expect,
                command: fx.input,
            });
        }
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// Hermes vectors (MIT): `kind = command` lines; the `check` field says which function a label
// belongs to.

#[derive(Deserialize)]
struct HermesLine {
    kind: String,
    text: String,
    expected: String,
    check: String,
    #[serde(default)]
    source: String,
}

/// Maps a Hermes `(check, expected)` pair. Labels of a narrow guard that say "this guard does not
/// fire" only promise "not denied": the command may still need approval elsewhere.
fn hermes_expect(check: &str, expected: &str) -> Option<Expect> {
    let narrow_guard = check.starts_with("detect_hardline_command")
        || check.starts_with("_check_sudo_stdin_guard")
        || check.starts_with("cron.lifecycle_guard");
    Some(match expected {
        "hardline" => Expect::Dangerous { hard: true },
        "dangerous" | "block" | "attack" => Expect::Dangerous { hard: false },
        "safe" | "benign" | "approved" => Expect::Benign,
        "allow" if !narrow_guard => Expect::Benign,
        "allow" | "not_hardline" => Expect::NotDenied,
        _ => return None,
    })
}

fn load_hermes(dir: &Path, skipped: &mut Skipped) -> Result<Vec<Case>> {
    let f = dir.join("hermes_vectors.jsonl");
    let text = read(&f)?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let l: HermesLine = serde_json::from_str(line)
            .with_context(|| format!("{}:{}: invalid JSON", f.display(), i + 1))?;
        if l.kind != "command" {
            skipped.add("hermes: message, not a command (the text scanner's eval)");
            continue;
        }
        let Some(expect) = hermes_expect(&l.check, &l.expected) else {
            skipped.add("hermes: unknown label");
            continue;
        };
        let src = l.source.rsplit('/').next().unwrap_or_default().to_string();
        out.push(Case {
            set: format!("{src} {}", l.check),
            origin: format!("hermes_vectors.jsonl:{} ({src})", i + 1),
            label: format!("{}={}", l.check, l.expected),
            expect,
            command: l.text,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heredoc_lines_continue_until_delimiter() {
        let text = "# c\nBLOCK:python3 <<EOF\nimport os\nEOF\nALLOW:ls\n";
        let got = parse_dcg_lines(text, None, false);
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].2, "python3 <<EOF\nimport os\nEOF");
        assert_eq!(got[1], (5, "ALLOW".to_string(), "ls".to_string()));
    }

    #[test]
    fn escaped_lines_unescape_newlines_and_backslashes() {
        let got = parse_dcg_lines("BLOCK:sh <<EOF\\nprint \"a\\\\n\"\\nEOF\n", None, true);
        assert_eq!(got[0].2, "sh <<EOF\nprint \"a\\n\"\nEOF");
    }

    #[test]
    fn broken_yaml_lists_are_read_by_line() {
        let text = "# c\npack.a:\n  - command: \"rm -rf \\\"x\\\"\"\n    reason: r\npack.b:\n  - command: 'it''s'\n";
        assert_eq!(
            pack_commands_by_line(text),
            vec![
                ("pack.a".to_string(), "rm -rf \"x\"".to_string()),
                ("pack.b".to_string(), "it's".to_string())
            ]
        );
    }

    #[test]
    fn here_strings_are_not_heredocs() {
        assert_eq!(open_heredoc("bash <<< \"rm -rf /\""), None);
        assert_eq!(open_heredoc("cat <<-'END'"), Some("END".to_string()));
    }

    #[test]
    fn hermes_labels_follow_their_check() {
        assert_eq!(
            hermes_expect("detect_hardline_command", "not_hardline"),
            Some(Expect::NotDenied)
        );
        assert_eq!(
            hermes_expect("_check_sudo_stdin_guard", "allow"),
            Some(Expect::NotDenied)
        );
        assert_eq!(
            hermes_expect("detect_dangerous_command", "safe"),
            Some(Expect::Benign)
        );
        assert_eq!(
            hermes_expect("detect_hardline_command", "hardline"),
            Some(Expect::Dangerous { hard: true })
        );
        assert_eq!(hermes_expect("x", "weird"), None);
    }
}
