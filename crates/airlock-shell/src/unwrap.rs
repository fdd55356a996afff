//! Wrappers: commands whose real work is another command. `sudo rm x` runs `rm x`;
//! `bash -c 'rm x'` runs a script; `python -c CODE` runs code. Each wrapper's own options are
//! skipped with knowledge of which take a value, so `timeout -s KILL 5 rm x` finds `rm`. The
//! regular wrappers are data (`rules/options/wrappers.toml`, read by `wrapper_table`); this
//! file keeps the odd ones: a `-c` script (su, flock, script, sg), subcommands (docker, npm
//! exec, kubectl exec, nix develop), remote runners, editors and debuggers, interpreters.

use std::borrow::Cow;

use crate::wrapper_table::{self, skip_opts};

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
    /// Statements for a database client (`psql <<EOF`, `mysql <<< "…"`).
    Sql,
    /// A makefile read from standard input (`make -f -`): its recipes run as shell commands.
    Make,
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
            Lang::Sql => "SQL",
            Lang::Make => "make",
            Lang::Other => "interpreter",
        }
    }
}

/// Database clients that read statements from standard input.
pub fn is_db_client(name: &str) -> bool {
    matches!(
        name,
        "psql"
            | "mysql"
            | "mariadb"
            | "sqlite3"
            | "sqlite"
            | "duckdb"
            | "cqlsh"
            | "clickhouse-client"
            | "clickhouse"
            | "sqlcmd"
            | "mongo"
            | "mongosh"
            | "redis-cli"
            | "valkey-cli"
            | "cockroach"
            | "snowsql"
            | "bq"
            | "sqlplus"
            | "isql"
            | "usql"
    )
}

/// The program's base name: `/usr/bin/rm` → `rm`.
pub fn base(prog: &str) -> &str {
    prog.rsplit('/').next().unwrap_or(prog)
}

/// The name rules and wrappers know a program by: the base name, lower-cased (case-insensitive
/// file systems run `BASH` as bash) and without a Windows `.exe`.
/// Borrowed from `prog` in the usual case (a lower-case name), so the hot path allocates
/// nothing.
pub fn program_name(prog: &str) -> Cow<'_, str> {
    let b = base(prog);
    if !b.bytes().any(|c| c.is_ascii_uppercase()) {
        return Cow::Borrowed(match b.strip_suffix(".exe") {
            Some(s) if !s.is_empty() => s,
            _ => b,
        });
    }
    let lower = b.to_ascii_lowercase();
    match lower.strip_suffix(".exe") {
        Some(s) if !s.is_empty() => Cow::Owned(s.to_string()),
        _ => Cow::Owned(lower),
    }
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
        "osascript" | "pwsh" | "powershell" | "tclsh" | "wish" | "Rscript" | "rscript"
        | "julia" | "xonsh" | "nu" | "elvish" | "elixir" | "iex" | "erl" | "escript" | "groovy"
        | "jshell" | "ghci" | "racket" | "guile" | "sbcl" | "clojure" | "bb" => Lang::Other,
        _ => return None,
    })
}

/// The options of `docker`/`podman`/`nerdctl` before a subcommand that take a value.
const DOCKER_GLOBAL_VALUED: &[&str] = &[
    "-H",
    "--host",
    "--context",
    "-c",
    "--config",
    "-l",
    "--log-level",
];

fn rest(args: &[String], at: usize) -> Option<Inner> {
    (at < args.len()).then(|| Inner::Argv(args[at..].to_vec()))
}

/// Whether a `make` command line reads a makefile from standard input (`-f -`, `-f-`,
/// `--file=-`, `--makefile /dev/stdin`, …).
fn make_reads_stdin(argv: &[String]) -> bool {
    let stdin = |f: &str| matches!(f, "-" | "/dev/stdin" | "/dev/fd/0" | "/proc/self/fd/0");
    let mut i = 1;
    while i < argv.len() {
        let a = argv[i].as_str();
        if a == "--" {
            break;
        }
        let value = match a {
            "-f" | "--file" | "--makefile" => {
                i += 1;
                argv.get(i).map(String::as_str)
            }
            _ if a.starts_with("--file=") || a.starts_with("--makefile=") => {
                a.split_once('=').map(|(_, v)| v)
            }
            // a short cluster ending in `f` takes the next word (`-sf -`); `-fFILE` carries it
            _ if a.starts_with('-') && !a.starts_with("--") && a.len() > 2 => {
                if a.ends_with('f') && !a[1..a.len() - 1].contains(['C', 'I', 'o', 'W', 'j', 'l']) {
                    i += 1;
                    argv.get(i).map(String::as_str)
                } else {
                    a.strip_prefix("-f")
                }
            }
            _ => None,
        };
        if value.is_some_and(stdin) {
            return true;
        }
        i += 1;
    }
    false
}

fn joined(args: &[String], at: usize) -> Option<Inner> {
    (at < args.len()).then(|| Inner::Script(args[at..].join(" ")))
}

