//! The one test suite of the `Ledger` trait, passed by SQLite and by PostgreSQL (on the
//! throwaway cluster of `testing/postgres.rs`).
//!
//! Takes: a store that opens two handles on one ledger (two connections: two instances).
//! Returns: nothing; each check panics with what differed.
//!
//! People's sealed credentials have their part of the suite in `suite/credentials.rs`,
//! budgets and receipts theirs in `suite/budgets.rs`.

use std::collections::BTreeMap;

use super::{
    Claim, Decision, Entry, Found, Ledger, LedgerError, Outcome, PgLedger, ROW_BYTES, Retention,
    SqliteLedger, Status,
};

use crate::testing::postgres as cluster;

mod budgets;
mod credentials;

const KEEP_ALL: Retention = Retention {
    window: 1 << 40,
    consent: 1 << 40,
    max_bytes: 1 << 40,
    receipts: 0,
};

/// A store under test: two handles on one new ledger with these bounds.
trait Store {
    /// Whether a handle sees the other's sends on the row (`Entry::sending`).
    const SHARES_SENDS: bool;
    /// `n` handles on one new ledger (`n` connections: `n` instances).
    fn handles(retention: Retention, n: usize) -> Vec<Box<dyn Ledger>>;

    fn pair(retention: Retention) -> (Box<dyn Ledger>, Box<dyn Ledger>) {
        let mut two = Self::handles(retention, 2);
        let b = two.pop().unwrap();
        (two.pop().unwrap(), b)
    }
}

struct Sqlite;
impl Store for Sqlite {
    const SHARES_SENDS: bool = false;
    fn handles(retention: Retention, n: usize) -> Vec<Box<dyn Ledger>> {
        let dir = tempfile::tempdir().unwrap().keep();
        let path = dir.join("l.sqlite3");
        let open = || SqliteLedger::open(&path, "test", retention, &BTreeMap::new()).unwrap();
        (0..n)
            .map(|_| Box::new(open()) as Box<dyn Ledger>)
            .collect()
    }
}

struct Postgres;
impl Store for Postgres {
    const SHARES_SENDS: bool = true;
    fn handles(retention: Retention, n: usize) -> Vec<Box<dyn Ledger>> {
        let url = cluster::cluster().database();
        let open = || PgLedger::open(&url, "test", retention, 60).unwrap();
        (0..n)
            .map(|_| Box::new(open()) as Box<dyn Ledger>)
            .collect()
    }
}

fn claim<'a>(principal: &'a str, hash: &'a str, nonce: Option<&'a str>, now: u64) -> Claim<'a> {
    Claim {
        tool: "createVideo",
        args_hash: hash,
        principal,
        nonce,
        now,
        since: now.saturating_sub(100),
        busy: &[],
        receipt: None,
        tallies: &[],
    }
}

fn insert(key: &str, nonce: Option<&str>) -> impl FnMut(&Found) -> Decision + Send + use<> {
    let key = key.to_string();
    let nonce = nonce.map(str::to_string);
    move |_| Decision::Insert {
        key: key.clone(),
        nonce: nonce.clone(),
    }
}

fn look(ledger: &dyn Ledger, c: &Claim<'_>) -> Found {
    ledger.claim(c, &mut |_| Decision::Nothing).unwrap().0
}

fn outcome(status: Status, body: Option<usize>) -> Outcome {
    Outcome {
        status,
        http_status: Some(200),
        job_id: (status == Status::Job).then(|| "job_1".to_string()),
        result: body.map(|n| "x".repeat(n)),
        media_type: Some("application/json".into()),
    }
}

fn new_row(ledger: &dyn Ledger, c: &Claim<'_>, key: &str) -> Entry {
    ledger
        .claim(c, &mut insert(key, c.nonce))
        .unwrap()
        .1
        .unwrap()
}

