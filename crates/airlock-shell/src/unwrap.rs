//! Wrappers: commands whose real work is another command. `sudo rm x` runs `rm x`;
//! `bash -c 'rm x'` runs a script; `python -c CODE` runs code. Each wrapper's own options are
//! skipped with knowledge of which take a value, so `timeout -s KILL 5 rm x` finds `rm`.

/// What a wrapper runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Inner {
    /// Another command, as an argv.
    Argv(Vec<String>),
    /// A shell script to parse (the `-c` of a shell, `eval`, `ssh host CMD`, `watch CMD`).
    Script(String),
    /// Inline code for an interpreter.
    Code { lang: Lang, code: String },
    /// The command feeds a script or code from standard input (`bash -s`, bare `python3`).
    ReadsStdin(Lang),
}

/// Interpreter families, for inline code and stdin sinks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    Shell,
    Python,
    Perl,
    Ruby,
    Node,
    Php,
    Lua,
    Awk,
    Sed,
    Other,
}

impl Lang {
    pub fn name(self) -> &'static str {
        match self {
            Lang::Shell => "shell",
            Lang::Python => "python",
            Lang::Perl => "perl",
            Lang::Ruby => "ruby",
            Lang::Node => "node",
            Lang::Php => "php",
            Lang::Lua => "lua",
            Lang::Awk => "awk",
            Lang::Sed => "sed",
            Lang::Other => "interpreter",
        }
    }
}

/// The program's base name: `/usr/bin/rm` → `rm`.
pub fn base(prog: &str) -> &str {
    prog.rsplit('/').next().unwrap_or(prog)
}

pub fn shell_lang(name: &str) -> bool {
    matches!(
        name,
        "sh" | "bash"
            | "zsh"
            | "dash"
            | "ksh"
            | "mksh"
            | "ash"
            | "fish"
            | "csh"
            | "tcsh"
            | "yash"
            | "rbash"
    )
}

/// The interpreter family of a program name (`python3.12` → Python).
pub fn lang_of(name: &str) -> Option<Lang> {
    if shell_lang(name) {
        return Some(Lang::Shell);
    }
    let stem = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    Some(match stem {
        "python" | "pypy" | "python3-dbg" => Lang::Python,
        "perl" => Lang::Perl,
        "ruby" | "jruby" => Lang::Ruby,
        "node" | "nodejs" | "bun" | "deno" => Lang::Node,
        "php" => Lang::Php,
        "lua" | "luajit" => Lang::Lua,
        "awk" | "gawk" | "mawk" | "nawk" => Lang::Awk,
        "osascript" | "pwsh" | "powershell" | "tclsh" | "wish" | "Rscript" | "julia" => Lang::Other,
        _ => return None,
    })
}

/// Skips options of a wrapper. `with_value` lists short and long options that take a separate
/// value. Returns the index of the first operand.
fn skip_opts(args: &[String], from: usize, with_value: &[&str]) -> usize {
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
        // a short cluster ending in an option that takes a value: `-u root` written `-uroot`
        // carries its value; `-nu root` takes the next word
        if !a.starts_with("--") && a.len() > 2 {
            let last = &a[a.len() - 1..];
            if with_value.iter().any(|w| w.len() == 2 && &w[1..] == last) {
                i += 2;
                continue;
            }
        }
        i += 1;
    }
    i
}

fn rest(args: &[String], at: usize) -> Option<Inner> {
    (at < args.len()).then(|| Inner::Argv(args[at..].to_vec()))
}

fn joined(args: &[String], at: usize) -> Option<Inner> {
    (at < args.len()).then(|| Inner::Script(args[at..].join(" ")))
}

