//! Running one argv: the rules over its canonical text, read-only status, what the program
//! wraps or runs (wrappers, interpreters, `xargs`, `find -exec`, `eval`) and the checks that
//! need the whole argv.

use super::*;

impl Walker<'_> {
    /// Analyses one argv: rules, read-only status, then whatever it wraps.
    pub(super) fn run_argv(
        &mut self,
        argv: Vec<String>,
        depth: usize,
        feed: Option<&str>,
    ) -> Stage {
        self.commands += 1;
        if self.commands > MAX_COMMANDS {
            if self.commands == MAX_COMMANDS + 1 {
                self.too_deep("too many commands");
            }
            return Stage::default();
        }
        if depth > MAX_DEPTH {
            self.too_deep(&canon::join(&argv));
            return Stage::default();
        }
        let text = canon::render(&argv);
        // a program name still holding `$` or a backtick after expansion is only known at run
        // time (known constants were substituted already)
        // `"$DIR/run.sh"` names its program (a script in some directory); `$CMD` and
        // `$(cat f)` do not
        let head = &argv[0];
        let dynamic = head.contains("$(") || head.contains('`') || head_base(head).contains('$');
        if dynamic && !(argv.len() == 1 && is_shell_setup_output(head)) {
            let line = canon::join(&argv);
            self.engine(
                "dynamic_command",
                ReasonCode::DynamicCode,
                (Decision::Ask, Tier::Medium, Severity::Medium),
                "the program to run is only known at run time (it comes from a variable or a command substitution), so airlock cannot tell what it is; a person must look. Write the program name literally.".to_string(),
                "Find out what the variable or substitution expands to before approving.",
                &line,
            );
        }
        // `/bin/r? -rf ~`, `[r]m`, `@(rm|ls)`: the shell globs the command word; each known
        // program it could name is judged, and the line is asked whatever it resolves to
        if !dynamic && let Some(names) = crate::glob::command_candidates(head, self.rules) {
            let line = canon::join(&argv);
            self.engine(
                "glob_command",
                ReasonCode::DynamicCode,
                (Decision::Ask, Tier::Medium, Severity::Medium),
                format!("the program name `{head}` is a glob pattern the shell resolves against the files present (it could be {}); a person must look. Write the program name literally.", if names.is_empty() { "any program".to_string() } else { names.join(", ") }),
                "Find out which file the pattern names before approving.",
                &line,
            );
            for n in names {
                let mut a = argv.clone();
                a[0] = n;
                self.run_argv(a, depth + 1, feed);
            }
        }
        // `az group delete --help` prints help: its words describe no action (wrapped and
        // inner commands are still walked on their own)
        let matched = !readonly::prints_help(&argv) && self.rule_hits(Target::Command, &text);
        let name = unwrap::program_name(&argv[0]);
        // `pip install reqeusts`: a package named one slip away from a popular one
        for s in crate::typosquat::github_suspects(&name, &argv) {
            self.engine(
                "package_typosquat",
                ReasonCode::PackageTyposquat,
                (Decision::Ask, Tier::Medium, Severity::High),
                format!(
                    "the GitHub repository `{}` is not the popular `{}`, but its owner is one typing slip away from that one's: look-alike accounts publish copies of popular repositories with an attacker's code. If you meant `{}`, use that; if `{}` really is the repository you need, say why so the user can confirm.",
                    s.name, s.like, s.like, s.name
                ),
                "Check the repository's owner, age, stars and whether it is a fork before approving.",
                &text,
            );
        }
        for s in crate::typosquat::suspects(&name, &argv) {
            self.engine(
                "package_typosquat",
                ReasonCode::PackageTyposquat,
                (Decision::Ask, Tier::Medium, Severity::High),
                format!(
                    "`{}` is not a popular {} package, but its name is one typing slip away from the popular `{}`: typosquatted packages run an attacker's code when installed. If you meant `{}`, install that; if `{}` really is the package you need, say why so the user can confirm.",
                    s.name,
                    s.ecosystem.label(),
                    s.like,
                    s.like,
                    s.name
                ),
                "Check the package's name, owner, age and download count on its registry before approving.",
                &text,
            );
        }
        // files written without a redirect (`tee F`, `cp x F`, `dd of=F`) are judged like `> F`
        for dest in crate::dest::write_destinations(&name, &argv) {
            self.write_target(dest);
        }
        // options as data: files written, commands and programs run, code evaluated
        for u in crate::options::uses(&name, &argv) {
            self.option_use(&name, u, depth, &text);
        }
        if let Some(same) = crate::options::equivalent(&name, &argv) {
            self.run_argv(same, depth + 1, None);
        }
        if let Some(program) = self.alias_of(&argv[0]) {
            let mut same = argv.clone();
            same[0] = program;
            self.run_argv(same, depth + 1, feed);
        }
        if name == "git" {
            self.git_remote_push(&argv, &text);
        }
        // `set -- WORDS`: the positional parameters `"$@"`, `$1` expand to
        if name == "set"
            && let Some(at) = argv.iter().position(|a| a == "--")
        {
            let words = &argv[at + 1..];
            if words.is_empty() || words.iter().any(|w| w.contains(['$', '`'])) {
                self.env.remove("@[@]");
            } else {
                self.env
                    .insert("@[@]".to_string(), words.join(&word::IFS_SPLIT.to_string()));
            }
        }
        // `npm pkg set scripts.x=CMD`: a script added to the manifest runs on `npm run x`
        for script in manifest_scripts(&name, &argv) {
            self.walk_script(&script, depth + 1);
        }
        // `rm ~/.claude/settings.json`, `chmod -x …/airlock-hook`: switching the guard off
        for path in crate::dest::changed_paths(&name, &argv) {
            // `rm $(which airlock-hook)`: the program's path on PATH
            let path = match which_target(path) {
                Some(p) => format!("/usr/local/bin/{p}"),
                None => path.to_string(),
            };
            if let Some(f) = crate::paths::guard_change_finding(&path, None) {
                self.add(f, &path);
            }
        }
        if matches!(
            &*name,
            "export" | "declare" | "typeset" | "local" | "readonly"
        ) {
            for a in &argv[1..] {
                if let Some((k, v)) = a.split_once('=')
                    && !v.contains('$')
                    && !v.contains('`')
                {
                    self.env.insert(k.to_string(), v.to_string());
                }
                if let Some((k, v)) = a.split_once('=')
                    && runs_value(k)
                    && !v.is_empty()
                {
                    self.walk_script(v.trim_start_matches('|'), depth + 1);
                }
            }
        }
        let inners = unwrap::unwrap(&argv);
        let xargs = match (&*name, inners.first()) {
            ("xargs", Some(Inner::Argv(cmd))) => Some((cmd.clone(), xargs_mode(&argv))),
            _ => None,
        };
        let xargs = match xargs {
            // `xargs -a FILE CMD` / `xargs CMD < FILE`: the words come from a file airlock
            // does not read, so the command is judged like `… | xargs CMD` with unknown input
            // (and no pipe feeds this xargs)
            Some((cmd, mode)) if mode.arg_file || (self.stdin_file && feed.is_none()) => {
                for argv in xargs_commands(&cmd, mode.placeholder.as_deref(), XARGS_INPUT) {
                    self.run_argv(argv, depth + 1, None);
                }
                None
            }
            other => other,
        };
        // `xargs CMD <<< PATHS` / `xargs CMD <<EOF`: the words xargs adds are known
        if let (Some((cmd, mode)), Some(body)) = (&xargs, feed) {
            let input = if mode.literal { body } else { XARGS_INPUT };
            for argv in xargs_commands(cmd, mode.placeholder.as_deref(), input) {
                self.run_argv(argv, depth + 1, None);
            }
        }
        let transparent = !inners.is_empty()
            && inners.iter().all(|i| matches!(i, Inner::Argv(_)))
            && !matches!(
                &*name,
                "sudo"
                    | "doas"
                    | "su"
                    | "runuser"
                    | "chroot"
                    | "ssh"
                    | "pkexec"
                    | "run0"
                    | "nsenter"
            );
        let read_only = readonly::is_read_only(&argv);
        if self.ran.len() < MAX_RAN {
            self.ran.push(crate::Ran {
                text: text.clone(),
                read_only,
                wrapper: transparent,
            });
        }
        if !transparent && !read_only {
            self.all_read_only = false;
            if !matched && self.unknown.len() < 8 && !self.unknown.iter().any(|u| *u == name) {
                self.unknown.push(name.to_string());
            }
        }
        let mut stage = Stage {
            texts: vec![text.clone()],
            sink: None,
            decoder: is_decoder(&argv),
            emits: literal_output(&argv, feed),
            xargs: None,
        };
        let mut inner_stage: Option<Stage> = None;
        for inner in inners {
            match inner {
                Inner::Argv(a) => {
                    let s = self.run_argv(a, depth + 1, feed);
                    match &mut inner_stage {
                        Some(st) => st.merge(s),
                        None => inner_stage = Some(s),
                    }
                }
                Inner::Script(s) => {
                    // `git -c KEY=PROGRAM` (not `submodule foreach`, `rebase --exec`, …)
                    if name == "git"
                        && unwrap::git_programs(&argv)
                            .iter()
                            .any(|c| matches!(c, Inner::Script(p) if *p == s))
                    {
                        self.engine(
                            "git_config_program",
                            ReasonCode::InlineCode,
                            (Decision::Ask, Tier::High, Severity::High),
                            format!("`git -c` sets a configuration key that makes git run the program `{s}`; a person must look. Run the program directly if that is what you mean."),
                            "git aliases, pagers, editors and ssh commands set with -c run arbitrary programs.",
                            &text,
                        );
                    }
                    let st = self.walk_script(&s, depth + 1);
                    stage.sink = stage.sink.or(st.sink);
                }
                Inner::Code { lang, code } => self.walk_code(lang, &code, depth + 1),
                Inner::ReadsStdin(lang) => {
                    stage.sink = Some(lang);
                    if let Some(body) = feed {
                        if lang == Lang::Shell {
                            self.walk_script(body, depth + 1);
                        } else {
                            self.walk_code(lang, body, depth + 1);
                        }
                    }
                }
            }
        }
        // an alias runs its value wherever its name is used later
        if name == "alias" {
            for value in argv[1..]
                .iter()
                .filter_map(|a| a.split_once('=').map(|(_, v)| v))
            {
                self.walk_script(value, depth + 1);
            }
        }
        // `echo CMD > f.sh; bash f.sh` or `./f.sh`: a file written earlier in the line
        self.run_written(&name, &argv, depth);
        // `curl -o f.sh URL && bash f.sh`: a download run as code, like `curl URL | bash`
        self.run_downloaded(&name, &argv, &text);
        // `bash <(echo CMD)`, `source <(printf …)`: the file read as a script is known text
        let runs_file = if matches!(&*name, "source" | ".") {
            Some(Lang::Shell)
        } else {
            unwrap::lang_of(&name).filter(|l| !matches!(l, Lang::Awk | Lang::Sed))
        };
        if let Some(lang) = runs_file
            && let Some(first) = argv[1..]
                .iter()
                .find(|a| !a.starts_with('-') || a.starts_with("<("))
            && let Some((_, program)) = self
                .proc_programs
                .iter()
                .find(|(text, _)| text == first)
                .cloned()
        {
            if lang == Lang::Shell {
                self.walk_script(&program, depth + 1);
            } else {
                self.walk_code(lang, &program, depth + 1);
            }
        }
        // a destructive SQL statement typed as a command line: no shell runs it, but in a
        // persistent terminal it reaches the database client left in the foreground
        if looks_like_sql(&argv) {
            self.walk_code(Lang::Sql, &argv.join(" "), depth + 1);
        }
        if let Some(body) = feed
            && unwrap::is_db_client(&name)
        {
            self.walk_code(Lang::Sql, body, depth + 1);
            // redis and mongo read their own commands: judged as if typed on the command line
            // (`redis-cli <<< FLUSHALL` is `redis-cli FLUSHALL`)
            for line in body
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .take(32)
            {
                let typed = match &*name {
                    "mongo" | "mongosh" => format!("{name} --eval {}", canon::quote(line)),
                    "redis-cli" | "valkey-cli" | "keydb-cli" => format!("{name} {line}"),
                    _ => break,
                };
                self.rule_hits(Target::Command, &typed);
            }
        }
        if let Some(mut inner) = inner_stage {
            inner.decoder |= stage.decoder;
            inner.sink = inner.sink.or(stage.sink);
            if name == "xargs" {
                // what xargs prints depends on input airlock does not follow
                inner.emits = None;
            }
            inner.xargs = xargs;
            return inner;
        }
        stage
    }
}

