//! Outputs → disk.
//!
//! Takes: the rendered `Outputs` and an output folder. Returns: nothing, or the one I/O
//! problem (or refusal) that stopped it, naming the file, as one line.
//! Must never: leave a half-written or emptied file, mix the files of two builds, or
//! write outside the output folder.
//!
//! How:
//! - **All or nothing.** Every file is first written in full to a temporary file beside
//!   its target (fsynced, mode of the file it replaces or 0666 minus umask), and only
//!   when all of them are written are they renamed over the old ones. A failure while
//!   writing (full disk, I/O error) removes the temporary files and leaves every previous
//!   output as it was. A rename replaces a file in one step, so a reader or a killed
//!   process sees the old file or the new one, never a mix of the two.
//! - **One build at a time.** The folder is locked (an advisory `flock` on the folder
//!   itself, so no lock file is left behind) from before the first temporary file until
//!   after the last rename: two concurrent builds into one folder run one after the
//!   other, and the folder ends up with one build's complete set. Temporary files left
//!   by a build that was killed (`.openapi.json.Ab12Cd`) are removed under that lock. On
//!   a file system without advisory locks the build goes ahead unlocked: each file is
//!   still replaced whole, but two concurrent builds may then leave a mixed set.
//! - **Symbolic links.** An output that is a symlink to a file inside the output folder
//!   is followed: the file it points to is replaced (atomically, the same way) and the
//!   link is kept. A symlink that points outside the folder, or to nothing, is refused
//!   before anything is written. The output folder itself may be a symlink: it is what
//!   the user named.
//! - **Refusals.** An existing output that is read-only, a folder, or not a regular file
//!   (FIFO, socket, device) is refused before anything is written.
//!
//! What remains: if the process is killed, or a rename fails, between the first and the
//! last rename (three renames, microseconds), the folder holds some new and some old
//! files, each complete; the next build brings them in line.

use std::fs::File;
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
    std::fs::create_dir_all(dir).map_err(fail("create the output folder", dir))?;
    // Symlink targets are judged against the real folder, whatever path led to it.
    let root = dir
        .canonicalize()
        .map_err(fail("open the output folder", dir))?;
    // Held until the function returns: the folder is ours from the first temporary
    // file to the last rename.
    let guard = match lock(&root) {
        Ok(guard) => Some(guard),
        // A file system without advisory locks still gets atomic files, one at a time.
        Err(e) if e.kind() == std::io::ErrorKind::Unsupported => None,
        Err(e) => return Err(fail("lock the output folder", dir)(e)),
    };
    if guard.is_some() {
        // Unlocked, a temporary file may belong to a build running right now.
        remove_stale_temporaries(&root, outputs);
    }

    // Every target is resolved and judged before anything is written, so a refusal
    // leaves the folder untouched.
    let mut targets: Vec<(PathBuf, PathBuf, &String)> = Vec::with_capacity(outputs.len());
    for (name, contents) in outputs {
        let shown = dir.join(name);
        let target = resolve(&root, name).map_err(fail("write", &shown))?;
        if let Some((other, _, _)) = targets.iter().find(|(_, t, _)| *t == target) {
            return Err(OutputError {
                action: "write",
                path: shown,
                source: refusal(format!(
                    "it is a symbolic link to the same file as {}; give each output its own file",
                    other.display()
                )),
            });
        }
        targets.push((shown, target, contents));
    }

    let mut pending = Vec::with_capacity(targets.len());
    for (shown, target, contents) in targets {
        let mut file = AtomicWriteFile::open(&target).map_err(fail("write", &shown))?;
        file.write_all(contents.as_bytes())
            .map_err(fail("write", &shown))?;
        pending.push((shown, file));
    }
    // Dropping an uncommitted AtomicWriteFile removes its temporary file, so an early
    // return above leaves the folder as it was.
    for (shown, file) in pending {
        file.commit().map_err(fail("replace", &shown))?;
    }
    Ok(())
}

