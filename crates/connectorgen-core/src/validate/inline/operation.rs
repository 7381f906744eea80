//! One inline operation: its fields checked, its defaults applied, lowered to an
//! OpenAPI Operation Object (`lower.rs`).
//!
//! Takes: a raw operation, by value: its JSON Schemas are moved into the model, and
//! the rest is dropped once it is checked (the spans the model needs are copied into
//! its `Origin`). Returns (through `Validator`): the operation model and every
//! problem in it; cross-operation checks (ids, routes) are in `mod.rs`, poll targets in
//! `safety/jobs.rs`. The safety-layer keys (`spends`, `async`, `confirm`, `idempotency`,
//! `lintAllow`) are read by `safety/`, as for base-mode operations, which also builds
//! the `Operation`.
//! Must never: copy a schema out of the manifest (it is moved), or lower an operation
//! that had a problem (a placeholder stands in for the cross-operation checks).

use serde_saphyr::Spanned;

use super::http::Location;
use super::http::refs;
use crate::diagnostics::{Diagnostic, suggest};
use crate::lower::{self, Param};
use crate::manifest::{RawEntry, RawOperation, span, span_of};
use crate::model::{Idempotency, Method, Names as _, Origin};
use crate::validate::context::{Checked, Validator};
use crate::validate::context::{missing, non_empty, text};
use crate::validate::inline::fragment::merged_fragment;
use crate::validate::inline::http::{fragment, media_type, parameters, status};
use crate::validate::inline::schemas::check_schema;
use crate::validate::safety::idempotency::declare_key;
use crate::validate::safety::safety;
use crate::validate::safety::{Body, Head, inline_idempotency, operation, origin};
use crate::validate::syntax::{is_identifier, parse_path};

/// The default media type of bodies.
const JSON: &str = "application/json";

/// An inline operation's plain HTTP keys, checked.
struct HttpKeys {
    input_type: Option<String>,
    input_required: bool,
    output_type: Option<String>,
    status: u16,
    deprecated: bool,
    tags: Vec<String>,
}

/// An operation with problems: still handed back with what cross-operation checks need
/// (id, method, path, and whether it spends or polls) so one bad field does not hide a
/// duplicate id, a duplicate route or an unsafe poll target elsewhere.
fn placeholder(
    id: Option<String>,
    method: Option<Method>,
    path: Option<(String, Vec<String>)>,
    origin: Origin,
    s: &Spanned<RawOperation>,
) -> Option<Checked> {
    let (Some(id), Some(method), Some((path, path_params))) = (id, method, path) else {
        return None;
    };
    let head = Head {
        id,
        method,
        path,
        path_params,
        origin,
    };
    Some(Checked::new(operation(head, None), s))
}

/// The keys that name and describe an inline operation, checked (`None` when reported).
struct Named {
    id: Option<String>,
    method: Option<Method>,
    /// The path and its `{name}` parameters in order.
    path: Option<(String, Vec<String>)>,
    summary: Option<String>,
    description: Option<String>,
}

/// The JSON Schemas taken out of an inline operation, checked (`None` when reported).
struct Taken {
    input: Option<serde_json::Value>,
    output: Option<serde_json::Value>,
    params: Option<Vec<Param>>,
    query: Option<Vec<Param>>,
    headers: Option<Vec<Param>>,
    fragment: Option<serde_json::Map<String, serde_json::Value>>,
}

/// References in the author's schemas must resolve against `schemas:`.
fn schema_refs(v: &mut Validator, raw: &RawOperation, taken: &Taken) {
    let shared = &v.settings.shared;
    let schemas = [
        (taken.input.as_ref(), raw.input.as_ref().map(span)),
        (taken.output.as_ref(), raw.output.as_ref().map(span)),
    ];
    for (schema, at) in schemas {
        if let (Some(schema), Some(at)) = (schema, at) {
            refs(&mut v.findings, schema, shared, at);
        }
    }
    let lists = [&taken.params, &taken.query, &taken.headers];
    let raws = [&raw.params, &raw.query, &raw.headers];
    for (list, raw_list) in lists.into_iter().zip(raws) {
        for (p, r) in list.iter().flatten().zip(raw_list.iter().flatten()) {
            refs(&mut v.findings, &p.schema, shared, span(r));
        }
    }
}

/// Every inline operation that has a usable id, method and path. The entries are taken
/// out of `raw` and each is dropped once checked (`Checked`).
pub(in crate::validate) fn inline_operations(
    v: &mut Validator,
    raw: &mut Vec<RawEntry>,
) -> Vec<Checked> {
    std::mem::take(raw)
        .into_iter()
        .filter_map(|op| inline_operation(v, op))
        .collect()
}

