//! Options as data: for each program in `rules/options/programs.toml`, which options (and
//! operands) write a file, run a shell command, run a program, or take code in the program's
//! own language. The walk judges what each use names: written files through the
//! sensitive-path table, commands as scripts, programs and code by asking.

/// One program's entry of the table (compiled from the TOML by `build.rs`).
#[derive(Debug)]
pub struct ProgramOptions {
    pub names: &'static [&'static str],
    pub write: &'static [&'static str],
    pub write_operands: &'static [usize],
    pub run: &'static [&'static str],
    pub run_piped: &'static [&'static str],
    pub program: &'static [&'static str],
    pub code: &'static [&'static str],
    pub run_prefix: &'static [&'static str],
}

static TABLE: &[ProgramOptions] = include!(concat!(env!("OUT_DIR"), "/options.rs"));

/// The table's source, for the tests that check its examples.
pub const SOURCE: &str = include_str!("../../../rules/options/programs.toml");

/// What one argument of a command does, by the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Use {
    /// A file the program writes.
    Writes(String),
    /// A shell command the program runs; `hidden` when the spelling hides that it runs one
    /// (`strace -o '|CMD'`, `less '+!CMD'`), which is asked.
    Runs { command: String, hidden: bool },
    /// A program the program executes.
    RunsProgram(String),
    /// Code in the program's own language (which can run commands).
    Code(String),
}

/// The table's entry for a program name, if any.
pub fn entry(name: &str) -> Option<&'static ProgramOptions> {
    TABLE.iter().find(|p| p.names.contains(&name))
}

/// The value of option `opt` in `args[i]` (and `args[i + 1]`): `--long=V`, `--long V`,
/// `-s V`, `-sV`, `-single V`. Returns the value and how many words it used.
fn value_of<'a>(opt: &str, args: &'a [String], i: usize) -> Option<(&'a str, usize)> {
    let a = args.get(i)?.as_str();
    if a == opt {
        return args.get(i + 1).map(|v| (v.as_str(), 2));
    }
    if opt.starts_with("--") || (opt.len() > 2 && opt.starts_with('-')) {
        return a
            .strip_prefix(opt)
            .and_then(|r| r.strip_prefix('='))
            .map(|v| (v, 1));
    }
    // a short option with its value attached (`-o/tmp/x`), or ending a cluster (`-sSLo F`)
    let letter = opt.strip_prefix('-')?;
    if a.starts_with("--") || !a.starts_with('-') {
        return None;
    }
    if let Some(v) = a.strip_prefix(opt).filter(|v| !v.is_empty()) {
        return Some((v, 1));
    }
    let cluster = &a[1..];
    if cluster.len() > 1
        && cluster.ends_with(letter)
        && cluster.bytes().all(|b| b.is_ascii_alphabetic())
    {
        return args.get(i + 1).map(|v| (v.as_str(), 2));
    }
    None
}

/// Every use the table finds in `argv` (program already reduced to its base name `name`).
pub fn uses(name: &str, argv: &[String]) -> Vec<Use> {
    let Some(e) = entry(name) else {
        return Vec::new();
    };
    let args = argv.get(1..).unwrap_or_default();
    let mut out = Vec::new();
    let mut operand = 0usize;
    let mut i = 0;
    let mut only_operands = false;
    while i < args.len() {
        let a = args[i].as_str();
        if !only_operands && a == "--" {
            only_operands = true;
            i += 1;
            continue;
        }
        if only_operands || a == "-" || !(a.starts_with('-') || a.starts_with('+')) {
            operand += 1;
            if e.write_operands.contains(&operand) && a != "-" {
                out.push(Use::Writes(a.to_string()));
            }
            i += 1;
            continue;
        }
        if let Some(rest) = e.run_prefix.iter().find_map(|p| a.strip_prefix(p)) {
            out.push(Use::Runs {
                command: rest.to_string(),
                hidden: true,
            });
            i += 1;
            continue;
        }
        let mut used = 1;
        for (opts, kind) in [
            (e.write, 0u8),
            (e.run_piped, 1),
            (e.run, 2),
            (e.program, 3),
            (e.code, 4),
        ] {
            for opt in opts {
                let Some((v, n)) = value_of(opt, args, i) else {
                    continue;
                };
                used = used.max(n);
                match kind {
                    0 if !v.starts_with(['|', '!']) || !e.run_piped.contains(opt) => {
                        out.push(Use::Writes(v.to_string()))
                    }
                    1 => {
                        if let Some(cmd) = v.strip_prefix(['|', '!']) {
                            out.push(Use::Runs {
                                command: cmd.to_string(),
                                hidden: true,
                            });
                        }
                    }
                    2 => out.push(Use::Runs {
                        command: v.to_string(),
                        hidden: false,
                    }),
                    3 => out.push(Use::RunsProgram(v.to_string())),
                    4 => out.push(Use::Code(v.to_string())),
                    _ => {}
                }
            }
        }
        i += used;
    }
    out
}