/// `map_err` helper: the action that failed and the path as the user named it.
fn fail(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> OutputError {
    let path = path.to_path_buf();
    move |source| OutputError {
        action,
        path,
        source,
    }
}

/// Where the contents of output `name` go: `root/name`, or the file a symlink there
/// points to when that file is inside `root`. Refuses anything else.
fn resolve(root: &Path, name: &str) -> std::io::Result<PathBuf> {
    let path = root.join(name);
    let meta = match std::fs::symlink_metadata(&path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(path),
        Err(e) => return Err(e),
    };
    if !meta.file_type().is_symlink() {
        check_replaceable(&meta)?;
        return Ok(path);
    }
    let link = std::fs::read_link(&path)?;
    let real = match path.canonicalize() {
        Ok(real) => real,
        Err(_) => {
            return Err(refusal(format!(
                "it is a symbolic link to {}, which does not exist; remove the link",
                link.display()
            )));
        }
    };
    if !real.starts_with(root) {
        return Err(refusal(format!(
            "it is a symbolic link to {}, outside the output folder; remove the link or choose another --out",
            real.display()
        )));
    }
    check_replaceable(&std::fs::metadata(&real)?)?;
    Ok(real)
}

/// An existing output may be replaced only if it is a regular file that is writable:
/// a read-only file says "do not overwrite", and a rename would not ask.
fn check_replaceable(meta: &std::fs::Metadata) -> std::io::Result<()> {
    if meta.is_dir() {
        return Err(refusal("it is a folder".to_string()));
    }
    if !meta.is_file() {
        return Err(refusal(
            "it is not a regular file (a FIFO, socket or device); remove it".to_string(),
        ));
    }
    if meta.permissions().readonly() {
        return Err(refusal(
            "it is read-only; make it writable (chmod u+w) to let connectorgen replace it"
                .to_string(),
        ));
    }
    Ok(())
}

fn refusal(message: String) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::PermissionDenied, message)
}

/// An exclusive advisory lock on the output folder, held until the returned file is
/// dropped. Blocks while another build holds it.
// `File::lock` is Rust 1.89; serde-saphyr 2.2 already requires 1.89, so that is the
// crate's real minimum whatever Cargo.toml's `rust-version` still says.
#[clippy::msrv = "1.89"]
#[cfg(unix)]
fn lock(root: &Path) -> std::io::Result<File> {
    // A folder can be opened read-only and flock()ed on Unix: no lock file to leave behind.
    let folder = File::open(root)?;
    folder.lock()?;
    Ok(folder)
}

/// Elsewhere a folder cannot be opened as a file: lock a file inside it instead.
#[clippy::msrv = "1.89"]
#[cfg(not(unix))]
fn lock(root: &Path) -> std::io::Result<File> {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(root.join(".connectorgen.lock"))?;
    file.lock()?;
    Ok(file)
}

