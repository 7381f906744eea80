//! A hostile provider echoes the key in every encoding an encoder may produce (review of
//! the secrets merge, defects 1 and 4): JSON escapes of every character in either hex
//! case with `\/`, Go's `\u0026`, HTML references, lower-case percent-encoding, and a
//! body that is not UTF-8 with the key where an answer is cut. The real binary, over
//! stdio, and `probe` in every format: the key, in any of those forms and any prefix of
//! it, is in no tool result, log line, ledger or report.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::http::{StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use percent_encoding::{NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};
use serde_json::{Value, json};

use super::cli::{run_within, text};
use super::mcp::{Person, Serve, Transport, is_error, text_of};
use crate::support::loopback::Loopback;

/// One key per character class (base64-style with `- . _ ~ + / =`, reserved
/// characters, `%`, spaces, non-ASCII inside and outside the BMP, quotes, `&`, `<`).
const KEYS: [&str; 10] = [
    "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
    "a-b.c_d~e-f.g_h~",
    "ab+cd/ef==",
    "Zm9v-YmFy_YmF6~+/=:?#",
    "k:/?#[]@!$&'()*+,;=end",
    "100%-sure%20not",
    "two words here",
    "clé-sécrète-ünï",
    "key-🔑-astral",
    "<b>&\"it's\"</b>",
];

const MANIFEST: &str = r"version: 1
service:
  name: Keyed
  version: 1.0.0
  description: A provider that takes its key in the query string.
  publicUrl: https://api.keyed.example
  dashboardUrl: https://keyed.example/keys
auth: { scheme: apiKey, in: query, name: api_key }
targets: [mcp]
operations:
  - id: createThing
    method: post
    path: /v1/things
    summary: Create a thing
    description: Creates one thing. Changes nothing else.
    input: { type: object, properties: { name: { type: string } } }
    idempotency: { header: Request-Id }
    probe: { input: { name: one } }
";

/// Every character but ASCII letters and digits as `\uXXXX` (UTF-16), `/` as `\/`.
fn json_escaped(key: &str, upper: bool) -> String {
    key.chars()
        .map(|c| match c {
            c if c.is_ascii_alphanumeric() => c.to_string(),
            '/' => "\\/".to_string(),
            c => c
                .encode_utf16(&mut [0; 2])
                .iter()
                .map(|u| {
                    if upper {
                        format!("\\u{u:04X}")
                    } else {
                        format!("\\u{u:04x}")
                    }
                })
                .collect(),
        })
        .collect()
}

