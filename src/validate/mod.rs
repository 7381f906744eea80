//! Raw manifest → validated `Connector`.
//!
//! Takes: a parsed `RawManifest`. Returns: the `Connector` model, or every problem found
//! (it never stops at the first one), each pointing at the YAML node at fault. The JSON
//! Schemas are moved out of the raw manifest into the model, not copied: afterwards the
//! raw manifest is only read for spans (lints), and a schema's span stays in place.
//! Must never: let through a manifest that would mislead a model — a poll target that
//! is not a free read, a GET that spends or starts a job, a body on a GET. Defaults are
//! applied here, once, after checking, and nowhere else.

mod operation;
mod settings;
mod syntax;

use std::collections::HashMap;

use serde_saphyr::Spanned;

use operation::id_span;
use syntax::{check_url, path_shape};

use crate::diagnostics::{Diagnostic, Span, suggest};
use crate::manifest::{RawAuth, RawManifest, RawOperation, RawService, span};
use crate::model::{Connector, Method, Operation, Service};

/// Checks a raw manifest and builds the model from it. Each valid JSON Schema is taken
/// out of `raw` (left `null`, its span kept), whether or not the whole manifest is valid.
pub fn validate(raw: &mut Spanned<RawManifest>) -> Result<Connector, Vec<Diagnostic>> {
    let mut v = Validator::default();
    let root = span(raw);
    let raw = &mut raw.value;

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

    let operations = match &mut raw.operations {
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
            v.operations(&mut ops.value)
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

    fn operations(&mut self, raw: &mut [Spanned<RawOperation>]) -> Vec<Operation> {
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
            let op = c.raw;
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
}