fn records_outcomes_and_forgets_rows_past_the_window<S: Store>() {
    let (a, b) = S::pair(KEEP_ALL);
    let row = new_row(&*a, &claim("p", "h", None, 1_000), "k1");
    assert_eq!(
        (row.status, row.key.as_str(), row.attempts),
        (Status::Pending, "k1", 1)
    );
    a.finish(row.id, &outcome(Status::Job, Some(10)), 1_001)
        .unwrap();
    // The other handle (another instance) sees the outcome, whole.
    let latest = look(&*b, &claim("p", "h", None, 1_050)).latest.unwrap();
    assert_eq!(
        (
            latest.status,
            latest.job_id.as_deref(),
            latest.media_type.as_deref()
        ),
        (Status::Job, Some("job_1"), Some("application/json"))
    );
    assert_eq!(latest.result.map(|r| r.len()), Some(10));
    assert!(
        look(&*b, &claim("p", "h", None, 1_101)).latest.is_none(),
        "outside the window"
    );
    assert!(
        look(&*b, &claim("p", "other", None, 1_050))
            .latest
            .is_none()
    );
}

fn finds_nonces_at_any_age_and_leaves_rejected_rows_out<S: Store>() {
    let (a, b) = S::pair(KEEP_ALL);
    let row = new_row(&*a, &claim("p", "h", Some("n"), 1_000), "k");
    a.finish(row.id, &outcome(Status::Rejected, None), 1_000)
        .unwrap();
    let found = look(&*b, &claim("p", "h", Some("n"), 5_000));
    assert!(found.latest.is_none());
    assert_eq!(found.by_nonce.unwrap().status, Status::Rejected);
    assert_eq!(found.last_id, Some(row.id));
    // A nonce names one row: a second insert under it fails, nothing written.
    let second = b.claim(
        &claim("p", "h", Some("n"), 5_001),
        &mut insert("k2", Some("n")),
    );
    assert!(second.is_err(), "the unique nonce refuses a second row");
}

fn a_retry_counts_and_keeps_the_key<S: Store>() {
    let (a, b) = S::pair(KEEP_ALL);
    let row = new_row(&*a, &claim("p", "h", None, 1_000), "k1");
    let id = row.id;
    let again = b
        .claim(&claim("p", "h", None, 1_010), &mut move |_| {
            Decision::Retry(id)
        })
        .unwrap()
        .1
        .unwrap();
    assert_eq!(
        (again.key.as_str(), again.attempts, again.updated),
        ("k1", 2, 1_010)
    );
}

/// Two credentials on one store: neither sees the other's rows, and the same nonce (it
/// is derived from the call, not the person) starts a request in each.
fn principals_never_see_each_other<S: Store>() {
    let (a, b) = S::pair(KEEP_ALL);
    let alice = new_row(&*a, &claim("alice", "h", Some("n"), 1_000), "k-alice");
    a.finish(alice.id, &outcome(Status::Done, Some(3)), 1_000)
        .unwrap();
    let found = look(&*b, &claim("bob", "h", Some("n"), 1_001));
    assert!(found.by_nonce.is_none() && found.latest.is_none() && found.last_id.is_none());
    let bob = new_row(&*b, &claim("bob", "h", Some("n"), 1_002), "k-bob");
    assert_ne!(bob.id, alice.id);
    let mine = look(&*a, &claim("alice", "h", Some("n"), 1_003));
    assert_eq!(mine.by_nonce.unwrap().key, "k-alice");
    // By id (a task's `tasks/get`), from either handle: each row opens for its own
    // principal only, so a guessed id of another person's row is no row at all.
    let stored = b.entry(alice.id, "alice").unwrap().unwrap();
    assert_eq!(
        (stored.key.as_str(), stored.status),
        ("k-alice", Status::Done)
    );
    assert_eq!(a.entry(bob.id, "bob").unwrap().unwrap().key, "k-bob");
    assert_eq!(a.entry(alice.id, "bob").unwrap(), None);
    assert_eq!(b.entry(bob.id, "alice").unwrap(), None);
    assert_eq!(a.entry(bob.id + 1, "bob").unwrap(), None);
}

