//! What needs no authorization server: the S256 challenge, the authorization URL, the
//! token answers read (a refresh that keeps the old refresh token and scope), errors
//! sorted by whose they are and scrubbed of secrets, and `Debug` without secrets. The
//! flow against a real server is the root package's `runtime::provider_oauth`.

use std::io::{Read as _, Write as _};

use super::*;

fn registration() -> Registration {
    Registration {
        authorization_url: "https://auth.example.com/authorize?tenant=t1".into(),
        token_url: "https://auth.example.com/token".into(),
        revocation_url: None,
        client_id: "serve id".into(),
        client_secret: Some("s3cret-of-serve".into()),
        redirect_uri: "https://serve.example.com/connect/callback".into(),
        scopes: vec!["videos.read".into(), "videos.write".into()],
    }
}

fn answer(status: u16, body: &str) -> HttpResponse {
    HttpResponse {
        status,
        headers: vec![],
        body: body.as_bytes().to_vec(),
    }
}

/// RFC 7636 appendix B's example pair.
#[test]
fn the_challenge_is_rfc_7636_s256() {
    assert_eq!(
        challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
        "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
    );
}

#[test]
fn the_authorization_url_carries_the_request_and_a_fresh_pkce_pair() {
    let oauth = ProviderOAuth::new(registration()).unwrap();
    let state = "st8 +/=&?#é";
    let first = oauth.start(state).unwrap();
    let url = reqwest::Url::parse(&first.url).unwrap();
    assert_eq!(url.path(), "/authorize");
    let pairs: Vec<(String, String)> = url.query_pairs().into_owned().collect();
    let get = |name: &str| {
        let found: Vec<&str> = pairs
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
            .collect();
        assert_eq!(found.len(), 1, "{name} once in {pairs:?}");
        found[0].to_string()
    };
    assert_eq!(get("tenant"), "t1", "the endpoint's own query is kept");
    assert_eq!(get("response_type"), "code");
    assert_eq!(get("client_id"), "serve id");
    assert_eq!(
        get("redirect_uri"),
        "https://serve.example.com/connect/callback"
    );
    assert_eq!(get("scope"), "videos.read videos.write");
    assert_eq!(get("state"), state);
    assert_eq!(get("code_challenge_method"), "S256");
    assert_eq!(get("code_challenge"), challenge(&first.verifier));
    // RFC 7636 section 4.1: 43 to 128 characters of the unreserved set.
    assert_eq!(first.verifier.len(), 43);
    assert!(
        first
            .verifier
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    );
    assert!(!first.url.contains(&first.verifier), "only the challenge");
    let second = oauth.start(state).unwrap();
    assert_ne!(first.verifier, second.verifier, "a new verifier each time");
}

#[test]
fn no_scope_parameter_without_scopes() {
    let oauth = ProviderOAuth::new(Registration {
        scopes: vec![],
        ..registration()
    })
    .unwrap();
    let started = oauth.start("s").unwrap();
    assert!(!started.url.contains("scope="), "{}", started.url);
}

#[test]
fn endpoints_off_loopback_must_be_https() {
    let refused = |what: &str, spoiled: Registration| {
        assert!(
            matches!(
                ProviderOAuth::new(spoiled),
                Err(OAuthError::Misconfigured(_))
            ),
            "{what}: accepted"
        );
    };
    let http = "http://auth.example.com/x".to_string();
    refused(
        "token",
        Registration {
            token_url: http.clone(),
            ..registration()
        },
    );
    refused(
        "authorize",
        Registration {
            authorization_url: http.clone(),
            ..registration()
        },
    );
    refused(
        "revoke",
        Registration {
            revocation_url: Some(http.clone()),
            ..registration()
        },
    );
    refused(
        "callback",
        Registration {
            redirect_uri: http,
            ..registration()
        },
    );
    refused(
        "fragment",
        Registration {
            redirect_uri: "https://serve.example.com/cb#x".into(),
            ..registration()
        },
    );
    refused(
        "not a URL",
        Registration {
            token_url: "token".into(),
            ..registration()
        },
    );
    refused(
        "no client",
        Registration {
            client_id: String::new(),
            ..registration()
        },
    );
    let mut local = registration();
    local.token_url = "http://127.0.0.1:8080/token".into();
    local.redirect_uri = "http://localhost:3000/cb".into();
    assert!(ProviderOAuth::new(local).is_ok(), "loopback may be http");
}

