//! The JSON Schema (draft 2020-12) of the manifest, for editors and other tools.
//!
//! Takes: nothing but the raw types of `manifest.rs`, which derive `JsonSchema`, and the
//! name lists the validator itself checks against (`Method::ALL`, `Lint::ALL`, …).
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

use std::borrow::Cow;

use schemars::generate::SchemaSettings;
use schemars::transform::{RecursiveTransform, Transform};
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde_json::Value;

use crate::lint::{Level, Lint};
use crate::manifest::{RawLintSetting, RawManifest};
use crate::model::{Idempotency, Method, Returns, SpendKind, Target};

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

/// A string that is one of `names`.
fn string_enum<'a>(names: impl IntoIterator<Item = &'a str>) -> Schema {
    let names: Vec<&str> = names.into_iter().collect();
    json_schema!({ "type": "string", "enum": names })
}

/// A marker type whose schema is a string naming one of a fixed list, for
/// `#[schemars(with = "…")]` on a raw string field.
macro_rules! names {
    ($(#[$doc:meta])* $marker:ident => $names:expr) => {
        $(#[$doc])*
        pub struct $marker;

        impl JsonSchema for $marker {
            fn schema_name() -> Cow<'static, str> {
                stringify!($marker).into()
            }

            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                string_enum($names)
            }
        }
    };
}

names!(
    /// An HTTP method, as `validate.rs` reads it. It accepts any case; the schema
    /// offers the lower- and upper-case spellings.
    MethodName => Method::ALL
        .iter()
        .map(|(name, _)| *name)
        .chain(Method::ALL.iter().map(|(_, m)| m.upper()))
);
names!(
    /// What a paid operation spends.
    SpendKindName => SpendKind::ALL.iter().map(|(name, _)| *name)
);
names!(
    /// What an async operation hands back.
    ReturnsName => Returns::ALL.iter().map(|(name, _)| *name)
);
names!(
    /// How an operation treats the `Idempotency-Key` header.
    IdempotencyName => Idempotency::ALL.iter().map(|(name, _)| *name)
);
names!(
    /// An agent platform to write for.
    TargetName => Target::ALL.iter().map(|(name, _)| *name)
);
names!(
    /// How an inline manifest's agent sends its credential.
    AuthSchemeName => crate::model::AUTH_SCHEMES
);
names!(
    /// Where an inline manifest's API key goes.
    ApiKeyInName => crate::model::API_KEY_LOCATIONS
);
names!(
    /// A lint id.
    LintId => Lint::ALL.iter().map(|lint| lint.id())
);
names!(
    /// A lint level.
    LintLevel => Level::ALL.iter().map(|(name, _)| *name)
);

/// `lint:` — one optional key per lint id, whose value is a `RawLintSetting`; only the
/// lints that take `max` accept it.
pub struct LintTable;

impl JsonSchema for LintTable {
    fn schema_name() -> Cow<'static, str> {
        "LintTable".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let mut properties = serde_json::Map::new();
        for lint in Lint::ALL {
            let mut setting = generator.subschema_for::<RawLintSetting>();
            if lint != Lint::DescriptionTooLong {
                forbid_max(&mut setting);
            }
            let description = format!(
                "{} Default: {}.",
                lint.summary(),
                lint.default_level().as_str()
            );
            setting.insert("description".into(), description.into());
            properties.insert(lint.id().into(), setting.into());
        }
        json_schema!({
            "type": "object",
            "properties": properties,
            "additionalProperties": false,
        })
    }
}

/// Removes `max` from the mapping form of a lint setting, whose other keys are closed
/// (`additionalProperties: false`), so writing `max` there is an error.
fn forbid_max(setting: &mut Schema) {
    let Some(Value::Array(branches)) = setting.get_mut("anyOf") else {
        return;
    };
    for branch in branches {
        if let Some(properties) = branch.get_mut("properties").and_then(Value::as_object_mut) {
            properties.remove("max");
        }
    }
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
