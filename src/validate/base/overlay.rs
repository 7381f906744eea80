//! Base mode: the safety layer laid over the provider's own OpenAPI document.
//!
//! Takes: the manifest's operations (each naming a base operation with `operation:`)
//! and the parsed `Base`. Returns (through `Validator`): one model operation per entry,
//! whose `http` is the base Operation Object verbatim (plus an `Idempotency-Key` header
//! when the operation needs one and the base has none), and the document around them:
//! the base's own top level with `info` overridden by `service:`, only the exposed paths,
//! and only the components they reach (transitively) plus the security schemes they use.
//! Must never: change the HTTP description it keeps — the only edits are the added
//! `Idempotency-Key` header, dropped `callbacks` (the agent receives no calls) and
//! server URLs without a trailing slash; a 3.0 base is then upgraded to 3.1 with the
//! same meaning (`upgrade.rs`) — keep a component nothing exposed reaches, or let a
//! reference that does not resolve (or leaves the file) through.

use std::collections::{BTreeSet, HashMap, HashSet};

use serde_json::{Map, Value, json};
use serde_saphyr::Spanned;

use crate::base::{Base, path_item_shared};
use crate::diagnostics::{Diagnostic, Span, suggest};
use crate::manifest::{RawOperation, RawService, span};
use crate::model::{
    AuthScheme, Document, Method, Names as _, Operation, Origin, Service, escape, unescape,
};
use crate::validate::inline::lower::idempotency_parameter;
use crate::validate::inline::operation::{needs_idempotency_key, origin, placeholder};
use crate::validate::safety::idempotency::base_candidates;
use crate::validate::syntax::{check_url, is_identifier};
use crate::validate::{Checked, Validator, poll_of};

