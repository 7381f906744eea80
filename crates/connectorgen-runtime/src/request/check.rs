//! The arguments of one call checked against the tool's served `inputSchema`, before
//! anything is asked of the person or sent to the provider.
//!
//! Takes: the served `inputSchema` (an object), the tool's request mapping and the
//! call's arguments (with `confirmation` and the retry key argument already taken out by
//! `serve`). Returns: nothing when the call is one the schema accepts and the mapping
//! can send whole, else the first problems, worded for the model to fix them.
//! Must never: accept an argument the mapping would not send (the question quotes every
//! argument, so an argument left out of the request is a yes to something else), or
//! fetch anything: a `$ref` outside the schema is an error, not a download.
//!
//! The validator is the `jsonschema` crate (2020-12, formats asserted, unknown formats
//! ignored as the specification allows), not a checker of our own: the generator already
//! builds it (`connectorgen-core` checks authors' schemas against the meta-schema with
//! it), so it costs no build time here, and a hand-written subset of `oneOf`, `anyOf`,
//! `allOf`, `$ref` and `format` would be one more place for a paid call to slip through.
//! What it cannot know — which arguments the mapping sends — is checked here first, with
//! a did-you-mean; a value outside an `enum` gets one too.
//!
//! `absent_nulls` runs before everything else (docs/serve.md, "Arguments"): OpenAI's
//! strict clients send `null` for every optional field they leave out, so a top-level
//! `null` the argument's schema does not allow is read as the argument left out (not
//! sent, not quoted in the question), and refused when the argument is required.

use serde_json::{Map, Value};

use super::RequestError;
use connectorgen_core::render::mcp::mapping::RequestMapping;
use connectorgen_core::schema_walk;

/// At most this many schema problems are named in one answer (a model fixes the first
/// few and calls again; a hundred lines help nobody).
const MAX_PROBLEMS: usize = 5;

/// A quoted value is cut to this many characters in a problem.
const MAX_QUOTE: usize = 120;

/// Checks `args` against `schema` and `mapping`.
pub(crate) fn arguments(
    schema: &Map<String, Value>,
    mapping: &RequestMapping,
    args: &Map<String, Value>,
) -> Result<(), RequestError> {
    for name in args.keys() {
        if !mapping.arguments.iter().any(|a| a.argument == *name) {
            return Err(RequestError::Unknown {
                argument: name.clone(),
                hint: did_you_mean(name, mapping),
            });
        }
    }
    let root = Value::Object(schema.clone());
    if let Some(path) = omitted_sent(&root, mapping, args) {
        return Err(RequestError::Unknown {
            argument: path,
            hint: "this tool does not take it (the manifest's `mcp.omit` leaves it out): call \
                   again without it."
                .to_string(),
        });
    }
    let mut schema = root.clone();
    closed_compositions(&root, &mut schema, 0);
    overlapping_as_any(&mut schema, 0);
    let validator = validator(&schema).map_err(|e| RequestError::Schema(clip(&e)))?;
    let instance = Value::Object(args.clone());
    let problems: Vec<String> = validator
        .iter_errors(&instance)
        .take(MAX_PROBLEMS)
        .map(|e| describe(&e, 0))
        .collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(RequestError::Invalid(problems.join("; ")))
    }
}

/// The first property within the arguments that `mcp.omit` took out of the tool
/// (`mapping.omitted`), as the model writes its path (`card.billing.line2`,
/// `lines[0].tax`): the arguments are walked beside the schemas that describe each value,
/// through local `$ref`s, `allOf`/`anyOf`/`oneOf` branches and array `items`
/// (`schema_walk::reached`), as the generator walked them to omit it. Bounded in depth; deeper values are not looked at.
fn omitted_sent(
    root: &Value,
    mapping: &RequestMapping,
    args: &Map<String, Value>,
) -> Option<String> {
    if mapping.omitted.is_empty() {
        return None;
    }
    let value = Value::Object(args.clone());
    walk_omitted(root, mapping, &value, &[String::new()], "", 0)
}

