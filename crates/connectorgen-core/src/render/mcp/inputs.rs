//! A tool's arguments and the request mapping of the same arguments.
//!
//! Takes: the connector and one operation (its parameters, the path item's shared ones,
//! its body). Returns: the `inputSchema` and the `RequestMapping`, one entry per
//! argument, in the same order (then one for each body field only the body's
//! `oneOf`/`anyOf`/`allOf` branches name, which the root's copy of those keywords
//! describes); findings for `args:`/`fixed:` keys that name no input
//! and `args:` names that collide. A body field a credential part fills in (at the
//! body's top, in its root `allOf`/`anyOf`/`oneOf` branches, or in the whole-body
//! argument) is taken out of the schema everywhere it is named and listed in the
//! mapping's credential; the credential is the operation's own when its `security`
//! says another (`model::Auth::operations`).
//! Must never: give an argument a name outside `^[a-zA-Z0-9_.-]{1,64}$` or two arguments
//! one name (`crate::arguments`), or leave a parameter out of both the arguments and
//! `fixed` unless the connection supplies it (the credential, the headers OpenAPI
//! ignores). Known limit: a `$defs` entry a body branch names loses the credential
//! fields for every use within the tool (a component used both as a branch and deeper
//! in the body); a reference is rewritten, never inlined, so there is one copy.

use std::collections::{BTreeMap, HashSet};

use serde_json::{Map, Value, json};

use super::document::{Defs, base64_binary, pick_media, resolved};
use super::mapping::{
    Argument, Body, Credential, CredentialPart, Encoding, FixedInput, IdempotencyMapping, Location,
    RequestMapping, ServerUrl,
};
use super::{idempotency_argument, is_own_key};
use crate::arguments;
use crate::diagnostics::{Diagnostic, Finding, Span};
use crate::model::{AuthScheme, Connector, Document, FixedSource, Operation, OperationCredential};
use crate::schema_walk;

/// The parameters that apply to an operation: the path item's shared ones, replaced by
/// the operation's own of the same name and location.
fn parameters<'a>(doc: &'a Document, op: &'a Operation) -> Vec<&'a Value> {
    let list = |v: Option<&'a Value>| -> Vec<&'a Value> {
        v.and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|p| resolved(doc, p))
            .collect()
    };
    let shared = list(
        doc.path_item(&op.path)
            .and_then(|item| item.get("parameters")),
    );
    merge_parameters(shared, list(op.http.get("parameters")))
}

/// `shared` without those `own` replaces (same `name` and `in`), then `own`: one pass
/// over each list (a set of the own keys), so 12,000 of each take no longer than reading
/// them.
fn merge_parameters<'a>(shared: Vec<&'a Value>, own: Vec<&'a Value>) -> Vec<&'a Value> {
    fn key(p: &Value) -> (Option<&Value>, Option<&Value>) {
        (p.get("name"), p.get("in"))
    }
    let own_keys: HashSet<(Option<&str>, Option<&str>)> = own
        .iter()
        .map(|p| {
            let (n, l) = key(p);
            (n.and_then(Value::as_str), l.and_then(Value::as_str))
        })
        .collect();
    let mut out: Vec<&Value> = shared
        .into_iter()
        .filter(|p| {
            let (n, l) = key(p);
            !own_keys.contains(&(n.and_then(Value::as_str), l.and_then(Value::as_str)))
        })
        .collect();
    out.extend(own);
    out
}

/// Where the credential travels: (name, location) of each `apiKey` scheme of the
/// document and each part of the connector's credential that is not a body field.
fn credential_parameters(connector: &Connector) -> Vec<(&str, &str)> {
    let doc = &connector.document;
    let parts = connector
        .auth
        .parts
        .iter()
        .filter(|p| !p.in_body())
        .map(|p| (p.name.as_str(), p.location.as_str()));
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
        .chain(parts)
        .collect()
}

/// A part of a credential as the mapping writes it.
fn mapped_part(p: &crate::model::CredentialPart) -> CredentialPart {
    CredentialPart {
        location: match p.location.as_str() {
            "query" => Location::Query,
            "cookie" => Location::Cookie,
            "body" => Location::Body,
            _ => Location::Header,
        },
        name: p.name.clone(),
        format: p.format.clone(),
        encoding: p.basic.then_some(Encoding::Base64),
        env: p.env.clone(),
    }
}

