//! The ledger in PostgreSQL, shared by several instances of `serve` (`--ledger
//! postgres://…`): the same trait, rules and bounds as SQLite, with what one process
//! kept to itself made a property of the row.
//!
//! Takes: a connection URL, the connector's name, the retention and the lease (how long a
//! send may take). Returns: a `Ledger`, and the token secret every instance shares.
//! Must never: let two instances both win one claim, or let a row that another instance
//! is sending look free.
//!
//! Claims take turns per logical request, not per database (issue 44: one lock on the
//! connector made two instances slower than one):
//! - A claim is one `READ COMMITTED` transaction that first takes
//!   `pg_advisory_xact_lock` on the logical request — connector, principal, tool and
//!   argument hash, hashed to 64 bits by the server (`request`), so every instance makes
//!   the same key. Under `READ COMMITTED` each statement reads a fresh snapshot, and a
//!   transaction is visible before its locks are let go, so the look-up made once the
//!   lock is granted sees every earlier claim of that request, and none can write it
//!   until this one commits: look-up, decision and write are one step for that request,
//!   as the connector-wide lock under `SERIALIZABLE` made them, without serialization
//!   failures to run again. Claims of different requests never wait on each other (a
//!   hash collision only makes two requests take turns).
//! - A claim of a paid call (`Claim::tallies` not empty) then takes its principal's
//!   budget lock (`pg_advisory_xact_lock` on connector and principal, seed 1, apart from
//!   the requests' keys) before it counts what they spent: their paid claims take turns
//!   from the count to the commit, so two instances never both take a budget's last room
//!   (issue 47). No one holding it waits on a request's lock, so the two never deadlock.
//! - The nonce is unique within a connector and principal by the table's `UNIQUE`
//!   constraint, whatever the isolation: a second insert under a nonce waits for the
//!   first and fails. (A nonce names one logical request, `seal::Sealer::nonce_for`
//!   derives it from the tool, the arguments and the row before, so its claims share
//!   the lock anyway.)
//! - The bound (`LedgerError::Full`) is checked against the shared counters
//!   (`connectorgen_usage`, kept by migration 4's triggers) in the statement that
//!   inserts: it reads the counters' row `FOR UPDATE`, which under `READ COMMITTED` waits
//!   for its other writers and reads its newest version, so two claims of different
//!   requests never both take the last room. That row lock lasts from the insert to the
//!   commit, which is sent with it.
//! - `finish` and `keep_task` take their row's request lock too: they change what a
//!   claim decides on and what the bound counts. `release` and `renew` write only the
//!   lease, under the row's own lock, as before.
//! - Pruning is a transaction of its own, sent just before the claim's, and deletes a
//!   row only when it gets that row's request lock at once (`pg_try_advisory_xact_lock`),
//!   its age and lease checked again on its newest version: a row a claim, an outcome or
//!   a task is being written for stays, and pruning never waits on a request. The same
//!   holds for dropping the stored answer of a receipt past its keeping (`strip`).
//!
//! Round trips: every statement is prepared once per connection (`Statements`), and the
//! statements of a step are all sent before any answer is read (the driver's pipelining,
//! `Session::pipeline`, the only way statements reach the database once a connection is
//! made). A claim is two round trips (the prune, `BEGIN`, the lock and the look-up; then
//! the write and `COMMIT`, or `COMMIT` alone); `room`, `finish`, `keep_task`, `entry`,
//! `renew` and `release` one each, and `release` none after this process's own `finish`
//! let the lease go. A paid call that asks first (claim, room, claim, finish, release)
//! makes 6 (`postgres_a_paid_call_makes_at_most_six_round_trips`; about 68 before).
//!
//! - "Being sent right now" is the row's lease: a send sets `sending_until` (the
//!   database's clock, so the instances' clocks need not agree) to now + the longest a
//!   send may take, and clears it when the outcome is recorded or the call goes away. A
//!   killed instance's lease runs out by itself; until then its call counts as out at the
//!   provider, which it may still be.
//! - Migrations are versioned (`connectorgen_migrations`) and run at start-up, one
//!   instance at a time (an advisory lock); a database migrated by a newer connectorgen is
//!   refused rather than written in a shape this one does not know.
//!
//! The driver is tokio-postgres on a current-thread runtime of this ledger's own, which
//! panics when started inside serve's; every call therefore runs on a scoped thread
//! outside it, and holds serve's thread for its round trips, as SQLite's `fsync` does.
//! TLS (`tls`): rustls, with libpq's `sslmode` and `sslrootcert`; see `config`.
//!
//! People's sealed credentials (migration 5) are in `pg/credentials.rs`: one round trip
//! per call, statements prepared with the calls'.

mod tls;

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio_postgres::error::SqlState;
use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, Row, Statement};

use super::{
    Claim, Decide, Decision, Entry, Found, Ledger, LedgerError, Outcome, ROW_BYTES, Refund,
    Retention, Status,
};
use crate::vault::{KeyUse, Sealed};
use connectorgen_core::budget::{Amount, Unit};

mod credentials;

/// The migrations' advisory lock: "CGEN" and 0, in the two-key space, which the one-key
/// space of the requests' locks (`request`) never meets.
const LOCKS: i32 = 0x4347_454e;

/// Times a claim that met a deadlock (none is known to happen: pruning never waits on a
/// request) is run again before giving up.
const TRIES: u32 = 20;

/// Each migration, in order: its version is its place in the list, from 1.
const MIGRATIONS: &[&str] = &[
    "
CREATE TABLE connectorgen_calls (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    connector TEXT NOT NULL,
    principal TEXT NOT NULL,
    tool TEXT NOT NULL,
    args_hash TEXT NOT NULL,
    key TEXT NOT NULL,
    nonce TEXT,
    status TEXT NOT NULL CHECK (status IN ('pending', 'job', 'done', 'rejected')),
    http_status INTEGER,
    job_id TEXT,
    result TEXT,
    media_type TEXT,
    created BIGINT NOT NULL,
    updated BIGINT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 1,
    bytes BIGINT NOT NULL DEFAULT 0,
    sending_until BIGINT,
    sender TEXT,
    UNIQUE (connector, principal, nonce)
);
CREATE INDEX connectorgen_calls_by_call
    ON connectorgen_calls (connector, principal, tool, args_hash, created);
CREATE INDEX connectorgen_calls_by_age ON connectorgen_calls (connector, updated);
CREATE TABLE connectorgen_secret (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    secret BYTEA NOT NULL CHECK (length(secret) >= 32)
);
",
    "
ALTER TABLE connectorgen_calls DROP CONSTRAINT connectorgen_calls_status_check;
ALTER TABLE connectorgen_calls ADD CONSTRAINT connectorgen_calls_status_check
    CHECK (status IN ('pending', 'job', 'done', 'rejected', 'unknown'));
",
    "
ALTER TABLE connectorgen_calls ADD COLUMN task TEXT;
",
    "
CREATE TABLE connectorgen_usage (
    connector TEXT PRIMARY KEY,
    rows BIGINT NOT NULL,
    bytes BIGINT NOT NULL
);
INSERT INTO connectorgen_usage (connector, rows, bytes)
    SELECT connector, COUNT(*), COALESCE(SUM(bytes), 0) FROM connectorgen_calls
    GROUP BY connector;
CREATE FUNCTION connectorgen_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        INSERT INTO connectorgen_usage (connector, rows, bytes)
            VALUES (NEW.connector, CASE WHEN TG_OP = 'INSERT' THEN 1 ELSE 0 END, NEW.bytes)
            ON CONFLICT (connector) DO UPDATE
            SET rows = connectorgen_usage.rows + EXCLUDED.rows,
                bytes = connectorgen_usage.bytes + EXCLUDED.bytes;
    END IF;
    IF TG_OP IN ('DELETE', 'UPDATE') THEN
        UPDATE connectorgen_usage
            SET rows = rows - CASE WHEN TG_OP = 'DELETE' THEN 1 ELSE 0 END,
                bytes = bytes - OLD.bytes
            WHERE connector = OLD.connector;
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER connectorgen_counted AFTER INSERT OR DELETE OR UPDATE OF bytes
    ON connectorgen_calls FOR EACH ROW EXECUTE FUNCTION connectorgen_count();
",
    credentials::MIGRATION,
    "
ALTER TABLE connectorgen_calls
    ADD COLUMN receipt BOOLEAN NOT NULL DEFAULT FALSE,
    ADD COLUMN args TEXT,
    ADD COLUMN unit TEXT CHECK (unit IN ('credits', 'money')),
    ADD COLUMN currency TEXT,
    ADD COLUMN amount BIGINT,
    ADD COLUMN refunded BIGINT;
CREATE INDEX connectorgen_calls_by_receipt_age
    ON connectorgen_calls (connector, receipt, updated);
CREATE INDEX connectorgen_calls_to_strip ON connectorgen_calls (connector, updated)
    WHERE receipt AND (result IS NOT NULL OR task IS NOT NULL);
CREATE INDEX connectorgen_calls_spent ON connectorgen_calls (connector, principal, created)
    WHERE unit IS NOT NULL;
",
];

