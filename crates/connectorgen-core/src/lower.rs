//! The lowering stage, inline manifests → OpenAPI: the Operation Object of each inline
//! operation, and the document around them (info, servers, security, shared schemas,
//! error responses); and the `Idempotency-Key` header parameter connectorgen declares in
//! either mode. A stage of its own under `validate` (which calls it once an operation is
//! checked) that imports only `model` and `english`, so the validator's modules do not meet
//! through it.
//!
//! Takes: checked inline values (the JSON Schemas moved in, never copied). Returns:
//! plain `serde_json` maps in the key order the generated files have always had, so an
//! inline manifest and a base document meet in one model.
//! Must never: judge anything (the caller has checked it all) or reorder an author's
//! schema.

use serde_json::{Map, Value, json};

use crate::model::{
    Auth, AuthScheme, Document, IDEMPOTENCY_HEADER, Operation, Returns, Service, media_essence,
};

/// One parameter as written (checked).
pub(crate) struct Param {
    pub name: String,
    /// `path`, `query` or `header`.
    pub location: &'static str,
    pub description: Option<String>,
    pub required: bool,
    pub style: Option<String>,
    pub explode: Option<bool>,
    pub schema: Value,
}

impl Param {
    fn into_value(self) -> Value {
        // Sized for its keys: a map grown one insert at a time is reallocated and
        // rehashed on the way (tens of thousands of parameters in a large manifest).
        let len = 4
            + usize::from(self.description.is_some())
            + usize::from(self.style.is_some())
            + usize::from(self.explode.is_some());
        let mut p = Map::with_capacity(len);
        p.insert("name".into(), Value::String(self.name));
        p.insert("in".into(), json!(self.location));
        if let Some(d) = self.description {
            p.insert("description".into(), Value::String(d));
        }
        p.insert("required".into(), Value::Bool(self.required));
        if let Some(style) = self.style {
            p.insert("style".into(), Value::String(style));
        }
        if let Some(explode) = self.explode {
            p.insert("explode".into(), Value::Bool(explode));
        }
        p.insert("schema".into(), self.schema);
        Value::Object(p)
    }
}

/// The error responses of a manifest.
#[derive(Default)]
pub(crate) enum Errors {
    /// RFC 9457 problem details: 401 on every operation, 409 where the Idempotency-Key
    /// header is declared, 429 where it is async.
    #[default]
    Problem,
    /// `errors:`: the provider's body under each listed status, on every operation (409
    /// only where the `Idempotency-Key` header is declared).
    Provider {
        content_type: String,
        schema: Value,
        statuses: Vec<String>,
    },
}

/// The HTTP parts of one inline operation.
pub(crate) struct Inline<'a> {
    pub path_params: &'a [String],
    /// `params:`: descriptions and schemas of path parameters, by name.
    pub params: Vec<Param>,
    pub query: Vec<Param>,
    pub headers: Vec<Param>,
    pub input: Option<Value>,
    pub input_type: String,
    pub input_required: bool,
    pub output: Option<Value>,
    pub output_type: String,
    pub status: u16,
    /// `Some(required)` when the operation declares the `Idempotency-Key` header.
    pub idempotency_key: Option<bool>,
    /// What the call hands back when it is async.
    pub returns: Option<Returns>,
    pub deprecated: bool,
    pub tags: Vec<String>,
    /// The `openapi:` fragment, merged over the rest.
    pub fragment: Option<Map<String, Value>>,
}

/// What a media type carries: JSON, text, or bytes.
fn is_json(media: &str) -> bool {
    let essence = media_essence(media);
    essence == "application/json" || essence.ends_with("+json")
}

fn is_text(media: &str) -> bool {
    media_essence(media).starts_with("text/")
}

/// Whether a body of this type is fields (form, multipart) or JSON: it needs `input`.
pub(crate) fn is_structured(media: &str) -> bool {
    let essence = media_essence(media);
    is_json(media)
        || essence == "application/x-www-form-urlencoded"
        || essence == "multipart/form-data"
}

/// The schema of a body nobody described: an object for JSON, text for `text/*`, bytes
/// for anything else.
pub(crate) fn default_schema(media: &str) -> Value {
    if is_json(media) {
        json!({ "type": "object" })
    } else if is_text(media) {
        json!({ "type": "string" })
    } else {
        json!({ "type": "string", "format": "binary" })
    }
}