/// At the bound a new request is refused with when room comes back; the rows there still
/// decide their calls, and an answer that does not fit is kept without its body.
fn a_full_ledger_refuses_new_requests_and_forgets_nothing<S: Store>() {
    let (a, b) = S::pair(Retention {
        window: 3_600,
        consent: 600,
        max_bytes: 2 * ROW_BYTES + 100,
        receipts: 0,
    });
    let window = |hash: &'static str, now: u64| Claim {
        since: now.saturating_sub(3_600),
        ..claim("p", hash, None, now)
    };
    let first = new_row(&*a, &window("a", 1_000), "a");
    let second = new_row(&*b, &window("b", 1_001), "b");
    let e = a
        .claim(&window("c", 1_010), &mut insert("c", None))
        .unwrap_err();
    assert!(
        matches!(
            e,
            LedgerError::Full {
                rows: 2,
                wait: 3_590,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(matches!(b.room(1_010), Err(LedgerError::Full { .. })));
    a.finish(first.id, &outcome(Status::Done, Some(200)), 1_011)
        .unwrap();
    // Its sender gave up on the second (its call went away): only its age keeps it now.
    b.release(second.id);
    let kept = look(&*a, &window("a", 1_020)).latest.unwrap();
    assert_eq!((kept.status, kept.result), (Status::Done, None));
    // Past the window the rows go, and new requests are taken again.
    new_row(&*b, &window("c", 1_000 + 3_700), "c");
    a.room(1_000 + 3_700).unwrap();
}

/// Eight threads over the two handles race the same first call: exactly one of them
/// records it, the others find it.
fn racing_claims_make_one_row<S: Store>() {
    let (a, b) = S::pair(KEEP_ALL);
    let inserted = std::sync::atomic::AtomicU32::new(0);
    std::thread::scope(|scope| {
        for i in 0..8 {
            let ledger = if i % 2 == 0 { &a } else { &b };
            let inserted = &inserted;
            scope.spawn(move || {
                let key = format!("k{i}");
                let (_, written) = ledger
                    .claim(&claim("p", "h", Some("n"), 1_000), &mut |found: &Found| {
                        if found.by_nonce.is_some() {
                            Decision::Nothing
                        } else {
                            Decision::Insert {
                                key: key.clone(),
                                nonce: Some("n".into()),
                            }
                        }
                    })
                    .unwrap();
                if written.is_some() {
                    inserted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                }
            });
        }
    });
    assert_eq!(inserted.into_inner(), 1);
}

/// A row being sent is seen as such by another instance until its sender records the
/// outcome or lets it go, and is never pruned meanwhile.
fn a_send_is_seen_by_the_other_instance<S: Store>() {
    let (a, b) = S::pair(Retention {
        window: 1,
        consent: 1,
        max_bytes: 1 << 20,
        receipts: 0,
    });
    let row = new_row(&*a, &claim("p", "slow", None, 1_000), "k");
    assert!(row.sending == S::SHARES_SENDS);
    let now = Claim {
        since: 0,
        ..claim("p", "slow", None, 1_000)
    };
    assert_eq!(look(&*b, &now).latest.unwrap().sending, S::SHARES_SENDS);
    a.release(row.id);
    assert!(!look(&*b, &now).latest.unwrap().sending);
    if S::SHARES_SENDS {
        // Sent again by b: a sees it, and b's outcome clears it.
        let id = row.id;
        b.claim(&now, &mut move |_| Decision::Retry(id)).unwrap();
        let later = Claim {
            busy: &[],
            receipt: None,
            tallies: &[],
            ..claim("p", "other", None, 5_000)
        };
        look(&*a, &later);
        let seen = look(
            &*a,
            &Claim {
                since: 0,
                ..claim("p", "slow", None, 5_000)
            },
        );
        assert!(seen.latest.unwrap().sending, "not pruned while being sent");
        b.finish(id, &outcome(Status::Done, None), 5_000).unwrap();
        assert!(
            !look(
                &*a,
                &Claim {
                    since: 0,
                    ..claim("p", "slow", None, 5_000)
                }
            )
            .latest
            .unwrap()
            .sending
        );
    }
}

/// A row id is never given to a second row, even after every row was pruned (issue 43:
/// SQLite's plain `INTEGER PRIMARY KEY` took the largest id left plus one, so the first
/// row after an idle hour had the id — and the task id and the task state held in memory
/// — of a pruned one).
fn a_pruned_rows_id_is_never_given_again<S: Store>() {
    let (a, _) = S::pair(Retention {
        window: 10,
        consent: 10,
        max_bytes: 1 << 20,
        receipts: 0,
    });
    let first = new_row(&*a, &claim("p", "h1", None, 1_000), "k1");
    a.finish(first.id, &outcome(Status::Job, None), 1_000)
        .unwrap();
    a.release(first.id);
    let second = new_row(&*a, &claim("p", "h2", None, 1_001), "k2");
    a.finish(second.id, &outcome(Status::Done, None), 1_001)
        .unwrap();
    a.release(second.id);
    // Both past the window: this claim prunes them before it writes.
    let later = new_row(&*a, &claim("p", "h3", None, 5_000), "k3");
    assert_eq!(a.entry(first.id, "p").unwrap(), None, "pruned");
    assert_eq!(a.entry(second.id, "p").unwrap(), None, "pruned");
    assert!(
        later.id > second.id,
        "a new row got id {} after rows {} and {} were pruned",
        later.id,
        first.id,
        second.id
    );
}

/// A finished task's state is kept with its row: found with it, counted by the bound
/// with the row's answer, refused (nothing written) past the bound, pruned with the row
/// (issue 43: the states were held in memory without bound).
fn a_finished_task_is_kept_with_its_row<S: Store>() {
    let (a, b) = S::pair(Retention {
        window: 10,
        consent: 10,
        max_bytes: 2 * ROW_BYTES + 100,
        receipts: 0,
    });
    let row = new_row(&*a, &claim("p", "h", None, 1_000), "k");
    a.finish(row.id, &outcome(Status::Job, Some(10)), 1_000)
        .unwrap();
    a.release(row.id);
    assert!(a.keep_task(row.id, &"t".repeat(60)).unwrap());
    let kept = b.entry(row.id, "p").unwrap().unwrap();
    assert_eq!(kept.task.as_deref(), Some("t".repeat(60).as_str()));
    // Kept again, smaller: counted once.
    assert!(a.keep_task(row.id, &"u".repeat(50)).unwrap());
    // 10 + 50 of 100 answer bytes used: a second row's 512 fit, 41 more task bytes do not.
    let other = new_row(&*a, &claim("p", "h2", None, 1_001), "k2");
    a.finish(other.id, &outcome(Status::Job, None), 1_001)
        .unwrap();
    a.release(other.id);
    assert!(
        !a.keep_task(other.id, &"v".repeat(41)).unwrap(),
        "past the bound"
    );
    assert_eq!(b.entry(other.id, "p").unwrap().unwrap().task, None);
    assert!(a.keep_task(other.id, &"v".repeat(40)).unwrap());
    // Pruned with the row.
    let later = new_row(&*a, &claim("p", "h3", None, 5_000), "k3");
    assert!(later.id > other.id);
    assert_eq!(a.entry(row.id, "p").unwrap(), None);
}

/// The bound's counters follow every write: what a full ledger refuses after inserts,
/// answers, tasks and prunes is what a count of the rows says (issue 44: the count was a
/// scan of every row, three times a paid call).
fn the_counters_follow_every_write<S: Store>() {
    let bound = 3 * ROW_BYTES + 300;
    let (a, b) = S::pair(Retention {
        window: 10,
        consent: 10,
        max_bytes: bound,
        receipts: 0,
    });
    let first = new_row(&*a, &claim("p", "h1", None, 1_000), "k1");
    a.finish(first.id, &outcome(Status::Done, Some(200)), 1_000)
        .unwrap();
    a.release(first.id);
    let second = new_row(&*b, &claim("p", "h2", None, 1_001), "k2");
    b.finish(second.id, &outcome(Status::Job, None), 1_001)
        .unwrap();
    b.release(second.id);
    assert!(a.keep_task(second.id, &"t".repeat(100)).unwrap());
    // 2 rows + 300 bytes: one more row (512) fits, nothing more after it.
    b.room(1_002).unwrap();
    let third = new_row(&*a, &claim("p", "h3", None, 1_002), "k3");
    a.release(third.id);
    assert!(matches!(
        b.room(1_002),
        Err(LedgerError::Full { rows: 3, .. })
    ));
    assert!(!a.keep_task(third.id, "x").unwrap(), "at the bound");
    // The first two pruned: room again, and the count is the one row left.
    let later = claim("p", "h4", None, 1_012);
    let found = look(&*b, &later);
    assert!(found.latest.is_none());
    assert_eq!(a.entry(first.id, "p").unwrap(), None, "pruned");
    b.room(1_012).unwrap();
    // One row left: all but its 512 bytes are the task's to take, to the byte.
    let room = usize::try_from(bound - ROW_BYTES).unwrap();
    assert!(!a.keep_task(third.id, &"y".repeat(room + 1)).unwrap());
    assert!(a.keep_task(third.id, &"y".repeat(room)).unwrap());
}

macro_rules! suite {
    ($store:ident, $module:ident) => {
        mod $module {
            use super::*;
            #[test]
            fn records_outcomes_and_forgets_rows_past_the_window() {
                super::records_outcomes_and_forgets_rows_past_the_window::<$store>();
            }
            #[test]
            fn finds_nonces_at_any_age_and_leaves_rejected_rows_out() {
                super::finds_nonces_at_any_age_and_leaves_rejected_rows_out::<$store>();
            }
            #[test]
            fn a_retry_counts_and_keeps_the_key() {
                super::a_retry_counts_and_keeps_the_key::<$store>();
            }
            #[test]
            fn principals_never_see_each_other() {
                super::principals_never_see_each_other::<$store>();
            }
            #[test]
            fn a_full_ledger_refuses_new_requests_and_forgets_nothing() {
                super::a_full_ledger_refuses_new_requests_and_forgets_nothing::<$store>();
            }
            #[test]
            fn racing_claims_make_one_row() {
                super::racing_claims_make_one_row::<$store>();
            }
            #[test]
            fn a_pruned_rows_id_is_never_given_again() {
                super::a_pruned_rows_id_is_never_given_again::<$store>();
            }
            #[test]
            fn a_finished_task_is_kept_with_its_row() {
                super::a_finished_task_is_kept_with_its_row::<$store>();
            }
            #[test]
            fn the_counters_follow_every_write() {
                super::the_counters_follow_every_write::<$store>();
            }
            #[test]
            fn a_send_is_seen_by_the_other_instance() {
                super::a_send_is_seen_by_the_other_instance::<$store>();
            }
        }
    };
}

suite!(Sqlite, sqlite);
suite!(Postgres, postgres);

/// Versioned migrations: a second instance starting on a migrated database changes
/// nothing, and one made by a newer connectorgen is refused.
#[test]
fn postgres_migrations_are_versioned() {
    let url = cluster::cluster().database();
    let first = PgLedger::open(&url, "test", KEEP_ALL, 60).unwrap();
    let secret = first.secret().unwrap();
    let second = PgLedger::open(&url, "test", KEEP_ALL, 60).unwrap();
    assert_eq!(
        second.secret().unwrap(),
        secret,
        "one secret for every instance"
    );
    assert!(secret.len() >= 32);
    let mut client = ::postgres::Client::connect(&url, ::postgres::NoTls).unwrap();
    let versions: Vec<i32> = client
        .query(
            "SELECT version FROM connectorgen_migrations ORDER BY version",
            &[],
        )
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect();
    assert_eq!(versions, [1, 2, 3, 4, 5, 6]);
    client
        .execute(
            "INSERT INTO connectorgen_migrations (version) VALUES (99)",
            &[],
        )
        .unwrap();
    let e = PgLedger::open(&url, "test", KEEP_ALL, 60)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("made by a newer connectorgen"), "{e}");
}

/// A connection the database ends (a restart, `pg_terminate_backend`) is made again: the
/// call that meets the closed connection fails (nothing decided, nothing sent), the next
/// one works.
#[test]
fn postgres_connects_again_after_losing_its_connection() {
    let url = cluster::cluster().database();
    let ledger = PgLedger::open(&url, "test", KEEP_ALL, 60).unwrap();
    ledger.room(1_000).unwrap();
    let mut admin = ::postgres::Client::connect(&url, ::postgres::NoTls).unwrap();
    let ended = admin
        .query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE application_name = 'connectorgen serve' AND datname = current_database()",
            &[],
        )
        .unwrap();
    assert_eq!(ended.len(), 1);
    let first = ledger.claim(&claim("p", "h", None, 1_000), &mut insert("k", None));
    let row = match first {
        Ok((_, row)) => row,
        Err(_) => {
            ledger
                .claim(&claim("p", "h", None, 1_001), &mut insert("k", None))
                .unwrap()
                .1
        }
    };
    assert_eq!(row.unwrap().key, "k");
}

