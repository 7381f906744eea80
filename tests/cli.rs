//! What of the binary needs code around it: file modes and the exact listing of what a
//! build leaves, two builds compared, the README's quickstart run as written; and the
//! runner of the CLI cases as files (tests/cmd/: arguments, exit code, output, files).

use crate::support::cli;

use std::path::PathBuf;

use cli::{root, run as connectorgen, text};

fn example(name: &str) -> PathBuf {
    root().join("examples/manifests").join(name)
}

#[test]
fn build_writes_three_files_beside_the_manifest_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        example("placeholder.yaml"),
        dir.path().join("connector.yaml"),
    )
    .unwrap();
    let out = connectorgen(dir.path(), &["build"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "wrote descriptions.md, llms.txt, openapi.json to generated\n"
    );
    assert!(out.stderr.is_empty());
    for file in ["openapi.json", "llms.txt", "descriptions.md"] {
        let meta = std::fs::metadata(dir.path().join("generated").join(file)).unwrap();
        assert!(meta.len() > 100, "{file} is written");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(
                meta.permissions().mode() & 0o777 & !0o022,
                0o644 & !0o022,
                "{file} is a normal file"
            );
        }
    }
    // No temporary files are left behind: the outputs, and the record of whose they are.
    let mut names: Vec<String> = std::fs::read_dir(dir.path().join("generated"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            ".connectorgen-manifest",
            "descriptions.md",
            "llms.txt",
            "openapi.json"
        ]
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("generated/.connectorgen-manifest")).unwrap(),
        "../connector.yaml\n"
    );
}

#[test]
fn rebuilding_replaces_outputs_with_identical_bytes() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(example("printshop.yaml"), dir.path().join("connector.yaml")).unwrap();
    assert_eq!(connectorgen(dir.path(), &["build"]).status.code(), Some(0));
    let first = std::fs::read(dir.path().join("generated/openapi.json")).unwrap();
    std::fs::write(dir.path().join("generated/openapi.json"), "stale").unwrap();
    assert_eq!(connectorgen(dir.path(), &["build"]).status.code(), Some(0));
    assert_eq!(
        std::fs::read(dir.path().join("generated/openapi.json")).unwrap(),
        first
    );
}

/// The commands of the README's quickstart, in order: each `sh` block of the
/// "## Quickstart" section, one command per line (a trailing `\` continues it).
fn readme_quickstart() -> Vec<Vec<String>> {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let start = readme
        .find("\n## Quickstart\n")
        .expect("README has a Quickstart");
    let rest = &readme[start + 1..];
    let section = &rest[..rest[1..].find("\n## ").map_or(rest.len(), |i| i + 1)];
    let mut commands = Vec::new();
    let mut in_sh = false;
    let mut line = String::new();
    for raw in section.lines() {
        if raw.starts_with("```") {
            in_sh = !in_sh && raw == "```sh";
            continue;
        }
        if !in_sh || raw.trim().is_empty() || raw.trim_start().starts_with('#') {
            continue;
        }
        line.push_str(raw.trim_end_matches('\\'));
        if raw.ends_with('\\') {
            continue;
        }
        // Plain words only: a quote, a variable or a pipe would need a shell, and
        // this test would no longer run the line as written.
        assert!(
            !line.contains(['"', '\'', '$', '|', '>', '<', '&', ';']),
            "README quickstart line needs a shell: {line}"
        );
        commands.push(line.split_whitespace().map(str::to_owned).collect());
        line.clear();
    }
    commands
}

fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            if entry.file_name() != "generated" {
                copy_tree(&entry.path(), &target);
            }
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// Every command of the README's quickstart runs as written and succeeds, in a fresh
/// folder holding a copy of `examples/` (the commands name it relatively), with `/tmp/`
/// moved under that folder so parallel runs do not share files.
#[test]
fn readme_quickstart_runs_as_written() {
    let commands = readme_quickstart();
    assert!(commands.len() >= 5, "{commands:?}");
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    copy_tree(&root().join("examples"), &work.join("examples"));
    let tmp = format!("{}/tmp/", dir.path().display());
    for command in &commands {
        assert_eq!(command[0], "connectorgen", "{command:?}");
        let args: Vec<String> = command[1..]
            .iter()
            .map(|a| a.replacen("/tmp/", &tmp, 1))
            .collect();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = connectorgen(&work, &args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{command:?}: {}",
            text(&out.stderr)
        );
    }
    assert!(work.join("generated/openapi.json").is_file());
    assert!(dir.path().join("tmp/aai/generated/openapi.json").is_file());
    assert!(
        work.join("examples/manifests/generated/mcp-tools.json")
            .is_file()
    );
}

/// The CLI cases as data: each `tests/cmd/*.trycmd` file holds commands with their
/// exit code and output (stdout and stderr together), each `*.toml` one command whose
/// `.stdout` and `.stderr` are compared byte for byte; `NAME.in/` is the folder they run
/// in, `NAME.out/` the files they must leave (CONTRIBUTING.md, "Adding a test case").
/// `TRYCMD=overwrite cargo test --test integration cli::cli_cases` rewrites the expected
/// output after a deliberate change: read the diff before committing it.
#[test]
fn cli_cases() {
    let cases = trycmd::TestCases::new();
    cases
        .register_bin("connectorgen", trycmd::cargo::cargo_bin!("connectorgen"))
        .env("NO_COLOR", "1")
        .case("tests/cmd/*.trycmd")
        .case("tests/cmd/*.toml");
    // The generator alone has no `serve` or `probe`: its help is another case file.
    if cfg!(not(feature = "runtime")) {
        cases
            .skip("tests/cmd/help.trycmd")
            .case("tests/cmd-no-runtime/*.trycmd");
    }
}
