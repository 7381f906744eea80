//! Reliability, round five (issue 43), end to end: the real `connectorgen serve`, a real
//! MCP client (rmcp), the reference provider. What reached the provider is read from its
//! own counters; every wait is on something the server or the provider did.

use std::sync::Arc;

use rmcp::model::{CallToolResponse, CallToolResult, CreateTaskResult, TaskPayload, TaskStatus};
use serde_json::{Value, json};

use super::e2e::Test;
use super::mcp::{Answer, Person, Revision, Session, Transport, is_error, serve_meta, text_of};
use super::provider::{Auth, Provider, Switches, TOKEN};

fn cat() -> Value {
    json!({ "prompt": "a cat on a skateboard" })
}

/// A person who says yes, on a client that follows tasks.
fn follower() -> Person {
    Person::answering(Answer::Accept, Revision::Current).with_tasks()
}

/// The paid call's arguments with the confirmation value its first call is answered
/// with (token mode): the person's yes, relayed.
async fn with_yes(s: &Session) -> Value {
    let asked = s.call("createVideo", cat()).await;
    let token = serve_meta(&asked)["confirmation"]
        .as_str()
        .unwrap_or_else(|| panic!("{asked:?}"))
        .to_string();
    let mut args = cat();
    args["confirmation"] = json!(token);
    args
}

/// A session following tasks, and the task of its paid call (the person said yes).
async fn a_task(t: &Test) -> (Session, String) {
    let s = t.serve(Transport::Stdio, follower()).await;
    let id = task_of(s.call_once("createVideo", cat()).await)
        .task
        .task_id;
    (s, id)
}

fn task_of(response: CallToolResponse) -> CreateTaskResult {
    match response {
        CallToolResponse::Task(task) => task,
        other => panic!("expected a task, got {other:?}"),
    }
}

/// The first create goes through at the provider but its answer is lost (502); `serve`
/// rightly sends it again with the same key, and the provider answers the reused key
/// with `status` ("must be unique") — its way of saying the first one exists. That answer
/// is not a refusal: the call is never sent again on its own, neither with the same
/// confirmation nor bare, and what the model is told says the first may exist.
async fn a_duplicate_answer_to_a_retry_is_not_a_refusal(status: u16) {
    let p = Provider::start(Switches {
        lose_answer_next: 1,
        duplicate: Some(status),
        ..Switches::default()
    });
    let t = Test::new(&p.url());
    let s = t
        .serve(Transport::Stdio, Person::without_elicitation())
        .await;
    let with_yes = with_yes(&s).await;

    let lost = s.call("createVideo", with_yes.clone()).await;
    assert!(is_error(&lost), "{}", text_of(&lost));
    assert_eq!(p.counters().jobs_created, 1);

    let retried = s.call("createVideo", with_yes.clone()).await;
    assert!(is_error(&retried), "{}", text_of(&retried));
    assert_eq!(p.counters().of("createVideo"), 2, "sent again with its key");
    let said = text_of(&retried);
    assert!(said.contains(&format!("HTTP {status}")), "{said}");
    assert!(said.contains("do not take this as a refusal"), "{said}");
    assert_eq!(serve_meta(&retried)["outcomeUnknown"], true, "{retried:?}");

    for args in [with_yes, cat()] {
        let again = s.call("createVideo", args).await;
        let said = text_of(&again);
        assert!(said.starts_with("NOT SENT AGAIN"), "{said}\n{:#?}", s.log());
        assert!(said.contains(&format!("answered HTTP {status}")), "{said}");
        assert!(
            said.contains("listVideos"),
            "the read to check with: {said}"
        );
        assert_eq!(serve_meta(&again)["outcomeUnknown"], true, "{again:?}");
    }
    let c = p.counters();
    assert_eq!(
        (c.of("createVideo"), c.jobs_created),
        (2, 1),
        "{:#?}",
        p.received()
    );
    s.close().await;
}

#[tokio::test]
async fn a_retry_answered_422_must_be_unique_is_not_a_refusal() {
    a_duplicate_answer_to_a_retry_is_not_a_refusal(422).await;
}

#[tokio::test]
async fn a_retry_answered_409_conflict_is_not_a_refusal() {
    a_duplicate_answer_to_a_retry_is_not_a_refusal(409).await;
}

/// A poll refused for the credential (401) says nothing about the job: the task stays
/// working, with a message saying the poll is failing, and an identical call returns the
/// same working task instead of a dead one. Once polls work again, the task completes
/// with the job's result.
#[tokio::test]
async fn a_poll_refused_for_its_credential_keeps_the_task_working() {
    let p = Provider::start(Switches::default());
    let t = Test::new(&p.url());
    let (s, id) = a_task(&t).await;

    p.set(|s| s.auth = Auth::RejectAll);
    let got = s.get_task(&id).await.unwrap();
    assert_eq!(
        got.task.status(),
        TaskStatus::Working,
        "{got:?}\n{:#?}",
        s.log()
    );
    let message = got.task.task.status_message.clone().unwrap_or_default();
    assert!(
        message.contains("HTTP 401") && message.contains("may still be running"),
        "{message}"
    );
    assert_eq!(p.counters().of("getVideo"), 1);
    let resubmitted = task_of(s.call_once("createVideo", cat()).await);
    assert_eq!(resubmitted.task.task_id, id);
    assert_eq!(resubmitted.task.status, TaskStatus::Working);
    s.close().await;

    // The credential works again and the job finished: the task completes with it.
    p.set(|s| s.auth = Auth::Token(TOKEN.to_string()));
    assert!(p.finish("vid_1"));
    let s = t.serve(Transport::Stdio, follower()).await;
    let got = s.get_task(&id).await.unwrap();
    let TaskPayload::Completed { result } = &got.task.payload else {
        panic!("expected completed, got {got:?}\n{:#?}", s.log());
    };
    let result: CallToolResult = serde_json::from_value(Value::Object(result.clone())).unwrap();
    assert!(!is_error(&result), "{}", text_of(&result));
    let c = p.counters();
    assert_eq!((c.of("createVideo"), c.jobs_created), (1, 1));
    s.close().await;
}

