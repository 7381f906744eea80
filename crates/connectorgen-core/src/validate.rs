//! Raw manifest (and, in base mode, the provider's OpenAPI document) → validated `Connector`.
//!
//! Takes: a parsed `RawManifest` and, when it names one with `openapi:`, the parsed
//! `Base`. Returns: the `Connector` model, or every problem found (it never stops at the
//! first one), each pointing at the YAML node at fault — or, for a problem inside the
//! provider's document, at the place in that file. Inline JSON Schemas are moved out of
//! the raw manifest into the model, not copied; a schema's span stays in place.
//! Must never: let through a manifest that would mislead a model — a poll target that
//! is not a free read, a GET that spends or starts a job, a body on a GET. Defaults are
//! applied here, once, after checking, and nowhere else.
//!
//! Both kinds of manifest end in the same model, by mode: `inline/` checks and lowers
//! the operations a manifest writes out, `base/` lays the safety layer over the
//! provider's operations and keeps the document around them. Both call `safety/` for
//! the safety keys (`spends`, `async`, `confirm`, `idempotency`, the poll targets) and
//! for the one constructor of the model's `Operation`. Here: the driver, `validate`, and
//! the rules that compare operations (ids, routes; poll targets in `safety/jobs.rs`) and
//! the targets' naming rules, written once for both. `findings.rs` is the list of
//! findings, `settings.rs` the manifest-wide settings (`targets:`, `lint:`, and what
//! inline operations are checked against), `document.rs` the manifest-wide keys
//! (`auth:`, and in inline mode `schemas:`, `servers:`, `errors:`), `credential.rs` the
//! credential's parts (`auth.parts`, `format`, a base document's security requirement,
//! what a target cannot carry), `syntax.rs` the
//! leaf checks both modes share (ids, paths, URLs).

mod base;
mod credential;
mod document;
mod findings;
mod inline;
mod safety;
mod security;
mod settings;
mod syntax;

use serde_saphyr::Spanned;

use base::{document as base_document, servers, upgrade};
use findings::Findings;
use inline::lower;
use settings::Settings;
use syntax::{agent_id_problem, check_link, path_shape};
// What `import` predicts about a base document, by the same rules validation applies.
pub use base::service::{first_server, server_url};
pub use safety::candidates::{base_candidates, declared_key, retired_key};
pub use syntax::{check_url, is_identifier};

use crate::base::Base;
use crate::diagnostics::{Diagnostic, Finding, Span};
use crate::manifest::{RawManifest, RawOperation, RawService, span};
use crate::model::Names as _;
use crate::model::{Auth, AuthScheme, Connector, Method, Operation, Service, Target};

