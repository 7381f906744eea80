//! The ledger in one SQLite file, for one instance: the `calls` table, its migrations
//! (each a version `step` applies once, frozen as written), the partition by connector
//! and principal, pruning, the usage counters the triggers keep, and `Ledger` for it.
//! People's sealed credentials (migration 5) are in `sqlite/credentials.rs`; receipts and
//! what paid calls spend are migration 6 (`RECEIPTS`).
//!
//! Takes: the file's path, the connector's name and the retention (`open`), then the
//! trait's calls. Returns: what `ledger.rs` says each call returns.
//! Must never: send anything or decide policy (`ledger.rs`), or change a migration once
//! written (an existing file has run it).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Mutex;

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use super::{
    Claim, Decide, Decision, Entry, Found, Ledger, LedgerError, Outcome, ROW_BYTES, Refund,
    Retention, Status, Tally,
};
use crate::vault::{KeyUse, Sealed};
use connectorgen_core::budget::{Amount, Unit};

mod credentials;

impl From<rusqlite::Error> for LedgerError {
    fn from(e: rusqlite::Error) -> Self {
        LedgerError::Store(e.to_string())
    }
}

/// The ledger in one SQLite file.
pub(crate) struct SqliteLedger {
    connection: Mutex<Connection>,
    /// The connector whose rows this is (its service name).
    connector: String,
    retention: Retention,
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS calls (
    id INTEGER PRIMARY KEY,
    tool TEXT NOT NULL,
    args_hash TEXT NOT NULL,
    key TEXT NOT NULL,
    nonce TEXT UNIQUE,
    status TEXT NOT NULL,
    http_status INTEGER,
    job_id TEXT,
    result TEXT,
    created INTEGER NOT NULL,
    updated INTEGER NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 1,
    media_type TEXT,
    bytes INTEGER NOT NULL DEFAULT 0
);
";

/// Version 1 (`PRAGMA user_version`): rows keyed by connector and principal, a nonce
/// unique within them. SQLite cannot change a table's constraints, so the table is
/// copied into this one.
const PARTITIONED: &str = "
CREATE TABLE calls_v1 (
    id INTEGER PRIMARY KEY,
    connector TEXT NOT NULL,
    principal TEXT NOT NULL,
    tool TEXT NOT NULL,
    args_hash TEXT NOT NULL,
    key TEXT NOT NULL,
    nonce TEXT,
    status TEXT NOT NULL,
    http_status INTEGER,
    job_id TEXT,
    result TEXT,
    created INTEGER NOT NULL,
    updated INTEGER NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 1,
    media_type TEXT,
    bytes INTEGER NOT NULL DEFAULT 0,
    UNIQUE (connector, principal, nonce)
);
";

/// Version 2: row ids are never used again (`AUTOINCREMENT`). A plain `INTEGER PRIMARY
/// KEY` takes the largest id in the table plus one, so once the newest rows were pruned
/// a new row got a pruned row's id — and with it that row's task id, its task state held
/// in memory and its open cancel question (issue 43). SQLite cannot add `AUTOINCREMENT`
/// to a table, so the table is copied into this one; the copy's largest id seeds the
/// sequence.
const NEVER_REUSED: &str = "
CREATE TABLE calls_v2 (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    connector TEXT NOT NULL,
    principal TEXT NOT NULL,
    tool TEXT NOT NULL,
    args_hash TEXT NOT NULL,
    key TEXT NOT NULL,
    nonce TEXT,
    status TEXT NOT NULL,
    http_status INTEGER,
    job_id TEXT,
    result TEXT,
    created INTEGER NOT NULL,
    updated INTEGER NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 1,
    media_type TEXT,
    bytes INTEGER NOT NULL DEFAULT 0,
    UNIQUE (connector, principal, nonce)
);
";

/// Version 4: the rows' count and bytes per connector kept as counters, by triggers on
/// every write of `calls`, instead of counted by a scan of every row three times a paid
/// call (issue 44: 331 paid calls/s with 2k rows, 21 with 62k). (A later migration that
/// copies `calls` into a new table drops its triggers with it and must make them again.)
const COUNTED: &str = "
CREATE TABLE usage (
    connector TEXT PRIMARY KEY,
    rows INTEGER NOT NULL,
    bytes INTEGER NOT NULL
);
INSERT INTO usage (connector, rows, bytes)
    SELECT connector, COUNT(*), COALESCE(SUM(bytes), 0) FROM calls GROUP BY connector;
CREATE TRIGGER calls_counted_in AFTER INSERT ON calls BEGIN
    INSERT INTO usage (connector, rows, bytes) VALUES (NEW.connector, 1, NEW.bytes)
        ON CONFLICT (connector) DO UPDATE SET rows = rows + 1, bytes = bytes + NEW.bytes;
END;
CREATE TRIGGER calls_counted_out AFTER DELETE ON calls BEGIN
    UPDATE usage SET rows = rows - 1, bytes = bytes - OLD.bytes WHERE connector = OLD.connector;
END;
CREATE TRIGGER calls_counted_again AFTER UPDATE OF bytes ON calls BEGIN
    UPDATE usage SET bytes = bytes - OLD.bytes + NEW.bytes WHERE connector = NEW.connector;
END;
";

/// Version 6: receipts and budgets (issue 47). A row made for a call that needs consent
/// is a receipt (`receipt = 1`) holding the arguments as agreed (`args`); a paid call's
/// row holds what it spends (`unit` `credits` or `money`, `currency`, and `amount` in
/// millionths, `NULL` when not known before the call), and `refunded` (when) once a
/// refund or cancel the manifest marks gave it back. Receipts are pruned by their own
/// age (`Retention::receipts`); the indexes keep pruning, the strip of an old receipt's
/// answer and a budget's count to the rows they concern.
const RECEIPTS: &str = "
ALTER TABLE calls ADD COLUMN receipt INTEGER NOT NULL DEFAULT 0;
ALTER TABLE calls ADD COLUMN args TEXT;
ALTER TABLE calls ADD COLUMN unit TEXT CHECK (unit IN ('credits', 'money'));
ALTER TABLE calls ADD COLUMN currency TEXT;
ALTER TABLE calls ADD COLUMN amount INTEGER;
ALTER TABLE calls ADD COLUMN refunded INTEGER;
CREATE INDEX calls_by_receipt_age ON calls (connector, receipt, updated);
CREATE INDEX calls_to_strip ON calls (connector, updated)
    WHERE receipt = 1 AND (result IS NOT NULL OR task IS NOT NULL);
CREATE INDEX calls_spent ON calls (connector, principal, created) WHERE unit IS NOT NULL;
";

/// After the migrations.
const INDEXES: &str = "
CREATE INDEX IF NOT EXISTS calls_by_call ON calls (connector, principal, tool, args_hash, created);
CREATE INDEX IF NOT EXISTS calls_by_age ON calls (connector, updated);
";

/// The columns of an `Entry`, in `entry`'s order. A claim reads them without `task`
/// (a finished task's whole state, which no decision needs); `Ledger::entry` adds it.
const COLUMNS: &str = "id, tool, args_hash, key, nonce, status, http_status, job_id, result, created, updated, attempts, media_type";

impl SqliteLedger {
    /// Opens (creating) the ledger file of `connector`: owner-only, never through a
    /// symlink. `adopt` (tool → principal) says whose the rows of a ledger made before rows
    /// had a principal become: the credential each tool is served with when the file is
    /// first opened by this version (docs/serve.md, "Several instances").
    pub(crate) fn open(
        path: &Path,
        connector: &str,
        retention: Retention,
        adopt: &BTreeMap<String, String>,
    ) -> Result<SqliteLedger, LedgerError> {
        crate::state_dir::prepare_ledger(path).map_err(|e| LedgerError::Store(e.to_string()))?;
        let flags = rusqlite::OpenFlags::default() | rusqlite::OpenFlags::SQLITE_OPEN_NOFOLLOW;
        Self::with(
            Connection::open_with_flags(path, flags)?,
            connector,
            retention,
            adopt,
        )
    }

