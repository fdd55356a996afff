//! Matchers of policy rules: shell command patterns over analysed commands, tool-name globs,
//! path globs for file writes and domain patterns for network access, written either natively
//! (`shell = "git push *"`) or in Claude Code's permission syntax (`Bash(git push *)`,
//! `Write(/etc/**)`, `WebFetch(domain:example.com)`, `mcp__server__tool`).

use globset::{GlobBuilder, GlobMatcher};

use crate::PolicyError;

/// What a rule matches.
#[derive(Debug, Clone)]
pub enum Matcher {
    /// Every shell command (`Bash` with no argument).
    AnyShell,
    Shell(CommandPattern),
    Tool(NameGlob),
    Write(PathPattern),
    Network(DomainPattern),
}

impl Matcher {
    /// Parses Claude Code's permission syntax.
    pub fn parse_claude(spec: &str) -> Result<Matcher, PolicyError> {
        let spec = spec.trim();
        let bad = |why: &str| PolicyError::Pattern(format!("`{spec}`: {why}"));
        let Some(open) = spec.find('(') else {
            return match spec {
                "Bash" => Ok(Matcher::AnyShell),
                "Write" | "Edit" | "MultiEdit" | "NotebookEdit" => {
                    Ok(Matcher::Write(PathPattern::new("**")?))
                }
                "WebFetch" => Ok(Matcher::Network(DomainPattern::new("*")?)),
                _ if spec.starts_with("mcp__") || is_tool_name(spec) => {
                    Ok(Matcher::Tool(NameGlob::new(spec)?))
                }
                _ => Err(bad("not a tool name or `Tool(specifier)`")),
            };
        };
        if !spec.ends_with(')') {
            return Err(bad("missing the closing parenthesis"));
        }
        let tool = &spec[..open];
        let arg = &spec[open + 1..spec.len() - 1];
        if arg.trim().is_empty() {
            return Err(bad(
                "empty specifier; write the tool name alone to match every call",
            ));
        }
        match tool {
            "Bash" => Ok(Matcher::Shell(CommandPattern::new(arg)?)),
            "Write" | "Edit" | "MultiEdit" | "NotebookEdit" => {
                Ok(Matcher::Write(PathPattern::new(arg)?))
            }
            "WebFetch" => {
                let d = arg
                    .strip_prefix("domain:")
                    .ok_or_else(|| bad("WebFetch takes `domain:NAME`"))?;
                Ok(Matcher::Network(DomainPattern::new(d)?))
            }
            "Read" | "Grep" | "Glob" | "LS" | "WebSearch" => Err(bad(
                "reads are not gated by airlock policy rules; use a `tool` rule on the tool name",
            )),
            _ => Err(bad("unknown tool in permission syntax")),
        }
    }

    pub fn kind(&self) -> &'static str {
        match self {
            Matcher::AnyShell | Matcher::Shell(_) => "shell",
            Matcher::Tool(_) => "tool",
            Matcher::Write(_) => "write",
            Matcher::Network(_) => "network",
        }
    }
}

fn is_tool_name(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '*'))
}

/// A pattern over a command's canonical text: `*` matches any run of characters; a pattern
/// ending in ` *` also matches the command without arguments; `PREFIX:*` (Claude's older form)
/// matches the prefix followed by nothing or a space.
#[derive(Debug, Clone)]
pub struct CommandPattern {
    pub source: String,
    parts: Vec<String>,
    /// The pattern ends with `*`.
    open_end: bool,
}

impl CommandPattern {
    pub fn new(src: &str) -> Result<CommandPattern, PolicyError> {
        let src = src.trim();
        if src.is_empty() {
            return Err(PolicyError::Pattern("empty shell pattern".into()));
        }
        let body = match src.strip_suffix(":*") {
            Some(prefix) => format!("{} *", prefix.trim_end()),
            None => src.to_string(),
        };
        let words: Vec<&str> = body.split_whitespace().collect();
        let norm = words.join(" ");
        let open_end = norm.ends_with('*');
        let parts = norm.split('*').map(str::to_string).collect();
        Ok(CommandPattern {
            source: src.to_string(),
            parts,
            open_end,
        })
    }

