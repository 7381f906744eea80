//! The manifest file as written: raw serde types for `connector.yaml`.
//!
//! Takes: the manifest text. Returns: a `RawManifest` whose every field that validation
//! points at carries its YAML location (`Spanned`), or one `Diagnostic` when the text is
//! not YAML of the right shape (syntax, wrong type, unknown or duplicate key).
//! Must never: apply defaults or judge values — that is `validate/`'s job, so that
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
use serde_saphyr::Spanned;

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
                { "required": ["schemas"] }, { "required": ["servers"] }, { "required": ["errors"] },
                { "required": ["tags"] }
            ] },
            "properties": {
                "service": { "required": ["dashboardUrl"] },
                "operations": { "items": {
                    "required": ["operation"],
                    "not": { "anyOf": [
                        { "required": ["method"] }, { "required": ["path"] },
                        { "required": ["input"] }, { "required": ["output"] },
                        { "required": ["query"] }, { "required": ["inputType"] },
                        { "required": ["inputRequired"] }, { "required": ["status"] },
                        { "required": ["outputType"] }, { "required": ["params"] },
                        { "required": ["headers"] }, { "required": ["deprecated"] },
                        { "required": ["tags"] }, { "required": ["openapi"] }
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
    /// The provider's own OpenAPI document (3.0, 3.1 or 3.2, JSON or YAML), relative to this
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
    pub operations: Option<Spanned<Vec<RawEntry>>>,
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
    /// Inline mode: what each tag the operations use (`tags:` on an operation) groups,
    /// written to the document's `tags` list with its description.
    #[schemars(
        with = "Option<std::collections::BTreeMap<String, String>>",
        example = json!({ "transcripts": "Transcription jobs and their results." })
    )]
    pub tags: Option<Spanned<IndexMap<String, Spanned<String>>>>,
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
    /// What `connectorgen probe` may call: the provider's sandbox.
    #[schemars(
        with = "Option<RawManifestProbe>",
        example = json!({ "sandboxUrl": "https://sandbox.api.vidgen.example" })
    )]
    pub probe: Option<Spanned<RawManifestProbe>>,
    /// How `connectorgen serve --auth-issuer` names the OAuth scopes of the safety classes
    /// (docs/serve.md, "Remote deployment"). By default `<service>:read`,
    /// `<service>:change` and `<service>:spend`, the service name in lower-case kebab.
    #[schemars(
        with = "Option<RawOAuth>",
        example = json!({ "scopes": { "read": "videos.read", "change": "videos.write", "spend": "videos.buy" } })
    )]
    pub oauth: Option<Spanned<RawOAuth>>,
    /// The spending limits `connectorgen serve` holds each person to, unless its command
    /// line names its own (`--budget`, which replaces this list): `UNIT=LIMIT/WINDOW`, the
    /// unit `credits`, `money` (in the operations' `currency`) or `calls` (paid calls,
    /// their amount known or not), the window `hour`, `day`, `week` or `month` (calendar
    /// windows in UTC). A call that would pass one is not sent.
    #[schemars(
        with = "Option<Vec<BudgetText>>",
        example = json!(["credits=20/day", "calls=10/hour"])
    )]
    pub budgets: Option<Spanned<Vec<Spanned<String>>>>,
    /// What every operation's MCP tool does differently unless its own `mcp:` says
    /// otherwise: `output`, how much of the answer's schema the tool declares.
    #[schemars(
        with = "Option<RawMcpDefaults>",
        example = json!({ "output": "summary" })
    )]
    pub mcp: Option<Spanned<RawMcpDefaults>>,
}

/// The top-level `mcp:` key: the defaults of the operations' `mcp:`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawMcpDefaults {
    /// Every tool's `outputSchema` (default `full`), as an operation's `mcp.output`.
    #[schemars(
        with = "Option<names::McpOutputName>",
        extend("default" = "full"),
        example = &"summary"
    )]
    pub output: Option<Spanned<String>>,
}

/// The top-level `oauth:` key.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawOAuth {
    /// The scope each safety class needs, as the authorization server names it: a free
    /// read needs `read`; a write or an action that cannot be undone, `change`; a call
    /// that spends, `change` and `spend`. Each one OAuth scope (printable ASCII without
    /// spaces, `"` or a backslash), the three different.
    #[schemars(
        with = "Option<RawScopes>",
        example = json!({ "read": "videos.read", "spend": "videos.buy" })
    )]
    pub scopes: Option<Spanned<RawScopes>>,
}

