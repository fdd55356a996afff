//! `airlock grant`: add, list, show, confirm and revoke capabilities in the configured store
//! (`--data-dir` / `--database`, as for `airlock ledger`).
//!
//! Exit codes: 0 done, 1 refused (the request was understood and refused: too broad, not found,
//! not usable; the message carries the reason code), 3 usage or internal error.

use std::time::Duration;

use airlock_confirm::grant_log;
use airlock_core::{Action, ReasonCode};
use airlock_grants::{
    ArgConstraint, Constraint, Grant, GrantBook, GrantConfig, GrantError, GrantKind, ListFilter,
    NewGrant, Scope, Subject,
};
use airlock_ledger::time::format_millis;
use airlock_store::{Db, StoreOptions};
use anyhow::{Context, Result, anyhow, bail};

pub const EXIT_REFUSED: u8 = 1;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    what: What,
}

#[derive(clap::Subcommand)]
enum What {
    /// Grant an agent a narrow capability (administrators). Exactly one of --exact-command,
    /// --prefix, --tool, --network or --write.
    Add(Box<AddArgs>),
    /// List grants: by default only those usable now.
    List {
        #[arg(long)]
        agent: Option<String>,
        /// Grants of this session and the agent's session-less grants.
        #[arg(long)]
        session: Option<String>,
        /// Also revoked, expired, used-up and proposed grants.
        #[arg(long)]
        all: bool,
        #[arg(long)]
        json: bool,
    },
    /// Show one grant and the grants it derives from.
    Show {
        id: String,
        #[arg(long)]
        json: bool,
    },
    /// Confirm a grant an LLM reviewer proposed (a person must).
    Confirm {
        id: String,
        /// Who confirms (default: $USER).
        #[arg(long)]
        by: Option<String>,
    },
    /// Revoke a grant and every grant derived from it.
    Revoke {
        id: String,
        #[arg(long, default_value = "revoked from the command line")]
        reason: String,
    },
    /// End a session: revoke its session grants and what was forwarded from them.
    EndSession { session: String },
}

#[derive(clap::Args)]
struct AddArgs {
    /// The agent that may use the grant.
    #[arg(long)]
    agent: String,
    /// Only in this session (required for --kind session).
    #[arg(long)]
    session: Option<String>,
    /// Exactly this shell command line (by the hash of its canonical form).
    #[arg(long, value_name = "CMD", group = "scope")]
    exact_command: Option<String>,
    /// Shell commands that are one simple literal command starting with these words.
    #[arg(long, value_name = "WORDS", group = "scope")]
    prefix: Option<String>,
    /// Calls of this tool (constrain its arguments with --arg).
    #[arg(long, value_name = "NAME", group = "scope")]
    tool: Option<String>,
    /// Connections through `airlock run`'s egress proxy to HOST (a name or an IP address),
    /// on PORT only when given.
    #[arg(long, value_name = "HOST[:PORT]", group = "scope")]
    network: Option<String>,
    /// With --network: a name that resolves to a loopback, link-local or private address may
    /// be reached too.
    #[arg(long, requires = "network")]
    private: bool,
    /// Writing to this file or under this directory inside `airlock run`.
    #[arg(long, value_name = "PATH", group = "scope")]
    write: Option<String>,
    /// Argument constraint for --tool: POINTER=VALUE (equal; VALUE is JSON or a plain string),
    /// POINTER|=V1|V2 (one of), POINTER^=TEXT (starts with), POINTER~=GLOB (path glob; `..`
    /// never matches). POINTER is a JSON pointer such as /path.
    #[arg(long = "arg", value_name = "CONSTRAINT", requires = "tool")]
    args: Vec<String>,
    /// With --tool: refuse calls with arguments outside the constrained pointers.
    #[arg(long, requires = "tool")]
    exact_fields: bool,
    /// With --tool: the tool is dangerous, so a scope without constraints is too broad.
    #[arg(long, requires = "tool")]
    dangerous: bool,
    /// once (1 use), session (ends with --session) or permanent (a long expiry); default:
    /// session with --session, permanent without.
    #[arg(long, value_parser = ["once", "session", "permanent"])]
    kind: Option<String>,
    /// Maximum uses (default: 1 for once, 1000 for session, 100000 for permanent).
    #[arg(long)]
    uses: Option<u32>,
    /// Lifetime such as 90s, 30m, 8h, 7d (default: 1h once, 24h session, 30d permanent; at most
    /// 30d).
    #[arg(long, value_name = "DURATION")]
    expires: Option<String>,
    /// Who grants it (default: $USER).
    #[arg(long)]
    by: Option<String>,
    /// Why (kept with the grant).
    #[arg(long, default_value = "")]
    reason: String,
    /// Allow an over-broad scope (bash -c, python3 -c, sudo, *, …): the admin layer's call.
    #[arg(long)]
    allow_broad: bool,
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args, store: &StoreOptions) -> Result<u8> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let db = Db::open(store)
            .await
            .with_context(|| format!("opening the store in {}", store.data_dir.display()))?;
        let book = GrantBook::new(db.clone(), GrantConfig::default());
        let r = dispatch(store, &book, args.what).await;
        db.close().await;
        match r {
            Ok(code) => Ok(code),
            Err(e) => match e.downcast::<GrantError>() {
                Ok(g) if refusal(&g) => {
                    eprintln!("airlock: refused: {g}");
                    Ok(EXIT_REFUSED)
                }
                Ok(g) => Err(g.into()),
                Err(e) => Err(e),
            },
        }
    })
}

