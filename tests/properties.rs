//! Properties of every manifest the generator accepts, over generated manifests whose
//! every piece of user text is hostile Markdown (headings, quotes, list markers, fences,
//! HTML, tables, setext underlines, CR-LF, template syntax), whose routes vary in shape
//! and parameter names, and whose `input`, `output` and query schemas are generated JSON
//! Schemas (nested objects, arrays, enums, `type: [T, "null"]`, `examples`,
//! descriptions), built for every target at once:
//!
//! - openapi.json and openapi.openai.json validate against the official OpenAPI 3.1
//!   schema, openapi.3.0.json against OpenAPI 3.0, every tool of mcp-tools.json against
//!   the MCP `Tool` schema; each document has exactly the manifest's operations, at
//!   their methods and paths;
//! - llms.txt has exactly the headings, list items, quote and (no) fences the generator
//!   itself writes, and descriptions.md one heading and one fence per operation, each
//!   fence holding exactly the description in openapi.json;
//! - building twice gives identical bytes;
//! - whichever operations of a bundled base document are exposed, no reference of any
//!   output points at nothing.
//!
//! `PROPTEST_CASES` raises the number of cases (default 192: about 20 s unoptimised).

use crate::support::markdown;
use crate::support::refs;
use crate::support::schemas;

use std::sync::Arc;

use connectorgen_core::model::Target;
use connectorgen_core::render::Outputs;
use connectorgen_core::{GenerateError, Options, generate_with};
use proptest::prelude::*;
use serde_json::{Value, json};

/// Pieces of Markdown and template syntax that could open a block if they reached the
/// start of a line, plus ordinary words and non-ASCII text.
const HOSTILE: &[&str] = &[
    "\n",
    "\n\n",
    "\r\n",
    "\t",
    "   ",
    "# ",
    "## ",
    "###### ",
    "#",
    "> ",
    ">",
    "- ",
    "* ",
    "+ ",
    "-",
    "1. ",
    "2) ",
    "10.",
    "```",
    "````",
    "~~~",
    "`",
    "<!--",
    "-->",
    "<div>",
    "<script>",
    "| a | b |",
    "|---|",
    "---",
    "***",
    "___",
    "===",
    "=",
    "[x]: /u",
    "[",
    "]",
    "\\",
    "{{ x }}",
    "{% if 1 %}",
    "{#",
    "\"",
    "'",
    ":",
    ": ",
    "&a",
    "*a",
    "!!str",
    "%",
    "@",
    "word",
    "Read-only.",
    "Never charges.",
    "café",
    "日本語",
    "🙂",
    "ﬁ",
    "\u{a0}",
    "\u{2028}",
];

/// Hostile text that is not blank (the manifest rejects empty text).
fn hostile() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(HOSTILE), 1..12)
        .prop_map(|parts| parts.concat())
        .prop_map(|text| {
            if text.trim().is_empty() {
                format!("{text}x")
            } else {
                text
            }
        })
}

/// A cost note: hostile, but at most 24 characters (48 once escaped), so that the openai target's notice
/// (the generated safety sentences plus the note, capped at `NOTICE_MAX`) always fits; a
/// longer one is rightly refused (`openai-notice-too-long`), and with a random seed a
/// long note made `building_twice_gives_identical_bytes` fail now and then.
fn hostile_note() -> impl Strategy<Value = String> {
    hostile().prop_map(|text| {
        let short: String = text.chars().take(24).collect();
        if short.trim().is_empty() {
            format!("{short}x")
        } else {
            short
        }
    })
}

/// A token prefix: no whitespace, control characters or backticks, but otherwise hostile.
fn token_prefix() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop::sample::select(&["#", ">", "-", "<!--", "|", "[", "*", "vg_", "=", "1.", "é"][..]),
        1..5,
    )
    .prop_map(|parts| parts.concat())
}

