//! Base mode keeps the provider's HTTP description: for every exposed operation of every
//! base-mode manifest of this binary's sets (`crate::sets()`: the examples and base
//! cases here, the manifests on real providers' documents in the real-document suite),
//! what the agent reads in openapi.json is what the provider's document says, apart from
//! the documented additions — `operationId`, `summary`, the model-facing `description`,
//! the `x-` safety hints and an `Idempotency-Key` header where the base declares none —
//! and the documented removals: `callbacks` (an agent receives no calls), the parameters that
//! carry the credential the manifest names for a document without security schemes
//! (they become its security scheme, issue 31), and with
//! `service.publicUrl` the path- and operation-level `servers` (the agent calls every
//! operation at `publicUrl`, in every output, MCP's request mapping included).
//!
//! A 3.1 base is compared exactly. A 3.0 base is upgraded to 3.1 (`nullable` and
//! boolean exclusive bounds are spelt the 3.1 way inside schemas), so there the test
//! compares every HTTP fact outside schemas exactly: parameter names, locations,
//! styles, `explode`, `required`; body and response media types with their
//! `encoding`; status codes; response headers; security; servers. A 3.2 base is
//! written as 3.1 (`validate/base/v32.rs`): the same facts are compared once its 3.2-only
//! keys are read back from their `x-` names and its `components.mediaTypes` written in.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;

use connectorgen_core::base::Base;
use connectorgen_core::model::OpenapiVersion;
use connectorgen_core::{Options, analyze_with};
use serde_json::{Map, Value};

use crate::support::sets;

/// Keys connectorgen writes over or adds to an operation.
const GENERATED: [&str; 17] = [
    "operationId",
    "summary",
    "description",
    "x-openai-isConsequential",
    "x-read-only",
    "x-long-running",
    "x-poll-operationId",
    "x-typical-seconds",
    "x-cost-kind",
    "x-cost-note",
    "x-requires-confirmation",
    "x-async-returns",
    "x-cost-when",
    "x-cost-payer",
    "x-permanent",
    "x-permanent-when",
    "x-idempotency",
];

/// Whether the parameter `p` is one the manifest's credential (in, lower-cased name) names.
fn carries_credential(p: &Value, declared: &[(String, String)]) -> bool {
    let (Some(location), Some(name)) = (
        p.get("in").and_then(Value::as_str),
        p.get("name").and_then(Value::as_str),
    ) else {
        return false;
    };
    declared
        .iter()
        .any(|(l, n)| l == location && *n == name.to_ascii_lowercase())
}

/// Every manifest with `openapi:` among this binary's sets, with the options that read
/// its document.
fn base_manifests() -> Vec<(PathBuf, Options)> {
    sets::every_manifest()
        .into_iter()
        .filter(|(path, _)| {
            let text = std::fs::read_to_string(path).unwrap();
            text.lines().any(|l| l.starts_with("openapi:"))
        })
        .collect()
}

fn is_idempotency_header(p: &Value) -> bool {
    p["in"] == "header"
        && p["name"]
            .as_str()
            .is_some_and(|n| n.eq_ignore_ascii_case("Idempotency-Key"))
}

/// The HTTP facts of a parameter list that do not live in schemas.
fn parameter_facts(list: Option<&Value>) -> Vec<Value> {
    let keep = [
        "$ref",
        "name",
        "in",
        "style",
        "explode",
        "required",
        "allowReserved",
        "deprecated",
    ];
    list.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|p| {
            let facts: Map<String, Value> = p
                .as_object()
                .unwrap()
                .iter()
                .filter(|(k, _)| keep.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            Value::Object(facts)
        })
        .collect()
}

/// Media types, encodings, status codes and headers of a body or response map, without
/// schemas.
fn content_facts(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| !matches!(k.as_str(), "schema" | "example" | "examples"))
                .map(|(k, v)| (k.clone(), content_facts(v)))
                .collect(),
        ),
        Value::Array(list) => Value::Array(list.iter().map(content_facts).collect()),
        other => other.clone(),
    }
}

/// The keys `validate/base/v32.rs` writes with `x-` before them, back as 3.2 names them.
fn without_x_32(value: &Value) -> Value {
    const MOVED: [&str; 6] = [
        "summary",
        "itemSchema",
        "itemEncoding",
        "prefixEncoding",
        "description",
        "name",
    ];
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let k = match k.strip_prefix("x-") {
                        Some(rest) if MOVED.contains(&rest) => rest.to_string(),
                        _ => k.clone(),
                    };
                    (k, without_x_32(v))
                })
                .collect(),
        ),
        Value::Array(list) => Value::Array(list.iter().map(without_x_32).collect()),
        other => other.clone(),
    }
}

