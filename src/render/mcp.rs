//! Connector → `mcp-tools.json`: the `tools` array of an MCP `tools/list` result, each
//! tool with the request mapping that turns its calls back into HTTP requests.
//!
//! Takes: the validated connector and each operation's model-facing description.
//! Returns: the JSON text (or, for `serve`, each tool's definition and `RequestMapping`),
//! each tool's weight for the `mcp-tool-too-large` lint, and findings: errors for names
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
//! shared ones first; the `Idempotency-Key` header becomes `idempotencyKey`; the
//! `Accept`, `Content-Type` and `Authorization` headers, which OpenAPI ignores as
//! parameters, an API key's own parameter and the `fixed:` ones are left to the
//! connection), then the request body — a JSON, form or multipart body whose schema is
//! an object with properties gives one argument per property, any other body one `body`
//! argument. A binary value (a `format: binary` field, or a body that is neither JSON,
//! form nor text) is a base64 string (`contentEncoding: base64`, `encoding: base64` in
//! the mapping). Names: docs/mcp.md.

pub mod mapping;
mod schema;

use std::collections::{BTreeMap, HashSet};

use serde_json::{Map, Value, json};

use crate::arguments;
use crate::diagnostics::{Diagnostic, Finding, Span};
use crate::model::{
    AuthScheme, Connector, Document, FixedSource, IDEMPOTENCY_HEADER, Idempotency, Method,
    Operation, media_essence,
};
use mapping::{
    Argument, Body, Credential, Encoding, FixedInput, IdempotencyMapping, Location, RequestMapping,
    ServerUrl,
};

pub use schema::{ToolWeight, weight};

/// The argument that carries the `Idempotency-Key` header.
pub const IDEMPOTENCY_ARGUMENT: &str = "idempotencyKey";

const IDEMPOTENCY_ARGUMENT_DESCRIPTION: &str = "Sent as the Idempotency-Key header. A unique value \
you choose for this request, such as a UUID: a fresh value for each new request, and the same value \
when retrying this request, so the retry returns the original result instead of starting or \
charging for a second one.";

/// The longest tool name: Claude Desktop, the Claude connector directory and VS Code cap
/// tool names at 64 characters (the MCP spec allows 128).
pub const TOOL_NAME_MAX: usize = 64;

/// `mcp-tools.json` may be at most this many times the connector's own size (the compact
/// JSON of its OpenAPI document around the operations, and the operations), plus
/// `OUTPUT_SLACK` bytes. The bundled examples stay under 3 times (2.3 at most, payments.yaml); past the bound the build
/// stops with `mcp-output-too-large` instead of writing (or holding) hundreds of
/// megabytes.
pub const OUTPUT_FACTOR: usize = 32;

/// Bytes allowed beyond `OUTPUT_FACTOR` times the input, so small connectors, whose
/// tools carry fixed text (annotations, mapping), are never refused.
pub const OUTPUT_SLACK: usize = 1024 * 1024;

/// One tool: its definition as `mcp-tools.json` holds it (with the mapping under
/// `_meta`), and the mapping itself.
#[derive(Debug, Clone)]
pub struct Tool {
    pub definition: Value,
    pub mapping: RequestMapping,
}

/// Everything the mcp target makes of a connector.
pub struct Rendered {
    pub text: String,
    pub weights: Vec<ToolWeight>,
    pub findings: Vec<Finding>,
}

