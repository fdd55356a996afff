//! What people decided before, for the LLM reviewer: the few earlier human decisions whose
//! action is most like this one (its shape: program and subcommands, tool, write target kind,
//! host), each with its outcome and the person's reason, within a fixed budget of entries and
//! characters. The reviewer sees them fenced as data, like the action itself.

use std::collections::BTreeSet;

use airlock_core::Action;
use serde::Serialize;

/// At most this many earlier decisions go into one prompt.
pub const MAX_PRECEDENTS: usize = 5;
/// And at most this many characters of them (shapes and reasons), so the prompt stays small.
pub const MAX_PRECEDENT_CHARS: usize = 1500;
/// The longest reason kept from one decision.
const MAX_REASON: usize = 200;
/// How many of the most recent decided approvals are searched.
pub const HISTORY: i64 = 500;
/// Below this similarity an earlier decision says nothing about this action.
const MIN_SIMILARITY: f64 = 0.5;

/// One earlier decision by a person.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Precedent {
    /// The action's shape (`shell: stripe transfers create`, `tool: mcp__github__create_issue`).
    pub shape: String,
    /// `approved` or `denied`.
    pub outcome: String,
    /// The person's reason, if they gave one.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// How alike the two actions are, 0 to 1.
    pub similarity: f64,
}

/// An earlier decision before it is compared: the action and what the person said.
#[derive(Debug, Clone)]
pub struct PastDecision {
    pub action: Action,
    pub approved: bool,
    pub reason: String,
}

/// The shape of an action as words: for a shell line, each command's program and the words
/// that name what it does (subcommands, not values: no paths, numbers, ids, URLs or quoted
/// text), plus the hosts it names; for a tool its name; for a write the file's kind and where
/// it is; for a request its method and host.
pub fn shape(action: &Action) -> Vec<String> {
    let mut out = Vec::new();
    match action {
        Action::Shell { command, .. } => {
            out.push("shell".to_string());
            for seg in command.split(['|', ';', '&', '\n', '(', ')', '`']) {
                let mut words = seg.split_whitespace().filter(|w| !w.contains('='));
                // wrappers say nothing about what runs: the word after them is the program
                let Some(prog) = words.find(|w| {
                    !w.starts_with('-')
                        && !matches!(
                            *w,
                            "sudo" | "env" | "nice" | "timeout" | "xargs" | "command"
                        )
                }) else {
                    continue;
                };
                let prog = prog.rsplit('/').next().unwrap_or(prog).to_ascii_lowercase();
                let mut n = 0;
                for w in words {
                    if n >= 3 {
                        break;
                    }
                    if let Some(h) = host_of(w) {
                        out.push(format!("host:{h}"));
                        continue;
                    }
                    let flag = w.starts_with('-');
                    let word = w.trim_start_matches('-').to_ascii_lowercase();
                    let verb = !word.is_empty()
                        && word.len() <= 24
                        && word
                            .chars()
                            .all(|c| c.is_ascii_lowercase() || c == '-' || c == '_' || c == ':')
                        && word.chars().any(|c| c.is_ascii_lowercase());
                    if verb {
                        out.push(if flag {
                            format!("{prog} --{word}")
                        } else {
                            format!("{prog} {word}")
                        });
                        if !flag {
                            n += 1;
                        }
                    }
                }
                out.push(prog);
            }
        }
        Action::Tool { tool, .. } => {
            out.push("tool".into());
            out.push(tool.to_ascii_lowercase());
            // `mcp__server__tool`: the server alone says something too
            if let Some(server) = tool
                .strip_prefix("mcp__")
                .and_then(|r| r.split("__").next())
            {
                out.push(format!("mcp:{server}"));
            }
        }
        Action::FileWrite { path, .. } => {
            out.push("write".into());
            let p = std::path::Path::new(path);
            if let Some(e) = p.extension() {
                out.push(format!("ext:{}", e.to_string_lossy().to_ascii_lowercase()));
            }
            if let Some(n) = p.file_name() {
                out.push(format!("name:{}", n.to_string_lossy().to_ascii_lowercase()));
            }
            for c in p.components().take(4) {
                let c = c.as_os_str().to_string_lossy();
                if c.starts_with('.') && c.len() > 1 {
                    out.push(format!("dir:{c}"));
                }
            }
        }
        Action::NetworkFetch { url, method } => {
            out.push("fetch".into());
            out.push(format!("method:{}", method.to_ascii_uppercase()));
            if let Some(h) = host_of(url) {
                out.push(format!("host:{h}"));
            }
        }
        Action::MessageSend { channel, .. } => {
            out.push("message".into());
            out.push(format!("channel:{}", channel.to_ascii_lowercase()));
        }
    }
    out.sort();
    out.dedup();
    out
}

