//! The manifest's JSON Schema, `connector.schema.json` at the repository root.
//!
//! - The committed file is exactly what `connectorgen schema` prints. To regenerate it:
//!   `cargo run -- schema > connector.schema.json`, or
//!   `CONNECTORGEN_UPDATE_SCHEMA=1 cargo test --test integration schema::`.
//! - Every manifest that must build or lint (`examples/manifests/`, `tests/cases/valid/`,
//!   `tests/cases/lint/`, and the `connectorgen init` starter) validates against it.
//! - Every file of `tests/cases/invalid/` is listed below, once: rejected by the schema,
//!   valid for the schema (its problem needs more than the shape of the YAML), or not
//!   YAML a JSON Schema can see. A new case fails here until it is added to one list.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use connectorgen_core::schema::manifest_schema;

/// Invalid cases the schema rejects: their problem is one of shape.
const REJECTED: &[&str] = &[
    "missing-key--confirm-when",
    "unknown-key--confirm",
    "unknown-payer",
    "invalid-amount",   // `amount: 0`, a quoted number, a negative `scale`
    "invalid-currency", // `usd`: not three capitals
    "invalid-budget",   // `credits=20/days`: not UNIT=LIMIT/WINDOW
    "wrong-type--confirm",
    "unknown-idempotency--header-name", // `:` is no header name character
    "unknown-idempotency--key-name",    // a backtick and new lines
    "invalid-argument-name",
    "invalid-fixed",
    "invalid-probe",                  // `probe.input` is a string, not a mapping
    "bad-scope",                      // `videos write`: a space in a scope
    "invalid-lint-setting",           // `error` is not a level
    "invalid-lint-setting--max",      // `max` on a lint without it, and `max: 0`
    "inline-key-with-base",           // `method` and `input` beside `operation`
    "inline-key-with-base--document", // `schemas`, `servers`, `errors` beside `openapi`
    "inline-key-with-base--http",     // `status`, `params`, `openapi`, … beside `operation`
    "invalid-auth",                   // `scheme: apikey`, `in: cookie`
    "invalid-auth-env",               // `env: SCRIBE-TOKEN` is not a variable name
    "invalid-credential-part",        // `in: headers`, a `format` without `{value}`
    "invalid-media-type",             // `octet-stream`: not type/subtype
    "invalid-status",                 // 302 as a success status
    "invalid-schema",                 // `output: object`: not a mapping or a boolean
    "missing-key",
    "missing-key--auth",
    "missing-key--spends-note",
    "no-operations",          // `operations: []`
    "operation-without-base", // `operation` without `openapi`
    "non-positive-typical-seconds",
    "unknown-idempotency",
    "unknown-idempotency--mapping", // two keys in the mapping: `oneOf` fails
    "unknown-key",
    "unknown-key--top-level",
    "unknown-lint",
    "unknown-lint--lint-allow",
    "unknown-method",
    "unknown-spend-kind",
    "spend-kind-irreversible", // `irreversible` is not a spend kind any more
    "unknown-async-returns",   // `returns: changes`
    "unknown-mcp-output",      // `output: summery`, `output: nothing`
    "unknown-target",
    "unsafe-poll-target--among-many-problems", // among them `kind: credit`, `typicalSeconds: -5`
    "unsupported-version",
    "wrong-type",
    "wrong-type--word-for-a-number", // `typicalSeconds: soon`
];

