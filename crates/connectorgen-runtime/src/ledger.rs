//! The ledger: every tracked call (one that spends, starts async work, needs consent
//! or carries a retry key) as one row — tool, argument hash, retry key, the consent
//! nonce it was sent under, status, job id, the provider's answer — so that a retry,
//! even after a restart, reaches the provider as a retry or is answered from here.
//!
//! Takes: a claim (tool, hash, nonce, time) and a decision function from `guard`.
//! Returns: what the decision made of it, with the row it concerns.
//! Must never: send anything (the caller sends after `claim` has returned, so the row
//! is durable first) or decide policy (that is `guard`'s; the ledger only makes the
//! look-up and the write one atomic step).
//!
//! What it keeps (docs/serve.md, "What the ledger keeps"): a row only as long as it can
//! decide a call — inside the retry window, or, for a row made under a consent nonce,
//! as long as a consent value naming it can still open — and never one being sent. Rows
//! past that are deleted by the next claim, in the same transaction. The rows' size is
//! bounded (`Retention::max_bytes`): at the bound a new logical request is refused
//! (`LedgerError::Full`) rather than a live row forgotten, and an answer that would not
//! fit is recorded without its body (the status, which is what stops a second send, is
//! always recorded).
//!
//! Budgets and receipts (issue 47; docs/serve.md, "Budgets and receipts"): the row of a
//! call that needs consent is a receipt, holding the arguments as agreed and, for a paid
//! call, what it spends (`Receipt`); a claim of a paid call counts what its principal
//! spent in each budget's window (`Claim::tallies` → `Found::spent`) in the transaction
//! that writes the row, under the principal's budget lock, so the guard's refusal of a
//! row past a limit holds across instances. A receipt is kept past the retry window for
//! `Retention::receipts`, its stored answer dropped once it decides no call; `refund`
//! marks a purchase given back.
//!
//! Rows are partitioned by connector (its service name) and by principal: the SHA-256 of
//! the credential a call goes out with (`credential::Credential::identity`), never the
//! credential. A claim sees only its own partition, so two credentials sharing a store
//! never meet each other's jobs, replays or consent nonces.
//!
//! This file holds the trait and the types both stores share. Two stores implement it,
//! side by side under `ledger/`: SQLite, embedded, for one instance (`sqlite.rs`), and
//! PostgreSQL for several instances sharing one ledger (`pg.rs`, docs/serve.md, "Several
//! instances"), where "being sent right now" is a lease on the row that every instance
//! sees. `suite.rs` is the one test suite both pass. The server calls them through
//! `handle.rs`, which runs every store call off the event loop.
//!
//! People's own provider credentials (issue 46) are kept here too, sealed by `vault`
//! before they reach a store, so a store only ever holds key ids, nonces and ciphertext:
//! one credential per principal and connector, kept until deleted (the retry window
//! never prunes it); the state of a connection in progress between the browser's start
//! and its callback (pending, single use, gone when it expires); and one check value per
//! key id, which `check_credential_keys` opens at start-up. Each store keeps them in
//! tables of their own (`sqlite/credentials.rs`, `pg/credentials.rs`), partitioned by
//! connector like the calls.

mod handle;
mod pg;
mod sqlite;
#[cfg(test)]
mod suite;

pub(crate) use handle::{Handle, OwnedClaim, OwnedReceipt};
pub(crate) use pg::{LOCK_WAIT_SECONDS, PgLedger, shown as shown_url};
pub(crate) use sqlite::SqliteLedger;

use crate::vault::{self, KeyCheckError, KeyUse, Keys, Sealed};
use connectorgen_core::budget::{Amount, Unit};

/// Where a logical request stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
    /// Recorded, and sent or about to be: the outcome is not known (a timeout, a crash,
    /// a 5xx). A retry goes out with the same key.
    Pending,
    /// The provider accepted it and handed back a job that may still be running.
    Job,
    /// The provider answered with success.
    Done,
    /// The provider refused it (a 4xx that means nothing happened).
    Rejected,
    /// Sent again with its retry key after an attempt that got no answer, and answered
    /// with anything but success (`422 … must be unique`, `409 Conflict`, "duplicate"):
    /// a provider answers a reused key so when the first attempt went through, so the
    /// outcome is unknown, and it is never sent again on its own (docs/RETRIES.md).
    Unknown,
}

impl Status {
    fn as_str(self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::Job => "job",
            Status::Done => "done",
            Status::Rejected => "rejected",
            Status::Unknown => "unknown",
        }
    }

    fn parse(text: &str) -> Status {
        match text {
            "job" => Status::Job,
            "done" => Status::Done,
            "rejected" => Status::Rejected,
            "unknown" => Status::Unknown,
            _ => Status::Pending,
        }
    }
}

