//! The objects of an OpenAPI document, one function each: the fields the specification
//! lists for it in each version (the project's own tables), its required fields, and the
//! rules between its fields (a path parameter required, `schema` or `content`, …).
//!
//! Takes: an object's mapping and where it is. Returns (into the `Walk`): its problems,
//! then those of the objects inside it.
//! Must never: follow a `$ref`.

use serde_json::{Map, Value};

use super::{Field, In, Kind, Walk, an_object};
use crate::diagnostics::suggest;
use crate::model::{OpenapiVersion, escape};

const METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

pub(super) fn document(w: &mut Walk, at: &str, map: &Map<String, Value>) {
    w.fields(
        at,
        map,
        "OpenAPI",
        &[
            ("openapi", Kind::Text, In::All),
            ("$self", Kind::Text, In::From32),
            ("info", Kind::One("Info", info), In::All),
            ("jsonSchemaDialect", Kind::Text, In::From31),
            ("servers", Kind::List("Server", server, false), In::All),
            ("paths", Kind::One("Paths", paths), In::All),
            (
                "webhooks",
                Kind::Map("Path Item", path_item, true),
                In::From31,
            ),
            ("components", Kind::One("Components", components), In::All),
            (
                "security",
                Kind::List("Security Requirement", security_requirement, false),
                In::All,
            ),
            ("tags", Kind::List("Tag", tag, false), In::All),
            (
                "externalDocs",
                Kind::One("External Documentation", external_docs),
                In::All,
            ),
        ],
    );
    w.require(at, map, "OpenAPI", &["openapi", "info"]);
    if w.version == OpenapiVersion::V30 {
        w.require(at, map, "OpenAPI", &["paths"]);
    } else if !["paths", "components", "webhooks"]
        .iter()
        .any(|k| map.contains_key(*k))
    {
        w.problem(
            at,
            "an OpenAPI document has `paths`, `components` or `webhooks`".to_string(),
        );
    }
}

fn info(w: &mut Walk, at: &str, map: &Map<String, Value>) {
    w.fields(
        at,
        map,
        "Info",
        &[
            ("title", Kind::Text, In::All),
            ("summary", Kind::Text, In::From31),
            ("description", Kind::Text, In::All),
            ("termsOfService", Kind::Text, In::All),
            ("contact", Kind::One("Contact", contact), In::All),
            ("license", Kind::One("License", license), In::All),
            ("version", Kind::Text, In::All),
        ],
    );
    w.require(at, map, "Info", &["title", "version"]);
}

fn contact(w: &mut Walk, at: &str, map: &Map<String, Value>) {
    let fields = [
        ("name", Kind::Text, In::All),
        ("url", Kind::Text, In::All),
        ("email", Kind::Text, In::All),
    ];
    w.fields(at, map, "Contact", &fields);
}

fn license(w: &mut Walk, at: &str, map: &Map<String, Value>) {
    let fields = [
        ("name", Kind::Text, In::All),
        ("identifier", Kind::Text, In::From31),
        ("url", Kind::Text, In::All),
    ];
    w.fields(at, map, "License", &fields);
    w.require(at, map, "License", &["name"]);
    w.not_both(at, map, "License", "identifier", "url");
}

fn server(w: &mut Walk, at: &str, map: &Map<String, Value>) {
    w.fields(
        at,
        map,
        "Server",
        &[
            ("url", Kind::Text, In::All),
            ("description", Kind::Text, In::All),
            ("name", Kind::Text, In::From32),
            (
                "variables",
                Kind::Map("Server Variable", server_variable, false),
                In::All,
            ),
        ],
    );
    w.require(at, map, "Server", &["url"]);
}

fn server_variable(w: &mut Walk, at: &str, map: &Map<String, Value>) {
    let fields = [
        ("enum", Kind::Texts, In::All),
        ("default", Kind::Text, In::All),
        ("description", Kind::Text, In::All),
    ];
    w.fields(at, map, "Server Variable", &fields);
    w.require(at, map, "Server Variable", &["default"]);
    if let Some(Value::Array(values)) = map.get("enum")
        && values.is_empty()
    {
        w.problem(
            &format!("{at}/enum"),
            "a server variable's `enum` lists at least one value".to_string(),
        );
    }
}

fn paths(w: &mut Walk, at: &str, map: &Map<String, Value>) {
    for (path, item) in map {
        let here = format!("{at}/{}", escape(path));
        if path.starts_with("x-") {
            continue;
        }
        if !path.starts_with('/') {
            w.problem(&here, "a path starts with `/`".to_string());
        }
        w.object(&here, item, "Path Item", path_item);
    }
}

