//! Budget counters of the model proxy: requests, tokens and cost per agent and period. The
//! check and the charge of a request are one conditional upsert (admitted only while every
//! counter is under its limit), so two requests racing for the last unit never both pass, on
//! one node or many. Tokens and cost are known only once the answer arrives and are added then.

use sqlx::Row;

use crate::StoreError;
use crate::db::{Db, on_pool};

/// Limits for one period; `None` is unlimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BudgetLimits {
    pub requests: Option<u64>,
    pub tokens: Option<u64>,
    pub cost_micros: Option<u64>,
}

/// What an agent used in one period.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BudgetUsage {
    pub requests: i64,
    pub tokens: i64,
    pub cost_micros: i64,
}

fn cap(v: Option<u64>) -> i64 {
    v.map_or(i64::MAX, |n| i64::try_from(n).unwrap_or(i64::MAX))
}

impl Db {
    /// Counts one request of `agent` in the period starting at `period_start` if every
    /// counter is under its limit; `None` (nothing counted) when the budget is spent.
    pub async fn budget_charge(
        &self,
        agent: &str,
        period_start: i64,
        limits: BudgetLimits,
    ) -> Result<Option<BudgetUsage>, StoreError> {
        if limits.requests == Some(0) || limits.tokens == Some(0) || limits.cost_micros == Some(0) {
            return Ok(None);
        }
        const Q: &str = "INSERT INTO budgets (agent, period_start, requests, tokens, cost_micros) \
             VALUES ($1, $2, 1, 0, 0) \
             ON CONFLICT (agent, period_start) DO UPDATE SET requests = budgets.requests + 1 \
             WHERE budgets.requests < $3 AND budgets.tokens < $4 AND budgets.cost_micros < $5 \
             RETURNING requests, tokens, cost_micros";
        on_pool!(self, p => {
            let row = sqlx::query(Q)
                .bind(agent)
                .bind(period_start)
                .bind(cap(limits.requests))
                .bind(cap(limits.tokens))
                .bind(cap(limits.cost_micros))
                .fetch_optional(p)
                .await?;
            Ok(match row {
                None => None,
                Some(r) => Some(BudgetUsage {
                    requests: r.try_get(0)?,
                    tokens: r.try_get(1)?,
                    cost_micros: r.try_get(2)?,
                }),
            })
        })
    }

    /// Adds an answer's tokens and cost to the period it was admitted in.
    pub async fn budget_add_usage(
        &self,
        agent: &str,
        period_start: i64,
        tokens: i64,
        cost_micros: i64,
    ) -> Result<(), StoreError> {
        const Q: &str = "UPDATE budgets SET tokens = tokens + $3, cost_micros = cost_micros + $4 \
                         WHERE agent = $1 AND period_start = $2";
        on_pool!(self, p => {
            sqlx::query(Q)
                .bind(agent)
                .bind(period_start)
                .bind(tokens)
                .bind(cost_micros)
                .execute(p)
                .await?;
        });
        Ok(())
    }

    /// What `agent` used in the period starting at `period_start`.
    pub async fn budget_usage(
        &self,
        agent: &str,
        period_start: i64,
    ) -> Result<BudgetUsage, StoreError> {
        const Q: &str = "SELECT requests, tokens, cost_micros FROM budgets \
                         WHERE agent = $1 AND period_start = $2";
        on_pool!(self, p => {
            let row = sqlx::query(Q).bind(agent).bind(period_start).fetch_optional(p).await?;
            Ok(match row {
                None => BudgetUsage::default(),
                Some(r) => BudgetUsage {
                    requests: r.try_get(0)?,
                    tokens: r.try_get(1)?,
                    cost_micros: r.try_get(2)?,
                },
            })
        })
    }
}
