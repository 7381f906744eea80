//! Where a JSON Schema keeps its sub-schemas: the keywords whose value is one schema, a
//! list of schemas or a map of names to schemas — JSON Schema 2020-12, with the older
//! drafts' spellings that OpenAPI 3.0 documents still write (`definitions`,
//! `additionalItems`, `items` as a list).
//!
//! Takes: a keyword and its value. Returns: what the value holds, only when it has that
//! shape (a boolean schema, or a wrong type, holds nothing to walk into); and the list
//! of every keyword some vocabulary defines (`KEYWORDS`), against which an author's
//! schema is checked and the openapi30 target tells a JSON Schema keyword 3.0 lacks
//! from one no reader knows; and OpenAPI 3.0's own list (`KEYWORDS_30`).
//! Must never: name a keyword whose value is data (`enum`, `const`, `default`,
//! `examples`): a walker would then read an instance as a schema. Every walker of the
//! crate that descends into sub-schemas asks here, so that none of them forgets one.

use serde_json::Value;

/// The keywords of an OpenAPI 3.0 Schema Object (its own subset and extension of an older
/// JSON Schema): what the 3.0 checks accept and the openapi30 target keeps.
pub(crate) const KEYWORDS_30: [&str; 35] = [
    "title",
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
    "maxProperties",
    "minProperties",
    "required",
    "enum",
    "type",
    "not",
    "allOf",
    "oneOf",
    "anyOf",
    "items",
    "properties",
    "additionalProperties",
    "description",
    "format",
    "default",
    "nullable",
    "discriminator",
    "readOnly",
    "writeOnly",
    "example",
    "externalDocs",
    "deprecated",
    "xml",
];

/// Every keyword of JSON Schema 2020-12 (core, applicator, unevaluated, validation,
/// meta-data, format, content), the 2019-09 and draft-7 spellings a 2020-12 reader still
/// meets, and OpenAPI 3.1's own (`discriminator`, `xml`, `externalDocs`, `example`).
pub(crate) const KEYWORDS: [&str; 66] = [
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

/// What a keyword's value holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Holds {
    /// One schema (an object).
    Schema,
    /// A list of schemas.
    List,
    /// A map of names to schemas.
    Map,
}

/// Keywords whose value is one schema.
const SCHEMA: [&str; 12] = [
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
/// Keywords whose value is a list of schemas (and `items`, in its pre-2020 list form).
const LIST: [&str; 4] = ["allOf", "anyOf", "oneOf", "prefixItems"];
/// Keywords whose value maps names to schemas.
const MAP: [&str; 5] = [
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];

/// What `value`, the value of `keyword` in a schema object, holds.
pub(crate) fn holds(keyword: &str, value: &Value) -> Option<Holds> {
    match value {
        Value::Object(_) if SCHEMA.contains(&keyword) => Some(Holds::Schema),
        Value::Object(_) if MAP.contains(&keyword) => Some(Holds::Map),
        Value::Array(_) if LIST.contains(&keyword) || keyword == "items" => Some(Holds::List),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_keyword_holds_schemas_only_in_its_shape() {
        assert_eq!(holds("items", &json!({})), Some(Holds::Schema));
        assert_eq!(holds("items", &json!([{}])), Some(Holds::List));
        assert_eq!(holds("anyOf", &json!([{}])), Some(Holds::List));
        assert_eq!(holds("definitions", &json!({"a": {}})), Some(Holds::Map));
        assert_eq!(holds("then", &json!({})), Some(Holds::Schema));
        // A boolean schema, a list where a schema goes, data keywords: nothing to walk.
        assert_eq!(holds("additionalProperties", &json!(false)), None);
        assert_eq!(holds("not", &json!([{}])), None);
        assert_eq!(holds("anyOf", &json!({})), None);
        for data in ["enum", "const", "default", "examples", "example"] {
            assert_eq!(holds(data, &json!({"type": "object"})), None, "{data}");
            assert_eq!(holds(data, &json!([{"type": "object"}])), None, "{data}");
        }
    }
}
