//! The SARIF reports of `check`, `diff` and `probe` against the official SARIF 2.1.0
//! schema (read from `../shared/`): the integration binary checks what they say, this
//! checks their form.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use connectorgen_core::diff::{self, Format, Side};
use connectorgen_core::{Options, analyze_with};
use serde_json::Value;

use crate::support::cli::{SARIF_SOURCES, root, run, run_within, workspace};
use crate::support::provider::{Provider, Switches, TOKEN};
use crate::support::schemas;

fn assert_valid(what: &str, doc: &Value) {
    let schema = schemas::sarif();
    assert!(schema.is_some(), "this binary checks the official schemas");
    let errors = schemas::errors(schema, doc);
    assert!(errors.is_empty(), "{what}: {errors}");
}

#[test]
fn check_writes_valid_sarif() {
    for (source, built) in SARIF_SOURCES {
        let dir = workspace(source, built);
        let out = run(dir.path(), &["check", "--format", "sarif"]);
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_valid(source, &doc);
    }
}

/// `file` in `dir`, analysed as `diff` analyses a side.
fn side(dir: &Path, file: &str) -> Option<Side> {
    let text = Arc::new(std::fs::read_to_string(dir.join(file)).ok()?);
    let options = Options {
        manifest_dir: Some(dir.to_path_buf()),
        allow_read: vec![root()],
        ..Options::default()
    };
    let analysis = analyze_with(file, text.clone(), &options).unwrap();
    Some(Side::new(file, text, analysis).unwrap_or_else(|d| panic!("{file}: {:?}", d.items())))
}

#[test]
fn diff_writes_valid_sarif() {
    let mut cases = 0;
    for entry in std::fs::read_dir(root().join("tests/cases/diff")).unwrap() {
        let dir = entry.unwrap().path();
        let report = diff::diff(
            side(&dir, "old.yaml").as_ref(),
            side(&dir, "new.yaml").as_ref(),
        );
        let doc: Value = serde_json::from_str(&report.render(Format::Sarif, false)).unwrap();
        assert_valid(&dir.display().to_string(), &doc);
        cases += 1;
    }
    assert!(cases >= 20, "only {cases} diff cases");
}

#[test]
fn probe_writes_valid_sarif() {
    let p = Provider::start(Switches {
        ignore_key: true,
        rate_limit_next: 0,
        ..Switches::default()
    });
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_connectorgen"));
    cmd.arg("probe")
        .arg(root().join("examples/manifests/video.yaml"))
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
    assert_valid("probe", &doc);
    assert!(!doc["runs"][0]["results"].as_array().unwrap().is_empty());
}
