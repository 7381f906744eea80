//! The validated connector: what the renderers may rely on.
//!
//! Takes: nothing (built only by `validate/`). Returns: plain domain types with every
//! default applied and every cross-reference checked, so renderers never re-check.
//! Must never: derive `Deserialize` or keep an `Option` for something that has a default.
//! Remaining `Option`s mean "absent" in the output, not "not decided yet".
//!
//! One shape for both kinds of manifest: an operation is an OpenAPI Operation Object
//! (`http`: parameters, request body, responses, … exactly as they will be written)
//! plus the safety layer connectorgen exists for (spends, async, idempotency) and the
//! text the model reads. Inline manifests are lowered to that shape by validation; base
//! mode copies it from the provider's document. Every stage after validation is written
//! once for both.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::diagnostics::Span;

/// A whole connector, ready to render.
#[derive(Debug, Clone)]
pub struct Connector {
    pub service: Service,
    pub auth: Auth,
    /// Everything of the OpenAPI document but the operations themselves.
    pub document: Document,
    /// In manifest order: outputs list operations in the order the author wrote them.
    pub operations: Vec<Operation>,
    /// Lint levels from `lint:` over the defaults.
    pub lint: LintConfig,
    /// Which outputs to produce, in a fixed order, without repeats.
    pub targets: Vec<Target>,
    /// `templates:` as written (relative to the manifest) and where, if given.
    pub templates_dir: Option<(String, Span)>,
    /// Inline mode: where each of `schemas:` is defined, for findings about them.
    pub schema_spans: Vec<(String, Span)>,
    /// `probe.sandboxUrl`: the provider's sandbox, where `connectorgen probe` may make
    /// calls without `--live` (checked like `publicUrl`, without a trailing slash).
    pub sandbox_url: Option<String>,
    /// `oauth.scopes`: the scope names the author chose for the safety classes (a class
    /// left out keeps the default `serve` derives from the service name).
    pub oauth_scopes: OAuthScopes,
    /// `auth.perPerson`: each person connects their own credential; `None`: every call
    /// goes out with the one credential `serve` starts with.
    pub per_person: Option<PerPerson>,
    /// `budgets:`: the spending limits `serve` enforces per person unless its command line
    /// names its own (`--budget`), in the order written.
    pub budgets: Vec<crate::budget::Budget>,
}

/// The tool `serve` adds for a connector with `auth.perPerson`: the link to the person's
/// own connect page. No operation may take its name.
pub const CONNECT_TOOL: &str = "connectAccount";

/// The ways a person connects their own credential (`auth.perPerson.connect`).
pub(crate) const PER_PERSON_CONNECT: [&str; 2] = ["apiKey", "oauth"];

/// `auth.perPerson` as checked: how each person connects the connection's credential.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PerPerson {
    /// The person enters their key on `serve`'s page; a key is kept only once the free
    /// read `check_with` (an exposed operation's id, taking no argument) answered it.
    ApiKey { check_with: String },
    /// `serve` is the provider's OAuth client (authorization code with PKCE) and keeps
    /// each person's tokens; the access token is sent as the connection's credential.
    OAuth(ProviderOAuth),
}

/// The provider's OAuth endpoints and the scopes `serve` asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderOAuth {
    pub authorization_url: String,
    pub token_url: String,
    pub revocation_url: Option<String>,
    pub scopes: Vec<String>,
}

/// `oauth.scopes` as written and checked: each one OAuth scope, the three different.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OAuthScopes {
    pub read: Option<String>,
    pub change: Option<String>,
    pub spend: Option<String>,
}

impl OAuthScopes {
    /// The read, change and spend scopes: as written, else `<service>:read`,
    /// `<service>:change` and `<service>:spend`, the service name in lower-case kebab
    /// (`VidGen` → `vidgen`, `Acme Payments` → `acme-payments`).
    pub fn resolved(&self, service: &str) -> [String; 3] {
        let mut kebab = String::new();
        for c in service.chars() {
            if c.is_ascii_alphanumeric() {
                kebab.push(c.to_ascii_lowercase());
            } else if !kebab.ends_with('-') {
                kebab.push('-');
            }
        }
        let kebab = kebab.trim_matches('-');
        let or = |own: &Option<String>, class: &str| {
            own.clone().unwrap_or_else(|| format!("{kebab}:{class}"))
        };
        [
            or(&self.read, "read"),
            or(&self.change, "change"),
            or(&self.spend, "spend"),
        ]
    }
}

/// The OpenAPI 3.1 document around the operations (a 3.0 base is upgraded on the way in).
#[derive(Debug, Clone)]
pub struct Document {
    /// The top-level object in output order: `openapi`, `info`, `servers`, … and
    /// `components` (only what the exposed operations reach). Its `paths` maps each
    /// exposed path, in manifest order of first appearance, to the path item's keys
    /// other than its operations (shared `parameters`, `servers`, …; usually none).
    pub root: Map<String, Value>,
}

impl Document {
    /// The value at a local reference (`#/components/schemas/X`), if it resolves.
    pub fn resolve(&self, reference: &str) -> Option<&Value> {
        resolve_local(&self.root, reference)
    }

    /// The path item keys shared by the operations of `path` (`parameters`, `servers`, …).
    pub(crate) fn path_item(&self, path: &str) -> Option<&Map<String, Value>> {
        self.root.get("paths")?.get(path)?.as_object()
    }

    /// The Server Objects `op` is called at, by OpenAPI's rules: its own `servers`, else
    /// its path item's, else the document's (the first is the one a client uses); empty
    /// when none applies. The one reading of those rules: the request mapping, the
    /// `mixed-servers` check and llms.txt all ask it.
    pub(crate) fn servers_of<'a>(&'a self, op: &'a Operation) -> &'a [Value] {
        op.http
            .get("servers")
            .or_else(|| self.path_item(&op.path).and_then(|i| i.get("servers")))
            .or_else(|| self.root.get("servers"))
            .and_then(Value::as_array)
            .map_or(&[], Vec::as_slice)
    }

    /// Where `op` is called when that is not `base` (the Base URL llms.txt gives, without
    /// a trailing slash): its first server's URL, variables at their defaults, as the
    /// document writes it; none when it is `base` up to a trailing slash and the case of
    /// the scheme and host, or when no server applies.
    pub(crate) fn other_server(&self, op: &Operation, base: &str) -> Option<String> {
        let url = server_url(self.servers_of(op).first()?);
        (!same_server(&url, base)).then_some(url)
    }
}

/// Whether two server URLs are one: equal up to a trailing slash and the case of the
/// scheme and host.
fn same_server(a: &str, b: &str) -> bool {
    origin(a) == origin(b) && path_of(a).trim_end_matches('/') == path_of(b).trim_end_matches('/')
}

