//! Credentials of every shape, end to end (issue 31): `serve` with a real MCP client,
//! against a recorder on loopback, for the real documents of the fixtures — Vonage's
//! Numbers API (two query parts required together), Vonage's SMS API (two body fields,
//! no security scheme), the speech API (a header parameter, no security scheme) — and the
//! inline shapes (several headers, a `format`, a body field, a `fixed:` body field).
//! Every part must arrive where the manifest says, from its own variable, and no tool
//! may offer a part as an argument.

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::{Value, json};

use super::mcp::{Person, Serve, Transport, text_of, went_through};
use super::recorder::{Recorded, Recorder};

/// The request builder's encoding (all but `A-Z a-z 0-9 - . _ ~`).
const STRICT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

fn path(relative: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(relative)
}

/// Serves `manifest` with `env` (and no other credential), calls each tool, and returns
/// what the provider received, the served tools and the server's log.
async fn sent(
    manifest: &str,
    env: &[(&str, &str)],
    calls: &[(&str, Value)],
) -> (Vec<Recorded>, Vec<Value>, Vec<String>) {
    let recorder = Recorder::start(json!({ "id": "rec_1" }));
    let state = tempfile::tempdir().unwrap();
    let mut serve = Serve::new(path(manifest), &recorder.url(), state.path()).arg("--no-consent");
    serve.token = None;
    for (name, value) in env {
        serve = serve.env(name, value);
    }
    let s = serve
        .connect(Transport::Stdio, Person::without_elicitation())
        .await;
    let tools = s.client.list_all_tools().await.expect("tools/list");
    let tools: Vec<Value> = tools
        .iter()
        .map(|t| serde_json::to_value(t).unwrap())
        .collect();
    for (tool, args) in calls {
        let result = s.call(tool, args.clone()).await;
        assert!(
            went_through(&result),
            "{tool}: {}\n{:#?}",
            text_of(&result),
            s.log()
        );
    }
    let log = s.log();
    s.close().await;
    let requests = recorder.requests();
    assert_eq!(requests.len(), calls.len(), "{requests:#?}");
    (requests, tools, log)
}

/// No served tool has an argument named `names` (in any case).
#[track_caller]
fn no_argument(tools: &[Value], names: &[&str]) {
    for tool in tools {
        let properties = tool["inputSchema"]["properties"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        for name in names {
            assert!(
                !properties.keys().any(|k| k.eq_ignore_ascii_case(name)),
                "{}: `{name}` is an argument: {}",
                tool["name"],
                tool["inputSchema"]
            );
        }
    }
}

fn encoded(value: &str) -> String {
    utf8_percent_encode(value, STRICT).to_string()
}

/// The start line's variables: name → (what for, set).
fn variables(log: &[String]) -> Vec<(String, Value, bool)> {
    let start: Value = serde_json::from_str(&log[0]).unwrap();
    start["env"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["name"].as_str().unwrap().to_string(),
                v["for"].clone(),
                v["set"] == true,
            )
        })
        .collect()
}

#[tokio::test]
async fn vonage_numbers_sends_its_key_and_secret_together_in_the_query() {
    let (key, secret) = ("vk-1a2b", "vs/3c+4d=");
    let (r, tools, log) = sent(
        "examples/manifests/vonage-numbers.yaml",
        &[("VONAGE_API_KEY", key), ("VONAGE_API_SECRET", secret)],
        &[
            ("searchNumbers", json!({ "country": "GB" })),
            (
                "buyNumber",
                json!({ "country": "GB", "msisdn": "447700900000" }),
            ),
        ],
    )
    .await;
    let both = format!("api_key={}&api_secret={}", encoded(key), encoded(secret));
    assert_eq!(r[0].target, format!("/number/search?country=GB&{both}"));
    assert_eq!(r[1].target, format!("/number/buy?{both}"));
    assert_eq!(r[1].body_text(), "country=GB&msisdn=447700900000");
    no_argument(&tools, &["api_key", "api_secret"]);
    assert_eq!(
        variables(&log),
        [
            (
                "VONAGE_API_KEY".to_string(),
                json!(["credential: query api_key"]),
                true
            ),
            (
                "VONAGE_API_SECRET".to_string(),
                json!(["credential: query api_secret"]),
                true
            ),
        ]
    );
    assert!(!log.join("\n").contains("vs/3c"), "{log:#?}");
}

#[tokio::test]
async fn vonage_sms_fills_its_body_fields_from_the_variables() {
    let (key, secret) = ("vk-1a2b", "vs 3c&4d=");
    let (r, tools, _) = sent(
        "examples/manifests/vonage-sms.yaml",
        &[("VONAGE_API_KEY", key), ("VONAGE_API_SECRET", secret)],
        &[(
            "sendSms",
            json!({ "from": "AcmeInc", "to": "447700900000", "text": "Hello" }),
        )],
    )
    .await;
    assert_eq!(
        (r[0].method.as_str(), r[0].target.as_str()),
        ("POST", "/json")
    );
    assert_eq!(
        r[0].header("content-type"),
        Some("application/x-www-form-urlencoded")
    );
    assert_eq!(
        r[0].body_text(),
        format!(
            "from=AcmeInc&to=447700900000&text=Hello&api_key={}&api_secret={}",
            encoded(key),
            encoded(secret)
        )
    );
    no_argument(&tools, &["api_key", "api_secret", "format"]);
}

