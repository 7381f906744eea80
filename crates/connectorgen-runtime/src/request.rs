//! The request builder: one tool call (or probe step) → the exact HTTP request, by the
//! mapping `mcp-tools.json` records under `_meta` (`render::mcp::mapping`), and nothing
//! else — `serve` and `probe` both send what this returns.
//!
//! Takes: a tool's `RequestMapping`, the call's arguments, where to send it (the first
//! server, or `--base-url`), the credential, the retry key the server chose, and a way
//! to read the environment (for `fixed:` inputs). Returns: an `HttpRequest`, or why the
//! arguments cannot make one.
//! Must never: let an argument change the path's shape or the host (every path value is
//! percent-encoded, `/` included), put CR or LF into a header, send an argument the
//! mapping does not list, take the credential or the retry key from the arguments, or
//! read the environment for anything but the mapping's `fixed` inputs.
//!
//! Serialisation follows OpenAPI 3.1 (`style`/`explode`): path `simple`, `label`,
//! `matrix`; query `form`, `spaceDelimited`, `pipeDelimited`, `deepObject` (nested
//! objects and arrays as `a[b][0]=v`, as Stripe and `qs` read them); header `simple`;
//! cookie `form`. Bodies: JSON; `application/x-www-form-urlencoded` (each field by its
//! `encoding` entry's style, as a query parameter: a list exploded to repeated keys by
//! default, `deepObject` in brackets; a whole-body argument's fields in brackets);
//! `multipart/form-data` (one part per argument, base64
//! arguments as file parts); any other media type is the one `body` argument's bytes
//! (base64-decoded when the mapping says so) or text.

use base64::Engine as _;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::{Map, Value};

use super::client::HttpRequest;
use super::credential::{Credential, Placement};
use connectorgen_core::model::media_essence;
use connectorgen_core::render::mcp::mapping::{
    Argument, Encoding, FixedInput, Location, RequestMapping,
};
use connectorgen_core::schema_walk;

/// Everything but the unreserved characters (`A-Z a-z 0-9 - . _ ~`) is encoded: a value
/// can never add a path segment, a query parameter or a fragment.
const STRICT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// `allowReserved: true`: the reserved characters that cannot end the query value are
/// kept (`&`, `=`, `#` and `%` are still encoded, so the value stays one value).
const RESERVED_ALLOWED: &AsciiSet = &STRICT
    .remove(b':')
    .remove(b'/')
    .remove(b'?')
    .remove(b'@')
    .remove(b'!')
    .remove(b'$')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')')
    .remove(b'*')
    .remove(b'+')
    .remove(b',')
    .remove(b';')
    .remove(b'[')
    .remove(b']');

/// Why a call cannot become a request. Nothing was sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum RequestError {
    #[error("missing required argument `{0}`")]
    Missing(String),
    #[error("argument `{0}` is not valid base64")]
    Base64(String),
    #[error("argument `{0}` may not contain a line break (it is sent in a header)")]
    HeaderBreak(String),
    #[error("the environment variable {0} (a fixed input of this tool) is not set")]
    FixedUnset(String),
    #[error("the tool has no server URL; pass --base-url")]
    NoServer,
    #[error("argument `{argument}`: {problem}")]
    Shape { argument: String, problem: String },
    #[error("unknown argument `{argument}`: {hint} Nothing was sent and nothing was asked.")]
    Unknown { argument: String, hint: String },
    #[error(
        "the arguments do not match the tool's inputSchema: {0}. Nothing was sent and nothing was asked."
    )]
    Invalid(String),
    #[error("the tool's inputSchema cannot be checked ({0}), so the call is not sent")]
    Schema(String),
    #[error(
        "argument `{0}`: a path value may not be empty, `.` or `..` (it would change the path)"
    )]
    DotSegment(String),
    #[error(
        "argument `{0}` is required and may not be null: give it a value. Nothing was sent and \
         nothing was asked."
    )]
    RequiredNull(String),
    #[error("argument `{argument}`: `{name}` {why}")]
    Query {
        argument: String,
        name: String,
        why: &'static str,
    },
}

