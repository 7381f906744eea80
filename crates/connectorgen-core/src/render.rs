//! Model → the generated files.
//!
//! Takes: a validated `Connector` (with its targets), the base document in base mode
//! (findings about it point into it), and the manifest's file name.
//! Returns: `Outputs`, a sorted map of output file name → full contents, plus findings
//! from targets that cannot express something. Both `build` (which writes them) and a
//! drift check (which compares them) start from this one map; `build` asks for
//! openapi.json to be left out of it and writes that file from the model as it is made
//! (`Streamed`), the same bytes, so that the largest output is never held whole.
//! Must never: read or write the disk, or depend on anything but its inputs (no clock,
//! no environment, no hash-map order): the same manifest gives the same bytes.

pub mod mcp;
pub mod memory;
mod nesting;
pub mod openai;
mod openapi;
mod openapi30;
mod pretty;
mod prose;

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Serialize;

use crate::base::Base;
use crate::diagnostics::Finding;
use crate::model::{self, Connector, Target};
use crate::templates::{Limits, Sources};
use prose::Flavour;

/// Output file name (relative to the output folder) → contents.
pub type Outputs = BTreeMap<String, String>;

/// A template failed to compile or render: with `--templates`, a problem in the user's
/// template, shown at the template's own line; otherwise a bug in connectorgen.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
#[error("template `{template}`: {message}")]
#[diagnostic(
    code("template-error"),
    help(
        "fix the template, or remove it from the templates folder to use the default (`connectorgen templates export DIR` writes the defaults)"
    )
)]
pub struct RenderError {
    pub template: String,
    pub message: String,
    #[source_code]
    pub source_text: Option<std::sync::Arc<miette::NamedSource<String>>>,
    #[label("here")]
    pub span: Option<miette::SourceSpan>,
}

impl RenderError {
    fn new(template: &str, source: Option<&String>, e: minijinja::Error) -> Self {
        // minijinja's Display repeats the name and line; the label shows those.
        let message = match e.detail() {
            Some(detail) => format!("{}: {detail}", e.kind()),
            None => e.kind().to_string(),
        };
        let span = match (source, e.range(), e.line()) {
            (_, Some(range), _) => Some(miette::SourceSpan::from(range)),
            (Some(text), None, Some(line)) => {
                let start: usize = text
                    .split_inclusive('\n')
                    .take(line - 1)
                    .map(str::len)
                    .sum();
                let len = text[start..].find('\n').unwrap_or(text.len() - start);
                Some(miette::SourceSpan::from((start, len)))
            }
            _ => None,
        };
        RenderError {
            template: template.to_string(),
            message,
            source_text: source
                .map(|s| std::sync::Arc::new(miette::NamedSource::new(template, s.clone()))),
            span,
        }
    }
}

/// Everything rendered for one connector.
pub struct Rendered {
    pub outputs: Outputs,
    /// Each operation's model-facing description, in manifest order (lints measure them).
    pub descriptions: Vec<String>,
    /// What a target could not express as the manifest says (errors) or had to adapt
    /// (warnings).
    pub findings: Vec<Finding>,
    /// With the mcp target: each tool's size and heaviest parts (the `mcp-tool-too-large`
    /// lint, `explain --list --stats`).
    pub tool_weights: Vec<mcp::ToolWeight>,
    /// With the mcp target: the descriptions `connectorgen serve` serves where they differ
    /// from `mcp-tools.json`'s, by operation id (a keyed tool: the server sends the key).
    pub served_descriptions: BTreeMap<String, String>,
    /// Whether openapi.json was left out of `outputs` (`render_with`'s `stream`), for
    /// `Streamed` to write.
    pub streamed: bool,
}

/// Renders the outputs of every target the connector selects, with the given templates,
/// within `limits`.
pub fn render(
    connector: &Connector,
    base: Option<&Base>,
    manifest_name: &str,
    templates: &Sources,
    limits: Limits,
) -> Result<Rendered, RenderError> {
    render_with(connector, base, manifest_name, templates, limits, false)
}

