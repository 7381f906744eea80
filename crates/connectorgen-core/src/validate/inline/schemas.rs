//! The JSON Schemas an author writes inline (`schemas:`, `input`, `output`, parameter
//! schemas, `errors.schema`): valid against the JSON Schema 2020-12 meta-schema, and made
//! of keywords some vocabulary defines.
//!
//! Takes: one schema and the YAML node it was written at. Returns (through `Validator`):
//! an error when the meta-schema rejects it (`type: strnig`, `required: yes`), and a
//! warning for each keyword that neither JSON Schema nor OpenAPI defines — the classic
//! YAML slip `{ description: a, b }` writes a keyword `b` with the value null, which
//! would otherwise land in openapi.json unnoticed.
//! Must never: change a schema, or judge a provider's document (base mode copies it as
//! the provider wrote it).

use serde_json::Value;

use crate::diagnostics::{Diagnostic, Finding, Span};
use crate::subschemas::{self, Holds, KEYWORDS};
use crate::validate::context::Validator;

/// Checks one schema the author wrote; `key` names it in messages (`input`, …).
pub(in crate::validate) fn check_schema(v: &mut Validator, schema: &Value, key: &str, at: Span) {
    // Most schemas use only a few keywords in their plainest form: those are checked
    // here, and the meta-schema validator (compiled on first use, the largest fixed
    // cost of a small run) judges the rest, and gives every error message.
    if !plainly_valid(schema, 0)
        && let Err(e) = jsonschema::meta::validate(schema)
    {
        v.findings.push(Diagnostic::SchemaNotValid {
            key: key.to_string(),
            pointer: e.instance_path().to_string(),
            message: e.to_string(),
            span: at,
        });
    }
    let mut unknown = Vec::new();
    unknown_keywords(schema, &mut Vec::new(), &mut unknown);
    for (pointer, keyword, null) in unknown {
        let help = if null {
            format!(
                "`{keyword}` has no value: in a flow mapping an unquoted comma ends the value, so `{{ description: a, b }}` is a description \"a\" and a keyword \"b\". Quote text that holds a comma: `description: \"a, b\"`"
            )
        } else if keyword == "nullable" {
            "`nullable` is OpenAPI 3.0; in 3.1 (JSON Schema) write `type: [string, \"null\"]`"
                .to_string()
        } else {
            "JSON Schema and OpenAPI define no such keyword, so no tool reads it: check its spelling, or use an `x-` name for an extension".to_string()
        };
        v.findings
            .add(Finding::warning(Diagnostic::UnknownSchemaKeyword {
                key: key.to_string(),
                pointer: format!("{pointer}/{keyword}"),
                keyword,
                span: at,
                help,
            }));
    }
}

/// The JSON Schema 2020-12 type names.
const TYPES: [&str; 7] = [
    "string", "number", "integer", "boolean", "object", "array", "null",
];
/// Keywords whose value the meta-schema requires to be a string, with no format.
const TEXT: [&str; 4] = ["title", "description", "format", "$comment"];
/// Keywords whose value the meta-schema requires to be a number.
const NUMBER: [&str; 4] = ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"];
/// Keywords whose value the meta-schema requires to be a non-negative integer.
const COUNT: [&str; 6] = [
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
];
/// Keywords whose value the meta-schema requires to be a boolean.
const FLAG: [&str; 4] = ["deprecated", "readOnly", "writeOnly", "uniqueItems"];
/// Deeper schemas are left to the meta-schema validator.
const PLAIN_DEPTH: usize = 32;

/// Whether the 2020-12 meta-schema certainly accepts `schema`: every keyword is one of
/// a few with a value of the plainest valid form, or one no meta-schema constrains (no
/// vocabulary defines it, and it is not a `$` keyword). `false` means "ask the
/// validator", not "invalid".
fn plainly_valid(schema: &Value, depth: usize) -> bool {
    let map = match schema {
        Value::Bool(_) => return true,
        Value::Object(map) if depth < PLAIN_DEPTH => map,
        _ => return false,
    };
    map.iter().all(|(key, value)| match key.as_str() {
        "type" => match value {
            Value::String(t) => TYPES.contains(&t.as_str()),
            Value::Array(list) => {
                !list.is_empty()
                    && list.iter().enumerate().all(|(i, t)| {
                        t.as_str().is_some_and(|t| TYPES.contains(&t)) && !list[..i].contains(t)
                    })
            }
            _ => false,
        },
        "properties" => value
            .as_object()
            .is_some_and(|props| props.values().all(|s| plainly_valid(s, depth + 1))),
        "items" | "additionalProperties" | "not" => plainly_valid(value, depth + 1),
        "required" => value.as_array().is_some_and(|names| {
            names
                .iter()
                .enumerate()
                .all(|(i, n)| n.is_string() && !names[..i].contains(n))
        }),
        "enum" | "examples" => value.is_array(),
        "default" | "const" | "example" => true,
        k if TEXT.contains(&k) => value.is_string(),
        k if NUMBER.contains(&k) => value.is_number(),
        k if COUNT.contains(&k) => value.is_u64(),
        k if FLAG.contains(&k) => value.is_boolean(),
        k => !k.starts_with('$') && !KEYWORDS.contains(&k),
    })
}

