//! `connectorgen probe`: checks against a sandbox that the provider keeps the promises
//! the manifest makes — a retry with the same key returns the same job, a required key
//! is required, the poll target is free and side-effect-free, 401 and 429 behave as
//! llms.txt says, an async operation really returns before the work is done.
//!
//! Takes: a validated connector with its `mcp-tools.json` (the request mapping `serve`
//! executes), the base URL of a sandbox, the operations to check and the spending cap.
//! Returns: one `CheckResult` per check and operation — passed, failed with bounded
//! evidence, skipped with the reason — and how many paid calls were made.
//! Must never: build a request itself (every request comes from
//! `runtime::request::build`, as `serve`'s do), speak MCP, send more requests to an
//! operation that spends or cannot be undone than `--allow-spend` allows (each request
//! that reaches the provider counts: a redirect followed is another one, so probe
//! follows redirects itself), contact a base URL that is neither on this machine nor the
//! manifest's `probe.sandboxUrl` unless the caller says the target is live (a server's
//! description is prose, never a reason), read an environment variable the person did
//! not allow (`credential::Environment`), or print a secret (every report text passes
//! through the redactor).

pub mod report;

use connectorgen_core::english::plural;
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use crate::client::{Client, HttpRequest, HttpResponse, Limits, MAX_REDIRECTS, Origin};
use crate::credential::{Credential, Environment};
use crate::redact::Redactor;
use crate::request::{self, Target};
use connectorgen_core::Analysis;
use connectorgen_core::diagnostics::Span;
use connectorgen_core::model::{Connector, Operation};
use connectorgen_core::render::mcp::mapping::{self, Location, RequestMapping};

/// The credential sent by the 401 check: no provider issues it.
pub(crate) const BAD_CREDENTIAL: &str = "connectorgen-probe-invalid-credential";

/// How many times the poll check polls one job.
pub(crate) const POLLS: u32 = 3;

/// The most characters of a provider's body quoted in evidence.
pub(crate) const EVIDENCE_CHARS: usize = 200;

/// The checks, in the order they run. Each variant's doc says what a pass proves.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, strum::IntoStaticStr, strum::VariantArray,
)]
#[strum(serialize_all = "kebab-case")]
pub enum Check {
    /// The same request sent twice with the same retry key (the operation's own
    /// mechanism) returns the same resource id, and the list operation, when there is
    /// one, shows one new item, not two: a retry after a timeout cannot charge twice.
    RetryKeyHonoured,
    /// With `idempotency: required`, a request without the key is refused (4xx): a client
    /// that forgot the key cannot start unprotected work.
    RetryKeyRequired,
    /// The create returns before `async.typicalSeconds` with a job id the poll target
    /// accepts: the model is right to poll instead of waiting.
    AsyncIsAsync,
    /// Polling one job several times returns that same job each time, and the list shows
    /// no new item: polling is free and side-effect-free, as llms.txt tells the model.
    PollTargetFree,
    /// A bad credential gets 401, which llms.txt tells the model to relay (ask for a new
    /// token) rather than retry.
    Unauthorized,
    /// Every 429 seen during the run carries `Retry-After`, which llms.txt tells the
    /// model to wait for (a warning when one does not).
    RetryAfter,
}

impl Check {
    pub fn id(self) -> &'static str {
        self.into()
    }

    /// The check's name in a report.
    pub fn title(self) -> &'static str {
        match self {
            Check::RetryKeyHonoured => "retry key honoured",
            Check::RetryKeyRequired => "retry key required",
            Check::AsyncIsAsync => "async really is async",
            Check::PollTargetFree => "poll target is free and side-effect-free",
            Check::Unauthorized => "a bad credential gets 401",
            Check::RetryAfter => "a 429 carries Retry-After",
        }
    }
}

/// What one check found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Passed,
    /// The provider does not keep the promise; the evidence says what it did.
    Failed(Vec<String>),
    /// Not a failure, but worth fixing (a 429 without Retry-After).
    Warning(Vec<String>),
    /// Not run, and why.
    Skipped(String),
}

impl Outcome {
    pub(crate) fn word(&self) -> &'static str {
        match self {
            Outcome::Passed => "passed",
            Outcome::Failed(_) => "failed",
            Outcome::Warning(_) => "warning",
            Outcome::Skipped(_) => "skipped",
        }
    }
}

#[derive(Debug, Clone)]
pub struct CheckResult {
    pub check: Check,
    /// The operation checked (for the 429 check: the first operation that saw one).
    pub operation: String,
    /// The operation's id in the manifest, for reports that point into it.
    pub span: Option<Span>,
    pub outcome: Outcome,
}

