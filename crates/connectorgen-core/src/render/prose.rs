//! Connector → the prose a model and a person read: each operation's model-facing
//! description, `llms.txt` and `descriptions.md`, through the minijinja templates in
//! `templates/` (embedded in the binary).
//!
//! Takes: the validated connector. Returns: strings. Each operation becomes a template
//! value once per render (`operation_values`), shared by every template that reads it.
//! Must never: evaluate text from the manifest as template code (values in a context
//! are data, never re-parsed), or let it forge Markdown structure — every piece of
//! user text goes through `md_inline` (one line, line-leading syntax escaped) or
//! `fence` (verbatim inside a code fence it cannot close); nor run a template without
//! bounds: every render draws on the run's fuel and stops at `Limits::max_output`.

use std::cell::{Cell, RefCell};
use std::sync::{Arc, LazyLock, OnceLock};

use minijinja::value::{Enumerator, Object, Serde, Value};
use minijinja::{AutoEscape, Environment, UndefinedBehavior, context, syntax::SyntaxConfig};

use super::RenderError;
use crate::model::{
    Connector, Idempotency, KeyLocation, Names as _, Operation, OperationCredential, Payer,
    Unsupported,
};
use crate::templates::{Limits, Sources};

/// The template environment, built once per run.
pub(super) struct Prose {
    /// In a cell only so each render can be given the fuel the earlier ones left.
    env: RefCell<Environment<'static>>,
    /// Kept so an error can show the template's own line.
    sources: Sources,
    limits: Limits,
    /// What is left of `limits.fuel`: the budget is for the run, not for each render,
    /// or a manifest of many operations would multiply it.
    fuel_left: Cell<u64>,
}

/// What templates see of one operation: its names and text and the safety layer. The
/// HTTP description (parameters, bodies, responses) is not part of it: the prose never
/// needed it, and converting it was the costliest part of every render.
///
/// A minijinja object that answers each field lookup with a match on the key, its values
/// made once (a lookup clones a reference): converting the operation through serde into
/// a map, and a map per operation for the file templates, was most of the prose's cost.
/// It shows templates exactly what that conversion showed (the test
/// `operation_object_matches_serde` holds it to `TemplateOperation`): the same keys in
/// the same order, the same values.
#[derive(Debug)]
struct OperationObject {
    /// In the order of `FIELDS`, except `retry`, which is made on first use: most
    /// templates read it only for the operations that spend or run async.
    values: [Value; FIELDS.len()],
    retry: Retry,
    retry_value: OnceLock<Value>,
}

/// The keys of an operation value, in the order its fields were serialised.
const FIELDS: [&str; 14] = [
    "id",
    "method",
    "path",
    "pathParams",
    "server",
    "summary",
    "description",
    "spends",
    "async",
    "idempotency",
    "retry",
    "confirm",
    "confirmWhen",
    "read",
];
const RETRY: usize = 10;

/// The empty `pathParams`, shared: a list made per operation is an allocation each.
static NO_PATH_PARAMS: LazyLock<Value> = LazyLock::new(|| Value::from(Vec::<Value>::new()));

impl OperationObject {
    fn new(
        connector: &Connector,
        reads: &GetsByPath<'_>,
        op: &Operation,
        flavour: Flavour,
    ) -> Self {
        let optional = |v: Option<Value>| v.unwrap_or(Value::from(()));
        OperationObject {
            values: [
                Value::from(op.id.as_str()),
                Value::from(op.method.as_str()),
                Value::from(op.path.as_str()),
                if op.path_params.is_empty() {
                    // Most operations' (lists, creates): one list for all of them.
                    NO_PATH_PARAMS.clone()
                } else {
                    op.path_params
                        .iter()
                        .map(String::as_str)
                        .map(Value::from)
                        .collect()
                },
                optional(
                    connector
                        .document
                        .other_server(op, &connector.service.public_url)
                        .map(Value::from),
                ),
                Value::from(Arc::clone(&op.summary)),
                Value::from(Arc::clone(&op.description)),
                optional(op.spends.as_ref().map(|s| Value::from(Serde(s)))),
                optional(op.async_.as_ref().map(|a| Value::from(Serde(a)))),
                Value::from(short_form(&op.idempotency)),
                // Never read: `retry` answers from `retry_value`.
                Value::UNDEFINED,
                Value::from(op.confirm),
                optional(op.confirm_when.as_deref().map(Value::from)),
                Value::from(op.read),
            ],
            retry: Retry::new(connector, reads, op, flavour),
            retry_value: OnceLock::new(),
        }
    }

    fn field(&self, key: &str) -> Option<Value> {
        let at = FIELDS.iter().position(|f| *f == key)?;
        Some(if at == RETRY {
            self.retry_value
                .get_or_init(|| Value::from(Serde(&self.retry)))
                .clone()
        } else {
            self.values[at].clone()
        })
    }
}

