//! The known read-only set: commands that only look, never change anything. A line made only of
//! these runs at tier 0 without asking anyone, which keeps people's attention for what matters.
//! Options that turn a reader into a writer (`find -delete`, `sed -i`, `git -c`) take a command
//! off the list.

use crate::unwrap::base;

/// Commands that are read-only whatever their arguments (apart from output redirection, which
/// the walker judges separately).
const ALWAYS: &[&str] = &[
    "ls",
    "ll",
    "la",
    "dir",
    "cat",
    "tac",
    "head",
    "tail",
    "less",
    "more",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "ag",
    "ack",
    "wc",
    "pwd",
    "echo",
    "printf",
    "which",
    "whereis",
    "whoami",
    "id",
    "groups",
    "date",
    "cal",
    "uname",
    "hostname",
    "df",
    "du",
    "free",
    "uptime",
    "ps",
    "pgrep",
    "pstree",
    "file",
    "stat",
    "tree",
    "sort",
    "uniq",
    "cut",
    "tr",
    "column",
    "fold",
    "fmt",
    "nl",
    "paste",
    "join",
    "comm",
    "jq",
    "yq",
    "diff",
    "cmp",
    "colordiff",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "true",
    "false",
    "test",
    "[",
    "[[",
    "sleep",
    "seq",
    "cd",
    "pushd",
    "popd",
    "type",
    "man",
    "help",
    "info",
    "history",
    "hexdump",
    "od",
    "strings",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "sha512sum",
    "b2sum",
    "cksum",
    "nproc",
    "lscpu",
    "lsblk",
    "lsusb",
    "lspci",
    "lsof",
    "locale",
    "tty",
    "arch",
    "getconf",
    "expr",
    "bc",
    "dc",
    "factor",
    "rev",
    "look",
    "zcat",
    "zgrep",
    "zless",
    "bzcat",
    "xzcat",
    "zstdcat",
    "w",
    "who",
    "last",
    "users",
    "vmstat",
    "iostat",
    "mpstat",
    "netstat",
    "ss",
    "dig",
    "nslookup",
    "host",
    "ping",
    "traceroute",
    "tracepath",
    "mtr",
    "whois",
    "cloc",
    "tokei",
    "fd",
    "fdfind",
    "bat",
    "batcat",
    "eza",
    "exa",
    "delta",
    "htop",
    "btop",
    "top",
    "env",
    "printenv",
    "set",
    "declare",
    "export",
    "alias",
    "unalias",
    "local",
    "readonly",
    "shift",
    "read",
    "wait",
    "jobs",
    "fg",
    "bg",
    "exit",
    "return",
    "break",
    "continue",
    "umask",
    "ulimit",
    "dmesg",
    "journalctl",
    "getent",
    "tput",
    "clear",
    "reset",
    "stty",
    "yes",
    "nohup",
    "tldr",
    "ldd",
    "nm",
    "objdump",
    "readelf",
    "size",
    "sha224sum",
    "sha384sum",
    "base32",
    "uuidgen",
    "mktemp",
    "xxd",
    "base64",
    "shellcheck",
    "pip-audit",
    "rustc",
    "awk",
    "gawk",
    "mawk",
    "sed",
    "find",
    "git",
    "xargs",
    "systemctl",
    "docker",
    "kubectl",
    "oc",
    "npm",
    "cargo",
    "go",
    "pip",
    "pip3",
    "brew",
    "apt",
    "apt-cache",
    "dpkg",
    "rpm",
    "helm",
    "terraform",
    "gh",
    "node",
    "python",
    "python3",
    "java",
    "ip",
];

