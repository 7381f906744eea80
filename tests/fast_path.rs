//! A differential test of the manifest front end's JSON fast path (`src/manifest/flow_json.rs`):
//! over generated manifests whose schema fields are written as one-line JSON in nasty
//! surroundings (multi-line quoted and plain scalars, block scalars with and without tags,
//! `? ` complex keys, comments, `#` in strings, tabs, CR-LF and lone CR, a BOM, tags, flow
//! collections over lines, YAML-only escapes, surrogates, numbers YAML and JSON read
//! apart, duplicate keys, keys that only look like schema keys, `---`/`...`, `%YAML`,
//! odd indentation), the fast path and the YAML parser alone must agree:
//!
//! - `parse_with` gives the same raw manifest (spans included, by `Debug`) or the same
//!   diagnostic as `parse_plain`, and whenever `parse_fast` takes a text it gives what
//!   `parse_plain` gives;
//! - the whole pipeline (`analyze_with`, every target) gives the same findings and the
//!   same outputs with and without `Options::plain_parse`.
//!
//! `PROPTEST_CASES` raises the number of cases (default 256: a few seconds unoptimised).

use std::sync::Arc;

use connectorgen_core::manifest::{parse_fast, parse_plain, parse_with};
use connectorgen_core::model::Target;
use connectorgen_core::{Options, analyze_with};
use proptest::prelude::*;
use strum::VariantArray;

/// Keys of generated JSON objects: schema keywords, keys that look like manifest keys,
/// and keys YAML could read as something else.
const KEYS: &[&str] = &[
    "type",
    "properties",
    "required",
    "description",
    "output",
    "input",
    "schema",
    "<<",
    "",
    "#x",
    "a: b",
    "- c",
    "x",
    "010",
    "~",
    "é",
];

/// Scalars as JSON text: numbers JSON and YAML read alike and apart, escapes of both,
/// words, and characters YAML refuses or folds.
const SCALARS: &[&str] = &[
    "1",
    "0",
    "-1",
    "-0",
    "-0.0",
    "0.0",
    "1.0",
    "1.5",
    "-2.25",
    "1e5",
    "1E5",
    "1.0e-3",
    "0x1F",
    "0o17",
    "010",
    "-010",
    ".5",
    "1.",
    "+1",
    "1_000",
    "123456789012345678",
    "-123456789012345678",
    "1234567890123456789",
    "12345678901234567890",
    "0.1000000000000000055511151231257827",
    "123456789012345678.5",
    "9007199254740993.0",
    "true",
    "false",
    "null",
    "True",
    "NULL",
    "~",
    "yes",
    "nullx",
    "x",
    "\"\"",
    "\"s\"",
    "\"a b\"",
    "\"# not a comment\"",
    "\"a #b\"",
    "\"a: b\"",
    "\"&a\"",
    "\"*a\"",
    "\"!!str\"",
    "\"café 日本\"",
    "\"\\u00e9\"",
    "\"\\u0000\"",
    "\"\\u0085\"",
    "\"\\u2028\"",
    "\"\\ufeff\"",
    "\"\\ud83d\\ude00\"",
    "\"\\ud800\"",
    "\"\\/\"",
    "\"\\b\\f\"",
    "\"\\n\\r\\t\\\"\\\\\"",
    "\"\\x41\"",
    "\"\\N\"",
    "\"\\_\"",
    "\"\\0\"",
    "\"\\e\"",
    "\"\\ \"",
    "\"\\U0001F600\"",
    "\"\t\"",
    "\"\u{85}\"",
    "\"\u{2028}\"",
    "\"\u{feff}\"",
    "\"\u{a0}\"",
    "'s'",
    "{}",
    "[]",
];

/// Scalars the fast path takes.
const PLAIN_SCALARS: &[&str] = &[
    "1", "-1", "1.5", "0.0", "-2.25", "true", "false", "null", "\"s\"", "\"a #b\"", "\"é\"",
];

