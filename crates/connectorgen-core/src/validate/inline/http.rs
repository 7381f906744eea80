//! The HTTP keys of inline operations: parameters of every location, media types,
//! statuses, the `openapi:` fragment, and `$ref`s into `schemas:`.
//!
//! Takes: raw values of one inline operation (JSON Schemas are moved out, as elsewhere).
//! Returns (through `Validator`): checked values for `lower.rs`, and a problem for every
//! HTTP construct a client would get wrong: a style the location does not allow,
//! `explode` on a scalar, a header connectorgen generates itself, a media type that is
//! not `type/subtype`, a non-2xx success status, a reference that points nowhere.
//! Must never: let through an operation whose generated request differs from what the
//! author wrote; every rule here exists because a client built from openapi.json would
//! otherwise send the wrong bytes.

// The manifest's own names: foldhash (connectorgen-core's Cargo.toml says why that is safe).
use foldhash::{HashSet, HashSetExt as _};

use serde_json::{Map, Value};
use serde_saphyr::Spanned;

use crate::diagnostics::{Diagnostic, Span, suggest};
use crate::lower::Param;
use crate::manifest::{RawQueryParam, span};
use crate::model::{HINT_KEYS, IDEMPOTENCY_HEADER};
use crate::validate::context::Validator;
use crate::validate::context::{missing, non_empty};
use crate::validate::findings::Findings;
use crate::validate::inline::operation::take_schema;

/// Where a parameter goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Location {
    Path,
    Query,
    Header,
}

impl Location {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Location::Path => "path",
            Location::Query => "query",
            Location::Header => "header",
        }
    }

    /// The styles OpenAPI allows here; the first is the default.
    fn styles(self) -> &'static [&'static str] {
        match self {
            Location::Path => &["simple", "label", "matrix"],
            Location::Query => &["form", "spaceDelimited", "pipeDelimited", "deepObject"],
            Location::Header => &["simple"],
        }
    }

    /// How the manifest names the list the parameter is in.
    fn key(self) -> &'static str {
        match self {
            Location::Path => "params",
            Location::Query => "query",
            Location::Header => "headers",
        }
    }
}

/// Header parameters a client sets itself or connectorgen generates: declaring them
/// would make a client send them twice, or send a different value.
const RESERVED_HEADERS: [&str; 4] = [
    "Authorization",
    "Content-Type",
    "Accept",
    IDEMPOTENCY_HEADER,
];

/// Operation Object keys an `openapi:` fragment may set.
const FRAGMENT_KEYS: [&str; 9] = [
    "tags",
    "externalDocs",
    "parameters",
    "requestBody",
    "responses",
    "callbacks",
    "deprecated",
    "security",
    "servers",
];

/// Keys connectorgen writes itself, besides the safety hints (`model::HINT_KEYS`), which
/// a fragment may not replace.
const OWNED_KEYS: [&str; 3] = ["operationId", "summary", "description"];

