//! What the provider's token and revocation endpoints answered: the `Tokens`, or an
//! `OAuthError` sorted by whose problem it is (the person's grant, serve's registration,
//! or a server that is down), in words that hold none of the secrets the request carried.
//!
//! Takes: an answer, the tokens a refresh started from, the time, and the secrets the
//! request carried. Returns: tokens, or the error.
//! Must never: put one of those secrets, or a control character, in an error; or take a
//! token that is not a Bearer token.

use serde_json::Value;

use super::{OAuthError, REDACTED, Tokens, colon};
use crate::client::HttpResponse;

/// Error codes that name serve's registration, not the person's grant (RFC 6749 5.2).
const CLIENT_ERRORS: &[&str] = &[
    "invalid_client",
    "unauthorized_client",
    "unsupported_grant_type",
];

/// Error codes that say "later" whatever the status (RFC 6749 4.1.2.1).
const TRANSIENT_ERRORS: &[&str] = &["server_error", "temporarily_unavailable"];

/// The tokens a token endpoint's answer holds; `previous` (a refresh) lends its refresh
/// token and scope where the answer has none.
pub(super) fn tokens(
    answer: &HttpResponse,
    previous: Option<&Tokens>,
    now: u64,
    secrets: &[&str],
) -> Result<Tokens, OAuthError> {
    if answer.status != 200 {
        return Err(failure(answer, secrets));
    }
    let unusable = |why: &str| OAuthError::Unavailable(format!("the token answer {why}"));
    let said: Value = serde_json::from_slice(&answer.body).map_err(|_| unusable("is not JSON"))?;
    let text = |name: &str| {
        said.get(name)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    let access_token = text("access_token").ok_or_else(|| unusable("has no access_token"))?;
    match text("token_type") {
        Some(kind) if kind.eq_ignore_ascii_case("bearer") => {}
        Some(kind) => {
            return Err(OAuthError::Misconfigured(format!(
                "the provider issues {} tokens; serve sends Bearer tokens only",
                scrub(&kind, secrets)
            )));
        }
        None => return Err(unusable("has no token_type")),
    }
    // A number, as RFC 6749 has it; some servers send it as a string.
    let expires_in = match said.get("expires_in") {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) => Some(n.as_u64().ok_or_else(|| unusable("has a bad expires_in"))?),
        Some(Value::String(s)) => Some(s.parse().map_err(|_| unusable("has a bad expires_in"))?),
        Some(_) => return Err(unusable("has a bad expires_in")),
    };
    Ok(Tokens {
        access_token,
        refresh_token: text("refresh_token").or_else(|| previous?.refresh_token.clone()),
        expires_at: expires_in.map(|seconds| now.saturating_add(seconds)),
        scope: text("scope").or_else(|| previous?.scope.clone()),
    })
}

/// Why an endpoint that answered `answer` (not 200) gave nothing.
pub(super) fn failure(answer: &HttpResponse, secrets: &[&str]) -> OAuthError {
    let said: Option<Value> = serde_json::from_slice(&answer.body).ok();
    let field = |name: &str| {
        said.as_ref()
            .and_then(|v| v.get(name))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let status = answer.status;
    match field("error") {
        Some(error) if status < 500 && status != 429 => {
            refusal(&error, field("error_description").as_deref(), secrets)
        }
        _ if status == 401 => OAuthError::Misconfigured(
            "the authorization server does not accept serve's client authentication (401)".into(),
        ),
        _ => OAuthError::Unavailable(format!("the authorization server answered {status}")),
    }
}

/// An OAuth error code and description, sorted by whose it is, in words safe to show.
pub(super) fn refusal(error: &str, description: Option<&str>, secrets: &[&str]) -> OAuthError {
    // RFC 6749's error codes are short printable ASCII without `"` or `\`.
    let error = if !error.is_empty()
        && error.len() <= 64
        && error
            .bytes()
            .all(|b| matches!(b, 0x20..=0x21 | 0x23..=0x5b | 0x5d..=0x7e))
    {
        scrub(error, secrets)
    } else {
        "an error code outside RFC 6749's characters".to_string()
    };
    let description = description.map(|d| scrub(d, secrets));
    if CLIENT_ERRORS.contains(&error.as_str()) {
        OAuthError::Misconfigured(format!("{error}{}", colon(description.as_deref())))
    } else if TRANSIENT_ERRORS.contains(&error.as_str()) {
        OAuthError::Unavailable(format!("{error}{}", colon(description.as_deref())))
    } else {
        OAuthError::Refused { error, description }
    }
}

/// `text` with each of `secrets` replaced (the authorization server's own words may
/// repeat what it was sent), then without control characters and at most 200 characters:
/// replaced before it is cut, so that no part of a secret is left at the cut.
pub(super) fn scrub(text: &str, secrets: &[&str]) -> String {
    let mut clean = text.to_string();
    for secret in secrets.iter().filter(|s| !s.is_empty()) {
        clean = clean.replace(secret, REDACTED);
    }
    clean
        .chars()
        .filter(|c| !c.is_control())
        .take(200)
        .collect()
}
