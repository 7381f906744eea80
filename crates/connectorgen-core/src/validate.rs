//! Raw manifest (and, in base mode, the provider's OpenAPI document) → validated `Connector`.
//!
//! Takes: a parsed `RawManifest` and, when it names one with `openapi:`, the parsed
//! `Base`. Returns: the `Connector` model, or every problem found (it never stops at the
//! first one), each pointing at the YAML node at fault — or, for a problem inside the
//! provider's document, at the place in that file. Inline JSON Schemas are moved out of
//! the raw manifest into the model, not copied, and each raw operation is dropped once
//! checked.
//! Must never: let through a manifest that would mislead a model — a poll target that
//! is not a free read, a GET that spends or starts a job, a body on a GET. Defaults are
//! applied here, once, after checking, and nowhere else.
//!
//! Here is only the driver: one list of passes per mode (`inline_passes`,
//! `base_passes`), then the passes both modes end with (`last_passes`), each a free
//! function taking the `Validator` (`context.rs`: the findings and what passes share)
//! and what it reads. A pass's findings come in the order the list runs it, so a new
//! pass is one line where its findings belong. Each mode checks the manifest-wide keys,
//! then every operation, then compares the operations, and ends with its lowering stage:
//! `inline.rs`'s `lowered` writes the document around the operations (`crate::lower`), and
//! `base.rs`'s builds it from the provider's, repaired and converted.
//!
//! `inline/` checks the operations a manifest writes out, `base/` lays the safety layer
//! over the provider's operations; both call `safety/` for the safety keys (`spends`,
//! `async`, `confirm`, `idempotency`, the poll targets) and for the one constructor of
//! the model's `Operation`. `operations.rs` compares the operations (ids, routes; poll
//! targets in `safety/jobs.rs`), `findings.rs` is the list of findings, `settings.rs`
//! the manifest-wide settings (`targets:`, `lint:`, `probe.sandboxUrl`, and what inline
//! operations are checked against), `document.rs` the manifest-wide keys (`auth:`, and
//! in inline mode `schemas:`, `servers:`, `errors:`), `credential.rs` the credential's
//! parts (`auth.parts`, `format`, a base document's security requirement, what a target
//! cannot carry), `auth.rs` the model's `Auth` from them, `security.rs` each
//! operation's own credential, `syntax.rs` the leaf checks both modes share (ids,
//! paths, URLs), `openapi_objects.rs` the structure OpenAPI defines for each version
//! (a base document's exposed part, an inline operation's merged fragment).

mod auth;
mod base;
mod context;
mod credential;
mod document;
mod findings;
mod inline;
mod openapi_objects;
mod operations;
mod per_person;
mod safety;
mod security;
mod settings;
mod syntax;

use serde_saphyr::Spanned;

// What `import` predicts about a base document, by the same rules validation applies.
pub use base::service::first_server;
pub use safety::candidates::{base_candidates, declared_key, retired_key};
pub use syntax::{check_url, is_identifier};

use base::operation::base_operations;
use context::{Checked, Validator, missing};
use credential::{credential_targets, unique_parts};
use document::{api_key_header, credential, inline_keys, no_inline_document_keys};
use inline::operation::inline_operations;
use operations::{cross_operation, ids_for_targets};
use per_person::per_person;
use safety::amounts;
use safety::jobs::job_ids;
use safety::tasks::job_tasks;
use settings::{Wide, oauth_scopes, sandbox_apart, wide};

use crate::base::Base;
use crate::diagnostics::{Diagnostic, Finding, Span};
use crate::manifest::{RawEntry, RawManifest, span};
use crate::model::{Auth, Connector, Document, Operation, Service};

/// Checks a raw manifest and builds the model from it. The entries of `operations:` are
/// taken out of `raw` (each inline JSON Schema moved into the model, the rest dropped
/// once checked), whether or not the whole manifest is valid. `base` is the document
/// `openapi:` names, already read and parsed.
pub fn validate(
    raw: &mut Spanned<RawManifest>,
    base: Option<&Base>,
) -> Result<(Connector, Vec<Finding>), Vec<Finding>> {
    let v = &mut Validator::default();
    let root = span(raw);
    let raw = &mut raw.value;
    let built = match base {
        None => inline_passes(v, raw, root),
        Some(base) => base_passes(v, raw, root, base),
    };
    let connector = built.and_then(|built| last_passes(v, raw, root, built));
    let findings = std::mem::take(&mut v.findings).into_vec();
    match connector {
        // What is left are warnings (an unknown schema keyword): the manifest is valid.
        Some(connector) => Ok((connector, findings)),
        None => Err(findings),
    }
}

/// What a mode's passes hand to the last ones: the model, but for its defaults.
struct Built {
    service: Service,
    document: Document,
    auth: Auth,
    operations: Vec<Operation>,
    wide: Wide,
}

