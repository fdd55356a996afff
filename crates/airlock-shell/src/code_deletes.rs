//! The paths inline interpreter code deletes (`shutil.rmtree('build')`, `fs.rmSync('dist', …)`,
//! `FileUtils.rm_rf("tmp/cache")`, `remove_tree("target")`), read from the delete calls' literal
//! arguments, so the walker can judge them as `rm -rf PATH…` with the same regenerable and
//! sensitive path rules as rm's operands. A call whose path is not plain literals (a variable,
//! `os.path.expanduser('~')`, a concatenation, an interpolated string) leaves the code
//! unresolved, and the caller keeps asking for it as code that deletes files.

use crate::inline::DELETE;

/// What the delete calls in some code remove.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Deletes {
    /// The literal paths the calls name, in order, without repeats.
    pub paths: Vec<String>,
    /// Some delete call's target could not be read as literals.
    pub unresolved: bool,
}

/// Reads every occurrence of a delete API name in `code` as a call and collects its literal
/// path arguments. Bounded: at most 32 calls and 32 paths are read; beyond that the code is
/// unresolved.
pub fn deleted_paths(code: &str) -> Deletes {
    let mut out = Deletes::default();
    let mut calls = 0usize;
    for needle in DELETE {
        for (at, _) in code.match_indices(needle) {
            calls += 1;
            if calls > 32 || out.paths.len() > 32 {
                out.unresolved = true;
                return out;
            }
            match call_paths(needle, &code[at + needle.len()..]) {
                Some(paths) => {
                    for p in paths {
                        if !out.paths.contains(&p) {
                            out.paths.push(p);
                        }
                    }
                }
                None => out.unresolved = true,
            }
        }
    }
    out
}

/// The paths of one call, given the text right after the API name: the rest of the name
/// (`rm` + `_rf`, `fs.rm` + `Sync`), then `(ARGS)` or, as Perl and Ruby allow, ` ARGS`.
/// `None` when the arguments are not one or more plain literals (optionally in `[…]`),
/// followed only by options.
fn call_paths(needle: &str, after: &str) -> Option<Vec<String>> {
    if needle.ends_with('(') {
        return literal_list(after);
    }
    let rest = after.trim_start_matches(|c: char| c.is_ascii_alphanumeric() || c == '_');
    if let Some(args) = rest.strip_prefix('(') {
        literal_list(args)
    } else if rest.starts_with(' ') && rest.trim_start().starts_with(['"', '\'', '[']) {
        literal_list(rest)
    } else {
        None
    }
}

/// One or more literals separated by commas, optionally inside `[…]`, then the end of the
/// arguments or options that cannot name a path.
fn literal_list(args: &str) -> Option<Vec<String>> {
    let mut s = args.trim_start();
    let bracketed = s.starts_with('[');
    if bracketed {
        s = s[1..].trim_start();
    }
    let mut paths = Vec::new();
    loop {
        let (lit, rest) = literal(s)?;
        paths.push(lit);
        s = rest.trim_start();
        if bracketed && let Some(r) = s.strip_prefix(']') {
            s = r.trim_start();
            return ends_call(s).then_some(paths);
        }
        match s.strip_prefix(',') {
            Some(r) if r.trim_start().starts_with(['"', '\'']) => s = r.trim_start(),
            Some(r) if !bracketed => return harmless_options(r.trim_start()).then_some(paths),
            Some(_) => return None,
            None if !bracketed => return ends_call(s).then_some(paths),
            None => return None,
        }
    }
}

/// A plain quoted literal at the start of `s`, and the text after it. Only path characters
/// are taken (letters, digits, `._-/~+=:` and space), so nothing in it can stand for
/// something else at run time (interpolation, escapes, globs) or be read as shell syntax
/// when the path is judged as an `rm` operand; a leading `-` would read as an option.
fn literal(s: &str) -> Option<(String, &str)> {
    let q = s.chars().next().filter(|c| matches!(c, '"' | '\''))?;
    let body = &s[1..];
    let end = body.find(q)?;
    let lit = &body[..end];
    let plain = !lit.is_empty()
        && lit.len() <= 1024
        && !lit.starts_with('-')
        && lit.chars().all(|c| {
            c.is_ascii_alphanumeric()
                || matches!(c, '.' | '_' | '-' | '/' | '~' | '+' | '=' | ':' | ' ')
        });
    plain.then(|| (lit.to_string(), &body[end + 1..]))
}