/// Path parameter names, query parameter names and body property names come from three
/// disjoint pools, none of them `idempotencyKey` or `body`, so no two inputs of an
/// operation share a name in the MCP target's flat arguments.
const PATH_PARAMS: &[&str] = &["id", "thingId", "job_id", "_slug", "v2", "ownerID"];
const QUERY_NAMES: &[&str] = &[
    "limit",
    "page.size",
    "sort-by",
    "q",
    "filter_1",
    "cursor",
    "X",
];
const PROPERTIES: &[&str] = &[
    "text", "name", "count", "tags", "meta", "enabled", "nested", "ratio",
];
/// Literal path segments: URL-safe characters beyond letters included.
const SEGMENTS: &[&str] = &[
    "things",
    "a-b",
    "v1.2",
    "x~y",
    "items",
    "_",
    "jobs",
    "name:value",
];

/// One segment of a generated path: a literal, or a parameter (an index into
/// `PATH_PARAMS`, kept unique within the path).
#[derive(Debug, Clone)]
enum Segment {
    Literal(&'static str),
    Param(&'static str),
}

#[derive(Debug, Clone)]
struct Query {
    name: &'static str,
    description: Option<String>,
    required: bool,
    schema: Option<Value>,
}

#[derive(Debug, Clone)]
struct Op {
    method: &'static str,
    /// After the `/r{index}` segment that keeps every route unique.
    segments: Vec<Segment>,
    summary: String,
    description: String,
    /// A note, and a kind index into `KINDS`.
    spends: Option<(String, usize)>,
    is_async: bool,
    query: Vec<Query>,
    input: Option<Value>,
    output: Option<Value>,
    idempotency: Option<&'static str>,
}

#[derive(Debug, Clone)]
struct Spec {
    name: String,
    title: Option<String>,
    description: String,
    version: String,
    token_prefix: Option<String>,
    ops: Vec<Op>,
    /// Summary and description of the free GET that async operations poll.
    poll: (String, String),
}

const KINDS: [&str; 2] = ["credits", "money"];

/// A JSON value for `enum`, `examples` or `default`.
fn value() -> impl Strategy<Value = Value> {
    prop_oneof![
        hostile().prop_map(Value::from),
        any::<i32>().prop_map(Value::from),
        any::<bool>().prop_map(Value::from),
        Just(Value::Null),
        (-1000.0f64..1000.0).prop_map(Value::from),
    ]
}

/// A schema without sub-schemas: every JSON type, `type: [T, "null"]`, bare enums,
/// bounds, formats, descriptions and examples.
fn leaf_schema() -> impl Strategy<Value = Value> {
    let base = prop_oneof![
        Just(json!({ "type": "string" })),
        Just(json!({ "type": "string", "format": "date-time" })),
        (0u32..5).prop_map(|n| json!({ "type": "string", "minLength": n, "maxLength": n + 40 })),
        Just(json!({ "type": ["string", "null"] })),
        Just(json!({ "type": ["integer", "null"], "minimum": 0 })),
        (0i64..10, 10i64..100)
            .prop_map(|(lo, hi)| json!({ "type": "integer", "minimum": lo, "maximum": hi })),
        Just(json!({ "type": "number" })),
        Just(json!({ "type": "boolean", "default": false })),
        prop::collection::vec(hostile(), 1..4).prop_map(|e| json!({ "type": "string", "enum": e })),
        prop::collection::vec(value(), 1..4).prop_map(|e| json!({ "enum": e })),
        Just(json!(true)),
    ];
    (
        base,
        prop::option::of(hostile()),
        prop::option::of(prop::collection::vec(value(), 1..3)),
    )
        .prop_map(|(mut schema, description, examples)| {
            if let Value::Object(map) = &mut schema {
                if let Some(d) = description {
                    map.insert("description".into(), d.into());
                }
                if let Some(e) = examples {
                    map.insert("examples".into(), e.into());
                }
            }
            schema
        })
}

/// Nested objects and arrays of leaf schemas, a few levels deep.
fn schema() -> impl Strategy<Value = Value> {
    leaf_schema().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            (
                prop::collection::vec(inner.clone(), 1..4),
                any::<bool>(),
                any::<bool>(),
                any::<bool>()
            )
                .prop_map(|(props, required, closed, nullable)| {
                    let mut out = object_of(&props, required);
                    if closed {
                        out["additionalProperties"] = json!(false);
                    }
                    if nullable {
                        out["type"] = json!(["object", "null"]);
                    }
                    out
                }),
            (inner, 0u32..3).prop_map(|(items, min)| json!({
                "type": "array", "items": items, "minItems": min
            })),
        ]
    })
}

