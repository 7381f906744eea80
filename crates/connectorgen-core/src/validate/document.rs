//! The manifest-wide keys that shape the HTTP document: `auth:`, and in inline mode
//! `schemas:`, `servers:`, `errors:` and `service.contact`/`license`.
//!
//! Takes: the raw keys (JSON Schemas are moved out). Returns (through `Validator`): the
//! credential as prose and the security scheme describe it, the shared schemas (their
//! references checked), the extra servers and the error model — or a problem for each
//! key that a client could not use. In base mode the provider's document says all of it,
//! so the inline-only keys are refused there.

use serde_json::{Map, Value};
use serde_saphyr::Spanned;

use super::context::Validator;
use super::inline::refs;
use crate::diagnostics::{Diagnostic, Span, suggest};
use crate::lower::Errors;
use crate::manifest::{RawAuth, RawErrors, RawManifest, RawServer, span};
use crate::model::{AUTH_SCHEMES, AuthScheme};
use crate::validate::context::{checked_url, missing, non_empty};
use crate::validate::credential::{credential_format, credential_parts};
use crate::validate::inline::http::media_type;
use crate::validate::inline::operation::take_schema;

/// The credential, as `auth:` describes it.
pub(super) struct Credential {
    /// `None` in base mode, where the document's security schemes decide.
    pub scheme: Option<AuthScheme>,
    pub token_prefixes: Vec<String>,
    #[expect(
        clippy::struct_field_names,
        reason = "the name of model::Auth's field it becomes"
    )]
    pub credential_name: Option<String>,
    /// `auth.env`, when given and a variable name, and where it is written.
    pub env: Option<String>,
    pub env_span: Option<Span>,
    /// `auth.format`, checked, and where it is written.
    pub format: Option<(String, Span)>,
    /// `auth.parts`, each checked (`credential.rs`).
    pub parts: Option<Vec<super::credential::PartSpec>>,
    /// Where `auth:` is.
    pub span: Option<Span>,
    /// Base mode: `auth.scheme`, `in` and `name` as written, refused only when the
    /// document declares security schemes of its own (`inline-key-with-base`).
    pub base_keys: Vec<(&'static str, Span)>,
}

/// Inline mode: what the manifest-wide keys put in the document around the operations.
/// (The error responses and `schemas:` go to `Validator::settings`: the operations are
/// checked against them.)
pub(super) struct InlineKeys {
    /// `servers:` after `publicUrl`: (url, description).
    pub servers: Vec<(String, Option<String>)>,
    pub contact: Option<Value>,
    pub license: Option<Value>,
    /// `tags:`: (name, description), in order.
    pub tags: Vec<(String, String)>,
}

/// Inline mode's manifest-wide keys: `errors:`, then `schemas:` (the errors' and the
/// operations' references resolve against them), `servers:`, `tags:`, and
/// `service.contact` and `service.license`.
pub(super) fn inline_keys(v: &mut Validator, raw: &mut RawManifest) -> InlineKeys {
    v.settings.error_responses = error_model(v, &mut raw.errors);
    let reserve = matches!(v.settings.error_responses, Errors::Problem);
    v.settings.shared = shared_schemas(v, &mut raw.schemas, reserve);
    if let Some(errors) = &raw.errors
        && let (Some(schema), Errors::Provider { schema: body, .. }) =
            (&errors.value.schema, &v.settings.error_responses)
    {
        refs(&mut v.findings, body, &v.settings.shared, span(schema));
    }
    let servers = servers(v, raw.servers.as_deref().unwrap_or_default());
    let tags = tag_descriptions(v, raw.tags.as_ref());
    let (contact, license) = match &raw.service {
        Some(s) => (
            info_object(v, s.value.contact.as_ref(), "contact"),
            info_object(v, s.value.license.as_ref(), "license"),
        ),
        None => (None, None),
    };
    InlineKeys {
        servers,
        contact,
        license,
        tags,
    }
}

