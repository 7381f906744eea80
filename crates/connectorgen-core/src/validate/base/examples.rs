//! Examples of the base document that fail their own schema, left out of the outputs.
//!
//! Takes: the kept document's top level and the exposed operations, in OpenAPI 3.1
//! (after `upgrade.rs` or `v32.rs`), and the base for spans. Returns (through
//! `Validator`): nothing; removes each `example` (and each item of a schema's
//! `examples`, each entry of an `examples` map) that its schema refuses — formats
//! included, as validators check them — with one `base-invalid` warning naming it.
//! An example is documentation: leaving a wrong one out changes no request, and keeping
//! it makes validators (spectral's `oas3-valid-*-example`) refuse every output.
//! Must never: remove anything but examples, or check an example against anything but
//! the schema it sits in (or beside, in a media type, parameter or header).

use serde_json::{Map, Value, json};

use crate::base::Base;
use crate::base::places::{self, Kind, Place};
use crate::model::{Operation, escape, unescape};
use crate::subschemas::{self, Holds};
use crate::validate::base::invalid::base_repaired;
use crate::validate::context::Validator;

/// At most this many examples are checked per run: a document with thousands of them
/// must not make a build slow, and the first ones show the provider what is wrong.
const MAX_CHECKED: usize = 2_000;

/// Characters of a validator's message kept.
const MESSAGE_CHARS: usize = 160;

/// Removes the examples that fail their schema, in the document and the operations.
pub(in crate::validate) fn drop_invalid_examples(
    v: &mut Validator,
    base: &Base,
    root: &mut Map<String, Value>,
    operations: &mut [Operation],
) {
    let components = root.get("components").cloned().unwrap_or(json!({}));
    let mut checked = 0;
    let mut dropped: Vec<(String, String)> = Vec::new();
    let mut run =
        |object: &mut Map<String, Value>, at: &str, find: &dyn Fn(&Value) -> Vec<Place>| {
            let mut value = Value::Object(std::mem::take(object));
            for place in find(&value) {
                let here = format!("{at}{}", place.pointer);
                let Some(target) = value.pointer_mut(&place.pointer) else {
                    continue;
                };
                match place.kind {
                    Kind::Schema => {
                        schema_examples(target, &here, &components, &mut checked, &mut dropped);
                    }
                    Kind::MediaType | Kind::Parameter | Kind::Header if !place.reference => {
                        beside(target, &here, &components, &mut checked, &mut dropped);
                    }
                    _ => {}
                }
            }
            if let Value::Object(map) = value {
                *object = map;
            }
        };
    run(root, "", &places::document);
    for op in operations.iter_mut() {
        let at = op.pointer();
        run(&mut op.http, &at, &|v| places::operation(v, ""));
    }
    for (pointer, reason) in dropped {
        base_repaired(
            v,
            base,
            &pointer,
            format!(
                "the example at `{}` does not match its own schema ({reason}); repaired in the outputs: the example is left out",
                pointer.escape_debug()
            ),
        );
    }
}

/// The example of a schema and of the schemas inside it.
fn schema_examples(
    schema: &mut Value,
    at: &str,
    components: &Value,
    checked: &mut usize,
    dropped: &mut Vec<(String, String)>,
) {
    let Value::Object(map) = schema else {
        return;
    };
    if map.contains_key("example") || map.get("examples").is_some_and(Value::is_array) {
        let bare: Map<String, Value> = map
            .iter()
            .filter(|(k, _)| *k != "example" && *k != "examples")
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let schema = Value::Object(bare);
        if let Some(example) = map.get("example")
            && let Some(reason) = refusal(&schema, example, components, checked)
        {
            map.shift_remove("example");
            dropped.push((format!("{at}/example"), reason));
        }
        if let Some(Value::Array(list)) = map.get_mut("examples") {
            let mut i = 0;
            let mut index = 0;
            list.retain(|example| {
                let keep = match refusal(&schema, example, components, checked) {
                    Some(reason) => {
                        dropped.push((format!("{at}/examples/{index}"), reason));
                        false
                    }
                    None => true,
                };
                index += 1;
                i += usize::from(keep);
                keep
            });
            if i == 0 {
                map.shift_remove("examples");
            }
        }
    }
    for (key, child) in map.iter_mut() {
        let here = format!("{at}/{}", escape(key));
        match (subschemas::holds(key, child), child) {
            (Some(Holds::Schema), child) => {
                schema_examples(child, &here, components, checked, dropped);
            }
            (Some(Holds::Map), Value::Object(entries)) => {
                for (name, sub) in entries.iter_mut() {
                    let here = format!("{here}/{}", escape(name));
                    schema_examples(sub, &here, components, checked, dropped);
                }
            }
            (Some(Holds::List), Value::Array(list)) => {
                for (i, sub) in list.iter_mut().enumerate() {
                    schema_examples(sub, &format!("{here}/{i}"), components, checked, dropped);
                }
            }
            _ => {}
        }
    }
}

