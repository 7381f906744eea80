//! `serve` as the provider's OAuth client (issue 46; the runtime's `provider_oauth`)
//! against a real authorization server playing the provider's (`AuthServer::provider`:
//! oidc-provider with serve's registration, PKCE required, refresh tokens, revocation,
//! and logins that complete by themselves): the authorization URL followed to the
//! callback, the code exchanged, the access token accepted by the server, a refresh, a
//! refresh refused once the grant is gone, revocation, PKCE enforced.
//!
//! Takes: node and npm (the helper installs oidc-provider on first use). Returns: nothing
//! but assertions. Must never: make a token itself; each token here is the server's, and
//! what it grants is read back from the server (RFC 7662 introspection).

use connectorgen_runtime::provider_oauth::{
    Callback, OAuthError, ProviderOAuth, Registration, Tokens,
};
use serde_json::Value;

use crate::support::authz::{AuthServer, SERVE, SERVE_PUBLIC};

/// The provider API's scopes.
const SCOPES: &str = "videos.read videos.write";
/// serve's callback, as registered at the provider. Nothing listens there: the flow stops
/// at the redirect to it, as a browser would hand it to serve.
const REDIRECT: &str = "http://127.0.0.1:9/connect/callback";
/// The person who signs in at the provider.
const SUBJECT: &str = "person-7";
/// The provider's API, the resource its tokens are for.
const API: &str = "http://127.0.0.1:9/api";
/// A state as opaque as the caller's: characters a URL must encode, and one outside ASCII.
const STATE: &str = "st8 +/=&?#é-7f3a";
/// The lifetime the server gives access tokens (`--access-token-ttl`'s default).
const TTL: u64 = 600;

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_secs()
}

fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
        .block_on(future)
}

/// serve's registration at `server` as `client` (`SERVE`: with its secret; `SERVE_PUBLIC`:
/// without). The token endpoint with `?format=opaque`, so the access tokens introspect.
fn oauth(server: &AuthServer, client: &str) -> ProviderOAuth {
    ProviderOAuth::new(Registration {
        authorization_url: server.endpoint_url("authorization_endpoint"),
        token_url: format!("{}?format=opaque", server.endpoint_url("token_endpoint")),
        revocation_url: Some(server.endpoint_url("revocation_endpoint")),
        client_id: client.to_string(),
        client_secret: (client == SERVE).then(|| server.client_secret(SERVE)),
        redirect_uri: REDIRECT.to_string(),
        scopes: vec!["videos.read".to_string()],
    })
    .expect("a valid registration")
}

/// The person connects: `start`, the browser through the provider, the callback read.
/// Returns the callback and the verifier `start` gave.
fn connect(server: &AuthServer, oauth: &ProviderOAuth) -> (Callback, String) {
    let started = oauth.start(STATE).expect("an authorization URL");
    let callback = server.authorize(&started.url, REDIRECT);
    let Some((_, query)) = callback.split_once('?') else {
        panic!("a callback with a query: {callback}");
    };
    (Callback::parse(query), started.verifier)
}

/// Connects and exchanges the code: the person's first tokens.
fn tokens(server: &AuthServer, oauth: &ProviderOAuth) -> Tokens {
    let (callback, verifier) = connect(server, oauth);
    let code = callback.code.expect("a code");
    block_on(oauth.exchange(&code, &verifier, now())).expect("tokens for the code")
}

/// What the server says `token` is (RFC 7662, asked by its resource-server client).
fn introspect(server: &AuthServer, token: &str) -> Value {
    server.introspect(token)
}

fn assert_works(server: &AuthServer, token: &str, client: &str) {
    let said = introspect(server, token);
    assert_eq!(said["active"], true, "{said}");
    assert_eq!(said["sub"], SUBJECT, "the person who signed in: {said}");
    assert_eq!(said["client_id"], client, "{said}");
    assert_eq!(said["aud"], API, "{said}");
    assert_eq!(said["scope"], "videos.read", "{said}");
}

fn refused(result: Result<Tokens, OAuthError>) -> String {
    match result {
        Err(OAuthError::Refused { error, .. }) => error,
        other => panic!("refused expected, got {other:?}"),
    }
}