/// `oauth.scopes`: one scope name per safety class; a class left out keeps its default.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawScopes {
    /// Free reads (default `<service>:read`).
    #[schemars(with = "Option<String>", extend("pattern" = "^[!#-\\[\\]-~]+$"), example = &"videos.read")]
    pub read: Option<Spanned<String>>,
    /// Writes and actions that cannot be undone (default `<service>:change`).
    #[schemars(with = "Option<String>", extend("pattern" = "^[!#-\\[\\]-~]+$"), example = &"videos.write")]
    pub change: Option<Spanned<String>>,
    /// Calls that spend, besides `change` (default `<service>:spend`).
    #[schemars(with = "Option<String>", extend("pattern" = "^[!#-\\[\\]-~]+$"), example = &"videos.buy")]
    pub spend: Option<Spanned<String>>,
}

/// The top-level `probe:` key: where `connectorgen probe` checks the provider's promises.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawManifestProbe {
    /// The provider's sandbox (same rules as `publicUrl`): `probe` calls it without
    /// `--live`, and without `--base-url`. Nothing else counts as a sandbox: not a server
    /// whose description says "sandbox".
    #[schemars(
        with = "Option<String>",
        example = "https://sandbox.api.vidgen.example"
    )]
    pub sandbox_url: Option<Spanned<String>>,
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
pub(crate) type RawLints = IndexMap<Spanned<String>, Spanned<RawLintSetting>>;

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
    /// description-too-long: the most characters the description the model reads may
    /// have (default 300); mcp-tool-too-large: the most bytes of compact JSON one MCP tool
    /// may have (default 8000). No other lint takes it.
    #[schemars(
        range(min = 1),
        extend("default" = crate::model::DEFAULT_DESCRIPTION_MAX),
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
    /// for the link llms.txt gives the model (same rules as `dashboardUrl`). Without it,
    /// llms.txt links no OpenAPI document: the API's host is not where it is published.
    #[schemars(
        with = "Option<String>",
        example = "https://vidgen.example/connector/openapi.json"
    )]
    pub spec_url: Option<Spanned<String>>,
    /// The provider's API documentation, for llms.txt's Docs link (same rules as
    /// `dashboardUrl`). Base mode: defaults to the document's `externalDocs.url`.
    #[schemars(with = "Option<String>", example = "https://docs.vidgen.example/api")]
    pub docs_url: Option<Spanned<String>>,
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
    /// The environment variable `connectorgen serve` reads the credential from (default
    /// `<SERVICE>_TOKEN`: `service.name` upper-cased, other characters as `_`).
    #[schemars(with = "Option<String>", extend("pattern" = "^[A-Za-z_][A-Za-z0-9_]*$"), example = &"VIDGEN_API_KEY")]
    pub env: Option<Spanned<String>>,
    /// How the credential is written where it goes, `{value}` standing for the
    /// variable's content: `"ShippoToken {value}"` for `Authorization: ShippoToken <token>`.
    /// Default: the value itself (`bearer`: `Bearer {value}`).
    #[schemars(with = "Option<String>", extend("pattern" = "\\{value\\}"), example = &"ShippoToken {value}")]
    pub format: Option<Spanned<String>>,
    /// A credential of several parts sent together (a client id and a secret), each from
    /// its own environment variable, instead of `scheme`/`in`/`name`/`env`/`format`. Base
    /// mode: the parts of the document's security requirement are read from it; list a
    /// part here (by `securityScheme`) to name its variable or format, or add parts the
    /// document does not declare (`in`/`name`: a key in a header parameter, a body field).
    #[schemars(
        with = "Option<Vec<RawCredentialPart>>",
        length(min = 1),
        example = json!([
            { "in": "header", "name": "PLAID-CLIENT-ID", "env": "PLAID_CLIENT_ID" },
            { "in": "header", "name": "PLAID-SECRET", "env": "PLAID_SECRET" }
        ])
    )]
    pub parts: Option<Spanned<Vec<Spanned<RawCredentialPart>>>>,
    /// Each person connects their own credential, kept encrypted by `serve`, instead of
    /// all calls going out with the one credential it starts with (docs/serve.md, "Each
    /// person's own account"). Needs `serve --http --auth-issuer`.
    #[schemars(
        with = "Option<RawPerPerson>",
        example = json!({ "connect": "apiKey", "checkWith": "getAccount" })
    )]
    pub per_person: Option<Spanned<RawPerPerson>>,
}