impl Object for OperationObject {
    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        self.field(key.as_str()?)
    }

    fn get_value_by_str(self: &Arc<Self>, key: &str) -> Option<Value> {
        self.field(key)
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::Str(&FIELDS)
    }

    fn enumerator_len(self: &Arc<Self>) -> Option<usize> {
        Some(FIELDS.len())
    }
}

/// The operation's fields as `TemplateOperation` gave them through serde: what
/// `OperationObject` must keep showing templates (the test below compares the two).
#[cfg(test)]
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct TemplateOperation<'a> {
    id: &'a str,
    method: crate::model::Method,
    path: &'a str,
    path_params: &'a [String],
    /// Where it is called when that is not `service.publicUrl` (llms.txt's Base URL).
    server: Option<String>,
    summary: &'a str,
    description: &'a str,
    spends: &'a Option<crate::model::Spends>,
    #[serde(rename = "async")]
    async_: &'a Option<Box<crate::model::Async>>,
    /// `optional` or `required` (a key, by whether the provider requires it),
    /// `inherent` or `unsupported`.
    idempotency: &'static str,
    /// The retry rule the model reads, as this target can follow it.
    retry: Retry,
    /// It cannot be undone: the person's yes comes first.
    confirm: bool,
    /// Only calls under this condition cannot be undone (`confirm.when`).
    confirm_when: Option<&'a str>,
    /// A free, side-effect-free read: a GET, or `read: true`.
    read: bool,
}

/// Which target's model reads a description: their retry rules differ where a target
/// cannot send the key (GPT Actions send no custom header) or names it otherwise (an
/// MCP argument).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Flavour {
    /// openapi.json, openapi.3.0.json, descriptions.md, llms.txt.
    Document,
    Mcp,
    Openai,
    /// The mcp target's tools as `connectorgen serve` serves them: the server sends the
    /// retry key itself and takes the key argument out of the served `inputSchema`, so
    /// the retry rule is "call again with the same arguments", not "send a key".
    Served,
}

/// What the templates see of an operation's retry rule.
#[expect(
    clippy::struct_excessive_bools,
    reason = "each flag is a template variable of its own (docs/templates.md)"
)]
#[derive(Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct Retry {
    /// `key`, `inherent` or `unsupported`: the rule the model follows.
    rule: &'static str,
    /// With a key: what the model sets (the header, query parameter or body field; the
    /// argument in MCP) and how prose names it ("the `Acme-Request-Id` header").
    name: Option<String>,
    send: Option<String>,
    required: bool,
    /// Without a key: the free read that shows whether a call went through (the list of
    /// jobs, the thing a change settles on, the collection the call adds to), if any.
    check_with: Option<String>,
    /// The openai target writes a header key's operation with the never-repeat rule.
    header_dropped: bool,
    /// Without a key: nothing says whether the provider recognises a retry (base mode's
    /// default over a document that declares no key), as opposed to `unsupported`,
    /// which says it does not.
    unknown: bool,
    /// With a key: the server that executes the call sends it (`connectorgen serve`),
    /// so the model repeats the call unchanged instead; `send` names the provider's own
    /// header, query parameter or body field.
    served: bool,
}

impl Retry {
    fn new(
        connector: &Connector,
        reads: &GetsByPath<'_>,
        op: &Operation,
        flavour: Flavour,
    ) -> Self {
        let unsupported = |header_dropped, unknown| Retry {
            rule: "unsupported",
            name: None,
            send: None,
            required: false,
            check_with: check_with(reads, op).map(str::to_string),
            header_dropped,
            unknown,
            served: false,
        };
        match &op.idempotency {
            Idempotency::Key(key)
                if flavour == Flavour::Openai && key.location == KeyLocation::Header =>
            {
                unsupported(true, false)
            }
            Idempotency::Key(key) => {
                // `serve` sends the key only where the mapping has a key argument of its
                // own (not a field inside a whole-body argument, which the model fills).
                let served =
                    flavour == Flavour::Served && super::mcp::serve_sends_key(connector, op);
                // The name comes from the provider's document: inside a code span, it
                // must not close the span and forge Markdown around it.
                let (name, send) =
                    if flavour == Flavour::Mcp || flavour == Flavour::Served && !served {
                        super::mcp::key_sentence(connector, op, key)
                    } else {
                        let code = md_code(&key.name);
                        let send = match key.location {
                            KeyLocation::Header => format!("the `{code}` header"),
                            KeyLocation::Query => format!("the `{code}` query parameter"),
                            KeyLocation::Body => format!("the `{code}` body field"),
                        };
                        (key.name.clone(), send)
                    };
                Retry {
                    rule: "key",
                    name: Some(name),
                    send: Some(send),
                    required: key.required,
                    check_with: None,
                    header_dropped: false,
                    unknown: false,
                    served,
                }
            }
            Idempotency::Inherent => Retry {
                rule: "inherent",
                name: None,
                send: None,
                required: false,
                check_with: None,
                header_dropped: false,
                unknown: false,
                served: false,
            },
            Idempotency::Unsupported(why) => unsupported(false, *why == Unsupported::Unknown),
        }
    }
}

