//! Several instances on one PostgreSQL ledger (issue 33): two `serve --http` processes
//! of the real binary, each with its own state folder, share a throwaway cluster
//! (the runtime crate's `testing/postgres.rs`); the client alternates between them, and the reference
//! provider ignores retry keys, so every request that reaches it is another job. A task
//! (the tasks extension, as in tasks.rs) started on one instance is followed on another.
//! Every wait is on something a server or the provider did, never on time.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, TaskPayload, TaskStatus,
};
use serde_json::{Value, json};

use super::e2e::video;
use super::mcp::{
    Answer, Person, Revision, Serve, Session, Transport, is_error, serve_meta, text_of,
};
use super::postgres;
use super::provider::{Auth, Provider, Switches};

fn cat() -> Value {
    json!({ "prompt": "a cat on a skateboard", "aspectRatio": "16:9" })
}

fn with_confirmation(token: &str) -> Value {
    let mut args = cat();
    args["confirmation"] = json!(token);
    args
}

fn ignoring_keys() -> Provider {
    Provider::start(Switches {
        ignore_key: true,
        auth: Auth::AcceptAny,
        ..Switches::default()
    })
}

/// One instance on `ledger`, with a state folder of its own and `token` as credential.
async fn instance(p: &Provider, ledger: &str, state: &std::path::Path, token: &str) -> Session {
    instance_with(p, ledger, state, token, Person::without_elicitation()).await
}

/// [`instance`], with `person` on the client.
async fn instance_with(
    p: &Provider,
    ledger: &str,
    state: &std::path::Path,
    token: &str,
    person: Person,
) -> Session {
    let mut serve = Serve::new(video(), &p.url(), state)
        .arg("--ledger")
        .arg(ledger);
    serve.token = Some(token.to_string());
    serve.connect(Transport::Http, person).await
}

/// A person who says yes, on a client that declares the tasks extension.
fn follower() -> Person {
    Person::answering(Answer::Accept, Revision::Current).with_tasks()
}

/// The confirmation value the first call is answered with (token mode).
async fn confirmation(s: &Session) -> String {
    let asked = s.call("createVideo", cat()).await;
    let meta = serve_meta(&asked);
    assert_eq!(meta["consentRequired"], true, "{meta} {}", text_of(&asked));
    meta["confirmation"].as_str().unwrap().to_string()
}

/// The paid call with `token` on instance `s`, sent in the background and held at the
/// provider (returned once the provider holds it): the gate that lets it answer, and
/// the call.
async fn held_call(
    s: &Session,
    p: &Provider,
    token: &str,
) -> (
    super::provider::Gate,
    tokio::task::JoinHandle<Result<rmcp::model::CallToolResult, rmcp::ServiceError>>,
) {
    let gate = p.hold("createVideo");
    let Value::Object(args) = with_confirmation(token) else {
        unreachable!()
    };
    let params = CallToolRequestParams::new("createVideo").with_arguments(args);
    let peer = s.client.peer().clone();
    let pending = tokio::spawn(async move { peer.call_tool(params).await });
    p.wait_until("a held createVideo", |c| c.held("createVideo") == 1)
        .await;
    (gate, pending)
}

fn count(log: &[String], needle: &str) -> usize {
    log.iter().filter(|l| l.contains(needle)).count()
}