    /// Whether one command's canonical text matches.
    pub fn matches(&self, text: &str) -> bool {
        if glob_match(&self.parts, text) {
            return true;
        }
        // `git push *` also covers a bare `git push`
        if self.open_end && self.parts.len() >= 2 {
            let mut shorter = self.parts.clone();
            shorter.pop();
            if let Some(last) = shorter.last_mut()
                && let Some(t) = last.strip_suffix(' ')
            {
                *last = t.to_string();
                return glob_match(&shorter, text);
            }
        }
        false
    }
}

/// `parts` are the literal pieces between `*`s; matches the whole text.
fn glob_match(parts: &[String], text: &str) -> bool {
    let Some((first, rest)) = parts.split_first() else {
        return text.is_empty();
    };
    let Some(mut tail) = text.strip_prefix(first.as_str()) else {
        return false;
    };
    if rest.is_empty() {
        return tail.is_empty();
    }
    for (i, part) in rest.iter().enumerate() {
        let last = i + 1 == rest.len();
        if last {
            return tail.ends_with(part.as_str());
        }
        match tail.find(part.as_str()) {
            Some(at) => tail = &tail[at + part.len()..],
            None => return false,
        }
    }
    true
}

/// A tool-name glob (`mcp__github__*`); `*` matches any run of characters. Matching ignores
/// ASCII case: agents spell their own tools differently (`Read`, `read_file`), and a deny rule
/// must not be dodged by a capital letter.
#[derive(Debug, Clone)]
pub struct NameGlob {
    pub source: String,
    parts: Vec<String>,
}

impl NameGlob {
    pub fn new(src: &str) -> Result<NameGlob, PolicyError> {
        let src = src.trim();
        if src.is_empty() || src.chars().any(char::is_whitespace) {
            return Err(PolicyError::Pattern(format!(
                "`{src}`: a tool name is one word"
            )));
        }
        Ok(NameGlob {
            source: src.to_string(),
            parts: src
                .to_ascii_lowercase()
                .split('*')
                .map(str::to_string)
                .collect(),
        })
    }

    pub fn matches(&self, name: &str) -> bool {
        glob_match(&self.parts, &name.to_ascii_lowercase())
    }

    /// True when the glob names exactly one tool.
    pub fn is_exact(&self) -> bool {
        self.parts.len() == 1
    }
}

/// A path glob: `**` crosses directories, `*` does not. `~/` is the home directory; `//x` and
/// `/x` are absolute; a relative glob is relative to the workspace.
#[derive(Debug, Clone)]
pub struct PathPattern {
    pub source: String,
    glob: String,
}

impl PathPattern {
    pub fn new(src: &str) -> Result<PathPattern, PolicyError> {
        let src = src.trim();
        if src.is_empty() {
            return Err(PolicyError::Pattern("empty path pattern".into()));
        }
        let glob = match src.strip_prefix("//") {
            Some(rest) => format!("/{rest}"),
            None => src.to_string(),
        };
        compile_glob(&glob)?;
        Ok(PathPattern {
            source: src.to_string(),
            glob,
        })
    }

    /// The matcher with `~` and relative patterns resolved.
    pub fn resolve(&self, home: Option<&str>, workspace: Option<&str>) -> Option<GlobMatcher> {
        let g = if let Some(rest) = self.glob.strip_prefix("~/") {
            format!("{}/{rest}", home?.trim_end_matches('/'))
        } else if self.glob.starts_with('/') || self.glob.starts_with("**") {
            self.glob.clone()
        } else {
            let rest = self.glob.trim_start_matches("./");
            format!("{}/{rest}", workspace?.trim_end_matches('/'))
        };
        compile_glob(&g).ok()
    }
}

fn compile_glob(g: &str) -> Result<GlobMatcher, PolicyError> {
    GlobBuilder::new(g)
        .literal_separator(true)
        .build()
        .map(|g| g.compile_matcher())
        .map_err(|e| PolicyError::Pattern(format!("`{g}`: {e}")))
}

