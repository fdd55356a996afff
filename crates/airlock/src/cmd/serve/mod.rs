//! `airlock serve`: the long-running firewall. It opens the store (SQLite in the data directory,
//! or a shared PostgreSQL), starts the approval broker and the HTTP gateway on loopback, and
//! tells local hooks where it is (`serve.json` and an agent token in the data directory).
//! Several nodes on one PostgreSQL share approvals, grants and the ledger.

pub mod config;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use airlock_confirm::{Broker, PolicyProvider};
use airlock_gateway::auth::{Auth, Role};
use airlock_gateway::{AppState, DEFAULT_MAX_BODY, ServeConfig};

/// How long a live agent or approver token is remembered (see `[serve] token_cache_ms`).
const DEFAULT_TOKEN_CACHE_MS: u64 = 1000;
use airlock_grants::{GrantBook, GrantConfig};
use airlock_policy::Policy;
use airlock_store::{Ledger, LedgerConfig};
use anyhow::{Context, Result};

use crate::daemon::{AGENT_TOKEN_FILE, SERVE_FILE, ServeInfo};
use airlock_hook::proof::{DAEMON_KEY_FILE, DaemonKey};
use config::ConfigFile;

#[derive(clap::Args)]
pub struct Args {
    /// ADDRESS:PORT to listen on (default 127.0.0.1:7373; port 0 picks a free one).
    #[arg(long, value_name = "ADDR:PORT")]
    listen: Option<String>,
    /// The configuration file (TOML: [serve], [llm], [webhook], [fatigue], [proxy]).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Allow listening on an address that is not loopback.
    #[arg(long)]
    allow_remote: bool,
    /// This node's name in logs and metrics (default: the host name).
    #[arg(long)]
    node: Option<String>,
}

pub fn run(args: Args, store: &airlock_store::StoreOptions) -> Result<u8> {
    let file = match &args.config {
        Some(p) => ConfigFile::load(p)?,
        None => ConfigFile::default(),
    };
    let addr = file.listen(args.listen.as_deref(), args.allow_remote)?;
    let node = args
        .node
        .clone()
        .or_else(|| file.serve.node.clone())
        .unwrap_or_else(hostname);
    let proxy = file.proxy(None)?;
    run_node(store, &file, addr, node, proxy, true)
}

/// Runs the broker and the gateway (with the proxy when `proxy` is set) until a signal;
/// `announce` writes `serve.json` and the hooks' agent token (the daemon does, a standalone
/// proxy does not).
pub(crate) fn run_node(
    store: &airlock_store::StoreOptions,
    file: &ConfigFile,
    addr: std::net::SocketAddr,
    node: String,
    proxy: Option<airlock_proxy::ProxyConfig>,
    announce_it: bool,
) -> Result<u8> {
    let broker_config = file.broker(node.clone())?;
    let telegram = file.telegram()?;
    let emergency = file.emergency()?;
    let slack = file.slack()?;
    let discord = file.discord()?;
    let routes = file.routes()?;
    crate::daemon::init_tls();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let opts = store.clone();
        let ledger = Ledger::open(&opts, LedgerConfig::default())
            .await
            .with_context(|| format!("opening the store in {}", opts.data_dir.display()))?;
        let db = ledger.db().clone();
        let book = GrantBook::new(db.clone(), GrantConfig::default());
        let broker = Broker::start(ledger, book, policy_provider(), broker_config)
            .await
            .context("starting the approval broker")?;
        // The chat channels run while the daemon serves; dropping them stops their tasks.
        let mut chats = Vec::new();
        for c in telegram {
            let name = c.name.clone();
            chats.push(
                airlock_chat::Telegram::start(broker.clone(), c, routes.clone())
                    .await
                    .with_context(|| format!("starting the telegram channel {name}"))?,
            );
            eprintln!("airlock serve: telegram channel {name} started");
        }
        // Slack and Discord answer at request URLs on this daemon (signed by the platform).
        let mut chat_routes = axum::Router::new();
        let mut hooks = (Vec::new(), Vec::new());
        for c in slack {
            let name = c.name.clone();
            let s = airlock_chat::slack::Slack::start(broker.clone(), c, routes.clone())
                .await
                .with_context(|| format!("starting the slack channel {name}"))?;
            chat_routes = chat_routes.merge(s.router(&format!("/v1/chat/slack/{name}")));
            hooks.0.push(s);
            eprintln!("airlock serve: slack channel {name} answers at /v1/chat/slack/{name}");
        }
        for c in discord {
            let name = c.name.clone();
            let d = airlock_chat::discord::Discord::start(broker.clone(), c, routes.clone())
                .await
                .with_context(|| format!("starting the discord channel {name}"))?;
            chat_routes = chat_routes.merge(d.router(&format!("/v1/chat/discord/{name}")));
            hooks.1.push(d);
            eprintln!("airlock serve: discord channel {name} answers at /v1/chat/discord/{name}");
        }
        let mut pagers = Vec::new();
        for e in emergency {
            let name = e.name.clone();
            pagers.push(
                airlock_chat::Emergency::start(broker.clone(), e, routes.clone())
                    .await
                    .with_context(|| format!("starting the emergency channel {name}"))?,
            );
        }
        let auth = Auth::new(db.clone()).with_token_cache(std::time::Duration::from_millis(
            file.serve.token_cache_ms.unwrap_or(DEFAULT_TOKEN_CACHE_MS),
        ));
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("listening on {addr}"))?;
        let local = listener.local_addr()?;
        let url = format!("http://{local}");
        let data_dir = opts.data_dir.clone();
        let answer_key = if announce_it {
            Some(announce(&data_dir, &url, &node, &auth).await?)
        } else {
            None
        };
        eprintln!(
            "airlock serve: node {node} on {url} ({} store); web inbox at {url}/inbox",
            db.backend()
        );
        if !auth.list().await?.iter().any(|t| t.revoked_ms.is_none() && t.role != Role::Agent) {
            eprintln!(
                "airlock serve: no approver token yet: create one with `airlock token create --role approver --name YOUR_NAME` and log in to the inbox with it"
            );
        }
        let config = ServeConfig {
            listen: local,
            public_url: file.serve.public_url.clone(),
            max_body: file.serve.max_body.unwrap_or(DEFAULT_MAX_BODY),
        };
        let mut state = AppState::new(broker.clone(), auth, config);
        if let Some(k) = answer_key {
            state = state.with_answer_key(k).with_data_dir(data_dir.clone());
        }
        let mut serving: Option<Arc<airlock_proxy::Proxy>> = None;
        if let Some(pc) = proxy {
            eprintln!(
                "airlock serve: OpenAI-compatible proxy at {url}/v1 (upstream {}); clients use an agent token as their API key",
                pc.upstream
            );
            let p = airlock_proxy::Proxy::new(broker, pc).map_err(|e| anyhow::anyhow!(e))?;
            for line in p.crisis_route_lines() {
                eprintln!("airlock serve: {line}");
            }
            serving = Some(Arc::new(p));
        } else {
            eprintln!(
                "airlock serve: crisis route: none here (the model proxy is off: set proxy.upstream); scans and hooks attach crisis resources to their verdicts. See docs/crisis.md"
            );
        }
        // The binary composes the surfaces: the gateway's routes, and the proxy's beside them.
        let extra = match &serving {
            Some(p) => {
                state = state.with_metrics(airlock_proxy::metrics(p.clone()));
                airlock_proxy::routes(p.clone())
            }
            None => axum::Router::new(),
        }
        .merge(chat_routes);
        let result =
            airlock_gateway::serve_with_routes(listener, state, extra, shutdown_signal()).await;
        // Clean inbound verdicts still in their window are recorded before the process ends.
        if let Some(p) = serving {
            p.flush().await;
        }
        drop(chats);
        drop(pagers);
        drop(hooks);
        if announce_it {
            let _ = std::fs::remove_file(data_dir.join(SERVE_FILE));
        }
        result.context("serving")?;
        eprintln!("airlock serve: stopped");
        Ok(0)
    })
}

