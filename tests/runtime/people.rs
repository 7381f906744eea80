//! `auth.perPerson` end to end (issue 46): each person's own provider account. The real
//! binary behind a real authorization server (two people, two tokens), the reference
//! provider accepting one key per person, and the connect page driven as a browser
//! without JavaScript would: open the link, post the form with the cookie it set. Every
//! wait is on something a server did, never on time.

use std::path::PathBuf;

use serde_json::{Value, json};

use super::e2e::{Test, video};
use super::http;
use super::mcp::{Listening, Person, is_error, serve_meta, text_of};
use super::provider::{Auth, Provider, Switches};
use crate::support::authz::{ALICE, AuthServer, BOB};

pub(super) const SCOPES: &str = "vidgen:read vidgen:change vidgen:spend";

/// Each person's key at the provider.
pub(super) const ALICE_KEY: &str = "vg_alice_own_key_0001";
pub(super) const BOB_KEY: &str = "vg_bob_own_key_0002";

/// The key ring serve seals people's credentials with (one 32-byte key, base64).
const KEYS: &str = "k1:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";

fn cat() -> Value {
    json!({ "prompt": "a cat on a skateboard", "aspectRatio": "16:9" })
}

/// The video example, each person connecting their own key, checked with `listVideos`.
fn manifest(dir: &std::path::Path) -> PathBuf {
    let text = std::fs::read_to_string(video()).expect("the video example");
    let text = text.replacen(
        "auth:\n  tokenPrefix: vg_\n",
        "auth:\n  tokenPrefix: vg_\n  perPerson: { connect: apiKey, checkWith: listVideos }\n",
        1,
    );
    assert!(text.contains("perPerson"), "the example's auth: changed");
    let path = dir.join("video.yaml");
    std::fs::write(&path, text).expect("write the manifest");
    path
}

/// The provider (a key per person), the authorization server, and serve with people's
/// own credentials.
pub(super) async fn started() -> (Provider, AuthServer, Test, Listening, tempfile::TempDir) {
    let p = Provider::start(Switches {
        auth: Auth::Tokens(vec![ALICE_KEY.into(), BOB_KEY.into()]),
        ..Switches::default()
    });
    let auth = AuthServer::start(SCOPES);
    let dir = tempfile::tempdir().expect("a folder");
    let t = Test::new(&p.url())
        .manifest(manifest(dir.path()))
        .arg("--auth-issuer")
        .arg(&auth.issuer());
    let listening = t
        .server()
        .env("VIDGEN_CREDENTIAL_KEYS", KEYS)
        .listen()
        .await;
    (p, auth, t, listening, dir)
}

/// A call from a client that is not a session of its own (`another_with`).
pub(super) async fn call(
    client: &rmcp::service::RunningService<rmcp::RoleClient, Person>,
    name: &str,
) -> rmcp::model::CallToolResult {
    client
        .peer()
        .call_tool(rmcp::model::CallToolRequestParams::new(name.to_string()))
        .await
        .expect("the call is answered")
}

/// The connect link a call that needs the person's account answered with.
pub(super) fn link_of(answer: &rmcp::model::CallToolResult) -> String {
    let meta = serve_meta(answer);
    assert_eq!(meta["connectRequired"], true, "{}", text_of(answer));
    let link = meta["connectUrl"].as_str().expect("a link").to_string();
    assert!(text_of(answer).contains(&link), "{}", text_of(answer));
    link
}

/// A browser on the connect page: the cookie it was given and the form's value.
struct Browser {
    cookie: String,
    form: String,
}