/// Invalid cases the schema accepts: the rule needs more than one value, the file
/// system, the URL or path syntax, or the chosen targets. `validate.rs` reports them.
const ACCEPTED: &[&str] = &[
    "unknown-amount-argument", // which inputs the operation has, and their types
    "invalid-currency--missing", // a currency needed beside an amount of money: two values
    "invalid-budget--uncounted", // a budget against the operations' amounts
    "invalid-refund",          // what the named operation is
    "unusable-per-person",     // `checkWith` names an operation that spends
    "unusable-per-person--oauth", // an API key header for OAuth tokens; plain http
    "unusable-per-person--missing", // no OAuth endpoints written or in a document
    "empty-text--confirm-when", // blank text is a string of one character
    "get-with-side-effect--confirm-when",
    "bad-templates-dir",
    "bad-url",
    "bad-url--relative",
    "base-not-openapi", // the base document: the schema sees only the manifest
    "invalid-credential-part--base", // the document's security schemes: the schema sees only the manifest
    "invalid-credential-part--base-env", // how many parts the document's credential has
    "invalid-credential-part--base-env-nowhere", // whether the document declares a scheme
    "duplicate-credential-part",     // header names compared whatever their case: two values
    "duplicate-credential-part--base", // the document's schemes: the schema sees only the manifest
    "openapi32-unsupported", // the base document's 3.2 operations: the schema sees only the manifest
    "invalid-base-path",
    "invalid-base-path--url-rules",
    "invalid-base-parameter",
    "ambiguous-base-operation",
    "base-ref-url",
    "base-ref-outside",
    "base-ref-outside--symlink",
    "base-ref-unreadable",
    "base-ref-pointer",
    "base-ref-cycle",
    "base-ref-limit",
    "base-syntax--referenced-file",
    "base-ref-unresolved",
    "base-syntax",
    "base-syntax--duplicate-json-key",
    "base-syntax--json-depth",
    "base-unreadable",
    "base-unreadable--environ", // where the file is: the schema sees only the path's text
    "base-unreadable--folder",
    "duplicate-operation-id",
    "duplicate-route",
    "empty-text", // only blanks: the schema does not look inside text
    "empty-text--note",
    "empty-text--when",
    "empty-text--tags",
    "bad-url--public-url-query", // a query is fine in a link, not in a base URL: syntax
    "confirm-contradicts-spends", // `confirm: false` beside `spends`: two values
    "sandbox-is-production",     // two URLs compared: the schema sees each alone
    "get-with-side-effect--confirm",
    "id-not-for-target",
    "idempotency-contradicts-base",
    "idempotency-key-not-found", // the key is missing from the base document
    "idempotency-second-key",    // the base document declares another key
    "idempotency-key-not-found--body", // the shared schema lacks the field
    "invalid-openapi-fragment",  // which fields a fragment may hold is connectorgen's rule
    "invalid-openapi-fragment--parameters",
    "invalid-openapi-fragment--schema", // the merged operation against OpenAPI 3.1
    "invalid-openapi-fragment--fields", // nested objects against OpenAPI 3.1
    "input-not-allowed--fragment",      // a requestBody inside the fragment
    "bad-url--fragment-servers",        // a URL inside the fragment
    "invalid-parameter",                // a path without the parameter; a reserved header
    "invalid-parameter--path-optional",
    "invalid-status--no-content", // two values: 204 and an `output`
    "invalid-style",              // the style against the schema
    "invalid-style--location",    // the style against the list it is in
    "get-with-side-effect",
    "get-with-side-effect--async",
    "read-with-side-effect", // `read: true` beside `spends`: two values
    "read-with-side-effect--async",
    "unknown-id-field", // the property against the answer's schema: two values
    "unknown-id-field--path", // a path into the answer's envelope: the same
    "no-job-id",        // the answer's schema against the poll target: two places
    "unknown-job-status", // the values against the poll's answer schema: two values
    "unknown-cancel-target", // an operation id: a value the schema cannot know
    "unusable-duplicate-read", // which operation is a free read: the schema sees each alone
    "unsafe-cancel-target", // what the named operation is: two values
    "unsafe-cancel-target--without-id", // the named operation's path: two values
    "input-not-allowed",
    "input-not-allowed--input-type-without-input",
    "invalid-operation-id",
    "invalid-path",
    "invalid-path--unclosed-param",
    "invalid-query-parameter", // the same name twice
    "invalid-token-prefix",
    "mcp-input-collision",  // two `args:` values alike
    "mcp-output-too-large", // a size after rendering
    "mcp-tool-name",        // 128 characters and `.` are fine in other targets
    "mcp-tool-name--long",
    "unknown-mcp-input",            // the operation's inputs
    "unknown-omit-path",            // the tool's inputs
    "omit-required",                // the tool's inputs
    "omit-filled",                  // the tool's inputs
    "unknown-mcp-input--no-inputs", // the operation's inputs
    "missing-key--base-publicurl",  // the base document has no server
    "missing-key--input",           // `input` needed because of `inputType`
    "operation-listed-twice",
    "openapi30-unsupported", // a `mutualTLS` scheme in the base document
    "unknown-poll-target",
    "unsafe-poll-target",
    "unsafe-poll-target--self",
    "unsafe-poll-target--spends",
    "unknown-base-operation",
    "unknown-base-operation--route",
    "unsupported-method",
    "schema-not-valid", // the manifest's schema does not look inside JSON Schemas
    "schema-not-valid--json-flow", // the same, written as one-line JSON
    "unresolved-ref",   // references resolve against `schemas:`
    "unresolved-ref--defs",
    "unresolved-ref--fragment",
];