/// The free read that shows whether a call of `op` went through: for a job, the list of
/// jobs; for a change, its poll target (it reads the thing that changes); otherwise an
/// exposed read on the call's own path (the collection it adds to) or on its parent
/// (`POST /payments/{id}/capture` → `GET /payments/{id}`).
pub(super) fn check_with<'a>(reads: &GetsByPath<'a>, op: &'a Operation) -> Option<&'a str> {
    match &op.async_ {
        Some(a) if a.returns == crate::model::Returns::Change => return Some(&a.poll_with),
        Some(a) => return a.list_with.as_deref(),
        None => {}
    }
    let parent = op
        .path
        .rsplit_once('/')
        .filter(|(_, last)| !last.starts_with('{'))
        .map(|(parent, _)| parent);
    [Some(op.path.as_str()), parent]
        .into_iter()
        .flatten()
        .find_map(|path| reads.0.get(path).copied())
}

/// The first exposed read (a GET, or `read: true`) of each path, by path: what
/// `check_with` looks up for every operation (a scan of the operations for each was
/// quadratic in their number).
pub(super) struct GetsByPath<'a>(foldhash::HashMap<&'a str, &'a str>);

impl<'a> GetsByPath<'a> {
    pub(super) fn new(connector: &'a Connector) -> Self {
        let mut map = foldhash::HashMap::default();
        for o in connector.operations.iter().filter(|o| o.read) {
            map.entry(o.path.as_str()).or_insert(o.id.as_str());
        }
        GetsByPath(map)
    }
}

#[cfg(test)]
impl<'a> TemplateOperation<'a> {
    fn new(
        connector: &'a Connector,
        reads: &GetsByPath<'a>,
        op: &'a Operation,
        flavour: Flavour,
    ) -> Self {
        TemplateOperation {
            id: &op.id,
            method: op.method,
            path: &op.path,
            path_params: &op.path_params,
            server: connector
                .document
                .other_server(op, &connector.service.public_url),
            summary: &op.summary,
            description: &op.description,
            spends: &op.spends,
            async_: &op.async_,
            idempotency: short_form(&op.idempotency),
            retry: Retry::new(connector, reads, op, flavour),
            confirm: op.confirm,
            confirm_when: op.confirm_when.as_deref(),
            read: op.read,
        }
    }
}

/// The headers the exposed operations' 429 responses declare for when to try again
/// (a name with `retry`, `reset` or `wait` in it: `Retry-After`, `X-RateLimit-Reset`), in
/// order of first appearance; empty when none does or `Retry-After` alone does, and
/// llms.txt then names `Retry-After` (the standard header, "how long").
fn rate_limit_headers(connector: &Connector) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    for op in &connector.operations {
        let response = op.http.get("responses").and_then(|r| r.get("429"));
        let response = match response
            .and_then(|r| r.get("$ref"))
            .and_then(|r| r.as_str())
        {
            Some(reference) => connector.document.resolve(reference),
            None => response,
        };
        let headers = response
            .and_then(|r| r.get("headers"))
            .and_then(|h| h.as_object());
        for name in headers.into_iter().flatten().map(|(name, _)| name) {
            let lower = name.to_ascii_lowercase();
            let says_when = ["retry", "reset", "wait"].iter().any(|w| lower.contains(w));
            if says_when && !found.iter().any(|f| f.eq_ignore_ascii_case(name)) {
                found.push(name.clone());
            }
        }
    }
    if let [only] = found.as_slice()
        && only.eq_ignore_ascii_case("retry-after")
    {
        found.clear();
    }
    found
}

/// The short form naming the operation's mechanism, as templates compare it.
fn short_form(idempotency: &Idempotency) -> &'static str {
    match idempotency {
        Idempotency::Key(key) if key.required => "required",
        Idempotency::Key(_) => "optional",
        Idempotency::Inherent => "inherent",
        Idempotency::Unsupported(_) => "unsupported",
    }
}

/// Each operation as the template value `operation`, made once per render: the
/// description templates and both file templates share it.
pub(super) fn operation_values(connector: &Connector, reads: &GetsByPath<'_>) -> Vec<Value> {
    connector
        .operations
        .iter()
        .map(|op| operation_value(connector, reads, op, Flavour::Document))
        .collect()
}

/// Whether `flavour` reads operation `op`'s retry rule otherwise than the documents do:
/// GPT Actions cannot send a header key, and MCP names every key by its argument.
pub(super) fn differs(op: &Operation, flavour: Flavour) -> bool {
    match flavour {
        Flavour::Document => false,
        Flavour::Mcp | Flavour::Served => op.key().is_some(),
        Flavour::Openai => op.key().is_some_and(|k| k.location == KeyLocation::Header),
    }
}

/// Operation `op` as the template value `operation` for `flavour`.
pub(super) fn operation_value(
    connector: &Connector,
    reads: &GetsByPath<'_>,
    op: &Operation,
    flavour: Flavour,
) -> Value {
    Value::from_object(OperationObject::new(connector, reads, op, flavour))
}

