//! The safety layer both modes share, and the one constructor of the model's `Operation`.
//!
//! Takes: the safety keys of one raw operation (`spends`, `async`, `confirm`, `read`,
//! `idempotency`, `lintAllow`, and what the agent's call carries: `args`, `fixed`,
//! `probe`), and from each mode the parts it finds its own way (id, method, path, text,
//! the Operation Object). Returns (through `Validator`): `Safety`, the keys checked, and
//! from both together the model `Operation` (`operation`). `spends.rs`, `jobs.rs`
//! (`async`, and the poll targets across operations), `tasks.rs` (what serve reads to
//! follow a job as a task: `async.status`, `async.cancelWith`), `inputs.rs` (`args`, `fixed`,
//! `probe`), `idempotency.rs` (the retry keys), `candidates.rs` (the keys an
//! operation could retry by) and `amounts.rs` (what `spends.amount` reads and what
//! `refunds` gives back, across operations) hold each part.
//! Must never: let a read (a GET, or `read: true`) spend, start a job or ask for a yes;
//! depend on the mode beyond what the caller hands in; build an `Operation` anywhere but
//! `operation`.

pub(super) mod amounts;
pub(super) mod candidates;
pub(super) mod idempotency;
pub(super) mod inputs;
pub(super) mod jobs;
pub(super) mod spends;
pub(super) mod tasks;

use serde_json::{Map, Value};
use serde_saphyr::Spanned;

use crate::diagnostics::{Diagnostic, Span};
use crate::manifest::{RawAsync, RawConfirm, RawOperation, RawSpends, span, span_of};
use crate::model::{
    ArgName, Async, Fixed, Idempotency, Lint, McpOutput, Method, OmitPath, Operation, Origin,
    ProbeInput, Returns, SafetySpans, Spends, Unsupported,
};
use crate::validate::context::Validator;
use crate::validate::context::{missing, non_empty};
use crate::validate::safety::idempotency::written_idempotency;
use crate::validate::safety::inputs::{args, fixed, probe};
use crate::validate::safety::jobs::async_;
use crate::validate::safety::spends::spends;
use crate::validate::settings::{lint_id, mcp_output};

pub(in crate::validate) use idempotency::{Written, inline_idempotency, needs_idempotency_key};
pub(in crate::validate) use inputs::is_env_name;
pub(in crate::validate) use jobs::link_lists;

/// The safety layer of one operation, as written (both modes read it the same way).
#[derive(Default)]
#[expect(
    clippy::option_option,
    reason = "each key absent, written but invalid (reported: `Some(None)`), or valid"
)]
pub(in crate::validate) struct Safety {
    pub spends: Option<Option<Spends>>,
    pub async_: Option<Option<Async>>,
    /// `None` when the written value is not a known setting (already reported).
    pub idempotency: Option<Option<Written>>,
    /// `confirm` as written (`{ when: … }` is `true`).
    pub confirm: Option<bool>,
    /// `confirm.when`, checked.
    pub confirm_when: Option<String>,
    /// `read: true` as written, when it stands (it is refused beside `spends`, `async`
    /// or `confirm: true`).
    pub read: bool,
    pub lint_allow: Vec<Lint>,
    pub args: Vec<ArgName>,
    pub fixed: Vec<Fixed>,
    pub omit: Vec<OmitPath>,
    /// `mcp.output` as written (the manifest's default is applied last).
    pub mcp_output: Option<McpOutput>,
    pub probe: Option<ProbeInput>,
    /// `refunds`, when it names something (checked against the operations by
    /// `amounts::refunds`).
    pub refunds: Option<String>,
}

impl Safety {
    /// Whether a call of `method` is a read (a GET, or `read: true`), whether it needs
    /// the person's yes because it cannot be undone (`confirm`, default true on DELETE;
    /// never on a read), and whether OpenAI should treat it as consequential (its own
    /// default, true on every method but GET, unless the author wrote `confirm: false`;
    /// never on a read).
    pub(super) fn confirm(&self, method: Method) -> (bool, bool, bool) {
        let read = method == Method::Get || self.read;
        let confirm = self.confirm.unwrap_or(method == Method::Delete) && !read;
        let consequential = !read && self.confirm != Some(false);
        (read, confirm, consequential)
    }

    /// Whether `spends` and `async` are both checked and one of them is given: the
    /// operations whose retry must not repeat the work.
    pub(super) fn spends_or_async(&self) -> bool {
        matches!(self.spends, Some(Some(_))) || matches!(self.async_, Some(Some(_)))
    }

    /// What `async.returns` says, when `async` is given and valid.
    pub(super) fn returns(&self) -> Option<Returns> {
        self.async_.as_ref()?.as_ref().map(|a| a.returns)
    }
}

/// What names and places an operation: each mode finds these its own way.
pub(in crate::validate) struct Head {
    pub id: String,
    pub method: Method,
    pub path: String,
    pub path_params: Vec<String>,
    pub origin: Origin,
}

