//! Helpers the test modules share (the CLI runner, the reference provider, an MCP
//! client, schema checks, Markdown structure). Each is used by some modules only.

pub(crate) mod authz;
pub(crate) mod cli;
pub(crate) mod e2e;
pub(crate) mod http;
pub(crate) mod imports;
pub(crate) mod loopback;
pub(crate) mod markdown;
pub(crate) mod mcp_client;
pub(crate) mod mcp_tools;
pub(crate) mod node;
pub(crate) mod outputs;
pub(crate) mod provider;
pub(crate) mod real;
pub(crate) mod recorder;
pub(crate) mod refs;
pub(crate) mod schemas;
pub(crate) mod sets;

/// The throwaway PostgreSQL cluster, owned by the runtime crate (its `testing` feature).
#[cfg(feature = "runtime")]
#[allow(
    unused_imports,
    reason = "the integration binary uses it; the real-document suite, which includes this module too, does not"
)]
pub(crate) use connectorgen_runtime::testing::postgres;
