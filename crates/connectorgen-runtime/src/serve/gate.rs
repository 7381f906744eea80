//! The door of `serve --http` when it authenticates requests (`--auth-issuer`): the
//! protected-resource metadata (RFC 9728) a client discovers the authorization server
//! from, and every MCP request checked for a bearer token that grants what the request
//! needs before rmcp sees it.
//!
//! Takes: the `AuthConfig`, the listen address, the connector's scopes and each tool's
//! needs; then each HTTP request. Returns: the metadata document, the request with its
//! `auth::Caller` attached (rmcp hands it to the handler with the request's parts), or
//! the refusal: `401` with `WWW-Authenticate: Bearer resource_metadata="…"` (no token,
//! or one that does not check), `403` with `error="insufficient_scope"` and the scopes
//! to ask for (a token that cannot do what the request asks), `400` for a token in the
//! query string.
//! Must never: let a request through without a token that checks, read a token from
//! anywhere but the `Authorization` header, or write the token anywhere.
//!
//! What a request needs is read from its JSON-RPC body: `tools/call` needs the scopes of
//! the tool's safety classes (`auth::scopes`), `tasks/cancel` and `tasks/update` the
//! change scope (a cancel is a write); anything else (initialize, `tools/list`,
//! `tasks/get`, notifications) a valid token. `tools/list` shows every tool, whatever
//! the token grants: a client that never saw the paid tool could not ask the person to
//! step up for it, and the 403 names the scope to ask for.

use std::collections::{BTreeSet, HashMap};
use std::net::SocketAddr;

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full, Limited};
use serde_json::{Value, json};

use super::{Body, plain};
use crate::auth::{AuthConfig, Caller, Introspection, Verifier, scopes::Scopes};

/// The largest request body read to find what it needs: rmcp's own bound on a request
/// body (4 MiB), so the gate refuses nothing rmcp would take.
const MAX_BODY: usize = 4 << 20;

/// Where the person reads how this server is deployed (RFC 9728's
/// `resource_documentation`).
const DOCUMENTATION: &str = concat!(
    env!("CARGO_PKG_REPOSITORY"),
    "/blob/main/docs/serve.md#remote-deployment"
);

pub(super) struct Gate {
    verifier: Verifier,
    /// The protected-resource metadata, as served.
    metadata: Bytes,
    /// Where it is served: the URL every `WWW-Authenticate` names.
    metadata_url: String,
    /// The resource's origin (`https://connector.example`).
    origin: String,
    /// The paths it is served at: the bare well-known one and the one suffixed with the
    /// resource's path.
    metadata_paths: [String; 2],
    scopes: Scopes,
    /// Each tool's needed scopes, by name.
    needs: HashMap<String, Vec<String>>,
}

impl Gate {
    pub(super) fn new(
        config: &AuthConfig,
        local: SocketAddr,
        allow_hosts: &[String],
        (scopes, needs): (Scopes, HashMap<String, Vec<String>>),
        introspection: Option<Introspection>,
    ) -> Result<Gate, String> {
        let resource = match &config.resource {
            Some(resource) => resource.clone(),
            None => match allow_hosts.first() {
                Some(host) => format!("https://{host}/mcp"),
                None => format!("http://{local}/mcp"),
            },
        };
        let (origin, path) = split_resource(&resource)
            .ok_or_else(|| format!("--resource {resource} is not an absolute http(s) URL"))?;
        let verifier = Verifier::new(&config.issuers, &resource, introspection)?;
        let metadata = json!({
            "resource": resource,
            "authorization_servers": config.issuers,
            "scopes_supported": scopes.all(),
            "bearer_methods_supported": ["header"],
            "resource_documentation": DOCUMENTATION,
        });
        let metadata = Bytes::from(serde_json::to_vec(&metadata).map_err(|e| e.to_string())?);
        let well_known = "/.well-known/oauth-protected-resource";
        Ok(Gate {
            verifier,
            metadata,
            metadata_url: format!("{origin}{well_known}{path}"),
            origin: origin.clone(),
            metadata_paths: [well_known.to_string(), format!("{well_known}{path}")],
            scopes,
            needs,
        })
    }