/// One call's inputs besides the mapping and the arguments.
pub(crate) struct Target<'a> {
    /// Replaces the mapping's first server (`--base-url`).
    pub base_url: Option<&'a str>,
    pub credential: Option<&'a Credential>,
    /// The retry key the server chose for this logical request, sent where the mapping's
    /// `idempotency` says (whatever the call's own argument held).
    pub retry_key: Option<&'a str>,
    /// Reads one environment variable (`fixed` inputs).
    pub env: &'a (dyn Fn(&str) -> Option<String> + Sync),
    /// The tool's served `inputSchema`: when given, the arguments are checked against it
    /// (and against the mapping) before anything is built (`check`).
    pub schema: Option<&'a Map<String, Value>>,
}

/// The server URL a mapping sends to, `{variables}` replaced by their defaults.
pub(crate) fn server_url(mapping: &RequestMapping, base_url: Option<&str>) -> Option<String> {
    if let Some(base) = base_url {
        return Some(base.trim_end_matches('/').to_string());
    }
    let server = mapping.servers.first()?;
    let mut url = server.url.clone();
    for (name, value) in &server.variables {
        url = url.replace(&format!("{{{name}}}"), value);
    }
    Some(url.trim_end_matches('/').to_string())
}

/// The `inputSchema` a call of this tool is checked against outside `serve` (probe, the
/// fuzz target): the definition's, without the retry key argument, which the server
/// fills in itself (`serve` checks against the schema it serves, which is that one plus
/// the `confirmation` argument it takes out before the check).
pub(crate) fn served_schema(definition: &Value, mapping: &RequestMapping) -> Map<String, Value> {
    let mut schema = definition
        .get("inputSchema")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    if let Some(idem) = &mapping.idempotency {
        if let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut) {
            props.shift_remove(&idem.argument);
        }
        if let Some(required) = schema.get_mut("required").and_then(Value::as_array_mut) {
            required.retain(|r| r.as_str() != Some(idem.argument.as_str()));
        }
    }
    schema
}

