//! The prose templates: the embedded defaults, a user's override folder, and export.
//!
//! Takes: a folder path (for `--templates DIR` / `templates:` in the manifest, or for
//! `templates export`). Returns: the template sources by name, defaults first and the
//! folder's files over them, or a one-line error naming the file; and the `Limits` that
//! bound what templates may do in one run.
//! Must never: accept a file name it does not know (a typo would silently keep the
//! default), overwrite an existing file on export without `force`, or write through a
//! symbolic link on export (even with `force`).
//!
//! Why limits: a templates folder comes with the manifest, from a pull request, and a
//! template is a program (`{% for %}` in `{% for %}`, `"x" * 10**9`, a string doubled
//! through `namespace`). Without a bound, `build` or `check` in CI would run until
//! killed and take the machine's memory with it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::diagnostics::suggest;
use crate::input::{Scope, What, read_named};

/// One template: its file name and its embedded source (what it receives:
/// docs/templates.md).
pub(crate) struct Template {
    pub name: &'static str,
    pub source: &'static str,
}

/// Every template connectorgen renders, in the order they are documented.
pub(crate) const TEMPLATES: [Template; 4] = [
    Template {
        name: "description.j2",
        source: include_str!("../templates/description.j2"),
    },
    Template {
        name: "description.compact.j2",
        source: include_str!("../templates/description.compact.j2"),
    },
    Template {
        name: "llms.txt.j2",
        source: include_str!("../templates/llms.txt.j2"),
    },
    Template {
        name: "descriptions.md.j2",
        source: include_str!("../templates/descriptions.md.j2"),
    },
];

/// What the templates may do in one run; `render` stops with an error naming the
/// template and the limit when either is reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// minijinja fuel for the whole run, shared by every render in order: one unit per
    /// instruction, and one per 64 bytes of text created or processed. So it bounds both
    /// time and memory (a string is only built if the fuel left can pay for it).
    pub fuel: u64,
    /// The largest text a single render may produce (a file, or one operation's
    /// description), in bytes.
    pub max_output: u64,
}

/// Fuel every run gets, whatever the manifest's size: far more than the default
/// templates need for the bundled examples (under 1,000), small enough that a runaway
/// template stops within a second and about 200 MB (docs/guarantees.md).
pub(crate) const BASE_FUEL: u64 = 4_000_000;

/// Fuel added per this many bytes of manifest. The default templates use 0.13 to 0.15
/// fuel per manifest byte on the synthetic bench manifests (13.3 M for 100,000
/// operations, 89 MB, every target) and less on text-heavy ones, so half a fuel per byte
/// leaves them more than three times what they need at any size, while the memory a
/// runaway template can take stays in proportion to the manifest.
pub const MANIFEST_BYTES_PER_FUEL: u64 = 2;

/// The default `--max-template-output`: the largest file the default templates write for
/// 100,000 operations is 30 MB (descriptions.md).
pub(crate) const DEFAULT_MAX_OUTPUT: u64 = 256 << 20;

impl Limits {
    /// The limits for a manifest of `manifest_bytes` bytes: `fuel` and `max_output`
    /// when given (`--template-fuel`, `--max-template-output`), the defaults otherwise.
    pub fn for_manifest(manifest_bytes: usize, fuel: Option<u64>, max_output: Option<u64>) -> Self {
        let scaled = manifest_bytes as u64 / MANIFEST_BYTES_PER_FUEL;
        Limits {
            fuel: fuel.unwrap_or(BASE_FUEL.saturating_add(scaled)),
            max_output: max_output.unwrap_or(DEFAULT_MAX_OUTPUT),
        }
    }
}

/// Template name → source, as a run will use them.
pub(crate) type Sources = BTreeMap<String, String>;

/// The embedded defaults.
pub fn defaults() -> Sources {
    TEMPLATES
        .iter()
        .map(|t| (t.name.to_string(), t.source.to_string()))
        .collect()
}

