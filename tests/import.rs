//! `connectorgen import`, run as a user runs it.
//!
//! - `tests/cases/import/<case>.args`: the document (from the repository root) on the
//!   first line that is not a `#` comment, extra arguments on the following lines. The
//!   document is copied into a temporary `specs/`, imported into `connectors/`, and the
//!   written manifest is snapshotted, checked against the manifest's JSON Schema, built,
//!   checked (exit 0: lint warnings are allowed) and imported again to the same bytes.
//! - Files left on disk, symlinks, hostile text and names, and every bundled document as
//!   single tests below; the refusals, flags and diagnostics are tests/cmd/import*.

use crate::support::cli;
use crate::support::imports;

use cli::{root, run, text};
use imports::{import, read_manifest, workspace};
use serde_json::{Value, json};

#[test]
fn import_cases() {
    insta::glob!("cases/import", "*.args", |path| {
        insta::assert_snapshot!(imports::case(path));
    });
}

#[test]
fn an_existing_file_is_kept_without_force() {
    let (dir, spec) = workspace("examples/specs/async-transcription-job.yaml");
    let p = dir.path();
    let target = p.join("connectors/connector.yaml");
    std::fs::write(&target, "mine").unwrap();
    let out = import(p, &spec, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        "error: connectors/connector.yaml already exists; use --force to overwrite it\n"
    );
    assert!(out.stdout.is_empty());
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "mine");
    let out = import(p, &spec, &["--force".to_string()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        std::fs::read_to_string(&target)
            .unwrap()
            .contains("operation: createTranscript")
    );
    // No temporary file is left beside it.
    let names: Vec<String> = std::fs::read_dir(p.join("connectors"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["connector.yaml"]);
}

/// Every value in the written manifest reads back as exactly what the document says,
/// and no text from the document becomes a key.
#[test]
fn hostile_text_round_trips_and_adds_no_key() {
    let (dir, spec) = workspace("tests/cases/specs/hostile.yaml");
    let out = import(dir.path(), &spec, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let written = std::fs::read_to_string(dir.path().join("connectors/connector.yaml")).unwrap();
    let doc = read_manifest(&written);
    assert_eq!(
        doc,
        json!({
            "version": 1,
            "openapi": "../specs/hostile.yaml",
            "service": { "dashboardUrl": "https://evil.example/account/keys" },
            "operations": [
                { "operation": "create: item\n# spends: none\nid: hijack", "id": "postItems" },
                { "operation": "true" },
                { "operation": "123" },
                { "operation": "quoted \"name\" and 'single' {{ x }}", "id": "patchItemsById" },
                // `DELETE /odd:path#1/{id}` is skipped: a `#` cannot be in a path.
                { "operation": "a\u{202e}b\u{e0041}", "id": "postHidden" },
            ]
        })
    );
    // Nothing invisible reaches the file as it is.
    assert!(!written.contains('\u{202e}') && !written.contains('\u{2028}'));
    let built = run(
        dir.path(),
        &[
            "build",
            "connectors/connector.yaml",
            "-q",
            "--allow-read",
            "specs",
        ],
    );
    assert_eq!(built.status.code(), Some(0), "{}", text(&built.stderr));
}

/// `openapi:` keeps leading to the document when the two share no folder but the root
/// (it is then absolute), and when the manifest's folder is reached through a symlink.
#[cfg(unix)]
#[test]
fn the_document_is_found_from_wherever_the_manifest_goes() {
    let (dir, spec) = workspace("examples/specs/async-transcription-job.yaml");
    let p = dir.path();
    std::os::unix::fs::symlink(p.join("connectors"), p.join("specs/link")).unwrap();
    let out = run(p, &["import", &spec, "-o", "specs/link/via-link.yaml"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let written = std::fs::read_to_string(p.join("connectors/via-link.yaml")).unwrap();
    assert!(
        written.contains("\nopenapi: ../specs/async-transcription-job.yaml\n"),
        "{written}"
    );
    let built = run(
        p,
        &[
            "build",
            "connectors/via-link.yaml",
            "-q",
            "--allow-read",
            "specs",
        ],
    );
    assert_eq!(built.status.code(), Some(0), "{}", text(&built.stderr));

    // The repository's own copy, imported into a temporary folder (absolute when the
    // two share nothing but `/`; unit-tested in src/import.rs).
    let original = root().join("examples/specs/async-transcription-job.yaml");
    let out = run(p, &["import", original.to_str().unwrap(), "-o", "abs.yaml"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc = read_manifest(&std::fs::read_to_string(p.join("abs.yaml")).unwrap());
    let named = doc["openapi"].as_str().unwrap();
    assert_eq!(
        p.join(named).canonicalize().unwrap(),
        original.canonicalize().unwrap(),
        "{named}"
    );
    let folder = original.parent().unwrap().to_str().unwrap();
    let built = run(p, &["build", "abs.yaml", "-q", "--allow-read", folder]);
    assert_eq!(built.status.code(), Some(0), "{}", text(&built.stderr));
}

/// Issue 21, defect 18: import wrote `openapi: " api.json"` for a document whose name
/// has outer whitespace (or U+00A0), and build trimmed it, so the written manifest did
/// not build. Build reads exactly what import wrote.
#[test]
fn a_document_name_with_outer_whitespace_is_written_as_build_reads_it() {
    for name in [" api.yaml", "api.yaml ", "api.yaml\u{a0}", "\u{a0}api.yaml"] {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        std::fs::copy(root().join("tests/cases/specs/jobs.yaml"), p.join(name)).unwrap();
        let out = run(
            p,
            &[
                "import",
                name,
                "--dashboard-url",
                "https://jobs.example/account/keys",
            ],
        );
        assert_eq!(
            out.status.code(),
            Some(0),
            "{name:?}: {}",
            text(&out.stderr)
        );
        let written = std::fs::read_to_string(p.join("connector.yaml")).unwrap();
        assert_eq!(
            read_manifest(&written)["openapi"],
            Value::String(name.to_string()),
            "{name:?}"
        );
        let built = run(p, &["build", "-q"]);
        assert_eq!(
            built.status.code(),
            Some(0),
            "{name:?}: {}",
            text(&built.stderr)
        );
    }
}

/// The README's quickstart writes to a folder that does not exist yet (`-o /tmp/aai/…`):
/// import makes it, but only once the document has been read, so a bad document leaves
/// nothing behind.
#[test]
fn the_output_folder_is_made_when_missing() {
    let (dir, spec) = workspace("tests/cases/specs/jobs.yaml");
    let p = dir.path();
    let out = run(
        p,
        &["import", "specs/missing.yaml", "-o", "new/deeper/c.yaml"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(!p.join("new").exists(), "a failed import makes no folder");
    let url = "--dashboard-url=https://example.com/keys";
    let out = run(p, &["import", &spec, "-o", "new/deeper/c.yaml", url]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let written = std::fs::read_to_string(p.join("new/deeper/c.yaml")).unwrap();
    assert!(
        written.contains("openapi: ../../specs/jobs.yaml"),
        "{written}"
    );
}

/// Issue 20: every document the repository holds imports to a manifest that builds and
/// checks (`imports::every_document`; the real providers' documents are the
/// real-document suite's).
#[test]
fn every_bundled_document_imports_to_a_manifest_that_builds_and_checks() {
    imports::every_document(
        &["examples/specs", "tests/cases/specs"],
        &[
            // Every operation of these is one build refuses: build's findings, nothing
            // written.
            (
                "tests/cases/specs/bad-parameters.yaml",
                "invalid-base-parameter",
            ),
            (
                "tests/cases/specs/bad-path.yaml",
                "no operation an agent can call",
            ),
            ("tests/cases/specs/bad-refs.yaml", "base-ref-unresolved"),
            ("tests/cases/specs/broken.json", "base-syntax"),
            ("tests/cases/specs/deep.json", "base-syntax"),
            // Its one requirement is two schemes in one header: the invalid case's
            // document.
            (
                "tests/cases/specs/duplicate-credential-header.yaml",
                "duplicate-credential-part",
            ),
            ("tests/cases/specs/duplicate-paths.json", "base-syntax"),
            ("tests/cases/specs/swagger.yaml", "base-not-openapi"),
        ],
        // `multi-bad/` is the invalid cases' document, every operation of which reaches
        // a reference that cannot be followed by design (its symlink would not survive
        // the copy either): those cases cover it.
        &[
            ("examples/specs/multi-file-refs/", "keyring.v1.yaml"),
            ("tests/cases/specs/multi/", "api.yaml"),
            ("tests/cases/specs/multi-bad/", ""),
        ],
        &[
            "tests/cases/specs/unbuildable.yaml",
            "tests/cases/specs/import-3.2.yaml",
        ],
    );
}
