//! Provider jobs as MCP tasks (the tasks extension, SEP-2663), end to end: rmcp's client
//! declaring the extension, the real `connectorgen serve`, the reference provider. Every
//! claim about what reached the provider is read from the provider's own counters.

use rmcp::model::{
    CallToolResponse, CallToolResult, CreateTaskResult, ElicitRequestParams, InputRequest,
    InputResponses, TaskPayload, TaskStatus,
};
use serde_json::{Value, json};

use super::e2e::Test;
use super::mcp::{Answer, Person, Revision, Session, Transport, is_error, text_of};
use super::provider::{Provider, Switches};

fn cat() -> Value {
    json!({ "prompt": "a cat on a skateboard" })
}

/// A person who says yes, on a client that follows tasks (2026-07-28: the revision
/// that defines the extension).
fn follower() -> Person {
    Person::answering(Answer::Accept, Revision::Current).with_tasks()
}

/// `tasks/cancel ID` of a cancel that needs the person's yes: acknowledged with nothing
/// sent, the task then shows the question (`input_required`), and the person's answer
/// goes back with `tasks/update`. Returns the question's text.
async fn cancel_asked(s: &Session, p: &Provider, id: &str, answer: Option<Value>) -> String {
    let deletes = p.counters().of("deleteVideo");
    s.cancel_task(id)
        .await
        .unwrap_or_else(|e| panic!("{e}\n{:#?}", s.log()));
    assert_eq!(
        p.counters().of("deleteVideo"),
        deletes,
        "sent before the yes"
    );
    let got = s.get_task(id).await.unwrap();
    let TaskPayload::InputRequired { input_requests } = &got.task.payload else {
        panic!("expected the question, got {got:?}\n{:#?}", s.log());
    };
    assert_eq!(input_requests.len(), 1, "{input_requests:?}");
    let (key, InputRequest::Elicitation(form)) = input_requests.iter().next().unwrap() else {
        panic!("expected a form, got {input_requests:?}");
    };
    let ElicitRequestParams::FormElicitationParams { message, .. } = &form.params else {
        panic!("expected a form, got {form:?}");
    };
    // A cancel asked for again while its question is open is that question.
    s.cancel_task(id).await.unwrap();
    let again = s.get_task(id).await.unwrap();
    assert!(
        matches!(&again.task.payload, TaskPayload::InputRequired { input_requests } if input_requests.contains_key(key)),
        "{again:?}"
    );
    let responses = match answer {
        Some(answer) => InputResponses::from_iter([(key.clone(), answer)]),
        None => s.person.answer_all(input_requests).await,
    };
    s.update_task(id, responses)
        .await
        .unwrap_or_else(|e| panic!("{e}\n{:#?}", s.log()));
    message.clone()
}

fn task_of(response: CallToolResponse) -> CreateTaskResult {
    match response {
        CallToolResponse::Task(task) => task,
        other => panic!("expected a task, got {other:?}"),
    }
}

/// The paid async call: one provider job, one task; `tasks/get` completes with the
/// poll's answer once the provider has finished the job, and the create is never sent
/// again — not by the polls, not by an identical resubmission (the same task).
async fn one_job_one_task(transport: Transport) {
    let p = Provider::start(Switches::default());
    let t = Test::new(&p.url());
    let person = follower();
    let s = t.serve(transport, person.clone()).await;
    let created = task_of(s.call_once("createVideo", cat()).await);
    assert_eq!(person.asked().len(), 1, "the person is asked first");
    assert!(created.result_type.is_task());
    assert_eq!(created.task.status, TaskStatus::Working);
    // typicalSeconds: 90 → a tenth of it.
    assert_eq!(created.task.poll_interval_ms, Some(9_000));
    assert_eq!(p.counters().of("createVideo"), 1);
    assert_eq!(p.counters().jobs_created, 1);
    let id = created.task.task_id.clone();

    assert!(p.finish("vid_1"));
    let got = s.get_task(&id).await.unwrap();
    let TaskPayload::Completed { result } = &got.task.payload else {
        panic!("expected completed, got {got:?}\n{:#?}", s.log());
    };
    let result: CallToolResult = serde_json::from_value(Value::Object(result.clone())).unwrap();
    assert!(!is_error(&result), "{}", text_of(&result));
    let answer = result.structured_content.clone().unwrap_or(Value::Null);
    assert_eq!(answer["id"], "vid_1", "{answer}");
    assert_eq!(answer["status"], "succeeded", "{answer}");
    assert_eq!(p.counters().of("getVideo"), 1);

    // A terminal task is held: asked again, the provider is not polled again.
    let again = s.get_task(&id).await.unwrap();
    assert_eq!(again.task.status(), TaskStatus::Completed);
    assert_eq!(p.counters().of("getVideo"), 1);

    // The identical call resubmitted: the same task, as it now stands, nothing sent.
    let resubmitted = task_of(s.call_once("createVideo", cat()).await);
    assert_eq!(resubmitted.task.task_id, id);
    assert_eq!(resubmitted.task.status, TaskStatus::Completed);
    assert_eq!(p.counters().of("createVideo"), 1, "{:#?}", p.received());
    assert_eq!(p.counters().jobs_created, 1);
    s.close().await;
}

