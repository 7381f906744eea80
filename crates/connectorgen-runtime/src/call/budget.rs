//! What a call costs and what the budgets say of it: the amount (`spends.amount`, fixed or
//! read from the call's input), the receipt its ledger row keeps, the counts its claim asks
//! the ledger for, the running totals the question states, and the refusal of a call that
//! would pass a budget.
//!
//! Takes: a served tool and the call's arguments (checked and canonical), the budgets in
//! force (`Settings::budgets`) and what the ledger counted. Returns: `Cost`, the receipt,
//! the `Tally` list, and text: the question's sentence ("This costs 3 credits. …") and
//! the `NOT SENT` answer of a call over a budget; as the stage's steps, the refusal of a
//! claim past a budget (`Stage::over_budget`) and the amount a successful refund gives
//! back (`Stage::given_back`).
//! Must never: make an amount smaller than the call's input says (a negative input is
//! refused), put a secret in a receipt (the redactor has the arguments first), or word a
//! refusal as a question the person could answer yes to.

use serde_json::{Map, Value, json};

use super::claim::Claimed;
use super::{Answer, Block, Outcome, Served, Stage, argument_of, reply};
use crate::guard::{Over, Verdict};
use crate::ledger::{OwnedReceipt, Tally};
use crate::redact::Redactor;
use connectorgen_core::budget::{Amount, AmountUnit, Budget, Decimal, Unit, utc};
use connectorgen_core::model::{KeyLocation, Operation, SpendAmount, SpendKind};
use connectorgen_core::render::mcp::mapping;

/// What one paid call spends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Cost {
    /// `Unit::Credits` or `Unit::Money`.
    pub unit: Unit,
    /// `None`: not known before the call.
    pub amount: Option<Amount>,
}

/// What a call of `served` with `args` spends: `None` for a call that spends nothing;
/// an error (the call is refused, nothing recorded) for an amount input that is negative
/// or too large to count.
pub(crate) fn cost_of(served: &Served, args: &Map<String, Value>) -> Result<Option<Cost>, String> {
    let Some(spends) = &served.op.spends else {
        return Ok(None);
    };
    let unit = match spends.kind {
        SpendKind::Credits => Unit::Credits,
        SpendKind::Money => Unit::Money,
    };
    let amount = match &spends.amount {
        None => None,
        Some(SpendAmount::Fixed(amount)) => Some(*amount),
        Some(SpendAmount::Argument(from)) => {
            let Some(value) = input_value(served, args, from.location, &from.input) else {
                return Ok(Some(Cost { unit, amount: None }));
            };
            let number = Decimal::of_json(value);
            let Some(number) = number else {
                return Ok(Some(Cost { unit, amount: None }));
            };
            if number.is_negative() {
                return Err(format!(
                    "`{}` is {number}: the amount of a paid call cannot be negative",
                    from.input
                ));
            }
            let amount = number.times(from.scale).and_then(Decimal::amount);
            let Some(amount) = amount else {
                return Err(format!("`{}` is {number}: too large an amount", from.input));
            };
            Some(amount)
        }
    };
    Ok(Some(Cost { unit, amount }))
}

/// The value the call gives the input `name` at `location`: its own argument, or a field
/// of the argument that takes the whole body.
fn input_value<'a>(
    served: &Served,
    args: &'a Map<String, Value>,
    location: KeyLocation,
    name: &str,
) -> Option<&'a Value> {
    let location = match location {
        KeyLocation::Header => mapping::Location::Header,
        KeyLocation::Query => mapping::Location::Query,
        KeyLocation::Body => mapping::Location::Body,
    };
    if let Some(own) = argument_of(&served.mapping, location, name) {
        return args.get(&own);
    }
    let whole = served
        .mapping
        .arguments
        .iter()
        .find(|arg| arg.location == mapping::Location::Body && arg.name.is_none())?;
    args.get(&whole.argument)?.get(name)
}

