//! Credentials of every shape, end to end (issue 31): `serve` with a real MCP client,
//! against a recorder on loopback, for the bundled examples of each shape (examples/specs/
//! README.md) — two query parts required together, two body fields and no security
//! scheme, a header parameter and no security scheme — and the
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
    sent_with(manifest, &[], env, calls).await
}

/// `sent`, with more command-line arguments (`--allow-read` for a case's document).
async fn sent_with(
    manifest: &str,
    args: &[&str],
    env: &[(&str, &str)],
    calls: &[(&str, Value)],
) -> (Vec<Recorded>, Vec<Value>, Vec<String>) {
    let recorder = Recorder::start(json!({ "id": "rec_1" }));
    let state = tempfile::tempdir().unwrap();
    let mut serve = Serve::new(path(manifest), &recorder.url(), state.path()).arg("--no-consent");
    for arg in args {
        serve = serve.arg(arg);
    }
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
async fn two_query_key_parts_are_sent_together_in_the_query() {
    let (key, secret) = ("vk-1a2b", "vs/3c+4d=");
    let (r, tools, log) = sent(
        "examples/manifests/two-query-key-parts.yaml",
        &[("NUMBERS_API_KEY", key), ("NUMBERS_API_SECRET", secret)],
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
                "NUMBERS_API_KEY".to_string(),
                json!(["credential: query api_key"]),
                true
            ),
            (
                "NUMBERS_API_SECRET".to_string(),
                json!(["credential: query api_secret"]),
                true
            ),
        ]
    );
    assert!(!log.join("\n").contains("vs/3c"), "{log:#?}");
}