/// Opens `link` as a browser does.
fn open(link: &str) -> (http::Answer, Browser) {
    let page = http::request("GET", link, &[], "");
    assert_eq!(page.status, 200, "{}", page.body);
    let set = page.header("set-cookie").expect("a cookie").to_string();
    let cookie = set.split(';').next().unwrap_or_default().to_string();
    let form = page
        .body
        .split("name=\"form\" value=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("the form's value")
        .to_string();
    (page, Browser { cookie, form })
}

/// Posts the page's form from `browser` to `link`.
fn post(link: &str, browser: &Browser, fields: &[(&str, &str)]) -> http::Answer {
    let encode = |text: &str| {
        percent_encoding::utf8_percent_encode(text, percent_encoding::NON_ALPHANUMERIC).to_string()
    };
    let body = std::iter::once(("form", browser.form.as_str()))
        .chain(fields.iter().copied())
        .map(|(name, value)| format!("{}={}", encode(name), encode(value)))
        .collect::<Vec<_>>()
        .join("&");
    http::request(
        "POST",
        link,
        &[
            ("content-type", "application/x-www-form-urlencoded"),
            ("cookie", &browser.cookie),
        ],
        &body,
    )
}

/// The requests that reached the provider with `key`.
pub(super) fn with_key(p: &Provider, key: &str) -> usize {
    let bearer = format!("Bearer {key}");
    p.received()
        .iter()
        .filter(|r| r.authorization.as_deref() == Some(bearer.as_str()))
        .count()
}

/// Two people on one instance: a person who has not connected gets a link and nothing is
/// sent; each connects their own key on the page (checked with the free read first);
/// each call then reaches the provider with that person's key, a paid one after consent
/// as ever. Another person's form, a form without the cookie, and a key the provider
/// refuses keep nothing; no key is kept in clear or shown anywhere.
#[tokio::test]
async fn each_person_connects_their_own_key_and_their_calls_go_out_with_it() {
    let (p, auth, t, l, _dir) = started().await;
    let url = l.url.clone();
    let alice = l
        .session(
            Person::without_elicitation(),
            Some(auth.token(ALICE, &url, SCOPES)),
        )
        .await;
    let bob = alice
        .another_with(
            Person::without_elicitation(),
            Some(auth.token(BOB, &url, SCOPES)),
        )
        .await;

    // The client is told where the account comes from: never the chat.
    let instructions = alice
        .client
        .peer_info()
        .and_then(|info| info.instructions.clone())
        .unwrap_or_default();
    assert!(
        instructions.contains("connectAccount") && !instructions.contains("VIDGEN_TOKEN"),
        "{instructions}"
    );

    let first = alice.call("listVideos", json!({})).await;
    assert!(is_error(&first), "{}", text_of(&first));
    let alice_link = link_of(&first);
    let asked = alice.call("createVideo", cat()).await;
    assert!(is_error(&asked), "{}", text_of(&asked));
    link_of(&asked);
    assert!(p.received().is_empty(), "{:#?}", p.received());

    // Bob's page cannot set Alice's key, nor Alice's form Bob's; a form without the
    // browser's cookie is refused too.
    let bob_link = link_of(&call(&bob, "listVideos").await);
    let (page, alice_browser) = open(&alice_link);
    assert!(page.body.contains("Connect your account"), "{}", page.body);
    let (_, bob_browser) = open(&bob_link);
    let swapped = post(
        &bob_link,
        &alice_browser,
        &[("action", "key"), ("key", ALICE_KEY)],
    );
    assert_eq!(swapped.status, 403, "{}", swapped.body);
    let no_cookie = Browser {
        cookie: String::new(),
        form: alice_browser.form.clone(),
    };
    let forged = post(
        &alice_link,
        &no_cookie,
        &[("action", "key"), ("key", ALICE_KEY)],
    );
    assert_eq!(forged.status, 403, "{}", forged.body);
    assert!(p.received().is_empty(), "{:#?}", p.received());

    // A key the provider refuses is checked and not kept.
    let wrong = post(
        &alice_link,
        &alice_browser,
        &[("action", "key"), ("key", "vg_not_a_real_key_9999")],
    );
    assert_eq!(wrong.status, 200, "{}", wrong.body);
    assert!(wrong.body.contains("did not accept"), "{}", wrong.body);
    assert!(
        !wrong.body.contains("vg_not_a_real_key_9999"),
        "{}",
        wrong.body
    );
    let still = alice.call("listVideos", json!({})).await;
    link_of(&still);

    let connected = post(
        &alice_link,
        &alice_browser,
        &[("action", "key"), ("key", ALICE_KEY)],
    );
    assert_eq!(connected.status, 200, "{}", connected.body);
    assert!(connected.body.contains("connected"), "{}", connected.body);
    assert!(!connected.body.contains(ALICE_KEY), "{}", connected.body);
    assert_eq!(
        with_key(&p, ALICE_KEY),
        1,
        "the check read: {:#?}",
        p.received()
    );

    let read = alice.call("listVideos", json!({})).await;
    assert!(!is_error(&read), "{}", text_of(&read));
    assert_eq!(with_key(&p, ALICE_KEY), 2, "{:#?}", p.received());
    // Bob has not connected: his call is still a link, and nothing went out for him.
    link_of(&call(&bob, "listVideos").await);

    let connected = post(
        &bob_link,
        &bob_browser,
        &[("action", "key"), ("key", BOB_KEY)],
    );
    assert_eq!(connected.status, 200, "{}", connected.body);
    let read = call(&bob, "listVideos").await;
    assert!(!is_error(&read), "{}", text_of(&read));
    assert_eq!(with_key(&p, BOB_KEY), 2, "{:#?}", p.received());

    // A paid call: asked about as ever, then sent once, with Alice's own key.
    let asked = alice.call("createVideo", cat()).await;
    let confirmation = serve_meta(&asked)["confirmation"]
        .as_str()
        .unwrap_or_else(|| panic!("a question: {}", text_of(&asked)))
        .to_string();
    assert_eq!(p.counters().of("createVideo"), 0, "{:#?}", p.received());
    let mut agreed = cat();
    agreed["confirmation"] = json!(confirmation);
    let sent = alice.call("createVideo", agreed).await;
    assert!(!is_error(&sent), "{}", text_of(&sent));
    let creates: Vec<_> = p
        .received()
        .into_iter()
        .filter(|r| r.operation == "createVideo")
        .collect();
    assert_eq!(creates.len(), 1, "{creates:#?}");
    assert_eq!(
        creates[0].authorization.as_deref(),
        Some(format!("Bearer {ALICE_KEY}").as_str())
    );

    // Kept sealed: neither key is in the ledger's file or the server's log.
    let mut stored = Vec::new();
    for entry in walk(t.state()) {
        stored.extend(std::fs::read(entry).unwrap_or_default());
    }
    let stored = String::from_utf8_lossy(&stored);
    let log = alice.log().join("\n");
    assert!(
        log.contains(r#""outcome":"connected""#),
        "the log is read: {log}"
    );
    for key in [ALICE_KEY, BOB_KEY, "vg_not_a_real_key_9999"] {
        assert!(!stored.contains(key), "{key} in the state folder");
        assert!(!log.contains(key), "{key} in the log: {log}");
    }

    // Disconnecting forgets the key: the next call is a link again, nothing sent.
    let before = p.received().len();
    let (page, browser) = open(&alice_link);
    assert!(page.body.contains("Disconnect"), "{}", page.body);
    let gone = post(&alice_link, &browser, &[("action", "disconnect")]);
    assert_eq!(gone.status, 200, "{}", gone.body);
    link_of(&alice.call("listVideos", json!({})).await);
    assert_eq!(p.received().len(), before, "{:#?}", p.received());
}

/// Every file under `dir`.
pub(super) fn walk(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// Two instances sharing PostgreSQL: a person connects on one and their calls on the
/// other go out with their key; each person's calls with their own; a disconnect on one
/// instance holds on the other at the next call (nothing is cached past a call).
#[tokio::test]
async fn two_instances_sharing_postgresql_use_each_persons_own_key() {
    let p = Provider::start(Switches {
        auth: Auth::Tokens(vec![ALICE_KEY.into(), BOB_KEY.into()]),
        ..Switches::default()
    });
    let auth = AuthServer::start(SCOPES);
    let dir = tempfile::tempdir().expect("a folder");
    let manifest = manifest(dir.path());
    let ledger = super::postgres::cluster().database();
    let instance = || {
        Test::new(&p.url())
            .manifest(&manifest)
            .arg("--auth-issuer")
            .arg(&auth.issuer())
            .arg("--ledger")
            .arg(&ledger)
    };
    let (ta, tb) = (instance(), instance());
    let keys = |t: &Test| t.server().env("VIDGEN_CREDENTIAL_KEYS", KEYS);
    let (la, lb) = (keys(&ta).listen().await, keys(&tb).listen().await);
    let (alice_on_a, bob_on_a) = (
        auth.token(ALICE, &la.url, SCOPES),
        auth.token(BOB, &la.url, SCOPES),
    );
    let (alice_on_b, bob_on_b) = (
        auth.token(ALICE, &lb.url, SCOPES),
        auth.token(BOB, &lb.url, SCOPES),
    );
    let alice_a = la
        .session(Person::without_elicitation(), Some(alice_on_a))
        .await;
    let alice_b = lb
        .session(Person::without_elicitation(), Some(alice_on_b))
        .await;
    let bob_a = alice_a
        .another_with(Person::without_elicitation(), Some(bob_on_a))
        .await;
    let bob_b = alice_b
        .another_with(Person::without_elicitation(), Some(bob_on_b))
        .await;

    // Alice connects on A; her call on B goes out with her key.
    let link = link_of(&alice_a.call("listVideos", json!({})).await);
    let (_, browser) = open(&link);
    let connected = post(&link, &browser, &[("action", "key"), ("key", ALICE_KEY)]);
    assert_eq!(connected.status, 200, "{}", connected.body);
    let read = alice_b.call("listVideos", json!({})).await;
    assert!(!is_error(&read), "{}", text_of(&read));
    assert_eq!(with_key(&p, ALICE_KEY), 2, "{:#?}", p.received());

    // Bob connects on B; his call on A goes out with his key, never hers.
    let link = link_of(&call(&bob_a, "listVideos").await);
    link_of(&call(&bob_b, "listVideos").await);
    let (_, browser) = open(&link);
    let connected = post(&link, &browser, &[("action", "key"), ("key", BOB_KEY)]);
    assert_eq!(connected.status, 200, "{}", connected.body);
    let read = call(&bob_a, "listVideos").await;
    assert!(!is_error(&read), "{}", text_of(&read));
    assert_eq!(with_key(&p, BOB_KEY), 2, "{:#?}", p.received());
    assert_eq!(with_key(&p, ALICE_KEY), 2, "{:#?}", p.received());

    // Alice disconnects on B (her page, from the tool that gives it): her next call on
    // A is a link again, and nothing is sent.
    let page = alice_b.call("connectAccount", json!({})).await;
    assert!(!is_error(&page), "{}", text_of(&page));
    let b_link = serve_meta(&page)["connectUrl"]
        .as_str()
        .expect("her page")
        .to_string();
    let before = p.received().len();
    let (page, browser) = open(&b_link);
    assert!(page.body.contains("Disconnect"), "{}", page.body);
    let gone = post(&b_link, &browser, &[("action", "disconnect")]);
    assert_eq!(gone.status, 200, "{}", gone.body);
    link_of(&alice_a.call("listVideos", json!({})).await);
    assert_eq!(p.received().len(), before, "{:#?}", p.received());
}

/// One JSON-RPC request over Streamable HTTP with Alice's token (and the session, once
/// there is one): the answer, from a JSON body or an event stream's data line.
fn rpc(url: &str, token: &str, session: Option<&str>, body: &Value) -> (http::Answer, Value) {
    let bearer = format!("Bearer {token}");
    let mut headers = vec![
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("authorization", bearer.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    if let Some(session) = session {
        headers.push(("mcp-session-id", session));
    }
    let answer = http::request("POST", url, &headers, &body.to_string());
    let text = answer
        .body
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .find(|data| !data.trim().is_empty())
        .unwrap_or(&answer.body)
        .trim()
        .to_string();
    let value = serde_json::from_str(&text).unwrap_or(Value::Null);
    (answer, value)
}

/// A 2025-11-25 client that declares URL-mode elicitation is sent to the connect page
/// the way the specification says: `URLElicitationRequiredError` (-32042) with the page
/// in `data.elicitations`, and nothing reaches the provider.
#[tokio::test]
async fn a_client_that_declares_url_elicitation_gets_the_page_as_one() {
    let (p, auth, _t, l, _dir) = started().await;
    let url = l.url.clone();
    let token = auth.token(ALICE, &url, SCOPES);
    let (opened, _) = rpc(
        &url,
        &token,
        None,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"elicitation": {"form": {}, "url": {}}},
            "clientInfo": {"name": "url-elicitation-test", "version": "1"}
        }}),
    );
    assert_eq!(opened.status, 200, "{}", opened.body);
    let session = opened
        .header("mcp-session-id")
        .expect("a session")
        .to_string();
    rpc(
        &url,
        &token,
        Some(&session),
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    let (raw, answer) = rpc(
        &url,
        &token,
        Some(&session),
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "createVideo", "arguments": cat()}}),
    );
    assert_eq!(answer["error"]["code"], -32042, "{answer} {raw:?}");
    let asked = &answer["error"]["data"]["elicitations"][0];
    assert_eq!(asked["mode"], "url", "{answer}");
    let link = asked["url"].as_str().expect("the page");
    assert!(
        link.starts_with(&format!("{}/connect/", url.trim_end_matches("/mcp"))),
        "{link}"
    );
    assert!(
        !asked["elicitationId"]
            .as_str()
            .unwrap_or_default()
            .is_empty(),
        "{answer}"
    );
    // The page it names is this person's page.
    let (page, _) = open(link);
    assert!(page.body.contains("Connect your account"), "{}", page.body);
    assert!(p.received().is_empty(), "{:#?}", p.received());
}

