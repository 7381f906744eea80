//! The model's `Auth`: the checked `auth:` and the credential's parts, per mode.
//!
//! Takes: `Credential` (what `document.rs` read from `auth:`) and, in base mode, the
//! built document and operations (its security schemes decide the parts). Returns:
//! `Auth`, with each operation's own credential in base mode (inline mode's come with
//! the lowered document, `inline.rs`). The environment variable's default is applied
//! later, once, by the driver.
//! Must never: check `auth:` again (`document.rs` and `credential.rs` do).

use std::collections::BTreeMap;

use super::base::document as base_document;
use super::context::Validator;
use super::credential::{base_parts, inline_parts, scheme_of};
use super::document::Credential;
use super::security::operation_credentials;
use crate::diagnostics::Diagnostic;
use crate::model::{Auth, AuthScheme, CredentialPart, Document, Operation, Service};

/// Inline mode: `auth:` names the scheme. `None` when it does not (already reported).
pub(super) fn inline(v: &mut Validator, credential: Credential, service: &Service) -> Option<Auth> {
    let scheme = credential.scheme.clone()?;
    let parts = inline_parts(v, &credential, &scheme, &service.name);
    let scheme = scheme_of(&parts, scheme);
    Some(Auth {
        format: single_format(&parts),
        parts,
        span: credential.span,
        scheme,
        token_prefixes: credential.token_prefixes,
        credential_name: credential
            .credential_name
            .unwrap_or_else(|| "connector token".to_string()),
        client_credentials: false,
        env: credential.env.clone().unwrap_or_default(),
        env_span: credential.env_span,
        operations: BTreeMap::new(),
    })
}

/// Base mode: the document's security schemes decide, `auth:` refines them. Built even
/// when `service` has problems, so that every problem is reported at once.
pub(super) fn base(
    v: &mut Validator,
    credential: Credential,
    document: &mut Document,
    operations: &mut [Operation],
    service: Option<&Service>,
) -> Auth {
    let declares = document
        .root
        .get("components")
        .and_then(|c| c.get("securitySchemes"))
        .and_then(serde_json::Value::as_object)
        .is_some_and(|s| !s.is_empty());
    if declares {
        for (key, at) in &credential.base_keys {
            v.findings
                .push(Diagnostic::InlineKeyWithBase { key, span: *at });
        }
    }
    let chosen = base_document::auth_scheme(document);
    let service_name = service.map_or("", |s| s.name.as_str());
    let (parts, named) = base_parts(v, &credential, document, operations, service_name, &chosen);
    let operation_credentials = operation_credentials(
        document,
        operations,
        &parts,
        credential.parts.as_deref().unwrap_or_default(),
        service_name,
    );
    let scheme = scheme_of(&parts, named.unwrap_or(chosen));
    let client_credentials =
        scheme == AuthScheme::OAuth2 && base_document::client_credentials_only(document);
    Auth {
        format: single_format(&parts),
        parts,
        span: credential.span,
        scheme,
        token_prefixes: credential.token_prefixes,
        credential_name: credential.credential_name.unwrap_or_else(|| {
            if client_credentials {
                "OAuth client"
            } else {
                "API key"
            }
            .to_string()
        }),
        client_credentials,
        env: credential.env.clone().unwrap_or_default(),
        env_span: credential.env_span,
        operations: operation_credentials,
    }
}

/// A one-part credential's author-written `format` (bearer's and basic's are implied).
fn single_format(parts: &[CredentialPart]) -> Option<String> {
    match parts {
        [one] if !one.basic && one.format.as_deref() != Some("Bearer {value}") => {
            one.format.clone()
        }
        _ => None,
    }
}