/// The rest of an operation without problems: its text, its Operation Object, its
/// safety layer and the retry key the mode resolved.
pub(in crate::validate) struct Body {
    pub summary: String,
    pub description: String,
    pub http: Map<String, Value>,
    pub safety: Safety,
    pub idempotency: Idempotency,
}

impl Body {
    /// For an operation with problems elsewhere: nothing spends, polls, confirms or is
    /// consequential, so it is enough for the cross-operation checks; never rendered.
    fn placeholder() -> Body {
        Body {
            summary: String::new(),
            description: String::new(),
            http: Map::new(),
            safety: Safety {
                confirm: Some(false),
                ..Safety::default()
            },
            idempotency: Idempotency::Unsupported(Unsupported::Unknown),
        }
    }
}

/// The model's `Operation`, the one place both modes build it: `body` is `None` for an
/// operation with problems elsewhere (a placeholder, never rendered). The defaults of
/// the safety layer are applied here: `confirm` (and its `when`) and `consequential`
/// from the method.
pub(in crate::validate) fn operation(head: Head, body: Option<Body>) -> Operation {
    let Head {
        id,
        method,
        path,
        path_params,
        origin,
    } = head;
    let Body {
        summary,
        description,
        http,
        safety,
        idempotency,
    } = body.unwrap_or_else(Body::placeholder);
    let (read, confirm, consequential) = safety.confirm(method);
    Operation {
        id,
        method,
        path,
        path_params,
        summary: summary.into(),
        description: description.into(),
        http,
        spends: safety.spends.flatten(),
        async_: safety.async_.flatten().map(Box::new),
        idempotency,
        confirm,
        confirm_when: safety.confirm_when.filter(|_| confirm),
        consequential,
        read,
        lint_allow: safety.lint_allow,
        args: safety.args,
        fixed: safety.fixed,
        omit: safety.omit,
        mcp_output: safety.mcp_output.unwrap_or_default(),
        probe: safety.probe.map(Box::new),
        refunds: safety.refunds,
        origin,
    }
}

/// `spends`, `async`, `confirm`, `read`, `idempotency` and `lintAllow` of one
/// operation (`name`: its id as findings name it); `is_get` says whether the first
/// two and `confirm: true` are forbidden by the method (`read: true` forbids them
/// on any other).
pub(in crate::validate) fn safety(
    v: &mut Validator,
    raw: &RawOperation,
    name: &str,
    is_get: bool,
) -> Safety {
    if let (Some(c), true) = (&raw.confirm, is_get)
        && c.value.value()
    {
        v.findings.push(Diagnostic::GetWithSideEffect {
            id: name.to_string(),
            what: "need the person's yes before each call (`confirm: true`)",
            key: "confirm",
            span: span(c),
        });
    }
    if let (Some(c), Some(sp)) = (&raw.confirm, &raw.spends)
        && !c.value.value()
    {
        v.findings.push(Diagnostic::ConfirmContradictsSpends {
            span: span(c),
            spends: span(sp),
        });
    }
    if let (Some(sp), true) = (&raw.spends, is_get) {
        v.findings.push(Diagnostic::GetWithSideEffect {
            id: name.to_string(),
            what: "spend the person's money",
            key: "spends",
            span: span(sp),
        });
    }
    if let (Some(a), true) = (&raw.async_, is_get) {
        v.findings.push(Diagnostic::GetWithSideEffect {
            id: name.to_string(),
            what: "start a job (be async)",
            key: "async",
            span: span(a),
        });
    }
    let read = declared_read(v, raw, name, is_get);
    let spends = raw.spends.as_ref().map(|s| spends(v, s));
    let async_ = raw.async_.as_ref().map(|a| async_(v, a));
    let idempotency = raw.idempotency.as_ref().map(|i| written_idempotency(v, i));
    let lint_allow = raw
        .lint_allow
        .iter()
        .flatten()
        .filter_map(|id| lint_id(v, id))
        .collect();
    let args = args(v, raw);
    let fixed = fixed(v, raw);
    let probe = probe(v, raw);
    let confirm_when = raw.confirm.as_ref().and_then(|c| confirm_when(v, c));
    let refunds = raw.refunds.as_ref().and_then(|r| {
        non_empty(
            v,
            r,
            "refunds",
            "name the paid operation whose purchase this call cancels or refunds, e.g. `refunds: createVideo`, or remove `refunds`",
        )
    });
    Safety {
        spends,
        async_,
        idempotency,
        confirm: raw.confirm.as_ref().map(|c| c.value.value()),
        confirm_when,
        read,
        lint_allow,
        args,
        fixed,
        // Whether each path names an input is known only with the tool: the mcp
        // target checks them (render/mcp/omit.rs).
        omit: raw
            .mcp
            .iter()
            .flat_map(|m| m.value.omit.iter().flatten())
            .map(|p| OmitPath {
                path: p.value.trim().to_string(),
                span: span(p),
            })
            .collect(),
        mcp_output: raw
            .mcp
            .as_ref()
            .and_then(|m| m.value.output.as_ref())
            .and_then(|o| mcp_output(v, o)),
        probe,
        refunds,
    }
}