/// A Server Object's URL with each `{variable}` at its default (not checked).
pub(crate) fn server_url(server: &Value) -> String {
    let mut url = server
        .get("url")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    for (name, variable) in server
        .get("variables")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        if let Some(default) = variable.get("default").and_then(Value::as_str) {
            url = url.replace(&format!("{{{name}}}"), default);
        }
    }
    url
}

/// The origin of a URL, `scheme://host[:port]` in lower case; a relative URL as written
/// (it is resolved against wherever the document is served, which is not known here).
pub(crate) fn origin(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => {
            let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
            format!("{scheme}://{authority}").to_ascii_lowercase()
        }
        None => url.to_string(),
    }
}

/// What follows the origin of an absolute URL (`/v2` of `https://api.example/v2`);
/// a relative URL whole.
pub(crate) fn path_of(url: &str) -> &str {
    match url.split_once("://") {
        Some((_, rest)) => rest.find('/').map_or("", |at| &rest[at..]),
        None => url,
    }
}

/// The value a local reference (`#/a/b`, segments percent- and `~`-escaped) points at
/// in the document whose top level is `root`, if it resolves.
pub(crate) fn resolve_local<'a>(
    root: &'a Map<String, Value>,
    reference: &str,
) -> Option<&'a Value> {
    let pointer = reference.strip_prefix('#')?;
    let mut segments = pointer.split('/');
    if segments.next() != Some("") {
        return None;
    }
    let first = unescape(segments.next()?);
    let mut value = root.get(&first)?;
    for segment in segments {
        let segment = unescape(segment);
        value = match value {
            Value::Object(map) => map.get(&segment)?,
            Value::Array(list) => list.get(segment.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(value)
}

/// Which OpenAPI a base document is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenapiVersion {
    V30,
    V31,
    /// Read, and written out as 3.1 (`validate/base/v32.rs`).
    V32,
}

/// An agent platform connectorgen writes for, and the files it gets.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    clap::ValueEnum,
    strum::VariantArray,
    strum::IntoStaticStr,
    strum::EnumString,
)]
#[strum(serialize_all = "lowercase")]
pub enum Target {
    /// openapi.json (OpenAPI 3.1), llms.txt, descriptions.md
    Muse,
    /// mcp-tools.json: the `tools` of an MCP tools/list result
    Mcp,
    /// openapi.openai.json: OpenAPI 3.1 within OpenAI GPT Actions' limits
    Openai,
    /// openapi.3.0.json: for tools that only read OpenAPI 3.0
    Openapi30,
}

impl Target {
    /// The files this target writes, in the order `render` adds them.
    pub fn files(self) -> &'static [&'static str] {
        match self {
            Target::Muse => &[OPENAPI_JSON, LLMS_TXT, DESCRIPTIONS_MD],
            Target::Mcp => &[MCP_TOOLS_JSON],
            Target::Openai => &[OPENAPI_OPENAI_JSON],
            Target::Openapi30 => &[OPENAPI_30_JSON],
        }
    }
}

// The generated files' names, each spelled once (`Target::files` groups them).
pub(crate) const OPENAPI_JSON: &str = "openapi.json";
pub(crate) const LLMS_TXT: &str = "llms.txt";
pub(crate) const DESCRIPTIONS_MD: &str = "descriptions.md";
pub(crate) const MCP_TOOLS_JSON: &str = "mcp-tools.json";
pub(crate) const OPENAPI_OPENAI_JSON: &str = "openapi.openai.json";
pub(crate) const OPENAPI_30_JSON: &str = "openapi.3.0.json";

/// Where an operation's parts are in the manifest, so findings made after validation
/// (lints, target constraints) can point at the YAML node at fault without reading the
/// raw manifest again. In base mode, parts taken from the provider's document point at
/// the operation's entry (`entry`), where an override would go.
#[derive(Debug, Clone)]
pub struct Origin {
    /// The whole operation entry.
    pub entry: Span,
    pub id: Span,
    pub path: Span,
    pub summary: Span,
    pub description: Span,
    /// Base mode without a `description:` override: the text is the base document's.
    pub description_from_base: bool,
    /// Where the safety keys are written; `None` when none is (most reads). Boxed: the
    /// origin of every operation is held at the build's memory peak, and these are nine
    /// spans most operations lack. Read through the methods of the same names.
    pub safety: Option<Box<SafetySpans>>,
    /// Inline mode: the request and response schemas and each query parameter.
    pub input: Option<Span>,
    pub output: Option<Span>,
    pub query: Vec<(String, Span)>,
}

/// Where an operation's safety keys are written (`Origin::safety`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SafetySpans {
    pub spends: Option<Span>,
    /// `spends.note` and `spends.when`, the author's words inside the cost sentence.
    pub note: Option<Span>,
    pub when: Option<Span>,
    /// `confirm.when`, the author's words inside the permanence sentence.
    pub confirm_when: Option<Span>,
    pub poll_with: Option<Span>,
    /// `async.idField`.
    pub id_field: Option<Span>,
    /// `async.status` (`None`: the default mapping, narrowed to the poll's enum).
    pub job_status: Option<Span>,
    /// `async.cancelWith`.
    pub cancel_with: Option<Span>,
    pub idempotency: Option<Span>,
    /// `spends.amount`'s `argument` (or the amount itself when it is a number).
    pub amount: Option<Span>,
    /// `refunds`.
    pub refunds: Option<Span>,
    /// `mcp.output` (`None`: the manifest's default applies).
    pub mcp_output: Option<Span>,
}

impl SafetySpans {
    /// `Some` when any key is written.
    pub fn boxed(self) -> Option<Box<SafetySpans>> {
        (self != SafetySpans::default()).then(|| Box::new(self))
    }
}

/// Each of `SafetySpans`' spans, `None` also when no safety key is written.
macro_rules! safety_spans {
    ($($name:ident),*) => {
        impl Origin {
            $(
                pub fn $name(&self) -> Option<Span> {
                    self.safety.as_ref().and_then(|s| s.$name)
                }
            )*
        }
    };
}
safety_spans!(
    spends,
    note,
    when,
    confirm_when,
    poll_with,
    id_field,
    job_status,
    cancel_with,
    idempotency,
    amount,
    refunds,
    mcp_output
);

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Service {
    pub name: String,
    /// `title` from the manifest, or "<name> Connector".
    pub title: String,
    pub version: String,
    pub description: String,
    /// Without a trailing slash.
    pub public_url: String,
    /// Without a trailing slash; may carry a query and a fragment.
    pub dashboard_url: String,
    /// Where the connector's OpenAPI document is published (`specUrl`), when the
    /// manifest says: llms.txt links it then, and never guesses a place on the API host.
    pub spec_url: Option<String>,
    /// The provider's API documentation (`docsUrl`, else a base document's
    /// `externalDocs.url`): llms.txt's Docs link.
    pub docs_url: Option<String>,
    /// llms.txt's one-paragraph summary: `description` when the manifest writes it; in
    /// base mode otherwise the first paragraph of the document's `info.description` as
    /// plain text (no heading, code block, HTML or Markdown markup), or its first
    /// sentence when that paragraph is long.
    pub summary: String,
}

