//! Running the built `connectorgen` binary from integration tests, as a user would:
//! with a bound that turns a hang into a failure, and a guard that ends the child when a
//! test fails. Each test crate uses a subset of these, hence the allow.
#![allow(dead_code)]

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A bound that only catches a hang or a runaway, never a slow machine: how fast bombs
/// and runaway templates are stopped is a measured figure, stated in
/// docs/guarantees.md, not a timed test that would flake when CI shares the machine. Memory
/// bounds, which are deterministic, are enforced with `ulimit -v` instead.
pub(crate) const NO_HANG: Duration = Duration::from_secs(30);

/// The binary with colour left to the test (`NO_COLOR` removed from the environment).
pub(crate) fn bin() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_connectorgen"));
    cmd.env_remove("NO_COLOR");
    cmd
}

/// The binary with colour off, so assertions can read diagnostics.
pub(crate) fn plain() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_connectorgen"));
    cmd.env("NO_COLOR", "1");
    cmd
}

/// Runs to completion, or fails the test if it takes longer than `limit` (a hang must
/// fail the test, not stall it). Returns the output and how long it took.
pub(crate) fn run_within(mut cmd: Command, limit: Duration) -> (Output, Duration) {
    let start = Instant::now();
    let mut child = ChildGuard::spawn(
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped()),
    );
    // Drain both pipes on threads so a chatty child cannot block on a full pipe.
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = out.read_to_end(&mut buf);
        buf
    });
    let err_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = err.read_to_end(&mut buf);
        buf
    });
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        // The guard kills and reaps the child as this panic unwinds.
        assert!(
            start.elapsed() <= limit,
            "still running after {limit:?}: {cmd:?}"
        );
        std::thread::sleep(Duration::from_millis(2));
    };
    let elapsed = start.elapsed();
    let output = Output {
        status,
        stdout: out_reader.join().unwrap(),
        stderr: err_reader.join().unwrap(),
    };
    (output, elapsed)
}

/// `connectorgen build ARGS` in `dir`, colour off, within a minute.
pub(crate) fn build(dir: &Path, args: &[&str]) -> Output {
    let mut cmd = plain();
    cmd.current_dir(dir).arg("build").args(args);
    run_within(cmd, Duration::from_secs(60)).0
}

/// Diagnostic text without whitespace or miette's gutter, so a phrase can be found
/// wherever the report wrapped it.
pub(crate) fn squash(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_whitespace() && *c != '│')
        .collect()
}

/// Whether `stderr` says `phrase`, however it was wrapped.
pub(crate) fn says(stderr: &str, phrase: &str) -> bool {
    squash(stderr).contains(&squash(phrase))
}

/// Exit 2 and exactly one line on stderr, starting `error: ` and containing `expect`.
pub(crate) fn assert_one_line_exit_2(out: &Output, expect: &str) {
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    assert!(
        stderr.starts_with("error: ") && stderr.contains(expect),
        "expected {expect:?} in {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// The names in a folder, sorted.
pub(crate) fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// `cmd` as it would run for an ordinary user, so that file permissions apply to it:
/// unchanged when the tests do not run as root; as root (CI), wrapped in
/// `setpriv --reuid=65534 --regid=65534 --clear-groups` (util-linux) to run as
/// `nobody`, with the same arguments, environment and folder. Every folder on the way to
/// what it reads must then be open to others (tempfile makes its folders 0700: see
/// `open_to_others`). `Err` says why it cannot be done here, for the test to print.
#[cfg(unix)]
pub(crate) fn unprivileged(cmd: Command) -> Result<Command, String> {
    use std::os::unix::fs::MetadataExt as _;
    // Our effective user id without libc: the owner of a file we just created.
    let probe = tempfile::NamedTempFile::new().map_err(|e| e.to_string())?;
    let uid = probe.as_file().metadata().map_err(|e| e.to_string())?.uid();
    if uid != 0 {
        return Ok(cmd);
    }
    let usable = Command::new("setpriv")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !usable {
        return Err(
            "running as root and setpriv (util-linux) is not installed, so \
                    the command cannot be run without root's permissions"
                .to_string(),
        );
    }
    let mut wrapped = Command::new("setpriv");
    wrapped
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(cmd.get_program())
        .args(cmd.get_args());
    for (key, value) in cmd.get_envs() {
        match value {
            Some(value) => wrapped.env(key, value),
            None => wrapped.env_remove(key),
        };
    }
    if let Some(dir) = cmd.get_current_dir() {
        wrapped.current_dir(dir);
    }
    Ok(wrapped)
}

/// Lets other users into `dir` (0755), for `unprivileged` commands.
#[cfg(unix)]
pub(crate) fn open_to_others(dir: &Path) {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Runs the binary in `dir` with colour off, and waits for it.
pub(crate) fn run(dir: &Path, args: &[&str]) -> Output {
    bin()
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .expect("the binary runs")
}

/// The repository root (examples, cases, fixtures).
pub(crate) fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub(crate) fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The manifests whose `check --format sarif` reports the tests read (`workspace`'s
/// arguments): an invalid case, a lint case and a built example.
pub(crate) const SARIF_SOURCES: [(&str, bool); 3] = [
    (
        "tests/cases/invalid/unsafe-poll-target--among-many-problems.yaml",
        false,
    ),
    ("tests/cases/lint/vague-summary.yaml", false),
    ("examples/manifests/video.yaml", true),
];

/// A temporary folder holding `connector.yaml` (copied from `source`, relative to the
/// repository root) and, when `built`, its outputs.
pub(crate) fn workspace(source: &str, built: bool) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(root().join(source), dir.path().join("connector.yaml")).unwrap();
    if built {
        let out = run(dir.path(), &["build"]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    }
    dir
}

/// A spawned child process that is killed and reaped when the guard is dropped, so a
/// failing test (a panic while the child runs) never leaves it running after the test
/// binary exits. Use it for every child that may outlive an assertion: `build --watch`,
/// a build to be killed, anything waited on with a timeout.
///
/// Derefs to the `Child`; `wait_with_output` consumes the guard like
/// `Child::wait_with_output`, and a child already reaped is not touched again.
pub(crate) struct ChildGuard(Option<std::process::Child>);

impl ChildGuard {
    /// Spawns `cmd`; panics (failing the test) if it cannot start.
    pub(crate) fn spawn(cmd: &mut Command) -> ChildGuard {
        ChildGuard(Some(cmd.spawn().expect("the child process starts")))
    }

    /// Waits for the child to exit and collects its piped stdout and stderr.
    pub(crate) fn wait_with_output(mut self) -> std::io::Result<Output> {
        let child = self.0.take().expect("the child is still guarded");
        child.wait_with_output()
    }
}

impl std::ops::Deref for ChildGuard {
    type Target = std::process::Child;
    fn deref(&self) -> &Self::Target {
        self.0.as_ref().expect("the child is still guarded")
    }
}

impl std::ops::DerefMut for ChildGuard {
    fn deref_mut(&mut self) -> &mut Self::Target {
        self.0.as_mut().expect("the child is still guarded")
    }
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        if let Some(child) = self.0.as_mut() {
            // Both fail only if the child was already reaped: then there is nothing to end.
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
