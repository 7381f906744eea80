//! Connector → `openapi.3.0.json`, for tools that only read OpenAPI 3.0.
//!
//! Takes: the OpenAPI 3.1 document (`openapi::document`) and the connector (for spans).
//! Returns: the 3.0.3 JSON text and a finding for every 3.1-only construct: an error
//! where it cannot be expressed in 3.0, a warning where expressing it loses something
//! (extra `examples`); and a warning for each keyword no vocabulary defines (`embed`),
//! carried as an `x-` key (`x-embed`), which is what JSON Schema's "ignore unknown
//! keywords" means in a 3.0 Schema Object, where every key must be known.
//! Must never: drop a schema keyword silently. Exact rewrites: `type: [T, "null"]` →
//! `type: T, nullable: true`; several types → `anyOf`; `const` → one-value `enum`;
//! `examples` → `example`; numeric `exclusiveMinimum/Maximum` → `minimum/maximum` +
//! boolean; boolean schemas → `{}` / `{not: {}}`.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value, json};

use crate::base::Base;
use crate::base::places::{self, Kind};
use crate::diagnostics::{Diagnostic, Finding, Severity, Source, Span};
use crate::model::{Connector, Operation, escape};
use crate::subschemas::{KEYWORDS, KEYWORDS_30};

use super::openapi;

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
    base: Option<&'a Base>,
    /// The base pointer of the schema being converted (base mode).
    location: String,
    findings: &'a mut Vec<Finding>,
    /// The `type` of each component schema that has one, by reference.
    types: &'a HashMap<String, Value>,
    /// What was reported already, by place and construct: a schema reused through YAML
    /// aliases is one schema, reported once.
    seen: &'a mut HashSet<(usize, String, String)>,
}

