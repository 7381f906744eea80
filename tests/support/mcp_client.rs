//! A real MCP client (rmcp's) driving a real `connectorgen serve` process, over stdio or
//! Streamable HTTP, for the end-to-end tests. Takes the manifest, the provider's URL,
//! a state folder and how the simulated person answers consent; returns a connected
//! client and a guard that kills the server when dropped (a failing test included).
//! Never mocks the protocol, never binds or contacts anything but 127.0.0.1.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, ClientCapabilities,
    ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationCapability,
    ErrorData, FormElicitationCapability, GetTaskParams, GetTaskResult, Implementation,
    InputRequest, InputRequests, InputResponses, ProtocolVersion, UpdateTaskParams,
};
use rmcp::service::{RequestContext, RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt as _};
use serde_json::{Map, Value};
use tokio::io::{AsyncBufReadExt as _, BufReader};

use super::provider::TOKEN;

/// A bound on one protocol exchange: catches a hang, never paces anything.
pub(crate) const NO_HANG: Duration = Duration::from_secs(60);

/// What the simulated person says when the server asks for consent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Answer {
    Accept,
    Decline,
}

/// The client's side of a session: which revision it speaks and whether it can show
/// the person a form (elicitation).
#[derive(Debug, Clone)]
pub(crate) struct Person {
    /// `None`: the client declares no elicitation capability.
    pub answer: Option<Answer>,
    /// 2026-07-28 (`server/discover`, input-required results) or an earlier revision
    /// (`initialize`, `elicitation/create` during the call).
    pub revision: Revision,
    /// The messages of every consent form shown, in order.
    pub asked: Arc<Mutex<Vec<String>>>,
    /// How many forms were shown so far, to wait on.
    pub shown: Arc<tokio::sync::watch::Sender<usize>>,
    /// `Some`: the person answers a form only once a permit is added (`answer_now`),
    /// so a test can have two forms open at once.
    pub gate: Option<Arc<tokio::sync::Semaphore>>,
    /// The client declares the tasks extension (`io.modelcontextprotocol/tasks`).
    pub tasks: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Revision {
    Current,
    Earlier,
}

impl Person {
    pub(crate) fn without_elicitation() -> Person {
        Person {
            answer: None,
            revision: Revision::Earlier,
            asked: Arc::default(),
            shown: Arc::new(tokio::sync::watch::channel(0).0),
            gate: None,
            tasks: false,
        }
    }

    pub(crate) fn answering(answer: Answer, revision: Revision) -> Person {
        Person {
            answer: Some(answer),
            revision,
            asked: Arc::default(),
            shown: Arc::new(tokio::sync::watch::channel(0).0),
            gate: None,
            tasks: false,
        }
    }

    /// The same person, who answers only after `answer_now`.
    pub(crate) fn holding(mut self) -> Person {
        self.gate = Some(Arc::new(tokio::sync::Semaphore::new(0)));
        self
    }

    /// The same person, on a client that declares the tasks extension.
    pub(crate) fn with_tasks(mut self) -> Person {
        self.tasks = true;
        self
    }

    /// Lets a holding person answer every form, shown or to come.
    pub(crate) fn answer_now(&self) {
        if let Some(gate) = &self.gate {
            gate.add_permits(tokio::sync::Semaphore::MAX_PERMITS / 2);
        }
    }

    /// Waits until `n` forms were shown (bounded by `NO_HANG`).
    pub(crate) async fn wait_shown(&self, n: usize) {
        let mut shown = self.shown.subscribe();
        let waited = tokio::time::timeout(NO_HANG, shown.wait_for(|k| *k >= n)).await;
        assert!(
            matches!(waited, Ok(Ok(_))),
            "{n} forms were never shown: {:?}",
            self.asked()
        );
    }