fn host_of(w: &str) -> Option<String> {
    let (_, rest) = w.trim_matches(['\'', '"']).split_once("://")?;
    let host = rest.split(['/', '?', '#', ':']).next()?;
    (!host.is_empty()).then(|| host.to_ascii_lowercase())
}

/// A short human-readable form of a shape.
fn label(words: &[String]) -> String {
    let mut s = words.join(" · ");
    if s.len() > 160 {
        let mut end = 160;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
        s.push('…');
    }
    s
}

/// Jaccard similarity of two shapes.
fn similarity(a: &[String], b: &[String]) -> f64 {
    let a: BTreeSet<&String> = a.iter().collect();
    let b: BTreeSet<&String> = b.iter().collect();
    let union = a.union(&b).count();
    if union == 0 {
        return 0.0;
    }
    a.intersection(&b).count() as f64 / union as f64
}

/// The earlier decisions most like `action`, most similar first (the newest first among equals:
/// `history` is newest first), at most `MAX_PRECEDENTS` and `MAX_PRECEDENT_CHARS`.
///
/// Inside a project (a shell action whose directory lies under a `.git` root) only decisions
/// about actions that ran in the same project count: what people decided for one repository
/// says little about another's hosts, branches and deploys.
pub fn select(action: &Action, history: &[PastDecision]) -> Vec<Precedent> {
    let me = shape(action);
    let root = match action {
        Action::Shell { cwd: Some(c), .. } => {
            airlock_policy::project_hosts::project_root(std::path::Path::new(c))
        }
        _ => None,
    };
    let here = |d: &PastDecision| match (&root, &d.action) {
        (None, _) => true,
        (Some(r), Action::Shell { cwd: Some(c), .. }) => std::path::Path::new(c).starts_with(r),
        (Some(_), _) => false,
    };
    let mut scored: Vec<(f64, usize, &PastDecision, Vec<String>)> = history
        .iter()
        .filter(|d| here(d))
        .enumerate()
        .map(|(i, d)| {
            let s = shape(&d.action);
            (similarity(&me, &s), i, d, s)
        })
        .filter(|(sim, ..)| *sim >= MIN_SIMILARITY)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut out = Vec::new();
    let mut chars = 0;
    for (sim, _, d, s) in scored {
        if out.len() >= MAX_PRECEDENTS {
            break;
        }
        let mut reason: String = d.reason.trim().chars().take(MAX_REASON).collect();
        if reason.len() < d.reason.trim().len() {
            reason.push('…');
        }
        let shape = label(&s);
        let cost = shape.len() + reason.len() + 40;
        if chars + cost > MAX_PRECEDENT_CHARS {
            break;
        }
        chars += cost;
        out.push(Precedent {
            shape,
            outcome: if d.approved { "approved" } else { "denied" }.into(),
            reason,
            similarity: (sim * 100.0).round() / 100.0,
        });
    }
    out
}

