//! `async:` and the rules that keep polling safe: each async operation names a free read
//! (a GET, or `read: true`) to poll (never itself, never one that spends or starts a job), and a job's list is
//! found so a model that lost a job's id looks it up instead of starting the work again.
//!
//! Takes: the raw `async` mapping of one operation; then every operation with a usable
//! id; then the document around them. Returns (through `Validator`): `Async`, checked;
//! an `unknown-poll-target` or `unsafe-poll-target` for each poll target that is no safe
//! read; `list_with` filled in; `id_fields`, where a job's id is in the call's answer
//! (`async.idField`, a property or a path into an envelope, checked against the answer's
//! schema: `unknown-id-field`; or found from the poll target and that schema, inside a
//! one-property envelope too, and `no-job-id` when the poll takes an id the answer's
//! schema cannot give).
//! Must never: let a poll resubmit the job.

// The manifest's own names: foldhash (connectorgen-core's Cargo.toml says why that is safe).
use foldhash::HashMap;

use serde_json::Value;
use serde_saphyr::Spanned;

use crate::diagnostics::{Diagnostic, suggest};
use crate::manifest::{RawAsync, span};
use crate::model::{Async, Document, Names as _, Operation, Returns, envelope, media_essence};
use crate::validate::context::{Checked, Validator};
use crate::validate::context::{missing, non_empty};

pub(in crate::validate) fn async_(v: &mut Validator, a: &Spanned<RawAsync>) -> Option<Async> {
    let at = span(a);
    let poll_with = match &a.value.poll_with {
        None => {
            missing(
                v,
                "pollWith",
                "`async`",
                at,
                "name the free read (a `get`, or an operation declared `read: true`) that reports the job's progress, e.g. `pollWith: getVideo`",
            );
            None
        }
        Some(p) => Some(p.value.trim().to_string()),
    };
    let typical_seconds = match &a.value.typical_seconds {
        None => Some(None),
        Some(t) if t.value <= 0 => {
            v.findings.push(Diagnostic::NonPositiveTypicalSeconds {
                value: t.value,
                span: span(t),
            });
            None
        }
        Some(t) => Some(Some(t.value.unsigned_abs())),
    };
    let returns = match &a.value.returns {
        None => Some(Returns::Job),
        Some(r) => {
            if let Some(returns) = Returns::named(r.value.trim()) {
                Some(returns)
            } else {
                v.findings.push(Diagnostic::UnknownAsyncReturns {
                value: r.value.clone(),
                span: span(r),
                help: format!(
                    "{} `job` is work with an id to poll; `change` is a change to something that exists which settles in the background (a cancel, a refund)",
                    suggest(r.value.trim(), Returns::names())
                ),
            });
                None
            }
        }
    };
    let id_field = match &a.value.id_field {
        None => Some(None),
        Some(f) => non_empty(
            v,
            f,
            "async.idField",
            "name the property of the call's answer that holds the job's id, e.g. `idField: object_id`, or leave `idField` out",
        )
        .map(Some),
    };
    let status = a.value.status.as_ref().map_or_else(
        || Some(crate::model::JobStatus::default()),
        |s| super::tasks::job_status(v, s),
    );
    let cancel_with = a
        .value
        .cancel_with
        .as_ref()
        .map(|c| c.value.trim().to_string());
    Some(Async {
        poll_with: poll_with?,
        typical_seconds: typical_seconds?,
        returns: returns?,
        // Filled in once every operation is known (`link_lists`).
        list_with: None,
        // The written one, checked (or the found ones) once the document is built.
        id_fields: id_field?.into_iter().collect(),
        status: status?,
        cancel_with,
    })
}

/// Each checked operation's index by its id; the first declaration wins, as for
/// duplicate-id reporting.
fn checked_by_id(checked: &[Checked]) -> HashMap<&str, usize> {
    checked
        .iter()
        .enumerate()
        .rev()
        .map(|(i, c)| (c.op.id.as_str(), i))
        .collect()
}

