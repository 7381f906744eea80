//! The exposed part of a base document, checked against the official OpenAPI schema of
//! its version (3.0, 3.1 or 3.2, vendored in `src/schemas/`).
//!
//! Takes: the kept document's top level and the exposed operations, as copied from the
//! base (after the repairs `document.rs` and `v32.rs` make, before any conversion to
//! another version). Returns (through `Validator`): one `base-invalid` warning per
//! violation (at most `MAX_FINDINGS`), pointing into the base file: the outputs keep
//! what the provider wrote, so they may fail validators there.
//! Must never: check what the outputs leave out (the provider's other operations are
//! not ours to judge), stop the build (the provider's document is the truth for HTTP),
//! or quote a large part of the document in a message.

use std::sync::OnceLock;

use serde_json::{Map, Value};

use crate::base::Base;
use crate::diagnostics::{Diagnostic, Finding};
use crate::model::Names as _;
use crate::model::{OpenapiVersion, Operation};
use crate::validate::context::Validator;

const OPENAPI_30: &str = include_str!("../../schemas/openapi-3.0.schema.json");
const OPENAPI_32: &str = include_str!("../../schemas/openapi-3.2.schema.json");

/// At most this many findings: one wrong value can fail several branches of a schema,
/// and a document broken throughout would bury every other finding.
const MAX_FINDINGS: usize = 20;

/// Characters of a validator's message kept (it quotes the value it refuses).
const MESSAGE_CHARS: usize = 200;

/// The schema of a version, compiled once per run (and only by a run that needs it).
fn schema(version: OpenapiVersion) -> &'static jsonschema::Validator {
    static V30: OnceLock<jsonschema::Validator> = OnceLock::new();
    static V31: OnceLock<jsonschema::Validator> = OnceLock::new();
    static V32: OnceLock<jsonschema::Validator> = OnceLock::new();
    let (cell, text) = match version {
        OpenapiVersion::V30 => (&V30, OPENAPI_30),
        OpenapiVersion::V31 => (&V31, crate::validate::inline::fragment::OPENAPI_31),
        OpenapiVersion::V32 => (&V32, OPENAPI_32),
    };
    cell.get_or_init(|| {
        let document: Value =
            serde_json::from_str(text).expect("a vendored OpenAPI schema is JSON");
        jsonschema::validator_for(&document).expect("a vendored OpenAPI schema compiles")
    })
}

/// How findings name a version.
fn name(version: OpenapiVersion) -> &'static str {
    match version {
        OpenapiVersion::V30 => "3.0",
        OpenapiVersion::V31 => "3.1",
        OpenapiVersion::V32 => "3.2",
    }
}

/// Checks the kept document, with the exposed operations in their path items.
pub(in crate::validate) fn check_base_schema(
    v: &mut Validator,
    base: &Base,
    root: &Map<String, Value>,
    operations: &[Operation],
) {
    let mut document = root.clone();
    if let Some(Value::Object(paths)) = document.get_mut("paths") {
        for op in operations {
            if let Some(Value::Object(item)) = paths.get_mut(&op.path) {
                item.insert(op.method.as_str().into(), Value::Object(op.http.clone()));
            }
        }
    }
    let document = Value::Object(document);
    for error in schema(base.version)
        .iter_errors(&document)
        .take(MAX_FINDINGS)
    {
        let pointer = error.instance_path().to_string();
        let message = error.to_string();
        let place = if pointer.is_empty() {
            "the document".to_string()
        } else {
            format!("`{}`", pointer.escape_debug())
        };
        let d = Diagnostic::BaseInvalid {
            version: name(base.version),
            what: format!(
                "at {place}: {}; the outputs keep it as written",
                crate::terminal::clip(&message, MESSAGE_CHARS)
            ),
            span: base.span(&pointer),
            help: "tell the provider; validators may refuse the outputs at the same place"
                .to_string(),
        };
        v.findings.add(Finding::warning(d).in_base());
    }
}

/// A repair of the base document made in the outputs (`repair` says which), for
/// what breaks the schema of its version at `pointer`.
pub(in crate::validate) fn base_repaired(
    v: &mut Validator,
    base: &Base,
    pointer: &str,
    what: String,
) {
    let d = Diagnostic::BaseInvalid {
        version: name(base.version),
        what,
        span: base.span(pointer),
        help: "nothing to do: the outputs are repaired without changing any request; tell the provider".to_string(),
    };
    v.findings.add(Finding::warning(d).in_base());
}
