//! Outputs ↔ disk: what `connectorgen check` calls drift.
//!
//! Takes: the outputs a manifest generates now and the output folder. Returns: one
//! `Drift` per file that is missing or differs, with a unified diff (disk → expected);
//! when a build into the folder was interrupted between its renames (its journal is
//! there, `output::interrupted`), each diff starts with a note saying so.
//! Must never: write anything (finishing an interrupted set is the next build's job).
//! Files in the folder that connectorgen does not generate are not its business and are
//! ignored.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use crate::render::Outputs;

/// One generated file that does not match what the manifest generates now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Drift {
    /// The file on disk, as `--out` names it.
    pub path: PathBuf,
    pub missing: bool,
    /// Unified diff from the file on disk to what the manifest generates; empty when missing.
    pub diff: String,
}

impl Drift {
    /// What is wrong with the file, for messages: "is missing" or "is out of date".
    pub fn what(&self) -> &'static str {
        if self.missing {
            "is missing"
        } else {
            "is out of date"
        }
    }
}

/// Why the output folder could not be compared.
#[derive(Debug, thiserror::Error)]
#[error("could not read {}: {source}", path.display())]
pub struct CheckError {
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

/// Reads an output file for comparison: only a regular file (a FIFO would hang `check`),
/// and no more than a little past the expected size (a link to `/dev/zero` would never
/// end): a longer file differs anyway, and its diff shows the first part.
fn read_bounded(path: &Path, expected: usize) -> std::io::Result<Vec<u8>> {
    use std::io::Read as _;
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(std::io::Error::new(
            ErrorKind::InvalidInput,
            "it is not a regular file",
        ));
    }
    let limit = expected as u64 + (1 << 20);
    let mut bytes = Vec::with_capacity(expected);
    std::fs::File::open(path)?
        .take(limit)
        .read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Compares every output with the file of the same name in `dir`.
pub fn drift(dir: &Path, outputs: &Outputs) -> Result<Vec<Drift>, CheckError> {
    let mut found = Vec::new();
    for (name, expected) in outputs {
        let path = dir.join(name);
        let (actual, missing) = match read_bounded(&path, expected.len()) {
            // The common case in CI: up to date, compared without copying.
            Ok(bytes) if bytes == expected.as_bytes() => continue,
            Ok(bytes) => (String::from_utf8_lossy(&bytes).into_owned(), false),
            Err(e) if e.kind() == ErrorKind::NotFound => (String::new(), true),
            Err(source) => return Err(CheckError { path, source }),
        };
        // A missing file's diff would be the whole file: saying "missing" is clearer.
        let diff = if missing {
            String::new()
        } else {
            let shown = path.display();
            similar::TextDiff::from_lines(actual.as_str(), expected.as_str())
                .unified_diff()
                .context_radius(3)
                .header(
                    &format!("{shown} (on disk)"),
                    &format!("{shown} (generated)"),
                )
                .to_string()
        };
        found.push(Drift {
            path,
            missing,
            diff,
        });
    }
    // Only files that differ matter: a set that matches the manifest is whole, journal
    // or not.
    if let Some(journal) = crate::output::interrupted(dir).filter(|_| !found.is_empty()) {
        let note = format!(
            "note: a build into {} was interrupted while it replaced the files (its journal \
             {} is still there), so they may be a mix of two builds; the next \
             `connectorgen build` into this folder finishes the interrupted one first\n",
            dir.display(),
            journal.display()
        );
        for drift in &mut found {
            drift.diff.insert_str(0, &note);
        }
    }
    Ok(found)
}
