//! The request mapping of one MCP tool: how a `tools/call` becomes the HTTP request.
//!
//! Takes: nothing of the crate but its own types (the tool builder in `mcp.rs` fills
//! them). Returns: plain serde types, written into each tool of `mcp-tools.json` under
//! `_meta["dev.connectorgen/request"]` and read back by whoever executes calls
//! (`connectorgen serve`), so one value is the single source of how a call is sent.
//! Must never: hold anything a request cannot be rebuilt from (no spans, no model
//! references), or change shape without updating docs/mcp.md.
//!
//! Rebuilding a request from a call's `arguments` (a JSON object):
//! 1. the URL is `servers[0].url` (each `{var}` replaced by its default in `variables`)
//!    followed by `path`, whose `{name}` segments are the `path` arguments, serialised by
//!    their `style`/`explode` and percent-encoded;
//! 2. each argument present in the call goes where its `in` and `name` say: `query`,
//!    `header` and `cookie` parameters by their `style`/`explode` (or as JSON text when
//!    `contentType` is set: an OpenAPI parameter with `content`), `body` arguments as
//!    properties of the body object (or the whole body when `name` is absent); an argument
//!    with `encoding: base64` is base64 text to decode into bytes first;
//! 3. each `fixed` input is added where it says, from the environment variable or literal
//!    value given (never from the call);
//! 4. the body is sent as `body.mediaType` (JSON, form, multipart, text, or the bytes
//!    of a base64 argument);
//! 5. the credential goes as `credential` says: one of the one-part schemes (read from
//!    the connector's credential variable), or `parts`, each from its own variable, in a
//!    header, the query, a cookie or a top-level field of the body, written by `format`.
//!
//! Arguments a call has that the mapping does not list are not sent.

use serde::{Deserialize, Serialize};

/// The `_meta` key of the mapping. Its prefix `dev.connectorgen/` is connectorgen's own:
/// MCP reserves the prefixes whose second label is `modelcontextprotocol` or `mcp`.
pub const META_KEY: &str = "dev.connectorgen/request";

/// How one tool's call becomes an HTTP request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestMapping {
    /// Upper case: `GET`, `POST`, `PUT`, `PATCH`, `DELETE`.
    pub method: String,
    /// The path template as the OpenAPI document writes it (`/v1/things/{id}`).
    pub path: String,
    /// Where the path is appended: the operation's servers, else its path item's, else
    /// the document's, in the document's order (the first is the one to use).
    pub servers: Vec<ServerUrl>,
    /// Every argument of the tool's `inputSchema`, in its order, with where it goes; then
    /// the body fields only the `oneOf`/`anyOf`/`allOf` branches at the schema's root
    /// name (those keywords are the body schema's).
    pub arguments: Vec<Argument>,
    /// The request body, when the operation has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<Body>,
    /// The argument that carries the retry key, when the operation has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotency: Option<IdempotencyMapping>,
    /// Inputs the connector supplies, never the model (`fixed:` in the manifest).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fixed: Vec<FixedInput>,
    /// How the connection's credential is sent.
    pub credential: Credential,
    /// The properties `mcp.omit` took out of the schemas within `inputSchema` (an
    /// argument itself at the root, `""`, and then not in `arguments` either): a call
    /// that sends one anyway is refused like an unknown argument (`serve`'s check).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub omitted: Vec<Omitted>,
}

/// A property `mcp.omit` took out: the JSON pointer (within `inputSchema`) of the schema
/// that declared it, and its name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Omitted {
    pub schema: String,
    pub property: String,
}

/// One server URL (OpenAPI Server Object), with its variables' default values.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerUrl {
    pub url: String,
    /// `{name}` in `url` → its default.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub variables: std::collections::BTreeMap<String, String>,
}

/// Where a value travels in the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Location {
    Path,
    Query,
    Header,
    Cookie,
    Body,
}

impl Location {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Location::Path => "path",
            Location::Query => "query",
            Location::Header => "header",
            Location::Cookie => "cookie",
            Location::Body => "body",
        }
    }

    /// OpenAPI's `in` value, for a parameter.
    pub fn of_parameter(location: &str) -> Option<Location> {
        match location {
            "path" => Some(Location::Path),
            "query" => Some(Location::Query),
            "header" => Some(Location::Header),
            "cookie" => Some(Location::Cookie),
            _ => None,
        }
    }
}