/// A whole run.
#[derive(Debug, Clone)]
pub struct ProbeReport {
    pub base_url: String,
    /// Each environment variable read: its name, what for, and where it went
    /// (`NAME (credential) -> origin`), for a line on stderr.
    pub environment: Vec<String>,
    pub results: Vec<CheckResult>,
    /// Calls to operations that spend or cannot be undone that were sent.
    pub paid_calls: u32,
    pub allow_spend: u32,
}

impl ProbeReport {
    pub fn failed(&self) -> bool {
        self.results
            .iter()
            .any(|r| matches!(r.outcome, Outcome::Failed(_)))
    }

    pub(crate) fn count(&self, word: &str) -> usize {
        self.results
            .iter()
            .filter(|r| r.outcome.word() == word)
            .count()
    }
}

/// The command line's settings.
#[derive(Debug, Clone)]
pub struct Config {
    /// `--base-url`; `None`: the manifest's `probe.sandboxUrl`.
    pub base_url: Option<String>,
    /// Only these operations (empty: every operation).
    pub operations: Vec<String>,
    /// The most calls that spend or cannot be undone.
    pub allow_spend: u32,
    /// The target is a live service, not a sandbox: the caller accepts real effects.
    pub live: bool,
    pub limits: Limits,
    /// Environment variables the manifest may read besides the service's own
    /// (`<SERVICE>_…`): `--allow-env NAME`.
    pub allow_env: Vec<String>,
}

/// Runs every check that applies. `Err`: nothing could be checked (and nothing was sent).
pub fn run(analysis: &Analysis, config: &Config) -> Result<ProbeReport, String> {
    let connector = analysis
        .connector
        .as_ref()
        .ok_or("the manifest did not validate")?;
    let tools = mapping::tools_in(analysis.outputs.as_ref())?;
    for id in &config.operations {
        if !connector.operations.iter().any(|op| op.id == *id) {
            return Err(format!(
                "--operation {id}: the manifest has no such operation"
            ));
        }
    }
    let base_url = config
        .base_url
        .clone()
        .or_else(|| connector.sandbox_url.clone())
        .ok_or(
            "no sandbox to probe: pass --base-url URL, or name the provider's sandbox in the \
             manifest (probe: { sandboxUrl: https://… })",
        )?;
    let origin = Origin::of(&base_url)
        .ok_or_else(|| format!("--base-url {base_url} is not an absolute URL"))?;
    if !config.live && !is_sandbox(connector, &origin) {
        return Err(format!(
            "{base_url} is neither on this machine nor the manifest's probe.sandboxUrl; probe \
             makes real calls: pass --live if that is intended"
        ));
    }
    let client =
        Client::without_redirects(config.limits, vec![origin]).map_err(|e| e.to_string())?;
    let (environment, _, redactor) =
        Environment::start(analysis, &tools, &config.allow_env, Some(&base_url))?;
    let mut prober = Prober {
        connector,
        tools,
        client,
        base_url: base_url.clone(),
        environment: environment.clone(),
        redactor: redactor.clone(),
        paid: 0,
        cap: config.allow_spend,
        rate_limited: Vec::new(),
        results: Vec::new(),
    };
    crate::block_on(prober.all(&config.operations))
        .map_err(|e| format!("could not start the runtime: {e}"))?;
    let environment = environment
        .uses
        .iter()
        .map(|u| {
            format!(
                "{} ({}{}) -> {}",
                u.name,
                u.purposes.join(", "),
                if u.set { "" } else { ", not set" },
                u.origins.join(", ")
            )
        })
        .collect();
    Ok(redacted(
        &redactor,
        ProbeReport {
            base_url,
            environment,
            results: prober.results,
            paid_calls: prober.paid,
            allow_spend: config.allow_spend,
        },
    ))
}

/// The report with every secret replaced in every text it holds, so no format can
/// print one (each text was redacted where it was made, too).
fn redacted(redactor: &Redactor, mut report: ProbeReport) -> ProbeReport {
    report.base_url = redactor.text(&report.base_url);
    for result in &mut report.results {
        result.operation = redactor.text(&result.operation);
        match &mut result.outcome {
            Outcome::Failed(evidence) | Outcome::Warning(evidence) => {
                for e in evidence {
                    *e = redactor.text(e);
                }
            }
            Outcome::Skipped(why) => *why = redactor.text(why),
            Outcome::Passed => {}
        }
    }
    report
}

