//! The manifest file as written: raw serde types for `connector.yaml`.
//!
//! Takes: the manifest text. Returns: a `RawManifest` whose every field that validation
//! points at carries its YAML location (`Spanned`), or one `Diagnostic` when the text is
//! not YAML of the right shape (syntax, wrong type, unknown or duplicate key).
//! Must never: apply defaults or judge values — that is `validate.rs`'s job, so that
//! every semantic problem is collected and reported together. Required keys are
//! `Option` here for the same reason: a missing one is reported with the others.
//! JSON Schemas (`input`, `output`, query `schema`) are kept as `serde_json::Value` in
//! the order written; YAML 1.1 surprises (`no`, `on`, `010`, `1_000`) stay strings.
//!
//! The same types give the manifest's JSON Schema (`schema.rs`): doc comments on the
//! fields become its descriptions, so they speak to the person writing the YAML.
//! `#[schemars(with = …)]` names each field's schema without `Spanned`: a plain type for
//! a required key (so the schema marks it required although the field is an `Option`),
//! an `Option` for an optional one, a `schema.rs` marker for a fixed list of names.
//! (schemars reads a one-word string `example` as a function name, hence `&"post"`.)

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use serde_saphyr::{Error as YamlError, budget::BudgetBreach};
use serde_saphyr::{Location, Spanned};

use crate::diagnostics::{Diagnostic, Span, suggest};
use crate::schema::{
    ApiKeyInName, AuthSchemeName, IdempotencyName, LintId, LintLevel, LintTable, MethodName,
    ReturnsName, SpendKindName, TargetName,
};

/// A connectorgen manifest: one service and the operations an AI agent may call on a
/// person's behalf. connectorgen turns it into openapi.json, llms.txt and the other
/// files agents read.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(
    title = "connectorgen manifest",
    // Which keys are required depends on the mode: with `openapi:` the base document
    // supplies HTTP and most of `service`; without it everything is written inline.
    extend(
        "if" = { "required": ["openapi"] },
        "then" = {
            "not": { "anyOf": [
                { "required": ["schemas"] }, { "required": ["servers"] }, { "required": ["errors"] }
            ] },
            "properties": {
                "service": { "required": ["dashboardUrl"] },
                "operations": { "items": {
                    "required": ["operation"],
                    "not": { "anyOf": [
                        { "required": ["method"] }, { "required": ["path"] },
                        { "required": ["input"] }, { "required": ["output"] },
                        { "required": ["query"] }
                    ] }
                } }
            }
        },
        "else" = {
            "properties": {
                "service": { "required": ["name", "version", "description", "publicUrl", "dashboardUrl"] },
                "operations": { "items": {
                    "required": ["id", "method", "path", "summary", "description"],
                    "not": { "required": ["operation"] }
                } }
            }
        }
    )
)]
pub struct RawManifest {
    /// The manifest format version. Only `1` exists.
    #[schemars(with = "i64", extend("const" = 1), example = 1)]
    pub version: Option<Spanned<i64>>,
    /// The provider's own OpenAPI document (3.0 or 3.1, JSON or YAML), relative to this
    /// file. With it ("base mode") the document is the truth for HTTP: each operation
    /// names one of its operations with `operation:` and adds the safety layer; `service`
    /// fields default to its `info` and servers. Without it, operations are written inline.
    #[schemars(with = "Option<String>", example = &"specs/api.json")]
    pub openapi: Option<Spanned<String>>,
    /// Who the connector is and where it lives.
    #[schemars(with = "RawService", example = json!({
        "name": "VidGen",
        "version": "1.2.0",
        "description": "Generate short videos from a text prompt.",
        "publicUrl": "https://muse.vidgen.example",
        "dashboardUrl": "https://vidgen.example/connections"
    }))]
    pub service: Option<Spanned<RawService>>,
    /// How connector tokens look. Leave it out when tokens have no fixed prefix.
    #[schemars(with = "Option<RawAuth>", example = json!({ "tokenPrefix": "vg_" }))]
    pub auth: Option<Spanned<RawAuth>>,
    /// The operations an agent may call, in the order it should see them. At least one.
    #[schemars(with = "Vec<RawOperation>", length(min = 1), example = json!([{
        "id": "getVideo",
        "method": "get",
        "path": "/v1/videos/{id}",
        "summary": "Check a video job",
        "description": "Read-only. Never starts a generation."
    }]))]
    pub operations: Option<Spanned<Vec<Spanned<RawOperation>>>>,
    /// Lint levels: lint id → `allow`, `warn` or `deny`, or `{ level, max }`.
    #[schemars(with = "Option<LintTable>", example = json!({
        "missing-limit": "deny",
        "description-too-long": { "level": "warn", "max": 300 }
    }))]
    pub lint: Option<Spanned<RawLints>>,
    /// Which agent platforms to write for (default `[muse]`); `--target` replaces it.
    #[schemars(
        with = "Option<Vec<TargetName>>",
        length(min = 1),
        extend("default" = ["muse"]),
        example = ["muse", "mcp"]
    )]
    pub targets: Option<Spanned<Vec<Spanned<String>>>>,
    /// A folder of templates overriding the embedded ones, relative to the manifest.
    #[schemars(with = "Option<String>", example = &"templates")]
    pub templates: Option<Spanned<String>>,
    /// Inline mode: JSON Schemas shared by operations, written to `components.schemas`;
    /// use one with `$ref: "#/components/schemas/<name>"`.
    #[schemars(
        with = "Option<std::collections::BTreeMap<String, serde_json::Value>>",
        example = json!({ "Prediction": { "type": "object", "properties": { "id": { "type": "string" } } } })
    )]
    pub schemas: Option<Spanned<IndexMap<String, Spanned<serde_json::Value>>>>,
    /// Inline mode: more servers after `publicUrl` (e.g. data residency), in order.
    #[schemars(
        with = "Option<Vec<RawServer>>",
        example = json!([{ "url": "https://api.eu.example.com", "description": "EU data residency" }])
    )]
    pub servers: Option<Vec<Spanned<RawServer>>>,
    /// Inline mode: the provider's own error body, replacing the RFC 9457 problem default.
    #[schemars(
        with = "Option<RawErrors>",
        example = json!({ "contentType": "application/json", "schema": { "$ref": "#/components/schemas/Error" }, "statuses": [400, 401, 404, 429, 500] })
    )]
    pub errors: Option<Spanned<RawErrors>>,
}