fn path_item(w: &mut Walk, at: &str, map: &Map<String, Value>) {
    let mut fields: Vec<Field> = vec![
        ("$ref", Kind::Text, In::All),
        ("summary", Kind::Text, In::All),
        ("description", Kind::Text, In::All),
        ("servers", Kind::List("Server", server, false), In::All),
        (
            "parameters",
            Kind::List("Parameter", parameter, true),
            In::All,
        ),
        ("query", Kind::One("Operation", operation), In::From32),
        (
            "additionalOperations",
            Kind::Map("Operation", operation, false),
            In::From32,
        ),
    ];
    fields.extend(
        METHODS
            .iter()
            .map(|m| (*m, Kind::One("Operation", operation), In::All)),
    );
    w.fields(at, map, "Path Item", &fields);
}

pub(super) fn operation(w: &mut Walk, at: &str, map: &Map<String, Value>) {
    w.fields(
        at,
        map,
        "Operation",
        &[
            ("tags", Kind::Texts, In::All),
            ("summary", Kind::Text, In::All),
            ("description", Kind::Text, In::All),
            (
                "externalDocs",
                Kind::One("External Documentation", external_docs),
                In::All,
            ),
            ("operationId", Kind::Text, In::All),
            (
                "parameters",
                Kind::List("Parameter", parameter, true),
                In::All,
            ),
            (
                "requestBody",
                Kind::RefOr("Request Body", request_body),
                In::All,
            ),
            ("responses", Kind::One("Responses", responses), In::All),
            ("callbacks", Kind::Map("Callback", callback, true), In::All),
            ("deprecated", Kind::Bool, In::All),
            (
                "security",
                Kind::List("Security Requirement", security_requirement, false),
                In::All,
            ),
            ("servers", Kind::List("Server", server, false), In::All),
        ],
    );
    if w.version == OpenapiVersion::V30 {
        w.require(at, map, "Operation", &["responses"]);
    }
}

/// Where a parameter may be, and the styles each place allows.
fn styles(location: &str, version: OpenapiVersion) -> Option<&'static [&'static str]> {
    Some(match location {
        "path" => &["matrix", "label", "simple"],
        "query" => &["form", "spaceDelimited", "pipeDelimited", "deepObject"],
        "header" => &["simple"],
        "cookie" if version == OpenapiVersion::V32 => &["form", "cookie"],
        "cookie" => &["form"],
        "querystring" if version == OpenapiVersion::V32 => &[],
        _ => return None,
    })
}

fn parameter(w: &mut Walk, at: &str, map: &Map<String, Value>) {
    w.fields(
        at,
        map,
        "Parameter",
        &[
            ("name", Kind::Text, In::All),
            ("in", Kind::Text, In::All),
            ("description", Kind::Text, In::All),
            ("required", Kind::Bool, In::All),
            ("deprecated", Kind::Bool, In::All),
            ("allowEmptyValue", Kind::Bool, In::All),
            ("style", Kind::Text, In::All),
            ("explode", Kind::Bool, In::All),
            ("allowReserved", Kind::Bool, In::All),
            ("schema", Kind::Schema, In::All),
            ("content", Kind::Content, In::All),
            ("example", Kind::Any, In::All),
            ("examples", Kind::Map("Example", example, true), In::All),
        ],
    );
    w.require(at, map, "Parameter", &["name", "in"]);
    let Some(location) = map.get("in").and_then(Value::as_str) else {
        return;
    };
    let Some(allowed) = styles(location, w.version) else {
        let places: &[&str] = if w.version == OpenapiVersion::V32 {
            &["path", "query", "querystring", "header", "cookie"]
        } else {
            &["path", "query", "header", "cookie"]
        };
        w.problem(
            &format!("{at}/in"),
            format!(
                "`in: {}` is no parameter location; {}",
                location.escape_debug(),
                suggest(location, places.iter().copied())
            ),
        );
        return;
    };
    if location == "path" && map.get("required") != Some(&Value::Bool(true)) {
        w.problem(at, "a path parameter must say `required: true`".to_string());
    }
    if let Some(Value::String(style)) = map.get("style")
        && !allowed.contains(&style.as_str())
    {
        w.problem(
            &format!("{at}/style"),
            format!(
                "`style: {}` is not for a {location} parameter; {}",
                style.escape_debug(),
                if allowed.is_empty() {
                    "it takes none".to_string()
                } else {
                    suggest(style, allowed.iter().copied())
                }
            ),
        );
    }
    if location == "querystring" && map.contains_key("schema") {
        w.problem(
            at,
            "a querystring parameter has `content`, not `schema`".to_string(),
        );
    }
    schema_or_content(w, at, map, "Parameter");
    w.not_both(at, map, "Parameter", "example", "examples");
}

