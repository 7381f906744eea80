use super::*;
use connectorgen_core::render::mcp::mapping::{Body, Credential as Scheme, IdempotencyMapping};
use serde_json::json;

fn arg(argument: &str, location: Location, name: Option<&str>) -> Argument {
    Argument {
        argument: argument.into(),
        location,
        name: name.map(str::to_string),
        style: None,
        explode: None,
        allow_reserved: false,
        content_type: None,
        encoding: None,
        required: false,
    }
}

fn styled(mut a: Argument, style: &str, explode: bool) -> Argument {
    a.style = Some(style.into());
    a.explode = Some(explode);
    a
}

fn mapping(
    method: &str,
    path: &str,
    arguments: Vec<Argument>,
    body: Option<&str>,
) -> RequestMapping {
    serde_json::from_value(json!({
        "method": method,
        "path": path,
        "servers": [{"url": "https://{region}.api.example/", "variables": {"region": "eu"}}],
        "arguments": [],
        "credential": {"scheme": "none"}
    }))
    .map(|mut m: RequestMapping| {
        m.arguments = arguments;
        m.body = body.map(|media| Body {
            media_type: media.into(),
            required: false,
        });
        m
    })
    .unwrap()
}

fn no_env(_: &str) -> Option<String> {
    None
}

fn target() -> Target<'static> {
    Target {
        base_url: None,
        credential: None,
        retry_key: None,
        env: &no_env,
        schema: None,
    }
}

fn args(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap()
}

#[test]
fn path_values_cannot_change_the_path_or_host() {
    let m = mapping(
        "GET",
        "/v1/videos/{id}",
        vec![styled(
            arg("id", Location::Path, Some("id")),
            "simple",
            false,
        )],
        None,
    );
    let r = build(
        &m,
        &args(json!({"id": "../../admin?x=1#@evil.example/"})),
        &target(),
    )
    .unwrap();
    assert_eq!(
        r.url,
        "https://eu.api.example/v1/videos/..%2F..%2Fadmin%3Fx%3D1%23%40evil.example%2F"
    );
    assert_eq!(r.method, http::Method::GET);
    assert!(r.body.is_none());
}

#[test]
fn query_styles_follow_openapi() {
    let m = mapping(
        "GET",
        "/v1/x",
        vec![
            styled(arg("ids", Location::Query, Some("ids")), "form", false),
            styled(arg("tags", Location::Query, Some("tag")), "form", true),
            styled(
                arg("created", Location::Query, Some("created")),
                "deepObject",
                true,
            ),
            styled(
                arg("expand", Location::Query, Some("expand")),
                "deepObject",
                true,
            ),
            styled(
                arg("DateSent_lt", Location::Query, Some("DateSent<")),
                "form",
                true,
            ),
            styled(
                arg("words", Location::Query, Some("words")),
                "spaceDelimited",
                false,
            ),
            styled(
                arg("pipes", Location::Query, Some("pipes")),
                "pipeDelimited",
                false,
            ),
            styled(arg("q", Location::Query, Some("q")), "form", true),
        ],
        None,
    );
    let call = json!({
        "ids": [1, 2, 3],
        "tags": ["a b", "c&d"],
        "created": {"gte": 10, "lt": 20},
        "expand": ["data.customer"],
        "DateSent_lt": "2024-01-01",
        "words": ["x", "y"],
        "pipes": ["x", "y"],
        "q": "100% = sure"
    });
    let r = build(&m, &args(call), &target()).unwrap();
    assert_eq!(
        r.url,
        "https://eu.api.example/v1/x?ids=1,2,3&tag=a%20b&tag=c%26d\
         &created%5Bgte%5D=10&created%5Blt%5D=20&expand%5B0%5D=data.customer\
         &DateSent%3C=2024-01-01&words=x%20y&pipes=x%7Cy&q=100%25%20%3D%20sure"
    );
}

#[test]
fn arguments_the_mapping_does_not_list_are_not_sent_and_nulls_are_left_out() {
    let m = mapping(
        "GET",
        "/v1/x",
        vec![arg("limit", Location::Query, Some("limit"))],
        None,
    );
    let r = build(
        &m,
        &args(json!({"limit": null, "smuggled": "1", "Authorization": "x"})),
        &target(),
    )
    .unwrap();
    assert_eq!(r.url, "https://eu.api.example/v1/x");
    assert!(r.headers.is_empty());
}

#[test]
fn a_required_argument_must_be_there() {
    let mut id = arg("id", Location::Path, Some("id"));
    id.required = true;
    let m = mapping("GET", "/v1/x/{id}", vec![id], None);
    assert_eq!(
        build(&m, &args(json!({})), &target()),
        Err(RequestError::Missing("id".into()))
    );
}

