//! The evidence behind `import`'s suggestions, read from the base document.
//!
//! Takes: the base document and one listed operation. Returns: comment lines (without
//! `# `) — async with the GET to poll, spends (`cost.rs`), the retry key the
//! document declares (as base mode's default finds it), DELETE — and which kinds they are.
//! Must never: suggest what base mode would refuse (`spends` or `async` on a GET), put
//! document text in a comment unescaped, or walk the document without bound (references
//! and `allOf`/`anyOf`/`oneOf` are followed within a budget).

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::Entry;
use super::poll::{NoTarget, PollTargets};
use super::yaml::{comment, scalar};
use crate::base::Base;
use crate::model::KeyLocation;
use crate::validate::{base_candidates, declared_key, retired_key};

/// `, status: { … }` for a poll whose answer lists the values of `field`: the default
/// words as those values spell them (`…` for `done` when none is listed). For `status` it
/// is what base mode uses when nothing is written, shown so the author can check which
/// values end the job; a `state` needs it written.
fn status(field: &str, listed: &[String]) -> String {
    let status = crate::model::JobStatus {
        field: field.to_string(),
        ..crate::model::JobStatus::default()
    }
    .narrowed(listed);
    let list = |values: &[String]| {
        values
            .iter()
            .map(|v| scalar(v))
            .collect::<Vec<_>>()
            .join(", ")
    };
    // A job that never reports done never ends: the author must name the value. One
    // that never fails is `[]` (left out, the default words would be checked against
    // the listed values, and refused).
    let done = match list(&status.done) {
        none if none.is_empty() => "…".to_string(),
        some => some,
    };
    let field = if field == "status" {
        String::new()
    } else {
        format!("field: {field}, ")
    };
    format!(
        ", status: {{ {field}done: [{done}], failed: [{}] }}",
        list(&status.failed)
    )
}

/// The comment lines of one listed operation, and which kinds of suggestion they hold.
#[derive(Default)]
pub(super) struct Found {
    pub(super) lines: Vec<String>,
    pub(super) is_async: bool,
    pub(super) is_paid: bool,
    pub(super) is_delete: bool,
}

pub(super) fn suggest(base: &Base, entry: &Entry, polls: &PollTargets) -> Found {
    let mut found = Found::default();
    let op = entry.op;
    if op.method != "get" {
        let evidence = async_evidence(base, entry.object, op.method != "delete");
        if !evidence.is_empty() {
            found.is_async = true;
            let evidence = evidence.join("; ");
            found.lines.push(match polls.find(base, entry) {
                Ok((path, id)) => format!(
                    "async: {{ pollWith: {}{} }}?  # {evidence}; GET {} reads it back",
                    scalar(id),
                    polls
                        .status(path)
                        .map_or_else(String::new, |(field, listed)| status(field, listed)),
                    comment(path)
                ),
                Err(why) => {
                    let why = match why {
                        NoTarget::NotFound => "no GET on the same resource was found".to_string(),
                        NoTarget::Refused(path) => format!(
                            "GET {} would read it back, but `build` refuses it (above)",
                            comment(&path)
                        ),
                        NoTarget::Different { path, theirs, ours } => format!(
                            "GET {} returns {}, not the {} this call returns",
                            comment(&path),
                            comment(&theirs),
                            comment(&ours)
                        ),
                    };
                    format!(
                        "async: {{ pollWith: … }}?  # {evidence}; {why}: name the free read that returns its status"
                    )
                }
            });
        }
        let body = body_properties(base, entry.object);
        if let Some(cost) = super::cost::cost(op, entry.object, &body) {
            found.is_paid = true;
            found.lines.push(format!(
                "spends: {{ kind: {}, note: \"…\" }}?  # {}: does calling it cost the person?",
                cost.kind(),
                cost.evidence()
            ));
        }
    }
    // The same evidence base mode's default reads: a suggestion names what the default
    // would use, so the author can see it and keep it, or name the real key.
    let candidates = base_candidates(base, &op.path, entry.object);
    if let Some(old) = retired_key(&candidates) {
        let form = match old.location {
            KeyLocation::Header => "header",
            KeyLocation::Query => "query parameter",
            KeyLocation::Body => "body field",
        };
        found.lines.push(format!(
            "not the retry key: the {form} {} looks like one, but the document retires it (deprecated or no longer used)",
            comment(&format!("`{}`", old.name))
        ));
    }
    match declared_key(&candidates) {
        Some(key) => {
            let form = match key.location {
                KeyLocation::Header => "header",
                KeyLocation::Query => "query",
                KeyLocation::Body => "bodyField",
            };
            let required = if key.required { ", required: true" } else { "" };
            let evidence = comment(key.evidence.as_deref().unwrap_or_default());
            // How a reused key is answered, where a response says so: `serve` then reads
            // that answer to a retry as "the first one exists" (docs/RETRIES.md). A
            // suggestion (`?`): only the author can say the words mean that.
            match duplicate_answer(entry.object) {
                Some((status, said)) => found.lines.push(format!(
                    "idempotency: {{ {form}: {}{required}, duplicate: {{ status: {status} }} }}?  # {evidence} (connectorgen's default for it); its {status} answer says {}: how the provider answers a reused key?",
                    scalar(&key.name),
                    comment(&format!("\"{said}\""))
                )),
                None => found.lines.push(format!(
                    "idempotency: {{ {form}: {}{required} }}  # {evidence} (connectorgen's default for it)",
                    scalar(&key.name),
                )),
            }
        }
        None if found.is_paid || found.is_async => found.lines.push(
            "idempotency: unsupported?  # the document declares no retry key: if the provider recognises a retry, name its key (`{ header: … }`, `{ query: … }` or `{ bodyField: … }`)".to_string(),
        ),
        None => {}
    }
    if op.method == "delete" {
        found.is_delete = true;
        found
            .lines
            .push("permanent: a DELETE is `confirm: true` by default (the model asks first); `confirm: false` if it is routine".to_string());
    }
    found
}

