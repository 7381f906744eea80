//! The MCP handler: lists the connector's tools, and translates each `tools/call` into
//! a call of the call stage (`crate::call`) and its outcome into MCP's answer: a tool
//! result, an input-required round trip, or a task.
//!
//! Takes: the connector, its tools with their mappings, the client, the ledger, the
//! sealer. Returns: MCP results (`rmcp`'s types).
//! Must never: decide anything about a call (whether it is sent, asked about or answered
//! from the ledger is the call stage's): only how MCP carries it.

use std::collections::HashMap;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData,
    Implementation, ListToolsResult, MetaObject, PaginatedRequestParams, ProtocolVersion,
    ResourceContents, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Map, Value, json};

use super::Config;
use crate::auth::scopes::Scopes;
use crate::call::{
    self, Answer, Block, CONFIRMATION_ARGUMENT, Failure, Outcome, Served, Settings, Stage, output,
};
use crate::client::Client;
use crate::credential::{Credential, Environment};
use crate::ledger::Ledger;
use crate::redact::Redactor;
use crate::seal::Sealer;
use connectorgen_core::model::Connector;
use connectorgen_core::render::mcp::OUTPUT_SCHEMA_META_KEY;
use connectorgen_core::render::mcp::mapping::{self, RequestMapping};

/// The key of the consent question in an input-required result.
const CONSENT_INPUT: &str = "consent";

mod elicit;
mod tasks;

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
    /// serve's client at the authorization server's introspection endpoint
    /// (`--auth-introspection`).
    pub introspection: Option<crate::auth::Introspection>,
    /// The key ring people's own credentials are sealed with (`auth.perPerson`).
    pub keys: Option<crate::vault::Keys>,
    /// serve's registration at the provider (`connect: oauth`).
    pub registration: Option<crate::provider_oauth::Registration>,
}

struct Shared {
    /// The calls, with no protocol in them.
    stage: Arc<Stage>,
    /// The tools as MCP lists them, by the stage's index.
    definitions: Vec<Tool>,
    info: ServerConfig,
    /// `--allow-host`: the names the HTTP listener answers besides loopback.
    allow_hosts: Vec<String>,
    /// What only the tasks extension knows: the last polls and the cancels waiting on the
    /// person (handler/tasks.rs).
    tasks: tasks::Tasks,
    /// The OAuth scopes of the connector, and each tool's (auth/scopes.rs).
    scopes: Scopes,
    needs: HashMap<String, Vec<String>>,
    introspection: Option<crate::auth::Introspection>,
}

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
            introspection,
            keys,
            registration,
        } = parts;
        let mut served = Vec::new();
        let mut definitions = Vec::new();
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
            let poll = call::poll_hint(&connector, &op, &mappings);
            let definition = served_definition(definition, &mapping, tracked);
            let mut tool: Tool =
                serde_json::from_value(definition).map_err(|e| format!("tool {name}: {e}"))?;
            let output = output_schema(&tool)
                .map(|schema| output::compile(&schema))
                .transpose()
                .unwrap_or_else(|e| {
                    // Served without a schema rather than with one its answers are not
                    // checked against: a client that checks would refuse good answers.
                    without_output_schema(&mut tool);
                    redactor.line(
                        "warning",
                        json!({"message": format!(
                            "tool {name}: its output schema cannot be compiled ({e}); it is \
                             served without one"
                        )}),
                    );
                    None
                });
            let per_person = connector.per_person.is_some()
                && !matches!(mapping.credential, mapping::Credential::None);
            served.push(Served {
                per_person,
                input_schema: (*tool.input_schema).clone(),
                mapping,
                op,
                principal: call::principal(credential.as_ref()),
                credential,
                tracked,
                poll,
                output,
                check_with,
            });
            definitions.push(tool);
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
        let scopes = Scopes::of(&connector);
        let mut needs: HashMap<String, Vec<String>> = served
            .iter()
            .map(|s| {
                let needed = scopes.needed(&s.op).into_iter().map(str::to_string);
                (s.op.id.clone(), needed.collect())
            })
            .collect();
        if connector.per_person.is_some() {
            definitions.push(super::connect::tool(&connector.service.name)?);
            needs.insert(super::connect::TOOL.to_string(), vec![scopes.read.clone()]);
        }
        let settings = Settings {
            base_url: config.base_url.clone(),
            enforce_consent: config.enforce_consent,
            retry_window: config.retry_window,
            // `serve::prepare` put the budgets in force here.
            budgets: config.budgets.clone().unwrap_or_default(),
            currency: connector.currency().map(str::to_string),
        };
        // The connection's credential as placed: what each person's value becomes.
        let scheme = served
            .iter()
            .find(|s| s.per_person)
            .map(|s| s.mapping.credential.clone());
        let mut stage = Stage::new(
            served,
            client,
            ledger,
            sealer,
            settings,
            redactor,
            Box::new(move |name| environment.get(name)),
        );
        if let (Some(way), Some(keys), Some(scheme)) = (&connector.per_person, keys, scheme) {
            stage.people = Some(crate::connect::People::new(
                way.clone(),
                &connector.service.name,
                keys,
                registration,
                scheme,
                &stage,
            ));
        }
        Ok(Server(Arc::new(Shared {
            stage: Arc::new(stage),
            definitions,
            info,
            allow_hosts: config.allow_hosts,
            tasks: tasks::Tasks::default(),
            scopes,
            needs,
            introspection,
        })))
    }

    pub(crate) fn redactor(&self) -> &Redactor {
        &self.0.stage.redactor
    }

    /// The call stage (the connect pages, serve/connect.rs, run on it).
    pub(crate) fn stage(&self) -> &Arc<Stage> {
        &self.0.stage
    }

    /// Starts offering the ledger the outcomes it could not take (`Stage::
    /// keep_offering_held`). Called inside the runtime that serves (it spawns on it).
    pub(crate) fn keep_offering_held(&self) {
        self.0.stage.keep_offering_held();
    }

    pub(crate) fn allow_hosts(&self) -> &[String] {
        &self.0.allow_hosts
    }

    /// serve's client at the introspection endpoint, for the gate.
    pub(crate) fn introspection(&self) -> Option<crate::auth::Introspection> {
        self.0.introspection.clone()
    }

    /// The connector's OAuth scopes and each tool's needs (by name), for the gate.
    pub(crate) fn scopes(&self) -> (Scopes, HashMap<String, Vec<String>>) {
        (self.0.scopes.clone(), self.0.needs.clone())
    }
}

