//! Package typosquats: `pip install reqeusts`, `npm install expresss`, `cargo add serde_jsno`.
//!
//! A package install names packages that run code on the machine (setup scripts, npm install
//! hooks, build scripts) or in the project. A name that is not a popular package but is one
//! typing slip away from one is how typosquatting attacks are delivered, and how an agent's
//! misspelling installs an attacker's package. The popular names are data, one file per
//! ecosystem under `rules/packages/`; this module finds the package names of an install command
//! and compares each with them.
//!
//! A name is reported when it is not listed and, against a listed name of the same ecosystem:
//! - differs by a swap of two adjacent letters (`reqeusts`), a doubled letter (`expresss`) or an
//!   undoubled one (`urlib3`), both names being at least 5 characters long;
//! - differs by any other single edit (insertion, deletion, substitution) from a listed name of
//!   at least 8 characters, keeping its first letter (`colourama`, `scikit-lern`): on shorter
//!   names one wrong letter is often another real package (`hyper`/`typer`, `serde`/`serve`,
//!   `uvicorn`/`unicorn`);
//! - differs by two edits, both names being at least 12 characters long, keeping the first letter;
//! - is equal once the separators (`-`, `_`, `.`) are removed (`crossenv` for `cross-env`), if
//!   that leaves at least 5 characters (`md-5` and `md5` are both real crates).
//!
//! Go module paths (`go get|install|run MOD[@v]`) are compared segment by segment: a path
//! inside a listed module is that module; otherwise a path with the same number of segments as
//! a listed module that differs from it in one segment (owner or repository) is reported when
//! that segment is a slip for the listed one by the rules above.
//!
//! Never reported: a listed name; names shorter than 4 characters; a name that differs from a
//! listed one only by trailing digits (`boto`/`boto3`, `psycopg`/`psycopg2`: numbered siblings
//! are a common legitimate naming); local paths, archives, URLs, VCS specs, requirement files,
//! scoped npm names (`@scope/name`) and anything holding an expansion.

use std::collections::HashSet;
use std::sync::OnceLock;

/// A package ecosystem with a list of popular names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ecosystem {
    PyPI,
    Npm,
    Crates,
    RubyGems,
    Go,
    /// GitHub repositories (`owner/repo`) cloned or installed from.
    GitHub,
}

impl Ecosystem {
    pub fn label(self) -> &'static str {
        match self {
            Ecosystem::PyPI => "PyPI",
            Ecosystem::Npm => "npm",
            Ecosystem::Crates => "crates.io",
            Ecosystem::RubyGems => "RubyGems",
            Ecosystem::Go => "Go",
            Ecosystem::GitHub => "GitHub",
        }
    }

    fn source(self) -> &'static str {
        match self {
            Ecosystem::PyPI => include_str!("../../../rules/packages/pypi.txt"),
            Ecosystem::Npm => include_str!("../../../rules/packages/npm.txt"),
            Ecosystem::Crates => include_str!("../../../rules/packages/crates.txt"),
            Ecosystem::RubyGems => include_str!("../../../rules/packages/rubygems.txt"),
            Ecosystem::Go => include_str!("../../../rules/packages/go.txt"),
            Ecosystem::GitHub => include_str!("../../../rules/packages/github.txt"),
        }
    }

    /// The comparable form of a name in this ecosystem.
    pub fn normalise(self, name: &str) -> String {
        let lower = name.to_ascii_lowercase();
        match self {
            // PEP 503: runs of `-`, `_`, `.` are one `-`
            Ecosystem::PyPI => {
                let mut out = String::with_capacity(lower.len());
                for c in lower.chars() {
                    if matches!(c, '-' | '_' | '.') {
                        if !out.ends_with('-') {
                            out.push('-');
                        }
                    } else {
                        out.push(c);
                    }
                }
                out
            }
            // crates.io refuses a name that differs from another only by `-` against `_`
            Ecosystem::Crates => lower.replace('_', "-"),
            Ecosystem::Npm | Ecosystem::RubyGems | Ecosystem::Go | Ecosystem::GitHub => lower,
        }
    }
}

/// The popular names of one ecosystem, normalised.
pub struct Popular {
    eco: Ecosystem,
    /// The names, normalised.
    pub names: Vec<String>,
    /// The names as listed (as their registry spells them), in the same order.
    pub listed: Vec<String>,
    set: HashSet<String>,
}