/// A value with each `$ref` into `components.mediaTypes` replaced by its target.
fn media_types_inlined(value: &Value, base: &Base) -> Value {
    match value {
        Value::Object(map) => {
            if let Some(r) = map.get("$ref").and_then(Value::as_str)
                && let Some(pointer) = r.strip_prefix('#')
                && r.starts_with("#/components/mediaTypes/")
                && let Some(target) = base.get(pointer)
            {
                return media_types_inlined(target, base);
            }
            Value::Object(
                map.iter()
                    .map(|(k, v)| (k.clone(), media_types_inlined(v, base)))
                    .collect(),
            )
        }
        Value::Array(list) => {
            Value::Array(list.iter().map(|v| media_types_inlined(v, base)).collect())
        }
        other => other.clone(),
    }
}

/// Every `$ref` in a value.
fn refs(value: &Value, out: &mut BTreeSet<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                match (k.as_str(), v) {
                    ("$ref", Value::String(r)) => {
                        out.insert(r.clone());
                    }
                    // A discriminator's mapping names schemas too (a reference, or a
                    // bare name of `components.schemas`).
                    ("mapping", Value::Object(m)) if map.contains_key("propertyName") => {
                        for target in m.values().filter_map(Value::as_str) {
                            out.insert(if target.contains(['#', '/', '.']) {
                                target.to_string()
                            } else {
                                format!("#/components/schemas/{target}")
                            });
                        }
                    }
                    _ => refs(v, out),
                }
            }
        }
        Value::Array(list) => list.iter().for_each(|v| refs(v, out)),
        _ => {}
    }
}