/// Each `async.pollWith` names an operation that is a free, safe read: a GET or an
/// operation declared `read: true`, that neither spends nor is async, and not the
/// operation itself.
pub(in crate::validate) fn poll_targets(v: &mut Validator, checked: &[Checked]) {
    let by_id = checked_by_id(checked);
    for c in checked {
        let Some((poll_with, at)) = &c.poll else {
            continue;
        };
        let at = *at;
        let Some(&t) = by_id.get(poll_with.as_str()) else {
            v.findings.push(Diagnostic::UnknownPollTarget {
                target: poll_with.clone(),
                span: at,
                help: suggest(poll_with, checked.iter().map(|c| c.op.id.as_str())),
            });
            continue;
        };
        let target = &checked[t];
        let reason = if target.op.id == c.op.id {
            Some("an operation cannot poll itself; that would resubmit the job")
        } else if !target.is_read() {
            Some("it is neither a `get` nor declared `read: true`")
        } else if target.spends() {
            Some("it spends")
        } else if target.is_async() {
            Some("it is itself async")
        } else {
            None
        };
        if let Some(reason) = reason {
            v.findings.push(Diagnostic::UnsafePollTarget {
                target: poll_with.clone(),
                reason,
                span: at,
                target_span: Some(target.op.origin.id),
            });
        }
    }
}

/// Each `idempotency.duplicate.readWith` names a free read (as a poll target is) that
/// takes the key in a query or path parameter of the key's own name.
pub(in crate::validate) fn duplicate_reads(v: &mut Validator, checked: &[Checked]) {
    let by_id = checked_by_id(checked);
    for c in checked {
        let Some(key) = c.op.idempotency.key() else {
            continue;
        };
        let Some(read_with) = key.duplicate.as_ref().and_then(|d| d.read_with.as_ref()) else {
            continue;
        };
        let span = c.op.origin.idempotency().unwrap_or(c.op.origin.entry);
        let Some(&t) = by_id.get(read_with.as_str()) else {
            v.findings.push(Diagnostic::UnusableDuplicateRead {
                reason: format!(
                    "no operation has the id `{read_with}`; {}",
                    suggest(read_with, checked.iter().map(|c| c.op.id.as_str()))
                ),
                span,
            });
            continue;
        };
        let target = &checked[t];
        let reason = if target.op.id == c.op.id {
            Some("it is the operation itself, which would be sent again".to_string())
        } else if !target.is_read() || target.spends() || target.is_async() {
            Some(format!(
                "`{read_with}` is not a free read (a `get`, or `read: true`, that neither spends nor is async)"
            ))
        } else if !takes_parameter(&target.op, &key.name) {
            Some(format!(
                "`{read_with}` takes no query or path parameter named `{}`, the key",
                key.name
            ))
        } else {
            None
        };
        if let Some(reason) = reason {
            v.findings
                .push(Diagnostic::UnusableDuplicateRead { reason, span });
        }
    }
}

/// Whether `op` takes a query or path parameter `name`; true as well when its parameters
/// include a `$ref` (resolved later: `serve` finds the argument in the tool's mapping,
/// and without it answers the retry as of unknown outcome).
fn takes_parameter(op: &Operation, name: &str) -> bool {
    if op.path_params.iter().any(|p| p == name) {
        return true;
    }
    op.http
        .get("parameters")
        .and_then(serde_json::Value::as_array)
        .into_iter()
        .flatten()
        .any(|p| {
            p.get("$ref").is_some()
                || (p.get("name").and_then(serde_json::Value::as_str) == Some(name)
                    && matches!(
                        p.get("in").and_then(serde_json::Value::as_str),
                        Some("query" | "path")
                    ))
        })
}

