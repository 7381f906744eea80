//! People's provider credentials sealed for the ledger (issue 46): each person (a
//! principal) connects a credential of their own — an API key they enter, or OAuth
//! tokens — and the ledger keeps it encrypted, never as text a reader of the database
//! could use.
//!
//! Takes: the key ring (`Keys`, read from an environment value or a key file), the
//! connector's name, the principal and the plaintext. Returns: `Sealed` rows (a key id,
//! a nonce, the ciphertext) for the ledger to keep, and, from them, the plaintext again
//! (`Opened`, wiped when dropped) with whether it was sealed with an older key. At
//! start-up, `check_keys` says whether the ring opens what the ledger holds.
//! Must never: echo key material or a plaintext (in an error, a `Debug`, a log line),
//! open a row under another principal, connector or purpose than it was sealed for, open
//! a row whose key id the ring lacks (fail closed: an error, never a panic), or touch the
//! store itself (the ledger keeps the rows; `ledger::check_credential_keys` runs the
//! start-up check against it).
//!
//! The cipher is XChaCha20-Poly1305 (the `chacha20poly1305` crate): its 24-byte nonce
//! is drawn at random for every seal, which is safe at any number of seals a ledger will
//! ever make (a 96-bit nonce is not). The associated data binds a version tag, the row's
//! purpose, the connector and the principal, each length-prefixed, so a row copied to
//! another principal, connector or table does not open.
//!
//! The key ring (`keys.rs`): the current key first, which seals, then older keys, which
//! only open; read from an environment value or a key file, one `ID:BASE64` a line.
//!
//! The start-up check: the ledger keeps, per key id, a check value sealed with that key
//! (associated data: "key check", the connector, the id). `check_keys` refuses a ring that
//! lacks a key some row is sealed with, or whose key under an id does not open that id's
//! check value (another key under the same name: every row sealed with it would fail to
//! open), and returns the check values to record: the current key's on its first use.

use std::fmt;

use chacha20poly1305::aead::{Aead as _, Generate as _, Payload};
use zeroize::Zeroizing;

mod keys;
#[cfg(test)]
mod tests;

use keys::Key;
pub(crate) use keys::Keys;
#[cfg_attr(
    not(test),
    expect(
        unused_imports,
        reason = "a key is any 32 random bytes (docs/serve.md); only the tests make theirs here"
    )
)]
pub(crate) use keys::new_key_line;

/// The bytes of a nonce (the extended nonce of `XChaCha20`).
const NONCE_BYTES: usize = 24;

/// The largest plaintext sealed: an API key or an OAuth token set is a few KiB at most,
/// and the ledger's rows stay small.
pub(crate) const MAX_PLAINTEXT: usize = 64 << 10;

/// The first part of every associated data: a new layout would be `v2`, and no row sealed
/// under one opens under the other.
const VERSION: &[u8] = b"connectorgen vault v1";

/// What a check value's plaintext is (the tag is what checks; the text is compared too).
const CHECK_TEXT: &[u8] = b"connectorgen credential key check";

/// What a sealed row is for, bound into its associated data: a pending flow's state never
/// opens as a credential, nor the other way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Purpose {
    /// A person's provider credential (`Ledger::put_credential`).
    Credential,
    /// The state of a connection in progress, between the browser's start and its
    /// callback (`Ledger::put_pending`): the PKCE verifier.
    Pending,
}

impl Purpose {
    fn tag(self) -> &'static str {
        match self {
            Purpose::Credential => "credential",
            Purpose::Pending => "pending",
        }
    }
}

/// One sealed value as the ledger keeps it. Nothing in it is secret: without the key
/// named by `key_id` it is noise.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Sealed {
    /// The id of the key it was sealed with.
    pub key_id: String,
    /// 24 random bytes (a stored row of another length does not open).
    pub nonce: Vec<u8>,
    /// The ciphertext and its 16-byte tag.
    pub ciphertext: Vec<u8>,
}

/// A sealed value opened.
pub(crate) struct Opened {
    /// Wiped when dropped.
    pub plaintext: Zeroizing<Vec<u8>>,
    /// Sealed with a key other than the current one: write it back sealed with the
    /// current key (`reseal`) so the older key can be retired.
    pub stale: bool,
}

