//! The ledger in PostgreSQL, shared by several instances of `serve` (`--ledger
//! postgres://…`): the same trait, rules and bounds as SQLite, with what one process
//! kept to itself made a property of the row.
//!
//! Takes: a connection URL, the connector's name, the retention and the lease (how long a
//! send may take). Returns: a `Ledger`, and the token secret every instance shares.
//! Must never: let two instances both win one claim, or let a row that another instance
//! is sending look free.
//!
//! - One claim is one `SERIALIZABLE` transaction (a serialization failure is run again,
//!   from the look-up on), taken while holding a session advisory lock on the connector,
//!   so instances take turns as SQLite's writers do and the retry is rare. The nonce is
//!   unique within a connector and principal.
//! - "Being sent right now" is the row's lease: a send sets `sending_until` (the
//!   database's clock, so the instances' clocks need not agree) to now + the longest a
//!   send may take, and clears it when the outcome is recorded or the call goes away. A
//!   killed instance's lease runs out by itself; until then its call counts as out at the
//!   provider, which it may still be.
//! - Migrations are versioned (`connectorgen_migrations`) and run at start-up, one
//!   instance at a time (an advisory lock); a database migrated by a newer connectorgen is
//!   refused rather than written in a shape this one does not know.
//!
//! The synchronous `postgres` client drives a tokio runtime of its own, which panics when
//! started inside serve's; every call therefore runs on a scoped thread outside it, and
//! holds serve's thread for the round trip, as SQLite's `fsync` does. No TLS: see
//! `connect`.

use std::sync::Mutex;

use postgres::error::SqlState;
use postgres::{Client, IsolationLevel, NoTls, Row, Transaction};

use super::{
    Claim, Decide, Decision, Entry, Found, Ledger, LedgerError, Outcome, ROW_BYTES, Retention,
    Status,
};

/// The advisory locks' first key: "CGEN". The second is the connector's hash (claims) or 0
/// (migrations).
const LOCKS: i32 = 0x4347_454e;

/// Times a claim whose transaction failed to serialize is run again before giving up.
const SERIALIZE_TRIES: u32 = 20;

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
];

/// As SQLite's (`sqlite.rs`): without `task`, which only `Ledger::entry` reads.
const COLUMNS: &str = "id, tool, args_hash, key, nonce, status, http_status, job_id, result, \
                       created, updated, attempts, media_type, sending_until";

/// The longest a ledger operation waits for a lock (another instance's claim): a send's
/// lease covers it, as recording an outcome may wait that long.
pub(crate) const LOCK_WAIT_SECONDS: u64 = 10;

/// The ledger in a PostgreSQL database.
pub(crate) struct PgLedger {
    /// `None` only while being dropped (see `Drop`).
    client: Mutex<Option<Client>>,
    /// How to connect again when the connection is lost (a restart of the database).
    config: postgres::Config,
    connector: String,
    retention: Retention,
    /// Seconds a send may take, the lease a send holds its row for.
    lease: i64,
    /// This process among the instances: a send's lease is cleared only by its sender.
    sender: String,
}

impl PgLedger {
    /// Connects to `url` and brings the schema up to date.
    pub(crate) fn open(
        url: &str,
        connector: &str,
        retention: Retention,
        lease: u64,
    ) -> Result<PgLedger, LedgerError> {
        let config = config(url)?;
        let client = outside_tokio(|| {
            let mut client = connect(&config)?;
            migrate(&mut client)?;
            Ok::<_, LedgerError>(client)
        })??;
        Ok(PgLedger {
            client: Mutex::new(Some(client)),
            config,
            connector: connector.to_string(),
            retention,
            lease: i64::try_from(lease).unwrap_or(i64::MAX),
            sender: uuid::Uuid::new_v4().to_string(),
        })
    }

