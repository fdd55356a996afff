//! `airlock mcp`: the MCP gateway's commands. `wrap` is what an MCP client launches instead of
//! a server: it starts the real server as its child and relays JSON-RPC between them through
//! `airlock_mcp::relay`, so tools are hidden, pinned and decided on the way.
//! `approve-tool` lets a person accept a changed tool definition; `pins` lists them.
//!
//! Calls are decided by the running daemon (`airlock serve`, found like the hooks find it), not
//! by a broker inside each wrap: an MCP client starts one wrap per server, and one daemon
//! keeps one inbox, one set of approvers and their channels, one sweeper and one decision per
//! call. No daemon means every gated call is denied (`DAEMON_UNAVAILABLE`): fail-safe.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use airlock_confirm::PinApprovalError;
use airlock_confirm::PolicyProvider;
use airlock_confirm::pins;
use airlock_mcp::{
    Call, CallRuling, Decider, Gateway, McpConfig, OutputCall, OutputRuling, ScanCall, Scanned,
    SecretsCall, SecretsRuling, gate,
};
use airlock_policy::Policy;
use airlock_store::{Db, StoreOptions};
use airlock_wire::{
    ActionAnswer, ActionRequest, ActionStatus, OutputRequest, PrivacyRequest, ScanDirection,
    ScanRecord, ScanRequest,
};
use anyhow::{Context, Result, bail};
use serde_json::Value;

use crate::daemon::{Client, Endpoint};

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Sub,
}

#[derive(clap::Subcommand)]
enum Sub {
    /// Run an MCP server (stdio) behind airlock: `airlock mcp wrap --server NAME -- CMD ARGS…`.
    Wrap(WrapArgs),
    /// Put airlock in front of an MCP server over streamable HTTP.
    Proxy(ProxyArgs),
    /// Accept the changed definition of a quarantined tool (read it first with `pins`).
    ApproveTool {
        server: String,
        tool: String,
        /// The pending hash you reviewed (from `airlock mcp pins`); another definition presented
        /// meanwhile is then not approved. Without it, the definition waiting now is approved.
        #[arg(long)]
        sha256: Option<String>,
        /// Who approves, for the ledger (default: $USER).
        #[arg(long)]
        by: Option<String>,
    },
    /// List the pinned tool definitions.
    Pins {
        #[arg(long)]
        server: Option<String>,
    },
}

#[derive(clap::Args)]
struct WrapArgs {
    /// The server's name in the configuration and the policy (`mcp__NAME__TOOL`); default: the
    /// command's file name.
    #[arg(long)]
    server: Option<String>,
    /// The TOML file with the `[mcp]` table (default: $AIRLOCK_MCP_CONFIG, else
    /// ~/.config/airlock/mcp.toml when it exists).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// The session the decisions belong to (default: $AIRLOCK_SESSION, else mcp-NAME).
    #[arg(long)]
    session: Option<String>,
    /// The daemon's URL (default: $AIRLOCK_URL, else the data directory's serve.json).
    #[arg(long)]
    url: Option<String>,
    /// The agent token (default: $AIRLOCK_TOKEN, else the data directory's agent.token).
    #[arg(long)]
    token: Option<String>,
    /// The server command and its arguments.
    #[arg(last = true, required = true, num_args = 1..)]
    command: Vec<String>,
}

#[derive(clap::Args)]
struct ProxyArgs {
    /// The upstream MCP endpoint (for example http://127.0.0.1:8000/mcp).
    #[arg(long)]
    upstream: String,
    /// ADDRESS:PORT to listen on (loopback unless --allow-remote).
    #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:7374")]
    listen: String,
    /// Allow listening on an address that is not loopback.
    #[arg(long)]
    allow_remote: bool,
    /// The server's name in the configuration and the policy (`mcp__NAME__TOOL`).
    #[arg(long)]
    server: String,
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    #[arg(long)]
    session: Option<String>,
    #[arg(long)]
    url: Option<String>,
    #[arg(long)]
    token: Option<String>,
}

pub fn run(args: Args, store: &StoreOptions) -> Result<u8> {
    match args.command {
        Sub::Wrap(a) => wrap(a, store),
        Sub::Proxy(a) => proxy(a, store),
        Sub::ApproveTool {
            server,
            tool,
            sha256,
            by,
        } => block_on(approve_tool(store, server, tool, sha256, by)),
        Sub::Pins { server } => block_on(pins(store, server)),
    }
}

fn block_on<F: std::future::Future<Output = Result<u8>>>(f: F) -> Result<u8> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(f)
}

async fn open_db(opts: &StoreOptions) -> Result<Db> {
    Db::open(opts)
        .await
        .with_context(|| format!("opening the store in {}", opts.data_dir.display()))
}

