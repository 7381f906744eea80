//! Connector → `openapi.3.0.json`, for tools that only read OpenAPI 3.0.
//!
//! Takes: the OpenAPI 3.1 document (`openapi::document`) and the connector (for spans).
//! Returns: the 3.0.3 JSON text and its findings. What 3.0 cannot express is written the
//! nearest way it can be, or left out, each with an `openapi30-approximated` warning
//! naming the place, so that the target never stops the others' outputs:
//! `patternProperties` → `additionalProperties` of the union of their schemas; `items` as
//! a list → `items` of their union; a JSON Schema keyword 3.0 lacks (`prefixItems`, `if`,
//! `$defs`) → an `x-` key, as a keyword no vocabulary defines (`embed` → `x-embed`, an
//! `openapi30-extension` warning), which is what JSON Schema's "ignore unknown keywords"
//! means in a 3.0 Schema Object, where every key must be known; extra `examples`,
//! `info.summary`, `jsonSchemaDialect` → left out; no `responses` → a `default` one. An
//! error (`openapi30-unsupported`) only where a 3.0 client's request would change: a
//! `mutualTLS` security scheme.
//! Must never: drop a schema keyword silently. Exact rewrites: `type: [T, "null"]` →
//! `type: T, nullable: true`; several types → `anyOf`; `type: null` → `enum: [null]`;
//! `const` → one-value `enum`; `examples` → `example`; numeric
//! `exclusiveMinimum/Maximum` → `minimum/maximum` + boolean (beside a bound of its own
//! side, the stricter of the two); boolean schemas → `{}` / `{not: {}}`.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value, json};

use crate::base::Base;
use crate::base::places::{self, Kind};
use crate::diagnostics::{Diagnostic, Finding, Severity, Source, Span};
use crate::model::{Connector, Operation, escape};
use crate::subschemas::{KEYWORDS, KEYWORDS_30};

use super::openapi;

mod document;
mod unions;