/// What `argv` runs inside it, if it is a wrapper. `find` can run several commands.
pub fn unwrap(argv: &[String]) -> Vec<Inner> {
    let Some(prog) = argv.first() else {
        return Vec::new();
    };
    let name = base(prog);
    let one = |x: Option<Inner>| x.into_iter().collect::<Vec<_>>();
    match name {
        "sudo" => {
            // `sudo -s`/`-i` without a command opens a root shell: no inner command.
            let at = skip_opts(
                argv,
                1,
                &[
                    "-u",
                    "-g",
                    "-C",
                    "-D",
                    "-h",
                    "-p",
                    "-r",
                    "-t",
                    "-T",
                    "-U",
                    "-R",
                    "--user",
                    "--group",
                    "--chdir",
                    "--prompt",
                    "--host",
                    "--role",
                    "--type",
                    "--close-from",
                    "--other-user",
                    "--command-timeout",
                ],
            );
            one(rest(argv, at))
        }
        "doas" => one(rest(argv, skip_opts(argv, 1, &["-u", "-C"]))),
        "su" | "runuser" => {
            // su [opts] [user] -c CMD
            let mut i = 1;
            while i < argv.len() {
                let a = argv[i].as_str();
                if a == "-c" || a == "--command" {
                    return one(argv.get(i + 1).map(|c| Inner::Script(c.clone())));
                }
                if let Some(c) = a.strip_prefix("--command=") {
                    return vec![Inner::Script(c.to_string())];
                }
                i += 1;
            }
            Vec::new()
        }
        "env" => {
            let mut i = 1;
            while i < argv.len() {
                let a = argv[i].as_str();
                if a == "-S" || a == "--split-string" {
                    return one(argv.get(i + 1).map(|s| Inner::Script(s.clone())));
                }
                if let Some(s) = a.strip_prefix("--split-string=") {
                    return vec![Inner::Script(s.to_string())];
                }
                if matches!(a, "-u" | "--unset" | "-C" | "--chdir") {
                    i += 2;
                } else if a.starts_with('-') || a.contains('=') {
                    i += 1;
                } else {
                    break;
                }
            }
            one(rest(argv, i))
        }
        "nice" => one(rest(argv, skip_opts(argv, 1, &["-n", "--adjustment"]))),
        "ionice" => one(rest(
            argv,
            skip_opts(
                argv,
                1,
                &["-c", "-n", "-p", "-P", "-u", "--class", "--classdata"],
            ),
        )),
        "nohup" | "builtin" | "unbuffer" | "caffeinate" | "command-not-found" | "proxychains"
        | "proxychains4" | "torsocks" | "fakeroot" | "catchsegv" | "valgrind" | "firejail" => {
            one(rest(argv, skip_opts(argv, 1, &[])))
        }
        "command" => {
            // `command -v x` / `-V` only looks x up
            if argv.iter().skip(1).any(|a| a == "-v" || a == "-V") {
                return Vec::new();
            }
            one(rest(argv, skip_opts(argv, 1, &[])))
        }
        "exec" => one(rest(argv, skip_opts(argv, 1, &["-a"]))),
        "time" => one(rest(
            argv,
            skip_opts(argv, 1, &["-f", "-o", "--format", "--output"]),
        )),
        "setsid" | "stdbuf" | "chrt" | "taskset" | "numactl" | "prlimit" | "cpulimit" => {
            let at = skip_opts(
                argv,
                1,
                &[
                    "-i", "-o", "-e", "-p", "--pid", "-l", "--limit", "-C", "-m", "-N",
                ],
            );
            // chrt PRIORITY cmd / taskset MASK cmd take a leading positional value
            let at = if matches!(name, "chrt" | "taskset") {
                at + 1
            } else {
                at
            };
            one(rest(argv, at))
        }
        "timeout" => {
            let at = skip_opts(argv, 1, &["-s", "-k", "--signal", "--kill-after"]);
            one(rest(argv, at + 1))
        }
        "flock" => {
            let at = skip_opts(argv, 1, &["-w", "--timeout", "-E", "--conflict-exit-code"]);
            // flock FILE -c CMD | flock FILE CMD...
            match argv.get(at + 1).map(String::as_str) {
                Some("-c") | Some("--command") => {
                    one(argv.get(at + 2).map(|c| Inner::Script(c.clone())))
                }
                _ => one(rest(argv, at + 1)),
            }
        }
        "chroot" => one(rest(
            argv,
            skip_opts(argv, 1, &["--userspec", "--groups"]) + 1,
        )),
        "busybox" | "toybox" => {
            // `busybox sh -c …` runs the applet named next
            one(rest(argv, 1))
        }
        "xargs" => {
            let at = skip_opts(
                argv,
                1,
                &[
                    "-I",
                    "-i",
                    "-n",
                    "-P",
                    "-L",
                    "-l",
                    "-d",
                    "-E",
                    "-e",
                    "-a",
                    "-s",
                    "--max-args",
                    "--max-procs",
                    "--max-lines",
                    "--delimiter",
                    "--arg-file",
                    "--max-chars",
                    "--replace",
                ],
            );
            if at >= argv.len() {
                vec![Inner::Argv(vec!["echo".to_string()])]
            } else {
                one(rest(argv, at))
            }
        }
        "parallel" => {
            let at = skip_opts(
                argv,
                1,
                &[
                    "-j",
                    "--jobs",
                    "-S",
                    "--sshlogin",
                    "--joblog",
                    "-a",
                    "--arg-file",
                ],
            );
            let end = argv
                .iter()
                .position(|a| a == ":::" || a == "::::")
                .unwrap_or(argv.len());
            if at < end {
                vec![Inner::Script(argv[at..end].join(" "))]
            } else {
                Vec::new()
            }
        }
        "watch" => one(joined(
            argv,
            skip_opts(argv, 1, &["-n", "--interval", "-d", "-g", "-q"]),
        )),
        "ssh" => {
            let at = skip_opts(
                argv,
                1,
                &[
                    "-p", "-i", "-l", "-o", "-F", "-J", "-L", "-R", "-D", "-b", "-c", "-E", "-e",
                    "-m", "-O", "-Q", "-S", "-W", "-w", "-B", "-I",
                ],
            );
            // the host, then the remote command
            one(joined(argv, at + 1))
        }
        "eval" => one(joined(argv, 1)),
        "find" => find_exec(argv),
        "git" => git_programs(argv),
        _ if is_loader(name) => {
            let at = skip_opts(
                argv,
                1,
                &[
                    "--library-path",
                    "--preload",
                    "--audit",
                    "--argv0",
                    "--inhibit-rpath",
                ],
            );
            one(rest(argv, at))
        }
        _ => match lang_of(name) {
            Some(lang) => interpreter(argv, lang),
            None if name == "sed" => sed_script(argv),
            None => Vec::new(),
        },
    }
}

