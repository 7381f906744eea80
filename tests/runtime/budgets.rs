//! Budgets (issue 47) through the real binary: `serve --budget` holds each person to a
//! limit that N raced paid calls cannot pass, on two `serve --http` instances sharing one
//! PostgreSQL ledger and on one instance's SQLite; the question states the amount (read
//! from an argument in cents, or a rate per second) and the running total, and a call over
//! the limit is refused before anyone is asked; a cancel the manifest marks `refunds:`
//! gives the amount back only when the provider answered it with success.
//!
//! The manifest is `tests/cases/valid/budgets.yaml` (renderVideo: 0.05 credits a second
//! of `seconds`; orderPrint: `priceCents` × 0.01 USD; cancelPrint refunds orderPrint), on
//! the reference provider's `/v1/videos` (counted as `createVideo`) and `/v1/jobs`
//! (`demoCreateJob`, `demoDeleteJob`). Consent goes by confirmation value (a client
//! without elicitation), so every question is a tool error whose text the test reads.

use std::path::{Path, PathBuf};

use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};

use super::mcp::{Person, Serve, Session, Transport, is_error, serve_meta, text_of};
use super::postgres;
use super::provider::{Auth, Provider, Switches};

fn manifest() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases/valid/budgets.yaml")
}

/// A provider that takes any credential and ignores retry keys: every request that
/// reaches it is another job, counted.
fn provider() -> Provider {
    Provider::start(Switches {
        ignore_key: true,
        auth: Auth::AcceptAny,
        ..Switches::default()
    })
}

/// `serve budgets.yaml` on `p`, with `state` and `extra` arguments, the person's key in
/// `STUDIO_TOKEN`.
fn server(p: &Provider, state: &Path, extra: &[&str]) -> Serve {
    let mut serve =
        Serve::new(manifest(), &p.url(), state).env("STUDIO_TOKEN", "st_person_key_0001");
    for arg in extra {
        serve = serve.arg(arg);
    }
    serve
}

/// A client's side of a session: the peer its calls go through.
type Peer = rmcp::service::Peer<rmcp::service::RoleClient>;

/// `tools/call TOOL ARGS` on `peer` (bounded: a hang fails the test).
async fn call(peer: &Peer, tool: &str, args: Value) -> rmcp::model::CallToolResult {
    let Value::Object(arguments) = args else {
        panic!("arguments must be an object")
    };
    let params = CallToolRequestParams::new(tool.to_string()).with_arguments(arguments);
    tokio::time::timeout(super::mcp::NO_HANG, peer.call_tool(params))
        .await
        .unwrap_or_else(|_| panic!("tools/call {tool} hung"))
        .unwrap_or_else(|e| panic!("tools/call {tool}: {e}"))
}

/// The question a first call is answered with (its text) and the confirmation value.
async fn asked(s: &Session, tool: &str, args: Value) -> (String, String) {
    asked_on(s.client.peer(), tool, args).await
}

async fn asked_on(peer: &Peer, tool: &str, args: Value) -> (String, String) {
    let result = call(peer, tool, args).await;
    let meta = serve_meta(&result);
    assert_eq!(meta["consentRequired"], true, "{meta} {}", text_of(&result));
    let token = meta["confirmation"].as_str().unwrap().to_string();
    (text_of(&result), token)
}

fn confirmed(args: &Value, token: &str) -> Value {
    let mut args = args.clone();
    args["confirmation"] = json!(token);
    args
}

/// A refusal over a budget: not sent, never a question, and it says the limit, what was
/// spent, when it resets and who can raise it.
fn assert_over_budget(result: &rmcp::model::CallToolResult, limit: &str) {
    let text = text_of(result);
    let meta = serve_meta(result);
    assert!(is_error(result), "{text}");
    assert_eq!(meta["notSent"], true, "{meta}");
    assert!(meta["overBudget"].is_object(), "{meta}");
    assert!(meta.get("confirmation").is_none() && meta.get("consentRequired").is_none());
    for said in [
        "NOT SENT",
        limit,
        "spent today so far",
        "resets at",
        "Only whoever runs this connector can raise the limit",
    ] {
        assert!(text.contains(said), "{said:?} not in: {text}");
    }
    assert!(!text.contains("\"confirmation\""), "{text}");
}

/// The 20 render calls of the race: distinct prompts, 20 seconds each (1 credit).
fn render(i: usize) -> Value {
    json!({ "prompt": format!("shot number {i}"), "seconds": 20 })
}

