//! Safety weakened: what an operation tells the model about cost, permanence, polling
//! and retries, compared between the two versions of one operation.
//!
//! Takes: a pair of operations. Returns (pushes): `spends-removed`, `spend-kind-cheaper`,
//! `spend-condition-added`, `spend-condition-removed`, `cost-note-changed`,
//! `confirm-removed`, `async-removed`, `poll-target-changed`, `retry-key-removed`,
//! `retry-key-optional`, `retry-key-changed`, `idempotency-unsupported`.
//! Must never: report a change that makes the operation safer (a key added, `spends:`
//! added) as a weakening, or a poll target renamed in the same change as a new one
//! (`operation-renamed` says it, once).

use super::{Found, Pair, Which, at};
use crate::diagnostics::Diagnostic;
use crate::model::{Idempotency, IdempotencyKey, KeyLocation, Names as _, SpendKind};

pub(super) fn compare(pair: &Pair, found: &mut Vec<Found>) {
    let (old, new) = (pair.old, pair.new);
    let id = || new.id.clone();
    let mut push = |diagnostic| {
        found.push(Found {
            which: Which::New,
            diagnostic,
        });
    };
    match (&old.spends, &new.spends) {
        (Some(_), None) => push(Diagnostic::SpendsRemoved {
            id: id(),
            span: new.origin.entry,
        }),
        (Some(o), Some(n)) => {
            let spends = at(new.origin.spends(), new);
            if o.kind == SpendKind::Money && n.kind == SpendKind::Credits {
                push(Diagnostic::SpendKindCheaper {
                    id: id(),
                    old: o.kind.as_str(),
                    new: n.kind.as_str(),
                    span: spends,
                });
            }
            match (&o.when, &n.when) {
                (None, Some(_)) => push(Diagnostic::SpendConditionAdded {
                    id: id(),
                    span: new.origin.when().unwrap_or(spends),
                }),
                (Some(_), None) => push(Diagnostic::SpendConditionRemoved {
                    id: id(),
                    span: spends,
                }),
                _ => {}
            }
            if o.note != n.note {
                push(Diagnostic::CostNoteChanged {
                    id: id(),
                    old: o.note.clone(),
                    new: n.note.clone(),
                    span: new.origin.note().unwrap_or(spends),
                });
            }
        }
        _ => {}
    }
    if old.confirm && !new.confirm {
        push(Diagnostic::ConfirmRemoved {
            id: id(),
            span: new.origin.entry,
        });
    }
    match (&old.async_, &new.async_) {
        (Some(o), None) => push(Diagnostic::AsyncRemoved {
            id: id(),
            poll: o.poll_with.clone(),
            span: new.origin.entry,
        }),
        // The same poll target under its new id is the rename, reported once.
        (Some(o), Some(n))
            if o.poll_with != n.poll_with
                && pair.renames.get(&o.poll_with) != Some(&n.poll_with) =>
        {
            push(Diagnostic::PollTargetChanged {
                id: id(),
                old: o.poll_with.clone(),
                new: n.poll_with.clone(),
                span: at(new.origin.poll_with(), new),
            });
        }
        _ => {}
    }
    let span = at(new.origin.idempotency(), new);
    match (&old.idempotency, &new.idempotency) {
        (Idempotency::Key(o), Idempotency::Key(n)) => {
            if (o.location, &o.name) != (n.location, &n.name) {
                push(Diagnostic::RetryKeyChanged {
                    id: id(),
                    old: key(o),
                    new: key(n),
                    span,
                });
            } else if o.required && !n.required {
                push(Diagnostic::RetryKeyOptional {
                    id: id(),
                    key: n.name.clone(),
                    span,
                });
            }
        }
        (Idempotency::Key(o), Idempotency::Inherent) => push(Diagnostic::RetryKeyRemoved {
            id: id(),
            key: o.name.clone(),
            span,
        }),
        (o, Idempotency::Unsupported(_)) if !o.is_unsupported() => {
            push(Diagnostic::IdempotencyUnsupported {
                id: id(),
                old: match o {
                    Idempotency::Key(k) => format!("a retry key ({})", key(k)),
                    _ => "inherent (a retry is safe)".to_string(),
                },
                span,
            });
        }
        _ => {}
    }
}

/// "the header `Idempotency-Key`".
fn key(k: &IdempotencyKey) -> String {
    let place = match k.location {
        KeyLocation::Header => "the header",
        KeyLocation::Query => "the query parameter",
        KeyLocation::Body => "the body field",
    };
    format!("{place} `{}`", k.name)
}