    pub(crate) fn asked(&self) -> Vec<String> {
        self.asked
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

impl ClientHandler for Person {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        if self.answer.is_some() {
            capabilities.elicitation =
                Some(ElicitationCapability::new().with_form(FormElicitationCapability::default()));
        }
        if self.tasks {
            capabilities.extensions = Some(
                [(rmcp::model::TASKS_EXTENSION_ID.to_string(), Map::new())]
                    .into_iter()
                    .collect(),
            );
        }
        let version = match self.revision {
            Revision::Current => ProtocolVersion::V_2026_07_28,
            Revision::Earlier => ProtocolVersion::V_2025_11_25,
        };
        ClientConfig::new(
            capabilities,
            Implementation::new("connectorgen-e2e", "0.0.0"),
        )
        .with_protocol_version(version)
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        Ok(self.answer_form(&request).await)
    }
}

impl Person {
    /// Shows the person a form and returns their answer: for `elicitation/create`, and
    /// for a question in an input-required result or a task's `inputRequests`.
    pub(crate) async fn answer_form(&self, request: &ElicitRequestParams) -> ElicitResult {
        let message = match request {
            ElicitRequestParams::FormElicitationParams { message, .. } => message.clone(),
            other => format!("not a form: {other:?}"),
        };
        self.asked
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(message);
        self.shown.send_modify(|n| *n += 1);
        if let Some(gate) = &self.gate {
            let _ = gate.acquire().await;
        }
        match self.answer {
            Some(Answer::Accept) => ElicitResult::new(ElicitationAction::Accept)
                .with_content(serde_json::json!({ "confirm": true })),
            Some(Answer::Decline) | None => ElicitResult::new(ElicitationAction::Decline),
        }
    }

