//! `connectorgen serve`: the connector as a running MCP server that enforces what the
//! manifest says — consent before a call that spends or cannot be undone, the
//! provider's retry key on every retry, and no second job while the first runs.
//!
//! Takes: a validated connector with its `mcp-tools.json` (the tools served are exactly
//! those, their request mapping included), and the command line's settings. Returns:
//! when the client goes away (stdio) or the process is stopped (HTTP).
//! Must never: forward a call that needs consent without a fresh yes bound to that tool
//! and those arguments (unless `--no-consent`, announced at start-up), or a paid call
//! that would pass a budget in force (`--budget`, else the manifest's `budgets:`), take the
//! credential from a tool argument, write anything but MCP to stdout, or contact a host
//! that is not the connector's.
//!
//! The only module that speaks MCP (through `rmcp`); the runtime under it builds and
//! sends requests and keeps the ledger. Protocol revisions: every one rmcp 3.11 knows,
//! 2024-11-05 to 2026-07-28; on 2026-07-28 consent is asked with the multi round-trip
//! input-required result, on earlier ones with `elicitation/create` when the client
//! declares elicitation, else with a one-time confirmation value the model relays.

mod codec;
mod connect;
mod gate;
mod handler;
mod http;
mod redacted;
mod stdio;

use std::path::PathBuf;
use std::sync::Arc;

use crate::client::{Client, Limits, Origin};
use crate::clock::{Clock, SystemClock};
use crate::credential::Environment;
use crate::ledger::{Ledger, PgLedger, Retention, SqliteLedger};
use crate::seal::Sealer;
use crate::state_dir;
use connectorgen_core::Analysis;
use connectorgen_core::model::Target;
use connectorgen_core::render::mcp::mapping::{self, RequestMapping};

pub(crate) use handler::Server;

/// The body of the HTTP listener's own answers (and rmcp's).
type Body = http_body_util::combinators::BoxBody<bytes::Bytes, std::convert::Infallible>;

