//! The one HTTP client of the runtime: sends an exact request to the provider, within
//! bounds.
//!
//! Takes: an `HttpRequest` (from the request builder) and the `Limits`. Returns: the
//! status, headers and body, or why there is none.
//! Must never: contact a host that is not one of the manifest's servers (or
//! `--base-url`), follow a redirect to another origin, read more than the response cap,
//! wait longer than the timeouts, or use a proxy from the environment (the request
//! carries the person's credential).

use std::time::Duration;

use reqwest::redirect;

/// An HTTP request as the provider will receive it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HttpRequest {
    pub method: http::Method,
    /// Absolute, query included, every path and query value percent-encoded.
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: Option<Vec<u8>>,
}

/// What the provider answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HttpResponse {
    pub status: u16,
    /// Names in lower case, in the order received.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl HttpResponse {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// The bounds of every call.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub connect_timeout: Duration,
    /// From sending the first byte to reading the last.
    pub total_timeout: Duration,
    pub max_response_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            connect_timeout: Duration::from_secs(10),
            total_timeout: Duration::from_secs(60),
            max_response_bytes: 10 * 1024 * 1024,
        }
    }
}

/// Why a call has no response.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SendError {
    /// Nothing was sent.
    #[error("{0} is not one of the connector's servers; nothing was sent")]
    HostNotAllowed(String),
    /// Nothing was sent.
    #[error("not a valid URL: {0}")]
    BadUrl(String),
    /// Nothing reached the provider (or we cannot tell): connecting failed.
    #[error("could not connect: {0}")]
    Connect(String),
    /// Sent; the answer did not come in time. The provider may have acted on it.
    #[error("no complete answer within {}", seconds(.0))]
    Timeout(Duration),
    /// Sent; the answer was larger than the cap.
    #[error("the answer is larger than {0} bytes")]
    TooLarge(usize),
    /// Sent; the provider redirected to another origin, which is not followed. Holds
    /// where it pointed (the `Location`), not the URL that answered with it.
    #[error("the provider redirected to {0}, another origin, which is not followed")]
    Redirect(String),
    /// Sent; the provider kept redirecting within its own origin (a loop, or a chain
    /// longer than `MAX_REDIRECTS`). Holds the last place it pointed to.
    #[error(
        "the provider redirected more than {MAX_REDIRECTS} times (the last time to {0}), \
         which is not followed further"
    )]
    TooManyRedirects(String),
    #[error("{0}")]
    Other(String),
}

impl SendError {
    /// Whether the request may have reached the provider (a retry must reuse its key).
    pub(crate) fn maybe_sent(&self) -> bool {
        !matches!(
            self,
            SendError::HostNotAllowed(_) | SendError::BadUrl(_) | SendError::Connect(_)
        )
    }
}

/// The most redirects followed for one request, all within the allowed origins.
pub(crate) const MAX_REDIRECTS: usize = 5;

/// Why the redirect policy stopped, with where the redirect pointed: reqwest's own error
/// names the URL that answered with the redirect, not its target, so the target travels
/// in the error's source and `send` reads it back.
#[derive(Debug, thiserror::Error)]
enum Refused {
    #[error("redirect to {0}")]
    Foreign(String),
    #[error("more than {MAX_REDIRECTS} redirects, the last to {0}")]
    TooMany(String),
}

/// An origin the client may contact: scheme, host and port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Origin {
    pub scheme: String,
    pub host: String,
    pub port: u16,
}

