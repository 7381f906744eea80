//! The journal of a set of renames: written before the first output is replaced,
//! removed after the last, so a build killed in between leaves a record of what it was
//! doing, and the next build finishes it.
//!
//! Takes: the output folder (canonical) and the renames (temporary file → output) of one
//! build. Returns: the journal on disk (`write`), or for a folder where one was left
//! behind, the renames completed (`recover`, given the files the current build writes)
//! or whether one says its set was interrupted (`present`).
//! Must never: rename anything a journal names unless it is one of our temporary files
//! (`atomic_file::is_temporary_of`) renamed over the file it was made for, in the same
//! folder, inside the output folder, over a file the build running now writes: a
//! journal planted in the folder (it may come from a repository) can do no more than
//! that build would.
//!
//! Format: `.connectorgen-journal.json` in the output folder, JSON:
//! `{"journal": "connectorgen renames", "version": 1, "renames": [{"from": ".openapi.json.4242.connectorgen-tmp", "to": "openapi.json"}, …]}`,
//! paths relative to the output folder with `/` between components.

use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::atomic_file::{self, Temporary};

/// The journal's file name in the output folder.
pub(super) const FILE_NAME: &str = ".connectorgen-journal.json";

/// What the first line says a journal is, so that a stray file of the same name is not
/// mistaken for one.
const KIND: &str = "connectorgen renames";

