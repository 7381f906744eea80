//! Where the objects of an OpenAPI document are, by their place in the document's
//! structure (OpenAPI 3.0, 3.1 and 3.2 alike), never by a key's name.
//!
//! Takes: a whole document (`document`) or one Operation Object (`operation`). Returns:
//! the JSON pointer and kind of every object the specification defines there — path
//! items, operations, parameters, headers, request bodies, responses, media types,
//! encodings, callbacks, examples, links, security schemes, and the outermost Schema
//! Objects (the ones not inside another schema) — in document order.
//! Must never: guess from a key's name (a parameter component called `schema`, a
//! property called `parameters` are data, not structure), walk into a schema, an
//! example's value or an `x-` extension, or follow a `$ref` (its target is listed at
//! its own place, once).

use serde_json::Value;

use crate::model::escape;

/// What the specification says the object at a place is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    PathItem,
    Operation,
    Parameter,
    Header,
    RequestBody,
    Response,
    MediaType,
    Encoding,
    Callback,
    Example,
    Link,
    SecurityScheme,
    /// An outermost Schema Object (a mapping or a boolean).
    Schema,
}

/// One object of the document: its pointer, its kind, and whether it is written as a
/// Reference Object (`$ref`; a Schema Object with `$ref` is still a schema).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Place {
    pub pointer: String,
    pub kind: Kind,
    pub reference: bool,
}

/// The HTTP methods a path item holds as fixed fields: OpenAPI 3.0/3.1's eight, and
/// 3.2's `query`.
const PATH_ITEM_METHODS: [&str; 9] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace", "query",
];

/// Every object of a whole document, in document order.
pub(crate) fn document(root: &Value) -> Vec<Place> {
    let mut w = Walker::default();
    let Some(root) = root.as_object() else {
        return w.out;
    };
    for (key, value) in root {
        let at = format!("/{}", escape(key));
        match key.as_str() {
            "paths" => w.entries_but_extensions(value, &at, Kind::PathItem),
            "webhooks" => w.entries(value, &at, Kind::PathItem),
            "components" => w.components(value, &at),
            _ => {}
        }
    }
    w.out
}

/// Every object of one Operation Object whose pointer is `at`, itself included.
pub(crate) fn operation(op: &Value, at: &str) -> Vec<Place> {
    let mut w = Walker::default();
    w.visit(op, at, Kind::Operation);
    w.out
}

/// The pointers of the outermost Schema Objects of `places`.
pub(crate) fn schemas(places: &[Place]) -> impl Iterator<Item = &str> {
    places
        .iter()
        .filter(|p| p.kind == Kind::Schema)
        .map(|p| p.pointer.as_str())
}

#[derive(Default)]
struct Walker {
    out: Vec<Place>,
}

impl Walker {
    /// Each value of the mapping at `at` is an object of `kind`.
    fn entries(&mut self, value: &Value, at: &str, kind: Kind) {
        for (name, child) in value.as_object().into_iter().flatten() {
            self.visit(child, &format!("{at}/{}", escape(name)), kind);
        }
    }

    /// `entries` of a mapping whose `x-` keys are extensions (`paths`, `responses`): a
    /// header or a media type may be named `x-…`, a path or a status code may not.
    fn entries_but_extensions(&mut self, value: &Value, at: &str, kind: Kind) {
        for (name, child) in value.as_object().into_iter().flatten() {
            if !name.starts_with("x-") {
                self.visit(child, &format!("{at}/{}", escape(name)), kind);
            }
        }
    }

    /// Each item of the list at `at` is an object of `kind`.
    fn items(&mut self, value: &Value, at: &str, kind: Kind) {
        for (i, child) in value.as_array().into_iter().flatten().enumerate() {
            self.visit(child, &format!("{at}/{i}"), kind);
        }
    }

    fn components(&mut self, value: &Value, at: &str) {
        for (section, entries) in value.as_object().into_iter().flatten() {
            let kind = match section.as_str() {
                "schemas" => Kind::Schema,
                "responses" => Kind::Response,
                "parameters" => Kind::Parameter,
                "examples" => Kind::Example,
                "requestBodies" => Kind::RequestBody,
                "headers" => Kind::Header,
                "securitySchemes" => Kind::SecurityScheme,
                "links" => Kind::Link,
                "callbacks" => Kind::Callback,
                "pathItems" => Kind::PathItem,
                "mediaTypes" => Kind::MediaType,
                _ => continue,
            };
            self.entries(entries, &format!("{at}/{}", escape(section)), kind);
        }
    }

