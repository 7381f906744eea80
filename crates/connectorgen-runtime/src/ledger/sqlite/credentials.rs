//! People's sealed credentials in the SQLite ledger (issue 46): the tables of migration 5
//! and the statements of `Ledger`'s credential methods.
//!
//! Takes: the locked connection, the connector, and what the trait's methods take.
//! Returns: what `ledger.rs` says each returns.
//! Must never: hold a plaintext (the rows come sealed by `vault`), prune a credential
//! (only `delete_credential` removes one), or return a pending row twice or past its
//! expiry.

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use super::seconds;
use crate::ledger::LedgerError;
use crate::vault::{KeyUse, Sealed};

/// Version 5: a credential per connector and principal, kept until deleted; the pending
/// state of a connection in progress, by its flow id, until it expires; a check value per
/// key id.
pub(super) const MIGRATION: &str = "
CREATE TABLE credentials (
    connector TEXT NOT NULL,
    principal TEXT NOT NULL,
    key_id TEXT NOT NULL,
    nonce BLOB NOT NULL,
    ciphertext BLOB NOT NULL,
    updated INTEGER NOT NULL,
    PRIMARY KEY (connector, principal)
);
CREATE TABLE pending_credentials (
    connector TEXT NOT NULL,
    flow TEXT NOT NULL,
    principal TEXT NOT NULL,
    key_id TEXT NOT NULL,
    nonce BLOB NOT NULL,
    ciphertext BLOB NOT NULL,
    expires INTEGER NOT NULL,
    PRIMARY KEY (connector, flow)
);
CREATE INDEX pending_credentials_by_expiry ON pending_credentials (connector, expires);
CREATE TABLE credential_keys (
    connector TEXT NOT NULL,
    key_id TEXT NOT NULL,
    nonce BLOB NOT NULL,
    ciphertext BLOB NOT NULL,
    PRIMARY KEY (connector, key_id)
);
";

fn sealed(row: &rusqlite::Row<'_>, at: usize) -> rusqlite::Result<Sealed> {
    Ok(Sealed {
        key_id: row.get(at)?,
        nonce: row.get(at + 1)?,
        ciphertext: row.get(at + 2)?,
    })
}

pub(super) fn put(
    connection: &Connection,
    connector: &str,
    principal: &str,
    sealed: &Sealed,
    now: u64,
) -> Result<(), LedgerError> {
    connection
        .prepare_cached(
            "INSERT INTO credentials (connector, principal, key_id, nonce, ciphertext, updated) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (connector, principal) DO UPDATE \
             SET key_id = excluded.key_id, nonce = excluded.nonce, \
             ciphertext = excluded.ciphertext, updated = excluded.updated",
        )?
        .execute(params![
            connector,
            principal,
            sealed.key_id,
            sealed.nonce,
            sealed.ciphertext,
            seconds(now)
        ])?;
    Ok(())
}

pub(super) fn get(
    connection: &Connection,
    connector: &str,
    principal: &str,
) -> Result<Option<Sealed>, LedgerError> {
    Ok(connection
        .prepare_cached(
            "SELECT key_id, nonce, ciphertext FROM credentials \
             WHERE connector = ?1 AND principal = ?2",
        )?
        .query_row(params![connector, principal], |row| sealed(row, 0))
        .optional()?)
}

pub(super) fn reseal(
    connection: &Connection,
    connector: &str,
    principal: &str,
    old: &Sealed,
    new: &Sealed,
    now: u64,
) -> Result<bool, LedgerError> {
    let changed = connection
        .prepare_cached(
            "UPDATE credentials SET key_id = ?4, nonce = ?5, ciphertext = ?6, updated = ?7 \
             WHERE connector = ?1 AND principal = ?2 AND nonce = ?3",
        )?
        .execute(params![
            connector,
            principal,
            old.nonce,
            new.key_id,
            new.nonce,
            new.ciphertext,
            seconds(now)
        ])?;
    Ok(changed > 0)
}