pub fn render(connector: &Connector, descriptions: &[String]) -> Rendered {
    let (tools, weights, findings) = build(connector, descriptions);
    let mut text = String::from("[");
    for (i, (_, pretty)) in tools.iter().enumerate() {
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

/// Each operation's tool, in manifest order, and the findings of building them. This
/// is what `mcp-tools.json` holds, for callers that execute tool calls.
pub fn tools(connector: &Connector, descriptions: &[String]) -> (Vec<Tool>, Vec<Finding>) {
    let (tools, _, findings) = build(connector, descriptions);
    (tools.into_iter().map(|(t, _)| t).collect(), findings)
}

type Built = (Vec<(Tool, String)>, Vec<ToolWeight>, Vec<Finding>);

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
        let (definition, mapping) = tool(connector, op, description, &mut findings);
        let pretty =
            serde_json::to_string_pretty(&definition).expect("in-memory JSON always serialises");
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
        tools.push((
            Tool {
                definition,
                mapping,
            },
            pretty,
        ));
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

fn tool(
    connector: &Connector,
    op: &Operation,
    description: &str,
    findings: &mut Vec<Finding>,
) -> (Value, RequestMapping) {
    check_name(op, findings);
    let doc = &connector.document;
    let mut defs = Defs::default();
    let (input_schema, mapping) = input_schema(connector, op, &mut defs, findings);
    let mut tool = Map::new();
    tool.insert("name".into(), json!(op.id));
    tool.insert("title".into(), json!(op.summary));
    tool.insert("description".into(), json!(description));
    tool.insert("inputSchema".into(), input_schema);
    let output = output_schema(doc, op);
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
    (tool, mapping)
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
    let read_only = op.method == Method::Get;
    // Spending and permanent calls are destructive whatever their method, so that a client
    // which asks before destructive calls asks here; DELETE, PUT and PATCH are by nature
    // (not additive), even with `confirm: false`.
    let destructive =
        op.consent() || matches!(op.method, Method::Delete | Method::Put | Method::Patch);
    let idempotent = read_only || op.idempotency == Idempotency::Required;
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

/// A `$ref` (or a reference object) followed to what it names, through any chain.
fn resolved<'a>(doc: &'a Document, value: &'a Value) -> &'a Value {
    let mut value = value;
    for _ in 0..16 {
        match value.get("$ref").and_then(Value::as_str) {
            Some(reference) => match doc.resolve(reference) {
                Some(target) => value = target,
                None => return value,
            },
            None => return value,
        }
    }
    value
}

/// The parameters that apply to an operation: the path item's shared ones, replaced by
/// the operation's own of the same name and location.
fn parameters<'a>(doc: &'a Document, op: &'a Operation) -> Vec<&'a Value> {
    let list = |v: Option<&'a Value>| -> Vec<&'a Value> {
        v.and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|p| resolved(doc, p))
            .collect()
    };
    let shared = list(
        doc.path_item(&op.path)
            .and_then(|item| item.get("parameters")),
    );
    merge_parameters(shared, list(op.http.get("parameters")))
}

/// `shared` without those `own` replaces (same `name` and `in`), then `own`: one pass
/// over each list (a set of the own keys), so 12,000 of each take no longer than reading
/// them.
fn merge_parameters<'a>(shared: Vec<&'a Value>, own: Vec<&'a Value>) -> Vec<&'a Value> {
    fn key(p: &Value) -> (Option<&Value>, Option<&Value>) {
        (p.get("name"), p.get("in"))
    }
    let own_keys: HashSet<(Option<&str>, Option<&str>)> = own
        .iter()
        .map(|p| {
            let (n, l) = key(p);
            (n.and_then(Value::as_str), l.and_then(Value::as_str))
        })
        .collect();
    let mut out: Vec<&Value> = shared
        .into_iter()
        .filter(|p| {
            let (n, l) = key(p);
            !own_keys.contains(&(n.and_then(Value::as_str), l.and_then(Value::as_str)))
        })
        .collect();
    out.extend(own);
    out
}

/// Where the document's API keys travel: (name, location) of each `apiKey` scheme.
fn credential_parameters(doc: &Document) -> Vec<(&str, &str)> {
    doc.root
        .get("components")
        .and_then(|c| c.get("securitySchemes"))
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter(|(_, s)| s.get("type").and_then(Value::as_str) == Some("apiKey"))
        .filter_map(|(_, s)| {
            let name = s.get("name").and_then(Value::as_str)?;
            let location = s.get("in").and_then(Value::as_str)?;
            Some((name, location))
        })
        .collect()
}

/// How the connection's credential is sent.
fn credential(connector: &Connector) -> Credential {
    match &connector.auth.scheme {
        AuthScheme::Bearer => Credential::Bearer,
        AuthScheme::ApiKey { location, name } => Credential::ApiKey {
            location: Location::of_parameter(location).unwrap_or(Location::Header),
            name: name.clone(),
        },
        AuthScheme::Basic => Credential::Basic,
        AuthScheme::OAuth2 | AuthScheme::OpenIdConnect => Credential::OAuth2,
        AuthScheme::None => Credential::None,
    }
}

/// The operation's servers, else its path item's, else the document's.
fn servers(doc: &Document, op: &Operation) -> Vec<ServerUrl> {
    let list = op
        .http
        .get("servers")
        .or_else(|| doc.path_item(&op.path).and_then(|i| i.get("servers")))
        .or_else(|| doc.root.get("servers"))
        .and_then(Value::as_array);
    list.into_iter()
        .flatten()
        .filter_map(|s| {
            let url = s.get("url")?.as_str()?.to_string();
            let variables = s
                .get("variables")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
                .filter_map(|(k, v)| Some((k.clone(), v.get("default")?.as_str()?.to_string())))
                .collect();
            Some(ServerUrl { url, variables })
        })
        .collect()
}

/// Whether the parameter `(location, name)` is the operation's retry key: the argument
/// it becomes, its schema and whether it is required. (The one place that knows the
/// idempotency mechanism.)
fn idempotency_argument(
    op: &Operation,
    location: &str,
    name: &str,
    required: bool,
) -> Option<Input> {
    if !(location == "header" && name.eq_ignore_ascii_case(IDEMPOTENCY_HEADER)) {
        return None;
    }
    let mut input = Input::new(
        Location::Header,
        Some(name.to_string()),
        "the idempotency key",
        json!({
            "type": "string",
            "minLength": 1,
            "maxLength": 255,
            "description": IDEMPOTENCY_ARGUMENT_DESCRIPTION
        }),
        required || op.idempotency == Idempotency::Required,
    );
    input.style = Some("simple".into());
    input.explode = Some(false);
    input.chosen = Some(IDEMPOTENCY_ARGUMENT.to_string());
    input.idempotency = true;
    Some(input)
}

/// One named input of a tool, where it goes, and where it comes from (for messages).
struct Input {
    location: Location,
    /// The HTTP name; `None` for the whole body.
    http: Option<String>,
    from: &'static str,
    schema: Value,
    required: bool,
    style: Option<String>,
    explode: Option<bool>,
    allow_reserved: bool,
    content_type: Option<String>,
    encoding: Option<Encoding>,
    /// A name connectorgen gives it whatever its HTTP name (`idempotencyKey`), or the
    /// author's from `args:`.
    chosen: Option<String>,
    /// The `args:` entry that chose the name, for messages.
    chosen_at: Option<Span>,
    idempotency: bool,
}

impl Input {
    fn new(
        location: Location,
        http: Option<String>,
        from: &'static str,
        schema: Value,
        required: bool,
    ) -> Self {
        Input {
            location,
            http,
            from,
            schema,
            required,
            style: None,
            explode: None,
            allow_reserved: false,
            content_type: None,
            encoding: None,
            chosen: None,
            chosen_at: None,
            idempotency: false,
        }
    }
}

/// Path, query, header and cookie parameters, then the body, then `idempotencyKey`; and
/// the request mapping of the same arguments.
fn input_schema(
    connector: &Connector,
    op: &Operation,
    defs: &mut Defs,
    findings: &mut Vec<Finding>,
) -> (Value, RequestMapping) {
    let doc = &connector.document;
    let mut inputs: Vec<Input> = Vec::new();
    let mut idempotency: Option<Input> = None;
    let mut fixed = Vec::new();
    let mut fixed_used = vec![false; op.fixed.len()];
    let credentials = credential_parameters(doc);
    for p in parameters(doc, op) {
        let name = p.get("name").and_then(Value::as_str).unwrap_or_default();
        let location = p.get("in").and_then(Value::as_str).unwrap_or_default();
        let Some(place) = Location::of_parameter(location) else {
            continue;
        };
        // OpenAPI ignores these headers as parameters, and the credential is the
        // connection's, never an argument the model would ask the person for.
        let ignored = location == "header"
            && ["Accept", "Content-Type", "Authorization"]
                .iter()
                .any(|h| h.eq_ignore_ascii_case(name));
        let credential = credentials.iter().any(|(n, l)| {
            *l == location && (*n == name || (*l == "header" && n.eq_ignore_ascii_case(name)))
        });
        if ignored || credential {
            continue;
        }
        let (style, explode) = style_of(p, location);
        if let Some(i) = op.fixed.iter().position(|f| f.name == name) {
            fixed_used[i] = true;
            let (env, value) = match &op.fixed[i].source {
                FixedSource::Env(e) => (Some(e.clone()), None),
                FixedSource::Value(v) => (None, Some(v.clone())),
            };
            fixed.push(FixedInput {
                location: place,
                name: name.to_string(),
                style: Some(style),
                explode: Some(explode),
                env,
                value,
            });
            continue;
        }
        let required =
            location == "path" || p.get("required").and_then(Value::as_bool) == Some(true);
        if let Some(input) = idempotency_argument(op, location, name, required) {
            idempotency = Some(input);
            continue;
        }
        let content = p
            .get("content")
            .and_then(Value::as_object)
            .and_then(|c| c.iter().next());
        let schema = p
            .get("schema")
            .or_else(|| content.and_then(|(_, m)| m.get("schema")))
            .cloned()
            .unwrap_or_else(|| json!({}));
        let mut schema = defs.own(doc, schema);
        if let (Some(d), Value::Object(map)) = (p.get("description"), &mut schema) {
            map.entry("description").or_insert_with(|| d.clone());
        }
        let mut input = Input::new(
            place,
            Some(name.to_string()),
            match place {
                Location::Path => "a path parameter",
                Location::Query => "a query parameter",
                Location::Header => "a header parameter",
                _ => "a cookie parameter",
            },
            schema,
            required,
        );
        match (p.get("schema"), content) {
            (None, Some((media, _))) => input.content_type = Some(media.clone()),
            _ => {
                input.style = Some(style);
                input.explode = Some(explode);
                input.allow_reserved = location == "query"
                    && p.get("allowReserved").and_then(Value::as_bool) == Some(true);
            }
        }
        inputs.push(input);
    }
    for (f, used) in op.fixed.iter().zip(&fixed_used) {
        if !used {
            let names: Vec<&str> = parameters(doc, op)
                .iter()
                .filter_map(|p| p.get("name").and_then(Value::as_str))
                .collect();
            findings.push(Finding::error(Diagnostic::UnknownMcpInput {
                id: op.id.clone(),
                key: "fixed",
                name: f.name.clone(),
                what: "parameter",
                span: f.span,
                help: unknown_help(&f.name, names, "a path, query, header or cookie parameter"),
            }));
        }
    }

    // The body's own keywords (additionalProperties, $defs, …) stay on the merged
    // object so references like `#/$defs/x` still resolve from the tool's root.
    let mut base = Map::new();
    let mut body_mapping = None;
    if let Some(body) = op.http.get("requestBody").map(|b| resolved(doc, b)) {
        let body_required = body.get("required").and_then(Value::as_bool) == Some(true);
        let picked = pick_media(body);
        body_mapping = Some(Body {
            media_type: picked
                .media
                .clone()
                .unwrap_or_else(|| "application/json".to_string()),
            required: body_required,
        });
        let media = picked.kind.as_str();
        let structured = matches!(media, "form" | "multipart" | "json");
        let schema = picked.schema.cloned().unwrap_or_else(|| json!({}));
        let shown = resolved(doc, &schema);
        match shown {
            Value::Object(object)
                if structured && object.get("properties").is_some_and(Value::is_object) =>
            {
                let required: Vec<&str> = object
                    .get("required")
                    .and_then(Value::as_array)
                    .map(|r| r.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                for (name, property) in object["properties"].as_object().into_iter().flatten() {
                    let (property, binary) = if media == "json" {
                        (property.clone(), false)
                    } else {
                        base64_binary(property)
                    };
                    let mut input = Input::new(
                        Location::Body,
                        Some(name.clone()),
                        "a body property",
                        defs.own(doc, property),
                        body_required && required.contains(&name.as_str()),
                    );
                    input.encoding = binary.then_some(Encoding::Base64);
                    if media == "multipart" {
                        input.content_type = picked
                            .object
                            .and_then(|m| m.get("encoding"))
                            .and_then(|e| e.get(name))
                            .and_then(|e| e.get("contentType"))
                            .and_then(Value::as_str)
                            .map(str::to_string);
                    }
                    inputs.push(input);
                }
                for (k, v) in object {
                    if !matches!(k.as_str(), "type" | "properties" | "required") {
                        base.insert(k.clone(), defs.own(doc, v.clone()));
                    }
                }
            }
            _ => {
                let binary = !matches!(media, "json" | "form" | "multipart" | "text");
                let schema = if binary {
                    json!({
                        "type": "string",
                        "contentEncoding": "base64",
                        "contentMediaType": media,
                        "description": format!("The request body ({media}), base64-encoded.")
                    })
                } else {
                    schema
                };
                let mut input = Input::new(
                    Location::Body,
                    None,
                    "the request body",
                    defs.own(doc, schema),
                    body_required,
                );
                input.encoding = binary.then_some(Encoding::Base64);
                inputs.push(input);
            }
        }
    }
    inputs.extend(idempotency);
    choose_names(op, &mut inputs, findings);

    let names: Vec<String> = name_inputs(&inputs);
    let mut properties = Map::new();
    let mut required = Vec::new();
    let mut arguments = Vec::new();
    let mut idempotency_mapping = None;
    for (input, name) in inputs.into_iter().zip(names) {
        // MCP wants every property schema as an object: boolean schemas get their
        // object spelling, which means the same.
        let mut schema = match input.schema {
            Value::Bool(true) => json!({}),
            Value::Bool(false) => json!({ "not": {} }),
            other => other,
        };
        if let (Some(http), false) = (&input.http, input.idempotency)
            && *http != name
        {
            note_http_name(&mut schema, input.location, http);
        }
        if input.required {
            required.push(json!(name));
        }
        properties.insert(name.clone(), schema);
        if input.idempotency {
            idempotency_mapping = Some(IdempotencyMapping {
                argument: name.clone(),
                location: input.location,
                name: input.http.clone().unwrap_or_default(),
                required: input.required,
            });
        }
        arguments.push(Argument {
            argument: name,
            location: input.location,
            name: input.http,
            style: input.style,
            explode: input.explode,
            allow_reserved: input.allow_reserved,
            content_type: input.content_type,
            encoding: input.encoding,
            required: input.required,
        });
    }
    let mut schema = Map::new();
    schema.insert("type".into(), json!("object"));
    if !properties.is_empty() {
        schema.insert("properties".into(), Value::Object(properties));
    }
    if !required.is_empty() {
        schema.insert("required".into(), Value::Array(required));
    }
    schema.extend(base);
    defs.write_into(&mut schema);
    let mapping = RequestMapping {
        method: op.method.upper().to_string(),
        path: op.path.clone(),
        servers: servers(doc, op),
        arguments,
        body: body_mapping,
        idempotency: idempotency_mapping,
        fixed,
        credential: credential(connector),
    };
    (Value::Object(schema), mapping)
}

/// A parameter's style and explode, OpenAPI's defaults filled in.
fn style_of(p: &Value, location: &str) -> (String, bool) {
    let style = p
        .get("style")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| match location {
            "query" | "cookie" => "form".to_string(),
            _ => "simple".to_string(),
        });
    let explode = p
        .get("explode")
        .and_then(Value::as_bool)
        .unwrap_or(style == "form");
    (style, explode)
}

/// Applies `args:`: each key names the first input (in argument order) of that HTTP
/// name; a key that names none is an error.
fn choose_names(op: &Operation, inputs: &mut [Input], findings: &mut Vec<Finding>) {
    for arg in &op.args {
        match inputs
            .iter_mut()
            .find(|i| i.http.as_deref() == Some(arg.input.as_str()) && !i.idempotency)
        {
            Some(input) => {
                input.chosen = Some(arg.name.clone());
                input.chosen_at = Some(arg.span);
            }
            None => findings.push(Finding::error(Diagnostic::UnknownMcpInput {
                id: op.id.clone(),
                key: "args",
                name: arg.input.clone(),
                what: "parameter or body property",
                span: arg.input_span,
                help: unknown_help(
                    &arg.input,
                    inputs.iter().filter_map(|i| i.http.as_deref()).collect(),
                    "a parameter or top-level body property",
                ),
            })),
        }
    }
    // Two inputs the author (or connectorgen, for `idempotencyKey`) named alike.
    let mut seen: BTreeMap<&str, &Input> = BTreeMap::new();
    for input in inputs.iter() {
        let Some(name) = input.chosen.as_deref() else {
            continue;
        };
        if let Some(first) = seen.get(name) {
            findings.push(Finding::error(Diagnostic::McpInputCollision {
                id: op.id.clone(),
                name: name.to_string(),
                first: described(first),
                second: described(input),
                span: input.chosen_at.or(first.chosen_at).unwrap_or(op.origin.id),
            }));
        } else {
            seen.insert(name, input);
        }
    }
}

/// `` `name` (a query parameter) ``, for messages.
fn described(input: &Input) -> String {
    match &input.http {
        Some(name) => format!("`{name}` ({})", input.from),
        None => input.from.to_string(),
    }
}

/// The argument names: chosen ones as they are, the others by `arguments::assign`.
fn name_inputs(inputs: &[Input]) -> Vec<String> {
    let wanted: Vec<(Option<&str>, &str, &str)> = inputs
        .iter()
        .map(|i| {
            (
                i.chosen.as_deref(),
                i.http.as_deref().unwrap_or("body"),
                i.location.as_str(),
            )
        })
        .collect();
    arguments::assign(&wanted)
}

fn unknown_help(name: &str, names: Vec<&str>, what: &str) -> String {
    let close = names
        .iter()
        .filter(|n| strsim::jaro_winkler(name, n) > 0.8)
        .max_by(|a, b| strsim::jaro_winkler(name, a).total_cmp(&strsim::jaro_winkler(name, b)));
    match close {
        Some(n) => format!("did you mean `{n}`? The key is the HTTP name of {what}"),
        None if names.is_empty() => format!("the operation has no {what} to name"),
        None => format!(
            "the key is the HTTP name of {what}: one of {}",
            names
                .iter()
                .take(8)
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// Adds to an argument's description the HTTP name it is sent as, when its argument
/// name differs.
fn note_http_name(schema: &mut Value, location: Location, http: &str) {
    let Value::Object(map) = schema else {
        return;
    };
    let what = match location {
        Location::Body => "body property",
        Location::Path => "path parameter",
        Location::Query => "query parameter",
        Location::Header => "header",
        Location::Cookie => "cookie",
    };
    let quoted = serde_json::to_string(http).unwrap_or_default();
    let note = format!("Sent as the {what} {quoted}.");
    let text = match map.get("description").and_then(Value::as_str) {
        Some(d) if !d.trim().is_empty() => format!("{} {note}", d.trim_end()),
        _ => note,
    };
    map.insert("description".into(), Value::String(text));
}

/// A request or response body's chosen media type.
struct Picked<'a> {
    /// `json`, `form`, `multipart`, `text`, or the media type's essence.
    kind: String,
    /// The media type as the document writes it (`None` without `content`).
    media: Option<String>,
    object: Option<&'a Value>,
    schema: Option<&'a Value>,
}

/// The media type a tool sends, by preference (JSON, form, multipart, text, anything
/// else), and its schema.
fn pick_media(body: &Value) -> Picked<'_> {
    let none = || Picked {
        kind: "json".to_string(),
        media: None,
        object: None,
        schema: None,
    };
    let Some(content) = body.get("content").and_then(Value::as_object) else {
        return none();
    };
    let kind = |media: &str| {
        let media = media_essence(media);
        if media == "application/json" || media.ends_with("+json") || media == "*/*" {
            "json".to_string()
        } else if media == "application/x-www-form-urlencoded" {
            "form".to_string()
        } else if media == "multipart/form-data" {
            "multipart".to_string()
        } else if media.starts_with("text/") {
            "text".to_string()
        } else {
            media
        }
    };
    let rank = |k: &str| match k {
        "json" => 0,
        "form" => 1,
        "multipart" => 2,
        "text" => 3,
        _ => 4,
    };
    content
        .iter()
        .map(|(media, object)| Picked {
            kind: kind(media),
            media: Some(media.clone()),
            object: Some(object),
            schema: object.get("schema"),
        })
        .min_by_key(|p| rank(&p.kind))
        .unwrap_or_else(none)
}

/// A form or multipart field: a binary string (`format: binary`) travels as base64.
fn base64_binary(schema: &Value) -> (Value, bool) {
    match schema {
        Value::Object(map) if map.get("format").and_then(Value::as_str) == Some("binary") => {
            let mut out = map.clone();
            out.remove("format");
            out.insert("contentEncoding".into(), json!("base64"));
            (Value::Object(out), true)
        }
        other => (other.clone(), false),
    }
}

/// The most bytes (compact JSON) an `outputSchema` may take with everything it
/// references copied in. Every tool definition travels in one `tools/list` answer:
/// Stripe's PaymentIntent alone reaches 400 schemas (630 KB), and eleven tools carrying
/// it made a 9 MB answer. Past this size the tool has no `outputSchema`, which MCP
/// allows: results then arrive as unstructured content.
pub const OUTPUT_SCHEMA_MAX: usize = 128 * 1024;

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

/// The components a tool schema uses, copied into its `$defs` under their names.
#[derive(Default)]
struct Defs {
    /// `$defs` key → the copied schema (already rewritten), in name order.
    copied: BTreeMap<String, Value>,
}

impl Defs {
    /// `schema` with every `#/components/…` reference rewritten to `#/$defs/…`, and the
    /// schemas it names copied in (transitively).
    fn own(&mut self, doc: &Document, mut schema: Value) -> Value {
        let mut pending = Vec::new();
        rewrite(&mut schema, &mut pending);
        while let Some((key, reference)) = pending.pop() {
            if self.copied.contains_key(&key) {
                continue;
            }
            let Some(mut target) = doc.resolve(&reference).cloned() else {
                continue;
            };
            rewrite(&mut target, &mut pending);
            self.copied.insert(key, target);
        }
        schema
    }

    /// Adds the copied schemas to a tool schema's root `$defs`.
    fn write_into(&mut self, root: &mut Map<String, Value>) {
        if self.copied.is_empty() {
            return;
        }
        let defs = root
            .entry("$defs")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(defs) = defs {
            for (k, v) in std::mem::take(&mut self.copied) {
                defs.entry(k).or_insert(v);
            }
        }
    }
}

/// Rewrites `#/components/<section>/<name>…` references to `#/$defs/<key>…` in place and
/// lists each `(key, reference to the component)` to copy. `<key>` is the name for
/// schemas and `<section>.<name>` for anything else.
fn rewrite(value: &mut Value, pending: &mut Vec<(String, String)>) {
    match value {
        Value::Object(map) => {
            for (key, child) in map.iter_mut() {
                if let ("$ref", Value::String(reference)) = (key.as_str(), &mut *child) {
                    let Some(rest) = reference.strip_prefix("#/components/") else {
                        continue;
                    };
                    let mut parts = rest.splitn(3, '/');
                    let (Some(section), Some(name)) = (parts.next(), parts.next()) else {
                        continue;
                    };
                    let tail = parts.next().map(|t| format!("/{t}")).unwrap_or_default();
                    let def = if section == "schemas" {
                        name.to_string()
                    } else {
                        format!("{section}.{name}")
                    };
                    pending.push((
                        crate::model::unescape(&def),
                        format!("#/components/{section}/{name}"),
                    ));
                    *reference = format!("#/$defs/{def}{tail}");
                } else {
                    rewrite(child, pending);
                }
            }
        }
        Value::Array(list) => list.iter_mut().for_each(|v| rewrite(v, pending)),
        _ => {}
    }
}
