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

use crate::diagnostics::{Diagnostic, Finding, Severity, Span};
use crate::model::{Connector, Operation};

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

/// Collects what could not be carried over for one schema of one operation.
struct Converter<'a> {
    op: &'a Operation,
    field: String,
    span: Span,
    findings: &'a mut Vec<Finding>,
}

impl Converter<'_> {
    fn report(&mut self, pointer: &str, construct: String, severity: Severity) {
        self.findings.push(Finding {
            diagnostic: Diagnostic::Openapi30Unsupported {
                id: self.op.id.clone(),
                pointer: format!("`{}{pointer}`", self.field),
                construct,
                span: self.span,
            },
            severity,
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

pub fn render(connector: &Connector, descriptions: &[String]) -> (String, Vec<Finding>) {
    let mut doc = openapi::document(connector, descriptions);
    let mut findings = Vec::new();
    doc["openapi"] = json!("3.0.3");
    for op in &connector.operations {
        let Some(object) = doc.pointer_mut(&format!(
            "/paths/{}/{}",
            op.path.replace('~', "~0").replace('/', "~1"),
            op.method.as_str()
        )) else {
            continue;
        };
        let mut convert = |field: String, span: Span, schema: &mut Value| {
            let mut c = Converter {
                op,
                field,
                span,
                findings: &mut findings,
            };
            *schema = c.schema(schema, "");
        };
        if let Some(params) = object.get_mut("parameters").and_then(Value::as_array_mut) {
            for p in params {
                let name = p["name"].as_str().unwrap_or_default().to_string();
                let span = op
                    .query
                    .iter()
                    .position(|q| q.name == name)
                    .and_then(|i| op.origin.query.get(i).copied())
                    .unwrap_or(op.origin.id);
                if let Some(schema) = p.get_mut("schema") {
                    convert(format!("query[{name}].schema"), span, schema);
                }
            }
        }
        if let Some(schema) = object.pointer_mut("/requestBody/content/application~1json/schema") {
            convert(
                "input".to_string(),
                op.origin.input.unwrap_or(op.origin.id),
                schema,
            );
        }
        if let Some(schema) = object.pointer_mut("/responses/200/content/application~1json/schema")
        {
            convert(
                "output".to_string(),
                op.origin.output.unwrap_or(op.origin.id),
                schema,
            );
        }
    }
    (super::json_text(&doc), findings)
}
