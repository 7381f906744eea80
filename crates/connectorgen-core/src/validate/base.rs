//! Base mode: the safety layer laid over the provider's own OpenAPI document.
//!
//! Takes: the manifest's operations (each naming a base operation) and the parsed
//! `Base`. Returns: the model operations with the provider's Operation Objects, then
//! (`lowered`, the lowering stage) the document around them. `operation.rs` finds each
//! operation and lays the safety layer over it; `service.rs` reads `service:` over the base's
//! `info`; `document.rs` builds the document around the operations; `invalid.rs`
//! checks what is kept against the structure its version defines (`base-invalid`); `v32.rs` (3.2 → 3.1)
//! and `upgrade.rs` (3.0 → 3.1) convert it; `examples.rs` leaves out examples their own
//! schema refuses; `titles.rs` makes distinct the titles generators would give one
//! class name; `servers.rs` decides where each operation is called.
//! Must never: change the HTTP the provider describes, beyond the edits each file names.

pub(super) mod document;
pub(super) mod examples;
pub(super) mod invalid;
pub(super) mod operation;
pub(super) mod servers;
pub(super) mod service;
pub(super) mod titles;
pub(super) mod upgrade;
pub(super) mod v32;

use super::context::Validator;
use crate::base::Base;
use crate::model::{Document, OpenapiVersion, Operation, Service};
use document::base_document;
use examples::drop_invalid_examples;
use invalid::check_base_structure;
use titles::repair_duplicate_titles;
use v32::{downgrade_32, repair_media_type_refs};

/// The lowering stage: the provider's document around the operations (`document.rs`),
/// then its repairs and conversions, in this order: each reads what the one before left.
/// Built even when `service` has problems, so that every problem is reported at once.
pub(super) fn lowered(
    v: &mut Validator,
    base: &Base,
    service: Option<&Service>,
    public_url_given: bool,
    operations: &mut [Operation],
) -> Document {
    let mut document = base_document(v, base, service, public_url_given, operations);
    if base.version != OpenapiVersion::V32 {
        repair_media_type_refs(v, base, &mut document.root, operations);
    }
    // Checked as the provider's version, repairs made, before any conversion.
    check_base_structure(v, base, &document.root, operations);
    if base.version == OpenapiVersion::V32 {
        downgrade_32(v, base, &mut document.root, operations);
    }
    if public_url_given {
        servers::replace(&mut document, operations);
    } else if let Some(warning) = servers::mixed(&document, operations) {
        v.findings.add(warning);
    }
    if base.version == OpenapiVersion::V30 {
        upgrade::to_31(
            &mut document.root,
            operations.iter_mut().map(|op| &mut op.http),
        );
    }
    drop_invalid_examples(v, base, &mut document.root, operations);
    repair_duplicate_titles(v, base, &mut document.root, operations);
    document
}
