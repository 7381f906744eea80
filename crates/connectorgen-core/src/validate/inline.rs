//! Inline mode: operations written out in the manifest, checked and lowered to OpenAPI.
//!
//! Takes: the raw inline operations (their JSON Schemas are moved out, not copied).
//! Returns: the model operations and the Operation Objects generated for them, then
//! (`lowered`, the lowering stage) the document around them, and every problem found.
//! `service.rs` checks `service:`, `operation.rs` one operation, `http.rs` its
//! parameters, media types and statuses, `schemas.rs` its JSON Schemas, `fragment.rs`
//! its `openapi:` fragment; `../lower.rs` writes the OpenAPI.
//! Must never: read a base document (that is `base/`).

pub(super) mod fragment;
pub(super) mod http;
pub(super) mod operation;
pub(super) mod schemas;
pub(super) mod service;

pub(super) use http::refs;

use super::context::Validator;
use super::document::InlineKeys;
use super::security::operation_credentials;
use crate::diagnostics::Diagnostic;
use crate::lower;
use crate::model::{Auth, Document, Operation, Service};

/// The lowering stage: the document around the checked operations (`lower.rs`), the
/// credential each operation sends, and every fragment's `$ref` resolved against that
/// document (only now does it hold the error responses).
pub(super) fn lowered(
    v: &mut Validator,
    service: &Service,
    mut auth: Auth,
    keys: InlineKeys,
    operations: &[Operation],
) -> (Document, Auth) {
    let around = lower::Around {
        service,
        auth: &auth,
        servers: keys.servers,
        contact: keys.contact,
        license: keys.license,
        tags: keys.tags,
        schemas: std::mem::take(&mut v.settings.shared),
        errors: &v.settings.error_responses,
    };
    let document = lower::document(around, operations);
    // An `openapi:` fragment's `security: []` sends no credential.
    auth.operations = operation_credentials(&document, operations, &auth.parts, &[], &service.name);
    for (reference, at) in std::mem::take(&mut v.fragment_refs) {
        if document.resolve(&reference).is_none() {
            v.findings.push(Diagnostic::UnresolvedRef {
                reference,
                reason: "an `openapi:` fragment may point at `#/components/schemas/<name>` (from `schemas:`) or `#/components/responses/<name>` (the error responses), and nothing else is in the generated document".to_string(),
                span: at,
            });
        }
    }
    (document, auth)
}
