//! Connector → `mcp-tools.json`: the `tools` array of an MCP `tools/list` result, each
//! tool with the request mapping that turns its calls back into HTTP requests.
//!
//! Takes: the validated connector and each operation's model-facing description.
//! Returns: the JSON text (`serve` reads each tool's `RequestMapping` back from it:
//! `mapping::read_tools`), each tool's weight for the `mcp-tool-too-large` lint, and findings: errors for names
//! no client accepts (`mcp-tool-name`), `args:`/`fixed:` keys that name no input and
//! `args:` names that collide, a warning for each `pattern` left out
//! (`mcp-pattern-dropped`), and `mcp-output-too-large` when the file would pass its bound.
//! Must never: soften the cost semantics — a tool that spends or cannot be undone
//! (`confirm`) is `destructiveHint: true` so that a client which asks before destructive
//! calls asks here too — emit an argument name outside `^[a-zA-Z0-9_.-]{1,64}$`, a
//! `pattern` an ECMAScript engine cannot compile, or a schema that points outside
//! itself: every `$ref` into the document's components is copied into the tool schema's
//! own `$defs` and rewritten to point there. Memory and output stay within
//! `OUTPUT_FACTOR` times the connector's size (plus 1 MiB).
//!
//! Arguments, in order: path, query, header and cookie parameters (the path item's
//! shared ones first; a header retry key gets a client-safe name, `key_argument_name`; the
//! `Accept`, `Content-Type` and `Authorization` headers, which OpenAPI ignores as
//! parameters, an API key's own parameter and the `fixed:` ones are left to the
//! connection), then the request body — a JSON, form or multipart body whose schema is
//! an object with properties gives one argument per property, any other body one `body`
//! argument; a body field a credential part fills in is in neither, nor anywhere else in
//! the schema (a branch, `$defs`). A binary value (a form or multipart field that is a
//! binary string, or a union whose branches that are not null all are; a body that is
//! neither JSON, form nor text) is a base64 string (`contentEncoding: base64`,
//! `encoding: base64` in the mapping). Names: docs/mcp.md.

mod document;
mod inputs;
pub mod mapping;
mod omit;
mod output;
mod schema;

use serde_json::{Map, Value, json};

use super::prose::md_code;
use crate::arguments;
use crate::diagnostics::{Diagnostic, Finding};
use crate::model::{
    Connector, Document, IdempotencyKey, KeyLocation, McpOutput, Method, Operation,
};
use document::{Defs, pick_media, resolved};
use inputs::input_schema;
use mapping::Location;

pub use schema::ToolWeight;
pub(crate) use schema::weight;

/// The argument that carries the `Idempotency-Key` header.
pub(crate) const IDEMPOTENCY_ARGUMENT: &str = "idempotencyKey";

/// What the tool description's retry sentence names for `op`'s `key`, as `(name, send)`:
/// the argument the tool's request mapping sends the key in (``the `x` argument``);
/// or, when the tool takes the body as one argument (its schema has no top-level
/// `properties`, and the key was found through `allOf`), the key's field of that
/// argument (``the `x` field of the `body` argument``). Names are code-span safe.
pub(crate) fn key_sentence(
    connector: &Connector,
    op: &Operation,
    key: &IdempotencyKey,
) -> (String, String) {
    let mut defs = Defs::default();
    let (_, mapping) = input_schema(connector, op, &mut defs, &mut Vec::new());
    let whole_body = mapping
        .arguments
        .iter()
        .find(|a| a.location == Location::Body && a.name.is_none());
    match (&mapping.idempotency, whole_body) {
        (Some(own), _) => {
            let name = md_code(&own.argument);
            (name.clone(), format!("the `{name}` argument"))
        }
        (None, Some(body)) if key.location == KeyLocation::Body => {
            let (field, body) = (md_code(&key.name), md_code(&body.argument));
            (
                format!("{body}.{field}"),
                format!("the `{field}` field of the `{body}` argument"),
            )
        }
        (None, _) => {
            let name = md_code(&key_argument_name(key));
            (name.clone(), format!("the `{name}` argument"))
        }
    }
}

/// Whether `connectorgen serve` sends `op`'s retry key itself: the mapping has a key
/// argument of its own (which serve takes out of the served `inputSchema` and fills
/// in), not a field inside a whole-body argument that the model writes.
pub(crate) fn serve_sends_key(connector: &Connector, op: &Operation) -> bool {
    let mut defs = Defs::default();
    let (_, mapping) = input_schema(connector, op, &mut defs, &mut Vec::new());
    mapping.idempotency.is_some()
}

