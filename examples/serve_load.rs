//! The load generator of issue 44's serve benchmark (scripts/bench-serve.sh): opens
//! sessions on a running `connectorgen serve --http` with rmcp's client, runs free reads
//! (`listVideos`) in some and paid calls (`createVideo`, each with a prompt never sent
//! before, so each is a new logical request) in others for a fixed time, and prints one
//! JSON object: the reads' and the paid calls' counts, rates and latency percentiles.
//!
//! ```text
//! cargo run --release --example serve_load -- --url http://127.0.0.1:PORT/mcp \
//!     --read-sessions 1 --paid-sessions 4 --seconds 10
//! ```
//!
//! Takes the server's MCP URL and the shape of the load as flags; returns the JSON on
//! stdout and exit 0, or exit 2 when a session cannot be opened. The paid calls claim
//! only when the server runs with `--no-consent` (otherwise each is answered with a
//! consent question, which this client does not answer). Never contacts anything but
//! the URL it is given, and never asserts on time: it measures, the script reports.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use clap::Parser;
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, ProtocolVersion,
};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt as _};
use serde_json::{Map, Value, json};

#[derive(Parser)]
struct Args {
    /// The server's MCP endpoint (the `url` of its `listening` line).
    #[arg(long)]
    url: String,
    /// Sessions that each run free reads (`listVideos`) one after another.
    #[arg(long, default_value_t = 1)]
    read_sessions: usize,
    /// Sessions that each run paid calls (`createVideo`) one after another.
    #[arg(long, default_value_t = 0)]
    paid_sessions: usize,
    /// How long the measured window lasts.
    #[arg(long, default_value_t = 10.0)]
    seconds: f64,
    /// Load before the window, not counted: connections opened, the paid calls' claims
    /// already contending when the first read is timed.
    #[arg(long, default_value_t = 1.0)]
    warmup_seconds: f64,
    /// Worker threads of the client's runtime.
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// Put in every prompt, so that runs against one server never repeat a paid call's
    /// arguments (a repeat would be a retry of the earlier call, not a new claim).
    #[arg(long, default_value = "run")]
    tag: String,
    /// Open the sessions with `initialize` (2025-11-25, a session id per session) or
    /// with `server/discover` (2026-07-28).
    #[arg(long, value_enum, default_value_t = Revision::Earlier)]
    revision: Revision,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum Revision {
    Earlier,
    Current,
}

/// A client that declares nothing beyond the protocol revision: no elicitation, no tasks.
#[derive(Clone)]
struct Bench {
    revision: Revision,
}

impl ClientHandler for Bench {
    fn get_info(&self) -> ClientConfig {
        let version = match self.revision {
            Revision::Current => ProtocolVersion::V_2026_07_28,
            Revision::Earlier => ProtocolVersion::V_2025_11_25,
        };
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("connectorgen-serve-load", "0.0.0"),
        )
        .with_protocol_version(version)
    }
}

type Client = RunningService<RoleClient, Bench>;

/// What one session saw in the window: each call's latency, and the calls that failed.
#[derive(Default)]
struct Seen {
    latencies: Vec<Duration>,
    errors: u64,
    first_error: Option<String>,
}

/// What a session runs, one call after another.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Read,
    Paid,
}

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(args.threads.max(1))
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: no tokio runtime: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    match runtime.block_on(run(&args)) {
        Ok(report) => {
            println!("{report}");
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::from(2)
        }
    }
}

async fn connect(args: &Args) -> Result<Client, String> {
    let lifecycle = match args.revision {
        Revision::Earlier => ClientLifecycleMode::Initialize,
        Revision::Current => ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        },
    };
    let transport = StreamableHttpClientTransport::from_uri(args.url.clone());
    let client = Bench {
        revision: args.revision,
    };
    // Bounded, so that a server that never answers ends the run instead of hanging it.
    match tokio::time::timeout(
        Duration::from_secs(30),
        client.serve_with_lifecycle(transport, lifecycle),
    )
    .await
    {
        Ok(Ok(client)) => Ok(client),
        Ok(Err(e)) => Err(format!("no MCP session at {}: {e}", args.url)),
        Err(_) => Err(format!("no MCP session at {} within 30 s", args.url)),
    }
}