/// Subcommands (first operand) that keep a multi-purpose tool read-only.
fn sub_ok(prog: &str, sub: &str, args: &[String]) -> bool {
    let has = |f: &str| args.iter().any(|a| a == f);
    match prog {
        "git" => match sub {
            "status" | "log" | "diff" | "show" | "rev-parse" | "ls-files" | "ls-tree" | "blame"
            | "describe" | "shortlog" | "grep" | "reflog" | "cat-file" | "rev-list"
            | "merge-base" | "name-rev" | "whatchanged" | "help" | "version" | "count-objects"
            | "check-ignore" | "show-ref" | "for-each-ref" | "var" | "fsck" => {
                !(sub == "reflog" && (has("expire") || has("delete")))
            }
            "branch" => {
                !args.iter().any(|a| {
                    matches!(
                        a.as_str(),
                        "-d" | "-D"
                            | "-m"
                            | "-M"
                            | "-c"
                            | "-C"
                            | "--delete"
                            | "--move"
                            | "--copy"
                            | "-f"
                            | "--force"
                            | "--set-upstream-to"
                            | "-u"
                            | "--unset-upstream"
                            | "--edit-description"
                    )
                }) && args.iter().filter(|a| !a.starts_with('-')).count() <= 1
            }
            "tag" => args.len() <= 1 || has("-l") || has("--list") || has("-v"),
            "remote" => {
                args.len() <= 1
                    || has("-v")
                    || args.get(1).is_some_and(|a| a == "show" || a == "get-url")
            }
            "config" => {
                has("--get")
                    || has("--list")
                    || has("-l")
                    || has("--get-all")
                    || has("--get-regexp")
            }
            "stash" => args.get(1).is_some_and(|a| a == "list" || a == "show"),
            "worktree" => args.get(1).is_some_and(|a| a == "list"),
            _ => false,
        },
        "systemctl" => matches!(
            sub,
            "status"
                | "list-units"
                | "list-unit-files"
                | "is-active"
                | "is-enabled"
                | "is-failed"
                | "show"
                | "cat"
                | "list-timers"
                | "list-sockets"
                | "list-dependencies"
        ),
        "docker" | "podman" => {
            matches!(
                sub,
                "ps" | "images"
                    | "inspect"
                    | "logs"
                    | "version"
                    | "info"
                    | "stats"
                    | "top"
                    | "port"
                    | "diff"
                    | "history"
                    | "search"
            ) || (sub == "image" && args.get(1).is_some_and(|a| a == "ls" || a == "inspect"))
                || (sub == "container"
                    && args
                        .get(1)
                        .is_some_and(|a| a == "ls" || a == "inspect" || a == "logs"))
                || (sub == "compose"
                    && args
                        .get(1)
                        .is_some_and(|a| a == "ps" || a == "logs" || a == "config"))
        }
        "kubectl" | "oc" => {
            matches!(
                sub,
                "get"
                    | "describe"
                    | "logs"
                    | "top"
                    | "explain"
                    | "version"
                    | "api-resources"
                    | "api-versions"
                    | "cluster-info"
            ) && !(sub == "get" && args.iter().any(|a| a.starts_with("secret")))
                || (sub == "config"
                    && args.get(1).is_some_and(|a| {
                        a.starts_with("get-") || a == "view" || a == "current-context"
                    }))
        }
        "helm" => matches!(
            sub,
            "list"
                | "ls"
                | "status"
                | "history"
                | "get"
                | "show"
                | "search"
                | "version"
                | "template"
                | "lint"
        ),
        "terraform" | "tofu" => {
            matches!(
                sub,
                "plan" | "show" | "validate" | "version" | "output" | "providers" | "fmt" | "graph"
            ) || (sub == "state" && args.get(1).is_some_and(|a| a == "list" || a == "show"))
        }
        "npm" | "pnpm" | "yarn" => matches!(
            sub,
            "ls" | "list"
                | "view"
                | "info"
                | "outdated"
                | "search"
                | "audit"
                | "why"
                | "explain"
                | "root"
                | "bin"
                | "prefix"
                | "help"
                | "-v"
                | "--version"
        ),
        "cargo" => {
            (sub != "fmt" || has("--check"))
                && matches!(
                    sub,
                    "check"
                        | "tree"
                        | "metadata"
                        | "search"
                        | "version"
                        | "--version"
                        | "-V"
                        | "clippy"
                        | "fmt"
                        | "locate-project"
                        | "pkgid"
                        | "verify-project"
                        | "info"
                )
        }
        // `go env -w|-u` writes the user's go configuration
        "go" => {
            matches!(sub, "version" | "env" | "list" | "vet" | "doc")
                && !(sub == "env" && (has("-w") || has("-u")))
        }
        "pip" | "pip3" => matches!(
            sub,
            "list" | "show" | "freeze" | "check" | "search" | "--version" | "-V"
        ),
        "brew" => matches!(
            sub,
            "list" | "info" | "search" | "outdated" | "config" | "doctor" | "deps" | "--version"
        ),
        "apt" | "apt-cache" => matches!(
            sub,
            "list" | "search" | "show" | "policy" | "depends" | "rdepends" | "showpkg"
        ),
        "dpkg" => matches!(
            sub,
            "-l" | "-L"
                | "-s"
                | "-S"
                | "--list"
                | "--listfiles"
                | "--status"
                | "--search"
                | "--get-selections"
        ),
        "rpm" => sub.starts_with("-q"),
        "gh" => {
            matches!(sub, "status" | "browse")
                || (matches!(
                    sub,
                    "pr" | "issue" | "run" | "repo" | "release" | "workflow"
                ) && args.get(1).is_some_and(|a| {
                    matches!(a.as_str(), "list" | "view" | "status" | "diff" | "checks")
                }))
        }
        "ip" => {
            matches!(
                sub,
                "a" | "addr"
                    | "address"
                    | "r"
                    | "route"
                    | "link"
                    | "neigh"
                    | "-br"
                    | "-4"
                    | "-6"
                    | "-s"
            ) && !args.iter().any(|a| {
                matches!(
                    a.as_str(),
                    "add" | "del" | "delete" | "flush" | "set" | "change" | "replace"
                )
            })
        }
        "node" | "python" | "python3" | "java" | "rustc" => {
            matches!(sub, "--version" | "-V" | "-v" | "-version" | "--help")
        }
        _ => true,
    }
}

