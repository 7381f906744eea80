//! The reference provider: a real HTTP server on 127.0.0.1 implementing the operations
//! of `examples/manifests/video.yaml` (a paid async `createVideo` that honours
//! `Idempotency-Key`, its free poll `getVideo`, `listVideos`, and a `deleteVideo`) and of
//! `examples/manifests/placeholder.yaml` (`whoAmI`, `demoCreateJob`, `demoGetJob`,
//! `demoListThings`, and a `demoDeleteJob`), so `serve` and `probe` can be tested against
//! something that behaves like a provider, and misbehaves on demand.
//!
//! Takes `Switches` (changeable while it runs); returns a `Provider` handle with its URL,
//! the `Counters` of what it received (per operation, per key) and gates that hold an
//! operation's responses until the test lets them go. It never sleeps (a slow provider
//! is a gate, so a timeout is simulated deterministically), never binds anything but
//! 127.0.0.1, asks nothing of anyone but (under `Auth::Introspection`) the authorization
//! server on loopback it was given, and stops when the handle is dropped. Used by the tests
//! (`#[path = "support/provider.rs"]`, beside `support/loopback.rs`) and by
//! `cargo run --example reference_provider` (see /work/coord/provider.md and the
//! example's `--help`).
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde::Serialize;
use serde_json::{Value, json};
use tokio::sync::watch;

use super::loopback::Loopback;

/// The credential the provider accepts by default (`Authorization: Bearer TOKEN`).
pub(crate) const TOKEN: &str = "vg_reference_token";

/// How long `wait_until` waits before failing the test: a bound that catches a hang,
/// never a pacing device (nothing waits for time to pass).
pub(crate) const NO_HANG: Duration = Duration::from_secs(60);

/// How the provider checks `Authorization`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Auth {
    /// Only `Bearer <this>`; anything else is a 401.
    Token(String),
    /// Any request, with or without a credential (a provider that forgot to check).
    AcceptAny,
    /// Every request is a 401 (a revoked credential).
    RejectAll,
    /// `Bearer <any of these>`: one account per person (`auth.perPerson`), told apart in
    /// `Provider::received` by the `authorization` each request carried.
    Tokens(Vec<String>),
    /// `Bearer <a token the provider's own authorization server says is active, for this
    /// provider>`, asked of that server for each request (RFC 7662), as a provider's API
    /// checks the access tokens its sign-in issued (`auth.perPerson` with `connect:
    /// oauth`). Each person's token is told apart in `Provider::received`.
    Introspection(Introspection),
}

/// Where and as whom the provider asks its authorization server about a token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Introspection {
    /// The RFC 7662 endpoint, `http://127.0.0.1:…` (loopback only).
    pub endpoint: String,
    /// The provider's own client there (`client_secret_basic`).
    pub client_id: String,
    pub client_secret: String,
    /// The `aud` a token must have: this provider's API.
    pub audience: String,
}

impl Introspection {
    /// Whether `token` is active and for `audience`; no answer, or any other answer, is a
    /// no (the request is then a 401, as at a provider whose sign-in is down).
    async fn active(&self, token: &str) -> bool {
        match tokio::time::timeout(NO_HANG, self.ask(token)).await {
            Ok(Ok(said)) => said["active"] == true && said["aud"] == self.audience.as_str(),
            _ => false,
        }
    }

    /// One `POST` over a connection of its own, read to its end: a loopback server's
    /// JSON answer, with its length.
    async fn ask(&self, token: &str) -> std::io::Result<Value> {
        use base64::Engine as _;
        use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
        let invalid =
            |why: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, why.to_string());
        let rest = self
            .endpoint
            .strip_prefix("http://127.0.0.1:")
            .ok_or_else(|| invalid("the endpoint is not on loopback"))?;
        let (port, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        let body = format!(
            "token={}&token_type_hint=access_token",
            percent_encoding::utf8_percent_encode(token, percent_encoding::NON_ALPHANUMERIC)
        );
        let basic = base64::engine::general_purpose::STANDARD
            .encode(format!("{}:{}", self.client_id, self.client_secret));
        let request = format!(
            "POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\
             Authorization: Basic {basic}\r\nContent-Type: application/x-www-form-urlencoded\r\n\
             Accept: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        let mut stream = tokio::net::TcpStream::connect(format!("127.0.0.1:{port}")).await?;
        stream.write_all(request.as_bytes()).await?;
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).await?;
        let raw = String::from_utf8_lossy(&raw);
        let (head, body) = raw
            .split_once("\r\n\r\n")
            .ok_or_else(|| invalid("no end of headers"))?;
        if !head.starts_with("HTTP/1.1 200") {
            return Err(invalid(head));
        }
        serde_json::from_str(body).map_err(|e| invalid(&e.to_string()))
    }
}

