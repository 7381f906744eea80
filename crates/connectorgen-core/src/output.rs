//! Outputs → disk.
//!
//! Takes: the rendered `Outputs` (and, `write_all_streaming`, outputs each written by its
//! own writer as it is made, never held whole) and an output folder. Returns: nothing,
//! or the one I/O problem (or refusal) that stopped it, naming the file, as one line.
//! Must never: leave a half-written or emptied file, leave a mix of two builds' files
//! without a journal that the next build completes and `check` reports, write outside
//! the output folder, or remove a file it did not create.
//!
//! How:
//! - **All or nothing.** Every file is first written in full to a temporary file beside
//!   its target (`atomic_file`: fsynced, mode of the file it replaces or 0666 minus
//!   umask; flushed together with the journal's contents, then the folder). A failure
//!   while writing them (full disk, I/O error) removes them and leaves every previous
//!   output as it was. Then the journal naming every rename is put in place and the
//!   folder flushed (`journal`), the temporary files are renamed over the outputs one
//!   after the other, the folder is flushed, and the journal is removed. A rename
//!   replaces a file in one step, so a reader sees the old file or the new one, never a
//!   mix of the two. One flush per temporary file and four of folders
//!   (docs/guarantees.md says why each is needed).
//! - **Interrupted sets are finished.** A build killed (or a rename failing) between the
//!   first and the last rename leaves some outputs new and some old, and the journal.
//!   The next build first finishes those renames (the temporary files are complete:
//!   they were flushed before the journal was written), and `check`, which never
//!   writes, says the set was interrupted. The renames follow one another with no
//!   flush between them, but replacing a large file frees its blocks: measured 0.7 to
//!   12 ms from first to last rename for a 3,000-operation manifest, so the journal is
//!   what makes the set whole, not the shortness of that window.
//! - **One build at a time.** The folder is locked (an advisory `flock` on the folder
//!   itself, so no lock file is left behind) from before finishing an interrupted set
//!   until after the journal is removed: two concurrent builds into one folder run one
//!   after the other, and the folder ends up with one build's complete set. Temporary
//!   files of killed builds (`.openapi.json.4242.connectorgen-tmp`: the marker and a
//!   process id) are removed under that lock; no other name is ever removed. On a file
//!   system without advisory locks the build goes ahead unlocked and leaves such files
//!   and journals alone: each file is still replaced whole, but two concurrent builds
//!   may then leave a mixed set.
//! - **Symbolic links.** An output that is a symlink to a file inside the output folder
//!   is followed: the file it points to is replaced (atomically, the same way) and the
//!   link is kept. A symlink that points outside the folder, or to nothing, is refused
//!   before anything is written. The output folder itself may be a symlink: it is what
//!   the user named.
//! - **Refusals.** An existing output that is read-only, a folder, or not a regular file
//!   (FIFO, socket, device) is refused before anything is written. So is an output that
//!   is, or is a symlink to, one of the build's own inputs (`write_all_sparing`: the
//!   manifest, its base document, a template): `build --out .` beside a provider's
//!   `openapi.json` would replace the provider's document, and `build --watch` would
//!   then rebuild from its own output forever.
//! - **One folder, one manifest.** `build` writes, in the same set, a one-line record of
//!   the manifest the folder belongs to (`owner.rs`: `.connectorgen-manifest`, its path
//!   relative to the folder), and refuses before anything is written a folder whose
//!   record names another manifest that still exists, unless forced: two manifests
//!   beside each other share the default `generated/`.
//! - **Test hook.** With `CONNECTORGEN_PAUSE_AT=<point>` in the environment, the process
//!   stops at that point (`temporary:N` after the N-th temporary file, `journal`,
//!   `renamed:N`, `recovered:N` after the N-th rename of an interrupted set), says so on
//!   stderr and waits until its stdin is closed, so that the kill tests can kill it at
//!   every step without guessing at timing. It only ever delays a build.

mod journal;
mod owner;

use std::fs::File;
use std::path::{Path, PathBuf};

use crate::atomic_file::{self, Temporary, refusal};
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

/// The environment variable of the test hook (module doc).
pub(crate) const PAUSE_AT: &str = "CONNECTORGEN_PAUSE_AT";

