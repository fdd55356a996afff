//! Tool names that pass for other names. A model picks a tool by its name, so a server that
//! lists `reаd_file` (a Cyrillic `а`) beside, or after, a trusted `read_file` gets calls meant
//! for the other. Two checks over a `tools/list` answer: a name with characters outside ASCII
//! (mixed scripts, look-alike letters, invisible characters; the MCP specification's names are
//! ASCII letters, digits, `_`, `-` and `.`) is flagged; and a name whose skeleton (look-alike
//! letters folded, case and `-`/`_` ignored, `0`/`o`, `1`/`l`/`i`, `rn`/`m` and `vv`/`w` taken
//! as one) equals another listed or already trusted name's is flagged, unless it is itself
//! the trusted one.

use std::collections::{BTreeMap, HashMap, HashSet};

/// The stable reason of a flagged name.
pub const LOOKALIKE: &str = "MCP_TOOL_LOOKALIKE";

/// The skeleton two names share when a reader could take one for the other.
pub fn skeleton(name: &str) -> String {
    let folded = airlock_shell::evasion::fold_confusables(name).unwrap_or_else(|| name.into());
    let lower: String = folded
        .chars()
        .flat_map(char::to_lowercase)
        .map(|c| match c {
            '0' => 'o',
            '1' | 'i' | '|' => 'l',
            '-' => '_',
            c => c,
        })
        .collect();
    lower.replace("rn", "m").replace("vv", "w")
}

/// The flagged names of one listing and why: `listed` are the names in the answer, `trusted`
/// the names of this server already in use (earlier listings, pins).
pub fn flagged(listed: &[String], trusted: &HashSet<String>) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for name in listed {
        if !name.is_ascii() || name.chars().any(char::is_control) {
            out.insert(
                name.clone(),
                format!(
                    "the tool name `{}` contains characters outside ASCII (look-alike letters, mixed scripts or invisible characters), so it may pass for another tool; it is hidden",
                    name.escape_debug()
                ),
            );
        }
    }
    // A name flagged above is hidden already: a plain name it imitates is not suspect for it.
    let mut by_skeleton: HashMap<String, Vec<&String>> = HashMap::new();
    for n in listed
        .iter()
        .filter(|n| !out.contains_key(*n))
        .chain(trusted.iter())
    {
        let names = by_skeleton.entry(skeleton(n)).or_default();
        if !names.contains(&n) {
            names.push(n);
        }
    }
    for name in listed {
        if out.contains_key(name) || trusted.contains(name) {
            continue;
        }
        let same = by_skeleton.get(&skeleton(name));
        if let Some(other) = same.and_then(|v| v.iter().find(|o| **o != name)) {
            out.insert(
                name.clone(),
                format!(
                    "the tool name `{}` looks like `{}`, another tool of this server, so a call meant for one could reach the other; it is hidden",
                    name.escape_debug(),
                    other.escape_debug()
                ),
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn look_alikes_are_flagged_and_distinct_names_are_not() {
        let trusted: HashSet<String> = ["read_file".to_string()].into();
        // must match
        for bad in [
            "reаd_file", // Cyrillic а
            "read_fіle", // Cyrillic і
            "read_file\u{200b}",
            "ｒｅａｄ_file",
            "Read_File",
            "read-file",
            "rea\u{0064}_fi1e",
            "read_flle",
        ] {
            let f = flagged(&names(&[bad]), &trusted);
            assert!(f.contains_key(bad), "{bad:?} not flagged");
        }
        assert_eq!(skeleton("modern"), skeleton("rnodern"));
        assert_eq!(skeleton("view"), skeleton("vievv"));
        // must not match
        for good in ["write_file", "read_files", "list_dir", "readme", "search"] {
            let f = flagged(&names(&[good]), &trusted);
            assert!(f.is_empty(), "{good} flagged: {f:?}");
        }
        // the trusted name itself stays; both of two new look-alikes are flagged
        let f = flagged(&names(&["read_file", "Read_file"]), &trusted);
        assert_eq!(f.keys().collect::<Vec<_>>(), ["Read_file"]);
        let f = flagged(&names(&["get_user", "get-user"]), &HashSet::new());
        assert_eq!(f.len(), 2);
        // a plain name is not suspect for a non-ASCII imitation of it
        let f = flagged(&names(&["read_file", "reаd_file"]), &HashSet::new());
        assert_eq!(f.keys().collect::<Vec<_>>(), ["reаd_file"]);
        let f = flagged(
            &names(&["get_user", "get_users", "delete_user"]),
            &HashSet::new(),
        );
        assert!(f.is_empty(), "{f:?}");
    }
}
