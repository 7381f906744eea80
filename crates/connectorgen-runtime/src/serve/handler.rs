//! The MCP handler: lists the connector's tools and carries each call through the
//! defences to the provider.
//!
//! Takes: the connector, its tools with their mappings, the client, the ledger, the
//! sealer. Returns: MCP results (`rmcp`'s types).
//! Must never: send a call the guard did not clear, or send it before its ledger row is
//! durable.

use std::collections::HashMap;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ErrorData, Implementation, ListToolsResult,
    PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Map, Value, json};

use super::Config;
use super::log::Redactor;
use super::output;
use super::reply::{self, Poll, Why};
use crate::client::{Client, HttpResponse};
use crate::credential::{Credential, Environment, ReadVariable};
use crate::guard::{self, Verdict};
use crate::ledger::{self, Entry, Found, Ledger, LedgerError, Outcome, OwnedClaim, Status};
use crate::request::{self, Target};
use crate::seal::{Purpose, Sealer};
use connectorgen_core::model::{Connector, Idempotency, Operation, Returns};
use connectorgen_core::render::mcp::OUTPUT_SCHEMA_META_KEY;
use connectorgen_core::render::mcp::mapping::{self, RequestMapping};

/// The argument serve adds to tracked tools: the one-time value of a consent.
pub(super) const CONFIRMATION_ARGUMENT: &str = "confirmation";

/// The key of the consent question in an input-required result.
const CONSENT_INPUT: &str = "consent";

mod calls;
mod consent;
mod duplicate;
mod tasks;

use consent::{Asked, Asking, Consent, asking};

/// What `prepare` hands over.
pub(super) struct Parts {
    pub connector: Connector,
    pub tools: Vec<(Value, RequestMapping)>,
    pub credentials: Vec<Option<Credential>>,
    pub client: Client,
    pub ledger: Arc<dyn Ledger>,
    pub sealer: Sealer,
    pub config: Config,
    pub redactor: Redactor,
    pub env_name: String,
    /// The environment variables read at start-up (the allowed ones): `fixed:` inputs
    /// come from here, never from the process environment.
    pub environment: Environment,
    /// The descriptions served instead of `mcp-tools.json`'s, by tool name: a keyed
    /// tool's says the server sends the key (`Analysis::served_descriptions`).
    pub descriptions: std::collections::BTreeMap<String, String>,
}

struct Served {
    tool: Tool,
    mapping: RequestMapping,
    op: Operation,
    credential: Option<Credential>,
    /// Whose calls these are in the ledger: the credential's identity (a hash).
    principal: String,
    /// Recorded in the ledger: spends, async, needs consent, or carries a retry key.
    tracked: bool,
    /// The async operation's poll tool and the argument that takes the job id.
    poll: Option<Poll>,
    /// The tool's output schema, compiled once: every success is checked against it
    /// before it leaves (serve/output.rs).
    output: Option<jsonschema::Validator>,
    /// The free read that shows whether a call went through, for the advice after a
    /// failure (the description's `checkWith`).
    check_with: Option<String>,
}

struct Shared {
    tools: Vec<Served>,
    by_name: HashMap<String, usize>,
    client: Client,
    /// Every store call off the event loop (ledger/handle.rs).
    ledger: ledger::Handle,
    sealer: Sealer,
    config: Config,
    redactor: Redactor,
    /// Reads a `fixed:` input's variable from the ones read at start-up.
    env: Box<ReadVariable>,
    info: ServerConfig,
    /// The state of calls in this process (handler/calls.rs).
    calls: calls::Calls,
}

type InFlight = tokio::sync::watch::Receiver<Option<rmcp::model::CallToolResult>>;

/// The MCP server (cheap to clone: one per HTTP session shares everything).
#[derive(Clone)]
pub(crate) struct Server(Arc<Shared>);

