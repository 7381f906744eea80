//! `connectorgen serve` within bounds, the real binary on loopback: `--http` survives
//! `accept()` failures and caps connections, sessions and header-read time; a browser
//! page of another origin is refused; a stdio line that is not JSON gets a JSON-RPC
//! parse error. No test measures time: each limit is set small and its effect observed.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

use super::http;
use super::mcp::NO_HANG;

fn video() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/manifests/video.yaml")
}

/// A `serve` process killed when dropped, with the lines it wrote on stderr.
struct Running {
    child: Child,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
    _state: tempfile::TempDir,
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Running {
    /// Waits for the first stderr line with this event and returns it.
    fn event(&mut self, name: &str) -> Value {
        loop {
            let line = self
                .lines
                .recv_timeout(NO_HANG)
                .unwrap_or_else(|e| panic!("no {name} line ({e}): {:#?}", self.seen));
            self.seen.push(line.clone());
            if let Ok(value) = serde_json::from_str::<Value>(&line)
                && value["event"] == name
            {
                return value;
            }
        }
    }

    fn still_running(&mut self) -> bool {
        self.child.try_wait().expect("try_wait").is_none()
    }
}

/// `serve video.yaml` with `extra`, under `sh -c PREFIX` (a `ulimit`) when given.
fn spawn(extra: &[&str], prefix: Option<&str>, stdio: bool) -> Running {
    let state = tempfile::tempdir().unwrap();
    let bin = env!("CARGO_BIN_EXE_connectorgen");
    let mut args: Vec<String> = vec![
        "serve".into(),
        video().display().to_string(),
        "--base-url".into(),
        // Never contacted: these tests make no tool call.
        "http://127.0.0.1:9".into(),
        "--state".into(),
        state.path().display().to_string(),
    ];
    if !stdio {
        args.extend(["--http".into(), "127.0.0.1:0".into()]);
    }
    args.extend(extra.iter().map(|s| (*s).to_string()));
    let mut cmd = match prefix {
        Some(prefix) => {
            let mut c = Command::new("sh");
            c.arg("-c")
                .arg(format!(r#"{prefix} && exec "$0" "$@""#))
                .arg(bin);
            c
        }
        None => Command::new(bin),
    };
    cmd.args(&args)
        .env("NO_COLOR", "1")
        .env_remove("VIDGEN_TOKEN")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("serve starts");
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    Running {
        child,
        lines: rx,
        seen: Vec::new(),
        _state: state,
    }
}

/// `serve --http` and the URL it listens on.
fn spawn_http(extra: &[&str], prefix: Option<&str>) -> (Running, String) {
    let mut running = spawn(extra, prefix, false);
    let url = running.event("listening")["url"]
        .as_str()
        .expect("a url")
        .to_string();
    (running, url)
}

fn initialize() -> String {
    json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "bounds-test", "version": "0"}
        }
    })
    .to_string()
}

fn post_initialize(url: &str, headers: &[(&str, &str)]) -> http::Answer {
    let mut all = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];
    all.extend_from_slice(headers);
    http::request("POST", url, &all, &initialize())
}

fn host_port(url: &str) -> String {
    url.trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .to_string()
}

fn connect(url: &str) -> TcpStream {
    let stream = TcpStream::connect(host_port(url)).expect("connect");
    stream.set_read_timeout(Some(NO_HANG)).unwrap();
    stream
}

/// Reads until the server closes the connection; what it sent. A server that keeps it
/// open fails the test (the read times out) instead of hanging it.
fn read_until_closed(stream: &mut TcpStream) -> String {
    let mut out = Vec::new();
    match stream.read_to_end(&mut out) {
        Ok(_) => String::from_utf8_lossy(&out).into_owned(),
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {
            String::from_utf8_lossy(&out).into_owned()
        }
        Err(e) => panic!("the server kept the connection open ({e}); got {out:?}"),
    }
}

