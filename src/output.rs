//! Outputs → disk.
//!
//! Takes: the rendered `Outputs` and an output folder. Returns: nothing, or the one I/O
//! problem that stopped it, naming the file.
//! Must never: leave a half-written or emptied file. Every file is first written in
//! full to a temporary file beside its target (fsynced, 0644 like a normal file), and
//! only when all of them are written are they renamed over the old ones, so a failure
//! while writing any output leaves every previous output as it was.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use atomic_write_file::AtomicWriteFile;

use crate::render::Outputs;

/// An I/O problem with one output path.
#[derive(Debug, thiserror::Error)]
#[error("could not {action} {}: {source}", path.display())]
pub struct OutputError {
    pub action: &'static str,
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

/// Writes every output into `dir` (created if missing), all or nothing.
pub fn write_all(dir: &Path, outputs: &Outputs) -> Result<(), OutputError> {
    std::fs::create_dir_all(dir).map_err(|source| OutputError {
        action: "create the output folder",
        path: dir.to_path_buf(),
        source,
    })?;
    let mut pending = Vec::with_capacity(outputs.len());
    for (name, contents) in outputs {
        let path = dir.join(name);
        let err = |source| OutputError {
            action: "write",
            path: path.clone(),
            source,
        };
        let mut file = AtomicWriteFile::open(&path).map_err(err)?;
        file.write_all(contents.as_bytes()).map_err(err)?;
        pending.push((path, file));
    }
    // Dropping an uncommitted AtomicWriteFile removes its temporary file, so an early
    // return above leaves the folder as it was.
    for (path, file) in pending {
        file.commit().map_err(|source| OutputError {
            action: "replace",
            path,
            source,
        })?;
    }
    Ok(())
}