/// The Operation Object of an inline operation (without operationId, summary and
/// description, which the renderer writes first).
pub(crate) fn operation(op: Inline, errors: &Errors) -> Map<String, Value> {
    let Inline {
        path_params,
        mut params,
        query,
        headers,
        ..
    } = op;
    // The maps and lists below are made at the size they end with: they are held to the
    // end of a build, several per operation, and one grown by inserts (as `json!` builds
    // its maps) keeps room for up to twice its entries.
    let mut parameters: Vec<Value> = Vec::with_capacity(
        path_params.len() + query.len() + headers.len() + usize::from(op.idempotency_key.is_some()),
    );
    parameters.extend(path_params.iter().map(|name| {
        match params.iter().position(|p| &p.name == name) {
            Some(i) => params.remove(i).into_value(),
            None => object([
                ("name", Value::String(name.clone())),
                ("in", Value::String("path".into())),
                ("required", Value::Bool(true)),
                ("schema", object([("type", Value::String("string".into()))])),
            ]),
        }
    }));
    parameters.extend(query.into_iter().map(Param::into_value));
    parameters.extend(headers.into_iter().map(Param::into_value));
    if let Some(required) = op.idempotency_key {
        parameters.push(idempotency_parameter(required));
    }

    // The author's schemas are moved into place, never through `json!`: with a variable
    // in it, `json!` serialises a deep copy (9% of a build's instructions at 10,000
    // operations).
    let mut http = Map::with_capacity(
        usize::from(!op.tags.is_empty())
            + usize::from(!parameters.is_empty())
            + usize::from(op.input.is_some())
            + 1
            + usize::from(op.deprecated),
    );
    if !op.tags.is_empty() {
        let tags = op.tags.into_iter().map(Value::String).collect();
        http.insert("tags".into(), Value::Array(tags));
    }
    if !parameters.is_empty() {
        http.insert("parameters".into(), Value::Array(parameters));
    }
    if let Some(schema) = op.input {
        let mut body = Map::with_capacity(2);
        body.insert("required".into(), Value::Bool(op.input_required));
        body.insert("content".into(), content(op.input_type, schema));
        http.insert("requestBody".into(), Value::Object(body));
    }
    let success = match op.returns {
        Some(Returns::Job) => {
            "The job was accepted. Poll the operation named in x-poll-operationId for its result."
        }
        Some(Returns::Change) => {
            "The change was accepted and settles in the background. Poll the operation named in x-poll-operationId until it shows the result."
        }
        None => "Success.",
    };
    let errors_here = match errors {
        Errors::Problem => {
            1 + usize::from(op.idempotency_key.is_some()) + usize::from(op.returns.is_some())
        }
        Errors::Provider { statuses, .. } => statuses.len(),
    };
    let mut responses = Map::with_capacity(1 + errors_here);
    let mut ok = Map::with_capacity(2);
    ok.insert("description".into(), Value::String(success.into()));
    if op.status != 204 {
        let schema = op.output.unwrap_or_else(|| default_schema(&op.output_type));
        ok.insert("content".into(), content(op.output_type, schema));
    }
    responses.insert(op.status.to_string(), Value::Object(ok));
    match errors {
        Errors::Problem => {
            responses.insert("401".into(), reference("Unauthorized"));
            // The conflict is about a reused Idempotency-Key: only where the header is declared.
            if op.idempotency_key.is_some() {
                responses.insert("409".into(), reference("Conflict"));
            }
            if op.returns.is_some() {
                responses.insert("429".into(), reference("TooManyRequests"));
            }
        }
        Errors::Provider { statuses, .. } => {
            for status in statuses {
                if status == "409" && op.idempotency_key.is_none() {
                    continue;
                }
                responses.insert(status.clone(), reference(&error_response_name(status)));
            }
        }
    }
    http.insert("responses".into(), Value::Object(responses));
    if op.deprecated {
        http.insert("deprecated".into(), json!(true));
    }
    if let Some(fragment) = op.fragment {
        merge(&mut http, fragment);
    }
    http
}

/// `{ <media>: { "schema": <schema> } }`, the schema moved in.
fn content(media: String, schema: Value) -> Value {
    let mut media_type = Map::with_capacity(1);
    media_type.insert("schema".into(), schema);
    let mut content = Map::with_capacity(1);
    content.insert(media, Value::Object(media_type));
    Value::Object(content)
}

