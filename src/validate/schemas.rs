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

use super::Validator;
use crate::diagnostics::{Diagnostic, Finding, Span};

/// Every keyword of JSON Schema 2020-12 (core, applicator, unevaluated, validation,
/// meta-data, format, content), the 2019-09 and draft-7 spellings a 2020-12 reader still
/// meets, and OpenAPI 3.1's own (`discriminator`, `xml`, `externalDocs`, `example`).
const KEYWORDS: [&str; 66] = [
    "$schema",
    "$id",
    "$ref",
    "$anchor",
    "$dynamicRef",
    "$dynamicAnchor",
    "$vocabulary",
    "$comment",
    "$defs",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "dependentSchemas",
    "prefixItems",
    "items",
    "contains",
    "properties",
    "patternProperties",
    "additionalProperties",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "type",
    "enum",
    "const",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "maxContains",
    "minContains",
    "maxProperties",
    "minProperties",
    "required",
    "dependentRequired",
    "title",
    "description",
    "default",
    "deprecated",
    "readOnly",
    "writeOnly",
    "examples",
    "format",
    "contentEncoding",
    "contentMediaType",
    "contentSchema",
    "$recursiveRef",
    "$recursiveAnchor",
    "definitions",
    "dependencies",
    "additionalItems",
    "discriminator",
    "xml",
    "externalDocs",
    "example",
];

/// Keywords whose value is a schema, a list of schemas, or a map of them.
const ONE: [&str; 12] = [
    "not",
    "if",
    "then",
    "else",
    "items",
    "contains",
    "additionalProperties",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contentSchema",
    "additionalItems",
];
const LIST: [&str; 4] = ["allOf", "anyOf", "oneOf", "prefixItems"];
const MAP: [&str; 5] = [
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];

impl Validator {
    /// Checks one schema the author wrote; `key` names it in messages (`input`, …).
    pub(super) fn check_schema(&mut self, schema: &Value, key: &str, at: Span) {
        if let Err(e) = jsonschema::meta::validate(schema) {
            self.push(Diagnostic::SchemaNotValid {
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
            self.problems
                .push(Finding::warning(Diagnostic::UnknownSchemaKeyword {
                    key: key.to_string(),
                    pointer: format!("{pointer}/{keyword}"),
                    keyword,
                    span: at,
                    help,
                }));
        }
    }
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
        if ONE.contains(&k) {
            path.push(k);
            unknown_keywords(value, path, out);
            path.pop();
        } else if LIST.contains(&k) {
            for (i, s) in value.as_array().into_iter().flatten().enumerate() {
                path.push(k);
                path.push(INDEXES.get(i).copied().unwrap_or("…"));
                unknown_keywords(s, path, out);
                path.truncate(path.len() - 2);
            }
        } else if MAP.contains(&k) {
            for (name, s) in value.as_object().into_iter().flatten() {
                path.push(k);
                path.push(name);
                unknown_keywords(s, path, out);
                path.truncate(path.len() - 2);
            }
        } else if !k.starts_with("x-") && !KEYWORDS.contains(&k) {
            let pointer: String = path
                .iter()
                .map(|segment| format!("/{}", crate::model::escape(segment)))
                .collect();
            out.push((pointer, key.clone(), value.is_null()));
        }
    }
}

/// Index segments for pointers into schema lists (longer lists are rare in a schema).
const INDEXES: [&str; 16] = [
    "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15",
];