#[tokio::test]
async fn elevenlabs_sends_its_header_parameter_as_the_credential() {
    let (r, tools, log) = sent(
        "examples/manifests/elevenlabs.yaml",
        &[("ELEVENLABS_TOKEN", "sk_el_7f3a")],
        &[("listVoices", json!({})), ("getSubscription", json!({}))],
    )
    .await;
    for request in &r {
        assert_eq!(
            request.header("xi-api-key"),
            Some("sk_el_7f3a"),
            "{request:#?}"
        );
    }
    assert_eq!(r[0].target, "/v1/voices");
    no_argument(&tools, &["xi-api-key"]);
    assert_eq!(variables(&log)[0].0, "ELEVENLABS_TOKEN");
}

#[tokio::test]
async fn inline_parts_a_format_a_body_field_and_a_fixed_body_field_all_arrive() {
    let (r, tools, log) = sent(
        "tests/cases/valid/credential-parts.yaml",
        &[
            ("LEDGERLY_CLIENT_ID", "cli_42"),
            ("LEDGERLY_CLIENT_SECRET", "sec_9x"),
            ("LEDGERLY_VERSION", "2026"),
        ],
        &[
            (
                "createTransfer",
                json!({ "amount": 500, "from": "acc_1", "to": "acc_2" }),
            ),
            ("listAccounts", json!({})),
        ],
    )
    .await;
    for request in &r {
        assert_eq!(request.header("ledgerly-client-id"), Some("cli_42"));
        assert_eq!(request.header("ledgerly-secret"), Some("sec_9x"));
        assert!(
            request.target.ends_with("?version=v2026"),
            "{}",
            request.target
        );
    }
    let body: Value = serde_json::from_slice(&r[0].body).unwrap();
    assert_eq!(
        body,
        json!({ "amount": 500, "from": "acc_1", "to": "acc_2", "merchant": "m_42", "client_id": "cli_42" })
    );
    no_argument(
        &tools,
        &[
            "client_id",
            "merchant",
            "version",
            "LEDGERLY-CLIENT-ID",
            "LEDGERLY-SECRET",
        ],
    );
    // The client id in the header and in the body is one variable, read once.
    let names: Vec<String> = variables(&log).into_iter().map(|v| v.0).collect();
    assert_eq!(
        names,
        [
            "LEDGERLY_CLIENT_ID",
            "LEDGERLY_CLIENT_SECRET",
            "LEDGERLY_VERSION"
        ]
    );
}

#[tokio::test]
async fn a_scheme_word_before_the_token_is_sent_as_written() {
    let (r, tools, _) = sent(
        "tests/cases/valid/credential-format.yaml",
        &[("LABELS_TOKEN", "shippo_test_1")],
        &[("listParcels", json!({}))],
    )
    .await;
    assert_eq!(
        r[0].header("authorization"),
        Some("ShippoToken shippo_test_1")
    );
    no_argument(&tools, &["Authorization"]);
}

/// A part whose variable is not set is said at start-up, and the others still go out.
#[tokio::test]
async fn a_missing_part_is_a_start_up_warning() {
    let (r, _, log) = sent(
        "examples/manifests/vonage-numbers.yaml",
        &[("VONAGE_API_KEY", "vk-only")],
        &[("searchNumbers", json!({ "country": "GB" }))],
    )
    .await;
    assert_eq!(r[0].target, "/number/search?country=GB&api_key=vk-only");
    assert!(
        log.iter().any(|l| l.contains("\"warning\"")
            && l.contains(
                "VONAGE_API_SECRET is not set: calls go out without this part of the credential"
            )),
        "{log:#?}"
    );
}

/// Review defect 10: a credential of parts is named by its parts' variables — in the
/// start-up line and in the instructions the client gets — never by the unused
/// `<SERVICE>_TOKEN` default.
#[tokio::test]
async fn the_start_line_and_the_instructions_name_every_part_variable() {
    let recorder = Recorder::start(json!({ "id": "rec_1" }));
    let state = tempfile::tempdir().unwrap();
    let mut serve = Serve::new(
        path("examples/manifests/vonage-numbers.yaml"),
        &recorder.url(),
        state.path(),
    )
    .env("VONAGE_API_KEY", "vk-1a2b")
    .env("VONAGE_API_SECRET", "vs/3c+4d=");
    serve.token = None;
    let s = serve
        .connect(Transport::Stdio, Person::without_elicitation())
        .await;
    let instructions = s
        .client
        .peer_info()
        .and_then(|info| info.instructions.clone())
        .unwrap_or_default();
    let log = s.log_with("\"start\"").await;
    s.close().await;
    assert!(
        instructions.contains("environment (VONAGE_API_KEY and VONAGE_API_SECRET)"),
        "{instructions}"
    );
    assert!(!instructions.contains("VONAGE_TOKEN"), "{instructions}");
    let start: Value = serde_json::from_str(&log[0]).unwrap();
    assert_eq!(
        start["credentialEnv"],
        "VONAGE_API_KEY and VONAGE_API_SECRET"
    );
    assert_eq!(
        start["credentialEnvs"],
        json!(["VONAGE_API_KEY", "VONAGE_API_SECRET"])
    );
    assert!(!log.join("\n").contains("VONAGE_TOKEN"), "{log:#?}");
}