/// An `Entry`'s columns, as SQLite's (`sqlite.rs`) without `task`, which only
/// `Ledger::entry` reads; `sending` is the lease read against the database's clock.
const COLUMNS: &str = "id, tool, args_hash, key, nonce, status, http_status, job_id, result, \
                       created, updated, attempts, media_type, \
                       COALESCE(sending_until > EXTRACT(EPOCH FROM clock_timestamp())::BIGINT, \
                       FALSE) AS sending";

/// How many columns `COLUMNS` is.
const WIDTH: usize = 14;

/// The database's clock, in seconds.
const NOW: &str = "EXTRACT(EPOCH FROM clock_timestamp())::BIGINT";

/// The longest a ledger operation waits for a lock (another instance's claim): a send's
/// lease covers it, as recording an outcome may wait that long.
pub(crate) const LOCK_WAIT_SECONDS: u64 = 10;

/// The advisory-lock key of the logical request of these four SQL values (connector,
/// principal, tool, argument hash): one expression for a claim's parameters and for a
/// row's columns, so both make the same key.
fn request(parts: [&str; 4]) -> String {
    format!(
        "hashtextextended(concat_ws(chr(31), {}), 0)",
        parts.join(", ")
    )
}

/// A claim's request key, from its parameters $1–$4.
fn claimed_request() -> String {
    request(["$1::TEXT", "$2::TEXT", "$3::TEXT", "$4::TEXT"])
}

/// A row's request key, from its columns.
fn row_request(row: &str) -> String {
    let [connector, principal, tool, args_hash] =
        ["connector", "principal", "tool", "args_hash"].map(|column| format!("{row}.{column}"));
    request([&connector, &principal, &tool, &args_hash])
}

/// Every statement a ledger call runs, prepared once per connection.
struct Statements {
    begin: Statement,
    commit: Statement,
    rollback: Statement,
    /// A claim's lock: connector, principal, tool, argument hash.
    lock: Statement,
    /// The lock of row $1's request (connector $2).
    lock_row: Statement,
    /// A paid call's claim: the lock on its principal's ($2) budgets on connector $1.
    budget_lock: Statement,
    prune: Statement,
    /// The stored answers of receipts past their keeping dropped (the receipts kept).
    strip: Statement,
    /// Each tally counted: units $3 and starts $4, for principal $2.
    spent: Statement,
    refund: Statement,
    look: Statement,
    insert: Statement,
    retry: Statement,
    room: Statement,
    finish: Statement,
    keep_task: Statement,
    release: Statement,
    renew: Statement,
    entry: Statement,
}