/// [`ALWAYS`] as a set: every command the walker finds is looked up, and a linear search of
/// the list was about 3% of an analysis.
fn always() -> &'static std::collections::HashSet<&'static str> {
    static SET: std::sync::OnceLock<std::collections::HashSet<&'static str>> =
        std::sync::OnceLock::new();
    SET.get_or_init(|| ALWAYS.iter().copied().collect())
}

/// Whether `argv` (already unwrapped, program not reduced) only reads.
pub fn is_read_only(argv: &[String]) -> bool {
    let Some(prog) = argv.first() else {
        return true;
    };
    if prints_help(argv) {
        return true;
    }
    let prog = base(prog);
    let args = &argv[1..];
    // `anything --version` / `--help` alone is read-only
    if args.len() == 1 && matches!(args[0].as_str(), "--version" | "--help" | "-h" | "version") {
        return true;
    }
    if !always().contains(prog) {
        return false;
    }
    let has = |f: &str| args.iter().any(|a| a == f);
    match prog {
        "find" => !args.iter().any(|a| {
            matches!(
                a.as_str(),
                "-delete"
                    | "-exec"
                    | "-execdir"
                    | "-ok"
                    | "-okdir"
                    | "-fprint"
                    | "-fprint0"
                    | "-fprintf"
                    | "-fls"
            )
        }),
        // `fd -x CMD` / `-X CMD` runs CMD on what it finds
        "fd" | "fdfind" => !args.iter().any(|a| is_fd_exec(a)),
        "sed" => !args.iter().any(|a| {
            a == "-i"
                || a.starts_with("-i")
                || a.starts_with("--in-place")
                || (a.starts_with('-') && !a.starts_with("--") && a.contains('i'))
        }),
        // awk programs are judged as code by the walker; the command itself only reads
        "awk" | "gawk" | "mawk" => !has("-i") && !args.iter().any(|a| a.contains("inplace")),
        "xargs" | "nohup" => false, // judged through what they run
        "env" | "printenv" => {
            args.iter().all(|a| a.starts_with('-') || !a.contains('=')) && prog == "printenv"
                || args.is_empty()
        }
        "sort" => !has("-o") && !args.iter().any(|a| a.starts_with("--output")),
        "xxd" => !has("-r"),
        "base64" | "base32" => true,
        "top" | "htop" | "btop" => true,
        "date" => !has("-s") && !args.iter().any(|a| a.starts_with("--set")),
        "hostname" => args.iter().all(|a| a.starts_with('-')),
        "export" | "declare" | "readonly" | "local" | "set" | "alias" | "umask" | "ulimit" => true,
        "journalctl" => !args
            .iter()
            .any(|a| a.starts_with("--vacuum") || a == "--rotate" || a == "--flush"),
        "dmesg" => !has("-c") && !has("-C") && !has("--clear"),
        "mktemp" => true,
        _ => {
            let sub = args
                .iter()
                .find(|a| !a.starts_with('-') || prog == "dpkg" || prog == "rpm");
            match (prog, sub) {
                ("git", _) => {
                    // global options before the subcommand: `-c` can run programs
                    let mut i = 0;
                    while i < args.len() && args[i].starts_with('-') {
                        if args[i] == "-c"
                            || args[i].starts_with("--config-env")
                            || args[i] == "--exec-path"
                        {
                            return false;
                        }
                        i += if args[i] == "-C" { 2 } else { 1 };
                    }
                    args.get(i).is_some_and(|s| sub_ok("git", s, &args[i..]))
                }
                (p, Some(_)) if global_values(p).is_some() => {
                    subcommand_at(p, args).is_some_and(|at| sub_ok(p, &args[at], &args[at..]))
                }
                (p, Some(s)) if is_multi(p) => {
                    let at = args.iter().position(|a| a == s).unwrap_or(0);
                    sub_ok(p, s, &args[at..])
                }
                (p, None) if is_multi(p) => {
                    matches!(
                        p,
                        "docker"
                            | "kubectl"
                            | "helm"
                            | "git"
                            | "npm"
                            | "cargo"
                            | "go"
                            | "pip"
                            | "pip3"
                            | "brew"
                            | "apt"
                            | "gh"
                            | "terraform"
                            | "systemctl"
                    ) && args.iter().all(|a| a.starts_with('-'))
                        && (args.is_empty()
                            || args
                                .iter()
                                .any(|a| a == "--version" || a == "--help" || a == "-h"))
                }
                _ => true,
            }
        }
    }
}

