//! Connector → `openapi.openai.json`: OpenAPI 3.1 within OpenAI GPT Actions' limits
//! (operation description 300 characters, parameter description 700).
//!
//! Takes: the connector, the full model-facing descriptions and the compact form of the
//! generated sentences. Returns: the JSON text, an `openai-description-shortened` warning for
//! every author's text it had to shorten, and an `openai-notice-too-long` error when the
//! generated sentences alone leave the author too little room (a very long `spends.note`).
//! Must never: write a description over 300 characters or a parameter description over
//! 700, or drop or cut the cost ("COSTS THE PERSON"), permanence ("PERMANENT", "Cannot
//! be undone") or polling (do-not-resubmit, calling-again-is-not-faster) sentences. When
//! the full text does not fit, the generated sentences switch to their short form and
//! only the author's prose is shortened, keeping the sentence that says what the call
//! will not do. (When even the short form leaves the author less than 60 characters,
//! it is the `openai-notice-too-long` error, so no description is ever written over 300.)

use std::collections::BTreeSet;

use serde_json::Value;

use crate::base::Base;
use crate::diagnostics::{Diagnostic, Finding, Severity};
use crate::model::{Connector, KeyLocation, Operation, escape, unescape};
use crate::model::{Level, Lint};

use super::openapi;

/// OpenAI's documented limit on an operation's description.
pub const DESCRIPTION_MAX: usize = 300;
/// OpenAI's documented limit on a parameter's description.
pub const PARAMETER_MAX: usize = 700;

/// The generated sentences may take at most this much of an operation's 300 characters,
/// so that the author's own words (at least their limit sentence) always have room.
pub(crate) const NOTICE_MAX: usize = DESCRIPTION_MAX - 2 - PROSE_MIN;
/// What the author's prose always keeps of the budget.
const PROSE_MIN: usize = 60;

pub(crate) fn render(
    connector: &Connector,
    base: Option<&Base>,
    descriptions: &[String],
    compact: &[String],
) -> (String, Vec<Finding>) {
    let mut findings = Vec::new();
    let mut texts = Vec::with_capacity(descriptions.len());
    for (op, (full, compact)) in connector
        .operations
        .iter()
        .zip(descriptions.iter().zip(compact))
    {
        let text = if full.chars().count() <= DESCRIPTION_MAX {
            full.clone()
        } else {
            let notice = compact.chars().count();
            if notice > NOTICE_MAX {
                let (span, what) = notice_cause(op);
                findings.push(Finding::error(Diagnostic::OpenaiNoticeTooLong {
                    id: op.id.clone(),
                    length: notice,
                    max: NOTICE_MAX,
                    span,
                    help: format!(
                        "shorten {what}, or leave the openai target out: remove it from `targets`, or pass `--target` without it for one run"
                    ),
                }));
            }
            let room = match notice {
                0 => DESCRIPTION_MAX,
                n => DESCRIPTION_MAX.saturating_sub(n + 2).max(PROSE_MIN),
            };
            let prose = fit_prose(&op.description, room);
            if prose != op.description {
                warning(
                    connector,
                    op,
                    "the author's description",
                    op.description.chars().count(),
                    room,
                    "keeps its limit sentence and shortens the rest",
                    &mut findings,
                );
            }
            match (prose.is_empty(), compact.is_empty()) {
                (_, true) => prose,
                (true, false) => compact.clone(),
                (false, false) => format!("{prose}\n\n{compact}"),
            }
        };
        texts.push(text);
    }
    let mut doc = openapi::document(connector, &texts);
    let before = referenced_components(&doc);
    drop_header_keys(connector, &mut doc, &mut findings);
    drop_orphans(&mut doc, &before);
    fit_parameters(connector, base, &mut doc, &mut findings);
    (super::json_text(&doc), findings)
}

/// Where the generated sentences get their length from, and what to call it: the longer
/// of `spends.note` and `spends.when` (the cost sentence repeats them), else the poll
/// target's id (the polling sentence names it).
fn notice_cause(op: &Operation) -> (crate::diagnostics::Span, &'static str) {
    let chars = |s: &str| s.chars().count();
    let note = op.spends.as_ref().map_or(0, |s| chars(&s.note));
    let when = op
        .spends
        .as_ref()
        .and_then(|s| s.when.as_deref())
        .map_or(0, chars);
    // A body or query key is named in the short retry sentence (a header key is not:
    // the openai target cannot send it).
    let key = op
        .key()
        .filter(|k| k.location != KeyLocation::Header)
        .map_or(0, |k| chars(&k.name));
    if key > note.max(when) {
        return (
            op.origin.idempotency.unwrap_or(op.origin.entry),
            "the retry key's name (the retry sentence repeats it)",
        );
    }
    match (op.origin.note, op.origin.when) {
        (_, Some(at)) if when > note => (at, "`spends.when` (the cost sentence repeats it)"),
        (Some(at), _) => (at, "`spends.note` (the cost sentence repeats it)"),
        _ => (
            op.origin.poll_with.unwrap_or(op.origin.entry),
            "the poll target's id (the polling sentence names it)",
        ),
    }
}