/// `auth.perPerson`: how a person connects their own provider account.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawPerPerson {
    /// `apiKey`: the person enters their key on a page `serve` serves, checked with
    /// `checkWith` before it is kept. `oauth`: `serve` signs the person in at the
    /// provider (OAuth 2 authorization code with PKCE) and keeps their tokens.
    #[schemars(with = "Option<PerPersonConnectName>", example = &"apiKey")]
    pub connect: Option<Spanned<String>>,
    /// `apiKey`: the exposed free read (a `get`, or `read: true`, that neither spends nor
    /// is async, taking no argument) that a key must answer before it is kept.
    #[schemars(with = "Option<String>", example = &"getAccount")]
    pub check_with: Option<Spanned<String>>,
    /// `oauth`: the provider's authorization endpoint (default: the document's
    /// `authorizationCode` flow).
    #[schemars(with = "Option<String>", example = &"https://auth.vidgen.example/authorize")]
    pub authorization_url: Option<Spanned<String>>,
    /// `oauth`: the provider's token endpoint (default: the document's
    /// `authorizationCode` flow).
    #[schemars(with = "Option<String>", example = &"https://auth.vidgen.example/token")]
    pub token_url: Option<Spanned<String>>,
    /// `oauth`: the provider's token revocation endpoint (RFC 7009), called when a person
    /// disconnects; absent: the tokens are only forgotten.
    #[schemars(with = "Option<String>", example = &"https://auth.vidgen.example/revoke")]
    pub revocation_url: Option<Spanned<String>>,
    /// `oauth`: the scopes asked of the provider (default: every scope of the
    /// document's `authorizationCode` flow).
    #[schemars(with = "Option<Vec<String>>", example = json!(["videos.write"]))]
    pub scopes: Option<Spanned<Vec<Spanned<String>>>>,
}

/// One part of a credential (`auth.parts`): a document's security scheme
/// (`securityScheme`, base mode), or a place of its own (`in` and `name`).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawCredentialPart {
    /// Base mode: the `components.securitySchemes` key of the document's scheme this
    /// part is (one of the security requirement's).
    #[schemars(with = "Option<String>", example = &"clientId")]
    pub security_scheme: Option<Spanned<String>>,
    /// Where it goes: `header`, `query`, `cookie`, or `body` (a top-level field of a JSON
    /// or form body, filled in on every operation whose body has it).
    #[serde(rename = "in")]
    #[schemars(with = "Option<CredentialPartInName>", example = &"header")]
    pub in_: Option<Spanned<String>>,
    /// The header, query parameter, cookie or body field that carries it.
    #[schemars(with = "Option<String>", example = &"PLAID-SECRET")]
    pub name: Option<Spanned<String>>,
    /// The environment variable `connectorgen serve` reads it from (default
    /// `<SERVICE>_` and the name upper-cased, other characters as `_`).
    #[schemars(with = "Option<String>", extend("pattern" = "^[A-Za-z_][A-Za-z0-9_]*$"), example = &"PLAID_SECRET")]
    pub env: Option<Spanned<String>>,
    /// How it is written, `{value}` standing for the variable's content (default: the
    /// value itself).
    #[schemars(with = "Option<String>", extend("pattern" = "\\{value\\}"), example = &"Token {value}")]
    pub format: Option<Spanned<String>>,
}

/// One entry of `operations:`, boxed: validation takes the list and drops each entry as
/// soon as it is checked, so that the model of the next ones is made in its memory (a
/// build's memory peaked at the end of validation; validate/context.rs, `Checked`).
pub type RawEntry = Box<Spanned<RawOperation>>;

