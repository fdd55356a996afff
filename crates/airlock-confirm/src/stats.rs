//! What approvals cost people, for `airlock stats`: per day (UTC), how many approvals asked a
//! person, how many the LLM reviewer answered alone, and the median time a person took to
//! answer; with how many actions learned grants allowed without asking. Read from the store's
//! approvals and grants, so every node of a shared store reports the same.

use airlock_grants::ListFilter;
use airlock_policy::Confirmers;
use airlock_store::ApprovalRow;
use serde::Serialize;

use crate::ConfirmError;
use crate::broker::Broker;
use crate::learn::LEARNED;
use crate::view::confirmers_of;

/// The most approvals read for one report.
const MAX_ROWS: i64 = 1_000_000;
const DAY_MS: i64 = 86_400_000;

/// One day's figures.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct DayStats {
    /// `YYYY-MM-DD` (UTC).
    pub day: String,
    /// Approvals opened that day that asked a person.
    pub prompts: u64,
    /// Approvals the LLM reviewer decided alone (approve, or deny).
    pub llm_answered: u64,
    /// Approvals a person answered, and the median time they took.
    pub answered: u64,
    pub median_answer_ms: Option<i64>,
}

/// The report.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Stats {
    pub since_ms: i64,
    pub days: Vec<DayStats>,
    pub prompts: u64,
    pub llm_answered: u64,
    pub answered: u64,
    pub median_answer_ms: Option<i64>,
    /// Learned grants people accepted, and the actions they allowed without asking.
    pub learned_grants: u64,
    pub learned_allowed: u64,
}

/// Whether approval `r` asked a person: a person confirms it, or the reviewer alone was to and
/// it escalated or failed (the approval's LLM result is not approve or deny).
fn asked_person(r: &ApprovalRow) -> bool {
    match confirmers_of(&r.confirm) {
        Some(c) if c.person() => true,
        Some(Confirmers::Llm) => !r
            .decided_by
            .as_deref()
            .is_some_and(|d| d.starts_with("llm:")),
        _ => false,
    }
}

/// `YYYY-MM-DD` of unix ms `ms` (UTC), by the civil-from-days algorithm.
pub fn day_of(ms: i64) -> String {
    let z = ms.div_euclid(DAY_MS) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

fn median(v: &mut [i64]) -> Option<i64> {
    if v.is_empty() {
        return None;
    }
    v.sort_unstable();
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2
    })
}

/// The report over approval rows (any order) and the learned grants' (count, uses).
pub fn report(rows: &[ApprovalRow], since_ms: i64, learned: (u64, u64)) -> Stats {
    let mut days: std::collections::BTreeMap<String, (DayStats, Vec<i64>)> = Default::default();
    let mut all = Vec::new();
    let mut s = Stats {
        since_ms,
        learned_grants: learned.0,
        learned_allowed: learned.1,
        ..Stats::default()
    };
    for r in rows.iter().filter(|r| r.created_ms >= since_ms) {
        let (d, times) = days.entry(day_of(r.created_ms)).or_default();
        if asked_person(r) {
            d.prompts += 1;
            s.prompts += 1;
        }
        if r.decided_by
            .as_deref()
            .is_some_and(|b| b.starts_with("llm:"))
        {
            d.llm_answered += 1;
            s.llm_answered += 1;
        }
        if r.by_person
            && let Some(at) = r.decided_ms
        {
            d.answered += 1;
            s.answered += 1;
            times.push(at - r.created_ms);
            all.push(at - r.created_ms);
        }
    }
    s.days = days
        .into_iter()
        .map(|(day, (mut d, mut times))| {
            d.day = day;
            d.median_answer_ms = median(&mut times);
            d
        })
        .collect();
    s.median_answer_ms = median(&mut all);
    s
}

/// The report over approvals opened since `since_ms`, read from `db` and `book`.
pub async fn gather(
    db: &airlock_store::Db,
    book: &airlock_grants::GrantBook,
    since_ms: i64,
) -> Result<Stats, ConfirmError> {
    let mut rows = db.approval_history(MAX_ROWS).await?;
    rows.extend(db.approval_list_open(10_000).await?);
    let filter = ListFilter {
        all: true,
        ..ListFilter::default()
    };
    let learned: Vec<_> = book
        .list(&filter)
        .await?
        .into_iter()
        .filter(|g| g.reason.starts_with(LEARNED) && g.created_at >= since_ms)
        .collect();
    let uses = learned.iter().map(|g| u64::from(g.uses)).sum();
    Ok(report(&rows, since_ms, (learned.len() as u64, uses)))
}

impl Broker {
    /// The report over approvals opened since `since_ms`.
    pub async fn stats(&self, since_ms: i64) -> Result<Stats, ConfirmError> {
        gather(self.db(), self.book(), since_ms).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_and_medians() {
        assert_eq!(day_of(0), "1970-01-01");
        assert_eq!(day_of(1_764_374_400_000), "2025-11-29");
        assert_eq!(day_of(951_782_400_000), "2000-02-29");
        assert_eq!(median(&mut [5, 1, 3]), Some(3));
        assert_eq!(median(&mut [4, 1, 3, 2]), Some(2));
        assert_eq!(median(&mut []), None);
    }
}