/// The receipt a new row of a call that needs consent keeps: the arguments as agreed
/// (canonical JSON, every secret the redactor knows replaced), and what it spends.
pub(crate) fn receipt(
    op: &Operation,
    args: &Map<String, Value>,
    cost: Option<Cost>,
    redactor: &Redactor,
) -> Option<OwnedReceipt> {
    if !op.consent() {
        return None;
    }
    let shown = redactor.value(Value::Object(args.clone()));
    let args = match shown {
        Value::Object(map) => crate::canonical_json(&map),
        _ => "{}".to_string(),
    };
    Some(OwnedReceipt {
        args,
        unit: cost.map(|c| c.unit),
        currency: op.spends.as_ref().and_then(|s| s.currency.clone()),
        amount: cost.and_then(|c| c.amount),
    })
}

/// The counts a claim of a paid call of `unit` asks for at `now`: one per budget, in
/// their order (what the guard weighs), then, for each budget of calls, what was spent
/// of `unit` in its window when no budget counts that already (for the question's
/// running total).
pub(crate) fn tallies(limits: &[Budget], unit: Unit, now: u64) -> Vec<Tally> {
    let mut out: Vec<Tally> = limits
        .iter()
        .map(|b| Tally {
            unit: b.unit,
            since: b.window.start(now),
        })
        .collect();
    for b in limits.iter().filter(|b| b.unit == Unit::Calls) {
        let own = Tally {
            unit,
            since: b.window.start(now),
        };
        if !out.contains(&own) {
            out.push(own);
        }
    }
    out
}

/// What was counted for `unit` since the start of `budget`'s window, if it was.
fn counted(
    limits: &[Budget],
    spent: &[Amount],
    unit: Unit,
    budget: &Budget,
    now: u64,
) -> Option<Amount> {
    let since = budget.window.start(now);
    tallies(limits, unit, now)
        .iter()
        .zip(spent)
        .find(|(t, _)| t.unit == unit && t.since == since)
        .map(|(_, amount)| *amount)
}

/// The question's sentence about the cost: the amount ("This costs 3 credits."), or that
/// it is not known, then where the call would leave each budget ("This would be 4 of at
/// most 10 paid calls today (6 credits spent so far), and 9 of at most 20 credits today.").
pub(crate) fn priced(
    cost: &Cost,
    limits: &[Budget],
    spent: &[Amount],
    currency: Option<&str>,
    now: u64,
) -> String {
    let unit = amount_unit(cost.unit, currency);
    let mut text = match cost.amount {
        Some(amount) => format!("This costs {}.", amount.shown(unit)),
        None => "Its amount is not known before the call (amount unknown).".to_string(),
    };
    let mut clauses = Vec::new();
    for budget in limits {
        let Some(so_far) = counted(limits, spent, budget.unit, budget, now) else {
            continue;
        };
        let limit = budget.limit.shown(budget.amount_unit(currency));
        let window = budget.window.current();
        match budget.unit {
            Unit::Calls => {
                let own = counted(limits, spent, cost.unit, budget, now)
                    .map(|s| format!(" ({} spent so far)", s.shown(unit)))
                    .unwrap_or_default();
                clauses.push(format!(
                    "{} of at most {limit} {window}{own}",
                    so_far.whole().saturating_add(1)
                ));
            }
            u if u == cost.unit => {
                let after = cost
                    .amount
                    .and_then(|a| so_far.checked_add(a))
                    .map_or_else(|| "more".to_string(), |a| a.figure(unit));
                clauses.push(format!(
                    "{after} of at most {limit} {window} ({} spent so far)",
                    so_far.shown(unit)
                ));
            }
            _ => {}
        }
    }
    if !clauses.is_empty() {
        text.push_str(&format!(
            " Within the limits set for this person (days, weeks and months in UTC), this would \
             be {}.",
            clauses.join(", and ")
        ));
    }
    text
}

fn amount_unit(unit: Unit, currency: Option<&str>) -> AmountUnit<'_> {
    match unit {
        Unit::Money => AmountUnit::Money(currency),
        Unit::Calls => AmountUnit::Calls,
        Unit::Credits => AmountUnit::Credits,
    }
}

