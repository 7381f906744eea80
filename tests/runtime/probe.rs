//! `connectorgen probe` against the reference provider: it passes a provider that keeps
//! the manifest's promises, fails one that breaks them (with the evidence), and never
//! spends beyond `--allow-spend`, as the provider's own counters show.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use super::cli::{run_within, text};
use super::provider::{Provider, Switches, TOKEN};

fn video() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/manifests/video.yaml")
}

/// `connectorgen probe MANIFEST --base-url URL ARGS --format json`: exit code and report.
fn probe(manifest: &Path, url: &str, args: &[&str]) -> (i32, Value) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_connectorgen"));
    cmd.arg("probe")
        .arg(manifest)
        .args(["--base-url", url, "--format", "json"])
        .args(args)
        .env("VIDGEN_TOKEN", TOKEN)
        .env("NO_COLOR", "1");
    let (out, _) = run_within(cmd, Duration::from_secs(60));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\n{}",
            text(&out.stdout),
            text(&out.stderr)
        )
    });
    (out.status.code().unwrap_or(-1), report)
}

/// The outcome of `check` on `operation`, and its evidence.
fn outcome<'a>(report: &'a Value, check: &str) -> (&'a str, &'a Value) {
    let result = report["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["check"] == check)
        .unwrap_or_else(|| panic!("no {check} in {report:#}"));
    (result["outcome"].as_str().unwrap(), &result["evidence"])
}

#[test]
fn a_provider_that_keeps_its_promises_passes() {
    let p = Provider::start(Switches::default());
    let (code, report) = probe(&video(), &p.url(), &["--allow-spend", "5"]);
    assert_eq!(code, 0, "{report:#}");
    for check in [
        "retry-key-honoured",
        "async-is-async",
        "poll-target-free",
        "unauthorized",
    ] {
        assert_eq!(outcome(&report, check).0, "passed", "{check}: {report:#}");
    }
    // No 429 came, so its check could not run: said, not passed.
    assert_eq!(outcome(&report, "retry-after").0, "skipped");
    assert_eq!(report["summary"]["failed"], 0);
    let c = p.counters();
    assert_eq!(
        (c.jobs_created, c.replays, c.of("createVideo")),
        (1, 1, 2),
        "{:#?}",
        p.received()
    );
    assert_eq!(report["summary"]["paidCalls"], 2);
}

#[test]
fn a_provider_that_ignores_the_key_fails_with_the_two_ids() {
    let p = Provider::start(Switches {
        ignore_key: true,
        ..Switches::default()
    });
    let (code, report) = probe(&video(), &p.url(), &["--allow-spend", "5"]);
    assert_eq!(code, 1, "{report:#}");
    let (word, evidence) = outcome(&report, "retry-key-honoured");
    assert_eq!(word, "failed");
    assert_eq!(
        evidence[0], "the same key gave two different ids: vid_1 and vid_2",
        "{evidence:#}"
    );
    assert_eq!(
        evidence[1],
        "the list shows 2 new items, not one: vid_1, vid_2"
    );
    assert_eq!(outcome(&report, "poll-target-free").0, "passed");
}

#[test]
fn a_poll_target_that_creates_work_fails() {
    let p = Provider::start(Switches {
        poll_creates: true,
        ..Switches::default()
    });
    let (code, report) = probe(&video(), &p.url(), &["--allow-spend", "5"]);
    assert_eq!(code, 1, "{report:#}");
    let (word, evidence) = outcome(&report, "poll-target-free");
    assert_eq!(word, "failed", "{report:#}");
    let said = evidence[0].as_str().unwrap();
    assert!(
        said.starts_with("polling 3 times added 3 items to the list"),
        "{said}"
    );
    assert_eq!(outcome(&report, "retry-key-honoured").0, "passed");
}

#[test]
fn no_paid_call_without_allow_spend_and_never_more_than_n() {
    let p = Provider::start(Switches::default());
    let (code, report) = probe(&video(), &p.url(), &[]);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(p.counters().of("createVideo"), 0, "{:#?}", p.received());
    let (word, _) = outcome(&report, "retry-key-honoured");
    assert_eq!(word, "skipped");
    assert_eq!(report["summary"]["paidCalls"], 0);
    // The free checks still ran.
    assert_eq!(outcome(&report, "unauthorized").0, "passed");

    for cap in [1u64, 2, 3] {
        let p = Provider::start(Switches::default());
        let (_, report) = probe(&video(), &p.url(), &["--allow-spend", &cap.to_string()]);
        let made = p.counters().of("createVideo");
        assert!(
            made <= cap,
            "--allow-spend {cap} made {made}: {:#?}",
            p.received()
        );
        assert_eq!(
            report["summary"]["paidCalls"], made,
            "counted as the provider counted"
        );
        assert_eq!(report["summary"]["allowSpend"], cap);
    }
}

#[test]
fn a_required_key_is_checked_both_ways() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = dir.path().join("video.yaml");
    let text = std::fs::read_to_string(video()).unwrap();
    std::fs::write(
        &manifest,
        text.replace("idempotency: optional", "idempotency: required"),
    )
    .unwrap();

    let lax = Provider::start(Switches::default());
    let (code, report) = probe(&manifest, &lax.url(), &["--allow-spend", "5"]);
    assert_eq!(code, 1);
    let (word, evidence) = outcome(&report, "retry-key-required");
    assert_eq!(word, "failed", "{report:#}");
    assert!(
        evidence[0]
            .as_str()
            .unwrap()
            .starts_with("a request without the key was not refused: POST /v1/videos → 200"),
        "{evidence:#}"
    );
    assert_eq!(lax.counters().creates_without_key, 1);

    let strict = Provider::start(Switches {
        require_key: true,
        ..Switches::default()
    });
    let (code, report) = probe(&manifest, &strict.url(), &["--allow-spend", "5"]);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(outcome(&report, "retry-key-required").0, "passed");
}

