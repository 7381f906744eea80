//! The manifest's fixed lists of names, as JSON Schema: marker types for
//! `#[schemars(with = …)]` on the raw fields that hold a name (a method, a target, a lint
//! id…), built from the very lists validation checks against, so the two cannot differ.
//!
//! Takes: the model's name lists. Returns: `JsonSchema` implementations. Must never:
//! hold a list of its own.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde_json::Value;

use super::RawLintSetting;
use crate::model::{
    Idempotency, Level, Lint, McpOutput, Method, Names as _, Payer, Returns, SpendKind, Target,
};

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
    /// An HTTP method, as `validate/` reads it. It accepts any case; the schema
    /// offers the lower- and upper-case spellings.
    MethodName => Method::names()
        .chain(<Method as strum::VariantArray>::VARIANTS.iter().map(|m| m.upper()))
);
names!(
    /// What a paid operation spends.
    SpendKindName => SpendKind::names()
);
names!(
    /// Whose money a paid operation moves.
    PayerName => Payer::names()
);
/// `spends.amount:` — a number, or an input of the call times a scale.
pub(crate) struct AmountSetting;

impl JsonSchema for AmountSetting {
    fn schema_name() -> Cow<'static, str> {
        "AmountSetting".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "anyOf": [
                { "type": "number", "exclusiveMinimum": 0 },
                {
                    "type": "object",
                    "properties": {
                        "argument": {
                            "description": "The input (a top-level body property, a query or header parameter, by its HTTP name) whose number the amount is computed from.",
                            "type": "string",
                            "minLength": 1,
                            "examples": ["amount_cents"]
                        },
                        "scale": {
                            "description": "What one unit of the input costs (default 1): `0.01` for cents, a rate per second.",
                            "type": "number",
                            "exclusiveMinimum": 0,
                            "default": 1,
                            "examples": [0.01]
                        }
                    },
                    "required": ["argument"],
                    "additionalProperties": false
                }
            ]
        })
    }
}

/// One entry of `budgets:` — `UNIT=LIMIT/WINDOW`, as `serve --budget` takes it.
pub(crate) struct BudgetText;

impl JsonSchema for BudgetText {
    fn schema_name() -> Cow<'static, str> {
        "BudgetText".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "string",
            "pattern": "^ *(credits|money|calls) *= *[0-9]*\\.?[0-9]+ */ *(hour|day|week|month) *$",
            "examples": ["credits=20/day"]
        })
    }
}

/// `confirm:` — a flag, or the condition under which a call cannot be undone.
pub(crate) struct ConfirmSetting;

impl JsonSchema for ConfirmSetting {
    fn schema_name() -> Cow<'static, str> {
        "ConfirmSetting".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "anyOf": [
                { "type": "boolean" },
                {
                    "type": "object",
                    "properties": {
                        "when": {
                            "description": "Only some calls cannot be undone: the condition, in words the model can check against the call it is about to make (\"PERMANENT when type is rebuild or restore: …\"). The person's yes is still asked before every call.",
                            "type": "string",
                            "minLength": 1,
                            "examples": ["type is rebuild or restore"]
                        }
                    },
                    "required": ["when"],
                    "additionalProperties": false
                }
            ]
        })
    }
}
names!(
    /// What an async operation hands back.
    ReturnsName => Returns::names()
);
names!(
    /// How much of the answer's schema an MCP tool declares.
    McpOutputName => McpOutput::names()
);
/// `idempotency:` — a short form, or a mapping naming the provider's key.
pub(crate) struct IdempotencySetting;