/// What separates a key from its value, and members from each other.
const COLONS: &[&str] = &[": ", ": ", ": ", ":", " : ", ":  "];
const COMMAS: &[&str] = &[", ", ", ", ",", " , ", ",  "];

fn pick(list: &'static [&'static str]) -> impl Strategy<Value = String> {
    prop::sample::select(list).prop_map(str::to_string)
}

/// One-line JSON (and near-JSON) text, nested a few levels.
fn json() -> impl Strategy<Value = String> {
    // Mostly what the fast path takes, so that it is taken often.
    let leaf = prop_oneof![8 => pick(PLAIN_SCALARS), 1 => pick(SCALARS)];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            (
                prop::collection::vec(
                    (pick(KEYS), pick(COLONS), inner.clone(), pick(COMMAS)),
                    0..4
                ),
                any::<bool>(),
            )
                .prop_map(|(members, pad)| {
                    let body: Vec<String> = members
                        .iter()
                        .enumerate()
                        .map(|(i, (k, colon, v, comma))| {
                            let sep = if i == 0 { "" } else { comma.as_str() };
                            format!("{sep}\"{k}\"{colon}{v}")
                        })
                        .collect();
                    let pad = if pad { " " } else { "" };
                    format!("{{{pad}{}{pad}}}", body.concat())
                }),
            (prop::collection::vec(inner, 0..4), pick(COMMAS))
                .prop_map(|(items, comma)| format!("[{}]", items.join(&comma))),
        ]
    })
}

/// A JSON Schema-looking object long enough for the fast path, holding `inner`.
fn schema() -> impl Strategy<Value = String> {
    prop_oneof![
        json(),
        json().prop_map(|j| format!("{{\"type\": \"object\", \"properties\": {{\"p\": {j}}}}}")),
        json().prop_map(|j| format!("{{\"type\": \"string\", \"default\": {j}}}")),
        Just("{\"type\": \"object\", \"required\": [\"id\"]}".to_string()),
    ]
}

/// What may follow a value on its line.
const TRAILS: &[&str] = &["", "", "  ", " # c", "# c", " #", "\t", " }", ",", " x"];

/// One field of an operation (at indentation `i`, as a list of lines' text using `{S}`
/// for a schema and `{T}` for a trail), in a nasty surrounding.
const FIELDS: &[&str] = &[
    "{i}output: {S}{T}",
    "{i}input: {S}{T}",
    "{i}output: {S}\n{i}output: {S}",
    "{i}output:\n{i}  {S}",
    "{i}output: !!map {S}",
    "{i}output: !!str {S}",
    "{i}output: !!map\n{i}  {S}",
    "{i}? output\n{i}: {S}",
    "{i}? output: {S}\n{i}: x",
    "{i}description: \"one\n{i}output: {S}\n{i}  two\"",
    "{i}description: 'one\n{i}output: {S}'",
    "{i}description: one\n{i}  output: {S}",
    "{i}description: one\n{i}  two\n{i}output: {S}",
    "{i}description: |\n{i}  output: {S}\n{i}output: {S}",
    "{i}description: !!str |\n{i}  output: {S}",
    "{i}description: >-\n\n{i}  output: {S}",
    "{i}description: |2\n{i}   output: {S}",
    "{i}description: |-\n{i}  x\n{i}    output: {S}",
    "{i}summary: !!str\n{i}  |\n{i}  output: {S}",
    "{i}# output: {S}",
    "{i}output: {S} # output: {S}",
    "\t{i}output: {S}",
    "{i}output:\t{S}",
    "{i}output: {S}\r{i}input: {S}",
    "{i}output: {S}\r{i}description: |\n{i}  input: {S}",
    "{i}input:\n{i}  type: object\n{i}  properties:\n{i}    output: {S}",
    "{i}input: {\"type\": \"object\",\n{i}  \"properties\": {\"output\": {S}}}",
    "{i}output: {S}\n{i}  more",
    "{i}output: [{S},\n{i}  {S}]",
    "{i}<<: {\"output\": {S}}",
    "{i}<<: {\n{i}output: {S}\n{i}}",
    "{i}output: {S}\n{i}<<: {\n{i}output: {S}\n{i}}",
    "{i}<<:\n{i}  output: {S}",
    "{i}query:\n{i}  - {\"name\": \"q\", \"schema\": {S}}{T}",
    "{i}query:\n{i}  - name: q\n{i}    schema: {S}{T}",
    "{i}query:\n{i}- {\"name\": \"q\", \"schema\": {S}}",
    "{i}query:\n{i}  - {\"name\": \"q\", \"schema\": {S}, \"schema\": {S}}",
    "{i}query:\n{i}  - {\"name\": \"q\",\n{i}     \"schema\": {S}}",
    "{i}query:\n{i}  -   {\"name\": \"q\", \"schema\": {S}}",
    "{i}query: [{\"name\": \"q\", \"schema\": {S}}]",
    "{i}headers:\n{i}  - {\"name\": \"X-A\", \"schema\": {S}}",
    "{i}params:\n{i}  - {\"name\": \"id\", \"schema\": {S}}",
];

