//! `idempotency:` — what the author wrote, and the retry key it names, found in the
//! provider's operation (base mode) or declared in the generated one (inline).
//!
//! Takes: the raw `idempotency:` value, and the operation (its base Operation Object, or
//! the lowered inline one). Returns: `Written` (checked), the key found or declared, and
//! in base mode without `idempotency:` the key the document itself declares, with the
//! evidence (`declared_key`, which `import` uses too); the `Idempotency-Key` header
//! connectorgen adds where a short form asks for it (`added_header`; its parameter is
//! `lower::idempotency_parameter`), in both modes.
//! Must never: add a second key — when a mechanism is named, the `Idempotency-Key` header
//! is not added, and a key the operation already has is used as it is, never declared
//! again.

use serde_json::{Map, Value, json};
use serde_saphyr::Spanned;

use super::candidates::{Candidate, candidates, declared_key, find};
use crate::diagnostics::{Diagnostic, Span, suggest};
use crate::lower::IDEMPOTENCY_KEY_DESCRIPTION;
use crate::manifest::span;
use crate::model::Names as _;
use crate::model::{
    Duplicate, IDEMPOTENCY_HEADER, Idempotency, IdempotencyKey, KeyLocation, Method, Unsupported,
    key_name_problem,
};
use crate::validate::context::Validator;

/// `idempotency:` as written, before the operation decides what it means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(in crate::validate) enum Written {
    /// `optional` or `required`: an `Idempotency-Key` header.
    Short {
        required: bool,
    },
    Inherent,
    Unsupported,
    /// The mapping form: the provider's own key.
    Named {
        location: KeyLocation,
        name: String,
        required: bool,
        duplicate: Option<Duplicate>,
    },
}

/// The `Idempotency-Key` header connectorgen adds.
pub(in crate::validate) fn added_header(required: bool) -> Idempotency {
    Idempotency::Key(IdempotencyKey {
        location: KeyLocation::Header,
        name: IDEMPOTENCY_HEADER.to_string(),
        required,
        added: true,
        evidence: None,
        duplicate: None,
    })
}

/// Whether a short form (`optional`, `required`, the inline default) adds the
/// `Idempotency-Key` header: on every non-GET that spends or is async.
pub(in crate::validate) fn needs_idempotency_key(method: Method, spends_or_async: bool) -> bool {
    method != Method::Get && spends_or_async
}

/// An inline operation's mechanism, from what was written (`optional` when nothing
/// was), and whether it is a short form, whose `Idempotency-Key` header the lowering
/// declares; a named key is declared in the lowered operation (`declare_key`).
pub(in crate::validate) fn inline_idempotency(
    written: Option<Written>,
    method: Method,
    spends_or_async: bool,
) -> (Idempotency, bool) {
    let written = written.unwrap_or(Written::Short { required: false });
    let short = matches!(written, Written::Short { .. });
    let idempotency = match written {
        Written::Unsupported => Idempotency::Unsupported(Unsupported::Stated),
        Written::Inherent => Idempotency::Inherent,
        Written::Short { required } => {
            if needs_idempotency_key(method, spends_or_async) {
                added_header(required)
            } else {
                Idempotency::Unsupported(Unsupported::Unknown)
            }
        }
        Written::Named {
            location,
            name,
            required,
            duplicate,
        } => Idempotency::Key(IdempotencyKey {
            location,
            name,
            required,
            added: true,
            evidence: None,
            duplicate,
        }),
    };
    (idempotency, short)
}

/// The mapping keys in the order of `Idempotency::MAPPING_KEYS`.
const LOCATIONS: [KeyLocation; 3] = [KeyLocation::Header, KeyLocation::Query, KeyLocation::Body];