/// The author's prose in at most `max` characters: the sentence that says what the call
/// will not do comes first in the budget, then the other sentences in their order as
/// long as they fit (the kept ones stay in the author's order); a sentence too long
/// for what is left is cut at a word, with "…".
pub(crate) fn fit_prose(text: &str, max: usize) -> String {
    let len = |s: &str| s.chars().count();
    if len(text) <= max {
        return text.to_string();
    }
    let sentences = crate::english::sentences(text);
    if sentences.is_empty() {
        return crate::english::clip(text.trim(), max);
    }
    let first = sentences
        .iter()
        .position(|s| crate::english::states_limit(s))
        .unwrap_or(0);
    let mut kept = vec![false; sentences.len()];
    let mut used = 0;
    for i in std::iter::once(first).chain((0..sentences.len()).filter(|&i| i != first)) {
        let cost = len(sentences[i]) + usize::from(used > 0);
        if used + cost <= max {
            kept[i] = true;
            used += cost;
        }
    }
    if !kept[first] {
        return crate::english::clip(sentences[first], max);
    }
    sentences
        .iter()
        .zip(&kept)
        .filter(|(_, k)| **k)
        .map(|(s, _)| *s)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Shortens every parameter description over OpenAI's limit: the operations' own, their
/// path items' shared ones and the document's reusable ones (the last two exist only in
/// base mode, where the warning points into the base document).
fn fit_parameters(
    connector: &Connector,
    base: Option<&Base>,
    doc: &mut Value,
    findings: &mut Vec<Finding>,
) {
    // (pointer of the parameter list, the operation it belongs to)
    let mut lists: Vec<(String, Option<&Operation>)> = connector
        .operations
        .iter()
        .map(|op| (format!("{}/parameters", op.pointer()), Some(op)))
        .collect();
    let paths: Vec<String> = doc
        .get("paths")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(path, _)| format!("/paths/{}/parameters", escape(path)))
        .collect();
    lists.extend(paths.into_iter().map(|p| (p, None)));
    lists.push(("/components/parameters".to_string(), None));
    for (pointer, op) in lists {
        let entries: Vec<(String, &mut Value)> = match doc.pointer_mut(&pointer) {
            Some(Value::Array(items)) => items
                .iter_mut()
                .enumerate()
                .map(|(i, p)| (format!("{pointer}/{i}"), p))
                .collect(),
            Some(Value::Object(map)) => map
                .iter_mut()
                .map(|(k, p)| (format!("{pointer}/{}", escape(k)), p))
                .collect(),
            _ => Vec::new(),
        };
        for (at, p) in entries {
            let Some(Value::String(d)) = p.get_mut("description") else {
                continue;
            };
            let length = d.chars().count();
            if length <= PARAMETER_MAX {
                continue;
            }
            *d = crate::english::clip(d, PARAMETER_MAX);
            match (op, base) {
                (Some(op), _) => warning(
                    connector,
                    op,
                    "a parameter's description",
                    length,
                    PARAMETER_MAX,
                    "shortens it",
                    findings,
                ),
                (None, Some(base)) => findings.push(
                    Finding::warning(Diagnostic::OpenaiDescriptionShortened {
                        id: at.clone(),
                        what: "a shared parameter's description",
                        length,
                        max: PARAMETER_MAX,
                        action: "shortens it",
                        span: base.span(&format!("{at}/description")),
                    })
                    .in_base(),
                ),
                (None, None) => {}
            }
        }
    }
}

/// GPT Actions send no custom header ("Custom headers are not supported"), so a header
/// retry key is no defence there: each such operation loses the header parameter (its
/// own, or its path item's shared one; a component only it referenced goes too, in
/// `drop_orphans`), its `x-idempotency` says `none`, its description
/// already carries the never-repeat rule (`prose::Flavour::Openai`), and a warning says
/// what the provider can do.
fn drop_header_keys(connector: &Connector, doc: &mut Value, findings: &mut Vec<Finding>) {
    for op in &connector.operations {
        let Some(key) = op.key().filter(|k| k.location == KeyLocation::Header) else {
            continue;
        };
        let is_key = |p: &Value| {
            let p = match p.get("$ref").and_then(Value::as_str) {
                Some(reference) => connector.document.resolve(reference).unwrap_or(p),
                None => p,
            };
            p.get("in").and_then(Value::as_str) == Some("header")
                && p.get("name")
                    .and_then(Value::as_str)
                    .is_some_and(|n| n.eq_ignore_ascii_case(&key.name))
        };
        let shared = format!("/paths/{}/parameters", escape(&op.path));
        for pointer in [format!("{}/parameters", op.pointer()), shared] {
            if let Some(Value::Array(list)) = doc.pointer_mut(&pointer) {
                list.retain(|p| !is_key(p));
            }
        }
        if let Some(Value::Object(object)) = doc.pointer_mut(&op.pointer()) {
            if object
                .get("parameters")
                .and_then(Value::as_array)
                .is_some_and(Vec::is_empty)
            {
                object.remove("parameters");
            }
            if let Some(hint) = object.get_mut("x-idempotency") {
                *hint = Value::String("none".into());
            }
        }
        let severity = match connector.lint.level(Lint::OpenaiHeaderKey) {
            _ if op.lint_allow.contains(&Lint::OpenaiHeaderKey) => continue,
            Level::Allow => continue,
            Level::Warn => Severity::Warning,
            Level::Deny => Severity::Error,
        };
        findings.push(Finding {
            source: crate::diagnostics::Source::default(),
            diagnostic: Diagnostic::OpenaiHeaderKey {
                id: op.id.clone(),
                header: key.name.clone(),
                refused: if key.required {
                    "; and the header is required, so the provider will refuse every call of it from a GPT Action".to_string()
                } else {
                    String::new()
                },
                span: op.origin.idempotency.unwrap_or(op.origin.entry),
            },
            severity,
        });
    }
}