impl Popular {
    pub fn parse(eco: Ecosystem, text: &str) -> Popular {
        let listed: Vec<String> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(str::to_string)
            .collect();
        let names: Vec<String> = listed.iter().map(|l| eco.normalise(l)).collect();
        let set = names.iter().cloned().collect();
        Popular {
            eco,
            names,
            listed,
            set,
        }
    }

    pub fn contains(&self, normalised: &str) -> bool {
        self.set.contains(normalised)
    }

    /// The listed name (as listed) `candidate` (normalised, not listed) is a likely slip for.
    pub fn lookalike(&self, candidate: &str) -> Option<&str> {
        if candidate.len() < 4 || self.contains(candidate) {
            return None;
        }
        if self.eco == Ecosystem::GitHub {
            return self.github_lookalike(candidate);
        }
        // a Go package path inside a listed module (`golang.org/x/tools/cmd/goimports`) is
        // that module; otherwise each module is compared with as many leading path segments
        if self.eco == Ecosystem::Go
            && self.names.iter().any(|m| {
                candidate
                    .strip_prefix(m.as_str())
                    .is_some_and(|r| r.starts_with('/'))
            })
        {
            return None;
        }
        let bare = strip_separators(candidate);
        for (p, shown) in self.names.iter().zip(&self.listed) {
            let candidate = if self.eco == Ecosystem::Go {
                leading_segments(candidate, p.matches('/').count() + 1)
            } else {
                candidate
            };
            if candidate == p {
                continue;
            }
            if p.len().abs_diff(candidate.len()) > 2 {
                continue;
            }
            if only_trailing_digits_differ(p, candidate) {
                continue;
            }
            if self.eco == Ecosystem::Go {
                // module paths differ in one segment (owner or repository), judged by itself
                if go_slip(p, candidate) {
                    return Some(shown);
                }
                continue;
            }
            if (bare.len() >= 5 && strip_separators(p) == bare)
                || slip(p.as_bytes(), candidate.as_bytes())
            {
                return Some(shown);
            }
        }
        None
    }
}

impl Popular {
    /// A GitHub `owner/repo` (normalised, not listed) that names a listed repository under an
    /// owner one slip away from the listed owner. A listed owner is a real organisation: its
    /// other repositories are its own, never look-alikes; and a repository of a listed name
    /// under an unrelated owner is a fork. Owners are compared with the package slip rules, or
    /// with any one edit (keeping the first letter) from an owner of at least 4 characters when
    /// the repository name is exactly the listed one.
    fn github_lookalike(&self, candidate: &str) -> Option<&str> {
        let (co, cr) = candidate.split_once('/')?;
        if self
            .names
            .iter()
            .any(|n| n.split_once('/').is_some_and(|(o, _)| o == co))
        {
            return None;
        }
        for (p, shown) in self.names.iter().zip(&self.listed) {
            let Some((po, pr)) = p.split_once('/') else {
                continue;
            };
            if po.len().abs_diff(co.len()) > 2 || only_trailing_digits_differ(po, co) {
                continue;
            }
            let bare = strip_separators(co);
            let owner_slip = (bare.len() >= 5 && strip_separators(po) == bare)
                || slip(po.as_bytes(), co.as_bytes());
            let same_repo = cr == pr;
            let owner_edit = same_repo
                && po.len() >= 4
                && po.as_bytes()[0] == co.as_bytes()[0]
                && osa_distance(po.as_bytes(), co.as_bytes(), 1) == 1;
            let repo_like = same_repo
                || (cr.len() >= 5 && strip_separators(cr) == strip_separators(pr))
                || slip(pr.as_bytes(), cr.as_bytes());
            if (owner_slip && repo_like) || owner_edit {
                return Some(shown);
            }
        }
        None
    }
}

/// Whether `c` reads as `p` typed with a slip (see the module documentation for the limits).
fn slip(p: &[u8], c: &[u8]) -> bool {
    let short = p.len().min(c.len());
    if short < 5 {
        return false;
    }
    match osa_distance(p, c, 2) {
        // swapped neighbours and doubled or undoubled letters are typing slips, rarely a
        // different name; any other single edit only on longer names that keep their first
        // letter (`hyper`/`typer`, `uvicorn`/`unicorn`, `serde`/`serve` are real, distinct names)
        1 => swapped(p, c) || doubled(p, c) || doubled(c, p) || (p.len() >= 8 && p[0] == c[0]),
        2 => short >= 12 && p[0] == c[0],
        _ => false,
    }
}