/// A folder of overrides could not be used.
#[derive(Debug, thiserror::Error)]
pub enum TemplateDirError {
    #[error("cannot read templates from {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{} is not a template connectorgen knows; {help}", path.display())]
    Unknown { path: PathBuf, help: String },
    /// The template file itself could not be read (not UTF-8, too large, not a file).
    #[error(transparent)]
    Input(#[from] crate::input::InputError),
}

/// No template needs more; the bound keeps a link to `/dev/zero` from eating memory.
const MAX_TEMPLATE_BYTES: u64 = 1 << 20;

/// The defaults, with every `*.j2` file of `dir` over the template of the same name.
/// Other files (a README, editor backups) are left alone. The folder and each template
/// must be inside `scope` once symlinks are resolved (`input::read_named`): a template
/// linked to `/proc/self/environ` would put the environment into llms.txt.
pub fn load_dir(dir: &Path, scope: &Scope) -> Result<Sources, TemplateDirError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| TemplateDirError::Io { path, source }
    };
    let mut sources = defaults();
    let shown = crate::input::normalize(dir);
    scope.check(dir, &shown.display().to_string(), What::TemplatesFolder)?;
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(io(dir))?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()
        .map_err(io(dir))?;
    entries.sort();
    for path in entries {
        if path.extension().is_none_or(|e| e != "j2") {
            continue;
        }
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if !sources.contains_key(&name) {
            let help = suggest(&name, TEMPLATES.iter().map(|t| t.name));
            return Err(TemplateDirError::Unknown { path, help });
        }
        // The same careful read as a manifest (no hanging on a FIFO, bounded, UTF-8),
        // and only where the manifest may point.
        let shown = crate::input::normalize(&path).display().to_string();
        let text = read_named(&path, &shown, scope, MAX_TEMPLATE_BYTES, What::Template)?;
        sources.insert(name, text);
    }
    Ok(sources)
}

/// Writes the default templates into `dir` (created if missing) as a starting point.
/// Returns the files written. Refuses, before writing any, if one exists and not
/// `force`, or if one is a symbolic link (it may lead anywhere). Each file is replaced
/// atomically, with the mode of the file it replaces or 0666 minus the umask.
pub fn export(dir: &Path, force: bool) -> Result<Vec<PathBuf>, TemplateDirError> {
    let paths: Vec<PathBuf> = TEMPLATES.iter().map(|t| dir.join(t.name)).collect();
    for path in &paths {
        let Ok(meta) = path.symlink_metadata() else {
            continue;
        };
        let why = if meta.file_type().is_symlink() {
            "it is a symbolic link; remove the link or export into another folder"
        } else if !force {
            "it already exists (use --force to overwrite)"
        } else {
            continue;
        };
        return Err(TemplateDirError::Io {
            path: path.clone(),
            source: std::io::Error::new(std::io::ErrorKind::AlreadyExists, why),
        });
    }
    std::fs::create_dir_all(dir).map_err(|source| TemplateDirError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    for (t, path) in TEMPLATES.iter().zip(&paths) {
        crate::atomic_file::replace(path, t.source.as_bytes()).map_err(|source| {
            TemplateDirError::Io {
                path: path.clone(),
                source,
            }
        })?;
    }
    Ok(paths)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `templates export --force` used to write through a symlink (`std::fs::write`
    /// follows it, even a dangling one, to wherever it points); now any link is refused
    /// before a file is written.
    #[cfg(unix)]
    #[test]
    fn export_refuses_symlinks_even_with_force() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside.txt");
        std::fs::write(&outside, "keep").unwrap();
        let tpl = dir.path().join("tpl");
        std::fs::create_dir(&tpl).unwrap();
        std::os::unix::fs::symlink(&outside, tpl.join("llms.txt.j2")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("new.txt"), tpl.join("description.j2")).unwrap();
        for force in [false, true] {
            let err = export(&tpl, force).unwrap_err();
            assert!(err.to_string().contains("is a symbolic link"), "{err}");
        }
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "keep");
        assert!(
            !dir.path().join("new.txt").exists(),
            "a dangling link is not followed"
        );
        let mut names: Vec<_> = std::fs::read_dir(&tpl)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        names.sort();
        assert_eq!(names, ["description.j2", "llms.txt.j2"], "nothing written");

        std::fs::remove_file(tpl.join("llms.txt.j2")).unwrap();
        std::fs::remove_file(tpl.join("description.j2")).unwrap();
        assert_eq!(export(&tpl, false).unwrap().len(), TEMPLATES.len());
        assert!(export(&tpl, false).is_err(), "exists");
        assert_eq!(export(&tpl, true).unwrap().len(), TEMPLATES.len());
    }
}