/// What the provider does; every field can be changed while it runs (`Provider::set`).
#[derive(Debug, Clone)]
pub(crate) struct Switches {
    /// Treat every create as new, whatever its `Idempotency-Key` says.
    pub ignore_key: bool,
    /// Refuse (400) a create without `Idempotency-Key`.
    pub require_key: bool,
    /// Make the poll endpoints (`getVideo`, `demoGetJob`) start a new job on every call:
    /// a "free" poll target that is not.
    pub poll_creates: bool,
    pub auth: Auth,
    /// Answer the next N requests (of any operation) with 429.
    pub rate_limit_next: u32,
    /// The `Retry-After` seconds those 429s carry; `None`: no header at all.
    pub retry_after: Option<u32>,
    /// A job reports `running` once polled and `succeeded` after this many polls;
    /// `None`: it stays `queued` until `Provider::finish`.
    pub complete_after_polls: Option<u32>,
    /// Make the next N creates (a job and its key are recorded) and answer them 502, as
    /// a gateway that lost the answer: the outcome is unknown to the caller.
    pub lose_answer_next: u32,
    /// Answer a create whose key was used already with this status and a body saying the
    /// key must be unique (`422 client_order_id must be unique`, `409 Conflict`), instead
    /// of the first job.
    pub duplicate: Option<u16>,
}

impl Default for Switches {
    fn default() -> Switches {
        Switches {
            ignore_key: false,
            require_key: false,
            poll_creates: false,
            auth: Auth::Token(TOKEN.to_string()),
            rate_limit_next: 0,
            retry_after: Some(1),
            complete_after_polls: None,
            lose_answer_next: 0,
            duplicate: None,
        }
    }
}

/// What the provider received. Every request that reached an operation's route counts
/// under `requests`, refused or not (a 401, a 429, a 400 count too): "reached the
/// provider zero times" means `of(op) == 0`.
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct Counters {
    /// Per operation id.
    pub requests: BTreeMap<String, u64>,
    /// Per `Idempotency-Key` value: the creates that carried it.
    pub keys: BTreeMap<String, u64>,
    /// Creates that carried no `Idempotency-Key`.
    pub creates_without_key: u64,
    /// Jobs that exist because of a request (a create, or a poll with `poll_creates`).
    pub jobs_created: u64,
    /// Creates answered with the job their key had already made.
    pub replays: u64,
    /// Creates refused with 409: a key reused for a different request.
    pub conflicts: u64,
    pub unauthorized: u64,
    pub rate_limited: u64,
    /// Requests to a path no operation has.
    pub unknown: u64,
    /// Per operation id: responses waiting at a gate right now.
    pub held: BTreeMap<String, u64>,
}

impl Counters {
    /// Requests that reached operation `id`.
    pub(crate) fn of(&self, id: &str) -> u64 {
        self.requests.get(id).copied().unwrap_or(0)
    }

    /// Creates that carried `key`.
    pub(crate) fn key(&self, key: &str) -> u64 {
        self.keys.get(key).copied().unwrap_or(0)
    }

    pub(crate) fn held(&self, id: &str) -> u64 {
        self.held.get(id).copied().unwrap_or(0)
    }
}