/// Until both servers together logged `n` lines holding `needle` (bounded: a hang guard).
async fn both_logged(a: &Session, b: &Session, needle: &str, n: usize) {
    let deadline = tokio::time::Instant::now() + super::mcp::NO_HANG;
    while count(&a.log(), needle) + count(&b.log(), needle) < n {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the servers never logged {n} × {needle}: {:#?}\n{:#?}",
            a.log(),
            b.log()
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}

/// 50 identical paid calls under one yes, raced across both instances while the first to
/// win is held at the provider: one request reaches it, one job exists, and the row is
/// whole on the other instance (an identical call there is answered from it).
#[tokio::test]
async fn fifty_identical_paid_calls_across_two_instances_make_one_job() {
    let p = ignoring_keys();
    let ledger = postgres::cluster().database();
    let (sa, sb) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = Arc::new(instance(&p, &ledger, sa.path(), "vg_alice_key_0001").await);
    let b = Arc::new(instance(&p, &ledger, sb.path(), "vg_alice_key_0001").await);
    let token = confirmation(&a).await;

    let gate = p.hold("createVideo");
    let mut calls = tokio::task::JoinSet::new();
    for i in 0..50 {
        let s = if i % 2 == 0 { a.clone() } else { b.clone() };
        let args = with_confirmation(&token);
        calls.spawn(async move { s.call("createVideo", args).await });
    }
    p.wait_until("a held createVideo", |c| c.held("createVideo") == 1)
        .await;
    // The 49 others found it being sent, on either instance, before it is let go.
    both_logged(&a, &b, r#""reason":"in-flight""#, 49).await;
    gate.release();
    let mut answered = 0;
    while let Some(result) = calls.join_next().await {
        let result = result.unwrap();
        if !is_error(&result) {
            answered += 1;
        }
    }
    assert!(answered >= 1, "the call that was sent is answered");
    let c = p.counters();
    assert_eq!(
        (c.of("createVideo"), c.jobs_created),
        (1, 1),
        "{:#?}",
        p.received()
    );
    // The job is known to both: the same call without a value, on each, is answered
    // from the row, with the job's id, and sends nothing.
    for s in [&a, &b] {
        let again = s.call("createVideo", cat()).await;
        assert_eq!(serve_meta(&again)["notSent"], true, "{again:?}");
        assert!(text_of(&again).contains("vid_1"), "{}", text_of(&again));
    }
    assert_eq!(p.counters().jobs_created, 1);
}

/// The instance sending a paid call is killed (SIGKILL) while the provider holds it: the
/// identical call on the other instance finds it still out at the provider (its lease has
/// not run out) and sends nothing. Still one job.
#[tokio::test]
async fn a_call_whose_instance_was_killed_is_not_sent_again_by_the_other() {
    let p = ignoring_keys();
    let ledger = postgres::cluster().database();
    let (sa, sb) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut a = instance(&p, &ledger, sa.path(), "vg_alice_key_0001").await;
    let b = instance(&p, &ledger, sb.path(), "vg_alice_key_0001").await;
    let token = confirmation(&a).await;

    // Never answered: its server dies mid-call.
    let (gate, pending) = held_call(&a, &p, &token).await;
    a.kill_server().await;
    pending.abort();
    gate.release();

    let again = b.call("createVideo", with_confirmation(&token)).await;
    assert!(is_error(&again), "{}", text_of(&again));
    assert_eq!(serve_meta(&again)["inFlight"], true, "{again:?}");
    assert_eq!(serve_meta(&again)["elsewhere"], true, "{again:?}");
    assert!(
        text_of(&again).contains("another instance"),
        "{}",
        text_of(&again)
    );
    let bare = b.call("createVideo", cat()).await;
    assert_eq!(serve_meta(&bare)["inFlight"], true, "{bare:?}");
    let c = p.counters();
    assert_eq!(
        (c.of("createVideo"), c.jobs_created),
        (1, 1),
        "{:#?}",
        p.received()
    );
}

/// How the database fails as the sender records the outcome.
#[derive(Clone, Copy)]
enum Fault {
    /// It refuses the write (a constraint no outcome meets).
    Refuses,
    /// It goes away: every connection to the ledger's database is ended and no new one
    /// is let in (as a database that was stopped), until it comes back.
    GoesAway,
}

impl Fault {
    fn start(self, cluster: &postgres::Cluster, ledger: &str) {
        match self {
            Fault::Refuses => cluster.sql(
                ledger,
                "ALTER TABLE connectorgen_calls ADD CONSTRAINT held_open \
                 CHECK (status = 'pending') NOT VALID",
            ),
            Fault::GoesAway => {
                let (maintenance, name) = maintenance(ledger);
                cluster.sql(
                    &maintenance,
                    &format!(
                        "ALTER DATABASE {name} ALLOW_CONNECTIONS false; \
                         SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                         WHERE datname = '{name}'"
                    ),
                );
            }
        }
    }

    fn end(self, cluster: &postgres::Cluster, ledger: &str) {
        match self {
            Fault::Refuses => cluster.sql(
                ledger,
                "ALTER TABLE connectorgen_calls DROP CONSTRAINT held_open",
            ),
            Fault::GoesAway => {
                let (maintenance, name) = maintenance(ledger);
                cluster.sql(
                    &maintenance,
                    &format!("ALTER DATABASE {name} ALLOW_CONNECTIONS true"),
                );
            }
        }
    }
}

/// The URL of the cluster's `postgres` database, beside the ledger's (where a fault that
/// closes the ledger's own database is put in and taken out), and the ledger database's
/// name.
fn maintenance(ledger: &str) -> (String, &str) {
    let (cluster, name) = ledger.rsplit_once('/').unwrap_or_default();
    (format!("{cluster}/postgres"), name)
}

/// Two instances on one ledger, `a` holding the outcome of the paid call (the job
/// `vid_1`) that the database did not record (`fault`); `b`'s identical call meanwhile
/// sends nothing (told it is being sent elsewhere, or, the database away, refused).
/// Returns with the database back.
async fn held_by_a(
    p: &Provider,
    cluster: &postgres::Cluster,
    ledger: &str,
    (sa, sb): (&std::path::Path, &std::path::Path),
    fault: Fault,
) -> (Session, Session, String) {
    let a = instance(p, ledger, sa, "vg_alice_key_0001").await;
    let b = instance(p, ledger, sb, "vg_alice_key_0001").await;
    let token = confirmation(&a).await;

    let (gate, pending) = held_call(&a, p, &token).await;
    // From here the database takes no outcome (a row may stay only pending).
    fault.start(cluster, ledger);
    gate.release();
    let first = pending.await.unwrap().unwrap();
    assert!(!is_error(&first), "{}", text_of(&first));
    assert!(
        serve_meta(&first)["unrecorded"].is_string(),
        "{first:?}\n{:#?}",
        a.log()
    );
    match fault {
        Fault::Refuses => {
            let during = b.call("createVideo", with_confirmation(&token)).await;
            assert_eq!(serve_meta(&during)["inFlight"], true, "{during:?}");
        }
        Fault::GoesAway => {
            let params = rmcp::model::CallToolRequestParams::new("createVideo").with_arguments(
                with_confirmation(&token)
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
            );
            let during = b.client.peer().call_tool(params).await;
            assert!(during.is_err(), "no ledger, no call: {during:?}");
        }
    }
    assert_eq!(p.counters().of("createVideo"), 1, "{:#?}", p.received());
    fault.end(cluster, ledger);
    (a, b, token)
}

/// What `b` answers the identical call with once `a` recorded the outcome: the job,
/// from the row, and still one job at the provider.
async fn answered_from_the_row(p: &Provider, b: &Session, token: &str) {
    let after = b.call("createVideo", with_confirmation(token)).await;
    assert_ne!(serve_meta(&after)["inFlight"], true, "{after:?}");
    assert!(text_of(&after).contains("vid_1"), "{}", text_of(&after));
    let c = p.counters();
    assert_eq!(
        (c.of("createVideo"), c.jobs_created),
        (1, 1),
        "{:#?}",
        p.received()
    );
}

/// An outcome the ledger could not take when it came (the database refused the write)
/// is recorded once the ledger takes writes again: the other instance then answers the
/// identical call from the row. Held in the sender's memory only, the row stayed pending
/// under its lease, and once the lease ran out the other instance would send the call
/// again — a second job at a provider that ignores retry keys.
#[tokio::test]
async fn an_outcome_held_in_memory_is_recorded_once_the_ledger_is_back() {
    let p = ignoring_keys();
    let cluster = postgres::cluster();
    let ledger = cluster.database();
    let (sa, sb) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (a, b, token) =
        held_by_a(&p, cluster, &ledger, (sa.path(), sb.path()), Fault::Refuses).await;
    // The sender's next call offers the outcome again first (so does its timer).
    let again = a.call("createVideo", with_confirmation(&token)).await;
    assert!(text_of(&again).contains("vid_1"), "{}", text_of(&again));
    answered_from_the_row(&p, &b, &token).await;
}

/// Issue 43: the same, with nobody calling the sender again. Its timer offers the held
/// outcome to the ledger (and renews the row's lease meanwhile), so the row is answered
/// for the other instance without the sender's next call: the identical call there gets
/// the job, and nothing is sent again. (Before, the timer was never started: the row
/// stayed pending until the sender's next call, and once the lease ran out the other
/// instance sent the create again.)
#[tokio::test]
async fn an_outcome_held_in_memory_is_recorded_while_its_instance_is_idle() {
    let p = ignoring_keys();
    let cluster = postgres::cluster();
    let ledger = cluster.database();
    let (sa, sb) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (a, b, token) =
        held_by_a(&p, cluster, &ledger, (sa.path(), sb.path()), Fault::Refuses).await;
    // No call to A from here on: only its timer can record the outcome.
    a.log_with("is recorded in the ledger now").await;
    answered_from_the_row(&p, &b, &token).await;
}

/// The same with the database gone (every connection ended, none let in) as the sender
/// records the outcome, and back later: the idle sender's timer connects again and
/// records it, and the other instance answers the identical call from the row. One job.
#[tokio::test]
async fn an_outcome_held_while_the_database_was_away_is_recorded_when_it_is_back() {
    let p = ignoring_keys();
    let cluster = postgres::cluster();
    let ledger = cluster.database();
    let (sa, sb) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (a, b, token) = held_by_a(
        &p,
        cluster,
        &ledger,
        (sa.path(), sb.path()),
        Fault::GoesAway,
    )
    .await;
    a.log_with("is recorded in the ledger now").await;
    answered_from_the_row(&p, &b, &token).await;
}

/// Two people, each with their own credential, share one ledger: neither's job answers the
/// other's identical call, and one's confirmation value does not open the other's.
#[tokio::test]
async fn two_credentials_on_one_ledger_never_see_each_others_jobs() {
    let p = ignoring_keys();
    let ledger = postgres::cluster().database();
    let (sa, sb) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let alice = instance(&p, &ledger, sa.path(), "vg_alice_key_0001").await;
    let bob = instance(&p, &ledger, sb.path(), "vg_bob_key_000002").await;
    let token = confirmation(&alice).await;
    let sent = alice.call("createVideo", with_confirmation(&token)).await;
    assert!(!is_error(&sent), "{}", text_of(&sent));
    assert_eq!(p.counters().jobs_created, 1);

    // Bob's identical call is his own first: he is asked, not answered with Alice's job.
    let asked = bob.call("createVideo", cat()).await;
    assert_eq!(serve_meta(&asked)["consentRequired"], true, "{asked:?}");
    assert!(!text_of(&asked).contains("vid_1"), "{}", text_of(&asked));
    // Alice's value is not Bob's yes.
    let relayed = bob.call("createVideo", with_confirmation(&token)).await;
    assert_eq!(serve_meta(&relayed)["consentRequired"], true, "{relayed:?}");
    assert_eq!(p.counters().jobs_created, 1, "{:#?}", p.received());
}

/// A task started on one instance is followed on another (issue 33): the paid async call
/// through A becomes a task; `tasks/get` with its id on B, which never saw the call,
/// answers from the shared row — working while the provider runs the job, completed with
/// the poll's answer once it is done (B restarted: a state B polled is held for the poll
/// interval). The create reached the provider once; an instance with another credential
/// on the same ledger finds no such task and polls nothing.
#[tokio::test]
async fn a_task_started_on_one_instance_is_followed_on_another() {
    let p = ignoring_keys();
    let ledger = postgres::cluster().database();
    let (sa, sb, sc) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let person = follower();
    let a = instance_with(&p, &ledger, sa.path(), "vg_alice_key_0001", person.clone()).await;
    let created = match a.call_once("createVideo", cat()).await {
        CallToolResponse::Task(task) => task,
        other => panic!("expected a task, got {other:?}\n{:#?}", a.log()),
    };
    assert_eq!(person.asked().len(), 1, "the person is asked first");
    assert_eq!(created.task.status, TaskStatus::Working);
    let id = created.task.task_id.clone();
    assert_eq!(p.counters().jobs_created, 1);

    let b = instance_with(&p, &ledger, sb.path(), "vg_alice_key_0001", follower()).await;
    let got = b
        .get_task(&id)
        .await
        .unwrap_or_else(|e| panic!("{e}\n{:#?}", b.log()));
    assert_eq!(got.task.task.task_id, id);
    assert_eq!(got.task.status(), TaskStatus::Working, "{got:?}");
    let message = got.task.task.status_message.clone().unwrap_or_default();
    assert!(message.contains("status: running"), "{message}");
    assert_eq!(p.counters().of("getVideo"), 1, "{:#?}", p.received());
    b.close().await;

    assert!(p.finish("vid_1"));
    let b = instance_with(&p, &ledger, sb.path(), "vg_alice_key_0001", follower()).await;
    let got = b
        .get_task(&id)
        .await
        .unwrap_or_else(|e| panic!("{e}\n{:#?}", b.log()));
    let TaskPayload::Completed { result } = &got.task.payload else {
        panic!("expected completed, got {got:?}\n{:#?}", b.log());
    };
    let result: CallToolResult = serde_json::from_value(Value::Object(result.clone())).unwrap();
    assert!(!is_error(&result), "{}", text_of(&result));
    let answer = result.structured_content.clone().unwrap_or(Value::Null);
    assert_eq!(answer["id"], "vid_1", "{answer}");
    assert_eq!(answer["status"], "succeeded", "{answer}");
    assert_eq!(p.counters().of("getVideo"), 2, "{:#?}", p.received());

    // Bob's instance on the same ledger: the same id names no task of his.
    let bob = instance_with(&p, &ledger, sc.path(), "vg_bob_key_000002", follower()).await;
    let refused = bob.get_task(&id).await;
    assert!(
        matches!(&refused, Err(rmcp::ServiceError::McpError(e))
            if e.code == rmcp::model::ErrorCode::INVALID_PARAMS && e.message.contains("no task")),
        "{refused:?}"
    );
    let c = p.counters();
    assert_eq!(
        (c.of("createVideo"), c.jobs_created, c.of("getVideo")),
        (1, 1, 2),
        "{:#?}",
        p.received()
    );
    for s in [a, b, bob] {
        s.close().await;
    }
}

/// `CONNECTORGEN_LEDGER` is read when `--ledger` is not given, and a URL that would leave
/// the machine without TLS, or with TLS whose certificate nobody checks, is refused at
/// start-up (exit 2), before anything connects, its password never shown.
#[test]
fn the_ledger_variable_is_read_and_a_url_without_checked_tls_is_refused() {
    let state = tempfile::tempdir().unwrap();
    let run = |ledger_flag: Option<&str>, variable: &str| {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_connectorgen"));
        command
            .arg("serve")
            .arg(video())
            .arg("--state")
            .arg(state.path())
            .env("CONNECTORGEN_LEDGER", variable)
            .env("VIDGEN_TOKEN", "vg_alice_key_0001")
            .stdin(std::process::Stdio::null());
        if let Some(url) = ledger_flag {
            command.arg("--ledger").arg(url);
        }
        let out = command.output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    let (code, stderr) = run(None, "postgres://app:hunter22@db.example.net/ledger");
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("add sslmode=verify-full") && stderr.contains("add sslmode=disable"),
        "{stderr}"
    );
    assert!(
        stderr.contains("postgres://app:***@db.example.net/ledger"),
        "{stderr}"
    );
    assert!(!stderr.contains("hunter22"), "{stderr}");
    // The flag wins over the variable.
    let (code, stderr) = run(
        Some("postgres://app:hunter22@db.example.net/ledger?sslmode=require"),
        "postgres://app@db.example.net/ledger",
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("checks no certificate"), "{stderr}");
    assert!(!stderr.contains("hunter22"), "{stderr}");
    // Nothing was made in the state folder: the ledger would have been in the database.
    assert_eq!(std::fs::read_dir(state.path()).unwrap().count(), 0);
}

/// A slow store holds only the call that needs it (issue 44): while a paid call's claim
/// waits on the ledger (another session of the database holds the calls' table), another
/// MCP session of the same instance lists the tools and makes a free read, both answered
/// before the paid call is. On a store called from the event loop, nothing else was
/// answered until the claim gave up (`lock_timeout`) or got through.
#[tokio::test]
async fn a_slow_store_delays_no_other_sessions_read_or_tools_list() {
    let p = ignoring_keys();
    let cluster = postgres::cluster();
    let ledger = cluster.database();
    let state = tempfile::tempdir().unwrap();
    let a = instance(&p, &ledger, state.path(), "vg_alice_key_0001").await;

    let held = cluster.hold(
        &ledger,
        "LOCK TABLE connectorgen_calls IN ACCESS EXCLUSIVE MODE",
    );
    let Value::Object(args) = cat() else {
        unreachable!()
    };
    let peer = a.client.peer().clone();
    let paid = tokio::spawn(async move {
        peer.call_tool(CallToolRequestParams::new("createVideo").with_arguments(args))
            .await
    });
    // Until the claim waits on the lock: a fact of the database, not a pause.
    let wait = ledger.clone();
    tokio::task::spawn_blocking(move || {
        postgres::cluster().sql(
            &wait,
            "SET statement_timeout = '60s'; DO $$ BEGIN \
             WHILE NOT EXISTS (SELECT 1 FROM pg_stat_activity \
             WHERE datname = current_database() AND wait_event_type = 'Lock') \
             LOOP PERFORM pg_sleep(0.01); END LOOP; END $$",
        );
    })
    .await
    .unwrap();

    let b = a.another(Person::without_elicitation()).await;
    let listed = tokio::time::timeout(super::mcp::NO_HANG, b.list_all_tools())
        .await
        .expect("tools/list answered")
        .unwrap();
    assert!(listed.iter().any(|t| t.name == "listVideos"), "{listed:?}");
    let read = tokio::time::timeout(
        super::mcp::NO_HANG,
        b.call_tool(CallToolRequestParams::new("listVideos")),
    )
    .await
    .expect("the free read answered")
    .unwrap();
    assert!(!is_error(&read), "{}", text_of(&read));
    assert!(
        !paid.is_finished(),
        "the paid call was answered before the store let its claim through: {:#?}",
        a.log()
    );

    drop(held);
    let asked = paid.await.unwrap().unwrap();
    assert_eq!(
        serve_meta(&asked)["consentRequired"],
        true,
        "{}",
        text_of(&asked)
    );
    assert_eq!(p.counters().of("createVideo"), 0, "{:#?}", p.received());
}