/// `c` is `p` with two adjacent letters swapped.
fn swapped(p: &[u8], c: &[u8]) -> bool {
    if p.len() != c.len() {
        return false;
    }
    let diff: Vec<usize> = (0..p.len()).filter(|&i| p[i] != c[i]).collect();
    diff.len() == 2
        && diff[1] == diff[0] + 1
        && p[diff[0]] == c[diff[1]]
        && p[diff[1]] == c[diff[0]]
}

/// `long` is `short` with one letter doubled (`expresss`, `urllib3` against `urlib3`).
fn doubled(short: &[u8], long: &[u8]) -> bool {
    if long.len() != short.len() + 1 {
        return false;
    }
    let i = (0..short.len())
        .find(|&i| short[i] != long[i])
        .unwrap_or(short.len());
    // the extra letter sits at `i` and repeats its neighbour
    long[i + 1..] == short[i..]
        && ((i > 0 && long[i] == long[i - 1]) || long.get(i + 1) == Some(&long[i]))
}

/// Two Go module paths with the same number of segments that differ in exactly one segment,
/// where that segment of `c` is a slip for the one of `p` (or differs only in separators).
fn go_slip(p: &str, c: &str) -> bool {
    let (ps, cs): (Vec<&str>, Vec<&str>) = (p.split('/').collect(), c.split('/').collect());
    if ps.len() != cs.len() {
        return false;
    }
    let mut diff = ps.iter().zip(&cs).filter(|(a, b)| a != b);
    match (diff.next(), diff.next()) {
        (Some((a, b)), None) => {
            let bare = strip_separators(b);
            !only_trailing_digits_differ(a, b)
                && ((bare.len() >= 5 && strip_separators(a) == bare)
                    || slip(a.as_bytes(), b.as_bytes()))
        }
        _ => false,
    }
}

/// The first `n` `/`-separated segments of `path`.
fn leading_segments(path: &str, n: usize) -> &str {
    match path.match_indices('/').nth(n.saturating_sub(1)) {
        Some((at, _)) => &path[..at],
        None => path,
    }
}

fn strip_separators(s: &str) -> String {
    s.chars()
        .filter(|c| !matches!(c, '-' | '_' | '.'))
        .collect()
}

fn only_trailing_digits_differ(a: &str, b: &str) -> bool {
    let sa = a.trim_end_matches(|c: char| c.is_ascii_digit());
    let sb = b.trim_end_matches(|c: char| c.is_ascii_digit());
    sa == sb
}

/// Optimal-string-alignment distance (Levenshtein plus adjacent transpositions), or
/// `limit + 1` once it is certain to exceed `limit`.
pub fn osa_distance(a: &[u8], b: &[u8], limit: usize) -> usize {
    if a.len().abs_diff(b.len()) > limit {
        return limit + 1;
    }
    let n = b.len();
    let mut prev2: Vec<usize> = vec![0; n + 1];
    let mut prev: Vec<usize> = (0..=n).collect();
    let mut cur: Vec<usize> = vec![0; n + 1];
    for i in 1..=a.len() {
        cur[0] = i;
        let mut row_min = cur[0];
        for j in 1..=n {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(prev2[j - 2] + 1);
            }
            cur[j] = v;
            row_min = row_min.min(v);
        }
        if row_min > limit {
            return limit + 1;
        }
        std::mem::swap(&mut prev2, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[n].min(limit + 1)
}

pub fn popular(eco: Ecosystem) -> &'static Popular {
    static LISTS: [OnceLock<Popular>; 6] = [
        OnceLock::new(),
        OnceLock::new(),
        OnceLock::new(),
        OnceLock::new(),
        OnceLock::new(),
        OnceLock::new(),
    ];
    let i = match eco {
        Ecosystem::PyPI => 0,
        Ecosystem::Npm => 1,
        Ecosystem::Crates => 2,
        Ecosystem::RubyGems => 3,
        Ecosystem::Go => 4,
        Ecosystem::GitHub => 5,
    };
    LISTS[i].get_or_init(|| Popular::parse(eco, eco.source()))
}

/// One package name of an install command that looks like a slip for a popular one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suspect {
    pub ecosystem: Ecosystem,
    /// The name as typed (without version or extras).
    pub name: String,
    /// The popular name it resembles, as its registry spells it.
    pub like: String,
}

