//! What a tool takes from the OpenAPI document: references followed, the components a
//! schema reaches copied into its own `$defs`, the media type a body is sent as.
//!
//! Takes: the connector's document and schemas from it. Returns: standalone copies.
//! Must never: change what a schema means (a reference is rewritten, never inlined), or
//! point outside the tool schema it is written into.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use crate::model::{Document, escape, media_essence};

/// A `$ref` (or a reference object) followed to what it names, through any chain.
pub(super) fn resolved<'a>(doc: &'a Document, value: &'a Value) -> &'a Value {
    let mut value = value;
    for _ in 0..16 {
        match value.get("$ref").and_then(Value::as_str) {
            Some(reference) => match doc.resolve(reference) {
                Some(target) => value = target,
                None => return value,
            },
            None => return value,
        }
    }
    value
}

/// A request or response body's chosen media type.
pub(super) struct Picked<'a> {
    /// `json`, `form`, `multipart`, `text`, or the media type's essence.
    pub(super) kind: String,
    /// The media type as the document writes it (`None` without `content`).
    pub(super) media: Option<String>,
    pub(super) object: Option<&'a Value>,
    pub(super) schema: Option<&'a Value>,
}

/// The media type a tool sends, by preference (JSON, form, multipart, text, anything
/// else), and its schema.
pub(super) fn pick_media(body: &Value) -> Picked<'_> {
    let none = || Picked {
        kind: "json".to_string(),
        media: None,
        object: None,
        schema: None,
    };
    let Some(content) = body.get("content").and_then(Value::as_object) else {
        return none();
    };
    let kind = |media: &str| {
        let media = media_essence(media);
        if media == "application/json" || media.ends_with("+json") || media == "*/*" {
            "json".to_string()
        } else if media == "application/x-www-form-urlencoded" {
            "form".to_string()
        } else if media == "multipart/form-data" {
            "multipart".to_string()
        } else if media.starts_with("text/") {
            "text".to_string()
        } else {
            media
        }
    };
    let rank = |k: &str| match k {
        "json" => 0,
        "form" => 1,
        "multipart" => 2,
        "text" => 3,
        _ => 4,
    };
    content
        .iter()
        .map(|(media, object)| Picked {
            kind: kind(media),
            media: Some(media.clone()),
            object: Some(object),
            schema: object.get("schema"),
        })
        .min_by_key(|p| rank(&p.kind))
        .unwrap_or_else(none)
}

/// A form or multipart field that is an upload travels as base64, and says so
/// (`contentEncoding: base64`): a binary string (`format: binary`, `contentEncoding`, or
/// `contentMediaType` alone, as 3.1 writes a file), also when it may be null
/// (`type: [string, "null"]`), and any `anyOf`/`oneOf` whose branches that are not null
/// are all such strings (`FastAPI`'s optional file: `anyOf: [{type: string, format:
/// binary}, {type: "null"}]`). A branch or field that is a `$ref` to a binary string is
/// followed; the string schema it names (which has no references of its own) is written
/// in its place, rewritten. Returns the schema as the tool shows it, and whether it is
/// an upload.
pub(super) fn base64_binary(doc: &Document, schema: &Value) -> (Value, bool) {
    if let Some(upload) = binary_string(resolved(doc, schema)) {
        return (upload, true);
    }
    let Value::Object(map) = schema else {
        return (schema.clone(), false);
    };
    for key in ["anyOf", "oneOf"] {
        let Some(branches) = map.get(key).and_then(Value::as_array) else {
            continue;
        };
        let mut rewritten = Vec::with_capacity(branches.len());
        let mut uploads = 0usize;
        for branch in branches {
            let target = resolved(doc, branch);
            if is_null(target) {
                rewritten.push(branch.clone());
            } else if let Some(upload) = binary_string(target) {
                uploads += 1;
                rewritten.push(upload);
            } else {
                return (schema.clone(), false);
            }
        }
        if uploads == 0 {
            return (schema.clone(), false);
        }
        let mut out = map.clone();
        out.insert(key.into(), Value::Array(rewritten));
        return (Value::Object(out), true);
    }
    (schema.clone(), false)
}

/// A schema that only null matches: `type: "null"` (or `[null]`), `const: null`,
/// `enum: [null]`.
fn is_null(schema: &Value) -> bool {
    let Some(map) = schema.as_object() else {
        return false;
    };
    map.get("type") == Some(&json!("null"))
        || map.get("type") == Some(&json!(["null"]))
        || map.get("const") == Some(&Value::Null)
        || map.get("enum") == Some(&json!([null]))
}

