//! Which manifest an output folder belongs to: a one-line record, so that a build of
//! another manifest into the same folder (two manifests beside each other share the
//! default `generated/`) is refused instead of silently replacing the first one's files.
//!
//! Takes: the output folder (canonical) and the manifest being built. Returns: the
//! record's text for this build (`record`), written with the outputs as part of the same
//! all-or-nothing set, and the manifest an existing record names when it is another
//! manifest that still exists (`other_owner`).
//! Must never: refuse because of a record it cannot read or that names a file that is
//! gone (the folder is then taken over), or hold an absolute path: the record is the
//! manifest's path relative to the folder (`../connector.yaml`), so a repository that
//! commits its outputs checks out anywhere with the record still true.
//!
//! Format: `.connectorgen-manifest` in the output folder, one line: the path with `/`
//! between components, then a newline. `check` ignores it (it compares generated files
//! only), so it is never drift.

use std::path::{Component, Path, PathBuf};

/// The record's file name in the output folder.
pub(crate) const FILE_NAME: &str = ".connectorgen-manifest";

/// No record of ours comes near this: a larger file is not one.
const MAX_BYTES: u64 = 4096;

/// The record for `manifest` (canonical) written into `root` (canonical).
pub(super) fn record(root: &Path, manifest: &Path) -> String {
    format!("{}\n", relative(root, manifest))
}

/// The manifest, other than `manifest` (canonical), that the record in `root` names and
/// that still exists, as a path relative to `root` and as its canonical path.
pub(super) fn other_owner(root: &Path, manifest: &Path) -> Option<String> {
    let path = root.join(FILE_NAME);
    let meta = std::fs::symlink_metadata(&path).ok()?;
    if !meta.is_file() || meta.len() > MAX_BYTES {
        return None;
    }
    let text = std::fs::read_to_string(&path).ok()?;
    let named = text.lines().next()?.trim();
    if named.is_empty() {
        return None;
    }
    let theirs = root.join(named).canonicalize().ok()?;
    (theirs.is_file() && theirs != manifest).then(|| named.to_string())
}

/// `to` relative to the folder `from` (both canonical), with `/` between components.
fn relative(from: &Path, to: &Path) -> String {
    let from: Vec<Component> = from.components().collect();
    let to: Vec<Component> = to.components().collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    if common == 0 {
        // Nothing shared (another drive): only the absolute path says where it is.
        return to_slashes(&to.iter().collect::<PathBuf>());
    }
    let mut parts: Vec<String> = vec!["..".to_string(); from.len() - common];
    parts.extend(
        to[common..]
            .iter()
            .map(|c| c.as_os_str().to_string_lossy().into_owned()),
    );
    parts.join("/")
}

fn to_slashes(path: &Path) -> String {
    path.to_string_lossy().replace('\\', "/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_record_is_relative_to_the_folder() {
        let root = Path::new("/work/app/generated");
        assert_eq!(
            relative(root, Path::new("/work/app/connector.yaml")),
            "../connector.yaml"
        );
        assert_eq!(
            relative(root, Path::new("/work/app/generated/c.yaml")),
            "c.yaml"
        );
        assert_eq!(
            relative(Path::new("/work/out/a/b"), Path::new("/work/app/c.yaml")),
            "../../../app/c.yaml"
        );
    }
}
