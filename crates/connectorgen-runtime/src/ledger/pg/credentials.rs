//! People's sealed credentials in the PostgreSQL ledger (issue 46): the tables of
//! migration 5 and the statements of `Ledger`'s credential methods, prepared once per
//! connection beside the calls' (`Session::new`).
//!
//! Takes: a session, the connector, and what the trait's methods take. Returns: what
//! `ledger.rs` says each returns.
//! Must never: hold a plaintext (the rows come sealed by `vault`), prune a credential
//! (only `delete_credential` removes one), or return a pending row twice or past its
//! expiry — a take is one `DELETE … RETURNING`, so of two instances taking one flow, the
//! second waits on the row and then finds it gone.

use tokio_postgres::{Client, Row, Statement};

use super::{Session, seconds};
use crate::ledger::LedgerError;
use crate::vault::{KeyUse, Sealed};

/// Version 5: a credential per connector and principal, kept until deleted; the pending
/// state of a connection in progress, by its flow id, until it expires; a check value per
/// key id.
pub(super) const MIGRATION: &str = "
CREATE TABLE connectorgen_credentials (
    connector TEXT NOT NULL,
    principal TEXT NOT NULL,
    key_id TEXT NOT NULL,
    nonce BYTEA NOT NULL,
    ciphertext BYTEA NOT NULL,
    updated BIGINT NOT NULL,
    PRIMARY KEY (connector, principal)
);
CREATE TABLE connectorgen_pending_credentials (
    connector TEXT NOT NULL,
    flow TEXT NOT NULL,
    principal TEXT NOT NULL,
    key_id TEXT NOT NULL,
    nonce BYTEA NOT NULL,
    ciphertext BYTEA NOT NULL,
    expires BIGINT NOT NULL,
    PRIMARY KEY (connector, flow)
);
CREATE INDEX connectorgen_pending_credentials_by_expiry
    ON connectorgen_pending_credentials (connector, expires);
CREATE TABLE connectorgen_credential_keys (
    connector TEXT NOT NULL,
    key_id TEXT NOT NULL,
    nonce BYTEA NOT NULL,
    ciphertext BYTEA NOT NULL,
    PRIMARY KEY (connector, key_id)
);
";

/// The credential methods' statements, prepared once per connection.
pub(super) struct Statements {
    put: Statement,
    get: Statement,
    reseal: Statement,
    delete: Statement,
    prune: Statement,
    put_pending: Statement,
    take_pending: Statement,
    key_uses: Statement,
    keep_check: Statement,
    check: Statement,
}

impl Statements {
    pub(super) async fn prepare(client: &Client) -> Result<Statements, tokio_postgres::Error> {
        let texts = [
            "INSERT INTO connectorgen_credentials (connector, principal, key_id, nonce, \
             ciphertext, updated) VALUES ($1, $2, $3, $4, $5, $6) \
             ON CONFLICT (connector, principal) DO UPDATE SET key_id = EXCLUDED.key_id, \
             nonce = EXCLUDED.nonce, ciphertext = EXCLUDED.ciphertext, \
             updated = EXCLUDED.updated",
            "SELECT key_id, nonce, ciphertext FROM connectorgen_credentials \
             WHERE connector = $1 AND principal = $2",
            "UPDATE connectorgen_credentials SET key_id = $4, nonce = $5, ciphertext = $6, \
             updated = $7 WHERE connector = $1 AND principal = $2 AND nonce = $3 \
             RETURNING principal",
            "DELETE FROM connectorgen_credentials WHERE connector = $1 AND principal = $2 \
             RETURNING principal",
            "DELETE FROM connectorgen_pending_credentials WHERE connector = $1 \
             AND expires <= $2",
            "INSERT INTO connectorgen_pending_credentials (connector, flow, principal, key_id, \
             nonce, ciphertext, expires) VALUES ($1, $2, $3, $4, $5, $6, $7)",
            "DELETE FROM connectorgen_pending_credentials WHERE connector = $1 AND flow = $2 \
             AND expires > $3 RETURNING principal, key_id, nonce, ciphertext",
            "WITH used (key_id) AS (\
                 SELECT key_id FROM connectorgen_credentials WHERE connector = $1 \
                 UNION ALL SELECT key_id FROM connectorgen_pending_credentials \
                 WHERE connector = $1 AND expires > $2), \
             ids (key_id) AS (\
                 SELECT key_id FROM used UNION SELECT key_id \
                 FROM connectorgen_credential_keys WHERE connector = $1) \
             SELECT ids.key_id, (SELECT COUNT(*) FROM used WHERE used.key_id = ids.key_id), \
                 k.key_id, k.nonce, k.ciphertext \
             FROM ids LEFT JOIN connectorgen_credential_keys AS k \
                 ON k.connector = $1 AND k.key_id = ids.key_id \
             ORDER BY ids.key_id",
            "INSERT INTO connectorgen_credential_keys (connector, key_id, nonce, ciphertext) \
             VALUES ($1, $2, $3, $4) ON CONFLICT (connector, key_id) DO NOTHING",
            "SELECT key_id, nonce, ciphertext FROM connectorgen_credential_keys \
             WHERE connector = $1 AND key_id = $2",
        ];
        // Prepared together: one round trip.
        let prepared = futures_util::future::join_all(texts.iter().map(|t| client.prepare(t)))
            .await
            .into_iter()
            .collect::<Result<Vec<_>, _>>()?;
        let Ok(
            [
                put,
                get,
                reseal,
                delete,
                prune,
                put_pending,
                take_pending,
                key_uses,
                keep_check,
                check,
            ],
        ) = <[Statement; 10]>::try_from(prepared)
        else {
            unreachable!("one statement prepared for each text");
        };
        Ok(Statements {
            put,
            get,
            reseal,
            delete,
            prune,
            put_pending,
            take_pending,
            key_uses,
            keep_check,
            check,
        })
    }
}

