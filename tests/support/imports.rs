//! `connectorgen import` run as a user runs it, on a document copied into a temporary
//! folder: the runner of `tests/cases/import/*.args` (import.rs) and of the real
//! documents' cases (`tests/real_documents/import/`), and the check that every document of
//! a folder imports to a manifest that builds and checks.
#![allow(dead_code)]

use std::path::Path;
use std::process::Output;
use std::sync::OnceLock;

use serde_json::Value;

use super::cli::{root, run, text};

/// The arguments of a case file: the document, then the extra arguments.
pub(crate) fn case_args(path: &Path) -> (String, Vec<String>) {
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
pub(crate) fn workspace(spec: &str) -> (tempfile::TempDir, String) {
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

pub(crate) fn import(dir: &Path, spec: &str, extra: &[String]) -> Output {
    let mut args = vec!["import", spec, "-o", "connectors/connector.yaml"];
    args.extend(extra.iter().map(String::as_str));
    run(dir, &args)
}

pub(crate) fn manifest_validator() -> &'static jsonschema::Validator {
    static VALIDATOR: OnceLock<jsonschema::Validator> = OnceLock::new();
    VALIDATOR.get_or_init(|| {
        let schema: Value = serde_json::from_str(&connectorgen_core::schema::manifest_schema())
            .expect("the schema is JSON");
        jsonschema::validator_for(&schema).expect("the schema compiles")
    })
}

/// The written manifest as the manifest parser reads it.
pub(crate) fn read_manifest(text: &str) -> Value {
    connectorgen_core::manifest::parse_value(text).unwrap_or_else(|e| panic!("not YAML: {e}"))
}

/// Runs the import case `path` (see the module doc of `import.rs`) and returns what to
/// snapshot: the command's output and the manifest it wrote.
pub(crate) fn case(path: &Path) -> String {
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
    let snapshot = format!("{}---\n{written}", text(&out.stdout));

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
    snapshot
}

/// The manifest with every suggestion taken as the header says: uncommented, and the
/// `?` after its value deleted. Suggestions that leave a blank (`pollWith: …`,
/// `idField: …`, a job status mapping's `done: […]`) stay.
pub(crate) fn take_suggestions(manifest: &str) -> String {
    let mut out = String::new();
    for line in manifest.lines() {
        let indent = line.len() - line.trim_start().len();
        let suggestion = line.trim_start().strip_prefix("# ").and_then(|rest| {
            let (value, evidence) = rest.split_once("?  ")?;
            (!value.contains("pollWith: …")
                && !value.contains("idField: …")
                && !value.contains("[…]"))
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

/// Issue 20: the manifest `import` writes from any whole document builds and checks
/// (warnings allowed), in a temporary folder, for every document under `folders`
/// (relative to the repository). A document that is not one `import` can read is in
/// `refused` with the finding it gets, so none is skipped silently; a multi-file
/// document is its folder and root file in `multi` (a folder with no root is left to
/// the cases that cover it); `left_out` are the documents made to hold operations
/// build refuses (the only ones whose manifest may leave one out).
pub(crate) fn every_document(
    folders: &[&str],
    refused: &[(&str, &str)],
    multi: &[(&str, &str)],
    left_out: &[&str],
) {
    let mut documents = Vec::new();
    for folder in folders {
        collect_documents(&root().join(folder), &mut documents);
    }
    documents.sort();
    let flags = [
        "--dashboard-url".to_string(),
        "https://provider.example/keys".to_string(),
        "--public-url".to_string(),
        "https://api.provider.example".to_string(),
    ];
    let mut seen = Vec::new();
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
            left_out.contains(&spec.as_str()),
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