/// A parameter or header has a `schema` or a `content` of one media type.
fn schema_or_content(w: &mut Walk, at: &str, map: &Map<String, Value>, what: &str) {
    match (map.get("schema"), map.get("content")) {
        (Some(_), Some(_)) => w.not_both(at, map, what, "schema", "content"),
        (None, None) => w.problem(
            at,
            format!("{} requires `schema` or `content`", an_object(what)),
        ),
        (None, Some(Value::Object(content))) if content.len() != 1 => w.problem(
            &format!("{at}/content"),
            format!(
                "the `content` of {} holds exactly one media type",
                an_object(what)
            ),
        ),
        _ => {}
    }
}

fn header(w: &mut Walk, at: &str, map: &Map<String, Value>) {
    w.fields(
        at,
        map,
        "Header",
        &[
            ("description", Kind::Text, In::All),
            ("required", Kind::Bool, In::All),
            ("deprecated", Kind::Bool, In::All),
            ("allowEmptyValue", Kind::Bool, In::Before32),
            ("style", Kind::OneOf(&["simple"]), In::All),
            ("explode", Kind::Bool, In::All),
            ("allowReserved", Kind::Bool, In::Before32),
            ("schema", Kind::Schema, In::All),
            ("content", Kind::Content, In::All),
            ("example", Kind::Any, In::All),
            ("examples", Kind::Map("Example", example, true), In::All),
        ],
    );
    schema_or_content(w, at, map, "Header");
    w.not_both(at, map, "Header", "example", "examples");
}

fn request_body(w: &mut Walk, at: &str, map: &Map<String, Value>) {
    w.fields(
        at,
        map,
        "Request Body",
        &[
            ("description", Kind::Text, In::All),
            ("content", Kind::Content, In::All),
            ("required", Kind::Bool, In::All),
        ],
    );
    w.require(at, map, "Request Body", &["content"]);
}

/// A Media Type Object; a `$ref` to one (which a `content` map may hold) is 3.2's.
pub(super) fn media_type(w: &mut Walk, at: &str, map: &Map<String, Value>) {
    w.fields(
        at,
        map,
        "Media Type",
        &[
            ("description", Kind::Text, In::From32),
            ("schema", Kind::Schema, In::All),
            ("itemSchema", Kind::Schema, In::From32),
            ("example", Kind::Any, In::All),
            ("examples", Kind::Map("Example", example, true), In::All),
            ("encoding", Kind::Map("Encoding", encoding, false), In::All),
            (
                "prefixEncoding",
                Kind::List("Encoding", encoding, false),
                In::From32,
            ),
            ("itemEncoding", Kind::One("Encoding", encoding), In::From32),
        ],
    );
    w.not_both(at, map, "Media Type", "example", "examples");
}

fn encoding(w: &mut Walk, at: &str, map: &Map<String, Value>) {
    w.fields(
        at,
        map,
        "Encoding",
        &[
            ("contentType", Kind::Text, In::All),
            ("headers", Kind::Map("Header", header, true), In::All),
            (
                "style",
                Kind::OneOf(&["form", "spaceDelimited", "pipeDelimited", "deepObject"]),
                In::All,
            ),
            ("explode", Kind::Bool, In::All),
            ("allowReserved", Kind::Bool, In::All),
            (
                "encoding",
                Kind::Map("Encoding", encoding, false),
                In::From32,
            ),
            (
                "prefixEncoding",
                Kind::List("Encoding", encoding, false),
                In::From32,
            ),
            ("itemEncoding", Kind::One("Encoding", encoding), In::From32),
        ],
    );
}

fn responses(w: &mut Walk, at: &str, map: &Map<String, Value>) {
    let mut listed = 0;
    for (status, response) in map {
        if status.starts_with("x-") {
            continue;
        }
        listed += 1;
        let here = format!("{at}/{}", escape(status));
        if !(status == "default" || is_status(status)) {
            w.problem(
                &here,
                format!(
                    "`{}` is not a status code (100 to 599, or 1XX to 5XX) or `default`",
                    status.escape_debug()
                ),
            );
        }
        w.ref_or(&here, response, "Response", response_object);
    }
    if listed == 0 {
        w.problem(
            at,
            "a Responses Object lists at least one response".to_string(),
        );
    }
}

