//! What `serve` answers (issue 30, round four: "one yes is one charge"): the real binary
//! over stdio, a loopback provider that counts what it received and answers what a
//! careless provider answers — `null` in a field the output schema types as a string,
//! `audio/mpeg` bytes, a redirect to another origin, a redirect loop, a 3xx that is not
//! followed, a create that never answers. Each test checks the answer against what the
//! provider received.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::http::{StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use rmcp::model::{CallToolResult, ResourceContents};
use serde_json::{Value, json};

use super::mcp::{Person, Serve, Session, Transport, is_error, serve_meta, text_of};
use crate::support::loopback::Loopback;

const MANIFEST: &str = r#"version: 1
service:
  name: Labels
  version: 1.0.0
  description: A provider of shipping labels, speech and print jobs whose answers are careless.
  publicUrl: https://api.labels.example
  dashboardUrl: https://labels.example/keys
auth: { scheme: bearer }
targets: [mcp]
operations:
  - id: buyLabel
    method: post
    path: /v1/labels
    summary: Buy a shipping label
    description: Buys one label for one parcel. Ships nothing by itself.
    input: { type: object, properties: { to: { type: string } }, required: [to] }
    output:
      type: object
      properties: { id: { type: string }, tracking: { type: string } }
      required: [id]
    spends: { kind: money, note: "Costs 5 USD per label." }
  - id: buyLightLabel
    method: post
    path: /v1/light-labels
    summary: Buy a shipping label, with a light tool
    description: Buys one label for one parcel. Ships nothing by itself.
    input: { type: object, properties: { to: { type: string } }, required: [to] }
    output:
      type: object
      properties: { id: { type: string }, tracking: { type: string } }
      required: [id]
    spends: { kind: money, note: "Costs 5 USD per label." }
    mcp: { output: summary }
  - id: buyOddLabel
    method: post
    path: /v1/odd-labels
    summary: Buy a shipping label from an odd provider
    description: Buys one label for one parcel. Ships nothing by itself.
    input: { type: object, properties: { to: { type: string } }, required: [to] }
    output:
      type: object
      properties: { id: { type: string }, tracking: { type: string } }
      required: [id]
    spends: { kind: money, note: "Costs 5 USD per label." }
    mcp: { output: summary }
  - id: speak
    method: post
    path: /v1/speech
    summary: Read a text aloud
    description: Turns a text into speech. Stores nothing.
    input: { type: object, properties: { text: { type: string } }, required: [text] }
    outputType: audio/mpeg
    spends: { kind: credits, note: "Costs 1 credit per call." }
  - id: moveAway
    method: post
    path: /v1/away
    summary: Move a label away
    description: Moves a label. Deletes nothing.
    input: { type: object, properties: { id: { type: string } }, required: [id] }
    spends: { kind: money, note: "Costs 1 USD." }
  - id: loopAround
    method: post
    path: /v1/loop
    summary: Loop a label around
    description: Loops a label. Deletes nothing.
    input: { type: object, properties: { id: { type: string } }, required: [id] }
    spends: { kind: money, note: "Costs 1 USD." }
  - id: startJob
    method: post
    path: /v1/jobs
    summary: Start a label job
    description: Starts a job that prints labels. Ships nothing.
    input: { type: object, properties: { count: { type: integer } }, required: [count] }
    spends: { kind: money, note: "Costs 1 USD per label." }
    async: { pollWith: getJob }
  - id: getJob
    method: get
    path: /v1/jobs/{id}
    summary: Check a label job
    description: Read-only. Returns the job's status.
  - id: orderPrint
    method: post
    path: /v1/prints
    summary: Order a print run
    description: Orders one print run. Ships nothing.
    input: { type: object, properties: { copies: { type: integer } }, required: [copies] }
    spends: { kind: money, note: "Costs 20 USD per run." }
    async: { pollWith: getPrint }
    idempotency: unsupported
  - id: getPrint
    method: get
    path: /v1/prints/{id}
    summary: Check a print run
    description: Read-only. Returns the print run's status.
  - id: listPrints
    method: get
    path: /v1/prints
    summary: List print runs
    description: Read-only. Lists print runs, newest first.
"#;

/// The bytes `speak` answers: an ID3 header and an MPEG frame header, not UTF-8.
const SPEECH: &[u8] = b"ID3\x04\x00\x00\x00\x00\x00\x00\xff\xfb\x90\x64\x00\x80";

/// The careless provider, counting requests per path.
struct Careless {
    server: Loopback,
    seen: Arc<Mutex<BTreeMap<String, u64>>>,
}

