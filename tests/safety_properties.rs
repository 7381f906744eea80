//! Properties of the safety layer over generated manifests, in every target.
//!
//! The manifests mix every safety key (`spends` with and without `when`, `confirm`
//! true/false/default, `async` returning a job or a change, each `idempotency`) with
//! schemas of the shapes real OpenAPI 3.1 documents have: nested objects and arrays,
//! `$ref`, the nullable forms (`type: [T, "null"]`, `anyOf`/`oneOf` with `{type: "null"}`),
//! `examples` beside `example`, `const`, numeric exclusive bounds, empty `required`, and
//! now and then a construct 3.0 cannot express (`prefixItems`). Descriptions, notes and
//! conditions range from short to longer than OpenAI allows. For each one:
//!
//! - no errors: every manifest is valid, and a construct 3.0 cannot express stops nothing;
//! - openapi.openai.json never has an operation description over 300 characters (but on
//!   an operation named by `openai-notice-too-long`, which stops the build) or a
//!   parameter description over 700;
//! - every operation that spends or cannot be undone carries its cost, condition,
//!   permanence and consent sentences in every target (openapi.json, openapi.openai.json,
//!   openapi.3.0.json, mcp-tools.json, descriptions.md), every async one its polling
//!   sentence for its kind, and the flags follow `confirm`
//!   (`x-openai-isConsequential`, `x-requires-confirmation`, MCP `destructiveHint`);
//! - a schema holding `prefixItems` is an `openapi30-approximated` warning naming it, never
//!   an error (issue 49: the 3.0 target never stops the others), and openapi.3.0.json
//!   always validates against the official OpenAPI 3.0 schema.
//!
//! `PROPTEST_CASES` raises the number of cases (default 32, to keep `cargo test` quick).

use crate::support::schemas;

use std::sync::Arc;

use connectorgen_core::model::Target;
use connectorgen_core::render::openai::{DESCRIPTION_MAX, PARAMETER_MAX};
use connectorgen_core::{Options, analyze_with};
use proptest::prelude::*;
use serde_json::{Value, json};

/// A schema made of the pieces real 3.1 documents use, nested up to three levels.
fn schema() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        3 => Just(json!({ "type": "string" })),
        3 => Just(json!({ "type": "integer", "minimum": 0 })),
        3 => Just(json!({ "type": ["string", "null"] })),
        2 => Just(json!({ "type": ["integer", "string"] })),
        3 => Just(json!({ "$ref": "#/components/schemas/Shared" })),
        2 => Just(json!({ "$ref": "#/components/schemas/Shared", "description": "Why it failed." })),
        3 => Just(json!({ "type": "string", "examples": ["a", "b"] })),
        2 => Just(json!({ "type": "string", "example": "a", "examples": ["b", "c"] })),
        1 => Just(json!({ "type": "string", "examples": [] })),
        2 => Just(json!({ "const": "fixed" })),
        2 => Just(json!({ "type": "number", "exclusiveMinimum": 0 })),
        3 => Just(json!({ "anyOf": [{ "type": "string" }, { "type": "null" }] })),
        3 => Just(json!({ "oneOf": [{ "type": "null" }, { "$ref": "#/components/schemas/Shared" }] })),
        1 => Just(json!(true)),
        2 => Just(json!({ "type": "object", "required": [] })),
        1 => Just(json!({ "type": "string", "contentEncoding": "base64" })),
        1 => Just(json!({ "type": "array", "prefixItems": [{ "type": "string" }] })),
    ];
    leaf.prop_recursive(3, 24, 3, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| json!({
                "type": "object", "properties": { "a": a, "b": b }, "required": ["a"]
            })),
            inner
                .clone()
                .prop_map(|s| json!({ "type": "array", "items": s })),
            inner
                .clone()
                .prop_map(|s| json!({ "anyOf": [s, { "type": "null" }] })),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| json!({ "allOf": [a, b] })),
            inner.prop_map(|s| json!({
                "type": ["object", "null"], "properties": { "x": s }, "required": []
            })),
        ]
    })
}