/// One list of parameters (`params`, `query` or `headers`), checked. `path` holds
/// the path template's parameter names; `reserved` more header names to refuse (the
/// API key's).
pub(in crate::validate) fn parameters(
    v: &mut Validator,
    raw: &mut [Spanned<RawQueryParam>],
    location: Location,
    path: &[String],
    reserved: Option<&str>,
) -> Option<Vec<Param>> {
    let before = v.findings.errors();
    let mut seen: HashSet<String> = HashSet::new();
    let mut out = Vec::with_capacity(raw.len());
    for q in raw {
        let at = span(q);
        let what = match location {
            Location::Path => "a path parameter",
            Location::Query => "a query parameter",
            Location::Header => "a header parameter",
        };
        let Some(name) = &q.value.name else {
            missing(v, "name", what, at, "add `name: …`");
            continue;
        };
        let n = name.value.as_str();
        let reason = name_problem(n, location, path, reserved, &mut seen);
        if let Some(reason) = reason {
            let d = match location {
                Location::Query => Diagnostic::InvalidQueryParameter {
                    name: n.to_string(),
                    reason,
                    span: span(name),
                },
                _ => Diagnostic::InvalidParameter {
                    location: location.as_str(),
                    name: n.to_string(),
                    reason,
                    span: span(name),
                },
            };
            v.findings.push(d);
        }
        let description = q.value.description.as_ref().and_then(|d| {
            non_empty(
                v,
                d,
                "description",
                "describe the parameter, or remove `description`",
            )
        });
        let required = match (location, q.value.required) {
            (Location::Path, Some(false)) => {
                v.findings.push(Diagnostic::InvalidParameter {
                    location: "path",
                    name: n.to_string(),
                    reason: "a path parameter is always required; remove `required: false`"
                        .to_string(),
                    span: at,
                });
                true
            }
            (Location::Path, _) => true,
            (_, r) => r.unwrap_or(false),
        };
        let schema = match &mut q.value.schema {
            Some(s) => take_schema(v, s, "schema"),
            None => Some(serde_json::json!({ "type": "string" })),
        };
        let style = q.value.style.as_ref().map(|s| s.value.trim().to_string());
        let explode = q.value.explode.as_ref().map(|e| e.value);
        if let Some(schema) = &schema {
            check_style(v, q, location, schema, n);
        }
        if let Some(schema) = schema {
            out.push(Param {
                name: n.to_string(),
                location: location.as_str(),
                description,
                required,
                style,
                explode,
                schema,
            });
        }
    }
    (v.findings.errors() == before).then_some(out)
}

/// What is wrong with one parameter's name, if anything: its characters, a second
/// declaration (`seen` holds the names so far), a path without it, a reserved header.
fn name_problem(
    n: &str,
    location: Location,
    path: &[String],
    reserved: Option<&str>,
    seen: &mut HashSet<String>,
) -> Option<String> {
    let key = match location {
        // Header names compare without case.
        Location::Header => n.to_ascii_lowercase(),
        _ => n.to_string(),
    };
    if n.is_empty() {
        Some("the name is empty".to_string())
    } else if location == Location::Header
        && !n
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c))
    {
        Some("a header name is letters, digits and `!#$%&'*+-.^_`|~`".to_string())
    } else if location != Location::Header
        && !n
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
    {
        Some("the name has characters other than letters, digits, `_`, `-` or `.`".to_string())
    } else if !seen.insert(key) {
        Some("declared twice in this operation".to_string())
    } else if location == Location::Path && !path.iter().any(|p| p == n) {
        Some(format!(
            "the path has no `{{{n}}}`; {}",
            suggest(n, path.iter().map(String::as_str))
        ))
    } else if location == Location::Header
        && let Some(r) = RESERVED_HEADERS
            .iter()
            .copied()
            .chain(reserved)
            .find(|r| r.eq_ignore_ascii_case(n))
    {
        Some(format!(
            "`{r}` is sent by the client or generated by connectorgen; remove it"
        ))
    } else {
        None
    }
}

/// `style` must be one the location allows and fit the schema; `explode` needs a list
/// or an object to mean anything.
fn check_style(
    v: &mut Validator,
    q: &Spanned<RawQueryParam>,
    location: Location,
    schema: &Value,
    name: &str,
) {
    let kind = schema_kind(schema);
    if let Some(style) = &q.value.style {
        let value = style.value.trim();
        let reason = if !location.styles().contains(&value) {
            Some(format!(
                "`{value}` is not a style for {} parameters; {}",
                location.as_str(),
                suggest(value, location.styles().iter().copied())
            ))
        } else if matches!(value, "deepObject" | "spaceDelimited" | "pipeDelimited")
            && !matches!(kind, Some("array" | "object"))
        {
            Some(format!(
                "`{value}` needs a list (`type: array`) or object schema"
            ))
        } else {
            None
        };
        if let Some(reason) = reason {
            v.findings.push(Diagnostic::InvalidStyle {
                name: name.to_string(),
                key: location.key(),
                reason,
                span: span(style),
            });
        }
    }
    if let Some(explode) = &q.value.explode
        && !matches!(kind, Some("array" | "object"))
    {
        v.findings.push(Diagnostic::InvalidStyle {
            name: name.to_string(),
            key: location.key(),
            reason: "`explode` only changes how a list or an object is sent; give the parameter a `type: array` or `type: object` schema, or remove `explode`".to_string(),
            span: span(explode),
        });
    }
}