impl Careless {
    fn start() -> Careless {
        let seen: Arc<Mutex<BTreeMap<String, u64>>> = Arc::default();
        let count = seen.clone();
        let app = Router::new().fallback(move |uri: Uri| {
            let count = count.clone();
            async move {
                *count
                    .lock()
                    .unwrap()
                    .entry(uri.path().to_string())
                    .or_default() += 1;
                answer(uri.path()).await
            }
        });
        Careless {
            server: Loopback::start(0, app).expect("the provider binds 127.0.0.1"),
            seen,
        }
    }

    fn url(&self) -> String {
        self.server.url()
    }

    fn of(&self, path: &str) -> u64 {
        self.seen.lock().unwrap().get(path).copied().unwrap_or(0)
    }
}

async fn answer(path: &str) -> Response {
    let json = |status: StatusCode, body: Value| {
        (
            status,
            [(header::CONTENT_TYPE, "application/json")],
            body.to_string(),
        )
            .into_response()
    };
    match path {
        "/v1/labels" | "/v1/light-labels" => {
            json(StatusCode::OK, json!({ "id": "lbl_1", "tracking": null }))
        }
        // An id of the wrong type: what a summary still declares, and checks.
        "/v1/odd-labels" => json(StatusCode::OK, json!({ "id": 7, "tracking": "1Z" })),
        "/v1/speech" => (
            StatusCode::OK,
            [(header::CONTENT_TYPE, "audio/mpeg")],
            SPEECH.to_vec(),
        )
            .into_response(),
        // Another origin: never contacted (nothing listens there, and serve does not go).
        "/v1/away" => (
            StatusCode::TEMPORARY_REDIRECT,
            [(header::LOCATION, "http://127.0.0.2:1/steal")],
        )
            .into_response(),
        "/v1/loop" => (
            StatusCode::TEMPORARY_REDIRECT,
            [(header::LOCATION, "/v1/loop")],
        )
            .into_response(),
        // A 3xx the client does not follow (no Location), with a body that looks like a job.
        "/v1/jobs" => json(StatusCode::MULTIPLE_CHOICES, json!({ "id": "job_1" })),
        // A create that never answers: the client's timeout fires, the provider has the
        // request (and, not recognising retries, would make a second run of a second one).
        "/v1/prints" => std::future::pending().await,
        _ => json(StatusCode::NOT_FOUND, json!({ "detail": "no such thing" })),
    }
}

fn manifest(dir: &Path) -> PathBuf {
    let path = dir.join("connector.yaml");
    std::fs::write(&path, MANIFEST).unwrap();
    path
}

async fn serve(manifest: &Path, url: &str, state: &Path, extra: &[&str]) -> Session {
    let mut serve = Serve::new(manifest, url, state)
        .env("LABELS_TOKEN", "lb_test_token_0123456789")
        .arg("--no-consent");
    serve.token = None;
    for arg in extra {
        serve = serve.arg(arg);
    }
    serve
        .connect(Transport::Stdio, Person::without_elicitation())
        .await
}

/// `null` in a field the output schema types as a string: the answer is not handed on as
/// `structuredContent` (on the first call or on the ledger's replay), but as text with a
/// note that says the call went through.
#[tokio::test]
async fn an_answer_that_does_not_match_the_output_schema_goes_out_as_text() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = manifest(dir.path());
    let provider = Careless::start();
    let state = tempfile::tempdir().unwrap();
    let s = serve(&manifest, &provider.url(), state.path(), &[]).await;
    let args = json!({ "to": "Ada Lovelace, 12 St James's Square" });
    let first = s.call("buyLabel", args.clone()).await;
    let replay = s.call("buyLabel", args).await;
    assert_eq!(provider.of("/v1/labels"), 1, "bought once");
    for (what, result) in [("first", &first), ("replay", &replay)] {
        assert!(result.structured_content.is_none(), "{what}: {result:?}");
        // A success without `structuredContent` for a tool with an `outputSchema` makes
        // the Python SDK raise too: the answer is a tool error that says it went through.
        assert!(is_error(result), "{what}: {result:?}");
        let text = text_of(result);
        assert!(text.contains(r#""tracking":null"#), "{what}: {text}");
        assert!(text.contains("outputSchema"), "{what}: {text}");
        assert!(text.contains("went through"), "{what}: {text}");
        assert_eq!(serve_meta(result)["outputSchemaMismatch"], true, "{what}");
    }
    assert_eq!(serve_meta(&replay)["notSent"], true, "{replay:?}");
    s.close().await;
}

/// `mcp.output: summary` (issue 49): the tool declares only `id` of the answer, so the
/// `null` tracking number the whole schema refuses goes out as `structuredContent`; an
/// id of the wrong type, which the summary declares, is still refused as above.
#[tokio::test]
async fn a_summary_output_schema_is_what_serve_checks() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = manifest(dir.path());
    let provider = Careless::start();
    let state = tempfile::tempdir().unwrap();
    let s = serve(&manifest, &provider.url(), state.path(), &[]).await;
    let tools = s.client.list_all_tools().await.expect("tools/list");
    let light = tools.iter().find(|t| t.name == "buyLightLabel").unwrap();
    assert_eq!(
        light
            .output_schema
            .as_deref()
            .map(|o| Value::Object(o.clone())),
        Some(json!({
            "type": "object",
            "properties": { "id": { "type": "string" } },
            "required": ["id"]
        })),
        "{light:?}"
    );
    let args = json!({ "to": "Ada Lovelace, 12 St James's Square" });
    let light = s.call("buyLightLabel", args.clone()).await;
    assert!(!is_error(&light), "{light:?}");
    assert_eq!(
        light.structured_content,
        Some(json!({ "id": "lbl_1", "tracking": null })),
        "{light:?}"
    );
    let odd = s.call("buyOddLabel", args).await;
    assert!(is_error(&odd), "{odd:?}");
    assert!(odd.structured_content.is_none(), "{odd:?}");
    assert_eq!(serve_meta(&odd)["outputSchemaMismatch"], true, "{odd:?}");
    let problem = serve_meta(&odd)["outputSchemaProblem"].to_string();
    assert!(problem.contains("/id"), "{problem}");
    assert_eq!(provider.of("/v1/light-labels"), 1);
    assert_eq!(provider.of("/v1/odd-labels"), 1);
    s.close().await;
}

