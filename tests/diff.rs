//! `connectorgen diff`: the case folders of `tests/cases/diff/` (one per rule, inline
//! and base mode), the property that a manifest compared with itself — or with itself
//! reordered and commented — has no finding, `--base REF` in a temporary git
//! repository, and every output format checked as `check`'s are.
//!
//! A case is `tests/cases/diff/<rule>[--variant]/` holding `old.yaml` and `new.yaml`
//! (and the base documents they name) and `report.txt`, the expected human report; the
//! rule must be among the findings. A folder named `none--…` must have none.
//! `UPDATE_CASES=1 cargo test --test integration diff::` rewrites the reports.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use connectorgen_core::diagnostics::Rule;
use connectorgen_core::diff::{self, Format, Side};
use connectorgen_core::{Options, analyze_with};
use proptest::prelude::*;

use crate::support::cli::{root, run, text};

fn cases() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root().join("tests/cases/diff"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

/// `file` in `dir`, analysed as `diff` analyses a side, named by its file name.
fn side_of(dir: &Path, file: &str, text: String) -> Side {
    let options = Options {
        manifest_dir: Some(dir.to_path_buf()),
        // The bundled examples' documents are in examples/specs/.
        allow_read: vec![root()],
        ..Options::default()
    };
    let text = Arc::new(text);
    let analysis = analyze_with(file, text.clone(), &options).unwrap();
    Side::new(file, text, analysis).unwrap_or_else(|d| {
        panic!(
            "{}/{file} does not validate: {:?}",
            dir.display(),
            d.items()
        )
    })
}

fn side(dir: &Path, file: &str) -> Option<Side> {
    let path = dir.join(file);
    path.exists()
        .then(|| side_of(dir, file, std::fs::read_to_string(path).unwrap()))
}

#[test]
fn diff_cases() {
    let update = std::env::var_os("UPDATE_CASES").is_some();
    let mut failures = Vec::new();
    for dir in cases() {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let (old, new) = (side(&dir, "old.yaml"), side(&dir, "new.yaml"));
        let report = diff::diff(old.as_ref(), new.as_ref());
        let codes = report.codes();
        let rule = name.split("--").next().unwrap();
        if rule == "none" {
            assert!(
                codes.is_empty(),
                "{name}: expected no finding, got {codes:?}"
            );
        } else {
            assert!(
                codes.iter().any(|c| c == rule),
                "{name}: `{rule}` is not among {codes:?}"
            );
        }
        let rendered = report.render(Format::Human, false);
        let expected_path = dir.join("report.txt");
        if update {
            std::fs::write(&expected_path, &rendered).unwrap();
        }
        let expected = std::fs::read_to_string(&expected_path).unwrap_or_default();
        if rendered != expected {
            failures.push(format!(
                "{name}: the report differs from report.txt; it is now:\n{rendered}"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{}\n(UPDATE_CASES=1 rewrites them)",
        failures.join("\n")
    );
}

/// A poll target renamed in the change (issue 49): the rename is one finding, not also a
/// `poll-target-changed` and a `safety-text-changed` for each operation that polls it.
#[test]
fn a_renamed_poll_target_is_reported_once() {
    let dir = root().join("tests/cases/diff/operation-renamed--poll-target");
    let report = diff::diff(
        side(&dir, "old.yaml").as_ref(),
        side(&dir, "new.yaml").as_ref(),
    );
    assert_eq!(report.codes(), ["operation-renamed"]);
}

/// Every diff rule has a case folder named after it (`tests/cases.rs` checks the other
/// rules' case files).
#[test]
fn every_diff_rule_has_a_case() {
    let names: Vec<String> = cases()
        .iter()
        .map(|d| d.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    let rules: Vec<Rule> = Rule::diff_rules().collect();
    assert!(rules.len() >= 20, "{rules:?}");
    for rule in rules {
        assert!(
            names
                .iter()
                .any(|n| n == rule.code() || n.starts_with(&format!("{}--", rule.code()))),
            "no tests/cases/diff/{}/",
            rule.code()
        );
    }
}

/// Every bundled example and valid case, as the property tests pick them.
fn manifests() -> Vec<PathBuf> {
    let mut all = Vec::new();
    for dir in ["examples/manifests", "tests/cases/valid"] {
        for e in std::fs::read_dir(root().join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "yaml") {
                all.push(p);
            }
        }
    }
    all.sort();
    all
}

/// The manifest as JSON (which is YAML) with the keys of every mapping in an order the
/// seed picks: the same manifest to anyone who reads it as data.
fn reordered(value: &serde_json::Value, seed: &mut u64) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            // A small LCG: deterministic for a seed, different orders across seeds.
            for i in (1..entries.len()).rev() {
                *seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                let j = usize::try_from(*seed >> 33).unwrap() % (i + 1);
                entries.swap(i, j);
            }
            Value::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (k.clone(), reordered(v, seed)))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(|v| reordered(v, seed)).collect()),
        other => other.clone(),
    }
}