/// A media type as written: `type/subtype`, with optional parameters.
pub(in crate::validate) fn media_type(
    v: &mut Validator,
    raw: &Spanned<String>,
    key: &'static str,
) -> Option<String> {
    let value = raw.value.trim();
    let essence = value.split(';').next().unwrap_or_default().trim();
    let token = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "!#$&-^_.+".contains(c))
    };
    let valid = match essence.split_once('/') {
        Some((t, sub)) => token(t) && token(sub),
        None => false,
    };
    if valid {
        Some(value.to_string())
    } else {
        v.findings.push(Diagnostic::InvalidMediaType {
            key,
            value: raw.value.clone(),
            span: span(raw),
        });
        None
    }
}

/// The success status: 2xx.
pub(in crate::validate) fn status(v: &mut Validator, raw: &Spanned<i64>) -> Option<u16> {
    if let Ok(code @ 200..=299) = u16::try_from(raw.value) {
        Some(code)
    } else {
        v.findings.push(Diagnostic::InvalidStatus {
            status: raw.value.to_string(),
            expected: "a success status, 200 to 299",
            span: span(raw),
        });
        None
    }
}

/// The `openapi:` fragment of an inline operation: a mapping of Operation Object
/// fields connectorgen does not own. Its `parameters` are merged into the generated
/// ones by name and location (`lower::operation`), so each must say both, and may not
/// declare what connectorgen generates (a header it sets, a path parameter the path
/// lacks). Its `$ref`s are kept to be resolved against the finished document.
pub(in crate::validate) fn fragment(
    v: &mut Validator,
    raw: &mut Spanned<Value>,
    template: &[String],
    api_key: Option<&str>,
) -> Option<Map<String, Value>> {
    let at = span(raw);
    let Value::Object(map) = std::mem::take(&mut raw.value) else {
        v.findings.push(Diagnostic::InvalidOpenapiFragment {
            key: String::new(),
            reason: "it must be a mapping of OpenAPI Operation Object fields".to_string(),
            span: at,
        });
        return None;
    };
    let before = v.findings.errors();
    let refuse = |v: &mut Validator, key: &str, reason: String| {
        v.findings.push(Diagnostic::InvalidOpenapiFragment {
            key: key.to_string(),
            reason,
            span: at,
        });
    };
    for key in map.keys() {
        if OWNED_KEYS.contains(&key.as_str()) || HINT_KEYS.contains(&key.as_str()) {
            refuse(
                v,
                key,
                format!(
                    "`{key}` is written by connectorgen from the manifest; set it there, not in the fragment"
                ),
            );
        } else if !key.starts_with("x-") && !FRAGMENT_KEYS.contains(&key.as_str()) {
            refuse(
                v,
                key,
                format!(
                    "`{key}` is not an OpenAPI Operation Object field; {}",
                    suggest(key, FRAGMENT_KEYS.iter().copied())
                ),
            );
        }
    }
    if let Some(parameters) = map.get("parameters") {
        for reason in fragment_parameter_problems(parameters, template, api_key) {
            refuse(v, "parameters", reason);
        }
    }
    let refs = &mut v.fragment_refs;
    each_ref_in(&map, &mut |reference| {
        refs.push((reference.to_string(), at));
    });
    (v.findings.errors() == before).then_some(map)
}

/// Every `$ref` in a schema the author wrote must point at one of `schemas:` (or
/// inside one): inside openapi.json nothing else resolves.
pub(in crate::validate) fn refs(
    findings: &mut Findings,
    schema: &Value,
    schemas: &Map<String, Value>,
    at: Span,
) {
    each_ref(schema, &mut |reference| {
        if let Some(reason) = unresolved(reference, schemas) {
            findings.push(Diagnostic::UnresolvedRef {
                reference: reference.to_string(),
                reason,
                span: at,
            });
        }
    });
}

