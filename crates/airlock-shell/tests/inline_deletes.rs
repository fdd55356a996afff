//! Inline interpreter code that deletes a tree is judged by what it deletes, as `rm -rf` of the
//! same paths would be (the product decision of issue 19): a cleanup of regenerable output in
//! the working tree is allowed, and the same calls on the root, home, a secret directory, a
//! parent, a source directory or a path the code computes still ask or deny at rm's tier.
//! Absolute targets that rm allows (`/tmp/…`) stay asked as code that deletes: the public dcg
//! corpus labels them dangerous.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use airlock_core::{Decision, Tier};
use airlock_shell::analyse;

#[test]
fn cleanups_of_regenerable_output_are_allowed() {
    for cmd in [
        "python3 -c \"import shutil; shutil.rmtree('build')\"",
        "python3 -c \"import shutil; shutil.rmtree('build', ignore_errors=True)\"",
        "python -c 'import shutil; shutil.rmtree(\"dist\"); shutil.rmtree(\"node_modules\")'",
        "node -e \"fs.rmSync('dist', {recursive: true, force: true})\"",
        "node -e \"require('fs').rmSync('.turbo', {recursive:true, force:true})\"",
        "rimraf dist",
        "npx rimraf build .turbo",
        "ruby -e 'FileUtils.rm_rf(\"tmp/cache\")'",
        "ruby -rfileutils -e 'FileUtils.rm_rf [\"coverage\", \"tmp\"]'",
        "perl -MFile::Path -e 'remove_tree(\"target\")'",
        "perl -MFile::Path -e 'rmtree(\"target\", \"dist\")'",
        "python3 -c \"import shutil; shutil.rmtree('__pycache__'); shutil.rmtree('.pytest_cache')\"",
    ] {
        let a = analyse(cmd);
        assert_eq!(a.decision, Decision::Allow, "{cmd}: {a:?}");
    }
}

#[test]
fn the_same_calls_elsewhere_ask_or_deny_as_rm_would() {
    for (cmd, want) in [
        // the root and home: denied as `rm -rf /` and `rm -rf ~`
        (
            "python3 -c \"import shutil; shutil.rmtree('/')\"",
            Decision::Deny,
        ),
        (
            "python3 -c \"import shutil, os; shutil.rmtree(os.path.expanduser('~'))\"",
            Decision::Deny,
        ),
        ("perl -MFile::Path -e 'remove_tree(\"/\")'", Decision::Deny),
        (
            "node -e \"require('fs').rmSync('/home/alice', {recursive: true})\"",
            Decision::Deny,
        ),
        // outside the working tree, or a parent: asked at tier 3
        (
            "python3 -c \"import shutil; shutil.rmtree('..')\"",
            Decision::Ask,
        ),
        ("ruby -e 'FileUtils.rm_rf(\"~/.ssh\")'", Decision::Ask),
        (
            "node -e \"fs.rmSync('/srv/data', {recursive: true, force: true})\"",
            Decision::Ask,
        ),
        // a source directory: asked for review
        (
            "python3 -c \"import shutil; shutil.rmtree('src')\"",
            Decision::Ask,
        ),
        ("perl -MFile::Path -e 'remove_tree(\"lib\")'", Decision::Ask),
        // an absolute path rm would allow (/tmp): still asked as code that deletes files,
        // as the public dcg corpus labels it
        (
            "python3 -c \"import shutil; shutil.rmtree('/tmp/demo')\"",
            Decision::Ask,
        ),
        // a computed or held path: asked as code that deletes files
        (
            "python3 -c \"import shutil, sys; shutil.rmtree(sys.argv[1])\" build",
            Decision::Ask,
        ),
        (
            "python3 -c \"import shutil; d='build'; shutil.rmtree(d)\"",
            Decision::Ask,
        ),
        (
            "node -e \"fs.rmSync(process.env.HOME, {recursive: true})\"",
            Decision::Ask,
        ),
        (
            "python3 -c \"import shutil, os; shutil.rmtree('build'); os.remove(p)\"",
            Decision::Ask,
        ),
        (
            "perl -MFile::Path -e 'remove_tree(\"build\", $ENV{HOME})'",
            Decision::Ask,
        ),
        (
            "python3 -c \"import shutil; shutil.rmtree(f'{home}/x')\"",
            Decision::Ask,
        ),
    ] {
        let a = analyse(cmd);
        assert!(a.decision >= want, "{cmd}: want {want:?}, got {a:?}");
    }
}

#[test]
fn a_parent_or_home_target_is_held_at_rms_tier() {
    for cmd in [
        "python3 -c \"import shutil; shutil.rmtree('..')\"",
        "python3 -c \"import shutil; shutil.rmtree('/var/lib/app')\"",
    ] {
        let a = analyse(cmd);
        assert!(a.tier >= Tier::High, "{cmd}: {a:?}");
    }
}

#[test]
fn code_that_deletes_and_also_spawns_is_still_asked() {
    let cmd = "python3 -c \"import shutil, os; shutil.rmtree('build'); os.system('make')\"";
    let a = analyse(cmd);
    assert!(a.decision >= Decision::Ask, "{cmd}: {a:?}");
}