impl Validator {
    /// Every listed base operation that could be found and named.
    pub(in crate::validate) fn base_operations<'a>(
        &mut self,
        raw: &'a [Spanned<RawOperation>],
        base: &Base,
    ) -> Vec<Checked<'a>> {
        let mut listed: HashMap<String, Span> = HashMap::with_capacity(raw.len());
        raw.iter()
            .filter_map(|op| self.base_operation(op, base, &mut listed))
            .collect()
    }

    fn base_operation<'a>(
        &mut self,
        s: &'a Spanned<RawOperation>,
        base: &Base,
        listed: &mut HashMap<String, Span>,
    ) -> Option<Checked<'a>> {
        let raw = &s.value;
        let at = span(s);
        let before = self.errors();
        let inline_keys = [
            ("method", raw.method.as_ref().map(span)),
            ("path", raw.path.as_ref().map(span)),
            ("input", raw.input.as_ref().map(span)),
            ("output", raw.output.as_ref().map(span)),
            ("query", first_or(&raw.query, at)),
            ("inputType", raw.input_type.as_ref().map(span)),
            ("inputRequired", raw.input_required.as_ref().map(span)),
            ("status", raw.status.as_ref().map(span)),
            ("outputType", raw.output_type.as_ref().map(span)),
            ("params", first_or(&raw.params, at)),
            ("headers", first_or(&raw.headers, at)),
            ("deprecated", raw.deprecated.as_ref().map(span)),
            ("tags", first_or(&raw.tags, at)),
            ("openapi", raw.openapi.as_ref().map(span)),
        ];
        for (key, place) in inline_keys {
            if let Some(place) = place {
                self.push(Diagnostic::InlineKeyWithBase { key, span: place });
            }
        }
        let Some(name) = &raw.operation else {
            self.missing(
                "operation",
                "an operation",
                at,
                "name the base operation it exposes: `operation: createThing` (its operationId) or `operation: \"POST /v1/things\"`",
            );
            return None;
        };
        if let Some((by_id, by_route)) = base.ambiguous(&name.value) {
            self.push(ambiguous(name, by_id, by_route));
            return None;
        }
        if let Some((route, _, _)) = base.only_in_32.iter().find(|(route, id, _)| {
            id.as_deref() == Some(name.value.trim()) || same_route(route, &name.value)
        }) {
            let named = if same_route(route, &name.value) {
                format!("`{}`", route.escape_debug())
            } else {
                format!("`{}` (`{}`)", name.value.trim(), route.escape_debug())
            };
            let construct = if route.starts_with("QUERY ") {
                "the `query` method"
            } else {
                "an `additionalOperations` method"
            };
            self.push(Diagnostic::Openapi32Unsupported {
                what: format!(
                    "the operation {named} uses {construct}, which OpenAPI 3.1 (every output) cannot express"
                ),
                span: span(name),
                help: "leave it out of `operations`, or expose another route of the provider that makes the same request with a method 3.1 has (GET, POST, PUT, PATCH, DELETE)".to_string(),
            });
            return None;
        }
        let Some(found) = base.find(&name.value) else {
            let known = base
                .operations
                .iter()
                .flat_map(|o| o.operation_id.clone().into_iter().chain([o.route()]))
                .collect::<Vec<_>>();
            self.push(Diagnostic::UnknownBaseOperation {
                name: name.value.clone(),
                span: span(name),
                help: suggest(name.value.trim(), known.iter().map(String::as_str)),
            });
            return None;
        };
        let pointer = found.pointer();
        if let Some(reason) = found.path_problem() {
            // Markdown quotes the path in a code span: a newline or a backtick in it
            // would let the base document write its own headings into llms.txt.
            self.push_base(Diagnostic::InvalidBasePath {
                path: found.path.escape_debug().to_string(),
                reason,
                span: base.span(&format!("/paths/{}", escape(&found.path))),
            });
            return None;
        }
        if let Some(first) = listed.get(&pointer) {
            self.push(Diagnostic::OperationListedTwice {
                name: name.value.trim().to_string(),
                span: span(name),
                first: *first,
            });
            return None;
        }
        listed.insert(pointer.clone(), span(name));
        let Some(method) = Method::named(found.method) else {
            self.push(Diagnostic::UnsupportedMethod {
                name: name.value.trim().to_string(),
                method: found.method.to_ascii_uppercase(),
                span: span(name),
            });
            return None;
        };
        let Some(object) = base.get(&pointer).and_then(Value::as_object) else {
            self.push_base(Diagnostic::BaseSyntax {
                message: format!("the operation `{}` is not a mapping", found.route()),
                span: base.span(&pointer),
            });
            return None;
        };

        for (pointer, reason) in parameter_problems(base, &found.path, &pointer, object) {
            self.push_base(Diagnostic::InvalidBaseParameter {
                route: found.route(),
                reason,
                span: base.span(&pointer),
            });
        }

        let id = match (&raw.id, &found.operation_id) {
            (Some(id), _) if !is_identifier(&id.value) => {
                self.push(Diagnostic::InvalidOperationId {
                    id: id.value.clone(),
                    span: span(id),
                });
                None
            }
            (Some(id), _) => Some(id.value.clone()),
            (None, Some(base_id)) if !is_identifier(base_id) => {
                self.push(Diagnostic::IdNotForTarget {
                    id: base_id.clone(),
                    by: "by agents".to_string(),
                    reason: "agent-facing ids are 1 to 128 letters, digits, `_`, `.` or `-`"
                        .to_string(),
                    span: span(name),
                    help: "the id comes from the base document's operationId: set `id:` on this entry, e.g. `id: createThing`".to_string(),
                });
                None
            }
            (None, Some(base_id)) => Some(base_id.clone()),
            (None, None) => {
                self.missing(
                    "id",
                    "an operation",
                    at,
                    "this base operation has no operationId: add `id: someName`, the name the model calls it by",
                );
                None
            }
        };

        let text = |key: &str| {
            object
                .get(key)
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|t| !t.is_empty())
        };
        // Some documents keep the long text in `summary` and have no `description`.
        let short_summary = text("summary").filter(|s| is_short(s));
        let summary = match &raw.summary {
            Some(s) => self.non_empty(
                s,
                "summary",
                "write a short summary, or remove `summary` to use the base document's",
            ),
            None => Some(
                short_summary
                    .map(plain)
                    .or_else(|| text("summary").or(text("description")).map(first_sentence))
                    .unwrap_or_else(|| found.route()),
            ),
        };
        let description = match &raw.description {
            Some(d) => self.non_empty(
                d,
                "description",
                "say what the call does and what it will not do, or remove `description` to use the base document's",
            ),
            None => Some(
                text("description")
                    .or_else(|| text("summary").filter(|s| !is_short(s)))
                    .unwrap_or_default()
                    .to_string(),
            ),
        };

        let shown = id.as_deref().unwrap_or_else(|| name.value.trim());
        let safety = self.safety(raw, shown, method == Method::Get);
        let spends_or_async =
            matches!(safety.spends, Some(Some(_))) || matches!(safety.async_, Some(Some(_)));
        let idempotency = self.base_idempotency(
            id.as_deref().unwrap_or_default(),
            safety.idempotency.clone(),
            &base_candidates(base, &found.path, object),
            needs_idempotency_key(method, spends_or_async),
            raw.idempotency.as_ref().map_or(at, span),
        );
        // As inline, but the HTTP parts are the base document's: findings about them
        // point at `operation:`, where an override would go.
        let origin = Origin {
            path: span(name),
            summary: raw.summary.as_ref().map_or(span(name), span),
            description: raw.description.as_ref().map_or(span(name), span),
            description_from_base: raw.description.is_none(),
            input: None,
            output: None,
            query: Vec::new(),
            ..origin(s)
        };
        let path_params = template_params(&found.path);
        if self.errors() > before {
            return id.map(|id| Checked {
                op: placeholder(id, method, found.path.clone(), path_params, origin),
                raw: s,
                poll: poll_of(raw),
            });
        }

        let (confirm, consequential) = safety.confirm(method);
        let confirm_when = safety.confirm_when.clone().filter(|_| confirm);
        let spends = safety.spends.flatten();
        let async_ = safety.async_.flatten();
        let idempotency = idempotency?;
        let mut http = object.clone();
        // The provider calls these back; an agent receives no calls, as with `webhooks`.
        http.remove("callbacks");
        if let Some(key) = idempotency.key().filter(|k| k.added) {
            let parameters = http
                .entry("parameters")
                .or_insert_with(|| Value::Array(Vec::new()));
            if let Value::Array(list) = parameters {
                list.push(idempotency_parameter(key.required));
            }
        }
        Some(Checked {
            op: Operation {
                id: id?,
                method,
                path: found.path.clone(),
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

    /// `service:` in base mode: every field but `dashboardUrl` defaults to the base
    /// document's `info` and first server. Also says whether `publicUrl` was given.
    pub(in crate::validate) fn base_service(
        &mut self,
        s: &Spanned<RawService>,
        base: &Base,
    ) -> Option<(Service, bool)> {
        let at = span(s);
        let raw = &s.value;
        let info = base.root.get("info");
        let info_text = |key: &str| {
            info.and_then(|i| i.get(key))
                .and_then(|v| match v {
                    Value::String(s) => Some(s.trim().to_string()),
                    Value::Number(n) => Some(n.to_string()),
                    _ => None,
                })
                .filter(|t| !t.is_empty())
        };
        let mut field = |value: &Option<Spanned<String>>,
                         key: &'static str,
                         default: Option<String>,
                         help: &str| match value {
            Some(v) => self.non_empty(v, key, help),
            None => {
                if default.is_none() {
                    self.missing(key, "`service`", at, help);
                }
                default
            }
        };
        let title = field(
            &raw.title,
            "title",
            info_text("title"),
            "give a title, or remove `title` to use the base document's info.title",
        );
        let name = field(
            &raw.name,
            "name",
            info_text("title").map(|t| service_name(&t)),
            "give the service's name as people know it, e.g. `name: VidGen`",
        );
        let version = field(
            &raw.version,
            "version",
            info_text("version"),
            "give the API's version, e.g. `version: 1.0.0`",
        );
        let description = field(
            &raw.description,
            "description",
            info_text("description"),
            "the base document's info has no description: write one paragraph on who this connector is for and what it does",
        );
        let public_url = match &raw.public_url {
            Some(url) => self.check_url(url, "publicUrl"),
            None => match first_server(base) {
                Ok(url) => Some(url),
                Err(reason) => {
                    self.missing(
                        "publicUrl",
                        "`service`",
                        at,
                        &format!("{reason}; add `publicUrl: https://…`, the API's base URL"),
                    );
                    None
                }
            },
        };
        let dashboard_url = self.url(&raw.dashboard_url, "dashboardUrl", at);
        let spec_url = self.spec_url(raw);
        let public_url = public_url?;
        Some((
            Service {
                name: name?,
                title: title?,
                version: version?,
                description: description?,
                spec_url: spec_url?
                    .unwrap_or_else(|| crate::validate::default_spec_url(&public_url)),
                public_url,
                dashboard_url: dashboard_url?,
            },
            raw.public_url.is_some(),
        ))
    }

    /// The document around the exposed operations: the base's top level in its order,
    /// with `info` from `service`, the servers (`publicUrl` first when given), only the
    /// exposed paths (shared path-item keys kept), only the tags they use, and only the
    /// components they reach and the kept top-level parts refer to. `webhooks` (and
    /// `x-webhooks`, 3.0's way of writing them) are dropped: the agent receives none.
    pub(in crate::validate) fn base_document(
        &mut self,
        base: &Base,
        service: Option<&Service>,
        public_url_given: bool,
        operations: &[Operation],
    ) -> Document {
        // Without a valid `service` nothing is rendered: only the reference checks matter.
        let public_url = service
            .filter(|_| public_url_given)
            .map(|s| s.public_url.as_str());
        let mut paths = Map::new();
        for op in operations {
            if paths.contains_key(&op.path) {
                continue;
            }
            let shared: Map<String, Value> = base
                .path_item(&op.path)
                .map(path_item_shared)
                .unwrap_or_default();
            paths.insert(op.path.clone(), Value::Object(shared));
        }
        let used_tags: HashSet<&str> = operations
            .iter()
            .filter_map(|op| op.http.get("tags").and_then(Value::as_array))
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        // Everything else the output keeps at the top level (`info`, the used tags,
        // `x-` extensions such as `x-tagGroups`) may refer to components too: their
        // targets are kept with them, so that every reference of the output resolves.
        let kept_around: Vec<(String, &Value)> = base
            .root
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(key, _)| !DROPPED_ROOT_KEYS.contains(&key.as_str()))
            .flat_map(|(key, value)| {
                let at = format!("/{}", escape(key));
                match (key.as_str(), value) {
                    ("tags", Value::Array(tags)) => tags
                        .iter()
                        .enumerate()
                        .filter(|(_, t)| {
                            t.get("name")
                                .and_then(Value::as_str)
                                .is_some_and(|n| used_tags.contains(n))
                        })
                        .map(|(i, t)| (format!("{at}/{i}"), t))
                        .collect::<Vec<_>>(),
                    _ => vec![(at, value)],
                }
            })
            .collect();
        let components = self.reachable_components(base, operations, &paths, &kept_around);

        let mut root = Map::new();
        let mut servers_written = false;
        // Only what is kept is copied: a provider's document can be megabytes of paths
        // and components, of which the connector exposes a few.
        let source = base.root.as_object().into_iter().flatten();
        for (key, value) in source {
            let (key, value) = (key.clone(), value);
            match key.as_str() {
                "info" => {
                    let mut value = match service {
                        Some(service) => info(value.clone(), service),
                        None => value.clone(),
                    };
                    // OpenAPI has no `info.externalDocs` (Square's document writes one),
                    // so the output would not validate: the link moves to the document's
                    // own `externalDocs`, unless it has one.
                    let docs = value
                        .as_object_mut()
                        .and_then(|i| i.shift_remove("externalDocs"));
                    root.insert(key, value);
                    if let Some(docs) = docs {
                        let taken = base
                            .root
                            .as_object()
                            .is_some_and(|r| r.contains_key("externalDocs"));
                        let repair = if taken {
                            "dropped (the document has its own `externalDocs`)"
                        } else {
                            root.insert("externalDocs".into(), docs);
                            "moved to the document's own `externalDocs`"
                        };
                        self.base_repaired(
                            base,
                            "/info/externalDocs",
                            format!("`info.externalDocs` is no field of OpenAPI's Info Object; repaired in the outputs: {repair}"),
                        );
                    }
                    if let Some(url) = public_url
                        && !base
                            .root
                            .as_object()
                            .is_some_and(|r| r.contains_key("servers"))
                    {
                        root.insert("servers".into(), json!([{ "url": url }]));
                        servers_written = true;
                    }
                }
                "servers" if public_url.is_some() => {
                    let url = public_url.unwrap_or_default();
                    let mut list = vec![json!({ "url": url })];
                    list.extend(
                        value
                            .as_array()
                            .into_iter()
                            .flatten()
                            .filter(|s| {
                                s.get("url")
                                    .and_then(Value::as_str)
                                    .map(|u| u.trim_end_matches('/'))
                                    != Some(url)
                            })
                            .cloned(),
                    );
                    root.insert(key, Value::Array(list));
                    servers_written = true;
                }
                "paths" => {
                    root.insert(key, Value::Object(std::mem::take(&mut paths)));
                }
                "components" => {
                    if !components.is_empty() {
                        root.insert(key, Value::Object(components.clone()));
                    }
                }
                k if DROPPED_ROOT_KEYS.contains(&k) => {}
                "tags" => {
                    let kept: Vec<Value> = value
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter(|t| {
                            t.get("name")
                                .and_then(Value::as_str)
                                .is_some_and(|n| used_tags.contains(n))
                        })
                        .cloned()
                        .collect();
                    if !kept.is_empty() {
                        root.insert(key, Value::Array(kept));
                    }
                }
                _ => {
                    root.insert(key, value.clone());
                }
            }
        }
        trim_server_slashes(&mut root);
        if let Some(url) = public_url
            && !servers_written
        {
            root.insert("servers".into(), json!([{ "url": url }]));
        }
        Document { root }
    }

    /// The components the exposed operations reach, transitively, in the base's order,
    /// plus the security schemes their security requirements name. Every reference met
    /// on the way must point at a component of the same file.
    fn reachable_components(
        &mut self,
        base: &Base,
        operations: &[Operation],
        paths: &Map<String, Value>,
        around: &[(String, &Value)],
    ) -> Map<String, Value> {
        let mut refs: Vec<(String, String)> = Vec::new();
        for (pointer, value) in around {
            collect_refs(value, &mut pointer.clone(), &mut refs);
        }
        for op in operations {
            let mut pointer = op.pointer();
            collect_map_refs(&op.http, &mut pointer, &mut refs);
        }
        for (path, item) in paths {
            let mut pointer = format!("/paths/{}", escape(path));
            collect_refs(item, &mut pointer, &mut refs);
        }
        let mut kept: BTreeSet<(String, String)> = BTreeSet::new();
        let mut reported: HashSet<String> = HashSet::new();
        while let Some((reference, at)) = refs.pop() {
            let Some(fragment) = reference.strip_prefix('#') else {
                // Files the document refers to are bundled in (`base/bundle.rs`): a
                // reference still naming a file is one that could not be followed.
                if reported.insert(reference.clone()) {
                    let span = base.span(&at);
                    self.push_base(match base.ref_problem(&at) {
                        Some(problem) => problem.diagnostic(&reference, span),
                        // Where OpenAPI reads no reference (an example's value).
                        None => Diagnostic::BaseRefUnreadable {
                            reference,
                            message:
                                "it is where OpenAPI reads no reference, so it was not followed"
                                    .to_string(),
                            span,
                        },
                    });
                }
                continue;
            };
            let segments: Vec<String> = fragment.split('/').skip(1).map(unescape).collect();
            let target = match segments.as_slice() {
                [first, section, name, ..] if first == "components" => {
                    Some((section.clone(), name.clone()))
                }
                _ => None,
            };
            let pointer: String = segments.iter().map(|s| format!("/{}", escape(s))).collect();
            let resolves = !fragment.is_empty() && base.get(&pointer).is_some();
            let Some(target) = target.filter(|_| resolves) else {
                if reported.insert(reference.clone()) {
                    self.push_base(Diagnostic::BaseRefUnresolved {
                        span: base.span(&at),
                        reason: if resolves {
                            "points outside `#/components`, which connectorgen does not copy"
                        } else {
                            "does not resolve in the base document"
                        },
                        reference,
                    });
                }
                continue;
            };
            if kept.insert(target.clone()) {
                let mut pointer =
                    format!("/components/{}/{}", escape(&target.0), escape(&target.1));
                if let Some(value) = base.get(&pointer) {
                    collect_refs(value, &mut pointer, &mut refs);
                }
            }
        }
        let mut schemes: Vec<&str> = Vec::new();
        let global = base.root.get("security");
        for op in operations {
            let requirements = op.http.get("security").or(global);
            for requirement in requirements.and_then(Value::as_array).into_iter().flatten() {
                for name in requirement
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(k, _)| k)
                {
                    if !schemes.contains(&name.as_str()) {
                        schemes.push(name);
                    }
                }
            }
        }
        for name in schemes {
            kept.insert(("securitySchemes".to_string(), name.to_string()));
        }

        let mut out = Map::new();
        let sections = base.root.get("components").and_then(Value::as_object);
        for (section, entries) in sections.into_iter().flatten() {
            let Some(entries) = entries.as_object() else {
                continue;
            };
            let section_kept: Map<String, Value> = entries
                .iter()
                .filter(|(name, _)| kept.contains(&(section.clone(), (*name).clone())))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            if !section_kept.is_empty() {
                out.insert(section.clone(), Value::Object(section_kept));
            }
        }
        out
    }
}

