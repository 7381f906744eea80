//! The retry key among a tool's arguments: the one place that knows the idempotency
//! mechanism.
//!
//! Takes: the operation (its idempotency key, `Operation::key`) and one input. Returns:
//! the argument connectorgen adds for a header key (a client-safe name,
//! `key_argument_name`, and a string schema), and the mapping's `IdempotencyMapping` for
//! the argument that carries the key, header or the provider's own parameter or field.
//! Must never: name a key argument the model sets for a header key other than the one
//! `key_argument_name` gives (docs and the tool's description quote that name).

use serde_json::json;

use super::super::mapping::{IdempotencyMapping, Location};
use super::super::{key_argument_description, key_argument_name};
use super::Input;
use crate::model::{KeyLocation, Operation};

/// Whether the parameter `(location, name)` is the operation's retry key: the argument
/// it becomes, its schema and whether it is required.
pub(super) fn argument(
    op: &Operation,
    location: &str,
    name: &str,
    required: bool,
) -> Option<Input> {
    let key = op.key().filter(|k| {
        k.location == KeyLocation::Header
            && location == "header"
            && k.name.eq_ignore_ascii_case(name)
    })?;
    let mut input = Input::new(
        Location::Header,
        Some(name.to_string()),
        "the idempotency key",
        json!({
            "type": "string",
            "minLength": 1,
            "maxLength": 255,
            "description": key_argument_description(key)
        }),
        required || key.required,
    );
    input.style = Some("simple".into());
    input.explode = Some(false);
    input.chosen = Some(key_argument_name(key));
    input.idempotency = true;
    Some(input)
}

/// The mapping's retry key when `input`, named `argument`, carries it: the header key's
/// argument, or one that keeps its own schema because the provider names it as its key.
pub(super) fn mapping(op: &Operation, input: &Input, argument: &str) -> Option<IdempotencyMapping> {
    (input.idempotency || is_own_key(op, input.location, input.http.as_deref())).then(|| {
        IdempotencyMapping {
            argument: argument.to_string(),
            location: input.location,
            name: input.http.clone().unwrap_or_default(),
            required: input.required,
        }
    })
}

/// Whether an argument that keeps its own schema is the operation's retry key: a query
/// parameter or a top-level body property the provider names as its key.
fn is_own_key(op: &Operation, location: Location, http: Option<&str>) -> bool {
    let Some(key) = op.key() else { return false };
    let place = match key.location {
        KeyLocation::Query => Location::Query,
        KeyLocation::Body => Location::Body,
        KeyLocation::Header => return false,
    };
    location == place && http == Some(key.name.as_str())
}
