//! The credential as a list of parts (issue 31): `auth.parts` and `auth.format` checked,
//! the parts built for each mode, and what a target cannot express.
//!
//! Takes: `auth:` as `document.rs` read it (`Credential`), and in base mode the document
//! around the exposed operations. Returns (through `Validator`): the parts, each with
//! where it goes, how it is written and the variable `serve` reads it from; in base
//! mode, for a document without security schemes whose credential the manifest names,
//! the document with that credential as a security scheme and without the parameters
//! that carried it (so no target offers them to the model); a warning for each target
//! that cannot carry a part.
//! Must never: change the credential of a manifest written in the one-part forms
//! (`scheme`/`in`/`name`/`env`, or none): those keep exactly the scheme, the variable
//! and the outputs they had; or take a part from anywhere but the manifest and the
//! document's own security requirement.

use serde_json::{Map, Value, json};
use serde_saphyr::Spanned;

use super::context::Validator;
use super::document::Credential;
use crate::diagnostics::{Diagnostic, Span, suggest};
use crate::manifest::{RawAuth, span};
use crate::model::{
    Auth, AuthScheme, CREDENTIAL_PART_LOCATIONS, CredentialPart, Document, Operation,
    OperationCredential, Target, env_prefix,
};

/// One entry of `auth.parts`, checked.
pub(super) struct PartSpec {
    /// Base mode: the document's security scheme it is, and where that is written.
    pub security_scheme: Option<(String, Span)>,
    /// `in` and `name`, when it has a place of its own.
    pub place: Option<(String, String)>,
    pub env: Option<(String, Span)>,
    pub format: Option<String>,
    pub span: Span,
}

/// Header names a credential part may not take: the client sends them itself.
const RESERVED_HEADERS: [&str; 4] = ["Content-Type", "Accept", "Idempotency-Key", "Cookie"];

/// A header, query parameter, cookie or body field name.
fn is_token(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c))
}

/// A `format`: `{value}` once, on one line.
pub(in crate::validate) fn credential_format(
    v: &mut Validator,
    f: &Spanned<String>,
) -> Option<String> {
    let text = f.value.as_str();
    let problem = if text.matches("{value}").count() != 1 {
        Some("it must hold `{value}` exactly once, where the variable's content goes")
    } else if text.chars().any(char::is_control) {
        Some("it must be one line, without control characters")
    } else if text.replacen("{value}", "", 1).contains(['{', '}']) {
        Some("`{value}` is its only placeholder: no other `{` or `}`")
    } else {
        None
    };
    match problem {
        Some(reason) => {
            v.findings.push(Diagnostic::InvalidCredentialPart {
                reason: format!("`format: {text}`: {reason}"),
                span: span(f),
                help: "write how the credential appears, e.g. `format: \"ShippoToken {value}\"`"
                    .to_string(),
            });
            None
        }
        None => Some(text.to_string()),
    }
}

