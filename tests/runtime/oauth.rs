//! `serve --http --auth-issuer` end to end (issue 45): the real binary as a resource
//! server in front of the reference provider, tokens from a real authorization server
//! (`support::authz`: oidc-provider on loopback, ES256 JWT access tokens bound to the
//! resource). What a request without a good token is answered, what a token's scopes
//! let it call, that two people on one instance are two principals, and that the inbound
//! token goes nowhere. Every wait is on something a server did, never on time.

use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};

use super::e2e::Test;
use super::http;
use super::mcp::{Answer, Listening, Person, Revision, is_error, serve_meta, text_of};
use super::provider::{Provider, Switches};
use crate::support::authz::{ALICE, AuthServer, BOB};

const SCOPES: &str = "vidgen:read vidgen:change vidgen:spend";

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

fn cat() -> Value {
    json!({ "prompt": "a cat on a skateboard", "aspectRatio": "16:9" })
}

fn call(name: &str, args: Value) -> CallToolRequestParams {
    let Value::Object(args) = args else {
        unreachable!()
    };
    CallToolRequestParams::new(name.to_string()).with_arguments(args)
}

/// `POST url body` as an MCP client sends it, with `token` as its bearer token.
fn post(url: &str, token: Option<&str>, body: &str) -> http::Answer {
    let bearer = token.map(|t| format!("Bearer {t}"));
    let mut headers = vec![
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
    ];
    if let Some(bearer) = &bearer {
        headers.push(("authorization", bearer));
    }
    http::request("POST", url, &headers, body)
}

/// The reference provider, the authorization server, and `serve --http` trusting it.
async fn started() -> (Provider, AuthServer, Test, Listening) {
    let p = Provider::start(Switches::default());
    let auth = AuthServer::start(SCOPES);
    let t = Test::new(&p.url()).arg("--auth-issuer").arg(&auth.issuer());
    let listening = t.server().listen().await;
    (p, auth, t, listening)
}

/// Base64url of `value`'s JSON: one segment of a JWT.
fn segment(value: &Value) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(value.to_string())
}

/// No token, a token for another resource, a token that is no JWT, one in the query
/// string, `alg: none`, and HS256 "signed" with the issuer's published key: each
/// refused before anything is called, the refusal naming where to learn how to get a
/// good one (RFC 9728), which the server publishes.
#[tokio::test]
async fn a_request_without_a_good_token_is_refused_and_pointed_at_the_metadata() {
    let (_p, auth, _t, l) = started().await;
    let url = l.url.clone();
    let origin = url.trim_end_matches("/mcp");
    let metadata_url = format!("{origin}/.well-known/oauth-protected-resource/mcp");

    let none = post(&url, None, INITIALIZE);
    assert_eq!(none.status, 401, "{}", none.body);
    let challenge = none.header("www-authenticate").expect("a challenge");
    assert!(
        challenge.starts_with("Bearer ")
            && challenge.contains(&format!("resource_metadata=\"{metadata_url}\""))
            && challenge.contains("scope=\"vidgen:read\""),
        "{challenge}"
    );
    for at in [
        metadata_url.clone(),
        format!("{origin}/.well-known/oauth-protected-resource"),
    ] {
        let metadata = http::request("GET", &at, &[], "").json();
        assert_eq!(metadata["resource"], url.as_str(), "{metadata}");
        assert_eq!(metadata["authorization_servers"], json!([auth.issuer()]));
        assert_eq!(
            metadata["scopes_supported"],
            json!(SCOPES.split(' ').collect::<Vec<_>>())
        );
        assert_eq!(metadata["bearer_methods_supported"], json!(["header"]));
    }

    let elsewhere = auth.token(ALICE, "http://127.0.0.1:9/mcp", "vidgen:read");
    let good = auth.token(ALICE, &url, "vidgen:read");
    let header = json!({"alg": "none", "typ": "at+jwt"});
    let claims = json!({
        "iss": auth.issuer(), "aud": url, "sub": ALICE, "scope": SCOPES,
        "exp": 4_000_000_000_u64, "iat": 1_700_000_000_u64,
    });
    let unsigned = format!("{}.{}.", segment(&header), segment(&claims));
    let hs256 = {
        // The issuer's public key as an HMAC secret: anyone can read it, so anyone
        // could sign with it.
        let jwks = http::request(
            "GET",
            auth.metadata()["jwks_uri"].as_str().expect("jwks_uri"),
            &[],
            "",
        )
        .json();
        let public = jwks["keys"][0]["x"]
            .as_str()
            .expect("an EC key")
            .to_string();
        let header = json!({"alg": "HS256", "typ": "at+jwt", "kid": jwks["keys"][0]["kid"]});
        let signing = format!("{}.{}", segment(&header), segment(&claims));
        let key = jsonwebtoken::EncodingKey::from_secret(public.as_bytes()).expect("a key");
        let signature =
            jsonwebtoken::crypto::sign(signing.as_bytes(), &key, jsonwebtoken::Algorithm::HS256)
                .expect("an HMAC");
        format!("{signing}.{signature}")
    };
    for (what, token) in [
        ("another resource", elsewhere.as_str()),
        ("not a JWT", "not-a-token"),
        ("alg: none", unsigned.as_str()),
        ("HS256 with the public key", hs256.as_str()),
    ] {
        let refused = post(&url, Some(token), INITIALIZE);
        assert_eq!(refused.status, 401, "{what}: {}", refused.body);
        let challenge = refused.header("www-authenticate").unwrap_or_default();
        assert!(
            challenge.contains("error=\"invalid_token\""),
            "{what}: {challenge}"
        );
    }
    let in_query = post(&format!("{url}?access_token={good}"), None, INITIALIZE);
    assert_eq!(in_query.status, 400, "{}", in_query.body);

    // The same token in the header is let in.
    let let_in = post(&url, Some(&good), INITIALIZE);
    assert_eq!(let_in.status, 200, "{}", let_in.body);
    let log = l.log().join("\n");
    assert!(!log.contains(&good), "the token in a log line: {log}");
}