/// Checks a raw manifest and builds the model from it. Each valid inline JSON Schema is
/// taken out of `raw` (left `null`, its span kept), whether or not the whole manifest is
/// valid. `base` is the document `openapi:` names, already read and parsed.
pub fn validate(
    raw: &mut Spanned<RawManifest>,
    base: Option<&Base>,
) -> Result<(Connector, Vec<Finding>), Vec<Finding>> {
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
        Some(ver) if ver.value != 1 => v.findings.push(Diagnostic::UnsupportedVersion {
            found: ver.value.to_string(),
            span: span(ver),
        }),
        Some(_) => {}
    }

    let mut public_url_given = false;
    let service = match (&raw.service, base) {
        (Some(s), Some(base)) => v.base_service(s, base).map(|(service, given)| {
            public_url_given = given;
            service
        }),
        (None, Some(_)) => {
            v.missing(
                "service",
                "the manifest",
                root,
                "add `service:` with at least `dashboardUrl: https://…` (where the person creates API keys); every other field defaults to the base document",
            );
            None
        }
        (None, None) => {
            v.missing(
                "service",
                "the manifest",
                root,
                "add a `service:` mapping with name, version, description, publicUrl and dashboardUrl",
            );
            None
        }
        (Some(s), None) => v.service(s),
    };

    let credential = v.credential(raw.auth.as_ref(), base.is_some());
    if let Some(AuthScheme::ApiKey { location, name }) = &credential.scheme
        && location == "header"
    {
        v.settings.api_key_header = Some(name.clone());
    }
    let mut servers = Vec::new();
    let mut contact = None;
    let mut license = None;
    let mut tags = Vec::new();
    if base.is_some() {
        v.no_inline_document_keys(raw);
    } else {
        v.settings.error_responses = v.error_model(&mut raw.errors);
        // Shared schemas first: the errors' and operations' references resolve against them.
        let reserve = matches!(v.settings.error_responses, lower::Errors::Problem);
        v.settings.shared = v.shared_schemas(&mut raw.schemas, reserve);
        if let Some(errors) = &raw.errors
            && let (Some(schema), lower::Errors::Provider { schema: body, .. }) =
                (&errors.value.schema, &v.settings.error_responses)
        {
            inline::refs(&mut v.findings, body, &v.settings.shared, span(schema));
        }
        servers = v.servers(raw.servers.as_deref().unwrap_or_default());
        tags = v.tag_descriptions(raw.tags.as_ref());
        if let Some(s) = &raw.service {
            contact = v.info_object(s.value.contact.as_ref(), "contact");
            license = v.info_object(s.value.license.as_ref(), "license");
        }
    }

    let checked = match &mut raw.operations {
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
                v.findings
                    .push(Diagnostic::NoOperations { span: span(ops) });
            }
            match base {
                Some(base) => v.base_operations(&ops.value, base),
                None => v.inline_operations(&mut ops.value),
            }
        }
    };
    v.cross_operation(&checked);

    let sandbox_url = raw
        .probe
        .as_ref()
        .and_then(|p| p.value.sandbox_url.as_ref())
        .and_then(|url| v.check_url(url, "probe.sandboxUrl"));
    let lint = v.lint_config(raw.lint.as_ref());
    let targets = v.targets(raw.targets.as_ref());
    v.ids_for_targets(&checked, &targets);

    let mut operations: Vec<Operation> = checked.into_iter().map(|c| c.op).collect();
    safety::link_lists(&mut operations);
    // In base mode the document is built (and its references checked) even when
    // `service` has problems, so that every problem is reported at once.
    let built = match base {
        Some(base) => {
            let mut document =
                v.base_document(base, service.as_ref(), public_url_given, &operations);
            if base.version != crate::model::OpenapiVersion::V32 {
                v.repair_media_type_refs(base, &mut document.root, &mut operations);
            }
            // Checked as the provider's version, repairs made, before any conversion.
            v.check_base_schema(base, &document.root, &operations);
            if base.version == crate::model::OpenapiVersion::V32 {
                v.downgrade_32(base, &mut document.root, &mut operations);
            }
            if public_url_given {
                servers::replace(&mut document, &mut operations);
            } else if let Some(warning) = servers::mixed(&document, &operations) {
                v.findings.add(warning);
            }
            if base.version == crate::model::OpenapiVersion::V30 {
                upgrade::to_31(
                    &mut document.root,
                    operations.iter_mut().map(|op| &mut op.http),
                );
            }
            v.drop_invalid_examples(base, &mut document.root, &mut operations);
            v.repair_duplicate_titles(base, &mut document.root, &mut operations);
            let declares = document
                .root
                .get("components")
                .and_then(|c| c.get("securitySchemes"))
                .and_then(serde_json::Value::as_object)
                .is_some_and(|s| !s.is_empty());
            if declares {
                for (key, at) in &credential.base_keys {
                    v.findings
                        .push(Diagnostic::InlineKeyWithBase { key, span: *at });
                }
            }
            let chosen = base_document::auth_scheme(&document);
            let service_name = service.as_ref().map_or("", |s| s.name.as_str());
            let (parts, named) = v.base_parts(
                &credential,
                &mut document,
                &mut operations,
                service_name,
                &chosen,
            );
            let operation_credentials = security::operation_credentials(
                &document,
                &operations,
                &parts,
                credential.parts.as_deref().unwrap_or_default(),
                service_name,
            );
            let scheme = credential::scheme_of(&parts, named.unwrap_or(chosen));
            let client_credentials =
                scheme == AuthScheme::OAuth2 && base_document::client_credentials_only(&document);
            let auth = Auth {
                format: single_format(&parts),
                parts,
                span: credential.span,
                scheme,
                token_prefixes: credential.token_prefixes,
                credential_name: credential.credential_name.unwrap_or_else(|| {
                    if client_credentials {
                        "OAuth client"
                    } else {
                        "API key"
                    }
                    .to_string()
                }),
                client_credentials,
                env: credential.env.clone().unwrap_or_default(),
                env_span: credential.env_span,
                operations: operation_credentials,
            };
            Some((document, auth))
        }
        None => match (&service, credential.scheme.clone()) {
            (Some(service), Some(scheme)) => {
                let parts = v.inline_parts(&credential, &scheme, &service.name);
                let scheme = credential::scheme_of(&parts, scheme);
                let mut auth = Auth {
                    format: single_format(&parts),
                    parts,
                    span: credential.span,
                    scheme,
                    token_prefixes: credential.token_prefixes,
                    credential_name: credential
                        .credential_name
                        .unwrap_or_else(|| "connector token".to_string()),
                    client_credentials: false,
                    env: credential.env.clone().unwrap_or_default(),
                    env_span: credential.env_span,
                    operations: std::collections::BTreeMap::new(),
                };
                let around = lower::Around {
                    service,
                    auth: &auth,
                    servers,
                    contact,
                    license,
                    tags,
                    schemas: std::mem::take(&mut v.settings.shared),
                    errors: &v.settings.error_responses,
                };
                let document = lower::document(around, &operations);
                // An `openapi:` fragment's `security: []` sends no credential.
                auth.operations = security::operation_credentials(
                    &document,
                    &operations,
                    &auth.parts,
                    &[],
                    &service.name,
                );
                for (reference, at) in std::mem::take(&mut v.fragment_refs) {
                    if document.resolve(&reference).is_none() {
                        v.findings.push(Diagnostic::UnresolvedRef {
                            reference,
                            reason: "an `openapi:` fragment may point at `#/components/schemas/<name>` (from `schemas:`) or `#/components/responses/<name>` (the error responses), and nothing else is in the generated document".to_string(),
                            span: at,
                        });
                    }
                }
                Some((document, auth))
            }
            _ => None,
        },
    };
    let (Some(service), Some((document, auth))) = (service, built) else {
        return Err(v.findings.into_vec());
    };
    // The answers' schemas are final only in the built document (references resolved,
    // a 3.0 base upgraded).
    v.job_ids(&document, &mut operations);
    if v.findings.errors() > 0 {
        return Err(v.findings.into_vec());
    }
    let mut auth = auth;
    if auth.env.is_empty() {
        auth.env = crate::model::credential_env(&service.name);
    }
    let at = auth
        .span
        .or_else(|| raw.openapi.as_ref().map(span))
        .unwrap_or(root);
    v.duplicate_parts(&auth.parts, at, "the credential");
    for (id, own) in &auth.operations {
        if let crate::model::OperationCredential::Parts(parts) = own {
            v.duplicate_parts(parts, at, &format!("the credential of `{id}`"));
        }
    }
    if v.findings.errors() > 0 {
        return Err(v.findings.into_vec());
    }
    v.credential_targets(&auth, &targets, at);
    if let Some(sandbox) = &sandbox_url
        && let Some(production) = production_twin(sandbox, &service.public_url, &document)
    {
        let at = raw
            .probe
            .as_ref()
            .and_then(|p| p.value.sandbox_url.as_ref())
            .map_or(root, span);
        v.findings.push(Diagnostic::SandboxIsProduction {
            url: sandbox.clone(),
            production,
            span: at,
        });
        return Err(v.findings.into_vec());
    }
    let connector = Connector {
        service,
        auth,
        document,
        operations,
        lint,
        targets,
        templates_dir: raw.templates.as_ref().map(|t| (t.value.clone(), span(t))),
        schema_spans: v.schema_spans,
        sandbox_url,
    };
    // What is left are warnings (an unknown schema keyword): the manifest is valid.
    Ok((connector, v.findings.into_vec()))
}