impl Server {
    pub(super) fn new(parts: Parts) -> Result<Server, String> {
        let Parts {
            connector,
            tools,
            credentials,
            client,
            ledger,
            sealer,
            config,
            redactor,
            env_name,
            environment,
            descriptions,
        } = parts;
        let mut served = Vec::new();
        let mut by_name = HashMap::new();
        let mappings: HashMap<String, RequestMapping> = tools
            .iter()
            .map(|(t, m)| {
                (
                    t["name"].as_str().unwrap_or_default().to_string(),
                    m.clone(),
                )
            })
            .collect();
        let checks = connectorgen_core::render::CheckWith::new(&connector);
        for ((mut definition, mapping), credential) in tools.into_iter().zip(credentials) {
            let name = definition["name"].as_str().unwrap_or_default().to_string();
            if let Some(text) = descriptions.get(&name) {
                // The served arguments differ from the file's (no key argument): so does
                // what the description tells the model to send.
                definition["description"] = json!(text);
            }
            let op = connector
                .operations
                .iter()
                .find(|op| op.id == name)
                .cloned()
                .ok_or_else(|| format!("tool {name} has no operation"))?;
            let tracked = op.consent() || op.async_.is_some() || mapping.idempotency.is_some();
            let check_with = checks.of(&op).map(str::to_string);
            let poll = poll_hint(&connector, &op, &mappings);
            let definition = served_definition(definition, &mapping, tracked);
            let mut tool: Tool =
                serde_json::from_value(definition).map_err(|e| format!("tool {name}: {e}"))?;
            let output = output::compile(&tool).unwrap_or_else(|e| {
                // Served without a schema rather than with one its answers are not
                // checked against: a client that checks would refuse good answers.
                output::without_schema(&mut tool);
                redactor.line(
                    "warning",
                    json!({"message": format!(
                        "tool {name}: its output schema cannot be compiled ({e}); it is \
                         served without one"
                    )}),
                );
                None
            });
            by_name.insert(name, served.len());
            served.push(Served {
                tool,
                mapping,
                op,
                principal: principal(credential.as_ref()),
                credential,
                tracked,
                poll,
                output,
                check_with,
            });
        }
        // The tasks extension only where a tool starts a job to follow.
        let capabilities = if served.iter().any(tasks::is_job) {
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tasks()
                .build()
        } else {
            ServerCapabilities::builder().enable_tools().build()
        };
        let mut info = ServerConfig::new(capabilities)
            .with_server_info(Implementation::new(
                connector.service.name.clone(),
                connector.service.version.clone(),
            ))
            .with_instructions(instructions(&connector, &env_name, config.enforce_consent));
        info.protocol_version = ProtocolVersion::LATEST;
        let shared = Arc::new(Shared {
            tools: served,
            by_name,
            client,
            ledger: ledger::Handle::new(ledger),
            sealer,
            config,
            redactor,
            env: Box::new(move |name| environment.get(name)),
            info,
            calls: calls::Calls::default(),
        });
        Ok(Server(shared))
    }

    pub(crate) fn redactor(&self) -> &Redactor {
        &self.0.redactor
    }

    /// Starts offering the ledger, every `HELD_EVERY`, the outcomes it could not take,
    /// and renewing their rows' leases meanwhile: an instance that gets no more calls
    /// still records them once the ledger is back, and until then no other instance can
    /// take a row this process holds the answer of. Called inside the runtime that
    /// serves (it spawns on it); the task ends with the server.
    pub(crate) fn keep_offering_held(&self) {
        let shared = Arc::downgrade(&self.0);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(HELD_EVERY);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                let Some(shared) = shared.upgrade() else {
                    break;
                };
                shared.record_held().await;
            }
        });
    }

    pub(crate) fn allow_hosts(&self) -> &[String] {
        &self.0.config.allow_hosts
    }
}

/// The ledger's principal for calls made with `credential` (`Credential::identity`); the
/// calls of a tool that goes out without one share `NO_CREDENTIAL`.
pub(super) fn principal(credential: Option<&Credential>) -> String {
    credential.map_or_else(|| NO_CREDENTIAL.to_string(), Credential::identity)
}

/// How often outcomes held in memory are offered to the ledger again (docs/serve.md,
/// "A crash between send and record" and "Several instances"): well inside the shortest
/// lease a send holds its row for (`serve::open_ledger`: at least
/// `ledger::LOCK_WAIT_SECONDS` + 5 s), which each offer renews.
const HELD_EVERY: std::time::Duration = std::time::Duration::from_secs(5);

/// The principal of calls made without a credential.
const NO_CREDENTIAL: &str = "none";

fn instructions(connector: &Connector, env_name: &str, enforce: bool) -> String {
    let consent = if enforce {
        "Calls that cost money or credits, or cannot be undone, are sent only after the person \
         agreed to that exact call: answer the question the server asks, or relay its \
         confirmation request to the person."
    } else {
        "Consent enforcement is OFF on this server."
    };
    format!(
        "{} ({}). {consent} Identical calls within the retry window are retries of the same \
         request; a started job is returned again instead of starting a second one: poll it. \
         The credential comes from the server's environment ({env_name}), never from an \
         argument.",
        connector.service.title, connector.service.description
    )
}

/// The tool as `mcp-tools.json` has it, with the retry key argument taken out (the
/// server sends its own), on tracked tools the `confirmation` argument added, and
/// without the request mapping: the server is the one that executes calls, so the
/// mapping is nothing a client can use, and under `--base-url` it would name servers
/// the calls never go to (docs/serve.md, "What clients are sent").
fn served_definition(mut definition: Value, mapping: &RequestMapping, tracked: bool) -> Value {
    if let Some(meta) = definition.get_mut("_meta").and_then(Value::as_object_mut) {
        meta.shift_remove(mapping::META_KEY);
        if meta.is_empty() {
            definition.as_object_mut().map(|d| d.shift_remove("_meta"));
        }
    }
    let schema = &mut definition["inputSchema"];
    if let Some(idem) = &mapping.idempotency {
        if let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut) {
            props.shift_remove(&idem.argument);
        }
        if let Some(required) = schema.get_mut("required").and_then(Value::as_array_mut) {
            required.retain(|r| r.as_str() != Some(idem.argument.as_str()));
        }
    }
    if tracked && let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut) {
        props.insert(
            CONFIRMATION_ARGUMENT.into(),
            json!({
                "type": "string",
                "description": "Leave out. Only when this server answered an earlier call of this \
                    tool with a confirmation value AND the person then agreed: that value, with \
                    the same other arguments."
            }),
        );
    }
    definition
}