/// What a file template sees of one operation: every field of the operation value plus
/// `modelDescription` and `idempotencyKey`, answered by the operation's own value (not
/// converted again). Its keys come in sorted order, as in the minijinja map that
/// `#[serde(flatten)]` of the operation and the two fields used to give (see the test
/// below).
///
/// `modelDescription` is read from the descriptions the file is rendered with when a
/// template asks for it, not copied into each view: a copy of every description held
/// beside the rest of the render is 2.8 MB at 10,000 operations, at the build's peak.
#[derive(Debug)]
struct FileOperation {
    op: Value,
    descriptions: Arc<Vec<String>>,
    /// The operation's place in `descriptions`.
    index: usize,
    idempotency_key: bool,
}

/// The keys of `FileOperation`: `FIELDS` and its two own, sorted as minijinja sorts
/// string keys (by their bytes).
const FILE_FIELDS: [&str; 16] = [
    "async",
    "confirm",
    "confirmWhen",
    "description",
    "id",
    "idempotency",
    "idempotencyKey",
    "method",
    "modelDescription",
    "path",
    "pathParams",
    "read",
    "retry",
    "server",
    "spends",
    "summary",
];

impl FileOperation {
    fn field(&self, key: &str) -> Option<Value> {
        match key {
            "modelDescription" => Some(Value::from(self.descriptions[self.index].as_str())),
            "idempotencyKey" => Some(Value::from(self.idempotency_key)),
            _ => self.op.as_object()?.get_value_by_str(key),
        }
    }
}

impl Object for FileOperation {
    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        self.field(key.as_str()?)
    }

    fn get_value_by_str(self: &Arc<Self>, key: &str) -> Option<Value> {
        self.field(key)
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::Str(&FILE_FIELDS)
    }

    fn enumerator_len(self: &Arc<Self>) -> Option<usize> {
        Some(FILE_FIELDS.len())
    }
}

fn operation_view(
    op: &Value,
    descriptions: &Arc<Vec<String>>,
    index: usize,
    idempotency_key: bool,
) -> Value {
    Value::from_object(FileOperation {
        op: op.clone(),
        descriptions: Arc::clone(descriptions),
        index,
        idempotency_key,
    })
}

impl Prose {
    /// The environment with `sources` (template name → text; see `templates.rs`), to
    /// render within `limits`.
    pub(super) fn new(sources: &Sources, limits: Limits) -> Result<Self, RenderError> {
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        env.set_auto_escape_callback(|_| AutoEscape::None);
        let syntax = SyntaxConfig::builder()
            .trim_blocks(true)
            .lstrip_blocks(true)
            .keep_trailing_newline(true)
            .build()
            .map_err(|e| RenderError::new("(syntax)", None, e))?;
        env.set_syntax(syntax);
        env.add_filter("oneline", oneline);
        env.add_filter("md_inline", md_inline);
        env.add_filter("md_code", md_code);
        env.add_filter("fence", fence);
        env.add_filter("sentence", sentence);
        env.add_filter("md_url", md_url);
        env.add_filter("duration", duration);
        env.add_filter("a", |text: &str| crate::english::with_article(text));
        for (name, source) in sources {
            // The built-in templates nest a few levels (nesting.rs's tests check each),
            // and scanning them was 5% of a 10-operation build: only text that is not
            // one of them, a user's override, is measured.
            let builtin = crate::templates::TEMPLATES
                .iter()
                .any(|t| t.name == name && t.source == source);
            // Before minijinja parses it: an unguarded nesting overflows the stack there.
            if let Some(at) = (!builtin)
                .then(|| super::nesting::too_deep(source))
                .flatten()
            {
                return Err(RenderError {
                    template: name.clone(),
                    message: format!(
                        "an expression nests more than {} levels deep here (each operator, filter, lookup and bracket adds one); split it into steps with `{{% set %}}`",
                        super::nesting::MAX_DEPTH
                    ),
                    source_text: Some(std::sync::Arc::new(miette::NamedSource::new(
                        name,
                        source.clone(),
                    ))),
                    span: Some(miette::SourceSpan::from((at, 1))),
                });
            }
            env.add_template_owned(name.clone(), source.clone())
                .map_err(|e| RenderError::new(name, Some(source), e))?;
        }
        Ok(Prose {
            env: RefCell::new(env),
            sources: sources.clone(),
            limits,
            fuel_left: Cell::new(limits.fuel),
        })
    }