fn walk_omitted(
    root: &Value,
    mapping: &RequestMapping,
    value: &Value,
    schemas: &[String],
    at: &str,
    depth: usize,
) -> Option<String> {
    if depth > 32 || schemas.is_empty() {
        return None;
    }
    // Not through `items`: an array value is walked item by item, below.
    let holders = schema_walk::reached(root, schemas, false);
    match value {
        Value::Object(object) => {
            for (name, child) in object {
                let path = if at.is_empty() {
                    name.clone()
                } else {
                    format!("{at}.{name}")
                };
                if holders.iter().any(|h| {
                    mapping
                        .omitted
                        .iter()
                        .any(|o| o.schema == *h && o.property == *name)
                }) {
                    return Some(path);
                }
                let escaped = name.replace('~', "~0").replace('/', "~1");
                let next: Vec<String> = holders
                    .iter()
                    .filter(|h| root.pointer(&format!("{h}/properties/{escaped}")).is_some())
                    .map(|h| format!("{h}/properties/{escaped}"))
                    .collect();
                if let Some(found) = walk_omitted(root, mapping, child, &next, &path, depth + 1) {
                    return Some(found);
                }
            }
            None
        }
        Value::Array(items) => {
            let next: Vec<String> = holders
                .iter()
                .filter(|h| root.pointer(&format!("{h}/items")).is_some())
                .map(|h| format!("{h}/items"))
                .collect();
            items.iter().enumerate().find_map(|(i, item)| {
                walk_omitted(root, mapping, item, &next, &format!("{at}[{i}]"), depth + 1)
            })
        }
        _ => None,
    }
}

/// The 2020-12 validator for `schema`, formats asserted, regular expressions bounded.
fn validator(schema: &Value) -> Result<jsonschema::Validator, String> {
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .should_validate_formats(true)
        .should_ignore_unknown_formats(true)
        .with_pattern_options(jsonschema::PatternOptions::fancy_regex().backtrack_limit(100_000))
        .build(schema)
        .map_err(|e| e.to_string())
}

/// Takes out of `args` every top-level `null` whose argument's schema does not allow
/// null: an optional argument sent as `null` is an argument left out. A required one
/// (in the root's `required`) is refused. A `null` one of the argument's schemas
/// accepts (`type: [string, "null"]`) is kept and sent. Nested `null`s are checked as
/// written.
pub(crate) fn absent_nulls(
    schema: &Map<String, Value>,
    args: &mut Map<String, Value>,
) -> Result<(), RequestError> {
    let nulls: Vec<String> = args
        .iter()
        .filter(|(_, v)| v.is_null())
        .map(|(k, _)| k.clone())
        .collect();
    for name in nulls {
        // Where the generator found the argument (`schema_walk`), the root's `properties`
        // or a branch's: every schema that declares it is asked.
        let declared: Vec<&Value> = schema_walk::properties(schema, schema)
            .into_iter()
            .find(|p| p.name == name)
            .map(|p| p.schemas)
            .unwrap_or_default();
        // Declared nowhere: left as it is, for the unknown-argument check to name.
        if declared.is_empty() || declared.iter().any(|s| accepts_null(schema, s)) {
            continue;
        }
        let required = schema
            .get("required")
            .and_then(Value::as_array)
            .is_some_and(|r| r.iter().any(|n| n.as_str() == Some(name.as_str())));
        if required {
            return Err(RequestError::RequiredNull(name));
        }
        args.shift_remove(&name);
    }
    Ok(())
}