/// The header an inline API key travels in, which no operation may declare again.
pub(super) fn api_key_header(v: &mut Validator, credential: &Credential) {
    if let Some(AuthScheme::ApiKey { location, name }) = &credential.scheme
        && location == "header"
    {
        v.settings.api_key_header = Some(name.clone());
    }
}

/// `auth:`. In base mode `scheme`, `in` and `name` come from the document.
pub(in crate::validate) fn credential(
    v: &mut Validator,
    a: Option<&Spanned<RawAuth>>,
    base_mode: bool,
) -> Credential {
    let Some(a) = a else {
        return Credential {
            scheme: (!base_mode).then_some(AuthScheme::Bearer),
            token_prefixes: Vec::new(),
            credential_name: None,
            env: None,
            env_span: None,
            format: None,
            parts: None,
            span: None,
            base_keys: Vec::new(),
        };
    };
    let raw = &a.value;
    let mut base_keys = Vec::new();
    if base_mode {
        for (key, value) in [
            ("auth.scheme", &raw.scheme),
            ("auth.in", &raw.in_),
            ("auth.name", &raw.name),
        ] {
            if let Some(v) = value {
                base_keys.push((key, span(v)));
            }
        }
    }
    let parts = credential_parts(v, a, base_mode);
    // Base mode names a scheme only for a document that declares none (checked
    // once the document is read).
    let scheme = if raw.parts.is_some() {
        // Inline, the parts are the credential; base mode reads the document's.
        parts
            .as_ref()
            .filter(|_| !base_mode)
            .map(|_| AuthScheme::Parts)
    } else if base_mode && base_keys.is_empty() {
        None
    } else {
        auth_scheme(v, a)
    };
    let format = raw
        .format
        .as_ref()
        .filter(|_| raw.parts.is_none())
        .and_then(|f| credential_format(v, f).map(|text| (text, span(f))));
    let token_prefixes = match &raw.token_prefix {
        None => Vec::new(),
        Some(p) => token_prefixes(v, p),
    };
    let credential_name = raw.credential_name.as_ref().and_then(|n| {
        non_empty(
            v,
            n,
            "credentialName",
            "name the credential as the person knows it, e.g. `API key`",
        )
        .map(|n| n.split_whitespace().collect::<Vec<_>>().join(" "))
    });
    let env = raw.env.as_ref().and_then(|e| {
        let name = e.value.trim();
        if super::safety::is_env_name(name) {
            Some(name.to_string())
        } else {
            v.findings.push(Diagnostic::InvalidAuthEnv {
                name: name.to_string(),
                span: span(e),
            });
            None
        }
    });
    Credential {
        scheme,
        token_prefixes,
        credential_name,
        env,
        env_span: raw.env.as_ref().map(span),
        format,
        parts,
        span: Some(span(a)),
        base_keys,
    }
}

fn auth_scheme(v: &mut Validator, a: &Spanned<RawAuth>) -> Option<AuthScheme> {
    let raw = &a.value;
    let name = raw.scheme.as_ref().map_or("bearer", |s| s.value.trim());
    if !AUTH_SCHEMES.contains(&name) {
        v.findings.push(Diagnostic::InvalidAuth {
            reason: format!(
                "`{name}` is not a scheme; {}",
                suggest(name, AUTH_SCHEMES.iter().copied())
            ),
            span: raw.scheme.as_ref().map_or(span(a), span),
        });
        return None;
    }
    if name != "apiKey" {
        for (key, value) in [("in", &raw.in_), ("name", &raw.name)] {
            if let Some(given) = value {
                v.findings.push(Diagnostic::InvalidAuth {
                    reason: format!("`{key}` applies to `scheme: apiKey` only, not `{name}`"),
                    span: span(given),
                });
            }
        }
    }
    match name {
        "basic" => Some(AuthScheme::Basic),
        "apiKey" => {
            let location = raw.in_.as_ref().map_or("header", |l| l.value.trim());
            if !matches!(location, "header" | "query") {
                v.findings.push(Diagnostic::InvalidAuth {
                    reason: format!(
                        "an API key goes in the `header` or the `query`, not `{location}`"
                    ),
                    span: raw.in_.as_ref().map_or(span(a), span),
                });
                return None;
            }
            let Some(key_name) = &raw.name else {
                missing(
                    v,
                    "name",
                    "`auth`",
                    span(a),
                    "add `name: X-API-Key` (the header or query parameter that carries the key)",
                );
                return None;
            };
            let n = key_name.value.trim();
            let valid = !n.is_empty()
                && n.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c));
            if !valid {
                v.findings.push(Diagnostic::InvalidAuth {
                    reason: format!("`{n}` is not a header or query parameter name"),
                    span: span(key_name),
                });
                return None;
            }
            Some(AuthScheme::ApiKey {
                location: location.to_string(),
                name: n.to_string(),
            })
        }
        _ => Some(AuthScheme::Bearer),
    }
}