fn is_loader(name: &str) -> bool {
    name.starts_with("ld-linux") || name == "ld.so" || name.starts_with("ld-musl")
}

fn find_exec(argv: &[String]) -> Vec<Inner> {
    let mut out = Vec::new();
    let mut i = 1;
    while i < argv.len() {
        if matches!(argv[i].as_str(), "-exec" | "-execdir" | "-ok" | "-okdir") {
            let start = i + 1;
            let mut j = start;
            while j < argv.len() && argv[j] != ";" && argv[j] != "+" {
                j += 1;
            }
            if start < j {
                out.push(Inner::Argv(argv[start..j].to_vec()));
            }
            i = j;
        }
        i += 1;
    }
    out
}

/// `git -c KEY=VALUE` where the key makes git run a program (`alias.x=!cmd`, `core.pager`,
/// `core.sshCommand`, …): the value is a script.
fn git_programs(argv: &[String]) -> Vec<Inner> {
    let mut out = Vec::new();
    let mut i = 1;
    while i < argv.len() {
        let a = argv[i].as_str();
        let kv = if a == "-c" {
            i += 1;
            argv.get(i).map(String::as_str)
        } else {
            a.strip_prefix("--config-env=")
                .or_else(|| a.strip_prefix("-c"))
        };
        if let Some((k, v)) = kv.and_then(|kv| kv.split_once('='))
            && git_key_runs_program(k)
        {
            out.push(Inner::Script(v.trim_start_matches('!').to_string()));
        }
        if !a.starts_with('-') {
            break;
        }
        i += 1;
    }
    out
}

