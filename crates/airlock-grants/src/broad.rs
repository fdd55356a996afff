//! Scopes too broad to grant without the admin layer's say-so: a prefix that is empty, `*`, or
//! only a shell, interpreter or wrapper (with its options), an interpreter with its inline-code
//! flag (`bash -c`, `python3 -c`, `node -e`), a remote or container shell (`ssh`, `docker
//! exec`), and a tool the caller marks dangerous without any argument constraint.

use crate::GrantError;
use crate::scope::Scope;

/// Shells: a prefix that ends at one of them runs anything.
const SHELLS: &[&str] = &[
    "sh",
    "bash",
    "zsh",
    "dash",
    "ksh",
    "mksh",
    "fish",
    "csh",
    "tcsh",
    "ash",
    "busybox",
    "rbash",
    "nu",
    "elvish",
    "xonsh",
    "pwsh",
    "powershell",
    "cmd",
    "cmd.exe",
];

/// Interpreters: a prefix that ends at one of them (or at its inline-code flag) runs anything.
const INTERPRETERS: &[&str] = &[
    "python",
    "pypy",
    "pypy3",
    "perl",
    "ruby",
    "irb",
    "node",
    "nodejs",
    "php",
    "deno",
    "bun",
    "lua",
    "luajit",
    "tclsh",
    "wish",
    "osascript",
    "awk",
    "gawk",
    "mawk",
    "nawk",
    "Rscript",
    "R",
    "julia",
    "guile",
    "racket",
    "sbcl",
    "ghci",
    "scala",
    "jshell",
    "groovy",
    "expect",
    "gdb",
];

/// Wrappers: they run the command that follows them, so they narrow nothing by themselves.
const WRAPPERS: &[&str] = &[
    "sudo",
    "doas",
    "su",
    "runuser",
    "pkexec",
    "env",
    "xargs",
    "eval",
    "exec",
    "command",
    "builtin",
    "nohup",
    "nice",
    "ionice",
    "timeout",
    "time",
    "stdbuf",
    "setsid",
    "chroot",
    "nsenter",
    "unshare",
    "flock",
    "watch",
    "strace",
    "ltrace",
    "chrt",
    "taskset",
    "script",
    "sg",
    "newgrp",
    "systemd-run",
    "firejail",
    "bwrap",
    "proot",
    "fakeroot",
];

/// Commands that hand the rest of the line to another machine or container's shell.
const REMOTE: &[&str] = &["ssh", "mosh", "rsh", "telnet", "sshpass"];
const CONTAINER: &[&str] = &[
    "docker", "podman", "nerdctl", "kubectl", "oc", "lxc", "crictl",
];
const CONTAINER_RUN: &[&str] = &["exec", "run", "attach", "debug", "shell", "container"];

/// Flags that make an interpreter or shell run code given on the command line (or stdin).
const CODE_FLAGS: &[&str] = &[
    "-c",
    "-e",
    "-E",
    "-r",
    "-p",
    "--eval",
    "--print",
    "--command",
    "--exec",
    "-",
    "eval",
];

/// The same for shells (`-e` is only errexit there); PowerShell's and cmd's spellings too.
const SHELL_CODE_FLAGS: &[&str] = &[
    "-c",
    "-s",
    "-",
    "-i",
    "--command",
    "-command",
    "-encodedcommand",
    "-enc",
    "-ec",
    "/c",
    "/k",
];

/// awk takes its program as its first operand unless given `-f FILE`.
const AWK: &[&str] = &["awk", "gawk", "mawk", "nawk"];

/// The program name without its directory, `.exe`, or version suffix (`python3.12` -> `python`).
/// Lower-cased: case-insensitive file systems run `BASH` as bash.
fn program(word: &str) -> String {
    let base = word
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or(word)
        .to_lowercase();
    let base = base.strip_suffix(".exe").unwrap_or(&base);
    base.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.' || c == '-')
        .to_string()
}

fn is_interpreter(w: &str) -> bool {
    let p = program(w);
    INTERPRETERS.contains(&p.as_str()) || SHELLS.contains(&p.as_str())
}

/// Refuses `scope` when it is over-broad. `dangerous_tool`: the caller (policy) says the
/// scope's tool must never be granted without argument constraints.
pub fn check_narrow(scope: &Scope, dangerous_tool: bool) -> Result<(), GrantError> {
    match scope {
        Scope::Exact { .. } => Ok(()),
        Scope::CommandPrefix { argv } => check_prefix(argv),
        Scope::Network { .. } => Ok(()),
        // Writing to `/` or a top-level directory opens too much at once.
        Scope::Write { path } => {
            if path.split('/').filter(|s| !s.is_empty()).count() < 2 {
                return Err(GrantError::TooBroad(format!(
                    "write access to {path:?} covers a whole top-level tree: name a narrower path"
                )));
            }
            Ok(())
        }
        Scope::Tool {
            tool, constraints, ..
        } => {
            if tool.is_empty() || tool.contains(['*', '?']) {
                return Err(GrantError::TooBroad(format!(
                    "tool name {tool:?} is empty or a pattern: name one tool"
                )));
            }
            if dangerous_tool && constraints.is_empty() {
                return Err(GrantError::TooBroad(format!(
                    "tool {tool} is marked dangerous and the scope constrains none of its arguments: add --arg constraints"
                )));
            }
            Ok(())
        }
    }
}

