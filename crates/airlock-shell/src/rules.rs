//! Rule packs: TOML files under `rules/shell/`, compiled once into a prefiltered matcher.
//!
//! A rule matches one *text* produced by the analyser (a command's canonical argv, a pipeline,
//! a redirection target, or inline interpreter code). A keyword pass over the text picks the
//! candidates; only the candidates' own regexes then run. A rule whose keywords do not occur is
//! never tried, so every rule must carry keywords that its matches always contain (a test checks
//! every example against the prefilter).
//!
//! The keyword pass is a [`KeywordIndex`]: keywords bucketed by their first two bytes, with a
//! 65,536-bit map of which byte pairs start any keyword. Building it is a sort (~0.27M
//! instructions for the built-in packs, whose indexes `build.rs` therefore builds ahead of
//! time); the Aho-Corasick automaton it replaced cost ~6M instructions to build, paid by
//! every hook process, for no gain on texts of a few dozen bytes.
//!
//! Regexes compile lazily, the first time the prefilter names their rule: compiling every
//! pack up front cost ~100 ms, which every hook process would pay. Loading only checks the
//! syntax (cheap); the tests compile every pattern, so a broken rule still fails the build.
//!
//! An ASCII text (almost every command) goes to each rule's ASCII form: the same pattern with
//! Unicode off, which answers the same on ASCII texts and compiles in a fraction (built-in
//! patterns arrive pre-parsed from `build.rs`, see `prebuilt`). Other texts use the regexes as
//! written.
//!
//! Why not one `RegexSet` over all rules: with a few hundred patterns its lazy DFA outgrows its
//! cache and matching slowed from ~2 µs to ~150 µs per text; candidates average under five.

use airlock_core::{Decision, Severity, Tier};
use regex::{Regex, RegexBuilder};
#[cfg(test)]
use regex_automata::meta;
use regex_automata::nfa::thompson::{self, WhichCaptures, pikevm, pikevm::PikeVM};
use regex_automata::{Input, hybrid};
use regex_syntax::hir::Hir;
use serde::Deserialize;
use std::borrow::Cow;
use std::sync::{Mutex, OnceLock};

/// What text a rule looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Target {
    /// One simple command after unwrapping, rendered as a quoted argv: `rm -rf /`.
    Command,
    /// A whole pipeline: the stages' canonical commands joined by ` | `.
    Pipeline,
    /// The static target path of an output redirection (`> /dev/sda`).
    Redirect,
    /// Inline interpreter code (`python -c CODE`, `perl -e CODE`, heredoc bodies for them).
    Code,
}

impl Target {
    pub const ALL: [Target; 4] = [
        Target::Command,
        Target::Pipeline,
        Target::Redirect,
        Target::Code,
    ];

    fn index(self) -> usize {
        self as usize
    }
}

/// One pack file as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PackFile {
    pub pack: String,
    pub description: String,
    #[serde(default, rename = "rules")]
    pub rules: Vec<RuleSpec>,
}

/// One rule as written in a pack file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleSpec {
    pub id: String,
    #[serde(default = "default_target")]
    pub on: Target,
    /// Literal keywords (matched ASCII case-insensitively); at least one occurs in every match.
    pub keywords: Vec<String>,
    /// Regex over the text.
    pub pattern: String,
    /// Optional regex; when it also matches, the rule does not fire.
    #[serde(default)]
    pub unless: Option<String>,
    pub decision: Decision,
    pub tier: u8,
    pub severity: Severity,
    pub message: String,
    #[serde(default)]
    pub remediation: String,
    /// Whole command lines that must produce this rule.
    #[serde(rename = "match")]
    pub examples: Vec<String>,
    /// Whole command lines that must not produce this rule.
    #[serde(default, rename = "not_match")]
    pub counter_examples: Vec<String>,
}

fn default_target() -> Target {
    Target::Command
}

/// A compiled rule. Built-in rules borrow their text from the binary.
#[derive(Debug)]
pub struct Rule {
    /// `pack.rule`.
    pub id: String,
    pub on: Target,
    pub decision: Decision,
    pub tier: Tier,
    pub severity: Severity,
    pub message: Cow<'static, str>,
    pub remediation: Cow<'static, str>,
    pub pattern: Cow<'static, str>,
    pub unless: Option<Cow<'static, str>>,
    /// Built-in rules: their entry in the table, for what `build.rs` prepared (prefix literals,
    /// ASCII-form programs, DFA tables). One pointer rather than copies of those slices: a
    /// hook process moves every rule of the table at load.
    builtin: Option<&'static StaticRule>,
    compiled: OnceLock<Compiled>,
    /// The regexes for ASCII texts; `None` when the rule has no ASCII form (see [`Rule::fires`]).
    /// Boxed: the matchers' caches are large, and every rule carries this from load.
    compiled_ascii: OnceLock<Option<Box<AsciiCompiled>>>,
    pub keywords: Strings,
    pub examples: Strings,
    pub counter_examples: Strings,
}

/// A rule's list of strings (keywords, examples): read from a pack file, or borrowed from the
/// built-in table without copying (a hook process never looks at a rule's examples, and
/// making 233 rules' lists was most of `RuleSet::builtin`).
#[derive(Debug, Clone)]
pub enum Strings {
    Owned(Vec<String>),
    Builtin(Spans),
}

impl Strings {
    pub fn iter(&self) -> StringsIter<'_> {
        match self {
            Strings::Owned(v) => StringsIter::Owned(v.iter()),
            Strings::Builtin(l) => StringsIter::Builtin(l.spans().iter()),
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Strings::Owned(v) => v.len(),
            Strings::Builtin(l) => l.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The same strings, whichever way they are stored.
impl PartialEq for Strings {
    fn eq(&self, other: &Strings) -> bool {
        self.iter().eq(other.iter())
    }
}

impl<'a> IntoIterator for &'a Strings {
    type Item = &'a str;
    type IntoIter = StringsIter<'a>;

    fn into_iter(self) -> StringsIter<'a> {
        self.iter()
    }
}

/// Iterator over [`Strings`].
#[derive(Debug, Clone)]
pub enum StringsIter<'a> {
    Owned(std::slice::Iter<'a, String>),
    Builtin(std::slice::Iter<'static, Span>),
}

impl<'a> Iterator for StringsIter<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        match self {
            StringsIter::Owned(i) => i.next().map(String::as_str),
            StringsIter::Builtin(i) => i.next().map(|s| s.text()),
        }
    }
}

