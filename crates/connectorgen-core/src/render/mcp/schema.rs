//! A tool's schemas made light and compilable by every client, and its weight.
//!
//! Takes: a tool definition built by `mcp.rs`. Returns: the same tool with vendor `x-`
//! keys left out of its schemas, every `pattern` (and `patternProperties` key) that is
//! not an ECMAScript regular expression with the Unicode flag left out with an
//! `mcp-pattern-dropped` warning, identical `$defs` shared; and its size in bytes with
//! its heaviest parts, for `explain --list --stats` and the `mcp-tool-too-large` lint.
//! Must never: walk into data (`enum`, `const`, `default`, `examples`) as if it were a
//! schema, or drop anything but those keys: an argument, a type or a bound stays.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::diagnostics::{Diagnostic, Finding};
use crate::model::{Operation, escape};
use crate::subschemas::{self, Holds};

/// Calls `f` on every schema object within `schema` (itself first), with its JSON
/// pointer, before descending into it.
fn visit(
    schema: &mut Value,
    pointer: &mut String,
    f: &mut dyn FnMut(&mut Map<String, Value>, &str),
) {
    let Value::Object(map) = schema else {
        return;
    };
    f(map, pointer);
    let len = pointer.len();
    for (key, child) in map.iter_mut() {
        let key_ptr = format!("/{}", escape(key));
        match (subschemas::holds(key, child), child) {
            (Some(Holds::Schema), child) => {
                pointer.push_str(&key_ptr);
                visit(child, pointer, f);
            }
            (Some(Holds::Map), Value::Object(entries)) => {
                for (name, sub) in entries.iter_mut() {
                    pointer.push_str(&key_ptr);
                    pointer.push('/');
                    pointer.push_str(&escape(name));
                    visit(sub, pointer, f);
                    pointer.truncate(len);
                }
            }
            (Some(Holds::List), Value::Array(list)) => {
                for (i, sub) in list.iter_mut().enumerate() {
                    pointer.push_str(&format!("{key_ptr}/{i}"));
                    visit(sub, pointer, f);
                    pointer.truncate(len);
                }
            }
            _ => {}
        }
        pointer.truncate(len);
    }
}

/// Whether `pattern` compiles as an ECMAScript regular expression with the `u` flag
/// (how Ajv, in the MCP TypeScript SDK, compiles it); the error when not.
pub(super) fn ecmascript_error(pattern: &str) -> Option<String> {
    regress::Regex::with_flags(pattern, "u")
        .err()
        .map(|e| e.to_string())
}

/// Leaves `x-` keys and patterns no client can compile out of the tool's
/// `inputSchema` and `outputSchema` (and the output schema kept in `_meta`), and shares
/// identical `$defs` within each.
pub(super) fn clean(tool: &mut Value, op: &Operation, findings: &mut Vec<Finding>) {
    for part in [
        "/inputSchema",
        "/outputSchema",
        "/_meta/dev.connectorgen~1outputSchema",
    ] {
        let Some(schema) = tool.pointer_mut(part) else {
            continue;
        };
        let mut pointer = part.to_string();
        visit(schema, &mut pointer, &mut |map, at| {
            map.retain(|k, _| !k.starts_with("x-"));
            if let Some(Value::String(pattern)) = map.get("pattern")
                && let Some(error) = ecmascript_error(pattern)
            {
                findings.push(Finding::warning(Diagnostic::McpPatternDropped {
                    id: op.id.clone(),
                    pointer: format!("{at}/pattern"),
                    error,
                    span: op.origin.entry,
                }));
                map.remove("pattern");
            }
            if let Some(Value::Object(patterns)) = map.get_mut("patternProperties") {
                patterns.retain(|key, _| match ecmascript_error(key) {
                    None => true,
                    Some(error) => {
                        findings.push(Finding::warning(Diagnostic::McpPatternDropped {
                            id: op.id.clone(),
                            pointer: format!("{at}/patternProperties/{}", escape(key)),
                            error,
                            span: op.origin.entry,
                        }));
                        false
                    }
                });
            }
        });
        if let Value::Object(root) = schema {
            share_identical_defs(root);
        }
    }
}

/// Leaves `example`, `examples` and `x-` keys out of an `outputSchema`, which checks a
/// result: examples and vendor keys take no part in that.
pub(super) fn lighten_output(schema: &mut Value) {
    visit(schema, &mut String::new(), &mut |map, _| {
        map.retain(|k, _| !(k.starts_with("x-") || k == "example" || k == "examples"));
    });
}