/// Whether `declared` (a property's schema in `root`) accepts `null`. Checked with the
/// root's definitions beside it, so a local `$ref` to them resolves; a schema that
/// cannot be built this way is taken to accept it (the full check judges the call).
fn accepts_null(root: &Map<String, Value>, declared: &Value) -> bool {
    let mut alone = match declared {
        Value::Object(map) => map.clone(),
        Value::Bool(b) => return *b,
        _ => return true,
    };
    for keyword in ["$defs", "definitions"] {
        if let Some(defs) = root.get(keyword) {
            alone
                .entry(keyword.to_string())
                .or_insert_with(|| defs.clone());
        }
    }
    validator(&Value::Object(alone)).map_or(true, |v| v.is_valid(&Value::Null))
}

/// `additionalProperties: false` beside `allOf`/`anyOf`/`oneOf` read as its authors mean
/// it: no properties beyond those the schema and its branches name. Taken literally (it
/// sees only its own object's `properties`) it refuses every call: AssemblyAI's
/// `TranscriptParams` is an `allOf` of two objects that each say
/// `additionalProperties: false`, so no transcript request would pass. The keyword
/// becomes `unevaluatedProperties: false` on the object that holds the composition, and
/// is dropped from the branches of an `allOf` (the parent's closes the union; a branch
/// that is a local `$ref` is replaced by a copy of what it names, so the definition stays
/// closed where it is used alone). Bounded in depth; deeper parts are checked as written.
fn closed_compositions(root: &Value, schema: &mut Value, depth: usize) {
    if depth > 64 {
        return;
    }
    match schema {
        Value::Object(map) => {
            let composed = ["allOf", "anyOf", "oneOf"]
                .iter()
                .any(|k| map.get(*k).is_some_and(Value::is_array));
            if composed && map.get("additionalProperties") == Some(&Value::Bool(false)) {
                map.shift_remove("additionalProperties");
                map.insert("unevaluatedProperties".into(), Value::Bool(false));
            }
            if let Some(Value::Array(branches)) = map.get_mut("allOf") {
                for branch in branches.iter_mut() {
                    let named = branch
                        .as_object()
                        .filter(|b| b.len() == 1)
                        .and_then(|b| b.get("$ref"))
                        .and_then(Value::as_str)
                        .and_then(|r| r.strip_prefix('#'))
                        .and_then(|pointer| root.pointer(pointer));
                    if let Some(named) = named {
                        *branch = named.clone();
                    }
                    if let Value::Object(b) = branch
                        && b.get("additionalProperties") == Some(&Value::Bool(false))
                    {
                        b.shift_remove("additionalProperties");
                    }
                }
            }
            for value in map.values_mut() {
                closed_compositions(root, value, depth + 1);
            }
        }
        Value::Array(items) => {
            for item in items {
                closed_compositions(root, item, depth + 1);
            }
        }
        _ => {}
    }
}

/// A `oneOf` whose alternatives overlap (`schema_walk::alternatives_overlap`: "one of
/// these names, or any string") checked as `anyOf`: at least one alternative, not exactly
/// one. Taken literally, every known name fits both and is refused, though the provider
/// takes it (issue 49: a document's own example refused, 16 parameters of one document).
/// The provider still checks its own schema; a value that fits no alternative is still
/// refused here, before anyone is asked. Bounded in depth, as `closed_compositions`.
fn overlapping_as_any(schema: &mut Value, depth: usize) {
    if depth > 64 {
        return;
    }
    match schema {
        Value::Object(map) => {
            let overlap = !map.contains_key("anyOf")
                && map
                    .get("oneOf")
                    .and_then(Value::as_array)
                    .is_some_and(|alternatives| schema_walk::alternatives_overlap(alternatives));
            if overlap && let Some(alternatives) = map.shift_remove("oneOf") {
                map.insert("anyOf".into(), alternatives);
            }
            for value in map.values_mut() {
                overlapping_as_any(value, depth + 1);
            }
        }
        Value::Array(items) => {
            for item in items {
                overlapping_as_any(item, depth + 1);
            }
        }
        _ => {}
    }
}

