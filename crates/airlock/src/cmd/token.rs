//! `airlock token create|list|revoke`: the bearer tokens agents and people present to the
//! daemon. They act on the store directly (whoever can open the data directory or the database
//! is the machine's administrator); the secret is printed once and only its SHA-256 is kept.
//! The shell rules deny agents `token create`.

use airlock_gateway::auth::{Auth, Role};
use airlock_store::Db;
use anyhow::{Context, Result, bail};

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Sub,
}

#[derive(clap::Subcommand)]
enum Sub {
    /// Create a token; its secret is printed once.
    Create {
        /// agent (submit, wait, scan), approver (also decide and revoke), admin (also tokens
        /// and ledger export).
        #[arg(long, value_parser = ["agent", "approver", "admin"])]
        role: String,
        /// Who holds it: an agent's name, or the person's (shown in receipts as the approver).
        #[arg(long)]
        name: String,
        /// Print only the secret (for scripts).
        #[arg(long)]
        quiet: bool,
        /// For an agent token: a workspace directory its REST actions may run in (repeatable).
        /// A submission whose `cwd`, or a `cd` of its command line, leaves every root is refused
        /// (`CWD_OUTSIDE_ROOTS`); without roots the token is not confined.
        #[arg(long = "root", value_name = "DIR")]
        roots: Vec<std::path::PathBuf>,
    },
    /// List tokens (never their secrets).
    List {
        #[arg(long)]
        json: bool,
    },
    /// Revoke a token by its id (`tok_…`); the daemon refuses it at once.
    Revoke { id: String },
}

pub fn run(args: Args, opts: &airlock_store::StoreOptions) -> Result<u8> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let db = Db::open(opts)
            .await
            .with_context(|| format!("opening the store in {}", opts.data_dir.display()))?;
        let auth = Auth::new(db.clone());
        let code = match args.command {
            Sub::Create {
                role,
                name,
                quiet,
                roots,
            } => {
                let role: Role = role.parse()?;
                if !roots.is_empty() && role != Role::Agent {
                    bail!("--root: only agent tokens have workspace roots");
                }
                let roots: Vec<String> = roots
                    .iter()
                    .map(|r| std::path::absolute(r).map(|p| p.display().to_string()))
                    .collect::<std::io::Result<_>>()
                    .context("--root")?;
                let roots = airlock_gateway::roots::normalised(&roots)
                    .map_err(|m| anyhow::anyhow!("--root: {m}"))?;
                let t = auth.create(&name, role).await?;
                if !roots.is_empty() {
                    db.token_roots_add(&t.id, &roots).await?;
                }
                if quiet {
                    println!("{}", t.secret);
                } else {
                    println!("{}", t.secret);
                    eprintln!(
                        "created {} token {} for {:?}: the secret above is shown only once",
                        t.role, t.id, t.name
                    );
                }
                0
            }
            Sub::List { json } => {
                let list = auth.list().await?;
                if json {
                    println!("{}", serde_json::to_string_pretty(&list)?);
                } else {
                    for t in list {
                        println!(
                            "{}  {:<8}  {}{}",
                            t.id,
                            t.role.as_str(),
                            t.name,
                            if t.revoked_ms.is_some() {
                                "  (revoked)"
                            } else {
                                ""
                            }
                        );
                    }
                }
                0
            }
            Sub::Revoke { id } => {
                if !auth.revoke(&id).await? {
                    bail!("no active token has the id {id:?}");
                }
                println!("revoked {id}");
                0
            }
        };
        db.close().await;
        Ok(code)
    })
}
