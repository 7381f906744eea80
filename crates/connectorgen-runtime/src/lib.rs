//! connectorgen's runtime: `serve` (the MCP server: the only module that speaks MCP) and
//! `probe` (a sandbox checked against the manifest's promises), and the layer under
//! them: what it takes to turn a tool call into
//! one exact HTTP request to the provider, send it within bounds, and remember what was
//! sent so that a retry stays a retry.
//!
//! Takes: the validated model and the request mapping `render::mcp` records in
//! `mcp-tools.json`. Returns: requests, responses, ledger entries, sealed tokens.
//! Must never: speak the MCP protocol (that is `serve`'s), read a credential from a
//! tool argument, or start an async runtime on the generator's path — `block_on` is
//! called only by the `serve` and `probe` commands.
//!
//! Parts: `clock` (time behind a trait, so tests never sleep), `consent` (one-time
//! confirmation tokens bound to a tool and its exact arguments), `ledger` (the durable
//! record of tracked calls, behind a small trait, with its SQLite implementation),
//! `guard` (the decision: send, retry with the same key, answer from the ledger, or
//! ask first), `client` (the one bounded HTTP client), `credential` (which environment
//! variables may be read, and the provider's credential from them), `redact` (every
//! secret replaced, by value, in everything the process writes), `state` (the state
//! folder), `request` (a call → the exact HTTP request, its arguments checked against the
//! served `inputSchema` first), `fuzzing` (that builder opened to the fuzz target
//! `arguments`, nothing else).

pub mod client;
pub(crate) mod clock;
pub(crate) mod consent;
pub(crate) mod credential;
#[doc(hidden)]
pub mod fuzzing;
pub(crate) mod guard;
pub(crate) mod ledger;
pub mod probe;
pub(crate) mod redact;
pub(crate) mod request;
pub mod serve;
pub(crate) mod state;

use serde_json::Value;
use sha2::{Digest, Sha256};

/// Runs one future to completion on a current-thread runtime built for it. The only
/// place the crate builds a runtime; the generator's commands never reach it.
pub(crate) fn block_on<F: std::future::Future>(future: F) -> std::io::Result<F::Output> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()?;
    Ok(runtime.block_on(future))
}

/// The arguments' identity: SHA-256 (hex) of their canonical JSON (object keys sorted at
/// every depth, no spaces), so the same call spelled in another key order is the same
/// call.
pub(crate) fn args_hash(args: &serde_json::Map<String, Value>) -> String {
    let mut text = String::new();
    canonical(&Value::Object(args.clone()), &mut text);
    let digest = Sha256::digest(text.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

fn canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                canonical(&map[key], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(v: Value) -> serde_json::Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn key_order_does_not_change_the_hash_but_values_do() {
        let a = args_hash(&map(
            json!({"prompt": "a cat", "opts": {"x": 1, "y": [1, 2]}}),
        ));
        let b = args_hash(&map(
            json!({"opts": {"y": [1, 2], "x": 1}, "prompt": "a cat"}),
        ));
        let c = args_hash(&map(
            json!({"opts": {"y": [2, 1], "x": 1}, "prompt": "a cat"}),
        ));
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(a.len(), 64);
    }
}
