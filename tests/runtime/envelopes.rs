//! A job inside an envelope, end to end through `serve` (issue 49, item 1): the provider
//! answers `{"batch": {"id": …, "status": …}}`, the manifest says `async.idField:
//! batch.id` and `async.status.field: batch.status`, and the model is told the id (not
//! "Started a job" with none), the poll hint takes it, and a task polls the provider
//! with it and reads the state inside the envelope.

use rmcp::model::{CallToolResponse, CallToolResult, TaskPayload, TaskStatus};
use serde_json::{Value, json};

use super::e2e::Test;
use super::mcp::{Answer, Person, Revision, Transport, is_error, serve_meta, text_of};
use super::provider::{Provider, Switches};

const MANIFEST: &str = r#"version: 1
service:
  name: Example
  version: 1.0.0
  description: Runs batches of inputs in the background.
  publicUrl: https://api.batches.example
  dashboardUrl: https://batches.example/keys
operations:
  - id: createBatch
    method: post
    path: /v1/batches
    summary: Start a batch
    description: Starts a batch that runs in the background. Does not change other batches.
    input:
      type: object
      properties:
        input: { type: string, minLength: 1 }
      required: [input]
    output: &batch
      type: object
      properties:
        batch:
          type: object
          properties:
            id: { type: string }
            status: { type: string, enum: [queued, running, succeeded, failed] }
            result: { type: [string, "null"] }
          required: [id, status]
      required: [batch]
    spends: { kind: credits, note: "Costs 1 credit." }
    async:
      pollWith: getBatch
      typicalSeconds: 30
      idField: batch.id
      status: { field: batch.status, done: [succeeded], failed: [failed] }
  - id: getBatch
    method: get
    path: /v1/batches/{id}
    summary: Check a batch
    description: Read-only. Returns the batch's status and result. Free to repeat; never starts a batch.
    output: *batch
"#;

fn manifest() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("a folder");
    let path = dir.path().join("batches.yaml");
    std::fs::write(&path, MANIFEST).expect("write the manifest");
    (dir, path)
}

fn input() -> Value {
    json!({ "input": "three files" })
}

/// Without tasks: the answer names the job's id from inside the envelope, with the poll
/// to follow it, and that poll reaches the provider with it.
#[tokio::test]
async fn the_id_inside_an_envelope_is_the_one_the_model_is_told_and_polls_with() {
    let p = Provider::start(Switches::default());
    let (_dir, path) = manifest();
    let t = Test::new(&p.url()).manifest(&path);
    let s = t
        .serve(
            Transport::Stdio,
            Person::answering(Answer::Accept, Revision::Earlier),
        )
        .await;
    let started = s.call("createBatch", input()).await;
    assert!(!is_error(&started), "{}", text_of(&started));
    assert_eq!(
        serve_meta(&started)["jobId"],
        "bat_1",
        "{}",
        text_of(&started)
    );
    let text = text_of(&started);
    assert!(
        text.contains("bat_1") && text.contains("getBatch"),
        "the model is told the id and the poll: {text}"
    );
    let polled = s.call("getBatch", json!({ "id": "bat_1" })).await;
    assert!(!is_error(&polled), "{}", text_of(&polled));
    let polls: Vec<_> = p
        .received()
        .into_iter()
        .filter(|r| r.operation == "getBatch")
        .collect();
    assert_eq!(polls.len(), 1, "{polls:#?}");
    assert_eq!(polls[0].target, "/v1/batches/bat_1");
    assert_eq!(p.counters().of("createBatch"), 1);
}

/// A client following the job as a task, the batch created and its task's id.
async fn task_started(p: &Provider) -> (Test, super::mcp::Session, String, tempfile::TempDir) {
    let (dir, path) = manifest();
    let t = Test::new(&p.url()).manifest(&path);
    let s = t
        .serve(
            Transport::Stdio,
            Person::answering(Answer::Accept, Revision::Current).with_tasks(),
        )
        .await;
    let CallToolResponse::Task(created) = s.call_once("createBatch", input()).await else {
        panic!("a task: {:#?}", s.log());
    };
    let id = created.task.task_id.clone();
    (t, s, id, dir)
}

/// The batches `getBatch` was sent for.
fn polled(p: &Provider) -> Vec<String> {
    p.received()
        .into_iter()
        .filter(|r| r.operation == "getBatch")
        .map(|r| r.target)
        .collect()
}

/// With tasks: the task polls the provider with the id from the envelope and reports the
/// state inside it while the job runs.
#[tokio::test]
async fn a_task_polls_a_job_inside_an_envelope_with_its_id() {
    let p = Provider::start(Switches::default());
    let (_t, s, id, _dir) = task_started(&p).await;
    let working = s.get_task(&id).await.expect("tasks/get");
    assert_eq!(working.task.status(), TaskStatus::Working, "{working:?}");
    let message = working.task.task.status_message.clone().unwrap_or_default();
    assert!(
        message.contains("batch.status: running"),
        "the state inside the envelope: {message}"
    );
    assert_eq!(polled(&p), ["/v1/batches/bat_1"]);
    assert_eq!(p.counters().of("createBatch"), 1);
}

/// With tasks: a job inside an envelope that finished completes its task (the state read
/// inside the envelope).
#[tokio::test]
async fn a_task_of_a_job_inside_an_envelope_completes() {
    let p = Provider::start(Switches::default());
    let (_t, s, id, _dir) = task_started(&p).await;
    assert!(p.finish("bat_1"));
    let done = s.get_task(&id).await.expect("tasks/get");
    let TaskPayload::Completed { result } = &done.task.payload else {
        panic!("completed: {done:?}\n{:#?}", s.log());
    };
    let result: CallToolResult = serde_json::from_value(Value::Object(result.clone())).unwrap();
    assert!(!is_error(&result), "{}", text_of(&result));
    assert_eq!(
        result
            .structured_content
            .as_ref()
            .map(|v| v["batch"]["id"].clone()),
        Some(json!("bat_1"))
    );
    assert_eq!(polled(&p), ["/v1/batches/bat_1"]);
    assert_eq!(p.counters().of("createBatch"), 1);
}
