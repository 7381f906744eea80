//! Raw manifest → validated `Connector`.
//!
//! Takes: a parsed `RawManifest`. Returns: the `Connector` model, or every problem found
//! (it never stops at the first one), each pointing at the YAML node at fault.
//! Must never: let through a manifest that would mislead a model — a poll target that
//! is not a free read, a GET that spends or starts a job, a body on a GET. Defaults are
//! applied here, once, after checking, and nowhere else.

use std::collections::HashMap;

use serde_saphyr::Spanned;

use crate::diagnostics::{Diagnostic, Span, suggest};
use crate::lint::{Level, Lint, LintConfig};
use crate::manifest::{
    RawAsync, RawAuth, RawLintSetting, RawLints, RawManifest, RawOperation, RawQueryParam,
    RawService, RawSpends, span,
};
use crate::model::{
    Async, Connector, Idempotency, Method, Operation, Origin, QueryParam, Service, SpendKind,
    Spends, Target,
};

/// Checks a raw manifest and builds the model from it.
pub fn validate(raw: &Spanned<RawManifest>) -> Result<Connector, Vec<Diagnostic>> {
    let mut v = Validator::default();
    let root = span(raw);
    let raw = &raw.value;

    match &raw.version {
        None => v.missing(
            "version",
            "the manifest",
            root,
            "add `version: 1` at the top",
        ),
        Some(ver) if ver.value != 1 => v.push(Diagnostic::UnsupportedVersion {
            found: ver.value.to_string(),
            span: span(ver),
        }),
        Some(_) => {}
    }

    let service = match &raw.service {
        None => {
            v.missing(
                "service",
                "the manifest",
                root,
                "add a `service:` mapping with name, version, description, publicUrl and dashboardUrl",
            );
            None
        }
        Some(s) => v.service(s),
    };

    let token_prefix = raw.auth.as_ref().and_then(|a| v.auth(a));

    let operations = match &raw.operations {
        None => {
            v.missing(
                "operations",
                "the manifest",
                root,
                "add an `operations:` list with at least one operation",
            );
            Vec::new()
        }
        Some(ops) => {
            if ops.value.is_empty() {
                v.push(Diagnostic::NoOperations { span: span(ops) });
            }
            v.operations(&ops.value)
        }
    };

    let lint = v.lint_config(&raw.lint);
    let targets = v.targets(&raw.targets);

    match (v.problems.is_empty(), service) {
        (true, Some(service)) => Ok(Connector {
            service,
            token_prefix,
            operations,
            lint,
            targets,
            templates_dir: raw.templates.as_ref().map(|t| (t.value.clone(), span(t))),
        }),
        _ => Err(v.problems),
    }
}

#[derive(Default)]
struct Validator {
    problems: Vec<Diagnostic>,
}

/// An operation with a usable id, method and path, for cross-operation checks. When its
/// other fields had problems, `op` holds placeholders there and is never rendered.
struct Checked<'a> {
    op: Operation,
    raw: &'a Spanned<RawOperation>,
    /// `async.pollWith` as written, and where.
    poll: Option<(String, Span)>,
}

impl Checked<'_> {
    /// From the raw fields, so a target whose `spends` block is itself invalid still counts.
    fn spends(&self) -> bool {
        self.raw.value.spends.is_some()
    }

    fn is_async(&self) -> bool {
        self.raw.value.async_.is_some()
    }
}

fn poll_of(raw: &RawOperation) -> Option<(String, Span)> {
    let p = raw.async_.as_ref()?.value.poll_with.as_ref()?;
    Some((p.value.trim().to_string(), span(p)))
}

impl Validator {
    fn push(&mut self, d: Diagnostic) {
        self.problems.push(d);
    }

    fn missing(&mut self, key: &'static str, context: &'static str, at: Span, help: &str) {
        self.push(Diagnostic::MissingKey {
            key,
            context,
            span: at,
            help: help.to_string(),
        });
    }

