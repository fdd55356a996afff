//! Rows of the MCP gateway's tool pins: per (server, tool) the hash of the definition first seen
//! and whether the tool is usable. The gateway computes the hashes; the store only keeps them and
//! makes the transitions atomic: first sight pins (one `INSERT … ON CONFLICT DO NOTHING`), a
//! different hash quarantines, and only a person's approval moves the pin to the new hash.

use sqlx::Row;

use crate::StoreError;
use crate::db::{Db, on_pool};

/// One tool's pin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PinRow {
    pub server: String,
    pub tool: String,
    /// The approved definition's hash (lowercase hex SHA-256).
    pub sha256: String,
    /// `approved` or `quarantined`.
    pub status: String,
    /// The hash the server presented that is not approved yet.
    pub pending_sha256: Option<String>,
    /// The definition behind `pending_sha256` (canonical JSON), for the person to read.
    pub pending_definition: Option<String>,
    pub first_seen_ms: i64,
    pub updated_ms: i64,
}

impl PinRow {
    /// Whether a person moved the pin to its definition: pins move only by a person's approval,
    /// so an approved pin updated after its first sight was approved by someone (one pinned at
    /// first sight was never updated).
    pub fn approved_by_person(&self) -> bool {
        self.status == "approved" && self.updated_ms != self.first_seen_ms
    }
}

/// What a presented definition is, measured against the pin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PinCheck {
    /// Seen for the first time: pinned now and usable.
    Pinned,
    /// The approved definition.
    Approved,
    /// Changed since it was pinned (or still waiting for a person): not usable.
    Quarantined { approved: String, presented: String },
}

const COLUMNS: &str =
    "server, tool, sha256, status, pending_sha256, first_seen_ms, updated_ms, pending_definition";

fn pin_of<R: Row>(r: &R) -> Result<PinRow, sqlx::Error>
where
    usize: sqlx::ColumnIndex<R>,
    for<'a> String: sqlx::Decode<'a, R::Database> + sqlx::Type<R::Database>,
    for<'a> i64: sqlx::Decode<'a, R::Database> + sqlx::Type<R::Database>,
{
    Ok(PinRow {
        server: r.try_get(0)?,
        tool: r.try_get(1)?,
        sha256: r.try_get(2)?,
        status: r.try_get(3)?,
        pending_sha256: r.try_get(4)?,
        first_seen_ms: r.try_get(5)?,
        updated_ms: r.try_get(6)?,
        pending_definition: r.try_get(7)?,
    })
}

impl Db {
    /// Checks `sha256` (the hash of `definition`) against the pin of (server, tool), pinning
    /// it at first sight and quarantining the tool when it differs. A quarantined tool stays
    /// quarantined even if the server goes back to the approved definition: a flip-flop is
    /// itself suspicious.
    pub async fn mcp_pin_check(
        &self,
        server: &str,
        tool: &str,
        sha256: &str,
        definition: &str,
        now: i64,
    ) -> Result<PinCheck, StoreError> {
        const INSERT: &str = "INSERT INTO mcp_pins (server, tool, sha256, status, pending_sha256, first_seen_ms, updated_ms) \
                              VALUES ($1, $2, $3, 'approved', NULL, $4, $4) ON CONFLICT (server, tool) DO NOTHING";
        const QUARANTINE: &str = "UPDATE mcp_pins SET status = 'quarantined', pending_sha256 = $3, updated_ms = $4, \
                                  pending_definition = $5 WHERE server = $1 AND tool = $2";
        let inserted = on_pool!(self, p => {
            sqlx::query(INSERT).bind(server).bind(tool).bind(sha256).bind(now)
                .execute(p).await?.rows_affected() == 1
        });
        if inserted {
            return Ok(PinCheck::Pinned);
        }
        let Some(row) = self.mcp_pin_get(server, tool).await? else {
            return Err(StoreError::Config(format!(
                "the pin of {server}/{tool} vanished while it was checked"
            )));
        };
        if row.status == "approved" && row.sha256 == sha256 {
            return Ok(PinCheck::Approved);
        }
        if row.pending_sha256.as_deref() != Some(sha256) || row.status != "quarantined" {
            on_pool!(self, p => {
                sqlx::query(QUARANTINE).bind(server).bind(tool).bind(sha256).bind(now)
                    .bind(definition).execute(p).await?;
            });
        }
        Ok(PinCheck::Quarantined {
            approved: row.sha256,
            presented: sha256.to_string(),
        })
    }

