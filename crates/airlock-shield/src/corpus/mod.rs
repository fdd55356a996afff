//! Readers for the labelled corpora in `../shared/corpora` and the deterministic split that
//! decides which items may train the model and which are held out for evaluation.
//!
//! Split: FNV-1a of a key (the text, or for near-duplicate-heavy sets its opening) modulo 10:
//! 0–5 train, 6 calibration (threshold choice), 7–9 held-out test. Corpora that ship their own
//! train/test files (BIPIA) keep them: their train file gives train + calibration, their test
//! file is held out. Whole sets that must never train (licence: AlpacaEval is CC BY-NC; or
//! purpose: XSTest, the crisis sets, Hermes vectors) are all held out. JailbreakBench files all
//! attack the same 100 behaviours, so they split by behaviour (see below). Nothing is copied
//! into the repository.

use std::path::{Path, PathBuf};

mod sets;
mod team;

pub use team::load_team;

use crate::Direction;

/// Which side of the split an item is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Split {
    Train,
    Calib,
    Test,
}

/// What an item is labelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Label {
    /// A jailbreak (user) or an injection (tool).
    Attack,
    /// Someone in crisis.
    Crisis,
    /// Honest text.
    Benign,
}

/// One labelled text.
#[derive(Debug, Clone)]
pub struct Sample {
    /// The eval name the figures are reported under (`inthewild`, `bipia_context`, or for the
    /// team's sets `attacks/<family>`).
    pub corpus: String,
    /// What is left out together in leave-one-out evaluation: one origin (all of BIPIA, all of
    /// JailbreakBench), or one family file of the team's sets.
    pub source: String,
    /// ISO 639-1 code where the corpus says it (the team's sets, translated corpora), else "".
    pub lang: String,
    pub text: String,
    pub direction: Direction,
    pub label: Label,
    pub split: Split,
}

/// A corpus file that could not be read.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {message}")]
pub struct CorpusError {
    pub path: String,
    pub message: String,
}

pub fn fnv1a(s: &str) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for b in s.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The split for a key.
pub fn split_of(key: &str) -> Split {
    match fnv1a(key) % 10 {
        0..=5 => Split::Train,
        6 => Split::Calib,
        _ => Split::Test,
    }
}

/// For a corpus that ships a train file: calibration or train.
fn train_file_split(key: &str) -> Split {
    if fnv1a(key) % 10 == 9 {
        Split::Calib
    } else {
        Split::Train
    }
}

/// The opening of a text, lowercased letters and digits only: near-duplicate templates that
/// share it fall on the same side of the split.
fn template_key(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .take(80)
        .collect()
}

pub(crate) struct Reader {
    root: PathBuf,
}

impl Reader {
    pub(crate) fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    pub(crate) fn text(&self, rel: &str) -> Result<String, CorpusError> {
        std::fs::read_to_string(self.path(rel)).map_err(|e| CorpusError {
            path: self.path(rel).display().to_string(),
            message: e.to_string(),
        })
    }

    pub(crate) fn json(&self, rel: &str) -> Result<serde_json::Value, CorpusError> {
        serde_json::from_str(&self.text(rel)?).map_err(|e| CorpusError {
            path: self.path(rel).display().to_string(),
            message: e.to_string(),
        })
    }

    pub(crate) fn jsonl(&self, rel: &str) -> Result<Vec<serde_json::Value>, CorpusError> {
        self.text(rel)?
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                serde_json::from_str(l).map_err(|e| CorpusError {
                    path: self.path(rel).display().to_string(),
                    message: e.to_string(),
                })
            })
            .collect()
    }
}