/// Builds the request for one call.
pub(crate) fn build(
    mapping: &RequestMapping,
    args: &Map<String, Value>,
    target: &Target<'_>,
) -> Result<HttpRequest, RequestError> {
    if let Some(schema) = target.schema {
        check::arguments(schema, mapping, args)?;
    }
    let mut path = mapping.path.clone();
    let mut query: Vec<(String, String)> = Vec::new();
    let mut headers: Vec<(String, String)> = Vec::new();
    let mut cookies: Vec<String> = Vec::new();
    // The body fields the connection fills in (a `fixed:` input, a credential part):
    // the mapping lists no argument for them.
    let filled = filled_fields(mapping, target.credential);
    let mut body_fields: Vec<(&Argument, Value)> = Vec::new();
    let mut whole_body: Option<(&Argument, Value)> = None;
    let key_argument = mapping.idempotency.as_ref().map(|i| i.argument.as_str());

    for argument in &mapping.arguments {
        let value = if Some(argument.argument.as_str()) == key_argument {
            match target.retry_key {
                Some(key) => Some(Value::String(key.to_string())),
                None => args.get(&argument.argument).cloned(),
            }
        } else {
            args.get(&argument.argument).cloned()
        };
        let value = match value {
            Some(Value::Null) | None => {
                if argument.required {
                    return Err(RequestError::Missing(argument.argument.clone()));
                }
                continue;
            }
            Some(v) => v,
        };
        let name = argument.name.clone().unwrap_or_default();
        match argument.location {
            Location::Path => {
                let text = path_value(argument, &name, &value);
                path = path.replace(&format!("{{{name}}}"), &text);
            }
            Location::Query => {
                exploded_names(mapping, argument, &value, target)?;
                query.extend(query_pairs(argument, &name, &value));
            }
            Location::Header => {
                let text = match &argument.content_type {
                    Some(_) => value.to_string(),
                    None => simple(&value, argument.explode.unwrap_or(false), None),
                };
                if text.contains(['\r', '\n']) {
                    return Err(RequestError::HeaderBreak(argument.argument.clone()));
                }
                headers.push((name, text));
            }
            Location::Cookie => {
                let text = match &argument.content_type {
                    Some(_) => value.to_string(),
                    None => simple(&value, false, None),
                };
                if text.contains(['\r', '\n', ';']) {
                    return Err(RequestError::HeaderBreak(argument.argument.clone()));
                }
                cookies.push(format!("{name}={}", encode(&text, STRICT)));
            }
            Location::Body if argument.name.is_none() => whole_body = Some((argument, value)),
            Location::Body => body_fields.push((argument, value)),
        }
    }

    // The retry key of a mapping whose argument is not among `arguments` (or when the
    // model left it out) still goes out.
    if let (Some(idem), Some(key)) = (&mapping.idempotency, target.retry_key) {
        let listed = mapping
            .arguments
            .iter()
            .any(|a| a.argument == idem.argument);
        if !listed {
            match idem.location {
                Location::Header => headers.push((idem.name.clone(), key.to_string())),
                Location::Query => query.push((encode(&idem.name, STRICT), encode(key, STRICT))),
                _ => {}
            }
        }
    }

    for fixed in &mapping.fixed {
        let value = fixed_value(fixed, target.env)?;
        let as_argument = Argument {
            argument: fixed.name.clone(),
            location: fixed.location,
            name: Some(fixed.name.clone()),
            style: fixed.style.clone(),
            explode: fixed.explode,
            allow_reserved: false,
            content_type: None,
            encoding: None,
            required: true,
        };
        let value = Value::String(value);
        match fixed.location {
            Location::Path => {
                let text = path_value(&as_argument, &fixed.name, &value);
                path = path.replace(&format!("{{{}}}", fixed.name), &text);
            }
            Location::Query => query.extend(query_pairs(&as_argument, &fixed.name, &value)),
            Location::Header => headers.push((fixed.name.clone(), simple(&value, false, None))),
            Location::Cookie => cookies.push(format!(
                "{}={}",
                fixed.name,
                encode(&simple(&value, false, None), STRICT)
            )),
            Location::Body => body_fields.push((body_argument(&filled, &fixed.name), value)),
        }
    }

    dot_segments(mapping, &path)?;

    for placement in target.credential.iter().flat_map(|c| &c.placements) {
        match placement {
            Placement::Header(name, value) => headers.push((name.clone(), value.clone())),
            Placement::Query(name, value) => {
                query.push((encode(name, STRICT), encode(value, STRICT)));
            }
            Placement::Cookie(name, value) => cookies.push(format!("{name}={value}")),
            Placement::Body(name, value) => {
                // The field replaces whatever the model or a `fixed:` input put there.
                body_fields.retain(|(a, _)| a.name.as_deref() != Some(name.as_str()));
                body_fields.push((body_argument(&filled, name), Value::String(value.clone())));
            }
        }
    }
    if !cookies.is_empty() {
        headers.push(("Cookie".into(), cookies.join("; ")));
    }

    // A whole-body argument cannot shadow a field the connection fills in (a credential
    // part, a `fixed:` input): the connection's value replaces the model's.
    if let Some((_, Value::Object(map))) = &mut whole_body {
        for (argument, _) in &body_fields {
            if let Some(name) = &argument.name {
                map.shift_remove(name);
            }
        }
    }
    let body = match &mapping.body {
        Some(body) if whole_body.is_some() || !body_fields.is_empty() || body.required => {
            let (content_type, bytes) = encode_body(&body.media_type, whole_body, body_fields)?;
            headers.push(("Content-Type".into(), content_type));
            Some(bytes)
        }
        _ => None,
    };

    let base = server_url(mapping, target.base_url).ok_or(RequestError::NoServer)?;
    let mut url = format!("{base}{path}");
    if !query.is_empty() {
        url.push('?');
        let pairs: Vec<String> = query.into_iter().map(|(k, v)| format!("{k}={v}")).collect();
        url.push_str(&pairs.join("&"));
    }
    let method =
        http::Method::from_bytes(mapping.method.as_bytes()).map_err(|_| RequestError::Shape {
            argument: String::new(),
            problem: format!("unknown method {}", mapping.method),
        })?;
    Ok(HttpRequest {
        method,
        url,
        headers,
        body,
    })
}

