//! Every manifest is a test case: adding coverage is adding a file.
//!
//! - `examples/manifests/*.yaml` and `tests/cases/valid/*.yaml`: every output is
//!   snapshotted as raw text, openapi.json validates against the official OpenAPI 3.1
//!   schema, every MCP tool has client-safe names, compilable patterns and a request
//!   mapping that rebuilds its OpenAPI operation (`support/mcp_tools.rs`), and a second build
//!   gives identical bytes; no `$ref` or `discriminator.mapping` value of any output
//!   points at nothing.
//! - `tests/cases/invalid/<code>[--variant].yaml`: the uncoloured diagnostics are
//!   snapshotted, and a diagnostic with `<code>` must be among them.

use std::path::Path;
use std::sync::Arc;

use crate::support::mcp_tools as mcp;
use crate::support::refs;
use crate::support::schemas;

use connectorgen_core::diagnostics::{Rule, Severity};
use connectorgen_core::model::Target;
use connectorgen_core::{GenerateError, Options, generate_with};
use strum::VariantArray as _;

fn read(path: &Path) -> (String, Arc<String>) {
    let text = std::fs::read_to_string(path).expect("test manifest is readable UTF-8");
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    (name, Arc::new(text))
}

/// Every target, whatever the manifest's own `targets:` says; files the manifest names
/// (`openapi:`) are read beside it.
fn all_targets(path: &Path) -> Options {
    Options {
        targets: Some(<Target as strum::VariantArray>::VARIANTS.to_vec()),
        ..beside(path)
    }
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
    let outputs = match generate_with(&name, text.clone(), &all_targets(path)) {
        Ok(outputs) => outputs,
        Err(GenerateError::Invalid(d)) => panic!(
            "{name} should be valid:\n{}",
            connectorgen_core::report::human_findings(&d, false)
        ),
        Err(e) => panic!("{name}: {e}"),
    };
    assert_eq!(
        outputs.keys().collect::<Vec<_>>(),
        [
            "descriptions.md",
            "llms.txt",
            "mcp-tools.json",
            "openapi.3.0.json",
            "openapi.json",
            "openapi.openai.json"
        ]
    );
    // `Target::files()` names exactly what each target writes.
    let mut named: Vec<&str> = <Target as strum::VariantArray>::VARIANTS
        .iter()
        .flat_map(|t| t.files().iter().copied())
        .collect();
    named.sort_unstable();
    assert_eq!(
        outputs.keys().map(String::as_str).collect::<Vec<_>>(),
        named
    );
    for (file, contents) in &outputs {
        assert!(
            contents.ends_with('\n') && !contents.ends_with("\n\n"),
            "{file}: one trailing newline"
        );
        insta::assert_snapshot!(format!("{group}-{file}"), contents);
    }

    // Each OpenAPI document validates against the official schema of the version it
    // says: openapi.json and openapi.openai.json are 3.1 (a 3.0 base is upgraded), and
    // openapi.3.0.json must say 3.0.
    for file in ["openapi.json", "openapi.openai.json", "openapi.3.0.json"] {
        let doc: serde_json::Value = serde_json::from_str(&outputs[file]).expect("JSON");
        let version = doc["openapi"].as_str().unwrap_or_default();
        let schema = if version.starts_with("3.0.") {
            schemas::openapi30()
        } else {
            assert_ne!(file, "openapi.3.0.json", "{name}: {file} says {version}");
            schemas::openapi31()
        };
        let errors = schemas::errors(schema, &doc);
        assert!(
            errors.is_empty(),
            "{name}: {file} is not valid OpenAPI {version}:\n{errors}"
        );
    }
    // Everything kept resolves (issue 20): no reference points at nothing.
    for file in ["openapi.json", "openapi.openai.json", "openapi.3.0.json"] {
        let doc: serde_json::Value = serde_json::from_str(&outputs[file]).expect("JSON");
        let dangling = refs::dangling_in_openapi(&doc);
        assert!(
            dangling.is_empty(),
            "{name}: {file}: dangling references:\n{dangling:#?}"
        );
    }
    let tools: serde_json::Value = serde_json::from_str(&outputs["mcp-tools.json"]).expect("JSON");
    let dangling = refs::dangling_in_tools(&tools);
    assert!(
        dangling.is_empty(),
        "{name}: mcp-tools.json: dangling references:\n{dangling:#?}"
    );
    let parsed: Result<openapiv3::OpenAPI, _> = serde_json::from_str(&outputs["openapi.3.0.json"]);
    assert!(
        parsed.is_ok(),
        "{name}: openapiv3 cannot read openapi.3.0.json: {parsed:?}"
    );
    let tools: serde_json::Value = serde_json::from_str(&outputs["mcp-tools.json"]).expect("JSON");
    for tool in tools.as_array().expect("an array of tools") {
        let errors = schemas::errors(schemas::mcp_tool(), tool);
        assert!(
            errors.is_empty(),
            "{name}: tool {} is not a valid MCP Tool:\n{errors}",
            tool["name"]
        );
    }

    mcp::check(&name, &outputs["mcp-tools.json"], &outputs["openapi.json"]);

    let again = generate_with(&name, text.clone(), &all_targets(path)).expect("second build");
    assert_eq!(outputs, again, "{name}: two builds differ");

    // `build` streams openapi.json into its file (`Options::stream`): the same bytes, and
    // the same other outputs.
    let streaming = Options {
        stream: true,
        ..all_targets(path)
    };
    let analysis = connectorgen_core::analyze_with(&name, text, &streaming).expect("renders");
    let mut held = outputs;
    let expected = held.remove("openapi.json").expect("openapi.json");
    assert_eq!(
        analysis.outputs.as_ref(),
        Some(&held),
        "{name}: streamed build"
    );
    let mut written = Vec::new();
    analysis
        .streamed
        .as_ref()
        .expect("openapi.json left to stream")
        .write(analysis.connector.as_ref().expect("valid"), &mut written)
        .expect("written to memory");
    assert!(
        written == expected.as_bytes(),
        "{name}: streamed openapi.json differs from the rendered one"
    );
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

/// Issue 21, defect 8: every tool copies each component it reaches, so mcp-tools.json
/// grew without bound (a 0.56 MB input made 600 MB). It is at most
/// `OUTPUT_FACTOR` × the connector's size + `OUTPUT_SLACK` (past it, the
/// `mcp-output-too-large` case); the bundled examples stay far inside the bound, and
/// the largest ratio is below 8, a quarter of the factor.
#[test]
fn mcp_tools_stay_within_their_bound() {
    use connectorgen_core::render::mcp::{OUTPUT_FACTOR, output_limit};
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for entry in std::fs::read_dir(root.join("examples/manifests")).unwrap() {
        let path = entry.unwrap().path();
        let (name, text) = read(&path);
        let analysis = connectorgen_core::analyze_with(&name, text, &all_targets(&path)).unwrap();
        let connector = analysis.connector.expect("valid");
        let (limit, input) = output_limit(&connector);
        let size = analysis.outputs.unwrap()["mcp-tools.json"].len();
        assert!(size <= limit, "{name}: {size} > {limit}");
        assert!(
            size < input * OUTPUT_FACTOR / 4,
            "{name}: mcp-tools.json is {size} bytes for an input of {input}"
        );
    }
}
