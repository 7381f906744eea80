//! What the budgets count, across operations: the input each `spends.amount` reads,
//! the purchase each `refunds` gives back, and the manifest's `budgets:`.
//!
//! Takes: the built document and every operation (the inputs are final only there), and
//! the raw `budgets:` list. Returns (through `Validator`): each computed amount's input
//! found (its place set in the model), each `refunds` checked, and the budgets read.
//! Must never: let an amount read an input the call does not have or that holds no
//! number (`unknown-amount-argument`), let a refund give back what no purchase spent
//! (`invalid-refund`), or accept a budget that cannot hold (`invalid-budget`).

use serde_saphyr::Spanned;

use super::candidates::{Candidate, candidates};
use super::jobs::first_by_id;
use crate::budget::{self, Budget};
use crate::diagnostics::{Diagnostic, suggest};
use crate::manifest::span;
use crate::model::{Document, KeyLocation, Operation, Returns, SpendAmount, budget_problem};
use crate::validate::context::Validator;

/// Each `spends.amount: { argument, … }` against its operation's inputs: a top-level body
/// property, a query or a header parameter holding a number, by its HTTP name.
pub(in crate::validate) fn arguments(
    v: &mut Validator,
    document: &Document,
    operations: &mut [Operation],
) {
    for op in operations.iter_mut() {
        let Some(SpendAmount::Argument(argument)) =
            op.spends.as_mut().and_then(|s| s.amount.as_mut())
        else {
            continue;
        };
        let shared = document
            .path_item(&op.path)
            .and_then(|item| item.get("parameters"));
        let inputs = candidates(&|r| document.resolve(r), shared, &op.http);
        let named = |c: &&Candidate| c.name == argument.input;
        // A body property first: where an amount usually is.
        let found = [KeyLocation::Body, KeyLocation::Query, KeyLocation::Header]
            .iter()
            .find_map(|&location| inputs.iter().filter(named).find(|c| c.location == location));
        let at = op.origin.amount().unwrap_or(op.origin.entry);
        match found {
            Some(input) if input.number => argument.location = input.location,
            Some(input) => v.findings.push(Diagnostic::UnknownAmountArgument {
                id: op.id.clone(),
                what: format!("`{}`, which is not a number", argument.input),
                span: at,
                help: numbers_help(&inputs, &input.name),
            }),
            None => v.findings.push(Diagnostic::UnknownAmountArgument {
                id: op.id.clone(),
                what: format!("`{}`, which is not one of its inputs", argument.input),
                span: at,
                help: numbers_help(&inputs, &argument.input),
            }),
        }
    }
}

/// The help of an amount's input that is not usable: the number inputs there are.
fn numbers_help(inputs: &[Candidate], name: &str) -> String {
    let numbers: Vec<&str> = inputs
        .iter()
        .filter(|c| c.number)
        .map(|c| c.name.as_str())
        .collect();
    if numbers.is_empty() {
        return "the operation has no input whose schema says it is a number (`type: number` or `integer`): give the amount as a number (`amount: 3`), or leave `amount` out".to_string();
    }
    let close = suggest(name, numbers.iter().copied());
    if close.starts_with("did you mean") {
        return close;
    }
    let listed: Vec<String> = numbers.iter().take(12).map(|n| format!("`{n}`")).collect();
    format!("its number inputs: {}", listed.join(", "))
}

/// Each `refunds` against the operations: it names another operation that spends and
/// starts jobs (a purchase is found by its job id), and this operation takes the job's
/// id as its last path parameter, spends nothing and changes something.
pub(in crate::validate) fn refunds(v: &mut Validator, operations: &[Operation]) {
    let by_id = first_by_id(operations);
    for op in operations {
        let (Some(target), Some(at)) = (&op.refunds, op.origin.refunds()) else {
            continue;
        };
        let Some(purchase) = by_id.get(target.as_str()).map(|&i| &operations[i]) else {
            v.findings.push(Diagnostic::InvalidRefund {
                target: target.clone(),
                reason: "no operation has this id".to_string(),
                span: at,
                help: suggest(target, operations.iter().map(|o| o.id.as_str())),
            });
            continue;
        };
        let starts_jobs = purchase
            .async_
            .as_ref()
            .is_some_and(|a| a.returns == Returns::Job);
        let reason = if purchase.id == op.id {
            Some("it is this operation itself")
        } else if purchase.spends.is_none() {
            Some("it spends nothing, so there is no amount to give back")
        } else if !starts_jobs {
            Some("it starts no job, so no job id names the purchase a refund gives back")
        } else if op.spends.is_some() {
            Some("this operation spends too: a call cannot both charge and give back")
        } else if op.read {
            Some("this operation is a read, which changes nothing at the provider")
        } else if op.path_params.is_empty() {
            Some("this operation takes no path parameter to name the purchase's job by")
        } else {
            None
        };
        if let Some(reason) = reason {
            v.findings.push(Diagnostic::InvalidRefund {
                target: target.clone(),
                reason: reason.to_string(),
                span: at,
                help: "put `refunds: <the paid operation>` on the provider's refund or cancel of one purchase, a write that takes the purchase's job id as its last path parameter (e.g. `POST /v1/videos/{id}/refund` with `refunds: createVideo`, where createVideo spends and returns a job), or remove `refunds`".to_string(),
            });
        }
    }
}

/// `budgets:` read: each entry's syntax, no two on one unit and window, and the limits
/// the operations let hold (`model::budget_problem`).
pub(in crate::validate) fn budgets(
    v: &mut Validator,
    raw: Option<&Spanned<Vec<Spanned<String>>>>,
    operations: &[Operation],
) -> Vec<Budget> {
    let Some(raw) = raw else {
        return Vec::new();
    };
    let mut read: Vec<(Budget, &Spanned<String>)> = Vec::new();
    for entry in &raw.value {
        match Budget::parse(&entry.value) {
            Ok(b) => read.push((b, entry)),
            Err(problem) => v.findings.push(Diagnostic::InvalidBudget {
                problem,
                span: span(entry),
            }),
        }
    }
    let list: Vec<Budget> = read.iter().map(|(b, _)| *b).collect();
    if let Some(i) = budget::repeated(&list) {
        let (b, entry) = read[i];
        v.findings.push(Diagnostic::InvalidBudget {
            problem: format!(
                "a second limit on `{}` per {}: keep one",
                b.unit.as_str(),
                b.window.as_str()
            ),
            span: span(entry),
        });
    }
    if let Some(problem) = budget_problem(operations, &list) {
        v.findings.push(Diagnostic::InvalidBudget {
            problem,
            span: span(raw),
        });
    }
    list
}