/// `auth.parts`, each entry checked; `None` when not given or wrong.
///
/// Long (about 170 lines) because each entry is a sequence of early `continue`s, one
/// finding each, in the order an author reads the entry (its place, `env`, `format`, a
/// twin); split, each step would hand back the same "reported, skip" three ways. Not
/// split yet: a candidate is the place's checks as a function of their own.
pub(in crate::validate) fn credential_parts(
    v: &mut Validator,
    auth: &Spanned<RawAuth>,
    base_mode: bool,
) -> Option<Vec<PartSpec>> {
    let raw = &auth.value;
    let list = raw.parts.as_ref()?;
    let mut ok = true;
    for (key, given) in [
        ("scheme", raw.scheme.as_ref().map(span)),
        ("in", raw.in_.as_ref().map(span)),
        ("name", raw.name.as_ref().map(span)),
        ("env", raw.env.as_ref().map(span)),
        ("format", raw.format.as_ref().map(span)),
    ] {
        if let Some(at) = given {
            ok = false;
            v.findings.push(Diagnostic::InvalidCredentialPart {
                reason: format!("`auth.{key}` beside `auth.parts`"),
                span: at,
                help: "`parts` replaces `scheme`, `in`, `name`, `env` and `format`: give each part its own `env` and `format`".to_string(),
            });
        }
    }
    if list.value.is_empty() {
        v.findings.push(Diagnostic::InvalidCredentialPart {
            reason: "`auth.parts` is empty".to_string(),
            span: span(list),
            help: "list at least one part, or leave `parts` out".to_string(),
        });
        return None;
    }
    let mut out: Vec<PartSpec> = Vec::new();
    for entry in &list.value {
        let at = span(entry);
        let p = &entry.value;
        let mut bad = |reason: String, help: &str, at: Span| {
            ok = false;
            v.findings.push(Diagnostic::InvalidCredentialPart {
                reason,
                span: at,
                help: help.to_string(),
            });
        };
        let security_scheme = p
            .security_scheme
            .as_ref()
            .map(|s| (s.value.trim().to_string(), span(s)));
        if let (Some((_, s_at)), false) = (&security_scheme, base_mode) {
            bad(
                "`securityScheme` names one of the provider's document's security schemes, and this manifest has no `openapi:`".to_string(),
                "give the part a place of its own: `in` (header, query, cookie or body) and `name`",
                *s_at,
            );
            continue;
        }
        let place = match (&p.in_, &p.name, &security_scheme) {
            (None, None, Some(_)) => None,
            (Some(_), _, Some((_, s_at))) | (_, Some(_), Some((_, s_at))) => {
                bad(
                    "a part is a document's security scheme or a place of its own, not both"
                        .to_string(),
                    "keep `securityScheme` (its place is the document's), or `in` and `name`",
                    *s_at,
                );
                continue;
            }
            (location, name, None) => {
                let Some(location) = location else {
                    bad(
                        "this part says neither where it goes (`in`) nor which security scheme it is".to_string(),
                        "add `in: header` (or query, cookie, body) and its `name`",
                        at,
                    );
                    continue;
                };
                let l = location.value.trim();
                if !CREDENTIAL_PART_LOCATIONS.contains(&l) {
                    bad(
                        format!(
                            "`in: {l}` is not a place; {}",
                            suggest(l, CREDENTIAL_PART_LOCATIONS.iter().copied())
                        ),
                        "a part goes in a `header`, the `query`, a `cookie` or the `body`",
                        span(location),
                    );
                    continue;
                }
                let Some(name) = name else {
                    bad(
                        format!("this part goes in the {l} but has no `name`"),
                        "add the `name` of the header, query parameter, cookie or body field",
                        at,
                    );
                    continue;
                };
                let n = name.value.trim();
                if !is_token(n) {
                    bad(
                        format!("`{n}` is not a header, query parameter, cookie or field name"),
                        "letters, digits and !#$%&'*+-.^_`|~ only",
                        span(name),
                    );
                    continue;
                }
                if l == "header" && RESERVED_HEADERS.iter().any(|h| h.eq_ignore_ascii_case(n)) {
                    bad(
                        format!("`{n}` is a header the client sends itself"),
                        "name the header the provider reads the credential from",
                        span(name),
                    );
                    continue;
                }
                Some((l.to_string(), n.to_string()))
            }
        };
        let env = match &p.env {
            Some(e) if super::safety::is_env_name(e.value.trim()) => {
                Some((e.value.trim().to_string(), span(e)))
            }
            Some(e) => {
                bad(
                    format!("`env: {}` is not an environment variable name", e.value),
                    "a letter or `_`, then letters, digits or `_`",
                    span(e),
                );
                continue;
            }
            None => None,
        };
        let format = p.format.as_ref().map(|f| credential_format(v, f));
        if format.as_ref().is_some_and(Option::is_none) {
            ok = false;
            continue;
        }
        let format = format.flatten();
        let spec = PartSpec {
            security_scheme,
            place,
            env,
            format,
            span: at,
        };
        let twin = out.iter().find_map(|o| {
            if let (Some((l1, n1)), Some((l2, n2))) = (&o.place, &spec.place)
                && same_place(l1, n1, l2, n2)
            {
                return Some(place_text(l2, n2));
            }
            match (&o.security_scheme, &spec.security_scheme) {
                (Some((a, _)), Some((b, _))) if a == b => {
                    Some(format!("the security scheme `{b}`"))
                }
                _ => None,
            }
        });
        if let Some(place) = twin {
            ok = false;
            v.findings.push(Diagnostic::DuplicateCredentialPart {
                place,
                label: "the second",
                span: at,
                help: DUPLICATE_HELP.to_string(),
            });
            continue;
        }
        out.push(spec);
    }
    ok.then_some(out)
}