/// Which production URL `sandbox` is (`service.publicUrl` or the document's first
/// server), compared without case in scheme and host and without a trailing `/`.
fn production_twin(
    sandbox: &str,
    public_url: &str,
    document: &crate::model::Document,
) -> Option<&'static str> {
    let same = |a: &str, b: &str| {
        let norm = |u: &str| {
            let u = u.trim().trim_end_matches('/');
            match u.split_once("://") {
                Some((scheme, rest)) => {
                    let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
                    format!(
                        "{}://{}{path}",
                        scheme.to_ascii_lowercase(),
                        host.to_ascii_lowercase()
                    )
                }
                None => u.to_string(),
            }
        };
        norm(a) == norm(b)
    };
    if same(sandbox, public_url) {
        return Some("service.publicUrl");
    }
    let first = document
        .root
        .get("servers")
        .and_then(|s| s.get(0))
        .and_then(|s| s.get("url"))
        .and_then(serde_json::Value::as_str);
    first
        .filter(|f| same(sandbox, f))
        .map(|_| "the first server")
}

/// A one-part credential's author-written `format` (bearer's and basic's are implied).
fn single_format(parts: &[crate::model::CredentialPart]) -> Option<String> {
    match parts {
        [one] if !one.basic && one.format.as_deref() != Some("Bearer {value}") => {
            one.format.clone()
        }
        _ => None,
    }
}

