//! Schema Objects, as the version of their document defines them.
//!
//! Takes: one Schema Object and where it is. Returns (into the `Walk`): for OpenAPI 3.0,
//! each keyword that 3.0's Schema Object does not list (3.0 allows only `x-` extensions
//! besides them) or that holds the wrong type, checked by the project's own table below
//! (`type` one of the six 3.0 types, counts non-negative integers, `required` and `enum`
//! non-empty lists, `pattern` an ECMAScript regular expression with the Unicode flag, as
//! Ajv compiles it), recursively through the
//! keywords that hold schemas; for 3.1 and 3.2, that it is a mapping or a boolean and,
//! when the walk asks, the first problem the JSON Schema 2020-12 meta-schema (shipped by
//! the `jsonschema` crate) finds in it.
//! Must never: follow a `$ref` (a 3.0 Reference Object ends the walk there).

use serde_json::{Map, Value};

use super::{Kind, Problem, Walk, a_type};
use crate::diagnostics::suggest;
use crate::model::{OpenapiVersion, escape};
use crate::subschemas::KEYWORDS_30;

/// The Schema Object at `at`.
pub(super) fn schema(w: &mut Walk, at: &str, value: &Value) {
    if w.full() {
        return;
    }
    if w.version == OpenapiVersion::V30 {
        w.ref_or(at, value, "Schema", schema_30);
        return;
    }
    if !(value.is_object() || value.is_boolean()) {
        w.problem(
            at,
            format!(
                "a Schema Object is a mapping or a boolean, not {}",
                a_type(value)
            ),
        );
        return;
    }
    if w.meta_schemas
        && let Err(e) = jsonschema::draft202012::meta::validate(value)
    {
        w.problems.push(Problem {
            pointer: format!("{at}{}", e.instance_path()),
            message: format!("not a valid JSON Schema (2020-12): {e}"),
            meta_schema: true,
        });
    }
}

/// A 3.0 Schema Object's keywords, and the schemas inside it.
fn schema_30(w: &mut Walk, at: &str, map: &Map<String, Value>) {
    for (key, value) in map {
        if w.full() {
            return;
        }
        if key.starts_with("x-") {
            continue;
        }
        let here = format!("{at}/{}", escape(key));
        match key.as_str() {
            "title" | "description" | "format" => w.kind(&here, key, value, Kind::Text),
            "exclusiveMaximum" | "exclusiveMinimum" | "uniqueItems" | "nullable" | "readOnly"
            | "writeOnly" | "deprecated" => w.kind(&here, key, value, Kind::Bool),
            "default" | "example" => {}
            "maximum" | "minimum" if !value.is_number() => {
                w.problem(&here, format!("`{key}` is a number, not {}", a_type(value)));
            }
            "multipleOf" if !value.as_f64().is_some_and(|n| n > 0.0) => {
                w.problem(&here, format!("`{key}` is a number above 0"));
            }
            "maxLength" | "minLength" | "maxItems" | "minItems" | "maxProperties"
            | "minProperties"
                if !value.is_u64() =>
            {
                w.problem(&here, format!("`{key}` is a whole number, 0 or more"));
            }
            "pattern" => match value {
                Value::String(pattern) => {
                    if let Err(e) = regress::Regex::with_flags(pattern, "u") {
                        w.problem(
                            &here,
                            format!("`pattern` is not an ECMAScript regular expression with the Unicode flag (as Ajv compiles it): {e}"),
                        );
                    }
                }
                other => w.problem(&here, format!("`pattern` is a string, not {}", a_type(other))),
            },
            "required" => match value {
                Value::Array(names) if !names.is_empty() => {
                    w.kind(&here, key, value, Kind::Texts);
                    let mut seen = std::collections::HashSet::new();
                    if names.iter().any(|n| !seen.insert(n.as_str())) {
                        w.problem(&here, "`required` names each property once".to_string());
                    }
                }
                _ => w.problem(&here, "`required` is a non-empty list of property names".to_string()),
            },
            "enum" => {
                if value.as_array().is_none_or(Vec::is_empty) {
                    w.problem(&here, "`enum` is a non-empty list".to_string());
                }
            }
            "type" => w.kind(
                &here,
                key,
                value,
                Kind::OneOf(&["array", "boolean", "integer", "number", "object", "string"]),
            ),
            "not" | "items" => schema(w, &here, value),
            "allOf" | "oneOf" | "anyOf" => match value {
                Value::Array(items) => {
                    for (i, item) in items.iter().enumerate() {
                        schema(w, &format!("{here}/{i}"), item);
                    }
                }
                other => w.problem(
                    &here,
                    format!("`{key}` is a list of Schema Objects, not {}", a_type(other)),
                ),
            },
            "properties" => w.kind(&here, key, value, Kind::Schemas),
            "additionalProperties" if !value.is_boolean() => schema(w, &here, value),
            "discriminator" => w.kind(&here, key, value, Kind::One("Discriminator", discriminator)),
            "externalDocs" => w.kind(
                &here,
                key,
                value,
                Kind::One("External Documentation", super::objects::external_docs),
            ),
            "xml" => w.kind(&here, key, value, Kind::One("XML", xml)),
            k if KEYWORDS_30.contains(&k) => {}
            _ => w.problem(
                &here,
                format!(
                    "`{key}` is no keyword of an OpenAPI 3.0 Schema Object (only `x-` extensions may be added); {}",
                    suggest(key, KEYWORDS_30.iter().copied())
                ),
            ),
        }
    }
}

fn discriminator(w: &mut Walk, at: &str, map: &Map<String, Value>) {
    let fields = [
        ("propertyName", Kind::Text, super::In::All),
        ("mapping", Kind::TextMap, super::In::All),
    ];
    w.fields(at, map, "Discriminator", &fields);
    w.require(at, map, "Discriminator", &["propertyName"]);
}

fn xml(w: &mut Walk, at: &str, map: &Map<String, Value>) {
    let fields = [
        ("name", Kind::Text, super::In::All),
        ("namespace", Kind::Text, super::In::All),
        ("prefix", Kind::Text, super::In::All),
        ("attribute", Kind::Bool, super::In::All),
        ("wrapped", Kind::Bool, super::In::All),
    ];
    w.fields(at, map, "XML", &fields);
}