impl Converter<'_> {
    fn report(&mut self, pointer: &str, construct: String, severity: Severity) {
        let span = match self.base {
            Some(base) => base.span(&format!("{}{pointer}", self.location)),
            None => self.place.span,
        };
        if !self
            .seen
            .insert((span.offset(), pointer.to_string(), construct.clone()))
        {
            return;
        }
        self.findings.push(Finding {
            diagnostic: Diagnostic::Openapi30Unsupported {
                id: self.place.id.clone(),
                pointer: format!("`{}{pointer}`", self.place.field),
                construct,
                span,
            },
            severity,
            source: self.place.source,
        });
    }

    /// A keyword no vocabulary defines, carried as `x-<keyword>` (or, when the schema has
    /// that key already, left out): either way a warning.
    fn extension(&mut self, pointer: &str, keyword: &str, what: String) {
        let span = match self.base {
            Some(base) => base.span(&format!("{}{pointer}", self.location)),
            None => self.place.span,
        };
        if !self
            .seen
            .insert((span.offset(), pointer.to_string(), keyword.to_string()))
        {
            return;
        }
        self.findings.push(Finding {
            diagnostic: Diagnostic::Openapi30Extension {
                id: self.place.id.clone(),
                pointer: format!("`{}{pointer}`", self.place.field),
                keyword: keyword.to_string(),
                what,
                span,
            },
            severity: Severity::Warning,
            source: self.place.source,
        });
    }

    fn schema(&mut self, schema: &Value, pointer: &str) -> Value {
        let map = match schema {
            Value::Bool(true) => return json!({}),
            Value::Bool(false) => return json!({ "not": {} }),
            Value::Object(map) => map,
            other => {
                self.report(
                    pointer,
                    format!("{} where a schema belongs", kind(other)),
                    Severity::Error,
                );
                return other.clone();
            }
        };
        // 3.1 spellings 3.0 has an exact (or conventional) form for.
        if let Some(rewritten) = nullable_union(map, self.types).or_else(|| ref_with_siblings(map))
        {
            return self.schema(&Value::Object(rewritten), pointer);
        }
        let mut out = Map::new();
        for (key, value) in map {
            let here = format!("{pointer}/{}", escape(key));
            match key.as_str() {
                "type" => self.type_(value, &here, &mut out),
                "const" if !map.contains_key("enum") => {
                    out.insert("enum".into(), json!([value]));
                }
                "examples" => match value.as_array() {
                    Some(list) if !list.is_empty() => {
                        let kept = usize::from(!map.contains_key("example"));
                        if list.len() > kept {
                            self.report(
                                &here,
                                format!(
                                    "{} `examples` where 3.0 has one `example`, so {} dropped",
                                    list.len(),
                                    if kept == 1 {
                                        "all but the first are"
                                    } else {
                                        "they are (`example` is kept)"
                                    }
                                ),
                                Severity::Warning,
                            );
                        }
                        out.entry("example").or_insert_with(|| list[0].clone());
                    }
                    Some(_) => {}
                    None => self.report(
                        &here,
                        format!("`examples` as {}, not a list", kind(value)),
                        Severity::Error,
                    ),
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
                "required" if value.as_array().is_some_and(Vec::is_empty) => {
                    // 3.0 requires at least one name; an empty list means the same as none.
                }
                "properties" => match value.as_object() {
                    Some(props) => {
                        let props = props
                            .iter()
                            .map(|(name, s)| {
                                let at = format!("{here}/{}", escape(name));
                                (name.clone(), self.schema(s, &at))
                            })
                            .collect::<Map<_, _>>();
                        out.insert(key.clone(), Value::Object(props));
                    }
                    None => self.report(
                        &here,
                        format!("`properties` as {}, not a mapping", kind(value)),
                        Severity::Error,
                    ),
                },
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
                "allOf" | "anyOf" | "oneOf" => match value.as_array() {
                    Some(list) => {
                        let list = list
                            .iter()
                            .enumerate()
                            .map(|(i, s)| self.schema(s, &format!("{here}/{i}")))
                            .collect();
                        out.insert(key.clone(), Value::Array(list));
                    }
                    None => self.report(
                        &here,
                        format!("`{key}` as {}, not a list", kind(value)),
                        Severity::Error,
                    ),
                },
                // 3.0 says "binary" and "byte" with `format`.
                "contentEncoding" if value == "base64" && !map.contains_key("format") => {
                    out.insert("format".into(), json!("byte"));
                }
                "contentMediaType"
                    if !map.contains_key("contentEncoding") && !map.contains_key("format") =>
                {
                    out.insert("format".into(), json!("binary"));
                }
                // Kept as they are: 3.0's keywords (those it rewrites or walks into are
                // taken above), `$ref` and `x-` extensions.
                k if k.starts_with("x-") || k == "$ref" || KEYWORDS_30.contains(&k) => {
                    out.insert(key.clone(), value.clone());
                }
                // JSON Schema ignores a keyword no vocabulary defines; 3.0 allows no
                // unknown key but ignores `x-` ones, which says the same.
                k if !k.starts_with('$') && !KEYWORDS.contains(&k) => {
                    let extension = format!("x-{k}");
                    let what = if map.contains_key(&extension) {
                        format!("it is left out of openapi.3.0.json, where `{extension}` is taken")
                    } else {
                        out.insert(extension.clone(), value.clone());
                        format!("openapi.3.0.json writes it as `{extension}`")
                    };
                    self.extension(&here, k, what);
                }
                k => self.report(&here, format!("`{k}`"), Severity::Error),
            }
        }
        // A list of types became an `anyOf` of them; the schema's own `anyOf` must hold
        // too, so both go under `allOf` rather than one replacing the other.
        if let Some(types) = out.remove(TYPE_UNION) {
            match out.remove("anyOf") {
                None => {
                    out.insert("anyOf".into(), types);
                }
                Some(own) => {
                    let both = [json!({ "anyOf": types }), json!({ "anyOf": own })];
                    match out.get_mut("allOf") {
                        Some(Value::Array(all)) => all.extend(both),
                        _ => {
                            out.insert("allOf".into(), Value::Array(both.to_vec()));
                        }
                    }
                }
            }
        }
        // A nullable enum must list null itself to accept it.
        if out.get("nullable") == Some(&json!(true))
            && let Some(Value::Array(values)) = out.get_mut("enum")
            && !values.contains(&Value::Null)
        {
            values.push(Value::Null);
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
                // 3.0 reads `nullable` only beside `type`: each branch says it.
                let any: Vec<Value> = many
                    .iter()
                    .map(|t| {
                        if nullable {
                            json!({ "type": t, "nullable": true })
                        } else {
                            json!({ "type": t })
                        }
                    })
                    .collect();
                out.insert(TYPE_UNION.into(), Value::Array(any));
                return;
            }
        }
        if nullable {
            out.insert("nullable".into(), json!(true));
        }
    }
}

