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

mod code;
mod run;
mod sequence;
mod words;
mod written;
mod xargs;
use sequence::{manifest_scripts, which_target};
use words::runs_value;
use written::{is_decoder, literal_output, written_key};
use xargs::{XARGS_INPUT, XargsMode, xargs_commands, xargs_mode};

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
