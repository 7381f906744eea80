//! One walk of a composed schema: from a schema, through its `$ref`s and its `allOf`/
//! `anyOf`/`oneOf` branches (and an array's `items` when asked), to every schema that
//! also describes a value of it. The generator (`render::mcp`: the body fields a tool
//! takes, where an omitted property is declared, where a credential field is taken out)
//! and the server (`connectorgen-runtime`'s request check: the schemas that declare an
//! argument, the properties an exploded query object may carry, where an omitted property
//! is) all ask here, so they cannot disagree on what a composition names.
//!
//! Takes: the root object references resolve in (a document, or a served `inputSchema`)
//! and where to start (a schema within it, or JSON pointers into it). Returns: the
//! schemas reached, each once, in the order met — depth first: a schema, then what its
//! `$ref` names, then its `allOf`, `anyOf` and `oneOf` branches in order, then its
//! `items`; or the properties they declare, each name once (where first met) with every
//! schema that declares it.
//! Must never: fetch anything, read an instance (`enum`, `default`, …) as a schema, or
//! walk without end.
//!
//! - A `$ref` is followed when it is local (`#/…`, segments `~`- and percent-escaped, as
//!   `model::resolve_local` reads them), through chains of them; the keywords beside it
//!   are read too, as JSON Schema 2020-12 (and so the server's validator) applies both.
//! - A cycle ends: each schema (by address) is reached once. A very wide composition
//!   ends too: at most `LIMIT` schemas are reached, the first ones in the order above.
//! - A `$ref` that does not resolve (remote, or a typo) reaches nothing; the keywords
//!   beside it are still read.
//! - A property several schemas declare (two alternatives, a branch and the root) is one
//!   name, with each of those schemas, in the order met.
//! - Not walked: `not`, `if`/`then`/`else`, `dependentSchemas`, `properties`' own values:
//!   they do not describe the same value, or do not say it has a property.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use crate::model::{escape, resolve_local, unescape};

/// How many schemas one walk reaches at most.
const LIMIT: usize = 4096;

/// A property name the walk met, and every schema reached that declares it (the values
/// of `properties[name]`), in the order met.
#[derive(Debug)]
pub struct Property<'a> {
    pub name: &'a str,
    pub schemas: Vec<&'a Value>,
}

/// The properties a value of `schema` (an object within `root`) is described as having,
/// by `schema` itself and by every schema the walk reaches from it.
pub fn properties<'a>(
    root: &'a Map<String, Value>,
    schema: &'a Map<String, Value>,
) -> Vec<Property<'a>> {
    let mut out: Vec<Property<'a>> = Vec::new();
    let mut index: HashMap<&'a str, usize> = HashMap::new();
    for (node, _) in walk(root, vec![(schema, None)], false) {
        for (name, declared) in node
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            if let Some(&i) = index.get(name.as_str()) {
                out[i].schemas.push(declared);
            } else {
                index.insert(name, out.len());
                out.push(Property {
                    name,
                    schemas: vec![declared],
                });
            }
        }
    }
    out
}

/// The schemas (JSON pointers into `schema`, whose top level is an object) a value
/// described by the schemas at `starts` is also described by, `starts` included, in the
/// order met; through `items` too when `items` is set. A schema reached through a `$ref`
/// is named by the reference's pointer (its segments unescaped once, then `~`-escaped).
pub fn reached(schema: &Value, starts: &[String], items: bool) -> Vec<String> {
    let Some(root) = schema.as_object() else {
        return Vec::new();
    };
    let starts = starts
        .iter()
        .filter_map(|p| Some((schema.pointer(p)?.as_object()?, Some(p.clone()))))
        .collect();
    walk(root, starts, items)
        .into_iter()
        .filter_map(|(_, pointer)| pointer)
        .collect()
}

