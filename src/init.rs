//! `connectorgen init`: a commented starter manifest.
//!
//! Takes: a service name and a path. Returns: the starter text (`starter`), or writes it
//! (`write`). The starter has a free read, a read-only list, and a paid async job with
//! its poll target; it builds cleanly and passes `check` with no warnings (tested).
//! Must never: overwrite an existing file unless asked to, or let the name break the
//! YAML (it is written as a quoted string).

use std::io::Write as _;
use std::path::Path;

use atomic_write_file::AtomicWriteFile;

const STARTER: &str = include_str!("../templates/init.yaml");

/// The starter manifest for a service called `name`.
pub fn starter(name: &str) -> String {
    let quote = |s: &str| serde_json::to_string(s).expect("a string always serialises");
    let description = format!(
        "{name} connects an AI assistant to the person's {name} account: it can read their \
         account and things, and start paid jobs only with their explicit agreement."
    );
    STARTER
        .replace("__NAME__", &quote(name))
        .replace("__DESCRIPTION__", &quote(&description))
}

/// Why `init` wrote nothing.
#[derive(Debug, thiserror::Error)]
pub enum InitError {
    #[error("{} already exists; use --force to overwrite it", .0.display())]
    Exists(std::path::PathBuf),
    #[error("could not write {}: {source}", path.display())]
    Io {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Writes the starter to `path` (atomically), refusing to replace a file unless `force`.
pub fn write(path: &Path, name: &str, force: bool) -> Result<(), InitError> {
    if !force && path.symlink_metadata().is_ok() {
        return Err(InitError::Exists(path.to_path_buf()));
    }
    let io = |source| InitError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut file = AtomicWriteFile::open(path).map_err(io)?;
    file.write_all(starter(name).as_bytes()).map_err(io)?;
    file.commit().map_err(io)
}
