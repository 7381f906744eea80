//! `auth.perPerson` with `connect: oauth` end to end (issue 46): each person signs in at
//! the provider's own authorization server and their calls go out with their own access
//! token. The real binary behind the inbound authorization server (two people, two
//! tokens); a second oidc-provider playing the provider's authorization server
//! (`AuthServer::provider`: serve registered as `SERVE` for its callback, logins that
//! complete by themselves, a journal of every token it issues); and the reference
//! provider checking each bearer token by introspection at that server, as a provider's
//! API does. The browser is plain HTTP with a cookie: open the link, follow the redirect
//! through the provider's sign-in, bring the callback back to serve.
//!
//! Takes: node and npm (the authorization servers). Returns: nothing but assertions.
//! Must never: make a token itself (each is the provider's authorization server's, read
//! back from its journal or by introspection), or wait for a clock: an access token
//! "about to expire" is one whose lifetime is shorter than serve's refresh margin.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::e2e::{Test, video};
use super::http;
use super::mcp::{Person, Session, is_error, serve_meta, text_of};
use super::provider::{Auth, Introspection, Provider, Switches};
use crate::support::authz::{ALICE, AuthServer, BOB, Issued, SERVE, SERVE_PUBLIC};

/// What people's tokens allow at serve (the inbound authorization server).
const SCOPES: &str = "vidgen:read vidgen:change vidgen:spend";
/// The provider API's scopes, as its authorization server knows them.
const PROVIDER_SCOPES: &str = "videos.read videos.write";
/// The account every sign-in at the provider's authorization server logs in as.
const SUBJECT: &str = "provider-account-7";
/// The key ring serve seals people's tokens with (one 32-byte key, base64).
const KEYS: &str = "k1:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
/// An access-token lifetime inside serve's refresh margin (60 s): due at every call.
const SHORT_TTL: u64 = 30;

/// Everything a test talks to; the servers stop when it drops.
struct World {
    provider: Provider,
    /// The provider's authorization server.
    at_provider: AuthServer,
    /// serve's own authorization server: the people's tokens for serve.
    inbound: AuthServer,
    /// serve's callback, as registered at the provider.
    redirect: String,
    test: Test,
    /// Where serve listens: the origin its callback was registered on.
    port: u16,
    /// serve's registration at the provider: `SERVE` (with its secret) or `SERVE_PUBLIC`.
    client: &'static str,
    _dir: tempfile::TempDir,
}

/// The provider, its authorization server (access tokens good for `ttl` seconds, else its
/// default), serve's authorization server, and serve's set-up: the video example, each
/// person signing in at the provider, serve's registration there in the environment.
/// serve's port is chosen first: its callback is registered before it starts.
fn world(ttl: Option<u64>) -> World {
    world_as(SERVE, ttl)
}

/// `world`, serve registered at the provider as `client`.
fn world_as(client: &'static str, ttl: Option<u64>) -> World {
    // The reference provider first: its URL is the resource its tokens are for. It
    // refuses everything until it knows where to ask about a token.
    let provider = Provider::start(Switches {
        auth: Auth::RejectAll,
        ..Switches::default()
    });
    let port = free_port();
    let redirect = format!("http://127.0.0.1:{port}/connect/callback");
    let at_provider =
        AuthServer::provider_with_ttl(PROVIDER_SCOPES, &redirect, SUBJECT, &provider.url(), ttl);
    let (client_id, client_secret) = at_provider.introspection_client();
    let audience = provider.url();
    let endpoint = at_provider.introspection_url();
    provider.set(|s| {
        s.auth = Auth::Introspection(Introspection {
            endpoint,
            client_id,
            client_secret,
            audience,
        });
    });
    let inbound = AuthServer::start(SCOPES);
    let dir = tempfile::tempdir().expect("a folder");
    let test = Test::new(&provider.url())
        .manifest(manifest(dir.path(), &at_provider))
        .arg("--auth-issuer")
        .arg(&inbound.issuer());
    World {
        provider,
        at_provider,
        inbound,
        redirect,
        test,
        port,
        client,
        _dir: dir,
    }
}