/// The `example` and `examples` of a media type, parameter or header, against its
/// `schema` (an Example Object given as a `$ref` is left alone: it is checked nowhere
/// else either, and may serve several schemas).
fn beside(
    object: &mut Value,
    at: &str,
    components: &Value,
    checked: &mut usize,
    dropped: &mut Vec<(String, String)>,
) {
    let Value::Object(map) = object else {
        return;
    };
    let Some(schema) = map.get("schema").cloned() else {
        return;
    };
    if let Some(example) = map.get("example")
        && let Some(reason) = refusal(&schema, example, components, checked)
    {
        map.shift_remove("example");
        dropped.push((format!("{at}/example"), reason));
    }
    if let Some(Value::Object(examples)) = map.get_mut("examples") {
        let names: Vec<String> = examples.keys().cloned().collect();
        for name in names {
            let Some(value) = examples.get(&name).and_then(|e| e.get("value")) else {
                continue;
            };
            if let Some(reason) = refusal(&schema, value, components, checked) {
                examples.shift_remove(&name);
                dropped.push((format!("{at}/examples/{}", escape(&name)), reason));
            }
        }
        if examples.is_empty() {
            map.shift_remove("examples");
        }
    }
}

/// Why `schema` (whose references point into `components`) refuses `example`, if it
/// does; `None` when it accepts it, or when it cannot be compiled (not ours to judge
/// here), or when the budget is spent.
fn refusal(
    schema: &Value,
    example: &Value,
    components: &Value,
    checked: &mut usize,
) -> Option<String> {
    if *checked >= MAX_CHECKED {
        return None;
    }
    *checked += 1;
    // The schema stands beside the document's components, so that its `$ref`s resolve:
    // only those it reaches when that can be told, since copying and compiling every
    // component of a large document for each example was most of a whole-document build.
    let mut root = Map::new();
    let components = reached(schema, components).unwrap_or_else(|| components.clone());
    root.insert("components".to_string(), components);
    root.insert("example-schema".to_string(), schema.clone());
    root.insert("$ref".to_string(), json!("#/example-schema"));
    let root = Value::Object(root);
    let validator = jsonschema::options()
        .should_validate_formats(true)
        .with_format("url", is_web_url)
        .build(&root)
        .ok()?;
    let error = validator.iter_errors(example).next()?;
    let place = error.instance_path().to_string();
    let message = crate::terminal::clip(&error.to_string(), MESSAGE_CHARS).into_owned();
    Some(if place.is_empty() {
        message
    } else {
        format!("at `{place}`: {message}")
    })
}

/// The components `schema` reaches through its `$ref`s, transitively, each under its
/// own section and name: what can change what the schema accepts. `None` when that
/// cannot be told from the references alone — one that is not `#/components/<section>/
/// <name>…` or names nothing, or a keyword that resolves by other means (`$id`,
/// anchors, dynamic references) — and the caller keeps every component.
fn reached(schema: &Value, components: &Value) -> Option<Value> {
    const OTHER_MEANS: [&str; 5] = [
        "$id",
        "$anchor",
        "$dynamicAnchor",
        "$dynamicRef",
        "$recursiveRef",
    ];
    let mut out: Map<String, Value> = Map::new();
    let mut pending: Vec<&Value> = vec![schema];
    while let Some(value) = pending.pop() {
        match value {
            Value::Object(map) => {
                if OTHER_MEANS.iter().any(|k| map.contains_key(*k)) {
                    return None;
                }
                if let Some(Value::String(reference)) = map.get("$ref") {
                    let rest = reference.strip_prefix("#/components/")?;
                    // Left to the fallback: how a validator decodes `%` escapes is its own.
                    if rest.contains('%') {
                        return None;
                    }
                    let mut segments = rest.split('/');
                    let section = unescape(segments.next()?);
                    let name = unescape(segments.next()?);
                    let target = components.get(&section)?.get(&name)?;
                    let entry = out
                        .entry(section)
                        .or_insert_with(|| Value::Object(Map::new()));
                    let Value::Object(entries) = entry else {
                        return None;
                    };
                    if !entries.contains_key(&name) {
                        entries.insert(name, target.clone());
                        pending.push(target);
                    }
                }
                pending.extend(map.values());
            }
            Value::Array(list) => pending.extend(list),
            _ => {}
        }
    }
    Some(Value::Object(out))
}