    /// A ledger that lives in memory and keeps everything (tests).
    #[cfg(test)]
    pub(crate) fn in_memory() -> Result<SqliteLedger, LedgerError> {
        let keep_all = Retention {
            window: u64::MAX,
            consent: u64::MAX,
            max_bytes: u64::MAX,
            receipts: u64::MAX,
        };
        Self::with(
            Connection::open_in_memory()?,
            "test",
            keep_all,
            &BTreeMap::new(),
        )
    }

    fn with(
        connection: Connection,
        connector: &str,
        retention: Retention,
        adopt: &BTreeMap<String, String>,
    ) -> Result<SqliteLedger, LedgerError> {
        // WAL with FULL sync: a committed claim survives a crash or power loss, which is
        // the point of recording before sending. busy_timeout lets two processes on one
        // file take turns instead of failing. journal_size_limit: the WAL is cut back to
        // 4 MiB after each checkpoint instead of keeping its largest size for good.
        connection.pragma_update(None, "journal_mode", "WAL")?;
        connection.pragma_update(None, "synchronous", "FULL")?;
        connection.pragma_update(None, "journal_size_limit", 4_i64 << 20)?;
        connection.busy_timeout(std::time::Duration::from_secs(5))?;
        connection.execute_batch(SCHEMA)?;
        // A ledger made before answers kept their media type gets the column (its old
        // rows replay as before: text, JSON when it parses).
        let has_media_type: bool = connection.query_row(
            "SELECT COUNT(*) > 0 FROM pragma_table_info('calls') WHERE name = 'media_type'",
            [],
            |row| row.get(0),
        )?;
        if !has_media_type {
            connection.execute_batch("ALTER TABLE calls ADD COLUMN media_type TEXT")?;
        }
        migrate(&connection)?;
        partition(&connection, connector, adopt)?;
        let columns = "id, connector, principal, tool, args_hash, key, nonce, status, \
                       http_status, job_id, result, created, updated, attempts, media_type, bytes";
        step(
            &connection,
            2,
            &format!(
                "{NEVER_REUSED} INSERT INTO calls_v2 ({columns}) SELECT {columns} FROM calls; \
                 DROP TABLE calls; ALTER TABLE calls_v2 RENAME TO calls;"
            ),
        )?;
        // A finished task's state kept with its row (issue 43: it was held in memory).
        step(&connection, 3, "ALTER TABLE calls ADD COLUMN task TEXT;")?;
        step(&connection, 4, COUNTED)?;
        step(&connection, 5, credentials::MIGRATION)?;
        step(&connection, 6, RECEIPTS)?;
        connection.execute_batch(INDEXES)?;
        Ok(SqliteLedger {
            connection: Mutex::new(connection),
            connector: connector.to_string(),
            retention,
        })
    }

    fn lock(&self) -> Result<std::sync::MutexGuard<'_, Connection>, LedgerError> {
        self.connection
            .lock()
            .map_err(|_| LedgerError::Store("a previous ledger operation panicked".into()))
    }
}

/// A ledger made before rows counted their size gets the `bytes` column, filled in.
fn migrate(connection: &Connection) -> Result<(), LedgerError> {
    let has_bytes = connection
        .prepare("SELECT 1 FROM pragma_table_info('calls') WHERE name = 'bytes'")?
        .exists([])?;
    if !has_bytes {
        connection.execute_batch(
            "ALTER TABLE calls ADD COLUMN bytes INTEGER NOT NULL DEFAULT 0; \
             UPDATE calls SET bytes = LENGTH(CAST(result AS BLOB)) WHERE result IS NOT NULL;",
        )?;
    }
    Ok(())
}

