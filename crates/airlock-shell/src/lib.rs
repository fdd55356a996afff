//! Shell-command analysis: parse a command line into a tree, walk everything that runs, unwrap
//! wrappers, and match the resulting commands against data-driven rule packs.
//!
//! The entry point is [`analyse`]. It never panics and never fails: what cannot be analysed
//! becomes at least an `ask` finding with its own reason code, and an internal failure denies.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::OnceLock;

use airlock_core::{Assessment, Decision, Finding, ReasonCode, Severity, Tier};

pub mod argv;
pub mod canon;
mod code_deletes;
mod dest;
mod dfa;
pub mod evasion;
mod fallback;
pub mod fetch;
pub mod glob;
pub mod inline;
pub mod options;
pub mod paths;
mod prebuilt;
pub mod readonly;
pub mod rules;
pub mod rundirs;
mod simple;
pub mod typosquat;
pub mod unwrap;
mod walk;
pub mod word;
pub mod wrapper_table;

pub use argv::simple_argv;
pub use rules::{RuleError, RuleSet, Target};

/// Lines longer than this are not analysed (asked instead).
pub const MAX_INPUT: usize = 64 * 1024;

/// One command the walk found, as policy rules see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ran {
    /// The canonical text rules match on (program base name, expanded words, quoted).
    pub text: String,
    /// The command is on the known read-only list.
    pub read_only: bool,
    /// A transparent wrapper (`nice`, `timeout`, `env`, `xargs`…): what it runs is listed too.
    pub wrapper: bool,
}

/// The assessment plus every command found, for policy rules over analysed commands.
#[derive(Debug, Clone)]
pub struct Analysis {
    pub assessment: Assessment,
    pub commands: Vec<Ran>,
    /// False when some commands may be missing from `commands` (too many, too deep, unparsable
    /// or not analysed): a policy must not allow a line on the strength of `commands` then.
    pub complete: bool,
}

/// A compiled analyser: rule packs plus the walker's configuration.
#[derive(Debug)]
pub struct Analyser {
    rules: RuleSet,
}

static BUILTIN: OnceLock<Result<Analyser, RuleError>> = OnceLock::new();

impl Analyser {
    pub fn new(rules: RuleSet) -> Self {
        Analyser { rules }
    }

    /// The analyser with the built-in packs, compiled on first use.
    pub fn builtin() -> Result<&'static Analyser, &'static RuleError> {
        BUILTIN
            .get_or_init(|| RuleSet::builtin().map(Analyser::new))
            .as_ref()
    }

    pub fn rules(&self) -> &RuleSet {
        &self.rules
    }

    /// Analyses one command line.
    pub fn analyse(&self, command: &str) -> Assessment {
        self.analyse_with(command, true)
    }

    /// Analyses with the keyword prefilter on or off (off tries every rule: used to prove the
    /// prefilter hides nothing).
    pub fn analyse_with(&self, command: &str, prefilter: bool) -> Assessment {
        self.analyse_full(command, prefilter).assessment
    }

    /// Analyses without cutting a line that does not parse into pieces: only to show, in
    /// tests, that the fallback changes nothing on lines that parse and weakens nothing.
    #[doc(hidden)]
    pub fn analyse_without_parse_fallback(&self, command: &str) -> Assessment {
        self.analyse_guarded(command, true, false).assessment
    }

    /// Analyses one command line and also returns the commands found in it.
    pub fn analyse_full(&self, command: &str, prefilter: bool) -> Analysis {
        self.analyse_guarded(command, prefilter, true)
    }

    fn analyse_guarded(&self, command: &str, prefilter: bool, fallback: bool) -> Analysis {
        match catch_unwind(AssertUnwindSafe(|| {
            self.analyse_inner(command, prefilter, fallback)
        })) {
            Ok(a) => a,
            Err(_) => Analysis {
                assessment: internal_error("the analyser failed on this input"),
                commands: Vec::new(),
                complete: false,
            },
        }
    }

