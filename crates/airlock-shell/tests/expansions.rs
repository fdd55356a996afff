//! Everything bash expands, and command words that are not literals: a command substitution
//! anywhere bash performs one (operator operands, subscripts, arithmetic, case patterns,
//! redirection targets, here-document bodies, strings builtins evaluate as subscripts) is
//! analysed; a command word spelled as a glob, a pattern substitution, an indirect or split
//! expansion or in mathematical letters is resolved or asked. A differential check runs the
//! same templates through bash with a harmless payload and requires airlock to see the
//! payload wherever bash ran it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use airlock_core::Decision;
use airlock_shell::analyse;
use proptest::prelude::*;

const PAYLOAD: &str = "rm -rf ~";

/// The template with its `$(P)` or `` `P` `` filled with `payload`.
fn fill(template: &str, payload: &str) -> String {
    template
        .replace("(P)", &format!("({payload})"))
        .replace("`P`", &format!("`{payload}`"))
}

/// One template per expansion kind; `P` stands for the command run inside `$(…)`.
const KINDS: &[(&str, &str)] = &[
    ("default operand", "echo ${x:-$(P)}"),
    ("default operand, unset only", "echo ${x-$(P)}"),
    ("assign operand", "echo ${x:=$(P)}"),
    ("alternative operand", "x=1; echo ${x:+`P`}"),
    ("error operand", "echo ${x:?$(P)}"),
    ("single quotes in a quoted operand", "echo \"${x:-'$(P)'}\""),
    (
        "pattern substitution replacement",
        "x=abc; echo ${x/a/$(P)}",
    ),
    ("pattern substitution pattern", "x=abc; echo ${x//$(P)/b}"),
    ("prefix removal pattern", "x=abc; echo ${x#$(P)}"),
    ("suffix removal pattern", "x=abc; echo \"${x%%$(P)}\""),
    ("substring offset", "x=abc; echo ${x:$(P):1}"),
    ("substring length", "x=abc; echo ${x:0:$(P)}"),
    ("array subscript", "echo ${a[$(P)]}"),
    ("nested operand", "echo ${x:-${y:-$(P)}}"),
    ("arithmetic expansion", "echo $((1+$(P)))"),
    ("arithmetic subscript", "echo $(( a[$(P)] ))"),
    ("arithmetic command", "(( x = $(P) ))"),
    ("arithmetic for", "for ((i=$(P); i<1; i++)); do :; done"),
    ("case pattern", "case y in $(P)) :;; esac"),
    ("assignment subscript", "a[$(P)]=1"),
    ("array literal key", "a=([$(P)]=1)"),
    ("redirection target operand", "echo hi > ${x:-$(P)}"),
    (
        "here-document operand",
        "cat > /dev/null <<EOF\n${x:-$(P)}\nEOF",
    ),
    ("printf -v subscript", "a=(1); printf -v 'a[$(P)]' x"),
    ("unset subscript", "a=(1); unset 'a[$(P)]'"),
    ("declare subscript", "declare 'a[$(P)]=1'"),
    ("read subscript", "a=(1); read 'a[$(P)]' <<< x"),
    ("test -v subscript", "a=(1); [[ -v 'a[$(P)]' ]]"),
    ("test builtin subscript", "a=(1); test -v 'a[$(P)]'"),
    ("variable used in arithmetic", "x='a[$(P)]'; echo $((x))"),
    (
        "variable compared arithmetically",
        "x='a[$(P)]'; [[ $x -eq 0 ]]",
    ),
    ("prompt expansion of a constant", "x='$(P)'; echo ${x@P}"),
];

#[test]
fn every_expansion_kind_is_walked() {
    for (kind, template) in KINDS {
        let cmd = fill(template, PAYLOAD);
        let a = analyse(&cmd);
        assert_eq!(a.decision, Decision::Deny, "{kind}: {cmd}: {a:?}");
        assert!(
            a.reasons.iter().any(|r| r.rule_id.starts_with("fs.rm")),
            "{kind}: {cmd}: {a:?}"
        );
    }
}

#[test]
fn harmless_expansions_stay_read_only() {
    for cmd in [
        "echo ${x:-default}",
        "echo ${x:-$(pwd)}",
        "echo ${x/a/b} ${x#p} ${x%%.*} ${x:1:2} ${#x}",
        "echo $((1+2)) $(( a[1] ))",
        "(( x = 1 + 2 ))",
        "for ((i=0; i<3; i++)); do echo $i; done",
        "case $x in a|b) echo yes;; esac",
        "printf -v 'a[1]' x",
        "x='a[1]'; echo $((x))",
        "echo '${x:-$(rm -rf ~)}'",
        "cat <<'EOF'\n${x:-$(rm -rf ~)}\nEOF",
        "[[ -v a[1] ]]",
    ] {
        let a = analyse(cmd);
        assert_eq!(a.decision, Decision::Allow, "{cmd}: {a:?}");
    }
}