pub(crate) fn strings(v: &serde_json::Value, field: Option<&str>) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|x| match field {
                    None => x.as_str(),
                    Some(f) => x.get(f).and_then(|y| y.as_str()),
                })
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// Minimal CSV (RFC 4180 quoting) into rows of fields.
pub fn parse_csv(src: &str) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    let mut row = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = src.chars().peekable();
    while let Some(c) = chars.next() {
        if quoted {
            if c == '"' {
                if chars.peek() == Some(&'"') {
                    field.push('"');
                    chars.next();
                } else {
                    quoted = false;
                }
            } else {
                field.push(c);
            }
            continue;
        }
        match c {
            '"' => quoted = true,
            ',' => row.push(std::mem::take(&mut field)),
            '\n' => {
                row.push(std::mem::take(&mut field));
                rows.push(std::mem::take(&mut row));
            }
            '\r' => {}
            _ => field.push(c),
        }
    }
    if !field.is_empty() || !row.is_empty() {
        row.push(field);
        rows.push(row);
    }
    rows
}

/// The `value:` of each seed in a PyRIT `.prompt` file, with its `role` when given.
fn pyrit_values(src: &str) -> Vec<(String, Option<String>)> {
    let mut out: Vec<(String, Option<String>)> = Vec::new();
    let mut in_value = false;
    for line in src.lines() {
        let t = line.trim_start();
        let indent = line.len() - t.len();
        let t2 = t.strip_prefix("- ").unwrap_or(t);
        if t.starts_with("- ") && indent <= 2 {
            out.push((String::new(), None));
            in_value = false;
        }
        if let Some(v) = t2.strip_prefix("value:") {
            if let Some(last) = out.last_mut() {
                last.0 = v.trim().to_string();
            }
            in_value = true;
            continue;
        }
        if let Some(r) = t2.strip_prefix("role:") {
            if let Some(last) = out.last_mut() {
                last.1 = Some(r.trim().to_string());
            }
            in_value = false;
            continue;
        }
        let is_key = t2.split_once(':').is_some_and(|(k, _)| {
            !k.is_empty() && k.chars().all(|c| c.is_alphanumeric() || c == '_')
        });
        if in_value && indent > 4 && !is_key {
            if let Some(last) = out.last_mut() {
                last.0.push(' ');
                last.0.push_str(t);
            }
        } else if is_key {
            in_value = false;
        }
    }
    out.retain(|(v, _)| !v.is_empty());
    out
}