/// Writes every output into `dir` (created if missing), all or nothing.
pub fn write_all(dir: &Path, outputs: &Outputs) -> Result<(), OutputError> {
    write_all_sparing(dir, outputs, &[], None)
}

/// The manifest a build writes for, so that the folder records it (`owner.rs`).
pub struct Owner<'a> {
    /// The manifest as the user named it.
    pub manifest: &'a Path,
    /// Take the folder over even when it holds another manifest's outputs.
    pub force: bool,
}

/// `write_all`, refusing before anything is written when an output would replace one
/// of `inputs`: the real path (symlinks resolved) of each file the build read, and
/// what it is ("the manifest").
///
/// With an `owner`, the folder's record of its manifest is written in the same set, and
/// a folder whose record names another manifest that still exists is refused (unless
/// `owner.force`) before anything is written.
pub fn write_all_sparing(
    dir: &Path,
    outputs: &Outputs,
    inputs: &[(PathBuf, &str)],
    owner: Option<&Owner>,
) -> Result<(), OutputError> {
    write_all_streaming(dir, outputs, &[], inputs, owner)
}

/// An output written into its temporary file as it is made, never held whole in memory
/// (`write_all_streaming`).
pub struct Stream<'a> {
    /// Its file name, as an `Outputs` key.
    pub name: &'a str,
    /// Writes its contents; it may be called once, and its error is the build's.
    pub write: &'a dyn Fn(&mut dyn std::io::Write) -> std::io::Result<()>,
}

