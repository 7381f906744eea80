//! The one diagnostic type of connectorgen, and the one declaration of every rule.
//!
//! Takes: problems found while parsing (`manifest/`), reading the base document
//! (`base.rs`), validating (`validate/`), rendering (`render/`) and linting (`lint.rs`).
//! Returns: `Diagnostic` values (one variant per rule, each with a label on the exact
//! YAML node and a help line), `Rule` (the variants without their data: each rule's
//! code, summary, explanation and, for a lint, its default level) and `Diagnostics`,
//! the ordered collection of findings a run reports at once.
//! Must never: lose a problem, or report one without a place in the file when the
//! parser gave us one.
//!
//! A rule is declared once, as a variant of `Diagnostic`, and everything else reads
//! that declaration: the code is the variant's name in kebab-case; the first paragraph
//! of its `///` doc is the summary (SARIF's rule description, `docs/rules.md`), the
//! rest the explanation `connectorgen explain --rule CODE` prints, which says why the
//! rule exists: what goes wrong for the model, the person or the request if the
//! manifest were accepted (every rule has one, `rules.rs` checks); `#[error]` is the
//! message and `#[diagnostic(help(…))]` (or a `#[help]` field) the help line; a lint
//! says its default level with `#[strum_discriminants(strum(props(level = "warn")))]`,
//! which makes its code a lint id (`lint:`, `lintAllow`, the JSON Schema's enum), and a
//! rule whose findings are warnings says `severity = "warning"` the same way.

// The variants' docs are what users read (docs/rules.md, `explain --rule`), copied onto
// `Rule` by strum: backticks added for clippy would change that text.
#![allow(clippy::doc_markdown)]

use std::sync::Arc;

use miette::{NamedSource, SourceSpan};
use strum::{EnumMessage as _, EnumProperty as _, VariantArray as _};

/// A byte range in the manifest, as miette wants it.
pub type Span = SourceSpan;

