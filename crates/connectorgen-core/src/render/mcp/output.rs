//! `mcp.output: summary`: a tool's `outputSchema` trimmed to what the safety text and
//! the poll read of its answers.
//!
//! Takes: the tool's whole output schema (an object schema with its own `$defs`, as
//! `output_schema` writes it) and the property paths to keep. Returns: a schema of the
//! answer's top-level properties on those paths (into an envelope, `job.id`, the
//! envelope with the one property), each with the `type` the whole schema gives it, and
//! `required` where the whole schema's root requires them. Must never: refuse an answer
//! the whole schema accepts — `serve` checks answers against what the tool declares, so
//! the summary only leaves out (no `additionalProperties`, no narrower type); nor point
//! at `$defs` it does not carry (it has no `$ref`).

use serde_json::{Map, Value, json};

use crate::model::{Connector, Operation, resolve_local};
use crate::schema_walk;

/// The top-level properties a summary keeps by their names, besides the paths the
/// operation's `async` (and the jobs polled with it) name: the id, the state, the
/// amount, as providers name them.
const NAMED: [&str; 5] = ["id", "status", "state", "amount", "currency"];

/// The property paths `op`'s summary keeps: `NAMED`, the paths where its job's id may be
/// and its job's status (`async`), and the status paths of every job polled with it.
pub(super) fn kept_paths(connector: &Connector, op: &Operation) -> Vec<String> {
    let mut paths: Vec<String> = NAMED.iter().map(|n| (*n).to_string()).collect();
    let mut add = |path: &str| {
        if !paths.iter().any(|p| p == path) {
            paths.push(path.to_string());
        }
    };
    if let Some(a) = &op.async_ {
        a.id_fields.iter().for_each(|f| add(f));
        add(&a.status.field);
    }
    for job in connector
        .operations
        .iter()
        .filter_map(|o| o.async_.as_ref())
        .filter(|a| a.poll_with == op.id)
    {
        add(&job.status.field);
    }
    paths
}

/// The summary of `full` (an object schema) keeping `paths`.
pub(super) fn summary(full: &Map<String, Value>, paths: &[String]) -> Value {
    let paths: Vec<&str> = paths.iter().map(String::as_str).collect();
    object(full, full, &paths)
}

/// The object schema of what `paths` name within `schema` (its root `root`, where its
/// references resolve).
fn object(root: &Map<String, Value>, schema: &Map<String, Value>, paths: &[&str]) -> Value {
    let required: Vec<&str> = resolved(root, schema)
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let mut properties = Map::new();
    let mut kept_required = Vec::new();
    for property in schema_walk::properties(root, schema) {
        let name = property.name;
        // The property itself (a name with a dot included), or a path into it.
        let whole = paths.contains(&name);
        let inner: Vec<&str> = paths
            .iter()
            .filter_map(|p| p.strip_prefix(name)?.strip_prefix('.'))
            .collect();
        if !whole && inner.is_empty() {
            continue;
        }
        let mut kept = typed(root, &property.schemas);
        if !inner.is_empty()
            && let Some(envelope) = property
                .schemas
                .iter()
                .find_map(|s| resolved_object(root, s))
        {
            let nested = object(root, envelope, &inner);
            if nested["properties"]
                .as_object()
                .is_some_and(|p| !p.is_empty())
            {
                // The envelope's own type stays only if it is an object's.
                kept = nested;
            }
        }
        if required.contains(&name) {
            kept_required.push(json!(name));
        }
        properties.insert(name.to_string(), kept);
    }
    let mut out = Map::new();
    out.insert("type".into(), json!("object"));
    out.insert("properties".into(), Value::Object(properties));
    if !kept_required.is_empty() {
        out.insert("required".into(), Value::Array(kept_required));
    }
    Value::Object(out)
}

/// `{type: T}` when every schema that declares the property gives it the same `type`
/// (through references); else `{}`, which takes any value the whole schema takes.
fn typed(root: &Map<String, Value>, declared: &[&Value]) -> Value {
    let types: Vec<Option<&Value>> = declared
        .iter()
        .map(|s| {
            s.as_object()
                .map(|m| resolved(root, m))
                .and_then(|m| m.get("type"))
        })
        .collect();
    match types.first() {
        Some(Some(first)) if types.iter().all(|t| *t == Some(*first)) => {
            json!({ "type": first })
        }
        _ => json!({}),
    }
}

/// A schema with its `$ref` chain followed (within the tool schema's `root`).
fn resolved<'a>(
    root: &'a Map<String, Value>,
    schema: &'a Map<String, Value>,
) -> &'a Map<String, Value> {
    let mut at = schema;
    for _ in 0..16 {
        match at
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| resolve_local(root, r))
            .and_then(Value::as_object)
        {
            Some(next) => at = next,
            None => break,
        }
    }
    at
}

/// The object schema a property's declaration is, through references.
fn resolved_object<'a>(
    root: &'a Map<String, Value>,
    schema: &'a Value,
) -> Option<&'a Map<String, Value>> {
    schema.as_object().map(|m| resolved(root, m))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(full: &Value, paths: &[&str]) -> Value {
        let paths: Vec<String> = paths.iter().map(|p| (*p).to_string()).collect();
        summary(full.as_object().unwrap(), &paths)
    }

    #[test]
    fn a_summary_keeps_the_named_properties_with_their_types() {
        let full = json!({
            "type": "object",
            "required": ["id", "status", "url"],
            "properties": {
                "id": { "type": "string", "description": "The id." },
                "url": { "type": "string" },
                "status": { "$ref": "#/$defs/Status" },
                "amount": { "anyOf": [{ "type": "integer" }, { "type": "null" }] },
                "owner": { "$ref": "#/$defs/Owner" }
            },
            "$defs": {
                "Status": { "type": "string", "enum": ["queued", "done"] },
                "Owner": { "type": "object", "properties": { "name": { "type": "string" } } }
            }
        });
        assert_eq!(
            kept(&full, &["id", "status", "amount"]),
            json!({
                "type": "object",
                "properties": {
                    "id": { "type": "string" },
                    "status": { "type": "string" },
                    "amount": {}
                },
                "required": ["id", "status"]
            })
        );
    }

    #[test]
    fn a_path_into_an_envelope_keeps_the_envelope_with_the_one_property() {
        let full = json!({
            "type": "object",
            "properties": {
                "job": {
                    "type": "object",
                    "required": ["id"],
                    "properties": {
                        "id": { "type": "string" },
                        "status": { "type": "string" },
                        "input": { "type": "object" }
                    }
                },
                "meta": { "type": "object" }
            },
            "allOf": [{ "properties": { "total": { "type": "number" } } }]
        });
        assert_eq!(
            kept(&full, &["job.id", "total"]),
            json!({
                "type": "object",
                "properties": {
                    "job": {
                        "type": "object",
                        "properties": { "id": { "type": "string" } },
                        "required": ["id"]
                    },
                    "total": { "type": "number" }
                }
            })
        );
    }
}
