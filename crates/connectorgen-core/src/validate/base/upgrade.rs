//! OpenAPI 3.0 → 3.1, for base documents written in 3.0: the model is always 3.1, so
//! every target starts from one version (openapi30 converts back, `render/openapi30.rs`).
//!
//! Takes: the document's top level and the exposed operations' HTTP maps, as copied from
//! a 3.0 base. Returns: nothing; rewrites them in place. The rewrites are exact: 3.1
//! schemas are JSON Schema 2020-12, where 3.0's `nullable` and boolean
//! `exclusiveMinimum`/`exclusiveMaximum` are spelt differently.
//! Must never: change what a schema accepts, or touch anything but those keywords.
//!
//! - `nullable: true` beside `type: T` → `type: [T, "null"]` (and `null` added to an
//!   `enum`, which would otherwise still refuse it);
//! - `nullable: true` without `type` (Stripe's `{anyOf: [{$ref}], nullable: true}`) →
//!   `{type: "null"}` added to its `anyOf`/`oneOf`, or the schema's validation keywords
//!   moved into `anyOf: [{…}, {type: "null"}]`;
//! - `nullable: false` → removed;
//! - `exclusiveMinimum: true` with `minimum: n` → `exclusiveMinimum: n` (likewise for the
//!   maximum); `exclusiveMinimum: false` → removed.

use serde_json::{Map, Value, json};

use crate::base::places;
use crate::subschemas::{self, Holds};

/// Keywords that describe a schema rather than constrain it: they stay on the outer
/// schema when its constraints move into an `anyOf`.
const ANNOTATIONS: [&str; 8] = [
    "title",
    "description",
    "default",
    "example",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
];

/// Upgrades the document and the operations to OpenAPI 3.1.0 in place.
pub(crate) fn to_31<'a>(
    root: &mut Map<String, Value>,
    operations: impl Iterator<Item = &'a mut Map<String, Value>>,
) {
    root.insert("openapi".into(), json!("3.1.0"));
    // Schemas are found by their place in the document: a parameter component named
    // `schema` is a parameter (issue 20).
    upgrade_schemas(root, places::document);
    for op in operations {
        upgrade_schemas(op, |op| places::operation(op, ""));
    }
}

/// Upgrades every outermost schema `find` locates in `object`.
fn upgrade_schemas(object: &mut Map<String, Value>, find: impl Fn(&Value) -> Vec<places::Place>) {
    let mut value = Value::Object(std::mem::take(object));
    let found = find(&value);
    for pointer in places::schemas(&found) {
        if let Some(s) = value.pointer_mut(pointer) {
            schema(s);
        }
    }
    if let Value::Object(map) = value {
        *object = map;
    }
}

/// Upgrades one schema and the schemas inside it.
fn schema(value: &mut Value) {
    let Value::Object(map) = value else {
        return;
    };
    for (key, child) in map.iter_mut() {
        match (subschemas::holds(key, child), child) {
            (Some(Holds::Schema), child) => schema(child),
            (Some(Holds::Map), Value::Object(entries)) => entries.values_mut().for_each(schema),
            (Some(Holds::List), Value::Array(list)) => list.iter_mut().for_each(schema),
            _ => {}
        }
    }
    for (flag, bound) in [
        ("exclusiveMinimum", "minimum"),
        ("exclusiveMaximum", "maximum"),
    ] {
        match map.get(flag) {
            Some(Value::Bool(true)) => match map.remove(bound) {
                Some(limit) => {
                    map.insert(flag.into(), limit);
                }
                None => {
                    map.remove(flag);
                }
            },
            Some(Value::Bool(false)) => {
                map.remove(flag);
            }
            _ => {}
        }
    }
    match map.remove("nullable") {
        Some(Value::Bool(true)) => {}
        _ => return,
    }
    if let Some(t) = map.get_mut("type") {
        if let Value::String(name) = t {
            *t = json!([name.clone(), "null"]);
        }
        if let Some(Value::Array(values)) = map.get_mut("enum")
            && !values.contains(&Value::Null)
        {
            values.push(Value::Null);
        }
        return;
    }
    for union in ["anyOf", "oneOf"] {
        if let Some(Value::Array(list)) = map.get_mut(union) {
            list.push(json!({ "type": "null" }));
            return;
        }
    }
    let constraints: Map<String, Value> = map
        .iter()
        .filter(|(k, _)| !ANNOTATIONS.contains(&k.as_str()) && !k.starts_with("x-"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    map.retain(|k, _| ANNOTATIONS.contains(&k.as_str()) || k.starts_with("x-"));
    map.insert(
        "anyOf".into(),
        json!([Value::Object(constraints), { "type": "null" }]),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn up(v: Value) -> Value {
        let mut v = v;
        schema(&mut v);
        v
    }

    #[test]
    fn nullable_forms_become_3_1_types() {
        assert_eq!(
            up(json!({ "type": "string", "nullable": true })),
            json!({ "type": ["string", "null"] })
        );
        assert_eq!(
            up(json!({ "type": "string", "enum": ["a"], "nullable": true })),
            json!({ "type": ["string", "null"], "enum": ["a", null] })
        );
        assert_eq!(
            up(json!({ "anyOf": [{ "$ref": "#/x" }], "nullable": true, "description": "d" })),
            json!({ "anyOf": [{ "$ref": "#/x" }, { "type": "null" }], "description": "d" })
        );
        assert_eq!(
            up(json!({ "allOf": [{ "$ref": "#/x" }], "nullable": true, "description": "d" })),
            json!({ "description": "d", "anyOf": [{ "allOf": [{ "$ref": "#/x" }] }, { "type": "null" }] })
        );
        assert_eq!(
            up(json!({ "type": "object", "nullable": false })),
            json!({ "type": "object" })
        );
    }

    #[test]
    fn boolean_exclusive_bounds_become_numbers() {
        assert_eq!(
            up(
                json!({ "type": "number", "minimum": 0, "exclusiveMinimum": true, "maximum": 1, "exclusiveMaximum": false })
            ),
            json!({ "type": "number", "exclusiveMinimum": 0, "maximum": 1 })
        );
        assert_eq!(
            up(json!({ "properties": { "a": { "type": "integer", "nullable": true } } })),
            json!({ "properties": { "a": { "type": ["integer", "null"] } } })
        );
    }
}