/// Git configuration keys whose value is a program git will run.
pub fn git_key_runs_program(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    k.starts_with("alias.")
        || matches!(
            k.as_str(),
            "core.pager"
                | "core.sshcommand"
                | "core.editor"
                | "core.fsmonitor"
                | "core.hookspath"
                | "core.askpass"
                | "sequence.editor"
                | "diff.external"
                | "credential.helper"
                | "gpg.program"
                | "gpg.ssh.program"
                | "protocol.ext.allow"
                | "uploadpack.packobjectshook"
        )
        || (k.starts_with("filter.")
            && (k.ends_with(".clean") || k.ends_with(".smudge") || k.ends_with(".process")))
        || (k.starts_with("diff.") && k.ends_with(".textconv"))
        || (k.starts_with("pager."))
}

fn interpreter(argv: &[String], lang: Lang) -> Vec<Inner> {
    let code_flags: &[&str] = match lang {
        Lang::Shell => &["-c"],
        Lang::Python => &["-c"],
        Lang::Perl => &["-e", "-E"],
        Lang::Ruby => &["-e"],
        Lang::Node => &["-e", "--eval", "-p", "--print"],
        Lang::Php => &["-r"],
        Lang::Lua => &["-e"],
        Lang::Other => &["-e", "-c", "-Command", "-command", "-EncodedCommand"],
        Lang::Awk | Lang::Sed => &[],
    };
    if lang == Lang::Awk {
        return awk_program(argv);
    }
    let mut i = 1;
    while i < argv.len() {
        let a = argv[i].as_str();
        // `deno eval CODE`, `bun -e`
        if lang == Lang::Node && i == 1 && a == "eval" {
            return argv
                .get(2)
                .map(|c| Inner::Code {
                    lang,
                    code: c.clone(),
                })
                .into_iter()
                .collect();
        }
        if code_flags.contains(&a) {
            return match argv.get(i + 1) {
                Some(c) if lang == Lang::Shell => vec![Inner::Script(c.clone())],
                Some(c) => vec![Inner::Code {
                    lang,
                    code: c.clone(),
                }],
                None => Vec::new(),
            };
        }
        // clustered short flags ending in the code flag: `bash -ec 'cmd'`, `perl -lne 'code'`
        if a.starts_with('-') && !a.starts_with("--") && a.len() > 2 {
            let last = &a[a.len() - 1..];
            if code_flags.iter().any(|f| f.len() == 2 && &f[1..] == last) {
                return match argv.get(i + 1) {
                    Some(c) if lang == Lang::Shell => vec![Inner::Script(c.clone())],
                    Some(c) => vec![Inner::Code {
                        lang,
                        code: c.clone(),
                    }],
                    None => Vec::new(),
                };
            }
        }
        if a == "-" || a == "-s" || a == "--" {
            return vec![Inner::ReadsStdin(lang)];
        }
        if !a.starts_with('-') {
            // a script file: its contents are not known here
            return Vec::new();
        }
        // options that take a value
        if matches!(
            a,
            "-m" | "-W" | "-X" | "-o" | "-O" | "-I" | "-r" | "--require" | "-M"
        ) && lang != Lang::Shell
        {
            if lang == Lang::Python && a == "-m" {
                return Vec::new();
            }
            i += 2;
            continue;
        }
        i += 1;
    }
    vec![Inner::ReadsStdin(lang)]
}