/// Whether a `$defs` key is written the same in a reference (no escaping needed).
fn plain(key: &str) -> bool {
    key.bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

/// Two `$defs` entries with the same content become one (the first by name), and the
/// references to the other point to it; repeated while merging makes more alike.
fn share_identical_defs(root: &mut Map<String, Value>) {
    for _ in 0..4 {
        let Some(Value::Object(defs)) = root.get("$defs") else {
            return;
        };
        let mut first_by_text: BTreeMap<String, &str> = BTreeMap::new();
        let mut renamed: BTreeMap<String, String> = BTreeMap::new();
        for (key, value) in defs {
            if !plain(key) {
                continue;
            }
            let text = serde_json::to_string(value).unwrap_or_default();
            match first_by_text.get(&text) {
                Some(first) => {
                    renamed.insert(key.clone(), (*first).to_string());
                }
                None => {
                    first_by_text.insert(text, key);
                }
            }
        }
        if renamed.is_empty() {
            return;
        }
        if let Some(Value::Object(defs)) = root.get_mut("$defs") {
            defs.retain(|k, _| !renamed.contains_key(k));
        }
        for value in root.values_mut() {
            redirect(value, &renamed);
        }
    }
}

/// Rewrites `#/$defs/<old>…` references (and discriminator mappings) to `#/$defs/<new>…`.
fn redirect(value: &mut Value, renamed: &BTreeMap<String, String>) {
    super::document::references_mut(value, &mut |reference| {
        if let Some(rest) = reference.strip_prefix("#/$defs/") {
            let (name, tail) = rest.split_once('/').map_or((rest, ""), |(n, t)| (n, t));
            if let Some(new) = renamed.get(name) {
                let sep = if tail.is_empty() { "" } else { "/" };
                *reference = format!("#/$defs/{new}{sep}{tail}");
            }
        }
    });
}

/// What a tool weighs: its compact JSON size as a server sends it in `tools/list`,
/// without `_meta` (the request mapping, which clients do not show the model), and its
/// heaviest parts.
#[derive(Debug, Clone)]
pub struct ToolWeight {
    /// The operation's index in the connector.
    pub index: usize,
    pub bytes: usize,
    /// Of `bytes`, the `inputSchema`'s and the `outputSchema`'s (`None`: the tool has
    /// none).
    pub input: usize,
    pub output: Option<usize>,
    /// The three heaviest of: each argument, each `$defs` entry of `inputSchema`,
    /// `outputSchema`, the description — heaviest first, with their bytes.
    pub parts: Vec<(String, usize)>,
}

fn size(value: &Value) -> usize {
    serde_json::to_vec(value).map_or(0, |v| v.len())
}

/// A tool's weight.
pub(crate) fn weight(index: usize, tool: &Value) -> ToolWeight {
    let mut parts: Vec<(String, usize)> = Vec::new();
    let input = &tool["inputSchema"];
    for (name, schema) in input
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        parts.push((format!("argument `{name}`"), size(schema)));
    }
    for (name, schema) in input
        .get("$defs")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        parts.push((format!("inputSchema `$defs/{name}`"), size(schema)));
    }
    if let Some(output) = tool.get("outputSchema") {
        parts.push(("outputSchema".to_string(), size(output)));
    }
    parts.push(("description".to_string(), size(&tool["description"])));
    parts.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    parts.truncate(3);
    // `,"_meta":` and the mapping.
    let meta = tool.get("_meta").map_or(0, |m| size(m) + 9);
    ToolWeight {
        index,
        bytes: size(tool) - meta,
        input: size(input),
        output: tool.get("outputSchema").map(size),
        parts,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ecmascript_unicode_rules() {
        assert_eq!(ecmascript_error("^[a-z]+$"), None);
        assert_eq!(ecmascript_error(r"^\p{L}+$"), None);
        // Valid in PCRE and Rust's regex, not in an ECMAScript Unicode regex.
        assert!(ecmascript_error(r"^[\w.-]+@[\w-]+\.\w+\Z").is_some());
        assert!(ecmascript_error(r"(?i)abc").is_some());
        assert!(ecmascript_error(r"\-").is_some());
    }

    #[test]
    fn identical_defs_are_shared_and_references_follow() {
        let mut root = json!({
            "type": "object",
            "properties": { "a": { "$ref": "#/$defs/A" }, "b": { "$ref": "#/$defs/B/properties/x" } },
            "$defs": {
                "A": { "type": "object", "properties": { "x": { "type": "string" } } },
                "B": { "type": "object", "properties": { "x": { "type": "string" } } },
                "C": { "$ref": "#/$defs/B" },
                "D": { "oneOf": [{ "$ref": "#/$defs/B" }],
                       "discriminator": { "propertyName": "x", "mapping": { "b": "#/$defs/B" } } }
            }
        });
        share_identical_defs(root.as_object_mut().unwrap());
        assert_eq!(root["properties"]["b"]["$ref"], "#/$defs/A/properties/x");
        assert_eq!(root["$defs"]["C"]["$ref"], "#/$defs/A");
        // A discriminator's mapping follows its `$ref`s (issue 20).
        assert_eq!(
            root["$defs"]["D"]["discriminator"]["mapping"]["b"],
            "#/$defs/A"
        );
        assert!(root["$defs"].get("B").is_none());
    }

    #[test]
    fn only_schema_positions_are_walked() {
        let mut schema = json!({
            "x-vendor": 1,
            "properties": { "x-keep-me": { "type": "string", "x-drop": true, "example": "e" } },
            "enum": [{ "x-data": 1 }],
            "default": { "example": 1 },
            "items": { "examples": ["a"] }
        });
        lighten_output(&mut schema);
        assert_eq!(
            schema,
            json!({
                "properties": { "x-keep-me": { "type": "string" } },
                "enum": [{ "x-data": 1 }],
                "default": { "example": 1 },
                "items": {}
            })
        );
    }
}