/// `{type: object, properties}` with names from `PROPERTIES`, the first required when
/// `required`.
fn object_of(props: &[Value], required: bool) -> Value {
    let properties: serde_json::Map<String, Value> = PROPERTIES
        .iter()
        .zip(props)
        .map(|(name, schema)| (name.to_string(), schema.clone()))
        .collect();
    let mut out = json!({ "type": "object", "properties": properties });
    if required {
        out["required"] = json!([PROPERTIES[0]]);
    }
    out
}

/// A request body: an object of properties (flattened into MCP arguments), or any other
/// schema (one `body` argument).
fn input() -> impl Strategy<Value = Value> {
    prop_oneof![
        3 => (prop::collection::vec(schema(), 1..5), any::<bool>())
            .prop_map(|(props, required)| object_of(&props, required)),
        1 => schema(),
    ]
}

fn query() -> impl Strategy<Value = Vec<Query>> {
    (
        prop::sample::subsequence(QUERY_NAMES, 0..3),
        prop::collection::vec(
            (
                prop::option::of(hostile()),
                any::<bool>(),
                prop::option::of(prop_oneof![
                    leaf_schema(),
                    leaf_schema().prop_map(|items| json!({ "type": "array", "items": items })),
                ]),
            ),
            3,
        ),
    )
        .prop_map(|(names, details)| {
            names
                .into_iter()
                .zip(details)
                .map(|(name, (description, required, schema))| Query {
                    name,
                    description,
                    required,
                    schema,
                })
                .collect()
        })
}

/// Literal segments and parameters in any order, each parameter name once.
fn segments() -> impl Strategy<Value = Vec<Segment>> {
    (
        prop::collection::vec(prop::sample::select(SEGMENTS), 0..3),
        prop::sample::subsequence(PATH_PARAMS, 0..3),
        any::<prop::sample::Index>(),
    )
        .prop_map(|(literals, params, shuffle)| {
            let mut all: Vec<Segment> = literals.into_iter().map(Segment::Literal).collect();
            for p in params {
                let at = shuffle.index(all.len() + 1);
                all.insert(at, Segment::Param(p));
            }
            all
        })
}

fn op() -> impl Strategy<Value = Op> {
    (
        prop::sample::select(&["get", "post", "put", "patch", "delete", "POST"][..]),
        segments(),
        hostile(),
        hostile(),
        prop::option::of((hostile_note(), 0..KINDS.len())),
        any::<bool>(),
        query(),
        prop::option::of(input()),
        prop::option::of(schema()),
        prop::option::of(prop::sample::select(
            &["optional", "required", "unsupported"][..],
        )),
    )
        .prop_map(
            |(
                method,
                segments,
                summary,
                description,
                spends,
                is_async,
                query,
                input,
                output,
                idempotency,
            )| {
                let get = method == "get";
                Op {
                    method,
                    segments,
                    summary,
                    description,
                    // A GET may neither spend nor start a job.
                    spends: if get { None } else { spends },
                    is_async: !get && is_async,
                    query,
                    // A GET or DELETE takes no body.
                    input: input.filter(|_| !matches!(method, "get" | "delete")),
                    output,
                    idempotency,
                }
            },
        )
}

fn spec() -> impl Strategy<Value = Spec> {
    (
        hostile(),
        prop::option::of(hostile()),
        hostile(),
        "[0-9]{1,2}\\.[0-9]{1,2}(\\.[0-9])?",
        prop::option::of(token_prefix()),
        prop::collection::vec(op(), 1..5),
        (hostile(), hostile()),
    )
        .prop_map(
            |(name, title, description, version, token_prefix, ops, poll)| Spec {
                name,
                title,
                description,
                version,
                token_prefix,
                ops,
                poll,
            },
        )
}

