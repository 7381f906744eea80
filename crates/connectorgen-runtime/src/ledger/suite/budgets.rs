//! The suite's tests of budgets and receipts (issue 47), passed by SQLite and by
//! PostgreSQL: a budget holds when claims race over two handles (two instances); its
//! window resets at the boundary (the claims' `now` is the clock, so the test moves it);
//! a call whose amount is unknown counts against a budget of calls only; a refund gives
//! an amount back once; a receipt outlives the retry window without its answer.
//!
//! Takes: a store that opens two handles on one ledger. Returns: nothing; each check
//! panics with what differed. The decision is the guard's own (`guard::decide`).

use super::{KEEP_ALL, Postgres, Retention, Sqlite, Store, claim, outcome};
use crate::guard::{self, Plan};
use crate::ledger::{Claim, Decision, Found, Ledger, Receipt, Refund, Status, Tally};
use connectorgen_core::budget::{Amount, Budget, Unit, Window};

/// 2026-12-09 23:59:50 UTC: ten seconds before a day ends.
const LATE: u64 = 1_796_860_790;

fn limits(texts: &[&str]) -> Vec<Budget> {
    texts.iter().map(|t| Budget::parse(t).unwrap()).collect()
}

/// The counts a claim at `now` makes for `limits` (one per budget, in order).
fn tallies(limits: &[Budget], now: u64) -> Vec<Tally> {
    limits
        .iter()
        .map(|b| Tally {
            unit: b.unit,
            since: b.window.start(now),
        })
        .collect()
}

/// A paid claim of `amount` credits (`None`: unknown) by `principal` at `now`, decided by
/// the guard under `limits`: whether it wrote a row, and the plan.
fn paid(
    ledger: &dyn Ledger,
    principal: &str,
    hash: &str,
    amount: Option<Amount>,
    limits: &[Budget],
    now: u64,
) -> (Option<i64>, Plan) {
    let counts = tallies(limits, now);
    let c = Claim {
        receipt: Some(Receipt {
            args: r#"{"prompt":"x"}"#,
            unit: Some(Unit::Credits),
            currency: None,
            amount,
        }),
        tallies: &counts,
        ..claim(principal, hash, None, now)
    };
    let mut plan = None;
    let never = |_: i64| false;
    let (_, written) = ledger
        .claim(&c, &mut |found: &Found| {
            let call = guard::Call {
                needs_consent: false,
                nonce: None,
                new_key: format!("k-{hash}"),
                in_flight: &never,
                retry_safe: true,
                spend: Some(guard::Spend {
                    unit: Unit::Credits,
                    amount,
                    limits,
                }),
            };
            let (decision, p) = guard::decide(&call, found);
            plan = Some(p);
            decision
        })
        .unwrap();
    (written.map(|e| e.id), plan.unwrap())
}

fn over(plan: &Plan) -> Option<guard::Over> {
    match plan {
        Plan::OverBudget(over) => Some(*over),
        _ => None,
    }
}

/// 5 credits a day, 1 credit a call: 20 distinct calls raced by 20 threads over four
/// handles (four instances) send exactly 5; the other 15 are refused, each having seen 5
/// spent. Five people in turn, so that a missing lock shows in more than one race.
fn a_budget_holds_when_claims_race_across_instances<S: Store>() {
    let handles = S::handles(KEEP_ALL, 4);
    let limits = limits(&["credits=5/day"]);
    for person in ["p", "q", "r", "s", "t"] {
        let sent = std::sync::atomic::AtomicU32::new(0);
        let refused = std::sync::Mutex::new(Vec::new());
        let start = std::sync::Barrier::new(20);
        std::thread::scope(|scope| {
            for i in 0..20 {
                let ledger = &handles[i % handles.len()];
                let (sent, refused, limits, start) = (&sent, &refused, &limits, &start);
                scope.spawn(move || {
                    let hash = format!("h{i}");
                    start.wait();
                    let one = Some(Amount::units(1));
                    match paid(&**ledger, person, &hash, one, limits, LATE - 100) {
                        (Some(_), _) => {
                            sent.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        }
                        (None, plan) => refused.lock().unwrap().push(over(&plan).unwrap()),
                    }
                });
            }
        });
        assert_eq!(
            sent.into_inner(),
            5,
            "{person}: exactly what fits was claimed"
        );
        let refused = refused.into_inner().unwrap();
        assert_eq!(refused.len(), 15);
        assert!(
            refused
                .iter()
                .all(|o| o.spent == Amount::units(5) && !o.unknown),
            "{refused:?}"
        );
    }
}

