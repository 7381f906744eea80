//! A tool's request body: one argument per top-level field of a JSON, form or multipart
//! body whose schema is an object with properties, else one argument for the whole body.
//!
//! Takes: the connector, the operation's `requestBody` (through its `$ref`) and the
//! media type `pick_media` prefers. Returns: into `Gathered`, the body's inputs (and a
//! `fixed:` input for each field the manifest fixes); and `BodyParts`: the body's own
//! schema keywords for the tool's root, the body's mapping, every field it names
//! (`schema_walk`: its own and its branches') and those only its branches name.
//! Must never: make an argument of a field a credential part fills in, or leave a field
//! only a `oneOf`/`anyOf`/`allOf` branch names out of the mapping (a call's field would
//! be quoted to the person and not sent).

use serde_json::{Map, Value, json};

use super::super::document::{Defs, Picked, base64_binary, pick_media, resolved};
use super::super::mapping::{Body, Encoding, Location};
use super::{Gathered, Input, credential};
use crate::arguments;
use crate::model::{Connector, Document};
use crate::schema_walk;

/// What the body gives the tool beside its inputs.
#[derive(Default)]
pub(super) struct BodyParts {
    /// The body's own keywords (`additionalProperties`, `$defs`, its `oneOf`, …), which
    /// stay on the tool's root so references like `#/$defs/x` still resolve from there.
    pub(super) base: Map<String, Value>,
    pub(super) mapping: Option<Body>,
    /// The top-level fields of a JSON or form body (a credential part or a `fixed:`
    /// input may fill one in), its branches' included.
    pub(super) fields: Vec<String>,
    /// The body fields only the body schema's `oneOf`/`anyOf`/`allOf` branches name.
    pub(super) composed: Vec<String>,
}

/// The operation's body, when it has one.
pub(super) fn gather(
    connector: &Connector,
    defs: &mut Defs,
    gathered: &mut Gathered<'_>,
) -> BodyParts {
    let doc = &connector.document;
    let mut parts = BodyParts::default();
    let Some(body) = gathered
        .op
        .http
        .get("requestBody")
        .map(|b| resolved(doc, b))
    else {
        return parts;
    };
    // OpenAPI's default for `requestBody.required` is false, but providers that list
    // a body's required properties and leave the key out (Twilio's `To`) mean them:
    // only an explicit `required: false` makes the body, and so its fields, optional.
    let written = body.get("required").and_then(Value::as_bool);
    let picked = pick_media(body);
    let media = picked.kind.as_str();
    let structured = matches!(media, "form" | "multipart" | "json");
    let schema = picked.schema.cloned().unwrap_or_else(|| json!({}));
    let shown = resolved(doc, &schema);
    let object = shown
        .as_object()
        .filter(|o| structured && o.get("properties").is_some_and(Value::is_object));
    let properties_required: Vec<&str> = object
        .and_then(|o| o.get("required"))
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let body_required =
        written.unwrap_or(false) || (written.is_none() && !properties_required.is_empty());
    parts.mapping = Some(Body {
        media_type: picked
            .media
            .clone()
            .unwrap_or_else(|| "application/json".to_string()),
        required: body_required,
    });
    let Some(object) = object else {
        if structured {
            // The whole body is one argument: the fields its branches name can still be
            // filled in by the connection (a credential part).
            for name in declared_names(doc, shown) {
                if !parts.fields.contains(&name) {
                    parts.fields.push(name);
                }
            }
        }
        gathered
            .inputs
            .push(whole_body(doc, defs, media, schema, body_required));
        return parts;
    };
    for (name, property) in object["properties"].as_object().into_iter().flatten() {
        parts.fields.push(name.clone());
        // The connection fills in a credential field, never the model.
        if credential::in_body(connector, name) || gathered.fixed(Location::Body, name, None, None)
        {
            continue;
        }
        let required = body_required && properties_required.contains(&name.as_str());
        let input = field(doc, defs, &picked, name, property, required);
        gathered.inputs.push(input);
    }
    for (k, v) in object {
        if !matches!(k.as_str(), "type" | "properties" | "required") {
            parts.base.insert(k.clone(), defs.own(doc, v.clone()));
        }
    }
    composed(connector, gathered, shown, object, &mut parts);
    parts
}