/// YAML text for a string: a JSON string is a valid YAML double-quoted scalar.
/// A job's answer names the id its poll takes (`jobId`, the poll's path parameter), or
/// the build refuses it (`no-job-id`): the generated output, joined to that property.
fn with_job_id(is_job: bool, output: &Value) -> Value {
    if is_job {
        json!({ "allOf": [
            { "type": "object", "properties": { "jobId": { "type": "string" } } },
            output
        ] })
    } else {
        output.clone()
    }
}

fn q(text: &str) -> String {
    serde_json::to_string(text).expect("a string serialises")
}

/// YAML text for a schema: JSON is YAML (flow style).
fn flow(schema: &Value) -> String {
    serde_json::to_string(schema).expect("a schema serialises")
}

impl Op {
    /// `/r{i}` then the segments: the first segment keeps every route of a manifest
    /// apart whatever the rest.
    fn path(&self, i: usize) -> String {
        let mut path = format!("/r{i}");
        for segment in &self.segments {
            match segment {
                Segment::Literal(s) => path += &format!("/{s}"),
                Segment::Param(p) => path += &format!("/{{{p}}}"),
            }
        }
        path
    }
}

impl Spec {
    fn any_async(&self) -> bool {
        self.ops.iter().any(|o| o.is_async)
    }

    /// Operation ids in manifest order (the poll target last, when there is one).
    fn ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = (0..self.ops.len()).map(|i| format!("op{i}")).collect();
        if self.any_async() {
            ids.push("pollJob".to_string());
        }
        ids
    }

    /// Every operation as (id, lower-case method, path), sorted.
    fn routes(&self) -> Vec<(String, String, String)> {
        let mut routes: Vec<(String, String, String)> = self
            .ops
            .iter()
            .enumerate()
            .map(|(i, op)| (format!("op{i}"), op.method.to_lowercase(), op.path(i)))
            .collect();
        if self.any_async() {
            routes.push(("pollJob".into(), "get".into(), "/jobs/{jobId}".into()));
        }
        routes.sort();
        routes
    }

    fn yaml(&self) -> String {
        let mut y = String::from("version: 1\nservice:\n");
        y += &format!("  name: {}\n", q(&self.name));
        if let Some(title) = &self.title {
            y += &format!("  title: {}\n", q(title));
        }
        y += &format!("  version: {}\n", q(&self.version));
        y += &format!("  description: {}\n", q(&self.description));
        y += "  publicUrl: https://api.hostile.example/v1/\n";
        y += "  dashboardUrl: https://hostile.example/tokens\n";
        if let Some(prefix) = &self.token_prefix {
            y += &format!("auth:\n  tokenPrefix: {}\n", q(prefix));
        }
        y += "operations:\n";
        for (i, op) in self.ops.iter().enumerate() {
            y += &format!("  - id: op{i}\n    method: {}\n", op.method);
            y += &format!("    path: {}\n", q(&op.path(i)));
            y += &format!("    summary: {}\n", q(&op.summary));
            y += &format!("    description: {}\n", q(&op.description));
            if !op.query.is_empty() {
                y += "    query:\n";
                for query in &op.query {
                    y += &format!("      - name: {}\n", q(query.name));
                    if let Some(d) = &query.description {
                        y += &format!("        description: {}\n", q(d));
                    }
                    y += &format!("        required: {}\n", query.required);
                    if let Some(schema) = &query.schema {
                        y += &format!("        schema: {}\n", flow(schema));
                    }
                }
            }
            if let Some(input) = &op.input {
                y += &format!("    input: {}\n", flow(input));
            }
            if let Some(output) = &op.output {
                y += &format!("    output: {}\n", flow(&with_job_id(op.is_async, output)));
            }
            if let Some((note, kind)) = &op.spends {
                y += &format!(
                    "    spends: {{ kind: {}, note: {} }}\n",
                    KINDS[*kind],
                    q(note)
                );
            }
            if op.is_async {
                y += "    async: { pollWith: pollJob, typicalSeconds: 30 }\n";
            }
            if let Some(idempotency) = op.idempotency {
                y += &format!("    idempotency: {idempotency}\n");
            }
        }
        if self.any_async() {
            y += "  - id: pollJob\n    method: get\n    path: /jobs/{jobId}\n";
            y += &format!("    summary: {}\n", q(&self.poll.0));
            y += &format!("    description: {}\n", q(&self.poll.1));
        }
        y
    }
}

