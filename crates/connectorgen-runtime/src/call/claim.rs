//! The claim: the guard's verdict on a call and the ledger's write of it as one step, and
//! the mark that a row is being sent by this process; the outcomes the ledger could not
//! take, laid over its rows and offered to it again.
//!
//! Takes: a served tool, the arguments' hash and the consent nonce the call carries.
//! Returns: a `Claimed` verdict, holding the mark (dropped: the row is no longer sent
//! here) or the outcome of the identical call being sent to wait on.
//! Must never: let two identical calls of this process both see a row as not being sent
//! (the look-up and the mark are one turn), or forget an outcome the ledger did not take.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::json;

use super::{Answer, InFlight, Served, Stage, budget};
use crate::guard::{self, Verdict};
use crate::ledger::{Entry, Found, LedgerError, Outcome, OwnedClaim, OwnedReceipt, Status};
use connectorgen_core::budget::Amount;

/// How often outcomes held in memory are offered to the ledger again (docs/serve.md,
/// "A crash between send and record" and "Several instances"): well inside the shortest
/// lease a send holds its row for (`serve::open_ledger`: at least
/// `ledger::LOCK_WAIT_SECONDS` + 5 s), which each offer renews.
const HELD_EVERY: std::time::Duration = std::time::Duration::from_secs(5);

/// A verdict with what goes with it.
pub(super) struct Claimed<'a> {
    pub verdict: Verdict,
    /// The newest ledger row of this call: the next logical request's nonce follows it.
    pub after: Option<i64>,
    /// `Send`: the mark that this row is out, removed when dropped.
    pub sending: Option<Sending<'a>>,
    /// `InFlight`: the outcome of the identical call being sent.
    pub waiting: Option<InFlight>,
    /// For a paid call under budgets: what the ledger counted (`Claim::tallies`, in the
    /// order `budget::tallies` makes them), for the question's running totals.
    pub spent: Vec<Amount>,
}

/// What a tracked call brings to its claim besides its identity: its amount and the
/// budgets it must fit, and the receipt its new row keeps.
#[derive(Debug, Clone, Default)]
pub(super) struct Charge {
    pub cost: Option<budget::Cost>,
    pub receipt: Option<OwnedReceipt>,
}

/// A row being sent by this process. Dropping it (the send finished, or the call was
/// cancelled) takes the mark away.
pub(super) struct Sending<'a> {
    stage: &'a Stage,
    id: i64,
    pub tx: tokio::sync::watch::Sender<Option<Answer>>,
}

impl Drop for Sending<'_> {
    fn drop(&mut self) {
        self.stage.calls.sent(self.id);
        // An outcome the ledger did not take is known to this process only: the lease
        // stays until it runs out, so another instance does not take the row, still
        // pending there, for a call it may send again.
        if self.stage.calls.unrecorded_error(self.id).is_none() {
            self.stage.ledger.release(self.id);
        }
    }
}