/// One entry of `operations:`.
// (Not in the doc comment, which is the JSON Schema's description.) The keys most
// operations leave out and whose values are large (`spends`, `confirm`, `async`,
// `idempotency`, `openapi`, `probe`: about half of the entry's 3 KB, spans included) are
// boxed, so that an absent one takes a pointer: the whole list is held from the parse
// until validation starts (12 MB less at 10,000 operations).
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
    pub spends: Option<Box<Spanned<RawSpends>>>,
    /// The call cannot be undone (a delete, a cancel, a send): `true` makes the model get
    /// the person's explicit yes before each call, even when it costs nothing. Default
    /// `true` on delete (write `false` for, e.g., deleting a draft), `false` otherwise.
    /// `false` also tells OpenAI the call is routine. A call that spends always needs
    /// their yes; `confirm: true` on it adds that it is permanent. Not allowed on get.
    /// `confirm: { when: "type is rebuild or restore" }`: only some calls cannot be undone
    /// (one endpoint for many actions); the permanence sentence names the condition, and
    /// the person's yes is still asked before each call.
    #[schemars(with = "Option<ConfirmSetting>", example = true)]
    pub confirm: Option<Box<Spanned<RawConfirm>>>,
    /// The call is a free, side-effect-free read whatever its method (an RPC-style API
    /// that reads with a POST, a search whose query is a body): it may be the poll
    /// target of an async operation, every target marks it read-only, and the model is
    /// told it is free and safe to repeat. A get is always a read. Not allowed with
    /// `spends`, `async` or `confirm: true`.
    #[schemars(with = "Option<bool>", extend("default" = false), example = true)]
    pub read: Option<Spanned<bool>>,
    /// The call's work goes on after it answers: it returns a job to poll, or starts a
    /// change that settles in the background (`returns: change`). Not allowed on get.
    #[serde(rename = "async")]
    #[schemars(
        with = "Option<RawAsync>",
        example = json!({ "pollWith": "getVideo", "typicalSeconds": 90 })
    )]
    pub async_: Option<Box<Spanned<RawAsync>>>,
    /// How the provider recognises a retry, so that it returns the first result instead
    /// of charging again. The short forms mean an `Idempotency-Key` header (added on
    /// non-get operations that spend or are async): `optional`, or `required`. A mapping
    /// names the provider's own key: `{ header: Acme-Request-Id }`, `{ query: request_id }`
    /// or `{ bodyField: idempotency_key }` (a top-level property of the body), with
    /// `required: true` when the provider refuses a call without it. `inherent`: a repeat
    /// cannot duplicate the call by its nature (a retry is safe, nothing is added);
    /// `unsupported`: the provider recognises no retry. Inline default `optional`; base
    /// default: the key the document declares, else `unsupported` with a warning.
    #[schemars(with = "Option<IdempotencySetting>", example = &"required")]
    pub idempotency: Option<Box<Spanned<serde_json::Value>>>,
    /// Lint ids not to report for this operation.
    #[schemars(with = "Option<Vec<LintId>>", example = ["vague-summary"])]
    pub lint_allow: Option<Vec<Spanned<String>>>,
    /// MCP argument names: a parameter's or top-level body property's HTTP name → the
    /// name of its argument in `mcp-tools.json` (1 to 64 letters, digits, `_`, `.` or
    /// `-`). Without it, names outside that set are mapped by the documented rule
    /// (`DateSent<` → `DateSent_lt`).
    #[schemars(
        with = "Option<std::collections::BTreeMap<String, String>>",
        extend("additionalProperties" = { "type": "string", "pattern": "^[a-zA-Z0-9_.-]{1,64}$" }),
        example = json!({ "DateSent<": "sentBefore" })
    )]
    pub args: Option<IndexMap<Spanned<String>, Spanned<String>>>,
    /// Parameters the connector fills in on every call, by HTTP name: never MCP arguments,
    /// so the model neither sees nor sends them (an account id from the connection, a
    /// partner header). The value comes from an environment variable of the server
    /// (`env`) or is written here (`value`).
    #[schemars(
        with = "Option<std::collections::BTreeMap<String, RawFixed>>",
        example = json!({ "AccountSid": { "env": "ACCOUNT_SID" } })
    )]
    pub fixed: Option<IndexMap<Spanned<String>, Spanned<RawFixed>>>,
    /// The MCP tool only (`mcp-tools.json` and `serve`), never the HTTP: `omit` lists
    /// optional inputs the tool leaves out, `output` how much of the answer's schema it
    /// declares, to make a heavy tool lighter.
    #[schemars(
        with = "Option<RawMcp>",
        example = json!({ "omit": ["metadata", "billing_details.address.line2"], "output": "summary" })
    )]
    pub mcp: Option<Spanned<RawMcp>>,
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
    pub openapi: Option<Box<Spanned<serde_json::Value>>>,
    /// What `connectorgen probe` sends when it checks this operation against a sandbox:
    /// an example call. Without it, probe takes the examples of the tool's input schema
    /// (the document's), or skips the checks that need this operation.
    #[schemars(
        with = "Option<RawProbe>",
        example = json!({ "input": { "prompt": "A two-second test pattern" } })
    )]
    pub probe: Option<Box<Spanned<RawProbe>>>,
    /// The paid operation whose purchase a successful call of this one cancels or refunds
    /// (its id). The purchase is the one whose job id this call takes as its last path
    /// parameter (`POST /v1/videos/{id}/refund`), so the paid operation must start jobs;
    /// `serve` gives its amount back to the person's budgets once the provider answers
    /// this call with success.
    #[schemars(with = "Option<String>", example = &"createVideo")]
    pub refunds: Option<Spanned<String>>,
}