/// The argument that carries an operation's retry key: a body field or query parameter
/// is its own argument (under its client-safe name); a header gets a client-safe
/// camel-case name (`Idempotency-Key` → `idempotencyKey`, `PayPal-Request-Id` →
/// `payPalRequestId`). The tool description's retry sentence names this argument. (A
/// name changed by `args:` or by a collision suffix is not followed here: the mapping's
/// `idempotency.argument` is the final word, and `key_sentence` follows it.)
pub(crate) fn key_argument_name(key: &IdempotencyKey) -> String {
    if key.location != KeyLocation::Header {
        return arguments::safe_name(&key.name);
    }
    let mut name = String::new();
    for (i, word) in key
        .name
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .enumerate()
    {
        let mut chars = word.chars();
        if let Some(first) = chars.next() {
            if i == 0 {
                name.push(first.to_ascii_lowercase());
            } else {
                name.push(first.to_ascii_uppercase());
            }
            name.extend(chars);
        }
    }
    if name.is_empty() || !arguments::is_safe(&name) {
        IDEMPOTENCY_ARGUMENT.to_string()
    } else {
        name
    }
}

/// What the model reads on the argument that carries a header retry key.
fn key_argument_description(key: &IdempotencyKey) -> String {
    format!(
        "Sent as the {} header. A unique value you choose for this request, such as a UUID: a fresh value for each new request, and the same value when retrying this request, so the retry returns the original result instead of starting or charging for a second one.",
        key.name
    )
}

/// The longest tool name: Claude Desktop, the Claude connector directory and VS Code cap
/// tool names at 64 characters (the MCP spec allows 128).
pub(crate) const TOOL_NAME_MAX: usize = 64;

/// `mcp-tools.json` may be at most this many times the connector's own size (the compact
/// JSON of its OpenAPI document around the operations, and the operations), plus
/// `OUTPUT_SLACK` bytes. The bundled examples stay under 3 times (2.3 at most, payments.yaml); past the bound the build
/// stops with `mcp-output-too-large` instead of writing (or holding) hundreds of
/// megabytes.
pub const OUTPUT_FACTOR: usize = 32;

/// Bytes allowed beyond `OUTPUT_FACTOR` times the input, so small connectors, whose
/// tools carry fixed text (annotations, mapping), are never refused.
pub(crate) const OUTPUT_SLACK: usize = 1024 * 1024;

/// Everything the mcp target makes of a connector.
pub(crate) struct Rendered {
    pub text: String,
    pub weights: Vec<ToolWeight>,
    pub findings: Vec<Finding>,
}

pub(crate) fn render(connector: &Connector, descriptions: &[String]) -> Rendered {
    let (tools, weights, findings) = build(connector, descriptions);
    let mut text = String::from("[");
    for (i, pretty) in tools.iter().enumerate() {
        text.push_str(if i == 0 { "\n" } else { ",\n" });
        // The array's pretty form is each tool's pretty form indented by two spaces
        // (strings hold no raw newlines).
        for (j, line) in pretty.lines().enumerate() {
            if j > 0 {
                text.push('\n');
            }
            text.push_str("  ");
            text.push_str(line);
        }
    }
    text.push_str(if tools.is_empty() { "]\n" } else { "\n]\n" });
    Rendered {
        text,
        weights,
        findings,
    }
}

/// Each operation's tool definition, in manifest order, without its description (which
/// the prose templates write) and without the findings of building it: what `diff`
/// compares the tools' names, arguments and requests by.
pub(crate) fn definitions(connector: &Connector) -> Vec<Value> {
    connector
        .operations
        .iter()
        .map(|op| tool(connector, op, "", &mut Vec::new(), true))
        .collect()
}

/// What the tool of operation `index` would weigh without its `mcp.omit` and
/// `mcp.output` (for `explain --list --stats`), with the description it was written
/// with; `None` for an operation that trims neither, or out of range.
pub(crate) fn untrimmed_weight(
    connector: &Connector,
    index: usize,
    description: &str,
) -> Option<ToolWeight> {
    let op = connector
        .operations
        .get(index)
        .filter(|op| !op.omit.is_empty() || op.mcp_output != McpOutput::Full)?;
    let definition = tool(connector, op, description, &mut Vec::new(), false);
    Some(schema::weight(index, &definition))
}