/// What `argv` runs inside it, if it is a wrapper. `find` can run several commands.
pub fn unwrap(argv: &[String]) -> Vec<Inner> {
    let Some(prog) = argv.first() else {
        return Vec::new();
    };
    let name_owned = program_name(prog);
    let name = &*name_owned;
    let one = |x: Option<Inner>| x.into_iter().collect::<Vec<_>>();
    match name {
        "runuser" if argv.iter().any(|a| a == "-u" || a.starts_with("--user")) => {
            // `runuser -u USER CMD…` runs CMD directly; with --command it refuses to run
            if su_command(argv).is_some() {
                return Vec::new();
            }
            let at = skip_opts(
                argv,
                1,
                &["-u", "--user", "-g", "--group", "-G", "--supp-group"],
            );
            one(rest(argv, at))
        }
        // without a command, `su` starts the target user's shell, which reads its script from
        // standard input (`echo CMD | su`)
        "su" | "runuser" => match su_command(argv) {
            Some(cmd) => vec![Inner::Script(cmd)],
            None if su_opens_shell(argv) => vec![Inner::ReadsStdin(Lang::Shell)],
            None => Vec::new(),
        },
        "env" => one(env_inner(argv)),
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
        // `make -f -` / `make -f /dev/stdin`: the makefile, and so the recipes it runs, come
        // from standard input, like a program piped into a shell
        "make" | "gmake" | "bmake" | "remake" if make_reads_stdin(argv) => {
            vec![Inner::ReadsStdin(Lang::Make)]
        }
        // `script -c CMD [FILE]` runs CMD under a pseudo-terminal
        "script" => {
            let mut out = Vec::new();
            for (i, a) in argv.iter().enumerate().skip(1) {
                // `-c CMD`, or a cluster ending in it (`-qc CMD`)
                let cluster_c =
                    a.len() > 2 && a.starts_with('-') && !a.starts_with("--") && a.ends_with('c');
                if a == "-c" || a == "--command" || cluster_c {
                    out.extend(argv.get(i + 1).map(|c| Inner::Script(c.clone())));
                } else if let Some(c) = a.strip_prefix("--command=") {
                    out.push(Inner::Script(c.to_string()));
                }
            }
            out
        }
        "tmux" => tmux_command(argv),
        // `vim -c '!CMD'`, `vim +'!CMD'`: an Ex command starting with `!` runs a shell command
        "vi" | "vim" | "nvim" | "view" | "ex" | "gvim" => argv[1..]
            .iter()
            .enumerate()
            .filter_map(|(i, a)| {
                let ex = if a == "-c" || a == "--cmd" {
                    argv.get(i + 2).map(String::as_str)
                } else {
                    a.strip_prefix('+')
                }?;
                let ex = ex.trim_start_matches([':', ' ']);
                ex.strip_prefix('!')
                    .map(|c| Inner::Script(c.to_string()))
                    .or_else(|| {
                        ex.strip_prefix("call system(")
                            .or_else(|| ex.strip_prefix("silent !"))
                            .map(|c| Inner::Script(c.trim_end_matches(')').to_string()))
                    })
            })
            .collect(),
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
            // without a command, each argument after `:::` is a command line of its own
            if at >= end {
                return argv[end..]
                    .iter()
                    .filter(|a| !a.starts_with(":::") && *a != "::::")
                    .take(16)
                    .map(|a| Inner::Script(a.clone()))
                    .collect();
            }
            // each argument after `:::` is appended to the command (or replaces `{}`)
            let cmd = argv[at..end].join(" ");
            let args: Vec<&String> = argv[end..]
                .iter()
                .filter(|a| *a != ":::" && *a != "::::" && *a != ":::+")
                .take(16)
                .collect();
            if argv.get(end).is_some_and(|a| a == ":::") && !args.is_empty() {
                args.iter()
                    .map(|a| {
                        Inner::Script(if cmd.contains("{}") {
                            cmd.replace("{}", a)
                        } else {
                            format!("{cmd} {a}")
                        })
                    })
                    .collect()
            } else {
                vec![Inner::Script(cmd)]
            }
        }
        "ssh" => {
            const VALUED: &[&str] = &[
                "-p", "-i", "-l", "-o", "-F", "-J", "-L", "-R", "-D", "-b", "-c", "-E", "-e", "-m",
                "-O", "-Q", "-S", "-W", "-w", "-B", "-I",
            ];
            let at = skip_opts(argv, 1, VALUED);
            // the host, then the remote command; without one the remote shell reads stdin.
            // ssh reads options after the host too (`ssh host -t CMD`, `ssh host -- CMD`)
            let cmd_at = skip_opts(argv, at + 1, VALUED);
            let mut out = match joined(argv, cmd_at) {
                Some(cmd) => vec![cmd],
                None => vec![Inner::ReadsStdin(Lang::Shell)],
            };
            // `-o ProxyCommand=CMD` runs CMD on this machine
            out.extend(ssh_option_programs(argv));
            out
        }
        "eval" => one(joined(argv, 1)),
        // `trap CMD SIGNAL…` runs CMD when the signal (or EXIT) arrives
        "trap" => {
            let at = usize::from(argv.get(1).is_some_and(|a| a == "--")) + 1;
            match argv.get(at) {
                Some(cmd) if argv.len() > at + 1 && !cmd.starts_with('-') && !cmd.is_empty() => {
                    vec![Inner::Script(cmd.clone())]
                }
                _ => Vec::new(),
            }
        }
        // `. /dev/stdin <<< CMD` sources standard input
        "source" | "." if argv.get(1).is_some_and(|a| is_stdin_path(a)) => {
            vec![Inner::ReadsStdin(Lang::Shell)]
        }
        "docker" | "podman" | "nerdctl"
            if argv
                .get(skip_opts(argv, 1, DOCKER_GLOBAL_VALUED))
                .is_some_and(|s| s == "compose") =>
        {
            let at = skip_opts(argv, 1, DOCKER_GLOBAL_VALUED);
            one(compose_command(argv, at + 1))
        }
        "docker-compose" | "podman-compose" => one(compose_command(argv, 1)),
        "docker" | "podman" | "nerdctl" => one(container_command(argv)),
        // `gdb -ex 'shell CMD'` / `-ex '!CMD'`: a debugger command that runs a shell command
        "gdb" => argv
            .iter()
            .enumerate()
            .filter_map(|(i, a)| {
                let ex =
                    if a == "-ex" || a == "--ex" || a == "-eval-command" || a == "--eval-command" {
                        argv.get(i + 1).map(String::as_str)
                    } else {
                        a.strip_prefix("--eval-command=")
                    }?;
                let ex = ex.trim_start();
                ex.strip_prefix("shell ")
                    .or_else(|| ex.strip_prefix('!'))
                    .or_else(|| ex.strip_prefix("pipe "))
                    .map(|c| Inner::Script(c.to_string()))
            })
            .collect(),
        "bwrap" => one(rest(argv, bwrap_operand(argv))),
        // `direnv exec DIR CMD`
        "direnv" if argv.get(1).is_some_and(|a| a == "exec") => {
            one(rest(argv, skip_opts(argv, 1, &["-f"]) + 2))
        }
        // `sg GROUP -c CMD` / `sg GROUP CMD`
        "sg" => match (argv.get(2).map(String::as_str), argv.get(3)) {
            (Some("-c"), Some(cmd)) => vec![Inner::Script(cmd.clone())],
            (Some(cmd), _) if argv.len() > 1 && !cmd.starts_with('-') => one(joined(argv, 2)),
            _ => Vec::new(),
        },
        // `capsh … -- -c CMD` runs bash with the arguments after `--`
        "capsh" => match argv.iter().position(|a| a == "--") {
            Some(at) => shell_invocation(
                &std::iter::once("bash".to_string())
                    .chain(argv[at + 1..].iter().cloned())
                    .collect::<Vec<_>>(),
            ),
            None => argv
                .iter()
                .filter_map(|a| a.strip_prefix("--shell="))
                .map(|c| Inner::Argv(vec![c.to_string()]))
                .collect(),
        },
        // `expect -c 'spawn CMD; …'`: the spawned commands
        "expect" => argv
            .windows(2)
            .filter(|w| w[0] == "-c")
            .flat_map(|w| {
                w[1].split([';', '\n'])
                    .filter_map(|stmt| {
                        let stmt = stmt.trim();
                        stmt.strip_prefix("spawn ")
                            .or_else(|| stmt.strip_prefix("exec "))
                            .map(|c| Inner::Script(c.trim().to_string()))
                    })
                    .collect::<Vec<_>>()
            })
            .collect(),
        // options whose value is a program (`tar --to-command=CMD`, `rsync -e CMD`, `man -P CMD`,
        // `zip -TT CMD`) are in the options table, `rules/options/programs.toml`; make's
        // `SHELL=CMD` (every recipe line runs through it) and ssh's `-o ProxyCommand=CMD` stay
        // here
        "make" | "gmake" | "bmake" | "remake" => option_programs(argv, &[], &["SHELL="]),
        "scp" | "sftp" => ssh_option_programs(argv),
        // project and environment runners: `poetry run CMD`, `uv run CMD`, `bundle exec CMD`,
        // `conda run -n ENV CMD`, `npm exec -- CMD`, `nix develop -c CMD`, `nix-shell --run CMD`
        "poetry" | "pipenv" | "pdm" | "rye" | "hatch" | "uv" | "bundle" | "conda" | "mamba"
        | "micromamba" | "pixi"
            if argv
                .get(skip_opts(argv, 1, RUNNER_VALUE))
                .is_some_and(|s| s == "run" || s == "exec") =>
        {
            let at = skip_opts(argv, 1, RUNNER_VALUE);
            one(rest(argv, skip_opts(argv, at + 1, RUNNER_VALUE)))
        }
        "npm" | "pnpm" if argv.get(1).is_some_and(|s| s == "exec" || s == "x") => {
            match argv.iter().position(|a| a == "-c" || a == "--call") {
                Some(c) => one(argv.get(c + 1).map(|s| Inner::Script(s.clone()))),
                None => one(rest(
                    argv,
                    skip_opts(argv, 2, &["-p", "--package", "-w", "--workspace"]),
                )),
            }
        }
        "npx" if argv.iter().any(|a| a == "-c" || a == "--call") => {
            let c = argv
                .iter()
                .position(|a| a == "-c" || a == "--call")
                .unwrap_or(0);
            one(argv.get(c + 1).map(|s| Inner::Script(s.clone())))
        }
        "pnpm" | "yarn" if argv.get(1).is_some_and(|s| s == "dlx") => {
            one(rest(argv, skip_opts(argv, 2, &["-p", "--package"])))
        }
        // Node's tree deleters are `rm -rf` by another name: judged as that, so every rm rule
        // (root, home, system directories, outside the workspace) applies
        "rimraf" | "del-cli" if argv.len() > 1 => {
            let mut rm = vec!["rm".to_string(), "-rf".to_string()];
            rm.extend(argv[1..].iter().cloned());
            vec![Inner::Argv(rm)]
        }
        "nix-shell" => argv
            .windows(2)
            .filter(|w| w[0] == "--run" || w[0] == "--command")
            .map(|w| Inner::Script(w[1].clone()))
            .collect(),
        "nix"
            if argv
                .get(1)
                .is_some_and(|s| matches!(s.as_str(), "develop" | "shell")) =>
        {
            match argv.iter().position(|a| a == "-c" || a == "--command") {
                Some(c) => one(rest(argv, c + 1)),
                None => Vec::new(),
            }
        }
        // remote and machine runners: the command runs on another machine or container, like
        // `ssh host CMD` and `docker exec`
        "lxc" | "incus" | "multipass" if argv.get(1).is_some_and(|s| s == "exec") => {
            match argv.iter().position(|a| a == "--") {
                Some(at) => one(rest(argv, at + 1)),
                None => Vec::new(),
            }
        }
        "vagrant" if argv.get(1).is_some_and(|s| s == "ssh") => argv
            .windows(2)
            .filter(|w| w[0] == "-c" || w[0] == "--command")
            .map(|w| Inner::Script(w[1].clone()))
            .collect(),
        "gcloud" if argv.iter().any(|a| a == "ssh") => argv
            .iter()
            .enumerate()
            .filter_map(|(i, a)| {
                if a == "--command" {
                    argv.get(i + 1).map(|c| Inner::Script(c.clone()))
                } else {
                    a.strip_prefix("--command=")
                        .map(|c| Inner::Script(c.to_string()))
                }
            })
            .collect(),
        // `az vm run-command invoke … --scripts LINE…` runs each LINE in the VM's shell
        "az" if argv.iter().any(|a| a == "run-command") => {
            let mut out = Vec::new();
            let mut on = false;
            for a in &argv[1..] {
                if let Some(v) = a.strip_prefix("--scripts=") {
                    out.push(Inner::Script(v.to_string()));
                    on = false;
                } else if a == "--scripts" || a == "--script" {
                    on = true;
                } else if a.starts_with("--") {
                    on = false;
                } else if on {
                    out.push(Inner::Script(a.clone()));
                }
            }
            out
        }
        // `ansible HOSTS -m shell|command|raw -a CMD` (the default module is `command`)
        "ansible" => {
            let module = argv
                .windows(2)
                .find(|w| w[0] == "-m" || w[0] == "--module-name")
                .map(|w| w[1].trim_start_matches("ansible.builtin.").to_string());
            if module
                .as_deref()
                .is_some_and(|m| !matches!(m, "shell" | "command" | "raw"))
            {
                return Vec::new();
            }
            argv.windows(2)
                .filter(|w| w[0] == "-a" || w[0] == "--args")
                .map(|w| Inner::Script(w[1].clone()))
                .collect()
        }
        // `salt TARGET cmd.run CMD`
        "salt" | "salt-call" | "salt-ssh" => match argv
            .iter()
            .position(|a| a == "cmd.run" || a == "cmd.shell" || a == "cmd.script")
        {
            Some(at) if argv[at] != "cmd.script" => one(joined(argv, at + 1)),
            _ => Vec::new(),
        },
        "heroku"
            if argv
                .get(1)
                .is_some_and(|s| s == "run" || s == "run:detached") =>
        {
            one(joined(
                argv,
                skip_opts(
                    argv,
                    2,
                    &[
                        "-a", "--app", "-r", "--remote", "-s", "--size", "-e", "--env", "--type",
                    ],
                ),
            ))
        }
        "kubectl" | "oc" => {
            // `kubectl exec POD -- CMD`, `kubectl run NAME --image=X -- CMD`, `kubectl debug … -- CMD`
            let runs = argv
                .iter()
                .skip(1)
                .find(|a| !a.starts_with('-'))
                .is_some_and(|s| matches!(s.as_str(), "exec" | "run" | "debug"));
            match argv.iter().position(|a| a == "--") {
                Some(at) if runs => one(rest(argv, at + 1)),
                _ => Vec::new(),
            }
        }
        "find" => find_exec(argv),
        // `fd … -x CMD [;]` / `-X CMD`: CMD runs on each result (or all of them); the search
        // itself is judged by the fs rules on the fd command line
        "fd" | "fdfind" => match argv.iter().position(|a| crate::readonly::is_fd_exec(a)) {
            Some(at) => {
                let end = argv[at + 1..]
                    .iter()
                    .position(|a| a == ";")
                    .map_or(argv.len(), |p| at + 1 + p);
                one((at + 1 < end).then(|| Inner::Argv(argv[at + 1..end].to_vec())))
            }
            None => Vec::new(),
        },
        "git" => {
            let mut out = git_programs(argv);
            out.extend(git_subcommand_programs(argv));
            out
        }
        // the regular wrappers (`sudo`, `nice`, `timeout`, `nohup`, …) are data:
        // `rules/options/wrappers.toml`
        _ => {
            if let Some(w) = wrapper_table::entry(name) {
                return w.inner(argv);
            }
            if is_loader(name) {
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
                return one(rest(argv, at));
            }
            match lang_of(name) {
                Some(lang) => interpreter(argv, lang),
                None if name == "sed" => sed_script(argv),
                None => Vec::new(),
            }
        }
    }
}

