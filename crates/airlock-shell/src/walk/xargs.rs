//! `xargs`: how it reads its input and the commands it runs for literal input.

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

pub(super) fn xargs_mode(argv: &[String]) -> XargsMode {
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

/// Stands for the words `xargs` reads when they are only known at run time.
pub(super) const XARGS_INPUT: &str = "$XARGS_INPUT";

/// The commands `xargs` runs for the literal input `input`.
pub(super) fn xargs_commands(
    cmd: &[String],
    placeholder: Option<&str>,
    input: &str,
) -> Vec<Vec<String>> {
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
