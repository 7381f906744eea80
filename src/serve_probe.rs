//! `serve` and `probe`: the two commands that run the manifest against a live provider,
//! present when the crate is built with its `runtime` feature (the default).
//!
//! Takes their flags (`ServeArgs`, `ProbeArgs`, declared here for main.rs's clap tree)
//! and `Ui`, and builds the runtime's `serve::Config` or `probe::Config` from them. Both analyse the manifest for the mcp target alone; with errors they print
//! the findings and return exit 1 without starting anything. `serve` returns 0 when the
//! server ends and `Failure::Fatal` (exit 2) when it cannot run; `probe` prints its
//! report on stdout in the chosen format and returns 1 when a check failed. The exit code
//! itself is main.rs's to give.
//!
//! Must never send a request itself, nor read the manifest any other way than
//! `Source::analyze`: what reaches the provider is the library's (`connectorgen_runtime::serve`,
//! `connectorgen_runtime::probe`) to decide.

#[cfg(not(feature = "runtime"))]
pub(crate) use absent::{Absent, run_probe, run_serve};
#[cfg(feature = "runtime")]
pub(crate) use present::{ProbeArgs, ServeArgs, run_probe, run_serve};

#[cfg(feature = "runtime")]
mod present {
    use std::path::{Path, PathBuf};
    use std::process::ExitCode;

    use clap::Args;
    use connectorgen_core::Analysis;
    use connectorgen_core::input;
    use connectorgen_core::model::Target;
    use connectorgen_core::report::Format;

    use crate::{Failure, Source, Ui};