/// Names, for each async operation that returns a job, the free read that lists the
/// jobs' collection: the poll target's path without its last `/{param}`. A model that
/// lost a job's id finds it there instead of starting the work again.
pub(in crate::validate) fn link_lists(operations: &mut [Operation]) {
    let lists: HashMap<&str, &str> = operations
        .iter()
        .filter(|o| o.read && o.spends.is_none() && o.async_.is_none())
        .rev() // the first one listed wins
        .map(|o| (o.path.as_str(), o.id.as_str()))
        .collect();
    // By id, the first one listed: a search per async operation was quadratic (25,000
    // async operations of 100,000 took seconds).
    let by_id: HashMap<&str, &Operation> = operations
        .iter()
        .rev()
        .map(|o| (o.id.as_str(), o))
        .collect();
    let found: Vec<Option<String>> = operations
        .iter()
        .map(|op| {
            let a = op.async_.as_ref()?;
            if a.returns != crate::model::Returns::Job {
                return None;
            }
            let target = by_id.get(a.poll_with.as_str())?;
            let (collection, last) = target.path.rsplit_once('/')?;
            let names_one = last.starts_with('{') && last.ends_with('}');
            let list = lists.get(collection).filter(|_| names_one)?;
            Some((*list).to_string())
        })
        .collect();
    for (op, list) in operations.iter_mut().zip(found) {
        if let Some(a) = &mut op.async_ {
            a.list_with = list;
        }
    }
}

/// Each operation's index by its id; the first declaration wins, as for duplicate-id
/// reporting.
pub(super) fn first_by_id(operations: &[Operation]) -> HashMap<&str, usize> {
    operations
        .iter()
        .enumerate()
        .rev()
        .map(|(i, o)| (o.id.as_str(), i))
        .collect()
}

/// Where each job's id is in the answer of the call that starts it (`id_fields`):
/// `async.idField` when written, which must then be a property of the answer's
/// schema when that schema lists them; else the names the poll target points at
/// (`discovered`), narrowed to those the answer's schema has when it has any.
pub(in crate::validate) fn job_ids(
    v: &mut Validator,
    document: &Document,
    operations: &mut [Operation],
) {
    let by_id = first_by_id(operations);
    let found: Vec<Option<Vec<String>>> = operations
        .iter()
        .map(|op| {
            let a = op.async_.as_ref().filter(|a| a.returns == Returns::Job)?;
            let properties = answer_properties(document, op);
            if let (Some(at), Some(field)) = (op.origin.id_field(), a.id_fields.first()) {
                let missing = answer_schema(document, op)
                    .and_then(|schema| missing_on_path(document, schema, field));
                if let Some((name, under, listed)) = missing {
                    let place = if under.is_empty() {
                        "the answer's schema".to_string()
                    } else {
                        format!("`{under}` in the answer's schema")
                    };
                    v.findings.push(Diagnostic::UnknownIdField {
                        field: field.clone(),
                        id: op.id.clone(),
                        span: at,
                        help: format!(
                            "{} (the properties of {place}); name the one that holds the job's id (a path such as `job.id` reaches into an envelope), or leave `idField` out to have it found",
                            suggest(&name, listed.iter().map(String::as_str))
                        ),
                    });
                }
                return None;
            }
            let target = by_id.get(a.poll_with.as_str()).map(|&i| &operations[i]);
            let mut fields = discovered(document, op, target);
            if let Some(properties) = &properties {
                // As the schema spells it: a path's `{Sid}` is the answer's `sid`.
                let listed: Vec<String> = fields
                    .iter()
                    .filter_map(|f| spelled(properties, f).cloned())
                    .fold(Vec::new(), |mut seen, f| {
                        if !seen.contains(&f) {
                            seen.push(f);
                        }
                        seen
                    });
                if !listed.is_empty() {
                    fields = listed;
                } else if let Some(inside) = enveloped(document, op, properties, &fields) {
                    fields = inside;
                } else if target.is_some_and(|t| takes_an_id(document, op, t))
                    && answer_schemas(document, op)
                        .into_iter()
                        .all(|schema| !may_hold(document, schema, &fields))
                {
                    // The poll needs an id the answer cannot give: the model would be
                    // told a job started without being told which.
                    v.findings.push(Diagnostic::NoJobId {
                        id: op.id.clone(),
                        span: op.origin.id,
                        help: format!(
                            "its poll target `{}` takes the job's id, and the answer's schema lists {} but none of {}; name the property that holds it with `async.idField` (a path such as `job.id` reaches into an envelope)",
                            a.poll_with,
                            quoted(properties),
                            quoted(&fields),
                        ),
                    });
                }
                // Otherwise a schema that names none of them says nothing against the
                // others: the answer may still carry one (an untyped extra property).
            }
            Some(fields)
        })
        .collect();
    for (op, fields) in operations.iter_mut().zip(found) {
        if let (Some(a), Some(fields)) = (&mut op.async_, fields) {
            a.id_fields = fields;
        }
    }
}

