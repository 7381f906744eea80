//! What the model reads about one operation, target by target (`connectorgen explain`).
//!
//! Takes: the validated connector and its rendered outputs. Returns: plain text for a
//! person: the description each target's model reads, the llms.txt lines that name the
//! operation, the `x-` hints and the MCP annotations, the retry mechanism and the retry
//! rule each target writes — all (but the mechanism) read back from the generated
//! files, so it shows what was generated, not a second rendering of it.
//! Must never: render anything itself, or guess: an unknown id gets a did-you-mean;
//! or let text from the manifest act on the terminal: what it returns is escaped
//! (`terminal::escape`), tabs and newlines kept.

use std::fmt::Write as _;

use serde_json::Value;

use crate::diagnostics::suggest;
use crate::model::Names as _;
use crate::model::{self, Connector, Idempotency, KeyLocation, Operation, Target, Unsupported};
use crate::render::Outputs;
use crate::terminal::escape;

/// The widest a column of `list` is padded to: a longer id or path overruns its column
/// rather than pushing every row's flags out of sight (and a width past 65,535 is more
/// than `format!` can pad to at all).
const COLUMN_MAX: usize = 60;

/// A table of the operations with their flags.
pub fn list(connector: &Connector) -> String {
    let width = connector
        .operations
        .iter()
        .map(|o| o.id.chars().count())
        .max()
        .unwrap_or(0)
        .min(COLUMN_MAX);
    let path_width = connector
        .operations
        .iter()
        .map(|o| escape(&o.path).chars().count())
        .max()
        .unwrap_or(0)
        .min(COLUMN_MAX);
    let mut out = String::new();
    let polled: std::collections::HashSet<&str> = connector
        .operations
        .iter()
        .filter_map(|o| o.async_.as_ref().map(|a| a.poll_with.as_str()))
        .collect();
    for op in &connector.operations {
        let mut flags = Vec::new();
        if let Some(s) = &op.spends {
            let payer = match s.payer {
                crate::model::Payer::Person => "",
                crate::model::Payer::Customer => ", the customer's money",
            };
            match &s.when {
                Some(when) => {
                    flags.push(format!("spends ({}{payer}, when {when})", s.kind.as_str()));
                }
                None => flags.push(format!("spends ({}{payer})", s.kind.as_str())),
            }
        }
        if op.confirm {
            flags.push(match &op.confirm_when {
                Some(when) => format!("confirm (cannot be undone when {when})"),
                None => "confirm (cannot be undone)".to_string(),
            });
        } else if !op.consequential && !op.read {
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
        if flags.is_empty() && op.read {
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
/// request mapping clients keep from the model), about a quarter of that in tokens, the
/// bytes of its `inputSchema` and of its `outputSchema` (`-`: none), and its three
/// heaviest parts; under a tool `mcp.omit` or `mcp.output` trims, a line with its size
/// without the trims and what they save; then the total (and, when a tool is trimmed,
/// the total without the trims).
pub fn stats(connector: &Connector, outputs: &Outputs) -> Result<String, String> {
    let tools = json(outputs, model::MCP_TOOLS_JSON)
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
        "{:width$}  {:>8}  {:>7}  {:>7}  {:>7}  heaviest parts",
        "tool", "bytes", "~tokens", "input", "output"
    );
    let output = |w: &crate::render::mcp::ToolWeight| {
        w.output.map_or_else(|| "-".to_string(), |o| o.to_string())
    };
    let mut total = 0;
    let (mut input_total, mut output_total) = (0, 0);
    let mut untrimmed_total = 0;
    // Which trims the tools use, for the totals' line.
    let (mut omits, mut outputs) = (false, false);
    for (i, (name, w)) in weights.iter().enumerate() {
        total += w.bytes;
        input_total += w.input;
        output_total += w.output.unwrap_or(0);
        let parts: Vec<String> = w.parts.iter().map(|(p, b)| format!("{p} {b}")).collect();
        let line = format!(
            "{name:width$}  {:>8}  {:>7}  {:>7}  {:>7}  {}",
            w.bytes,
            w.bytes.div_ceil(4),
            w.input,
            output(w),
            parts.join(", ")
        );
        let _ = writeln!(out, "{}", escape(&line));
        let description = tools
            .get(i)
            .and_then(|t| t["description"].as_str())
            .unwrap_or_default();
        let untrimmed = crate::render::mcp::untrimmed_weight(connector, i, description);
        untrimmed_total += untrimmed.as_ref().map_or(w.bytes, |u| u.bytes);
        if let Some(u) = untrimmed {
            let op = &connector.operations[i];
            let paths = op.omit.len();
            let mut trims = Vec::new();
            if paths > 0 {
                omits = true;
                let unit = if paths == 1 { "path" } else { "paths" };
                trims.push(format!("mcp.omit ({paths} {unit})"));
            }
            if op.mcp_output != model::McpOutput::Full {
                outputs = true;
                let mode: &str = op.mcp_output.into();
                trims.push(format!("mcp.output ({mode})"));
            }
            let line = format!(
                "{:width$}  {:>8}  {:>7}  {:>7}  {:>7}  without {}: {} bytes saved (~{} tokens)",
                "",
                u.bytes,
                u.bytes.div_ceil(4),
                u.input,
                output(&u),
                trims.join(" and "),
                u.bytes.saturating_sub(w.bytes),
                u.bytes.saturating_sub(w.bytes).div_ceil(4),
            );
            let _ = writeln!(out, "{}", escape(&line));
        }
    }
    let _ = writeln!(
        out,
        "{:width$}  {total:>8}  {:>7}  {input_total:>7}  {output_total:>7}",
        "total",
        total.div_ceil(4)
    );
    if omits || outputs {
        let trims = match (omits, outputs) {
            (true, true) => "mcp.omit and mcp.output",
            (true, false) => "mcp.omit",
            _ => "mcp.output",
        };
        let _ = writeln!(
            out,
            "{:width$}  {untrimmed_total:>8}  {:>7}  {:>7}  {:>7}  without {trims}",
            "",
            untrimmed_total.div_ceil(4),
            "",
            "",
        );
    }
    Ok(out)
}

/// Everything the model reads about operation `id`, or a did-you-mean message.
/// `served` holds the descriptions `connectorgen serve` lists where they differ from
/// mcp-tools.json's (`Analysis::served_descriptions`: the server sends the retry key).
pub fn explain(
    connector: &Connector,
    outputs: &Outputs,
    served: &std::collections::BTreeMap<String, String>,
    id: &str,
) -> Result<String, String> {
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
    let _ = writeln!(out, "\nretry: {}", mechanism(op));
    // Each generated document is parsed once: the retry rules and the sections below
    // read the same operation objects and the same tool.
    let documents: Vec<(&str, &str, Value)> = [Target::Muse, Target::Openai, Target::Openapi30]
        .into_iter()
        .map(|target| (target.files()[0], target.as_str()))
        .filter_map(|(file, label)| Some((file, label, json(outputs, file)?)))
        .collect();
    let tools = json(outputs, model::MCP_TOOLS_JSON);
    let tool = tools
        .as_ref()
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|t| t["name"] == op.id.as_str());
    let mut rules: Vec<String> = Vec::new();
    for (_, label, doc) in &documents {
        if let Some(object) = operation_object(doc, op) {
            let text = object["description"].as_str().unwrap_or_default();
            rules.push(format!("{label}: {}", retry_sentence(text)));
        }
    }
    if let Some(tool) = tool {
        let text = tool["description"].as_str().unwrap_or_default();
        rules.push(format!("mcp: {}", retry_sentence(text)));
    }
    section(&mut out, "retry rule, by target");
    indent(&mut out, &rules.join("\n"));
    // The document's own `x-` keys (code samples, a vendor's flags) are the same in every
    // target and can be kilobytes each: named once below, with their size, not printed.
    let mut own: Vec<String> = Vec::new();
    for (file, label, doc) in &documents {
        let Some(object) = operation_object(doc, op) else {
            continue;
        };
        section(&mut out, &format!("{label}: {file}, description"));
        indent(&mut out, object["description"].as_str().unwrap_or_default());
        let extensions = object
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(k, _)| k.starts_with("x-"));
        let (hints, others): (Vec<_>, Vec<_>) =
            extensions.partition(|(k, _)| model::HINT_KEYS.contains(&k.as_str()));
        let hints: Vec<String> = hints.iter().map(|(k, v)| format!("{k}: {v}")).collect();
        section(&mut out, &format!("{label}: {file}, hints"));
        indent(&mut out, &hints.join("\n"));
        if own.is_empty() {
            own = others
                .iter()
                .map(|(k, v)| {
                    let bytes = serde_json::to_vec(v).map_or(0, |b| b.len());
                    format!("{k}: {bytes} bytes")
                })
                .collect();
        }
    }
    if !own.is_empty() {
        section(
            &mut out,
            "the document's own `x-` keys, in every OpenAPI output (not the model's text)",
        );
        indent(&mut out, &own.join("\n"));
    }
    if let Some(llms) = outputs.get(model::LLMS_TXT) {
        let needle = format!("`{}`", op.id);
        let lines: Vec<&str> = llms.lines().filter(|l| l.contains(&needle)).collect();
        section(&mut out, "muse: llms.txt, lines that name it");
        indent(&mut out, &lines.join("\n"));
    }
    if let Some(tool) = tool {
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
        if let Some(text) = served.get(&op.id) {
            section(
                &mut out,
                "mcp: as `connectorgen serve` lists it (the server sends the retry key), description",
            );
            indent(&mut out, text);
        }
    }
    Ok(escape(&out).into_owned())
}

/// The operation's retry mechanism, and who said so.
fn mechanism(op: &Operation) -> String {
    match &op.idempotency {
        Idempotency::Key(key) => {
            let location = match key.location {
                KeyLocation::Header => "header",
                KeyLocation::Query => "query parameter",
                KeyLocation::Body => "body field",
            };
            let required = if key.required { "required" } else { "optional" };
            let source = match (&key.evidence, key.added) {
                (Some(evidence), _) => format!("the base document's default: {evidence}"),
                (None, true) => "added by connectorgen".to_string(),
                (None, false) => "named by the manifest".to_string(),
            };
            let openai = if key.location == KeyLocation::Header {
                "; openai: GPT Actions cannot send a header, so the rule there is never to retry"
            } else {
                ""
            };
            format!(
                "key in the `{}` {location} ({required}); {source}{openai}",
                key.name
            )
        }
        Idempotency::Inherent => "inherent: a repeat cannot duplicate it".to_string(),
        Idempotency::Unsupported(Unsupported::Stated) => {
            "unsupported (`idempotency: unsupported`)".to_string()
        }
        Idempotency::Unsupported(Unsupported::Unknown)
            if op.spends.is_some() || op.async_.is_some() =>
        {
            "unsupported: the base document declares no retry key (idempotency-unknown)".to_string()
        }
        Idempotency::Unsupported(Unsupported::Unknown) => {
            "none: it neither spends nor is async".to_string()
        }
    }
}

/// The retry rule at the end of a description the model reads, or "(none)".
fn retry_sentence(text: &str) -> &str {
    const STARTS: [&str; 8] = [
        "RETRIES:",
        "NEVER REPEAT",
        "A retry is safe",
        "Retry: same",
        "Safe to retry.",
        "Never retry",
        "Do not resubmit to \"check\" progress or retry.",
        // The openai target's compact form of a job without a key.
        "never resubmit or retry.",
    ];
    STARTS
        .iter()
        .filter_map(|start| text.find(start))
        .min()
        .map_or("(none)", |at| &text[at..])
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
