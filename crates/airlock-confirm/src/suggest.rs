//! Fatigue control: after a person approved the same narrow action several times, approvers are
//! shown a policy rule that would allow it without asking. It is text for a person to review
//! and paste into their user policy; the broker never applies it.

use airlock_core::Action;

/// A user-layer rule allowing exactly `action` (one simple literal command, or one tool), as
/// TOML text; `None` for anything a rule could not name without being broader than what was
/// approved (compound commands, glob characters, writes, fetches, messages).
pub fn rule_text(agent: &str, action: &Action) -> Option<String> {
    let q = |s: &str| serde_json::to_string(s).ok();
    let (matcher, what) = match action {
        Action::Shell { command, .. } => {
            let argv = airlock_shell::simple_argv(command)?;
            let line = argv.join(" ");
            if line.contains(['*', '?', '[', ']', '{', '}']) {
                return None;
            }
            (format!("shell = {}", q(&line)?), line)
        }
        Action::Tool { tool, .. } => {
            if tool.contains(['*', '?', '[', ']', '{', '}']) {
                return None;
            }
            (format!("tool = {}", q(tool)?), tool.clone())
        }
        _ => return None,
    };
    Some(format!(
        "# Suggested because a person approved `{what}` by {agent} several times.\n\
         # Review it before adding it to your user policy; airlock never applies it itself.\n\
         [[rules]]\nid = \"approved-{}\"\n{matcher}\ndecision = \"allow\"\n",
        slug(&what),
    ))
}

fn slug(s: &str) -> String {
    let mut out: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    out.truncate(40);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn narrow_rules_only() {
        let r = rule_text("claude", &Action::shell("git push origin main")).unwrap();
        assert!(r.contains("shell = \"git push origin main\""), "{r}");
        assert!(r.contains("id = \"approved-git-push-origin-main\""), "{r}");
        assert_eq!(rule_text("a", &Action::shell("ls *.rs")), None);
        assert_eq!(rule_text("a", &Action::shell("a && b")), None);
        let t = Action::Tool {
            tool: "mcp__x__send".into(),
            arguments: serde_json::json!({}),
        };
        assert!(
            rule_text("a", &t)
                .unwrap()
                .contains("tool = \"mcp__x__send\"")
        );
    }
}