/// How the agent proves who it acts for, as prose describes it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Auth {
    #[serde(flatten)]
    pub scheme: AuthScheme,
    /// What every credential starts with (may be empty).
    pub token_prefixes: Vec<String>,
    /// How prose names the credential ("connector token", "API key", "OAuth client").
    pub credential_name: String,
    /// OAuth with the client-credentials flow only: no person signs in; the person
    /// creates a client id and secret that the connector exchanges for access tokens.
    pub client_credentials: bool,
    /// The environment variable `serve` reads the credential from: `auth.env`, else
    /// `credential_env(service.name)`. Not part of any generated text.
    #[serde(skip)]
    pub env: String,
    /// Where `auth.env` is written, when it is (the default has no place in the manifest).
    #[serde(skip)]
    pub env_span: Option<Span>,
    /// A one-part credential's `format` (`ShippoToken {value}`): how the value is written.
    pub format: Option<String>,
    /// Every part of the credential, in the order sent: one for the single-credential
    /// forms (a bearer token, an API key, basic), several for `auth.parts` or a
    /// document's security requirement of several schemes; none without a credential.
    pub parts: Vec<CredentialPart>,
    /// Where `auth:` is written (findings about what a target cannot express point
    /// here), when it is.
    #[serde(skip)]
    pub span: Option<Span>,
    /// The exposed operations whose own `security` asks for something other than this
    /// credential, by operation id: none (`security: []`, or an alternative `{}`), or
    /// other schemes of the document, each from its own variable. Every other operation
    /// sends `parts`.
    #[serde(skip)]
    pub operations: BTreeMap<String, OperationCredential>,
}

/// The credential of one operation whose `security` differs from the connection's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OperationCredential {
    /// `security: []` or an alternative `{}`: the call goes out without a credential.
    None,
    /// Another requirement: its schemes, each a part read from its own variable.
    Parts(Vec<CredentialPart>),
}

impl Auth {
    /// The parts an operation sends (`None`: the connection's, `parts`).
    pub fn operation(&self, id: &str) -> Option<&OperationCredential> {
        self.operations.get(id)
    }
}

/// Where a part of a credential may go.
pub(crate) const CREDENTIAL_PART_LOCATIONS: [&str; 4] = ["header", "query", "cookie", "body"];

/// One part of the credential: where it goes, how it is written, where `serve` reads it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CredentialPart {
    /// `header`, `query`, `cookie` or `body` (a top-level field of a JSON or form body).
    #[serde(rename = "in")]
    pub location: String,
    /// The header, query parameter, cookie or body field.
    pub name: String,
    /// How the value is written, `{value}` standing for it (`Bearer {value}`); `None`:
    /// the value itself.
    pub format: Option<String>,
    /// HTTP Basic: the value (`user:password`) is sent base64-encoded, after `Basic `.
    #[serde(skip)]
    pub basic: bool,
    /// The environment variable `serve` reads it from.
    #[serde(skip)]
    pub env: String,
    #[serde(skip)]
    pub env_span: Option<Span>,
    /// The document's security scheme it is (`components.securitySchemes` key), if any.
    #[serde(skip)]
    pub security_scheme: Option<String>,
}

impl CredentialPart {
    /// Whether it is a field of the request body, which only `serve` can fill in.
    pub fn in_body(&self) -> bool {
        self.location == "body"
    }
}

/// The default credential variable of a service: `<SERVICE>_TOKEN`, the name upper-cased
/// with every run of other characters as one `_` (`VidGen` → `VIDGEN_TOKEN`, "Print Shop"
/// → `PRINT_SHOP_TOKEN`).
pub(crate) fn credential_env(service: &str) -> String {
    format!("{}TOKEN", env_prefix(service))
}

/// The prefix of a service's own environment variables: `service.name` upper-cased, each
/// run of other characters one `_`, ending in `_` (`VidGen` → `VIDGEN_`, "Print Shop" →
/// `PRINT_SHOP_`; a leading digit gets a `_` before it; no letter or digit at all:
/// `CONNECTOR_`). `serve` and `probe` read the variables that start with it, and others
/// only when the person names them on the command line (`--allow-env`).
pub fn env_prefix(service: &str) -> String {
    let mut out = String::new();
    for c in service.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_uppercase());
        } else if !out.ends_with('_') && !out.is_empty() {
            out.push('_');
        }
    }
    let trimmed = out.trim_end_matches('_');
    if trimmed.is_empty() {
        "CONNECTOR_".to_string()
    } else if trimmed.starts_with(|c: char| c.is_ascii_digit()) {
        format!("_{trimmed}_")
    } else {
        format!("{trimmed}_")
    }
}

/// The `auth.scheme` names of an inline manifest.
pub(crate) const AUTH_SCHEMES: [&str; 3] = ["bearer", "apiKey", "basic"];

/// Where an inline manifest's API key may go.
pub(crate) const API_KEY_LOCATIONS: [&str; 2] = ["header", "query"];

/// The kind of credential, and where an API key goes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "scheme", rename_all = "camelCase")]
pub enum AuthScheme {
    Bearer,
    ApiKey {
        #[serde(rename = "in")]
        location: String,
        name: String,
    },
    Basic,
    #[serde(rename = "oauth2")]
    OAuth2,
    OpenIdConnect,
    /// Several parts sent together (`Auth::parts`), or a part in the body.
    Parts,
    /// No security requirement applies to the exposed operations.
    None,
}

#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    strum::VariantArray,
    strum::IntoStaticStr,
    strum::EnumString,
)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum Method {
    Get,
    Post,
    Put,
    Patch,
    Delete,
}

impl Method {
    /// Upper case, as people and HTTP write them.
    pub fn upper(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Patch => "PATCH",
            Method::Delete => "DELETE",
        }
    }
}

/// What one call of a paid operation spends. (A permanence without a cost is not a
/// spend: it is `confirm`. The old `irreversible` kind is refused with that hint.)
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Serialize,
    strum::VariantArray,
    strum::IntoStaticStr,
    strum::EnumString,
)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum SpendKind {
    Credits,
    Money,
}

