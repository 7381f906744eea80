//! The provider's credential: taken from an environment variable, never from a tool
//! argument, and applied where the manifest's `auth` says it goes.
//!
//! Takes: the validated `Auth` and the environment. Returns: the headers or query
//! parameters that carry the credential, and the variable's name for messages.
//! Must never: log or echo the value (`Credential`'s `Debug` is redacted).

use crate::model::{Auth, AuthScheme};

/// The variable a connector's credential is read from: `<SERVICE>_TOKEN`, the service
/// name upper-cased with every run of other characters as one `_` (VidGen →
/// `VIDGEN_TOKEN`, "Print Shop" → `PRINT_SHOP_TOKEN`).
pub fn env_name(service: &str) -> String {
    let mut out = String::new();
    for c in service.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_uppercase());
        } else if !out.ends_with('_') && !out.is_empty() {
            out.push('_');
        }
    }
    let trimmed = out.trim_end_matches('_');
    if trimmed.is_empty() {
        "CONNECTOR_TOKEN".to_string()
    } else {
        format!("{trimmed}_TOKEN")
    }
}

/// Where the credential goes on a request.
#[derive(Clone, PartialEq, Eq)]
pub enum Placement {
    Header(String, String),
    Query(String, String),
    Cookie(String, String),
}

/// A credential ready to apply.
#[derive(Clone)]
pub struct Credential {
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
    /// The credential for `auth` from `value` (the variable's content), or `None` when
    /// the connector takes none.
    pub fn new(auth: &Auth, value: &str) -> Option<Credential> {
        let value = value.trim();
        let placement = match &auth.scheme {
            AuthScheme::Bearer | AuthScheme::OAuth2 | AuthScheme::OpenIdConnect => {
                Placement::Header("Authorization".into(), format!("Bearer {value}"))
            }
            AuthScheme::Basic => {
                use base64::Engine as _;
                let encoded = base64::engine::general_purpose::STANDARD.encode(value);
                Placement::Header("Authorization".into(), format!("Basic {encoded}"))
            }
            AuthScheme::ApiKey { location, name } => match location.as_str() {
                "query" => Placement::Query(name.clone(), value.to_string()),
                "cookie" => Placement::Cookie(name.clone(), value.to_string()),
                _ => Placement::Header(name.clone(), value.to_string()),
            },
            AuthScheme::None => return None,
        };
        Some(Credential { placement })
    }

    /// The secret text itself, for redacting it from anything logged.
    pub fn secret(&self) -> &str {
        match &self.placement {
            Placement::Header(_, v) | Placement::Query(_, v) | Placement::Cookie(_, v) => v,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_service() {
        assert_eq!(env_name("VidGen"), "VIDGEN_TOKEN");
        assert_eq!(env_name("Print Shop"), "PRINT_SHOP_TOKEN");
        assert_eq!(env_name("  --  "), "CONNECTOR_TOKEN");
        assert_eq!(env_name("open-ai batches!"), "OPEN_AI_BATCHES_TOKEN");
    }

    #[test]
    fn debug_never_shows_the_value() {
        let auth = Auth {
            scheme: AuthScheme::Bearer,
            token_prefixes: vec![],
            credential_name: "API key".into(),
        };
        let c = Credential::new(&auth, "sk_live_secret").unwrap();
        assert!(!format!("{c:?}").contains("sk_live_secret"));
        assert_eq!(c.secret(), "Bearer sk_live_secret");
    }
}