/// One argument of a tool and where its value goes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Argument {
    /// The `inputSchema` property name (client-safe: `^[a-zA-Z0-9_.-]{1,64}$`).
    pub argument: String,
    #[serde(rename = "in")]
    pub location: Location,
    /// The HTTP name: the parameter's or the body property's. Absent for the argument
    /// that is the whole body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// A parameter's OpenAPI `style`, its default filled in (`form` for query and
    /// cookie, `simple` for path and header); for a field of a form-encoded body, its
    /// `encoding` entry's (default `form`). Absent for other body arguments and for
    /// parameters with `contentType`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub style: Option<String>,
    /// A parameter's (or a form field's) OpenAPI `explode`, its default filled in (true
    /// for `form`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explode: Option<bool>,
    /// A query parameter's `allowReserved: true` (reserved characters not encoded).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub allow_reserved: bool,
    /// A parameter described with `content` (not `schema`): its value is serialised in
    /// this media type (JSON text for `application/json`). For a multipart body property:
    /// the part's `encoding.contentType`, when the document gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
    /// `base64`: the value is base64 text to decode; the bytes are sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encoding: Option<Encoding>,
    /// Whether the OpenAPI operation requires it (as the `inputSchema` does).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub required: bool,
}

/// How an argument's value is encoded in the call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Encoding {
    Base64,
}

/// The request body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Body {
    /// The media type sent (`Content-Type`), as the document writes it.
    pub media_type: String,
    /// Whether the operation requires a body.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub required: bool,
}

/// The retry key: which argument holds it and where it goes (a repeat with the same
/// value returns the first result instead of doing the work again).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IdempotencyMapping {
    /// The argument (also listed in `arguments`, with the same location and name).
    pub argument: String,
    #[serde(rename = "in")]
    pub location: Location,
    /// The HTTP name (`Idempotency-Key`).
    pub name: String,
    /// Whether the tool requires it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub required: bool,
}

/// A connector-supplied input: not an argument; the server fills it in on every call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FixedInput {
    #[serde(rename = "in")]
    pub location: Location,
    /// The parameter's HTTP name.
    pub name: String,
    /// Serialised like an argument of this location.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub style: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explode: Option<bool>,
    /// The environment variable of the server process that holds the value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<String>,
    /// The value itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
}

/// How the connection's credential is sent (the `auth` of the connector).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "scheme", rename_all = "camelCase")]
pub enum Credential {
    /// `Authorization: Bearer <token>`.
    Bearer,
    /// An API key in a header, query parameter or cookie of this name.
    ApiKey {
        #[serde(rename = "in")]
        location: Location,
        name: String,
    },
    /// `Authorization: Basic <base64 of user:password>`.
    Basic,
    /// An OAuth 2 or OpenID Connect access token, sent as a bearer token.
    #[serde(rename = "oauth2")]
    OAuth2,
    /// Several parts sent together, or one that the forms above cannot say (a `format`,
    /// a body field): each from its own environment variable.
    Parts { parts: Vec<CredentialPart> },
    /// No credential.
    None,
}

/// One part of a credential: where it goes, how it is written, where its value is read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CredentialPart {
    /// `header`, `query`, `cookie`, or `body` (a top-level field of the JSON or form body).
    #[serde(rename = "in")]
    pub location: Location,
    /// The header, query parameter, cookie or body field.
    pub name: String,
    /// How the value is written, `{value}` standing for it (`Bearer {value}`); absent: the
    /// value itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// `base64`: the variable's content is base64-encoded first (HTTP Basic's
    /// `user:password`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encoding: Option<Encoding>,
    /// The environment variable of the server process that holds the value.
    pub env: String,
}

/// Each tool of an `mcp-tools.json` text with its mapping, in file order.
/// The tools of the `mcp-tools.json` in a build's outputs, read back with their
/// mappings: what `serve` serves and `probe` calls, from the very text `build` writes.
pub fn tools_in(
    outputs: Option<&crate::render::Outputs>,
) -> Result<Vec<(serde_json::Value, RequestMapping)>, String> {
    let text = outputs
        .and_then(|outputs| {
            outputs
                .iter()
                .find(|(path, _)| path.ends_with(crate::model::MCP_TOOLS_JSON))
                .map(|(_, text)| text)
        })
        .ok_or("the mcp target wrote no mcp-tools.json")?;
    read_tools(text)
}

pub fn read_tools(text: &str) -> Result<Vec<(serde_json::Value, RequestMapping)>, String> {
    let tools: Vec<serde_json::Value> =
        serde_json::from_str(text).map_err(|e| format!("not a JSON array of tools: {e}"))?;
    tools
        .into_iter()
        .map(|tool| {
            let name = tool.get("name").cloned().unwrap_or_default();
            let mapping = tool
                .get("_meta")
                .and_then(|m| m.get(META_KEY))
                .ok_or_else(|| format!("tool {name} has no `_meta.{META_KEY}`"))?;
            let mapping = RequestMapping::deserialize(mapping)
                .map_err(|e| format!("tool {name}: `_meta.{META_KEY}`: {e}"))?;
            Ok((tool, mapping))
        })
        .collect()
}