#[test]
fn a_token_answer_gives_tokens_and_when_they_expire() {
    let got = tokens(
        &answer(
            200,
            r#"{"access_token":"at1","token_type":"bearer","expires_in":600,
                "refresh_token":"rt1","scope":"videos.read"}"#,
        ),
        None,
        1_000,
        &[],
    )
    .unwrap();
    assert_eq!(
        got,
        Tokens {
            access_token: "at1".into(),
            refresh_token: Some("rt1".into()),
            expires_at: Some(1_600),
            scope: Some("videos.read".into()),
        }
    );
    assert!(!got.due(1_000, 60));
    assert!(!got.due(1_539, 60));
    assert!(got.due(1_540, 60), "within the margin");
    assert!(got.due(2_000, 0));
    // expires_in as a string, as some servers send it; none at all: never due.
    let text = r#"{"access_token":"a","token_type":"Bearer","expires_in":"30"}"#;
    assert_eq!(
        tokens(&answer(200, text), None, 5, &[]).unwrap().expires_at,
        Some(35)
    );
    let forever = tokens(
        &answer(200, r#"{"access_token":"a","token_type":"Bearer"}"#),
        None,
        5,
        &[],
    )
    .unwrap();
    assert_eq!(forever.expires_at, None);
    assert!(!forever.due(u64::MAX, 60));
}

#[test]
fn a_refresh_without_a_new_refresh_token_keeps_the_old_one_and_its_scope() {
    let old = Tokens {
        access_token: "at1".into(),
        refresh_token: Some("rt1".into()),
        expires_at: Some(10),
        scope: Some("videos.read".into()),
    };
    let kept = tokens(
        &answer(
            200,
            r#"{"access_token":"at2","token_type":"Bearer","expires_in":60}"#,
        ),
        Some(&old),
        100,
        &[],
    )
    .unwrap();
    assert_eq!(kept.access_token, "at2");
    assert_eq!(kept.refresh_token.as_deref(), Some("rt1"));
    assert_eq!(kept.scope.as_deref(), Some("videos.read"));
    assert_eq!(kept.expires_at, Some(160));
    let rotated = tokens(
        &answer(
            200,
            r#"{"access_token":"at3","token_type":"Bearer","refresh_token":"rt2","scope":"videos.read videos.write"}"#,
        ),
        Some(&old),
        100,
        &[],
    )
    .unwrap();
    assert_eq!(rotated.refresh_token.as_deref(), Some("rt2"));
    assert_eq!(rotated.scope.as_deref(), Some("videos.read videos.write"));
}