impl Statements {
    async fn prepare(client: &Client) -> Result<Statements, tokio_postgres::Error> {
        // Rows past their keeping ($2 without a nonce, $3 with one, $5 a receipt), none in
        // this process's sends ($4) or leased by anyone; checked again on the row deleted,
        // which is its newest version.
        let aged = |t: &str| {
            format!(
                "{t}.connector = $1 AND ((NOT {t}.receipt AND (({t}.nonce IS NULL \
                 AND {t}.updated < $2::BIGINT) OR ({t}.nonce IS NOT NULL \
                 AND {t}.updated < $3::BIGINT))) OR ({t}.receipt AND {t}.updated < $5::BIGINT)) \
                 AND NOT ({t}.id = ANY($4::BIGINT[])) \
                 AND ({t}.sending_until IS NULL OR {t}.sending_until <= {NOW})"
            )
        };
        // Receipts past a row's keeping ($2, $3) whose answer or task state is still kept.
        let stale = |t: &str| {
            format!(
                "{t}.connector = $1 AND {t}.receipt \
                 AND ({t}.result IS NOT NULL OR {t}.task IS NOT NULL) \
                 AND (({t}.nonce IS NULL AND {t}.updated < $2::BIGINT) \
                 OR ({t}.nonce IS NOT NULL AND {t}.updated < $3::BIGINT)) \
                 AND NOT ({t}.id = ANY($4::BIGINT[])) \
                 AND ({t}.sending_until IS NULL OR {t}.sending_until <= {NOW})"
            )
        };
        let used = "SELECT rows * $ROW + bytes AS bytes FROM connectorgen_usage \
                    WHERE connector = $CONNECTOR FOR UPDATE";
        let texts = [
            "BEGIN".to_string(),
            "COMMIT".to_string(),
            "ROLLBACK".to_string(),
            format!("SELECT pg_advisory_xact_lock({})", claimed_request()),
            format!(
                "SELECT pg_advisory_xact_lock({}) FROM connectorgen_calls AS c \
                 WHERE c.id = $1 AND c.connector = $2",
                row_request("c")
            ),
            // Seed 1: a key of its own, apart from the requests' (seed 0).
            "SELECT pg_advisory_xact_lock(hashtextextended(concat_ws(chr(31), $1::TEXT, \
             $2::TEXT), 1))"
                .to_string(),
            // `OFFSET 0` keeps the candidates a subquery of their own, so only they are
            // tried for their request's lock. Receipts and other rows are found through
            // the index on (connector, receipt, updated), each by its own age.
            format!(
                "DELETE FROM connectorgen_calls AS c USING (SELECT o.id, {} AS request \
                 FROM connectorgen_calls AS o WHERE {} \
                 AND ((NOT o.receipt AND o.updated < GREATEST($2::BIGINT, $3::BIGINT)) \
                 OR (o.receipt AND o.updated < $5::BIGINT)) OFFSET 0) AS old \
                 WHERE c.id = old.id AND {} AND pg_try_advisory_xact_lock(old.request)",
                row_request("o"),
                aged("o"),
                aged("c")
            ),
            format!(
                "UPDATE connectorgen_calls AS c SET result = NULL, task = NULL, \
                 bytes = COALESCE(octet_length(c.args), 0) \
                 FROM (SELECT o.id, {} AS request FROM connectorgen_calls AS o \
                 WHERE {} OFFSET 0) AS old \
                 WHERE c.id = old.id AND {} AND pg_try_advisory_xact_lock(old.request)",
                row_request("o"),
                stale("o"),
                stale("c")
            ),
            "SELECT (SELECT CASE WHEN t.unit = 'calls' THEN COUNT(*) * 1000000 \
             ELSE COALESCE(SUM(c.amount), 0) END FROM connectorgen_calls AS c \
             WHERE c.connector = $1 AND c.principal = $2 AND c.unit IS NOT NULL \
             AND c.created >= t.since AND c.status <> 'rejected' \
             AND (t.unit = 'calls' OR (c.unit = t.unit AND c.amount IS NOT NULL \
             AND c.refunded IS NULL)))::BIGINT \
             FROM unnest($3::TEXT[], $4::BIGINT[]) WITH ORDINALITY AS t(unit, since, i) \
             ORDER BY t.i"
                .to_string(),
            "UPDATE connectorgen_calls SET refunded = $5 WHERE id = (SELECT id \
             FROM connectorgen_calls WHERE connector = $1 AND principal = $2 AND tool = $3 \
             AND job_id = $4 AND unit IS NOT NULL AND refunded IS NULL \
             ORDER BY id DESC LIMIT 1) RETURNING id"
                .to_string(),
            format!(
                "SELECT n.*, l.*, (SELECT MAX(id) FROM connectorgen_calls WHERE connector = $1 \
                 AND principal = $2 AND tool = $3 AND args_hash = $4) \
                 FROM (SELECT 1) AS one \
                 LEFT JOIN (SELECT {COLUMNS} FROM connectorgen_calls WHERE connector = $1 \
                 AND principal = $2 AND nonce = $5) AS n ON TRUE \
                 LEFT JOIN (SELECT {COLUMNS} FROM connectorgen_calls WHERE connector = $1 \
                 AND principal = $2 AND tool = $3 AND args_hash = $4 AND created >= $6 \
                 AND status <> 'rejected' ORDER BY created DESC, id DESC LIMIT 1) AS l ON TRUE"
            ),
            format!(
                "WITH used AS ({}) \
                 INSERT INTO connectorgen_calls (connector, principal, tool, args_hash, key, \
                 nonce, status, created, updated, sending_until, sender, receipt, args, unit, \
                 currency, amount, bytes) \
                 SELECT $1, $2, $3, $4, $5, $6, 'pending', $7, $7, {NOW} + $8, $9, $12, $13, \
                 $14, $15, $16, COALESCE(octet_length($13::TEXT), 0) \
                 FROM (SELECT 1) AS one LEFT JOIN used ON TRUE \
                 WHERE COALESCE(used.bytes, 0) + $10 + COALESCE(octet_length($13::TEXT), 0) \
                 <= $11 RETURNING {COLUMNS}",
                used.replace("$ROW", "$10").replace("$CONNECTOR", "$1")
            ),
            format!(
                "UPDATE connectorgen_calls SET attempts = attempts + 1, updated = $2, \
                 sending_until = {NOW} + $3, sender = $4 \
                 WHERE id = $1 AND connector = $5 RETURNING {COLUMNS}"
            ),
            // The oldest rows' ages only when full (they are what `Full` says), so a
            // ledger with room never looks past its counters.
            "SELECT COALESCE(u.rows, 0), COALESCE(u.bytes, 0), bound.refused, \
             CASE WHEN bound.refused THEN (SELECT MIN(updated) FROM connectorgen_calls \
             WHERE connector = $1 AND NOT receipt AND nonce IS NULL) END, \
             CASE WHEN bound.refused THEN (SELECT MIN(updated) FROM connectorgen_calls \
             WHERE connector = $1 AND NOT receipt AND nonce IS NOT NULL) END, \
             CASE WHEN bound.refused THEN (SELECT MIN(updated) FROM connectorgen_calls \
             WHERE connector = $1 AND receipt) END \
             FROM (SELECT 1) AS one \
             LEFT JOIN connectorgen_usage AS u ON u.connector = $1 \
             CROSS JOIN LATERAL (SELECT COALESCE(u.rows, 0) * $2 + COALESCE(u.bytes, 0) + $2 \
             > $3 AS refused) AS bound"
                .to_string(),
            // As SQLite's: the status always, the body only when it fits.
            format!(
                "WITH used AS ({}), fit AS (SELECT c.id, $5::TEXT IS NOT NULL \
                 AND COALESCE((SELECT bytes FROM used), 0) - c.bytes + octet_length($5::TEXT) \
                 + COALESCE(octet_length(c.task), 0) + COALESCE(octet_length(c.args), 0) \
                 <= $11 AS fits \
                 FROM connectorgen_calls AS c WHERE c.id = $1 AND c.connector = $2) \
                 UPDATE connectorgen_calls AS c SET status = $3, http_status = $4, \
                 job_id = COALESCE($6, c.job_id), \
                 result = CASE WHEN fit.fits THEN $5 ELSE c.result END, updated = $7, \
                 media_type = COALESCE($8, c.media_type), \
                 bytes = CASE WHEN fit.fits \
                 THEN octet_length($5::TEXT) + COALESCE(octet_length(c.task), 0) \
                 + COALESCE(octet_length(c.args), 0) ELSE c.bytes END, \
                 sending_until = CASE WHEN c.sender = $9 THEN NULL ELSE c.sending_until END \
                 FROM fit WHERE c.id = fit.id RETURNING c.id",
                used.replace("$ROW", "$10").replace("$CONNECTOR", "$2")
            ),
            format!(
                "WITH used AS ({}) \
                 UPDATE connectorgen_calls AS c SET task = $3, \
                 bytes = c.bytes - COALESCE(octet_length(c.task), 0) + octet_length($3::TEXT) \
                 WHERE c.id = $1 AND c.connector = $2 \
                 AND COALESCE((SELECT bytes FROM used), 0) - COALESCE(octet_length(c.task), 0) \
                 + octet_length($3::TEXT) <= $5 RETURNING c.id",
                used.replace("$ROW", "$4").replace("$CONNECTOR", "$2")
            ),
            "UPDATE connectorgen_calls SET sending_until = NULL \
             WHERE id = $1 AND connector = $2 AND sender = $3"
                .to_string(),
            // Only a lease this process still has: one that ran out and was taken by
            // another instance is that instance's now.
            format!(
                "UPDATE connectorgen_calls SET sending_until = {NOW} + $4 \
                 WHERE id = $1 AND connector = $2 AND sender = $3 AND status = 'pending'"
            ),
            format!(
                "SELECT {COLUMNS}, task FROM connectorgen_calls WHERE id = $1 \
                 AND connector = $2 AND principal = $3"
            ),
        ];
        // Prepared together: one round trip.
        let prepared = futures_util::future::join_all(texts.iter().map(|t| client.prepare(t)))
            .await
            .into_iter()
            .collect::<Result<Vec<_>, _>>()?;
        let Ok(
            [
                begin,
                commit,
                rollback,
                lock,
                lock_row,
                budget_lock,
                prune,
                strip,
                spent,
                refund,
                look,
                insert,
                retry,
                room,
                finish,
                keep_task,
                release,
                renew,
                entry,
            ],
        ) = <[Statement; 19]>::try_from(prepared)
        else {
            unreachable!("one statement prepared for each text");
        };
        Ok(Statements {
            begin,
            commit,
            rollback,
            lock,
            lock_row,
            budget_lock,
            prune,
            strip,
            spent,
            refund,
            look,
            insert,
            retry,
            room,
            finish,
            keep_task,
            release,
            renew,
            entry,
        })
    }
}

/// One statement to run and its parameters.
type Step<'a> = (&'a Statement, &'a [&'a (dyn ToSql + Sync)]);

