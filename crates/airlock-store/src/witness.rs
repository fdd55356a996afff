//! The witness: signed tree heads (checkpoints) kept outside the database, so that a writer of
//! the database who deletes receipts from the end of the log, or rewrites it, and fixes the
//! checkpoints, `ledger_state` and `ledger_heads` to match, is still caught: `ledger verify`
//! checks that the log extends every witnessed head.
//!
//! Every writer appends each checkpoint it commits to `heads.jsonl` in the witness directory
//! (one canonical checkpoint per line; the directory 0700, the file 0600, appended and synced).
//! By default the directory is `witness/` in this node's data directory: outside the database,
//! and on PostgreSQL one per node, so each node witnesses the shared log on its own disk. Set
//! `AIRLOCK_WITNESS_DIR` to a place the database's writers cannot rewrite (another account's
//! directory, an append-only file system, a mounted share) for a witness that holds against a
//! writer who also edits files. See `docs/receipts.md`.

use std::io::Write;
use std::path::Path;

use airlock_ledger::Checkpoint;

use crate::{StoreError, keyfile};

/// The witness directory's name inside the data directory (the default).
pub const WITNESS_DIR: &str = "witness";
/// The file of witnessed heads.
pub const HEADS_FILE: &str = "heads.jsonl";

/// Appends `cp` to the witness in `dir`.
pub fn record(dir: &Path, cp: &Checkpoint) -> Result<(), StoreError> {
    keyfile::create_private_dir(dir)?;
    let path = dir.join(HEADS_FILE);
    let mut line = cp.canonical_bytes()?;
    line.push(b'\n');
    let mut opts = std::fs::OpenOptions::new();
    opts.append(true).create(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let mut f = opts.open(&path).map_err(|e| StoreError::io(&path, e))?;
    f.write_all(&line)
        .and_then(|()| f.sync_data())
        .map_err(|e| StoreError::io(&path, e))
}

/// The witnessed heads in `dir` (none when there is no witness file yet). A line cut short by
/// a crash while it was appended (the last, without its newline) is left out.
pub fn read(dir: &Path) -> Result<Vec<Vec<u8>>, StoreError> {
    let path = dir.join(HEADS_FILE);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(StoreError::io(&path, e)),
    };
    let complete = match bytes.iter().rposition(|b| *b == b'\n') {
        Some(i) => &bytes[..i],
        None => return Ok(Vec::new()),
    };
    Ok(complete
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(<[u8]>::to_vec)
        .collect())
}
