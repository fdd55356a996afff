//! The canonical text of a command that rules match on: argv after expansion, the program
//! reduced to its base name, git's global options dropped, words joined by one space and
//! single-quoted when they hold white space or quotes (so `git commit -m 'reset --hard'` does
//! not look like `git reset --hard`).

use crate::unwrap::program_name;

/// Quotes one word when needed.
pub fn quote(w: &str) -> String {
    if w.is_empty() {
        return "''".to_string();
    }
    if w.chars()
        .any(|c| c.is_whitespace() || c == '\'' || c == '"' || c == ';' || c == '|' || c == '&')
    {
        format!("'{}'", w.replace('\'', "'\\''"))
    } else {
        w.to_string()
    }
}

/// Joins words with quoting.
pub fn join(words: &[String]) -> String {
    let mut s = String::new();
    for (i, w) in words.iter().enumerate() {
        if i > 0 {
            s.push(' ');
        }
        s.push_str(&quote(w));
    }
    s
}

/// The canonical text of an argv.
pub fn render(argv: &[String]) -> String {
    let Some(prog) = argv.first() else {
        return String::new();
    };
    let name = program_name(prog);
    let mut words: Vec<String> = Vec::with_capacity(argv.len());
    words.push(name.clone());
    let args = &argv[1..];
    let start = if name == "git" {
        git_subcommand_at(args)
    } else {
        0
    };
    words.extend(args[start.min(args.len())..].iter().cloned());
    join(&words)
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
    }
}
