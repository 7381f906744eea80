//! The token checks, against an issuer of the test's own on loopback (its metadata and
//! one ES256 key, a key pair made for these tests): the attack cases the end-to-end
//! tests cannot get a real authorization server to issue — expired, not yet valid, for
//! another audience or issuer, a claim of the wrong type, `alg: none`, HMAC — and a
//! storm of made-up key ids, which fetches the issuer's keys once.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use base64::Engine as _;
use bytes::Bytes;
use http_body_util::Full;
use serde_json::{Value, json};

use super::{Verifier, principal};

/// A P-256 key pair made for these tests (PKCS#8 DER of the private key; the public
/// point's coordinates, base64url).
const PRIVATE_PKCS8: &str = "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgVYIaSpxIBtFWWolO//BNjRP0MQfJH9a3Y3zClxigfWahRANCAAQOgcygh8HZ56IUerCdFhh/jjMPWRXyN8JMCSyQU5ZXLzK9zTCVAkzn8s4E7Xmx5jvG/L42Dobp1Qv/iQBPu5Ki";
const X: &str = "DoHMoIfB2eeiFHqwnRYYf44zD1kV8jfCTAkskFOWVy8";
const Y: &str = "Mr3NMJUCTOfyzgTtebHmO8b8vjYOhunVC_-JAE-7kqI";
const KID: &str = "k1";
const RESOURCE: &str = "http://127.0.0.1:8000/mcp";

/// The test's issuer: its URL, and how often its key set was fetched.
struct Issuer {
    url: String,
    fetches: Arc<AtomicUsize>,
}

