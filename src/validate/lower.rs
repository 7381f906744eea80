//! Inline manifests → OpenAPI: the Operation Object of each inline operation, and the
//! document around them (info, servers, bearer security, RFC 9457 problem responses).
//!
//! Takes: checked inline values (the JSON Schemas moved in, never copied). Returns:
//! plain `serde_json` maps in the key order the generated files have always had, so an
//! inline manifest and a base document meet in one model.
//! Must never: judge anything (the caller has checked it all) or reorder an author's
//! schema.

use serde_json::{Map, Value, json};

use crate::model::{
    Auth, Document, IDEMPOTENCY_HEADER, OpenapiVersion, Operation, Returns, Service,
};

/// The security scheme every inline operation uses.
const BEARER: &str = "bearerAuth";

/// What the model reads about the `Idempotency-Key` header.
pub const IDEMPOTENCY_KEY_DESCRIPTION: &str = "A unique value you choose for this request, such as a UUID. \
Send a fresh value for each new request, and the same value when retrying this request \
(after a timeout or a network error), so the retry returns the original result instead of \
starting or charging for a second one.";

/// One query parameter as written (checked).
pub struct QueryParam {
    pub name: String,
    pub description: Option<String>,
    pub required: bool,
    pub schema: Value,
}

/// The HTTP parts of one inline operation.
pub struct Inline<'a> {
    pub path_params: &'a [String],
    pub query: Vec<QueryParam>,
    pub input: Option<Value>,
    pub output: Option<Value>,
    /// `Some(required)` when the operation declares the `Idempotency-Key` header.
    pub idempotency_key: Option<bool>,
    /// What the call hands back when it is async.
    pub returns: Option<Returns>,
}

/// The Operation Object of an inline operation (without operationId, summary and
/// description, which the renderer writes first).
pub fn operation(op: Inline) -> Map<String, Value> {
    let mut parameters: Vec<Value> = op
        .path_params
        .iter()
        .map(|name| {
            json!({ "name": name, "in": "path", "required": true, "schema": { "type": "string" } })
        })
        .collect();
    for q in op.query {
        let mut p = Map::new();
        p.insert("name".into(), Value::String(q.name));
        p.insert("in".into(), json!("query"));
        if let Some(d) = q.description {
            p.insert("description".into(), Value::String(d));
        }
        p.insert("required".into(), Value::Bool(q.required));
        p.insert("schema".into(), q.schema);
        parameters.push(Value::Object(p));
    }
    if let Some(required) = op.idempotency_key {
        parameters.push(idempotency_parameter(required));
    }

    let mut http = Map::new();
    if !parameters.is_empty() {
        http.insert("parameters".into(), Value::Array(parameters));
    }
    if let Some(schema) = op.input {
        http.insert(
            "requestBody".into(),
            json!({ "required": true, "content": { "application/json": { "schema": schema } } }),
        );
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
    let output = op.output.unwrap_or_else(|| json!({ "type": "object" }));
    let mut responses = Map::new();
    responses.insert(
        "200".into(),
        json!({ "description": success, "content": { "application/json": { "schema": output } } }),
    );
    responses.insert("401".into(), reference("Unauthorized"));
    // The conflict is about a reused Idempotency-Key: only where the header is declared.
    if op.idempotency_key.is_some() {
        responses.insert("409".into(), reference("Conflict"));
    }
    if op.returns.is_some() {
        responses.insert("429".into(), reference("TooManyRequests"));
    }
    http.insert("responses".into(), Value::Object(responses));
    http
}

/// The `Idempotency-Key` header parameter connectorgen declares.
pub fn idempotency_parameter(required: bool) -> Value {
    json!({
        "name": IDEMPOTENCY_HEADER,
        "in": "header",
        "description": IDEMPOTENCY_KEY_DESCRIPTION,
        "required": required,
        "schema": { "type": "string", "minLength": 1, "maxLength": 255 }
    })
}

fn reference(response: &str) -> Value {
    json!({ "$ref": format!("#/components/responses/{response}") })
}

/// The document around inline operations: OpenAPI 3.1.0, one server, bearer tokens,
/// RFC 9457 problem responses (401 everywhere, 409 where the Idempotency-Key header is
/// declared, 429 where async).
pub fn document(service: &Service, auth: &Auth, operations: &[Operation]) -> Document {
    let mut paths = Map::new();
    for op in operations {
        paths
            .entry(op.path.clone())
            .or_insert_with(|| Value::Object(Map::new()));
    }
    let mut root = Map::new();
    root.insert("openapi".into(), json!("3.1.0"));
    root.insert(
        "info".into(),
        json!({
            "title": service.title,
            "version": service.version,
            "description": service.description
        }),
    );
    root.insert("servers".into(), json!([{ "url": service.public_url }]));
    root.insert("security".into(), json!([{ BEARER: [] }]));
    root.insert("paths".into(), Value::Object(paths));
    root.insert("components".into(), components(service, auth, operations));
    Document {
        root,
        version: OpenapiVersion::V31,
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

fn components(service: &Service, auth: &Auth, operations: &[Operation]) -> Value {
    let mut token = crate::english::with_article(&format!("{} connector token", service.name));
    // A sentence starts here.
    token.replace_range(..1, &token[..1].to_uppercase());
    if let Some(prefix) = auth.token_prefixes.first() {
        token.push_str(&format!(" (it starts with `{prefix}`)"));
    }
    let scheme_description = format!(
        "{token}, sent as `Authorization: Bearer <token>`. The person creates and revokes tokens at {}.",
        service.dashboard_url
    );
    let mut responses = Map::new();
    responses.insert(
        "Unauthorized".to_string(),
        problem_response(
            "The token is missing, invalid or revoked. Ask the person to create a new one; do not retry with the same token.",
        ),
    );
    if operations.iter().any(|o| o.idempotency_key) {
        responses.insert(
            "Conflict".to_string(),
            problem_response(
                "This Idempotency-Key was already used for a different request, or the same request is still being processed. Do not resubmit with a new key: wait, then check the first request's result.",
            ),
        );
    }
    if operations.iter().any(|o| o.async_.is_some()) {
        responses.insert(
            "TooManyRequests".to_string(),
            problem_response(
                "Too many requests. Wait (see the Retry-After header) before trying again; a job already started is still running.",
            ),
        );
    }
    json!({
        "securitySchemes": {
            BEARER: {
                "type": "http",
                "scheme": "bearer",
                "description": scheme_description
            }
        },
        "schemas": { "Problem": problem_schema() },
        "responses": responses
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