/// One connection: the client, the runtime that drives it, its prepared statements.
/// (Fields drop in order: the client before the runtime its connection runs on.)
struct Session {
    client: Client,
    statements: Statements,
    /// The credential methods' (`pg/credentials.rs`).
    credentials: credentials::Statements,
    runtime: tokio::runtime::Runtime,
    /// The ledger's count of round trips, kept across connections.
    round_trips: Arc<AtomicU64>,
}

impl Session {
    /// Sends every step before reading any answer, then reads them all: one round trip,
    /// however many steps. Each step's answer, in order; a failed step fails the ones
    /// after it only where a transaction it was in is aborted.
    fn pipeline(&self, steps: &[Step<'_>]) -> Vec<Result<Vec<Row>, tokio_postgres::Error>> {
        self.round_trips.fetch_add(1, Ordering::Relaxed);
        let client = &self.client;
        // `join_all` polls the queries in order, and a query is queued on the connection
        // at its first poll: all are on their way, in this order, before any answer is
        // awaited.
        self.runtime.block_on(futures_util::future::join_all(
            steps
                .iter()
                .map(|&(statement, params)| client.query(statement, params)),
        ))
    }

    /// One statement, one round trip.
    fn one(
        &self,
        statement: &Statement,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Row>, tokio_postgres::Error> {
        self.pipeline(&[(statement, params)])
            .pop()
            .unwrap_or_else(|| Ok(Vec::new()))
    }

    /// `steps` as one transaction, begun and committed in the same round trip: the rows
    /// of each, or the first error (the transaction then rolled back by its `COMMIT`).
    fn transaction(&self, steps: &[Step<'_>]) -> Result<Vec<Vec<Row>>, Retry> {
        let mut all: Vec<Step<'_>> = Vec::with_capacity(steps.len() + 2);
        all.push((&self.statements.begin, &[]));
        all.extend_from_slice(steps);
        all.push((&self.statements.commit, &[]));
        let mut answers = self
            .pipeline(&all)
            .into_iter()
            .collect::<Result<Vec<_>, _>>()?;
        answers.pop();
        answers.remove(0);
        Ok(answers)
    }
}

/// The ledger in a PostgreSQL database.
pub(crate) struct PgLedger {
    /// `None` only while being dropped (see `Drop`).
    session: Mutex<Option<Session>>,
    /// How to connect again when the connection is lost (a restart of the database).
    target: Target,
    connector: String,
    retention: Retention,
    /// Seconds a send may take, the lease a send holds its row for.
    lease: i64,
    /// This process among the instances: a send's lease is cleared only by its sender.
    sender: String,
    /// Rows whose lease this process's `finish` cleared and has not taken again: their
    /// `release` has nothing left to do, and makes no round trip.
    cleared: Mutex<HashSet<i64>>,
    round_trips: Arc<AtomicU64>,
}

/// The most rows `PgLedger::cleared` holds: a `release` that never comes (none is known)
/// only costs its round trip back once the set is emptied.
const CLEARED: usize = 4_096;

impl PgLedger {
    /// Connects to `url` and brings the schema up to date.
    pub(crate) fn open(
        url: &str,
        connector: &str,
        retention: Retention,
        lease: u64,
    ) -> Result<PgLedger, LedgerError> {
        let target = config(url)?;
        let round_trips = Arc::new(AtomicU64::new(0));
        let session = outside_tokio(|| {
            let (runtime, mut client) = dial(&target)?;
            runtime.block_on(migrate(&mut client))?;
            // The counters' row exists before the first claim reads it `FOR UPDATE`
            // (the bound's check locks it; a missing row would lock nothing).
            runtime.block_on(client.execute(
                "INSERT INTO connectorgen_usage (connector, rows, bytes) VALUES ($1, 0, 0) \
                 ON CONFLICT (connector) DO NOTHING",
                &[&connector],
            ))?;
            Session::new(runtime, client, &round_trips)
        })??;
        Ok(PgLedger {
            session: Mutex::new(Some(session)),
            target,
            connector: connector.to_string(),
            retention,
            lease: i64::try_from(lease).unwrap_or(i64::MAX),
            sender: uuid::Uuid::new_v4().to_string(),
            cleared: Mutex::new(HashSet::new()),
            round_trips,
        })
    }

    /// The secret that signs confirmation values, the same for every instance: made by the
    /// first one to ask, kept in the database. (At start-up: not prepared, not counted.)
    pub(crate) fn secret(&self) -> Result<Vec<u8>, LedgerError> {
        let mut fresh = Vec::with_capacity(64);
        for _ in 0..4 {
            fresh.extend_from_slice(uuid::Uuid::new_v4().as_bytes());
        }
        self.with(move |session| {
            let client = &session.client;
            session.runtime.block_on(async {
                client
                    .execute(
                        "INSERT INTO connectorgen_secret (id, secret) VALUES (1, $1) \
                         ON CONFLICT (id) DO NOTHING",
                        &[&fresh],
                    )
                    .await?;
                Ok(client
                    .query_one("SELECT secret FROM connectorgen_secret WHERE id = 1", &[])
                    .await?
                    .get(0))
            })
        })
    }

    /// The round trips this ledger made to the database for its calls (not counting
    /// connecting, migrating and the secret).
    #[cfg(any(test, feature = "testing"))]
    pub(crate) fn round_trips(&self) -> u64 {
        self.round_trips.load(Ordering::Relaxed)
    }

    /// Runs `f` on the connection, on a thread outside tokio.
    fn with<T: Send>(
        &self,
        f: impl FnOnce(&mut Session) -> Result<T, LedgerError> + Send,
    ) -> Result<T, LedgerError> {
        let mut guard = self
            .session
            .lock()
            .map_err(|_| LedgerError::Store("a previous ledger operation panicked".into()))?;
        let session = guard
            .as_mut()
            .ok_or_else(|| LedgerError::Store("the ledger is closed".into()))?;
        let (target, counter) = (&self.target, &self.round_trips);
        let ran = outside_tokio(move || {
            // A connection the database closed (a restart, an idle-transaction timeout)
            // is made again; what it held (a claim's lock) went with it.
            if session.client.is_closed() {
                *session = connect(target, counter)?;
            }
            f(session)
        });
        if ran.is_err() {
            // It panicked, maybe inside a claim's transaction, holding its request's
            // lock (every other instance's claims of that request would wait on it). The
            // session goes, and its locks with it; the next operation connects again (or
            // finds the ledger closed, and refuses). (The session owns a runtime, dropped
            // outside serve's, as in `Drop`.)
            let old = guard.take();
            *guard = outside_tokio(move || {
                drop(old);
                connect(target, counter).ok()
            })
            .ok()
            .flatten();
        }
        ran?
    }

    /// A setting as this ledger's session has it (tests).
    #[cfg(test)]
    pub(super) fn setting(&self, name: &str) -> Result<String, LedgerError> {
        let name = name.to_string();
        self.with(move |session| {
            let client = &session.client;
            Ok(session
                .runtime
                .block_on(client.query_one("SELECT current_setting($1)", &[&name]))?
                .get(0))
        })
    }

    fn cleared(&self) -> std::sync::MutexGuard<'_, HashSet<i64>> {
        self.cleared
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The `Full` error for a new row at `now`, or `None` when one fits.
    fn full(&self, session: &Session, now: u64) -> Result<Option<LedgerError>, Retry> {
        let row_bytes = seconds(ROW_BYTES);
        let max = seconds(self.retention.max_bytes);
        let answer = session.one(
            &session.statements.room,
            &[&self.connector, &row_bytes, &max],
        )?;
        let Some(row) = answer.first() else {
            return Ok(None);
        };
        let rows = u64::try_from(row.get::<_, i64>(0)).unwrap_or(0);
        let answers = u64::try_from(row.get::<_, i64>(1)).unwrap_or(0);
        let used = rows.saturating_mul(ROW_BYTES).saturating_add(answers);
        if !row.get::<_, bool>(2) {
            return Ok(None);
        }
        let mut soonest = u64::MAX;
        let keeps = [
            self.retention.keep(false),
            self.retention.keep(true),
            self.retention.kept_receipts(),
        ];
        for (keep, column) in keeps.into_iter().zip(3..) {
            if let Some(updated) = row.get::<_, Option<i64>>(column) {
                let at = u64::try_from(updated).unwrap_or(0).saturating_add(keep);
                soonest = soonest.min(at.saturating_sub(now));
            }
        }
        Ok(Some(LedgerError::Full {
            rows,
            used,
            max: self.retention.max_bytes,
            wait: soonest,
        }))
    }

    /// One try of a claim (see the module's doc): two round trips.
    fn try_claim(
        &self,
        session: &Session,
        claim: &Claim<'_>,
        decide: &mut Decide<'_>,
    ) -> Result<(Found, Option<Entry>), Retry> {
        let s = &session.statements;
        let connector = self.connector.as_str();
        let before = |nonce: bool| {
            claim
                .now
                .checked_sub(self.retention.keep(nonce))
                .map(seconds)
        };
        let (plain, nonced) = (before(false), before(true));
        let receipts = claim
            .now
            .checked_sub(self.retention.kept_receipts())
            .map(seconds);
        let busy: Vec<i64> = claim.busy.to_vec();
        let since = seconds(claim.since);
        let request: [&(dyn ToSql + Sync); 4] =
            [&connector, &claim.principal, &claim.tool, &claim.args_hash];
        let units: Vec<&str> = claim.tallies.iter().map(|t| t.unit.as_str()).collect();
        let starts: Vec<i64> = claim.tallies.iter().map(|t| seconds(t.since)).collect();
        let budgets: [&(dyn ToSql + Sync); 2] = [&connector, &claim.principal];
        let counted: [&(dyn ToSql + Sync); 4] = [&connector, &claim.principal, &units, &starts];
        let look: [&(dyn ToSql + Sync); 6] = [
            &connector,
            &claim.principal,
            &claim.tool,
            &claim.args_hash,
            &claim.nonce,
            &since,
        ];
        let pruned: [&(dyn ToSql + Sync); 5] = [&connector, &plain, &nonced, &busy, &receipts];
        let stripped: [&(dyn ToSql + Sync); 4] = [&connector, &plain, &nonced, &busy];
        let mut steps: Vec<Step<'_>> = vec![
            (&s.prune, &pruned),
            (&s.strip, &stripped),
            (&s.begin, &[]),
            (&s.lock, &request),
        ];
        // A paid call: its principal's claims of paid calls take turns from here to the
        // commit, so a count and the write it allows are one step (issue 47: N calls raced
        // over several instances against a budget of K send exactly what fits).
        let paid = !claim.tallies.is_empty();
        if paid {
            steps.push((&s.budget_lock, &budgets));
        }
        steps.push((&s.look, &look));
        if paid {
            steps.push((&s.spent, &counted));
        }
        let answers = session.pipeline(&steps);
        let opened = answers.get(2).is_some_and(Result::is_ok);
        let (looked, counts) = match answers.into_iter().collect::<Result<Vec<_>, _>>() {
            Ok(mut answers) => {
                let counts = if paid {
                    answers.pop().unwrap_or_default()
                } else {
                    Vec::new()
                };
                (answers.pop().unwrap_or_default(), counts)
            }
            Err(e) => {
                if opened {
                    // The lock or the look-up failed inside the transaction: end it.
                    let _ = session.one(&s.rollback, &[]);
                }
                return Err(e.into());
            }
        };
        let row = looked
            .first()
            .ok_or_else(|| Retry::Failed(LedgerError::Store("the look-up had no row".into())))?;
        let found = Found {
            by_nonce: entry(row, 0),
            latest: entry(row, WIDTH),
            last_id: row.get(2 * WIDTH),
            spent: counts
                .iter()
                .map(|row| Amount::from_micros(row.get(0)))
                .collect(),
        };
        let now = seconds(claim.now);
        let (lease, sender) = (self.lease, self.sender.as_str());
        let written = match decide(&found) {
            Decision::Insert { key, nonce } => {
                let row_bytes = seconds(ROW_BYTES);
                let max = seconds(self.retention.max_bytes);
                let r = claim.receipt;
                let (receipt, args) = (r.is_some(), r.map(|r| r.args));
                let unit = r.and_then(|r| r.unit).map(Unit::as_str);
                let currency = r.and_then(|r| r.currency);
                let amount = r.and_then(|r| r.amount).map(Amount::micros);
                let rows = session.transaction_end(&[(
                    &s.insert,
                    &[
                        &connector,
                        &claim.principal,
                        &claim.tool,
                        &claim.args_hash,
                        &key,
                        &nonce,
                        &now,
                        &lease,
                        &sender,
                        &row_bytes,
                        &max,
                        &receipt,
                        &args,
                        &unit,
                        &currency,
                        &amount,
                    ],
                )])?;
                match rows.first() {
                    Some(row) => entry(row, 0),
                    // No room: nothing was written. Room found again since (another claim
                    // pruned) is another try.
                    None => {
                        return Err(self
                            .full(session, claim.now)?
                            .map_or(Retry::Again, Retry::Failed));
                    }
                }
            }
            Decision::Retry(id) => {
                self.cleared().remove(&id);
                let rows = session
                    .transaction_end(&[(&s.retry, &[&id, &now, &lease, &sender, &connector])])?;
                rows.first().and_then(|row| entry(row, 0))
            }
            Decision::Nothing => {
                session.transaction_end(&[])?;
                None
            }
        };
        Ok((found, written))
    }
}

impl Session {
    /// Makes the session of a new connection: its statements prepared.
    fn new(
        runtime: tokio::runtime::Runtime,
        client: Client,
        round_trips: &Arc<AtomicU64>,
    ) -> Result<Session, LedgerError> {
        // Both sets prepared together: one round trip.
        let (statements, credentials) = runtime.block_on(futures_util::future::try_join(
            Statements::prepare(&client),
            credentials::Statements::prepare(&client),
        ))?;
        Ok(Session {
            client,
            statements,
            credentials,
            runtime,
            round_trips: Arc::clone(round_trips),
        })
    }

    /// The end of a transaction `BEGIN` opened: `step` (if any) and `COMMIT`, sent together.
    /// The rows of the step, or its error (the transaction then rolled back by its
    /// `COMMIT`).
    fn transaction_end(&self, step: &[Step<'_>]) -> Result<Vec<Row>, Retry> {
        let mut all: Vec<Step<'_>> = step.to_vec();
        all.push((&self.statements.commit, &[]));
        let mut answers = self
            .pipeline(&all)
            .into_iter()
            .collect::<Result<Vec<_>, _>>()?;
        answers.pop();
        Ok(answers.pop().unwrap_or_default())
    }
}

impl Drop for PgLedger {
    fn drop(&mut self) {
        // The session owns a runtime, which may not be dropped inside serve's.
        let session = self.session.get_mut().ok().and_then(Option::take);
        let _ = outside_tokio(move || drop(session));
    }
}

/// A failed attempt: run again (a deadlock) or give up.
enum Retry {
    Again,
    Failed(LedgerError),
}

impl From<tokio_postgres::Error> for Retry {
    fn from(e: tokio_postgres::Error) -> Self {
        match e.code() {
            Some(&SqlState::T_R_SERIALIZATION_FAILURE | &SqlState::T_R_DEADLOCK_DETECTED) => {
                Retry::Again
            }
            _ => Retry::Failed(e.into()),
        }
    }
}

impl From<LedgerError> for Retry {
    fn from(e: LedgerError) -> Self {
        Retry::Failed(e)
    }
}

impl From<tokio_postgres::Error> for LedgerError {
    fn from(e: tokio_postgres::Error) -> Self {
        LedgerError::Store(text(&e))
    }
}

impl From<Retry> for LedgerError {
    fn from(r: Retry) -> Self {
        match r {
            Retry::Again => LedgerError::Store("the transaction met a deadlock".into()),
            Retry::Failed(e) => e,
        }
    }
}

/// The error with the server's own message (`Display` alone says only "db error"), or
/// with its causes (`Display` alone says only "error performing TLS handshake").
fn text(e: &tokio_postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return format!("{}: {}", db.severity(), db.message());
    }
    let mut text = e.to_string();
    let mut cause = std::error::Error::source(e);
    while let Some(e) = cause {
        text.push_str(&format!(": {e}"));
        cause = e.source();
    }
    text
}

/// Runs `f` on a thread of its own, where no tokio runtime is entered.
fn outside_tokio<T: Send>(f: impl FnOnce() -> T + Send) -> Result<T, LedgerError> {
    std::thread::scope(|scope| {
        scope
            .spawn(f)
            .join()
            .map_err(|_| LedgerError::Store("a ledger operation panicked".into()))
    })
}

/// Where and how a ledger connects: the driver's settings, and the TLS they are kept with.
struct Target {
    config: tokio_postgres::Config,
    tls: tls::Tls,
}

/// The connection settings of `url`. TLS is what its `sslmode` and `sslrootcert` say, as
/// libpq reads them, except that nothing goes to a remote host unencrypted, or encrypted
/// to a certificate nobody checked, unless the URL says `sslmode=disable` (a tunnel):
/// `tls` has the table.
fn config(url: &str) -> Result<Target, LedgerError> {
    use tokio_postgres::config::Host;
    let (text, asked) = tls::read(url)?;
    let mut config: tokio_postgres::Config = text.parse().map_err(|e: tokio_postgres::Error| {
        // Which option, for one the driver does not know (`sslcert`) or a value it refuses:
        // that cause names the option, never its value (which may be the password).
        let cause = std::error::Error::source(&e)
            .map(ToString::to_string)
            .filter(|c| c.starts_with("unknown option") || c.starts_with("invalid value for"));
        LedgerError::Store(format!(
            "not a PostgreSQL URL: {}",
            cause.unwrap_or_else(|| e.to_string())
        ))
    })?;
    let (hosts, addresses) = (config.get_hosts(), config.get_hostaddrs());
    // `hostaddr` is the address actually dialled when given: `host=localhost` with a
    // remote `hostaddr` is remote.
    let remote = hosts.iter().any(|host| match host {
        Host::Tcp(name) => !matches!(name.as_str(), "localhost" | "127.0.0.1" | "::1"),
        #[cfg(unix)]
        Host::Unix(_) => false,
    }) || addresses.iter().any(|a| !a.is_loopback());
    // The driver's attempts: the i-th over TCP when it has a `hostaddr` or a TCP host,
    // checked against that host's name (none from a Unix socket's path).
    let (mut unix, mut tcp, mut unnamed) = (false, false, false);
    for i in 0..hosts.len().max(addresses.len()) {
        let named = matches!(hosts.get(i), Some(Host::Tcp(_)));
        if named || addresses.get(i).is_some() {
            tcp = true;
            unnamed |= !named;
        } else {
            unix = true;
        }
    }
    let reached = match (unix, tcp, unnamed) {
        (_, false, _) => tls::Reached::Unix,
        (true, true, _) => tls::Reached::Both,
        (false, true, true) => tls::Reached::TcpByAddress,
        (false, true, false) => tls::Reached::Tcp,
    };
    let tls = tls::plan(&asked, &tls::Place { remote, reached })?;
    config.ssl_mode(tls.driver_mode());
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(std::time::Duration::from_secs(10));
    }
    config.application_name("connectorgen serve");
    Ok(Target { config, tls })
}

/// `url` without its password, for messages and the start-up line: the password as the
/// driver reads it (from a URL's user part, however many `/` or `?` it holds, or from a
/// `password=` setting in either form) is masked wherever it appears, as written and
/// percent-encoded; a value the driver cannot read is not shown at all.
pub(crate) fn shown(url: &str) -> String {
    let parsed = tls::read(url).and_then(|(text, _)| {
        text.parse::<tokio_postgres::Config>()
            .map_err(|e| LedgerError::Store(e.to_string()))
    });
    let Ok(config) = parsed else {
        return "(the ledger's connection string, not shown: it does not parse, and it may \
                hold a password)"
            .to_string();
    };
    let mut out = masked(url);
    if let Some(password) = config
        .get_password()
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .filter(|p| !p.is_empty())
    {
        let encoded =
            percent_encoding::utf8_percent_encode(&password, percent_encoding::NON_ALPHANUMERIC)
                .to_string();
        for form in [password, encoded] {
            out = out.replace(&form, "***");
        }
    }
    out
}

/// `url` with the password masked where the driver reads it, by the driver's own grammar
/// (tokio-postgres `config.rs`): a URL's user part, which runs to the first `@` wherever
/// a `/` or `?` is, with the password after its first `:`; a URL parameter whose key
/// decodes to `password`; a key-value string's `password` value, quoted or not, backslash
/// escapes included. Only for a string the driver parsed (`shown`).
fn masked(url: &str) -> String {
    for prefix in ["postgres://", "postgresql://"] {
        if let Some(rest) = url.strip_prefix(prefix) {
            return format!("{prefix}{}", masked_url(rest));
        }
    }
    masked_key_values(url)
}

/// The part of a URL after its scheme, masked (see `masked`).
fn masked_url(rest: &str) -> String {
    let (mut out, after) = match rest.split_once('@') {
        Some((credentials, after)) => match credentials.split_once(':') {
            Some((user, _)) => (format!("{user}:***@"), after),
            None => (format!("{credentials}@"), after),
        },
        None => (String::new(), rest),
    };
    let (head, parameters) = match after.split_once('?') {
        Some((head, parameters)) => (head, Some(parameters)),
        None => (after, None),
    };
    out.push_str(head);
    if let Some(parameters) = parameters {
        let parameters: Vec<String> = parameters
            .split('&')
            .map(|part| match part.split_once('=') {
                Some((key, _))
                    if percent_encoding::percent_decode_str(key).decode_utf8_lossy()
                        == "password" =>
                {
                    format!("{key}=***")
                }
                _ => part.to_string(),
            })
            .collect();
        out.push('?');
        out.push_str(&parameters.join("&"));
    }
    out
}

/// A key-value connection string with its `password` value masked (see `masked`): each
/// `keyword = value`, the value `'quoted'` or bare, a backslash taking the next character.
fn masked_key_values(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while chars.peek().is_some() {
        copy_while(&mut chars, &mut out, char::is_whitespace);
        let keyword = copy_while(&mut chars, &mut out, |c| !c.is_whitespace() && c != '=');
        if keyword.is_empty() {
            // Not the driver's grammar (it would have refused the string): nothing more
            // is shown.
            break;
        }
        copy_while(&mut chars, &mut out, char::is_whitespace);
        out.extend(chars.next_if_eq(&'='));
        copy_while(&mut chars, &mut out, char::is_whitespace);
        let secret = keyword == "password";
        let mut value = String::new();
        if chars.peek() == Some(&'\'') {
            value.push('\'');
            chars.next();
            while let Some(c) = chars.next() {
                value.push(c);
                match c {
                    '\\' => value.extend(chars.next()),
                    '\'' => break,
                    _ => {}
                }
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c.is_whitespace() {
                    break;
                }
                chars.next();
                value.push(c);
                if c == '\\' {
                    value.extend(chars.next());
                }
            }
        }
        out.push_str(if secret { "***" } else { &value });
    }
    out
}

/// Copies the characters `keep` takes from `chars` to `out`, and returns them.
fn copy_while(
    chars: &mut std::iter::Peekable<std::str::Chars<'_>>,
    out: &mut String,
    keep: impl Fn(char) -> bool,
) -> String {
    let mut taken = String::new();
    while let Some(c) = chars.next_if(|&c| keep(c)) {
        taken.push(c);
    }
    out.push_str(&taken);
    taken
}

/// A connection and the runtime that drives it, with bounds on waiting: a lock (another
/// instance's claim of the same request) is waited for at most 10 s, and a transaction
/// left open by a stuck instance is ended by the database after 60 s (its locks with it).
fn dial(target: &Target) -> Result<(tokio::runtime::Runtime, Client), LedgerError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
        .map_err(|e| LedgerError::Store(format!("could not start the ledger's runtime: {e}")))?;
    let client = runtime.block_on(async {
        let (client, connection) = target
            .config
            .connect(target.tls.clone())
            .await
            .map_err(|e| LedgerError::Store(format!("could not connect: {}", text(&e))))?;
        // Driven whenever a call waits on the runtime (`Session::pipeline`).
        tokio::spawn(connection);
        client
            .batch_execute(&format!(
                "SET lock_timeout = '{LOCK_WAIT_SECONDS}s'; \
                 SET idle_in_transaction_session_timeout = '60s'"
            ))
            .await?;
        // A claim must be on disk before its request goes out: on a server tuned with
        // `synchronous_commit = off` a commit is acknowledged before it is flushed, and a
        // crash of the database then forgets a request that was sent (the identical call,
        // even under the same consent, would be a new request with a new retry key). Every
        // other value (`local`, `on`, `remote_write`, `remote_apply`) flushes it locally.
        let commits: String = client
            .query_one("SHOW synchronous_commit", &[])
            .await?
            .get(0);
        if commits == "off" {
            client.batch_execute("SET synchronous_commit = on").await?;
        }
        Ok::<_, LedgerError>(client)
    })?;
    Ok((runtime, client))
}

