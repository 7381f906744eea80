//! The 3.1 spellings of a schema that 3.0 has an exact form for, whole: "or null" unions
//! (`anyOf`/`oneOf` with `{type: "null"}`) and keywords beside `$ref`.
//!
//! Takes: one schema's keywords (and the `type` of each component schema). Returns: the
//! keywords rewritten, which the converter then converts as any others; `None` when the
//! schema is not of that shape. Must never: change which values the schema accepts (the
//! test `openapi30_meaning` checks each form against 3.1's).

use std::collections::HashMap;

use serde_json::{Map, Value, json};

/// `anyOf`/`oneOf` of schemas and `{type: "null"}` (the 3.1 way to say "or null") → the
/// 3.0 form that accepts the same values. 3.0.3 reads `nullable: true` only beside
/// `type`, and it adds null to that `type` alone: every other keyword (an `allOf`
/// around a `$ref` included) still refuses null. So an inline schema with a type takes
/// `nullable: true` itself (one branch: merged into the outer schema; several: each
/// branch, the first only for `oneOf`, where a value must match exactly one); anything
/// else (a `$ref`, a schema of no single type, keywords that clash with the outer ones)
/// keeps its union, with `{type: "null"}` written as a schema that accepts only null.
pub(super) fn nullable_union(
    map: &Map<String, Value>,
    types: &HashMap<String, Value>,
) -> Option<Map<String, Value>> {
    let (key, list) = ["anyOf", "oneOf"]
        .iter()
        .find_map(|k| map.get(*k).and_then(Value::as_array).map(|l| (*k, l)))?;
    let is_null = |s: &Value| {
        s.get("type").and_then(Value::as_str) == Some("null")
            && s.as_object().is_some_and(|o| o.len() == 1)
    };
    if list.iter().filter(|s| is_null(s)).count() != 1 || list.len() < 2 {
        return None;
    }
    let rest: Vec<&Value> = list.iter().filter(|s| !is_null(s)).collect();
    let mut out: Map<String, Value> = map
        .iter()
        .filter(|(k, _)| *k != key)
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let common = rest
        .iter()
        .map(|s| type_of(s, types))
        .reduce(|a, b| if a == b { a } else { None })
        .flatten();
    if let [inner] = rest.as_slice() {
        if let Some(inner) = own_type(inner)
            && inner.keys().all(|k| !out.contains_key(k))
        {
            out.extend(inner.iter().map(|(k, v)| (k.clone(), v.clone())));
            out.insert("nullable".into(), json!(true));
            return Some(out);
        }
    } else {
        let mut branches: Vec<Value> = rest.iter().map(|s| (*s).clone()).collect();
        let typed = branches.iter_mut().enumerate().all(|(i, branch)| {
            if key == "oneOf" && i > 0 {
                return true;
            }
            nullable_branch(branch).map(|b| *branch = b).is_some()
        });
        if typed {
            out.insert(key.into(), Value::Array(branches));
            return Some(out);
        }
    }
    let only_null = match common {
        Some(t) => json!({ "type": t, "nullable": true, "enum": [null] }),
        None => json!({ "enum": [null] }),
    };
    let branches = list
        .iter()
        .map(|s| {
            if is_null(s) {
                only_null.clone()
            } else {
                s.clone()
            }
        })
        .collect();
    out.insert(key.into(), Value::Array(branches));
    Some(out)
}

/// A schema's single `type`: its own, its reference's, or the one all its `anyOf`/
/// `oneOf`/`allOf` branches share.
fn type_of(schema: &Value, types: &HashMap<String, Value>) -> Option<Value> {
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        return types.get(reference).cloned();
    }
    if let Some(t) = schema.get("type").filter(|t| t.is_string()) {
        return Some(t.clone());
    }
    let branches = ["anyOf", "oneOf", "allOf"]
        .iter()
        .find_map(|k| schema.get(*k).and_then(Value::as_array))?;
    branches
        .iter()
        .map(|b| type_of(b, types))
        .reduce(|a, b| if a == b { a } else { None })
        .flatten()
}

/// A schema that `nullable: true` makes accept null in 3.0: an inline one with a
/// single `type` of its own and nothing else that refuses null whatever `nullable`
/// says (a `$ref`, `allOf`/`anyOf`/`oneOf`, `not`).
fn own_type(schema: &Value) -> Option<&Map<String, Value>> {
    schema.as_object().filter(|m| {
        m.get("type").is_some_and(Value::is_string)
            && ["$ref", "allOf", "anyOf", "oneOf", "not"]
                .iter()
                .all(|k| !m.contains_key(*k))
    })
}

/// One branch of a nullable union, made to accept null itself (3.0 style), when
/// `nullable` can say it there.
fn nullable_branch(branch: &Value) -> Option<Value> {
    let mut out = own_type(branch)?.clone();
    out.insert("nullable".into(), json!(true));
    Some(Value::Object(out))
}

/// `{$ref, description, …}` (3.1 applies keywords beside `$ref`; 3.0 ignores them) →
/// `{allOf: [{$ref}], description, …}`, which means the same in 3.0.
pub(super) fn ref_with_siblings(map: &Map<String, Value>) -> Option<Map<String, Value>> {
    let reference = map.get("$ref")?;
    if map.len() == 1 || map.contains_key("allOf") {
        return None;
    }
    let mut out = Map::new();
    for (k, v) in map {
        if k == "$ref" {
            out.insert("allOf".into(), json!([{ "$ref": reference }]));
        } else {
            out.insert(k.clone(), v.clone());
        }
    }
    Some(out)
}