/// What one output of a set holds.
#[derive(Clone, Copy)]
enum Contents<'a> {
    Text(&'a str),
    Stream(&'a dyn Fn(&mut dyn std::io::Write) -> std::io::Result<()>),
}

/// The names of a set of outputs in the order they are written: `outputs`' (by name)
/// with the `streamed` ones in their places. `build` lists them in that order.
pub fn names<'a>(outputs: &'a Outputs, streamed: &[Stream<'a>]) -> Vec<&'a str> {
    let mut names: Vec<&str> = outputs
        .keys()
        .map(String::as_str)
        .chain(streamed.iter().map(|s| s.name))
        .collect();
    names.sort_unstable();
    names
}

/// `write_all_sparing`, with `streamed` outputs besides `outputs` in the same set (same
/// order, same guarantees): each is written into its temporary file by its own writer.
/// An output named in both is a bug (the first one given would win); `streamed` names
/// must not be in `outputs`.
pub fn write_all_streaming(
    dir: &Path,
    outputs: &Outputs,
    streamed: &[Stream],
    inputs: &[(PathBuf, &str)],
    owner: Option<&Owner>,
) -> Result<(), OutputError> {
    std::fs::create_dir_all(dir).map_err(fail("create the output folder", dir))?;
    // Symlink targets are judged against the real folder, whatever path led to it.
    let root = dir
        .canonicalize()
        .map_err(fail("open the output folder", dir))?;
    // Held until the function returns: the folder is ours from finishing an interrupted
    // set to removing our own journal.
    let guard = match lock(&root) {
        Ok(guard) => Some(guard),
        // A file system without advisory locks still gets atomic files, one at a time.
        Err(e) if e.kind() == std::io::ErrorKind::Unsupported => None,
        Err(e) => return Err(fail("lock the output folder", dir)(e)),
    };
    let record = match owner {
        Some(owner) => Some(own(dir, &root, owner)?),
        None => None,
    };
    // Every target is resolved and judged before anything is written, so a refusal
    // leaves the folder untouched.
    let mut targets: Vec<(PathBuf, PathBuf, Contents)> =
        Vec::with_capacity(outputs.len() + streamed.len() + 1);
    let record = record.map(|r| (owner::FILE_NAME.to_string(), r));
    // In `outputs`' order (by name), the streamed ones in their places, then the record.
    let mut set: Vec<(&str, Contents)> = outputs
        .iter()
        .map(|(name, text)| (name.as_str(), Contents::Text(text)))
        .chain(streamed.iter().map(|s| (s.name, Contents::Stream(s.write))))
        .collect();
    set.sort_by_key(|(name, _)| *name);
    set.extend(
        record
            .as_ref()
            .map(|(n, r)| (n.as_str(), Contents::Text(r))),
    );
    for (name, contents) in set {
        let shown = dir.join(name);
        let target = resolve(&root, name).map_err(fail("write", &shown))?;
        if let Some((_, what)) = inputs.iter().find(|(input, _)| *input == target) {
            let how = if target == root.join(name) {
                "it is"
            } else {
                "it is a symbolic link to"
            };
            return Err(OutputError {
                action: "write",
                path: shown,
                source: refusal(&format!(
                    "{how} {what} this build reads; the outputs must go elsewhere: choose another --out"
                )),
            });
        }
        // The journal records where each file goes, as text.
        if target
            .strip_prefix(&root)
            .ok()
            .and_then(Path::to_str)
            .is_none()
        {
            return Err(OutputError {
                action: "write",
                path: shown,
                source: refusal("the file it links to has a name that is not UTF-8 text"),
            });
        }
        if let Some((other, _, _)) = targets.iter().find(|(_, t, _)| *t == target) {
            return Err(OutputError {
                action: "write",
                path: shown,
                source: refusal(&format!(
                    "it is a symbolic link to the same file as {}; give each output its own file",
                    other.display()
                )),
            });
        }
        targets.push((shown, target, contents));
    }
    let journal_shown = dir.join(journal::FILE_NAME);
    // An interrupted set is finished only where this build writes too: a journal that
    // names any other file is refused.
    let written_targets: Vec<PathBuf> = targets.iter().map(|(_, t, _)| t.clone()).collect();
    if guard.is_some() {
        // Unlocked, a journal may belong to a build running right now.
        journal::recover(&root, &written_targets, pause).map_err(fail(
            "finish the interrupted build recorded in",
            &journal_shown,
        ))?;
    }

    // Every folder a file is renamed in: the output folder, and those links lead to.
    let mut folders: Vec<PathBuf> = vec![root.clone()];
    for (_, target, _) in &targets {
        if let Some(parent) = target.parent().filter(|p| !folders.iter().any(|f| f == p)) {
            folders.push(parent.to_path_buf());
        }
    }
    if guard.is_some() {
        // Unlocked, a temporary file may belong to a build running right now.
        remove_stale_temporaries(&root, &targets);
    }

    // Dropping a `Temporary` removes its file, so an early return leaves the folder as
    // it was.
    let mut temporaries = Vec::with_capacity(targets.len());
    for (n, (shown, target, contents)) in targets.iter().enumerate() {
        let temporary = match contents {
            Contents::Text(text) => Temporary::write(target, text.as_bytes()),
            Contents::Stream(write) => Temporary::write_with(target, |file| write(file)),
        }
        .map_err(fail("write", shown))?;
        temporaries.push(temporary);
        pause(&format!("temporary:{}", n + 1));
    }
    let renames: Vec<(PathBuf, PathBuf)> = temporaries
        .iter()
        .map(|t| (t.path().to_path_buf(), t.target().to_path_buf()))
        .collect();
    let mut journal = journal::prepare(&root, &renames).map_err(fail("write", &journal_shown))?;
    // The files and the journal's contents are flushed once all are written (the file
    // system commits them together, not one at a time), then their names, before the
    // journal is put in place: it names the temporary files, so they must be on disk
    // first.
    atomic_file::sync_all(temporaries.iter_mut().chain([&mut journal.temporary]))
        .map_err(fail("write", dir))?;
    for folder in &folders {
        atomic_file::sync_dir(folder).map_err(fail("write", dir))?;
    }
    let written = journal.commit().map_err(fail("write", &journal_shown))?;
    pause("journal");

    // From here on the journal names the temporary files: they stay on disk whatever
    // happens, for the next build to finish the renames.
    for temporary in temporaries {
        temporary.keep();
    }
    for (n, ((from, to), (shown, _, _))) in renames.iter().zip(&targets).enumerate() {
        std::fs::rename(from, to).map_err(fail("replace", shown))?;
        pause(&format!("renamed:{}", n + 1));
    }
    // Every rename on disk before the journal's removal can be.
    for folder in &folders {
        atomic_file::sync_dir(folder).map_err(fail("replace", dir))?;
    }
    written.remove().map_err(fail("remove", &journal_shown))?;
    Ok(())
}

/// The record of `owner`'s manifest for the folder `root` (`dir` as the user named it),
/// or the refusal when the folder holds another manifest's outputs.
fn own(dir: &Path, root: &Path, owner: &Owner) -> Result<String, OutputError> {
    let manifest = owner
        .manifest
        .canonicalize()
        .map_err(fail("read", owner.manifest))?;
    if !owner.force
        && let Some(other) = owner::other_owner(root, &manifest)
    {
        let shown = lexical(&dir.join(&other));
        let mine = owner.manifest.display();
        return Err(OutputError {
            action: "write to",
            path: dir.to_path_buf(),
            source: refusal(&format!(
                "it holds the outputs of another manifest, {}; building {mine} there would replace them. \
                 Give each manifest its own folder: `connectorgen build {mine} --out <folder>` \
                 (or --force to make this folder {mine}'s)",
                shown.display()
            )),
        });
    }
    Ok(owner::record(root, &manifest))
}

/// `a/generated/../b.yaml` → `a/b.yaml`, for messages (no file system access: the
/// path is only shown).
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            std::path::Component::ParentDir
                if matches!(
                    out.components().next_back(),
                    Some(std::path::Component::Normal(_))
                ) =>
            {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The journal in `dir` when a build into it was interrupted between its first and last
/// rename: its files may be a mix of two builds until the next build finishes the set.
/// Reads only the journal and writes nothing (`check` calls it).
pub(crate) fn interrupted(dir: &Path) -> Option<PathBuf> {
    journal::present(dir).then(|| dir.join(journal::FILE_NAME))
}

/// The test hook (module doc): stops at `point` when `CONNECTORGEN_PAUSE_AT` names it.
fn pause(point: &str) {
    if std::env::var_os(PAUSE_AT).is_some_and(|at| at == point) {
        use std::io::{Read as _, Write as _};
        let _ = writeln!(std::io::stderr(), "connectorgen: paused at {point}");
        let _ = std::io::stdin().read_to_end(&mut Vec::new());
    }
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
    let Ok(real) = path.canonicalize() else {
        return Err(refusal(&format!(
            "it is a symbolic link to {}, which does not exist; remove the link",
            link.display()
        )));
    };
    if !real.starts_with(root) {
        return Err(refusal(&format!(
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
        return Err(refusal("it is a folder"));
    }
    if !meta.is_file() {
        return Err(refusal(
            "it is not a regular file (a FIFO, socket or device); remove it",
        ));
    }
    if meta.permissions().readonly() {
        return Err(refusal(
            "it is read-only; make it writable (chmod u+w) to let connectorgen replace it",
        ));
    }
    Ok(())
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

/// Removes temporary files of killed builds beside each target: only names
/// `atomic_file::is_temporary_of` recognises (`.openapi.json.4242.connectorgen-tmp`),
/// never a user's `.openapi.json.backup`. Called under the folder lock, after an
/// interrupted set was finished, so no running build owns them. Best effort: a leftover
/// that cannot be removed harms nothing.
fn remove_stale_temporaries(root: &Path, targets: &[(PathBuf, PathBuf, Contents)]) {
    let mut names: Vec<(&Path, &std::ffi::OsStr)> =
        vec![(root, std::ffi::OsStr::new(journal::FILE_NAME))];
    for (_, target, _) in targets {
        if let (Some(dir), Some(name)) = (target.parent(), target.file_name()) {
            names.push((dir, name));
        }
    }
    let mut folders: Vec<&Path> = names.iter().map(|(d, _)| *d).collect();
    folders.sort();
    folders.dedup();
    for folder in folders {
        let Ok(entries) = std::fs::read_dir(folder) else {
            continue;
        };
        for entry in entries.flatten() {
            let file_name = entry.file_name();
            let stale = names
                .iter()
                .any(|(d, n)| *d == folder && atomic_file::is_temporary_of(&file_name, n));
            if stale && entry.file_type().is_ok_and(|t| t.is_file()) {
                let _ = std::fs::remove_file(entry.path());
            }
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

    /// A streamed output lands in its place in the set, with its writer's bytes; `names`
    /// lists the set in write order.
    #[test]
    fn a_streamed_output_is_written_in_its_place() {
        let dir = tempfile::tempdir().unwrap();
        write_all(dir.path(), &outputs("v1")).unwrap();
        let mut held = outputs("v2");
        held.remove("llms.txt");
        let write = |w: &mut dyn std::io::Write| {
            // In pieces, as serde_json writes.
            w.write_all(b"llms.txt ")?;
            w.write_all(b"v2\n")
        };
        let streamed = [Stream {
            name: "llms.txt",
            write: &write,
        }];
        write_all_streaming(dir.path(), &held, &streamed, &[], None).unwrap();
        for name in ["descriptions.md", "llms.txt", "openapi.json"] {
            assert_eq!(read(dir.path(), name), format!("{name} v2\n"));
        }
        assert_eq!(
            names(dir.path()),
            ["descriptions.md", "llms.txt", "openapi.json"]
        );
        assert_eq!(
            super::names(&held, &streamed),
            ["descriptions.md", "llms.txt", "openapi.json"]
        );
    }

    /// A streamed output whose writer fails (a full disk) leaves every previous output
    /// as it was and no temporary file.
    #[test]
    fn a_failing_stream_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        write_all(dir.path(), &outputs("v1")).unwrap();
        let mut held = outputs("v2");
        held.remove("llms.txt");
        let write = |w: &mut dyn std::io::Write| {
            w.write_all(b"llms.txt half")?;
            Err(std::io::Error::other("disk full"))
        };
        let streamed = [Stream {
            name: "llms.txt",
            write: &write,
        }];
        let err = write_all_streaming(dir.path(), &held, &streamed, &[], None).unwrap_err();
        assert!(err.to_string().ends_with("llms.txt: disk full"), "{err}");
        for name in ["descriptions.md", "llms.txt", "openapi.json"] {
            assert_eq!(read(dir.path(), name), format!("{name} v1\n"));
        }
        assert_eq!(
            names(dir.path()),
            ["descriptions.md", "llms.txt", "openapi.json"]
        );
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

    /// Only names with connectorgen's marker and a process id are temporary files; a
    /// user's `.openapi.json.backup` or `.llms.txt.drafts` (same length of suffix as the
    /// random names of atomic-write-file, which this used to match) is theirs.
    #[test]
    fn stale_temporaries_are_removed_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        for stale in [
            ".openapi.json.4242.connectorgen-tmp",
            ".llms.txt.1.connectorgen-tmp",
            "..connectorgen-journal.json.77.connectorgen-tmp",
        ] {
            std::fs::write(dir.path().join(stale), "half").unwrap();
        }
        let kept = [
            ".llms.txt.drafts",
            ".openapi.json.Ab12Cd",
            ".openapi.json.backup",
            ".other.txt.1.connectorgen-tmp",
            "notes.md",
        ];
        for name in kept {
            std::fs::write(dir.path().join(name), "mine").unwrap();
        }
        write_all(dir.path(), &outputs("v1")).unwrap();
        let mut expected: Vec<&str> = kept.to_vec();
        expected.extend(["descriptions.md", "llms.txt", "openapi.json"]);
        expected.sort_unstable();
        assert_eq!(names(dir.path()), expected);
        for name in kept {
            assert_eq!(read(dir.path(), name), "mine");
        }
    }

    /// What a build killed between its renames leaves: a journal, some temporary files
    /// already renamed (gone) and some not.
    fn interrupted_set(dir: &Path) {
        write_all(dir, &outputs("v1")).unwrap();
        std::fs::write(dir.join(".llms.txt.9.connectorgen-tmp"), "llms.txt v2\n").unwrap();
        std::fs::write(
            dir.join(".openapi.json.9.connectorgen-tmp"),
            "openapi.json v2\n",
        )
        .unwrap();
        std::fs::write(dir.join("descriptions.md"), "descriptions.md v2\n").unwrap();
        let renames: Vec<(PathBuf, PathBuf)> = ["descriptions.md", "llms.txt", "openapi.json"]
            .iter()
            .map(|n| {
                let root = dir.canonicalize().unwrap();
                (root.join(format!(".{n}.9.connectorgen-tmp")), root.join(n))
            })
            .collect();
        journal::write(&dir.canonicalize().unwrap(), &renames).unwrap();
    }

    #[test]
    fn an_interrupted_set_is_reported_then_finished_by_the_next_build() {
        let dir = tempfile::tempdir().unwrap();
        interrupted_set(dir.path());
        assert!(interrupted(dir.path()).is_some());
        // The next build finishes the interrupted one before writing its own set; a
        // failure in its own set then leaves the finished one, not the mix.
        let temporary = dir.path().join(".openapi.json.9.connectorgen-tmp");
        std::fs::remove_file(&temporary).unwrap();
        std::fs::create_dir(&temporary).unwrap();
        let err = write_all(dir.path(), &outputs("v3")).unwrap_err();
        assert!(
            err.to_string()
                .contains("could not finish the interrupted build"),
            "{err}"
        );
        std::fs::remove_dir(&temporary).unwrap();
        write_all(dir.path(), &outputs("v3")).unwrap();
        assert_eq!(
            names(dir.path()),
            ["descriptions.md", "llms.txt", "openapi.json"]
        );
        assert_eq!(read(dir.path(), "openapi.json"), "openapi.json v3\n");
        assert!(interrupted(dir.path()).is_none());

        // Finishing alone (the renames of the journal, nothing else).
        interrupted_set(dir.path());
        let root = dir.path().canonicalize().unwrap();
        let targets: Vec<PathBuf> = ["descriptions.md", "llms.txt", "openapi.json"]
            .iter()
            .map(|n| root.join(n))
            .collect();
        assert!(journal::recover(&root, &targets, |_| {}).unwrap());
        for name in ["descriptions.md", "llms.txt", "openapi.json"] {
            assert_eq!(read(dir.path(), name), format!("{name} v2\n"));
        }
        assert_eq!(
            names(dir.path()),
            ["descriptions.md", "llms.txt", "openapi.json"]
        );
        assert!(
            !journal::recover(&root, &targets, |_| {}).unwrap(),
            "nothing left to do"
        );
    }

    /// A crash between a build's last rename and the journal's removal reaching the disk
    /// leaves the journal with every temporary file it names gone: that set is whole,
    /// and `check` must not call it interrupted. One that still names a temporary file,
    /// or that is not a journal of ours, is.
    #[test]
    fn a_journal_whose_renames_are_all_done_is_not_an_interrupted_set() {
        let dir = tempfile::tempdir().unwrap();
        write_all(dir.path(), &outputs("v1")).unwrap();
        let root = dir.path().canonicalize().unwrap();
        let renames: Vec<(PathBuf, PathBuf)> = ["llms.txt", "openapi.json"]
            .iter()
            .map(|n| (root.join(format!(".{n}.9.connectorgen-tmp")), root.join(n)))
            .collect();
        journal::write(&root, &renames).unwrap();
        assert!(interrupted(dir.path()).is_none(), "every rename was done");

        std::fs::write(&renames[1].0, "openapi.json v2\n").unwrap();
        assert!(interrupted(dir.path()).is_some(), "one rename is left");
        std::fs::remove_file(&renames[1].0).unwrap();
        std::fs::write(root.join(journal::FILE_NAME), "{}").unwrap();
        assert!(interrupted(dir.path()).is_some(), "not a journal of ours");

        // The next build removes the journal that came back, and writes its own set.
        journal::write(&root, &renames).unwrap();
        write_all(dir.path(), &outputs("v2")).unwrap();
        assert_eq!(
            names(dir.path()),
            ["descriptions.md", "llms.txt", "openapi.json"]
        );
        assert_eq!(read(dir.path(), "llms.txt"), "llms.txt v2\n");
    }

    /// Such a finished journal names nothing left to rename, so the next build removes it
    /// whatever files it writes itself: one with fewer targets (here only openapi.json)
    /// is not refused as if it would replace files it does not write.
    #[test]
    fn a_finished_journal_does_not_stop_a_build_with_other_outputs() {
        let dir = tempfile::tempdir().unwrap();
        write_all(dir.path(), &outputs("v1")).unwrap();
        let root = dir.path().canonicalize().unwrap();
        let renames: Vec<(PathBuf, PathBuf)> = ["descriptions.md", "llms.txt", "openapi.json"]
            .iter()
            .map(|n| (root.join(format!(".{n}.9.connectorgen-tmp")), root.join(n)))
            .collect();
        journal::write(&root, &renames).unwrap();
        let only: Outputs = [("openapi.json".to_string(), "openapi.json v2\n".to_string())]
            .into_iter()
            .collect();
        write_all(dir.path(), &only).unwrap();
        assert_eq!(read(dir.path(), "openapi.json"), "openapi.json v2\n");
        assert_eq!(read(dir.path(), "llms.txt"), "llms.txt v1\n");
        assert!(!root.join(journal::FILE_NAME).exists());
        assert!(interrupted(dir.path()).is_none());
    }

    /// A journal can come with the folder (from a repository): one that names anything
    /// but our temporary files, beside their targets, inside the folder, renames nothing.
    #[test]
    fn a_planted_journal_renames_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        write_all(&out, &outputs("v1")).unwrap();
        std::fs::write(out.join("secret.txt"), "keep").unwrap();
        std::fs::write(dir.path().join(".llms.txt.1.connectorgen-tmp"), "outside").unwrap();
        for renames in [
            r#"[{"from": "secret.txt", "to": "llms.txt"}]"#,
            r#"[{"from": "../.llms.txt.1.connectorgen-tmp", "to": "../llms.txt"}]"#,
            r#"[{"from": "/etc/.passwd.1.connectorgen-tmp", "to": "/etc/passwd"}]"#,
            r#"[{"from": "sub/.llms.txt.1.connectorgen-tmp", "to": "llms.txt"}]"#,
        ] {
            let text = format!(
                r#"{{"journal": "connectorgen renames", "version": 1, "renames": {renames}}}"#
            );
            std::fs::write(out.join(journal::FILE_NAME), text).unwrap();
            let err = write_all(&out, &outputs("v2")).unwrap_err();
            assert!(
                err.to_string()
                    .contains("not one of connectorgen's temporary files"),
                "{err}"
            );
        }
        // Our temporary file over its own file, but not one this build writes.
        std::fs::write(out.join(".secret.txt.1.connectorgen-tmp"), "planted").unwrap();
        let text = r#"{"journal": "connectorgen renames", "version": 1, "renames": [{"from": ".secret.txt.1.connectorgen-tmp", "to": "secret.txt"}]}"#;
        std::fs::write(out.join(journal::FILE_NAME), text).unwrap();
        let err = write_all(&out, &outputs("v2")).unwrap_err();
        assert!(
            err.to_string().contains("this build does not write"),
            "{err}"
        );
        std::fs::write(out.join(journal::FILE_NAME), "{}").unwrap();
        let err = write_all(&out, &outputs("v2")).unwrap_err();
        assert!(
            err.to_string().contains("not a journal connectorgen wrote"),
            "{err}"
        );
        assert_eq!(read(&out, "llms.txt"), "llms.txt v1\n");
        assert_eq!(read(&out, "secret.txt"), "keep");
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

    /// A replaced file keeps its mode; a new one gets what any program's would (0666
    /// minus the umask), not 0600 (tempfile) or a symlink's 0777.
    #[cfg(unix)]
    #[test]
    fn modes_follow_the_replaced_file_or_the_umask() {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        let dir = tempfile::tempdir().unwrap();
        let reference = dir.path().join("reference");
        std::fs::File::create(&reference).unwrap();
        write_all(dir.path(), &outputs("v1")).unwrap();
        assert_eq!(mode(&dir.path().join("llms.txt")), mode(&reference));
        let llms = dir.path().join("llms.txt");
        std::fs::set_permissions(&llms, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_all(dir.path(), &outputs("v2")).unwrap();
        assert_eq!(read(dir.path(), "llms.txt"), "llms.txt v2\n");
        assert_eq!(mode(&llms), 0o640);
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