/// `idempotency:` checked; `None` (reported) when it is no setting.
pub(in crate::validate) fn written_idempotency(
    v: &mut Validator,
    raw: &Spanned<Value>,
) -> Option<Written> {
    let at = span(raw);
    let problem = |help: String| Diagnostic::UnknownIdempotency {
        value: match &raw.value {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        },
        span: at,
        help,
    };
    let mapping_help = "the mapping names one key: `{ header: Acme-Request-Id }`, `{ query: request_id }` or `{ bodyField: idempotency_key }`, with `required: true` when the provider refuses a call without it";
    match &raw.value {
        Value::String(text) => match text.trim() {
            "optional" => Some(Written::Short { required: false }),
            "required" => Some(Written::Short { required: true }),
            "inherent" => Some(Written::Inherent),
            "unsupported" => Some(Written::Unsupported),
            other => {
                v.findings.push(problem(format!(
                    "{} (or a mapping naming the provider's own key, e.g. `{{ header: Acme-Request-Id }}`)",
                    suggest(other, Idempotency::SHORT_FORMS)
                )));
                None
            }
        },
        Value::Object(map) => {
            let mut named = Vec::new();
            let mut required = false;
            let mut duplicate = None;
            for (key, value) in map {
                if key == "duplicate" {
                    match duplicate_of(value) {
                        Ok(d) => duplicate = Some(d),
                        Err(why) => {
                            v.findings.push(problem(why));
                            return None;
                        }
                    }
                    continue;
                }
                if key == "required" {
                    if let Value::Bool(b) = value {
                        required = *b;
                    } else {
                        v.findings
                            .push(problem("`required` is `true` or `false`".to_string()));
                        return None;
                    }
                    continue;
                }
                let Some(i) = Idempotency::MAPPING_KEYS.iter().position(|k| k == key) else {
                    let known = Idempotency::MAPPING_KEYS
                        .iter()
                        .copied()
                        .chain(["required", "duplicate"]);
                    v.findings.push(problem(format!(
                        "`{key}` is not a key of the mapping: {}",
                        suggest(key, known)
                    )));
                    return None;
                };
                match value.as_str().map(str::trim) {
                    Some(name) if !name.is_empty() => {
                        if let Some(why) = key_name_problem(LOCATIONS[i], name) {
                            v.findings.push(problem(format!(
                                "`{key}` is the key's name as the provider spells it, one plain token: {why}"
                            )));
                            return None;
                        }
                        named.push((LOCATIONS[i], name.to_string()));
                    }
                    _ => {
                        v.findings.push(problem(format!(
                            "`{key}` is the key's name as the provider spells it, a non-empty text without spaces"
                        )));
                        return None;
                    }
                }
            }
            if named.len() == 1 {
                let (location, name) = named.remove(0);
                Some(Written::Named {
                    location,
                    name,
                    required,
                    duplicate,
                })
            } else {
                v.findings.push(problem(mapping_help.to_string()));
                None
            }
        }
        _ => {
            v.findings.push(problem(format!(
                "write `optional`, `required`, `inherent` or `unsupported`; {mapping_help}"
            )));
            None
        }
    }
}

/// `idempotency.duplicate` checked: `{ status: 422, bodyContains: "must be unique",
/// readWith: getOrderByClientId }`, with a status or a text at least. (`readWith` is
/// checked against the other operations later: `jobs::duplicate_reads`.)
fn duplicate_of(value: &Value) -> Result<Duplicate, String> {
    let help = "`duplicate` says how the provider answers a key it has seen: `{ status: 422 }`, \
                `{ bodyContains: \"must be unique\" }` or both, and `readWith:` a free read that \
                finds the request by its key";
    let Value::Object(map) = value else {
        return Err(help.to_string());
    };
    let mut duplicate = Duplicate::default();
    for (key, value) in map {
        match key.as_str() {
            "status" => match value.as_u64().and_then(|s| u16::try_from(s).ok()) {
                Some(status @ 400..=599) => duplicate.status = Some(status),
                _ => {
                    return Err(
                        "`duplicate.status` is the HTTP status of the provider's answer to a \
                         reused key, 400 to 599 (422, 409…)"
                            .to_string(),
                    );
                }
            },
            "bodyContains" => match value.as_str().map(str::trim) {
                Some(text) if !text.is_empty() => duplicate.body_contains = Some(text.to_string()),
                _ => {
                    return Err(
                        "`duplicate.bodyContains` is a non-empty text the answer's body contains"
                            .to_string(),
                    );
                }
            },
            "readWith" => match value.as_str().map(str::trim) {
                Some(id) if !id.is_empty() => duplicate.read_with = Some(id.to_string()),
                _ => return Err("`duplicate.readWith` is an operation id".to_string()),
            },
            other => {
                return Err(format!(
                    "`{other}` is not a key of `duplicate`: {}",
                    suggest(other, ["status", "bodyContains", "readWith"])
                ));
            }
        }
    }
    if duplicate.status.is_none() && duplicate.body_contains.is_none() {
        return Err(help.to_string());
    }
    Ok(duplicate)
}