/// One request, as the provider understood it (for evidence in a failing assertion).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Received {
    pub operation: String,
    pub method: String,
    /// The path and query exactly as sent.
    pub target: String,
    pub idempotency_key: Option<String>,
    pub authorization: Option<String>,
    pub body: String,
    pub status: u16,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Video,
    Job,
    /// A job answered inside an envelope, `{"batch": {"id": …, "status": …}}`, as many
    /// batch APIs do (issue 49): `createBatch`, `getBatch`.
    Batch,
}

impl Kind {
    fn create(self) -> &'static str {
        match self {
            Kind::Video => "createVideo",
            Kind::Job => "demoCreateJob",
            Kind::Batch => "createBatch",
        }
    }
    fn poll(self) -> &'static str {
        match self {
            Kind::Video => "getVideo",
            Kind::Job => "demoGetJob",
            Kind::Batch => "getBatch",
        }
    }
    fn list(self) -> &'static str {
        match self {
            Kind::Video => "listVideos",
            Kind::Job | Kind::Batch => "demoListThings",
        }
    }
    fn delete(self) -> &'static str {
        match self {
            Kind::Video => "deleteVideo",
            Kind::Job | Kind::Batch => "demoDeleteJob",
        }
    }
    fn prefix(self) -> &'static str {
        match self {
            Kind::Video => "vid_",
            Kind::Job => "job_",
            Kind::Batch => "bat_",
        }
    }
    /// The input field a create requires.
    fn field(self) -> &'static str {
        match self {
            Kind::Video => "prompt",
            Kind::Job | Kind::Batch => "input",
        }
    }
}

#[derive(Debug, Clone)]
struct Job {
    id: String,
    kind: Kind,
    /// The create's body, to tell a replay from a key reused for something else.
    request: Value,
    polls: u32,
    finished: bool,
}

impl Job {
    fn status(&self, switches: &Switches) -> &'static str {
        let done = self.finished
            || switches
                .complete_after_polls
                .is_some_and(|n| self.polls >= n);
        match (done, self.polls) {
            (true, _) => "succeeded",
            (false, 0) => "queued",
            (false, _) => "running",
        }
    }

    fn to_json(&self, switches: &Switches, base: &str) -> Value {
        let status = self.status(switches);
        let text = self.request.get(self.kind.field()).cloned();
        match self.kind {
            Kind::Video => json!({
                "id": self.id,
                "status": status,
                "prompt": text,
                "aspectRatio": self.request.get("aspectRatio").cloned().unwrap_or(json!("16:9")),
                "videoUrl": (status == "succeeded").then(|| format!("{base}/files/{}.mp4", self.id)),
                "error": null,
            }),
            Kind::Job => json!({
                "id": self.id,
                "status": status,
                "input": text,
                "result": (status == "succeeded").then(|| format!("done: {}", self.id)),
            }),
            Kind::Batch => json!({
                "batch": {
                    "id": self.id,
                    "status": status,
                    "input": text,
                    "result": (status == "succeeded").then(|| format!("done: {}", self.id)),
                }
            }),
        }
    }
}

struct Inner {
    switches: Switches,
    counters: Counters,
    received: Vec<Received>,
    /// Newest last.
    jobs: Vec<Job>,
    /// Idempotency-Key → index in `jobs`, per kind.
    by_key: BTreeMap<(String, &'static str), usize>,
    next_id: u64,
}

struct Shared {
    state: Mutex<Inner>,
    /// Bumped after every change to the counters, for `wait_until`.
    version: watch::Sender<u64>,
    /// Operations whose responses are held.
    holds: watch::Sender<BTreeSet<String>>,
    base: Mutex<String>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic while holding the lock is a bug in a test; keep serving regardless.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn changed(&self) {
        self.version.send_modify(|v| *v += 1);
    }
}

/// A running reference provider; stops when dropped.
pub(crate) struct Provider {
    shared: Arc<Shared>,
    server: Loopback,
}

impl Provider {
    /// On a free port of 127.0.0.1.
    pub(crate) fn start(switches: Switches) -> Provider {
        Provider::start_on(0, switches).expect("the reference provider binds 127.0.0.1")
    }

