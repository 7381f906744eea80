//! `connectorgen serve` end to end: a real MCP client (rmcp) over stdio and Streamable
//! HTTP, the real binary, the reference provider; every claim is checked from what the
//! provider counted, not from what the server says it did.

use serde_json::{Value, json};

use super::e2e::Test;
use super::mcp::{Answer, Person, Revision, Transport, is_error, json_of, serve_meta, text_of};
use super::provider::{Provider, Switches};

fn cat() -> Value {
    json!({ "prompt": "a cat on a skateboard" })
}

/// The confirmation value a consent refusal hands the model to relay.
fn confirmation(result: &rmcp::model::CallToolResult) -> String {
    let meta = serve_meta(result);
    assert_eq!(meta["consentRequired"], true, "{meta} {}", text_of(result));
    meta["confirmation"]
        .as_str()
        .unwrap_or_else(|| panic!("no confirmation in {meta}"))
        .to_string()
}

fn with_confirmation(args: &Value, token: &str) -> Value {
    let mut args = args.clone();
    args["confirmation"] = json!(token);
    args
}

/// A paid call with no yes: refused with what it costs, and nothing reaches the provider.
async fn no_consent_no_request(transport: Transport) {
    let p = Provider::start(Switches::default());
    let t = Test::new(&p.url());
    let s = t.serve(transport, Person::without_elicitation()).await;
    let refused = s.call("createVideo", cat()).await;
    assert!(is_error(&refused), "{refused:?}");
    let said = text_of(&refused);
    assert!(said.contains("Costs 1 generation credit"), "{said}");
    assert!(said.contains("confirmation"), "{said}");
    // Asking again without the value is still a refusal, not a send.
    assert!(is_error(&s.call("createVideo", cat()).await));
    assert_eq!(p.counters().of("createVideo"), 0, "{:#?}", p.received());
    s.close().await;
}

#[tokio::test]
async fn a_paid_call_without_consent_reaches_the_provider_zero_times_stdio() {
    no_consent_no_request(Transport::Stdio).await;
}

#[tokio::test]
async fn a_paid_call_without_consent_reaches_the_provider_zero_times_http() {
    no_consent_no_request(Transport::Http).await;
}

/// The relayed confirmation value: exactly one request, bound to the exact arguments,
/// and spent once used.
async fn token_consent_once(transport: Transport) {
    let p = Provider::start(Switches::default());
    let t = Test::new(&p.url());
    let s = t.serve(transport, Person::without_elicitation()).await;
    let token = confirmation(&s.call("createVideo", cat()).await);

    // The value for a cat does not buy a dog.
    let dog = json!({ "prompt": "a dog" });
    let misused = s.call("createVideo", with_confirmation(&dog, &token)).await;
    assert!(is_error(&misused), "{misused:?}");
    assert_eq!(p.counters().of("createVideo"), 0);

    let sent = s
        .call("createVideo", with_confirmation(&cat(), &token))
        .await;
    assert!(!is_error(&sent), "{}", text_of(&sent));
    assert_eq!(json_of(&sent)["id"], "vid_1", "{sent:?}");
    // Relaying the same value again does not send again.
    let again = s
        .call("createVideo", with_confirmation(&cat(), &token))
        .await;
    assert_eq!(
        p.counters().of("createVideo"),
        1,
        "{again:?}\n{:#?}",
        p.received()
    );
    assert_eq!(p.counters().jobs_created, 1);
    s.close().await;
}

#[tokio::test]
async fn consent_by_confirmation_value_sends_exactly_once_stdio() {
    token_consent_once(Transport::Stdio).await;
}

#[tokio::test]
async fn consent_by_confirmation_value_sends_exactly_once_http() {
    token_consent_once(Transport::Http).await;
}