#[test]
fn headers_refuse_line_breaks_and_cookies_are_joined() {
    let m = mapping(
        "GET",
        "/v1/x",
        vec![
            arg("trace", Location::Header, Some("X-Trace")),
            arg("session", Location::Cookie, Some("sid")),
        ],
        None,
    );
    let bad = build(&m, &args(json!({"trace": "a\r\nX-Evil: 1"})), &target());
    assert_eq!(bad, Err(RequestError::HeaderBreak("trace".into())));
    let r = build(
        &m,
        &args(json!({"trace": ["a", "b"], "session": "s 1"})),
        &target(),
    )
    .unwrap();
    assert_eq!(
        r.headers,
        vec![
            ("X-Trace".to_string(), "a,b".to_string()),
            ("Cookie".to_string(), "sid=s%201".to_string())
        ]
    );
}

#[test]
fn json_bodies_gather_their_properties_and_the_server_sets_the_retry_key() {
    let mut m = mapping(
        "POST",
        "/v1/videos",
        vec![
            arg("prompt", Location::Body, Some("prompt")),
            arg("aspectRatio", Location::Body, Some("aspectRatio")),
            styled(
                arg("idempotencyKey", Location::Header, Some("Idempotency-Key")),
                "simple",
                false,
            ),
        ],
        Some("application/json"),
    );
    m.idempotency = Some(IdempotencyMapping {
        argument: "idempotencyKey".into(),
        location: Location::Header,
        name: "Idempotency-Key".into(),
        required: false,
    });
    let t = Target {
        base_url: Some("http://127.0.0.1:9/"),
        retry_key: Some("server-key"),
        ..target()
    };
    let r = build(
        &m,
        &args(json!({"prompt": "a cat", "idempotencyKey": "model-key"})),
        &t,
    )
    .unwrap();
    assert_eq!(r.url, "http://127.0.0.1:9/v1/videos");
    assert_eq!(r.body.as_deref(), Some(br#"{"prompt":"a cat"}"#.as_slice()));
    assert_eq!(
        r.headers,
        vec![
            ("Idempotency-Key".to_string(), "server-key".to_string()),
            ("Content-Type".to_string(), "application/json".to_string())
        ]
    );
}

#[test]
fn form_bodies_use_brackets_for_nested_values() {
    let m = mapping(
        "POST",
        "/v1/payment_intents",
        vec![
            arg("amount", Location::Body, Some("amount")),
            arg("metadata", Location::Body, Some("metadata")),
            arg("expand", Location::Body, Some("expand")),
        ],
        Some("application/x-www-form-urlencoded"),
    );
    let r = build(
        &m,
        &args(json!({"amount": 500, "metadata": {"order": "a&b"}, "expand": ["x", "y"]})),
        &target(),
    )
    .unwrap();
    assert_eq!(
        String::from_utf8(r.body.unwrap()).unwrap(),
        "amount=500&metadata%5Border%5D=a%26b&expand%5B0%5D=x&expand%5B1%5D=y"
    );
}

/// A form field with its `encoding` (or OpenAPI's default, which the mapping fills in)
/// is written as a query parameter with that serialisation would be: a list exploded to
/// repeated keys by default, joined with commas unexploded, an object's fields as
/// their own keys under `form`, in brackets under `deepObject`; a field with a
/// `contentType` (and no style) as JSON text.
#[test]
fn form_fields_follow_their_encoding() {
    let styled = |argument: &str, style: &str, explode: bool| Argument {
        style: Some(style.into()),
        explode: Some(explode),
        ..arg(argument, Location::Body, Some(argument))
    };
    let m = mapping(
        "POST",
        "/v1/messages",
        vec![
            styled("MediaUrl", "form", true),
            styled("Tags", "form", false),
            styled("Where", "form", true),
            styled("metadata", "deepObject", true),
            styled("Words", "pipeDelimited", false),
            Argument {
                content_type: Some("application/json".into()),
                ..arg("meta", Location::Body, Some("meta"))
            },
        ],
        Some("application/x-www-form-urlencoded"),
    );
    let r = build(
        &m,
        &args(json!({
            "MediaUrl": ["https://a.example/1.png", "https://a.example/2.png"],
            "Tags": ["a", "b&c"],
            "Where": {"city": "Paris"},
            "metadata": {"order": "7"},
            "Words": ["x", "y"],
            "meta": {"a": 1},
        })),
        &target(),
    )
    .unwrap();
    assert_eq!(
        String::from_utf8(r.body.unwrap()).unwrap(),
        "MediaUrl=https%3A%2F%2Fa.example%2F1.png&MediaUrl=https%3A%2F%2Fa.example%2F2.png\
         &Tags=a,b%26c&city=Paris&metadata%5Border%5D=7&Words=x%7Cy&meta=%7B%22a%22%3A1%7D"
    );
}

#[test]
fn binary_bodies_are_decoded_and_multipart_parts_carry_files() {
    let mut audio = arg("body", Location::Body, None);
    audio.encoding = Some(Encoding::Base64);
    let m = mapping(
        "POST",
        "/v2/upload",
        vec![audio],
        Some("application/octet-stream"),
    );
    let r = build(&m, &args(json!({"body": "AAEC/w=="})), &target()).unwrap();
    assert_eq!(r.body.as_deref(), Some([0u8, 1, 2, 255].as_slice()));
    assert!(build(&m, &args(json!({"body": "not base64!"})), &target()).is_err());

    let mut file = arg("file", Location::Body, Some("file"));
    file.encoding = Some(Encoding::Base64);
    let m = mapping(
        "POST",
        "/v1/files",
        vec![file, arg("purpose", Location::Body, Some("purpose"))],
        Some("multipart/form-data"),
    );
    let r = build(
        &m,
        &args(json!({"file": "aGk=", "purpose": "batch"})),
        &target(),
    )
    .unwrap();
    let content_type = &r
        .headers
        .iter()
        .find(|(n, _)| n == "Content-Type")
        .unwrap()
        .1;
    let boundary = content_type.split("boundary=").nth(1).unwrap();
    let body = String::from_utf8(r.body.unwrap()).unwrap();
    assert_eq!(
        body,
        format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"file\"\r\n\
             Content-Type: application/octet-stream\r\n\r\nhi\r\n\
             --{boundary}\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\nbatch\r\n\
             --{boundary}--\r\n"
        )
    );
}

#[test]
fn path_styles_label_and_matrix() {
    let m = mapping(
        "GET",
        "/a/{l}/b/{m}",
        vec![
            styled(arg("l", Location::Path, Some("l")), "label", false),
            styled(arg("m", Location::Path, Some("m")), "matrix", true),
        ],
        None,
    );
    let r = build(
        &m,
        &args(json!({"l": ["x", "y"], "m": ["1", "2"]})),
        &target(),
    )
    .unwrap();
    assert_eq!(r.url, "https://eu.api.example/a/.x,y/b/;m=1;m=2");
}

#[test]
fn fixed_inputs_come_from_the_environment_only() {
    let mut m = mapping("GET", "/Accounts/{AccountSid}/Messages", vec![], None);
    m.fixed = vec![FixedInput {
        location: Location::Path,
        name: "AccountSid".into(),
        style: Some("simple".into()),
        explode: Some(false),
        env: Some("ACCOUNT_SID".into()),
        value: None,
    }];
    assert_eq!(
        build(&m, &args(json!({"AccountSid": "AC_model"})), &target()),
        Err(RequestError::FixedUnset("ACCOUNT_SID".into()))
    );
    let env = |name: &str| (name == "ACCOUNT_SID").then(|| "AC1".to_string());
    let t = Target {
        env: &env,
        ..target()
    };
    let r = build(&m, &args(json!({"AccountSid": "AC_model"})), &t).unwrap();
    assert_eq!(r.url, "https://eu.api.example/Accounts/AC1/Messages");
}

#[test]
fn the_credential_goes_where_the_auth_says() {
    let scheme = Scheme::ApiKey {
        location: Location::Query,
        name: "api_key".into(),
    };
    let credential = Credential::new(&scheme, "s3cr&t").unwrap();
    let m = mapping("GET", "/v1/x", vec![], None);
    let t = Target {
        credential: Some(&credential),
        ..target()
    };
    let r = build(&m, &args(json!({})), &t).unwrap();
    assert_eq!(r.url, "https://eu.api.example/v1/x?api_key=s3cr%26t");
}

/// The whole road on a real example: manifest → mcp-tools.json → mapping → request.
#[test]
fn the_video_example_builds_from_its_own_tools_file() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/manifests/video.yaml"
    ))
    .unwrap();
    let options = connectorgen_core::Options {
        targets: Some(vec![connectorgen_core::model::Target::Mcp]),
        manifest_dir: Some(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/manifests").into()),
        allow_read: vec![concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/specs").into()],
        ..Default::default()
    };
    let analysis =
        connectorgen_core::analyze_with("video.yaml", std::sync::Arc::new(text), &options).unwrap();
    let outputs = analysis.outputs.unwrap();
    let tools_text = outputs
        .iter()
        .find(|(path, _)| path.ends_with("mcp-tools.json"))
        .map(|(_, text)| text.clone())
        .unwrap();
    let tools = connectorgen_core::render::mcp::mapping::read_tools(&tools_text).unwrap();
    let (_, create) = tools
        .iter()
        .find(|(t, _)| t["name"] == "createVideo")
        .unwrap();
    let t = Target {
        base_url: Some("http://127.0.0.1:8787"),
        retry_key: Some("k1"),
        ..target()
    };
    let r = build(
        create,
        &args(json!({"prompt": "a cat", "aspectRatio": "1:1"})),
        &t,
    )
    .unwrap();
    assert_eq!(r.method, http::Method::POST);
    assert_eq!(r.url, "http://127.0.0.1:8787/v1/videos");
    assert_eq!(
        r.body.as_deref(),
        Some(br#"{"prompt":"a cat","aspectRatio":"1:1"}"#.as_slice())
    );
    assert!(r.headers.contains(&("Idempotency-Key".into(), "k1".into())));
}

/// Each tool of a bundled example, read back from the `mcp-tools.json` it builds.
fn example_tools(name: &str) -> Vec<(Value, RequestMapping)> {
    let path = format!(
        "{}/../../examples/manifests/{name}.yaml",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap();
    let options = connectorgen_core::Options {
        targets: Some(vec![connectorgen_core::model::Target::Mcp]),
        manifest_dir: Some(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/manifests").into()),
        allow_read: vec![concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/specs").into()],
        ..Default::default()
    };
    let analysis =
        connectorgen_core::analyze_with(&path, std::sync::Arc::new(text), &options).unwrap();
    assert!(!analysis.has_errors(), "{name}: {:?}", analysis.diagnostics);
    let tools_text = analysis
        .outputs
        .unwrap()
        .iter()
        .find(|(p, _)| p.ends_with("mcp-tools.json"))
        .map(|(_, t)| t.clone())
        .unwrap();
    connectorgen_core::render::mcp::mapping::read_tools(&tools_text).unwrap()
}

fn mapping_of<'a>(tools: &'a [(Value, RequestMapping)], tool: &str) -> &'a RequestMapping {
    &tools.iter().find(|(t, _)| t["name"] == tool).unwrap().1
}

const LOCAL: &str = "http://127.0.0.1:8787";

fn local(credential: Option<&Credential>) -> Target<'_> {
    Target {
        base_url: Some(LOCAL),
        credential,
        retry_key: Some("key-1"),
        env: &no_env,
        schema: None,
    }
}

fn header<'a>(r: &'a HttpRequest, name: &str) -> Option<&'a str> {
    r.headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

#[test]
fn form_encoded_payments_query_deep_objects_and_form_bodies() {
    let tools = example_tools("form-encoded-payments");
    let r = build(
        mapping_of(&tools, "listCustomers"),
        &args(
            json!({"created": {"gte": 1_700_000_000}, "expand": ["data.default_source"], "limit": 3}),
        ),
        &local(None),
    )
    .unwrap();
    assert_eq!(
        r.url,
        format!(
            "{LOCAL}/v1/customers?created%5Bgte%5D=1700000000&expand%5B0%5D=data.default_source&limit=3"
        )
    );
    assert!(
        r.body.is_none(),
        "The GETs declare an empty form body: none is sent"
    );

    let r = build(
        mapping_of(&tools, "createPaymentIntent"),
        &args(json!({"amount": 2000, "currency": "usd", "metadata": {"order_id": "6735"}})),
        &local(None),
    )
    .unwrap();
    assert_eq!(r.method, http::Method::POST);
    assert_eq!(
        header(&r, "Content-Type"),
        Some("application/x-www-form-urlencoded")
    );
    assert_eq!(
        String::from_utf8(r.body.unwrap()).unwrap(),
        "amount=2000&currency=usd&metadata%5Border_id%5D=6735"
    );
}

#[test]
fn async_transcription_job_binary_upload_and_an_unexploded_list() {
    let tools = example_tools("async-transcription-job");
    let scheme = mapping_of(&tools, "uploadAudio").credential.clone();
    let credential = Credential::new(&scheme, "aai-key").unwrap();
    let r = build(
        mapping_of(&tools, "uploadAudio"),
        &args(json!({"body": "UklGRg=="})),
        &local(Some(&credential)),
    )
    .unwrap();
    assert_eq!(r.url, format!("{LOCAL}/v2/upload"));
    assert_eq!(r.body.as_deref(), Some(b"RIFF".as_slice()));
    assert_eq!(header(&r, "Content-Type"), Some("application/octet-stream"));
    assert_eq!(header(&r, "Authorization"), Some("aai-key"));

    let r = build(
        mapping_of(&tools, "wordSearch"),
        &args(json!({"transcript_id": "t/1", "words": ["hello", "big world"]})),
        &local(None),
    )
    .unwrap();
    assert_eq!(
        r.url,
        format!("{LOCAL}/v2/transcript/t%2F1/word-search?words=hello,big%20world")
    );
}

#[test]
fn multipart_upload_batches_file_upload() {
    let tools = example_tools("multipart-upload-batches");
    let r = build(
        mapping_of(&tools, "createFile"),
        &args(json!({"file": "eyJhIjoxfQ==", "purpose": "batch"})),
        &local(None),
    )
    .unwrap();
    let content_type = header(&r, "Content-Type").unwrap().to_string();
    assert!(content_type.starts_with("multipart/form-data; boundary="));
    let boundary = content_type.split("boundary=").nth(1).unwrap();
    let body = String::from_utf8(r.body.unwrap()).unwrap();
    assert!(body.contains(&format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"file\"\r\n"
    )));
    assert!(body.contains("\r\n\r\n{\"a\":1}\r\n"), "{body}");
    assert!(body.contains("name=\"purpose\"\r\n\r\nbatch\r\n"), "{body}");
    assert!(body.ends_with(&format!("--{boundary}--\r\n")));
}