/// A new session on `config` (a connection lost is made again).
fn connect(target: &Target, round_trips: &Arc<AtomicU64>) -> Result<Session, LedgerError> {
    let (runtime, client) = dial(target)?;
    Session::new(runtime, client, round_trips)
}

/// Applies the migrations this database lacks, one instance at a time.
async fn migrate(client: &mut Client) -> Result<(), LedgerError> {
    let tx = client.transaction().await?;
    tx.execute("SELECT pg_advisory_xact_lock($1, 0)", &[&LOCKS])
        .await?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS connectorgen_migrations (
             version INTEGER PRIMARY KEY,
             applied TIMESTAMPTZ NOT NULL DEFAULT now()
         )",
    )
    .await?;
    let done: i32 = tx
        .query_one(
            "SELECT COALESCE(MAX(version), 0) FROM connectorgen_migrations",
            &[],
        )
        .await?
        .get(0);
    let known = i32::try_from(MIGRATIONS.len()).unwrap_or(i32::MAX);
    if done > known {
        return Err(LedgerError::Store(format!(
            "the database's ledger is at version {done}, made by a newer connectorgen; this \
             one knows versions up to {known}: upgrade connectorgen"
        )));
    }
    for (version, sql) in (1..)
        .zip(MIGRATIONS)
        .skip(usize::try_from(done).unwrap_or(0))
    {
        tx.batch_execute(sql).await?;
        tx.execute(
            "INSERT INTO connectorgen_migrations (version) VALUES ($1)",
            &[&version],
        )
        .await?;
    }
    tx.commit().await?;
    Ok(())
}

