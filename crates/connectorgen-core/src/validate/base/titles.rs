//! Titles of the base document that client generators would turn into one class name,
//! made distinct in the outputs.
//!
//! Takes: the kept document's top level and the exposed operations, in OpenAPI 3.1
//! (after `upgrade.rs` or `v32.rs` and the other repairs), and the base for spans.
//! Returns (through `Validator`): nothing; within each scope where generators name
//! classes side by side — the component schemas, the schemas of one operation, the
//! schemas one schema holds (its properties and `additionalProperties`, with their
//! `items` and `anyOf`/`oneOf` alternatives, and those of its inline `allOf` parts) —
//! every schema whose title folds (letters and digits, any case) to the title of an
//! earlier one in document order gets its place added (`param` → `param (alipay)`),
//! with one `duplicate-title` warning per title and scope naming the first two places.
//! openapi-python-client names a titled schema after its title (prefixed by its
//! parent's class), so two of one scope collide and it drops the operation.
//! Must never: change anything but a `title` (a title is an annotation: no request
//! changes), rename a title that is unique in its scope, follow a `$ref` (what it points
//! at is named in its own scope), or write a title with a `/` (generators keep only what
//! follows the last one).

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use crate::base::Base;
use crate::base::places::{self, Place};
use crate::diagnostics::{Diagnostic, Finding};
use crate::model::{Operation, escape, unescape};
use crate::subschemas::{self, Holds};
use crate::validate::context::Validator;

/// One titled schema of a scope: where it is (a pointer into the base) and its place
/// relative to the scope, as words (`alipay`, `mandate_data anyOf 1`).
struct Titled {
    pointer: String,
    label: String,
}

/// Makes the titles of each scope distinct, in the document and the operations.
pub(in crate::validate) fn repair_duplicate_titles(
    v: &mut Validator,
    base: &Base,
    root: &mut Map<String, Value>,
    operations: &mut [Operation],
) {
    let mut renames = Vec::new();
    let document = Value::Object(std::mem::take(root));
    let top = places::document(&document);
    // The component schemas are one scope; every schema is the scope of what it holds.
    let components: Vec<Titled> = schema_places(&top)
        .filter_map(|p| {
            let name = p.pointer.strip_prefix("/components/schemas/")?;
            let titled = document
                .pointer(&format!("{}/title", p.pointer))
                .is_some_and(Value::is_string);
            (titled && !name.contains('/')).then(|| Titled {
                pointer: p.pointer.clone(),
                label: unescape(name),
            })
        })
        .collect();
    renames.extend(distinct(&document, components));
    for place in schema_places(&top) {
        nested(&document, &place.pointer, false, &mut renames);
    }
    let mut document = document;
    apply(&mut document, "", &renames, v, base);
    if let Value::Object(map) = document {
        *root = map;
    }

    for op in operations.iter_mut() {
        let at = op.pointer();
        let mut renames = Vec::new();
        let value = Value::Object(std::mem::take(&mut op.http));
        let found = places::operation(&value, "");
        // The schemas an operation holds directly share the operation's name.
        let mut own = Vec::new();
        for place in schema_places(&found) {
            named(&value, &place.pointer, &words(&place.pointer), &mut own);
        }
        renames.extend(distinct(&value, own));
        for place in schema_places(&found) {
            nested(&value, &place.pointer, false, &mut renames);
        }
        let mut value = value;
        apply(&mut value, &at, &renames, v, base);
        if let Value::Object(map) = value {
            op.http = map;
        }
    }
}

/// The outermost Schema Objects of `found` that are not references.
fn schema_places(found: &[Place]) -> impl Iterator<Item = &Place> {
    found
        .iter()
        .filter(|p| p.kind == places::Kind::Schema && !p.reference)
}

/// A rename: the title at `pointer` (relative to the object it was found in) becomes
/// `to`; `first` is the pointer of the schema that keeps the title, `count` how many of
/// the scope share it (set on the first rename of a group only, for the warning).
struct Rename {
    pointer: String,
    to: String,
    first: String,
    count: Option<usize>,
}

