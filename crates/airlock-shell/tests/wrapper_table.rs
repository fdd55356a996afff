//! The wrapper table (`rules/options/wrappers.toml`) checks itself: for every example line,
//! unwrapping it gives exactly the command the example names (nothing, or a shell reading
//! standard input, where it says so). And only a wrapper's own options are read: an option of
//! the wrapped command that the wrapper also has (`command rm -v …`, `nice rm -n x …`) does not
//! stop the command from being judged.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use airlock_core::Decision;
use airlock_shell::unwrap::{Inner, Lang, unwrap};
use airlock_shell::{analyse, simple_argv, wrapper_table};

fn shown(inner: &[Inner]) -> String {
    match inner {
        [] => String::new(),
        [Inner::Argv(v)] => v.join(" "),
        [Inner::Script(s)] => s.clone(),
        [Inner::ReadsStdin(Lang::Shell)] => "<stdin>".to_string(),
        other => format!("{other:?}"),
    }
}

#[test]
fn every_example_unwraps_to_what_it_names() {
    let doc: toml::Table = wrapper_table::SOURCE.parse().unwrap();
    let mut checked = 0;
    let mut wrong = Vec::new();
    for w in doc["wrapper"].as_array().unwrap() {
        let names: Vec<&str> = w["names"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap())
            .collect();
        for ex in w["examples"].as_array().unwrap() {
            let pair = ex.as_array().unwrap();
            let (line, want) = (pair[0].as_str().unwrap(), pair[1].as_str().unwrap());
            // `time` is a shell keyword, not a simple command: its examples hold no quotes
            let argv = simple_argv(line)
                .unwrap_or_else(|| line.split_whitespace().map(String::from).collect());
            assert!(
                names.contains(&argv[0].as_str()),
                "{line}: example of {names:?}"
            );
            assert!(wrapper_table::entry(&argv[0]).is_some(), "{line}");
            let got = shown(&unwrap(&argv));
            if got != want {
                wrong.push(format!("{line}: runs {got:?}, table says {want:?}"));
            }
            checked += 1;
        }
    }
    assert!(checked > 60, "only {checked} examples");
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn every_name_in_the_table_is_found() {
    let doc: toml::Table = wrapper_table::SOURCE.parse().unwrap();
    for w in doc["wrapper"].as_array().unwrap() {
        for n in w["names"].as_array().unwrap() {
            assert!(wrapper_table::entry(n.as_str().unwrap()).is_some(), "{n}");
        }
    }
    assert!(wrapper_table::entry("rm").is_none());
    assert!(wrapper_table::entry("python3").is_none());
}

#[test]
fn an_option_of_the_wrapped_command_does_not_hide_it() {
    for cmd in [
        "command rm -v -rf /",
        "command rm -rf / -V",
        "nice rm -n x -rf /",
        "screen -dm rm -rf / -X",
        "chrt -f 10 rm -rf / -p",
        // a value attached inside a cluster (`-uroot`) is not an option taking the next word
        "sudo -uroot rm -rf /",
        "sudo -Hudeploy rm -rf ~",
        // durations C's strtod reads
        "timeout inf rm -rf /",
        "timeout 0x10 rm -rf /",
    ] {
        let a = analyse(cmd);
        assert_eq!(a.decision, Decision::Deny, "{cmd}: {a:?}");
    }
    for cmd in [
        "command -v rm",
        "nice -n x rm -rf build",
        "screen -S s -X quit",
    ] {
        let a = analyse(cmd);
        assert_eq!(a.decision, Decision::Allow, "{cmd}: {a:?}");
    }
}