/// Every call's question first (all fit while nothing is spent), then the 20 confirmed
/// calls raced over `peers`: how many went through, and the refusals.
async fn race(peers: &[Peer]) -> (usize, Vec<rmcp::model::CallToolResult>) {
    let mut tokens = Vec::new();
    for i in 0..20 {
        let (question, token) = asked_on(&peers[i % peers.len()], "renderVideo", render(i)).await;
        assert!(question.contains("This costs 1 credit."), "{question}");
        tokens.push(token);
    }
    let mut calls = tokio::task::JoinSet::new();
    for (i, token) in tokens.into_iter().enumerate() {
        let peer = peers[i % peers.len()].clone();
        calls.spawn(async move { call(&peer, "renderVideo", confirmed(&render(i), &token)).await });
    }
    let (mut sent, mut refused) = (0, Vec::new());
    while let Some(result) = calls.join_next().await {
        let result = result.unwrap();
        if is_error(&result) {
            refused.push(result);
        } else {
            sent += 1;
        }
    }
    (sent, refused)
}

/// `--budget credits=5/day`, 1 credit a call: 20 paid calls with distinct arguments raced
/// over two instances on one PostgreSQL ledger send exactly 5 (counted by the provider);
/// the other 15 are refused with the limit's text, nothing sent.
#[tokio::test]
async fn a_budget_holds_across_two_instances_on_one_postgres_ledger() {
    let p = provider();
    let ledger = postgres::cluster().database();
    let (sa, sb) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let extra = ["--ledger", ledger.as_str(), "--budget", "credits=5/day"];
    let a = server(&p, sa.path(), &extra)
        .connect(Transport::Http, Person::without_elicitation())
        .await;
    let b = server(&p, sb.path(), &extra)
        .connect(Transport::Http, Person::without_elicitation())
        .await;
    let (sent, refused) = race(&[a.client.peer().clone(), b.client.peer().clone()]).await;
    assert_eq!(sent, 5, "{:#?}", p.received());
    assert_eq!(p.counters().of("createVideo"), 5, "{:#?}", p.received());
    assert_eq!(refused.len(), 15);
    for result in &refused {
        assert_over_budget(result, "at most 5 credits per day (UTC)");
        assert!(
            text_of(result).contains("5 credits spent today so far"),
            "{}",
            text_of(result)
        );
    }
}

/// The same on one instance's SQLite ledger, the calls raced over three concurrent
/// sessions of one `serve --http`.
#[tokio::test]
async fn a_budget_holds_across_concurrent_sessions_on_sqlite() {
    let p = provider();
    let state = tempfile::tempdir().unwrap();
    let s = server(&p, state.path(), &["--budget", "credits=5/day"])
        .connect(Transport::Http, Person::without_elicitation())
        .await;
    let others = [
        s.another(Person::without_elicitation()).await,
        s.another(Person::without_elicitation()).await,
    ];
    let mut sessions = vec![s.client.peer().clone()];
    sessions.extend(others.iter().map(|o| o.peer().clone()));
    let (sent, refused) = race(&sessions).await;
    assert_eq!(
        (sent, p.counters().of("createVideo")),
        (5, 5),
        "{:#?}",
        p.received()
    );
    assert_eq!(refused.len(), 15);
    for result in &refused {
        assert_over_budget(result, "at most 5 credits per day (UTC)");
    }
}