/// For a client on 2026-07-28, which allows any JSON Schema as `outputSchema`: the
/// schema `mcp-tools.json` keeps under `_meta` because earlier clients refuse a root
/// that is not an object.
fn with_any_output_schema(tool: &Tool) -> Tool {
    let mut tool = tool.clone();
    let kept = tool
        .meta
        .as_ref()
        .and_then(|m| m.0.get(OUTPUT_SCHEMA_META_KEY))
        .and_then(Value::as_object)
        .cloned();
    if tool.output_schema.is_none()
        && let Some(schema) = kept
    {
        tool.output_schema = Some(Arc::new(schema));
    }
    tool
}

impl rmcp::ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        self.0.info.clone()
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let current = context
            .protocol_version()
            .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28);
        Ok(ListToolsResult::with_all_items(
            self.0
                .tools
                .iter()
                .map(|t| {
                    if current {
                        with_any_output_schema(&t.tool)
                    } else {
                        t.tool.clone()
                    }
                })
                .collect(),
        ))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        let index = *self.0.by_name.get(name)?;
        Some(self.0.tools[index].tool.clone())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(&index) = self.0.by_name.get(request.name.as_ref()) else {
            return Err(ErrorData::invalid_params(
                format!("unknown tool {}", request.name),
                None,
            ));
        };
        // Every answer leaves through the redactor: an error that quotes a URL, a
        // provider that echoes the key.
        match self.0.call(index, request, &context).await {
            Ok(response) => {
                let served = &self.0.tools[index];
                let response = match (response, &served.output) {
                    (CallToolResponse::Complete(result), Some(validator)) => {
                        output::checked(&served.op, result, validator).into()
                    }
                    (other, _) => other,
                };
                Ok(self.0.redactor.response(response))
            }
            Err(error) => Err(self.0.redactor.error(error)),
        }
    }

    async fn initialize(
        &self,
        request: rmcp::model::InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::InitializeResult, ErrorData> {
        context.peer.set_peer_info(request.clone());
        let mut result = self.negotiate_initialize(&request)?;
        // Every revision with an `initialize` predates the tasks extension (SEP-2663:
        // not defined under 2025-11-25), so it is not offered there.
        if result.protocol_version.has_initialize()
            && let Some(extensions) = result.capabilities.extensions.as_mut()
        {
            extensions.remove(rmcp::model::TASKS_EXTENSION_ID);
            if extensions.is_empty() {
                result.capabilities.extensions = None;
            }
        }
        Ok(result)
    }

    async fn get_task(
        &self,
        request: rmcp::model::GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetTaskResult, ErrorData> {
        if !tasks::declared(&context) {
            return Err(tasks::undeclared(&context));
        }
        // Every answer leaves through the redactor, a task's state too.
        match self.0.get_task(&request.task_id).await {
            Ok(task) => self.0.redactor.task(task),
            Err(error) => Err(self.0.redactor.error(error)),
        }
    }

    async fn update_task(
        &self,
        request: rmcp::model::UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if !tasks::declared(&context) {
            return Err(tasks::undeclared(&context));
        }
        self.0
            .update_task(&request.task_id, &request.input_responses, &context)
            .await
            .map_err(|error| self.0.redactor.error(error))
    }

    async fn cancel_task(
        &self,
        request: rmcp::model::CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if !tasks::declared(&context) {
            return Err(tasks::undeclared(&context));
        }
        self.0
            .cancel_task(&request.task_id, &context)
            .await
            .map_err(|error| self.0.redactor.error(error))
    }
}

impl Shared {
    /// The value that opens the question about a second, identical order of this call
    /// (after a started job, or an attempt whose outcome is unknown): never the order
    /// itself, so a model relaying it still has the person asked.
    fn second_order_value(&self, tool: &str, hash: &str, after: Option<i64>) -> String {
        let nonce = self.sealer.nonce_for(tool, hash, after);
        self.sealer.issue(Purpose::Second, tool, hash, &nonce).token
    }

    /// Offers the ledger again the outcomes it could not take. Once it takes one, the
    /// row is answered for every instance and its lease let go; held in this process
    /// only, the lease would run out with the row still pending, and another instance
    /// would send the identical call again (a second order where the provider ignores
    /// retry keys).
    async fn record_held(&self) {
        let held = self.calls.held_outcomes();
        let now = self.sealer.clock().now();
        for (id, outcome) in held {
            if self.ledger.finish(id, outcome, now).await.is_err() {
                // Still held here: the row stays this process's, or another instance
                // would find it pending once the lease ran out and send it again.
                self.ledger.renew(id).await;
                continue;
            }
            self.calls.recorded(id);
            self.redactor.line(
                "warning",
                json!({"message": format!(
                    "the outcome of ledger row {id}, held in memory, is recorded in the ledger now"
                )}),
            );
            // A send still under way lets its lease go when it ends (`Sending`).
            if !self.calls.is_sending(id) {
                self.ledger.release(id);
            }
        }
    }

    fn refuse(&self, tool: &str, reason: &str, extra: Value) {
        let mut fields = json!({"tool": tool, "reason": reason});
        if let (Value::Object(f), Value::Object(e)) = (&mut fields, extra) {
            f.extend(e);
        }
        self.redactor.line("refused", fields);
    }

    async fn call(
        &self,
        index: usize,
        request: CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let served = &self.tools[index];
        let op = &served.op;
        let mut args: Map<String, Value> = request.arguments.clone().unwrap_or_default();
        let token = args
            .shift_remove(CONFIRMATION_ARGUMENT)
            .and_then(|v| v.as_str().map(str::to_string));
        if let Some(idem) = &served.mapping.idempotency {
            // The server's key replaces the model's: a model that makes up a fresh key for
            // every retry would turn each retry into a new request.
            args.shift_remove(&idem.argument);
        }

        // A strict client's `null` for an optional argument is the argument left out: taken
        // out before the hash, the question and the request (docs/serve.md, "Arguments").
        if let Err(problem) = request::absent_nulls(&served.tool.input_schema, &mut args) {
            let problem = problem.to_string();
            self.refuse(&op.id, "bad-arguments", json!({"problem": problem}));
            return Ok(
                rmcp::model::CallToolResult::error(vec![rmcp::model::ContentBlock::text(format!(
                    "NOT SENT: {problem}"
                ))])
                .into(),
            );
        }

        // Bad arguments or a foreign host: refused before anything is recorded.
        let probe_target = self.target(served, Some("k"));
        let built = request::build(&served.mapping, &args, &probe_target)
            .map_err(|e| e.to_string())
            .and_then(|r| {
                self.client
                    .check(&r.url)
                    .map(|()| r)
                    .map_err(|e| e.to_string())
            });
        if let Err(problem) = built {
            self.refuse(&op.id, "bad-arguments", json!({"problem": problem}));
            return Ok(
                rmcp::model::CallToolResult::error(vec![rmcp::model::ContentBlock::text(format!(
                    "NOT SENT: {problem}"
                ))])
                .into(),
            );
        }

        if !served.tracked {
            return Ok(self.forward(served, &args, None).await.into());
        }

        let hash = crate::args_hash(&args);
        let needs_consent = op.consent() && self.config.enforce_consent;
        let how = asking(context);
        // SEP-2663: a task only for a request that declared the extension, on a revision
        // that defines it.
        let as_task = tasks::is_job(served) && tasks::declared(context);

        let consent = self.consent_of(&request, &served.op.id, &hash, token.as_deref());
        let invalid = matches!(consent, Consent::Invalid);
        let (nonce, second) = match consent {
            // On a client that can ask the person, a relayed confirmation is not the
            // person's yes: it is ignored, and the person is asked if a yes is needed.
            Consent::Token(_) if needs_consent && how != Asking::Token => (None, false),
            Consent::Token(n) | Consent::Given(n) => (Some(n), false),
            Consent::Second => (None, true),
            Consent::Declined => {
                self.refuse(&op.id, "declined", json!({}));
                return Ok(reply::declined(op).into());
            }
            Consent::None | Consent::Invalid => (None, false),
        };

        // Whether a repeat reaches the provider as the same request: without a key, an
        // open call (a timeout) is not sent again on its own (`Verdict::Unknown`).
        let retry_safe = matches!(
            retry_of(served, true),
            reply::Retry::SameKey | reply::Retry::Inherent
        );
        let claimed = match self
            .claim(served, &hash, nonce.as_deref(), needs_consent, retry_safe)
            .await
        {
            Ok(claimed) => claimed,
            Err(stop) => return self.stopped(op, stop),
        };
        let why = match &claimed.verdict {
            Verdict::AskConsent { spent: true } => {
                self.refuse(&op.id, "confirmation-spent", json!({}));
                Why::Spent
            }
            Verdict::AskConsent { .. } if invalid => {
                self.refuse(&op.id, "confirmation-invalid", json!({}));
                Why::NotForThisCall
            }
            Verdict::AskConsent { .. } => Why::Fresh,
            // The person asked for a second, identical order: put that question to them.
            Verdict::Answer { .. } | Verdict::Unknown { .. } if second => Why::Second,
            _ => return Ok(self.acted(served, &args, claimed, as_task).await),
        };
        let after = claimed.after;
        drop(claimed);
        // A person is never asked about a call the ledger has no room to record.
        if let Err(stop) = self.ledger.room(self.sealer.clock().now()).await {
            return self.stopped(op, stop);
        }
        let nonce = if needs_consent {
            match self
                .ask(served, &args, &hash, how, why, after, context)
                .await?
            {
                Asked::Response(response) => return Ok(*response),
                Asked::Given(nonce) => nonce,
            }
        } else {
            // A free tracked tool (an async or keyed one without consent): the second
            // order needs no question, only its own logical request.
            self.sealer.nonce_for(&op.id, &hash, after)
        };
        let claimed = match self
            .claim(served, &hash, Some(&nonce), needs_consent, retry_safe)
            .await
        {
            Ok(claimed) => claimed,
            Err(stop) => return self.stopped(op, stop),
        };
        Ok(self.acted(served, &args, claimed, as_task).await)
    }

    /// `act`, and for a client following jobs as tasks the job as a task: the row just
    /// sent, or the one a resubmitted identical call found (the same task).
    async fn acted(
        &self,
        served: &Served,
        args: &Map<String, Value>,
        claimed: Claimed<'_>,
        as_task: bool,
    ) -> CallToolResponse {
        // The identical call made while the create is out waits for it (`act`), and then
        // gets the same task: one job, one way to follow it.
        let row = match &claimed.verdict {
            Verdict::Send { entry, .. }
            | Verdict::Answer { entry }
            | Verdict::InFlight { entry } => Some(entry.id),
            _ => None,
        };
        let result = self.act(served, args, claimed).await;
        if as_task
            && let Some(id) = row
            && let Some(task) = self.created_task(served, id).await
        {
            return CallToolResponse::Task(task);
        }
        result.into()
    }

    /// The answer to a claim that gave no verdict: a full ledger is the model's to hear
    /// about (a tool error); anything else is the server's failure.
    fn stopped(&self, op: &Operation, stop: LedgerError) -> Result<CallToolResponse, ErrorData> {
        match stop {
            LedgerError::Full { .. } => {
                let why = stop.to_string();
                self.refuse(&op.id, "ledger-full", json!({"problem": why}));
                Ok(reply::ledger_full(op, &why).into())
            }
            LedgerError::Store(_) => Err(ErrorData::internal_error(stop.to_string(), None)),
        }
    }

    fn target<'a>(&'a self, served: &'a Served, key: Option<&'a str>) -> Target<'a> {
        Target {
            base_url: self.config.base_url.as_deref(),
            credential: served.credential.as_ref(),
            retry_key: key,
            env: &*self.env,
            // The arguments are checked against what the model was shown.
            schema: Some(&served.tool.input_schema),
        }
    }

    /// The guard's verdict on the call, made and marked in one step: no other identical
    /// call sees the ledger between this call's claim and its being marked in flight
    /// (otherwise two parallel calls with one yes could both be sent).
    async fn claim(
        &self,
        served: &Served,
        hash: &str,
        nonce: Option<&str>,
        needs_consent: bool,
        retry_safe: bool,
    ) -> Result<Claimed<'_>, LedgerError> {
        let op = &served.op;
        // Before this call is decided: an outcome held in memory may be taken now.
        self.record_held().await;
        // This process's claims take turns, from the look-up to the mark: the rows out at
        // the provider (`busy`) are exact for the whole claim, so none is pruned or taken
        // for an open retry while its send is under way.
        let _turn = self.calls.claim_turn().await;
        let now = self.sealer.clock().now();
        let busy: Vec<i64> = self.calls.in_flight().keys().copied().collect();
        let claim = OwnedClaim {
            tool: op.id.clone(),
            args_hash: hash.to_string(),
            principal: served.principal.clone(),
            nonce: nonce.map(str::to_string),
            now,
            since: now.saturating_sub(self.config.retry_window),
            busy: busy.clone(),
        };
        let new_key = uuid::Uuid::new_v4().to_string();
        let nonce = nonce.map(str::to_string);
        let held = self.calls.unrecorded();
        let (found, written, plan) = self
            .ledger
            .claim(claim, move |found| {
                let in_flight = |id: i64| busy.contains(&id);
                let call = guard::Call {
                    needs_consent,
                    nonce: nonce.as_deref(),
                    new_key: new_key.clone(),
                    in_flight: &in_flight,
                    retry_safe,
                };
                guard::decide(&call, &overlay(found, &held))
            })
            .await?;
        let verdict = plan
            .and_then(|p| p.verdict(written))
            .ok_or_else(|| LedgerError::Store("the ledger returned no row".into()))?;
        let mut claimed = Claimed {
            after: found.last_id,
            verdict,
            sending: None,
            waiting: None,
        };
        let mut flying = self.calls.in_flight();
        match &claimed.verdict {
            Verdict::Send { entry, .. } => {
                let (tx, rx) = tokio::sync::watch::channel(None);
                flying.insert(entry.id, rx);
                claimed.sending = Some(Sending {
                    shared: self,
                    id: entry.id,
                    tx,
                });
            }
            Verdict::InFlight { entry } => claimed.waiting = flying.get(&entry.id).cloned(),
            _ => {}
        }
        Ok(claimed)
    }

    /// Carries out a verdict that is not a question.
    async fn act(
        &self,
        served: &Served,
        args: &Map<String, Value>,
        claimed: Claimed<'_>,
    ) -> rmcp::model::CallToolResult {
        let op = &served.op;
        let hash = crate::args_hash(args);
        let Claimed {
            verdict,
            after,
            sending,
            waiting,
        } = claimed;
        match verdict {
            Verdict::Send { entry, retry } => {
                let result = self.forward(served, args, Some((&entry, retry))).await;
                if let Some(sending) = sending {
                    // Every identical call that waited on this one gets its outcome.
                    sending.tx.send_replace(Some(result.clone()));
                }
                result
            }
            Verdict::Answer { entry } => {
                let second = self.second_order_value(&op.id, &hash, after);
                self.refuse(
                    &op.id,
                    "already-started",
                    json!({"jobId": entry.job_id, "status": entry.status_name()}),
                );
                let poll = served.poll.clone();
                // The resource address of a replayed body: the request's URL, as on the
                // first answer.
                let uri = request::build(
                    &served.mapping,
                    args,
                    &self.target(served, Some(&entry.key)),
                )
                .map(|r| r.url.split('?').next().unwrap_or_default().to_string())
                .unwrap_or_default();
                let answer = reply::already(op, &entry, poll.as_ref(), &second, &uri);
                match self.calls.unrecorded_error(entry.id) {
                    Some(error) => reply::unrecorded(answer, &error),
                    None => answer,
                }
            }
            Verdict::Unknown { entry } => {
                let second = self.second_order_value(&op.id, &hash, after);
                self.refuse(
                    &op.id,
                    "outcome-unknown",
                    json!({"attempts": entry.attempts}),
                );
                let refused_retry = (entry.status == Status::Unknown)
                    .then_some(entry.http_status)
                    .flatten();
                reply::unknown(op, served.check_with.as_deref(), &second, refused_retry)
            }
            Verdict::InFlight { entry } => {
                self.refuse(&op.id, "in-flight", json!({}));
                let Some(mut waiting) = waiting else {
                    return if entry.sending {
                        reply::in_flight_elsewhere(op)
                    } else {
                        reply::in_flight(op)
                    };
                };
                match waiting.wait_for(Option::is_some).await {
                    Ok(outcome) => reply::shared((*outcome).clone().unwrap_or_default()),
                    // The call being sent went away (its client hung up): its row is still
                    // open, so the next identical call is a retry with the same key.
                    Err(_) => reply::in_flight(op),
                }
            }
            Verdict::AskConsent { .. } => {
                // `call` asks before acting; reaching here means a second claim asked again.
                self.refuse(&op.id, "consent-required", json!({}));
                reply::declined(op)
            }
        }
    }

    /// Sends `http`, its answer redacted as it arrives (so the ledger, the answer and any
    /// cut of it hold no secret the provider echoed), and the resource address: the
    /// URL without its query.
    async fn send(
        &self,
        http: &crate::client::HttpRequest,
    ) -> (Result<HttpResponse, crate::client::SendError>, String) {
        let sent = self
            .client
            .send(http)
            .await
            .map(|response| self.redactor.http_response(response));
        let uri = http.url.split('?').next().unwrap_or_default().to_string();
        (sent, uri)
    }

    /// Builds and sends the request; for a tracked call records the outcome on `entry`.
    async fn forward(
        &self,
        served: &Served,
        args: &Map<String, Value>,
        tracked: Option<(&Entry, bool)>,
    ) -> rmcp::model::CallToolResult {
        let op = &served.op;
        let key = tracked.map(|(e, _)| e.key.as_str());
        let http = match request::build(&served.mapping, args, &self.target(served, key)) {
            Ok(r) => r,
            Err(e) => {
                self.refuse(&op.id, "bad-arguments", json!({"problem": e.to_string()}));
                return rmcp::model::CallToolResult::error(vec![rmcp::model::ContentBlock::text(
                    format!("NOT SENT: {e}"),
                )]);
            }
        };
        let started = std::time::Instant::now();
        let (sent, uri) = self.send(&http).await;
        let ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let mut fields = forwarded_fields(served, &http, ms, tracked);
        let now = self.sealer.clock().now();
        match sent {
            Ok(response) => {
                fields["status"] = json!(response.status);
                self.redactor.line("forwarded", fields);
                let retry = tracked.is_some_and(|(_, retry)| retry);
                // A retry the provider answered as a key it has seen
                // (`idempotency.duplicate`): the first request went through, and its
                // result is read by the key where the manifest says how.
                let seen = retry
                    && op
                        .key()
                        .and_then(|k| k.duplicate.as_ref())
                        .is_some_and(|d| d.matches(response.status, &response.body));
                let found = match tracked {
                    Some((entry, _)) if seen => self.found_by_key(served, entry).await,
                    _ => None,
                };
                let seen_status = response.status;
                let (response, uri, found_with) = match found {
                    Some(found) => (found.response, found.uri, Some(found.read)),
                    None => (response, uri, None),
                };
                let job_id = job_id(served, &response);
                let mut unrecorded = None;
                let mut retry_unknown = false;
                if let Some((entry, _)) = tracked {
                    // What the read found is the first request's own answer.
                    let outcome =
                        outcome(op, &response, job_id.clone(), retry && found_with.is_none());
                    retry_unknown = outcome.status == Status::Unknown;
                    if let Err(e) = self.ledger.finish(entry.id, outcome.clone(), now).await {
                        let error = e.to_string();
                        self.redactor
                            .line("error", json!({"tool": op.id, "ledger": error}));
                        // A row left pending would make the identical call a retry, sent
                        // again; an open outcome (a 5xx) is pending anyway.
                        if outcome.status != Status::Pending {
                            self.calls.hold_outcome(entry.id, outcome, error.clone());
                            unrecorded = Some(error);
                        }
                    }
                }
                let poll = served.poll.clone();
                let retry = retry_of(served, tracked.is_some());
                let mut answer =
                    reply::answer(op, &response, &uri, poll.as_ref(), job_id.as_deref(), retry);
                if let Some(read) = &found_with {
                    answer = reply::first_found(answer, op, read, seen_status);
                } else if retry_unknown {
                    answer =
                        reply::retry_not_success(answer, op, served.check_with.as_deref(), seen);
                }
                match unrecorded {
                    Some(error) => reply::unrecorded(answer, &error),
                    None => answer,
                }
            }
            Err(error) => {
                fields["error"] = json!(error.to_string());
                self.redactor.line("forwarded", fields);
                // The row stays pending: a retry is sent with the same key (when the
                // operation has one: the advice says which).
                reply::send_failed(op, &error, retry_of(served, tracked.is_some()))
            }
        }
    }
}

