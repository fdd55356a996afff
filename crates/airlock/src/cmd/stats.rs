//! `airlock stats`: what approvals cost people, from the store (so one report for every node of
//! a shared PostgreSQL): per day (UTC), how many approvals asked a person, how many the LLM
//! reviewer answered alone, and how long people took to answer (the median); with the learned
//! grants people accepted and how many actions they allowed without asking.

use anyhow::{Context, Result};

use airlock_grants::{GrantBook, GrantConfig};
use airlock_store::{Db, StoreOptions};

#[derive(clap::Args)]
pub struct Args {
    /// How many days back (UTC days, today included).
    #[arg(long, default_value_t = 7)]
    days: u32,
    /// One JSON document instead of text.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args, store: &StoreOptions) -> Result<u8> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(report(args, store))
}

fn secs(ms: Option<i64>) -> String {
    ms.map_or_else(|| "-".into(), |m| format!("{:.1} s", m as f64 / 1000.0))
}

async fn report(args: Args, store: &StoreOptions) -> Result<u8> {
    let db = Db::open(store)
        .await
        .with_context(|| format!("opening the store in {}", store.data_dir.display()))?;
    let book = GrantBook::new(db.clone(), GrantConfig::default());
    const DAY_MS: i64 = 86_400_000;
    let today = book.now().div_euclid(DAY_MS) * DAY_MS;
    let since = today - i64::from(args.days.max(1) - 1) * DAY_MS;
    let s = airlock_confirm::stats::gather(&db, &book, since).await?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&s)?);
        return Ok(0);
    }
    println!("day         prompts  llm answered  answered by a person  median answer");
    for d in &s.days {
        println!(
            "{}  {:>7}  {:>12}  {:>20}  {:>13}",
            d.day,
            d.prompts,
            d.llm_answered,
            d.answered,
            secs(d.median_answer_ms)
        );
    }
    println!(
        "total       {:>7}  {:>12}  {:>20}  {:>13}",
        s.prompts,
        s.llm_answered,
        s.answered,
        secs(s.median_answer_ms)
    );
    println!(
        "learned grants accepted: {}; actions they allowed without asking: {}",
        s.learned_grants, s.learned_allowed
    );
    Ok(0)
}