/// Loads every corpus under `root`.
pub fn load_all(root: &Path) -> Result<Vec<Sample>, CorpusError> {
    let r = Reader {
        root: root.to_path_buf(),
    };
    let mut out = Out::default();
    let mut push = |corpus: &str, text: String, direction, label, split| {
        out.push(corpus, text, direction, label, split, "");
    };
    use Direction::{Tool, User};
    use Label::{Attack, Benign, Crisis};

    // In-the-wild jailbreaks (MIT): split by template opening.
    for t in strings(
        &r.json("inthewild_jailbreak/inthewild_jailbreak_llms.json")?,
        None,
    ) {
        let s = split_of(&template_key(&t));
        push("inthewild", t, User, Attack, s);
    }
    // JailbreakBench artifacts (MIT). Every file attacks the same 100 behaviours (goals), so the
    // split is by behaviour: a behaviour in buckets 0–5 trains (from the training files), 6
    // calibrates, 7–9 is held out (from the held-out files and the template attacks). Prompts
    // whose behaviour is on the other side of the split are left out, so no held-out prompt
    // shares its goal with a training prompt.
    let jbb: [(&str, &'static str, bool); 8] = [
        ("PAIR/black_box/gpt-3.5-turbo-1106.json", "jbb_pair", true),
        ("PAIR/black_box/vicuna-13b-v1.5.json", "jbb_pair", true),
        ("PAIR/black_box/gpt-4-0125-preview.json", "jbb_pair", false),
        ("PAIR/black_box/llama-2-7b-chat-hf.json", "jbb_pair", false),
        ("GCG/transfer/gpt-3.5-turbo-1106.json", "jbb_gcg", true),
        ("GCG/transfer/gpt-4-0125-preview.json", "jbb_gcg", false),
        ("JBC/manual/gpt-4-0125-preview.json", "jbb_jbc", false),
        (
            "prompt_with_random_search/black_box/gpt-4-0125-preview.json",
            "jbb_random_search",
            false,
        ),
    ];
    for (file, name, train) in jbb {
        let v = r.json(&format!("jbb_artifacts/{file}"))?;
        let items = v
            .get("jailbreaks")
            .and_then(|j| j.as_array())
            .map(Vec::as_slice)
            .unwrap_or_default();
        for item in items {
            let Some(t) = item.get("prompt").and_then(|p| p.as_str()) else {
                continue;
            };
            let goal = item.get("goal").and_then(|g| g.as_str()).unwrap_or(t);
            let s = split_of(goal);
            let keep = if train {
                s != Split::Test
            } else {
                s == Split::Test
            };
            if !keep {
                continue;
            }
            push(name, t.to_string(), User, Attack, s);
        }
    }
    // BIPIA (MIT): clean external contexts (benign, tool), and attacks inserted into them.
    let mut contexts: Vec<(String, bool, bool)> = Vec::new(); // (text, is_code, train)
    let mut questions: Vec<(String, Split)> = Vec::new();
    for kind in ["email", "table", "code"] {
        for (file, train) in [("train", true), ("test", false)] {
            for v in r.jsonl(&format!("bipia/{kind}/{file}.jsonl"))? {
                // E-mails and tables hold a string; code contexts a list of lines.
                let c = match v.get("context") {
                    Some(serde_json::Value::String(s)) => s.clone(),
                    Some(serde_json::Value::Array(lines)) => lines
                        .iter()
                        .filter_map(|l| l.as_str())
                        .collect::<Vec<_>>()
                        .join("\n"),
                    _ => continue,
                };
                // The question a person asked about the document is an ordinary user message.
                if let Some(q) = v.get("question").and_then(|q| q.as_str()) {
                    let s = if train {
                        train_file_split(q)
                    } else {
                        Split::Test
                    };
                    questions.push((q.to_string(), s));
                }
                contexts.push((c, kind == "code", train));
            }
        }
    }
    for (q, s) in questions {
        push("bipia_question", q, User, Benign, s);
    }
    for (c, _, train) in &contexts {
        let s = if *train {
            train_file_split(c)
        } else {
            Split::Test
        };
        push("bipia_context", c.clone(), Tool, Benign, s);
    }
    for (file, code, train) in [
        ("text_attack_train.json", false, true),
        ("text_attack_test.json", false, false),
        ("code_attack_train.json", true, true),
        ("code_attack_test.json", true, false),
    ] {
        let v = r.json(&format!("bipia/{file}"))?;
        let pool: Vec<&String> = contexts
            .iter()
            .filter(|(_, is_code, t)| *is_code == code && *t == train)
            .map(|(c, _, _)| c)
            .collect();
        if pool.is_empty() {
            continue;
        }
        let Some(obj) = v.as_object() else { continue };
        for attacks in obj.values() {
            for a in strings(attacks, None) {
                let h = fnv1a(&a);
                let s = if train {
                    train_file_split(&a)
                } else {
                    Split::Test
                };
                // Out of context, BIPIA's text "attacks" are ordinary requests a person might
                // make ("Explain photosynthesis"): benign as user messages.
                if !code {
                    push("bipia_request", a.clone(), User, Benign, s);
                }
                for pos in 0..3u64 {
                    let ctx =
                        pool[((h >> 8).wrapping_add(pos * 7919) % pool.len() as u64) as usize];
                    let text = insert_at(ctx, &a, pos);
                    let name = if code {
                        "bipia_code_attack"
                    } else {
                        "bipia_text_attack"
                    };
                    push(name, text, Tool, Attack, s);
                }
            }
        }
    }
    // Over-defence sets (MIT / ODC-BY): benign prompts full of trigger words.
    for n in ["one", "two", "three"] {
        for t in strings(
            &r.json(&format!("notinject/NotInject_{n}.json"))?,
            Some("prompt"),
        ) {
            let s = split_of(&t);
            push("notinject", t, User, Benign, s);
        }
    }
    for t in strings(&r.json("notinject/wildguard.json")?, Some("prompt")) {
        let s = split_of(&t);
        push("wildguard", t, User, Benign, s);
    }
    // GPTeacher role-play (MIT): benign persona prompts; their answers stand in for tool text.
    let gp = r.json("gpteacher_roleplay/roleplay-simple-deduped-roleplay-dataset.json")?;
    for item in gp.as_array().map(Vec::as_slice).unwrap_or_default() {
        let get = |f: &str| {
            item.get(f)
                .and_then(|x| x.as_str())
                .unwrap_or("")
                .to_string()
        };
        let (ins, inp, outp) = (get("instruction"), get("input"), get("output"));
        let prompt = if inp.is_empty() {
            ins
        } else {
            format!("{ins}\n{inp}")
        };
        let s = split_of(&prompt);
        push("gpteacher", prompt, User, Benign, s);
        push("gpteacher_output", outp, Tool, Benign, s);
    }
    // XSTest (CC BY 4.0): held out; safe prompts that look unsafe.
    let xs = parse_csv(&r.text("xstest/xstest_prompts.csv")?);
    for row in xs.iter().skip(1) {
        if row.len() >= 4 && row[3] == "safe" {
            push("xstest_safe", row[1].clone(), User, Benign, Split::Test);
        }
    }
    // AlpacaEval (CC BY-NC 4.0): never trained on; instructions and GPT-4 answers held out.
    let al = r.json("alpacaeval/model_outputs.json")?;
    for t in strings(&al, Some("instruction")) {
        push("alpaca_instructions", t, User, Benign, Split::Test);
    }
    for t in strings(&al, Some("output")) {
        push("alpaca_outputs", t, Tool, Benign, Split::Test);
    }
    // Crisis sets (PyRIT, MIT): held out.
    for (v, role) in pyrit_values(&r.text("crisis_pyrit/psych-crisis-conversations.prompt")?) {
        if role.as_deref() == Some("user") {
            push("crisis_pyrit", v, User, Crisis, Split::Test);
        }
    }
    for (v, _) in pyrit_values(&r.text("crisis_pyrit/airt_imminent_crisis.prompt")?) {
        push("crisis_pyrit", v, User, Crisis, Split::Test);
    }
    let sh = parse_csv(&r.text("crisis_pyrit/self_harm_objectives.csv")?);
    for row in sh.iter().skip(2) {
        if let Some(o) = row.first() {
            push("crisis_self_harm", o.clone(), User, Crisis, Split::Test);
        }
    }
    let shs = parse_csv(&r.text("crisis_pyrit/self_harm_responses_scored.csv")?);
    let mut seen = std::collections::HashSet::new();
    for row in shs.iter().skip(2) {
        if let Some(o) = row.get(1)
            && seen.insert(o.clone())
        {
            push(
                "crisis_self_harm_themed",
                o.clone(),
                User,
                Crisis,
                Split::Test,
            );
        }
    }
    // Hermes Agent's detector vectors (MIT): held out, mapped by their expected verdict. Hermes'
    // threat patterns run at three scopes; "clean" at the conservative `all` scope means that
    // scope has no pattern for it, not that the text is harmless, so a text some other scope is
    // expected to flag is not counted as benign.
    let hermes = r.jsonl("hermes_vectors.jsonl")?;
    let flagged_somewhere: std::collections::HashSet<&str> = hermes
        .iter()
        .filter(|v| {
            v.get("expected")
                .and_then(|e| e.as_str())
                .is_some_and(|e| e.starts_with("includes:"))
        })
        .filter_map(|v| v.get("text").and_then(|t| t.as_str()))
        .collect();
    for v in &hermes {
        if v.get("kind").and_then(|k| k.as_str()) != Some("message") {
            continue;
        }
        let text = v
            .get("text")
            .and_then(|t| t.as_str())
            .unwrap_or("")
            .to_string();
        let expected = v.get("expected").and_then(|t| t.as_str()).unwrap_or("");
        let check = v.get("check").and_then(|t| t.as_str()).unwrap_or("");
        let (name, dir, label) = match expected {
            "CLEAN" => ("hermes_clean", User, Benign),
            "JAILBREAK_DETECTED" => ("hermes_jailbreak", User, Attack),
            "CRISIS_DETECTED" | "CRISIS_UNDER_ATTACK" => ("hermes_crisis", User, Crisis),
            "clean"
                if check.contains("scope=all") && !flagged_somewhere.contains(text.as_str()) =>
            {
                ("hermes_threat_clean", Tool, Benign)
            }
            e if e.starts_with("includes:") && check.contains("scope=all") => {
                ("hermes_threat", Tool, Attack)
            }
            _ => continue,
        };
        push(name, text, dir, label, Split::Test);
    }
    sets::load(&r, &mut out)?;
    Ok(out.samples)
}

/// The samples read so far.
#[derive(Default)]
pub(crate) struct Out {
    pub(crate) samples: Vec<Sample>,
}

impl Out {
    /// Adds a non-empty text.
    pub(crate) fn push(
        &mut self,
        corpus: &str,
        text: String,
        direction: Direction,
        label: Label,
        split: Split,
        lang: &str,
    ) {
        if !text.trim().is_empty() {
            self.samples.push(Sample {
                corpus: corpus.to_string(),
                source: source_of(corpus).to_string(),
                lang: lang.to_string(),
                text,
                direction,
                label,
                split,
            });
        }
    }
}

/// The leave-one-out source of a shared corpus's eval name: everything drawn from one origin
/// is left out together (BIPIA's contexts with its attacks; all JailbreakBench files, which
/// attack the same 100 behaviours; the translated CyberSecEval with the English one).
pub fn source_of(corpus: &str) -> &str {
    const PREFIXES: &[(&str, &str)] = &[
        ("jbb_", "jbb"),
        ("bipia_", "bipia"),
        ("gpteacher", "gpteacher"),
        ("xstest", "xstest"),
        ("alpaca_", "alpacaeval"),
        ("crisis_", "crisis_pyrit"),
        ("hermes_", "hermes"),
        ("cyberseceval", "cyberseceval_pi"),
        ("spikee_", "spikee"),
        ("bastion_", "bastioncorpus"),
    ];
    PREFIXES
        .iter()
        .find(|(p, _)| corpus.starts_with(p))
        .map_or(corpus, |(_, s)| s)
}

/// Inserts `attack` at the start (0), middle (1) or end (2) of `ctx`, on a line of its own.
fn insert_at(ctx: &str, attack: &str, pos: u64) -> String {
    match pos {
        0 => format!("{attack}\n{ctx}"),
        1 => {
            let mut mid = ctx.len() / 2;
            while !ctx.is_char_boundary(mid) {
                mid -= 1;
            }
            let cut = ctx[..mid].rfind(['\n', '.']).map_or(mid, |p| p + 1);
            format!("{}\n{attack}\n{}", &ctx[..cut], &ctx[cut..])
        }
        _ => format!("{ctx}\n{attack}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_is_deterministic_and_roughly_sized() {
        assert_eq!(split_of("hello"), split_of("hello"));
        let n = 10_000;
        let test = (0..n)
            .filter(|i| split_of(&format!("item {i}")) == Split::Test)
            .count();
        assert!((2500..3500).contains(&test), "{test}");
    }

    #[test]
    fn csv_handles_quotes_and_newlines() {
        let rows = parse_csv("a,b\n\"x, y\",\"say \"\"hi\"\"\nthere\"\n");
        assert_eq!(
            rows[1],
            vec!["x, y".to_string(), "say \"hi\"\nthere".to_string()]
        );
    }

    #[test]
    fn pyrit_values_are_read_with_roles() {
        let src = "seeds:\n  - dataset_name: x\n    value:  I feel\n      very low\n    role: user\n  - value: bye\n    role: assistant\n";
        let v = pyrit_values(src);
        assert_eq!(
            v[0],
            ("I feel very low".to_string(), Some("user".to_string()))
        );
        assert_eq!(v[1].1.as_deref(), Some("assistant"));
    }
}
