//! `serve` as an OAuth 2 client of the provider (issue 46): the authorization-code flow
//! with PKCE (RFC 6749 section 4.1, RFC 7636 S256), refresh (section 6) and revocation
//! (RFC 7009), so that each person's calls go out with that person's own access token.
//! The protocol half only: which person a `state` belongs to, where the tokens are kept
//! and when a call refreshes are the caller's.
//!
//! Takes: serve's `Registration` at the provider's authorization server, a `state` the
//! caller made and keeps, the callback's query, and stored `Tokens`. Returns: the
//! authorization URL with its PKCE verifier (`Started`), the code or the error a callback
//! carries (`Callback`), `Tokens` from an exchange or a refresh, and why there are none
//! (`OAuthError`: `Refused` — the person must connect again — `Misconfigured` or
//! `Unavailable`).
//! Must never: put a token, a code, a verifier or the client secret in an error, a log
//! line or a `Debug` (the authorization server's own error text is scrubbed of what the
//! request carried); send to anything but the registered token and revocation endpoints,
//! follow a redirect, or read past `AS_LIMITS` (through the runtime's one client); accept
//! an endpoint over plain HTTP off loopback; or use a token type other than Bearer.
//!
//! Hand-written over the runtime's client rather than the `oauth2` crate: with its HTTP
//! clients off, oauth2 5.0 still adds 13 crates, seven of them second copies of ones the
//! runtime already builds (sha2 0.10 and its digest stack, rand 0.8, thiserror 1), for
//! three form POSTs the runtime already makes for introspection (`auth/introspect.rs`).
//!
//! Not here yet: the RFC 9207 `iss` of a callback is not checked (serve talks to one
//! authorization server per connector), there are no extra authorization parameters
//! (some providers want their own, e.g. for offline access), and two refreshes of one
//! person's tokens at once are the caller's to prevent (a provider that rotates refresh
//! tokens refuses the second).

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::auth::{AS_LIMITS, is_loopback};
use crate::client::{Client, HttpRequest, HttpResponse, Origin};

mod answer;

use answer::{failure, refusal, scrub, tokens};

/// serve's registration at the provider's authorization server: where its endpoints are
/// and who serve is there. `Debug` leaves the secret out.
#[derive(Clone, PartialEq, Eq)]
pub struct Registration {
    /// Where the person's browser is sent. Its own query, if any, is kept.
    pub authorization_url: String,
    /// Where codes and refresh tokens are exchanged.
    pub token_url: String,
    /// RFC 7009's endpoint; without one, `revoke` has nothing to do.
    pub revocation_url: Option<String>,
    pub client_id: String,
    /// With one, serve is a confidential client (`client_secret_basic`); without, a
    /// public one (its `client_id` in the body), held to PKCE alone.
    pub client_secret: Option<String>,
    /// The callback on serve's own origin, as registered at the provider.
    pub redirect_uri: String,
    /// Asked for at the authorization endpoint; none: the provider's default.
    pub scopes: Vec<String>,
}

impl std::fmt::Debug for Registration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registration")
            .field("authorization_url", &self.authorization_url)
            .field("token_url", &self.token_url)
            .field("revocation_url", &self.revocation_url)
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| REDACTED),
            )
            .field("redirect_uri", &self.redirect_uri)
            .field("scopes", &self.scopes)
            .finish()
    }
}

/// The registration with its bounded client: build once per provider, share it.
#[derive(Debug, Clone)]
pub struct ProviderOAuth {
    registration: Registration,
    /// Only the token and revocation endpoints' origins, no redirects, `AS_LIMITS`.
    http: Client,
}

/// An authorization request made: where to send the browser, and the PKCE verifier to
/// keep with the caller's `state` until the callback. `Debug` leaves the verifier out.
#[derive(Clone, PartialEq, Eq)]
pub struct Started {
    pub url: String,
    /// RFC 7636's `code_verifier`: 32 random bytes, base64url; its S256 is in `url`.
    pub verifier: String,
}

impl std::fmt::Debug for Started {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Started")
            .field("url", &self.url)
            .field("verifier", &REDACTED)
            .finish()
    }
}