impl fmt::Debug for Opened {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Opened")
            .field("plaintext", &"<redacted>")
            .field("stale", &self.stale)
            .finish()
    }
}

/// Why a value was not sealed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SealError {
    #[error("a value of {len} bytes is longer than the {MAX_PLAINTEXT} bytes one sealed may be")]
    TooLong { len: usize },
    #[error("no random bytes from the system: {0}")]
    Random(String),
}

/// Why a sealed value did not open. Fail closed: the caller treats it as no credential and
/// says so, never as an empty one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum OpenError {
    #[error("it is sealed with the key `{key_id}`, which {from} does not have")]
    UnknownKey { key_id: String, from: String },
    #[error(
        "it does not open with the key `{key_id}` of {from}: another key under that id, or a \
         row altered or moved to another person, connector or table"
    )]
    Refused { key_id: String, from: String },
}

/// Why the start-up check refused the ring.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum KeyCheckError {
    #[error(
        "{rows} sealed rows in the ledger are sealed with the credential key `{key_id}`, which \
         {from} does not have: put its line back (after the current key) until they are \
         re-sealed or deleted"
    )]
    Missing {
        key_id: String,
        rows: u64,
        from: String,
    },
    #[error(
        "the credential key `{key_id}` in {from} does not open the credentials sealed with \
         it: the ledger's check value for `{key_id}` was sealed with another key under that \
         id (a key generated again, or another deployment's); give the key `{key_id}` was \
         first used with, or a new key under a new id"
    )]
    Wrong { key_id: String, from: String },
    #[error("no random bytes from the system for a check value: {0}")]
    Random(String),
}

/// What the ledger holds of one key id (`Ledger::key_uses`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KeyUse {
    pub key_id: String,
    /// Rows sealed with it: credentials, and pending flows not yet expired.
    pub rows: u64,
    /// Its check value, once recorded.
    pub check: Option<Sealed>,
}

/// The associated data of a row: the version tag, then each part length-prefixed (8
/// bytes, big-endian), so that no two lists of parts make the same bytes.
fn associated(parts: &[&str]) -> Vec<u8> {
    let mut out =
        Vec::with_capacity(VERSION.len() + parts.iter().map(|p| 8 + p.len()).sum::<usize>());
    out.extend_from_slice(VERSION);
    for part in parts {
        out.extend_from_slice(&(part.len() as u64).to_be_bytes());
        out.extend_from_slice(part.as_bytes());
    }
    out
}

fn seal_with(key: &Key, aad: &[u8], plaintext: &[u8]) -> Result<Sealed, SealError> {
    if plaintext.len() > MAX_PLAINTEXT {
        return Err(SealError::TooLong {
            len: plaintext.len(),
        });
    }
    let nonce =
        chacha20poly1305::XNonce::try_generate().map_err(|e| SealError::Random(e.to_string()))?;
    let ciphertext = key
        .cipher
        .encrypt(
            &nonce,
            Payload {
                msg: plaintext,
                aad,
            },
        )
        // Only a plaintext or associated data past 256 GiB fails, far over the bound.
        .map_err(|_| SealError::TooLong {
            len: plaintext.len(),
        })?;
    Ok(Sealed {
        key_id: key.id.clone(),
        nonce: nonce.to_vec(),
        ciphertext,
    })
}

fn open_with(keys: &Keys, aad: &[u8], sealed: &Sealed) -> Result<Zeroizing<Vec<u8>>, OpenError> {
    let Some(key) = keys.find(&sealed.key_id) else {
        return Err(OpenError::UnknownKey {
            key_id: sealed.key_id.clone(),
            from: keys.from.clone(),
        });
    };
    let refused = || OpenError::Refused {
        key_id: sealed.key_id.clone(),
        from: keys.from.clone(),
    };
    let nonce =
        chacha20poly1305::XNonce::try_from(sealed.nonce.as_slice()).map_err(|_| refused())?;
    debug_assert_eq!(nonce.len(), NONCE_BYTES);
    key.cipher
        .decrypt(
            &nonce,
            Payload {
                msg: &sealed.ciphertext,
                aad,
            },
        )
        .map(Zeroizing::new)
        .map_err(|_| refused())
}

