//! Base mode: the safety layer laid over the provider's own OpenAPI document.
//!
//! Takes: the manifest's operations (each naming a base operation) and the parsed
//! `Base`. Returns (through `Validator`): the model operations with the provider's
//! Operation Objects, and the document around them. `operation.rs` finds each operation
//! and lays the safety layer over it; `service.rs` reads `service:` over the base's
//! `info`; `document.rs` builds the document around the operations; `official_schema.rs`
//! checks what is kept against the official schema of its version; `v32.rs` (3.2 → 3.1)
//! and `upgrade.rs` (3.0 → 3.1) convert it; `examples.rs` leaves out examples their own
//! schema refuses; `titles.rs` makes distinct the titles generators would give one
//! class name; `servers.rs` decides where each operation is called.
//! Must never: change the HTTP the provider describes, beyond the edits each file names.

pub(super) mod document;
pub(super) mod examples;
pub(super) mod official_schema;
pub(super) mod operation;
pub(super) mod servers;
pub(super) mod service;
pub(super) mod titles;
pub(super) mod upgrade;
pub(super) mod v32;
