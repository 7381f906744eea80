//! `mcp.omit`: optional inputs taken out of one MCP tool, to make a heavy tool lighter.
//!
//! Takes: the connector, one operation (its `omit` paths) and its built tool (after
//! `schema::clean`). Returns: the tool without the properties the paths name — in
//! `inputSchema`, and the `$defs` entries nothing refers to any more dropped — its request
//! mapping without the arguments omitted and with `omitted` listing every property taken
//! out (so `serve` refuses them like an unknown argument); findings: `unknown-omit-path`,
//! `omit-required`, `omit-filled`, each on the path's entry.
//! Must never: change the HTTP (the OpenAPI outputs are rendered from the model, not from
//! this schema), omit a property some schema on the path requires, or one the server fills
//! in (a credential, `fixed:`, the retry key `serve` sends).
//!
//! A path is names joined by `.`. The first is the HTTP name of a parameter or of a body
//! property (as `args:` and `fixed:` keys; when the tool takes the body as one argument,
//! a property of that body); each next one is a property of the value before it. Every
//! step looks through `$ref`s, the `allOf`/`anyOf`/`oneOf` branches and an array's
//! `items`, and takes the property out of every schema there that declares it. A path
//! through a `$ref` trims the definition, so each place the tool uses that definition
//! loses the property (a tool schema holds one copy of each component).

use std::collections::HashSet;

use serde_json::Value;

use super::mapping::{self, Location, Omitted, RequestMapping};
use crate::diagnostics::{Diagnostic, Finding, suggest};
use crate::model::{Connector, OmitPath, Operation, escape, unescape};

/// Applies `op.omit` to `tool` (its `inputSchema` and the mapping in `_meta`).
pub(super) fn apply(
    connector: &Connector,
    op: &Operation,
    tool: &mut Value,
    findings: &mut Vec<Finding>,
) {
    if op.omit.is_empty() {
        return;
    }
    let Some(mut mapping) = tool
        .pointer(&format!("/_meta/{}", escape(mapping::META_KEY)))
        .and_then(|m| serde_json::from_value::<RequestMapping>(m.clone()).ok())
    else {
        return;
    };
    let Some(schema) = tool.get_mut("inputSchema") else {
        return;
    };
    let mut changed = false;
    for path in &op.omit {
        match locate(connector, op, schema, &mapping, path) {
            Ok(found) => {
                remove(schema, &mut mapping, &found);
                changed = true;
            }
            Err(diagnostic) => findings.push(Finding::error(diagnostic)),
        }
    }
    if !changed {
        return;
    }
    let dropped = prune_defs(schema);
    mapping
        .omitted
        .retain(|o| !dropped.iter().any(|d| within(&o.schema, d)));
    if let Some(meta) = tool.pointer_mut(&format!("/_meta/{}", escape(mapping::META_KEY))) {
        *meta = serde_json::to_value(&mapping).expect("the mapping always serialises");
    }
}

/// Where a path ends: the schemas (JSON pointers within `inputSchema`) that declare its
/// last property, that property's name there, and the argument the path starts in when
/// it is the argument itself.
struct Found {
    holders: Vec<String>,
    property: String,
    argument: Option<String>,
}