/// A path whose template segment became empty, `.` or `..` is refused: the value would
/// remove a segment or climb one (`{"id": ".."}` made `GET /v1/things/..` into
/// `GET /v1/`). Values are percent-encoded (`/` included), so the segments line up.
fn dot_segments(mapping: &RequestMapping, path: &str) -> Result<(), RequestError> {
    for (template, sent) in mapping.path.split('/').zip(path.split('/')) {
        if template.contains('{') && matches!(sent, "" | "." | "..") {
            let name = template
                .split('{')
                .nth(1)
                .and_then(|rest| rest.split('}').next())
                .unwrap_or(template);
            let argument = mapping
                .arguments
                .iter()
                .find(|a| a.location == Location::Path && a.name.as_deref() == Some(name))
                .map_or(name, |a| a.argument.as_str());
            return Err(RequestError::DotSegment(argument.to_string()));
        }
    }
    Ok(())
}

/// An object sent as an exploded `form` query parameter becomes one query parameter per
/// property (`{"a": 1}` → `a=1`): it may carry only the properties its schema names, and
/// never one named like the retry key, the credential, a `fixed:` input or another
/// parameter — else a model adds its own `request_id` ahead of the server's, or an
/// `api_key=` / `access_token=` of its choosing.
fn exploded_names(
    mapping: &RequestMapping,
    argument: &Argument,
    value: &Value,
    target: &Target<'_>,
) -> Result<(), RequestError> {
    let Value::Object(map) = value else {
        return Ok(());
    };
    let form = argument.style.as_deref().unwrap_or("form") == "form";
    if argument.content_type.is_some() || !form || !argument.explode.unwrap_or(true) {
        return Ok(());
    }
    let named = target
        .schema
        .map(|root| property_names(root, &argument.argument));
    let mut reserved: Vec<&str> = Vec::new();
    if let Some(idem) = &mapping.idempotency {
        reserved.push(&idem.name);
    }
    reserved.extend(
        mapping
            .fixed
            .iter()
            .filter(|f| f.location == Location::Query)
            .map(|f| f.name.as_str()),
    );
    for placement in target.credential.iter().flat_map(|c| &c.placements) {
        if let Placement::Query(name, _) = placement {
            reserved.push(name);
        }
    }
    reserved.extend(
        mapping
            .arguments
            .iter()
            .filter(|a| a.location == Location::Query && a.argument != argument.argument)
            .filter_map(|a| a.name.as_deref()),
    );
    for key in map.keys() {
        if reserved.iter().any(|r| r.eq_ignore_ascii_case(key)) {
            return Err(RequestError::Query {
                argument: argument.argument.clone(),
                name: key.clone(),
                why: "is a query parameter this server sends itself (the retry key, the \
                      credential, a fixed input or another argument); leave it out",
            });
        }
        if let Some(named) = &named
            && !named.iter().any(|n| n == key)
        {
            return Err(RequestError::Query {
                argument: argument.argument.clone(),
                name: key.clone(),
                why: "is not a property its schema names (each property becomes a query \
                      parameter of its own, so only the named ones are sent)",
            });
        }
    }
    Ok(())
}

/// The property names the served schema gives the argument `argument`: its own and those
/// of what its local `$ref`s and `allOf`/`anyOf`/`oneOf` branches name (`schema_walk`).
fn property_names(root: &Map<String, Value>, argument: &str) -> Vec<String> {
    root.get("properties")
        .and_then(|p| p.get(argument))
        .and_then(Value::as_object)
        .map(|schema| schema_walk::properties(root, schema))
        .into_iter()
        .flatten()
        .map(|p| p.name.to_string())
        .collect()
}