/// Invalid cases that are not YAML a JSON Schema can be applied to: the YAML parser
/// rejects them first (editors report these themselves).
const NOT_JSON: &[(&str, &str)] = &[
    ("duplicate-key", "a key twice in one mapping"),
    (
        "wrong-type--mapping-for-list",
        "a list item inside a mapping is a YAML syntax error",
    ),
    ("wrong-type--non-finite-number", "JSON cannot hold `.inf`"),
    ("yaml-limit", "an alias bomb, over the parser's budget"),
    ("yaml-limit--depth", "nesting over the parser's depth limit"),
    (
        "yaml-limit--block-depth",
        "block nesting over the parser's depth limit",
    ),
    (
        "yaml-limit--flow-depth",
        "flow nesting over the parser's depth limit",
    ),
    ("yaml-syntax", "an unclosed flow mapping"),
];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn committed_schema_is_current() {
    let path = root().join("connector.schema.json");
    let schema = manifest_schema();
    if std::env::var_os("CONNECTORGEN_UPDATE_SCHEMA").is_some() {
        std::fs::write(&path, &schema).expect("connector.schema.json is writable");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if committed != schema {
        let line = committed
            .lines()
            .zip(schema.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| committed.lines().count().min(schema.lines().count()))
            + 1;
        panic!(
            "connector.schema.json differs from the manifest types (first at line {line}); \
             regenerate it with `cargo run -- schema > connector.schema.json` \
             or `CONNECTORGEN_UPDATE_SCHEMA=1 cargo test --test integration schema::`"
        );
    }
}

#[test]
fn schema_is_deterministic_json_with_one_trailing_newline() {
    let schema = manifest_schema();
    assert_eq!(schema, manifest_schema());
    assert!(schema.ends_with("}\n"), "one trailing newline");
    let value: serde_json::Value = serde_json::from_str(&schema).expect("the schema is JSON");
    assert_eq!(
        value["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    assert!(
        value.get("$id").is_none(),
        "no $id: the file lives wherever it is copied"
    );
    assert!(value["title"].is_string() && value["description"].is_string());
}

/// Every property in the schema has a description and an example.
#[test]
fn every_property_is_described_with_an_example() {
    fn walk(path: &str, schema: &serde_json::Value, missing: &mut Vec<String>) {
        let Some(properties) = schema.get("properties").and_then(|p| p.as_object()) else {
            for key in ["items", "additionalProperties"] {
                if let Some(sub) = schema.get(key) {
                    walk(&format!("{path}/{key}"), sub, missing);
                }
            }
            for branch in schema
                .get("anyOf")
                .and_then(|a| a.as_array())
                .into_iter()
                .flatten()
            {
                walk(path, branch, missing);
            }
            return;
        };
        for (name, property) in properties {
            let here = format!("{path}/{name}");
            if property
                .get("description")
                .and_then(|d| d.as_str())
                .is_none_or(str::is_empty)
            {
                missing.push(format!("{here}: description"));
            }
            // The lint table's keys are described by the lint; their values have examples.
            let is_lint = path.ends_with("/lint");
            if !is_lint
                && property
                    .get("examples")
                    .and_then(|e| e.as_array())
                    .is_none_or(Vec::is_empty)
            {
                missing.push(format!("{here}: examples"));
            }
            walk(&here, property, missing);
        }
    }
    let schema: serde_json::Value = serde_json::from_str(&manifest_schema()).unwrap();
    let mut missing = Vec::new();
    walk("", &schema, &mut missing);
    assert!(
        missing.is_empty(),
        "undocumented properties:\n{}",
        missing.join("\n")
    );
}

fn validator() -> &'static jsonschema::Validator {
    static VALIDATOR: OnceLock<jsonschema::Validator> = OnceLock::new();
    VALIDATOR.get_or_init(|| {
        let schema: serde_json::Value =
            serde_json::from_str(&manifest_schema()).expect("the schema is JSON");
        let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
        // The validator is live: a minimal manifest passes, and the same with `version: 2`
        // does not.
        let mut manifest = serde_json::json!({
            "version": 1,
            "service": { "name": "N", "version": "1", "description": "D",
                         "publicUrl": "https://a.example", "dashboardUrl": "https://a.example/t" },
            "operations": [{ "id": "a", "method": "get", "path": "/a", "summary": "Read one thing",
                             "description": "Read-only." }]
        });
        assert!(validator.is_valid(&manifest), "a minimal manifest is valid");
        manifest["version"] = 2.into();
        assert!(!validator.is_valid(&manifest), "version 2 is rejected");
        validator
    })
}

/// The YAML as connectorgen reads it (strict booleans, `010` and `1_000` kept as strings,
/// the same depth and alias budgets): the parser options of a run, not a copy of them.
fn yaml_to_json(text: &str) -> Result<serde_json::Value, String> {
    let options = connectorgen_core::manifest::parser_options(text.len(), None);
    serde_saphyr::from_str_with_options(text, options).map_err(|e| e.to_string())
}

fn errors(doc: &serde_json::Value) -> Vec<String> {
    validator()
        .iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect()
}

fn yaml_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("readable folder").path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    files
}