/// `fragment` over `base`: mappings merge key by key, `parameters` by name and location
/// (a generated path parameter or `Idempotency-Key` header is never lost to a fragment
/// that describes one more parameter), anything else replaces.
fn merge(base: &mut Map<String, Value>, fragment: Map<String, Value>) {
    for (key, value) in fragment {
        match (base.get_mut(&key), value) {
            (Some(Value::Array(ours)), Value::Array(theirs)) if key == "parameters" => {
                merge_parameters(ours, theirs);
            }
            (Some(Value::Object(ours)), Value::Object(theirs)) => merge(ours, theirs),
            (_, value) => {
                base.insert(key, value);
            }
        }
    }
}

/// Each of `theirs` merged over the parameter of `ours` with its name and location,
/// or added after them.
fn merge_parameters(ours: &mut Vec<Value>, theirs: Vec<Value>) {
    let key = |p: &Value| {
        (
            p.get("name").and_then(Value::as_str).map(str::to_string),
            p.get("in").and_then(Value::as_str).map(str::to_string),
        )
    };
    for param in theirs {
        let found = ours.iter_mut().find(|p| key(p) == key(&param));
        match (found, param) {
            (Some(Value::Object(existing)), Value::Object(over)) => merge(existing, over),
            (_, param) => ours.push(param),
        }
    }
}

/// A JSON object of these members in this order, made at its size (`json!` grows its
/// maps an insert at a time).
pub(crate) fn object<const N: usize>(members: [(&str, Value); N]) -> Value {
    let mut map = Map::with_capacity(N);
    for (key, value) in members {
        map.insert(key.to_string(), value);
    }
    Value::Object(map)
}

fn reference(response: &str) -> Value {
    let mut map = Map::with_capacity(1);
    map.insert(
        "$ref".into(),
        Value::String(format!("#/components/responses/{response}")),
    );
    Value::Object(map)
}

/// The component name of the provider's error response under `status`.
fn error_response_name(status: &str) -> String {
    match status {
        "401" => "Unauthorized".to_string(),
        "409" => "Conflict".to_string(),
        "429" => "TooManyRequests".to_string(),
        "default" => "Error".to_string(),
        other => format!("Error{other}"),
    }
}

/// What the model reads about an error status: what happened, and what not to do.
fn error_description(status: &str) -> &'static str {
    match status {
        "401" => {
            "The token is missing, invalid or revoked. Ask the person to create a new one; do not retry with the same token."
        }
        "409" => {
            "This Idempotency-Key was already used for a different request, or the same request is still being processed. Do not resubmit with a new key: wait, then check the first request's result."
        }
        "429" => {
            "Too many requests. Wait (see the Retry-After header) before trying again; a job already started is still running."
        }
        s if s.starts_with('5') => {
            "The provider failed. The request may or may not have been carried out: check with a read before trying again."
        }
        "default" => "An error. Read the body before deciding whether to try again.",
        _ => {
            "The request was refused. Read the body and fix the request; sending it again unchanged fails again."
        }
    }
}

/// Everything a manifest says about the document around its inline operations.
pub(crate) struct Around<'a> {
    pub service: &'a Service,
    pub auth: &'a Auth,
    /// `servers:` after `publicUrl`: (url, description).
    pub servers: Vec<(String, Option<String>)>,
    pub contact: Option<Value>,
    pub license: Option<Value>,
    /// `tags:`: (name, description), in order.
    pub tags: Vec<(String, String)>,
    /// `schemas:`, in order.
    pub schemas: Map<String, Value>,
    pub errors: &'a Errors,
}