    /// The resource's origin: where the connect pages are (serve/connect.rs).
    pub(super) fn origin(&self) -> &str {
        &self.origin
    }

    /// The resource every token must be for, and the issuers trusted (the start-up line).
    pub(super) fn describe(&self) -> Value {
        json!({
            "resource": self.verifier.resource(),
            "issuers": self.verifier.issuers(),
            "resourceMetadata": self.metadata_url,
        })
    }

    /// The metadata document, when `request` asks for it.
    pub(super) fn metadata<B>(&self, request: &http::Request<B>) -> Option<http::Response<Body>> {
        let asked = request.method() == http::Method::GET
            && self
                .metadata_paths
                .iter()
                .any(|p| p == request.uri().path());
        asked.then(|| {
            let mut response = http::Response::new(Full::new(self.metadata.clone()).boxed());
            response.headers_mut().insert(
                http::header::CONTENT_TYPE,
                http::HeaderValue::from_static("application/json"),
            );
            response
        })
    }

    /// `request` with its caller attached, when its token checks and grants what it
    /// asks; else the answer that refuses it.
    pub(super) async fn admit<B>(
        &self,
        request: http::Request<B>,
    ) -> Result<http::Request<Full<Bytes>>, http::Response<Body>>
    where
        B: hyper::body::Body<Data = Bytes> + Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let in_query = request.uri().query().is_some_and(|q| {
            q.split('&')
                .any(|pair| pair.split('=').next() == Some("access_token"))
        });
        if in_query {
            return Err(self.refuse(
                http::StatusCode::BAD_REQUEST,
                "invalid_request",
                "a token is accepted only in the Authorization header, never in the URL",
                None,
            ));
        }
        let Some(token) = bearer(request.headers()) else {
            return Err(self.challenge());
        };
        let caller = match self.verifier.verify(&token).await {
            Ok(caller) => caller,
            Err(refused) => {
                return Err(self.refuse(
                    http::StatusCode::UNAUTHORIZED,
                    "invalid_token",
                    &refused.0,
                    None,
                ));
            }
        };
        let (mut parts, body) = request.into_parts();
        let body = match Limited::new(body, MAX_BODY).collect().await {
            Ok(body) => body.to_bytes(),
            Err(_) => {
                return Err(plain(
                    http::StatusCode::PAYLOAD_TOO_LARGE,
                    "the request body is too large or could not be read\n",
                ));
            }
        };
        let needed = self.needed(&body);
        // In the classes' order (read, change, spend), as the metadata lists them.
        let missing: Vec<String> = self
            .scopes
            .all()
            .into_iter()
            .filter(|scope| needed.contains(*scope) && !caller.scopes.contains(*scope))
            .map(str::to_string)
            .collect();
        if !missing.is_empty() {
            let needed = missing.join(" ");
            return Err(self.refuse(
                http::StatusCode::FORBIDDEN,
                "insufficient_scope",
                &format!("this request needs the scope {needed}"),
                Some(&needed),
            ));
        }
        parts.extensions.insert::<Caller>(caller);
        Ok(http::Request::from_parts(parts, Full::new(body)))
    }

    /// The scopes the JSON-RPC message(s) in `body` need, besides a valid token.
    fn needed(&self, body: &[u8]) -> BTreeSet<String> {
        let Ok(value) = serde_json::from_slice::<Value>(body) else {
            // Not JSON: rmcp answers it with a parse error, and nothing is called.
            return BTreeSet::new();
        };
        let messages = match value {
            Value::Array(messages) => messages,
            message => vec![message],
        };
        let mut needed = BTreeSet::new();
        for message in &messages {
            match message.get("method").and_then(Value::as_str) {
                Some("tools/call") => {
                    let name = message
                        .pointer("/params/name")
                        .and_then(Value::as_str)
                        .unwrap_or_default();
                    // An unknown tool is refused by the handler, and calls nothing.
                    if let Some(scopes) = self.needs.get(name) {
                        needed.extend(scopes.iter().cloned());
                    }
                }
                Some("tasks/cancel" | "tasks/update") => {
                    needed.insert(self.scopes.change.clone());
                }
                _ => {}
            }
        }
        needed
    }

    /// `401` for a request without a token: where to learn how to get one, and the
    /// least scope to start with (a free read's).
    fn challenge(&self) -> http::Response<Body> {
        let mut response = plain(
            http::StatusCode::UNAUTHORIZED,
            "this server needs an OAuth access token (Authorization: Bearer …)\n",
        );
        let value = format!(
            "Bearer resource_metadata=\"{}\", scope=\"{}\"",
            self.metadata_url, self.scopes.read
        );
        if let Ok(value) = http::HeaderValue::from_str(&value) {
            response
                .headers_mut()
                .insert(http::header::WWW_AUTHENTICATE, value);
        }
        response
    }

    fn refuse(
        &self,
        status: http::StatusCode,
        error: &str,
        description: &str,
        scope: Option<&str>,
    ) -> http::Response<Body> {
        let mut value = format!("Bearer error=\"{error}\", error_description=\"{description}\"");
        if let Some(scope) = scope {
            value.push_str(&format!(", scope=\"{scope}\""));
        }
        value.push_str(&format!(", resource_metadata=\"{}\"", self.metadata_url));
        let body = json!({"error": error, "error_description": description}).to_string();
        let mut response = http::Response::new(Full::new(Bytes::from(body)).boxed());
        *response.status_mut() = status;
        response.headers_mut().insert(
            http::header::CONTENT_TYPE,
            http::HeaderValue::from_static("application/json"),
        );
        if let Ok(value) = http::HeaderValue::from_str(&value) {
            response
                .headers_mut()
                .insert(http::header::WWW_AUTHENTICATE, value);
        }
        response
    }
}

