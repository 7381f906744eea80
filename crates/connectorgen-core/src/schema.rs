//! The JSON Schema (draft 2020-12) of the manifest, for editors and other tools.
//!
//! Takes: nothing but the raw types of `manifest/`, which derive `JsonSchema` (their
//! fixed lists of names come from `manifest/names.rs`, built from the lists the validator
//! itself checks against: `Method::names()`, `Rule::lints()`, …).
//! Returns: `connector.schema.json` as pretty JSON with one trailing newline, the same
//! bytes on every run. Because it is generated from the types that parse the manifest
//! and the constants that validate it, a key or a name cannot be added to one and
//! forgotten in the other.
//! Must never: be used to accept or reject a manifest — `manifest.rs` and `validate.rs`
//! decide that, with spans and help. The schema describes what to write: it rejects
//! most shape mistakes (unknown, missing or mistyped keys, unknown names, a wrong
//! version) but not the rules that need more than one value (poll targets, duplicate
//! ids or routes, URL and path syntax, empty text).
//!
//! Every subschema is inlined (no `$ref`): editors that only speak draft 7
//! (yaml-language-server) then read it the same way, since `$ref` siblings are
//! ignored there.

use schemars::Schema;
use schemars::generate::SchemaSettings;
use schemars::transform::{RecursiveTransform, Transform};
use serde_json::Value;

use crate::manifest::RawManifest;

/// The manifest's JSON Schema, as pretty JSON with one trailing newline.
pub fn manifest_schema() -> String {
    let mut schema = SchemaSettings::draft2020_12()
        .with(|s| s.inline_subschemas = true)
        .into_generator()
        .into_root_schema_for::<RawManifest>();
    RecursiveTransform(tidy).transform(&mut schema);
    let mut text = serde_json::to_string_pretty(&schema).expect("a schema is plain JSON");
    text.push('\n');
    text
}

/// Applied to every subschema once the schema is built:
/// - `Option` in the raw types means "may be left out" (and, for required keys, "may be
///   missing, so that validation can report it with the other problems"). It never
///   invites `null`, so `null` is taken out of the types, enums and `anyOf`s that
///   `Option` put it in.
/// - Doc comments wrap at 90 columns; a description is one line per paragraph.
fn tidy(schema: &mut Schema) {
    let Some(object) = schema.as_object_mut() else {
        return;
    };
    if let Some(Value::Array(types)) = object.get_mut("type") {
        types.retain(|t| t != "null");
        if let [only] = types.as_slice() {
            let only = only.clone();
            object.insert("type".into(), only);
        }
    }
    if let Some(Value::Array(values)) = object.get_mut("enum") {
        values.retain(|v| !v.is_null());
    }
    if let Some(Value::Array(branches)) = object.get_mut("anyOf") {
        branches.retain(|b| b.get("type").and_then(Value::as_str) != Some("null"));
    }
    if let Some(Value::String(text)) = object.get_mut("description") {
        *text = unwrap_lines(text);
    }
}

/// Joins the lines of each paragraph with spaces; paragraphs stay apart.
fn unwrap_lines(text: &str) -> String {
    text.split("\n\n")
        .map(|paragraph| {
            paragraph
                .lines()
                .map(str::trim)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}