/// The pointer of every titled schema under `pointer` and the scopes inside it: each
/// schema's held schemas are one scope.
fn nested(value: &Value, pointer: &str, part: bool, renames: &mut Vec<Rename>) {
    let Some(schema) = value.pointer(pointer) else {
        return;
    };
    // An inline `allOf` part is merged into its schema: what it holds is in that scope.
    if !part {
        let mut held = Vec::new();
        holds(value, pointer, "", &mut held);
        renames.extend(distinct(value, held));
    }
    for (child, part) in subschemas(schema, pointer) {
        nested(value, &child, part, renames);
    }
}

/// The schemas a schema holds, named by the generators with the schema as parent: its
/// properties and `additionalProperties` (with their alternatives and items), and those
/// of its inline `allOf` parts (merged into it).
fn holds(value: &Value, pointer: &str, prefix: &str, out: &mut Vec<Titled>) {
    let Some(Value::Object(schema)) = value.pointer(pointer) else {
        return;
    };
    if schema.contains_key("$ref") {
        return;
    }
    if let Some(Value::Object(properties)) = schema.get("properties") {
        for name in properties.keys() {
            let here = format!("{pointer}/properties/{}", escape(name));
            named(value, &here, &format!("{prefix}{name}"), out);
        }
    }
    if schema
        .get("additionalProperties")
        .is_some_and(Value::is_object)
    {
        let here = format!("{pointer}/additionalProperties");
        named(value, &here, &format!("{prefix}additionalProperties"), out);
    }
    if let Some(Value::Array(parts)) = schema.get("allOf") {
        for i in 0..parts.len() {
            holds(
                value,
                &format!("{pointer}/allOf/{i}"),
                &format!("{prefix}allOf {i} "),
                out,
            );
        }
    }
}

/// The schema at `pointer` (if titled) and the alternatives and items generators name
/// beside it.
fn named(value: &Value, pointer: &str, label: &str, out: &mut Vec<Titled>) {
    let Some(Value::Object(schema)) = value.pointer(pointer) else {
        return;
    };
    if schema.contains_key("$ref") {
        return;
    }
    if schema.get("title").is_some_and(Value::is_string) {
        out.push(Titled {
            pointer: pointer.to_string(),
            label: label.to_string(),
        });
    }
    for key in ["anyOf", "oneOf", "prefixItems"] {
        if let Some(Value::Array(list)) = schema.get(key) {
            for i in 0..list.len() {
                named(
                    value,
                    &format!("{pointer}/{key}/{i}"),
                    &format!("{label} {key} {i}"),
                    out,
                );
            }
        }
    }
    if schema.get("items").is_some_and(Value::is_object) {
        named(
            value,
            &format!("{pointer}/items"),
            &format!("{label} items"),
            out,
        );
    }
}

/// The pointers of the schemas directly inside a schema, each with whether it is an
/// `allOf` part.
fn subschemas(schema: &Value, pointer: &str) -> Vec<(String, bool)> {
    let Value::Object(map) = schema else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (key, child) in map {
        match (subschemas::holds(key, child), child) {
            (Some(Holds::Schema), _) => out.push((format!("{pointer}/{key}"), false)),
            (Some(Holds::Map), Value::Object(entries)) => out.extend(
                entries
                    .keys()
                    .map(|name| (format!("{pointer}/{key}/{}", escape(name)), false)),
            ),
            (Some(Holds::List), Value::Array(list)) => {
                let part = key == "allOf";
                out.extend((0..list.len()).map(|i| (format!("{pointer}/{key}/{i}"), part)));
            }
            _ => {}
        }
    }
    out
}

/// A pointer inside an operation as words, for a title: its segments without the
/// structural ones (`/requestBody/content/application~1json/schema` →
/// `requestBody application json`).
fn words(pointer: &str) -> String {
    pointer
        .split('/')
        .filter(|s| !s.is_empty() && !matches!(*s, "content" | "schema" | "properties"))
        .map(|s| unescape(s).replace('/', " "))
        .collect::<Vec<_>>()
        .join(" ")
}