/// One entry of `servers:`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawServer {
    /// The server's base URL (same rules as `publicUrl`).
    #[schemars(with = "String", example = "https://api.eu.example.com")]
    pub url: Option<Spanned<String>>,
    /// What the server is for.
    #[schemars(with = "Option<String>", example = "EU data residency")]
    pub description: Option<Spanned<String>>,
}

/// `errors:` — the body the provider sends with an error status.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawErrors {
    /// The error body's media type (default `application/json`).
    #[schemars(with = "Option<String>", extend("pattern" = "^[!#$&^_.+0-9A-Za-z-]+/[!#$&^_.+0-9A-Za-z-]+( *;.*)?$"), example = &"application/json")]
    pub content_type: Option<Spanned<String>>,
    /// JSON Schema of the error body.
    #[schemars(
        with = "serde_json::Value",
        extend("type" = ["object", "boolean"]),
        example = json!({ "$ref": "#/components/schemas/Error" })
    )]
    pub schema: Option<Spanned<serde_json::Value>>,
    /// The error statuses every operation may answer with (4xx or 5xx), or `default`.
    #[schemars(
        with = "Vec<serde_json::Value>",
        extend("items" = { "type": ["integer", "string"] }),
        example = json!([400, 401, 404, 429, 500])
    )]
    pub statuses: Option<Spanned<Vec<Spanned<serde_json::Value>>>>,
}

/// `lint:` — lint id → setting, in the order written.
pub type RawLints = IndexMap<Spanned<String>, Spanned<RawLintSetting>>;

/// One entry of `lint:`: a bare level, or a mapping for lints that take options.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum RawLintSetting {
    /// The lint's level.
    #[schemars(with = "LintLevel")]
    Level(String),
    /// The lint's level and options.
    Detailed(RawLintDetail),
}

/// `{ level: warn, max: 300 }`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawLintDetail {
    /// The lint's level (default `warn`).
    #[schemars(with = "Option<LintLevel>", extend("default" = "warn"), example = &"deny")]
    pub level: Option<String>,
    /// The most characters the description the model reads may have (description-too-long only).
    #[schemars(
        range(min = 1),
        extend("default" = crate::lint::DEFAULT_DESCRIPTION_MAX),
        example = 300
    )]
    pub max: Option<i64>,
}