/// What an install command installs: the ecosystem, the index of its first package operand,
/// the options that take a separate value, and whether only the first operand is a package
/// (`npx PKG ARGS…`).
struct Install {
    eco: Ecosystem,
    from: usize,
    with_value: &'static [&'static str],
    first_only: bool,
}

const PIP_VALUE: &[&str] = &[
    "-r",
    "--requirement",
    "-c",
    "--constraint",
    "-e",
    "--editable",
    "-i",
    "--index-url",
    "--extra-index-url",
    "-f",
    "--find-links",
    "-t",
    "--target",
    "--prefix",
    "--root",
    "--src",
    "--platform",
    "--python-version",
    "--implementation",
    "--abi",
    "--upgrade-strategy",
    "--progress-bar",
    "--trusted-host",
    "--proxy",
    "--log",
    "--cache-dir",
    "--python",
    "-C",
    "--config-settings",
    "--global-option",
    "--report",
    "--timeout",
    "--retries",
    "--exists-action",
    "--cert",
    "--client-cert",
    "--group",
    "-G",
    "--optional",
    "--source",
    "--index",
    "--default-index",
    "-p",
    "--package",
    "--with",
    "--from",
    "--spec",
    "--extra",
    "--dev-group",
    "--directory",
    "--project",
    "--suffix",
    "--pip-args",
];

const NPM_VALUE: &[&str] = &[
    "--registry",
    "--prefix",
    "--save-prefix",
    "--tag",
    "-w",
    "--workspace",
    "--omit",
    "--include",
    "--cache",
    "--userconfig",
    "--cwd",
    "-C",
    "--dir",
    "--filter",
    "-F",
    "--network-timeout",
    "--modules-folder",
    "--call",
    "-c",
    "--package",
    "-p",
    "--loglevel",
];

const CARGO_VALUE: &[&str] = &[
    "--version",
    "--vers",
    "--git",
    "--branch",
    "--tag",
    "--rev",
    "--path",
    "--root",
    "--registry",
    "--index",
    "-F",
    "--features",
    "--bin",
    "--example",
    "--target",
    "--target-dir",
    "-j",
    "--jobs",
    "--rename",
    "-p",
    "--package",
    "--manifest-path",
    "--profile",
    "--config",
    "-Z",
    "--color",
];

const GEM_VALUE: &[&str] = &[
    "-v",
    "--version",
    "-i",
    "--install-dir",
    "-s",
    "--source",
    "-n",
    "--bindir",
    "--platform",
    "-g",
    "--file",
    "--group",
    "--path",
    "--git",
    "--branch",
    "--ref",
    "--glob",
];

const GO_VALUE: &[&str] = &[
    "-C",
    "-o",
    "-p",
    "-tags",
    "-ldflags",
    "-gcflags",
    "-asmflags",
    "-mod",
    "-modfile",
    "-overlay",
    "-pkgdir",
    "-exec",
    "-toolexec",
    "-pgo",
    "-buildmode",
    "-compiler",
    "-installsuffix",
];

/// Index of the first word after `from` that is not an option (skipping option values).
fn first_operand(argv: &[String], from: usize, with_value: &[&str]) -> usize {
    let mut i = from;
    while i < argv.len() {
        let a = argv[i].as_str();
        if a == "--" {
            return i + 1;
        }
        if !a.starts_with('-') {
            return i;
        }
        i += if with_value.contains(&a) { 2 } else { 1 };
    }
    i
}

fn is_word(argv: &[String], i: usize, words: &[&str]) -> bool {
    argv.get(i).is_some_and(|a| words.contains(&a.as_str()))
}