/// One row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    pub id: i64,
    pub tool: String,
    pub args_hash: String,
    /// The retry key sent with every attempt of this logical request.
    pub key: String,
    /// The consent nonce it was sent under, if any.
    pub nonce: Option<String>,
    pub status: Status,
    pub http_status: Option<u16>,
    pub job_id: Option<String>,
    /// The provider's answer body, when it succeeded: its text, or base64 of its bytes
    /// when its media type is not text (`call::reply::stored`).
    pub result: Option<String>,
    pub created: u64,
    pub updated: u64,
    pub attempts: u32,
    /// The answer's media type (`Content-Type` as received), so a replay is the same
    /// resource; `None` on rows written before it was kept.
    pub media_type: Option<String>,
    /// Being sent right now by another instance sharing the store (its lease on the row
    /// has not run out). Always false in SQLite, whose only sender is this process: the
    /// caller's own sends are its `Claim::busy`.
    pub sending: bool,
    /// The state the job's task ended in (the tasks extension), as JSON, once it ended:
    /// kept with the row (`Ledger::keep_task`), so a finished task is answered after a
    /// restart or on another instance without polling again, and weighs on the bound
    /// instead of on memory. Read by `Ledger::entry` only: `None` in a claim's rows.
    pub task: Option<String>,
}

impl Entry {
    /// The status as stored: `pending`, `job`, `done`, `rejected`, `unknown`.
    pub(crate) fn status_name(&self) -> &'static str {
        self.status.as_str()
    }
}

/// What a new row of a call that needs consent keeps besides its identity: the receipt of
/// what the person agreed to (docs/serve.md, "Budgets and receipts").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Receipt<'a> {
    /// The arguments as agreed: canonical JSON, every secret redacted.
    pub args: &'a str,
    /// What a paid call spends: `credits` or `money`; `None` for a permanent call that
    /// spends nothing.
    pub unit: Option<Unit>,
    pub currency: Option<&'a str>,
    /// The amount, when known before the call.
    pub amount: Option<Amount>,
}

/// One count a claim of a paid call makes: what this principal spent of `unit` in the
/// rows created at or after `since` (`Unit::Calls`: their number, in whole units).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Tally {
    pub unit: Unit,
    pub since: u64,
}

/// What `claim` looks for.
#[derive(Debug, Clone)]
pub(crate) struct Claim<'a> {
    pub tool: &'a str,
    pub args_hash: &'a str,
    /// Whose call it is: the identity (a hash) of the credential it goes out with. Only
    /// this principal's rows are looked at or counted.
    pub principal: &'a str,
    /// The nonce of the consent (token or elicitation) the call comes with.
    pub nonce: Option<&'a str>,
    pub now: u64,
    /// Rows created before this are no longer retries of anything.
    pub since: u64,
    /// Rows being sent right now by this process: never pruned, whatever their age.
    pub busy: &'a [i64],
    /// What a new row keeps for the receipt (a call that needs consent), if any.
    pub receipt: Option<Receipt<'a>>,
    /// The counts the decision weighs a paid call against (`Found::spent`, in this order),
    /// made under the principal's budget lock: no other claim of theirs writes a paid row
    /// between the count and this claim's write. Empty for any other call.
    pub tallies: &'a [Tally],
}

/// What `claim` found, handed to the decision.
#[derive(Debug, Clone, Default)]
pub(crate) struct Found {
    /// The row sent under the call's nonce (any age).
    pub by_nonce: Option<Entry>,
    /// The newest row of this tool and these arguments in the window, rejected ones
    /// left out.
    pub latest: Option<Entry>,
    /// The newest row of this tool and these arguments of any age and status: the next
    /// logical request's consent nonce is derived from it (`seal::Sealer::nonce_for`).
    pub last_id: Option<i64>,
    /// Each of `Claim::tallies`, counted: the amounts of this principal's paid rows of
    /// its unit created since its start, refused ones and ones given back left out (for
    /// `Unit::Calls`, how many paid rows, refused ones left out).
    pub spent: Vec<Amount>,
}

/// What the decision asks the ledger to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Decision {
    /// Record a new logical request (pending) under this key and nonce.
    Insert { key: String, nonce: Option<String> },
    /// Count another attempt of this row (sent again with its key).
    Retry(i64),
    /// Write nothing.
    Nothing,
}