/// No journal of ours comes near this: a larger file is not one.
const MAX_BYTES: u64 = 1 << 20;

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[expect(
    clippy::struct_field_names,
    reason = "the file's first key says what it is"
)]
struct Journal {
    journal: String,
    version: u32,
    renames: Vec<Rename>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Rename {
    from: String,
    to: String,
}

/// A journal on disk, to be removed once every rename it lists is done.
#[derive(Debug)]
pub(super) struct Written {
    root: PathBuf,
}

impl Written {
    /// Removes the journal, durably: the set it describes is complete. The removal is
    /// flushed because a temporary file's name holds only the process id: a journal
    /// that a crash brought back could name the temporary files of a later build with
    /// the same id (a container's pid 1) and finish that build's unflushed files.
    pub(super) fn remove(self) -> std::io::Result<()> {
        std::fs::remove_file(self.root.join(FILE_NAME))?;
        atomic_file::sync_dir(&self.root)
    }
}

/// A journal written to its temporary file but not yet in place: flushed with the
/// outputs' temporary files (`atomic_file::sync_all` of `temporary`), it is put in
/// place by `commit` once their names are on disk too.
#[derive(Debug)]
pub(super) struct Pending {
    pub(super) temporary: Temporary,
    root: PathBuf,
}

impl Pending {
    /// Renames the flushed journal into place and flushes the folder: from here on it
    /// is on disk, and the renames it describes may begin.
    pub(super) fn commit(self) -> std::io::Result<Written> {
        self.temporary.rename()?;
        atomic_file::sync_dir(&self.root)?;
        Ok(Written { root: self.root })
    }
}

/// Writes the journal of `renames` (temporary file, output; both inside `root`) to its
/// temporary file in `root`, unflushed (`Pending`).
pub(super) fn prepare(root: &Path, renames: &[(PathBuf, PathBuf)]) -> std::io::Result<Pending> {
    let relative = |path: &Path| -> std::io::Result<String> {
        let inside = path.strip_prefix(root).map_err(|_| invalid("outside"))?;
        let parts: Option<Vec<&str>> = inside
            .components()
            .map(|c| c.as_os_str().to_str())
            .collect();
        parts
            .map(|p| p.join("/"))
            .ok_or_else(|| invalid("its path is not UTF-8"))
    };
    let journal = Journal {
        journal: KIND.to_string(),
        version: 1,
        renames: renames
            .iter()
            .map(|(from, to)| {
                Ok(Rename {
                    from: relative(from)?,
                    to: relative(to)?,
                })
            })
            .collect::<std::io::Result<_>>()?,
    };
    let mut text = serde_json::to_string_pretty(&journal).expect("a journal always serialises");
    text.push('\n');
    Ok(Pending {
        temporary: Temporary::write(&root.join(FILE_NAME), text.as_bytes())?,
        root: root.to_path_buf(),
    })
}

/// Writes the journal of `renames` into `root`, durably, replacing any earlier one
/// (`prepare`, flushed, `commit`), for tests that set up an interrupted build.
#[cfg(test)]
pub(super) fn write(root: &Path, renames: &[(PathBuf, PathBuf)]) -> std::io::Result<Written> {
    let mut pending = prepare(root, renames)?;
    atomic_file::sync_all([&mut pending.temporary])?;
    pending.commit()
}

/// Whether a journal is in `dir` that says a build into it was interrupted between its
/// first and last rename, so that its files may be a mix of two builds: one that names
/// a temporary file still there, or that is not a journal of ours. A journal whose
/// every temporary file is gone was left by a crash after the last rename and before
/// its removal was on disk: that set is whole. Reads only the journal, writes nothing.
pub(super) fn present(dir: &Path) -> bool {
    let path = dir.join(FILE_NAME);
    let Ok(meta) = std::fs::symlink_metadata(&path) else {
        return false;
    };
    let Ok(Some(journal)) = read(&path, &meta) else {
        return true;
    };
    !finished(dir, &journal)
}

/// Whether every temporary file `journal` names is gone from `dir`: its renames were
/// all done (a crash came between the last one and the journal's removal), so its set
/// is whole. A name that is not a plain relative path counts as not gone.
fn finished(dir: &Path, journal: &Journal) -> bool {
    journal.renames.iter().all(|rename| {
        plain(&rename.from).is_some_and(|from| {
            matches!(std::fs::symlink_metadata(dir.join(from)), Err(e) if e.kind() == std::io::ErrorKind::NotFound)
        })
    })
}

/// The journal at `path` (whose metadata is `meta`), if it is one connectorgen wrote.
fn read(path: &Path, meta: &std::fs::Metadata) -> std::io::Result<Option<Journal>> {
    if !meta.is_file() || meta.len() > MAX_BYTES {
        return Ok(None);
    }
    let text = std::fs::read_to_string(path)?;
    Ok(serde_json::from_str(&text)
        .ok()
        .filter(|j: &Journal| j.journal == KIND && j.version == 1))
}

/// `text` as a path relative to the output folder, if it is one: plain components
/// only, no `..`, no root.
fn plain(text: &str) -> Option<PathBuf> {
    let path = PathBuf::from(text);
    let plain = path.components().all(|c| matches!(c, Component::Normal(_)));
    (plain && !text.is_empty()).then_some(path)
}

/// Finishes the renames of an interrupted build in `root` (canonical, locked): every
/// temporary file the journal names that is still there is renamed over its output,
/// then the journal is removed. A temporary file that is gone was already renamed.
/// Returns whether there was a journal. `pause` is called after each rename (the test
/// hook of `output`).
pub(super) fn recover(
    root: &Path,
    targets: &[PathBuf],
    pause: impl Fn(&str),
) -> std::io::Result<bool> {
    let path = root.join(FILE_NAME);
    let meta = match std::fs::symlink_metadata(&path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(e),
    };
    let journal = read(&path, &meta)?.ok_or_else(|| {
        invalid("it is not a journal connectorgen wrote; remove it and build again")
    })?;
    let mut renames = Vec::with_capacity(journal.renames.len());
    for rename in &journal.renames {
        renames.push(checked(root, targets, rename)?);
    }
    let mut dirs: Vec<PathBuf> = Vec::new();
    for (done, (from, to)) in renames.iter().enumerate() {
        match std::fs::symlink_metadata(from) {
            Ok(meta) if meta.is_file() => std::fs::rename(from, to)?,
            Ok(_) => return Err(invalid("a file it names is not a regular file")),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        if let Some(dir) = to.parent().filter(|d| !dirs.iter().any(|x| x == d)) {
            dirs.push(dir.to_path_buf());
        }
        pause(&format!("recovered:{}", done + 1));
    }
    for dir in &dirs {
        atomic_file::sync_dir(dir)?;
    }
    Written {
        root: root.to_path_buf(),
    }
    .remove()?;
    Ok(true)
}

/// One rename of a journal, as paths, if it is one a build of ours could have made and
/// replaces one of `targets`, the files the build running now writes (or names a
/// temporary file that is gone: nothing is left to rename).
fn checked(
    root: &Path,
    targets: &[PathBuf],
    rename: &Rename,
) -> std::io::Result<(PathBuf, PathBuf)> {
    let bad = || {
        invalid(
            "it names a file that is not one of connectorgen's temporary files; remove it and build again",
        )
    };
    let (from, to) = (
        plain(&rename.from).ok_or_else(bad)?,
        plain(&rename.to).ok_or_else(bad)?,
    );
    let same_folder = from.parent() == to.parent();
    let ours = match (from.file_name(), to.file_name()) {
        (Some(f), Some(t)) => atomic_file::is_temporary_of(f, t),
        _ => false,
    };
    if !same_folder || !ours {
        return Err(bad());
    }
    let (from, to) = (root.join(from), root.join(to));
    // Through a symlinked folder, a rename could land outside the output folder.
    let folder = to.parent().unwrap_or(root).canonicalize()?;
    if !folder.starts_with(root) {
        return Err(bad());
    }
    // A temporary file that is gone was renamed already: nothing of this build's is at
    // stake, so a journal that a crash kept after its set was finished does not stop a
    // build that writes other files.
    let gone = matches!(std::fs::symlink_metadata(&from), Err(e) if e.kind() == std::io::ErrorKind::NotFound);
    if !gone && !targets.contains(&to) {
        return Err(invalid(&format!(
            "it would replace {}, which this build does not write; if a build with other outputs was interrupted, remove the journal and build again",
            rename.to
        )));
    }
    Ok((from, to))
}

fn invalid(why: &str) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, why.to_string())
}