    /// A required, non-empty text; returns it trimmed.
    fn text(
        &mut self,
        value: &Option<Spanned<String>>,
        key: &'static str,
        context: &'static str,
        parent: Span,
        help: &str,
    ) -> Option<String> {
        match value {
            None => {
                self.missing(key, context, parent, help);
                None
            }
            Some(s) => self.non_empty(s, key, help),
        }
    }

    fn non_empty(&mut self, s: &Spanned<String>, key: &'static str, help: &str) -> Option<String> {
        let trimmed = s.value.trim();
        if trimmed.is_empty() {
            self.push(Diagnostic::EmptyText {
                key,
                span: span(s),
                help: help.to_string(),
            });
            None
        } else {
            Some(trimmed.to_string())
        }
    }

    fn service(&mut self, s: &Spanned<RawService>) -> Option<Service> {
        let at = span(s);
        let raw = &s.value;
        let ctx = "`service`";
        let name = self.text(
            &raw.name,
            "name",
            ctx,
            at,
            "give the service's name as people know it, e.g. `name: VidGen`",
        );
        let title = raw.title.as_ref().map(|t| {
            self.non_empty(
                t,
                "title",
                "give a title, or remove `title` to use \"<name> Connector\"",
            )
        });
        let version = self.text(
            &raw.version,
            "version",
            ctx,
            at,
            "give the connector's version, e.g. `version: 1.0.0`",
        );
        let description = self.text(
            &raw.description,
            "description",
            ctx,
            at,
            "write one paragraph: who this connector is for and what it does",
        );
        let public_url = self.url(&raw.public_url, "publicUrl", at);
        let dashboard_url = self.url(&raw.dashboard_url, "dashboardUrl", at);
        let name = name?;
        let title = match title {
            Some(t) => t?,
            None => format!("{name} Connector"),
        };
        Some(Service {
            title,
            name,
            version: version?,
            description: description?,
            public_url: public_url?,
            dashboard_url: dashboard_url?,
        })
    }

    fn url(
        &mut self,
        value: &Option<Spanned<String>>,
        key: &'static str,
        parent: Span,
    ) -> Option<String> {
        let Some(value) = value else {
            self.missing(key, "`service`", parent, &format!("add `{key}: https://…`"));
            return None;
        };
        match check_url(value.value.trim()) {
            Ok(url) => Some(url),
            Err(reason) => {
                self.push(Diagnostic::BadUrl {
                    key,
                    reason,
                    span: span(value),
                });
                None
            }
        }
    }

    fn auth(&mut self, a: &Spanned<RawAuth>) -> Option<String> {
        let Some(prefix) = &a.value.token_prefix else {
            self.missing(
                "tokenPrefix",
                "`auth`",
                span(a),
                "add `tokenPrefix: …` (the start of every connector token), or remove `auth`",
            );
            return None;
        };
        let p = &prefix.value;
        if p.is_empty()
            || p.chars()
                .any(|c| c.is_whitespace() || c.is_control() || c == '`')
        {
            self.push(Diagnostic::InvalidTokenPrefix {
                prefix: p.clone(),
                span: span(prefix),
            });
            return None;
        }
        Some(p.clone())
    }