/// How generators compare titles: letters and digits only, any case.
fn fold(title: &str) -> String {
    title
        .chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// The renames that make the titles of one scope distinct: each title that folds like
/// an earlier one gets its label added (and a number, if that is taken too).
fn distinct(value: &Value, scope: Vec<Titled>) -> Vec<Rename> {
    let title = |t: &Titled| {
        value
            .pointer(&format!("{}/title", t.pointer))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let mut taken: HashSet<String> = scope.iter().map(|t| fold(&title(t))).collect();
    let mut first: HashMap<String, (String, usize)> = HashMap::new();
    for t in &scope {
        first
            .entry(fold(&title(t)))
            .and_modify(|(_, n)| *n += 1)
            .or_insert((t.pointer.clone(), 1));
    }
    let mut renames = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    for t in &scope {
        let own = title(t);
        let key = fold(&own);
        if seen.insert(key.clone()) {
            continue;
        }
        let (keeper, count) = &first[&key];
        let label = t.label.replace('/', " ");
        let mut to = format!("{own} ({label})");
        let mut n = 2;
        while taken.contains(&fold(&to)) {
            to = format!("{own} ({label} {n})");
            n += 1;
        }
        taken.insert(fold(&to));
        let announce = !renames.iter().any(|r: &Rename| r.first == *keeper);
        renames.push(Rename {
            pointer: t.pointer.clone(),
            to,
            first: keeper.clone(),
            count: announce.then_some(*count),
        });
    }
    renames
}

/// Writes the renames into `value` (found at `at` in the base) and reports each group.
fn apply(value: &mut Value, at: &str, renames: &[Rename], v: &mut Validator, base: &Base) {
    for r in renames {
        let Some(Value::Object(schema)) = value.pointer_mut(&r.pointer) else {
            continue;
        };
        let old = schema
            .insert("title".into(), Value::String(r.to.clone()))
            .and_then(|t| t.as_str().map(str::to_string))
            .unwrap_or_default();
        if let Some(count) = r.count {
            let pointer = format!("{at}{}", r.pointer);
            let d = Diagnostic::DuplicateTitle {
                title: old,
                count,
                first: format!("{at}{}", r.first),
                second: pointer.clone(),
                renamed: r.to.clone(),
                span: base.span(&format!("{pointer}/title")),
            };
            v.findings.add(Finding::warning(d).in_base());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The renames of one schema and the scopes inside it, as (pointer, new title).
    fn renames_in(schema: Value) -> Vec<(String, String)> {
        let mut renames = Vec::new();
        nested(&schema, "", false, &mut renames);
        renames.into_iter().map(|r| (r.pointer, r.to)).collect()
    }

    #[test]
    fn only_titles_that_collide_in_one_scope_change() {
        let schema = json!({
            "type": "object",
            "properties": {
                "first": { "title": "param", "type": "object" },
                "second": { "title": "Param", "type": "object" },
                "taken": { "title": "param (second)", "type": "string" },
                "list": { "type": "array", "items": { "title": "P-A-R-A-M" } },
                "either": { "oneOf": [{ "title": "param" }, { "$ref": "#/components/schemas/X" }] },
                "nested": { "type": "object", "properties": { "inner": { "title": "param" } } },
                "unique": { "title": "only once" },
                "a/b": { "title": "param" }
            },
            "allOf": [{ "properties": { "merged": { "title": "param" } } }]
        });
        assert_eq!(
            renames_in(schema),
            [
                ("/properties/second", "Param (second 2)"),
                ("/properties/list/items", "P-A-R-A-M (list items)"),
                ("/properties/either/oneOf/0", "param (either oneOf 0)"),
                ("/properties/a~1b", "param (a b)"),
                ("/allOf/0/properties/merged", "param (allOf 0 merged)"),
            ]
            .map(|(p, t)| (p.to_string(), t.to_string()))
        );
    }

    #[test]
    fn a_scope_without_duplicates_is_left_alone() {
        let schema = json!({
            "properties": {
                "a": { "title": "param", "properties": { "b": { "title": "param" } } },
                "c": { "title": "other", "allOf": [{ "properties": { "d": { "title": "param" } } }] }
            }
        });
        assert_eq!(renames_in(schema), Vec::<(String, String)>::new());
    }
}