/// How a repeat of `served`'s call reaches the provider: with the same retry key (one
/// serve sends, or one in the arguments), harmlessly (`inherent`), or as a second order
/// that only a check and the person can rule out.
fn retry_of(served: &Served, tracked: bool) -> reply::Retry<'_> {
    let op = &served.op;
    if !tracked {
        reply::Retry::Untracked
    } else if served.mapping.idempotency.is_some() || op.key().is_some() {
        reply::Retry::SameKey
    } else if matches!(op.idempotency, Idempotency::Inherent) {
        reply::Retry::Inherent
    } else {
        // The read that shows whether it went through, as the description names it.
        reply::Retry::CheckFirst {
            check: served.check_with.as_deref(),
        }
    }
}

/// The fields of a `forwarded` log line. `key` is the retry key the request carried, so a
/// call whose operation takes none (`idempotency: unsupported`) shows none, though its
/// ledger row still has one (the ledger's own identity for the logical request).
fn forwarded_fields(
    served: &Served,
    http: &crate::client::HttpRequest,
    ms: u64,
    tracked: Option<(&Entry, bool)>,
) -> Value {
    let mut fields = json!({
        "tool": served.op.id,
        "method": http.method.as_str(),
        "url": http.url,
        "ms": ms,
    });
    if let Some((entry, retry)) = tracked {
        if served.mapping.idempotency.is_some() {
            fields["key"] = json!(entry.key);
        }
        fields["retry"] = json!(retry);
        fields["attempt"] = json!(entry.attempts);
    }
    fields
}