/// `service:` — who the connector is and where it lives.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawService {
    /// The service's name, as prose mentions it. Base mode: defaults to the document's
    /// `info.title` without a trailing " API".
    #[schemars(with = "Option<String>", example = &"VidGen")]
    pub name: Option<Spanned<String>>,
    /// OpenAPI `info.title` (default "<name> Connector"; base mode: the document's).
    #[schemars(with = "Option<String>", example = "VidGen for Muse")]
    pub title: Option<Spanned<String>>,
    /// The connector's version, OpenAPI `info.version`. Kept as written (`1.10` stays
    /// "1.10"), so a number is accepted, but quoting it is clearer. Base mode: defaults
    /// to the document's.
    #[schemars(with = "Option<String>", extend("type" = ["string", "number"]), example = "1.2.0")]
    pub version: Option<Spanned<String>>,
    /// One paragraph: who the connector is for and what it does. Base mode: defaults to
    /// the document's `info.description`.
    #[schemars(
        with = "Option<String>",
        example = "Generate short videos from a text prompt."
    )]
    pub description: Option<Spanned<String>>,
    /// The API's base URL (OpenAPI `servers[0].url`): absolute `https` (plain `http` only
    /// for localhost and 127.0.0.1), without credentials, query or fragment. Base mode:
    /// defaults to the document's first server; when given, it becomes the first server.
    #[schemars(with = "Option<String>", example = "https://muse.vidgen.example")]
    pub public_url: Option<Spanned<String>>,
    /// Where the person creates and revokes connector tokens: absolute `https` (plain
    /// `http` only for localhost and 127.0.0.1), without credentials; it may carry a query
    /// and a fragment (`…/settings?tab=keys`).
    #[schemars(
        with = "Option<String>",
        example = "https://vidgen.example/connections"
    )]
    pub dashboard_url: Option<Spanned<String>>,
    /// Where the connector's OpenAPI document (the generated openapi.json) is published,
    /// for the link llms.txt gives the model (same rules as `dashboardUrl`). Default:
    /// `<publicUrl>/openapi.json`.
    #[schemars(
        with = "Option<String>",
        example = "https://vidgen.example/connector/openapi.json"
    )]
    pub spec_url: Option<Spanned<String>>,
    /// OpenAPI `info.contact`: `name`, `url`, `email`.
    #[schemars(
        with = "Option<serde_json::Map<String, serde_json::Value>>",
        example = json!({ "name": "API support", "email": "support@example.com" })
    )]
    pub contact: Option<Spanned<serde_json::Value>>,
    /// OpenAPI `info.license`: `name` and an SPDX `identifier` or a `url`.
    #[schemars(
        with = "Option<serde_json::Map<String, serde_json::Value>>",
        example = json!({ "name": "Apache-2.0", "identifier": "Apache-2.0" })
    )]
    pub license: Option<Spanned<serde_json::Value>>,
}

/// `auth:` — how the agent sends the person's credential, and how it looks.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(extend(
    "if" = { "required": ["scheme"], "properties": { "scheme": { "const": "apiKey" } } },
    "then" = { "required": ["name"] }
))]
pub struct RawAuth {
    /// How the agent sends the credential: `bearer` (`Authorization: Bearer …`, the
    /// default), `apiKey` (a named header or query parameter) or `basic` (HTTP Basic).
    /// Inline mode only: in base mode the document's security schemes say it.
    #[schemars(with = "Option<AuthSchemeName>", extend("default" = "bearer"), example = &"apiKey")]
    pub scheme: Option<Spanned<String>>,
    /// `apiKey`: where the key goes, `header` or `query`.
    #[serde(rename = "in")]
    #[schemars(with = "Option<ApiKeyInName>", example = &"header")]
    pub in_: Option<Spanned<String>>,
    /// `apiKey`: the header or query parameter that carries the key.
    #[schemars(with = "Option<String>", example = &"X-API-Key")]
    pub name: Option<Spanned<String>>,
    /// What every credential starts with (no spaces), so the model can recognise one:
    /// one prefix, or a list of them.
    #[schemars(
        with = "Option<serde_json::Value>",
        extend("anyOf" = [{ "type": "string" }, { "type": "array", "items": { "type": "string" }, "minItems": 1 }]),
        example = &"vg_"
    )]
    pub token_prefix: Option<Spanned<serde_json::Value>>,
    /// How prose names the credential (default "connector token"; base mode "API key").
    #[schemars(with = "Option<String>", example = "API key")]
    pub credential_name: Option<Spanned<String>>,
}