/// What the callback's query says: the `state` (to find the pending request by, even
/// when the rest is an error), and the code or why there is none.
#[derive(Debug)]
pub struct Callback {
    pub state: Option<String>,
    pub code: Result<String, OAuthError>,
}

/// A person's tokens at the provider, as kept (serialised, encrypted, by the caller).
/// `Debug` leaves the tokens out.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tokens {
    pub access_token: String,
    /// Without one, the person connects again when the access token expires.
    pub refresh_token: Option<String>,
    /// Unix seconds; `None` when the provider did not say (never `due` then).
    pub expires_at: Option<u64>,
    /// The scopes granted, as the provider said them; `None`: it did not, which RFC 6749
    /// section 5.1 says means those asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
}

impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tokens")
            .field("access_token", &REDACTED)
            .field(
                "refresh_token",
                &self.refresh_token.as_ref().map(|_| REDACTED),
            )
            .field("expires_at", &self.expires_at)
            .field("scope", &self.scope)
            .finish()
    }
}

impl Tokens {
    /// Whether to refresh before using the access token at `now`: it expires within
    /// `margin` seconds (the time a call may take to reach the provider).
    pub fn due(&self, now: u64, margin: u64) -> bool {
        self.expires_at
            .is_some_and(|at| now.saturating_add(margin) >= at)
    }
}

/// Why there are no tokens. No variant holds a token, a code, a verifier or the secret.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum OAuthError {
    /// The authorization server refused the grant (`invalid_grant`: a code used, expired
    /// or not matching the verifier; a refresh token revoked or rotated away), or the
    /// person said no (`access_denied`): the person must connect again.
    #[error("the provider's authorization server refused: {error}{}", colon(.description.as_deref()))]
    Refused {
        error: String,
        description: Option<String>,
    },
    /// The authorization server refuses serve itself (`invalid_client`,
    /// `unauthorized_client`, `unsupported_grant_type`), answers with a token serve cannot
    /// send, or the registration is not valid: the operator must change it; connecting
    /// again would not help. Kept tokens may still be good.
    #[error("serve's registration at the provider does not work: {0}")]
    Misconfigured(String),
    /// No usable answer (connecting failed, a timeout, an answer too large, 429 or 5xx,
    /// not the JSON of RFC 6749): the grant may still be good; keep it and try later.
    #[error("no usable answer from the provider's authorization server: {0}")]
    Unavailable(String),
}

const REDACTED: &str = "[redacted]";

impl ProviderOAuth {
    /// Checks the registration (every endpoint `https://`, or `http://` on loopback: the
    /// code, the tokens and the secret travel there) and builds the client for it.
    pub fn new(registration: Registration) -> Result<ProviderOAuth, OAuthError> {
        let bad = |what: &str, why: &str| OAuthError::Misconfigured(format!("{what}: {why}"));
        if registration.client_id.is_empty() {
            return Err(bad("client_id", "empty"));
        }
        let mut origins = Vec::new();
        for (what, url) in [
            ("authorization_url", Some(&registration.authorization_url)),
            ("token_url", Some(&registration.token_url)),
            ("revocation_url", registration.revocation_url.as_ref()),
            ("redirect_uri", Some(&registration.redirect_uri)),
        ] {
            let Some(url) = url else { continue };
            let parsed = reqwest::Url::parse(url).map_err(|_| bad(what, "not a URL"))?;
            if parsed.fragment().is_some() {
                return Err(bad(what, "has a fragment (RFC 6749 section 3.1)"));
            }
            let origin = Origin::of(url).ok_or_else(|| bad(what, "has no host"))?;
            if origin.scheme != "https" && !(origin.scheme == "http" && is_loopback(&origin.host)) {
                return Err(bad(what, "must be https:// (or http:// on loopback)"));
            }
            if matches!(what, "token_url" | "revocation_url") && !origins.contains(&origin) {
                origins.push(origin);
            }
        }
        let http = Client::without_redirects(AS_LIMITS, origins)
            .map_err(|e| OAuthError::Misconfigured(e.to_string()))?;
        Ok(ProviderOAuth { registration, http })
    }