#[test]
fn a_person_connects_their_token_works_refreshes_and_a_revoked_grant_is_refused() {
    let server = AuthServer::provider(SCOPES, REDIRECT, SUBJECT, API);
    let oauth = oauth(&server, SERVE);

    let (callback, verifier) = connect(&server, &oauth);
    assert_eq!(
        callback.state.as_deref(),
        Some(STATE),
        "the state comes back unchanged"
    );
    let code = callback.code.expect("a code");
    let before = now();
    let first = block_on(oauth.exchange(&code, &verifier, before)).expect("tokens for the code");
    assert_works(&server, &first.access_token, SERVE);
    assert_eq!(first.expires_at, Some(before + TTL), "{first:?}");
    assert_eq!(first.scope.as_deref(), Some("videos.read"));
    assert!(first.refresh_token.is_some(), "a refresh token: {first:?}");
    assert!(!first.due(before, 60) && first.due(before + TTL - 60, 60));

    let second = block_on(oauth.refresh(&first, now())).expect("a refresh");
    assert_ne!(
        second.access_token, first.access_token,
        "a new access token"
    );
    assert_works(&server, &second.access_token, SERVE);
    // A confidential client's refresh token is not rotated here: kept either way.
    assert_eq!(second.refresh_token, first.refresh_token);

    // The grant ends at the provider (the person, or the provider, revokes it).
    server.revoke_as(SERVE, second.refresh_token.as_deref().unwrap());
    assert_eq!(
        refused(block_on(oauth.refresh(&second, now()))),
        "invalid_grant"
    );
    assert_eq!(introspect(&server, &second.access_token)["active"], false);
}

#[test]
fn disconnecting_revokes_the_grant() {
    let server = AuthServer::provider(SCOPES, REDIRECT, SUBJECT, API);
    let oauth = oauth(&server, SERVE);
    let tokens = tokens(&server, &oauth);
    assert_works(&server, &tokens.access_token, SERVE);
    block_on(oauth.revoke(&tokens)).expect("revoked");
    assert_eq!(introspect(&server, &tokens.access_token)["active"], false);
    assert_eq!(
        refused(block_on(oauth.refresh(&tokens, now()))),
        "invalid_grant"
    );
    // Revoking again is not an error (RFC 7009 section 2.2: an invalid token is 200).
    block_on(oauth.revoke(&tokens)).expect("revoked twice");
}

/// RFC 7636: the code is bound to the challenge in the authorization URL; a verifier
/// that is not its own gets nothing, and the code is still good with its own. Then RFC
/// 6749 section 4.1.2: a code is good once, and its second use ends the grant it gave.
#[test]
fn a_code_with_another_verifier_is_refused_and_a_code_is_good_once() {
    let server = AuthServer::provider(SCOPES, REDIRECT, SUBJECT, API);
    let oauth = oauth(&server, SERVE);
    let (callback, verifier) = connect(&server, &oauth);
    let other = oauth.start("another").expect("another pair").verifier;
    let code = callback.code.expect("a code");
    assert_eq!(
        refused(block_on(oauth.exchange(&code, &other, now()))),
        "invalid_grant"
    );
    let tokens = block_on(oauth.exchange(&code, &verifier, now())).expect("its own verifier");
    assert_works(&server, &tokens.access_token, SERVE);
    assert_eq!(
        refused(block_on(oauth.exchange(&code, &verifier, now()))),
        "invalid_grant"
    );
    assert_eq!(
        refused(block_on(oauth.refresh(&tokens, now()))),
        "invalid_grant"
    );
}

/// A public client (no secret): `client_id` in the body, PKCE alone. oidc-provider rotates
/// its refresh tokens and ends the grant when a rotated one is used again, as a stolen
/// copy would be: the refresh is refused and so is the newer token.
#[test]
fn a_public_client_connects_and_a_reused_refresh_token_ends_the_grant() {
    let server = AuthServer::provider(SCOPES, REDIRECT, SUBJECT, API);
    let oauth = oauth(&server, SERVE_PUBLIC);
    let first = tokens(&server, &oauth);
    assert_works(&server, &first.access_token, SERVE_PUBLIC);
    let second = block_on(oauth.refresh(&first, now())).expect("a refresh");
    assert_works(&server, &second.access_token, SERVE_PUBLIC);
    assert!(
        second.refresh_token.is_some() && second.refresh_token != first.refresh_token,
        "rotated"
    );
    assert_eq!(
        refused(block_on(oauth.refresh(&first, now()))),
        "invalid_grant"
    );
    assert_eq!(
        refused(block_on(oauth.refresh(&second, now()))),
        "invalid_grant"
    );
}
