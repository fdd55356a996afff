//! Wrappers as data: the regular wrappers of `rules/options/wrappers.toml` (which of their
//! options take a value, how many operands come before the command, when they run nothing or
//! a shell reading standard input), compiled into a static table by `build.rs`. The odd
//! wrappers stay as code in `unwrap.rs`.

use crate::unwrap::{Inner, Lang};

/// One `[[wrapper]]` entry (the TOML's keys, documented there).
#[derive(Debug)]
pub struct Wrapper {
    pub valued: &'static [&'static str],
    pub operands: usize,
    pub duration_operand: bool,
    pub script: bool,
    pub runs_nothing_with: &'static [&'static str],
    pub number: &'static [&'static str],
    pub stdin_shell: bool,
    pub stdin_shell_with: &'static [&'static str],
    pub stdin_shell_letters: &'static str,
}

static TABLE: &[Wrapper] = include!(concat!(env!("OUT_DIR"), "/wrappers.rs"));

/// The table's source, for the test that checks its examples.
pub const SOURCE: &str = include_str!("../../../rules/options/wrappers.toml");

/// The entry for a program name (a generated `match`, as cheap as the hand-written one was).
pub fn entry(name: &str) -> Option<&'static Wrapper> {
    let at: Option<usize> = include!(concat!(env!("OUT_DIR"), "/wrapper_index.rs"));
    at.and_then(|i| TABLE.get(i))
}

/// Skips a wrapper's options. `with_value` lists the short and long options that take the
/// next word as their value. Returns the index of the first operand.
pub fn skip_opts(args: &[String], from: usize, with_value: &[&str]) -> usize {
    let mut i = from;
    while i < args.len() {
        let a = args[i].as_str();
        if a == "--" {
            return i + 1;
        }
        if !a.starts_with('-') || a == "-" {
            return i;
        }
        if with_value.contains(&a) {
            i += 2;
            continue;
        }
        // a short cluster is read letter by letter up to the first option that takes a value:
        // the rest of the word is that value (`-uroot`, `-Hudeploy`), or, when the option ends
        // the cluster, the next word is (`-nu root`)
        if !a.starts_with("--") && a.len() > 2 {
            let valued_at = a[1..].char_indices().find(|&(_, c)| {
                with_value
                    .iter()
                    .any(|w| w.len() == 2 && w[1..].starts_with(c))
            });
            if let Some((j, c)) = valued_at
                && 1 + j + c.len_utf8() == a.len()
            {
                i += 2;
                continue;
            }
        }
        i += 1;
    }
    // a valued option as the last word (`sudo -u`) has no value to skip
    i.min(args.len())
}

/// `timeout`'s duration: what C's `strtod` reads as a non-negative number, with an optional
/// unit. Erring towards a duration is the safe side (the command after it is judged), so
/// `inf`, hexadecimal (`0x10`) and leading blanks or `+` count; a word is not one.
pub fn is_duration(d: &str) -> bool {
    let d = d.strip_suffix(['s', 'm', 'h', 'd']).unwrap_or(d);
    !d.is_empty()
        && (d.parse::<f64>().is_ok_and(|v| v >= 0.0)
            || d.trim_start()
                .starts_with(|c: char| c.is_ascii_digit() || c == '+' || c == '.'))
}

impl Wrapper {
    /// What `argv` (a command of this wrapper) runs.
    pub fn inner(&self, argv: &[String]) -> Vec<Inner> {
        let at = skip_opts(argv, 1, self.valued);
        // only the wrapper's own options count: `command rm -v x` runs `rm -v x`
        let own = argv.get(1..at).unwrap_or_default();
        if own
            .iter()
            .any(|a| self.runs_nothing_with.contains(&a.as_str()))
        {
            return Vec::new();
        }
        // a value that is not a number makes the wrapper fail before running anything
        if own
            .windows(2)
            .any(|w| self.number.contains(&w[0].as_str()) && w[1].parse::<i32>().is_err())
        {
            return Vec::new();
        }
        if self.duration_operand && !argv.get(at).is_some_and(|d| is_duration(d)) {
            return Vec::new();
        }
        let cmd_at = at + self.operands;
        if cmd_at < argv.len() {
            let rest = &argv[cmd_at..];
            return vec![if self.script {
                Inner::Script(rest.join(" "))
            } else {
                Inner::Argv(rest.to_vec())
            }];
        }
        let shell = self.stdin_shell
            || own.iter().any(|a| {
                self.stdin_shell_with.contains(&a.as_str())
                    || (!self.stdin_shell_letters.is_empty()
                        && a.starts_with('-')
                        && !a.starts_with("--")
                        && a[1..].contains(|c| self.stdin_shell_letters.contains(c)))
            });
        if shell {
            vec![Inner::ReadsStdin(Lang::Shell)]
        } else {
            Vec::new()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn a_cluster_is_read_letter_by_letter() {
        let valued = &["-u", "-t", "-C"];
        // the value attached (`-uroot`: the `t` is part of it), or the next word
        assert_eq!(skip_opts(&words("sudo -uroot rm"), 1, valued), 2);
        assert_eq!(skip_opts(&words("sudo -nu root rm"), 1, valued), 3);
        assert_eq!(skip_opts(&words("sudo -nut 5 rm"), 1, valued), 2);
        assert_eq!(skip_opts(&words("sudo -En rm"), 1, valued), 2);
        assert_eq!(skip_opts(&words("sudo -u"), 1, valued), 2);
        assert_eq!(skip_opts(&words("sudo -- -rm"), 1, valued), 2);
    }

    proptest! {
        /// Any words: the first operand is within the line, and no wrapper of the table
        /// panics or reports a command that is not a tail of the line.
        #[test]
        fn any_line_unwraps_within_bounds(
            name in prop::sample::select(vec!["sudo", "nice", "timeout", "chrt", "taskset", "watch", "command", "run0", "faketime"]),
            args in prop::collection::vec("-{0,2}[a-zA-Z0-9=]{0,4}", 0..8),
        ) {
            let argv: Vec<String> = std::iter::once(name.to_string()).chain(args).collect();
            let w = entry(name).ok_or_else(|| TestCaseError::fail("not in the table"))?;
            prop_assert!(skip_opts(&argv, 1, w.valued) <= argv.len());
            for inner in w.inner(&argv) {
                if let Inner::Argv(cmd) = inner {
                    prop_assert!(argv.ends_with(&cmd));
                }
            }
        }
    }
}