/// One body argument for each field the connection fills in.
fn filled_fields(mapping: &RequestMapping, credential: Option<&Credential>) -> Vec<Argument> {
    let fixed = mapping
        .fixed
        .iter()
        .filter(|f| f.location == Location::Body)
        .map(|f| f.name.clone());
    let placed = credential
        .into_iter()
        .flat_map(|c| &c.placements)
        .filter_map(|p| match p {
            Placement::Body(name, _) => Some(name.clone()),
            _ => None,
        });
    fixed
        .chain(placed)
        .map(|name| Argument {
            argument: String::new(),
            name: Some(name),
            ..FALLBACK_BODY.clone()
        })
        .collect()
}

/// The body argument of a field the connection fills in.
fn body_argument<'a>(filled: &'a [Argument], name: &str) -> &'a Argument {
    filled
        .iter()
        .find(|a| a.name.as_deref() == Some(name))
        .unwrap_or(&FALLBACK_BODY)
}

/// A body field no argument describes.
static FALLBACK_BODY: Argument = Argument {
    argument: String::new(),
    location: Location::Body,
    name: None,
    style: None,
    explode: None,
    allow_reserved: false,
    content_type: None,
    encoding: None,
    required: false,
};

fn fixed_value(
    fixed: &FixedInput,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<String, RequestError> {
    if let Some(value) = &fixed.value {
        return Ok(value.clone());
    }
    let variable = fixed.env.clone().unwrap_or_default();
    env(&variable).ok_or(RequestError::FixedUnset(variable))
}

fn encode(text: &str, set: &'static AsciiSet) -> String {
    utf8_percent_encode(text, set).to_string()
}

/// A primitive as text (strings unquoted).
fn scalar(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// `simple` style (header, and the body of `label`/`matrix`): `a,b,c`; an object
/// `k,v,k,v`, or `k=v,k=v` exploded. Each piece encoded with `set` when given.
fn simple(value: &Value, explode: bool, set: Option<&'static AsciiSet>) -> String {
    let piece = |s: &str| match set {
        Some(set) => encode(s, set),
        None => s.to_string(),
    };
    match value {
        Value::Array(items) => items
            .iter()
            .map(|v| piece(&scalar(v)))
            .collect::<Vec<_>>()
            .join(","),
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| {
                if explode {
                    format!("{}={}", piece(k), piece(&scalar(v)))
                } else {
                    format!("{},{}", piece(k), piece(&scalar(v)))
                }
            })
            .collect::<Vec<_>>()
            .join(","),
        other => piece(&scalar(other)),
    }
}

fn path_value(argument: &Argument, name: &str, value: &Value) -> String {
    if argument.content_type.is_some() {
        return encode(&value.to_string(), STRICT);
    }
    let explode = argument.explode.unwrap_or(false);
    match argument.style.as_deref().unwrap_or("simple") {
        "label" => {
            let sep = if explode { "." } else { "," };
            match value {
                Value::Array(items) => format!(
                    ".{}",
                    items
                        .iter()
                        .map(|v| encode(&scalar(v), STRICT))
                        .collect::<Vec<_>>()
                        .join(sep)
                ),
                _ => format!(".{}", simple(value, explode, Some(STRICT))),
            }
        }
        "matrix" => {
            let key = encode(name, STRICT);
            match value {
                Value::Array(items) if explode => items
                    .iter()
                    .map(|v| format!(";{key}={}", encode(&scalar(v), STRICT)))
                    .collect(),
                Value::Object(map) if explode => map
                    .iter()
                    .map(|(k, v)| format!(";{}={}", encode(k, STRICT), encode(&scalar(v), STRICT)))
                    .collect(),
                _ => format!(";{key}={}", simple(value, false, Some(STRICT))),
            }
        }
        _ => simple(value, explode, Some(STRICT)),
    }
}

/// Query pairs, already percent-encoded.
fn query_pairs(argument: &Argument, name: &str, value: &Value) -> Vec<(String, String)> {
    let set = if argument.allow_reserved {
        RESERVED_ALLOWED
    } else {
        STRICT
    };
    let key = encode(name, STRICT);
    if argument.content_type.is_some() {
        return vec![(key, encode(&value.to_string(), set))];
    }
    let explode = argument.explode.unwrap_or(true);
    let joined = |sep: &str, items: &[Value]| {
        items
            .iter()
            .map(|v| encode(&scalar(v), set))
            .collect::<Vec<_>>()
            .join(sep)
    };
    match (argument.style.as_deref().unwrap_or("form"), value) {
        ("deepObject", _) => {
            let mut out = Vec::new();
            brackets(name, value, &mut out);
            out.into_iter()
                .map(|(k, v)| (encode(&k, STRICT), encode(&v, set)))
                .collect()
        }
        ("spaceDelimited", Value::Array(items)) => vec![(key, joined("%20", items))],
        ("pipeDelimited", Value::Array(items)) => vec![(key, joined("%7C", items))],
        (_, Value::Array(items)) if explode => items
            .iter()
            .map(|v| (key.clone(), encode(&scalar(v), set)))
            .collect(),
        (_, Value::Array(items)) => vec![(key, joined(",", items))],
        (_, Value::Object(map)) if explode => map
            .iter()
            .map(|(k, v)| (encode(k, STRICT), encode(&scalar(v), set)))
            .collect(),
        (_, Value::Object(map)) => {
            let pieces: Vec<String> = map
                .iter()
                .flat_map(|(k, v)| [encode(k, set), encode(&scalar(v), set)])
                .collect();
            vec![(key, pieces.join(","))]
        }
        (_, other) => vec![(key, encode(&scalar(other), set))],
    }
}

/// Nested values in bracket notation, unencoded: `a[b][0]=v`.
fn brackets(prefix: &str, value: &Value, out: &mut Vec<(String, String)>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                brackets(&format!("{prefix}[{k}]"), v, out);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                brackets(&format!("{prefix}[{i}]"), v, out);
            }
        }
        other => out.push((prefix.to_string(), scalar(other))),
    }
}

