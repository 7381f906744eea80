//! The one diagnostic type of connectorgen.
//!
//! Takes: problems found while parsing (`manifest.rs`), validating (`validate.rs`) and
//! linting (`lint.rs`). Returns: `Diagnostic` values (one variant per rule, each with a
//! stable kebab-case code, a label on the exact YAML node and a help line) and
//! `Diagnostics`, the ordered collection of findings a run reports at once.
//! Must never: lose a problem, or report one without a place in the file when the
//! parser gave us one.

use std::sync::Arc;

use miette::{NamedSource, SourceSpan};

/// A byte range in the manifest, as miette wants it.
pub type Span = SourceSpan;

/// One problem in a manifest. Every variant is one rule; its `code` is stable, is the
/// variant's name in kebab-case (like lint ids), and is what the test case file
/// `tests/cases/{invalid,lint}/<code>.yaml` is named after. `Rule` lists the variants,
/// so the codes are enumerated from the type; `tests/cases.rs` checks that each has a
/// case and that the `code(…)` miette prints is that same name.
#[derive(Debug, thiserror::Error, miette::Diagnostic, strum::EnumDiscriminants)]
#[strum_discriminants(
    name(Rule),
    derive(strum::VariantArray, strum::IntoStaticStr),
    strum(serialize_all = "kebab-case")
)]
pub enum Diagnostic {
    /// The file is not well-formed YAML (or a scalar could not be read).
    #[error("invalid YAML: {message}")]
    #[diagnostic(
        code("yaml-syntax"),
        help(
            "fix the YAML syntax at the marked place; quote values that contain `: ` or start with a special character"
        )
    )]
    YamlSyntax {
        message: String,
        #[label("here")]
        span: Span,
    },

    /// A value has the wrong YAML type (a list where a string belongs, a word where a number belongs).
    #[error("wrong type: {message}")]
    #[diagnostic(code("wrong-type"))]
    WrongType {
        message: String,
        #[label("this value")]
        span: Span,
        #[help]
        help: Option<String>,
    },

    /// A mapping holds a key the manifest format does not know.
    #[error("unknown key `{key}`")]
    #[diagnostic(code("unknown-key"))]
    UnknownKey {
        key: String,
        #[label("not a known key here")]
        span: Span,
        #[help]
        help: String,
    },

    /// A mapping holds the same key twice; YAML forbids it and the second would silently win elsewhere.
    #[error("duplicate key `{key}`")]
    #[diagnostic(
        code("duplicate-key"),
        help("remove one of the two; each key may appear once in a mapping")
    )]
    DuplicateKey {
        key: String,
        #[label("second occurrence")]
        span: Span,
    },

    /// A YAML resource budget (nesting depth, alias expansion, node count) was exceeded.
    #[error("manifest exceeds a parser limit: {message}")]
    #[diagnostic(
        code("yaml-limit"),
        help(
            "anchors and aliases are fine for reuse within the budgets; the message says how to get under the limit, or which flag raises it"
        )
    )]
    YamlLimit {
        message: String,
        #[label("limit reached here")]
        span: Span,
    },

    /// A required key is absent.
    #[error("missing required key `{key}` in {context}")]
    #[diagnostic(code("missing-key"))]
    MissingKey {
        key: &'static str,
        context: &'static str,
        #[label("add `{key}` to this mapping")]
        span: Span,
        #[help]
        help: String,
    },

    /// `version` names a manifest format this build does not read.
    #[error("unsupported manifest version {found}")]
    #[diagnostic(
        code("unsupported-version"),
        help("only `version: 1` exists; write `version: 1`")
    )]
    UnsupportedVersion {
        found: String,
        #[label("expected 1")]
        span: Span,
    },

    /// A text that the model or the person reads is empty or only whitespace.
    #[error("`{key}` must not be empty")]
    #[diagnostic(code("empty-text"))]
    EmptyText {
        key: &'static str,
        #[label("empty")]
        span: Span,
        #[help]
        help: String,
    },

    /// A URL is not absolute https (http is allowed only for localhost and 127.0.0.1).
    #[error("`{key}` is not a usable URL: {reason}")]
    #[diagnostic(
        code("bad-url"),
        help(
            "use an absolute https URL such as `https://api.example.com`; plain http is accepted only for localhost or 127.0.0.1"
        )
    )]
    BadUrl {
        key: &'static str,
        reason: String,
        #[label("this URL")]
        span: Span,
    },

    /// The manifest lists no operations.
    #[error("`operations` is empty")]
    #[diagnostic(
        code("no-operations"),
        help(
            "list at least one operation; a connector without operations gives the model nothing to do"
        )
    )]
    NoOperations {
        #[label("no operations here")]
        span: Span,
    },

    /// An operation id is not a valid operationId (letter first, then letters, digits or `_`).
    #[error("invalid operation id `{id}`")]
    #[diagnostic(
        code("invalid-operation-id"),
        help("start with a letter and use only letters, digits and `_`, e.g. `createVideo`")
    )]
    InvalidOperationId {
        id: String,
        #[label("not a valid operationId")]
        span: Span,
    },

    /// Two operations share an id.
    #[error("duplicate operation id `{id}`")]
    #[diagnostic(
        code("duplicate-operation-id"),
        help("operation ids must be unique; rename one of them")
    )]
    DuplicateOperationId {
        id: String,
        #[label("second use")]
        span: Span,
        #[label("first used here")]
        first: Span,
    },

    /// `method` is not one of get, post, put, patch, delete.
    #[error("unknown method `{method}`")]
    #[diagnostic(code("unknown-method"))]
    UnknownMethod {
        method: String,
        #[label("not a supported method")]
        span: Span,
        #[help]
        help: String,
    },

    /// A path does not start with `/`, has characters a URL path cannot hold, or a malformed `{param}`.
    #[error("invalid path `{path}`: {reason}")]
    #[diagnostic(
        code("invalid-path"),
        help(
            "write a path such as `/v1/videos/{{id}}`: it starts with `/`, and each `{{name}}` is a whole segment named with letters, digits or `_`"
        )
    )]
    InvalidPath {
        path: String,
        reason: String,
        #[label("this path")]
        span: Span,
    },

    /// Two operations share the same method and path.
    #[error("two operations are `{method} {path}`")]
    #[diagnostic(
        code("duplicate-route"),
        help(
            "each method + path pair may be declared once; merge the two operations or change one path"
        )
    )]
    DuplicateRoute {
        method: String,
        path: String,
        #[label("second declaration")]
        span: Span,
        #[label("first declared here")]
        first: Span,
    },

    /// `input` (a request body) is given on a get or delete operation.
    #[error("`input` is not allowed on a {method} operation")]
    #[diagnostic(
        code("input-not-allowed"),
        help(
            "GET and DELETE requests carry no JSON body: move these fields to `query` parameters or to the path"
        )
    )]
    InputNotAllowed {
        method: String,
        #[label("request body declared here")]
        span: Span,
    },

    /// `input` or `output` is not a JSON Schema (a mapping or a boolean).
    #[error("`{key}` must be a JSON Schema (a mapping)")]
    #[diagnostic(
        code("invalid-schema"),
        help(
            "write a JSON Schema object, e.g. `{{ type: object, properties: {{ name: {{ type: string }} }} }}`"
        )
    )]
    InvalidSchema {
        key: &'static str,
        #[label("not a schema")]
        span: Span,
    },

    /// A query parameter name is empty, repeated, or not usable in a URL.
    #[error("invalid query parameter `{name}`: {reason}")]
    #[diagnostic(
        code("invalid-query-parameter"),
        help(
            "query parameter names are unique within an operation and use letters, digits, `_`, `-` or `.`"
        )
    )]
    InvalidQueryParameter {
        name: String,
        reason: String,
        #[label("this parameter")]
        span: Span,
    },

    /// `spends` or `async` is declared on a get operation.
    #[error("a get operation cannot {what}")]
    #[diagnostic(
        code("get-with-side-effect"),
        help(
            "a GET must be free and safe to repeat: models retry and poll GETs freely. Make this operation a `post`, or remove `{key}`"
        )
    )]
    GetWithSideEffect {
        what: &'static str,
        key: &'static str,
        #[label("declared on a get")]
        span: Span,
    },

    /// `spends.kind` is not credits, money or irreversible.
    #[error("unknown spend kind `{kind}`")]
    #[diagnostic(code("unknown-spend-kind"))]
    UnknownSpendKind {
        kind: String,
        #[label("not a spend kind")]
        span: Span,
        #[help]
        help: String,
    },

    /// `idempotency` is not optional, required or unsupported.
    #[error("unknown idempotency `{value}`")]
    #[diagnostic(code("unknown-idempotency"))]
    UnknownIdempotency {
        value: String,
        #[label("not an idempotency setting")]
        span: Span,
        #[help]
        help: String,
    },

    /// `async.typicalSeconds` is zero or negative.
    #[error("`typicalSeconds` must be a positive whole number of seconds, not {value}")]
    #[diagnostic(
        code("non-positive-typical-seconds"),
        help("give the usual wait in seconds (e.g. `typicalSeconds: 90`), or leave the key out")
    )]
    NonPositiveTypicalSeconds {
        value: i64,
        #[label("must be 1 or more")]
        span: Span,
    },

    /// `async.pollWith` names no operation of this manifest.
    #[error("`pollWith` names unknown operation `{target}`")]
    #[diagnostic(code("unknown-poll-target"))]
    UnknownPollTarget {
        target: String,
        #[label("no operation has this id")]
        span: Span,
        #[help]
        help: String,
    },

    /// `async.pollWith` names an operation that is not a free, side-effect-free read.
    #[error("poll target `{target}` is not a free, side-effect-free read: {reason}")]
    #[diagnostic(
        code("unsafe-poll-target"),
        help(
            "the model will call the poll target many times: point `pollWith` at a `get` operation that neither spends nor is async (e.g. `GET /v1/jobs/{{id}}`)"
        )
    )]
    UnsafePollTarget {
        target: String,
        reason: &'static str,
        #[label("poll target named here")]
        span: Span,
        #[label("declared here")]
        target_span: Option<Span>,
    },

    /// An auth token prefix is empty or contains whitespace.
    #[error("invalid `tokenPrefix` `{prefix}`")]
    #[diagnostic(
        code("invalid-token-prefix"),
        help("give the literal start of every connector token, e.g. `vg_`, or remove `auth`")
    )]
    InvalidTokenPrefix {
        prefix: String,
        #[label("not a token prefix")]
        span: Span,
    },

    /// An unknown lint id in `lint:` or `lintAllow:`.
    #[error("unknown lint `{id}`")]
    #[diagnostic(code("unknown-lint"))]
    UnknownLint {
        id: String,
        #[label("not a lint id")]
        span: Span,
        #[help]
        help: String,
    },

    /// A lint level that is not allow, warn or deny, or a `max` that is not a positive number.
    #[error("invalid lint setting for `{id}`: {reason}")]
    #[diagnostic(
        code("invalid-lint-setting"),
        help(
            "write `allow`, `warn` or `deny`, or for description-too-long `{{ level: warn, max: 300 }}`"
        )
    )]
    InvalidLintSetting {
        id: String,
        reason: String,
        #[label("this setting")]
        span: Span,
    },

    /// `templates:` names a folder that cannot be read, or holds a file that is no template.
    #[error("cannot use the templates folder: {message}")]
    #[diagnostic(
        code("bad-templates-dir"),
        help(
            "`templates:` is a folder relative to the manifest holding some of description.j2, description.compact.j2, llms.txt.j2, descriptions.md.j2 (`connectorgen templates export DIR` writes them)"
        )
    )]
    BadTemplatesDir {
        message: String,
        #[label("this folder")]
        span: Span,
    },

    /// `targets:` names a platform connectorgen does not write for, or is empty.
    #[error("unknown target `{target}`")]
    #[diagnostic(code("unknown-target"))]
    UnknownTarget {
        target: String,
        #[label("not a target")]
        span: Span,
        #[help]
        help: String,
    },

    /// With the `mcp` target, two inputs of one operation (path, query, body property,
    /// idempotencyKey) have the same name, so they cannot share one MCP `inputSchema`.
    #[error(
        "`{id}`: `{name}` is both {first} and {second}; an MCP tool takes one flat set of arguments"
    )]
    #[diagnostic(
        code("mcp-input-collision"),
        help(
            "rename the query parameter or the body property so every input of the operation has its own name"
        )
    )]
    McpInputCollision {
        id: String,
        name: String,
        first: &'static str,
        second: &'static str,
        #[label("this operation")]
        span: Span,
    },

    /// With the `openapi30` target, a JSON Schema uses a construct OpenAPI 3.0 cannot express.
    #[error("`{id}`: {pointer} uses {construct}, which OpenAPI 3.0 cannot express")]
    #[diagnostic(
        code("openapi30-unsupported"),
        help(
            "rewrite the schema with 3.0-compatible keywords, or remove `openapi30` from `targets`"
        )
    )]
    Openapi30Unsupported {
        id: String,
        pointer: String,
        construct: String,
        #[label("in this schema")]
        span: Span,
    },

    /// With the `openai` target, a text was shortened to fit OpenAI's limits. Silenced,
    /// or made an error, like the `description-too-long` lint (`lintAllow`, `lint:`).
    #[error(
        "`{id}`: {what} is {length} characters; OpenAI allows {max}, so openapi.openai.json {action}"
    )]
    #[diagnostic(
        code("openai-description-shortened"),
        help(
            "shorten the author's text so nothing is cut (the cost and polling sentences are always kept), or silence this with `lintAllow: [description-too-long]`"
        )
    )]
    OpenaiDescriptionShortened {
        id: String,
        what: &'static str,
        length: usize,
        max: usize,
        action: &'static str,
        #[label("this text")]
        span: Span,
    },

    // ---- Safety lints: valid manifests that may still mislead a model. ----
    /// The description does not say what the call will not do.
    #[error("`{id}`: the description does not say what the call will not do")]
    #[diagnostic(
        code("missing-limit"),
        help(
            "say what the call cannot do, e.g. \"Reads your balance\" → \"Read-only. This cannot move funds.\"; \"Gets your tasks\" → \"Returns tasks. Does not create, edit or complete them.\"; \"Manages your account\" → \"Lists connected accounts. Cannot change billing or delete anything.\""
        )
    )]
    MissingLimit {
        id: String,
        #[label("no \"read-only\", \"cannot\", \"does not\", \"never\" or \"only\" here")]
        span: Span,
    },

    /// The summary is under three words or starts with a catch-all verb.
    #[error("`{id}`: the summary is vague: {reason}")]
    #[diagnostic(
        code("vague-summary"),
        help(
            "name the action and its object in three words or more, e.g. \"Generate a video from a prompt\", not \"Manages videos\""
        )
    )]
    VagueSummary {
        id: String,
        reason: String,
        #[label("vague")]
        span: Span,
    },

    /// An operation that spends declares `idempotency: unsupported`.
    #[error("`{id}` spends but cannot recognise a retry")]
    #[diagnostic(
        code("spend-without-idempotency"),
        help(
            "a retry after a timeout charges the person again; have the provider honour an Idempotency-Key and set `idempotency: optional` or `required`"
        )
    )]
    SpendWithoutIdempotency {
        id: String,
        #[label("declared unsupported here")]
        span: Span,
    },

    /// The poll target's path has no `{param}` to name the job.
    #[error("poll target `{target}` has no path parameter to name the job")]
    #[diagnostic(
        code("poll-target-without-id"),
        help(
            "poll a path that names the job, e.g. `GET /v1/jobs/{{id}}`; without one the model cannot tell which job it is polling"
        )
    )]
    PollTargetWithoutId {
        target: String,
        #[label("polls `{target}`")]
        span: Span,
        #[label("no `{{param}}` in this path")]
        target_path: Span,
    },

    /// The description the model reads is longer than the configured maximum.
    #[error(
        "`{id}`: the description the model reads is {length} characters, over the {max} configured"
    )]
    #[diagnostic(
        code("description-too-long"),
        help(
            "shorten the author's description (the cost and polling sentences are generated and must stay), or raise `lint: {{ description-too-long: {{ max: … }} }}`"
        )
    )]
    DescriptionTooLong {
        id: String,
        length: usize,
        max: usize,
        #[label("{length} characters with the generated sentences")]
        span: Span,
    },

    /// A non-GET operation that does not spend does not say what it will not do.
    #[error("`{id}` changes things but its description does not say what it will not do")]
    #[diagnostic(
        code("mutating-without-limit"),
        help(
            "bound the change, e.g. \"Cancels the order. Cannot cancel an order already in production and never charges anything.\""
        )
    )]
    MutatingWithoutLimit {
        id: String,
        #[label("no \"cannot\", \"does not\", \"never\" or \"only\" here")]
        span: Span,
    },

    /// A schema's `$ref` points into the document (`#/…`): in openapi.json that resolves
    /// against the whole OpenAPI document, where the author's `$defs` are not.
    #[error(
        "`{id}`: `$ref: \"{reference}\"` in {field} will not resolve in the generated OpenAPI documents"
    )]
    #[diagnostic(
        code("local-ref"),
        help(
            "a `#…` reference inside an operation's schema resolves against the root of openapi.json, not against this schema; inline the referenced schema, or reuse it with a YAML anchor (`&address` … `*address`)"
        )
    )]
    LocalRef {
        id: String,
        field: &'static str,
        reference: String,
        #[label("this schema")]
        span: Span,
    },

    /// An operation spends but is not async.
    #[error("`{id}` spends and answers synchronously")]
    #[diagnostic(
        code("paid-sync-operation"),
        help(
            "allowed; if the call can take long, make it `async` with a free poll target so a timeout does not tempt the model to resubmit"
        )
    )]
    PaidSyncOperation {
        id: String,
        #[label("spends here")]
        span: Span,
    },
}

