//! A tool's path, query, header and cookie parameters.
//!
//! Takes: the connector and the operation (its own parameters, its path item's shared
//! ones). Returns: into `Gathered`, one input per parameter the model fills in, in the
//! document's order (the shared ones first), a `fixed:` input for each the manifest
//! fixes, and the retry key's argument when a parameter is the header key.
//! Must never: make an argument of a header OpenAPI ignores as a parameter (`Accept`,
//! `Content-Type`, `Authorization`) or of a parameter the credential travels in.

use std::collections::HashSet;

use serde_json::{Value, json};

use super::super::document::{Defs, resolved};
use super::super::mapping::Location;
use super::{Gathered, Input, credential, retry_key};
use crate::model::{Connector, Document, Operation};

/// Each parameter of the operation, as an argument, a `fixed:` input or the retry key.
pub(super) fn gather(connector: &Connector, defs: &mut Defs, gathered: &mut Gathered<'_>) {
    let doc = &connector.document;
    let op = gathered.op;
    let credentials = credential::parameters(connector);
    for p in parameters(doc, op) {
        let name = p.get("name").and_then(Value::as_str).unwrap_or_default();
        let location = p.get("in").and_then(Value::as_str).unwrap_or_default();
        let Some(place) = Location::of_parameter(location) else {
            continue;
        };
        // OpenAPI ignores these headers as parameters, and the credential is the
        // connection's, never an argument the model would ask the person for.
        let ignored = location == "header"
            && ["Accept", "Content-Type", "Authorization"]
                .iter()
                .any(|h| h.eq_ignore_ascii_case(name));
        let credential = credentials.iter().any(|(n, l)| {
            *l == location && (*n == name || (*l == "header" && n.eq_ignore_ascii_case(name)))
        });
        if ignored || credential {
            continue;
        }
        let (style, explode) = style_of(p, location);
        if gathered.fixed(place, name, Some(style.clone()), Some(explode)) {
            continue;
        }
        let required =
            location == "path" || p.get("required").and_then(Value::as_bool) == Some(true);
        if let Some(input) = retry_key::argument(op, location, name, required) {
            gathered.retry_key = Some(input);
            continue;
        }
        let mut input = Input::new(
            place,
            Some(name.to_string()),
            match place {
                Location::Path => "a path parameter",
                Location::Query => "a query parameter",
                Location::Header => "a header parameter",
                _ => "a cookie parameter",
            },
            Value::Null,
            required,
        );
        described(doc, defs, p, &mut input);
        if input.content_type.is_none() {
            input.style = Some(style);
            input.explode = Some(explode);
            input.allow_reserved = location == "query"
                && p.get("allowReserved").and_then(Value::as_bool) == Some(true);
        }
        gathered.inputs.push(input);
    }
}

/// The parameter's schema (its own, else its one `content` entry's, whose media type
/// it is then sent as), with the parameter's description when the schema has none.
fn described(doc: &Document, defs: &mut Defs, p: &Value, input: &mut Input) {
    let content = p
        .get("content")
        .and_then(Value::as_object)
        .and_then(|c| c.iter().next());
    let schema = p
        .get("schema")
        .or_else(|| content.and_then(|(_, m)| m.get("schema")))
        .cloned()
        .unwrap_or_else(|| json!({}));
    let mut schema = defs.own(doc, schema);
    if let (Some(d), Value::Object(map)) = (p.get("description"), &mut schema) {
        map.entry("description").or_insert_with(|| d.clone());
    }
    input.schema = schema;
    if let (None, Some((media, _))) = (p.get("schema"), content) {
        input.content_type = Some(media.clone());
    }
}

/// The parameters that apply to an operation: the path item's shared ones, replaced by
/// the operation's own of the same name and location.
pub(super) fn parameters<'a>(doc: &'a Document, op: &'a Operation) -> Vec<&'a Value> {
    let list = |v: Option<&'a Value>| -> Vec<&'a Value> {
        v.and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|p| resolved(doc, p))
            .collect()
    };
    let shared = list(
        doc.path_item(&op.path)
            .and_then(|item| item.get("parameters")),
    );
    merge_parameters(shared, list(op.http.get("parameters")))
}

/// `shared` without those `own` replaces (same `name` and `in`), then `own`: one pass
/// over each list (a set of the own keys), so 12,000 of each take no longer than reading
/// them.
fn merge_parameters<'a>(shared: Vec<&'a Value>, own: Vec<&'a Value>) -> Vec<&'a Value> {
    fn key(p: &Value) -> (Option<&Value>, Option<&Value>) {
        (p.get("name"), p.get("in"))
    }
    let own_keys: HashSet<(Option<&str>, Option<&str>)> = own
        .iter()
        .map(|p| {
            let (n, l) = key(p);
            (n.and_then(Value::as_str), l.and_then(Value::as_str))
        })
        .collect();
    let mut out: Vec<&Value> = shared
        .into_iter()
        .filter(|p| {
            let (n, l) = key(p);
            !own_keys.contains(&(n.and_then(Value::as_str), l.and_then(Value::as_str)))
        })
        .collect();
    out.extend(own);
    out
}

/// A parameter's style and explode, OpenAPI's defaults filled in.
fn style_of(p: &Value, location: &str) -> (String, bool) {
    let style = p.get("style").and_then(Value::as_str).map_or_else(
        || match location {
            "query" | "cookie" => "form".to_string(),
            _ => "simple".to_string(),
        },
        str::to_string,
    );
    let explode = p
        .get("explode")
        .and_then(Value::as_bool)
        .unwrap_or(style == "form");
    (style, explode)
}
