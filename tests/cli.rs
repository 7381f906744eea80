//! The `connectorgen` binary as a user runs it: exit codes, what it prints, and what
//! it leaves on disk.

#[path = "support/cli.rs"]
mod cli;

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
    // No temporary files are left behind.
    let names: Vec<_> = std::fs::read_dir(dir.path().join("generated"))
        .unwrap()
        .collect();
    assert_eq!(names.len(), 3);
}

#[test]
fn out_flag_chooses_the_folder_and_creates_it() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = example("bank.yaml");
    let out = connectorgen(
        dir.path(),
        &["build", manifest.to_str().unwrap(), "--out", "a/b"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(dir.path().join("a/b/llms.txt").is_file());
}

#[test]
fn invalid_manifest_exits_1_and_leaves_existing_outputs_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let generated = dir.path().join("generated");
    std::fs::create_dir(&generated).unwrap();
    std::fs::write(generated.join("openapi.json"), "previous").unwrap();
    let manifest = std::fs::read_to_string(example("video.yaml"))
        .unwrap()
        .replace("pollWith: getVideo", "pollWith: getVidoe");
    std::fs::write(dir.path().join("connector.yaml"), &manifest).unwrap();
    // Where the misspelt name is, counted here from the text itself (1-based).
    let offset = manifest.find("getVidoe").unwrap();
    let line = manifest[..offset].matches('\n').count() + 1;
    let column = offset - manifest[..offset].rfind('\n').map_or(0, |n| n + 1) + 1;
    let out = connectorgen(dir.path(), &["build"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("unknown-poll-target"), "{stderr}");
    assert!(
        stderr.contains(&format!("[connector.yaml:{line}:{column}]")),
        "names file, line {line} and column {column}: {stderr}"
    );
    let (number, snippet) = stderr
        .lines()
        .find_map(|l| l.trim_start().split_once(" │ "))
        .filter(|(n, _)| n.parse::<usize>().is_ok())
        .map(|(n, rest)| (n.parse::<usize>().unwrap(), rest))
        .unwrap_or_else(|| panic!("a numbered snippet line: {stderr}"));
    let lines: Vec<&str> = manifest.lines().collect();
    assert_eq!(
        snippet,
        lines[number - 1],
        "snippet lines carry their real numbers: {stderr}"
    );
    assert!(stderr.contains("did you mean `getVideo`?"), "{stderr}");
    assert!(!stderr.contains('\u{1b}'), "NO_COLOR is honoured");
    assert!(out.stdout.is_empty());
    assert_eq!(
        std::fs::read_to_string(generated.join("openapi.json")).unwrap(),
        "previous"
    );
    assert_eq!(
        std::fs::read_dir(&generated).unwrap().count(),
        1,
        "nothing else written"
    );
}

#[test]
fn unreadable_input_exits_2_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("latin1.yaml"),
        b"version: 1\nname: caf\xe9\n",
    )
    .unwrap();
    std::fs::create_dir(dir.path().join("folder.yaml")).unwrap();
    for (args, expect) in [
        (vec!["build"], "cannot read connector.yaml"),
        (vec!["build", "missing.yaml"], "cannot read missing.yaml"),
        (
            vec!["build", "folder.yaml"],
            "folder.yaml is not a regular file",
        ),
        (
            vec!["build", "latin1.yaml"],
            "latin1.yaml is not UTF-8 text (invalid byte at line 2, column 10)",
        ),
    ] {
        let out = connectorgen(dir.path(), &args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = text(&out.stderr);
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.starts_with("error: ") && stderr.contains(expect),
            "{stderr}"
        );
    }
}

#[test]
fn unwritable_output_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("generated"), "a file, not a folder").unwrap();
    std::fs::copy(example("video.yaml"), dir.path().join("connector.yaml")).unwrap();
    let out = connectorgen(dir.path(), &["build"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("could not create the output folder generated"),
        "{stderr}"
    );
}

#[test]
fn usage_errors_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(
        connectorgen(dir.path(), &["frobnicate"]).status.code(),
        Some(2)
    );
    assert_eq!(
        connectorgen(dir.path(), &["build", "--nope"]).status.code(),
        Some(2)
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
