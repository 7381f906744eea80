//! The official schemas of the formats connectorgen writes (OpenAPI 3.0 and 3.1, the MCP
//! `Tool`, SARIF 2.1.0) as compiled validators, each proved live on a known-bad document
//! first, so a broken validator cannot pass a test. The project does not carry them: they
//! are read from `../shared/provider-docs/project/` (`support/real.rs`), so only the
//! real-document suite checks against them. Each is `None` in a binary whose
//! `crate::OFFICIAL_SCHEMAS` is false (the integration binary, which a fresh clone runs).
//! Each test crate uses a subset of these, hence the allow.
#![allow(dead_code)]

use std::sync::OnceLock;

use jsonschema::Validator;
use serde_json::{Value, json};

use super::real;

/// Compiles `schema` and checks it rejects `broken` (`why` says why it should).
fn live(schema: &Value, broken: Value, why: &str) -> Validator {
    let validator = jsonschema::validator_for(schema).expect("the official schema compiles");
    assert!(
        !validator.is_valid(&broken),
        "official schema is live: {why}"
    );
    validator
}

/// A schema file of `../shared/provider-docs/project/`, by its path there.
fn official(path: &str) -> Value {
    let file = real::file(path);
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    serde_json::from_str(&text).expect("the official schema is JSON")
}

/// `cell`'s validator, made by `make` on first use, when this binary checks against the
/// official schemas.
fn when_checked(
    cell: &'static OnceLock<Validator>,
    make: impl FnOnce() -> Validator,
) -> Option<&'static Validator> {
    crate::OFFICIAL_SCHEMAS.then(|| cell.get_or_init(make))
}

/// The official OpenAPI 3.1 schema.
pub(crate) fn openapi31() -> Option<&'static Validator> {
    static VALIDATOR: OnceLock<Validator> = OnceLock::new();
    when_checked(&VALIDATOR, || {
        live(
            &official("crates/connectorgen-core/src/schemas/openapi-3.1.schema.json"),
            json!({ "openapi": "3.1.0", "info": { "title": "t", "version": "1" },
                "paths": { "/a": { "get": { "operationId": "a", "responses": {} } } } }),
            "an operation with an empty responses map is not OpenAPI 3.1",
        )
    })
}

/// The official OpenAPI 3.0 schema.
pub(crate) fn openapi30() -> Option<&'static Validator> {
    static VALIDATOR: OnceLock<Validator> = OnceLock::new();
    when_checked(&VALIDATOR, || {
        live(
            &official("crates/connectorgen-core/src/schemas/openapi-3.0.schema.json"),
            json!({ "openapi": "3.0.3", "info": { "title": "t", "version": "1" },
                "paths": { "/a": { "get": { "responses": { "200": { "description": "ok",
                "content": { "application/json": { "schema": { "type": "string", "nullable": "yes" } } } } } } } } }),
            "`nullable` must be a boolean in 3.0",
        )
    })
}

/// The `Tool` definition of the MCP schema (spec 2025-11-25).
pub(crate) fn mcp_tool() -> Option<&'static Validator> {
    static VALIDATOR: OnceLock<Validator> = OnceLock::new();
    when_checked(&VALIDATOR, || {
        let mut schema = official("tests/fixtures/mcp-2025-11-25.schema.json");
        // The file holds only `definitions`; validate against the Tool definition within it.
        schema["$ref"] = json!("#/definitions/Tool");
        live(
            &schema,
            json!({ "name": "t", "inputSchema": { "type": "string" } }),
            "a tool's inputSchema must be `type: object`",
        )
    })
}

/// The SARIF 2.1.0 schema.
pub(crate) fn sarif() -> Option<&'static Validator> {
    static VALIDATOR: OnceLock<Validator> = OnceLock::new();
    when_checked(&VALIDATOR, || {
        live(
            &official("tests/fixtures/sarif-2.1.0.schema.json"),
            json!({ "version": "2.1.0", "runs": [{ "results": [] }] }),
            "a run needs its tool",
        )
    })
}

/// Every validation error of `doc`, one per line (empty when valid, or when this binary
/// does not check against the official schemas: `validator` is `None`).
pub(crate) fn errors(validator: Option<&Validator>, doc: &Value) -> String {
    validator
        .into_iter()
        .flat_map(|v| v.iter_errors(doc))
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect::<Vec<_>>()
        .join("\n")
}