/// Whole `- {…}` entries and an operation's `spends:` and `async:` as one-line JSON, which
/// the fast path reads into the manifest's types with each field's span: `{D}` is a
/// string-like scalar, `{B}` a boolean-like one, `{N}` a number-like one (each of them
/// also of the wrong type, `null`, or a collection), `{S}` a schema.
const TYPED_FIELDS: &[&str] = &[
    "{i}query:\n{i}  - {\"name\": \"q\", \"description\": {D}, \"required\": {B}, \"schema\": {S}}{T}",
    "{i}query:\n{i}  - {\"name\": {D}, \"style\": {D}, \"explode\": {B}, \"schema\": {S}}{T}",
    "{i}params:\n{i}  - {\"name\": \"id\", \"description\": {D}}{T}\n{i}  - {\"name\": \"é\", \"required\": {B}}",
    "{i}headers:\n{i}  - {\"name\": \"X-A\", \"description\": {D}, \"schema\": {S}, \"extra\": 1}",
    "{i}query:\n{i}  - {\"description\": {D}, \"required\": null}\n{i}  - {}",
    "{i}query:\n{i}  - {\"name\": \"q\", \"name\": {D}}",
    "{i}query:\n{i}  - {\"name\": \"q\"}\n{i}  - {\"name\": \"q\", \"description\": {D}}{T}",
    "{i}query:\n{i}  - {\"name\": \"q\", \"schema\": {S}, \"description\": {D}} # c",
    "{i}query:\n{i}- {\"name\": \"q\", \"description\": {D}}",
    "{i}query:\n{i}  - {\"name\": \"q\",\n{i}     \"description\": {D}}",
    "{i}query:\n{i}  - {\"name\": \"q\", \"description\": {D}}\n{i}    schema: {S}",
    "{i}description: \"one\n{i}query:\n{i}  - {\"name\": \"q\", \"description\": {D}}\n{i}  two\"",
    "{i}spends: {\"kind\": \"credits\", \"note\": {D}}{T}",
    "{i}spends: {\"kind\": {D}, \"note\": \"n\", \"when\": {D}, \"payer\": \"customer\"}{T}",
    "{i}spends: {\"kind\": \"money\", \"note\": {B}}",
    "{i}spends:\n{i}  {\"kind\": \"credits\", \"note\": {D}}",
    "{i}spends: !!map {\"kind\": \"credits\", \"note\": {D}}",
    "{i}description: \"one\n{i}spends: {\"kind\": \"credits\", \"note\": {D}}\n{i}  two\"",
    "{i}description: |\n{i}  spends: {\"kind\": \"credits\", \"note\": {D}}",
    "{i}async: {\"pollWith\": \"op0\", \"typicalSeconds\": {N}}{T}",
    "{i}async: {\"pollWith\": {D}, \"returns\": {D}}{T}",
    "{i}async: {\"pollWith\": \"op0\", \"typicalSeconds\": {N}, \"x\": 1}",
    "{i}async: {\"pollWith\": \"op0\", \"pollWith\": {D}}",
    "{i}input:\n{i}  type: object\n{i}  properties:\n{i}    spends: {\"kind\": \"credits\", \"note\": {D}}",
    // Line breaks that only the parser sees before a typed field: every later line and
    // character count would be off.
    "{i}summary: \"a\rb\"\n{i}spends: {\"kind\": \"credits\", \"note\": {D}}",
    "{i}summary: \"a\u{85}b\u{2028}c\u{2029}\"\n{i}query:\n{i}  - {\"name\": \"q\", \"description\": {D}}",
];
const STRINGS: &[&str] = &[
    "\"d\"",
    "\"\"",
    "\"café – “x” 日本語\"",
    "\"a #b\"",
    "\"\\u00e9\\n\\\"\"",
    "\"x\"",
    "\"{}\"",
    "\"\u{85}\"",
    "\"\\/\"",
    "1",
    "true",
    "null",
    "[\"a\"]",
    "{}",
];
const BOOLS: &[&str] = &["true", "false", "\"true\"", "null", "1", "yes", "True"];
const NUMBERS: &[&str] = &[
    "1",
    "90",
    "-1",
    "0",
    "-0",
    "5.0",
    "1e3",
    "9223372036854775807",
    "99999999999999999999",
    "\"5\"",
    "null",
];

