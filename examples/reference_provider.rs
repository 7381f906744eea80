//! The reference provider, run by hand: the same server the tests start
//! (tests/support/provider.rs), on 127.0.0.1, for trying `connectorgen serve` and
//! `connectorgen probe` against something real:
//!
//! ```text
//! cargo run --example reference_provider -- --port 8787
//! VIDGEN_TOKEN=vg_reference_token connectorgen serve examples/manifests/video.yaml --base-url http://127.0.0.1:8787
//! curl http://127.0.0.1:8787/_counters
//! ```
//!
//! Takes its switches as flags; prints one line with its URL and runs until stopped.
//! Never binds anything but 127.0.0.1.

#[path = "../tests/support/loopback.rs"]
mod loopback;
#[path = "../tests/support/provider.rs"]
mod provider;

use clap::Parser;
use provider::{Auth, Provider, Switches};

/// A local provider implementing the operations of examples/manifests/video.yaml and
/// placeholder.yaml, with switches that make it misbehave. `GET /_counters` shows what
/// it received.
#[derive(Parser)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "one field per command-line switch"
)]
struct Args {
    /// Port on 127.0.0.1 (0: any free one, printed at start).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// The credential it accepts as `Authorization: Bearer TOKEN`.
    #[arg(long, default_value = provider::TOKEN)]
    token: String,
    /// Accept any request, with or without a credential.
    #[arg(long, conflicts_with = "reject_all")]
    accept_any_credential: bool,
    /// Answer every request with 401 (a revoked credential).
    #[arg(long)]
    reject_all: bool,
    /// Treat every create as new, whatever its Idempotency-Key.
    #[arg(long)]
    ignore_key: bool,
    /// Refuse (400) a create without an Idempotency-Key.
    #[arg(long)]
    require_key: bool,
    /// Make the poll endpoints start a new job on every call.
    #[arg(long)]
    poll_creates: bool,
    /// Answer the first N requests with 429.
    #[arg(long, default_value_t = 0)]
    rate_limit: u32,
    /// Leave the Retry-After header off those 429s.
    #[arg(long)]
    no_retry_after: bool,
    /// A job succeeds after this many polls (0: never, until the provider restarts).
    #[arg(long, default_value_t = 2)]
    complete_after_polls: u32,
    /// Make the next N creates but answer them 502, as a gateway that lost the answer.
    #[arg(long, default_value_t = 0)]
    lose_answer: u32,
    /// Answer a create whose Idempotency-Key was used already with this status ("must be
    /// unique") instead of the first job (e.g. 422 or 409).
    #[arg(long, value_parser = clap::value_parser!(u16).range(400..600))]
    duplicate: Option<u16>,
}

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    let switches = Switches {
        ignore_key: args.ignore_key,
        require_key: args.require_key,
        poll_creates: args.poll_creates,
        auth: if args.accept_any_credential {
            Auth::AcceptAny
        } else if args.reject_all {
            Auth::RejectAll
        } else {
            Auth::Token(args.token.clone())
        },
        rate_limit_next: args.rate_limit,
        retry_after: (!args.no_retry_after).then_some(1),
        complete_after_polls: (args.complete_after_polls > 0).then_some(args.complete_after_polls),
        lose_answer_next: args.lose_answer,
        duplicate: args.duplicate,
    };
    let provider = match Provider::start_on(args.port, switches) {
        Ok(provider) => provider,
        Err(e) => {
            eprintln!("error: cannot listen on 127.0.0.1:{}: {e}", args.port);
            return std::process::ExitCode::from(2);
        }
    };
    println!(
        "reference provider listening on {} (token {})",
        provider.url(),
        args.token
    );
    loop {
        // The server runs on its own thread; this one only keeps the process alive.
        std::thread::park();
    }
}