/// Where `type_` leaves the `anyOf` a list of types becomes, until the schema's own
/// keywords are all converted (not a keyword anyone writes: it has a space).
const TYPE_UNION: &str = "type union";

/// What a JSON value is, for messages.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "text",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

/// `anyOf`/`oneOf` of schemas and `{type: "null"}` (the 3.1 way to say "or null") → the
/// 3.0 form that accepts the same values. 3.0.3 reads `nullable: true` only beside
/// `type`, and it adds null to that `type` alone: every other keyword (an `allOf`
/// around a `$ref` included) still refuses null. So an inline schema with a type takes
/// `nullable: true` itself (one branch: merged into the outer schema; several: each
/// branch, the first only for `oneOf`, where a value must match exactly one); anything
/// else (a `$ref`, a schema of no single type, keywords that clash with the outer ones)
/// keeps its union, with `{type: "null"}` written as a schema that accepts only null.
fn nullable_union(
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
fn ref_with_siblings(map: &Map<String, Value>) -> Option<Map<String, Value>> {
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

pub(super) fn render(
    connector: &Connector,
    base: Option<&Base>,
    descriptions: &[String],
) -> (String, Vec<Finding>) {
    let mut doc = openapi::document(connector, descriptions);
    let mut findings = Vec::new();
    doc["openapi"] = json!("3.0.3");
    document_level(connector, base, &mut doc, &mut findings);
    // By their place in the document: a parameter named `schema` is no Schema Object.
    let places = places::document(&doc);
    let locations: Vec<String> = places::schemas(&places).map(str::to_string).collect();
    let mut seen = HashSet::new();
    // Each schema location finds its operation by pointer: a search was quadratic.
    let by_pointer: HashMap<String, &Operation> = connector
        .operations
        .iter()
        .map(|op| (op.pointer(), op))
        .collect();
    let types: HashMap<String, Value> = doc
        .pointer("/components/schemas")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(name, s)| {
            let t = s.get("type").filter(|t| t.is_string())?;
            Some((format!("#/components/schemas/{}", escape(name)), t.clone()))
        })
        .collect();
    for pointer in locations {
        let place = place(connector, &by_pointer, base, &doc, &pointer);
        let Some(schema) = doc.pointer_mut(&pointer) else {
            continue;
        };
        let mut c = Converter {
            place,
            base,
            location: pointer.clone(),
            findings: &mut findings,
            types: &types,
            seen: &mut seen,
        };
        *schema = c.schema(schema, "");
    }
    for place in places
        .iter()
        .filter(|p| p.reference && p.kind != Kind::PathItem)
    {
        reference_siblings(connector, base, &mut doc, &place.pointer, &mut findings);
    }
    (super::json_text(&doc), findings)
}

/// The 3.1 constructs outside schemas: `info.license.identifier` becomes the SPDX page
/// as `url`; `info.summary` and `jsonSchemaDialect`, which 3.0 has no place for, are
/// dropped with a warning; `components.pathItems` cannot be expressed.
fn document_level(
    connector: &Connector,
    base: Option<&Base>,
    doc: &mut Value,
    findings: &mut Vec<Finding>,
) {
    // 3.1 lets an operation leave out `responses`; 3.0 requires them.
    for op in &connector.operations {
        if !op.http.contains_key("responses") {
            let construct = "no `responses` (3.0 requires them on every operation)";
            let mut finding = document_finding(
                connector,
                base,
                &op.pointer(),
                construct.to_string(),
                Severity::Error,
            );
            if let Diagnostic::Openapi30Unsupported { id, .. } = &mut finding.diagnostic {
                id.clone_from(&op.id);
            }
            findings.push(finding);
        }
    }
    let mut report = |pointer: &str, construct: String, severity| {
        findings.push(document_finding(
            connector, base, pointer, construct, severity,
        ));
    };
    if let Some(license) = doc
        .pointer_mut("/info/license")
        .and_then(Value::as_object_mut)
        && let Some(identifier) = license.remove("identifier")
        && !license.contains_key("url")
    {
        let id = identifier.as_str().unwrap_or_default();
        license.insert(
            "url".into(),
            json!(format!("https://spdx.org/licenses/{id}.html")),
        );
    }
    if let Some(info) = doc.get_mut("info").and_then(Value::as_object_mut)
        && info.remove("summary").is_some()
    {
        report(
            "/info/summary",
            "`info.summary`, which 3.0 has no place for; it is dropped".to_string(),
            Severity::Warning,
        );
    }
    if let Some(root) = doc.as_object_mut()
        && root.remove("jsonSchemaDialect").is_some()
    {
        report(
            "/jsonSchemaDialect",
            "`jsonSchemaDialect`, which 3.0 has no place for; it is dropped".to_string(),
            Severity::Warning,
        );
    }
    if doc.pointer("/components/pathItems").is_some() {
        report(
            "/components/pathItems",
            "`components.pathItems`".to_string(),
            Severity::Error,
        );
    }
}

/// A Reference Object outside schemas with keys beside `$ref` (3.1 allows `summary`
/// and `description` there; 3.0 allows nothing): the extra keys are dropped with a
/// warning. A path item's `$ref` is one of its fields in 3.0 too, so it is not one.
fn reference_siblings(
    connector: &Connector,
    base: Option<&Base>,
    doc: &mut Value,
    pointer: &str,
    findings: &mut Vec<Finding>,
) {
    let Some(map) = doc.pointer_mut(pointer).and_then(Value::as_object_mut) else {
        return;
    };
    if map.len() < 2 {
        return;
    }
    let dropped: Vec<String> = map
        .keys()
        .filter(|k| *k != "$ref")
        .map(|k| format!("`{k}`"))
        .collect();
    map.retain(|k, _| k == "$ref");
    findings.push(document_finding(
        connector,
        base,
        pointer,
        format!(
            "{} beside `$ref` in a reference, which 3.0 does not allow; dropped",
            dropped.join(", ")
        ),
        Severity::Warning,
    ));
}

/// A finding about a construct outside schemas, at its place.
fn document_finding(
    connector: &Connector,
    base: Option<&Base>,
    pointer: &str,
    construct: String,
    severity: Severity,
) -> Finding {
    let (id, span, source) = if let Some(base) = base {
        ("document".to_string(), base.span(pointer), Source::Base)
    } else {
        let first = connector.operations.first();
        let span = first.map_or(Span::from((0, 0)), |op| op.origin.entry);
        ("document".to_string(), span, Source::Manifest)
    };
    Finding {
        diagnostic: Diagnostic::Openapi30Unsupported {
            id,
            pointer: format!("`{pointer}`"),
            construct,
            span,
        },
        severity,
        source,
    }
}

/// Where the schema at `pointer` came from. Base mode: the same pointer in the base
/// document. Inline: the manifest node it was written at (`input`, `output`, a query
/// parameter), named as the manifest names it.
fn place(
    connector: &Connector,
    by_pointer: &HashMap<String, &Operation>,
    base: Option<&Base>,
    doc: &Value,
    pointer: &str,
) -> Place {
    // `/paths/<path>/<method>/…`: the operation is the first three segments.
    let op = pointer
        .match_indices('/')
        .nth(3)
        .and_then(|(end, _)| by_pointer.get(&pointer[..end]).copied());
    if base.is_some() {
        return Place {
            id: op.map_or_else(|| "components".to_string(), |op| op.id.clone()),
            field: String::new(),
            // Located only when a finding needs it (`Converter::report`): indexing the
            // base document's text is the slowest step of a build.
            span: Span::from((0, 0)),
            source: Source::Base,
        };
    }
    let Some(op) = op else {
        // A shared schema: at its entry under `schemas:`.
        let name = pointer
            .strip_prefix("/components/schemas/")
            .map(|rest| crate::model::unescape(rest.split('/').next().unwrap_or_default()));
        let span = name.and_then(|n| {
            connector
                .schema_spans
                .iter()
                .find(|(s, _)| *s == n)
                .map(|(_, at)| *at)
        });
        return Place {
            id: "schemas".to_string(),
            field: pointer.to_string(),
            span: span.unwrap_or(Span::from((0, 0))),
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
