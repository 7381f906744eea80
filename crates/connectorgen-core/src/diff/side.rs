//! One side of a diff: a manifest analysed as `check` analyses it, kept as what the
//! comparison needs.
//!
//! Takes: the manifest's name and text and its `Analysis` (the caller read both, from
//! the disk or from a git revision). Returns: a `Side` (the validated connector, each
//! operation's MCP tool and request mapping, and each built target's model-facing
//! sentences per operation), or the analysis's findings when the manifest is invalid.
//! Must never: render anything the analysis did not, apart from the tools' definitions
//! (rendered for every manifest, whatever its targets, so that tool names, arguments
//! and requests compare the same way whether or not `mcp` is a target).

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use crate::Analysis;
use crate::diagnostics::Diagnostics;
use crate::model::{Connector, Target};
use crate::render::mcp::mapping::{META_KEY, RequestMapping};

/// One operation's MCP tool, as `diff` compares it.
pub(super) struct Tool {
    /// The request the tool's call becomes (its `_meta` mapping).
    pub(super) request: Option<RequestMapping>,
    /// `annotations.readOnlyHint`.
    pub(super) read_only: bool,
    /// The JSON request body schema's own `required` list (`$ref`s followed), as the
    /// operation's openapi.json has it: a name there that no property declares is in no
    /// argument, but every target's request changed (issue 43).
    pub(super) body_required: std::collections::BTreeSet<String>,
}

/// One analysed manifest.
pub struct Side {
    pub(super) name: String,
    pub(super) text: Arc<String>,
    pub(super) connector: Connector,
    /// By operation index.
    pub(super) tools: Vec<Tool>,
    /// For each file that states each operation's model-facing text (openapi.json,
    /// mcp-tools.json, …) of a target the manifest builds: operation id → the text
    /// connectorgen wrote after the author's description.
    pub(super) sentences: BTreeMap<&'static str, BTreeMap<String, String>>,
}

impl Side {
    /// The side an analysis gives, or the analysis's findings when the manifest did not
    /// validate (a side must be a connector to be compared).
    pub fn new(name: &str, text: Arc<String>, analysis: Analysis) -> Result<Side, Diagnostics> {
        let (Some(connector), Some(outputs)) = (analysis.connector, analysis.outputs) else {
            return Err(analysis.diagnostics);
        };
        let tools = crate::render::mcp::definitions(&connector)
            .iter()
            .zip(&connector.operations)
            .map(|(tool, op)| Tool {
                body_required: op
                    .required_body_properties(&connector.document)
                    .into_iter()
                    .collect(),
                request: tool
                    .pointer(&format!("/_meta/{}", META_KEY.replace('/', "~1")))
                    .and_then(|m| serde_json::from_value(m.clone()).ok()),
                read_only: tool
                    .pointer("/annotations/readOnlyHint")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
            })
            .collect();
        let authors: BTreeMap<&str, &str> = connector
            .operations
            .iter()
            .map(|o| (o.id.as_str(), &*o.description))
            .collect();
        let mut sentences = BTreeMap::new();
        for target in &connector.targets {
            for file in target.files() {
                let Some(doc) = outputs
                    .get(*file)
                    .and_then(|t| serde_json::from_str::<Value>(t).ok())
                else {
                    continue;
                };
                let texts = if *target == Target::Mcp {
                    tool_texts(&doc)
                } else {
                    openapi_texts(&doc)
                };
                let generated = texts
                    .into_iter()
                    .map(|(id, text)| {
                        let own = authors.get(id.as_str()).copied().unwrap_or_default();
                        let rest = text.strip_prefix(own).unwrap_or(&text);
                        (id, rest.trim().to_string())
                    })
                    .collect();
                sentences.insert(*file, generated);
            }
        }
        Ok(Side {
            name: name.to_string(),
            text,
            connector,
            tools,
            sentences,
        })
    }
}

/// `mcp-tools.json`: each tool's name and description.
fn tool_texts(doc: &Value) -> Vec<(String, String)> {
    doc.as_array()
        .into_iter()
        .flatten()
        .filter_map(|tool| {
            Some((
                tool.get("name")?.as_str()?.to_string(),
                tool.get("description")?.as_str()?.to_string(),
            ))
        })
        .collect()
}

/// An OpenAPI document: each operation's operationId and description.
fn openapi_texts(doc: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for item in doc
        .get("paths")
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|p| p.values())
    {
        for op in item.as_object().into_iter().flat_map(|i| i.values()) {
            if let (Some(id), Some(text)) = (
                op.get("operationId").and_then(Value::as_str),
                op.get("description").and_then(Value::as_str),
            ) {
                out.push((id.to_string(), text.to_string()));
            }
        }
    }
    out
}
