//! `connectorgen check` as CI runs it, where that needs code: every example built and
//! checked, drift made by editing outputs, SARIF against its schema, the Action's and the
//! pre-commit hook's scripts. Its argument → output cases (formats, positions, denied
//! lints, `--target`) are files in tests/cmd/.

use crate::support::cli;

use cli::{SARIF_SOURCES, root, run, text, workspace};

#[test]
fn check_after_build_is_clean_for_every_example() {
    let mut examples: Vec<_> = std::fs::read_dir(root().join("examples/manifests"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "yaml"))
        .collect();
    examples.sort();
    // bank, placeholder, printshop and video at least: an empty or misplaced folder
    // must fail here, not pass with nothing checked.
    assert!(examples.len() >= 4, "found only {examples:?}");
    // The base-mode examples' documents are in `examples/specs/`, beside the manifests'
    // folder.
    let specs = root().join("examples/specs");
    let specs = specs.to_str().unwrap();
    for path in examples {
        let dir = tempfile::tempdir().unwrap();
        let manifest = path.to_str().unwrap();
        let built = run(
            dir.path(),
            &["build", manifest, "--out", "out", "--allow-read", specs],
        );
        assert_eq!(built.status.code(), Some(0), "{}", text(&built.stderr));
        // The only warnings allowed are about the provider's own document, repaired in
        // the outputs (issue 20): `base-invalid` (assemblyai's, square's and twilio's
        // examples that fail their schemas are left out) and `duplicate-title` (openai's,
        // paypal's and stripe's titles that generators would give one class name), and
        // `credential-not-expressible` (the Vonage examples' credentials, which only
        // `serve` sends whole: their point, issue 31).
        let stderr = text(&built.stderr);
        let codes: Vec<&str> = stderr
            .lines()
            .filter(|l| {
                !l.is_empty()
                    && l.chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
            })
            .collect();
        assert!(
            codes.iter().all(|c| [
                "base-invalid",
                "duplicate-title",
                "credential-not-expressible"
            ]
            .contains(c))
                && (stderr.is_empty() || !codes.is_empty()),
            "{manifest}: examples build without warnings but base-invalid and duplicate-title: {stderr}"
        );
        let files = || std::fs::read_dir(dir.path().join("out")).unwrap().count();
        let written = files();
        assert!(written >= 3, "{manifest}: at least the muse files");
        // `--deny-warnings` wherever the provider's document has nothing to say.
        let mut args = vec!["check", manifest, "--out", "out", "--allow-read", specs];
        if codes.is_empty() {
            args.push("--deny-warnings");
        }
        let out = run(dir.path(), &args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{manifest}: {}",
            text(&out.stdout)
        );
        let summary = text(&out.stdout);
        let last = summary.lines().last().unwrap_or_default();
        assert!(
            if codes.is_empty() {
                last == "0 errors, 0 warnings"
            } else {
                last.starts_with("0 errors, ") && !summary.contains("\n  ×")
            },
            "{manifest}: {}",
            text(&out.stdout)
        );
        assert_eq!(files(), written, "check writes nothing");
    }
}

#[test]
fn drift_changed_and_missing_files() {
    let dir = workspace("examples/manifests/video.yaml", true);
    let generated = dir.path().join("generated");
    let llms = std::fs::read_to_string(generated.join("llms.txt")).unwrap();
    std::fs::write(
        generated.join("llms.txt"),
        llms.replace("(about 90s)", "(about 60s)"),
    )
    .unwrap();
    std::fs::remove_file(generated.join("descriptions.md")).unwrap();
    let before: Vec<_> = std::fs::read_dir(&generated)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();

    let out = run(dir.path(), &["check"]);
    assert_eq!(out.status.code(), Some(1));
    insta::assert_snapshot!("drift-human", text(&out.stdout));
    let out = run(dir.path(), &["check", "--format", "json"]);
    assert_eq!(out.status.code(), Some(1));
    insta::assert_snapshot!("drift-json", text(&out.stdout));
    let out = run(dir.path(), &["check", "--format", "github"]);
    assert_eq!(out.status.code(), Some(1));
    insta::assert_snapshot!("drift-github", text(&out.stdout));

    let after: Vec<_> = std::fs::read_dir(&generated)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(before, after, "check never writes");
    // The fix it suggests fixes it.
    assert_eq!(
        run(dir.path(), &["build", "connector.yaml"]).status.code(),
        Some(0)
    );
    assert_eq!(run(dir.path(), &["check"]).status.code(), Some(0));
}