#[test]
fn command_words_that_are_not_literals_are_resolved_or_asked() {
    // resolved to the program they run: the rules for that program decide
    for cmd in [
        "/bin/r? -rf ~",
        "/???/r? -rf ~",
        "[r]m -rf ~",
        "/usr/bin/[r]m -rf ~",
        "r[!a] -rf ~",
        "@(rm|ls) -rf ~",
        "+(r)m -rf ~",
        "sudo /bin/r? -rf /",
        "x=rX; ${x/X/m} -rf ~",
        "x=rX; ${x//X/m} -rf ~",
        "x=Xm; ${x/#X/r} -rf ~",
        "x=rmX; ${x%X} -rf ~",
        "x=Xrm; ${x#X} -rf ~",
        "x=RM; ${x,,} -rf ~",
        "x=xxrm; ${x:2} -rf ~",
        "v=rm; p=v; ${!p} -rf ~",
        "c=\"rm -rf\"; $c ~",
        "c='rm -rf ~'; $c",
        "a=(rm -rf ~); \"${a[@]}\"",
        "a=(rm -rf ~); ${a[*]}",
        "a=(rm -rf ~); ${a[0]} ${a[1]} ${a[2]}",
        "a=(/bin/rm -rf); \"${a[@]}\" ~",
        "set -- rm -rf ~; \"$@\"",
        "set -- rm -rf ~; $1 $2 $3",
        "rm$IFS$9-rf$IFS$9~",
        "rm${IFS}$1-rf${IFS}~",
        "\u{1d42b}\u{1d426} -rf ~",
        "\u{1d69b}\u{1d696} -rf ~",
        "\u{24e1}\u{24dc} -rf ~",
    ] {
        let a = analyse(cmd);
        assert_eq!(a.decision, Decision::Deny, "{cmd}: {a:?}");
    }
    // not resolvable: asked
    for cmd in ["${x/X/m} -rf ~", "$c ~", "zzq* -rf ~", "${!p} -rf ~"] {
        let a = analyse(cmd);
        assert!(a.decision >= Decision::Ask, "{cmd}: {a:?}");
    }
}

#[test]
fn literal_command_words_that_look_like_patterns_are_left_alone() {
    for cmd in [
        "[ -f Cargo.toml ]",
        "[[ -n x ]]",
        "g++ -o app main.cpp",
        "\"$DIR/run.sh\" --check",
        "${HOME}/bin/tool --version",
        "msg=\"hello world\"; echo $msg",
        "a=(ls -la); \"${a[@]}\"",
        "files=(a.txt \"b c.txt\"); cat \"${files[@]}\"",
    ] {
        let a = analyse(cmd);
        assert_eq!(a.decision, Decision::Allow, "{cmd}: {a:?}");
    }
}

/// Whether bash runs the command substituted into `template` (the payload only prints).
fn bash_runs(template: &str) -> Option<bool> {
    let marker = "AIRLOCK_DIFF_MARK";
    let script = fill(template, &format!("echo {marker} >&2"));
    let out = std::process::Command::new("bash")
        .arg("--norc")
        .arg("--noprofile")
        .arg("-c")
        .arg(&script)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .current_dir(std::env::temp_dir())
        .output()
        .ok()?;
    Some(String::from_utf8_lossy(&out.stderr).contains(marker))
}

#[test]
fn bash_runs_every_kind_in_the_table() {
    // the table is honest: each template does run its substitution in bash
    if bash_runs("P").is_none() {
        eprintln!("bash not found: skipped");
        return;
    }
    for (kind, template) in KINDS {
        assert_eq!(bash_runs(template), Some(true), "{kind}: {template}");
    }
}

fn operator() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        ":-", "-", ":=", "=", ":+", "+", ":?", "#", "##", "%", "%%", "/a/", "//", "/#", "/%",
        ":0:", "^^", ",,",
    ])
}

fn context() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "echo W",
        "echo \"W\"",
        "x=W",
        ": W",
        "echo hi > /dev/null W",
        "echo $((1 + W))",
        "case q in W) :;; esac",
        "(( W ))",
        "a[W]=1",
        "printf -v 'a[W]' x",
        "echo ${a[W]}",
    ])
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Wherever bash runs the substitution of a generated template, airlock sees it.
    #[test]
    fn airlock_sees_what_bash_runs(
        op in operator(),
        ctx in context(),
        quote in prop::sample::select(vec!["", "'", "\""]),
        set in any::<bool>(),
    ) {
        let inner = format!("{quote}$(P){quote}");
        let word = format!("${{x{op}{inner}}}");
        let body = ctx.replace('W', &word);
        let template = if set { format!("x=abc; {body}") } else { body };
        if let Some(true) = bash_runs(&template) {
            let cmd = fill(&template, PAYLOAD);
            let a = analyse(&cmd);
            prop_assert_eq!(a.decision, Decision::Deny, "{}: {:?}", cmd, a);
        }
    }
}