fn locate(
    connector: &Connector,
    op: &Operation,
    schema: &Value,
    mapping: &RequestMapping,
    path: &OmitPath,
) -> Result<Found, Diagnostic> {
    let unknown = |help: String| Diagnostic::UnknownOmitPath {
        id: op.id.clone(),
        path: path.path.clone(),
        span: path.span,
        help,
    };
    let segments: Vec<&str> = path.path.split('.').collect();
    if segments.iter().any(|s| s.is_empty()) {
        return Err(unknown(
            "a path is property names joined by `.`, e.g. `billing_details.address.line2`"
                .to_string(),
        ));
    }
    // An HTTP name may hold `.` itself (a `filter.status` query parameter): the longest
    // start of the path that is an input's name is that input.
    let rest = (1..=segments.len())
        .rev()
        .find(|&k| {
            let name = segments[..k].join(".");
            mapping
                .arguments
                .iter()
                .any(|a| a.name.as_deref() == Some(name.as_str()))
                || filled(connector, op, mapping, &name).is_some()
        })
        .unwrap_or(1);
    let first = segments[..rest].join(".");
    let first = first.as_str();
    if let Some(what) = filled(connector, op, mapping, first) {
        return Err(Diagnostic::OmitFilled {
            id: op.id.clone(),
            path: path.path.clone(),
            what,
            span: path.span,
        });
    }
    let named = mapping
        .arguments
        .iter()
        .find(|a| a.name.as_deref() == Some(first));
    let whole = mapping
        .arguments
        .iter()
        .find(|a| a.location == Location::Body && a.name.is_none());
    // The walk starts at the tool's root, by argument name, or inside the one argument
    // that is the whole body.
    let (mut current, mut names): (Vec<String>, Vec<String>) = match (named, whole) {
        (Some(a), _) => {
            let mut names = vec![a.argument.clone()];
            names.extend(segments[rest..].iter().map(|s| (*s).to_string()));
            (vec![String::new()], names)
        }
        (None, Some(body)) => (
            vec![format!("/properties/{}", escape(&body.argument))],
            segments.iter().map(|s| (*s).to_string()).collect(),
        ),
        (None, None) => {
            let inputs: Vec<&str> = mapping
                .arguments
                .iter()
                .filter_map(|a| a.name.as_deref())
                .filter(|name| filled(connector, op, mapping, name).is_none())
                .collect();
            return Err(unknown(format!(
                "the first name is the HTTP name of a parameter or body property: {}",
                suggest(first, inputs.iter().copied())
            )));
        }
    };
    let last = names.pop().unwrap_or_default();
    let mut walked = String::new();
    for (i, name) in names.iter().chain(std::iter::once(&last)).enumerate() {
        let holders = expand_all(schema, &current);
        let found: Vec<String> = holders
            .iter()
            .filter(|h| declares(schema, h, name))
            .cloned()
            .collect();
        let shown = if i == 0 && named.is_some() {
            first
        } else {
            name.as_str()
        };
        if found.is_empty() {
            let mut there: Vec<&str> = holders
                .iter()
                .filter_map(|h| schema.pointer(h)?.get("properties")?.as_object())
                .flat_map(|p| p.keys().map(String::as_str))
                .collect();
            there.dedup();
            let place = if walked.is_empty() {
                "the tool's input".to_string()
            } else {
                format!("`{walked}`")
            };
            return Err(unknown(if there.is_empty() {
                format!("{place} declares no properties to omit")
            } else {
                format!(
                    "{place} has no property `{shown}`; {}",
                    suggest(shown, there)
                )
            }));
        }
        if !walked.is_empty() {
            walked.push('.');
        }
        walked.push_str(shown);
        if i == names.len() {
            if let Some(why) = required(
                connector,
                op,
                schema,
                &found,
                name,
                named.filter(|_| i == 0),
            ) {
                return Err(Diagnostic::OmitRequired {
                    id: op.id.clone(),
                    path: path.path.clone(),
                    why,
                    span: path.span,
                });
            }
            return Ok(Found {
                holders: found,
                property: last,
                argument: (i == 0 && named.is_some()).then(|| names_first(named)),
            });
        }
        current = found
            .iter()
            .map(|h| format!("{h}/properties/{}", escape(name)))
            .collect();
    }
    unreachable!("the loop returns at the last name")
}

fn names_first(named: Option<&mapping::Argument>) -> String {
    named.map(|a| a.argument.clone()).unwrap_or_default()
}

/// What the server fills in under HTTP name `name`, if anything.
fn filled(
    connector: &Connector,
    op: &Operation,
    mapping: &RequestMapping,
    name: &str,
) -> Option<&'static str> {
    if op.fixed.iter().any(|f| f.name == name) {
        return Some("a `fixed:` input");
    }
    if connector.auth.parts.iter().any(|p| p.name == name)
        || matches!(&mapping.credential, mapping::Credential::ApiKey { name: n, .. } if n.eq_ignore_ascii_case(name))
    {
        return Some("a credential");
    }
    if mapping
        .idempotency
        .as_ref()
        .is_some_and(|k| k.name.eq_ignore_ascii_case(name) || k.argument == name)
    {
        return Some("the retry key");
    }
    None
}

/// Why the property `name` declared by `holders` may not be omitted, if it may not: a
/// schema there requires it, or (`top`: the argument itself) it is a path parameter or a
/// property the operation's JSON body requires.
fn required(
    connector: &Connector,
    op: &Operation,
    schema: &Value,
    holders: &[String],
    name: &str,
    top: Option<&mapping::Argument>,
) -> Option<String> {
    if let Some(a) = top {
        if a.location == Location::Path {
            return Some("a path parameter is always required".to_string());
        }
        if a.location == Location::Body
            && a.name.as_ref().is_some_and(|http| {
                op.required_body_properties(&connector.document)
                    .contains(http)
            })
        {
            return Some("the request body requires it".to_string());
        }
    }
    holders.iter().find_map(|h| {
        let lists = schema
            .pointer(h)?
            .get("required")?
            .as_array()?
            .iter()
            .any(|r| r.as_str() == Some(name));
        lists.then(|| {
            if h.is_empty() {
                "the tool's input lists it in `required`".to_string()
            } else {
                format!("`{h}` in the tool's input lists it in `required`")
            }
        })
    })
}

