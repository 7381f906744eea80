//! Arguments are checked before anything is asked, and what is sent is what was agreed
//! (issue 30: the argument checks, critical defect 9, paths and queries): the real
//! binary, a real MCP client whose person answers every form (so a question that should
//! not be asked shows up in `asked()`), and a recorder on loopback keeping each request's
//! exact bytes. Every body shape the mapping knows is sent for a paid tool, so the
//! person's yes covers exactly the arguments the provider receives.

use serde_json::{Value, json};

use super::mcp::{Answer, Person, Revision, Serve, Session, Transport, is_error, text_of};
use super::recorder::{Recorded, Recorder};

const MANIFEST: &str = r#"version: 1
service:
  name: Pay
  version: 1.0.0
  description: A payments provider that takes its key in the query string.
  publicUrl: https://api.pay.example
  dashboardUrl: https://pay.example/keys
auth: { scheme: apiKey, in: query, name: api_key }
targets: [mcp]
operations:
  - id: charge
    method: post
    path: /v1/charges
    summary: Charge a card
    description: Charges a card once. Changes nothing else.
    input:
      type: object
      properties:
        note: { type: string, minLength: 1 }
      oneOf:
        - type: object
          properties: { amount: { type: integer, minimum: 1 } }
          required: [amount]
        - type: object
          properties: { credits: { type: integer, minimum: 1 } }
          required: [credits]
    spends: { kind: money, note: "Costs the amount charged." }
    idempotency: { query: request_id }
  - id: refund
    method: post
    path: /v1/refunds
    summary: Refund a charge
    description: Refunds one charge. Changes nothing else.
    inputType: application/x-www-form-urlencoded
    input:
      type: object
      properties:
        charge: { type: string }
      anyOf:
        - type: object
          properties: { amount: { type: integer } }
          required: [amount]
        - type: object
          properties: { reason: { type: string, enum: [duplicate, fraudulent] } }
          required: [reason]
    spends: { kind: money, note: "Returns money to the customer." }
    idempotency: optional
  - id: upload
    method: post
    path: /v1/files
    summary: Upload a file
    description: Stores one file. Changes nothing else.
    inputType: multipart/form-data
    input:
      type: object
      properties:
        purpose: { type: string }
      allOf:
        - type: object
          properties: { title: { type: string } }
    spends: { kind: money, note: "Costs 1 USD per file." }
  - id: batch
    method: post
    path: /v1/batches
    summary: Charge a batch
    description: Charges every item of the list. Changes nothing else.
    input:
      type: array
      items: { type: object, properties: { amount: { type: integer } }, required: [amount] }
      minItems: 1
    spends: { kind: money, note: "Costs the sum of the amounts." }
  - id: getCharge
    method: get
    path: /v1/charges/{id}
    summary: Get a charge
    description: Read-only. Changes nothing.
    query:
      - { name: color, schema: { type: string, enum: [red, blue] } }
      - { name: since, schema: { type: string, format: date-time } }
      - name: filter
        schema: { type: object, properties: { status: { type: string } } }
        style: form
        explode: true
"#;

const SECRET: &str = "pay_live_key_1";

/// A session against a recorder, with a person who says yes to every question.
async fn session(recorder: &Recorder, state: &std::path::Path) -> Session {
    let dir = state.join("m");
    std::fs::create_dir_all(&dir).unwrap();
    let manifest = dir.join("pay.yaml");
    std::fs::write(&manifest, MANIFEST).unwrap();
    Serve::new(&manifest, &recorder.url(), &state.join("state"))
        .env("PAY_TOKEN", SECRET)
        .connect(
            Transport::Stdio,
            Person::answering(Answer::Accept, Revision::Earlier),
        )
        .await
}