/// A built-in rule as `build.rs` pre-parsed it from the packs.
///
/// Its strings are offsets into one text ([`Span`], [`Spans`]), not `&'static str`: the
/// dynamic loader must write the address of every pointer in a table at each process start
/// (a relocation), which for this table and its slices was about 9,300 pointers on 40 pages,
/// paid by every hook run whatever it checks.
#[derive(Debug)]
pub struct StaticRule {
    pack: Span,
    id: Span,
    full_id: Span,
    pub on: Target,
    keywords: Spans,
    pattern: Span,
    literals: Option<(bool, Spans)>,
    unless: Option<Span>,
    ascii: Option<Span>,
    unless_ascii: Option<Span>,
    dfa: Option<Span>,
    unless_dfa: Option<Span>,
    pub decision: Decision,
    pub tier: i64,
    pub severity: Severity,
    message: Span,
    remediation: Span,
    examples: Spans,
    counter_examples: Spans,
}

/// Where a built-in string is: bytes `start..end` of [`BUILTIN_TEXT`] (or of [`BUILTIN_BYTES`]
/// for byte strings). `build.rs` writes only spans that lie on character boundaries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span(u32, u32);

/// A built-in list: entries `first..end` of [`BUILTIN_SPANS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spans(u32, u32);

/// Every string of [`BUILTIN_TABLE`], each stored once.
static BUILTIN_TEXT: &str = include!(concat!(env!("OUT_DIR"), "/text.rs"));
/// Every byte string of [`BUILTIN_TABLE`] (ASCII-form programs, DFA tables, prefix literals).
static BUILTIN_BYTES: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/bytes.bin"));
/// The entries of every list in [`BUILTIN_TABLE`].
static BUILTIN_SPANS: &[Span] = include!(concat!(env!("OUT_DIR"), "/spans.rs"));

impl Span {
    fn range(self) -> std::ops::Range<usize> {
        self.0 as usize..self.1 as usize
    }

    /// The string (empty for a span `build.rs` did not write, which a test rules out).
    fn text(self) -> &'static str {
        BUILTIN_TEXT.get(self.range()).unwrap_or_default()
    }

    fn bytes(self) -> &'static [u8] {
        BUILTIN_BYTES.get(self.range()).unwrap_or_default()
    }
}

impl Spans {
    fn spans(self) -> &'static [Span] {
        BUILTIN_SPANS
            .get(self.0 as usize..self.1 as usize)
            .unwrap_or_default()
    }

    fn len(self) -> usize {
        self.spans().len()
    }

    fn texts(self) -> impl ExactSizeIterator<Item = &'static str> + Clone {
        self.spans().iter().map(|s| s.text())
    }

    fn byte_strings(self) -> impl ExactSizeIterator<Item = &'static [u8]> + Clone {
        self.spans().iter().map(|s| s.bytes())
    }
}

impl StaticRule {
    pub fn pack(&self) -> &'static str {
        self.pack.text()
    }

    pub fn id(&self) -> &'static str {
        self.id.text()
    }

    /// `pack.id`.
    pub fn full_id(&self) -> &'static str {
        self.full_id.text()
    }

    pub fn keywords(&self) -> impl ExactSizeIterator<Item = &'static str> + Clone {
        self.keywords.texts()
    }

    pub fn pattern(&self) -> &'static str {
        self.pattern.text()
    }

    /// The literals every match begins with, and whether matches start at the text's start
    /// (worked out by `build.rs` from the pattern; `None` when there is no finite set).
    pub fn literals(&self) -> Option<(bool, impl ExactSizeIterator<Item = &'static [u8]>)> {
        self.literals
            .map(|(anchored, l)| (anchored, l.byte_strings()))
    }

    pub fn unless(&self) -> Option<&'static str> {
        self.unless.map(Span::text)
    }

    /// The pattern's ASCII form (Unicode off), pre-parsed by `build.rs` as a program for
    /// [`crate::prebuilt::decode`]; `None` when it has none.
    pub fn ascii(&self) -> Option<&'static [u8]> {
        self.ascii.map(Span::bytes)
    }

    /// The same for `unless`.
    pub fn unless_ascii(&self) -> Option<&'static [u8]> {
        self.unless_ascii.map(Span::bytes)
    }

    /// The ASCII form's DFA table (read by the private `dfa::Table`), when
    /// `src/dfa_tables.bin` holds one made from exactly this program.
    pub fn dfa(&self) -> Option<&'static [u8]> {
        self.dfa.map(Span::bytes)
    }

    /// The same for `unless`.
    pub fn unless_dfa(&self) -> Option<&'static [u8]> {
        self.unless_dfa.map(Span::bytes)
    }

    pub fn message(&self) -> &'static str {
        self.message.text()
    }

    pub fn remediation(&self) -> &'static str {
        self.remediation.text()
    }

    pub fn examples(&self) -> impl ExactSizeIterator<Item = &'static str> + Clone {
        self.examples.texts()
    }

    pub fn counter_examples(&self) -> impl ExactSizeIterator<Item = &'static str> + Clone {
        self.counter_examples.texts()
    }
}

/// The built-in packs, pre-parsed. The table holds no pointers (see [`StaticRule`]).
pub static BUILTIN_TABLE: &[StaticRule] = include!(concat!(env!("OUT_DIR"), "/table.rs"));

/// A rule before validation, from either source.
struct Draft {
    id: String,
    on: Target,
    keywords: Strings,
    pattern: Cow<'static, str>,
    builtin: Option<&'static StaticRule>,
    unless: Option<Cow<'static, str>>,
    decision: Decision,
    tier: i64,
    severity: Severity,
    message: Cow<'static, str>,
    remediation: Cow<'static, str>,
    examples: Strings,
    counter_examples: Strings,
}

/// A rule's compiled regexes; `None` when a pattern failed to compile (over the size limit).
struct Compiled {
    pattern: Option<Regex>,
    unless: Option<Option<Regex>>,
}

impl std::fmt::Debug for Compiled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Compiled")
    }
}

/// The ASCII forms of a rule's regexes. The `unless` compiles only once the pattern has matched
/// a text: most candidate rules do not match, and some `unless` regexes are the largest of all
/// (`fs.rm_recursive_workspace`'s list of build directories).
struct AsciiCompiled {
    pattern: Ascii,
    /// `None` when the rule has no `unless`; inside, `None` when its ASCII form did not compile.
    unless: Option<OnceLock<Option<Ascii>>>,
}

