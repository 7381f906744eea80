//! The state folder: where the ledger and the token secret live.
//!
//! Takes: `--state DIR`, or the environment. Returns: the folder (created, owner-only
//! where the platform has modes), the ledger's path, the secret.
//! Must never: put the secret anywhere readable by other users, reuse a secret that
//! is too short to sign with, use a folder or a secret other users can write (they could
//! replace the ledger or forge confirmation values), or follow a symlink to the ledger
//! or the secret (a dangling one included: it would create the file where it points).

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

/// The platform's state directory for connectorgen:
/// `$XDG_STATE_HOME/connectorgen`, else `~/.local/state/connectorgen` (Linux, BSD);
/// `~/Library/Application Support/connectorgen` (macOS);
/// `%LOCALAPPDATA%\connectorgen` (Windows).
pub(crate) fn default_dir() -> Option<PathBuf> {
    let env = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if cfg!(windows) {
        return env("LOCALAPPDATA").map(|d| PathBuf::from(d).join("connectorgen"));
    }
    let home = env("HOME").map(PathBuf::from);
    if cfg!(target_os = "macos") {
        return home.map(|h| h.join("Library/Application Support/connectorgen"));
    }
    env("XDG_STATE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| home.map(|h| h.join(".local/state")))
        .map(|d| d.join("connectorgen"))
}

/// Creates the folder if needed; refuses one that users other than its owner can write.
pub(crate) fn ensure_dir(dir: &Path) -> io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir)?;
    not_writable_by_others(dir, &std::fs::metadata(dir)?, "chmod go-w")
}

/// An error when group or others may write `path` (Unix modes; elsewhere nothing to check).
fn not_writable_by_others(path: &Path, meta: &std::fs::Metadata, fix: &str) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = meta.permissions().mode() & 0o7777;
        if mode & 0o022 != 0 {
            return Err(io::Error::other(format!(
                "{} can be written by other users (mode {mode:04o}), who could replace the \
                 ledger or the secret that signs confirmations: `{fix} {}`, or pass --state \
                 with a folder of your own",
                path.display(),
                path.display()
            )));
        }
    }
    #[cfg(not(unix))]
    let _ = (path, meta, fix);
    Ok(())
}

/// Refuses `path` when it is a symlink (dangling or not): the ledger and the secret are
/// this folder's own files.
pub(crate) fn not_a_symlink(path: &Path) -> io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => Err(io::Error::other(format!(
            "{} is a symbolic link; the state folder's files are not followed through links: \
             remove it",
            path.display()
        ))),
        Ok(_) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// Makes the ledger file owner-only (0600), creating it empty if it is not there, never
/// through a link. SQLite makes its `-wal` and `-shm` files with the same mode.
pub(crate) fn prepare_ledger(path: &Path) -> io::Result<()> {
    not_a_symlink(path)?;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // O_NOFOLLOW: a link made between the check and the open is refused too.
        options.mode(0o600).custom_flags(O_NOFOLLOW);
    }
    let file = options.open(path)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // A ledger made before this check (0644) is closed to others now.
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    drop(file);
    Ok(())
}

#[cfg(target_os = "linux")]
const O_NOFOLLOW: i32 = 0o400_000;
#[cfg(all(unix, not(target_os = "linux")))]
const O_NOFOLLOW: i32 = 0x0100;

/// The ledger file of one connector: `<dir>/<service>.ledger.sqlite3`, the service name
/// reduced to letters, digits, `-` and `_`.
pub(crate) fn ledger_path(dir: &Path, service: &str) -> PathBuf {
    let name: String = service
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    dir.join(format!("{name}.ledger.sqlite3"))
}

/// The secret that signs confirmation tokens, made once per state folder (so a token
/// issued before a restart still opens after it).
pub(crate) fn secret(dir: &Path) -> io::Result<Vec<u8>> {
    let path = dir.join("secret");
    not_a_symlink(&path)?;
    match std::fs::File::open(&path) {
        Ok(mut file) => {
            not_writable_by_others(&path, &file.metadata()?, "chmod 600")?;
            let mut bytes = Vec::new();
            file.read_to_end(&mut bytes)?;
            if bytes.len() >= 32 {
                return Ok(bytes);
            }
            Err(io::Error::other(format!(
                "{} is shorter than 32 bytes: delete it and a new one is made",
                path.display()
            )))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            let mut bytes = Vec::with_capacity(64);
            for _ in 0..4 {
                bytes.extend_from_slice(uuid::Uuid::new_v4().as_bytes());
            }
            let mut options = std::fs::OpenOptions::new();
            // create_new never follows a link (O_EXCL).
            options.write(true).create_new(true);
            #[cfg(unix)]
            {
                use std::os::unix::fs::OpenOptionsExt;
                options.mode(0o600);
            }
            match options.open(&path) {
                Ok(mut file) => {
                    file.write_all(&bytes)?;
                    file.sync_all()?;
                    Ok(bytes)
                }
                // Another instance made it first: use theirs.
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => secret(dir),
                Err(e) => Err(e),
            }
        }
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_folder_or_secret_others_can_write_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("state");
        ensure_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = ensure_dir(&dir).unwrap_err().to_string();
        assert!(
            e.contains("can be written by other users (mode 0777)"),
            "{e}"
        );
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        ensure_dir(&dir).unwrap();
        secret(&dir).unwrap();
        let path = dir.join("secret");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
        let e = secret(&dir).unwrap_err().to_string();
        assert!(e.contains("can be written by other users"), "{e}");
    }

    #[cfg(unix)]
    #[test]
    fn the_ledger_is_0600_and_never_reached_through_a_link() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = ledger_path(dir.path(), "vidgen");
        std::fs::write(&path, b"").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        prepare_ledger(&path).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        // A dangling link: refused, and nothing is created where it points.
        let target = dir.path().join("elsewhere");
        let link = ledger_path(dir.path(), "other");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let e = prepare_ledger(&link).unwrap_err().to_string();
        assert!(e.contains("is a symbolic link"), "{e}");
        assert!(!target.exists());
        let secret_link = dir.path().join("secret");
        std::os::unix::fs::symlink(&target, &secret_link).unwrap();
        assert!(secret(dir.path()).is_err());
        assert!(!target.exists());
    }

    #[test]
    fn the_secret_is_made_once_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let a = secret(dir.path()).unwrap();
        let b = secret(dir.path()).unwrap();
        assert_eq!(a, b);
        assert!(a.len() >= 32);
        assert_eq!(
            ledger_path(dir.path(), "Vid Gen/2"),
            dir.path().join("Vid_Gen_2.ledger.sqlite3")
        );
    }
}
