//! One base-mode operation: the manifest entry that names a base operation, found in
//! the provider's document, with the safety layer laid over it.
//!
//! Takes: the manifest's operations (each naming a base operation with `operation:`)
//! and the parsed `Base`. Returns (through `Validator`): one model operation per entry
//! (built by `safety/`), whose `http` is the base Operation Object verbatim (plus an
//! `Idempotency-Key` header when the operation needs one and the base has none, and
//! without `callbacks`: the agent receives no calls); its summary and description are
//! the author's, else the base's. Must never: change the HTTP description it keeps
//! beyond those two edits, or expose an operation the document does not have, has twice
//! under one name, or declares with parameters a client could not send.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};
use serde_saphyr::Spanned;

use crate::base::{Base, BaseOperation};
use crate::diagnostics::{Diagnostic, Span, suggest};
use crate::lower::idempotency_parameter;
use crate::manifest::{RawEntry, RawOperation, span};
use crate::model::{Method, Names as _, Origin, escape};
use crate::validate::context::{Checked, Validator};
use crate::validate::context::{missing, non_empty};
use crate::validate::safety::candidates::base_candidates;
use crate::validate::safety::idempotency::base_idempotency;
use crate::validate::safety::safety;
use crate::validate::safety::{Body, Head, needs_idempotency_key, operation, origin};
use crate::validate::syntax::is_identifier;

/// The base operation an entry names, found and usable.
struct Exposed<'a, 'b> {
    /// `operation:` as written.
    name: &'a Spanned<String>,
    found: &'b BaseOperation,
    method: Method,
    /// Its Operation Object in the base document.
    object: &'b Map<String, Value>,
}

/// Every listed base operation that could be found and named. The entries are taken out
/// of `raw` and each is dropped once checked, as inline.
pub(in crate::validate) fn base_operations(
    v: &mut Validator,
    raw: &mut Vec<RawEntry>,
    base: &Base,
) -> Vec<Checked> {
    let mut listed: HashMap<String, Span> = HashMap::with_capacity(raw.len());
    std::mem::take(raw)
        .into_iter()
        .filter_map(|op| base_operation(v, &op, base, &mut listed))
        .collect()
}

fn base_operation(
    v: &mut Validator,
    s: &Spanned<RawOperation>,
    base: &Base,
    listed: &mut HashMap<String, Span>,
) -> Option<Checked> {
    let raw = &s.value;
    let at = span(s);
    let before = v.findings.errors();
    refuse_inline_keys(v, raw, at);
    let Exposed {
        name,
        found,
        method,
        object,
    } = find_base(v, raw, at, base, listed)?;
    let id = base_id(v, raw, name, found, at);
    let (summary, description) = base_text(v, raw, found, object);

    let shown = id.as_deref().unwrap_or_else(|| name.value.trim());
    let safety = safety(v, raw, shown, method == Method::Get);
    let idempotency = base_idempotency(
        v,
        id.as_deref().unwrap_or_default(),
        safety.idempotency.clone(),
        &base_candidates(base, &found.path, object),
        needs_idempotency_key(method, safety.spends_or_async()),
        raw.idempotency.as_deref().map_or(at, span),
    );
    // As inline, but the HTTP parts are the base document's: findings about them
    // point at `operation:`, where an override would go.
    let origin = Origin {
        path: span(name),
        summary: raw.summary.as_ref().map_or(span(name), span),
        description: raw.description.as_ref().map_or(span(name), span),
        description_from_base: raw.description.is_none(),
        input: None,
        output: None,
        query: Vec::new(),
        ..origin(s)
    };
    let path_params = template_params(&found.path);
    if v.findings.errors() > before {
        return id.map(|id| {
            let head = Head {
                id,
                method,
                path: found.path.clone(),
                path_params,
                origin,
            };
            Checked::new(operation(head, None), s)
        });
    }

    let idempotency = idempotency?;
    let mut http = object.clone();
    // The provider calls these back; an agent receives no calls, as with `webhooks`.
    http.remove("callbacks");
    if let Some(key) = idempotency.key().filter(|k| k.added) {
        let parameters = http
            .entry("parameters")
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(list) = parameters {
            list.push(idempotency_parameter(key.required));
        }
    }
    let head = Head {
        id: id?,
        method,
        path: found.path.clone(),
        path_params,
        origin,
    };
    let body = Body {
        summary: summary?,
        description: description?,
        http,
        safety,
        idempotency,
    };
    Some(Checked::new(operation(head, Some(body)), s))
}

