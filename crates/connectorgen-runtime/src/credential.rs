//! The provider's credential: taken from an environment variable, never from a tool
//! argument, and applied where the manifest's `auth` says it goes.
//!
//! Takes: a tool's mapping `credential` (`render::mcp::mapping`) and the value of the
//! variable `auth.env` names (`model::credential_env` by default). Returns: the headers or query
//! parameters that carry the credential, and the variable's name for messages.
//! Must never: log or echo the value (`Credential`'s `Debug` is redacted).

use connectorgen_core::render::mcp::mapping::{Credential as Scheme, Location};

/// Where the credential goes on a request.
#[derive(Clone, PartialEq, Eq)]
pub(crate) enum Placement {
    Header(String, String),
    Query(String, String),
    Cookie(String, String),
}

/// A credential ready to apply.
#[derive(Clone)]
pub(crate) struct Credential {
    pub placement: Placement,
}

impl std::fmt::Debug for Credential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (kind, name) = match &self.placement {
            Placement::Header(n, _) => ("header", n),
            Placement::Query(n, _) => ("query", n),
            Placement::Cookie(n, _) => ("cookie", n),
        };
        write!(f, "Credential({kind} {name}: [redacted])")
    }
}

impl Credential {
    /// The credential `scheme` says, from `value` (the variable's content), or `None`
    /// when the tool takes none.
    pub(crate) fn new(scheme: &Scheme, value: &str) -> Option<Credential> {
        let value = value.trim();
        let placement = match scheme {
            Scheme::Bearer | Scheme::OAuth2 => {
                Placement::Header("Authorization".into(), format!("Bearer {value}"))
            }
            Scheme::Basic => {
                use base64::Engine as _;
                let encoded = base64::engine::general_purpose::STANDARD.encode(value);
                Placement::Header("Authorization".into(), format!("Basic {encoded}"))
            }
            Scheme::ApiKey { location, name } => match location {
                Location::Query => Placement::Query(name.clone(), value.to_string()),
                Location::Cookie => Placement::Cookie(name.clone(), value.to_string()),
                _ => Placement::Header(name.clone(), value.to_string()),
            },
            Scheme::None => return None,
        };
        Some(Credential { placement })
    }

    /// The secret text itself, for redacting it from anything logged.
    pub(crate) fn secret(&self) -> &str {
        match &self.placement {
            Placement::Header(_, v) | Placement::Query(_, v) | Placement::Cookie(_, v) => v,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_the_value() {
        let c = Credential::new(&Scheme::Bearer, "sk_live_secret").unwrap();
        assert!(!format!("{c:?}").contains("sk_live_secret"));
        assert_eq!(c.secret(), "Bearer sk_live_secret");
    }
}