/// The call is refused as a tool error naming `expect`, nothing was asked, nothing sent.
#[track_caller]
fn assert_refused(result: &rmcp::model::CallToolResult, expect: &str) {
    assert!(is_error(result), "not refused: {result:?}");
    let said = text_of(result);
    assert!(said.starts_with("NOT SENT"), "{said}");
    assert!(said.contains(expect), "{expect:?} not in: {said}");
}

/// The arguments part of the question the person was shown, as JSON.
fn quoted(question: &str) -> Value {
    let at = question
        .find("Arguments:\n")
        .expect("the question quotes the arguments");
    serde_json::from_str(&question[at + "Arguments:\n".len()..]).expect("quoted as JSON")
}

fn body_json(r: &Recorded) -> Value {
    serde_json::from_slice(&r.body).unwrap_or_else(|e| panic!("{e}: {}", r.body_text()))
}

#[tokio::test]
async fn wrong_arguments_are_refused_before_any_question_and_nothing_is_sent() {
    let recorder = Recorder::start(json!({ "id": "ch_1" }));
    let state = tempfile::tempdir().unwrap();
    let s = session(&recorder, state.path()).await;
    let cases = [
        // Type: a string where the schema says integer.
        ("charge", json!({ "amount": "500" }), "`amount`"),
        // Unknown, with a did-you-mean (before: quoted in the question, never sent).
        (
            "charge",
            json!({ "amount": 500, "amout": 5 }),
            "did you mean `amount`?",
        ),
        // Neither branch of the oneOf, and both of them.
        ("charge", json!({ "note": "x" }), "`arguments`"),
        (
            "charge",
            json!({ "amount": 1, "credits": 1 }),
            "`arguments`",
        ),
        // An empty string the schema forbids (minLength: 1).
        ("charge", json!({ "amount": 1, "note": "" }), "`note`"),
        // A bound.
        ("charge", json!({ "amount": 0 }), "`amount`"),
        // An enum inside an anyOf branch of a form body.
        (
            "refund",
            json!({ "charge": "ch_1", "reason": "bored" }),
            "`reason`",
        ),
        // An array body: each item's required field.
        (
            "batch",
            json!({ "body": [{ "amount": 1 }, {}] }),
            "`body[1]`",
        ),
        ("batch", json!({ "body": [] }), "`body`"),
        // An enum and a format of query parameters.
        (
            "getCharge",
            json!({ "id": "ch_1", "color": "green" }),
            "`color`",
        ),
        (
            "getCharge",
            json!({ "id": "ch_1", "since": "yesterday" }),
            "`since`",
        ),
    ];
    for (tool, args, expect) in cases {
        let result = s.call(tool, args.clone()).await;
        assert_refused(&result, expect);
        assert!(
            s.person.asked().is_empty(),
            "{tool} {args}: asked {:?}",
            s.person.asked()
        );
    }
    assert!(recorder.requests().is_empty(), "{:#?}", recorder.requests());
    s.close().await;
}

