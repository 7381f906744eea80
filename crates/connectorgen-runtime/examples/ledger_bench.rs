//! The ledger's benchmark (issue 44; `scripts/bench-ledger.sh` runs it in release mode):
//! paid calls per second at concurrency 1 with about 2k and 60k rows in the ledger, on
//! SQLite and on PostgreSQL over its Unix socket; PostgreSQL's round trips per paid call;
//! and the paid calls per second of one instance and of two on one PostgreSQL.
//!
//! Takes: `BENCH_SECONDS` (each measurement's length, 3 by default), PostgreSQL's
//! programs (the runtime crate's throwaway cluster: `testing::postgres`). Returns: a
//! Markdown table on stdout. A paid call is the ledger's part of one: the claim that asks,
//! the room check, the claim that records, the outcome, the end of the send
//! (`testing::ledger`); each call is a logical request of its own.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use connectorgen_runtime::testing::ledger::{PaidCalls, fill_postgres, fill_sqlite};
use connectorgen_runtime::testing::postgres;

/// Rows in the ledger for the small and the large measurement.
const SIZES: [u64; 2] = [2_000, 60_000];

/// Callers per instance when instances are compared: each waits on the ledger's one
/// connection in turn, as the sessions of one `serve` do.
const CALLERS: usize = 4;

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Paid calls per second made by `callers` threads on each of `instances` for `length`,
/// each call numbered from `next` (so no two are the same logical request).
fn rate(instances: &[&PaidCalls], callers: usize, length: Duration, next: &AtomicU64) -> f64 {
    let done = AtomicU64::new(0);
    let start = Instant::now();
    std::thread::scope(|scope| {
        for instance in instances {
            for _ in 0..callers {
                let instance = *instance;
                let (done, next) = (&done, next);
                scope.spawn(move || {
                    while start.elapsed() < length {
                        let n = next.fetch_add(1, Ordering::Relaxed);
                        if let Err(e) = instance.call(n, now()) {
                            panic!("paid call {n}: {e}");
                        }
                        done.fetch_add(1, Ordering::Relaxed);
                    }
                });
            }
        }
    });
    #[expect(clippy::cast_precision_loss, reason = "a count of calls in seconds")]
    let calls = done.into_inner() as f64;
    calls / start.elapsed().as_secs_f64()
}

fn main() {
    let seconds = std::env::var("BENCH_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    let length = Duration::from_secs(seconds);
    let next = AtomicU64::new(1);
    let dir = tempfile::tempdir().expect("a temporary folder");
    let cluster = postgres::cluster();
    let mut lines = vec![
        "| measure | SQLite | PostgreSQL |".to_string(),
        "|---|---|---|".to_string(),
    ];
    for rows in SIZES {
        let path = dir.path().join(format!("ledger-{rows}.sqlite3"));
        let sqlite = PaidCalls::sqlite(&path).expect("the SQLite ledger");
        fill_sqlite(&path, rows, now()).expect("SQLite's rows");
        let url = cluster.database();
        let pg = PaidCalls::postgres(&url).expect("the PostgreSQL ledger");
        fill_postgres(cluster, &url, rows, now()).expect("PostgreSQL's rows");
        let sqlite_rate = rate(&[&sqlite], 1, length, &next);
        let pg_rate = rate(&[&pg], 1, length, &next);
        lines.push(format!(
            "| paid calls/s, concurrency 1, {rows} rows | {sqlite_rate:.0} | {pg_rate:.0} |"
        ));
    }

    let url = cluster.database();
    let one = PaidCalls::postgres(&url).expect("the PostgreSQL ledger");
    fill_postgres(cluster, &url, SIZES[0], now()).expect("PostgreSQL's rows");
    let counted = 100;
    let before = one.round_trips();
    for _ in 0..counted {
        one.call(next.fetch_add(1, Ordering::Relaxed), now())
            .expect("a paid call");
    }
    let trips = match (before, one.round_trips()) {
        (Some(before), Some(after)) => format!("{}", (after - before) / counted),
        _ => "not counted".to_string(),
    };
    lines.push(format!("| round trips per paid call | – | {trips} |"));

    let two = PaidCalls::postgres(&url).expect("a second instance");
    let (mut alone, mut beside) = (0.0, 0.0);
    // Two rounds, alternated, so a neighbour's load weighs on both alike.
    for _ in 0..2 {
        alone += rate(&[&one], CALLERS, length, &next) / 2.0;
        beside += rate(&[&one, &two], CALLERS, length, &next) / 2.0;
    }
    lines.push(format!(
        "| paid calls/s, 1 instance × {CALLERS} callers | – | {alone:.0} |"
    ));
    lines.push(format!(
        "| paid calls/s, 2 instances × {CALLERS} callers | – | {beside:.0} ({:.2}×) |",
        beside / alone
    ));
    println!("{}", lines.join("\n"));
}