/// Every target at once, whatever the manifest says.
fn build(yaml: &str) -> Outputs {
    let options = Options {
        targets: Some(<Target as strum::VariantArray>::VARIANTS.to_vec()),
        ..Options::default()
    };
    match generate_with("connector.yaml", Arc::new(yaml.to_string()), &options) {
        Ok(outputs) => outputs,
        Err(GenerateError::Invalid(d)) => {
            panic!(
                "a valid manifest was rejected:\n{}\n{yaml}",
                connectorgen_core::report::human_findings(&d, false)
            )
        }
        Err(e) => panic!("{e}\n{yaml}"),
    }
}

/// Every operation of an OpenAPI document as (id, method, path), sorted.
fn routes(doc: &Value) -> Vec<(String, String, String)> {
    let mut routes = Vec::new();
    for (path, item) in doc["paths"].as_object().into_iter().flatten() {
        for (method, op) in item.as_object().into_iter().flatten() {
            let id = op["operationId"].as_str().unwrap_or("(none)").to_string();
            routes.push((id, method.clone(), path.clone()));
        }
    }
    routes.sort();
    routes
}

/// Each operation's description in openapi.json, in manifest order.
fn descriptions(doc: &Value, ids: &[String]) -> Vec<String> {
    let mut by_id = std::collections::HashMap::new();
    for item in doc["paths"].as_object().unwrap().values() {
        for op in item.as_object().unwrap().values() {
            if let (Some(id), Some(d)) = (op["operationId"].as_str(), op["description"].as_str()) {
                by_id.insert(id.to_string(), d.to_string());
            }
        }
    }
    ids.iter().map(|id| by_id[id].clone()).collect()
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(192)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    /// Every target's document is valid against its official schema and holds exactly
    /// the manifest's operations, at their methods and paths.
    #[test]
    fn every_target_is_valid_and_complete(spec in spec()) {
        let yaml = spec.yaml();
        let outputs = build(&yaml);
        let json = |file: &str| -> Result<Value, TestCaseError> {
            serde_json::from_str(&outputs[file])
                .map_err(|e| TestCaseError::fail(format!("{file} is not JSON: {e}\n{yaml}")))
        };
        for (file, validator) in [
            ("openapi.json", schemas::openapi31()),
            ("openapi.openai.json", schemas::openapi31()),
            ("openapi.3.0.json", schemas::openapi30()),
        ] {
            let doc = json(file)?;
            let errors = schemas::errors(validator, &doc);
            prop_assert!(errors.is_empty(), "{file}: {errors}\n{yaml}");
            prop_assert_eq!(routes(&doc), spec.routes(), "{}\n{}", file, yaml);
        }
        let tools = json("mcp-tools.json")?;
        let mut names = Vec::new();
        for tool in tools.as_array().into_iter().flatten() {
            let errors = schemas::errors(schemas::mcp_tool(), tool);
            prop_assert!(errors.is_empty(), "tool {}: {errors}\n{yaml}", tool["name"]);
            names.push(tool["name"].as_str().unwrap_or_default().to_string());
        }
        names.sort();
        let mut ids = spec.ids();
        ids.sort();
        prop_assert_eq!(names, ids, "{}", yaml);
    }

    /// User text adds no heading, section, list item, quote, fence or other block to
    /// llms.txt: its structure is exactly the one the generator writes.
    #[test]
    fn llms_txt_has_exactly_the_generators_structure(spec in spec()) {
        let yaml = spec.yaml();
        let outputs = build(&yaml);
        let llms = &outputs["llms.txt"];
        let s = markdown::structure(llms);
        let mut sections = vec!["## Setup", "## Operations"];
        if spec.any_async() {
            sections.push("## Waiting on work");
        }
        let paid = spec.ops.iter().filter(|o| o.spends.is_some()).count();
        if paid > 0 {
            sections.push("## Spending the person's money");
        }
        // A DELETE cannot be undone unless it says `confirm: false` (these never do).
        let permanent = spec.ops.iter().filter(|o| o.method == "delete").count();
        if permanent > 0 {
            sections.push("## Actions that cannot be undone");
        }
        // No Docs section: the generated manifests give neither `docsUrl` nor `specUrl`.
        sections.push("## Rules for the assistant");
        // Last come the generator's own items: four rules.
        let own = 4;
        prop_assert!(s.headings[0].starts_with("# ") && llms.starts_with(s.headings[0]), "{llms}");
        prop_assert_eq!(&s.headings[1..], &sections[..], "{}", llms);
        prop_assert_eq!(s.quotes.len(), 1, "{}", llms);
        prop_assert_eq!(s.ordered.len(), 3, "setup steps: {}", llms);
        let waiting = spec.ops.iter().filter(|o| o.is_async).count();
        prop_assert_eq!(s.bullets.len(), spec.ids().len() + waiting + paid + permanent + own, "{}", llms);
        for bullet in &s.bullets[..s.bullets.len() - own] {
            prop_assert!(
                spec.ids().iter().any(|id| bullet.starts_with(&format!("- `{id}` "))),
                "{bullet:?}"
            );
        }
        prop_assert!(s.fences.is_empty(), "{}", llms);
        prop_assert!(s.other.is_empty(), "{:?}\n{}", s.other, llms);
    }

    /// descriptions.md: one heading per operation and one fence holding, byte for byte,
    /// the description the model reads; nothing else.
    #[test]
    fn descriptions_md_has_one_section_and_fence_per_operation(spec in spec()) {
        let yaml = spec.yaml();
        let outputs = build(&yaml);
        let md = &outputs["descriptions.md"];
        let s = markdown::structure(md);
        let ids = spec.ids();
        let expected: Vec<String> = ids.iter().map(|id| format!("## {id}")).collect();
        prop_assert!(md.starts_with("# ") && s.headings[0].starts_with("# "), "{}", md);
        prop_assert_eq!(&s.headings[1..], &expected[..], "{}", md);
        let doc: Value = serde_json::from_str(&outputs["openapi.json"]).unwrap();
        prop_assert_eq!(&s.fences, &descriptions(&doc, &ids), "{}", md);
        prop_assert!(s.quotes.is_empty() && s.bullets.is_empty() && s.ordered.is_empty(), "{}", md);
        prop_assert!(s.other.is_empty(), "{:?}\n{}", s.other, md);
    }

    /// The same manifest gives the same bytes, every file, every time.
    #[test]
    fn building_twice_gives_identical_bytes(spec in spec()) {
        let yaml = spec.yaml();
        prop_assert_eq!(build(&yaml), build(&yaml));
    }
}

