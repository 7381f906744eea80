//! A throwaway PostgreSQL cluster for the tests that need one: started once per test
//! binary run, in a temporary folder, listening only on a Unix socket there, with a
//! fresh database for each test (`Cluster::database`).
//!
//! Takes: PostgreSQL's programs (`initdb` on PATH or in /usr/lib/postgresql/*/bin).
//! Returns: connection URLs. Must never: skip a test when PostgreSQL is missing (it
//! fails, saying how to install it), or outlive the test binary.
//!
//! Stopping: a static is never dropped, so the server is started under a small shell that
//! holds a pipe from this process and stops it (and removes the folder) when the pipe
//! closes, which the kernel does however the test binary ends: normally, by a panic, or
//! killed. A cluster a crashed run left anyway (its watcher killed too) is found by its
//! pid file and stopped by the next run. Used by the ledger suite (`ledger/suite.rs`), and by the
//! root package's tests (its dev-dependency turns on the `testing` feature).
//!
//! For this crate's own tests, `tls::cluster` starts a second one that also listens on
//! 127.0.0.1 with TLS (`postgres/tls.rs`: its certificates made at each run).

use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock};

#[cfg(test)]
pub(crate) mod tls;

/// The running cluster.
pub struct Cluster {
    bin: PathBuf,
    /// The folder holding the data and the socket.
    dir: PathBuf,
    /// Its port: the socket's name, and the TCP port where it listens on one.
    port: u16,
    /// The watcher's end of the pipe: closed when this process ends (never before).
    _hold: Mutex<(Child, ChildStdin)>,
}

/// The folder names' prefix, by which a later run finds a leftover cluster.
const PREFIX: &str = "connectorgen-pg-";

static CLUSTER: OnceLock<Cluster> = OnceLock::new();
static DATABASES: AtomicU32 = AtomicU32::new(0);

/// The cluster of this test binary, started on first use.
pub fn cluster() -> &'static Cluster {
    CLUSTER.get_or_init(|| Cluster::start(5432, |_| Vec::new()))
}

/// Where PostgreSQL's programs are: the folder of `initdb` on PATH (through its links), or
/// the newest /usr/lib/postgresql/*/bin.
fn bin_dir() -> PathBuf {
    let on_path = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|dir| dir.join("initdb"))
            .find(|candidate| candidate.is_file())
    });
    let from_path = on_path
        .and_then(|initdb| std::fs::canonicalize(initdb).ok())
        .and_then(|initdb| initdb.parent().map(Path::to_path_buf));
    let installed = || {
        let mut dirs: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
            .into_iter()
            .flatten()
            .flatten()
            .map(|entry| entry.path().join("bin"))
            .filter(|bin| bin.join("initdb").is_file())
            .collect();
        dirs.sort_by_key(|dir| {
            dir.parent()
                .and_then(|v| v.file_name()?.to_str()?.parse::<u32>().ok())
                .unwrap_or(0)
        });
        dirs.pop()
    };
    from_path.or_else(installed).unwrap_or_else(|| {
        panic!(
            "PostgreSQL's initdb was found neither on PATH nor in /usr/lib/postgresql/*/bin: \
             the PostgreSQL ledger's tests need it (never skipped). Install it: \
             `apt-get install -y postgresql` (Debian, Ubuntu), `brew install postgresql` (macOS)"
        )
    })
}

/// Whether this process runs as root (initdb and postgres refuse to).
fn root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).trim() == "0")
}

/// `program` from PostgreSQL's folder, as the `postgres` user when this process is root.
fn as_owner(bin: &Path, program: &str) -> Command {
    if root() {
        let mut command = Command::new("runuser");
        command
            .args(["-u", "postgres", "--"])
            .arg(bin.join(program));
        command
    } else {
        Command::new(bin.join(program))
    }
}

