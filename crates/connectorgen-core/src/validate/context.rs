//! What one validation carries from pass to pass, and the leaf checks every pass uses.
//!
//! Takes: nothing but what the passes hand it. Returns: `Validator` (the findings, the
//! settings inline operations are checked against, what has been seen so far), `Checked`
//! (an operation as the cross-operation passes see it), and the checks of one text or
//! URL that every pass calls (`missing`, `text`, `non_empty`, `url`, `link`,
//! `checked_url`).
//! Must never: import a pass (the passes import it), or decide anything about a whole
//! manifest.

use std::collections::HashSet;

use serde_saphyr::Spanned;

use super::findings::Findings;
use super::settings::Settings;
use super::syntax::{check_link, check_url};
use crate::diagnostics::{Diagnostic, Span};
use crate::manifest::{RawOperation, span};
use crate::model::{Method, Operation};

/// What one validation carries from check to check: the findings, the manifest-wide
/// settings the operations are checked against, and what has been seen so far.
#[derive(Default)]
pub(super) struct Validator {
    pub(super) findings: Findings,
    pub(super) settings: Settings,
    /// Where the schemas already checked against the meta-schema are defined.
    pub(super) checked: HashSet<usize>,
    /// Where each of `schemas:` is defined.
    pub(super) schema_spans: Vec<(String, Span)>,
    /// Inline mode: the `$ref`s of `openapi:` fragments and where each fragment is,
    /// resolved once the whole document (with its error responses) exists.
    pub(super) fragment_refs: Vec<(String, Span)>,
}

/// An operation with a usable id, method and path, for cross-operation checks. When its
/// other fields had problems, `op` holds placeholders there and is never rendered.
///
/// It keeps what those checks read of the entry as written, not the entry: each raw
/// operation is dropped as soon as it is checked, so what it held is reused by the
/// model of the next one (while every entry was kept to the end, a build's memory
/// peaked there).
pub(super) struct Checked {
    pub(super) op: Operation,
    written: Written,
    /// `async.pollWith` as written, and where.
    pub(super) poll: Option<(String, Span)>,
}

/// Which keys the entry wrote, whether or not their values were valid.
struct Written {
    spends: bool,
    is_async: bool,
    read: bool,
    entry: Entry,
}

/// Whose operation an entry is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Entry {
    /// Written out in the manifest.
    Inline,
    /// A base document's (`operation:`), under the `id:` the entry gives it.
    BaseRenamed,
    /// A base document's, under its own `operationId`.
    Base,
}

impl Checked {
    pub(super) fn new(op: Operation, raw: &Spanned<RawOperation>) -> Self {
        let raw = &raw.value;
        Checked {
            op,
            written: Written {
                spends: raw.spends.is_some(),
                is_async: raw.async_.is_some(),
                read: raw.read.as_ref().is_some_and(|r| r.value),
                entry: match (&raw.operation, &raw.id) {
                    (None, _) => Entry::Inline,
                    (Some(_), Some(_)) => Entry::BaseRenamed,
                    (Some(_), None) => Entry::Base,
                },
            },
            poll: poll_of(raw),
        }
    }

    /// From the raw fields, so a target whose `spends` block is itself invalid still counts.
    pub(super) fn spends(&self) -> bool {
        self.written.spends
    }

    pub(super) fn is_async(&self) -> bool {
        self.written.is_async
    }

    /// A GET, or declared `read: true`: from the raw field too, so a read whose entry
    /// has problems elsewhere is not also called an unsafe poll target.
    pub(super) fn is_read(&self) -> bool {
        self.op.method == Method::Get || self.written.read
    }

    /// Whether the entry names a base document's operation (`operation:`).
    pub(super) fn names_base(&self) -> bool {
        self.written.entry != Entry::Inline
    }

    /// Whether its id is the base document's `operationId` (no `id:` written).
    pub(super) fn has_base_id(&self) -> bool {
        self.written.entry == Entry::Base
    }
}

fn poll_of(raw: &RawOperation) -> Option<(String, Span)> {
    let p = raw.async_.as_ref()?.value.poll_with.as_ref()?;
    Some((p.value.trim().to_string(), span(p)))
}

pub(super) fn missing(
    v: &mut Validator,
    key: &'static str,
    context: &'static str,
    at: Span,
    help: &str,
) {
    v.findings.push(Diagnostic::MissingKey {
        key,
        context,
        span: at,
        help: help.to_string(),
    });
}

/// A required, non-empty text; returns it trimmed.
pub(super) fn text(
    v: &mut Validator,
    value: Option<&Spanned<String>>,
    key: &'static str,
    context: &'static str,
    parent: Span,
    help: &str,
) -> Option<String> {
    match value {
        None => {
            missing(v, key, context, parent, help);
            None
        }
        Some(s) => non_empty(v, s, key, help),
    }
}

pub(super) fn non_empty(
    v: &mut Validator,
    s: &Spanned<String>,
    key: &'static str,
    help: &str,
) -> Option<String> {
    let trimmed = s.value.trim();
    if trimmed.is_empty() {
        v.findings.push(Diagnostic::EmptyText {
            key,
            span: span(s),
            help: help.to_string(),
        });
        None
    } else {
        Some(trimmed.to_string())
    }
}

/// An optional link of `service:` (`specUrl`, `docsUrl`) checked, if given
/// (`Some(None)` when it is not; `None` when it is bad).
#[expect(
    clippy::option_option,
    reason = "absent, bad (reported) or good: `?` on the outer one stops the service"
)]
pub(super) fn link(
    v: &mut Validator,
    url: Option<&Spanned<String>>,
    key: &'static str,
) -> Option<Option<String>> {
    match url {
        Some(url) => checked_url(v, url, key).map(Some),
        None => Some(None),
    }
}

pub(super) fn url(
    v: &mut Validator,
    value: Option<&Spanned<String>>,
    key: &'static str,
    parent: Span,
) -> Option<String> {
    let Some(value) = value else {
        missing(
            v,
            key,
            "`service`",
            parent,
            &format!("add `{key}: https://…`"),
        );
        return None;
    };
    checked_url(v, value, key)
}

/// `publicUrl` is a base URL, which clients append paths to: no query or fragment.
/// Every other URL is a link (a page the person opens, a file the model reads) and
/// may carry both.
pub(super) fn checked_url(
    v: &mut Validator,
    value: &Spanned<String>,
    key: &'static str,
) -> Option<String> {
    let checked = if matches!(key, "publicUrl" | "probe.sandboxUrl") {
        check_url(value.value.trim())
    } else {
        check_link(value.value.trim())
    };
    match checked {
        Ok(url) => Some(url),
        Err(reason) => {
            v.findings.push(Diagnostic::BadUrl {
                key,
                reason,
                span: span(value),
            });
            None
        }
    }
}