    /// The secret that signs confirmation values, the same for every instance: made by the
    /// first one to ask, kept in the database.
    pub(crate) fn secret(&self) -> Result<Vec<u8>, LedgerError> {
        let mut fresh = Vec::with_capacity(64);
        for _ in 0..4 {
            fresh.extend_from_slice(uuid::Uuid::new_v4().as_bytes());
        }
        self.with(move |client| {
            client.execute(
                "INSERT INTO connectorgen_secret (id, secret) VALUES (1, $1) \
                 ON CONFLICT (id) DO NOTHING",
                &[&fresh],
            )?;
            Ok(client
                .query_one("SELECT secret FROM connectorgen_secret WHERE id = 1", &[])?
                .get(0))
        })
    }

    /// Runs `f` on the connection, on a thread outside tokio.
    fn with<T: Send>(
        &self,
        f: impl FnOnce(&mut Client) -> Result<T, LedgerError> + Send,
    ) -> Result<T, LedgerError> {
        let mut guard = self
            .client
            .lock()
            .map_err(|_| LedgerError::Store("a previous ledger operation panicked".into()))?;
        let client = guard
            .as_mut()
            .ok_or_else(|| LedgerError::Store("the ledger is closed".into()))?;
        let config = &self.config;
        let ran = outside_tokio(move || {
            // A connection the database closed (a restart, an idle-transaction timeout)
            // is made again; what it held (a claim's lock) went with it.
            if client.is_closed() {
                *client = connect(config)?;
            }
            f(client)
        });
        if ran.is_err() {
            // It panicked, maybe inside a transaction, holding the connector's advisory
            // lock (a session lock: every other instance's claims would wait on it until
            // this process ends). The session goes, and its locks with it; the next
            // operation connects again (or finds the ledger closed, and refuses).
            // (The client owns a runtime, dropped outside serve's, as in `Drop`.)
            let old = guard.take();
            *guard = outside_tokio(move || {
                drop(old);
                connect(config).ok()
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
        self.with(move |client| {
            Ok(client
                .query_one("SELECT current_setting($1)", &[&name])?
                .get(0))
        })
    }

    /// One transaction under the connector's lock, run again while it fails to serialize.
    fn transaction<T: Send>(
        &self,
        mut f: impl FnMut(&mut Transaction<'_>, i64) -> Result<T, Retry> + Send,
    ) -> Result<T, LedgerError> {
        let connector = self.connector.clone();
        self.with(move |client| {
            client.execute(
                "SELECT pg_advisory_lock($1, hashtext($2))",
                &[&LOCKS, &connector],
            )?;
            let result = (|| {
                let mut tries = 0;
                loop {
                    tries += 1;
                    let attempt = (|| -> Result<T, Retry> {
                        let mut tx = client
                            .build_transaction()
                            .isolation_level(IsolationLevel::Serializable)
                            .start()?;
                        let now: i64 = tx
                            .query_one("SELECT EXTRACT(EPOCH FROM clock_timestamp())::BIGINT", &[])?
                            .get(0);
                        let value = f(&mut tx, now)?;
                        tx.commit()?;
                        Ok(value)
                    })();
                    match attempt {
                        Err(Retry::Again) if tries < SERIALIZE_TRIES => {}
                        Err(Retry::Again) => {
                            return Err(LedgerError::Store(format!(
                                "the claim did not serialize in {SERIALIZE_TRIES} tries"
                            )));
                        }
                        Err(Retry::Failed(e)) => return Err(e),
                        Ok(value) => return Ok(value),
                    }
                }
            })();
            let unlocked = client.execute(
                "SELECT pg_advisory_unlock($1, hashtext($2))",
                &[&LOCKS, &connector],
            );
            let value = result?;
            unlocked?;
            Ok(value)
        })
    }
}

impl Drop for PgLedger {
    fn drop(&mut self) {
        // The client owns a runtime, which may not be dropped inside serve's.
        let client = self.client.get_mut().ok().and_then(Option::take);
        let _ = outside_tokio(move || drop(client));
    }
}

/// A failed attempt: run again (a serialization failure, a deadlock) or give up.
enum Retry {
    Again,
    Failed(LedgerError),
}

impl From<postgres::Error> for Retry {
    fn from(e: postgres::Error) -> Self {
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

impl From<postgres::Error> for LedgerError {
    fn from(e: postgres::Error) -> Self {
        LedgerError::Store(text(&e))
    }
}

impl From<Retry> for LedgerError {
    fn from(r: Retry) -> Self {
        match r {
            Retry::Again => LedgerError::Store("the transaction did not serialize".into()),
            Retry::Failed(e) => e,
        }
    }
}

/// The error with the server's own message (`Display` alone says only "db error").
fn text(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{}: {}", db.severity(), db.message()),
        None => e.to_string(),
    }
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

/// The connection settings of `url`. No TLS is built in: a URL that asks for it
/// (`sslmode=require`) is refused, and one to a remote host must say `sslmode=disable`,
/// so no connection goes out unencrypted without its author having said so.
fn config(url: &str) -> Result<postgres::Config, LedgerError> {
    use postgres::config::{Host, SslMode};
    let mut config: postgres::Config = url
        .parse()
        .map_err(|e| LedgerError::Store(format!("not a PostgreSQL URL: {e}")))?;
    if config.get_ssl_mode() == SslMode::Require {
        return Err(LedgerError::Store(
            "TLS to PostgreSQL is not supported (sslmode=require): connect over a Unix \
             socket, loopback, or a tunnel, with sslmode=disable (docs/serve.md, \"Several \
             instances\")"
                .into(),
        ));
    }
    // `hostaddr` is the address actually dialled when given: `host=localhost` with a
    // remote `hostaddr` is remote.
    let remote = config.get_hosts().iter().any(|host| match host {
        Host::Tcp(name) => !matches!(name.as_str(), "localhost" | "127.0.0.1" | "::1"),
        #[cfg(unix)]
        Host::Unix(_) => false,
    }) || config.get_hostaddrs().iter().any(|a| !a.is_loopback());
    if remote && config.get_ssl_mode() != SslMode::Disable {
        return Err(LedgerError::Store(
            "a remote database would be reached without TLS, which is not supported: reach \
             it through a tunnel (SSH, WireGuard) and add sslmode=disable to say so \
             (docs/serve.md, \"Several instances\")"
                .into(),
        ));
    }
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(std::time::Duration::from_secs(10));
    }
    config.application_name("connectorgen serve");
    Ok(config)
}

/// `url` without its password, for messages and the start-up line: the password as the
/// driver reads it (from a URL's user part, however many `/` or `?` it holds, or from a
/// `password=` setting in either form) is masked wherever it appears, as written and
/// percent-encoded; a value the driver cannot read is not shown at all.
pub(crate) fn shown(url: &str) -> String {
    let Ok(config) = url.parse::<postgres::Config>() else {
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

/// A connection, with bounds on waiting: a claim waits at most 10 s for another
/// instance's turn, and a transaction left open by a stuck instance is ended by the
/// database after 60 s (its locks with it).
fn connect(config: &postgres::Config) -> Result<Client, LedgerError> {
    let mut client = config
        .connect(NoTls)
        .map_err(|e| LedgerError::Store(format!("could not connect: {}", text(&e))))?;
    client.batch_execute(&format!(
        "SET lock_timeout = '{LOCK_WAIT_SECONDS}s'; \
             SET idle_in_transaction_session_timeout = '60s'"
    ))?;
    // A claim must be on disk before its request goes out: on a server tuned with
    // `synchronous_commit = off` a commit is acknowledged before it is flushed, and a
    // crash of the database then forgets a request that was sent (the identical call,
    // even under the same consent, would be a new request with a new retry key). Every
    // other value (`local`, `on`, `remote_write`, `remote_apply`) flushes it locally.
    let commits: String = client.query_one("SHOW synchronous_commit", &[])?.get(0);
    if commits == "off" {
        client.batch_execute("SET synchronous_commit = on")?;
    }
    Ok(client)
}

/// Applies the migrations this database lacks, one instance at a time.
fn migrate(client: &mut Client) -> Result<(), LedgerError> {
    let mut tx = client.transaction()?;
    tx.execute("SELECT pg_advisory_xact_lock($1, 0)", &[&LOCKS])?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS connectorgen_migrations (
             version INTEGER PRIMARY KEY,
             applied TIMESTAMPTZ NOT NULL DEFAULT now()
         )",
    )?;
    let done: i32 = tx
        .query_one(
            "SELECT COALESCE(MAX(version), 0) FROM connectorgen_migrations",
            &[],
        )?
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
        tx.batch_execute(sql)?;
        tx.execute(
            "INSERT INTO connectorgen_migrations (version) VALUES ($1)",
            &[&version],
        )?;
    }
    tx.commit()?;
    Ok(())
}

fn entry(row: &Row, now: i64) -> Entry {
    let seconds = |i: usize| u64::try_from(row.get::<_, i64>(i)).unwrap_or(0);
    Entry {
        id: row.get(0),
        tool: row.get(1),
        args_hash: row.get(2),
        key: row.get(3),
        nonce: row.get(4),
        status: Status::parse(row.get(5)),
        http_status: row
            .get::<_, Option<i32>>(6)
            .and_then(|s| u16::try_from(s).ok()),
        job_id: row.get(7),
        result: row.get(8),
        created: seconds(9),
        updated: seconds(10),
        attempts: u32::try_from(row.get::<_, i32>(11)).unwrap_or(0),
        media_type: row.get(12),
        sending: row
            .get::<_, Option<i64>>(13)
            .is_some_and(|until| until > now),
        task: if row.len() > 14 { row.get(14) } else { None },
    }
}

fn seconds(t: u64) -> i64 {
    i64::try_from(t).unwrap_or(i64::MAX)
}

/// The rows' count and the bytes they hold.
/// The rows' count and the bytes they hold, from the counters the triggers of migration
/// 4 keep (`connectorgen_usage`): one row read, whatever the ledger holds.
fn usage(tx: &mut Transaction<'_>, connector: &str) -> Result<(u64, u64), Retry> {
    let (rows, answers) = tx
        .query_opt(
            "SELECT rows, bytes FROM connectorgen_usage WHERE connector = $1",
            &[&connector],
        )?
        .map_or((0, 0), |row| (row.get::<_, i64>(0), row.get::<_, i64>(1)));
    let rows = u64::try_from(rows).unwrap_or(0);
    let answers = u64::try_from(answers).unwrap_or(0);
    Ok((rows, rows.saturating_mul(ROW_BYTES).saturating_add(answers)))
}

fn room(
    tx: &mut Transaction<'_>,
    connector: &str,
    retention: Retention,
    now: u64,
) -> Result<(), Retry> {
    let (rows, used) = usage(tx, connector)?;
    if used.saturating_add(ROW_BYTES) <= retention.max_bytes {
        return Ok(());
    }
    let mut soonest = u64::MAX;
    for (nonce, test) in [(false, "IS NULL"), (true, "IS NOT NULL")] {
        let oldest: Option<i64> = tx
            .query_one(
                &format!(
                    "SELECT MIN(updated) FROM connectorgen_calls WHERE connector = $1 \
                     AND nonce {test}"
                ),
                &[&connector],
            )?
            .get(0);
        if let Some(updated) = oldest {
            let at = u64::try_from(updated)
                .unwrap_or(0)
                .saturating_add(retention.keep(nonce));
            soonest = soonest.min(at.saturating_sub(now));
        }
    }
    Err(Retry::Failed(LedgerError::Full {
        rows,
        used,
        max: retention.max_bytes,
        wait: soonest,
    }))
}

impl Ledger for PgLedger {
    fn claim(
        &self,
        claim: &Claim<'_>,
        decide: &mut Decide<'_>,
    ) -> Result<(Found, Option<Entry>), LedgerError> {
        let connector = self.connector.as_str();
        let retention = self.retention;
        let (lease, sender) = (self.lease, self.sender.as_str());
        self.transaction(|tx, db_now| {
            let busy: Vec<i64> = claim.busy.to_vec();
            // Rows past their keeping, none being sent by anyone.
            for (nonce, test) in [(false, "IS NULL"), (true, "IS NOT NULL")] {
                let Some(before) = claim.now.checked_sub(retention.keep(nonce)) else {
                    continue;
                };
                tx.execute(
                    &format!(
                        "DELETE FROM connectorgen_calls WHERE connector = $1 AND updated < $2 \
                         AND nonce {test} AND NOT (id = ANY($3)) \
                         AND (sending_until IS NULL OR sending_until <= $4)"
                    ),
                    &[&connector, &seconds(before), &busy, &db_now],
                )?;
            }
            let by_nonce = match claim.nonce {
                Some(nonce) => tx
                    .query_opt(
                        &format!(
                            "SELECT {COLUMNS} FROM connectorgen_calls WHERE connector = $1 \
                             AND principal = $2 AND nonce = $3"
                        ),
                        &[&connector, &claim.principal, &nonce],
                    )?
                    .map(|row| entry(&row, db_now)),
                None => None,
            };
            let latest = tx
                .query_opt(
                    &format!(
                        "SELECT {COLUMNS} FROM connectorgen_calls WHERE connector = $1 \
                         AND principal = $2 AND tool = $3 AND args_hash = $4 AND created >= $5 \
                         AND status <> 'rejected' ORDER BY created DESC, id DESC LIMIT 1"
                    ),
                    &[
                        &connector,
                        &claim.principal,
                        &claim.tool,
                        &claim.args_hash,
                        &seconds(claim.since),
                    ],
                )?
                .map(|row| entry(&row, db_now));
            let last_id: Option<i64> = tx
                .query_one(
                    "SELECT MAX(id) FROM connectorgen_calls WHERE connector = $1 \
                     AND principal = $2 AND tool = $3 AND args_hash = $4",
                    &[&connector, &claim.principal, &claim.tool, &claim.args_hash],
                )?
                .get(0);
            let found = Found {
                by_nonce,
                latest,
                last_id,
            };
            let until = db_now.saturating_add(lease);
            let written = match decide(&found) {
                Decision::Insert { key, nonce } => {
                    room(tx, connector, retention, claim.now)?;
                    let row = tx.query_one(
                        &format!(
                            "INSERT INTO connectorgen_calls (connector, principal, tool, \
                             args_hash, key, nonce, status, created, updated, sending_until, \
                             sender) VALUES ($1, $2, $3, $4, $5, $6, 'pending', $7, $7, $8, $9) \
                             RETURNING {COLUMNS}"
                        ),
                        &[
                            &connector,
                            &claim.principal,
                            &claim.tool,
                            &claim.args_hash,
                            &key,
                            &nonce,
                            &seconds(claim.now),
                            &until,
                            &sender,
                        ],
                    )?;
                    Some(entry(&row, db_now))
                }
                Decision::Retry(id) => tx
                    .query_opt(
                        &format!(
                            "UPDATE connectorgen_calls SET attempts = attempts + 1, \
                             updated = $2, sending_until = $3, sender = $4 \
                             WHERE id = $1 AND connector = $5 RETURNING {COLUMNS}"
                        ),
                        &[&id, &seconds(claim.now), &until, &sender, &connector],
                    )?
                    .map(|row| entry(&row, db_now)),
                Decision::Nothing => None,
            };
            Ok((found, written))
        })
    }

    fn finish(&self, id: i64, outcome: &Outcome, now: u64) -> Result<(), LedgerError> {
        let connector = self.connector.as_str();
        let retention = self.retention;
        let sender = self.sender.as_str();
        self.transaction(|tx, _| {
            let (_, used) = usage(tx, connector)?;
            let row = tx
                .query_opt(
                    "SELECT bytes, COALESCE(octet_length(task), 0)::BIGINT FROM connectorgen_calls \
                     WHERE id = $1 AND connector = $2",
                    &[&id, &connector],
                )?
                .ok_or_else(|| {
                    LedgerError::Store(format!("row {id} is no longer in the ledger"))
                })?;
            let (kept, task): (i64, i64) = (row.get(0), row.get(1));
            // As in SQLite: the status is always recorded, the body only when it fits.
            let result = outcome.result.as_deref().filter(|text| {
                retention.fits(
                    used,
                    kept.unsigned_abs(),
                    (text.len() as u64).saturating_add(task.unsigned_abs()),
                )
            });
            let bytes = result.map_or(kept, |text| {
                i64::try_from(text.len())
                    .unwrap_or(i64::MAX)
                    .saturating_add(task)
            });
            let http_status = outcome.http_status.map(i32::from);
            tx.execute(
                "UPDATE connectorgen_calls SET status = $2, http_status = $3, \
                 job_id = COALESCE($4, job_id), result = COALESCE($5, result), updated = $6, \
                 media_type = COALESCE($7, media_type), bytes = $8, \
                 sending_until = CASE WHEN sender = $9 THEN NULL ELSE sending_until END \
                 WHERE id = $1",
                &[
                    &id,
                    &outcome.status.as_str(),
                    &http_status,
                    &outcome.job_id,
                    &result,
                    &seconds(now),
                    &outcome.media_type,
                    &bytes,
                    &sender,
                ],
            )?;
            Ok(())
        })
    }

    fn room(&self, now: u64) -> Result<(), LedgerError> {
        let connector = self.connector.as_str();
        let retention = self.retention;
        self.transaction(|tx, _| room(tx, connector, retention, now))
    }

    fn keep_task(&self, id: i64, task: &str) -> Result<bool, LedgerError> {
        let connector = self.connector.as_str();
        let retention = self.retention;
        self.transaction(|tx, _| {
            let (_, used) = usage(tx, connector)?;
            let Some(row) = tx.query_opt(
                "SELECT COALESCE(octet_length(task), 0)::BIGINT FROM connectorgen_calls \
                 WHERE id = $1 AND connector = $2",
                &[&id, &connector],
            )?
            else {
                return Ok(false);
            };
            let old: i64 = row.get(0);
            let new = task.len() as u64;
            if !retention.fits(used, old.unsigned_abs(), new) {
                return Ok(false);
            }
            tx.execute(
                "UPDATE connectorgen_calls SET task = $2, bytes = bytes - $3 + $4 WHERE id = $1",
                &[&id, &task, &old, &i64::try_from(new).unwrap_or(i64::MAX)],
            )?;
            Ok(true)
        })
    }

    fn entry(&self, id: i64, principal: &str) -> Result<Option<Entry>, LedgerError> {
        let connector = self.connector.clone();
        let principal = principal.to_string();
        self.with(move |client| {
            let now: i64 = client
                .query_one("SELECT EXTRACT(EPOCH FROM clock_timestamp())::BIGINT", &[])?
                .get(0);
            Ok(client
                .query_opt(
                    &format!(
                        "SELECT {COLUMNS}, task FROM connectorgen_calls WHERE id = $1 \
                         AND connector = $2 AND principal = $3"
                    ),
                    &[&id, &connector, &principal],
                )?
                .map(|row| entry(&row, now)))
        })
    }

    fn renew(&self, id: i64) {
        let connector = self.connector.clone();
        let sender = self.sender.clone();
        let lease = self.lease;
        // Only a lease this process still has: one that ran out and was taken by another
        // instance is that instance's now.
        let _ = self.with(move |client| {
            client.execute(
                "UPDATE connectorgen_calls SET sending_until = \
                 EXTRACT(EPOCH FROM clock_timestamp())::BIGINT + $4 \
                 WHERE id = $1 AND connector = $2 AND sender = $3 AND status = 'pending'",
                &[&id, &connector, &sender, &lease],
            )?;
            Ok(())
        });
    }

    fn release(&self, id: i64) {
        let connector = self.connector.clone();
        let sender = self.sender.clone();
        let _ = self.with(move |client| {
            client.execute(
                "UPDATE connectorgen_calls SET sending_until = NULL \
                 WHERE id = $1 AND connector = $2 AND sender = $3",
                &[&id, &connector, &sender],
            )?;
            Ok(())
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_never_shows_and_tls_or_a_bare_remote_host_is_refused() {
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
        let e = config("postgres://app:pw@localhost/ledger?sslmode=require")
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("TLS to PostgreSQL is not supported"), "{e}");
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
