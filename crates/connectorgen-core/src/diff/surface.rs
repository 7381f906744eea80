//! Surface changed: the tools a client sees, compared between the two versions of one
//! operation, and the operations new in this change.
//!
//! Takes: a pair of operations with their tools (or one new operation). Returns
//! (pushes): `required-argument-added`, `argument-removed`, `argument-renamed`,
//! `read-became-write`; for a new operation, `new-paid-operation` and
//! `new-permanent-operation`. `compare` also returns the arguments it reported, so that
//! `http` does not report the same input again.
//! Must never: count the retry key's argument (the `safety` rules say what happened to
//! the key).

use std::collections::{BTreeMap, BTreeSet};

use super::{Found, Pair, Which, at};
use crate::diagnostics::Diagnostic;
use crate::model::Operation;
use crate::render::mcp::mapping::{Argument, RequestMapping};

/// The arguments of a tool but the retry key's, by name.
pub(super) fn arguments(request: Option<&RequestMapping>) -> BTreeMap<&str, &Argument> {
    let Some(r) = request else {
        return BTreeMap::new();
    };
    let key = r.idempotency.as_ref().map(|k| k.argument.as_str());
    r.arguments
        .iter()
        .filter(|a| Some(a.argument.as_str()) != key)
        .map(|a| (a.argument.as_str(), a))
        .collect()
}

pub(super) fn compare(pair: &Pair, found: &mut Vec<Found>) -> BTreeSet<String> {
    let new = pair.new;
    let old_args = arguments(pair.old_tool.request.as_ref());
    let new_args = arguments(pair.new_tool.request.as_ref());
    let mut reported = BTreeSet::new();
    let mut push = |diagnostic| {
        found.push(Found {
            which: Which::New,
            diagnostic,
        });
    };
    let removed: Vec<&Argument> = old_args
        .iter()
        .filter(|(name, _)| !new_args.contains_key(*name))
        .map(|(_, a)| *a)
        .collect();
    let mut renamed_from = BTreeSet::new();
    for (name, arg) in &new_args {
        match old_args.get(name) {
            Some(o) if o.required || !arg.required => {}
            Some(_) => {
                reported.insert((*name).to_string());
                push(Diagnostic::RequiredArgumentAdded {
                    id: new.id.clone(),
                    argument: (*name).to_string(),
                    span: new.origin.entry,
                });
            }
            None => {
                // The same HTTP input under another argument name is a rename.
                let same = removed.iter().find(|o| {
                    (o.location, &o.name) == (arg.location, &arg.name) && o.name.is_some()
                });
                if let Some(o) = same {
                    renamed_from.insert(o.argument.clone());
                    reported.insert((*name).to_string());
                    reported.insert(o.argument.clone());
                    push(Diagnostic::ArgumentRenamed {
                        id: new.id.clone(),
                        old: o.argument.clone(),
                        argument: (*name).to_string(),
                        span: new.origin.entry,
                    });
                } else if arg.required {
                    reported.insert((*name).to_string());
                    push(Diagnostic::RequiredArgumentAdded {
                        id: new.id.clone(),
                        argument: (*name).to_string(),
                        span: new.origin.entry,
                    });
                }
            }
        }
    }
    for o in removed {
        if !renamed_from.contains(&o.argument) {
            reported.insert(o.argument.clone());
            push(Diagnostic::ArgumentRemoved {
                id: new.id.clone(),
                argument: o.argument.clone(),
                span: new.origin.entry,
            });
        }
    }
    let was_read = pair.old.read || pair.old_tool.read_only;
    let is_read = new.read || pair.new_tool.read_only;
    if (was_read && !is_read) || (pair.old_tool.read_only && !pair.new_tool.read_only) {
        let describe = |op: &Operation, read_only: bool| {
            if read_only {
                format!("{}, read-only", op.method.upper())
            } else {
                op.method.upper().to_string()
            }
        };
        push(Diagnostic::ReadBecameWrite {
            id: new.id.clone(),
            old: describe(pair.old, pair.old_tool.read_only),
            new: describe(new, pair.new_tool.read_only),
            span: new.origin.entry,
        });
    }
    reported
}

/// An operation new in this change: worth a reviewer's look when it spends or cannot
/// be undone.
pub(super) fn added(op: &Operation, found: &mut Vec<Found>) {
    if op.spends.is_some() {
        found.push(Found {
            which: Which::New,
            diagnostic: Diagnostic::NewPaidOperation {
                id: op.id.clone(),
                span: at(op.origin.spends(), op),
            },
        });
    }
    if op.confirm {
        found.push(Found {
            which: Which::New,
            diagnostic: Diagnostic::NewPermanentOperation {
                id: op.id.clone(),
                span: op.origin.entry,
            },
        });
    }
}
