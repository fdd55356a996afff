//! Secrets every node of one store shares (`store_secrets`): drawn once by whichever node needs
//! one first, then read by all, so a value derived from one on any node is the same on all.

use sqlx::Row;

use crate::db::on_pool;
use crate::{Db, StoreError};

impl Db {
    /// The secret called `name`: the stored one, or `fresh` stored now if there is none yet
    /// (when two nodes race, the first insert wins and both read it).
    pub async fn secret_get_or_insert(
        &self,
        name: &str,
        fresh: &str,
    ) -> Result<String, StoreError> {
        const INSERT: &str =
            "INSERT INTO store_secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING";
        const SELECT: &str = "SELECT value FROM store_secrets WHERE name = $1";
        on_pool!(self, p => {
            sqlx::query(INSERT).bind(name).bind(fresh).execute(p).await?;
            let row = sqlx::query(SELECT).bind(name).fetch_one(p).await?;
            Ok(row.try_get::<String, _>(0)?)
        })
    }
}