/// The outcome of a sent attempt.
#[derive(Debug, Clone)]
pub(crate) struct Outcome {
    pub status: Status,
    pub http_status: Option<u16>,
    pub job_id: Option<String>,
    pub result: Option<String>,
    /// The media type of `result` (see `Entry::media_type`).
    pub media_type: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum LedgerError {
    /// The store failed (a full disk, a read-only file, a lost row).
    #[error("ledger: {0}")]
    Store(String),
    /// A new logical request would take the rows past `Retention::max_bytes`. Every row
    /// still able to decide a call is kept, so nothing is sent until one ages out.
    #[error(
        "the ledger is full: {rows} calls that can still be retried or answered from it hold \
         {used} of the {max} bytes it may use (--ledger-max-bytes); the oldest of them \
         leaves it in {wait} s"
    )]
    Full {
        rows: u64,
        used: u64,
        max: u64,
        /// Seconds until the oldest row can be pruned.
        wait: u64,
    },
}

/// How long rows are kept and how much they may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Retention {
    /// Seconds a row decides identical calls (`--retry-window`).
    pub window: u64,
    /// Seconds a consent value stays good (`seal::TOKEN_LIFETIME_SECONDS`): a row made
    /// under a nonce is kept at least this long after its last write, so a value relayed
    /// late still finds its request (a retry, or an answer) instead of starting another.
    pub consent: u64,
    /// The most bytes the rows may hold: `ROW_BYTES` each plus their stored answers
    /// (`--ledger-max-bytes`).
    pub max_bytes: u64,
    /// Seconds a receipt (a row made for a call that needs consent) is kept after its
    /// last write: the longer of `--receipts-days` and the longest budget window, so a
    /// paid call is counted as long as a window can hold it. Past `keep`, its stored
    /// answer and task state are dropped (it decides no call any more), its receipt kept.
    pub receipts: u64,
}

impl Retention {
    /// Whether the rows, holding `used` bytes, stay within the bound when `replaced`
    /// bytes of them give way to `added` (an answer or a task's state written over the
    /// row's old one).
    fn fits(self, used: u64, replaced: u64, added: u64) -> bool {
        used.saturating_sub(replaced).saturating_add(added) <= self.max_bytes
    }

    /// Seconds after its last write a row is deleted: the window, or for a row with a
    /// nonce the longer of the window and a consent value's life. (A receipt's answer is
    /// dropped then, and the receipt kept for `kept_receipts`.)
    fn keep(self, nonce: bool) -> u64 {
        if nonce {
            self.window.max(self.consent)
        } else {
            self.window
        }
    }

    /// Seconds after its last write a receipt is deleted: never before a row without one
    /// would be.
    fn kept_receipts(self) -> u64 {
        self.receipts.max(self.keep(true))
    }
}

/// A paid call given back: `Ledger::refund`'s look-up.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Refund<'a> {
    pub principal: &'a str,
    /// The paid operation whose purchase is given back.
    pub tool: &'a str,
    pub job_id: &'a str,
    pub now: u64,
}

/// What one row counts for besides its stored answer: its fixed fields (ids, hash,
/// key, nonce, times) and SQLite's overhead, rounded up.
pub(crate) const ROW_BYTES: u64 = 512;

/// The store of tracked calls.
pub(crate) trait Ledger: Send + Sync {
    /// Looks up the call and applies `decide` to what was found, as one atomic step
    /// (no other claim, in this process or another on the same store, sees a state in
    /// between). Returns the decision and the row it wrote or counted, if any; the
    /// write is durable when this returns. Rows that can no longer decide a call are
    /// pruned first (never those in `claim.busy`); a new row that would take the store
    /// past its bound is refused with `LedgerError::Full`, nothing written.
    fn claim(
        &self,
        claim: &Claim<'_>,
        decide: &mut Decide<'_>,
    ) -> Result<(Found, Option<Entry>), LedgerError>;

    /// Records how an attempt ended (an answer that would pass the bound without its
    /// body). An error means the outcome is not recorded: the row stays as it was.
    fn finish(&self, id: i64, outcome: &Outcome, now: u64) -> Result<(), LedgerError>;

