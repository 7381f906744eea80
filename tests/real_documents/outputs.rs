//! The outputs of the manifests on real documents, snapshotted in
//! `real_documents/snapshots/` after the checks every valid manifest's outputs must pass
//! (`support/outputs.rs`); and every set's outputs — the bundled examples', the valid
//! cases', these — against the official OpenAPI 3.0/3.1 schemas (each document against
//! the version it says) and the MCP `Tool` schema.

use std::sync::Arc;

use connectorgen_core::model::Target;
use connectorgen_core::{Options, generate_with};
use serde_json::Value;

use crate::support::sets::{Set, bundled};
use crate::support::{outputs, real, schemas};

#[test]
fn real_manifests() {
    let set = real::set();
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("snapshots");
    settings.bind(|| {
        insta::glob!("manifests", "*.yaml", |path| {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let text = Arc::new(std::fs::read_to_string(path).unwrap());
            let outputs = outputs::check(&name, text, &set.options(path));
            for (file, contents) in &outputs {
                insta::assert_snapshot!(format!("real-{file}"), contents);
            }
        });
    });
}

#[test]
fn every_sets_outputs_validate_against_the_official_schemas() {
    let sets: Vec<Set> = bundled().into_iter().chain([real::set()]).collect();
    let mut checked = 0;
    for set in &sets {
        for path in set.files() {
            let name = path.display().to_string();
            let text = Arc::new(std::fs::read_to_string(&path).unwrap());
            let options = Options {
                targets: Some(<Target as strum::VariantArray>::VARIANTS.to_vec()),
                ..set.options(&path)
            };
            let outputs = generate_with(&name, text, &options)
                .unwrap_or_else(|e| panic!("{name} builds: {e}"));
            // openapi.json and openapi.openai.json are 3.1 (a 3.0 base is upgraded), and
            // openapi.3.0.json must say 3.0.
            for file in ["openapi.json", "openapi.openai.json", "openapi.3.0.json"] {
                let doc: Value = serde_json::from_str(&outputs[file]).expect("JSON");
                let version = doc["openapi"].as_str().unwrap_or_default();
                let schema = if version.starts_with("3.0.") {
                    schemas::openapi30()
                } else {
                    assert_ne!(file, "openapi.3.0.json", "{name}: {file} says {version}");
                    schemas::openapi31()
                };
                assert!(schema.is_some(), "this binary checks the official schemas");
                let errors = schemas::errors(schema, &doc);
                assert!(
                    errors.is_empty(),
                    "{name}: {file} is not valid OpenAPI {version}:\n{errors}"
                );
            }
            let tools: Value = serde_json::from_str(&outputs["mcp-tools.json"]).expect("JSON");
            for tool in tools.as_array().expect("an array of tools") {
                let errors = schemas::errors(schemas::mcp_tool(), tool);
                assert!(
                    errors.is_empty(),
                    "{name}: tool {} is not a valid MCP Tool:\n{errors}",
                    tool["name"]
                );
            }
            checked += 1;
        }
    }
    assert!(checked >= 40, "only {checked} manifests");
}