async fn run(args: &Args) -> Result<Value, String> {
    // reqwest is built without a default TLS provider (ring only, as in the tests); the
    // client needs one installed even for plain HTTP.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let kinds: Vec<Kind> = std::iter::repeat_n(Kind::Read, args.read_sessions)
        .chain(std::iter::repeat_n(Kind::Paid, args.paid_sessions))
        .collect();
    // Every session open before any call, so that opening one is not measured.
    let mut clients = Vec::with_capacity(kinds.len());
    for _ in &kinds {
        clients.push(Arc::new(connect(args).await?));
    }
    let stop = Arc::new(AtomicBool::new(false));
    let started = Instant::now();
    let window_opens = started + Duration::from_secs_f64(args.warmup_seconds);
    let mut sessions = tokio::task::JoinSet::new();
    for (index, (kind, client)) in kinds.iter().zip(&clients).enumerate() {
        let (kind, client, stop) = (*kind, client.clone(), stop.clone());
        let tag = args.tag.clone();
        sessions.spawn(async move {
            let seen = session(kind, index, &tag, &client, &stop, window_opens).await;
            (kind, seen)
        });
    }
    tokio::time::sleep_until((window_opens + Duration::from_secs_f64(args.seconds)).into()).await;
    stop.store(true, Ordering::SeqCst);
    let window_closed = Instant::now();
    let mut reads = Seen::default();
    let mut paid = Seen::default();
    // A call under way when the window closes is waited for (its latency is real), but
    // bounded: a server stalled for minutes ends the run with what it has.
    let drained = tokio::time::timeout(Duration::from_secs(120), async {
        while let Some(joined) = sessions.join_next().await {
            let Ok((kind, seen)) = joined else { continue };
            let into = if kind == Kind::Read {
                &mut reads
            } else {
                &mut paid
            };
            into.latencies.extend(seen.latencies);
            into.errors += seen.errors;
            if into.first_error.is_none() {
                into.first_error = seen.first_error;
            }
        }
    })
    .await;
    // Whatever did not end in time is stopped here, so that its sessions can be closed.
    drop(sessions);
    let window = window_closed.duration_since(window_opens).as_secs_f64();
    for client in clients {
        if let Ok(client) = Arc::try_unwrap(client) {
            let _ = client.cancel().await;
        }
    }
    Ok(json!({
        "url": args.url,
        "readSessions": args.read_sessions,
        "paidSessions": args.paid_sessions,
        "seconds": window,
        "drained": drained.is_ok(),
        "reads": summary(&mut reads, window),
        "paid": summary(&mut paid, window),
    }))
}

/// One session's loop: calls until `stop`, timing those that start inside the window.
async fn session(
    kind: Kind,
    index: usize,
    tag: &str,
    client: &Client,
    stop: &AtomicBool,
    window_opens: Instant,
) -> Seen {
    let mut seen = Seen::default();
    let mut n = 0u64;
    while !stop.load(Ordering::SeqCst) {
        n += 1;
        let mut arguments = Map::new();
        let name = match kind {
            Kind::Read => "listVideos",
            Kind::Paid => {
                // A prompt no earlier call had: a new logical request, so a new claim.
                let prompt = format!("bench {tag} session {index} call {n}");
                arguments.insert("prompt".to_string(), Value::String(prompt));
                "createVideo"
            }
        };
        let params = CallToolRequestParams::new(name.to_string()).with_arguments(arguments);
        let began = Instant::now();
        let answer = client.call_tool(params).await;
        let took = began.elapsed();
        if began < window_opens {
            continue;
        }
        let failure = match answer {
            Ok(result) if result.is_error == Some(true) => Some(format!(
                "{name}: tool error: {}",
                serde_json::to_string(&result.content).unwrap_or_default()
            )),
            Ok(_) => None,
            Err(e) => Some(format!("{name}: {e}")),
        };
        match failure {
            Some(failure) => {
                seen.errors += 1;
                seen.first_error.get_or_insert(failure);
            }
            None => seen.latencies.push(took),
        }
    }
    seen
}

/// Count, rate and percentiles (nearest rank) in milliseconds; errors apart.
fn summary(seen: &mut Seen, window: f64) -> Value {
    seen.latencies.sort_unstable();
    let ms = |d: Duration| (d.as_secs_f64() * 1e6).round() / 1e3;
    let at = |q: f64| {
        let n = seen.latencies.len();
        if n == 0 {
            return Value::Null;
        }
        // Nearest rank: the smallest latency with at least q of the calls at or below it.
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            clippy::cast_precision_loss,
            reason = "a rank among at most millions of calls"
        )]
        let rank = ((q * n as f64).ceil() as usize).clamp(1, n);
        json!(ms(seen.latencies[rank - 1]))
    };
    #[expect(
        clippy::cast_precision_loss,
        reason = "a count of calls, far below 2^52"
    )]
    let count = seen.latencies.len() as f64;
    json!({
        "count": seen.latencies.len(),
        "perSecond": if window > 0.0 { (count / window * 10.0).round() / 10.0 } else { 0.0 },
        "p50Ms": at(0.50),
        "p95Ms": at(0.95),
        "p99Ms": at(0.99),
        "maxMs": seen.latencies.last().map(|d| json!(ms(*d))),
        "errors": seen.errors,
        "firstError": seen.first_error,
    })
}