/// The manifest with a comment line before each of its top-level keys, and one at the
/// end: YAML ignores them. (Only there: a line at column 0 can never be inside a block
/// scalar or the value of another key.)
fn commented(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let top = line.chars().next().is_some_and(|c| c.is_ascii_alphabetic());
        if top {
            out.push_str("# reviewed: nothing changes\n");
        }
        out.push_str(line);
        out.push('\n');
    }
    out.push_str("# the end\n");
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// `diff X X` has no finding, nor does X against X with its keys reordered, nor X
    /// against X with comments added.
    #[test]
    fn a_manifest_compared_with_itself_has_no_finding(pick in 0usize..1000, seed in any::<u64>()) {
        let all = manifests();
        let path = &all[pick % all.len()];
        let dir = path.parent().unwrap();
        let text = std::fs::read_to_string(path).unwrap();
        let old = side_of(dir, "old.yaml", text.clone());
        let same = side_of(dir, "new.yaml", text.clone());
        let report = diff::diff(Some(&old), Some(&same));
        prop_assert!(report.is_empty(), "{}: {:?}", path.display(), report.codes());
        let value = connectorgen_core::manifest::parse_value(&text).unwrap();
        let mut seed = seed;
        let json = serde_json::to_string_pretty(&reordered(&value, &mut seed)).unwrap();
        let moved = side_of(dir, "new.yaml", json);
        let report = diff::diff(Some(&old), Some(&moved));
        prop_assert!(report.is_empty(), "{} reordered: {:?}", path.display(), report.codes());
        let comments = side_of(dir, "new.yaml", commented(&text));
        let report = diff::diff(Some(&old), Some(&comments));
        prop_assert!(report.is_empty(), "{} commented: {:?}", path.display(), report.codes());
    }
}

/// Runs git in `dir`, failing the test when it fails.
fn git(dir: &Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.com",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", text(&out.stderr));
}

