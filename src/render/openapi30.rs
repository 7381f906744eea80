//! Connector → `openapi.3.0.json`, for tools that only read OpenAPI 3.0.
//!
//! Takes: the OpenAPI 3.1 document (`openapi::document`) and the connector (for spans).
//! Returns: the 3.0.3 JSON text and a finding for every 3.1-only construct: an error
//! where it cannot be expressed in 3.0, a warning where expressing it loses something
//! (extra `examples`).
//! Must never: drop a schema keyword silently. Exact rewrites: `type: [T, "null"]` →
//! `type: T, nullable: true`; several types → `anyOf`; `const` → one-value `enum`;
//! `examples` → `example`; numeric `exclusiveMinimum/Maximum` → `minimum/maximum` +
//! boolean; boolean schemas → `{}` / `{not: {}}`.

use serde_json::{Map, Value, json};

use crate::base::Base;
use crate::diagnostics::{Diagnostic, Finding, Severity, Source, Span};
use crate::model::{Connector, OpenapiVersion, escape};

use super::openapi;

/// Keywords a 3.0 Schema Object may hold as they are (besides `x-` extensions).
const KEPT: [&str; 27] = [
    "title",
    "multipleOf",
    "maximum",
    "minimum",
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
    "$ref",
    "type",
];

/// Where a schema is, for findings: the name and field shown in the message, and the
/// place (in the manifest, or in the base document).
#[derive(Clone)]
struct Place {
    id: String,
    field: String,
    span: Span,
    source: Source,
}

/// Collects what could not be carried over for one schema.
struct Converter<'a> {
    place: Place,
    findings: &'a mut Vec<Finding>,
}

impl Converter<'_> {
    fn report(&mut self, pointer: &str, construct: String, severity: Severity) {
        self.findings.push(Finding {
            diagnostic: Diagnostic::Openapi30Unsupported {
                id: self.place.id.clone(),
                pointer: format!("`{}{pointer}`", self.place.field),
                construct,
                span: self.place.span,
            },
            severity,
            source: self.place.source,
        });
    }

    fn schema(&mut self, schema: &Value, pointer: &str) -> Value {
        let map = match schema {
            Value::Bool(true) => return json!({}),
            Value::Bool(false) => return json!({ "not": {} }),
            Value::Object(map) => map,
            other => return other.clone(),
        };
        if map.contains_key("$ref") && map.len() > 1 {
            self.report(
                pointer,
                "keywords beside `$ref` (3.0 ignores them)".to_string(),
                Severity::Error,
            );
        }
        let mut out = Map::new();
        for (key, value) in map {
            let here = format!("{pointer}/{key}");
            match key.as_str() {
                "type" => self.type_(value, &here, &mut out),
                "const" if !map.contains_key("enum") => {
                    out.insert("enum".into(), json!([value]));
                }
                "examples" => match value.as_array() {
                    Some(list) if !list.is_empty() => {
                        if list.len() > 1 && !map.contains_key("example") {
                            self.report(
                                &here,
                                format!(
                                    "{} `examples`; 3.0 has one `example`, so only the first is kept",
                                    list.len()
                                ),
                                Severity::Warning,
                            );
                        }
                        out.entry("example").or_insert_with(|| list[0].clone());
                    }
                    _ => {}
                },
                "exclusiveMinimum" | "exclusiveMaximum" if value.is_number() => {
                    let bound = if key == "exclusiveMinimum" {
                        "minimum"
                    } else {
                        "maximum"
                    };
                    if map.contains_key(bound) {
                        self.report(
                            &here,
                            format!("a numeric `{key}` beside `{bound}`"),
                            Severity::Error,
                        );
                    } else {
                        out.insert(bound.into(), value.clone());
                        out.insert(key.clone(), json!(true));
                    }
                }
                "exclusiveMinimum" | "exclusiveMaximum" => {
                    out.insert(key.clone(), value.clone());
                }
                "properties" => {
                    let props = value
                        .as_object()
                        .map(|p| {
                            p.iter()
                                .map(|(name, s)| {
                                    (name.clone(), self.schema(s, &format!("{here}/{name}")))
                                })
                                .collect::<Map<_, _>>()
                        })
                        .unwrap_or_default();
                    out.insert(key.clone(), Value::Object(props));
                }
                "items" | "not" => {
                    let converted = self.schema(value, &here);
                    out.insert(key.clone(), converted);
                }
                "additionalProperties" => {
                    let converted = match value {
                        Value::Bool(_) => value.clone(),
                        _ => self.schema(value, &here),
                    };
                    out.insert(key.clone(), converted);
                }
                "allOf" | "anyOf" | "oneOf" => {
                    let list = value
                        .as_array()
                        .map(|l| {
                            l.iter()
                                .enumerate()
                                .map(|(i, s)| self.schema(s, &format!("{here}/{i}")))
                                .collect()
                        })
                        .unwrap_or_default();
                    out.insert(key.clone(), Value::Array(list));
                }
                k if k.starts_with("x-") || KEPT.contains(&k) => {
                    out.insert(key.clone(), value.clone());
                }
                k => self.report(&here, format!("`{k}`"), Severity::Error),
            }
        }
        Value::Object(out)
    }

    fn type_(&mut self, value: &Value, pointer: &str, out: &mut Map<String, Value>) {
        let Some(list) = value.as_array() else {
            if value == "null" {
                self.report(pointer, "`type: null`".to_string(), Severity::Error);
            } else {
                out.insert("type".into(), value.clone());
            }
            return;
        };
        let nullable = list.iter().any(|t| t == "null");
        let types: Vec<&Value> = list.iter().filter(|t| *t != "null").collect();
        match types.as_slice() {
            [] => self.report(pointer, "`type: [null]`".to_string(), Severity::Error),
            [one] => {
                out.insert("type".into(), (*one).clone());
            }
            many => {
                let any: Vec<Value> = many.iter().map(|t| json!({ "type": t })).collect();
                out.insert("anyOf".into(), Value::Array(any));
            }
        }
        if nullable {
            out.insert("nullable".into(), json!(true));
        }
    }
}

