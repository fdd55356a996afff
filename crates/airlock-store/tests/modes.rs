//! File modes: the data directory, the SQLite database with its `-wal` and `-shm` files and the
//! key files are the owner's only, whether airlock creates them or finds them looser.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use airlock_store::{Ledger, LedgerConfig, LedgerStore, StoreOptions};

use crate::common::request;

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p)
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        .permissions()
        .mode()
        & 0o777
}

async fn write_some(opts: &StoreOptions) -> Ledger {
    let ledger = Ledger::open(opts, LedgerConfig::default()).await.unwrap();
    for i in 0..3 {
        ledger
            .append(request(&format!("m-{i}"), "s"))
            .await
            .unwrap();
    }
    ledger
}

fn check_private(dir: &Path) {
    assert_eq!(mode(dir), 0o700, "the data directory");
    assert_eq!(mode(&dir.join("keys")), 0o700, "the keys directory");
    for f in ["airlock.db", "airlock.db-wal", "airlock.db-shm"] {
        assert_eq!(mode(&dir.join(f)), 0o600, "{f}");
    }
    for f in ["admin.key", "ledger.key"] {
        assert_eq!(mode(&dir.join("keys").join(f)), 0o600, "{f}");
    }
}

#[tokio::test]
async fn a_new_data_directory_is_the_owners_only() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    let opts = StoreOptions::new(&dir);
    // With the database open (its -wal and -shm exist while it is).
    let ledger = write_some(&opts).await;
    check_private(&dir);
    ledger.close().await;
}

#[tokio::test]
async fn a_looser_existing_data_directory_is_tightened() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    let opts = StoreOptions::new(&dir);
    write_some(&opts).await.close().await;
    // As an older airlock left them: world-readable database and directory.
    for (p, m) in [
        (dir.clone(), 0o755),
        (dir.join("keys"), 0o755),
        (dir.join("airlock.db"), 0o644),
    ] {
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(m)).unwrap();
    }
    let ledger = write_some(&opts).await;
    check_private(&dir);
    ledger.close().await;
}