    /// The person's answers to `requests` (forms only), by key, as a client sends them.
    pub(crate) async fn answer_all(&self, requests: &InputRequests) -> InputResponses {
        let mut responses = InputResponses::new();
        for (key, request) in requests {
            let InputRequest::Elicitation(form) = request else {
                panic!("the person is asked only forms, got {request:?}");
            };
            let answer = self.answer_form(&form.params).await;
            responses.insert(key.clone(), serde_json::to_value(answer).unwrap());
        }
        responses
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Transport {
    Stdio,
    Http,
}

/// How to start `connectorgen serve`.
#[derive(Debug, Clone)]
pub(crate) struct Serve {
    pub manifest: PathBuf,
    pub base_url: String,
    pub state: PathBuf,
    pub extra: Vec<String>,
    pub token: Option<String>,
    /// Further environment variables (another manifest's credential variable).
    pub env: Vec<(String, String)>,
    /// A program and its arguments the server is started through (`prlimit …`), the
    /// binary and its arguments following.
    pub through: Vec<String>,
    /// Where `--http` listens: any free port unless told (`on`).
    pub address: String,
}

impl Serve {
    /// `connectorgen serve MANIFEST --base-url URL --state STATE` with the provider's token.
    pub(crate) fn new(manifest: impl AsRef<Path>, base_url: &str, state: &Path) -> Serve {
        Serve {
            manifest: manifest.as_ref().to_path_buf(),
            base_url: base_url.to_string(),
            state: state.to_path_buf(),
            extra: Vec::new(),
            token: Some(TOKEN.to_string()),
            env: Vec::new(),
            through: Vec::new(),
            address: "127.0.0.1:0".to_string(),
        }
    }

    /// Listens on `address` over HTTP: for a test that must name serve's origin before
    /// it starts (a callback registered at an authorization server).
    pub(crate) fn on(mut self, address: &str) -> Serve {
        self.address = address.to_string();
        self
    }

    /// Serves `manifest` instead.
    pub(crate) fn manifest(mut self, manifest: impl AsRef<Path>) -> Serve {
        self.manifest = manifest.as_ref().to_path_buf();
        self
    }

    pub(crate) fn env(mut self, name: &str, value: &str) -> Serve {
        self.env.push((name.to_string(), value.to_string()));
        self
    }

    pub(crate) fn arg(mut self, arg: &str) -> Serve {
        self.extra.push(arg.to_string());
        self
    }

    /// Starts the server through `program` and `args` (which end by running what follows
    /// them: `sh -c '…; exec "$@"' sh`).
    pub(crate) fn through(mut self, program_and_args: &[&str]) -> Serve {
        self.through = program_and_args.iter().map(|a| (*a).to_string()).collect();
        self
    }

    fn command(&self, transport: Transport) -> tokio::process::Command {
        let bin = env!("CARGO_BIN_EXE_connectorgen");
        let mut cmd = match self.through.split_first() {
            Some((program, args)) => {
                let mut cmd = tokio::process::Command::new(program);
                cmd.args(args).arg(bin);
                cmd
            }
            None => tokio::process::Command::new(bin),
        };
        cmd.arg("serve")
            .arg(&self.manifest)
            .arg("--base-url")
            .arg(&self.base_url)
            .arg("--state")
            .arg(&self.state)
            // The bundled base-mode examples name their documents in examples/specs/,
            // outside the manifests' folder.
            .arg("--allow-read")
            .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/specs"))
            .args(&self.extra)
            .env("NO_COLOR", "1")
            .env_remove("VIDGEN_TOKEN")
            .env_remove("EXAMPLE_TOKEN")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // The guard: a test that fails (panics) drops the child, which kills it.
            .kill_on_drop(true);
        for (name, value) in &self.env {
            cmd.env(name, value);
        }
        if transport == Transport::Http {
            cmd.arg("--http").arg(&self.address);
        }
        if let Some(token) = &self.token {
            for var in ["VIDGEN_TOKEN", "EXAMPLE_TOKEN"] {
                cmd.env(var, token);
            }
        }
        cmd
    }

    /// Starts the server and connects `person` to it.
    pub(crate) async fn connect(&self, transport: Transport, person: Person) -> Session {
        match transport {
            Transport::Http => self.listen().await.session(person, None).await,
            Transport::Stdio => {
                let mut started = self.start(Transport::Stdio);
                let stdout = started.child.stdout.take().expect("piped stdout");
                let stdin = started.child.stdin.take().expect("piped stdin");
                let client = tokio::time::timeout(
                    NO_HANG,
                    person
                        .clone()
                        .serve_with_lifecycle((stdout, stdin), lifecycle(person.revision)),
                )
                .await;
                let client = connected(client, &started.log);
                Session {
                    client,
                    person,
                    log: started.log,
                    logged: started.logged,
                    server: started.child,
                    url: None,
                }
            }
        }
    }

    /// Runs `serve --http` expecting it to refuse to start: its exit code and what it
    /// wrote on stderr (bounded by `NO_HANG`: a server that starts instead fails the test).
    pub(crate) async fn refused(&self) -> (Option<i32>, String) {
        let mut cmd = self.command(Transport::Http);
        cmd.stdin(Stdio::null());
        let output = tokio::time::timeout(NO_HANG, cmd.output())
            .await
            .expect("serve started instead of refusing")
            .expect("serve runs");
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    }

    /// Starts the server over Streamable HTTP, and returns once it says where it listens
    /// (no session yet: a test may need the address for what it connects with).
    pub(crate) async fn listen(&self) -> Listening {
        let started = self.start(Transport::Http);
        let log = started.log.clone();
        let url = tokio::time::timeout(NO_HANG, started.url)
            .await
            .unwrap_or_else(|_| panic!("serve --http never said where it listens: {log:?}"))
            .unwrap_or_else(|_| panic!("serve --http exited: {log:?}"));
        Listening {
            url,
            log: started.log,
            logged: started.logged,
            child: started.child,
        }
    }

    /// The server process, its stderr drained into a log as it comes (so the server
    /// never blocks on a full pipe), and the address an HTTP server announces.
    fn start(&self, transport: Transport) -> Started {
        let mut child = self
            .command(transport)
            .spawn()
            .expect("connectorgen serve starts");
        let stderr = child.stderr.take().expect("piped stderr");
        let log: Arc<Mutex<Vec<String>>> = Arc::default();
        let (url_tx, url_rx) = tokio::sync::oneshot::channel::<String>();
        let lines = log.clone();
        let (logged_tx, logged) = tokio::sync::watch::channel(0usize);
        tokio::spawn(async move {
            let mut url_tx = Some(url_tx);
            let mut reader = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = reader.next_line().await {
                if let Some(url) = listening_url(&line)
                    && let Some(tx) = url_tx.take()
                {
                    let _ = tx.send(url);
                }
                lines
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .push(line);
                logged_tx.send_modify(|n| *n += 1);
            }
        });
        Started {
            child,
            log,
            logged,
            url: url_rx,
        }
    }
}

struct Started {
    child: tokio::process::Child,
    log: Arc<Mutex<Vec<String>>>,
    logged: tokio::sync::watch::Receiver<usize>,
    url: tokio::sync::oneshot::Receiver<String>,
}

/// A `serve --http` process listening, no session yet.
pub(crate) struct Listening {
    /// `http://127.0.0.1:PORT/mcp`.
    pub url: String,
    log: Arc<Mutex<Vec<String>>>,
    logged: tokio::sync::watch::Receiver<usize>,
    child: tokio::process::Child,
}

impl Listening {
    /// What the server wrote on stderr so far.
    pub(crate) fn log(&self) -> Vec<String> {
        self.log
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// `person` connected, with `token` as its bearer token when given.
    pub(crate) async fn session(self, person: Person, token: Option<String>) -> Session {
        let client = http_client(&self.url, person.clone(), token).await;
        let client = connected(client, &self.log);
        Session {
            client,
            person,
            log: self.log,
            logged: self.logged,
            server: self.child,
            url: Some(self.url),
        }
    }
}

fn lifecycle(revision: Revision) -> ClientLifecycleMode {
    match revision {
        Revision::Current => ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        },
        Revision::Earlier => ClientLifecycleMode::Initialize,
    }
}

type Connecting = Result<
    Result<RunningService<RoleClient, Person>, rmcp::service::ClientInitializeError>,
    tokio::time::error::Elapsed,
>;

/// A client of the Streamable HTTP server at `url`, `token` its bearer token.
async fn http_client(url: &str, person: Person, token: Option<String>) -> Connecting {
    // reqwest is built without a default TLS provider (the crate's choice: ring only);
    // the client needs one installed even for plain HTTP.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_string());
    config.auth_header = token;
    let lifecycle = lifecycle(person.revision);
    tokio::time::timeout(
        NO_HANG,
        person.serve_with_lifecycle(
            StreamableHttpClientTransport::from_config(config),
            lifecycle,
        ),
    )
    .await
}

fn connected(
    client: Connecting,
    log: &Arc<Mutex<Vec<String>>>,
) -> RunningService<RoleClient, Person> {
    match client {
        Ok(Ok(client)) => client,
        Ok(Err(e)) => panic!("no MCP session: {e}\n{log:?}"),
        Err(elapsed) => panic!("no MCP session within {NO_HANG:?} ({elapsed}): {log:?}"),
    }
}

/// `{"event":"listening","url":"http://127.0.0.1:PORT/mcp"}` → the URL.
fn listening_url(line: &str) -> Option<String> {
    let value: Value = serde_json::from_str(line).ok()?;
    if value.get("event")?.as_str()? != "listening" {
        return None;
    }
    Some(value.get("url")?.as_str()?.to_string())
}

/// A connected client and the server process it talks to; dropping it kills the server.
pub(crate) struct Session {
    pub client: RunningService<RoleClient, Person>,
    pub person: Person,
    log: Arc<Mutex<Vec<String>>>,
    /// Bumped on every line the server writes.
    logged: tokio::sync::watch::Receiver<usize>,
    server: tokio::process::Child,
    /// Where an HTTP server listens (`None` over stdio).
    url: Option<String>,
}

impl Session {
    /// `tools/call NAME ARGS`, through rmcp's own consent rounds (elicitation).
    pub(crate) async fn call(&self, name: &str, args: Value) -> CallToolResult {
        let arguments: Map<String, Value> = match args {
            Value::Object(map) => map,
            other => panic!("arguments must be an object: {other}"),
        };
        let params = CallToolRequestParams::new(name.to_string()).with_arguments(arguments);
        match tokio::time::timeout(NO_HANG, self.client.call_tool(params)).await {
            Ok(Ok(result)) => result,
            Ok(Err(e)) => panic!("tools/call {name}: {e}\nserver log: {:#?}", self.log()),
            Err(elapsed) => panic!(
                "tools/call {name} hung ({elapsed})\nserver log: {:#?}",
                self.log()
            ),
        }
    }

    /// `tools/call NAME ARGS`, the person answering each input-required round (2026-07-28;
    /// on earlier revisions consent by elicitation happens inside the call): a task
    /// comes back as it is, for a client that follows tasks itself.
    pub(crate) async fn call_once(&self, name: &str, args: Value) -> CallToolResponse {
        let arguments: Map<String, Value> = match args {
            Value::Object(map) => map,
            other => panic!("arguments must be an object: {other}"),
        };
        let mut params = CallToolRequestParams::new(name.to_string()).with_arguments(arguments);
        // Bounded like rmcp's own helper: a server that asks forever is a failure.
        for _ in 0..8 {
            let response =
                match tokio::time::timeout(NO_HANG, self.client.call_tool_once(params.clone()))
                    .await
                {
                    Ok(Ok(response)) => response,
                    Ok(Err(e)) => panic!("tools/call {name}: {e}\nserver log: {:#?}", self.log()),
                    Err(elapsed) => panic!("tools/call {name} hung ({elapsed})"),
                };
            let CallToolResponse::InputRequired(asked) = response else {
                return response;
            };
            let requests = asked.input_requests.unwrap_or_default();
            let responses = self.person.answer_all(&requests).await;
            params.input_responses = (!responses.is_empty()).then_some(responses);
            params.request_state = asked.request_state;
        }
        panic!(
            "tools/call {name}: still asking after 8 rounds\n{:#?}",
            self.log()
        )
    }

    /// `tasks/get ID`.
    pub(crate) async fn get_task(&self, id: &str) -> Result<GetTaskResult, rmcp::ServiceError> {
        tokio::time::timeout(
            NO_HANG,
            self.client
                .peer()
                .get_task(GetTaskParams::new(id.to_string())),
        )
        .await
        .unwrap_or_else(|_| panic!("tasks/get {id} hung"))
    }

    /// `tasks/update ID` with `responses`.
    pub(crate) async fn update_task(
        &self,
        id: &str,
        responses: InputResponses,
    ) -> Result<(), rmcp::ServiceError> {
        tokio::time::timeout(
            NO_HANG,
            self.client
                .peer()
                .update_task(UpdateTaskParams::new(id.to_string(), responses)),
        )
        .await
        .unwrap_or_else(|_| panic!("tasks/update {id} hung"))
    }

    /// `tasks/cancel ID`.
    pub(crate) async fn cancel_task(&self, id: &str) -> Result<(), rmcp::ServiceError> {
        tokio::time::timeout(
            NO_HANG,
            self.client
                .peer()
                .cancel_task(CancelTaskParams::new(id.to_string())),
        )
        .await
        .unwrap_or_else(|_| panic!("tasks/cancel {id} hung"))
    }

    /// What the server wrote on stderr so far, one entry per line.
    pub(crate) fn log(&self) -> Vec<String> {
        self.log
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Waits until the server's log satisfies `ready` (bounded by `NO_HANG`): a
    /// barrier on what the server did, never a pause.
    pub(crate) async fn wait_for_log(&self, what: &str, ready: impl Fn(&[String]) -> bool) {
        let mut logged = self.logged.clone();
        let waited = tokio::time::timeout(NO_HANG, async {
            while !ready(&self.log()) {
                if logged.changed().await.is_err() {
                    return;
                }
            }
        })
        .await;
        assert!(
            waited.is_ok() && ready(&self.log()),
            "the server never logged {what}: {:#?}",
            self.log()
        );
    }

    /// The log once a line holding `needle` has arrived: stderr is read by another task,
    /// so a line the server wrote before answering may not be in `log()` yet. Panics
    /// when none arrives within the hang guard.
    pub(crate) async fn log_with(&self, needle: &str) -> Vec<String> {
        let deadline = tokio::time::Instant::now() + NO_HANG;
        loop {
            let log = self.log();
            if log.iter().any(|line| line.contains(needle)) {
                return log;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "no log line with {needle:?} within {NO_HANG:?}: {log:#?}"
            );
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    }

    /// Another session on the same HTTP server, `person` on its client.
    pub(crate) async fn another(&self, person: Person) -> RunningService<RoleClient, Person> {
        self.another_with(person, None).await
    }

    /// Another session on the same HTTP server, `person` on its client, `token` its
    /// bearer token.
    pub(crate) async fn another_with(
        &self,
        person: Person,
        token: Option<String>,
    ) -> RunningService<RoleClient, Person> {
        let url = self
            .url
            .clone()
            .expect("another session needs serve --http");
        connected(http_client(&url, person, token).await, &self.log)
    }

    /// Kills the server (SIGKILL: `kill -9`) without a word to it first, and waits until
    /// it is gone: the client is left as it was, its requests unanswered.
    pub(crate) async fn kill_server(&mut self) {
        self.server.start_kill().expect("the server can be killed");
        let _ = tokio::time::timeout(NO_HANG, self.server.wait()).await;
    }

    /// Ends the session and the server (a restart is `drop` then `Serve::connect`).
    pub(crate) async fn close(self) {
        let Session {
            client, mut server, ..
        } = self;
        let _ = tokio::time::timeout(NO_HANG, client.cancel()).await;
        let _ = server.kill().await;
    }
}

/// The result's structured content, or its first text parsed as JSON.
pub(crate) fn json_of(result: &CallToolResult) -> Value {
    if let Some(value) = &result.structured_content {
        return value.clone();
    }
    serde_json::from_str(&text_of(result)).unwrap_or(Value::Null)
}

/// Every text block of the result, joined by newlines.
pub(crate) fn text_of(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

pub(crate) fn is_error(result: &CallToolResult) -> bool {
    result.is_error == Some(true)
}

/// Whether the provider answered the call with success: a success, or the tool error
/// serve makes of a successful answer that does not match the tool's `outputSchema`
/// (for the tests of what is sent, whose recorder answers one body to every tool).
pub(crate) fn went_through(result: &CallToolResult) -> bool {
    !is_error(result) || serve_meta(result)["outputSchemaMismatch"] == true
}

/// What serve says about a result, machine-readably (`_meta["dev.connectorgen/serve"]`).
pub(crate) fn serve_meta(result: &CallToolResult) -> Value {
    result
        .meta
        .as_ref()
        .and_then(|m| m.0.get("dev.connectorgen/serve"))
        .cloned()
        .unwrap_or(Value::Null)
}
