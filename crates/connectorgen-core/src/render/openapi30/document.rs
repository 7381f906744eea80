//! The parts of openapi.3.0.json outside schemas that 3.1 writes otherwise: the
//! license, operations without `responses`, `info.summary`, `jsonSchemaDialect`,
//! `components.pathItems`, `mutualTLS` security schemes, keys beside a `$ref`.
//!
//! Takes: the 3.1 document being rewritten, the connector and the base document (for
//! the places findings point at). Returns: the document changed in place, and a finding
//! for each change that is not exact. Must never: change an operation's request, or leave
//! out anything without a finding.

use serde_json::{Value, json};

use crate::base::Base;
use crate::diagnostics::{Diagnostic, Finding, Severity, Source, Span};
use crate::model::{Connector, escape};

/// The 3.1 constructs outside schemas: `info.license.identifier` becomes the SPDX page
/// as `url`; an operation without `responses` gets a `default` one; `info.summary`,
/// `jsonSchemaDialect` and `components.pathItems`, which 3.0 has no place for, are left
/// out. Each but the first with a warning; a `mutualTLS` security scheme is an error.
pub(super) fn document_level(
    connector: &Connector,
    base: Option<&Base>,
    doc: &mut Value,
    findings: &mut Vec<Finding>,
) {
    // 3.1 lets an operation leave out `responses`; 3.0 requires them. A `default`
    // response that says nothing of the answer promises nothing the provider does not.
    for op in &connector.operations {
        if !op.http.contains_key("responses") {
            if let Some(written) = doc
                .pointer_mut(&op.pointer())
                .and_then(Value::as_object_mut)
            {
                written.insert(
                    "responses".into(),
                    json!({ "default": { "description": NO_RESPONSES } }),
                );
            }
            let mut finding = document_finding(
                connector,
                base,
                &op.pointer(),
                "an operation without `responses` (3.0 requires them)".to_string(),
                Some("writes a `default` response that describes no content"),
            );
            if let Diagnostic::Openapi30Approximated { id, .. } = &mut finding.diagnostic {
                id.clone_from(&op.id);
            }
            findings.push(finding);
        }
    }
    let mut report = |pointer: &str, construct: String, what: Option<&str>| {
        findings.push(document_finding(connector, base, pointer, construct, what));
    };
    if let Some(license) = doc
        .pointer_mut("/info/license")
        .and_then(Value::as_object_mut)
        && let Some(identifier) = license.remove("identifier")
        && !license.contains_key("url")
    {
        let id = identifier.as_str().unwrap_or_default();
        license.insert(
            "url".into(),
            json!(format!("https://spdx.org/licenses/{id}.html")),
        );
    }
    if let Some(info) = doc.get_mut("info").and_then(Value::as_object_mut)
        && info.remove("summary").is_some()
    {
        report(
            "/info/summary",
            "`info.summary`".to_string(),
            Some("leaves it out"),
        );
    }
    if let Some(root) = doc.as_object_mut()
        && root.remove("jsonSchemaDialect").is_some()
    {
        report(
            "/jsonSchemaDialect",
            "`jsonSchemaDialect`".to_string(),
            Some("leaves it out"),
        );
    }
    // Unreached today (base mode keeps no callback, and reads no path item by
    // reference), and nothing a request of an exposed operation needs.
    if let Some(components) = doc.get_mut("components").and_then(Value::as_object_mut)
        && components.shift_remove("pathItems").is_some()
    {
        report(
            "/components/pathItems",
            "`components.pathItems`".to_string(),
            Some("leaves it out"),
        );
    }
    let mutual: Vec<String> = doc
        .pointer("/components/securitySchemes")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter(|(_, scheme)| scheme.get("type").and_then(Value::as_str) == Some("mutualTLS"))
        .map(|(name, _)| name.clone())
        .collect();
    for name in mutual {
        report(
            &format!("/components/securitySchemes/{}", escape(&name)),
            "a `mutualTLS` security scheme".to_string(),
            None,
        );
    }
}

/// The description of the `default` response written for an operation without any.
const NO_RESPONSES: &str = "The provider's document describes no response.";

/// A Reference Object outside schemas with keys beside `$ref` (3.1 allows `summary`
/// and `description` there; 3.0 allows nothing): the extra keys are dropped with a
/// warning. A path item's `$ref` is one of its fields in 3.0 too, so it is not one.
pub(super) fn reference_siblings(
    connector: &Connector,
    base: Option<&Base>,
    doc: &mut Value,
    pointer: &str,
    findings: &mut Vec<Finding>,
) {
    let Some(map) = doc.pointer_mut(pointer).and_then(Value::as_object_mut) else {
        return;
    };
    if map.len() < 2 {
        return;
    }
    let dropped: Vec<String> = map
        .keys()
        .filter(|k| *k != "$ref")
        .map(|k| format!("`{k}`"))
        .collect();
    map.retain(|k, _| k == "$ref");
    findings.push(document_finding(
        connector,
        base,
        pointer,
        format!("{} beside `$ref` in a reference", dropped.join(", ")),
        Some("leaves them out"),
    ));
}

/// A finding about a construct outside schemas, at its place: written the nearest way
/// (`what`: how), or, with none, an error.
fn document_finding(
    connector: &Connector,
    base: Option<&Base>,
    pointer: &str,
    construct: String,
    what: Option<&str>,
) -> Finding {
    let (id, span, source) = if let Some(base) = base {
        ("document".to_string(), base.span(pointer), Source::Base)
    } else {
        let first = connector.operations.first();
        let span = first.map_or(Span::from((0, 0)), |op| op.origin.entry);
        ("document".to_string(), span, Source::Manifest)
    };
    let pointer = format!("`{pointer}`");
    let (diagnostic, severity) = match what {
        Some(what) => (
            Diagnostic::Openapi30Approximated {
                id,
                pointer,
                construct,
                what: what.to_string(),
                span,
            },
            Severity::Warning,
        ),
        None => (
            Diagnostic::Openapi30Unsupported {
                id,
                pointer,
                construct,
                span,
            },
            Severity::Error,
        ),
    };
    Finding {
        diagnostic,
        severity,
        source,
    }
}