#[tokio::test]
async fn the_question_quotes_exactly_what_is_sent_for_every_body_shape() {
    let recorder = Recorder::start(json!({ "id": "ch_1" }));
    let state = tempfile::tempdir().unwrap();
    let s = session(&recorder, state.path()).await;
    let calls = [
        ("charge", json!({ "amount": 500, "note": "order 7" })),
        (
            "refund",
            json!({ "charge": "ch_1", "reason": "duplicate", "amount": 300 }),
        ),
        (
            "upload",
            json!({ "purpose": "evidence", "title": "receipt" }),
        ),
        (
            "batch",
            json!({ "body": [{ "amount": 1 }, { "amount": 2 }] }),
        ),
    ];
    for (tool, args) in &calls {
        let result = s.call(tool, args.clone()).await;
        assert!(!is_error(&result), "{tool}: {}", text_of(&result));
    }
    let asked = s.person.asked();
    assert_eq!(
        asked.len(),
        calls.len(),
        "one question per paid call: {asked:#?}"
    );
    let sent = recorder.requests();
    assert_eq!(sent.len(), calls.len(), "{sent:#?}");
    for ((tool, args), question) in calls.iter().zip(&asked) {
        assert_eq!(
            &quoted(question),
            args,
            "{tool}: the question quotes the call"
        );
    }

    // oneOf (defect 9): the body is the agreed object, byte for byte, and the retry key
    // is the server's, in the query, after the credential cannot be shadowed.
    assert_eq!(sent[0].body_text(), r#"{"note":"order 7","amount":500}"#);
    assert_eq!(body_json(&sent[0]), calls[0].1);
    assert!(
        sent[0].target.starts_with("/v1/charges?request_id="),
        "{}",
        sent[0].target
    );
    // anyOf, form-encoded: both branches' fields, in the order of the mapping.
    assert_eq!(
        sent[1].body_text(),
        "charge=ch_1&amount=300&reason=duplicate"
    );
    // allOf, multipart: one part per field.
    let multipart = sent[2].body_text();
    for part in [
        "name=\"purpose\"\r\n\r\nevidence\r\n",
        "name=\"title\"\r\n\r\nreceipt\r\n",
    ] {
        assert!(multipart.contains(part), "{part:?} not in {multipart:?}");
    }
    // An array body: the list itself.
    assert_eq!(sent[3].body_text(), r#"[{"amount":1},{"amount":2}]"#);
    s.close().await;
}

#[tokio::test]
async fn path_values_cannot_remove_or_climb_a_segment() {
    let recorder = Recorder::start(json!({ "id": "ch_1" }));
    let state = tempfile::tempdir().unwrap();
    let s = session(&recorder, state.path()).await;
    for id in ["..", ".", ""] {
        let result = s.call("getCharge", json!({ "id": id })).await;
        assert_refused(&result, "a path value may not be empty, `.` or `..`");
    }
    assert!(recorder.requests().is_empty(), "{:#?}", recorder.requests());
    // Dots inside a value are a value: `...` and `a..b` are one segment each.
    for id in ["...", "a..b"] {
        let result = s.call("getCharge", json!({ "id": id })).await;
        assert!(!is_error(&result), "{}", text_of(&result));
    }
    let targets: Vec<String> = recorder
        .requests()
        .iter()
        .map(|r| r.target.split('?').next().unwrap_or_default().to_string())
        .collect();
    assert_eq!(targets, ["/v1/charges/...", "/v1/charges/a..b"]);
    s.close().await;
}

#[tokio::test]
async fn an_exploded_object_carries_only_its_named_properties_and_never_the_key() {
    let recorder = Recorder::start(json!({ "id": "ch_1" }));
    let state = tempfile::tempdir().unwrap();
    let s = session(&recorder, state.path()).await;
    for (filter, expect) in [
        (
            json!({ "api_key": "mine" }),
            "`api_key` is a query parameter this server sends itself",
        ),
        (
            json!({ "API_KEY": "mine" }),
            "`API_KEY` is a query parameter this server sends itself",
        ),
        (
            json!({ "color": "red" }),
            "`color` is a query parameter this server sends itself",
        ),
        (
            json!({ "access_token": "t" }),
            "`access_token` is not a property its schema names",
        ),
        (
            json!({ "request_id": "r" }),
            "`request_id` is not a property its schema names",
        ),
    ] {
        let result = s
            .call("getCharge", json!({ "id": "ch_1", "filter": filter }))
            .await;
        assert_refused(&result, expect);
    }
    assert!(recorder.requests().is_empty(), "{:#?}", recorder.requests());
    let result = s
        .call(
            "getCharge",
            json!({ "id": "ch_1", "filter": { "status": "paid" } }),
        )
        .await;
    assert!(!is_error(&result), "{}", text_of(&result));
    assert_eq!(
        recorder.only().target,
        format!("/v1/charges/ch_1?status=paid&api_key={SECRET}")
    );
    s.close().await;
}

#[tokio::test]
async fn a_models_own_retry_key_is_neither_quoted_nor_sent() {
    // The retry key is the server's: a model's own `request_id` is taken out before the
    // question, and the one `request_id` the provider gets is the server's.
    let recorder = Recorder::start(json!({ "id": "ch_1" }));
    let state = tempfile::tempdir().unwrap();
    let s = session(&recorder, state.path()).await;
    let result = s
        .call("charge", json!({ "amount": 5, "request_id": "mine" }))
        .await;
    assert!(!is_error(&result), "{}", text_of(&result));
    let asked = s.person.asked();
    assert_eq!(asked.len(), 1, "{asked:#?}");
    assert_eq!(quoted(&asked[0]), json!({ "amount": 5 }));
    let sent = recorder.only();
    let keys: Vec<&str> = sent
        .target
        .split(['?', '&'])
        .filter(|p| p.starts_with("request_id="))
        .collect();
    assert_eq!(keys.len(), 1, "{}", sent.target);
    assert_ne!(keys[0], "request_id=mine");
    assert_eq!(sent.body_text(), r#"{"amount":5}"#);
    s.close().await;
}

/// Issue 30, null-as-absent: an OpenAI strict client sends `null` for every optional
/// field it leaves out. Such a `null` (where the argument's schema does not allow null,
/// in the root's properties or a `oneOf` branch's) is the argument left out: not quoted
/// in the question, not sent. A required argument sent as `null` is refused, nothing
/// asked or sent.
#[tokio::test]
async fn a_null_optional_argument_is_left_out_and_a_null_required_one_is_refused() {
    let recorder = Recorder::start(json!({ "id": "ch_1" }));
    let state = tempfile::tempdir().unwrap();
    let s = session(&recorder, state.path()).await;
    let refused = s
        .call("getCharge", json!({ "id": null, "color": null }))
        .await;
    assert_refused(&refused, "argument `id` is required and may not be null");
    assert!(s.person.asked().is_empty(), "{:?}", s.person.asked());
    assert!(recorder.requests().is_empty(), "{:#?}", recorder.requests());

    let strict = json!({ "amount": 500, "credits": null, "note": null });
    let result = s.call("charge", strict).await;
    assert!(!is_error(&result), "{}", text_of(&result));
    let asked = s.person.asked();
    assert_eq!(asked.len(), 1, "{asked:#?}");
    assert_eq!(quoted(&asked[0]), json!({ "amount": 500 }));
    assert_eq!(recorder.only().body_text(), r#"{"amount":500}"#);
    // The same call as the one without the nulls: one logical request.
    let again = s.call("charge", json!({ "amount": 500 })).await;
    assert!(
        text_of(&again).starts_with("NOT SENT AGAIN"),
        "{}",
        text_of(&again)
    );
    s.close().await;
}

/// Issue 30: a wrong enum value gets a did-you-mean, in a query parameter and inside an
/// `anyOf` branch of a form body.
#[tokio::test]
async fn a_wrong_enum_value_gets_a_did_you_mean() {
    let recorder = Recorder::start(json!({ "id": "ch_1" }));
    let state = tempfile::tempdir().unwrap();
    let s = session(&recorder, state.path()).await;
    let result = s
        .call("getCharge", json!({ "id": "ch_1", "color": "bleu" }))
        .await;
    assert_refused(
        &result,
        "`color`: \"bleu\" is not one of its allowed values; did you mean `blue`?",
    );
    let result = s
        .call(
            "refund",
            json!({ "charge": "ch_1", "reason": "fraudulant" }),
        )
        .await;
    assert_refused(&result, "did you mean `fraudulent`?");
    let result = s
        .call("getCharge", json!({ "id": "ch_1", "color": "green" }))
        .await;
    assert_refused(&result, "expected one of: `red`, `blue`");
    assert!(recorder.requests().is_empty(), "{:#?}", recorder.requests());
    s.close().await;
}