/// What the ledger found, with the outcomes only this process holds (`held`) written
/// over their rows, as the ledger would have them had it recorded them.
fn overlay(found: &Found, held: &HashMap<i64, (Outcome, String)>) -> Found {
    let apply = |entry: &Option<Entry>| {
        entry.as_ref().map(|e| match held.get(&e.id) {
            Some((outcome, _)) => Entry {
                status: outcome.status,
                http_status: outcome.http_status,
                job_id: outcome.job_id.clone().or_else(|| e.job_id.clone()),
                result: outcome.result.clone().or_else(|| e.result.clone()),
                ..e.clone()
            },
            None => e.clone(),
        })
    };
    Found {
        by_nonce: apply(&found.by_nonce),
        // As the ledger's query: a refused request is no call's latest.
        latest: apply(&found.latest).filter(|e| e.status != Status::Rejected),
        last_id: found.last_id,
    }
}

/// A verdict with what goes with it.
struct Claimed<'a> {
    verdict: Verdict,
    /// The newest ledger row of this call: the next logical request's nonce follows it.
    after: Option<i64>,
    /// `Send`: the mark that this row is out, removed when dropped.
    sending: Option<Sending<'a>>,
    /// `InFlight`: the outcome of the identical call being sent.
    waiting: Option<InFlight>,
}

