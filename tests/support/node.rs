//! The npm packages the tests run with node, installed from a folder of the repository
//! that pins them (`package.json` and `package-lock.json`): `tests/auth` (oidc-provider,
//! the authorization server), `tests/clients` (the MCP TypeScript SDK's client) and
//! `tests/browser` (playwright-core, which drives the distribution's Chromium).
//!
//! Takes: the folder, relative to the repository. Returns: the path of its installed
//! `node_modules`, after `npm ci --ignore-scripts` the first time: once per process, and
//! once per lockfile and node version on a machine, into a cache outside the repository
//! (`CONNECTORGEN_AUTH_SERVER_CACHE`, default
//! `${XDG_CACHE_HOME:-~/.cache}/connectorgen-auth-server`; one `node-<hash>` folder per
//! package.json, lockfile and node version), as scripts/real-task-clients.sh does for its
//! clients, so `cargo test` works on a fresh machine that has node and the npm registry.
//!
//! Must never: skip a test when node, npm or the registry is missing (it fails, saying
//! which), install into the repository, or leave a half install where a later run would
//! take it for a whole one.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, PoisonError};

/// What a test says when node or npm is missing.
pub(crate) const NEEDS_NODE: &str = "the OAuth tests run oidc-provider (tests/auth) and the MCP \
     TypeScript SDK's client (tests/clients), the browser test playwright-core (tests/browser), \
     and they need node >= 20 with npm on PATH (never skipped): install Node.js, e.g. \
     `apt-get install -y nodejs npm` or from nodejs.org";

/// The installed `node_modules` of `folder` (`"tests/auth"`, `"tests/clients"`), installed
/// on first use in this process.
pub(crate) fn installed(folder: &str) -> PathBuf {
    // Held across the install: two tests of this binary asking for the same folder wait
    // for the one install rather than running npm twice.
    static INSTALLED: Mutex<BTreeMap<String, PathBuf>> = Mutex::new(BTreeMap::new());
    let mut installed = INSTALLED.lock().unwrap_or_else(PoisonError::into_inner);
    installed
        .entry(folder.to_string())
        .or_insert_with(|| install(folder))
        .clone()
}

fn install(folder: &str) -> PathBuf {
    let node = Command::new("node")
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{NEEDS_NODE} ({e})"));
    let version = String::from_utf8_lossy(&node.stdout).trim().to_string();
    let major: u32 = version
        .trim_start_matches('v')
        .split('.')
        .next()
        .and_then(|m| m.parse().ok())
        .unwrap_or(0);
    assert!(major >= 20, "{NEEDS_NODE}; found node {version:?}");
    let dir_of = Path::new(env!("CARGO_MANIFEST_DIR")).join(folder);
    let read = |name: &str| {
        std::fs::read(dir_of.join(name)).unwrap_or_else(|e| panic!("{folder}/{name}: {e}"))
    };
    let package = read("package.json");
    let lock = read("package-lock.json");
    let cache = std::env::var_os("CONNECTORGEN_AUTH_SERVER_CACHE")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("XDG_CACHE_HOME").map(|c| PathBuf::from(c).join("connectorgen-auth-server")))
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/connectorgen-auth-server")))
        .expect("CONNECTORGEN_AUTH_SERVER_CACHE, XDG_CACHE_HOME or HOME: where to install the node packages");
    // The folder's name is not in the key: the two package.json files differ, and the
    // key of tests/auth stays the one its earlier installs were made under.
    let dir = cache.join(format!(
        "node-{:016x}",
        fnv1a(&[&package, &lock, version.as_bytes()])
    ));
    if dir.join(".installed").is_file() {
        return dir.join("node_modules");
    }
    std::fs::create_dir_all(&cache).unwrap_or_else(|e| panic!("create {}: {e}", cache.display()));
    // Installed in a folder of its own, then renamed into place: a run killed half way
    // leaves no half install behind, and two test binaries installing at once both end
    // with the same complete one.
    let tmp = tempfile::Builder::new()
        .prefix(".node.")
        .tempdir_in(&cache)
        .expect("a folder to install into");
    std::fs::write(tmp.path().join("package.json"), &package).unwrap();
    std::fs::write(tmp.path().join("package-lock.json"), &lock).unwrap();
    let out = Command::new("npm")
        .args([
            "ci",
            "--no-audit",
            "--no-fund",
            "--ignore-scripts",
            "--loglevel=error",
        ])
        .current_dir(tmp.path())
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{NEEDS_NODE} (npm: {e})"));
    assert!(
        out.status.success(),
        "`npm ci` of {folder}/package-lock.json failed (the npm registry must be reachable \
         the first time; then {} holds it): {}{}",
        cache.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::write(tmp.path().join(".installed"), "").unwrap();
    let tmp = tmp.keep();
    if std::fs::rename(&tmp, &dir).is_err() {
        // Another process got there first; its install is the same one.
        let _ = std::fs::remove_dir_all(&tmp);
        assert!(
            dir.join(".installed").is_file(),
            "could not move the install into {}",
            dir.display()
        );
    }
    dir.join("node_modules")
}

/// FNV-1a over the parts: a cache key that stays the same across Rust releases (std's
/// hasher does not promise to), with no hashing crate.
fn fnv1a(parts: &[&[u8]]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for byte in part.iter().chain(b"\0") {
            hash ^= u64::from(*byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    }
    hash
}
