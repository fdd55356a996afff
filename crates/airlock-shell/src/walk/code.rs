//! Inline interpreter code met by the walker (`python -c`, `node -e`, a makefile, SQL): code
//! rules, capabilities, the shell commands inside it, and the paths it writes or deletes.

use super::*;

impl Walker<'_> {
    /// Inline interpreter code: code rules, capabilities, and shell commands inside it.
    pub(super) fn walk_code(&mut self, lang: Lang, code: &str, depth: usize) {
        if lang == Lang::Make {
            // a makefile runs its recipe lines (tab-indented; `@`, `-`, `+` prefixes only
            // change echoing and error handling) and its `$(shell …)` calls as shell commands
            for line in code.lines().take(256) {
                if let Some(recipe) = line.strip_prefix('\t') {
                    let cmd = recipe.trim_start_matches(['@', '-', '+', ' ', '\t']);
                    if !cmd.is_empty() {
                        self.walk_script(cmd, depth + 1);
                    }
                }
                for (at, _) in line.match_indices("$(shell ").take(8) {
                    let inner = &line[at + 8..];
                    let end = inner.find(')').unwrap_or(inner.len());
                    self.walk_script(&inner[..end], depth + 1);
                }
            }
            self.all_read_only = false;
            return;
        }
        let matched = self.rule_hits(Target::Code, code);
        if lang == Lang::Sql {
            // statements are judged by the database rules alone, each one as if given to a
            // client with `-c` (the rules name the clients; `sql` stands for any of them)
            for stmt in code
                .split(';')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .take(32)
            {
                let one_line = stmt.split_whitespace().collect::<Vec<_>>().join(" ");
                self.rule_hits(
                    Target::Command,
                    &format!("sql -c {}", canon::quote(&one_line)),
                );
            }
            return;
        }
        // code that writes files: its absolute and home path literals go through the same
        // sensitive-path check as `> FILE` (`open("/etc/hosts", "w")`, `writeFileSync(…)`)
        for p in inline::written_paths(code) {
            self.write_target(&p);
        }
        let mut caps = inline::capabilities(lang, code);
        if caps.contains(&inline::Capability::Delete) {
            // delete calls whose targets are all plain literals are judged as `rm -rf` of
            // those paths (a cleanup of `build` is allowed as `rm -rf build` is, `..` or a
            // source directory asked); any other target keeps the code asked as deleting.
            // Absolute and home targets stay asked as well, even where rm's rules allow
            // them (`/tmp/demo`): the public dcg corpus labels such one-liners dangerous and
            // its recall floor holds (docs/evaluation.md)
            let deletes = code_deletes::deleted_paths(code);
            if !deletes.unresolved && !deletes.paths.is_empty() {
                self.all_read_only = false;
                let in_tree = deletes
                    .paths
                    .iter()
                    .all(|p| !p.starts_with('/') && !p.starts_with('~'));
                let line: Vec<String> = ["rm", "-rf"]
                    .into_iter()
                    .map(String::from)
                    .chain(deletes.paths)
                    .collect();
                self.walk_script(&canon::join(&line), depth + 1);
                if in_tree {
                    caps.retain(|c| *c != inline::Capability::Delete);
                }
            }
        }
        if caps.is_empty() {
            return;
        }
        self.all_read_only = false;
        if caps.contains(&inline::Capability::Spawn) {
            let mut cmds = inline::list_commands(code);
            cmds.extend(inline::string_literals(code));
            for c in cmds {
                self.walk_script(&c, depth + 1);
            }
        }
        if caps.contains(&inline::Capability::Delete) {
            for p in inline::string_literals(code) {
                if p.starts_with('/') || p.starts_with('~') {
                    self.walk_script(&format!("rm -rf {}", canon::quote(&p)), depth + 1);
                }
            }
        }
        if !matched {
            let what: Vec<&str> = caps.iter().map(|c| c.name()).collect();
            self.engine(
                "inline_code",
                ReasonCode::InlineCode,
                (Decision::Ask, Tier::Medium, Severity::Medium),
                format!("inline {} code {}; airlock cannot follow everything such code does, so a person must look. Prefer a plain shell command or a reviewed script file.", lang.name(), what.join(", ")),
                "Read the inline code: it can do anything the user can.",
                code,
            );
        }
    }
}
