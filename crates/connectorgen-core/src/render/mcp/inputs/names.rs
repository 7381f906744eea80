//! The names of a tool's arguments, and the findings about the manifest's `args:` and
//! `fixed:` keys.
//!
//! Takes: the operation (its `args:` and `fixed:`) and the inputs gathered so far.
//! Returns: each input's argument name (an `args:` choice as it is, the others by
//! `crate::arguments::assign`); an argument's description noting the HTTP name it is
//! sent as; findings for a key that names no input and for two inputs named alike.
//! Must never: give two arguments one name silently, or a name outside what
//! `crate::arguments` allows.

use std::collections::BTreeMap;

use serde_json::Value;

use super::super::mapping::Location;
use super::Input;
use super::parameters::parameters;
use crate::arguments;
use crate::diagnostics::{Diagnostic, Finding};
use crate::model::{Document, Operation};

/// Applies `args:`: each key names the first input (in argument order) of that HTTP
/// name; a key that names none is an error.
pub(super) fn choose(op: &Operation, inputs: &mut [Input], findings: &mut Vec<Finding>) {
    for arg in &op.args {
        match inputs
            .iter_mut()
            .find(|i| i.http.as_deref() == Some(arg.input.as_str()) && !i.idempotency)
        {
            Some(input) => {
                input.chosen = Some(arg.name.clone());
                input.chosen_at = Some(arg.span);
            }
            None => findings.push(Finding::error(Diagnostic::UnknownMcpInput {
                id: op.id.clone(),
                key: "args",
                name: arg.input.clone(),
                what: "parameter or body property",
                span: arg.input_span,
                help: unknown_help(
                    &arg.input,
                    inputs.iter().filter_map(|i| i.http.as_deref()).collect(),
                    "a parameter or top-level body property",
                ),
            })),
        }
    }
    // Two inputs the author (or connectorgen, for `idempotencyKey`) named alike.
    let mut seen: BTreeMap<&str, &Input> = BTreeMap::new();
    for input in inputs.iter() {
        let Some(name) = input.chosen.as_deref() else {
            continue;
        };
        if let Some(first) = seen.get(name) {
            findings.push(Finding::error(Diagnostic::McpInputCollision {
                id: op.id.clone(),
                name: name.to_string(),
                first: described(first),
                second: described(input),
                span: input.chosen_at.or(first.chosen_at).unwrap_or(op.origin.id),
            }));
        } else {
            seen.insert(name, input);
        }
    }
}

/// A `fixed:` key that named no parameter and no body field (`fixed_used[i]` is false
/// for `op.fixed[i]`) is an error.
pub(super) fn unknown_fixed(
    doc: &Document,
    op: &Operation,
    fixed_used: &[bool],
    body_fields: &[String],
    findings: &mut Vec<Finding>,
) {
    for (f, used) in op.fixed.iter().zip(fixed_used) {
        if !used {
            let mut names: Vec<&str> = parameters(doc, op)
                .iter()
                .filter_map(|p| p.get("name").and_then(Value::as_str))
                .collect();
            names.extend(body_fields.iter().map(String::as_str));
            findings.push(Finding::error(Diagnostic::UnknownMcpInput {
                id: op.id.clone(),
                key: "fixed",
                name: f.name.clone(),
                what: "parameter",
                span: f.span,
                help: unknown_help(
                    &f.name,
                    names,
                    "a path, query, header or cookie parameter, or a top-level field of a JSON or form body",
                ),
            }));
        }
    }
}

/// `` `name` (a query parameter) ``, for messages.
fn described(input: &Input) -> String {
    match &input.http {
        Some(name) => format!("`{name}` ({})", input.from),
        None => input.from.to_string(),
    }
}

/// The argument names: chosen ones as they are, the others by `arguments::assign`.
pub(super) fn assign(inputs: &[Input]) -> Vec<String> {
    let wanted: Vec<(Option<&str>, &str, &str)> = inputs
        .iter()
        .map(|i| {
            (
                i.chosen.as_deref(),
                i.http.as_deref().unwrap_or("body"),
                i.location.as_str(),
            )
        })
        .collect();
    arguments::assign(&wanted)
}

fn unknown_help(name: &str, names: Vec<&str>, what: &str) -> String {
    let close = names
        .iter()
        .filter(|n| strsim::jaro_winkler(name, n) > 0.8)
        .max_by(|a, b| strsim::jaro_winkler(name, a).total_cmp(&strsim::jaro_winkler(name, b)));
    match close {
        Some(n) => format!("did you mean `{n}`? The key is the HTTP name of {what}"),
        // `what` carries its article ("a parameter …"): "has no a parameter" is not English.
        None if names.is_empty() => {
            "the operation has no parameters and no top-level body fields to name".to_string()
        }
        None => format!(
            "the key is the HTTP name of {what}: one of {}",
            names
                .iter()
                .take(8)
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// Adds to an argument's description the HTTP name it is sent as, when its argument
/// name differs.
pub(super) fn note_http_name(schema: &mut Value, location: Location, http: &str) {
    let Value::Object(map) = schema else {
        return;
    };
    let what = match location {
        Location::Body => "body property",
        Location::Path => "path parameter",
        Location::Query => "query parameter",
        Location::Header => "header",
        Location::Cookie => "cookie",
    };
    let quoted = serde_json::to_string(http).unwrap_or_default();
    let note = format!("Sent as the {what} {quoted}.");
    let text = match map.get("description").and_then(Value::as_str) {
        Some(d) if !d.trim().is_empty() => format!("{} {note}", d.trim_end()),
        _ => note,
    };
    map.insert("description".into(), Value::String(text));
}