/// A typed field with its scalars filled in (`{S}` and `{T}` are left for `Case::yaml`).
fn typed_field() -> impl Strategy<Value = String> {
    (
        pick(TYPED_FIELDS),
        pick(STRINGS),
        pick(STRINGS),
        pick(BOOLS),
        pick(NUMBERS),
    )
        .prop_map(|(t, d1, d2, b, n)| fill(&t, &d1, &d2, &b, &n))
}

/// `template` with its first `{D}` as `d1` and the others as `d2`, `{B}` as `b`, `{N}` as
/// `n`.
fn fill(template: &str, d1: &str, d2: &str, b: &str, n: &str) -> String {
    template
        .replacen("{D}", d1, 1)
        .replace("{D}", d2)
        .replace("{B}", b)
        .replace("{N}", n)
}

/// Where operations are: the list's indentation and the text after each dash.
const LAYOUTS: &[(&str, &str)] = &[("  ", "- "), ("", "- "), ("    ", "-   "), (" ", "- ")];

/// What comes before `version: 1`, and after the last operation.
const PRELUDES: &[&str] = &[
    "",
    "",
    "\u{feff}",
    "---\n",
    "--- # c\n",
    "%YAML 1.2\n---\n",
    "# output: {\"type\": \"string\", \"x\": 1}\n",
    "description: \"\noperations:\n  - id: z\n    output: {\"type\": \"string\", \"x\": 1}\n\"\n",
    "description: |\n operations:\n  - id: z\n    output: {\"type\": \"string\", \"x\": 1}\n",
];
const EPILOGUES: &[&str] = &["", "", "...\n", "...\n# c\n", "---\n", "--- {}\n", "# end"];

#[derive(Debug, Clone)]
struct Case {
    prelude: String,
    layout: (String, String),
    /// Per operation: its fields (templates, schemas, trails).
    ops: Vec<Vec<(String, Vec<String>, String)>>,
    flow_op: bool,
    epilogue: String,
    crlf: bool,
}

fn field() -> impl Strategy<Value = (String, Vec<String>, String)> {
    (
        prop_oneof![
            6 => pick(&FIELDS[..2]),
            1 => pick(FIELDS),
            1 => pick(&FIELDS[FIELDS.len() - 9..]),
            4 => typed_field(),
        ],
        prop::collection::vec(schema(), 2),
        prop_oneof![3 => Just(String::new()), 1 => pick(TRAILS)],
    )
}