/// One problem in a manifest. Every variant is one rule; its code is stable, is the
/// variant's name in kebab-case, and is what the test case file
/// `tests/cases/{invalid,lint}/<code>.yaml` is named after. `tests/cases.rs` checks
/// that each rule has a case, and `docs/rules.md` is generated from these declarations
/// and the cases' snapshots (`tests/rules_doc.rs` fails when it is stale).
#[derive(Debug, thiserror::Error, miette::Diagnostic, strum::EnumDiscriminants)]
#[strum_discriminants(
    name(Rule),
    derive(
        strum::VariantArray,
        strum::IntoStaticStr,
        strum::EnumString,
        strum::EnumMessage,
        strum::EnumProperty,
        Hash,
        PartialOrd,
        Ord
    ),
    strum(serialize_all = "kebab-case")
)]
pub enum Diagnostic {
    /// The file is not well-formed YAML (or a scalar could not be read).
    ///
    /// Nothing after a syntax error can be read with certainty: a parser that guessed past
    /// it could drop or misplace a key such as `spends:` or `confirm:`, and the outputs
    /// would tell the model a paid or permanent call is free and routine. The whole file is
    /// refused, at the place the parser stopped.
    #[error("invalid YAML: {message}")]
    #[diagnostic(help(
        "fix the YAML syntax at the marked place; quote values that contain `: ` or start with a special character"
    ))]
    YamlSyntax {
        message: String,
        #[label("here")]
        span: Span,
    },

    /// A value has the wrong YAML type (a list where a string belongs, a word where
    /// a number belongs).
    ///
    /// A value of the wrong type has no one meaning: converting it (a list to one string, a
    /// word to a number) would write something the author did not write, and a safety key
    /// read that way (`confirm: "no"`) could mean the opposite of what was meant.
    #[error("wrong type: {message}")]
    WrongType {
        message: String,
        #[label("this value")]
        span: Span,
        #[help]
        help: Option<String>,
    },

    /// A mapping holds a key the manifest format does not know.
    ///
    /// A key the format does not know is most often a misspelling (`spend:` for `spends:`,
    /// `lintallow:`): ignored, it would silently drop what it declares, so a paid call
    /// would be described to the model as free. The help names the nearest known key.
    #[error("unknown key `{key}`")]
    UnknownKey {
        key: String,
        #[label("not a known key here")]
        span: Span,
        #[help]
        help: String,
    },

    /// A mapping holds the same key twice; YAML forbids it and the second would
    /// silently win elsewhere.
    ///
    /// YAML readers disagree on which of two equal keys wins, so connectorgen, an editor
    /// and a reviewer could each read a different manifest: two `spends:` with different
    /// notes would show the reviewer one price and the model another.
    #[error("duplicate key `{key}`")]
    #[diagnostic(help("remove one of the two; each key may appear once in a mapping"))]
    DuplicateKey {
        key: String,
        #[label("second occurrence")]
        span: Span,
    },

    /// A YAML resource limit (nesting depth, alias expansion) was exceeded.
    ///
    /// A few lines of YAML can expand through aliases into billions of nodes (the "billion
    /// laughs"), or nest deep enough to exhaust the stack: without budgets, a manifest in a
    /// pull request could take all of a CI machine's memory. The budgets (nesting depth,
    /// alias expansion, node count) are far above any real manifest; the message says which
    /// was reached and how to get under it.
    #[error("manifest exceeds a parser limit: {message}")]
    #[diagnostic(help(
        "anchors and aliases are fine for reuse within the budgets; the message says how to get under the limit, or which flag raises it"
    ))]
    YamlLimit {
        message: String,
        #[label("limit reached here")]
        span: Span,
    },

    /// A required key is absent.
    ///
    /// A required key has no default that would not be a guess: without `method` or `path`
    /// there is no request to build, and without a `description` or a cost `note` the model
    /// has nothing to choose the tool by or to tell the person.
    #[error("missing required key `{key}` in {context}")]
    MissingKey {
        key: &'static str,
        context: &'static str,
        #[label("add `{key}` to this mapping")]
        span: Span,
        #[help]
        help: String,
    },

    /// `version` names a manifest format this build does not read.
    ///
    /// A manifest written for another format version may use keys, or meanings of keys,
    /// this build does not know; read as version 1 it could lose a safety declaration
    /// without a word. Use a connectorgen that reads that version.
    #[error("unsupported manifest version {found}")]
    #[diagnostic(help("only `version: 1` exists; write `version: 1`"))]
    UnsupportedVersion {
        found: String,
        #[label("expected 1")]
        span: Span,
    },

    /// A text the model or the person reads is empty.
    ///
    /// The model picks a tool, and tells the person what it is about to do, from these
    /// texts: an empty (or blank, `" "`) description gives it nothing to tell two tools
    /// apart by, and an empty cost note has the person agree to a price nobody stated. A
    /// blank string also looks present in review.
    #[error("`{key}` must not be empty")]
    EmptyText {
        key: &'static str,
        #[label("empty")]
        span: Span,
        #[help]
        help: String,
    },

    /// A URL is not absolute https (http only for localhost).
    ///
    /// Every call, with the person's credential, goes to these URLs: over plain http both
    /// travel in clear to anyone on the network path, and a relative URL names no host that
    /// every client would resolve the same way. Plain http is accepted for localhost and
    /// 127.0.0.1, where nothing leaves the machine.
    #[error("`{key}` is not a usable URL: {reason}")]
    #[diagnostic(help(
        "use an absolute https URL such as `https://api.example.com`; plain http is accepted only for localhost or 127.0.0.1"
    ))]
    BadUrl {
        key: &'static str,
        reason: String,
        #[label("this URL")]
        span: Span,
    },

    /// `probe.sandboxUrl` is the production URL.
    ///
    /// `probe.sandboxUrl` names the same URL as `service.publicUrl` or the first
    /// server (where calls go by default): `probe` would spend real money there
    /// without `--live`.
    #[error("`probe.sandboxUrl` is the production URL {url} (the same as {production})")]
    #[diagnostic(help(
        "name the provider's sandbox or test server here, or leave `probe.sandboxUrl` out and pass `--live` to probe production on purpose"
    ))]
    SandboxIsProduction {
        url: String,
        production: &'static str,
        #[label("not a sandbox")]
        span: Span,
    },

    /// An `oauth.scopes` entry is no usable OAuth scope.
    ///
    /// A scope is printable ASCII without spaces, `"` or a backslash (RFC 6749, section
    /// 3.3), and each safety class needs its own: a token's scopes are read one by one,
    /// and one name for two classes would let a token of the cheaper class — a read —
    /// make the dearer call, one that spends.
    #[error("`oauth.scopes.{class}` cannot be used: {reason}")]
    #[diagnostic(help(
        "name each class's scope as the authorization server does, one word each, three different names (`videos.read`, `videos.write`, `videos.buy`); leave one out to keep its default"
    ))]
    BadScope {
        class: &'static str,
        reason: String,
        #[label("this scope")]
        span: Span,
    },

    /// `auth.perPerson` cannot be carried out as written.
    ///
    /// Each person's own credential replaces the connection's one value on every call,
    /// and the person connects it outside the model: an API key is kept only once a free
    /// read answered it (a key that cannot be checked would be kept wrong and every call
    /// refused later, at the worst time), and OAuth needs the provider's authorization
    /// and token endpoints and a credential sent as a bearer token.
    #[error("`auth.perPerson` cannot be used: {reason}")]
    #[diagnostic(help(
        "write `perPerson: {{ connect: apiKey, checkWith: <a free read taking no argument> }}` for a key each person enters, or `perPerson: {{ connect: oauth }}` for a credential sent as a bearer token, with `authorizationUrl` and `tokenUrl` where the document has no `authorizationCode` flow"
    ))]
    UnusablePerPerson {
        reason: String,
        #[label("here")]
        span: Span,
    },

    /// The manifest lists no operations.
    ///
    /// A connector without operations gives the model no tool, yet its outputs are valid
    /// documents that an agent platform would accept and show as a working connector; an
    /// empty list is usually a mistake of indentation.
    #[error("`operations` is empty")]
    #[diagnostic(help(
        "list at least one operation; a connector without operations gives the model nothing to do"
    ))]
    NoOperations {
        #[label("no operations here")]
        span: Span,
    },

    /// An operation id is not a valid operationId.
    ///
    /// The id becomes the tool's name and the OpenAPI operationId: agent platforms refuse a
    /// document (or a tool list) with an id outside 1 to 128 letters, digits, `_`, `.` and
    /// `-`, or rewrite it, so the model would call a name the docs and prompts do not use.
    #[error("invalid operation id `{id}`")]
    #[diagnostic(help(
        "use 1 to 128 letters, digits, `_`, `.` or `-`, starting with a letter, digit or `_`, e.g. `createVideo`"
    ))]
    InvalidOperationId {
        id: String,
        #[label("not a valid operationId")]
        span: Span,
    },

    /// Two operations share an id.
    ///
    /// The id is the tool's name: with two tools of one name, a client keeps one of them
    /// (or refuses the list), so the model may call the other operation than it means, and
    /// a `pollWith` naming the id could point at either. OpenAPI also requires operationIds
    /// to be unique.
    #[error("duplicate operation id `{id}`")]
    #[diagnostic(help("operation ids must be unique; rename one of them"))]
    DuplicateOperationId {
        id: String,
        #[label("second use")]
        span: Span,
        #[label("first used here")]
        first: Span,
    },

    /// `method` is not get, post, put, patch or delete.
    ///
    /// The method decides what a call does and what the model is told about it (a get is
    /// treated as a free, repeatable read): a method connectorgen does not know cannot be
    /// classed as a read or a write, so nothing could say whether the call changes
    /// anything.
    #[error("unknown method `{method}`")]
    UnknownMethod {
        method: String,
        #[label("not a supported method")]
        span: Span,
        #[help]
        help: String,
    },

    /// A path is malformed or conflicts with another.
    ///
    /// Every call goes to this path: a malformed one is sent differently by each client
    /// (encoded, cut or refused), and a `{param}` no argument fills, or that fills half a
    /// segment, sends the call to another resource than the model meant.
    ///
    /// A path does not start with `/`, has characters a URL path cannot hold, or a
    /// malformed `{param}`.
    #[error("invalid path `{path}`: {reason}")]
    #[diagnostic(help(
        "write a path such as `/v1/videos/{{id}}`: it starts with `/`, and each `{{name}}` is a whole segment named with letters, digits or `_`"
    ))]
    InvalidPath {
        path: String,
        reason: String,
        #[label("this path")]
        span: Span,
    },

    /// Two operations share the same method and path.
    ///
    /// Two operations for one HTTP request would give the model two tools whose
    /// descriptions may disagree (one free, one paid) about the same call; OpenAPI holds
    /// one operation per method and path, so one of the two would be lost from
    /// openapi.json.
    #[error("two operations are `{method} {path}`")]
    #[diagnostic(help(
        "each method + path pair may be declared once; merge the two operations or change one path"
    ))]
    DuplicateRoute {
        method: String,
        path: String,
        #[label("second declaration")]
        span: Span,
        #[label("first declared here")]
        first: Span,
    },

    /// A request body is declared on a get or delete operation.
    ///
    /// HTTP gives a body on a GET or DELETE no meaning: clients, proxies and agent
    /// platforms drop it, so the arguments the model fills in would never reach the
    /// provider.
    ///
    /// `input` (a request body) is given on a get or delete operation, or an
    /// `openapi:` fragment gives it a `requestBody`. What declares the body:
    /// `input`, `inputType` or `openapi.requestBody`.
    #[error("`{key}` is not allowed on a {method} operation")]
    #[diagnostic(help(
        "GET and DELETE requests carry no JSON body: move these fields to `query` parameters or to the path"
    ))]
    InputNotAllowed {
        key: &'static str,
        method: String,
        #[label("request body declared here")]
        span: Span,
    },

    /// `input`, `output` or a query `schema` is not a JSON Schema.
    ///
    /// A schema that is not a mapping or a boolean (`input: object`, a list) describes no
    /// argument: the model would be given a tool with no usable input schema, guess the
    /// arguments, and send values the provider refuses.
    #[error("`{key}` must be a JSON Schema (a mapping)")]
    #[diagnostic(help(
        "write a JSON Schema object, e.g. `{{ type: object, properties: {{ name: {{ type: string }} }} }}`"
    ))]
    InvalidSchema {
        key: &'static str,
        #[label("not a schema")]
        span: Span,
    },

    /// A query parameter name is empty, repeated or unusable.
    ///
    /// The name is what the provider reads the value by: an empty name sends a value under
    /// no name, a repeated one lets two arguments fill one parameter (one of them lost),
    /// and a character a URL cannot hold is encoded differently by each client, so the
    /// provider reads another name.
    #[error("invalid query parameter `{name}`: {reason}")]
    #[diagnostic(help(
        "query parameter names are unique within an operation and use letters, digits, `_`, `-` or `.`"
    ))]
    InvalidQueryParameter {
        name: String,
        reason: String,
        #[label("this parameter")]
        span: Span,
    },

    /// A get operation spends, is async or asks for confirmation.
    ///
    /// Models, clients and platforms treat a GET as safe: they retry it after a timeout,
    /// poll it in a loop and may approve it without asking (`readOnlyHint`). A GET that
    /// spends, starts a job or needs a yes would be called again and again without the
    /// person's consent.
    #[error("`{id}`: a get operation cannot {what}")]
    #[diagnostic(help(
        "a GET must be free and safe to repeat: models retry and poll GETs freely. Make this operation a `post`, or remove `{key}`"
    ))]
    GetWithSideEffect {
        id: String,
        what: &'static str,
        key: &'static str,
        #[label("declared on a get")]
        span: Span,
    },

    /// An operation declared `read: true` spends, is async or asks for confirmation.
    ///
    /// `read: true` declares a free, side-effect-free read whatever the method, which
    /// `spends`, `async` or `confirm: true` on the same operation contradicts: a read may
    /// be polled and repeated freely, and every target marks it read-only.
    #[error("`{id}`: an operation declared `read: true` cannot {what}")]
    #[diagnostic(help(
        "a read must be free and safe to repeat: models retry and poll reads freely, and clients approve read-only tools without asking. Remove `read: true`, or remove `{key}`"
    ))]
    ReadWithSideEffect {
        id: String,
        what: &'static str,
        key: &'static str,
        #[label("declared on a read")]
        span: Span,
        #[label("declared a read here")]
        read: Span,
    },

    /// `spends.kind: irreversible`, which `confirm: true` replaced: `spends` is for
    /// costs, and a permanent action may cost nothing. The new form, with the
    /// operation's own note.
    ///
    /// The old form mixed what `spends` and `confirm` keep apart, a cost and a call that
    /// cannot be undone: converting it silently would have to guess whether the call also
    /// costs, and a wrong guess either tells the person of a price that does not exist or
    /// drops a real one from what the model is told. The help writes the new form, with the
    /// operation's own note.
    #[error("`spends.kind: irreversible` was replaced by `confirm: true`")]
    SpendKindIrreversible {
        #[label("no longer a spend kind")]
        span: Span,
        #[help]
        help: String,
    },

    /// `confirm: false` on an operation that spends: a cost always needs the
    /// person's yes.
    ///
    /// The two declarations cannot both hold: `confirm: false` tells platforms the call is
    /// routine (OpenAI may "always allow" it), while the cost sentence says to ask before
    /// every call. Either choice made for the author would be wrong in one direction, and
    /// the wrong one spends the person's money without their yes.
    #[error("`confirm: false` on an operation that spends")]
    #[diagnostic(help(
        "a call that costs the person always needs their fresh yes, so it is never routine: remove `confirm: false` (or `spends`, if the call costs nothing)"
    ))]
    ConfirmContradictsSpends {
        #[label("says no confirmation is needed")]
        span: Span,
        #[label("but this costs the person")]
        spends: Span,
    },

    /// `async.returns` is not job or change.
    ///
    /// `returns` says what the immediate answer is: a job (calling again starts a second
    /// one, and is paid again) or a change that settles in the background. A value read as
    /// neither would leave the polling sentence guessing, and the wrong guess has the model
    /// resubmit a job, or wait on a change as if it were one.
    #[error("unknown `async.returns` value `{value}`")]
    UnknownAsyncReturns {
        value: String,
        #[label("not job or change")]
        span: Span,
        #[help]
        help: String,
    },

    /// `spends.kind` is not credits or money.
    ///
    /// The kind decides the cost sentence: `money` tells the person their money moves,
    /// `credits` that a prepaid balance is used. A kind read as neither (`credit`, `usd`)
    /// cannot be turned into either sentence, and guessing the milder one would understate
    /// the cost.
    #[error("unknown spend kind `{kind}`")]
    UnknownSpendKind {
        kind: String,
        #[label("not a spend kind")]
        span: Span,
        #[help]
        help: String,
    },

    /// `spends.payer` is not `person` or `customer`.
    ///
    /// The payer decides whose money the cost sentence names: the person's own (`person`),
    /// or a customer's that a seller's API moves (`customer`, "MOVES THE CUSTOMER'S
    /// MONEY"). Guessing would tell the model, and the person who approves, the wrong party
    /// pays.
    #[error("unknown payer `{payer}`")]
    UnknownPayer {
        payer: String,
        #[label("not a payer")]
        span: Span,
        #[help]
        help: String,
    },

    /// `spends.amount` is not a positive number or `{ argument, scale }`.
    ///
    /// `serve` states the amount in the question the person answers ("This costs 3
    /// credits") and adds it up against the budgets the operator set: an amount that is
    /// zero, negative or not a number would tell the person a wrong price, and let a budget
    /// count less than was spent (a negative amount would even give room back).
    #[error("`spends.amount` is not an amount: {problem}")]
    #[diagnostic(help(
        "write a positive number in the spend's unit (`amount: 3`), or `amount: {{ argument: <an input of the call>, scale: 0.01 }}` when the call's own input sets it; leave `amount` out when the size of the charge is not known before the call"
    ))]
    InvalidAmount {
        problem: String,
        #[label("here")]
        span: Span,
    },

    /// `spends.amount.argument` is not a number input of the operation.
    ///
    /// The amount of each call is read from that input of the call as the model sends it:
    /// an input the operation does not have would leave every call's amount unknown (and
    /// a budget on the amount unable to count it), and one that is not a number (a string,
    /// an object) has no amount to read.
    #[error("`spends.amount` of `{id}` reads {what}")]
    UnknownAmountArgument {
        id: String,
        what: String,
        #[label("this input")]
        span: Span,
        #[help]
        help: String,
    },

    /// `spends.currency` is missing, not an ISO 4217 code, or on a spend of credits.
    ///
    /// A money amount without its currency means nothing to the person asked ("This costs
    /// 12.50" — of what?), and a `money` budget adds amounts up: amounts in an unknown or
    /// mistyped currency, or credits given a currency, would be counted as something they
    /// are not.
    #[error("`spends.currency`: {problem}")]
    InvalidCurrency {
        problem: String,
        #[label("here")]
        span: Span,
        #[help]
        help: String,
    },

    /// An entry of `budgets:` is not `UNIT=LIMIT/WINDOW`, repeats another, or cannot be
    /// counted.
    ///
    /// A budget is the limit the person counts on whatever the model does: one that
    /// cannot be read, two limits on the same count in the same window, or a limit on an
    /// amount the manifest never gives (or gives in several currencies) would be a limit
    /// that does not hold, or holds at a number nobody wrote.
    #[error("invalid budget: {problem}")]
    #[diagnostic(help(
        "write `UNIT=LIMIT/WINDOW`: the unit `credits`, `money` or `calls`, a positive limit (a whole number for `calls`), the window `hour`, `day`, `week` or `month`, e.g. `budgets: [credits=20/day, calls=10/hour]`"
    ))]
    InvalidBudget {
        problem: String,
        #[label("here")]
        span: Span,
    },

    /// `refunds` names an operation whose purchase a call of this one cannot give back.
    ///
    /// `serve` gives a purchase's amount back to the person's budgets when its refund or
    /// cancel succeeds, finding the purchase by the job id the refund takes: a target
    /// that spends nothing, starts no job, or is the operation itself, or a refund that
    /// names no job, would give back an amount nobody spent — and a budget could then be
    /// passed.
    #[error("`refunds: {target}` cannot give a purchase back: {reason}")]
    InvalidRefund {
        target: String,
        reason: String,
        #[label("here")]
        span: Span,
        #[help]
        help: String,
    },

    /// `idempotency` is no short form and no mapping naming one key.
    ///
    /// The value decides whether the model is told a retry is safe and which key makes it
    /// so; one that is neither a short form nor a mapping naming one key cannot be turned
    /// into a retry rule, and guessing "safe" lets a retry after a timeout charge twice.
    #[error("unknown idempotency `{value}`")]
    UnknownIdempotency {
        value: String,
        #[label("not an idempotency setting")]
        span: Span,
        #[help]
        help: String,
    },

    /// `async.typicalSeconds` is not a positive number.
    ///
    /// The model is told how long the job usually takes ("typically ready in about 90s"):
    /// zero or a negative wait tells it the job is done at once, so it polls in a tight
    /// loop or, finding the job unfinished, resubmits it and pays again.
    #[error("`typicalSeconds` must be a positive whole number of seconds, not {value}")]
    #[diagnostic(help(
        "give the usual wait in seconds (e.g. `typicalSeconds: 90`), or leave the key out"
    ))]
    NonPositiveTypicalSeconds {
        value: i64,
        #[label("must be 1 or more")]
        span: Span,
    },

    /// `async.pollWith` names no operation of this manifest.
    ///
    /// The polling sentence tells the model which tool follows the job: naming one that
    /// does not exist leaves it no way to learn whether the job finished except starting
    /// (and paying for) another. Usually a misspelled id; the help names the nearest.
    #[error("`pollWith` names unknown operation `{target}`")]
    UnknownPollTarget {
        target: String,
        #[label("no operation has this id")]
        span: Span,
        #[help]
        help: String,
    },

    /// The poll target is not a free, side-effect-free read.
    ///
    /// The model calls the poll target again and again, without asking, until the job is
    /// done: a target that spends charges the person on every poll, and one that is async
    /// (or not a GET) starts another job each time.
    #[error("poll target `{target}` is not a free, side-effect-free read: {reason}")]
    #[diagnostic(help(
        "the model will call the poll target many times: point `pollWith` at a read that neither spends nor is async: a `get` (e.g. `GET /v1/jobs/{{id}}`) or an operation declared `read: true`"
    ))]
    UnsafePollTarget {
        target: String,
        reason: &'static str,
        #[label("poll target named here")]
        span: Span,
        #[label("declared here")]
        target_span: Option<Span>,
    },

    /// `async.idField` names a property the answer's schema does not have.
    ///
    /// `async.idField` says which property of the call's answer holds the job's id,
    /// and the schema of that answer (its first success response) lists its properties
    /// without it: `serve` and `probe` would never find the id, and the model would be
    /// told a job started without being told which.
    #[error("`{id}`: `idField` `{field}` is not a property of the call's answer")]
    UnknownIdField {
        field: String,
        id: String,
        #[label("not in the answer's schema")]
        span: Span,
        #[help]
        help: String,
    },

    /// A job's answer has no property its poll can take the job's id from.
    ///
    /// The operation starts a job, its poll target takes the job's id (a path parameter,
    /// or an id its body requires), and the schema of the call's answer lists its
    /// properties without any that could hold the id: none of the names the poll target
    /// points at, at the top or inside a one-property envelope (`{"job": {"id": …}}`).
    /// `serve` would tell the model that a job started without saying which, and a model
    /// that cannot follow a job it started may start it again. `async.idField` names
    /// the property, or the path to it (`job.id`).
    #[error("`{id}`: the call's answer has no property that holds the job's id")]
    NoJobId {
        id: String,
        #[label("starts a job its poll cannot find")]
        span: Span,
        #[help]
        help: String,
    },

    /// `async.status` maps a value the poll target's answer never has.
    ///
    /// `serve` follows a job for a client as a task, ending it when the poll's answer
    /// holds a value of `done` or `failed`; the poll target's answer schema lists the
    /// values that field can hold, and this one is not among them: a misspelling would
    /// leave the task working for ever while the finished video waits at the provider.
    #[error("`async.status` maps `{value}`, which `{target}`'s answer never gives as `{field}`")]
    UnknownJobStatus {
        value: String,
        field: String,
        target: String,
        #[label("mapped here")]
        span: Span,
        #[help]
        help: String,
    },

    /// `idempotency.duplicate.readWith` names no operation that can find the first
    /// request by its key.
    ///
    /// `serve` calls it, without asking, when the provider answers a retry that its key
    /// was used, to fetch what the first request made: an operation that does not exist
    /// would leave the model told to check with nothing, one that is not a free read
    /// would spend or change something on its own, and one that takes no parameter of the
    /// key's name cannot be told which request to find.
    #[error("`duplicate.readWith` cannot find the first request: {reason}")]
    #[diagnostic(help(
        "point `readWith` at the provider's free read of a request by its key, a `get` taking the key in a query or path parameter of the key's own name (e.g. `GET /v2/orders:by_client_order_id?client_order_id=…`), or leave `readWith` out"
    ))]
    UnusableDuplicateRead {
        reason: String,
        #[label("named here")]
        span: Span,
    },

    /// `async.cancelWith` names an operation that does not exist.
    ///
    /// A client cancels a task, the person expects the job (and its cost) to stop, and
    /// the server would have no operation to call: the cancel would be refused at the
    /// worst moment instead of when the manifest was written.
    #[error("`cancelWith` names unknown operation `{target}`")]
    UnknownCancelTarget {
        target: String,
        #[label("no operation has this id")]
        span: Span,
        #[help]
        help: String,
    },

    /// `async.cancelWith` names an operation that cannot cancel anything.
    ///
    /// A cancel changes the job at the provider: a read changes nothing, so the person
    /// would be told the job stopped while it runs on and charges; the create itself, or
    /// another async operation, would start work instead of ending it; and an operation
    /// with no path parameter cannot be told which job to stop (`serve` sends the job's
    /// id as the cancel's last path parameter).
    #[error("cancel target `{target}` cannot cancel the job: {reason}")]
    #[diagnostic(help(
        "point `cancelWith` at the provider's cancel, a write taking the job's id (e.g. `POST /v1/videos/{{id}}/cancel` or `DELETE /v1/videos/{{id}}`), or leave it out: the task is then not cancellable"
    ))]
    UnsafeCancelTarget {
        target: String,
        reason: &'static str,
        #[label("cancel target named here")]
        span: Span,
        #[label("declared here")]
        target_span: Option<Span>,
    },

    /// `auth.tokenPrefix` is empty or contains whitespace.
    ///
    /// llms.txt tells the person the credential starts with the prefix, so they paste the
    /// right one: an empty prefix says nothing, and one with whitespace matches no
    /// credential, so a person told to look for it would reject the key that works.
    #[error("invalid `tokenPrefix` `{prefix}`")]
    #[diagnostic(help(
        "give the literal start of every connector token, e.g. `vg_`, or remove `auth`"
    ))]
    InvalidTokenPrefix {
        prefix: String,
        #[label("not a token prefix")]
        span: Span,
    },

    /// An unknown lint id in `lint` or `lintAllow`.
    ///
    /// A misspelled lint id would do nothing at all: a team that writes `deny` for it
    /// believes CI stops on that finding while it passes, and a `lintAllow` of it silences
    /// nothing. The help names the nearest lint id.
    #[error("unknown lint `{id}`")]
    UnknownLint {
        id: String,
        #[label("not a lint id")]
        span: Span,
        #[help]
        help: String,
    },

    /// A lint level or option is invalid.
    ///
    /// A setting the run cannot read cannot be applied, and ignoring it would leave the
    /// lint at a level nobody chose: a misspelled `deny` keeps a warning CI lets through,
    /// and a `max` that is not a positive number bounds nothing.
    #[error("invalid lint setting for `{id}`: {reason}")]
    #[diagnostic(help(
        "write `allow`, `warn` or `deny`, or for description-too-long `{{ level: warn, max: 300 }}`"
    ))]
    InvalidLintSetting {
        id: String,
        reason: String,
        #[label("this setting")]
        span: Span,
    },

    /// `templates` names a folder that cannot be used.
    ///
    /// The templates write what the model reads: a folder that cannot be read, ignored,
    /// would build with the default templates, so the outputs would differ from the ones
    /// the author wrote and reviewed; a file there that is no template is most often a
    /// misnamed override, which would be skipped without a word.
    #[error("cannot use the templates folder: {message}")]
    #[diagnostic(help(
        "`templates:` is a folder relative to the manifest holding some of description.j2, description.compact.j2, llms.txt.j2, descriptions.md.j2 (`connectorgen templates export DIR` writes them)"
    ))]
    BadTemplatesDir {
        message: String,
        #[label("this folder")]
        span: Span,
    },

    /// `targets:` names a platform connectorgen does not write for, or is empty.
    ///
    /// A misspelled target would write nothing for that platform, and `check` in CI would
    /// compare fewer files than the team believes, so the platform's stale connector would
    /// never be caught; an empty list writes nothing at all.
    #[error("unknown target `{target}`")]
    UnknownTarget {
        target: String,
        #[label("not a target")]
        span: Span,
        #[help]
        help: String,
    },

    /// `args:` gives two inputs of one operation the same MCP argument name.
    ///
    /// An MCP tool takes one flat set of argument names: two inputs under one name (a path
    /// `id` and a body `id`) would have one value the model gives go to both places, or one
    /// of them lost, so the request would differ from what the model meant. (Names
    /// connectorgen chooses never collide: it adds the location, docs/mcp.md.)
    #[error(
        "`{id}`: `{name}` would name both {first} and {second}; an MCP tool (the mcp target) takes one flat set of arguments"
    )]
    #[diagnostic(help(
        "choose another name in `args:` for one of them, or leave it out of `args:` to let connectorgen choose"
    ))]
    McpInputCollision {
        id: String,
        name: String,
        first: String,
        second: String,
        #[label("this name")]
        span: Span,
    },

    /// An `args:` name outside ^[a-zA-Z0-9_.-]{1,64}$, which some MCP clients
    /// refuse.
    ///
    /// An `args:` name that some MCP client refuses: tool argument names must match
    /// `^[a-zA-Z0-9_.-]{1,64}$` (Anthropic's API rejects the whole tool list
    /// otherwise). The help gives the name the documented rule would give instead.
    #[error("`{name}` is not an argument name every MCP client accepts")]
    InvalidArgumentName {
        name: String,
        #[label("1 to 64 letters, digits, `_`, `.` or `-`")]
        span: Span,
        #[help]
        help: String,
    },

    /// A `fixed:` entry without exactly one of `env` and `value`.
    ///
    /// A `fixed:` value is sent on every call without the model seeing it: with neither
    /// `env` nor `value` there is nothing to send, and with both nobody reading the
    /// manifest can tell which one the provider receives.
    #[error("`fixed: {name}`: {problem}")]
    #[diagnostic(help(
        "give exactly one of `env: VARIABLE` (an environment variable of the server that sends the call, e.g. `env: ACCOUNT_SID`) and `value: text`"
    ))]
    InvalidFixed {
        name: String,
        problem: String,
        #[label("here")]
        span: Span,
    },

    /// An operation's `probe:` is not an example call.
    ///
    /// `connectorgen probe` sends this example call to the sandbox to check the connector
    /// end to end: one that is not a tool call's input (`{ input: { argument: value, … }
    /// }`) cannot be sent, and the probe would fail, or call with arguments nobody wrote,
    /// for a reason that is not the connector's.
    #[error("`probe`: {problem}")]
    #[diagnostic(help(
        "write the example call `connectorgen probe` makes as `probe: {{ input: {{ prompt: \"a test\" }} }}`, with the tool's argument names"
    ))]
    InvalidProbe {
        problem: String,
        #[label("here")]
        span: Span,
    },

    /// An `args:` or `fixed:` key names no input of the operation.
    ///
    /// An `args:` rename or a `fixed:` value for an input the operation does not have
    /// changes nothing: the author believes an argument is renamed, or filled in by the
    /// server, while the model still sees the original and must fill it. It is most often a
    /// misspelling.
    #[error("`{id}`: `{key}: {name}` names no {what} of this operation")]
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

    /// An `mcp.omit` path names nothing in the operation's tool input.
    ///
    /// A path that names nothing trims nothing: the author believes the tool lighter, or
    /// an input kept from the model, while the model still sees and fills it. It is most
    /// often a misspelling, or a path written by argument name instead of HTTP name.
    #[error("`{id}`: `mcp.omit` path `{path}` names nothing in the tool's input")]
    UnknownOmitPath {
        id: String,
        path: String,
        #[label("names nothing")]
        span: Span,
        #[help]
        help: String,
    },

    /// An `mcp.omit` path names a required input.
    ///
    /// The provider refuses a request without a required property: a tool without it
    /// could never make a call that works, and the model, not told the property exists,
    /// could not fix the refusal.
    #[error("`{id}`: `mcp.omit` path `{path}` is required ({why})")]
    #[diagnostic(help(
        "only optional properties can be omitted: take `{path}` out of `mcp.omit`, and omit a heavier optional property that holds it, if there is one"
    ))]
    OmitRequired {
        id: String,
        path: String,
        why: String,
        #[label("required")]
        span: Span,
    },

    /// An `mcp.omit` path names an input the server fills in.
    ///
    /// A credential, a `fixed:` input and the retry key `serve` sends are already out of
    /// the model's reach: omitting them would say the server no longer sends them, which
    /// it still does, or (inside one) remove part of a value nobody writes.
    #[error("`{id}`: `mcp.omit` path `{path}` is {what}, which the server fills in")]
    #[diagnostic(help(
        "take `{path}` out of `mcp.omit`: the model never sees it, so there is nothing to trim"
    ))]
    OmitFilled {
        id: String,
        path: String,
        what: &'static str,
        #[label("filled in by the server")]
        span: Span,
    },

    /// `mcp.output` is not full, summary or none.
    ///
    /// `mcp.output` says how much of the answer's schema an MCP tool declares, and so what
    /// `serve` checks its answers against. A value read as none of the three would leave
    /// the tool declaring more, or less, than the author chose.
    #[error("unknown `mcp.output` value `{value}`")]
    UnknownMcpOutput {
        value: String,
        #[label("not full, summary or none")]
        span: Span,
        #[help]
        help: String,
    },

    /// A tool name over 64 characters or outside [A-Za-z0-9_-].
    ///
    /// With the `mcp` target, a tool name some MCP client refuses: Claude Desktop,
    /// the Claude connector directory and VS Code take at most 64 characters, and
    /// `.` (which the MCP spec allows) breaks others.
    #[error("`{id}` is not a tool name every MCP client accepts: {problem}")]
    #[diagnostic(help(
        "set `id:` on the operation to 1 to 64 letters, digits, `_` or `-` (the model calls it by this name), e.g. `id: {suggestion}`"
    ))]
    McpToolName {
        id: String,
        problem: &'static str,
        suggestion: String,
        #[label("this operation")]
        span: Span,
    },

    /// A `pattern` that is not an ECMAScript Unicode regular expression, left out
    /// of an MCP tool.
    ///
    /// With the `mcp` target, a `pattern` in a tool schema is not an ECMAScript
    /// regular expression with the Unicode flag, which is how the MCP TypeScript
    /// SDK (Ajv) compiles it: one such pattern makes `listTools()` fail for every
    /// tool of the server.
    #[strum_discriminants(strum(props(severity = "warning")))]
    #[error(
        "`{id}`: {pointer} is not an ECMAScript (Unicode) regular expression; left out of the MCP tool"
    )]
    #[diagnostic(help(
        "the provider still checks the value; to keep the constraint in the tool, rewrite the pattern in ECMAScript syntax ({error})"
    ))]
    McpPatternDropped {
        id: String,
        pointer: String,
        error: String,
        #[label("in this operation")]
        span: Span,
    },

    /// mcp-tools.json would pass its bound (a multiple of the input).
    ///
    /// The bound keeps a few shared schemas from turning a small manifest into a file of
    /// hundreds of megabytes (a 0.56 MB input once made 600 MB) that fills a CI machine's
    /// disk and that no MCP client could load.
    ///
    /// With the `mcp` target, `mcp-tools.json` would pass its bound: every tool
    /// carries its own copy of each component it reaches.
    #[error(
        "mcp-tools.json would be over {limit} bytes ({factor} times the {input} bytes of the connector's OpenAPI operations and components, plus 1 MiB); stopped at `{id}`"
    )]
    #[diagnostic(help(
        "expose fewer operations, or ones that reach fewer shared schemas (each MCP tool copies every schema it references), or leave the mcp target out: pass `--target` without it"
    ))]
    McpOutputTooLarge {
        id: String,
        limit: usize,
        factor: usize,
        input: usize,
        #[label("this operation")]
        span: Span,
    },

    /// A construct OpenAPI 3.0 cannot express without changing a request.
    ///
    /// The `openapi30` target is for platforms that read only OpenAPI 3.0. What 3.0 cannot
    /// say is written the nearest way it can be, or left out, with an
    /// `openapi30-approximated` warning; this error is kept for what would change the
    /// requests a 3.0 client makes: a `mutualTLS` security scheme (3.0 has no such type,
    /// so its client would call without the certificate). Nothing of any target is
    /// written while it stands (docs/targets.md).
    #[strum_discriminants(strum(props(severity = "error")))]
    #[error(
        "`{id}`: {pointer} uses {construct}, which OpenAPI 3.0 (the openapi30 target) cannot express"
    )]
    #[diagnostic(help(
        "a 3.0 client would send other requests than the provider takes (without the client certificate a `mutualTLS` scheme asks for): leave the openapi30 target out — remove it from `targets`, or pass `--target` without it for one run (e.g. `--target muse,mcp`)"
    ))]
    Openapi30Unsupported {
        id: String,
        pointer: String,
        construct: String,
        #[label("here")]
        span: Span,
    },

    /// OpenAPI 3.0 cannot express a construct: openapi.3.0.json writes the nearest form, or
    /// leaves it out.
    ///
    /// The `openapi30` target is for platforms that read only OpenAPI 3.0. A JSON Schema
    /// keyword 3.0 lacks (`patternProperties`, `prefixItems`, `if`/`then`, `$defs`), or a
    /// 3.1 construct it has no place for (`info.summary`, an operation without
    /// `responses`), would have the whole document refused by them; written the nearest
    /// way (`patternProperties` as `additionalProperties` of the union of its schemas, a
    /// keyword as an `x-` key a 3.0 reader ignores), a 3.0 reader checks less there than
    /// the provider does, and the warning says where. No request changes, and the other
    /// targets keep the construct as written.
    #[strum_discriminants(strum(props(severity = "warning")))]
    #[error("`{id}`: OpenAPI 3.0 cannot express {construct} at {pointer}: openapi.3.0.json {what}")]
    #[diagnostic(help(
        "nothing to do for the other targets, which keep it as written; a 3.0 reader checks less here. If no tool of yours reads OpenAPI 3.0, leave the openapi30 target out of `targets`"
    ))]
    Openapi30Approximated {
        id: String,
        pointer: String,
        construct: String,
        /// What openapi.3.0.json does instead.
        what: String,
        #[label("here")]
        span: Span,
    },

    /// A schema keyword no vocabulary defines is written as an `x-` key for OpenAPI 3.0.
    ///
    /// With the `openapi30` target, a JSON Schema holds a keyword that neither JSON
    /// Schema nor OpenAPI defines (`embed: true`). JSON Schema ignores such a keyword,
    /// but an OpenAPI 3.0 Schema Object may hold no unknown key: openapi.3.0.json
    /// carries it as an `x-` extension (`x-embed`), as a 3.2 base document's keys are
    /// carried into 3.1, so that nothing is lost and no reader refuses the document.
    #[strum_discriminants(strum(props(severity = "warning")))]
    #[error(
        "`{id}`: {pointer} uses `{keyword}`, which no JSON Schema or OpenAPI vocabulary defines; {what}"
    )]
    #[diagnostic(help(
        "nothing to do if the keyword is an extension: a 3.0 reader ignores `x-` keys as JSON Schema ignores unknown ones. Rename it with an `x-` prefix to silence this, or check its spelling"
    ))]
    Openapi30Extension {
        id: String,
        pointer: String,
        keyword: String,
        /// What openapi.3.0.json does with it.
        what: String,
        #[label("in this schema")]
        span: Span,
    },

    /// A description was shortened to fit OpenAI's limits in openapi.openai.json.
    ///
    /// OpenAI refuses an Action whose texts are over its limits, so openapi.openai.json
    /// cuts the author's words to be accepted: the model then reads less than the author
    /// wrote, and the cut part may be what the call will not do. The generated cost,
    /// permanence and polling sentences are always kept. Silenced, or made an error, like
    /// the `description-too-long` lint (`lintAllow`, `lint:`).
    #[strum_discriminants(strum(props(severity = "warning")))]
    #[error(
        "`{id}`: {what} is {length} characters and {max} fit in openapi.openai.json (OpenAI's limits), so it {action}"
    )]
    #[diagnostic(help(
        "shorten the author's text so nothing is cut (the cost, permanence and polling sentences are always kept), or silence this with `lintAllow: [description-too-long]`"
    ))]
    OpenaiDescriptionShortened {
        id: String,
        what: &'static str,
        length: usize,
        max: usize,
        action: &'static str,
        #[label("this text")]
        span: Span,
    },

    /// A path or header parameter is unusable: its name, a path without it, a
    /// header connectorgen or the client sends itself, or `required: false` on a
    /// path parameter.
    ///
    /// A parameter the path does not hold fills nothing, so the value the model gives is
    /// lost; a header connectorgen or the client sends itself (Authorization, Content-Type,
    /// Accept, Idempotency-Key) would let the model overwrite the credential or the body's
    /// type; and a path has no URL without its parameter, so it cannot be `required:
    /// false`.
    // ---- Inline HTTP: what the request and response really look like. ----
    #[error("invalid {location} parameter `{name}`: {reason}")]
    #[diagnostic(help(
        "`params` describe the path's `{{name}}` segments; `headers` are header parameters other than Authorization, Content-Type, Accept and Idempotency-Key"
    ))]
    InvalidParameter {
        location: &'static str,
        name: String,
        reason: String,
        #[label("this parameter")]
        span: Span,
    },

    /// A parameter's `style` or `explode` that OpenAPI does not allow there, or
    /// that does not fit its schema: a client would serialise the value differently
    /// than the API reads it.
    ///
    /// A client writes a list or an object as `style` and `explode` say (`ids=1,2` or
    /// `ids=1&ids=2`): a style OpenAPI does not define for that location, or one that does
    /// not fit the schema, is read by each client its own way, so the provider receives a
    /// value it cannot parse, or another one.
    #[error("`{name}` in `{key}`: {reason}")]
    #[diagnostic(help(
        "query: form (default), spaceDelimited, pipeDelimited, deepObject; path: simple (default), label, matrix; header: simple. `explode` applies to lists and objects"
    ))]
    InvalidStyle {
        name: String,
        key: &'static str,
        reason: String,
        #[label("here")]
        span: Span,
    },

    /// A media type that is not `type/subtype`.
    ///
    /// The media type decides how the body is encoded and what Content-Type header goes
    /// with it: a value that is not `type/subtype` is refused by client platforms, or sent
    /// as it is, and the provider refuses the call or reads the body wrongly.
    ///
    /// `inputType`, `outputType` or `errors.contentType` is not a `type/subtype`
    /// media type.
    #[error("`{key}` is not a media type: `{value}`")]
    #[diagnostic(help(
        "write `type/subtype`, e.g. `application/json`, `application/x-www-form-urlencoded`, `multipart/form-data`, `application/octet-stream`, `text/plain`"
    ))]
    InvalidMediaType {
        key: &'static str,
        value: String,
        #[label("not type/subtype")]
        span: Span,
    },

    /// A success status outside 2xx, or an error status outside 4xx/5xx.
    ///
    /// The status tells clients and the model which answers are success: a success status
    /// outside 2xx makes a call that worked look failed (and the model retries it, perhaps
    /// paying again), and an error status outside 4xx and 5xx makes a failure look like
    /// success.
    #[error("status `{status}` is not {expected}")]
    #[diagnostic(help(
        "`status` is the success status (200 to 299; 204 has no body); `errors.statuses` lists 400 to 599 or `default`"
    ))]
    InvalidStatus {
        status: String,
        expected: &'static str,
        #[label("this status")]
        span: Span,
    },

    /// An operation's `openapi:` fragment holds a field it may not.
    ///
    /// The fragment is merged over the generated operation: a field connectorgen owns there
    /// (its parameters, its body, its description) would replace what the manifest
    /// declares, so the model would read an operation that no check of this run has seen,
    /// without its cost or permanence sentences.
    ///
    /// The `openapi:` fragment of an operation is not a mapping of Operation Object
    /// fields, or sets a field connectorgen owns.
    #[error("the `openapi:` fragment cannot hold `{key}`: {reason}")]
    #[diagnostic(help(
        "the fragment is merged over the generated operation: use it for Operation Object fields the manifest has no key for (externalDocs, callbacks, security, servers, x- extensions, …)"
    ))]
    InvalidOpenapiFragment {
        key: String,
        reason: String,
        #[label("this fragment")]
        span: Span,
    },

    /// A `$ref` in a schema does not resolve in the generated documents.
    ///
    /// A reference to nothing leaves the schema undefined: clients refuse the whole
    /// document or tool list, or treat the value as anything, so the model sends arguments
    /// the provider refuses. Every `$ref` in a schema the author wrote must resolve inside
    /// the generated documents (a shared schema lives under `schemas:`).
    #[error("`$ref: \"{reference}\"` does not resolve: {reason}")]
    #[diagnostic(help(
        "share a schema by writing it once under `schemas:` and pointing at it with `$ref: \"#/components/schemas/<name>\"`"
    ))]
    UnresolvedRef {
        reference: String,
        reason: String,
        #[label("in this schema")]
        span: Span,
    },

    /// A JSON Schema the author wrote is not valid JSON Schema 2020-12.
    ///
    /// Clients read an invalid schema (`type: strnig`, `required: yes`) differently: one
    /// refuses the whole document, another ignores the keyword and accepts anything, so the
    /// model sends values the provider refuses. Every schema the author writes is checked
    /// against the JSON Schema 2020-12 meta-schema, as OpenAPI 3.1 reads it.
    #[error("`{key}` is not a valid JSON Schema at `{pointer}`: {message}")]
    #[diagnostic(help(
        "fix the schema at that place (it is JSON Schema 2020-12, as OpenAPI 3.1 reads it); the pointer is inside the schema marked below"
    ))]
    SchemaNotValid {
        key: String,
        pointer: String,
        message: String,
        #[label("in this schema")]
        span: Span,
    },

    /// An `openapi:` fragment gives its operation `servers`: replaced by `publicUrl` in the outputs.
    ///
    /// `service.publicUrl` is where the agent calls every operation (docs/servers.md). By
    /// OpenAPI's rules an operation's own `servers` would win over it, so every client
    /// would send that operation, and the person's credential, elsewhere. As in base mode,
    /// the outputs leave the operation's `servers` out; the URLs are still checked
    /// (`bad-url`).
    #[strum_discriminants(strum(props(severity = "warning")))]
    #[error(
        "the `openapi:` fragment gives this operation its own `servers`, which would override `publicUrl`: left out of the outputs"
    )]
    #[diagnostic(help(
        "remove `servers` from the fragment; to call another host, make `publicUrl` a gateway in front of it"
    ))]
    FragmentServersReplaced {
        #[label("this fragment")]
        span: Span,
    },

    /// Without `publicUrl`, the exposed operations call different hosts.
    ///
    /// Base mode without `service.publicUrl`: the exposed operations resolve to
    /// different origins (the provider's document gives paths or operations their own
    /// `servers`), so every client sends them to different hosts. With `publicUrl`,
    /// path- and operation-level `servers` are replaced in every output (docs/servers.md).
    #[strum_discriminants(strum(props(severity = "warning")))]
    #[error("the exposed operations call different hosts: {hosts}")]
    #[diagnostic(help(
        "set `service.publicUrl` to the one URL the agent calls (a gateway in front of these hosts): it replaces every path's and operation's `servers` in the outputs; or expose the operations of one host only"
    ))]
    MixedServers {
        hosts: String,
        first: String,
        #[label("calls {first}")]
        span: Span,
        second: String,
        #[label("calls {second}")]
        other: Span,
    },

    /// A schema keyword no JSON Schema or OpenAPI vocabulary defines.
    ///
    /// JSON Schema ignores keywords it does not define, so a misspelled constraint
    /// (`maxLenght: 50`) or a YAML slip (`{ description: a, b }` writes a keyword `b`)
    /// checks nothing: the author believes a bound holds that no client or model is told
    /// about. A warning, since extensions are allowed.
    #[strum_discriminants(strum(props(severity = "warning")))]
    #[error(
        "`{key}` has the keyword `{keyword}` at `{pointer}`, which no schema vocabulary defines"
    )]
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
    ///
    /// The credential goes where `auth:` says on every call: a scheme no client knows, an
    /// `in` other than header or query, or a name no header or query parameter can have
    /// cannot be sent, so every call the agent makes would be refused; and a key that
    /// applies to another scheme is a sign the manifest means something other than it says.
    #[error("invalid `auth`: {reason}")]
    #[diagnostic(help(
        "`scheme: bearer` (the default), `scheme: basic`, or `scheme: apiKey` with `in: header` or `in: query` and the `name` that carries the key"
    ))]
    InvalidAuth {
        reason: String,
        #[label("here")]
        span: Span,
    },

    /// A credential's part (`auth.parts`) or `format` says something no request can carry.
    ///
    /// Every part of the credential must reach the one place the provider reads it from: a
    /// part with no place, two parts in one place (the second overwrites the first), or a
    /// `format` without exactly one `{value}` would send a credential the provider refuses
    /// on every call, or send the secret where it does not belong.
    ///
    /// Each part of `auth.parts` is either one of the base document's security schemes
    /// (`securityScheme: clientId`, base mode) or a place of its own (`in: header`,
    /// `query`, `cookie` or `body`, and the `name` there); each has its own environment
    /// variable, and at most one part goes to one place. A `format` says how the value is
    /// written, with `{value}` exactly once (`"ShippoToken {value}"`), on one line.
    /// `parts` replaces the one-part keys (`scheme`, `in`, `name`, `env`, `format`).
    #[error("invalid credential part: {reason}")]
    InvalidCredentialPart {
        reason: String,
        #[label("here")]
        span: Span,
        #[help]
        help: String,
    },

    /// Two parts of one credential go to the same place: the same header (names compared
    /// without regard to case, as HTTP does), query parameter, cookie or body field, or
    /// the same security scheme twice.
    ///
    /// A request can carry one value there, so one part would silently replace the other
    /// (`X-Api-Key` and `x-api-key` are one header). In base mode the parts are the
    /// document's schemes of one requirement, the manifest's `auth.parts` entries, and the
    /// schemes of each operation's own `security`.
    #[error("two credential parts go to the same place: {place}")]
    DuplicateCredentialPart {
        place: String,
        /// `the second`, or where the credential comes from (`the document's requirement`).
        label: &'static str,
        #[label("{label}")]
        span: Span,
        #[help]
        help: String,
    },

    /// A target cannot carry a part of the credential as the manifest declares it.
    ///
    /// `connectorgen serve` sends every part (the `mcp` target), but an agent platform
    /// reading an OpenAPI document fills in only what its own settings can express: no
    /// OpenAPI security scheme puts a credential into a request body, so the platforms of
    /// the `muse`, `openai` and `openapi30` targets would leave it to the model; and
    /// GPT Actions (`openai`) send one credential, not several together. The outputs are
    /// still written; the target's users must set the rest up themselves.
    #[strum_discriminants(strum(props(severity = "warning")))]
    #[error("the `{target}` target cannot express {what}")]
    #[diagnostic(help(
        "serve the connector with `connectorgen serve` (the `mcp` target sends every part), or drop the target; the finding says what its users must do instead"
    ))]
    CredentialNotExpressible {
        target: &'static str,
        what: String,
        #[label("the credential")]
        span: Span,
    },

    /// `auth.env` is not a name an environment variable can have, so `serve` could
    /// never read the credential from it.
    ///
    /// `serve` reads the person's credential from this variable when it starts: a name with
    /// a `-`, an `=` or a leading digit cannot be set by a shell or by most platforms'
    /// settings, so the connector could never authenticate and every call would be refused.
    #[error("`auth.env: {name}` is not an environment variable name")]
    #[diagnostic(help(
        "a letter or `_`, then letters, digits or `_` (e.g. `env: VIDGEN_TOKEN`); leave `env` out for `<SERVICE>_TOKEN`"
    ))]
    InvalidAuthEnv {
        name: String,
        #[label("here")]
        span: Span,
    },

    /// `openapi:` names a file that cannot be read.
    ///
    /// Every request is built from the provider's document: without it there is nothing to
    /// build, and writing outputs anyway would give the model tools with no request behind
    /// them. The document must also be a regular file in the manifest's folder (or a folder
    /// allowed with `--allow-read`), so that a pull request's manifest cannot print a CI
    /// machine's files into the outputs.
    // ---- Base mode: the provider's OpenAPI document (`openapi:`). ----
    #[error("cannot use the base OpenAPI document: {message}")]
    #[diagnostic(help(
        "`openapi:` is the provider's OpenAPI document (JSON or YAML), a regular file relative to this manifest, in its folder or below, or in a folder given on the command line with --allow-read DIR"
    ))]
    BaseUnreadable {
        message: String,
        #[label("this file")]
        span: Span,
    },

    /// The base OpenAPI document is not well-formed JSON or YAML.
    ///
    /// A document that does not parse cannot be read in part: guessing past the error would
    /// build the provider's paths, parameters and security from a document nobody wrote,
    /// and every request depends on them. Point `openapi:` at the provider's file as
    /// published.
    #[error("the base OpenAPI document does not parse: {message}")]
    #[diagnostic(help(
        "fix the document, or point `openapi:` at the provider's published file as it is"
    ))]
    BaseSyntax {
        message: String,
        #[label("here")]
        span: Span,
    },

    /// The base document is not OpenAPI 3.0, 3.1 or 3.2.
    ///
    /// Swagger 2.0 and other formats declare parameters, bodies and security in other
    /// places than OpenAPI 3: read as OpenAPI 3, such a document would give requests the
    /// provider does not accept. Convert it first.
    #[error("the base document is not OpenAPI 3.0, 3.1 or 3.2: {found}")]
    #[diagnostic(help(
        "connectorgen reads OpenAPI 3.0.x, 3.1.x and 3.2.x; convert a Swagger 2.0 document first (e.g. with swagger2openapi)"
    ))]
    BaseNotOpenapi {
        found: String,
        #[label("here")]
        span: Span,
    },

    /// A `$ref` the exposed operations reach does not resolve to a component of the
    /// base document.
    ///
    /// What an exposed operation reaches through the reference (its parameters, its body,
    /// its answer) would be unknown: the outputs would carry a reference to nothing, which
    /// clients refuse (the whole document), or an argument that accepts anything.
    #[error("`$ref: \"{reference}\"` {reason}")]
    #[diagnostic(help(
        "connectorgen follows references to `#/components/…` inside the document; fix the reference or the component's name"
    ))]
    BaseRefUnresolved {
        reference: String,
        reason: &'static str,
        #[label("this reference")]
        span: Span,
    },

    /// A `$ref` the exposed operations reach is a URL, never fetched.
    ///
    /// Files a base document refers to are read from its own folder (docs/multifile.md);
    /// a reference with a scheme (`https:`, `http:`, `file:`, any other) or an authority
    /// (`//host/…`) is never followed: connectorgen does not touch the network, and the
    /// outputs must not depend on what a server returns today.
    #[error("`$ref: \"{reference}\"` is a URL, which connectorgen never fetches")]
    #[diagnostic(help(
        "save the file into the document's folder and refer to it by a relative path (`$ref: schemas/thing.yaml`), or bundle the document into one file first"
    ))]
    BaseRefUrl {
        reference: String,
        #[label("a URL")]
        span: Span,
    },

    /// A `$ref` the exposed operations reach leads outside the document's folder.
    ///
    /// Once every symlink is resolved, the file is outside the folders a document's files
    /// may be in (its own folder and the `--allow-read` folders), or is a file of the
    /// operating system (under `/proc`, `/sys` or `/dev`). A symlink inside the folder
    /// that leads out counts as outside: a pull request's document must not be able to
    /// print a CI machine's files into the outputs.
    #[error("`$ref: \"{reference}\"`: {message}")]
    #[diagnostic(help(
        "keep every file of the document in the document's folder or below; a folder meant to be read can be allowed on the command line with --allow-read DIR"
    ))]
    BaseRefOutside {
        reference: String,
        message: String,
        #[label("leads outside the document's folder")]
        span: Span,
    },

    /// A `$ref` the exposed operations reach names a file that cannot be read.
    ///
    /// What the operation reaches through the reference would be unknown, so its request or
    /// answer could not be written: guessing, or leaving the reference out, would give the
    /// model a tool that sends what the provider does not accept.
    ///
    /// The file is missing, is not a regular file, or is not UTF-8 (or the run reads no
    /// file besides the document's own text). A file reference is relative to the file
    /// that holds it, not to the root document.
    #[error("`$ref: \"{reference}\"`: {message}")]
    #[diagnostic(help(
        "a file reference is relative to the file that holds it: fix the path, or add the file"
    ))]
    BaseRefUnreadable {
        reference: String,
        message: String,
        #[label("this file")]
        span: Span,
    },

    /// A `$ref` the exposed operations reach names nothing in the file it names.
    ///
    /// A reference to nothing in a file leaves the schema or parameter it stands for
    /// unknown, as an unreadable file does: the outputs would hold a reference clients
    /// refuse, or an argument that accepts anything.
    ///
    /// The file was read, but the JSON pointer after its `#` names nothing in it.
    #[error("`$ref: \"{reference}\"`: {file} has nothing at `{pointer}`")]
    #[diagnostic(help(
        "the part after `#` is a JSON pointer into the file (`#/components/schemas/Thing`; `~1` stands for `/` and `~0` for `~`): fix it, or the file"
    ))]
    BaseRefPointer {
        reference: String,
        file: String,
        pointer: String,
        #[label("this reference")]
        span: Span,
    },

    /// A `$ref` that must be copied into place leads back to itself.
    ///
    /// A path item, an operation, a media type or a value in an extension has no
    /// component section in OpenAPI, so a reference to one is copied into place; one
    /// that leads back to itself through other files would never end. (A schema,
    /// response or parameter may refer to itself: it becomes a component.)
    #[error("`$ref: \"{reference}\"` leads back to itself: copied into place, it would never end")]
    #[diagnostic(help(
        "a schema, response or parameter may refer to itself (it becomes a component); a path item, operation or media type cannot contain itself: break the cycle in the document"
    ))]
    BaseRefCycle {
        reference: String,
        #[label("part of a cycle")]
        span: Span,
    },

    /// A `$ref` was not followed: the document passed a bound on multi-file documents.
    ///
    /// A document spread over many files can reference without end, or copy one part into
    /// place so often that the outputs grow past any use: the bounds stop a pull request's
    /// document from taking a CI machine's time, memory and disk.
    ///
    /// The bounds: files besides the root, files in one chain of references, bytes of
    /// every file together (`--max-bytes`), and nodes copied into place
    /// (docs/multifile.md gives each).
    #[error("`$ref: \"{reference}\"` was not followed: {message}")]
    #[diagnostic(help(
        "the byte limit is --max-bytes; the limits on files, depth and copies are fixed (docs/multifile.md): bundle the document into one file, or expose fewer operations"
    ))]
    BaseRefLimit {
        reference: String,
        message: String,
        #[label("not followed")]
        span: Span,
    },

    /// A base operation's path cannot be a URL path.
    ///
    /// Every call goes to this path: one with whitespace or control characters is sent
    /// differently by each client (encoded, cut or refused), so the provider would receive
    /// another path than its document declares.
    ///
    /// A base operation's path holds what no URL path can (whitespace, control
    /// characters, a backtick), which would also break the Markdown that quotes it.
    #[error("the base document's path `{path}` cannot be a URL path: {reason}")]
    #[diagnostic(help(
        "the provider's document is wrong here: fix the path in it (percent-encode what a URL cannot hold), or expose another operation"
    ))]
    InvalidBasePath {
        path: String,
        reason: String,
        #[label("this path")]
        span: Span,
    },

    /// A parameter of an exposed base operation has no usable name or location, or
    /// is repeated.
    ///
    /// The provider's parameter list is what every request is built from: a parameter
    /// without a usable name or place would be sent nowhere, and one declared twice would
    /// be filled twice, once with a value the model did not mean.
    ///
    /// A parameter of an exposed base operation has no usable `name` or `in`, or is
    /// declared twice: no client, and no MCP tool argument, can be built from it.
    #[error("`{route}` in the base document: {reason}")]
    #[diagnostic(help(
        "the provider's document is wrong here: give each parameter a `name` and an `in` (path, query, header or cookie), once per operation, or expose another operation"
    ))]
    InvalidBaseParameter {
        route: String,
        reason: String,
        #[label("this parameter")]
        span: Span,
    },

    /// The exposed part of the base document breaks the structure OpenAPI defines for its version.
    ///
    /// Agent platforms and client generators validate the document they are given, and may
    /// refuse an invalid one whole, so the connector would not load at all; repairing what
    /// can be repaired, and saying so, lets the author tell the provider.
    ///
    /// The exposed part of the base document (what the outputs keep) is checked against
    /// the structure OpenAPI defines for its version (3.0, 3.1 or 3.2: each object's
    /// fields, their types, the required ones; 3.0 Schema Objects' keywords; 3.1 and 3.2
    /// Schema Objects against the JSON Schema 2020-12 meta-schema): a warning, since the
    /// provider's document is the truth for HTTP. What can be repaired without changing
    /// any request is repaired in the outputs, and the finding says how
    /// (`info.externalDocs` moved to the root, a `components.mediaTypes` reference
    /// written in place, an example that fails its own schema left out); anything else
    /// is kept as the provider wrote it, and the finding says so. See
    /// docs/base-documents.md.
    #[strum_discriminants(strum(props(severity = "warning")))]
    #[error("the base document is not valid OpenAPI {version}: {what}")]
    BaseInvalid {
        version: &'static str,
        what: String,
        #[label("here")]
        span: Span,
        #[help]
        help: String,
    },

    /// Schemas of the base document that client generators would give one class name: retitled in the outputs.
    ///
    /// Client generators (openapi-python-client among them) name a class after a
    /// schema's `title`, within a scope: the component schemas, the schemas of one
    /// operation, and the schemas one schema holds (its properties and
    /// `additionalProperties`, with their `items` and `anyOf`/`oneOf` alternatives, and
    /// those of its inline `allOf` parts). Two titles of one scope that differ only in
    /// case and punctuation make two classes of one name, and the generator drops the
    /// operation. A title is an annotation, so the outputs give each later schema its
    /// place after its title (`param` → `param (alipay)`), which changes no request; the
    /// base file is left as it is. See docs/base-documents.md.
    #[strum_discriminants(strum(props(severity = "warning")))]
    #[error(
        "the base document titles {count} schemas of one scope `{title}` (the first at `{first}`, the next at `{second}`): in the outputs each but the first has its place added, e.g. `{renamed}`"
    )]
    #[diagnostic(help(
        "nothing to do: a title changes no request; tell the provider so its own clients get distinct names"
    ))]
    DuplicateTitle {
        title: String,
        count: usize,
        first: String,
        second: String,
        renamed: String,
        #[label("a title used before in this scope")]
        span: Span,
    },

    /// An OpenAPI 3.2 construct the 3.1 outputs cannot hold: converted (warning) or refused.
    ///
    /// The outputs are OpenAPI 3.1, which agent platforms read: a 3.2 construct copied as
    /// it is would be ignored or refused by them, and where it decides the request (a
    /// `query` method, a `querystring` parameter) a 3.1 reader would send another request
    /// than the provider expects.
    ///
    /// An OpenAPI 3.2 construct of the base document that the outputs (OpenAPI 3.1)
    /// cannot hold as it is: an error where a 3.1 reader could not make the same request
    /// (an exposed `query` or `additionalOperations` operation, a `querystring`
    /// parameter, a request body described only by `itemSchema`), a warning saying how
    /// it was converted otherwise (a tag's `summary`, `parent` and `kind` moved to `x-`
    /// keys, a media type from `components.mediaTypes` written in place, `$self`
    /// dropped, …). See docs/base-documents.md.
    #[strum_discriminants(strum(props(severity = "error or warning")))]
    #[error("OpenAPI 3.2: {what}")]
    Openapi32Unsupported {
        what: String,
        #[label("here")]
        span: Span,
        #[help]
        help: String,
    },

    /// `operation:` names nothing in the base document.
    ///
    /// An exposed operation must exist in the provider's document: a name that matches
    /// nothing (a misspelling, an operation the provider renamed) leaves no request to
    /// build, and skipping it would silently drop a tool the author meant to give. The help
    /// names the nearest operationId or route.
    #[error("the base document has no operation `{name}`")]
    UnknownBaseOperation {
        name: String,
        #[label("not an operationId or `METHOD /path` of the base document")]
        span: Span,
        #[help]
        help: String,
    },

    /// `operation:` is one base operation's operationId and another's route.
    ///
    /// Exposing either would be a guess, and the wrong guess gives the model another call
    /// than the one the author reviewed: a GET's route can be a DELETE's operationId. The
    /// help names each by what only it has.
    #[error(
        "`{name}` names two operations of the base document: the operationId of `{by_id}`, and the route `{by_route}`"
    )]
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
    ///
    /// Two entries for one base operation would make two tools for one HTTP call, with
    /// possibly different ids and descriptions: the model could not tell them apart, and a
    /// cost or permanence sentence on one could be missing from the other.
    #[error("`{name}` is listed twice")]
    #[diagnostic(help("list each base operation once; remove one of the two entries"))]
    OperationListedTwice {
        name: String,
        #[label("second listing")]
        span: Span,
        #[label("first listed here")]
        first: Span,
    },

    /// An inline-only key on an operation of a manifest with a base document.
    ///
    /// With `openapi:`, the provider's document is the truth for HTTP: an inline key beside
    /// it (`method`, `path`, `input`, …) would describe a request other than the
    /// provider's, and one of the two would silently be ignored. An operation here may
    /// override only `id`, `summary` and `description`.
    #[error("`{key}` comes from the base OpenAPI document in a manifest with `openapi:`")]
    #[diagnostic(help(
        "the provider's document is the truth for HTTP: remove `{key}`; an operation here names a base operation with `operation:` and may override only `id`, `summary` and `description`"
    ))]
    InlineKeyWithBase {
        key: &'static str,
        #[label("remove this")]
        span: Span,
    },

    /// `operation:` in a manifest without a base document.
    ///
    /// `operation:` names an operation of the provider's document; without a document there
    /// is no request to build, and ignoring the key would leave an operation with no method
    /// or path.
    #[error("`operation:` names a base operation, but the manifest has no `openapi:` document")]
    #[diagnostic(help(
        "add `openapi: path/to/api.json` at the top of the manifest, or write the operation inline with `id`, `method` and `path`"
    ))]
    OperationWithoutBase {
        #[label("needs `openapi:`")]
        span: Span,
    },

    /// The base operation's method is not one agents are given.
    ///
    /// Agents are given get, post, put, patch and delete: a HEAD, OPTIONS or TRACE
    /// operation does nothing a person asks an agent for, and the safety sentences cannot
    /// class it as a read or a write, so the model would be told nothing true about what it
    /// does.
    #[error("`{name}` is a {method} operation, which connectorgen does not expose to agents")]
    #[diagnostic(help("expose get, post, put, patch or delete operations"))]
    UnsupportedMethod {
        name: String,
        method: String,
        #[label("this operation")]
        span: Span,
    },

    /// An operation id that a chosen target cannot take.
    ///
    /// The id is the tool's name on each platform: a platform whose rule it breaks (GPT
    /// Actions take at most 64 characters and no `.`) refuses the whole document or renames
    /// the tool, so the model would call a name nobody wrote, or no tool at all. "by the
    /// openai target" names the platform; "by agents" is the rule every target shares.
    #[error("operation id `{id}` cannot be used {by}: {reason}")]
    IdNotForTarget {
        id: String,
        by: String,
        reason: String,
        #[label("this id")]
        span: Span,
        #[help]
        help: String,
    },

    /// `idempotency: unsupported` on an operation whose base declares the header.
    ///
    /// The provider's document says the call honours an Idempotency-Key, while
    /// `unsupported` tells the model never to retry it: the protection the provider offers
    /// is thrown away, and after a timeout on a paid call the person cannot learn whether
    /// they paid. If the document is wrong, fix the document, so that both say the same.
    #[error("`{id}` declares the Idempotency-Key header in the base document")]
    #[diagnostic(help(
        "the provider's document says the header is honoured: remove `idempotency: unsupported` (the default follows the base), or fix the base document"
    ))]
    IdempotencyContradictsBase {
        id: String,
        #[label("says unsupported")]
        span: Span,
    },

    /// A short form of `idempotency` on a base operation that declares another
    /// retry key.
    ///
    /// Base mode: `idempotency: optional` or `required` (short for an
    /// `Idempotency-Key` header) on an operation whose document already declares
    /// another retry key, such as a body field `idempotency_key`: connectorgen would
    /// add a second key, and an agent could send the one the provider ignores. Name
    /// the document's key with the mapping form instead (the help line gives it).
    #[error(
        "`{id}` already has a retry key, the {what}: `idempotency: optional` or `required` would add an Idempotency-Key header beside it"
    )]
    IdempotencySecondKey {
        id: String,
        what: String,
        #[label("an Idempotency-Key header")]
        span: Span,
        #[help]
        help: String,
    },

    /// `idempotency:` names a key the operation does not have or cannot be given.
    ///
    /// The model would send the key where the provider never reads it, so every retry would
    /// look like a new request: a paid call retried after a timeout would be charged twice.
    ///
    /// `idempotency:` names a header, query parameter or body field the operation
    /// does not have (base mode), or a body field connectorgen cannot add (inline).
    /// The message says which kind of key it looked for (the header `X-Request-Id`,
    /// the query parameter `request_id`, the body field `idempotency_key`) and the help
    /// line offers the nearest name or lists the keys the operation has.
    #[error("`{id}` has no {what} to carry the retry key")]
    IdempotencyKeyNotFound {
        id: String,
        what: String,
        #[label("names it here")]
        span: Span,
        #[help]
        help: String,
    },

    /// `lint:` or `lintAllow` names a retired lint, which changes nothing.
    ///
    /// A retired lint's id is still accepted, so that older manifests keep building,
    /// but nothing reports it any more: setting its level or silencing it has no
    /// effect. `connectorgen explain --rule <id>` says what replaced it.
    #[strum_discriminants(strum(props(severity = "warning")))]
    #[error("`{id}` is a retired lint: this setting changes nothing")]
    #[diagnostic(help("remove it; `connectorgen explain --rule {id}` says what replaced it"))]
    RetiredLint {
        id: String,
        #[label("retired")]
        span: Span,
    },

    /// The description does not say what the call will not do.
    ///
    /// Models choose tools by their descriptions and assume a tool can do what it does not
    /// say it cannot: a description that states its limit ("Read-only. This cannot move
    /// funds.") keeps the model from trying a read for a write, and tells the person at a
    /// glance what they let it call.
    ///
    /// A GET or a paid operation's description does not say what the call will not
    /// do (no "read-only", "cannot", "does not", "never", "only", "changes nothing",
    /// "costs nothing", …).
    #[strum_discriminants(strum(props(level = "warn")))]
    // ---- Safety lints: valid manifests that may still mislead a model. ----
    #[error("`{id}`: the description does not say what the call will not do")]
    #[diagnostic(help(
        "say what the call cannot do, e.g. \"Reads your balance\" → \"Read-only. This cannot move funds.\"; \"Gets your tasks\" → \"Returns tasks. Does not create, edit or complete them.\"; \"Manages your account\" → \"Lists connected accounts. Cannot change billing or delete anything.\""
    ))]
    MissingLimit {
        id: String,
        #[label("no \"read-only\", \"cannot\", \"does not\", \"never\" or \"only\" here")]
        span: Span,
    },

    /// An input's `oneOf` has alternatives one value can fit together: `serve` checks it
    /// as "at least one".
    ///
    /// A document that writes a parameter as "one of these names, or any string"
    /// (`oneOf: [{enum: [...]}, {type: string}]`) means either; read literally, `oneOf`
    /// takes a value that fits exactly one alternative, so every known name — which fits
    /// both — would be refused, the provider's own examples included. `connectorgen
    /// serve` checks such a `oneOf` as `anyOf`; the outputs keep the document's schema.
    ///
    /// An input (a parameter or a body field) of the operation has a `oneOf` of which one
    /// alternative takes any value of a type (it says only `type`, or nothing that
    /// narrows it) and another takes values of that type too.
    #[strum_discriminants(strum(props(level = "warn")))]
    #[error(
        "`{id}`: the `oneOf` of {place} has alternatives one value fits together: serve checks it as at least one of them"
    )]
    #[diagnostic(help(
        "nothing to do for serve; a client that validates `oneOf` strictly refuses a value that fits both (a known name that is also a string): tell the provider `anyOf` says what it means"
    ))]
    OverlappingOneOf {
        id: String,
        place: String,
        #[label("this operation")]
        span: Span,
    },

    /// An exposed operation is called on the Base URL's host but under another path.
    ///
    /// llms.txt gives one Base URL; an operation whose server is that host with another
    /// path (`/v2` beside a Base URL ending in `/v1`) is listed with its own URL, but its
    /// path looks like the Base URL's, and an agent that joins the two calls an address
    /// the provider does not serve, or serves otherwise. Clients built from the OpenAPI
    /// documents and `serve` call the operation's own server.
    #[strum_discriminants(strum(props(level = "warn")))]
    #[error("`{id}` is called at {url}: the Base URL's host, but not the Base URL ({base})")]
    #[diagnostic(help(
        "llms.txt gives this operation its own URL, which the agent must use instead of the Base URL: `lintAllow: [same-host-other-path]` here accepts that; for one Base URL, expose the operations of one server only (`service.publicUrl` would send this operation there too)"
    ))]
    SameHostOtherPath {
        id: String,
        url: String,
        base: String,
        #[label("called at {url}")]
        span: Span,
    },

    /// The summary is one word or starts with a catch-all verb (Manages, Handles,
    /// Processes, Does, Deals with).
    ///
    /// The summary is how a model picks one tool among many: "Manages videos" fits every
    /// call about videos, so the model may call the wrong one, and the person approving it
    /// cannot tell what it does.
    ///
    /// The summary is one word, or starts with a catch-all verb (Manages, Handles,
    /// Processes, Does, Deals with, or their imperative: Manage, Handle, …). A
    /// specific verb and its object is clear however short: "List predictions",
    /// "Transcribe audio", "Get transcript".
    #[strum_discriminants(strum(props(level = "warn")))]
    #[error("`{id}`: the summary is vague: {reason}")]
    #[diagnostic(help(
        "name the action with a specific verb and its object, e.g. \"List videos\" or \"Generate a video from a prompt\", not \"Manages videos\""
    ))]
    VagueSummary {
        id: String,
        reason: String,
        #[label("vague")]
        span: Span,
    },

    /// An operation that spends has no retry key: `idempotency: unsupported`, or
    /// the base document declares none.
    ///
    /// Without a retry key, a paid call that times out cannot be retried safely: the first
    /// call may have gone through, so a retry may charge the person twice. The model is
    /// told never to repeat it on its own, and the person is left not knowing whether they
    /// paid.
    ///
    /// An operation that spends has no retry key: `idempotency: unsupported`, or
    /// base mode's default over a document that declares none; the help names the
    /// three mechanisms a provider can offer (a header, a query parameter or a body
    /// field, answered with the first result).
    #[strum_discriminants(strum(props(level = "warn")))]
    #[error("`{id}` spends, but a retry cannot be recognised: {why}")]
    #[diagnostic(help(
        "a retry after a timeout charges the person again, so every target tells the model never to repeat the call on its own. A provider can recognise a retry by a key the client sends: a header (`idempotency: {{ header: Idempotency-Key }}`, or any name), a query parameter (`{{ query: request_id }}`) or a body field (`{{ bodyField: idempotency_key }}`), kept with the first result for a day or more and answered with it. If it has one, name it; if not, acknowledge with `lintAllow: [spend-without-idempotency]` on the operation"
    ))]
    SpendWithoutIdempotency {
        id: String,
        why: &'static str,
        #[label("no retry key")]
        span: Span,
    },

    /// The poll target names no job: its path has no {param}, and its JSON body
    /// requires no id field (RPC-style polls take the id there).
    ///
    /// A poll target whose path names no job cannot say which job it reports on: a model
    /// polling it may read another job's status, tell the person a result that is not
    /// theirs, or never see its own job finish and start another.
    #[strum_discriminants(strum(props(level = "warn")))]
    #[error("poll target `{target}` has no path parameter to name the job")]
    #[diagnostic(help(
        "poll a path that names the job, e.g. `GET /v1/jobs/{{id}}`, or a `read: true` operation whose JSON body requires the id (named like an id, or by `async.idField`); without one the model cannot tell which job it is polling"
    ))]
    PollTargetWithoutId {
        target: String,
        #[label("polls `{target}`")]
        span: Span,
        #[label("no `{{param}}` in this path")]
        target_path: Span,
    },

    /// The description the model reads exceeds the configured number of characters.
    ///
    /// OpenAI's GPT Actions take at most 300 characters of description, and long
    /// descriptions in every tool crowd the model's context on every turn. Off by default; for authors who
    /// target such limits.
    ///
    /// The description the model reads (with the generated sentences) is longer
    /// than `max` characters (default 300, OpenAI GPT Actions' limit). It points at
    /// the author's words that make it longest — the description, the
    /// `spends.note` or `spends.when` the cost sentence repeats, or the `confirm.when`
    /// the permanence sentence repeats — and its help says
    /// which (in base mode, that the text is the base document's; when the
    /// generated sentences alone are over `max`, that only raising it helps).
    #[strum_discriminants(strum(props(level = "allow")))]
    #[error(
        "`{id}`: the description the model reads is {length} characters, over the {max} configured"
    )]
    DescriptionTooLong {
        id: String,
        length: usize,
        max: usize,
        #[label("this makes it long ({length} characters with the generated sentences)")]
        span: Span,
        #[help]
        help: String,
    },

    /// A non-GET that does not spend does not say what it will not do.
    ///
    /// A call that changes things is where a model that overreaches does harm: a
    /// description that bounds the change ("Cannot cancel an order already in production")
    /// tells the model when not to use it, and the person what they approve. The lint for
    /// GETs and paid calls is `missing-limit`.
    #[strum_discriminants(strum(props(level = "warn")))]
    #[error("`{id}` changes things but its description does not say what it will not do")]
    #[diagnostic(help(
        "bound the change, e.g. \"Cancels the order. Cannot cancel an order already in production and never charges anything.\""
    ))]
    MutatingWithoutLimit {
        id: String,
        #[label("no \"cannot\", \"does not\", \"never\" or \"only\" here")]
        span: Span,
    },

    /// An operation spends but is not async.
    ///
    /// A paid call that answers only when its work is done can take long enough to time
    /// out, and a model that sees a timeout tends to call again, and pay again; async with
    /// a free poll target avoids it. Off by default: most paid calls answer quickly.
    #[strum_discriminants(strum(props(level = "allow")))]
    #[error("`{id}` spends and answers synchronously")]
    #[diagnostic(help(
        "allowed; if the call can take long, make it `async` with a free poll target so a timeout does not tempt the model to resubmit"
    ))]
    PaidSyncOperation {
        id: String,
        #[label("spends here")]
        span: Span,
    },

    /// Retired: every `$ref` is checked as an error now (`unresolved-ref`); the id
    /// is still accepted.
    ///
    /// Retired: every `$ref` in a schema you write is now checked as an error
    /// (`unresolved-ref`) and resolves against `schemas:`; the id is still accepted
    /// in `lint:` and `lintAllow` so older manifests keep working. No finding has
    /// this code.
    #[strum_discriminants(strum(props(level = "warn", retired = "true")))]
    #[error("`local-ref` is retired")]
    LocalRef,

    /// Base mode: an operation that spends or is async has no `idempotency:`, and
    /// the document declares no retry key.
    ///
    /// Treated as `unsupported`, the call is described to the model as never safe to
    /// repeat: right when the provider has no key, but if it has one its protection is
    /// lost, and after a timeout the person cannot learn whether they paid. The lint asks
    /// the author to say which.
    ///
    /// Base mode: an operation that spends or is async has no `idempotency:` and
    /// its document declares no retry key, so it is treated as `unsupported`; name
    /// the key, or write `unsupported`.
    #[strum_discriminants(strum(props(level = "warn")))]
    #[error(
        "`{id}`: the provider's document declares no retry key, so it is treated as `idempotency: unsupported`"
    )]
    #[diagnostic(help(
        "every target now tells the model never to repeat this call on its own. If the provider recognises a retry, name its key: `idempotency: {{ header: Acme-Request-Id }}`, `{{ query: request_id }}`, `{{ bodyField: idempotency_key }}` (add `required: true` if a call without it is refused), or `optional` for an `Idempotency-Key` header; `inherent` if a repeat cannot duplicate it; else write `idempotency: unsupported`"
    ))]
    IdempotencyUnknown {
        id: String,
        #[label("no `idempotency:` here")]
        span: Span,
    },

    /// With the openai target: the retry key is a header, which GPT Actions cannot
    /// send, so openapi.openai.json says never to retry.
    ///
    /// GPT Actions send only the headers the platform knows, so a header retry key never
    /// reaches the provider: openapi.openai.json leaves it out and tells the model never to
    /// repeat the call, and when the provider requires the header, it refuses every call
    /// from a GPT Action (the warning says so). The help says what the provider can do
    /// instead (accept the key in the body or the query).
    #[strum_discriminants(strum(props(level = "warn")))]
    #[error(
        "`{id}`: GPT Actions cannot send the `{header}` header, so openapi.openai.json tells the model never to retry this call on its own{refused}"
    )]
    #[diagnostic(help(
        "OpenAI's Actions do not support custom headers. If the provider also accepts the key in the body or the query, name that (`idempotency: {{ bodyField: … }}` or `{{ query: … }}`) and the openai target keeps it; otherwise acknowledge it with `lintAllow: [openai-header-key]` on the operation (or `lint: {{ openai-header-key: allow }}`)"
    ))]
    OpenaiHeaderKey {
        id: String,
        header: String,
        refused: String,
        #[label("a header key")]
        span: Span,
    },

    /// An MCP tool (mcp target) is over the configured bytes (default 8,000, about
    /// 2,000 tokens).
    ///
    /// Every tool's schema is sent to the model with every request: a large one takes
    /// context the conversation needs and tokens on every turn, and some clients cut or
    /// refuse tool lists over their budget.
    ///
    /// With the mcp target, a tool is over `max` bytes of compact JSON (default
    /// 8,000, about 2,000 tokens; `_meta` not counted); it names the three heaviest
    /// parts (an argument, a `$defs` entry, the `outputSchema`, the description).
    /// `explain --list --stats` prints every tool's size.
    #[strum_discriminants(strum(props(level = "warn")))]
    #[error(
        "`{id}`: its MCP tool is {bytes} bytes (about {tokens} tokens), over the {max} configured"
    )]
    McpToolTooLarge {
        id: String,
        bytes: usize,
        tokens: usize,
        max: usize,
        #[label("this operation")]
        span: Span,
        #[help]
        help: String,
    },

    // ---- Diff rules (`connectorgen diff`): what a change between two versions of a
    // manifest does to what the model is told. Lints, so that `lint:` sets their level;
    // `diff` reads the levels of the old side (src/diff.rs says why). ----
    /// An operation that spent no longer says so.
    ///
    /// The old version declared `spends:`, the new one does not: every target stops
    /// telling the model that the call costs the person and that it must ask first, while
    /// the provider still charges. Remove the operation instead, or keep `spends:`.
    #[strum_discriminants(strum(props(level = "deny", diff = "true")))]
    #[error("`{id}`: `spends` was removed: the model is no longer told this call costs the person")]
    #[diagnostic(help(
        "if the call still costs anything, keep `spends:`; if it became free, say so in the description and acknowledge with `lint: {{ spends-removed: allow }}` in the old version"
    ))]
    SpendsRemoved {
        id: String,
        #[label("no `spends:` here any more")]
        span: Span,
    },

    /// The kind of what an operation spends became a cheaper one (money → credits).
    ///
    /// `spends.kind: money` became `credits`: the cost sentence no longer says that the
    /// person's money moves.
    #[strum_discriminants(strum(props(level = "deny", diff = "true")))]
    #[error("`{id}`: `spends.kind` went from `{old}` to `{new}`")]
    #[diagnostic(help(
        "keep `kind: money` while the call moves money; credits are a prepaid balance, not the person's money"
    ))]
    SpendKindCheaper {
        id: String,
        old: &'static str,
        new: &'static str,
        #[label("now `{new}`")]
        span: Span,
    },

    /// An operation's charge became conditional (`spends.when` added).
    ///
    /// The new version adds `spends.when`: the cost sentence now says the call costs
    /// only under a condition, and a model may take the condition as met or not met.
    #[strum_discriminants(strum(props(level = "deny", diff = "true")))]
    #[error("`{id}`: the charge became conditional (`spends.when` added)")]
    #[diagnostic(help(
        "make sure the condition is exact: a model that reads it as not met calls without asking"
    ))]
    SpendConditionAdded {
        id: String,
        #[label("`when` added")]
        span: Span,
    },

    /// An operation's charge is no longer conditional (`spends.when` removed).
    ///
    /// The old version charged only under `spends.when`; the new one says every call
    /// costs. Safer for the person, but a change in what the model is told.
    #[strum_discriminants(strum(props(level = "warn", diff = "true")))]
    #[error("`{id}`: `spends.when` was removed: every call is now said to cost")]
    #[diagnostic(help("check that every call does cost; the model now asks before each one"))]
    SpendConditionRemoved {
        id: String,
        #[label("no `when` any more")]
        span: Span,
    },

    /// The cost note an operation's cost sentence repeats changed.
    ///
    /// `spends.note` is what the model tells the person before asking for a yes: a
    /// reviewer should read the new one.
    #[strum_discriminants(strum(props(level = "warn", diff = "true")))]
    #[error("`{id}`: the cost note changed from {old:?} to {new:?}")]
    #[diagnostic(help("check that the note still states the price the provider charges"))]
    CostNoteChanged {
        id: String,
        old: String,
        new: String,
        #[label("the new note")]
        span: Span,
    },

    /// An operation that asked the person first because it cannot be undone no longer
    /// does (`confirm` removed).
    ///
    /// The old version had `confirm: true` (or was a DELETE without `confirm: false`),
    /// the new one does not: the permanence sentence and the consent requirement are
    /// gone.
    #[strum_discriminants(strum(props(level = "deny", diff = "true")))]
    #[error("`{id}`: `confirm` was removed: the person is no longer asked before a permanent call")]
    #[diagnostic(help(
        "keep `confirm: true` while the call cannot be undone; `confirm: {{ when: … }}` when only some calls are permanent"
    ))]
    ConfirmRemoved {
        id: String,
        #[label("no `confirm` here any more")]
        span: Span,
    },

    /// An operation that was async is no longer async.
    ///
    /// Without `async:`, the model is no longer told to poll instead of resubmitting,
    /// and a slow call that times out tempts it to start (and pay for) a second job.
    #[strum_discriminants(strum(props(level = "deny", diff = "true")))]
    #[error(
        "`{id}` is no longer async: the model is not told to poll `{poll}` instead of resubmitting"
    )]
    #[diagnostic(help(
        "keep `async: {{ pollWith: … }}` while the call returns before its work is done"
    ))]
    AsyncRemoved {
        id: String,
        poll: String,
        #[label("no `async:` here any more")]
        span: Span,
    },

    /// An async operation polls another operation (`pollWith` changed).
    ///
    /// The model follows the job with the poll target: a different one may not name the
    /// job, may not be free, or may be another provider's endpoint.
    #[strum_discriminants(strum(props(level = "deny", diff = "true")))]
    #[error("`{id}`: `pollWith` changed from `{old}` to `{new}`")]
    #[diagnostic(help(
        "check that `{new}` is a free GET that names this job; acknowledge with `lint: {{ poll-target-changed: allow }}` in the old version"
    ))]
    PollTargetChanged {
        id: String,
        old: String,
        new: String,
        #[label("now polls `{new}`")]
        span: Span,
    },

    /// A retry key was removed: the operation now says a retry is safe by its nature
    /// (`inherent`).
    ///
    /// The old version sent a key the provider recognises a retry by; the new one says
    /// repeating the call cannot do it twice, so the model retries without a key.
    #[strum_discriminants(strum(props(level = "deny", diff = "true")))]
    #[error("`{id}`: the retry key `{key}` was removed and a retry is now said to be safe")]
    #[diagnostic(help("keep the key unless repeating the call truly cannot duplicate its effect"))]
    RetryKeyRemoved {
        id: String,
        key: String,
        #[label("now `inherent`")]
        span: Span,
    },

    /// A retry key the provider required became optional.
    ///
    /// With `required: true` a call without the key is refused; once optional, a call
    /// without it goes through and a retry of it can charge twice.
    #[strum_discriminants(strum(props(level = "deny", diff = "true")))]
    #[error("`{id}`: the retry key `{key}` is no longer required")]
    #[diagnostic(help("keep `required: true` while the provider refuses a call without it"))]
    RetryKeyOptional {
        id: String,
        key: String,
        #[label("now optional")]
        span: Span,
    },

    /// A retry key's mechanism changed (another header, a query parameter, a body
    /// field).
    ///
    /// The model sends the key where the manifest says: if the provider does not look
    /// there, every retry is a new request.
    #[strum_discriminants(strum(props(level = "deny", diff = "true")))]
    #[error("`{id}`: the retry key moved from {old} to {new}")]
    #[diagnostic(help(
        "check in the provider's documentation that it recognises a retry by {new}"
    ))]
    RetryKeyChanged {
        id: String,
        old: String,
        new: String,
        #[label("now {new}")]
        span: Span,
    },

    /// An operation that could be retried safely now has `idempotency: unsupported`.
    ///
    /// The model is now told never to repeat the call on its own; for an operation that
    /// spends, a timeout leaves the person not knowing whether they paid.
    #[strum_discriminants(strum(props(level = "deny", diff = "true")))]
    #[error("`{id}`: idempotency went from {old} to unsupported")]
    #[diagnostic(help(
        "if the provider still recognises a retry, keep its key; acknowledge with `lint: {{ idempotency-unsupported: allow }}` in the old version"
    ))]
    IdempotencyUnsupported {
        id: String,
        old: String,
        #[label("no retry is recognised now")]
        span: Span,
    },

    /// An operation (its tool) was removed.
    ///
    /// Every client's saved permission for the tool and every prompt that names it stop
    /// working.
    #[strum_discriminants(strum(props(level = "deny", diff = "true")))]
    #[error("`{id}` was removed")]
    #[diagnostic(help(
        "announce the removal to the connector's users; acknowledge with `lint: {{ operation-removed: allow }}` in the old version"
    ))]
    OperationRemoved {
        id: String,
        #[label("this operation is not in the new version")]
        span: Span,
    },

    /// An operation (its tool) was renamed: the same method and path under another id.
    ///
    /// A tool's name is what clients save permissions under and prompts call it by; a
    /// rename breaks both, as a removal does.
    #[strum_discriminants(strum(props(level = "deny", diff = "true")))]
    #[error("`{old}` was renamed to `{id}`")]
    #[diagnostic(help(
        "keep the old id (`id:` is the tool name); acknowledge with `lint: {{ operation-renamed: allow }}` in the old version"
    ))]
    OperationRenamed {
        id: String,
        old: String,
        #[label("was `{old}`")]
        span: Span,
    },

    /// An operation has a new required argument.
    ///
    /// A client or a saved prompt that calls the tool as before is refused.
    #[strum_discriminants(strum(props(level = "deny", diff = "true")))]
    #[error("`{id}`: argument `{argument}` is now required")]
    #[diagnostic(help("make the argument optional, with a default the provider applies"))]
    RequiredArgumentAdded {
        id: String,
        argument: String,
        #[label("this operation")]
        span: Span,
    },

    /// An operation's argument was removed.
    ///
    /// A client that still sends it is refused (tools' input schemas allow no unknown
    /// argument), and a prompt that relied on it silently loses it.
    #[strum_discriminants(strum(props(level = "deny", diff = "true")))]
    #[error("`{id}`: argument `{argument}` was removed")]
    #[diagnostic(help("keep the argument, or announce the change"))]
    ArgumentRemoved {
        id: String,
        argument: String,
        #[label("this operation")]
        span: Span,
    },

    /// An operation's argument was renamed: the same HTTP parameter under another
    /// argument name.
    ///
    /// A client or a prompt that passes the old name is refused.
    #[strum_discriminants(strum(props(level = "deny", diff = "true")))]
    #[error("`{id}`: argument `{old}` was renamed to `{argument}`")]
    #[diagnostic(help("keep the old name (`args:` renames an argument)"))]
    ArgumentRenamed {
        id: String,
        old: String,
        argument: String,
        #[label("this operation")]
        span: Span,
    },

    /// An operation that only read now changes something (GET became another method,
    /// or it lost its read-only declaration).
    ///
    /// Clients auto-approve read-only tools (`readOnlyHint`); a read that became a write
    /// keeps that approval.
    #[strum_discriminants(strum(props(level = "deny", diff = "true")))]
    #[error("`{id}` was a read and is now a write ({old} → {new})")]
    #[diagnostic(help(
        "give the write its own id, so that no saved approval of the read covers it"
    ))]
    ReadBecameWrite {
        id: String,
        old: String,
        new: String,
        #[label("now {new}")]
        span: Span,
    },

    /// A new operation that spends was added.
    ///
    /// Not wrong, but a reviewer should read its cost sentence and its retry rule.
    #[strum_discriminants(strum(props(level = "warn", diff = "true")))]
    #[error("new paid operation `{id}`")]
    #[diagnostic(help(
        "review its `spends:`, `idempotency:` and `async:`; `connectorgen explain {id}` shows what the model reads"
    ))]
    NewPaidOperation {
        id: String,
        #[label("spends")]
        span: Span,
    },

    /// A new operation that cannot be undone was added.
    ///
    /// Not wrong, but a reviewer should read its permanence sentence.
    #[strum_discriminants(strum(props(level = "warn", diff = "true")))]
    #[error("new permanent operation `{id}`")]
    #[diagnostic(help(
        "review its `confirm:`; `connectorgen explain {id}` shows what the model reads"
    ))]
    NewPermanentOperation {
        id: String,
        #[label("cannot be undone")]
        span: Span,
    },

    /// The generated safety sentences of an operation changed in a target.
    ///
    /// The cost, permanence, polling and retry sentences connectorgen writes after the
    /// author's description are what the model obeys; the finding shows them before and
    /// after.
    #[strum_discriminants(strum(props(level = "warn", diff = "true")))]
    #[error("`{id}`: what the model reads in {files} changed:\n  before: {old}\n  after:  {new}")]
    #[diagnostic(help("read the new sentences as the model will; `connectorgen explain {id}`"))]
    SafetyTextChanged {
        id: String,
        files: String,
        old: String,
        new: String,
        #[label("this operation")]
        span: Span,
    },

    /// The HTTP request of an exposed operation changed: its method or path.
    ///
    /// `serve` sends the call to the new place: in base mode, the provider's document
    /// changed under the manifest, as oasdiff would call breaking.
    #[strum_discriminants(strum(props(level = "deny", diff = "true")))]
    #[error("`{id}`: the request went from `{old}` to `{new}`")]
    #[diagnostic(help("check that the provider serves the operation at `{new}`"))]
    HttpRouteChanged {
        id: String,
        old: String,
        new: String,
        #[label("now `{new}`")]
        span: Span,
    },

    /// An HTTP parameter or body field of an exposed operation was removed, became
    /// required, or moved (another location).
    ///
    /// The same list oasdiff calls breaking, limited to the operations the manifest
    /// exposes: requests built as before are refused or lose a value.
    #[strum_discriminants(strum(props(level = "deny", diff = "true")))]
    #[error("`{id}`: {change}")]
    #[diagnostic(help(
        "check the provider's document; a client that calls as before may be refused"
    ))]
    HttpInputChanged {
        id: String,
        change: String,
        #[label("this operation")]
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
    pub(crate) fn in_unproven_file(&self) -> bool {
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

    /// The rule with this code, lint or not.
    pub(crate) fn from_code(code: &str) -> Option<Rule> {
        code.parse().ok()
    }

    /// The lint with this id: a rule that declares a level.
    pub(crate) fn lint_from_id(id: &str) -> Option<Rule> {
        Rule::from_code(id).filter(|r| r.is_lint())
    }

    /// Every lint, in declaration order (the order of SARIF's rules and the schema's enum).
    pub fn lints() -> impl Iterator<Item = Rule> {
        Rule::VARIANTS.iter().copied().filter(|r| r.is_lint())
    }

    pub fn is_lint(self) -> bool {
        self.lint_level().is_some()
    }

    /// A lint's default level; `None` for a rule that is not a lint.
    pub(crate) fn lint_level(self) -> Option<Level> {
        self.get_str("level")
            .map(|l| l.parse().expect("a lint declares allow, warn or deny"))
    }

    /// A retired lint: its id is still accepted, and nothing reports it.
    pub fn is_retired(self) -> bool {
        self.get_str("retired").is_some()
    }

    /// A diff rule: reported by `connectorgen diff` alone, never by `check`.
    pub fn is_diff(self) -> bool {
        self.get_str("diff").is_some()
    }

    /// Every diff rule, in declaration order.
    pub fn diff_rules() -> impl Iterator<Item = Rule> {
        Rule::VARIANTS.iter().copied().filter(|r| r.is_diff())
    }

    /// How findings of a rule that is not a lint are reported: `error` unless it
    /// declares otherwise.
    pub fn severity(self) -> &'static str {
        self.get_str("severity").unwrap_or("error")
    }

    /// The first paragraph of the declaration's doc, on one line.
    pub fn summary(self) -> String {
        let doc = self.get_documentation().unwrap_or_default();
        let first = doc.split("\n\n").next().unwrap_or_default();
        first.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    /// The rest of the declaration's doc (empty when the summary says it all), as
    /// written: paragraphs and line breaks kept.
    pub(crate) fn explanation(self) -> &'static str {
        let doc = self.get_documentation().unwrap_or_default();
        doc.split_once("\n\n")
            .map_or("", |(_, rest)| rest.trim_end())
    }
}