/// The global options a cluster or container CLI takes before its subcommand whose value is the
/// next word (`kubectl --context prod get pods`): without skipping the value, `prod` reads as the
/// subcommand and a plain read asks. Options that point the tool at a file or directory of
/// configuration (`--kubeconfig`, `docker --config`) are left out on purpose: such a file can
/// name a program the tool runs (a kubeconfig's `exec` credential plugin), so the call stays
/// unclassified.
fn global_values(prog: &str) -> Option<&'static [&'static str]> {
    Some(match prog {
        "kubectl" | "oc" => &[
            "--context",
            "--cluster",
            "--user",
            "-n",
            "--namespace",
            "-s",
            "--server",
            "--as",
            "--as-group",
            "--as-uid",
            "--request-timeout",
            "--tls-server-name",
            "-v",
            "--v",
        ],
        "helm" => &[
            "--kube-context",
            "-n",
            "--namespace",
            "--kube-as-user",
            "--kube-as-group",
            "--kube-apiserver",
        ],
        "docker" | "podman" => &["--context", "-c", "-H", "--host", "-l", "--log-level"],
        _ => return None,
    })
}

/// Where the subcommand of `prog` stands in `args`, past its global options and their values;
/// `None` when an option whose value is not known to be harmless comes first (`--kubeconfig`),
/// or there is no subcommand.
fn subcommand_at(prog: &str, args: &[String]) -> Option<usize> {
    let takes_value = global_values(prog)?;
    let mut i = 0;
    while let Some(a) = args.get(i) {
        if !a.starts_with('-') {
            return Some(i);
        }
        let name = a.split_once('=').map_or(a.as_str(), |(n, _)| n);
        let known = takes_value.contains(&name);
        if known && !a.contains('=') {
            i += 2;
        } else if known || is_plain_global_flag(a) {
            i += 1;
        } else {
            return None;
        }
    }
    None
}

/// Global flags without a value that change nothing about what the subcommand does.
fn is_plain_global_flag(a: &str) -> bool {
    matches!(
        a,
        "--insecure-skip-tls-verify"
            | "--debug"
            | "-D"
            | "--match-server-version"
            | "--warnings-as-errors"
    )
}

/// fd's options that run a command on its results (`-x`, `--exec`, `-X`, `--exec-batch`).
pub fn is_fd_exec(a: &str) -> bool {
    matches!(a, "-x" | "--exec" | "-X" | "--exec-batch")
}

/// Whether `argv` only prints a command-line tool's help, so its words describe no action:
/// `--help` anywhere before a `--` for CLIs whose option parsers act on it wherever it stands
/// (cobra: kubectl, helm, gh, docker, …; argparse/knack: gcloud, az; mitchellh/cli: terraform,
/// which also takes `-help`), and the AWS CLI's `aws SERVICE [OPERATION] help`. Not for tools
/// that pass later words on to another program (`docker run IMAGE --help` runs the image) nor
/// for `-h`, which means something else to many tools.
pub fn prints_help(argv: &[String]) -> bool {
    let Some(prog) = argv.first() else {
        return false;
    };
    // every command is asked this: leave before allocating unless a help word is there
    if !argv[1..]
        .iter()
        .any(|a| matches!(a.as_str(), "--help" | "-help" | "help"))
    {
        return false;
    }
    let prog = crate::unwrap::program_name(prog);
    let args = &argv[1..];
    if prog == "aws" {
        // `aws s3 rb help`: plain words only, so no bucket, flag or value hides a real call
        return matches!(args.len(), 2 | 3)
            && args.last().is_some_and(|a| a == "help")
            && args[..args.len() - 1].iter().all(|a| {
                !a.is_empty()
                    && a.bytes()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
                    && !a.starts_with('-')
            });
    }
    let terraform = matches!(&*prog, "terraform" | "tofu");
    let known = terraform
        || matches!(
            &*prog,
            "gcloud"
                | "az"
                | "kubectl"
                | "oc"
                | "helm"
                | "gh"
                | "glab"
                | "pulumi"
                | "doctl"
                | "hcloud"
                | "flyctl"
                | "eksctl"
                | "minikube"
                | "docker"
                | "podman"
                | "nerdctl"
        );
    if !known {
        return false;
    }
    // container runners hand the words after the image to the container
    if matches!(&*prog, "docker" | "podman" | "nerdctl")
        && args
            .iter()
            .any(|a| matches!(a.as_str(), "run" | "exec" | "create" | "start" | "compose"))
    {
        return false;
    }
    args.iter()
        .take_while(|a| *a != "--")
        .any(|a| a == "--help" || (terraform && a == "-help"))
}