fn run(mut command: Command, what: &str) {
    let out = command
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        out.status.success(),
        "{what} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Stops the clusters earlier runs left behind: a folder of ours whose recorded test
/// process is gone.
fn stop_leftovers(bin: &Path) {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in entries.flatten() {
        let dir = entry.path();
        let ours = dir
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with(PREFIX));
        let Some(owner) = std::fs::read_to_string(dir.join("owner"))
            .ok()
            .filter(|_| ours)
        else {
            continue;
        };
        if Path::new("/proc").join(owner.trim()).exists() {
            continue;
        }
        if dir.join("data/postmaster.pid").exists() {
            let mut stop = as_owner(bin, "pg_ctl");
            stop.arg("stop")
                .args(["-m", "immediate", "-D"])
                .arg(dir.join("data"));
            let _ = stop.stdin(Stdio::null()).output();
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

impl Cluster {
    /// A cluster on `port`, `prepare` given its folder once `initdb` has made the data
    /// folder in it and returning more of the server's settings (`-c name=value`).
    fn start(port: u16, prepare: impl FnOnce(&Path) -> Vec<String>) -> Cluster {
        let bin = bin_dir();
        stop_leftovers(&bin);
        let dir =
            std::env::temp_dir().join(format!("{PREFIX}{}-{}", std::process::id(), uuid_ish()));
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("owner"), std::process::id().to_string()).unwrap();
        if root() {
            run(
                {
                    let mut c = Command::new("chown");
                    c.arg("postgres:").arg(&dir);
                    c
                },
                "chown the cluster's folder to postgres",
            );
        }
        let data = dir.join("data");
        let mut initdb = as_owner(&bin, "initdb");
        initdb.arg("-D").arg(&data).args([
            "-U",
            "postgres",
            "-A",
            "trust",
            "-E",
            "UTF8",
            "--no-sync",
        ]);
        run(initdb, "initdb");
        let settings = prepare(&dir);
        // The watcher: starts the server, waits for this process's end (its stdin
        // closes), then stops the server and removes the folder. Settings after the
        // folder win over the ones written here.
        let script = r#"
            dir=$1
            shift
            "$0" -D "$dir/data" -k "$dir" -c listen_addresses= -c fsync=off \
                -c synchronous_commit=off -c full_page_writes=off -c max_connections=200 \
                "$@" >"$dir/server.log" 2>&1 &
            pid=$!
            cat >/dev/null
            kill -INT "$pid"
            wait "$pid"
            rm -rf "$dir"
        "#;
        let mut watcher = if root() {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--", "sh", "-c", script]);
            c
        } else {
            let mut c = Command::new("sh");
            c.args(["-c", script]);
            c
        };
        let mut child = watcher
            .arg(bin.join("postgres"))
            .arg(&dir)
            .arg("-c")
            .arg(format!("port={port}"))
            .args(settings.iter().flat_map(|setting| ["-c", setting]))
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the PostgreSQL watcher");
        let stdin = child.stdin.take().unwrap();
        let cluster = Cluster {
            bin,
            dir,
            port,
            _hold: Mutex::new((child, stdin)),
        };
        cluster.wait_ready();
        cluster
    }

    /// Until the server accepts connections: a bounded wait for start-up, never part of
    /// what a test checks.
    fn wait_ready(&self) {
        for _ in 0..600 {
            let ready = Command::new(self.bin.join("pg_isready"))
                .arg("-q")
                .arg("-h")
                .arg(&self.dir)
                .arg("-p")
                .arg(self.port.to_string())
                .stdin(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            if ready {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        let log = std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default();
        panic!("PostgreSQL did not start within 60 s:\n{log}");
    }

    /// The folder of the server's socket.
    pub fn socket_dir(&self) -> &Path {
        &self.dir
    }

    /// A new, empty database, and its URL.
    pub fn database(&self) -> String {
        let name = format!(
            "t{}_{}",
            std::process::id(),
            DATABASES.fetch_add(1, Ordering::SeqCst)
        );
        let mut createdb = Command::new(self.bin.join("createdb"));
        createdb
            .arg("-h")
            .arg(&self.dir)
            .arg("-p")
            .arg(self.port.to_string())
            .args(["-U", "postgres", &name]);
        run(createdb, "createdb");
        let host: String = self
            .dir
            .to_string_lossy()
            .chars()
            .map(|c| match c {
                '/' => "%2F".to_string(),
                c => c.to_string(),
            })
            .collect();
        format!("postgres://postgres@{host}:{}/{name}", self.port)
    }
}

impl Cluster {
    /// Runs `statement` in the database of `url` (one made by [`Cluster::database`]), as
    /// the cluster's superuser: a test's fault put in and taken out.
    pub fn sql(&self, url: &str, statement: &str) {
        let name = url.rsplit('/').next().unwrap_or_default();
        let mut psql = Command::new(self.bin.join("psql"));
        psql.arg("-h")
            .arg(&self.dir)
            .arg("-p")
            .arg(self.port.to_string())
            .args([
                "-U",
                "postgres",
                "-d",
                name,
                "-v",
                "ON_ERROR_STOP=1",
                "-c",
                statement,
            ]);
        run(psql, "psql");
    }
}

/// A transaction left open in a database, holding what its statement took (a lock) until
/// dropped: another session of the database in the way of the ledger's, so a store call
/// waits as long as the test says, not as long as a timer does.
pub struct Held {
    psql: Child,
}

impl Cluster {
    /// Begins a transaction in the database of `url`, runs `statement` in it, and returns
    /// once it ran, the transaction still open.
    pub fn hold(&self, url: &str, statement: &str) -> Held {
        use std::io::{BufRead as _, Write as _};
        let name = url.rsplit('/').next().unwrap_or_default();
        let mut psql = Command::new(self.bin.join("psql"))
            .arg("-h")
            .arg(&self.dir)
            .arg("-p")
            .arg(self.port.to_string())
            .args([
                "-U",
                "postgres",
                "-d",
                name,
                "-X",
                "-q",
                "-v",
                "ON_ERROR_STOP=1",
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("psql starts");
        let stdin = psql.stdin.as_mut().expect("piped stdin");
        writeln!(stdin, "BEGIN;\n{statement};\n\\echo held").expect("psql reads");
        let stdout = psql.stdout.take().expect("piped stdout");
        let said = std::io::BufReader::new(stdout).lines().next();
        assert!(
            matches!(&said, Some(Ok(line)) if line == "held"),
            "psql did not hold {statement:?}: {said:?}"
        );
        Held { psql }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        use std::io::Write as _;
        if let Some(stdin) = self.psql.stdin.as_mut() {
            let _ = writeln!(stdin, "ROLLBACK;");
        }
        // Closing its input ends psql, and its session with what it held.
        drop(self.psql.stdin.take());
        let _ = self.psql.wait();
    }
}

/// A short unique suffix without a random-number crate: the time's nanoseconds.
fn uuid_ish() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!("{nanos:x}")
}