    pub(crate) fn start_on(port: u16, switches: Switches) -> std::io::Result<Provider> {
        let shared = Arc::new(Shared {
            state: Mutex::new(Inner {
                switches,
                counters: Counters::default(),
                received: Vec::new(),
                jobs: Vec::new(),
                by_key: BTreeMap::new(),
                next_id: 1,
            }),
            version: watch::channel(0).0,
            holds: watch::channel(BTreeSet::new()).0,
            base: Mutex::new(String::new()),
        });
        let server = Loopback::start(port, router(shared.clone()))?;
        *shared
            .base
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = server.url();
        Ok(Provider { shared, server })
    }

    /// `http://127.0.0.1:PORT`, for `--base-url`.
    pub(crate) fn url(&self) -> String {
        self.server.url()
    }

    pub(crate) fn port(&self) -> u16 {
        self.server.addr().port()
    }

    pub(crate) fn counters(&self) -> Counters {
        self.shared.lock().counters.clone()
    }

    /// Every request received, oldest first.
    pub(crate) fn received(&self) -> Vec<Received> {
        self.shared.lock().received.clone()
    }

    /// The ids of the jobs that exist, newest first (what the list operations show).
    pub(crate) fn job_ids(&self) -> Vec<String> {
        self.shared
            .lock()
            .jobs
            .iter()
            .rev()
            .map(|j| j.id.clone())
            .collect()
    }

    /// Changes the switches; requests already being answered keep the old ones.
    pub(crate) fn set(&self, change: impl FnOnce(&mut Switches)) {
        change(&mut self.shared.lock().switches);
    }

    pub(crate) fn switches(&self) -> Switches {
        self.shared.lock().switches.clone()
    }

    /// Marks job `id` succeeded; false when there is no such job.
    pub(crate) fn finish(&self, id: &str) -> bool {
        let mut state = self.shared.lock();
        match state.jobs.iter_mut().find(|j| j.id == id) {
            Some(job) => {
                job.finished = true;
                true
            }
            None => false,
        }
    }

    /// From now until the gate is released (or dropped), every request to operation `id`
    /// is received, counted and acted on (a create makes its job), and then its response
    /// waits: a slow provider, for a client's timeout to fire without anyone sleeping.
    pub(crate) fn hold(&self, id: &str) -> Gate {
        self.shared.holds.send_modify(|holds| {
            holds.insert(id.to_string());
        });
        Gate {
            shared: self.shared.clone(),
            id: id.to_string(),
        }
    }

    /// Waits until `ready` holds for the counters; fails the test after `NO_HANG`, with
    /// what was received. Needs a tokio runtime with timers (`#[tokio::test]` has them).
    pub(crate) async fn wait_until(&self, what: &str, ready: impl Fn(&Counters) -> bool) {
        let mut version = self.shared.version.subscribe();
        let waited = tokio::time::timeout(NO_HANG, async {
            loop {
                if ready(&self.counters()) {
                    return;
                }
                if version.changed().await.is_err() {
                    return;
                }
            }
        })
        .await;
        assert!(
            waited.is_ok() && ready(&self.counters()),
            "the reference provider never saw {what}: {:#?}\n{:#?}",
            self.counters(),
            self.received()
        );
    }
}

/// Holds an operation's responses while it lives; `release` (or drop) lets them go.
pub(crate) struct Gate {
    shared: Arc<Shared>,
    id: String,
}

impl Gate {
    #[expect(clippy::unused_self, reason = "releasing is dropping the gate")]
    pub(crate) fn release(self) {}
}

impl Drop for Gate {
    fn drop(&mut self) {
        self.shared.holds.send_modify(|holds| {
            holds.remove(&self.id);
        });
    }
}

/// Counts a response as held while it waits at a gate, and uncounts it when the wait
/// ends or the client gives up (the handler's future is then dropped).
struct Holding<'a> {
    shared: &'a Shared,
    id: &'static str,
}

impl Drop for Holding<'_> {
    fn drop(&mut self) {
        if let Some(n) = self.shared.lock().counters.held.get_mut(self.id) {
            *n -= 1;
        }
        self.shared.changed();
    }
}

