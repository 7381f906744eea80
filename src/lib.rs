//! connectorgen: one YAML manifest of a connector's operations → `openapi.json`,
//! `llms.txt` and `descriptions.md`, with the cost, polling and idempotency rules an AI
//! agent needs to act safely on a person's behalf.
//!
//! The pipeline runs one way: `manifest` (parse) → `validate` (raw → `model`) →
//! `render` (model → `Outputs`) → `output` (write). `generate` runs the first three.

pub mod diagnostics;
pub mod manifest;
pub mod model;
pub mod output;
pub mod render;
pub mod validate;

use std::sync::Arc;

use diagnostics::Diagnostics;
use model::Connector;
use render::{Outputs, RenderError};

/// Why a manifest produced no outputs.
#[derive(Debug, thiserror::Error)]
pub enum GenerateError {
    /// The manifest has problems; every one found is listed.
    #[error("the manifest has {} problem(s)", .0.len())]
    Invalid(Diagnostics),
    /// A template failed to render (a bug in a template, not in the manifest).
    #[error(transparent)]
    Render(#[from] RenderError),
}

/// Parses and validates manifest text. `name` is how diagnostics name the file.
pub fn load(name: &str, text: Arc<String>) -> Result<Connector, Diagnostics> {
    let raw = match manifest::parse(&text) {
        Ok(raw) => raw,
        Err(d) => return Err(Diagnostics::new(name, text, vec![*d])),
    };
    validate::validate(&raw).map_err(|problems| Diagnostics::new(name, text, problems))
}

/// Parses, validates and renders: manifest text → every output file's contents.
pub fn generate(name: &str, text: Arc<String>) -> Result<Outputs, GenerateError> {
    let connector = load(name, text).map_err(GenerateError::Invalid)?;
    let file_name = std::path::Path::new(name)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| name.to_string());
    Ok(render::render(&connector, &file_name)?)
}
