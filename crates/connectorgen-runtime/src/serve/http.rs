//! `serve --http`: the Streamable HTTP listener under rmcp's service, within bounds.
//!
//! Takes: the server, the address and the `HttpLimits`. Returns: only when binding
//! fails (the listener itself runs until the process ends).
//! Must never: exit because `accept()` failed (too many open files, a connection reset
//! before it was accepted: the next accept may work, so they are waited out), hold more
//! connections or sessions than the caps, keep a connection whose request headers do
//! not arrive in time, or answer a request from a browser page of another origin (MCP's
//! Streamable HTTP transport: servers must validate `Origin` against DNS rebinding).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::AsyncWriteExt as _;

use super::{Body, Server, plain};

/// The bounds of the HTTP listener (`--max-connections`, `--max-sessions`,
/// `--header-timeout`).
#[derive(Debug, Clone, Copy)]
pub struct HttpLimits {
    /// Open connections at once; one more is answered 503 and closed.
    pub max_connections: u32,
    /// MCP sessions at once; an `initialize` beyond them is answered 503.
    pub max_sessions: u32,
    /// How long a connection may take to send a request's headers (the first request's
    /// or, kept alive, the next one's) before it is closed.
    pub header_timeout: Duration,
}

impl Default for HttpLimits {
    fn default() -> Self {
        HttpLimits {
            max_connections: 256,
            max_sessions: 64,
            header_timeout: Duration::from_secs(30),
        }
    }
}

/// How long the listener waits after a failed `accept()` before trying again: long
/// enough not to spin on a full descriptor table, short enough to notice one freed.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// The origins a browser page may call from: loopback on any port, and each
/// `--allow-host` name (with its port when it names one).
fn allowed_origins(allow_hosts: &[String]) -> Vec<String> {
    let mut out: Vec<String> = ["localhost", "127.0.0.1", "[::1]"]
        .iter()
        .flat_map(|host| [format!("http://{host}:*"), format!("https://{host}:*")])
        .collect();
    for host in allow_hosts {
        let host = host.trim();
        if host.is_empty() {
            continue;
        }
        let with_port = if host
            .rsplit_once(':')
            .is_some_and(|(h, p)| !h.is_empty() && !h.ends_with(':') && p.parse::<u16>().is_ok())
        {
            host.to_string()
        } else {
            format!("{host}:*")
        };
        out.push(format!("https://{with_port}"));
        out.push(format!("http://{with_port}"));
    }
    out
}

