//! The reference provider keeps the promises the manifests make, and breaks them only
//! when a switch says so: the tests of `serve` and `probe` lean on both.

use super::http::request;
use super::provider::{Auth, Provider, Switches, TOKEN};

const BEARER: &str = "Bearer vg_reference_token";

fn create(p: &Provider, key: Option<&str>, body: &str) -> super::http::Answer {
    let mut headers = vec![
        ("Authorization", BEARER),
        ("Content-Type", "application/json"),
    ];
    if let Some(key) = key {
        headers.push(("Idempotency-Key", key));
    }
    request("POST", &format!("{}/v1/videos", p.url()), &headers, body)
}

fn get(p: &Provider, path: &str) -> super::http::Answer {
    request(
        "GET",
        &format!("{}{path}", p.url()),
        &[("Authorization", BEARER)],
        "",
    )
}

#[test]
fn the_same_key_gives_the_same_job_and_the_list_one_item() {
    let p = Provider::start(Switches::default());
    assert_eq!(BEARER, format!("Bearer {TOKEN}"));
    let first = create(&p, Some("k-1"), r#"{"prompt":"a cat"}"#);
    let again = create(&p, Some("k-1"), r#"{"prompt":"a cat"}"#);
    assert_eq!(
        (first.status, again.status),
        (200, 200),
        "{first:?} {again:?}"
    );
    assert_eq!(first.json()["id"], again.json()["id"]);
    assert_eq!(again.header("idempotent-replayed"), Some("true"));
    assert_eq!(first.header("idempotent-replayed"), None);
    let list = get(&p, "/v1/videos").json();
    assert_eq!(list["items"].as_array().unwrap().len(), 1, "{list}");
    let c = p.counters();
    assert_eq!(
        (c.of("createVideo"), c.key("k-1"), c.jobs_created, c.replays),
        (2, 2, 1, 1)
    );
}

#[test]
fn a_key_reused_for_another_request_is_a_conflict() {
    let p = Provider::start(Switches::default());
    assert_eq!(create(&p, Some("k"), r#"{"prompt":"a cat"}"#).status, 200);
    let other = create(&p, Some("k"), r#"{"prompt":"a dog"}"#);
    assert_eq!(other.status, 409, "{other:?}");
    assert_eq!(
        other.header("content-type"),
        Some("application/problem+json")
    );
    assert_eq!((p.counters().conflicts, p.counters().jobs_created), (1, 1));
}

#[test]
fn with_ignore_key_the_same_key_makes_a_second_job() {
    let p = Provider::start(Switches {
        ignore_key: true,
        ..Switches::default()
    });
    let first = create(&p, Some("k-1"), r#"{"prompt":"a cat"}"#).json();
    let again = create(&p, Some("k-1"), r#"{"prompt":"a cat"}"#).json();
    assert_ne!(first["id"], again["id"]);
    assert_eq!(p.counters().jobs_created, 2);
    assert_eq!(
        p.job_ids(),
        [again["id"].as_str().unwrap(), first["id"].as_str().unwrap()]
    );
}

#[test]
fn polling_is_free_unless_switched_to_create_work() {
    let p = Provider::start(Switches {
        complete_after_polls: Some(2),
        ..Switches::default()
    });
    let id = create(&p, None, r#"{"prompt":"a cat"}"#).json()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let statuses: Vec<String> = (0..3)
        .map(|_| {
            get(&p, &format!("/v1/videos/{id}")).json()["status"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(statuses, ["running", "succeeded", "succeeded"]);
    assert_eq!(p.counters().jobs_created, 1);
    assert_eq!(p.counters().creates_without_key, 1);

    p.set(|s| s.poll_creates = true);
    assert_eq!(get(&p, &format!("/v1/videos/{id}")).status, 200);
    assert_eq!(p.counters().jobs_created, 2);
    assert_eq!(
        get(&p, "/v1/videos").json()["items"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert_eq!(get(&p, "/v1/videos/vid_99").status, 404);
}

#[test]
fn list_pages_with_limit_and_cursor() {
    let p = Provider::start(Switches::default());
    for n in 0..3 {
        create(&p, None, &format!(r#"{{"prompt":"video {n}"}}"#));
    }
    let page = get(&p, "/v1/videos?limit=2").json();
    assert_eq!(page["items"][0]["prompt"], "video 2");
    assert_eq!(page["nextCursor"], "after-2");
    let rest = get(&p, "/v1/videos?limit=2&cursor=after-2").json();
    assert_eq!(rest["items"].as_array().unwrap().len(), 1);
    assert_eq!(rest["nextCursor"], serde_json::Value::Null);
    assert_eq!(get(&p, "/v1/videos?limit=0").status, 400);
}

#[test]
fn credentials_rate_limits_and_bad_input_are_refused_and_still_counted() {
    let p = Provider::start(Switches::default());
    let no_credential = request("GET", &format!("{}/v1/videos", p.url()), &[], "");
    assert_eq!(no_credential.status, 401);
    let wrong = request(
        "GET",
        &format!("{}/v1/me", p.url()),
        &[("Authorization", "Bearer vg_wrong")],
        "",
    );
    assert_eq!(wrong.status, 401);
    assert_eq!(get(&p, "/v1/me").json()["id"], "acct_1");

    p.set(|s| {
        s.rate_limit_next = 2;
        s.retry_after = None;
    });
    let limited = get(&p, "/v1/videos");
    assert_eq!((limited.status, limited.header("retry-after")), (429, None));
    p.set(|s| s.retry_after = Some(7));
    assert_eq!(get(&p, "/v1/videos").header("retry-after"), Some("7"));
    assert_eq!(get(&p, "/v1/videos").status, 200);

    assert_eq!(create(&p, None, r#"{"prompt":""}"#).status, 400);
    assert_eq!(
        create(&p, None, r#"{"prompt":"x","colour":"red"}"#).status,
        400
    );

    p.set(|s| s.auth = Auth::RejectAll);
    assert_eq!(get(&p, "/v1/me").status, 401);
    p.set(|s| s.auth = Auth::AcceptAny);
    assert_eq!(
        request("GET", &format!("{}/v1/me", p.url()), &[], "").status,
        200
    );

    let c = p.counters();
    assert_eq!((c.unauthorized, c.rate_limited, c.jobs_created), (3, 2, 0));
    assert_eq!(
        (c.of("listVideos"), c.of("whoAmI"), c.of("createVideo")),
        (4, 4, 2)
    );
    assert_eq!(get(&p, "/nowhere").status, 404);
    assert_eq!(p.counters().unknown, 1);
}

#[test]
fn the_placeholder_operations_and_delete() {
    let p = Provider::start(Switches::default());
    let job = request(
        "POST",
        &format!("{}/v1/jobs", p.url()),
        &[("Authorization", BEARER), ("Idempotency-Key", "j")],
        r#"{"input":"x"}"#,
    )
    .json();
    assert_eq!(job["id"], "job_1");
    assert_eq!(get(&p, "/v1/jobs/job_1").json()["status"], "running");
    assert_eq!(get(&p, "/v1/things").json()["things"][0]["id"], "job_1");
    assert_eq!(
        get(&p, "/v1/videos").json()["items"]
            .as_array()
            .unwrap()
            .len(),
        0
    );
    let gone = request(
        "DELETE",
        &format!("{}/v1/jobs/job_1", p.url()),
        &[("Authorization", BEARER)],
        "",
    );
    assert_eq!(gone.status, 204);
    assert_eq!(get(&p, "/v1/jobs/job_1").status, 404);
    let c = p.counters();
    assert_eq!(
        (
            c.of("demoCreateJob"),
            c.of("demoGetJob"),
            c.of("demoDeleteJob")
        ),
        (1, 2, 1)
    );
}

/// A held create is received and acted on before its answer waits: a client that times
/// out has still made the job, which is what a retry must not make twice.
#[tokio::test]
async fn a_gate_holds_the_answer_after_the_work_is_done() {
    let p = Provider::start(Switches::default());
    let gate = p.hold("createVideo");
    let url = p.url();
    let client = std::thread::spawn(move || {
        request(
            "POST",
            &format!("{url}/v1/videos"),
            &[("Authorization", BEARER)],
            r#"{"prompt":"slow"}"#,
        )
    });
    p.wait_until("a held createVideo", |c| c.held("createVideo") == 1)
        .await;
    assert_eq!(p.counters().jobs_created, 1);
    assert!(!client.is_finished());
    gate.release();
    let answer = client.join().unwrap();
    assert_eq!(answer.status, 200);
    p.wait_until("the gate emptied", |c| c.held("createVideo") == 0)
        .await;
    // Other operations were never held.
    assert_eq!(get(&p, "/v1/videos").status, 200);
}