#[test]
fn base_ref_reads_the_old_side_through_git() {
    let case = root().join("tests/cases/diff/http-route-changed--base");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    git(d, &["init", "-q", "-b", "main"]);
    // Commit 1: something else, before the manifest existed.
    std::fs::write(d.join("README"), "x\n").unwrap();
    git(d, &["add", "README"]);
    git(d, &["commit", "-q", "-m", "before"]);
    git(d, &["tag", "before"]);
    // Commit 2: the old manifest and its document, under the names the new one uses.
    let old = std::fs::read_to_string(case.join("old.yaml"))
        .unwrap()
        .replace("old-openapi.yaml", "openapi.yaml");
    std::fs::write(d.join("connector.yaml"), old).unwrap();
    std::fs::copy(case.join("old-openapi.yaml"), d.join("openapi.yaml")).unwrap();
    git(d, &["add", "."]);
    git(d, &["commit", "-q", "-m", "old"]);
    // The working tree: the provider's document moved the poll target.
    std::fs::copy(case.join("new-openapi.yaml"), d.join("openapi.yaml")).unwrap();

    let out = run(d, &["diff", "--base", "main", "--format", "json"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["old"], "main:connector.yaml");
    let codes: Vec<&str> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, ["http-route-changed"], "{doc}");
    // The working tree was only read: nothing checked out, nothing staged.
    let status = std::process::Command::new("git")
        .args(["status", "--porcelain"])
        .current_dir(d)
        .output()
        .unwrap();
    assert_eq!(text(&status.stdout), " M openapi.yaml\n");

    // HEAD has the same manifest and document as the working tree once committed.
    git(d, &["commit", "-q", "-am", "new"]);
    let out = run(d, &["diff", "--base", "HEAD"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "no change to what the model is told\n");

    // A revision where the manifest does not exist yet: everything is new, no error.
    let out = run(d, &["diff", "--base", "before", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let codes: Vec<&str> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, ["new-paid-operation"], "{doc}");

    // A revision git does not know: could not run.
    let out = run(d, &["diff", "--base", "no-such-branch"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("git knows no such commit"),
        "{}",
        text(&out.stderr)
    );
}

/// The report of a case with findings on both sides (a removal points into the old
/// file), in every machine format.
fn formats_case() -> diff::Report {
    let dir = root().join("tests/cases/diff/operation-removed");
    let old = side(&dir, "old.yaml");
    let new = side(&dir, "new.yaml");
    diff::diff(old.as_ref(), new.as_ref())
}

/// The SARIF report has one result per finding, each pointing at its rule (the
/// real-document suite validates the same reports against the official SARIF 2.1.0
/// schema).
#[test]
fn sarif_results_point_at_their_rules() {
    for dir in cases() {
        let report = diff::diff(
            side(&dir, "old.yaml").as_ref(),
            side(&dir, "new.yaml").as_ref(),
        );
        let doc: serde_json::Value =
            serde_json::from_str(&report.render(Format::Sarif, false)).unwrap();
        let results = doc["runs"][0]["results"].as_array().unwrap();
        let rules = doc["runs"][0]["tool"]["driver"]["rules"]
            .as_array()
            .unwrap();
        assert_eq!(results.len(), report.codes().len());
        for r in results {
            let index = usize::try_from(r["ruleIndex"].as_u64().unwrap()).unwrap();
            assert_eq!(rules[index]["id"], r["ruleId"]);
        }
    }
}

#[test]
fn json_github_and_markdown_list_every_finding() {
    let report = formats_case();
    let codes = report.codes();
    assert_eq!(codes, ["operation-removed"]);
    let json: serde_json::Value =
        serde_json::from_str(&report.render(Format::Json, false)).unwrap();
    let f = &json["findings"][0];
    assert_eq!(f["operation"], "listRenders");
    assert_eq!(f["file"], "old.yaml");
    assert_eq!(
        (f["line"].as_u64(), f["severity"].as_str()),
        (Some(38), Some("error"))
    );
    assert_eq!(json["summary"]["errors"], 1);

    let github = report.render(Format::Github, false);
    let lines: Vec<&str> = github.lines().collect();
    assert_eq!(lines.len(), 2, "{github}");
    assert!(
        lines[0].starts_with("::error file=old.yaml,line=38,col=5,"),
        "{github}"
    );
    assert!(lines[0].contains("title=operation-removed::"), "{github}");
    assert_eq!(lines[1], "1 error, 0 warnings");

    let md = report.render(Format::Markdown, false);
    let table = markdown_table(&md);
    assert_eq!(table.len(), 2, "{md}");
    assert_eq!(table[0], ["severity", "rule", "operation", "finding"]);
    assert_eq!(table[1][1], "`operation-removed`");
}

/// The rows of the one table of a Markdown report, each as its cells: a row is a line
/// that starts with `|`, split at every `|` not escaped by a backslash. Fails when the
/// report has any other block than its heading, the table and the summary paragraph.
fn markdown_table(md: &str) -> Vec<Vec<String>> {
    let structure = crate::support::markdown::structure(md);
    assert_eq!(structure.headings, ["### connectorgen diff"], "{md}");
    assert!(
        structure.quotes.is_empty() && structure.bullets.is_empty() && structure.fences.is_empty(),
        "{md}"
    );
    let mut rows = Vec::new();
    for line in md.lines().filter(|l| l.starts_with('|')) {
        if line.starts_with("|---") {
            continue;
        }
        let mut cells = Vec::new();
        let mut cell = String::new();
        let mut chars = line[1..].chars();
        while let Some(c) = chars.next() {
            match c {
                '\\' => {
                    cell.push(c);
                    cell.extend(chars.next());
                }
                '|' => cells.push(std::mem::take(&mut cell).trim().to_string()),
                _ => cell.push(c),
            }
        }
        rows.push(cells);
    }
    rows
}

/// Text from a manifest cannot add a row, a cell, a link or HTML to the Markdown
/// report: a cost note made of table and HTML syntax stays inside its cell.
#[test]
fn markdown_cells_hold_hostile_text() {
    let dir = root().join("tests/cases/diff/cost-note-changed");
    let old = side(&dir, "old.yaml").unwrap();
    let hostile = std::fs::read_to_string(dir.join("new.yaml")).unwrap().replace(
        "Costs 1.00 USD per render.",
        "x |\\n| error | `forged` | a | b |\\n<img src=x onerror=alert(1)> [link](https://evil.example) ![i](https://evil.example/i.png)",
    );
    let new = side_of(&dir, "new.yaml", hostile);
    let md = diff::diff(Some(&old), Some(&new)).render(Format::Markdown, false);
    let rows = markdown_table(&md);
    // The header, then the two findings (the cost note and the generated text).
    assert_eq!(rows.len(), 3, "{md}");
    for row in &rows {
        assert_eq!(row.len(), 4, "{row:?}\n{md}");
    }
    // Every character that could open HTML, a link or an image is escaped.
    let cells = md.replace("<br>", "");
    let mut previous = ' ';
    for c in cells.chars() {
        if "<[]()!".contains(c) {
            assert_eq!(previous, '\\', "an unescaped {c} reached the report:\n{md}");
        }
        previous = c;
    }
}

/// The command line: exit codes and the two ways to name the sides.
#[test]
fn exit_codes() {
    let case = "tests/cases/diff/new-paid-operation";
    let r = root();
    let out = run(
        &r,
        &[
            "diff",
            &format!("{case}/old.yaml"),
            &format!("{case}/new.yaml"),
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "a warning alone passes: {}",
        text(&out.stderr)
    );
    let out = run(
        &r,
        &[
            "diff",
            "--deny-warnings",
            &format!("{case}/old.yaml"),
            &format!("{case}/new.yaml"),
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let out = run(&r, &["diff", &format!("{case}/old.yaml")]);
    assert_eq!(out.status.code(), Some(2));
    let out = run(
        &r,
        &[
            "diff",
            "tests/cases/invalid/duplicate-key.yaml",
            &format!("{case}/new.yaml"),
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("is not a valid manifest"),
        "{}",
        text(&out.stderr)
    );
}

/// The levels are the old side's: `lint:` there silences a rule, the same setting in
/// the new side does not (a change cannot turn off the gate that reviews it); and
/// `lintAllow` on the old operation silences it for that operation.
#[test]
fn levels_come_from_the_old_side() {
    let dir = root().join("tests/cases/diff/spends-removed");
    let old = std::fs::read_to_string(dir.join("old.yaml")).unwrap();
    let new = std::fs::read_to_string(dir.join("new.yaml")).unwrap();
    let allow = |text: &str| {
        text.replace(
            "targets: [muse, mcp]\n",
            "targets: [muse, mcp]\nlint: { spends-removed: allow }\n",
        )
    };
    let codes = |old: &str, new: &str| {
        diff::diff(
            Some(&side_of(&dir, "old.yaml", old.to_string())),
            Some(&side_of(&dir, "new.yaml", new.to_string())),
        )
        .codes()
    };
    assert!(codes(&old, &new).contains(&"spends-removed".to_string()));
    assert!(!codes(&allow(&old), &new).contains(&"spends-removed".to_string()));
    assert!(codes(&old, &allow(&new)).contains(&"spends-removed".to_string()));
    let allowed_here = old.replace(
        "    idempotency: required\n",
        "    idempotency: required\n    lintAllow: [spends-removed]\n",
    );
    assert!(!codes(&allowed_here, &new).contains(&"spends-removed".to_string()));
    // `deny` turns a warning into an error.
    let paid = root().join("tests/cases/diff/new-paid-operation");
    let deny = |t: String| {
        t.replace(
            "targets: [muse, mcp]\n",
            "targets: [muse, mcp]\nlint: { new-paid-operation: deny }\n",
        )
    };
    let report = diff::diff(
        Some(&side_of(
            &paid,
            "old.yaml",
            deny(std::fs::read_to_string(paid.join("old.yaml")).unwrap()),
        )),
        Some(&side_of(
            &paid,
            "new.yaml",
            std::fs::read_to_string(paid.join("new.yaml")).unwrap(),
        )),
    );
    assert_eq!(
        report.count(connectorgen_core::diagnostics::Severity::Error),
        1
    );
}

/// Runs one of the distribution scripts in `dir` with the binary under test.
fn script(dir: &Path, name: &str, env: &[(&str, &str)], args: &[&str]) -> std::process::Output {
    let mut cmd = std::process::Command::new("bash");
    cmd.arg(root().join("scripts").join(name))
        .args(args)
        .current_dir(dir)
        .env("CONNECTORGEN_BIN", env!("CARGO_BIN_EXE_connectorgen"))
        .env("NO_COLOR", "1")
        .env_remove("GITHUB_STEP_SUMMARY")
        .env_remove("GITHUB_BASE_REF");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

/// The Action with `diff: true` and the pre-commit diff hook, in a repository whose
/// last commit has the old manifest and whose working tree drops a `spends:`.
#[test]
fn the_action_and_the_pre_commit_hook_run_the_diff() {
    let case = root().join("tests/cases/diff/spends-removed");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    git(d, &["init", "-q", "-b", "main"]);
    std::fs::copy(case.join("old.yaml"), d.join("connector.yaml")).unwrap();
    git(d, &["add", "."]);
    git(d, &["commit", "-q", "-m", "old"]);
    std::fs::copy(case.join("new.yaml"), d.join("connector.yaml")).unwrap();
    let built = run(d, &["build"]);
    assert_eq!(built.status.code(), Some(0), "{}", text(&built.stderr));

    // Without the diff, the check alone passes.
    let out = script(d, "action.sh", &[], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let summary = d.join("summary.md");
    let out = script(
        d,
        "action.sh",
        &[
            ("CG_DIFF", "true"),
            ("CG_DIFF_BASE", "main"),
            ("GITHUB_STEP_SUMMARY", summary.to_str().unwrap()),
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("::error file=connector.yaml,line=13,col=5,endLine=13,endColumn=5,title=spends-removed::"),
        "{}",
        text(&out.stdout)
    );
    let table = markdown_table(&std::fs::read_to_string(&summary).unwrap());
    assert!(
        table.iter().any(|row| row[1] == "`spends-removed`"),
        "{table:?}"
    );
    // Outside a pull request, without a base: could not run.
    let out = script(d, "action.sh", &[("CG_DIFF", "true")], &[]);
    assert_eq!(out.status.code(), Some(2));

    let out = script(d, "pre-commit-diff.sh", &[], &["connector.yaml"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("spends-removed"),
        "{}",
        text(&out.stdout)
    );
    git(d, &["commit", "-q", "-am", "new"]);
    let out = script(d, "pre-commit-diff.sh", &[], &["connector.yaml"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
}