    fn visit(&mut self, value: &Value, at: &str, kind: Kind) {
        if kind == Kind::Schema {
            if value.is_object() || value.is_boolean() {
                self.out.push(Place {
                    pointer: at.to_string(),
                    kind,
                    reference: false,
                });
            }
            return;
        }
        let Some(map) = value.as_object() else {
            return;
        };
        let reference = map.get("$ref").is_some_and(Value::is_string);
        self.out.push(Place {
            pointer: at.to_string(),
            kind,
            reference,
        });
        // A Reference Object holds nothing else; a path item's `$ref` sits beside its
        // own fields, which are still its own.
        if reference && kind != Kind::PathItem {
            return;
        }
        let field = |key: &str| format!("{at}/{}", escape(key));
        for (key, child) in map {
            let here = field(key);
            match (kind, key.as_str()) {
                (Kind::PathItem, k) if PATH_ITEM_METHODS.contains(&k) => {
                    self.visit(child, &here, Kind::Operation);
                }
                (Kind::PathItem, "additionalOperations") => {
                    self.entries(child, &here, Kind::Operation);
                }
                (Kind::PathItem | Kind::Operation, "parameters") => {
                    self.items(child, &here, Kind::Parameter);
                }
                (Kind::Operation, "requestBody") => self.visit(child, &here, Kind::RequestBody),
                (Kind::Operation, "responses") => {
                    self.entries_but_extensions(child, &here, Kind::Response);
                }
                (Kind::Operation, "callbacks") => self.entries(child, &here, Kind::Callback),
                (Kind::Callback, k) if !k.starts_with("x-") => {
                    self.visit(child, &here, Kind::PathItem);
                }
                (Kind::Parameter | Kind::Header | Kind::MediaType, "schema")
                | (Kind::MediaType, "itemSchema") => self.visit(child, &here, Kind::Schema),
                (
                    Kind::Parameter | Kind::Header | Kind::RequestBody | Kind::Response,
                    "content",
                ) => {
                    self.entries(child, &here, Kind::MediaType);
                }
                (Kind::Parameter | Kind::Header | Kind::MediaType, "examples") => {
                    self.entries(child, &here, Kind::Example);
                }
                (Kind::Response | Kind::Encoding, "headers") => {
                    self.entries(child, &here, Kind::Header);
                }
                (Kind::Response, "links") => self.entries(child, &here, Kind::Link),
                (Kind::MediaType | Kind::Encoding, "encoding") => {
                    self.entries(child, &here, Kind::Encoding);
                }
                (Kind::MediaType | Kind::Encoding, "prefixEncoding") => {
                    self.items(child, &here, Kind::Encoding);
                }
                (Kind::MediaType | Kind::Encoding, "itemEncoding") => {
                    self.visit(child, &here, Kind::Encoding);
                }
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Issue 20: a parameter component named `schema` is a parameter, and a property
    /// named `parameters` is part of a schema, not a list of parameters.
    #[test]
    fn places_come_from_the_structure_not_from_key_names() {
        let doc = json!({
            "openapi": "3.0.3",
            "paths": { "/a": {
                "parameters": [{ "$ref": "#/components/parameters/schema" }],
                "get": {
                    "responses": { "200": { "description": "ok",
                        "headers": { "schema": { "schema": { "type": "string" } },
                                     "x-request-id": { "schema": { "type": "string" } } },
                        "content": { "application/json": {
                            "schema": { "properties": { "parameters": { "type": "array" } } },
                            "examples": { "schema": { "value": { "schema": 1 } } } } } } }
                },
                "x-schema": { "schema": {} }
            }, "x-paths": { "get": { "parameters": [{ "schema": {} }] } } },
            "components": {
                "parameters": { "schema": { "name": "schema", "in": "query", "schema": { "type": "string" } } },
                "schemas": { "parameters": { "type": "object" } },
                "x-other": { "schema": {} }
            }
        });
        let places = document(&doc);
        let schemas: Vec<&str> = schemas(&places).collect();
        assert_eq!(
            schemas,
            [
                "/paths/~1a/get/responses/200/headers/schema/schema",
                "/paths/~1a/get/responses/200/headers/x-request-id/schema",
                "/paths/~1a/get/responses/200/content/application~1json/schema",
                "/components/parameters/schema/schema",
                "/components/schemas/parameters",
            ]
        );
        let kind = |p: &str| places.iter().find(|x| x.pointer == p).map(|x| x.kind);
        assert_eq!(kind("/components/parameters/schema"), Some(Kind::Parameter));
        assert_eq!(
            kind("/paths/~1a/get/responses/200/content/application~1json/examples/schema"),
            Some(Kind::Example)
        );
        let reference = places
            .iter()
            .find(|p| p.pointer == "/paths/~1a/parameters/0")
            .unwrap();
        assert!(reference.reference && reference.kind == Kind::Parameter);
    }

    #[test]
    fn openapi_3_2_places_are_found() {
        let doc = json!({
            "paths": { "/s": {
                "query": { "requestBody": { "content": { "application/json": { "schema": {} } } } },
                "additionalOperations": { "LINK": { "responses": { "200": { "description": "ok" } } } },
                "get": { "responses": { "200": { "description": "ok", "content": {
                    "application/jsonl": { "itemSchema": { "type": "object" } },
                    "multipart/mixed": { "prefixEncoding": [{ "headers": { "X": { "schema": true } } }] } } } } }
            } },
            "components": { "mediaTypes": { "Event": { "schema": { "type": "string" } } } }
        });
        let places = document(&doc);
        let schemas: Vec<&str> = schemas(&places).collect();
        assert_eq!(
            schemas,
            [
                "/paths/~1s/query/requestBody/content/application~1json/schema",
                "/paths/~1s/get/responses/200/content/application~1jsonl/itemSchema",
                "/paths/~1s/get/responses/200/content/multipart~1mixed/prefixEncoding/0/headers/X/schema",
                "/components/mediaTypes/Event/schema",
            ]
        );
        assert!(
            places
                .iter()
                .any(|p| p.pointer == "/paths/~1s/additionalOperations/LINK"
                    && p.kind == Kind::Operation)
        );
    }
}
