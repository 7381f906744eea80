//! Request building end to end: `serve` turns a tool call into the exact HTTP request
//! the provider's document describes, for base-mode examples (form-encoded payments, an
//! async transcription job, multipart uploads and batches) and the inline ones. A recorder on loopback keeps what arrived,
//! byte for byte: method, path, query encoding (deepObject, `explode: false`), form
//! bodies with nested fields, multipart, binary. Consent is off here (`--no-consent`):
//! it has tests of its own; these are about the bytes.

use serde_json::{Value, json};

use super::mcp::{Person, Serve, Transport, text_of, went_through};
use super::recorder::{Recorded, Recorder};

const SECRET: &str = "secret_test_value";

fn manifest(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/manifests")
        .join(name)
}

/// Calls each `(tool, args)` of `example` in one session and returns what the provider
/// received, one request per call, in order.
async fn sent(example: &str, credential_env: &str, calls: &[(&str, Value)]) -> Vec<Recorded> {
    let recorder = Recorder::start(json!({ "id": "rec_1", "status": "queued" }));
    let state = tempfile::tempdir().unwrap();
    let s = Serve::new(manifest(example), &recorder.url(), state.path())
        .arg("--no-consent")
        // Some prefixes are reserved (docs/serve.md): the variable needs the flag.
        .arg("--allow-env")
        .arg(credential_env)
        .env(credential_env, SECRET)
        .connect(Transport::Stdio, Person::without_elicitation())
        .await;
    for (tool, args) in calls {
        let result = s.call(tool, args.clone()).await;
        assert!(
            went_through(&result),
            "{tool}: {}\n{:#?}",
            text_of(&result),
            s.log()
        );
    }
    s.close().await;
    let requests = recorder.requests();
    assert_eq!(
        requests.len(),
        calls.len(),
        "one request per call: {requests:#?}"
    );
    requests
}

/// A retry key the server made itself (a UUID), whatever the model sent.
fn assert_server_key(r: &Recorded) {
    let key = r
        .header("idempotency-key")
        .unwrap_or_else(|| panic!("no key: {r:#?}"));
    assert_eq!(key.len(), 36, "{key}");
    assert_eq!(key.matches('-').count(), 4, "{key}");
}

#[tokio::test]
async fn form_encoded_payments_deep_object_queries_form_bodies_and_encoded_paths() {
    let r = sent(
        "form-encoded-payments.yaml",
        "CHARGES_TOKEN",
        &[
            (
                "listCustomers",
                json!({ "created": { "gt": 1_700_000_000, "lte": 1_800_000_000 }, "email": "a+b@x.com",
                        "expand": ["data.default_source"], "limit": 3 }),
            ),
            (
                "createPaymentIntent",
                json!({ "amount": 2000, "currency": "usd", "metadata": { "order": "A 1&b=c" },
                        "payment_method_types": ["card", "link"], "confirm": false,
                        "idempotencyKey": "from-the-model" }),
            ),
            ("getCustomer", json!({ "customer": "cus_1/../x?y#z" })),
            ("deleteCustomer", json!({ "customer": "cus_2" })),
        ],
    )
    .await;
    // deepObject: `created[gt]`, arrays as `expand[0]`; brackets and reserved characters
    // percent-encoded, as Stripe's own libraries send them.
    assert_eq!(r[0].method, "GET");
    assert_eq!(
        r[0].target,
        "/v1/customers?created%5Bgt%5D=1700000000&created%5Blte%5D=1800000000\
         &email=a%2Bb%40x.com&expand%5B0%5D=data.default_source&limit=3"
    );
    assert!(r[0].body.is_empty());
    assert_eq!(
        r[0].header("authorization"),
        Some("Bearer secret_test_value")
    );

    // A form-encoded body with nested fields in the same bracket notation; a value's `&`
    // and `=` cannot start another field.
    assert_eq!(
        (r[1].method.as_str(), r[1].target.as_str()),
        ("POST", "/v1/payment_intents")
    );
    assert_eq!(
        r[1].header("content-type"),
        Some("application/x-www-form-urlencoded")
    );
    assert_eq!(
        r[1].body_text(),
        "amount=2000&confirm=false&currency=usd&metadata%5Border%5D=A%201%26b%3Dc\
         &payment_method_types%5B0%5D=card&payment_method_types%5B1%5D=link"
    );
    assert_server_key(&r[1]);
    assert_ne!(r[1].header("idempotency-key"), Some("from-the-model"));

    // A path value cannot add segments, a query or a fragment.
    assert_eq!(r[2].target, "/v1/customers/cus_1%2F..%2Fx%3Fy%23z");
    assert_eq!(
        (r[3].method.as_str(), r[3].target.as_str()),
        ("DELETE", "/v1/customers/cus_2")
    );
}

