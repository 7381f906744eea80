//! One inline operation: its fields checked, its defaults applied, lowered to an
//! OpenAPI Operation Object (`lower.rs`).
//!
//! Takes: a raw operation, whose JSON Schemas it moves into the model (leaving `null`
//! and the spans behind). Returns (through `Validator`): the operation model and every
//! problem in it; cross-operation checks (ids, routes, poll targets) are in `mod.rs`.
//! The safety-layer keys (`spends`, `async`, `idempotency`, `lintAllow`) are read by the
//! functions here for base-mode operations too.

use std::collections::HashMap;

use serde_saphyr::Spanned;

use super::lower::{self, QueryParam};
use super::syntax::{is_identifier, parse_path};
use super::{Checked, Validator, poll_of};
use crate::diagnostics::{Diagnostic, Span, suggest};
use crate::lint::Lint;
use crate::manifest::{RawAsync, RawOperation, RawQueryParam, RawSpends, span, span_of};
use crate::model::{Async, Idempotency, Method, Operation, Origin, Returns, SpendKind, Spends};

/// The safety layer of one operation, as written (both modes read it the same way).
pub(super) struct Safety {
    pub spends: Option<Option<Spends>>,
    pub async_: Option<Option<Async>>,
    /// `None` when the written value is not a known setting (already reported).
    pub idempotency: Option<Option<Idempotency>>,
    /// `confirm` as written.
    pub confirm: Option<bool>,
    pub lint_allow: Vec<Lint>,
}

impl Safety {
    /// Whether a call of `method` needs the person's yes because it cannot be undone
    /// (`confirm`, default true on DELETE), and whether OpenAI should treat it as
    /// consequential (its own default, true on every method but GET, unless the author
    /// wrote `confirm: false`).
    pub fn confirm(&self, method: Method) -> (bool, bool) {
        let confirm = self.confirm.unwrap_or(method == Method::Delete) && method != Method::Get;
        let consequential = method != Method::Get && self.confirm != Some(false);
        (confirm, consequential)
    }
}

