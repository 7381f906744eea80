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
//! A shared store for several instances implements the same trait (see docs/serve.md,
//! "Several instances"); only the embedded SQLite one exists.

use std::path::Path;
use std::sync::Mutex;

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

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
}

impl Status {
    fn as_str(self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::Job => "job",
            Status::Done => "done",
            Status::Rejected => "rejected",
        }
    }

    fn parse(text: &str) -> Status {
        match text {
            "job" => Status::Job,
            "done" => Status::Done,
            "rejected" => Status::Rejected,
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
    /// when its media type is not text (`serve::reply::stored`).
    pub result: Option<String>,
    pub created: u64,
    pub updated: u64,
    pub attempts: u32,
    /// The answer's media type (`Content-Type` as received), so a replay is the same
    /// resource; `None` on rows written before it was kept.
    pub media_type: Option<String>,
}

impl Entry {
    /// The status as stored: `pending`, `job`, `done`, `rejected`.
    pub(crate) fn status_name(&self) -> &'static str {
        self.status.as_str()
    }
}

/// What `claim` looks for.
#[derive(Debug, Clone)]
pub(crate) struct Claim<'a> {
    pub tool: &'a str,
    pub args_hash: &'a str,
    /// The nonce of the consent (token or elicitation) the call comes with.
    pub nonce: Option<&'a str>,
    pub now: u64,
    /// Rows created before this are no longer retries of anything.
    pub since: u64,
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
    /// logical request's consent nonce is derived from it (`consent::Sealer::nonce_for`).
    pub last_id: Option<i64>,
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
#[error("ledger: {0}")]
pub(crate) struct LedgerError(String);

impl From<rusqlite::Error> for LedgerError {
    fn from(e: rusqlite::Error) -> Self {
        LedgerError(e.to_string())
    }
}

/// The store of tracked calls.
pub(crate) trait Ledger: Send + Sync {
    /// Looks up the call and applies `decide` to what was found, as one atomic step
    /// (no other claim, in this process or another on the same store, sees a state in
    /// between). Returns the decision and the row it wrote or counted, if any; the
    /// write is durable when this returns.
    fn claim(
        &self,
        claim: &Claim<'_>,
        decide: &mut dyn FnMut(&Found) -> Decision,
    ) -> Result<(Found, Option<Entry>), LedgerError>;

    /// Records how an attempt ended.
    fn finish(&self, id: i64, outcome: &Outcome, now: u64) -> Result<(), LedgerError>;
}

/// The ledger in one SQLite file.
pub(crate) struct SqliteLedger {
    connection: Mutex<Connection>,
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
    media_type TEXT
);
CREATE INDEX IF NOT EXISTS calls_by_call ON calls (tool, args_hash, created);
";

const COLUMNS: &str = "id, tool, args_hash, key, nonce, status, http_status, job_id, result, created, updated, attempts, media_type";

impl SqliteLedger {
    /// Opens (creating) the ledger file: owner-only, never through a symlink.
    pub(crate) fn open(path: &Path) -> Result<SqliteLedger, LedgerError> {
        crate::state::prepare_ledger(path).map_err(|e| LedgerError(e.to_string()))?;
        let flags = rusqlite::OpenFlags::default() | rusqlite::OpenFlags::SQLITE_OPEN_NOFOLLOW;
        Self::with(Connection::open_with_flags(path, flags)?)
    }

    /// A ledger that lives in memory (tests).
    #[cfg(test)]
    pub(crate) fn in_memory() -> Result<SqliteLedger, LedgerError> {
        Self::with(Connection::open_in_memory()?)
    }

    fn with(connection: Connection) -> Result<SqliteLedger, LedgerError> {
        // WAL with FULL sync: a committed claim survives a crash or power loss, which is
        // the point of recording before sending. busy_timeout lets two processes on one
        // file take turns instead of failing.
        connection.pragma_update(None, "journal_mode", "WAL")?;
        connection.pragma_update(None, "synchronous", "FULL")?;
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
        Ok(SqliteLedger {
            connection: Mutex::new(connection),
        })
    }

    fn lock(&self) -> Result<std::sync::MutexGuard<'_, Connection>, LedgerError> {
        self.connection
            .lock()
            .map_err(|_| LedgerError("a previous ledger operation panicked".into()))
    }
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
    })
}

impl Ledger for SqliteLedger {
    fn claim(
        &self,
        claim: &Claim<'_>,
        decide: &mut dyn FnMut(&Found) -> Decision,
    ) -> Result<(Found, Option<Entry>), LedgerError> {
        let mut connection = self.lock()?;
        let tx = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let by_nonce = match claim.nonce {
            Some(nonce) => tx
                .query_row(
                    &format!("SELECT {COLUMNS} FROM calls WHERE nonce = ?1"),
                    params![nonce],
                    entry,
                )
                .optional()?,
            None => None,
        };
        let latest = tx
            .query_row(
                &format!(
                    "SELECT {COLUMNS} FROM calls WHERE tool = ?1 AND args_hash = ?2 \
                     AND created >= ?3 AND status != 'rejected' ORDER BY created DESC, id DESC LIMIT 1"
                ),
                params![claim.tool, claim.args_hash, seconds(claim.since)],
                entry,
            )
            .optional()?;
        let last_id = tx.query_row(
            "SELECT MAX(id) FROM calls WHERE tool = ?1 AND args_hash = ?2",
            params![claim.tool, claim.args_hash],
            |row| row.get::<_, Option<i64>>(0),
        )?;
        let found = Found {
            by_nonce,
            latest,
            last_id,
        };
        let written = match decide(&found) {
            Decision::Insert { key, nonce } => {
                tx.execute(
                    "INSERT INTO calls (tool, args_hash, key, nonce, status, created, updated) \
                     VALUES (?1, ?2, ?3, ?4, 'pending', ?5, ?5)",
                    params![claim.tool, claim.args_hash, key, nonce, seconds(claim.now)],
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
        let connection = self.lock()?;
        connection.execute(
            "UPDATE calls SET status = ?2, http_status = ?3, job_id = COALESCE(?4, job_id), \
             result = COALESCE(?5, result), updated = ?6, \
             media_type = COALESCE(?7, media_type) WHERE id = ?1",
            params![
                id,
                outcome.status.as_str(),
                outcome.http_status,
                outcome.job_id,
                outcome.result,
                seconds(now),
                outcome.media_type,
            ],
        )?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claim<'a>(hash: &'a str, nonce: Option<&'a str>, now: u64) -> Claim<'a> {
        Claim {
            tool: "createVideo",
            args_hash: hash,
            nonce,
            now,
            since: now.saturating_sub(100),
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
            let ledger = SqliteLedger::open(&path).unwrap();
            let (_, row) = ledger
                .claim(
                    &claim("h", Some("n1"), 1_000),
                    &mut insert("k1", Some("n1")),
                )
                .unwrap();
            assert_eq!(row.unwrap().status, Status::Pending);
            // No finish: as if the process died while the request was out.
        }
        let ledger = SqliteLedger::open(&path).unwrap();
        let (found, _) = ledger
            .claim(&claim("h", None, 1_050), &mut |_| Decision::Nothing)
            .unwrap();
        let latest = found.latest.unwrap();
        assert_eq!(
            (latest.key.as_str(), latest.status),
            ("k1", Status::Pending)
        );
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
        let ledger = SqliteLedger::open(&path).unwrap();
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
}