/// A token with the read scope lists every tool and calls the free read; the paid call
/// is answered 403 naming the scopes to step up to, and nothing is sent. With the spend
/// scope the paid call is asked about as ever: a scope is not the person's yes.
#[tokio::test]
async fn a_read_token_reads_and_a_paid_call_needs_the_spend_scope_then_consent() {
    let (p, auth, _t, l) = started().await;
    let url = l.url.clone();
    let read = auth.token(ALICE, &url, "vidgen:read");
    let s = l
        .session(Person::without_elicitation(), Some(read.clone()))
        .await;
    let tools = s.client.peer().list_all_tools().await.expect("tools/list");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert!(
        names.contains(&"createVideo") && names.contains(&"listVideos"),
        "{names:?}"
    );
    let free = s.call("listVideos", json!({})).await;
    assert!(!is_error(&free), "{}", text_of(&free));

    let paid = post(
        &url,
        Some(&read),
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "createVideo", "arguments": cat()}})
        .to_string(),
    );
    assert_eq!(paid.status, 403, "{}", paid.body);
    let challenge = paid.header("www-authenticate").unwrap_or_default();
    assert!(
        challenge.contains("error=\"insufficient_scope\"")
            && challenge.contains("scope=\"vidgen:change vidgen:spend\""),
        "{challenge}"
    );
    assert!(
        s.client
            .peer()
            .call_tool(call("createVideo", cat()))
            .await
            .is_err(),
        "the client's own paid call is refused too"
    );
    assert_eq!(p.counters().of("createVideo"), 0, "{:#?}", p.received());

    let all = auth.token(ALICE, &url, SCOPES);
    let stepped = s
        .another_with(Person::without_elicitation(), Some(all))
        .await;
    let asked = stepped
        .peer()
        .call_tool(call("createVideo", cat()))
        .await
        .expect("a paid call with the spend scope");
    assert_eq!(
        serve_meta(&asked)["consentRequired"],
        true,
        "{}",
        text_of(&asked)
    );
    assert_eq!(p.counters().of("createVideo"), 0, "{:#?}", p.received());
}