/// A regex compiled for `is_match` alone: one forward Thompson NFA that records only the whole
/// match, searched by a lazy DFA, and by the PikeVM when the lazy DFA cannot answer.
///
/// `meta::Regex` (what `regex` builds) also compiles a reverse NFA, every capture group, a
/// prefilter and a one-pass DFA, all of which only serve finding *where* a match is; a rule
/// asks only *whether* there is one, and a hook process compiles each regex for one text.
/// Both are exact engines over the same tree with the same settings (bytes, no UTF-8 empty
/// match rule, same size limit), so they answer `is_match` alike (a test compares them).
struct Matcher {
    dfa: Option<hybrid::dfa::DFA>,
    pikevm: PikeVM,
    /// Search scratch space, grown on first use and kept: the lazy DFA's states are built as
    /// texts need them and serve the next text.
    caches: Mutex<(Option<hybrid::dfa::Cache>, Option<pikevm::Cache>)>,
}

/// The forward Thompson NFA a [`Matcher`] searches (and `dfa_tables.bin` is determinized from).
pub(crate) fn nfa_for(hir: &Hir) -> Option<thompson::NFA> {
    thompson::Compiler::new()
        .configure(
            thompson::Config::new()
                .utf8(false)
                .nfa_size_limit(Some(SIZE_LIMIT))
                .shrink(false)
                .which_captures(WhichCaptures::Implicit),
        )
        .build_from_hir(hir)
        .ok()
}

/// A rule regex's ASCII form, ready to answer `is_match`: a table DFA made ahead of time
/// (`crate::dfa`) or, for patterns without one, a [`Matcher`] compiled now.
enum Ascii {
    Table(crate::dfa::Table),
    /// Boxed: a matcher with its caches is over a kilobyte, a table a few words.
    Nfa(Box<Matcher>),
}

impl Ascii {
    /// The table when `table` holds a well-formed one, else the compiled pattern.
    fn new(p: &str, code: Option<&[u8]>, table: Option<&'static [u8]>) -> Option<Ascii> {
        if let Some(t) = table.and_then(crate::dfa::Table::new) {
            return Some(Ascii::Table(t));
        }
        compile_ascii(p, code).map(|m| Ascii::Nfa(Box::new(m)))
    }

    /// `None` only for a table that is inconsistent (`Table::new` rules that out): the
    /// caller then decides with the Unicode regexes.
    fn is_match(&self, text: &str) -> Option<bool> {
        match self {
            Ascii::Table(t) => t.is_match(text.as_bytes()),
            Ascii::Nfa(m) => Some(m.is_match(text)),
        }
    }
}

impl Matcher {
    fn new(hir: &Hir) -> Option<Matcher> {
        let nfa = nfa_for(hir)?;
        // the lazy DFA refuses what it cannot search (Unicode word boundaries); the PikeVM
        // answers alone then
        let dfa = hybrid::dfa::DFA::builder()
            .configure(hybrid::dfa::Config::new().cache_capacity(2 << 20))
            .build_from_nfa(nfa.clone())
            .ok();
        let pikevm = PikeVM::new_from_nfa(nfa).ok()?;
        Some(Matcher {
            dfa,
            pikevm,
            caches: Mutex::new((None, None)),
        })
    }

    fn is_match(&self, text: &str) -> bool {
        let input = Input::new(text).earliest(true);
        let mut caches = match self.caches.lock() {
            Ok(c) => c,
            // a search panicked with the caches out: start them afresh
            Err(poisoned) => {
                let mut c = poisoned.into_inner();
                *c = (None, None);
                c
            }
        };
        let (dfa_cache, pike_cache) = &mut *caches;
        if let Some(dfa) = &self.dfa {
            let cache = dfa_cache.get_or_insert_with(|| dfa.create_cache());
            // an error means the lazy DFA gave up on this text (it never guesses)
            if let Ok(m) = dfa.try_search_fwd(cache, &input) {
                return m.is_some();
            }
        }
        let cache = pike_cache.get_or_insert_with(|| self.pikevm.create_cache());
        self.pikevm.is_match(cache, input)
    }
}

impl std::fmt::Debug for AsciiCompiled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AsciiCompiled")
    }
}

/// The NFA size limit for every rule regex.
const SIZE_LIMIT: usize = 8 << 20;

fn compile(p: &str) -> Result<Regex, regex::Error> {
    RegexBuilder::new(p).size_limit(SIZE_LIMIT).build()
}

/// Compiles an ASCII form for [`Rule::fires`]: the same tree `regex::bytes::RegexBuilder` with
/// `unicode(false)` would build, matched by a [`Matcher`].
fn compile_ascii(p: &str, code: Option<&[u8]>) -> Option<Matcher> {
    Matcher::new(&crate::prebuilt::ascii_hir(p, code)?)
}

/// The ASCII form as `regex::bytes::RegexBuilder` with `unicode(false)` and the same size limit
/// would compile it (that builder cannot start from a parsed tree): what [`Matcher`] replaced,
/// kept for the test that compares the two.
#[cfg(test)]
fn compile_ascii_meta(p: &str, code: Option<&[u8]>) -> Option<meta::Regex> {
    let hir = crate::prebuilt::ascii_hir(p, code)?;
    meta::Regex::builder()
        .configure(
            meta::Config::new()
                .nfa_size_limit(Some(SIZE_LIMIT))
                .hybrid_cache_capacity(2 << 20)
                .match_kind(regex_automata::MatchKind::LeftmostFirst)
                .utf8_empty(false),
        )
        .build_from_hir(&hir)
        .ok()
}