/// `tags:`: each tag's description, in order.
pub(in crate::validate) fn tag_descriptions(
    v: &mut Validator,
    raw: Option<&Spanned<indexmap::IndexMap<String, Spanned<String>>>>,
) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (name, description) in raw.iter().flat_map(|t| t.value.iter()) {
        let help = format!("say what the operations tagged `{name}` have in common");
        if let Some(d) = non_empty(v, description, "tags", &help) {
            out.push((name.clone(), d));
        }
    }
    out
}

/// `tokenPrefix`: one prefix, or a list of them.
fn token_prefixes(v: &mut Validator, p: &Spanned<Value>) -> Vec<String> {
    let values: Vec<&Value> = match &p.value {
        Value::Array(list) if !list.is_empty() => list.iter().collect(),
        other => vec![other],
    };
    let mut out = Vec::with_capacity(values.len());
    for value in values {
        match value.as_str() {
            Some(text)
                if !text.is_empty()
                    && !text
                        .chars()
                        .any(|c| c.is_whitespace() || c.is_control() || c == '`') =>
            {
                out.push(text.to_string());
            }
            _ => v.findings.push(Diagnostic::InvalidTokenPrefix {
                prefix: match value {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                },
                span: span(p),
            }),
        }
    }
    out
}

/// In base mode the provider's document says what these keys would: refuse them.
pub(in crate::validate) fn no_inline_document_keys(v: &mut Validator, raw: &RawManifest) {
    if let Some(s) = &raw.schemas {
        v.findings.push(Diagnostic::InlineKeyWithBase {
            key: "schemas",
            span: span(s),
        });
    }
    if let Some(s) = raw.servers.as_ref().and_then(|s| s.first()) {
        v.findings.push(Diagnostic::InlineKeyWithBase {
            key: "servers",
            span: span(s),
        });
    }
    if let Some(e) = &raw.errors {
        v.findings.push(Diagnostic::InlineKeyWithBase {
            key: "errors",
            span: span(e),
        });
    }
    if let Some(t) = &raw.tags {
        v.findings.push(Diagnostic::InlineKeyWithBase {
            key: "tags",
            span: span(t),
        });
    }
}

/// `schemas:`, taken out of the raw manifest, each a schema whose references resolve.
pub(in crate::validate) fn shared_schemas(
    v: &mut Validator,
    raw: &mut Option<Spanned<indexmap::IndexMap<String, Spanned<Value>>>>,
    reserve_problem: bool,
) -> Map<String, Value> {
    let mut out = Map::new();
    let Some(raw) = raw else {
        return out;
    };
    let mut spans = Vec::new();
    for (name, schema) in &mut raw.value {
        let at = span(schema);
        let valid_name = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'));
        if !valid_name {
            v.findings.push(Diagnostic::InvalidSchema {
                key: "schemas",
                span: at,
            });
            continue;
        }
        if reserve_problem && name == "Problem" {
            v.findings.push(Diagnostic::InvalidOpenapiFragment {
                key: "Problem".to_string(),
                reason: "connectorgen's default error responses use `#/components/schemas/Problem`: rename the schema, or declare the provider's own `errors:`".to_string(),
                span: at,
            });
            continue;
        }
        if let Some(schema) = take_schema(v, schema, "schemas") {
            out.insert(name.clone(), schema);
            spans.push(at);
            v.schema_spans.push((name.clone(), at));
        }
    }
    for (schema, at) in out.values().zip(spans) {
        refs(&mut v.findings, schema, &out, at);
    }
    out
}

