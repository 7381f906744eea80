//! Connector → `openapi.json` (OpenAPI 3.1.0).
//!
//! Takes: the validated connector and each operation's model-facing description (from
//! `prose.rs`, so the text in the spec and in descriptions.md is one string). Returns:
//! the pretty-printed JSON text with a trailing newline.
//! Must never: be built from a text template, reorder or rewrite the author's JSON
//! Schemas, or emit keys in an order that depends on anything but the manifest.

use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::model::{Connector, Idempotency, Operation};

#[derive(Serialize)]
struct Document<'a> {
    openapi: &'static str,
    info: Info<'a>,
    servers: [Server<'a>; 1],
    security: [Map<String, Value>; 1],
    paths: Map<String, Value>,
    components: Value,
}

#[derive(Serialize)]
struct Info<'a> {
    title: &'a str,
    version: &'a str,
    description: &'a str,
}

#[derive(Serialize)]
struct Server<'a> {
    url: &'a str,
}

#[derive(Serialize)]
struct OperationObject<'a> {
    #[serde(rename = "operationId")]
    operation_id: &'a str,
    summary: &'a str,
    description: &'a str,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    parameters: Vec<Parameter<'a>>,
    #[serde(rename = "requestBody", skip_serializing_if = "Option::is_none")]
    request_body: Option<Value>,
    responses: Map<String, Value>,
    #[serde(rename = "x-openai-isConsequential")]
    is_consequential: bool,
    #[serde(rename = "x-long-running", skip_serializing_if = "Option::is_none")]
    long_running: Option<bool>,
    #[serde(rename = "x-poll-operationId", skip_serializing_if = "Option::is_none")]
    poll_operation_id: Option<&'a str>,
    #[serde(rename = "x-typical-seconds", skip_serializing_if = "Option::is_none")]
    typical_seconds: Option<u64>,
    #[serde(rename = "x-cost-kind", skip_serializing_if = "Option::is_none")]
    cost_kind: Option<&'static str>,
    #[serde(rename = "x-cost-note", skip_serializing_if = "Option::is_none")]
    cost_note: Option<&'a str>,
    #[serde(
        rename = "x-requires-confirmation",
        skip_serializing_if = "Option::is_none"
    )]
    requires_confirmation: Option<bool>,
}

#[derive(Serialize)]
struct Parameter<'a> {
    name: &'a str,
    #[serde(rename = "in")]
    location: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<&'a str>,
    required: bool,
    schema: &'a Value,
}

const BEARER: &str = "bearerAuth";

const IDEMPOTENCY_KEY_DESCRIPTION: &str = "A unique value you choose for this request, such as a UUID. \
Send a fresh value for each new request, and the same value when retrying this request \
(after a timeout or a network error), so the retry returns the original result instead of \
starting or charging for a second one.";

/// Renders the OpenAPI document. `descriptions[i]` is operation i's model-facing text.
pub fn render(connector: &Connector, descriptions: &[String]) -> String {
    to_text(&document(connector, descriptions))
}

/// Pretty JSON with one trailing newline, as every generated JSON file is written.
pub fn to_text(doc: &Value) -> String {
    let mut text =
        serde_json::to_string_pretty(doc).expect("serialising in-memory JSON cannot fail");
    text.push('\n');
    text
}

/// The OpenAPI 3.1 document as a JSON value (other targets derive theirs from it).
pub fn document(connector: &Connector, descriptions: &[String]) -> Value {
    let string_schema = json!({ "type": "string" });
    let key_schema = json!({ "type": "string", "minLength": 1, "maxLength": 255 });
    let mut paths: Map<String, Value> = Map::new();
    for (op, description) in connector.operations.iter().zip(descriptions) {
        let object = operation(op, description, &string_schema, &key_schema);
        let item = paths
            .entry(op.path.clone())
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(item) = item {
            item.insert(op.method.as_str().to_string(), to_value(&object));
        }
    }
    let doc = Document {
        openapi: "3.1.0",
        info: Info {
            title: &connector.service.title,
            version: &connector.service.version,
            description: &connector.service.description,
        },
        servers: [Server {
            url: &connector.service.public_url,
        }],
        security: [Map::from_iter([(BEARER.to_string(), json!([]))])],
        paths,
        components: components(connector),
    };
    to_value(&doc)
}

