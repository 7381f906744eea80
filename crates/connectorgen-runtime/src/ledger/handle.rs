//! The ledger as the server calls it: every store call run on tokio's blocking pool and
//! awaited, so a slow store (a PostgreSQL round trip behind a proxy, a claim waiting on
//! another instance's lock, SQLite's `fsync`) holds only the call that needs it, never
//! the event loop that answers every other session's reads and `tools/list`.
//!
//! Takes: a store (`Ledger`, synchronous) and calls with owned arguments. Returns: the
//! store's answers, awaited; a store call that panicked is `LedgerError::Store`.
//! Must never: change what a call means (each method is the trait's, one store call
//! each, in the order the caller awaits them), or run a store call on the event loop.
//!
//! Why a blocking pool and not an async driver: both stores are synchronous (rusqlite
//! has no async API; the `postgres` client drives a runtime of its own, which cannot run
//! on serve's), a claim's decision is a closure run inside the store's transaction, and
//! the suite that proves the stores' atomicity (`suite.rs`) tests the trait as it is. The
//! pool grows with the calls waiting on the store and its threads go when idle; the
//! stores themselves bound how many work at once (SQLite's one writer, PostgreSQL's one
//! connection per instance).

use std::sync::Arc;

use super::{Claim, Decision, Entry, Found, Ledger, LedgerError, Outcome, Receipt, Refund, Tally};
use crate::vault::{KeyUse, Sealed};
use connectorgen_core::budget::{Amount, Unit};

/// A claim with owned fields, to move onto a thread of the pool (`Claim` borrows).
#[derive(Debug, Clone)]
pub(crate) struct OwnedClaim {
    pub tool: String,
    pub args_hash: String,
    pub principal: String,
    pub nonce: Option<String>,
    pub now: u64,
    pub since: u64,
    pub busy: Vec<i64>,
    pub receipt: Option<OwnedReceipt>,
    pub tallies: Vec<Tally>,
}

/// A receipt with owned fields (`Receipt` borrows).
#[derive(Debug, Clone)]
pub(crate) struct OwnedReceipt {
    pub args: String,
    pub unit: Option<Unit>,
    pub currency: Option<String>,
    pub amount: Option<Amount>,
}

impl OwnedClaim {
    fn borrowed(&self) -> Claim<'_> {
        Claim {
            tool: &self.tool,
            args_hash: &self.args_hash,
            principal: &self.principal,
            nonce: self.nonce.as_deref(),
            now: self.now,
            since: self.since,
            busy: &self.busy,
            receipt: self.receipt.as_ref().map(|r| Receipt {
                args: &r.args,
                unit: r.unit,
                currency: r.currency.as_deref(),
                amount: r.amount,
            }),
            tallies: &self.tallies,
        }
    }
}

/// What a claim found and wrote, and what the decision made of it the last time it ran
/// (a store runs it again when its transaction has to be retried).
pub(crate) type Claimed<P> = (Found, Option<Entry>, Option<P>);

/// The async handle: cheap to clone, one store behind it.
#[derive(Clone)]
pub(crate) struct Handle {
    store: Arc<dyn Ledger>,
}

impl Handle {
    pub(crate) fn new(store: Arc<dyn Ledger>) -> Handle {
        Handle { store }
    }