    fn operations(&mut self, raw: &[Spanned<RawOperation>]) -> Vec<Operation> {
        let mut checked: Vec<Checked> = Vec::with_capacity(raw.len());
        let mut ids: HashMap<String, Span> = HashMap::with_capacity(raw.len());
        // Keyed by method and the path with parameter names blanked: OpenAPI treats
        // `/a/{id}` and `/a/{name}` as the same path.
        let mut routes: HashMap<(Method, String), (Span, String)> =
            HashMap::with_capacity(raw.len());
        let mut shapes: HashMap<String, String> = HashMap::with_capacity(raw.len());

        for op in raw {
            let Some(c) = self.operation(op) else {
                continue;
            };
            match ids.get(&c.op.id) {
                Some(first) => self.push(Diagnostic::DuplicateOperationId {
                    id: c.op.id.clone(),
                    span: id_span(op),
                    first: *first,
                }),
                None => {
                    ids.insert(c.op.id.clone(), id_span(op));
                }
            }
            let shape = path_shape(&c.op.path);
            let path_span = op.value.path.as_ref().map(span).unwrap_or_else(|| span(op));
            match shapes.get(&shape) {
                Some(literal) if *literal != c.op.path => self.push(Diagnostic::InvalidPath {
                    path: c.op.path.clone(),
                    reason: format!(
                        "another operation declares the same path as `{literal}`; use the same parameter names"
                    ),
                    span: path_span,
                }),
                Some(_) => {}
                None => {
                    shapes.insert(shape.clone(), c.op.path.clone());
                }
            }
            match routes.get(&(c.op.method, shape.clone())) {
                Some((first, _)) => self.push(Diagnostic::DuplicateRoute {
                    method: c.op.method.upper().to_string(),
                    path: c.op.path.clone(),
                    span: path_span,
                    first: *first,
                }),
                None => {
                    routes.insert((c.op.method, shape), (path_span, c.op.id.clone()));
                }
            }
            checked.push(c);
        }

        let by_id: HashMap<&str, usize> = checked
            .iter()
            .enumerate()
            .map(|(i, c)| (c.op.id.as_str(), i))
            .rev() // the first declaration wins, as for duplicate-id reporting
            .collect();
        let mut poll_problems = Vec::new();
        for c in &checked {
            let Some((poll_with, at)) = &c.poll else {
                continue;
            };
            let at = *at;
            let Some(&t) = by_id.get(poll_with.as_str()) else {
                poll_problems.push(Diagnostic::UnknownPollTarget {
                    target: poll_with.clone(),
                    span: at,
                    help: suggest(poll_with, checked.iter().map(|c| c.op.id.as_str())),
                });
                continue;
            };
            let target = &checked[t];
            let reason = if target.op.id == c.op.id {
                Some("an operation cannot poll itself; that would resubmit the job")
            } else if target.op.method != Method::Get {
                Some("it is not a `get`")
            } else if target.spends() {
                Some("it spends")
            } else if target.is_async() {
                Some("it is itself async")
            } else {
                None
            };
            if let Some(reason) = reason {
                poll_problems.push(Diagnostic::UnsafePollTarget {
                    target: poll_with.clone(),
                    reason,
                    span: at,
                    target_span: Some(id_span(target.raw)),
                });
            }
        }
        self.problems.extend(poll_problems);
        checked.into_iter().map(|c| c.op).collect()
    }