/// An outcome the store would not take is held by its sender, which renews the row's
/// lease meanwhile: the other instance goes on seeing the row as being sent (so it does
/// not send it again) after the lease it was claimed with ran out (issue 43).
#[test]
fn postgres_a_renewed_lease_keeps_a_held_row_out_of_other_hands() {
    let url = cluster::cluster().database();
    let a = PgLedger::open(&url, "renews", KEEP_ALL, 60).unwrap();
    let b = PgLedger::open(&url, "renews", KEEP_ALL, 60).unwrap();
    let row = new_row(&a, &claim("p", "h", None, 1_000), "k");
    let seen = |ledger: &PgLedger| ledger.entry(row.id, "p").unwrap().unwrap().sending;
    assert!(seen(&b));
    // The lease runs out (as it does after `lease` seconds with no renewal).
    let mut admin = ::postgres::Client::connect(&url, ::postgres::NoTls).unwrap();
    admin
        .execute(
            "UPDATE connectorgen_calls SET sending_until = 0 WHERE id = $1",
            &[&row.id],
        )
        .unwrap();
    assert!(!seen(&b), "the lease ran out");
    a.renew(row.id);
    assert!(seen(&b), "renewed by its sender");
    // Only the sender renews: b's renewal of a's row does nothing once it ran out.
    admin
        .execute(
            "UPDATE connectorgen_calls SET sending_until = 0 WHERE id = $1",
            &[&row.id],
        )
        .unwrap();
    b.renew(row.id);
    assert!(!seen(&a));
}