/// A string schema of bytes, rewritten to say they travel as base64: `format: binary`
/// (removed), `contentEncoding` (replaced by `base64`, what the argument holds), or
/// `contentMediaType` alone. `type` may be absent, `string`, or `[string, "null"]`.
fn binary_string(schema: &Value) -> Option<Value> {
    let map = schema.as_object()?;
    let string = match map.get("type") {
        None => true,
        Some(Value::String(t)) => t == "string",
        Some(Value::Array(list)) => {
            list.iter().any(|t| t == "string") && list.iter().all(|t| t == "string" || t == "null")
        }
        Some(_) => false,
    };
    let binary = map.get("format").and_then(Value::as_str) == Some("binary")
        || map.contains_key("contentEncoding")
        || map.contains_key("contentMediaType");
    if !string || !binary || map.contains_key("$ref") {
        return None;
    }
    let mut out = map.clone();
    if out.get("format").and_then(Value::as_str) == Some("binary") {
        out.remove("format");
    }
    out.insert("contentEncoding".into(), json!("base64"));
    Some(Value::Object(out))
}

/// The components a tool schema uses, copied into its `$defs` under their names.
#[derive(Default)]
pub(super) struct Defs {
    /// `$defs` key → the copied schema (already rewritten), in name order.
    copied: BTreeMap<String, Value>,
}

impl Defs {
    /// `schema` with every `#/components/…` reference rewritten to `#/$defs/…`, and the
    /// schemas it names copied in (transitively).
    pub(super) fn own(&mut self, doc: &Document, mut schema: Value) -> Value {
        let mut pending = Vec::new();
        rewrite(&mut schema, &mut pending);
        while let Some((key, reference)) = pending.pop() {
            if self.copied.contains_key(&key) {
                continue;
            }
            let Some(mut target) = doc.resolve(&reference).cloned() else {
                continue;
            };
            rewrite(&mut target, &mut pending);
            self.copied.insert(key, target);
        }
        schema
    }

    /// Adds the copied schemas to a tool schema's root `$defs`.
    pub(super) fn write_into(&mut self, root: &mut Map<String, Value>) {
        if self.copied.is_empty() {
            return;
        }
        let defs = root
            .entry("$defs")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(defs) = defs {
            for (k, v) in std::mem::take(&mut self.copied) {
                defs.entry(k).or_insert(v);
            }
        }
    }
}

/// Calls `f` on every reference within `value`: each `$ref`, and each value of a
/// `discriminator.mapping` (a reference too, or a bare schema name, which is made the
/// reference it stands for first: `Dog` is `#/components/schemas/Dog`). The mapping
/// must follow the `$ref`s it names, or it points at nothing in a tool schema.
pub(super) fn references_mut(value: &mut Value, f: &mut dyn FnMut(&mut String)) {
    match value {
        Value::Object(map) => {
            let discriminator = map.contains_key("propertyName");
            for (key, child) in map.iter_mut() {
                match (key.as_str(), &mut *child) {
                    ("$ref", Value::String(reference)) => f(reference),
                    ("mapping", Value::Object(mapping)) if discriminator => {
                        for target in mapping.values_mut() {
                            if let Value::String(target) = target {
                                if !target.contains(['#', '/', '.']) {
                                    *target = format!("#/components/schemas/{}", escape(target));
                                }
                                f(target);
                            }
                        }
                    }
                    _ => references_mut(child, f),
                }
            }
        }
        Value::Array(list) => list.iter_mut().for_each(|v| references_mut(v, f)),
        _ => {}
    }
}

/// Rewrites `#/components/<section>/<name>…` references to `#/$defs/<key>…` in place and
/// lists each `(key, reference to the component)` to copy. `<key>` is the name for
/// schemas and `<section>.<name>` for anything else.
pub(super) fn rewrite(value: &mut Value, pending: &mut Vec<(String, String)>) {
    references_mut(value, &mut |reference| {
        let Some(rest) = reference.strip_prefix("#/components/") else {
            return;
        };
        let mut parts = rest.splitn(3, '/');
        let (Some(section), Some(name)) = (parts.next(), parts.next()) else {
            return;
        };
        let tail = parts.next().map(|t| format!("/{t}")).unwrap_or_default();
        let def = if section == "schemas" {
            name.to_string()
        } else {
            format!("{section}.{name}")
        };
        pending.push((
            crate::model::unescape(&def),
            format!("#/components/{section}/{name}"),
        ));
        *reference = format!("#/$defs/{def}{tail}");
    });
}