/// The names a job's id may go by, in the order tried: the poll target's last path
/// parameter (the id it is called with; without one, the id properties its request
/// body requires, as an RPC-style `POST /transcripts.info {object_id}` does), `id`,
/// `object_id`, then `<resource>_id` and `<resource>Id` for the resource the poll
/// target's path names (`/labels/{id}` → `label`) and the call's own (`POST /labels`).
fn discovered(document: &Document, op: &Operation, target: Option<&Operation>) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let mut add = |name: String| {
        if !names.contains(&name) {
            names.push(name);
        }
    };
    if let Some(target) = target {
        match target.path_params.last() {
            Some(param) => add(param.clone()),
            None => required_ids(document, target)
                .into_iter()
                .for_each(&mut add),
        }
    }
    add("id".to_string());
    add("object_id".to_string());
    let paths = target
        .map(|t| t.path.as_str())
        .into_iter()
        .chain([op.path.as_str()]);
    for resource in paths.filter_map(resource) {
        add(format!("{resource}_id"));
        add(format!("{resource}Id"));
    }
    names
}

/// The resource a path names, singular: its last segment that is not a parameter, up to
/// a `.` (`/v1/labels/{id}` → `label`, `/transcripts.info` → `transcript`,
/// `/Calls.json` → `Call`).
fn resource(path: &str) -> Option<String> {
    let segment = path
        .split('/')
        .rev()
        .find(|s| !s.is_empty() && !s.starts_with('{'))?;
    let word = segment.split('.').next().unwrap_or_default();
    let singular = if let Some(stem) = word.strip_suffix("ies") {
        format!("{stem}y")
    } else if ["ches", "shes", "sses", "xes"]
        .iter()
        .any(|e| word.ends_with(e))
    {
        word[..word.len() - 2].to_string()
    } else if word.ends_with("ss") {
        word.to_string()
    } else {
        word.strip_suffix('s').unwrap_or(word).to_string()
    };
    let usable = !singular.is_empty()
        && singular
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    usable.then_some(singular)
}

/// The properties named like an id (`id`, `…_id`, `…Id`) that the JSON request body of
/// `op` requires.
fn required_ids(document: &Document, op: &Operation) -> Vec<String> {
    op.required_body_properties(document)
        .into_iter()
        .filter(|name| name == "id" || name.ends_with("_id") || name.ends_with("Id"))
        .collect()
}

/// The properties of the JSON object `op` answers with on success (its first 2xx
/// response), when its schema lists them, through `$ref`s and `allOf`; `None` when it
/// does not say which (no JSON success response, no `properties`, a `oneOf` or `anyOf`).
fn answer_properties(document: &Document, op: &Operation) -> Option<Vec<String>> {
    let mut names = Vec::new();
    properties(document, answer_schema(document, op)?, &mut names, 0)?;
    Some(names)
}

