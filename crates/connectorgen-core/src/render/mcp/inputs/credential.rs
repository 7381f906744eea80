//! What the connection fills in of a tool's request: the credential.
//!
//! Takes: the connector (its `auth`, the document's `apiKey` schemes) and the operation.
//! Returns: where the credential travels (so those parameters are no arguments), whether
//! a body field is a credential part, the mapping's `Credential`, and the tool schema
//! without the body fields a credential part fills in.
//! Must never: leave a credential field anywhere the model could fill it in (the body's
//! top, its root branches, the whole-body argument, the `$defs` those reach).

use serde_json::Value;

use super::super::mapping::{Argument, Credential, CredentialPart, Encoding, Location};
use crate::model::{AuthScheme, Connector, Operation, OperationCredential};
use crate::schema_walk;

/// Where the credential travels: (name, location) of each `apiKey` scheme of the
/// document and each part of the connector's credential that is not a body field.
pub(super) fn parameters(connector: &Connector) -> Vec<(&str, &str)> {
    let doc = &connector.document;
    let parts = connector
        .auth
        .parts
        .iter()
        .filter(|p| !p.in_body())
        .map(|p| (p.name.as_str(), p.location.as_str()));
    doc.root
        .get("components")
        .and_then(|c| c.get("securitySchemes"))
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter(|(_, s)| s.get("type").and_then(Value::as_str) == Some("apiKey"))
        .filter_map(|(_, s)| {
            let name = s.get("name").and_then(Value::as_str)?;
            let location = s.get("in").and_then(Value::as_str)?;
            Some((name, location))
        })
        .chain(parts)
        .collect()
}

/// Whether the body field `name` is a part of the connection's credential.
pub(super) fn in_body(connector: &Connector, name: &str) -> bool {
    connector
        .auth
        .parts
        .iter()
        .any(|p| p.in_body() && p.name == name)
}

/// A part of a credential as the mapping writes it.
fn mapped_part(p: &crate::model::CredentialPart) -> CredentialPart {
    CredentialPart {
        location: match p.location.as_str() {
            "query" => Location::Query,
            "cookie" => Location::Cookie,
            "body" => Location::Body,
            _ => Location::Header,
        },
        name: p.name.clone(),
        format: p.format.clone(),
        encoding: p.basic.then_some(Encoding::Base64),
        env: p.env.clone(),
    }
}

/// How this tool sends a credential: none when its operation's `security` asks for none,
/// the parts of its own requirement when it asks for other schemes (`Auth::operations`);
/// else the connection's: one of the one-part schemes when one part says it (as every
/// manifest before `auth.parts` did), else each part, a body field only when
/// `body_fields` (the fields the tool's body names) has it.
pub(super) fn credential(
    connector: &Connector,
    op: &Operation,
    body_fields: &[String],
) -> Credential {
    let auth = &connector.auth;
    match auth.operation(&op.id) {
        Some(OperationCredential::None) => return Credential::None,
        Some(OperationCredential::Parts(parts)) => {
            return Credential::Parts {
                parts: parts.iter().map(mapped_part).collect(),
            };
        }
        None => {}
    }
    let one_part = match auth.parts.as_slice() {
        [] => true,
        [one] => !one.in_body() && auth.format.is_none(),
        _ => false,
    };
    if !one_part || auth.scheme == AuthScheme::Parts {
        let parts = auth
            .parts
            .iter()
            .filter(|p| !p.in_body() || body_fields.contains(&p.name))
            .map(mapped_part)
            .collect();
        return Credential::Parts { parts };
    }
    match &connector.auth.scheme {
        AuthScheme::Bearer => Credential::Bearer,
        AuthScheme::ApiKey { location, name } => Credential::ApiKey {
            location: Location::of_parameter(location).unwrap_or(Location::Header),
            name: name.clone(),
        },
        AuthScheme::Basic => Credential::Basic,
        AuthScheme::OAuth2 | AuthScheme::OpenIdConnect => Credential::OAuth2,
        AuthScheme::Parts | AuthScheme::None => Credential::None,
    }
}

/// The body fields a credential part fills in leave every place the tool schema names
/// them: the root's `oneOf`/`anyOf`/`allOf` branches (the body's own), or the one
/// argument that is the whole body, and the `$defs` those reach (`schema_walk`).
pub(super) fn strip_fields(
    connector: &Connector,
    schema: &mut Value,
    arguments: &[Argument],
    body_fields: &[String],
) {
    let names: Vec<String> = connector
        .auth
        .parts
        .iter()
        .filter(|p| p.in_body() && body_fields.contains(&p.name))
        .map(|p| p.name.clone())
        .collect();
    if names.is_empty() {
        return;
    }
    let whole = arguments
        .iter()
        .find(|a| a.location == Location::Body && a.name.is_none());
    let starts: Vec<String> = match whole {
        Some(a) => vec![format!("/properties/{}", crate::model::escape(&a.argument))],
        None => ["allOf", "anyOf", "oneOf"]
            .iter()
            .flat_map(|key| {
                let count = schema
                    .get(*key)
                    .and_then(Value::as_array)
                    .map_or(0, Vec::len);
                (0..count).map(move |i| format!("/{key}/{i}"))
            })
            .collect(),
    };
    for pointer in schema_walk::reached(schema, &starts, false) {
        let Some(Value::Object(at)) = schema.pointer_mut(&pointer) else {
            continue;
        };
        if let Some(Value::Object(properties)) = at.get_mut("properties") {
            for name in &names {
                properties.shift_remove(name);
            }
        }
        if let Some(Value::Array(required)) = at.get_mut("required") {
            required.retain(|r| r.as_str().is_none_or(|r| !names.iter().any(|n| n == r)));
            if required.is_empty() {
                at.shift_remove("required");
            }
        }
    }
}