/// The row whose `COLUMNS` start at column `at`, or `None` when they are empty (a
/// look-up that found nothing).
fn entry(row: &Row, at: usize) -> Option<Entry> {
    let id: i64 = row.get::<_, Option<i64>>(at)?;
    let seconds = |i: usize| u64::try_from(row.get::<_, i64>(at + i)).unwrap_or(0);
    Some(Entry {
        id,
        tool: row.get(at + 1),
        args_hash: row.get(at + 2),
        key: row.get(at + 3),
        nonce: row.get(at + 4),
        status: Status::parse(row.get(at + 5)),
        http_status: row
            .get::<_, Option<i32>>(at + 6)
            .and_then(|s| u16::try_from(s).ok()),
        job_id: row.get(at + 7),
        result: row.get(at + 8),
        created: seconds(9),
        updated: seconds(10),
        attempts: u32::try_from(row.get::<_, i32>(at + 11)).unwrap_or(0),
        media_type: row.get(at + 12),
        sending: row.get(at + 13),
        task: None,
    })
}

fn seconds(t: u64) -> i64 {
    i64::try_from(t).unwrap_or(i64::MAX)
}

impl Ledger for PgLedger {
    fn claim(
        &self,
        claim: &Claim<'_>,
        decide: &mut Decide<'_>,
    ) -> Result<(Found, Option<Entry>), LedgerError> {
        self.with(|session| {
            let mut tries = 0;
            loop {
                tries += 1;
                match self.try_claim(session, claim, decide) {
                    Err(Retry::Again) if tries < TRIES => {}
                    Err(Retry::Again) => {
                        return Err(LedgerError::Store(format!(
                            "the claim met a deadlock {TRIES} times"
                        )));
                    }
                    Err(Retry::Failed(e)) => return Err(e),
                    Ok(value) => return Ok(value),
                }
            }
        })
    }