/// One entry of `operations:`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawOperation {
    /// Base mode: the base document's operation this entry exposes, by its operationId
    /// or as `METHOD /path` (the path template as the document writes it).
    #[schemars(with = "Option<String>", example = "POST /v1/predictions")]
    pub operation: Option<Spanned<String>>,
    /// The operationId the model calls: 1 to 128 letters, digits, `_`, `.` or `-`;
    /// unique in the manifest. Base mode: defaults to the base operationId.
    #[schemars(with = "Option<String>", example = &"createVideo")]
    pub id: Option<Spanned<String>>,
    /// The HTTP method, in lower or upper case.
    #[schemars(with = "Option<MethodName>", example = &"post")]
    pub method: Option<Spanned<String>>,
    /// The path, starting with `/`; each `{name}` segment is a required string path parameter.
    #[schemars(with = "Option<String>", example = "/v1/videos/{id}")]
    pub path: Option<Spanned<String>>,
    /// One line saying what the operation does, three words or more.
    #[schemars(with = "Option<String>", example = "Generate a video from a prompt")]
    pub summary: Option<Spanned<String>>,
    /// What the model reads: what the call does, and what it will not do.
    #[schemars(
        with = "Option<String>",
        example = "Starts a generation and returns a job to track. Does not publish the video."
    )]
    pub description: Option<Spanned<String>>,
    /// JSON Schema of the JSON request body. Not allowed on get or delete.
    #[schemars(
        with = "Option<serde_json::Value>",
        extend("type" = ["object", "boolean"]),
        example = json!({
            "type": "object",
            "properties": { "prompt": { "type": "string" } },
            "required": ["prompt"]
        })
    )]
    pub input: Option<Spanned<serde_json::Value>>,
    /// Query parameters.
    #[schemars(
        with = "Option<Vec<RawQueryParam>>",
        example = json!([{ "name": "limit", "schema": { "type": "integer", "minimum": 1 } }])
    )]
    pub query: Option<Vec<Spanned<RawQueryParam>>>,
    /// JSON Schema of the success (200) response.
    #[schemars(
        with = "Option<serde_json::Value>",
        extend("type" = ["object", "boolean"], "default" = { "type": "object" }),
        example = json!({ "type": "object", "properties": { "status": { "type": "string" } } })
    )]
    pub output: Option<Spanned<serde_json::Value>>,
    /// The call costs the person something, so the model asks for their yes first. Not
    /// allowed on get.
    #[schemars(
        with = "Option<RawSpends>",
        example = json!({ "kind": "credits", "note": "Costs 1 generation credit." })
    )]
    pub spends: Option<Spanned<RawSpends>>,
    /// The call cannot be undone (a delete, a cancel, a send): `true` makes the model get
    /// the person's explicit yes before each call, even when it costs nothing. Default
    /// `true` on delete (write `false` for, e.g., deleting a draft), `false` otherwise.
    /// `false` also tells OpenAI the call is routine. A call that spends always needs
    /// their yes; `confirm: true` on it adds that it is permanent. Not allowed on get.
    #[schemars(with = "Option<bool>", example = true)]
    pub confirm: Option<Spanned<bool>>,
    /// The call's work goes on after it answers: it returns a job to poll, or starts a
    /// change that settles in the background (`returns: change`). Not allowed on get.
    #[serde(rename = "async")]
    #[schemars(
        with = "Option<RawAsync>",
        example = json!({ "pollWith": "getVideo", "typicalSeconds": 90 })
    )]
    pub async_: Option<Spanned<RawAsync>>,
    /// Whether the API honours an `Idempotency-Key` header (sent on non-get operations that
    /// spend or are async): `required` makes the header required, `unsupported` leaves it out.
    #[schemars(
        with = "Option<IdempotencyName>",
        extend("default" = "optional"),
        example = &"required"
    )]
    pub idempotency: Option<Spanned<String>>,
    /// Lint ids not to report for this operation.
    #[schemars(with = "Option<Vec<LintId>>", example = ["vague-summary"])]
    pub lint_allow: Option<Vec<Spanned<String>>>,
    /// The request body's media type (default `application/json`): e.g.
    /// `application/x-www-form-urlencoded`, `multipart/form-data`, `text/plain`,
    /// `application/octet-stream` — any `type/subtype`.
    #[schemars(with = "Option<String>", extend("pattern" = "^[!#$&^_.+0-9A-Za-z-]+/[!#$&^_.+0-9A-Za-z-]+( *;.*)?$"), example = &"application/x-www-form-urlencoded")]
    pub input_type: Option<Spanned<String>>,
    /// Whether the request body must be sent (OpenAPI `requestBody.required`).
    #[schemars(with = "Option<bool>", extend("default" = true), example = false)]
    pub input_required: Option<Spanned<bool>>,
    /// The success status (2xx, default 200); 204 means the response has no body.
    #[schemars(with = "Option<i64>", range(min = 200, max = 299), extend("default" = 200), example = 201)]
    pub status: Option<Spanned<i64>>,
    /// The success response's media type (default `application/json`); a binary type
    /// (`video/mp4`, `application/octet-stream`, …) gets `{ type: string, format: binary }`
    /// unless `output` says otherwise.
    #[schemars(with = "Option<String>", extend("pattern" = "^[!#$&^_.+0-9A-Za-z-]+/[!#$&^_.+0-9A-Za-z-]+( *;.*)?$"), example = &"text/plain")]
    pub output_type: Option<Spanned<String>>,
    /// Path parameters' descriptions and schemas (default: a required string).
    #[schemars(
        with = "Option<Vec<RawQueryParam>>",
        example = json!([{ "name": "format", "description": "Subtitle format.", "schema": { "enum": ["srt", "vtt"] } }])
    )]
    pub params: Option<Vec<Spanned<RawQueryParam>>>,
    /// Header parameters (never Authorization, Content-Type or Idempotency-Key: those
    /// are generated).
    #[schemars(
        with = "Option<Vec<RawQueryParam>>",
        example = json!([{ "name": "Prefer", "description": "wait=N holds the request open up to N seconds.", "schema": { "type": "string" } }])
    )]
    pub headers: Option<Vec<Spanned<RawQueryParam>>>,
    /// The operation is deprecated (OpenAPI `deprecated`).
    #[schemars(with = "Option<bool>", example = true)]
    pub deprecated: Option<Spanned<bool>>,
    /// OpenAPI tags, for grouping in documentation.
    #[schemars(with = "Option<Vec<String>>", example = ["uploads"])]
    pub tags: Option<Vec<Spanned<String>>>,
    /// Escape hatch: an OpenAPI Operation Object fragment merged over the generated
    /// operation (not `operationId`, `summary`, `description` or the `x-` safety hints,
    /// which connectorgen owns).
    #[schemars(
        with = "Option<serde_json::Map<String, serde_json::Value>>",
        example = json!({ "externalDocs": { "url": "https://docs.example.com/upload" } })
    )]
    pub openapi: Option<Spanned<serde_json::Value>>,
}

