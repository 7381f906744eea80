//! The suite's tests of people's sealed credentials (issue 46), passed by SQLite and by
//! PostgreSQL: kept, replaced and deleted; re-sealed only over the row it came from;
//! pending rows taken once and never past their expiry; principals and connectors apart;
//! the start-up check of the keys; and the database itself, read around the ledger,
//! holding no plaintext.
//!
//! Takes: a store that opens handles on one database for two connectors and reads that
//! database directly. Returns: nothing; each check panics with what differed.

use std::sync::Arc;

use base64::Engine as _;

use super::{KEEP_ALL, Postgres, Retention, Sqlite, Store, claim, cluster, insert};
use crate::ledger::{
    CredentialKeysError, Handle, Ledger, PgLedger, SqliteLedger, check_credential_keys,
};
use crate::vault::{self, KeyCheckError, Keys, Purpose, Sealed};

/// Handles on one new database: two of connector `test` (two instances), one of
/// connector `other`, and the database read directly.
struct Opened {
    a: Box<dyn Ledger>,
    b: Box<dyn Ledger>,
    other: Box<dyn Ledger>,
    database: Box<dyn Database>,
}

/// The database under the ledger, read without it.
trait Database {
    /// Everything it holds of the credential tables, as bytes a secret could be found in:
    /// SQLite's file and its write-ahead log; PostgreSQL's rows as text.
    fn bytes(&self) -> Vec<u8>;
    /// The pending rows of every connector, expired or not.
    fn pending_rows(&self) -> i64;
}

trait Raw: Store {
    fn open(retention: Retention) -> Opened;
}

struct SqliteFile(std::path::PathBuf);

impl Database for SqliteFile {
    fn bytes(&self) -> Vec<u8> {
        let mut bytes = std::fs::read(&self.0).unwrap();
        let mut wal = self.0.clone().into_os_string();
        wal.push("-wal");
        bytes.extend(std::fs::read(wal).unwrap_or_default());
        bytes
    }

    fn pending_rows(&self) -> i64 {
        rusqlite::Connection::open(&self.0)
            .unwrap()
            .query_row("SELECT COUNT(*) FROM pending_credentials", [], |row| {
                row.get(0)
            })
            .unwrap()
    }
}

impl Raw for Sqlite {
    fn open(retention: Retention) -> Opened {
        let dir = tempfile::tempdir().unwrap().keep();
        let path = dir.join("l.sqlite3");
        let open = |connector: &str| -> Box<dyn Ledger> {
            Box::new(
                SqliteLedger::open(
                    &path,
                    connector,
                    retention,
                    &std::collections::BTreeMap::new(),
                )
                .unwrap(),
            )
        };
        Opened {
            a: open("test"),
            b: open("test"),
            other: open("other"),
            database: Box::new(SqliteFile(path.clone())),
        }
    }
}

struct PgDatabase(String);

impl PgDatabase {
    fn client(&self) -> ::postgres::Client {
        ::postgres::Client::connect(&self.0, ::postgres::NoTls).unwrap()
    }
}

impl Database for PgDatabase {
    fn bytes(&self) -> Vec<u8> {
        // A plain query, as anyone with read access to the database would make: each row
        // as PostgreSQL writes it (`bytea` as `\x` and hex).
        self.client()
            .query(
                "SELECT t::TEXT FROM connectorgen_credentials AS t \
                 UNION ALL SELECT t::TEXT FROM connectorgen_pending_credentials AS t \
                 UNION ALL SELECT t::TEXT FROM connectorgen_credential_keys AS t",
                &[],
            )
            .unwrap()
            .iter()
            .flat_map(|row| row.get::<_, String>(0).into_bytes())
            .collect()
    }

    fn pending_rows(&self) -> i64 {
        self.client()
            .query_one("SELECT COUNT(*) FROM connectorgen_pending_credentials", &[])
            .unwrap()
            .get(0)
    }
}