/// Each tool's pretty JSON, in manifest order, their weights and the findings of
/// building them.
type Built = (Vec<String>, Vec<ToolWeight>, Vec<Finding>);

/// The most bytes `mcp-tools.json` may have for this connector, and the connector's own
/// size it is a multiple of: `OUTPUT_FACTOR` × input + `OUTPUT_SLACK`.
pub fn output_limit(connector: &Connector) -> (usize, usize) {
    let input = input_size(connector);
    let limit = input
        .saturating_mul(OUTPUT_FACTOR)
        .saturating_add(OUTPUT_SLACK);
    (limit, input)
}

fn build(connector: &Connector, descriptions: &[String]) -> Built {
    let mut findings = Vec::new();
    let (limit, input) = output_limit(connector);
    let mut total = 0usize;
    let mut tools = Vec::new();
    let mut weights = Vec::new();
    for (index, (op, description)) in connector.operations.iter().zip(descriptions).enumerate() {
        let definition = tool(connector, op, description, &mut findings, true);
        let pretty = super::pretty::to_string(&definition);
        // Two spaces of indent per line in the file.
        total = total
            .saturating_add(pretty.len())
            .saturating_add(2 * pretty.lines().count());
        if total > limit {
            findings.push(Finding::error(Diagnostic::McpOutputTooLarge {
                id: op.id.clone(),
                limit,
                factor: OUTPUT_FACTOR,
                input,
                span: op.origin.entry,
            }));
            break;
        }
        weights.push(schema::weight(index, &definition));
        tools.push(pretty);
    }
    (tools, weights, findings)
}

/// The compact JSON size of what the connector says: its document around the operations
/// (components only as far as the operations reach them) and the operations.
fn input_size(connector: &Connector) -> usize {
    let doc = compact_size(&connector.document.root);
    connector
        .operations
        .iter()
        .fold(doc, |sum, op| sum.saturating_add(compact_size(&op.http)))
}

/// A JSON value's compact size, without holding its text.
fn compact_size(map: &Map<String, Value>) -> usize {
    let mut counter = Counter(0);
    let _ = serde_json::to_writer(&mut counter, map);
    counter.0
}

/// A writer that only counts bytes.
struct Counter(usize);

impl std::io::Write for Counter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// One operation's tool; `trim`: with its `mcp.omit` and `mcp.output` applied.
fn tool(
    connector: &Connector,
    op: &Operation,
    description: &str,
    findings: &mut Vec<Finding>,
    trim: bool,
) -> Value {
    check_name(op, findings);
    let doc = &connector.document;
    let mut defs = Defs::default();
    let (input_schema, mapping) = input_schema(connector, op, &mut defs, findings);
    let mut tool = Map::new();
    tool.insert("name".into(), json!(op.id));
    tool.insert("title".into(), json!(&*op.summary));
    tool.insert("description".into(), json!(description));
    tool.insert("inputSchema".into(), input_schema);
    let output = match op.mcp_output {
        _ if !trim => output_schema(doc, op),
        McpOutput::Full => output_schema(doc, op),
        McpOutput::None => None,
        // Only an object's properties are trimmed; any other answer keeps its schema.
        McpOutput::Summary => output_schema(doc, op).map(|(schema, object)| match &schema {
            Value::Object(full) if object => (
                output::summary(full, &output::kept_paths(connector, op)),
                object,
            ),
            _ => (schema, object),
        }),
    };
    let mut later = None;
    match output {
        Some((schema, true)) => {
            tool.insert("outputSchema".into(), schema);
        }
        Some((schema, false)) => later = Some(schema),
        None => {}
    }
    tool.insert("annotations".into(), annotations(op));
    let mut meta = Map::new();
    meta.insert(
        mapping::META_KEY.into(),
        serde_json::to_value(&mapping).expect("the mapping always serialises"),
    );
    if let Some(schema) = later {
        meta.insert(OUTPUT_SCHEMA_META_KEY.into(), schema);
    }
    tool.insert("_meta".into(), Value::Object(meta));
    let mut tool = Value::Object(tool);
    schema::clean(&mut tool, op, findings);
    // After `clean`, whose sharing of identical `$defs` would rename what `omitted` points at.
    if trim {
        omit::apply(connector, op, &mut tool, findings);
    }
    tool
}