/// An operation's `probe:` key.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawProbe {
    /// The tool call's arguments, by their names in `mcp-tools.json` (a mapping). Path
    /// parameters that name a job (a poll target's id) are filled in by probe from the
    /// job it started.
    #[schemars(
        with = "serde_json::Map<String, serde_json::Value>",
        example = json!({ "prompt": "A two-second test pattern", "aspectRatio": "16:9" })
    )]
    pub input: Option<Spanned<serde_json::Value>>,
}

/// An operation's `mcp:` key: what only its MCP tool does differently.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawMcp {
    /// Optional inputs left out of the tool, as dotted paths: the first name is a
    /// parameter's or a body property's HTTP name (as `args:` and `fixed:` keys), each
    /// next one a property of the value before it, through `$ref`s, `allOf`/`anyOf`/
    /// `oneOf` branches and array items (`lines.tax` is the `tax` of each item of
    /// `lines`). A required property, and an input the server fills in (a credential,
    /// `fixed:`, the retry key), can never be omitted. The OpenAPI outputs keep them.
    #[schemars(
        with = "Option<Vec<String>>",
        example = json!(["metadata", "billing_details.address.line2"])
    )]
    pub omit: Option<Vec<Spanned<String>>>,
    /// How much of the answer's schema the tool declares as its `outputSchema` (default:
    /// the manifest's `mcp.output`, else `full`): `full`, all of it; `summary`, only the
    /// top-level properties the safety text and the poll read (the job's id and status
    /// where `async` says, `id`, `status`, `state`, `amount`, `currency`) with their
    /// types; `none`, no `outputSchema`. `serve` checks answers against what the tool
    /// declares; the OpenAPI outputs keep the whole schema.
    #[schemars(
        with = "Option<names::McpOutputName>",
        extend("default" = "full"),
        example = &"summary"
    )]
    pub output: Option<Spanned<String>>,
}

/// One entry of `fixed:`: where the value comes from (exactly one key).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("minProperties" = 1, "maxProperties" = 1))]
pub struct RawFixed {
    /// The environment variable of the server process that holds the value.
    #[schemars(with = "Option<String>", extend("pattern" = "^[A-Za-z_][A-Za-z0-9_]*$"), example = &"ACCOUNT_SID")]
    pub env: Option<Spanned<String>>,
    /// The value itself.
    #[schemars(with = "Option<String>", example = &"partner-42")]
    pub value: Option<Spanned<String>>,
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
    /// Whose money one call moves: `person` (default: their own) or `customer` (a
    /// seller's API that charges, refunds or pays the person's customer, a third party;
    /// the person authorises it on the customer's behalf).
    #[schemars(with = "Option<PayerName>", extend("default" = "person"), example = &"customer")]
    pub payer: Option<Spanned<String>>,
    /// What one call spends, in the spend's unit (credits, or the `currency`): a number
    /// (`amount: 1`), or computed from an input of the call, `{ argument, scale }` (the
    /// input's value times `scale`: `{ argument: amount_cents, scale: 0.01 }`, a rate per
    /// second `{ argument: seconds, scale: 0.05 }`). Absent: the charge is real but its
    /// size is not known before the call. `serve` states it in the question and counts it
    /// against the budgets (`budgets:`, `--budget`).
    #[schemars(with = "Option<AmountSetting>", example = 1)]
    pub amount: Option<Spanned<serde_json::Value>>,
    /// The ISO 4217 code of a money `amount` (`USD`, `EUR`); required with an `amount` on
    /// `kind: money`, not allowed on `kind: credits`.
    #[schemars(with = "Option<String>", extend("pattern" = "^[A-Z]{3}$"), example = &"USD")]
    pub currency: Option<Spanned<String>>,
}