    fn analyse_inner(&self, command: &str, prefilter: bool, fallback: bool) -> Analysis {
        if command.len() > MAX_INPUT {
            let assessment = Assessment::from_findings(
                vec![Finding::new(
                    "engine.too_large",
                    ReasonCode::InputTooLarge,
                    Decision::Ask,
                    Tier::Medium,
                    Severity::Medium,
                    format!(
                        "the command is {} bytes, over airlock's analysis limit of {MAX_INPUT}; a person must look at it. Put long content in a file and run a short command.",
                        command.len()
                    ),
                )
                .with_remediation("Read the whole command before approving; it was not analysed.")],
                Decision::Ask,
            );
            return Analysis {
                assessment,
                commands: Vec::new(),
                complete: false,
            };
        }
        let mut w = walk::Walker::new(&self.rules, prefilter, command);
        w.fallback = fallback;
        let raw = evasion::scan_raw(command);
        if raw.nul {
            w.add(
                Finding::new(
                    "engine.nul_byte",
                    ReasonCode::NulByte,
                    Decision::Ask,
                    Tier::High,
                    Severity::High,
                    "the command contains a NUL byte, which shells and tools read differently; a person must look. Remove the NUL byte.",
                )
                .with_remediation("NUL bytes can make what is shown differ from what runs."),
                "",
            );
        }
        if let Some(at) = raw.control.or(raw.invisible) {
            w.add(
                Finding::new(
                    "engine.terminal_deception",
                    ReasonCode::TerminalDeception,
                    Decision::Ask,
                    Tier::High,
                    Severity::High,
                    "the command contains terminal escape sequences, control or invisible characters that can make a terminal show something other than what runs; a person must look. Remove them.",
                )
                .with_remediation("Inspect the raw bytes (for example with `cat -v`) before approving.")
                .with_span(airlock_core::Span::new(at, at + 1)),
                "",
            );
        }
        // control characters are already a finding; bash keeps them inside words (`a\x0b#b` is
        // one word, not a comment), so the parser sees an ordinary word character instead
        let clean: std::borrow::Cow<str> = if raw.nul || raw.control.is_some() {
            command
                .chars()
                .map(|c| {
                    if c.is_control() && !matches!(c, '\t' | '\n' | '\r') {
                        '_'
                    } else {
                        c
                    }
                })
                .collect::<String>()
                .into()
        } else {
            command.into()
        };
        w.walk_script(&clean, 0);
        if let Some(variant) = evasion::midword_hash_variant(&clean) {
            // a second reading: the first one already cut the line into pieces if it failed
            w.quiet_parse_errors = true;
            let fallback = std::mem::replace(&mut w.fallback, false);
            w.walk_script(&variant, 0);
            w.fallback = fallback;
            w.quiet_parse_errors = false;
        }
        // analyse the folded form too, so look-alike letters do not hide a rule
        if (raw.invisible.is_some() || !clean.is_ascii())
            && let Some(folded) = evasion::fold_confusables(&clean)
        {
            w.walk_script(&folded, 0);
        }
        if w.findings.iter().all(|f| f.decision == Decision::Allow) {
            if w.all_read_only {
                w.add(
                    Finding::new(
                        "engine.read_only",
                        ReasonCode::ReadOnly,
                        Decision::Allow,
                        Tier::Safe,
                        Severity::Info,
                        "every command in the line only reads",
                    ),
                    "",
                );
            } else {
                let names = w.unknown.join(", ");
                w.add(
                    Finding::new(
                        "engine.unmatched",
                        ReasonCode::UnknownCommand,
                        Decision::Allow,
                        Tier::Low,
                        Severity::Info,
                        if names.is_empty() {
                            "no rule matched; the line may change files".to_string()
                        } else {
                            format!(
                                "no rule matched `{names}`; it may change files in the workspace"
                            )
                        },
                    ),
                    "",
                );
            }
        }
        // anything short of a clean, fully walked line may hide commands from the list
        let complete = w.ran.len() < walk::MAX_RAN
            && !w.findings.iter().any(|f| {
                matches!(
                    f.code,
                    ReasonCode::ParseError
                        | ReasonCode::NestingTooDeep
                        | ReasonCode::DecodedPayload
                        | ReasonCode::AnalysisTimeout
                        | ReasonCode::DynamicCode
                        | ReasonCode::InternalError
                )
            });
        let commands = std::mem::take(&mut w.ran);
        Analysis {
            assessment: Assessment::from_findings(std::mem::take(&mut w.findings), Decision::Allow),
            commands,
            complete,
        }
    }
}

fn internal_error(what: &str) -> Assessment {
    Assessment::from_findings(
        vec![Finding::new(
            "engine.internal_error",
            ReasonCode::InternalError,
            Decision::Deny,
            Tier::High,
            Severity::High,
            format!(
                "{what}; airlock denies to stay safe. Try a simpler command, and report the input to the airlock maintainers."
            ),
        )],
        Decision::Deny,
    )
}

/// Analyses one command line with the built-in rule packs.
pub fn analyse(command: &str) -> Assessment {
    match Analyser::builtin() {
        Ok(a) => a.analyse(command),
        Err(e) => internal_error(&format!("the built-in rule packs failed to load ({e})")),
    }
}

/// SHA-256 (hex) of the built-in rule packs: the policy in force until policy files exist.
pub fn policy_hash() -> &'static str {
    static HASH: OnceLock<String> = OnceLock::new();
    HASH.get_or_init(|| {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        for (name, text) in rules::BUILTIN_PACKS {
            h.update(name.as_bytes());
            h.update([0]);
            h.update(text.as_bytes());
            h.update([0]);
        }
        h.finalize().iter().map(|b| format!("{b:02x}")).collect()
    })
}