impl Diagnostic {
    /// The stable code of this diagnostic, e.g. `unknown-key`.
    pub fn code_str(&self) -> String {
        Rule::from(self).code().to_string()
    }
}

impl Rule {
    /// The rule's stable code, e.g. `unknown-key`.
    pub fn code(self) -> &'static str {
        self.into()
    }
}

/// How much a finding matters: errors stop `build` and fail `check`; warnings are
/// printed and fail only under `--deny-warnings`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

/// A diagnostic with the severity it has in this run (lint levels decide it for lints).
#[derive(Debug)]
pub struct Finding {
    pub diagnostic: Diagnostic,
    pub severity: Severity,
}

impl Finding {
    pub fn error(diagnostic: Diagnostic) -> Self {
        Finding {
            diagnostic,
            severity: Severity::Error,
        }
    }
}

/// Every finding in one manifest, in file order, with the text they point into.
#[derive(Debug)]
pub struct Diagnostics {
    source: NamedSource<Arc<String>>,
    text: Arc<String>,
    items: Vec<Finding>,
}

impl Diagnostics {
    pub fn new(name: &str, text: Arc<String>, mut items: Vec<Finding>) -> Self {
        // File order reads like the file; the sort is stable so equal offsets keep rule order.
        items.sort_by_key(|f| first_offset(&f.diagnostic).unwrap_or(usize::MAX));
        Diagnostics {
            source: NamedSource::new(name, text.clone()),
            text,
            items,
        }
    }