impl Validator {
    /// Every inline operation that has a usable id, method and path.
    pub(super) fn inline_operations<'a>(
        &mut self,
        raw: &'a mut [Spanned<RawOperation>],
    ) -> Vec<Checked<'a>> {
        raw.iter_mut().filter_map(|op| self.operation(op)).collect()
    }

    /// `spends`, `async`, `confirm`, `idempotency` and `lintAllow` of one operation;
    /// `is_get` says whether the first two and `confirm: true` are forbidden.
    pub(super) fn safety(&mut self, raw: &RawOperation, is_get: bool) -> Safety {
        if let (Some(c), true) = (&raw.confirm, is_get)
            && c.value
        {
            self.push(Diagnostic::GetWithSideEffect {
                what: "need the person's yes before each call (`confirm: true`)",
                key: "confirm",
                span: span(c),
            });
        }
        if let (Some(c), Some(sp)) = (&raw.confirm, &raw.spends)
            && !c.value
        {
            self.push(Diagnostic::ConfirmContradictsSpends {
                span: span(c),
                spends: span(sp),
            });
        }
        if let (Some(sp), true) = (&raw.spends, is_get) {
            self.push(Diagnostic::GetWithSideEffect {
                what: "spend the person's money",
                key: "spends",
                span: span(sp),
            });
        }
        if let (Some(a), true) = (&raw.async_, is_get) {
            self.push(Diagnostic::GetWithSideEffect {
                what: "start a job (be async)",
                key: "async",
                span: span(a),
            });
        }
        let spends = raw.spends.as_ref().map(|s| self.spends(s));
        let async_ = raw.async_.as_ref().map(|a| self.async_(a));
        let idempotency = raw.idempotency.as_ref().map(|i| {
            match Idempotency::ALL.iter().find(|(n, _)| *n == i.value.trim()) {
                Some((_, v)) => Some(*v),
                None => {
                    self.push(Diagnostic::UnknownIdempotency {
                        value: i.value.clone(),
                        span: span(i),
                        help: suggest(i.value.trim(), Idempotency::ALL.iter().map(|(n, _)| *n)),
                    });
                    None
                }
            }
        });
        let lint_allow = raw
            .lint_allow
            .iter()
            .flatten()
            .filter_map(|id| self.lint_id(id))
            .collect();
        Safety {
            spends,
            async_,
            idempotency,
            confirm: raw.confirm.as_ref().map(|c| c.value),
            lint_allow,
        }
    }

    pub(super) fn operation<'a>(
        &mut self,
        s: &'a mut Spanned<RawOperation>,
    ) -> Option<Checked<'a>> {
        let at = span(s);
        let raw = &s.value;
        let ctx = "an operation";
        let before = self.problems.len();

        if let Some(name) = &raw.operation {
            self.push(Diagnostic::OperationWithoutBase { span: span(name) });
        }
        let id = match &raw.id {
            None => {
                self.missing(
                    "id",
                    ctx,
                    at,
                    "add `id: someName` (the operationId the model calls)",
                );
                None
            }
            Some(id) if !is_identifier(&id.value) => {
                self.push(Diagnostic::InvalidOperationId {
                    id: id.value.clone(),
                    span: span(id),
                });
                None
            }
            Some(id) => Some(id.value.clone()),
        };

        let method = match &raw.method {
            None => {
                self.missing(
                    "method",
                    ctx,
                    at,
                    "add `method: get` (or post, put, patch, delete)",
                );
                None
            }
            Some(m) => {
                let lower = m.value.trim().to_ascii_lowercase();
                match Method::ALL.iter().find(|(name, _)| *name == lower) {
                    Some((_, method)) => Some(*method),
                    None => {
                        self.push(Diagnostic::UnknownMethod {
                            method: m.value.clone(),
                            span: span(m),
                            help: suggest(&lower, Method::ALL.iter().map(|(n, _)| *n)),
                        });
                        None
                    }
                }
            }
        };

        let path = match &raw.path {
            None => {
                self.missing(
                    "path",
                    ctx,
                    at,
                    "add `path: /v1/things` (it starts with `/`)",
                );
                None
            }
            Some(p) => match parse_path(&p.value) {
                Ok(params) => Some((p.value.clone(), params)),
                Err(reason) => {
                    self.push(Diagnostic::InvalidPath {
                        path: p.value.clone(),
                        reason,
                        span: span(p),
                    });
                    None
                }
            },
        };

        let summary = self.text(
            &raw.summary,
            "summary",
            ctx,
            at,
            "write a short, specific summary, e.g. \"Generate a video from a prompt\"",
        );
        let description = self.text(
            &raw.description,
            "description",
            ctx,
            at,
            "say what the call does and what it will not do, e.g. \"Read-only. This cannot move funds.\"",
        );

        // The schemas are moved into the model, not copied: after validation the raw
        // manifest is read only for spans. `raw` is bound again below, read-only.
        let raw_mut = &mut s.value;
        if let (Some(input), Some(m @ (Method::Get | Method::Delete))) = (&raw_mut.input, method) {
            self.push(Diagnostic::InputNotAllowed {
                method: m.as_str().to_string(),
                span: span(input),
            });
        }
        let input = raw_mut.input.as_mut().and_then(|i| self.schema(i, "input"));
        let output = raw_mut
            .output
            .as_mut()
            .and_then(|o| self.schema(o, "output"));
        let query = self.query(raw_mut.query.as_deref_mut().unwrap_or_default());
        let s: &'a Spanned<RawOperation> = s;
        let raw = &s.value;

        let safety = self.safety(raw, method == Some(Method::Get));
        let origin = origin(s);

        if self.problems.len() > before {
            // Still hand back what cross-operation checks need (id, method, path, and
            // whether it spends or polls) so one bad field does not hide a duplicate id,
            // a duplicate route or an unsafe poll target elsewhere.
            return match (id, method, path) {
                (Some(id), Some(method), Some((path, path_params))) => Some(Checked {
                    op: placeholder(id, method, path, path_params, origin),
                    raw: s,
                    poll: poll_of(raw),
                }),
                _ => None,
            };
        }
        let (path, path_params) = path?;
        let method = method?;
        let (confirm, consequential) = safety.confirm(method);
        let spends = safety.spends.flatten();
        let async_ = safety.async_.flatten();
        let idempotency = safety
            .idempotency
            .flatten()
            .unwrap_or(Idempotency::Optional);
        // Every non-GET that spends or starts a job, unless the provider cannot honour one.
        let idempotency_key = method != Method::Get
            && (spends.is_some() || async_.is_some())
            && idempotency != Idempotency::Unsupported;
        let http = lower::operation(lower::Inline {
            path_params: &path_params,
            query: query?,
            input,
            output,
            idempotency_key: idempotency_key.then_some(idempotency == Idempotency::Required),
            returns: async_.as_ref().map(|a| a.returns),
        });
        Some(Checked {
            op: Operation {
                id: id?,
                method,
                path,
                path_params,
                summary: summary?,
                description: description?,
                http,
                spends,
                async_,
                idempotency,
                confirm,
                consequential,
                idempotency_key,
                lint_allow: safety.lint_allow,
                origin,
            },
            raw: s,
            poll: poll_of(raw),
        })
    }

    /// The schema, taken out of `s` (which keeps its span) when it is one.
    pub(super) fn schema(
        &mut self,
        s: &mut Spanned<serde_json::Value>,
        key: &'static str,
    ) -> Option<serde_json::Value> {
        match &s.value {
            serde_json::Value::Object(_) | serde_json::Value::Bool(_) => {
                Some(std::mem::take(&mut s.value))
            }
            _ => {
                self.push(Diagnostic::InvalidSchema { key, span: span(s) });
                None
            }
        }
    }

    pub(super) fn query(&mut self, raw: &mut [Spanned<RawQueryParam>]) -> Option<Vec<QueryParam>> {
        let before = self.problems.len();
        let mut seen: HashMap<&str, ()> = HashMap::new();
        let mut out = Vec::with_capacity(raw.len());
        for q in raw {
            let at = span(q);
            let Some(name) = &q.value.name else {
                self.missing("name", "a query parameter", at, "add `name: limit`");
                continue;
            };
            let n = name.value.as_str();
            let reason = if n.is_empty() {
                Some("the name is empty")
            } else if !n
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
            {
                Some("the name has characters other than letters, digits, `_`, `-` or `.`")
            } else if seen.insert(n, ()).is_some() {
                Some("declared twice in this operation")
            } else {
                None
            };
            if let Some(reason) = reason {
                self.push(Diagnostic::InvalidQueryParameter {
                    name: n.to_string(),
                    reason: reason.to_string(),
                    span: span(name),
                });
            }
            let description = q.value.description.as_ref().and_then(|d| {
                self.non_empty(
                    d,
                    "description",
                    "describe the parameter, or remove `description`",
                )
            });
            let schema = match &mut q.value.schema {
                Some(s) => self.schema(s, "schema"),
                None => Some(serde_json::json!({ "type": "string" })),
            };
            if let Some(schema) = schema {
                out.push(QueryParam {
                    name: n.to_string(),
                    description,
                    required: q.value.required.unwrap_or(false),
                    schema,
                });
            }
        }
        (self.problems.len() == before).then_some(out)
    }

    pub(super) fn spends(&mut self, s: &Spanned<RawSpends>) -> Option<Spends> {
        let at = span(s);
        let ctx = "`spends`";
        let kind = match &s.value.kind {
            None => {
                self.missing("kind", ctx, at, "add `kind: credits` (or money)");
                None
            }
            Some(k) => match SpendKind::ALL.iter().find(|(n, _)| *n == k.value.trim()) {
                Some((_, kind)) => Some(*kind),
                None if k.value.trim() == "irreversible" => {
                    let note = s
                        .value
                        .note
                        .as_ref()
                        .map_or("…".to_string(), |n| quoted(n.value.trim()));
                    self.push(Diagnostic::SpendKindIrreversible {
                        span: span(k),
                        help: format!(
                            "`spends` is for costs, and `confirm: true` on the operation for what cannot be undone. \
                             If the call costs nothing, replace `spends` with `confirm: true`. If it costs and cannot \
                             be undone, write both: `spends: {{ kind: money, note: {note} }}` (or `kind: credits`) \
                             and `confirm: true`"
                        ),
                    });
                    None
                }
                None => {
                    self.push(Diagnostic::UnknownSpendKind {
                        kind: k.value.clone(),
                        span: span(k),
                        help: suggest(k.value.trim(), SpendKind::ALL.iter().map(|(n, _)| *n)),
                    });
                    None
                }
            },
        };
        let note = self.text(
            &s.value.note,
            "note",
            ctx,
            at,
            "say what one call costs, e.g. \"Costs 1 generation credit.\"",
        );
        let when = match &s.value.when {
            None => Some(None),
            Some(w) => self
                .non_empty(
                    w,
                    "when",
                    "name the condition under which a call costs, e.g. `when: confirm is true`, or remove `when`",
                )
                .map(Some),
        };
        Some(Spends {
            kind: kind?,
            note: note?,
            when: when?,
        })
    }

    pub(super) fn async_(&mut self, a: &Spanned<RawAsync>) -> Option<Async> {
        let at = span(a);
        let poll_with = match &a.value.poll_with {
            None => {
                self.missing(
                    "pollWith",
                    "`async`",
                    at,
                    "name the free GET operation that reports the job's progress, e.g. `pollWith: getVideo`",
                );
                None
            }
            Some(p) => Some(p.value.trim().to_string()),
        };
        let typical_seconds = match &a.value.typical_seconds {
            None => Some(None),
            Some(t) if t.value <= 0 => {
                self.push(Diagnostic::NonPositiveTypicalSeconds {
                    value: t.value,
                    span: span(t),
                });
                None
            }
            Some(t) => Some(Some(t.value.unsigned_abs())),
        };
        let returns = match &a.value.returns {
            None => Some(Returns::Job),
            Some(r) => match Returns::ALL.iter().find(|(n, _)| *n == r.value.trim()) {
                Some((_, returns)) => Some(*returns),
                None => {
                    self.push(Diagnostic::UnknownAsyncReturns {
                        value: r.value.clone(),
                        span: span(r),
                        help: format!(
                            "{} `job` is work with an id to poll; `change` is a change to something that exists which settles in the background (a cancel, a refund)",
                            suggest(r.value.trim(), Returns::ALL.iter().map(|(n, _)| *n))
                        ),
                    });
                    None
                }
            },
        };
        Some(Async {
            poll_with: poll_with?,
            typical_seconds: typical_seconds?,
            returns: returns?,
            // Filled in once every operation is known (`link_lists`).
            list_with: None,
        })
    }
}

