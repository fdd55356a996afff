//! The terminal channel of the broker: `airlock pending`, `airlock approve ID`, `airlock deny ID`
//! and `airlock watch` (an interactive prompt). They are clients of a running `airlock serve`
//! and present an approver token, so the daemon checks who answers exactly as it does for the
//! web inbox; an agent token is refused there, and the shell rules deny agents these commands.

use std::io::{BufRead, Write};
use std::time::Duration;

use anyhow::{Result, bail};
use serde_json::{Value, json};

use airlock_store::StoreOptions;

use crate::daemon::{Client, DaemonRefusal, person_endpoint};
use airlock_grants::system_now_ms as now_ms;

#[derive(clap::Args, Clone)]
pub struct Conn {
    /// The daemon's URL (default: AIRLOCK_URL, else the running `airlock serve` of the data
    /// directory).
    #[arg(long, value_name = "URL")]
    url: Option<String>,
    /// An approver token (default: AIRLOCK_TOKEN).
    #[arg(long, value_name = "TOKEN", hide_env_values = true)]
    token: Option<String>,
}

#[derive(clap::Args)]
pub struct PendingArgs {
    #[command(flatten)]
    conn: Conn,
    /// One JSON document instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
pub struct ApproveArgs {
    /// The approval's id (from `airlock pending` or the inbox).
    id: String,
    /// Also allow the same action again in this session (a narrow, revocable grant).
    #[arg(long)]
    session: bool,
    /// The confirmation code of a critical (tier-4) action, as `airlock pending` shows it.
    #[arg(long)]
    code: Option<String>,
    #[arg(long, default_value = "")]
    reason: String,
    #[command(flatten)]
    conn: Conn,
}

#[derive(clap::Args)]
pub struct DenyArgs {
    id: String,
    /// Why: the agent is told.
    #[arg(long)]
    reason: String,
    #[command(flatten)]
    conn: Conn,
}

#[derive(clap::Args)]
pub struct WatchArgs {
    #[command(flatten)]
    conn: Conn,
    /// Seconds between looks at the queue.
    #[arg(long, default_value_t = 1.0)]
    interval: f64,
    /// Answer what is pending now, then exit (for scripts and tests).
    #[arg(long)]
    once: bool,
}

fn client(conn: &Conn, store: &StoreOptions) -> Result<Client> {
    let data_dir = &store.data_dir;
    Client::new(
        person_endpoint(data_dir, conn.url.clone(), conn.token.clone())?,
        data_dir,
    )
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?)
}

const CALL: Duration = Duration::from_secs(15);

async fn pending_list(c: &Client) -> Result<Vec<Value>> {
    let v = c.get("/v1/approvals", CALL).await?;
    Ok(match v {
        Value::Array(a) => a,
        Value::Object(mut m) => match m.remove("approvals") {
            Some(Value::Array(a)) => a,
            _ => Vec::new(),
        },
        _ => Vec::new(),
    })
}

pub fn pending(a: PendingArgs, store: &StoreOptions) -> Result<u8> {
    let c = client(&a.conn, store)?;
    let rt = runtime()?;
    let list = rt.block_on(pending_list(&c))?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&list)?);
        return Ok(0);
    }
    // the sessions in crisis mode come first: their decision tools wait for a person
    if let Ok(Value::Array(sessions)) = rt.block_on(c.get("/v1/crisis", CALL)) {
        for s in &sessions {
            let text = |k: &str| s.get(k).and_then(Value::as_str).unwrap_or("?").to_string();
            println!(
                "IN CRISIS MODE  session {} (agent {}): crisis verdict from {} ({}); its decision tools need a person. `airlock crisis clear {}` ends it.",
                text("session"),
                text("agent"),
                text("source"),
                text("rule"),
                text("session")
            );
        }
    }
    if list.is_empty() {
        println!("nothing is waiting for an answer");
    }
    let now = now_ms();
    for ap in &list {
        print!("{}", describe(ap, now));
    }
    Ok(0)
}

pub fn approve(a: ApproveArgs, store: &StoreOptions) -> Result<u8> {
    let c = client(&a.conn, store)?;
    let body = json!({
        "decision": "approve",
        "scope": if a.session { "session" } else { "once" },
        "reason": a.reason,
        "code": a.code,
    });
    answer(&c, &a.id, body)
}

pub fn deny(a: DenyArgs, store: &StoreOptions) -> Result<u8> {
    if a.reason.trim().is_empty() {
        bail!("a denial needs a reason: the agent is told why");
    }
    let c = client(&a.conn, store)?;
    let body = json!({"decision": "deny", "scope": "once", "reason": a.reason});
    answer(&c, &a.id, body)
}