/// One entry of an operation's `query:` list.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawQueryParam {
    /// The parameter's name: letters, digits, `_`, `-` and `.`; unique within the operation.
    #[schemars(with = "String", example = &"limit")]
    pub name: Option<Spanned<String>>,
    /// What the parameter means, for the model.
    #[schemars(with = "Option<String>", example = "Items to return (1-100).")]
    pub description: Option<Spanned<String>>,
    /// Whether the call needs the parameter.
    #[schemars(extend("default" = false), example = true)]
    pub required: Option<bool>,
    /// JSON Schema of the parameter's value.
    #[schemars(
        with = "Option<serde_json::Value>",
        extend("type" = ["object", "boolean"], "default" = { "type": "string" }),
        example = json!({ "type": "integer", "minimum": 1, "maximum": 100 })
    )]
    pub schema: Option<Spanned<serde_json::Value>>,
    /// How the value is serialised (OpenAPI `style`): query `form` (default),
    /// `spaceDelimited`, `pipeDelimited`, `deepObject`; path `simple` (default), `label`,
    /// `matrix`; header `simple`.
    #[schemars(with = "Option<String>", example = &"form")]
    pub style: Option<Spanned<String>>,
    /// Whether a list or object is sent as separate values (OpenAPI `explode`); needs a
    /// list or object schema. `explode: false` sends `words=a,b`.
    #[schemars(with = "Option<bool>", example = false)]
    pub explode: Option<Spanned<bool>>,
}

/// `spends:` — the operation costs the person something.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawSpends {
    /// What one call spends: `credits` or `money`. (An action that cannot be undone but
    /// costs nothing is not a spend: write `confirm: true` instead.)
    #[schemars(with = "SpendKindName", example = &"credits")]
    pub kind: Option<Spanned<String>>,
    /// What one call costs, in words the person understands.
    #[schemars(with = "String", example = "Costs 1 generation credit.")]
    pub note: Option<Spanned<String>>,
    /// When only some calls cost: the condition, in words the model can check against
    /// the call it is about to make ("COSTS THE PERSON when confirm is true: …").
    #[schemars(with = "Option<String>", example = "confirm is true")]
    pub when: Option<Spanned<String>>,
}

