//! The request builder and its argument checks, opened for the fuzz target `arguments`
//! (fuzz/fuzz_targets/arguments.rs) and for nothing else: not a stable API.
//!
//! Takes: a tool definition as `mcp-tools.json` has it, its mapping and a call's
//! arguments. Returns: the request `serve` would send (to `BASE`, with `SECRET` as the
//! credential and `RETRY_KEY` as the server's retry key), or why it would not send it.
//! Must never: do anything `serve` does not do on the same call (it calls the same
//! `request::build`, with the schema `serve` serves: the retry key argument left out).

use serde_json::{Map, Value};

use crate::credential::Credential;
use connectorgen_core::render::mcp::mapping::{Credential as Scheme, RequestMapping};

/// Where the fuzzed requests would go (never contacted: nothing is sent).
pub const BASE: &str = "http://127.0.0.1:9";
/// The credential's value in every scheme and part.
pub const SECRET: &str = "fuzz-secret-Value_1";
/// The server's retry key.
pub const RETRY_KEY: &str = "fuzz-retry-key-1";

/// A request as the provider would receive it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Built {
    pub method: String,
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: Option<Vec<u8>>,
}

/// The `inputSchema` `serve` checks a call against: the definition's, without the retry
/// key argument (the server sends its own).
pub fn served_schema(definition: &Value, mapping: &RequestMapping) -> Map<String, Value> {
    crate::request::served_schema(definition, mapping)
}

/// What `serve` does with `args` before asking anything: the retry key argument taken
/// out, the arguments checked, the request built.
pub fn build(
    schema: &Map<String, Value>,
    mapping: &RequestMapping,
    args: &Map<String, Value>,
) -> Result<Built, String> {
    let mut args = args.clone();
    if let Some(idem) = &mapping.idempotency {
        args.shift_remove(&idem.argument);
    }
    let credential = match &mapping.credential {
        Scheme::Parts { parts } => Credential::from_parts(parts, &|_| Some(SECRET.to_string())),
        scheme => Credential::new(scheme, SECRET),
    };
    let no_env = |_: &str| Some(SECRET.to_string());
    let target = crate::request::Target {
        base_url: Some(BASE),
        credential: credential.as_ref(),
        retry_key: Some(RETRY_KEY),
        env: &no_env,
        schema: Some(schema),
    };
    crate::request::build(mapping, &args, &target)
        .map(|r| Built {
            method: r.method.to_string(),
            url: r.url,
            headers: r.headers,
            body: r.body,
        })
        .map_err(|e| e.to_string())
}
