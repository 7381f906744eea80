//! Safety lints: a valid manifest that may still mislead a model.
//!
//! Takes: the validated connector (whose operations carry the spans lints point at)
//! and each operation's model-facing description. Returns: findings, each with
//! the severity its configured level gives it (`allow`ed lints return nothing).
//! Must never: fail or change the model; a lint only reports.

use crate::diagnostics::{Diagnostic, Finding, Severity};
use crate::english::states_limit;
use crate::model::{Connector, Idempotency, Operation, Unsupported};
use crate::render::mcp::ToolWeight;
// The lints are rules (`diagnostics::Rule`); a manifest's levels and settings are
// validated settings: they live in the model.
pub(crate) use crate::model::Level;
pub use crate::model::Lint;

/// Catch-all verbs that say nothing about what a call does, in both the third person
/// ("Manages videos") and the imperative ("Manage videos"). A specific verb with its
/// object ("List predictions", "Get transcript") is not vague, however short.
const VAGUE_STARTS: [&str; 10] = [
    "manages",
    "manage",
    "handles",
    "handle",
    "processes",
    "process",
    "does",
    "do",
    "deals with",
    "deal with",
];

fn vague_reason(summary: &str) -> Option<String> {
    let words = summary.split_whitespace().count();
    if words < 2 {
        return Some("it is one word".to_string());
    }
    let lower = summary.to_lowercase();
    VAGUE_STARTS
        .iter()
        .find(|v| {
            lower.starts_with(*v)
                && lower[v.len()..]
                    .chars()
                    .next()
                    .is_none_or(|c| !c.is_alphanumeric())
        })
        .map(|v| format!("starts with the catch-all \"{v}\""))
}