impl Raw for Postgres {
    fn open(retention: Retention) -> Opened {
        let url = cluster::cluster().database();
        let open = |connector: &str| -> Box<dyn Ledger> {
            Box::new(PgLedger::open(&url, connector, retention, 60).unwrap())
        };
        Opened {
            a: open("test"),
            b: open("test"),
            other: open("other"),
            database: Box::new(PgDatabase(url.clone())),
        }
    }
}

/// A made-up sealed value (the stores never look inside): `tag` tells them apart.
fn made_up(tag: u8) -> Sealed {
    Sealed {
        key_id: format!("k{tag}"),
        nonce: vec![tag; 24],
        ciphertext: vec![tag; 40],
    }
}

fn line(id: &str, fill: u8) -> String {
    let encoded = base64::engine::general_purpose::STANDARD.encode([fill; 32]);
    format!("{id}:{encoded}")
}

fn keys(lines: &[String]) -> Keys {
    Keys::from_env("CG_KEYS", &lines.join("\n")).unwrap()
}

fn kept_replaced_and_deleted_never_pruned<S: Raw>() {
    // A retry window of one second: the calls' pruning must leave credentials alone.
    let Opened { a, b, .. } = S::open(Retention {
        window: 1,
        consent: 1,
        max_bytes: 1 << 40,
        receipts: 0,
    });
    assert_eq!(a.get_credential("alice").unwrap(), None);
    a.put_credential("alice", &made_up(1), 1_000).unwrap();
    assert_eq!(b.get_credential("alice").unwrap(), Some(made_up(1)));
    // Connected again: the new one replaces it.
    b.put_credential("alice", &made_up(2), 1_001).unwrap();
    assert_eq!(a.get_credential("alice").unwrap(), Some(made_up(2)));
    // Claims a day later prune every call; the credential stays.
    a.claim(&claim("alice", "h", None, 90_000), &mut insert("k", None))
        .unwrap();
    a.claim(
        &claim("alice", "h2", None, 190_000),
        &mut insert("k2", None),
    )
    .unwrap();
    assert_eq!(b.get_credential("alice").unwrap(), Some(made_up(2)));
    assert!(b.delete_credential("alice").unwrap());
    assert_eq!(a.get_credential("alice").unwrap(), None);
    assert!(
        !a.delete_credential("alice").unwrap(),
        "nothing left to delete"
    );
}

/// A stale credential re-sealed on use is written only over the row it was read from: a
/// credential replaced or deleted meanwhile is never overwritten or brought back.
fn a_reseal_writes_only_over_the_row_it_came_from<S: Raw>() {
    let Opened { a, b, .. } = S::open(KEEP_ALL);
    a.put_credential("alice", &made_up(1), 1_000).unwrap();
    assert!(
        b.reseal_credential("alice", &made_up(1), &made_up(2), 1_001)
            .unwrap()
    );
    assert_eq!(a.get_credential("alice").unwrap(), Some(made_up(2)));
    // Read before the row changed: nothing written.
    assert!(
        !a.reseal_credential("alice", &made_up(1), &made_up(3), 1_002)
            .unwrap()
    );
    assert_eq!(b.get_credential("alice").unwrap(), Some(made_up(2)));
    b.delete_credential("alice").unwrap();
    assert!(
        !a.reseal_credential("alice", &made_up(2), &made_up(3), 1_003)
            .unwrap()
    );
    assert_eq!(a.get_credential("alice").unwrap(), None, "not brought back");
}