pub(super) async fn serve(
    server: Server,
    address: SocketAddr,
    limits: HttpLimits,
    auth: &crate::auth::AuthConfig,
) -> Result<(), String> {
    use hyper_util::rt::{TokioIo, TokioTimer};
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService,
    };

    let listener = tokio::net::TcpListener::bind(address)
        .await
        .map_err(|e| format!("cannot listen on {address}: {e}"))?;
    let local = listener.local_addr().map_err(|e| e.to_string())?;
    let mut hosts = vec![
        "localhost".to_string(),
        "127.0.0.1".to_string(),
        "::1".to_string(),
        local.ip().to_string(),
    ];
    hosts.push(format!("{}:{}", local.ip(), local.port()));
    hosts.push(format!("localhost:{}", local.port()));
    hosts.extend(server.allow_hosts().iter().cloned());
    let http_config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .with_allowed_origins(allowed_origins(server.allow_hosts()))
        .enforce_origin_validation();
    let redactor = server.redactor().clone();
    // With --auth-issuer every MCP request shows a token first (serve/gate.rs).
    let gate = if auth.enabled() {
        let (scopes, needs) = server.scopes();
        Some(Arc::new(super::gate::Gate::new(
            auth,
            local,
            server.allow_hosts(),
            (scopes, needs),
            server.introspection(),
        )?))
    } else {
        None
    };
    // The connect pages (auth.perPerson) are on the resource's origin.
    let stage = server.stage().clone();
    if let (Some(people), Some(gate)) = (&stage.people, &gate) {
        people.set_origin(gate.origin())?;
    }
    // The redirect URI the operator registers at the provider (`connect: oauth`): known
    // only now, from the resource's origin, so said here rather than left to be guessed.
    let callback = stage
        .people
        .as_ref()
        .and_then(|people| people.oauth())
        .map(|oauth| oauth.registration().redirect_uri.clone());
    let factory = move || Ok(server.clone());
    let sessions = Arc::new(LocalSessionManager::default());
    let service = StreamableHttpService::new(factory, sessions.clone(), http_config);
    let mut listening = serde_json::json!({
        "url": format!("http://{local}/mcp"),
        "maxConnections": limits.max_connections,
        "maxSessions": limits.max_sessions,
        "headerTimeoutSeconds": limits.header_timeout.as_secs_f64(),
        "auth": gate.as_ref().map(|g| g.describe()),
    });
    if let Some(callback) = callback {
        listening["connectCallback"] = serde_json::json!(callback);
    }
    redactor.line("listening", listening);
    let permits = Arc::new(tokio::sync::Semaphore::new(
        usize::try_from(limits.max_connections).unwrap_or(usize::MAX),
    ));
    let mut failing = false;
    loop {
        let mut stream = match listener.accept().await {
            Ok((stream, _)) => {
                failing = false;
                no_delay(stream)
            }
            Err(e) => {
                // EMFILE, ENFILE, ENOBUFS, ECONNABORTED…: none is the listener's end.
                // Said once per run of failures, not once per retry.
                if !failing {
                    redactor.line(
                        "warning",
                        serde_json::json!({"message": format!(
                            "could not accept a connection ({e}); waiting and trying again"
                        )}),
                    );
                }
                failing = true;
                tokio::time::sleep(ACCEPT_BACKOFF).await;
                continue;
            }
        };
        let Ok(permit) = permits.clone().try_acquire_owned() else {
            // Over the cap: a short answer and the connection closed, so the descriptor
            // is back at once and the client learns why.
            tokio::spawn(async move {
                let body = "too many connections: try again later\n";
                let answer = format!(
                    "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nRetry-After: 1\r\n\
                     Content-Type: text/plain\r\nContent-Length: {}\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(answer.as_bytes()).await;
                let _ = stream.shutdown().await;
            });
            continue;
        };
        let service = service.clone();
        let sessions = sessions.clone();
        let max_sessions = usize::try_from(limits.max_sessions).unwrap_or(usize::MAX);
        let gate = gate.clone();
        let stage = stage.clone();
        let handler = hyper::service::service_fn(move |request: http::Request<_>| {
            let service = service.clone();
            let sessions = sessions.clone();
            let gate = gate.clone();
            let stage = stage.clone();
            async move {
                // A person's browser, which carries no token: the connect pages.
                let request = match super::connect::answer(&stage, request).await {
                    Ok(page) => return Ok(page),
                    Err(request) => request,
                };
                let full = sessions.sessions.read().await.len() >= max_sessions;
                let Some(gate) = gate else {
                    if full && new_session(&request) {
                        return Ok::<_, std::convert::Infallible>(too_many_sessions());
                    }
                    return Ok(service.handle(request).await);
                };
                if let Some(metadata) = gate.metadata(&request) {
                    return Ok(metadata);
                }
                match gate.admit(request).await {
                    Ok(request) if full && new_session(&request) => Ok(too_many_sessions()),
                    Ok(request) => Ok(service.handle(request).await),
                    Err(refused) => Ok(refused),
                }
            }
        });
        let header_timeout = limits.header_timeout;
        tokio::spawn(async move {
            let _permit = permit;
            // A client that hangs up mid-request ends only its own connection.
            let _ = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(header_timeout)
                .serve_connection(TokioIo::new(stream), handler)
                .await;
        });
    }
}

/// A POST without a session id is an `initialize` (or a stateless call, which makes no
/// session): refused when the sessions are all taken.
fn new_session<B>(request: &http::Request<B>) -> bool {
    request.method() == http::Method::POST && !request.headers().contains_key("mcp-session-id")
}

fn too_many_sessions() -> http::Response<Body> {
    plain(
        http::StatusCode::SERVICE_UNAVAILABLE,
        "too many MCP sessions: close one (DELETE /mcp) or try again later\n",
    )
}

/// `stream` with Nagle's algorithm off: an answer is written in more than one piece
/// (headers, then the body), and a client whose kernel delays its ACKs would otherwise
/// wait ~40 ms for each answer's second piece on a kept-alive connection (issue 44: 44 ms
/// a call instead of 0.7). Best effort: a socket that refuses it still serves.
fn no_delay(stream: tokio::net::TcpStream) -> tokio::net::TcpStream {
    let _ = stream.set_nodelay(true);
    stream
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepted_sockets_send_without_delay() {
        crate::block_on(async {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let address = listener.local_addr().unwrap();
            let _client = tokio::net::TcpStream::connect(address).await.unwrap();
            let (accepted, _) = listener.accept().await.unwrap();
            assert!(!accepted.nodelay().unwrap(), "the default this changes");
            assert!(no_delay(accepted).nodelay().unwrap());
        })
        .unwrap();
    }

    #[test]
    fn origins_are_loopback_and_the_allowed_hosts() {
        let origins = allowed_origins(&["mcp.example.com".into(), "api.example.com:8443".into()]);
        assert!(origins.contains(&"http://localhost:*".to_string()));
        assert!(origins.contains(&"https://mcp.example.com:*".to_string()));
        assert!(origins.contains(&"https://api.example.com:8443".to_string()));
        assert!(!origins.iter().any(|o| o.contains("evil")));
    }
}