/// The keys an inline operation writes, which the base document says here: each is
/// refused where it is written.
fn refuse_inline_keys(v: &mut Validator, raw: &RawOperation, at: Span) {
    let inline_keys = [
        ("method", raw.method.as_ref().map(span)),
        ("path", raw.path.as_ref().map(span)),
        ("input", raw.input.as_ref().map(span)),
        ("output", raw.output.as_ref().map(span)),
        ("query", first_or(raw.query.as_ref(), at)),
        ("inputType", raw.input_type.as_ref().map(span)),
        ("inputRequired", raw.input_required.as_ref().map(span)),
        ("status", raw.status.as_ref().map(span)),
        ("outputType", raw.output_type.as_ref().map(span)),
        ("params", first_or(raw.params.as_ref(), at)),
        ("headers", first_or(raw.headers.as_ref(), at)),
        ("deprecated", raw.deprecated.as_ref().map(span)),
        ("tags", first_or(raw.tags.as_ref(), at)),
        ("openapi", raw.openapi.as_deref().map(span)),
    ];
    for (key, place) in inline_keys {
        if let Some(place) = place {
            v.findings
                .push(Diagnostic::InlineKeyWithBase { key, span: place });
        }
    }
}

/// The base operation `operation:` names, once it is found, named once, listed once,
/// with a method 3.1 has and parameters a client can send (each problem reported).
fn find_base<'a, 'b>(
    v: &mut Validator,
    raw: &'a RawOperation,
    at: Span,
    base: &'b Base,
    listed: &mut HashMap<String, Span>,
) -> Option<Exposed<'a, 'b>> {
    let Some(name) = &raw.operation else {
        missing(
            v,
            "operation",
            "an operation",
            at,
            "name the base operation it exposes: `operation: createThing` (its operationId) or `operation: \"POST /v1/things\"`",
        );
        return None;
    };
    if let Some((by_id, by_route)) = base.ambiguous(&name.value) {
        v.findings.push(ambiguous(name, by_id, by_route));
        return None;
    }
    if let Some((route, _, _)) = base.only_in_32.iter().find(|(route, id, _)| {
        id.as_deref() == Some(name.value.trim()) || same_route(route, &name.value)
    }) {
        let named = if same_route(route, &name.value) {
            format!("`{}`", route.escape_debug())
        } else {
            format!("`{}` (`{}`)", name.value.trim(), route.escape_debug())
        };
        let construct = if route.starts_with("QUERY ") {
            "the `query` method"
        } else {
            "an `additionalOperations` method"
        };
        v.findings.push(Diagnostic::Openapi32Unsupported {
            what: format!(
                "the operation {named} uses {construct}, which OpenAPI 3.1 (every output) cannot express"
            ),
            span: span(name),
            help: "leave it out of `operations`, or expose another route of the provider that makes the same request with a method 3.1 has (GET, POST, PUT, PATCH, DELETE)".to_string(),
        });
        return None;
    }
    let Some(found) = base.find(&name.value) else {
        let known = base
            .operations
            .iter()
            .flat_map(|o| o.operation_id.clone().into_iter().chain([o.route()]))
            .collect::<Vec<_>>();
        v.findings.push(Diagnostic::UnknownBaseOperation {
            name: name.value.clone(),
            span: span(name),
            help: suggest(name.value.trim(), known.iter().map(String::as_str)),
        });
        return None;
    };
    let pointer = found.pointer();
    if let Some(reason) = found.path_problem() {
        // Markdown quotes the path in a code span: a newline or a backtick in it
        // would let the base document write its own headings into llms.txt.
        v.findings.push_base(Diagnostic::InvalidBasePath {
            path: found.path.escape_debug().to_string(),
            reason,
            span: base.span(&format!("/paths/{}", escape(&found.path))),
        });
        return None;
    }
    if let Some(first) = listed.get(&pointer) {
        v.findings.push(Diagnostic::OperationListedTwice {
            name: name.value.trim().to_string(),
            span: span(name),
            first: *first,
        });
        return None;
    }
    listed.insert(pointer.clone(), span(name));
    let Some(method) = Method::named(found.method) else {
        v.findings.push(Diagnostic::UnsupportedMethod {
            name: name.value.trim().to_string(),
            method: found.method.to_ascii_uppercase(),
            span: span(name),
        });
        return None;
    };
    let Some(object) = base.get(&pointer).and_then(Value::as_object) else {
        v.findings.push_base(Diagnostic::BaseSyntax {
            message: format!("the operation `{}` is not a mapping", found.route()),
            span: base.span(&pointer),
        });
        return None;
    };

    for (pointer, reason) in parameter_problems(base, &found.path, &pointer, object) {
        v.findings.push_base(Diagnostic::InvalidBaseParameter {
            route: found.route(),
            reason,
            span: base.span(&pointer),
        });
    }
    Some(Exposed {
        name,
        found,
        method,
        object,
    })
}

