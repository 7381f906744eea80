//! The exposed part of a base document, checked against the structure OpenAPI defines
//! for its version (3.0, 3.1 or 3.2: `validate/openapi_objects.rs`, the project's own
//! checks written from the specification's field tables), and the one place a
//! `base-invalid` warning is made.
//!
//! Takes: the kept document's top level and the exposed operations, as copied from the
//! base (after the repairs `document.rs` and `v32.rs` make, before any conversion to
//! another version). Returns (through `Validator`): one `base-invalid` warning per
//! problem (at most `MAX_FINDINGS`), pointing into the base file: the outputs keep
//! what the provider wrote, so they may fail validators there; and, for the repairs
//! the other passes make (`base_repaired`), a warning saying which.
//! Must never: check what the outputs leave out (the provider's other operations are
//! not ours to judge), stop the build (the provider's document is the truth for HTTP),
//! or quote a large part of the document in a message.

use serde_json::{Map, Value};

use crate::base::Base;
use crate::diagnostics::{Diagnostic, Finding};
use crate::model::Names as _;
use crate::model::{OpenapiVersion, Operation};
use crate::validate::context::Validator;
use crate::validate::openapi_objects;

/// At most this many findings: a document broken throughout would bury every other
/// finding.
const MAX_FINDINGS: usize = 20;

/// Characters of a message kept (the meta-schema's messages quote the value they refuse).
const MESSAGE_CHARS: usize = 200;

/// How findings name a version.
fn name(version: OpenapiVersion) -> &'static str {
    match version {
        OpenapiVersion::V30 => "3.0",
        OpenapiVersion::V31 => "3.1",
        OpenapiVersion::V32 => "3.2",
    }
}

/// Checks the kept document, with the exposed operations in their path items.
pub(in crate::validate) fn check_base_structure(
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
    for problem in openapi_objects::document(base.version, &document, MAX_FINDINGS) {
        let place = if problem.pointer.is_empty() {
            "the document".to_string()
        } else {
            format!("`{}`", problem.pointer.escape_debug())
        };
        let d = Diagnostic::BaseInvalid {
            version: name(base.version),
            what: format!(
                "at {place}: {}; the outputs keep it as written",
                crate::terminal::clip(&problem.message, MESSAGE_CHARS)
            ),
            span: base.span(&problem.pointer),
            help: "tell the provider; validators may refuse the outputs at the same place"
                .to_string(),
        };
        v.findings.add(Finding::warning(d).in_base());
    }
}

/// A repair of the base document made in the outputs (`repair` says which), for
/// what breaks the structure of its version at `pointer`.
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