/// Top-level keys of the base document the output does not copy as they are: `paths`
/// and `components` are rebuilt from what is exposed; webhooks are calls the provider
/// makes, which an agent never receives (`x-webhooks` is how 3.0 documents write them).
const DROPPED_ROOT_KEYS: [&str; 4] = ["paths", "components", "webhooks", "x-webhooks"];

/// Every `$ref` (and discriminator mapping target) in `value`, with the pointer of the
/// node that holds it. `pointer` is `value`'s own pointer, restored on return.
fn collect_refs(value: &Value, pointer: &mut String, out: &mut Vec<(String, String)>) {
    match value {
        Value::Object(map) => collect_map_refs(map, pointer, out),
        Value::Array(list) => {
            for (i, child) in list.iter().enumerate() {
                let len = pointer.len();
                pointer.push_str(&format!("/{i}"));
                collect_refs(child, pointer, out);
                pointer.truncate(len);
            }
        }
        _ => {}
    }
}

/// `collect_refs` over the entries of a mapping (`pointer` is the mapping's own).
fn collect_map_refs(
    map: &Map<String, Value>,
    pointer: &mut String,
    out: &mut Vec<(String, String)>,
) {
    for (key, child) in map {
        let len = pointer.len();
        pointer.push('/');
        pointer.push_str(&escape(key));
        match (key.as_str(), child) {
            ("$ref", Value::String(reference)) => {
                out.push((reference.clone(), pointer.clone()));
            }
            ("mapping", Value::Object(mapping)) if map.contains_key("propertyName") => {
                for (k, target) in mapping {
                    let Value::String(target) = target else {
                        continue;
                    };
                    // A mapping value is a reference, or a bare schema name.
                    let reference = if target.contains(['#', '/', '.']) {
                        target.clone()
                    } else {
                        format!("#/components/schemas/{}", escape(target))
                    };
                    out.push((reference, format!("{pointer}/{}", escape(k))));
                }
            }
            _ => collect_refs(child, pointer, out),
        }
        pointer.truncate(len);
    }
}