/// The checker itself sees what it must: forged blocks of every kind, CR line endings,
/// and fences that hold text byte for byte.
#[test]
fn structure_checker_sees_forged_blocks() {
    let forged = "# Title\n\n> quote\n\n## Setup\n\n1. one\n- `a` item\nplain\r# cr heading\n\
                  text\n===\n***\n<div>\n| t |\n[x]: /u\n    code\n```text\na\r\nb\n```\n~~~";
    let s = markdown::structure(forged);
    assert_eq!(s.headings, ["# Title", "## Setup", "# cr heading"]);
    assert_eq!(s.quotes, ["> quote"]);
    assert_eq!(s.ordered, ["1. one"]);
    assert_eq!(s.bullets, ["- `a` item"]);
    assert_eq!(s.fences, ["a\r\nb", ""]);
    let kinds: Vec<&str> = s.other.iter().map(|(kind, _)| *kind).collect();
    assert_eq!(
        kinds,
        [
            "setext underline",
            "thematic break",
            "html",
            "table",
            "link reference definition",
            "indented code",
            "unclosed fence"
        ]
    );
}

/// The base documents of this binary (`crate::property_documents()`), each with its
/// operations' routes.
fn fixtures() -> &'static [(String, Vec<String>)] {
    static FIXTURES: std::sync::OnceLock<Vec<(String, Vec<String>)>> = std::sync::OnceLock::new();
    FIXTURES.get_or_init(|| {
        crate::property_documents()
            .iter()
            .map(|file| {
                let path = file.display().to_string();
                let text = std::fs::read_to_string(&path).expect("fixture is readable");
                let base = connectorgen_core::base::Base::parse(&path, Arc::new(text))
                    .expect("fixture parses");
                // The methods connectorgen exposes (a HEAD or OPTIONS is refused by name).
                let routes = base
                    .operations
                    .iter()
                    .filter(|o| {
                        use connectorgen_core::model::Names as _;
                        connectorgen_core::model::Method::named(o.method).is_some()
                    })
                    .map(connectorgen_core::base::BaseOperation::route)
                    .collect();
                (path, routes)
            })
            .collect()
    })
}