/// A claim that panics inside its transaction (with the connector's advisory lock held)
/// leaves no lock behind: its session is dropped, so another instance's claim goes
/// through at once instead of waiting out `lock_timeout` and failing.
#[test]
fn postgres_a_panic_inside_a_claim_leaves_no_lock_behind() {
    let url = cluster::cluster().database();
    let a = PgLedger::open(&url, "panics", KEEP_ALL, 60).unwrap();
    let b = PgLedger::open(&url, "panics", KEEP_ALL, 60).unwrap();
    let panicked = a.claim(&claim("p", "h", None, 1_000), &mut |_| {
        panic!("a decision that panics (expected in this test)")
    });
    assert!(panicked.is_err());
    let (_, row) = b
        .claim(&claim("p", "h2", None, 1_001), &mut insert("k", None))
        .unwrap();
    assert_eq!(row.unwrap().key, "k");
    // The instance that panicked goes on, on a new session.
    a.room(1_002).unwrap();
}

/// A claim is on disk before its request goes out, whatever the server's default: the
/// throwaway cluster runs with `synchronous_commit = off` (as a server tuned for speed
/// may), where a commit is acknowledged before it is flushed and a crash of the database
/// forgets it; the ledger's sessions commit with it on.
#[test]
fn postgres_claims_are_durable_on_a_server_that_does_not_flush_commits() {
    let url = cluster::cluster().database();
    let mut admin = ::postgres::Client::connect(&url, ::postgres::NoTls).unwrap();
    let server: String = admin
        .query_one("SHOW synchronous_commit", &[])
        .unwrap()
        .get(0);
    assert_eq!(server, "off", "the server's setting this test is about");
    let ledger = PgLedger::open(&url, "test", KEEP_ALL, 60).unwrap();
    assert_eq!(ledger.setting("synchronous_commit").unwrap(), "on");
}