fn awk_program(argv: &[String]) -> Vec<Inner> {
    let mut i = 1;
    while i < argv.len() {
        let a = argv[i].as_str();
        if a == "-f" || a.starts_with("--file") {
            return Vec::new();
        }
        if matches!(a, "-F" | "-v" | "--assign" | "--field-separator") {
            i += 2;
            continue;
        }
        if a.starts_with('-') && a != "-" {
            i += 1;
            continue;
        }
        return vec![Inner::Code {
            lang: Lang::Awk,
            code: a.to_string(),
        }];
    }
    Vec::new()
}

/// `sed` scripts that run commands: the `e` command or the `e` flag of `s///`.
fn sed_script(argv: &[String]) -> Vec<Inner> {
    let mut scripts = Vec::new();
    let mut i = 1;
    let mut saw_script = false;
    while i < argv.len() {
        let a = argv[i].as_str();
        if a == "-e" || a == "--expression" {
            if let Some(s) = argv.get(i + 1) {
                scripts.push(s.clone());
            }
            saw_script = true;
            i += 2;
            continue;
        }
        if a == "-f" {
            return Vec::new();
        }
        if !a.starts_with('-') && !saw_script {
            scripts.push(a.to_string());
            saw_script = true;
        }
        i += 1;
    }
    scripts
        .into_iter()
        .map(|code| Inner::Code {
            lang: Lang::Sed,
            code,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn wrappers_unwrap() {
        assert_eq!(
            unwrap(&v("sudo -u root rm -rf /")),
            vec![Inner::Argv(v("rm -rf /"))]
        );
        assert_eq!(unwrap(&v("env A=1 -i rm x")), vec![Inner::Argv(v("rm x"))]);
        assert_eq!(
            unwrap(&v("timeout -s KILL 5 rm x")),
            vec![Inner::Argv(v("rm x"))]
        );
        assert_eq!(unwrap(&v("nice -n 5 rm x")), vec![Inner::Argv(v("rm x"))]);
        assert_eq!(
            unwrap(&v("xargs -0 -n1 rm -f")),
            vec![Inner::Argv(v("rm -f"))]
        );
        assert_eq!(
            unwrap(&v("find . -name x -exec rm -rf {} ; -print")),
            vec![Inner::Argv(v("rm -rf {}"))]
        );
        assert_eq!(
            unwrap(&v("ssh -p 22 host rm -rf /")),
            vec![Inner::Script("rm -rf /".into())]
        );
        assert_eq!(
            unwrap(&v("/lib64/ld-linux-x86-64.so.2 /bin/rm x")),
            vec![Inner::Argv(v("/bin/rm x"))]
        );
        assert_eq!(unwrap(&v("command -v rm")), vec![]);
        assert_eq!(unwrap(&v("sudo -i")), vec![]);
    }

    #[test]
    fn shells_and_interpreters() {
        let a = vec!["bash".to_string(), "-ec".to_string(), "rm x".to_string()];
        assert_eq!(unwrap(&a), vec![Inner::Script("rm x".into())]);
        assert_eq!(unwrap(&v("bash")), vec![Inner::ReadsStdin(Lang::Shell)]);
        assert_eq!(unwrap(&v("bash script.sh")), vec![]);
        assert_eq!(
            unwrap(&v("python3 -")),
            vec![Inner::ReadsStdin(Lang::Python)]
        );
        assert_eq!(unwrap(&v("python3 -m http.server")), vec![]);
        let p = vec![
            "python3".to_string(),
            "-c".to_string(),
            "import os".to_string(),
        ];
        assert_eq!(
            unwrap(&p),
            vec![Inner::Code {
                lang: Lang::Python,
                code: "import os".into()
            }]
        );
        let g = vec![
            "git".to_string(),
            "-c".to_string(),
            "core.pager=!rm x".to_string(),
            "log".to_string(),
        ];
        assert_eq!(unwrap(&g), vec![Inner::Script("rm x".into())]);
    }
}