async fn issuer() -> Issuer {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let fetches = Arc::new(AtomicUsize::new(0));
    let (at, count) = (url.clone(), fetches.clone());
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let (at, count) = (at.clone(), count.clone());
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |request: http::Request<_>| {
                    let body = match request.uri().path() {
                        "/.well-known/oauth-authorization-server" => {
                            json!({"issuer": at, "jwks_uri": format!("{at}/jwks")})
                        }
                        "/jwks" => {
                            count.fetch_add(1, Ordering::SeqCst);
                            json!({"keys": [{"kty": "EC", "crv": "P-256", "kid": KID,
                                "alg": "ES256", "use": "sig", "x": X, "y": Y}]})
                        }
                        _ => Value::Null,
                    };
                    let mut response =
                        http::Response::new(Full::new(Bytes::from(body.to_string())));
                    if body.is_null() {
                        *response.status_mut() = http::StatusCode::NOT_FOUND;
                    }
                    async move { Ok::<_, Infallible>(response) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    Issuer { url, fetches }
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// Good claims from `iss` for the resource, which each case spoils one way.
fn claims(iss: &str) -> Value {
    json!({"iss": iss, "sub": "alice", "aud": RESOURCE, "scope": "vidgen:read vidgen:spend",
           "iat": now(), "exp": now() + 600})
}

/// `claims` signed with the test key, under key id `kid`.
fn signed(claims: &Value, kid: &str) -> String {
    let der = base64::engine::general_purpose::STANDARD
        .decode(PRIVATE_PKCS8)
        .unwrap();
    let key = jsonwebtoken::EncodingKey::from_ec_der(&der);
    let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::ES256);
    header.kid = Some(kid.to_string());
    jsonwebtoken::encode(&header, claims, &key).unwrap()
}

fn segment(value: &Value) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(value.to_string())
}

#[test]
fn a_token_of_a_trusted_issuer_for_this_resource_names_its_person_and_scopes() {
    crate::block_on(async {
        let issuer = issuer().await;
        let verifier = Verifier::new(std::slice::from_ref(&issuer.url), RESOURCE, None).unwrap();
        let caller = verifier
            .verify(&signed(&claims(&issuer.url), KID))
            .await
            .unwrap();
        assert_eq!(caller.principal, principal(&issuer.url, "alice"));
        assert_ne!(caller.principal, principal(&issuer.url, "bob"));
        assert!(caller.scopes.contains("vidgen:read") && caller.scopes.contains("vidgen:spend"));
        assert!(!caller.scopes.contains("vidgen:change"));
    })
    .unwrap();
}

#[test]
fn expired_early_misaddressed_foreign_or_malformed_tokens_are_refused() {
    crate::block_on(async {
        let issuer = issuer().await;
        let verifier = Verifier::new(std::slice::from_ref(&issuer.url), RESOURCE, None).unwrap();
        let spoiled = |key: &str, value: Value| {
            let mut c = claims(&issuer.url);
            if value.is_null() {
                c.as_object_mut().unwrap().remove(key);
            } else {
                c[key] = value;
            }
            c
        };
        // Past the leeway either way.
        let cases = [
            ("expired", spoiled("exp", json!(now() - 120))),
            ("not valid yet", spoiled("nbf", json!(now() + 600))),
            (
                "another audience",
                spoiled("aud", json!("http://127.0.0.1:9/mcp")),
            ),
            ("no audience", spoiled("aud", Value::Null)),
            ("no subject", spoiled("sub", Value::Null)),
            // CVE-2026-25537: a time claim of the wrong type must not skip its check.
            (
                "nbf as a string",
                spoiled("nbf", json!((now() + 600).to_string())),
            ),
            (
                "exp as a string",
                spoiled("exp", json!((now() - 120).to_string())),
            ),
            (
                "another issuer",
                spoiled("iss", json!("http://127.0.0.1:1")),
            ),
        ];
        for (what, claims) in cases {
            let refused = verifier.verify(&signed(&claims, KID)).await;
            assert!(refused.is_err(), "{what}: accepted");
        }
        // Just inside the leeway, it is still good.
        let late = spoiled("exp", json!(now() - 5));
        assert!(verifier.verify(&signed(&late, KID)).await.is_ok());
    })
    .unwrap();
}

#[test]
fn unsigned_and_hmac_tokens_are_refused_before_any_key_is_fetched() {
    crate::block_on(async {
        let issuer = issuer().await;
        let verifier = Verifier::new(std::slice::from_ref(&issuer.url), RESOURCE, None).unwrap();
        let claims = claims(&issuer.url);
        let none = format!(
            "{}.{}.",
            segment(&json!({"alg": "none", "kid": KID})),
            segment(&claims)
        );
        let hmac = {
            // The issuer's public key as an HMAC secret.
            let key = jsonwebtoken::EncodingKey::from_secret(X.as_bytes()).unwrap();
            let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256);
            header.kid = Some(KID.to_string());
            jsonwebtoken::encode(&header, &claims, &key).unwrap()
        };
        for (what, token) in [("alg none", none), ("HS256", hmac)] {
            assert!(verifier.verify(&token).await.is_err(), "{what}: accepted");
        }
        assert_eq!(issuer.fetches.load(Ordering::SeqCst), 0);
    })
    .unwrap();
}

#[test]
fn a_storm_of_unknown_key_ids_fetches_the_keys_once() {
    crate::block_on(async {
        let issuer = issuer().await;
        let verifier = Verifier::new(std::slice::from_ref(&issuer.url), RESOURCE, None).unwrap();
        let claims = claims(&issuer.url);
        for n in 0..50 {
            let token = signed(&claims, &format!("made-up-{n}"));
            assert!(verifier.verify(&token).await.is_err());
        }
        assert_eq!(issuer.fetches.load(Ordering::SeqCst), 1);
        // The real key was in that one fetch: a good token needs no other.
        assert!(verifier.verify(&signed(&claims, KID)).await.is_ok());
        assert_eq!(issuer.fetches.load(Ordering::SeqCst), 1);
    })
    .unwrap();
}

#[test]
fn an_issuer_is_reached_over_https_or_on_this_machine() {
    assert!(Verifier::new(&["http://auth.example.com".into()], RESOURCE, None).is_err());
    assert!(Verifier::new(&["https://auth.example.com".into()], RESOURCE, None).is_ok());
    assert!(Verifier::new(&["http://127.0.0.1:4444".into()], RESOURCE, None).is_ok());
}