async fn approve_tool(
    store: &StoreOptions,
    server: String,
    tool: String,
    sha256: Option<String>,
    by: Option<String>,
) -> Result<u8> {
    let person = match by.or_else(|| std::env::var("USER").ok()) {
        Some(p) if !p.trim().is_empty() => p,
        _ => bail!("say who approves: --by NAME (no $USER set)"),
    };
    if let Some(h) = &sha256
        && !pins::is_sha256(h)
    {
        bail!(
            "--sha256 must be 64 lowercase hex digits (the pending hash `airlock mcp pins` shows)"
        );
    }
    // checked, recorded (naming the person) and moved as the REST API and the inbox do
    let ledger = crate::record::open_ledger(store).await?;
    let r = airlock_confirm::approve_pin(&ledger, &server, &tool, sha256.as_deref(), &person).await;
    ledger.close().await;
    match r {
        Ok(done) => {
            println!(
                "approved the new definition of {tool} ({server}, {}); it is usable again (receipt {})",
                done.approved_sha256, done.receipt
            );
            Ok(0)
        }
        Err(PinApprovalError::NoPin { .. }) => {
            eprintln!("airlock: nothing to approve: no pin for {server}/{tool}");
            Ok(1)
        }
        Err(PinApprovalError::NotQuarantined { .. }) => {
            eprintln!("airlock: nothing to approve: {server}/{tool} is not quarantined");
            Ok(1)
        }
        Err(PinApprovalError::Changed { presented, .. }) => {
            eprintln!(
                "airlock: {server}/{tool} now presents another definition ({presented}) than the one you reviewed; read it again with `airlock mcp pins`"
            );
            Ok(1)
        }
        Err(PinApprovalError::ChangedMeanwhile { .. }) => {
            eprintln!(
                "airlock: {server}/{tool} changed again while it was approved; read it again with `airlock mcp pins`"
            );
            Ok(1)
        }
        Err(e @ PinApprovalError::BadHash) => bail!("--sha256: {e}"),
        Err(PinApprovalError::Failed(e)) => Err(e.into()),
    }
}

async fn pins(store: &StoreOptions, server: Option<String>) -> Result<u8> {
    let db = open_db(store).await?;
    for p in db.mcp_pin_list(server.as_deref()).await? {
        let pending = p.pending_sha256.as_deref().unwrap_or("-");
        println!(
            "{}\t{}\t{}\t{}\tpresented {}",
            p.server, p.tool, p.status, p.sha256, pending
        );
        if let Some(d) = &p.pending_definition {
            // What the person approves: the description and schema the server now presents.
            println!("  now presents: {d}");
        }
    }
    Ok(0)
}

/// The configuration file to read, if any.
fn config_path(explicit: Option<PathBuf>) -> Option<PathBuf> {
    if explicit.is_some() {
        return explicit;
    }
    if let Some(p) = std::env::var_os("AIRLOCK_MCP_CONFIG").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(base.join("airlock/mcp.toml")).filter(|p| p.exists())
}

fn load_config(path: Option<PathBuf>) -> Result<McpConfig> {
    match config_path(path) {
        Some(p) => {
            let text =
                std::fs::read_to_string(&p).with_context(|| format!("reading {}", p.display()))?;
            McpConfig::from_toml(&text).with_context(|| format!("in {}", p.display()))
        }
        None => Ok(McpConfig::default()),
    }
}

fn wrap(a: WrapArgs, store: &StoreOptions) -> Result<u8> {
    let server = match a.server.clone() {
        Some(s) => s,
        None => Path::new(&a.command[0])
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "server".into()),
    };
    let Common {
        config,
        session,
        decider,
        cwd,
    } = common(
        store,
        &server,
        a.config.clone(),
        a.session.clone(),
        a.url.clone(),
        a.token.clone(),
    )?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let code = rt.block_on(async move {
        let db = open_db(store).await?;
        let mut child = tokio::process::Command::new(&a.command[0])
            .args(&a.command[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("starting the MCP server `{}`", a.command[0]))?;
        let (Some(server_in), Some(server_out)) = (child.stdin.take(), child.stdout.take()) else {
            bail!("the MCP server's pipes are missing");
        };
        let gw = Gateway {
            server,
            config,
            db,
            policy: policy_provider(),
            decider,
            session,
            cwd,
        };
        airlock_mcp::relay(
            gw,
            tokio::io::stdin(),
            tokio::io::stdout(),
            server_in,
            server_out,
        )
        .await
        .context("relaying")?;
        let status = match tokio::time::timeout(Duration::from_secs(5), child.wait()).await {
            Ok(s) => s?,
            Err(_) => {
                child.start_kill()?;
                child.wait().await?
            }
        };
        Ok::<u8, anyhow::Error>(status.code().map(|c| c.clamp(0, 255) as u8).unwrap_or(1))
    });
    // The thread reading our stdin may still be blocked in read(); do not wait for it.
    rt.shutdown_timeout(Duration::from_millis(100));
    code
}

