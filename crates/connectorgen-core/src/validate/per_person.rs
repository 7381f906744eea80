//! `auth.perPerson`: how each person connects their own credential to `serve`.
//!
//! Takes: `auth.perPerson` as written, the model's `Auth` (the connection's credential),
//! the built document (a base document's `authorizationCode` flow fills in what the
//! manifest leaves out) and the operations (`checkWith` names one). Returns: the checked
//! `PerPerson`, or `None` (absent, or refused with `unusable-per-person`).
//! Must never: accept a credential of several parts (a person enters one value), a key
//! check that spends, changes or takes an argument, or OAuth endpoints that are not
//! https (http only on loopback, for tests).

use serde_json::Value;
use serde_saphyr::Spanned;

use super::context::{Validator, checked_url};
use super::syntax::check_link;
use crate::diagnostics::{Diagnostic, Span, suggest};
use crate::manifest::{RawAuth, RawPerPerson, span};
use crate::model::{Auth, AuthScheme, Document, Method, Operation, PerPerson, ProviderOAuth};

/// The checked `auth.perPerson`.
pub(super) fn per_person(
    v: &mut Validator,
    auth_raw: Option<&Spanned<RawAuth>>,
    auth: &Auth,
    document: &Document,
    operations: &[Operation],
) -> Option<PerPerson> {
    let written = auth_raw?.value.per_person.as_ref()?;
    let at = span(written);
    let raw = &written.value;
    let refuse = |v: &mut Validator, reason: String, span: Span| {
        v.findings
            .push(Diagnostic::UnusablePerPerson { reason, span });
    };
    if auth.parts.len() != 1 {
        let reason = if auth.parts.is_empty() {
            "the connection sends no credential, so there is nothing for a person to connect"
                .to_string()
        } else {
            format!(
                "the credential has {} parts; a person connects one value (a key or a token)",
                auth.parts.len()
            )
        };
        refuse(v, reason, at);
        return None;
    }
    if let Some(id) = auth
        .operations
        .iter()
        .find_map(|(id, c)| matches!(c, crate::model::OperationCredential::Parts(_)).then_some(id))
    {
        refuse(
            v,
            format!(
                "`{id}` sends a credential of its own (its `security`); a person connects the connection's one credential"
            ),
            at,
        );
        return None;
    }
    if operations
        .iter()
        .any(|o| o.id == crate::model::CONNECT_TOOL)
    {
        refuse(
            v,
            format!(
                "an operation is named `{}`, the tool serve adds for people to connect their account; rename it with `id:`",
                crate::model::CONNECT_TOOL
            ),
            at,
        );
        return None;
    }
    let Some(connect) = &raw.connect else {
        refuse(
            v,
            "`connect` is missing: `apiKey` or `oauth`".to_string(),
            at,
        );
        return None;
    };
    match connect.value.as_str() {
        "apiKey" => {
            for (key, value) in oauth_keys(raw) {
                refuse(v, format!("`{key}` belongs to `connect: oauth`"), value);
            }
            let check_with = check_with(v, raw, operations, at)?;
            Some(PerPerson::ApiKey { check_with })
        }
        "oauth" => {
            if let Some(c) = &raw.check_with {
                refuse(
                    v,
                    "`checkWith` belongs to `connect: apiKey`: a token from the provider's own sign-in needs no check".to_string(),
                    span(c),
                );
            }
            let endpoints = oauth(v, raw, auth, document, at);
            if !matches!(
                auth.scheme,
                AuthScheme::Bearer | AuthScheme::OAuth2 | AuthScheme::OpenIdConnect
            ) {
                refuse(
                    v,
                    "`connect: oauth` gives an access token, sent as `Authorization: Bearer …`; the connection's credential is sent otherwise".to_string(),
                    span(connect),
                );
                return None;
            }
            endpoints.map(PerPerson::OAuth)
        }
        other => {
            refuse(
                v,
                format!(
                    "`connect: {other}` is not a way to connect; {}",
                    suggest(other, crate::model::PER_PERSON_CONNECT)
                ),
                span(connect),
            );
            None
        }
    }
}

/// The OAuth keys written, for `connect: apiKey`, which takes none.
fn oauth_keys(raw: &RawPerPerson) -> Vec<(&'static str, Span)> {
    let mut keys: Vec<(&'static str, Span)> = [
        ("authorizationUrl", &raw.authorization_url),
        ("tokenUrl", &raw.token_url),
        ("revocationUrl", &raw.revocation_url),
    ]
    .into_iter()
    .filter_map(|(k, value)| value.as_ref().map(|v| (k, span(v))))
    .collect();
    if let Some(s) = &raw.scopes {
        keys.push(("scopes", span(s)));
    }
    keys
}