/// Two people on one instance are two principals: one's confirmation value does not
/// open the other's call, and one's identical call is not answered with the other's
/// job. The inbound tokens reach no provider request, log line, ledger file or answer.
#[tokio::test]
async fn two_people_on_one_instance_never_share_a_yes_or_a_job_and_tokens_go_nowhere() {
    let (p, auth, t, l) = started().await;
    let url = l.url.clone();
    let alice_token = auth.token(ALICE, &url, SCOPES);
    let bob_token = auth.token(BOB, &url, SCOPES);
    let alice = l
        .session(Person::without_elicitation(), Some(alice_token.clone()))
        .await;
    let bob = alice
        .another_with(Person::without_elicitation(), Some(bob_token.clone()))
        .await;

    let asked = alice.call("createVideo", cat()).await;
    let confirmation = serve_meta(&asked)["confirmation"]
        .as_str()
        .expect("a confirmation value")
        .to_string();
    let mut with_alices_yes = cat();
    with_alices_yes["confirmation"] = json!(confirmation);
    let bobs = bob
        .peer()
        .call_tool(call("createVideo", with_alices_yes.clone()))
        .await
        .expect("bob's call");
    assert_eq!(
        serve_meta(&bobs)["consentRequired"],
        true,
        "{}",
        text_of(&bobs)
    );
    assert_eq!(p.counters().of("createVideo"), 0, "{:#?}", p.received());

    let sent = alice.call("createVideo", with_alices_yes).await;
    assert!(!is_error(&sent), "{}", text_of(&sent));
    assert_eq!(p.counters().of("createVideo"), 1, "{:#?}", p.received());
    let job = serve_meta(&sent)["jobId"]
        .as_str()
        .expect("a job")
        .to_string();

    // Alice's identical call is her job again; Bob's is his own request, asked about.
    let again = alice.call("createVideo", cat()).await;
    assert!(text_of(&again).contains(&job), "{}", text_of(&again));
    let bobs = bob
        .peer()
        .call_tool(call("createVideo", cat()))
        .await
        .expect("bob's call");
    assert!(!text_of(&bobs).contains(&job), "{}", text_of(&bobs));
    assert_eq!(
        serve_meta(&bobs)["consentRequired"],
        true,
        "{}",
        text_of(&bobs)
    );
    assert_eq!(p.counters().of("createVideo"), 1, "{:#?}", p.received());

    for token in [&alice_token, &bob_token] {
        for received in p.received() {
            let seen = format!("{received:?}");
            assert!(
                !seen.contains(token.as_str()),
                "sent to the provider: {seen}"
            );
        }
        let log = alice.log().join("\n");
        assert!(!log.contains(token.as_str()), "in a log line: {log}");
        for answer in [&asked, &sent, &again] {
            let text = serde_json::to_string(answer).unwrap_or_default();
            assert!(!text.contains(token.as_str()), "in an answer: {text}");
        }
        for path in files(t.state()) {
            let bytes = std::fs::read(&path).unwrap_or_default();
            let found = bytes.windows(token.len()).any(|w| w == token.as_bytes());
            assert!(!found, "in {}", path.display());
        }
    }
}

/// Every file under `dir`.
fn files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("a folder").flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// An opaque token (not a JWT) is checked at the authorization server's introspection
/// endpoint with serve's own client credentials from the environment; once revoked it
/// is refused. Neither the token nor serve's secret shows in the log.
#[tokio::test]
async fn an_opaque_token_is_introspected_and_refused_once_revoked() {
    let p = Provider::start(Switches::default());
    let auth = AuthServer::start(SCOPES);
    let (id, secret) = auth.introspection_client();
    let t = Test::new(&p.url())
        .arg("--auth-issuer")
        .arg(&auth.issuer())
        .arg("--auth-introspection")
        .arg(&auth.introspection_url());
    let l = t
        .server()
        .env("VIDGEN_INTROSPECTION_CLIENT_ID", &id)
        .env("VIDGEN_INTROSPECTION_CLIENT_SECRET", &secret)
        .listen()
        .await;
    let opaque = auth.opaque_token(ALICE, &l.url, "vidgen:read");
    assert_eq!(opaque.split('.').count(), 1, "not a JWT: {opaque}");
    let let_in = post(&l.url, Some(&opaque), INITIALIZE);
    assert_eq!(let_in.status, 200, "{}", let_in.body);
    let elsewhere = auth.opaque_token(ALICE, "http://127.0.0.1:9/mcp", "vidgen:read");
    let refused = post(&l.url, Some(&elsewhere), INITIALIZE);
    assert_eq!(refused.status, 401, "another resource: {}", refused.body);

    auth.revoke(&opaque);
    let revoked = post(&l.url, Some(&opaque), INITIALIZE);
    assert_eq!(revoked.status, 401, "{}", revoked.body);
    let challenge = revoked.header("www-authenticate").unwrap_or_default();
    assert!(challenge.contains("error=\"invalid_token\""), "{challenge}");
    let log = l.log().join("\n");
    for secret in [opaque.as_str(), secret.as_str()] {
        assert!(!log.contains(secret), "in a log line: {log}");
    }
}