/// A client that can show a form: the person is asked once, and a yes sends once; a no
/// sends nothing.
async fn elicited_consent(transport: Transport, revision: Revision) {
    let p = Provider::start(Switches::default());
    let t = Test::new(&p.url());
    let no = Person::answering(Answer::Decline, revision);
    let s = t.serve(transport, no.clone()).await;
    let declined = s.call("createVideo", cat()).await;
    assert!(is_error(&declined), "{declined:?}");
    assert_eq!(no.asked().len(), 1);
    assert!(
        no.asked()[0].contains("Costs 1 generation credit"),
        "{:?}",
        no.asked()
    );
    assert_eq!(p.counters().of("createVideo"), 0);
    s.close().await;

    let yes = Person::answering(Answer::Accept, revision);
    let s = t.serve(transport, yes.clone()).await;
    let sent = s.call("createVideo", cat()).await;
    assert!(!is_error(&sent), "{}\n{:#?}", text_of(&sent), s.log());
    assert_eq!(yes.asked().len(), 1, "{:?}", yes.asked());
    assert!(
        yes.asked()[0].contains("a cat on a skateboard"),
        "{:?}",
        yes.asked()
    );
    assert_eq!(p.counters().of("createVideo"), 1, "{:#?}", p.received());
    assert_eq!(p.counters().jobs_created, 1);
    // The revision decides the mechanism: an input-required result on 2026-07-28, an
    // elicitation/create request during the call before it.
    let asked = match revision {
        Revision::Current => r#""asked":"input-required""#,
        Revision::Earlier => r#""asked":"elicitation""#,
    };
    assert!(
        s.log().iter().any(|l| l.contains(asked)),
        "{asked}: {:#?}",
        s.log()
    );
    s.close().await;
}

#[tokio::test]
async fn consent_by_input_required_round_trip_sends_exactly_once_stdio() {
    elicited_consent(Transport::Stdio, Revision::Current).await;
}

#[tokio::test]
async fn consent_by_input_required_round_trip_sends_exactly_once_http() {
    elicited_consent(Transport::Http, Revision::Current).await;
}

#[tokio::test]
async fn consent_by_elicitation_request_sends_exactly_once_stdio() {
    elicited_consent(Transport::Stdio, Revision::Earlier).await;
}

#[tokio::test]
async fn consent_by_elicitation_request_sends_exactly_once_http() {
    elicited_consent(Transport::Http, Revision::Earlier).await;
}

/// The provider made the job but its answer never came in time: the retry carries the
/// same key, so the provider answers with the first job instead of a second.
#[tokio::test]
async fn a_retry_after_a_timeout_makes_one_job() {
    let p = Provider::start(Switches::default());
    let t = Test::new(&p.url());
    let yes = Person::answering(Answer::Accept, Revision::Current);
    let s = t
        .server()
        .arg("--timeout")
        .arg("0.5")
        .connect(Transport::Stdio, yes.clone())
        .await;
    let gate = p.hold("createVideo");
    let timed_out = s.call("createVideo", cat()).await;
    assert!(is_error(&timed_out), "{timed_out:?}");
    assert_eq!(p.counters().jobs_created, 1);
    gate.release();

    let retried = s.call("createVideo", cat()).await;
    assert!(!is_error(&retried), "{}\n{:#?}", text_of(&retried), s.log());
    assert_eq!(json_of(&retried)["id"], "vid_1");
    let c = p.counters();
    assert_eq!(
        (c.of("createVideo"), c.jobs_created, c.replays),
        (2, 1, 1),
        "{:#?}",
        p.received()
    );
    assert_eq!(c.keys.len(), 1, "one key for both attempts: {:?}", c.keys);
    assert_eq!(c.creates_without_key, 0);
    // An outcome-unknown retry is the same request: the person is not asked twice.
    assert_eq!(yes.asked().len(), 1);
    s.close().await;
}

/// A provider that ignores keys cannot stop a second job; the server does: the same call
/// while the first job runs returns that job and is not forwarded.
#[tokio::test]
async fn a_second_identical_call_while_the_job_runs_returns_the_first_job() {
    let p = Provider::start(Switches {
        ignore_key: true,
        ..Switches::default()
    });
    let t = Test::new(&p.url());
    let s = t
        .serve(Transport::Stdio, Person::without_elicitation())
        .await;
    let token = confirmation(&s.call("createVideo", cat()).await);
    let first = s
        .call("createVideo", with_confirmation(&cat(), &token))
        .await;
    assert_eq!(json_of(&first)["id"], "vid_1", "{first:?}");

    let second = s.call("createVideo", cat()).await;
    assert!(!is_error(&second), "{second:?}");
    let said = text_of(&second);
    assert!(
        said.contains("vid_1") && said.contains("getVideo"),
        "{said}"
    );
    assert_eq!(serve_meta(&second)["notSent"], true, "{second:?}");
    assert_eq!(p.counters().of("createVideo"), 1, "{:#?}", p.received());
    assert_eq!(p.counters().jobs_created, 1);
    s.close().await;
}