/// The last path component of a command word, not cutting inside `${…}` (`${x/X/m}` is one
/// component, not `m}`).
fn head_base(head: &str) -> &str {
    let b = head.as_bytes();
    let mut level = 0usize;
    let mut last = None;
    for i in 0..b.len() {
        match b[i] {
            b'{' if level > 0 || (i > 0 && b[i - 1] == b'$') => level += 1,
            b'}' if level > 0 => level -= 1,
            b'/' if level == 0 => last = Some(i),
            _ => {}
        }
    }
    last.map_or(head, |i| &head[i + 1..])
}

/// `DROP TABLE x`, `DELETE FROM x`, `TRUNCATE x`, `UPDATE x SET …`, `ALTER TABLE x …` typed as
/// a command line (any letter case).
fn looks_like_sql(argv: &[String]) -> bool {
    let is = |i: usize, w: &str| argv.get(i).is_some_and(|a| a.eq_ignore_ascii_case(w));
    if argv.len() < 2 {
        return false;
    }
    if is(0, "drop") {
        return [
            "table",
            "tables",
            "database",
            "schema",
            "keyspace",
            "view",
            "index",
            "owned",
            "materialized",
            "collection",
            "user",
            "role",
        ]
        .iter()
        .any(|w| is(1, w));
    }
    (is(0, "delete") && is(1, "from"))
        || is(0, "truncate")
        || (is(0, "alter") && is(1, "table"))
        || (is(0, "update") && is(2, "set"))
}