/// The document around inline operations: OpenAPI 3.1.0, the servers, the security
/// scheme `auth:` describes, the shared schemas, and the error responses.
pub(crate) fn document(around: Around, operations: &[Operation]) -> Document {
    let Around {
        service,
        auth,
        servers,
        contact,
        license,
        tags: described,
        mut schemas,
        errors,
    } = around;
    let mut paths = Map::new();
    let mut tags: Vec<&str> = Vec::new();
    for op in operations {
        paths
            .entry(op.path.clone())
            .or_insert_with(|| Value::Object(Map::new()));
        for tag in op
            .http
            .get("tags")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(tag) = tag.as_str()
                && !tags.contains(&tag)
            {
                tags.push(tag);
            }
        }
    }
    let mut root = Map::new();
    root.insert("openapi".into(), json!("3.1.0"));
    let mut info = Map::new();
    info.insert("title".into(), json!(service.title));
    info.insert("version".into(), json!(service.version));
    info.insert("description".into(), json!(service.description));
    if let Some(contact) = contact {
        info.insert("contact".into(), contact);
    }
    if let Some(license) = license {
        info.insert("license".into(), license);
    }
    root.insert("info".into(), Value::Object(info));
    let mut server_list = vec![json!({ "url": service.public_url })];
    for (url, description) in servers {
        let mut server = Map::new();
        server.insert("url".into(), Value::String(url));
        if let Some(d) = description {
            server.insert("description".into(), Value::String(d));
        }
        server_list.push(Value::Object(server));
    }
    root.insert("servers".into(), Value::Array(server_list));
    let schemes = security_schemes(service, auth);
    if !schemes.is_empty() {
        let requirement: Map<String, Value> = schemes
            .iter()
            .map(|(name, _)| (name.clone(), json!([])))
            .collect();
        root.insert("security".into(), json!([requirement]));
    }
    // The tags the operations use, in order of first use, then described ones no
    // operation uses (nothing the author wrote is dropped).
    for (name, _) in &described {
        if !tags.contains(&name.as_str()) {
            tags.push(name);
        }
    }
    if !tags.is_empty() {
        let list: Vec<Value> = tags
            .iter()
            .map(|t| match described.iter().find(|(name, _)| name == t) {
                Some((_, d)) => json!({ "name": t, "description": d }),
                None => json!({ "name": t }),
            })
            .collect();
        root.insert("tags".into(), Value::Array(list));
    }
    root.insert("paths".into(), Value::Object(paths));

    let responses = error_responses(errors, &mut schemas, operations);
    let mut components = Map::new();
    if !schemes.is_empty() {
        components.insert(
            "securitySchemes".into(),
            Value::Object(schemes.into_iter().collect()),
        );
    }
    components.insert("schemas".into(), Value::Object(schemas));
    components.insert("responses".into(), Value::Object(responses));
    root.insert("components".into(), Value::Object(components));
    Document { root }
}

/// The error responses the operations refer to (`#/components/responses/…`): the
/// problem+json ones (the `Problem` schema added to `schemas`; a 429 only when some
/// operation starts a job) or the provider's; a 409 only when some operation answers it
/// (its `Idempotency-Key` added by a short form).
fn error_responses(
    errors: &Errors,
    schemas: &mut Map<String, Value>,
    operations: &[Operation],
) -> Map<String, Value> {
    let mut responses = Map::new();
    match errors {
        Errors::Problem => {
            schemas.insert("Problem".into(), problem_schema());
            responses.insert(
                "Unauthorized".to_string(),
                problem_response(error_description("401")),
            );
            // Only where an operation answers it: the lowering writes the 409 on the
            // operations whose `Idempotency-Key` a short form added (a named key's
            // provider may answer a reused key otherwise: `idempotency.duplicate`).
            if operations.iter().any(|o| {
                o.http
                    .get("responses")
                    .is_some_and(|r| r.get("409").is_some())
            }) {
                responses.insert(
                    "Conflict".to_string(),
                    problem_response(error_description("409")),
                );
            }
            if operations.iter().any(|o| o.async_.is_some()) {
                responses.insert(
                    "TooManyRequests".to_string(),
                    problem_response(error_description("429")),
                );
            }
        }
        Errors::Provider {
            content_type,
            schema,
            statuses,
        } => {
            for status in statuses {
                if status == "409" && !operations.iter().any(|o| o.key().is_some_and(|k| k.added)) {
                    continue;
                }
                let mut content = Map::new();
                content.insert(content_type.clone(), json!({ "schema": schema }));
                responses.insert(
                    error_response_name(status),
                    json!({ "description": error_description(status), "content": content }),
                );
            }
        }
    }
    responses
}