/// The parameters of an operation (its path item's shared ones, then its own, each
/// through its `$ref`) that have no non-empty `name`, no `in` a parameter can have, or
/// repeat a name and location in the same list: (pointer, reason) for each.
fn parameter_problems(
    base: &Base,
    path: &str,
    pointer: &str,
    op: &Map<String, Value>,
) -> Vec<(String, String)> {
    let item = base.path_item(path).and_then(|item| item.get("parameters"));
    let lists = [
        (format!("/paths/{}/parameters", escape(path)), item),
        (format!("{pointer}/parameters"), op.get("parameters")),
    ];
    let mut out = Vec::new();
    for (at, list) in lists {
        let Some(list) = list else { continue };
        let Some(list) = list.as_array() else {
            out.push((at, "`parameters` is not a list".to_string()));
            continue;
        };
        let mut seen: HashSet<(String, &str)> = HashSet::new();
        for (i, p) in list.iter().enumerate() {
            let at = format!("{at}/{i}");
            let p = match p.get("$ref").and_then(Value::as_str) {
                // An unresolved reference is reported where references are checked.
                Some(reference) => match base.resolve(reference) {
                    Some(target) => target,
                    None => continue,
                },
                None => p,
            };
            let name = p.get("name").and_then(Value::as_str).map(str::trim);
            let location = p.get("in").and_then(Value::as_str);
            let reason = match (name, location) {
                (None | Some(""), Some(l)) => Some(format!("a {l} parameter has no `name`")),
                (None | Some(""), None) => {
                    Some("a parameter has no `name` and no `in`".to_string())
                }
                (Some(n), Some(l @ ("path" | "query" | "header" | "cookie"))) => {
                    // Header names compare without case.
                    let key = if l == "header" {
                        n.to_ascii_lowercase()
                    } else {
                        n.to_string()
                    };
                    (!seen.insert((key, l)))
                        .then(|| format!("the {l} parameter `{n}` is declared twice"))
                }
                (Some(n), Some(l)) => Some(format!(
                    "the parameter `{n}` is `in: {l}`, which is not path, query, header or cookie"
                )),
                (Some(n), None) => Some(format!("the parameter `{n}` has no `in`")),
            };
            out.extend(reason.map(|r| (at, r)));
        }
    }
    out
}