fn check_syntax(p: &str) -> Result<(), String> {
    // the AST parse catches syntax errors without the cost of translating Unicode classes
    // (that translation was ~0.4M instructions per pattern); compile errors are left to tests
    regex_syntax::ast::parse::Parser::new()
        .parse(p)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

impl Rule {
    fn compiled(&self) -> &Compiled {
        self.compiled.get_or_init(|| Compiled {
            pattern: compile(&self.pattern).ok(),
            unless: self.unless.as_deref().map(|u| compile(u).ok()),
        })
    }

    /// False when `text` cannot match the pattern because none of the literals every match
    /// begins with occurs (at its start, for anchored patterns): the regex need not compile.
    pub fn may_match(&self, text: &str) -> bool {
        let Some((anchored, lits)) = self.builtin.and_then(|s| s.literals) else {
            return true;
        };
        let t = text.as_bytes();
        // compare first bytes before whole slices: a slice comparison is a memcmp call
        let at = |i: usize, l: &[u8]| match (t.get(i), l.first()) {
            (_, None) => true,
            (Some(a), Some(b)) => a == b && t.get(i..i + l.len()) == Some(l),
            (None, Some(_)) => false,
        };
        if anchored {
            return lits.byte_strings().any(|l| at(0, l));
        }
        // a scan is quick on short texts and few literals; otherwise go straight to the regex
        if t.len() > 1024 || lits.len() > 8 {
            return true;
        }
        lits.byte_strings()
            .any(|l| (0..t.len().max(1)).any(|i| at(i, l)))
    }

    /// The rule's ASCII forms, the pattern compiled on first use; `None` when the pattern or
    /// its `unless` has none (or the pattern does not compile): the Unicode regexes decide then.
    fn compiled_ascii(&self) -> Option<&AsciiCompiled> {
        self.compiled_ascii
            .get_or_init(|| {
                let (code, table) = self.builtin.map_or((None, None), |s| (s.ascii(), s.dfa()));
                let pattern = Ascii::new(&self.pattern, code, table)?;
                let unless = match &self.unless {
                    // built-in rules carry the program when the form exists (`build.rs`)
                    Some(u)
                        if self.builtin.is_some_and(|s| s.unless_ascii().is_some())
                            || crate::prebuilt::ascii_hir(u, None).is_some() =>
                    {
                        Some(OnceLock::new())
                    }
                    Some(_) => return None,
                    None => None,
                };
                Some(Box::new(AsciiCompiled { pattern, unless }))
            })
            .as_deref()
    }

    /// The ASCII form of the rule's `unless`, compiled on first use.
    fn ascii_unless<'a>(&self, cell: &'a OnceLock<Option<Ascii>>) -> Option<&'a Ascii> {
        cell.get_or_init(|| {
            let (code, table) = self
                .builtin
                .map_or((None, None), |s| (s.unless_ascii(), s.unless_dfa()));
            Ascii::new(self.unless.as_deref()?, code, table)
        })
        .as_ref()
    }

    /// Whether the rule fires on `text`. A pattern that failed to compile fires (fail closed);
    /// an `unless` that failed to compile never excuses.
    ///
    /// An ASCII text goes to the rule's ASCII forms (Unicode off), which answer the same on
    /// ASCII texts and cost a fraction to build: a hook process compiles the regexes it needs
    /// for its one command, and the Unicode classes' UTF-8 automata were most of that. The
    /// `unless` is compiled and tried only when the pattern matched (`a && !b` needs `b` only
    /// then); if its ASCII form fails to compile (over the size limit: no built-in rule, a
    /// test compiles them all), the Unicode regexes decide, as when it had none.
    pub fn fires(&self, text: &str) -> bool {
        if text.is_ascii()
            && let Some(a) = self.compiled_ascii()
            && let Some(hit) = a.pattern.is_match(text)
        {
            if !hit {
                return false;
            }
            match &a.unless {
                None => return true,
                Some(cell) => {
                    if let Some(excused) = self.ascii_unless(cell).and_then(|u| u.is_match(text)) {
                        return !excused;
                    }
                }
            }
        }
        self.fires_unicode(text)
    }

    /// [`Rule::fires`] with the Unicode regexes, whatever the text.
    pub fn fires_unicode(&self, text: &str) -> bool {
        let c = self.compiled();
        let hit = c.pattern.as_ref().is_none_or(|r| r.is_match(text));
        let excused = matches!(&c.unless, Some(Some(u)) if u.is_match(text));
        hit && !excused
    }

    /// Compiles the rule's regexes now, reporting failures (used by tests and policy checks).
    pub fn compile_now(&self) -> Result<(), String> {
        compile(&self.pattern).map_err(|e| format!("{}: pattern: {e}", self.id))?;
        if let Some(u) = &self.unless {
            compile(u).map_err(|e| format!("{}: unless: {e}", self.id))?;
        }
        Ok(())
    }
}

/// Errors found while loading rule packs: a broken rule fails at load, never in production.
#[derive(Debug, thiserror::Error)]
pub enum RuleError {
    #[error("{file}: invalid TOML: {source}")]
    Toml {
        file: String,
        #[source]
        source: toml::de::Error,
    },
    #[error("rule {id}: {problem}")]
    Invalid { id: String, problem: String },
    #[error("rule set: {0}")]
    Build(String),
}

/// All compiled rules with their prefilter.
pub struct RuleSet {
    rules: Vec<Rule>,
    /// Keyword index per text kind (indexed by [`Target::index`]).
    keywords: Vec<KeywordIndex>,
    /// Rule indices per text kind.
    kinds: Vec<Vec<usize>>,
}

/// Finds every occurrence of a set of keywords in a text, ASCII case-insensitively, and
/// reports which rules own the keywords found (the same answer as an overlapping Aho-Corasick
/// search, which it replaced because building that automaton dominated a hook's start-up).
///
/// The built-in packs' indexes are built by `build.rs` ([`BUILTIN_KEYWORDS`]) and borrowed.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct KeywordIndex {
    /// Keywords of two bytes or more, sorted by their first two bytes.
    long: Cow<'static, [Keyword]>,
    /// The lowercase bytes of every long keyword, one after the other.
    bytes: Cow<'static, [u8]>,
    /// Bit `(a << 8) | b` is set when some keyword starts with the (lowercase) bytes `a`, `b`.
    pairs: Cow<'static, [u64]>,
    /// For each word of `pairs`, how many bits are set in the words before it: with the bits
    /// below a pair's own in its word, the pair's rank among the pairs present.
    ranks: Cow<'static, [u32]>,
    /// Where each present pair's keywords begin in `long`, by rank, then `long.len()`: a
    /// pair's keywords are `long[starts[rank]..starts[rank + 1]]`, found without a search.
    starts: Cow<'static, [u32]>,
    /// One-byte keywords (lowercase) with their rule.
    single: Cow<'static, [(u8, usize)]>,
    /// Bit `b` is set when `b` is a one-byte keyword.
    single_bytes: [u64; 4],
}

