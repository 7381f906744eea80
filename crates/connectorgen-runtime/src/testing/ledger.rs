//! One paid call's ledger steps on either store, for the ledger benchmark
//! (`examples/ledger_bench.rs` in this crate), in the order `serve` makes them for a call
//! that needs consent: the claim that finds nothing and asks, the room check before the
//! person is asked, the claim under the consent nonce that records the call, its outcome,
//! and the end of its send.
//!
//! Takes: a store (a SQLite file, or a PostgreSQL URL) and call numbers, each a logical
//! request of its own. Returns: whether the call went through, and on PostgreSQL the
//! round trips its ledger made. Must never: be reached by `serve` or `probe`.

use std::collections::BTreeMap;
use std::path::Path;

use crate::ledger::{
    Claim, Decision, Ledger, LedgerError, Outcome, PgLedger, Retention, SqliteLedger, Status,
};

/// The connector the benchmark's rows belong to.
pub const CONNECTOR: &str = "bench";

/// Whose calls they are (a credential's identity is a SHA-256 in hex).
const PRINCIPAL: &str = "5e5f1f0b6a7c43f1a1d0c0ffee0000000000000000000000000000000000beef";

/// Rows stay for the whole run, and the bound never refuses one.
const RETENTION: Retention = Retention {
    window: 3_600,
    consent: 600,
    max_bytes: 1 << 34,
    receipts: 0,
};

/// A ledger opened for the benchmark.
pub struct PaidCalls {
    store: Store,
}

enum Store {
    Sqlite(SqliteLedger),
    Postgres(Box<PgLedger>),
}

impl PaidCalls {
    /// The ledger in the SQLite file `path` (made when missing).
    pub fn sqlite(path: &Path) -> Result<PaidCalls, String> {
        let ledger = SqliteLedger::open(path, CONNECTOR, RETENTION, &BTreeMap::new())
            .map_err(|e| e.to_string())?;
        Ok(PaidCalls {
            store: Store::Sqlite(ledger),
        })
    }

    /// The ledger in the PostgreSQL database at `url`: one connection, as one `serve`
    /// instance has.
    pub fn postgres(url: &str) -> Result<PaidCalls, String> {
        let ledger = PgLedger::open(url, CONNECTOR, RETENTION, 60).map_err(|e| e.to_string())?;
        Ok(PaidCalls {
            store: Store::Postgres(Box::new(ledger)),
        })
    }

    fn ledger(&self) -> &dyn Ledger {
        match &self.store {
            Store::Sqlite(ledger) => ledger,
            Store::Postgres(ledger) => &**ledger,
        }
    }

    /// The paid call number `n` (a logical request no other number makes), at `now`.
    pub fn call(&self, n: u64, now: u64) -> Result<(), String> {
        let ledger = self.ledger();
        let hash = format!("{n:064x}");
        let nonce = format!("nonce-{n}");
        let mut claim = Claim {
            tool: "createVideo",
            args_hash: &hash,
            principal: PRINCIPAL,
            nonce: None,
            now,
            since: now.saturating_sub(RETENTION.window),
            busy: &[],
            receipt: None,
            tallies: &[],
        };
        let error = |e: LedgerError| e.to_string();
        // The first claim finds no row: the person is asked (nothing written).
        let (found, _) = ledger
            .claim(&claim, &mut |_| Decision::Nothing)
            .map_err(error)?;
        if found.latest.is_some() {
            return Err(format!("call {n} was made before"));
        }
        ledger.room(now).map_err(error)?;
        claim.nonce = Some(&nonce);
        let key = format!("key-{n}");
        let (_, row) = ledger
            .claim(&claim, &mut |_| Decision::Insert {
                key: key.clone(),
                nonce: Some(nonce.clone()),
            })
            .map_err(error)?;
        let row = row.ok_or_else(|| format!("call {n} was not recorded"))?;
        let outcome = Outcome {
            status: Status::Done,
            http_status: Some(200),
            job_id: None,
            result: Some(format!("{{\"id\":\"vid_{n}\"}}")),
            media_type: Some("application/json".into()),
        };
        ledger.finish(row.id, &outcome, now).map_err(error)?;
        ledger.release(row.id);
        Ok(())
    }

    /// The round trips to PostgreSQL this ledger made so far (`None` on SQLite).
    pub fn round_trips(&self) -> Option<u64> {
        match &self.store {
            Store::Sqlite(_) => None,
            Store::Postgres(ledger) => Some(ledger.round_trips()),
        }
    }
}

/// `rows` answered calls of other logical requests, written straight into the SQLite
/// file (the counters' triggers count them), made at `now`.
pub fn fill_sqlite(path: &Path, rows: u64, now: u64) -> Result<(), String> {
    let connection = rusqlite::Connection::open(path).map_err(|e| e.to_string())?;
    connection
        .execute(
            &format!(
                "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1) \
                 INSERT INTO calls (connector, principal, tool, args_hash, key, nonce, status, \
                 http_status, result, created, updated, media_type, bytes) \
                 SELECT '{CONNECTOR}', '{PRINCIPAL}', 'createVideo', printf('fill%060d', i), \
                 'fill-key-' || i, 'fill-nonce-' || i, 'done', 200, '{{\"id\":\"vid\"}}', ?2, ?2, \
                 'application/json', 12 FROM n"
            ),
            rusqlite::params![
                i64::try_from(rows).unwrap_or(i64::MAX),
                i64::try_from(now).unwrap_or(i64::MAX)
            ],
        )
        .map_err(|e| e.to_string())?;
    Ok(())
}

/// The same for the PostgreSQL database at `url` of `cluster`.
pub fn fill_postgres(
    cluster: &super::postgres::Cluster,
    url: &str,
    rows: u64,
    now: u64,
) -> Result<(), String> {
    cluster.sql(
        url,
        &format!(
            "INSERT INTO connectorgen_calls (connector, principal, tool, args_hash, key, nonce, \
             status, http_status, result, created, updated, media_type, bytes) \
             SELECT '{CONNECTOR}', '{PRINCIPAL}', 'createVideo', 'fill' || lpad(i::text, 60, '0'), \
             'fill-key-' || i, 'fill-nonce-' || i, 'done', 200, '{{\"id\":\"vid\"}}', {now}, {now}, \
             'application/json', 12 FROM generate_series(1, {rows}) AS i; ANALYZE connectorgen_calls"
        ),
    );
    Ok(())
}