/// How this tool sends a credential: none when its operation's `security` asks for none,
/// the parts of its own requirement when it asks for other schemes (`Auth::operations`);
/// else the connection's: one of the one-part schemes when one part says it (as every
/// manifest before `auth.parts` did), else each part, a body field only when
/// `body_fields` (the fields the tool's body names) has it.
fn credential(connector: &Connector, op: &Operation, body_fields: &[String]) -> Credential {
    let auth = &connector.auth;
    match auth.operation(&op.id) {
        Some(OperationCredential::None) => return Credential::None,
        Some(OperationCredential::Parts(parts)) => {
            return Credential::Parts {
                parts: parts.iter().map(mapped_part).collect(),
            };
        }
        None => {}
    }
    let one_part = match auth.parts.as_slice() {
        [] => true,
        [one] => !one.in_body() && auth.format.is_none(),
        _ => false,
    };
    if !one_part || auth.scheme == AuthScheme::Parts {
        let parts = auth
            .parts
            .iter()
            .filter(|p| !p.in_body() || body_fields.contains(&p.name))
            .map(mapped_part)
            .collect();
        return Credential::Parts { parts };
    }
    match &connector.auth.scheme {
        AuthScheme::Bearer => Credential::Bearer,
        AuthScheme::ApiKey { location, name } => Credential::ApiKey {
            location: Location::of_parameter(location).unwrap_or(Location::Header),
            name: name.clone(),
        },
        AuthScheme::Basic => Credential::Basic,
        AuthScheme::OAuth2 | AuthScheme::OpenIdConnect => Credential::OAuth2,
        AuthScheme::Parts | AuthScheme::None => Credential::None,
    }
}

/// The operation's servers, else its path item's, else the document's.
fn servers(doc: &Document, op: &Operation) -> Vec<ServerUrl> {
    let list = op
        .http
        .get("servers")
        .or_else(|| doc.path_item(&op.path).and_then(|i| i.get("servers")))
        .or_else(|| doc.root.get("servers"))
        .and_then(Value::as_array);
    list.into_iter()
        .flatten()
        .filter_map(|s| {
            let url = s.get("url")?.as_str()?.to_string();
            let variables = s
                .get("variables")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
                .filter_map(|(k, v)| Some((k.clone(), v.get("default")?.as_str()?.to_string())))
                .collect();
            Some(ServerUrl { url, variables })
        })
        .collect()
}

/// One named input of a tool, where it goes, and where it comes from (for messages).
pub(super) struct Input {
    pub(super) location: Location,
    /// The HTTP name; `None` for the whole body.
    pub(super) http: Option<String>,
    pub(super) from: &'static str,
    pub(super) schema: Value,
    pub(super) required: bool,
    pub(super) style: Option<String>,
    pub(super) explode: Option<bool>,
    pub(super) allow_reserved: bool,
    pub(super) content_type: Option<String>,
    pub(super) encoding: Option<Encoding>,
    /// A name connectorgen gives it whatever its HTTP name (`idempotencyKey`), or the
    /// author's from `args:`.
    pub(super) chosen: Option<String>,
    /// The `args:` entry that chose the name, for messages.
    pub(super) chosen_at: Option<Span>,
    pub(super) idempotency: bool,
}

impl Input {
    pub(super) fn new(
        location: Location,
        http: Option<String>,
        from: &'static str,
        schema: Value,
        required: bool,
    ) -> Self {
        Input {
            location,
            http,
            from,
            schema,
            required,
            style: None,
            explode: None,
            allow_reserved: false,
            content_type: None,
            encoding: None,
            chosen: None,
            chosen_at: None,
            idempotency: false,
        }
    }
}