/// Whose money a paid operation moves.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    Serialize,
    strum::VariantArray,
    strum::IntoStaticStr,
    strum::EnumString,
)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum Payer {
    /// The person's own (the default).
    #[default]
    Person,
    /// The person's customer, a third party (a seller's API charges the buyer): the
    /// person authorises it on the customer's behalf.
    Customer,
}

/// What an async operation hands back while its work goes on.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Serialize,
    strum::VariantArray,
    strum::IntoStaticStr,
    strum::EnumString,
)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum Returns {
    /// A job, with an id to poll: calling again starts (and may charge for) a second one.
    Job,
    /// A change to something that exists (a cancel, a refund) which settles in the
    /// background: polling shows the result, calling again does not make it faster.
    Change,
}

/// How much of the answer's schema an operation's MCP tool declares as its `outputSchema`
/// (`mcp.output`, render/mcp/output.rs).
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    strum::VariantArray,
    strum::IntoStaticStr,
    strum::EnumString,
)]
#[strum(serialize_all = "lowercase")]
pub enum McpOutput {
    /// The whole schema (what fits `OUTPUT_SCHEMA_MAX`).
    #[default]
    Full,
    /// The top-level properties the safety text and the poll read, with their types.
    Summary,
    /// No `outputSchema`.
    None,
}

/// How the provider recognises a repeat of an operation, so that a retry after a
/// timeout or an error returns the first result instead of doing (and charging) the
/// work again. Renderers write the retry rule from this value alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Idempotency {
    /// A key the model sends: a fresh value for each new request, the same value when
    /// retrying one that failed or timed out. It is in the operation as written out
    /// (the provider's own parameter or body property, or one connectorgen added).
    Key(IdempotencyKey),
    /// A repeat cannot duplicate the effect by its nature (`idempotency: inherent`):
    /// a retry is safe and nothing is added.
    Inherent,
    /// No repeat is recognised: never repeat the call on one's own.
    Unsupported(Unsupported),
}

/// Why an operation has no retry key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unsupported {
    /// The author wrote `idempotency: unsupported`.
    Stated,
    /// Nobody said: in base mode the provider's document declares no mechanism (the
    /// `idempotency-unknown` warning on operations that spend or are async); inline, an
    /// operation that neither spends nor is async, to which the default key is not added.
    Unknown,
}

/// The key of `Idempotency::Key`: where the model sends it and under which name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdempotencyKey {
    pub location: KeyLocation,
    /// The header, query parameter or top-level body property name, as the provider
    /// spells it (`Idempotency-Key`, `PayPal-Request-Id`, `idempotency_key`).
    pub name: String,
    /// Whether the provider refuses a call without it.
    pub required: bool,
    /// Whether connectorgen added it to the operation (inline mode, or a short form on a
    /// base operation that lacks the header) rather than the operation declaring it.
    pub added: bool,
    /// Base mode without an `idempotency:` key: what in the provider's document says
    /// this is the key (for `explain` and `import`). `None` when the manifest named it.
    pub evidence: Option<String>,
    /// How the provider answers a key it has seen (`idempotency.duplicate`), when the
    /// manifest says: `serve` reads that answer to a retry as "the first one exists".
    pub duplicate: Option<Duplicate>,
}

/// `idempotency.duplicate`: the answer a provider gives a request whose key it has seen
/// (`422 client_order_id must be unique`, `409 Conflict`), and the free read that finds
/// the request the key made. At least one of `status` and `body_contains`. Serialised
/// as written in the manifest, into the `x-idempotency` hint.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Duplicate {
    /// The HTTP status of that answer (400 to 599).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// Text the answer's body contains (compared without regard to case).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body_contains: Option<String>,
    /// A free read that takes the key in a parameter of the key's own name and answers
    /// the request it made: `serve` calls it to fetch the first result.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_with: Option<String>,
}

impl Duplicate {
    /// Whether an answer with `status` and `body` is this provider's "key already used".
    pub fn matches(&self, status: u16, body: &[u8]) -> bool {
        self.status.is_none_or(|s| s == status)
            && self.body_contains.as_deref().is_none_or(|text| {
                String::from_utf8_lossy(body)
                    .to_lowercase()
                    .contains(&text.to_lowercase())
            })
    }
}

/// Where an idempotency key goes in the request.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    strum::VariantArray,
    strum::IntoStaticStr,
    strum::EnumString,
)]
#[strum(serialize_all = "lowercase")]
pub enum KeyLocation {
    Header,
    Query,
    /// A top-level property of the JSON or form body.
    Body,
}

/// Why `name` cannot be a retry key's name at `location`, or `None` when it can. The name
/// reaches the model's text (`llms.txt`, every description) as a code span, so it is one
/// plain token: a header name is RFC 7230 token characters (without the backtick); a
/// query parameter or body field has no whitespace, backtick, control, bidirectional or
/// invisible character.
pub(crate) fn key_name_problem(location: KeyLocation, name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("it is empty".to_string());
    }
    let bad = match location {
        KeyLocation::Header => name
            .chars()
            .find(|&c| !(c.is_ascii_alphanumeric() || "!#$%&'*+-.^_|~".contains(c))),
        KeyLocation::Query | KeyLocation::Body => name
            .chars()
            .find(|&c| c == '`' || c.is_whitespace() || c.is_control() || is_hidden(c)),
    }?;
    let shown = match bad {
        ' ' => "a space".to_string(),
        '`' => "a backtick".to_string(),
        c if c.is_ascii_graphic() => format!("`{c}`"),
        c => format!("`{}` (U+{:04X})", c.escape_unicode(), c as u32),
    };
    Some(match location {
        KeyLocation::Header => format!(
            "it holds {shown}; a header name is letters, digits and ! # $ % & ' * + - . ^ _ | ~"
        ),
        _ => format!(
            "it holds {shown}; a key's name has no whitespace, backtick, control, bidirectional or invisible character"
        ),
    })
}

/// Bidirectional controls and characters that show nothing (zero-width, soft hyphen,
/// byte-order mark), which would make the name read differently from what is sent.
fn is_hidden(c: char) -> bool {
    matches!(c,
        '\u{00AD}' | '\u{034F}' | '\u{061C}' | '\u{115F}' | '\u{1160}' | '\u{17B4}' | '\u{17B5}'
        | '\u{180B}'..='\u{180F}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{206F}' | '\u{3164}' | '\u{FE00}'..='\u{FE0F}' | '\u{FEFF}'
        | '\u{FFA0}' | '\u{FFF0}'..='\u{FFFB}' | '\u{E0000}'..='\u{E0FFF}')
}