/// A paid call that asks first — the claim that finds nothing and asks, the room check
/// before the person is asked, the claim that records it under the consent nonce, its
/// outcome, the end of its send — makes at most 6 round trips to PostgreSQL (issue 44:
/// about 68, each statement prepared again, in four transactions under a lock on the
/// connector). Counted where every statement reaches the database (`Session::pipeline`).
#[test]
fn postgres_a_paid_call_makes_at_most_six_round_trips() {
    let url = cluster::cluster().database();
    let ledger = PgLedger::open(&url, "test", KEEP_ALL, 60).unwrap();
    let start = ledger.round_trips();
    let found = look(&ledger, &claim("p", "h", None, 1_000));
    assert!(found.latest.is_none() && found.last_id.is_none());
    ledger.room(1_000).unwrap();
    let row = new_row(&ledger, &claim("p", "h", Some("n"), 1_001), "k");
    ledger
        .finish(row.id, &outcome(Status::Done, Some(10)), 1_002)
        .unwrap();
    ledger.release(row.id);
    let trips = ledger.round_trips() - start;
    assert!(trips <= 6, "a paid call made {trips} round trips");
    let kept = ledger.entry(row.id, "p").unwrap().unwrap();
    assert_eq!((kept.status, kept.sending), (Status::Done, false));
}
