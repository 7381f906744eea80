//! The real-document suite: connectorgen against real providers' OpenAPI documents and
//! the official schemas of what it writes, none of which the project carries. They are
//! read from `../shared/provider-docs/project/` (`support/real.rs`), beside the
//! repository, which every developer and CI have and a fresh clone does not: so this
//! target is not part of `cargo test` (`test = false` in Cargo.toml) and
//! `scripts/real-documents.sh` runs it (`.ci/run` does), failing when the folder is
//! missing.
//!
//! - `base_fidelity` and `every_manifest` (the same modules as the integration binary's)
//!   on the manifests in `real_documents/manifests/`, each on a real document;
//! - `properties` and `safety_properties` (the same modules again) with the official
//!   OpenAPI and MCP schemas checking every generated document, and the real documents
//!   as the fixtures whose operations the dangling-reference property exposes;
//! - `outputs`: those manifests' outputs snapshotted, and every set's outputs (the
//!   bundled examples', the valid cases', these) against the official schemas;
//! - `imports`: `import` on every real document, and the import cases on them;
//! - `requests`: the inline `payments` example's requests are Stripe's;
//! - `sarif`: the SARIF reports of `check`, `diff` and `probe` against SARIF 2.1.0.

#[allow(dead_code)]
mod support;

mod base_fidelity;
mod every_manifest;
mod properties;
mod safety_properties;

#[path = "real_documents/imports.rs"]
mod imports;
#[path = "real_documents/outputs.rs"]
mod outputs;
#[path = "real_documents/requests.rs"]
mod requests;
#[path = "real_documents/sarif.rs"]
mod sarif;

/// The manifests `every_manifest` and `base_fidelity` check here: the ones on real
/// documents.
fn sets() -> Vec<support::sets::Set> {
    vec![support::real::set()]
}

/// Among them, at least this many are in base mode (all of them) ...
const BASE_MANIFESTS: usize = 10;
/// ... and more than this many operations spend or run as a job.
const PAID_OR_ASYNC: usize = 10;
/// This binary checks generated documents against the official schemas.
const OFFICIAL_SCHEMAS: bool = true;

/// The base documents the dangling-reference property exposes operations of: the real
/// ones (OpenAI's 3 MB document aside: its manifest builds in `outputs`).
fn property_documents() -> Vec<std::path::PathBuf> {
    [
        "examples/specs/stripe/stripe-payments.trimmed.json",
        "examples/specs/square/square-payments.trimmed.json",
        "examples/specs/paypal/paypal-payouts.trimmed.json",
        "examples/specs/twilio/twilio-messages.trimmed.json",
        "examples/specs/assemblyai/openapi.yml",
    ]
    .iter()
    .map(|file| support::real::file(file))
    .collect()
}