/// Commands that are another program under a different name, the odd cases a table of
/// options does not describe: `cmake -E rm -rf X` is `rm -rf X`, `cmake -E chdir D CMD` and
/// `cmake -E env K=V CMD` run CMD. Returns the equivalent argv.
pub fn equivalent(name: &str, argv: &[String]) -> Option<Vec<String>> {
    if name != "cmake" {
        return None;
    }
    let at = argv.iter().position(|a| a == "-E")?;
    let tool = argv.get(at + 1)?.as_str();
    let rest = argv.get(at + 2..).unwrap_or_default();
    let with = |prog: &[&str], from: &[String]| -> Vec<String> {
        prog.iter()
            .map(|s| s.to_string())
            .chain(from.iter().cloned())
            .collect()
    };
    Some(match tool {
        "rm" => with(&["rm"], rest),
        "remove" => with(&["rm", "-f"], rest),
        "remove_directory" => with(&["rm", "-rf"], rest),
        "rename" => with(&["mv"], rest),
        "copy" | "copy_if_different" => with(&["cp"], rest),
        "copy_directory" | "copy_directory_if_different" => with(&["cp", "-r"], rest),
        "create_symlink" => with(&["ln", "-s"], rest),
        "create_hardlink" => with(&["ln"], rest),
        "make_directory" => with(&["mkdir", "-p"], rest),
        "touch" | "touch_nocreate" => with(&["touch"], rest),
        "tar" => with(&["tar"], rest),
        "chdir" => rest.get(1..)?.to_vec(),
        "time" => rest.to_vec(),
        "env" => {
            let cmd: Vec<String> = rest
                .iter()
                .skip_while(|a| a.contains('=') || a.starts_with("--"))
                .cloned()
                .collect();
            (!cmd.is_empty()).then_some(cmd)?
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(line: &str) -> Vec<Use> {
        let argv: Vec<String> = line.split_whitespace().map(str::to_string).collect();
        uses(&argv[0], &argv)
    }

    #[test]
    fn option_spellings() {
        let w = |p: &str| vec![Use::Writes(p.to_string())];
        assert_eq!(u("sort -o /x a"), w("/x"));
        assert_eq!(u("sort -o/x a"), w("/x"));
        assert_eq!(u("sort --output=/x a"), w("/x"));
        assert_eq!(u("sort --output /x a"), w("/x"));
        assert_eq!(u("curl -sSLo /x u"), w("/x"));
        assert_eq!(u("find . -fprint /x"), w("/x"));
        assert_eq!(u("uniq a /x"), w("/x"));
        assert_eq!(u("uniq -c a /x"), w("/x"));
        assert_eq!(u("sort -u a"), vec![]);
        assert_eq!(u("find . -fprintfoo"), vec![]);
        assert_eq!(u("unknownprog -o /x"), vec![]);
        assert_eq!(
            u("strace -o |id true"),
            vec![Use::Runs {
                command: "id".into(),
                hidden: true
            }]
        );
        assert_eq!(u("strace -o t.txt ls"), w("t.txt"));
    }
}