fn answer(c: &Client, id: &str, mut body: Value) -> Result<u8> {
    if let Some(m) = body.as_object_mut() {
        m.retain(|_, v| !v.is_null());
    }
    let path = format!("/v1/approvals/{}", airlock_gateway::url::segment(id));
    let v = runtime()?.block_on(c.post(&path, &body, CALL))?;
    println!(
        "{} {}",
        v["id"].as_str().unwrap_or(id),
        v["status"].as_str().unwrap_or("answered")
    );
    Ok(0)
}

/// `airlock watch`: shows what waits, counts down, and takes answers typed at the terminal.
/// Several pending actions below tier 4 can be approved in one answer; a critical one is always
/// answered on its own, with its code, and so is a decision for a person who may be in crisis. A prompt whose approval runs out of time moves on: the
/// daemon has denied it (silence is not consent).
/// Whether an approval (as the API lists it) decides something for a person who may be in
/// crisis.
fn crisis_decision(ap: &Value) -> bool {
    ap["reasons"]
        .as_array()
        .is_some_and(|r| r.iter().any(|f| f["code"] == "CRISIS_DECISION"))
}

pub fn watch(a: WatchArgs, store: &StoreOptions) -> Result<u8> {
    let c = client(&a.conn, store)?;
    let rt = runtime()?;
    let mut input = Input::start();
    let interval = Duration::from_secs_f64(a.interval.clamp(0.1, 60.0));
    println!("watching {} for approvals (Ctrl-D to stop)", c.url());
    loop {
        let list = rt.block_on(pending_list(&c))?;
        if list.is_empty() {
            if a.once {
                return Ok(0);
            }
            std::thread::sleep(interval);
            continue;
        }
        let now = now_ms();
        for ap in &list {
            print!("{}", describe(ap, now));
        }
        // a decision for a person who may be in crisis is answered on its own, as tier 4 is
        let batchable: Vec<&Value> = list
            .iter()
            .filter(|ap| tier(ap) < 4 && !crisis_decision(ap))
            .collect();
        if batchable.len() > 1 {
            let first_deadline = batchable
                .iter()
                .filter_map(|ap| ap["deadline_ms"].as_i64())
                .min();
            let text = format!(
                "approve all {} pending below tier 4 (crisis decisions apart)? [y/N]",
                batchable.len()
            );
            let line = match input.ask(&text, first_deadline)? {
                Typed::Line(l) => l,
                Typed::Eof => return Ok(0),
                Typed::Expired => continue,
            };
            if line.trim().eq_ignore_ascii_case("y") {
                for ap in batchable {
                    let body = json!({"decision": "approve", "scope": "once", "reason": "batch approval at the terminal"});
                    report(rt.block_on(post_answer(&c, ap, body)));
                }
                if a.once {
                    return Ok(0);
                }
                continue;
            }
        }
        for ap in &list {
            let deadline = ap["deadline_ms"].as_i64();
            let text = format!(
                "{}: [a]pprove once, approve for the [s]ession, [d]eny, Enter to skip",
                id_of(ap)
            );
            let line = match input.ask(&text, deadline)? {
                Typed::Line(l) => l,
                Typed::Eof => return Ok(0),
                Typed::Expired => continue,
            };
            let body = match line.trim() {
                "a" | "s" => {
                    let mut body = json!({
                        "decision": "approve",
                        "scope": if line.trim() == "s" { "session" } else { "once" },
                        "reason": "approved at the terminal",
                    });
                    if tier(ap) >= 4 {
                        match input.ask("critical action: type its confirmation code:", deadline)? {
                            Typed::Line(code) => body["code"] = json!(code.trim()),
                            Typed::Eof => return Ok(0),
                            Typed::Expired => continue,
                        }
                    }
                    body
                }
                "d" => match input.ask("reason (the agent is told):", deadline)? {
                    Typed::Line(reason) => {
                        json!({"decision": "deny", "scope": "once", "reason": reason.trim()})
                    }
                    Typed::Eof => return Ok(0),
                    Typed::Expired => continue,
                },
                _ => continue,
            };
            report(rt.block_on(post_answer(&c, ap, body)));
        }
        if a.once {
            return Ok(0);
        }
    }
}

/// What the person typed at a prompt.
enum Typed {
    Line(String),
    Eof,
    /// The approval's deadline passed first.
    Expired,
}

/// Lines typed at the terminal, read on a thread so a prompt can count down while it waits.
struct Input {
    lines: std::sync::mpsc::Receiver<String>,
    live: bool,
}