fn operation<'a>(
    op: &'a Operation,
    description: &'a str,
    string_schema: &'a Value,
    key_schema: &'a Value,
) -> OperationObject<'a> {
    let mut parameters: Vec<Parameter> = op
        .path_params
        .iter()
        .map(|name| Parameter {
            name,
            location: "path",
            description: None,
            required: true,
            schema: string_schema,
        })
        .collect();
    parameters.extend(op.query.iter().map(|q| Parameter {
        name: &q.name,
        location: "query",
        description: q.description.as_deref(),
        required: q.required,
        schema: &q.schema,
    }));
    if op.takes_idempotency_key() {
        parameters.push(Parameter {
            name: "Idempotency-Key",
            location: "header",
            description: Some(IDEMPOTENCY_KEY_DESCRIPTION),
            required: op.idempotency == Idempotency::Required,
            schema: key_schema,
        });
    }

    let request_body = op.input.as_ref().map(|schema| {
        json!({
            "required": true,
            "content": { "application/json": { "schema": schema } }
        })
    });

    let mut responses = Map::new();
    let success = if op.async_.is_some() {
        "The job was accepted. Poll the operation named in x-poll-operationId for its result."
    } else {
        "Success."
    };
    responses.insert(
        "200".to_string(),
        json!({
            "description": success,
            "content": { "application/json": { "schema": op.output } }
        }),
    );
    responses.insert("401".to_string(), response_ref("Unauthorized"));
    if op.spends.is_some() {
        responses.insert("409".to_string(), response_ref("Conflict"));
    }
    if op.async_.is_some() {
        responses.insert("429".to_string(), response_ref("TooManyRequests"));
    }

    OperationObject {
        operation_id: &op.id,
        summary: &op.summary,
        description,
        parameters,
        request_body,
        responses,
        is_consequential: op.spends.is_some(),
        long_running: op.async_.as_ref().map(|_| true),
        poll_operation_id: op.async_.as_ref().map(|a| a.poll_with.as_str()),
        typical_seconds: op.async_.as_ref().and_then(|a| a.typical_seconds),
        cost_kind: op.spends.as_ref().map(|s| s.kind.as_str()),
        cost_note: op.spends.as_ref().map(|s| s.note.as_str()),
        requires_confirmation: op.spends.as_ref().map(|_| true),
    }
}

fn response_ref(name: &str) -> Value {
    json!({ "$ref": format!("#/components/responses/{name}") })
}

fn problem_response(description: &str) -> Value {
    json!({
        "description": description,
        "content": {
            "application/problem+json": { "schema": { "$ref": "#/components/schemas/Problem" } }
        }
    })
}

fn components(connector: &Connector) -> Value {
    let service = &connector.service;
    let token = match &connector.token_prefix {
        Some(prefix) => format!(
            "A {} connector token (it starts with `{prefix}`)",
            service.name
        ),
        None => format!("A {} connector token", service.name),
    };
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
    let spends = connector.operations.iter().any(|o| o.spends.is_some());
    if spends {
        responses.insert(
            "Conflict".to_string(),
            problem_response(
                "This Idempotency-Key was already used for a different request, or the same request is still being processed. Do not resubmit with a new key: wait, then check the first request's result.",
            ),
        );
    }
    if connector.operations.iter().any(|o| o.async_.is_some()) {
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

fn to_value<T: Serialize>(v: &T) -> Value {
    serde_json::to_value(v).expect("typed OpenAPI structures always serialise")
}