/// A grant book's refusal stays a `GrantError` (its exit code is `EXIT_REFUSED`).
fn grant_error(e: airlock_confirm::ConfirmError) -> anyhow::Error {
    match e {
        airlock_confirm::ConfirmError::Grant(g) => g.into(),
        other => other.into(),
    }
}

fn refusal(e: &GrantError) -> bool {
    !matches!(e.code(), ReasonCode::InternalError)
}

async fn dispatch(store: &StoreOptions, book: &GrantBook, what: What) -> Result<u8> {
    match what {
        What::Add(a) => add(store, book, *a).await,
        What::List {
            agent,
            session,
            all,
            json,
        } => {
            let grants = book
                .list(&ListFilter {
                    agent,
                    session,
                    all,
                })
                .await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&grants)?);
            } else if grants.is_empty() {
                println!(
                    "no grants{}",
                    if all {
                        ""
                    } else {
                        " usable now (--all shows every grant)"
                    }
                );
            } else {
                let now = book.now();
                println!(
                    "{:<35} {:<8} {:<16} {:<14} {:<9} {:>11}  {:<20} SCOPE",
                    "ID", "STATE", "AGENT", "SESSION", "KIND", "USES", "EXPIRES"
                );
                for g in &grants {
                    println!(
                        "{:<35} {:<8} {:<16} {:<14} {:<9} {:>11}  {:<20} {}",
                        g.id,
                        g.state_at(now),
                        g.subject.agent,
                        g.subject.session.as_deref().unwrap_or("-"),
                        g.kind.as_str(),
                        format!("{}/{}", g.uses, g.max_uses),
                        format_millis(g.expires_at),
                        g.scope.describe()
                    );
                }
            }
            Ok(0)
        }
        What::Show { id, json } => {
            let chain = book.chain(&id).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&chain[0])?);
            } else {
                print_grant(&chain[0], book.now());
                for a in &chain[1..] {
                    println!(
                        "derived from: {} ({}, {}/{} uses, {})",
                        a.id,
                        a.state_at(book.now()),
                        a.uses,
                        a.max_uses,
                        a.scope.describe()
                    );
                }
            }
            Ok(0)
        }
        What::Confirm { id, by } => {
            let who = person(by)?;
            let ledger = crate::record::open_ledger(store).await?;
            let g = grant_log::confirm(book, &ledger, &id, &who).await;
            ledger.close().await;
            let g = g.map_err(grant_error)?;
            println!(
                "confirmed {} by {}",
                g.id,
                g.confirmed_by.as_deref().unwrap_or("?")
            );
            Ok(0)
        }
        What::Revoke { id, reason } => {
            let before = book.show(&id).await?;
            let ledger = crate::record::open_ledger(store).await?;
            let n = grant_log::revoke(book, &ledger, &id, &reason, &operator()).await;
            ledger.close().await;
            let n = n.map_err(grant_error)?;
            if n == 0 && before.revoked_at.is_some() {
                println!("{id} was already revoked; nothing changed");
            } else {
                println!(
                    "revoked {id} and {} grant{} derived from it",
                    n.saturating_sub(1),
                    if n == 2 { "" } else { "s" }
                );
            }
            Ok(0)
        }
        What::EndSession { session } => {
            let ledger = crate::record::open_ledger(store).await?;
            let n = grant_log::end_session(book, &ledger, &session, &operator()).await;
            ledger.close().await;
            let n = n.map_err(grant_error)?;
            println!("session {session} ended: {n} grant(s) revoked");
            Ok(0)
        }
    }
}

