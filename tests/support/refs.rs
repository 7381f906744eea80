//! Dangling references in generated files: every `$ref` and every `discriminator.mapping`
//! value must point at something inside the file it is written in (issue 20: a kept
//! `x-webhooks` referred to pruned components, MCP mappings still pointed at
//! `#/components/…`).
#![allow(dead_code)]

use serde_json::Value;

/// Every reference of an OpenAPI document (`openapi.json`, `openapi.openai.json`,
/// `openapi.3.0.json`) that resolves to nothing, with where it is written.
pub(crate) fn dangling_in_openapi(doc: &Value) -> Vec<String> {
    let mut out = Vec::new();
    walk(doc, doc, "", "#/components/schemas/", &mut out);
    out
}

/// Every reference of an `mcp-tools.json` text's tools that resolves to nothing within
/// the schema it is written in (a tool's schemas stand alone: `#/$defs/…`).
pub(crate) fn dangling_in_tools(tools: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for (i, tool) in tools.as_array().into_iter().flatten().enumerate() {
        for part in [
            "/inputSchema",
            "/outputSchema",
            "/_meta/dev.connectorgen~1outputSchema",
        ] {
            if let Some(schema) = tool.pointer(part) {
                walk(schema, schema, &format!("/{i}{part}"), "#/$defs/", &mut out);
            }
        }
    }
    out
}

/// Literal data: a `$ref` in it is a value, not a reference.
const DATA: [&str; 5] = ["example", "default", "enum", "const", "x-examples"];

fn walk(root: &Value, value: &Value, at: &str, bare: &str, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                let here = format!("{at}/{}", key.replace('~', "~0").replace('/', "~1"));
                match (key.as_str(), child) {
                    (k, _) if DATA.contains(&k) => {}
                    ("$ref", Value::String(r)) => check(root, r, &here, out),
                    ("mapping", Value::Object(m)) if map.contains_key("propertyName") => {
                        for (k, target) in m {
                            let Some(target) = target.as_str() else {
                                continue;
                            };
                            let reference = if target.contains(['#', '/', '.']) {
                                target.to_string()
                            } else {
                                format!("{bare}{target}")
                            };
                            check(root, &reference, &format!("{here}/{k}"), out);
                        }
                    }
                    // A schema's `examples` is a list of values; an OpenAPI `examples`
                    // maps names to Example Objects, whose values are data too.
                    ("examples", Value::Array(_)) => {}
                    ("examples", Value::Object(examples)) => {
                        for (name, example) in examples {
                            let here = format!("{here}/{name}");
                            if let Some(r) = example.get("$ref").and_then(Value::as_str) {
                                check(root, r, &here, out);
                            }
                        }
                    }
                    _ => walk(root, child, &here, bare, out),
                }
            }
        }
        Value::Array(list) => {
            for (i, child) in list.iter().enumerate() {
                walk(root, child, &format!("{at}/{i}"), bare, out);
            }
        }
        _ => {}
    }
}

fn check(root: &Value, reference: &str, at: &str, out: &mut Vec<String>) {
    let resolves = reference.strip_prefix('#').is_some_and(|pointer| {
        let pointer = percent_decode(pointer);
        pointer.is_empty() || root.pointer(&pointer).is_some()
    });
    if !resolves {
        out.push(format!("{at}: `{reference}`"));
    }
}

/// A URI fragment's `%XX` escapes decoded (a JSON pointer in a `$ref` is a fragment).
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = text.get(i + 1..i + 3)
            && let Ok(b) = u8::from_str_radix(hex, 16)
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}
