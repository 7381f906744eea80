//! The runtime against real servers on loopback: the reference provider itself, and (as
//! they land) `connectorgen serve` driven by a real MCP client and `connectorgen probe`.
//! One test binary, so the 2-core machine links it once.

#[path = "../support/cli.rs"]
mod cli;
#[path = "../support/http.rs"]
mod http;
#[path = "../support/loopback.rs"]
mod loopback;
#[path = "../support/mcp_client.rs"]
mod mcp;
#[path = "../support/provider.rs"]
mod provider;
#[path = "../support/recorder.rs"]
mod recorder;

mod probe;
mod reference;
mod requests;
mod serve;