/// What one validation carries from check to check: the findings, the manifest-wide
/// settings the operations are checked against, and what has been seen so far.
#[derive(Default)]
struct Validator {
    findings: Findings,
    settings: Settings,
    /// Where the schemas already checked against the meta-schema are defined.
    checked: std::collections::HashSet<usize>,
    /// Where each of `schemas:` is defined.
    schema_spans: Vec<(String, Span)>,
    /// Inline mode: the `$ref`s of `openapi:` fragments and where each fragment is,
    /// resolved once the whole document (with its error responses) exists.
    fragment_refs: Vec<(String, Span)>,
}

/// An operation with a usable id, method and path, for cross-operation checks. When its
/// other fields had problems, `op` holds placeholders there and is never rendered.
struct Checked<'a> {
    op: Operation,
    raw: &'a Spanned<RawOperation>,
    /// `async.pollWith` as written, and where.
    poll: Option<(String, Span)>,
}

impl<'a> Checked<'a> {
    fn new(op: Operation, raw: &'a Spanned<RawOperation>) -> Self {
        Checked {
            op,
            raw,
            poll: poll_of(&raw.value),
        }
    }

    /// From the raw fields, so a target whose `spends` block is itself invalid still counts.
    fn spends(&self) -> bool {
        self.raw.value.spends.is_some()
    }

    fn is_async(&self) -> bool {
        self.raw.value.async_.is_some()
    }

    /// A GET, or declared `read: true`: from the raw field too, so a read whose entry
    /// has problems elsewhere is not also called an unsafe poll target.
    fn is_read(&self) -> bool {
        self.op.method == Method::Get || self.raw.value.read.as_ref().is_some_and(|r| r.value)
    }
}

fn poll_of(raw: &RawOperation) -> Option<(String, Span)> {
    let p = raw.async_.as_ref()?.value.poll_with.as_ref()?;
    Some((p.value.trim().to_string(), span(p)))
}

impl Validator {
    fn missing(&mut self, key: &'static str, context: &'static str, at: Span, help: &str) {
        self.findings.push(Diagnostic::MissingKey {
            key,
            context,
            span: at,
            help: help.to_string(),
        });
    }