/// The body's `oneOf`/`anyOf`/`allOf` stay on the tool's root, so the fields only their
/// branches name are arguments too: without a mapping entry a call's `amount` would be
/// quoted to the person and left out of the body.
fn composed(
    connector: &Connector,
    gathered: &Gathered<'_>,
    shown: &Value,
    object: &Map<String, Value>,
    parts: &mut BodyParts,
) {
    let names = declared_names(&connector.document, shown);
    for name in &names {
        if !parts.fields.contains(name) {
            parts.fields.push(name.clone());
        }
    }
    for name in names {
        let own = object["properties"]
            .as_object()
            .is_some_and(|p| p.contains_key(&name));
        let filled = credential::in_body(connector, &name)
            || gathered.op.fixed.iter().any(|f| f.name == name);
        if !own && !filled && arguments::is_safe(&name) && !parts.composed.contains(&name) {
            parts.composed.push(name);
        }
    }
}

/// The property names a body schema declares, its own and those its `allOf`/`anyOf`/
/// `oneOf` branches give through the document's `$ref`s: `schema_walk`'s, the walk the
/// server reads the served schema with, so a field the tool takes is one it knows.
fn declared_names(doc: &Document, schema: &Value) -> Vec<String> {
    schema
        .as_object()
        .map(|schema| schema_walk::properties(&doc.root, schema))
        .into_iter()
        .flatten()
        .map(|p| p.name.to_string())
        .collect()
}

/// One top-level field of a JSON, form or multipart body as an argument.
fn field(
    doc: &Document,
    defs: &mut Defs,
    picked: &Picked<'_>,
    name: &str,
    property: &Value,
    required: bool,
) -> Input {
    let media = picked.kind.as_str();
    let (property, binary) = if media == "json" {
        (property.clone(), false)
    } else {
        base64_binary(doc, property)
    };
    let mut input = Input::new(
        Location::Body,
        Some(name.to_string()),
        "a body property",
        defs.own(doc, property),
        required,
    );
    input.encoding = binary.then_some(Encoding::Base64);
    let encoding = picked
        .object
        .and_then(|m| m.get("encoding"))
        .and_then(|e| e.get(name));
    if media == "form" {
        form_field(&mut input, encoding);
    }
    if media == "multipart" {
        // The part's media type: the encoding's, else an upload's own
        // `contentMediaType` (a file of any type says none: the client
        // sends application/octet-stream).
        input.content_type = encoding
            .and_then(|e| e.get("contentType"))
            .and_then(Value::as_str)
            .map(str::to_string)
            .or_else(|| binary.then(|| upload_media_type(&input.schema)).flatten());
    }
    input
}

/// A form field is serialised as a query parameter is, by its `encoding` entry, else
/// OpenAPI's default (`form`, exploded): `serve` sends what openapi.json describes. An
/// entry with a `contentType` and no style says the value is sent as that media type
/// (JSON text). `allowReserved` is not taken: a raw `&`, `=` or `+` would change what the
/// form body says.
fn form_field(input: &mut Input, encoding: Option<&Value>) {
    let field = |key: &str| encoding.and_then(|e| e.get(key));
    let styled = ["style", "explode", "allowReserved"]
        .iter()
        .any(|key| field(key).is_some());
    match field("contentType").and_then(Value::as_str) {
        Some(media) if !styled => input.content_type = Some(media.to_string()),
        _ => {
            let style = field("style").and_then(Value::as_str).unwrap_or("form");
            input.explode = Some(
                field("explode")
                    .and_then(Value::as_bool)
                    .unwrap_or(style == "form"),
            );
            input.style = Some(style.to_string());
        }
    }
}

/// The one argument of a body that is not an object with properties (or not JSON, form
/// or multipart): its schema, or base64 text for a body of bytes.
fn whole_body(
    doc: &Document,
    defs: &mut Defs,
    media: &str,
    schema: Value,
    required: bool,
) -> Input {
    let binary = !matches!(media, "json" | "form" | "multipart" | "text");
    let schema = if binary {
        json!({
            "type": "string",
            "contentEncoding": "base64",
            "contentMediaType": media,
            "description": format!("The request body ({media}), base64-encoded.")
        })
    } else {
        schema
    };
    let mut input = Input::new(
        Location::Body,
        None,
        "the request body",
        defs.own(doc, schema),
        required,
    );
    input.encoding = binary.then_some(Encoding::Base64);
    input
}

/// An upload's own media type (`contentMediaType`, on it or on the one branch of its
/// union that says one), when it names one type, not a range (`image/*`).
fn upload_media_type(schema: &Value) -> Option<String> {
    let own = schema.get("contentMediaType").and_then(Value::as_str);
    let branch = || {
        ["anyOf", "oneOf"].iter().find_map(|k| {
            schema
                .get(*k)
                .and_then(Value::as_array)?
                .iter()
                .find_map(|b| b.get("contentMediaType").and_then(Value::as_str))
        })
    };
    own.or_else(branch)
        .filter(|m| !m.contains('*'))
        .map(str::to_string)
}
