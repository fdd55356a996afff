//! Checks across the commands of one line: a file written with content airlock cannot see and
//! then run, a program copied or linked to a new name and then run under it, scripts added to
//! a package manifest, and a whole repository pushed to a remote the line adds.

use airlock_core::{Decision, ReasonCode, Severity, Tier};

use super::{Walker, cut, written_key};
use crate::canon;
use crate::unwrap::{self, Lang};

impl Walker<'_> {
    /// A command that runs a file written earlier in the line with content airlock cannot see
    /// (`base64 -d > f; sh f`, `cp x /tmp/y; /tmp/y`), or a program under a new name.
    pub(super) fn run_opaque(&mut self, name: &str, argv: &[String]) {
        if self.opaque.is_empty() {
            return;
        }
        let interpreter = matches!(name, "source" | ".")
            || unwrap::lang_of(name).is_some_and(|l| !matches!(l, Lang::Awk | Lang::Sed));
        let file = if interpreter {
            argv[1..].iter().find(|a| !a.starts_with('-'))
        } else {
            argv.first()
        };
        let Some(file) = file else { return };
        let key = written_key(file);
        // known text is analysed (`run_written`), downloads are judged as downloads
        if !self.opaque.iter().any(|k| k == key)
            || self.written.iter().any(|(k, _)| k == key)
            || self.downloaded.iter().any(|(k, _)| k == key)
        {
            return;
        }
        let line = canon::join(argv);
        self.engine(
            "written_run",
            ReasonCode::DecodedPayload,
            (Decision::Ask, Tier::High, Severity::High),
            format!("`{}` runs a file written earlier in the same line whose content airlock cannot see (decoded, generated or copied); a person must look. Write the file, read it, then run it in a separate step.", cut(&line)),
            "Writing a payload to a file and running it in one line hides what runs, like piping it into a shell.",
            &line,
        );
    }

    /// `git remote add x URL && git push x --all`, `git push URL --mirror`: every branch (or
    /// the whole repository) sent to a remote this line names or adds.
    pub(super) fn git_remote_push(&mut self, argv: &[String], text: &str) {
        let words: Vec<&str> = argv[1..].iter().map(String::as_str).collect();
        let Some(at) = words.iter().position(|w| matches!(*w, "remote" | "push")) else {
            return;
        };
        let rest = &words[at + 1..];
        let operands: Vec<&str> = rest
            .iter()
            .copied()
            .filter(|w| !w.starts_with('-'))
            .collect();
        if words[at] == "remote" {
            if let ["add", name, ..] = operands.as_slice()
                && self.new_remotes.len() < 8
            {
                self.new_remotes.push(name.to_string());
            }
            return;
        }
        let everything = rest
            .iter()
            .any(|w| matches!(*w, "--all" | "--mirror" | "--tags"));
        let Some(remote) = operands.first() else {
            return;
        };
        let inline_url = remote.contains("://") || (remote.contains('@') && remote.contains(':'));
        if everything && (inline_url || self.new_remotes.iter().any(|r| r == remote)) {
            self.engine(
                "push_all_new_remote",
                ReasonCode::RuleMatch,
                (Decision::Ask, Tier::High, Severity::High),
                format!("every branch or the whole repository is pushed to `{remote}`, a remote this line adds or names by URL: this copies all of the code somewhere new; a person must confirm. Push the one branch you mean to a remote the user already set up."),
                "Check who owns the destination before approving; pushing --all or --mirror to a new remote is how repositories are exfiltrated.",
                text,
            );
        }
    }

    /// The program a command word names when it was copied, moved or linked to that name
    /// earlier in the line (`cp /bin/rm /tmp/x; /tmp/x -rf ~` runs `rm`).
    pub(super) fn alias_of(&self, head: &str) -> Option<String> {
        let key = written_key(head);
        self.aliases
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, p)| p.clone())
            .filter(|p| *p != unwrap::program_name(head))
    }
}

/// The program named by `$(which X)`, `$(command -v X)`, `$(type -P X)` (or backquoted): the
/// path of X on PATH.
pub(super) fn which_target(word: &str) -> Option<&str> {
    word.strip_prefix("$(")
        .and_then(|s| s.strip_suffix(')'))
        .or_else(|| word.strip_prefix('`').and_then(|s| s.strip_suffix('`')))
        .and_then(|s| {
            s.strip_prefix("which ")
                .or_else(|| s.strip_prefix("command -v "))
                .or_else(|| s.strip_prefix("type -P "))
        })
        .map(str::trim)
        .filter(|p| !p.is_empty() && !p.contains(char::is_whitespace))
}

/// Shell commands a line adds to a package manifest's scripts (`npm pkg set scripts.x=CMD`,
/// `npm set-script x CMD`): `npm run x`, `npm install` or `npm test` run them later.
pub(super) fn manifest_scripts(name: &str, argv: &[String]) -> Vec<String> {
    if !matches!(name, "npm" | "pnpm" | "yarn" | "bun") {
        return Vec::new();
    }
    let words: Vec<&str> = argv[1..]
        .iter()
        .map(String::as_str)
        .filter(|a| !a.starts_with('-'))
        .collect();
    match words.as_slice() {
        ["pkg", "set", rest @ ..] => rest
            .iter()
            .filter_map(|kv| kv.split_once('='))
            .filter(|(k, _)| k.starts_with("scripts.") || k.starts_with("scripts["))
            .map(|(_, v)| v.to_string())
            .collect(),
        ["set-script", _, cmd, ..] => vec![cmd.to_string()],
        _ => Vec::new(),
    }
}
