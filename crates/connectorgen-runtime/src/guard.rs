//! The run-time defences as one decision: given what the ledger holds for a call, send
//! it as a new logical request, send it again with the same retry key, answer it from
//! the ledger (a job already started, a result already had), or ask the person first.
//!
//! Takes: whether the call needs consent (and consent is enforced), the nonce of a
//! consent the call comes with, which rows are being sent right now, and the ledger's
//! findings. Returns: the ledger decision and the verdict the server acts on.
//! Must never: send anything, or let a call that needs consent become a new logical
//! request without a fresh consent nonce.
//!
//! The rules (docs/serve.md, "Consent, step by step" and "Retries and jobs"):
//! - a consent nonce names one logical request: the first time it starts one; again,
//!   it is that request (a retry), whatever has happened since;
//! - without a nonce, the newest identical call in the retry window decides: still
//!   open (no answer yet: a timeout, a 5xx, a crash) → the same request again, same
//!   key — but only when a repeat reaches the provider as the same request (a retry key
//!   is sent, or `inherent`): otherwise its outcome is unknown and it is not sent again,
//!   since a provider that cannot recognise a repeat would take it as a second order;
//!   answered (a job, a success) → not sent, answered from the ledger; a retry that the
//!   provider answered with anything but success (`Status::Unknown`: a reused key may be
//!   answered `409` or `422 … must be unique` when the first attempt went through) → not
//!   sent again on its own either;
//! - nothing in the window: a new request, which needs consent if the tool does;
//! - a new request of a paid call is made only when it fits every budget (docs/serve.md,
//!   "Budgets and receipts"): with what the ledger counted under the principal's budget
//!   lock, in the claim's transaction, so racing calls never both take the last room.
//!   A call that would pass one is not sent and never asked about (`Verdict::OverBudget`),
//!   whatever consent it carries: only the operator can raise a limit.

use super::ledger::{Decision, Entry, Found, Status};
use connectorgen_core::budget::{Amount, Budget, Unit};

/// What the server does with a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Send: a new logical request (`retry: false`) or another attempt of one, with the
    /// entry's key either way.
    Send { entry: Entry, retry: bool },
    /// Do not send: this exact call already started a job or succeeded; answer with the
    /// stored result (and, for a job, the instruction to poll).
    Answer { entry: Entry },
    /// Do not send: the identical call is out at the provider right now.
    InFlight { entry: Entry },
    /// Do not send: the identical call was sent and no answer came (a timeout, an error),
    /// and a repeat would not reach the provider as the same request (no retry key):
    /// whether it went through must be checked, and only the person can order another.
    Unknown { entry: Entry },
    /// Do not send: the person must agree first. `spent` when the consent the call
    /// carried was used already by a request the provider refused.
    AskConsent { spent: bool },
    /// Do not send, and do not ask: a new request would pass a budget.
    OverBudget(Over),
}

/// What a paid call spends, and the budgets it must fit.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Spend<'a> {
    /// `Unit::Credits` or `Unit::Money`.
    pub unit: Unit,
    /// `None`: not known before the call (no `spends.amount`, or its input left out).
    pub amount: Option<Amount>,
    /// The budgets in force; `Found::spent[i]` is what the ledger counted for `limits[i]`.
    pub limits: &'a [Budget],
}

/// The budget a new request would pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Over {
    pub budget: Budget,
    /// What was spent of it in its window, this call left out.
    pub spent: Amount,
    /// The call's amount is not known, and only budgets of amounts could count it.
    pub unknown: bool,
}

/// The first budget a new request of `spend` would pass, given what was counted of each
/// (`spent`, in the order of `spend.limits`): a count of calls takes one more; an amount of
/// the call's unit takes its amount; a call whose amount is unknown is refused by an amount
/// budget of its unit unless a budget of calls counts it.
pub(crate) fn over(spend: &Spend<'_>, spent: &[Amount]) -> Option<Over> {
    let counted = spend.limits.iter().any(|b| b.unit == Unit::Calls);
    for (i, budget) in spend.limits.iter().enumerate() {
        let so_far = spent.get(i).copied().unwrap_or_default();
        let adds = match budget.unit {
            Unit::Calls => Amount::units(1),
            unit if unit != spend.unit => continue,
            _ => match spend.amount {
                Some(amount) => amount,
                None if counted => continue,
                None => {
                    return Some(Over {
                        budget: *budget,
                        spent: so_far,
                        unknown: true,
                    });
                }
            },
        };
        if so_far
            .checked_add(adds)
            .is_none_or(|total| total > budget.limit)
        {
            return Some(Over {
                budget: *budget,
                spent: so_far,
                unknown: false,
            });
        }
    }
    None
}

