//! Opaque access tokens, checked by the authorization server's introspection endpoint
//! (RFC 7662; `--auth-introspection URL`), with serve's own client credentials read from
//! the environment (`<SERVICE>_INTROSPECTION_CLIENT_ID` and `…_SECRET`, under the same
//! rules as every other variable, the secret redacted everywhere).
//!
//! Takes: a token that is not a JWT, the issuers and the resource. Returns: the caller,
//! as a JWT would give it, or why the token is refused.
//! Must never: accept an inactive token, one without an audience naming this resource,
//! one from an issuer not configured, or one past its `exp` (or before its `nbf`) by
//! more than the leeway; nor send the token anywhere but the introspection endpoint.

use base64::Engine as _;
use serde_json::Value;

use super::{AS_LIMITS, Caller, LEEWAY_SECONDS, Refused, principal};
use crate::client::{Client, HttpRequest, Origin};

/// The introspection endpoint and serve's credentials there.
#[derive(Clone)]
pub(crate) struct Introspection {
    url: String,
    client_id: String,
    secret: String,
}

impl std::fmt::Debug for Introspection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Introspection")
            .field("url", &self.url)
            .field("client_id", &self.client_id)
            .finish_non_exhaustive()
    }
}

impl Introspection {
    pub(crate) fn new(url: &str, client_id: String, secret: String) -> Introspection {
        Introspection {
            url: url.to_string(),
            client_id,
            secret,
        }
    }

    /// The caller `token` names, if the endpoint says it is active and for this resource.
    pub(crate) async fn check(
        &self,
        token: &str,
        issuers: &[String],
        resource: &str,
    ) -> Result<Caller, Refused> {
        let refused = |why: &str| Refused(why.to_string());
        let origin = Origin::of(&self.url).ok_or_else(|| refused("no introspection endpoint"))?;
        let client = Client::without_redirects(AS_LIMITS, vec![origin])
            .map_err(|e| Refused(e.to_string()))?;
        let basic = base64::engine::general_purpose::STANDARD.encode(format!(
            "{}:{}",
            form(&self.client_id),
            form(&self.secret)
        ));
        let body = form_urlencoded::Serializer::new(String::new())
            .append_pair("token", token)
            .append_pair("token_type_hint", "access_token")
            .finish();
        let answer = client
            .send(&HttpRequest {
                method: http::Method::POST,
                url: self.url.clone(),
                headers: vec![
                    ("authorization".into(), format!("Basic {basic}")),
                    (
                        "content-type".into(),
                        "application/x-www-form-urlencoded".into(),
                    ),
                    ("accept".into(), "application/json".into()),
                ],
                body: Some(body.into_bytes()),
            })
            .await
            .map_err(|_| refused("the token could not be introspected"))?;
        if answer.status != 200 {
            return Err(refused("the token could not be introspected"));
        }
        let said: Value = serde_json::from_slice(&answer.body)
            .map_err(|_| refused("the introspection answer is not JSON"))?;
        judge(&said, issuers, resource, now())
    }
}

/// What an introspection answer `said` makes of the token, at `now`.
fn judge(said: &Value, issuers: &[String], resource: &str, now: u64) -> Result<Caller, Refused> {
    let refused = |why: &str| Err(Refused(why.to_string()));
    if said.get("active").and_then(Value::as_bool) != Some(true) {
        return refused("the token is not active");
    }
    let for_us = match said.get("aud") {
        Some(Value::String(aud)) => aud == resource,
        Some(Value::Array(auds)) => auds.iter().any(|a| a.as_str() == Some(resource)),
        _ => false,
    };
    if !for_us {
        return refused("the token is for another resource");
    }
    let issuer = match said.get("iss").and_then(Value::as_str) {
        Some(iss) if issuers.iter().any(|i| i == iss) => iss.to_string(),
        Some(_) => return refused("the token is from an issuer this server does not trust"),
        None => match issuers {
            [only] => only.clone(),
            _ => return refused("the token names no issuer"),
        },
    };
    let time = |name: &str| said.get(name).map(Value::as_u64);
    match time("exp") {
        Some(Some(exp)) if now > exp.saturating_add(LEEWAY_SECONDS) => {
            return refused("the token has expired");
        }
        Some(None) => return refused("the token's exp is not a time"),
        _ => {}
    }
    match time("nbf") {
        Some(Some(nbf)) if now.saturating_add(LEEWAY_SECONDS) < nbf => {
            return refused("the token is not valid yet");
        }
        Some(None) => return refused("the token's nbf is not a time"),
        _ => {}
    }
    // RFC 7662 leaves `sub` out for a token of no person (client credentials): the client
    // is the subject then, as RFC 9068 has a JWT's `sub` for such a token.
    let subject = said
        .get("sub")
        .or_else(|| said.get("client_id"))
        .and_then(Value::as_str);
    let Some(subject) = subject else {
        return refused("the token names no subject");
    };
    let scopes = said
        .get("scope")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_string)
        .collect();
    Ok(Caller {
        principal: principal(&issuer, subject),
        scopes,
    })
}

/// RFC 6749 section 2.3.1: the client id and secret are form-encoded before Basic.
fn form(text: &str) -> String {
    form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const R: &str = "http://127.0.0.1:8000/mcp";

    fn issuers() -> Vec<String> {
        vec!["https://auth.example.com".into()]
    }

    #[test]
    fn only_an_active_token_for_this_resource_in_its_time_is_a_caller() {
        let good = json!({"active": true, "aud": [R], "sub": "alice",
                          "iss": "https://auth.example.com", "scope": "vidgen:read",
                          "exp": 2_000, "nbf": 1_000});
        let caller = judge(&good, &issuers(), R, 1_500).unwrap();
        assert!(caller.scopes.contains("vidgen:read"));
        assert_eq!(
            caller.principal,
            principal("https://auth.example.com", "alice")
        );
        let spoiled = |key: &str, value: Value| {
            let mut said = good.clone();
            said[key] = value;
            said
        };
        for (what, said, at) in [
            ("inactive", spoiled("active", json!(false)), 1_500),
            (
                "another audience",
                spoiled("aud", json!("http://elsewhere/mcp")),
                1_500,
            ),
            ("no audience", spoiled("aud", Value::Null), 1_500),
            (
                "another issuer",
                spoiled("iss", json!("https://evil.example")),
                1_500,
            ),
            ("expired", good.clone(), 2_000 + LEEWAY_SECONDS + 1),
            ("not yet", good.clone(), 1_000 - LEEWAY_SECONDS - 1),
            ("exp as text", spoiled("exp", json!("2000")), 1_500),
            ("no subject", spoiled("sub", Value::Null), 1_500),
            (
                "no subject, no client",
                spoiled("client_id", json!(7))
                    .as_object()
                    .map(|o| {
                        let mut o = o.clone();
                        o.remove("sub");
                        Value::Object(o)
                    })
                    .unwrap(),
                1_500,
            ),
        ] {
            assert!(judge(&said, &issuers(), R, at).is_err(), "{what}: accepted");
        }
    }
}