/// Go's `encoding/json` escapes `<`, `>` and `&`.
fn go_json(key: &str) -> String {
    serde_json::to_string(key)
        .unwrap()
        .trim_matches('"')
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

fn html(key: &str) -> String {
    key.chars().map(|c| format!("&#x{:x};", c as u32)).collect()
}

/// Every character but letters and digits percent-encoded, in lower-case hex.
fn lower_percent(key: &str) -> String {
    let upper = utf8_percent_encode(key, NON_ALPHANUMERIC).to_string();
    let mut out = String::new();
    let mut hex = 0;
    for c in upper.chars() {
        if c == '%' {
            hex = 2;
            out.push(c);
        } else if hex > 0 {
            hex -= 1;
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// The forms the provider writes the key in (inside JSON strings, raw as sent).
fn hostile(key: &str) -> Vec<String> {
    vec![
        json_escaped(key, true),
        json_escaped(key, false),
        go_json(key),
        html(key),
        lower_percent(key),
    ]
}

/// How the provider answers.
#[derive(Clone, Copy)]
enum Style {
    /// `status`, a JSON object holding the key in every hostile form.
    Json(u16),
    /// `status`, `text/plain`, a byte that is not UTF-8, then `pad` characters, then
    /// the key: an answer cut after `pad + 1` characters would cut the key.
    Bytes { status: u16, pad: usize },
}

struct Hostile {
    server: Loopback,
    seen: Arc<Mutex<usize>>,
}

impl Hostile {
    fn start(style: Style) -> Hostile {
        let seen: Arc<Mutex<usize>> = Arc::default();
        let count = seen.clone();
        let app = Router::new().fallback(move |uri: Uri| {
            let count = count.clone();
            async move {
                *count.lock().unwrap() += 1;
                answer(style, &uri)
            }
        });
        Hostile {
            server: Loopback::start(0, app).expect("the provider binds 127.0.0.1"),
            seen,
        }
    }
}

fn answer(style: Style, uri: &Uri) -> Response {
    let key = uri
        .query()
        .unwrap_or_default()
        .split('&')
        .find_map(|pair| pair.strip_prefix("api_key="))
        .map(|v| percent_decode_str(v).decode_utf8_lossy().into_owned())
        .unwrap_or_default();
    // probe's deliberately bad credential gets what a provider answers.
    if key == "connectorgen-probe-invalid-credential" {
        return StatusCode::UNAUTHORIZED.into_response();
    }
    match style {
        Style::Json(status) => {
            let forms = hostile(&key);
            let mut body = String::from(r#"{"id":"thing_1""#);
            for (i, form) in forms.iter().enumerate() {
                // Every form but the HTML and percent ones is already JSON string text.
                let value = if i >= 3 {
                    serde_json::to_string(form).unwrap()
                } else {
                    format!("\"{form}\"")
                };
                body.push_str(&format!(",\"echo{i}\":{value}"));
            }
            body.push('}');
            (
                StatusCode::from_u16(status).unwrap(),
                [(header::CONTENT_TYPE, "application/json")],
                body,
            )
                .into_response()
        }
        Style::Bytes { status, pad } => {
            let mut body = vec![0xff];
            body.extend(std::iter::repeat_n(b'x', pad));
            body.extend_from_slice(key.as_bytes());
            body.extend_from_slice(b" end");
            (
                StatusCode::from_u16(status).unwrap(),
                [(header::CONTENT_TYPE, "text/plain")],
                body,
            )
                .into_response()
        }
    }
}

fn manifest(dir: &Path) -> PathBuf {
    let path = dir.join("connector.yaml");
    std::fs::write(&path, MANIFEST).unwrap();
    path
}

/// Every string in `text` as a reader would see it: the text, and when it is JSON, each
/// string inside it.
fn readings(text: &str) -> Vec<String> {
    fn walk(value: &Value, out: &mut Vec<String>) {
        match value {
            Value::String(s) => {
                out.push(s.clone());
                out.extend(readings(s));
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, out)),
            Value::Object(map) => map.iter().for_each(|(k, v)| {
                out.push(k.clone());
                walk(v, out);
            }),
            _ => {}
        }
    }
    let mut out = vec![text.to_string()];
    for piece in std::iter::once(text).chain(text.lines()) {
        if let Ok(value) = serde_json::from_str::<Value>(piece.trim()) {
            walk(&value, &mut out);
        }
    }
    out
}

/// Fails when any reading of `text` holds `key` (plainly, or in a form the provider
/// wrote), or its first five characters.
#[track_caller]
fn assert_clean(what: &str, text: &str, key: &str) {
    let prefix: String = key.chars().take(5).collect();
    for reading in readings(text) {
        for form in hostile(key)
            .into_iter()
            .chain([key.to_string(), prefix.clone()])
        {
            assert!(
                !reading.contains(&form),
                "{what} holds the key {key:?} as {form:?}:\n{reading}"
            );
        }
    }
}

fn serve(manifest: &Path, url: &str, state: &Path, key: &str) -> Serve {
    let mut serve = Serve::new(manifest, url, state).env("KEYED_TOKEN", key);
    serve.token = None;
    serve
}

fn state_files(dir: &Path) -> String {
    let mut out = String::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap_or_default();
        out.push_str(&String::from_utf8_lossy(&bytes));
    }
    out
}

/// Defect 1: the provider echoes the key JSON-escaped in either case, with `\/`, Go's
/// escapes, HTML references and lower-case percent-encoding; the tool result (text and
/// structured content), the replay, the log and the ledger hold none of them.
#[tokio::test]
async fn a_key_echoed_in_any_encoding_never_comes_back() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = manifest(dir.path());
    for key in KEYS {
        let provider = Hostile::start(Style::Json(200));
        let state = tempfile::tempdir().unwrap();
        let s = serve(&manifest, &provider.server.url(), state.path(), key)
            .connect(Transport::Stdio, Person::without_elicitation())
            .await;
        let created = s.call("createThing", json!({ "name": "one" })).await;
        assert!(!is_error(&created), "{key:?}: {}", text_of(&created));
        let replayed = s.call("createThing", json!({ "name": "one" })).await;
        assert_eq!(*provider.seen.lock().unwrap(), 1);
        for (what, result) in [("create", &created), ("replay", &replayed)] {
            let text = text_of(result);
            assert!(text.contains("[redacted]"), "{what}: {text}");
            assert_clean(what, &text, key);
            assert_clean(what, &serde_json::to_string(result).unwrap(), key);
        }
        assert_clean("the log", &s.log_with("forwarded").await.join("\n"), key);
        s.close().await;
        let files = state_files(state.path());
        for form in hostile(key) {
            assert!(!files.contains(&form), "the ledger holds {form:?}");
        }
    }
}

/// Defect 4: an error body that is not UTF-8, with the key where serve cuts the quoted
/// body (4096 characters): redacted before the cut, so no prefix of the key is quoted.
#[tokio::test]
async fn a_key_in_a_body_that_is_not_utf8_is_redacted_before_the_cut() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = manifest(dir.path());
    for key in KEYS {
        let provider = Hostile::start(Style::Bytes {
            status: 400,
            pad: 4096 - 7,
        });
        let state = tempfile::tempdir().unwrap();
        let s = serve(&manifest, &provider.server.url(), state.path(), key)
            .connect(Transport::Stdio, Person::without_elicitation())
            .await;
        let failed = s.call("createThing", json!({ "name": "one" })).await;
        assert!(is_error(&failed), "{failed:?}");
        let text = text_of(&failed);
        assert!(text.contains("xxxx[reda"), "{key:?}: {text}");
        assert_clean("the refused call", &text, key);
        assert_clean("the log", &s.log_with("forwarded").await.join("\n"), key);
        s.close().await;
    }
}

fn probe(manifest: &Path, key: &str, args: &[&str]) -> (i32, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_connectorgen"));
    cmd.arg("probe")
        .arg(manifest)
        .args(args)
        .env("KEYED_TOKEN", key)
        .env("NO_COLOR", "1");
    let (out, _) = run_within(cmd, Duration::from_secs(60));
    (
        out.status.code().unwrap_or(-1),
        text(&out.stdout),
        text(&out.stderr),
    )
}

/// Defects 1 and 4 in probe: its evidence quotes the answer (cut to 200 characters) in
/// the human, json and github reports; neither the hostile encodings nor the start of a
/// key in a body that is not UTF-8 are in any of them.
#[test]
fn probe_reports_hold_no_encoding_and_no_prefix_of_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = manifest(dir.path());
    let encoded = Hostile::start(Style::Json(400));
    let cut = Hostile::start(Style::Bytes {
        status: 400,
        pad: 200 - 7,
    });
    for key in KEYS {
        for url in [encoded.server.url(), cut.server.url()] {
            for format in ["human", "json", "github"] {
                let (code, stdout, stderr) = probe(
                    &manifest,
                    key,
                    &[
                        "--base-url",
                        &url,
                        "--operation",
                        "createThing",
                        "--format",
                        format,
                    ],
                );
                assert!(code <= 1, "{format} {key:?}: {stdout}\n{stderr}");
                assert!(stdout.contains("[reda"), "{format} {key:?}: {stdout}");
                // GitHub annotations encode `%`, CR and LF.
                let decoded = percent_decode_str(&stdout).decode_utf8_lossy().into_owned();
                for text in [&stdout, &decoded, &stderr] {
                    assert_clean(format, text, key);
                }
            }
        }
    }
}