/// `servers:` after `publicUrl`.
pub(in crate::validate) fn servers(
    v: &mut Validator,
    raw: &[Spanned<RawServer>],
) -> Vec<(String, Option<String>)> {
    raw.iter()
        .filter_map(|s| {
            let Some(url) = &s.value.url else {
                missing(v, "url", "a server", span(s), "add `url: https://…`");
                return None;
            };
            let url = checked_url(v, url, "servers.url")?;
            let description = s.value.description.as_ref().and_then(|d| {
                non_empty(
                    v,
                    d,
                    "description",
                    "describe the server, or remove `description`",
                )
            });
            Some((url, description))
        })
        .collect()
}

/// `errors:`: the provider's error body and statuses, or RFC 9457 problems.
pub(in crate::validate) fn error_model(
    v: &mut Validator,
    raw: &mut Option<Spanned<RawErrors>>,
) -> Errors {
    let Some(raw) = raw else {
        return Errors::Problem;
    };
    let at = span(raw);
    let before = v.findings.errors();
    let content_type = match &raw.value.content_type {
        Some(t) => media_type(v, t, "errors.contentType"),
        None => Some("application/json".to_string()),
    };
    // Its references are checked once `schemas:` is known (`validate`).
    let schema = if let Some(s) = &mut raw.value.schema {
        take_schema(v, s, "errors.schema")
    } else {
        missing(
            v,
            "schema",
            "`errors`",
            at,
            "give the JSON Schema of the provider's error body, e.g. `schema: { $ref: \"#/components/schemas/Error\" }`",
        );
        None
    };
    let mut statuses = Vec::new();
    match &raw.value.statuses {
        None => missing(
            v,
            "statuses",
            "`errors`",
            at,
            "list the error statuses every operation may answer with, e.g. `statuses: [400, 401, 404, 429, 500]`, or `[default]`",
        ),
        Some(list) => {
            for status in &list.value {
                let text = match &status.value {
                    Value::Number(n) => n.to_string(),
                    Value::String(s) => s.trim().to_string(),
                    other => other.to_string(),
                };
                let valid = text == "default"
                    || text.parse::<u16>().is_ok_and(|c| (400..=599).contains(&c));
                if !valid {
                    v.findings.push(Diagnostic::InvalidStatus {
                        status: text,
                        expected: "an error status, 400 to 599, or `default`",
                        span: span(status),
                    });
                } else if !statuses.contains(&text) {
                    statuses.push(text);
                }
            }
        }
    }
    match (content_type, schema, v.findings.errors() == before) {
        (Some(content_type), Some(schema), true) => Errors::Provider {
            content_type,
            schema,
            statuses,
        },
        _ => Errors::Problem,
    }
}

/// `service.contact` / `service.license`: a mapping, as OpenAPI's `info` holds it.
pub(in crate::validate) fn info_object(
    v: &mut Validator,
    raw: Option<&Spanned<Value>>,
    key: &str,
) -> Option<Value> {
    let raw = raw?;
    if raw.value.is_object() {
        Some(raw.value.clone())
    } else {
        v.findings.push(Diagnostic::WrongType {
            message: format!("`{key}` must be a mapping"),
            span: span(raw),
            help: Some(format!(
                "write e.g. `{key}: {{ name: …, url: https://… }}`, as OpenAPI's info.{key}"
            )),
        });
        None
    }
}
