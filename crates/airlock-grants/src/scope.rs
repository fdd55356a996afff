//! What a grant covers, whether an action falls inside it, and whether one scope lies inside
//! another (attenuation). Every test here errs towards "not covered": a scope that cannot be
//! read, a command that is not one simple literal command, a path with `..` all fall outside.

use airlock_core::Action;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::GrantError;

/// SHA-256 (hex) of the RFC 8785 canonical JSON of the whole action (kind, command or tool and
/// arguments, cwd when present): the identity of one exact action.
pub fn action_hash(action: &Action) -> Result<String, GrantError> {
    airlock_ledger::canonical::hash_value(action)
        .map_err(|e| GrantError::Invalid(format!("the action has no canonical form: {e}")))
}

/// An action with what scopes compare computed once: its hash, and for a shell action the argv
/// of its command line when that is one simple literal command.
#[derive(Debug, Clone)]
pub struct PreparedAction<'a> {
    pub action: &'a Action,
    pub hash: Option<String>,
    pub argv: Option<Vec<String>>,
}

impl<'a> PreparedAction<'a> {
    pub fn new(action: &'a Action) -> Self {
        PreparedAction {
            action,
            hash: action_hash(action).ok(),
            argv: match action {
                Action::Shell { command, .. } => airlock_shell::simple_argv(command),
                _ => None,
            },
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Scope {
    /// One exact action, by the hash of its canonical JSON (the action is kept so that a
    /// forwarded exact grant can be checked against a wider parent).
    Exact { action_hash: String, action: Action },
    /// Shell commands that are one simple command of literal words whose argv starts with
    /// these words.
    CommandPrefix { argv: Vec<String> },
    /// TCP connections through `airlock run`'s egress proxy to one host (a DNS name or an IP
    /// literal), on one port or any. A name that resolves to a loopback, link-local or private
    /// address is refused unless `private` is set (an IP literal names its address itself).
    Network {
        host: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        port: Option<u16>,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        private: bool,
    },
    /// Writing to one file or under one directory inside `airlock run` (Landlock).
    Write { path: String },
    /// Calls of one tool whose arguments satisfy every constraint.
    Tool {
        tool: String,
        #[serde(default)]
        constraints: Vec<ArgConstraint>,
        /// Every argument must be under a constrained pointer (no unconstrained extras).
        #[serde(default)]
        exact_fields: bool,
    },
}

/// The internal tool name of one connection through the sandbox's egress proxy: a network
/// scope matches `{"host": …, "port": …}` under it.
pub const CONNECT_TOOL: &str = "airlock.sandbox.connect";
/// The internal tool name of opening a path for writing to a sandboxed command.
pub const WRITE_TOOL: &str = "airlock.sandbox.write";

/// The action a network scope is checked against: one connection to `host:port`.
pub fn connect_action(host: &str, port: u16) -> Action {
    Action::Tool {
        tool: CONNECT_TOOL.into(),
        arguments: serde_json::json!({"host": host, "port": port}),
    }
}

/// The action a write scope is checked against: opening `path` for writing.
pub fn write_action(path: &str) -> Action {
    Action::Tool {
        tool: WRITE_TOOL.into(),
        arguments: serde_json::json!({"path": path}),
    }
}

/// One argument constraint: the value at a JSON pointer (RFC 6901) satisfies `rule`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArgConstraint {
    pub pointer: String,
    pub rule: Constraint,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Constraint {
    /// Exactly this JSON value.
    Eq(Value),
    /// One of these values.
    OneOf(Vec<Value>),
    /// A string starting with this text.
    Prefix(String),
    /// A path (string) matching this glob; `*` stays inside one segment, `**` crosses them. A
    /// path with a `..` segment never matches.
    PathGlob(String),
}

impl Scope {
    /// The exact scope of one action.
    pub fn exact(action: &Action) -> Result<Scope, GrantError> {
        Ok(Scope::Exact {
            action_hash: action_hash(action)?,
            action: action.clone(),
        })
    }

    /// A command-prefix scope from a command line (which must itself be one simple command of
    /// literal words).
    pub fn command_prefix(line: &str) -> Result<Scope, GrantError> {
        let argv = airlock_shell::simple_argv(line).ok_or_else(|| {
            GrantError::Invalid(format!(
                "{line:?} is not one simple command of literal words (no pipes, lists, redirections, substitutions, variables or globs): it cannot be a command prefix"
            ))
        })?;
        Ok(Scope::CommandPrefix { argv })
    }

    /// Checks the scope is well formed: hashes match their action, pointers and globs parse.
    pub fn validate(&self) -> Result<(), GrantError> {
        match self {
            Scope::Exact {
                action_hash: h,
                action,
            } => {
                if *h != action_hash(action)? {
                    return Err(GrantError::Invalid(
                        "the exact scope's hash is not the hash of its action".into(),
                    ));
                }
            }
            Scope::CommandPrefix { argv } => {
                if argv.iter().any(|w| w.chars().any(|c| c.is_control())) {
                    return Err(GrantError::Invalid(
                        "a command prefix word contains control characters".into(),
                    ));
                }
            }
            Scope::Network { host, port, .. } => {
                if host.is_empty()
                    || host
                        .chars()
                        .any(|c| c.is_whitespace() || c.is_control() || "/*?@#".contains(c))
                {
                    return Err(GrantError::Invalid(format!(
                        "network host {host:?} must be one DNS name or IP address, without wildcards, paths or ports"
                    )));
                }
                if *port == Some(0) {
                    return Err(GrantError::Invalid("port 0 is no port".into()));
                }
            }
            Scope::Write { path } => {
                if !path.starts_with('/') || has_dotdot(path) || path.contains('\0') {
                    return Err(GrantError::Invalid(format!(
                        "write path {path:?} must be absolute, without `..`"
                    )));
                }
            }
            Scope::Tool {
                tool, constraints, ..
            } => {
                if tool.is_empty() {
                    return Err(GrantError::Invalid("a tool scope needs a tool name".into()));
                }
                for c in constraints {
                    if !(c.pointer.is_empty() || c.pointer.starts_with('/')) {
                        return Err(GrantError::Invalid(format!(
                            "argument pointer {:?} must be empty or start with / (JSON pointer, e.g. /path)",
                            c.pointer
                        )));
                    }
                    if let Constraint::PathGlob(g) = &c.rule {
                        compile_glob(g)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Whether `action` falls inside this scope.
    pub fn matches(&self, action: &Action) -> bool {
        self.matches_prepared(&PreparedAction::new(action))
    }

    /// [`Scope::matches`] with the action's hash and argv computed once for many scopes.
    pub fn matches_prepared(&self, p: &PreparedAction<'_>) -> bool {
        match self {
            Scope::Exact { action_hash: h, .. } => p.hash.as_deref() == Some(h.as_str()),
            Scope::CommandPrefix { argv } => p
                .argv
                .as_ref()
                .is_some_and(|words| !argv.is_empty() && words.starts_with(argv)),
            Scope::Network {
                host,
                port,
                private: _,
            } => match p.action {
                Action::Tool { tool, arguments } if tool == CONNECT_TOOL => {
                    arguments
                        .get("host")
                        .and_then(Value::as_str)
                        .is_some_and(|h| h.eq_ignore_ascii_case(host))
                        && arguments
                            .get("port")
                            .and_then(Value::as_u64)
                            .is_some_and(|p| port.is_none_or(|want| u64::from(want) == p))
                }
                _ => false,
            },
            Scope::Write { path } => match p.action {
                Action::Tool { tool, arguments } if tool == WRITE_TOOL => arguments
                    .get("path")
                    .and_then(Value::as_str)
                    .is_some_and(|a| path_under(a, path)),
                _ => false,
            },
            Scope::Tool {
                tool,
                constraints,
                exact_fields,
            } => match p.action {
                Action::Tool { tool: t, arguments } => {
                    t == tool
                        && constraints.iter().all(|c| {
                            arguments
                                .pointer(&c.pointer)
                                .is_some_and(|v| c.rule.accepts(v))
                        })
                        && (!exact_fields || only_under(arguments, constraints))
                }
                _ => false,
            },
        }
    }

    /// Whether every action this scope matches is matched by `parent` too (sound, not
    /// complete: when in doubt, `false`).
    pub fn is_within(&self, parent: &Scope) -> bool {
        match (self, parent) {
            (Scope::Exact { action_hash: a, .. }, Scope::Exact { action_hash: b, .. }) => a == b,
            (Scope::Exact { action, .. }, _) => parent.matches(action),
            (Scope::CommandPrefix { argv: c }, Scope::CommandPrefix { argv: p }) => {
                !p.is_empty() && c.starts_with(p)
            }
            (
                Scope::Network {
                    host: ch,
                    port: cp,
                    private: cv,
                },
                Scope::Network {
                    host: ph,
                    port: pp,
                    private: pv,
                },
            ) => ch.eq_ignore_ascii_case(ph) && (pp.is_none() || cp == pp) && (!cv || *pv),
            (Scope::Write { path: c }, Scope::Write { path: p }) => path_under(c, p),
            (
                Scope::Tool {
                    tool: ct,
                    constraints: cc,
                    exact_fields: cx,
                },
                Scope::Tool {
                    tool: pt,
                    constraints: pc,
                    exact_fields: px,
                },
            ) => {
                ct == pt
                    && pc.iter().all(|p| {
                        cc.iter()
                            .any(|c| c.pointer == p.pointer && c.rule.is_within(&p.rule))
                    })
                    && (!px
                        || (*cx
                            && cc
                                .iter()
                                .all(|c| pc.iter().any(|p| under(&c.pointer, &p.pointer)))))
            }
            _ => false,
        }
    }

    /// A short human description (for listings).
    pub fn describe(&self) -> String {
        match self {
            Scope::Exact { action, .. } => match action {
                Action::Shell { command, .. } => format!("exact: {command}"),
                Action::Tool { tool, .. } => format!("exact: tool {tool} with fixed arguments"),
                other => format!("exact: one {} action", other.kind().as_str()),
            },
            Scope::CommandPrefix { argv } => format!("prefix: {} …", argv.join(" ")),
            Scope::Network {
                host,
                port,
                private,
            } => format!(
                "network: {host}{}{}",
                port.map(|p| format!(":{p}")).unwrap_or_default(),
                if *private {
                    " (private addresses too)"
                } else {
                    ""
                }
            ),
            Scope::Write { path } => format!("write: {path}"),
            Scope::Tool {
                tool,
                constraints,
                exact_fields,
            } => {
                let mut s = format!("tool: {tool}");
                for c in constraints {
                    s.push_str(&format!(" {}{}", c.pointer, c.rule.describe()));
                }
                if *exact_fields {
                    s.push_str(" (no other arguments)");
                }
                s
            }
        }
    }
}

impl Constraint {
    /// Whether `v` satisfies this constraint.
    pub fn accepts(&self, v: &Value) -> bool {
        match self {
            Constraint::Eq(x) => v == x,
            Constraint::OneOf(xs) => xs.iter().any(|x| x == v),
            Constraint::Prefix(p) => v.as_str().is_some_and(|s| s.starts_with(p.as_str())),
            Constraint::PathGlob(g) => v.as_str().is_some_and(|s| path_matches(g, s)),
        }
    }

    /// Whether every value this constraint accepts is accepted by `parent`.
    pub fn is_within(&self, parent: &Constraint) -> bool {
        match (self, parent) {
            (Constraint::Eq(x), p) => p.accepts(x),
            (Constraint::OneOf(xs), p) => xs.iter().all(|x| p.accepts(x)),
            (Constraint::Prefix(c), Constraint::Prefix(p)) => c.starts_with(p.as_str()),
            (Constraint::PathGlob(c), Constraint::Prefix(p)) => {
                !has_dotdot(c) && literal_prefix(c).starts_with(p.as_str())
            }
            (Constraint::PathGlob(c), Constraint::PathGlob(p)) => {
                if has_dotdot(c) || compile_glob(c).is_err() {
                    return false;
                }
                if c == p || (literal_prefix(c) == c.as_str() && path_matches(p, c)) {
                    return true;
                }
                // `DIR/**` (DIR literal) contains every glob that starts with `DIR/`.
                match p.strip_suffix("**") {
                    Some(dir) if dir.ends_with('/') && literal_prefix(dir) == dir => {
                        c.starts_with(dir)
                    }
                    _ => false,
                }
            }
            _ => false,
        }
    }

    fn describe(&self) -> String {
        match self {
            Constraint::Eq(v) => format!("={v}"),
            Constraint::OneOf(vs) => format!(
                " in [{}]",
                vs.iter()
                    .map(Value::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Constraint::Prefix(p) => format!(" starts with {p:?}"),
            Constraint::PathGlob(g) => format!(" matches {g}"),
        }
    }
}

/// The text before a glob's first special character.
fn literal_prefix(g: &str) -> &str {
    let end = g.find(['*', '?', '[', '{', '\\']).unwrap_or(g.len());
    &g[..end]
}

/// Whether `path` is `root` or lies below it, segment by segment (no `..` anywhere).
fn path_under(path: &str, root: &str) -> bool {
    if has_dotdot(path) || has_dotdot(root) || path.contains('\0') {
        return false;
    }
    let root = root.trim_end_matches('/');
    path == root || path.strip_prefix(root).is_some_and(|r| r.starts_with('/'))
}

fn has_dotdot(p: &str) -> bool {
    p.split('/').any(|seg| seg == "..")
}

pub(crate) fn compile_glob(g: &str) -> Result<globset::GlobMatcher, GrantError> {
    if has_dotdot(g) {
        return Err(GrantError::Invalid(format!(
            "path glob {g:?} has a `..` segment: write the path without it"
        )));
    }
    if g.is_empty() {
        return Err(GrantError::Invalid("an empty path glob".into()));
    }
    globset::GlobBuilder::new(g)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .map(|g| g.compile_matcher())
        .map_err(|e| GrantError::Invalid(format!("path glob {g:?}: {e}")))
}

fn path_matches(glob: &str, path: &str) -> bool {
    if has_dotdot(path) || path.contains('\0') || path.is_empty() {
        return false;
    }
    compile_glob(glob).is_ok_and(|m| m.is_match(path))
}

/// Whether pointer `c` is `p` or lies below it.
fn under(c: &str, p: &str) -> bool {
    p.is_empty() || c == p || c.strip_prefix(p).is_some_and(|r| r.starts_with('/'))
}

/// Whether every leaf of `args` lies under one of the constrained pointers.
fn only_under(args: &Value, constraints: &[ArgConstraint]) -> bool {
    let mut leaves = Vec::new();
    leaf_pointers(args, String::new(), &mut leaves);
    leaves
        .iter()
        .all(|l| constraints.iter().any(|c| under(l, &c.pointer)))
}

fn leaf_pointers(v: &Value, at: String, out: &mut Vec<String>) {
    match v {
        Value::Object(m) if !m.is_empty() => {
            for (k, x) in m {
                let k = k.replace('~', "~0").replace('/', "~1");
                leaf_pointers(x, format!("{at}/{k}"), out);
            }
        }
        Value::Array(a) if !a.is_empty() => {
            for (i, x) in a.iter().enumerate() {
                leaf_pointers(x, format!("{at}/{i}"), out);
            }
        }
        // An empty top-level object has no leaves; anything else is one.
        Value::Object(_) if at.is_empty() => {}
        _ => out.push(at),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(t: &str, args: Value) -> Action {
        Action::Tool {
            tool: t.into(),
            arguments: args,
        }
    }

    fn c(pointer: &str, rule: Constraint) -> ArgConstraint {
        ArgConstraint {
            pointer: pointer.into(),
            rule,
        }
    }

    #[test]
    fn prefix_matches_only_simple_commands() {
        let s = Scope::command_prefix("git push").unwrap();
        assert!(s.matches(&Action::shell("git push origin main")));
        assert!(s.matches(&Action::shell("git push")));
        assert!(!s.matches(&Action::shell("git pull")));
        assert!(!s.matches(&Action::shell("git push; rm -rf /")));
        assert!(!s.matches(&Action::shell("git push $(curl x)")));
        assert!(!s.matches(&Action::shell("git push > ~/.bashrc")));
        assert!(!s.matches(&Action::shell("gitpush")));
        assert!(!s.matches(&tool("git push", json!({}))));
        assert!(Scope::command_prefix("git push; x").is_err());
    }

    #[test]
    fn exact_is_by_hash() {
        let a = Action::shell("git push origin main");
        let s = Scope::exact(&a).unwrap();
        assert!(s.matches(&a));
        assert!(!s.matches(&Action::shell("git push origin main ")));
        s.validate().unwrap();
        let forged = Scope::Exact {
            action_hash: "00".repeat(32),
            action: a,
        };
        assert!(forged.validate().is_err());
    }

    #[test]
    fn tool_constraints() {
        let s = Scope::Tool {
            tool: "write_file".into(),
            constraints: vec![c("/path", Constraint::PathGlob("/work/**".into()))],
            exact_fields: false,
        };
        assert!(s.matches(&tool("write_file", json!({"path": "/work/a/b.rs", "x": 1}))));
        assert!(!s.matches(&tool("write_file", json!({"path": "/work/../etc/passwd"}))));
        assert!(!s.matches(&tool("write_file", json!({"path": "/etc/passwd"}))));
        assert!(!s.matches(&tool("write_file", json!({}))));
        assert!(!s.matches(&tool("read_file", json!({"path": "/work/a"}))));
        let strict = Scope::Tool {
            tool: "write_file".into(),
            constraints: vec![c("/path", Constraint::PathGlob("/work/**".into()))],
            exact_fields: true,
        };
        assert!(strict.matches(&tool("write_file", json!({"path": "/work/a"}))));
        assert!(!strict.matches(&tool("write_file", json!({"path": "/work/a", "x": 1}))));
        let star = Scope::Tool {
            tool: "w".into(),
            constraints: vec![c("/p", Constraint::PathGlob("/work/*.rs".into()))],
            exact_fields: false,
        };
        assert!(star.matches(&tool("w", json!({"p": "/work/a.rs"}))));
        assert!(!star.matches(&tool("w", json!({"p": "/work/x/a.rs"}))));
        assert!(compile_glob("/work/../**").is_err());
    }

    #[test]
    fn network_and_write_scopes() {
        let n = Scope::Network {
            host: "api.github.com".into(),
            port: Some(443),
            private: false,
        };
        n.validate().unwrap();
        assert!(n.matches(&connect_action("api.github.com", 443)));
        assert!(n.matches(&connect_action("API.github.com", 443)));
        assert!(!n.matches(&connect_action("api.github.com", 80)));
        assert!(!n.matches(&connect_action("evil.github.com", 443)));
        assert!(!n.matches(&tool(
            "airlock.sandbox.write",
            json!({"host": "api.github.com", "port": 443})
        )));
        let any_port = Scope::Network {
            host: "api.github.com".into(),
            port: None,
            private: false,
        };
        assert!(any_port.matches(&connect_action("api.github.com", 8443)));
        assert!(n.is_within(&any_port));
        assert!(!any_port.is_within(&n));
        let private = Scope::Network {
            host: "api.github.com".into(),
            port: None,
            private: true,
        };
        assert!(!private.is_within(&any_port));
        assert!(any_port.is_within(&private));
        for bad in ["", "*.github.com", "a b", "h/x", "user@h"] {
            let s = Scope::Network {
                host: bad.into(),
                port: None,
                private: false,
            };
            assert!(s.validate().is_err(), "{bad:?}");
        }
        let w = Scope::Write {
            path: "/home/u/.config/foo".into(),
        };
        w.validate().unwrap();
        assert!(w.matches(&write_action("/home/u/.config/foo")));
        assert!(w.matches(&write_action("/home/u/.config/foo/bar")));
        assert!(!w.matches(&write_action("/home/u/.config/foobar")));
        assert!(!w.matches(&write_action("/home/u/.config/foo/../../.ssh")));
        assert!(
            Scope::Write {
                path: "/home/u/.config/foo/x".into()
            }
            .is_within(&w)
        );
        assert!(!w.is_within(&Scope::Write {
            path: "/home/u/.config/foo/x".into()
        }));
        assert!(Scope::Write { path: "rel".into() }.validate().is_err());
        assert!(
            Scope::Write {
                path: "/a/../b".into()
            }
            .validate()
            .is_err()
        );
    }

    #[test]
    fn attenuation() {
        let p = Scope::command_prefix("git push").unwrap();
        assert!(
            Scope::command_prefix("git push origin")
                .unwrap()
                .is_within(&p)
        );
        assert!(!Scope::command_prefix("git").unwrap().is_within(&p));
        assert!(
            Scope::exact(&Action::shell("git push origin"))
                .unwrap()
                .is_within(&p)
        );
        assert!(
            !Scope::exact(&Action::shell("git push; rm -rf /"))
                .unwrap()
                .is_within(&p)
        );
        let glob = |g: &str| Constraint::PathGlob(g.into());
        assert!(glob("/work/src/*.rs").is_within(&glob("/work/**")));
        assert!(!glob("/work/../etc/*").is_within(&glob("/work/**")));
        assert!(!glob("/*").is_within(&glob("/work/**")));
        assert!(glob("/work/a").is_within(&glob("/work/*")));
        assert!(!glob("/work/*").is_within(&glob("/work/a")));
        assert!(
            Constraint::Prefix("https://a/b".into())
                .is_within(&Constraint::Prefix("https://a/".into()))
        );
        assert!(Constraint::Eq(json!("x")).is_within(&Constraint::OneOf(vec![json!("x")])));
        assert!(
            !Constraint::OneOf(vec![json!("x"), json!("y")]).is_within(&Constraint::Eq(json!("x")))
        );
        let pt = Scope::Tool {
            tool: "t".into(),
            constraints: vec![c("/a", Constraint::Prefix("x".into()))],
            exact_fields: true,
        };
        let loose = Scope::Tool {
            tool: "t".into(),
            constraints: vec![c("/a", Constraint::Eq(json!("xy")))],
            exact_fields: false,
        };
        assert!(!loose.is_within(&pt));
        let tight = Scope::Tool {
            tool: "t".into(),
            constraints: vec![c("/a", Constraint::Eq(json!("xy")))],
            exact_fields: true,
        };
        assert!(tight.is_within(&pt));
    }
}