#[test]
fn unsafe_parameter_names_renamed_arguments_fixed_account_and_basic_auth() {
    let tools = example_tools("unsafe-parameter-names");
    let list = mapping_of(&tools, "listMessages");
    let env = |name: &str| (name == "TEXTING_ACCOUNT_SID").then(|| "AC123".to_string());
    let credential = Credential::new(&list.credential, "AC123:secret").unwrap();
    let t = Target {
        env: &env,
        ..local(Some(&credential))
    };
    let r = build(
        list,
        &args(json!({"sentBefore": "2024-01-02", "To": "+15551234567"})),
        &t,
    )
    .unwrap();
    assert_eq!(
        r.url,
        format!(
            "{LOCAL}/2010-04-01/Accounts/AC123/Messages.json?To=%2B15551234567&DateSent%3C=2024-01-02"
        )
    );
    assert_eq!(header(&r, "Authorization"), Some("Basic QUMxMjM6c2VjcmV0"));
}

#[test]
fn inline_examples_send_the_servers_retry_key() {
    for (example, tool, call, path) in [
        (
            "printshop",
            "placeOrder",
            json!({"quoteId": "q_1"}),
            "/v1/orders",
        ),
        (
            "payments",
            "createRefund",
            json!({"payment_intent": "pi_1"}),
            "/v1/refunds",
        ),
        (
            "printshop",
            "cancelOrder",
            json!({"orderId": "o 1"}),
            "/v1/orders/o%201",
        ),
    ] {
        let tools = example_tools(example);
        let r = build(mapping_of(&tools, tool), &args(call), &local(None)).unwrap();
        assert_eq!(r.url, format!("{LOCAL}{path}"), "{example} {tool}");
        assert_eq!(
            header(&r, "Idempotency-Key"),
            Some("key-1"),
            "{example} {tool}"
        );
    }
}