fn decode_base64(argument: &Argument, value: &Value) -> Result<Vec<u8>, RequestError> {
    let text = value.as_str().ok_or_else(|| RequestError::Shape {
        argument: argument.argument.clone(),
        problem: "expected base64 text".into(),
    })?;
    let cleaned: String = text.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    base64::engine::general_purpose::STANDARD
        .decode(cleaned.as_bytes())
        .or_else(|_| base64::engine::general_purpose::URL_SAFE.decode(cleaned.as_bytes()))
        .map_err(|_| RequestError::Base64(argument.argument.clone()))
}

fn encode_body(
    media_type: &str,
    whole: Option<(&Argument, Value)>,
    fields: Vec<(&Argument, Value)>,
) -> Result<(String, Vec<u8>), RequestError> {
    let essence = media_essence(media_type);
    let is_json = essence == "application/json" || essence.ends_with("+json");
    if essence == "application/x-www-form-urlencoded" {
        let mut pairs = Vec::new();
        match whole {
            Some((_, Value::Object(map))) => {
                for (k, v) in &map {
                    brackets(k, v, &mut pairs);
                }
            }
            Some((argument, _)) => {
                return Err(RequestError::Shape {
                    argument: argument.argument.clone(),
                    problem: "a form body must be an object".into(),
                });
            }
            None => {}
        }
        let mut text: Vec<String> = pairs
            .into_iter()
            .map(|(k, v)| format!("{}={}", encode(&k, STRICT), encode(&v, STRICT)))
            .collect();
        for (argument, value) in fields {
            let name = argument.name.as_deref().unwrap_or_default();
            if argument.style.is_some() || argument.content_type.is_some() {
                // A field with its serialisation (the body's `encoding`, or OpenAPI's
                // default; or a media type: JSON text) is written as a query parameter
                // with it would be.
                text.extend(
                    query_pairs(argument, name, &value)
                        .into_iter()
                        .map(|(k, v)| format!("{k}={v}")),
                );
            } else {
                let mut nested = Vec::new();
                brackets(name, &value, &mut nested);
                text.extend(
                    nested
                        .into_iter()
                        .map(|(k, v)| format!("{}={}", encode(&k, STRICT), encode(&v, STRICT))),
                );
            }
        }
        return Ok((media_type.to_string(), text.join("&").into_bytes()));
    }
    if essence == "multipart/form-data" {
        return multipart(whole, fields);
    }
    if is_json {
        let value = match whole {
            Some((_, Value::Object(mut map))) => {
                for (a, v) in fields {
                    map.insert(a.name.clone().unwrap_or_default(), v);
                }
                Value::Object(map)
            }
            Some((_, value)) => value,
            None => Value::Object(
                fields
                    .into_iter()
                    .map(|(a, v)| (a.name.clone().unwrap_or_default(), v))
                    .collect(),
            ),
        };
        return Ok((media_type.to_string(), value.to_string().into_bytes()));
    }
    // Any other media type: the one body argument's bytes or text.
    let bytes = match whole {
        Some((argument, value)) if argument.encoding == Some(Encoding::Base64) => {
            decode_base64(argument, &value)?
        }
        Some((_, Value::String(text))) => text.into_bytes(),
        Some((_, value)) => value.to_string().into_bytes(),
        None => Vec::new(),
    };
    Ok((media_type.to_string(), bytes))
}