fn stem(path: &Path) -> String {
    path.file_stem().unwrap().to_string_lossy().into_owned()
}

#[test]
fn every_valid_manifest_validates() {
    let mut files: Vec<PathBuf> = [
        "examples/manifests",
        "tests/cases/valid",
        "tests/cases/lint",
    ]
    .iter()
    .flat_map(|dir| yaml_files(&root().join(dir)))
    .collect();
    // The `connectorgen init` starter, whose placeholders are plain strings.
    files.push(root().join("crates/connectorgen-core/templates/init.yaml"));
    assert!(files.len() > 10, "found the manifests");
    let mut failures = Vec::new();
    for path in &files {
        let text = std::fs::read_to_string(path).expect("readable manifest");
        let doc =
            yaml_to_json(&text).unwrap_or_else(|e| panic!("{}: not YAML: {e}", path.display()));
        let errors = errors(&doc);
        if !errors.is_empty() {
            failures.push(format!("{}:\n  {}", path.display(), errors.join("\n  ")));
        }
    }
    assert!(
        failures.is_empty(),
        "valid manifests the schema rejects:\n{}",
        failures.join("\n")
    );
}

#[test]
fn invalid_cases_are_rejected_when_their_problem_is_one_of_shape() {
    let listed: Vec<&str> = REJECTED
        .iter()
        .chain(ACCEPTED)
        .copied()
        .chain(NOT_JSON.iter().map(|(name, _)| *name))
        .collect();
    let unique: BTreeSet<&str> = listed.iter().copied().collect();
    assert_eq!(unique.len(), listed.len(), "a case is listed twice");

    let mut problems = Vec::new();
    let mut seen = BTreeSet::new();
    for path in yaml_files(&root().join("tests/cases/invalid")) {
        let name = stem(&path);
        seen.insert(name.clone());
        let text = std::fs::read_to_string(&path).expect("readable case");
        let parsed = yaml_to_json(&text);
        if let Some((_, reason)) = NOT_JSON.iter().find(|(n, _)| *n == name) {
            match parsed {
                // Skipped: nothing for a JSON Schema to look at.
                Err(_) => eprintln!("skipped {name}: {reason}"),
                Ok(_) => problems.push(format!(
                    "{name}: listed as not YAML ({reason}), but it parses"
                )),
            }
            continue;
        }
        let doc = match parsed {
            Ok(doc) => doc,
            Err(e) => {
                problems.push(format!(
                    "{name}: does not parse as YAML ({e}); list it in NOT_JSON"
                ));
                continue;
            }
        };
        let errors = errors(&doc);
        if REJECTED.contains(&name.as_str()) {
            if errors.is_empty() {
                problems.push(format!(
                    "{name}: listed as rejected, but the schema accepts it"
                ));
            }
        } else if ACCEPTED.contains(&name.as_str()) {
            if !errors.is_empty() {
                problems.push(format!(
                    "{name}: listed as accepted, but the schema rejects it (move it to REJECTED):\n  {}",
                    errors.join("\n  ")
                ));
            }
        } else {
            problems.push(format!(
                "{name}: a new invalid case; add it to REJECTED, ACCEPTED or NOT_JSON in tests/schema.rs \
                 (the schema {} it)",
                if errors.is_empty() { "accepts" } else { "rejects" }
            ));
        }
    }
    for name in unique {
        if !seen.contains(name) {
            problems.push(format!(
                "{name}: listed, but tests/cases/invalid/{name}.yaml does not exist"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Spellings connectorgen accepts that the schema flags, to steer authors to the usual
/// form. docs/EDITOR.md lists them: when one of these changes, change it there too.
#[test]
fn lenient_spellings_pass_connectorgen_but_the_schema_flags_them() {
    const MINIMAL: &str = "version: 1
service:
  name: N
  version: '1'
  description: D
  publicUrl: https://a.example
  dashboardUrl: https://a.example/t
operations:
  - id: putThing
    method: put
    path: /things/{id}
    summary: Replace one thing
    description: Replaces the thing. Cannot delete it.
";
    let variants = [
        ("a method in mixed case", "method: put", "method: Put"),
        (
            "a name with spaces around it",
            "method: put",
            "method: ' put '",
        ),
        (
            "text written as a number",
            "summary: Replace one thing",
            "summary: 42",
        ),
        (
            "an optional key set to ~",
            "  name: N",
            "  name: N\n  title: ~",
        ),
        (
            "an optional key left empty",
            "    method: put",
            "    method: put\n    idempotency:",
        ),
    ];
    let base = yaml_to_json(MINIMAL).unwrap();
    assert!(errors(&base).is_empty(), "the base manifest is valid");
    for (what, from, to) in variants {
        let text = MINIMAL.replacen(from, to, 1);
        assert_ne!(text, MINIMAL, "{what}: the variant applies");
        if let Err(d) = connectorgen_core::load("variant.yaml", std::sync::Arc::new(text.clone())) {
            panic!(
                "{what}: connectorgen rejects it:\n{}",
                connectorgen_core::report::human_findings(&d, false)
            );
        }
        let doc = yaml_to_json(&text).unwrap();
        assert!(!errors(&doc).is_empty(), "{what}: the schema accepts it");
    }
}