/// A key the manifest names that the operation does not have: an error listing what
/// the operation does have.
pub(in crate::validate) fn key_not_found(
    v: &mut Validator,
    id: &str,
    location: KeyLocation,
    name: &str,
    candidates: &[Candidate],
    span: Span,
    extra: Option<&str>,
) {
    let same: Vec<&str> = candidates
        .iter()
        .filter(|c| c.location == location)
        .map(|c| c.name.as_str())
        .collect();
    let others: Vec<String> = candidates
        .iter()
        .filter(|c| c.location != location)
        .map(|c| format!("{} `{}`", what(c.location), c.name))
        .collect();
    let close = suggest(name, same.iter().copied());
    let mut help = if same.is_empty() {
        format!(
            "the operation has no {}{}",
            what_plural(location),
            if location == KeyLocation::Body {
                " (no JSON or form body with properties)"
            } else {
                ""
            }
        )
    } else if close.starts_with("did you mean") {
        close
    } else {
        let listed: Vec<String> = same.iter().take(12).map(|n| format!("`{n}`")).collect();
        format!("its {}: {}", what_plural(location), listed.join(", "))
    };
    if !others.is_empty() {
        let shown: Vec<String> = others.iter().take(12).cloned().collect();
        help.push_str(&format!(" (it also has {})", shown.join(", ")));
    }
    if let Some(extra) = extra {
        help.push_str(". ");
        help.push_str(extra);
    }
    v.findings.push(Diagnostic::IdempotencyKeyNotFound {
        id: id.to_string(),
        what: format!("{} `{name}`", what(location)),
        span,
        help,
    });
}

/// The mechanism's location as prose names it.
pub(crate) fn what(location: KeyLocation) -> &'static str {
    match location {
        KeyLocation::Header => "header",
        KeyLocation::Query => "query parameter",
        KeyLocation::Body => "body field",
    }
}

fn what_plural(location: KeyLocation) -> &'static str {
    match location {
        KeyLocation::Header => "headers",
        KeyLocation::Query => "query parameters",
        KeyLocation::Body => "body fields",
    }
}

/// Whether a body schema admits an object, so a property can be added to it.
fn may_be_object(schema: &Map<String, Value>) -> bool {
    match schema.get("type") {
        None => true,
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(types)) => types.iter().any(|t| t == "object"),
        Some(_) => false,
    }
}

/// The header or query parameter connectorgen declares for a named key (inline mode).
pub(crate) fn key_parameter(key: &IdempotencyKey) -> Value {
    json!({
        "name": key.name,
        "in": key.location.as_str(),
        "description": IDEMPOTENCY_KEY_DESCRIPTION,
        "required": key.required,
        "schema": { "type": "string", "minLength": 1, "maxLength": 255 }
    })
}

/// The body property connectorgen declares for a named key (inline mode).
pub(crate) fn key_property() -> Value {
    json!({
        "type": "string",
        "minLength": 1,
        "maxLength": 255,
        "description": IDEMPOTENCY_KEY_DESCRIPTION,
    })
}