#[test]
fn answers_that_are_not_bearer_tokens_are_not_tokens() {
    for (body, misconfigured) in [
        (r#"{"access_token":"a","token_type":"DPoP"}"#, true),
        (r#"{"access_token":"a"}"#, false),
        (r#"{"token_type":"Bearer"}"#, false),
        (r#"{"access_token":"","token_type":"Bearer"}"#, false),
        (
            r#"{"access_token":"a","token_type":"Bearer","expires_in":-1}"#,
            false,
        ),
        ("<html>", false),
    ] {
        let error = tokens(&answer(200, body), None, 0, &[]).unwrap_err();
        assert_eq!(
            matches!(error, OAuthError::Misconfigured(_)),
            misconfigured,
            "{body}: {error:?}"
        );
        assert!(
            matches!(
                error,
                OAuthError::Misconfigured(_) | OAuthError::Unavailable(_)
            ),
            "{body}: {error:?}"
        );
    }
}

/// The person reconnects only when their grant is gone; serve's own registration and a
/// server that is down are not the person's to fix.
#[test]
fn errors_are_sorted_by_whose_they_are() {
    let refused = |status: u16, body: &str| failure(&answer(status, body), &[]);
    assert_eq!(
        refused(
            400,
            r#"{"error":"invalid_grant","error_description":"grant request is invalid"}"#
        ),
        OAuthError::Refused {
            error: "invalid_grant".into(),
            description: Some("grant request is invalid".into()),
        }
    );
    for body in [
        r#"{"error":"invalid_client"}"#,
        r#"{"error":"unauthorized_client"}"#,
        r#"{"error":"unsupported_grant_type"}"#,
    ] {
        assert!(
            matches!(refused(400, body), OAuthError::Misconfigured(_)),
            "{body}"
        );
    }
    assert!(matches!(refused(401, ""), OAuthError::Misconfigured(_)));
    for (status, body) in [
        (500, r#"{"error":"invalid_grant"}"#),
        (503, ""),
        (429, r#"{"error":"invalid_grant"}"#),
        (400, r#"{"error":"temporarily_unavailable"}"#),
        (404, "<html>not here</html>"),
        (302, ""),
    ] {
        assert!(
            matches!(refused(status, body), OAuthError::Unavailable(_)),
            "{status} {body}"
        );
    }
}

#[test]
fn no_error_repeats_a_secret_the_request_carried() {
    let secrets = ["the-refresh-token-value", "s3cret-of-serve"];
    let long = format!("{}the-refresh-token-value", "x".repeat(190));
    for body in [
        r#"{"error":"invalid_grant","error_description":"token the-refresh-token-value is revoked"}"#.to_string(),
        r#"{"error":"invalid_grant","error_description":"client secret s3cret-of-serve"}"#.to_string(),
        format!(r#"{{"error":"invalid_grant","error_description":"{long}"}}"#),
        r#"{"error":"the-refresh-token-value"}"#.to_string(),
        r#"{"error":"invalid_client","error_description":"the-refresh-token-value"}"#.to_string(),
    ] {
        let error = failure(&answer(400, &body), &secrets);
        let shown = format!("{error} {error:?}");
        for secret in secrets {
            assert!(!shown.contains(secret), "{shown}");
            assert!(!shown.contains(&secret[..12]), "a secret's start: {shown}");
        }
    }
    let weird = failure(&answer(400, r#"{"error":"bad\"code\n"}"#), &[]);
    assert!(
        matches!(&weird, OAuthError::Refused { error, .. } if !error.contains('"')),
        "{weird:?}"
    );
}

#[test]
fn debug_shows_no_secret() {
    let tokens = Tokens {
        access_token: "the-access-token".into(),
        refresh_token: Some("the-refresh-token".into()),
        expires_at: Some(5),
        scope: None,
    };
    let oauth = ProviderOAuth::new(registration()).unwrap();
    let started = oauth.start("s").unwrap();
    let shown = format!(
        "{tokens:?} {oauth:?} {:?} {started:?}",
        oauth.registration()
    );
    for secret in [
        "the-access-token",
        "the-refresh-token",
        "s3cret-of-serve",
        started.verifier.as_str(),
    ] {
        assert!(!shown.contains(secret), "{secret} in {shown}");
    }
    assert!(shown.contains("expires_at: Some(5)"), "{shown}");
}

#[test]
fn tokens_keep_as_json() {
    let tokens = Tokens {
        access_token: "a".into(),
        refresh_token: None,
        expires_at: Some(7),
        scope: Some("x y".into()),
    };
    let text = serde_json::to_string(&tokens).unwrap();
    assert_eq!(serde_json::from_str::<Tokens>(&text).unwrap(), tokens);
    // Kept before `scope` existed, or without one.
    let older: Tokens =
        serde_json::from_str(r#"{"access_token":"a","refresh_token":"r","expires_at":null}"#)
            .unwrap();
    assert_eq!(older.scope, None);
}

#[test]
fn a_callback_gives_its_state_and_its_code_or_error() {
    let ok = Callback::parse("code=c%2B1&state=st8+%2B%2F%3D%26%3F&iss=https%3A%2F%2Fa");
    assert_eq!(ok.state.as_deref(), Some("st8 +/=&?"));
    assert_eq!(ok.code, Ok("c+1".to_string()));
    let denied = Callback::parse("error=access_denied&error_description=no+thanks&state=s");
    assert_eq!(denied.state.as_deref(), Some("s"));
    assert_eq!(
        denied.code,
        Err(OAuthError::Refused {
            error: "access_denied".into(),
            description: Some("no thanks".into()),
        })
    );
    let neither = Callback::parse("state=s");
    assert!(matches!(neither.code, Err(OAuthError::Refused { .. })));
    let twice = Callback::parse("code=a&code=b&state=s");
    assert!(twice.code.is_err());
    assert_eq!(twice.state.as_deref(), Some("s"));
    let two_states = Callback::parse("code=a&state=s&state=t");
    assert!(two_states.code.is_err());
    assert_eq!(two_states.state, None, "a repeated state names no one");
}

/// A one-request HTTP server on loopback answering `status` with the JSON `body`; the
/// thread returns the request it read (head and body).
fn serve_once(status: &str, body: &str) -> (String, std::thread::JoinHandle<String>) {
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let handle = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let mut read = Vec::new();
        let mut buf = [0u8; 4096];
        // The head, then as much body as it announces.
        loop {
            let n = stream.read(&mut buf).unwrap();
            read.extend_from_slice(&buf[..n]);
            let text = String::from_utf8_lossy(&read).to_string();
            if let Some(end) = text.find("\r\n\r\n") {
                let length = text
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase()
                            .strip_prefix("content-length: ")
                            .map(str::to_string)
                    })
                    .and_then(|n| n.trim().parse::<usize>().ok())
                    .unwrap_or(0);
                if read.len() >= end + 4 + length || n == 0 {
                    break;
                }
            }
        }
        stream.write_all(response.as_bytes()).unwrap();
        String::from_utf8_lossy(&read).into_owned()
    });
    (url, handle)
}

fn at(url: &str, secret: Option<&str>) -> ProviderOAuth {
    ProviderOAuth::new(Registration {
        token_url: format!("{url}/token"),
        revocation_url: Some(format!("{url}/revoke")),
        client_secret: secret.map(str::to_string),
        ..registration()
    })
    .unwrap()
}

fn kept() -> Tokens {
    Tokens {
        access_token: "at-kept".into(),
        refresh_token: Some("rt-kept".into()),
        expires_at: Some(1),
        scope: None,
    }
}

/// RFC 6749 section 2.3.1: the id and secret are form-encoded, then Base64; the body
/// then carries no `client_id`. A public client puts it in the body.
#[test]
fn serve_authenticates_with_basic_or_as_a_public_client() {
    let ok = r#"{"access_token":"at2","token_type":"Bearer"}"#;
    let (url, server) = serve_once("200 OK", ok);
    let oauth = at(&url, Some("s3cret:+/"));
    let got = crate::block_on(oauth.refresh(&kept(), 50))
        .unwrap()
        .unwrap();
    assert_eq!(got.refresh_token.as_deref(), Some("rt-kept"));
    let request = server.join().unwrap();
    let basic = base64::engine::general_purpose::STANDARD.encode("serve+id:s3cret%3A%2B%2F");
    assert!(request.starts_with("POST /token HTTP/1.1\r\n"), "{request}");
    assert!(
        request.contains(&format!("authorization: Basic {basic}\r\n")),
        "{request}"
    );
    assert!(
        request.ends_with("\r\n\r\ngrant_type=refresh_token&refresh_token=rt-kept"),
        "{request}"
    );

    let (url, server) = serve_once("200 OK", ok);
    crate::block_on(at(&url, None).exchange("the code", "the-verifier", 0))
        .unwrap()
        .unwrap();
    let request = server.join().unwrap();
    assert!(!request.contains("authorization:"), "{request}");
    assert!(
        request.ends_with(
            "\r\n\r\ngrant_type=authorization_code&code=the+code\
             &redirect_uri=https%3A%2F%2Fserve.example.com%2Fconnect%2Fcallback\
             &code_verifier=the-verifier&client_id=serve+id"
        ),
        "{request}"
    );
}

/// The kind of failure decides what the caller does with the kept tokens: drop them and
/// ask the person again (`Refused`), or keep them and try later (`Unavailable`).
#[test]
fn a_refused_refresh_is_told_from_a_server_that_is_down() {
    let (url, server) = serve_once("400 Bad Request", r#"{"error":"invalid_grant"}"#);
    let refused = crate::block_on(at(&url, Some("s3cret-of-serve")).refresh(&kept(), 0)).unwrap();
    assert!(
        matches!(&refused, Err(OAuthError::Refused { error, .. }) if error == "invalid_grant"),
        "{refused:?}"
    );
    server.join().unwrap();
    let (url, server) = serve_once("503 Service Unavailable", "");
    let down = crate::block_on(at(&url, Some("s3cret-of-serve")).refresh(&kept(), 0)).unwrap();
    assert!(matches!(down, Err(OAuthError::Unavailable(_))), "{down:?}");
    server.join().unwrap();
    // Nothing listens there any more.
    let gone = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", listener.local_addr().unwrap())
    };
    let unreachable =
        crate::block_on(at(&gone, Some("s3cret-of-serve")).refresh(&kept(), 0)).unwrap();
    assert!(
        matches!(unreachable, Err(OAuthError::Unavailable(_))),
        "{unreachable:?}"
    );
    let none = crate::block_on(ProviderOAuth::new(registration()).unwrap().refresh(
        &Tokens {
            refresh_token: None,
            ..kept()
        },
        0,
    ))
    .unwrap();
    assert!(matches!(none, Err(OAuthError::Refused { .. })), "{none:?}");
}

#[test]
fn without_a_revocation_endpoint_revoking_sends_nothing() {
    // registration() has none, and its token endpoint is not contacted.
    let oauth = ProviderOAuth::new(registration()).unwrap();
    assert_eq!(crate::block_on(oauth.revoke(&kept())).unwrap(), Ok(()));
}