/// One problem, where it is and what is wrong. A `oneOf`/`anyOf` that no branch fits
/// says what each branch lacks (jsonschema's own message only says none fits, quoting
/// the whole call), so the model can pick one and fix it.
fn describe(error: &jsonschema::ValidationError<'_>, depth: usize) -> String {
    let at = error.instance_path().as_str();
    let argument = if at.is_empty() {
        "arguments".to_string()
    } else {
        pointer_name(at)
    };
    let branches = |context: &Vec<Vec<jsonschema::ValidationError<'static>>>, keyword: &str| {
        let described: Vec<String> = context
            .iter()
            .enumerate()
            .map(|(i, errors)| {
                let inner: Vec<String> = errors
                    .iter()
                    .take(MAX_PROBLEMS)
                    .map(|e| describe(e, depth + 1))
                    .collect();
                format!("alternative {}: {}", i + 1, inner.join(", "))
            })
            .collect();
        format!(
            "`{argument}` fit none of the {} alternatives of its `{keyword}` ({})",
            context.len(),
            described.join("; ")
        )
    };
    match error.kind() {
        jsonschema::error::ValidationErrorKind::OneOfNotValid { context } if depth < 3 => {
            branches(context, "oneOf")
        }
        jsonschema::error::ValidationErrorKind::AnyOf { context } if depth < 3 => {
            branches(context, "anyOf")
        }
        jsonschema::error::ValidationErrorKind::OneOfMultipleValid { .. } => format!(
            "`{argument}` fits more than one alternative of its `oneOf`: send the fields of \
             one of them only"
        ),
        jsonschema::error::ValidationErrorKind::Enum { options } => {
            // Strings compared and named as the model writes them, without JSON quotes.
            let text = |v: &Value| v.as_str().map_or_else(|| v.to_string(), str::to_string);
            let allowed: Vec<String> = options
                .as_array()
                .map(|o| o.iter().map(text).collect())
                .unwrap_or_default();
            let given = text(error.instance());
            let hint =
                connectorgen_core::diagnostics::suggest(&given, allowed.iter().map(String::as_str));
            format!(
                "`{argument}`: {} is not one of its allowed values; {hint}",
                clip(&error.instance().to_string())
            )
        }
        _ => format!("`{argument}`: {}", clip(&error.to_string())),
    }
}

/// `/filter/a/0` → `filter.a[0]`: the argument path as a model writes it.
fn pointer_name(pointer: &str) -> String {
    let mut out = String::new();
    for (i, segment) in pointer.trim_start_matches('/').split('/').enumerate() {
        let segment = segment.replace("~1", "/").replace("~0", "~");
        if i > 0 && segment.bytes().all(|b| b.is_ascii_digit()) && !segment.is_empty() {
            out.push_str(&format!("[{segment}]"));
        } else {
            if i > 0 {
                out.push('.');
            }
            out.push_str(&segment);
        }
    }
    out
}

fn clip(text: &str) -> String {
    if text.chars().count() <= MAX_QUOTE {
        return text.to_string();
    }
    let cut: String = text.chars().take(MAX_QUOTE).collect();
    format!("{cut}…")
}

/// The closest argument name, or the list of them.
fn did_you_mean(name: &str, mapping: &RequestMapping) -> String {
    let names: Vec<&str> = mapping
        .arguments
        .iter()
        .filter(|a| {
            mapping
                .idempotency
                .as_ref()
                .is_none_or(|i| i.argument != a.argument)
        })
        .map(|a| a.argument.as_str())
        .collect();
    let lower = name.to_ascii_lowercase();
    let best = names
        .iter()
        .map(|n| (strsim::jaro_winkler(&lower, &n.to_ascii_lowercase()), *n))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0));
    match (best, names.is_empty()) {
        (Some((_, n)), _) => format!("did you mean `{n}`?"),
        (None, true) => "this tool takes no arguments".to_string(),
        (None, false) => format!(
            "this tool takes {}",
            names
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}