async fn pass_gate(shared: &Shared, id: &'static str) {
    let mut holds = shared.holds.subscribe();
    if !holds.borrow().contains(id) {
        return;
    }
    *shared
        .lock()
        .counters
        .held
        .entry(id.to_string())
        .or_default() += 1;
    let _holding = Holding { shared, id };
    shared.changed();
    let _ = holds.wait_for(|holds| !holds.contains(id)).await;
}

fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route(
            "/v1/videos",
            get(|s, h, u| list(s, h, u, Kind::Video))
                .post(|s, h, u, b| create(s, h, u, b, Kind::Video)),
        )
        .route(
            "/v1/videos/{id}",
            get(|s, h, u, p| poll(s, h, u, p, Kind::Video))
                .delete(|s, h, u, p| delete(s, h, u, p, Kind::Video)),
        )
        .route(
            "/v1/jobs",
            axum::routing::post(|s, h, u, b| create(s, h, u, b, Kind::Job)),
        )
        .route(
            "/v1/jobs/{id}",
            get(|s, h, u, p| poll(s, h, u, p, Kind::Job))
                .delete(|s, h, u, p| delete(s, h, u, p, Kind::Job)),
        )
        .route(
            "/v1/batches",
            axum::routing::post(|s, h, u, b| create(s, h, u, b, Kind::Batch)),
        )
        .route(
            "/v1/batches/{id}",
            get(|s, h, u, p| poll(s, h, u, p, Kind::Batch)),
        )
        .route("/v1/things", get(|s, h, u| list(s, h, u, Kind::Job)))
        .route("/v1/videos-by-key", get(by_key))
        .route("/v1/me", get(who_am_i))
        .route("/_counters", get(counters))
        .fallback(unknown)
        .with_state(shared)
}

type SharedState = State<Arc<Shared>>;

/// RFC 9457 problem details, as the manifests' documents describe errors.
fn problem(status: StatusCode, detail: &str) -> Response {
    let body = json!({
        "type": "about:blank",
        "title": status.canonical_reason().unwrap_or(""),
        "status": status.as_u16(),
        "detail": detail,
    });
    (
        status,
        [(header::CONTENT_TYPE, "application/problem+json")],
        body.to_string(),
    )
        .into_response()
}