/// The answer the operation's responses say a reused retry key gets: a 409, 422 or 400
/// whose description speaks of the key as used or of a duplicate. Its status and
/// description (cut to 80 characters).
fn duplicate_answer(op: &Map<String, Value>) -> Option<(u16, String)> {
    const SAID: [&str; 8] = [
        "idempoten",
        "duplicate",
        "already used",
        "already been used",
        "must be unique",
        "reused",
        "was used",
        "key in use",
    ];
    let responses = op.get("responses").and_then(Value::as_object)?;
    [409_u16, 422, 400].into_iter().find_map(|status| {
        let said = responses
            .get(status.to_string().as_str())?
            .get("description")?
            .as_str()?;
        let lower = said.to_lowercase();
        SAID.iter()
            .any(|word| lower.contains(word))
            .then(|| (status, said.chars().take(80).collect()))
    })
}

/// Why the operation may start a job rather than finish it, in words. A DELETE that
/// returns the deleted thing shows its last status, which says nothing of the DELETE:
/// `states` is false for it.
fn async_evidence(base: &Base, op: &Map<String, Value>, states: bool) -> Vec<String> {
    let mut evidence = Vec::new();
    let responses = op.get("responses").and_then(Value::as_object);
    if responses.is_some_and(|r| r.contains_key("202")) {
        evidence.push("a 202 Accepted response".to_string());
    }
    if op
        .get("x-ms-long-running-operation")
        .and_then(Value::as_bool)
        == Some(true)
    {
        evidence.push("`x-ms-long-running-operation: true`".to_string());
    }
    let states = responses
        .filter(|_| states)
        .into_iter()
        .flatten()
        .filter(|(code, _)| code.starts_with('2'))
        .find_map(|(_, response)| job_states(base, response));
    if let Some(states) = states {
        evidence.push(format!("the response's `status` can be {states}"));
    }
    evidence
}

/// States a job passes through on its way to done, and where it ends.
const IN_FLIGHT: &[&str] = &[
    "queued",
    "pending",
    "processing",
    "running",
    "in_progress",
    "started",
    "scheduled",
    "submitted",
    "waiting",
    "validating",
    "finalizing",
    "cancelling",
    "canceling",
];
const FINAL: &[&str] = &[
    "succeeded",
    "success",
    "completed",
    "complete",
    "done",
    "finished",
    "failed",
    "failure",
    "error",
    "errored",
    "cancelled",
    "canceled",
    "expired",
    "timed_out",
];

/// The job-like values of a `status` or `state` enum in a response's schemas, when
/// they hold both an in-flight and a final state ("queued, running, succeeded").
fn job_states(base: &Base, response: &Value) -> Option<String> {
    let content = follow(base, response).get("content")?.as_object()?;
    let mut values = Vec::new();
    // A document can nest references without end; a bounded walk is enough evidence.
    let mut budget = 1000usize;
    for media in content.values() {
        if let Some(schema) = media.get("schema") {
            status_values(base, schema, &mut budget, &mut values);
        }
    }
    let state = |v: &str| v.to_ascii_lowercase().replace(['-', ' '], "_");
    let job_like: Vec<&str> = values
        .into_iter()
        .filter(|v| {
            let s = state(v);
            IN_FLIGHT.contains(&s.as_str()) || FINAL.contains(&s.as_str())
        })
        .collect();
    let has = |set: &[&str]| job_like.iter().any(|v| set.contains(&state(v).as_str()));
    if !(has(IN_FLIGHT) && has(FINAL)) {
        return None;
    }
    let mut seen = HashSet::new();
    let shown: Vec<String> = job_like
        .into_iter()
        .filter(|v| seen.insert(*v))
        .map(comment)
        .collect();
    let more = if shown.len() > 6 { ", …" } else { "" };
    Some(format!("{}{more}", shown[..shown.len().min(6)].join(", ")))
}