/// `read: true`, refused beside what a read cannot do. On a GET the method already
/// refuses them (`get-with-side-effect`), so this does not repeat it.
fn declared_read(v: &mut Validator, raw: &RawOperation, name: &str, is_get: bool) -> bool {
    let Some(read) = raw.read.as_ref().filter(|r| r.value) else {
        return false;
    };
    if is_get {
        return true;
    }
    let confirm = raw.confirm.as_deref().filter(|c| c.value.value());
    let contradictions = [
        (
            raw.spends.as_deref().map(span),
            "spend the person's money",
            "spends",
        ),
        (
            raw.async_.as_deref().map(span),
            "start a job (be async)",
            "async",
        ),
        (
            confirm.map(span),
            "need the person's yes before each call (`confirm: true`)",
            "confirm",
        ),
    ];
    let mut stands = true;
    for (at, what, key) in contradictions {
        if let Some(at) = at {
            stands = false;
            v.findings.push(Diagnostic::ReadWithSideEffect {
                id: name.to_string(),
                what,
                key,
                span: at,
                read: span(read),
            });
        }
    }
    stands
}

/// `confirm: { when: … }`: the condition, which must say something.
fn confirm_when(v: &mut Validator, c: &Spanned<RawConfirm>) -> Option<String> {
    let RawConfirm::When(w) = &c.value else {
        return None;
    };
    let Some(when) = &w.when else {
        missing(
            v,
            "when",
            "`confirm`",
            span(c),
            "name the condition under which a call cannot be undone, e.g. `confirm: { when: \"type is rebuild or restore\" }`, or write `confirm: true`",
        );
        return None;
    };
    non_empty(
        v,
        when,
        "confirm.when",
        "name the condition under which a call cannot be undone, e.g. `when: type is rebuild or restore`, or write `confirm: true`",
    )
}

/// Where each part of an operation entry is (the entry itself where a part is absent).
pub(in crate::validate) fn origin(op: &Spanned<RawOperation>) -> Origin {
    let raw = &op.value;
    let entry = span(op);
    let at = |field: &Option<Spanned<String>>| field.as_ref().map_or(entry, span);
    Origin {
        entry,
        id: id_span(op),
        path: at(&raw.path),
        summary: at(&raw.summary),
        description: at(&raw.description),
        description_from_base: false,
        safety: SafetySpans {
            spends: raw.spends.as_deref().map(span),
            note: spends_part(raw, |s| s.note.as_ref()),
            when: spends_part(raw, |s| s.when.as_ref()),
            confirm_when: raw.confirm.as_ref().and_then(|c| match &c.value {
                RawConfirm::When(w) => w.when.as_ref().map(span),
                RawConfirm::Flag(_) => None,
            }),
            poll_with: async_part(raw, |a| a.poll_with.as_ref().map(span)),
            id_field: async_part(raw, |a| a.id_field.as_ref().map(span)),
            job_status: async_part(raw, |a| a.status.as_ref().map(span)),
            cancel_with: async_part(raw, |a| a.cancel_with.as_ref().map(span)),
            idempotency: raw.idempotency.as_deref().map(span),
            amount: raw
                .spends
                .as_ref()
                .and_then(|s| s.value.amount.as_ref())
                .map(span),
            refunds: raw.refunds.as_ref().map(span),
            mcp_output: raw
                .mcp
                .as_ref()
                .and_then(|m| m.value.output.as_ref())
                .map(span),
        }
        .boxed(),
        // Where the schemas are defined: a schema reused through a YAML alias is one
        // schema, and findings about it point at (and are reported once for) its anchor.
        input: raw.input.as_ref().map(|s| span_of(&s.defined)),
        output: raw.output.as_ref().map(|s| span_of(&s.defined)),
        // From the slice, so the list is made at its length: every operation's is held
        // at the build's memory peak.
        query: raw
            .query
            .as_deref()
            .unwrap_or_default()
            .iter()
            .map(|q| {
                let name = q.value.name.as_ref().map(|n| n.value.clone());
                (name.unwrap_or_default(), span_of(&q.defined))
            })
            .collect(),
    }
}

/// Where a key inside `spends` is written.
fn spends_part(
    raw: &RawOperation,
    part: impl Fn(&RawSpends) -> Option<&Spanned<String>>,
) -> Option<Span> {
    raw.spends.as_ref().and_then(|s| part(&s.value)).map(span)
}

/// Where a key inside `async` is written (keys of several types: the caller takes the span).
fn async_part(raw: &RawOperation, part: impl Fn(&RawAsync) -> Option<Span>) -> Option<Span> {
    raw.async_.as_ref().and_then(|a| part(&a.value))
}

fn id_span(op: &Spanned<RawOperation>) -> Span {
    let raw = &op.value;
    raw.id
        .as_ref()
        .or(raw.operation.as_ref())
        .map_or_else(|| span(op), span)
}
