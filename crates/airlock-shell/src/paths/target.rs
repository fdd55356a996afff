//! A written path as the classes see it: lexically normalised (`~`, `$HOME`, `//`, `/./`,
//! `..`), lowercased, with where a home directory's contents start.

/// A normalised path: lowercase components, and where the home-relative part starts.
pub(super) struct Target {
    pub(super) absolute: bool,
    pub(super) comps: Vec<String>,
    /// Index in `comps` where a home directory's contents start (`Some(0)` for relative paths,
    /// which may be relative to home).
    pub(super) home_start: Option<usize>,
}

impl Target {
    pub(super) fn new(path: &str, home: Option<&str>) -> Option<Target> {
        let path = path.trim();
        if path.is_empty() {
            return None;
        }
        let home_comps = home
            .map(|h| normalise(h.trim(), Vec::new()).0)
            .filter(|h| !h.is_empty());
        let (comps, absolute) = if let Some((dir, rest)) = strip_agent_home(path) {
            // `$HERMES_HOME/…`, `$CODEX_HOME/…`: an agent's home directory, wherever it is
            let mut base = home_comps.clone().unwrap_or_else(|| vec!["~".to_string()]);
            base.push(dir.to_string());
            normalise(rest, base)
        } else if let Some(rest) = strip_home_prefix(path) {
            let base = home_comps.clone().unwrap_or_else(|| vec!["~".to_string()]);
            normalise(rest, base)
        } else if let Some(rest) = path.strip_prefix('~') {
            // `~user/…`: someone's home directory.
            let (user, rest) = rest.split_once('/').unwrap_or((rest, ""));
            normalise(rest, vec![format!("~{}", user.to_ascii_lowercase())])
        } else {
            normalise(path, Vec::new())
        };
        // `/work/proj/$HOME/.bashrc`, `/work/proj/~bob/.ssh/x`: a caller joined a home-relative
        // path to a working directory without expanding it; the home part is what counts
        let (comps, absolute) = match comps
            .iter()
            .rposition(|c| matches!(c.as_str(), "$home" | "${home}") || c.starts_with('~'))
        {
            Some(i) if i > 0 => {
                let mut base = match comps[i].as_str() {
                    "$home" | "${home}" | "~" => {
                        home_comps.clone().unwrap_or_else(|| vec!["~".to_string()])
                    }
                    user => vec![user.to_string()],
                };
                base.extend(comps[i + 1..].iter().cloned());
                let absolute = absolute || base.first().is_some_and(|c| !c.starts_with('~'));
                (base, absolute)
            }
            _ => (comps, absolute),
        };
        // Decided after normalisation, so `~/../../etc` is not taken for a home file.
        let home_start = if !absolute {
            Some(0)
        } else if comps.first().is_some_and(|c| c.starts_with('~')) {
            Some(1)
        } else {
            match &home_comps {
                Some(h) if comps.len() > h.len() && comps[..h.len()] == h[..] => Some(h.len()),
                _ => other_home_start(&comps),
            }
        };
        if comps.is_empty() {
            return None;
        }
        Some(Target {
            absolute,
            comps,
            home_start,
        })
    }

    pub(super) fn first(&self) -> &str {
        self.comps.first().map(String::as_str).unwrap_or("")
    }

    pub(super) fn basename(&self) -> &str {
        self.comps.last().map(String::as_str).unwrap_or("")
    }

    /// Components inside the home directory, if the path is in one.
    pub(super) fn in_home(&self) -> Option<&[String]> {
        self.home_start.and_then(|i| self.comps.get(i..))
    }

    /// True when `seq` appears as consecutive components anywhere in the path.
    pub(super) fn has_seq(&self, seq: &[&str]) -> bool {
        self.comps
            .windows(seq.len())
            .any(|w| w.iter().zip(seq).all(|(a, b)| a == b))
    }

    pub(super) fn has_comp(&self, name: &str) -> bool {
        self.comps.iter().any(|c| c == name)
    }

    /// True for an absolute path whose components start with `prefix`.
    pub(super) fn under(&self, prefix: &[&str]) -> bool {
        self.absolute
            && self.comps.len() >= prefix.len()
            && self.comps.iter().zip(prefix).all(|(a, b)| a == b)
    }
}

/// `~`, `~/x`, `$HOME/x`, `${HOME}/x` → the part after the home directory.
fn strip_home_prefix(path: &str) -> Option<&str> {
    for p in ["~", "$HOME", "${HOME}"] {
        if let Some(rest) = path.strip_prefix(p) {
            if rest.is_empty() {
                return Some("");
            }
            if let Some(r) = rest.strip_prefix('/') {
                return Some(r);
            }
        }
    }
    None
}

/// `$HERMES_HOME/x`, `${CODEX_HOME}/x`, `$CLAUDE_CONFIG_DIR/x`: variables that name a coding
/// agent's own directory, read as that directory under the home directory (its default place).
fn strip_agent_home(path: &str) -> Option<(&'static str, &str)> {
    const VARS: &[(&str, &str)] = &[
        ("HERMES_HOME", ".hermes"),
        ("CODEX_HOME", ".codex"),
        ("CLAUDE_CONFIG_DIR", ".claude"),
        ("GEMINI_CLI_HOME", ".gemini"),
    ];
    let body = path.strip_prefix('$')?;
    for (var, dir) in VARS {
        let rest = body
            .strip_prefix('{')
            .and_then(|b| b.strip_prefix(var))
            .and_then(|b| b.strip_prefix('}'))
            .or_else(|| {
                body.strip_prefix(var)
                    .filter(|r| !r.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_'))
            });
        if let Some(rest) = rest {
            if rest.is_empty() {
                return Some((dir, ""));
            }
            if let Some(r) = rest.strip_prefix('/') {
                return Some((dir, r));
            }
        }
    }
    None
}

/// `/root/…`, `/home/<user>/…`, `/Users/<user>/…`: another account's home directory.
fn other_home_start(comps: &[String]) -> Option<usize> {
    match comps.first().map(String::as_str) {
        Some("root") => Some(1),
        Some("home") | Some("users") if comps.len() > 2 => Some(2),
        _ => None,
    }
}

/// Lexical normalisation onto `base`: drops empty and `.` components, resolves `..` (never
/// above the root), lowercases ASCII. Returns the components and whether the path is absolute.
fn normalise(path: &str, base: Vec<String>) -> (Vec<String>, bool) {
    let absolute = path.starts_with('/') || !base.is_empty();
    let floor = usize::from(base.first().is_some_and(|b| b.starts_with('~')));
    let mut out = base;
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if out.len() > floor && out.last().is_some_and(|c| c != "..") {
                    out.pop();
                } else if !absolute {
                    out.push("..".to_string());
                }
            }
            p => out.push(p.to_ascii_lowercase()),
        }
    }
    (out, absolute)
}

/// The path as shown to people: control characters escaped, bounded in length.
pub(super) fn display(path: &str) -> String {
    const MAX: usize = 200;
    let mut s = String::new();
    for (n, ch) in path.trim().chars().enumerate() {
        if n >= MAX {
            s.push('…');
            break;
        }
        if ch.is_control() {
            s.extend(ch.escape_default());
        } else {
            s.push(ch);
        }
    }
    s
}