/// The security schemes of an inline manifest, by their names in `components`: the one
/// of a one-part credential (as before `auth.parts`), else one per part that is not a
/// body field (OpenAPI cannot say those; `credential-not-expressible` warns).
fn security_schemes(service: &Service, auth: &Auth) -> Vec<(String, Value)> {
    if auth.scheme != AuthScheme::Parts {
        let (name, mut scheme) = security_scheme(service, auth);
        if let (Some(format), Some(Value::String(d))) =
            (&auth.format, scheme.get_mut("description"))
        {
            d.push_str(&format!(
                " Written `{}`.",
                format.replace("{value}", "<credential>")
            ));
        }
        return vec![(name.to_string(), scheme)];
    }
    auth.parts
        .iter()
        .filter(|p| !p.in_body())
        .map(|p| {
            let key: String = p
                .name
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() || "-._".contains(c) { c } else { '_' })
                .collect();
            let mut scheme = if p.basic {
                json!({ "type": "http", "scheme": "basic" })
            } else if p.name == "Authorization" && p.format.as_deref() == Some("Bearer {value}") {
                json!({ "type": "http", "scheme": "bearer" })
            } else {
                json!({ "type": "apiKey", "in": p.location, "name": p.name })
            };
            let how = match &p.format {
                Some(f) if !p.basic => format!(" Written `{}`.", f.replace("{value}", "<credential>")),
                _ => String::new(),
            };
            scheme["description"] = json!(format!(
                "One part of the {} {}, sent together with the others.{how} The person creates it at {}.",
                service.name, auth.credential_name, service.dashboard_url
            ));
            (key, scheme)
        })
        .collect()
}

/// The security scheme of a one-part credential, by its name in `components`.
fn security_scheme(service: &Service, auth: &Auth) -> (&'static str, Value) {
    let mut credential =
        crate::english::with_article(&format!("{} {}", service.name, auth.credential_name));
    // A sentence starts here.
    credential.replace_range(..1, &credential[..1].to_uppercase());
    match auth.token_prefixes.as_slice() {
        [] => {}
        [one] => credential.push_str(&format!(" (it starts with `{one}`)")),
        many => {
            let list: Vec<String> = many.iter().map(|p| format!("`{p}`")).collect();
            credential.push_str(&format!(" (it starts with {})", list.join(" or ")));
        }
    }
    let plural = auth
        .credential_name
        .split_whitespace()
        .next_back()
        .map_or("credentials".to_string(), |w| format!("{w}s"));
    let at = format!(
        "The person creates and revokes {plural} at {}.",
        service.dashboard_url
    );
    match &auth.scheme {
        AuthScheme::ApiKey { location, name } => {
            let how = if location == "query" {
                format!("sent as the `{name}` query parameter")
            } else {
                format!("sent in the `{name}` header")
            };
            (
                "apiKeyAuth",
                json!({ "type": "apiKey", "in": location, "name": name, "description": format!("{credential}, {how}. {at}") }),
            )
        }
        AuthScheme::Basic => (
            "basicAuth",
            json!({ "type": "http", "scheme": "basic", "description": format!("{credential}, sent as HTTP Basic credentials. {at}") }),
        ),
        _ => (
            "bearerAuth",
            json!({ "type": "http", "scheme": "bearer", "description": format!("{credential}, sent as `Authorization: Bearer <token>`. {at}") }),
        ),
    }
}

fn problem_response(description: &str) -> Value {
    json!({
        "description": description,
        "content": {
            "application/problem+json": { "schema": { "$ref": "#/components/schemas/Problem" } }
        }
    })
}

/// RFC 9457 problem details.
fn problem_schema() -> Value {
    json!({
        "type": "object",
        "description": "An RFC 9457 problem details object.",
        "properties": {
            "type": { "type": "string", "format": "uri-reference", "description": "A URI reference that identifies the problem type." },
            "title": { "type": "string", "description": "A short, human-readable summary of the problem type." },
            "status": { "type": "integer", "description": "The HTTP status code." },
            "detail": { "type": "string", "description": "A human-readable explanation specific to this occurrence." },
            "instance": { "type": "string", "format": "uri-reference", "description": "A URI reference that identifies this occurrence." }
        }
    })
}

/// What the model reads about the `Idempotency-Key` header.
pub(crate) const IDEMPOTENCY_KEY_DESCRIPTION: &str = "A unique value you choose for this request, such as a UUID. \
Send a fresh value for each new request, and the same value when retrying this request \
(after a timeout or a network error), so the retry returns the original result instead of \
starting or charging for a second one.";

/// The `Idempotency-Key` header parameter connectorgen declares.
pub(crate) fn idempotency_parameter(required: bool) -> Value {
    // Made at its size, not by `json!` (`object` says why).
    object([
        ("name", Value::String(IDEMPOTENCY_HEADER.into())),
        ("in", Value::String("header".into())),
        (
            "description",
            Value::String(IDEMPOTENCY_KEY_DESCRIPTION.into()),
        ),
        ("required", Value::Bool(required)),
        (
            "schema",
            object([
                ("type", Value::String("string".into())),
                ("minLength", Value::from(1)),
                ("maxLength", Value::from(255)),
            ]),
        ),
    ])
}
