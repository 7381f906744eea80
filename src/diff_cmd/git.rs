//! The old side of `diff --base REF`: the manifest, and the base document it names, as
//! they are at a git revision.
//!
//! Takes: the revision, the manifest's path in the working tree, and the shared flags.
//! Returns: the side, or `None` when the revision has no such manifest (it is new:
//! everything in the working tree's is new), or `Failure` when git cannot be run or does
//! not know the revision. Reads objects with `git cat-file` in the manifest's folder
//! (paths `REF:./name`, relative to it), bounded by `--max-bytes` before reading.
//! Must never: check anything out, touch the working tree or the index, or read a file
//! of the working tree for the old side (the analysis runs sandboxed: only what git
//! gave it).
//!
//! Not yet read through git: a `templates:` folder (the old side is then refused with a
//! message) and a base document split over several files (its `$ref`s to other files do
//! not resolve).

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use connectorgen_core::diff::Side;

use crate::{Failure, Source, Ui};

/// The manifest at `rev`, analysed; `None` when `rev` has no file at its path.
pub(super) fn side(
    ui: &Ui,
    rev: &str,
    manifest: &Path,
    source: &Source,
) -> Result<Option<Side>, Failure> {
    if rev.starts_with('-') || rev.contains(':') || rev.is_empty() {
        return Err(Failure::Fatal(format!(
            "--base {rev}: not a git revision (a branch, tag or commit)"
        )));
    }
    let dir = match manifest.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    let git = Git { dir: &dir, rev };
    git.verify()?;
    let file = manifest
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let Some(text) = git.read(&file, source.max_bytes)? else {
        return Ok(None);
    };
    let name = format!("{rev}:{}", manifest.display());
    let mut options = source.options(manifest, &mut Vec::new())?;
    // Nothing of the working tree is read for the old side: what the manifest names
    // comes from git too.
    options.sandbox = true;
    options.allow_read.clear();
    if let Ok(raw) = connectorgen_core::manifest::parse(&text) {
        if raw.value.templates.is_some() && source.templates.is_none() {
            return Err(Failure::Fatal(format!(
                "{name} names a `templates:` folder, which diff cannot read from a git revision yet; pass --templates DIR to use one folder for both sides"
            )));
        }
        if let Some(path) = &raw.value.openapi {
            let Some(doc) = git.read(&path.value, source.max_bytes)? else {
                return Err(Failure::Fatal(format!(
                    "{name} names the base document `{}`, which {rev} does not have",
                    path.value
                )));
            };
            options.base_document = Some((format!("{rev}:{}", path.value), Arc::new(doc)));
        }
    }
    super::analysed(ui, &name, text, &options).map(Some)
}

struct Git<'a> {
    dir: &'a Path,
    rev: &'a str,
}

impl Git<'_> {
    fn git(&self) -> Command {
        let mut cmd = Command::new("git");
        cmd.arg("-C").arg(self.dir);
        cmd
    }

    /// That the revision names a commit.
    fn verify(&self) -> Result<(), Failure> {
        let out = self
            .git()
            .args(["rev-parse", "--verify", "--quiet"])
            .arg(format!("{}^{{commit}}", self.rev))
            .output()
            .map_err(|e| Failure::Fatal(format!("cannot run git: {e}")))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(Failure::Fatal(format!(
                "--base {}: git knows no such commit in {}",
                self.rev,
                self.dir.display()
            )))
        }
    }

    /// The file at `path` (relative to the manifest's folder) in the revision, or
    /// `None` when the revision has none there.
    fn read(&self, path: &str, max_bytes: u64) -> Result<Option<String>, Failure> {
        let object = format!("{}:./{path}", self.rev);
        let size = self
            .git()
            .args(["cat-file", "-s"])
            .arg(&object)
            .output()
            .map_err(|e| Failure::Fatal(format!("cannot run git: {e}")))?;
        if !size.status.success() {
            return Ok(None);
        }
        let bytes: u64 = String::from_utf8_lossy(&size.stdout)
            .trim()
            .parse()
            .unwrap_or(u64::MAX);
        if bytes > max_bytes {
            return Err(Failure::Fatal(format!(
                "{object} is {bytes} bytes, over --max-bytes {max_bytes}"
            )));
        }
        let out = self
            .git()
            .args(["cat-file", "blob"])
            .arg(&object)
            .output()
            .map_err(|e| Failure::Fatal(format!("cannot run git: {e}")))?;
        if !out.status.success() {
            return Err(Failure::Fatal(format!(
                "git cat-file blob {object}: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        String::from_utf8(out.stdout)
            .map(Some)
            .map_err(|_| Failure::Fatal(format!("{object} is not UTF-8 text")))
    }
}