#[tokio::test]
async fn async_transcription_job_binary_upload_explode_false_and_api_key_header() {
    let r = sent(
        "async-transcription-job.yaml",
        "TRANSCRIPTS_TOKEN",
        &[
            ("uploadAudio", json!({ "body": "UklGRgABAgP/" })),
            (
                "wordSearch",
                json!({ "transcript_id": "t1", "words": ["hello", "big world", "a,b"] }),
            ),
            // `speech_models` is required by AssemblyAI's schema: the call is checked
            // against it before anything is sent.
            (
                "createTranscript",
                json!({ "body": { "audio_url": "https://x.example/a.mp3", "speech_models": ["universal"],
                                  "speaker_labels": true } }),
            ),
        ],
    )
    .await;
    // base64 in the tool call, the decoded bytes on the wire.
    assert_eq!(
        (r[0].method.as_str(), r[0].target.as_str()),
        ("POST", "/v2/upload")
    );
    assert_eq!(
        r[0].header("content-type"),
        Some("application/octet-stream")
    );
    assert_eq!(r[0].body, b"RIFF\x00\x01\x02\x03\xff");
    // AssemblyAI's apiKey scheme: the key itself in Authorization, no Bearer.
    assert_eq!(r[0].header("authorization"), Some(SECRET));
    // explode: false joins with commas; a comma inside a value is encoded.
    assert_eq!(
        r[1].target,
        "/v2/transcript/t1/word-search?words=hello,big%20world,a%2Cb"
    );
    // The whole-body argument is the body.
    assert_eq!(r[2].header("content-type"), Some("application/json"));
    let body: Value = serde_json::from_slice(&r[2].body).unwrap();
    assert_eq!(
        body,
        json!({ "audio_url": "https://x.example/a.mp3", "speech_models": ["universal"],
                "speaker_labels": true })
    );
}

#[tokio::test]
async fn multipart_upload_batches_and_json_body() {
    let r = sent(
        "multipart-upload-batches.yaml",
        "BATCHWORKS_TOKEN",
        &[
            (
                "createFile",
                json!({ "file": "eyJhIjoxfQo=", "purpose": "batch" }),
            ),
            (
                "createBatch",
                json!({ "input_file_id": "file-1", "endpoint": "/v1/responses",
                        "completion_window": "24h", "metadata": { "k": "v" } }),
            ),
            ("listBatches", json!({ "after": "batch_9", "limit": 2 })),
        ],
    )
    .await;
    let content_type = r[0].header("content-type").unwrap();
    let boundary = content_type
        .strip_prefix("multipart/form-data; boundary=")
        .unwrap_or_else(|| panic!("{content_type}"));
    assert_eq!(
        r[0].body_text(),
        format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"file\"\r\n\
             Content-Type: application/octet-stream\r\n\r\n{{\"a\":1}}\n\r\n\
             --{boundary}\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\nbatch\r\n\
             --{boundary}--\r\n"
        )
    );
    assert_eq!(
        r[1].body_text(),
        r#"{"input_file_id":"file-1","endpoint":"/v1/responses","completion_window":"24h","metadata":{"k":"v"}}"#
    );
    assert_eq!(r[1].header("content-type"), Some("application/json"));
    assert_eq!(r[2].target, "/batches?after=batch_9&limit=2");
    assert_eq!(
        r[2].header("authorization"),
        Some("Bearer secret_test_value")
    );
}

#[tokio::test]
async fn inline_examples_query_styles_headers_and_bodies() {
    let scribe = sent(
        "scribe.yaml",
        "SCRIBE_TOKEN",
        &[
            ("listTranscripts", json!({ "status": ["queued", "completed"], "limit": 5 })),
            (
                "createTranscript",
                json!({ "audio_url": "https://x.example/a.mp3", "language_code": "en", "Prefer": "respond-async" }),
            ),
        ],
    )
    .await;
    assert_eq!(
        scribe[0].target,
        "/v2/transcripts?status=queued,completed&limit=5"
    );
    assert_eq!(scribe[0].header("x-api-key"), Some(SECRET));
    assert_eq!(scribe[0].header("authorization"), None);
    assert_eq!(scribe[1].header("prefer"), Some("respond-async"));
    assert_eq!(
        scribe[1].body_text(),
        r#"{"audio_url":"https://x.example/a.mp3","language_code":"en"}"#
    );
    assert_server_key(&scribe[1]);

    let payments = sent(
        "payments.yaml",
        "STRIPE_TOKEN",
        &[
            (
                "listPaymentIntents",
                json!({ "created": { "gte": 1 }, "limit": 2 }),
            ),
            (
                "createRefund",
                json!({ "payment_intent": "pi_1", "amount": 500, "metadata": { "why": "late" } }),
            ),
        ],
    )
    .await;
    assert_eq!(
        payments[0].target,
        "/v1/payment_intents?created%5Bgte%5D=1&limit=2"
    );
    assert_eq!(
        payments[1].header("content-type"),
        Some("application/x-www-form-urlencoded")
    );
    assert_eq!(
        payments[1].body_text(),
        "payment_intent=pi_1&amount=500&metadata%5Bwhy%5D=late"
    );
    assert_eq!(
        payments[1].header("authorization"),
        Some("Bearer secret_test_value")
    );
    assert_server_key(&payments[1]);

    let bank = sent(
        "bank.yaml",
        "LEDGERLY_TOKEN",
        &[(
            "listTransactions",
            json!({ "accountId": "acc 1", "from": "2026-01-01", "limit": 10 }),
        )],
    )
    .await;
    assert_eq!(
        bank[0].target,
        "/v1/accounts/acc%201/transactions?from=2026-01-01&limit=10"
    );

    let video = sent(
        "video.yaml",
        "VIDGEN_TOKEN",
        &[(
            "createVideo",
            json!({ "prompt": "a cat", "aspectRatio": "1:1" }),
        )],
    )
    .await;
    assert_eq!(
        video[0].body_text(),
        r#"{"prompt":"a cat","aspectRatio":"1:1"}"#
    );
    assert_eq!(video[0].header("content-type"), Some("application/json"));
    assert_server_key(&video[0]);
}