/// Desktop clients restart stdio servers often: the ledger in --state outlives the
/// process, so the retry after a restart is still a retry.
#[tokio::test]
async fn a_restarted_server_still_recognises_the_retry() {
    let p = Provider::start(Switches::default());
    let t = Test::new(&p.url());
    let yes = Person::answering(Answer::Accept, Revision::Current);
    let s = t
        .server()
        .arg("--timeout")
        .arg("0.5")
        .connect(Transport::Stdio, yes.clone())
        .await;
    let gate = p.hold("createVideo");
    assert!(is_error(&s.call("createVideo", cat()).await));
    s.close().await;
    gate.release();

    // A new process, the same state folder: the outcome-unknown call is resent with its
    // key, and the provider replays the first job.
    let s = t.server().connect(Transport::Stdio, yes.clone()).await;
    let retried = s.call("createVideo", cat()).await;
    assert!(!is_error(&retried), "{}\n{:#?}", text_of(&retried), s.log());
    let c = p.counters();
    assert_eq!(
        (c.jobs_created, c.replays, c.keys.len()),
        (1, 1, 1),
        "{:#?}",
        p.received()
    );
    s.close().await;

    // And once the job is known, a third process answers from the ledger: not sent.
    let s = t
        .server()
        .connect(Transport::Stdio, Person::without_elicitation())
        .await;
    let answered = s.call("createVideo", cat()).await;
    assert_eq!(serve_meta(&answered)["notSent"], true, "{answered:?}");
    assert_eq!(p.counters().of("createVideo"), 2);
    s.close().await;
}

/// Polling is free: no consent, no key, no job.
#[tokio::test]
async fn a_poll_makes_no_job_and_asks_nothing() {
    let p = Provider::start(Switches {
        complete_after_polls: Some(2),
        ..Switches::default()
    });
    let t = Test::new(&p.url());
    let yes = Person::answering(Answer::Accept, Revision::Current);
    let s = t.serve(Transport::Stdio, yes.clone()).await;
    let job = s.call("createVideo", cat()).await;
    let id = json_of(&job)["id"].as_str().unwrap().to_string();
    for _ in 0..3 {
        let polled = s.call("getVideo", json!({ "id": id })).await;
        assert!(!is_error(&polled), "{polled:?}");
    }
    let listed = s.call("listVideos", json!({ "limit": 5 })).await;
    assert_eq!(
        json_of(&listed)["items"].as_array().map(Vec::len),
        Some(1),
        "{listed:?}"
    );
    let c = p.counters();
    assert_eq!(
        (c.jobs_created, c.of("getVideo"), c.of("listVideos")),
        (1, 3, 1)
    );
    assert_eq!(
        yes.asked().len(),
        1,
        "only the create asked: {:?}",
        yes.asked()
    );
    assert!(
        p.received()
            .iter()
            .filter(|r| r.operation != "createVideo")
            .all(|r| r.idempotency_key.is_none()),
        "{:#?}",
        p.received()
    );
    s.close().await;
}

/// The credential comes from the environment, and a provider's 401 is a tool error that
/// carries the status.
#[tokio::test]
async fn a_bad_credential_is_a_tool_error_with_the_status() {
    let p = Provider::start(Switches::default());
    let t = Test::new(&p.url());
    let mut serve = t.server();
    serve.token = Some("vg_wrong".to_string());
    let s = serve
        .connect(Transport::Stdio, Person::without_elicitation())
        .await;
    let refused = s.call("listVideos", json!({})).await;
    assert!(is_error(&refused), "{refused:?}");
    assert!(text_of(&refused).contains("401"), "{}", text_of(&refused));
    let c = p.counters();
    assert_eq!((c.unauthorized, c.of("listVideos")), (1, 1));
    assert_eq!(
        p.received()[0].authorization.as_deref(),
        Some("Bearer vg_wrong")
    );
    assert!(
        !s.log().join("\n").contains("vg_wrong"),
        "credential redacted: {:#?}",
        s.log()
    );
    s.close().await;
}
