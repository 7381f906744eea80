//! Connector → `mcp-tools.json`: the `tools` array of an MCP `tools/list` result.
//!
//! Takes: the validated connector and each operation's model-facing description.
//! Returns: the JSON text, and an error finding for every operation whose inputs cannot
//! share one flat `inputSchema` (a name used twice across parameters, body and
//! `idempotencyKey`).
//! Must never: soften the cost semantics — a tool that spends or cannot be undone
//! (`confirm`) is `destructiveHint: true` so that a client which asks before destructive
//! calls asks here too — or emit a
//! schema that points outside itself: every `$ref` into the document's components is
//! copied into the tool schema's own `$defs` and rewritten to point there.
//!
//! Arguments, in order: path, query, header and cookie parameters (the path item's
//! shared ones first; a header retry key gets a client-safe name, `key_argument_name`; the
//! `Accept`, `Content-Type` and `Authorization` headers, which OpenAPI ignores as
//! parameters, and an API key's own parameter are left to the connection), then the
//! request body — a JSON, form or multipart body whose schema is an object with
//! properties gives one argument per property, any other body one `body` argument. A
//! binary value (a `format: binary` field, or a body that is neither JSON, form nor
//! text) is a base64 string (`contentEncoding: base64`), which the server decodes.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use crate::diagnostics::{Diagnostic, Finding};
use crate::model::{
    Connector, Document, IdempotencyKey, KeyLocation, Method, Operation, media_essence,
};

/// The argument that carries the `Idempotency-Key` header.
pub const IDEMPOTENCY_ARGUMENT: &str = "idempotencyKey";

/// The argument that carries an operation's retry key: a body field or query parameter
/// is its own argument; a header gets a client-safe name (`Idempotency-Key` →
/// `idempotencyKey`, `PayPal-Request-Id` → `payPalRequestId`). The tool description's
/// retry sentence names this argument.
pub fn key_argument_name(key: &IdempotencyKey) -> String {
    if key.location != KeyLocation::Header {
        return key.name.clone();
    }
    let mut name = String::new();
    for (i, word) in key
        .name
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .enumerate()
    {
        let mut chars = word.chars();
        if let Some(first) = chars.next() {
            if i == 0 {
                name.push(first.to_ascii_lowercase());
            } else {
                name.push(first.to_ascii_uppercase());
            }
            name.extend(chars);
        }
    }
    if name.is_empty() {
        IDEMPOTENCY_ARGUMENT.to_string()
    } else {
        name
    }
}

/// What the model reads on the argument that carries a header retry key.
fn key_argument_description(key: &IdempotencyKey) -> String {
    format!(
        "Sent as the {} header. A unique value you choose for this request, such as a UUID: a fresh value for each new request, and the same value when retrying this request, so the retry returns the original result instead of starting or charging for a second one.",
        key.name
    )
}

/// One named input of a tool, and where it comes from (for collision messages).
struct Input {
    name: String,
    from: &'static str,
    schema: Value,
    required: bool,
}

pub fn render(connector: &Connector, descriptions: &[String]) -> (String, Vec<Finding>) {
    let mut findings = Vec::new();
    let tools: Vec<Value> = connector
        .operations
        .iter()
        .zip(descriptions)
        .map(|(op, description)| tool(&connector.document, op, description, &mut findings))
        .collect();
    (super::json_text(&tools), findings)
}

fn tool(doc: &Document, op: &Operation, description: &str, findings: &mut Vec<Finding>) -> Value {
    let mut defs = Defs::default();
    let mut tool = Map::new();
    tool.insert("name".into(), json!(op.id));
    tool.insert("title".into(), json!(op.summary));
    tool.insert("description".into(), json!(description));
    tool.insert(
        "inputSchema".into(),
        input_schema(doc, op, &mut defs, findings),
    );
    if let Some(output) = output_schema(doc, op) {
        tool.insert("outputSchema".into(), output);
    }
    tool.insert("annotations".into(), annotations(op));
    Value::Object(tool)
}