/// Path, query, header and cookie parameters, then the body, then `idempotencyKey`; and
/// the request mapping of the same arguments.
pub(super) fn input_schema(
    connector: &Connector,
    op: &Operation,
    defs: &mut Defs,
    findings: &mut Vec<Finding>,
) -> (Value, RequestMapping) {
    let doc = &connector.document;
    let mut inputs: Vec<Input> = Vec::new();
    let mut idempotency: Option<Input> = None;
    let mut fixed = Vec::new();
    let mut fixed_used = vec![false; op.fixed.len()];
    let credentials = credential_parameters(connector);
    for p in parameters(doc, op) {
        let name = p.get("name").and_then(Value::as_str).unwrap_or_default();
        let location = p.get("in").and_then(Value::as_str).unwrap_or_default();
        let Some(place) = Location::of_parameter(location) else {
            continue;
        };
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
        let (style, explode) = style_of(p, location);
        if let Some(i) = op.fixed.iter().position(|f| f.name == name) {
            fixed_used[i] = true;
            let (env, value) = match &op.fixed[i].source {
                FixedSource::Env(e) => (Some(e.clone()), None),
                FixedSource::Value(v) => (None, Some(v.clone())),
            };
            fixed.push(FixedInput {
                location: place,
                name: name.to_string(),
                style: Some(style),
                explode: Some(explode),
                env,
                value,
            });
            continue;
        }
        let required =
            location == "path" || p.get("required").and_then(Value::as_bool) == Some(true);
        if let Some(input) = idempotency_argument(op, location, name, required) {
            idempotency = Some(input);
            continue;
        }
        let content = p
            .get("content")
            .and_then(Value::as_object)
            .and_then(|c| c.iter().next());
        let schema = p
            .get("schema")
            .or_else(|| content.and_then(|(_, m)| m.get("schema")))
            .cloned()
            .unwrap_or_else(|| json!({}));
        let mut schema = defs.own(doc, schema);
        if let (Some(d), Value::Object(map)) = (p.get("description"), &mut schema) {
            map.entry("description").or_insert_with(|| d.clone());
        }
        let mut input = Input::new(
            place,
            Some(name.to_string()),
            match place {
                Location::Path => "a path parameter",
                Location::Query => "a query parameter",
                Location::Header => "a header parameter",
                _ => "a cookie parameter",
            },
            schema,
            required,
        );
        if let (None, Some((media, _))) = (p.get("schema"), content) {
            input.content_type = Some(media.clone());
        } else {
            input.style = Some(style);
            input.explode = Some(explode);
            input.allow_reserved = location == "query"
                && p.get("allowReserved").and_then(Value::as_bool) == Some(true);
        }
        inputs.push(input);
    }
    // The body's own keywords (additionalProperties, $defs, …) stay on the merged
    // object so references like `#/$defs/x` still resolve from the tool's root.
    let mut base = Map::new();
    let mut body_mapping = None;
    // The top-level fields of a JSON or form body (a credential part or a `fixed:` input
    // may fill one in).
    let mut body_fields: Vec<String> = Vec::new();
    // The body fields only the body schema's `oneOf`/`anyOf`/`allOf` branches name.
    let mut composed: Vec<String> = Vec::new();
    if let Some(body) = op.http.get("requestBody").map(|b| resolved(doc, b)) {
        // OpenAPI's default for `requestBody.required` is false, but providers that list
        // a body's required properties and leave the key out (Twilio's `To`) mean them:
        // only an explicit `required: false` makes the body, and so its fields, optional.
        let written = body.get("required").and_then(Value::as_bool);
        let picked = pick_media(body);
        let media = picked.kind.as_str();
        let structured = matches!(media, "form" | "multipart" | "json");
        let schema = picked.schema.cloned().unwrap_or_else(|| json!({}));
        let shown = resolved(doc, &schema);
        let properties_required: Vec<&str> = match shown {
            Value::Object(object)
                if structured && object.get("properties").is_some_and(Value::is_object) =>
            {
                object
                    .get("required")
                    .and_then(Value::as_array)
                    .map(|r| r.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default()
            }
            _ => Vec::new(),
        };
        let body_required =
            written.unwrap_or(false) || (written.is_none() && !properties_required.is_empty());
        body_mapping = Some(Body {
            media_type: picked
                .media
                .clone()
                .unwrap_or_else(|| "application/json".to_string()),
            required: body_required,
        });
        match shown {
            Value::Object(object)
                if structured && object.get("properties").is_some_and(Value::is_object) =>
            {
                let required = &properties_required;
                let fillable = structured;
                for (name, property) in object["properties"].as_object().into_iter().flatten() {
                    if fillable {
                        body_fields.push(name.clone());
                        // The connection fills in a credential field, never the model.
                        if connector
                            .auth
                            .parts
                            .iter()
                            .any(|p| p.in_body() && p.name == *name)
                        {
                            continue;
                        }
                        if let Some(i) = op.fixed.iter().position(|f| f.name == *name) {
                            fixed_used[i] = true;
                            let (env, value) = match &op.fixed[i].source {
                                FixedSource::Env(e) => (Some(e.clone()), None),
                                FixedSource::Value(v) => (None, Some(v.clone())),
                            };
                            fixed.push(FixedInput {
                                location: Location::Body,
                                name: name.clone(),
                                style: None,
                                explode: None,
                                env,
                                value,
                            });
                            continue;
                        }
                    }
                    let (property, binary) = if media == "json" {
                        (property.clone(), false)
                    } else {
                        base64_binary(doc, property)
                    };
                    let mut input = Input::new(
                        Location::Body,
                        Some(name.clone()),
                        "a body property",
                        defs.own(doc, property),
                        body_required && required.contains(&name.as_str()),
                    );
                    input.encoding = binary.then_some(Encoding::Base64);
                    if media == "form" {
                        // A form field is serialised as a query parameter is, by its
                        // `encoding` entry, else OpenAPI's default (`form`, exploded):
                        // `serve` sends what openapi.json describes. An entry with a
                        // `contentType` and no style says the value is sent as that
                        // media type (JSON text). `allowReserved` is not taken: a raw
                        // `&`, `=` or `+` would change what the form body says.
                        let encoding = picked
                            .object
                            .and_then(|m| m.get("encoding"))
                            .and_then(|e| e.get(name));
                        let field = |key: &str| encoding.and_then(|e| e.get(key));
                        let styled = ["style", "explode", "allowReserved"]
                            .iter()
                            .any(|key| field(key).is_some());
                        match field("contentType").and_then(Value::as_str) {
                            Some(media) if !styled => input.content_type = Some(media.to_string()),
                            _ => {
                                let style =
                                    field("style").and_then(Value::as_str).unwrap_or("form");
                                input.explode = Some(
                                    field("explode")
                                        .and_then(Value::as_bool)
                                        .unwrap_or(style == "form"),
                                );
                                input.style = Some(style.to_string());
                            }
                        }
                    }
                    if media == "multipart" {
                        // The part's media type: the encoding's, else an upload's own
                        // `contentMediaType` (a file of any type says none: the client
                        // sends application/octet-stream).
                        input.content_type = picked
                            .object
                            .and_then(|m| m.get("encoding"))
                            .and_then(|e| e.get(name))
                            .and_then(|e| e.get("contentType"))
                            .and_then(Value::as_str)
                            .map(str::to_string)
                            .or_else(|| binary.then(|| upload_media_type(&input.schema)).flatten());
                    }
                    inputs.push(input);
                }
                for (k, v) in object {
                    if !matches!(k.as_str(), "type" | "properties" | "required") {
                        base.insert(k.clone(), defs.own(doc, v.clone()));
                    }
                }
                // The body's `oneOf`/`anyOf`/`allOf` stay on the tool's root (above), so
                // the fields only their branches name are arguments too: without a
                // mapping entry a call's `amount` would be quoted to the person and left
                // out of the body.
                if fillable {
                    let names = declared_names(doc, shown);
                    for name in &names {
                        if !body_fields.contains(name) {
                            body_fields.push(name.clone());
                        }
                    }
                    for name in names {
                        let own = object["properties"]
                            .as_object()
                            .is_some_and(|p| p.contains_key(&name));
                        let filled = connector
                            .auth
                            .parts
                            .iter()
                            .any(|p| p.in_body() && p.name == name)
                            || op.fixed.iter().any(|f| f.name == name);
                        if !own && !filled && arguments::is_safe(&name) && !composed.contains(&name)
                        {
                            composed.push(name);
                        }
                    }
                }
            }
            _ => {
                if structured {
                    // The whole body is one argument: the fields its branches name can
                    // still be filled in by the connection (a credential part).
                    for name in declared_names(doc, shown) {
                        if !body_fields.contains(&name) {
                            body_fields.push(name);
                        }
                    }
                }
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
                    body_required,
                );
                input.encoding = binary.then_some(Encoding::Base64);
                inputs.push(input);
            }
        }
    }
    for (f, used) in op.fixed.iter().zip(&fixed_used) {
        if !used {
            let mut names: Vec<&str> = parameters(doc, op)
                .iter()
                .filter_map(|p| p.get("name").and_then(Value::as_str))
                .collect();
            names.extend(body_fields.iter().map(String::as_str));
            findings.push(Finding::error(Diagnostic::UnknownMcpInput {
                id: op.id.clone(),
                key: "fixed",
                name: f.name.clone(),
                what: "parameter",
                span: f.span,
                help: unknown_help(
                    &f.name,
                    names,
                    "a path, query, header or cookie parameter, or a top-level field of a JSON or form body",
                ),
            }));
        }
    }

    inputs.extend(idempotency);
    choose_names(op, &mut inputs, findings);

    let names: Vec<String> = name_inputs(&inputs);
    let mut properties = Map::new();
    let mut required = Vec::new();
    let mut arguments = Vec::new();
    let mut idempotency_mapping = None;
    for (input, name) in inputs.into_iter().zip(names) {
        // MCP wants every property schema as an object: boolean schemas get their
        // object spelling, which means the same.
        let mut schema = match input.schema {
            Value::Bool(true) => json!({}),
            Value::Bool(false) => json!({ "not": {} }),
            other => other,
        };
        if let (Some(http), false) = (&input.http, input.idempotency)
            && *http != name
        {
            note_http_name(&mut schema, input.location, http);
        }
        if input.required {
            required.push(json!(name));
        }
        properties.insert(name.clone(), schema);
        if input.idempotency || is_own_key(op, input.location, input.http.as_deref()) {
            idempotency_mapping = Some(IdempotencyMapping {
                argument: name.clone(),
                location: input.location,
                name: input.http.clone().unwrap_or_default(),
                required: input.required,
            });
        }
        arguments.push(Argument {
            argument: name,
            location: input.location,
            name: input.http,
            style: input.style,
            explode: input.explode,
            allow_reserved: input.allow_reserved,
            content_type: input.content_type,
            encoding: input.encoding,
            required: input.required,
        });
    }
    for name in composed {
        // A name an argument already has (a parameter called like a branch's field)
        // stays that argument's: the root's `properties` say where it goes.
        if arguments.iter().any(|a| a.argument == name) {
            continue;
        }
        arguments.push(Argument {
            argument: name.clone(),
            location: Location::Body,
            name: Some(name),
            style: None,
            explode: None,
            allow_reserved: false,
            content_type: None,
            encoding: None,
            required: false,
        });
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
    // The body fields a credential part fills in leave every place the schema names
    // them: the root's `oneOf`/`anyOf`/`allOf` branches (the body's own), or the one
    // argument that is the whole body, and the `$defs` those reach.
    let credential_fields: Vec<String> = connector
        .auth
        .parts
        .iter()
        .filter(|p| p.in_body() && body_fields.contains(&p.name))
        .map(|p| p.name.clone())
        .collect();
    let mut schema = Value::Object(schema);
    if !credential_fields.is_empty() {
        let whole = arguments
            .iter()
            .find(|a| a.location == Location::Body && a.name.is_none());
        let starts: Vec<String> = match whole {
            Some(a) => vec![format!("/properties/{}", crate::model::escape(&a.argument))],
            None => ["allOf", "anyOf", "oneOf"]
                .iter()
                .flat_map(|key| {
                    let count = schema
                        .get(*key)
                        .and_then(Value::as_array)
                        .map_or(0, Vec::len);
                    (0..count).map(move |i| format!("/{key}/{i}"))
                })
                .collect(),
        };
        strip_fields(&mut schema, &starts, &credential_fields);
    }
    let mapping = RequestMapping {
        method: op.method.upper().to_string(),
        path: op.path.clone(),
        servers: servers(doc, op),
        arguments,
        body: body_mapping,
        idempotency: idempotency_mapping,
        fixed,
        credential: credential(connector, op, &body_fields),
        omitted: Vec::new(),
    };
    (schema, mapping)
}

/// Removes the fields `names` from the `properties` and `required` of the schemas at
/// `starts` (JSON pointers into `root`) and of those `schema_walk` reaches from them.
fn strip_fields(root: &mut Value, starts: &[String], names: &[String]) {
    for pointer in schema_walk::reached(root, starts, false) {
        let Some(Value::Object(schema)) = root.pointer_mut(&pointer) else {
            continue;
        };
        if let Some(Value::Object(properties)) = schema.get_mut("properties") {
            for name in names {
                properties.shift_remove(name);
            }
        }
        if let Some(Value::Array(required)) = schema.get_mut("required") {
            required.retain(|r| r.as_str().is_none_or(|r| !names.iter().any(|n| n == r)));
            if required.is_empty() {
                schema.shift_remove("required");
            }
        }
    }
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

/// A parameter's style and explode, OpenAPI's defaults filled in.
fn style_of(p: &Value, location: &str) -> (String, bool) {
    let style = p.get("style").and_then(Value::as_str).map_or_else(
        || match location {
            "query" | "cookie" => "form".to_string(),
            _ => "simple".to_string(),
        },
        str::to_string,
    );
    let explode = p
        .get("explode")
        .and_then(Value::as_bool)
        .unwrap_or(style == "form");
    (style, explode)
}

/// Applies `args:`: each key names the first input (in argument order) of that HTTP
/// name; a key that names none is an error.
fn choose_names(op: &Operation, inputs: &mut [Input], findings: &mut Vec<Finding>) {
    for arg in &op.args {
        match inputs
            .iter_mut()
            .find(|i| i.http.as_deref() == Some(arg.input.as_str()) && !i.idempotency)
        {
            Some(input) => {
                input.chosen = Some(arg.name.clone());
                input.chosen_at = Some(arg.span);
            }
            None => findings.push(Finding::error(Diagnostic::UnknownMcpInput {
                id: op.id.clone(),
                key: "args",
                name: arg.input.clone(),
                what: "parameter or body property",
                span: arg.input_span,
                help: unknown_help(
                    &arg.input,
                    inputs.iter().filter_map(|i| i.http.as_deref()).collect(),
                    "a parameter or top-level body property",
                ),
            })),
        }
    }
    // Two inputs the author (or connectorgen, for `idempotencyKey`) named alike.
    let mut seen: BTreeMap<&str, &Input> = BTreeMap::new();
    for input in inputs.iter() {
        let Some(name) = input.chosen.as_deref() else {
            continue;
        };
        if let Some(first) = seen.get(name) {
            findings.push(Finding::error(Diagnostic::McpInputCollision {
                id: op.id.clone(),
                name: name.to_string(),
                first: described(first),
                second: described(input),
                span: input.chosen_at.or(first.chosen_at).unwrap_or(op.origin.id),
            }));
        } else {
            seen.insert(name, input);
        }
    }
}

/// `` `name` (a query parameter) ``, for messages.
fn described(input: &Input) -> String {
    match &input.http {
        Some(name) => format!("`{name}` ({})", input.from),
        None => input.from.to_string(),
    }
}

/// The argument names: chosen ones as they are, the others by `arguments::assign`.
fn name_inputs(inputs: &[Input]) -> Vec<String> {
    let wanted: Vec<(Option<&str>, &str, &str)> = inputs
        .iter()
        .map(|i| {
            (
                i.chosen.as_deref(),
                i.http.as_deref().unwrap_or("body"),
                i.location.as_str(),
            )
        })
        .collect();
    arguments::assign(&wanted)
}

fn unknown_help(name: &str, names: Vec<&str>, what: &str) -> String {
    let close = names
        .iter()
        .filter(|n| strsim::jaro_winkler(name, n) > 0.8)
        .max_by(|a, b| strsim::jaro_winkler(name, a).total_cmp(&strsim::jaro_winkler(name, b)));
    match close {
        Some(n) => format!("did you mean `{n}`? The key is the HTTP name of {what}"),
        // `what` carries its article ("a parameter …"): "has no a parameter" is not English.
        None if names.is_empty() => {
            "the operation has no parameters and no top-level body fields to name".to_string()
        }
        None => format!(
            "the key is the HTTP name of {what}: one of {}",
            names
                .iter()
                .take(8)
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// Adds to an argument's description the HTTP name it is sent as, when its argument
/// name differs.
fn note_http_name(schema: &mut Value, location: Location, http: &str) {
    let Value::Object(map) = schema else {
        return;
    };
    let what = match location {
        Location::Body => "body property",
        Location::Path => "path parameter",
        Location::Query => "query parameter",
        Location::Header => "header",
        Location::Cookie => "cookie",
    };
    let quoted = serde_json::to_string(http).unwrap_or_default();
    let note = format!("Sent as the {what} {quoted}.");
    let text = match map.get("description").and_then(Value::as_str) {
        Some(d) if !d.trim().is_empty() => format!("{} {note}", d.trim_end()),
        _ => note,
    };
    map.insert("description".into(), Value::String(text));
}