fn is_pip(name: &str) -> bool {
    name.strip_prefix("pip")
        .is_some_and(|rest| rest.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

fn install_of(name: &str, argv: &[String]) -> Option<Install> {
    let sub = |from: usize, with_value| first_operand(argv, from, with_value);
    let pypi = |from: usize| Install {
        eco: Ecosystem::PyPI,
        from,
        with_value: PIP_VALUE,
        first_only: false,
    };
    let npm = |from: usize, first_only| Install {
        eco: Ecosystem::Npm,
        from,
        with_value: NPM_VALUE,
        first_only,
    };
    if is_pip(name) {
        let s = sub(1, PIP_VALUE);
        return is_word(argv, s, &["install", "download"]).then(|| pypi(s + 1));
    }
    if (name.starts_with("python") || name.starts_with("pypy"))
        && crate::unwrap::lang_of(name) == Some(crate::unwrap::Lang::Python)
    {
        // `python -m pip install …`
        let m = argv.iter().position(|a| a == "-m")?;
        if !argv.get(m + 1).is_some_and(|p| is_pip(p)) {
            return None;
        }
        let s = sub(m + 2, PIP_VALUE);
        return is_word(argv, s, &["install", "download"]).then(|| pypi(s + 1));
    }
    match name {
        "uv" => {
            let s = sub(1, PIP_VALUE);
            match argv.get(s).map(String::as_str) {
                Some("pip") => {
                    let t = sub(s + 1, PIP_VALUE);
                    is_word(argv, t, &["install"]).then(|| pypi(t + 1))
                }
                Some("add") => Some(pypi(s + 1)),
                Some("tool") => {
                    let t = sub(s + 1, PIP_VALUE);
                    if is_word(argv, t, &["install"]) {
                        Some(pypi(t + 1))
                    } else if is_word(argv, t, &["run"]) {
                        Some(Install {
                            first_only: true,
                            ..pypi(t + 1)
                        })
                    } else {
                        None
                    }
                }
                _ => None,
            }
        }
        "uvx" => Some(Install {
            first_only: true,
            ..pypi(1)
        }),
        "pipx" => {
            let s = sub(1, PIP_VALUE);
            match argv.get(s).map(String::as_str) {
                Some("install" | "inject") => Some(pypi(s + 1)),
                Some("run") => Some(Install {
                    first_only: true,
                    ..pypi(s + 1)
                }),
                _ => None,
            }
        }
        "poetry" | "pdm" | "rye" => {
            let s = sub(1, PIP_VALUE);
            is_word(argv, s, &["add"]).then(|| pypi(s + 1))
        }
        "pipenv" => {
            let s = sub(1, PIP_VALUE);
            is_word(argv, s, &["install"]).then(|| pypi(s + 1))
        }
        "npm" => {
            let s = sub(1, NPM_VALUE);
            if is_word(
                argv,
                s,
                &[
                    "install", "i", "in", "ins", "inst", "insta", "instal", "isnt", "isnta",
                    "isntal", "isntall", "add",
                ],
            ) {
                Some(npm(s + 1, false))
            } else if is_word(argv, s, &["exec", "x"]) {
                Some(npm(s + 1, true))
            } else {
                None
            }
        }
        "npx" | "bunx" => Some(npm(1, true)),
        "yarn" | "pnpm" | "bun" => {
            let s = sub(1, NPM_VALUE);
            let mut verb = argv.get(s).map(String::as_str);
            let mut at = s;
            if verb == Some("global") {
                at = sub(s + 1, NPM_VALUE);
                verb = argv.get(at).map(String::as_str);
            }
            match (name, verb) {
                (_, Some("add")) => Some(npm(at + 1, false)),
                ("pnpm" | "bun", Some("install" | "i")) => Some(npm(at + 1, false)),
                ("bun", Some("a")) => Some(npm(at + 1, false)),
                ("yarn" | "pnpm", Some("dlx")) => Some(npm(at + 1, true)),
                _ => None,
            }
        }
        "cargo" => {
            let s = sub(1, CARGO_VALUE);
            if !is_word(argv, s, &["add", "install"]) {
                return None;
            }
            // `--git URL NAME` and `--path DIR` name a crate of that source, not of crates.io
            if argv[s..].iter().any(|a| {
                matches!(a.as_str(), "--git" | "--path" | "--registry" | "--index")
                    || a.starts_with("--git=")
                    || a.starts_with("--path=")
                    || a.starts_with("--registry=")
                    || a.starts_with("--index=")
            }) {
                return None;
            }
            Some(Install {
                eco: Ecosystem::Crates,
                from: s + 1,
                with_value: CARGO_VALUE,
                first_only: false,
            })
        }
        // `go get MOD[@v]`, `go install MOD@v`, `go run MOD@v` (runs the module's main package)
        "go" => {
            let s = sub(1, GO_VALUE);
            let verb = argv.get(s).map(String::as_str);
            matches!(verb, Some("get" | "install" | "run")).then(|| Install {
                eco: Ecosystem::Go,
                from: s + 1,
                with_value: GO_VALUE,
                first_only: verb == Some("run"),
            })
        }
        "gem" | "bundle" => {
            let s = sub(1, GEM_VALUE);
            let verbs: &[&str] = if name == "gem" {
                &["install", "i"]
            } else {
                &["add"]
            };
            is_word(argv, s, verbs).then(|| Install {
                eco: Ecosystem::RubyGems,
                from: s + 1,
                with_value: GEM_VALUE,
                first_only: false,
            })
        }
        _ => None,
    }
}

/// The package name a spec names, or `None` for what is not a registry name (paths, URLs,
/// archives, VCS specs, scoped npm names, expansions).
fn spec_name(eco: Ecosystem, spec: &str) -> Option<String> {
    if eco == Ecosystem::Go {
        // a module path starts with a domain (`github.com/…`); `.`, `./cmd/x`, `main.go` and
        // `std` packages are not fetched
        let path = spec.split('@').next().unwrap_or("");
        let first = path.split('/').next().unwrap_or("");
        let ok = first.contains('.')
            && path.contains('/')
            && !path.ends_with(".go")
            && !spec.contains("://")
            && path
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/' | '~'));
        return ok.then(|| path.to_string());
    }
    if spec.is_empty()
        || spec.contains("://")
        || spec.starts_with(['.', '/', '~', '$', '-'])
        || spec.contains(['/', '\\', '$', '`', '*', '?', '{', '}'])
        || spec.starts_with("git+")
        || spec.starts_with("file:")
    {
        return None;
    }
    let lower = spec.to_ascii_lowercase();
    if [
        ".whl", ".tar.gz", ".tgz", ".zip", ".gem", ".crate", ".tar.bz2", ".egg",
    ]
    .iter()
    .any(|x| lower.ends_with(x))
    {
        return None;
    }
    let name = match eco {
        Ecosystem::PyPI => spec
            .split(['[', '<', '>', '=', '!', '~', ';', '@', ' ', ','])
            .next()
            .unwrap_or(""),
        Ecosystem::Npm => {
            if spec.starts_with('@') {
                return None;
            }
            let (name, rest) = spec.split_once('@').unwrap_or((spec, ""));
            // `alias@npm:real@1.0` installs `real`
            if let Some(real) = rest.strip_prefix("npm:") {
                return spec_name(eco, real);
            }
            if rest.contains(':') {
                return None;
            }
            name
        }
        Ecosystem::Crates => spec.split('@').next().unwrap_or(""),
        Ecosystem::RubyGems => spec.split(':').next().unwrap_or(""),
        // handled above, and by `github_suspects`
        Ecosystem::Go | Ecosystem::GitHub => return None,
    };
    let name = name.trim();
    let ok = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric());
    ok.then(|| name.to_string())
}

/// Package names of an install command (`name` is the program's name) that look like slips
/// for popular packages.
pub fn suspects(name: &str, argv: &[String]) -> Vec<Suspect> {
    // every command passes here: leave at once unless the program is a package manager
    if argv.len() < 2
        || !matches!(
            name.as_bytes().first(),
            Some(b'p' | b'u' | b'n' | b'y' | b'b' | b'c' | b'g' | b'r')
        )
    {
        return Vec::new();
    }
    let Some(inst) = install_of(name, argv) else {
        return Vec::new();
    };
    let list = popular(inst.eco);
    let mut out = Vec::new();
    let mut i = inst.from;
    let mut options_end = false;
    while i < argv.len() {
        let a = argv[i].as_str();
        if !options_end && a == "--" {
            options_end = true;
            i += 1;
            continue;
        }
        if !options_end && a.starts_with('-') {
            i += if inst.with_value.contains(&a) { 2 } else { 1 };
            continue;
        }
        if let Some(pkg) = spec_name(inst.eco, a) {
            let norm = inst.eco.normalise(&pkg);
            if let Some(like) = list.lookalike(&norm) {
                out.push(Suspect {
                    ecosystem: inst.eco,
                    name: pkg,
                    like: like.to_string(),
                });
            }
        }
        if inst.first_only {
            break;
        }
        i += 1;
    }
    out
}

/// The GitHub `owner/repo` a word names, lower case and without `.git`: a URL or scp-style
/// address on github.com (`https://github.com/o/r`, `git@github.com:o/r.git`,
/// `git+https://github.com/o/r@v1#egg=x`) or npm's `github:o/r` (also after an alias,
/// `x@github:o/r`).
fn github_repo(word: &str) -> Option<String> {
    let lower = word.to_ascii_lowercase();
    let rest = if let Some(at) = lower.find("github.com") {
        // the host itself, not `notgithub.com`
        if at > 0 && !matches!(lower.as_bytes()[at - 1], b'/' | b'@' | b'.') {
            return None;
        }
        let r = &lower[at + "github.com".len()..];
        r.strip_prefix('/').or_else(|| r.strip_prefix(':'))?
    } else {
        let at = lower.find("github:")?;
        if at > 0 && lower.as_bytes()[at - 1] != b'@' {
            return None;
        }
        &lower[at + "github:".len()..]
    };
    repo_path(rest)
}

/// `owner/repo` at the start of `rest` (what follows is a path, ref or fragment).
fn repo_path(rest: &str) -> Option<String> {
    let mut parts = rest.splitn(2, '/');
    let owner = parts.next()?;
    let repo = parts.next()?.split(['/', '#', '@', '?']).next()?;
    let repo = repo.strip_suffix(".git").unwrap_or(repo);
    let ok = !owner.is_empty()
        && owner.len() <= 39
        && owner.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        && !repo.is_empty()
        && repo
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    ok.then(|| format!("{owner}/{repo}"))
}

/// The GitHub repositories a command clones or installs from that look like a popular one
/// under a look-alike owner: `git clone https://github.com/facebok/react`, `pip install
/// git+https://github.com/…`, `npm install github:o/r` or npm's bare `o/r`, `gh repo clone o/r`,
/// `cargo install --git URL`.
pub fn github_suspects(name: &str, argv: &[String]) -> Vec<Suspect> {
    let fetcher = matches!(
        name,
        "git"
            | "gh"
            | "npm"
            | "npx"
            | "yarn"
            | "pnpm"
            | "bun"
            | "bunx"
            | "cargo"
            | "uv"
            | "uvx"
            | "pipx"
            | "poetry"
            | "pdm"
            | "pipenv"
            | "rye"
    ) || is_pip(name)
        || ((name.starts_with("python") || name.starts_with("pypy"))
            && argv.iter().any(|a| is_pip(a)));
    if !fetcher || argv.len() < 2 {
        return Vec::new();
    }
    // npm-style installs read a bare `owner/repo` as a GitHub repository; `gh repo clone`
    // takes one
    let shorthand_from = match name {
        "gh" if is_word(argv, 1, &["repo"]) && is_word(argv, 2, &["clone", "fork"]) => Some(3),
        _ => install_of(name, argv)
            .filter(|i| i.eco == Ecosystem::Npm)
            .map(|i| i.from),
    };
    let list = popular(Ecosystem::GitHub);
    let mut out = Vec::new();
    for (i, a) in argv.iter().enumerate().skip(1) {
        let repo = github_repo(a).or_else(|| {
            shorthand_from
                .filter(|&f| {
                    i >= f
                        && !a.starts_with(['-', '.', '@', '/', '~'])
                        && !a.contains(':')
                        && a.matches('/').count() == 1
                })
                .and_then(|_| repo_path(&a.to_ascii_lowercase()))
        });
        let Some(repo) = repo else { continue };
        if let Some(like) = list.lookalike(&repo) {
            out.push(Suspect {
                ecosystem: Ecosystem::GitHub,
                name: repo,
                like: like.to_string(),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [Ecosystem; 5] = [
        Ecosystem::PyPI,
        Ecosystem::Npm,
        Ecosystem::Crates,
        Ecosystem::RubyGems,
        Ecosystem::Go,
    ];

    #[test]
    fn distance() {
        assert_eq!(osa_distance(b"requests", b"reqeusts", 2), 1);
        assert_eq!(osa_distance(b"express", b"expresss", 2), 1);
        assert_eq!(osa_distance(b"numpy", b"nunpy", 2), 1);
        assert_eq!(osa_distance(b"abc", b"abc", 2), 0);
        assert_eq!(osa_distance(b"css-loader", b"sass-loader", 2), 2);
        assert_eq!(osa_distance(b"kitten", b"sitting", 1), 2);
        assert_eq!(osa_distance(b"a", b"abcd", 1), 2);
    }

    #[test]
    fn lists_are_normalised_and_without_duplicates() {
        for eco in ALL {
            let p = popular(eco);
            assert!(p.names.len() >= 40, "{eco:?} list too short");
            let mut seen = HashSet::new();
            for (n, shown) in p.names.iter().zip(&p.listed) {
                assert!(seen.insert(n.clone()), "{eco:?}: {n} listed twice");
                assert!(
                    shown.chars().all(|c| c.is_ascii_lowercase()
                        || c.is_ascii_digit()
                        || "-_./".contains(c)),
                    "{eco:?}: {shown} is not a registry name in lower case"
                );
            }
        }
    }

    /// Each popular name, taken off its list, must not look like a slip for another one: the
    /// thresholds leave real, distinct package names alone.
    #[test]
    fn popular_names_do_not_flag_each_other() {
        let mut clashes = Vec::new();
        for eco in ALL {
            let full = popular(eco);
            for (i, n) in full.names.iter().enumerate() {
                let mut others = full.names.clone();
                others.remove(i);
                let without = Popular::parse(eco, &others.join("\n"));
                if let Some(like) = without.lookalike(n) {
                    clashes.push(format!("{eco:?}: {n} ~ {like}"));
                }
            }
        }
        // Known real pairs one slip apart; both are listed, so neither is ever reported. They
        // are the price of catching a digit dropped or added inside a name (`python3-dateutil`
        // was a real typosquat of `python-dateutil`) and a letter dropped from a long name.
        let known = [
            "PyPI: psycopg-binary ~ psycopg2-binary",
            "PyPI: psycopg2-binary ~ psycopg-binary",
            "Crates: serde-yaml ~ serde-yml",
            "Crates: serde-yml ~ serde-yaml",
            "PyPI: aiofile ~ aiofiles",
            "PyPI: pyaml ~ pyyaml",
            "PyPI: pyyaml ~ pyaml",
        ];
        clashes.retain(|c| !known.contains(&c.as_str()));
        assert!(clashes.is_empty(), "{clashes:#?}");
    }

    /// The GitHub list: normalised, no duplicates, and each repository, taken off the list,
    /// does not look like another one (leave-one-out, as for the package lists). A listed
    /// owner with several repositories stays listed when one is taken off, so this checks
    /// owners against each other.
    #[test]
    fn github_repositories_do_not_flag_each_other() {
        let full = popular(Ecosystem::GitHub);
        assert!(full.names.len() >= 100);
        let mut seen = HashSet::new();
        for n in &full.names {
            assert!(seen.insert(n.clone()), "{n} listed twice");
            assert_eq!(
                github_repo(&format!("github:{n}")).as_deref(),
                Some(n.as_str())
            );
        }
        let mut clashes = Vec::new();
        for (i, n) in full.names.iter().enumerate() {
            let mut others = full.names.clone();
            others.remove(i);
            let without = Popular::parse(Ecosystem::GitHub, &others.join("\n"));
            if let Some(like) = without.lookalike(n) {
                clashes.push(format!("{n} ~ {like}"));
            }
        }
        assert!(clashes.is_empty(), "{clashes:#?}");
    }

    #[test]
    fn github_addresses() {
        for (word, repo) in [
            (
                "https://github.com/Facebook/React.git",
                Some("facebook/react"),
            ),
            ("git@github.com:o/r.git", Some("o/r")),
            ("git+https://github.com/o/r@v1.0#egg=r", Some("o/r")),
            ("https://github.com/o/r/archive/main.zip", Some("o/r")),
            ("github:o/r#main", Some("o/r")),
            ("alias@github:o/r", Some("o/r")),
            ("https://notgithub.com/o/r", None),
            ("https://github.com/o", None),
            ("mygithub:o/r", None),
        ] {
            assert_eq!(github_repo(word).as_deref(), repo, "{word}");
        }
    }

    /// Names of one ecosystem checked against another's list: real names from elsewhere must
    /// not flag either (a wider sample of legitimate names than one list).
    #[test]
    fn names_of_other_ecosystems_do_not_flag() {
        let mut clashes = Vec::new();
        for eco in ALL {
            for other in ALL {
                if other == eco {
                    continue;
                }
                for n in &popular(other).names {
                    let norm = eco.normalise(n);
                    if let Some(like) = popular(eco).lookalike(&norm) {
                        clashes.push(format!("{other:?} {n} ~ {eco:?} {like}"));
                    }
                }
            }
        }
        // deliberate: `pip install request` is a known typosquat of `requests` on PyPI, where
        // no popular `request` exists (npm's `request` is listed there, so npm is unaffected);
        // Ruby's `factory_bot` installed with pip is a slip for Python's `factory-boy`
        assert_eq!(
            clashes,
            [
                "Npm request ~ PyPI requests",
                "RubyGems factory_bot ~ PyPI factory-boy"
            ],
            "{clashes:#?}"
        );
    }
}