fn blob_of(result: &CallToolResult) -> Option<(Vec<u8>, Option<String>)> {
    result
        .content
        .iter()
        .find_map(|c| match &c.as_resource()?.resource {
            ResourceContents::BlobResourceContents {
                blob, mime_type, ..
            } => Some((
                base64::engine::general_purpose::STANDARD
                    .decode(blob)
                    .expect("base64"),
                mime_type.clone(),
            )),
            _ => None,
        })
}

/// An `audio/mpeg` answer replayed from the ledger is the same resource: its bytes, its
/// media type; and the replay says the status it shows is the one at the first call.
#[tokio::test]
async fn a_replayed_answer_keeps_its_media_type_and_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = manifest(dir.path());
    let provider = Careless::start();
    let state = tempfile::tempdir().unwrap();
    let s = serve(&manifest, &provider.url(), state.path(), &[]).await;
    let args = json!({ "text": "Hello" });
    let first = s.call("speak", args.clone()).await;
    assert!(!is_error(&first), "{first:?}");
    let replay = s.call("speak", args).await;
    assert_eq!(provider.of("/v1/speech"), 1, "spoken once");
    assert_eq!(serve_meta(&replay)["notSent"], true, "{replay:?}");
    let mpeg = Some((SPEECH.to_vec(), Some("audio/mpeg".to_string())));
    assert_eq!(blob_of(&first), mpeg, "first: {first:?}");
    assert_eq!(blob_of(&replay), mpeg, "replay: {replay:?}");
    let said = text_of(&replay);
    assert!(said.contains("HTTP 200 at the first call"), "{said}");
    assert_eq!(
        serve_meta(&replay)["httpStatusAtFirstCall"],
        200,
        "{replay:?}"
    );
    s.close().await;
}

/// A redirect to another origin names where it pointed, not the URL that answered with
/// it; a redirect loop within the provider's own origin is a loop, not "another origin".
#[tokio::test]
async fn redirect_errors_name_the_target_and_tell_a_loop_from_another_origin() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = manifest(dir.path());
    let provider = Careless::start();
    let state = tempfile::tempdir().unwrap();
    let s = serve(&manifest, &provider.url(), state.path(), &[]).await;

    let away = s.call("moveAway", json!({ "id": "lbl_1" })).await;
    assert!(is_error(&away), "{away:?}");
    let said = text_of(&away);
    assert!(said.contains("http://127.0.0.2:1/steal"), "{said}");
    assert!(said.contains("another origin"), "{said}");
    assert!(
        !said.contains("/v1/away"),
        "names the URL that redirected: {said}"
    );
    assert_eq!(provider.of("/v1/away"), 1);

    let looped = s.call("loopAround", json!({ "id": "lbl_1" })).await;
    assert!(is_error(&looped), "{looped:?}");
    let said = text_of(&looped);
    assert!(!said.contains("another origin"), "{said}");
    assert!(said.contains("more than 5 times"), "{said}");
    assert!(said.contains("/v1/loop"), "{said}");
    // The request and the five redirects followed.
    assert_eq!(provider.of("/v1/loop"), 6);
    s.close().await;
}