fn case() -> impl Strategy<Value = Case> {
    (
        prop_oneof![2 => Just(String::new()), 1 => pick(PRELUDES)],
        prop::sample::select(LAYOUTS),
        prop::collection::vec((field(), prop::option::of(field())), 1..4),
        any::<bool>(),
        prop_oneof![3 => Just(String::new()), 1 => pick(EPILOGUES)],
        prop::bool::weighted(0.2),
    )
        .prop_map(|(prelude, layout, ops, flow_op, epilogue, crlf)| Case {
            prelude,
            layout: (layout.0.to_string(), layout.1.to_string()),
            // At most two fields an operation, with no key twice (but where a field
            // repeats a key on purpose).
            ops: ops
                .into_iter()
                .map(|(a, b)| {
                    let key = |t: &str| {
                        t.trim_start_matches("{i}")
                            .split(':')
                            .next()
                            .map(str::to_string)
                    };
                    match b {
                        Some(b) if key(&b.0) != key(&a.0) => vec![a, b],
                        _ => vec![a],
                    }
                })
                .collect(),
            flow_op,
            epilogue,
            crlf,
        })
}

impl Case {
    fn yaml(&self) -> String {
        let (list, dash) = &self.layout;
        let i = " ".repeat(list.len() + dash.len());
        let mut out = format!("{}version: 1\noperations:\n", self.prelude);
        for (n, fields) in self.ops.iter().enumerate() {
            let head = format!("id: op{n}");
            if self.flow_op && n == 0 {
                // An operation written as a flow mapping over lines: its keys sit where
                // block keys would.
                out.push_str(&format!(
                    "{list}{dash}{{{head}, method: get, path: /p{n},\n"
                ));
                let (_, schemas, _) = &fields[0];
                out.push_str(&format!("{i}output: {}\n{i}}}\n", schemas[0]));
                continue;
            }
            out.push_str(&format!(
                "{list}{dash}{head}\n{i}method: get\n{i}path: /p{n}\n"
            ));
            for (template, schemas, trail) in fields {
                let mut text = template.replace("{i}", &i).replace("{T}", trail);
                // Each `{S}` in turn takes the next schema.
                let mut k = 0;
                while let Some(at) = text.find("{S}") {
                    text.replace_range(at..at + 3, &schemas[k % schemas.len()]);
                    k += 1;
                }
                out.push_str(&text);
                out.push('\n');
            }
        }
        out.push_str(&self.epilogue);
        if self.crlf {
            out = out.replace('\n', "\r\n");
        }
        out
    }
}

/// Findings and outputs of the whole pipeline, every target, as text to compare.
fn pipeline(text: &str, plain_parse: bool) -> String {
    let options = Options {
        targets: Some(Target::VARIANTS.to_vec()),
        sandbox: true,
        plain_parse,
        ..Options::default()
    };
    match analyze_with("m.yaml", Arc::new(text.to_string()), &options) {
        Ok(a) => format!("{:?}\n{:?}", a.diagnostics, a.outputs),
        Err(e) => format!("render error: {e}"),
    }
}

/// Compares the fast path with the plain parse on one text; panics with both on a
/// difference. Returns whether the fast path took the text.
fn agree(text: &str) -> bool {
    let plain = parse_plain(text, None);
    let fast = parse_fast(text, None);
    let taken = fast.is_some();
    if let Some(fast) = fast {
        assert_eq!(
            Ok::<_, ()>(format!("{fast:?}")),
            plain.as_ref().map(|p| format!("{p:?}")).map_err(|_| ()),
            "the fast path took a text the plain parse reads otherwise:\n{text:?}"
        );
    }
    assert_eq!(
        format!("{:?}", parse_with(text, None)),
        format!("{plain:?}"),
        "parse_with differs from the plain parse:\n{text:?}"
    );
    assert_eq!(
        pipeline(text, false),
        pipeline(text, true),
        "the pipeline differs with the plain parse:\n{text:?}"
    );
    taken
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(256)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: cases(),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn the_fast_path_reads_what_the_yaml_parser_reads(case in case()) {
        agree(&case.yaml());
    }
}