impl Idempotency {
    /// The `x-idempotency` hint: `{ in, name, required }` for a key (with `duplicate`
    /// when the manifest says how a reused key is answered), `"inherent"` (a
    /// retry is safe), or `"none"` (never repeat on one's own).
    pub fn hint(&self) -> serde_json::Value {
        match self {
            Idempotency::Key(key) => {
                let mut hint = serde_json::json!({
                    "in": key.location.as_str(),
                    "name": key.name,
                    "required": key.required,
                });
                if let Some(d) = &key.duplicate {
                    hint["duplicate"] = serde_json::json!(d);
                }
                hint
            }
            Idempotency::Inherent => "inherent".into(),
            Idempotency::Unsupported(_) => "none".into(),
        }
    }

    /// The short forms of `idempotency:` that name no mechanism (an `Idempotency-Key`
    /// header for the first two) and `inherent`.
    pub(crate) const SHORT_FORMS: [&'static str; 4] =
        ["optional", "required", "unsupported", "inherent"];

    /// The keys of the mapping form that name a key, in `KeyLocation` order.
    pub(crate) const MAPPING_KEYS: [&'static str; 3] = ["header", "query", "bodyField"];

    /// The key, if the operation has one.
    pub fn key(&self) -> Option<&IdempotencyKey> {
        match self {
            Idempotency::Key(key) => Some(key),
            _ => None,
        }
    }

    /// Whether a retry of the operation is known to be safe: a required key, or inherent.
    pub(crate) fn required_or_inherent(&self) -> bool {
        match self {
            Idempotency::Key(key) => key.required,
            Idempotency::Inherent => true,
            Idempotency::Unsupported(_) => false,
        }
    }

    pub fn is_unsupported(&self) -> bool {
        matches!(self, Idempotency::Unsupported(_))
    }
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Spends {
    pub kind: SpendKind,
    pub note: String,
    /// The condition under which a call costs (`spends.when`, free text), if only some do.
    pub when: Option<String>,
    /// Whose money moves (`spends.payer`).
    pub payer: Payer,
    /// What one call spends (`spends.amount`), when the manifest says: `serve` states it in
    /// the question and counts it against the budgets. Not part of any generated text.
    #[serde(skip)]
    pub amount: Option<SpendAmount>,
    /// `spends.currency`: the ISO 4217 code of a money amount.
    #[serde(skip)]
    pub currency: Option<String>,
}

/// What one call of a paid operation spends, in the spend's unit (`spends.amount`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SpendAmount {
    /// The same on every call (`amount: 3`).
    Fixed(crate::budget::Amount),
    /// An input of the call times a scale (`amount: { argument: amount, scale: 0.01 }`).
    Argument(AmountArgument),
}

/// The input a call's amount is computed from, and its scale.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AmountArgument {
    /// The input's HTTP name: a top-level body property or a query or header parameter
    /// (as `args:` names inputs; `serve` finds the tool argument that carries it).
    pub input: String,
    pub location: KeyLocation,
    /// What one unit of the input costs (`0.01` for cents, a rate per second).
    pub scale: crate::budget::Decimal,
}

impl Spends {
    /// How this spend's amounts read (`Amount::shown`).
    pub fn amount_unit(&self) -> crate::budget::AmountUnit<'_> {
        match self.kind {
            SpendKind::Credits => crate::budget::AmountUnit::Credits,
            SpendKind::Money => crate::budget::AmountUnit::Money(self.currency.as_deref()),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Async {
    /// The agent-facing id of a validated free, side-effect-free read (`Operation::read`).
    pub poll_with: String,
    pub typical_seconds: Option<u64>,
    pub returns: Returns,
    /// For a job: the free read that lists the jobs' collection (the poll target's path
    /// without its last `/{param}`), where a model that lost a job's id finds it again.
    pub list_with: Option<String>,
    /// For a job: the properties of the call's answer that may hold the job's id (or paths
    /// into its envelope, `job.id`: `at_path`), in the order they are tried: `async.idField` alone when written, else what the poll
    /// target and the answer's schema point at (`validate/safety/jobs.rs`). Not part of
    /// any generated text: `serve` and `probe` read the id with `job_id`.
    #[serde(skip)]
    pub id_fields: Vec<String>,
    /// For a job: how `serve` reads the job's state from the poll's answer, for a client
    /// that follows it as a task (`async.status`, else `JobStatus::default`).
    #[serde(skip)]
    pub status: JobStatus,
    /// For a job: the operation that cancels it (`async.cancelWith`), given the job's id
    /// as the poll target is.
    #[serde(skip)]
    pub cancel_with: Option<String>,
}

/// Where a job's state is in the poll target's answer and which values end it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobStatus {
    /// The property of the poll's JSON answer that holds the state, or a path to it
    /// inside an envelope (`job.status`: `at_path`).
    pub field: String,
    /// The values that mean the job is finished and its answer is the result.
    pub done: Vec<String>,
    /// The values that mean the job ended without a result.
    pub failed: Vec<String>,
}

/// What a poll's answer says of a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobState {
    Working,
    Done,
    Failed,
}

impl Default for JobStatus {
    /// `status`, with the words providers use for the end of a job (the reference
    /// provider's `succeeded`/`failed`, OpenAI's `completed`/`expired`, AssemblyAI's
    /// `completed`/`error`).
    fn default() -> Self {
        let words = |w: &[&str]| w.iter().map(|s| (*s).to_string()).collect();
        JobStatus {
            field: "status".into(),
            done: words(&[
                "succeeded",
                "completed",
                "complete",
                "done",
                "finished",
                "success",
                "ready",
            ]),
            failed: words(&[
                "failed",
                "error",
                "errored",
                "cancelled",
                "canceled",
                "expired",
                "rejected",
            ]),
        }
    }
}

impl JobStatus {
    /// These words found among `listed` (the values a poll's answer schema gives its
    /// field) without regard to case, in the spelling of `listed`: an enum of
    /// `SUCCEEDED`, `FAILED` maps those. Base mode's default and `import`'s suggestion.
    pub fn narrowed(&self, listed: &[String]) -> JobStatus {
        let pick = |words: &[String]| {
            listed
                .iter()
                .filter(|v| words.iter().any(|w| w.eq_ignore_ascii_case(v)))
                .cloned()
                .collect()
        };
        JobStatus {
            field: self.field.clone(),
            done: pick(&self.done),
            failed: pick(&self.failed),
        }
    }