/// The `url` format as validators check it (ajv-formats, which spectral uses; it is no
/// JSON Schema format, so jsonschema ignores it): an http, https or ftp URL whose host
/// is a dotted name ending in a label of letters, or an IPv4 address.
fn is_web_url(text: &str) -> bool {
    let Some((scheme, rest)) = text.split_once("://") else {
        return false;
    };
    if !["http", "https", "ftp"].contains(&scheme.to_ascii_lowercase().as_str())
        || text.chars().any(char::is_whitespace)
    {
        return false;
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = authority.rsplit('@').next().unwrap_or_default();
    let host = host.split(':').next().unwrap_or_default();
    let labels: Vec<&str> = host.split('.').collect();
    let ipv4 = labels.len() == 4 && labels.iter().all(|l| l.parse::<u8>().is_ok());
    let named = labels.len() >= 2
        && labels.iter().all(|l| !l.is_empty())
        && labels
            .last()
            .is_some_and(|tld| tld.chars().count() >= 2 && tld.chars().all(char::is_alphabetic));
    ipv4 || named
}

#[cfg(test)]
mod tests {
    use super::{is_web_url, reached, refusal, schema_examples};
    use serde_json::json;

    /// Only what the schema reaches, transitively, is copied for its validator; anything
    /// it cannot follow keeps every component, so the verdict never changes.
    #[test]
    fn an_example_is_checked_against_the_components_its_schema_reaches() {
        let components = json!({
            "schemas": {
                "Pet": { "type": "object", "properties": { "owner": { "$ref": "#/components/schemas/Person" } } },
                "Person": { "type": "object", "properties": { "name": { "type": "string" } }, "required": ["name"] },
                "a/b": { "type": "integer" },
                "Unused": { "type": "boolean" }
            },
            "parameters": { "Unused": { "name": "x", "in": "query" } }
        });
        let schema = json!({ "$ref": "#/components/schemas/Pet" });
        let got = reached(&schema, &components).unwrap();
        assert_eq!(
            got,
            json!({ "schemas": {
                "Pet": components["schemas"]["Pet"],
                "Person": components["schemas"]["Person"]
            } })
        );
        let slash = json!({ "items": { "$ref": "#/components/schemas/a~1b" } });
        assert_eq!(
            reached(&slash, &components).unwrap(),
            json!({ "schemas": { "a/b": { "type": "integer" } } })
        );
        for unsure in [
            json!({ "$ref": "#/components/schemas/Missing" }),
            json!({ "$ref": "#/components/schemas" }),
            json!({ "$ref": "#/components/schemas/Pet%20s" }),
            json!({ "$ref": "other.yaml#/Pet" }),
            json!({ "$dynamicRef": "#meta" }),
            json!({ "properties": { "p": { "$id": "https://x.example/p" } } }),
        ] {
            assert_eq!(reached(&unsure, &components), None, "{unsure}");
        }
        // The verdict is the one against every component.
        let mut checked = 0;
        let bad = json!({ "owner": {} });
        let reason = refusal(&schema, &bad, &components, &mut checked).unwrap();
        assert!(reason.contains("name"), "{reason}");
        assert_eq!(
            refusal(
                &schema,
                &json!({ "owner": { "name": "Ann" } }),
                &components,
                &mut checked
            ),
            None
        );
    }

    /// A wrong example is found in every kind of sub-schema (`crate::subschemas`), not
    /// only in properties and `items`: `then`, `dependentSchemas`, `contentSchema`, the
    /// older `definitions` and list-form `items` were once skipped. Data is not walked.
    #[test]
    fn examples_are_checked_in_every_sub_schema() {
        let wrong = json!({ "type": "integer", "example": "seven" });
        let mut schema = json!({
            "if": { "required": ["a"] },
            "then": wrong,
            "dependentSchemas": { "a": wrong },
            "contentSchema": wrong,
            "definitions": { "d": wrong },
            "items": [wrong],
            "default": { "type": "integer", "example": "data, not a schema" }
        });
        let (mut checked, mut dropped) = (0, Vec::new());
        schema_examples(&mut schema, "/s", &json!({}), &mut checked, &mut dropped);
        let mut places: Vec<&str> = dropped.iter().map(|(p, _)| p.as_str()).collect();
        places.sort_unstable();
        assert_eq!(
            places,
            [
                "/s/contentSchema/example",
                "/s/definitions/d/example",
                "/s/dependentSchemas/a/example",
                "/s/items/0/example",
                "/s/then/example",
            ]
        );
        assert!(schema["default"].get("example").is_some());
        assert!(schema["then"].get("example").is_none());
    }

    /// AssemblyAI's example `http://deleted_by_user` is refused by spectral's `url`.
    #[test]
    fn web_urls_are_checked_as_validators_check_them() {
        for good in [
            "https://assembly.ai/a.mp3",
            "http://10.0.0.1:8080/x",
            "ftp://u@files.example.org",
        ] {
            assert!(is_web_url(good), "{good}");
        }
        for bad in [
            "http://deleted_by_user",
            "mailto:a@b.c",
            "https://a.b/ c",
            "https://a.1",
        ] {
            assert!(!is_web_url(bad), "{bad}");
        }
    }
}