impl World {
    /// serve, listening on the port its callback was registered for.
    async fn serve(&self) -> super::mcp::Listening {
        let mut serve = self
            .test
            .server()
            .on(&format!("127.0.0.1:{}", self.port))
            .env("VIDGEN_CREDENTIAL_KEYS", KEYS)
            .env("VIDGEN_OAUTH_CLIENT_ID", self.client);
        if self.client == SERVE {
            serve = serve.env(
                "VIDGEN_OAUTH_CLIENT_SECRET",
                &self.at_provider.client_secret(SERVE),
            );
        }
        serve.listen().await
    }

    /// serve with Alice's session, and Bob's beside it.
    async fn people(
        &self,
    ) -> (
        Session,
        rmcp::service::RunningService<rmcp::RoleClient, Person>,
    ) {
        let l = self.serve().await;
        let url = l.url.clone();
        let alice = l
            .session(
                Person::without_elicitation(),
                Some(self.inbound.token(ALICE, &url, SCOPES)),
            )
            .await;
        let bob = alice
            .another_with(
                Person::without_elicitation(),
                Some(self.inbound.token(BOB, &url, SCOPES)),
            )
            .await;
        (alice, bob)
    }

    /// The person with `link` signs in, in a browser of their own: the page serve ends on.
    fn sign_in(&self, link: &str) -> http::Answer {
        let (browser, authorization) = open(link);
        let callback = self.at_provider.authorize(&authorization, &self.redirect);
        back(Some(&browser), &callback)
    }

    /// The access token of each request that reached the provider, oldest first.
    fn bearers(&self) -> Vec<String> {
        self.provider
            .received()
            .iter()
            .map(|r| {
                r.authorization
                    .as_deref()
                    .and_then(|a| a.strip_prefix("Bearer "))
                    .unwrap_or("(none)")
                    .to_string()
            })
            .collect()
    }

    /// The requests that reached the provider with `token`.
    fn with_token(&self, token: &str) -> usize {
        self.bearers().iter().filter(|t| *t == token).count()
    }

    fn issued(&self) -> Vec<Issued> {
        self.at_provider.issued()
    }

    /// The access token the provider's authorization server gave serve last.
    fn latest(&self) -> Issued {
        self.issued()
            .pop()
            .expect("the provider's authorization server issued a token")
    }

    /// Whether the provider's authorization server says `token` is active.
    fn active(&self, token: &str) -> bool {
        self.at_provider.introspect(token)["active"] == true
    }
}

/// A port of 127.0.0.1 the kernel just handed out and let go, for serve to listen on:
/// serve's callback must be registered at the provider before serve starts, and serve
/// listens on no port it was not given.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free loopback port")
        .port()
}

/// The video example, each person signing in at `at_provider` (opaque access tokens,
/// which its introspection reads and its revocation ends).
fn manifest(dir: &Path, at_provider: &AuthServer) -> PathBuf {
    let text = std::fs::read_to_string(video()).expect("the video example");
    let per_person = format!(
        "  perPerson:\n    connect: oauth\n    authorizationUrl: {}\n    tokenUrl: {}?format=opaque\n    \
         revocationUrl: {}\n    scopes: [videos.read, videos.write]\n",
        at_provider.endpoint_url("authorization_endpoint"),
        at_provider.endpoint_url("token_endpoint"),
        at_provider.endpoint_url("revocation_endpoint"),
    );
    let text = text.replacen(
        "auth:\n  tokenPrefix: vg_\n",
        &format!("auth:\n  tokenPrefix: vg_\n{per_person}"),
        1,
    );
    assert!(text.contains("perPerson"), "the example's auth: changed");
    let path = dir.join("video.yaml");
    std::fs::write(&path, text).expect("write the manifest");
    path
}

/// A paid call's arguments.
fn cat() -> Value {
    json!({ "prompt": "a cat on a skateboard", "aspectRatio": "16:9" })
}