fn a_pending_row_is_taken_once_and_never_once_expired<S: Raw>() {
    let Opened { a, b, database, .. } = S::open(KEEP_ALL);
    a.put_pending("f1", "alice", &made_up(1), 1_600, 1_000)
        .unwrap();
    assert_eq!(
        b.take_pending("f1", 1_100).unwrap(),
        Some(("alice".to_string(), made_up(1)))
    );
    assert_eq!(a.take_pending("f1", 1_101).unwrap(), None, "single use");
    assert_eq!(b.take_pending("f1", 1_102).unwrap(), None, "single use");
    // Expired at its `expires`: not returned.
    a.put_pending("f2", "alice", &made_up(2), 1_600, 1_000)
        .unwrap();
    assert_eq!(b.take_pending("f2", 1_600).unwrap(), None);
    // A flow id already kept is refused, the first row untouched.
    a.put_pending("f3", "alice", &made_up(3), 1_600, 1_000)
        .unwrap();
    assert!(
        b.put_pending("f3", "bob", &made_up(4), 1_600, 1_000)
            .is_err()
    );
    a.put_pending("f4", "bob", &made_up(4), 5_000, 1_000)
        .unwrap();
    // Expired rows are pruned by a take, even of another flow: f3 goes, f4 stays.
    assert_eq!(database.pending_rows(), 2);
    assert_eq!(a.take_pending("none", 2_000).unwrap(), None);
    assert_eq!(database.pending_rows(), 1);
    // And by a put.
    b.put_pending("f5", "bob", &made_up(5), 9_000, 6_000)
        .unwrap();
    assert_eq!(database.pending_rows(), 1, "f4 expired at 5000, pruned");
    // Two instances taking one flow at once: exactly one gets it.
    for round in 0..20 {
        let flow = format!("race{round}");
        a.put_pending(&flow, "alice", &made_up(6), 9_000, 6_000)
            .unwrap();
        let (x, y) = std::thread::scope(|scope| {
            let x = scope.spawn(|| a.take_pending(&flow, 6_001).unwrap());
            let y = scope.spawn(|| b.take_pending(&flow, 6_001).unwrap());
            (x.join().unwrap(), y.join().unwrap())
        });
        assert!(x.is_some() != y.is_some(), "round {round}: {x:?} {y:?}");
    }
}

/// Two principals on one connector, and two connectors on one database: each sees only
/// its own credentials, pending flows and key checks.
fn principals_and_connectors_stay_apart<S: Raw>() {
    let Opened { a, b, other, .. } = S::open(KEEP_ALL);
    a.put_credential("alice", &made_up(1), 1_000).unwrap();
    b.put_credential("bob", &made_up(2), 1_000).unwrap();
    assert_eq!(b.get_credential("alice").unwrap(), Some(made_up(1)));
    assert_eq!(a.get_credential("bob").unwrap(), Some(made_up(2)));
    assert!(a.delete_credential("alice").unwrap());
    assert_eq!(
        b.get_credential("bob").unwrap(),
        Some(made_up(2)),
        "bob's stays"
    );
    // Another connector on the same database: none of it is its own.
    assert_eq!(other.get_credential("bob").unwrap(), None);
    assert!(!other.delete_credential("bob").unwrap());
    assert!(
        !other
            .reseal_credential("bob", &made_up(2), &made_up(3), 1_001)
            .unwrap()
    );
    other.put_credential("bob", &made_up(7), 1_001).unwrap();
    assert_eq!(a.get_credential("bob").unwrap(), Some(made_up(2)));
    assert_eq!(other.get_credential("bob").unwrap(), Some(made_up(7)));
    a.put_pending("f", "bob", &made_up(3), 5_000, 1_000)
        .unwrap();
    assert_eq!(other.take_pending("f", 1_001).unwrap(), None);
    // The same flow id on the other connector is a flow of its own.
    other
        .put_pending("f", "bob", &made_up(8), 5_000, 1_000)
        .unwrap();
    assert_eq!(
        b.take_pending("f", 1_002).unwrap(),
        Some(("bob".to_string(), made_up(3)))
    );
    let ids = |ledger: &dyn Ledger| -> Vec<(String, u64)> {
        ledger
            .key_uses(1_003)
            .unwrap()
            .into_iter()
            .map(|u| (u.key_id, u.rows))
            .collect()
    };
    assert_eq!(ids(&*a), [("k2".to_string(), 1)]);
    assert_eq!(ids(&*other), [("k7".to_string(), 1), ("k8".to_string(), 1)]);
}