    async fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce(&dyn Ledger) -> Result<T, LedgerError> + Send + 'static,
    ) -> Result<T, LedgerError> {
        let store = self.store.clone();
        tokio::task::spawn_blocking(move || f(&*store))
            .await
            .map_err(|e| LedgerError::Store(format!("a ledger operation failed: {e}")))?
    }

    /// `Ledger::claim`, with a decision that also returns what it planned (`P`).
    pub(crate) async fn claim<P: Send + 'static>(
        &self,
        claim: OwnedClaim,
        mut decide: impl FnMut(&Found) -> (Decision, P) + Send + 'static,
    ) -> Result<Claimed<P>, LedgerError> {
        self.run(move |store| {
            let mut planned = None;
            let (found, written) = store.claim(&claim.borrowed(), &mut |found| {
                let (decision, plan) = decide(found);
                planned = Some(plan);
                decision
            })?;
            Ok((found, written, planned))
        })
        .await
    }

    pub(crate) async fn finish(
        &self,
        id: i64,
        outcome: Outcome,
        now: u64,
    ) -> Result<(), LedgerError> {
        self.run(move |store| store.finish(id, &outcome, now)).await
    }

    /// `Ledger::refund`: the newest paid row of `tool` with `job_id` given back.
    pub(crate) async fn refund(
        &self,
        principal: String,
        tool: String,
        job_id: String,
        now: u64,
    ) -> Result<bool, LedgerError> {
        self.run(move |store| {
            store.refund(&Refund {
                principal: &principal,
                tool: &tool,
                job_id: &job_id,
                now,
            })
        })
        .await
    }

    pub(crate) async fn room(&self, now: u64) -> Result<(), LedgerError> {
        self.run(move |store| store.room(now)).await
    }

    /// `Ledger::release`, not awaited: it is best effort, and it is called where nothing
    /// can wait (a send's mark dropped). Outside a runtime (nothing else is) it runs here.
    pub(crate) fn release(&self, id: i64) {
        let store = self.store.clone();
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn_blocking(move || store.release(id));
            }
            Err(_) => store.release(id),
        }
    }

    pub(crate) async fn renew(&self, id: i64) {
        let _ = self
            .run(move |store| {
                store.renew(id);
                Ok(())
            })
            .await;
    }

    pub(crate) async fn keep_task(&self, id: i64, task: String) -> Result<bool, LedgerError> {
        self.run(move |store| store.keep_task(id, &task)).await
    }

    pub(crate) async fn entry(
        &self,
        id: i64,
        principal: String,
    ) -> Result<Option<Entry>, LedgerError> {
        self.run(move |store| store.entry(id, &principal)).await
    }
}

/// People's sealed credentials (issue 46): `Ledger`'s methods, each one store call off the
/// event loop. (`ledger::check_credential_keys` runs at start-up, before a handle exists.)
impl Handle {
    pub(crate) async fn put_credential(
        &self,
        principal: String,
        sealed: Sealed,
        now: u64,
    ) -> Result<(), LedgerError> {
        self.run(move |store| store.put_credential(&principal, &sealed, now))
            .await
    }

    pub(crate) async fn get_credential(
        &self,
        principal: String,
    ) -> Result<Option<Sealed>, LedgerError> {
        self.run(move |store| store.get_credential(&principal))
            .await
    }

    pub(crate) async fn reseal_credential(
        &self,
        principal: String,
        old: Sealed,
        new: Sealed,
        now: u64,
    ) -> Result<bool, LedgerError> {
        self.run(move |store| store.reseal_credential(&principal, &old, &new, now))
            .await
    }

    pub(crate) async fn delete_credential(&self, principal: String) -> Result<bool, LedgerError> {
        self.run(move |store| store.delete_credential(&principal))
            .await
    }

    pub(crate) async fn put_pending(
        &self,
        flow: String,
        principal: String,
        sealed: Sealed,
        expires: u64,
        now: u64,
    ) -> Result<(), LedgerError> {
        self.run(move |store| store.put_pending(&flow, &principal, &sealed, expires, now))
            .await
    }

    pub(crate) async fn take_pending(
        &self,
        flow: String,
        now: u64,
    ) -> Result<Option<(String, Sealed)>, LedgerError> {
        self.run(move |store| store.take_pending(&flow, now)).await
    }

    #[cfg_attr(
        not(test),
        expect(dead_code, reason = "start-up checks the keys before a handle exists")
    )]
    pub(crate) async fn key_uses(&self, now: u64) -> Result<Vec<KeyUse>, LedgerError> {
        self.run(move |store| store.key_uses(now)).await
    }

    #[cfg_attr(
        not(test),
        expect(dead_code, reason = "start-up checks the keys before a handle exists")
    )]
    pub(crate) async fn keep_key_check(&self, check: Sealed) -> Result<Sealed, LedgerError> {
        self.run(move |store| store.keep_key_check(&check)).await
    }
}