pub(super) fn delete(
    connection: &Connection,
    connector: &str,
    principal: &str,
) -> Result<bool, LedgerError> {
    let deleted = connection
        .prepare_cached("DELETE FROM credentials WHERE connector = ?1 AND principal = ?2")?
        .execute(params![connector, principal])?;
    Ok(deleted > 0)
}

/// Deletes the pending rows expired at `now`.
fn prune(connection: &Connection, connector: &str, now: u64) -> Result<(), LedgerError> {
    connection
        .prepare_cached("DELETE FROM pending_credentials WHERE connector = ?1 AND expires <= ?2")?
        .execute(params![connector, seconds(now)])?;
    Ok(())
}

pub(super) fn put_pending(
    connection: &mut Connection,
    connector: &str,
    flow: &str,
    principal: &str,
    sealed: &Sealed,
    expires: u64,
    now: u64,
) -> Result<(), LedgerError> {
    let tx = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
    prune(&tx, connector, now)?;
    tx.prepare_cached(
        "INSERT INTO pending_credentials (connector, flow, principal, key_id, nonce, \
         ciphertext, expires) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?
    .execute(params![
        connector,
        flow,
        principal,
        sealed.key_id,
        sealed.nonce,
        sealed.ciphertext,
        seconds(expires)
    ])?;
    tx.commit()?;
    Ok(())
}

pub(super) fn take_pending(
    connection: &mut Connection,
    connector: &str,
    flow: &str,
    now: u64,
) -> Result<Option<(String, Sealed)>, LedgerError> {
    // One write transaction: the delete that returns the row is the take, so a second
    // take (this process or another on the file) finds it gone.
    let tx = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let taken = tx
        .prepare_cached(
            "DELETE FROM pending_credentials WHERE connector = ?1 AND flow = ?2 \
             AND expires > ?3 RETURNING principal, key_id, nonce, ciphertext",
        )?
        .query_row(params![connector, flow, seconds(now)], |row| {
            Ok((row.get(0)?, sealed(row, 1)?))
        })
        .optional()?;
    prune(&tx, connector, now)?;
    tx.commit()?;
    Ok(taken)
}

pub(super) fn key_uses(
    connection: &Connection,
    connector: &str,
    now: u64,
) -> Result<Vec<KeyUse>, LedgerError> {
    let mut statement = connection.prepare(
        "WITH used (key_id) AS (\
             SELECT key_id FROM credentials WHERE connector = ?1 \
             UNION ALL SELECT key_id FROM pending_credentials \
             WHERE connector = ?1 AND expires > ?2), \
         ids (key_id) AS (\
             SELECT key_id FROM used UNION SELECT key_id FROM credential_keys \
             WHERE connector = ?1) \
         SELECT ids.key_id, (SELECT COUNT(*) FROM used WHERE used.key_id = ids.key_id), \
             k.key_id, k.nonce, k.ciphertext \
         FROM ids LEFT JOIN credential_keys AS k \
             ON k.connector = ?1 AND k.key_id = ids.key_id \
         ORDER BY ids.key_id",
    )?;
    let uses = statement
        .query_map(params![connector, seconds(now)], |row| {
            let check = match row.get::<_, Option<String>>(2)? {
                Some(_) => Some(sealed(row, 2)?),
                None => None,
            };
            Ok(KeyUse {
                key_id: row.get(0)?,
                rows: u64::try_from(row.get::<_, i64>(1)?).unwrap_or(0),
                check,
            })
        })?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(uses)
}

pub(super) fn keep_key_check(
    connection: &Connection,
    connector: &str,
    check: &Sealed,
) -> Result<Sealed, LedgerError> {
    connection.execute(
        "INSERT INTO credential_keys (connector, key_id, nonce, ciphertext) \
         VALUES (?1, ?2, ?3, ?4) ON CONFLICT (connector, key_id) DO NOTHING",
        params![connector, check.key_id, check.nonce, check.ciphertext],
    )?;
    Ok(connection.query_row(
        "SELECT key_id, nonce, ciphertext FROM credential_keys \
         WHERE connector = ?1 AND key_id = ?2",
        params![connector, check.key_id],
        |row| sealed(row, 0),
    )?)
}
