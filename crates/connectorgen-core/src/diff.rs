//! `connectorgen diff`: what a change between two versions of a connector does to what
//! the model is told.
//!
//! Takes: two sides (`Side`: a manifest analysed as `check` analyses it, or nothing, for
//! a revision where the manifest does not exist yet or any more). Returns: a `Report`
//! of findings, each a diff rule of `diagnostics::Rule` (declared once there, with its
//! level; `docs/rules.md` lists them), pointing at the operation in the side it is
//! about: the new one, or the old one for what was removed.
//! Must never: read a file (the sides are read by the caller, from the disk or from
//! git), or report a change in wording the model does not read as a safety change
//! (reordering keys, comments, formatting: the sides are compared as models, not text).
//!
//! The levels (`lint:`) and `lintAllow` are the OLD side's: a change cannot turn off the
//! gate that reviews it. A pull request that means to lower a level lands that first,
//! in its own reviewed change. With no old side, the new side's levels apply.
//!
//! The passes, in order: pair the operations (`pairs`: by id, then a removed and an
//! added operation with one method and path are a rename), then `safety` (spends,
//! confirm, async, retry keys), `surface` (operations and tool arguments), `http` (the
//! request each exposed operation sends) and `text` (the generated sentences of every
//! target both sides build).

mod http;
mod report;
mod safety;
mod side;
mod surface;
mod text;

use std::collections::BTreeMap;

use crate::diagnostics::{Diagnostic, Diagnostics, Finding, Level, Rule, Severity, Span};
use crate::model::{LintConfig, Operation};
pub use report::Format;
pub use side::Side;
use side::Tool;

/// Which side a finding points into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Which {
    Old,
    New,
}

/// One operation on both sides, as the passes compare it.
struct Pair<'a> {
    old: &'a Operation,
    new: &'a Operation,
    old_tool: &'a Tool,
    new_tool: &'a Tool,
    /// Every operation renamed in this change, old id → new id: an operation that only
    /// follows a renamed one (its poll target) has not changed itself.
    renames: &'a Renames,
}

/// Old id → new id, of the operations this change renames (`operation-renamed` reports
/// each once).
type Renames = BTreeMap<String, String>;

/// What the passes find: a diagnostic, the side it points into, and the operation whose
/// `lintAllow` may silence it.
struct Found {
    which: Which,
    diagnostic: Diagnostic,
}

/// The findings of one comparison, per side, with the severity their levels give them.
pub struct Report {
    old: Diagnostics,
    new: Diagnostics,
}

/// Compares two sides. `None` is a side without the manifest.
pub fn diff(old: Option<&Side>, new: Option<&Side>) -> Report {
    let mut found = Vec::new();
    let empty = Vec::new();
    let old_ops = old.map_or(&empty, |s| &s.connector.operations);
    let new_ops = new.map_or(&empty, |s| &s.connector.operations);
    let (pairs, removed, added) = pairs(old, new);
    let renames: Renames = pairs
        .iter()
        .map(|(o, n)| (&old_ops[*o].id, &new_ops[*n].id))
        .filter(|(o, n)| o != n)
        .map(|(o, n)| (o.clone(), n.clone()))
        .collect();
    for (o, n) in &pairs {
        let pair = Pair {
            old: &old_ops[*o],
            new: &new_ops[*n],
            old_tool: &old.expect("a pair has an old side").tools[*o],
            new_tool: &new.expect("a pair has a new side").tools[*n],
            renames: &renames,
        };
        if pair.old.id != pair.new.id {
            found.push(Found {
                which: Which::New,
                diagnostic: Diagnostic::OperationRenamed {
                    id: pair.new.id.clone(),
                    old: pair.old.id.clone(),
                    span: pair.new.origin.id,
                },
            });
        }
        safety::compare(&pair, &mut found);
        let reported = surface::compare(&pair, &mut found);
        http::compare(&pair, &reported, &mut found);
    }
    for o in removed {
        let op = &old_ops[o];
        found.push(Found {
            which: Which::Old,
            diagnostic: Diagnostic::OperationRemoved {
                id: op.id.clone(),
                span: op.origin.entry,
            },
        });
    }
    for n in added {
        surface::added(&new_ops[n], &mut found);
    }
    if let (Some(old), Some(new)) = (old, new) {
        text::compare(old, new, &pairs, &renames, &mut found);
    }
    // The levels and `lintAllow` of the old side (see the module doc).
    let config_side = old.or(new);
    let config = config_side.map(|s| &s.connector.lint);
    let allow_of: BTreeMap<&str, &Operation> = old_ops.iter().map(|o| (o.id.as_str(), o)).collect();
    let new_allow: BTreeMap<&str, &Operation> =
        new_ops.iter().map(|o| (o.id.as_str(), o)).collect();
    let renamed_from: BTreeMap<&str, &str> = pairs
        .iter()
        .map(|(o, n)| (new_ops[*n].id.as_str(), old_ops[*o].id.as_str()))
        .collect();
    let mut old_findings = Vec::new();
    let mut new_findings = Vec::new();
    for f in found {
        let rule = Rule::from(&f.diagnostic);
        let Some(severity) = severity(config, rule) else {
            continue;
        };
        let id = operation(&f.diagnostic).unwrap_or_default();
        // The operation's `lintAllow`: the old version's, found under its old id; an
        // operation new in this change has only its own.
        let op = match f.which {
            Which::Old => allow_of.get(id),
            Which::New => match renamed_from.get(id) {
                Some(old_id) => allow_of.get(old_id),
                None => new_allow.get(id),
            },
        }
        .copied();
        if op.is_some_and(|op| op.lint_allow.contains(&rule)) {
            continue;
        }
        let finding = Finding {
            diagnostic: f.diagnostic,
            severity,
            source: crate::diagnostics::Source::Manifest,
        };
        match f.which {
            Which::Old => old_findings.push(finding),
            Which::New => new_findings.push(finding),
        }
    }
    let diagnostics = |side: Option<&Side>, name: &str, findings| match side {
        Some(s) => Diagnostics::new(&s.name, s.text.clone(), findings),
        None => Diagnostics::new(name, std::sync::Arc::new(String::new()), findings),
    };
    Report {
        old: diagnostics(old, "(old)", old_findings),
        new: diagnostics(new, "(new)", new_findings),
    }
}