/// The earlier decisions people made, from the broker's approval history (rows newest first):
/// only approvals decided by a person, approved or denied.
pub fn from_rows(rows: &[airlock_store::ApprovalRow]) -> Vec<PastDecision> {
    rows.iter()
        .filter(|r| r.by_person && matches!(r.status.as_str(), "approved" | "denied"))
        .filter_map(|r| {
            Some(PastDecision {
                action: serde_json::from_str(&r.action).ok()?,
                approved: r.status == "approved",
                reason: r.reason.clone().unwrap_or_default(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(cmd: &str, approved: bool, reason: &str) -> PastDecision {
        PastDecision {
            action: Action::shell(cmd),
            approved,
            reason: reason.into(),
        }
    }

    #[test]
    fn shapes_keep_verbs_and_drop_values() {
        let s = shape(&Action::shell(
            "stripe transfers create --amount 50000 --destination acct_1Nv",
        ));
        assert!(s.contains(&"stripe transfers".to_string()), "{s:?}");
        assert!(s.contains(&"stripe create".to_string()), "{s:?}");
        assert!(!s.iter().any(|w| w.contains("50000") || w.contains("acct_")));
        let t = shape(&Action::shell(
            "sudo curl -X POST https://api.stripe.com/v1/payouts",
        ));
        assert!(t.contains(&"host:api.stripe.com".to_string()), "{t:?}");
        assert!(t.contains(&"curl".to_string()));
    }

    #[test]
    fn the_most_similar_come_first_and_the_unrelated_not_at_all() {
        let history = vec![
            d("npm publish --access public", false, "only CI publishes"),
            d(
                "stripe transfers create --amount 100 --destination acct_2",
                true,
                "test mode refund",
            ),
            d(
                "stripe transfers create --amount 9 --destination acct_3",
                false,
                "live key",
            ),
            d("cargo build --release", true, ""),
        ];
        let got = select(
            &Action::shell("stripe transfers create --amount 7 --destination acct_9"),
            &history,
        );
        assert_eq!(got.len(), 2, "{got:?}");
        assert_eq!(got[0].outcome, "approved", "newest first among equals");
        assert_eq!(got[1].reason, "live key");
        assert!(got.iter().all(|p| p.similarity >= MIN_SIMILARITY));
    }

    #[test]
    fn inside_a_project_only_its_own_decisions_count() {
        let (one, two) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        for d in [&one, &two] {
            std::fs::create_dir_all(d.path().join(".git")).unwrap();
        }
        let at = |dir: &std::path::Path, cmd: &str, approved: bool| PastDecision {
            action: Action::Shell {
                command: cmd.into(),
                cwd: Some(dir.join("src").display().to_string()),
            },
            approved,
            reason: String::new(),
        };
        let history = [
            at(two.path(), "fly deploy --app web", false),
            at(one.path(), "fly deploy --app api", true),
        ];
        let now = Action::Shell {
            command: "fly deploy --app api".into(),
            cwd: Some(one.path().display().to_string()),
        };
        let got = select(&now, &history);
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0].outcome, "approved");
        // outside any project every decision counts
        assert_eq!(
            select(&Action::shell("fly deploy --app api"), &history).len(),
            2
        );
    }

    #[test]
    fn the_budget_holds() {
        let long = "x".repeat(5000);
        let history: Vec<PastDecision> = (0..50)
            .map(|i| d(&format!("make deploy-{i}"), i % 2 == 0, &long))
            .chain((0..50).map(|_| d("make deploy", true, &long)))
            .collect();
        let got = select(&Action::shell("make deploy"), &history);
        assert!(!got.is_empty());
        assert!(got.len() <= MAX_PRECEDENTS);
        let chars: usize = got
            .iter()
            .map(|p| p.shape.len() + p.reason.len() + 40)
            .sum();
        assert!(chars <= MAX_PRECEDENT_CHARS, "{chars}");
        assert!(
            got.iter()
                .all(|p| p.reason.chars().count() <= MAX_REASON + 1)
        );
    }
}