/// A domain: `example.com` is that host only, `*.example.com` its subdomains, `*` any host.
#[derive(Debug, Clone)]
pub struct DomainPattern {
    pub source: String,
}

impl DomainPattern {
    pub fn new(src: &str) -> Result<DomainPattern, PolicyError> {
        let s = src.trim().to_ascii_lowercase();
        let body = s.strip_prefix("*.").unwrap_or(&s);
        let ok = s == "*"
            || (!body.is_empty()
                && body
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | ':'))
                && !body.starts_with('.')
                && !body.ends_with('.'));
        if !ok {
            return Err(PolicyError::Pattern(format!(
                "`{src}`: a domain is `host`, `*.host` or `*`"
            )));
        }
        Ok(DomainPattern { source: s })
    }

    pub fn matches(&self, host: &str) -> bool {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        if self.source == "*" {
            return true;
        }
        match self.source.strip_prefix("*.") {
            Some(base) => host.len() > base.len() && host.ends_with(&format!(".{base}")),
            None => host == self.source,
        }
    }
}

/// Whether `tool` is an agent's web-fetch tool (`WebFetch`, `web_fetch`), whose `url` argument
/// is fetched: one list for the hook, the policy's checks and its risk score.
pub fn is_fetch_tool(tool: &str) -> bool {
    tool.eq_ignore_ascii_case("webfetch") || tool.eq_ignore_ascii_case("web_fetch")
}

/// Whether an HTTP method only reads (`GET`, `HEAD`, `OPTIONS`, any case).
pub fn is_read_method(method: &str) -> bool {
    ["GET", "HEAD", "OPTIONS"]
        .iter()
        .any(|m| method.eq_ignore_ascii_case(m))
}

/// The host of a URL (`scheme://[user@]host[:port]/…`), lower-cased, or `None`.
pub fn url_host(url: &str) -> Option<String> {
    let (_, rest) = url.split_once("://")?;
    let authority = rest.split(['/', '?', '#']).next()?;
    let hostport = authority.rsplit('@').next()?;
    let host = if let Some(v6) = hostport.strip_prefix('[') {
        v6.split(']').next()?
    } else {
        hostport.split(':').next()?
    };
    (!host.is_empty()).then(|| host.to_ascii_lowercase())
}