/// A tool name over `TOOL_NAME_MAX` or outside `[A-Za-z0-9_-]` is an error.
fn check_name(op: &Operation, findings: &mut Vec<Finding>) {
    let problem = if op.id.len() > TOOL_NAME_MAX {
        "it is longer than 64 characters"
    } else if !op
        .id
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-'))
    {
        "it has a character other than letters, digits, `_` and `-`"
    } else {
        return;
    };
    let mut suggestion: String = arguments::safe_name(&op.id.replace('.', "_"))
        .chars()
        .filter(|c| *c != '.')
        .collect();
    suggestion.truncate(TOOL_NAME_MAX);
    findings.push(Finding::error(Diagnostic::McpToolName {
        id: op.id.clone(),
        problem,
        suggestion,
        span: op.origin.id,
    }));
}

/// The MCP hints, written out on every tool (see docs/mcp.md, "Annotations").
fn annotations(op: &Operation) -> Value {
    // A GET, or any method declared `read: true`: free and safe to repeat.
    let read_only = op.read;
    // Spending and permanent calls are destructive whatever their method, so that a client
    // which asks before destructive calls asks here; DELETE, PUT and PATCH are by nature
    // (not additive), even with `confirm: false`.
    // A declared read is none of these, whatever its method.
    let destructive = !read_only
        && (op.consent() || matches!(op.method, Method::Delete | Method::Put | Method::Patch));
    // MCP: "calling it repeatedly with the same arguments has no additional effect":
    // a required key (the same key is the same call), or a call that by nature cannot
    // be duplicated (`inherent`). An optional key may be left out, so it is not.
    let idempotent = read_only || op.idempotency.required_or_inherent();
    // A read only looks at the person's own account at the provider; every other call
    // changes state there or sends something on to third parties (a message, a payment).
    let open_world = !read_only;
    json!({
        "readOnlyHint": read_only,
        "destructiveHint": destructive,
        "idempotentHint": idempotent,
        "openWorldHint": open_world
    })
}

/// The most bytes (compact JSON) an `outputSchema` may take with everything it
/// references copied in. Every tool definition travels in one `tools/list` answer:
/// Stripe's PaymentIntent alone reaches 400 schemas (630 KB), and eleven tools carrying
/// it made a 9 MB answer. Past this size the tool has no `outputSchema`, which MCP
/// allows: results then arrive as unstructured content.
pub(crate) const OUTPUT_SCHEMA_MAX: usize = 128 * 1024;

/// The `_meta` key of a success response schema whose root is not `type: object`.
pub const OUTPUT_SCHEMA_META_KEY: &str = "dev.connectorgen/outputSchema";

/// The success response's JSON schema, when it fits `OUTPUT_SCHEMA_MAX`, and whether its
/// root is `type: object`. Only such a schema goes in `outputSchema`: the 2025 revisions
/// require it, and a client on them (the MCP TypeScript SDK 1.x checks
/// `type: "object"`) refuses the whole tool list otherwise. Any other JSON schema (an
/// array, a string), which the 2026-07-28 revision allows, goes under
/// `_meta["dev.connectorgen/outputSchema"]`, for a server to offer as `outputSchema` to
/// clients on that revision.
fn output_schema(doc: &Document, op: &Operation) -> Option<(Value, bool)> {
    let responses = op.http.get("responses")?.as_object()?;
    let success = responses
        .iter()
        .filter(|(status, _)| status.starts_with('2'))
        .map(|(_, r)| resolved(doc, r))
        .next()?;
    let picked = pick_media(success);
    let schema = picked.schema?;
    if picked.kind != "json" || picked.media.is_none() {
        return None;
    }
    let object = resolved(doc, schema).get("type").and_then(Value::as_str) == Some("object");
    let mut defs = Defs::default();
    let mut out = defs.own(doc, resolved(doc, schema).clone());
    match &mut out {
        Value::Object(map) => {
            // MCP wants every property schema of outputSchema as an object, as for inputs.
            if let Some(Value::Object(props)) = map.get_mut("properties") {
                for schema in props.values_mut() {
                    if let Value::Bool(b) = schema {
                        *schema = if *b { json!({}) } else { json!({ "not": {} }) };
                    }
                }
            }
            defs.write_into(map);
        }
        // `true`/`false`: nothing to tell a client.
        _ => return None,
    }
    schema::lighten_output(&mut out);
    let size = serde_json::to_vec(&out).map_or(usize::MAX, |bytes| bytes.len());
    (size <= OUTPUT_SCHEMA_MAX).then_some((out, object))
}