fn origin(op: &Spanned<RawOperation>) -> Origin {
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
        spends: raw.spends.as_ref().map(span),
        note: spends_part(raw, |s| s.note.as_ref()),
        when: spends_part(raw, |s| s.when.as_ref()),
        poll_with: raw
            .async_
            .as_ref()
            .and_then(|a| a.value.poll_with.as_ref())
            .map(span),
        idempotency: raw.idempotency.as_ref().map(span),
        // Where the schemas are defined: a schema reused through a YAML alias is one
        // schema, and findings about it point at (and are reported once for) its anchor.
        input: raw.input.as_ref().map(|s| span_of(&s.defined)),
        output: raw.output.as_ref().map(|s| span_of(&s.defined)),
        query: raw
            .query
            .iter()
            .flatten()
            .map(|q| {
                let name = q.value.name.as_ref().map(|n| n.value.clone());
                (name.unwrap_or_default(), span_of(&q.defined))
            })
            .collect(),
    }
}

/// Where a key inside `spends` is written.
pub(super) fn spends_part(
    raw: &RawOperation,
    part: impl Fn(&RawSpends) -> Option<&Spanned<String>>,
) -> Option<Span> {
    raw.spends.as_ref().and_then(|s| part(&s.value)).map(span)
}

/// An operation with problems elsewhere: enough for the cross-operation checks, never
/// rendered.
pub(super) fn placeholder(
    id: String,
    method: Method,
    path: String,
    path_params: Vec<String>,
    origin: Origin,
) -> Operation {
    Operation {
        id,
        method,
        path,
        path_params,
        summary: String::new(),
        description: String::new(),
        http: serde_json::Map::new(),
        spends: None,
        async_: None,
        idempotency: Idempotency::Optional,
        confirm: false,
        consequential: false,
        idempotency_key: false,
        lint_allow: Vec::new(),
        origin,
    }
}

pub(super) fn id_span(op: &Spanned<RawOperation>) -> Span {
    let raw = &op.value;
    raw.id
        .as_ref()
        .or(raw.operation.as_ref())
        .map(span)
        .unwrap_or_else(|| span(op))
}

/// Text as a YAML double-quoted scalar (a JSON string is one), for hints that show YAML.
fn quoted(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_default()
}