    /// The status as the poll's JSON answer has it (at `field`, or inside an envelope).
    pub fn value<'a>(&self, answer: &'a Value) -> Option<&'a Value> {
        at_path(answer, &self.field)
    }

    /// The job's state in a poll's JSON answer: `Working` when the field is missing or
    /// holds a value of neither list (a provider's `queued`, `running`, `in_progress`).
    pub fn state(&self, answer: &Value) -> JobState {
        let value = match at_path(answer, &self.field) {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Number(n)) => n.to_string(),
            Some(Value::Bool(b)) => b.to_string(),
            _ => return JobState::Working,
        };
        if self.done.contains(&value) {
            JobState::Done
        } else if self.failed.contains(&value) {
            JobState::Failed
        } else {
            JobState::Working
        }
    }
}

/// The value at `path` in a JSON answer: the property of that name, else each
/// dot-separated name in turn, into an envelope (`job.id` in `{"job": {"id": …}}`).
pub(crate) fn at_path<'a>(value: &'a Value, path: &str) -> Option<&'a Value> {
    value
        .get(path)
        .or_else(|| path.split('.').try_fold(value, |v, name| v.get(name)))
}

/// The one member of a one-property envelope (`{"job": {...}}`), given the members as
/// (name, value) pairs: `None` when there are more or none, or when its name has a dot
/// (`at_path` would read that name as a path).
pub(crate) fn envelope<'a, T>(
    mut members: impl Iterator<Item = (&'a String, T)>,
) -> Option<(&'a String, T)> {
    let only = members.next()?;
    (members.next().is_none() && !only.0.contains('.')).then_some(only)
}

impl Async {
    /// The job's id in a call's JSON answer: the first of `id_fields` the answer has (a
    /// property, or a path into an envelope: `at_path`), as text (a string, or a number
    /// as written).
    pub fn job_id(&self, answer: &Value) -> Option<String> {
        self.id_fields
            .iter()
            .find_map(|field| match at_path(answer, field)? {
                Value::String(s) => Some(s.clone()),
                Value::Number(n) => Some(n.to_string()),
                _ => None,
            })
    }
}

/// One operation the agent may call.
#[derive(Debug, Clone)]
pub struct Operation {
    /// The agent-facing id: `operationId` in every output, the MCP tool name.
    pub id: String,
    pub method: Method,
    pub path: String,
    /// The `{name}` segments of `path`, in order.
    pub path_params: Vec<String>,
    /// Shared with the template values render makes of each operation (`Arc`), not
    /// copied into them, as is `description`: every operation's are held at the build's
    /// memory peak.
    pub summary: Arc<str>,
    /// The author's description (the override, else the base document's), trimmed.
    pub description: Arc<str>,
    /// The OpenAPI Operation Object as written out, apart from `operationId`, `summary`
    /// and `description` (replaced by the values above and the model-facing text) and
    /// the safety hints (added). Includes the retry key (`idempotency`) wherever it goes,
    /// also when connectorgen added it.
    pub http: Map<String, Value>,
    pub spends: Option<Spends>,
    /// Boxed, as `probe`: absent from most operations, and the model of every operation
    /// is held at the build's memory peak.
    pub async_: Option<Box<Async>>,
    pub idempotency: Idempotency,
    /// Whether the person must say yes before each call because it cannot be undone:
    /// `confirm: true`, or a DELETE without `confirm`. (A call that spends needs their yes
    /// anyway, `consent()`; this is its permanence.)
    pub confirm: bool,
    /// `confirm: { when: … }`: the condition under which a call cannot be undone, when
    /// only some calls are permanent (`confirm` is then true: the yes is still asked).
    pub confirm_when: Option<String>,
    /// `x-openai-isConsequential`: OpenAI's own default, true on every method but GET,
    /// unless the author wrote `confirm: false`; false on every read.
    pub consequential: bool,
    /// A free, side-effect-free read: a GET, or any method declared `read: true` (an
    /// RPC-style API that reads with a POST). What everything that keeps calls safe asks
    /// (poll targets, job lists, consent defaults, read-only hints), never the method.
    pub read: bool,
    /// Lints not reported for this operation (`lintAllow`).
    pub lint_allow: Vec<Lint>,
    /// `args:`: MCP argument names the author chose, in the order written.
    pub args: Vec<ArgName>,
    /// `fixed:`: parameters the connector fills in, never MCP arguments.
    pub fixed: Vec<Fixed>,
    /// `mcp.omit`: optional inputs the MCP tool leaves out (render/mcp/omit.rs).
    pub omit: Vec<OmitPath>,
    /// `mcp.output`, else the manifest's: how much of the answer's schema the MCP tool
    /// declares.
    pub mcp_output: McpOutput,
    /// `probe.input`: the example call `connectorgen probe` makes.
    pub probe: Option<Box<ProbeInput>>,
    /// `refunds`: the paid operation whose purchase a successful call of this one gives
    /// back (cancels or refunds), matched by the job id this one takes as its last path
    /// parameter; `serve` then gives its amount back to the budgets.
    pub refunds: Option<String>,
    pub origin: Origin,
}

/// An operation's example call for `connectorgen probe` (`probe: { input: … }`).
#[derive(Debug, Clone)]
pub struct ProbeInput {
    /// The tool's arguments, by their MCP names.
    pub input: Map<String, Value>,
    pub span: Span,
}

/// An MCP argument name the author chose (`args: { <input>: <name> }`).
#[derive(Debug, Clone)]
pub struct ArgName {
    /// The HTTP name of the parameter or body property it renames.
    pub input: String,
    pub name: String,
    /// The key (`input`) and the value (`name`) in the manifest.
    pub input_span: Span,
    pub span: Span,
}

/// A parameter the connector supplies on every call (`fixed: { <name>: { env: … } }`).
#[derive(Debug, Clone)]
pub struct Fixed {
    /// The parameter's HTTP name (every location that has it).
    pub name: String,
    pub source: FixedSource,
    pub span: Span,
}

/// One `mcp.omit` entry: a dotted path into the tool's input, as written.
#[derive(Debug, Clone)]
pub struct OmitPath {
    pub path: String,
    pub span: Span,
}

/// Where a fixed parameter's value comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FixedSource {
    /// The environment variable of that name, read by the server that sends the call.
    Env(String),
    /// This text.
    Value(String),
}

impl Operation {
    /// The retry key the operation declares (in `http`), if any.
    pub fn key(&self) -> Option<&IdempotencyKey> {
        self.idempotency.key()
    }

    /// Whether the model needs the person's fresh yes before each call: it spends, or
    /// it cannot be undone (`x-requires-confirmation`).
    pub fn consent(&self) -> bool {
        self.spends.is_some() || self.confirm
    }

    /// Whether it is a read declared by `read: true` on a method other than GET, which
    /// the documents mark (`x-read-only`) because the method does not say it.
    pub fn declared_read(&self) -> bool {
        self.read && self.method != Method::Get
    }

