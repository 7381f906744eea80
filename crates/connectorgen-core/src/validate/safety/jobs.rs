//! `async:` and the rules that keep polling safe: each async operation names a free read
//! (a GET, or `read: true`) to poll (never itself, never one that spends or starts a job), and a job's list is
//! found so a model that lost a job's id looks it up instead of starting the work again.
//!
//! Takes: the raw `async` mapping of one operation; then every operation with a usable
//! id. Returns (through `Validator`): `Async`, checked; an `unknown-poll-target` or
//! `unsafe-poll-target` for each poll target that is no safe read; `list_with` filled in.
//! Must never: let a poll resubmit the job.

use std::collections::HashMap;

use serde_saphyr::Spanned;

use crate::diagnostics::{Diagnostic, suggest};
use crate::manifest::{RawAsync, span};
use crate::model::{Async, Names as _, Operation, Returns};
use crate::validate::{Checked, Validator};

impl Validator {
    pub(super) fn async_(&mut self, a: &Spanned<RawAsync>) -> Option<Async> {
        let at = span(a);
        let poll_with = match &a.value.poll_with {
            None => {
                self.missing(
                    "pollWith",
                    "`async`",
                    at,
                    "name the free read (a `get`, or an operation declared `read: true`) that reports the job's progress, e.g. `pollWith: getVideo`",
                );
                None
            }
            Some(p) => Some(p.value.trim().to_string()),
        };
        let typical_seconds = match &a.value.typical_seconds {
            None => Some(None),
            Some(t) if t.value <= 0 => {
                self.findings.push(Diagnostic::NonPositiveTypicalSeconds {
                    value: t.value,
                    span: span(t),
                });
                None
            }
            Some(t) => Some(Some(t.value.unsigned_abs())),
        };
        let returns = match &a.value.returns {
            None => Some(Returns::Job),
            Some(r) => {
                if let Some(returns) = Returns::named(r.value.trim()) {
                    Some(returns)
                } else {
                    self.findings.push(Diagnostic::UnknownAsyncReturns {
                    value: r.value.clone(),
                    span: span(r),
                    help: format!(
                        "{} `job` is work with an id to poll; `change` is a change to something that exists which settles in the background (a cancel, a refund)",
                        suggest(r.value.trim(), Returns::names())
                    ),
                });
                    None
                }
            }
        };
        Some(Async {
            poll_with: poll_with?,
            typical_seconds: typical_seconds?,
            returns: returns?,
            // Filled in once every operation is known (`link_lists`).
            list_with: None,
        })
    }

    /// Each `async.pollWith` names an operation that is a free, safe read: a GET or an
    /// operation declared `read: true`, that neither spends nor is async, and not the
    /// operation itself.
    pub(in crate::validate) fn poll_targets(&mut self, checked: &[Checked]) {
        let by_id: HashMap<&str, usize> = checked
            .iter()
            .enumerate()
            .map(|(i, c)| (c.op.id.as_str(), i))
            .rev() // the first declaration wins, as for duplicate-id reporting
            .collect();
        for c in checked {
            let Some((poll_with, at)) = &c.poll else {
                continue;
            };
            let at = *at;
            let Some(&t) = by_id.get(poll_with.as_str()) else {
                self.findings.push(Diagnostic::UnknownPollTarget {
                    target: poll_with.clone(),
                    span: at,
                    help: suggest(poll_with, checked.iter().map(|c| c.op.id.as_str())),
                });
                continue;
            };
            let target = &checked[t];
            let reason = if target.op.id == c.op.id {
                Some("an operation cannot poll itself; that would resubmit the job")
            } else if !target.is_read() {
                Some("it is neither a `get` nor declared `read: true`")
            } else if target.spends() {
                Some("it spends")
            } else if target.is_async() {
                Some("it is itself async")
            } else {
                None
            };
            if let Some(reason) = reason {
                self.findings.push(Diagnostic::UnsafePollTarget {
                    target: poll_with.clone(),
                    reason,
                    span: at,
                    target_span: Some(target.op.origin.id),
                });
            }
        }
    }
}

/// Names, for each async operation that returns a job, the free read that lists the
/// jobs' collection: the poll target's path without its last `/{param}`. A model that
/// lost a job's id finds it there instead of starting the work again.
pub(in crate::validate) fn link_lists(operations: &mut [Operation]) {
    let lists: HashMap<&str, &str> = operations
        .iter()
        .filter(|o| o.read && o.spends.is_none() && o.async_.is_none())
        .rev() // the first one listed wins
        .map(|o| (o.path.as_str(), o.id.as_str()))
        .collect();
    // By id, the first one listed: a search per async operation was quadratic (25,000
    // async operations of 100,000 took seconds).
    let by_id: HashMap<&str, &Operation> = operations
        .iter()
        .rev()
        .map(|o| (o.id.as_str(), o))
        .collect();
    let found: Vec<Option<String>> = operations
        .iter()
        .map(|op| {
            let a = op.async_.as_ref()?;
            if a.returns != crate::model::Returns::Job {
                return None;
            }
            let target = by_id.get(a.poll_with.as_str())?;
            let (collection, last) = target.path.rsplit_once('/')?;
            let names_one = last.starts_with('{') && last.ends_with('}');
            let list = lists.get(collection).filter(|_| names_one)?;
            Some((*list).to_string())
        })
        .collect();
    for (op, list) in operations.iter_mut().zip(found) {
        if let Some(a) = &mut op.async_ {
            a.list_with = list;
        }
    }
}
