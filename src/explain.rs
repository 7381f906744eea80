//! What the model reads about one operation, target by target (`connectorgen explain`).
//!
//! Takes: the validated connector and its rendered outputs. Returns: plain text for a
//! person: the description each target's model reads, the llms.txt lines that name the
//! operation, the `x-` hints and the MCP annotations — all read back from the generated
//! files, so it shows what was generated, not a second rendering of it.
//! Must never: render anything itself, or guess: an unknown id gets a did-you-mean;
//! or let text from the manifest act on the terminal: what it returns is escaped
//! (`terminal::escape`), tabs and newlines kept.

use std::fmt::Write as _;

use serde_json::Value;

use crate::diagnostics::suggest;
use crate::model::{Connector, Operation};
use crate::render::Outputs;
use crate::terminal::escape;

/// A table of the operations with their flags.
pub fn list(connector: &Connector) -> String {
    let width = connector
        .operations
        .iter()
        .map(|o| o.id.len())
        .max()
        .unwrap_or(0);
    let path_width = connector
        .operations
        .iter()
        .map(|o| escape(&o.path).chars().count())
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    let polled: std::collections::HashSet<&str> = connector
        .operations
        .iter()
        .filter_map(|o| o.async_.as_ref().map(|a| a.poll_with.as_str()))
        .collect();
    for op in &connector.operations {
        let mut flags = Vec::new();
        if let Some(s) = &op.spends {
            match &s.when {
                Some(when) => flags.push(format!("spends ({}, when {when})", s.kind.as_str())),
                None => flags.push(format!("spends ({})", s.kind.as_str())),
            }
        }
        if op.confirm {
            flags.push("confirm (cannot be undone)".to_string());
        } else if !op.consequential && op.method != crate::model::Method::Get {
            flags.push("routine (confirm: false)".to_string());
        }
        if let Some(a) = &op.async_ {
            match a.returns {
                crate::model::Returns::Job => flags.push(format!("async, polls {}", a.poll_with)),
                crate::model::Returns::Change => {
                    flags.push(format!("async change, polls {}", a.poll_with));
                }
            }
        }
        if polled.contains(op.id.as_str()) {
            flags.push("poll target".to_string());
        }
        if flags.is_empty() && op.method == crate::model::Method::Get {
            flags.push("free read".to_string());
        }
        let line = format!(
            "{:width$}  {:6} {:path_width$}  {}",
            op.id,
            op.method.upper(),
            escape(&op.path),
            flags.join(", ")
        );
        let _ = writeln!(out, "{}", escape(line.trim_end()));
    }
    out
}

/// Each MCP tool's size (`explain --list --stats`), read back from `mcp-tools.json`: its
/// compact JSON bytes without `_meta` (as a server sends it in `tools/list`, less the
/// request mapping clients keep from the model), about a quarter of that in tokens, and
/// its three heaviest parts; then the total.
pub fn stats(outputs: &Outputs) -> Result<String, String> {
    let tools = json(outputs, "mcp-tools.json")
        .ok_or("no mcp-tools.json in this build: add `mcp` to `targets`, or pass `--target mcp`")?;
    let weights: Vec<(String, crate::render::mcp::ToolWeight)> = tools
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
        .map(|(i, tool)| {
            let name = tool["name"].as_str().unwrap_or_default().to_string();
            (name, crate::render::mcp::weight(i, tool))
        })
        .collect();
    let width = weights
        .iter()
        .map(|(n, _)| n.len())
        .max()
        .unwrap_or(0)
        .max(5);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:width$}  {:>8}  {:>7}  heaviest parts",
        "tool", "bytes", "~tokens"
    );
    let mut total = 0;
    for (name, w) in &weights {
        total += w.bytes;
        let parts: Vec<String> = w.parts.iter().map(|(p, b)| format!("{p} {b}")).collect();
        let line = format!(
            "{name:width$}  {:>8}  {:>7}  {}",
            w.bytes,
            w.bytes.div_ceil(4),
            parts.join(", ")
        );
        let _ = writeln!(out, "{}", escape(&line));
    }
    let _ = writeln!(
        out,
        "{:width$}  {total:>8}  {:>7}",
        "total",
        total.div_ceil(4)
    );
    Ok(out)
}

/// Everything the model reads about operation `id`, or a did-you-mean message.
pub fn explain(connector: &Connector, outputs: &Outputs, id: &str) -> Result<String, String> {
    let Some(op) = connector.operations.iter().find(|o| o.id == id) else {
        return Err(escape(&format!(
            "no operation `{id}` in this manifest; {}",
            suggest(id, connector.operations.iter().map(|o| o.id.as_str()))
        ))
        .into_owned());
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} ({} {}): {}",
        op.id,
        op.method.upper(),
        op.path,
        op.summary
    );
    for (file, label) in [
        ("openapi.json", "muse"),
        ("openapi.openai.json", "openai"),
        ("openapi.3.0.json", "openapi30"),
    ] {
        let Some(doc) = json(outputs, file) else {
            continue;
        };
        let Some(object) = operation_object(&doc, op) else {
            continue;
        };
        section(&mut out, &format!("{label}: {file}, description"));
        indent(&mut out, object["description"].as_str().unwrap_or_default());
        let hints: Vec<String> = object
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(k, _)| k.starts_with("x-"))
            .map(|(k, v)| format!("{k}: {v}"))
            .collect();
        section(&mut out, &format!("{label}: {file}, hints"));
        indent(&mut out, &hints.join("\n"));
    }
    if let Some(llms) = outputs.get("llms.txt") {
        let needle = format!("`{}`", op.id);
        let lines: Vec<&str> = llms.lines().filter(|l| l.contains(&needle)).collect();
        section(&mut out, "muse: llms.txt, lines that name it");
        indent(&mut out, &lines.join("\n"));
    }
    if let Some(tools) = json(outputs, "mcp-tools.json")
        && let Some(tool) = tools
            .as_array()
            .into_iter()
            .flatten()
            .find(|t| t["name"] == op.id.as_str())
    {
        section(&mut out, "mcp: mcp-tools.json, description");
        indent(&mut out, tool["description"].as_str().unwrap_or_default());
        section(&mut out, "mcp: mcp-tools.json, annotations and arguments");
        let annotations: Vec<String> = tool["annotations"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, v)| format!("{k}: {v}"))
            .collect();
        let arguments: Vec<&str> = tool["inputSchema"]["properties"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, _)| k.as_str())
            .collect();
        indent(
            &mut out,
            &format!(
                "{}\narguments: {}",
                annotations.join("\n"),
                arguments.join(", ")
            ),
        );
    }
    Ok(escape(&out).into_owned())
}

fn json(outputs: &Outputs, file: &str) -> Option<Value> {
    outputs.get(file).and_then(|t| serde_json::from_str(t).ok())
}

fn operation_object<'a>(doc: &'a Value, op: &Operation) -> Option<&'a Value> {
    doc.get("paths")?.get(&op.path)?.get(op.method.as_str())
}

fn section(out: &mut String, title: &str) {
    let _ = writeln!(out, "\n{title}:");
}

fn indent(out: &mut String, text: &str) {
    if text.is_empty() {
        let _ = writeln!(out, "    (none)");
    }
    for line in text.lines() {
        if line.is_empty() {
            out.push('\n');
        } else {
            let _ = writeln!(out, "    {line}");
        }
    }
}