#[test]
fn accept_failures_are_waited_out_not_fatal() {
    // A descriptor table of 64: the server's own files take ~20, so 100 connections
    // make accept() fail with "Too many open files" (EMFILE), which used to exit 2.
    let (mut s, url) = spawn_http(&["--max-connections", "1000"], Some("ulimit -n 64"));
    let mut held: Vec<TcpStream> = (0..100).map(|_| connect(&url)).collect();
    let warning = s.event("warning");
    assert!(
        warning["message"]
            .as_str()
            .is_some_and(|m| m.contains("could not accept a connection")),
        "{warning}"
    );
    assert!(s.still_running(), "serve exited on an accept error");
    held.clear();
    // The descriptors are back: the next client is served. Tried until it works, as a
    // client would; each attempt either succeeds or hits the same cause.
    let mut last = String::new();
    for _ in 0..600 {
        let answer = std::panic::catch_unwind(|| post_initialize(&url, &[]));
        match answer {
            Ok(a) if a.status == 200 => {
                assert!(s.still_running());
                return;
            }
            Ok(a) => last = format!("{} {}", a.status, a.body),
            Err(_) => last = "no answer".into(),
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("never served again: {last} {:#?}", s.seen);
}

#[test]
fn a_connection_past_the_cap_is_answered_503_and_closed() {
    let (mut s, url) = spawn_http(&["--max-connections", "2"], None);
    let _a = connect(&url);
    let _b = connect(&url);
    let mut third = connect(&url);
    let answer = read_until_closed(&mut third);
    assert!(
        answer.starts_with("HTTP/1.1 503"),
        "the third connection: {answer:?}"
    );
    assert!(answer.contains("too many connections"), "{answer}");
    assert!(s.still_running());
}

#[test]
fn a_session_past_the_cap_is_refused_503() {
    let (mut s, url) = spawn_http(&["--max-sessions", "1"], None);
    let first = post_initialize(&url, &[]);
    assert_eq!(first.status, 200, "{}", first.body);
    assert!(
        first.header("mcp-session-id").is_some(),
        "{:?}",
        first.headers
    );
    let second = post_initialize(&url, &[]);
    assert_eq!(second.status, 503, "{}", second.body);
    assert!(
        second.body.contains("too many MCP sessions"),
        "{}",
        second.body
    );
    assert!(s.still_running());
}

#[test]
fn headers_that_do_not_arrive_in_time_close_the_connection() {
    // The limit is set small; the test waits for the close, however long it takes
    // (bounded by NO_HANG), and never compares durations.
    let (mut s, url) = spawn_http(&["--header-timeout", "0.2"], None);
    let mut slow = connect(&url);
    slow.write_all(format!("POST /mcp HTTP/1.1\r\nHost: {}\r\n", host_port(&url)).as_bytes())
        .unwrap();
    let answer = read_until_closed(&mut slow);
    assert!(
        !answer.contains("200 OK"),
        "an incomplete request was answered: {answer}"
    );
    // The listener itself goes on.
    assert_eq!(post_initialize(&url, &[]).status, 200);
    assert!(s.still_running());
}

#[test]
fn a_foreign_origin_is_refused_and_loopback_is_not() {
    let (_s, url) = spawn_http(&[], None);
    let foreign = post_initialize(&url, &[("Origin", "https://evil.example")]);
    assert_eq!(foreign.status, 403, "{}", foreign.body);
    let page = format!(
        "http://localhost:{}",
        host_port(&url).rsplit(':').next().unwrap()
    );
    let local = post_initialize(&url, &[("Origin", &page)]);
    assert_eq!(local.status, 200, "{}", local.body);
    // A non-browser client sends no Origin: served.
    assert_eq!(post_initialize(&url, &[]).status, 200);
}

#[test]
fn an_origin_named_by_allow_host_is_accepted() {
    let (_s, url) = spawn_http(&["--allow-host", "mcp.example.com"], None);
    let allowed = post_initialize(&url, &[("Origin", "https://mcp.example.com")]);
    assert_eq!(allowed.status, 200, "{}", allowed.body);
    let other = post_initialize(&url, &[("Origin", "https://mcp.example.com.evil.example")]);
    assert_eq!(other.status, 403, "{}", other.body);
}

#[test]
fn a_stdio_line_that_is_not_json_gets_a_parse_error_and_the_session_goes_on() {
    let mut s = spawn(&[], None, true);
    let mut stdin = s.child.stdin.take().unwrap();
    let stdout = s.child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    stdin.write_all(b"this is not json\n").unwrap();
    stdin.flush().unwrap();
    let line = rx.recv_timeout(NO_HANG).expect("an answer to the bad line");
    let answer: Value = serde_json::from_str(&line).expect("the answer is JSON");
    assert_eq!(answer["jsonrpc"], "2.0", "{answer}");
    assert_eq!(answer["id"], Value::Null, "{answer}");
    assert_eq!(answer["error"]["code"], -32700, "{answer}");
    // The session is intact: initialize is answered.
    stdin
        .write_all(format!("{}\n", initialize()).as_bytes())
        .unwrap();
    stdin.flush().unwrap();
    let line = rx.recv_timeout(NO_HANG).expect("an answer to initialize");
    let answer: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(answer["id"], 1, "{answer}");
    assert!(answer["result"]["serverInfo"].is_object(), "{answer}");
    assert!(s.still_running());
}