/// The start-up check through the store: the first start records the key's check value;
/// a ring with another key under that id, or without a key rows are sealed with, is
/// refused saying which; a rotated ring (new key first, old kept) passes and records the
/// new key's.
fn the_start_up_check_refuses_a_wrong_or_missing_key<S: Raw>() {
    let Opened { a, b, other, .. } = S::open(KEEP_ALL);
    let first = keys(&[line("k1", 1)]);
    check_credential_keys(&*a, &first, "test", 1_000).unwrap();
    let sealed = vault::seal(&first, Purpose::Credential, "test", "alice", b"sk_1").unwrap();
    a.put_credential("alice", &sealed, 1_000).unwrap();
    // Again, from the other instance: nothing to record, nothing refused.
    check_credential_keys(&*b, &first, "test", 1_001).unwrap();
    let uses = b.key_uses(1_001).unwrap();
    assert_eq!(uses.len(), 1);
    assert_eq!((uses[0].key_id.as_str(), uses[0].rows), ("k1", 1));
    assert!(uses[0].check.is_some());

    let wrong = keys(&[line("k1", 9)]);
    let e = check_credential_keys(&*b, &wrong, "test", 1_002).unwrap_err();
    assert!(
        matches!(&e, CredentialKeysError::Keys(KeyCheckError::Wrong { key_id, .. }) if key_id == "k1"),
        "{e:?}"
    );
    assert!(
        e.to_string().starts_with(
            "the credential key `k1` in the environment variable CG_KEYS does not open the \
             credentials sealed with it"
        ),
        "{e}"
    );
    // Even before any credential: the check value alone refuses it (another instance
    // started with a key generated again under the same id).
    a.delete_credential("alice").unwrap();
    assert!(check_credential_keys(&*b, &wrong, "test", 1_003).is_err());
    a.put_credential("alice", &sealed, 1_003).unwrap();

    // Two instances starting together, each with its own k1, both finding no check value
    // yet: the second's is not kept, and the one kept refuses its key.
    let race = S::open(KEEP_ALL);
    let mine = vault::check_keys(&first, "test", &[]).unwrap().remove(0);
    let theirs = vault::check_keys(&wrong, "test", &[]).unwrap().remove(0);
    assert_eq!(race.a.keep_key_check(&mine).unwrap(), mine);
    let kept = race.b.keep_key_check(&theirs).unwrap();
    assert_eq!(kept, mine, "the first check value kept stays");
    assert!(vault::confirm_check(&wrong, "test", &kept).is_err());

    let without = keys(&[line("k2", 2)]);
    let e = check_credential_keys(&*b, &without, "test", 1_004).unwrap_err();
    assert!(
        matches!(&e, CredentialKeysError::Keys(KeyCheckError::Missing { key_id, rows: 1, .. }) if key_id == "k1"),
        "{e:?}"
    );

    let rotated = keys(&[line("k2", 2), line("k1", 1)]);
    check_credential_keys(&*b, &rotated, "test", 1_005).unwrap();
    let checked: Vec<(String, bool)> = a
        .key_uses(1_005)
        .unwrap()
        .into_iter()
        .map(|u| (u.key_id, u.check.is_some()))
        .collect();
    assert_eq!(
        checked,
        [("k1".to_string(), true), ("k2".to_string(), true)]
    );
    // The other connector has check values of its own: another deployment's k1 is fine.
    check_credential_keys(&*other, &wrong, "other", 1_006).unwrap();
    // Another connector's name does not open this one's check values.
    assert!(check_credential_keys(&*a, &first, "other", 1_007).is_err());
}

