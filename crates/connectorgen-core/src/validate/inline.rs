//! Inline mode: operations written out in the manifest, checked and lowered to OpenAPI.
//!
//! Takes: the raw inline operations (their JSON Schemas are moved out, not copied).
//! Returns (through `Validator`): the model operations and the Operation Objects
//! generated for them, and every problem found. `operation.rs` checks one operation,
//! `http.rs` its parameters, media types and statuses, `schemas.rs` its JSON Schemas,
//! `fragment.rs` its `openapi:` fragment, and `lower.rs` writes the OpenAPI.
//! Must never: read a base document (that is `base/`).

pub(super) mod fragment;
pub(super) mod http;
pub(super) mod operation;
pub(super) mod schemas;

pub(super) use http::refs;
