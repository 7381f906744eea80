//! The author's day where it needs code: a path of any length, templates edited between
//! builds, the committed schema, completions, the version, colour, FIFOs (`build
//! --watch` is in watch.rs). init, explain and every `--help` are files in tests/cmd/.

use crate::support::cli;

use std::path::Path;
use std::process::{Command, Output};

use cli::{bin, root, text, workspace};

/// Like `cli::run`, but colour is left to each test's own flags.
fn run(dir: &Path, args: &[&str]) -> Output {
    bin()
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the binary runs")
}

/// Issue 21, defect 3: the path column was as wide as the longest path, and `format!`
/// cannot pad past 65,535 (a panic, exit 101). The column is bounded; a longer path
/// overruns it on its own row.
#[test]
fn explain_list_bounds_its_columns_for_a_path_of_any_length() {
    let dir = tempfile::tempdir().unwrap();
    let long = format!("/{}", "a".repeat(70_000));
    let manifest = format!(
        "version: 1\nservice:\n  name: Example\n  version: 0.1.0\n  description: A connector.\n  publicUrl: https://connector.example.com\n  dashboardUrl: https://example.com/settings\noperations:\n  - id: longPath\n    method: get\n    path: {long}\n    summary: Read the long thing\n    description: Read-only. Returns the thing.\n  - id: short\n    method: delete\n    path: /b\n    summary: Delete the short thing\n    description: Deletes the thing.\n"
    );
    std::fs::write(dir.path().join("connector.yaml"), manifest).unwrap();
    let out = run(dir.path(), &["explain", "--list"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines[0], format!("longPath  GET    {long}  free read"));
    // The short row is padded to the bounded column, not to the long path.
    assert_eq!(
        lines[1],
        format!("short     DELETE {:60}  confirm (cannot be undone)", "/b")
    );
}

#[test]
fn templates_export_then_override() {
    let dir = workspace("examples/manifests/placeholder.yaml", false);
    let p = dir.path();
    // What export writes and its refusals, a broken template and a file that is no
    // template are tests/cmd/templates.trycmd.
    let out = run(p, &["templates", "export", "tpl"]);
    assert_eq!(out.status.code(), Some(0));

    // Exported defaults give the same bytes as the embedded ones.
    assert_eq!(run(p, &["build", "--out", "a"]).status.code(), Some(0));
    assert_eq!(
        run(p, &["build", "--out", "b", "--templates", "tpl"])
            .status
            .code(),
        Some(0)
    );
    for f in ["openapi.json", "llms.txt", "descriptions.md"] {
        assert_eq!(
            std::fs::read(p.join("a").join(f)).unwrap(),
            std::fs::read(p.join("b").join(f)).unwrap()
        );
    }

    // An override changes the output; the manifest's `templates:` works too.
    let llms = std::fs::read_to_string(p.join("tpl/llms.txt.j2")).unwrap();
    std::fs::write(
        p.join("tpl/llms.txt.j2"),
        llms.replace("## Setup", "## Getting connected"),
    )
    .unwrap();
    assert_eq!(
        run(p, &["build", "--templates", "tpl"]).status.code(),
        Some(0)
    );
    assert!(
        std::fs::read_to_string(p.join("generated/llms.txt"))
            .unwrap()
            .contains("## Getting connected")
    );
    let manifest = std::fs::read_to_string(p.join("connector.yaml")).unwrap();
    std::fs::write(
        p.join("connector.yaml"),
        format!("{manifest}templates: tpl\n"),
    )
    .unwrap();
    std::fs::remove_dir_all(p.join("generated")).unwrap();
    assert_eq!(run(p, &["build"]).status.code(), Some(0));
    assert!(
        std::fs::read_to_string(p.join("generated/llms.txt"))
            .unwrap()
            .contains("## Getting connected")
    );
}

#[test]
fn schema_prints_the_committed_schema() {
    let out = run(&root(), &["schema"]);
    assert_eq!(out.status.code(), Some(0));
    let committed = std::fs::read_to_string(root().join("connector.schema.json")).unwrap();
    assert_eq!(text(&out.stdout), committed);
}

#[test]
fn completions_for_every_shell() {
    for shell in ["bash", "zsh", "fish", "powershell"] {
        let out = run(&root(), &["completions", shell]);
        assert_eq!(out.status.code(), Some(0), "{shell}");
        let script = text(&out.stdout);
        assert!(
            script.contains("connectorgen") && script.contains("explain"),
            "{shell}"
        );
    }
}

/// The version names the commit it was built from, so it cannot be a case file (every
/// `--help` is one: tests/cmd/help.trycmd).
#[test]
fn version_names_the_commit() {
    let out = run(&root(), &["--version"]);
    // Built from this git checkout (as tests always are), the version names its commit.
    let head = Command::new("git")
        .current_dir(root())
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .expect("git runs");
    assert!(head.status.success(), "the tests run in a git checkout");
    assert_eq!(
        text(&out.stdout),
        format!(
            "connectorgen {} ({})\n",
            env!("CARGO_PKG_VERSION"),
            text(&head.stdout).trim()
        )
    );
}

/// Colour goes by `--color` and `NO_COLOR`, whatever the output is (escape sequences are
/// code's to assert: `--quiet` is in tests/cmd/build-warnings.trycmd).
#[test]
fn color_is_honoured() {
    let dir = workspace("tests/cases/lint/vague-summary.yaml", false);
    let p = dir.path();
    let out = run(p, &["build", "--color", "always"]);
    assert!(
        text(&out.stderr).contains('\u{1b}'),
        "always colours, even on a pipe"
    );
    let out = run(p, &["build", "--color", "never"]);
    assert!(!text(&out.stderr).contains('\u{1b}'));
    let out = bin()
        .args(["build", "--color", "auto"])
        .current_dir(p)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(!text(&out.stderr).contains('\u{1b}'));
    std::fs::write(p.join("generated/llms.txt"), "stale").unwrap();
    let out = run(p, &["check", "-q", "--color", "always"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stdout).contains("\u{1b}[32m+"),
        "drift is shown, coloured, even when quiet"
    );
}

#[cfg(unix)]
#[test]
fn a_fifo_among_templates_or_outputs_does_not_hang() {
    let dir = workspace("examples/manifests/placeholder.yaml", false);
    let p = dir.path();
    std::fs::create_dir(p.join("tpl")).unwrap();
    let mkfifo = |path: &Path| {
        let status = Command::new("mkfifo")
            .arg(path)
            .status()
            .expect("mkfifo runs");
        assert!(status.success());
    };
    mkfifo(&p.join("tpl/llms.txt.j2"));
    let out = run(p, &["build", "--templates", "tpl"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("not a regular file"),
        "{}",
        text(&out.stderr)
    );

    assert_eq!(run(p, &["build"]).status.code(), Some(0));
    std::fs::remove_file(p.join("generated/llms.txt")).unwrap();
    mkfifo(&p.join("generated/llms.txt"));
    let out = run(p, &["check"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    assert!(
        text(&out.stderr).contains("not a regular file"),
        "{}",
        text(&out.stderr)
    );
}