/// Whether `origin` is this machine, or the manifest's `probe.sandboxUrl`. What a
/// server's description says is not asked: prose is not a declaration.
fn is_sandbox(connector: &Connector, origin: &Origin) -> bool {
    let host = origin.host.trim_start_matches('[').trim_end_matches(']');
    // Only the literal loopback names: `x.localhost` is a name a resolver (or a proxy)
    // may send anywhere (review defect 9).
    if host.eq_ignore_ascii_case("localhost") || host == "::1" {
        return true;
    }
    if host
        .parse::<std::net::Ipv4Addr>()
        .is_ok_and(|ip| ip.is_loopback())
    {
        return true;
    }
    connector
        .sandbox_url
        .as_deref()
        .and_then(Origin::of)
        .is_some_and(|sandbox| sandbox == *origin)
}

/// One answer, with what the checks read from it.
struct Sent {
    status: u16,
    response: HttpResponse,
    elapsed: Duration,
    line: String,
}

impl Sent {
    fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }

    fn json(&self) -> Option<Value> {
        serde_json::from_slice(&self.response.body).ok()
    }

    /// The resource's `id`, when the answer is a JSON object with one.
    fn id(&self) -> Option<String> {
        match self.json()?.get("id")? {
            Value::String(id) => Some(id.clone()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        }
    }

    /// Evidence: `POST /v1/videos → 200 {"id":…}`, the body cut to a bound.
    fn evidence(&self) -> String {
        let body = String::from_utf8_lossy(&self.response.body);
        let body = connectorgen_core::english::clip(body.trim(), EVIDENCE_CHARS);
        format!("{} → {} {body}", self.line, self.status)
    }
}

/// Which credential a call carries.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Cred {
    Real,
    Bad,
}

struct Prober<'a> {
    connector: &'a Connector,
    tools: Vec<(Value, RequestMapping)>,
    client: Client,
    base_url: String,
    /// The variables read at start-up: `fixed:` inputs come from here.
    environment: Environment,
    redactor: Redactor,
    paid: u32,
    cap: u32,
    /// Every 429 seen: the operation and whether it carried Retry-After.
    rate_limited: Vec<(String, bool)>,
    results: Vec<CheckResult>,
}