/// `operation:` names one operation by its operationId and another by its route.
fn ambiguous(
    name: &Spanned<String>,
    by_id: &crate::base::BaseOperation,
    by_route: &crate::base::BaseOperation,
) -> Diagnostic {
    let route = by_route.route();
    let other_name = match &by_route.operation_id {
        Some(id) => format!("`operation: {id}` (its operationId)"),
        None => {
            "no name: it has no operationId, and its route is taken; give it one in the document"
                .to_string()
        }
    };
    Diagnostic::AmbiguousBaseOperation {
        name: name.value.trim().to_string(),
        by_id: by_id.route(),
        by_route: route,
        span: span(name),
        help: format!(
            "name the one you mean by a name only it has: for `{}`, `operation: \"{}\"` (its route); for `{}`, {other_name}",
            by_id.route(),
            by_id.route(),
            by_route.route(),
        ),
    }
}

/// Server URLs without a trailing slash: paths start with `/`, and a client that appends
/// one to `https://api.stripe.com/` calls `https://api.stripe.com//v1/…`.
fn trim_server_slashes(root: &mut Map<String, Value>) {
    let mut lists: Vec<&mut Value> = Vec::new();
    let (servers, paths) = {
        let mut servers = None;
        let mut paths = None;
        for (key, value) in root.iter_mut() {
            match key.as_str() {
                "servers" => servers = Some(value),
                "paths" => paths = Some(value),
                _ => {}
            }
        }
        (servers, paths)
    };
    lists.extend(servers);
    for item in paths.and_then(Value::as_object_mut).into_iter().flatten() {
        if let Some(servers) = item.1.get_mut("servers") {
            lists.push(servers);
        }
    }
    for list in lists {
        for server in list.as_array_mut().into_iter().flatten() {
            if let Some(Value::String(url)) = server.get_mut("url")
                && url.len() > 1
                && url.ends_with('/')
                && !url.ends_with("//")
            {
                url.pop();
            }
        }
    }
}

