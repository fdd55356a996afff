//! Where state lives: a data directory (keys, and the SQLite file unless a PostgreSQL URL is
//! given) and an optional database URL.

use std::path::PathBuf;

/// The SQLite file inside the data directory.
pub const SQLITE_FILE: &str = "airlock.db";

#[derive(Debug, Clone)]
pub struct StoreOptions {
    pub data_dir: PathBuf,
    /// `postgres://…` selects PostgreSQL; `sqlite://PATH` or `None` selects SQLite.
    pub database: Option<String>,
    /// Where signed tree heads are witnessed (default: `witness/` in the data directory).
    pub witness_dir: Option<PathBuf>,
}

impl StoreOptions {
    pub fn new(data_dir: impl Into<PathBuf>) -> Self {
        StoreOptions {
            data_dir: data_dir.into(),
            database: None,
            witness_dir: None,
        }
    }

    pub fn with_witness_dir(mut self, dir: Option<PathBuf>) -> Self {
        self.witness_dir = dir;
        self
    }

    /// The witness directory in force.
    pub fn witness(&self) -> PathBuf {
        self.witness_dir
            .clone()
            .unwrap_or_else(|| self.data_dir.join(crate::witness::WITNESS_DIR))
    }

    pub fn with_database(mut self, url: Option<String>) -> Self {
        self.database = url;
        self
    }

    pub fn sqlite_path(&self) -> PathBuf {
        self.data_dir.join(SQLITE_FILE)
    }

    /// The store a command's global options select: `--data-dir` (else `AIRLOCK_DATA_DIR`,
    /// else the user's data directory), `--database` (else `AIRLOCK_DATABASE_URL`, else SQLite
    /// in the data directory), and the witness directory of `AIRLOCK_WITNESS_DIR`. The
    /// environment is read here as well because the hook's fast path answers before any command
    /// line is parsed. One rule for the `airlock` and `airlock-lab` binaries.
    pub fn chosen(data_dir: Option<PathBuf>, database: Option<String>) -> Self {
        let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
        let dir = data_dir
            .or_else(|| env("AIRLOCK_DATA_DIR").map(PathBuf::from))
            .unwrap_or_else(default_data_dir);
        let database =
            database.or_else(|| env("AIRLOCK_DATABASE_URL").and_then(|v| v.into_string().ok()));
        StoreOptions::new(dir)
            .with_database(database)
            .with_witness_dir(env("AIRLOCK_WITNESS_DIR").map(PathBuf::from))
    }
}

/// The user's data directory for airlock (`$XDG_DATA_HOME/airlock`, `~/.local/share/airlock`,
/// or the platform's equivalent), or `./.airlock` when the platform has none.
pub fn default_data_dir() -> PathBuf {
    dirs::data_dir()
        .map(|d| d.join("airlock"))
        .unwrap_or_else(|| PathBuf::from(".airlock"))
}