/// Migration 1: the rows keyed by connector and principal. The old rows become
/// `connector`'s, and each tool's those of the principal `adopt` names for it (a ledger of
/// one instance had one credential; a tool not named keeps an empty principal, which no
/// call has, until its rows age out).
fn partition(
    connection: &Connection,
    connector: &str,
    adopt: &BTreeMap<String, String>,
) -> Result<(), LedgerError> {
    let version: i64 = connection.query_row("PRAGMA user_version", [], |row| row.get(0))?;
    if version >= 1 {
        return Ok(());
    }
    // Read again under the write lock: two processes opening an old file together both
    // saw version 0, and the second must not migrate the first's migrated rows again
    // (their principals would be reset to its own credentials').
    connection.execute_batch("BEGIN IMMEDIATE")?;
    let version: i64 = connection.query_row("PRAGMA user_version", [], |row| row.get(0))?;
    if version >= 1 {
        connection.execute_batch("COMMIT")?;
        return Ok(());
    }
    let mut batch = String::new();
    batch.push_str(PARTITIONED);
    batch.push_str(
        "INSERT INTO calls_v1 (id, connector, principal, tool, args_hash, key, nonce, status, \
         http_status, job_id, result, created, updated, attempts, media_type, bytes) \
         SELECT id, '', '', tool, args_hash, key, nonce, status, http_status, job_id, result, \
         created, updated, attempts, media_type, bytes FROM calls;",
    );
    connection.execute_batch(&batch)?;
    let moved = (|| -> Result<(), rusqlite::Error> {
        connection.execute("UPDATE calls_v1 SET connector = ?1", params![connector])?;
        for (tool, principal) in adopt {
            connection.execute(
                "UPDATE calls_v1 SET principal = ?2 WHERE tool = ?1",
                params![tool, principal],
            )?;
        }
        connection.execute_batch(
            "DROP TABLE calls; ALTER TABLE calls_v1 RENAME TO calls; PRAGMA user_version = 1; \
             COMMIT;",
        )
    })();
    if let Err(e) = moved {
        let _ = connection.execute_batch("ROLLBACK");
        return Err(e.into());
    }
    Ok(())
}

/// Migration `version` (`PRAGMA user_version`) when the file is older: `sql` and the new
/// version in one transaction, the version read again under the write lock (as in
/// `partition`: two processes opening an old file together both saw the old version).
/// Version 2 is `NEVER_REUSED` (the table copied), 3 the `task` column, 4 `COUNTED`, 5
/// people's sealed credentials (`credentials::MIGRATION`), 6 `RECEIPTS`.
fn step(connection: &Connection, version: i64, sql: &str) -> Result<(), LedgerError> {
    let older = |connection: &Connection| -> Result<bool, rusqlite::Error> {
        let at: i64 = connection.query_row("PRAGMA user_version", [], |row| row.get(0))?;
        Ok(at < version)
    };
    if !older(connection)? {
        return Ok(());
    }
    connection.execute_batch("BEGIN IMMEDIATE")?;
    let stepped = (|| -> Result<(), rusqlite::Error> {
        if older(connection)? {
            connection.execute_batch(&format!("{sql} PRAGMA user_version = {version};"))?;
        }
        Ok(())
    })();
    match stepped {
        Ok(()) => connection.execute_batch("COMMIT")?,
        Err(e) => {
            let _ = connection.execute_batch("ROLLBACK");
            return Err(e.into());
        }
    }
    Ok(())
}

/// Deletes the rows that can no longer decide a call (`Retention::keep` after their last
/// write), except those in `busy`; of a receipt past that, only its stored answer and task
/// state go, and the receipt itself past `Retention::kept_receipts`.
fn prune(
    tx: &rusqlite::Transaction<'_>,
    connector: &str,
    retention: Retention,
    now: u64,
    busy: &[i64],
) -> Result<(), LedgerError> {
    // Integers only: the list is safe to write into the statement.
    let busy: Vec<String> = busy.iter().map(i64::to_string).collect();
    let busy = busy.join(",");
    for (nonce, test) in [(false, "IS NULL"), (true, "IS NOT NULL")] {
        let Some(before) = now.checked_sub(retention.keep(nonce)) else {
            continue;
        };
        tx.execute(
            &format!(
                "DELETE FROM calls WHERE connector = ?2 AND receipt = 0 AND updated < ?1 \
                 AND nonce {test} AND id NOT IN ({busy})"
            ),
            params![seconds(before), connector],
        )?;
        tx.execute(
            &format!(
                "UPDATE calls SET result = NULL, task = NULL, \
                 bytes = COALESCE(LENGTH(CAST(args AS BLOB)), 0) \
                 WHERE connector = ?2 AND updated < ?1 \
                 AND receipt = 1 AND (result IS NOT NULL OR task IS NOT NULL) \
                 AND nonce {test} AND id NOT IN ({busy})"
            ),
            params![seconds(before), connector],
        )?;
    }
    if let Some(before) = now.checked_sub(retention.kept_receipts()) {
        tx.execute(
            &format!(
                "DELETE FROM calls WHERE connector = ?2 AND receipt = 1 AND updated < ?1 \
                 AND id NOT IN ({busy})"
            ),
            params![seconds(before), connector],
        )?;
    }
    Ok(())
}

/// Each tally counted (`Found::spent`): this principal's paid rows created since its
/// start, refused ones left out; for an amount, those of its unit with an amount known
/// and not given back.
fn spent(
    tx: &rusqlite::Transaction<'_>,
    connector: &str,
    principal: &str,
    tallies: &[Tally],
) -> Result<Vec<Amount>, LedgerError> {
    let mut out = Vec::with_capacity(tallies.len());
    for tally in tallies {
        let since = seconds(tally.since);
        let value: i64 = if tally.unit == Unit::Calls {
            let n: i64 = tx
                .prepare_cached(
                    "SELECT COUNT(*) FROM calls WHERE connector = ?1 AND principal = ?2 \
                     AND unit IS NOT NULL AND created >= ?3 AND status != 'rejected'",
                )?
                .query_row(params![connector, principal, since], |row| row.get(0))?;
            Amount::units(n).micros()
        } else {
            tx.prepare_cached(
                "SELECT COALESCE(SUM(amount), 0) FROM calls WHERE connector = ?1 \
                 AND principal = ?2 AND unit IS NOT NULL AND unit = ?4 AND created >= ?3 \
                 AND status != 'rejected' AND amount IS NOT NULL AND refunded IS NULL",
            )?
            .query_row(
                params![connector, principal, since, tally.unit.as_str()],
                |row| row.get(0),
            )?
        };
        out.push(Amount::from_micros(value));
    }
    Ok(out)
}