/// The schema a tool's answers are checked against: its `outputSchema`, or the one
/// `mcp-tools.json` keeps in `_meta` for clients on 2026-07-28.
fn output_schema(tool: &Tool) -> Option<Value> {
    match &tool.output_schema {
        Some(schema) => Some(Value::Object((**schema).clone())),
        None => tool
            .meta
            .as_ref()
            .and_then(|m| m.0.get(OUTPUT_SCHEMA_META_KEY))
            .cloned(),
    }
}

/// Takes the output schema out of a tool whose schema cannot be compiled: served
/// without one, its answers need not match anything a client checks.
fn without_output_schema(tool: &mut Tool) {
    tool.output_schema = None;
    if let Some(meta) = tool.meta.as_mut() {
        meta.0.shift_remove(OUTPUT_SCHEMA_META_KEY);
    }
}

fn instructions(connector: &Connector, env_name: &str, enforce: bool) -> String {
    let consent = if enforce {
        "Calls that cost money or credits, or cannot be undone, are sent only after the person \
         agreed to that exact call: answer the question the server asks, or relay its \
         confirmation request to the person."
    } else {
        "Consent enforcement is OFF on this server."
    };
    let credential = if connector.per_person.is_some() {
        // Each person's own account, connected on serve's page: never through the chat.
        "Each person's calls go out with their own account, which they connect on a page of \
         this server (connectAccount gives the link); never ask them for a key or password, \
         and never pass one as an argument."
            .to_string()
    } else {
        format!(
            "The credential comes from the server's environment ({env_name}), never from an \
             argument."
        )
    };
    format!(
        "{} ({}). {consent} Identical calls within the retry window are retries of the same \
         request; a started job is returned again instead of starting a second one: poll it. \
         {credential}",
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
                .definitions
                .iter()
                .map(|t| {
                    if current {
                        with_any_output_schema(t)
                    } else {
                        t.clone()
                    }
                })
                .collect(),
        ))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        let Some(&index) = self.0.stage.by_name.get(name) else {
            // serve's own connectAccount, listed last.
            return self
                .0
                .definitions
                .last()
                .filter(|t| t.name == name && self.0.stage.people.is_some())
                .cloned();
        };
        Some(self.0.definitions[index].clone())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name == super::connect::TOOL && self.0.stage.people.is_some() {
            let answer = super::connect::tool_answer(&self.0.stage, who(&context));
            return Ok(self.0.stage.redactor.response(answer.into()));
        }
        let Some(&index) = self.0.stage.by_name.get(request.name.as_ref()) else {
            return Err(ErrorData::invalid_params(
                format!("unknown tool {}", request.name),
                None,
            ));
        };
        // Every answer leaves through the redactor: an error that quotes a URL, a
        // provider that echoes the key.
        let redactor = &self.0.stage.redactor;
        match self.0.respond(index, &request, &context, true).await {
            Ok(response) => Ok(redactor.response(response)),
            Err(error) => Err(redactor.error(error)),
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
        match self.0.get_task(&request.task_id, who(&context)).await {
            Ok(task) => self.0.stage.redactor.task(task),
            Err(error) => Err(self.0.stage.redactor.error(error)),
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
            .map_err(|error| self.0.stage.redactor.error(error))
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
            .map_err(|error| self.0.stage.redactor.error(error))
    }
}