/// `async:` — the operation's work goes on after it answers.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawAsync {
    /// The id of the operation that reports the work's progress: a get that neither
    /// spends nor is async.
    #[schemars(with = "String", example = &"getVideo")]
    pub poll_with: Option<Spanned<String>>,
    /// How long the work usually takes, in whole seconds.
    #[schemars(with = "Option<i64>", range(min = 1), example = 90)]
    pub typical_seconds: Option<Spanned<i64>>,
    /// What the call hands back: `job` (a job to poll; calling again starts a second one)
    /// or `change` (a change to something that exists, such as a cancel or a refund,
    /// which settles in the background; polling shows the result).
    #[schemars(
        with = "Option<ReturnsName>",
        extend("default" = "job"),
        example = &"change"
    )]
    pub returns: Option<Spanned<String>>,
}

/// Deeper than any manifest needs (JSON Schemas included), far below what hurts. Not a
/// flag: the deserialiser recurses once per level, so a much higher limit could exhaust
/// the stack instead of giving a diagnostic.
const MAX_DEPTH: usize = 64;
/// The least alias-expansion budget, in parser events: room for a shared schema reused
/// in every operation of a mid-sized manifest, while a "billion laughs" stops within
/// 0.1 s and 30 MB (README, "Guarantees").
const MIN_ALIAS_EXPANSION: usize = 100_000;
/// Text that aliases may add for each event of `--max-alias-expansion`, and of
/// `MIN_ALIAS_EXPANSION` without it (16 MB): room for shared descriptions, while a long
/// anchored string repeated by aliases stays under 30 MB of memory. It does not grow
/// with the file as the event budget does: that would let a 1 MB file of one long
/// string and its aliases take 50 MB.
const TEXT_PER_EXPANDED_EVENT: usize = 160;

/// The alias-expansion budget for a manifest of `len` bytes: the parser events that
/// aliases may replay in all (`--max-alias-expansion`, else a quarter of the file size
/// and at least `MIN_ALIAS_EXPANSION`).
pub fn alias_expansion_budget(len: usize, max_alias_expansion: Option<usize>) -> usize {
    max_alias_expansion.unwrap_or((len / 4).max(MIN_ALIAS_EXPANSION))
}

/// Parser settings for a manifest of `len` bytes (also what tests read YAML with, so they
/// see it exactly as a run does).
///
/// What aliases expand to is bounded, not how often they are used: the replayed events,
/// the nodes and the text after expansion all have budgets that grow with the file, so
/// any manifest under the size limit parses, a shared schema may be reused by thousands
/// of aliases, and a YAML bomb (which needs expansion far beyond its size, or deep
/// nesting) is stopped early. There is no alias count or alias-to-anchor ratio limit:
/// those refuse honest reuse and bound nothing an expansion budget does not.
pub fn parser_options(len: usize, max_alias_expansion: Option<usize>) -> serde_saphyr::Options {
    let replay = alias_expansion_budget(len, max_alias_expansion);
    let nodes = len.saturating_add(replay).saturating_add(1024);
    serde_saphyr::options! {
        budget: serde_saphyr::budget! {
            max_events: nodes.saturating_mul(2),
            max_nodes: nodes,
            // 4× the file: an explicit tag (`!!str`) counts its expanded spelling.
            max_total_scalar_bytes: len.saturating_mul(4).saturating_add(
                max_alias_expansion
                    .unwrap_or(MIN_ALIAS_EXPANSION)
                    .saturating_mul(TEXT_PER_EXPANDED_EVENT)
            ),
            max_depth: MAX_DEPTH,
            // The scanner's own cap on `[[[…` / `{{{…`, aligned with `max_depth` so a
            // deep flow collection reports the same limit as a deep block one.
            flow_nesting_limit: MAX_DEPTH,
            // Each alias is at least two bytes of the file, and what it expands to is
            // charged to the budgets above.
            max_aliases: usize::MAX,
            max_anchors: usize::MAX,
            enforce_alias_anchor_ratio: false,
            max_documents: 1,
        },
        alias_limits: serde_saphyr::alias_limits! {
            max_total_replayed_events: replay,
            max_replay_stack_depth: 16,
        },
        strict_booleans: true,
        legacy_octal_numbers: false,
        leading_zero_numbers_as_strings: true,
        underscored_numbers_as_strings: true,
        with_snippet: false,
    }
}

