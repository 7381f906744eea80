//! A real OAuth 2.1 authorization server for the tests of `serve --http`'s inbound
//! authorization: oidc-provider (`tests/auth/server.mjs`, pinned by
//! `tests/auth/package-lock.json`; tests/auth/README.md says how it is configured).
//!
//! Takes: the scopes its resource servers allow (`AuthServer::start("vidgen:read …")`).
//! Returns: an `AuthServer` with its issuer, its endpoints, and tokens got the way a
//! client gets them (the client-credentials grant with an RFC 8707 `resource`), for two
//! people (`ALICE`, `BOB`: different `sub` and `client_id`) and a resource-server client
//! that introspects (`introspection_client`). Each `start` is a server of its own, with
//! keys and secrets made at its start. `AuthServer::provider` starts one that plays a
//! provider's authorization server for `serve` as its OAuth client (issue 46): serve's
//! registration there (`SERVE`, confidential, and `SERVE_PUBLIC`), logins and consent that
//! complete by themselves for one person, refresh tokens, optionally a short access-token
//! lifetime (`provider_with_ttl`), `authorize`, which follows an authorization URL to the
//! callback with plain HTTP, and `issued`, every token its grants answered with.
//!
//! Installing: `npm ci` from the lockfile, once per lockfile and node version, into a
//! cache outside the repository (`support::node`), so `cargo test` works on a fresh
//! machine that has node.
//!
//! Must never: skip a test when node, npm or the registry is missing (it fails, saying
//! which), mint a token itself, listen anywhere but 127.0.0.1, or outlive the test binary:
//! the server is killed when the handle drops, and exits by itself when its stdin (a pipe
//! from this process) closes, which the kernel does however the test binary ends.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::{BufRead as _, BufReader, Read as _};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Mutex;
use std::sync::mpsc;
use std::time::Duration;

use base64::Engine as _;
use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::Value;

use super::http::{self, Answer};
use super::node::{self, NEEDS_NODE};

/// One person: a confidential client allowed every scope.
pub(crate) const ALICE: &str = "alice";
/// Another person, so a test can tell two principals apart.
pub(crate) const BOB: &str = "bob";
/// The resource server's own client: no grant, only introspection (what `serve
/// --auth-introspection` authenticates as).
pub(crate) const RESOURCE_SERVER: &str = "connectorgen-serve";

/// serve's registration at the provider (`AuthServer::provider`): a confidential client
/// (`client_secret_basic`) of the authorization-code flow with refresh.
pub(crate) const SERVE: &str = "connectorgen-serve-at-provider";
/// The same registration as a public client (no secret: PKCE alone; oidc-provider
/// rotates its refresh tokens).
pub(crate) const SERVE_PUBLIC: &str = "connectorgen-serve-public";

/// How long the server may take to print its issuer: a bound that turns a hang into a
/// failure, never a pacing device.
const START: Duration = Duration::from_secs(60);

/// The file in the server's folder its journal of issued tokens is written to.
const JOURNAL: &str = "issued.jsonl";

/// One token answer the server gave (`AuthServer::issued`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Issued {
    /// `authorization_code` or `refresh_token`.
    pub grant_type: String,
    pub client_id: String,
    pub access_token: String,
    pub refresh_token: Option<String>,
}

/// A running authorization server; stopped when dropped.
pub(crate) struct AuthServer {
    child: Child,
    /// Held so that the server's stdin closes only when this handle (or the process) ends.
    _stdin: ChildStdin,
    issuer: String,
    /// The discovery document (`/.well-known/openid-configuration`).
    metadata: Value,
    /// Client id → secret, made at start.
    secrets: BTreeMap<String, String>,
    /// Token → the client it was issued to: revocation must be asked by that client.
    issued: Mutex<BTreeMap<String, String>>,
    /// The copy of server.mjs, its clients file and its stderr.
    work: tempfile::TempDir,
}

impl AuthServer {
    /// Installs oidc-provider when the cache lacks it, starts the server on a free
    /// loopback port and waits for its issuer. Panics, with the server's stderr, when it
    /// does not start.
    pub(crate) fn start(scopes: &str) -> AuthServer {
        AuthServer::launch(scopes, &[], &[])
    }

    /// A provider's authorization server, for `serve` as its OAuth client: besides
    /// `start`'s clients, `SERVE` (with a secret) and `SERVE_PUBLIC` (without) registered
    /// for the authorization-code flow and refresh with `redirect_uri`; every login signs
    /// in as `subject` and grants what is asked, with no page to fill in; an
    /// authorization request naming no resource is for `resource` (the provider's API,
    /// its scopes `scopes`). Its token endpoint with `?format=opaque` issues opaque access
    /// tokens, which `introspect` reads.
    pub(crate) fn provider(
        scopes: &str,
        redirect_uri: &str,
        subject: &str,
        resource: &str,
    ) -> AuthServer {
        AuthServer::provider_with_ttl(scopes, redirect_uri, subject, resource, None)
    }