fn ok_json(status: StatusCode, body: &Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

fn text(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get(name)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
}

/// Under `Auth::Introspection`, whether the request's bearer token is active (asked of
/// the authorization server before the state is locked: the answer comes over the
/// network); `None` under the other modes, which `admit` decides.
async fn introspected(shared: &Shared, headers: &HeaderMap) -> Option<bool> {
    let auth = shared.lock().switches.auth.clone();
    let Auth::Introspection(at) = auth else {
        return None;
    };
    let token = text(headers, "authorization")
        .and_then(|value| value.strip_prefix("Bearer ").map(str::to_string));
    Some(match token {
        Some(token) => at.active(&token).await,
        None => false,
    })
}

/// Counts the request under `op` and answers the refusals every operation shares (429,
/// then 401); `None` lets the operation proceed. `introspected`: what the authorization
/// server said of the token (`introspected`).
fn admit(
    state: &mut Inner,
    introspected: Option<bool>,
    op: &'static str,
    method: &str,
    uri: &Uri,
    headers: &HeaderMap,
    body: &[u8],
) -> Option<Response> {
    *state.counters.requests.entry(op.to_string()).or_default() += 1;
    let authorization = text(headers, "authorization");
    state.received.push(Received {
        operation: op.to_string(),
        method: method.to_string(),
        target: uri
            .path_and_query()
            .map_or_else(|| uri.path().to_string(), |p| p.as_str().to_string()),
        idempotency_key: text(headers, "idempotency-key"),
        authorization: authorization.clone(),
        body: String::from_utf8_lossy(body).into_owned(),
        status: 0,
    });
    if state.switches.rate_limit_next > 0 {
        state.switches.rate_limit_next -= 1;
        state.counters.rate_limited += 1;
        let mut response = problem(StatusCode::TOO_MANY_REQUESTS, "Too many requests.");
        if let Some(seconds) = state.switches.retry_after {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        return Some(response);
    }
    let authorized = match &state.switches.auth {
        Auth::AcceptAny => true,
        Auth::RejectAll => false,
        Auth::Token(token) => authorization.as_deref() == Some(&format!("Bearer {token}")),
        Auth::Tokens(tokens) => tokens
            .iter()
            .any(|token| authorization.as_deref() == Some(&format!("Bearer {token}"))),
        // Switched to while the question was out: not asked, so not active.
        Auth::Introspection(_) => introspected == Some(true),
    };
    if !authorized {
        state.counters.unauthorized += 1;
        return Some(problem(
            StatusCode::UNAUTHORIZED,
            "The token is missing, invalid or revoked.",
        ));
    }
    None
}

/// Records the status the request was answered with, in its `Received` entry.
fn answered(state: &mut Inner, response: Response) -> Response {
    if let Some(last) = state.received.last_mut() {
        last.status = response.status().as_u16();
    }
    response
}

fn new_job(state: &mut Inner, kind: Kind, request: Value) -> usize {
    let id = format!("{}{}", kind.prefix(), state.next_id);
    state.next_id += 1;
    state.jobs.push(Job {
        id,
        kind,
        request,
        polls: 0,
        finished: false,
    });
    state.counters.jobs_created += 1;
    state.jobs.len() - 1
}

/// The create's input, checked as the manifests' schemas say.
fn parse_create(kind: Kind, body: &[u8]) -> Result<Value, String> {
    let value: Value =
        serde_json::from_slice(body).map_err(|e| format!("the body is not JSON: {e}"))?;
    let Some(object) = value.as_object() else {
        return Err("the body must be a JSON object".to_string());
    };
    let field = kind.field();
    match object.get(field).and_then(Value::as_str) {
        Some(text) if !text.is_empty() => {}
        _ => return Err(format!("`{field}` is required: a non-empty string")),
    }
    if kind == Kind::Video {
        if let Some(extra) = object
            .keys()
            .find(|k| !["prompt", "aspectRatio"].contains(&k.as_str()))
        {
            return Err(format!("unknown property `{extra}`"));
        }
        if let Some(ratio) = object.get("aspectRatio")
            && !["16:9", "9:16", "1:1"].contains(&ratio.as_str().unwrap_or(""))
        {
            return Err("`aspectRatio` must be one of 16:9, 9:16, 1:1".to_string());
        }
    }
    Ok(value)
}

async fn create(
    State(shared): SharedState,
    headers: HeaderMap,
    uri: Uri,
    body: Bytes,
    kind: Kind,
) -> Response {
    let op = kind.create();
    let introspected = introspected(&shared, &headers).await;
    let response = {
        let mut state = shared.lock();
        let response = match admit(&mut state, introspected, op, "POST", &uri, &headers, &body) {
            Some(refused) => refused,
            None => create_job(&mut state, kind, &headers, &body, &shared.base_url()),
        };
        answered(&mut state, response)
    };
    shared.changed();
    pass_gate(&shared, op).await;
    response
}

fn create_job(
    state: &mut Inner,
    kind: Kind,
    headers: &HeaderMap,
    body: &[u8],
    base: &str,
) -> Response {
    let key = text(headers, "idempotency-key");
    match &key {
        Some(key) => *state.counters.keys.entry(key.clone()).or_default() += 1,
        None => state.counters.creates_without_key += 1,
    }
    if key.is_none() && state.switches.require_key {
        return problem(
            StatusCode::BAD_REQUEST,
            "An Idempotency-Key header is required.",
        );
    }
    let request = match parse_create(kind, body) {
        Ok(request) => request,
        Err(why) => return problem(StatusCode::BAD_REQUEST, &why),
    };
    let honoured = key.filter(|_| !state.switches.ignore_key);
    if let Some(key) = &honoured
        && let Some(&index) = state.by_key.get(&(key.clone(), kind.create()))
    {
        if state.jobs[index].request != request {
            state.counters.conflicts += 1;
            return problem(
                StatusCode::CONFLICT,
                "This Idempotency-Key was already used for a different request.",
            );
        }
        if let Some(status) = state.switches.duplicate {
            return problem(
                StatusCode::from_u16(status).unwrap_or(StatusCode::CONFLICT),
                "Idempotency-Key must be unique: it was used already.",
            );
        }
        state.counters.replays += 1;
        let mut response = ok_json(
            StatusCode::OK,
            &state.jobs[index].to_json(&state.switches, base),
        );
        response
            .headers_mut()
            .insert("idempotent-replayed", HeaderValue::from_static("true"));
        return response;
    }
    let index = new_job(state, kind, request);
    if let Some(key) = honoured {
        state.by_key.insert((key, kind.create()), index);
    }
    if state.switches.lose_answer_next > 0 {
        state.switches.lose_answer_next -= 1;
        return problem(StatusCode::BAD_GATEWAY, "The upstream answer was lost.");
    }
    ok_json(
        StatusCode::OK,
        &state.jobs[index].to_json(&state.switches, base),
    )
}

async fn poll(
    State(shared): SharedState,
    headers: HeaderMap,
    uri: Uri,
    Path(id): Path<String>,
    kind: Kind,
) -> Response {
    let op = kind.poll();
    let base = shared.base_url();
    let introspected = introspected(&shared, &headers).await;
    let response = {
        let mut state = shared.lock();
        let response = if let Some(refused) =
            admit(&mut state, introspected, op, "GET", &uri, &headers, b"")
        {
            refused
        } else {
            if state.switches.poll_creates {
                let request = json!({ kind.field(): format!("made by polling {id}") });
                new_job(&mut state, kind, request);
            }
            let switches = state.switches.clone();
            match state.jobs.iter_mut().find(|j| j.id == id && j.kind == kind) {
                Some(job) => {
                    job.polls += 1;
                    ok_json(StatusCode::OK, &job.to_json(&switches, &base))
                }
                None => problem(StatusCode::NOT_FOUND, &format!("no job {id}")),
            }
        };
        answered(&mut state, response)
    };
    shared.changed();
    pass_gate(&shared, op).await;
    response
}

async fn list(State(shared): SharedState, headers: HeaderMap, uri: Uri, kind: Kind) -> Response {
    let op = kind.list();
    let base = shared.base_url();
    let introspected = introspected(&shared, &headers).await;
    let response = {
        let mut state = shared.lock();
        let response = match admit(&mut state, introspected, op, "GET", &uri, &headers, b"") {
            Some(refused) => refused,
            None => list_jobs(&state, kind, uri.query().unwrap_or(""), &base),
        };
        answered(&mut state, response)
    };
    shared.changed();
    pass_gate(&shared, op).await;
    response
}

fn list_jobs(state: &Inner, kind: Kind, query: &str, base: &str) -> Response {
    let mut limit = 20usize;
    let mut start = 0usize;
    for (name, value) in query_pairs(query) {
        match name.as_str() {
            "limit" => match value.parse::<usize>() {
                Ok(n) if (1..=100).contains(&n) => limit = n,
                _ => return problem(StatusCode::BAD_REQUEST, "`limit` must be 1 to 100"),
            },
            "cursor" => match value.strip_prefix("after-").and_then(|n| n.parse().ok()) {
                Some(n) => start = n,
                None => return problem(StatusCode::BAD_REQUEST, "unknown cursor"),
            },
            _ => {}
        }
    }
    let all: Vec<&Job> = state.jobs.iter().rev().filter(|j| j.kind == kind).collect();
    let page: Vec<Value> = all
        .iter()
        .skip(start)
        .take(limit)
        .map(|j| j.to_json(&state.switches, base))
        .collect();
    let next = (start + limit < all.len()).then(|| format!("after-{}", start + limit));
    let body = match kind {
        Kind::Video => json!({ "items": page, "nextCursor": next }),
        Kind::Job | Kind::Batch => json!({ "things": page, "nextCursor": next }),
    };
    ok_json(StatusCode::OK, &body)
}

async fn delete(
    State(shared): SharedState,
    headers: HeaderMap,
    uri: Uri,
    Path(id): Path<String>,
    kind: Kind,
) -> Response {
    let op = kind.delete();
    let introspected = introspected(&shared, &headers).await;
    let response = {
        let mut state = shared.lock();
        let response = match admit(&mut state, introspected, op, "DELETE", &uri, &headers, b"") {
            Some(refused) => refused,
            None => match state.jobs.iter().position(|j| j.id == id && j.kind == kind) {
                Some(index) => {
                    state.jobs.remove(index);
                    // Keys keep pointing at jobs by index: rebuild them without this one.
                    state.by_key.retain(|_, i| *i != index);
                    for i in state.by_key.values_mut() {
                        if *i > index {
                            *i -= 1;
                        }
                    }
                    StatusCode::NO_CONTENT.into_response()
                }
                None => problem(StatusCode::NOT_FOUND, &format!("no job {id}")),
            },
        };
        answered(&mut state, response)
    };
    shared.changed();
    pass_gate(&shared, op).await;
    response
}

/// `GET /v1/videos-by-key?Idempotency-Key=K` (`getVideoByKey`): the video job the key
/// made, as its poll answers it, or 404. Only keys the provider honoured are known.
async fn by_key(State(shared): SharedState, headers: HeaderMap, uri: Uri) -> Response {
    let op = "getVideoByKey";
    let base = shared.base_url();
    let introspected = introspected(&shared, &headers).await;
    let response = {
        let mut state = shared.lock();
        let response = if let Some(refused) =
            admit(&mut state, introspected, op, "GET", &uri, &headers, b"")
        {
            refused
        } else {
            let key = query_pairs(uri.query().unwrap_or_default())
                .into_iter()
                .find(|(name, _)| name == "Idempotency-Key")
                .map(|(_, value)| value)
                .unwrap_or_default();
            match state.by_key.get(&(key.clone(), Kind::Video.create())) {
                Some(&index) => {
                    let switches = state.switches.clone();
                    ok_json(StatusCode::OK, &state.jobs[index].to_json(&switches, &base))
                }
                None => problem(
                    StatusCode::NOT_FOUND,
                    &format!("no video for the key {key}"),
                ),
            }
        };
        answered(&mut state, response)
    };
    shared.changed();
    response
}

async fn who_am_i(State(shared): SharedState, headers: HeaderMap, uri: Uri) -> Response {
    let op = "whoAmI";
    let introspected = introspected(&shared, &headers).await;
    let response = {
        let mut state = shared.lock();
        let response = match admit(&mut state, introspected, op, "GET", &uri, &headers, b"") {
            Some(refused) => refused,
            None => ok_json(
                StatusCode::OK,
                &json!({ "id": "acct_1", "name": "Reference Account", "email": "reference@example.com" }),
            ),
        };
        answered(&mut state, response)
    };
    shared.changed();
    pass_gate(&shared, op).await;
    response
}

/// `GET /_counters`: the counters as JSON, for a person running the example by hand.
/// Not counted itself.
async fn counters(State(shared): SharedState) -> Response {
    let counters = shared.lock().counters.clone();
    ok_json(
        StatusCode::OK,
        &serde_json::to_value(counters).unwrap_or(Value::Null),
    )
}

async fn unknown(State(shared): SharedState, uri: Uri) -> Response {
    shared.lock().counters.unknown += 1;
    shared.changed();
    problem(
        StatusCode::NOT_FOUND,
        &format!("no operation at {}", uri.path()),
    )
}

impl Shared {
    fn base_url(&self) -> String {
        self.base
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

/// `a=1&b=x%20y` → pairs, `+` as a space (form encoding, as query strings use it).
pub(crate) fn query_pairs(query: &str) -> Vec<(String, String)> {
    let decode = |s: &str| {
        percent_encoding::percent_decode_str(&s.replace('+', " "))
            .decode_utf8_lossy()
            .into_owned()
    };
    query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| match pair.split_once('=') {
            Some((name, value)) => (decode(name), decode(value)),
            None => (decode(pair), String::new()),
        })
        .collect()
}