/// What one call brings to the decision.
pub(crate) struct Call<'a> {
    /// The tool needs consent and consent is enforced.
    pub needs_consent: bool,
    /// The nonce of the consent (confirmation token or elicitation) the call carries.
    pub nonce: Option<&'a str>,
    /// A fresh retry key, used if the call becomes a new logical request.
    pub new_key: String,
    /// Whether a row's request is being sent right now by this process (another
    /// instance's sends are the row's own `Entry::sending`).
    pub in_flight: &'a (dyn Fn(i64) -> bool + Sync),
    /// Whether a repeat of this call reaches the provider as the same request: the same
    /// retry key is sent again, or the operation is `inherent`.
    pub retry_safe: bool,
    /// A paid call under budgets: a new request must fit them.
    pub spend: Option<Spend<'a>>,
}

/// The ledger decision for `call` given `found`, and how to read the claim's result.
pub(crate) fn decide(call: &Call<'_>, found: &Found) -> (Decision, Plan) {
    let (decision, plan) = decide_request(call, found);
    // A new request, or the question that would lead to one: not past a budget.
    let new = matches!(decision, Decision::Insert { .. });
    if (new || matches!(plan, Plan::AskConsent { .. }))
        && let Some(over) = call.spend.as_ref().and_then(|s| over(s, &found.spent))
    {
        return (Decision::Nothing, Plan::OverBudget(over));
    }
    (decision, plan)
}

/// `decide`, budgets aside.
fn decide_request(call: &Call<'_>, found: &Found) -> (Decision, Plan) {
    let new = |nonce: Option<&str>| Decision::Insert {
        key: call.new_key.clone(),
        nonce: nonce.map(str::to_string),
    };
    let existing = |entry: &Entry| -> (Decision, Plan) {
        match entry.status {
            Status::Pending if entry.sending || (call.in_flight)(entry.id) => {
                (Decision::Nothing, Plan::InFlight(entry.clone()))
            }
            Status::Pending if call.retry_safe => (Decision::Retry(entry.id), Plan::Retry),
            Status::Pending => (Decision::Nothing, Plan::Unknown(entry.clone())),
            // A retry the provider answered with anything but success: what it said may
            // mean the first attempt went through (a reused key), so it is not sent again
            // on its own, with or without a key.
            Status::Unknown => (Decision::Nothing, Plan::Unknown(entry.clone())),
            Status::Job | Status::Done => (Decision::Nothing, Plan::Answer(entry.clone())),
            // Only reached through a nonce: the latest-row query leaves rejected rows out.
            Status::Rejected => (Decision::Nothing, Plan::AskConsent { spent: true }),
        }
    };
    match (call.nonce, &found.by_nonce, &found.latest) {
        (Some(_), Some(entry), _) => match existing(entry) {
            (_, Plan::AskConsent { .. }) if !call.needs_consent => (new(None), Plan::New),
            other => other,
        },
        (Some(nonce), None, _) => (new(Some(nonce)), Plan::New),
        (None, _, Some(entry)) => existing(entry),
        (None, _, None) if call.needs_consent => {
            (Decision::Nothing, Plan::AskConsent { spent: false })
        }
        (None, _, None) => (new(None), Plan::New),
    }
}

/// How the row `claim` returns is to be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Plan {
    New,
    Retry,
    Answer(Entry),
    InFlight(Entry),
    Unknown(Entry),
    AskConsent { spent: bool },
    OverBudget(Over),
}