/// `plaintext` sealed with the current key, for `principal` on `connector`, for `purpose`.
pub(crate) fn seal(
    keys: &Keys,
    purpose: Purpose,
    connector: &str,
    principal: &str,
    plaintext: &[u8],
) -> Result<Sealed, SealError> {
    let aad = associated(&[purpose.tag(), connector, principal]);
    seal_with(keys.current(), &aad, plaintext)
}

/// `sealed` opened, if it was sealed for this `purpose`, `connector` and `principal` with a
/// key of the ring and not altered since.
pub(crate) fn open(
    keys: &Keys,
    purpose: Purpose,
    connector: &str,
    principal: &str,
    sealed: &Sealed,
) -> Result<Opened, OpenError> {
    let aad = associated(&[purpose.tag(), connector, principal]);
    let plaintext = open_with(keys, &aad, sealed)?;
    Ok(Opened {
        plaintext,
        stale: sealed.key_id != keys.current_id(),
    })
}

/// The row to write back when `opened` came from an older key: its plaintext sealed with
/// the current key (`Ledger::reseal_credential` writes it only over the row it came from).
/// `None` when it is sealed with the current key already.
pub(crate) fn reseal(
    keys: &Keys,
    purpose: Purpose,
    connector: &str,
    principal: &str,
    opened: &Opened,
) -> Result<Option<Sealed>, SealError> {
    if !opened.stale {
        return Ok(None);
    }
    seal(keys, purpose, connector, principal, &opened.plaintext).map(Some)
}

fn check_aad(connector: &str, key_id: &str) -> Vec<u8> {
    associated(&["key check", connector, key_id])
}

/// Whether `check`, a check value the ledger keeps, opens with the ring's key of its id.
fn opens(keys: &Keys, connector: &str, check: &Sealed) -> bool {
    open_with(keys, &check_aad(connector, &check.key_id), check)
        .is_ok_and(|text| text.as_slice() == CHECK_TEXT)
}

/// The start-up check of the ring against what the ledger holds of `connector` (`uses`):
/// every key id some row is sealed with must be in the ring, and every check value of a
/// key in the ring must open with it. Returns the check values to record
/// (`Ledger::keep_key_check`, then `confirm_check` on what was kept): the current key's on
/// its first use, and that of a key in use that has none. A check value of a key no longer
/// in the ring and no longer sealing any row is a retired key's, and is left alone.
pub(crate) fn check_keys(
    keys: &Keys,
    connector: &str,
    uses: &[KeyUse],
) -> Result<Vec<Sealed>, KeyCheckError> {
    let mut record = Vec::new();
    for used in uses {
        let Some(key) = keys.find(&used.key_id) else {
            if used.rows > 0 {
                return Err(KeyCheckError::Missing {
                    key_id: used.key_id.clone(),
                    rows: used.rows,
                    from: keys.from.clone(),
                });
            }
            continue;
        };
        match &used.check {
            Some(check) => confirm_check(keys, connector, check)?,
            None if used.rows > 0 => record.push(check_value(key, connector)?),
            None => {}
        }
    }
    let current = keys.current();
    if !uses
        .iter()
        .any(|u| u.key_id == current.id && (u.check.is_some() || u.rows > 0))
    {
        record.push(check_value(current, connector)?);
    }
    Ok(record)
}

/// `Ok` when `check`, the check value the ledger kept for its key id, opens with the ring's
/// key of that id (another instance may have recorded its own first).
pub(crate) fn confirm_check(
    keys: &Keys,
    connector: &str,
    check: &Sealed,
) -> Result<(), KeyCheckError> {
    if opens(keys, connector, check) {
        Ok(())
    } else {
        Err(KeyCheckError::Wrong {
            key_id: check.key_id.clone(),
            from: keys.from.clone(),
        })
    }
}

fn check_value(key: &Key, connector: &str) -> Result<Sealed, KeyCheckError> {
    seal_with(key, &check_aad(connector, &key.id), CHECK_TEXT)
        .map_err(|e| KeyCheckError::Random(e.to_string()))
}