/// The built-in packs' keyword indexes, one per [`Target`] in [`Target::ALL`]'s order, as
/// [`KeywordIndex::new`] would build them over [`BUILTIN_TABLE`] (a test checks).
static BUILTIN_KEYWORDS: [KeywordIndex; 4] = include!(concat!(env!("OUT_DIR"), "/keywords.rs"));

#[derive(Debug, Clone, PartialEq, Eq)]
struct Keyword {
    /// First two bytes, lowercase, as `(a << 8) | b`.
    pair: u16,
    /// Where the keyword's bytes are in [`KeywordIndex::bytes`].
    start: u32,
    len: u32,
    rule: usize,
}

fn pair_of(a: u8, b: u8) -> u16 {
    (u16::from(a.to_ascii_lowercase()) << 8) | u16::from(b.to_ascii_lowercase())
}

impl KeywordIndex {
    /// Indexes `(keyword, rule)` pairs; keywords match ASCII case-insensitively. Empty keywords
    /// are ignored (loading refuses them).
    pub fn new<'k>(keywords: impl IntoIterator<Item = (&'k str, usize)>) -> Self {
        let mut long = Vec::new();
        let mut bytes = Vec::new();
        let mut pairs = vec![0u64; 1 << 10];
        let mut single = Vec::new();
        let mut single_bytes = [0u64; 4];
        for (k, rule) in keywords {
            let k = k.as_bytes();
            match k {
                [] => {}
                [b] => {
                    let b = b.to_ascii_lowercase();
                    single.push((b, rule));
                    single_bytes[usize::from(b >> 6)] |= 1 << (b & 63);
                }
                [a, b, ..] => {
                    let pair = pair_of(*a, *b);
                    pairs[usize::from(pair >> 6)] |= 1 << (pair & 63);
                    let (Ok(start), Ok(len)) = (u32::try_from(bytes.len()), u32::try_from(k.len()))
                    else {
                        // over 4 GiB of keywords: cannot happen with real packs; keep the rule a
                        // candidate for every text rather than lose it
                        single.extend((0..=255u8).map(|b| (b, rule)));
                        single_bytes = [u64::MAX; 4];
                        continue;
                    };
                    bytes.extend(k.iter().map(u8::to_ascii_lowercase));
                    long.push(Keyword {
                        pair,
                        start,
                        len,
                        rule,
                    });
                }
            }
        }
        long.sort_unstable_by_key(|k| (k.pair, k.start));
        let (ranks, starts) = pair_ranks(&pairs, long.iter().map(|k| k.pair));
        KeywordIndex {
            long: Cow::Owned(long),
            bytes: Cow::Owned(bytes),
            pairs: Cow::Owned(pairs),
            ranks: Cow::Owned(ranks),
            starts: Cow::Owned(starts),
            single: Cow::Owned(single),
            single_bytes,
        }
    }

    /// Calls `found(rule)` for every keyword occurrence in `text` (a rule may be reported
    /// more than once).
    pub fn for_each_rule(&self, text: &str, mut found: impl FnMut(usize)) {
        // lower-case the text once (keywords are stored lower-case), on the stack when short
        let mut stack = [0u8; 512];
        let heap: Vec<u8>;
        let t: &[u8] = match stack.get_mut(..text.len()) {
            Some(s) => {
                s.copy_from_slice(text.as_bytes());
                s.make_ascii_lowercase();
                s
            }
            None => {
                heap = text.as_bytes().to_ascii_lowercase();
                &heap
            }
        };
        let single = !self.single.is_empty();
        for i in 0..t.len() {
            if single {
                let b = t[i];
                if self.single_bytes[usize::from(b >> 6)] & (1 << (b & 63)) != 0 {
                    for &(s, rule) in self.single.iter() {
                        if s == b {
                            found(rule);
                        }
                    }
                }
            }
            let Some(&next) = t.get(i + 1) else { break };
            let pair = (u16::from(t[i]) << 8) | u16::from(next);
            let w = usize::from(pair >> 6);
            let bit = 1u64 << (pair & 63);
            let word = self.pairs[w];
            if word & bit == 0 {
                continue;
            }
            let rest = &t[i..];
            let rank = self.ranks[w] as usize + (word & (bit - 1)).count_ones() as usize;
            let (from, to) = (self.starts[rank] as usize, self.starts[rank + 1] as usize);
            for k in &self.long[from..to] {
                let (start, len) = (k.start as usize, k.len as usize);
                let kw = self.bytes.get(start..start + len).unwrap_or_default();
                // the pair matched the first two bytes; keywords are short, so a byte loop
                // beats a memcmp call (which a slice comparison becomes)
                if rest.len() >= len && kw.iter().zip(rest).skip(2).all(|(a, b)| a == b) {
                    found(k.rule);
                }
            }
        }
    }
}

/// [`KeywordIndex::ranks`] and [`KeywordIndex::starts`] for a `pairs` bitmap and the pairs of
/// the keywords sorted by pair (`build.rs` does the same for the built-in indexes).
fn pair_ranks(pairs: &[u64], sorted: impl Iterator<Item = u16>) -> (Vec<u32>, Vec<u32>) {
    let mut ranks = Vec::with_capacity(pairs.len());
    let mut seen = 0u32;
    for w in pairs {
        ranks.push(seen);
        seen += w.count_ones();
    }
    let mut starts = Vec::with_capacity(seen as usize + 1);
    let mut last = None;
    let mut n = 0u32;
    for pair in sorted {
        if last != Some(pair) {
            starts.push(n);
            last = Some(pair);
        }
        n += 1;
    }
    starts.push(n);
    (ranks, starts)
}

impl std::fmt::Debug for RuleSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuleSet")
            .field("rules", &self.rules.len())
            .finish()
    }
}

/// Pack files compiled into the binary, as `(file name, contents)`.
pub const BUILTIN_PACKS: &[(&str, &str)] = &include!(concat!(env!("OUT_DIR"), "/packs.rs"));

