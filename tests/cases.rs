//! Every manifest is a test case: adding coverage is adding a file.
//!
//! - `examples/manifests/*.yaml` and `tests/cases/valid/*.yaml`: every output is
//!   snapshotted as raw text after the checks every valid manifest's outputs must pass
//!   (`support/outputs.rs`: client-safe MCP tools whose request mapping rebuilds the
//!   OpenAPI operation, no dangling reference, identical bytes on a second and a streamed
//!   build). The official OpenAPI and MCP schemas check the same outputs in the
//!   real-document suite (`tests/real_documents/`), which reads those schemas from
//!   `../shared/`.
//! - `tests/cases/invalid/<code>[--variant].yaml`: the uncoloured diagnostics are
//!   snapshotted, and a diagnostic with `<code>` must be among them.

use std::path::Path;
use std::sync::Arc;

use crate::support::outputs;

use connectorgen_core::diagnostics::{Rule, Severity};
use connectorgen_core::{GenerateError, Options, generate_with};
use strum::VariantArray as _;

fn read(path: &Path) -> (String, Arc<String>) {
    let text = std::fs::read_to_string(path).expect("test manifest is readable UTF-8");
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    (name, Arc::new(text))
}

/// The manifest's own targets; files it names are read beside it (named relative to the
/// repository, so that messages which name them are the same on every machine).
fn beside(path: &Path) -> Options {
    let dir = path.parent().unwrap_or(Path::new(""));
    let dir = dir
        .strip_prefix(env!("CARGO_MANIFEST_DIR"))
        .unwrap_or(dir)
        .to_path_buf();
    Options {
        // Base documents are in `specs/`, beside the manifests' folder.
        allow_read: vec![dir.join("../specs")],
        manifest_dir: Some(dir),
        ..Options::default()
    }
}

fn check_valid(group: &str, path: &Path) {
    let (name, text) = read(path);
    let outputs = outputs::check(&name, text, &beside(path));
    for (file, contents) in &outputs {
        insta::assert_snapshot!(format!("{group}-{file}"), contents);
    }
}

#[test]
fn examples() {
    insta::glob!("../examples/manifests", "*.yaml", |path| check_valid(
        "example", path
    ));
}

#[test]
fn valid_cases() {
    insta::glob!("cases/valid", "*.yaml", |path| check_valid("valid", path));
}

#[test]
fn invalid_cases() {
    insta::glob!("cases/invalid", "*.yaml", |path| {
        let (name, text) = read(path);
        let diagnostics = match generate_with(&name, text, &beside(path)) {
            Err(GenerateError::Invalid(d)) => d,
            Ok(_) => panic!("{name} should be rejected"),
            Err(e) => panic!("{name}: {e}"),
        };
        let stem = path.file_stem().unwrap().to_string_lossy();
        let code = stem.split("--").next().unwrap();
        for finding in diagnostics.items() {
            assert_declared_severity(&name, finding);
        }
        let codes: Vec<String> = diagnostics
            .items()
            .iter()
            .map(|f| code_of(&f.diagnostic))
            .collect();
        assert!(
            codes.iter().any(|c| c == code),
            "{name}: expected a `{code}` diagnostic, got {codes:?}"
        );
        insta::assert_snapshot!(connectorgen_core::report::human_findings(
            &diagnostics,
            false
        ));
    });
}

/// `tests/cases/lint/<lint-id>[--variant].yaml`: valid manifests on which that lint
/// fires (as an error in `--deny` variants); the findings are snapshotted.
#[test]
fn lint_cases() {
    insta::glob!("cases/lint", "*.yaml", |path| {
        let (name, text) = read(path);
        let analysis =
            connectorgen_core::analyze_with(&name, text, &beside(path)).expect("renders");
        assert!(
            analysis.outputs.is_some(),
            "{name} must be a valid manifest"
        );
        let stem = path.file_stem().unwrap().to_string_lossy();
        let mut parts = stem.split("--");
        let code = parts.next().unwrap();
        let expected = if parts.any(|v| v == "deny") {
            Severity::Error
        } else {
            Severity::Warning
        };
        for finding in analysis.diagnostics.items() {
            assert_declared_severity(&name, finding);
        }
        let found: Vec<(String, Severity)> = analysis
            .diagnostics
            .items()
            .iter()
            .map(|f| (code_of(&f.diagnostic), f.severity))
            .collect();
        assert!(
            found.iter().any(|(c, s)| c == code && *s == expected),
            "{name}: expected `{code}` as {expected:?}, got {found:?}"
        );
        insta::assert_snapshot!(connectorgen_core::report::human_findings(
            &analysis.diagnostics,
            false
        ));
    });
}

/// A finding's code: its rule's (the variant's name). A leftover miette `code(…)` on a
/// variant must say the same.
fn code_of(d: &connectorgen_core::diagnostics::Diagnostic) -> String {
    use miette::Diagnostic as _;
    if let Some(printed) = d.code() {
        assert_eq!(
            printed.to_string(),
            d.code_str(),
            "`code(…)` differs from the variant's name (and is not needed)"
        );
    }
    d.code_str()
}

/// A finding of a rule that is not a lint has the severity its declaration states
/// (`error` unless it says `severity = "warning"`); a lint's follows its level.
fn assert_declared_severity(name: &str, finding: &connectorgen_core::diagnostics::Finding) {
    let rule = Rule::from(&finding.diagnostic);
    let expected = match rule.severity() {
        _ if rule.is_lint() => return,
        "error" => Severity::Error,
        "warning" => Severity::Warning,
        _ => return,
    };
    assert_eq!(
        finding.severity,
        expected,
        "{name}: `{}` is declared {}",
        rule.code(),
        rule.severity()
    );
}

/// Every rule of the `Diagnostic` type has at least one invalid or lint case named after
/// its code (the variant's name, so no two rules share one); a retired lint reports
/// nothing, so it has none.
#[test]
fn every_rule_has_an_invalid_case() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases");
    let cases: Vec<String> = ["invalid", "lint"]
        .iter()
        .flat_map(|dir| std::fs::read_dir(root.join(dir)).unwrap())
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    // Diff rules have case folders instead (`diff::every_diff_rule_has_a_case`).
    let rules: Vec<Rule> = Rule::VARIANTS
        .iter()
        .copied()
        .filter(|r| !r.is_retired() && !r.is_diff())
        .collect();
    assert!(rules.len() >= 30, "found only {rules:?}");
    for rule in rules {
        let code = rule.code();
        assert!(
            cases
                .iter()
                .any(|f| f == &format!("{code}.yaml") || f.starts_with(&format!("{code}--"))),
            "no tests/cases/invalid/{code}.yaml or tests/cases/lint/{code}.yaml"
        );
    }
}