    pub fn registration(&self) -> &Registration {
        &self.registration
    }

    /// The authorization request for `state` (opaque to this module; the caller binds it
    /// to the person and checks it at the callback): a fresh S256 PKCE pair, the verifier
    /// returned for the caller to keep beside `state`.
    pub fn start(&self, state: &str) -> Result<Started, OAuthError> {
        let mut random = [0u8; 32];
        getrandom::fill(&mut random)
            .map_err(|_| OAuthError::Unavailable("the system gave no random bytes".into()))?;
        let verifier = base64url(&random);
        let registration = &self.registration;
        // Checked by `new`.
        let mut url = reqwest::Url::parse(&registration.authorization_url)
            .map_err(|_| OAuthError::Misconfigured("authorization_url: not a URL".into()))?;
        {
            let mut query = url.query_pairs_mut();
            query
                .append_pair("response_type", "code")
                .append_pair("client_id", &registration.client_id)
                .append_pair("redirect_uri", &registration.redirect_uri);
            if !registration.scopes.is_empty() {
                query.append_pair("scope", &registration.scopes.join(" "));
            }
            query
                .append_pair("state", state)
                .append_pair("code_challenge", &challenge(&verifier))
                .append_pair("code_challenge_method", "S256");
        }
        Ok(Started {
            url: url.into(),
            verifier,
        })
    }

    /// The code of a callback for the tokens (RFC 6749 section 4.1.3), with the verifier
    /// `start` gave for its state.
    pub async fn exchange(
        &self,
        code: &str,
        verifier: &str,
        now: u64,
    ) -> Result<Tokens, OAuthError> {
        let form = [
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", self.registration.redirect_uri.as_str()),
            ("code_verifier", verifier),
        ];
        let answer = self
            .post(&self.registration.token_url, &form, &[code, verifier])
            .await?;
        tokens(&answer, None, now, &self.secrets(&[code, verifier]))
    }

    /// New tokens for `tokens`' refresh token (RFC 6749 section 6). A provider that does
    /// not rotate refresh tokens answers without one: the old one is kept, as is the
    /// scope when the answer leaves it out. Without a refresh token: `Refused`.
    pub async fn refresh(&self, tokens: &Tokens, now: u64) -> Result<Tokens, OAuthError> {
        let Some(refresh_token) = tokens.refresh_token.as_deref() else {
            return Err(OAuthError::Refused {
                error: "no_refresh_token".into(),
                description: Some("the provider gave no refresh token".into()),
            });
        };
        let form = [
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh_token),
        ];
        let secrets = [refresh_token, tokens.access_token.as_str()];
        let answer = self
            .post(&self.registration.token_url, &form, &secrets)
            .await?;
        self::tokens(&answer, Some(tokens), now, &self.secrets(&secrets))
    }

    /// Ends the grant at the provider (RFC 7009): the refresh token first (the grant
    /// with it, at most servers), then the access token, for a server that ends only
    /// what it is shown. Without a revocation endpoint there is nothing to do.
    pub async fn revoke(&self, tokens: &Tokens) -> Result<(), OAuthError> {
        let Some(url) = &self.registration.revocation_url else {
            return Ok(());
        };
        let mut each = vec![(tokens.access_token.as_str(), "access_token")];
        if let Some(refresh) = &tokens.refresh_token {
            each.insert(0, (refresh.as_str(), "refresh_token"));
        }
        let mut secrets = vec![tokens.access_token.as_str()];
        secrets.extend(tokens.refresh_token.as_deref());
        for (token, hint) in each {
            let form = [("token", token), ("token_type_hint", hint)];
            let answer = self.post(url, &form, &secrets).await?;
            if answer.status == 200 {
                continue;
            }
            match failure(&answer, &self.secrets(&secrets)) {
                // A server that revokes only refresh tokens (RFC 7009 section 2.2.1).
                OAuthError::Refused { error, .. }
                    if hint == "access_token" && error == "unsupported_token_type" => {}
                error => return Err(error),
            }
        }
        Ok(())
    }

    /// A form POST to `url` with serve's client authentication: `client_secret_basic`
    /// with a secret (RFC 6749 section 2.3.1: id and secret form-encoded, then Base64),
    /// else `client_id` in the body. `secrets` are scrubbed from a transport error.
    async fn post(
        &self,
        url: &str,
        form: &[(&str, &str)],
        secrets: &[&str],
    ) -> Result<HttpResponse, OAuthError> {
        let registration = &self.registration;
        let mut pairs: Vec<(&str, &str)> = form.to_vec();
        let mut headers = vec![
            (
                "content-type".to_string(),
                "application/x-www-form-urlencoded".to_string(),
            ),
            ("accept".to_string(), "application/json".to_string()),
        ];
        match &registration.client_secret {
            Some(secret) => {
                let basic = base64::engine::general_purpose::STANDARD.encode(format!(
                    "{}:{}",
                    form_encoded(&registration.client_id),
                    form_encoded(secret)
                ));
                headers.push(("authorization".to_string(), format!("Basic {basic}")));
            }
            None => pairs.push(("client_id", &registration.client_id)),
        }
        // Encoded before the await: the serializer holds an encoder that is not `Sync`,
        // and the future must be `Send` to run on serve's tasks.
        let body = form_urlencoded::Serializer::new(String::new())
            .extend_pairs(pairs)
            .finish()
            .into_bytes();
        self.http
            .send(&HttpRequest {
                method: http::Method::POST,
                url: url.to_string(),
                headers,
                body: Some(body),
            })
            .await
            .map_err(|e| OAuthError::Unavailable(scrub(&e.to_string(), &self.secrets(secrets))))
    }

    /// What must not appear in an error: `more`, and the client secret.
    fn secrets<'a>(&'a self, more: &[&'a str]) -> Vec<&'a str> {
        let mut all = more.to_vec();
        all.extend(self.registration.client_secret.as_deref());
        all
    }
}

