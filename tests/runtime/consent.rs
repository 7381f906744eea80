//! One yes is one order (issue 30, defects 1 and 2 and the "NOT SENT AGAIN" one): the
//! real binary, a real MCP client over stdio and HTTP, and the reference provider
//! counting what it received. Parallel calls are issued concurrently through the one
//! client; every wait is on something the server or the provider did (a log line, a
//! held request, a form shown), never on time.

use serde_json::{Value, json};

use super::e2e::{Test, video};
use super::mcp::{
    Answer, Person, Revision, Session, Transport, is_error, json_of, serve_meta, text_of,
};
use super::provider::{Provider, Switches, TOKEN};

fn cat() -> Value {
    json!({ "prompt": "a cat on a skateboard", "aspectRatio": "16:9" })
}

/// The same call, its keys the other way round.
fn cat_reordered() -> Value {
    json!({ "aspectRatio": "16:9", "prompt": "a cat on a skateboard" })
}

fn confirmation(result: &rmcp::model::CallToolResult) -> String {
    let meta = serve_meta(result);
    assert_eq!(meta["consentRequired"], true, "{meta} {}", text_of(result));
    meta["confirmation"].as_str().unwrap().to_string()
}

fn with_confirmation(args: &Value, token: &str) -> Value {
    let mut args = args.clone();
    args["confirmation"] = json!(token);
    args
}