/// `200`, `404`, `2XX`: three characters, the first 1 to 5.
fn is_status(status: &str) -> bool {
    let b = status.as_bytes();
    b.len() == 3
        && (b'1'..=b'5').contains(&b[0])
        && (b[1..].iter().all(u8::is_ascii_digit) || &b[1..] == b"XX")
}

fn response_object(w: &mut Walk, at: &str, map: &Map<String, Value>) {
    w.fields(
        at,
        map,
        "Response",
        &[
            ("summary", Kind::Text, In::From32),
            ("description", Kind::Text, In::All),
            ("headers", Kind::Map("Header", header, true), In::All),
            ("content", Kind::Content, In::All),
            ("links", Kind::Map("Link", link, true), In::All),
        ],
    );
    if w.version != OpenapiVersion::V32 {
        w.require(at, map, "Response", &["description"]);
    }
}

fn callback(w: &mut Walk, at: &str, map: &Map<String, Value>) {
    for (expression, item) in map {
        if !expression.starts_with("x-") {
            let here = format!("{at}/{}", escape(expression));
            w.ref_or(&here, item, "Path Item", path_item);
        }
    }
}

fn example(w: &mut Walk, at: &str, map: &Map<String, Value>) {
    w.fields(
        at,
        map,
        "Example",
        &[
            ("summary", Kind::Text, In::All),
            ("description", Kind::Text, In::All),
            ("value", Kind::Any, In::All),
            ("dataValue", Kind::Any, In::From32),
            ("serializedValue", Kind::Text, In::From32),
            ("externalValue", Kind::Text, In::All),
        ],
    );
    w.not_both(at, map, "Example", "value", "externalValue");
}

fn link(w: &mut Walk, at: &str, map: &Map<String, Value>) {
    w.fields(
        at,
        map,
        "Link",
        &[
            ("operationRef", Kind::Text, In::All),
            ("operationId", Kind::Text, In::All),
            ("parameters", Kind::Any, In::All),
            ("requestBody", Kind::Any, In::All),
            ("description", Kind::Text, In::All),
            ("server", Kind::One("Server", server), In::All),
        ],
    );
    w.not_both(at, map, "Link", "operationRef", "operationId");
}

fn tag(w: &mut Walk, at: &str, map: &Map<String, Value>) {
    w.fields(
        at,
        map,
        "Tag",
        &[
            ("name", Kind::Text, In::All),
            ("summary", Kind::Text, In::From32),
            ("description", Kind::Text, In::All),
            (
                "externalDocs",
                Kind::One("External Documentation", external_docs),
                In::All,
            ),
            ("parent", Kind::Text, In::From32),
            ("kind", Kind::Text, In::From32),
        ],
    );
    w.require(at, map, "Tag", &["name"]);
}

pub(super) fn external_docs(w: &mut Walk, at: &str, map: &Map<String, Value>) {
    let fields = [
        ("description", Kind::Text, In::All),
        ("url", Kind::Text, In::All),
    ];
    w.fields(at, map, "External Documentation", &fields);
    w.require(at, map, "External Documentation", &["url"]);
}

/// Scheme names to the scopes each needs: a list of strings each.
fn security_requirement(w: &mut Walk, at: &str, map: &Map<String, Value>) {
    for (name, scopes) in map {
        w.kind(&format!("{at}/{}", escape(name)), name, scopes, Kind::Texts);
    }
}

fn components(w: &mut Walk, at: &str, map: &Map<String, Value>) {
    w.fields(
        at,
        map,
        "Components",
        &[
            ("schemas", Kind::Schemas, In::All),
            (
                "responses",
                Kind::Map("Response", response_object, true),
                In::All,
            ),
            (
                "parameters",
                Kind::Map("Parameter", parameter, true),
                In::All,
            ),
            ("examples", Kind::Map("Example", example, true), In::All),
            (
                "requestBodies",
                Kind::Map("Request Body", request_body, true),
                In::All,
            ),
            ("headers", Kind::Map("Header", header, true), In::All),
            (
                "securitySchemes",
                Kind::Map("Security Scheme", security_scheme, true),
                In::All,
            ),
            ("links", Kind::Map("Link", link, true), In::All),
            ("callbacks", Kind::Map("Callback", callback, true), In::All),
            (
                "pathItems",
                Kind::Map("Path Item", path_item, true),
                In::From31,
            ),
            (
                "mediaTypes",
                Kind::Map("Media Type", media_type, true),
                In::From32,
            ),
        ],
    );
    // A component's name is what a reference ends with.
    for (group, entries) in map {
        let Value::Object(entries) = entries else {
            continue;
        };
        if group.starts_with("x-") {
            continue;
        }
        for name in entries.keys() {
            let usable = !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
            if !usable {
                w.problem(
                    &format!("{at}/{}/{}", escape(group), escape(name)),
                    format!(
                        "`{}` is no component name: letters, digits, `.`, `_` and `-` only",
                        name.escape_debug()
                    ),
                );
            }
        }
    }
}