    /// Like [`Db::mcp_pin_check`], except that a tool seen for the first time is not pinned but
    /// held: stored quarantined with no approved definition (`sha256` empty) and `sha256` as the
    /// one presented, so it stays unusable until a person approves it. For tools that appear
    /// after a server's first listing, which nobody has looked at.
    pub async fn mcp_pin_hold_new(
        &self,
        server: &str,
        tool: &str,
        sha256: &str,
        definition: &str,
        now: i64,
    ) -> Result<PinCheck, StoreError> {
        const HOLD: &str = "INSERT INTO mcp_pins (server, tool, sha256, status, pending_sha256, first_seen_ms, updated_ms, pending_definition) \
                            VALUES ($1, $2, '', 'quarantined', $3, $4, $4, $5) ON CONFLICT (server, tool) DO NOTHING";
        let inserted = on_pool!(self, p => {
            sqlx::query(HOLD).bind(server).bind(tool).bind(sha256).bind(now).bind(definition)
                .execute(p).await?.rows_affected() == 1
        });
        if inserted {
            return Ok(PinCheck::Quarantined {
                approved: String::new(),
                presented: sha256.to_string(),
            });
        }
        self.mcp_pin_check(server, tool, sha256, definition, now)
            .await
    }

    /// Quarantines (server, tool) with `sha256` (of `definition`) waiting for a person, whatever
    /// its pin was: for a definition the gateway will not use unseen (its description carries
    /// instructions for the model). `false` when the tool has no pin.
    pub async fn mcp_pin_quarantine(
        &self,
        server: &str,
        tool: &str,
        sha256: &str,
        definition: &str,
        now: i64,
    ) -> Result<bool, StoreError> {
        const Q: &str = "UPDATE mcp_pins SET status = 'quarantined', pending_sha256 = $3, updated_ms = $4, \
                         pending_definition = $5 WHERE server = $1 AND tool = $2";
        on_pool!(self, p => {
            let n = sqlx::query(Q).bind(server).bind(tool).bind(sha256).bind(now).bind(definition)
                .execute(p).await?.rows_affected();
            Ok(n == 1)
        })
    }

    /// Whether any tool of `server` has a pin (it was listed before).
    pub async fn mcp_pin_server_known(&self, server: &str) -> Result<bool, StoreError> {
        const Q: &str = "SELECT tool FROM mcp_pins WHERE server = $1 LIMIT 1";
        on_pool!(self, p => {
            let row = sqlx::query(Q).bind(server).fetch_optional(p).await?;
            Ok(row.is_some())
        })
    }

    /// A person approves definition `reviewed` of a quarantined tool; `false` when nothing
    /// waits (unknown tool, or not quarantined) or another definition waits than the one the
    /// person reviewed (the server changed it again meanwhile).
    pub async fn mcp_pin_approve(
        &self,
        server: &str,
        tool: &str,
        reviewed: &str,
        now: i64,
    ) -> Result<bool, StoreError> {
        const Q: &str = "UPDATE mcp_pins SET sha256 = pending_sha256, status = 'approved', pending_sha256 = NULL, \
                         pending_definition = NULL, updated_ms = $3 \
                         WHERE server = $1 AND tool = $2 AND status = 'quarantined' AND pending_sha256 = $4";
        on_pool!(self, p => {
            let n = sqlx::query(Q).bind(server).bind(tool).bind(now).bind(reviewed)
                .execute(p).await?.rows_affected();
            Ok(n == 1)
        })
    }

    pub async fn mcp_pin_get(
        &self,
        server: &str,
        tool: &str,
    ) -> Result<Option<PinRow>, StoreError> {
        let q = format!("SELECT {COLUMNS} FROM mcp_pins WHERE server = $1 AND tool = $2");
        on_pool!(self, p => {
            let row = sqlx::query(sqlx::AssertSqlSafe(q)).bind(server).bind(tool).fetch_optional(p).await?;
            Ok(row.as_ref().map(pin_of).transpose()?)
        })
    }

    /// Every pin (of one server when given), by server and tool.
    pub async fn mcp_pin_list(&self, server: Option<&str>) -> Result<Vec<PinRow>, StoreError> {
        // Two texts rather than `$1 IS NULL`: PostgreSQL cannot type a parameter used only so.
        let q = match server {
            Some(_) => {
                format!("SELECT {COLUMNS} FROM mcp_pins WHERE server = $1 ORDER BY server, tool")
            }
            None => format!("SELECT {COLUMNS} FROM mcp_pins ORDER BY server, tool"),
        };
        on_pool!(self, p => {
            let mut query = sqlx::query(sqlx::AssertSqlSafe(q));
            if let Some(s) = server {
                query = query.bind(s);
            }
            let rows = query.fetch_all(p).await?;
            Ok(rows.iter().map(pin_of).collect::<Result<_, _>>()?)
        })
    }
}
