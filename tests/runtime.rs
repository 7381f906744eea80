//! The runtime against real servers on loopback: the reference provider itself, and (as
//! they land) `connectorgen serve` driven by a real MCP client and `connectorgen probe`.
//! A module of the one integration binary (tests/integration.rs).

use crate::support::cli;
use crate::support::e2e;
use crate::support::http;
use crate::support::mcp_client as mcp;
use crate::support::postgres;
use crate::support::provider;
use crate::support::recorder;

mod answers;
mod arguments;
mod auth_server;
mod bounds;
mod browser;
mod budgets;
mod consent;
mod credentials;
mod durability;
mod echoes;
mod envelopes;
mod oauth;
mod people;
mod people_oauth;
mod probe;
mod provider_oauth;
mod reference;
mod reliability;
mod requests;
mod secrets;
mod serve;
mod several;
mod tasks;
mod ts_oauth;
