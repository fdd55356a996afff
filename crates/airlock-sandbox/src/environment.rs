//! Which environment variables a confined command sees. By default every variable passes except
//! those named like credentials (the patterns in `rules/sandbox/environment.toml`): Landlock
//! keeps the command away from the files that hold keys, and a key in the environment would
//! walk past it. `--keep-env NAME` passes one through; `--env-clean` passes nothing but a few
//! names a program needs to start. Only names are ever reported, never values.

use std::ffi::{OsStr, OsString};

use serde::Deserialize;

use crate::SandboxError;

/// The table's source, for the test that checks its examples.
pub const SOURCE: &str = include_str!("../../../rules/sandbox/environment.toml");

/// What `--env-clean` keeps.
pub const CLEAN_KEEPS: &[&str] = &["PATH", "HOME", "TERM", "LANG"];

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Table {
    remove: Vec<String>,
    // Read by the tests only; a run needs the patterns.
    #[cfg_attr(not(test), allow(dead_code))]
    examples: Examples,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(not(test), allow(dead_code))]
struct Examples {
    removed: Vec<String>,
    kept: Vec<String>,
}

/// How the environment is filtered for one run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EnvFilter {
    /// Names passed through whatever the patterns say (`--keep-env`).
    pub keep: Vec<String>,
    /// Pass nothing but [`CLEAN_KEEPS`] and `keep` (`--env-clean`).
    pub clean: bool,
}

impl EnvFilter {
    /// The names among `names` the command must not see, in the order given. A name that is
    /// not UTF-8 is removed: it cannot be compared with the patterns.
    pub fn removed<'a>(
        &self,
        names: impl IntoIterator<Item = &'a OsStr>,
    ) -> Result<Vec<OsString>, SandboxError> {
        let patterns = patterns()?;
        Ok(names
            .into_iter()
            .filter(|n| {
                let Some(n) = n.to_str() else {
                    return true;
                };
                if self.keep.iter().any(|k| k == n) {
                    return false;
                }
                if self.clean {
                    return !CLEAN_KEEPS.contains(&n);
                }
                let upper = n.to_ascii_uppercase();
                patterns.iter().any(|p| glob(p, &upper))
            })
            .map(OsStr::to_os_string)
            .collect())
    }
}

fn patterns() -> Result<Vec<String>, SandboxError> {
    let t: Table = toml::from_str(SOURCE).map_err(|e| {
        SandboxError::Invalid(format!("the environment table (rules/sandbox): {e}"))
    })?;
    Ok(t.remove)
}

/// `*` matches any run of characters (none included); everything else is literal.
fn glob(pattern: &str, name: &str) -> bool {
    let mut parts = pattern.split('*');
    let Some(first) = parts.next() else {
        return name.is_empty();
    };
    let Some(mut rest) = name.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        // No `*`: the whole name.
        return rest.is_empty();
    };
    for m in middle {
        match rest.find(m) {
            Some(i) => rest = &rest[i + m.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> Table {
        toml::from_str(SOURCE).unwrap()
    }

    fn removed(f: &EnvFilter, names: &[&str]) -> Vec<String> {
        f.removed(names.iter().map(OsStr::new))
            .unwrap()
            .into_iter()
            .map(|n| n.into_string().unwrap())
            .collect()
    }

    #[test]
    fn every_example_is_removed_or_kept_as_the_table_says() {
        let t = table();
        let f = EnvFilter::default();
        for n in &t.examples.removed {
            assert_eq!(removed(&f, &[n]), vec![n.clone()], "{n} must be removed");
        }
        for n in &t.examples.kept {
            assert!(removed(&f, &[n]).is_empty(), "{n} must be kept");
        }
        // Every pattern is needed by at least one example (a pattern nobody checks is not
        // known to work).
        for p in &t.remove {
            assert!(
                t.examples
                    .removed
                    .iter()
                    .any(|n| glob(p, &n.to_ascii_uppercase())),
                "no example is removed by {p}"
            );
        }
    }

    #[test]
    fn keep_env_and_env_clean() {
        let names = [
            "PATH",
            "HOME",
            "GITHUB_TOKEN",
            "EDITOR",
            "TERM",
            "LANG",
            "OPENAI_API_KEY",
        ];
        let keep = EnvFilter {
            keep: vec!["GITHUB_TOKEN".into()],
            clean: false,
        };
        assert_eq!(removed(&keep, &names), vec!["OPENAI_API_KEY"]);
        let clean = EnvFilter {
            keep: vec!["EDITOR".into()],
            clean: true,
        };
        assert_eq!(
            removed(&clean, &names),
            vec!["GITHUB_TOKEN", "OPENAI_API_KEY"]
        );
    }

    #[test]
    fn the_glob() {
        assert!(glob("*_TOKEN", "GH_TOKEN"));
        assert!(!glob("*_TOKEN", "TOKEN"));
        assert!(glob("*TOKEN", "TOKEN"));
        assert!(glob("AWS_*", "AWS_"));
        assert!(!glob("AWS_*", "XAWS_A"));
        assert!(glob("*KEY*", "KEY"));
        assert!(glob("A*B*C", "AxxBxxC"));
        assert!(!glob("A*B*C", "AxxCxxB"));
        assert!(!glob("AB*BA", "ABA"));
        assert!(glob("EXACT", "EXACT"));
        assert!(!glob("EXACT", "EXACTLY"));
    }
}