/// The amount read from an argument in cents, and from a rate per second: the question
/// states it and the running total; a call that would pass the limit by its amount is
/// refused before the question, and nothing reaches the provider.
#[tokio::test]
async fn the_question_states_the_amount_and_a_call_over_the_limit_is_never_asked() {
    let p = provider();
    let state = tempfile::tempdir().unwrap();
    let s = server(
        &p,
        state.path(),
        &["--budget", "money=20/day", "--budget", "credits=3/day"],
    )
    .connect(Transport::Stdio, Person::without_elicitation())
    .await;

    let poster = json!({ "input": "a red bicycle", "priceCents": 1250 });
    let (question, token) = asked(&s, "orderPrint", poster.clone()).await;
    assert!(question.contains("This costs 12.50 USD."), "{question}");
    assert!(
        question.contains("12.50 of at most 20.00 USD today (0.00 USD spent so far)"),
        "{question}"
    );
    let (question, _) = asked(
        &s,
        "renderVideo",
        json!({ "prompt": "rain", "seconds": 30 }),
    )
    .await;
    assert!(question.contains("This costs 1.5 credits."), "{question}");
    assert!(
        question.contains("1.5 of at most 3 credits today"),
        "{question}"
    );

    // 25.00 USD: past the limit by its amount alone. Refused, not asked.
    let dear = s
        .call(
            "orderPrint",
            json!({ "input": "a gold frame", "priceCents": 2500 }),
        )
        .await;
    assert_over_budget(&dear, "at most 20.00 USD per day (UTC)");
    assert!(
        text_of(&dear).contains("this call would add 25.00 USD"),
        "{}",
        text_of(&dear)
    );

    let bought = s.call("orderPrint", confirmed(&poster, &token)).await;
    assert!(!is_error(&bought), "{}", text_of(&bought));
    // 12.50 spent: 8.00 more would pass 20.00, 7.50 fits exactly.
    let more = s
        .call(
            "orderPrint",
            json!({ "input": "a blue kite", "priceCents": 800 }),
        )
        .await;
    assert_over_budget(&more, "at most 20.00 USD per day (UTC)");
    assert!(
        text_of(&more).contains("12.50 USD spent today so far"),
        "{}",
        text_of(&more)
    );
    let (question, _) = asked(
        &s,
        "orderPrint",
        json!({ "input": "a kite", "priceCents": 750 }),
    )
    .await;
    assert!(
        question.contains("20.00 of at most 20.00 USD today (12.50 USD spent so far)"),
        "{question}"
    );
    assert_eq!(p.counters().of("demoCreateJob"), 1, "{:#?}", p.received());
}

/// A cancel marked `refunds: orderPrint` gives the order's amount back to the budget once
/// the provider answered it with success — not when it was refused (a 429 for the very
/// order, a 404 for an order it does not have).
#[tokio::test]
async fn a_refund_gives_the_amount_back_only_when_the_provider_said_yes() {
    let p = provider();
    let state = tempfile::tempdir().unwrap();
    let s = server(&p, state.path(), &["--budget", "money=20/day"])
        .connect(Transport::Stdio, Person::without_elicitation())
        .await;
    let poster = json!({ "input": "a red bicycle", "priceCents": 1500 });
    let (_, token) = asked(&s, "orderPrint", poster.clone()).await;
    let bought = s.call("orderPrint", confirmed(&poster, &token)).await;
    assert!(!is_error(&bought), "{}", text_of(&bought));
    let job = serve_meta(&bought)["jobId"].as_str().unwrap().to_string();
    // The identical call is answered from the ledger, the job with it, though a second
    // order would not fit: it is no new purchase.
    let same = s.call("orderPrint", poster.clone()).await;
    assert!(
        serve_meta(&same).get("overBudget").is_none(),
        "{}",
        text_of(&same)
    );
    assert!(
        text_of(&same).contains(&format!("already started a job ({job})")),
        "{}",
        text_of(&same)
    );
    let kite = json!({ "input": "a kite", "priceCents": 1000 });
    assert_over_budget(
        &s.call("orderPrint", kite.clone()).await,
        "at most 20.00 USD",
    );

    // The provider does not cancel it (a 429 for the very order, a 404 for an order it
    // does not have): nothing is given back.
    p.set(|s| s.rate_limit_next = 1);
    let refused = s.call("cancelPrint", json!({ "id": job })).await;
    assert!(is_error(&refused), "{}", text_of(&refused));
    let unknown = s.call("cancelPrint", json!({ "id": "job_999" })).await;
    assert!(is_error(&unknown), "{}", text_of(&unknown));
    assert_eq!(
        serve_meta(&refused).get("givenBack"),
        None,
        "{:?}",
        serve_meta(&refused)
    );
    assert_over_budget(
        &s.call("orderPrint", kite.clone()).await,
        "at most 20.00 USD",
    );

    let cancelled = s.call("cancelPrint", json!({ "id": job })).await;
    assert!(!is_error(&cancelled), "{}", text_of(&cancelled));
    assert_eq!(
        serve_meta(&cancelled)["givenBack"],
        true,
        "{:?}",
        serve_meta(&cancelled)
    );
    let (question, token) = asked(&s, "orderPrint", kite.clone()).await;
    assert!(question.contains("(0.00 USD spent so far)"), "{question}");
    let again = s.call("orderPrint", confirmed(&kite, &token)).await;
    assert!(!is_error(&again), "{}", text_of(&again));
    let c = p.counters();
    assert_eq!(
        (c.of("demoCreateJob"), c.of("demoDeleteJob")),
        (2, 3),
        "{:#?}",
        p.received()
    );
}