    /// Marks the newest paid row of `refund.tool` with `refund.job_id`, of this principal
    /// and connector, as given back (its amount no longer counts against the budgets);
    /// whether one was (a row given back already, or none, changes nothing).
    fn refund(&self, refund: &Refund<'_>) -> Result<bool, LedgerError>;

    /// `LedgerError::Full` when a new row would not fit now: checked before the person is
    /// asked, so no one agrees to a call that cannot be recorded. (`claim` checks again:
    /// the store may fill in between.)
    fn room(&self, now: u64) -> Result<(), LedgerError>;

    /// This process no longer sends row `id` (the send ended, or its call went away):
    /// another instance may retry it now instead of when the lease runs out. Best effort:
    /// a lease left behind runs out by itself.
    fn release(&self, _id: i64) {}

    /// This process still holds row `id`'s outcome (the store would not take it): its
    /// lease is extended as if it were being sent, so no other instance takes the row,
    /// pending there, and sends it again. Best effort, like `release`; a no-op where this
    /// process is the only sender (SQLite).
    fn renew(&self, _id: i64) {}

    /// Keeps `task`, the state row `id`'s task ended in, with the row: counted with its
    /// answer by `Retention::max_bytes`, pruned with it. `Ok(false)`, nothing written, when
    /// it would take the rows past the bound (the caller holds it in memory instead).
    fn keep_task(&self, id: i64, task: &str) -> Result<bool, LedgerError>;

    /// The row `id` of `principal` on this store's connector, as stored, or `None` when
    /// there is none (never written, pruned, or another connector's or person's): a task
    /// of the tasks extension is a row, found again by its id after a restart or on
    /// another instance. Row ids are sequential, so guessing one must not open another
    /// person's job.
    fn entry(&self, id: i64, principal: &str) -> Result<Option<Entry>, LedgerError>;

    /// Keeps `sealed` as `principal`'s credential on this store's connector, in place of
    /// the one before, if any (the person connected again). Never pruned: it stays until
    /// `delete_credential`.
    fn put_credential(&self, principal: &str, sealed: &Sealed, now: u64)
    -> Result<(), LedgerError>;

    /// `principal`'s sealed credential on this connector, or `None`.
    fn get_credential(&self, principal: &str) -> Result<Option<Sealed>, LedgerError>;

    /// Writes `new` over `principal`'s credential only while the row is still `old` (the
    /// same seal: its nonce), and returns whether it did. A stale credential re-sealed on
    /// use (`vault::reseal`) goes through this, so it never brings back a credential the
    /// person deleted or replaced meanwhile.
    fn reseal_credential(
        &self,
        principal: &str,
        old: &Sealed,
        new: &Sealed,
        now: u64,
    ) -> Result<bool, LedgerError>;

    /// Deletes `principal`'s credential on this connector; whether there was one.
    fn delete_credential(&self, principal: &str) -> Result<bool, LedgerError>;

    /// Keeps the sealed state of `principal`'s connection in progress under `flow` (the
    /// id the browser carries to the callback: OAuth's `state`) until `expires`; pending
    /// rows expired at `now` are deleted first. A `flow` already kept is an error
    /// (ids are random: it is a bug or a replay).
    fn put_pending(
        &self,
        flow: &str,
        principal: &str,
        sealed: &Sealed,
        expires: u64,
        now: u64,
    ) -> Result<(), LedgerError>;

    /// Takes the pending row `flow`: deleted and returned, with its principal, in one
    /// atomic step, so of two callbacks (on this instance or another sharing the store)
    /// one gets it and the other `None`. A row expired at `now` is not returned; every
    /// expired row is deleted.
    fn take_pending(&self, flow: &str, now: u64) -> Result<Option<(String, Sealed)>, LedgerError>;

    /// Every key id this connector's sealed rows (credentials, pending rows not expired at
    /// `now`) or check values name: how many rows each seals, and its check value.
    fn key_uses(&self, now: u64) -> Result<Vec<KeyUse>, LedgerError>;

    /// Records `check` as the check value of its key id unless one is recorded already,
    /// and returns the one kept (another instance's, when it was first).
    fn keep_key_check(&self, check: &Sealed) -> Result<Sealed, LedgerError>;
}

/// Why the credential keys were refused at start-up.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CredentialKeysError {
    #[error(transparent)]
    Store(#[from] LedgerError),
    #[error(transparent)]
    Keys(#[from] KeyCheckError),
}

/// The start-up check of `keys` against what `store` holds of `connector` (the one the
/// store was opened for; `vault::check_keys`): an error when a row is sealed with a key the
/// ring lacks or a key of the ring does not open its check value, so a wrong key stops
/// the server before any credential fails to open. The current key's check value is
/// recorded on its first use. Once, at start-up: a few statements, on the caller's thread.
pub(crate) fn check_credential_keys(
    store: &dyn Ledger,
    keys: &Keys,
    connector: &str,
    now: u64,
) -> Result<(), CredentialKeysError> {
    let uses = store.key_uses(now)?;
    for check in vault::check_keys(keys, connector, &uses)? {
        let kept = store.keep_key_check(&check)?;
        vault::confirm_check(keys, connector, &kept)?;
    }
    Ok(())
}

/// The decision `claim` applies. `Send`: a store may run it on a thread of its own, and
/// again when its transaction has to be retried (it must depend only on what it is given).
pub(crate) type Decide<'a> = dyn FnMut(&Found) -> Decision + Send + 'a;