/// The parts of an inline manifest's credential: `auth.parts`, else the one part of
/// `scheme` (`None`: no credential is ever inline; the default is bearer).
pub(in crate::validate) fn inline_parts(
    v: &mut Validator,
    cred: &Credential,
    scheme: &AuthScheme,
    service: &str,
) -> Vec<CredentialPart> {
    match &cred.parts {
        Some(specs) => {
            let parts = specs
                .iter()
                .filter_map(|s| {
                    let (location, name) = s.place.clone()?;
                    Some(own_part(location, name, s))
                })
                .collect();
            finish_parts(parts, service)
        }
        None => single_part(v, cred, scheme, service).into_iter().collect(),
    }
}

/// The one part of a one-part credential (`scheme`, `format`, `env`).
fn single_part(
    v: &mut Validator,
    cred: &Credential,
    scheme: &AuthScheme,
    service: &str,
) -> Option<CredentialPart> {
    let mut part = part_of_auth_scheme(scheme)?;
    if let Some((format, at)) = &cred.format {
        if part.location == "header" && part.name == "Authorization" && part.format.is_some() {
            v.findings.push(Diagnostic::InvalidCredentialPart {
                reason: "`format` applies to an API key; a bearer token is always sent as `Bearer {value}` and basic as `Basic` and base64".to_string(),
                span: *at,
                help: "for `Authorization: Token <token>`, write `scheme: apiKey`, `name: Authorization` and `format: \"Token {value}\"` (base mode: a document's `apiKey` scheme)".to_string(),
            });
        } else {
            part.format = Some(format.clone());
        }
    }
    part.env = cred
        .env
        .clone()
        .unwrap_or_else(|| crate::model::credential_env(service));
    part.env_span = cred.env_span;
    Some(part)
}

/// A base document that declares no credential: the one the manifest names is the
/// credential, written into the document (`declare`).
fn named_by_manifest(
    v: &mut Validator,
    cred: &Credential,
    own: &[&PartSpec],
    body: Vec<CredentialPart>,
    document: &mut Document,
    operations: &mut [Operation],
    service: &str,
) -> (Vec<CredentialPart>, Option<AuthScheme>) {
    let specs: &[PartSpec] = cred.parts.as_deref().unwrap_or_default();
    let mut named: Vec<CredentialPart> = own
        .iter()
        .filter_map(|s| {
            let (l, n) = s.place.clone()?;
            Some(own_part(l, n, s))
        })
        .collect();
    let mut scheme = None;
    if named.is_empty()
        && let Some(legacy) = &cred.scheme
    {
        named.extend(single_part(v, cred, legacy, service));
        scheme = Some(legacy.clone());
    }
    // A variable named with nowhere to send it: nothing would read it, and the outputs
    // would say the API needs no credential (issue 43).
    if named.is_empty()
        && body.is_empty()
        && let (Some(env), Some(at)) = (&cred.env, cred.env_span)
    {
        v.findings.push(Diagnostic::InvalidCredentialPart {
            reason: format!(
                "the document declares no security scheme, and `auth` does not say where the \
                 credential goes: `{env}` would be read by nobody, and every output would say \
                 the API needs no credential"
            ),
            span: at,
            help: "say where it is sent: `scheme: bearer`; or `scheme: apiKey` with `in: header` \
                   and the header's `name` (e.g. `name: X-Api-Key`); or list it under \
                   `auth.parts` with `in` and `name`"
                .to_string(),
        });
    }
    for s in specs.iter().filter(|s| s.security_scheme.is_some()) {
        if let Some((name, at)) = &s.security_scheme {
            v.findings.push(Diagnostic::InvalidCredentialPart {
                reason: format!(
                    "the document declares no security scheme `{name}` (it declares none)"
                ),
                span: *at,
                help: "give the part its place: `in` (header, query, cookie or body) and `name`"
                    .to_string(),
            });
        }
    }
    if !named.is_empty() {
        declare(document, operations, &named);
    }
    let mut parts = named;
    parts.extend(body);
    let parts = if scheme.is_some() {
        // The one-part form: its variable is already the credential's.
        let mut parts = parts;
        let rest = finish_parts(parts.split_off(1), service);
        parts.extend(rest);
        parts
    } else {
        finish_parts(parts, service)
    };
    (parts, scheme)
}