#[tokio::test]
async fn a_paid_async_call_is_one_job_and_one_task_that_completes_stdio() {
    one_job_one_task(Transport::Stdio).await;
}

#[tokio::test]
async fn a_paid_async_call_is_one_job_and_one_task_that_completes_http() {
    one_job_one_task(Transport::Http).await;
}

/// While the provider runs the job the task is working, and says what the provider
/// reports; a task id that names no row is refused.
#[tokio::test]
async fn a_running_job_is_a_working_task_and_an_unknown_id_is_refused() {
    let p = Provider::start(Switches::default());
    let t = Test::new(&p.url());
    let s = t.serve(Transport::Stdio, follower()).await;
    let created = task_of(s.call_once("createVideo", cat()).await);
    let got = s.get_task(&created.task.task_id).await.unwrap();
    assert_eq!(got.task.status(), TaskStatus::Working, "{got:?}");
    let message = got.task.task.status_message.clone().unwrap_or_default();
    assert!(message.contains("status: running"), "{message}");
    assert_eq!(p.counters().of("getVideo"), 1);
    assert_eq!(p.counters().of("createVideo"), 1);

    // The row id with another digest, and no row at all.
    let (row, _) = created.task.task_id.split_once('-').unwrap();
    for forged in [
        format!("{row}-{}", "0".repeat(24)),
        "999-0".into(),
        "x".into(),
    ] {
        let refused = s.get_task(&forged).await;
        assert!(
            matches!(&refused, Err(rmcp::ServiceError::McpError(e)) if e.code == rmcp::model::ErrorCode::INVALID_PARAMS),
            "{forged}: {refused:?}"
        );
    }
    s.close().await;
}

/// A task is a ledger row: after a restart, `tasks/get` on the same id follows the same
/// job, and the create is not sent again.
#[tokio::test]
async fn a_task_survives_a_restart() {
    let p = Provider::start(Switches::default());
    let t = Test::new(&p.url());
    let s = t.serve(Transport::Stdio, follower()).await;
    let id = task_of(s.call_once("createVideo", cat()).await)
        .task
        .task_id;
    s.close().await;

    assert!(p.finish("vid_1"));
    let s = t.serve(Transport::Stdio, follower()).await;
    let got = s.get_task(&id).await.unwrap();
    assert_eq!(
        got.task.status(),
        TaskStatus::Completed,
        "{got:?}\n{:#?}",
        s.log()
    );
    let resubmitted = task_of(s.call_once("createVideo", cat()).await);
    assert_eq!(resubmitted.task.task_id, id);
    assert_eq!(p.counters().of("createVideo"), 1, "{:#?}", p.received());
    assert_eq!(p.counters().jobs_created, 1);
    s.close().await;
}

/// Without `async.cancelWith` a cancel is answered as impossible and the task is kept.
#[tokio::test]
async fn a_job_without_a_cancel_operation_is_not_cancelled_and_its_task_is_kept() {
    let p = Provider::start(Switches::default());
    let t = Test::new(&p.url());
    let s = t.serve(Transport::Stdio, follower()).await;
    let id = task_of(s.call_once("createVideo", cat()).await)
        .task
        .task_id;
    let refused = s.cancel_task(&id).await;
    let Err(rmcp::ServiceError::McpError(error)) = &refused else {
        panic!("expected an error, got {refused:?}");
    };
    assert!(error.message.contains("cannot be cancelled"), "{error:?}");
    assert!(p.finish("vid_1"));
    // Polled by the cancel once, which holds for the poll interval: the next read is
    // that state, so completion is shown after a restart's fresh poll.
    s.close().await;
    let s = t.serve(Transport::Stdio, follower()).await;
    let got = s.get_task(&id).await.unwrap();
    assert_eq!(got.task.status(), TaskStatus::Completed, "{got:?}");
    assert_eq!(p.counters().of("createVideo"), 1);
    s.close().await;
}

