//! Connector → `mcp-tools.json`: the `tools` array of an MCP `tools/list` result.
//!
//! Takes: the validated connector and each operation's model-facing description.
//! Returns: the JSON text, and an error finding for every operation whose inputs cannot
//! share one flat `inputSchema` (a name used twice across path, query, body and
//! `idempotencyKey`).
//! Must never: soften the cost semantics — a tool that spends is `destructiveHint: true`
//! so that a client which asks before destructive calls asks here too.

use serde_json::{Map, Value, json};

use crate::diagnostics::{Diagnostic, Finding};
use crate::model::{Connector, Idempotency, Method, Operation};

/// The argument that carries the `Idempotency-Key` header.
pub const IDEMPOTENCY_ARGUMENT: &str = "idempotencyKey";

const IDEMPOTENCY_ARGUMENT_DESCRIPTION: &str = "Sent as the Idempotency-Key header. A unique value \
you choose for this request, such as a UUID: a fresh value for each new request, and the same value \
when retrying this request, so the retry returns the original result instead of starting or \
charging for a second one.";

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
        .map(|(op, description)| tool(op, description, &mut findings))
        .collect();
    (super::json_text(&tools), findings)
}

fn tool(op: &Operation, description: &str, findings: &mut Vec<Finding>) -> Value {
    let mut tool = Map::new();
    tool.insert("name".into(), json!(op.id));
    tool.insert("title".into(), json!(op.summary));
    tool.insert("description".into(), json!(description));
    tool.insert("inputSchema".into(), input_schema(op, findings));
    if op.output.get("type").and_then(Value::as_str) == Some("object") {
        let mut output = op.output.clone();
        // MCP wants every property schema of outputSchema as an object, as for inputs.
        if let Some(Value::Object(props)) = output.get_mut("properties") {
            for schema in props.values_mut() {
                if let Value::Bool(b) = schema {
                    *schema = if *b { json!({}) } else { json!({ "not": {} }) };
                }
            }
        }
        tool.insert("outputSchema".into(), output);
    }
    tool.insert("annotations".into(), annotations(op));
    Value::Object(tool)
}

/// The MCP hints, written out on every tool (see README, "MCP annotations").
fn annotations(op: &Operation) -> Value {
    let read_only = op.method == Method::Get;
    let destructive =
        op.spends.is_some() || matches!(op.method, Method::Delete | Method::Put | Method::Patch);
    let idempotent = read_only || op.idempotency == Idempotency::Required;
    json!({
        "readOnlyHint": read_only,
        "destructiveHint": destructive,
        "idempotentHint": idempotent,
        "openWorldHint": true
    })
}

/// Path parameters, then query parameters, then the body's properties (or the whole
/// body as `body` when it is not an object with properties), then `idempotencyKey`.
fn input_schema(op: &Operation, findings: &mut Vec<Finding>) -> Value {
    let mut inputs: Vec<Input> = op
        .path_params
        .iter()
        .map(|name| Input {
            name: name.clone(),
            from: "a path parameter",
            schema: json!({ "type": "string" }),
            required: true,
        })
        .collect();
    inputs.extend(op.query.iter().map(|q| {
        let mut schema = q.schema.clone();
        if let (Some(d), Value::Object(map)) = (&q.description, &mut schema) {
            map.entry("description").or_insert_with(|| json!(d));
        }
        Input {
            name: q.name.clone(),
            from: "a query parameter",
            schema,
            required: q.required,
        }
    }));

    // The body's own keywords (additionalProperties, $defs, …) stay on the merged
    // object so references like `#/$defs/x` still resolve from the tool's root.
    let mut base = Map::new();
    match op.input.as_ref() {
        Some(Value::Object(body)) if body.get("properties").is_some_and(Value::is_object) => {
            let required: Vec<&str> = body
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            if let Some(Value::Object(props)) = body.get("properties") {
                inputs.extend(props.iter().map(|(name, schema)| Input {
                    name: name.clone(),
                    from: "a body property",
                    schema: schema.clone(),
                    required: required.contains(&name.as_str()),
                }));
            }
            for (k, v) in body {
                if !matches!(k.as_str(), "type" | "properties" | "required") {
                    base.insert(k.clone(), v.clone());
                }
            }
        }
        Some(body) => inputs.push(Input {
            name: "body".to_string(),
            from: "the request body",
            schema: body.clone(),
            required: true,
        }),
        None => {}
    }
    if op.takes_idempotency_key() {
        inputs.push(Input {
            name: IDEMPOTENCY_ARGUMENT.to_string(),
            from: "the idempotency key",
            schema: json!({
                "type": "string",
                "minLength": 1,
                "maxLength": 255,
                "description": IDEMPOTENCY_ARGUMENT_DESCRIPTION
            }),
            required: op.idempotency == Idempotency::Required,
        });
    }

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
    Value::Object(schema)
}
