//! Running the built `connectorgen` binary from integration tests, as a user would.
//! Each test crate uses a subset of these, hence the allow.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The binary with colour left to the test (NO_COLOR removed from the environment).
pub fn bin() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_connectorgen"));
    cmd.env_remove("NO_COLOR");
    cmd
}

/// Runs the binary in `dir` with colour off, and waits for it.
pub fn run(dir: &Path, args: &[&str]) -> Output {
    bin()
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .expect("the binary runs")
}

/// The repository root (examples, cases, fixtures).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A temporary folder holding `connector.yaml` (copied from `source`, relative to the
/// repository root) and, when `built`, its outputs.
pub fn workspace(source: &str, built: bool) -> tempfile::TempDir {
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
pub struct ChildGuard(Option<std::process::Child>);

impl ChildGuard {
    /// Spawns `cmd`; panics (failing the test) if it cannot start.
    pub fn spawn(cmd: &mut Command) -> ChildGuard {
        ChildGuard(Some(cmd.spawn().expect("the child process starts")))
    }

    /// Waits for the child to exit and collects its piped stdout and stderr.
    pub fn wait_with_output(mut self) -> std::io::Result<Output> {
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
