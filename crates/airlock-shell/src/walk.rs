//! The walker: visits everything in a parsed line that runs (pipelines, lists, subshells,
//! substitutions, process substitution, functions, loops, conditionals, heredocs fed to
//! interpreters), unwraps wrappers, and turns each command into rule matches and findings.

use std::collections::HashSet;
use std::panic::{AssertUnwindSafe, catch_unwind};

use airlock_core::{Decision, Finding, ReasonCode, Severity, Span, Tier};
use brush_parser::ParserOptions;
use brush_parser::ast::{
    self, Command, CommandPrefixOrSuffixItem, CompoundCommand, IoFileRedirectKind,
    IoFileRedirectTarget, IoRedirect, SeparatorOperator,
};

use crate::canon;
use crate::code_deletes;
use crate::evasion;
use crate::fallback;
use crate::inline;
use crate::readonly;
use crate::rules::{Rule, RuleSet, Target};
use crate::unwrap::{self, Inner, Lang};
use crate::word::{self, Env, Expanded};

mod sequence;
use sequence::{manifest_scripts, which_target};

/// How deep wrappers, substitutions and nested scripts are followed.
pub const MAX_DEPTH: usize = 12;
/// Deepest bracket nesting handed to the parser.
pub const MAX_BRACKETS: usize = 12;
/// How many commands one line may contain before analysis stops.
pub const MAX_COMMANDS: usize = 4096;
/// Pieces of scripts that do not parse walked for one line, over all its scripts
/// ([`Walker::fallback`]; one script gets at most [`fallback::MAX_PIECES`]).
pub const MAX_LINE_PIECES: usize = 4 * fallback::MAX_PIECES;
/// Evidence strings are cut to this many bytes.
const MAX_EVIDENCE: usize = 240;
/// Commands kept for policy rules; a line with more is judged on its findings alone.
pub const MAX_RAN: usize = 256;

/// What a pipeline stage does, for pipeline-level checks.
#[derive(Debug, Default, Clone)]
pub struct Stage {
    /// Canonical texts of the innermost commands run by the stage.
    pub texts: Vec<String>,
    /// The stage runs an interpreter that reads its program from standard input.
    pub sink: Option<Lang>,
    /// The stage decodes or generates a payload (`base64 -d`, `xxd -r`, `printf '\x..'`).
    pub decoder: bool,
    /// What the stage prints, when it is one `echo`/`printf` of literal text.
    pub emits: Option<String>,
    /// The stage is `xargs` reading standard input: the command it runs and how it reads.
    pub xargs: Option<(Vec<String>, XargsMode)>,
}

impl Stage {
    fn merge(&mut self, other: Stage) {
        // several commands in one stage: what it prints is no longer one known text
        self.emits = if self.texts.is_empty() {
            other.emits
        } else {
            None
        };
        self.xargs = if self.texts.is_empty() {
            other.xargs
        } else {
            None
        };
        self.texts.extend(other.texts);
        self.sink = self.sink.or(other.sink);
        self.decoder |= other.decoder;
    }
}

pub struct Walker<'a> {
    rules: &'a RuleSet,
    prefilter: bool,
    opts: ParserOptions,
    input: &'a str,
    pub findings: Vec<Finding>,
    seen: HashSet<(String, String)>,
    env: Env,
    pub all_read_only: bool,
    pub unknown: Vec<String>,
    /// Every command the walk found, outermost wrapper first (for policy rules).
    pub ran: Vec<crate::Ran>,
    commands: usize,
    saw_async: bool,
    origin: Option<Span>,
    /// Parse errors are not reported (a second reading of a line that already parsed).
    pub quiet_parse_errors: bool,
    /// Scripts that do not parse are cut into pieces that are walked on their own
    /// ([`Walker::fallback`]); off only to show what the fallback adds.
    pub fallback: bool,
    /// Pieces the fallback may still walk for this line (all scripts in it together).
    pieces_left: usize,
    /// `<(…)` arguments whose output is known literal text, for interpreters that run them.
    proc_programs: Vec<(String, String)>,
    /// Files written earlier in the line with known literal content (`echo CMD > f.sh`), for
    /// commands that later run them (`bash f.sh`, `./f.sh`).
    written: Vec<(String, String)>,
    /// Files a downloader saved earlier in the line (`curl -o f.sh URL`, `wget URL`), with the
    /// download command, for commands that later run them.
    downloaded: Vec<(String, String)>,
    /// Files written earlier in the line with content airlock cannot see (decoded, generated,
    /// copied): running one later in the line is asked.
    opaque: Vec<String>,
    /// Programs copied, moved or linked to a new name earlier in the line
    /// (`cp /bin/rm /tmp/x`): the new path and the program it is.
    aliases: Vec<(String, String)>,
    /// git remotes added earlier in the line (`git remote add x URL`).
    new_remotes: Vec<String>,
    /// Output redirection targets of the command being walked.
    redirect_targets: Vec<String>,
    /// Files the command being walked reads through `< FILE`.
    input_sources: Vec<String>,
    /// The simple command being walked reads standard input from a file (`CMD < FILE`).
    stdin_file: bool,
}

