//! Inbound OAuth 2.1 for `serve --http`: who is calling, and what their token lets them
//! do. `serve` is a resource server (the MCP authorization specification, RFC 9728's
//! protected-resource metadata, RFC 8707's audience-bound tokens); the person's client
//! gets the token from an authorization server the operator names (`--auth-issuer`).
//!
//! Takes: the issuers, the server's canonical resource URI, and each request's bearer
//! token. Returns: the `Caller` (a principal per person: the token's issuer and subject,
//! hashed, and the scopes it grants), or why the token is refused.
//! Must never: accept a token not signed by a configured issuer's published key, one
//! whose audience is not this resource, an expired or not-yet-valid one, `alg: none`, or
//! an HMAC algorithm (an issuer's public key is public: anyone could sign with it); nor
//! pass the token on to anything (the provider, a log line, the ledger, an answer).
//!
//! Scopes follow the manifest's safety classes (`scopes.rs`): a token that can read
//! cannot spend, and a spend scope is not a yes (consent still applies on top).
//! Keys are found by discovery and cached (`keys.rs`).

mod introspect;
mod keys;
pub(crate) mod scopes;

pub(crate) use introspect::Introspection;

use std::collections::BTreeSet;
use std::time::Duration;

use base64::Engine as _;
use serde::Deserialize;

use crate::client::Origin;

/// How `serve --http` authenticates requests (`--auth-issuer`, `--resource`).
#[derive(Debug, Clone, Default)]
pub struct AuthConfig {
    /// The authorization servers whose tokens are accepted (their issuer identifiers).
    /// Empty: no inbound authentication (today's behaviour; the principal is the
    /// provider credential's hash).
    pub issuers: Vec<String>,
    /// The server's canonical URI (`--resource`): the audience every token must name.
    /// `None`: from the listen address (or the first `--allow-host`) and `/mcp`.
    pub resource: Option<String>,
    /// The authorization server's introspection endpoint (`--auth-introspection`), for
    /// opaque tokens; serve's client credentials there come from the environment.
    pub introspection: Option<String>,
}

impl AuthConfig {
    pub fn enabled(&self) -> bool {
        !self.issuers.is_empty()
    }
}

/// Seconds a token's `exp` and `nbf` may be off by: clocks of two machines disagree a
/// little; a minute is OAuth deployments' usual allowance and far below a token's life.
pub(crate) const LEEWAY_SECONDS: u64 = 60;

/// The signature algorithms accepted: asymmetric only. `none` and the HMAC algorithms
/// are never accepted (with HMAC, the issuer's public key would be the secret).
const ALGORITHMS: &[jsonwebtoken::Algorithm] = &[
    jsonwebtoken::Algorithm::RS256,
    jsonwebtoken::Algorithm::RS384,
    jsonwebtoken::Algorithm::RS512,
    jsonwebtoken::Algorithm::PS256,
    jsonwebtoken::Algorithm::PS384,
    jsonwebtoken::Algorithm::PS512,
    jsonwebtoken::Algorithm::ES256,
    jsonwebtoken::Algorithm::ES384,
    jsonwebtoken::Algorithm::EdDSA,
];

/// The person a request comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Caller {
    /// Whose rows, consent values and tasks these are: SHA-256 of the issuer and the
    /// subject, never either in the clear.
    pub principal: String,
    /// What the token grants.
    pub scopes: BTreeSet<String>,
}

/// Why a token is refused (said in `WWW-Authenticate`'s `error_description`, and never
/// quoting the token).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct Refused(pub String);

/// The claims read from a token (the checked ones are checked by `jsonwebtoken`).
#[derive(Debug, Deserialize)]
struct Claims {
    sub: String,
    /// RFC 9068 and most servers: one space-separated string.
    #[serde(default)]
    scope: Option<String>,
    /// Some servers: an array.
    #[serde(default)]
    scp: Option<Vec<String>>,
}

/// Checks tokens against the configured issuers' keys.
pub(crate) struct Verifier {
    issuers: Vec<String>,
    resource: String,
    keys: keys::Keys,
    /// For tokens that are not JWTs (`--auth-introspection`).
    introspection: Option<Introspection>,
}

