//! openapi.3.0.json means what openapi.json means: each schema accepts the same values,
//! read as a 3.0.3 reader reads it (`nullable: true` adds null to the `type` beside it
//! and to nothing else; every other keyword, `allOf` included, keeps refusing null).
//!
//! The forms are the ways real 3.1 documents say "or null" (the AssemblyAI document
//! writes `oneOf: [{$ref}, {type: "null"}]`); each is checked on a handful of values of
//! every JSON type.

use std::sync::Arc;

use connectorgen_core::model::Target;
use connectorgen_core::{Options, analyze_with};
use serde_json::{Map, Value, json};

/// The "or null" forms, each the output of one operation.
const FORMS: [&str; 9] = [
    r##"{ "oneOf": [{ "$ref": "#/components/schemas/Code" }, { "type": "null" }] }"##,
    r##"{ "anyOf": [{ "type": "null" }, { "$ref": "#/components/schemas/Shared" }], "description": "Or nothing." }"##,
    r##"{ "anyOf": [{ "$ref": "#/components/schemas/Code" }, { "$ref": "#/components/schemas/Count" }, { "type": "null" }] }"##,
    r##"{ "oneOf": [{ "$ref": "#/components/schemas/Code" }, { "$ref": "#/components/schemas/Shared" }, { "type": "null" }] }"##,
    r##"{ "anyOf": [{ "$ref": "#/components/schemas/Either" }, { "type": "null" }] }"##,
    r#"{ "anyOf": [{ "type": "string", "maxLength": 3 }, { "type": "null" }] }"#,
    r#"{ "type": ["integer", "null"], "minimum": 2 }"#,
    r##"{ "oneOf": [{ "allOf": [{ "$ref": "#/components/schemas/Code" }], "description": "A code." }, { "type": "null" }] }"##,
    r##"{ "type": "object", "properties": { "code": { "oneOf": [{ "$ref": "#/components/schemas/Code" }, { "type": "null" }] } } }"##,
];

fn manifest(forms: &[&str]) -> String {
    let mut y = String::from(
        "version: 1\nservice:\n  name: Forms\n  version: 1.0.0\n  \
         description: Reads forms.\n  publicUrl: https://api.forms.example\n  \
         dashboardUrl: https://forms.example/keys\n\
         schemas:\n  \
         Shared: {type: object, properties: {code: {type: string}}, required: [code]}\n  \
         Code: {type: string, maxLength: 4}\n  \
         Count: {type: integer}\n  \
         Either: {anyOf: [{type: string}, {type: integer}]}\n\
         operations:\n",
    );
    for (i, form) in forms.iter().enumerate() {
        y += &format!(
            "  - id: read{i}\n    method: get\n    path: /v1/forms{i}\n    \
             summary: Read form {i}\n    description: Read-only. Changes nothing.\n    \
             output: {form}\n"
        );
    }
    y
}

/// A 3.0.3 schema as JSON Schema 2020-12: `type: T, nullable: true` → `type: [T, null]`;
/// `nullable` without `type` does nothing (3.0.3, "only if type is explicitly defined
/// within the same Schema Object").
fn from_30(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut out: Map<String, Value> = map
                .iter()
                .filter(|(k, _)| *k != "nullable" && *k != "example")
                .map(|(k, v)| (k.clone(), from_30(v)))
                .collect();
            if map.get("nullable") == Some(&json!(true))
                && let Some(Value::String(t)) = map.get("type")
            {
                out.insert("type".into(), json!([t, "null"]));
            }
            // 3.0's boolean `exclusiveMinimum`/`exclusiveMaximum` make the bound beside
            // them exclusive: 2020-12 says it with the number.
            for (exclusive, bound) in [
                ("exclusiveMinimum", "minimum"),
                ("exclusiveMaximum", "maximum"),
            ] {
                match map.get(exclusive) {
                    Some(Value::Bool(true)) => {
                        if let Some(b) = out.remove(bound) {
                            out.insert(exclusive.into(), b);
                        }
                    }
                    Some(Value::Bool(false)) => {
                        out.remove(exclusive);
                    }
                    _ => {}
                }
            }
            Value::Object(out)
        }
        Value::Array(list) => Value::Array(list.iter().map(from_30).collect()),
        other => other.clone(),
    }
}

