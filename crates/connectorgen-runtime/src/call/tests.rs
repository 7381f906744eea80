//! The call stage's parts that decide alone: how an answer leaves the ledger row, where
//! the job id is, the poll hint, the question's words, the `forwarded` line.

use std::sync::Arc;

use super::reply::{self, Poll, Why};
use super::send::{forwarded_fields, job_id, outcome};
use super::*;
use crate::client::HttpResponse;
use crate::ledger::{Entry, Status};
use connectorgen_core::render::mcp::mapping::read_tools;

pub(crate) fn video() -> (Connector, Vec<(Value, RequestMapping)>) {
    manifest("examples/manifests", "video.yaml")
}

/// The connector and tools of the manifest `file` in the repository's folder `dir`.
pub(crate) fn manifest(dir: &str, file: &str) -> (Connector, Vec<(Value, RequestMapping)>) {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = root.join(dir);
    let text = std::fs::read_to_string(dir.join(file)).unwrap();
    let options = connectorgen_core::Options {
        targets: Some(vec![connectorgen_core::model::Target::Mcp]),
        manifest_dir: Some(dir),
        // A case's base document is in tests/cases/specs/, beside its folder.
        allow_read: vec![root],
        ..Default::default()
    };
    let analysis = connectorgen_core::analyze_with(file, Arc::new(text), &options).unwrap();
    let tools_text = analysis
        .outputs
        .as_ref()
        .unwrap_or_else(|| panic!("{file}: {:?}", analysis.diagnostics.items()))
        .iter()
        .find(|(p, _)| p.ends_with("mcp-tools.json"))
        .map(|(_, t)| t.clone())
        .unwrap();
    (
        analysis.connector.unwrap(),
        read_tools(&tools_text).unwrap(),
    )
}

fn response(status: u16, body: &str) -> HttpResponse {
    HttpResponse {
        status,
        headers: vec![("content-type".into(), "application/json".into())],
        body: body.as_bytes().to_vec(),
    }
}

#[test]
fn outcomes_keep_unknown_answers_open_for_a_same_key_retry() {
    let (connector, _) = video();
    let create = connector
        .operations
        .iter()
        .find(|o| o.id == "createVideo")
        .unwrap();
    let list = connector
        .operations
        .iter()
        .find(|o| o.id == "listVideos")
        .unwrap();
    let cases = [
        (create, 200, Status::Job),
        (list, 200, Status::Done),
        // A 3xx reaching the handler is a redirect not followed: no answer, not a job.
        (create, 302, Status::Pending),
        (list, 304, Status::Pending),
        (create, 500, Status::Pending),
        (create, 503, Status::Pending),
        (create, 429, Status::Pending),
        (create, 409, Status::Pending),
        (create, 408, Status::Pending),
        (create, 400, Status::Rejected),
        (create, 401, Status::Rejected),
        (create, 404, Status::Rejected),
    ];
    for (op, status, expected) in cases {
        let outcome = outcome(op, &response(status, "{}"), None, false);
        assert_eq!(outcome.status, expected, "{} {status}", op.id);
        assert_eq!(outcome.result.is_some(), status < 300);
    }
    // A retry (the same key after an attempt that got no answer) answered with a
    // refusal or a conflict may mean the first went through: unknown, not refused.
    let retried = [
        (create, 200, Status::Job),
        (create, 500, Status::Pending),
        (create, 429, Status::Pending),
        (create, 409, Status::Unknown),
        (create, 422, Status::Unknown),
        (create, 400, Status::Unknown),
        (list, 404, Status::Unknown),
    ];
    for (op, status, expected) in retried {
        let outcome = outcome(op, &response(status, "{}"), None, true);
        assert_eq!(outcome.status, expected, "retry: {} {status}", op.id);
    }
}

