//! The generated rule reference: `docs/rules.md` and the examples file it (and
//! `explain --rule`) draws from, `crates/connectorgen-core/src/rules/examples.txt`.
//!
//! Takes: each rule's case snapshot (`tests/snapshots/integration__cases__{invalid,lint}_cases@<case>.snap`,
//! checked by `cases::invalid_cases` and `cases::lint_cases`) or, for a diff rule, its
//! case folder's `report.txt` (checked by `diff::diff_cases`). Returns: nothing; fails
//! when either generated file is stale, or when a rule's case shows no finding of it.
//! `UPDATE_DOCS=1 cargo test --test integration rules_doc` rewrites both.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use connectorgen_core::diagnostics::Rule;
use connectorgen_core::rules;
use strum::VariantArray as _;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The cases named after `code` in `dir` (files or folders): `<code>` or `<code>.yaml`
/// first, then its `--variant`s in name order.
fn cases_of(dir: &str, code: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(root().join(dir)) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| {
            let stem = n.strip_suffix(".yaml").unwrap_or(n);
            stem == code || stem.starts_with(&format!("{code}--"))
        })
        .collect();
    names.sort_by_key(|n| (n.contains("--"), n.clone()));
    names
}

/// The rendered findings a case shows, and its path as the reference names it.
fn rendered(code: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (dir, group) in [
        ("tests/cases/invalid", "invalid_cases"),
        ("tests/cases/lint", "lint_cases"),
    ] {
        for case in cases_of(dir, code) {
            let snap = root().join(format!(
                "tests/snapshots/integration__cases__{group}@{case}.snap"
            ));
            let text = std::fs::read_to_string(&snap)
                .unwrap_or_else(|e| panic!("{}: {e}", snap.display()));
            // The snapshot's front matter is between the first two `---` lines.
            let body = text.splitn(3, "---\n").nth(2).unwrap_or_default();
            out.push((format!("{dir}/{case}"), body.to_string()));
        }
    }
    for case in cases_of("tests/cases/diff", code) {
        let dir = format!("tests/cases/diff/{case}");
        let report = PathBuf::from(root()).join(&dir).join("report.txt");
        let text = std::fs::read_to_string(&report)
            .unwrap_or_else(|e| panic!("{}: {e}", report.display()));
        out.push((format!("{dir}/"), text));
    }
    out
}

/// The first finding of `code` in a drawn report, without its code line: the lines
/// after a line that is exactly the code, up to the next line that starts in the first
/// column (the next finding's code, "and N more …", a diff's count of findings).
fn first_finding(report: &str, code: &str) -> Option<String> {
    let mut lines = report.lines().skip_while(|l| *l != code).skip(1);
    let mut finding = Vec::new();
    for line in lines.by_ref() {
        if !line.is_empty() && !line.starts_with(' ') {
            break;
        }
        finding.push(line);
    }
    let text = finding.join("\n").trim_matches('\n').to_string();
    (!text.is_empty()).then_some(text)
}

/// Every rule that has a case: its first case that shows a finding of it, and that
/// finding. Fails when a rule has cases but none shows a finding of it.
fn examples() -> BTreeMap<String, (String, String)> {
    let mut out = BTreeMap::new();
    for rule in Rule::VARIANTS {
        let cases = rendered(rule.code());
        if cases.is_empty() {
            continue;
        }
        let example = cases
            .iter()
            .find_map(|(source, report)| {
                first_finding(report, rule.code()).map(|f| (source.clone(), f))
            })
            .unwrap_or_else(|| {
                panic!(
                    "`{}`: no case of it shows a finding of it: {:?}",
                    rule.code(),
                    cases.iter().map(|(s, _)| s).collect::<Vec<_>>()
                )
            });
        assert!(
            !example.1.lines().any(|l| l.starts_with("== ")),
            "`{}`: a line of its finding would start a record of the examples file",
            rule.code()
        );
        out.insert(rule.code().to_string(), example);
    }
    out
}

/// `docs/rules.md` and the examples file are generated from the rules' declarations
/// and the case snapshots; fails when either is stale.
#[test]
fn rules_doc_is_current() {
    let examples = rules::examples_file(&examples());
    // Built from the new examples, not from the ones this build embedded, so that one
    // `UPDATE_DOCS=1` run writes both files right.
    let markdown = rules::markdown_with(&examples);
    let update = std::env::var_os("UPDATE_DOCS").is_some();
    let mut stale = Vec::new();
    for (path, generated) in [
        ("crates/connectorgen-core/src/rules/examples.txt", &examples),
        ("docs/rules.md", &markdown),
    ] {
        let file = root().join(path);
        if update {
            std::fs::write(&file, generated).unwrap();
        }
        if std::fs::read_to_string(&file).unwrap_or_default() != *generated {
            stale.push(path);
        }
    }
    assert!(
        stale.is_empty(),
        "stale: {stale:?}; run `UPDATE_DOCS=1 cargo test --test integration rules_doc`"
    );
}

/// Every rule with a case has an example in the file this build embedded (and so in
/// `explain --rule` and docs/rules.md), from that case.
#[test]
fn rules_doc_every_rule_with_a_case_has_an_example() {
    let embedded = rules::examples(rules::EXAMPLES);
    for (code, (source, _)) in examples() {
        let example = embedded.get(code.as_str());
        assert!(
            example.is_some_and(|e| e.source == source),
            "`{code}` has a case ({source}) but no example from it in rules/examples.txt"
        );
        let explained = rules::explain(&code).unwrap();
        assert!(
            explained.contains(&format!("Example, from {source}:")),
            "{explained}"
        );
    }
}

/// The first finding of the rule is taken, not another rule's finding before it, and
/// it ends where the next finding or the count starts.
#[test]
fn rules_doc_an_example_is_the_first_finding_of_its_rule() {
    let report = "empty-text\n\n  × first\n    ╭─[a.yaml:1:1]\n\n  help: h\n\nbad-url\n\n  × second\n\nbad-url\n\n  × third\n\n1 error, 0 warnings\n";
    assert_eq!(
        first_finding(report, "bad-url").as_deref(),
        Some("  × second")
    );
    assert_eq!(
        first_finding(report, "empty-text").as_deref(),
        Some("  × first\n    ╭─[a.yaml:1:1]\n\n  help: h")
    );
    assert_eq!(first_finding(report, "yaml-limit"), None);
}
