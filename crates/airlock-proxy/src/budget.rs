//! Budgets per agent token: before a request goes upstream it is counted in the store's
//! atomic check-and-charge (admitted only while requests, tokens and cost of the period are all
//! under their limits); the answer's `usage` adds its tokens and cost afterwards. Over budget is
//! a 429 with the stable code `BUDGET_EXCEEDED`, and a receipt.

use airlock_store::BudgetLimits;
use axum::http::StatusCode;
use serde_json::Value;

use super::{Proxy, record};
use airlock_gateway::ApiError;
use airlock_grants::system_now_ms as now_ms;

/// The period a request was admitted in (its start, unix ms).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Admitted(pub i64);

impl Proxy {
    /// Counts the request against `agent`'s budget; `None` when no budget is configured.
    pub async fn admit(&self, agent: &str, session: &str) -> Result<Option<Admitted>, ApiError> {
        let Some(b) = &self.config.budget else {
            return Ok(None);
        };
        let period = i64::try_from(b.period.as_millis())
            .unwrap_or(i64::MAX)
            .max(1);
        let now = now_ms();
        let start = now - now.rem_euclid(period);
        let limits = BudgetLimits {
            requests: b.requests,
            tokens: b.tokens,
            cost_micros: b.cost_micros,
        };
        let db = self.broker.ledger().db();
        match db.budget_charge(agent, start, limits).await {
            Ok(Some(_)) => Ok(Some(Admitted(start))),
            Ok(None) => {
                let used = db
                    .budget_usage(agent, start)
                    .await
                    .map_err(ApiError::internal)?;
                let resets = (start.saturating_add(period) - now).max(0) / 1000;
                let message = format!(
                    "the budget of agent {agent} for this period is spent (requests {}/{}, tokens {}/{}, cost {}/{}); it resets in {resets} s",
                    used.requests,
                    limit(b.requests),
                    used.tokens,
                    limit(b.tokens),
                    money(used.cost_micros),
                    b.cost_micros.map_or("unlimited".into(), |c| money(
                        i64::try_from(c).unwrap_or(i64::MAX)
                    )),
                );
                // The refusal is a decision like any other: recorded before it is answered.
                record::budget_refusal(&self.broker, agent, session, start, &message)
                    .await
                    .map_err(ApiError::internal)?;
                Err(ApiError::new(
                    StatusCode::TOO_MANY_REQUESTS,
                    "BUDGET_EXCEEDED",
                    message,
                ))
            }
            // Fail-safe: a budget that cannot be checked admits nothing.
            Err(e) => Err(ApiError::internal(e)),
        }
    }

    /// Adds the tokens and cost of an answer's `usage` object.
    pub async fn charge(&self, agent: &str, at: Admitted, usage: &Value) {
        let Some(b) = &self.config.budget else { return };
        let n = |k: &str| usage.get(k).and_then(Value::as_u64).unwrap_or(0);
        let (prompt, completion) = (n("prompt_tokens"), n("completion_tokens"));
        let total = match n("total_tokens") {
            0 => prompt + completion,
            t => t,
        };
        let cost = (u128::from(prompt) * u128::from(b.prompt_micros_per_1k)
            + u128::from(completion) * u128::from(b.completion_micros_per_1k))
            / 1000;
        let db = self.broker.ledger().db();
        let r = db
            .budget_add_usage(
                agent,
                at.0,
                i64::try_from(total).unwrap_or(i64::MAX),
                i64::try_from(cost).unwrap_or(i64::MAX),
            )
            .await;
        if let Err(e) = r {
            tracing::error!(error = %e, agent, "recording token usage");
        }
    }
}

fn limit(v: Option<u64>) -> String {
    v.map_or("unlimited".into(), |n| n.to_string())
}

fn money(micros: i64) -> String {
    format!("{:.6}", micros as f64 / 1_000_000.0)
}
