//! The state of calls that lives in this process, as one type: what is out at the
//! provider right now, the consent questions open, and the outcomes the ledger could not
//! take yet. (What only the protocol knows, the tasks' last polls and the cancels waiting
//! on the person, is `serve`'s: `serve/handler/tasks.rs`, `Tasks`.)
//!
//! Takes: nothing at start (all empty). Returns: each part behind its own lock, through
//! methods named for what they do; a lock a panicking holder left poisoned is taken as
//! it is (every change here is one insert or remove, never left half done).
//! Must never: be the record of anything the ledger should hold (a row, an outcome it
//! took): this is what one process knows besides it, and it is gone at a restart; or
//! hold a lock across an await (the claim's turn is the one lock that may be).

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use super::InFlight;
use super::ask::Question;
use crate::ledger::Outcome;

#[derive(Default)]
pub(crate) struct Calls {
    /// Held by a claim from its look-up to its mark (`Stage::claim`): this process's
    /// claims take turns, as they did when the store ran on the event loop, now without
    /// holding anything but other claims.
    claims: tokio::sync::Mutex<()>,
    /// Rows whose request is out at the provider right now, with the outcome the
    /// identical calls waiting on it get.
    in_flight: Mutex<HashMap<i64, InFlight>>,
    /// Consent forms open or answered yes, by nonce (call/ask.rs).
    questions: Mutex<HashMap<String, Question>>,
    /// Outcomes the ledger could not record (a full disk, a database away), by row, with
    /// the error: the guard sees them as if recorded, so the identical call is answered
    /// from here instead of being sent again, until the ledger takes them
    /// (`Stage::record_held`).
    unrecorded: Mutex<HashMap<i64, (Outcome, String)>>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Calls {
    /// This process's turn to claim: no other claim of it runs until the guard drops.
    pub(super) async fn claim_turn(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.claims.lock().await
    }

    /// The rows out at the provider, locked (never across an await).
    pub(super) fn in_flight(&self) -> MutexGuard<'_, HashMap<i64, InFlight>> {
        lock(&self.in_flight)
    }

    /// Whether row `id`'s request is out at the provider from this process.
    pub(super) fn is_sending(&self, id: i64) -> bool {
        self.in_flight().contains_key(&id)
    }

    /// Row `id`'s request is no longer out (its send ended or its call went away).
    pub(super) fn sent(&self, id: i64) {
        self.in_flight().remove(&id);
    }

    pub(super) fn questions(&self) -> MutexGuard<'_, HashMap<String, Question>> {
        lock(&self.questions)
    }

    /// Holds row `id`'s outcome, which the ledger refused with `error`.
    pub(super) fn hold_outcome(&self, id: i64, outcome: Outcome, error: String) {
        lock(&self.unrecorded).insert(id, (outcome, error));
    }

    /// The outcomes held, to offer to the ledger again.
    pub(super) fn held_outcomes(&self) -> Vec<(i64, Outcome)> {
        lock(&self.unrecorded)
            .iter()
            .map(|(id, (outcome, _))| (*id, outcome.clone()))
            .collect()
    }

    /// The ledger took row `id`'s outcome.
    pub(super) fn recorded(&self, id: i64) {
        lock(&self.unrecorded).remove(&id);
    }

    /// The error that kept row `id`'s outcome out of the ledger, if one did.
    pub(super) fn unrecorded_error(&self, id: i64) -> Option<String> {
        lock(&self.unrecorded)
            .get(&id)
            .map(|(_, error)| error.clone())
    }

    /// Every outcome held, with its error (what a claim lays over the ledger's rows).
    pub(super) fn unrecorded(&self) -> HashMap<i64, (Outcome, String)> {
        lock(&self.unrecorded).clone()
    }
}
