//! What every `mcp-tools.json` must hold, checked from the written files alone: an
//! `mcp-tools.json` text and the `openapi.json` text built beside it.
//!
//! - every `inputSchema` property name matches `^[a-zA-Z0-9_.-]{1,64}$`;
//! - every `pattern` (and `patternProperties` key) in every tool schema compiles as an
//!   ECMAScript regular expression with the Unicode flag (regress, as Ajv compiles it);
//! - every tool schema is valid JSON Schema 2020-12 and compiles as one;
//! - every tool's `_meta` request mapping rebuilds the OpenAPI operation of the same
//!   operationId: its method, path and servers, and each parameter where OpenAPI puts it
//!   (an argument or a fixed input with the same `in` and name; none left out but the
//!   credential and the headers OpenAPI ignores), the body's media type and properties.
#![allow(dead_code)]

use connectorgen_core::render::mcp::mapping::{Credential, Location, RequestMapping, read_tools};
use serde_json::{Map, Value};

/// Keys whose values are data, not schemas: a `pattern` key inside them is not a keyword.
const DATA: [&str; 5] = ["enum", "const", "default", "examples", "example"];

fn patterns<'a>(value: &'a Value, at: String, out: &mut Vec<(String, &'a str)>) {
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                let here = format!("{at}/{key}");
                match (key.as_str(), child) {
                    (k, _) if DATA.contains(&k) => {}
                    ("pattern", Value::String(p)) => out.push((here, p)),
                    ("patternProperties", Value::Object(entries)) => {
                        for (p, sub) in entries {
                            out.push((format!("{here}/{p}"), p));
                            patterns(sub, format!("{here}/{p}"), out);
                        }
                    }
                    _ => patterns(child, here, out),
                }
            }
        }
        Value::Array(list) => {
            for (i, v) in list.iter().enumerate() {
                patterns(v, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

fn safe(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// A local `$ref` followed (components of the OpenAPI document).
fn resolve<'a>(doc: &'a Value, value: &'a Value) -> &'a Value {
    let mut value = value;
    for _ in 0..16 {
        match value.get("$ref").and_then(Value::as_str) {
            Some(r) => match r.strip_prefix('#').and_then(|p| doc.pointer(p)) {
                Some(target) => value = target,
                None => return value,
            },
            None => return value,
        }
    }
    value
}

/// Checks `tools_text` against `openapi_text`; `name` says which build, for messages.
pub(crate) fn check(name: &str, tools_text: &str, openapi_text: &str) {
    let doc: Value = serde_json::from_str(openapi_text).expect("openapi.json is JSON");
    let tools = read_tools(tools_text).unwrap_or_else(|e| panic!("{name}: {e}"));
    for (tool, mapping) in &tools {
        let id = tool["name"].as_str().unwrap_or_default();
        let at = format!("{name}: tool {id}");
        let properties = tool["inputSchema"]
            .get("properties")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        for key in properties.keys() {
            assert!(safe(key), "{at}: argument {key:?} is not client-safe");
        }
        for part in [
            "/inputSchema",
            "/outputSchema",
            "/_meta/dev.connectorgen~1outputSchema",
        ] {
            if let Some(schema) = tool.pointer(part) {
                let valid = jsonschema::draft202012::meta::validate(schema);
                assert!(
                    valid.is_ok(),
                    "{at}: {part} is not JSON Schema 2020-12: {valid:?}"
                );
                let compiles = jsonschema::draft202012::new(schema);
                assert!(
                    compiles.is_ok(),
                    "{at}: {part} does not compile: {:?}",
                    compiles.err()
                );
            }
        }
        let mut found = Vec::new();
        patterns(&tool["inputSchema"], "/inputSchema".into(), &mut found);
        if let Some(out) = tool.get("outputSchema") {
            patterns(out, "/outputSchema".into(), &mut found);
        }
        if let Some(out) = tool.pointer("/_meta/dev.connectorgen~1outputSchema") {
            patterns(out, "/_meta/outputSchema".into(), &mut found);
        }
        for (pointer, pattern) in found {
            assert!(
                regress::Regex::with_flags(pattern, "u").is_ok(),
                "{at}: {pointer} = {pattern:?} is not an ECMAScript Unicode regex"
            );
        }
        let names: Vec<&str> = mapping
            .arguments
            .iter()
            .map(|a| a.argument.as_str())
            .collect();
        let keys: Vec<&str> = properties.keys().map(String::as_str).collect();
        assert_eq!(
            names, keys,
            "{at}: the mapping's arguments are not the inputSchema's"
        );
        rebuilds(&at, &doc, id, mapping, &properties);
    }
}

fn rebuilds(
    at: &str,
    doc: &Value,
    id: &str,
    mapping: &RequestMapping,
    properties: &Map<String, Value>,
) {
    let mut operation = None;
    for (path, item) in doc["paths"].as_object().into_iter().flatten() {
        for (method, op) in item.as_object().into_iter().flatten() {
            if op.get("operationId").and_then(Value::as_str) == Some(id) {
                operation = Some((path, item, method, op));
            }
        }
    }
    let (path, item, method, op) =
        operation.unwrap_or_else(|| panic!("{at}: no operation {id} in openapi.json"));
    assert_eq!(mapping.method, method.to_uppercase(), "{at}: method");
    assert_eq!(&mapping.path, path, "{at}: path");
    let servers = op
        .get("servers")
        .or_else(|| item.get("servers"))
        .or_else(|| doc.get("servers"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let urls: Vec<&str> = servers.iter().filter_map(|s| s["url"].as_str()).collect();
    let mapped: Vec<&str> = mapping.servers.iter().map(|s| s.url.as_str()).collect();
    assert_eq!(mapped, urls, "{at}: servers");

    // The parameters OpenAPI applies (the operation's replace the path item's).
    let mut params: Vec<&Value> = Vec::new();
    let own: Vec<&Value> = op["parameters"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| resolve(doc, p))
        .collect();
    for p in item["parameters"].as_array().into_iter().flatten() {
        let p = resolve(doc, p);
        if !own
            .iter()
            .any(|o| o["name"] == p["name"] && o["in"] == p["in"])
        {
            params.push(p);
        }
    }
    params.extend(own);
    let credentials: Vec<(&str, &str)> = doc["components"]["securitySchemes"]
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(_, s)| s["type"] == "apiKey")
        .filter_map(|(_, s)| Some((s["name"].as_str()?, s["in"].as_str()?)))
        .collect();
    let mut expected = 0;
    for p in params {
        let (name, location) = (p["name"].as_str().unwrap(), p["in"].as_str().unwrap());
        let ignored = location == "header"
            && ["accept", "content-type", "authorization"]
                .contains(&name.to_ascii_lowercase().as_str());
        let credential = credentials.iter().any(|(n, l)| {
            *l == location && (*n == name || (*l == "header" && n.eq_ignore_ascii_case(name)))
        });
        if ignored || credential {
            continue;
        }
        let place = Location::of_parameter(location).unwrap();
        let args = mapping
            .arguments
            .iter()
            .filter(|a| a.location == place && a.name.as_deref() == Some(name))
            .count();
        let fixed = mapping
            .fixed
            .iter()
            .filter(|f| f.location == place && f.name == name)
            .count();
        // `mcp.omit` took it out of the tool (by its argument name: the same as the
        // HTTP name in the cases that omit a parameter).
        let omitted = mapping
            .omitted
            .iter()
            .filter(|o| o.schema.is_empty() && o.property == name)
            .count();
        assert_eq!(
            args + fixed + omitted,
            1,
            "{at}: {location} parameter {name:?} is not mapped once"
        );
        expected += args;
        if let Some(arg) = mapping
            .arguments
            .iter()
            .find(|a| a.location == place && a.name.as_deref() == Some(name))
        {
            let required = location == "path" || p["required"] == true;
            assert_eq!(arg.required, required, "{at}: {name:?} required");
            if p.get("schema").is_some() {
                let style = p["style"].as_str();
                assert!(
                    style.is_none() || arg.style.as_deref() == style,
                    "{at}: {name:?} style"
                );
            }
        }
    }
    let parameters = mapping
        .arguments
        .iter()
        .filter(|a| a.location != Location::Body)
        .count();
    assert_eq!(
        parameters, expected,
        "{at}: arguments that are no parameter of the operation"
    );

    let body_args: Vec<_> = mapping
        .arguments
        .iter()
        .filter(|a| a.location == Location::Body)
        .collect();
    match op.get("requestBody").map(|b| resolve(doc, b)) {
        None => assert!(
            mapping.body.is_none() && body_args.is_empty(),
            "{at}: a body"
        ),
        Some(body) => {
            let media = &mapping.body.as_ref().expect("a body mapping").media_type;
            let content = &body["content"][media.as_str()];
            assert!(
                content.is_object(),
                "{at}: media type {media} is not the operation's"
            );
            let schema = resolve(doc, &content["schema"]);
            if body_args.len() == 1 && body_args[0].name.is_none() {
                return;
            }
            // The fields the connection fills in (a credential part, a `fixed:` input)
            // are the body's but no argument's.
            let filled: Vec<&str> = mapping
                .fixed
                .iter()
                .filter(|f| f.location == Location::Body)
                .map(|f| f.name.as_str())
                .chain(match &mapping.credential {
                    Credential::Parts { parts } => parts
                        .iter()
                        .filter(|p| p.location == Location::Body)
                        .map(|p| p.name.as_str())
                        .collect(),
                    _ => Vec::new(),
                })
                .collect();
            let omitted: Vec<&str> = mapping
                .omitted
                .iter()
                .filter(|o| o.schema.is_empty())
                .map(|o| o.property.as_str())
                .collect();
            let props: Vec<&String> = schema["properties"]
                .as_object()
                .map(|p| {
                    p.keys()
                        .filter(|k| !filled.contains(&k.as_str()) && !omitted.contains(&k.as_str()))
                        .collect()
                })
                .unwrap_or_default();
            let mapped: Vec<&str> = body_args.iter().filter_map(|a| a.name.as_deref()).collect();
            assert_eq!(
                mapped,
                props.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
                "{at}: body properties"
            );
            for a in body_args {
                assert!(properties.contains_key(&a.argument));
            }
        }
    }
}