#[test]
fn a_retry_key_in_the_body_or_the_query_is_the_servers_too() {
    for (location, name, expect_url, expect_body) in [
        (
            Location::Body,
            "idempotency_key",
            "https://eu.api.example/v1/x",
            r#"{"amount":1,"idempotency_key":"server-key"}"#,
        ),
        (
            Location::Query,
            "request_id",
            "https://eu.api.example/v1/x?request_id=server-key",
            r#"{"amount":1}"#,
        ),
    ] {
        let mut m = mapping(
            "POST",
            "/v1/x",
            vec![
                arg("amount", Location::Body, Some("amount")),
                arg("key", location, Some(name)),
            ],
            Some("application/json"),
        );
        m.idempotency = Some(IdempotencyMapping {
            argument: "key".into(),
            location,
            name: name.into(),
            required: true,
        });
        let t = Target {
            retry_key: Some("server-key"),
            ..target()
        };
        let r = build(&m, &args(json!({"amount": 1, "key": "model-key"})), &t).unwrap();
        assert_eq!(r.url, expect_url);
        assert_eq!(r.body.as_deref(), Some(expect_body.as_bytes()));
    }
}

#[test]
fn base_url_replaces_the_servers_path_too() {
    // docs/serve.md promises this: `--base-url` is the whole prefix, not only the origin,
    // so a local copy of the provider mounted at `/` receives `/v1/videos`, not `/v2/v1/videos`.
    let mut m = mapping("GET", "/v1/videos", vec![], None);
    m.servers[0].url = "https://api.example/v2".into();
    m.servers[0].variables.clear();
    let without = build(&m, &args(json!({})), &target()).unwrap();
    assert_eq!(without.url, "https://api.example/v2/v1/videos");
    let t = Target {
        base_url: Some("http://127.0.0.1:9"),
        ..target()
    };
    let with = build(&m, &args(json!({})), &t).unwrap();
    assert_eq!(with.url, "http://127.0.0.1:9/v1/videos");
    let t = Target {
        base_url: Some("http://127.0.0.1:9/sandbox/"),
        ..target()
    };
    let with = build(&m, &args(json!({})), &t).unwrap();
    assert_eq!(with.url, "http://127.0.0.1:9/sandbox/v1/videos");
}