/// The rows' count and the bytes they hold (`ROW_BYTES` each plus their answers), from
/// the counters (`COUNTED`): one row read, whatever the ledger holds.
fn usage(tx: &rusqlite::Transaction<'_>, connector: &str) -> Result<(u64, u64), LedgerError> {
    let (rows, answers) = tx
        .prepare_cached("SELECT rows, bytes FROM usage WHERE connector = ?1")?
        .query_row(params![connector], |row| {
            Ok((row.get::<_, i64>(0)?, row.get::<_, i64>(1)?))
        })
        .optional()?
        .unwrap_or((0, 0));
    let rows = u64::try_from(rows).unwrap_or(0);
    let answers = u64::try_from(answers).unwrap_or(0);
    Ok((rows, rows.saturating_mul(ROW_BYTES).saturating_add(answers)))
}

/// `LedgerError::Full` when one more row would take the rows past the bound.
fn room(
    tx: &rusqlite::Transaction<'_>,
    connector: &str,
    retention: Retention,
    now: u64,
) -> Result<(), LedgerError> {
    let (rows, used) = usage(tx, connector)?;
    if used.saturating_add(ROW_BYTES) > retention.max_bytes {
        return Err(LedgerError::Full {
            rows,
            used,
            max: retention.max_bytes,
            wait: wait(tx, connector, retention, now)?,
        });
    }
    Ok(())
}

/// Seconds until the oldest row may be pruned (one being sent waits for its send too).
fn wait(
    tx: &rusqlite::Transaction<'_>,
    connector: &str,
    retention: Retention,
    now: u64,
) -> Result<u64, LedgerError> {
    let oldest = |test: &str| -> Result<Option<i64>, LedgerError> {
        Ok(tx.query_row(
            &format!("SELECT MIN(updated) FROM calls WHERE connector = ?1 AND {test}"),
            params![connector],
            |row| row.get::<_, Option<i64>>(0),
        )?)
    };
    let mut soonest = u64::MAX;
    for (keep, test) in [
        (retention.keep(false), "receipt = 0 AND nonce IS NULL"),
        (retention.keep(true), "receipt = 0 AND nonce IS NOT NULL"),
        (retention.kept_receipts(), "receipt = 1"),
    ] {
        if let Some(updated) = oldest(test)? {
            let at = u64::try_from(updated).unwrap_or(0).saturating_add(keep);
            soonest = soonest.min(at.saturating_sub(now));
        }
    }
    Ok(soonest)
}

/// SQLite integers are signed; our times are seconds since 1970, far below `i64::MAX`.
fn seconds(t: u64) -> i64 {
    i64::try_from(t).unwrap_or(i64::MAX)
}

fn entry(row: &rusqlite::Row<'_>) -> rusqlite::Result<Entry> {
    Ok(Entry {
        id: row.get(0)?,
        tool: row.get(1)?,
        args_hash: row.get(2)?,
        key: row.get(3)?,
        nonce: row.get(4)?,
        status: Status::parse(&row.get::<_, String>(5)?),
        http_status: row.get::<_, Option<u16>>(6)?,
        job_id: row.get(7)?,
        result: row.get(8)?,
        created: u64::try_from(row.get::<_, i64>(9)?).unwrap_or(0),
        updated: u64::try_from(row.get::<_, i64>(10)?).unwrap_or(0),
        attempts: row.get(11)?,
        media_type: row.get(12)?,
        sending: false,
        // Only `Ledger::entry` reads it (`COLUMNS`).
        task: if row.as_ref().column_count() > 13 {
            row.get(13)?
        } else {
            None
        },
    })
}

impl Ledger for SqliteLedger {
    fn claim(
        &self,
        claim: &Claim<'_>,
        decide: &mut Decide<'_>,
    ) -> Result<(Found, Option<Entry>), LedgerError> {
        let mut connection = self.lock()?;
        let tx = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let connector = self.connector.as_str();
        prune(&tx, connector, self.retention, claim.now, claim.busy)?;
        let by_nonce = match claim.nonce {
            Some(nonce) => tx
                .query_row(
                    &format!(
                        "SELECT {COLUMNS} FROM calls WHERE connector = ?1 AND principal = ?2 \
                         AND nonce = ?3"
                    ),
                    params![connector, claim.principal, nonce],
                    entry,
                )
                .optional()?,
            None => None,
        };
        let latest = tx
            .query_row(
                &format!(
                    "SELECT {COLUMNS} FROM calls WHERE connector = ?4 AND principal = ?5 \
                     AND tool = ?1 AND args_hash = ?2 AND created >= ?3 AND status != 'rejected' \
                     ORDER BY created DESC, id DESC LIMIT 1"
                ),
                params![
                    claim.tool,
                    claim.args_hash,
                    seconds(claim.since),
                    connector,
                    claim.principal
                ],
                entry,
            )
            .optional()?;
        let last_id = tx.query_row(
            "SELECT MAX(id) FROM calls WHERE connector = ?3 AND principal = ?4 AND tool = ?1 \
             AND args_hash = ?2",
            params![claim.tool, claim.args_hash, connector, claim.principal],
            |row| row.get::<_, Option<i64>>(0),
        )?;
        let spent = spent(&tx, connector, claim.principal, claim.tallies)?;
        let found = Found {
            by_nonce,
            latest,
            last_id,
            spent,
        };
        let written = match decide(&found) {
            Decision::Insert { key, nonce } => {
                room(&tx, connector, self.retention, claim.now)?;
                let receipt = claim.receipt;
                let args = receipt.map(|r| r.args);
                tx.execute(
                    "INSERT INTO calls (connector, principal, tool, args_hash, key, nonce, \
                     status, created, updated, receipt, args, unit, currency, amount, bytes) \
                     VALUES (?6, ?7, ?1, ?2, ?3, ?4, 'pending', ?5, ?5, ?8, ?9, ?10, ?11, ?12, \
                     COALESCE(LENGTH(CAST(?9 AS BLOB)), 0))",
                    params![
                        claim.tool,
                        claim.args_hash,
                        key,
                        nonce,
                        seconds(claim.now),
                        connector,
                        claim.principal,
                        receipt.is_some(),
                        args,
                        receipt.and_then(|r| r.unit).map(Unit::as_str),
                        receipt.and_then(|r| r.currency),
                        receipt.and_then(|r| r.amount).map(Amount::micros),
                    ],
                )?;
                let id = tx.last_insert_rowid();
                Some(tx.query_row(
                    &format!("SELECT {COLUMNS} FROM calls WHERE id = ?1"),
                    params![id],
                    entry,
                )?)
            }
            Decision::Retry(id) => {
                tx.execute(
                    "UPDATE calls SET attempts = attempts + 1, updated = ?2 WHERE id = ?1",
                    params![id, seconds(claim.now)],
                )?;
                tx.query_row(
                    &format!("SELECT {COLUMNS} FROM calls WHERE id = ?1"),
                    params![id],
                    entry,
                )
                .optional()?
            }
            Decision::Nothing => None,
        };
        tx.commit()?;
        Ok((found, written))
    }