    fn finish(&self, id: i64, outcome: &Outcome, now: u64) -> Result<(), LedgerError> {
        let connector = self.connector.as_str();
        let http_status = outcome.http_status.map(i32::from);
        let (row_bytes, max) = (seconds(ROW_BYTES), seconds(self.retention.max_bytes));
        let (status, now) = (outcome.status.as_str(), seconds(now));
        let sender = self.sender.as_str();
        let rows = self.with(|session| {
            let s = &session.statements;
            Ok(session.transaction(&[
                (&s.lock_row, &[&id, &connector]),
                (
                    &s.finish,
                    &[
                        &id,
                        &connector,
                        &status,
                        &http_status,
                        &outcome.result,
                        &outcome.job_id,
                        &now,
                        &outcome.media_type,
                        &sender,
                        &row_bytes,
                        &max,
                    ],
                ),
            ])?)
        })?;
        if rows.last().is_none_or(Vec::is_empty) {
            return Err(LedgerError::Store(format!(
                "row {id} is no longer in the ledger"
            )));
        }
        let mut cleared = self.cleared();
        if cleared.len() >= CLEARED {
            cleared.clear();
        }
        cleared.insert(id);
        Ok(())
    }

    fn refund(&self, refund: &Refund<'_>) -> Result<bool, LedgerError> {
        let connector = self.connector.as_str();
        let now = seconds(refund.now);
        let rows = self.with(|session| {
            Ok(session.one(
                &session.statements.refund,
                &[
                    &connector,
                    &refund.principal,
                    &refund.tool,
                    &refund.job_id,
                    &now,
                ],
            )?)
        })?;
        Ok(!rows.is_empty())
    }

