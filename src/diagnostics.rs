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

    /// An operation id is not usable by agents (1 to 128 letters, digits, `_`, `.`, `-`).
    #[error("invalid operation id `{id}`")]
    #[diagnostic(
        code("invalid-operation-id"),
        help(
            "use 1 to 128 letters, digits, `_`, `.` or `-`, starting with a letter, digit or `_`, e.g. `createVideo`"
        )
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

    /// `input` (a request body) is given on a get or delete operation, or an
    /// `openapi:` fragment gives it a `requestBody`.
    #[error("`{key}` is not allowed on a {method} operation")]
    #[diagnostic(
        code("input-not-allowed"),
        help(
            "GET and DELETE requests carry no JSON body: move these fields to `query` parameters or to the path"
        )
    )]
    InputNotAllowed {
        /// What declares the body: `input`, `inputType` or `openapi.requestBody`.
        key: &'static str,
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

    /// `spends`, `async` or `confirm: true` is declared on a get operation.
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

    /// `spends.kind: irreversible`, which `confirm: true` replaced: `spends` is for costs,
    /// and a permanent action may cost nothing.
    #[error("`spends.kind: irreversible` was replaced by `confirm: true`")]
    #[diagnostic(code("spend-kind-irreversible"))]
    SpendKindIrreversible {
        #[label("no longer a spend kind")]
        span: Span,
        /// The new form, with the operation's own note.
        #[help]
        help: String,
    },

    /// `confirm: false` on an operation that spends: a cost always needs the person's yes.
    #[error("`confirm: false` on an operation that spends")]
    #[diagnostic(
        code("confirm-contradicts-spends"),
        help(
            "a call that costs the person always needs their fresh yes, so it is never routine: remove `confirm: false` (or `spends`, if the call costs nothing)"
        )
    )]
    ConfirmContradictsSpends {
        #[label("says no confirmation is needed")]
        span: Span,
        #[label("but this costs the person")]
        spends: Span,
    },

    /// `async.returns` is not job or change.
    #[error("unknown `async.returns` value `{value}`")]
    #[diagnostic(code("unknown-async-returns"))]
    UnknownAsyncReturns {
        value: String,
        #[label("not job or change")]
        span: Span,
        #[help]
        help: String,
    },

    /// `spends.kind` is not credits or money.
    #[error("unknown spend kind `{kind}`")]
    #[diagnostic(code("unknown-spend-kind"))]
    UnknownSpendKind {
        kind: String,
        #[label("not a spend kind")]
        span: Span,
        #[help]
        help: String,
    },

    /// `idempotency` is not optional, required, inherent or unsupported, nor a mapping
    /// naming one key (`header`, `query` or `bodyField`, and `required`).
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

    /// With the `mcp` target, `args:` gives two inputs of one operation the same argument
    /// name, so they cannot share one MCP `inputSchema`. (Names connectorgen chooses
    /// never collide: it adds the location, docs/mcp.md.)
    #[error(
        "`{id}`: `{name}` would name both {first} and {second}; an MCP tool (the mcp target) takes one flat set of arguments"
    )]
    #[diagnostic(
        code("mcp-input-collision"),
        help(
            "choose another name in `args:` for one of them, or leave it out of `args:` to let connectorgen choose"
        )
    )]
    McpInputCollision {
        id: String,
        name: String,
        first: String,
        second: String,
        #[label("this name")]
        span: Span,
    },

    /// An `args:` name that some MCP client refuses: tool argument names must match
    /// `^[a-zA-Z0-9_.-]{1,64}$` (Anthropic's API rejects the whole tool list otherwise).
    #[error("`{name}` is not an argument name every MCP client accepts")]
    #[diagnostic(code("invalid-argument-name"))]
    InvalidArgumentName {
        name: String,
        #[label("1 to 64 letters, digits, `_`, `.` or `-`")]
        span: Span,
        /// What to write instead (the name the documented rule would give).
        #[help]
        help: String,
    },

    /// A `fixed:` entry that does not say where its value comes from.
    #[error("`fixed: {name}`: {problem}")]
    #[diagnostic(
        code("invalid-fixed"),
        help(
            "give exactly one of `env: VARIABLE` (an environment variable of the server that sends the call, e.g. `env: ACCOUNT_SID`) and `value: text`"
        )
    )]
    InvalidFixed {
        name: String,
        problem: String,
        #[label("here")]
        span: Span,
    },

    /// An operation's `probe:` is not `{ input: { argument: value, … } }`.
    #[error("`probe`: {problem}")]
    #[diagnostic(
        code("invalid-probe"),
        help(
            "write the example call `connectorgen probe` makes as `probe: {{ input: {{ prompt: \"a test\" }} }}`, with the tool's argument names"
        )
    )]
    InvalidProbe {
        problem: String,
        #[label("here")]
        span: Span,
    },

    /// With the `mcp` target, an `args:` or `fixed:` key names no input of the operation.
    #[error("`{id}`: `{key}: {name}` names no {what} of this operation")]
    #[diagnostic(code("unknown-mcp-input"))]
    UnknownMcpInput {
        id: String,
        key: &'static str,
        name: String,
        what: &'static str,
        #[label("not an input")]
        span: Span,
        #[help]
        help: String,
    },

    /// With the `mcp` target, a tool name some MCP client refuses: Claude Desktop, the
    /// Claude connector directory and VS Code take at most 64 characters, and `.` (which
    /// the MCP spec allows) breaks others.
    #[error("`{id}` is not a tool name every MCP client accepts: {problem}")]
    #[diagnostic(
        code("mcp-tool-name"),
        help(
            "set `id:` on the operation to 1 to 64 letters, digits, `_` or `-` (the model calls it by this name), e.g. `id: {suggestion}`"
        )
    )]
    McpToolName {
        id: String,
        problem: &'static str,
        suggestion: String,
        #[label("this operation")]
        span: Span,
    },

    /// With the `mcp` target, a `pattern` in a tool schema is not an ECMAScript regular
    /// expression with the Unicode flag, which is how the MCP TypeScript SDK (Ajv) compiles
    /// it: one such pattern makes `listTools()` fail for every tool of the server.
    #[error(
        "`{id}`: {pointer} is not an ECMAScript (Unicode) regular expression; left out of the MCP tool"
    )]
    #[diagnostic(
        code("mcp-pattern-dropped"),
        help(
            "the provider still checks the value; to keep the constraint in the tool, rewrite the pattern in ECMAScript syntax ({error})"
        )
    )]
    McpPatternDropped {
        id: String,
        pointer: String,
        error: String,
        #[label("in this operation")]
        span: Span,
    },

    /// With the `mcp` target, a tool is heavy for a model's context (lint
    /// `mcp-tool-too-large`): every tool definition travels in each `tools/list`.
    #[error(
        "`{id}`: its MCP tool is {bytes} bytes (about {tokens} tokens), over the {max} configured"
    )]
    #[diagnostic(code("mcp-tool-too-large"))]
    McpToolTooLarge {
        id: String,
        bytes: usize,
        tokens: usize,
        max: usize,
        #[label("this operation")]
        span: Span,
        /// The heaviest parts, and what to do.
        #[help]
        help: String,
    },

    /// With the `mcp` target, `mcp-tools.json` would pass its bound: every tool carries
    /// its own copy of each component it reaches.
    #[error(
        "mcp-tools.json would be over {limit} bytes ({factor} times the {input} bytes of the connector's OpenAPI operations and components, plus 1 MiB); stopped at `{id}`"
    )]
    #[diagnostic(
        code("mcp-output-too-large"),
        help(
            "expose fewer operations, or ones that reach fewer shared schemas (each MCP tool copies every schema it references), or leave the mcp target out: pass `--target` without it"
        )
    )]
    McpOutputTooLarge {
        id: String,
        limit: usize,
        factor: usize,
        input: usize,
        #[label("this operation")]
        span: Span,
    },

    /// With the `openapi30` target, a JSON Schema uses a construct OpenAPI 3.0 cannot express.
    #[error(
        "`{id}`: {pointer} uses {construct}, which OpenAPI 3.0 (the openapi30 target) cannot express"
    )]
    #[diagnostic(
        code("openapi30-unsupported"),
        help(
            "rewrite the schema with 3.0-compatible keywords, or leave the openapi30 target out: remove it from `targets`, or pass `--target` without it for one run (e.g. `--target muse,mcp`)"
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
        "`{id}`: {what} is {length} characters and {max} fit in openapi.openai.json (OpenAI's limits), so it {action}"
    )]
    #[diagnostic(
        code("openai-description-shortened"),
        help(
            "shorten the author's text so nothing is cut (the cost, permanence and polling sentences are always kept), or silence this with `lintAllow: [description-too-long]`"
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

    /// With the `openai` target, an operation's retry key is a header, which GPT Actions
    /// cannot send: openapi.openai.json writes it without the header, with the
    /// never-repeat rule.
    #[error(
        "`{id}`: GPT Actions cannot send the `{header}` header, so openapi.openai.json tells the model never to retry this call on its own{refused}"
    )]
    #[diagnostic(
        code("openai-header-key"),
        help(
            "OpenAI's Actions do not support custom headers. If the provider also accepts the key in the body or the query, name that (`idempotency: {{ bodyField: … }}` or `{{ query: … }}`) and the openai target keeps it; otherwise acknowledge it with `lintAllow: [openai-header-key]` on the operation (or `lint: {{ openai-header-key: allow }}`)"
        )
    )]
    OpenaiHeaderKey {
        id: String,
        header: String,
        /// When the header is required: that the provider will refuse every call.
        refused: String,
        #[label("a header key")]
        span: Span,
    },

    /// With the `openai` target, the generated cost, polling and consent sentences alone
    /// leave too little of OpenAI's 300 characters for the author's description.
    #[error(
        "`{id}`: the generated sentences alone are {length} characters in openapi.openai.json; at most {max} leave room for what the call will not do within OpenAI's 300"
    )]
    #[diagnostic(code("openai-notice-too-long"))]
    OpenaiNoticeTooLong {
        id: String,
        length: usize,
        max: usize,
        /// At the author's words the generated sentences repeat (the longer of
        /// `spends.note` and `spends.when`), else the poll target's name.
        #[label("this makes it long")]
        span: Span,
        /// What to shorten, or how to leave the target out.
        #[help]
        help: String,
    },

    // ---- Inline HTTP: what the request and response really look like. ----
    /// A path or header parameter is unusable: its name, a path without it, a header
    /// connectorgen or the client sends itself, or `required: false` on a path parameter.
    #[error("invalid {location} parameter `{name}`: {reason}")]
    #[diagnostic(
        code("invalid-parameter"),
        help(
            "`params` describe the path's `{{name}}` segments; `headers` are header parameters other than Authorization, Content-Type, Accept and Idempotency-Key"
        )
    )]
    InvalidParameter {
        location: &'static str,
        name: String,
        reason: String,
        #[label("this parameter")]
        span: Span,
    },

    /// A parameter's `style` or `explode` that OpenAPI does not allow there, or that does
    /// not fit its schema: a client would serialise the value differently than the API reads it.
    #[error("`{name}` in `{key}`: {reason}")]
    #[diagnostic(
        code("invalid-style"),
        help(
            "query: form (default), spaceDelimited, pipeDelimited, deepObject; path: simple (default), label, matrix; header: simple. `explode` applies to lists and objects"
        )
    )]
    InvalidStyle {
        name: String,
        key: &'static str,
        reason: String,
        #[label("here")]
        span: Span,
    },

    /// `inputType`, `outputType` or `errors.contentType` is not a `type/subtype` media type.
    #[error("`{key}` is not a media type: `{value}`")]
    #[diagnostic(
        code("invalid-media-type"),
        help(
            "write `type/subtype`, e.g. `application/json`, `application/x-www-form-urlencoded`, `multipart/form-data`, `application/octet-stream`, `text/plain`"
        )
    )]
    InvalidMediaType {
        key: &'static str,
        value: String,
        #[label("not type/subtype")]
        span: Span,
    },

    /// A success `status` outside 2xx, or an error status outside 4xx/5xx.
    #[error("status `{status}` is not {expected}")]
    #[diagnostic(
        code("invalid-status"),
        help(
            "`status` is the success status (200 to 299; 204 has no body); `errors.statuses` lists 400 to 599 or `default`"
        )
    )]
    InvalidStatus {
        status: String,
        expected: &'static str,
        #[label("this status")]
        span: Span,
    },

    /// The `openapi:` fragment of an operation is not a mapping of Operation Object fields,
    /// or sets a field connectorgen owns.
    #[error("the `openapi:` fragment cannot hold `{key}`: {reason}")]
    #[diagnostic(
        code("invalid-openapi-fragment"),
        help(
            "the fragment is merged over the generated operation: use it for Operation Object fields the manifest has no key for (externalDocs, callbacks, security, servers, x- extensions, …)"
        )
    )]
    InvalidOpenapiFragment {
        key: String,
        reason: String,
        #[label("this fragment")]
        span: Span,
    },

    /// A `$ref` in a schema the author wrote does not resolve inside the generated documents.
    #[error("`$ref: \"{reference}\"` does not resolve: {reason}")]
    #[diagnostic(
        code("unresolved-ref"),
        help(
            "share a schema by writing it once under `schemas:` and pointing at it with `$ref: \"#/components/schemas/<name>\"`"
        )
    )]
    UnresolvedRef {
        reference: String,
        reason: String,
        #[label("in this schema")]
        span: Span,
    },

    /// A JSON Schema the author wrote is not valid against the JSON Schema 2020-12
    /// meta-schema (`type: strnig`, `required: yes`).
    #[error("`{key}` is not a valid JSON Schema at `{pointer}`: {message}")]
    #[diagnostic(
        code("schema-not-valid"),
        help(
            "fix the schema at that place (it is JSON Schema 2020-12, as OpenAPI 3.1 reads it); the pointer is inside the schema marked below"
        )
    )]
    SchemaNotValid {
        key: String,
        pointer: String,
        message: String,
        #[label("in this schema")]
        span: Span,
    },

    /// A keyword in an author's JSON Schema that no JSON Schema or OpenAPI vocabulary
    /// defines (often a YAML slip: `{ description: a, b }` writes a keyword `b`).
    #[error(
        "`{key}` has the keyword `{keyword}` at `{pointer}`, which no schema vocabulary defines"
    )]
    #[diagnostic(code("unknown-schema-keyword"))]
    UnknownSchemaKeyword {
        key: String,
        keyword: String,
        pointer: String,
        #[label("in this schema")]
        span: Span,
        #[help]
        help: String,
    },

    /// `auth:` describes a credential no client can send.
    #[error("invalid `auth`: {reason}")]
    #[diagnostic(
        code("invalid-auth"),
        help(
            "`scheme: bearer` (the default), `scheme: basic`, or `scheme: apiKey` with `in: header` or `in: query` and the `name` that carries the key"
        )
    )]
    InvalidAuth {
        reason: String,
        #[label("here")]
        span: Span,
    },

    /// `auth.env` is not a name an environment variable can have, so `serve` could never
    /// read the credential from it.
    #[error("`auth.env: {name}` is not an environment variable name")]
    #[diagnostic(
        code("invalid-auth-env"),
        help(
            "a letter or `_`, then letters, digits or `_` (e.g. `env: VIDGEN_TOKEN`); leave `env` out for `<SERVICE>_TOKEN`"
        )
    )]
    InvalidAuthEnv {
        name: String,
        #[label("here")]
        span: Span,
    },

    // ---- Base mode: the provider's OpenAPI document (`openapi:`). ----
    /// `openapi:` names a file that cannot be read.
    #[error("cannot use the base OpenAPI document: {message}")]
    #[diagnostic(
        code("base-unreadable"),
        help(
            "`openapi:` is the provider's OpenAPI document (JSON or YAML), a regular file relative to this manifest, in its folder or below, or in a folder given on the command line with --allow-read DIR"
        )
    )]
    BaseUnreadable {
        message: String,
        #[label("this file")]
        span: Span,
    },

    /// The base document is not well-formed JSON or YAML.
    #[error("the base OpenAPI document does not parse: {message}")]
    #[diagnostic(
        code("base-syntax"),
        help("fix the document, or point `openapi:` at the provider's published file as it is")
    )]
    BaseSyntax {
        message: String,
        #[label("here")]
        span: Span,
    },

    /// The base document is not OpenAPI 3.0, 3.1 or 3.2.
    #[error("the base document is not OpenAPI 3.0, 3.1 or 3.2: {found}")]
    #[diagnostic(
        code("base-not-openapi"),
        help(
            "connectorgen reads OpenAPI 3.0.x, 3.1.x and 3.2.x; convert a Swagger 2.0 document first (e.g. with swagger2openapi)"
        )
    )]
    BaseNotOpenapi {
        found: String,
        #[label("here")]
        span: Span,
    },

    /// A `$ref` the exposed operations reach does not resolve to a component of the base
    /// document.
    #[error("`$ref: \"{reference}\"` {reason}")]
    #[diagnostic(
        code("base-ref-unresolved"),
        help(
            "connectorgen follows references to `#/components/…` inside the document; fix the reference or the component's name"
        )
    )]
    BaseRefUnresolved {
        reference: String,
        reason: &'static str,
        #[label("this reference")]
        span: Span,
    },

    /// A `$ref` the exposed operations reach points outside the base document.
    #[error("`$ref: \"{reference}\"` points outside the base document")]
    #[diagnostic(
        code("base-ref-external"),
        help(
            "connectorgen does not follow references to other files or URLs: bundle the document into one file first with a tool such as `redocly bundle` or `swagger-cli bundle`, and point `openapi:` at the result"
        )
    )]
    BaseRefExternal {
        reference: String,
        #[label("another file or a URL")]
        span: Span,
    },

    /// A base operation's path holds what no URL path can (whitespace, control
    /// characters, a backtick), which would also break the Markdown that quotes it.
    #[error("the base document's path `{path}` cannot be a URL path: {reason}")]
    #[diagnostic(
        code("invalid-base-path"),
        help(
            "the provider's document is wrong here: fix the path in it (percent-encode what a URL cannot hold), or expose another operation"
        )
    )]
    InvalidBasePath {
        path: String,
        reason: String,
        #[label("this path")]
        span: Span,
    },

    /// A parameter of an exposed base operation has no usable `name` or `in`, or is
    /// declared twice: no client, and no MCP tool argument, can be built from it.
    #[error("`{route}` in the base document: {reason}")]
    #[diagnostic(
        code("invalid-base-parameter"),
        help(
            "the provider's document is wrong here: give each parameter a `name` and an `in` (path, query, header or cookie), once per operation, or expose another operation"
        )
    )]
    InvalidBaseParameter {
        route: String,
        reason: String,
        #[label("this parameter")]
        span: Span,
    },

    /// The exposed part of the base document (what the outputs keep) breaks the official
    /// OpenAPI schema of its version: a warning, since the provider's document is the
    /// truth for HTTP. What can be repaired without changing any request is repaired in
    /// the outputs, and the finding says how (`info.externalDocs` moved to the root);
    /// anything else is kept as the provider wrote it, and the finding says so.
    #[error("the base document is not valid OpenAPI {version}: {what}")]
    #[diagnostic(code("base-invalid"))]
    BaseInvalid {
        version: &'static str,
        what: String,
        #[label("here")]
        span: Span,
        #[help]
        help: String,
    },

    /// An OpenAPI 3.2 construct of the base document that the outputs (OpenAPI 3.1)
    /// cannot hold as it is: an error where a 3.1 reader could not make the same request
    /// (an exposed `query` or `additionalOperations` operation, a `querystring`
    /// parameter), a warning saying how it was converted otherwise (a tag's `summary`,
    /// `parent` and `kind` moved to `x-` keys, a media type from `components.mediaTypes`
    /// written in place, `$self` dropped, …).
    #[error("OpenAPI 3.2: {what}")]
    #[diagnostic(code("openapi32-unsupported"))]
    Openapi32Unsupported {
        what: String,
        #[label("here")]
        span: Span,
        #[help]
        help: String,
    },

    /// `operation:` names nothing in the base document.
    #[error("the base document has no operation `{name}`")]
    #[diagnostic(code("unknown-base-operation"))]
    UnknownBaseOperation {
        name: String,
        #[label("not an operationId or `METHOD /path` of the base document")]
        span: Span,
        #[help]
        help: String,
    },

    /// `operation:` is one base operation's operationId and another's `METHOD /path`:
    /// exposing either would be a guess (a GET's route that is a DELETE's operationId).
    #[error(
        "`{name}` names two operations of the base document: the operationId of `{by_id}`, and the route `{by_route}`"
    )]
    #[diagnostic(code("ambiguous-base-operation"))]
    AmbiguousBaseOperation {
        name: String,
        by_id: String,
        by_route: String,
        #[label("names two operations")]
        span: Span,
        #[help]
        help: String,
    },

    /// The same base operation is listed twice.
    #[error("`{name}` is listed twice")]
    #[diagnostic(
        code("operation-listed-twice"),
        help("list each base operation once; remove one of the two entries")
    )]
    OperationListedTwice {
        name: String,
        #[label("second listing")]
        span: Span,
        #[label("first listed here")]
        first: Span,
    },

    /// An inline-only key on an operation of a manifest with a base document.
    #[error("`{key}` comes from the base OpenAPI document in a manifest with `openapi:`")]
    #[diagnostic(
        code("inline-key-with-base"),
        help(
            "the provider's document is the truth for HTTP: remove `{key}`; an operation here names a base operation with `operation:` and may override only `id`, `summary` and `description`"
        )
    )]
    InlineKeyWithBase {
        key: &'static str,
        #[label("remove this")]
        span: Span,
    },

    /// `operation:` in a manifest without a base document.
    #[error("`operation:` names a base operation, but the manifest has no `openapi:` document")]
    #[diagnostic(
        code("operation-without-base"),
        help(
            "add `openapi: path/to/api.json` at the top of the manifest, or write the operation inline with `id`, `method` and `path`"
        )
    )]
    OperationWithoutBase {
        #[label("needs `openapi:`")]
        span: Span,
    },

    /// The base operation's method is one connectorgen does not expose.
    #[error("`{name}` is a {method} operation, which connectorgen does not expose to agents")]
    #[diagnostic(
        code("unsupported-method"),
        help("expose get, post, put, patch or delete operations")
    )]
    UnsupportedMethod {
        name: String,
        method: String,
        #[label("this operation")]
        span: Span,
    },

    /// An agent-facing operation id that a chosen target (or any agent) cannot take.
    #[error("operation id `{id}` cannot be used {by}: {reason}")]
    #[diagnostic(code("id-not-for-target"))]
    IdNotForTarget {
        id: String,
        /// "by the openai target", or "by agents" for the rule every target shares.
        by: String,
        reason: String,
        #[label("this id")]
        span: Span,
        #[help]
        help: String,
    },

    /// `idempotency: unsupported` on an operation whose base declares the header.
    #[error("`{id}` declares the Idempotency-Key header in the base document")]
    #[diagnostic(
        code("idempotency-contradicts-base"),
        help(
            "the provider's document says the header is honoured: remove `idempotency: unsupported` (the default follows the base), or fix the base document"
        )
    )]
    IdempotencyContradictsBase {
        id: String,
        #[label("says unsupported")]
        span: Span,
    },

    /// Base mode: `idempotency: optional` or `required` (an `Idempotency-Key` header) on an
    /// operation whose document declares another retry key: connectorgen would add a
    /// second key.
    #[error(
        "`{id}` already has a retry key, the {what}: `idempotency: optional` or `required` would add an Idempotency-Key header beside it"
    )]
    #[diagnostic(code("idempotency-second-key"))]
    IdempotencySecondKey {
        id: String,
        /// `body field `idempotency_key``.
        what: String,
        #[label("an Idempotency-Key header")]
        span: Span,
        #[help]
        help: String,
    },

    /// `idempotency:` names a header, query parameter or body field the operation does
    /// not have (base mode), or a body field connectorgen cannot add (inline).
    #[error("`{id}` has no {what} to carry the retry key")]
    #[diagnostic(code("idempotency-key-not-found"))]
    IdempotencyKeyNotFound {
        id: String,
        /// `header `X``, `query parameter `x``, `body field `x``.
        what: String,
        #[label("names it here")]
        span: Span,
        #[help]
        help: String,
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

    /// The summary is one word or starts with a catch-all verb.
    #[error("`{id}`: the summary is vague: {reason}")]
    #[diagnostic(
        code("vague-summary"),
        help(
            "name the action with a specific verb and its object, e.g. \"List videos\" or \"Generate a video from a prompt\", not \"Manages videos\""
        )
    )]
    VagueSummary {
        id: String,
        reason: String,
        #[label("vague")]
        span: Span,
    },

    /// An operation that spends has no retry key: `idempotency: unsupported`, or (base
    /// mode, no `idempotency:`) the provider's document declares none.
    #[error("`{id}` spends, but a retry cannot be recognised: {why}")]
    #[diagnostic(
        code("spend-without-idempotency"),
        help(
            "a retry after a timeout charges the person again, so every target tells the model never to repeat the call on its own. A provider can recognise a retry by a key the client sends: a header (`idempotency: {{ header: Idempotency-Key }}`, or any name), a query parameter (`{{ query: request_id }}`) or a body field (`{{ bodyField: idempotency_key }}`), kept with the first result for a day or more and answered with it. If it has one, name it; if not, acknowledge with `lintAllow: [spend-without-idempotency]` on the operation"
        )
    )]
    SpendWithoutIdempotency {
        id: String,
        why: &'static str,
        #[label("no retry key")]
        span: Span,
    },

    /// Base mode: an operation that spends or is async has no `idempotency:`, and the
    /// provider's document declares no retry key (no `Idempotency-Key` header, no
    /// header, query parameter or body property named or described as one).
    #[error(
        "`{id}`: the provider's document declares no retry key, so it is treated as `idempotency: unsupported`"
    )]
    #[diagnostic(
        code("idempotency-unknown"),
        help(
            "every target now tells the model never to repeat this call on its own. If the provider recognises a retry, name its key: `idempotency: {{ header: Acme-Request-Id }}`, `{{ query: request_id }}`, `{{ bodyField: idempotency_key }}` (add `required: true` if a call without it is refused), or `optional` for an `Idempotency-Key` header; `inherent` if a repeat cannot duplicate it; else write `idempotency: unsupported`"
        )
    )]
    IdempotencyUnknown {
        id: String,
        #[label("no `idempotency:` here")]
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
    #[diagnostic(code("description-too-long"))]
    DescriptionTooLong {
        id: String,
        length: usize,
        max: usize,
        /// At the manifest node that makes the text longest: the description, or the
        /// `spends.note` / `spends.when` the cost sentence repeats.
        #[label("this makes it long ({length} characters with the generated sentences)")]
        span: Span,
        /// Which node that is, and what to do about it.
        #[help]
        help: String,
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

    /// Whether this finding is about a file that did not prove to be a document (it does
    /// not parse, or is not OpenAPI): the path that led to it may lead anywhere, so the
    /// report shows only a tight excerpt around the error.
    pub fn in_unproven_file(&self) -> bool {
        matches!(
            self,
            Diagnostic::BaseSyntax { .. } | Diagnostic::BaseNotOpenapi { .. }
        )
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

/// Which file a finding's spans point into.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Source {
    /// The manifest.
    #[default]
    Manifest,
    /// The base OpenAPI document the manifest names with `openapi:`.
    Base,
}

/// A diagnostic with the severity it has in this run (lint levels decide it for lints)
/// and the file it points into.
#[derive(Debug)]
pub struct Finding {
    pub diagnostic: Diagnostic,
    pub severity: Severity,
    pub source: Source,
}

impl Finding {
    pub fn error(diagnostic: Diagnostic) -> Self {
        Finding {
            diagnostic,
            severity: Severity::Error,
            source: Source::Manifest,
        }
    }

    pub fn warning(diagnostic: Diagnostic) -> Self {
        Finding {
            severity: Severity::Warning,
            ..Finding::error(diagnostic)
        }
    }

    /// This finding, pointing into the base document.
    pub fn in_base(self) -> Self {
        Finding {
            source: Source::Base,
            ..self
        }
    }
}

/// Every finding in one manifest, in file order, with the text they point into.
#[derive(Debug)]
pub struct Diagnostics {
    source: NamedSource<Arc<String>>,
    text: Arc<String>,
    /// The base OpenAPI document, when the manifest names one and findings may point into it.
    base: Option<Box<NamedSource<Arc<String>>>>,
    items: Vec<Finding>,
}

impl Diagnostics {
    pub fn new(name: &str, text: Arc<String>, mut items: Vec<Finding>) -> Self {
        // File order reads like the file (manifest first, then the base document); the
        // sort is stable so equal offsets keep rule order.
        items.sort_by_key(|f| {
            (
                f.source == Source::Base,
                first_offset(&f.diagnostic).unwrap_or(usize::MAX),
            )
        });
        Diagnostics {
            source: NamedSource::new(name, text.clone()),
            text,
            base: None,
            items,
        }
    }

    /// The same findings, with the base document their `Source::Base` spans point into.
    pub fn with_base(mut self, name: &str, text: Arc<String>) -> Self {
        self.base = Some(Box::new(NamedSource::new(name, text)));
        self
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

    /// The base document's name and text, when findings may point into it.
    pub fn base_file(&self) -> Option<(&str, &str)> {
        self.base
            .as_deref()
            .map(|source| (source.name(), source.inner().as_str()))
    }

    /// The file a finding points into: its name, text and miette source.
    pub fn file_of(&self, finding: &Finding) -> (&str, &str, &NamedSource<Arc<String>>) {
        match (self.base.as_deref(), finding.source) {
            (Some(source), Source::Base) => (source.name(), source.inner(), source),
            _ => (self.source.name(), &self.text, &self.source),
        }
    }

    pub fn count(&self, severity: Severity) -> usize {
        self.items.iter().filter(|f| f.severity == severity).count()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
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