fn sealed(row: &Row, at: usize) -> Sealed {
    Sealed {
        key_id: row.get(at),
        nonce: row.get(at + 1),
        ciphertext: row.get(at + 2),
    }
}

pub(super) fn put(
    session: &Session,
    connector: &str,
    principal: &str,
    sealed: &Sealed,
    now: u64,
) -> Result<(), LedgerError> {
    let now = seconds(now);
    session.one(
        &session.credentials.put,
        &[
            &connector,
            &principal,
            &sealed.key_id,
            &sealed.nonce,
            &sealed.ciphertext,
            &now,
        ],
    )?;
    Ok(())
}

pub(super) fn get(
    session: &Session,
    connector: &str,
    principal: &str,
) -> Result<Option<Sealed>, LedgerError> {
    let rows = session.one(&session.credentials.get, &[&connector, &principal])?;
    Ok(rows.first().map(|row| sealed(row, 0)))
}

pub(super) fn reseal(
    session: &Session,
    connector: &str,
    principal: &str,
    old: &Sealed,
    new: &Sealed,
    now: u64,
) -> Result<bool, LedgerError> {
    let now = seconds(now);
    let rows = session.one(
        &session.credentials.reseal,
        &[
            &connector,
            &principal,
            &old.nonce,
            &new.key_id,
            &new.nonce,
            &new.ciphertext,
            &now,
        ],
    )?;
    Ok(!rows.is_empty())
}

pub(super) fn delete(
    session: &Session,
    connector: &str,
    principal: &str,
) -> Result<bool, LedgerError> {
    let rows = session.one(&session.credentials.delete, &[&connector, &principal])?;
    Ok(!rows.is_empty())
}

pub(super) fn put_pending(
    session: &Session,
    connector: &str,
    flow: &str,
    principal: &str,
    sealed: &Sealed,
    expires: u64,
    now: u64,
) -> Result<(), LedgerError> {
    let s = &session.credentials;
    let (expires, now) = (seconds(expires), seconds(now));
    // The prune and the insert sent together: one round trip, each its own statement
    // (the insert does not depend on the prune having run).
    for answer in session.pipeline(&[
        (&s.prune, &[&connector, &now]),
        (
            &s.put_pending,
            &[
                &connector,
                &flow,
                &principal,
                &sealed.key_id,
                &sealed.nonce,
                &sealed.ciphertext,
                &expires,
            ],
        ),
    ]) {
        answer?;
    }
    Ok(())
}

pub(super) fn take_pending(
    session: &Session,
    connector: &str,
    flow: &str,
    now: u64,
) -> Result<Option<(String, Sealed)>, LedgerError> {
    let s = &session.credentials;
    let now = seconds(now);
    let mut answers = session
        .pipeline(&[
            (&s.take_pending, &[&connector, &flow, &now]),
            (&s.prune, &[&connector, &now]),
        ])
        .into_iter();
    let taken = answers.next().unwrap_or_else(|| Ok(Vec::new()))?;
    // A failed prune leaves expired rows for the next one; the take stands.
    Ok(taken.first().map(|row| (row.get(0), sealed(row, 1))))
}

pub(super) fn key_uses(
    session: &Session,
    connector: &str,
    now: u64,
) -> Result<Vec<KeyUse>, LedgerError> {
    let now = seconds(now);
    let rows = session.one(&session.credentials.key_uses, &[&connector, &now])?;
    Ok(rows
        .iter()
        .map(|row| KeyUse {
            key_id: row.get(0),
            rows: u64::try_from(row.get::<_, i64>(1)).unwrap_or(0),
            check: row.get::<_, Option<String>>(2).map(|_| sealed(row, 2)),
        })
        .collect())
}

pub(super) fn keep_key_check(
    session: &Session,
    connector: &str,
    check: &Sealed,
) -> Result<Sealed, LedgerError> {
    let s = &session.credentials;
    let mut answers = session
        .pipeline(&[
            (
                &s.keep_check,
                &[&connector, &check.key_id, &check.nonce, &check.ciphertext],
            ),
            (&s.check, &[&connector, &check.key_id]),
        ])
        .into_iter();
    answers.next().unwrap_or_else(|| Ok(Vec::new()))?;
    let kept = answers.next().unwrap_or_else(|| Ok(Vec::new()))?;
    kept.first()
        .map(|row| sealed(row, 0))
        .ok_or_else(|| LedgerError::Store("the key's check value was not kept".into()))
}