/// Whether `word` is the output of a tool that prints shell set-up code for the current shell
/// (`$(ssh-agent -s)`, `$(pyenv init -)`, `$(brew shellenv)`, `$(direnv hook bash)`), as in
/// `eval "$(pyenv init -)"`. What runs is the tool's own environment set-up, and the tool itself
/// is walked (and judged) as the substitution's command. Only the whole word, with literal
/// arguments from the tool's documented set-up line.
fn is_shell_setup_output(word: &str) -> bool {
    let Some(inner) = word
        .strip_prefix("$(")
        .and_then(|w| w.strip_suffix(')'))
        .or_else(|| word.strip_prefix('`').and_then(|w| w.strip_suffix('`')))
    else {
        return false;
    };
    let words: Vec<&str> = inner.split_whitespace().collect();
    let Some((prog, args)) = words.split_first() else {
        return false;
    };
    if args.iter().any(|a| {
        !a.bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'_' | b'='))
    }) {
        return false;
    }
    let shell = |a: &str| matches!(a, "bash" | "zsh" | "sh" | "fish" | "-");
    let first = args.first().copied().unwrap_or("");
    match unwrap::base(prog) {
        "ssh-agent" => args.iter().all(|a| matches!(*a, "-s" | "-c")),
        "brew" => first == "shellenv",
        "pyenv" | "rbenv" | "nodenv" | "goenv" | "jenv" | "plenv" | "phpenv" => {
            matches!(first, "init" | "virtualenv-init")
        }
        "direnv" => first == "hook" && args.len() == 2 && shell(args[1]),
        "zoxide" | "starship" | "mcfly" | "atuin" => first == "init",
        "mise" | "rtx" => first == "activate",
        "fnm" | "opam" => first == "env",
        "conda" | "mamba" | "micromamba" => {
            first.starts_with("shell.") || matches!(first, "shell" | "hook")
        }
        "dircolors" => args.iter().all(|a| matches!(*a, "-b" | "-c" | "--sh")),
        _ => false,
    }
}