/// The MCP hints, written out on every tool (see README, "MCP annotations").
fn annotations(op: &Operation) -> Value {
    let read_only = op.method == Method::Get;
    // Spending and permanent calls are destructive whatever their method, so that a client
    // which asks before destructive calls asks here; DELETE, PUT and PATCH are by nature
    // (not additive), even with `confirm: false`.
    let destructive =
        op.consent() || matches!(op.method, Method::Delete | Method::Put | Method::Patch);
    // MCP: "calling it repeatedly with the same arguments has no additional effect":
    // a required key (the same key is the same call), or a call that by nature cannot
    // be duplicated (`inherent`). An optional key may be left out, so it is not.
    let idempotent = read_only || op.idempotency.required_or_inherent();
    json!({
        "readOnlyHint": read_only,
        "destructiveHint": destructive,
        "idempotentHint": idempotent,
        "openWorldHint": true
    })
}

/// A `$ref` (or a reference object) followed to what it names, through any chain.
fn resolved<'a>(doc: &'a Document, value: &'a Value) -> &'a Value {
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

/// The parameters that apply to an operation: the path item's shared ones, replaced by
/// the operation's own of the same name and location.
fn parameters<'a>(doc: &'a Document, op: &'a Operation) -> Vec<&'a Value> {
    let shared = doc
        .path_item(&op.path)
        .and_then(|item| item.get("parameters"))
        .and_then(Value::as_array);
    let own = op.http.get("parameters").and_then(Value::as_array);
    let own: Vec<&Value> = own
        .into_iter()
        .flatten()
        .map(|p| resolved(doc, p))
        .collect();
    let key = |p: &Value| (p.get("name").cloned(), p.get("in").cloned());
    let mut out: Vec<&Value> = shared
        .into_iter()
        .flatten()
        .map(|p| resolved(doc, p))
        .filter(|p| !own.iter().any(|o| key(o) == key(p)))
        .collect();
    out.extend(own);
    out
}

/// Where the document's API keys travel: (name, location) of each `apiKey` scheme.
fn credential_parameters(doc: &Document) -> Vec<(&str, &str)> {
    doc.root
        .get("components")
        .and_then(|c| c.get("securitySchemes"))
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter(|(_, s)| s.get("type").and_then(Value::as_str) == Some("apiKey"))
        .filter_map(|(_, s)| {
            let name = s.get("name").and_then(Value::as_str)?;
            let location = s.get("in").and_then(Value::as_str)?;
            Some((name, location))
        })
        .collect()
}

/// Path, query, header and cookie parameters, then the body, then `idempotencyKey`.
fn input_schema(
    doc: &Document,
    op: &Operation,
    defs: &mut Defs,
    findings: &mut Vec<Finding>,
) -> Value {
    let mut inputs: Vec<Input> = Vec::new();
    let mut idempotency: Option<Input> = None;
    let credentials = credential_parameters(doc);
    for p in parameters(doc, op) {
        let name = p.get("name").and_then(Value::as_str).unwrap_or_default();
        let location = p.get("in").and_then(Value::as_str).unwrap_or_default();
        // OpenAPI ignores these headers as parameters, and the credential is the
        // connection's, never an argument the model would ask the person for.
        let ignored = location == "header"
            && ["Accept", "Content-Type", "Authorization"]
                .iter()
                .any(|h| h.eq_ignore_ascii_case(name));
        let credential = credentials.iter().any(|(n, l)| {
            *l == location && (*n == name || (*l == "header" && n.eq_ignore_ascii_case(name)))
        });
        if ignored || credential {
            continue;
        }
        let required =
            location == "path" || p.get("required").and_then(Value::as_bool) == Some(true);
        if let Some(key) = op
            .key()
            .filter(|k| k.location == KeyLocation::Header && location == "header")
            .filter(|k| k.name.eq_ignore_ascii_case(name))
        {
            idempotency = Some(Input {
                name: key_argument_name(key),
                from: "the idempotency key",
                schema: json!({
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 255,
                    "description": key_argument_description(key)
                }),
                required: required || key.required,
            });
            continue;
        }
        let schema = p
            .get("schema")
            .or_else(|| {
                p.get("content")
                    .and_then(Value::as_object)
                    .and_then(|c| c.values().next())
                    .and_then(|m| m.get("schema"))
            })
            .cloned()
            .unwrap_or_else(|| json!({}));
        let mut schema = defs.own(doc, schema);
        if let (Some(d), Value::Object(map)) = (p.get("description"), &mut schema) {
            map.entry("description").or_insert_with(|| d.clone());
        }
        inputs.push(Input {
            name: name.to_string(),
            from: match location {
                "path" => "a path parameter",
                "query" => "a query parameter",
                "header" => "a header parameter",
                _ => "a cookie parameter",
            },
            schema,
            required,
        });
    }

    // The body's own keywords (additionalProperties, $defs, …) stay on the merged
    // object so references like `#/$defs/x` still resolve from the tool's root.
    let mut base = Map::new();
    if let Some(body) = op.http.get("requestBody").map(|b| resolved(doc, b)) {
        let body_required = body.get("required").and_then(Value::as_bool) == Some(true);
        let (media, schema) = pick_media(body);
        let structured = matches!(media.as_str(), "form" | "multipart" | "json");
        let schema = schema.cloned().unwrap_or_else(|| json!({}));
        let shown = resolved(doc, &schema);
        match shown {
            Value::Object(object)
                if structured && object.get("properties").is_some_and(Value::is_object) =>
            {
                let required: Vec<&str> = object
                    .get("required")
                    .and_then(Value::as_array)
                    .map(|r| r.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                for (name, property) in object["properties"].as_object().into_iter().flatten() {
                    let property = if media == "json" {
                        property.clone()
                    } else {
                        base64_binary(property)
                    };
                    inputs.push(Input {
                        name: name.clone(),
                        from: "a body property",
                        schema: defs.own(doc, property),
                        required: body_required && required.contains(&name.as_str()),
                    });
                }
                for (k, v) in object {
                    if !matches!(k.as_str(), "type" | "properties" | "required") {
                        base.insert(k.clone(), defs.own(doc, v.clone()));
                    }
                }
            }
            _ => {
                let schema = match media.as_str() {
                    "json" | "form" | "multipart" | "text" => schema,
                    other => json!({
                        "type": "string",
                        "contentEncoding": "base64",
                        "contentMediaType": other,
                        "description": format!("The request body ({other}), base64-encoded.")
                    }),
                };
                inputs.push(Input {
                    name: "body".to_string(),
                    from: "the request body",
                    schema: defs.own(doc, schema),
                    required: body_required,
                });
            }
        }
    }
    inputs.extend(idempotency);

    let mut properties = Map::new();
    let mut required = Vec::new();
    for (i, input) in inputs.iter().enumerate() {
        if let Some(first) = inputs[..i].iter().find(|p| p.name == input.name) {
            findings.push(Finding::error(Diagnostic::McpInputCollision {
                id: op.id.clone(),
                name: input.name.clone(),
                first: first.from,
                second: input.from,
                span: op.origin.id,
            }));
            continue;
        }
        // MCP wants every property schema as an object: boolean schemas get their
        // object spelling, which means the same.
        let schema = match &input.schema {
            Value::Bool(true) => json!({}),
            Value::Bool(false) => json!({ "not": {} }),
            other => other.clone(),
        };
        properties.insert(input.name.clone(), schema);
        if input.required {
            required.push(json!(input.name));
        }
    }
    let mut schema = Map::new();
    schema.insert("type".into(), json!("object"));
    if !properties.is_empty() {
        schema.insert("properties".into(), Value::Object(properties));
    }
    if !required.is_empty() {
        schema.insert("required".into(), Value::Array(required));
    }
    schema.extend(base);
    defs.write_into(&mut schema);
    Value::Object(schema)
}

/// The media type a tool sends, by preference (JSON, form, multipart, text, anything
/// else), and its schema. Kinds: `json`, `form`, `multipart`, `text`, or the type itself.
fn pick_media(body: &Value) -> (String, Option<&Value>) {
    let Some(content) = body.get("content").and_then(Value::as_object) else {
        return ("json".to_string(), None);
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
        .map(|(media, object)| (kind(media), object.get("schema")))
        .min_by_key(|(k, _)| rank(k))
        .unwrap_or(("json".to_string(), None))
}

/// A form or multipart field: a binary string (`format: binary`) travels as base64.
fn base64_binary(schema: &Value) -> Value {
    match schema {
        Value::Object(map) if map.get("format").and_then(Value::as_str) == Some("binary") => {
            let mut out = map.clone();
            out.remove("format");
            out.insert("contentEncoding".into(), json!("base64"));
            Value::Object(out)
        }
        other => other.clone(),
    }
}

/// The most bytes (compact JSON) an `outputSchema` may take with everything it
/// references copied in. Every tool definition travels in one `tools/list` answer:
/// Stripe's PaymentIntent alone reaches 400 schemas (630 KB), and eleven tools carrying
/// it made a 9 MB answer. Past this size the tool has no `outputSchema`, which MCP
/// allows: results then arrive as unstructured content.
pub const OUTPUT_SCHEMA_MAX: usize = 128 * 1024;

/// The success response's JSON schema, when its root is an object (MCP requires that)
/// and it fits `OUTPUT_SCHEMA_MAX`.
fn output_schema(doc: &Document, op: &Operation) -> Option<Value> {
    let responses = op.http.get("responses")?.as_object()?;
    let success = responses
        .iter()
        .filter(|(status, _)| status.starts_with('2'))
        .map(|(_, r)| resolved(doc, r))
        .next()?;
    let (media, schema) = pick_media(success);
    let schema = schema?;
    if media != "json"
        || resolved(doc, schema).get("type").and_then(Value::as_str) != Some("object")
    {
        return None;
    }
    let mut defs = Defs::default();
    let mut out = defs.own(doc, resolved(doc, schema).clone());
    if let Value::Object(map) = &mut out {
        // MCP wants every property schema of outputSchema as an object, as for inputs.
        if let Some(Value::Object(props)) = map.get_mut("properties") {
            for schema in props.values_mut() {
                if let Value::Bool(b) = schema {
                    *schema = if *b { json!({}) } else { json!({ "not": {} }) };
                }
            }
        }
        defs.write_into(map);
    }
    let size = serde_json::to_vec(&out).map_or(usize::MAX, |bytes| bytes.len());
    (size <= OUTPUT_SCHEMA_MAX).then_some(out)
}

/// The components a tool schema uses, copied into its `$defs` under their names.
#[derive(Default)]
struct Defs {
    /// `$defs` key → the copied schema (already rewritten), in name order.
    copied: BTreeMap<String, Value>,
}

impl Defs {
    /// `schema` with every `#/components/…` reference rewritten to `#/$defs/…`, and the
    /// schemas it names copied in (transitively).
    fn own(&mut self, doc: &Document, mut schema: Value) -> Value {
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
    fn write_into(&mut self, root: &mut Map<String, Value>) {
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

/// Rewrites `#/components/<section>/<name>…` references to `#/$defs/<key>…` in place and
/// lists each `(key, reference to the component)` to copy. `<key>` is the name for
/// schemas and `<section>.<name>` for anything else.
fn rewrite(value: &mut Value, pending: &mut Vec<(String, String)>) {
    match value {
        Value::Object(map) => {
            for (key, child) in map.iter_mut() {
                if let ("$ref", Value::String(reference)) = (key.as_str(), &mut *child) {
                    let Some(rest) = reference.strip_prefix("#/components/") else {
                        continue;
                    };
                    let mut parts = rest.splitn(3, '/');
                    let (Some(section), Some(name)) = (parts.next(), parts.next()) else {
                        continue;
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
                } else {
                    rewrite(child, pending);
                }
            }
        }
        Value::Array(list) => list.iter_mut().for_each(|v| rewrite(v, pending)),
        _ => {}
    }
}
