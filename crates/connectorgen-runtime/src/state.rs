//! The state folder: where the ledger and the token secret live.
//!
//! Takes: `--state DIR`, or the environment. Returns: the folder (created, owner-only
//! where the platform has modes), the ledger's path, the secret.
//! Must never: put the secret anywhere readable by other users, or reuse a secret that
//! is too short to sign with.

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

/// Creates the folder if needed.
pub(crate) fn ensure_dir(dir: &Path) -> io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir)
}

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
    match std::fs::File::open(&path) {
        Ok(mut file) => {
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