/// The `{name}` segments of a path template, in order, as written.
fn template_params(path: &str) -> Vec<String> {
    path.split('{')
        .skip(1)
        .filter_map(|rest| rest.split_once('}').map(|(name, _)| name.to_string()))
        .collect()
}

/// Longest summary used as it is; a longer one is the operation's text, not its summary.
const SUMMARY_MAX: usize = 120;

fn is_short(text: &str) -> bool {
    let text = plain(text);
    text.chars().count() <= SUMMARY_MAX && crate::english::sentences(&text).len() <= 1
}

/// The text without HTML tags (Stripe writes `<p>…</p>`), on one line. A `<` opens a
/// tag only before a letter, `/` or `!`: "count < 10" is text.
fn plain(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_tag = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let opens = c == '<'
            && !in_tag
            && chars
                .peek()
                .is_some_and(|n| n.is_ascii_alphabetic() || matches!(n, '/' | '!'));
        match c {
            '<' if opens => in_tag = true,
            '>' if in_tag => {
                in_tag = false;
                out.push(' ');
            }
            _ if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The first sentence of a text, as a summary of last resort (without its full stop,
/// and clipped at a word).
fn first_sentence(text: &str) -> String {
    let text = plain(text);
    let first = crate::english::sentences(&text)
        .first()
        .map_or(String::new(), |s| s.trim_end_matches('.').to_string());
    crate::english::clip(&first, SUMMARY_MAX)
}

/// "Stripe API" → "Stripe": the name prose uses, from the document's title.
fn service_name(title: &str) -> String {
    let trimmed = title.trim();
    for suffix in [" REST API", " API", " Api"] {
        if let Some(name) = trimmed.strip_suffix(suffix)
            && !name.trim().is_empty()
        {
            return name.trim().to_string();
        }
    }
    trimmed.to_string()
}

/// The base document's first server as a usable base URL (its variables at their
/// defaults), or why there is none.
pub fn first_server(base: &Base) -> Result<String, String> {
    let Some(server) = base
        .root
        .get("servers")
        .and_then(Value::as_array)
        .and_then(|s| s.first())
    else {
        return Err("the base document lists no servers".to_string());
    };
    let url = server_url(server);
    check_url(&url).map_err(|reason| {
        format!("the base document's first server `{url}` is not a usable base URL: {reason}")
    })
}

/// A Server Object's URL with its variables at their defaults (not yet checked).
pub fn server_url(server: &Value) -> String {
    let mut url = server
        .get("url")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    for (name, variable) in server
        .get("variables")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        if let Some(default) = variable.get("default").and_then(Value::as_str) {
            url = url.replace(&format!("{{{name}}}"), default);
        }
    }
    url
}

/// The base `info` with `service:`'s title, version and description over it.
fn info(value: Value, service: &Service) -> Value {
    let Value::Object(mut info) = value else {
        return value;
    };
    let mut set = |key: &str, text: &str| {
        let same = info
            .get(key)
            .and_then(Value::as_str)
            .is_some_and(|t| t.trim() == text);
        if !same {
            info.insert(key.to_string(), Value::String(text.to_string()));
        }
    };
    set("title", &service.title);
    set("version", &service.version);
    set("description", &service.description);
    Value::Object(info)
}

/// The credential prose describes: among the security schemes the exposed operations
/// use, the one an agent platform handles most simply.
pub(in crate::validate) fn auth_scheme(document: &Document) -> AuthScheme {
    let schemes = document
        .root
        .get("components")
        .and_then(|c| c.get("securitySchemes"))
        .and_then(Value::as_object);
    let mut found: Vec<AuthScheme> = schemes
        .into_iter()
        .flatten()
        .filter_map(|(_, scheme)| {
            let kind = scheme.get("type").and_then(Value::as_str)?;
            Some(match kind {
                "http" => match scheme
                    .get("scheme")
                    .and_then(Value::as_str)
                    .map(str::to_ascii_lowercase)
                    .as_deref()
                {
                    Some("bearer") => AuthScheme::Bearer,
                    Some("basic") => AuthScheme::Basic,
                    _ => return None,
                },
                "apiKey" => AuthScheme::ApiKey {
                    location: scheme
                        .get("in")
                        .and_then(Value::as_str)
                        .unwrap_or("header")
                        .to_string(),
                    name: scheme
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                },
                "oauth2" => AuthScheme::OAuth2,
                "openIdConnect" => AuthScheme::OpenIdConnect,
                _ => return None,
            })
        })
        .collect();
    let rank = |s: &AuthScheme| match s {
        AuthScheme::Bearer => 0,
        AuthScheme::ApiKey { location, .. } if location == "header" => 1,
        AuthScheme::ApiKey { .. } => 2,
        AuthScheme::Basic => 3,
        AuthScheme::OAuth2 => 4,
        AuthScheme::OpenIdConnect => 5,
        AuthScheme::None => 6,
    };
    found.sort_by_key(rank);
    found.into_iter().next().unwrap_or(AuthScheme::None)
}

/// Whether every OAuth 2 security scheme of the document offers only the
/// client-credentials flow: the connector, not a person, obtains the tokens, so there is
/// no sign-in to describe.
pub(in crate::validate) fn client_credentials_only(document: &Document) -> bool {
    let schemes = document
        .root
        .get("components")
        .and_then(|c| c.get("securitySchemes"))
        .and_then(Value::as_object);
    let flows: Vec<&Map<String, Value>> = schemes
        .into_iter()
        .flatten()
        .filter(|(_, s)| s.get("type").and_then(Value::as_str) == Some("oauth2"))
        .filter_map(|(_, s)| s.get("flows").and_then(Value::as_object))
        .collect();
    !flows.is_empty()
        && flows
            .iter()
            .all(|f| !f.is_empty() && f.keys().all(|k| k == "clientCredentials"))
}

/// Whether `name` ("query /search") is `route` ("QUERY /search"): the method in any
/// case, the path as written.
fn same_route(route: &str, name: &str) -> bool {
    let split = |t: &str| {
        t.trim()
            .split_once(char::is_whitespace)
            .map(|(m, p)| (m.to_string(), p.trim().to_string()))
    };
    match (split(route), split(name)) {
        (Some((m1, p1)), Some((m2, p2))) => m1.eq_ignore_ascii_case(&m2) && p1 == p2,
        _ => false,
    }
}

/// Where a list key is: its first item, else the operation (an empty list).
fn first_or<T>(list: &Option<Vec<Spanned<T>>>, at: Span) -> Option<Span> {
    list.as_ref().map(|l| l.first().map_or(at, span))
}

#[cfg(test)]
mod tests {
    use super::plain;

    #[test]
    fn plain_strips_tags_but_keeps_comparisons() {
        assert_eq!(plain("<p>Lists <b>all</b> items.</p>"), "Lists all items.");
        assert_eq!(
            plain("Items with count < 10 and size <= 3."),
            "Items with count < 10 and size <= 3."
        );
        assert_eq!(plain("a <!-- note --> b"), "a b");
        assert_eq!(plain("x <5 y"), "x <5 y");
    }
}