/// The entry's id: `id:` when written, else the base operationId (`None` when
/// reported).
fn base_id(
    v: &mut Validator,
    raw: &RawOperation,
    name: &Spanned<String>,
    found: &BaseOperation,
    at: Span,
) -> Option<String> {
    match (&raw.id, &found.operation_id) {
        (Some(id), _) if !is_identifier(&id.value) => {
            v.findings.push(Diagnostic::InvalidOperationId {
                id: id.value.clone(),
                span: span(id),
            });
            None
        }
        (Some(id), _) => Some(id.value.clone()),
        (None, Some(base_id)) if !is_identifier(base_id) => {
            v.findings.push(Diagnostic::IdNotForTarget {
                id: base_id.clone(),
                by: "by agents".to_string(),
                reason: "agent-facing ids are 1 to 128 letters, digits, `_`, `.` or `-`"
                    .to_string(),
                span: span(name),
                help: "the id comes from the base document's operationId: set `id:` on this entry, e.g. `id: createThing`".to_string(),
            });
            None
        }
        (None, Some(base_id)) => Some(base_id.clone()),
        (None, None) => {
            missing(
                v,
                "id",
                "an operation",
                at,
                "this base operation has no operationId: add `id: someName`, the name the model calls it by",
            );
            None
        }
    }
}

/// The summary and description: the author's when written, else the base's (a long
/// `summary` is the description, and its first sentence the summary).
fn base_text(
    v: &mut Validator,
    raw: &RawOperation,
    found: &BaseOperation,
    object: &Map<String, Value>,
) -> (Option<String>, Option<String>) {
    let text = |key: &str| {
        object
            .get(key)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|t| !t.is_empty())
    };
    // Some documents keep the long text in `summary` and have no `description`.
    let short_summary = text("summary").filter(|s| is_short(s));
    let summary = match &raw.summary {
        Some(s) => non_empty(
            v,
            s,
            "summary",
            "write a short summary, or remove `summary` to use the base document's",
        ),
        None => Some(
            short_summary
                .map(plain)
                .or_else(|| text("summary").or(text("description")).map(first_sentence))
                .unwrap_or_else(|| found.route()),
        ),
    };
    let description = match &raw.description {
        Some(d) => non_empty(
            v,
            d,
            "description",
            "say what the call does and what it will not do, or remove `description` to use the base document's",
        ),
        None => Some(
            text("description")
                .or_else(|| text("summary").filter(|s| !is_short(s)))
                .unwrap_or_default()
                .to_string(),
        ),
    };
    (summary, description)
}

/// The parameters of an operation (its path item's shared ones, then its own, each
/// through its `$ref`) that have no non-empty `name`, no `in` a parameter can have, or
/// repeat a name and location in the same list: (pointer, reason) for each.
fn parameter_problems(
    base: &Base,
    path: &str,
    pointer: &str,
    op: &Map<String, Value>,
) -> Vec<(String, String)> {
    let item = base.path_item(path).and_then(|item| item.get("parameters"));
    let lists = [
        (format!("/paths/{}/parameters", escape(path)), item),
        (format!("{pointer}/parameters"), op.get("parameters")),
    ];
    let mut out = Vec::new();
    for (at, list) in lists {
        let Some(list) = list else { continue };
        let Some(list) = list.as_array() else {
            out.push((at, "`parameters` is not a list".to_string()));
            continue;
        };
        let mut seen: HashSet<(String, &str)> = HashSet::new();
        for (i, p) in list.iter().enumerate() {
            let at = format!("{at}/{i}");
            let p = match p.get("$ref").and_then(Value::as_str) {
                // An unresolved reference is reported where references are checked.
                Some(reference) => match base.resolve(reference) {
                    Some(target) => target,
                    None => continue,
                },
                None => p,
            };
            let name = p.get("name").and_then(Value::as_str).map(str::trim);
            let location = p.get("in").and_then(Value::as_str);
            let reason = match (name, location) {
                (None | Some(""), Some(l)) => Some(format!("a {l} parameter has no `name`")),
                (None | Some(""), None) => {
                    Some("a parameter has no `name` and no `in`".to_string())
                }
                (Some(n), Some(l @ ("path" | "query" | "header" | "cookie"))) => {
                    // Header names compare without case.
                    let key = if l == "header" {
                        n.to_ascii_lowercase()
                    } else {
                        n.to_string()
                    };
                    (!seen.insert((key, l)))
                        .then(|| format!("the {l} parameter `{n}` is declared twice"))
                }
                (Some(n), Some("querystring")) => Some(format!(
                    "the parameter `{n}` is `in: querystring` (OpenAPI 3.2: the whole query string as one value), which OpenAPI 3.1 (every output) cannot express"
                )),
                (Some(n), Some(l)) => Some(format!(
                    "the parameter `{n}` is `in: {l}`, which is not path, query, header or cookie"
                )),
                (Some(n), None) => Some(format!("the parameter `{n}` has no `in`")),
            };
            out.extend(reason.map(|r| (at, r)));
        }
    }
    out
}