#[test]
fn the_job_id_is_the_poll_targets_parameter() {
    let (connector, tools) = video();
    let create = connector
        .operations
        .iter()
        .find(|o| o.id == "createVideo")
        .unwrap();
    let (definition, mapping) = tools
        .iter()
        .find(|(t, _)| t["name"] == "createVideo")
        .unwrap();
    let served = Served {
        input_schema: serde_json::from_value(definition["inputSchema"].clone()).unwrap(),
        mapping: mapping.clone(),
        op: create.clone(),
        credential: None,
        per_person: false,
        principal: "none".into(),
        tracked: true,
        poll: Some(Poll {
            tool: "getVideo".into(),
            param: "id".into(),
            field: None,
        }),
        output: None,
        check_with: None,
    };
    assert_eq!(
        job_id(
            &served,
            &response(200, r#"{"id":"vid_7","status":"queued"}"#)
        ),
        Some("vid_7".into())
    );
    assert_eq!(job_id(&served, &response(500, r#"{"id":"x"}"#)), None);
    assert_eq!(job_id(&served, &response(200, "not json")), None);
}

/// The issue's case: the provider calls the job's id `object_id` (its poll target's
/// parameter is `labelId`), and the answer said "Started a job. Follow it with getLabel."
/// without the id. The answer's schema has `object_id`, so that is where it is read.
#[test]
fn the_job_id_is_found_by_the_answers_schema() {
    let (connector, tools) = manifest("tests/cases/valid", "rpc-reads.yaml");
    let served = served(
        &connector,
        &tools,
        "createLabel",
        Some(("getLabel", "labelId")),
    );
    let answer = response(200, r#"{"object_id":"lbl_7","status":"queued"}"#);
    assert_eq!(job_id(&served, &answer), Some("lbl_7".into()));
    let poll = Poll {
        tool: "getLabel".into(),
        param: "labelId".into(),
        field: None,
    };
    let reply = reply::answer(
        &served.op,
        &answer,
        "x",
        Some(&poll),
        Some("lbl_7"),
        reply::Retry::SameKey,
    );
    // Debug quotes strings as JSON does here (`\"`).
    let text = format!("{:?}", reply.content);
    assert!(text.contains("Started a job (lbl_7)"), "{text}");
}

/// `async.idField` names the property, whatever the poll target and the other names say.
#[test]
fn the_job_id_is_the_declared_id_field() {
    let (connector, tools) = manifest("tests/cases/valid", "base-rpc-reads.yaml");
    let served = served(&connector, &tools, "createTranscript", None);
    let answer = response(200, r#"{"id":"req_1","handle":"tr_9"}"#);
    assert_eq!(job_id(&served, &answer), Some("tr_9".into()));
    assert_eq!(job_id(&served, &response(200, r#"{"id":"req_1"}"#)), None);
}

/// A job inside its answer's envelope (issue 49): the id found at `job.id` with nothing
/// written, and at the written path `batch.id`; the state read at `job.status` (found,
/// beside a written mapping) and `batch.state` (written). Before, the id was looked for at the top only, so the
/// model was told a job started without being told which.
#[test]
fn a_job_inside_an_envelope_is_found_by_its_path() {
    use connectorgen_core::model::JobState;
    let (connector, tools) = manifest("tests/cases/valid", "base-job-envelope.yaml");
    let render = served(&connector, &tools, "createRender", None);
    let answer = response(202, r#"{"job":{"id":"r_1","status":"queued"}}"#);
    assert_eq!(job_id(&render, &answer), Some("r_1".into()));
    let batch = served(&connector, &tools, "createBatch", None);
    let answer = response(
        202,
        r#"{"batch":{"id":"b_2","state":"pending"},"links":[]}"#,
    );
    assert_eq!(job_id(&batch, &answer), Some("b_2".into()));
    let status = |id: &str| {
        let op = connector.operations.iter().find(|o| o.id == id).unwrap();
        op.async_.as_ref().unwrap().status.clone()
    };
    let render = status("createRender");
    assert_eq!(render.field, "job.status");
    assert_eq!(
        render.state(&json!({"job": {"status": "succeeded"}})),
        JobState::Done
    );
    assert_eq!(
        render.state(&json!({"job": {"status": "rendering"}})),
        JobState::Working
    );
    let batch = status("createBatch");
    assert_eq!(
        batch.state(&json!({"batch": {"state": "cancelled"}})),
        JobState::Failed
    );
    // Polled by the scene it was made on: no id to find, none needed.
    let preview = served(&connector, &tools, "createPreview", None);
    assert_eq!(
        job_id(&preview, &response(202, r#"{"status":"queued"}"#)),
        None
    );
}

/// An RPC-style poll (a `read: true` POST whose body takes the job's id): the answer
/// names the poll tool and the body argument to send the id in, as it does a path
/// parameter; before, the answer had no hint at all (the poll target has no path
/// parameter, so serve had no poll to name). Then the same through a whole-body argument.
#[test]
fn the_poll_hint_of_an_rpc_poll_names_the_body_argument() {
    let (connector, tools) = manifest("tests/cases/valid", "base-rpc-reads.yaml");
    let mappings: HashMap<String, RequestMapping> = tools
        .iter()
        .map(|(t, m)| (t["name"].as_str().unwrap().to_string(), m.clone()))
        .collect();
    let create = connector
        .operations
        .iter()
        .find(|o| o.id == "createTranscript")
        .unwrap();
    let poll = poll_hint(&connector, create, &mappings).expect("a poll hint");
    let answer = response(200, r#"{"id":"req_1","handle":"tr_9","status":"queued"}"#);
    let reply = reply::answer(
        create,
        &answer,
        "x",
        Some(&poll),
        Some("tr_9"),
        reply::Retry::SameKey,
    );
    // Debug quotes strings as JSON does here (`\"`).
    let text = format!("{:?}", reply.content);
    assert!(
        text.contains(r#"Follow it with getTranscript (handle: \"tr_9\")"#),
        "{text}"
    );
    // The poll tool takes its body as one argument: the id is a field of it.
    let mut whole = mappings.clone();
    let target = whole.get_mut("getTranscript").unwrap();
    for argument in &mut target.arguments {
        if argument.location == mapping::Location::Body {
            argument.argument = "body".into();
            argument.name = None;
        }
    }
    let poll = poll_hint(&connector, create, &whole).expect("a poll hint");
    assert_eq!(
        poll.call("tr_9"),
        r#"getTranscript (body: {"handle": "tr_9"})"#
    );
}

fn served(
    connector: &Connector,
    tools: &[(Value, RequestMapping)],
    id: &str,
    poll: Option<(&str, &str)>,
) -> Served {
    let op = connector.operations.iter().find(|o| o.id == id).unwrap();
    let (definition, mapping) = tools.iter().find(|(t, _)| t["name"] == id).unwrap();
    Served {
        input_schema: serde_json::from_value(definition["inputSchema"].clone()).unwrap(),
        mapping: mapping.clone(),
        op: op.clone(),
        credential: None,
        per_person: false,
        principal: "none".into(),
        tracked: true,
        poll: poll.map(|(t, p)| Poll {
            tool: t.to_string(),
            param: p.to_string(),
            field: None,
        }),
        output: None,
        check_with: None,
    }
}

#[test]
fn the_question_quotes_the_manifest_and_the_arguments() {
    let (connector, _) = video();
    let create = connector
        .operations
        .iter()
        .find(|o| o.id == "createVideo")
        .unwrap();
    let args = serde_json::json!({"prompt": "a cat"});
    let q = reply::consent_question(create, args.as_object().unwrap(), false, None);
    assert!(q.contains("Costs 1 generation credit."), "{q}");
    assert!(q.contains("\"prompt\": \"a cat\""), "{q}");
    assert!(!q.contains("second"));
    let again = reply::consent_question(create, args.as_object().unwrap(), true, None);
    assert!(
        again.contains("this would be a second, identical one"),
        "{again}"
    );
}

#[test]
fn the_credential_variable_is_auth_env_else_the_service_default() {
    let (connector, _) = video();
    assert_eq!(connector.auth.env, "VIDGEN_TOKEN");
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/manifests/video.yaml"
    ))
    .unwrap()
    .replace(
        "auth:\n  tokenPrefix: vg_",
        "auth:\n  tokenPrefix: vg_\n  env: VG_KEY",
    );
    let options = connectorgen_core::Options {
        targets: Some(vec![connectorgen_core::model::Target::Mcp]),
        manifest_dir: Some(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/manifests").into()),
        ..Default::default()
    };
    let analysis = connectorgen_core::analyze_with("video.yaml", Arc::new(text), &options).unwrap();
    assert_eq!(analysis.connector.unwrap().auth.env, "VG_KEY");
}

#[test]
fn the_confirmation_request_says_why_it_asks_again() {
    let (connector, _) = video();
    let create = connector
        .operations
        .iter()
        .find(|o| o.id == "createVideo")
        .unwrap();
    let text = |why| {
        let r = reply::consent_required(create, "q", "tok", 600, why);
        assert!(r.is_error);
        match &r.content[0] {
            Block::Text(text) => text.clone(),
            Block::Blob { .. } => String::new(),
        }
    };
    assert!(text(Why::Fresh).contains("\"confirmation\": \"tok\""));
    assert!(text(Why::Fresh).contains("for 10 minutes"));
    assert!(text(Why::Spent).contains("already used by a request the provider refused"));
    assert!(text(Why::NotForThisCall).contains("expired or was given for other arguments"));
}

#[test]
fn the_question_names_whose_money_moves_and_when_it_is_permanent() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/cases/valid/safety-wording.yaml"
    ))
    .unwrap();
    let options = connectorgen_core::Options {
        targets: Some(vec![connectorgen_core::model::Target::Mcp]),
        ..Default::default()
    };
    let analysis =
        connectorgen_core::analyze_with("safety-wording.yaml", Arc::new(text), &options).unwrap();
    let connector = analysis.connector.unwrap();
    let op = |id: &str| connector.operations.iter().find(|o| o.id == id).unwrap();
    let args = serde_json::json!({});
    let args = args.as_object().unwrap();
    let refund = reply::consent_question(op("refundBuyer"), args, false, None);
    assert!(
        refund.contains("This call costs money from your customer, not from you: you authorise it on their behalf"),
        "{refund}"
    );
    assert!(
        refund.contains("It cannot be undone when: the order was paid by bank transfer."),
        "{refund}"
    );
    let label = reply::consent_question(op("buyLabel"), args, false, None);
    assert!(label.contains("This call costs money: "), "{label}");
    assert!(!label.contains("customer"), "{label}");
    let action = reply::consent_question(op("runServerAction"), args, false, None);
    assert!(
        action.contains("It cannot be undone when: type is rebuild or restore."),
        "{action}"
    );
}

#[test]
fn a_forwarded_line_shows_a_key_only_when_the_request_carried_one() {
    let (connector, tools) = video();
    let create = connector
        .operations
        .iter()
        .find(|o| o.id == "createVideo")
        .unwrap();
    let (definition, mapping) = tools
        .iter()
        .find(|(t, _)| t["name"] == "createVideo")
        .unwrap();
    assert!(mapping.idempotency.is_some());
    let mut served = Served {
        input_schema: serde_json::from_value(definition["inputSchema"].clone()).unwrap(),
        mapping: mapping.clone(),
        op: create.clone(),
        credential: None,
        per_person: false,
        principal: "none".into(),
        tracked: true,
        poll: None,
        output: None,
        check_with: None,
    };
    let http = crate::client::HttpRequest {
        method: http::Method::POST,
        url: "http://127.0.0.1:9/v1/videos".into(),
        headers: vec![],
        body: None,
    };
    let entry = Entry {
        id: 1,
        tool: "createVideo".into(),
        args_hash: "h".into(),
        key: "ledger-key".into(),
        nonce: None,
        status: Status::Pending,
        http_status: None,
        job_id: None,
        result: None,
        created: 0,
        updated: 0,
        attempts: 1,
        media_type: None,
        sending: false,
        task: None,
    };
    let with = forwarded_fields(&served, &http, 3, Some((&entry, false)));
    assert_eq!(with["key"], "ledger-key");
    // `idempotency: unsupported`: the mapping sends no key, so the line names none.
    served.mapping.idempotency = None;
    let without = forwarded_fields(&served, &http, 3, Some((&entry, true)));
    assert!(without.get("key").is_none(), "{without}");
    assert_eq!(without["retry"], true);
    assert_eq!(without["attempt"], 1);
}