/// The token of `Authorization: Bearer <token>` (the scheme in any case).
fn bearer(headers: &http::HeaderMap) -> Option<String> {
    let value = headers.get(http::header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.trim().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then(|| token.to_string())
}

/// `https://host:port/mcp` → (`https://host:port`, `/mcp`).
fn split_resource(resource: &str) -> Option<(String, String)> {
    let (scheme, rest) = resource.split_once("://")?;
    if scheme != "https" && scheme != "http" {
        return None;
    }
    let (authority, path) = match rest.split_once('/') {
        Some((authority, path)) => (authority, format!("/{}", path.trim_end_matches('/'))),
        None => (rest, String::new()),
    };
    if authority.is_empty() {
        return None;
    }
    let path = if path == "/" { String::new() } else { path };
    Some((format!("{scheme}://{authority}"), path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_metadata_lives_beside_the_resource_path() {
        assert_eq!(
            split_resource("https://mcp.example.com/mcp"),
            Some(("https://mcp.example.com".into(), "/mcp".into()))
        );
        assert_eq!(
            split_resource("http://127.0.0.1:8000/"),
            Some(("http://127.0.0.1:8000".into(), String::new()))
        );
        assert_eq!(split_resource("mcp.example.com/mcp"), None);
    }

    #[test]
    fn only_a_bearer_authorization_header_carries_a_token() {
        let mut headers = http::HeaderMap::new();
        assert_eq!(bearer(&headers), None);
        headers.insert(
            http::header::AUTHORIZATION,
            http::HeaderValue::from_static("bearer abc.def.ghi"),
        );
        assert_eq!(bearer(&headers).as_deref(), Some("abc.def.ghi"));
        headers.insert(
            http::header::AUTHORIZATION,
            http::HeaderValue::from_static("Basic dXNlcjpwYXNz"),
        );
        assert_eq!(bearer(&headers), None);
    }
}