/// `checkWith`: an exposed free read that takes no argument.
fn check_with(
    v: &mut Validator,
    raw: &RawPerPerson,
    operations: &[Operation],
    at: Span,
) -> Option<String> {
    let Some(name) = &raw.check_with else {
        v.findings.push(Diagnostic::UnusablePerPerson {
            reason: "`connect: apiKey` needs `checkWith`, the free read a key must answer before it is kept".to_string(),
            span: at,
        });
        return None;
    };
    let id = name.value.trim();
    let reason = match operations.iter().find(|o| o.id == id) {
        None => Some(format!(
            "`checkWith: {id}` names no exposed operation; {}",
            suggest(id, operations.iter().map(|o| o.id.as_str()))
        )),
        Some(op) if !(op.read || op.method == Method::Get) || op.spends.is_some() => Some(format!(
            "`{id}` is not a free read (a `get`, or `read: true`, that does not spend)"
        )),
        Some(op) if op.async_.is_some() => Some(format!("`{id}` starts a job")),
        Some(op) if !op.path_params.is_empty() => Some(format!(
            "`{id}` takes a path parameter; the check is called with no argument"
        )),
        Some(_) => None,
    };
    if let Some(reason) = reason {
        v.findings.push(Diagnostic::UnusablePerPerson {
            reason,
            span: span(name),
        });
        return None;
    }
    Some(id.to_string())
}

/// The provider's OAuth endpoints: as written, else the document's `authorizationCode`
/// flow of the credential's scheme.
fn oauth(
    v: &mut Validator,
    raw: &RawPerPerson,
    auth: &Auth,
    document: &Document,
    at: Span,
) -> Option<ProviderOAuth> {
    let flow = auth.parts[0].security_scheme.as_deref().and_then(|name| {
        document
            .root
            .get("components")?
            .get("securitySchemes")?
            .get(name)?
            .get("flows")?
            .get("authorizationCode")?
            .as_object()
    });
    let from_flow = |key: &str| flow.and_then(|f| f.get(key)).and_then(Value::as_str);
    let endpoint = |v: &mut Validator,
                    written: &Option<Spanned<String>>,
                    key: &'static str,
                    document_key: &str|
     -> Option<Option<String>> {
        if let Some(url) = written {
            return checked_url(v, url, key).map(Some);
        }
        let Some(url) = from_flow(document_key) else {
            return Some(None);
        };
        match check_link(url) {
            Ok(url) => Some(Some(url)),
            Err(reason) => {
                v.findings.push(Diagnostic::UnusablePerPerson {
                    reason: format!(
                        "the document's `{document_key}` cannot be used ({reason}); write `{}` here",
                        key.rsplit('.').next().unwrap_or(key)
                    ),
                    span: at,
                });
                None
            }
        }
    };
    let authorization = endpoint(
        v,
        &raw.authorization_url,
        "auth.perPerson.authorizationUrl",
        "authorizationUrl",
    );
    let token = endpoint(v, &raw.token_url, "auth.perPerson.tokenUrl", "tokenUrl");
    let revocation = endpoint(
        v,
        &raw.revocation_url,
        "auth.perPerson.revocationUrl",
        "revocationUrl",
    );
    let (Some(authorization), Some(token), Some(revocation_url)) =
        (authorization, token, revocation)
    else {
        return None;
    };
    let (Some(authorization_url), Some(token_url)) = (authorization, token) else {
        v.findings.push(Diagnostic::UnusablePerPerson {
            reason: "`connect: oauth` needs the provider's `authorizationUrl` and `tokenUrl`, and the document's credential has no `authorizationCode` flow that names them".to_string(),
            span: at,
        });
        return None;
    };
    let scopes = match &raw.scopes {
        Some(list) => {
            let mut scopes = Vec::new();
            for scope in &list.value {
                let s = scope.value.trim();
                if s.is_empty() || s.chars().any(|c| !matches!(c, '!' | '#'..='[' | ']'..='~')) {
                    v.findings.push(Diagnostic::UnusablePerPerson {
                        reason: format!(
                            "`{}` is not an OAuth scope (printable ASCII without spaces, `\"` or a backslash)",
                            s.escape_default()
                        ),
                        span: span(scope),
                    });
                    return None;
                }
                if !scopes.iter().any(|known| known == s) {
                    scopes.push(s.to_string());
                }
            }
            scopes
        }
        None => flow
            .and_then(|f| f.get("scopes"))
            .and_then(Value::as_object)
            .map(|s| s.keys().cloned().collect())
            .unwrap_or_default(),
    };
    Some(ProviderOAuth {
        authorization_url,
        token_url,
        revocation_url,
        scopes,
    })
}
