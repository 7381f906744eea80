//! The `connectorgen` binary as a user runs it: exit codes, what it prints, and what
//! it leaves on disk.

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
fn a_folder_holding_another_manifests_outputs_is_refused_unless_forced() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["a.yaml", "b.yaml"] {
        std::fs::copy(example("placeholder.yaml"), dir.path().join(name)).unwrap();
    }
    let first = connectorgen(dir.path(), &["build", "a.yaml"]);
    assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
    let before = std::fs::read(dir.path().join("generated/openapi.json")).unwrap();
    // Make b's outputs differ, so a replacement would show.
    let b = std::fs::read_to_string(dir.path().join("b.yaml")).unwrap();
    std::fs::write(
        dir.path().join("b.yaml"),
        b.replacen("A template connector.", "Connector B.", 1),
    )
    .unwrap();

    // Both share the default `generated/`: the second is refused, naming both and the fix.
    let second = connectorgen(dir.path(), &["build", "b.yaml"]);
    assert_eq!(second.status.code(), Some(2), "{}", text(&second.stderr));
    assert_eq!(
        text(&second.stderr),
        "error: could not write to generated: it holds the outputs of another manifest, a.yaml; \
         building b.yaml there would replace them. Give each manifest its own folder: \
         `connectorgen build b.yaml --out <folder>` (or --force to make this folder b.yaml's)\n"
    );
    assert_eq!(
        std::fs::read(dir.path().join("generated/openapi.json")).unwrap(),
        before,
        "nothing was written"
    );
    // Rebuilding the owner is fine; `--out` gives the other its own folder.
    let again = connectorgen(dir.path(), &["build", "a.yaml"]);
    assert_eq!(again.status.code(), Some(0), "{}", text(&again.stderr));
    let own = connectorgen(dir.path(), &["build", "b.yaml", "--out", "generated-b"]);
    assert_eq!(own.status.code(), Some(0), "{}", text(&own.stderr));
    // `check` does not count the record as drift.
    let check = connectorgen(dir.path(), &["check", "a.yaml"]);
    assert_eq!(check.status.code(), Some(0), "{}", text(&check.stderr));

    // --force takes the folder over; then the first manifest is the one refused.
    let forced = connectorgen(dir.path(), &["build", "b.yaml", "--force"]);
    assert_eq!(forced.status.code(), Some(0), "{}", text(&forced.stderr));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("generated/.connectorgen-manifest")).unwrap(),
        "../b.yaml\n"
    );
    let back = connectorgen(dir.path(), &["build", "a.yaml"]);
    assert_eq!(back.status.code(), Some(2), "{}", text(&back.stderr));
    assert!(text(&back.stderr).contains("another manifest, b.yaml;"));

    // A record naming a manifest that is gone (renamed) is taken over without a word.
    std::fs::rename(dir.path().join("b.yaml"), dir.path().join("c.yaml")).unwrap();
    let renamed = connectorgen(dir.path(), &["build", "a.yaml"]);
    assert_eq!(renamed.status.code(), Some(0), "{}", text(&renamed.stderr));
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
        .map_or_else(
            || panic!("a numbered snippet line: {stderr}"),
            |(n, rest)| (n.parse::<usize>().unwrap(), rest),
        );
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
/// exit code and output (stdout and stderr together). `TRYCMD=overwrite cargo test
/// --test integration cli::cli_cases` rewrites the expected output after a deliberate
/// change: read the diff before committing it.
#[test]
fn cli_cases() {
    trycmd::TestCases::new()
        .register_bin("connectorgen", trycmd::cargo::cargo_bin!("connectorgen"))
        .env("NO_COLOR", "1")
        .case("tests/cmd/*.trycmd");
}
