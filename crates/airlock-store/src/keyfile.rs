//! Key files in the data directory: `keys/admin.key` and `keys/ledger.key`, each the 32-byte
//! Ed25519 secret as hex. The directory is created 0700 and the files 0600 (owner only); a key
//! file readable by group or others is refused, as ssh does.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use airlock_ledger::LedgerKey;

use crate::StoreError;

pub const ADMIN: &str = "admin.key";
pub const LEDGER: &str = "ledger.key";

pub fn keys_dir(data_dir: &Path) -> PathBuf {
    data_dir.join("keys")
}

/// Reads a key, or `None` when the file does not exist.
pub fn load(data_dir: &Path, name: &str) -> Result<Option<LedgerKey>, StoreError> {
    let path = keys_dir(data_dir).join(name);
    let text = match fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(StoreError::io(&path, e)),
    };
    check_private(&path)?;
    let mut secret = [0u8; 32];
    hex::decode_to_slice(text.trim(), &mut secret).map_err(|e| {
        StoreError::Config(format!(
            "{}: not a hex Ed25519 secret key: {e}",
            path.display()
        ))
    })?;
    Ok(Some(LedgerKey::from_secret(&secret)))
}

/// Writes a new key file, never overwriting an existing one.
pub fn save(data_dir: &Path, name: &str, key: &LedgerKey) -> Result<(), StoreError> {
    let dir = keys_dir(data_dir);
    create_private_dir(&dir)?;
    let path = dir.join(name);
    let mut opts = fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let mut f = opts.open(&path).map_err(|e| StoreError::io(&path, e))?;
    f.write_all(hex::encode(key.secret_bytes()).as_bytes())
        .and_then(|_| f.sync_all())
        .map_err(|e| StoreError::io(&path, e))
}

/// Loads a key or creates it; the flag says whether it was created.
pub fn load_or_create(data_dir: &Path, name: &str) -> Result<(LedgerKey, bool), StoreError> {
    if let Some(k) = load(data_dir, name)? {
        return Ok((k, false));
    }
    let k = LedgerKey::generate()?;
    match save(data_dir, name, &k) {
        Ok(()) => Ok((k, true)),
        // Another process created it first: use theirs.
        Err(StoreError::Io { source, .. })
            if source.kind() == std::io::ErrorKind::AlreadyExists =>
        {
            let k = load(data_dir, name)?.ok_or_else(|| {
                StoreError::Config(format!("key {name} vanished while being created"))
            })?;
            Ok((k, false))
        }
        Err(e) => Err(e),
    }
}

pub fn create_private_dir(dir: &Path) -> Result<(), StoreError> {
    let mut b = fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        b.mode(0o700);
    }
    b.create(dir).map_err(|e| StoreError::io(dir, e))
}

fn check_private(path: &Path) -> Result<(), StoreError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(path)
            .map_err(|e| StoreError::io(path, e))?
            .permissions()
            .mode();
        if mode & 0o077 != 0 {
            return Err(StoreError::Config(format!(
                "{} is readable by others (mode {:o}); run `chmod 600 {}`",
                path.display(),
                mode & 0o777,
                path.display()
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owner_only_and_round_trip() {
        let d = tempfile::tempdir().unwrap();
        let (k, created) = load_or_create(d.path(), LEDGER).unwrap();
        assert!(created);
        let (again, created) = load_or_create(d.path(), LEDGER).unwrap();
        assert!(!created);
        assert_eq!(k.id(), again.id());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let p = keys_dir(d.path()).join(LEDGER);
            assert_eq!(
                fs::metadata(&p).unwrap().permissions().mode() & 0o777,
                0o600
            );
            fs::set_permissions(&p, fs::Permissions::from_mode(0o644)).unwrap();
            assert!(
                load(d.path(), LEDGER)
                    .unwrap_err()
                    .to_string()
                    .contains("chmod 600")
            );
        }
    }
}