fn schema(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap()
}

#[test]
fn path_values_that_are_dot_segments_or_empty_are_refused() {
    let m = mapping(
        "GET",
        "/v1/videos/{id}/frames",
        vec![styled(
            arg("id", Location::Path, Some("id")),
            "simple",
            false,
        )],
        None,
    );
    for id in ["..", ".", ""] {
        assert_eq!(
            build(&m, &args(json!({ "id": id })), &target()),
            Err(RequestError::DotSegment("id".into())),
            "{id:?}"
        );
    }
    // A label-style value of "" or "." would be the segment `.` or `..` too.
    let m = mapping(
        "GET",
        "/v1/{id}",
        vec![styled(
            arg("id", Location::Path, Some("id")),
            "label",
            false,
        )],
        None,
    );
    for id in ["", "."] {
        assert_eq!(
            build(&m, &args(json!({ "id": id })), &target()),
            Err(RequestError::DotSegment("id".into())),
            "{id:?}"
        );
    }
    let r = build(&m, &args(json!({ "id": ".." })), &target()).unwrap();
    assert_eq!(r.url, "https://eu.api.example/v1/...");
}

#[test]
fn an_exploded_object_query_carries_only_named_properties_and_no_reserved_name() {
    let mut m = mapping(
        "GET",
        "/v1/x",
        vec![
            styled(arg("filter", Location::Query, Some("filter")), "form", true),
            styled(arg("limit", Location::Query, Some("limit")), "form", true),
        ],
        None,
    );
    m.idempotency = Some(IdempotencyMapping {
        argument: "requestId".into(),
        location: Location::Query,
        name: "request_id".into(),
        required: false,
    });
    let served = schema(json!({
        "type": "object",
        "properties": {
            "filter": { "$ref": "#/$defs/Filter" },
            "limit": { "type": "integer" }
        },
        "$defs": { "Filter": { "type": "object", "properties": { "status": {}, "request_id": {} } } }
    }));
    let scheme = Scheme::ApiKey {
        location: Location::Query,
        name: "api_key".into(),
    };
    let credential = Credential::new(&scheme, "s3cret").unwrap();
    let t = Target {
        credential: Some(&credential),
        schema: Some(&served),
        ..target()
    };
    let r = build(&m, &args(json!({ "filter": { "status": "paid" } })), &t).unwrap();
    assert_eq!(
        r.url,
        "https://eu.api.example/v1/x?status=paid&api_key=s3cret"
    );
    for key in ["request_id", "REQUEST_ID", "api_key", "limit"] {
        let got = build(&m, &args(json!({ "filter": { key: "x" } })), &t);
        assert!(
            matches!(&got, Err(RequestError::Query { name, why, .. }) if name == key && why.contains("sends itself")),
            "{key}: {got:?}"
        );
    }
    let got = build(&m, &args(json!({ "filter": { "access_token": "x" } })), &t);
    assert!(
        matches!(&got, Err(RequestError::Query { why, .. }) if why.contains("not a property")),
        "{got:?}"
    );
    // Without a schema (nothing to say which names it has) the reserved names still hold.
    let t = Target {
        credential: Some(&credential),
        ..target()
    };
    assert!(build(&m, &args(json!({ "filter": { "api_key": "x" } })), &t).is_err());
}