#[test]
fn exposed_operations_keep_the_base_http() {
    let manifests = base_manifests();
    assert!(
        manifests.len() >= crate::BASE_MANIFESTS,
        "expected at least {} base-mode manifests, found {manifests:?}",
        crate::BASE_MANIFESTS
    );
    let mut compared = 0;
    for (path, options) in manifests {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&path).unwrap();
        let analysis = analyze_with(&name, Arc::new(text.clone()), &options).unwrap();
        assert!(!analysis.has_errors(), "{name}: {:?}", analysis.diagnostics);
        let base: &Base = analysis.base.as_deref().expect("base mode");
        let connector = analysis.connector.as_ref().unwrap();
        let outputs = analysis.outputs.as_ref().unwrap();
        let doc: Value = serde_json::from_str(&outputs["openapi.json"]).unwrap();
        let exact = base.version == OpenapiVersion::V31;
        let public_url = text
            .lines()
            .any(|l| l.trim_start().starts_with("publicUrl:"));
        let dropped = |key: &str| key == "callbacks" || (public_url && key == "servers");
        if public_url {
            let tools: Value = outputs
                .get("mcp-tools.json")
                .map_or(Value::Array(Vec::new()), |t| {
                    serde_json::from_str(t).unwrap()
                });
            for tool in tools.as_array().unwrap() {
                let first = &tool["_meta"]["dev.connectorgen/request"]["servers"][0]["url"];
                assert_eq!(
                    first.as_str(),
                    Some(connector.service.public_url.as_str()),
                    "{name}: {} is not called at publicUrl",
                    tool["name"]
                );
            }
            for file in ["openapi.json", "openapi.3.0.json", "openapi.openai.json"] {
                let Some(out) = outputs.get(file) else {
                    continue;
                };
                let out: Value = serde_json::from_str(out).unwrap();
                for (path, item) in out["paths"].as_object().unwrap() {
                    let mut keys = vec![item.get("servers")];
                    keys.extend(item.as_object().unwrap().values().map(|o| o.get("servers")));
                    assert!(
                        keys.iter().all(Option::is_none),
                        "{name} {file} {path}: a `servers` that overrides publicUrl"
                    );
                }
            }
        }

        // A document without security schemes whose credential the manifest names
        // (`auth:`): the parameters that carried it are the security scheme now.
        let declares = base
            .get("/components/securitySchemes")
            .and_then(Value::as_object)
            .is_some_and(|s| !s.is_empty());
        let declared: Vec<(String, String)> = if declares {
            Vec::new()
        } else {
            connector
                .auth
                .parts
                .iter()
                .filter(|p| !p.in_body())
                .map(|p| (p.location.clone(), p.name.to_ascii_lowercase()))
                .collect()
        };
        for op in &connector.operations {
            let pointer = op.pointer();
            let out = doc
                .pointer(&pointer)
                .unwrap_or_else(|| panic!("{name}: {pointer}"));
            let theirs = base.get(&pointer).unwrap().as_object().unwrap();
            let ours = out.as_object().unwrap();
            let at = format!("{name} {} ({pointer})", op.id);

            // Nothing but the generated keys is added, and only callbacks go away.
            for key in ours.keys() {
                assert!(
                    theirs.contains_key(key)
                        || GENERATED.contains(&key.as_str())
                        || key == "parameters",
                    "{at}: `{key}` is not in the base"
                );
            }
            for key in theirs.keys() {
                assert!(
                    ours.contains_key(key) || dropped(key),
                    "{at}: `{key}` was dropped"
                );
            }

            // Parameters: the base's, in order, plus at most one generated header.
            let mut params: Vec<Value> = ours
                .get("parameters")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            let base_params: Vec<Value> = theirs
                .get("parameters")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .filter(|p| {
                    // A parameter by reference carries the credential when the one it
                    // points at does.
                    let resolved = p
                        .get("$ref")
                        .and_then(Value::as_str)
                        .and_then(|r| r.strip_prefix('#'))
                        .and_then(|pointer| base.get(pointer));
                    !carries_credential(resolved.unwrap_or(p), &declared)
                })
                .collect();
            if params.len() == base_params.len() + 1 {
                let added = params.pop().unwrap();
                assert!(is_idempotency_header(&added), "{at}: added {added}");
                assert!(
                    op.key().is_some_and(|k| k.added),
                    "{at}: a header it does not take"
                );
                assert!(
                    !base_params.iter().any(is_idempotency_header),
                    "{at}: a second header"
                );
            }
            let params = Value::Array(params);
            let base_params = Value::Array(base_params);
            if exact {
                assert_eq!(params, base_params, "{at}: parameters");
            } else {
                assert_eq!(
                    parameter_facts(Some(&params)),
                    parameter_facts(Some(&base_params)),
                    "{at}: parameters"
                );
            }

            for key in theirs.keys() {
                if GENERATED.contains(&key.as_str()) || key == "parameters" || dropped(key) {
                    continue;
                }
                if exact {
                    assert_eq!(ours[key], theirs[key], "{at}: `{key}`");
                } else if base.version == OpenapiVersion::V32 {
                    // 3.2 → 3.1 (validate/base/v32.rs): 3.2-only keys become `x-` keys, and
                    // media types from `components.mediaTypes` are written in place.
                    assert_eq!(
                        content_facts(&without_x_32(&ours[key])),
                        content_facts(&media_types_inlined(&theirs[key], base)),
                        "{at}: `{key}`"
                    );
                } else {
                    assert_eq!(
                        content_facts(&ours[key]),
                        content_facts(&theirs[key]),
                        "{at}: `{key}`"
                    );
                }
            }
            compared += 1;
        }

        // The path items' shared keys are the base's.
        for path in connector.operations.iter().map(|o| &o.path) {
            let escaped = path.replace('~', "~0").replace('/', "~1");
            let theirs = base
                .get(&format!("/paths/{escaped}"))
                .unwrap()
                .as_object()
                .unwrap();
            let ours = doc["paths"][path.as_str()].as_object().unwrap();
            for (key, value) in theirs {
                let is_method = [
                    "get", "put", "post", "delete", "options", "head", "patch", "trace",
                ]
                .contains(&key.as_str());
                if !is_method && exact && !dropped(key) {
                    assert_eq!(&ours[key], value, "{name} {path}: `{key}`");
                }
            }
        }

        // Every reference resolves inside the document, and every component kept is
        // reachable from the kept parts (or is a security scheme the operations use).
        let mut all = BTreeSet::new();
        refs(&doc, &mut all);
        for r in &all {
            let pointer = r.strip_prefix('#').expect("local references only");
            assert!(doc.pointer(pointer).is_some(), "{name}: `{r}` dangles");
        }
        // Reached from every kept part but the components themselves: the paths, and
        // `info`, tags and root `x-` extensions (issue 20).
        let mut reached = BTreeSet::new();
        for (key, value) in doc.as_object().unwrap() {
            if key != "components" {
                refs(value, &mut reached);
            }
        }
        loop {
            let before = reached.len();
            for r in reached.clone() {
                if let Some(target) = doc.pointer(r.trim_start_matches('#')) {
                    refs(target, &mut reached);
                }
            }
            if reached.len() == before {
                break;
            }
        }
        let components = doc["components"].as_object().cloned().unwrap_or_default();
        for (section, entries) in &components {
            for entry in entries.as_object().unwrap().keys() {
                let r = format!(
                    "#/components/{section}/{}",
                    entry.replace('~', "~0").replace('/', "~1")
                );
                assert!(
                    reached.contains(&r) || section == "securitySchemes",
                    "{name}: `{r}` is kept but nothing exposed reaches it"
                );
            }
        }
    }
    assert!(compared >= 25, "compared only {compared} operations");
}