/// A client without the extension gets today's answer: the job and the hint to poll it,
/// and `tasks/*` is refused as a capability it did not declare.
#[tokio::test]
async fn a_client_without_the_extension_gets_the_answer_of_before() {
    let p = Provider::start(Switches::default());
    let t = Test::new(&p.url());
    let s = t
        .serve(
            Transport::Stdio,
            Person::answering(Answer::Accept, Revision::Earlier),
        )
        .await;
    let response = s.call_once("createVideo", cat()).await;
    let CallToolResponse::Complete(result) = response else {
        panic!("expected a complete result, got {response:?}");
    };
    assert!(
        text_of(&result).contains("Follow it with getVideo"),
        "{}",
        text_of(&result)
    );
    let refused = s.get_task("1-000000000000000000000000").await;
    assert!(
        matches!(&refused, Err(rmcp::ServiceError::McpError(e)) if e.code == rmcp::model::ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY),
        "{refused:?}"
    );
    s.close().await;
}

/// The paid job of `manifest` (job-tasks.yaml or a copy) started as a task, then cancelled
/// with the person's yes asked through the task: the delete reaches the provider once and
/// the task ends cancelled, the create never repeated. Returns the cancel's question.
async fn a_yes_cancels(manifest: &std::path::Path) -> String {
    let p = Provider::start(Switches::default());
    let t = Test::new(&p.url());
    let person = follower();
    let s = t
        .server()
        .manifest(manifest)
        .connect(Transport::Stdio, person.clone())
        .await;
    let id = task_of(s.call_once("createVideo", cat()).await)
        .task
        .task_id;
    assert_eq!(person.asked().len(), 1);
    let question = cancel_asked(&s, &p, &id, None).await;
    assert_eq!(person.asked().len(), 2, "{:?}", person.asked());
    assert_eq!(p.counters().of("deleteVideo"), 1, "{:#?}", p.received());
    let got = s.get_task(&id).await.unwrap();
    assert_eq!(got.task.status(), TaskStatus::Cancelled, "{got:?}");
    assert_eq!(p.counters().of("createVideo"), 1);
    s.close().await;
    question
}

/// The manifest whose job has a cancel operation (`deleteVideo`, which cannot be undone).
fn job_tasks() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases/valid/job-tasks.yaml")
}

/// With `async.cancelWith`, `tasks/cancel` calls it as a call of that tool: a cancel that
/// cannot be undone asks the person first, through the task, and a yes sends it once
/// and ends the task.
#[tokio::test]
async fn a_cancel_goes_through_consent_and_ends_the_task() {
    // The cancel's own question, about the delete.
    let question = a_yes_cancels(&job_tasks()).await;
    assert!(question.contains("deleteVideo"), "{question}");
}

/// The cancel operation's job id is sent in the argument its tool takes, as the poll's is:
/// an `args:` rename of the path parameter (`id` → `videoId`) included. The cancel asks the
/// person, reaches the provider once, and ends the task.
#[tokio::test]
async fn a_cancel_sends_the_job_id_in_the_argument_the_cancel_tool_takes() {
    let text = std::fs::read_to_string(job_tasks()).unwrap();
    let anchor = "    path: /v1/videos/{id}\n    summary: Cancel a generation, or delete a video\n";
    assert!(text.contains(anchor), "job-tasks.yaml's deleteVideo moved");
    let renamed = text.replace(anchor, &format!("{anchor}    args: {{ id: videoId }}\n"));
    let dir = tempfile::tempdir().unwrap();
    let manifest = dir.path().join("job-tasks.yaml");
    std::fs::write(&manifest, renamed).unwrap();
    a_yes_cancels(&manifest).await;
}