fn check_prefix(argv: &[String]) -> Result<(), GrantError> {
    let line = argv.join(" ");
    let too_broad = |why: &str| {
        Err(GrantError::TooBroad(format!(
            "the command prefix {line:?} {why}; grant a longer prefix or the exact command"
        )))
    };
    if argv.is_empty() || argv.iter().any(|w| w.is_empty() || w == "*") {
        return too_broad("is empty or a wildcard and would cover every command");
    }
    // A wrapper runs what follows its options: find the command after the last wrapper, option,
    // assignment or number (`sudo -u root apt`, `env A=1 make`, `timeout 5 make`). The word
    // right after an option may be that option's value, so it is not taken for the command.
    let rest: &[String] = if WRAPPERS.contains(&program(&argv[0]).as_str()) {
        let is_arg = |w: &String| {
            WRAPPERS.contains(&program(w).as_str())
                || w.starts_with('-')
                || w.contains('=')
                || w.starts_with(|c: char| c.is_ascii_digit())
        };
        let last = argv.iter().rposition(is_arg).unwrap_or(0);
        let after = &argv[last + 1..];
        let opt_value = argv[last].starts_with('-') && !argv[last].contains('=');
        if opt_value {
            after.get(1..).unwrap_or(&[])
        } else {
            after
        }
    } else {
        argv
    };
    let Some(first) = rest.first() else {
        return too_broad("is only a wrapper with its options, which runs whatever follows it");
    };
    let prog = program(first);
    if REMOTE.contains(&prog.as_str()) {
        return too_broad("hands the rest of the line to a remote shell");
    }
    if CONTAINER.contains(&prog.as_str())
        && rest
            .iter()
            .skip(1)
            .any(|w| CONTAINER_RUN.contains(&w.as_str()))
    {
        return too_broad("runs commands inside a container");
    }
    if AWK.contains(&prog.as_str()) && !rest.iter().any(|w| w == "-f") {
        return too_broad("gives awk its program on the command line");
    }
    if is_interpreter(first) {
        if rest.len() == 1 || rest[1..].iter().all(|w| w.starts_with('-')) {
            return too_broad("is only a shell or interpreter, which runs any code");
        }
        if rest[1..].iter().any(|w| is_code_flag(w, &prog)) {
            return too_broad("runs inline code given on the command line");
        }
    }
    Ok(())
}

/// `-c`, `-e`, … and short-option clusters holding one: for a shell `c` or `s` (`-ec`, `-xs`;
/// `-ex` is only errexit and xtrace), for an interpreter `c`, `e`, `E`, `r` or `p` (`-pe`).
fn is_code_flag(w: &str, prog: &str) -> bool {
    let shell = SHELLS.contains(&prog);
    if shell {
        let l = w.to_lowercase();
        // PowerShell takes any unambiguous abbreviation (`-e` for -EncodedCommand).
        let pwsh = matches!(prog, "pwsh" | "powershell")
            && l.len() > 1
            && "-encodedcommand".starts_with(&l);
        if SHELL_CODE_FLAGS.contains(&l.as_str()) || pwsh {
            return true;
        }
    } else if CODE_FLAGS.contains(&w) {
        return true;
    }
    let Some(cluster) = w
        .strip_prefix('-')
        .filter(|c| !c.starts_with('-') && c.len() > 1)
    else {
        return false;
    };
    if shell {
        cluster.contains(['c', 's'])
    } else {
        cluster.contains(['c', 'e', 'E', 'r', 'p'])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prefix(s: &str) -> Result<(), GrantError> {
        check_narrow(
            &Scope::CommandPrefix {
                argv: s.split_whitespace().map(String::from).collect(),
            },
            false,
        )
    }

    #[test]
    fn broad_prefixes_are_refused() {
        for bad in [
            "",
            "*",
            "bash",
            "/bin/bash",
            "bash -c",
            "bash -lc",
            "sh -ec",
            "BASH -c",
            "/usr/bin/Python3 -c",
            "bash -s",
            "bash -xs",
            "perl -pe",
            "pwsh -e",
            "powershell -EncodedCommand",
            "cmd /c",
            "python3",
            "python3.12 -c",
            "python -m",
            "node -e",
            "perl -e",
            "ruby -e",
            "php -r",
            "deno eval",
            "sudo",
            "sudo -u root",
            "sudo bash",
            "env",
            "env A=1",
            "env bash -c",
            "xargs",
            "eval",
            "exec",
            "ssh",
            "ssh prod",
            "ssh prod rm",
            "docker exec",
            "docker exec web",
            "kubectl exec -it pod",
            "nohup sh",
            "timeout 5 bash",
            "awk",
            "awk {print}",
            "sudo -u root bash",
            "sudo -E apt",
            "nice -n 10",
            "git *",
        ] {
            let r = prefix(bad);
            assert!(
                matches!(r, Err(GrantError::TooBroad(_))),
                "{bad:?} should be too broad: {r:?}"
            );
        }
    }

    #[test]
    fn narrow_prefixes_pass() {
        for ok in [
            "git push",
            "git",
            "cargo test",
            "python3 scripts/build.py",
            "bash ./deploy.sh",
            "bash -ex ./deploy.sh",
            "bash -e ./deploy.sh",
            "sudo apt update",
            "npm run build",
            "docker ps",
            "kubectl get pods",
            "node build.js",
            "python3 -m pip install",
            "sudo -u root apt update",
            "env A=1 make",
            "nice -n 10 make",
            "awk -f prog.awk",
        ] {
            assert!(prefix(ok).is_ok(), "{ok:?} should pass");
        }
    }

    #[test]
    fn dangerous_tools_need_constraints() {
        let bare = Scope::Tool {
            tool: "shell".into(),
            constraints: vec![],
            exact_fields: false,
        };
        assert!(check_narrow(&bare, false).is_ok());
        assert!(matches!(
            check_narrow(&bare, true),
            Err(GrantError::TooBroad(_))
        ));
    }
}