/// The schema of the JSON answer of `op`'s first success response.
pub(super) fn answer_schema<'a>(document: &'a Document, op: &'a Operation) -> Option<&'a Value> {
    let responses = op.http.get("responses")?.as_object()?;
    let (_, response) = responses
        .iter()
        .find(|(status, _)| status.starts_with('2'))?;
    json_schema(follow(document, response)?.get("content")?)
}

/// The schema of property `name` of `schema`, through its `$ref`s and `allOf` parts
/// (within a budget of schemas looked at: `allOf`s that refer to each other branch).
pub(super) fn property_schema<'a>(
    document: &'a Document,
    schema: &'a Value,
    name: &str,
) -> Option<&'a Value> {
    fn within<'a>(
        document: &'a Document,
        schema: &'a Value,
        name: &str,
        depth: u8,
        budget: &mut u32,
    ) -> Option<&'a Value> {
        if depth > 16 || *budget == 0 {
            return None;
        }
        *budget -= 1;
        let schema = follow(document, schema)?.as_object()?;
        if let Some(found) = schema.get("properties").and_then(|p| p.get(name)) {
            return Some(found);
        }
        for part in schema.get("allOf")?.as_array()? {
            if let Some(found) = within(document, part, name, depth + 1, budget) {
                return Some(found);
            }
        }
        None
    }
    within(document, schema, name, 0, &mut 256)
}

/// Where `path` (a property, or dot-separated names into an envelope: `job.id`) leaves
/// what `schema` lists: the name not found, the path above it, and the names listed
/// there. `None` when the path is there, or a level on the way does not say which
/// properties it has.
pub(super) fn missing_on_path(
    document: &Document,
    schema: &Value,
    path: &str,
) -> Option<(String, String, Vec<String>)> {
    let mut current = schema;
    let mut above: Vec<&str> = Vec::new();
    for (i, name) in path.split('.').enumerate() {
        let mut names = Vec::new();
        properties(document, current, &mut names, 0)?;
        // A property whose own name has dots is found whole, as `at_path` reads it.
        if i == 0 && names.iter().any(|n| n == path) {
            return None;
        }
        if !names.iter().any(|n| n == name) {
            return Some((name.to_string(), above.join("."), names));
        }
        above.push(name);
        current = property_schema(document, current, name)?;
    }
    None
}

/// The id names of `fields` found inside a one-property envelope of the answer
/// (`{"job": {"id": …}}` → `job.id`), as the schema spells them, when its schema says so.
fn enveloped(
    document: &Document,
    op: &Operation,
    properties: &[String],
    fields: &[String],
) -> Option<Vec<String>> {
    let (envelope, ()) = envelope(properties.iter().map(|name| (name, ())))?;
    let inner = property_schema(document, answer_schema(document, op)?, envelope)?;
    let mut names = Vec::new();
    properties_of(document, inner, &mut names)?;
    let inside: Vec<String> = fields
        .iter()
        .filter_map(|f| spelled(&names, f))
        .map(|f| format!("{envelope}.{f}"))
        .collect();
    (!inside.is_empty()).then_some(inside)
}

/// `name` as `names` spell it: the same, else the same but for case (a path's `{Sid}`
/// is the answer's `sid`).
fn spelled<'a>(names: &'a [String], name: &str) -> Option<&'a String> {
    names
        .iter()
        .find(|n| *n == name)
        .or_else(|| names.iter().find(|n| n.eq_ignore_ascii_case(name)))
}

/// The schemas of every JSON success answer of `op`.
fn answer_schemas<'a>(document: &'a Document, op: &'a Operation) -> Vec<&'a Value> {
    let Some(responses) = op.http.get("responses").and_then(Value::as_object) else {
        return Vec::new();
    };
    responses
        .iter()
        .filter(|(status, _)| status.starts_with('2'))
        .filter_map(|(_, response)| json_schema(follow(document, response)?.get("content")?))
        .collect()
}