/// A row being sent by this process. Dropping it (the send finished, or the call was
/// cancelled) takes the mark away.
struct Sending<'a> {
    shared: &'a Shared,
    id: i64,
    tx: tokio::sync::watch::Sender<Option<rmcp::model::CallToolResult>>,
}

impl Drop for Sending<'_> {
    fn drop(&mut self) {
        self.shared.calls.sent(self.id);
        // An outcome the ledger did not take is known to this process only: the lease
        // stays until it runs out, so another instance does not take the row, still
        // pending there, for a call it may send again.
        if self.shared.calls.unrecorded_error(self.id).is_none() {
            self.shared.ledger.release(self.id);
        }
    }
}

/// The job id an async operation's answer names, where validation said it is
/// (`Async::id_fields`: `async.idField`, or what the poll target's parameter and the
/// answer's schema point at, `object_id` among them).
fn job_id(served: &Served, response: &HttpResponse) -> Option<String> {
    let a = served.op.async_.as_ref()?;
    if a.returns != Returns::Job || response.status >= 300 {
        return None;
    }
    let body: Value = serde_json::from_slice(&response.body).ok()?;
    a.job_id(&body)
}

/// How an answer leaves the logical request: 2xx answered; an unfollowed 3xx, 408, 409,
/// 425, 429 and 5xx unknown (a retry with the same key is right); any other 4xx refused.
/// A `retry` (the same key sent again after an attempt that got no answer) answered with
/// a refusal or a 409 is `Unknown`: a provider answers a reused key so when the first
/// attempt went through (`422 … must be unique`, `409 Conflict`), so it is neither
/// refused nor sent again on its own.
fn outcome(
    op: &Operation,
    response: &HttpResponse,
    job_id: Option<String>,
    retry: bool,
) -> Outcome {
    let status = match response.status {
        200..=299
            if op
                .async_
                .as_ref()
                .is_some_and(|a| a.returns == Returns::Job) =>
        {
            Status::Job
        }
        200..=299 => Status::Done,
        409 if retry => Status::Unknown,
        // A 3xx here is a redirect the client did not follow: the provider received the
        // request and gave no answer, so the outcome is unknown (not a job, not done).
        300..=399 | 408 | 409 | 425 | 429 | 500.. => Status::Pending,
        _ if retry => Status::Unknown,
        _ => Status::Rejected,
    };
    // Kept so that a replay is the same answer: text as text, bytes as base64, with the
    // media type (a replayed `audio/mpeg` answer is the same resource).
    let (result, media_type) = if response.status < 300 && response.body.len() <= 1024 * 1024 {
        let (body, media) = reply::stored(response);
        (Some(body), media)
    } else {
        (None, None)
    };
    Outcome {
        status,
        http_status: Some(response.status),
        job_id,
        result,
        media_type,
    }
}