impl Input {
    fn start() -> Input {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::stdin().lock().lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Input {
            lines: rx,
            live: std::io::IsTerminal::is_terminal(&std::io::stdout()),
        }
    }

    /// Shows `text` with the seconds left (redrawn each second on a terminal) and waits for a
    /// line, the end of input, or the deadline.
    fn ask(&mut self, text: &str, deadline_ms: Option<i64>) -> Result<Typed> {
        use std::sync::mpsc::RecvTimeoutError;
        let show = |left: Option<i64>, redraw: bool| {
            let head = if redraw { "\r\x1b[K" } else { "" };
            match left {
                Some(l) => prompt(&format!("{head}{text} ({l}s left) ")),
                None => prompt(&format!("{head}{text} ")),
            }
        };
        let left = || deadline_ms.map(|d| ((d - now_ms()).max(0) + 999) / 1000);
        show(left(), false)?;
        loop {
            match self.lines.recv_timeout(Duration::from_secs(1)) {
                Ok(line) => return Ok(Typed::Line(line)),
                Err(RecvTimeoutError::Disconnected) => return Ok(Typed::Eof),
                Err(RecvTimeoutError::Timeout) => {
                    if left() == Some(0) {
                        println!(
                            "\n  → no answer in time: the daemon denies it (silence is not consent)"
                        );
                        return Ok(Typed::Expired);
                    }
                    if self.live {
                        show(left(), true)?;
                    }
                }
            }
        }
    }
}

async fn post_answer(c: &Client, ap: &Value, mut body: Value) -> Result<Value> {
    // Bind the answer to the exact action that was shown.
    if let Some(h) = ap["action_sha256"].as_str() {
        body["action_sha256"] = json!(h);
    }
    let path = format!("/v1/approvals/{}", airlock_gateway::url::segment(id_of(ap)));
    c.post(&path, &body, CALL).await
}

fn report(r: Result<Value>) {
    match r {
        Ok(v) => println!(
            "  → {} {}",
            v["id"].as_str().unwrap_or("?"),
            v["status"].as_str().unwrap_or("answered")
        ),
        Err(e) => match e.downcast_ref::<DaemonRefusal>() {
            Some(api) => println!("  → not taken: {api}"),
            None => println!("  → error: {e:#}"),
        },
    }
}

fn prompt(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    write!(out, "{text}")?;
    out.flush()?;
    Ok(())
}

fn id_of(ap: &Value) -> &str {
    ap["id"].as_str().unwrap_or("?")
}

fn tier(ap: &Value) -> u64 {
    ap["tier"].as_u64().unwrap_or(4)
}

fn remaining(ap: &Value, now: i64) -> i64 {
    ap["deadline_ms"]
        .as_i64()
        .map(|d| ((d - now).max(0) + 999) / 1000)
        .unwrap_or(0)
}

/// One pending approval as a few lines of text for a person.
pub fn describe(ap: &Value, now: i64) -> String {
    let action = &ap["action"];
    let what = match action["kind"].as_str() {
        Some("shell") => format!("$ {}", action["command"].as_str().unwrap_or("?")),
        Some("tool") => format!(
            "tool {} {}",
            action["tool"].as_str().unwrap_or("?"),
            action["arguments"]
        ),
        Some(k) => format!("{k} {action}"),
        None => action.to_string(),
    };
    let mut s = format!(
        "{}  tier {}  {}  agent {} session {}  {}s left\n    {what}\n",
        id_of(ap),
        tier(ap),
        ap["status"].as_str().unwrap_or("pending"),
        ap["agent"].as_str().unwrap_or("?"),
        ap["session"].as_str().unwrap_or("?"),
        remaining(ap, now),
    );
    for r in ap["reasons"].as_array().into_iter().flatten() {
        s.push_str(&format!(
            "    - {} [{}]: {}\n",
            r["code"].as_str().unwrap_or("?"),
            r["rule_id"].as_str().or(r["rule"].as_str()).unwrap_or("?"),
            r["message"].as_str().unwrap_or("")
        ));
    }
    if let Some(review) = ap.get("llm").filter(|v| !v.is_null()) {
        s.push_str(&format!("    LLM review: {review}\n"));
    }
    if let Some(code) = ap["code"].as_str() {
        s.push_str(&format!("    critical: approve with --code {code}\n"));
    }
    if let Some(sug) = ap["suggestion"].as_str() {
        s.push_str(&format!("    suggested rule (not applied): {sug}\n"));
    }
    s
}