pub fn render(
    connector: &Connector,
    base: Option<&Base>,
    descriptions: &[String],
) -> (String, Vec<Finding>) {
    let mut doc = openapi::document(connector, descriptions);
    let mut findings = Vec::new();
    if connector.document.version == OpenapiVersion::V30 {
        // The provider's document is 3.0 already: nothing to convert.
        return (super::json_text(&doc), findings);
    }
    doc["openapi"] = json!("3.0.3");
    let mut locations = Vec::new();
    schema_locations(&doc, "", &mut locations);
    for pointer in locations {
        let place = place(connector, base, &doc, &pointer);
        let Some(schema) = doc.pointer_mut(&pointer) else {
            continue;
        };
        let mut c = Converter {
            place,
            findings: &mut findings,
        };
        *schema = c.schema(schema, "");
    }
    (super::json_text(&doc), findings)
}

/// Every Schema Object that is not inside another one: components' schemas, and the
/// `schema` of every parameter, header and media type, wherever they sit.
fn schema_locations(value: &Value, pointer: &str, out: &mut Vec<String>) {
    let Value::Object(map) = value else {
        if let Value::Array(list) = value {
            for (i, v) in list.iter().enumerate() {
                schema_locations(v, &format!("{pointer}/{i}"), out);
            }
        }
        return;
    };
    for (key, child) in map {
        let here = format!("{pointer}/{}", escape(key));
        if key == "schemas" && pointer == "/components" {
            for name in child.as_object().into_iter().flatten().map(|(k, _)| k) {
                out.push(format!("{here}/{}", escape(name)));
            }
        } else if key == "schema" && (child.is_object() || child.is_boolean()) {
            out.push(here);
        } else if !matches!(key.as_str(), "example" | "examples" | "default") {
            schema_locations(child, &here, out);
        }
    }
}

/// Where the schema at `pointer` came from. Base mode: the same pointer in the base
/// document. Inline: the manifest node it was written at (`input`, `output`, a query
/// parameter), named as the manifest names it.
fn place(connector: &Connector, base: Option<&Base>, doc: &Value, pointer: &str) -> Place {
    let op = connector
        .operations
        .iter()
        .find(|op| pointer.starts_with(&format!("{}/", op.pointer())));
    if let Some(base) = base {
        return Place {
            id: op.map_or_else(|| "components".to_string(), |op| op.id.clone()),
            field: String::new(),
            span: base.span(pointer),
            source: Source::Base,
        };
    }
    let Some(op) = op else {
        return Place {
            id: "components".to_string(),
            field: pointer.to_string(),
            span: Span::from((0, 0)),
            source: Source::Manifest,
        };
    };
    let rest = &pointer[op.pointer().len()..];
    let (field, span) = if rest.starts_with("/requestBody/") {
        ("input".to_string(), op.origin.input)
    } else if rest.starts_with("/responses/") {
        ("output".to_string(), op.origin.output)
    } else if let Some(param) = rest.strip_prefix("/parameters/") {
        let index = param.split('/').next().unwrap_or_default();
        let name = doc
            .pointer(&format!("{}/parameters/{index}/name", op.pointer()))
            .and_then(Value::as_str)
            .unwrap_or_default();
        let span = op
            .origin
            .query
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, s)| *s);
        (format!("query[{name}].schema"), span)
    } else {
        (rest.trim_start_matches('/').to_string(), None)
    };
    Place {
        id: op.id.clone(),
        field,
        span: span.unwrap_or(op.origin.id),
        source: Source::Manifest,
    }
}