/// The walk itself: each schema reached with its pointer, when known (a start given
/// without one, and its branches, have none).
fn walk<'a>(
    root: &'a Map<String, Value>,
    starts: Vec<(&'a Map<String, Value>, Option<String>)>,
    items: bool,
) -> Vec<(&'a Map<String, Value>, Option<String>)> {
    let mut out = Vec::new();
    let mut seen: HashSet<*const Map<String, Value>> = HashSet::new();
    let mut pending: Vec<_> = starts.into_iter().rev().collect();
    while let Some((node, pointer)) = pending.pop() {
        if seen.len() >= LIMIT || !seen.insert(std::ptr::from_ref(node)) {
            continue;
        }
        let mut next = Vec::new();
        if let Some(reference) = node.get("$ref").and_then(Value::as_str)
            && let Some(Value::Object(target)) = resolve_local(root, reference)
        {
            next.push((target, Some(canonical(reference))));
        }
        let within = |suffix: &str| pointer.as_ref().map(|p| format!("{p}/{suffix}"));
        for key in ["allOf", "anyOf", "oneOf"] {
            let branches = node.get(key).and_then(Value::as_array);
            for (i, branch) in branches.into_iter().flatten().enumerate() {
                if let Value::Object(branch) = branch {
                    next.push((branch, within(&format!("{key}/{i}"))));
                }
            }
        }
        if items && let Some(Value::Object(inner)) = node.get("items") {
            next.push((inner, within("items")));
        }
        out.push((node, pointer));
        pending.extend(next.into_iter().rev());
    }
    out
}

/// The JSON pointer a local reference names: its segments read as `resolve_local` reads
/// them, then written as a pointer writes them, so `Value::pointer` finds the same value.
fn canonical(reference: &str) -> String {
    let pointer = reference.strip_prefix('#').unwrap_or(reference);
    pointer
        .split('/')
        .skip(1)
        .map(|segment| format!("/{}", escape(&unescape(segment))))
        .collect()
}

/// Whether some value fits more than one of `alternatives` (a `oneOf`'s) by the plainest
/// sign of it: one alternative takes any value of a type (it says `type: T`, or no type,
/// and nothing that narrows it) and another takes values of that type too — the
/// documents' "one of these names, or any string" (`oneOf: [{enum: [...]}, {type:
/// string}]`), where every known name fits both and `oneOf`'s "exactly one" refuses the
/// provider's own examples. `false` when nothing shows it (a `$ref`, narrowed types).
pub fn alternatives_overlap(alternatives: &[Value]) -> bool {
    /// Keywords that describe and do not narrow.
    const ANNOTATIONS: [&str; 8] = [
        "type",
        "title",
        "description",
        "examples",
        "example",
        "default",
        "deprecated",
        "$comment",
    ];
    let open: Vec<(usize, Option<&str>)> = alternatives
        .iter()
        .enumerate()
        .filter_map(|(i, alt)| {
            let map = alt.as_object()?;
            if !map.keys().all(|k| ANNOTATIONS.contains(&k.as_str())) {
                return None;
            }
            match map.get("type") {
                None => Some((i, None)),
                Some(Value::String(t)) => Some((i, Some(t.as_str()))),
                Some(_) => None,
            }
        })
        .collect();
    open.iter().any(|&(i, ty)| {
        alternatives
            .iter()
            .enumerate()
            .any(|(j, other)| j != i && takes_some_of(other, ty))
    })
}