fn multipart(
    whole: Option<(&Argument, Value)>,
    fields: Vec<(&Argument, Value)>,
) -> Result<(String, Vec<u8>), RequestError> {
    let boundary = format!("connectorgen-{}", uuid::Uuid::new_v4().simple());
    let mut out: Vec<u8> = Vec::new();
    let mut parts: Vec<(Argument, Value)> =
        fields.into_iter().map(|(a, v)| (a.clone(), v)).collect();
    if let Some((argument, Value::Object(map))) = whole {
        for (k, v) in map {
            let mut part = argument.clone();
            part.name = Some(k);
            part.encoding = None;
            parts.push((part, v));
        }
    }
    for (argument, value) in parts {
        let name = argument.name.clone().unwrap_or_default();
        let quoted = name.replace(['"', '\r', '\n'], "_");
        out.extend_from_slice(format!("--{boundary}\r\n").as_bytes());
        if argument.encoding == Some(Encoding::Base64) {
            let bytes = decode_base64(&argument, &value)?;
            let content_type = argument
                .content_type
                .clone()
                .unwrap_or_else(|| "application/octet-stream".into());
            out.extend_from_slice(
                format!(
                    "Content-Disposition: form-data; name=\"{quoted}\"; filename=\"{quoted}\"\r\nContent-Type: {content_type}\r\n\r\n"
                )
                .as_bytes(),
            );
            out.extend_from_slice(&bytes);
        } else {
            let (content_type, text) = match &value {
                Value::Object(_) | Value::Array(_) => {
                    (Some("application/json".to_string()), value.to_string())
                }
                other => (argument.content_type.clone(), scalar(other)),
            };
            out.extend_from_slice(
                format!("Content-Disposition: form-data; name=\"{quoted}\"\r\n").as_bytes(),
            );
            if let Some(content_type) = content_type {
                out.extend_from_slice(format!("Content-Type: {content_type}\r\n").as_bytes());
            }
            out.extend_from_slice(b"\r\n");
            out.extend_from_slice(text.as_bytes());
        }
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    Ok((format!("multipart/form-data; boundary={boundary}"), out))
}

mod check;

pub(crate) use check::absent_nulls;
#[cfg(test)]
mod tests;