use document::{document_level, reference_siblings};
use unions::{nullable_union, ref_with_siblings};

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
    /// Where `pointer` (within the schema being converted) is, for a finding; `None`
    /// when `construct` was reported there already.
    fn once(&mut self, pointer: &str, construct: &str) -> Option<Span> {
        let span = match self.base {
            Some(base) => base.span(&format!("{}{pointer}", self.location)),
            None => self.place.span,
        };
        self.seen
            .insert((span.offset(), pointer.to_string(), construct.to_string()))
            .then_some(span)
    }

    /// What 3.0 cannot say, written the nearest way (`what`: how), or left out.
    fn approximated(&mut self, pointer: &str, construct: String, what: &str) {
        let Some(span) = self.once(pointer, &construct) else {
            return;
        };
        self.findings.push(Finding {
            diagnostic: Diagnostic::Openapi30Approximated {
                id: self.place.id.clone(),
                pointer: format!("`{}{pointer}`", self.place.field),
                construct,
                what: what.to_string(),
                span,
            },
            severity: Severity::Warning,
            source: self.place.source,
        });
    }

    /// A keyword no vocabulary defines, carried as `x-<keyword>` (or, when the schema has
    /// that key already, left out): either way a warning.
    fn extension(&mut self, pointer: &str, keyword: &str, what: String) {
        let Some(span) = self.once(pointer, keyword) else {
            return;
        };
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
                self.approximated(
                    pointer,
                    format!("{} where a schema belongs", kind(other)),
                    "writes `{}` (any value) in its place",
                );
                return json!({});
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
                "type" => Self::type_(value, &mut out),
                "const" if !map.contains_key("enum") => {
                    out.insert("enum".into(), json!([value]));
                }
                "examples" => match value.as_array() {
                    Some(list) if !list.is_empty() => {
                        let kept = usize::from(!map.contains_key("example"));
                        if list.len() > kept {
                            self.approximated(
                                &here,
                                format!("{} `examples` (3.0 has one `example`)", list.len()),
                                if kept == 1 {
                                    "keeps the first as `example` and leaves the others out"
                                } else {
                                    "keeps `example` and leaves them out"
                                },
                            );
                        }
                        out.entry("example").or_insert_with(|| list[0].clone());
                    }
                    Some(_) => {}
                    None => self.approximated(
                        &here,
                        format!("`examples` as {}, not a list", kind(value)),
                        "leaves it out",
                    ),
                },
                "exclusiveMinimum" | "exclusiveMaximum" if value.is_number() => {
                    self.exclusive(map, key, value, &here, &mut out);
                }
                // Written with their numeric `exclusive…` counterpart, whichever binds.
                "minimum" | "maximum"
                    if value.is_number()
                        && map
                            .get(&format!("exclusive{}", capitalised(key)))
                            .is_some_and(Value::is_number) => {}
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
                    None => self.approximated(
                        &here,
                        format!("`properties` as {}, not a mapping", kind(value)),
                        "leaves it out",
                    ),
                },
                "patternProperties" => match value.as_object() {
                    Some(patterns) => self.pattern_properties(map, patterns, pointer, &mut out),
                    None => self.approximated(
                        &here,
                        format!("`patternProperties` as {}, not a mapping", kind(value)),
                        "leaves it out",
                    ),
                },
                // With `patternProperties`, written by it (the union of both).
                "additionalProperties"
                    if map.get("patternProperties").is_some_and(Value::is_object) => {}
                "items" if value.is_array() => {
                    self.items_list(value, &here, &mut out);
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
                "allOf" | "anyOf" | "oneOf" => match value.as_array() {
                    Some(list) => {
                        let list = list
                            .iter()
                            .enumerate()
                            .map(|(i, s)| self.schema(s, &format!("{here}/{i}")))
                            .collect();
                        out.insert(key.clone(), Value::Array(list));
                    }
                    None => self.approximated(
                        &here,
                        format!("`{key}` as {}, not a list", kind(value)),
                        "leaves it out",
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
                // A JSON Schema keyword 3.0 lacks (`prefixItems`, `if`, `$defs`): carried
                // the same way, so nothing is lost, but a 3.0 reader does not check it.
                k => {
                    let extension = format!("x-{k}");
                    let what = if map.contains_key(&extension) {
                        format!("leaves it out (`{extension}` is taken)")
                    } else {
                        out.insert(extension.clone(), value.clone());
                        format!("writes it as `{extension}`, which a 3.0 reader does not check")
                    };
                    self.approximated(&here, format!("`{k}`"), &what);
                }
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

    /// A numeric `exclusiveMinimum`/`exclusiveMaximum` (`key`): 3.0's bound with the
    /// boolean form. Beside a numeric bound of the same side, the stricter of the two is
    /// written, which accepts the same numbers.
    fn exclusive(
        &mut self,
        map: &Map<String, Value>,
        key: &str,
        value: &Value,
        pointer: &str,
        out: &mut Map<String, Value>,
    ) {
        let lower = key == "exclusiveMinimum";
        let bound = if lower { "minimum" } else { "maximum" };
        let exclusive = value.as_f64().unwrap_or_default();
        let inclusive = match map.get(bound) {
            None => None,
            Some(b) if b.is_number() => b.as_f64(),
            Some(other) => {
                // Not a number: the bound is kept as written, and this one left out.
                self.approximated(
                    pointer,
                    format!(
                        "a numeric `{key}` beside a `{bound}` that is {}",
                        kind(other)
                    ),
                    "leaves it out",
                );
                return;
            }
        };
        let exclusive_binds = inclusive.is_none_or(|b| {
            if lower {
                exclusive >= b
            } else {
                exclusive <= b
            }
        });
        if exclusive_binds {
            out.insert(bound.into(), value.clone());
            out.insert(key.into(), json!(true));
        } else if let Some(b) = map.get(bound) {
            out.insert(bound.into(), b.clone());
        }
    }

    /// `patternProperties` → `additionalProperties` of the union of their schemas and of
    /// the schema's own `additionalProperties` (unless that is `true`, which already takes
    /// every value): 3.0 cannot check a name against a pattern.
    fn pattern_properties(
        &mut self,
        map: &Map<String, Value>,
        patterns: &Map<String, Value>,
        pointer: &str,
        out: &mut Map<String, Value>,
    ) {
        let here = format!("{pointer}/patternProperties");
        let additional = map.get("additionalProperties");
        if additional == Some(&Value::Bool(true)) {
            out.insert("additionalProperties".into(), json!(true));
            self.approximated(
                &here,
                "`patternProperties`".to_string(),
                "leaves it out: `additionalProperties: true` beside it takes every other property",
            );
            return;
        }
        let mut union: Vec<Value> = patterns
            .iter()
            .map(|(pattern, s)| self.schema(s, &format!("{here}/{}", escape(pattern))))
            .collect();
        if let Some(own) = additional.filter(|a| a.is_object()) {
            union.push(self.schema(own, &format!("{pointer}/additionalProperties")));
        }
        let what = match additional {
            Some(a) if a.is_object() => {
                "writes `additionalProperties` as the union of their schemas and its own; names are not checked against the patterns"
            }
            _ => {
                "writes `additionalProperties` as the union of their schemas; names are not checked against the patterns"
            }
        };
        let written = match union.len() {
            0 => additional.cloned().unwrap_or(json!({})),
            1 => union.remove(0),
            _ => json!({ "anyOf": union }),
        };
        out.insert("additionalProperties".into(), written);
        self.approximated(&here, "`patternProperties`".to_string(), what);
    }

    /// `items` as a list (a tuple, as drafts before 2020-12 wrote it): 3.0's `items` is one
    /// schema, so each item may be any of them.
    fn items_list(&mut self, value: &Value, pointer: &str, out: &mut Map<String, Value>) {
        let mut list: Vec<Value> = value
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
            .map(|(i, s)| self.schema(s, &format!("{pointer}/{i}")))
            .collect();
        let written = match list.len() {
            0 => json!({}),
            1 => list.remove(0),
            _ => json!({ "anyOf": list }),
        };
        out.insert("items".into(), written);
        self.approximated(
            pointer,
            "`items` as a list".to_string(),
            "writes `items` as the union of its schemas; each position is not checked against its own",
        );
    }

    fn type_(value: &Value, out: &mut Map<String, Value>) {
        // 3.0 has no `null` type: a schema of null alone is a one-value `enum`, which
        // takes exactly null (as the "or null" unions' null branch is written).
        let only_null = |out: &mut Map<String, Value>| {
            out.entry("enum").or_insert_with(|| json!([null]));
        };
        let Some(list) = value.as_array() else {
            if value == "null" {
                only_null(out);
            } else {
                out.insert("type".into(), value.clone());
            }
            return;
        };
        let nullable = list.iter().any(|t| t == "null");
        let types: Vec<&Value> = list.iter().filter(|t| *t != "null").collect();
        match types.as_slice() {
            [] => only_null(out),
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

/// `minimum` → `Minimum`.
fn capitalised(word: &str) -> String {
    let mut chars = word.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_uppercase().chain(chars).collect()
    })
}

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