/// Whether `schema` takes some value of type `ty` (`None`: any value).
fn takes_some_of(schema: &Value, ty: Option<&str>) -> bool {
    let Some(ty) = ty else {
        return true;
    };
    let Some(map) = schema.as_object() else {
        return schema == &Value::Bool(true);
    };
    let of_type = |v: &Value| match (ty, v) {
        ("string", Value::String(_)) | ("boolean", Value::Bool(_)) | ("null", Value::Null) => true,
        ("object", Value::Object(_)) | ("array", Value::Array(_)) => true,
        ("number", Value::Number(_)) => true,
        ("integer", Value::Number(n)) => n.is_i64() || n.is_u64(),
        _ => false,
    };
    if let Some(values) = map.get("enum").and_then(Value::as_array) {
        return values.iter().any(of_type);
    }
    if let Some(value) = map.get("const") {
        return of_type(value);
    }
    match map.get("type") {
        Some(Value::String(t)) => t == ty || (ty == "number" && t == "integer"),
        Some(Value::Array(ts)) => ts.iter().any(|t| t.as_str() == Some(ty)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_or_any_string_overlaps_and_narrowed_alternatives_do_not() {
        use serde_json::json;
        let names = json!({"enum": ["alloy", "echo"], "description": "a known voice"});
        let any = json!({"type": "string", "description": "or any voice id"});
        assert!(alternatives_overlap(&[names.clone(), any.clone()]));
        assert!(alternatives_overlap(&[
            json!({"type": "string"}),
            json!({"const": "x"})
        ]));
        // Narrowed: a pattern, another type, a reference.
        assert!(!alternatives_overlap(&[
            names.clone(),
            json!({"type": "string", "pattern": "^v_"})
        ]));
        assert!(!alternatives_overlap(&[
            json!({"type": "integer"}),
            json!({"type": "string"})
        ]));
        assert!(!alternatives_overlap(&[json!({"$ref": "#/a"}), any]));
        assert!(!alternatives_overlap(&[
            json!({"type": "object", "properties": {"a": {}}, "required": ["a"]}),
            json!({"type": "object", "properties": {"b": {}}, "required": ["b"]})
        ]));
    }
    use serde_json::json;

    fn names(root: &Value, at: &str) -> Vec<(String, usize)> {
        let root = root.as_object().unwrap();
        let schema = root[at].as_object().unwrap();
        properties(root, schema)
            .into_iter()
            .map(|p| (p.name.to_string(), p.schemas.len()))
            .collect()
    }

    #[test]
    fn references_chains_and_the_keywords_beside_a_reference_are_read() {
        let root = json!({
            "body": {
                "properties": { "id": {} },
                "oneOf": [
                    { "$ref": "#/defs/Alias" },
                    { "$ref": "#/defs/By%20Card", "properties": { "note": {} } }
                ]
            },
            "defs": {
                "Alias": { "$ref": "#/defs/Amount" },
                "Amount": { "properties": { "amount": {}, "id": {} } },
                "By Card": { "properties": { "card": {} } }
            }
        });
        assert_eq!(
            names(&root, "body"),
            [
                ("id".to_string(), 2),
                ("amount".to_string(), 1),
                // A schema's own keywords come before what its `$ref` names.
                ("note".to_string(), 1),
                ("card".to_string(), 1)
            ]
        );
    }

    #[test]
    fn a_cycle_ends_and_an_unresolved_reference_reaches_nothing() {
        let root = json!({
            "body": { "$ref": "#/defs/Node" },
            "defs": {
                "Node": { "allOf": [{ "$ref": "#/defs/Node" }, { "$ref": "#/defs/Leaf" }] },
                "Leaf": {
                    "properties": { "leaf": {} },
                    "anyOf": [{ "$ref": "#/defs/Missing", "properties": { "beside": {} } },
                              { "$ref": "https://schemas.example/x.json" }]
                }
            }
        });
        assert_eq!(
            names(&root, "body"),
            [("leaf".to_string(), 1), ("beside".to_string(), 1)]
        );
    }

    #[test]
    fn a_wide_composition_is_walked_within_the_limit() {
        let branches: Vec<Value> = (0..LIMIT + 10)
            .map(|i| json!({ "properties": { format!("p{i}"): {} } }))
            .collect();
        let root = json!({ "body": { "anyOf": branches } });
        // The body itself is the first schema reached, so LIMIT - 1 of its branches are.
        assert_eq!(names(&root, "body").len(), LIMIT - 1);
    }

    #[test]
    fn reached_names_each_schema_by_its_pointer_in_the_order_met() {
        let root = json!({
            "properties": { "x": { "items": { "$ref": "#/$defs/a~1b" } } },
            "$defs": { "a/b": { "allOf": [{ "$ref": "#/$defs/a%7E1b" }, { "type": "object" }] } }
        });
        assert_eq!(
            reached(&root, &["/properties/x".to_string()], true),
            [
                "/properties/x",
                "/properties/x/items",
                "/$defs/a~1b",
                "/$defs/a~1b/allOf/0",
                "/$defs/a~1b/allOf/1"
            ]
        );
        assert_eq!(
            reached(&root, &["/properties/x".to_string()], false),
            ["/properties/x"]
        );
    }
}