/// Inline mode: every part of the document is written in the manifest. `None` when
/// `service:` or `auth:` is unusable (reported).
fn inline_passes(v: &mut Validator, raw: &mut RawManifest, root: Span) -> Option<Built> {
    version(v, raw, root);
    let service = inline::service::service(v, raw.service.as_ref(), root);
    let credential = credential(v, raw.auth.as_ref(), false);
    api_key_header(v, &credential);
    let keys = inline_keys(v, raw);
    let checked = operation_list(v, &mut raw.operations, root)
        .map_or_else(Vec::new, |ops| inline_operations(v, ops));
    cross_operation(v, &checked);
    let wide = wide(
        v,
        raw.probe.as_ref(),
        raw.lint.as_ref(),
        raw.targets.as_ref(),
        raw.mcp.as_ref(),
    );
    ids_for_targets(v, &checked, &wide.targets);
    let operations = linked(checked);
    let service = service?;
    let auth = auth::inline(v, credential, &service)?;
    let (document, auth) = inline::lowered(v, &service, auth, keys, &operations);
    Some(Built {
        service,
        document,
        auth,
        operations,
        wide,
    })
}

/// Base mode: the provider's document holds the operations and most of what is around
/// them; the manifest lays the safety layer over it. `None` when `service:` is
/// unusable (reported); the document is built and checked all the same.
fn base_passes(v: &mut Validator, raw: &mut RawManifest, root: Span, base: &Base) -> Option<Built> {
    version(v, raw, root);
    let (service, public_url_given) = base::service::service(v, raw.service.as_ref(), root, base);
    let credential = credential(v, raw.auth.as_ref(), true);
    no_inline_document_keys(v, raw);
    let checked = operation_list(v, &mut raw.operations, root)
        .map_or_else(Vec::new, |ops| base_operations(v, ops, base));
    cross_operation(v, &checked);
    let wide = wide(
        v,
        raw.probe.as_ref(),
        raw.lint.as_ref(),
        raw.targets.as_ref(),
        raw.mcp.as_ref(),
    );
    ids_for_targets(v, &checked, &wide.targets);
    let mut operations = linked(checked);
    let mut document = base::lowered(v, base, service.as_ref(), public_url_given, &mut operations);
    let auth = auth::base(
        v,
        credential,
        &mut document,
        &mut operations,
        service.as_ref(),
    );
    Some(Built {
        service: service?,
        document,
        auth,
        operations,
        wide,
    })
}

/// What both modes end with, on the built document. `None` at the first pass that
/// found an error: the later ones read what it checked.
fn last_passes(
    v: &mut Validator,
    raw: &RawManifest,
    root: Span,
    built: Built,
) -> Option<Connector> {
    let Built {
        service,
        document,
        mut auth,
        mut operations,
        wide,
    } = built;
    // The answers' schemas are final only in the built document (references resolved,
    // a 3.0 base upgraded).
    // The manifest's `mcp.output` where an operation writes none.
    for op in operations
        .iter_mut()
        .filter(|op| op.origin.mcp_output().is_none())
    {
        op.mcp_output = wide.mcp_output;
    }
    job_ids(v, &document, &mut operations);
    job_tasks(v, &document, &mut operations);
    amounts::arguments(v, &document, &mut operations);
    amounts::refunds(v, &operations);
    let budgets = amounts::budgets(v, raw.budgets.as_ref(), &operations);
    no_errors(v)?;
    if auth.env.is_empty() {
        auth.env = crate::model::credential_env(&service.name);
    }
    let at = auth
        .span
        .or_else(|| raw.openapi.as_ref().map(span))
        .unwrap_or(root);
    unique_parts(v, &auth, at);
    let oauth_scopes = oauth_scopes(v, raw.oauth.as_ref(), &service.name);
    let per_person = per_person(v, raw.auth.as_ref(), &auth, &document, &operations);
    no_errors(v)?;
    credential_targets(v, &auth, &wide.targets, at);
    if !sandbox_apart(v, &wide, raw.probe.as_ref(), &service, &document, root) {
        return None;
    }
    Some(Connector {
        service,
        auth,
        document,
        operations,
        lint: wide.lint,
        targets: wide.targets,
        templates_dir: raw.templates.as_ref().map(|t| (t.value.clone(), span(t))),
        schema_spans: std::mem::take(&mut v.schema_spans),
        sandbox_url: wide.sandbox_url,
        oauth_scopes,
        per_person,
        budgets,
    })
}

/// `Some` while no pass has found an error.
fn no_errors(v: &Validator) -> Option<()> {
    (v.findings.errors() == 0).then_some(())
}

/// `version: 1`, the only version there is.
fn version(v: &mut Validator, raw: &RawManifest, root: Span) {
    match &raw.version {
        None => missing(
            v,
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
}

/// `operations:`, a list with at least one entry; the list to check, when there is one.
fn operation_list<'a>(
    v: &mut Validator,
    raw: &'a mut Option<Spanned<Vec<RawEntry>>>,
    root: Span,
) -> Option<&'a mut Vec<RawEntry>> {
    let Some(ops) = raw else {
        missing(
            v,
            "operations",
            "the manifest",
            root,
            "add an `operations:` list with at least one operation",
        );
        return None;
    };
    if ops.value.is_empty() {
        v.findings
            .push(Diagnostic::NoOperations { span: span(ops) });
    }
    Some(&mut ops.value)
}

/// The checked operations as the model's, each one's lists of the others linked.
fn linked(checked: Vec<Checked>) -> Vec<Operation> {
    let mut operations: Vec<Operation> = checked.into_iter().map(|c| c.op).collect();
    safety::link_lists(&mut operations);
    operations
}