    fn render(&self, name: &'static str, ctx: Value) -> Result<String, RenderError> {
        let left = self.fuel_left.get();
        self.env.borrow_mut().set_fuel(Some(left));
        let env = self.env.borrow();
        let mut out = BoundedText::new(self.limits.max_output);
        // The memory it may hold, at fuel's price: minijinja copies a list made by
        // repeated `+` before it charges fuel for it (memory.rs).
        let rendered = super::memory::bounded(name, super::memory::for_fuel(left), || {
            env.get_template(name)
                .and_then(|t| t.render_captured_to(ctx, &mut out))
                .map(|captured| captured.state().fuel_levels())
        });
        match rendered {
            Ok(levels) => {
                let used = levels.map_or(0, |(used, _)| used);
                self.fuel_left.set(left.saturating_sub(used));
                // minijinja writes whole `str`s, so this is never lossy.
                Ok(String::from_utf8(out.bytes)
                    .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
            }
            Err(e) => {
                let out_of_fuel = e.kind() == minijinja::ErrorKind::OutOfFuel;
                let mut error = RenderError::new(name, self.sources.get(name), e);
                if out.overflowed {
                    let max = self.limits.max_output;
                    error.message = format!(
                        "its output passed the limit of {} ({max} bytes) for one rendered text; \
                         if the template is legitimate, raise the limit with \
                         --max-template-output {}",
                        crate::input::human(max),
                        crate::input::suggest_limit(max),
                    );
                } else if out_of_fuel {
                    let fuel = self.limits.fuel;
                    error.message = format!(
                        "it ran out of template fuel: the run's budget of {fuel} (work and \
                         memory; see --template-fuel) is used up, by a loop that does not end \
                         or by far more work than the outputs need; if the template is \
                         legitimate, raise the budget with --template-fuel {}",
                        fuel.saturating_mul(2).max(1),
                    );
                }
                Err(error)
            }
        }
    }

    /// The text the model reads as the operation's description. `op` is the operation's
    /// template value (`operation_values`).
    pub(super) fn description(&self, op: &Value) -> Result<String, RenderError> {
        let text = self.render("description.j2", context! { operation => op })?;
        Ok(text.trim_end().to_string())
    }

    /// The generated cost and polling sentences alone, in their shortest form (for
    /// targets with tight length limits); empty when the operation has neither.
    pub(super) fn compact_notice(&self, op: &Value) -> Result<String, RenderError> {
        let text = self.render("description.compact.j2", context! { operation => op })?;
        Ok(text.trim().to_string())
    }

    /// The context of both file templates (llms.txt and descriptions.md), built once.
    pub(super) fn file_context(
        connector: &Connector,
        op_values: &[Value],
        descriptions: &Arc<Vec<String>>,
        manifest_name: &str,
    ) -> Value {
        let operations: Vec<Value> = connector
            .operations
            .iter()
            .zip(op_values)
            .enumerate()
            .map(|(i, (op, value))| operation_view(value, descriptions, i, op.key().is_some()))
            .collect();
        // The sections of llms.txt, picked out once here: a `selectattr` over every
        // operation per section was most of what the template did besides printing.
        // The same values as in `operations`, in its order.
        let pick = |keep: &dyn Fn(&Operation) -> bool| -> Vec<Value> {
            connector
                .operations
                .iter()
                .zip(&operations)
                .filter(|(op, _)| keep(op))
                .map(|(_, view)| view.clone())
                .collect()
        };
        let payer = |op: &Operation| op.spends.as_ref().map(|s| s.payer);
        let async_operations = pick(&|op| op.async_.is_some());
        let person_charges = pick(&|op| payer(op) == Some(Payer::Person));
        let customer_charges = pick(&|op| payer(op) == Some(Payer::Customer));
        let permanent_operations = pick(&|op| op.confirm);
        // The operations whose own `security` asks for another credential or none, and
        // every variable `serve` reads a credential from (the connection's parts, then
        // those operations'), each once.
        let mut own_credentials: Vec<serde_json::Value> = Vec::new();
        let mut variables: Vec<&str> = Vec::new();
        for part in &connector.auth.parts {
            if !variables.contains(&part.env.as_str()) {
                variables.push(&part.env);
            }
        }
        for op in &connector.operations {
            let parts: &[crate::model::CredentialPart] = match connector.auth.operation(&op.id) {
                None => continue,
                Some(OperationCredential::None) => &[],
                Some(OperationCredential::Parts(parts)) => parts,
            };
            for part in parts {
                if !variables.contains(&part.env.as_str()) {
                    variables.push(&part.env);
                }
            }
            own_credentials.push(serde_json::json!({ "id": op.id, "parts": parts }));
        }
        context! {
            service => Serde(&connector.service),
            auth => Serde(&connector.auth),
            tokenPrefix => Serde(&connector.auth.token_prefixes.first()),
            operations => operations,
            asyncOperations => async_operations,
            personCharges => person_charges,
            customerCharges => customer_charges,
            permanentOperations => permanent_operations,
            manifest => manifest_name,
            rateLimitHeaders => rate_limit_headers(connector),
            ownCredentials => Serde(&own_credentials),
            credentialVariables => Serde(&variables),
        }
    }

    /// `llms.txt`, from the `file_context`.
    pub(super) fn llms_txt(&self, ctx: &Value) -> Result<String, RenderError> {
        self.render("llms.txt.j2", ctx.clone()).map(tidy)
    }

    /// `descriptions.md`, from the `file_context`.
    pub(super) fn descriptions_md(&self, ctx: &Value) -> Result<String, RenderError> {
        // Not `tidy`: the fenced descriptions must stay byte-exact, blank lines included.
        // The text ends in place rather than through `format!`, which copied the whole
        // file (3.7 MB at 10,000 operations) into a string grown by doubling.
        let mut text = self.render("descriptions.md.j2", ctx.clone())?;
        text.truncate(text.trim_end().len());
        text.push('\n');
        Ok(text)
    }
}

/// A render's output, refused past `max` bytes: the render then stops with a write
/// error, so a runaway template is stopped before its text fills memory.
struct BoundedText {
    bytes: Vec<u8>,
    max: u64,
    overflowed: bool,
}

impl BoundedText {
    fn new(max: u64) -> Self {
        BoundedText {
            bytes: Vec::new(),
            max,
            overflowed: false,
        }
    }
}

impl std::io::Write for BoundedText {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if (self.bytes.len() + buf.len()) as u64 > self.max {
            self.overflowed = true;
            return Err(std::io::Error::other("output limit reached"));
        }
        let before = self.bytes.capacity();
        self.bytes.extend_from_slice(buf);
        // The text is bounded by `max`; the render's memory bound is for the rest.
        super::memory::exempt(self.bytes.capacity() - before);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Exactly one trailing newline, no runs of blank lines: templates stay readable
/// without whitespace-control noise, and files stay byte-stable.
fn tidy(text: String) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank_run = 0;
    for line in text.trim_end().lines() {
        let line = line.trim_end();
        if line.is_empty() {
            blank_run += 1;
            if blank_run > 1 {
                continue;
            }
        } else {
            blank_run = 0;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// Folds every run of whitespace (newlines included) into one space.
pub(super) fn oneline(text: &str) -> String {
    // Most text is one line already: copied as it is, without splitting it into words
    // and joining them again (the filters ran 25,000 times at 10,000 operations).
    if is_folded(text) {
        return text.to_string();
    }
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether `oneline` would give `text` back unchanged: no whitespace but single spaces
/// between words (whitespace as `split_whitespace` sees it, Unicode's included).
fn is_folded(text: &str) -> bool {
    let mut after_space = true;
    for c in text.chars() {
        if c == ' ' {
            if after_space {
                return false;
            }
            after_space = true;
        } else if c.is_whitespace() {
            return false;
        } else {
            after_space = false;
        }
    }
    !after_space || text.is_empty()
}

/// One line of Markdown text that cannot start a block: folded to one line, and a
/// leading character that would open a heading, quote, list, fence, table, HTML block
/// or thematic break is backslash-escaped (valid CommonMark; it renders as itself).
pub(super) fn md_inline(text: &str) -> String {
    let line = oneline(text);
    let mut chars = line.char_indices();
    let Some((_, first)) = chars.next() else {
        return line;
    };
    if "#>+-*=|~`_<[!".contains(first) {
        return format!("\\{line}");
    }
    if first.is_ascii_digit() {
        // An ordered-list marker is digits then `.` or `)`: escape that punctuation.
        let digits = line
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(line.len());
        if let Some(p @ ('.' | ')')) = line[digits..].chars().next() {
            return format!("{}\\{p}{}", &line[..digits], &line[digits + 1..]);
        }
    }
    line
}

/// The text with a full stop added unless it already ends a sentence (or was cut
/// short with "…", as the openai target cuts a long note).
pub(super) fn sentence(text: &str) -> String {
    let text = text.trim_end();
    if text.is_empty() || text.ends_with(['.', '!', '?', ':', ';', '…']) {
        text.to_string()
    } else {
        format!("{text}.")
    }
}

/// A typical wait in the units a person says it in: seconds under two minutes (`90s`),
/// minutes under an hour (`10 min`), then hours and minutes (`1 h`, `1 h 30 min`),
/// rounded to the minute: "about 3600s" reads as a number to work out.
pub(super) fn duration(seconds: u64) -> String {
    if seconds < 120 {
        return format!("{seconds}s");
    }
    let minutes = (seconds + 30) / 60;
    let (hours, minutes) = (minutes / 60, minutes % 60);
    match (hours, minutes) {
        (0, m) => format!("{m} min"),
        (h, 0) => format!("{h} h"),
        (h, m) => format!("{h} h {m} min"),
    }
}

/// A URL as a Markdown link destination: the parentheses that would end the link are
/// percent-encoded (the URL means the same). Validation has refused spaces, `<` and `>`.
pub(super) fn md_url(url: &str) -> String {
    url.replace('(', "%28").replace(')', "%29")
}

/// Text for inside a one-line code span: folded, with backticks removed (they would end it).
pub(super) fn md_code(text: &str) -> String {
    oneline(text).replace('`', "'")
}

/// Verbatim text inside a backtick fence longer than any backtick run in it, so nothing
/// in the text can close the fence early.
pub(super) fn fence(text: &str) -> String {
    let longest = longest_backtick_run(text);
    let ticks = "`".repeat((longest + 1).max(3));
    format!("{ticks}text\n{text}\n{ticks}")
}

/// The length of the longest run of backticks in `text` (a byte scan: a backtick is
/// ASCII, never part of another character's UTF-8 bytes).
fn longest_backtick_run(text: &str) -> usize {
    if !text.contains('`') {
        return 0;
    }
    let (mut longest, mut run) = (0, 0);
    for &b in text.as_bytes() {
        if b == b'`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    longest
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Text with every kind of whitespace and backtick run the fast paths of `oneline`
    /// and `fence` must tell apart from the slow ones.
    const TEXTS: [&str; 24] = [
        "",
        " ",
        "a",
        "one line of text",
        " leading",
        "trailing ",
        "two  spaces",
        "tab\there",
        "new\nline",
        "cr\rlf",
        "vertical\u{b}tab",
        "form\u{c}feed",
        "nbsp\u{a0}here",
        "next\u{85}line",
        "ideographic\u{3000}space",
        "line\u{2028}separator",
        "café — “quoted” 日本語",
        "`one` and ``two`` and ```three```",
        "````",
        "a`b",
        "trailing `",
        "\u{2003}em space first",
        "last em space\u{2003}",
        "mixed \t\n  runs \u{a0} here",
    ];

    #[test]
    fn oneline_fast_path_folds_as_the_split_does() {
        for text in TEXTS {
            let split = text.split_whitespace().collect::<Vec<_>>().join(" ");
            assert_eq!(oneline(text), split, "{text:?}");
            assert_eq!(is_folded(text), split == text, "{text:?}");
        }
    }

    #[test]
    fn backtick_runs_counted_as_the_split_does() {
        for text in TEXTS {
            let split = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
            assert_eq!(longest_backtick_run(text), split, "{text:?}");
        }
    }

    #[test]
    fn md_inline_neutralises_block_starts() {
        assert_eq!(md_inline("# Heading"), "\\# Heading");
        assert_eq!(md_inline("a\n## b"), "a ## b");
        assert_eq!(md_inline("- item"), "\\- item");
        assert_eq!(md_inline("```rust"), "\\```rust");
        assert_eq!(md_inline("12. twelve"), "12\\. twelve");
        assert_eq!(md_inline("3) three"), "3\\) three");
        assert_eq!(md_inline("2026 was good"), "2026 was good");
        assert_eq!(md_inline("  <!-- x"), "\\<!-- x");
        assert_eq!(md_inline("plain"), "plain");
        assert_eq!(md_inline(""), "");
    }

    #[test]
    fn durations_read_in_seconds_minutes_or_hours() {
        let cases = [
            (1, "1s"),
            (90, "90s"),
            (119, "119s"),
            (120, "2 min"),
            (150, "3 min"),
            (600, "10 min"),
            (3569, "59 min"),
            (3570, "1 h"),
            (3600, "1 h"),
            (5400, "1 h 30 min"),
            (86_400, "24 h"),
        ];
        for (seconds, text) in cases {
            assert_eq!(duration(seconds), text, "{seconds}");
        }
    }

    #[test]
    fn fence_outlasts_backticks_inside() {
        assert_eq!(fence("a"), "```text\na\n```");
        assert_eq!(fence("x ```` y"), "`````text\nx ```` y\n`````");
    }

    /// The shared view must stay what file templates saw when each operation was
    /// serialised again with `#[serde(flatten)]`: same keys, values and key order.
    #[test]
    fn operation_view_matches_flattened_operation() {
        #[derive(serde::Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Flattened<'a> {
            #[serde(flatten)]
            op: TemplateOperation<'a>,
            model_description: &'a str,
            idempotency_key: bool,
        }
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../examples/manifests/video.yaml"
        ))
        .unwrap();
        let connector = crate::load("video.yaml", std::sync::Arc::new(text)).unwrap();
        let reads = GetsByPath::new(&connector);
        let values = operation_values(&connector, &reads);
        let text = Arc::new(vec!["The text.".to_string(); values.len()]);
        for (i, (op, value)) in connector.operations.iter().zip(&values).enumerate() {
            let expected = Value::from(Serde(Flattened {
                op: TemplateOperation::new(&connector, &reads, op, Flavour::Document),
                model_description: "The text.",
                idempotency_key: op.key().is_some(),
            }));
            let view = operation_view(value, &text, i, op.key().is_some());
            assert_eq!(view, expected);
            assert_eq!(format!("{view:?}"), format!("{expected:?}"));
        }
    }

    /// Manifests that between them have every kind of operation: spends (both payers,
    /// `when`), async (jobs and changes, `listWith`), every retry rule and key location,
    /// `confirm` with and without `when`, a `server` other than the Base URL.
    const MANIFESTS: [&str; 7] = [
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../examples/manifests/video.yaml"
        ),
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/cases/valid/every-option.yaml"
        ),
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/cases/valid/retry-keys.yaml"
        ),
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/cases/valid/safety-semantics.yaml"
        ),
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/cases/valid/safety-wording.yaml"
        ),
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/cases/valid/mcp-args-and-fixed.yaml"
        ),
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/cases/valid/base-per-operation-servers.yaml"
        ),
    ];

    /// The object must show templates what serde's conversion of `TemplateOperation`
    /// showed: the same keys in the same order, the same values, the same text when
    /// printed, for every operation and flavour.
    #[test]
    fn operation_object_matches_serde() {
        let (mut seen, mut others) = (0, 0);
        for path in MANIFESTS {
            let connector = crate::pipeline::load_file(path);
            let reads = GetsByPath::new(&connector);
            for op in &connector.operations {
                for flavour in [
                    Flavour::Document,
                    Flavour::Mcp,
                    Flavour::Openai,
                    Flavour::Served,
                ] {
                    let expected = Value::from(Serde(&TemplateOperation::new(
                        &connector, &reads, op, flavour,
                    )));
                    let value = operation_value(&connector, &reads, op, flavour);
                    assert_eq!(value, expected, "{path}: {}", op.id);
                    assert_eq!(format!("{value:?}"), format!("{expected:?}"));
                    assert_eq!(value.len(), expected.len());
                    assert_eq!(value.is_true(), expected.is_true());
                    let keys = |v: &Value| v.try_iter().unwrap().collect::<Vec<_>>();
                    assert_eq!(keys(&value), keys(&expected));
                    for key in keys(&expected)
                        .iter()
                        .chain([&Value::from("nope"), &Value::from(3)])
                    {
                        let (got, want) = (
                            value.get_item(key).unwrap(),
                            expected.get_item(key).unwrap(),
                        );
                        assert_eq!(
                            format!("{got:?}"),
                            format!("{want:?}"),
                            "{path}: {}.{key}",
                            op.id
                        );
                        assert_eq!(got.kind(), want.kind());
                    }
                    seen += 1;
                    others += usize::from(value.get_attr("server").unwrap().is_true());
                }
            }
        }
        assert!(seen > 30, "only {seen} operations compared");
        assert!(
            others > 0,
            "no operation called at another server than the Base URL"
        );
    }

    /// Rendered through a template, both values give the same text: printing the
    /// operation, looping over its keys and items, and its length.
    #[test]
    fn operation_object_renders_as_the_map_did() {
        let template = "{{ operation }}|{% for k in operation %}{{ k }},{% endfor %}|\
            {% for k, v in operation|items %}{{ k }}={{ v }};{% endfor %}|{{ operation|length }}|\
            {{ operation.retry }}|{{ operation|dictsort }}";
        let env = Environment::new();
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/cases/valid/every-option.yaml"
        ))
        .unwrap();
        let connector = crate::load("every-option.yaml", std::sync::Arc::new(text)).unwrap();
        let reads = GetsByPath::new(&connector);
        for (op, value) in connector
            .operations
            .iter()
            .zip(operation_values(&connector, &reads))
        {
            let expected = Value::from(Serde(&TemplateOperation::new(
                &connector,
                &reads,
                op,
                Flavour::Document,
            )));
            let render = |v: &Value| {
                env.render_str(template, context! { operation => v })
                    .unwrap()
            };
            assert_eq!(render(&value), render(&expected));
            let view = operation_view(
                &value,
                &Arc::new(vec!["The text.".to_string()]),
                0,
                op.key().is_some(),
            );
            let map: std::collections::BTreeMap<Value, Value> = view
                .as_object()
                .unwrap()
                .try_iter_pairs()
                .unwrap()
                .collect();
            assert_eq!(render(&view), render(&Value::from(map)));
        }
    }

    /// The sections' lists in the file context hold what filtering `operations` in the
    /// template gave (the default llms.txt did that before they existed, and an
    /// override still may): the same operations, in the same order.
    #[test]
    fn section_lists_match_selectattr() {
        let pairs = [
            ("asyncOperations", r#"operations|selectattr("async")"#),
            (
                "personCharges",
                r#"operations|selectattr("spends")|selectattr("spends.payer", "eq", "person")"#,
            ),
            (
                "customerCharges",
                r#"operations|selectattr("spends")|selectattr("spends.payer", "eq", "customer")"#,
            ),
            ("permanentOperations", r#"operations|selectattr("confirm")"#),
        ];
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        let mut nonempty = [false; 4];
        for path in MANIFESTS {
            let connector = crate::pipeline::load_file(path);
            let reads = GetsByPath::new(&connector);
            let values = operation_values(&connector, &reads);
            let descriptions = Arc::new(vec![String::new(); values.len()]);
            let ctx = Prose::file_context(&connector, &values, &descriptions, "m.yaml");
            for (i, (list, filtered)) in pairs.iter().enumerate() {
                let ids = |expr: &str| {
                    let template = format!(r#"{{{{ {expr}|map(attribute="id")|join(",") }}}}"#);
                    env.render_str(&template, ctx.clone()).unwrap()
                };
                let (given, picked) = (ids(list), ids(filtered));
                assert_eq!(given, picked, "{path}: {list}");
                nonempty[i] |= !given.is_empty();
            }
        }
        assert_eq!(nonempty, [true; 4], "a list was empty in every manifest");
    }

    #[test]
    fn tidy_collapses_blank_runs() {
        assert_eq!(tidy("a\n\n\n\nb  \n\n".to_string()), "a\n\nb\n");
    }
}