impl Callback {
    /// The callback's query (after `?`, percent-encoded as it came): `state`, and `code`
    /// or `error` (RFC 6749 section 4.1.2). Nothing here checks `state`: the caller does,
    /// against what it keeps.
    pub fn parse(query: &str) -> Callback {
        let mut state = None;
        let mut code = None;
        let mut error = None;
        let mut description = None;
        let mut repeated = None;
        for (name, value) in form_urlencoded::parse(query.as_bytes()) {
            let slot = match &*name {
                "state" => &mut state,
                "code" => &mut code,
                "error" => &mut error,
                "error_description" => &mut description,
                _ => continue,
            };
            if slot.replace(value.into_owned()).is_some() {
                repeated = Some(name.into_owned());
            }
        }
        // A parameter given twice is not a callback (RFC 6749 section 3.1); a repeated
        // state names no one.
        if let Some(name) = repeated {
            return Callback {
                state: state.filter(|_| name != "state"),
                code: Err(OAuthError::Refused {
                    error: "invalid_request".into(),
                    description: Some(format!("the callback repeats `{name}`")),
                }),
            };
        }
        let code = match (code, error) {
            // The code of a callback that also says error is not shown.
            (code, Some(error)) => Err(refusal(
                &error,
                description.as_deref(),
                &code.as_deref().into_iter().collect::<Vec<_>>(),
            )),
            (Some(code), None) if !code.is_empty() => Ok(code),
            _ => Err(OAuthError::Refused {
                error: "invalid_request".into(),
                description: Some("the callback has neither a code nor an error".into()),
            }),
        };
        Callback { state, code }
    }
}

/// `: description`, or nothing.
fn colon(description: Option<&str>) -> String {
    description.map(|d| format!(": {d}")).unwrap_or_default()
}

/// RFC 7636 section 4.2's S256: `BASE64URL(SHA256(verifier))`.
fn challenge(verifier: &str) -> String {
    base64url(&Sha256::digest(verifier.as_bytes()))
}

fn base64url(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

fn form_encoded(text: &str) -> String {
    form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

#[cfg(test)]
mod tests;