/// Descriptions with a limit sentence, from short to far over OpenAI's 300 characters.
const DESCRIPTIONS: &[&str] = &[
    "Renders the project. Does not change the project.",
    "Read-only. Returns the record. Never changes anything.",
    "Starts the work for the given project, in the style, length and resolution the person asked for, \
     using the assets already uploaded to the project and the settings of their plan. Never publishes \
     or shares anything; the result stays private until the person shares it themselves, and nothing \
     else in the account is changed or removed by this call.",
    "Cancels the order and refunds it in full if production has not started, which the order's status \
     shows. Cannot cancel an order already in production, and never charges anything. The refund goes \
     back to the card that paid, and the bank may take several days to show it.",
];

/// How the sentence of each description that says what the call will not do starts:
/// the openai target keeps it first when it shortens the rest.
const LIMITS: &[&str] = &[
    "Does not change",
    "Read-only.",
    "Never publishes",
    "Cannot cancel",
];

/// Notes and conditions: usual ones, and ones long enough to crowd out the author's words.
const NOTES: &[&str] = &[
    "Costs 1 credit.",
    "Charges the quoted total to the person's saved card.",
    "Charges the quoted total, which is the sum of the products, the printing, the packaging and the \
     shipping to the address given in the quote, to the card the person saved in their account settings.",
];
const WHENS: &[&str] = &[
    "confirm is true",
    "the project is longer than one minute",
    "capture_method is automatic and the customer has a default payment method saved, or the \
     off_session flag is set for a saved mandate",
];

/// Every form of `idempotency:`: the short forms, and a key of each location.
const IDEMPOTENCY: &[&str] = &[
    "optional",
    "required",
    "unsupported",
    "inherent",
    "{ header: Acme-Request-Id }",
    "{ header: Acme-Request-Id, required: true }",
    "{ query: request_id }",
    "{ bodyField: idempotency_key, required: true }",
];