/// `HOST`, `HOST:PORT` or `[V6]:PORT` of `--network`.
fn split_network(s: &str) -> Result<(String, Option<u16>)> {
    let port = |p: &str| -> Result<u16> {
        p.parse::<u16>()
            .ok()
            .filter(|p| *p != 0)
            .ok_or_else(|| anyhow!("--network {s:?}: {p:?} is not a port (1-65535)"))
    };
    if let Some(r) = s.strip_prefix('[') {
        let (h, after) = r
            .split_once(']')
            .ok_or_else(|| anyhow!("--network {s:?}: an unclosed ["))?;
        return match after.strip_prefix(':') {
            Some(p) => Ok((h.to_string(), Some(port(p)?))),
            None if after.is_empty() => Ok((h.to_string(), None)),
            None => bail!("--network {s:?}: expected [ADDRESS]:PORT"),
        };
    }
    match s.split_once(':') {
        // More than one colon: an IPv6 address without a port.
        Some((h, p)) if !p.contains(':') => Ok((h.to_ascii_lowercase(), Some(port(p)?))),
        _ => Ok((s.to_ascii_lowercase(), None)),
    }
}

async fn add(store: &StoreOptions, book: &GrantBook, a: AddArgs) -> Result<u8> {
    let scope = if let Some(cmd) = &a.exact_command {
        Scope::exact(&Action::shell(cmd.clone()))?
    } else if let Some(p) = &a.prefix {
        Scope::command_prefix(p)?
    } else if let Some(t) = &a.tool {
        let constraints = a
            .args
            .iter()
            .map(|s| parse_arg(s))
            .collect::<Result<Vec<_>>>()?;
        Scope::Tool {
            tool: t.clone(),
            constraints,
            exact_fields: a.exact_fields,
        }
    } else if let Some(n) = &a.network {
        let (host, port) = split_network(n)?;
        Scope::Network {
            host,
            port,
            private: a.private,
        }
    } else if let Some(w) = &a.write {
        Scope::Write { path: w.clone() }
    } else {
        bail!(
            "say what the grant covers: --exact-command CMD, --prefix 'WORDS', --tool NAME, --network HOST[:PORT] or --write PATH"
        );
    };
    let kind = match a.kind.as_deref() {
        Some(k) => GrantKind::parse(k)?,
        None if a.session.is_some() => GrantKind::Session,
        None => GrantKind::Permanent,
    };
    let mut req = NewGrant::new(Subject::new(a.agent, a.session), scope, kind);
    req.max_uses = a.uses;
    req.reason = a.reason;
    if a.allow_broad {
        let policy = crate::cmd::policy::PolicyArgs::default().load()?;
        if !policy.settings.allow_broad_grants {
            return Err(GrantError::TooBroad(
                "--allow-broad needs `allow_broad_grants = true` in the managed (admin) policy"
                    .into(),
            )
            .into());
        }
    }
    req.allow_broad = a.allow_broad;
    req.dangerous_tool = a.dangerous;
    if let Some(e) = &a.expires {
        let d = parse_duration(e)?;
        let ms = i64::try_from(d.as_millis()).unwrap_or(i64::MAX);
        req.expires_at = Some(book.now().saturating_add(ms));
    }
    let who = person(a.by)?;
    let ledger = crate::record::open_ledger(store).await?;
    let g = grant_log::create(book, &ledger, req, &who).await;
    ledger.close().await;
    let g = g.map_err(grant_error)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&g)?);
    } else {
        println!("{}", g.id);
        eprintln!(
            "granted {} to {}{}: {} ({} uses, until {})",
            g.kind.as_str(),
            g.subject.agent,
            g.subject
                .session
                .as_deref()
                .map(|s| format!(" in session {s}"))
                .unwrap_or_default(),
            g.scope.describe(),
            g.max_uses,
            format_millis(g.expires_at)
        );
    }
    Ok(0)
}