impl Verifier {
    /// The verifier of tokens for `resource` from `issuers` (each `https://`, or `http://`
    /// on this machine).
    pub(crate) fn new(
        issuers: &[String],
        resource: &str,
        introspection: Option<Introspection>,
    ) -> Result<Verifier, String> {
        for issuer in issuers {
            let origin = Origin::of(issuer)
                .ok_or_else(|| format!("--auth-issuer {issuer} is not an absolute URL"))?;
            if origin.scheme != "https" && !is_loopback(&origin.host) {
                return Err(format!(
                    "--auth-issuer {issuer}: an authorization server is reached over https \
                     (http only on this machine)"
                ));
            }
        }
        Ok(Verifier {
            issuers: issuers.to_vec(),
            resource: resource.to_string(),
            keys: keys::Keys::new(issuers),
            introspection,
        })
    }

    pub(crate) fn resource(&self) -> &str {
        &self.resource
    }

    pub(crate) fn issuers(&self) -> &[String] {
        &self.issuers
    }

    /// The caller `token` names, if every check passes.
    pub(crate) async fn verify(&self, token: &str) -> Result<Caller, Refused> {
        let refused = |why: &str| Refused(why.to_string());
        let Ok(header) = jsonwebtoken::decode_header(token) else {
            // Not a JWT: an opaque token, which only its issuer can tell about.
            return match &self.introspection {
                Some(introspection) => {
                    introspection
                        .check(token, &self.issuers, &self.resource)
                        .await
                }
                None => Err(refused("the token is not a signed JWT")),
            };
        };
        if !ALGORITHMS.contains(&header.alg) {
            return Err(refused("the token's signature algorithm is not accepted"));
        }
        // The issuer picks the keys; the signature check below is what trusts it.
        let issuer =
            unverified_issuer(token).ok_or_else(|| refused("the token names no issuer"))?;
        if !self.issuers.contains(&issuer) {
            return Err(refused(
                "the token is from an issuer this server does not trust",
            ));
        }
        let key = self
            .keys
            .key(&issuer, header.kid.as_deref(), header.alg)
            .await
            .map_err(Refused)?;
        let mut validation = jsonwebtoken::Validation::new(header.alg);
        validation.algorithms = vec![header.alg];
        validation.set_issuer(&[issuer.as_str()]);
        validation.set_audience(&[self.resource.as_str()]);
        validation.leeway = LEEWAY_SECONDS;
        validation.validate_nbf = true;
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        let data = jsonwebtoken::decode::<Claims>(token, &key, &validation).map_err(|e| {
            use jsonwebtoken::errors::ErrorKind;
            Refused(
                match e.kind() {
                    ErrorKind::ExpiredSignature => "the token has expired",
                    ErrorKind::ImmatureSignature => "the token is not valid yet",
                    ErrorKind::InvalidAudience => "the token is for another resource",
                    ErrorKind::InvalidIssuer => "the token is from another issuer",
                    ErrorKind::InvalidSignature => "the token's signature does not verify",
                    ErrorKind::MissingRequiredClaim(_) => "the token lacks a required claim",
                    _ => "the token is not valid",
                }
                .to_string(),
            )
        })?;
        let claims = data.claims;
        let scopes = match (claims.scope, claims.scp) {
            (Some(scope), _) => scope.split_whitespace().map(str::to_string).collect(),
            (None, Some(list)) => list.into_iter().collect(),
            (None, None) => BTreeSet::new(),
        };
        Ok(Caller {
            principal: principal(&issuer, &claims.sub),
            scopes,
        })
    }
}

/// The principal of the person `subject` at `issuer`: the two length-prefixed, hashed,
/// so that two issuers' same subject are two people and neither is stored in the clear.
pub(crate) fn principal(issuer: &str, subject: &str) -> String {
    crate::digest(b"", &["oauth", issuer, subject])
}

/// The `iss` claim, read without checking the signature: only to pick which issuer's
/// keys check it.
fn unverified_issuer(token: &str) -> Option<String> {
    let payload = token.split('.').nth(1)?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload.trim_end_matches('='))
        .ok()?;
    let value: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    value.get("iss")?.as_str().map(str::to_string)
}

pub(crate) fn is_loopback(host: &str) -> bool {
    host == "localhost"
        || host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// The bounds of every request to an authorization server (its metadata, its keys, an
/// introspection, a provider's token endpoint): each is a small JSON document away.
pub(crate) const AS_LIMITS: crate::client::Limits = crate::client::Limits {
    connect_timeout: Duration::from_secs(5),
    total_timeout: Duration::from_secs(10),
    max_response_bytes: 1 << 20,
};

/// The most often an issuer's keys are fetched again for a key id they do not hold: a
/// storm of tokens naming made-up key ids costs one fetch per period, not one each.
pub(crate) const REFETCH_EVERY: Duration = Duration::from_secs(30);

#[cfg(test)]
mod tests;