/// The answer to a call that would pass a budget: not sent, never asked about; the limit,
/// what was spent in its window, when it resets, and that only the operator can raise it.
pub(crate) fn over_budget(
    op: &Operation,
    over: &Over,
    cost: &Cost,
    currency: Option<&str>,
    now: u64,
) -> Answer {
    let budget = &over.budget;
    let limit = budget.sentence(currency);
    let resets = budget.window.end(now);
    let spent = over.spent.shown(budget.amount_unit(currency));
    let window = budget.window.current();
    let why = if over.unknown {
        format!(
            "the amount of this {id} call is not known before it is made, and the spending \
             limit set for this person ({limit}) counts amounts: it cannot tell whether the call \
             fits. {spent} spent {window} so far.",
            id = op.id
        )
    } else {
        let this = match (budget.unit, cost.amount) {
            (Unit::Calls, _) => "one more paid call".to_string(),
            (_, Some(amount)) => amount.shown(amount_unit(cost.unit, currency)),
            (_, None) => "more".to_string(),
        };
        format!(
            "this {id} call would pass the spending limit set for this person: {limit}. {spent} \
             spent {window} so far; this call would add {this}. The limit resets at {} (in {}).",
            utc(resets),
            duration(resets.saturating_sub(now)),
            id = op.id
        )
    };
    let mut result = Answer::error(vec![Block::text(format!(
        "NOT SENT: {why} Nothing was sent or charged. Only whoever runs this connector can \
         raise the limit (serve --budget); the person cannot agree past it, so do not ask them \
         to confirm and do not call again before it resets: tell them the limit was reached."
    ))]);
    result.facts = match json!({
        "notSent": true,
        "overBudget": {
            "budget": budget.to_string(),
            "spent": over.spent.number(),
            "amountUnknown": over.unknown,
            "resetsAt": resets,
        },
    }) {
        Value::Object(facts) => facts,
        _ => Map::new(),
    };
    result
}

/// `seconds` as a person reads a wait: "5 h 3 min", "42 min", "under a minute".
fn duration(seconds: u64) -> String {
    let (days, hours, minutes) = (seconds / 86_400, seconds / 3_600 % 24, seconds / 60 % 60);
    match (days, hours, minutes) {
        (0, 0, 0) => "under a minute".to_string(),
        (0, 0, m) => format!("{m} min"),
        (0, h, m) => format!("{h} h {m} min"),
        (d, h, _) => format!("{d} d {h} h"),
    }
}

impl Stage {
    /// The answer to a claim whose verdict is that the call would pass a budget — or, for
    /// a question about to be asked (a new request, or a `second`, identical order after
    /// one answered from the ledger), that a new request would: refused before anyone is
    /// asked. `None`: it fits, or the call is answered from the ledger (a purchase made
    /// already is no new one, whatever is left of the budget).
    pub(super) fn over_budget(
        &self,
        op: &Operation,
        cost: Option<&Cost>,
        claimed: &Claimed<'_>,
        second: bool,
    ) -> Option<Answer> {
        let cost = cost?;
        let asks = match &claimed.verdict {
            Verdict::AskConsent { .. } => true,
            Verdict::Answer { .. } | Verdict::Unknown { .. } => second,
            _ => false,
        };
        let over = match &claimed.verdict {
            Verdict::OverBudget(over) => *over,
            _ if asks => {
                let spend = crate::guard::Spend {
                    unit: cost.unit,
                    amount: cost.amount,
                    limits: &self.settings.budgets,
                };
                crate::guard::over(&spend, &claimed.spent)?
            }
            _ => return None,
        };
        let budget = over.budget;
        self.refuse(
            &op.id,
            "over-budget",
            json!({"budget": budget.to_string(), "spent": over.spent.number()}),
        );
        Some(over_budget(
            op,
            &over,
            cost,
            self.settings.currency.as_deref(),
            self.sealer.clock().now(),
        ))
    }

    /// `given_back` for an outcome that is an answer.
    pub(super) async fn given_back_outcome<L>(
        &self,
        served: &Served,
        who: Option<&str>,
        args: &Map<String, Value>,
        outcome: Outcome<L>,
    ) -> Outcome<L> {
        match outcome {
            Outcome::Answer { answer, row } => Outcome::Answer {
                answer: self.given_back(served, who, args, answer).await,
                row,
            },
            other => other,
        }
    }