fn print_grant(g: &Grant, now: i64) {
    println!("id:        {}", g.id);
    println!("state:     {}", g.state_at(now));
    println!("agent:     {}", g.subject.agent);
    println!(
        "session:   {}",
        g.subject.session.as_deref().unwrap_or("(every session)")
    );
    println!("kind:      {}", g.kind.as_str());
    println!("scope:     {}", g.scope.describe());
    println!("uses:      {}/{}", g.uses, g.max_uses);
    println!(
        "created:   {} by {}",
        format_millis(g.created_at),
        g.creator
    );
    if let (Some(by), Some(at)) = (&g.confirmed_by, g.confirmed_at) {
        println!("confirmed: {} by {by}", format_millis(at));
    }
    println!("expires:   {}", format_millis(g.expires_at));
    if let Some(at) = g.revoked_at {
        println!(
            "revoked:   {} ({})",
            format_millis(at),
            g.revoke_reason.as_deref().unwrap_or("")
        );
    }
    if let Some(p) = &g.parent {
        println!("parent:    {p}");
    }
    if !g.reason.is_empty() {
        println!("reason:    {}", g.reason);
    }
}

/// Who ran a revoking command, for its ledger record.
fn operator() -> String {
    std::env::var("USER")
        .ok()
        .filter(|u| !u.trim().is_empty())
        .unwrap_or_else(|| "unknown".into())
}

fn person(by: Option<String>) -> Result<String> {
    match by.or_else(|| std::env::var("USER").ok()) {
        Some(p) if !p.trim().is_empty() => Ok(p),
        _ => bail!("say who grants it: --by NAME (no $USER set)"),
    }
}

/// `POINTER=VALUE`, `POINTER|=V1|V2`, `POINTER^=TEXT`, `POINTER~=GLOB`.
fn parse_arg(s: &str) -> Result<ArgConstraint> {
    let (left, right) = s.split_once('=').ok_or_else(|| {
        anyhow!(
            "--arg {s:?}: expected POINTER=VALUE, POINTER|=V1|V2, POINTER^=TEXT or POINTER~=GLOB"
        )
    })?;
    let (pointer, rule) = if let Some(p) = left.strip_suffix('^') {
        (p, Constraint::Prefix(right.to_string()))
    } else if let Some(p) = left.strip_suffix('~') {
        (p, Constraint::PathGlob(right.to_string()))
    } else if let Some(p) = left.strip_suffix('|') {
        (
            p,
            Constraint::OneOf(right.split('|').map(json_or_string).collect()),
        )
    } else {
        (left, Constraint::Eq(json_or_string(right)))
    };
    if !pointer.starts_with('/') {
        bail!("--arg {s:?}: the argument is named by a JSON pointer starting with / (e.g. /path)");
    }
    Ok(ArgConstraint {
        pointer: pointer.to_string(),
        rule,
    })
}

fn json_or_string(s: &str) -> serde_json::Value {
    serde_json::from_str(s).unwrap_or_else(|_| serde_json::Value::String(s.to_string()))
}

fn parse_duration(s: &str) -> Result<Duration> {
    let bad = || anyhow!("--expires {s:?}: use a number with s, m, h or d (90s, 30m, 8h, 7d)");
    let (num, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit()).ok_or_else(bad)?);
    let n: u64 = num.parse().map_err(|_| bad())?;
    let secs = match unit {
        "s" => n,
        "m" => n.checked_mul(60).ok_or_else(bad)?,
        "h" => n.checked_mul(3600).ok_or_else(bad)?,
        "d" => n.checked_mul(86_400).ok_or_else(bad)?,
        _ => return Err(bad()),
    };
    if secs == 0 {
        return Err(bad());
    }
    Ok(Duration::from_secs(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constraints_parse() {
        let c = parse_arg("/path~=/work/**").unwrap();
        assert_eq!(c.rule, Constraint::PathGlob("/work/**".into()));
        let c = parse_arg("/n=1").unwrap();
        assert_eq!(c.rule, Constraint::Eq(serde_json::json!(1)));
        let c = parse_arg("/s=hello").unwrap();
        assert_eq!(c.rule, Constraint::Eq(serde_json::json!("hello")));
        let c = parse_arg("/m|=GET|HEAD").unwrap();
        assert_eq!(
            c.rule,
            Constraint::OneOf(vec![serde_json::json!("GET"), serde_json::json!("HEAD")])
        );
        let c = parse_arg("/url^=https://api.example.com/").unwrap();
        assert_eq!(c.pointer, "/url");
        assert!(parse_arg("path=x").is_err());
        assert!(parse_arg("/x").is_err());
    }

    #[test]
    fn durations_parse() {
        assert_eq!(parse_duration("90s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("2h").unwrap(), Duration::from_secs(7200));
        assert_eq!(parse_duration("7d").unwrap(), Duration::from_secs(604_800));
        for bad in ["", "h", "1", "1w", "0s", "-1h", "99999999999999999999d"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }
}