/// What a reader of the database sees: key ids, nonces, ciphertext, principals — never
/// the credential or the pending state, in any spelling.
fn the_database_never_holds_a_plaintext<S: Raw>() {
    let Opened { a, database, .. } = S::open(KEEP_ALL);
    let ring = keys(&[line("k1", 1)]);
    check_credential_keys(&*a, &ring, "test", 1_000).unwrap();
    let secret = b"sk_live_9f8e7d6c5b4a-never-in-the-database";
    let verifier = b"pkce-verifier-0123456789abcdef-never-either";
    let credential = vault::seal(&ring, Purpose::Credential, "test", "alice-7a1b", secret).unwrap();
    let pending = vault::seal(&ring, Purpose::Pending, "test", "alice-7a1b", verifier).unwrap();
    a.put_credential("alice-7a1b", &credential, 1_000).unwrap();
    a.put_pending("flow-3c4d", "alice-7a1b", &pending, 5_000, 1_000)
        .unwrap();
    let bytes = database.bytes();
    let contains = |needle: &[u8]| bytes.windows(needle.len()).any(|w| w == needle);
    let hex = |b: &[u8]| -> String { b.iter().map(|b| format!("{b:02x}")).collect() };
    // What the ledger wrote is there: the read is not blind.
    assert!(contains(b"alice-7a1b") && contains(b"flow-3c4d"));
    assert!(
        contains(&credential.ciphertext) || contains(hex(&credential.ciphertext).as_bytes()),
        "the ciphertext is in what was read"
    );
    for plain in [&secret[..], &verifier[..]] {
        for spelling in [
            plain.to_vec(),
            hex(plain).into_bytes(),
            base64::engine::general_purpose::STANDARD
                .encode(plain)
                .into_bytes(),
            plain[..16].to_vec(),
        ] {
            assert!(
                !contains(&spelling),
                "the database holds {}",
                String::from_utf8_lossy(&spelling)
            );
        }
    }
    // And it opens again, from what was stored.
    let stored = a.get_credential("alice-7a1b").unwrap().unwrap();
    let opened = vault::open(&ring, Purpose::Credential, "test", "alice-7a1b", &stored).unwrap();
    assert_eq!(opened.plaintext.as_slice(), secret);
}

/// The async handle (`handle.rs`) reaches each method, off the event loop.
fn the_handle_reaches_every_credential_method<S: Raw>() {
    let Opened { a, .. } = S::open(KEEP_ALL);
    let handle = Handle::new(Arc::from(a));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    runtime.block_on(async {
        let p = || "alice".to_string();
        handle.put_credential(p(), made_up(1), 1_000).await.unwrap();
        assert_eq!(handle.get_credential(p()).await.unwrap(), Some(made_up(1)));
        assert!(
            handle
                .reseal_credential(p(), made_up(1), made_up(2), 1_001)
                .await
                .unwrap()
        );
        assert!(handle.delete_credential(p()).await.unwrap());
        handle
            .put_pending("f".into(), p(), made_up(3), 2_000, 1_000)
            .await
            .unwrap();
        assert_eq!(
            handle.take_pending("f".into(), 1_001).await.unwrap(),
            Some((p(), made_up(3)))
        );
        let kept = handle.keep_key_check(made_up(4)).await.unwrap();
        assert_eq!(kept, made_up(4));
        let another = Sealed {
            nonce: vec![9; 24],
            ..made_up(4)
        };
        assert_eq!(
            handle.keep_key_check(another).await.unwrap(),
            kept,
            "the first kept stays"
        );
        let uses = handle.key_uses(1_002).await.unwrap();
        assert_eq!(uses.len(), 1);
        assert_eq!(uses[0].check, Some(made_up(4)));
    });
}

macro_rules! credentials {
    ($store:ident, $module:ident) => {
        mod $module {
            use super::*;
            #[test]
            fn kept_replaced_and_deleted_never_pruned() {
                super::kept_replaced_and_deleted_never_pruned::<$store>();
            }
            #[test]
            fn a_reseal_writes_only_over_the_row_it_came_from() {
                super::a_reseal_writes_only_over_the_row_it_came_from::<$store>();
            }
            #[test]
            fn a_pending_row_is_taken_once_and_never_once_expired() {
                super::a_pending_row_is_taken_once_and_never_once_expired::<$store>();
            }
            #[test]
            fn principals_and_connectors_stay_apart() {
                super::principals_and_connectors_stay_apart::<$store>();
            }
            #[test]
            fn the_start_up_check_refuses_a_wrong_or_missing_key() {
                super::the_start_up_check_refuses_a_wrong_or_missing_key::<$store>();
            }
            #[test]
            fn the_database_never_holds_a_plaintext() {
                super::the_database_never_holds_a_plaintext::<$store>();
            }
            #[test]
            fn the_handle_reaches_every_credential_method() {
                super::the_handle_reaches_every_credential_method::<$store>();
            }
        }
    };
}

credentials!(Sqlite, sqlite);
credentials!(Postgres, postgres);