/// The settings both transports share.
struct Common {
    config: McpConfig,
    session: String,
    decider: DaemonDecider,
    cwd: Option<String>,
}

fn common(
    store: &StoreOptions,
    server: &str,
    config: Option<PathBuf>,
    session: Option<String>,
    url: Option<String>,
    token: Option<String>,
) -> Result<Common> {
    let config = load_config(config)?;
    if server.is_empty() || server.contains("__") {
        bail!("the server name must be non-empty and must not contain `__`");
    }
    let session = session
        .or_else(|| {
            std::env::var("AIRLOCK_SESSION")
                .ok()
                .filter(|s| !s.is_empty())
        })
        .unwrap_or_else(|| format!("mcp-{server}"));
    let data_dir = &store.data_dir;
    let ep = Endpoint::discover(data_dir, url, token, true);
    let decider = DaemonDecider {
        client: match ep {
            Some(ep) if ep.token.is_some() => Some(Client::new(ep, data_dir)?),
            _ => None,
        },
    };
    if decider.client.is_none() {
        eprintln!(
            "airlock mcp [{server}]: no airlock daemon (or no agent token) found: every tool call will be denied; start `airlock serve`"
        );
    }
    let cwd = std::env::current_dir()
        .ok()
        .map(|p| p.to_string_lossy().into_owned());
    Ok(Common {
        config,
        session,
        decider,
        cwd,
    })
}

fn proxy(a: ProxyArgs, store: &StoreOptions) -> Result<u8> {
    let addr: std::net::SocketAddr = a
        .listen
        .parse()
        .with_context(|| format!("--listen {}: expected ADDRESS:PORT", a.listen))?;
    if !addr.ip().is_loopback() && !a.allow_remote {
        bail!("{addr} is not a loopback address: pass --allow-remote to listen there");
    }
    let c = common(store, &a.server, a.config, a.session, a.url, a.token)?;
    crate::daemon::init_tls();
    let http = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(10))
        .build()
        .context("building the HTTP client")?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let db = open_db(store).await?;
        let gw = Gateway {
            server: a.server.clone(),
            config: c.config,
            db,
            policy: policy_provider(),
            decider: c.decider,
            session: c.session,
            cwd: c.cwd,
        };
        let app = airlock_mcp::http::router(airlock_mcp::Core::new(gw), a.upstream.clone(), http);
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("listening on {addr}"))?;
        eprintln!(
            "airlock mcp proxy [{}]: http://{}/ -> {}",
            a.server,
            listener.local_addr()?,
            a.upstream
        );
        axum_serve(listener, app).await?;
        Ok(0)
    })
}

async fn axum_serve(listener: tokio::net::TcpListener, app: airlock_mcp::http::App) -> Result<()> {
    airlock_mcp::http::serve(listener, app)
        .await
        .context("serving")
}

fn policy_provider() -> PolicyProvider {
    Arc::new(|cwd: Option<&Path>| Policy::load(&crate::cmd::policy::sources_at(cwd)).map(Arc::new))
}

/// Decides through a running daemon's REST API, as the agent whose token it holds.
struct DaemonDecider {
    client: Option<Client>,
}

impl Decider for DaemonDecider {
    async fn decide(&self, call: Call) -> CallRuling {
        let Some(client) = &self.client else {
            return CallRuling::deny(
                "DAEMON_UNAVAILABLE",
                "airlock's daemon is not running, so no tool call can be decided and this one is denied; ask the user to start `airlock serve`",
            );
        };
        match ask(client, &call).await {
            Ok(Some(out)) => ruling_of(&out),
            Ok(None) => gate::timed_out(call.timeout),
            Err(e) => CallRuling::deny(
                "DAEMON_UNAVAILABLE",
                format!("airlock's daemon could not decide this call, so it is denied: {e:#}"),
            ),
        }
    }

    async fn scan(&self, call: ScanCall) -> Result<Scanned, String> {
        let Some(client) = &self.client else {
            return Err("airlock's daemon is not running".into());
        };
        scan_remote(client, &call)
            .await
            .map_err(|e| format!("{e:#}"))
    }

    async fn output(&self, call: OutputCall) -> Result<OutputRuling, String> {
        let Some(client) = &self.client else {
            return Err("airlock's daemon is not running".into());
        };
        output_remote(client, &call)
            .await
            .map_err(|e| format!("{e:#}"))
    }