/// Parses manifest text into raw types, or the one structural problem that stopped the
/// parser. The default budgets.
pub fn parse(text: &str) -> Result<Spanned<RawManifest>, Box<Diagnostic>> {
    parse_with(text, None)
}

/// `parse`, with `max_alias_expansion` over the default alias-expansion budget
/// (`--max-alias-expansion`).
pub fn parse_with(
    text: &str,
    max_alias_expansion: Option<usize>,
) -> Result<Spanned<RawManifest>, Box<Diagnostic>> {
    serde_saphyr::from_str_with_options(text, parser_options(text.len(), max_alias_expansion))
        .map_err(|e| Box::new(to_diagnostic(&e, text)))
}

/// Parses any YAML text with the manifest's settings and budgets into plain JSON values
/// (the base OpenAPI document, when it is YAML).
pub fn parse_value(text: &str) -> Result<serde_json::Value, Box<Diagnostic>> {
    serde_saphyr::from_str_with_options(text, parser_options(text.len(), None))
        .map_err(|e| Box::new(to_diagnostic(&e, text)))
}

/// The byte range a location covers, for labels.
pub fn span_of(loc: &Location) -> Span {
    let span = loc.span();
    let offset = span.byte_offset().unwrap_or(0) as usize;
    let len = span.byte_len().unwrap_or(0) as usize;
    Span::from((offset, len))
}

/// The span of a spanned value (where it is referenced, i.e. where an alias was used).
pub fn span<T>(s: &Spanned<T>) -> Span {
    span_of(&s.referenced)
}

/// The byte position of a 1-based line and column (in characters), for parser errors
/// that carry no byte offset (the scanner's, e.g. a flow collection nested too deep).
pub fn span_at(text: &str, line: u64, column: u64) -> Span {
    let skip = usize::try_from(line.saturating_sub(1)).unwrap_or(usize::MAX);
    let start: usize = text.split_inclusive('\n').take(skip).map(str::len).sum();
    let nth = usize::try_from(column.saturating_sub(1)).unwrap_or(usize::MAX);
    let offset = text[start..]
        .char_indices()
        .nth(nth)
        .map_or(text.len(), |(i, _)| start + i);
    Span::from((offset, 0))
}

fn to_diagnostic(err: &YamlError, text: &str) -> Diagnostic {
    let span = match err.location() {
        Some(l) if l.span().byte_offset().is_none() => span_at(text, l.line(), l.column()),
        Some(l) => span_of(&l),
        None => Span::from((text.len(), 0)),
    };
    match err {
        // An error met while replaying an alias: judge it by what went wrong, and point
        // where the alias was used.
        YamlError::AliasError { error, .. } => match to_diagnostic(error, text) {
            Diagnostic::YamlLimit { message, .. } => Diagnostic::YamlLimit { message, span },
            other => other,
        },
        YamlError::SerdeUnknownField {
            field, expected, ..
        } => Diagnostic::UnknownKey {
            key: field.clone(),
            span,
            help: suggest(field, expected.iter().copied()),
        },
        YamlError::DuplicateMappingKey { key, .. } => Diagnostic::DuplicateKey {
            key: key.clone().unwrap_or_else(|| "(complex key)".to_string()),
            span,
        },
        YamlError::SerdeInvalidType {
            unexpected,
            expected,
            ..
        }
        | YamlError::SerdeInvalidValue {
            unexpected,
            expected,
            ..
        } => Diagnostic::WrongType {
            message: format!("found {unexpected}, expected {expected}"),
            span,
            help: Some(type_help(expected)),
        },
        YamlError::Unexpected { expected, .. } => Diagnostic::WrongType {
            message: format!("expected {expected} here"),
            span,
            help: Some(type_help(expected)),
        },
        YamlError::NonFiniteFloat { .. } => Diagnostic::WrongType {
            message: "infinity and NaN cannot be written in JSON".to_string(),
            span,
            help: Some("use a finite number, or quote the value to keep it as text".to_string()),
        },
        YamlError::Budget { breach, .. } => Diagnostic::YamlLimit {
            message: budget_message(breach),
            span,
        },
        YamlError::AliasReplayLimitExceeded {
            max_total_replayed_events,
            ..
        } => Diagnostic::YamlLimit {
            message: format!(
                "aliases expand to more than {max_total_replayed_events} parser events, \
                 {EXPANSION_BUDGET}; {RAISE_ALIASES}"
            ),
            span,
        },
        YamlError::AliasExpansionLimitExceeded {
            max_expansions_per_anchor,
            ..
        } => Diagnostic::YamlLimit {
            message: format!(
                "one anchor is expanded more than {max_expansions_per_anchor} times, the per-anchor limit; {UNALIAS}"
            ),
            span,
        },
        YamlError::AliasReplayStackDepthExceeded { max_depth, .. } => Diagnostic::YamlLimit {
            message: format!(
                "aliases nest inside aliases more than {max_depth} deep, the alias-nesting limit; {UNALIAS}"
            ),
            span,
        },
        YamlError::AliasReplayCounterOverflow { .. } => Diagnostic::YamlLimit {
            message: format!("aliases expand beyond what can be counted; {RAISE_ALIASES}"),
            span,
        },
        // The scanner stops a deep flow collection (`[[[[…`) before any event reaches the
        // depth budget: the same limit, reported the same way.
        YamlError::ExternalMessage { source, .. }
            if matches!(
                &**source,
                serde_saphyr::ExternalMessageSource::Parser(e)
                    if matches!(e.kind(), serde_saphyr::granit_parser::ErrorKind::RecursionLimitExceeded)
            ) =>
        {
            Diagnostic::YamlLimit {
                message: format!(
                    "nesting is more than {MAX_DEPTH} levels deep, over the nesting-depth limit of {MAX_DEPTH}; {FLATTEN}"
                ),
                span,
            }
        }
        _ => Diagnostic::YamlSyntax {
            message: plain_message(err),
            span,
        },
    }
}