/// The parts of a base-mode credential: the document's security requirement (every
/// scheme of one alternative), with the manifest's variables and formats over it; or,
/// for a document without security schemes, the credential the manifest names — then
/// written into the document as its security scheme, its parameters taken out of the
/// exposed operations. The scheme prose describes, when the manifest names it.
///
/// Long (about 150 lines; the document without security schemes is
/// `named_by_manifest`) because the parts are built in one order that each later step
/// reads: the requirement's schemes, then the manifest's parts over them, then the
/// schemes only some operations ask for, then the variables' defaults.
pub(in crate::validate) fn base_parts(
    v: &mut Validator,
    cred: &Credential,
    document: &mut Document,
    operations: &mut [Operation],
    service: &str,
    chosen: &AuthScheme,
) -> (Vec<CredentialPart>, Option<AuthScheme>) {
    let schemes: Map<String, Value> = document
        .root
        .get("components")
        .and_then(|c| c.get("securitySchemes"))
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let specs: &[PartSpec] = cred.parts.as_deref().unwrap_or_default();
    let body: Vec<CredentialPart> = specs
        .iter()
        .filter(|s| s.place.as_ref().is_some_and(|(l, _)| l == "body"))
        .filter_map(|s| {
            let (l, n) = s.place.clone()?;
            Some(own_part(l, n, s))
        })
        .collect();
    let own: Vec<&PartSpec> = specs
        .iter()
        .filter(|s| s.place.as_ref().is_some_and(|(l, _)| l != "body"))
        .collect();

    if schemes.is_empty() {
        return named_by_manifest(v, cred, &own, body, document, operations, service);
    }

    for s in &own {
        v.findings.push(Diagnostic::InvalidCredentialPart {
            reason: "the document declares its security schemes; a part of the manifest's own can only be a body field".to_string(),
            span: s.span,
            help: "name the document's scheme with `securityScheme`, or put the part `in: body`".to_string(),
        });
    }
    let alternative = several(document, operations);
    let mut parts: Vec<CredentialPart> = if let Some(names) = &alternative {
        names
            .iter()
            .filter_map(|name| {
                let mut part = part_of_document_scheme(schemes.get(name)?)?;
                part.security_scheme = Some(name.clone());
                Some(part)
            })
            .collect()
    } else {
        {
            let one = single_part(v, cred, chosen, service);
            one.map(|mut p| {
                p.security_scheme = schemes
                    .iter()
                    .find(|(_, s)| {
                        part_of_document_scheme(s).is_some_and(|d| {
                            d.location == p.location && d.name == p.name && d.basic == p.basic
                        })
                    })
                    .map(|(n, _)| n.clone());
                p
            })
            .into_iter()
            .collect()
        }
    };
    if alternative.is_some() {
        for (key, given) in [
            ("env", cred.env_span),
            ("format", cred.format.as_ref().map(|f| f.1)),
        ] {
            if let Some(at) = given {
                v.findings.push(Diagnostic::InvalidCredentialPart {
                    reason: format!(
                        "the document's credential has {} parts; `auth.{key}` cannot say which",
                        parts.len()
                    ),
                    span: at,
                    help: "list the part under `auth.parts` with its `securityScheme`, and give it its `env` or `format` there".to_string(),
                });
            }
        }
    }
    let known: Vec<String> = parts
        .iter()
        .filter_map(|p| p.security_scheme.clone())
        .collect();
    // A scheme only some operations' own `security` asks for is named here too: its
    // variable and format are those operations' (`security.rs`).
    let elsewhere: Vec<String> = super::security::used_schemes(document, operations)
        .into_iter()
        .filter(|n| schemes.contains_key(n) && !known.contains(n))
        .collect();
    for s in specs {
        let Some((name, at)) = &s.security_scheme else {
            continue;
        };
        if elsewhere.contains(name) {
            continue;
        }
        match parts
            .iter_mut()
            .find(|p| p.security_scheme.as_deref() == Some(name.as_str()))
        {
            Some(part) => {
                if let Some((env, env_at)) = &s.env {
                    part.env.clone_from(env);
                    part.env_span = Some(*env_at);
                }
                if let Some(format) = &s.format {
                    if part.basic || part.format.is_some() {
                        v.findings.push(Diagnostic::InvalidCredentialPart {
                            reason: format!(
                                "`{name}` is a bearer or basic scheme; its format is fixed"
                            ),
                            span: s.span,
                            help: "leave `format` out of this part".to_string(),
                        });
                    } else {
                        part.format = Some(format.clone());
                    }
                }
            }
            None => v.findings.push(Diagnostic::InvalidCredentialPart {
                reason: format!(
                    "`{name}` is not a security scheme of the credential the document asks for; {}",
                    suggest(name, known.iter().map(String::as_str))
                ),
                span: *at,
                help: format!(
                    "its schemes: {}",
                    known
                        .iter()
                        .chain(&elsewhere)
                        .cloned()
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            }),
        }
    }
    let single = alternative.is_none();
    parts.extend(body);
    let parts = if single && !parts.is_empty() {
        let rest = finish_parts(parts.split_off(1), service);
        parts.extend(rest);
        parts
    } else {
        finish_parts(parts, service)
    };
    (parts, None)
}

/// A warning for each target that cannot carry a part of the credential as declared.
pub(in crate::validate) fn credential_targets(
    v: &mut Validator,
    auth: &Auth,
    targets: &[Target],
    at: Span,
) {
    let body: Vec<String> = auth
        .parts
        .iter()
        .filter(|p| p.in_body())
        .map(|p| format!("`{}`", p.name))
        .collect();
    let placed = auth.parts.iter().filter(|p| !p.in_body()).count();
    for target in targets {
        let name: &'static str = (*target).into();
        if *target == Target::Mcp {
            continue;
        }
        if !body.is_empty() {
            v.findings.add(crate::diagnostics::Finding::warning(
                Diagnostic::CredentialNotExpressible {
                    target: name,
                    what: format!(
                        "the credential's body {} {}: an OpenAPI security scheme goes in a header, the query or a cookie, so its platform would ask the model for {}",
                        if body.len() == 1 { "field" } else { "fields" },
                        body.join(", "),
                        if body.len() == 1 { "it" } else { "them" },
                    ),
                    span: at,
                },
            ));
        }
        if *target == Target::Openai && placed > 1 {
            v.findings.add(crate::diagnostics::Finding::warning(
                Diagnostic::CredentialNotExpressible {
                    target: name,
                    what: format!(
                        "a credential of {placed} parts sent together: GPT Actions send one API key or token, so the person must set the others up another way (a proxy that adds them)"
                    ),
                    span: at,
                },
            ));
        }
    }
}

const DUPLICATE_HELP: &str = "list each header (whatever its case), query parameter, cookie, body field or security scheme once";

/// Whether two places are one: the same location and name, a header's name compared
/// without regard to case (HTTP's rule).
fn same_place(l1: &str, n1: &str, l2: &str, n2: &str) -> bool {
    l1 == l2 && (n1 == n2 || (l1 == "header" && n1.eq_ignore_ascii_case(n2)))
}

/// `the header X-Key`, for messages.
fn place_text(location: &str, name: &str) -> String {
    let what = match location {
        "query" => "query parameter",
        "cookie" => "cookie",
        "body" => "body field",
        _ => "header",
    };
    format!("the {what} `{name}`")
}

/// No two parts of the credential, nor of any operation's own, in one place.
pub(super) fn unique_parts(v: &mut Validator, auth: &Auth, at: Span) {
    duplicate_parts(v, &auth.parts, at, "the credential");
    for (id, own) in &auth.operations {
        if let OperationCredential::Parts(parts) = own {
            duplicate_parts(v, parts, at, &format!("the credential of `{id}`"));
        }
    }
}

/// `duplicate-credential-part` for each part of a built credential (the document's
/// schemes, the manifest's parts, an operation's own requirement) that goes where an
/// earlier one goes; `at` when the part's variable is not written in the manifest.
pub(in crate::validate) fn duplicate_parts(
    v: &mut Validator,
    parts: &[CredentialPart],
    at: Span,
    whose: &str,
) {
    for (i, part) in parts.iter().enumerate() {
        if parts[..i]
            .iter()
            .any(|p| same_place(&p.location, &p.name, &part.location, &part.name))
        {
            let schemes = parts
                .iter()
                .filter(|p| same_place(&p.location, &p.name, &part.location, &part.name))
                .filter_map(|p| p.security_scheme.as_deref())
                .map(|s| format!("`{s}`"))
                .collect::<Vec<_>>();
            let place = if schemes.is_empty() {
                format!("{} ({whose})", place_text(&part.location, &part.name))
            } else {
                format!(
                    "{} ({whose}: the document's schemes {})",
                    place_text(&part.location, &part.name),
                    schemes.join(" and ")
                )
            };
            v.findings.push(Diagnostic::DuplicateCredentialPart {
                place,
                label: if part.env_span.is_some() {
                    "the second's variable"
                } else {
                    "the credential this manifest sends"
                },
                span: part.env_span.unwrap_or(at),
                help: DUPLICATE_HELP.to_string(),
            });
        }
    }
}

/// Default variables filled in. Two parts may share a variable: a client id sent in a
/// header and in a body field is one value.
fn finish_parts(mut parts: Vec<CredentialPart>, service: &str) -> Vec<CredentialPart> {
    let prefix = env_prefix(service);
    let single = parts.len() == 1;
    for part in &mut parts {
        if part.env.is_empty() {
            part.env = default_env(&prefix, part, single);
        }
    }
    parts
}

/// The scheme prose describes: the one part's own (`chosen`, a one-part credential
/// as it always was), `Parts` for several or a body field, `None` for none.
pub(super) fn scheme_of(parts: &[CredentialPart], chosen: AuthScheme) -> AuthScheme {
    match parts {
        [] => AuthScheme::None,
        [one] if !one.in_body() && chosen != AuthScheme::Parts && chosen != AuthScheme::None => {
            chosen
        }
        [one] if !one.in_body() => {
            if one.basic {
                AuthScheme::Basic
            } else if one.name == "Authorization" && one.format.as_deref() == Some("Bearer {value}")
            {
                AuthScheme::Bearer
            } else {
                AuthScheme::ApiKey {
                    location: one.location.clone(),
                    name: one.name.clone(),
                }
            }
        }
        _ => AuthScheme::Parts,
    }
}

/// A part with a place of its own (`in` and `name`), from `auth.parts`.
fn own_part(location: String, name: String, spec: &PartSpec) -> CredentialPart {
    CredentialPart {
        location,
        name,
        format: spec.format.clone(),
        basic: false,
        env: spec.env.as_ref().map(|e| e.0.clone()).unwrap_or_default(),
        env_span: spec.env.as_ref().map(|e| e.1),
        security_scheme: None,
    }
}

/// The one part a one-part scheme is (no variable yet).
fn part_of_auth_scheme(scheme: &AuthScheme) -> Option<CredentialPart> {
    let header = |name: &str, format: Option<&str>, basic: bool| CredentialPart {
        location: "header".to_string(),
        name: name.to_string(),
        format: format.map(str::to_string),
        basic,
        env: String::new(),
        env_span: None,
        security_scheme: None,
    };
    Some(match scheme {
        AuthScheme::Bearer | AuthScheme::OAuth2 | AuthScheme::OpenIdConnect => {
            header("Authorization", Some("Bearer {value}"), false)
        }
        AuthScheme::Basic => header("Authorization", Some("Basic {value}"), true),
        AuthScheme::ApiKey { location, name } => CredentialPart {
            location: location.clone(),
            ..header(name, None, false)
        },
        AuthScheme::Parts | AuthScheme::None => return None,
    })
}

/// The part a document's security scheme is; `None` for one no request can carry
/// (mutual TLS, digest).
pub(super) fn part_of_document_scheme(scheme: &Value) -> Option<CredentialPart> {
    let kind = scheme.get("type").and_then(Value::as_str)?;
    let auth = match kind {
        "apiKey" => AuthScheme::ApiKey {
            location: scheme.get("in").and_then(Value::as_str)?.to_string(),
            name: scheme.get("name").and_then(Value::as_str)?.to_string(),
        },
        "http" => match scheme
            .get("scheme")
            .and_then(Value::as_str)
            .map(str::to_ascii_lowercase)
            .as_deref()
        {
            Some("bearer") => AuthScheme::Bearer,
            Some("basic") => AuthScheme::Basic,
            _ => return None,
        },
        "oauth2" | "openIdConnect" => AuthScheme::Bearer,
        _ => return None,
    };
    part_of_auth_scheme(&auth)
}

/// The security requirement the credential is, when it has several schemes: the first
/// alternative of the exposed operations' requirements, when none of them can be met
/// with one scheme alone. `None`: one scheme does (today's single-credential choice).
/// When the document has a global `security` that some exposed operation inherits, only
/// those operations decide: one with a requirement of its own (an admin key, `[]`) sends
/// that (`security.rs`) and does not make the connection's credential another.
fn several(document: &Document, operations: &[Operation]) -> Option<Vec<String>> {
    let global = document.root.get("security");
    let inheriting: Vec<&Operation> = operations
        .iter()
        .filter(|op| !op.http.contains_key("security"))
        .collect();
    let deciding: Vec<&Operation> = if global.is_some() && !inheriting.is_empty() {
        inheriting
    } else {
        operations.iter().collect()
    };
    let mut first: Option<Vec<String>> = None;
    for op in deciding {
        let requirements = op.http.get("security").or(global);
        for requirement in requirements.and_then(Value::as_array).into_iter().flatten() {
            let names: Vec<String> = requirement
                .as_object()
                .into_iter()
                .flatten()
                .map(|(k, _)| k.clone())
                .collect();
            match names.len() {
                0 | 1 => return None,
                _ => {
                    first.get_or_insert(names);
                }
            }
        }
    }
    first
}

/// `<SERVICE>_` and the part's name, unless the name already starts so; `<SERVICE>_TOKEN`
/// for a one-part credential and for the `Authorization` header.
fn default_env(prefix: &str, part: &CredentialPart, single: bool) -> String {
    if single || part.name.eq_ignore_ascii_case("authorization") {
        return format!("{prefix}TOKEN");
    }
    let mut upper = String::new();
    for c in part.name.chars() {
        if c.is_ascii_alphanumeric() {
            upper.push(c.to_ascii_uppercase());
        } else if !upper.ends_with('_') {
            upper.push('_');
        }
    }
    let upper = upper.trim_matches('_');
    if upper.starts_with(prefix) {
        upper.to_string()
    } else {
        format!("{prefix}{upper}")
    }
}

/// The manifest's credential written into a document that declares none: one security
/// scheme per part, required together, and the parameters that carried it taken out of
/// the exposed operations (and their path items).
fn declare(document: &mut Document, operations: &mut [Operation], parts: &[CredentialPart]) {
    let mut schemes = Map::new();
    let mut requirement = Map::new();
    for part in parts {
        let (name, scheme) = if part.basic {
            (
                "basicAuth".to_string(),
                json!({ "type": "http", "scheme": "basic" }),
            )
        } else if part.format.as_deref() == Some("Bearer {value}") && part.name == "Authorization" {
            (
                "bearerAuth".to_string(),
                json!({ "type": "http", "scheme": "bearer" }),
            )
        } else {
            let mut scheme = json!({ "type": "apiKey", "in": part.location, "name": part.name });
            if let Some(format) = &part.format {
                scheme["description"] = json!(format!(
                    "Written `{}`.",
                    format.replace("{value}", "<credential>")
                ));
            }
            let key: String = part
                .name
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || "-._".contains(c) {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
            (key, scheme)
        };
        requirement.insert(name.clone(), json!([]));
        schemes.insert(name, scheme);
    }
    let root = &mut document.root;
    let components = root
        .entry("components")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(components) = components {
        components.insert("securitySchemes".into(), Value::Object(schemes));
    }
    // `security` sits before `paths`, where documents write it.
    let mut ordered = Map::new();
    for (key, value) in std::mem::take(root) {
        if key == "paths" {
            ordered.insert(
                "security".into(),
                json!([Value::Object(requirement.clone())]),
            );
        }
        ordered.insert(key, value);
    }
    if !ordered.contains_key("security") {
        ordered.insert("security".into(), json!([Value::Object(requirement)]));
    }
    *root = ordered;

    let carries = |p: &Value, doc: &Map<String, Value>| {
        let p = resolve(p, doc);
        let (Some(name), Some(location)) = (
            p.get("name").and_then(Value::as_str),
            p.get("in").and_then(Value::as_str),
        ) else {
            return false;
        };
        parts.iter().any(|part| {
            part.location == location
                && if location == "header" {
                    part.name.eq_ignore_ascii_case(name)
                } else {
                    part.name == name
                }
        })
    };
    let snapshot = document.root.clone();
    // The references the removed parameters made: a component only they reached goes too
    // (the document keeps only what its operations reach).
    let mut dropped: Vec<String> = Vec::new();
    let mut keep = |p: &Value| {
        let carried = carries(p, &snapshot);
        if carried && let Some(reference) = p.get("$ref").and_then(Value::as_str) {
            dropped.push(reference.to_string());
        }
        !carried
    };
    for op in operations.iter_mut() {
        if let Some(Value::Array(list)) = op.http.get_mut("parameters") {
            list.retain(&mut keep);
        }
    }
    if let Some(Value::Object(paths)) = document.root.get_mut("paths") {
        for item in paths.values_mut() {
            if let Some(Value::Array(list)) = item.get_mut("parameters") {
                list.retain(&mut keep);
            }
        }
    }
    dropped.sort();
    dropped.dedup();
    for reference in dropped {
        let Some(name) = reference.strip_prefix("#/components/parameters/") else {
            continue;
        };
        let still = operations
            .iter()
            .any(|op| op.http.values().any(|v| refers_to(v, &reference)))
            || document
                .root
                .values()
                .any(|value| refers_to(value, &reference));
        if still {
            continue;
        }
        let name = name.replace("~1", "/").replace("~0", "~");
        if let Some(Value::Object(components)) = document.root.get_mut("components")
            && let Some(Value::Object(parameters)) = components.get_mut("parameters")
        {
            parameters.remove(&name);
            if parameters.is_empty() {
                components.remove("parameters");
            }
        }
    }
}

/// Whether a `$ref` in `value`, outside the component `reference` names, is `reference`.
fn refers_to(value: &Value, reference: &str) -> bool {
    match value {
        Value::Object(map) => map.iter().any(|(key, v)| {
            (key == "$ref" && v.as_str() == Some(reference)) || refers_to(v, reference)
        }),
        Value::Array(items) => items.iter().any(|v| refers_to(v, reference)),
        _ => false,
    }
}

/// A parameter, its local `$ref` followed.
fn resolve<'a>(p: &'a Value, root: &'a Map<String, Value>) -> &'a Value {
    match p.get("$ref").and_then(Value::as_str) {
        Some(reference) => crate::model::resolve_local(root, reference).unwrap_or(p),
        None => p,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(name: &str) -> CredentialPart {
        CredentialPart {
            location: "header".into(),
            name: name.into(),
            format: None,
            basic: false,
            env: String::new(),
            env_span: None,
            security_scheme: None,
        }
    }

    #[test]
    fn default_variables_follow_the_service_and_the_part() {
        assert_eq!(
            default_env("PLAID_", &part("PLAID-CLIENT-ID"), false),
            "PLAID_CLIENT_ID"
        );
        assert_eq!(
            default_env("PLAID_", &part("Plaid-Version"), false),
            "PLAID_VERSION"
        );
        assert_eq!(
            default_env("VONAGE_", &part("api_secret"), false),
            "VONAGE_API_SECRET"
        );
        assert_eq!(
            default_env("VONAGE_", &part("Authorization"), false),
            "VONAGE_TOKEN"
        );
        assert_eq!(
            default_env("VONAGE_", &part("api_key"), true),
            "VONAGE_TOKEN"
        );
    }
}