/// An inline operation's named key, in its lowered `http`: the author's own
/// parameter or body property when they wrote it, else declared here. `None`
/// (reported) when a body field cannot be added (no structured body, or a body
/// schema by reference that lacks it).
pub(in crate::validate) fn declare_key(
    v: &mut Validator,
    id: &str,
    mut key: IdempotencyKey,
    http: &mut Map<String, Value>,
    span: Span,
) -> Option<IdempotencyKey> {
    let found = {
        let shared = &v.settings.shared;
        let resolve = |reference: &str| {
            reference
                .strip_prefix("#/components/schemas/")
                .and_then(|name| shared.get(name))
        };
        let all = candidates(&resolve, None, http);
        find(&all, key.location, &key.name).cloned().ok_or(all)
    };
    match found {
        Ok(own) => {
            key.added = false;
            key.required |= own.required;
            return Some(key);
        }
        Err(all) if key.location == KeyLocation::Body => {
            let schema = http
                .get_mut("requestBody")
                .and_then(|b| b.get_mut("content"))
                .and_then(Value::as_object_mut)
                .and_then(|c| c.values_mut().next())
                .and_then(|m| m.get_mut("schema"))
                .and_then(Value::as_object_mut)
                .filter(|s| !s.contains_key("$ref") && may_be_object(s));
            let Some(schema) = schema else {
                key_not_found(
                    v,
                    id,
                    key.location,
                    &key.name,
                    &all,
                    span,
                    Some(
                        "connectorgen adds a body field only to an object `input` schema written in the operation: add the property to the schema, or name a header or query parameter",
                    ),
                );
                return None;
            };
            let properties = schema
                .entry("properties")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(properties) = properties {
                properties.insert(key.name.clone(), key_property());
            }
            if key.required {
                let required = schema
                    .entry("required")
                    .or_insert_with(|| Value::Array(Vec::new()));
                if let Value::Array(list) = required {
                    list.push(Value::String(key.name.clone()));
                }
            }
        }
        Err(_) => {
            let parameters = http
                .entry("parameters")
                .or_insert_with(|| Value::Array(Vec::new()));
            if let Value::Array(list) = parameters {
                list.push(key_parameter(&key));
            }
        }
    }
    Some(key)
}

/// A base operation's mechanism: as written, checked against what the operation
/// has (`candidates`), or, without `idempotency:`, the key its document declares,
/// else unknown. `short_adds` says whether a short form adds the `Idempotency-Key`
/// header where the operation has none. `None` when reported.
#[expect(
    clippy::option_option,
    reason = "`idempotency:` absent, written but invalid (reported), or valid"
)]
pub(in crate::validate) fn base_idempotency(
    v: &mut Validator,
    id: &str,
    written: Option<Option<Written>>,
    candidates: &[Candidate],
    short_adds: bool,
    span: Span,
) -> Option<Idempotency> {
    let header = find(candidates, KeyLocation::Header, IDEMPOTENCY_HEADER);
    let written = match written {
        None => {
            return Some(match declared_key(candidates) {
                Some(key) => Idempotency::Key(key),
                None => Idempotency::Unsupported(Unsupported::Unknown),
            });
        }
        Some(written) => written?,
    };
    Some(match written {
        Written::Unsupported if header.is_some() => {
            v.findings.push(Diagnostic::IdempotencyContradictsBase {
                id: id.to_string(),
                span,
            });
            return None;
        }
        Written::Unsupported => Idempotency::Unsupported(Unsupported::Stated),
        Written::Inherent => Idempotency::Inherent,
        Written::Short { required } => match header {
            Some(own) => Idempotency::Key(IdempotencyKey {
                location: KeyLocation::Header,
                name: own.name.clone(),
                required: required || own.required,
                added: false,
                evidence: None,
                duplicate: None,
            }),
            None if short_adds => {
                // The short forms mean an `Idempotency-Key` header; adding one beside
                // the key the document declares would give the model two keys, and a
                // retry that keeps one but renews the other is charged again.
                if let Some(own) = declared_key(candidates) {
                    let what = format!("{} `{}`", what(own.location), own.name);
                    let form = match own.location {
                        KeyLocation::Header => "header",
                        KeyLocation::Query => "query",
                        KeyLocation::Body => "bodyField",
                    };
                    v.findings.push(Diagnostic::IdempotencySecondKey {
                        id: id.to_string(),
                        help: format!(
                            "name the provider's key instead: `idempotency: {{ {form}: {}{} }}` (or remove `idempotency:`, whose default is that key); {}",
                            own.name,
                            if required { ", required: true" } else { "" },
                            own.evidence.unwrap_or_default()
                        ),
                        what,
                        span,
                    });
                    return None;
                }
                added_header(required)
            }
            None => Idempotency::Unsupported(Unsupported::Unknown),
        },
        Written::Named {
            location,
            name,
            required,
            duplicate,
        } => {
            if let Some(own) = find(candidates, location, &name) {
                Idempotency::Key(IdempotencyKey {
                    location,
                    name: own.name.clone(),
                    required: required || own.required,
                    added: false,
                    evidence: None,
                    duplicate,
                })
            } else {
                key_not_found(v, id, location, &name, candidates, span, None);
                return None;
            }
        }
    })
}
