//! A tool's answers checked against its `outputSchema` before they leave, on the first
//! call and on the ledger's replays alike.
//!
//! Takes: the served tool's output schema (its `outputSchema`, or the schema
//! `mcp-tools.json` keeps in `_meta` for clients on 2026-07-28, which `serve` picks) once
//! at start-up, then each successful answer.
//! Returns: the compiled validator (or why there is none), and the result as it may go
//! out: unchanged when its `structuredContent` matches, else a tool error that carries
//! the provider's answer as text, says the call went through, and names the mismatch.
//! Must never: send `structuredContent` the schema refuses (a client SDK that checks it
//! — the Python SDK does — raises after the call was paid for, and again on the
//! replay), or hide the provider's answer: it stays in the text.
//!
//! Why a tool error and not a plain text success: MCP says a tool with an
//! `outputSchema` must return conforming `structuredContent`, and the Python SDK raises
//! on a success without it just as on a wrong one; results marked `isError` are not
//! checked. The note tells the model the call is done, so the error is not read as "try
//! again" (and an identical call would be answered from the ledger anyway).
//!
//! The validator is the `jsonschema` crate, as for the arguments (`request::check`):
//! JSON Schema 2020-12, formats not asserted (as the clients that check do not), the
//! same regex bounds; compiled once per tool, not per answer.

use serde_json::{Value, json};

use super::answer::{Answer, Block};
use super::reply;
use connectorgen_core::model::Operation;

/// At most this many mismatches are named.
const MAX_PROBLEMS: usize = 3;

/// A mismatch's message is cut to this many characters.
const MAX_MESSAGE: usize = 160;

/// The validator of an output schema; `Err` when the schema cannot be compiled (a `$ref`
/// outside it, a pattern the regex engine refuses).
pub(crate) fn compile(schema: &Value) -> Result<jsonschema::Validator, String> {
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .should_validate_formats(false)
        .should_ignore_unknown_formats(true)
        .with_pattern_options(jsonschema::PatternOptions::fancy_regex().backtrack_limit(100_000))
        .build(schema)
        .map_err(|e| e.to_string())
}

/// `result` as it may go out for a tool whose output schema `validator` checks.
pub(crate) fn checked(
    op: &Operation,
    mut result: Answer,
    validator: &jsonschema::Validator,
) -> Answer {
    if result.is_error {
        return result;
    }
    let problem = match &result.structured_content {
        None => "the answer is not JSON".to_string(),
        Some(value) => {
            let problems: Vec<String> = validator
                .iter_errors(value)
                .take(MAX_PROBLEMS)
                .map(|e| describe(&e))
                .collect();
            if problems.is_empty() {
                return result;
            }
            problems.join("; ")
        }
    };
    result.structured_content = None;
    result.is_error = true;
    // An error is read as "try again": a call that spends or starts work must not be.
    let done = if op.consent() || op.async_.is_some() {
        format!(
            "The call went through: {} was done (and charged, if it costs), so do not call it \
             again for this.",
            op.id
        )
    } else {
        "The call went through: the provider answered it.".to_string()
    };
    result.content.insert(
        0,
        Block::text(format!(
            "{done} But the provider's answer does not match the tool's outputSchema \
             ({problem}), so it is given as text below, not as structured content."
        )),
    );
    reply::add_fact(&mut result, "outputSchemaMismatch", json!(true));
    reply::add_fact(&mut result, "outputSchemaProblem", json!(problem));
    result
}

/// `/tracking`: null is not of type "string" — where, and what.
fn describe(error: &jsonschema::ValidationError<'_>) -> String {
    let at = error.instance_path().as_str();
    let at = if at.is_empty() { "the answer" } else { at };
    let message = error.to_string();
    let message = if message.chars().count() > MAX_MESSAGE {
        let cut: String = message.chars().take(MAX_MESSAGE).collect();
        format!("{cut}…")
    } else {
        message
    };
    format!("`{at}`: {message}")
}