#[tokio::test]
async fn body_field_credentials_are_filled_from_the_variables() {
    let (key, secret) = ("vk-1a2b", "vs 3c&4d=");
    let (r, tools, _) = sent(
        "examples/manifests/body-field-credentials.yaml",
        &[("TEXTLINE_API_KEY", key), ("TEXTLINE_API_SECRET", secret)],
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
async fn a_header_parameter_key_is_sent_as_the_credential() {
    let (r, tools, log) = sent(
        "examples/manifests/header-parameter-key.yaml",
        &[("VOICEBOX_TOKEN", "sk_el_7f3a")],
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
    assert_eq!(variables(&log)[0].0, "VOICEBOX_TOKEN");
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
        "examples/manifests/two-query-key-parts.yaml",
        &[("NUMBERS_API_KEY", "vk-only")],
        &[("searchNumbers", json!({ "country": "GB" }))],
    )
    .await;
    assert_eq!(r[0].target, "/number/search?country=GB&api_key=vk-only");
    assert!(
        log.iter().any(|l| l.contains("\"warning\"")
            && l.contains(
                "NUMBERS_API_SECRET is not set: calls go out without this part of the credential"
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
        path("examples/manifests/two-query-key-parts.yaml"),
        &recorder.url(),
        state.path(),
    )
    .env("NUMBERS_API_KEY", "vk-1a2b")
    .env("NUMBERS_API_SECRET", "vs/3c+4d=");
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
        instructions.contains("environment (NUMBERS_API_KEY and NUMBERS_API_SECRET)"),
        "{instructions}"
    );
    assert!(!instructions.contains("NUMBERS_TOKEN"), "{instructions}");
    let start: Value = serde_json::from_str(&log[0]).unwrap();
    assert_eq!(
        start["credentialEnv"],
        "NUMBERS_API_KEY and NUMBERS_API_SECRET"
    );
    assert_eq!(
        start["credentialEnvs"],
        json!(["NUMBERS_API_KEY", "NUMBERS_API_SECRET"])
    );
    assert!(!log.join("\n").contains("NUMBERS_TOKEN"), "{log:#?}");
}

/// The round-three case: a manifest over `tests/cases/specs/credentials-per-operation.yaml`.
const PER_OPERATION: &str = "tests/cases/valid/base-credentials-per-operation.yaml";

/// Its document's folder, which `serve` reads only when allowed.
fn per_operation_args() -> [String; 2] {
    [
        "--allow-read".to_string(),
        path("tests/cases/specs").display().to_string(),
    ]
}

const CLIENT_ID: &str = "cli_acme_42a";
const SECRET: &str = "sec_acme_9xq";
const ADMIN_KEY: &str = "adm_acme_7qz";

/// One part of a multipart body: its field name, file name, media type and bytes.
#[derive(Debug, PartialEq, Eq)]
struct FormPart {
    name: String,
    filename: Option<String>,
    content_type: Option<String>,
    bytes: Vec<u8>,
}

/// The parts of a `multipart/form-data` body, as a provider reads them: split at the
/// boundary its `Content-Type` names, each part's headers then its bytes.
fn multipart_parts(request: &Recorded) -> Vec<FormPart> {
    let content_type = request.header("content-type").expect("a Content-Type");
    let boundary = content_type
        .split(';')
        .find_map(|p| p.trim().strip_prefix("boundary="))
        .expect("a boundary")
        .trim_matches('"');
    let delimiter = format!("--{boundary}");
    let body = &request.body;
    let find = |from: usize, needle: &[u8]| {
        body[from..]
            .windows(needle.len())
            .position(|w| w == needle)
            .map(|i| i + from)
    };
    let mut parts = Vec::new();
    let mut at = find(0, delimiter.as_bytes()).expect("a first boundary") + delimiter.len();
    while body[at..].starts_with(b"\r\n") {
        let head_end = find(at, b"\r\n\r\n").expect("a part's headers end");
        let head = String::from_utf8(body[at + 2..head_end].to_vec()).unwrap();
        let next =
            find(head_end, format!("\r\n{delimiter}").as_bytes()).expect("the next boundary");
        let mut part = FormPart {
            name: String::new(),
            filename: None,
            content_type: None,
            bytes: body[head_end + 4..next].to_vec(),
        };
        for line in head.split("\r\n") {
            let (key, value) = line.split_once(':').expect("a header line");
            if key.eq_ignore_ascii_case("content-type") {
                part.content_type = Some(value.trim().to_string());
            } else if key.eq_ignore_ascii_case("content-disposition") {
                for item in value.split(';').map(str::trim) {
                    if let Some(v) = item.strip_prefix("name=") {
                        part.name = v.trim_matches('"').to_string();
                    } else if let Some(v) = item.strip_prefix("filename=") {
                        part.filename = Some(v.trim_matches('"').to_string());
                    }
                }
            }
        }
        parts.push(part);
        at = next + 2 + delimiter.len();
    }
    assert!(body[at..].starts_with(b"--"), "the closing boundary");
    parts
}

/// No served tool's `inputSchema` names `names` anywhere: not as an argument, not in a
/// branch of a union, not in a `$defs` entry, not in a `required` list.
#[track_caller]
fn nowhere_in_schemas(tools: &[Value], names: &[&str]) {
    for tool in tools {
        let text = tool["inputSchema"].to_string().to_ascii_lowercase();
        for name in names {
            let quoted = format!("\"{}\"", name.to_ascii_lowercase());
            assert!(
                !text.contains(&quoted),
                "{}: `{name}` is in its inputSchema: {}",
                tool["name"],
                tool["inputSchema"]
            );
        }
    }
}

/// Issue 31, round three: a credential of two headers whose body fields also carry it
/// arrives whole in every body shape — the top of a JSON body with the fields in an
/// `allOf` branch, the `oneOf` of a body that is one argument, a form body's `anyOf`
/// branch, a multipart body — each part from its own variable; an operation with
/// `security: []` sends no part anywhere, and one that asks for an admin key sends that
/// key alone, from its own variable. No tool offers any part to the model.
#[tokio::test]
async fn every_part_arrives_in_every_body_shape_and_each_operation_sends_its_own_security() {
    let args = per_operation_args();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (r, tools, log) = sent_with(
        PER_OPERATION,
        &args,
        &[
            ("ACMEPAY_CLIENT_ID", CLIENT_ID),
            ("ACMEPAY_SECRET", SECRET),
            ("ACMEPAY_ADMIN_KEY", ADMIN_KEY),
        ],
        &[
            ("createTransfer", json!({ "amount": 500 })),
            (
                "createPayout",
                json!({ "body": { "iban": "DE89370400440532013000" } }),
            ),
            ("createRefund", json!({ "transfer": "tr_1" })),
            ("uploadDocument", json!({ "title": "Proof of address" })),
            ("getStatus", json!({})),
            ("closeAccount", json!({ "id": "acc_1" })),
        ],
    )
    .await;
    // The connection's credential: both headers on every call that needs it, no admin key.
    for request in &r[..4] {
        assert_eq!(
            request.header("acme-client-id"),
            Some(CLIENT_ID),
            "{request:#?}"
        );
        assert_eq!(request.header("acme-secret"), Some(SECRET), "{request:#?}");
        assert_eq!(request.header("x-admin-key"), None, "{request:#?}");
    }
    let json_body = |i: usize| serde_json::from_slice::<Value>(&r[i].body).unwrap();
    assert_eq!(
        json_body(0),
        json!({ "amount": 500, "client_id": CLIENT_ID, "secret": SECRET })
    );
    assert_eq!(
        json_body(1),
        json!({ "iban": "DE89370400440532013000", "client_id": CLIENT_ID, "secret": SECRET })
    );
    assert_eq!(
        r[2].body_text(),
        format!("transfer=tr_1&client_id={CLIENT_ID}&secret={SECRET}")
    );
    let fields: Vec<(String, Vec<u8>)> = multipart_parts(&r[3])
        .into_iter()
        .map(|p| (p.name, p.bytes))
        .collect();
    assert_eq!(
        fields,
        [
            ("title".to_string(), b"Proof of address".to_vec()),
            ("client_id".to_string(), CLIENT_ID.as_bytes().to_vec()),
            ("secret".to_string(), SECRET.as_bytes().to_vec()),
        ]
    );
    // `security: []`: no part of any credential, anywhere in the request.
    let status = &r[4];
    assert_eq!(
        (status.method.as_str(), status.target.as_str()),
        ("GET", "/v1/status")
    );
    let everything = format!("{:?} {}", status.headers, status.body_text());
    for secret in [CLIENT_ID, SECRET, ADMIN_KEY] {
        assert!(!everything.contains(secret), "{status:#?}");
    }
    // The admin operation: its own key, from its own variable, and nothing else.
    let close = &r[5];
    assert_eq!(
        (close.method.as_str(), close.target.as_str()),
        ("DELETE", "/v1/accounts/acc_1")
    );
    assert_eq!(close.header("x-admin-key"), Some(ADMIN_KEY));
    assert_eq!(close.header("acme-client-id"), None);
    assert_eq!(close.header("acme-secret"), None);

    nowhere_in_schemas(
        &tools,
        &[
            "client_id",
            "secret",
            "Acme-Client-Id",
            "Acme-Secret",
            "X-Admin-Key",
        ],
    );
    let names: Vec<String> = variables(&log).into_iter().map(|v| v.0).collect();
    assert_eq!(
        names,
        ["ACMEPAY_CLIENT_ID", "ACMEPAY_SECRET", "ACMEPAY_ADMIN_KEY"]
    );
    assert!(!log.join("\n").contains(SECRET), "{log:#?}");
}

/// Issue 31: an optional upload written as `FastAPI` writes one (`anyOf: [{type: string,
/// format: binary}, {type: "null"}]`) is a file: the tool says base64, and `serve` sends
/// the decoded bytes as a file part with a file name and a media type — not the base64
/// text as a plain field. So is `type: [string, "null"]` with a `contentMediaType`, whose
/// media type the part carries.
#[tokio::test]
async fn an_optional_upload_in_any_of_with_null_is_sent_as_a_file_part() {
    use base64::Engine as _;
    let pdf: &[u8] = b"%PDF-1.7\n\x00\xff\xfe binary \r\n--not-a-boundary\r\n";
    let png: &[u8] = b"\x89PNG\r\n\x1a\n\x00\x00";
    let encode = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
    let args = per_operation_args();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (r, tools, _) = sent_with(
        PER_OPERATION,
        &args,
        &[("ACMEPAY_CLIENT_ID", CLIENT_ID), ("ACMEPAY_SECRET", SECRET)],
        &[(
            "uploadDocument",
            json!({ "title": "Scan", "file": encode(pdf), "scan": encode(png) }),
        )],
    )
    .await;
    let tool = tools
        .iter()
        .find(|t| t["name"] == "uploadDocument")
        .unwrap();
    assert_eq!(
        tool["inputSchema"]["properties"]["file"]["anyOf"][0]["contentEncoding"], "base64",
        "{}",
        tool["inputSchema"]
    );
    let parts = multipart_parts(&r[0]);
    let file = parts
        .iter()
        .find(|p| p.name == "file")
        .expect("a file part");
    assert_eq!(
        (
            file.filename.as_deref(),
            file.content_type.as_deref(),
            file.bytes.as_slice()
        ),
        (Some("file"), Some("application/octet-stream"), pdf)
    );
    let scan = parts
        .iter()
        .find(|p| p.name == "scan")
        .expect("a scan part");
    assert_eq!(
        (
            scan.filename.as_deref(),
            scan.content_type.as_deref(),
            scan.bytes.as_slice()
        ),
        (Some("scan"), Some("image/png"), png)
    );
    let title = parts.iter().find(|p| p.name == "title").unwrap();
    assert_eq!(
        (title.filename.as_deref(), title.bytes.as_slice()),
        (None, &b"Scan"[..])
    );
}

/// A one-part connection credential (a bearer token) beside an operation whose own
/// `security` asks for an admin key, listed first: the bearer operation reads its own
/// variable (`KEYED_TOKEN`), not the first credential variable of the tool list (the
/// admin key, which it sent before); the admin operation sends the key alone; an
/// operation whose credential is optional (`[{}, …]`) sends none.
#[tokio::test]
async fn a_bearer_operation_reads_its_own_variable_beside_an_admin_key_listed_first() {
    let (token, admin) = ("kt_bearer_51c", "ka_admin_83d");
    let args = per_operation_args();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (r, tools, log) = sent_with(
        "tests/cases/valid/base-admin-key.yaml",
        &args,
        &[("KEYED_TOKEN", token), ("KEYED_ADMIN_KEY_SECRET", admin)],
        &[
            ("deleteRecord", json!({ "id": "rec_1" })),
            ("listRecords", json!({})),
            ("getPublic", json!({})),
        ],
    )
    .await;
    assert_eq!(r[0].header("x-admin-key"), Some(admin), "{:#?}", r[0]);
    assert_eq!(r[0].header("authorization"), None, "{:#?}", r[0]);
    assert_eq!(
        r[1].header("authorization"),
        Some(format!("Bearer {token}").as_str()),
        "{:#?}",
        r[1]
    );
    assert_eq!(r[1].header("x-admin-key"), None, "{:#?}", r[1]);
    let public = format!("{:?}", r[2].headers);
    assert!(
        !public.contains(token) && !public.contains(admin),
        "{public}"
    );
    nowhere_in_schemas(&tools, &["X-Admin-Key", "Authorization"]);
    let names: Vec<String> = variables(&log).into_iter().map(|v| v.0).collect();
    assert_eq!(names, ["KEYED_ADMIN_KEY_SECRET", "KEYED_TOKEN"]);
}

/// An inline manifest's operation whose `openapi:` fragment says `security: []` sends no
/// credential; its neighbour sends the connection's.
#[tokio::test]
async fn an_inline_fragment_with_empty_security_sends_no_credential() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = dir.path().join("connector.yaml");
    std::fs::write(
        &manifest,
        r"version: 1
service:
  name: Notes
  version: 1.0.0
  description: Reads the person's notes.
  publicUrl: https://api.notes.example
  dashboardUrl: https://notes.example/keys
targets: [mcp]
operations:
  - id: listNotes
    method: get
    path: /v1/notes
    summary: List the person's notes
    description: Read-only. Changes nothing.
  - id: getHealth
    method: get
    path: /v1/health
    summary: Get the service health
    description: Read-only. Changes nothing.
    openapi: { security: [] }
",
    )
    .unwrap();
    let token = "nt_token_4f2a";
    let (r, _, _) = sent(
        manifest.to_str().unwrap(),
        &[("NOTES_TOKEN", token)],
        &[("listNotes", json!({})), ("getHealth", json!({}))],
    )
    .await;
    assert_eq!(
        r[0].header("authorization"),
        Some(format!("Bearer {token}").as_str())
    );
    assert_eq!(r[1].target, "/v1/health");
    assert_eq!(r[1].header("authorization"), None, "{:#?}", r[1]);
}
