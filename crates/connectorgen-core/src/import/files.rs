//! Where `import` writes, and how the manifest names the document from there.
//!
//! Takes: the document's path and the manifest's. Returns: whether the manifest may be
//! written, the `openapi:` path, and the write itself.
//! Must never: replace or follow a symlink, overwrite a file without `--force` or the
//! document even with it, or leave a half-written manifest (the write is atomic).

use std::path::{Component, Path, PathBuf};

use crate::atomic_file::{Temporary, sync_dir};

use super::ImportError;

/// Whether `out` may be written: refuses a symlink or anything but a regular file
/// always, an existing file without `force`, and the document itself even with it.
pub(super) fn refuse_to_replace(out: &Path, spec: &Path, force: bool) -> Result<(), ImportError> {
    match out.symlink_metadata() {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(ImportError::Io {
            path: out.to_path_buf(),
            source,
        }),
        Ok(m) if m.file_type().is_symlink() => Err(ImportError::Symlink(out.to_path_buf())),
        Ok(m) if !m.is_file() => Err(ImportError::NotAFile(out.to_path_buf())),
        Ok(_) if !force => Err(ImportError::Exists(out.to_path_buf())),
        Ok(_) => match (out.canonicalize(), spec.canonicalize()) {
            (Ok(a), Ok(b)) if a == b => Err(ImportError::IsTheSpec(out.to_path_buf())),
            _ => Ok(()),
        },
    }
}

/// Creates the folders `out` is to be written in, when they do not exist yet.
pub(super) fn create_parent(out: &Path) -> Result<(), ImportError> {
    match out.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => {
            std::fs::create_dir_all(dir).map_err(|source| ImportError::Io {
                path: dir.to_path_buf(),
                source,
            })
        }
        _ => Ok(()),
    }
}

/// Writes `text` to `out` through a temporary file renamed over it, checking again
/// just before the rename that nothing has appeared there meanwhile.
pub(super) fn write(out: &Path, spec: &Path, force: bool, text: &str) -> Result<(), ImportError> {
    let io = |source| ImportError::Io {
        path: out.to_path_buf(),
        source,
    };
    let file = Temporary::create(out, text.as_bytes()).map_err(io)?;
    // On refusal the temporary file is dropped, which removes it.
    refuse_to_replace(out, spec, force)?;
    file.rename().map_err(io)?;
    let dir = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    sync_dir(dir).map_err(io)
}

/// `spec` as `openapi:` must name it from the manifest at `out`: relative to the
/// manifest's folder, with `/` between the parts. The path as typed is kept when it
/// leads to the same file (`../specs/api.json`); when symlinks make it lead elsewhere,
/// the one between the real locations is used; across drives, the absolute path.
pub(super) fn relative_path(spec: &Path, out: &Path) -> Result<String, ImportError> {
    let dir = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| ImportError::Io { path, source }
    };
    let real_dir = dir.canonicalize().map_err(io(out))?;
    let real_spec = spec.canonicalize().map_err(io(spec))?;
    let typed = match (std::path::absolute(dir), std::path::absolute(spec)) {
        (Ok(d), Ok(s)) => between(&crate::input::normalize(&d), &crate::input::normalize(&s)),
        _ => None,
    };
    let leads_there = |rel: &PathBuf| {
        real_dir
            .join(rel)
            .canonicalize()
            .is_ok_and(|p| p == real_spec)
    };
    let path = typed
        .filter(leads_there)
        .or_else(|| between(&real_dir, &real_spec))
        .unwrap_or_else(|| real_spec.clone());
    let parts: Option<Vec<&str>> = if path.is_absolute() {
        path.to_str().map(|s| vec![s])
    } else {
        path.components().map(|c| c.as_os_str().to_str()).collect()
    };
    parts
        .map(|p| p.join("/"))
        .ok_or_else(|| ImportError::NotUtf8Path(spec.to_path_buf()))
}

/// The relative path from folder `from` to `to` (both absolute, without `.`/`..`), or
/// None when they share no folder but the root (`../../../usr/share/api.json` would
/// only be longer than the absolute path, and break when either moves).
fn between(from: &Path, to: &Path) -> Option<PathBuf> {
    let from: Vec<Component> = from.components().collect();
    let to: Vec<Component> = to.components().collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    if !to[..common]
        .iter()
        .any(|c| matches!(c, Component::Normal(_)))
    {
        return None;
    }
    let mut out = PathBuf::new();
    for _ in common..from.len() {
        out.push("..");
    }
    for part in &to[common..] {
        out.push(part);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_between_folders() {
        let rel = |a: &str, b: &str| between(Path::new(a), Path::new(b));
        assert_eq!(
            rel("/w/m", "/w/specs/a.json"),
            Some("../specs/a.json".into())
        );
        assert_eq!(rel("/w", "/w/a.json"), Some("a.json".into()));
        assert_eq!(rel("/w/a/b", "/w/x.json"), Some("../../x.json".into()));
        assert_eq!(rel("/tmp/x", "/w/a.json"), None, "only the root in common");
    }
}