/// `tmux new-session … CMD`, `tmux new-window CMD`, `tmux run-shell CMD`, `tmux send-keys … CMD
/// Enter`: the shell command tmux runs or types into a pane.
fn tmux_command(argv: &[String]) -> Vec<Inner> {
    // global options before the subcommand
    let sub_at = skip_opts(argv, 1, &["-L", "-S", "-f", "-c", "-T"]);
    let Some(sub) = argv.get(sub_at) else {
        return Vec::new();
    };
    let with_value = [
        "-s", "-n", "-t", "-c", "-x", "-y", "-e", "-F", "-l", "-f", "-N", "-b",
    ];
    match sub.as_str() {
        "new-session" | "new" | "new-window" | "neww" | "split-window" | "splitw"
        | "respawn-pane" | "respawnp" | "respawn-window" | "respawnw" | "run-shell" | "run" => {
            one_script(joined(argv, skip_opts(argv, sub_at + 1, &with_value)))
        }
        "send-keys" | "send" => {
            let at = skip_opts(argv, sub_at + 1, &with_value);
            let keys: Vec<&str> = argv[at.min(argv.len())..]
                .iter()
                .map(String::as_str)
                .filter(|k| !matches!(*k, "Enter" | "C-m" | "KPEnter" | "C-j"))
                .collect();
            if keys.is_empty() {
                Vec::new()
            } else {
                vec![Inner::Script(keys.join(" "))]
            }
        }
        _ => Vec::new(),
    }
}