/// The mechanism an operation of the spec has: (location, HTTP name, MCP argument), or
/// `None` with the rule (`unsupported`, `inherent`). Inline, a short form (or none) on a
/// non-GET that spends or is async is the `Idempotency-Key` header.
fn mechanism(op: &Op) -> Result<(&'static str, &'static str, &'static str), &'static str> {
    let needs = op.method != "get" && (op.spends.is_some() || op.async_.is_some());
    match op.idempotency.unwrap_or("optional") {
        "unsupported" => Err("unsupported"),
        "inherent" => Err("inherent"),
        "optional" | "required" if needs => Ok(("header", "Idempotency-Key", "idempotencyKey")),
        "optional" | "required" => Err("none"),
        i if i.contains("header") => Ok(("header", "Acme-Request-Id", "acmeRequestId")),
        i if i.contains("query") => Ok(("query", "request_id", "request_id")),
        _ => Ok(("body", "idempotency_key", "idempotency_key")),
    }
}

/// Every retry key name the generator uses, in HTTP and as MCP arguments.
const KEY_NAMES: [&str; 6] = [
    "Idempotency-Key",
    "Acme-Request-Id",
    "request_id",
    "idempotency_key",
    "idempotencyKey",
    "acmeRequestId",
];

#[derive(Debug, Clone)]
struct Op {
    method: &'static str,
    /// An index into `DESCRIPTIONS`.
    description: usize,
    /// Note and condition indices into `NOTES` and `WHENS`.
    spends: Option<(usize, Option<usize>)>,
    confirm: Option<bool>,
    /// `returns` as written (`None`: the default, job) and `typicalSeconds`.
    async_: Option<(Option<&'static str>, Option<u32>)>,
    idempotency: Option<&'static str>,
    input: Value,
    output: Value,
    /// A query parameter's schema and whether its description is over 700 characters.
    query: Option<(Value, bool)>,
}

fn op() -> impl Strategy<Value = Op> {
    (
        prop::sample::select(&["get", "post", "put", "patch", "delete"][..]),
        0..DESCRIPTIONS.len(),
        prop::option::of((0..NOTES.len(), prop::option::of(0..WHENS.len()))),
        prop::option::of(any::<bool>()),
        prop::option::of((
            prop::option::of(prop::sample::select(&["job", "change"][..])),
            prop::option::of(1u32..4000),
        )),
        prop::option::of(prop::sample::select(IDEMPOTENCY)),
        (schema(), schema()),
        prop::option::of((schema(), any::<bool>())),
    )
        .prop_map(
            |(
                method,
                description,
                spends,
                confirm,
                async_,
                idempotency,
                (input, output),
                query,
            )| {
                let get = method == "get";
                let spends = if get { None } else { spends };
                // A body field needs a body (never on get or delete) that is an object.
                let (idempotency, input) = match idempotency {
                    Some(i) if i.starts_with("{ bodyField") => {
                        if matches!(method, "get" | "delete") {
                            (Some("{ query: request_id }"), input)
                        } else {
                            (
                                Some(i),
                                json!({ "type": "object", "properties": { "a": input } }),
                            )
                        }
                    }
                    other => (other, input),
                };
                // A GET cannot need a yes; a paid call cannot be marked routine.
                let confirm = match confirm {
                    Some(true) if get => None,
                    Some(false) if spends.is_some() => None,
                    other => other,
                };
                Op {
                    method,
                    description,
                    spends,
                    confirm,
                    async_: if get { None } else { async_ },
                    idempotency,
                    input,
                    output,
                    query,
                }
            },
        )
}

/// YAML text for a string or any JSON value: JSON is valid YAML flow syntax.
fn j<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("JSON serialises")
}

#[derive(Debug, Clone)]
struct Spec {
    ops: Vec<Op>,
    /// Whether the jobs' collection (`GET /v1/jobs`) is listed too.
    list: bool,
}

impl Spec {
    fn yaml(&self) -> String {
        let mut y = String::from(
            "version: 1\nservice:\n  name: Studio\n  version: 1.0.0\n  \
             description: Renders video projects.\n  publicUrl: https://api.studio.example\n  \
             dashboardUrl: https://studio.example/settings?tab=keys#new\n\
             schemas:\n  Shared: {type: object, properties: {code: {type: string}}}\noperations:\n",
        );
        for (i, op) in self.ops.iter().enumerate() {
            y += &format!("  - id: op{i}\n    method: {}\n", op.method);
            y += &format!("    path: /v1/things{i}/{{thingId}}\n");
            y += &format!("    summary: Run step {i} of the project\n");
            y += &format!("    description: {}\n", j(&DESCRIPTIONS[op.description]));
            if !matches!(op.method, "get" | "delete") {
                y += &format!("    input: {}\n", j(&op.input));
            }
            // A job's answer names the id its poll takes (`jobId`), or the build refuses
            // it (`no-job-id`).
            let output = match op.async_ {
                Some((None | Some("job"), _)) => json!({ "allOf": [
                    { "type": "object", "properties": { "jobId": { "type": "string" } } },
                    op.output
                ] }),
                _ => op.output.clone(),
            };
            y += &format!("    output: {}\n", j(&output));
            if let Some((schema, long)) = &op.query {
                let description = if *long {
                    "Which fields to include. ".repeat(40)
                } else {
                    "Which fields to include.".to_string()
                };
                y += &format!(
                    "    query:\n      - {{ name: fields, description: {}, schema: {} }}\n",
                    j(&description),
                    j(schema)
                );
            }
            if let Some((note, when)) = op.spends {
                y += &format!("    spends: {{ kind: credits, note: {}", j(&NOTES[note]));
                if let Some(when) = when {
                    y += &format!(", when: {}", j(&WHENS[when]));
                }
                y += " }\n";
            }
            if let Some(confirm) = op.confirm {
                y += &format!("    confirm: {confirm}\n");
            }
            if let Some((returns, seconds)) = op.async_ {
                y += "    async: { pollWith: pollJob";
                if let Some(returns) = returns {
                    y += &format!(", returns: {returns}");
                }
                if let Some(seconds) = seconds {
                    y += &format!(", typicalSeconds: {seconds}");
                }
                y += " }\n";
            }
            if let Some(idempotency) = op.idempotency {
                y += &format!("    idempotency: {idempotency}\n");
            }
        }
        y += "  - id: pollJob\n    method: get\n    path: /v1/jobs/{jobId}\n    \
              summary: Check a job's status\n    description: Read-only. Never starts anything.\n";
        if self.list {
            y += "  - id: listJobs\n    method: get\n    path: /v1/jobs\n    \
                  summary: List jobs\n    description: Read-only. Cannot change them.\n";
        }
        y
    }
}

fn spec() -> impl Strategy<Value = Spec> {
    (prop::collection::vec(op(), 1..5), any::<bool>()).prop_map(|(ops, list)| Spec { ops, list })
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(32)
}

/// Every operation object of an OpenAPI document, by operationId.
fn operations(doc: &Value) -> Vec<(String, &Value)> {
    doc["paths"]
        .as_object()
        .into_iter()
        .flatten()
        .flat_map(|(_, item)| item.as_object().into_iter().flatten())
        .filter_map(|(_, op)| Some((op.get("operationId")?.as_str()?.to_string(), op)))
        .collect()
}

/// Whether a schema anywhere holds `key`.
fn holds(value: &Value, key: &str) -> bool {
    match value {
        Value::Object(map) => map.iter().any(|(k, v)| k == key || holds(v, key)),
        Value::Array(list) => list.iter().any(|v| holds(v, key)),
        _ => false,
    }
}

/// The manifest of `spec` analysed with every target.
fn analyze(spec: &Spec) -> Result<connectorgen_core::Analysis, TestCaseError> {
    let yaml = spec.yaml();
    let options = Options {
        targets: Some(<Target as strum::VariantArray>::VARIANTS.to_vec()),
        ..Options::default()
    };
    let analysis = analyze_with("connector.yaml", Arc::new(yaml.clone()), &options)
        .map_err(|e| TestCaseError::fail(format!("{e}\n{yaml}")))?;
    if analysis.outputs.is_none() {
        return Err(TestCaseError::fail(format!(
            "a valid manifest was rejected:\n{}\n{yaml}",
            connectorgen_core::report::human_findings(&analysis.diagnostics, false)
        )));
    }
    Ok(analysis)
}

fn check(spec: &Spec) -> Result<(), TestCaseError> {
    let analysis = analyze(spec)?;
    verify(spec, &analysis, analysis.outputs.as_ref().unwrap())
}

/// Every property, for the outputs `outputs` of `spec` (the analysis's own, or altered
/// ones to show the checks are live).
fn verify(
    spec: &Spec,
    analysis: &connectorgen_core::Analysis,
    outputs: &connectorgen_core::render::Outputs,
) -> Result<(), TestCaseError> {
    let yaml = spec.yaml();
    let connector = analysis.connector.as_ref().unwrap();

    // The only errors are the ones the manifest earns.
    let errors: Vec<(String, String)> = analysis
        .diagnostics
        .items()
        .iter()
        .filter(|f| f.severity == connectorgen_core::diagnostics::Severity::Error)
        .map(|f| (f.diagnostic.code_str(), f.diagnostic.to_string()))
        .collect();
    let approximated = spec.ops.iter().any(|o| {
        holds(&o.output, "prefixItems")
            || (!matches!(o.method, "get" | "delete") && holds(&o.input, "prefixItems"))
            || o.query
                .as_ref()
                .is_some_and(|(s, _)| holds(s, "prefixItems"))
    });
    for (code, message) in &errors {
        prop_assert!(false, "unexpected error {code}: {message}\n{yaml}");
    }
    // The author's words the openai target shortened inside the generated sentences, as
    // "`opN` `spends.note`": each says so in a warning.
    let shortened: Vec<String> = analysis
        .diagnostics
        .items()
        .iter()
        .filter(|f| f.diagnostic.code_str() == "openai-description-shortened")
        .map(|f| f.diagnostic.to_string())
        .collect();
    let was_shortened = |id: &str, part: &str| {
        shortened
            .iter()
            .any(|m| m.starts_with(&format!("`{id}`: `{part}`")))
    };
    let warned = analysis.diagnostics.items().iter().any(|f| {
        f.diagnostic.code_str() == "openapi30-approximated"
            && f.diagnostic.to_string().contains("`prefixItems`")
    });
    prop_assert_eq!(approximated, warned, "{}", yaml);

    // openapi.openai.json keeps OpenAI's limits.
    let openai: Value = serde_json::from_str(&outputs["openapi.openai.json"]).unwrap();
    for (id, op) in operations(&openai) {
        let length = op["description"]
            .as_str()
            .unwrap_or_default()
            .chars()
            .count();
        prop_assert!(
            length <= DESCRIPTION_MAX,
            "{id}: {length} characters\n{yaml}"
        );
        if let Some(i) = id.strip_prefix("op").and_then(|i| i.parse::<usize>().ok()) {
            let limit = LIMITS[spec.ops[i].description];
            prop_assert!(
                op["description"]
                    .as_str()
                    .unwrap_or_default()
                    .contains(limit),
                "{id} keeps its limit sentence\n{yaml}"
            );
        }
        for p in op["parameters"].as_array().into_iter().flatten() {
            let length = p["description"]
                .as_str()
                .unwrap_or_default()
                .chars()
                .count();
            prop_assert!(
                length <= PARAMETER_MAX,
                "{id}: a parameter of {length}\n{yaml}"
            );
        }
    }

    // Every sentence and flag in every target.
    let docs: Vec<(&str, Value)> = ["openapi.json", "openapi.openai.json", "openapi.3.0.json"]
        .iter()
        .map(|f| (*f, serde_json::from_str(&outputs[*f]).unwrap()))
        .collect();
    let tools: Value = serde_json::from_str(&outputs["mcp-tools.json"]).unwrap();
    let md = &outputs["descriptions.md"];
    for (i, (op, model)) in spec.ops.iter().zip(&connector.operations).enumerate() {
        let id = format!("op{i}");
        prop_assert_eq!(&model.id, &id);
        let get = op.method == "get";
        let confirm = !get && op.confirm.unwrap_or(op.method == "delete");
        prop_assert_eq!(model.confirm, confirm, "{}\n{}", id, yaml);
        let mut texts: Vec<(String, String)> = Vec::new();
        for (file, doc) in &docs {
            let (_, object) = operations(doc)
                .into_iter()
                .find(|(o, _)| *o == id)
                .ok_or_else(|| TestCaseError::fail(format!("{file} lacks {id}")))?;
            let consequential = !get && op.confirm != Some(false);
            prop_assert_eq!(&object["x-openai-isConsequential"], &json!(consequential));
            let needs_yes = op.spends.is_some() || confirm;
            prop_assert_eq!(
                object.get("x-requires-confirmation") == Some(&json!(true)),
                needs_yes,
                "{} {}\n{}",
                file,
                id,
                yaml
            );
            texts.push((
                file.to_string(),
                object["description"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            ));
        }
        let tool = tools
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == id.as_str())
            .unwrap();
        let destructive =
            op.spends.is_some() || confirm || matches!(op.method, "put" | "patch" | "delete");
        prop_assert_eq!(&tool["annotations"]["destructiveHint"], &json!(destructive));
        texts.push((
            "mcp-tools.json".to_string(),
            tool["description"].as_str().unwrap_or_default().to_string(),
        ));
        let section = md
            .split(&format!("\n## {id}\n"))
            .nth(1)
            .and_then(|s| s.split("\n## ").next())
            .unwrap_or_default();
        texts.push(("descriptions.md".to_string(), section.to_string()));

        check_retry(op, &id, &texts, &docs, &tools, &yaml)?;
        for (file, text) in &texts {
            let at = format!("{id} in {file}: {text}\n{yaml}");
            // Only the openai target shortens the author's words, and never silently.
            let openai = file == "openapi.openai.json";
            if let Some((note, when)) = op.spends {
                match when {
                    Some(w) => prop_assert!(
                        text.contains(&format!("COSTS THE PERSON when {}:", WHENS[w]))
                            || (openai
                                && was_shortened(&id, "spends.when")
                                && text.contains("COSTS THE PERSON")),
                        "cost condition: {at}"
                    ),
                    None => prop_assert!(text.contains("COSTS THE PERSON:"), "cost: {at}"),
                }
                prop_assert!(
                    text.contains(NOTES[note]) || (openai && was_shortened(&id, "spends.note")),
                    "note: {at}"
                );
                prop_assert!(
                    text.contains("yes to this specific request")
                        || text.contains("agreed to this specific request")
                        || (openai && text.contains("yes to this request first.")),
                    "consent: {at}"
                );
            } else {
                prop_assert!(!text.contains("COSTS THE PERSON"), "no cost: {at}");
            }
            if confirm {
                prop_assert!(
                    text.contains("PERMANENT") || text.contains("Cannot be undone."),
                    "permanence: {at}"
                );
                prop_assert!(
                    text.contains("to this specific action")
                        || text.contains("to this specific request")
                        || (openai
                            && (text.contains("yes to this action first.")
                                || text.contains("yes to this request first."))),
                    "consent: {at}"
                );
            } else {
                prop_assert!(
                    !text.contains("PERMANENT") && !text.contains("Cannot be undone."),
                    "no permanence: {at}"
                );
            }
            if let Some((returns, _)) = op.async_ {
                prop_assert!(text.contains("poll `pollJob`"), "poll target: {at}");
                if returns == Some("change") {
                    prop_assert!(
                        text.contains("does not make it faster") || text.contains("is not faster"),
                        "a change: {at}"
                    );
                    prop_assert!(!text.contains("job"), "a change is no job: {at}");
                } else {
                    prop_assert!(
                        text.contains("Do not resubmit to \"check\" progress")
                            || (openai && text.contains("; never resubmit")),
                        "a job: {at}"
                    );
                }
            }
        }
    }

    // openapi.3.0.json is valid OpenAPI 3.0, whatever 3.1 constructs the schemas hold.
    let doc = &docs[2].1;
    prop_assert_eq!(&doc["openapi"], &json!("3.0.3"));
    let errors = schemas::errors(schemas::openapi30(), doc);
    prop_assert!(errors.is_empty(), "{errors}\n{yaml}");
    let parsed: Result<openapiv3::OpenAPI, _> = serde_json::from_value(doc.clone());
    prop_assert!(parsed.is_ok(), "openapiv3: {parsed:?}\n{yaml}");
    Ok(())
}

/// The retry rule of one operation in every target: each text that the model reads for
/// an operation that spends or is async carries its mechanism's sentence; each target
/// declares exactly the key the mechanism names (none where it names none), and the
/// openai target never a header key.
fn check_retry(
    op: &Op,
    id: &str,
    texts: &[(String, String)],
    docs: &[(&str, Value)],
    tools: &Value,
    yaml: &str,
) -> Result<(), TestCaseError> {
    let mechanism = mechanism(op);
    let rule_applies = op.spends.is_some() || op.async_.is_some();
    for (file, text) in texts {
        let at = format!("{id} in {file}: {text}\n{yaml}");
        if !rule_applies {
            prop_assert!(
                !text.contains("RETRIES:") && !text.contains("NEVER REPEAT"),
                "no retry rule: {at}"
            );
            continue;
        }
        let openai = file == "openapi.openai.json";
        let never = text.contains("NEVER REPEAT this call on your own")
            || (openai
                && (text.contains("Never retry") || text.contains("never resubmit or retry.")));
        match mechanism {
            Ok(("header", _, _)) if openai => prop_assert!(never, "header on openai: {at}"),
            Ok((location, name, argument)) => {
                let full = if file == "mcp-tools.json" {
                    format!("in the `{argument}` argument for each new request")
                } else {
                    let what = match location {
                        "header" => "header",
                        "query" => "query parameter",
                        _ => "body field",
                    };
                    format!("in the `{name}` {what} for each new request")
                };
                prop_assert!(
                    text.contains(&full)
                        || (openai && text.contains(&format!("Retry: same `{name}`."))),
                    "key sentence {full:?}: {at}"
                );
                prop_assert!(!never, "a key is no never-repeat: {at}");
            }
            Err("inherent") => prop_assert!(
                text.contains("A retry is safe") || (openai && text.contains("Safe to retry.")),
                "inherent: {at}"
            ),
            Err(_) => prop_assert!(never, "unsupported: {at}"),
        }
    }

    // Keys declared: in each document, the parameters and top-level body properties that
    // could carry one; in MCP, the arguments.
    for (file, doc) in docs {
        let (_, object) = operations(doc)
            .into_iter()
            .find(|(o, _)| o == id)
            .ok_or_else(|| TestCaseError::fail(format!("{file} lacks {id}")))?;
        let mut declared: Vec<(String, String)> = object["parameters"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|p| KEY_NAMES.contains(&p["name"].as_str().unwrap_or_default()))
            .map(|p| {
                (
                    p["in"].as_str().unwrap().to_string(),
                    p["name"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        let body = object
            .pointer("/requestBody/content/application~1json/schema/properties")
            .and_then(Value::as_object);
        if body.is_some_and(|b| b.contains_key("idempotency_key")) {
            declared.push(("body".into(), "idempotency_key".into()));
        }
        let expected: Vec<(String, String)> = match mechanism {
            Ok(("header", _, _)) if *file == "openapi.openai.json" => Vec::new(),
            Ok((location, name, _)) => vec![(location.into(), name.into())],
            Err(_) => Vec::new(),
        };
        prop_assert_eq!(&declared, &expected, "{} {}\n{}", file, id, yaml);
        let hint = object.get("x-idempotency");
        match (mechanism, rule_applies) {
            (Ok(("header", _, _)), _) if *file == "openapi.openai.json" => {
                prop_assert_eq!(hint, Some(&json!("none")), "{} {}", file, id);
            }
            (Ok((location, name, _)), _) => prop_assert_eq!(
                hint.and_then(|h| h.get("name")).and_then(Value::as_str),
                Some(name),
                "{} {} {}",
                file,
                id,
                location
            ),
            (Err("inherent"), true) => prop_assert_eq!(hint, Some(&json!("inherent"))),
            (Err(_), true) => prop_assert_eq!(hint, Some(&json!("none"))),
            (Err(_), false) => prop_assert!(hint.is_none(), "{} {}", file, id),
        }
    }
    let tool = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == id)
        .unwrap();
    named_argument_exists(tool)?;
    let arguments: Vec<&str> = tool["inputSchema"]["properties"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, _)| k.as_str())
        .filter(|k| KEY_NAMES.contains(k))
        .collect();
    let expected: Vec<&str> = mechanism.map(|(_, _, a)| vec![a]).unwrap_or_default();
    prop_assert_eq!(arguments, expected, "mcp {}\n{}", id, yaml);
    Ok(())
}

/// The argument a tool's retry sentence names is one of its `inputSchema` properties:
/// "in the `x` argument", or "in the `f` field of the `b` argument" where `b` is one and
/// its schema can hold `f` (through `$ref`s to `$defs` and `allOf`).
fn named_argument_exists(tool: &Value) -> Result<(), TestCaseError> {
    let description = tool["description"].as_str().unwrap_or_default();
    let Some(start) = description.find("RETRIES: send a fresh value (such as a UUID) in the `")
    else {
        return Ok(());
    };
    let rest = &description[start..];
    let quoted: Vec<&str> = rest.split('`').skip(1).step_by(2).take(2).collect();
    let properties = &tool["inputSchema"]["properties"];
    let (argument, field) = if rest.contains("` field of the `") {
        (quoted[1], Some(quoted[0]))
    } else {
        (quoted[0], None)
    };
    prop_assert!(
        properties.get(argument).is_some(),
        "the retry sentence names `{}`, which is no argument: {}",
        argument,
        tool
    );
    if let Some(field) = field {
        prop_assert!(
            holds_field(tool, &properties[argument], field, 0),
            "`{}` has no field `{}`: {}",
            argument,
            field,
            tool
        );
    }
    Ok(())
}

fn holds_field(tool: &Value, schema: &Value, field: &str, depth: usize) -> bool {
    if depth > 8 {
        return false;
    }
    if let Some(name) = schema["$ref"]
        .as_str()
        .and_then(|r| r.strip_prefix("#/$defs/"))
    {
        return holds_field(tool, &tool["inputSchema"]["$defs"][name], field, depth + 1);
    }
    schema["properties"].get(field).is_some()
        || schema["allOf"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|part| holds_field(tool, part, field, depth + 1))
}

#[test]
fn the_named_argument_check_catches_a_missing_one() {
    let tool = |description: &str, properties: Value| json!({ "description": description, "inputSchema": { "properties": properties } });
    let sentence = |what: &str| {
        format!(
            "COSTS. RETRIES: send a fresh value (such as a UUID) in {what} for each new request"
        )
    };
    let body = json!({ "body": { "allOf": [{ "properties": { "idempotency_key": {} } }] } });
    assert!(
        named_argument_exists(&tool(
            &sentence("the `idempotency_key` argument"),
            body.clone()
        ))
        .is_err()
    );
    assert!(
        named_argument_exists(&tool(
            &sentence("the `idempotency_key` field of the `body` argument"),
            body
        ))
        .is_ok()
    );
    assert!(
        named_argument_exists(&tool(
            &sentence("the `idempotency_key` field of the `body` argument"),
            json!({ "body": {} })
        ))
        .is_err()
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn safety_layer_holds_in_every_target(spec in spec()) {
        check(&spec)?;
    }
}

/// The checks above are live: outputs altered to break each promise are caught.
#[test]
fn checks_catch_what_they_look_for() {
    let op = Op {
        method: "post",
        description: 0,
        spends: Some((0, Some(0))),
        confirm: Some(true),
        async_: Some((Some("change"), Some(30))),
        idempotency: None,
        input: json!({ "type": "object" }),
        output: json!({ "type": ["string", "null"], "examples": ["a", "b"] }),
        query: None,
    };
    let spec = Spec {
        ops: vec![op.clone()],
        list: true,
    };
    let analysis = analyze(&spec).unwrap();
    let outputs = analysis.outputs.clone().unwrap();
    assert!(verify(&spec, &analysis, &outputs).is_ok());
    let broken = |file: &str, from: &str, to: &str| {
        let mut altered = outputs.clone();
        let text = altered.get_mut(file).unwrap();
        assert!(text.contains(from), "{file} holds {from:?}");
        *text = text.replacen(from, to, 1);
        verify(&spec, &analysis, &altered).is_err()
    };
    assert!(broken("openapi.3.0.json", "PERMANENT", "Permanent"));
    assert!(broken(
        "mcp-tools.json",
        "COSTS THE PERSON when",
        "COSTS THE PERSON if"
    ));
    assert!(broken(
        "descriptions.md",
        "does not make it faster",
        "makes it faster"
    ));
    assert!(broken(
        "openapi.json",
        "\"x-requires-confirmation\": true",
        "\"x-other\": true"
    ));
    assert!(broken(
        "openapi.openai.json",
        "\"x-openai-isConsequential\": true",
        "\"x-openai-isConsequential\": false"
    ));
    assert!(broken(
        "mcp-tools.json",
        "\"destructiveHint\": true",
        "\"destructiveHint\": false"
    ));
    assert!(broken(
        "openapi.3.0.json",
        "\"nullable\": true",
        "\"nullable\": \"yes\""
    ));
    assert!(broken(
        "openapi.openai.json",
        "Does not change the project.",
        "It may change the project."
    ));
    assert!(broken(
        "mcp-tools.json",
        "in the `idempotencyKey` argument",
        "in the `key` argument"
    ));
    assert!(broken("openapi.openai.json", "Never retry.", "Retry."));
    assert!(broken(
        "openapi.json",
        "\"name\": \"Idempotency-Key\"",
        "\"name\": \"Request-Key\""
    ));
    assert!(broken(
        "openapi.openai.json",
        "Renders the project.",
        &"Renders the project at length. ".repeat(10)
    ));

    // A construct 3.0 cannot express is written the nearest way, with a warning.
    let unsupported = Spec {
        ops: vec![Op {
            output: json!({ "type": "array", "prefixItems": [{ "type": "string" }] }),
            ..op.clone()
        }],
        list: false,
    };
    assert!(check(&unsupported).is_ok());
    let crowded = Spec {
        ops: vec![Op {
            description: 2,
            spends: Some((2, Some(2))),
            ..op
        }],
        list: false,
    };
    assert!(check(&crowded).is_ok());
}