/// Why a script was not walked.
enum Failure {
    /// Nested deeper than [`MAX_DEPTH`] or [`MAX_BRACKETS`].
    TooDeep,
    /// A heredoc whose end marker never comes (the delimiter).
    Heredoc(String),
    /// The parser rejected it (its message).
    Parse(String),
    /// The parser panicked.
    Panic,
}

fn cut(s: &str) -> String {
    if s.len() <= MAX_EVIDENCE {
        return s.to_string();
    }
    let mut end = MAX_EVIDENCE;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

impl<'a> Walker<'a> {
    pub fn new(rules: &'a RuleSet, prefilter: bool, input: &'a str) -> Self {
        Walker {
            rules,
            prefilter,
            opts: ParserOptions::default(),
            input,
            findings: Vec::new(),
            seen: HashSet::new(),
            env: Env::new(),
            all_read_only: true,
            unknown: Vec::new(),
            ran: Vec::new(),
            commands: 0,
            saw_async: false,
            origin: None,
            quiet_parse_errors: false,
            fallback: true,
            pieces_left: MAX_LINE_PIECES,
            proc_programs: Vec::new(),
            written: Vec::new(),
            downloaded: Vec::new(),
            opaque: Vec::new(),
            aliases: Vec::new(),
            new_remotes: Vec::new(),
            redirect_targets: Vec::new(),
            input_sources: Vec::new(),
            stdin_file: false,
        }
    }

    /// Records a finding once per (rule, evidence).
    pub fn add(&mut self, mut f: Finding, evidence: &str) {
        let ev = cut(evidence);
        if !self.seen.insert((f.rule_id.clone(), ev.clone())) {
            return;
        }
        if f.span.is_none() {
            f.span = self.origin;
        }
        if !ev.is_empty() {
            f.evidence = Some(ev);
        }
        if f.decision > Decision::Allow {
            self.all_read_only = false;
        }
        self.findings.push(f);
    }

    /// Records a finding decided by the engine itself (not a rule pack).
    fn engine(
        &mut self,
        id: &str,
        code: ReasonCode,
        level: (Decision, Tier, Severity),
        msg: String,
        remediation: &str,
        evidence: &str,
    ) {
        let (decision, tier, sev) = level;
        let f = Finding::new(format!("engine.{id}"), code, decision, tier, sev, msg)
            .with_remediation(remediation);
        self.add(f, evidence);
    }

    fn rule_hits(&mut self, on: Target, text: &str) -> bool {
        let rules: Vec<&Rule> = self.rules.matches(on, text, self.prefilter);
        let any = !rules.is_empty();
        for r in rules {
            let f = Finding::new(
                r.id.clone(),
                ReasonCode::RuleMatch,
                r.decision,
                r.tier,
                r.severity,
                r.message.clone(),
            )
            .with_remediation(r.remediation.clone());
            self.add(f, text);
        }
        any
    }

    /// Parses and walks a script at `depth`; returns what it runs. A script that cannot be
    /// analysed is asked about, and what its pieces run is walked too ([`Walker::fallback`]).
    pub fn walk_script(&mut self, script: &str, depth: usize) -> Stage {
        let failure = match self.try_script(script, depth) {
            Ok(stage) => return stage,
            Err(f) => f,
        };
        let (msg, remediation) = match failure {
            Failure::TooDeep => {
                self.too_deep(script);
                (None, "")
            }
            _ if self.quiet_parse_errors => (None, ""),
            Failure::Heredoc(delim) => (
                Some(format!("a heredoc's end marker `{}` never appears on a line of its own, so the command cannot be analysed; a person must look. Close the heredoc or write the content to a file first.", delim.escape_debug())),
                "Read the command yourself before approving: it did not parse as shell.",
            ),
            Failure::Parse(e) => (
                Some(format!("airlock could not parse this command ({e}), so it cannot tell what it would do; a person must look at it. Simplify the command or split it into plain steps.")),
                "Read the command yourself before approving: it did not parse as shell.",
            ),
            Failure::Panic => (
                Some("airlock's shell parser failed on this command, so it cannot tell what it would do; a person must look at it.".to_string()),
                "Read the command yourself before approving: the parser failed on it.",
            ),
        };
        if let Some(msg) = msg {
            self.engine(
                "parse_error",
                ReasonCode::ParseError,
                (Decision::Ask, Tier::Medium, Severity::Medium),
                msg,
                remediation,
                script,
            );
        }
        if self.fallback && depth < MAX_DEPTH {
            self.fallback(script, depth);
        }
        Stage::default()
    }

    /// Parses and walks a script at `depth`, reporting nothing when it cannot.
    fn try_script(&mut self, script: &str, depth: usize) -> Result<Stage, Failure> {
        // brush-parser 0.4 takes exponential time on deeply nested brackets (9.8 s at 28) and
        // can exhaust memory on unterminated heredocs: neither reaches it
        if depth > MAX_DEPTH || max_nesting(script) > MAX_BRACKETS {
            return Err(Failure::TooDeep);
        }
        if let Some(delim) = crate::evasion::unterminated_heredoc(script) {
            return Err(Failure::Heredoc(delim));
        }
        let opts = self.opts.clone();
        let parsed = catch_unwind(AssertUnwindSafe(|| {
            // one simple command of plain words: the same tree without brush's parser
            match crate::simple::parse(script) {
                Some(program) => Ok(program),
                None => brush_parser::Parser::new(std::io::Cursor::new(script.as_bytes()), &opts)
                    .parse_program(),
            }
        }));
        match parsed {
            Ok(Ok(program)) => {
                let mut stage = Stage::default();
                for list in &program.complete_commands {
                    stage.merge(self.walk_list(list, depth));
                }
                Ok(stage)
            }
            Ok(Err(e)) => Err(Failure::Parse(e.to_string())),
            Err(_) => Err(Failure::Panic),
        }
    }

    /// A script that did not parse (or was not handed to the parser) may still run commands:
    /// syntax the parser rejects must not turn the deny of `rm -rf /` glued behind it into an
    /// ask. Cuts the text into pieces at its command separators ([`fallback::split`]) and walks
    /// each piece on its own, one level deeper; a piece that does not parse either is cut again
    /// by the inner pass, and what still does not parse is skipped silently (the script's own
    /// finding already asks). Findings are only added, so the decision never gets weaker.
    fn fallback(&mut self, script: &str, depth: usize) {
        // spans point into the line only when the script is the line itself
        let spans = depth == 0 && script.len() == self.input.len();
        let (origin, quiet) = (self.origin, self.quiet_parse_errors);
        // a piece that does not parse is expected; scripts nested in a piece are cut in turn
        self.quiet_parse_errors = true;
        // at most MAX_PIECES for this script, and what is left of the line's allowance
        let mut budget = fallback::MAX_PIECES;
        let outer = fallback::split(script, false, self.take_pieces(budget));
        self.spend_pieces(&mut budget, outer.len());
        for (at, piece) in outer {
            // the whole script failed already: go straight to the inner pass
            let whole = piece.trim() == script.trim();
            if !whole && self.try_piece(piece, at, spans, depth) {
                continue;
            }
            let inner = fallback::split(piece, true, self.take_pieces(budget));
            self.spend_pieces(&mut budget, inner.len());
            for (off, part) in inner {
                // a part that is the whole piece failed already
                if part.trim() != piece.trim() {
                    self.try_piece(part, at + off, spans, depth);
                }
            }
        }
        self.origin = origin;
        self.quiet_parse_errors = quiet;
    }

    /// How many pieces the current script may still be cut into.
    fn take_pieces(&self, budget: usize) -> usize {
        budget.min(self.pieces_left)
    }

    fn spend_pieces(&mut self, budget: &mut usize, n: usize) {
        *budget = budget.saturating_sub(n);
        self.pieces_left = self.pieces_left.saturating_sub(n);
    }

    /// Walks one piece of a script that did not parse (and its reading with misread `#`s
    /// blanked, as for whole lines); true when the piece parsed.
    fn try_piece(&mut self, piece: &str, at: usize, spans: bool, depth: usize) -> bool {
        if spans {
            self.origin = Some(Span::new(at, at + piece.len()));
        }
        let parsed = self.try_script(piece, depth + 1).is_ok();
        if let Some(variant) = evasion::midword_hash_variant(piece) {
            let _ = self.try_script(&variant, depth + 1);
        }
        parsed
    }

    fn too_deep(&mut self, evidence: &str) {
        self.engine(
            "too_deep",
            ReasonCode::NestingTooDeep,
            (Decision::Ask, Tier::Medium, Severity::Medium),
            format!("wrappers, substitutions or brackets nest deeper than airlock follows ({MAX_DEPTH} levels); a person must look at it. Write the command without the nesting."),
            "Deep nesting is a common way to hide what runs; read it carefully.",
            evidence,
        );
    }

    fn walk_list(&mut self, list: &ast::CompoundList, depth: usize) -> Stage {
        let mut stage = Stage::default();
        for ast::CompoundListItem(and_or, sep) in &list.0 {
            if matches!(sep, SeparatorOperator::Async) {
                self.saw_async = true;
            }
            stage.merge(self.walk_pipeline(&and_or.first, depth));
            for next in &and_or.additional {
                let p = match next {
                    ast::AndOr::And(p) | ast::AndOr::Or(p) => p,
                };
                stage.merge(self.walk_pipeline(p, depth));
            }
        }
        stage
    }

    fn walk_pipeline(&mut self, p: &ast::Pipeline, depth: usize) -> Stage {
        let mut stages = Vec::with_capacity(p.seq.len());
        let mut whole: Option<Span> = None;
        for c in &p.seq {
            stages.push(self.walk_command(c, depth));
            if depth == 0
                && let Some(o) = self.origin
            {
                whole = Some(match whole {
                    Some(w) => Span::new(w.start.min(o.start), w.end.max(o.end)),
                    None => o,
                });
            }
        }
        if depth == 0 && whole.is_some() {
            self.origin = whole;
        }
        if stages.len() >= 2 {
            let text = stages
                .iter()
                .map(|s| s.texts.join("; "))
                .collect::<Vec<_>>()
                .join(" | ");
            self.rule_hits(Target::Pipeline, &text);
            // `echo PATHS | xargs CMD`: the words xargs adds are known
            for i in 1..stages.len() {
                match (&stages[i - 1].emits, &stages[i].xargs) {
                    (Some(out), Some((cmd, mode))) if mode.literal => {
                        for argv in xargs_commands(cmd, mode.placeholder.as_deref(), out) {
                            self.run_argv(argv, depth + 1, None);
                        }
                    }
                    // `find … | xargs rm -rf`: the operands are known only at run time, like
                    // a variable's value, so the command is judged with one standing for them
                    (_, Some((cmd, mode))) => {
                        let p = mode.placeholder.as_deref();
                        for argv in xargs_commands(cmd, p, XARGS_INPUT) {
                            self.run_argv(argv, depth + 1, None);
                        }
                    }
                    _ => {}
                }
            }
            // an encoded or generated payload fed to an interpreter
            for (i, s) in stages.iter().enumerate() {
                let Some(lang) = s.sink else { continue };
                let decoded = stages[..i].iter().any(|e| e.decoder);
                // a literal `echo`/`printf` piped into an interpreter: the program is known, so
                // it is analysed like `bash -c PROGRAM`; the indirection itself still goes to
                // the reviewer, as it is a common way to keep a command's name out of sight
                if i > 0
                    && !decoded
                    && let Some(program) = &stages[i - 1].emits
                {
                    if lang == Lang::Shell {
                        self.walk_script(program, depth + 1);
                    } else {
                        self.walk_code(lang, program, depth + 1);
                    }
                    self.engine(
                        "piped_program",
                        ReasonCode::DynamicCode,
                        (Decision::Ask, Tier::Low, Severity::Low),
                        format!("a program written out with echo or printf is piped into a {} interpreter instead of being run directly; airlock analysed it, but this indirection is a common way to hide commands from review. Run the commands directly.", lang.name()),
                        "The piped program was analysed; check why the agent did not run it directly.",
                        &text,
                    );
                    continue;
                }
                if i > 0 && !decoded {
                    self.engine(
                        "piped_program",
                        ReasonCode::DynamicCode,
                        (Decision::Ask, Tier::Medium, Severity::Medium),
                        format!("a {} interpreter reads its program from a pipe, so what it runs is not in the command and cannot be checked; a person must look. Save the program to a file, review it, and run the file.", lang.name()),
                        "Look at what the earlier stages produce before approving: it runs as code.",
                        &text,
                    );
                }
                if stages[..i].iter().any(|e| e.decoder) {
                    self.engine(
                            "decoded_payload",
                            ReasonCode::DecodedPayload,
                            (Decision::Deny, Tier::High, Severity::High),
                            format!("a decoded or generated payload is piped into a {} interpreter, which hides what really runs. Run the decoded command directly, in plain text, so it can be checked.", lang.name()),
                            "Decode the payload yourself and review the plain command; encoded payloads piped to a shell are a classic way to slip past review.",
                            &text,
                        );
                }
            }
        }
        let mut out = Stage::default();
        for s in stages {
            out.merge(s);
        }
        out
    }

    fn walk_command(&mut self, c: &Command, depth: usize) -> Stage {
        match c {
            Command::Simple(s) => self.walk_simple(s, depth),
            Command::Compound(cc, redirects) => {
                let mut st = self.walk_compound(cc, depth);
                if let Some(r) = redirects {
                    let mut feed = None;
                    for io in &r.0 {
                        self.walk_redirect(io, depth, &mut feed);
                    }
                }
                st.texts.truncate(64);
                st
            }
            Command::Function(def) => {
                let before = self.saw_async;
                self.saw_async = false;
                let body = self.walk_compound(&def.body.0, depth);
                let name = def.fname.value.as_str();
                let calls = body
                    .texts
                    .iter()
                    .filter(|t| t.split(' ').next() == Some(name))
                    .count();
                if calls >= 2 || (calls >= 1 && self.saw_async) {
                    self.engine(
                        "fork_bomb",
                        ReasonCode::RuleMatch,
                        (Decision::Deny, Tier::Critical, Severity::Critical),
                        format!("the function `{name}` calls itself in a pipeline or in the background: a fork bomb that exhausts the machine's processes. Do not run it."),
                        "A self-replicating function freezes the machine until reboot.",
                        name,
                    );
                }
                self.saw_async = before;
                Stage::default()
            }
            Command::ExtendedTest(t, _) => {
                self.walk_test_expr(&t.expr, depth);
                Stage::default()
            }
        }
    }

    fn walk_test_expr(&mut self, e: &ast::ExtendedTestExpr, depth: usize) {
        use ast::ExtendedTestExpr as E;
        match e {
            E::And(a, b) | E::Or(a, b) => {
                self.walk_test_expr(a, depth);
                self.walk_test_expr(b, depth);
            }
            E::Not(a) | E::Parenthesized(a) => self.walk_test_expr(a, depth),
            // `-v 'a[$(cmd)]'` and arithmetic comparisons evaluate subscripts
            E::UnaryTest(_, w) => {
                let e = self.expand_word(&w.value, depth);
                self.walk_subscript(&e.text, depth);
            }
            E::BinaryTest(_, a, b) => {
                for w in [a, b] {
                    let e = self.expand_word(&w.value, depth);
                    self.walk_subscript(&e.text, depth);
                }
            }
        }
    }

    fn walk_compound(&mut self, cc: &CompoundCommand, depth: usize) -> Stage {
        match cc {
            CompoundCommand::BraceGroup(b) => self.walk_list(&b.list, depth),
            CompoundCommand::Subshell(s) => self.walk_list(&s.list, depth),
            CompoundCommand::ForClause(f) => {
                for w in f.values.iter().flatten() {
                    self.expand_word(&w.value, depth);
                }
                self.env.remove(&f.variable_name);
                self.walk_list(&f.body.list, depth)
            }
            CompoundCommand::ArithmeticForClause(f) => {
                for e in [&f.initializer, &f.condition, &f.updater]
                    .into_iter()
                    .flatten()
                {
                    self.walk_nested(&e.value, depth);
                }
                self.walk_list(&f.body.list, depth)
            }
            CompoundCommand::CaseClause(c) => {
                self.expand_word(&c.value.value, depth);
                let mut st = Stage::default();
                for item in &c.cases {
                    // patterns are expanded when the case is tried: `$(cmd))` runs
                    for p in &item.patterns {
                        self.expand_word(&p.value, depth);
                    }
                    if let Some(cmd) = &item.cmd {
                        st.merge(self.walk_list(cmd, depth));
                    }
                }
                st
            }
            CompoundCommand::IfClause(i) => {
                let mut st = self.walk_list(&i.condition, depth);
                st.merge(self.walk_list(&i.then, depth));
                for e in i.elses.iter().flatten() {
                    if let Some(c) = &e.condition {
                        st.merge(self.walk_list(c, depth));
                    }
                    st.merge(self.walk_list(&e.body, depth));
                }
                st
            }
            CompoundCommand::WhileClause(w) | CompoundCommand::UntilClause(w) => {
                let mut st = self.walk_list(&w.0, depth);
                st.merge(self.walk_list(&w.1.list, depth));
                st
            }
            CompoundCommand::Coprocess(c) => self.walk_command(&c.body, depth),
            CompoundCommand::Arithmetic(a) => {
                self.walk_nested(&a.expr.value, depth);
                Stage::default()
            }
        }
    }

    /// Judges one use of an option the table in `rules/options/` knows.
    fn option_use(&mut self, name: &str, u: crate::options::Use, depth: usize, text: &str) {
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
    fn walk_nested(&mut self, text: &str, depth: usize) {
        let mut bodies = Vec::new();
        word::nested_substitutions(text, &mut bodies);
        for body in &bodies {
            self.walk_script(body, depth + 1);
        }
    }

    /// Analyses the command substitutions in a string bash may evaluate as an array subscript
    /// later (`printf -v 'a[$(cmd)]' x`, `x='a[$(cmd)]'; echo $((x))`).
    fn walk_subscript(&mut self, text: &str, depth: usize) {
        for body in word::subscript_substitutions(text) {
            self.walk_script(&body, depth + 1);
        }
    }

    /// Expands a word and analyses the command substitutions inside it.
    fn expand_word(&mut self, raw: &str, depth: usize) -> Expanded {
        let e = word::expand(raw, &self.env, &self.opts);
        for body in &e.substitutions {
            self.walk_script(body, depth + 1);
        }
        e
    }

    fn span_of(&self, s: &ast::SimpleCommand) -> Option<Span> {
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

    fn walk_simple(&mut self, s: &ast::SimpleCommand, depth: usize) -> Stage {
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
    fn walk_item<'i>(
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

    fn push_word(
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

    fn assign(&mut self, a: &ast::Assignment, depth: usize) {
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
    fn walk_redirect(&mut self, io: &IoRedirect, depth: usize, feed: &mut Option<String>) -> bool {
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
    fn write_target(&mut self, path: &str) -> bool {
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

    /// Analyses one argv: rules, read-only status, then whatever it wraps.
    fn run_argv(&mut self, argv: Vec<String>, depth: usize, feed: Option<&str>) -> Stage {
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
            name.as_str(),
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
        let xargs = match (name.as_str(), inners.first()) {
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
                name.as_str(),
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
            if !matched && self.unknown.len() < 8 && !self.unknown.contains(&name) {
                self.unknown.push(name.clone());
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
        let runs_file = if matches!(name.as_str(), "source" | ".") {
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
                let typed = match name.as_str() {
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

    /// Remembers what a command writes to files when that is known literal text: the output of
    /// a literal `echo`/`printf`/`cat <<EOF` sent to a redirect, or what `tee FILE` is fed.
    fn note_written(&mut self, argv: &[String], feed: Option<&str>, targets: Vec<String>) {
        let Some(prog) = argv.first() else { return };
        let name = unwrap::program_name(prog);
        let mut add = |path: &str, content: &str| {
            if self.written.len() < 16 {
                self.written
                    .push((written_key(path).to_string(), content.to_string()));
            }
        };
        if let Some(content) = literal_output(argv, feed) {
            for t in &targets {
                add(t, &content);
            }
        } else {
            for t in &targets {
                if self.opaque.len() < 16 {
                    self.opaque.push(written_key(t).to_string());
                }
            }
        }
        // `cp /bin/rm /tmp/x`, `ln -s /bin/rm d`, `install -m755 /bin/rm x`: the new name runs
        // the same program
        if matches!(name.as_str(), "cp" | "mv" | "ln" | "install" | "rsync")
            && let [.., src, dest] = argv
                .iter()
                .skip(1)
                .filter(|a| !a.starts_with('-'))
                .collect::<Vec<_>>()
                .as_slice()
        {
            let dest = if dest.ends_with('/') {
                format!("{dest}{}", unwrap::base(src))
            } else {
                dest.to_string()
            };
            let src = which_target(src).unwrap_or(src);
            if self.aliases.len() < 16 {
                self.aliases
                    .push((written_key(&dest).to_string(), unwrap::program_name(src)));
            }
        }
        if matches!(name.as_str(), "tee" | "dd" | "sponge" | "truncate") {
            for t in crate::dest::write_destinations(&name, argv) {
                if self.opaque.len() < 16 {
                    self.opaque.push(written_key(t).to_string());
                }
            }
        }
        if name == "tee"
            && let Some(content) = feed.filter(|f| !f.contains(['$', '`']))
        {
            for t in crate::dest::write_destinations(&name, argv) {
                add(t, content);
            }
        }
    }

    /// Remembers the files a downloader (`curl`, `wget`, …) saves, wherever it sits in `argv`
    /// (`sudo curl -o f URL`), including its standard output redirected to a file.
    fn note_downloaded(&mut self, argv: &[String], targets: &[String]) {
        let Some(at) = argv.iter().take(8).position(|a| {
            let b = unwrap::base(a);
            is_downloader(b)
                || (b.bytes().any(|c| c == b'.' || c.is_ascii_uppercase())
                    && is_downloader(&unwrap::program_name(a)))
        }) else {
            return;
        };
        let fetch = &argv[at..];
        let text = canon::render(fetch);
        for f in download_outputs(fetch).iter().chain(targets) {
            if self.downloaded.len() < 16 && !f.is_empty() && f != "-" {
                self.downloaded
                    .push((written_key(f).to_string(), text.clone()));
            }
        }
    }

    /// A command that runs a file downloaded earlier in the line: the script of a shell or
    /// `source`, the program of an interpreter, or the command itself (`./install.sh`).
    fn run_downloaded(&mut self, name: &str, argv: &[String], text: &str) {
        if self.downloaded.is_empty() {
            return;
        }
        let runs_file = matches!(name, "source" | ".")
            || unwrap::lang_of(name).is_some_and(|l| !matches!(l, Lang::Awk | Lang::Sed));
        let file = if runs_file {
            argv[1..].iter().find(|a| !a.starts_with('-'))
        } else {
            argv.first()
        };
        let Some(file) = file else { return };
        let key = written_key(file);
        let Some((_, fetch)) = self.downloaded.iter().find(|(k, _)| k == key).cloned() else {
            return;
        };
        // the same check as `FETCH | RUNNER` (plain HTTP, known hosts…)
        let runner = if runs_file {
            text.to_string()
        } else {
            "sh".to_string()
        };
        self.rule_hits(Target::Pipeline, &format!("{fetch} | {runner}"));
        self.engine(
            "download_run",
            ReasonCode::DynamicCode,
            (Decision::Ask, Tier::High, Severity::High),
            format!("`{}` runs a file downloaded earlier in the same line, so what runs is whatever the server sent; a person must look. Download it, read it, then run it in a separate step.", cut(text)),
            "Fetch the file yourself and read it before approving; saving a download and running it in one line is `curl | sh` in two steps.",
            text,
        );
    }

    /// Analyses a file written earlier in the line when this command runs it: as the script of
    /// a shell or `source`, the program of an interpreter, or the command itself (`./f.sh`).
    fn run_written(&mut self, name: &str, argv: &[String], depth: usize) {
        self.run_opaque(name, argv);
        if self.written.is_empty() {
            return;
        }
        let lookup = |w: &Walker, p: &str| {
            let key = written_key(p);
            w.written
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, c)| c.clone())
        };
        let interpreter = if matches!(name, "source" | ".") {
            Some(Lang::Shell)
        } else {
            unwrap::lang_of(name).filter(|l| !matches!(l, Lang::Awk | Lang::Sed))
        };
        let (lang, content) = match interpreter {
            Some(lang) => match argv[1..].iter().find(|a| !a.starts_with('-')) {
                Some(file) => match lookup(self, file) {
                    Some(c) => (lang, c),
                    None => return,
                },
                None => return,
            },
            None => match lookup(self, &argv[0]) {
                // run directly: the first line says which interpreter
                Some(c) => {
                    let first = c.lines().next().unwrap_or("");
                    let lang = first
                        .strip_prefix("#!")
                        .and_then(|l| {
                            l.split_whitespace()
                                .map(unwrap::program_name)
                                .find(|n| n != "env" && !n.starts_with('-'))
                        })
                        .and_then(|n| unwrap::lang_of(&n))
                        .unwrap_or(Lang::Shell);
                    (lang, c)
                }
                None => return,
            },
        };
        if lang == Lang::Shell {
            self.walk_script(&content, depth + 1);
        } else {
            self.walk_code(lang, &content, depth + 1);
        }
    }

    /// Inline interpreter code: code rules, capabilities, and shell commands inside it.
    fn walk_code(&mut self, lang: Lang, code: &str, depth: usize) {
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

/// `DROP TABLE x`, `DELETE FROM x`, `TRUNCATE x`, `UPDATE x SET …`, `ALTER TABLE x …` typed as
/// a command line (any letter case).
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

/// Programs that fetch a URL into a file.
fn is_downloader(name: &str) -> bool {
    matches!(
        name,
        "curl" | "wget" | "wget2" | "aria2c" | "fetch" | "http" | "https" | "xh" | "axel"
    )
}

/// The files a downloader's own options name (`curl -o F`, `curl -O URL`, `wget -O F`, `wget
/// URL`): URL-named outputs use the last path segment, as the tools do.
fn download_outputs(fetch: &[String]) -> Vec<String> {
    let name = unwrap::program_name(&fetch[0]);
    let curl_like = !matches!(name.as_str(), "wget" | "wget2" | "axel" | "aria2c");
    let mut out = Vec::new();
    let mut named = false;
    let mut remote_name = !curl_like;
    let mut i = 1;
    while i < fetch.len() {
        let a = fetch[i].as_str();
        let value = |i: usize| fetch.get(i + 1).cloned();
        if let Some(v) = a
            .strip_prefix("--output=")
            .or_else(|| a.strip_prefix("--output-document="))
            .or_else(|| a.strip_prefix("--out="))
        {
            out.push(v.to_string());
            named = true;
        } else if matches!(a, "--output" | "--output-document" | "--out") {
            out.extend(value(i));
            named = true;
            i += 1;
        } else if a == "--remote-name" || a == "--remote-name-all" {
            remote_name = true;
        } else if a.starts_with('-') && !a.starts_with("--") && a.len() > 1 {
            // a short cluster: the output letter takes the rest of the word or the next word
            // aria2c names its output with `-o` like curl, but saves under the URL's name
            let letter = if curl_like || name == "aria2c" {
                'o'
            } else {
                'O'
            };
            if let Some(pos) = a.find(letter) {
                let rest = &a[pos + 1..];
                if rest.is_empty() {
                    out.extend(value(i));
                    i += 1;
                } else {
                    out.push(rest.to_string());
                }
                named = true;
            } else if curl_like && a.contains('O') {
                remote_name = true;
            }
        }
        i += 1;
    }
    if remote_name && !named {
        for u in fetch[1..].iter().filter(|a| a.contains("://")) {
            let path = u.split(['?', '#']).next().unwrap_or("");
            let after_host = path.split_once("://").map_or(path, |(_, r)| r);
            match after_host.split_once('/') {
                Some((_, p)) if !p.is_empty() && !p.ends_with('/') => {
                    out.extend(p.rsplit('/').next().map(String::from));
                }
                _ => out.push("index.html".to_string()),
            }
        }
    }
    out
}

/// The key a written file is remembered by: `./x.sh` and `x.sh` are the same file.
fn written_key(path: &str) -> &str {
    let mut p = path;
    while let Some(rest) = p.strip_prefix("./") {
        p = rest;
    }
    p
}

fn proc_sub_text(kind: &ast::ProcessSubstitutionKind, st: &Stage) -> String {
    let open = match kind {
        ast::ProcessSubstitutionKind::Read => "<(",
        ast::ProcessSubstitutionKind::Write => ">(",
    };
    format!("{open}{})", st.texts.join("; "))
}

/// Commands whose output is a decoded or generated payload.
fn is_decoder(argv: &[String]) -> bool {
    let name = unwrap::base(&argv[0]);
    let has = |f: &str| argv[1..].iter().any(|a| a == f);
    let has_prefix = |p: &str| argv[1..].iter().any(|a| a.starts_with(p));
    match name {
        "base64" | "base32" | "basenc" => {
            has("-d") || has("--decode") || has("-D") || has_prefix("-d")
        }
        "xxd" => has("-r") || has_prefix("-r"),
        "openssl" => has("-d") || has("base64") && has("-d"),
        "uudecode" | "rev" | "gunzip" | "zcat" | "bunzip2" | "xz" | "unxz" | "zstd" | "lzma" => {
            true
        }
        "gzip" | "bzip2" => has("-d") || has("--decompress") || has("-dc") || has("-cd"),
        "printf" => argv[1..]
            .iter()
            .any(|a| a.contains("\\x") || has_octal_escape(a)),
        "echo" => {
            (has("-e") || has("-ne") || has("-en"))
                && argv[1..]
                    .iter()
                    .any(|a| a.contains("\\x") || has_octal_escape(a))
        }
        "tr" => argv[1..]
            .iter()
            .any(|a| a.contains("N-ZA-M") || a.contains("n-za-m")),
        "python" | "python3" | "perl" | "ruby" | "node" => argv[1..].iter().any(|a| {
            a.contains("b64decode")
                || a.contains("decode(")
                || a.contains("fromCharCode")
                || a.contains("pack(")
        }),
        _ => false,
    }
}

/// What `echo WORDS` or `printf FORMAT` prints, when that is plain literal text: no options
/// but `echo -n`, no expansions left, and for `printf` a format without conversions (or `%s`
/// lines of literal arguments) whose only escapes are `\n`, `\t` and `\\`. A bare `cat` prints
/// the heredoc or here-string it is given.
fn literal_output(argv: &[String], feed: Option<&str>) -> Option<String> {
    let name = unwrap::base(&argv[0]);
    let args = &argv[1..];
    if name == "cat" {
        return feed
            .filter(|body| args.iter().all(|a| a == "-") && !body.contains(['$', '`']))
            .map(str::to_string);
    }
    if args.iter().any(|a| a.contains(['$', '`'])) {
        return None;
    }
    match name {
        "echo" => {
            let args = match args.first().map(String::as_str) {
                Some("-n") => &args[1..],
                _ => args,
            };
            if args.first().is_some_and(|a| a.starts_with('-')) {
                return None;
            }
            Some(args.join(" "))
        }
        "printf" => {
            let (format, rest) = args.split_first()?;
            if rest.iter().any(|a| a.contains('\\')) {
                return None;
            }
            let lines = match (format.as_str(), rest) {
                (f, []) if !f.contains('%') => f.to_string(),
                ("%s", r) if !r.is_empty() => r.concat(),
                ("%s\\n" | "%s\\0", r) if !r.is_empty() => r.join("\\n"),
                _ => return None,
            };
            let mut out = String::with_capacity(lines.len());
            let mut chars = lines.chars();
            while let Some(c) = chars.next() {
                if c != '\\' {
                    out.push(c);
                    continue;
                }
                match chars.next() {
                    Some('n') => out.push('\n'),
                    Some('t') => out.push('\t'),
                    Some('\\') => out.push('\\'),
                    _ => return None,
                }
            }
            Some(out)
        }
        _ => None,
    }
}

/// How `xargs` reads its input.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct XargsMode {
    /// `None` splits the input into words appended to the command; `Some(P)` runs the command
    /// once per line with `P` replaced (`-I P`, `-iP`, `--replace`).
    pub placeholder: Option<String>,
    /// The input can be modelled from literal text: not with `-d` (a custom delimiter).
    /// NUL-separated input (`-0`) is read as words: what is known of it comes from
    /// `printf '%s\0' …`.
    pub literal: bool,
    /// The input comes from a file (`-a FILE`, `--arg-file=FILE`), not from standard input,
    /// so it is only known at run time.
    pub arg_file: bool,
}

fn xargs_mode(argv: &[String]) -> XargsMode {
    let mut mode = XargsMode {
        literal: true,
        ..XargsMode::default()
    };
    let mut i = 1;
    while i < argv.len() {
        let a = argv[i].as_str();
        if !a.starts_with('-') || a == "--" {
            break;
        }
        match a {
            "-d" | "--delimiter" => {
                mode.literal = false;
                i += 1;
            }
            "-a" | "--arg-file" => {
                mode.arg_file = true;
                i += 1;
            }
            "-I" => {
                mode.placeholder = argv.get(i + 1).cloned();
                i += 1;
            }
            "-i" | "--replace" => mode.placeholder = Some("{}".to_string()),
            _ if a.starts_with("--replace=") => mode.placeholder = Some(a[10..].to_string()),
            _ if a.starts_with("--arg-file=") || a.starts_with("-a") => mode.arg_file = true,
            _ if a.starts_with("-I") || a.starts_with("-i") => {
                mode.placeholder = Some(a[2..].to_string())
            }
            _ if a.starts_with("-d") || a.starts_with("--delimiter=") => mode.literal = false,
            "-n" | "-P" | "-L" | "-l" | "-s" | "-E" | "-e" | "--max-args" | "--max-procs"
            | "--max-lines" | "--max-chars" => i += 1,
            _ => {}
        }
        i += 1;
    }
    mode
}

/// Variables whose value is a shell command some program runs: bash's `PROMPT_COMMAND`, git's
/// ssh, proxy, diff, pager and editor commands, `LESSOPEN`/`LESSCLOSE` input filters (`|CMD`),
/// and the pager, editor and browser other tools start.
fn runs_value(name: &str) -> bool {
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

/// Stands for the words `xargs` reads when they are only known at run time.
const XARGS_INPUT: &str = "$XARGS_INPUT";

/// The commands `xargs` runs for the literal input `input`.
fn xargs_commands(cmd: &[String], placeholder: Option<&str>, input: &str) -> Vec<Vec<String>> {
    const MAX_RUNS: usize = 16;
    match placeholder {
        None => {
            let mut argv = cmd.to_vec();
            argv.extend(input.split_whitespace().map(String::from));
            vec![argv]
        }
        Some(p) => input
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .take(MAX_RUNS)
            .map(|line| cmd.iter().map(|w| w.replace(p, line)).collect())
            .collect(),
    }
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

fn has_octal_escape(s: &str) -> bool {
    let b = s.as_bytes();
    b.windows(4)
        .any(|w| w[0] == b'\\' && w[1..].iter().all(|c| (b'0'..=b'7').contains(c)))
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

/// Deepest bracket nesting in raw text, to refuse pathological input before the parser
/// recurses into it.
pub fn max_nesting(s: &str) -> usize {
    let mut depth: usize = 0;
    let mut max = 0;
    for b in s.bytes() {
        match b {
            b'(' | b'{' | b'[' => {
                depth += 1;
                max = max.max(depth);
            }
            b')' | b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}