#[test]
fn a_429_without_retry_after_is_a_warning() {
    let p = Provider::start(Switches {
        rate_limit_next: 1,
        retry_after: None,
        ..Switches::default()
    });
    let (_, report) = probe(&video(), &p.url(), &["--operation", "listVideos"]);
    let (word, evidence) = outcome(&report, "retry-after");
    assert_eq!(word, "warning", "{report:#}");
    assert_eq!(
        evidence[0],
        "a 429 from `listVideos` had no Retry-After header"
    );

    let p = Provider::start(Switches {
        rate_limit_next: 1,
        ..Switches::default()
    });
    let (_, report) = probe(&video(), &p.url(), &["--operation", "listVideos"]);
    assert_eq!(outcome(&report, "retry-after").0, "passed", "{report:#}");
}

#[test]
fn a_bad_credential_that_is_accepted_fails() {
    let p = Provider::start(Switches {
        auth: super::provider::Auth::AcceptAny,
        ..Switches::default()
    });
    let (code, report) = probe(&video(), &p.url(), &[]);
    assert_eq!(code, 1);
    let (word, evidence) = outcome(&report, "unauthorized");
    assert_eq!(word, "failed");
    assert!(
        evidence[0]
            .as_str()
            .unwrap()
            .starts_with("a bad credential was answered 200, not 401"),
        "{evidence:#}"
    );
}

#[test]
fn a_live_base_url_is_refused_without_live_and_nothing_is_sent() {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_connectorgen"));
    cmd.arg("probe").arg(video()).args([
        "--base-url",
        "https://muse.vidgen.example",
        "--allow-spend",
        "5",
    ]);
    let (out, _) = run_within(cmd, Duration::from_secs(60));
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("pass --live"), "{stderr}");
    assert!(out.stdout.is_empty());
}

#[test]
fn every_format_reports_the_same_run() {
    for (format, expect) in [
        ("human", "failed   createVideo · retry key honoured"),
        ("github", "::error file="),
        ("sarif", "\"ruleId\": \"retry-key-honoured\""),
    ] {
        let p = Provider::start(Switches {
            ignore_key: true,
            ..Switches::default()
        });
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_connectorgen"));
        cmd.arg("probe")
            .arg(video())
            .args([
                "--base-url",
                &p.url(),
                "--allow-spend",
                "2",
                "--format",
                format,
            ])
            .env("VIDGEN_TOKEN", TOKEN);
        let (out, _) = run_within(cmd, Duration::from_secs(60));
        assert_eq!(out.status.code(), Some(1), "{format}");
        let stdout = text(&out.stdout);
        assert!(stdout.contains(expect), "{format}: {stdout}");
        assert!(
            stdout.contains("vid_1 and vid_2") || format == "sarif" && stdout.contains("vid_"),
            "{format}: {stdout}"
        );
    }
}

/// `probe --format sarif`: an error result for the key the provider ignored, pointing at
/// the operation's id in the manifest (the real-document suite validates the same report
/// against the official SARIF 2.1.0 schema).
#[test]
fn sarif_points_at_the_operation_that_failed() {
    let p = Provider::start(Switches {
        ignore_key: true,
        rate_limit_next: 0,
        ..Switches::default()
    });
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_connectorgen"));
    cmd.arg("probe")
        .arg(video())
        .args([
            "--base-url",
            &p.url(),
            "--allow-spend",
            "2",
            "--format",
            "sarif",
        ])
        .env("VIDGEN_TOKEN", TOKEN);
    let (out, _) = run_within(cmd, Duration::from_secs(60));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["version"], "2.1.0");
    let results = doc["runs"][0]["results"].as_array().unwrap();
    assert!(
        results
            .iter()
            .any(|r| r["ruleId"] == "retry-key-honoured" && r["level"] == "error")
    );
    // The result points at the operation's id in the manifest.
    assert_eq!(
        results[0]["locations"][0]["physicalLocation"]["region"]["startLine"],
        19
    );
}

/// A create that does not answer in time is not async: the check fails with what the
/// client saw, and no retry is made beyond the cap. The provider holds its answers at a
/// gate (no sleeps); `--timeout` ends each wait.
#[test]
fn a_create_that_does_not_answer_is_not_async() {
    let p = Provider::start(Switches::default());
    let gate = p.hold("createVideo");
    let (code, report) = probe(
        &video(),
        &p.url(),
        &[
            "--allow-spend",
            "3",
            "--timeout",
            "0.5",
            "--operation",
            "createVideo",
        ],
    );
    drop(gate);
    assert_eq!(code, 1, "{report:#}");
    let (word, evidence) = outcome(&report, "async-is-async");
    assert_eq!(word, "failed", "{report:#}");
    assert!(
        evidence[0].as_str().unwrap().contains("no complete answer"),
        "{evidence:#}"
    );
    assert!(p.counters().of("createVideo") <= 3);
    assert_eq!(
        report["summary"]["paidCalls"],
        p.counters().of("createVideo")
    );
}