/// One inline operation: its keys checked, its schemas taken out of the manifest, its
/// Operation Object generated, and the model `Operation` built by `safety/`. `None`
/// when it lacks a usable id, method or path (each reported).
fn inline_operation(v: &mut Validator, mut s: RawEntry) -> Option<Checked> {
    let before = v.findings.errors();
    let Named {
        id,
        method,
        path,
        summary,
        description,
    } = named(v, &s);
    // The schemas are moved into the model, not copied; the rest of the entry is
    // dropped when this function returns.
    let template: &[String] = path.as_ref().map_or(&[], |(_, p)| p.as_slice());
    let taken = take_schemas(v, &mut s.value, method, template);
    let s = &*s;
    let raw = &s.value;
    let at = span(s);
    let http_keys = http_keys(
        v,
        raw,
        method,
        taken.input.is_some(),
        taken.output.is_some(),
    );
    schema_refs(v, raw, &taken);
    let Taken {
        input,
        output,
        params,
        query,
        headers,
        fragment,
    } = taken;

    // An id that is missing or unusable has its own finding; name it as written.
    let name = raw.id.as_ref().map_or("", |i| i.value.trim());
    let safety = safety(v, raw, name, method == Some(Method::Get));
    let origin = origin(s);

    if v.findings.errors() > before {
        return placeholder(id, method, path, origin, s);
    }
    let (path, path_params) = path?;
    let method = method?;
    let http_keys = http_keys?;
    let (idempotency, short) = inline_idempotency(
        safety.idempotency.clone().flatten(),
        method,
        safety.spends_or_async(),
    );
    let input = match (input, &http_keys.input_type) {
        (Some(input), _) => Some(input),
        (None, Some(media)) => Some(lower::default_schema(media)),
        (None, None) => None,
    };
    let mut http = lower::operation(
        lower::Inline {
            path_params: &path_params,
            params: params?,
            query: query?,
            headers: headers?,
            input,
            input_type: http_keys.input_type.unwrap_or_else(|| JSON.to_string()),
            input_required: http_keys.input_required,
            output,
            output_type: http_keys.output_type.unwrap_or_else(|| JSON.to_string()),
            status: http_keys.status,
            // The `Idempotency-Key` header of the short forms; a named key is
            // declared below, unless the author wrote it.
            idempotency_key: idempotency.key().filter(|_| short).map(|k| k.required),
            returns: safety.returns(),
            deprecated: http_keys.deprecated,
            tags: http_keys.tags,
            fragment,
        },
        &v.settings.error_responses,
    );
    if let Some(fragment) = &raw.openapi {
        merged_fragment(v, &mut http, method, span(fragment));
    }
    let idempotency = match idempotency {
        Idempotency::Key(key) if !short => {
            let id = id.as_deref().unwrap_or_default();
            let span = raw.idempotency.as_deref().map_or(at, span);
            Idempotency::Key(declare_key(v, id, key, &mut http, span)?)
        }
        other => other,
    };
    let head = Head {
        id: id?,
        method,
        path,
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

/// The keys that name and describe an inline operation: id, method, path, summary,
/// description, each checked (`None` when reported).
fn named(v: &mut Validator, s: &Spanned<RawOperation>) -> Named {
    let at = span(s);
    let raw = &s.value;
    let ctx = "an operation";
    if let Some(name) = &raw.operation {
        v.findings
            .push(Diagnostic::OperationWithoutBase { span: span(name) });
    }
    let id = match &raw.id {
        None => {
            missing(
                v,
                "id",
                ctx,
                at,
                "add `id: someName` (the operationId the model calls)",
            );
            None
        }
        Some(id) if !is_identifier(&id.value) => {
            v.findings.push(Diagnostic::InvalidOperationId {
                id: id.value.clone(),
                span: span(id),
            });
            None
        }
        Some(id) => Some(id.value.clone()),
    };

    let method = match &raw.method {
        None => {
            missing(
                v,
                "method",
                ctx,
                at,
                "add `method: get` (or post, put, patch, delete)",
            );
            None
        }
        Some(m) => {
            let lower = m.value.trim().to_ascii_lowercase();
            if let Some(method) = Method::named(&lower) {
                Some(method)
            } else {
                v.findings.push(Diagnostic::UnknownMethod {
                    method: m.value.clone(),
                    span: span(m),
                    help: suggest(&lower, Method::names()),
                });
                None
            }
        }
    };

    let path = match &raw.path {
        None => {
            missing(
                v,
                "path",
                ctx,
                at,
                "add `path: /v1/things` (it starts with `/`)",
            );
            None
        }
        Some(p) => match parse_path(&p.value) {
            Ok(params) => Some((p.value.clone(), params)),
            Err(reason) => {
                v.findings.push(Diagnostic::InvalidPath {
                    path: p.value.clone(),
                    reason,
                    span: span(p),
                });
                None
            }
        },
    };

    let summary = text(
        v,
        raw.summary.as_ref(),
        "summary",
        ctx,
        at,
        "write a short, specific summary, e.g. \"Generate a video from a prompt\"",
    );
    let description = text(
        v,
        raw.description.as_ref(),
        "description",
        ctx,
        at,
        "say what the call does and what it will not do, e.g. \"Read-only. This cannot move funds.\"",
    );
    Named {
        id,
        method,
        path,
        summary,
        description,
    }
}

/// The JSON Schemas of an inline operation (its body, its response, its parameters'
/// and its `openapi:` fragment), each checked and taken out of `raw`, whose spans stay.
fn take_schemas(
    v: &mut Validator,
    raw: &mut RawOperation,
    method: Option<Method>,
    template: &[String],
) -> Taken {
    if let (Some(input), Some(m @ (Method::Get | Method::Delete))) = (&raw.input, method) {
        v.findings.push(Diagnostic::InputNotAllowed {
            key: "input",
            method: m.as_str().to_string(),
            span: span(input),
        });
    }
    let input = raw.input.as_mut().and_then(|i| take_schema(v, i, "input"));
    let output = raw
        .output
        .as_mut()
        .and_then(|o| take_schema(v, o, "output"));
    let api_key = v.settings.api_key_header.clone();
    let params = parameters(
        v,
        raw.params.as_deref_mut().unwrap_or_default(),
        Location::Path,
        template,
        None,
    );
    let query = parameters(
        v,
        raw.query.as_deref_mut().unwrap_or_default(),
        Location::Query,
        template,
        None,
    );
    let headers = parameters(
        v,
        raw.headers.as_deref_mut().unwrap_or_default(),
        Location::Header,
        template,
        api_key.as_deref(),
    );
    let fragment = raw
        .openapi
        .as_mut()
        .and_then(|f| fragment(v, f, template, api_key.as_deref()));
    Taken {
        input,
        output,
        params,
        query,
        headers,
        fragment,
    }
}

/// The plain HTTP keys of an inline operation: media types, status, deprecation,
/// tags. `has_input`/`has_output` say whether `input`/`output` were given.
fn http_keys(
    v: &mut Validator,
    raw: &RawOperation,
    method: Option<Method>,
    has_input: bool,
    has_output: bool,
) -> Option<HttpKeys> {
    let before = v.findings.errors();
    let input_type = raw
        .input_type
        .as_ref()
        .and_then(|t| media_type(v, t, "inputType"));
    let body_refused = matches!(method, Some(Method::Get | Method::Delete));
    if let (Some(t), Some(m), true) = (&raw.input_type, method, body_refused) {
        v.findings.push(Diagnostic::InputNotAllowed {
            key: "inputType",
            method: m.as_str().to_string(),
            span: span(t),
        });
    }
    // On a get or delete the body itself is refused above: asking for its `input`
    // as well would contradict that finding.
    if let (Some(media), false, false) = (&input_type, has_input, body_refused)
        && lower::is_structured(media)
    {
        missing(
            v,
            "input",
            "an operation",
            raw.input_type.as_ref().map_or((0, 0).into(), span),
            "a JSON, form or multipart body needs `input`: the JSON Schema of its fields",
        );
    }
    let output_type = raw
        .output_type
        .as_ref()
        .and_then(|t| media_type(v, t, "outputType"));
    let status = match &raw.status {
        Some(s) => status(v, s),
        None => Some(200),
    };
    if let (Some(204), true) = (status, has_output) {
        v.findings.push(Diagnostic::InvalidStatus {
            status: "204".to_string(),
            expected: "a status whose response has a body; 204 (No Content) has none: remove `output`, or answer 200",
            span: raw.status.as_ref().map_or((0, 0).into(), span),
        });
    }
    let tags = raw
        .tags
        .iter()
        .flatten()
        .filter_map(|t| non_empty(v, t, "tags", "name the tag, or remove it"))
        .collect();
    (v.findings.errors() == before).then_some(HttpKeys {
        input_type: raw.input_type.as_ref().and(input_type),
        input_required: raw.input_required.as_ref().is_none_or(|r| r.value),
        output_type: raw.output_type.as_ref().and(output_type),
        status: status.unwrap_or(200),
        deprecated: raw.deprecated.as_ref().is_some_and(|d| d.value),
        tags,
    })
}

/// The schema, taken out of `s` (which keeps its span) when it is one.
pub(in crate::validate) fn take_schema(
    v: &mut Validator,
    s: &mut Spanned<serde_json::Value>,
    key: &'static str,
) -> Option<serde_json::Value> {
    match &s.value {
        serde_json::Value::Object(_) | serde_json::Value::Bool(_) => {
            // Checked where it is defined: a schema reused through a YAML alias is
            // one schema, reported once.
            if !v.checked.contains(&span_of(&s.defined).offset()) {
                v.checked.insert(span_of(&s.defined).offset());
                check_schema(v, &s.value, key, span_of(&s.defined));
            }
            Some(std::mem::take(&mut s.value))
        }
        _ => {
            v.findings
                .push(Diagnostic::InvalidSchema { key, span: span(s) });
            None
        }
    }
}
