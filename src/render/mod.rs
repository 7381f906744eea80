//! Model → the generated files.
//!
//! Takes: a validated `Connector` and the manifest's file name. Returns: `Outputs`, a
//! sorted map of output file name → full contents. Both `build` (which writes them) and
//! a drift check (which compares them) start from this one map.
//! Must never: read or write the disk, or depend on anything but its inputs (no clock,
//! no environment, no hash-map order): the same manifest gives the same bytes.

mod openapi;
mod prose;

use std::collections::BTreeMap;

use crate::model::Connector;

pub use prose::model_description;

/// Output file name (relative to the output folder) → contents.
pub type Outputs = BTreeMap<String, String>;

/// An error in rendering a template: a bug in a template, not in the manifest.
#[derive(Debug, thiserror::Error)]
#[error("could not render template `{template}`: {source:#}")]
pub struct RenderError {
    pub template: String,
    #[source]
    pub source: minijinja::Error,
}

/// Everything rendered for one connector.
pub struct Rendered {
    pub outputs: Outputs,
    /// Each operation's model-facing description, in manifest order (lints measure them).
    pub descriptions: Vec<String>,
}

/// Renders every output for one connector.
pub fn render(connector: &Connector, manifest_name: &str) -> Result<Rendered, RenderError> {
    let prose = prose::Prose::new()?;
    let descriptions = connector
        .operations
        .iter()
        .map(|op| prose.description(op))
        .collect::<Result<Vec<_>, _>>()?;
    let mut outputs = Outputs::new();
    outputs.insert(
        "openapi.json".to_string(),
        openapi::render(connector, &descriptions),
    );
    outputs.insert(
        "llms.txt".to_string(),
        prose.llms_txt(connector, &descriptions, manifest_name)?,
    );
    outputs.insert(
        "descriptions.md".to_string(),
        prose.descriptions_md(connector, &descriptions, manifest_name)?,
    );
    Ok(Rendered {
        outputs,
        descriptions,
    })
}