    fn room(&self, now: u64) -> Result<(), LedgerError> {
        match self.with(|session| Ok(self.full(session, now)?))? {
            Some(full) => Err(full),
            None => Ok(()),
        }
    }

    fn keep_task(&self, id: i64, task: &str) -> Result<bool, LedgerError> {
        let connector = self.connector.as_str();
        let (row_bytes, max) = (seconds(ROW_BYTES), seconds(self.retention.max_bytes));
        let rows = self.with(|session| {
            let s = &session.statements;
            Ok(session.transaction(&[
                (&s.lock_row, &[&id, &connector]),
                (&s.keep_task, &[&id, &connector, &task, &row_bytes, &max]),
            ])?)
        })?;
        Ok(rows.last().is_some_and(|rows| !rows.is_empty()))
    }

    fn entry(&self, id: i64, principal: &str) -> Result<Option<Entry>, LedgerError> {
        let connector = self.connector.as_str();
        self.with(|session| {
            let rows = session.one(&session.statements.entry, &[&id, &connector, &principal])?;
            Ok(rows.first().and_then(|row| {
                let mut entry = entry(row, 0)?;
                entry.task = row.get(WIDTH);
                Some(entry)
            }))
        })
    }

    fn renew(&self, id: i64) {
        self.cleared().remove(&id);
        let (connector, sender) = (self.connector.as_str(), self.sender.as_str());
        let lease = self.lease;
        let _ = self.with(|session| {
            session.one(
                &session.statements.renew,
                &[&id, &connector, &sender, &lease],
            )?;
            Ok(())
        });
    }

    fn release(&self, id: i64) {
        if self.cleared().remove(&id) {
            return;
        }
        let (connector, sender) = (self.connector.as_str(), self.sender.as_str());
        let _ = self.with(|session| {
            session.one(&session.statements.release, &[&id, &connector, &sender])?;
            Ok(())
        });
    }

    fn put_credential(
        &self,
        principal: &str,
        sealed: &Sealed,
        now: u64,
    ) -> Result<(), LedgerError> {
        self.with(|session| credentials::put(session, &self.connector, principal, sealed, now))
    }

    fn get_credential(&self, principal: &str) -> Result<Option<Sealed>, LedgerError> {
        self.with(|session| credentials::get(session, &self.connector, principal))
    }

    fn reseal_credential(
        &self,
        principal: &str,
        old: &Sealed,
        new: &Sealed,
        now: u64,
    ) -> Result<bool, LedgerError> {
        self.with(|session| credentials::reseal(session, &self.connector, principal, old, new, now))
    }

    fn delete_credential(&self, principal: &str) -> Result<bool, LedgerError> {
        self.with(|session| credentials::delete(session, &self.connector, principal))
    }

    fn put_pending(
        &self,
        flow: &str,
        principal: &str,
        sealed: &Sealed,
        expires: u64,
        now: u64,
    ) -> Result<(), LedgerError> {
        self.with(|session| {
            let connector = &self.connector;
            credentials::put_pending(session, connector, flow, principal, sealed, expires, now)
        })
    }

    fn take_pending(&self, flow: &str, now: u64) -> Result<Option<(String, Sealed)>, LedgerError> {
        self.with(|session| credentials::take_pending(session, &self.connector, flow, now))
    }

    fn key_uses(&self, now: u64) -> Result<Vec<KeyUse>, LedgerError> {
        self.with(|session| credentials::key_uses(session, &self.connector, now))
    }

    fn keep_key_check(&self, check: &Sealed) -> Result<Sealed, LedgerError> {
        self.with(|session| credentials::keep_key_check(session, &self.connector, check))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_never_shows_and_an_unchecked_or_bare_remote_host_is_refused() {
        assert_eq!(
            shown("postgres://app:s3cret@db.internal:5432/ledger?sslmode=disable"),
            "postgres://app:***@db.internal:5432/ledger?sslmode=disable"
        );
        assert_eq!(
            shown("postgres:///ledger?host=/run/pg&password=s3cret"),
            "postgres:///ledger?host=/run/pg&password=***"
        );
        let e = config("postgres://app@db.internal/ledger")
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("add sslmode=disable"), "{e}");
        // TLS whose certificate nobody checks, to a remote host (ledger/pg/tls/tests.rs has
        // every mode).
        let e = config("postgres://app:pw@db.internal/ledger?sslmode=require")
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("checks no certificate"), "{e}");
        assert!(!e.contains("pw"), "{e}");
        assert_eq!(
            shown("postgres://app@%2Frun%2Fpg/ledger"),
            "postgres://app@%2Frun%2Fpg/ledger"
        );
        config("postgres://app@db.internal/ledger?sslmode=disable").unwrap();
        config("postgres://app@localhost/ledger").unwrap();
        // The shapes a split on `/`, `?` or `://` misses: a key-value string, a password
        // holding `/` and `?`.
        let shown_kv = shown("host=/run/pg user=app password=s3cret dbname=x");
        assert!(!shown_kv.contains("s3cret"), "{shown_kv}");
        let shown_slash = shown("postgres://app:s3c/r?et@db/x?sslmode=disable");
        assert!(
            !shown_slash.contains("s3c/r?et") && !shown_slash.contains("r?et"),
            "{shown_slash}"
        );
        assert!(!shown("not a url").contains("not a url"));
        // A remote `hostaddr` behind `host=localhost` is remote.
        let e = config("postgres://app@localhost/db?hostaddr=203.0.113.5")
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("add sslmode=disable"), "{e}");
        config("postgres://app@localhost/db?hostaddr=127.0.0.1").unwrap();
    }

    /// The password as written, where the written form is neither the password nor its
    /// percent-encoding: backslash escapes in a key-value string (quoted or not), and a
    /// URL's user part holding a raw `/` beside a percent-encoded character (the driver
    /// reads the user part up to the first `@`, wherever a `/` or `?` is).
    #[test]
    fn a_password_written_with_escapes_or_mixed_encoding_is_never_shown() {
        for (url, written) in [
            (
                r"host=/run/pg user=app password='it\'s hunter22' dbname=x",
                r"it\'s hunter22",
            ),
            (
                r"host=/run/pg user=app password=hun\ ter22 dbname=x",
                r"hun\ ter22",
            ),
            (
                "postgres://app:hun/ter%3f22@db/x?sslmode=disable",
                "hun/ter%3f22",
            ),
            (
                "postgresql://app:a/b%40hunter22@db:5433/x?sslmode=disable",
                "a/b%40hunter22",
            ),
        ] {
            let config: postgres::Config = url.parse().unwrap();
            assert!(
                config.get_password().is_some(),
                "{url}: the driver reads one"
            );
            let shown = shown(url);
            assert!(
                !shown.contains(written) && !shown.contains("hunter22") && !shown.contains("ter22"),
                "{url} is shown as {shown}"
            );
        }
        // What is not the password stays readable.
        assert_eq!(
            shown(r"host=/run/pg user=app password='it\'s hunter22' dbname=x"),
            "host=/run/pg user=app password=*** dbname=x"
        );
        assert_eq!(
            shown("postgres://app:hun/ter%3f22@db/x?sslmode=disable"),
            "postgres://app:***@db/x?sslmode=disable"
        );
    }

    /// docs/serve.md shows the schema: the copy there is each migration's text.
    #[test]
    fn the_documented_schema_is_the_migrated_one() {
        let doc = include_str!("../../../../docs/serve.md");
        for (version, migration) in (1..).zip(MIGRATIONS) {
            assert!(
                doc.contains(migration.trim()),
                "docs/serve.md (\"Several instances\") must show migration {version} as it is \
                 in ledger/pg.rs"
            );
        }
    }
}
