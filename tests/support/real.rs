//! The real providers' documents and the official schemas, which the project does not
//! carry: they are in `../shared/provider-docs/project/` (beside the repository, at the
//! paths they once had in it), which every developer and CI have and a fresh clone does
//! not. Only the real-document suite (`tests/real_documents.rs`, run by
//! `scripts/real-documents.sh`) uses this module; a missing folder fails it loudly.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use super::sets::Set;

/// `../shared/provider-docs/project/`, or a panic saying what is missing.
pub(crate) fn root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/provider-docs/project");
    assert!(
        root.join("examples/specs").is_dir(),
        "the real-document suite reads the providers' documents from {}, which is missing: \
         it needs the team's `shared` folder beside the repository (see CONTRIBUTING.md)",
        root.display()
    );
    root
}

/// A file of `../shared/provider-docs/project/`, by its path there (as it once was in
/// the repository).
pub(crate) fn file(path: &str) -> PathBuf {
    let file = root().join(path);
    assert!(file.exists(), "{} is missing", file.display());
    file
}

/// The manifests on real documents (`tests/real_documents/manifests/`, each naming its
/// document by a path that runs up out of the repository into `../shared/`).
pub(crate) fn set() -> Set {
    Set {
        group: "real",
        manifests: Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/real_documents/manifests"),
        documents: root().join("examples/specs"),
    }
}
