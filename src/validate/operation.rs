//! One inline operation: its fields checked, its defaults applied, lowered to an
//! OpenAPI Operation Object (`lower.rs`).
//!
//! Takes: a raw operation, whose JSON Schemas it moves into the model (leaving `null`
//! and the spans behind). Returns (through `Validator`): the operation model and every
//! problem in it; cross-operation checks (ids, routes, poll targets) are in `mod.rs`.
//! The safety-layer keys (`spends`, `async`, `idempotency`, `lintAllow`) are read by the
//! functions here for base-mode operations too.

use serde_saphyr::Spanned;

use super::http::Location;
pub(super) use super::idempotency::Written;
use super::lower;
use super::syntax::{is_identifier, parse_path};
use super::{Checked, Validator, poll_of};
use crate::diagnostics::{Diagnostic, Span, suggest};
use crate::manifest::{RawAsync, RawConfirm, RawOperation, RawSpends, span, span_of};
use crate::model::{
    ArgName, Async, Fixed, FixedSource, IDEMPOTENCY_HEADER, Idempotency, IdempotencyKey,
    KeyLocation, Method, Operation, Origin, Payer, ProbeInput, Returns, SpendKind, Spends,
    Unsupported,
};
use crate::model::{Lint, Names as _};

/// The default media type of bodies.
const JSON: &str = "application/json";

/// An inline operation's plain HTTP keys, checked.
struct HttpKeys {
    input_type: Option<String>,
    input_required: bool,
    output_type: Option<String>,
    status: u16,
    deprecated: bool,
    tags: Vec<String>,
}

/// The safety layer of one operation, as written (both modes read it the same way).
pub(super) struct Safety {
    pub spends: Option<Option<Spends>>,
    pub async_: Option<Option<Async>>,
    /// `None` when the written value is not a known setting (already reported).
    pub idempotency: Option<Option<Written>>,
    /// `confirm` as written (`{ when: … }` is `true`).
    pub confirm: Option<bool>,
    /// `confirm.when`, checked.
    pub confirm_when: Option<String>,
    pub lint_allow: Vec<Lint>,
    pub args: Vec<ArgName>,
    pub fixed: Vec<Fixed>,
    pub probe: Option<ProbeInput>,
}