impl JsonSchema for IdempotencySetting {
    fn schema_name() -> Cow<'static, str> {
        "IdempotencySetting".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let one_of: Vec<Value> = Idempotency::MAPPING_KEYS
            .iter()
            .map(|key| serde_json::json!({ "required": [key] }))
            .collect();
        let described = [
            (
                "The header that carries the key, as the provider spells it.",
                "Acme-Request-Id",
            ),
            ("The query parameter that carries the key.", "request_id"),
            (
                "The top-level property of the JSON or form body that carries the key.",
                "idempotency_key",
            ),
        ];
        let mut properties = serde_json::Map::new();
        // As `model::key_name_problem` (which also refuses invisible characters): a header
        // is RFC 7230 token characters without the backtick; the others, no whitespace or
        // backtick.
        let patterns = ["^[A-Za-z0-9!#$%&'*+.^_|~-]+$", "^[^\\s`]+$", "^[^\\s`]+$"];
        for ((key, (description, example)), pattern) in Idempotency::MAPPING_KEYS
            .iter()
            .zip(described)
            .zip(patterns)
        {
            properties.insert(
                key.to_string(),
                serde_json::json!({
                    "description": description,
                    "type": "string",
                    "minLength": 1,
                    "pattern": pattern,
                    "examples": [example],
                }),
            );
        }
        properties.insert(
            "required".into(),
            serde_json::json!({
                "description": "Whether the provider refuses a call without the key.",
                "type": "boolean",
                "default": false,
                "examples": [true],
            }),
        );
        properties.insert(
            "duplicate".into(),
            serde_json::json!({
                "description": "How the provider answers a request whose key it has seen (its way of saying the first one went through): the status, text its body contains, or both; and `readWith`, a free read that finds the request by its key. `serve` reads that answer to a retry as \"the first one exists\" and fetches it with `readWith`.",
                "type": "object",
                "properties": {
                    "status": {
                        "description": "The HTTP status of that answer.",
                        "type": "integer",
                        "minimum": 400,
                        "maximum": 599,
                        "examples": [422, 409],
                    },
                    "bodyContains": {
                        "description": "Text the answer's body contains (compared without regard to case).",
                        "type": "string",
                        "minLength": 1,
                        "examples": ["must be unique"],
                    },
                    "readWith": {
                        "description": "A free read (a get, or read: true) taking the key in a query or path parameter of the key's own name.",
                        "type": "string",
                        "minLength": 1,
                        "examples": ["getOrderByClientOrderId"],
                    },
                },
                "additionalProperties": false,
                "anyOf": [{ "required": ["status"] }, { "required": ["bodyContains"] }],
                "examples": [{ "status": 422, "bodyContains": "must be unique", "readWith": "getOrderByClientOrderId" }],
            }),
        );
        json_schema!({
            "anyOf": [
                string_enum(Idempotency::SHORT_FORMS),
                {
                    "type": "object",
                    "properties": properties,
                    "additionalProperties": false,
                    "oneOf": one_of,
                }
            ]
        })
    }
}
names!(
    /// An agent platform to write for.
    TargetName => Target::names()
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
    /// How a person connects their own credential (`auth.perPerson.connect`).
    PerPersonConnectName => crate::model::PER_PERSON_CONNECT
);
names!(
    /// Where one part of a credential goes.
    CredentialPartInName => crate::model::CREDENTIAL_PART_LOCATIONS
);
names!(
    /// A lint id.
    LintId => Lint::lints().map(Lint::code)
);
names!(
    /// A lint level.
    LintLevel => Level::names()
);

/// `lint:` — one optional key per lint id, whose value is a `RawLintSetting`; only the
/// lints that take `max` accept it.
pub(crate) struct LintTable;

impl JsonSchema for LintTable {
    fn schema_name() -> Cow<'static, str> {
        "LintTable".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let mut properties = serde_json::Map::new();
        for lint in Lint::lints() {
            let mut setting = generator.subschema_for::<RawLintSetting>();
            match lint {
                Lint::DescriptionTooLong => {}
                Lint::McpToolTooLarge => {
                    default_max(&mut setting, crate::model::DEFAULT_MCP_TOOL_MAX);
                }
                _ => forbid_max(&mut setting),
            }
            let description = format!(
                "{} Default: {}.",
                lint.summary(),
                lint.lint_level().unwrap_or(Level::Allow).as_str()
            );
            setting.insert("description".into(), description.into());
            properties.insert(lint.code().into(), setting.into());
        }
        json_schema!({
            "type": "object",
            "properties": properties,
            "additionalProperties": false,
        })
    }
}

/// Sets the default of `max` in the mapping form of a lint setting.
fn default_max(setting: &mut Schema, default: usize) {
    let Some(Value::Array(branches)) = setting.get_mut("anyOf") else {
        return;
    };
    for branch in branches {
        if let Some(max) = branch
            .pointer_mut("/properties/max")
            .and_then(Value::as_object_mut)
        {
            max.insert("default".into(), default.into());
            max.insert("examples".into(), serde_json::json!([default]));
        }
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
