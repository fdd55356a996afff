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
    tighten(&keys_dir(data_dir), 0o700)?;
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
    b.create(dir).map_err(|e| StoreError::io(dir, e))?;
    // A directory made earlier (by an older airlock, or by hand) keeps its mode through
    // `create`: tighten it, as nothing but its owner has business in it.
    tighten(dir, 0o700)
}

/// Takes group and other permissions away from `path` (a file or directory) when it has any,
/// leaving the owner's bits as they are up to `mode`. A path that does not exist is left alone.
pub fn tighten(path: &Path, mode: u32) -> Result<(), StoreError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let current = match fs::metadata(path) {
            Ok(m) => m.permissions().mode() & 0o7777,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(StoreError::io(path, e)),
        };
        if current & !mode != 0 {
            fs::set_permissions(path, fs::Permissions::from_mode(current & mode))
                .map_err(|e| StoreError::io(path, e))?;
        }
    }
    #[cfg(not(unix))]
    let _ = (path, mode);
    Ok(())
}

/// Creates an empty file readable and writable by its owner only, unless it exists (then it is
/// tightened to 0600). For files other programs create and we must not pre-fill, such as the
/// SQLite database: SQLite gives its `-wal` and `-shm` files the database file's mode.
pub fn ensure_private_file(path: &Path) -> Result<(), StoreError> {
    let mut opts = fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    match opts.open(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => tighten(path, 0o600),
        Err(e) => Err(StoreError::io(path, e)),
    }
}

/// Writes `bytes` to `path` readable by its owner only: to a temporary name beside it, synced,
/// then renamed, so a reader never sees half a file and never a moment of wider permissions.
pub fn write_private(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".{}.tmp", std::process::id()));
    let tmp = path.with_file_name(name);
    let _ = fs::remove_file(&tmp);
    let mut opts = fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let mut f = opts.open(&tmp).map_err(|e| StoreError::io(&tmp, e))?;
    f.write_all(bytes)
        .and_then(|()| f.sync_all())
        .map_err(|e| StoreError::io(&tmp, e))?;
    drop(f);
    fs::rename(&tmp, path).map_err(|e| {
        let _ = fs::remove_file(&tmp);
        StoreError::io(path, e)
    })
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