/// A lint's level: `allow` reports nothing, `warn` a warning, `deny` an error.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, strum::EnumString, strum::IntoStaticStr, strum::VariantArray,
)]
#[strum(serialize_all = "lowercase")]
pub enum Level {
    Allow,
    Warn,
    Deny,
}

impl Level {
    pub fn as_str(self) -> &'static str {
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

impl Severity {
    /// The word the machine formats use: `error` or `warning` (as serde writes it).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Error => "error",
            Self::Warning => "warning",
        }
    }
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
    pub(crate) fn in_base(self) -> Self {
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
    /// The files of the base OpenAPI document (its root first), when the manifest names
    /// one and findings may point into it, each with where it starts in the spans'
    /// offsets (`next_start`).
    base: Vec<(NamedSource<Arc<String>>, usize)>,
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
            base: Vec::new(),
            items,
        }
    }

    /// The same findings, with the files of a multi-file base document (the root first):
    /// a `Source::Base` span points into the file whose range of offsets holds it.
    pub(crate) fn with_base_files(mut self, files: Vec<(String, Arc<String>)>) -> Self {
        let mut start = 0;
        self.base = Vec::with_capacity(files.len());
        for (name, text) in files {
            let len = text.len();
            self.base.push((NamedSource::new(name, text), start));
            start = next_start(start, len);
        }
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

    /// Every file of the base document: name, text, and where its offsets start.
    pub(crate) fn base_files(&self) -> impl Iterator<Item = (&str, &str, usize)> {
        self.base
            .iter()
            .map(|(source, start)| (source.name(), source.inner().as_str(), *start))
    }

    pub fn count(&self, severity: Severity) -> usize {
        self.items.iter().filter(|f| f.severity == severity).count()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

/// Where the next file of a multi-file base document starts in the spans' offsets, after
/// a file that starts at `start` and has `len` bytes: one past its end, so that a span
/// at the very end of a file still says which file it is in.
pub(crate) fn next_start(start: usize, len: usize) -> usize {
    start + len + 1
}

/// The first label's offset of a diagnostic.
pub(crate) fn first_offset(d: &Diagnostic) -> Option<usize> {
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