    /// `provider`, its access tokens good for `ttl` seconds (`None`: the server's
    /// default, 600): a token that expires within serve's refresh margin is due at once,
    /// so a test sees a refresh without waiting for a clock.
    pub(crate) fn provider_with_ttl(
        scopes: &str,
        redirect_uri: &str,
        subject: &str,
        resource: &str,
        ttl: Option<u64>,
    ) -> AuthServer {
        let code_clients = [
            serde_json::json!({ "client_id": SERVE, "client_secret": random_hex(),
                                "redirect_uris": [redirect_uri] }),
            serde_json::json!({ "client_id": SERVE_PUBLIC, "redirect_uris": [redirect_uri] }),
        ];
        let ttl = ttl.map(|seconds| seconds.to_string());
        let mut args = vec!["--login", subject, "--default-resource", resource];
        if let Some(ttl) = &ttl {
            args.extend(["--access-token-ttl", ttl.as_str()]);
        }
        AuthServer::launch(scopes, &args, &code_clients)
    }

    /// `start`'s clients and `more` (each with its own secret, or none), and `args`.
    fn launch(scopes: &str, args: &[&str], more: &[Value]) -> AuthServer {
        let modules = node::installed("tests/auth");
        let work = tempfile::Builder::new()
            .prefix("connectorgen-authz-")
            .tempdir()
            .expect("a folder for the authorization server");
        // A copy beside a link to the installed packages: node resolves `oidc-provider`
        // from the script's real folder, and the repository has no node_modules.
        std::fs::copy(
            auth_dir().join("server.mjs"),
            work.path().join("server.mjs"),
        )
        .expect("copy tests/auth/server.mjs");
        std::os::unix::fs::symlink(modules, work.path().join("node_modules"))
            .expect("link node_modules");
        let mut secrets: BTreeMap<String, String> = [ALICE, BOB, RESOURCE_SERVER]
            .iter()
            .map(|id| ((*id).to_string(), random_hex()))
            .collect();
        let mut clients: Vec<Value> = secrets
            .iter()
            .map(|(id, secret)| {
                let mut client = serde_json::json!({ "client_id": id, "client_secret": secret });
                if id == RESOURCE_SERVER {
                    client["grant_types"] = serde_json::json!([]);
                }
                client
            })
            .collect();
        for client in more {
            if let (Some(id), Some(secret)) = (
                client["client_id"].as_str(),
                client["client_secret"].as_str(),
            ) {
                secrets.insert(id.to_string(), secret.to_string());
            }
            clients.push(client.clone());
        }
        let clients_file = work.path().join("clients.json");
        std::fs::write(&clients_file, serde_json::to_string(&clients).unwrap())
            .expect("write the clients file");
        let stderr = std::fs::File::create(work.path().join("stderr.log")).expect("a log file");
        let mut child = Command::new("node")
            .arg(work.path().join("server.mjs"))
            .arg("--scopes")
            .arg(scopes)
            .arg("--clients")
            .arg(&clients_file)
            .arg("--journal")
            .arg(work.path().join(JOURNAL))
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .unwrap_or_else(|e| panic!("{NEEDS_NODE} ({e})"));
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        // The first line on a thread, so the wait is bounded; the thread then drains
        // stdout until the server ends, so a later write never meets a closed pipe.
        let (said, first) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            let mut line = String::new();
            let _ = reader.read_line(&mut line);
            let _ = said.send(line);
            let _ = std::io::copy(&mut reader, &mut std::io::sink());
        });
        // The handle exists before the wait, so a server that fails to start is killed by
        // its drop like any other.
        let mut server = AuthServer {
            child,
            _stdin: stdin,
            issuer: String::new(),
            metadata: Value::Null,
            secrets,
            issued: Mutex::new(BTreeMap::new()),
            work,
        };
        let line = first.recv_timeout(START).unwrap_or_default();
        let issuer = serde_json::from_str::<Value>(&line)
            .ok()
            .and_then(|ready| ready["issuer"].as_str().map(str::to_string))
            .unwrap_or_else(|| {
                panic!(
                    "tests/auth/server.mjs printed no issuer within {START:?} (it printed {line:?}); its stderr:\n{}",
                    server.stderr()
                )
            });
        assert!(
            issuer.starts_with("http://127.0.0.1:"),
            "the authorization server must be on loopback: {issuer}"
        );
        let discovery = http::request(
            "GET",
            &format!("{issuer}/.well-known/openid-configuration"),
            &[],
            "",
        );
        assert_eq!(discovery.status, 200, "discovery: {}", discovery.body);
        server.metadata = discovery.json();
        server.issuer = issuer;
        server
    }

    /// `http://127.0.0.1:<port>`, the `iss` of every token.
    pub(crate) fn issuer(&self) -> String {
        self.issuer.clone()
    }

    /// The discovery document, as served.
    pub(crate) fn metadata(&self) -> &Value {
        &self.metadata
    }

    /// The RFC 7662 introspection endpoint.
    pub(crate) fn introspection_url(&self) -> String {
        self.endpoint("introspection_endpoint")
    }

    /// The id and secret `RESOURCE_SERVER` introspects with (`client_secret_basic`).
    pub(crate) fn introspection_client(&self) -> (String, String) {
        (RESOURCE_SERVER.to_string(), self.secret(RESOURCE_SERVER))
    }

    /// A JWT access token for `client` (`ALICE` or `BOB`), audience `resource`, with
    /// `scope` (space-separated). Panics with the server's error when refused.
    pub(crate) fn token(&self, client: &str, resource: &str, scope: &str) -> String {
        self.granted(client, &self.endpoint("token_endpoint"), resource, scope)
    }

    /// The same as [`AuthServer::token`], but an opaque token: one only introspection can
    /// read, and revocation can end.
    pub(crate) fn opaque_token(&self, client: &str, resource: &str, scope: &str) -> String {
        let url = format!("{}?format=opaque", self.endpoint("token_endpoint"));
        self.granted(client, &url, resource, scope)
    }

    /// The token endpoint's answer to `client`'s request, granted or not: for a test of
    /// what is refused (`invalid_scope`, `invalid_target`).
    pub(crate) fn token_request(&self, client: &str, resource: &str, scope: &str) -> Answer {
        self.ask(&self.endpoint("token_endpoint"), client, resource, scope)
    }

    /// Revokes `token` (RFC 7009), asked by the client it was issued to. Only an opaque
    /// token can be revoked: oidc-provider stores no JWT, so it answers 200 to a JWT's
    /// revocation and the JWT stays valid until it expires.
    pub(crate) fn revoke(&self, token: &str) {
        let client = self
            .issued
            .lock()
            .unwrap()
            .get(token)
            .cloned()
            .expect("revoke: a token this server issued through this handle");
        let answer = self.post(
            &self.endpoint("revocation_endpoint"),
            &client,
            &format!("token={}", encode(token)),
        );
        assert_eq!(answer.status, 200, "revocation: {}", answer.body);
    }

    /// The introspection of `token` (RFC 7662), asked by `RESOURCE_SERVER`. A JWT always
    /// introspects as `{"active": false}` (oidc-provider does not store it).
    pub(crate) fn introspect(&self, token: &str) -> Value {
        let answer = self.post(
            &self.introspection_url(),
            RESOURCE_SERVER,
            &format!("token={}", encode(token)),
        );
        assert_eq!(answer.status, 200, "introspection: {}", answer.body);
        answer.json()
    }

    /// The discovery document's `name` endpoint (`authorization_endpoint`,
    /// `token_endpoint`, `revocation_endpoint`, …).
    pub(crate) fn endpoint_url(&self, name: &str) -> String {
        self.endpoint(name)
    }

    /// `client`'s secret, made at start (`SERVE`'s, for serve's registration).
    pub(crate) fn client_secret(&self, client: &str) -> String {
        self.secret(client)
    }

    /// What a person's browser does with an authorization URL on a server started by
    /// `provider`: each answer's redirect followed, cookies kept (oidc-provider binds the
    /// interaction to them), until one points at `redirect_uri`: that URL, the callback
    /// with its query. Panics, with the last answer, when the flow stops elsewhere.
    pub(crate) fn authorize(&self, url: &str, redirect_uri: &str) -> String {
        let mut cookies: BTreeMap<String, String> = BTreeMap::new();
        let mut url = url.to_string();
        // Login and consent: two interactions, each a redirect there and one back.
        for _ in 0..10 {
            let cookie = cookies
                .iter()
                .map(|(name, value)| format!("{name}={value}"))
                .collect::<Vec<_>>()
                .join("; ");
            let headers: &[(&str, &str)] = if cookie.is_empty() {
                &[]
            } else {
                &[("Cookie", &cookie)]
            };
            let answer = http::request("GET", &url, headers, "");
            for (name, value) in &answer.headers {
                if name == "set-cookie"
                    && let Some((pair, _)) = format!("{value};").split_once(';')
                    && let Some((name, value)) = pair.split_once('=')
                {
                    cookies.insert(name.trim().to_string(), value.to_string());
                }
            }
            let Some(location) = answer
                .header("location")
                .filter(|_| answer.status / 100 == 3)
            else {
                panic!(
                    "the authorization flow stopped at {url}: {} {}\n{}",
                    answer.status,
                    answer.body,
                    self.stderr()
                );
            };
            url = if location.starts_with('/') {
                format!("{}{location}", self.issuer)
            } else {
                location.to_string()
            };
            if url.starts_with(redirect_uri) {
                return url;
            }
        }
        panic!("no redirect to {redirect_uri} after 10 steps (the last to {url})")
    }

    /// Revokes `token` (RFC 7009) as `client` would, from outside whatever holds it:
    /// with its secret, or with its `client_id` in the body for a public client. A
    /// refresh token's revocation ends its grant, the grant's access tokens with it.
    pub(crate) fn revoke_as(&self, client: &str, token: &str) {
        let url = self.endpoint("revocation_endpoint");
        let answer = if self.secrets.contains_key(client) {
            self.post(&url, client, &format!("token={}", encode(token)))
        } else {
            http::request(
                "POST",
                &url,
                &[("Content-Type", "application/x-www-form-urlencoded")],
                &format!("token={}&client_id={}", encode(token), encode(client)),
            )
        };
        assert_eq!(answer.status, 200, "revocation: {}", answer.body);
    }

    /// Every token answer of the authorization-code and refresh grants so far, oldest
    /// first (the server's `--journal`): what `serve`, its client, was given.
    pub(crate) fn issued(&self) -> Vec<Issued> {
        std::fs::read_to_string(self.work.path().join(JOURNAL))
            .unwrap_or_default()
            .lines()
            .map(|line| {
                let said: Value = serde_json::from_str(line)
                    .unwrap_or_else(|e| panic!("a journal line ({e}): {line}"));
                Issued {
                    grant_type: said["grant_type"].as_str().unwrap_or_default().to_string(),
                    client_id: said["client_id"].as_str().unwrap_or_default().to_string(),
                    access_token: said["access_token"]
                        .as_str()
                        .expect("an access token")
                        .to_string(),
                    refresh_token: said["refresh_token"].as_str().map(str::to_string),
                }
            })
            .collect()
    }

    /// What the server wrote on stderr so far (for a failing assertion's evidence).
    pub(crate) fn stderr(&self) -> String {
        std::fs::read_to_string(self.work.path().join("stderr.log")).unwrap_or_default()
    }

    /// The client-credentials grant at `url`, with one RFC 8707 `resource`.
    fn ask(&self, url: &str, client: &str, resource: &str, scope: &str) -> Answer {
        let body = format!(
            "grant_type=client_credentials&resource={}&scope={}",
            encode(resource),
            encode(scope)
        );
        self.post(url, client, &body)
    }

    fn granted(&self, client: &str, url: &str, resource: &str, scope: &str) -> String {
        let answer = self.ask(url, client, resource, scope);
        let token = (answer.status == 200)
            .then(|| answer.json()["access_token"].as_str().map(str::to_string))
            .flatten()
            .unwrap_or_else(|| {
                panic!(
                    "no token for {client} (resource {resource}, scope {scope:?}): {} {}",
                    answer.status, answer.body
                )
            });
        self.issued
            .lock()
            .unwrap()
            .insert(token.clone(), client.to_string());
        token
    }

    fn post(&self, url: &str, client: &str, body: &str) -> Answer {
        let basic = base64::engine::general_purpose::STANDARD
            .encode(format!("{client}:{}", self.secret(client)));
        http::request(
            "POST",
            url,
            &[
                ("Authorization", &format!("Basic {basic}")),
                ("Content-Type", "application/x-www-form-urlencoded"),
            ],
            body,
        )
    }

    fn secret(&self, client: &str) -> String {
        self.secrets.get(client).cloned().unwrap_or_else(|| {
            panic!("no client {client:?} with a secret: use ALICE, BOB, RESOURCE_SERVER or SERVE")
        })
    }

    fn endpoint(&self, name: &str) -> String {
        self.metadata[name]
            .as_str()
            .unwrap_or_else(|| panic!("the discovery document has no {name}"))
            .to_string()
    }
}

impl Drop for AuthServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `tests/auth` in the repository.
fn auth_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/auth")
}

/// 32 hex digits from the system's randomness: a client secret of this run only.
fn random_hex() -> String {
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .expect("read /dev/urandom");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn encode(value: &str) -> String {
    utf8_percent_encode(value, NON_ALPHANUMERIC).to_string()
}