/// Loads the layers for a working directory on each request, so edits to policy files apply at
/// once; a policy that does not load is an error the broker turns into a deny.
fn policy_provider() -> PolicyProvider {
    Arc::new(|cwd: Option<&Path>| Policy::load(&crate::cmd::policy::sources_at(cwd)).map(Arc::new))
}

/// Writes `serve.json` and, if needed, a fresh agent token for this machine's hooks and the
/// key the daemon proves its answers with (`daemon.key`, kept across restarts); returns the key.
async fn announce(dir: &Path, url: &str, node: &str, auth: &Auth) -> Result<DaemonKey> {
    airlock_store::keyfile::create_private_dir(dir)?;
    let key_path = dir.join(DAEMON_KEY_FILE);
    let key = match DaemonKey::load(dir) {
        Some(k) => {
            airlock_store::keyfile::tighten(&key_path, 0o600)?;
            k
        }
        None => {
            let k =
                DaemonKey::generate().map_err(|e| anyhow::anyhow!("drawing daemon.key: {e}"))?;
            write_private(&key_path, &format!("{}\n", k.to_hex()))?;
            k
        }
    };
    let token_path = dir.join(AGENT_TOKEN_FILE);
    let current = std::fs::read_to_string(&token_path).unwrap_or_default();
    let valid = match current.trim() {
        "" => false,
        t => auth.check(t).await?.is_some_and(|c| c.role == Role::Agent),
    };
    if !valid {
        let t = auth.create("local-agent", Role::Agent).await?;
        write_private(&token_path, &format!("{}\n", t.secret))?;
    }
    let info = ServeInfo {
        url: url.to_string(),
        pid: std::process::id(),
        node: node.to_string(),
    };
    write_private(&dir.join(SERVE_FILE), &serde_json::to_string_pretty(&info)?)?;
    Ok(key)
}

/// Writes a file readable by its owner only (written to a temporary name, then renamed, so a
/// reader never sees half a file).
fn write_private(path: &Path, text: &str) -> Result<()> {
    airlock_store::keyfile::write_private(path, text.as_bytes())
        .with_context(|| format!("writing {}", path.display()))
}

pub(crate) fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "local".into())
}

/// Ctrl-C or SIGTERM: stop taking requests and finish the ones in flight.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        () = ctrl_c => {}
        () = term => {}
    }
}
