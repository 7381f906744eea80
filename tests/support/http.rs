//! A minimal blocking HTTP/1.1 client over std's `TcpStream`, for tests that talk to the
//! loopback servers directly (the reference provider's own tests): one request per
//! connection (`Connection: close`), the answer read to the end. Takes a URL on
//! 127.0.0.1; returns status, headers and body. Never follows redirects, never leaves
//! loopback, never waits longer than its read timeout (a hang becomes a failure).
#![allow(dead_code)]

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::time::Duration;

#[derive(Debug, Clone)]
pub(crate) struct Answer {
    pub status: u16,
    /// Lower-cased names, in the order received.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Answer {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }

    pub(crate) fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }
}

/// `method url` with `headers` and `body`; `url` is `http://127.0.0.1:PORT/path?query`.
pub(crate) fn request(method: &str, url: &str, headers: &[(&str, &str)], body: &str) -> Answer {
    let rest = url
        .strip_prefix("http://")
        .unwrap_or_else(|| panic!("not an http URL: {url}"));
    let (host, target) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    assert!(host.starts_with("127.0.0.1:"), "loopback only: {url}");
    let target = if target.is_empty() { "/" } else { target };
    let mut stream = TcpStream::connect(host).expect("connect to the loopback server");
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .expect("read timeout");
    let mut head = format!(
        "{method} {target} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).expect("send the request");
    stream.write_all(body.as_bytes()).expect("send the body");
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).expect("read the answer");
    parse(&raw)
}

fn parse(raw: &[u8]) -> Answer {
    let text = String::from_utf8_lossy(raw);
    let (head, body) = text
        .split_once("\r\n\r\n")
        .unwrap_or_else(|| panic!("no end of headers: {text}"));
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or("");
    let status = status_line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status: {status_line}"));
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let chunked = headers
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v.contains("chunked"));
    let body = if chunked {
        dechunk(body)
    } else {
        body.to_string()
    };
    Answer {
        status,
        headers,
        body,
    }
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let size = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if size == 0 || rest.len() < size {
            break;
        }
        out.push_str(&rest[..size]);
        body = rest[size..].trim_start_matches("\r\n");
    }
    out
}
