//! The one integration test binary: every test module of `tests/` (and the runtime's
//! against loopback servers), so the 2-core machine compiles and links one binary
//! instead of seventeen. Run one module with `cargo test --test integration cases::`.

mod support;

mod authoring;
mod base_fidelity;
mod bounded_templates;
mod cases;
mod check;
mod cli;
mod diff;
mod fast_path;
mod guarantees;
mod import;
mod inline_requests;
mod nothing_lost;
mod openai_budget;
mod openapi30_meaning;
mod properties;
mod reference_docs;
mod reporting;
mod rules_doc;
#[cfg(feature = "runtime")]
mod runtime;
mod safety_properties;
mod schema;
mod semantics;
mod watch;
