//! `airlock bench approvals`: how long a waiting agent takes to be released once a person
//! approves. It starts real `airlock serve` processes (one on a temporary SQLite, or two on the
//! PostgreSQL of `--database`), submits an asking action as an agent, long-polls for it, and
//! times from the moment the approve request is sent until the long-poll returns "allowed".
//! With two nodes the agent waits on node A and the person answers on node B, so the figure
//! includes PostgreSQL's LISTEN/NOTIFY hop.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use airlock_gateway::auth::{Auth, Role};
use airlock_store::{Db, StoreOptions};
use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use super::hook::Stats;
use airlock_client::{Client, Endpoint, SERVE_FILE, ServeInfo};

#[derive(clap::Args)]
pub struct Args {
    /// Approvals to time.
    #[arg(long, default_value_t = 200)]
    count: usize,
    /// 1: agent and person on one node; 2: agent on node A, person on node B (needs
    /// --database postgres://…).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u8).range(1..=2))]
    nodes: u8,
    /// The shell command submitted (must be one the policy asks a person about).
    #[arg(long, default_value = "git push --force origin main")]
    command: String,
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args, store: &StoreOptions) -> Result<u8> {
    let database = store.database.clone();
    if args.nodes == 2 && database.is_none() {
        bail!("two nodes share one PostgreSQL: pass --database postgres://…");
    }
    airlock_client::init_tls();
    let root = std::env::temp_dir().join(format!("airlock-bench-approvals-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root)?;
    let config_home = root.join("config");
    std::fs::create_dir_all(&config_home)?;
    let result = (|| {
        let mut nodes = Vec::new();
        for n in 0..args.nodes {
            let dir = root.join(format!("node-{n}"));
            if n > 0 {
                // A second node joins the shared ledger with the admin key of the first.
                let keys = dir.join("keys");
                airlock_store::keyfile::create_private_dir(&keys)?;
                std::fs::copy(root.join("node-0/keys/admin.key"), keys.join("admin.key"))?;
            }
            nodes.push(Node::start(&dir, &config_home, database.as_deref())?);
        }
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()?;
        rt.block_on(measure(&args, &nodes, database.as_deref()))
    })();
    let _ = std::fs::remove_dir_all(&root);
    result
}

async fn measure(args: &Args, nodes: &[Node], database: Option<&str>) -> Result<u8> {
    let opts = StoreOptions::new(&nodes[0].dir).with_database(database.map(str::to_string));
    let db = Db::open(&opts).await?;
    let auth = Auth::new(db.clone());
    let agent = auth.create("bench-agent", Role::Agent).await?.secret;
    let person = auth.create("bench-person", Role::Approver).await?.secret;
    db.close().await;
    let a = Client::new(
        Endpoint {
            url: nodes[0].url.clone(),
            token: Some(agent),
            key: airlock_hook::proof::DaemonKey::load(&nodes[0].dir),
        },
        &nodes[0].dir,
    )?;
    let p_node = nodes.last().context("no node")?;
    let p = Client::new(
        Endpoint {
            url: p_node.url.clone(),
            token: Some(person),
            key: airlock_hook::proof::DaemonKey::load(&p_node.dir),
        },
        &p_node.dir,
    )?;
    let call = Duration::from_secs(30);

    let mut samples = Vec::with_capacity(args.count);
    let warmup = 5.min(args.count);
    for i in 0..args.count + warmup {
        // A session of its own each time: no session grant or denial streak carries over.
        let body =
            json!({"kind": "shell", "command": args.command, "session": format!("bench-{i}")});
        let out = a.post("/v1/actions", &body, call).await?;
        if out["status"] != "pending" {
            bail!(
                "the action was not held for a person ({}): choose a --command the policy asks about",
                out["status"]
            );
        }
        let id = out["id"].as_str().context("no id")?.to_string();
        let approval = out["approval"].as_str().unwrap_or(&id).to_string();
        let waiter = {
            let path = format!("/v1/actions/{id}/wait?timeout=30");
            let a = a.clone();
            tokio::spawn(async move {
                let r = a.get(&path, Duration::from_secs(40)).await;
                (Instant::now(), r)
            })
        };
        // Let the long-poll reach the daemon before the answer is sent.
        tokio::time::sleep(Duration::from_millis(20)).await;
        let sent = Instant::now();
        p.post(
            &format!("/v1/approvals/{approval}"),
            &json!({"decision": "approve", "scope": "once", "reason": "bench"}),
            call,
        )
        .await?;
        let (released, r) = waiter.await?;
        let r: Value = r?;
        if r["status"] != "allowed" {
            bail!("the waiting agent got {} instead of allowed", r["status"]);
        }
        if i >= warmup {
            samples.push(released.saturating_duration_since(sent));
        }
    }
    let stats = Stats::of(&mut samples);
    let label = if nodes.len() == 2 {
        "two nodes (PostgreSQL)"
    } else {
        "one node"
    };
    if args.json {
        println!(
            "{}",
            json!({"nodes": nodes.len(), "count": samples.len(), "release_ms": stats.to_json()})
        );
    } else {
        println!(
            "approve → waiting agent released, {} approvals, milliseconds",
            samples.len()
        );
        println!(
            "{:<22} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}",
            "", "min", "p50", "p90", "p99", "max", "mean"
        );
        println!("{}", stats.row(label));
    }
    Ok(0)
}

/// One `airlock serve` process, killed when dropped.
struct Node {
    child: Child,
    url: String,
    dir: PathBuf,
}

impl Node {
    fn start(dir: &Path, config_home: &Path, database: Option<&str>) -> Result<Node> {
        std::fs::create_dir_all(dir)?;
        let mut cmd = Command::new(crate::airlock_exe()?);
        cmd.args(["serve", "--listen", "127.0.0.1:0"])
            .env("AIRLOCK_DATA_DIR", dir)
            .env("XDG_CONFIG_HOME", config_home)
            .env_remove("AIRLOCK_POLICY")
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        match database {
            Some(url) => cmd.env("AIRLOCK_DATABASE_URL", url),
            None => cmd.env_remove("AIRLOCK_DATABASE_URL"),
        };
        let child = cmd.spawn().context("starting airlock serve")?;
        let started = Instant::now();
        let mut node = Node {
            child,
            url: String::new(),
            dir: dir.to_path_buf(),
        };
        loop {
            if let Ok(text) = std::fs::read_to_string(dir.join(SERVE_FILE))
                && let Ok(info) = serde_json::from_str::<ServeInfo>(&text)
            {
                node.url = info.url;
                return Ok(node);
            }
            if let Some(status) = node.child.try_wait()? {
                bail!("airlock serve exited at start ({status})");
            }
            if started.elapsed() > Duration::from_secs(60) {
                bail!("airlock serve did not start within 60 s");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