    fn finish(&self, id: i64, outcome: &Outcome, now: u64) -> Result<(), LedgerError> {
        let mut connection = self.lock()?;
        let tx = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let (_, used) = usage(&tx, &self.connector)?;
        // `others`: what the row holds besides its answer (its task's state, its receipt's
        // arguments), counted with the new answer.
        let (kept, others): (i64, i64) = tx
            .query_row(
                "SELECT bytes, COALESCE(LENGTH(CAST(task AS BLOB)), 0) \
                 + COALESCE(LENGTH(CAST(args AS BLOB)), 0) FROM calls WHERE id = ?1",
                params![id],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .optional()?
            .ok_or_else(|| LedgerError::Store(format!("row {id} is no longer in the ledger")))?;
        // An answer that would take the rows past the bound is not stored: the status is
        // (it is what stops a second send), the body is a convenience.
        let result = outcome.result.as_deref().filter(|text| {
            self.retention.fits(
                used,
                kept.unsigned_abs(),
                (text.len() as u64).saturating_add(others.unsigned_abs()),
            )
        });
        let bytes = result.map_or(kept, |text| {
            i64::try_from(text.len())
                .unwrap_or(i64::MAX)
                .saturating_add(others)
        });
        tx.execute(
            "UPDATE calls SET status = ?2, http_status = ?3, job_id = COALESCE(?4, job_id), \
             result = COALESCE(?5, result), updated = ?6, \
             media_type = COALESCE(?7, media_type), bytes = ?8 WHERE id = ?1",
            params![
                id,
                outcome.status.as_str(),
                outcome.http_status,
                outcome.job_id,
                result,
                seconds(now),
                outcome.media_type,
                bytes
            ],
        )?;
        tx.commit()?;
        Ok(())
    }

    fn keep_task(&self, id: i64, task: &str) -> Result<bool, LedgerError> {
        let mut connection = self.lock()?;
        let tx = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let (_, used) = usage(&tx, &self.connector)?;
        let Some(old) = tx
            .query_row(
                "SELECT COALESCE(LENGTH(CAST(task AS BLOB)), 0) FROM calls WHERE id = ?1 \
                 AND connector = ?2",
                params![id, self.connector],
                |row| row.get::<_, i64>(0),
            )
            .optional()?
        else {
            return Ok(false);
        };
        let new = task.len() as u64;
        if !self.retention.fits(used, old.unsigned_abs(), new) {
            return Ok(false);
        }
        tx.execute(
            "UPDATE calls SET task = ?2, bytes = bytes - ?3 + ?4 WHERE id = ?1",
            params![id, task, old, i64::try_from(new).unwrap_or(i64::MAX)],
        )?;
        tx.commit()?;
        Ok(true)
    }

    fn entry(&self, id: i64, principal: &str) -> Result<Option<Entry>, LedgerError> {
        let connection = self.lock()?;
        Ok(connection
            .query_row(
                &format!(
                    "SELECT {COLUMNS}, task FROM calls WHERE id = ?1 AND connector = ?2 \
                     AND principal = ?3"
                ),
                params![id, self.connector, principal],
                entry,
            )
            .optional()?)
    }

    fn refund(&self, refund: &Refund<'_>) -> Result<bool, LedgerError> {
        let connection = self.lock()?;
        let changed = connection.execute(
            "UPDATE calls SET refunded = ?5 WHERE id = (SELECT id FROM calls \
             WHERE connector = ?1 AND principal = ?2 AND tool = ?3 AND job_id = ?4 \
             AND unit IS NOT NULL AND refunded IS NULL ORDER BY id DESC LIMIT 1)",
            params![
                self.connector,
                refund.principal,
                refund.tool,
                refund.job_id,
                seconds(refund.now)
            ],
        )?;
        Ok(changed > 0)
    }

    fn room(&self, now: u64) -> Result<(), LedgerError> {
        let mut connection = self.lock()?;
        // Deferred: a read, no lock taken on the file.
        let tx = connection.transaction()?;
        room(&tx, &self.connector, self.retention, now)
    }

    fn put_credential(
        &self,
        principal: &str,
        sealed: &Sealed,
        now: u64,
    ) -> Result<(), LedgerError> {
        credentials::put(&*self.lock()?, &self.connector, principal, sealed, now)
    }

    fn get_credential(&self, principal: &str) -> Result<Option<Sealed>, LedgerError> {
        credentials::get(&*self.lock()?, &self.connector, principal)
    }

    fn reseal_credential(
        &self,
        principal: &str,
        old: &Sealed,
        new: &Sealed,
        now: u64,
    ) -> Result<bool, LedgerError> {
        credentials::reseal(&*self.lock()?, &self.connector, principal, old, new, now)
    }

    fn delete_credential(&self, principal: &str) -> Result<bool, LedgerError> {
        credentials::delete(&*self.lock()?, &self.connector, principal)
    }

    fn put_pending(
        &self,
        flow: &str,
        principal: &str,
        sealed: &Sealed,
        expires: u64,
        now: u64,
    ) -> Result<(), LedgerError> {
        let connector = &self.connector;
        credentials::put_pending(
            &mut *self.lock()?,
            connector,
            flow,
            principal,
            sealed,
            expires,
            now,
        )
    }

    fn take_pending(&self, flow: &str, now: u64) -> Result<Option<(String, Sealed)>, LedgerError> {
        credentials::take_pending(&mut *self.lock()?, &self.connector, flow, now)
    }

    fn key_uses(&self, now: u64) -> Result<Vec<KeyUse>, LedgerError> {
        credentials::key_uses(&*self.lock()?, &self.connector, now)
    }

    fn keep_key_check(&self, check: &Sealed) -> Result<Sealed, LedgerError> {
        credentials::keep_key_check(&*self.lock()?, &self.connector, check)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEEP_ALL: Retention = Retention {
        window: u64::MAX,
        consent: u64::MAX,
        max_bytes: u64::MAX,
        receipts: 0,
    };

    /// The principal the suite's claims use, for every tool: the old rows become theirs.
    fn adopt() -> BTreeMap<String, String> {
        BTreeMap::from([("createVideo".to_string(), "p".to_string())])
    }

    fn claim<'a>(hash: &'a str, nonce: Option<&'a str>, now: u64) -> Claim<'a> {
        Claim {
            tool: "createVideo",
            args_hash: hash,
            principal: "p",
            nonce,
            now,
            since: now.saturating_sub(100),
            busy: &[],
            receipt: None,
            tallies: &[],
        }
    }

    fn insert(key: &str, nonce: Option<&str>) -> impl FnMut(&Found) -> Decision {
        let key = key.to_string();
        let nonce = nonce.map(str::to_string);
        move |_| Decision::Insert {
            key: key.clone(),
            nonce: nonce.clone(),
        }
    }

    #[test]
    fn a_claim_is_on_disk_before_it_returns_and_survives_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("l.sqlite3");
        {
            let ledger = SqliteLedger::open(&path, "test", KEEP_ALL, &adopt()).unwrap();
            let (_, row) = ledger
                .claim(
                    &claim("h", Some("n1"), 1_000),
                    &mut insert("k1", Some("n1")),
                )
                .unwrap();
            assert_eq!(row.unwrap().status, Status::Pending);
            // No finish: as if the process died while the request was out.
        }
        let ledger = SqliteLedger::open(&path, "test", KEEP_ALL, &adopt()).unwrap();
        let (found, _) = ledger
            .claim(&claim("h", None, 1_050), &mut |_| Decision::Nothing)
            .unwrap();
        let latest = found.latest.unwrap();
        assert_eq!(
            (latest.key.as_str(), latest.status),
            ("k1", Status::Pending)
        );
        // Found again by its id, as a task after a restart; no other id is a row.
        assert_eq!(ledger.entry(latest.id, "p").unwrap(), Some(latest.clone()));
        assert_eq!(ledger.entry(latest.id + 1, "p").unwrap(), None);
    }

    #[test]
    fn finish_records_the_outcome_and_the_window_forgets_old_rows() {
        let ledger = SqliteLedger::in_memory().unwrap();
        let (_, row) = ledger
            .claim(&claim("h", None, 1_000), &mut insert("k1", None))
            .unwrap();
        let id = row.unwrap().id;
        let outcome = Outcome {
            status: Status::Job,
            http_status: Some(202),
            job_id: Some("job_1".into()),
            result: Some("{\"id\":\"job_1\"}".into()),
            media_type: Some("application/json".into()),
        };
        ledger.finish(id, &outcome, 1_001).unwrap();
        let (found, _) = ledger
            .claim(&claim("h", None, 1_050), &mut |_| Decision::Nothing)
            .unwrap();
        let latest = found.latest.unwrap();
        assert_eq!(latest.status, Status::Job);
        assert_eq!(latest.job_id.as_deref(), Some("job_1"));
        let (found, _) = ledger
            .claim(&claim("h", None, 1_101), &mut |_| Decision::Nothing)
            .unwrap();
        assert!(found.latest.is_none(), "outside the window");
        let (found, _) = ledger
            .claim(&claim("other", None, 1_050), &mut |_| Decision::Nothing)
            .unwrap();
        assert!(found.latest.is_none(), "other arguments");
    }

    #[test]
    fn rejected_rows_are_not_retried_and_nonces_are_found_at_any_age() {
        let ledger = SqliteLedger::in_memory().unwrap();
        let (_, row) = ledger
            .claim(&claim("h", Some("n"), 1_000), &mut insert("k", Some("n")))
            .unwrap();
        let rejected = Outcome {
            status: Status::Rejected,
            http_status: Some(400),
            job_id: None,
            result: None,
            media_type: None,
        };
        ledger.finish(row.unwrap().id, &rejected, 1_000).unwrap();
        let (found, _) = ledger
            .claim(&claim("h", Some("n"), 5_000), &mut |_| Decision::Nothing)
            .unwrap();
        assert!(found.latest.is_none());
        assert_eq!(found.by_nonce.unwrap().status, Status::Rejected);
    }

    #[test]
    fn a_ledger_from_before_media_types_gains_the_column_and_keeps_its_rows() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.sqlite3");
        {
            // The schema as it was before `media_type`, with one answered row.
            let old = Connection::open(&path).unwrap();
            old.execute_batch(&SCHEMA.replace(",\n    media_type TEXT", ""))
                .unwrap();
            old.execute(
                "INSERT INTO calls (tool, args_hash, key, status, http_status, result, created, \
                 updated) VALUES ('createVideo', 'h', 'k1', 'done', 200, '{}', 1000, 1000)",
                [],
            )
            .unwrap();
        }
        let ledger = SqliteLedger::open(&path, "test", KEEP_ALL, &adopt()).unwrap();
        let (found, _) = ledger
            .claim(&claim("h", None, 1_050), &mut |_| Decision::Nothing)
            .unwrap();
        let old = found.latest.unwrap();
        assert_eq!((old.result.as_deref(), old.media_type), (Some("{}"), None));
        let outcome = Outcome {
            status: Status::Done,
            http_status: Some(200),
            job_id: None,
            result: Some("SUQz".into()),
            media_type: Some("audio/mpeg".into()),
        };
        ledger.finish(old.id, &outcome, 1_060).unwrap();
        let (found, _) = ledger
            .claim(&claim("h", None, 1_070), &mut |_| Decision::Nothing)
            .unwrap();
        assert_eq!(
            found.latest.unwrap().media_type.as_deref(),
            Some("audio/mpeg")
        );
    }