impl RuleSet {
    /// Parses pack files and checks every pattern's syntax (regexes compile on first use).
    pub fn from_packs<'a>(
        packs: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<Self, RuleError> {
        let mut drafts = Vec::new();
        for (file, text) in packs {
            let pack: PackFile = toml::from_str(text).map_err(|source| RuleError::Toml {
                file: file.to_string(),
                source,
            })?;
            for spec in pack.rules {
                drafts.push(Draft {
                    id: format!("{}.{}", pack.pack, spec.id),
                    on: spec.on,
                    keywords: Strings::Owned(
                        spec.keywords
                            .iter()
                            .map(|k| k.to_ascii_lowercase())
                            .collect(),
                    ),
                    pattern: Cow::Owned(spec.pattern),
                    builtin: None,
                    unless: spec.unless.map(Cow::Owned),
                    decision: spec.decision,
                    tier: i64::from(spec.tier),
                    severity: spec.severity,
                    message: Cow::Owned(spec.message),
                    remediation: Cow::Owned(spec.remediation),
                    examples: Strings::Owned(spec.examples),
                    counter_examples: Strings::Owned(spec.counter_examples),
                });
            }
        }
        Self::load(drafts, None)
    }

    /// The packs compiled into the binary, pre-parsed by `build.rs`, which also checked what
    /// loading checks and built the keyword indexes. Their patterns are not re-checked here:
    /// the tests compile every one of them, and every hook process would pay.
    pub fn builtin() -> Result<Self, RuleError> {
        let drafts = BUILTIN_TABLE
            .iter()
            .map(|r| Draft {
                id: r.full_id().to_string(),
                on: r.on,
                keywords: Strings::Builtin(r.keywords),
                pattern: Cow::Borrowed(r.pattern()),
                builtin: Some(r),
                unless: r.unless().map(Cow::Borrowed),
                decision: r.decision,
                tier: r.tier,
                severity: r.severity,
                message: Cow::Borrowed(r.message()),
                remediation: Cow::Borrowed(r.remediation()),
                examples: Strings::Builtin(r.examples),
                counter_examples: Strings::Builtin(r.counter_examples),
            })
            .collect();
        Self::load(drafts, Some(&BUILTIN_KEYWORDS))
    }