/// Whether an answer of this schema may hold one of `fields`: it does not say which
/// properties it has, it lists one, or it is a one-property envelope that does either.
fn may_hold(document: &Document, schema: &Value, fields: &[String]) -> bool {
    let mut names = Vec::new();
    if properties_of(document, schema, &mut names).is_none() {
        return true;
    }
    if fields.iter().any(|f| spelled(&names, f).is_some()) {
        return true;
    }
    let [envelope] = &names[..] else {
        return false;
    };
    let Some(inner) = property_schema(document, schema, envelope) else {
        return true;
    };
    let mut inside = Vec::new();
    properties_of(document, inner, &mut inside).is_none()
        || fields.iter().any(|f| spelled(&inside, f).is_some())
}

/// Whether a poll target is called with the job's id: a path parameter the call that
/// starts the job does not have too (`GET /repos/{repo}/builds/latest` after
/// `POST /repos/{repo}/builds` names no job), or an id its JSON body requires (an
/// RPC-style read).
fn takes_an_id(document: &Document, op: &Operation, target: &Operation) -> bool {
    target
        .path_params
        .iter()
        .any(|p| !op.path_params.contains(p))
        || target
            .required_body_properties(document)
            .iter()
            .any(|name| name == "id" || name.ends_with("_id") || name.ends_with("Id"))
}

/// Names in backticks, joined with commas (a finding's help quotes them so).
fn quoted(names: &[String]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    quoted.join(", ")
}

/// `properties` from depth 0, for callers outside the walk.
fn properties_of(document: &Document, schema: &Value, names: &mut Vec<String>) -> Option<()> {
    properties(document, schema, names, 0)
}

/// The schema of a `content` map's JSON media type (`application/json`, `…+json`).
pub(super) fn json_schema(content: &Value) -> Option<&Value> {
    content
        .as_object()?
        .iter()
        .find(|(media, _)| {
            let essence = media_essence(media);
            essence == "application/json" || essence.ends_with("+json")
        })?
        .1
        .get("schema")
}

/// Adds the properties `schema` lists to `names`; `None` when it does not say which.
fn properties(
    document: &Document,
    schema: &Value,
    names: &mut Vec<String>,
    depth: u8,
) -> Option<()> {
    // A cycle of `allOf`s through references ends here rather than recursing forever.
    if depth > 16 {
        return None;
    }
    let schema = follow(document, schema)?.as_object()?;
    if schema.contains_key("oneOf") || schema.contains_key("anyOf") {
        return None;
    }
    let mut said = false;
    if let Some(listed) = schema.get("properties").and_then(Value::as_object) {
        said = true;
        for name in listed.keys() {
            if !names.contains(name) {
                names.push(name.clone());
            }
        }
    }
    if let Some(all) = schema.get("allOf").and_then(Value::as_array) {
        said = true;
        for part in all {
            properties(document, part, names, depth + 1)?;
        }
    }
    said.then_some(())
}

/// `value`, or what its `$ref` chain points at in the document (bounded).
pub(super) fn follow<'a>(document: &'a Document, mut value: &'a Value) -> Option<&'a Value> {
    for _ in 0..16 {
        match value.get("$ref").and_then(Value::as_str) {
            Some(reference) => value = document.resolve(reference)?,
            None => return Some(value),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::resource;

    #[test]
    fn a_path_names_its_resource_in_the_singular() {
        assert_eq!(resource("/v1/labels/{id}").as_deref(), Some("label"));
        assert_eq!(resource("/transcripts.info").as_deref(), Some("transcript"));
        assert_eq!(resource("/v1/batches/{id}").as_deref(), Some("batch"));
        assert_eq!(resource("/v1/addresses").as_deref(), Some("address"));
        assert_eq!(resource("/v1/deliveries").as_deref(), Some("delivery"));
        assert_eq!(resource("/v1/address").as_deref(), Some("address"));
        assert_eq!(resource("/{id}"), None);
    }
}