/// `operation:` names one operation by its operationId and another by its route.
fn ambiguous(
    name: &Spanned<String>,
    by_id: &crate::base::BaseOperation,
    by_route: &crate::base::BaseOperation,
) -> Diagnostic {
    let route = by_route.route();
    let other_name = match &by_route.operation_id {
        Some(id) => format!("`operation: {id}` (its operationId)"),
        None => {
            "no name: it has no operationId, and its route is taken; give it one in the document"
                .to_string()
        }
    };
    Diagnostic::AmbiguousBaseOperation {
        name: name.value.trim().to_string(),
        by_id: by_id.route(),
        by_route: route,
        span: span(name),
        help: format!(
            "name the one you mean by a name only it has: for `{}`, `operation: \"{}\"` (its route); for `{}`, {other_name}",
            by_id.route(),
            by_id.route(),
            by_route.route(),
        ),
    }
}

/// The `{name}` segments of a path template, in order, as written.
fn template_params(path: &str) -> Vec<String> {
    path.split('{')
        .skip(1)
        .filter_map(|rest| rest.split_once('}').map(|(name, _)| name.to_string()))
        .collect()
}

/// Longest summary used as it is; a longer one is the operation's text, not its summary.
const SUMMARY_MAX: usize = 120;

fn is_short(text: &str) -> bool {
    let text = plain(text);
    text.chars().count() <= SUMMARY_MAX && crate::english::sentences(&text).len() <= 1
}

/// The text without HTML tags (Stripe writes `<p>…</p>`), on one line. A `<` opens a
/// tag only before a letter, `/` or `!`: "count < 10" is text.
fn plain(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_tag = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let opens = c == '<'
            && !in_tag
            && chars
                .peek()
                .is_some_and(|n| n.is_ascii_alphabetic() || matches!(n, '/' | '!'));
        match c {
            '<' if opens => in_tag = true,
            '>' if in_tag => {
                in_tag = false;
                out.push(' ');
            }
            _ if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The first sentence of a text, as a summary of last resort (without its full stop,
/// and clipped at a word).
fn first_sentence(text: &str) -> String {
    let text = plain(text);
    let first = crate::english::sentences(&text)
        .first()
        .map_or(String::new(), |s| s.trim_end_matches('.').to_string());
    crate::english::clip(&first, SUMMARY_MAX)
}

/// Whether `name` ("query /search") is `route` ("QUERY /search"): the method in any
/// case, the path as written.
fn same_route(route: &str, name: &str) -> bool {
    let split = |t: &str| {
        t.trim()
            .split_once(char::is_whitespace)
            .map(|(m, p)| (m.to_string(), p.trim().to_string()))
    };
    match (split(route), split(name)) {
        (Some((m1, p1)), Some((m2, p2))) => m1.eq_ignore_ascii_case(&m2) && p1 == p2,
        _ => false,
    }
}

/// Where a list key is: its first item, else the operation (an empty list).
fn first_or<T>(list: Option<&Vec<Spanned<T>>>, at: Span) -> Option<Span> {
    list.map(|l| l.first().map_or(at, span))
}

#[cfg(test)]
mod tests {
    use super::plain;

    #[test]
    fn plain_strips_tags_but_keeps_comparisons() {
        assert_eq!(plain("<p>Lists <b>all</b> items.</p>"), "Lists all items.");
        assert_eq!(
            plain("Items with count < 10 and size <= 3."),
            "Items with count < 10 and size <= 3."
        );
        assert_eq!(plain("a <!-- note --> b"), "a b");
        assert_eq!(plain("x <5 y"), "x <5 y");
    }
}