/// `confirm:` — `true`, `false`, or `{ when: … }` (permanent only under a condition).
#[derive(Debug)]
pub enum RawConfirm {
    Flag(bool),
    When(RawConfirmWhen),
}

impl RawConfirm {
    /// Whether the call may be permanent (`true`, or a condition).
    pub fn value(&self) -> bool {
        !matches!(self, RawConfirm::Flag(false))
    }
}

/// `confirm: { when: … }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawConfirmWhen {
    /// The condition under which a call cannot be undone, in words the model can check
    /// against the call it is about to make.
    pub when: Option<Spanned<String>>,
}

impl<'de> Deserialize<'de> for RawConfirm {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = RawConfirm;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("`true`, `false` or `{ when: … }`")
            }
            fn visit_bool<E>(self, v: bool) -> Result<RawConfirm, E> {
                Ok(RawConfirm::Flag(v))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<RawConfirm, A::Error> {
                // The struct's own derive reads the mapping, so `when` keeps its span and
                // an unknown key is reported like any other.
                RawConfirmWhen::deserialize(serde::de::value::MapAccessDeserializer::new(map))
                    .map(RawConfirm::When)
            }
        }
        d.deserialize_any(Visitor)
    }
}

/// `async:` — the operation's work goes on after it answers.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawAsync {
    /// The id of the operation that reports the work's progress: a read (a get, or an
    /// operation declared `read: true`) that neither spends nor is async.
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
    /// For a job: the property of the call's JSON answer that holds the job's id, or the
    /// path to it inside an envelope, names joined by dots (`job.id`). Without it the id
    /// is found: the poll target's path parameter (or the id property its body requires),
    /// `id`, `object_id`, `<resource>_id` or `<resource>Id` (the resource named by the poll
    /// target's path, `/labels/{id}` → `label_id`), the first of these the answer's schema
    /// has, at the top or inside a one-property envelope. Written, it must be in the
    /// answer's schema.
    #[schemars(with = "Option<String>", example = &"object_id")]
    pub id_field: Option<Spanned<String>>,
    /// For a job: where the poll target's answer says how the job stands and which values
    /// end it, for a client that follows the job as a task (`serve`, the tasks
    /// extension). Without it: `field: status`, and the usual words for a finished job
    /// (`succeeded`, `completed`, `done`…) and a failed one (`failed`, `error`,
    /// `expired`…), narrowed to the values the poll target's answer schema lists.
    #[schemars(
        with = "Option<RawJobStatus>",
        example = json!({ "field": "status", "done": ["succeeded"], "failed": ["failed"] })
    )]
    pub status: Option<Spanned<RawJobStatus>>,
    /// For a job: the operation that cancels it, called with the job's id as the poll
    /// target is, when a client cancels the task (`tasks/cancel`). A write, not a read;
    /// like any call, it asks the person first when it cannot be undone.
    #[schemars(with = "Option<String>", example = &"cancelVideo")]
    pub cancel_with: Option<Spanned<String>>,
}

/// `async.status:` — where a job's state is in its poll target's answer.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawJobStatus {
    /// The property of the poll target's JSON answer that holds the state, or the path to
    /// it inside an envelope (`job.status`).
    #[schemars(with = "Option<String>", extend("default" = "status"), example = &"state")]
    pub field: Option<Spanned<String>>,
    /// The values that mean the job finished: its poll answer is the call's result.
    #[schemars(with = "Option<Vec<String>>", example = ["succeeded"])]
    pub done: Option<Vec<Spanned<String>>>,
    /// The values that mean the job ended without a result.
    #[schemars(with = "Option<Vec<String>>", example = ["failed", "cancelled"])]
    pub failed: Option<Vec<Spanned<String>>>,
}

mod flow_json;
mod names;
mod spans;
mod yaml;

pub use names::*;
pub use yaml::{parse, parse_fast, parse_plain, parse_value, parse_with, parser_options};
pub(crate) use yaml::{span, span_of};
