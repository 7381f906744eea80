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
//! Parts: `call` (one tool call through its steps — arguments, identity, consent,
//! claim, send, record — with no protocol in it; `serve` only translates MCP into calls
//! and outcomes into MCP), `clock` (time behind a trait, so tests never sleep), `seal`
//! (one-time confirmation values bound to a tool and its exact arguments), `ledger` (the
//! durable record of tracked calls, behind a small trait, in SQLite or, shared by several
//! instances, in PostgreSQL, every store call off the event loop), `guard` (the decision:
//! send, retry with the same key, answer from the ledger, ask first, or refuse a new paid
//! request past a budget), `client` (the one
//! bounded HTTP client), `credential` (which environment variables may be read, and the
//! provider's credential from them), `redact` (every secret replaced, by value, in
//! everything the process writes) and `log` (the event lines, through it), `state_dir`
//! (the state folder), `request` (a call → the exact HTTP request, its arguments checked
//! against the served `inputSchema` first), `provider_oauth` (serve as the provider's
//! OAuth client: PKCE, the code exchanged, refresh, revocation; `pub` for the root
//! package's tests against a real authorization server), `vault` (people's own provider
//! credentials sealed for the ledger, and the key ring that opens them), `connect` (each
//! person's own credential: loaded for a call, kept sealed, their connect page's link),
//! `fuzzing` (that builder opened to the fuzz target `arguments`, nothing else),
//! `testing` (only for tests and benchmarks, behind the `testing` feature: the throwaway
//! PostgreSQL cluster).

pub mod auth;
pub(crate) mod call;
pub mod client;
pub(crate) mod clock;
pub(crate) mod connect;
pub(crate) mod credential;
#[doc(hidden)]
pub mod fuzzing;
pub(crate) mod guard;
pub(crate) mod ledger;
pub(crate) mod log;
pub mod probe;
pub mod provider_oauth;
pub(crate) mod redact;
pub(crate) mod request;
pub(crate) mod seal;
pub mod serve;
pub(crate) mod state_dir;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub(crate) mod vault;

use serde_json::Value;
use sha2::{Digest, Sha256};

/// Runs one future to completion on a runtime built for it, with a worker thread per
/// core: one thread saturated at ~0.9 of a core on free reads (issue 44), and the state
/// the sessions share is behind locks already. Store calls run on its blocking pool
/// (`ledger::Handle`). The only place the crate builds a runtime; the generator's
/// commands never reach it.
pub(crate) fn block_on<F: std::future::Future>(future: F) -> std::io::Result<F::Output> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_io()
        .enable_time()
        .build()?;
    Ok(runtime.block_on(future))
}

/// The arguments' identity: SHA-256 (hex) of their canonical JSON (object keys sorted at
/// every depth, no spaces, strings as their characters, numbers by their value), so the
/// same call spelled another way is the same call: reordered keys, `\u0063` for `c`, and
/// `1`, `1.0`, `1e0` or `10e-1` for one number are identical (docs/serve.md, "What
/// identical means"). A default left out and the same default written out are not: what
/// is sent differs.
pub(crate) fn args_hash(args: &serde_json::Map<String, Value>) -> String {
    let text = canonical_json(args);
    let digest = Sha256::digest(text.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// The arguments as canonical JSON (keys sorted, no spaces): what their hash is of, and
/// what a receipt keeps.
pub(crate) fn canonical_json(args: &serde_json::Map<String, Value>) -> String {
    let mut text = String::new();
    canonical(&Value::Object(args.clone()), &mut text);
    text
}

/// 32 random bytes, base64url: an identifier no one can guess (an OAuth `state`).
pub(crate) fn random_token() -> Result<String, String> {
    use base64::Engine as _;
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| format!("the system gave no random bytes: {e}"))?;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
}

/// SHA-256 (hex) of `prefix` then each part length-prefixed, so that no two lists of
/// parts hash alike: the principals' identities (a credential's, a token's person).
pub(crate) fn digest(prefix: &[u8], parts: &[&str]) -> String {
    let mut hasher = Sha256::new();
    hasher.update(prefix);
    for part in parts {
        hasher.update((part.len() as u64).to_be_bytes());
        hasher.update(part.as_bytes());
    }
    hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
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
        Value::Number(n) => out.push_str(&canonical_number(n)),
        other => out.push_str(&other.to_string()),
    }
}

/// One spelling per value: an integral value within the range a double holds exactly
/// (±2^53) as an integer, `-0` as `0`, anything else as `serde_json` writes it.
fn canonical_number(n: &serde_json::Number) -> String {
    const EXACT: f64 = 9_007_199_254_740_992.0;
    if n.is_f64()
        && let Some(f) = n.as_f64()
        && f.fract() == 0.0
        && f.abs() <= EXACT
    {
        #[expect(
            clippy::cast_possible_truncation,
            reason = "integral and within ±2^53: exact"
        )]
        return (f as i64).to_string();
    }
    n.to_string()
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

    /// What "identical" means, on the text a client sends.
    #[test]
    fn unicode_escapes_and_number_spellings_are_the_same_call() {
        let hash = |text: &str| args_hash(&serde_json::from_str(text).unwrap());
        let plain = hash(r#"{"prompt":"a cat","n":1,"f":0.5,"z":0}"#);
        for same in [
            r#"{"prompt":"a \u0063at","n":1,"f":0.5,"z":0}"#,
            r#"{"n":1.0,"prompt":"a cat","f":5e-1,"z":-0}"#,
            r#"{"z":0.0,"f":0.50,"n":1e0,"prompt":"a cat"}"#,
            r#"{"prompt":"a cat","n":10e-1,"f":0.5,"z":-0.0}"#,
        ] {
            assert_eq!(hash(same), plain, "{same}");
        }
        for other in [
            r#"{"prompt":"a cat","n":2,"f":0.5,"z":0}"#,
            r#"{"prompt":"a cat","n":"1","f":0.5,"z":0}"#,
            r#"{"prompt":"a cat ","n":1,"f":0.5,"z":0}"#,
            r#"{"prompt":"a cat","n":1,"f":0.5}"#,
        ] {
            assert_ne!(hash(other), plain, "{other}");
        }
    }
}