fn one_script(x: Option<Inner>) -> Vec<Inner> {
    x.into_iter().collect()
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
pub fn git_programs(argv: &[String]) -> Vec<Inner> {
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

/// Commands git subcommands run: `submodule foreach CMD`, `rebase --exec CMD`, `bisect run
/// CMD…`, `filter-branch --tree-filter CMD` (and the other filters), `difftool -x CMD`.
fn git_subcommand_programs(argv: &[String]) -> Vec<Inner> {
    let at = skip_opts(
        argv,
        1,
        &[
            "-C",
            "-c",
            "--git-dir",
            "--work-tree",
            "--namespace",
            "--exec-path",
            "--config-env",
        ],
    );
    let Some(sub) = argv.get(at).map(String::as_str) else {
        return Vec::new();
    };
    match sub {
        "submodule" => {
            let f = skip_opts(argv, at + 1, &[]);
            if argv.get(f).is_some_and(|a| a == "foreach") {
                one_script(joined(argv, skip_opts(argv, f + 1, &[])))
            } else {
                Vec::new()
            }
        }
        "bisect" if argv.get(at + 1).is_some_and(|a| a == "run") => {
            rest(argv, at + 2).into_iter().collect()
        }
        "rebase" | "filter-branch" | "difftool" | "mergetool" => {
            let names: &[&str] = match sub {
                "rebase" => &["-x", "--exec"],
                "filter-branch" => &[
                    "--tree-filter",
                    "--index-filter",
                    "--msg-filter",
                    "--commit-filter",
                    "--env-filter",
                    "--parent-filter",
                    "--tag-name-filter",
                ],
                _ => &["-x", "--extcmd", "--tool-cmd"],
            };
            // from the subcommand on, which `option_programs` skips like a program name
            argv.get(at..)
                .map_or_else(Vec::new, |sub_argv| option_programs(sub_argv, names, &[]))
        }
        _ => Vec::new(),
    }
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
        Lang::Shell => &[],
        Lang::Python => &["-c"],
        Lang::Perl => &["-e", "-E"],
        Lang::Ruby => &["-e"],
        Lang::Node => &["-e", "--eval", "-p", "--print"],
        Lang::Php => &["-r"],
        Lang::Lua => &["-e"],
        Lang::Other => &["-e", "-c", "-Command", "-command", "-EncodedCommand"],
        Lang::Awk | Lang::Sed | Lang::Sql | Lang::Make => &[],
    };
    if lang == Lang::Awk {
        return awk_program(argv);
    }
    if lang == Lang::Shell {
        return shell_invocation(argv);
    }
    let mut i = 1;
    while i < argv.len() {
        let a = argv[i].as_str();
        // `deno eval CODE`, `deno eval --print CODE`, `bun -e`
        if lang == Lang::Node && i == 1 && a == "eval" {
            let at = skip_opts(argv, 2, &["--ext", "--import-map", "--config", "-c"]);
            return argv
                .get(at)
                .map(|c| Inner::Code {
                    lang,
                    code: c.clone(),
                })
                .into_iter()
                .collect();
        }
        // `deno run [opts] -` / `bun run -`: the program comes from standard input
        if lang == Lang::Node && i == 1 && a == "run" {
            let at = skip_opts(
                argv,
                2,
                &["--ext", "--import-map", "--config", "-c", "--env-file"],
            );
            return if argv.get(at).is_some_and(|s| s == "-") {
                vec![Inner::ReadsStdin(lang)]
            } else {
                Vec::new()
            };
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
        // a short option carrying its value (`perl -MLWP::Simple`, `ruby -rjson`,
        // `python3 -Wignore`) is one option, not a cluster of flags
        if a.starts_with('-') && !a.starts_with("--") && a.len() > 2 {
            let opt = a.as_bytes()[1];
            let attached: &[u8] = match lang {
                Lang::Perl => b"MmIxdDC",
                Lang::Ruby => b"rIECx",
                Lang::Python => b"WXm",
                _ => b"",
            };
            if attached.contains(&opt) {
                if lang == Lang::Python && opt == b'm' {
                    // `python3 -mpkg`: runs a module
                    return Vec::new();
                }
                i += 1;
                continue;
            }
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

/// `sh [options] [-c] …`: with `c` anywhere among the short options, the first operand is the
/// script; with `-s`, `-` or no operand the shell reads its script from stdin.
fn shell_invocation(argv: &[String]) -> Vec<Inner> {
    let mut c = false;
    let mut stdin = false;
    let mut i = 1;
    while i < argv.len() {
        let a = argv[i].as_str();
        if a == "--" {
            i += 1;
            break;
        }
        if a == "-" {
            stdin = true;
            i += 1;
            break;
        }
        if matches!(a, "-o" | "+o" | "-O" | "+O" | "--rcfile" | "--init-file") {
            i += 2;
            continue;
        }
        if a.starts_with("--") {
            i += 1;
            continue;
        }
        if (a.starts_with('-') || a.starts_with('+')) && a.len() > 1 {
            if let Some(flags) = a.strip_prefix('-') {
                c |= flags.contains('c');
                stdin |= flags.contains('s');
            }
            i += 1;
            continue;
        }
        break;
    }
    if c {
        return argv
            .get(i)
            .map(|s| Inner::Script(s.clone()))
            .into_iter()
            .collect();
    }
    if stdin || i >= argv.len() || is_stdin_path(&argv[i]) {
        return vec![Inner::ReadsStdin(Lang::Shell)];
    }
    // a script file: its contents are not known here
    Vec::new()
}

/// Paths that name the process's own standard input.
pub fn is_stdin_path(p: &str) -> bool {
    matches!(p, "/dev/stdin" | "/dev/fd/0" | "/proc/self/fd/0")
}

/// Whether `long` (without dashes) is an accepted abbreviation of `full`.
fn abbreviates(long: &str, full: &str, min: usize) -> bool {
    long.len() >= min && full.starts_with(long)
}

/// The command `su`/`runuser` runs: `-c CMD`, `-lcCMD`, `--command[=]CMD` (abbreviations too),
/// `--session-command`; options may follow operands; the last one wins; `--` ends options.
fn su_command(argv: &[String]) -> Option<String> {
    let mut cmd = None;
    let mut i = 1;
    while i < argv.len() {
        let a = argv[i].as_str();
        if a == "--" {
            break;
        }
        if let Some(long) = a.strip_prefix("--") {
            let (name, val) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (long, None),
            };
            let is_cmd = abbreviates(name, "command", 1) || abbreviates(name, "session-command", 2);
            let takes = is_cmd
                || [
                    "group",
                    "supp-group",
                    "shell",
                    "whitelist-environment",
                    "user",
                ]
                .iter()
                .any(|f| abbreviates(name, f, 2));
            if takes {
                let v = match val {
                    Some(v) => Some(v),
                    None => {
                        i += 1;
                        argv.get(i).cloned()
                    }
                };
                if is_cmd {
                    cmd = v;
                }
            }
            i += 1;
            continue;
        }
        if a.starts_with('-')
            && a.len() > 1
            && let Some(('c', v)) = cluster_value(argv, &mut i, "cgGswu")
        {
            cmd = v;
        }
        i += 1;
    }
    cmd
}

/// Whether `su`/`runuser` without a command starts a shell (not `--help`, `--version`).
/// With `--` or more than one operand, the words after the user go to the shell as arguments
/// (a script file or options), so what runs is not read from standard input.
fn su_opens_shell(argv: &[String]) -> bool {
    let mut operands = 0;
    let mut i = 1;
    while i < argv.len() {
        match argv[i].as_str() {
            "-h" | "--help" | "-V" | "--version" | "--" => return false,
            "-s"
            | "-g"
            | "-G"
            | "-w"
            | "--shell"
            | "--group"
            | "--supp-group"
            | "--whitelist-environment" => i += 1,
            "-" => {}
            a if a.starts_with('-') => {}
            _ => operands += 1,
        }
        i += 1;
    }
    operands <= 1
}

/// In a short-option cluster (`-lc CMD`, `-iSvalue`), the first option that takes a value
/// (one of `takes`) and its value: the rest of the cluster, or else the next argument, in which
/// case `i` moves onto it.
fn cluster_value(argv: &[String], i: &mut usize, takes: &str) -> Option<(char, Option<String>)> {
    let a = argv.get(*i)?;
    let (k, ch) = a
        .char_indices()
        .skip(1)
        .find(|(_, ch)| takes.contains(*ch))?;
    let attached = &a[k + ch.len_utf8()..];
    if attached.is_empty() {
        *i += 1;
        return Some((ch, argv.get(*i).cloned()));
    }
    Some((ch, Some(attached.to_string())))
}

/// What `env` runs: options stop at the first operand; `NAME=VALUE` operands are skipped;
/// `-S`/`--split-string` (attached, clustered or abbreviated) splits its value into words that
/// env then reads as if they were on its command line; `-0`/`--null` with a command is refused.
fn env_inner(argv: &[String]) -> Option<Inner> {
    env_inner_at(argv, 0)
}

fn env_inner_at(argv: &[String], nesting: usize) -> Option<Inner> {
    if nesting > 4 {
        return None;
    }
    let null = argv
        .iter()
        .skip(1)
        .take_while(|a| a.starts_with('-') && *a != "--")
        .any(|a| {
            a == "-0"
                || (a.starts_with('-') && !a.starts_with("--") && a.contains('0'))
                || a.strip_prefix("--")
                    .is_some_and(|l| abbreviates(l, "null", 1))
        });
    let inner = env_operands(argv, nesting)?;
    if null {
        return None;
    }
    Some(inner)
}

fn env_operands(argv: &[String], nesting: usize) -> Option<Inner> {
    let mut i = 1;
    while i < argv.len() {
        let a = argv[i].as_str();
        if a == "--" {
            i += 1;
            break;
        }
        if let Some(long) = a.strip_prefix("--") {
            let (name, val) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (long, None),
            };
            if abbreviates(name, "split-string", 1) {
                let v = val.or_else(|| {
                    i += 1;
                    argv.get(i).cloned()
                })?;
                return split_string(&v, argv, i + 1, nesting);
            }
            if val.is_none()
                && ["unset", "chdir", "argv0"]
                    .iter()
                    .any(|f| abbreviates(name, f, 1))
            {
                i += 1;
            }
            i += 1;
            continue;
        }
        if a.starts_with('-') && a.len() > 1 {
            if let Some((ch, v)) = cluster_value(argv, &mut i, "uCSa") {
                // an option missing its value makes env fail before running anything
                let v = v?;
                if ch == 'S' {
                    return split_string(&v, argv, i + 1, nesting);
                }
            }
            i += 1;
            continue;
        }
        break;
    }
    while i < argv.len() && argv[i].contains('=') && !argv[i].starts_with('=') {
        i += 1;
    }
    rest(argv, i)
}

/// `env -S STRING ARGS…`: STRING is split into words (quotes, `\_` as a separator, `\t`,
/// `\c` to stop) and read by env as if those words came first on its command line.
fn split_string(value: &str, argv: &[String], after: usize, nesting: usize) -> Option<Inner> {
    let mut words = vec!["env".to_string()];
    words.extend(env_split(value));
    words.extend(argv.iter().skip(after).cloned());
    env_inner_at(&words, nesting + 1)
}

fn env_split(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut has = false;
    let mut chars = s.chars().peekable();
    let (mut single, mut double) = (false, false);
    while let Some(c) = chars.next() {
        match c {
            '\'' if !double => {
                single = !single;
                has = true;
            }
            '"' if !single => {
                double = !double;
                has = true;
            }
            '\\' if !single => match chars.next() {
                Some('_') if !double => {
                    if has || !cur.is_empty() {
                        out.push(std::mem::take(&mut cur));
                    }
                    has = false;
                }
                Some('_') => cur.push(' '),
                Some('t') => cur.push('\t'),
                Some('n') => cur.push('\n'),
                Some('c') => break,
                Some(o) => cur.push(o),
                None => {}
            },
            c if c.is_whitespace() && !single && !double => {
                if has || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                has = false;
            }
            c => cur.push(c),
        }
    }
    if has || !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// `docker exec [opts] CONTAINER CMD…` and `docker run [opts] IMAGE CMD…` (also podman,
/// nerdctl, and the `container` forms).
const RUNNER_VALUE: &[&str] = &[
    "-n",
    "--name",
    "-p",
    "--prefix",
    "--python",
    "--with",
    "--package",
    "--extra",
    "--group",
    "--env-file",
    "--directory",
    "--project",
    "--from",
    "-e",
    "--environment",
    "--gemfile",
    "--manifest-path",
    "-C",
];

/// `docker compose [opts] exec|run [opts] SERVICE CMD…` (`at` is the word after `compose`).
fn compose_command(argv: &[String], at: usize) -> Option<Inner> {
    let at = skip_opts(
        argv,
        at,
        &[
            "-f",
            "--file",
            "-p",
            "--project-name",
            "--env-file",
            "--profile",
            "--project-directory",
            "--ansi",
            "--parallel",
            "--progress",
        ],
    );
    if !argv.get(at).is_some_and(|s| s == "exec" || s == "run") {
        return None;
    }
    let service = skip_opts(
        argv,
        at + 1,
        &[
            "-e",
            "--env",
            "-u",
            "--user",
            "-w",
            "--workdir",
            "--index",
            "--name",
            "-p",
            "--publish",
            "-v",
            "--volume",
            "--entrypoint",
            "-l",
            "--label",
        ],
    );
    rest(argv, service + 1)
}

/// The first operand of `bwrap`: its options take one value, or two for the bind, symlink
/// and setenv families.
fn bwrap_operand(argv: &[String]) -> usize {
    let mut i = 1;
    while i < argv.len() {
        let a = argv[i].as_str();
        if a == "--" {
            return i + 1;
        }
        if !a.starts_with("--") {
            return i;
        }
        i += match a {
            "--bind" | "--ro-bind" | "--dev-bind" | "--bind-try" | "--ro-bind-try"
            | "--dev-bind-try" | "--symlink" | "--setenv" | "--file" | "--bind-data"
            | "--ro-bind-data" | "--chmod" => 3,
            "--dev" | "--proc" | "--tmpfs" | "--dir" | "--chdir" | "--unsetenv" | "--uid"
            | "--gid" | "--hostname" | "--remount-ro" | "--lock-file" | "--seccomp"
            | "--info-fd" | "--userns" | "--userns2" | "--pidns" | "--exec-label"
            | "--file-label" | "--sync-fd" | "--block-fd" | "--cap-add" | "--cap-drop"
            | "--perms" | "--size" | "--args" | "--json-status-fd" | "--mqueue"
            | "--overlay-src" | "--argv0" => 2,
            _ => 1,
        };
    }
    i
}

/// Options whose value is a program or a shell command (`name VALUE`, `name=VALUE`), and
/// prefixes after which the rest of the word is one (`--checkpoint-action=exec=CMD`).
fn option_programs(argv: &[String], names: &[&str], prefixes: &[&str]) -> Vec<Inner> {
    let mut out = Vec::new();
    for (i, a) in argv.iter().enumerate().skip(1) {
        if names.contains(&a.as_str()) {
            out.extend(argv.get(i + 1).map(|v| Inner::Script(v.clone())));
        } else if let Some(v) = names.iter().find_map(|n| {
            a.strip_prefix(n)
                .and_then(|r| r.strip_prefix('='))
                .filter(|_| n.starts_with("--"))
        }) {
            out.push(Inner::Script(v.to_string()));
        } else if let Some(v) = prefixes.iter().find_map(|p| a.strip_prefix(p)) {
            out.push(Inner::Script(v.to_string()));
        }
    }
    out
}

/// `-o ProxyCommand=CMD` / `-oProxyCommand CMD` / `-o LocalCommand=CMD` of ssh, scp, sftp.
fn ssh_option_programs(argv: &[String]) -> Vec<Inner> {
    let mut out = Vec::new();
    for (i, a) in argv.iter().enumerate().skip(1) {
        let opt = if a == "-o" {
            argv.get(i + 1).map(String::as_str)
        } else {
            a.strip_prefix("-o")
        };
        let Some(opt) = opt else { continue };
        let (k, v) = match opt.split_once(['=', ' ']) {
            Some((k, v)) => (k.trim(), v.trim()),
            None => continue,
        };
        if k.eq_ignore_ascii_case("ProxyCommand") || k.eq_ignore_ascii_case("LocalCommand") {
            out.push(Inner::Script(v.to_string()));
        }
    }
    out
}

fn container_command(argv: &[String]) -> Option<Inner> {
    let mut i = 1;
    while i < argv.len() && argv[i].starts_with('-') {
        i += if matches!(
            argv[i].as_str(),
            "-H" | "--host" | "--context" | "-c" | "--config" | "-l" | "--log-level"
        ) {
            2
        } else {
            1
        };
    }
    let mut sub = argv.get(i)?.as_str();
    if sub == "container" {
        i += 1;
        sub = argv.get(i)?.as_str();
    }
    if !matches!(sub, "exec" | "run" | "create") {
        return None;
    }
    const WITH_VALUE: &[&str] = &[
        "-e",
        "--env",
        "-u",
        "--user",
        "-w",
        "--workdir",
        "--name",
        "-v",
        "--volume",
        "-p",
        "--publish",
        "--network",
        "--net",
        "--entrypoint",
        "--env-file",
        "-l",
        "--label",
        "--mount",
        "--platform",
        "--restart",
        "--cpus",
        "-m",
        "--memory",
        "-h",
        "--hostname",
        "--add-host",
        "--device",
        "--cap-add",
        "--cap-drop",
        "--security-opt",
        "--ulimit",
        "--log-driver",
        "--log-opt",
        "--pid",
        "--ipc",
        "--userns",
        "--tmpfs",
        "--gpus",
        "--dns",
        "--expose",
        "--health-cmd",
        "--stop-signal",
        "--detach-keys",
        "--runtime",
        "--shm-size",
        "--ip",
        "--link",
        "--volumes-from",
        "--cidfile",
        "-a",
        "--attach",
        "--pull",
        "--group-add",
        "--label-file",
        "--sysctl",
        "--stop-timeout",
        "--cgroupns",
        "--uts",
        "--cgroup-parent",
        "--memory-swap",
        "--cpu-shares",
        "-c",
        "--cpuset-cpus",
        "--pod",
    ];
    let at = skip_opts(argv, i + 1, WITH_VALUE);
    // the container or image, then the command
    rest(argv, at + 1)
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
        assert_eq!(unwrap(&v("env -i A=1 rm x")), vec![Inner::Argv(v("rm x"))]);
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
            unwrap(&v("ssh host -- rm -rf /")),
            vec![Inner::Script("rm -rf /".into())]
        );
        assert_eq!(
            unwrap(&v("ssh host -t -p 22 sudo reboot")),
            vec![Inner::Script("sudo reboot".into())]
        );
        assert_eq!(
            unwrap(&v("ssh host -N")),
            vec![Inner::ReadsStdin(Lang::Shell)]
        );
        assert_eq!(
            unwrap(&v("/lib64/ld-linux-x86-64.so.2 /bin/rm x")),
            vec![Inner::Argv(v("/bin/rm x"))]
        );
        assert_eq!(unwrap(&v("command -v rm")), vec![]);
        assert_eq!(unwrap(&v("timeout --foreground echo sh -c reboot")), vec![]);
        assert_eq!(unwrap(&v("nice -n echo reboot")), vec![]);
        assert_eq!(
            unwrap(&v("docker exec -it -u root web rm -rf /data")),
            vec![Inner::Argv(v("rm -rf /data"))]
        );
        assert_eq!(
            unwrap(&v("docker run --rm -v /:/h alpine rm -rf /h")),
            vec![Inner::Argv(v("rm -rf /h"))]
        );
        assert_eq!(unwrap(&v("docker ps")), vec![]);
        // options that run a program moved to the options table (`rules/options/`)
        let runs = |c: &str| crate::options::Use::Runs {
            command: c.into(),
            hidden: false,
        };
        assert_eq!(unwrap(&v("man -P cat ls")), vec![]);
        assert_eq!(
            crate::options::uses("man", &v("man -P cat ls")),
            vec![runs("cat")]
        );
        assert_eq!(
            crate::options::uses("zip", &v("zip -T -TT unzip-check x.zip a")),
            vec![runs("unzip-check")]
        );
        assert_eq!(
            unwrap(&v("make SHELL=/bin/zsh test")),
            vec![Inner::Script("/bin/zsh".into())]
        );
        assert_eq!(unwrap(&v("make -j4 test")), vec![]);
        assert_eq!(
            unwrap(&v(
                "az vm run-command invoke -g rg -n vm --command-id RunShellScript --scripts reboot --parameters a"
            )),
            vec![Inner::Script("reboot".into())]
        );
        assert_eq!(
            unwrap(&v("fd -e sh . scripts -x sh -c x ;")),
            vec![Inner::Argv(v("sh -c x"))]
        );
        assert_eq!(unwrap(&v("fd -e sh")), vec![]);
        assert_eq!(
            unwrap(&v("rimraf --glob dist/*.js")),
            vec![Inner::Argv(v("rm -rf --glob dist/*.js"))]
        );
        assert_eq!(unwrap(&v("rimraf")), vec![]);
        assert_eq!(
            unwrap(&v("npx -y rimraf /srv/data")),
            vec![Inner::Argv(v("rimraf /srv/data"))]
        );
        assert_eq!(
            unwrap(&v("pnpm dlx --package=x del-cli ~")),
            vec![Inner::Argv(v("del-cli ~"))]
        );
        assert_eq!(
            unwrap(&v("kubectl exec web -- psql -c x")),
            vec![Inner::Argv(v("psql -c x"))]
        );
        assert_eq!(unwrap(&v("kubectl get pods -- x")), vec![]);
        assert_eq!(unwrap(&v("ssh host")), vec![Inner::ReadsStdin(Lang::Shell)]);
        assert_eq!(unwrap(&v("sudo -i")), vec![Inner::ReadsStdin(Lang::Shell)]);
        assert_eq!(unwrap(&v("sudo -l")), vec![]);
        assert_eq!(
            unwrap(&v("su - alice")),
            vec![Inner::ReadsStdin(Lang::Shell)]
        );
        assert_eq!(unwrap(&v("su --help")), vec![]);
    }

    #[test]
    fn shells_and_interpreters() {
        for shell in [
            "bash -ec",
            "sh -cx",
            "sh -ce --",
            "bash -c -o nounset",
            "bash -c -x",
            "bash --norc -c",
        ] {
            let mut a = v(shell);
            a.push("rm x".to_string());
            assert_eq!(unwrap(&a), vec![Inner::Script("rm x".into())], "{shell}");
        }
        for su in [
            "su -lc",
            "su --session-command",
            "su --comm",
            "runuser --command",
            "su root -c",
        ] {
            let mut a = v(su);
            a.push("reboot".to_string());
            assert_eq!(unwrap(&a), vec![Inner::Script("reboot".into())], "{su}");
        }
        assert_eq!(
            unwrap(&v("su --command=x --command=reboot root")),
            vec![Inner::Script("reboot".into())]
        );
        assert_eq!(unwrap(&v("su -- root --command reboot")), vec![]);
        assert_eq!(unwrap(&v("env -Sreboot")), vec![Inner::Argv(v("reboot"))]);
        assert_eq!(unwrap(&v("env -iSreboot")), vec![Inner::Argv(v("reboot"))]);
        assert_eq!(
            unwrap(&v("env -S/bin/echo reboot")),
            vec![Inner::Argv(v("/bin/echo reboot"))]
        );
        assert_eq!(
            unwrap(&v("env --split=reboot")),
            vec![Inner::Argv(v("reboot"))]
        );
        assert_eq!(unwrap(&v("env -iC /tmp sh")), vec![Inner::Argv(v("sh"))]);
        assert_eq!(
            unwrap(&v("env FOO=1 --s reboot")),
            vec![Inner::Argv(v("--s reboot"))]
        );
        assert_eq!(unwrap(&v("bash")), vec![Inner::ReadsStdin(Lang::Shell)]);
        assert_eq!(unwrap(&v("bash script.sh")), vec![]);
        assert_eq!(
            unwrap(&v("bash /dev/stdin")),
            vec![Inner::ReadsStdin(Lang::Shell)]
        );
        assert_eq!(
            unwrap(&v(". /dev/stdin")),
            vec![Inner::ReadsStdin(Lang::Shell)]
        );
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