    pub fn items(&self) -> &[Finding] {
        &self.items
    }

    /// The manifest's name as the user gave it.
    pub fn name(&self) -> &str {
        self.source.name()
    }

    /// The manifest text the spans point into.
    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn source(&self) -> &NamedSource<Arc<String>> {
        &self.source
    }

    pub fn count(&self, severity: Severity) -> usize {
        self.items.iter().filter(|f| f.severity == severity).count()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Every finding drawn the way a terminal shows it (rustc-style snippet, caret under
    /// the value, help line), with or without colour.
    pub fn render(&self, color: bool) -> String {
        crate::report::human_findings(self, color)
    }
}

fn first_offset(d: &Diagnostic) -> Option<usize> {
    use miette::Diagnostic as _;
    d.labels()
        .and_then(|mut labels| labels.next())
        .map(|l| l.offset())
}

/// "did you mean `x`?" for a misspelt word among the known ones, or the list of known ones.
pub fn suggest<'a>(found: &str, known: impl IntoIterator<Item = &'a str>) -> String {
    let known: Vec<&str> = known.into_iter().collect();
    let best = known
        .iter()
        .map(|k| (strsim::jaro_winkler(found, k), *k))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0));
    match best {
        Some((_, k)) => format!("did you mean `{k}`?"),
        None if known.len() <= 12 => format!(
            "expected one of: {}",
            known
                .iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        None => "no similar name exists".to_string(),
    }
}