    #[derive(Args)]
    #[command(
        after_help = "The provider's credential is read from the variable auth.env names, by default <SERVICE>_TOKEN (service.name upper-cased, \
other characters as _: VidGen -> VIDGEN_TOKEN). Only variables that start with <SERVICE>_ are read, others only with --allow-env; \
the start-up line names each one and where it goes. Every forwarded or refused call is one JSON line on stderr.\n\n\
Examples:\n  VIDGEN_TOKEN=vg_... connectorgen serve examples/manifests/video.yaml\n  \
connectorgen serve connector.yaml --base-url http://127.0.0.1:8787 --state /tmp/state\n  \
connectorgen serve connector.yaml --http 127.0.0.1:8000\n\n\
Exit codes: 0 the client disconnected; 1 the manifest has errors; 2 could not run."
    )]
    pub(crate) struct ServeArgs {
        /// The manifest to serve
        #[arg(default_value = crate::cli::DEFAULT_MANIFEST)]
        manifest: PathBuf,
        /// Serve Streamable HTTP on this address (path /mcp) instead of stdio
        #[arg(long, value_name = "ADDR")]
        http: Option<std::net::SocketAddr>,
        /// With --http: also accept requests whose Host is NAME (a remote deployment's public name; repeatable)
        #[arg(long, value_name = "NAME")]
        allow_host: Vec<String>,
        /// With --http: accept only requests with an OAuth access token from this authorization server (its issuer URL; repeatable); see docs/serve.md, "Remote deployment"
        #[arg(long, value_name = "URL", requires = "http")]
        auth_issuer: Vec<String>,
        /// With --auth-issuer: this server's canonical URI, the audience every token must name [default: https://<first --allow-host>/mcp, else http://<the listen address>/mcp]
        #[arg(long, value_name = "URL", requires = "auth_issuer")]
        resource: Option<String>,
        #[expect(
            clippy::doc_markdown,
            reason = "user text: --help shows the variables' names as written"
        )]
        /// With --auth-issuer: accept opaque tokens too, checked at this introspection endpoint (RFC 7662) with serve's client id and secret from <SERVICE>_INTROSPECTION_CLIENT_ID and <SERVICE>_INTROSPECTION_CLIENT_SECRET
        #[arg(long, value_name = "URL", requires = "auth_issuer")]
        auth_introspection: Option<String>,
        #[expect(
            clippy::doc_markdown,
            reason = "user text: --help shows the variables' names as written"
        )]
        /// With auth.perPerson: the file of keys people's own credentials are sealed with, one ID:BASE64 line per 32-byte key, the first sealing new ones [default: the lines in <SERVICE>_CREDENTIAL_KEYS]
        #[arg(long, value_name = "FILE")]
        credential_keys: Option<PathBuf>,
        /// With --http: the most connections open at once; one more is answered 503 and closed
        #[arg(long, value_name = "N", default_value_t = connectorgen_runtime::serve::HttpLimits::default().max_connections, value_parser = clap::value_parser!(u32).range(1..))]
        max_connections: u32,
        /// With --http: the most MCP sessions at once; an initialize beyond them is answered 503
        #[arg(long, value_name = "N", default_value_t = connectorgen_runtime::serve::HttpLimits::default().max_sessions, value_parser = clap::value_parser!(u32).range(1..))]
        max_sessions: u32,
        /// With --http: seconds a connection may take to send a request's headers before it is closed
        #[arg(long, value_name = "SECS", default_value_t = 30.0, value_parser = seconds)]
        header_timeout: f64,
        /// Send every call here instead of the manifest's server, whose path it replaces too (a sandbox, a local provider)
        #[arg(long, value_name = "URL")]
        base_url: Option<String>,
        /// The folder of the ledger [default: the platform's state directory + /connectorgen]
        #[arg(long, value_name = "DIR")]
        state: Option<PathBuf>,
        #[expect(
            clippy::doc_markdown,
            reason = "user text: --help shows the variable's name as written"
        )]
        /// Keep the ledger and the token secret in PostgreSQL, shared by several instances, instead of the state folder [default: the variable CONNECTORGEN_LEDGER]
        #[arg(long, value_name = "postgres://…")]
        ledger: Option<String>,
        /// Forward calls that spend or cannot be undone WITHOUT asking (tests, sandboxes); announced at start-up
        #[arg(long)]
        no_consent: bool,
        /// Seconds during which an identical call is a retry of the one before
        #[arg(long, value_name = "SECS", default_value_t = connectorgen_runtime::serve::DEFAULT_RETRY_WINDOW)]
        retry_window: u64,
        /// The most the ledger may hold (K, M, G suffixes); at the bound new paid calls are refused, never a live row forgotten
        #[arg(long, value_name = "BYTES", default_value = "64M", value_parser = input::parse_size)]
        ledger_max_bytes: u64,
        /// A spending limit each person is held to, UNIT=LIMIT/WINDOW: credits=20/day, money=50/month (the manifest's currency), calls=10/hour (paid calls, their amount known or not); windows hour, day, week, month in UTC (repeatable; replaces the manifest's budgets:, `none` for no limit)
        #[arg(long = "budget", value_name = "UNIT=LIMIT/WINDOW", value_parser = budget)]
        budgets: Vec<Option<connectorgen_core::budget::Budget>>,
        /// Days the ledger keeps the receipt of a paid or permanent call (its arguments, amount and status), at least; a budget's window may keep it longer
        #[arg(long, value_name = "DAYS", default_value_t = connectorgen_runtime::serve::DEFAULT_RECEIPTS_DAYS)]
        receipts_days: u64,
        /// Seconds to wait for a connection to the provider
        #[arg(long, value_name = "SECS", default_value_t = 10.0, value_parser = seconds)]
        connect_timeout: f64,
        /// Seconds a whole call to the provider may take, answer included
        #[arg(long, value_name = "SECS", default_value_t = 60.0, value_parser = seconds)]
        timeout: f64,
        /// The largest answer read from the provider (K, M, G suffixes)
        #[arg(long, value_name = "BYTES", default_value = "10M", value_parser = input::parse_size)]
        max_response_bytes: u64,
        /// Refuse a manifest larger than this (K, M, G suffixes)
        #[arg(long, value_name = "BYTES", default_value = "128M", value_parser = input::parse_size)]
        max_bytes: u64,
        /// Let the manifest name files in DIR too (its `openapi:` document), besides its own folder (repeatable)
        #[arg(long, value_name = "DIR")]
        allow_read: Vec<PathBuf>,
        /// Let the manifest read the environment variable NAME too (auth.env, fixed: env), besides the service's own <SERVICE>_… ones (repeatable)
        #[arg(long, value_name = "NAME")]
        allow_env: Vec<String>,
    }

    #[derive(Args)]
    #[command(
        after_help = "Checks: retry key honoured, retry key required, async really is async, poll target is \
free and side-effect-free, a bad credential gets 401, a 429 carries Retry-After (see docs/probe.md). \
Requests to operations that spend or cannot be undone are made only within --allow-spend (a redirect followed counts again). \
The credential is read from <SERVICE>_TOKEN, as for serve; other variables than <SERVICE>_… only with --allow-env.\n\n\
Examples:\n  VIDGEN_TOKEN=vg_test connectorgen probe examples/manifests/video.yaml --base-url http://127.0.0.1:8787 --allow-spend 4\n  \
connectorgen probe connector.yaml --format github    # the manifest's probe.sandboxUrl\n\n\
Exit codes: 0 nothing failed; 1 a check failed, or the manifest has errors; 2 could not run."
    )]
    pub(crate) struct ProbeArgs {
        /// The manifest whose promises to check
        #[arg(default_value = crate::cli::DEFAULT_MANIFEST)]
        manifest: PathBuf,
        /// The sandbox to call: on this machine, or the manifest's probe.sandboxUrl (else --live) [default: probe.sandboxUrl]
        #[arg(long, value_name = "URL")]
        base_url: Option<String>,
        /// Check only this operation (repeatable)
        #[arg(long = "operation", value_name = "ID")]
        operations: Vec<String>,
        /// The most calls that spend or cannot be undone (each counted, and printed)
        #[arg(long, value_name = "N", default_value_t = 0)]
        allow_spend: u32,
        /// The base URL is a live service, not a sandbox: calls have real effects
        #[arg(long)]
        live: bool,
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
        /// Seconds a whole call may take, answer included
        #[arg(long, value_name = "SECS", default_value_t = 60.0, value_parser = seconds)]
        timeout: f64,
        /// Refuse a manifest larger than this (K, M, G suffixes)
        #[arg(long, value_name = "BYTES", default_value = "128M", value_parser = input::parse_size)]
        max_bytes: u64,
        /// Let the manifest name files in DIR too (its `openapi:` document), besides its own folder (repeatable)
        #[arg(long, value_name = "DIR")]
        allow_read: Vec<PathBuf>,
        /// Let the manifest read the environment variable NAME too (auth.env, fixed: env), besides the service's own <SERVICE>_… ones (repeatable)
        #[arg(long, value_name = "NAME")]
        allow_env: Vec<String>,
    }

    /// The manifest analysed for the mcp target alone, as `serve` and `probe` use it; `None`
    /// when it has errors, which are printed.
    fn runtime_analysis(
        ui: &Ui,
        manifest: &Path,
        max_bytes: u64,
        allow_read: Vec<PathBuf>,
    ) -> Result<Option<Analysis>, Failure> {
        let source = Source {
            max_bytes,
            targets: vec![Target::Mcp],
            templates: None,
            template_fuel: None,
            max_template_output: None,
            max_alias_expansion: None,
            allow_read,
        };
        let analysis = source.analyze(manifest)?;
        if analysis.has_errors() {
            ui.err(&connectorgen_core::report::human_findings(
                &analysis.diagnostics,
                ui.colored(&std::io::stderr()),
            ));
            return Ok(None);
        }
        Ok(Some(analysis))
    }

    pub(crate) fn run_serve(ui: &Ui, args: ServeArgs) -> Result<ExitCode, Failure> {
        let config = connectorgen_runtime::serve::Config {
            http: args.http,
            http_limits: connectorgen_runtime::serve::HttpLimits {
                max_connections: args.max_connections,
                max_sessions: args.max_sessions,
                header_timeout: std::time::Duration::from_secs_f64(args.header_timeout),
            },
            allow_hosts: args.allow_host,
            auth: connectorgen_runtime::auth::AuthConfig {
                issuers: args.auth_issuer,
                resource: args.resource,
                introspection: args.auth_introspection,
            },
            credential_keys: args.credential_keys,
            base_url: args.base_url,
            state_dir: args.state,
            // Read here, not by clap's `env`: the generator-only build keeps clap's features.
            ledger: args
                .ledger
                .or_else(|| std::env::var("CONNECTORGEN_LEDGER").ok())
                .filter(|url| !url.is_empty()),
            enforce_consent: !args.no_consent,
            retry_window: args.retry_window,
            ledger_max_bytes: args.ledger_max_bytes,
            // `--budget none` alone: no limit; `--budget` at all: the manifest's replaced.
            budgets: (!args.budgets.is_empty())
                .then(|| args.budgets.into_iter().flatten().collect()),
            receipts_days: args.receipts_days,
            allow_env: args.allow_env,
            limits: connectorgen_runtime::client::Limits {
                connect_timeout: std::time::Duration::from_secs_f64(args.connect_timeout),
                total_timeout: std::time::Duration::from_secs_f64(args.timeout),
                max_response_bytes: usize::try_from(args.max_response_bytes).unwrap_or(usize::MAX),
            },
        };
        let Some(analysis) = runtime_analysis(ui, &args.manifest, args.max_bytes, args.allow_read)?
        else {
            return Ok(ExitCode::from(1));
        };
        connectorgen_runtime::serve::run(&analysis, &config).map_err(Failure::Fatal)?;
        Ok(ExitCode::SUCCESS)
    }

    pub(crate) fn run_probe(ui: &Ui, args: ProbeArgs) -> Result<ExitCode, Failure> {
        let config = connectorgen_runtime::probe::Config {
            base_url: args.base_url,
            operations: args.operations,
            allow_spend: args.allow_spend,
            live: args.live,
            allow_env: args.allow_env,
            limits: connectorgen_runtime::client::Limits {
                total_timeout: std::time::Duration::from_secs_f64(args.timeout),
                ..connectorgen_runtime::client::Limits::default()
            },
        };
        let format = args.format;
        let Some(analysis) = runtime_analysis(ui, &args.manifest, args.max_bytes, args.allow_read)?
        else {
            return Ok(ExitCode::from(1));
        };
        let report =
            connectorgen_runtime::probe::run(&analysis, &config).map_err(Failure::Fatal)?;
        // Where each variable read went, on stderr (stdout is the report).
        for used in &report.environment {
            ui.err(&format!("probe: read {used}\n"));
        }
        let text = connectorgen_runtime::probe::report::ProbeText {
            report: &report,
            manifest_name: analysis.diagnostics.name(),
            manifest_text: analysis.diagnostics.text(),
        };
        ui.out(&text.render(format));
        Ok(if report.failed() {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        })
    }

    /// `--budget`: a budget (`connectorgen_core::budget::Budget::parse`), or `none`.
    fn budget(text: &str) -> Result<Option<connectorgen_core::budget::Budget>, String> {
        if text.trim() == "none" {
            return Ok(None);
        }
        connectorgen_core::budget::Budget::parse(text).map(Some)
    }

    fn seconds(text: &str) -> Result<f64, String> {
        match text.parse::<f64>() {
            Ok(v) if v > 0.0 && v.is_finite() && v < 1e9 => Ok(v),
            _ => Err(format!("`{text}` is not a positive number of seconds")),
        }
    }
}

/// `serve` and `probe` in a build without the runtime (`--no-default-features`): hidden
/// from `--help`, and a clear exit 2 instead of clap's "unrecognized subcommand".
#[cfg(not(feature = "runtime"))]
mod absent {
    use std::process::ExitCode;

    use crate::{Failure, Ui};

    /// Whatever followed `serve` or `probe`, unread.
    #[derive(clap::Args)]
    pub(crate) struct Absent {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
        rest: Vec<String>,
    }

    fn absent(command: &str) -> Failure {
        Failure::Fatal(format!(
            "this connectorgen was built without its runtime (--no-default-features), so it has no `{command}`: \
             install it with its default features (cargo install connectorgen)"
        ))
    }

    pub(crate) fn run_serve(_: &Ui, _: Absent) -> Result<ExitCode, Failure> {
        Err(absent("serve"))
    }

    pub(crate) fn run_probe(_: &Ui, _: Absent) -> Result<ExitCode, Failure> {
        Err(absent("probe"))
    }
}
