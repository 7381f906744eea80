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