    /// `prebuilt`: the keyword indexes `build.rs` made for the built-in table, whose rules it
    /// has already checked; `None` for packs read at run time, which are checked here.
    fn load(
        drafts: Vec<Draft>,
        prebuilt: Option<&'static [KeywordIndex; 4]>,
    ) -> Result<Self, RuleError> {
        let check = prebuilt.is_none();
        let mut rules = Vec::with_capacity(drafts.len());
        let mut seen = std::collections::HashSet::new();
        let mut kinds: Vec<Vec<usize>> = vec![Vec::new(); Target::ALL.len()];
        for d in drafts {
            let bad = |problem: &str| RuleError::Invalid {
                id: d.id.clone(),
                problem: problem.to_string(),
            };
            if check {
                if !seen.insert(d.id.clone()) {
                    return Err(bad("duplicate rule id"));
                }
                if d.keywords.is_empty() || d.keywords.iter().any(|k| k.trim().is_empty()) {
                    return Err(bad("needs at least one non-empty keyword"));
                }
                if d.examples.is_empty() {
                    return Err(bad("needs at least one `match` example"));
                }
                if d.message.trim().is_empty() {
                    return Err(bad("needs a message"));
                }
            }
            let tier = u8::try_from(d.tier)
                .map_err(|_| format!("tier must be 0-4, got {}", d.tier))
                .and_then(Tier::try_from)
                .map_err(|e| bad(&e))?;
            if check {
                check_syntax(&d.pattern).map_err(|e| bad(&format!("pattern: {e}")))?;
                if let Some(u) = &d.unless {
                    check_syntax(u).map_err(|e| bad(&format!("unless: {e}")))?;
                }
            }
            kinds[d.on.index()].push(rules.len());
            rules.push(Rule {
                id: d.id,
                on: d.on,
                decision: d.decision,
                tier,
                severity: d.severity,
                message: d.message,
                remediation: d.remediation,
                pattern: d.pattern,
                unless: d.unless,
                builtin: d.builtin,
                compiled: OnceLock::new(),
                compiled_ascii: OnceLock::new(),
                keywords: d.keywords,
                examples: d.examples,
                counter_examples: d.counter_examples,
            });
        }
        let keywords = match prebuilt {
            Some(ix) => ix.to_vec(),
            None => kinds
                .iter()
                .map(|members| {
                    KeywordIndex::new(
                        members
                            .iter()
                            .flat_map(|&i| rules[i].keywords.iter().map(move |k| (k, i))),
                    )
                })
                .collect(),
        };
        Ok(RuleSet {
            rules,
            keywords,
            kinds,
        })
    }

    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// Rules of kind `on` that match `text`. With `prefilter` off every rule of the kind is
    /// tried (used by the test that proves the prefilter hides nothing).
    pub fn matches(&self, on: Target, text: &str, prefilter: bool) -> Vec<&Rule> {
        let fires = |r: &Rule| r.fires(text);
        if !prefilter {
            return self.kinds[on.index()]
                .iter()
                .map(|&i| &self.rules[i])
                .filter(|r| fires(r))
                .collect();
        }
        // the candidates as a bit set (on the stack for up to 1,024 rules): in rule order and
        // without repeats, with no vector to grow, sort and dedup on every command
        const STACK_WORDS: usize = 16;
        let words = self.rules.len().div_ceil(64);
        let mut stack = [0u64; STACK_WORDS];
        let mut heap: Vec<u64>;
        let bits: &mut [u64] = if words <= STACK_WORDS {
            &mut stack[..words]
        } else {
            heap = vec![0; words];
            &mut heap
        };
        self.keywords[on.index()].for_each_rule(text, |r| {
            if let Some(w) = bits.get_mut(r / 64) {
                *w |= 1 << (r % 64);
            }
        });
        let mut out = Vec::new();
        for (w, &word) in bits.iter().enumerate() {
            let mut word = word;
            while word != 0 {
                let i = w * 64 + word.trailing_zeros() as usize;
                word &= word - 1;
                if let Some(r) = self.rules.get(i)
                    && r.may_match(text)
                    && fires(r)
                {
                    out.push(r);
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The rules whose keywords occur in `text`, found the slow and obvious way.
    fn naive(keywords: &[(&str, usize)], text: &str) -> Vec<usize> {
        let lower = text.to_ascii_lowercase();
        let mut out: Vec<usize> = keywords
            .iter()
            .filter(|(k, _)| lower.contains(&k.to_ascii_lowercase()))
            .map(|&(_, r)| r)
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    fn indexed(ix: &KeywordIndex, text: &str) -> Vec<usize> {
        let mut out = Vec::new();
        ix.for_each_rule(text, |r| out.push(r));
        out.sort_unstable();
        out.dedup();
        out
    }

    const KEYWORDS: &[(&str, usize)] = &[
        ("rm", 0),
        ("-rf", 0),
        ("$", 1),
        ("git", 2),
        ("push", 2),
        ("gi", 3),
        ("Base64", 4),
        ("é", 5),
        ("ss", 6),
        ("sss", 7),
        (":", 8),
    ];

    #[test]
    fn finds_what_a_substring_search_finds() {
        let ix = KeywordIndex::new(KEYWORDS.iter().copied());
        for text in [
            "",
            "r",
            "rm",
            "RM -RF /",
            "git push --force",
            "echo $HOME",
            "BASE64 -d",
            "café",
            "ssss",
            "a:b",
            "xgit",
            "g",
        ] {
            assert_eq!(indexed(&ix, text), naive(KEYWORDS, text), "{text:?}");
        }
    }

    #[test]
    fn the_prebuilt_keyword_indexes_are_what_new_builds() {
        let set = crate::Analyser::builtin().unwrap().rules();
        for on in Target::ALL {
            let built = KeywordIndex::new(
                set.kinds[on.index()]
                    .iter()
                    .flat_map(|&i| BUILTIN_TABLE[i].keywords().map(move |k| (k, i))),
            );
            assert_eq!(BUILTIN_KEYWORDS[on.index()], built, "{on:?}");
            assert_eq!(set.keywords[on.index()], built, "{on:?}");
        }
        // and the table's rules are the set's, in order
        for (r, s) in set.rules().iter().zip(BUILTIN_TABLE) {
            assert_eq!(r.id, s.full_id());
        }
        assert_eq!(set.rules().len(), BUILTIN_TABLE.len());
    }

    /// A rule stays small: a hook process makes one per built-in rule at load, and with the
    /// matchers' search caches inline (about 3 KB a rule) that copying cost 160 page faults.
    #[test]
    fn a_rule_is_small() {
        let size = std::mem::size_of::<Rule>();
        assert!(size <= 512, "{size} bytes");
    }

    /// Every span `build.rs` wrote lies in its text on character boundaries, so no accessor
    /// falls back to an empty string.
    #[test]
    fn every_span_of_the_builtin_table_is_in_bounds() {
        let text = |s: Span| BUILTIN_TEXT.get(s.range()).is_some();
        let bytes = |s: Span| BUILTIN_BYTES.get(s.range()).is_some_and(|b| !b.is_empty());
        let list = |l: Spans| BUILTIN_SPANS.get(l.0 as usize..l.1 as usize).is_some();
        for r in BUILTIN_TABLE {
            let id = r.full_id();
            for s in [r.pack, r.id, r.full_id, r.pattern, r.message, r.remediation]
                .into_iter()
                .chain(r.unless)
            {
                assert!(text(s), "{id}: {s:?}");
            }
            for l in [r.keywords, r.examples, r.counter_examples] {
                assert!(list(l), "{id}: {l:?}");
                assert!(l.spans().iter().all(|&s| text(s)), "{id}: {l:?}");
            }
            for s in r.ascii.into_iter().chain(r.unless_ascii) {
                assert!(bytes(s), "{id}: {s:?}");
            }
            if let Some((_, l)) = r.literals {
                assert!(list(l) && l.len() > 0, "{id}: {l:?}");
                assert!(l.spans().iter().all(|&s| bytes(s)), "{id}: {l:?}");
            }
            assert_eq!(id, format!("{}.{}", r.pack(), r.id()));
        }
    }

    /// A rule lacks an ASCII form only when its pattern cannot be written with Unicode off
    /// (`\p{…}`, say); such a rule still works, through its Unicode regex, at full compile cost.
    #[test]
    fn builtin_rules_have_an_ascii_form_where_one_exists() {
        let set = crate::Analyser::builtin().unwrap().rules();
        let mut with = 0;
        for (r, s) in set.rules().iter().zip(BUILTIN_TABLE) {
            let parses = crate::prebuilt::ascii_hir(s.pattern(), None).is_some()
                && s.unless()
                    .is_none_or(|u| crate::prebuilt::ascii_hir(u, None).is_some());
            assert_eq!(r.compiled_ascii().is_some(), parses, "{}", r.id);
            // and a built-in `unless` that has an ASCII form compiles (see `Rule::fires`)
            if let Some(a) = r.compiled_ascii()
                && let Some(cell) = &a.unless
            {
                assert!(r.ascii_unless(cell).is_some(), "{}", r.id);
            }
            assert_eq!(
                s.ascii().is_some(),
                crate::prebuilt::ascii_hir(s.pattern(), None).is_some()
            );
            with += usize::from(parses);
        }
        // all of them today; a few Unicode-only patterns would be fine, most would not
        assert!(
            with * 10 >= BUILTIN_TABLE.len() * 9,
            "{with} of {}",
            BUILTIN_TABLE.len()
        );
    }

    /// Every rule's ASCII examples and counter-examples, whole and split at shell operators.
    fn ascii_example_texts() -> Vec<&'static str> {
        let mut texts: Vec<&str> = Vec::new();
        for r in BUILTIN_TABLE {
            for e in r.examples().chain(r.counter_examples()) {
                texts.push(e);
                texts.extend(e.split(['|', ';', '&', '(', ')', '`', '$']).map(str::trim));
            }
        }
        texts.retain(|t| t.is_ascii());
        texts
    }

    /// Every rule's ASCII form answers as its Unicode regexes on every ASCII example text of
    /// every rule (whole command lines and their words).
    #[test]
    fn ascii_forms_agree_with_unicode_on_the_examples() {
        let set = crate::Analyser::builtin().unwrap().rules();
        let texts = ascii_example_texts();
        assert!(texts.len() > 1000, "{}", texts.len());
        let mut fired = 0;
        for r in set.rules() {
            for t in &texts {
                let u = r.fires_unicode(t);
                assert_eq!(r.fires(t), u, "{} on {t:?}", r.id);
                fired += usize::from(u);
            }
        }
        assert!(fired > 500, "{fired}");
    }

    /// Every built-in pattern and `unless` in its ASCII form, compiled both ways: the
    /// is_match-only [`Matcher`] and the `meta::Regex` it replaced; with the DFA table made
    /// ahead of time, where the pattern has one.
    #[allow(clippy::type_complexity)]
    fn both_engines() -> &'static Vec<(
        &'static str,
        Matcher,
        meta::Regex,
        Option<crate::dfa::Table>,
    )> {
        #[allow(clippy::type_complexity)]
        static ALL: OnceLock<
            Vec<(
                &'static str,
                Matcher,
                meta::Regex,
                Option<crate::dfa::Table>,
            )>,
        > = OnceLock::new();
        ALL.get_or_init(|| {
            let mut all = Vec::new();
            for s in BUILTIN_TABLE {
                for (p, code, table) in [
                    (Some(s.pattern()), s.ascii(), s.dfa()),
                    (s.unless(), s.unless_ascii(), s.unless_dfa()),
                ] {
                    let Some(p) = p else { continue };
                    // a table that is there must be well-formed
                    let table = table.map(|t| {
                        crate::dfa::Table::new(t)
                            .unwrap_or_else(|| panic!("{}: malformed DFA table", s.full_id()))
                    });
                    match (compile_ascii(p, code), compile_ascii_meta(p, code)) {
                        (Some(m), Some(r)) => all.push((s.full_id(), m, r, table)),
                        (None, None) => {}
                        (m, r) => panic!(
                            "{}: matcher {} but meta regex {}",
                            s.full_id(),
                            m.is_some(),
                            r.is_some()
                        ),
                    }
                }
            }
            all
        })
    }

    #[test]
    fn matchers_agree_with_meta_regexes_on_the_examples() {
        let texts = ascii_example_texts();
        let all = both_engines();
        assert!(all.len() > 200, "{}", all.len());
        let mut hits = 0;
        for (id, m, r, table) in all {
            for t in &texts {
                // twice: the second search runs on the states the first one built
                let want = r.is_match(*t);
                assert_eq!(m.is_match(t), want, "{id} on {t:?}");
                assert_eq!(m.is_match(t), want, "{id} on {t:?}, again");
                if let Some(table) = table {
                    assert_eq!(
                        table.is_match(t.as_bytes()),
                        Some(want),
                        "{id} table on {t:?}"
                    );
                }
                hits += usize::from(want);
            }
        }
        assert!(hits > 500, "{hits}");
        // most patterns have a table (the rest are larger than `dfa::tests::MAX_TABLE`)
        let tables = all.iter().filter(|e| e.3.is_some()).count();
        assert!(tables * 4 >= all.len() * 3, "{tables} of {}", all.len());
    }

    /// Made-up command text: the built-in rules' keywords, a few path pieces and printable ASCII.
    fn keyword_text() -> impl Strategy<Value = String> {
        let keywords: Vec<String> = BUILTIN_TABLE
            .iter()
            .flat_map(|r| r.keywords().map(str::to_string))
            .chain(["/".to_string(), " -rf ".to_string(), "~/".to_string()])
            .collect();
        prop::collection::vec(
            prop_oneof![
                prop::sample::select(keywords),
                Just(" ".to_string()),
                "[ -~\t\n\x0b\x0c\r]{0,4}",
            ],
            1..10,
        )
        .prop_map(|pieces| pieces.concat())
    }

    proptest! {
        /// The same on made-up texts built from the rules' keywords and printable ASCII.
        #[test]
        fn matchers_agree_with_meta_regexes_on_any_ascii_text(
            text in keyword_text(),
        ) {
            for (id, m, r, table) in both_engines() {
                let want = r.is_match(&text);
                prop_assert_eq!(m.is_match(&text), want, "{} on {:?}", id, text);
                if let Some(table) = table {
                    prop_assert_eq!(table.is_match(text.as_bytes()), Some(want), "{} table on {:?}", id, text);
                }
            }
        }

        /// The same on made-up texts built from the rules' keywords and printable ASCII.
        #[test]
        fn ascii_forms_agree_with_unicode_on_any_ascii_text(
            text in keyword_text(),
        ) {
            let set = crate::Analyser::builtin()
                .map_err(|e| TestCaseError::fail(e.to_string()))?
                .rules();
            for r in set.rules() {
                prop_assert_eq!(r.fires(&text), r.fires_unicode(&text), "{} on {:?}", r.id, text);
            }
        }
    }

    proptest! {
        #[test]
        fn agrees_with_a_substring_search(text in "[rRmMgGiItTpPsSuUhH$:é -]{0,24}") {
            let ix = KeywordIndex::new(KEYWORDS.iter().copied());
            prop_assert_eq!(indexed(&ix, &text), naive(KEYWORDS, &text));
        }

        /// Keywords and literals together never hide a rule that would fire on the text.
        #[test]
        fn the_prefilter_hides_no_rule_on_any_text(
            pieces in prop::collection::vec(
                prop_oneof![
                    prop::sample::select(
                        BUILTIN_TABLE
                            .iter()
                            .flat_map(|r| r.keywords().map(str::to_string))
                            .chain(["/".to_string(), "-rf".to_string(), "~".to_string()])
                            .collect::<Vec<_>>()
                    ),
                    " ",
                    " -",
                    "\\PC{0,3}",
                ],
                1..8,
            ),
        ) {
            let text = pieces.concat();
            // one shared set, so each regex compiles once across all cases
            let set = crate::Analyser::builtin()
                .map_err(|e| TestCaseError::fail(e.to_string()))?
                .rules();
            for on in Target::ALL {
                let ids = |p: bool| -> Vec<&str> {
                    set.matches(on, &text, p).iter().map(|r| r.id.as_str()).collect()
                };
                prop_assert_eq!(ids(true), ids(false), "{:?}", text);
            }
        }

        #[test]
        fn builtin_keywords_agree_with_a_substring_search(
            pieces in prop::collection::vec(
                prop_oneof![
                    prop::sample::select(
                        BUILTIN_TABLE
                            .iter()
                            .flat_map(|r| r.keywords().map(str::to_string))
                            .collect::<Vec<_>>()
                    ),
                    "\\PC{0,4}",
                ],
                0..8,
            ),
            upper in any::<bool>(),
        ) {
            let mut text = pieces.concat();
            if upper {
                text = text.to_ascii_uppercase();
            }
            let set = crate::Analyser::builtin()
                .map_err(|e| TestCaseError::fail(e.to_string()))?
                .rules();
            for on in Target::ALL {
                let kws: Vec<(&str, usize)> = set.kinds[on.index()]
                    .iter()
                    .flat_map(|&i| set.rules[i].keywords.iter().map(move |k| (k, i)))
                    .collect();
                prop_assert_eq!(indexed(&set.keywords[on.index()], &text), naive(&kws, &text));
            }
        }
    }
}