/// The day's budget spent at 23:59:50 UTC; at 00:00:00 the next day's window is empty and
/// the next call goes through. A refused request (the provider said no) counts for nothing.
fn the_window_resets_at_its_boundary<S: Store>() {
    let (a, b) = S::pair(KEEP_ALL);
    let limits = limits(&["credits=3/day"]);
    for i in 0..3 {
        let (row, _) = paid(
            &*a,
            "p",
            &format!("h{i}"),
            Some(Amount::units(1)),
            &limits,
            LATE,
        );
        assert!(row.is_some(), "call {i} fits");
    }
    let (row, plan) = paid(&*b, "p", "h3", Some(Amount::units(1)), &limits, LATE + 9);
    assert!(row.is_none(), "the fourth does not fit today");
    assert_eq!(over(&plan).unwrap().spent, Amount::units(3));
    assert_eq!(
        Window::Day.end(LATE + 9),
        LATE + 10,
        "the window ends at midnight"
    );
    let (row, _) = paid(&*b, "p", "h3", Some(Amount::units(1)), &limits, LATE + 10);
    assert!(row.is_some(), "a new day, a new budget");
    // The provider refused one: it spent nothing, and its room comes back.
    let (row, _) = paid(&*a, "p", "h4", Some(Amount::units(2)), &limits, LATE + 11);
    let id = row.unwrap();
    assert!(
        paid(&*a, "p", "h5", Some(Amount::units(1)), &limits, LATE + 12)
            .0
            .is_none()
    );
    a.finish(id, &outcome(Status::Rejected, None), LATE + 12)
        .unwrap();
    assert!(
        paid(&*b, "p", "h5", Some(Amount::units(1)), &limits, LATE + 13)
            .0
            .is_some()
    );
}

/// A call whose amount is unknown: counted by a budget of calls, not by one of credits
/// (which a known amount still fills), and refused when only a budget of credits could
/// count it.
fn an_unknown_amount_counts_against_calls<S: Store>() {
    let (a, b) = S::pair(KEEP_ALL);
    let both = limits(&["credits=5/day", "calls=3/day"]);
    assert!(paid(&*a, "p", "u1", None, &both, LATE).0.is_some());
    assert!(paid(&*b, "p", "u2", None, &both, LATE).0.is_some());
    assert!(
        paid(&*a, "p", "k1", Some(Amount::units(5)), &both, LATE)
            .0
            .is_some(),
        "the unknown ones took none of the credits"
    );
    let (row, plan) = paid(&*b, "p", "u3", None, &both, LATE);
    let refused = over(&plan).unwrap();
    assert!(row.is_none());
    assert_eq!(
        (refused.budget.unit, refused.spent, refused.unknown),
        (Unit::Calls, Amount::units(3), false)
    );
    let credits = limits(&["credits=5/day"]);
    let (row, plan) = paid(&*a, "q", "u4", None, &credits, LATE);
    assert!(row.is_none());
    assert!(over(&plan).unwrap().unknown, "no budget can count it");
}

