//! A real client's authorization flow end to end (issue 45): the MCP TypeScript SDK's
//! own OAuth support (`@modelcontextprotocol/client`, pinned by
//! tests/clients/package-lock.json) run by tests/clients/ts-oauth.mjs against the real
//! `serve --http --auth-issuer`, the reference provider and oidc-provider, all on
//! loopback. The script does what a person's client does: the 401, discovery, dynamic
//! registration, PKCE, the authorization code flow through the development login, a
//! read, the paid call's 403 and the SDK's step-up, then serve's consent question; it
//! prints `ok`/`FAIL`/`saw` lines (tests/clients/README.md) and exits 1 on a FAIL. This
//! test installs the pinned packages (`support::node`), starts the three servers, runs
//! the script once with a deadline, and checks its verdict and what reached the provider.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use super::e2e::Test;
use super::provider::{Provider, Switches, TOKEN};
use crate::support::authz::AuthServer;
use crate::support::node::{self, NEEDS_NODE};

const SCOPES: &str = "vidgen:read vidgen:change vidgen:spend";

/// The bound on the whole script (it has its own, shorter, per step): a hang becomes a
/// failure with the script's output, never a stuck test binary.
const SCRIPT: Duration = Duration::from_secs(180);

#[tokio::test]
async fn the_typescript_sdk_signs_in_reads_steps_up_for_a_paid_call_and_meets_consent() {
    let p = Provider::start(Switches::default());
    let auth = AuthServer::start(SCOPES);
    let t = Test::new(&p.url()).arg("--auth-issuer").arg(&auth.issuer());
    let l = t.server().listen().await;

    // A copy of the script beside a link to the installed packages: node resolves the
    // SDK from the script's real folder, and the repository has no node_modules.
    let modules = node::installed("tests/clients");
    let work = tempfile::Builder::new()
        .prefix("connectorgen-ts-oauth-")
        .tempdir()
        .expect("a folder for the script");
    let clients = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients");
    std::fs::copy(
        clients.join("ts-oauth.mjs"),
        work.path().join("ts-oauth.mjs"),
    )
    .expect("copy tests/clients/ts-oauth.mjs");
    std::os::unix::fs::symlink(&modules, work.path().join("node_modules"))
        .expect("link node_modules");

    let run = tokio::process::Command::new("node")
        .arg(work.path().join("ts-oauth.mjs"))
        .arg(&l.url)
        .arg(p.url())
        .env(
            "SCRIPT_DEADLINE_MS",
            (SCRIPT.as_millis() - 10_000).to_string(),
        )
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(SCRIPT, run)
        .await
        .unwrap_or_else(|_| panic!("ts-oauth.mjs ran past {SCRIPT:?}"))
        .unwrap_or_else(|e| panic!("{NEEDS_NODE} ({e})"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let evidence = || {
        format!(
            "ts-oauth.mjs exited {:?}\n{stdout}\nits stderr:\n{stderr}\nserve's log:\n{}\nthe authorization server's stderr:\n{}",
            out.status.code(),
            l.log().join("\n"),
            auth.stderr()
        )
    };
    let failed: Vec<&str> = stdout.lines().filter(|l| l.contains(" FAIL ")).collect();
    assert!(
        out.status.success() && failed.is_empty(),
        "{failed:#?}\n{}",
        evidence()
    );
    // Both revisions ran every step: each ends with the consent question.
    for revision in ["default", "2026-07-28"] {
        let consent = format!(
            "ok   [{revision} 5 the step-up] serve asks for consent as ever: a tool error with consentRequired"
        );
        assert!(stdout.contains(&consent), "no {consent:?}\n{}", evidence());
    }
    assert!(
        stdout.contains("ok   [result] every expectation held"),
        "{}",
        evidence()
    );

    // The provider saw the free reads and no create, each with the connector's own
    // credential, never the person's token; no token (a JWT begins `eyJ`) in serve's log.
    let counters = p.counters();
    assert_eq!(counters.of("createVideo"), 0, "{:#?}", p.received());
    assert!(counters.of("listVideos") >= 2, "{:#?}", p.received());
    let own = format!("Bearer {TOKEN}");
    for received in p.received() {
        assert_eq!(
            received.authorization.as_deref(),
            Some(own.as_str()),
            "{received:?}"
        );
    }
    let log = l.log().join("\n");
    assert!(!log.contains("eyJ"), "a JWT in serve's log: {log}");
}