fn is_multi(p: &str) -> bool {
    matches!(
        p,
        "git"
            | "systemctl"
            | "docker"
            | "podman"
            | "kubectl"
            | "oc"
            | "helm"
            | "terraform"
            | "tofu"
            | "npm"
            | "pnpm"
            | "yarn"
            | "cargo"
            | "go"
            | "pip"
            | "pip3"
            | "brew"
            | "apt"
            | "apt-cache"
            | "dpkg"
            | "rpm"
            | "gh"
            | "ip"
            | "node"
            | "python"
            | "python3"
            | "java"
            | "rustc"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ro(s: &str) -> bool {
        is_read_only(&s.split_whitespace().map(String::from).collect::<Vec<_>>())
    }

    #[test]
    fn readers_are_read_only() {
        for c in [
            "ls -la",
            "cat README.md",
            "grep -rn foo src",
            "git status",
            "git log --oneline -5",
            "git -C repo diff",
            "git branch",
            "find . -name '*.rs'",
            "kubectl get pods",
            "docker ps -a",
            "systemctl status sshd",
            "cargo --version",
            "terraform plan",
            "sed -n 1,5p f",
            "jq .x f.json",
            "git config --get user.name",
            "kubectl --context prod get pods",
            "kubectl --context=prod-eu -n kube-system describe deploy x",
            "kubectl -n kube-system --context prod logs x",
            "oc --namespace team get routes",
            "kubectl --context prod config view",
            "helm --kube-context prod list -A",
            "docker --context remote ps",
            "docker -H ssh://host images",
        ] {
            assert!(ro(c), "{c} should be read-only");
        }
    }

    #[test]
    fn help_calls_only_read() {
        for c in [
            "az group delete --help",
            "gcloud projects delete --help",
            "kubectl delete ns prod --help",
            "helm uninstall --help",
            "terraform destroy -help",
            "docker system prune -a --help",
            "aws s3 rb help",
            "aws ec2 terminate-instances help",
        ] {
            assert!(ro(c), "{c} only prints help");
        }
        for c in [
            "aws s3 rb s3://b --force help",
            "aws s3 rb --force help",
            "kubectl exec pod -- rm -rf / --help",
            "docker run alpine --help",
            "rm -rf / --help",
            "gcloud projects delete p -h",
            "az group delete -n rg",
        ] {
            assert!(
                !prints_help(&c.split_whitespace().map(String::from).collect::<Vec<_>>()),
                "{c} is not a help call"
            );
        }
    }

    #[test]
    fn writers_are_not() {
        for c in [
            "rm x",
            "find . -delete",
            "find . -exec rm {} ;",
            "sed -i s/a/b/ f",
            "git -c core.pager=x log",
            "git push",
            "git branch -D x",
            "git reset --hard",
            "kubectl delete pod x",
            "docker rm x",
            "systemctl stop x",
            "sort -o f f",
            "cargo build",
            "npm install",
            "xxd -r f",
            "git stash",
            "git tag v1",
            "fd -e pyc -x rm",
            "go env -w GOFLAGS=-mod=mod",
            "fd . src --exec-batch wc -l",
            // a global option's value is not the subcommand, in either direction
            "kubectl --context get delete pod x",
            "kubectl -n get delete pod x",
            "kubectl --context prod delete pod x",
            "kubectl --context prod get secrets",
            "kubectl --context prod exec pod -- cat /etc/passwd",
            // configuration files can name programs the CLI runs
            "kubectl --kubeconfig ./k.yaml get pods",
            "kubectl --kubeconfig=./k.yaml get pods",
            "docker --config ./d ps",
            "helm --kube-context prod uninstall app",
            "docker --context remote rm -f x",
            "kubectl --context",
            "kubectl --unknown-flag get pods",
        ] {
            assert!(!ro(c), "{c} should not be read-only");
        }
    }
}
