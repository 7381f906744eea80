//! The validated connector: what the renderers may rely on.
//!
//! Takes: nothing (built only by `validate.rs`). Returns: plain domain types with every
//! default applied and every cross-reference checked, so renderers never re-check.
//! Must never: derive `Deserialize` or keep an `Option` for something that has a default.
//! Remaining `Option`s mean "absent" in the output, not "not decided yet".

use serde::Serialize;

use crate::diagnostics::Span;
use crate::lint::{Lint, LintConfig};

/// A whole connector, ready to render.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Connector {
    pub service: Service,
    /// Connector tokens start with this, when the manifest says so.
    pub token_prefix: Option<String>,
    /// In manifest order: outputs list operations in the order the author wrote them.
    pub operations: Vec<Operation>,
    /// Lint levels from `lint:` over the defaults.
    #[serde(skip)]
    pub lint: LintConfig,
    /// Which outputs to produce, in a fixed order, without repeats.
    #[serde(skip)]
    pub targets: Vec<Target>,
    /// `templates:` as written (relative to the manifest) and where, if given.
    #[serde(skip)]
    pub templates_dir: Option<(String, Span)>,
}

/// An agent platform connectorgen writes for, and the files it gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, clap::ValueEnum)]
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
    pub const ALL: [(&'static str, Target); 4] = [
        ("muse", Target::Muse),
        ("mcp", Target::Mcp),
        ("openai", Target::Openai),
        ("openapi30", Target::Openapi30),
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Target::Muse => "muse",
            Target::Mcp => "mcp",
            Target::Openai => "openai",
            Target::Openapi30 => "openapi30",
        }
    }
}

/// Where an operation's parts are in the manifest, so findings made after validation
/// (target constraints while rendering) can still point at the YAML node at fault.
#[derive(Debug, Clone)]
pub struct Origin {
    pub id: Span,
    pub description: Span,
    pub input: Option<Span>,
    pub output: Option<Span>,
    /// One per query parameter, in order.
    pub query: Vec<Span>,
}

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
    /// Without a trailing slash.
    pub dashboard_url: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    Get,
    Post,
    Put,
    Patch,
    Delete,
}

impl Method {
    pub const ALL: [(&'static str, Method); 5] = [
        ("get", Method::Get),
        ("post", Method::Post),
        ("put", Method::Put),
        ("patch", Method::Patch),
        ("delete", Method::Delete),
    ];

    /// Lower case, as OpenAPI path items key them.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "get",
            Method::Post => "post",
            Method::Put => "put",
            Method::Patch => "patch",
            Method::Delete => "delete",
        }
    }

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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SpendKind {
    Credits,
    Money,
    Irreversible,
}

impl SpendKind {
    pub const ALL: [(&'static str, SpendKind); 3] = [
        ("credits", SpendKind::Credits),
        ("money", SpendKind::Money),
        ("irreversible", SpendKind::Irreversible),
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            SpendKind::Credits => "credits",
            SpendKind::Money => "money",
            SpendKind::Irreversible => "irreversible",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Idempotency {
    Optional,
    Required,
    Unsupported,
}

impl Idempotency {
    pub const ALL: [(&'static str, Idempotency); 3] = [
        ("optional", Idempotency::Optional),
        ("required", Idempotency::Required),
        ("unsupported", Idempotency::Unsupported),
    ];
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Spends {
    pub kind: SpendKind,
    pub note: String,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Async {
    /// The id of a validated free, side-effect-free GET operation.
    pub poll_with: String,
    pub typical_seconds: Option<u64>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QueryParam {
    pub name: String,
    pub description: Option<String>,
    pub required: bool,
    /// Passed through as written.
    pub schema: serde_json::Value,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Operation {
    pub id: String,
    pub method: Method,
    pub path: String,
    /// The `{name}` segments of `path`, in order.
    pub path_params: Vec<String>,
    pub summary: String,
    /// The author's description, as written (trimmed).
    pub description: String,
    /// JSON Schema of the request body, as written.
    pub input: Option<serde_json::Value>,
    pub query: Vec<QueryParam>,
    /// JSON Schema of the success response, as written, or an object with any properties.
    pub output: serde_json::Value,
    pub spends: Option<Spends>,
    #[serde(rename = "async")]
    pub async_: Option<Async>,
    pub idempotency: Idempotency,
    /// Lints not reported for this operation (`lintAllow`).
    #[serde(skip)]
    pub lint_allow: Vec<Lint>,
    #[serde(skip)]
    pub origin: Origin,
}

impl Operation {
    /// Whether the model must send an `Idempotency-Key` header (declared in openapi.json):
    /// every non-GET that spends or starts a job, unless the provider cannot honour one.
    pub fn takes_idempotency_key(&self) -> bool {
        self.method != Method::Get
            && (self.spends.is_some() || self.async_.is_some())
            && self.idempotency != Idempotency::Unsupported
    }
}