/// The `Idempotency-Key` header connectorgen adds.
pub(super) fn added_header(required: bool) -> Idempotency {
    Idempotency::Key(IdempotencyKey {
        location: KeyLocation::Header,
        name: IDEMPOTENCY_HEADER.to_string(),
        required,
        added: true,
        evidence: None,
    })
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

    /// `spends`, `async`, `confirm`, `idempotency` and `lintAllow` of one operation
    /// (`name`: its id as findings name it); `is_get` says whether the first two and
    /// `confirm: true` are forbidden.
    pub(super) fn safety(&mut self, raw: &RawOperation, name: &str, is_get: bool) -> Safety {
        if let (Some(c), true) = (&raw.confirm, is_get)
            && c.value.value()
        {
            self.push(Diagnostic::GetWithSideEffect {
                id: name.to_string(),
                what: "need the person's yes before each call (`confirm: true`)",
                key: "confirm",
                span: span(c),
            });
        }
        if let (Some(c), Some(sp)) = (&raw.confirm, &raw.spends)
            && !c.value.value()
        {
            self.push(Diagnostic::ConfirmContradictsSpends {
                span: span(c),
                spends: span(sp),
            });
        }
        if let (Some(sp), true) = (&raw.spends, is_get) {
            self.push(Diagnostic::GetWithSideEffect {
                id: name.to_string(),
                what: "spend the person's money",
                key: "spends",
                span: span(sp),
            });
        }
        if let (Some(a), true) = (&raw.async_, is_get) {
            self.push(Diagnostic::GetWithSideEffect {
                id: name.to_string(),
                what: "start a job (be async)",
                key: "async",
                span: span(a),
            });
        }
        let spends = raw.spends.as_ref().map(|s| self.spends(s));
        let async_ = raw.async_.as_ref().map(|a| self.async_(a));
        let idempotency = raw
            .idempotency
            .as_ref()
            .map(|i| self.written_idempotency(i));
        let lint_allow = raw
            .lint_allow
            .iter()
            .flatten()
            .filter_map(|id| self.lint_id(id))
            .collect();
        let args = self.args(raw);
        let fixed = self.fixed(raw);
        let probe = self.probe(raw);
        let confirm_when = raw.confirm.as_ref().and_then(|c| self.confirm_when(c));
        Safety {
            spends,
            async_,
            idempotency,
            confirm: raw.confirm.as_ref().map(|c| c.value.value()),
            confirm_when,
            lint_allow,
            args,
            fixed,
            probe,
        }
    }

    /// `confirm: { when: … }`: the condition, which must say something.
    fn confirm_when(&mut self, c: &Spanned<RawConfirm>) -> Option<String> {
        let RawConfirm::When(w) = &c.value else {
            return None;
        };
        let Some(when) = &w.when else {
            self.missing(
                "when",
                "`confirm`",
                span(c),
                "name the condition under which a call cannot be undone, e.g. `confirm: { when: \"type is rebuild or restore\" }`, or write `confirm: true`",
            );
            return None;
        };
        self.non_empty(
            when,
            "confirm.when",
            "name the condition under which a call cannot be undone, e.g. `when: type is rebuild or restore`, or write `confirm: true`",
        )
    }

    /// `probe: { input: {…} }`: the example call must be a mapping of arguments.
    fn probe(&mut self, raw: &RawOperation) -> Option<ProbeInput> {
        let probe = raw.probe.as_ref()?;
        let Some(input) = &probe.value.input else {
            self.push(Diagnostic::InvalidProbe {
                problem: "it has no `input`".to_string(),
                span: span(probe),
            });
            return None;
        };
        match &input.value {
            serde_json::Value::Object(map) => Some(ProbeInput {
                input: map.clone(),
                span: span(input),
            }),
            other => {
                self.push(Diagnostic::InvalidProbe {
                    problem: format!(
                        "`input` is {}, not a mapping of argument names to values",
                        match other {
                            serde_json::Value::Null => "empty",
                            serde_json::Value::Array(_) => "a list",
                            serde_json::Value::String(_) => "a string",
                            _ => "a scalar",
                        }
                    ),
                    span: span(input),
                });
                None
            }
        }
    }

    /// `args:`: each chosen name must be one every MCP client accepts. Whether each key
    /// names an input is known only with the operation's HTTP shape: the mcp target
    /// checks that (`unknown-mcp-input`).
    fn args(&mut self, raw: &RawOperation) -> Vec<ArgName> {
        let mut out = Vec::new();
        for (input, name) in raw.args.iter().flatten() {
            if !crate::arguments::is_safe(&name.value) {
                self.push(Diagnostic::InvalidArgumentName {
                    name: name.value.clone(),
                    span: span(name),
                    help: format!(
                        "use 1 to 64 letters, digits, `_`, `.` or `-`, e.g. `{}`",
                        crate::arguments::safe_name(&name.value)
                    ),
                });
                continue;
            }
            out.push(ArgName {
                input: input.value.clone(),
                name: name.value.clone(),
                input_span: span(input),
                span: span(name),
            });
        }
        out
    }

    /// `fixed:`: each entry gives its value by exactly one of `env` and `value`.
    fn fixed(&mut self, raw: &RawOperation) -> Vec<Fixed> {
        let mut out = Vec::new();
        for (name, entry) in raw.fixed.iter().flatten() {
            let source = match (&entry.value.env, &entry.value.value) {
                (Some(env), None) if is_env_name(&env.value) => FixedSource::Env(env.value.clone()),
                (None, Some(value)) => FixedSource::Value(value.value.clone()),
                (Some(env), None) => {
                    self.push(Diagnostic::InvalidFixed {
                        name: name.value.clone(),
                        problem: format!("`{}` is not an environment variable name", env.value),
                        span: span(env),
                    });
                    continue;
                }
                (env, value) => {
                    self.push(Diagnostic::InvalidFixed {
                        name: name.value.clone(),
                        problem: if env.is_some() && value.is_some() {
                            "it gives both `env` and `value`".to_string()
                        } else {
                            "it gives neither `env` nor `value`".to_string()
                        },
                        span: span(entry),
                    });
                    continue;
                }
            };
            out.push(Fixed {
                name: name.value.clone(),
                source,
                span: span(name),
            });
        }
        out
    }

    pub(super) fn operation<'a>(
        &mut self,
        s: &'a mut Spanned<RawOperation>,
    ) -> Option<Checked<'a>> {
        let at = span(s);
        let raw = &s.value;
        let ctx = "an operation";
        let before = self.errors();

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
                match Method::named(&lower) {
                    Some(method) => Some(method),
                    None => {
                        self.push(Diagnostic::UnknownMethod {
                            method: m.value.clone(),
                            span: span(m),
                            help: suggest(&lower, Method::names()),
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
                key: "input",
                method: m.as_str().to_string(),
                span: span(input),
            });
        }
        let input = raw_mut.input.as_mut().and_then(|i| self.schema(i, "input"));
        let output = raw_mut
            .output
            .as_mut()
            .and_then(|o| self.schema(o, "output"));
        let template: &[String] = path.as_ref().map_or(&[], |(_, p)| p.as_slice());
        let api_key = self.api_key_header.clone();
        let params = self.parameters(
            raw_mut.params.as_deref_mut().unwrap_or_default(),
            Location::Path,
            template,
            None,
        );
        let query = self.parameters(
            raw_mut.query.as_deref_mut().unwrap_or_default(),
            Location::Query,
            template,
            None,
        );
        let headers = self.parameters(
            raw_mut.headers.as_deref_mut().unwrap_or_default(),
            Location::Header,
            template,
            api_key.as_deref(),
        );
        let fragment = raw_mut
            .openapi
            .as_mut()
            .and_then(|f| self.fragment(f, template, api_key.as_deref()));
        let s: &'a Spanned<RawOperation> = s;
        let raw = &s.value;
        let http_keys = self.http_keys(raw, method, input.is_some(), output.is_some());
        // References in the author's schemas must resolve against `schemas:`.
        let shared = std::mem::take(&mut self.shared);
        let schemas = [
            (input.as_ref(), raw.input.as_ref().map(span)),
            (output.as_ref(), raw.output.as_ref().map(span)),
        ];
        for (schema, at) in schemas {
            if let (Some(schema), Some(at)) = (schema, at) {
                self.refs(schema, &shared, at);
            }
        }
        let lists = [&params, &query, &headers];
        let raws = [&raw.params, &raw.query, &raw.headers];
        for (list, raw_list) in lists.into_iter().zip(raws) {
            for (p, r) in list.iter().flatten().zip(raw_list.iter().flatten()) {
                self.refs(&p.schema, &shared, span(r));
            }
        }
        self.shared = shared;

        // An id that is missing or unusable has its own finding; name it as written.
        let name = raw.id.as_ref().map_or("", |i| i.value.trim());
        let safety = self.safety(raw, name, method == Some(Method::Get));
        let origin = origin(s);

        if self.errors() > before {
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
        let http_keys = http_keys?;
        let (confirm, consequential) = safety.confirm(method);
        let confirm_when = safety.confirm_when.clone().filter(|_| confirm);
        let spends = safety.spends.flatten();
        let async_ = safety.async_.flatten();
        let written = safety
            .idempotency
            .flatten()
            .unwrap_or(Written::Short { required: false });
        let short = matches!(written, Written::Short { .. });
        let idempotency = match written {
            Written::Unsupported => Idempotency::Unsupported(Unsupported::Stated),
            Written::Inherent => Idempotency::Inherent,
            Written::Short { required } => {
                if needs_idempotency_key(method, spends.is_some() || async_.is_some()) {
                    added_header(required)
                } else {
                    Idempotency::Unsupported(Unsupported::Unknown)
                }
            }
            Written::Named {
                location,
                name,
                required,
            } => Idempotency::Key(IdempotencyKey {
                location,
                name,
                required,
                added: true,
                evidence: None,
            }),
        };
        let input = match (input, &http_keys.input_type) {
            (Some(input), _) => Some(input),
            (None, Some(media)) => Some(lower::default_schema(media)),
            (None, None) => None,
        };
        let mut http = lower::operation(
            lower::Inline {
                path_params: &path_params,
                params: params?,
                query: query?,
                headers: headers?,
                input,
                input_type: http_keys.input_type.unwrap_or_else(|| JSON.to_string()),
                input_required: http_keys.input_required,
                output,
                output_type: http_keys.output_type.unwrap_or_else(|| JSON.to_string()),
                status: http_keys.status,
                // The `Idempotency-Key` header of the short forms; a named key is
                // declared below, unless the author wrote it.
                idempotency_key: idempotency.key().filter(|_| short).map(|k| k.required),
                returns: async_.as_ref().map(|a| a.returns),
                deprecated: http_keys.deprecated,
                tags: http_keys.tags,
                fragment,
            },
            &self.errors,
        );
        if let Some(fragment) = &raw.openapi {
            self.merged_fragment(&mut http, method, span(fragment));
        }
        let idempotency = match idempotency {
            Idempotency::Key(key) if !short => {
                let id = id.as_deref().unwrap_or_default();
                let span = s.value.idempotency.as_ref().map_or(at, span);
                Idempotency::Key(self.declare_key(id, key, &mut http, span)?)
            }
            other => other,
        };
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
                confirm_when,
                consequential,
                lint_allow: safety.lint_allow,
                args: safety.args,
                fixed: safety.fixed,
                probe: safety.probe,
                origin,
            },
            raw: s,
            poll: poll_of(raw),
        })
    }

    /// The plain HTTP keys of an inline operation: media types, status, deprecation,
    /// tags. `has_input`/`has_output` say whether `input`/`output` were given.
    fn http_keys(
        &mut self,
        raw: &RawOperation,
        method: Option<Method>,
        has_input: bool,
        has_output: bool,
    ) -> Option<HttpKeys> {
        let before = self.errors();
        let input_type = raw
            .input_type
            .as_ref()
            .and_then(|t| self.media_type(t, "inputType"));
        let body_refused = matches!(method, Some(Method::Get | Method::Delete));
        if let (Some(t), Some(m), true) = (&raw.input_type, method, body_refused) {
            self.push(Diagnostic::InputNotAllowed {
                key: "inputType",
                method: m.as_str().to_string(),
                span: span(t),
            });
        }
        // On a get or delete the body itself is refused above: asking for its `input`
        // as well would contradict that finding.
        if let (Some(media), false, false) = (&input_type, has_input, body_refused)
            && lower::is_structured(media)
        {
            self.missing(
                "input",
                "an operation",
                raw.input_type.as_ref().map_or((0, 0).into(), span),
                "a JSON, form or multipart body needs `input`: the JSON Schema of its fields",
            );
        }
        let output_type = raw
            .output_type
            .as_ref()
            .and_then(|t| self.media_type(t, "outputType"));
        let status = match &raw.status {
            Some(s) => self.status(s),
            None => Some(200),
        };
        if let (Some(204), true) = (status, has_output) {
            self.push(Diagnostic::InvalidStatus {
                status: "204".to_string(),
                expected: "a status whose response has a body; 204 (No Content) has none: remove `output`, or answer 200",
                span: raw.status.as_ref().map_or((0, 0).into(), span),
            });
        }
        let tags = raw
            .tags
            .iter()
            .flatten()
            .filter_map(|t| self.non_empty(t, "tags", "name the tag, or remove it"))
            .collect();
        (self.errors() == before).then_some(HttpKeys {
            input_type: raw.input_type.as_ref().and(input_type),
            input_required: raw.input_required.as_ref().is_none_or(|r| r.value),
            output_type: raw.output_type.as_ref().and(output_type),
            status: status.unwrap_or(200),
            deprecated: raw.deprecated.as_ref().is_some_and(|d| d.value),
            tags,
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
                // Checked where it is defined: a schema reused through a YAML alias is
                // one schema, reported once.
                if !self.checked.contains(&span_of(&s.defined).offset()) {
                    self.checked.insert(span_of(&s.defined).offset());
                    self.check_schema(&s.value, key, span_of(&s.defined));
                }
                Some(std::mem::take(&mut s.value))
            }
            _ => {
                self.push(Diagnostic::InvalidSchema { key, span: span(s) });
                None
            }
        }
    }

    pub(super) fn spends(&mut self, s: &Spanned<RawSpends>) -> Option<Spends> {
        let at = span(s);
        let ctx = "`spends`";
        let kind = match &s.value.kind {
            None => {
                self.missing("kind", ctx, at, "add `kind: credits` (or money)");
                None
            }
            Some(k) => match SpendKind::named(k.value.trim()) {
                Some(kind) => Some(kind),
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
                        help: suggest(k.value.trim(), SpendKind::names()),
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
        let payer = match &s.value.payer {
            None => Some(Payer::Person),
            Some(p) => match Payer::named(p.value.trim()) {
                Some(payer) => Some(payer),
                None => {
                    self.push(Diagnostic::UnknownPayer {
                        payer: p.value.clone(),
                        span: span(p),
                        help: "write `payer: person` (the default) when the call spends the person's own money, or `payer: customer` when it moves the money of their customer, a third party".to_string(),
                    });
                    None
                }
            },
        };
        Some(Spends {
            kind: kind?,
            note: note?,
            when: when?,
            payer: payer?,
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
            Some(r) => match Returns::named(r.value.trim()) {
                Some(returns) => Some(returns),
                None => {
                    self.push(Diagnostic::UnknownAsyncReturns {
                        value: r.value.clone(),
                        span: span(r),
                        help: format!(
                            "{} `job` is work with an id to poll; `change` is a change to something that exists which settles in the background (a cancel, a refund)",
                            suggest(r.value.trim(), Returns::names())
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

/// Whether a short form (`optional`, `required`, the inline default) adds the
/// `Idempotency-Key` header: on every non-GET that spends or is async.
pub(super) fn needs_idempotency_key(method: Method, spends_or_async: bool) -> bool {
    method != Method::Get && spends_or_async
}

/// Where each part of an operation entry is (the entry itself where a part is absent).
pub(super) fn origin(op: &Spanned<RawOperation>) -> Origin {
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
        confirm_when: raw.confirm.as_ref().and_then(|c| match &c.value {
            RawConfirm::When(w) => w.when.as_ref().map(span),
            RawConfirm::Flag(_) => None,
        }),
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
fn spends_part(
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
        idempotency: Idempotency::Unsupported(Unsupported::Unknown),
        confirm: false,
        confirm_when: None,
        consequential: false,
        lint_allow: Vec::new(),
        args: Vec::new(),
        fixed: Vec::new(),
        probe: None,
        origin,
    }
}

fn id_span(op: &Spanned<RawOperation>) -> Span {
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

/// An environment variable name a shell can set: a letter or `_`, then letters, digits
/// or `_`.
pub(super) fn is_env_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}