/// The values of `samples` that `schema` accepts, its `#/components/…` references
/// resolved in `doc`.
fn accepted(doc: &Value, schema: &Value, samples: &[Value]) -> Vec<Value> {
    let mut root = schema.as_object().cloned().unwrap_or_default();
    root.insert(
        "$schema".into(),
        json!("https://json-schema.org/draft/2020-12/schema"),
    );
    root.insert("components".into(), doc["components"].clone());
    let validator = jsonschema::validator_for(&Value::Object(root)).expect("schema compiles");
    samples
        .iter()
        .filter(|v| validator.is_valid(v))
        .cloned()
        .collect()
}

fn output_schema(doc: &Value, i: usize) -> &Value {
    &doc["paths"][format!("/v1/forms{i}")]["get"]["responses"]["200"]["content"]["application/json"]
        ["schema"]
}

/// The 3.1 and the 3.0 document of a manifest with one output schema per form, the
/// 3.0 one read as 2020-12 (`from_30`), and the codes of the findings about the 3.0
/// target.
fn both(forms: &[&str]) -> (Value, Value, Vec<String>) {
    let options = Options {
        targets: Some(vec![Target::Muse, Target::Openapi30]),
        ..Options::default()
    };
    let analysis =
        analyze_with("connector.yaml", Arc::new(manifest(forms)), &options).expect("runs");
    let findings = analysis
        .diagnostics
        .items()
        .iter()
        .map(|f| f.diagnostic.code_str())
        .filter(|c| c.starts_with("openapi30"))
        .collect();
    let outputs = analysis.outputs.expect("the manifest is valid");
    let v31: Value = serde_json::from_str(&outputs["openapi.json"]).unwrap();
    let v30: Value = serde_json::from_str(&outputs["openapi.3.0.json"]).unwrap();
    (v31, from_30(&v30), findings)
}

/// Exact rewrites: a schema of null alone (3.0 has no `null` type) and a numeric
/// exclusive bound beside an inclusive one of the same side (3.0 has one number per
/// side) accept the same values, with no finding.
#[test]
fn exact_rewrites_accept_the_same_values_in_3_0() {
    let forms = [
        r#"{ "type": "null" }"#,
        r#"{ "type": ["null"] }"#,
        r#"{ "type": "number", "minimum": 2, "exclusiveMinimum": 1 }"#,
        r#"{ "type": "number", "exclusiveMinimum": 2, "minimum": 2 }"#,
        r#"{ "type": "number", "maximum": 7, "exclusiveMaximum": 7 }"#,
        r#"{ "type": "number", "exclusiveMaximum": 7, "maximum": 1.5 }"#,
    ];
    let (v31, v30, findings) = both(&forms);
    assert!(findings.is_empty(), "{findings:?}");
    let samples = [
        Value::Null,
        json!(0),
        json!(1),
        json!(1.5),
        json!(2),
        json!(2.5),
        json!(7),
        json!(8),
        json!("2"),
    ];
    for (i, form) in forms.iter().enumerate() {
        let want = accepted(&v31, output_schema(&v31, i), &samples);
        let got = accepted(&v30, output_schema(&v30, i), &samples);
        assert_eq!(
            got,
            want,
            "form {i}: {form} became {}",
            output_schema(&v30, i)
        );
    }
}

#[test]
fn every_or_null_form_accepts_the_same_values_in_3_0() {
    let (v31, v30, _) = both(&FORMS);
    let samples = [
        Value::Null,
        json!("abc"),
        json!("abcdef"),
        json!(1),
        json!(7),
        json!(true),
        json!({ "code": "x" }),
        json!({ "code": null }),
        json!({ "code": 1 }),
        json!({}),
        json!([]),
    ];
    let mut wrong = Vec::new();
    for (i, form) in FORMS.iter().enumerate() {
        let want = accepted(&v31, output_schema(&v31, i), &samples);
        assert!(
            want.contains(&Value::Null) || want.contains(&json!({ "code": null })),
            "form {i} accepts null in 3.1"
        );
        let got = accepted(&v30, output_schema(&v30, i), &samples);
        if got != want {
            wrong.push(format!(
                "form {i}: {form} became {}: accepts {got:?}, not {want:?}",
                output_schema(&v30, i)
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