/// Two instances on one PostgreSQL ledger, each a resource of its own: Alice's job,
/// started as a task on one, is hers on the other too (the same issuer and subject, the
/// same principal), and Bob, on either, can neither read her task nor get her job for
/// his identical call.
#[tokio::test]
async fn two_people_on_two_instances_sharing_postgresql_stay_apart() {
    use rmcp::model::{CallToolResponse, TaskStatus};

    let p = Provider::start(Switches::default());
    let auth = AuthServer::start(SCOPES);
    let ledger = super::postgres::cluster().database();
    let instance = || {
        Test::new(&p.url())
            .arg("--auth-issuer")
            .arg(&auth.issuer())
            .arg("--ledger")
            .arg(&ledger)
    };
    let (ta, tb) = (instance(), instance());
    let (la, lb) = (ta.server().listen().await, tb.server().listen().await);
    let follower = || Person::answering(Answer::Accept, Revision::Current).with_tasks();
    let alice_a = auth.token(ALICE, &la.url, SCOPES);
    let alice_b = auth.token(ALICE, &lb.url, SCOPES);
    let bob_b = auth.token(BOB, &lb.url, SCOPES);
    let a = la.session(follower(), Some(alice_a)).await;
    let b_alice = lb.session(follower(), Some(alice_b)).await;
    let b_bob = b_alice.another_with(follower(), Some(bob_b)).await;

    let CallToolResponse::Task(created) = a.call_once("createVideo", cat()).await else {
        panic!("a task: {:#?}", a.log());
    };
    assert_eq!(created.task.status, TaskStatus::Working);
    let id = created.task.task_id.clone();
    assert_eq!(p.counters().of("createVideo"), 1, "{:#?}", p.received());

    // Hers on the other instance too.
    let hers = b_alice
        .get_task(&id)
        .await
        .expect("her task on the other instance");
    assert_eq!(hers.task.task.task_id, id);
    // Not Bob's, whatever he knows of it.
    let his = b_bob
        .peer()
        .get_task(rmcp::model::GetTaskParams::new(id.clone()))
        .await;
    assert!(his.is_err(), "bob read alice's task: {his:?}");
    let cancel = b_bob
        .peer()
        .cancel_task(rmcp::model::CancelTaskParams::new(id.clone()))
        .await;
    assert!(cancel.is_err(), "bob cancelled alice's task: {cancel:?}");
    // His identical call is his own request: he is asked, never answered with her job
    // (her task).
    let bobs = b_bob
        .peer()
        .call_tool_once(call("createVideo", cat()))
        .await
        .expect("bob's call");
    assert!(
        matches!(bobs, CallToolResponse::InputRequired(_)),
        "bob was answered without being asked: {bobs:?}"
    );
    assert_eq!(p.counters().of("createVideo"), 1, "{:#?}", p.received());
}

/// `oauth.scopes` in the manifest names the scopes, as the authorization server does:
/// the metadata lists them and a read token's paid call is told to step up to them.
#[tokio::test]
async fn the_manifest_names_the_scopes() {
    let p = Provider::start(Switches::default());
    let auth = AuthServer::start("videos.read videos.write videos.buy");
    let dir = tempfile::tempdir().unwrap();
    let manifest = dir.path().join("video.yaml");
    let text = std::fs::read_to_string(super::e2e::video()).unwrap()
        + "oauth:\n  scopes: { read: videos.read, change: videos.write, spend: videos.buy }\n";
    std::fs::write(&manifest, text).unwrap();
    let t = Test::new(&p.url())
        .manifest(&manifest)
        .arg("--auth-issuer")
        .arg(&auth.issuer());
    let l = t.server().listen().await;
    let metadata_url = format!(
        "{}/.well-known/oauth-protected-resource/mcp",
        l.url.trim_end_matches("/mcp")
    );
    let metadata = http::request("GET", &metadata_url, &[], "").json();
    assert_eq!(
        metadata["scopes_supported"],
        json!(["videos.read", "videos.write", "videos.buy"])
    );
    let read = auth.token(ALICE, &l.url, "videos.read");
    let paid = post(
        &l.url,
        Some(&read),
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "createVideo", "arguments": cat()}})
        .to_string(),
    );
    assert_eq!(paid.status, 403, "{}", paid.body);
    let challenge = paid.header("www-authenticate").unwrap_or_default();
    assert!(
        challenge.contains("scope=\"videos.write videos.buy\""),
        "{challenge}"
    );
}