/// Why a reference does not resolve against `schemas:`, if it does not.
fn unresolved(reference: &str, schemas: &Map<String, Value>) -> Option<String> {
    let Some(rest) = reference.strip_prefix("#/components/schemas/") else {
        return Some(
            "only `#/components/schemas/<name>` references resolve: write the shared schema under `schemas:` and point at it there".to_string(),
        );
    };
    let mut segments = rest.split('/');
    let name = crate::model::unescape(segments.next().unwrap_or_default());
    let Some(mut value) = schemas.get(&name) else {
        return Some(format!(
            "`schemas:` has no `{name}`; {}",
            suggest(&name, schemas.keys().map(String::as_str))
        ));
    };
    for segment in segments {
        let key = crate::model::unescape(segment);
        let next = match value {
            Value::Object(map) => map.get(&key),
            Value::Array(list) => key.parse::<usize>().ok().and_then(|i| list.get(i)),
            _ => None,
        };
        match next {
            Some(v) => value = v,
            None => return Some(format!("`{name}` has nothing at `{rest}`")),
        }
    }
    None
}

/// What a schema holds: its `type` when it is one name, or what its keywords imply; for
/// a union, a list or object when one of its branches is one (Stripe's `created` is an
/// object of bounds or a timestamp).
fn schema_kind(schema: &Value) -> Option<&str> {
    if let Some(branches) = ["anyOf", "oneOf"]
        .iter()
        .find_map(|k| schema.get(*k).and_then(Value::as_array))
    {
        let kinds: Vec<Option<&str>> = branches.iter().map(schema_kind).collect();
        return ["object", "array"]
            .into_iter()
            .find(|k| kinds.contains(&Some(*k)));
    }
    match schema.get("type") {
        Some(Value::String(t)) => Some(t.as_str()),
        Some(Value::Array(types)) => {
            let named: Vec<&str> = types
                .iter()
                .filter_map(Value::as_str)
                .filter(|t| *t != "null")
                .collect();
            match named.as_slice() {
                [one] => Some(one),
                _ => None,
            }
        }
        _ if schema.get("properties").is_some() => Some("object"),
        _ if schema.get("items").is_some() => Some("array"),
        // A reference's target is checked where it is written; trust its author here.
        _ if schema.get("$ref").is_some() => Some("object"),
        _ => None,
    }
}

/// What is wrong with the `parameters` of an `openapi:` fragment, one reason each.
fn fragment_parameter_problems(
    parameters: &Value,
    template: &[String],
    api_key: Option<&str>,
) -> Vec<String> {
    let Value::Array(list) = parameters else {
        return vec!["`parameters` must be a list of Parameter Objects".to_string()];
    };
    let mut out = Vec::new();
    for p in list {
        let name = p.get("name").and_then(Value::as_str);
        let location = p.get("in").and_then(Value::as_str);
        let (Some(name), Some(location @ ("path" | "query" | "header" | "cookie"))) =
            (name, location)
        else {
            out.push(
                "each parameter needs a `name` and an `in` (path, query, header or cookie): it is merged with the generated parameter of that name and location, or added"
                    .to_string(),
            );
            continue;
        };
        let reserved = RESERVED_HEADERS
            .iter()
            .copied()
            .chain(api_key)
            .any(|h| h.eq_ignore_ascii_case(name));
        if location == "header" && reserved {
            out.push(format!(
                "the `{name}` header is set by the client or by connectorgen, never declared as a parameter"
            ));
        }
        if location == "path" && !template.iter().any(|t| t == name) {
            out.push(format!(
                "the path has no `{{{name}}}`: a path parameter must name a segment of it"
            ));
        }
    }
    out
}

/// Calls `visit` with every `$ref` in a value, outside literal data (`example`,
/// `default`, …, which may hold anything, `$ref` keys included).
fn each_ref<'a>(value: &'a Value, visit: &mut dyn FnMut(&'a str)) {
    match value {
        Value::Object(map) => each_ref_in(map, visit),
        Value::Array(list) => list.iter().for_each(|v| each_ref(v, visit)),
        _ => {}
    }
}

/// `each_ref` over the values of a mapping.
fn each_ref_in<'a>(map: &'a Map<String, Value>, visit: &mut dyn FnMut(&'a str)) {
    for (key, value) in map {
        match (key.as_str(), value) {
            ("$ref", Value::String(reference)) => visit(reference),
            ("example" | "examples" | "default" | "const" | "enum", _) => {}
            _ => each_ref(value, visit),
        }
    }
}