impl Shared {
    /// `tools/call` of tool `index` as the call stage runs it, the person asked the way
    /// this request allows; for a client following jobs as tasks, a job is a task. The
    /// answer is checked against the tool's output schema when `check_output` (a
    /// `tools/call`; a cancel sent for `tasks/cancel` is read for success only).
    async fn respond(
        &self,
        index: usize,
        request: &CallToolRequestParams,
        context: &RequestContext<RoleServer>,
        check_output: bool,
    ) -> Result<CallToolResponse, ErrorData> {
        let served = &self.stage.tools[index];
        let args = request.arguments.clone().unwrap_or_default();
        let ask = elicit::Mcp { request, context };
        let who = who(context);
        match self.stage.run(index, args, &ask, who).await {
            Ok(Outcome::Answer { answer, row }) => {
                // SEP-2663: a task only for a request that declared the extension, on a
                // revision that defines it.
                if tasks::is_job(served)
                    && tasks::declared(context)
                    && let Some(id) = row
                    && let Some(task) = self.created_task(served, id, who).await
                {
                    return Ok(CallToolResponse::Task(task));
                }
                let answer = match &served.output {
                    Some(validator) if check_output => {
                        output::checked(&served.op, answer, validator)
                    }
                    _ => answer,
                };
                Ok(result(answer).into())
            }
            Ok(Outcome::Asking(response)) => Ok(response),
            Ok(Outcome::Connect { link, answer }) => {
                elicit::connect(context, link, result(answer).into())
            }
            Err(Failure::Store(stop)) => Err(ErrorData::internal_error(stop.to_string(), None)),
            Err(Failure::Ask(error)) => Err(error),
        }
    }

    /// `respond`, without the output check: a call the server makes for a task.
    async fn call(
        &self,
        index: usize,
        request: CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.respond(index, &request, context, false).await
    }
}

/// The person a request comes from when `serve --http` authenticates requests: the
/// principal of the token `serve/http.rs` checked and put on the request. `None` over
/// stdio and without `--auth-issuer`: the tools' own principals (their credentials').
fn who(context: &RequestContext<RoleServer>) -> Option<&str> {
    context
        .extensions
        .get::<http::request::Parts>()?
        .extensions
        .get::<crate::auth::Caller>()
        .map(|caller| caller.principal.as_str())
}

/// The call stage's answer as MCP's tool result: text blocks, a body that is not text as
/// an embedded resource, and the server's facts under `_meta` (`reply::META_KEY`).
pub(super) fn result(answer: Answer) -> CallToolResult {
    let content = answer
        .content
        .into_iter()
        .map(|block| match block {
            Block::Text(text) => ContentBlock::text(text),
            Block::Blob {
                uri,
                blob,
                mime_type,
            } => {
                let mut resource = ResourceContents::blob(blob, uri);
                if let ResourceContents::BlobResourceContents { mime_type: m, .. } = &mut resource {
                    *m = mime_type;
                }
                ContentBlock::resource(resource)
            }
        })
        .collect();
    let mut result = if answer.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    result.structured_content = answer.structured_content;
    if !answer.facts.is_empty() {
        let mut meta = Map::new();
        meta.insert(call::reply::META_KEY.into(), Value::Object(answer.facts));
        result.meta = Some(MetaObject(meta));
    }
    result
}

#[cfg(test)]
mod tests;