/// A short plain-text answer of the listener's own (a refusal, a cap reached).
fn plain(status: ::http::StatusCode, text: &'static str) -> ::http::Response<Body> {
    let body = http_body_util::Full::new(bytes::Bytes::from_static(text.as_bytes()));
    let mut response = ::http::Response::new(http_body_util::BodyExt::boxed(body));
    *response.status_mut() = status;
    response.headers_mut().insert(
        ::http::header::CONTENT_TYPE,
        ::http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

pub use http::HttpLimits;

/// How `serve` runs.
#[derive(Debug, Clone)]
pub struct Config {
    /// `None`: stdio. `Some`: Streamable HTTP on this address, path `/mcp`.
    pub http: Option<std::net::SocketAddr>,
    /// Inbound OAuth (`--auth-issuer`, `--resource`): HTTP only.
    pub auth: crate::auth::AuthConfig,
    /// `--credential-keys`: the key file people's own credentials are sealed with
    /// (`auth.perPerson`); absent: `<SERVICE>_CREDENTIAL_KEYS`.
    pub credential_keys: Option<PathBuf>,
    /// The bounds of the HTTP listener (unused on stdio).
    pub http_limits: HttpLimits,
    /// Host names (or `host:port`) accepted in the `Host` header of HTTP requests besides
    /// loopback (`--allow-host`): a remote deployment's public name.
    pub allow_hosts: Vec<String>,
    pub base_url: Option<String>,
    /// `None`: the platform's state directory (`state_dir::default_dir`).
    pub state_dir: Option<PathBuf>,
    /// A PostgreSQL URL (`--ledger`, `CONNECTORGEN_LEDGER`): the ledger and the token
    /// secret shared with other instances, instead of the state folder's SQLite file.
    pub ledger: Option<String>,
    pub enforce_consent: bool,
    /// How long an identical call counts as a retry of the one before (seconds).
    pub retry_window: u64,
    /// The most bytes the ledger's rows may hold (`--ledger-max-bytes`).
    pub ledger_max_bytes: u64,
    /// `--budget`, when given (an empty list: `--budget none`): replaces the manifest's
    /// `budgets:`. `None`: the manifest's.
    pub budgets: Option<Vec<connectorgen_core::budget::Budget>>,
    /// `--receipts-days`: how long a receipt is kept after its last write, at least (a
    /// budget's window may keep it longer).
    pub receipts_days: u64,
    pub limits: Limits,
    /// Environment variables the manifest may read besides the service's own
    /// (`<SERVICE>_…`): `--allow-env NAME`.
    pub allow_env: Vec<String>,
}

/// Default `--retry-window`: one hour covers a client's timeout and restart and a
/// person coming back to a slow job, and ends well inside the 24 hours most providers
/// keep a retry key.
pub const DEFAULT_RETRY_WINDOW: u64 = 3600;

/// Default `--ledger-max-bytes`: 64 MiB holds thousands of calls that can still be retried
/// or answered, with their answers (one stored answer is at most 1 MiB), while a client
/// that calls without end cannot fill the disk. At the bound new paid calls are refused,
/// never a live row forgotten (docs/serve.md, "What the ledger keeps").
pub const DEFAULT_LEDGER_MAX_BYTES: u64 = 64 << 20;

/// Default `--receipts-days`: a month of receipts, what a person looks back on to check a
/// statement, and as long as a monthly budget needs its paid calls anyway. A receipt
/// weighs 512 bytes and its arguments on `--ledger-max-bytes` (its stored answer is
/// dropped once the retry window is past), so the default 64 MiB holds about 100,000.
pub const DEFAULT_RECEIPTS_DAYS: u64 = 30;

/// The budgets in force: `--budget` when given, else the manifest's `budgets:`; refused
/// when two limit one count in one window, or when the operations let one not hold
/// (`Connector::budget_problem`).
fn budgets(
    connector: &connectorgen_core::model::Connector,
    config: &Config,
) -> Result<Vec<connectorgen_core::budget::Budget>, String> {
    let (list, from) = match &config.budgets {
        Some(list) => (list.clone(), "--budget"),
        None => (connector.budgets.clone(), "the manifest's budgets:"),
    };
    if let Some(i) = connectorgen_core::budget::repeated(&list) {
        return Err(format!(
            "{from}: {} is a second limit on {} per {}: keep one",
            list[i],
            list[i].unit.as_str(),
            list[i].window.as_str()
        ));
    }
    if let Some(problem) = connector.budget_problem(&list) {
        return Err(format!("{from}: {problem}"));
    }
    Ok(list)
}

/// Runs the server until the client disconnects (stdio) or the process ends (HTTP).
/// The error (exit 2) has every secret redacted.
pub fn run(analysis: &Analysis, config: &Config) -> Result<(), String> {
    let server = prepare(analysis, config, Arc::new(SystemClock))?;
    let redactor = server.redactor().clone();
    crate::block_on(async move {
        server.keep_offering_held();
        match config.http {
            None => serve_stdio(server).await,
            Some(address) => http::serve(server, address, config.http_limits, &config.auth).await,
        }
    })
    .map_err(|e| format!("could not start the runtime: {e}"))?
    .map_err(|e| redactor.text(&e))
}

/// The connector a consent is bound to: its service name and the SHA-256 of everything
/// its manifest produced (each output's path and text), so a confirmation value given
/// for one connector never opens another's same-named tool, even with a shared state
/// folder, nor the same service after its manifest changed what a tool does.
fn connector_identity(analysis: &Analysis) -> String {
    use sha2::{Digest as _, Sha256};
    let mut hasher = Sha256::new();
    for (path, text) in analysis.outputs.iter().flatten() {
        for part in [path, text] {
            hasher.update((part.len() as u64).to_be_bytes());
            hasher.update(part.as_bytes());
        }
    }
    let digest: String = hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let name = analysis
        .connector
        .as_ref()
        .map_or("", |c| c.service.name.as_str());
    format!("{name} sha256:{digest}")
}

/// The server for a connector, ready to attach to a transport.
pub(crate) fn prepare(
    analysis: &Analysis,
    config: &Config,
    clock: Arc<dyn Clock>,
) -> Result<Server, String> {
    let connector = analysis
        .connector
        .as_ref()
        .ok_or("the manifest did not validate")?;
    if !connector.targets.contains(&Target::Mcp) {
        return Err("serve needs the mcp target (run with it selected)".into());
    }
    let tools = mapping::tools_in(analysis.outputs.as_ref())?;
    if let Some(base) = &config.base_url {
        Origin::of(base).ok_or_else(|| format!("--base-url {base} is not an absolute URL"))?;
    }
    let allowed = allowed_origins(tools.iter().map(|(_, m)| m), config.base_url.as_deref());
    let client = Client::new(config.limits, allowed).map_err(|e| e.to_string())?;

    // Before anything is created: a refused variable stops the server with nothing done.
    let (environment, credentials, redactor) = Environment::start(
        analysis,
        &tools,
        &config.allow_env,
        config.base_url.as_deref(),
    )?;
    // Each person's own credential: only where people are told apart, sealed with a key
    // that is not in the database.
    let keys = match &connector.per_person {
        Some(_) => Some(person_keys(connector, config)?),
        None => None,
    };
    let introspection = match &config.auth.introspection {
        Some(url) => Some(introspection_client(connector, url, &config.allow_env)?),
        None => None,
    };
    // serve's own secret at the authorization server is kept out of everything it writes.
    let redactor = match &introspection {
        Some((_, secret)) => environment.redactor_with(&credentials, &[secret.as_str()])?,
        None => redactor,
    };
    let introspection = introspection.map(|(i, _)| i);
    // Each tool's principal: whose rows its calls are (ledger.rs).
    let principals: std::collections::BTreeMap<String, String> = tools
        .iter()
        .zip(&credentials)
        .map(|((definition, _), credential)| {
            let name = definition["name"].as_str().unwrap_or_default().to_string();
            (name, crate::call::principal(credential.as_ref()))
        })
        .collect();
    let budgets = budgets(connector, config)?;
    let receipts = budgets
        .iter()
        .map(|b| b.window.longest())
        .max()
        .unwrap_or(0)
        .max(config.receipts_days.saturating_mul(86_400));
    let (ledger, secret, where_kept) =
        open_ledger(config, &connector.service.name, &principals, receipts)?;
    // A key ring that does not open what it sealed stops serve here, before anyone's call.
    if let Some(keys) = &keys {
        crate::ledger::check_credential_keys(&*ledger, keys, &connector.service.name, clock.now())
            .map_err(|e| e.to_string())?;
    }
    let registration =
        match &connector.per_person {
            Some(connectorgen_core::model::PerPerson::OAuth(endpoints)) => Some(
                provider_registration(connector, endpoints, &config.allow_env)?,
            ),
            _ => None,
        };
    if let Some(secret) = registration.as_ref().and_then(|r| r.client_secret.as_ref()) {
        redactor.add([secret.as_str()])?;
    }
    // A confirmation value opens only for the credentials it was given under: another
    // person's instance on the same store, with their own credential, refuses it.
    let mut identity = connector_identity(analysis);
    for principal in principals
        .values()
        .collect::<std::collections::BTreeSet<_>>()
    {
        identity.push_str(" principal:");
        identity.push_str(principal);
    }
    let sealer = Sealer::new(codec::codec(&secret)?, clock, &identity);

    // The credential's real variables: each part's for a credential of parts (not the
    // unused `auth.env` default), `auth.env` for one (review defect 10).
    let env_name = match environment.credential_envs.as_slice() {
        [] => connector.auth.env.clone(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    };

    redactor.line(
        "start",
        serde_json::json!({
            "service": connector.service.name,
            "tools": tools.len(),
            "consent": if config.enforce_consent { "enforced" } else { "OFF" },
            "state": where_kept,
            "retryWindowSeconds": config.retry_window,
            "ledgerMaxBytes": config.ledger_max_bytes,
            "budgets": budgets.iter().map(ToString::to_string).collect::<Vec<_>>(),
            "receiptsDays": config.receipts_days,
            "credentialEnv": env_name,
            "credentialEnvs": environment.credential_envs,
            "credentialSet": environment.credential_set(),
            "env": environment.describe(),
            "baseUrl": config.base_url,
        }),
    );
    if !config.enforce_consent {
        redactor.line(
            "warning",
            serde_json::json!({"message": "--no-consent: calls that spend or cannot be undone are \
                forwarded WITHOUT asking the person. Only for tests and sandboxes."}),
        );
    }
    for name in environment
        .missing_credential()
        .into_iter()
        .filter(|_| connector.per_person.is_none())
    {
        let what = if environment.credential_envs.len() == 1 {
            "a credential"
        } else {
            "this part of the credential"
        };
        redactor.line(
            "warning",
            serde_json::json!({"message": format!("{name} is not set: calls go out without {what}")}),
        );
    }
    for name in &environment.too_short {
        redactor.line(
            "warning",
            serde_json::json!({"message": format!(
                "{name} holds fewer than {} characters: too short to be redacted from logs \
                 and answers (and too short to be a secret)",
                crate::redact::MIN_SECRET
            )}),
        );
    }

    let config = Config {
        budgets: Some(budgets),
        ..config.clone()
    };
    Server::new(handler::Parts {
        connector: connector.clone(),
        tools,
        credentials,
        client,
        ledger,
        sealer,
        config,
        redactor,
        env_name,
        environment,
        descriptions: analysis.served_descriptions.clone(),
        introspection,
        keys,
        registration,
    })
}

/// serve's registration at the provider's authorization server (`connect: oauth`): the
/// endpoints from the manifest, the client id and secret from `<SERVICE>_OAUTH_CLIENT_ID`
/// and `<SERVICE>_OAUTH_CLIENT_SECRET` (a public client without a secret; the service's own
/// prefix, or named with `--allow-env`); the redirect URI is set once the origin is known.
fn provider_registration(
    connector: &connectorgen_core::model::Connector,
    endpoints: &connectorgen_core::model::ProviderOAuth,
    allow: &[String],
) -> Result<crate::provider_oauth::Registration, String> {
    let prefix = connectorgen_core::model::env_prefix(&connector.service.name);
    let read =
        |suffix: &str| serve_variable(&format!("{prefix}OAUTH_CLIENT_{suffix}"), &prefix, allow);
    let client_id = read("ID").ok_or_else(|| {
        format!(
            "auth.perPerson connect: oauth needs serve's client id at the provider in \
             {prefix}OAUTH_CLIENT_ID (and its secret, for a confidential client, in \
             {prefix}OAUTH_CLIENT_SECRET)"
        )
    })?;
    Ok(crate::provider_oauth::Registration {
        authorization_url: endpoints.authorization_url.clone(),
        token_url: endpoints.token_url.clone(),
        revocation_url: endpoints.revocation_url.clone(),
        client_id,
        client_secret: read("SECRET"),
        redirect_uri: String::new(),
        scopes: endpoints.scopes.clone(),
    })
}

/// The key ring people's own credentials are sealed with (`auth.perPerson`): from
/// `--credential-keys FILE`, else `<SERVICE>_CREDENTIAL_KEYS`; refused without
/// `--http --auth-issuer`, where serve cannot tell one person from another.
fn person_keys(
    connector: &connectorgen_core::model::Connector,
    config: &Config,
) -> Result<crate::vault::Keys, String> {
    if config.http.is_none() || !config.auth.enabled() {
        return Err(
            "auth.perPerson: each person connects their own account, so serve must \
             know who calls: run it with --http and --auth-issuer (docs/serve.md, \
             \"Each person's own account\")"
                .into(),
        );
    }
    let prefix = connectorgen_core::model::env_prefix(&connector.service.name);
    let name = format!("{prefix}CREDENTIAL_KEYS");
    if let Some(path) = &config.credential_keys {
        return crate::vault::Keys::from_file(path).map_err(|e| e.to_string());
    }
    match serve_variable(&name, &prefix, &config.allow_env) {
        Some(text) => crate::vault::Keys::from_env(&name, &text).map_err(|e| e.to_string()),
        None => Err(format!(
            "auth.perPerson keeps each person's credential sealed with a key of the \
             operator's: give the key file with --credential-keys FILE, or its lines in {name} \
             (one ID:BASE64 line per 32-byte key; docs/serve.md, \"Keeping people's \
             credentials\")"
        )),
    }
}

/// serve's client at the introspection endpoint `url`: its id and secret from
/// `<SERVICE>_INTROSPECTION_CLIENT_ID` and `…_SECRET` (the service's own prefix, or
/// named with `--allow-env`), and the secret, for the redactor.
fn introspection_client(
    connector: &connectorgen_core::model::Connector,
    url: &str,
    allow: &[String],
) -> Result<(crate::auth::Introspection, String), String> {
    let origin = Origin::of(url)
        .ok_or_else(|| format!("--auth-introspection {url} is not an absolute URL"))?;
    let loopback = matches!(origin.host.as_str(), "localhost" | "127.0.0.1" | "[::1]");
    if origin.scheme != "https" && !loopback {
        return Err(format!(
            "--auth-introspection {url}: the endpoint is reached over https (http only on \
             this machine): serve's secret is sent to it"
        ));
    }
    let prefix = connectorgen_core::model::env_prefix(&connector.service.name);
    let read = |suffix: &str| -> Result<String, String> {
        let name = format!("{prefix}INTROSPECTION_CLIENT_{suffix}");
        if !may_read(&name, &prefix, allow) {
            return Err(format!(
                "--auth-introspection needs {name}, which is read only with --allow-env {name}"
            ));
        }
        serve_variable(&name, &prefix, allow).ok_or_else(|| {
            format!(
                "--auth-introspection needs serve's client credentials at the \
                 authorization server in {prefix}INTROSPECTION_CLIENT_ID and \
                 {prefix}INTROSPECTION_CLIENT_SECRET; {name} is not set"
            )
        })
    };
    let id = read("ID")?;
    let secret = read("SECRET")?;
    Ok((
        crate::auth::Introspection::new(url, id, secret.clone()),
        secret,
    ))
}

/// The ledger, the token secret, and where they are kept (for the start-up line).
type Opened = (Arc<dyn Ledger>, Vec<u8>, String);

/// The ledger, the token secret and where they are kept (for the start-up line):
/// PostgreSQL with `--ledger`, else the state folder's SQLite file and `secret`.
fn open_ledger(
    config: &Config,
    service: &str,
    principals: &std::collections::BTreeMap<String, String>,
    receipts: u64,
) -> Result<Opened, String> {
    let retention = Retention {
        window: config.retry_window,
        consent: crate::seal::TOKEN_LIFETIME_SECONDS,
        max_bytes: config.ledger_max_bytes,
        receipts,
    };
    if let Some(url) = &config.ledger {
        let shown = crate::ledger::shown_url(url);
        // A send's lease: the longest it may take, then recording its outcome, which can
        // wait out the ledger's lock timeout (`ledger::LOCK_WAIT_SECONDS`), with a margin for
        // the clocks of the instance and of the database.
        let lease = (config.limits.connect_timeout + config.limits.total_timeout)
            .as_secs()
            .saturating_add(crate::ledger::LOCK_WAIT_SECONDS)
            .saturating_add(5);
        let ledger = PgLedger::open(url, service, retention, lease)
            .map_err(|e| format!("--ledger {shown}: {e}"))?;
        let secret = ledger
            .secret()
            .map_err(|e| format!("--ledger {shown}: {e}"))?;
        return Ok((Arc::new(ledger), secret, shown));
    }
    let dir = match &config.state_dir {
        Some(dir) => dir.clone(),
        None => state_dir::default_dir()
            .ok_or("no state directory (HOME is not set): pass --state DIR")?,
    };
    state_dir::ensure_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let path = state_dir::ledger_path(&dir, service);
    let ledger = SqliteLedger::open(&path, service, retention, principals)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let secret = state_dir::secret(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    Ok((Arc::new(ledger), secret, path.display().to_string()))
}

/// The origins the client may contact: `--base-url` alone when given (every call goes
/// there), else every server of every tool.
fn allowed_origins<'a>(
    mappings: impl Iterator<Item = &'a RequestMapping>,
    base_url: Option<&str>,
) -> Vec<Origin> {
    if let Some(base) = base_url {
        return Origin::of(base).into_iter().collect();
    }
    let mut out: Vec<Origin> = Vec::new();
    for mapping in mappings {
        for server in &mapping.servers {
            let mut url = server.url.clone();
            for (name, value) in &server.variables {
                url = url.replace(&format!("{{{name}}}"), value);
            }
            if let Some(origin) = Origin::of(&url)
                && !out.contains(&origin)
            {
                out.push(origin);
            }
        }
    }
    out
}

async fn serve_stdio(server: Server) -> Result<(), String> {
    use rmcp::ServiceExt as _;
    let running = server
        .serve(stdio::proxy(
            tokio::io::BufReader::new(tokio::io::stdin()),
            tokio::io::stdout(),
        ))
        .await
        .map_err(|e| format!("MCP handshake failed: {e}"))?;
    running
        .waiting()
        .await
        .map_err(|e| format!("the server stopped: {e}"))?;
    Ok(())
}

/// Whether serve may read its own variable `name`: the service's own prefix (`prefix`,
/// when it is one of its own: `credential::own_prefix`), or named with `--allow-env`.
fn may_read(name: &str, prefix: &str, allow: &[String]) -> bool {
    crate::credential::own_prefix(prefix).is_some() || allow.iter().any(|a| a == name)
}

/// serve's own variable `name` (its secrets at an authorization server, the credential
/// key ring): `None` when it may not be read (`may_read`), is not set, or is blank.
fn serve_variable(name: &str, prefix: &str, allow: &[String]) -> Option<String> {
    may_read(name, prefix, allow)
        .then(|| std::env::var(name).ok())
        .flatten()
        .filter(|v| !v.trim().is_empty())
}