    async fn secrets(&self, call: SecretsCall) -> Result<SecretsRuling, String> {
        let Some(client) = &self.client else {
            return Err("airlock's daemon is not running".into());
        };
        secrets_remote(client, call)
            .await
            .map_err(|e| format!("{e:#}"))
    }
}

/// Asks the daemon to replace the secrets in a sampling request and record them
/// (`POST /v1/privacy`): what is replaced is the daemon's own finding, and a receipt before
/// the request goes on.
async fn secrets_remote(client: &Client, call: SecretsCall) -> Result<SecretsRuling> {
    let body = serde_json::to_value(PrivacyRequest {
        session: call.session,
        surface: call.surface,
        value: call.value,
    })?;
    let out = client
        .post("/v1/privacy", &body, Duration::from_secs(30))
        .await?;
    let rules: Vec<String> =
        serde_json::from_value(out["rules"].clone()).context("the daemon's rule ids")?;
    if rules.is_empty() {
        return Ok(SecretsRuling { value: None, rules });
    }
    if out["receipt"].as_str().is_none_or(str::is_empty) || out["value"].is_null() {
        anyhow::bail!("the daemon replaced secrets but did not record them");
    }
    Ok(SecretsRuling {
        value: Some(out["value"].clone()),
        rules,
    })
}

/// Asks the daemon to check a tool result against its output contract and record it
/// (`POST /v1/outputs`): the drift is the daemon's own finding, and a receipt before the
/// result goes on.
async fn output_remote(client: &Client, call: &OutputCall) -> Result<OutputRuling> {
    let body = serde_json::to_value(OutputRequest {
        session: call.session.clone(),
        tool: call.tool.clone(),
        output: call.output.clone(),
        cwd: call.cwd.clone(),
    })?;
    let out = client
        .post("/v1/outputs", &body, Duration::from_secs(30))
        .await?;
    if out["receipt"].as_str().is_none_or(str::is_empty) {
        anyhow::bail!("the daemon checked but did not record the output");
    }
    Ok(OutputRuling {
        drift: serde_json::from_value(out["drift"].clone())
            .context("the daemon's drift finding")?,
    })
}

/// Asks the daemon to scan a server's text and record its verdict (`POST /v1/scan` with
/// `record`): the verdict is the daemon's own, and it is a receipt before the text goes on.
async fn scan_remote(client: &Client, call: &ScanCall) -> Result<Scanned> {
    let body = serde_json::to_value(ScanRequest {
        text: call.text.clone(),
        direction: Some(ScanDirection::Tool),
        record: Some(ScanRecord {
            session: call.session.clone(),
            source: call.source.clone(),
            handling: Some(call.handling.to_string()),
        }),
    })?;
    let out = client
        .post("/v1/scan", &body, Duration::from_secs(30))
        .await?;
    if out["receipt"].as_str().is_none_or(str::is_empty) {
        anyhow::bail!("the daemon scanned but did not record the verdict");
    }
    Ok(Scanned {
        verdict: serde_json::from_value(out["verdict"].clone()).context("the daemon's verdict")?,
        categories: serde_json::from_value(out["categories"].clone()).unwrap_or_default(),
        score: out["score"].as_f64().unwrap_or(1.0) as f32,
    })
}

/// Submits and long-polls; `None` when the call's time ran out first.
async fn ask(client: &Client, call: &Call) -> Result<Option<ActionAnswer>> {
    let started = Instant::now();
    let request = ActionRequest::new(call.action.clone(), call.session.clone())
        .with_request_id(call.request_id.clone())
        .in_dir(call.cwd.as_deref());
    let body = serde_json::to_value(&request)?;
    let read = |v: Value| -> Result<ActionAnswer> {
        serde_json::from_value(v).context("the daemon's answer is not an action answer")
    };
    let mut out = read(
        client
            .post("/v1/actions", &body, Duration::from_secs(15))
            .await?,
    )?;
    while out.status == ActionStatus::Pending {
        let left = call.timeout.saturating_sub(started.elapsed());
        if left < Duration::from_secs(1) {
            return Ok(None);
        }
        let wait = left.min(Duration::from_secs(30)).as_secs();
        let path = format!(
            "/v1/actions/{}/wait?timeout={wait}",
            airlock_gateway::url::segment(&out.id)
        );
        out = read(client.get(&path, Duration::from_secs(wait + 10)).await?)?;
    }
    Ok(Some(out))
}

/// The daemon's final answer as the broker's ruling, in this surface's codes.
fn ruling_of(out: &ActionAnswer) -> CallRuling {
    CallRuling::of(airlock_confirm::Ruling::of_answer(out))
}
