//! The canonical text of a command that rules match on: argv after expansion, the program
//! reduced to its base name, git's global options dropped, words joined by one space and
//! single-quoted when they hold white space or quotes (so `git commit -m 'reset --hard'` does
//! not look like `git reset --hard`).

use crate::unwrap::program_name;

/// Quotes one word when needed.
pub fn quote(w: &str) -> String {
    let mut s = String::with_capacity(w.len() + 2);
    push_quoted(&mut s, w);
    s
}

/// Appends `w` to `s`, quoted as [`quote`] would (without a String per word).
fn push_quoted(s: &mut String, w: &str) {
    if w.is_empty() {
        s.push_str("''");
        return;
    }
    if w.chars()
        .any(|c| c.is_whitespace() || c == '\'' || c == '"' || c == ';' || c == '|' || c == '&')
    {
        s.push('\'');
        for (i, part) in w.split('\'').enumerate() {
            if i > 0 {
                s.push_str("'\\''");
            }
            s.push_str(part);
        }
        s.push('\'');
    } else {
        s.push_str(w);
    }
}

/// Appends `words`, quoted and separated by one space, to `s`.
fn push_joined<'w>(s: &mut String, words: impl Iterator<Item = &'w str>) {
    for (i, w) in words.enumerate() {
        if i > 0 {
            s.push(' ');
        }
        push_quoted(s, w);
    }
}

/// Joins words with quoting.
pub fn join(words: &[String]) -> String {
    let mut s = String::with_capacity(words.iter().map(|w| w.len() + 1).sum());
    push_joined(&mut s, words.iter().map(String::as_str));
    s
}

/// The canonical text of an argv.
pub fn render(argv: &[String]) -> String {
    let Some(prog) = argv.first() else {
        return String::new();
    };
    let name = program_name(prog);
    let args = &argv[1..];
    let start = if name == "git" {
        git_subcommand_at(args)
    } else {
        0
    };
    let rest = &args[start.min(args.len())..];
    let mut s = String::with_capacity(name.len() + rest.iter().map(|w| w.len() + 1).sum::<usize>());
    push_joined(
        &mut s,
        std::iter::once(&*name).chain(rest.iter().map(String::as_str)),
    );
    s
}

/// Index of git's subcommand, past its global options.
fn git_subcommand_at(args: &[String]) -> usize {
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        if !a.starts_with('-') {
            return i;
        }
        if matches!(
            a,
            "-C" | "-c"
                | "--git-dir"
                | "--work-tree"
                | "--namespace"
                | "--exec-path"
                | "--super-prefix"
                | "--config-env"
        ) {
            i += 2;
        } else {
            i += 1;
        }
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn renders() {
        assert_eq!(render(&v(&["/bin/rm", "-rf", "/"])), "rm -rf /");
        assert_eq!(
            render(&v(&["git", "-C", "x", "--no-pager", "reset", "--hard"])),
            "git reset --hard"
        );
        assert_eq!(
            render(&v(&["git", "commit", "-m", "reset --hard"])),
            "git commit -m 'reset --hard'"
        );
        assert_eq!(render(&v(&["echo", "it's"])), "echo 'it'\\''s'");
        assert_eq!(render(&v(&["echo", "''", ""])), "echo ''\\'''\\''' ''");
    }

    proptest::proptest! {
        /// Quoting in place answers what quoting through `str::replace` did.
        #[test]
        fn quotes_like_replace(w in "[a-z' \"|;&\t\u{a0}é-]{0,12}") {
            let plain = if w.is_empty() {
                "''".to_string()
            } else if w.chars().any(|c| c.is_whitespace() || "'\";|&".contains(c)) {
                format!("'{}'", w.replace('\'', "'\\''"))
            } else {
                w.clone()
            };
            proptest::prop_assert_eq!(quote(&w), plain.clone());
            proptest::prop_assert_eq!(join(&[w.clone(), w.clone()]), format!("{plain} {plain}"));
        }
    }
}