    /// A required, non-empty text; returns it trimmed.
    fn text(
        &mut self,
        value: Option<&Spanned<String>>,
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
            self.findings.push(Diagnostic::EmptyText {
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
            raw.name.as_ref(),
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
            raw.version.as_ref(),
            "version",
            ctx,
            at,
            "give the connector's version, e.g. `version: 1.0.0`",
        );
        let description = self.text(
            raw.description.as_ref(),
            "description",
            ctx,
            at,
            "write one paragraph: who this connector is for and what it does",
        );
        let public_url = self.url(raw.public_url.as_ref(), "publicUrl", at);
        let dashboard_url = self.url(raw.dashboard_url.as_ref(), "dashboardUrl", at);
        let spec_url = self.link(raw.spec_url.as_ref(), "specUrl");
        let docs_url = self.link(raw.docs_url.as_ref(), "docsUrl");
        let name = name?;
        let title = match title {
            Some(t) => t?,
            None => format!("{name} Connector"),
        };
        let description = description?;
        Some(Service {
            title,
            name,
            version: version?,
            summary: description.clone(),
            description,
            spec_url: spec_url?,
            docs_url: docs_url?,
            public_url: public_url?,
            dashboard_url: dashboard_url?,
        })
    }

    /// An optional link of `service:` (`specUrl`, `docsUrl`) checked, if given
    /// (`Some(None)` when it is not; `None` when it is bad).
    #[expect(
        clippy::option_option,
        reason = "absent, bad (reported) or good: `?` on the outer one stops the service"
    )]
    fn link(&mut self, url: Option<&Spanned<String>>, key: &'static str) -> Option<Option<String>> {
        match url {
            Some(url) => self.check_url(url, key).map(Some),
            None => Some(None),
        }
    }

    fn url(
        &mut self,
        value: Option<&Spanned<String>>,
        key: &'static str,
        parent: Span,
    ) -> Option<String> {
        let Some(value) = value else {
            self.missing(key, "`service`", parent, &format!("add `{key}: https://…`"));
            return None;
        };
        self.check_url(value, key)
    }

    /// `publicUrl` is a base URL, which clients append paths to: no query or fragment.
    /// Every other URL is a link (a page the person opens, a file the model reads) and
    /// may carry both.
    fn check_url(&mut self, value: &Spanned<String>, key: &'static str) -> Option<String> {
        let checked = if matches!(key, "publicUrl" | "probe.sandboxUrl") {
            check_url(value.value.trim())
        } else {
            check_link(value.value.trim())
        };
        match checked {
            Ok(url) => Some(url),
            Err(reason) => {
                self.findings.push(Diagnostic::BadUrl {
                    key,
                    reason,
                    span: span(value),
                });
                None
            }
        }
    }

    /// The rules that compare operations: unique ids, unique routes (inline), one
    /// spelling per path (inline), and poll targets that are free, safe reads.
    fn cross_operation(&mut self, checked: &[Checked]) {
        // The manifest's own names: foldhash (Cargo.toml says why that is safe here).
        use foldhash::HashMapExt as _;
        let mut ids: foldhash::HashMap<&str, Span> =
            foldhash::HashMap::with_capacity(checked.len());
        // Keyed by method and the path with parameter names blanked: OpenAPI treats
        // `/a/{id}` and `/a/{name}` as the same path.
        let mut routes: foldhash::HashMap<(Method, String), Span> =
            foldhash::HashMap::with_capacity(checked.len());
        let mut shapes: foldhash::HashMap<String, &str> =
            foldhash::HashMap::with_capacity(checked.len());
        for c in checked {
            match ids.get(c.op.id.as_str()) {
                Some(first) => self.findings.push(Diagnostic::DuplicateOperationId {
                    id: c.op.id.clone(),
                    span: c.op.origin.id,
                    first: *first,
                }),
                None => {
                    ids.insert(&c.op.id, c.op.origin.id);
                }
            }
            // A base document's routes are unique by construction (each is listed once).
            if c.raw.value.operation.is_some() {
                continue;
            }
            let shape = path_shape(&c.op.path);
            let path_span = c.op.origin.path;
            match shapes.get(&shape) {
                Some(literal) if *literal != c.op.path => self.findings.push(Diagnostic::InvalidPath {
                    path: c.op.path.clone(),
                    reason: format!(
                        "another operation declares the same path as `{literal}`; use the same parameter names"
                    ),
                    span: path_span,
                }),
                Some(_) => {}
                None => {
                    shapes.insert(shape.clone(), &c.op.path);
                }
            }
            match routes.get(&(c.op.method, shape.clone())) {
                Some(first) => self.findings.push(Diagnostic::DuplicateRoute {
                    method: c.op.method.upper().to_string(),
                    path: c.op.path.clone(),
                    span: path_span,
                    first: *first,
                }),
                None => {
                    routes.insert((c.op.method, shape), path_span);
                }
            }
        }
        self.poll_targets(checked);
    }

    /// Every chosen target can call every operation by its id.
    fn ids_for_targets(&mut self, checked: &[Checked], targets: &[Target]) {
        for c in checked {
            for target in targets {
                if let Some(reason) = agent_id_problem(&c.op.id, *target) {
                    let from_base = c.raw.value.operation.is_some() && c.raw.value.id.is_none();
                    let help = if from_base {
                        "the id comes from the base document's operationId: set `id:` on this entry to a name the target accepts, e.g. `createPrediction`".to_string()
                    } else {
                        format!(
                            "rename the operation, or leave the {} target out: remove it from `targets`, or pass `--target` without it for one run",
                            target.as_str()
                        )
                    };
                    self.findings.push(Diagnostic::IdNotForTarget {
                        id: c.op.id.clone(),
                        by: format!("by the {} target", target.as_str()),
                        reason: reason.to_string(),
                        span: c.op.origin.id,
                        help,
                    });
                }
            }
        }
    }
}