impl Prober<'_> {
    fn op(&self, id: &str) -> Option<&Operation> {
        self.connector.operations.iter().find(|op| op.id == id)
    }

    fn tool(&self, id: &str) -> Option<&(Value, RequestMapping)> {
        self.tools
            .iter()
            .find(|(t, _)| t.get("name").and_then(Value::as_str) == Some(id))
    }

    fn record(&mut self, check: Check, op: &str, outcome: Outcome) {
        let span = self.op(op).map(|o| o.origin.id);
        self.results.push(CheckResult {
            check,
            operation: op.to_string(),
            span,
            outcome,
        });
    }

    /// The example call for `op`: its `probe.input`, else each argument's example (or
    /// default) from the tool's input schema. `Err` says why there is none.
    fn input(&self, op: &str, job_argument: Option<&str>) -> Result<Map<String, Value>, String> {
        let operation = self.op(op).ok_or_else(|| format!("no operation {op}"))?;
        let (tool, mapping) = self
            .tool(op)
            .ok_or_else(|| format!("`{op}` is not an MCP tool"))?;
        let schema = tool.get("inputSchema");
        let properties = schema
            .and_then(|s| s.get("properties"))
            .and_then(Value::as_object);
        if let Some(probe) = &operation.probe {
            if let Some(unknown) = probe
                .input
                .keys()
                .find(|k| !properties.is_some_and(|p| p.contains_key(*k)))
            {
                return Err(format!(
                    "`probe.input` of `{op}` names `{unknown}`, which the tool does not take"
                ));
            }
            return Ok(probe.input.clone());
        }
        let key_argument = mapping.idempotency.as_ref().map(|i| i.argument.as_str());
        let required: BTreeSet<&str> = schema
            .and_then(|s| s.get("required"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let mut input = Map::new();
        for (name, property) in properties.into_iter().flatten() {
            if Some(name.as_str()) == key_argument || Some(name.as_str()) == job_argument {
                continue;
            }
            let example = property
                .get("examples")
                .and_then(|e| e.get(0))
                .or_else(|| property.get("example"))
                .or_else(|| property.get("default"))
                .or_else(|| property.get("const"));
            match example {
                Some(value) => {
                    input.insert(name.clone(), value.clone());
                }
                None if required.contains(name.as_str()) => {
                    return Err(format!(
                        "no input for `{op}`: its argument `{name}` has no example; add \
                         `probe: {{ input: {{ … }} }}` to the operation"
                    ));
                }
                None => {}
            }
        }
        Ok(input)
    }

    /// Sends one call of `op`. `Err`: not sent (the cap, or the arguments), and why.
    async fn send(
        &mut self,
        op: &str,
        args: &Map<String, Value>,
        key: Option<&str>,
        cred: Cred,
    ) -> Result<Sent, String> {
        let paid = self.op(op).is_some_and(Operation::consent);
        if paid && self.paid >= self.cap {
            return Err(spend_reason(self.cap, self.paid, 1));
        }
        let (definition, mapping) = self
            .tool(op)
            .ok_or_else(|| format!("`{op}` is not a tool"))?;
        // The call is checked against the schema serve would check it against.
        let schema = request::served_schema(definition, mapping);
        let mut mapping = mapping.clone();
        if key.is_none()
            && let Some(idem) = mapping.idempotency.take()
        {
            // The one check that leaves the key out on purpose: the builder must neither
            // refuse the request for lacking it nor fill it in from the arguments.
            mapping.arguments.retain(|a| a.argument != idem.argument);
        }
        let mapping = &mapping;
        let credential = match cred {
            Cred::Real => self.environment.credential(mapping),
            Cred::Bad => match &mapping.credential {
                mapping::Credential::Parts { parts } => {
                    Credential::from_parts(parts, &|_| Some(BAD_CREDENTIAL.to_string()))
                }
                scheme => Credential::new(scheme, BAD_CREDENTIAL),
            },
        };
        let environment = &self.environment;
        let env = |name: &str| environment.get(name);
        let http = request::build(
            mapping,
            args,
            &Target {
                base_url: Some(&self.base_url),
                credential: credential.as_ref(),
                retry_key: key,
                env: &env,
                schema: Some(&schema),
            },
        )
        .map_err(|e| self.redactor.text(&format!("`{op}`: {e}")))?;
        let line = self.redactor.text(&format!(
            "{} {}",
            http.method,
            http.url
                .strip_prefix(self.base_url.trim_end_matches('/'))
                .unwrap_or(&http.url)
        ));
        let start = Instant::now();
        let response = self.exchange(http, paid, &line).await?;
        let elapsed = start.elapsed();
        if response.status == 429 {
            self.rate_limited
                .push((op.to_string(), response.header("retry-after").is_some()));
        }
        Ok(Sent {
            status: response.status,
            response,
            elapsed,
            line,
        })
    }

    /// Sends `http` and follows the provider's redirects within its origin (at most
    /// `MAX_REDIRECTS`), counting each request of a paid call before it is sent: every
    /// one reaches the provider, and each may cost. The answer is redacted as it arrives.
    async fn exchange(
        &mut self,
        mut http: HttpRequest,
        paid: bool,
        line: &str,
    ) -> Result<HttpResponse, String> {
        for hop in 0..=MAX_REDIRECTS {
            if paid {
                if self.paid >= self.cap && hop == 0 {
                    return Err(spend_reason(self.cap, self.paid, 1));
                }
                if self.paid >= self.cap {
                    return Err(format!(
                        "{line}: the provider redirected it to {}; following would be another \
                         request that spends, and {}",
                        self.redactor.text(&http.url),
                        spend_reason(self.cap, self.paid, 1)
                    ));
                }
                // Counted before sending: a call that times out may still have cost.
                self.paid += 1;
            }
            let response = self
                .client
                .send(&http)
                .await
                .map(|r| self.redactor.http_response(r))
                .map_err(|e| self.redactor.text(&format!("{line}: {e}")))?;
            let Some(next) = redirected(&http, &response) else {
                return Ok(response);
            };
            let next = next.map_err(|why| self.redactor.text(&format!("{line}: {why}")))?;
            self.client.check(&next.url).map_err(|e| {
                self.redactor.text(&format!(
                    "{line}: the provider redirected it to {}, which is not followed ({e})",
                    next.url
                ))
            })?;
            if hop == MAX_REDIRECTS {
                break;
            }
            http = next;
        }
        Err(format!("{line}: more than {MAX_REDIRECTS} redirects"))
    }

    /// The ids the list operation of `op` shows now; `None` when it has none or the list
    /// cannot be read.
    async fn listed(&mut self, op: &str) -> Option<BTreeSet<String>> {
        let list = self.op(op)?.async_.as_ref()?.list_with.clone()?;
        let input = self.input(&list, None).ok()?;
        let sent = self.send(&list, &input, None, Cred::Real).await.ok()?;
        if !sent.ok() {
            return None;
        }
        let json = sent.json()?;
        let items = match &json {
            Value::Array(items) => Some(items),
            Value::Object(map) => map.values().find_map(Value::as_array),
            _ => None,
        }?;
        Some(
            items
                .iter()
                .filter_map(|i| i.get("id"))
                .map(|id| id.as_str().map_or_else(|| id.to_string(), str::to_string))
                .collect(),
        )
    }

    async fn all(&mut self, only: &[String]) {
        let ids: Vec<String> = self
            .connector
            .operations
            .iter()
            .filter(|op| only.is_empty() || only.contains(&op.id))
            .map(|op| op.id.clone())
            .collect();
        for id in &ids {
            self.operation(id).await;
        }
        self.unauthorized(&ids).await;
        self.retry_after(&ids);
    }

    /// The checks of one operation that starts work or takes a retry key.
    async fn operation(&mut self, id: &str) {
        let Some(op) = self.op(id).cloned() else {
            return;
        };
        let Some((_, mapping)) = self.tool(id).cloned() else {
            return;
        };
        let keyed = mapping.idempotency.is_some() && !op.idempotency.is_unsupported();
        if !keyed && op.async_.is_none() {
            return;
        }
        let input = match self.input(id, None) {
            Ok(input) => input,
            Err(why) => {
                for check in applicable(&op, keyed) {
                    self.record(check, id, Outcome::Skipped(why.clone()));
                }
                return;
            }
        };
        let paid = op.consent();
        // The first create of this operation, reused by the async and poll checks.
        let mut job: Option<Sent> = None;

        if keyed {
            let need = if paid { 2 } else { 0 };
            if self.paid + need > self.cap {
                let why = spend_reason(self.cap, self.paid, need);
                self.record(Check::RetryKeyHonoured, id, Outcome::Skipped(why));
            } else {
                let before = self.listed(id).await;
                let key = format!("connectorgen-probe-{}", uuid::Uuid::new_v4());
                let outcome = match self.send(id, &input, Some(&key), Cred::Real).await {
                    Err(why) => Outcome::Failed(vec![why]),
                    Ok(first) => {
                        let outcome = match self.send(id, &input, Some(&key), Cred::Real).await {
                            Err(why) => Outcome::Failed(vec![first.evidence(), why]),
                            Ok(second) => {
                                let after = self.listed(id).await;
                                honoured(&first, &second, before.as_ref(), after.as_ref())
                            }
                        };
                        job = Some(first);
                        outcome
                    }
                };
                self.record(Check::RetryKeyHonoured, id, outcome);
            }
            if op.key().is_some_and(|k| k.required) {
                let outcome = if paid && self.paid >= self.cap {
                    Outcome::Skipped(spend_reason(self.cap, self.paid, 1))
                } else {
                    match self.send(id, &input, None, Cred::Real).await {
                        Err(why) => Outcome::Failed(vec![why]),
                        Ok(sent) if (400..500).contains(&sent.status) && sent.status != 429 => {
                            Outcome::Passed
                        }
                        Ok(sent) => Outcome::Failed(vec![format!(
                            "a request without the key was not refused: {}",
                            sent.evidence()
                        )]),
                    }
                };
                self.record(Check::RetryKeyRequired, id, outcome);
            }
        }

        let Some(async_) = op.async_.clone() else {
            return;
        };
        if job.is_none() {
            if paid && self.paid >= self.cap {
                let why = spend_reason(self.cap, self.paid, 1);
                self.record(Check::AsyncIsAsync, id, Outcome::Skipped(why.clone()));
                self.record(Check::PollTargetFree, id, Outcome::Skipped(why));
                return;
            }
            let key = keyed.then(|| format!("connectorgen-probe-{}", uuid::Uuid::new_v4()));
            match self.send(id, &input, key.as_deref(), Cred::Real).await {
                Ok(sent) => job = Some(sent),
                Err(why) => {
                    self.record(Check::AsyncIsAsync, id, Outcome::Failed(vec![why.clone()]));
                    self.record(Check::PollTargetFree, id, Outcome::Skipped(why));
                    return;
                }
            }
        }
        let Some(job) = job else { return };
        let poll = async_.poll_with.clone();
        let job_of = |sent: &Sent| sent.json().and_then(|body| async_.job_id(&body));
        let Some(job_id) = job_of(&job).filter(|_| job.ok()) else {
            let evidence = vec![format!("the create returned no job id: {}", job.evidence())];
            self.record(Check::AsyncIsAsync, id, Outcome::Failed(evidence));
            self.record(
                Check::PollTargetFree,
                id,
                Outcome::Skipped("no job to poll".to_string()),
            );
            return;
        };
        let poll_input = match self.poll_input(&poll, &job_id) {
            Ok(input) => input,
            Err(why) => {
                self.record(Check::AsyncIsAsync, id, Outcome::Skipped(why.clone()));
                self.record(Check::PollTargetFree, id, Outcome::Skipped(why));
                return;
            }
        };

        // Async really is async: quick, with an id the poll target accepts.
        let first_poll = self.send(&poll, &poll_input, None, Cred::Real).await;
        let mut evidence = Vec::new();
        if let Some(typical) = async_.typical_seconds
            && job.elapsed >= Duration::from_secs(typical)
        {
            evidence.push(format!(
                "the create took {:.1}s, not less than typicalSeconds ({typical}s)",
                job.elapsed.as_secs_f64()
            ));
        }
        match &first_poll {
            Ok(polled) if polled.ok() => {}
            Ok(polled) => evidence.push(format!(
                "the poll target did not accept job {job_id}: {}",
                polled.evidence()
            )),
            Err(why) => evidence.push(why.clone()),
        }
        let outcome = if evidence.is_empty() {
            Outcome::Passed
        } else {
            Outcome::Failed(evidence)
        };
        self.record(Check::AsyncIsAsync, id, outcome);

        // The poll target is free: the same job every time, nothing new in the list.
        let before = self.listed(id).await;
        let mut evidence = Vec::new();
        for _ in 0..POLLS {
            match self.send(&poll, &poll_input, None, Cred::Real).await {
                Ok(polled) if polled.ok() && job_of(&polled).is_none_or(|i| i == job_id) => {}
                Ok(polled) => evidence.push(format!(
                    "polling job {job_id} answered {}",
                    polled.evidence()
                )),
                Err(why) => evidence.push(why),
            }
        }
        let after = self.listed(id).await;
        if let (Some(before), Some(after)) = (&before, &after) {
            let new: Vec<&String> = after.difference(before).collect();
            if !new.is_empty() {
                evidence.push(format!(
                    "polling {POLLS} times added {} to the list: {}",
                    plural(new.len(), "item", "items"),
                    join(&new)
                ));
            }
        }
        let outcome = if evidence.is_empty() {
            Outcome::Passed
        } else {
            Outcome::Failed(evidence)
        };
        self.record(Check::PollTargetFree, id, outcome);
    }

    /// The poll target's arguments: its own probe input (or examples), with the job id in
    /// its one path argument the input does not give.
    fn poll_input(&self, poll: &str, job_id: &str) -> Result<Map<String, Value>, String> {
        let (_, mapping) = self
            .tool(poll)
            .ok_or_else(|| format!("`{poll}` is not a tool"))?;
        let path_args: Vec<&str> = mapping
            .arguments
            .iter()
            .filter(|a| a.location == Location::Path)
            .map(|a| a.argument.as_str())
            .collect();
        let given = self
            .op(poll)
            .and_then(|op| op.probe.as_ref())
            .map(|p| p.input.clone());
        let open: Vec<&str> = path_args
            .iter()
            .copied()
            .filter(|a| !given.as_ref().is_some_and(|g| g.contains_key(*a)))
            .collect();
        let [job_argument] = open.as_slice() else {
            return Err(format!(
                "cannot tell which argument of `{poll}` takes the job id (path arguments \
                 without a probe input: {})",
                if open.is_empty() {
                    "none".to_string()
                } else {
                    open.join(", ")
                }
            ));
        };
        let mut input = self.input(poll, Some(job_argument))?;
        input.insert(
            (*job_argument).to_string(),
            Value::String(job_id.to_string()),
        );
        Ok(input)
    }

    /// The 401 check, once, on the first free operation that can be called.
    async fn unauthorized(&mut self, ids: &[String]) {
        let free: Vec<String> = ids
            .iter()
            .filter(|id| {
                self.op(id)
                    .is_some_and(|op| !op.consent() && op.async_.is_none())
                    && self
                        .tool(id)
                        .is_some_and(|(_, m)| m.credential != mapping::Credential::None)
            })
            .cloned()
            .collect();
        let Some((id, input)) = free
            .iter()
            .find_map(|id| self.input(id, None).ok().map(|input| (id.clone(), input)))
        else {
            let (op, why) = match free.first() {
                Some(id) => (id.clone(), "no free operation has an input to call it with"),
                None => (
                    ids.first().cloned().unwrap_or_default(),
                    "no free operation that takes a credential is checked",
                ),
            };
            self.record(Check::Unauthorized, &op, Outcome::Skipped(why.to_string()));
            return;
        };
        let outcome = match self.send(&id, &input, None, Cred::Bad).await {
            Ok(sent) if sent.status == 401 => Outcome::Passed,
            Ok(sent) => Outcome::Failed(vec![format!(
                "a bad credential was answered {}, not 401: {}",
                sent.status,
                sent.evidence()
            )]),
            Err(why) => Outcome::Failed(vec![why]),
        };
        self.record(Check::Unauthorized, &id, outcome);
    }

    /// The 429 check, from every 429 the other checks saw.
    fn retry_after(&mut self, ids: &[String]) {
        let Some((first, _)) = self.rate_limited.first().cloned() else {
            let op = ids.first().cloned().unwrap_or_default();
            self.record(
                Check::RetryAfter,
                &op,
                Outcome::Skipped("no 429 was seen during the run".to_string()),
            );
            return;
        };
        let missing: Vec<String> = self
            .rate_limited
            .iter()
            .filter(|(_, has)| !has)
            .map(|(op, _)| format!("a 429 from `{op}` had no Retry-After header"))
            .collect();
        let outcome = if missing.is_empty() {
            Outcome::Passed
        } else {
            Outcome::Warning(missing)
        };
        self.record(Check::RetryAfter, &first, outcome);
    }
}

/// The request a redirect asks for, as a browser (and reqwest) makes it: 307 and 308
/// repeat the method and body, 303 (and 301/302 after a POST) become a GET without a
/// body. `None`: not a redirect.
fn redirected(sent: &HttpRequest, response: &HttpResponse) -> Option<Result<HttpRequest, String>> {
    if !matches!(response.status, 301 | 302 | 303 | 307 | 308) {
        return None;
    }
    let Some(location) = response.header("location") else {
        return Some(Err(format!(
            "the provider answered {} without a Location",
            response.status
        )));
    };
    let url = reqwest::Url::parse(&sent.url)
        .and_then(|base| base.join(location))
        .map_err(|e| format!("the provider redirected to `{location}`, not a URL ({e})"));
    Some(url.map(|url| {
        let keep = matches!(response.status, 307 | 308)
            || response.status != 303 && sent.method != http::Method::POST;
        let mut next = sent.clone();
        next.url = url.to_string();
        if !keep {
            next.method = http::Method::GET;
            next.body = None;
            next.headers
                .retain(|(name, _)| !name.eq_ignore_ascii_case("content-type"));
        }
        next
    }))
}

/// The checks `operation` runs for `op`, all skipped together when it has no input.
fn applicable(op: &Operation, keyed: bool) -> Vec<Check> {
    let mut checks = Vec::new();
    if keyed {
        checks.push(Check::RetryKeyHonoured);
        if op.key().is_some_and(|k| k.required) {
            checks.push(Check::RetryKeyRequired);
        }
    }
    if op.async_.is_some() {
        checks.extend([Check::AsyncIsAsync, Check::PollTargetFree]);
    }
    checks
}

/// The retry check's verdict from the two answers and the list before and after.
fn honoured(
    first: &Sent,
    second: &Sent,
    before: Option<&BTreeSet<String>>,
    after: Option<&BTreeSet<String>>,
) -> Outcome {
    let mut evidence = Vec::new();
    if !first.ok() || !second.ok() {
        evidence.push(format!("first: {}", first.evidence()));
        evidence.push(format!("second: {}", second.evidence()));
        return Outcome::Failed(evidence);
    }
    match (first.id(), second.id()) {
        (Some(a), Some(b)) if a != b => {
            evidence.push(format!("the same key gave two different ids: {a} and {b}"));
        }
        (None, _) | (_, None) => {
            evidence.push(format!(
                "no id to compare: first {}; second {}",
                first.evidence(),
                second.evidence()
            ));
        }
        _ => {}
    }
    if let (Some(before), Some(after)) = (before, after) {
        let new: Vec<&String> = after.difference(before).collect();
        if new.len() > 1 {
            evidence.push(format!(
                "the list shows {} new items, not one: {}",
                new.len(),
                join(&new)
            ));
        }
    }
    if evidence.is_empty() {
        Outcome::Passed
    } else {
        Outcome::Failed(evidence)
    }
}

fn spend_reason(cap: u32, paid: u32, need: u32) -> String {
    format!(
        "needs {} (calls that spend or cannot be undone); --allow-spend {cap} leaves {}",
        plural(need as usize, "paid call", "paid calls"),
        cap.saturating_sub(paid)
    )
}

fn join(items: &[&String]) -> String {
    items
        .iter()
        .map(|s| s.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use connectorgen_core::model::Target as OutputTarget;

    const MANIFEST: &str = r#"version: 1
service:
  name: VidGen
  version: 1.0.0
  description: Turns a prompt into a short video.
  publicUrl: https://api.vidgen.example
  dashboardUrl: https://vidgen.example/keys
servers:
  - { url: "https://sandbox.vidgen.example", description: Sandbox (no charges) }
  - { url: "https://eu.vidgen.example", description: "Production, Europe" }
  - { url: "https://latest.vidgen.example", description: The latest API }
  - { url: "https://api-test.vidgen.example" }
probe: { sandboxUrl: "https://api-test.vidgen.example" }
operations:
  - id: createVideo
    method: post
    path: /v1/videos
    summary: Generate a video from a prompt
    description: Starts a generation. Does not publish the video.
    input:
      type: object
      properties:
        prompt: { type: string, examples: ["a lighthouse at dusk"] }
        seconds: { type: integer, default: 4 }
        style: { type: string }
      required: [prompt]
    spends: { kind: credits, note: "Costs 1 credit." }
  - id: listVideos
    method: get
    path: /v1/videos
    summary: List the person's videos
    description: Read-only. Lists videos; cannot change them.
    query:
      - { name: cursor, required: true, schema: { type: string } }
"#;

    fn analysis() -> Analysis {
        let options = connectorgen_core::Options {
            targets: Some(vec![OutputTarget::Mcp]),
            ..connectorgen_core::Options::default()
        };
        let analysis = connectorgen_core::analyze_with(
            "connector.yaml",
            Arc::new(MANIFEST.to_string()),
            &options,
        )
        .unwrap();
        assert!(!analysis.has_errors(), "{:?}", analysis.diagnostics);
        analysis
    }

    fn prober(analysis: &Analysis) -> Prober<'_> {
        let tools = mapping::read_tools(
            analysis
                .outputs
                .as_ref()
                .unwrap()
                .iter()
                .find(|(p, _)| p.ends_with("mcp-tools.json"))
                .unwrap()
                .1,
        )
        .unwrap();
        Prober {
            connector: analysis.connector.as_ref().unwrap(),
            tools,
            client: Client::new(Limits::default(), Vec::new()).unwrap(),
            base_url: "http://127.0.0.1:9".to_string(),
            environment: Environment::default(),
            redactor: Redactor::default(),
            paid: 0,
            cap: 0,
            rate_limited: Vec::new(),
            results: Vec::new(),
        }
    }

    #[test]
    fn only_this_machine_or_the_declared_sandbox_is_probed_without_live() {
        let analysis = analysis();
        let connector = analysis.connector.as_ref().unwrap();
        let allowed = |url: &str| is_sandbox(connector, &Origin::of(url).unwrap());
        assert!(allowed("http://127.0.0.1:8787"));
        assert!(allowed("http://localhost:1"));
        assert!(allowed("http://[::1]:80"));
        assert!(allowed("https://api-test.vidgen.example"));
        // A description that says "Sandbox" is prose, not a declaration.
        assert!(!allowed("https://sandbox.vidgen.example"));
        assert!(!allowed("https://eu.vidgen.example"));
        assert!(!allowed("https://latest.vidgen.example"));
        assert!(!allowed("https://api.vidgen.example"));
        assert!(!allowed("http://api.localhost:8787"));
        assert!(!allowed("http://127.0.0.1.example:8787"));
        // The sandbox's host alone is not enough on another port.
        assert!(!allowed("https://api-test.vidgen.example:8443"));
    }

    #[test]
    fn without_probe_input_the_schema_examples_and_defaults_are_the_call() {
        let analysis = analysis();
        let prober = prober(&analysis);
        let input = prober.input("createVideo", None).unwrap();
        assert_eq!(
            Value::Object(input),
            serde_json::json!({ "prompt": "a lighthouse at dusk", "seconds": 4 })
        );
        let why = prober.input("listVideos", None).unwrap_err();
        assert!(why.contains("`cursor` has no example"), "{why}");
    }

    #[test]
    fn a_call_its_schema_refuses_is_not_sent() {
        // 127.0.0.1:9 is never reached: the check comes first.
        let analysis = analysis();
        let mut prober = prober(&analysis);
        let args = serde_json::json!({ "cursor": 5 });
        let sent =
            crate::block_on(prober.send("listVideos", args.as_object().unwrap(), None, Cred::Real))
                .unwrap();
        let why = sent.err().unwrap_or_default();
        assert!(
            why.contains("inputSchema") && why.contains("`cursor`"),
            "{why}"
        );
    }
}
