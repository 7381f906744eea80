//! The authorization server the inbound-OAuth tests run (issue 45; `support::authz`,
//! oidc-provider on loopback) issues what those tests rely on: ES256 JWT access tokens
//! bound to the requested resource (RFC 8707) with the requested scope, a refusal for a
//! scope it does not allow, distinct principals for two people, and opaque tokens that
//! introspection reports inactive once revoked.
//!
//! Takes: node and npm (the helper installs oidc-provider on first use). Returns: nothing
//! but assertions. Must never: verify signatures here (serve's tests do that, against the
//! server's JWKS); this only reads what the server put in its tokens.

use base64::Engine as _;
use serde_json::Value;

use crate::support::authz::{ALICE, AuthServer, BOB};

const SCOPES: &str = "vidgen:read vidgen:change vidgen:spend";
/// A resource no one listens on: the server issues tokens for any loopback resource.
const RESOURCE: &str = "http://127.0.0.1:9/mcp";

/// A JWT's header and claims, undecoded by any key.
fn parts(jwt: &str) -> (Value, Value) {
    let segments: Vec<&str> = jwt.split('.').collect();
    assert_eq!(segments.len(), 3, "a JWS in compact form: {jwt}");
    let decode = |segment: &str| -> Value {
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(segment)
            .unwrap_or_else(|e| panic!("base64url ({e}): {segment}"));
        serde_json::from_slice(&bytes).expect("a JSON segment")
    };
    (decode(segments[0]), decode(segments[1]))
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_secs()
}

#[test]
fn the_authorization_server_issues_audience_bound_jwts_refuses_unknown_scopes_and_revokes() {
    let server = AuthServer::start(SCOPES);
    let issuer = server.issuer();
    assert!(issuer.starts_with("http://127.0.0.1:"), "{issuer}");
    assert_eq!(server.metadata()["issuer"], issuer.as_str());

    let token = server.token(ALICE, RESOURCE, "vidgen:read");
    let (header, claims) = parts(&token);
    assert_eq!(header["alg"], "ES256", "{header}");
    assert_eq!(header["typ"], "at+jwt", "RFC 9068: {header}");
    let kid = header["kid"].as_str().expect("a kid");
    let jwks = crate::support::http::request(
        "GET",
        server.metadata()["jwks_uri"].as_str().expect("jwks_uri"),
        &[],
        "",
    )
    .json();
    assert!(
        jwks["keys"]
            .as_array()
            .is_some_and(|keys| keys.iter().any(|k| k["kid"] == kid && k.get("d").is_none())),
        "the signing key is published, public part only: {jwks}"
    );
    assert_eq!(claims["iss"], issuer.as_str(), "{claims}");
    assert_eq!(claims["aud"], RESOURCE, "{claims}");
    assert_eq!(claims["scope"], "vidgen:read", "{claims}");
    assert_eq!(claims["client_id"], ALICE, "{claims}");
    assert_eq!(claims["sub"], ALICE, "{claims}");
    let exp = claims["exp"].as_u64().expect("exp");
    assert!(
        exp > now() && exp <= now() + 3600,
        "exp in the next hour: {claims}"
    );

    // Two people: the same request by another client is another principal.
    let (_, bobs) = parts(&server.token(BOB, RESOURCE, "vidgen:read vidgen:spend"));
    assert_eq!(bobs["sub"], BOB, "{bobs}");
    assert_eq!(bobs["scope"], "vidgen:read vidgen:spend", "{bobs}");

    // A scope the server does not allow is refused, not silently dropped.
    let refused = server.token_request(ALICE, RESOURCE, "vidgen:read vidgen:admin");
    assert_eq!(refused.status, 400, "{}", refused.body);
    assert_eq!(refused.json()["error"], "invalid_scope", "{}", refused.body);
    // And a resource off loopback gets no token at all.
    let elsewhere = server.token_request(ALICE, "https://example.com/mcp", "vidgen:read");
    assert_eq!(
        elsewhere.json()["error"],
        "invalid_target",
        "{}",
        elsewhere.body
    );

    // An opaque token is active until revoked, then inactive.
    let opaque = server.opaque_token(ALICE, RESOURCE, "vidgen:read");
    assert_eq!(opaque.split('.').count(), 1, "not a JWT: {opaque}");
    let live = server.introspect(&opaque);
    assert_eq!(live["active"], true, "{live}");
    assert_eq!(live["aud"], RESOURCE, "{live}");
    assert_eq!(live["client_id"], ALICE, "{live}");
    assert!(server.introspection_url().starts_with(&issuer));
    server.revoke(&opaque);
    let revoked = server.introspect(&opaque);
    assert_eq!(revoked, serde_json::json!({ "active": false }));
}
