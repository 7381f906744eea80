//! The one integration test binary: every test module of `tests/` (and the runtime's
//! against loopback servers), so the 2-core machine compiles and links one binary
//! instead of seventeen. Run one module with `cargo test --test integration cases::`.

mod support;

mod authoring;
mod base_fidelity;
mod bounded_templates;
mod cases;
mod check;
mod cli;
mod diff;
mod every_manifest;
mod fast_path;
mod guarantees;
mod import;
mod nothing_lost;
mod openai_budget;
mod openapi30_meaning;
mod properties;
mod reference_docs;
mod reporting;
mod rules_doc;
#[cfg(feature = "runtime")]
mod runtime;
mod safety_properties;
mod schema;
mod semantics;
mod watch;

/// The manifests `every_manifest` and `base_fidelity` check in this binary: what the
/// project wrote (the real providers' documents are the real-document suite's,
/// `tests/real_documents.rs`).
fn sets() -> Vec<support::sets::Set> {
    support::sets::bundled()
}

/// Among them, at least this many are in base mode ...
const BASE_MANIFESTS: usize = 4;
/// ... and more than this many operations spend or run as a job.
const PAID_OR_ASYNC: usize = 20;
/// The official schemas are not in the repository: the real-document suite checks
/// generated documents against them.
const OFFICIAL_SCHEMAS: bool = false;

/// The base documents the dangling-reference property (`properties`) exposes
/// operations of: documents the project wrote.
fn property_documents() -> Vec<std::path::PathBuf> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    [
        "tests/cases/specs/jobs.yaml",
        "tests/cases/specs/kept-resolves.yaml",
        "tests/cases/specs/openapi-3.2.yaml",
        "tests/cases/specs/parameter-named-schema.yaml",
        "tests/cases/specs/retry-keys.yaml",
    ]
    .iter()
    .map(|file| root.join(file))
    .collect()
}
