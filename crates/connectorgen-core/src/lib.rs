//! connectorgen: one YAML manifest of a connector's operations — written inline, or laid
//! over the provider's own OpenAPI document — → `openapi.json`, `llms.txt`,
//! `descriptions.md` and the other targets' files, with the cost, polling, permanence
//! and idempotency rules an AI agent needs to act safely on a person's behalf.
//!
//! The pipeline runs one way: `manifest` (parse) → `base` (the provider's document, in
//! base mode) → `validate` (raw → `model`) → `render` (model → `Outputs`) → `lint` →
//! `output` (write, for `build`) or `check` (compare with disk). `analyze` runs
//! everything up to the writing; `report` turns its findings into text for people and
//! CI tools.
//!
//! Modules import only from the layers below their own (`tests` aside), so the graph
//! has no cycle:
//!
//! 1. leaves, importing nothing of the crate: `diagnostics` (the one finding type),
//!    `input` (bounded reads), `english`, `terminal`, `atomic_file`, `arguments` (the
//!    client-safe MCP argument names), `subschemas` (which JSON Schema keywords hold
//!    schemas), `budget` (exact amounts, spending limits and their UTC calendar windows);
//! 2. `model`: the validated connector, lint settings included; `lower` (checked inline
//!    values → OpenAPI objects, and the `Idempotency-Key` header connectorgen declares),
//!    which imports `model` and leaves alone; `schema_walk` (the one walk of a composed
//!    schema through `$ref`s and `allOf`/`anyOf`/`oneOf`, which the generator and the
//!    server share), which imports `model`'s reading of a reference;
//! 3. `manifest`: the raw types of the YAML, its reader and budgets, and the names its
//!    JSON Schema offers;
//! 4. `base`: the provider's OpenAPI document, read and indexed;
//! 5. `validate`: raw manifest (and base) → model, every problem at once;
//! 6. `templates` (the prose sources) and `render` (model → outputs, target by target);
//! 7. `lint` (model + descriptions → findings);
//! 8. `output` (write a set of files) and `check` (compare it with disk);
//! 9. `report` (findings and drift → text), and `diff` (two analysed versions of a
//!    manifest → the diff rules' findings, and their text);
//! 10. the commands' libraries: `explain`, `rules` (`explain --rule`, docs/rules.md),
//!     `init`, `import`, `schema`; then `pipeline` (`analyze`, `Options`, `Input`,
//!     re-exported here), which strings the stages together.
//!
//! Above this crate: `connectorgen-runtime` (serve, probe, the ledger, the HTTP client: the
//! only async code, built on this crate's model and `render::mcp`'s request mapping) and the
//! `connectorgen` package, the command line (CONTRIBUTING.md, "Project layout").
//!
//! This crate is `pub` only where something outside it uses it — the runtime crate, the
//! command line (`src/main.rs` and its command modules), `tests/`, `examples/` and `fuzz/`.
//! Everything else is `pub(crate)`, and `unreachable_pub` (Cargo.toml's `[lints]`) keeps it so, so that rustc reports what nothing uses as dead
//! code. A `pub mod` below is one whose items outsiders name; inside it, an item is `pub`
//! because an outsider calls it or because it is part of the type of one that is
//! (`Connector`'s fields, `manifest::parse`'s raw types). `arguments`, `atomic_file`,
//! `english` and `subschemas` are private. `pub` for tests, examples or fuzz alone, not the binary:
//! `generate`, `generate_with`, `GenerateError`, `load`; `manifest::{parse, parse_fast,
//! parse_plain, parse_with, parse_value, parser_options}`; `report::DETAILED_PER_CODE`;
//! `templates::{MANIFEST_BYTES_PER_FUEL, Limits::for_manifest}`; `render::render`,
//! `render::mcp::{OUTPUT_FACTOR, output_limit, mapping}`, `render::openai::{DESCRIPTION_MAX,
//! PARAMETER_MAX}`; `input::decode`; `base::locate_all`; `model::Method::named`. `validate` is `pub` for
//! `examples/stages.rs`.

mod arguments;
mod atomic_file;
pub mod base;
pub mod budget;
pub mod check;
pub mod diagnostics;
pub mod diff;
pub mod english;
pub mod explain;
pub mod import;
pub mod init;
pub mod input;
pub mod lint;
mod lower;
pub mod manifest;
pub mod model;
pub mod output;
mod pipeline;
pub mod render;
pub mod report;
pub mod rules;
pub mod schema;
pub mod schema_walk;
mod subschemas;
pub mod templates;
pub mod terminal;
pub mod validate;

/// The render memory bound (render/memory.rs) in this crate's own unit tests, as the
/// binary installs it.
#[cfg(test)]
#[global_allocator]
static ALLOC: render::memory::BoundedAlloc = render::memory::BoundedAlloc;

pub use pipeline::{
    Analysis, GenerateError, Input, InputKind, Options, analyze, analyze_with, generate,
    generate_with, load,
};
