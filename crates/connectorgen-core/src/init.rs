//! `connectorgen init`: a commented starter manifest.
//!
//! Takes: a service name and a path. Returns: the starter text (`starter`), or writes it
//! (`write`). The starter has a free read, a read-only list, and a paid async job with
//! its poll target; it builds cleanly and passes `check` with no warnings (tested).
//! Must never: overwrite an existing file unless asked to, write through a symbolic
//! link (even with `force`: the link may lead anywhere), create a file with other
//! permissions than any program's (0666 minus the umask), or let the name break the
//! YAML (it is written as a quoted string).

use std::path::Path;

const STARTER: &str = include_str!("../templates/init.yaml");

/// The starter manifest for a service called `name`.
pub(crate) fn starter(name: &str) -> String {
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

/// Writes the starter to `path` (atomically), refusing to replace a file unless `force`
/// and refusing a symbolic link always.
pub fn write(path: &Path, name: &str, force: bool) -> Result<(), InitError> {
    if !force && path.symlink_metadata().is_ok() {
        return Err(InitError::Exists(path.to_path_buf()));
    }
    crate::atomic_file::replace(path, starter(name).as_bytes()).map_err(|source| InitError::Io {
        path: path.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `init --force` over a symlink used to replace the link with a mode-0777 file (the
    /// link's own mode); now it refuses, and leaves the link and its target alone.
    #[cfg(unix)]
    #[test]
    fn force_refuses_a_symlink_and_new_files_get_the_umask_mode() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("elsewhere.yaml");
        std::fs::write(&target, "keep").unwrap();
        let link = dir.path().join("connector.yaml");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let err = write(&link, "Acme", true).unwrap_err();
        assert!(err.to_string().contains("is a symbolic link"), "{err}");
        assert!(link.symlink_metadata().unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");

        let reference = dir.path().join("reference");
        std::fs::File::create(&reference).unwrap();
        let fresh = dir.path().join("fresh.yaml");
        write(&fresh, "Acme", false).unwrap();
        write(&fresh, "Acme", true).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&fresh), mode(&reference));
    }
}