/// A no to the cancel's question sends nothing: the job goes on and the task follows
/// it; an answer to a question that is not open changes nothing.
#[tokio::test]
async fn a_no_to_the_cancel_sends_nothing_and_the_task_goes_on() {
    let manifest = job_tasks();
    let p = Provider::start(Switches::default());
    let t = Test::new(&p.url());
    let s = t
        .server()
        .manifest(&manifest)
        .connect(Transport::Stdio, follower())
        .await;
    let id = task_of(s.call_once("createVideo", cat()).await)
        .task
        .task_id;
    cancel_asked(&s, &p, &id, Some(json!({ "action": "decline" }))).await;
    s.update_task(
        &id,
        InputResponses::from_iter([(
            "cancel-0-0".to_string(),
            json!({ "action": "accept", "content": { "confirm": true } }),
        )]),
    )
    .await
    .unwrap();
    assert_eq!(p.counters().of("deleteVideo"), 0, "{:#?}", p.received());
    assert!(p.finish("vid_1"));
    // After the no the task is no longer asking; completion shows after a restart's
    // fresh poll (the held state lasts the poll interval).
    let held = s.get_task(&id).await.unwrap();
    assert_eq!(held.task.status(), TaskStatus::Working, "{held:?}");
    s.close().await;
    let s = t
        .server()
        .manifest(&manifest)
        .connect(Transport::Stdio, follower())
        .await;
    let got = s.get_task(&id).await.unwrap();
    assert_eq!(got.task.status(), TaskStatus::Completed, "{got:?}");
    assert_eq!(p.counters().of("createVideo"), 1);
    s.close().await;
}

/// While a cancel waits on the person's answer, an identical call answers the task as
/// `tasks/get` shows it (`input_required`), not `working` (seen with the official
/// TypeScript tasks client: after its `execution.cancel()` a resubmission read `working`
/// while the question stood open). Nothing is sent.
#[tokio::test]
async fn an_identical_call_while_a_cancel_asks_shows_the_question() {
    let p = Provider::start(Switches::default());
    let t = Test::new(&p.url());
    let s = t
        .server()
        .manifest(job_tasks())
        .connect(Transport::Stdio, follower())
        .await;
    let id = task_of(s.call_once("createVideo", cat()).await)
        .task
        .task_id;
    s.cancel_task(&id)
        .await
        .unwrap_or_else(|e| panic!("{e}\n{:#?}", s.log()));
    let again = task_of(s.call_once("createVideo", cat()).await);
    assert_eq!(again.task.task_id, id);
    assert_eq!(again.task.status, TaskStatus::InputRequired, "{again:?}");
    let c = p.counters();
    assert_eq!((c.of("createVideo"), c.of("deleteVideo")), (1, 0));
    s.close().await;
}

/// SEP-2663 is not defined under 2025-11-25: a client of that revision that declares the
/// extension at `initialize` is not offered it and gets the answer of before (a task
/// handle it could not read would start the paid job unseen), and `tasks/*` is refused
/// as for a client that declared nothing.
#[tokio::test]
async fn an_earlier_revision_declaring_the_extension_gets_the_answer_of_before() {
    let p = Provider::start(Switches::default());
    let t = Test::new(&p.url());
    let person = Person::answering(Answer::Accept, Revision::Earlier).with_tasks();
    let s = t.serve(Transport::Stdio, person.clone()).await;
    let offered = s
        .client
        .peer_info()
        .and_then(|info| info.capabilities.extensions.clone())
        .unwrap_or_default();
    assert!(
        !offered.contains_key(rmcp::model::TASKS_EXTENSION_ID),
        "{offered:?}"
    );
    let response = s.call_once("createVideo", cat()).await;
    let CallToolResponse::Complete(result) = response else {
        panic!("expected a complete result, got {response:?}");
    };
    assert!(
        text_of(&result).contains("Follow it with getVideo"),
        "{}",
        text_of(&result)
    );
    assert_eq!(person.asked().len(), 1, "asked by elicitation/create");
    assert_eq!(p.counters().of("createVideo"), 1);
    let refused = s.get_task("1-000000000000000000000000").await;
    assert!(
        matches!(&refused, Err(rmcp::ServiceError::McpError(e))
            if e.code == rmcp::model::ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
                && e.message.contains("from protocol revision 2026-07-28 on")),
        "{refused:?}"
    );
    s.close().await;
}
