//! Each operation's own `security` (issue 31): which exposed operations send no
//! credential, and which send other schemes than the connection's.
//!
//! Takes: the document around the exposed operations (its `securitySchemes`, its global
//! `security`), the operations, the connection's credential parts (built by
//! `credential.rs`, each with the security scheme it is) and the manifest's
//! `auth.parts` entries. Returns: the operations whose credential differs from the
//! connection's, by id — `None` for `security: []` or an alternative `{}`, else the
//! parts of the operation's first requirement that a request can carry, each read from
//! the variable its `auth.parts` entry names (`securityScheme:`), else the connection's
//! own for a scheme they share, else `<SERVICE>_` and the scheme's name in
//! screaming snake case (`adminKey` → `<SERVICE>_ADMIN_KEY`).
//! Must never: change the credential of an operation the connection's credential
//! satisfies (one of its alternatives names only schemes the connection sends), of one
//! without `security` of its own or global, or when the connection's parts name no
//! document scheme (an inline manifest): those send the connection's, as before.

use std::collections::BTreeMap;

use serde_json::Value;

use super::credential::{PartSpec, part_of_document_scheme};
use crate::model::{CredentialPart, Document, Operation, OperationCredential, env_prefix};

/// The scheme names of each alternative of an operation's requirement (its own
/// `security`, else the document's), `None` when neither is written.
fn alternatives(document: &Document, op: &Operation) -> Option<Vec<Vec<String>>> {
    let requirements = op
        .http
        .get("security")
        .or_else(|| document.root.get("security"))?;
    Some(
        requirements
            .as_array()
            .into_iter()
            .flatten()
            .map(|r| {
                r.as_object()
                    .into_iter()
                    .flatten()
                    .map(|(k, _)| k.clone())
                    .collect()
            })
            .collect(),
    )
}

/// Every scheme name the exposed operations' requirements use, in first-use order.
pub(super) fn used_schemes(document: &Document, operations: &[Operation]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for op in operations {
        for name in alternatives(document, op).into_iter().flatten().flatten() {
            if !out.contains(&name) {
                out.push(name);
            }
        }
    }
    out
}

/// The operations whose credential is not the connection's (module doc).
pub(super) fn operation_credentials(
    document: &Document,
    operations: &[Operation],
    connection: &[CredentialPart],
    specs: &[PartSpec],
    service: &str,
) -> BTreeMap<String, OperationCredential> {
    let schemes = document
        .root
        .get("components")
        .and_then(|c| c.get("securitySchemes"))
        .and_then(Value::as_object);
    let sent: Vec<&str> = connection
        .iter()
        .filter_map(|p| p.security_scheme.as_deref())
        .collect();
    let prefix = env_prefix(service);
    let mut out = BTreeMap::new();
    for op in operations {
        let Some(alternatives) = alternatives(document, op) else {
            continue;
        };
        if alternatives.is_empty() || alternatives.iter().any(Vec::is_empty) {
            out.insert(op.id.clone(), OperationCredential::None);
            continue;
        }
        if sent.is_empty()
            || alternatives
                .iter()
                .any(|names| names.iter().all(|n| sent.contains(&n.as_str())))
        {
            continue;
        }
        // The first alternative a request can carry whole (not mutual TLS, digest).
        let own = alternatives.iter().find_map(|names| {
            names
                .iter()
                .map(|name| {
                    let mut part = part_of_document_scheme(schemes?.get(name)?)?;
                    part.security_scheme = Some(name.clone());
                    Some(named(part, name, connection, specs, &prefix))
                })
                .collect::<Option<Vec<CredentialPart>>>()
        });
        if let Some(parts) = own {
            out.insert(op.id.clone(), OperationCredential::Parts(parts));
        }
    }
    out
}

/// A scheme's part with its variable and format: the `auth.parts` entry's, else the
/// connection's part of the same scheme, else the default.
fn named(
    mut part: CredentialPart,
    scheme: &str,
    connection: &[CredentialPart],
    specs: &[PartSpec],
    prefix: &str,
) -> CredentialPart {
    let spec = specs
        .iter()
        .find(|s| s.security_scheme.as_ref().is_some_and(|(n, _)| n == scheme));
    let shared = connection
        .iter()
        .find(|p| p.security_scheme.as_deref() == Some(scheme));
    if let Some(format) = spec.and_then(|s| s.format.clone()) {
        // A bearer or basic scheme's format is fixed (`credential.rs` says so for the
        // connection's parts); an API key's is the author's.
        if !part.basic && part.format.is_none() {
            part.format = Some(format);
        }
    } else if let Some(shared) = shared {
        part.format.clone_from(&shared.format);
    }
    match (spec.and_then(|s| s.env.as_ref()), shared) {
        (Some((env, at)), _) => {
            part.env.clone_from(env);
            part.env_span = Some(*at);
        }
        (None, Some(shared)) => {
            part.env.clone_from(&shared.env);
            part.env_span = shared.env_span;
        }
        (None, None) => part.env = default_env(prefix, scheme),
    }
    part
}

/// `<SERVICE>_` and the scheme's name in screaming snake case: a `_` where a lower-case
/// letter or digit meets an upper-case one, and for each run of other characters
/// (`adminKey` → `ADMIN_KEY`, `X-Admin-Key` → `X_ADMIN_KEY`); a name that already starts
/// with the prefix keeps it once.
pub(super) fn default_env(prefix: &str, scheme: &str) -> String {
    let mut upper = String::new();
    let mut previous_lower = false;
    for c in scheme.chars() {
        if c.is_ascii_alphanumeric() {
            if c.is_ascii_uppercase() && previous_lower {
                upper.push('_');
            }
            previous_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
            upper.push(c.to_ascii_uppercase());
        } else {
            if !upper.ends_with('_') {
                upper.push('_');
            }
            previous_lower = false;
        }
    }
    let upper = upper.trim_matches('_');
    if upper.starts_with(prefix) {
        upper.to_string()
    } else {
        format!("{prefix}{upper}")
    }
}

#[cfg(test)]
mod tests {
    use super::default_env;

    #[test]
    fn a_schemes_variable_is_its_name_in_screaming_snake_case() {
        assert_eq!(default_env("ACME_", "adminKey"), "ACME_ADMIN_KEY");
        assert_eq!(default_env("ACME_", "X-Admin-Key"), "ACME_X_ADMIN_KEY");
        assert_eq!(default_env("ACME_", "api_key2"), "ACME_API_KEY2");
        assert_eq!(default_env("ACME_", "OAuth2"), "ACME_OAUTH2");
        assert_eq!(default_env("ACME_", "acmeSecret"), "ACME_SECRET");
    }
}