/// `auth.perPerson` refuses to start where it cannot keep its promises: without a key
/// ring, without `--auth-issuer` (no way to tell people apart), and with a key that does
/// not open what the database holds (fail closed, the key named, before any call).
#[tokio::test]
async fn serve_refuses_to_start_without_a_key_ring_or_people_or_with_a_wrong_key() {
    let p = Provider::start(Switches {
        auth: Auth::Tokens(vec![ALICE_KEY.into()]),
        ..Switches::default()
    });
    let auth = AuthServer::start(SCOPES);
    let dir = tempfile::tempdir().expect("a folder");
    let t = Test::new(&p.url())
        .manifest(manifest(dir.path()))
        .arg("--auth-issuer")
        .arg(&auth.issuer());

    let (code, stderr) = t.server().refused().await;
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("--credential-keys") && stderr.contains("VIDGEN_CREDENTIAL_KEYS"),
        "{stderr}"
    );

    let alone = Test::new(&p.url()).manifest(manifest(dir.path()));
    let (code, stderr) = alone
        .server()
        .env("VIDGEN_CREDENTIAL_KEYS", KEYS)
        .refused()
        .await;
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("--auth-issuer"), "{stderr}");

    // A first start records its key's check; another key under the same id is refused.
    let first = t
        .server()
        .env("VIDGEN_CREDENTIAL_KEYS", KEYS)
        .listen()
        .await;
    drop(first);
    let other = "k1:ICEiIyQlJicoKSorLC0uLzAxMjM0NTY3ODk6Ozw9Pj8=";
    let (code, stderr) = t
        .server()
        .env("VIDGEN_CREDENTIAL_KEYS", other)
        .refused()
        .await;
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("`k1`") && stderr.contains("does not open"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("ICEiIyQl"),
        "the key is never shown: {stderr}"
    );
}