/// What may follow the path arguments: the closing parenthesis, or the end of a statement in
/// Perl and Ruby's parenthesis-free calls.
fn ends_call(s: &str) -> bool {
    s.is_empty() || s.starts_with([')', ';', '\n', '}'])
}

/// Arguments after the paths that only set options: an options object or hash
/// (`{recursive: true}`), a keyword argument (`ignore_errors=True`, `secure: true`) or a
/// boolean. Anything else (a variable) could be one more path.
fn harmless_options(s: &str) -> bool {
    if s.starts_with('{') {
        return true;
    }
    let word: String = s
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    let after = s[word.len()..].trim_start();
    if word.is_empty() {
        return false;
    }
    matches!(
        word.as_str(),
        "True" | "False" | "true" | "false" | "None" | "null"
    ) && ends_call_or_more(after)
        || (after.starts_with('=') && !after.starts_with("=="))
        || (after.starts_with(':') && !after.starts_with("::"))
}

fn ends_call_or_more(s: &str) -> bool {
    ends_call(s) || s.starts_with(',')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(code: &str) -> Option<Vec<String>> {
        let d = deleted_paths(code);
        (!d.unresolved).then_some(d.paths)
    }

    #[test]
    fn reads_literal_targets() {
        for (code, want) in [
            ("import shutil; shutil.rmtree('build')", vec!["build"]),
            (
                "import shutil; shutil.rmtree('build', ignore_errors=True)",
                vec!["build"],
            ),
            (
                "fs.rmSync('dist', {recursive: true, force: true})",
                vec!["dist"],
            ),
            (
                "require('fs').rmSync(\"dist\", {recursive:true})",
                vec!["dist"],
            ),
            ("FileUtils.rm_rf(\"tmp/cache\")", vec!["tmp/cache"]),
            ("require 'fileutils'; FileUtils.rm_rf 'tmp'", vec!["tmp"]),
            ("FileUtils.rm_rf(['a', 'b'])", vec!["a", "b"]),
            ("remove_tree(\"target\")", vec!["target"]),
            ("rmtree('a', 'b')", vec!["a", "b"]),
            ("import os; os.remove('out.txt')", vec!["out.txt"]),
            ("shutil.rmtree('/')", vec!["/"]),
            ("shutil.rmtree('..')", vec![".."]),
        ] {
            assert_eq!(
                paths(code),
                Some(want.iter().map(|s| s.to_string()).collect()),
                "{code}"
            );
        }
    }

    #[test]
    fn anything_not_literal_is_unresolved() {
        for code in [
            "import shutil,os; shutil.rmtree(os.path.expanduser('~'))",
            "shutil.rmtree(d)",
            "shutil.rmtree('bu' + 'ild')",
            "shutil.rmtree(f'{home}')",
            "fs.rmSync(`${process.env.HOME}`, {recursive: true})",
            "FileUtils.rm_rf(\"#{ENV['HOME']}\")",
            "remove_tree(\"$ENV{HOME}\")",
            "remove_tree('build', $other)",
            "shutil.rmtree('*')",
            "Path('build').unlink()",
            "shutil.rmtree('build'); os.remove(p)",
            "unlink glob(\"/etc/*\")",
            "FileUtils.rm_rf %w[a b]",
        ] {
            assert!(deleted_paths(code).unresolved, "{code}");
        }
    }

    #[test]
    fn code_without_delete_calls_is_empty() {
        assert_eq!(deleted_paths("print('rm -rf /')"), Deletes::default());
    }
}