impl Stage {
    /// Starts offering the ledger, every `HELD_EVERY`, the outcomes it could not take,
    /// and renewing their rows' leases meanwhile: an instance that gets no more calls
    /// still records them once the ledger is back, and until then no other instance can
    /// take a row this process holds the answer of. Called inside the runtime that
    /// serves (it spawns on it); the task ends with the stage.
    pub(crate) fn keep_offering_held(self: &Arc<Stage>) {
        let stage = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(HELD_EVERY);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                let Some(stage) = stage.upgrade() else {
                    break;
                };
                stage.record_held().await;
            }
        });
    }

    /// Offers the ledger again the outcomes it could not take. Once it takes one, the
    /// row is answered for every instance and its lease let go; held in this process
    /// only, the lease would run out with the row still pending, and another instance
    /// would send the identical call again (a second order where the provider ignores
    /// retry keys).
    async fn record_held(&self) {
        let held = self.calls.held_outcomes();
        let now = self.sealer.clock().now();
        for (id, outcome) in held {
            if self.ledger.finish(id, outcome, now).await.is_err() {
                // Still held here: the row stays this process's, or another instance
                // would find it pending once the lease ran out and send it again.
                self.ledger.renew(id).await;
                continue;
            }
            self.calls.recorded(id);
            self.redactor.line(
                "warning",
                json!({"message": format!(
                    "the outcome of ledger row {id}, held in memory, is recorded in the ledger now"
                )}),
            );
            // A send still under way lets its lease go when it ends (`Sending`).
            if !self.calls.is_sending(id) {
                self.ledger.release(id);
            }
        }
    }

    /// The guard's verdict on the call, made and marked in one step: no other identical
    /// call sees the ledger between this call's claim and its being marked in flight
    /// (otherwise two parallel calls with one yes could both be sent).
    #[expect(
        clippy::too_many_arguments,
        reason = "the call's identity, its consent and what it spends: all decided in one step"
    )]
    pub(super) async fn claim(
        &self,
        served: &Served,
        principal: &str,
        hash: &str,
        nonce: Option<&str>,
        needs_consent: bool,
        retry_safe: bool,
        charge: &Charge,
    ) -> Result<Claimed<'_>, LedgerError> {
        let op = &served.op;
        // Before this call is decided: an outcome held in memory may be taken now.
        self.record_held().await;
        // This process's claims take turns, from the look-up to the mark: the rows out at
        // the provider (`busy`) are exact for the whole claim, so none is pruned or taken
        // for an open retry while its send is under way.
        let _turn = self.calls.claim_turn().await;
        let now = self.sealer.clock().now();
        let busy: Vec<i64> = self.calls.in_flight().keys().copied().collect();
        let limits = self.settings.budgets.clone();
        let spend = charge.cost.filter(|_| !limits.is_empty());
        let tallies = spend
            .map(|s| budget::tallies(&limits, s.unit, now))
            .unwrap_or_default();
        let claim = OwnedClaim {
            tool: op.id.clone(),
            args_hash: hash.to_string(),
            principal: principal.to_string(),
            nonce: nonce.map(str::to_string),
            now,
            since: now.saturating_sub(self.settings.retry_window),
            busy: busy.clone(),
            receipt: charge.receipt.clone(),
            tallies,
        };
        let new_key = uuid::Uuid::new_v4().to_string();
        let nonce = nonce.map(str::to_string);
        let held = self.calls.unrecorded();
        let (found, written, plan) = self
            .ledger
            .claim(claim, move |found| {
                let in_flight = |id: i64| busy.contains(&id);
                let call = guard::Call {
                    needs_consent,
                    nonce: nonce.as_deref(),
                    new_key: new_key.clone(),
                    in_flight: &in_flight,
                    retry_safe,
                    spend: spend.map(|s| guard::Spend {
                        unit: s.unit,
                        amount: s.amount,
                        limits: &limits,
                    }),
                };
                guard::decide(&call, &overlay(found, &held))
            })
            .await?;
        let verdict = plan
            .and_then(|p| p.verdict(written))
            .ok_or_else(|| LedgerError::Store("the ledger returned no row".into()))?;
        let mut claimed = Claimed {
            after: found.last_id,
            verdict,
            sending: None,
            waiting: None,
            spent: found.spent,
        };
        let mut flying = self.calls.in_flight();
        match &claimed.verdict {
            Verdict::Send { entry, .. } => {
                let (tx, rx) = tokio::sync::watch::channel(None);
                flying.insert(entry.id, rx);
                claimed.sending = Some(Sending {
                    stage: self,
                    id: entry.id,
                    tx,
                });
            }
            Verdict::InFlight { entry } => claimed.waiting = flying.get(&entry.id).cloned(),
            _ => {}
        }
        Ok(claimed)
    }
}

/// What the ledger found, with the outcomes only this process holds (`held`) written
/// over their rows, as the ledger would have them had it recorded them.
fn overlay(found: &Found, held: &HashMap<i64, (Outcome, String)>) -> Found {
    let apply = |entry: &Option<Entry>| {
        entry.as_ref().map(|e| match held.get(&e.id) {
            Some((outcome, _)) => Entry {
                status: outcome.status,
                http_status: outcome.http_status,
                job_id: outcome.job_id.clone().or_else(|| e.job_id.clone()),
                result: outcome.result.clone().or_else(|| e.result.clone()),
                ..e.clone()
            },
            None => e.clone(),
        })
    };
    Found {
        by_nonce: apply(&found.by_nonce),
        // As the ledger's query: a refused request is no call's latest.
        latest: apply(&found.latest).filter(|e| e.status != Status::Rejected),
        last_id: found.last_id,
        spent: found.spent.clone(),
    }
}
