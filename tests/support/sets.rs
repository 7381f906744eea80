//! Manifests of a chosen size and the output sets they generate, for the tests that
//! write, kill and compare whole sets. Each test crate uses a subset, hence the allow.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use connectorgen_core::generate;
use connectorgen_core::render::Outputs;

/// A bundled example manifest.
pub(crate) fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/manifests")
        .join(name)
}

/// The text of a case under tests/cases/.
pub(crate) fn case(path: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/cases")
            .join(path),
    )
    .unwrap()
}

/// Every output file's bytes, read back from `dir`.
pub(crate) fn on_disk(dir: &Path, outputs: &Outputs) -> Vec<Vec<u8>> {
    outputs
        .keys()
        .map(|name| std::fs::read(dir.join(name)).unwrap())
        .collect()
}

/// A valid manifest whose outputs are several megabytes, so that writing them takes a
/// while: `ops` operations with `filler` bytes of description each. `tag` makes two
/// versions differ in every file.
pub(crate) fn large_manifest(ops: usize, filler: usize, tag: &str) -> String {
    let mut yaml = format!(
        "version: 1\nservice:\n  name: Large {tag}\n  version: 1.0.0\n  description: A large connector ({tag}).\n  publicUrl: https://api.large.example\n  dashboardUrl: https://large.example/tokens\noperations:\n"
    );
    let words = "Read-only and free to repeat; it never changes anything. ".repeat(filler / 57 + 1);
    for i in 0..ops {
        yaml.push_str(&format!(
            "  - id: getThing{i}\n    method: get\n    path: /v1/things{i}/{{id}}\n    summary: Read thing {i} ({tag})\n    description: \"{words}\"\n"
        ));
    }
    yaml
}

/// The outputs `yaml` generates (the default target).
pub(crate) fn outputs_of(yaml: &str) -> Outputs {
    generate("connector.yaml", Arc::new(yaml.to_string())).expect("the manifest is valid")
}

/// A folder of manifests the per-manifest tests build, and the folder the documents they
/// name (`openapi:`) are read from.
pub(crate) struct Set {
    /// Names the set in snapshot names and messages.
    pub(crate) group: &'static str,
    pub(crate) manifests: PathBuf,
    pub(crate) documents: PathBuf,
}

impl Set {
    /// The set's manifests, in name order.
    pub(crate) fn files(&self) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(&self.manifests)
            .unwrap_or_else(|e| panic!("{}: {e}", self.manifests.display()))
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
            .collect();
        files.sort();
        files
    }

    /// Options that build `manifest` (one of the set's) as `build` would, reading the
    /// documents it names.
    pub(crate) fn options(&self, manifest: &Path) -> connectorgen_core::Options {
        connectorgen_core::Options {
            manifest_dir: manifest.parent().map(Path::to_path_buf),
            allow_read: vec![self.documents.clone()],
            ..connectorgen_core::Options::default()
        }
    }
}

/// What the project wrote: the bundled examples (on `examples/specs/`) and the valid
/// cases (on `tests/cases/specs/`).
pub(crate) fn bundled() -> Vec<Set> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    vec![
        Set {
            group: "example",
            manifests: root.join("examples/manifests"),
            documents: root.join("examples/specs"),
        },
        Set {
            group: "valid",
            manifests: root.join("tests/cases/valid"),
            documents: root.join("tests/cases/specs"),
        },
    ]
}

/// Every manifest of the sets this test binary checks (`crate::sets()`).
pub(crate) fn every_manifest() -> Vec<(PathBuf, connectorgen_core::Options)> {
    crate::sets()
        .iter()
        .flat_map(|set| {
            set.files()
                .into_iter()
                .map(|file| {
                    let options = set.options(&file);
                    (file, options)
                })
                .collect::<Vec<_>>()
        })
        .collect()
}