/// The severity a diff rule's level gives its findings, `None` when it is `allow`ed.
fn severity(config: Option<&LintConfig>, rule: Rule) -> Option<Severity> {
    let level = match config {
        Some(c) => c.level(rule),
        None => rule.lint_level().unwrap_or(Level::Warn),
    };
    match level {
        Level::Allow => None,
        Level::Warn => Some(Severity::Warning),
        Level::Deny => Some(Severity::Error),
    }
}

/// Operations on both sides (old index, new index), then the old ones without a
/// counterpart and the new ones without one. An operation keeps its id, or keeps its
/// method and path under a new id when exactly one removed and one added operation
/// share them (a rename).
type Paired = (Vec<(usize, usize)>, Vec<usize>, Vec<usize>);

fn pairs(old: Option<&Side>, new: Option<&Side>) -> Paired {
    let empty = Vec::new();
    let old_ops = old.map_or(&empty, |s| &s.connector.operations);
    let new_ops = new.map_or(&empty, |s| &s.connector.operations);
    let new_by_id: BTreeMap<&str, usize> = new_ops
        .iter()
        .enumerate()
        .map(|(i, o)| (o.id.as_str(), i))
        .collect();
    let mut pairs = Vec::new();
    let mut removed = Vec::new();
    let mut matched = vec![false; new_ops.len()];
    for (i, o) in old_ops.iter().enumerate() {
        match new_by_id.get(o.id.as_str()) {
            Some(&n) => {
                pairs.push((i, n));
                matched[n] = true;
            }
            None => removed.push(i),
        }
    }
    let mut added: Vec<usize> = (0..new_ops.len()).filter(|n| !matched[*n]).collect();
    let route = |op: &Operation| (op.method, op.path.clone());
    let mut still_removed = Vec::new();
    let removed_routes: Vec<_> = removed.iter().map(|o| route(&old_ops[*o])).collect();
    for o in removed {
        let same: Vec<usize> = added
            .iter()
            .copied()
            .filter(|n| route(&new_ops[*n]) == route(&old_ops[o]))
            .collect();
        let removed_same = removed_routes
            .iter()
            .filter(|r| **r == route(&old_ops[o]))
            .count();
        if let [n] = same[..]
            && removed_same == 1
        {
            pairs.push((o, n));
            added.retain(|a| *a != n);
        } else {
            still_removed.push(o);
        }
    }
    pairs.sort_by_key(|(_, n)| *n);
    (pairs, still_removed, added)
}

/// The operation a diff finding names.
fn operation(d: &Diagnostic) -> Option<&str> {
    use Diagnostic as D;
    match d {
        D::SpendsRemoved { id, .. }
        | D::SpendKindCheaper { id, .. }
        | D::SpendConditionAdded { id, .. }
        | D::SpendConditionRemoved { id, .. }
        | D::CostNoteChanged { id, .. }
        | D::ConfirmRemoved { id, .. }
        | D::AsyncRemoved { id, .. }
        | D::PollTargetChanged { id, .. }
        | D::RetryKeyRemoved { id, .. }
        | D::RetryKeyOptional { id, .. }
        | D::RetryKeyChanged { id, .. }
        | D::IdempotencyUnsupported { id, .. }
        | D::OperationRemoved { id, .. }
        | D::OperationRenamed { id, .. }
        | D::RequiredArgumentAdded { id, .. }
        | D::ArgumentRemoved { id, .. }
        | D::ArgumentRenamed { id, .. }
        | D::ReadBecameWrite { id, .. }
        | D::NewPaidOperation { id, .. }
        | D::NewPermanentOperation { id, .. }
        | D::SafetyTextChanged { id, .. }
        | D::HttpRouteChanged { id, .. }
        | D::HttpInputChanged { id, .. } => Some(id),
        _ => None,
    }
}

/// Where a finding about an operation points: the given part, else its entry.
fn at(part: Option<Span>, op: &Operation) -> Span {
    part.unwrap_or(op.origin.entry)
}

impl Report {
    /// Findings on both sides: the new side's first (what the change brings), then the
    /// old side's (what it removed).
    fn sides(&self) -> [&Diagnostics; 2] {
        [&self.new, &self.old]
    }

    pub fn count(&self, severity: Severity) -> usize {
        self.new.count(severity) + self.old.count(severity)
    }

    pub fn is_empty(&self) -> bool {
        self.new.is_empty() && self.old.is_empty()
    }

    /// The codes of every finding, new side first: for tests.
    pub fn codes(&self) -> Vec<String> {
        self.sides()
            .iter()
            .flat_map(|d| d.items().iter().map(|f| f.diagnostic.code_str()))
            .collect()
    }
}