/// The enum values of `status`/`state` properties of `schema`, through `$ref`s and
/// `allOf`/`anyOf`/`oneOf`.
fn status_values<'a>(
    base: &'a Base,
    schema: &'a Value,
    budget: &mut usize,
    out: &mut Vec<&'a str>,
) {
    each_member(base, schema, 0, budget, &mut |schema, budget| {
        let properties = schema.get("properties").and_then(Value::as_object);
        // Else a job inside a one-property envelope (`{"job": {"status": …}}`).
        if !states_of(base, properties, budget, out)
            && let Some(properties) = properties
            && let [(_, inner)] = properties.iter().collect::<Vec<_>>()[..]
        {
            let inner = follow(base, inner)
                .get("properties")
                .and_then(Value::as_object);
            states_of(base, inner, budget, out);
        }
    });
}

/// The values of the `status` and `state` properties among `properties`; whether there
/// was one.
fn states_of<'a>(
    base: &'a Base,
    properties: Option<&'a Map<String, Value>>,
    budget: &mut usize,
    out: &mut Vec<&'a str>,
) -> bool {
    let mut found = false;
    for (key, property) in properties.into_iter().flatten() {
        if key.eq_ignore_ascii_case("status") || key.eq_ignore_ascii_case("state") {
            found = true;
            listed_values(base, property, budget, out);
        }
    }
    found
}

/// The `enum` and `const` strings of a status property (through its members).
fn listed_values<'a>(
    base: &'a Base,
    property: &'a Value,
    budget: &mut usize,
    out: &mut Vec<&'a str>,
) {
    each_member(base, property, 0, budget, &mut |schema, _| {
        let listed = schema
            .get("enum")
            .and_then(Value::as_array)
            .into_iter()
            .flatten();
        out.extend(listed.chain(schema.get("const")).filter_map(Value::as_str));
    });
}

/// Calls `visit` on `schema` (its `$ref` followed) and on every member of its
/// `allOf`/`anyOf`/`oneOf`, recursively: at most 8 levels deep, and one unit of
/// `budget` (shared with what `visit` walks) per schema, so a hostile document cannot
/// make the walk long.
fn each_member<'a>(
    base: &'a Base,
    schema: &'a Value,
    depth: usize,
    budget: &mut usize,
    visit: &mut dyn FnMut(&'a Value, &mut usize),
) {
    if depth > 8 || *budget == 0 {
        return;
    }
    *budget -= 1;
    let schema = follow(base, schema);
    visit(schema, budget);
    for key in ["allOf", "anyOf", "oneOf"] {
        for member in schema
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            each_member(base, member, depth + 1, budget, visit);
        }
    }
}

/// The top-level properties of the operation's request body (its first media type's
/// schema, references followed), for the amount a call moves.
fn body_properties<'a>(base: &'a Base, op: &'a Map<String, Value>) -> Vec<&'a str> {
    let Some(body) = op.get("requestBody") else {
        return Vec::new();
    };
    let schema = follow(base, body)
        .get("content")
        .and_then(Value::as_object)
        .and_then(|content| content.values().next())
        .and_then(|media| media.get("schema"));
    schema
        .map(|schema| follow(base, schema))
        .and_then(|schema| schema.get("properties"))
        .and_then(Value::as_object)
        .map(|properties| properties.keys().map(String::as_str).collect())
        .unwrap_or_default()
}

/// `value`, or what its local `$ref` points at (a chain of them, at most 16 long).
pub(super) fn follow<'a>(base: &'a Base, mut value: &'a Value) -> &'a Value {
    for _ in 0..16 {
        let Some(reference) = value.get("$ref").and_then(Value::as_str) else {
            return value;
        };
        match base.resolve(reference) {
            Some(target) => value = target,
            None => return value,
        }
    }
    value
}

#[cfg(test)]
mod tests {
    use super::status;

    fn listed(values: &[&str]) -> Vec<String> {
        values.iter().map(|v| (*v).to_string()).collect()
    }

    #[test]
    fn a_status_suggestion_takes_the_listed_spelling_and_names_another_field() {
        assert_eq!(
            status("status", &listed(&["QUEUED", "SUCCEEDED", "FAILED"])),
            ", status: { done: [SUCCEEDED], failed: [FAILED] }"
        );
        // Base mode reads `status` unwritten; a `state` must be named.
        assert_eq!(
            status("state", &listed(&["pending", "ready", "error"])),
            ", status: { field: state, done: [ready], failed: [error] }"
        );
        // Nothing listed ends the job: a blank to fill; nothing fails: an empty list.
        assert_eq!(
            status("status", &listed(&["pending", "expired"])),
            ", status: { done: […], failed: [expired] }"
        );
        assert_eq!(
            status("status", &listed(&["in_progress", "completed"])),
            ", status: { done: [completed], failed: [] }"
        );
        // The words match without regard to case.
        assert_eq!(
            status("status", &listed(&["Pending", "Done"])),
            ", status: { done: [Done], failed: [] }"
        );
    }
}