impl Origin {
    pub(crate) fn of(url: &str) -> Option<Origin> {
        let url = reqwest::Url::parse(url).ok()?;
        Some(Origin {
            scheme: url.scheme().to_string(),
            host: url.host_str()?.to_ascii_lowercase(),
            port: url.port_or_known_default()?,
        })
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Client {
    inner: reqwest::Client,
    allowed: Vec<Origin>,
    limits: Limits,
}

impl Client {
    /// A client that contacts only `allowed` (the origins of the manifest's servers and
    /// of `--base-url`).
    pub(crate) fn new(limits: Limits, allowed: Vec<Origin>) -> Result<Client, SendError> {
        Client::build(limits, allowed, true)
    }

    /// A client that follows no redirect: a 3xx is the answer. For `probe`, which
    /// follows them itself so that it can count each request that reaches the provider
    /// against `--allow-spend`.
    pub(crate) fn without_redirects(
        limits: Limits,
        allowed: Vec<Origin>,
    ) -> Result<Client, SendError> {
        Client::build(limits, allowed, false)
    }

    fn build(limits: Limits, allowed: Vec<Origin>, follow: bool) -> Result<Client, SendError> {
        // rustls without a built-in provider: ring is the one compiled in. Installing
        // twice (a second client) is harmless, so the result is ignored.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let permitted = allowed.clone();
        let policy = redirect::Policy::custom(move |attempt| {
            let same = Origin::of(attempt.url().as_str()).is_some_and(|o| permitted.contains(&o));
            let to = attempt.url().to_string();
            if !same {
                attempt.error(Refused::Foreign(to))
            } else if attempt.previous().len() > MAX_REDIRECTS {
                // `previous` holds every URL that answered with a redirect so far: this
                // is the sixth, after five followed.
                attempt.error(Refused::TooMany(to))
            } else {
                attempt.follow()
            }
        });
        let policy = if follow {
            policy
        } else {
            redirect::Policy::none()
        };
        let inner = reqwest::Client::builder()
            .connect_timeout(limits.connect_timeout)
            .timeout(limits.total_timeout)
            .redirect(policy)
            .no_proxy()
            .user_agent(concat!("connectorgen/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| SendError::Other(e.to_string()))?;
        Ok(Client {
            inner,
            allowed,
            limits,
        })
    }

    /// Whether `url` is one the client will contact.
    pub(crate) fn check(&self, url: &str) -> Result<(), SendError> {
        let origin = Origin::of(url).ok_or_else(|| SendError::BadUrl(url.to_string()))?;
        if self.allowed.contains(&origin) {
            Ok(())
        } else {
            Err(SendError::HostNotAllowed(format!(
                "{}://{}:{}",
                origin.scheme, origin.host, origin.port
            )))
        }
    }

    /// Sends `request` and reads the whole answer, within the limits.
    pub(crate) async fn send(&self, request: &HttpRequest) -> Result<HttpResponse, SendError> {
        self.check(&request.url)?;
        let mut builder = self.inner.request(request.method.clone(), &request.url);
        for (name, value) in &request.headers {
            builder = builder.header(name, value);
        }
        if let Some(body) = &request.body {
            builder = builder.body(body.clone());
        }
        let classify = |e: reqwest::Error| -> SendError {
            if e.is_timeout() {
                SendError::Timeout(self.limits.total_timeout)
            } else if e.is_redirect() {
                let mut source = std::error::Error::source(&e);
                while let Some(inner) = source {
                    match inner.downcast_ref::<Refused>() {
                        Some(Refused::Foreign(to)) => return SendError::Redirect(to.clone()),
                        Some(Refused::TooMany(to)) => {
                            return SendError::TooManyRedirects(to.clone());
                        }
                        None => source = inner.source(),
                    }
                }
                SendError::Other(e.to_string())
            } else if e.is_connect() {
                SendError::Connect(e.to_string())
            } else {
                SendError::Other(e.to_string())
            }
        };
        let mut response = builder.send().await.map_err(classify)?;
        let status = response.status().as_u16();
        let headers = response
            .headers()
            .iter()
            .map(|(n, v)| {
                (
                    n.as_str().to_string(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect();
        let cap = self.limits.max_response_bytes;
        if response.content_length().is_some_and(|n| n > cap as u64) {
            return Err(SendError::TooLarge(cap));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(classify)? {
            if body.len() + chunk.len() > cap {
                return Err(SendError::TooLarge(cap));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(HttpResponse {
            status,
            headers,
            body,
        })
    }
}

/// `--timeout` takes fractions of a second: "0.5 seconds", not the "0 seconds" a whole
/// count would say, and "1 second".
fn seconds(limit: &Duration) -> String {
    if *limit == Duration::from_secs(1) {
        "1 second".to_string()
    } else {
        format!("{} seconds", limit.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timeout_says_the_limit_as_given() {
        let says = |secs: f64| SendError::Timeout(Duration::from_secs_f64(secs)).to_string();
        assert_eq!(says(0.5), "no complete answer within 0.5 seconds");
        assert_eq!(says(1.0), "no complete answer within 1 second");
        assert_eq!(says(60.0), "no complete answer within 60 seconds");
        assert_eq!(says(2.25), "no complete answer within 2.25 seconds");
    }
    use std::io::{Read as _, Write as _};
    use std::net::TcpListener;

    /// A one-connection HTTP server on loopback that answers `response` (raw bytes) to
    /// the first request and counts what it accepted.
    fn serve_once(response: Vec<u8>) -> (String, std::thread::JoinHandle<usize>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let handle = std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf);
            let _ = stream.write_all(&response);
            1
        });
        (url, handle)
    }

    fn get(url: &str) -> HttpRequest {
        HttpRequest {
            method: http::Method::GET,
            url: url.to_string(),
            headers: vec![],
            body: None,
        }
    }

    fn client(url: &str, limits: Limits) -> Client {
        Client::new(limits, vec![Origin::of(url).unwrap()]).unwrap()
    }

    #[test]
    fn hosts_that_are_not_the_connectors_are_never_contacted() {
        let c = client("http://127.0.0.1:9", Limits::default());
        let result = crate::block_on(c.send(&get("http://127.0.0.2:9/x"))).unwrap();
        assert!(matches!(result, Err(SendError::HostNotAllowed(_))));
        assert!(c.check("http://127.0.0.1:9/anything?x=1").is_ok());
        assert!(c.check("https://127.0.0.1:9/").is_err(), "another scheme");
        assert!(c.check("http://127.0.0.1:10/").is_err(), "another port");
    }

    #[test]
    fn a_redirect_to_another_origin_is_not_followed() {
        let (url, server) = serve_once(
            b"HTTP/1.1 302 Found\r\nLocation: http://127.0.0.2:1/steal\r\nContent-Length: 0\r\n\r\n"
                .to_vec(),
        );
        let c = client(&url, Limits::default());
        let result = crate::block_on(c.send(&get(&format!("{url}/v1/x")))).unwrap();
        // It names where the redirect pointed, not the URL that answered with it.
        assert!(
            matches!(&result, Err(SendError::Redirect(to)) if to == "http://127.0.0.2:1/steal"),
            "{result:?}"
        );
        server.join().unwrap();
    }

    #[test]
    fn an_answer_over_the_cap_is_refused() {
        let mut response =
            b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\n".to_vec();
        response.extend(std::iter::repeat_n(b'a', 100));
        let (url, server) = serve_once(response);
        let limits = Limits {
            max_response_bytes: 99,
            ..Limits::default()
        };
        let c = client(&url, limits);
        let result = crate::block_on(c.send(&get(&url))).unwrap();
        assert!(matches!(result, Err(SendError::TooLarge(99))), "{result:?}");
        server.join().unwrap();
    }

    #[test]
    fn a_chunked_answer_over_the_cap_is_refused_while_reading() {
        let mut response =
            b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n"
                .to_vec();
        for _ in 0..4 {
            response.extend_from_slice(b"20\r\n");
            response.extend(std::iter::repeat_n(b'a', 32));
            response.extend_from_slice(b"\r\n");
        }
        response.extend_from_slice(b"0\r\n\r\n");
        let (url, server) = serve_once(response);
        let limits = Limits {
            max_response_bytes: 100,
            ..Limits::default()
        };
        let c = client(&url, limits);
        let result = crate::block_on(c.send(&get(&url))).unwrap();
        assert!(
            matches!(result, Err(SendError::TooLarge(100))),
            "{result:?}"
        );
        server.join().unwrap();
    }

    #[test]
    fn an_answer_is_read_whole_with_status_and_headers() {
        let (url, server) = serve_once(
            b"HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
                .to_vec(),
        );
        let c = client(&url, Limits::default());
        let response = crate::block_on(c.send(&get(&url))).unwrap().unwrap();
        assert_eq!(response.status, 201);
        assert_eq!(response.header("Content-Type"), Some("application/json"));
        assert_eq!(response.body, b"{}");
        server.join().unwrap();
    }
}