/// A call from a session that is not a `Session` (`another_with`).
async fn call(
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
fn link_of(answer: &rmcp::model::CallToolResult) -> String {
    let meta = serve_meta(answer);
    assert_eq!(meta["connectRequired"], true, "{}", text_of(answer));
    let link = meta["connectUrl"].as_str().expect("a link").to_string();
    assert!(text_of(answer).contains(&link), "{}", text_of(answer));
    link
}

/// A person's browser: the cookie serve gave it.
struct Browser {
    cookie: String,
}

/// Opens `link` as a browser does, for a person not connected: serve sets its cookie and
/// sends the browser on to the provider's sign-in. The browser and where it was sent.
fn open(link: &str) -> (Browser, String) {
    let page = http::request("GET", link, &[], "");
    assert_eq!(page.status, 303, "{}", page.body);
    let location = page
        .header("location")
        .expect("where the sign-in is")
        .to_string();
    (
        Browser {
            cookie: cookie_of(&page),
        },
        location,
    )
}

/// The `name=value` of the cookie an answer sets.
fn cookie_of(page: &http::Answer) -> String {
    let set = page.header("set-cookie").expect("a cookie").to_string();
    set.split(';').next().unwrap_or_default().to_string()
}

/// The browser comes back to serve's callback `url` (with its cookie, when it has one).
fn back(browser: Option<&Browser>, url: &str) -> http::Answer {
    let headers: &[(&str, &str)] = match browser {
        Some(b) => &[("cookie", &b.cookie)],
        None => &[],
    };
    http::request("GET", url, headers, "")
}

/// Two people on one instance: a person who has not signed in gets a link and nothing is
/// sent; following it in a browser through the provider's sign-in connects them; each
/// call then reaches the provider with that person's own access token (counted by the
/// provider per token), a paid one after consent as ever. Disconnecting revokes the
/// person's grant at the provider's authorization server, and no token, nor serve's
/// client secret, is ever in serve's log or its state folder.
#[tokio::test]
async fn each_person_signs_in_at_the_provider_and_their_calls_go_out_with_their_own_token() {
    let w = world(None);
    let (alice, bob) = w.people().await;
    // serve says which redirect URI to register at the provider: the one registered here.
    let listening = alice
        .log()
        .into_iter()
        .find_map(|line| {
            let said: Value = serde_json::from_str(&line).ok()?;
            (said["event"] == "listening").then_some(said)
        })
        .expect("the listening line");
    assert_eq!(
        listening["connectCallback"],
        w.redirect.as_str(),
        "{listening}"
    );

    let first = alice.call("listVideos", json!({})).await;
    assert!(is_error(&first), "{}", text_of(&first));
    let alice_link = link_of(&first);
    let asked = alice.call("createVideo", cat()).await;
    assert!(is_error(&asked), "{}", text_of(&asked));
    link_of(&asked);
    assert!(w.provider.received().is_empty(), "{:#?}", w.bearers());

    // Alice signs in: the browser goes to the provider and comes back connected.
    let page = w.sign_in(&alice_link);
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.body.contains("Connected"), "{}", page.body);
    let issued = w.issued();
    assert_eq!(issued.len(), 1, "one code exchanged: {issued:#?}");
    assert_eq!(issued[0].grant_type, "authorization_code");
    assert_eq!(issued[0].client_id, SERVE);
    let alice_token = issued[0].access_token.clone();
    let said = w.at_provider.introspect(&alice_token);
    assert_eq!(said["sub"], SUBJECT, "the account signed in: {said}");

    let read = alice.call("listVideos", json!({})).await;
    assert!(!is_error(&read), "{}", text_of(&read));
    assert_eq!(w.bearers(), [alice_token.as_str()], "her own token");

    // Bob has not signed in: his call is still a link, and nothing went out for him.
    let bob_link = link_of(&call(&bob, "listVideos").await);
    assert_eq!(w.provider.received().len(), 1);
    let page = w.sign_in(&bob_link);
    assert_eq!(page.status, 200, "{}", page.body);
    let bob_token = w.latest().access_token;
    assert_ne!(bob_token, alice_token);
    let read = call(&bob, "listVideos").await;
    assert!(!is_error(&read), "{}", text_of(&read));
    let read = alice.call("listVideos", json!({})).await;
    assert!(!is_error(&read), "{}", text_of(&read));
    assert_eq!(
        w.bearers(),
        [
            alice_token.as_str(),
            bob_token.as_str(),
            alice_token.as_str()
        ],
        "each person's calls with their own token"
    );

    // A paid call: asked about as ever, then sent once, with Alice's own token.
    let asked = alice.call("createVideo", cat()).await;
    let confirmation = serve_meta(&asked)["confirmation"]
        .as_str()
        .unwrap_or_else(|| panic!("a question: {}", text_of(&asked)))
        .to_string();
    assert_eq!(w.provider.counters().of("createVideo"), 0);
    let mut agreed = cat();
    agreed["confirmation"] = json!(confirmation);
    let sent = alice.call("createVideo", agreed).await;
    assert!(!is_error(&sent), "{}", text_of(&sent));
    assert_eq!(w.provider.counters().of("createVideo"), 1);
    assert_eq!(w.with_token(&alice_token), 3);
    assert_eq!(w.with_token(&bob_token), 1);

    // Alice disconnects on her page (from the tool that gives it): her grant is revoked
    // at the provider, Bob's stays, and her next call is a link again, nothing sent.
    let tool = alice.call("connectAccount", json!({})).await;
    let link = serve_meta(&tool)["connectUrl"]
        .as_str()
        .unwrap_or_else(|| panic!("her page: {}", text_of(&tool)))
        .to_string();
    let page = http::request("GET", &link, &[], "");
    assert_eq!(page.status, 200, "connected: the page, not the sign-in");
    assert!(page.body.contains("Disconnect"), "{}", page.body);
    assert!(
        !page.body.contains("replace"),
        "no key to replace: {}",
        page.body
    );
    let form = page
        .body
        .split("name=\"form\" value=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("the form's value")
        .to_string();
    let gone = http::request(
        "POST",
        &link,
        &[
            ("content-type", "application/x-www-form-urlencoded"),
            ("cookie", &cookie_of(&page)),
        ],
        &format!("form={form}&action=disconnect"),
    );
    assert_eq!(gone.status, 200, "{}", gone.body);
    assert!(!w.active(&alice_token), "her access token is revoked");
    let alice_refresh = issued[0].refresh_token.as_deref().expect("a refresh token");
    assert!(!w.active(alice_refresh), "and her grant with it");
    assert!(w.active(&bob_token), "Bob's grant is his");
    let before = w.provider.received().len();
    link_of(&alice.call("listVideos", json!({})).await);
    assert_eq!(w.provider.received().len(), before);

    // Nothing secret where serve writes: no token it was given, nor its client secret.
    let log = alice
        .log_with(r#""outcome":"disconnected""#)
        .await
        .join("\n");
    assert!(log.contains(r#""via":"oauth""#), "the log is read: {log}");
    let mut stored = Vec::new();
    for entry in super::people::walk(w.test.state()) {
        stored.extend(std::fs::read(entry).unwrap_or_default());
    }
    assert!(!stored.is_empty(), "the state folder is read");
    let stored = String::from_utf8_lossy(&stored);
    let secret = w.at_provider.client_secret(SERVE);
    let issued = w.issued();
    let secrets = issued
        .iter()
        .flat_map(|i| std::iter::once(&i.access_token).chain(&i.refresh_token))
        .chain([&secret]);
    for value in secrets {
        assert!(
            !stored.contains(value.as_str()),
            "{value} in the state folder"
        );
        assert!(!log.contains(value.as_str()), "{value} in the log: {log}");
    }
}

/// An access token about to expire (its lifetime is inside serve's refresh margin) is
/// refreshed before each call, and the call goes out with the new one. Once the grant
/// ends at the provider, the refresh is refused: the call answers with the link again,
/// nothing reaches the provider, and signing in again works.
#[tokio::test]
async fn a_token_about_to_expire_is_refreshed_before_the_call_and_a_refused_refresh_asks_to_connect_again()
 {
    let w = world(Some(SHORT_TTL));
    let (alice, _bob) = w.people().await;
    let link = link_of(&alice.call("listVideos", json!({})).await);
    let page = w.sign_in(&link);
    assert_eq!(page.status, 200, "{}", page.body);
    let connected = w.latest();

    for n in 1..=2 {
        let read = alice.call("listVideos", json!({})).await;
        assert!(!is_error(&read), "call {n}: {}", text_of(&read));
        let issued = w.issued();
        assert_eq!(issued.len(), 1 + n, "a refresh per call: {issued:#?}");
        let fresh = &issued[n];
        assert_eq!(fresh.grant_type, "refresh_token");
        assert_eq!(
            w.bearers().last().map(String::as_str),
            Some(fresh.access_token.as_str()),
            "call {n} goes out with the token just refreshed"
        );
    }
    let bearers = w.bearers();
    assert_eq!(bearers.len(), 2);
    assert_ne!(bearers[0], bearers[1], "a new access token each time");
    assert!(!bearers.contains(&connected.access_token));

    // The grant ends at the provider (the person, or the provider, revoked it).
    let refresh = connected.refresh_token.expect("a refresh token");
    w.at_provider.revoke_as(SERVE, &refresh);
    let refused = alice.call("listVideos", json!({})).await;
    assert!(is_error(&refused), "{}", text_of(&refused));
    let link = link_of(&refused);
    assert_eq!(w.provider.received().len(), 2, "nothing sent: {bearers:#?}");
    alice.log_with(r#""outcome":"grant-ended""#).await;

    // Signing in again connects again.
    let page = w.sign_in(&link);
    assert_eq!(page.status, 200, "{}", page.body);
    let read = alice.call("listVideos", json!({})).await;
    assert!(!is_error(&read), "{}", text_of(&read));
    assert_eq!(
        w.bearers().last(),
        Some(&w.latest().access_token),
        "the new grant's token"
    );
}

/// The provider answers `401` to a token that still looks valid: serve renews the sign-in
/// once, says so, and does not send the call again by itself; the next call goes out with
/// the renewed token. When the renewal is refused too (the grant ended at the provider),
/// the answer gives the link to connect again, and the next call sends nothing.
#[tokio::test]
async fn a_provider_401_renews_the_sign_in_once_and_the_answer_says_so() {
    let w = world(None);
    let (alice, _bob) = w.people().await;
    let link = link_of(&alice.call("listVideos", json!({})).await);
    let page = w.sign_in(&link);
    assert_eq!(page.status, 200, "{}", page.body);
    let first = w.latest();
    let read = alice.call("listVideos", json!({})).await;
    assert!(!is_error(&read), "{}", text_of(&read));

    // The provider refuses the token (revoked on its side, a key rotated…).
    let checking = w.provider.switches().auth;
    w.provider.set(|s| s.auth = Auth::RejectAll);
    let refused = alice.call("listVideos", json!({})).await;
    let text = text_of(&refused);
    assert!(is_error(&refused), "{text}");
    assert!(text.contains("renewed"), "{text}");
    assert_eq!(
        w.bearers(),
        [first.access_token.as_str(), first.access_token.as_str()],
        "sent once, not again by itself"
    );
    let issued = w.issued();
    assert_eq!(issued.len(), 2, "one refresh: {issued:#?}");
    assert_eq!(issued[1].grant_type, "refresh_token");
    let renewed = issued[1].access_token.clone();

    w.provider.set(|s| s.auth = checking);
    let read = alice.call("listVideos", json!({})).await;
    assert!(!is_error(&read), "{}", text_of(&read));
    assert_eq!(w.bearers().last(), Some(&renewed), "the renewed token");

    // The grant ends at the provider while serve's token has minutes left: the provider
    // refuses it, the one refresh is refused too, and the person is asked to connect.
    w.at_provider.revoke_as(
        SERVE,
        first.refresh_token.as_deref().expect("a refresh token"),
    );
    let ended = alice.call("listVideos", json!({})).await;
    let text = text_of(&ended);
    assert!(is_error(&ended), "{text}");
    assert!(text.contains("connect again"), "{text}");
    assert!(text.contains("/connect/"), "the link: {text}");
    assert_eq!(w.with_token(&renewed), 2, "sent once with it");
    assert_eq!(w.issued().len(), 2, "the refused refresh issued nothing");
    let before = w.provider.received().len();
    link_of(&alice.call("listVideos", json!({})).await);
    assert_eq!(w.provider.received().len(), before, "nothing sent");
}

/// A sign-in's `state` is bound to the person who started it and good once: the callback
/// in another person's browser, in a browser without serve's cookie, with a state serve
/// never made, or used a second time, is refused and keeps nothing (no code exchanged, no
/// token kept; a used one does not end the grant it gave).
///
/// An expired state takes the same road as an unknown one (the pending row is found only
/// before its expiry: `ledger::suite::credentials`, with a clock of its own); the binary
/// has no clock to move, so expiry is not driven here.
#[tokio::test]
async fn a_sign_in_state_swapped_replayed_or_unknown_is_refused_and_keeps_nothing() {
    let w = world(None);
    let (alice, bob) = w.people().await;
    let alice_link = link_of(&alice.call("listVideos", json!({})).await);
    let bob_link = link_of(&call(&bob, "listVideos").await);

    // Alice's callback in Bob's browser: refused, and her sign-in is spent with it.
    let (alice_browser, authorization) = open(&alice_link);
    let (bob_browser, _) = open(&bob_link);
    let callback = w.at_provider.authorize(&authorization, &w.redirect);
    let swapped = back(Some(&bob_browser), &callback);
    assert_eq!(swapped.status, 403, "{}", swapped.body);
    assert!(swapped.body.contains("another browser"), "{}", swapped.body);
    let spent = back(Some(&alice_browser), &callback);
    assert_eq!(spent.status, 403, "{}", spent.body);

    // Without serve's cookie (another browser altogether): refused.
    let (_, authorization) = open(&alice_link);
    let callback = w.at_provider.authorize(&authorization, &w.redirect);
    let cookieless = back(None, &callback);
    assert_eq!(cookieless.status, 403, "{}", cookieless.body);

    // A state serve never made, in Alice's own browser: refused.
    let made_up = format!("{}?code=made-up-code&state=made-up-state", w.redirect);
    let unknown = back(Some(&alice_browser), &made_up);
    assert_eq!(unknown.status, 403, "{}", unknown.body);

    assert!(
        w.issued().is_empty(),
        "no code exchanged: {:#?}",
        w.issued()
    );
    link_of(&alice.call("listVideos", json!({})).await);
    link_of(&call(&bob, "listVideos").await);
    assert!(w.provider.received().is_empty(), "{:#?}", w.bearers());

    // Her own sign-in, then the same callback again: the second is refused, and the code
    // is not exchanged twice (the provider would end the grant it gave).
    let (browser, authorization) = open(&alice_link);
    let callback = w.at_provider.authorize(&authorization, &w.redirect);
    let connected = back(Some(&browser), &callback);
    assert_eq!(connected.status, 200, "{}", connected.body);
    let replayed = back(Some(&browser), &callback);
    assert_eq!(replayed.status, 403, "{}", replayed.body);
    assert!(replayed.body.contains("used already"), "{}", replayed.body);
    let issued = w.issued();
    assert_eq!(issued.len(), 1, "{issued:#?}");
    assert!(w.active(&issued[0].access_token), "the grant lives");
    let read = alice.call("listVideos", json!({})).await;
    assert!(!is_error(&read), "{}", text_of(&read));
    assert_eq!(w.bearers(), [issued[0].access_token.as_str()]);
    link_of(&call(&bob, "listVideos").await);

    let log = alice
        .log_with(r#""outcome":"other-browser""#)
        .await
        .join("\n");
    assert!(log.contains(r#""outcome":"unknown-state""#), "{log}");
}

/// serve as a public client (PKCE alone), at a provider that rotates refresh tokens and
/// ends the grant when a rotated one is used again: several calls at once, each finding
/// the token due, refresh one after the other, each from the tokens the one before kept;
/// every call goes through and the grant lives.
#[tokio::test]
async fn calls_at_once_refresh_in_turn_from_the_latest_tokens() {
    let w = world_as(SERVE_PUBLIC, Some(SHORT_TTL));
    let (alice, _bob) = w.people().await;
    let link = link_of(&alice.call("listVideos", json!({})).await);
    let page = w.sign_in(&link);
    assert_eq!(page.status, 200, "{}", page.body);

    let (a, b, c) = tokio::join!(
        alice.call("listVideos", json!({})),
        alice.call("listVideos", json!({})),
        alice.call("listVideos", json!({})),
    );
    for read in [&a, &b, &c] {
        assert!(!is_error(read), "{}\n{:#?}", text_of(read), w.issued());
    }
    let issued = w.issued();
    assert!(
        issued
            .windows(2)
            .all(|pair| pair[0].refresh_token != pair[1].refresh_token),
        "rotated at each refresh: {issued:#?}"
    );
    assert!(w.active(&w.latest().access_token), "the grant lives");
    assert_eq!(w.provider.received().len(), 3, "{:#?}", w.bearers());
}