/// The components `doc` references, transitively from outside `components`, as
/// (section, name).
fn referenced_components(doc: &Value) -> BTreeSet<(String, String)> {
    fn collect<'a>(value: &'a Value, out: &mut Vec<&'a str>) {
        match value {
            Value::Object(map) => {
                if let Some(Value::String(reference)) = map.get("$ref") {
                    out.push(reference);
                }
                map.values().for_each(|v| collect(v, out));
            }
            Value::Array(list) => list.iter().for_each(|v| collect(v, out)),
            _ => {}
        }
    }
    let mut pending = Vec::new();
    for (key, value) in doc.as_object().into_iter().flatten() {
        if key != "components" {
            collect(value, &mut pending);
        }
    }
    let mut seen = BTreeSet::new();
    while let Some(reference) = pending.pop() {
        let Some(rest) = reference.strip_prefix("#/components/") else {
            continue;
        };
        let mut parts = rest.split('/');
        let (Some(section), Some(name)) = (parts.next(), parts.next()) else {
            continue;
        };
        let target = (unescape(section), unescape(name));
        let component = doc
            .get("components")
            .and_then(|c| c.get(&target.0))
            .and_then(|s| s.get(&target.1));
        if seen.insert(target)
            && let Some(component) = component
        {
            collect(component, &mut pending);
        }
    }
    seen
}

/// Removes the components that were referenced in `before` and are no longer: what
/// dropping a header key left behind (its `components/parameters` entry, and what only
/// it reached). Components nothing referenced to begin with are left as they were.
fn drop_orphans(doc: &mut Value, before: &BTreeSet<(String, String)>) {
    let after = referenced_components(doc);
    let Some(Value::Object(components)) = doc.get_mut("components") else {
        return;
    };
    for (section, name) in before.difference(&after) {
        if let Some(Value::Object(entries)) = components.get_mut(section) {
            entries.remove(name);
            if entries.is_empty() {
                components.remove(section);
            }
        }
    }
    if components.is_empty() {
        doc.as_object_mut().map(|root| root.remove("components"));
    }
}

fn warning(
    connector: &Connector,
    op: &Operation,
    what: &'static str,
    length: usize,
    max: usize,
    action: &'static str,
    findings: &mut Vec<Finding>,
) {
    // Shortening is never silent: it warns even while the lint is at its default
    // `allow`; `lintAllow: [description-too-long]` on the operation silences it.
    if op.lint_allow.contains(&Lint::DescriptionTooLong) {
        return;
    }
    let severity = match connector.lint.level(Lint::DescriptionTooLong) {
        Level::Deny => Severity::Error,
        _ => Severity::Warning,
    };
    findings.push(Finding {
        source: crate::diagnostics::Source::default(),
        diagnostic: Diagnostic::OpenaiDescriptionShortened {
            id: op.id.clone(),
            what,
            length,
            max,
            action,
            span: op.origin.description,
        },
        severity,
    });
}

#[cfg(test)]
mod tests {
    use super::fit_prose;
    use crate::english::clip as shorten;

    #[test]
    fn prose_keeps_its_limit_sentence_first() {
        let text = "Starts a generation of a very long video. Returns a job to track. Does not publish the video.";
        assert_eq!(fit_prose(text, 200), text);
        assert_eq!(
            fit_prose(text, 60),
            "Returns a job to track. Does not publish the video."
        );
        assert_eq!(fit_prose(text, 30), "Does not publish the video.");
        assert_eq!(fit_prose(text, 20), "Does not publish…");
        assert!(
            fit_prose("No limit here at all, just words.", 12)
                .chars()
                .count()
                <= 12
        );
    }

    #[test]
    fn shortens_at_sentence_then_word() {
        assert_eq!(shorten("short", 10), "short");
        assert_eq!(
            shorten("First sentence here. Second one is long.", 30),
            "First sentence here."
        );
        assert_eq!(shorten("one two three four five", 12), "one two…");
        assert!(shorten(&"x".repeat(50), 10).chars().count() <= 10);
    }
}