    fn operation<'a>(&mut self, s: &'a Spanned<RawOperation>) -> Option<Checked<'a>> {
        let at = span(s);
        let raw = &s.value;
        let ctx = "an operation";
        let before = self.problems.len();

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

        let is_get = method == Some(Method::Get);
        if let (Some(input), Some(m @ (Method::Get | Method::Delete))) = (&raw.input, method) {
            self.push(Diagnostic::InputNotAllowed {
                method: m.as_str().to_string(),
                span: span(input),
            });
        }
        let input = raw.input.as_ref().and_then(|i| self.schema(i, "input"));
        let output = raw.output.as_ref().and_then(|o| self.schema(o, "output"));
        let query = self.query(raw.query.as_deref().unwrap_or_default());

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

        let idempotency = match &raw.idempotency {
            None => Some(Idempotency::Optional),
            Some(i) => match Idempotency::ALL.iter().find(|(n, _)| *n == i.value.trim()) {
                Some((_, v)) => Some(*v),
                None => {
                    self.push(Diagnostic::UnknownIdempotency {
                        value: i.value.clone(),
                        span: span(i),
                        help: suggest(i.value.trim(), Idempotency::ALL.iter().map(|(n, _)| *n)),
                    });
                    None
                }
            },
        };

        let lint_allow = raw
            .lint_allow
            .iter()
            .flatten()
            .filter_map(|id| self.lint_id(id))
            .collect();

        if self.problems.len() > before {
            // Still hand back what cross-operation checks need (id, method, path, and
            // whether it spends or polls) so one bad field does not hide a duplicate id,
            // a duplicate route or an unsafe poll target elsewhere.
            return match (id, method, path) {
                (Some(id), Some(method), Some((path, path_params))) => Some(Checked {
                    op: Operation {
                        id,
                        method,
                        path,
                        path_params,
                        summary: String::new(),
                        description: String::new(),
                        input: None,
                        query: Vec::new(),
                        output: serde_json::Value::Null,
                        spends: None,
                        async_: None,
                        idempotency: Idempotency::Optional,
                        lint_allow: Vec::new(),
                        origin: origin(s),
                    },
                    raw: s,
                    poll: poll_of(raw),
                }),
                _ => None,
            };
        }
        let (path, path_params) = path?;
        Some(Checked {
            op: Operation {
                id: id?,
                method: method?,
                path,
                path_params,
                summary: summary?,
                description: description?,
                input,
                query: query?,
                output: output.unwrap_or_else(default_output),
                spends: spends.flatten(),
                async_: async_.flatten(),
                idempotency: idempotency?,
                lint_allow,
                origin: origin(s),
            },
            raw: s,
            poll: poll_of(raw),
        })
    }

    fn schema(
        &mut self,
        s: &Spanned<serde_json::Value>,
        key: &'static str,
    ) -> Option<serde_json::Value> {
        match &s.value {
            serde_json::Value::Object(_) | serde_json::Value::Bool(_) => Some(s.value.clone()),
            _ => {
                self.push(Diagnostic::InvalidSchema { key, span: span(s) });
                None
            }
        }
    }

    /// `targets:` — known names, at least one; kept in a fixed order without repeats so
    /// the outputs do not depend on how the list was written.
    fn targets(&mut self, raw: &Option<Spanned<Vec<Spanned<String>>>>) -> Vec<Target> {
        let Some(raw) = raw else {
            return vec![Target::Muse];
        };
        if raw.value.is_empty() {
            self.push(Diagnostic::UnknownTarget {
                target: String::new(),
                span: span(raw),
                help: "list at least one target, e.g. `targets: [muse]`".to_string(),
            });
        }
        let mut targets: Vec<Target> = raw
            .value
            .iter()
            .filter_map(|t| {
                let found = Target::ALL.iter().find(|(n, _)| *n == t.value.trim());
                if found.is_none() {
                    self.push(Diagnostic::UnknownTarget {
                        target: t.value.clone(),
                        span: span(t),
                        help: suggest(t.value.trim(), Target::ALL.iter().map(|(n, _)| *n)),
                    });
                }
                found.map(|(_, t)| *t)
            })
            .collect();
        targets.sort();
        targets.dedup();
        targets
    }

    fn lint_id(&mut self, id: &Spanned<String>) -> Option<Lint> {
        let found = Lint::from_id(id.value.trim());
        if found.is_none() {
            self.push(Diagnostic::UnknownLint {
                id: id.value.clone(),
                span: span(id),
                help: suggest(id.value.trim(), Lint::ALL.iter().map(|l| l.id())),
            });
        }
        found
    }

    fn lint_level(&mut self, id: &str, level: &str, at: Span) -> Option<Level> {
        let found = Level::ALL
            .iter()
            .find(|(n, _)| *n == level.trim())
            .map(|(_, l)| *l);
        if found.is_none() {
            self.push(Diagnostic::InvalidLintSetting {
                id: id.to_string(),
                reason: format!(
                    "`{level}` is not a level; {}",
                    suggest(level.trim(), Level::ALL.iter().map(|(n, _)| *n))
                ),
                span: at,
            });
        }
        found
    }

    fn lint_config(&mut self, raw: &Option<Spanned<RawLints>>) -> LintConfig {
        let mut config = LintConfig::default();
        let Some(raw) = raw else { return config };
        for (id, setting) in &raw.value {
            let Some(lint) = self.lint_id(id) else {
                continue;
            };
            let at = span(setting);
            match &setting.value {
                RawLintSetting::Level(level) => {
                    if let Some(level) = self.lint_level(&id.value, level, at) {
                        config.set(lint, level);
                    }
                }
                RawLintSetting::Detailed(detail) => {
                    // `{ max: 200 }` alone means "check, with this maximum".
                    let level = match &detail.level {
                        Some(level) => self.lint_level(&id.value, level, at),
                        None => Some(Level::Warn),
                    };
                    if let Some(level) = level {
                        config.set(lint, level);
                    }
                    let reason = match (detail.max, lint) {
                        (None, _) => None,
                        (Some(max), Lint::DescriptionTooLong) if max > 0 => {
                            config.description_max = usize::try_from(max).unwrap_or(usize::MAX);
                            None
                        }
                        (Some(max), Lint::DescriptionTooLong) => Some(format!(
                            "`max` must be a positive number of characters, not {max}"
                        )),
                        (Some(_), _) => Some("only description-too-long takes `max`".to_string()),
                    };
                    if let Some(reason) = reason {
                        self.push(Diagnostic::InvalidLintSetting {
                            id: id.value.clone(),
                            reason,
                            span: at,
                        });
                    }
                }
            }
        }
        config
    }

    fn query(&mut self, raw: &[Spanned<RawQueryParam>]) -> Option<Vec<QueryParam>> {
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
            let schema = match &q.value.schema {
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

    fn spends(&mut self, s: &Spanned<RawSpends>) -> Option<Spends> {
        let at = span(s);
        let ctx = "`spends`";
        let kind = match &s.value.kind {
            None => {
                self.missing(
                    "kind",
                    ctx,
                    at,
                    "add `kind: credits` (or money, irreversible)",
                );
                None
            }
            Some(k) => match SpendKind::ALL.iter().find(|(n, _)| *n == k.value.trim()) {
                Some((_, kind)) => Some(*kind),
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
        Some(Spends {
            kind: kind?,
            note: note?,
        })
    }

    fn async_(&mut self, a: &Spanned<RawAsync>) -> Option<Async> {
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
        Some(Async {
            poll_with: poll_with?,
            typical_seconds: typical_seconds?,
        })
    }
}

fn origin(op: &Spanned<RawOperation>) -> Origin {
    let raw = &op.value;
    Origin {
        id: id_span(op),
        description: raw.description.as_ref().map_or_else(|| span(op), span),
        input: raw.input.as_ref().map(span),
        output: raw.output.as_ref().map(span),
        query: raw.query.iter().flatten().map(span).collect(),
    }
}

fn id_span(op: &Spanned<RawOperation>) -> Span {
    op.value.id.as_ref().map(span).unwrap_or_else(|| span(op))
}

fn default_output() -> serde_json::Value {
    serde_json::json!({ "type": "object" })
}

/// Letter first, then letters, digits or `_` (ASCII: ids end up in URLs, code and Markdown).
fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The path with every `{name}` replaced by `{}`, the form OpenAPI compares paths by.
fn path_shape(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    let mut in_param = false;
    for c in path.chars() {
        match c {
            '{' => {
                in_param = true;
                out.push('{');
            }
            '}' => {
                in_param = false;
                out.push('}');
            }
            _ if in_param => {}
            _ => out.push(c),
        }
    }
    out
}

/// Checks a path template and returns its parameter names in order.
fn parse_path(path: &str) -> Result<Vec<String>, String> {
    if !path.starts_with('/') {
        return Err("it must start with `/`".to_string());
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
            || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            return Err(format!(
                "`{{{name}}}` is not a parameter name (letters, digits and `_`)"
            ));
        }
        if params.iter().any(|p| p == name) {
            return Err(format!("parameter `{name}` appears twice"));
        }
        params.push(name.to_string());
        rest = &after[close + 1..];
    }
    let allowed = |c: char| c.is_ascii_alphanumeric() || "-._~!$&'()*+,;=:@/%{}".contains(c);
    if let Some(bad) = path.chars().find(|&c| !allowed(c)) {
        return Err(format!(
            "`{}` cannot appear in a URL path",
            bad.escape_default()
        ));
    }
    if path.contains("//") {
        return Err("it has an empty segment (`//`)".to_string());
    }
    Ok(params)
}

/// Absolute https (http only for localhost / 127.0.0.1), no credentials, query or
/// fragment; returns it without a trailing slash.
fn check_url(url: &str) -> Result<String, String> {
    let uri: http::Uri = url
        .parse()
        .map_err(|e: http::uri::InvalidUri| format!("it does not parse as a URL ({e})"))?;
    let scheme = uri
        .scheme_str()
        .ok_or_else(|| "it is not absolute (no `https://`)".to_string())?;
    let authority = uri
        .authority()
        .ok_or_else(|| "it has no host".to_string())?;
    if authority.as_str().contains('@') {
        return Err("it contains credentials; never put secrets in a manifest".to_string());
    }
    let host = authority.host();
    if host.is_empty() {
        return Err("it has no host".to_string());
    }
    match scheme {
        "https" => {}
        "http" if matches!(host, "localhost" | "127.0.0.1") => {}
        "http" => return Err("plain http is allowed only for localhost and 127.0.0.1".to_string()),
        other => return Err(format!("the scheme is `{other}`, not https")),
    }
    if uri.query().is_some() || url.contains('#') {
        return Err("it has a query or fragment".to_string());
    }
    Ok(url.trim_end_matches('/').to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        assert_eq!(
            check_url("https://a.example/").unwrap(),
            "https://a.example"
        );
        assert_eq!(
            check_url("https://a.example/v1//").unwrap(),
            "https://a.example/v1"
        );
        assert!(check_url("http://localhost:8080").is_ok());
        assert!(check_url("http://127.0.0.1").is_ok());
        assert!(check_url("http://a.example").is_err());
        assert!(check_url("ftp://a.example").is_err());
        assert!(check_url("/relative").is_err());
        assert!(check_url("https://user:pw@a.example").is_err());
        assert!(check_url("https://a.example/?q=1").is_err());
        assert!(check_url("https://a.example/#x").is_err());
        assert!(check_url("not a url").is_err());
    }

    #[test]
    fn paths() {
        assert_eq!(parse_path("/v1/videos/{id}").unwrap(), vec!["id"]);
        assert_eq!(parse_path("/a/{x}/b/{y_2}").unwrap(), vec!["x", "y_2"]);
        assert!(parse_path("v1").is_err());
        assert!(parse_path("/a/{").is_err());
        assert!(parse_path("/a/}").is_err());
        assert!(parse_path("/a/{}").is_err());
        assert!(parse_path("/a/{x}/{x}").is_err());
        assert!(parse_path("/a/{x{y}}").is_err());
        assert!(parse_path("/a b").is_err());
        assert!(parse_path("/a`b").is_err());
        assert!(parse_path("/a?b=1").is_err());
        assert_eq!(path_shape("/a/{id}/b"), "/a/{}/b");
    }

    #[test]
    fn identifiers() {
        assert!(is_identifier("createVideo"));
        assert!(is_identifier("a_1"));
        assert!(!is_identifier("1a"));
        assert!(!is_identifier("_a"));
        assert!(!is_identifier("a-b"));
        assert!(!is_identifier(""));
    }
}