    /// A call of an operation marked `refunds: <purchase>` that the provider answered with
    /// success gives that purchase's amount back to the budgets: the newest paid row of the
    /// purchase whose job id this call named (its last path parameter). Any other answer
    /// gives nothing back.
    pub(super) async fn given_back(
        &self,
        served: &Served,
        who: Option<&str>,
        args: &Map<String, Value>,
        mut answer: Answer,
    ) -> Answer {
        let op = &served.op;
        let Some(purchase) = &op.refunds else {
            return answer;
        };
        let succeeded = !answer.is_error
            && answer
                .facts
                .get("status")
                .and_then(Value::as_u64)
                .is_some_and(|s| (200..300).contains(&s));
        let job = op
            .path_params
            .last()
            .and_then(|p| argument_of(&served.mapping, mapping::Location::Path, p))
            .and_then(|a| args.get(&a))
            .and_then(|v| match v {
                Value::String(s) => Some(s.clone()),
                Value::Number(n) => Some(n.to_string()),
                _ => None,
            });
        let (true, Some(job)) = (succeeded, job) else {
            return answer;
        };
        // The purchase's rows are its own principal's (its credential's, or the person's).
        let principal = who.map_or_else(
            || {
                self.by_name
                    .get(purchase)
                    .map_or_else(String::new, |&i| self.tools[i].principal.clone())
            },
            str::to_string,
        );
        let now = self.sealer.clock().now();
        match self
            .ledger
            .refund(principal, purchase.clone(), job.clone(), now)
            .await
        {
            Ok(found) => {
                self.redactor.line(
                    "refunded",
                    json!({"tool": op.id, "purchase": purchase, "jobId": job, "givenBack": found}),
                );
                reply::add_fact(&mut answer, "givenBack", json!(found));
            }
            Err(e) => self.redactor.line(
                "error",
                json!({"tool": op.id, "ledger": e.to_string(), "purchase": purchase}),
            ),
        }
        answer
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn budgets(texts: &[&str]) -> Vec<Budget> {
        texts.iter().map(|t| Budget::parse(t).unwrap()).collect()
    }

    /// 2026-12-09 15:42:07 UTC.
    const NOW: u64 = 1_796_830_927;

    #[test]
    fn the_question_states_the_amount_and_the_running_totals() {
        let limits = budgets(&["calls=10/day", "credits=20/day"]);
        let cost = Cost {
            unit: Unit::Credits,
            amount: Some(Amount::units(3)),
        };
        // The tallies: calls today, credits today (the budget's own, which the calls
        // clause reads too: no extra count).
        let tallies = tallies(&limits, Unit::Credits, NOW);
        assert_eq!(tallies.len(), 2);
        let spent = [Amount::units(3), Amount::units(6)];
        assert_eq!(
            priced(&cost, &limits, &spent, None, NOW),
            "This costs 3 credits. Within the limits set for this person (days, weeks and \
             months in UTC), this would be 4 of at most 10 paid calls today (6 credits spent so \
             far), and 9 of at most 20 credits today (6 credits spent so far)."
        );
        let unknown = Cost {
            unit: Unit::Money,
            amount: None,
        };
        let limits = budgets(&["calls=10/hour"]);
        let tallies = super::tallies(&limits, Unit::Money, NOW);
        assert_eq!(
            tallies.len(),
            2,
            "the money spent this hour is counted for the question"
        );
        let spent = [Amount::units(2), Amount::parse("12.5").unwrap()];
        assert_eq!(
            priced(&unknown, &limits, &spent, Some("USD"), NOW),
            "Its amount is not known before the call (amount unknown). Within the limits set \
             for this person (days, weeks and months in UTC), this would be 3 of at most 10 paid \
             calls this hour (12.50 USD spent so far)."
        );
        assert_eq!(duration(18_180), "5 h 3 min");
        assert_eq!(duration(59), "under a minute");
    }
}
