//! The keys access tokens are checked with: each issuer's JWK set, found through its
//! metadata (RFC 8414's authorization-server metadata, then OpenID discovery), cached,
//! and fetched again when a token names a key id the cache does not hold — at most once
//! per `REFETCH_EVERY` for each issuer, so made-up key ids cannot make the server hammer
//! the issuer (or wait on it).
//!
//! Takes: the configured issuers, then an issuer, a key id and an algorithm. Returns: the
//! key to check the signature with, or why there is none.
//! Must never: take keys from a metadata document whose `issuer` is not the one
//! configured (RFC 8414, section 3.3), follow a redirect, or use a key published for
//! another algorithm or for encryption.

use std::collections::HashMap;
use std::time::Instant;

use jsonwebtoken::jwk::{Jwk, JwkSet, KeyAlgorithm, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey};

use super::{AS_LIMITS, REFETCH_EVERY};
use crate::client::{Client, HttpRequest, Origin};

#[derive(Default)]
struct Cached {
    jwks_uri: Option<String>,
    set: Option<JwkSet>,
    fetched: Option<Instant>,
}

pub(super) struct Keys {
    by_issuer: HashMap<String, tokio::sync::Mutex<Cached>>,
}

impl Keys {
    pub(super) fn new(issuers: &[String]) -> Keys {
        Keys {
            by_issuer: issuers
                .iter()
                .map(|i| (i.clone(), tokio::sync::Mutex::default()))
                .collect(),
        }
    }

    /// The key of `issuer` a token with key id `kid`, signed with `alg`, is checked with.
    pub(super) async fn key(
        &self,
        issuer: &str,
        kid: Option<&str>,
        alg: Algorithm,
    ) -> Result<DecodingKey, String> {
        let mut cached = self
            .by_issuer
            .get(issuer)
            .ok_or("the token is from an issuer this server does not trust")?
            .lock()
            .await;
        if let Some(key) = cached.set.as_ref().and_then(|set| find(set, kid, alg)) {
            return key;
        }
        let due = cached
            .fetched
            .is_none_or(|at| at.elapsed() >= REFETCH_EVERY);
        if !due {
            return Err("the token's key is not one its issuer publishes".into());
        }
        cached.fetched = Some(Instant::now());
        let jwks_uri = if let Some(uri) = cached.jwks_uri.clone() {
            uri
        } else {
            let uri = jwks_uri(issuer).await?;
            cached.jwks_uri = Some(uri.clone());
            uri
        };
        let set: JwkSet = serde_json::from_slice(&get(&jwks_uri).await?)
            .map_err(|e| format!("the issuer's key set ({jwks_uri}) is not a JWK set: {e}"))?;
        cached.set = Some(set);
        cached
            .set
            .as_ref()
            .and_then(|set| find(set, kid, alg))
            .unwrap_or_else(|| Err("the token's key is not one its issuer publishes".into()))
    }
}

/// The key for `kid` (or the only one, when the token names none) usable with `alg`.
fn find(set: &JwkSet, kid: Option<&str>, alg: Algorithm) -> Option<Result<DecodingKey, String>> {
    let usable = |jwk: &&Jwk| {
        let common = &jwk.common;
        let for_signing = !matches!(common.public_key_use, Some(PublicKeyUse::Encryption));
        let same_alg = common
            .key_algorithm
            .is_none_or(|a| key_algorithm(alg) == Some(a));
        for_signing && same_alg
    };
    let mut candidates = set.keys.iter().filter(usable);
    let jwk = if let Some(kid) = kid {
        candidates.find(|jwk| jwk.common.key_id.as_deref() == Some(kid))?
    } else {
        let first = candidates.next()?;
        if candidates.next().is_some() {
            return Some(Err(
                "the token names no key id and its issuer publishes several keys".into(),
            ));
        }
        first
    };
    Some(DecodingKey::from_jwk(jwk).map_err(|e| format!("the issuer's key cannot be used: {e}")))
}

fn key_algorithm(alg: Algorithm) -> Option<KeyAlgorithm> {
    Some(match alg {
        Algorithm::RS256 => KeyAlgorithm::RS256,
        Algorithm::RS384 => KeyAlgorithm::RS384,
        Algorithm::RS512 => KeyAlgorithm::RS512,
        Algorithm::PS256 => KeyAlgorithm::PS256,
        Algorithm::PS384 => KeyAlgorithm::PS384,
        Algorithm::PS512 => KeyAlgorithm::PS512,
        Algorithm::ES256 => KeyAlgorithm::ES256,
        Algorithm::ES384 => KeyAlgorithm::ES384,
        Algorithm::EdDSA => KeyAlgorithm::EdDSA,
        _ => return None,
    })
}

/// Where `issuer` publishes its keys: its RFC 8414 metadata, else its OpenID
/// configuration, whichever answers first for this very issuer.
async fn jwks_uri(issuer: &str) -> Result<String, String> {
    let mut tried = Vec::new();
    for url in metadata_urls(issuer) {
        let Ok(body) = get(&url).await else {
            tried.push(url);
            continue;
        };
        let Ok(metadata) = serde_json::from_slice::<serde_json::Value>(&body) else {
            tried.push(url);
            continue;
        };
        if metadata.get("issuer").and_then(|v| v.as_str()) != Some(issuer) {
            return Err(format!(
                "{url} names another issuer than {issuer}: its keys are not used"
            ));
        }
        return metadata
            .get("jwks_uri")
            .and_then(|v| v.as_str())
            .map(str::to_string)
            .ok_or_else(|| format!("{url} names no jwks_uri"));
    }
    Err(format!(
        "the issuer's metadata could not be read (tried {})",
        tried.join(", ")
    ))
}

/// RFC 8414 section 3.1 (`/.well-known/oauth-authorization-server` inserted before the
/// issuer's path), then OpenID Connect Discovery (`/.well-known/openid-configuration`
/// appended).
fn metadata_urls(issuer: &str) -> Vec<String> {
    let issuer = issuer.trim_end_matches('/');
    let mut urls = Vec::new();
    if let Some((scheme, rest)) = issuer.split_once("://") {
        let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
        let path = if path.is_empty() {
            String::new()
        } else {
            format!("/{path}")
        };
        urls.push(format!(
            "{scheme}://{authority}/.well-known/oauth-authorization-server{path}"
        ));
    }
    urls.push(format!("{issuer}/.well-known/openid-configuration"));
    urls
}

/// The body of a 200 answer to `GET url`, through a client that may contact that one
/// origin and follows no redirect.
async fn get(url: &str) -> Result<Vec<u8>, String> {
    let origin = Origin::of(url).ok_or_else(|| format!("{url} is not an absolute URL"))?;
    let client = Client::without_redirects(AS_LIMITS, vec![origin]).map_err(|e| e.to_string())?;
    let response = client
        .send(&HttpRequest {
            method: http::Method::GET,
            url: url.to_string(),
            headers: vec![("accept".into(), "application/json".into())],
            body: None,
        })
        .await
        .map_err(|e| format!("{url}: {e}"))?;
    if response.status != 200 {
        return Err(format!("{url} answered HTTP {}", response.status));
    }
    Ok(response.body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_is_looked_for_where_rfc_8414_and_openid_put_it() {
        assert_eq!(
            metadata_urls("https://auth.example.com"),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server",
                "https://auth.example.com/.well-known/openid-configuration"
            ]
        );
        assert_eq!(
            metadata_urls("https://auth.example.com/tenant/1/"),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server/tenant/1",
                "https://auth.example.com/tenant/1/.well-known/openid-configuration"
            ]
        );
    }
}
