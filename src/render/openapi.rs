//! Connector → `openapi.json` (OpenAPI 3.1.0).
//!
//! Takes: the validated connector and each operation's model-facing description (from
//! `prose.rs`, so the text in the spec and in descriptions.md is one string). Returns:
//! the pretty-printed JSON text with a trailing newline, printed straight from typed
//! structures that borrow the connector's schemas; or, for the targets that rewrite it,
//! the same document as one `serde_json::Value` (`document`).
//! Must never: be built from a text template, reorder or rewrite the author's JSON
//! Schemas, or emit keys in an order that depends on anything but the manifest.

use indexmap::IndexMap;
use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::model::{Connector, Idempotency, Operation};

/// The whole document, borrowing from the connector: it is printed straight to text, so
/// the author's schemas are never copied (field order here is key order in the file).
#[derive(Serialize)]
struct Document<'a> {
    openapi: &'static str,
    info: Info<'a>,
    servers: [Server<'a>; 1],
    security: [Map<String, Value>; 1],
    /// Path → method → operation, in manifest order of first appearance.
    paths: IndexMap<&'a str, IndexMap<&'static str, OperationObject<'a>>>,
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
    request_body: Option<RequestBody<'a>>,
    responses: Responses<'a>,
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

#[derive(Serialize)]
struct RequestBody<'a> {
    required: bool,
    content: Content<'a>,
}

#[derive(Serialize)]
struct Content<'a> {
    #[serde(rename = "application/json")]
    json: MediaType<'a>,
}

#[derive(Serialize)]
struct MediaType<'a> {
    schema: &'a Value,
}

/// The responses of one operation, in status order.
#[derive(Serialize)]
struct Responses<'a> {
    #[serde(rename = "200")]
    ok: Success<'a>,
    #[serde(rename = "401")]
    unauthorized: Ref,
    #[serde(rename = "409", skip_serializing_if = "Option::is_none")]
    conflict: Option<Ref>,
    #[serde(rename = "429", skip_serializing_if = "Option::is_none")]
    too_many_requests: Option<Ref>,
}

#[derive(Serialize)]
struct Success<'a> {
    description: &'static str,
    content: Content<'a>,
}

#[derive(Serialize)]
struct Ref {
    #[serde(rename = "$ref")]
    reference: &'static str,
}

const BEARER: &str = "bearerAuth";

const IDEMPOTENCY_KEY_DESCRIPTION: &str = "A unique value you choose for this request, such as a UUID. \
Send a fresh value for each new request, and the same value when retrying this request \
(after a timeout or a network error), so the retry returns the original result instead of \
starting or charging for a second one.";

/// Renders the OpenAPI document. `descriptions[i]` is operation i's model-facing text.
pub fn render(connector: &Connector, descriptions: &[String]) -> String {
    let shared = SharedSchemas::new();
    let doc = typed(connector, descriptions, &shared);
    super::json_text(&doc)
}

/// The OpenAPI 3.1 document as a JSON value, for the targets that rewrite it: one copy
/// of the typed document, where `render` makes none.
pub fn document(connector: &Connector, descriptions: &[String]) -> Value {
    let shared = SharedSchemas::new();
    serde_json::to_value(typed(connector, descriptions, &shared))
        .expect("typed OpenAPI structures always serialise")
}

/// The schemas every operation's generated parameters point at, built once per document.
struct SharedSchemas {
    string: Value,
    key: Value,
}

impl SharedSchemas {
    fn new() -> Self {
        SharedSchemas {
            string: json!({ "type": "string" }),
            key: json!({ "type": "string", "minLength": 1, "maxLength": 255 }),
        }
    }
}

/// The document as typed structures borrowing from `connector`, in output key order.
fn typed<'a>(
    connector: &'a Connector,
    descriptions: &'a [String],
    shared: &'a SharedSchemas,
) -> Document<'a> {
    let mut paths: IndexMap<&str, IndexMap<&'static str, OperationObject>> = IndexMap::new();
    for (op, description) in connector.operations.iter().zip(descriptions) {
        paths
            .entry(op.path.as_str())
            .or_default()
            .insert(op.method.as_str(), operation(op, description, shared));
    }
    Document {
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
    }
}

fn operation<'a>(
    op: &'a Operation,
    description: &'a str,
    shared: &'a SharedSchemas,
) -> OperationObject<'a> {
    let mut parameters: Vec<Parameter> = op
        .path_params
        .iter()
        .map(|name| Parameter {
            name,
            location: "path",
            description: None,
            required: true,
            schema: &shared.string,
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
            schema: &shared.key,
        });
    }

    let request_body = op.input.as_ref().map(|schema| RequestBody {
        required: true,
        content: Content {
            json: MediaType { schema },
        },
    });

    let success = if op.async_.is_some() {
        "The job was accepted. Poll the operation named in x-poll-operationId for its result."
    } else {
        "Success."
    };
    let responses = Responses {
        ok: Success {
            description: success,
            content: Content {
                json: MediaType { schema: &op.output },
            },
        },
        unauthorized: Ref {
            reference: "#/components/responses/Unauthorized",
        },
        conflict: op.spends.as_ref().map(|_| Ref {
            reference: "#/components/responses/Conflict",
        }),
        too_many_requests: op.async_.as_ref().map(|_| Ref {
            reference: "#/components/responses/TooManyRequests",
        }),
    };

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