/// The generator reaches the fast path often enough to test it (over a fixed seed).
#[test]
fn the_generated_manifests_take_the_fast_path() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &[7; 32]),
    );
    let strategy = case();
    let mut taken = 0;
    for _ in 0..200 {
        let text = strategy.new_tree(&mut runner).unwrap().current().yaml();
        taken += usize::from(agree(&text));
    }
    assert!(taken >= 60, "the fast path took {taken} of 200 manifests");
}

/// Every scalar and every surrounding on its own, in each place the fast path reads.
#[test]
fn every_scalar_and_surrounding_alone() {
    let mut taken = 0;
    // Decimals at the edges of a double: the least subnormal, what rounds to zero, more
    // digits than a double holds, halfway cases.
    let edges = [
        format!("0.{}49", "0".repeat(323)),
        format!("0.{}1", "0".repeat(330)),
        format!("-0.{}1", "0".repeat(330)),
        "999999999999999999.99999999999999999999".to_string(),
        "9007199254740993.0".to_string(),
        "0.30000000000000004".to_string(),
        "2.2250738585072011".to_string(),
        "1.00000000000000011102230246251565404236316680908203125".to_string(),
    ];
    let scalars = SCALARS
        .iter()
        .chain(PLAIN_SCALARS)
        .map(std::string::ToString::to_string)
        .chain(edges);
    for scalar in scalars {
        let schemas = [
            format!("{{\"type\": \"string\", \"default\": {scalar}}}"),
            format!("[{scalar}, {scalar}, 1, \"padding\"]"),
            format!("{{{scalar}: 1, \"padding\": true}}"),
        ];
        for schema in schemas {
            for place in [
                "    output: {S}\n",
                "    query:\n      - {\"name\": \"q\", \"schema\": {S}}\n",
                "    query:\n      - name: q\n        schema: {S}\n",
            ] {
                for eol in ["\n", "\r\n"] {
                    let text = format!(
                        "version: 1\noperations:\n  - id: a\n    method: get\n    path: /a\n{}",
                        place.replace("{S}", &schema)
                    )
                    .replace('\n', eol);
                    taken += usize::from(agree(&text));
                }
            }
        }
    }
    // Each typed field with every string, boolean and number in turn.
    for (k, template) in TYPED_FIELDS.iter().enumerate() {
        let n = |list: &[&'static str], i: usize| list[(i + k) % list.len()];
        let fills = (0..STRINGS.len())
            .map(|i| {
                fill(
                    template,
                    STRINGS[i],
                    n(STRINGS, i + 1),
                    n(BOOLS, i),
                    n(NUMBERS, i),
                )
            })
            .chain((0..BOOLS.len()).map(|i| fill(template, "\"d\"", "\"e\"", BOOLS[i], "1")))
            .chain(
                (0..NUMBERS.len()).map(|i| fill(template, "\"d\"", "\"e\"", "true", NUMBERS[i])),
            );
        for (i, field) in fills.enumerate() {
            let text = format!(
                "version: 1\noperations:\n  - id: op0\n    method: post\n    path: /a\n{}\n",
                field
                    .replace("{i}", "    ")
                    .replace("{T}", TRAILS[i % TRAILS.len()])
                    .replace("{S}", "{\"type\": \"string\", \"default\": 1.5}")
            );
            taken += usize::from(agree(&text));
            if i % 3 == 0 {
                taken += usize::from(agree(&text.replace('\n', "\r\n")));
            }
        }
    }
    for field in FIELDS {
        for trail in TRAILS {
            let text = format!(
                "version: 1\noperations:\n  - id: a\n    method: get\n    path: /a\n{}\n",
                field
                    .replace("{i}", "    ")
                    .replace("{T}", trail)
                    .replace("{S}", "{\"type\": \"string\", \"default\": 1.5}")
            );
            taken += usize::from(agree(&text));
        }
    }
    assert!(taken >= 100, "the fast path took {taken}");
}