    #[test]
    fn a_nonce_names_one_row_only() {
        let ledger = SqliteLedger::in_memory().unwrap();
        ledger
            .claim(&claim("h", Some("n"), 1_000), &mut insert("k1", Some("n")))
            .unwrap();
        let second = ledger.claim(&claim("h", Some("n"), 1_000), &mut insert("k2", Some("n")));
        assert!(second.is_err(), "the unique nonce refuses a second row");
    }

    #[test]
    fn retry_counts_attempts_and_keeps_the_key() {
        let ledger = SqliteLedger::in_memory().unwrap();
        let (_, row) = ledger
            .claim(&claim("h", None, 1_000), &mut insert("k1", None))
            .unwrap();
        let id = row.unwrap().id;
        let (_, row) = ledger
            .claim(&claim("h", None, 1_010), &mut |_| Decision::Retry(id))
            .unwrap();
        let row = row.unwrap();
        assert_eq!(
            (row.key.as_str(), row.attempts, row.updated),
            ("k1", 2, 1_010)
        );
    }

    /// A claim of call `hash` at `now`, pruning as the server does with `busy` being sent.
    fn at<'a>(hash: &'a str, now: u64, window: u64, busy: &'a [i64]) -> Claim<'a> {
        Claim {
            tool: "createVideo",
            args_hash: hash,
            principal: "p",
            nonce: None,
            now,
            since: now.saturating_sub(window),
            busy,
            receipt: None,
            tallies: &[],
        }
    }