/// A manifest exposing `routes` of the base document at `path`, each under its own id.
fn exposing(path: &str, routes: &[String]) -> String {
    let mut yaml = format!(
        "version: 1\nopenapi: {}\nservice:\n  name: Fixture\n  dashboardUrl: https://fixture.example/keys\n  publicUrl: https://fixture.example/api\noperations:\n",
        q(path)
    );
    for (i, route) in routes.iter().enumerate() {
        yaml.push_str(&format!("  - operation: {}\n    id: op{i}\n", q(route)));
    }
    yaml
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases() / 8, ..ProptestConfig::default() })]

    /// Issue 20, "everything kept resolves": whichever operations of a fixture are
    /// exposed, no `$ref` or `discriminator.mapping` value of any output points at
    /// nothing (pruning keeps exactly what the kept parts reach).
    #[test]
    fn no_output_of_a_fixture_has_a_dangling_reference(
        (path, routes) in (0..fixtures().len()).prop_flat_map(|i| {
            let (path, routes) = &fixtures()[i];
            let n = routes.len();
            (Just(path.clone()), proptest::sample::subsequence(routes.clone(), 1..=n))
        })
    ) {
        let yaml = exposing(&path, &routes);
        let options = Options {
            targets: Some(<Target as strum::VariantArray>::VARIANTS.to_vec()),
            allow_read: vec![std::path::PathBuf::from("/")],
            ..Options::default()
        };
        let outputs = match generate_with("connector.yaml", Arc::new(yaml.clone()), &options) {
            Ok(outputs) => outputs,
            Err(GenerateError::Invalid(d)) => {
                return Err(TestCaseError::fail(format!(
                    "{yaml}\n{}",
                    connectorgen_core::report::human_findings(&d, false)
                )))
            }
            Err(e) => return Err(TestCaseError::fail(format!("{e}\n{yaml}"))),
        };
        for file in ["openapi.json", "openapi.openai.json", "openapi.3.0.json"] {
            let doc: Value = serde_json::from_str(&outputs[file]).expect("JSON");
            let dangling = refs::dangling_in_openapi(&doc);
            prop_assert!(dangling.is_empty(), "{}: {:?}\n{}", file, dangling, yaml);
        }
        let tools: Value = serde_json::from_str(&outputs["mcp-tools.json"]).expect("JSON");
        let dangling = refs::dangling_in_tools(&tools);
        prop_assert!(dangling.is_empty(), "mcp-tools.json: {:?}\n{}", dangling, yaml);
    }
}