    /// The JSON pointer of this operation's object in the generated documents.
    pub fn pointer(&self) -> String {
        format!("/paths/{}/{}", escape(&self.path), self.method.as_str())
    }

    /// The properties its JSON request body requires (through `$ref`s), in the order
    /// the schema lists them: where an RPC-style poll target (`POST /transcripts.info
    /// {handle}`) takes the job's id.
    pub fn required_body_properties(&self, document: &Document) -> Vec<String> {
        fn follow<'a>(document: &'a Document, mut value: &'a Value) -> Option<&'a Value> {
            for _ in 0..16 {
                match value.get("$ref").and_then(Value::as_str) {
                    Some(reference) => value = document.resolve(reference)?,
                    None => return Some(value),
                }
            }
            None
        }
        let follow = |value| follow(document, value);
        let schema = self
            .http
            .get("requestBody")
            .and_then(follow)
            .and_then(|b| b.get("content")?.as_object())
            .and_then(|content| {
                content.iter().find(|(media, _)| {
                    let essence = media_essence(media);
                    essence == "application/json" || essence.ends_with("+json")
                })
            })
            .and_then(|(_, media)| media.get("schema"))
            .and_then(follow);
        schema
            .and_then(|s| s.get("required"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect()
    }
}

impl Connector {
    /// The one currency its money amounts are in (`spends.currency`), when it has any and
    /// they agree: the currency of a `money` budget.
    pub fn currency(&self) -> Option<&str> {
        currency_of(&self.operations).ok().flatten()
    }

    /// Why `budgets` cannot hold for these operations, or `None` when they can
    /// (`budget_problem`).
    pub fn budget_problem(&self, budgets: &[crate::budget::Budget]) -> Option<String> {
        budget_problem(&self.operations, budgets)
    }

    /// The field of its poll target's request body that takes a job's id, for an
    /// operation that starts a job and polls an RPC-style read (one whose path names no
    /// job): of the properties the target's JSON body requires, the first the job's
    /// answer carries the id in (`Async::id_fields`: `async.idField`, or the names
    /// found), else the first named like an id (`id`, `…_id`, `…Id`). `None` when the
    /// target's path has a parameter (the id goes there) or its body requires no such
    /// field.
    pub fn poll_body_id(&self, op: &Operation) -> Option<String> {
        let a = op.async_.as_ref().filter(|a| a.returns == Returns::Job)?;
        let target = self.operations.iter().find(|o| o.id == a.poll_with)?;
        if !target.path_params.is_empty() {
            return None;
        }
        let required = target.required_body_properties(&self.document);
        let named_like_an_id =
            |name: &&String| *name == "id" || name.ends_with("_id") || name.ends_with("Id");
        // An id inside an envelope (`job.id`) goes in the field of its own name.
        let carried = |name: &&String| {
            a.id_fields
                .iter()
                .any(|f| f == *name || f.rsplit('.').next() == Some(name.as_str()))
        };
        required
            .iter()
            .find(carried)
            .or_else(|| required.iter().find(named_like_an_id))
            .cloned()
    }
}

/// The machine-readable safety hints connectorgen writes on operations. They say what
/// the manifest says, so no other source may set them: an `openapi:` fragment is refused
/// them, and a base document's own are replaced (or dropped where the manifest implies
/// none).
pub(crate) const HINT_KEYS: [&str; 14] = [
    "x-openai-isConsequential",
    "x-read-only",
    "x-long-running",
    "x-poll-operationId",
    "x-typical-seconds",
    "x-async-returns",
    "x-cost-kind",
    "x-cost-note",
    "x-cost-when",
    "x-cost-payer",
    "x-permanent",
    "x-permanent-when",
    "x-requires-confirmation",
    "x-idempotency",
];

/// The header name every idempotent retry carries.
pub(crate) const IDEMPOTENCY_HEADER: &str = "Idempotency-Key";

/// A media type's essence, `type/subtype` in lower case, without its parameters
/// (`Application/JSON; charset=utf-8` → `application/json`).
pub fn media_essence(media: &str) -> String {
    media
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

/// A JSON pointer segment: `~` → `~0`, `/` → `~1`.
pub(crate) fn escape(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

/// A pointer's segment back to the key it names (a reference's percent-encoding too).
pub(crate) fn unescape(segment: &str) -> String {
    let decoded = percent_encoding::percent_decode_str(segment).decode_utf8_lossy();
    decoded.replace("~1", "/").replace("~0", "~")
}

/// Checks a path template and returns its parameter names in order. The one rule for
/// every path, written inline or found in a provider's document: a client appends it
/// to the server URL as it is, and `llms.txt` quotes it in a code span, so it starts
/// with one `/` (`//host` would be another server), holds only what a URL path may
/// hold unencoded (no query, fragment, whitespace, backtick, control, bidirectional or
/// invisible character: everything outside ASCII is refused), has no empty segment,
/// and each `{name}` is a letter or `_` followed by letters, digits, `_`, `-` or `.`.
pub(crate) fn path_template(path: &str) -> Result<Vec<String>, String> {
    if !path.starts_with('/') {
        return Err("it must start with `/`".to_string());
    }
    if let Some(bad) = path.chars().find(|&c| !is_path_char(c)) {
        return Err(match bad {
            '?' | '#' => {
                format!("it has a query or fragment (`{bad}`); a path template holds only the path")
            }
            '`' => "it holds a backtick, which cannot appear in a URL path".to_string(),
            ' ' => "it holds a space, which cannot appear in a URL path".to_string(),
            c if c.is_ascii_graphic() => format!("`{c}` cannot appear in a URL path"),
            c => format!(
                "it holds `{}` (U+{:04X}), which cannot appear in a URL path",
                c.escape_debug(),
                c as u32
            ),
        });
    }
    if path.contains("//") {
        return Err("it has an empty segment (`//`)".to_string());
    }
    let mut params: Vec<String> = Vec::new();
    let mut rest = path;
    while let Some(open) = rest.find(['{', '}']) {
        if rest[open..].starts_with('}') {
            return Err("`}` without a matching `{`".to_string());
        }
        let after = &rest[open + 1..];
        let close = after
            .find(['{', '}'])
            .filter(|&i| after[i..].starts_with('}'))
            .ok_or_else(|| "`{` without a matching `}`".to_string())?;
        let name = &after[..close];
        if !name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        {
            return Err(format!(
                "`{{{name}}}` is not a parameter name (a letter or `_`, then letters, digits, `_`, `-` or `.`)"
            ));
        }
        if params.iter().any(|p| p == name) {
            return Err(format!("parameter `{name}` appears twice"));
        }
        params.push(name.to_string());
        rest = &after[close + 1..];
    }
    Ok(params)
}

/// What a URL path may hold unencoded (RFC 3986 `pchar` and `/`), and the braces of a
/// template.
fn is_path_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "-._~!$&'()*+,;=:@/%{}".contains(c)
}

// ---- Lints: which ones exist, their levels, and a manifest's settings. ----

/// A fixed list of names (strum's `VariantArray` and `EnumString` over one spelling
/// per variant): every name in declaration order, the variant a name spells, and a
/// variant's name.
pub trait Names: strum::VariantArray + Copy + Into<&'static str> + std::str::FromStr {
    /// The one spelling strum declares for the variant (`serialize_all` on the enum):
    /// `Method` lower case as OpenAPI path items key it, `KeyLocation` as OpenAPI's `in`
    /// writes it.
    fn as_str(self) -> &'static str {
        self.into()
    }

    fn names() -> impl Iterator<Item = &'static str> {
        Self::VARIANTS.iter().map(|v| (*v).into())
    }