    fn done(body: usize) -> Outcome {
        Outcome {
            status: Status::Done,
            http_status: Some(200),
            job_id: None,
            result: Some("x".repeat(body)),
            media_type: None,
        }
    }

    fn rows(ledger: &SqliteLedger) -> i64 {
        let connection = ledger.lock().unwrap();
        connection
            .query_row("SELECT COUNT(*) FROM calls", [], |row| row.get(0))
            .unwrap()
    }

    /// Issue 30: "the ledger is never pruned (300 calls → 300 MB, even with
    /// `--retry-window 1`)". 300 distinct calls, each answered with 64 KiB, two seconds
    /// apart by the claims' own clock, under a one-second window: only the rows that can
    /// still decide a call stay, and the file stays small (19 MB of answers went through).
    #[test]
    fn rows_past_the_window_are_pruned_and_the_file_stays_small() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("l.sqlite3");
        let retention = Retention {
            window: 1,
            consent: 600,
            max_bytes: 64 << 20,
            receipts: 0,
        };
        let ledger = SqliteLedger::open(&path, "test", retention, &BTreeMap::new()).unwrap();
        let mut largest = 0;
        for i in 0..300_u64 {
            let hash = format!("h{i}");
            let now = 1_000 + 2 * i;
            let (_, row) = ledger
                .claim(&at(&hash, now, 1, &[]), &mut insert(&hash, None))
                .unwrap();
            ledger
                .finish(row.unwrap().id, &done(64 << 10), now)
                .unwrap();
            largest = largest.max(rows(&ledger));
            let file = std::fs::metadata(&path).unwrap().len();
            let wal = std::fs::metadata(dir.path().join("l.sqlite3-wal")).map_or(0, |m| m.len());
            assert!(file < 2 << 20, "call {i}: the ledger file is {file} bytes");
            assert!(wal < 8 << 20, "call {i}: the WAL is {wal} bytes");
        }
        assert_eq!(
            largest, 1,
            "only the call just made: the one before is out of the window"
        );
        // A row made under a consent nonce outlives the window as long as the value does.
        let (_, row) = ledger
            .claim(
                &Claim {
                    nonce: Some("n"),
                    ..at("paid", 5_000, 1, &[])
                },
                &mut insert("k", Some("n")),
            )
            .unwrap();
        ledger.finish(row.unwrap().id, &done(10), 5_000).unwrap();
        let (found, _) = ledger
            .claim(
                &Claim {
                    nonce: Some("n"),
                    ..at("paid", 5_599, 1, &[])
                },
                &mut |_| Decision::Nothing,
            )
            .unwrap();
        assert_eq!(found.by_nonce.unwrap().status, Status::Done);
        let (found, _) = ledger
            .claim(
                &Claim {
                    nonce: Some("n"),
                    ..at("paid", 5_601, 1, &[])
                },
                &mut |_| Decision::Nothing,
            )
            .unwrap();
        assert!(found.by_nonce.is_none(), "no value naming it can open now");
    }

    #[test]
    fn a_row_being_sent_is_never_pruned() {
        let ledger = SqliteLedger::open(
            &tempfile::tempdir().unwrap().path().join("l.sqlite3"),
            "test",
            Retention {
                window: 1,
                consent: 1,
                max_bytes: 1 << 20,
                receipts: 0,
            },
            &BTreeMap::new(),
        )
        .unwrap();
        let (_, row) = ledger
            .claim(&at("slow", 1_000, 1, &[]), &mut insert("k", None))
            .unwrap();
        let id = row.unwrap().id;
        ledger
            .claim(&at("other", 2_000, 1, &[id]), &mut |_| Decision::Nothing)
            .unwrap();
        ledger.finish(id, &done(10), 2_000).unwrap();
        ledger
            .claim(&at("other", 3_000, 1, &[]), &mut |_| Decision::Nothing)
            .unwrap();
        let e = ledger.finish(id, &done(10), 3_000).unwrap_err().to_string();
        assert!(e.contains("no longer in the ledger"), "{e}");
    }

    /// At the bound a new logical request is refused, with when room comes back; the
    /// rows already there still decide their calls (a retry is counted, nothing is
    /// forgotten), and an answer that would not fit is recorded without its body.
    #[test]
    fn a_full_ledger_refuses_new_requests_and_forgets_nothing() {
        let ledger = SqliteLedger::open(
            &tempfile::tempdir().unwrap().path().join("l.sqlite3"),
            "test",
            Retention {
                window: 3_600,
                consent: 600,
                max_bytes: 3 * ROW_BYTES + 100,
                receipts: 0,
            },
            &BTreeMap::new(),
        )
        .unwrap();
        let mut ids = Vec::new();
        for (i, hash) in ["a", "b", "c"].into_iter().enumerate() {
            let (_, row) = ledger
                .claim(
                    &at(hash, 1_000 + i as u64, 3_600, &[]),
                    &mut insert(hash, None),
                )
                .unwrap();
            ids.push(row.unwrap().id);
        }
        let e = ledger
            .claim(&at("d", 1_010, 3_600, &[]), &mut insert("d", None))
            .unwrap_err();
        assert!(
            matches!(
                e,
                LedgerError::Full {
                    rows: 3,
                    wait: 3_590,
                    ..
                }
            ),
            "{e:?}"
        );
        assert!(e.to_string().contains("--ledger-max-bytes"), "{e}");
        // The answer of 200 bytes does not fit in the 100 left: recorded without it.
        ledger.finish(ids[0], &done(200), 1_011).unwrap();
        ledger.finish(ids[1], &done(50), 1_011).unwrap();
        let (found, row) = ledger
            .claim(&at("a", 1_020, 3_600, &[]), &mut |_| Decision::Nothing)
            .unwrap();
        assert!(row.is_none());
        let a = found.latest.unwrap();
        assert_eq!((a.status, a.result), (Status::Done, None));
        let (found, _) = ledger
            .claim(&at("b", 1_020, 3_600, &[]), &mut |_| Decision::Nothing)
            .unwrap();
        assert_eq!(found.latest.unwrap().result.map(|r| r.len()), Some(50));
        let (_, row) = ledger
            .claim(&at("c", 1_030, 3_600, &[]), &mut |_| {
                Decision::Retry(ids[2])
            })
            .unwrap();
        assert_eq!(row.unwrap().attempts, 2);
        // Past the window the rows go, and new requests are taken again.
        ledger
            .claim(&at("d", 1_000 + 3_700, 3_600, &[]), &mut insert("d", None))
            .unwrap();
        assert_eq!(rows(&ledger), 1);
    }

    #[test]
    fn a_ledger_made_before_rows_counted_their_size_is_migrated() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("l.sqlite3");
        {
            let old = Connection::open(&path).unwrap();
            old.execute_batch(
                "CREATE TABLE calls (id INTEGER PRIMARY KEY, tool TEXT NOT NULL, \
                 args_hash TEXT NOT NULL, key TEXT NOT NULL, nonce TEXT UNIQUE, \
                 status TEXT NOT NULL, http_status INTEGER, job_id TEXT, result TEXT, \
                 created INTEGER NOT NULL, updated INTEGER NOT NULL, \
                 attempts INTEGER NOT NULL DEFAULT 1); \
                 INSERT INTO calls (tool, args_hash, key, status, result, created, updated) \
                 VALUES ('createVideo', 'h', 'k', 'done', 'abcd', 1000, 1000);",
            )
            .unwrap();
        }
        let ledger = SqliteLedger::open(&path, "test", KEEP_ALL, &adopt()).unwrap();
        let connection = ledger.lock().unwrap();
        let bytes: i64 = connection
            .query_row("SELECT bytes FROM calls", [], |row| row.get(0))
            .unwrap();
        assert_eq!(bytes, 4);
    }

    /// Issue 33: rows keyed by connector and principal, with a migration for existing
    /// ledgers. A ledger from before gets both columns; its rows become the principal
    /// each tool is served with now, and no other credential sees them.
    #[test]
    fn a_ledger_from_before_principals_is_partitioned_and_adopted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("l.sqlite3");
        {
            let old = Connection::open(&path).unwrap();
            old.execute_batch(SCHEMA).unwrap();
            old.execute_batch(
                "INSERT INTO calls (tool, args_hash, key, nonce, status, created, updated) \
                 VALUES ('createVideo', 'h', 'k', 'n', 'job', 1000, 1000);",
            )
            .unwrap();
        }
        let ledger = SqliteLedger::open(&path, "test", KEEP_ALL, &adopt()).unwrap();
        let mine = ledger
            .claim(&claim("h", Some("n"), 1_050), &mut |_| Decision::Nothing)
            .unwrap()
            .0;
        assert_eq!(mine.by_nonce.unwrap().key, "k");
        let theirs = Claim {
            principal: "someone else",
            ..claim("h", Some("n"), 1_050)
        };
        let (found, row) = ledger.claim(&theirs, &mut insert("k2", Some("n"))).unwrap();
        assert!(found.by_nonce.is_none() && found.latest.is_none());
        assert_eq!(
            row.unwrap().key,
            "k2",
            "the same nonce, another principal's row"
        );
        let version: i64 = ledger
            .lock()
            .unwrap()
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(version, 6);
        drop(ledger);
        // Opened again: migrated once, nothing changes.
        let again = SqliteLedger::open(&path, "test", KEEP_ALL, &BTreeMap::new()).unwrap();
        assert_eq!(rows(&again), 2);
    }
}