/// Whether the schema at `pointer` declares property `name`.
fn declares(schema: &Value, pointer: &str, name: &str) -> bool {
    schema
        .pointer(pointer)
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
        .is_some_and(|p| p.contains_key(name))
}

/// The schemas that may declare the properties of a value of the schemas at `starts`:
/// each one with `properties` that `schema_walk::reached` finds through `$ref`s, branches and
/// `items`, in the order met.
fn expand_all(schema: &Value, starts: &[String]) -> Vec<String> {
    crate::schema_walk::reached(schema, starts, true)
        .into_iter()
        .filter(|p| {
            schema
                .pointer(p)
                .and_then(|node| node.get("properties"))
                .is_some_and(Value::is_object)
        })
        .collect()
}

/// Takes the property out of every schema that declares it there (and out of their
/// `required`, where a branch that does not require it still lists nothing), and records
/// it in `omitted` (an argument itself, at the root `""`, also leaves the mapping's
/// `arguments`).
fn remove(schema: &mut Value, mapping: &mut RequestMapping, found: &Found) {
    for holder in &found.holders {
        if let Some(Value::Object(properties)) = schema
            .pointer_mut(holder)
            .and_then(|h| h.get_mut("properties"))
        {
            properties.shift_remove(&found.property);
        }
        let omitted = Omitted {
            schema: holder.clone(),
            property: found.property.clone(),
        };
        if !mapping.omitted.contains(&omitted) {
            mapping.omitted.push(omitted);
        }
    }
    if let Some(argument) = &found.argument {
        mapping.arguments.retain(|a| a.argument != *argument);
        if let Some(Value::Array(required)) = schema.get_mut("required") {
            required.retain(|r| r.as_str() != Some(argument.as_str()));
        }
    }
}

/// Drops the `$defs` entries of the tool schema that nothing outside them refers to any
/// more (directly or through other entries); returns their pointers.
fn prune_defs(schema: &mut Value) -> Vec<String> {
    let Some(Value::Object(defs)) = schema.get("$defs") else {
        return Vec::new();
    };
    let mut outside = schema.clone();
    if let Value::Object(map) = &mut outside {
        map.shift_remove("$defs");
    }
    let mut reached: HashSet<String> = HashSet::new();
    let mut pending = Vec::new();
    collect_defs(&outside, &mut pending);
    while let Some(name) = pending.pop() {
        if reached.insert(name.clone())
            && let Some(def) = defs.get(&name)
        {
            collect_defs(def, &mut pending);
        }
    }
    let dropped: Vec<String> = defs
        .keys()
        .filter(|k| !reached.contains(*k))
        .cloned()
        .collect();
    if let Some(Value::Object(defs)) = schema.get_mut("$defs") {
        defs.retain(|k, _| reached.contains(k));
        if defs.is_empty()
            && let Value::Object(root) = schema
        {
            root.shift_remove("$defs");
        }
    }
    dropped
        .iter()
        .map(|d| format!("/$defs/{}", escape(d)))
        .collect()
}

/// The `$defs` names the references within `value` point into.
fn collect_defs(value: &Value, out: &mut Vec<String>) {
    let mut value = value.clone();
    super::document::references_mut(&mut value, &mut |reference| {
        if let Some(rest) = reference.strip_prefix("#/$defs/") {
            let name = rest.split('/').next().unwrap_or_default();
            out.push(unescape(name));
        }
    });
}

/// Whether JSON pointer `pointer` is `prefix` or within it.
fn within(pointer: &str, prefix: &str) -> bool {
    pointer == prefix
        || pointer
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.starts_with('/'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn steps_look_through_references_branches_and_items() {
        let schema = json!({
            "type": "object",
            "properties": { "lines": { "type": "array", "items": { "$ref": "#/$defs/Line" } } },
            "$defs": {
                "Line": { "allOf": [{ "$ref": "#/$defs/Base" }, { "properties": { "tax": {} } }] },
                "Base": { "properties": { "amount": {} } }
            }
        });
        let found = expand_all(&schema, &["/properties/lines".to_string()]);
        assert_eq!(found, ["/$defs/Base", "/$defs/Line/allOf/1"]);
    }

    #[test]
    fn definitions_nothing_uses_are_dropped() {
        let mut schema = json!({
            "properties": { "a": { "$ref": "#/$defs/A" } },
            "$defs": { "A": { "properties": { "b": { "$ref": "#/$defs/B" } } },
                       "B": {}, "C": { "$ref": "#/$defs/B" } }
        });
        assert_eq!(prune_defs(&mut schema), ["/$defs/C"]);
        assert!(schema["$defs"].get("B").is_some());
    }
}
