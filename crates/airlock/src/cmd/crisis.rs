//! `airlock crisis`: the sessions in crisis mode and their ending by a person. `list` reads the
//! store (what the daemon and every node see) and this machine's data directory (the marks the
//! hooks keep when no daemon runs); `clear SESSION` ends one in both, recorded as a receipt
//! naming the person (`airlock_confirm::crisis`, the use-case `POST /v1/crisis/clear` and the
//! inbox share). The shell rules deny agents `airlock crisis clear`: only a person ends it.

use anyhow::{Context, Result, bail};
use serde_json::json;

use airlock_confirm::{CrisisChange, Event, Principal, Role};
use airlock_hook::crisis as marks;
use airlock_store::StoreOptions;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Sub,
}

#[derive(clap::Subcommand)]
enum Sub {
    /// List the sessions in crisis mode.
    List {
        /// One JSON document instead of text.
        #[arg(long)]
        json: bool,
    },
    /// End a session's crisis mode (a person's decision, recorded).
    Clear {
        session: String,
        /// Who ends it, for the ledger (default: $USER).
        #[arg(long)]
        by: Option<String>,
    },
}

pub fn run(args: Args, store: &StoreOptions) -> Result<u8> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    match args.command {
        Sub::List { json } => rt.block_on(list(json, store)),
        Sub::Clear { session, by } => rt.block_on(clear(session, by, store)),
    }
}

async fn list(as_json: bool, opts: &StoreOptions) -> Result<u8> {
    let db = airlock_store::Db::open(opts)
        .await
        .with_context(|| format!("opening the store in {}", opts.data_dir.display()))?;
    let stored = db.crisis_list().await?;
    let local = marks::list(&opts.data_dir);
    if as_json {
        let rows: Vec<_> = stored
            .iter()
            .map(|r| {
                json!({"session": r.session, "since_ms": r.since_ms, "source": r.source,
                            "rule": r.rule, "agent": r.agent, "kept_in": "store"})
            })
            .chain(
                local
                    .iter()
                    .filter(|m| !stored.iter().any(|r| r.session == m.session))
                    .map(|m| {
                        json!({"session": m.session, "since_ms": m.since_ms,
                                    "source": m.source, "rule": m.rule,
                                    "kept_in": "data directory"})
                    }),
            )
            .collect();
        println!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(0);
    }
    if stored.is_empty() && local.is_empty() {
        println!("no session is in crisis mode");
    }
    for r in &stored {
        println!(
            "{}\tsince {}\t{} ({})\tagent {}",
            r.session, r.since_ms, r.source, r.rule, r.agent
        );
    }
    for m in local
        .iter()
        .filter(|m| !stored.iter().any(|r| r.session == m.session))
    {
        println!(
            "{}\tsince {}\t{} ({})\tthis machine's hooks only",
            m.session, m.since_ms, m.source, m.rule
        );
    }
    Ok(0)
}

async fn clear(session: String, by: Option<String>, opts: &StoreOptions) -> Result<u8> {
    let person = match by.or_else(|| std::env::var("USER").ok()) {
        Some(p) if !p.trim().is_empty() => p,
        _ => bail!("say who ends the crisis mode: --by NAME (no $USER set)"),
    };
    let ledger = crate::record::open_ledger(opts).await?;
    let who = Principal::new(person.clone(), Role::Approver);
    let stored = airlock_confirm::crisis::clear(&ledger, &who, &session).await;
    let local_mark = marks::get(&opts.data_dir, &session);
    let result = match stored {
        Ok(Some((_, receipt))) => Ok(Some(receipt)),
        // marked by this machine's hooks only: the clearing is recorded all the same
        Ok(None) => match &local_mark {
            Some(m) => {
                let event = Event::Crisis {
                    session: session.clone(),
                    who: person.clone(),
                    change: CrisisChange::Clear,
                    source: m.source.clone(),
                    rule: m.rule.clone(),
                };
                airlock_confirm::event::record(&ledger, &event)
                    .await
                    .map(|r| Some(r.id))
            }
            None => Ok(None),
        },
        Err(e) => Err(e),
    };
    ledger.close().await;
    let receipt = result?;
    if local_mark.is_some() {
        marks::clear(&opts.data_dir, &session)
            .with_context(|| format!("removing the mark in {}", opts.data_dir.display()))?;
    }
    match receipt {
        Some(id) => {
            println!("session {session} is no longer in crisis mode (receipt {id})");
            Ok(0)
        }
        None => {
            eprintln!("airlock: session {session} is not in crisis mode");
            Ok(1)
        }
    }
}