/// The inputs of `op` ("parameter `voice`", "the body field `voice`", "the body")
/// whose schema holds a `oneOf` with overlapping alternatives
/// (`schema_walk::alternatives_overlap`), each named once, in the document's order.
fn overlapping_one_ofs(connector: &Connector, op: &Operation) -> Vec<String> {
    let document = &connector.document;
    let follow = |value: &serde_json::Value| -> Option<serde_json::Value> {
        let mut value = value.clone();
        for _ in 0..16 {
            match value.get("$ref").and_then(serde_json::Value::as_str) {
                Some(reference) => value = document.resolve(reference)?.clone(),
                None => return Some(value),
            }
        }
        None
    };
    let mut inputs: Vec<(String, serde_json::Value)> = Vec::new();
    for parameter in op
        .http
        .get("parameters")
        .and_then(serde_json::Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(&follow)
    {
        if let (Some(name), Some(schema)) = (
            parameter.get("name").and_then(serde_json::Value::as_str),
            parameter.get("schema"),
        ) {
            inputs.push((format!("parameter `{name}`"), schema.clone()));
        }
    }
    let bodies = op.http.get("requestBody").and_then(&follow).and_then(|b| {
        b.get("content")
            .and_then(serde_json::Value::as_object)
            .cloned()
    });
    for media in bodies.iter().flat_map(|content| content.values()) {
        let Some(schema) = media.get("schema").and_then(&follow) else {
            continue;
        };
        let fields = schema
            .get("properties")
            .and_then(serde_json::Value::as_object);
        for (name, field) in fields.into_iter().flatten() {
            inputs.push((format!("the body field `{name}`"), field.clone()));
        }
        inputs.push(("the body".to_string(), schema));
    }
    let mut places: Vec<String> = Vec::new();
    for (place, schema) in inputs {
        let mut seen = std::collections::HashSet::new();
        if overlaps(&schema, &follow, &mut seen, 0) && !places.contains(&place) {
            // The body itself only when no field of it says more.
            if place == "the body" && places.iter().any(|p| p.starts_with("the body field")) {
                continue;
            }
            places.push(place);
        }
    }
    places
}

/// Whether `schema`, or a schema within it (through local `$ref`s), has a `oneOf` whose
/// alternatives overlap. Bounded: each reference once, 32 levels.
fn overlaps(
    schema: &serde_json::Value,
    follow: &dyn Fn(&serde_json::Value) -> Option<serde_json::Value>,
    seen: &mut std::collections::HashSet<String>,
    depth: usize,
) -> bool {
    use crate::subschemas::{Holds, holds};
    if depth > 32 {
        return false;
    }
    let Some(map) = schema.as_object() else {
        return false;
    };
    if let Some(reference) = map.get("$ref").and_then(serde_json::Value::as_str)
        && seen.insert(reference.to_string())
        && let Some(named) = follow(schema)
        && overlaps(&named, follow, seen, depth + 1)
    {
        return true;
    }
    if let Some(alternatives) = map.get("oneOf").and_then(serde_json::Value::as_array) {
        let resolved: Vec<serde_json::Value> = alternatives
            .iter()
            .map(|a| follow(a).unwrap_or_else(|| a.clone()))
            .collect();
        if crate::schema_walk::alternatives_overlap(&resolved) {
            return true;
        }
    }
    map.iter()
        .any(|(keyword, value)| match holds(keyword, value) {
            Some(Holds::Schema) => overlaps(value, follow, seen, depth + 1),
            Some(Holds::List) => value
                .as_array()
                .into_iter()
                .flatten()
                .any(|v| overlaps(v, follow, seen, depth + 1)),
            Some(Holds::Map) => value
                .as_object()
                .into_iter()
                .flat_map(|m| m.values())
                .any(|v| overlaps(v, follow, seen, depth + 1)),
            None => false,
        })
}

/// Runs every lint that is not `allow`ed, globally or by the operation's `lintAllow`.
pub fn run(
    connector: &Connector,
    descriptions: &[String],
    tool_weights: &[ToolWeight],
) -> Vec<Finding> {
    let config = &connector.lint;
    let by_id: std::collections::HashMap<&str, &Operation> = connector
        .operations
        .iter()
        .map(|op| (op.id.as_str(), op))
        .collect();
    let mut out = Vec::new();
    for (index, (op, description)) in connector.operations.iter().zip(descriptions).enumerate() {
        let mut emit = |diagnostic: Diagnostic| {
            let lint = Lint::from(&diagnostic);
            let severity = match config.level(lint) {
                Level::Allow => return,
                _ if op.lint_allow.contains(&lint) => return,
                Level::Warn => Severity::Warning,
                Level::Deny => Severity::Error,
            };
            out.push(Finding {
                diagnostic,
                severity,
                source: crate::diagnostics::Source::default(),
            });
        };
        let origin = &op.origin;
        let spends = op.spends.is_some();
        let mutating = !op.read;
        if !states_limit(&op.description) {
            if mutating && !spends {
                emit(Diagnostic::MutatingWithoutLimit {
                    id: op.id.clone(),
                    span: origin.description,
                });
            } else {
                emit(Diagnostic::MissingLimit {
                    id: op.id.clone(),
                    span: origin.description,
                });
            }
        }
        for place in overlapping_one_ofs(connector, op) {
            emit(Diagnostic::OverlappingOneOf {
                id: op.id.clone(),
                place,
                span: origin.entry,
            });
        }
        // Only llms.txt gives one Base URL: every other output says each operation's own.
        if connector.targets.contains(&crate::model::Target::Muse)
            && let Some(url) = connector
                .document
                .other_server(op, &connector.service.public_url)
            && crate::model::origin(&url) == crate::model::origin(&connector.service.public_url)
        {
            emit(Diagnostic::SameHostOtherPath {
                id: op.id.clone(),
                url,
                base: connector.service.public_url.clone(),
                span: origin.entry,
            });
        }
        if let Some(reason) = vague_reason(&op.summary) {
            emit(Diagnostic::VagueSummary {
                id: op.id.clone(),
                reason,
                span: origin.summary,
            });
        }
        let unknown = op.idempotency == Idempotency::Unsupported(Unsupported::Unknown);
        if spends && op.idempotency.is_unsupported() {
            emit(Diagnostic::SpendWithoutIdempotency {
                id: op.id.clone(),
                why: if unknown {
                    "the provider's document declares no retry key for it"
                } else {
                    "it declares `idempotency: unsupported`"
                },
                span: origin.idempotency().unwrap_or(origin.entry),
            });
        }
        // Inline, an operation that spends or is async always has a mechanism (the
        // default key); unknown there is base mode's default over a silent document.
        if unknown && (spends || op.async_.is_some()) {
            emit(Diagnostic::IdempotencyUnknown {
                id: op.id.clone(),
                span: origin.entry,
            });
        }
        if let Some(a) = &op.async_
            && let Some(target) = by_id.get(a.poll_with.as_str())
            && target.path_params.is_empty()
            // An RPC-style poll takes the id in its body (`POST /transcripts.info {handle}`).
            && connector.poll_body_id(op).is_none()
        {
            emit(Diagnostic::PollTargetWithoutId {
                target: target.id.clone(),
                span: origin.poll_with().unwrap_or(origin.entry),
                target_path: target.origin.path,
            });
        }
        let length = description.chars().count();
        if length > config.description_max {
            let (span, help) = longest_part(op, length, config.description_max);
            emit(Diagnostic::DescriptionTooLong {
                id: op.id.clone(),
                length,
                max: config.description_max,
                span,
                help,
            });
        }
        if let Some(weight) = tool_weights.iter().find(|w| w.index == index)
            && weight.bytes > config.mcp_tool_max
        {
            let parts: Vec<String> = weight
                .parts
                .iter()
                .map(|(part, bytes)| format!("{part} ({bytes} bytes)"))
                .collect();
            emit(Diagnostic::McpToolTooLarge {
                id: op.id.clone(),
                bytes: weight.bytes,
                tokens: weight.bytes.div_ceil(4),
                max: config.mcp_tool_max,
                span: origin.entry,
                help: format!(
                    "the heaviest parts: {}. Every tool travels in each tools/list answer: leave optional inputs out of it with `mcp: {{ omit: [...] }}` (dotted paths), declare less of its answer with `mcp: {{ output: summary }}` (`explain --list --stats` shows the effect of both), expose a narrower operation, or accept the size with `lint: {{ mcp-tool-too-large: {{ max: … }} }}` or `lintAllow: [mcp-tool-too-large]` here",
                    parts.join(", ")
                ),
            });
        }
        if spends && op.async_.is_none() {
            emit(Diagnostic::PaidSyncOperation {
                id: op.id.clone(),
                span: origin.spends().unwrap_or(origin.entry),
            });
        }
    }
    out
}

/// Of the author's words in the model-facing text (the description, the note and
/// condition the cost sentence repeats, and the condition the permanence sentence
/// repeats), the longest: where `description-too-long`
/// points, with help naming it. The summary is not among them: it is never part of
/// the description.
fn longest_part(op: &Operation, length: usize, max: usize) -> (crate::diagnostics::Span, String) {
    let chars = |s: &str| s.chars().count();
    let raise = "or raise `lint: { description-too-long: { max: … } }`";
    let description = chars(&op.description);
    let mut parts = vec![(description, op.origin.description, "description")];
    if let Some(s) = &op.spends {
        if let Some(at) = op.origin.note() {
            parts.push((chars(&s.note), at, "note"));
        }
        if let (Some(when), Some(at)) = (&s.when, op.origin.when()) {
            parts.push((chars(when), at, "when"));
        }
    }
    if let (Some(when), Some(at)) = (&op.confirm_when, op.origin.confirm_when()) {
        parts.push((chars(when), at, "confirm.when"));
    }
    // The first of equals: the description, which the author controls most freely.
    let (size, span, part) = parts
        .into_iter()
        .rev()
        .max_by_key(|(size, _, _)| *size)
        .unwrap_or((description, op.origin.description, "description"));
    // Shortening this part cannot help when the rest alone is over the limit.
    let rest = length.saturating_sub(size);
    if rest > max {
        let help = format!(
            "the generated cost, permanence and polling sentences keep the text at {rest} characters or more, whatever the author's words: raise `lint: {{ description-too-long: {{ max: … }} }}`, or silence it here with `lintAllow: [description-too-long]`"
        );
        return (span, help);
    }
    let help = match part {
        "note" => format!(
            "`spends.note` is {size} of the {length} characters: the cost sentence repeats it, so shorten it; the generated sentences must stay, {raise}"
        ),
        "when" => format!(
            "`spends.when` is {size} of the {length} characters: the cost sentence repeats it, so shorten it; the generated sentences must stay, {raise}"
        ),
        "confirm.when" => format!(
            "`confirm.when` is {size} of the {length} characters: the permanence sentence repeats it, so shorten it; the generated sentences must stay, {raise}"
        ),
        _ if op.origin.description_from_base => format!(
            "the description is the base document's, {size} of the {length} characters: write a shorter `description:` on this entry (the generated sentences must stay), {raise}"
        ),
        _ => format!(
            "the author's description is {size} of the {length} characters: shorten it (the generated cost, permanence and polling sentences must stay), {raise}"
        ),
    };
    (span, help)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vague_summaries() {
        assert!(vague_reason("Manages your account").is_some());
        assert!(vague_reason("Handle invoices").is_some());
        assert!(vague_reason("Processes payments").is_some());
        assert!(vague_reason("Does things").is_some());
        assert!(vague_reason("Deals with invoices here").is_some());
        assert!(vague_reason("Videos").is_some());
        assert!(vague_reason("Getaway planner for trips").is_none());
        assert!(vague_reason("Generate a video from a prompt").is_none());
        // Two words, a specific verb and its object: clear.
        for clear in [
            "List predictions",
            "Transcribe audio",
            "Get transcript",
            "Delete transcript",
            "Download document",
        ] {
            assert!(vague_reason(clear).is_none(), "{clear}");
        }
    }
}
