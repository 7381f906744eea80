//! The ledger under faults and over time (issue 30, the durability items): the real
//! binary, a real MCP client whose person answers every form, and a recorder on
//! loopback counting what reached the provider. The fault is real: the server runs with
//! a file-size limit (`prlimit --fsize`, SIGXFSZ ignored so a write past it fails as a
//! full disk does), so the row of a paid call is written and its outcome is not.

use serde_json::json;

use super::mcp::{Answer, Person, Revision, Serve, Session, is_error, serve_meta, text_of};
use super::recorder::Recorder;

const MANIFEST: &str = r#"version: 1
service:
  name: Pay
  version: 1.0.0
  description: A payments provider.
  publicUrl: https://api.pay.example
  dashboardUrl: https://pay.example/keys
auth: { scheme: bearer }
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
        amount: { type: integer, minimum: 1 }
      required: [amount]
    spends: { kind: money, note: "Costs the amount charged." }
    idempotency: { header: Idempotency-Key }
"#;

/// The most bytes any file the server writes may hold: room for the ledger's schema and
/// a call's row in the WAL, not for an answer of `ANSWER_BYTES` as well. (192 KiB since
/// the ledger's version 6, issue 47: its migrations write more schema pages to the WAL
/// at start-up than 128 KiB hold.)
const FSIZE: &str = "--fsize=196608";
const ANSWER_BYTES: usize = 256 << 10;

async fn session(recorder: &Recorder, state: &std::path::Path, through: &[&str]) -> Session {
    let dir = state.join("m");
    std::fs::create_dir_all(&dir).unwrap();
    let manifest = dir.join("pay.yaml");
    std::fs::write(&manifest, MANIFEST).unwrap();
    Serve::new(&manifest, &recorder.url(), &state.join("state"))
        .env("PAY_TOKEN", "pay_live_key_1")
        .through(through)
        .connect(
            Transport::Stdio,
            Person::answering(Answer::Accept, Revision::Earlier),
        )
        .await
}

use super::mcp::Transport;

/// The start of a long answer, for a failure message.
fn head(text: &str) -> String {
    text.chars().take(400).collect()
}

/// Issue 30: "when the outcome cannot be recorded (disk full) the next identical call is
/// sent again". The charge goes out once and its answer says the outcome is held in
/// memory only; the identical call is answered from there, not sent, not asked again.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn an_outcome_the_ledger_cannot_record_blocks_the_identical_call() {
    let recorder = Recorder::start(json!({ "id": "ch_1", "receipt": "r".repeat(ANSWER_BYTES) }));
    let state = tempfile::tempdir().unwrap();
    let limited = [
        "sh",
        "-c",
        // Ignored before exec, SIGXFSZ stays ignored in the server: a write past the
        // limit fails with EFBIG instead of killing it.
        r#"trap '' XFSZ; exec prlimit "$0" -- "$@""#,
        FSIZE,
    ];
    let s = session(&recorder, state.path(), &limited).await;
    let first = s.call("charge", json!({ "amount": 5 })).await;
    let said = text_of(&first);
    assert!(!is_error(&first), "{}", head(&said));
    assert!(
        said.contains("could not be recorded in the ledger"),
        "the answer says so: {}",
        head(&said)
    );
    assert!(
        serve_meta(&first)["unrecorded"].is_string(),
        "{:?}",
        first.meta
    );
    assert_eq!(recorder.requests().len(), 1);
    assert_eq!(s.person.asked().len(), 1);

    let again = s.call("charge", json!({ "amount": 5 })).await;
    let said = text_of(&again);
    assert!(said.starts_with("NOT SENT AGAIN"), "{}", head(&said));
    assert!(
        said.contains("could not be recorded in the ledger"),
        "{}",
        head(&said)
    );
    assert_eq!(recorder.requests().len(), 1, "not sent a second time");
    assert_eq!(s.person.asked().len(), 1, "not asked again");
    s.close().await;
}

/// Issue 30, the bound: at `--ledger-max-bytes` a new paid call is refused with a clear
/// error, before the person is asked, and nothing is sent; the call already made is still answered from the ledger,
/// not forgotten (so not sent a second time).
#[tokio::test]
async fn a_full_ledger_refuses_a_new_paid_call_and_keeps_the_old_one() {
    let recorder = Recorder::start(json!({ "id": "ch_1" }));
    let state = tempfile::tempdir().unwrap();
    let dir = state.path().join("m");
    std::fs::create_dir_all(&dir).unwrap();
    let manifest = dir.join("pay.yaml");
    std::fs::write(&manifest, MANIFEST).unwrap();
    let s = Serve::new(&manifest, &recorder.url(), &state.path().join("state"))
        .env("PAY_TOKEN", "pay_live_key_1")
        .arg("--ledger-max-bytes")
        .arg("1K")
        .connect(
            Transport::Stdio,
            Person::answering(Answer::Accept, Revision::Earlier),
        )
        .await;
    let first = s.call("charge", json!({ "amount": 5 })).await;
    assert!(!is_error(&first), "{}", text_of(&first));
    let second = s.call("charge", json!({ "amount": 6 })).await;
    let said = text_of(&second);
    assert!(is_error(&second), "{said}");
    assert!(said.starts_with("NOT SENT: the ledger is full"), "{said}");
    assert!(said.contains("--ledger-max-bytes"), "{said}");
    assert_eq!(serve_meta(&second)["ledgerFull"], true);
    assert_eq!(
        s.person.asked().len(),
        1,
        "not asked about a call with no room"
    );
    let again = s.call("charge", json!({ "amount": 5 })).await;
    assert!(
        text_of(&again).starts_with("NOT SENT AGAIN"),
        "{}",
        text_of(&again)
    );
    assert_eq!(recorder.requests().len(), 1);
    s.close().await;
}