/// Every URL host named in a command's words (for network rules over shell commands).
pub fn hosts_in(text: &str) -> Vec<String> {
    text.split(|c: char| c.is_whitespace() || c == '\'' || c == '"')
        .filter(|w| w.contains("://"))
        .filter_map(|w| url_host(w.trim_start_matches(|c: char| !c.is_ascii_alphabetic())))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shell(p: &str) -> CommandPattern {
        CommandPattern::new(p).unwrap()
    }

    #[test]
    fn command_patterns() {
        let p = shell("git push *");
        assert!(p.matches("git push origin main"));
        assert!(p.matches("git push"));
        assert!(!p.matches("git pushx"));
        assert!(!p.matches("git status"));
        let p = shell("npm run test:*");
        assert!(p.matches("npm run test"));
        assert!(p.matches("npm run test --watch"));
        assert!(!p.matches("npm run testx"));
        let p = shell("npm test");
        assert!(p.matches("npm test"));
        assert!(!p.matches("npm test; rm -rf /"));
        let p = shell("git * --force");
        assert!(p.matches("git push origin --force"));
        assert!(!p.matches("git push origin"));
        let p = shell("rm -rf *");
        assert!(p.matches("rm -rf build"));
    }

    #[test]
    fn claude_syntax() {
        assert!(matches!(
            Matcher::parse_claude("Bash(git push *)").unwrap(),
            Matcher::Shell(_)
        ));
        assert!(matches!(
            Matcher::parse_claude("Bash").unwrap(),
            Matcher::AnyShell
        ));
        assert!(matches!(
            Matcher::parse_claude("Write(/etc/**)").unwrap(),
            Matcher::Write(_)
        ));
        assert!(matches!(
            Matcher::parse_claude("mcp__github__create_issue").unwrap(),
            Matcher::Tool(_)
        ));
        assert!(matches!(
            Matcher::parse_claude("WebFetch(domain:docs.rs)").unwrap(),
            Matcher::Network(_)
        ));
        for bad in [
            "Bash(",
            "Bash()",
            "WebFetch(docs.rs)",
            "Frob(x)",
            "Read(./.env)",
            "two words",
        ] {
            assert!(Matcher::parse_claude(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn paths() {
        let p = PathPattern::new("/etc/**").unwrap();
        let m = p.resolve(None, None).unwrap();
        assert!(m.is_match("/etc/passwd"));
        assert!(m.is_match("/etc/ssh/sshd_config"));
        assert!(!m.is_match("/home/etc/x"));
        let p = PathPattern::new("~/.ssh/**").unwrap();
        assert!(
            p.resolve(Some("/home/a"), None)
                .unwrap()
                .is_match("/home/a/.ssh/id_rsa")
        );
        assert!(p.resolve(None, None).is_none());
        let p = PathPattern::new("src/*.rs").unwrap();
        let m = p.resolve(None, Some("/w")).unwrap();
        assert!(m.is_match("/w/src/a.rs"));
        assert!(!m.is_match("/w/src/x/a.rs"));
        assert!(PathPattern::new("a[").is_err());
    }

    #[test]
    fn domains_and_hosts() {
        let d = DomainPattern::new("*.example.com").unwrap();
        assert!(d.matches("api.example.com"));
        assert!(!d.matches("example.com"));
        assert!(!d.matches("evilexample.com"));
        let d = DomainPattern::new("example.com").unwrap();
        assert!(d.matches("EXAMPLE.com."));
        assert!(!d.matches("a.example.com"));
        assert!(DomainPattern::new("exa mple.com").is_err());
        assert_eq!(
            url_host("https://u:p@Host.io:8443/x?y").as_deref(),
            Some("host.io")
        );
        assert_eq!(url_host("http://[::1]:80/").as_deref(), Some("::1"));
        assert_eq!(
            hosts_in("curl -fsSL 'https://a.example.com/i.sh' -o x"),
            vec!["a.example.com".to_string()]
        );
    }
}

#[cfg(test)]
mod props {
    use super::*;
    use proptest::prelude::*;

    /// The same glob semantics written another way: a regex over the whole text.
    fn reference(pattern: &str, text: &str) -> bool {
        let norm = pattern.split_whitespace().collect::<Vec<_>>().join(" ");
        let body: Vec<String> = norm.split('*').map(regex_escape).collect();
        let mut re = format!("^{}$", body.join(".*"));
        if norm.ends_with(" *") {
            let bare: Vec<String> = norm[..norm.len() - 2]
                .split('*')
                .map(regex_escape)
                .collect();
            re = format!("{re}|^{}$", bare.join(".*"));
        }
        regex_lite_match(&re, text)
    }

    fn regex_escape(s: &str) -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == ' ' {
                    c.to_string()
                } else {
                    format!("\\x{{{:x}}}", c as u32)
                }
            })
            .collect()
    }

    fn regex_lite_match(re: &str, text: &str) -> bool {
        regex::Regex::new(&format!("(?s){re}")).is_ok_and(|r| r.is_match(text))
    }

    proptest! {
        #[test]
        fn command_patterns_agree_with_a_regex(
            pat in "[a-c -]{0,3}(\\*[a-c -]{0,3}){0,3}",
            text in "[a-c -]{0,10}",
        ) {
            prop_assume!(!pat.trim().is_empty() && !pat.trim().ends_with(":*"));
            let p = CommandPattern::new(&pat).unwrap();
            prop_assert_eq!(p.matches(&text), reference(&pat, &text), "{:?} {:?}", pat, text);
        }

        #[test]
        fn parsing_never_panics(s in "\\PC{0,40}") {
            let _ = Matcher::parse_claude(&s);
            let _ = CommandPattern::new(&s);
            let _ = NameGlob::new(&s);
            let _ = PathPattern::new(&s);
            let _ = DomainPattern::new(&s);
            let _ = url_host(&s);
        }
    }
}