#[test]
fn arguments_are_checked_against_the_schema_and_the_mapping() {
    let m = mapping(
        "POST",
        "/v1/charges",
        vec![
            arg("note", Location::Body, Some("note")),
            arg("amount", Location::Body, Some("amount")),
        ],
        Some("application/json"),
    );
    let served = schema(json!({
        "type": "object",
        "properties": { "note": { "type": "string", "minLength": 1 } },
        "oneOf": [{ "properties": { "amount": { "type": "integer" } }, "required": ["amount"] }]
    }));
    let t = Target {
        schema: Some(&served),
        ..target()
    };
    let r = build(&m, &args(json!({ "amount": 500 })), &t).unwrap();
    assert_eq!(r.body.as_deref(), Some(br#"{"amount":500}"#.as_slice()));
    let unknown = build(&m, &args(json!({ "amonut": 500 })), &t);
    assert_eq!(
        unknown,
        Err(RequestError::Unknown {
            argument: "amonut".into(),
            hint: "did you mean `amount`?".into()
        })
    );
    let wrong = build(&m, &args(json!({ "amount": "500", "note": "" })), &t);
    let Err(RequestError::Invalid(text)) = wrong else {
        panic!("{wrong:?}")
    };
    assert!(text.contains("`note`:"), "{text}");
    assert!(text.contains("alternative 1: `amount`:"), "{text}");
    // A `$ref` outside the schema is never fetched: the call is not sent.
    let remote = schema(json!({ "$ref": "https://schemas.example/x.json" }));
    let t = Target {
        schema: Some(&remote),
        ..target()
    };
    assert!(matches!(
        build(&m, &args(json!({ "amount": 1 })), &t),
        Err(RequestError::Schema(_))
    ));
}

#[test]
fn a_whole_body_cannot_shadow_a_field_the_connection_fills_in() {
    let mut m = mapping(
        "POST",
        "/v1/x",
        vec![arg("body", Location::Body, None)],
        Some("application/json"),
    );
    m.fixed = vec![FixedInput {
        location: Location::Body,
        name: "account".into(),
        style: None,
        explode: None,
        env: None,
        value: Some("acct_1".into()),
    }];
    // (A credential body field is one of the same list: `filled_fields`.)
    let r = build(
        &m,
        &args(json!({ "body": { "x": 1, "account": "acct_model" } })),
        &target(),
    )
    .unwrap();
    assert_eq!(
        r.body.as_deref(),
        Some(br#"{"x":1,"account":"acct_1"}"#.as_slice())
    );
}

#[test]
fn a_closed_all_of_is_read_as_closing_the_union_not_each_branch() {
    // AssemblyAI's `TranscriptParams`: each branch says `additionalProperties: false`,
    // which taken literally refuses every call.
    let m = mapping(
        "POST",
        "/v2/transcript",
        vec![arg("body", Location::Body, None)],
        Some("application/json"),
    );
    let served = schema(json!({
        "type": "object",
        "properties": { "body": { "$ref": "#/$defs/Params" } },
        "$defs": {
            "Params": { "type": "object", "additionalProperties": false, "allOf": [
                { "type": "object", "required": ["audio_url"], "additionalProperties": false,
                  "properties": { "audio_url": { "type": "string" } } },
                { "$ref": "#/$defs/Optional" }
            ] },
            "Optional": { "type": "object", "additionalProperties": false,
                          "properties": { "speaker_labels": { "type": "boolean" } } }
        }
    }));
    let t = Target {
        schema: Some(&served),
        ..target()
    };
    let ok = json!({ "body": { "audio_url": "u", "speaker_labels": true } });
    assert!(build(&m, &args(ok), &t).is_ok());
    // Still closed: a property no branch names is refused.
    let extra = json!({ "body": { "audio_url": "u", "speakr_labels": true } });
    assert!(matches!(
        build(&m, &args(extra), &t),
        Err(RequestError::Invalid(text)) if text.contains("speakr_labels")
    ));
}

/// Issue 30, null-as-absent: which `null`s are an argument left out.
#[test]
fn nulls_the_schema_does_not_allow_are_absent_and_allowed_ones_are_kept() {
    let schema = json!({
        "type": "object",
        "properties": {
            "id": { "type": "string" },
            "cursor": { "type": ["string", "null"] },
            "note": { "$ref": "#/$defs/note" },
            "tags": { "anyOf": [{ "type": "array" }, { "type": "null" }] }
        },
        "required": ["id"],
        "oneOf": [{ "$ref": "#/$defs/byAmount" }, { "properties": { "credits": { "type": "integer" } } }],
        "$defs": {
            "note": { "type": "string" },
            "byAmount": { "properties": { "amount": { "type": "integer" } } }
        }
    });
    let schema = schema.as_object().unwrap();
    let mut args = json!({
        "id": "x", "cursor": null, "note": null, "tags": null, "amount": null,
        "credits": null, "other": null
    })
    .as_object()
    .unwrap()
    .clone();
    absent_nulls(schema, &mut args).unwrap();
    // Allowed nulls stay; an undeclared one is left for the unknown-argument check.
    assert_eq!(
        Value::Object(args),
        json!({ "id": "x", "cursor": null, "tags": null, "other": null })
    );
    let mut args = json!({ "id": null }).as_object().unwrap().clone();
    let e = absent_nulls(schema, &mut args).unwrap_err().to_string();
    assert!(e.contains("`id` is required and may not be null"), "{e}");
}

/// `mcp.omit` (tests/cases/valid/mcp-omit.yaml): what the tool leaves out is refused
/// like an unknown argument when a client sends it anyway — a top-level argument (not in
/// the mapping), a property of a shared definition (`billing_details.address.line2`,
/// also where the definition is used again: `shipping_address.line2`), a field of an
/// array's items, one only an `allOf` branch declares — while the call without them
/// passes. Without `omitted` in the mapping, the nested ones reached the provider.
#[test]
fn omitted_inputs_are_refused_like_unknown_arguments() {
    let path = format!(
        "{}/../../tests/cases/valid/mcp-omit.yaml",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap();
    let options = connectorgen_core::Options {
        targets: Some(vec![connectorgen_core::model::Target::Mcp]),
        manifest_dir: Some(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/cases/valid").into()),
        ..Default::default()
    };
    let analysis =
        connectorgen_core::analyze_with(&path, std::sync::Arc::new(text), &options).unwrap();
    let tools_text = analysis
        .outputs
        .unwrap()
        .iter()
        .find(|(p, _)| p.ends_with("mcp-tools.json"))
        .map(|(_, t)| t.clone())
        .unwrap();
    let tools = connectorgen_core::render::mcp::mapping::read_tools(&tools_text).unwrap();
    let (tool, mapping) = &tools[0];
    let schema = tool["inputSchema"].as_object().unwrap();
    let call = |extra: Value| {
        let mut args = json!({
            "amount": 500,
            "card": "tok_1",
            "billing_details": {"name": "Ada", "address": {"line1": "1 Main St", "country": "GB"}},
            "lines": [{"amount": 500}]
        });
        for (k, v) in extra.as_object().unwrap() {
            args[k] = v.clone();
        }
        check::arguments(schema, mapping, args.as_object().unwrap())
    };
    call(json!({})).unwrap();
    let refused = |extra: Value, path: &str| match call(extra.clone()) {
        Err(e @ RequestError::Unknown { .. }) => {
            let text = e.to_string();
            assert!(
                text.contains(&format!("unknown argument `{path}`")),
                "{text}"
            );
        }
        other => panic!("{extra}: {other:?}"),
    };
    refused(json!({"metadata": {"order": "7"}}), "metadata");
    refused(json!({"expand": "customer"}), "expand");
    refused(
        json!({"billing_details": {"address": {"country": "GB", "line2": "Flat 2"}}}),
        "billing_details.address.line2",
    );
    refused(
        json!({"shipping_address": {"country": "GB", "line2": "Flat 2"}}),
        "shipping_address.line2",
    );
    refused(
        json!({"lines": [{"amount": 1}, {"amount": 2, "tax": 1}]}),
        "lines[1].tax",
    );
    refused(
        json!({"lines": [{"amount": 1, "discount": 1}]}),
        "lines[0].discount",
    );
}

/// The tool the generator builds for the one operation of an inline manifest: its
/// served `inputSchema` and its request mapping.
fn built_tool(manifest: &str) -> (Map<String, Value>, RequestMapping) {
    let options = connectorgen_core::Options {
        targets: Some(vec![connectorgen_core::model::Target::Mcp]),
        ..Default::default()
    };
    let analysis = connectorgen_core::analyze_with(
        "connector.yaml",
        std::sync::Arc::new(manifest.to_string()),
        &options,
    )
    .unwrap();
    assert!(!analysis.has_errors(), "{:?}", analysis.diagnostics);
    let outputs = analysis.outputs.unwrap();
    let (_, text) = outputs
        .iter()
        .find(|(p, _)| p.ends_with("mcp-tools.json"))
        .unwrap();
    let mut tools = connectorgen_core::render::mcp::mapping::read_tools(text).unwrap();
    let (tool, mapping) = tools.remove(0);
    (tool["inputSchema"].as_object().unwrap().clone(), mapping)
}

/// The generator and the server read a body's `oneOf` with one walk
/// (`connectorgen_core::schema_walk`). Here one branch is a `$ref` to a `$ref` (an alias
/// component): the generator followed the chain and gave the tool an `amount` argument,
/// while the server's own walk read one reference only, found `amount` declared nowhere,
/// and so refused `"amount": null` (an optional argument a strict client leaves out)
/// against the branch's `integer` instead of reading it as left out. The other branch
/// declares `memo` beside its `$ref`: both walks skipped it, so a `memo` the served
/// schema allows (2020-12 applies both) was refused as an unknown argument.
#[test]
fn every_body_argument_the_generator_gives_is_one_the_server_finds_declared() {
    let (schema, mapping) = built_tool(
        r##"version: 1
service:
  name: Shop
  version: 1.0.0
  description: Shop sells things to the person's customers.
  publicUrl: https://api.shop.example
  dashboardUrl: https://shop.example/settings/keys
targets: [mcp]
schemas:
  ByAmount: { $ref: "#/components/schemas/Amount" }
  Amount:
    type: object
    required: [amount]
    properties:
      amount: { type: integer, minimum: 1 }
  Credits:
    type: object
    required: [credits]
    properties:
      credits: { type: integer, minimum: 1 }
operations:
  - id: createTopUp
    method: post
    path: /v1/top-ups
    summary: Top up an account
    description: Adds credit to the person's account.
    input:
      type: object
      properties:
        note: { type: string }
      oneOf:
        - $ref: "#/components/schemas/ByAmount"
        - $ref: "#/components/schemas/Credits"
          properties:
            memo: { type: string }
"##,
    );
    let body: Vec<&str> = mapping
        .arguments
        .iter()
        .filter(|a| a.location == Location::Body)
        .map(|a| a.argument.as_str())
        .collect();
    // A branch's own keywords come before what its `$ref` names (`memo`, then `credits`).
    assert_eq!(body, ["note", "amount", "memo", "credits"]);
    for name in body {
        let mut args = Map::new();
        args.insert(name.to_string(), Value::Null);
        absent_nulls(&schema, &mut args).unwrap();
        assert!(args.is_empty(), "`{name}: null` was not read as left out");
    }
    let mut call = args(json!({ "amount": 5, "credits": null, "memo": null }));
    absent_nulls(&schema, &mut call).unwrap();
    check::arguments(&schema, &mapping, &call).unwrap();
    // What the validator accepts beside a `$ref` is an argument, and is sent.
    let call = args(json!({ "credits": 2, "memo": "gift" }));
    let request = build(
        &mapping,
        &call,
        &Target {
            schema: Some(&schema),
            ..target()
        },
    )
    .unwrap();
    assert_eq!(
        request.body.as_deref(),
        Some(br#"{"memo":"gift","credits":2}"#.as_slice())
    );
}

/// A parameter written as "one of these names, or any string" (`oneOf` of an `enum` and
/// a plain string) takes a known name, which fits both: checked as at least one
/// alternative (issue 49), where `oneOf`'s exactly-one refused the document's own
/// example. A value of neither alternative is still refused before anything is asked.
#[test]
fn a_known_name_of_a_name_or_any_string_is_taken_and_a_number_is_not() {
    let (schema, mapping) = built_tool(
        r"version: 1
service:
  name: Speak
  version: 1.0.0
  description: Speak reads text aloud for the person.
  publicUrl: https://api.speak.example
  dashboardUrl: https://speak.example/settings/keys
targets: [mcp]
operations:
  - id: createSpeech
    method: post
    path: /v1/speech
    summary: Read text aloud
    description: Returns audio of the text. Saves nothing.
    input:
      type: object
      required: [text, voice]
      properties:
        text: { type: string }
        voice:
          oneOf:
            - enum: [alloy, echo]
              description: A built-in voice.
            - type: string
              description: Or the id of a voice of your own.
",
    );
    for voice in [json!("alloy"), json!("v_custom_7")] {
        let call = args(json!({ "text": "hi", "voice": voice }));
        check::arguments(&schema, &mapping, &call).unwrap_or_else(|e| panic!("{voice}: {e}"));
    }
    let call = args(json!({ "text": "hi", "voice": 7 }));
    let refused = check::arguments(&schema, &mapping, &call).unwrap_err();
    assert!(refused.to_string().contains("voice"), "{refused}");
}