/// `render`; with `stream`, openapi.json is left out of the outputs (`Rendered::streamed`
/// says so) for `Streamed` to write straight into its file.
pub fn render_with(
    connector: &Connector,
    base: Option<&Base>,
    manifest_name: &str,
    templates: &Sources,
    limits: Limits,
    stream: bool,
) -> Result<Rendered, RenderError> {
    let prose = prose::Prose::new(templates, limits)?;
    let reads = prose::GetsByPath::new(connector);
    let op_values = prose::operation_values(connector, &reads);
    // Shared with the views llms.txt and descriptions.md are rendered from, not copied.
    let descriptions = Arc::new(
        op_values
            .iter()
            .map(|op| prose.description(op))
            .collect::<Result<Vec<_>, _>>()?,
    );
    let mut outputs = Outputs::new();
    let mut findings = Vec::new();
    let mut tool_weights = Vec::new();
    let mut served_descriptions = BTreeMap::new();
    let mut streamed = false;
    for target in &connector.targets {
        match target {
            Target::Muse => {
                if stream {
                    streamed = true;
                } else {
                    outputs.insert(
                        model::OPENAPI_JSON.to_string(),
                        openapi::render(connector, &descriptions),
                    );
                }
                let ctx =
                    prose::Prose::file_context(connector, &op_values, &descriptions, manifest_name);
                outputs.insert(model::LLMS_TXT.to_string(), prose.llms_txt(&ctx)?);
                outputs.insert(
                    model::DESCRIPTIONS_MD.to_string(),
                    prose.descriptions_md(&ctx)?,
                );
            }
            Target::Mcp => {
                let (_, descriptions) = flavoured(
                    &prose,
                    connector,
                    &reads,
                    &op_values,
                    &descriptions,
                    Flavour::Mcp,
                )?;
                let (_, served) = flavoured(
                    &prose,
                    connector,
                    &reads,
                    &op_values,
                    &descriptions,
                    Flavour::Served,
                )?;
                for ((op, text), file) in connector
                    .operations
                    .iter()
                    .zip(served.iter())
                    .zip(descriptions.iter())
                {
                    if text != file {
                        served_descriptions.insert(op.id.clone(), text.clone());
                    }
                }
                let rendered = mcp::render(connector, &descriptions);
                outputs.insert(model::MCP_TOOLS_JSON.to_string(), rendered.text);
                findings.extend(rendered.findings);
                tool_weights = rendered.weights;
            }
            Target::Openai => {
                let (values, descriptions) = flavoured(
                    &prose,
                    connector,
                    &reads,
                    &op_values,
                    &descriptions,
                    Flavour::Openai,
                )?;
                let compact = values
                    .iter()
                    .map(|op| prose.compact_notice(op))
                    .collect::<Result<Vec<_>, _>>()?;
                let mut notice = |op: &model::Operation| {
                    let value = prose::operation_value(connector, &reads, op, Flavour::Openai);
                    prose.compact_notice(&value)
                };
                let (text, found) =
                    openai::render(connector, base, &descriptions, &compact, &mut notice)?;
                outputs.insert(model::OPENAPI_OPENAI_JSON.to_string(), text);
                findings.extend(found);
            }
            Target::Openapi30 => {
                let (text, found) = openapi30::render(connector, base, &descriptions);
                outputs.insert(model::OPENAPI_30_JSON.to_string(), text);
                findings.extend(found);
            }
        }
    }
    Ok(Rendered {
        outputs,
        // The views are gone with their files' contexts: nothing is copied here.
        descriptions: Arc::unwrap_or_clone(descriptions),
        findings,
        tool_weights,
        served_descriptions,
        streamed,
    })
}

/// The output `render_with` left out of `Outputs` when asked to stream: openapi.json,
/// the largest (25 MB at 10,000 operations), which needs nothing but the model and the
/// descriptions, so that `build` writes it into its temporary file as it is made instead
/// of holding it whole beside the model (`output::write_all_streaming`).
#[derive(Debug)]
pub struct Streamed {
    /// Each operation's model-facing description (`Rendered::descriptions`).
    descriptions: Vec<String>,
}

impl Streamed {
    /// The file it writes.
    pub const NAME: &'static str = model::OPENAPI_JSON;

    /// What writes `Self::NAME`: `descriptions` are `Rendered::descriptions`.
    pub fn new(descriptions: Vec<String>) -> Self {
        Streamed { descriptions }
    }

    /// Writes the bytes `render` would have put in `Outputs` for `connector` (the one
    /// rendered) into `writer`.
    pub fn write(
        &self,
        connector: &Connector,
        writer: &mut dyn std::io::Write,
    ) -> std::io::Result<()> {
        openapi::write(connector, &self.descriptions, writer)
    }
}

/// The free reads that show whether a call went through, as the descriptions name them
/// (`retry.checkWith`): for an operation without a retry key, a job's list, the thing a
/// change settles on, or an exposed GET on its collection or parent. `serve` names the
/// same in its advice after a failure.
pub struct CheckWith<'a>(prose::GetsByPath<'a>);

impl<'a> CheckWith<'a> {
    pub fn new(connector: &'a Connector) -> Self {
        CheckWith(prose::GetsByPath::new(connector))
    }

    /// The read for `op`, if any.
    pub fn of<'b>(&'b self, op: &'b model::Operation) -> Option<&'b str> {
        prose::check_with(&self.0, op)
    }
}

/// Operation values and descriptions, borrowed unless some were rendered again.
type Flavoured<'a> = (Cow<'a, [minijinja::Value]>, Cow<'a, [String]>);

/// The operation values and descriptions `flavour`'s model reads: the documents' own,
/// with only the operations whose retry rule reads otherwise there rendered again.
fn flavoured<'a>(
    prose: &prose::Prose,
    connector: &Connector,
    reads: &prose::GetsByPath<'_>,
    op_values: &'a [minijinja::Value],
    descriptions: &'a [String],
    flavour: Flavour,
) -> Result<Flavoured<'a>, RenderError> {
    // Most manifests have nothing to render again: no copy then.
    let mut values = Cow::Borrowed(op_values);
    let mut texts = Cow::Borrowed(descriptions);
    for (i, op) in connector.operations.iter().enumerate() {
        if prose::differs(op, flavour) {
            let value = prose::operation_value(connector, reads, op, flavour);
            texts.to_mut()[i] = prose.description(&value)?;
            values.to_mut()[i] = value;
        }
    }
    Ok((values, texts))
}

/// `value` as pretty JSON with one trailing newline, as every generated JSON file is
/// written (`pretty`: `serde_json`'s bytes, fewer writes). Not pre-sized on purpose:
/// growing by doubling copies little (glibc moves large blocks with `mremap`);
/// measured, sizing it was 10 M instructions more at 10,000 operations
/// (docs/dev/PERFORMANCE-diary.md).
fn json_text<T: Serialize + ?Sized>(value: &T) -> String {
    let mut text = pretty::to_string(value);
    text.push('\n');
    text
}