/// How the model follows `op`'s job: the poll tool and the argument that takes the id,
/// named as the poll tool's served arguments name it (an `args:` rename included). A
/// poll target whose path names the job takes it in its last path parameter; an
/// RPC-style one (a `read: true` POST) in the body field that names the job
/// (`Connector::poll_body_id`) — its own argument, or a field of the whole-body one.
/// `None` when the target takes no id (`returns: change` polls say no id).
fn poll_hint(
    connector: &Connector,
    op: &Operation,
    mappings: &HashMap<String, RequestMapping>,
) -> Option<Poll> {
    let a = op.async_.as_ref()?;
    let target = connector.operations.iter().find(|o| o.id == a.poll_with)?;
    let mapping = mappings.get(&target.id);
    let (param, field) = if let Some(param) = target.path_params.last() {
        (
            mapping
                .and_then(|m| argument_of(m, mapping::Location::Path, param))
                .unwrap_or_else(|| param.clone()),
            None,
        )
    } else {
        let field = connector.poll_body_id(op)?;
        if let Some(own) = mapping.and_then(|m| argument_of(m, mapping::Location::Body, &field)) {
            (own, None)
        } else {
            let whole = mapping?
                .arguments
                .iter()
                .find(|arg| arg.location == mapping::Location::Body && arg.name.is_none())?;
            (whole.argument.clone(), Some(field))
        }
    };
    Some(Poll {
        tool: a.poll_with.clone(),
        param,
        field,
    })
}

/// The tool argument that carries the HTTP parameter or body field `name` at `location`,
/// as the served tool names it (an `args:` rename, or a name made safe for MCP).
pub(super) fn argument_of(
    mapping: &RequestMapping,
    location: mapping::Location,
    name: &str,
) -> Option<String> {
    mapping
        .arguments
        .iter()
        .find(|arg| arg.location == location && arg.name.as_deref() == Some(name))
        .map(|arg| arg.argument.clone())
}

#[cfg(test)]
mod tests;