    fn named(name: &str) -> Option<Self> {
        name.parse().ok()
    }
}

impl<T: strum::VariantArray + Copy + Into<&'static str> + std::str::FromStr> Names for T {}

/// The lints are rules that declare a level (`diagnostics::Rule`); a lint id is a
/// rule's code.
pub use crate::diagnostics::{Level, Rule as Lint};

/// OpenAI GPT Actions cut operation descriptions at 300 characters.
pub(crate) const DEFAULT_DESCRIPTION_MAX: usize = 300;

/// The `mcp-tool-too-large` default: 8,000 bytes of compact JSON, about 2,000 tokens at
/// the usual four bytes of JSON per token.
pub(crate) const DEFAULT_MCP_TOOL_MAX: usize = 8_000;

/// Lint levels for one manifest: defaults, then the manifest's `lint:` settings.
#[derive(Debug, Clone)]
pub struct LintConfig {
    /// Indexed by `Rule as usize`; rules that are not lints stay `Allow` and are never
    /// looked up.
    levels: [Level; <Lint as strum::VariantArray>::VARIANTS.len()],
    pub description_max: usize,
    /// `mcp-tool-too-large`'s bound, in bytes of compact JSON.
    pub mcp_tool_max: usize,
}

impl Default for LintConfig {
    fn default() -> Self {
        LintConfig {
            levels: <Lint as strum::VariantArray>::VARIANTS
                .iter()
                .map(|r| r.lint_level().unwrap_or(Level::Allow))
                .collect::<Vec<_>>()
                .try_into()
                .expect("one level per rule"),
            description_max: DEFAULT_DESCRIPTION_MAX,
            mcp_tool_max: DEFAULT_MCP_TOOL_MAX,
        }
    }
}

impl LintConfig {
    pub fn level(&self, lint: Lint) -> Level {
        self.levels[lint as usize]
    }

    pub fn set(&mut self, lint: Lint, level: Level) {
        self.levels[lint as usize] = level;
    }
}

/// The one currency the money amounts of `operations` are in: `Ok(None)` with none,
/// `Err` naming two that differ.
fn currency_of(operations: &[Operation]) -> Result<Option<&str>, (String, String)> {
    let mut found: Option<&str> = None;
    for currency in operations
        .iter()
        .filter_map(|o| o.spends.as_ref()?.currency.as_deref())
    {
        match found {
            Some(first) if first != currency => return Err((first.into(), currency.into())),
            _ => found = Some(currency),
        }
    }
    Ok(found)
}

/// Why `budgets` cannot hold for `operations`: a `money` budget over amounts in two
/// currencies, or a `credits` or `money` budget, without a `calls` one, over an operation of
/// that kind whose amount the manifest does not give (its calls could not be counted, so
/// the limit would not hold). `None` when every paid call is counted by some budget it
/// falls under. (An amount read from an input the call leaves out is unknown too: `serve`
/// refuses such a call when only an amount budget could count it.)
pub fn budget_problem(
    operations: &[Operation],
    budgets: &[crate::budget::Budget],
) -> Option<String> {
    use crate::budget::Unit;
    let has = |unit: Unit| budgets.iter().any(|b| b.unit == unit);
    if has(Unit::Money)
        && let Err((a, b)) = currency_of(operations)
    {
        return Some(format!(
            "a `money` budget adds up amounts in one currency, and the operations spend both {a} and {b}"
        ));
    }
    if has(Unit::Calls) {
        return None;
    }
    for op in operations {
        let Some(spends) = &op.spends else { continue };
        let unit = match spends.kind {
            SpendKind::Credits => Unit::Credits,
            SpendKind::Money => Unit::Money,
        };
        if has(unit) && spends.amount.is_none() {
            return Some(format!(
                "`{}` spends {} without an `amount`, so a `{}` budget cannot count its calls: give its `spends.amount`, or add a `calls` budget (e.g. `calls=10/day`), which counts every paid call",
                op.id,
                unit.as_str(),
                unit.as_str()
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::{OAuthScopes, credential_env, same_server};

    #[test]
    fn a_server_is_the_same_up_to_a_trailing_slash_and_the_hosts_case() {
        let base = "https://api.example/v1";
        assert!(same_server("https://api.example/v1/", base));
        assert!(same_server("HTTPS://API.Example/v1", base));
        assert!(!same_server("https://api.example/V1", base));
        assert!(!same_server("https://api.example/v2", base));
        assert!(!same_server("https://api.example", base));
        assert!(!same_server("https://api.example:8443/v1", base));
        assert!(!same_server("/v1", base));
        assert!(same_server("https://api.example/", "https://api.example"));
    }

    #[test]
    fn scope_names_default_to_the_service_in_lower_case_kebab() {
        let none = OAuthScopes::default();
        assert_eq!(
            none.resolved("VidGen"),
            ["vidgen:read", "vidgen:change", "vidgen:spend"]
        );
        assert_eq!(none.resolved("  My__API v2 ")[0], "my-api-v2:read");
        let some = OAuthScopes {
            spend: Some("videos.buy".into()),
            ..OAuthScopes::default()
        };
        assert_eq!(
            some.resolved("Acme Payments"),
            ["acme-payments:read", "acme-payments:change", "videos.buy"]
        );
    }

    #[test]
    fn credential_variables_follow_the_service_name() {
        assert_eq!(credential_env("VidGen"), "VIDGEN_TOKEN");
        assert_eq!(credential_env("Print Shop"), "PRINT_SHOP_TOKEN");
        assert_eq!(credential_env("  --  "), "CONNECTOR_TOKEN");
        assert_eq!(credential_env("open-ai batches!"), "OPEN_AI_BATCHES_TOKEN");
        assert_eq!(credential_env("3D Prints"), "_3D_PRINTS_TOKEN");
    }
}
