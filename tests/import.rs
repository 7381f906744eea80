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

use std::path::Path;
use std::process::Output;
use std::sync::OnceLock;

use cli::{root, run, text};
use serde_json::{Value, json};

/// The arguments of a case file: the document, then the extra arguments.
fn case_args(path: &Path) -> (String, Vec<String>) {
    let body = std::fs::read_to_string(path).expect("readable case");
    let mut lines = body
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string);
    let spec = lines.next().expect("a document on the first line");
    (spec, lines.collect())
}

/// A temporary folder with `specs/<file>` copied from the repository and an empty
/// `connectors/`. A multi-file document is named `FOLDER/ ROOT` (the folder, a space,
/// the root file in it): the folder's files are copied into `specs/`.
fn workspace(spec: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("specs")).unwrap();
    std::fs::create_dir(dir.path().join("connectors")).unwrap();
    if let Some((folder, file)) = spec.split_once(' ') {
        copy_folder(&root().join(folder), &dir.path().join("specs"));
        return (dir, format!("specs/{file}"));
    }
    let file = Path::new(spec).file_name().unwrap().to_string_lossy();
    std::fs::copy(root().join(spec), dir.path().join("specs").join(&*file)).unwrap();
    (dir, format!("specs/{file}"))
}

fn copy_folder(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_folder(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

fn import(dir: &Path, spec: &str, extra: &[String]) -> Output {
    let mut args = vec!["import", spec, "-o", "connectors/connector.yaml"];
    args.extend(extra.iter().map(String::as_str));
    run(dir, &args)
}

fn manifest_validator() -> &'static jsonschema::Validator {
    static VALIDATOR: OnceLock<jsonschema::Validator> = OnceLock::new();
    VALIDATOR.get_or_init(|| {
        let schema: Value = serde_json::from_str(&connectorgen_core::schema::manifest_schema())
            .expect("the schema is JSON");
        jsonschema::validator_for(&schema).expect("the schema compiles")
    })
}

/// The written manifest as the manifest parser reads it.
fn read_manifest(text: &str) -> Value {
    connectorgen_core::manifest::parse_value(text).unwrap_or_else(|e| panic!("not YAML: {e}"))
}

#[test]
fn import_cases() {
    insta::glob!("cases/import", "*.args", |path| {
        let (spec, extra) = case_args(path);
        let (dir, copied) = workspace(&spec);
        let p = dir.path();
        let out = import(p, &copied, &extra);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
        let written = std::fs::read_to_string(p.join("connectors/connector.yaml")).unwrap();
        assert!(
            written.contains(&format!("\nopenapi: ../{copied}\n")),
            "`openapi:` is relative to the manifest's folder"
        );
        insta::assert_snapshot!(format!("{}---\n{written}", text(&out.stdout)));

        let doc = read_manifest(&written);
        let errors: Vec<String> = manifest_validator()
            .iter_errors(&doc)
            .map(|e| format!("{e} at {}", e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "schema: {errors:?}");

        // The command the success line suggests builds it: the document is outside the
        // manifest's folder, so it names the folder to allow.
        let stdout = text(&out.stdout);
        let suggested = stdout
            .split("then `connectorgen ")
            .nth(1)
            .and_then(|rest| rest.split('`').next())
            .unwrap_or_else(|| panic!("no build command in {stdout}"));
        assert_eq!(
            suggested,
            "build connectors/connector.yaml --allow-read specs"
        );
        let mut args: Vec<&str> = suggested.split(' ').collect();
        args.push("-q");
        let built = run(p, &args);
        assert_eq!(built.status.code(), Some(0), "{}", text(&built.stderr));
        args[0] = "check";
        let checked = run(p, &args);
        assert_eq!(checked.status.code(), Some(0), "{}", text(&checked.stdout));

        // Taking the suggestions as the header says (uncomment, delete the `?`) gives a
        // manifest that still builds; only a poll target left as `…` needs more.
        let taken = take_suggestions(&written);
        if taken != written {
            std::fs::write(p.join("connectors/taken.yaml"), &taken).unwrap();
            let built = run(
                p,
                &[
                    "build",
                    "connectors/taken.yaml",
                    "-q",
                    "--out",
                    "taken",
                    "--allow-read",
                    "specs",
                ],
            );
            assert_eq!(
                built.status.code(),
                Some(0),
                "{}\n{taken}",
                text(&built.stderr)
            );
        }

        let mut again = extra.clone();
        again.push("--force".to_string());
        let out = import(p, &copied, &again);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let second = std::fs::read_to_string(p.join("connectors/connector.yaml")).unwrap();
        assert_eq!(written, second, "two imports differ");
    });
}

/// The manifest with every suggestion taken as the header says: uncommented, and the
/// `?` after its value deleted. Suggestions that leave a blank (`pollWith: …`, a job
/// status mapping's `done: […]`) stay.
fn take_suggestions(manifest: &str) -> String {
    let mut out = String::new();
    for line in manifest.lines() {
        let indent = line.len() - line.trim_start().len();
        let suggestion = line.trim_start().strip_prefix("# ").and_then(|rest| {
            let (value, evidence) = rest.split_once("?  ")?;
            (!value.contains("pollWith: …") && !value.contains("[…]"))
                .then(|| format!("{value}  {evidence}"))
        });
        match suggestion {
            Some(taken) => out.push_str(&format!("{}{taken}", &line[..indent])),
            None => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

#[test]
fn an_existing_file_is_kept_without_force() {
    let (dir, spec) = workspace("examples/specs/assemblyai/openapi.yml");
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
    let (dir, spec) = workspace("examples/specs/assemblyai/openapi.yml");
    let p = dir.path();
    std::os::unix::fs::symlink(p.join("connectors"), p.join("specs/link")).unwrap();
    let out = run(p, &["import", &spec, "-o", "specs/link/via-link.yaml"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let written = std::fs::read_to_string(p.join("connectors/via-link.yaml")).unwrap();
    assert!(
        written.contains("\nopenapi: ../specs/openapi.yml\n"),
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
    let original = root().join("examples/specs/assemblyai/openapi.yml");
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

/// Issue 20: the manifest `import` writes from any whole document builds and checks
/// (warnings allowed), in a temporary folder, for every document the repository holds.
/// A document that is not one `import` can read is named below with the finding it
/// gets, so none is skipped silently.
#[test]
fn every_bundled_document_imports_to_a_manifest_that_builds_and_checks() {
    let refused: &[(&str, &str)] = &[
        // Every operation of these is one build refuses: build's findings, nothing written.
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
        // Its one requirement is two schemes in one header: the invalid case's document.
        (
            "tests/cases/specs/duplicate-credential-header.yaml",
            "duplicate-credential-part",
        ),
        ("tests/cases/specs/duplicate-paths.json", "base-syntax"),
        ("tests/cases/specs/swagger.yaml", "base-not-openapi"),
        // JSON Schemas, not OpenAPI documents.
        (
            "tests/fixtures/mcp-2025-11-25.schema.json",
            "base-not-openapi",
        ),
        ("tests/fixtures/sarif-2.1.0.schema.json", "base-not-openapi"),
    ];
    let mut documents = Vec::new();
    for folder in ["examples/specs", "tests/cases/specs", "tests/fixtures"] {
        collect_documents(&root().join(folder), &mut documents);
    }
    documents.sort();
    assert!(documents.len() >= 25, "{documents:?}");
    let flags = [
        "--dashboard-url".to_string(),
        "https://provider.example/keys".to_string(),
        "--public-url".to_string(),
        "https://api.provider.example".to_string(),
    ];
    let mut seen = Vec::new();
    // Multi-file documents: the root is imported with its folder (the other files are
    // parts of it, not documents). `multi-bad/` is the invalid cases' document, every
    // operation of which reaches a reference that cannot be followed by design (its
    // symlink would not survive the copy either): those cases cover it.
    let multi: &[(&str, &str)] = &[
        (
            "examples/specs/digitalocean/specification/",
            "DigitalOcean-public.v2.yaml",
        ),
        ("tests/cases/specs/multi/", "api.yaml"),
        ("tests/cases/specs/multi-bad/", ""),
    ];
    for path in &documents {
        let spec = path
            .strip_prefix(root())
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let spec = match multi.iter().find(|(folder, _)| spec.starts_with(folder)) {
            Some((folder, root)) if !root.is_empty() && spec == format!("{folder}{root}") => {
                format!("{folder} {root}")
            }
            Some(_) => continue,
            None => spec,
        };
        let (dir, copied) = workspace(&spec);
        let p = dir.path();
        let mut out = import(p, &copied, &[]);
        // Only what the document lacks comes from the flags.
        if text(&out.stderr).contains("pass --") {
            out = import(p, &copied, &flags);
        }
        let stderr = text(&out.stderr);
        if let Some((_, finding)) = refused.iter().find(|(s, _)| *s == spec) {
            seen.push(spec.clone());
            assert!(
                out.status.code() == Some(1) && stderr.contains(finding),
                "{spec}: expected {finding}:\n{stderr}"
            );
            assert!(!p.join("connectors/connector.yaml").exists(), "{spec}");
            continue;
        }
        assert_eq!(out.status.code(), Some(0), "{spec}:\n{stderr}");
        // Leaving an operation out is for what build refuses, not a way to pass: only
        // the documents made to hold such operations have any.
        let written = std::fs::read_to_string(p.join("connectors/connector.yaml")).unwrap();
        assert_eq!(
            written.contains("\n  # left out: "),
            spec == "tests/cases/specs/unbuildable.yaml"
                || spec == "tests/cases/specs/import-3.2.yaml",
            "{spec}:\n{written}"
        );
        let args = [
            "build",
            "connectors/connector.yaml",
            "-q",
            "--allow-read",
            "specs",
        ];
        let built = run(p, &args);
        assert_eq!(
            built.status.code(),
            Some(0),
            "{spec}:\n{}",
            text(&built.stderr)
        );
        let mut args = args;
        args[0] = "check";
        let checked = run(p, &args);
        assert_eq!(
            checked.status.code(),
            Some(0),
            "{spec}:\n{}{}",
            text(&checked.stdout),
            text(&checked.stderr)
        );
    }
    let listed: Vec<&str> = refused.iter().map(|(s, _)| *s).collect();
    assert_eq!(seen, listed, "a document listed as refused is gone");
}

/// The OpenAPI-looking files under `dir` (JSON and YAML), recursively.
fn collect_documents(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            collect_documents(&path, out);
        } else if path
            .extension()
            .is_some_and(|e| e == "json" || e == "yaml" || e == "yml")
        {
            out.push(path);
        }
    }
}
