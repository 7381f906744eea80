//! One file replaced in one step: its new bytes go to a temporary file beside it, which
//! is flushed to disk and then renamed over it.
//!
//! Takes: the path of a file to replace (already resolved: a symlink there is replaced,
//! not followed) and its new bytes. Returns: a `Temporary`, written and fsynced
//! (`create`), or written only (`write`) for `sync_all` to flush with the rest of its
//! set at once, that `rename` puts in place; or (`replace`) the whole replacement done.
//! Must never: leave a temporary file behind on an error, give the new file other
//! permissions than the file it replaces (a new file gets 0666 minus the umask, as any
//! program's would), or remove a file it cannot prove it created. Its temporary files,
//! and only they, are named `.<file name>.<process id>.connectorgen-tmp`
//! (`temporary_name`); `is_temporary_of` recognises that name and nothing else, so a
//! user's `.openapi.json.backup` is never taken for one.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// The marker that ends every temporary file name.
const MARKER: &str = "connectorgen-tmp";

/// `.<file name>.<pid>.connectorgen-tmp`: where the new contents of `file_name` are
/// written by process `pid` before they replace it.
pub(crate) fn temporary_name(file_name: &OsStr, pid: u32) -> OsString {
    let mut name = OsString::from(".");
    name.push(file_name);
    name.push(format!(".{pid}.{MARKER}"));
    name
}

/// Whether `candidate` is the name of a temporary file for `file_name` (by any process).
pub(crate) fn is_temporary_of(candidate: &OsStr, file_name: &OsStr) -> bool {
    let (Some(candidate), Some(file_name)) = (candidate.to_str(), file_name.to_str()) else {
        return false;
    };
    candidate
        .strip_prefix('.')
        .and_then(|rest| rest.strip_prefix(file_name))
        .and_then(|rest| rest.strip_prefix('.'))
        .and_then(|rest| rest.strip_suffix(MARKER))
        .and_then(|rest| rest.strip_suffix('.'))
        .is_some_and(|pid| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()))
}

/// A temporary file holding the complete new contents of `target`, flushed to disk
/// (`create`, or `write` then `sync_all`). Dropped without `rename` or `keep`, it is
/// removed.
#[derive(Debug)]
pub(crate) struct Temporary {
    path: PathBuf,
    target: PathBuf,
    armed: bool,
    /// Open until `sync_all` has flushed it.
    unsynced: Option<File>,
}

impl Temporary {
    /// Writes `contents` to a new temporary file beside `target` and fsyncs it. The file
    /// gets `target`'s permissions (and, where allowed, its owner) when `target` exists.
    pub(crate) fn create(target: &Path, contents: &[u8]) -> std::io::Result<Temporary> {
        let mut temporary = Temporary::write(target, contents)?;
        sync_all([&mut temporary])?;
        Ok(temporary)
    }

    /// `create` without the flush: the file is complete but may not be on disk until
    /// `sync_all` is given it. Nothing may name it (a rename, a journal) before then.
    pub(crate) fn write(target: &Path, contents: &[u8]) -> std::io::Result<Temporary> {
        Temporary::write_with(target, |file| file.write_all(contents))
    }

    /// `write`, with the contents written by `contents` into the file as they are made
    /// (an output streamed rather than held whole in memory). When `contents` fails, the
    /// file is removed and its error returned.
    pub(crate) fn write_with(
        target: &Path,
        contents: impl FnOnce(&mut File) -> std::io::Result<()>,
    ) -> std::io::Result<Temporary> {
        let (dir, file_name) = split(target)?;
        let path = dir.join(temporary_name(file_name, std::process::id()));
        let mut file = match create_new(&path) {
            // Only a process with our id can have chosen this name, and ours did not: it
            // was left by a killed process that had the same id.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                std::fs::remove_file(&path)?;
                create_new(&path)?
            }
            other => other?,
        };
        // From here on the file is ours to remove if anything fails.
        let mut temporary = Temporary {
            path,
            target: target.to_path_buf(),
            armed: true,
            unsynced: None,
        };
        if let Ok(meta) = std::fs::metadata(target) {
            copy_owner_and_mode(&file, &meta)?;
        }
        contents(&mut file)?;
        temporary.unsynced = Some(file);
        Ok(temporary)
    }

    /// The temporary file.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The file it will replace.
    pub(crate) fn target(&self) -> &Path {
        &self.target
    }

    /// Renames the temporary file over its target. The folder is not synced: call
    /// `sync_dir` once after the last rename of a set.
    pub(crate) fn rename(mut self) -> std::io::Result<()> {
        // A caller that skipped `sync_all` still renames only what is on disk.
        self.flush()?;
        std::fs::rename(&self.path, &self.target)?;
        self.armed = false;
        Ok(())
    }

    /// Leaves the temporary file on disk when this is dropped (a journal names it).
    /// Infallible on purpose: its caller has already named the file in a journal, after
    /// `sync_all`, so there is nothing left to flush and no error it could act on.
    pub(crate) fn keep(mut self) -> (PathBuf, PathBuf) {
        debug_assert!(self.unsynced.is_none(), "kept before it was flushed");
        self.armed = false;
        (
            std::mem::take(&mut self.path),
            std::mem::take(&mut self.target),
        )
    }
}

impl Temporary {
    /// Flushes the file if `sync_all` has not: a no-op for every caller that keeps the
    /// order, so that a rename or a journal never names a file that is not on disk.
    fn flush(&mut self) -> std::io::Result<()> {
        match self.unsynced.take() {
            Some(file) => file.sync_all(),
            None => Ok(()),
        }
    }
}

