//! The set-up every end-to-end test of `serve` writes: a manifest (the bundled video
//! example unless told), the provider's URL, and a state folder of the test's own, which
//! outlives each server the test starts on it (a restart is another `serve` on the same
//! folder).
//!
//! Takes: the provider's URL, then optionally another manifest and extra arguments.
//! Returns: connected sessions (`serve`), or the command to extend (`server`). Must
//! never: share a state folder between two tests.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use super::mcp_client::{Person, Serve, Session, Transport};

/// The bundled paid-video example: createVideo spends and starts a job, getVideo polls
/// it, listVideos is a free read.
pub(crate) fn video() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/manifests/video.yaml")
}

/// One test's set-up.
pub(crate) struct Test {
    serve: Serve,
    state: tempfile::TempDir,
}

impl Test {
    /// `serve examples/manifests/video.yaml --base-url URL --state <a folder of its own>`.
    pub(crate) fn new(url: &str) -> Test {
        let state = tempfile::tempdir().expect("a state folder");
        Test {
            serve: Serve::new(video(), url, state.path()),
            state,
        }
    }

    /// Serves `manifest` instead.
    pub(crate) fn manifest(mut self, manifest: impl AsRef<Path>) -> Test {
        self.serve = self.serve.manifest(manifest);
        self
    }

    /// Adds `arg` to every server's command line.
    pub(crate) fn arg(mut self, arg: &str) -> Test {
        self.serve = self.serve.arg(arg);
        self
    }

    /// The state folder every server of this test keeps its ledger and secret in.
    pub(crate) fn state(&self) -> &Path {
        self.state.path()
    }

    /// The command a server of this test starts with, to extend for one start.
    pub(crate) fn server(&self) -> Serve {
        self.serve.clone()
    }

    /// A server of this test, `person` connected to it over `transport`.
    pub(crate) async fn serve(&self, transport: Transport, person: Person) -> Session {
        self.serve.connect(transport, person).await
    }
}