/// Lines of the server's log that are this tool asking (or joining a question).
fn questions(log: &[String]) -> usize {
    log.iter()
        .filter(|l| {
            l.contains(r#""tool":"createVideo""#)
                && (l.contains(r#""reason":"consent-required""#)
                    || l.contains(r#""reason":"consent-pending""#))
        })
        .count()
}

/// Token mode: two identical calls before the person answers get the same question
/// (the same value); the two relays, sent at the same time, are one request, and both
/// callers get its answer.
async fn two_questions_one_order_by_value(transport: Transport) {
    let p = Provider::start(Switches {
        ignore_key: true,
        ..Switches::default()
    });
    let t = Test::new(&p.url());
    let s = t
        .server()
        .connect(transport, Person::without_elicitation())
        .await;
    let first = confirmation(&s.call("createVideo", cat()).await);
    let second = confirmation(&s.call("createVideo", cat_reordered()).await);
    assert_eq!(first, second, "one logical request, one question");

    // Both relays at once; the first is held at the provider until the second has
    // reached the server and found it in flight.
    let gate = p.hold("createVideo");
    let (one, two, ()) = tokio::join!(
        s.call("createVideo", with_confirmation(&cat(), &first)),
        s.call("createVideo", with_confirmation(&cat_reordered(), &second)),
        async {
            p.wait_until("a held createVideo", |c| c.held("createVideo") == 1)
                .await;
            s.wait_for_log("the identical call in flight", |log| {
                log.iter().any(|l| l.contains(r#""reason":"in-flight""#))
            })
            .await;
            gate.release();
        }
    );
    for r in [&one, &two] {
        assert!(!is_error(r), "{}\n{:#?}", text_of(r), s.log());
        assert_eq!(json_of(r)["id"], "vid_1", "{r:?}");
    }
    // A third relay of the same yes does nothing more.
    let again = s
        .call("createVideo", with_confirmation(&cat(), &first))
        .await;
    assert_eq!(serve_meta(&again)["notSent"], true, "{again:?}");
    let c = p.counters();
    assert_eq!(
        (c.of("createVideo"), c.jobs_created),
        (1, 1),
        "{:#?}",
        p.received()
    );
    s.close().await;
}

#[tokio::test]
async fn two_identical_paid_calls_before_the_yes_are_one_order_stdio() {
    two_questions_one_order_by_value(Transport::Stdio).await;
}

#[tokio::test]
async fn two_identical_paid_calls_before_the_yes_are_one_order_http() {
    two_questions_one_order_by_value(Transport::Http).await;
}

/// `elicitation/create`: the second identical call does not show a second form; it
/// waits for the first one's answer, and one yes sends once.
async fn two_forms_one_question(transport: Transport) {
    let p = Provider::start(Switches {
        ignore_key: true,
        ..Switches::default()
    });
    let t = Test::new(&p.url());
    let person = Person::answering(Answer::Accept, Revision::Earlier).holding();
    let s = t.server().connect(transport, person.clone()).await;
    let (one, two, ()) = tokio::join!(
        s.call("createVideo", cat()),
        s.call("createVideo", cat_reordered()),
        async {
            s.wait_for_log("both calls at the question", |log| questions(log) >= 2)
                .await;
            person.answer_now();
        }
    );
    assert_eq!(person.asked().len(), 1, "{:?}", person.asked());
    for r in [&one, &two] {
        assert!(!is_error(r), "{}\n{:#?}", text_of(r), s.log());
        assert_eq!(json_of(r)["id"], "vid_1", "{r:?}");
    }
    let c = p.counters();
    assert_eq!(
        (c.of("createVideo"), c.jobs_created),
        (1, 1),
        "{:#?}",
        p.received()
    );
    s.close().await;
}

#[tokio::test]
async fn two_identical_elicitations_are_one_question_stdio() {
    two_forms_one_question(Transport::Stdio).await;
}

#[tokio::test]
async fn two_identical_elicitations_are_one_question_http() {
    two_forms_one_question(Transport::Http).await;
}

/// 2026-07-28: two outstanding `requestState`s for the identical call name the same
/// request: the person may see the form twice (the client shows each), but the two
/// yeses are one order.
async fn two_request_states_one_order(transport: Transport) {
    let p = Provider::start(Switches {
        ignore_key: true,
        ..Switches::default()
    });
    let t = Test::new(&p.url());
    let person = Person::answering(Answer::Accept, Revision::Current).holding();
    let s = t.server().connect(transport, person.clone()).await;
    let (one, two, ()) = tokio::join!(
        s.call("createVideo", cat()),
        s.call("createVideo", cat_reordered()),
        async {
            person.wait_shown(2).await;
            person.answer_now();
        }
    );
    for r in [&one, &two] {
        assert!(!is_error(r), "{}\n{:#?}", text_of(r), s.log());
        assert_eq!(json_of(r)["id"], "vid_1", "{r:?}");
    }
    let c = p.counters();
    assert_eq!(
        (c.of("createVideo"), c.jobs_created),
        (1, 1),
        "{:#?}",
        p.received()
    );
    s.close().await;
}

#[tokio::test]
async fn two_outstanding_request_states_are_one_order_stdio() {
    two_request_states_one_order(Transport::Stdio).await;
}

#[tokio::test]
async fn two_outstanding_request_states_are_one_order_http() {
    two_request_states_one_order(Transport::Http).await;
}

/// "NOT SENT AGAIN" hands a token-mode model no working confirmation: the value it
/// offers only puts the question about a second, identical order to the person, in
/// those words and with the cost; only the yes to that question sends.
#[tokio::test]
async fn a_second_identical_order_needs_its_own_question() {
    let p = Provider::start(Switches {
        ignore_key: true,
        ..Switches::default()
    });
    let t = Test::new(&p.url());
    let s = t
        .server()
        .connect(Transport::Stdio, Person::without_elicitation())
        .await;
    let token = confirmation(&s.call("createVideo", cat()).await);
    let first = s
        .call("createVideo", with_confirmation(&cat(), &token))
        .await;
    assert_eq!(json_of(&first)["id"], "vid_1", "{first:?}");

    let already = s.call("createVideo", cat()).await;
    let meta = serve_meta(&already);
    assert_eq!(meta["notSent"], true, "{already:?}");
    assert_eq!(meta["confirmation"], Value::Null, "{meta}");
    assert_eq!(meta["statusAtFirstCall"], "job", "{meta}");
    let said = text_of(&already);
    assert!(said.contains("status at the first call"), "{said}");
    let offered = meta["secondOrder"].as_str().unwrap().to_string();

    // Relaying the offered value is a question, not an order.
    let asked = s
        .call("createVideo", with_confirmation(&cat(), &offered))
        .await;
    assert!(is_error(&asked), "{asked:?}");
    let question = text_of(&asked);
    assert!(
        question.contains("a second, identical one")
            && question.contains("Costs 1 generation credit"),
        "{question}"
    );
    assert_eq!(p.counters().of("createVideo"), 1, "{:#?}", p.received());

    // The yes to that question is the second order, once.
    let yes = confirmation(&asked);
    let second = s.call("createVideo", with_confirmation(&cat(), &yes)).await;
    assert!(!is_error(&second), "{}", text_of(&second));
    assert_eq!(json_of(&second)["id"], "vid_2", "{second:?}");
    let again = s.call("createVideo", with_confirmation(&cat(), &yes)).await;
    assert_eq!(serve_meta(&again)["notSent"], true, "{again:?}");
    let c = p.counters();
    assert_eq!((c.of("createVideo"), c.jobs_created), (2, 2));
    s.close().await;
}

/// A manifest like video.yaml under another service name, or the same name with one
/// word of a description changed.
fn variant(dir: &std::path::Path, name: &str, from: &str, to: &str) -> std::path::PathBuf {
    let text = std::fs::read_to_string(video()).unwrap();
    assert!(text.contains(from), "{from}");
    let path = dir.join(name);
    std::fs::write(&path, text.replace(from, to)).unwrap();
    path
}

/// The default state folder is shared by every connector: a value given for one
/// connector's `createVideo` does not open another connector's `createVideo`, nor the
/// same service's after its manifest changed.
#[tokio::test]
async fn a_confirmation_opens_only_the_connector_it_was_given_for() {
    let p = Provider::start(Switches::default());
    let t = Test::new(&p.url());
    let manifests = tempfile::tempdir().unwrap();
    let s = t
        .server()
        .connect(Transport::Stdio, Person::without_elicitation())
        .await;
    let token = confirmation(&s.call("createVideo", cat()).await);
    s.close().await;

    let other = variant(
        manifests.path(),
        "other.yaml",
        "name: VidGen",
        "name: OtherGen",
    );
    let changed = variant(
        manifests.path(),
        "changed.yaml",
        "Does not publish or share the video.",
        "Does not publish the video.",
    );
    for (manifest, env) in [(other, Some("OTHERGEN_TOKEN")), (changed, None)] {
        let mut serve = t.server().manifest(&manifest);
        if let Some(env) = env {
            serve = serve.env(env, TOKEN);
        }
        let s: Session = serve
            .connect(Transport::Stdio, Person::without_elicitation())
            .await;
        let refused = s
            .call("createVideo", with_confirmation(&cat(), &token))
            .await;
        assert!(is_error(&refused), "{}: {refused:?}", manifest.display());
        let said = text_of(&refused);
        assert!(said.contains("NOT SENT"), "{said}");
        assert_eq!(p.counters().of("createVideo"), 0, "{:#?}", p.received());
        s.close().await;
    }
}