impl Drop for Temporary {
    fn drop(&mut self) {
        if self.armed {
            // Best effort on an error path: the error being returned matters more.
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Flushes every temporary file given (contents and metadata: `fsync`) and returns
/// once all are on disk, or with the first error.
///
/// A set is written in full before any of it is flushed, so the file system can write
/// its files out together rather than a file and a journal commit at a time. (Flushing
/// them side by side, a thread each, was measured too: at 10 operations its threads
/// cost more than the waits they saved; docs/dev/PERFORMANCE-diary.md, round six.)
pub(crate) fn sync_all<'a>(
    temporaries: impl IntoIterator<Item = &'a mut Temporary>,
) -> std::io::Result<()> {
    for temporary in temporaries {
        temporary.flush()?;
    }
    Ok(())
}

/// Replaces the file at `path` with `contents` in one step (or creates it), refusing a
/// symbolic link or anything else that is not a regular file.
pub(crate) fn replace(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => {
            return Err(refusal(
                "it is a symbolic link; remove the link or choose another path",
            ));
        }
        Ok(meta) if meta.is_dir() => return Err(refusal("it is a folder")),
        Ok(meta) if !meta.is_file() => {
            return Err(refusal(
                "it is not a regular file (a FIFO, socket or device); remove it",
            ));
        }
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    Temporary::create(path, contents)?.rename()?;
    sync_dir(split(path)?.0)
}

/// Flushes a folder's entries (new names, renames, removals) to disk.
#[cfg(unix)]
pub(crate) fn sync_dir(dir: &Path) -> std::io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Elsewhere a folder cannot be opened to be synced; renames are as durable as the
/// platform makes them.
#[cfg(not(unix))]
pub(crate) fn sync_dir(_dir: &Path) -> std::io::Result<()> {
    Ok(())
}

/// An error the caller shows as the reason a path was refused.
pub(crate) fn refusal(message: &str) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::PermissionDenied, message.to_string())
}

/// The folder and file name of `path`.
fn split(path: &Path) -> std::io::Result<(&Path, &OsStr)> {
    match (path.parent(), path.file_name()) {
        (Some(dir), Some(name)) => Ok((
            if dir.as_os_str().is_empty() {
                Path::new(".")
            } else {
                dir
            },
            name,
        )),
        _ => Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "it does not name a file",
        )),
    }
}

/// A new file, failing if the name exists; 0666 minus the umask on Unix.
fn create_new(path: &Path) -> std::io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o666);
    }
    options.open(path)
}

/// The replaced file's mode, and its owner when we may set it (as root): a build must
/// not turn a 0644 file into a 0600 one, or a user's file into root's.
fn copy_owner_and_mode(file: &File, meta: &std::fs::Metadata) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        // EPERM for anyone but root and the owner is expected; the mode still follows.
        let _ = std::os::unix::fs::fchown(file, Some(meta.uid()), Some(meta.gid()));
    }
    file.set_permissions(meta.permissions())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temporary_names_are_recognised_and_nothing_else() {
        let name = OsStr::new("openapi.json");
        let ours = temporary_name(name, 4242);
        assert_eq!(ours, ".openapi.json.4242.connectorgen-tmp");
        assert!(is_temporary_of(&ours, name));
        for theirs in [
            ".openapi.json.backup",
            ".openapi.json.Ab12Cd",
            ".openapi.json..connectorgen-tmp",
            ".openapi.json.12a.connectorgen-tmp",
            ".openapi.json.12.connectorgen-tmp.old",
            "openapi.json.12.connectorgen-tmp",
            ".llms.txt.12.connectorgen-tmp",
        ] {
            assert!(!is_temporary_of(OsStr::new(theirs), name), "{theirs}");
        }
    }

    /// A file written without `sync_all` is flushed by `rename` itself (in every build,
    /// not only where a debug assertion would catch the caller's slip).
    #[test]
    fn a_rename_flushes_what_was_not_flushed() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("a.txt");
        let temporary = Temporary::write(&target, b"new").unwrap();
        assert!(temporary.unsynced.is_some());
        temporary.rename().unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
    }

    /// A set written unflushed, then flushed, then renamed;
    /// one dropped before it was renamed leaves nothing behind.
    #[test]
    fn a_set_flushed_at_once_is_renamed_whole() {
        let dir = tempfile::tempdir().unwrap();
        let names = ["a.txt", "b.txt", "c.txt"];
        let mut set: Vec<Temporary> = names
            .iter()
            .map(|n| Temporary::write(&dir.path().join(n), n.as_bytes()).unwrap())
            .collect();
        let dropped = Temporary::write(&dir.path().join("d.txt"), b"d").unwrap();
        sync_all(&mut set).unwrap();
        drop(dropped);
        for temporary in set {
            temporary.rename().unwrap();
        }
        sync_dir(dir.path()).unwrap();
        let mut found: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        found.sort();
        assert_eq!(found, names);
        for name in names {
            assert_eq!(
                std::fs::read_to_string(dir.path().join(name)).unwrap(),
                name
            );
        }
    }

    #[cfg(unix)]
    #[test]
    fn replace_keeps_the_mode_and_refuses_links() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.txt");
        std::fs::write(&path, "old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        replace(&path, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o640);

        let link = dir.path().join("link.txt");
        std::os::unix::fs::symlink(&path, &link).unwrap();
        let err = replace(&link, b"through").unwrap_err();
        assert!(err.to_string().contains("symbolic link"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 2, "no temporary file left: {names:?}");
    }
}
