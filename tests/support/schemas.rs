//! The vendored official schemas (tests/fixtures/) as compiled validators, each proved
//! live on a known-bad document first, so a broken validator cannot pass a test.
//! Each test crate uses a subset of these, hence the allow.
#![allow(dead_code)]

use std::sync::OnceLock;

use jsonschema::Validator;
use serde_json::{Value, json};

/// Compiles `schema` and checks it rejects `broken` (`why` says why it should).
fn live(schema: &Value, broken: Value, why: &str) -> Validator {
    let validator = jsonschema::validator_for(schema).expect("the fixture schema compiles");
    assert!(
        !validator.is_valid(&broken),
        "fixture schema is live: {why}"
    );
    validator
}

fn fixture(text: &str) -> Value {
    serde_json::from_str(text).expect("fixture is JSON")
}

/// The official OpenAPI 3.1 schema.
pub(crate) fn openapi31() -> &'static Validator {
    static VALIDATOR: OnceLock<Validator> = OnceLock::new();
    VALIDATOR.get_or_init(|| {
        live(
            &fixture(include_str!(
                "../../crates/connectorgen-core/src/schemas/openapi-3.1.schema.json"
            )),
            json!({ "openapi": "3.1.0", "info": { "title": "t", "version": "1" },
                "paths": { "/a": { "get": { "operationId": "a", "responses": {} } } } }),
            "an operation with an empty responses map is not OpenAPI 3.1",
        )
    })
}

/// The official OpenAPI 3.0 schema.
pub(crate) fn openapi30() -> &'static Validator {
    static VALIDATOR: OnceLock<Validator> = OnceLock::new();
    VALIDATOR.get_or_init(|| {
        live(
            &fixture(include_str!("../../crates/connectorgen-core/src/schemas/openapi-3.0.schema.json")),
            json!({ "openapi": "3.0.3", "info": { "title": "t", "version": "1" },
                "paths": { "/a": { "get": { "responses": { "200": { "description": "ok",
                "content": { "application/json": { "schema": { "type": "string", "nullable": "yes" } } } } } } } } }),
            "`nullable` must be a boolean in 3.0",
        )
    })
}

/// The `Tool` definition of the MCP schema (spec 2025-11-25).
pub(crate) fn mcp_tool() -> &'static Validator {
    static VALIDATOR: OnceLock<Validator> = OnceLock::new();
    VALIDATOR.get_or_init(|| {
        let mut schema = fixture(include_str!("../fixtures/mcp-2025-11-25.schema.json"));
        // The file holds only `definitions`; validate against the Tool definition within it.
        schema["$ref"] = json!("#/definitions/Tool");
        live(
            &schema,
            json!({ "name": "t", "inputSchema": { "type": "string" } }),
            "a tool's inputSchema must be `type: object`",
        )
    })
}

/// Every validation error, one per line (empty when valid).
pub(crate) fn errors(validator: &Validator, doc: &Value) -> String {
    validator
        .iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect::<Vec<_>>()
        .join("\n")
}