/// A tasks client's identical call made while the create is out at the provider waits
/// for it and gets the same task, not the plain "Started a job" answer: one create, one
/// way of following it.
#[tokio::test]
async fn an_identical_call_while_the_create_is_out_gets_the_same_task() {
    let p = Provider::start(Switches::default());
    let t = Test::new(&p.url());
    let person = follower();
    let s = Arc::new(t.serve(Transport::Stdio, person.clone()).await);
    let gate = p.hold("createVideo");
    let first = {
        let s = s.clone();
        tokio::spawn(async move { s.call_once("createVideo", cat()).await })
    };
    p.wait_until("a held createVideo", |c| c.held("createVideo") == 1)
        .await;
    let second = {
        let s = s.clone();
        tokio::spawn(async move { s.call_once("createVideo", cat()).await })
    };
    s.log_with(r#""reason":"in-flight""#).await;
    gate.release();
    let first = task_of(first.await.unwrap());
    let second = task_of(second.await.unwrap());
    assert_eq!(first.task.task_id, second.task.task_id);
    assert_eq!(person.asked().len(), 1, "one question, one yes");
    let c = p.counters();
    assert_eq!((c.of("createVideo"), c.jobs_created), (1, 1));
}

/// With `idempotency.duplicate` (tests/cases/valid/duplicate-answer.yaml), the provider's
/// answer to a reused key means "the first one exists": `serve` reads the first request's
/// result with `duplicate.readWith`, by the key it sent, records it, and answers with the
/// job it started; the identical call is then answered from the ledger. One job.
#[tokio::test]
async fn a_retry_answered_as_a_seen_key_is_read_back_with_the_key() {
    let p = Provider::start(Switches {
        lose_answer_next: 1,
        duplicate: Some(422),
        ..Switches::default()
    });
    let t = Test::new(&p.url());
    let manifest = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/cases/valid/duplicate-answer.yaml");
    let s = t
        .server()
        .manifest(manifest)
        .connect(Transport::Stdio, Person::without_elicitation())
        .await;
    let with_yes = with_yes(&s).await;

    let lost = s.call("createVideo", with_yes.clone()).await;
    assert!(is_error(&lost), "{}", text_of(&lost));
    let found = s.call("createVideo", with_yes.clone()).await;
    let said = text_of(&found);
    assert!(!is_error(&found), "{said}\n{:#?}", s.log());
    assert!(
        said.contains("The first createVideo went through"),
        "{said}"
    );
    assert!(
        said.contains("HTTP 422") && said.contains("vid_1"),
        "{said}"
    );
    assert_eq!(serve_meta(&found)["firstFoundWith"], "getVideoByKey");
    let again = s.call("createVideo", cat()).await;
    assert_eq!(serve_meta(&again)["notSent"], true, "{again:?}");
    assert!(text_of(&again).contains("vid_1"), "{}", text_of(&again));
    let c = p.counters();
    assert_eq!(
        (c.of("createVideo"), c.jobs_created, c.of("getVideoByKey")),
        (2, 1, 1),
        "{:#?}",
        p.received()
    );
    s.close().await;
}

/// A finished task's state is kept with its ledger row: after a restart `tasks/get`
/// answers it as it ended, without polling the provider again, and an identical call
/// answers the ended task. (Before, finished states were held whole in memory only: a
/// restart polled again, and a job the provider had since deleted read as gone.)
#[tokio::test]
async fn a_finished_task_is_answered_from_the_ledger_after_a_restart() {
    let p = Provider::start(Switches::default());
    let t = Test::new(&p.url());
    let (s, id) = a_task(&t).await;
    assert!(p.finish("vid_1"));
    let done = s.get_task(&id).await.unwrap();
    assert_eq!(done.task.status(), TaskStatus::Completed, "{done:?}");
    assert_eq!(p.counters().of("getVideo"), 1);
    s.close().await;

    let s = t.serve(Transport::Stdio, follower()).await;
    let again = s.get_task(&id).await.unwrap();
    assert_eq!(again, done, "the same state, as it ended");
    assert_eq!(p.counters().of("getVideo"), 1, "not polled again");
    let resubmitted = task_of(s.call_once("createVideo", cat()).await);
    assert_eq!(resubmitted.task.task_id, id);
    assert_eq!(resubmitted.task.status, TaskStatus::Completed);
    let c = p.counters();
    assert_eq!((c.of("createVideo"), c.of("getVideo")), (1, 1));
    s.close().await;
}