impl Plan {
    /// The verdict, given the row the ledger wrote or counted.
    pub(crate) fn verdict(self, written: Option<Entry>) -> Option<Verdict> {
        Some(match self {
            Plan::New => Verdict::Send {
                entry: written?,
                retry: false,
            },
            Plan::Retry => Verdict::Send {
                entry: written?,
                retry: true,
            },
            Plan::Answer(entry) => Verdict::Answer { entry },
            Plan::InFlight(entry) => Verdict::InFlight { entry },
            Plan::Unknown(entry) => Verdict::Unknown { entry },
            Plan::AskConsent { spent } => Verdict::AskConsent { spent },
            Plan::OverBudget(over) => Verdict::OverBudget(over),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::{Claim, Ledger, Outcome, SqliteLedger};

    /// One call through the real (in-memory) ledger, as the server makes it.
    fn run(
        ledger: &SqliteLedger,
        needs_consent: bool,
        nonce: Option<&str>,
        key: &str,
        now: u64,
        busy: &[i64],
    ) -> Verdict {
        let in_flight = |id: i64| busy.contains(&id);
        let call = Call {
            needs_consent,
            nonce,
            new_key: key.to_string(),
            in_flight: &in_flight,
            retry_safe: !key.starts_with("unkeyed"),
            spend: None,
        };
        let claim = Claim {
            tool: "createVideo",
            args_hash: "h",
            principal: "p",
            nonce,
            now,
            since: now.saturating_sub(3_600),
            busy: &[],
            receipt: None,
            tallies: &[],
        };
        let mut plan = None;
        let (_, written) = ledger
            .claim(&claim, &mut |found| {
                let (decision, p) = decide(&call, found);
                plan = Some(p);
                decision
            })
            .unwrap();
        plan.unwrap().verdict(written).unwrap()
    }

    fn finish(ledger: &SqliteLedger, entry: &Entry, status: Status) {
        let outcome = Outcome {
            status,
            http_status: Some(200),
            job_id: None,
            result: None,
            media_type: None,
        };
        ledger.finish(entry.id, &outcome, entry.updated).unwrap();
    }

    fn sent(v: Verdict) -> (Entry, bool) {
        match v {
            Verdict::Send { entry, retry } => (entry, retry),
            other => panic!("expected a send, got {other:?}"),
        }
    }

    #[test]
    fn a_paid_call_without_consent_is_not_recorded_or_sent() {
        let ledger = SqliteLedger::in_memory().unwrap();
        assert_eq!(
            run(&ledger, true, None, "k1", 1_000, &[]),
            Verdict::AskConsent { spent: false }
        );
        // Asking wrote nothing: the next call with the nonce is the first request.
        let (entry, retry) = sent(run(&ledger, true, Some("n1"), "k2", 1_001, &[]));
        assert_eq!((entry.key.as_str(), retry), ("k2", false));
    }

    #[test]
    fn a_retry_after_a_timeout_carries_the_same_key_without_new_consent() {
        let ledger = SqliteLedger::in_memory().unwrap();
        let (first, _) = sent(run(&ledger, true, Some("n1"), "k1", 1_000, &[]));
        // Same token again (the model repeats the exact call)…
        let (again, retry) = sent(run(&ledger, true, Some("n1"), "k-unused", 1_030, &[]));
        assert_eq!(
            (again.id, again.key.as_str(), retry),
            (first.id, "k1", true)
        );
        // …or the call without the token: still the same request, same key.
        let (again, retry) = sent(run(&ledger, true, None, "k-unused", 1_060, &[]));
        assert_eq!(
            (again.id, again.key.as_str(), retry),
            (first.id, "k1", true)
        );
    }

    #[test]
    fn an_open_call_without_a_retry_key_is_not_sent_again() {
        let ledger = SqliteLedger::in_memory().unwrap();
        let (first, _) = sent(run(&ledger, true, Some("n1"), "unkeyed-1", 1_000, &[]));
        // The provider never answered. Without a key the provider would see a second
        // order: neither the same confirmation nor the bare call sends it again.
        for nonce in [Some("n1"), None] {
            match run(&ledger, true, nonce, "unkeyed-2", 1_030, &[]) {
                Verdict::Unknown { entry } => assert_eq!(entry.id, first.id),
                other => panic!("expected the outcome to be unknown, got {other:?}"),
            }
        }
        // A fresh consent (the person asked for another, identical one) is a new request.
        let (second, retry) = sent(run(&ledger, true, Some("n2"), "unkeyed-3", 1_060, &[]));
        assert!(second.id != first.id && !retry);
    }

    /// A retry answered with a refusal (`422 client_order_id must be unique`) may mean the
    /// first attempt went through: the row is `unknown`, and neither the same
    /// confirmation nor the bare call sends it again, keyed as it is (issue 43).
    #[test]
    fn a_refused_retry_is_never_sent_again_on_its_own() {
        let ledger = SqliteLedger::in_memory().unwrap();
        let (first, _) = sent(run(&ledger, true, Some("n1"), "k1", 1_000, &[]));
        let (again, retry) = sent(run(&ledger, true, Some("n1"), "k-unused", 1_030, &[]));
        assert!(retry && again.id == first.id);
        finish(&ledger, &again, Status::Unknown);
        for nonce in [Some("n1"), None] {
            match run(&ledger, true, nonce, "k2", 1_060, &[]) {
                Verdict::Unknown { entry } => assert_eq!(entry.id, first.id),
                other => panic!("expected the outcome to be unknown, got {other:?}"),
            }
        }
        // Only a fresh consent (the person asked for another one) is a new request.
        let (second, retry) = sent(run(&ledger, true, Some("n2"), "k3", 1_090, &[]));
        assert!(second.id != first.id && !retry);
    }

    #[test]
    fn a_started_job_answers_identical_calls_until_a_fresh_consent() {
        let ledger = SqliteLedger::in_memory().unwrap();
        let (first, _) = sent(run(&ledger, true, Some("n1"), "k1", 1_000, &[]));
        finish(&ledger, &first, Status::Job);
        for nonce in [None, Some("n1")] {
            match run(&ledger, true, nonce, "k2", 1_010, &[]) {
                Verdict::Answer { entry } => assert_eq!(entry.id, first.id),
                other => panic!("expected the first job, got {other:?}"),
            }
        }
        // A new yes is a new request, with a new key.
        let (second, retry) = sent(run(&ledger, true, Some("n2"), "k3", 1_020, &[]));
        assert_ne!(second.id, first.id);
        assert_eq!((second.key.as_str(), retry), ("k3", false));
    }

    #[test]
    fn an_identical_call_while_one_is_out_is_not_sent() {
        let ledger = SqliteLedger::in_memory().unwrap();
        let (first, _) = sent(run(&ledger, false, None, "k1", 1_000, &[]));
        match run(&ledger, false, None, "k2", 1_001, &[first.id]) {
            Verdict::InFlight { entry } => assert_eq!(entry.id, first.id),
            other => panic!("expected in-flight, got {other:?}"),
        }
    }

    #[test]
    fn a_consent_spent_on_a_refused_request_does_not_open_a_new_one() {
        let ledger = SqliteLedger::in_memory().unwrap();
        let (first, _) = sent(run(&ledger, true, Some("n1"), "k1", 1_000, &[]));
        finish(&ledger, &first, Status::Rejected);
        assert_eq!(
            run(&ledger, true, Some("n1"), "k2", 1_010, &[]),
            Verdict::AskConsent { spent: true }
        );
        assert_eq!(
            run(&ledger, true, None, "k2", 1_010, &[]),
            Verdict::AskConsent { spent: false }
        );
    }

    #[test]
    fn free_tracked_calls_start_without_consent_and_the_window_ends_retries() {
        let ledger = SqliteLedger::in_memory().unwrap();
        let (first, _) = sent(run(&ledger, false, None, "k1", 1_000, &[]));
        let (again, retry) = sent(run(&ledger, false, None, "k2", 2_000, &[]));
        assert_eq!((again.id, retry), (first.id, true));
        let (later, retry) = sent(run(&ledger, false, None, "k3", 1_000 + 3_601, &[]));
        assert_ne!(later.id, first.id);
        assert_eq!((later.key.as_str(), retry), ("k3", false));
    }
}
