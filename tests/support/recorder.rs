//! A loopback HTTP server that records every request exactly as it arrived (method,
//! path and query as sent, headers, body bytes) and answers each with one fixed JSON
//! body, for the request-building tests: what `serve` sends is compared byte for byte.
//! Takes the answer to give; returns a handle with the URL and the recordings. Never
//! binds anything but 127.0.0.1; stops when dropped.
#![allow(dead_code)]

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};

use super::loopback::Loopback;

#[derive(Debug, Clone)]
pub(crate) struct Recorded {
    pub method: String,
    /// Path and query exactly as sent (percent-encoding untouched).
    pub target: String,
    /// Lower-cased names, in the order received.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Recorded {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub(crate) fn body_text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

type Log = Arc<Mutex<Vec<Recorded>>>;

pub(crate) struct Recorder {
    log: Log,
    server: Loopback,
}

impl Recorder {
    /// Answers every request with 200 and `answer` as JSON.
    pub(crate) fn start(answer: serde_json::Value) -> Recorder {
        let log: Log = Arc::default();
        let body = answer.to_string();
        let app = Router::new()
            .fallback(
                move |state: State<Log>,
                      method: Method,
                      uri: Uri,
                      headers: HeaderMap,
                      bytes: Bytes| {
                    let body = body.clone();
                    async move { record(state, method, uri, headers, bytes, body) }
                },
            )
            .with_state(log.clone());
        let server = Loopback::start(0, app).expect("the recorder binds 127.0.0.1");
        Recorder { log, server }
    }

    pub(crate) fn url(&self) -> String {
        self.server.url()
    }

    pub(crate) fn requests(&self) -> Vec<Recorded> {
        self.log
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// The one request received; fails the test when there were none or several.
    pub(crate) fn only(&self) -> Recorded {
        let all = self.requests();
        assert_eq!(all.len(), 1, "expected exactly one request: {all:#?}");
        all.into_iter().next().unwrap_or_else(|| unreachable!())
    }
}

fn record(
    State(log): State<Log>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    bytes: Bytes,
    answer: String,
) -> Response {
    let target = uri
        .path_and_query()
        .map_or_else(|| uri.path().to_string(), |p| p.as_str().to_string());
    let headers = headers
        .iter()
        .map(|(n, v)| {
            (
                n.as_str().to_string(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    log.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .push(Recorded {
            method: method.to_string(),
            target,
            headers,
            body: bytes.to_vec(),
        });
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/json")],
        answer,
    )
        .into_response()
}