/// Keywords no vocabulary defines, below `schema`: (pointer of the schema, keyword,
/// whether its value is null). `path` is the way down to `schema`; pointers are only
/// spelt out for what is found (a run walks every schema of every operation).
fn unknown_keywords<'a>(
    schema: &'a Value,
    path: &mut Vec<&'a str>,
    out: &mut Vec<(String, String, bool)>,
) {
    let Value::Object(map) = schema else {
        return;
    };
    for (key, value) in map {
        let k = key.as_str();
        match (subschemas::holds(k, value), value) {
            (Some(Holds::Schema), _) => {
                path.push(k);
                unknown_keywords(value, path, out);
                path.pop();
            }
            (Some(Holds::List), Value::Array(list)) => {
                for (i, s) in list.iter().enumerate() {
                    path.push(k);
                    path.push(INDEXES.get(i).copied().unwrap_or("…"));
                    unknown_keywords(s, path, out);
                    path.truncate(path.len() - 2);
                }
            }
            (Some(Holds::Map), Value::Object(map)) => {
                for (name, s) in map {
                    path.push(k);
                    path.push(name);
                    unknown_keywords(s, path, out);
                    path.truncate(path.len() - 2);
                }
            }
            _ if !k.starts_with("x-") && !KEYWORDS.contains(&k) => {
                let pointer: String = path
                    .iter()
                    .map(|segment| format!("/{}", crate::model::escape(segment)))
                    .collect();
                out.push((pointer, key.clone(), value.is_null()));
            }
            _ => {}
        }
    }
}

/// Index segments for pointers into schema lists (longer lists are rare in a schema).
const INDEXES: [&str; 16] = [
    "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15",
];

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// What the built-in check accepts, the meta-schema accepts: on schemas of every
    /// kind the check takes, and on near misses of each.
    #[test]
    fn the_plain_check_accepts_nothing_the_meta_schema_refuses() {
        let accepted = [
            json!(true),
            json!({}),
            json!({"type": "object", "properties": {"id": {"type": "string", "format": "date-time"}}, "required": ["id"]}),
            json!({"type": ["string", "null"], "enum": ["a", null], "default": "a", "examples": ["b"]}),
            json!({"type": "array", "items": {"type": "integer", "minimum": -1, "maximum": 2.5}, "minItems": 0, "uniqueItems": true}),
            json!({"type": "string", "minLength": 1, "maxLength": 4000, "description": "Text.", "title": "T", "deprecated": false, "readOnly": true}),
            json!({"type": "object", "additionalProperties": false, "nullable": true, "x-kind": 1, "not": {"type": "null"}}),
            json!({"enum": [], "required": [], "properties": {}, "examples": [], "const": null}),
        ];
        for schema in &accepted {
            assert!(plainly_valid(schema, 0), "{schema}");
            assert!(jsonschema::meta::validate(schema).is_ok(), "{schema}");
        }
        let refused = [
            json!(1),
            json!({"type": "strnig"}),
            json!({"type": []}),
            json!({"type": ["string", "string"]}),
            json!({"type": 1}),
            json!({"required": "id"}),
            json!({"required": ["id", "id"]}),
            json!({"required": [1]}),
            json!({"properties": []}),
            json!({"properties": {"a": 1}}),
            json!({"items": [{"type": "string"}]}),
            json!({"enum": "a"}),
            json!({"examples": {}}),
            json!({"description": 1}),
            json!({"minimum": "1"}),
            json!({"minLength": -1}),
            json!({"minLength": 1.5}),
            json!({"readOnly": "yes"}),
            json!({"additionalProperties": 1}),
            json!({"not": "x"}),
        ];
        for schema in &refused {
            assert!(!plainly_valid(schema, 0), "{schema}");
            assert!(jsonschema::meta::validate(schema).is_err(), "{schema}");
        }
        // Left to the validator, valid or not: `$` keywords, the keywords not listed, deep nesting.
        for schema in [
            json!({"$ref": "#/components/schemas/A"}),
            json!({"pattern": "^a"}),
            json!({"allOf": [{"type": "string"}]}),
            json!({"multipleOf": 0}),
        ] {
            assert!(!plainly_valid(&schema, 0), "{schema}");
        }
        let mut deep = json!({"type": "string"});
        for _ in 0..40 {
            deep = json!({"items": deep});
        }
        assert!(!plainly_valid(&deep, 0));
    }
}