fn type_help(expected: &str) -> String {
    if expected.contains("sequence") || expected.contains("Vec") {
        "write a list: one `- item` per line, or `[a, b]`".to_string()
    } else if expected.contains("struct") || expected.contains("map") {
        "write a mapping of `key: value` lines, indented under this key".to_string()
    } else if expected.contains("string") {
        "write text here; quote it if it looks like a number, a list or a mapping".to_string()
    } else if expected.contains("integer") || expected.contains("i64") {
        "write a whole number here, without quotes".to_string()
    } else if expected.contains("bool") {
        "write `true` or `false`".to_string()
    } else {
        format!("expected {expected}")
    }
}

/// How to get under the nesting limit.
// Not "move parts into `$defs`": a `#/$defs` reference does not resolve inside the
// generated OpenAPI documents (the `local-ref` lint).
const FLATTEN: &str = "flatten the structure (a JSON Schema rarely needs more than a few levels)";
/// How to get under an alias limit that no flag changes.
const UNALIAS: &str = "write the repeated part out in full instead of through an alias";
/// How to get under the alias budgets, or raise them when a real manifest needs more.
const RAISE_ALIASES: &str = "write the repeated part out in full instead of through an alias, \
    or, if the manifest is yours and legitimately needs more, raise the budget with \
    `--max-alias-expansion N`";
/// What the alias-expansion budget is, for messages.
const EXPANSION_BUDGET: &str = "the alias-expansion budget (`--max-alias-expansion`; by \
    default a quarter of the file size, at least 100,000)";

/// Which budget was breached, its value, and how to get under it (or raise it).
fn budget_message(breach: &BudgetBreach) -> String {
    match breach {
        BudgetBreach::Depth { depth } => format!(
            "nesting is {depth} levels deep, over the nesting-depth limit of {MAX_DEPTH}; {FLATTEN}"
        ),
        BudgetBreach::ScalarBytes { total_scalar_bytes } => format!(
            "{total_scalar_bytes} bytes of text after alias expansion, over the text budget \
             (4 times the file size plus {TEXT_PER_EXPANDED_EVENT} bytes per event of \
             `--max-alias-expansion`, 16,000,000 bytes by default); {RAISE_ALIASES}"
        ),
        BudgetBreach::Nodes { nodes } => format!(
            "{nodes} YAML nodes after alias expansion, over the node budget (the file size plus \
             {EXPANSION_BUDGET}); {RAISE_ALIASES}"
        ),
        BudgetBreach::Events { events } => format!(
            "{events} parser events after alias expansion, over the event budget (twice the node \
             budget: the file size plus {EXPANSION_BUDGET}); {RAISE_ALIASES}"
        ),
        BudgetBreach::Documents { .. } => {
            "more than one YAML document (`---`); a manifest is one document".to_string()
        }
        other => format!("{other:?}; {RAISE_ALIASES}"),
    }
}

/// The parser's message without its own location suffix (our label carries the place).
fn plain_message(err: &YamlError) -> String {
    let text = err.to_string();
    match text.find(" at line ") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}