/// `check --format sarif` lists every lint among its rules (the real-document suite
/// validates the same reports against the official SARIF 2.1.0 schema).
#[test]
fn sarif_names_every_lint_among_its_rules() {
    for (source, built) in SARIF_SOURCES {
        let dir = workspace(source, built);
        let out = run(dir.path(), &["check", "--format", "sarif"]);
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(doc["version"], "2.1.0", "{source}");
        let rules = doc["runs"][0]["tool"]["driver"]["rules"]
            .as_array()
            .unwrap();
        for lint in connectorgen_core::lint::Lint::lints().filter(|l| !l.is_diff()) {
            assert!(
                rules.iter().any(|r| r["id"] == lint.code()),
                "rule for {}",
                lint.code()
            );
        }
    }
}

/// Runs one of the distribution scripts (the GitHub Action's, the pre-commit hook's) in
/// `dir` with the binary under test instead of a downloaded release.
fn script(dir: &std::path::Path, name: &str, env: &[(&str, &str)], args: &[&str]) -> Output {
    let mut cmd = std::process::Command::new("bash");
    cmd.arg(root().join("scripts").join(name))
        .args(args)
        .current_dir(dir)
        .env("CONNECTORGEN_BIN", env!("CARGO_BIN_EXE_connectorgen"))
        .env("NO_COLOR", "1")
        .env_remove("GITHUB_OUTPUT");
    for (key, value) in env {
        cmd.env(key, value);
    }
    cli::run_within(cmd, cli::NO_HANG).0
}

use std::process::Output;

#[test]
fn github_action_script_checks_the_manifest() {
    let dir = workspace("examples/manifests/video.yaml", true);
    // Clean: annotations format, exit 0, and the installed version shown on stderr.
    let out = script(dir.path(), "action.sh", &[], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).starts_with("connectorgen "),
        "{}",
        text(&out.stderr)
    );
    // Drift fails the step, as a `::error` annotation on the file that drifted.
    let llms = dir.path().join("generated/llms.txt");
    let old = std::fs::read_to_string(&llms).unwrap();
    std::fs::write(&llms, old.replace("(about 90s)", "(about 60s)")).unwrap();
    let out = script(dir.path(), "action.sh", &[], &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stdout)
            .lines()
            .any(|l| l.starts_with("::error") && l.contains("llms.txt")),
        "{}",
        text(&out.stdout)
    );
    // SARIF goes to the named file, stdout stays free, and the output is recorded.
    let outputs = dir.path().join("github-output");
    let out = script(
        dir.path(),
        "action.sh",
        &[
            ("CG_FORMAT", "sarif"),
            ("CG_SARIF_FILE", "report.sarif"),
            ("GITHUB_OUTPUT", outputs.to_str().unwrap()),
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let sarif: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("report.sarif")).unwrap()).unwrap();
    assert_eq!(sarif["version"], "2.1.0");
    assert_eq!(
        std::fs::read_to_string(&outputs).unwrap(),
        "sarif-file=report.sarif\n"
    );
    // Inputs reach the command: with the drift undone the step is clean again, and a
    // target the folder was not built for, or another `--out`, is drift.
    std::fs::write(&llms, &old).unwrap();
    let out = script(dir.path(), "action.sh", &[], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    let out = script(dir.path(), "action.sh", &[("CG_TARGETS", "openai")], &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    assert!(text(&out.stdout).contains("openapi.openai.json"));
    let out = script(
        dir.path(),
        "action.sh",
        &[("CG_ARGS", "--deny-warnings --out elsewhere")],
        &[],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let out = script(dir.path(), "action.sh", &[("CG_FORMAT", "xml")], &[]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn pre_commit_hook_script_checks_every_manifest_it_is_given() {
    let clean = workspace("examples/manifests/video.yaml", true);
    let drifted = workspace("examples/manifests/bank.yaml", true);
    std::fs::remove_file(drifted.path().join("generated/llms.txt")).unwrap();
    let manifest = |dir: &tempfile::TempDir| {
        dir.path()
            .join("connector.yaml")
            .to_str()
            .unwrap()
            .to_string()
    };
    let out = script(
        clean.path(),
        "pre-commit-check.sh",
        &[],
        &[&manifest(&clean)],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    // The drifted one fails the hook, and the clean one after it is still checked.
    let out = script(
        clean.path(),
        "pre-commit-check.sh",
        &[],
        &[&manifest(&drifted), &manifest(&clean)],
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stdout).matches("errors, ").count(),
        2,
        "{}",
        text(&out.stdout)
    );
    let out = script(
        clean.path(),
        "pre-commit-check.sh",
        &[("CONNECTORGEN_BIN", "no-such-connectorgen")],
        &[&manifest(&clean)],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("not on PATH"));
}
