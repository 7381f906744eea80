//! Helpers the test modules share (the CLI runner, the reference provider, an MCP
//! client, schema checks, Markdown structure). Each is used by some modules only.

pub mod cli;
pub mod http;
pub mod loopback;
pub mod markdown;
pub mod mcp_client;
pub mod mcp_tools;
pub mod provider;
pub mod recorder;
pub mod refs;
pub mod schemas;
pub mod sets;
