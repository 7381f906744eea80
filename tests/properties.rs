//! Properties of every manifest the generator accepts, over generated manifests whose
//! every piece of user text is hostile Markdown: headings, quotes, list markers,
//! fences, HTML, tables, setext underlines, CR-LF, template syntax.
//!
//! - openapi.json parses as JSON and validates against the official OpenAPI 3.1 schema;
//! - llms.txt has exactly the headings, list items, quote and (no) fences the generator
//!   itself writes, and descriptions.md one heading and one fence per operation, each
//!   fence holding exactly the description in openapi.json;
//! - building twice gives identical bytes.
//!
//! `PROPTEST_CASES` raises the number of cases (default 96, to keep `cargo test` quick).

#[path = "support/markdown.rs"]
mod markdown;
#[path = "support/schemas.rs"]
mod schemas;

use std::sync::Arc;

use connectorgen::render::Outputs;
use connectorgen::{GenerateError, generate};
use proptest::prelude::*;

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

/// A token prefix: no whitespace, control characters or backticks, but otherwise hostile.
fn token_prefix() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop::sample::select(&["#", ">", "-", "<!--", "|", "[", "*", "vg_", "=", "1.", "é"][..]),
        1..5,
    )
    .prop_map(|parts| parts.concat())
}

#[derive(Debug, Clone)]
struct Op {
    method: &'static str,
    summary: String,
    description: String,
    /// A note, and a kind index into `KINDS`.
    spends: Option<(String, usize)>,
    is_async: bool,
    query: Vec<(String, Option<String>)>,
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

fn op() -> impl Strategy<Value = Op> {
    (
        prop::sample::select(&["get", "post", "put", "patch", "delete", "POST"][..]),
        hostile(),
        hostile(),
        prop::option::of((hostile(), 0..KINDS.len())),
        any::<bool>(),
        prop::collection::vec(
            ("[a-zA-Z_][a-zA-Z0-9_.-]{0,8}", prop::option::of(hostile())),
            0..3,
        ),
        prop::option::of(prop::sample::select(
            &["optional", "required", "unsupported"][..],
        )),
    )
        .prop_map(
            |(method, summary, description, spends, is_async, query, idempotency)| {
                let get = method == "get";
                // Query names must be unique within an operation.
                let mut seen = std::collections::HashSet::new();
                let query = query
                    .into_iter()
                    .filter(|(name, _)| seen.insert(name.clone()))
                    .collect();
                Op {
                    method,
                    summary,
                    description,
                    // A GET may neither spend nor start a job.
                    spends: if get { None } else { spends },
                    is_async: !get && is_async,
                    query,
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
fn q(text: &str) -> String {
    serde_json::to_string(text).expect("a string serialises")
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
            y += &format!("    path: /v1/things{i}/{{thingId}}\n");
            y += &format!("    summary: {}\n", q(&op.summary));
            y += &format!("    description: {}\n", q(&op.description));
            if !op.query.is_empty() {
                y += "    query:\n";
                for (name, description) in &op.query {
                    y += &format!("      - name: {}\n", q(name));
                    if let Some(d) = description {
                        y += &format!("        description: {}\n", q(d));
                    }
                }
            }
            if !matches!(op.method, "get" | "delete") {
                y += "    input: { type: object, properties: { text: { type: string } } }\n";
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
            y += "  - id: pollJob\n    method: get\n    path: /v1/jobs/{jobId}\n";
            y += &format!("    summary: {}\n", q(&self.poll.0));
            y += &format!("    description: {}\n", q(&self.poll.1));
        }
        y
    }
}

fn build(yaml: &str) -> Outputs {
    match generate("connector.yaml", Arc::new(yaml.to_string())) {
        Ok(outputs) => outputs,
        Err(GenerateError::Invalid(d)) => {
            panic!(
                "a valid manifest was rejected:\n{}\n{yaml}",
                d.render(false)
            )
        }
        Err(e) => panic!("{e}\n{yaml}"),
    }
}

/// Each operation's description in openapi.json, in manifest order.
fn descriptions(doc: &serde_json::Value, ids: &[String]) -> Vec<String> {
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
        .unwrap_or(96)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    /// openapi.json parses as JSON and is valid OpenAPI 3.1.
    #[test]
    fn openapi_json_is_valid_openapi_3_1(spec in spec()) {
        let yaml = spec.yaml();
        let outputs = build(&yaml);
        let doc: serde_json::Value = serde_json::from_str(&outputs["openapi.json"])
            .map_err(|e| TestCaseError::fail(format!("not JSON: {e}\n{yaml}")))?;
        let errors = schemas::errors(schemas::openapi31(), &doc);
        prop_assert!(errors.is_empty(), "{errors}\n{yaml}");
        prop_assert_eq!(descriptions(&doc, &spec.ids()).len(), spec.ids().len());
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
        sections.extend(["## Rules for the assistant", "## Docs"]);
        // Last come the generator's own items: four rules and the OpenAPI document's link.
        let own = 4 + 1;
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
        let doc: serde_json::Value = serde_json::from_str(&outputs["openapi.json"]).unwrap();
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