fn security_scheme(w: &mut Walk, at: &str, map: &Map<String, Value>) {
    let types: &[&str] = if w.version == OpenapiVersion::V30 {
        &["apiKey", "http", "oauth2", "openIdConnect"]
    } else {
        &["apiKey", "http", "mutualTLS", "oauth2", "openIdConnect"]
    };
    let common = [
        ("type", Kind::OneOf(types), In::All),
        ("description", Kind::Text, In::All),
        ("deprecated", Kind::Bool, In::From32),
    ];
    let (own, required): (&[Field], &[&str]) = match map.get("type").and_then(Value::as_str) {
        Some("apiKey") => (
            &[
                ("name", Kind::Text, In::All),
                ("in", Kind::OneOf(&["query", "header", "cookie"]), In::All),
            ],
            &["name", "in"],
        ),
        Some("http") => (
            &[
                ("scheme", Kind::Text, In::All),
                ("bearerFormat", Kind::Text, In::All),
            ],
            &["scheme"],
        ),
        Some("oauth2") => (
            &[
                ("flows", Kind::One("OAuth Flows", oauth_flows), In::All),
                ("oauth2MetadataUrl", Kind::Text, In::From32),
            ],
            &["flows"],
        ),
        Some("openIdConnect") => (
            &[("openIdConnectUrl", Kind::Text, In::All)],
            &["openIdConnectUrl"],
        ),
        _ => (&[], &[]),
    };
    let fields: Vec<Field> = common.iter().chain(own).copied().collect();
    w.fields(at, map, "Security Scheme", &fields);
    w.require(at, map, "Security Scheme", &["type"]);
    w.require(at, map, "Security Scheme", required);
}

fn oauth_flows(w: &mut Walk, at: &str, map: &Map<String, Value>) {
    w.fields(
        at,
        map,
        "OAuth Flows",
        &[
            ("implicit", Kind::One("OAuth Flow", implicit_flow), In::All),
            ("password", Kind::One("OAuth Flow", token_flow), In::All),
            (
                "clientCredentials",
                Kind::One("OAuth Flow", token_flow),
                In::All,
            ),
            (
                "authorizationCode",
                Kind::One("OAuth Flow", code_flow),
                In::All,
            ),
            (
                "deviceAuthorization",
                Kind::One("OAuth Flow", device_flow),
                In::From32,
            ),
        ],
    );
}

/// An OAuth Flow Object, whose required URLs depend on the flow.
fn oauth_flow(w: &mut Walk, at: &str, map: &Map<String, Value>, required: &[&str]) {
    w.fields(
        at,
        map,
        "OAuth Flow",
        &[
            ("authorizationUrl", Kind::Text, In::All),
            ("deviceAuthorizationUrl", Kind::Text, In::From32),
            ("tokenUrl", Kind::Text, In::All),
            ("refreshUrl", Kind::Text, In::All),
            ("scopes", Kind::TextMap, In::All),
        ],
    );
    w.require(at, map, "OAuth Flow", required);
}

fn implicit_flow(w: &mut Walk, at: &str, map: &Map<String, Value>) {
    oauth_flow(w, at, map, &["authorizationUrl", "scopes"]);
}

fn token_flow(w: &mut Walk, at: &str, map: &Map<String, Value>) {
    oauth_flow(w, at, map, &["tokenUrl", "scopes"]);
}

fn code_flow(w: &mut Walk, at: &str, map: &Map<String, Value>) {
    oauth_flow(w, at, map, &["authorizationUrl", "tokenUrl", "scopes"]);
}

fn device_flow(w: &mut Walk, at: &str, map: &Map<String, Value>) {
    oauth_flow(
        w,
        at,
        map,
        &["deviceAuthorizationUrl", "tokenUrl", "scopes"],
    );
}