/// A 3xx the client does not follow is no answer: not "Started a job", not a success.
#[tokio::test]
async fn an_unfollowed_redirect_is_a_failure_not_a_job() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = manifest(dir.path());
    let provider = Careless::start();
    let state = tempfile::tempdir().unwrap();
    let s = serve(&manifest, &provider.url(), state.path(), &[]).await;
    let result = s.call("startJob", json!({ "count": 2 })).await;
    assert!(is_error(&result), "{result:?}");
    let said = text_of(&result);
    assert!(!said.contains("Started a job"), "{said}");
    assert!(said.contains("HTTP 300"), "{said}");
    assert!(said.contains("not followed"), "{said}");
    assert_eq!(serve_meta(&result)["redirectNotFollowed"], true);
    // Not recorded as a job either: the identical call is not answered "NOT SENT AGAIN".
    let again = s.call("startJob", json!({ "count": 2 })).await;
    assert_ne!(serve_meta(&again)["notSent"], true, "{again:?}");
    s.close().await;
}

/// After a timeout, the advice follows the mechanism: a call whose provider cannot
/// recognise a repeat (`idempotency: unsupported`) is not called "safe" to repeat; the
/// model is told to check with the list first and ask the person.
#[tokio::test]
async fn a_timeout_calls_a_retry_safe_only_when_a_key_makes_it_so() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = manifest(dir.path());
    let provider = Careless::start();
    let state = tempfile::tempdir().unwrap();
    let s = serve(
        &manifest,
        &provider.url(),
        state.path(),
        &["--timeout", "0.5"],
    )
    .await;
    let result = s.call("orderPrint", json!({ "copies": 3 })).await;
    assert!(is_error(&result), "{result:?}");
    assert_eq!(provider.of("/v1/prints"), 1, "the provider has the order");
    let said = text_of(&result);
    assert!(!said.contains("is safe"), "{said}");
    assert!(said.contains("Do not call again on your own"), "{said}");
    assert!(said.contains("listPrints"), "{said}");
    assert!(said.contains("ask the person"), "{said}");
    // The model calls again anyway: the row is still open, but without a key the
    // provider would take a repeat as a second order. Not sent, whatever it carries.
    let again = s.call("orderPrint", json!({ "copies": 3 })).await;
    let said = text_of(&again);
    assert!(is_error(&again), "{again:?}");
    assert!(
        said.contains("NOT SENT AGAIN") && said.contains("outcome is unknown"),
        "{said}"
    );
    assert_eq!(provider.of("/v1/prints"), 1, "no second order from one yes");
    // Only the value for another, identical order sends one more.
    let second = said
        .split("\"confirmation\": \"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("the value for a second order");
    let more = s
        .call("orderPrint", json!({ "copies": 3, "confirmation": second }))
        .await;
    assert!(
        is_error(&more),
        "the provider still does not answer: {more:?}"
    );
    assert_eq!(
        provider.of("/v1/prints"),
        2,
        "the person's second order, once"
    );
    s.close().await;
}

/// The tools a client is sent carry no request mapping: under `--base-url` it would name
/// the manifest's server, where no call goes.
#[tokio::test]
async fn the_served_tools_name_no_server_but_where_calls_go() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = manifest(dir.path());
    let provider = Careless::start();
    let state = tempfile::tempdir().unwrap();
    let s = serve(&manifest, &provider.url(), state.path(), &[]).await;
    let tools = s.client.list_all_tools().await.expect("tools/list");
    let listed = serde_json::to_string(&tools).unwrap();
    assert!(!listed.contains("api.labels.example"), "{listed}");
    assert!(!listed.contains("dev.connectorgen/request"), "{listed}");
    s.close().await;
}

/// The served description of a keyed tool matches the served arguments: serve sends the
/// retry key itself and the served `inputSchema` has no key argument, so the description
/// does not ask the model to send one.
#[tokio::test]
async fn the_served_description_of_a_keyed_tool_asks_for_no_key_argument() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = manifest(dir.path());
    let provider = Careless::start();
    let state = tempfile::tempdir().unwrap();
    let s = serve(&manifest, &provider.url(), state.path(), &[]).await;
    let tools = s.client.list_all_tools().await.expect("tools/list");
    let label = tools
        .iter()
        .find(|t| t.name == "buyLabel")
        .expect("buyLabel is served");
    let schema = serde_json::to_string(&label.input_schema).unwrap();
    assert!(!schema.contains("idempotencyKey"), "{schema}");
    let description = label.description.as_deref().unwrap_or_default();
    assert!(!description.contains("idempotencyKey"), "{description}");
    assert!(description.contains("same arguments"), "{description}");
    s.close().await;
    // The generated file keeps the argument and its sentence (a client that executes
    // the mapping itself sends the key).
    let built = std::process::Command::new(env!("CARGO_BIN_EXE_connectorgen"))
        .args(["build"])
        .arg(&manifest)
        .arg("--out")
        .arg(dir.path().join("generated"))
        .output()
        .unwrap();
    assert!(built.status.success(), "{built:?}");
    let file = std::fs::read_to_string(dir.path().join("generated/mcp-tools.json")).unwrap();
    assert!(file.contains("the `idempotencyKey` argument"), "{file}");
}