/// Removes temporary files of killed builds: atomic-write-file names them
/// `.<output name>.<6 letters or digits>`. Called under the folder lock, so no running
/// build owns them. Best effort: a leftover that cannot be removed harms nothing.
fn remove_stale_temporaries(root: &Path, outputs: &Outputs) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let Some(file_name) = file_name.to_str() else {
            continue;
        };
        let stale = outputs.keys().any(|name| {
            file_name
                .strip_prefix('.')
                .and_then(|rest| rest.strip_prefix(name.as_str()))
                .and_then(|rest| rest.strip_prefix('.'))
                .is_some_and(|suffix| {
                    suffix.len() == 6 && suffix.bytes().all(|b| b.is_ascii_alphanumeric())
                })
        });
        if stale && entry.file_type().is_ok_and(|t| t.is_file()) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outputs(version: &str) -> Outputs {
        ["descriptions.md", "llms.txt", "openapi.json"]
            .into_iter()
            .map(|name| (name.to_string(), format!("{name} {version}\n")))
            .collect()
    }

    fn read(dir: &Path, name: &str) -> String {
        std::fs::read_to_string(dir.join(name)).unwrap()
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn writes_and_replaces_leaving_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("a/b");
        write_all(&out, &outputs("v1")).unwrap();
        write_all(&out, &outputs("v2")).unwrap();
        assert_eq!(read(&out, "llms.txt"), "llms.txt v2\n");
        assert_eq!(names(&out), ["descriptions.md", "llms.txt", "openapi.json"]);
    }

    #[test]
    fn a_refusal_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        write_all(dir.path(), &outputs("v1")).unwrap();
        // The last output in write order is refused: the first two must not change.
        std::fs::remove_file(dir.path().join("openapi.json")).unwrap();
        std::fs::create_dir(dir.path().join("openapi.json")).unwrap();
        let err = write_all(dir.path(), &outputs("v2")).unwrap_err();
        assert!(
            err.to_string().ends_with("openapi.json: it is a folder"),
            "{err}"
        );
        assert_eq!(read(dir.path(), "descriptions.md"), "descriptions.md v1\n");
        assert_eq!(read(dir.path(), "llms.txt"), "llms.txt v1\n");
        assert_eq!(
            names(dir.path()),
            ["descriptions.md", "llms.txt", "openapi.json"]
        );
    }

    #[test]
    fn stale_temporaries_are_removed_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        for stale in [".openapi.json.Ab12Cd", ".llms.txt.000000"] {
            std::fs::write(dir.path().join(stale), "half").unwrap();
        }
        for kept in [".openapi.json.toolong1", ".other.txt.Ab12Cd", "notes.md"] {
            std::fs::write(dir.path().join(kept), "mine").unwrap();
        }
        write_all(dir.path(), &outputs("v1")).unwrap();
        assert_eq!(
            names(dir.path()),
            [
                ".openapi.json.toolong1",
                ".other.txt.Ab12Cd",
                "descriptions.md",
                "llms.txt",
                "notes.md",
                "openapi.json"
            ]
        );
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_inside_are_followed_outside_refused() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        std::fs::create_dir_all(out.join("site")).unwrap();
        std::fs::write(out.join("site/llms.txt"), "old").unwrap();
        symlink("site/llms.txt", out.join("llms.txt")).unwrap();
        write_all(&out, &outputs("v1")).unwrap();
        assert!(
            std::fs::symlink_metadata(out.join("llms.txt"))
                .unwrap()
                .file_type()
                .is_symlink(),
            "the link is kept"
        );
        assert_eq!(read(&out, "site/llms.txt"), "llms.txt v1\n");

        let secret = dir.path().join("secret.txt");
        std::fs::write(&secret, "keep me").unwrap();
        std::fs::remove_file(out.join("openapi.json")).unwrap();
        symlink(&secret, out.join("openapi.json")).unwrap();
        let err = write_all(&out, &outputs("v2")).unwrap_err();
        assert!(
            err.to_string().contains("outside the output folder"),
            "{err}"
        );
        assert_eq!(std::fs::read_to_string(&secret).unwrap(), "keep me");
        assert_eq!(
            read(&out, "site/llms.txt"),
            "llms.txt v1\n",
            "nothing written"
        );

        std::fs::remove_file(out.join("openapi.json")).unwrap();
        symlink("nowhere.json", out.join("openapi.json")).unwrap();
        let err = write_all(&out, &outputs("v2")).unwrap_err();
        assert!(err.to_string().contains("which does not exist"), "{err}");

        std::fs::remove_file(out.join("openapi.json")).unwrap();
        symlink("site/llms.txt", out.join("openapi.json")).unwrap();
        let err = write_all(&out, &outputs("v2")).unwrap_err();
        assert!(err.to_string().contains("same file as"), "{err}");
    }

    #[test]
    fn read_only_outputs_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        write_all(dir.path(), &outputs("v1")).unwrap();
        let path = dir.path().join("llms.txt");
        let mut perms = std::fs::metadata(&path).unwrap().permissions();
        perms.set_readonly(true);
        std::fs::set_permissions(&path, perms).unwrap();
        let err = write_all(dir.path(), &outputs("v2")).unwrap_err();
        assert!(
            err.to_string().contains("llms.txt: it is read-only"),
            "{err}"
        );
        assert_eq!(read(dir.path(), "descriptions.md"), "descriptions.md v1\n");
    }
}