/// A purchase given back (its refund succeeded) no longer counts; once only, and only the
/// principal's own.
fn a_refund_gives_the_amount_back_once<S: Store>() {
    let (a, b) = S::pair(KEEP_ALL);
    let limits = limits(&["credits=5/day"]);
    let (row, _) = paid(&*a, "p", "h1", Some(Amount::units(5)), &limits, LATE);
    let id = row.unwrap();
    a.finish(id, &outcome(Status::Job, None), LATE).unwrap();
    assert!(
        paid(&*b, "p", "h2", Some(Amount::units(1)), &limits, LATE)
            .0
            .is_none()
    );
    let refund = |ledger: &dyn Ledger, principal: &str, job: &str| {
        ledger
            .refund(&Refund {
                principal,
                tool: "createVideo",
                job_id: job,
                now: LATE + 1,
            })
            .unwrap()
    };
    assert!(!refund(&*b, "q", "job_1"), "another principal's purchase");
    assert!(!refund(&*b, "p", "job_2"), "another job");
    assert!(refund(&*b, "p", "job_1"));
    assert!(!refund(&*a, "p", "job_1"), "given back once");
    assert!(
        paid(&*a, "p", "h2", Some(Amount::units(5)), &limits, LATE + 2)
            .0
            .is_some()
    );
}

/// A receipt outlives the retry window (its stored answer dropped, its arguments kept)
/// until its own keeping ends; a row that is no receipt goes with the window.
fn a_receipt_outlives_the_retry_window_without_its_answer<S: Store>() {
    let (a, b) = S::pair(Retention {
        window: 10,
        consent: 10,
        max_bytes: 1 << 20,
        receipts: 1_000,
    });
    let limits = limits(&["credits=50/day"]);
    let (row, _) = paid(&*a, "p", "h1", Some(Amount::units(1)), &limits, 5_000);
    let receipt = row.unwrap();
    a.finish(receipt, &outcome(Status::Done, Some(100)), 5_000)
        .unwrap();
    a.release(receipt);
    let plain = b
        .claim(&claim("p", "h2", None, 5_000), &mut |_| Decision::Insert {
            key: "k".into(),
            nonce: None,
        })
        .unwrap()
        .1
        .unwrap();
    b.finish(plain.id, &outcome(Status::Done, Some(100)), 5_000)
        .unwrap();
    b.release(plain.id);
    assert_eq!(
        a.entry(receipt, "p")
            .unwrap()
            .unwrap()
            .result
            .map(|r| r.len()),
        Some(100)
    );
    // Past the window: the plain row is gone, the receipt stays without its answer.
    paid(&*b, "p", "h3", Some(Amount::units(1)), &limits, 5_020);
    assert_eq!(a.entry(plain.id, "p").unwrap(), None);
    let kept = a.entry(receipt, "p").unwrap().unwrap();
    assert_eq!((kept.status, kept.result), (Status::Done, None));
    // Still counted: the day's budget has 2 of 50 spent.
    let counts = tallies(&limits, 5_021);
    let found = a
        .claim(
            &Claim {
                tallies: &counts,
                ..claim("p", "h4", None, 5_021)
            },
            &mut |_| Decision::Nothing,
        )
        .unwrap()
        .0;
    assert_eq!(found.spent, [Amount::units(2)]);
    // Past its own keeping, it goes too.
    paid(&*b, "p", "h5", Some(Amount::units(1)), &limits, 6_100);
    assert_eq!(a.entry(receipt, "p").unwrap(), None);
}

macro_rules! budgets {
    ($store:ident, $module:ident) => {
        mod $module {
            use super::*;
            #[test]
            fn a_budget_holds_when_claims_race_across_instances() {
                super::a_budget_holds_when_claims_race_across_instances::<$store>();
            }
            #[test]
            fn the_window_resets_at_its_boundary() {
                super::the_window_resets_at_its_boundary::<$store>();
            }
            #[test]
            fn an_unknown_amount_counts_against_calls() {
                super::an_unknown_amount_counts_against_calls::<$store>();
            }
            #[test]
            fn a_refund_gives_the_amount_back_once() {
                super::a_refund_gives_the_amount_back_once::<$store>();
            }
            #[test]
            fn a_receipt_outlives_the_retry_window_without_its_answer() {
                super::a_receipt_outlives_the_retry_window_without_its_answer::<$store>();
            }
        }
    };
}

budgets!(Sqlite, sqlite);
budgets!(Postgres, postgres);
