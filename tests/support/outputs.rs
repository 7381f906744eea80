//! What every valid manifest's outputs must be, whoever wrote it (the bundled examples and
//! valid cases in `cases`, the manifests on real documents in the real-document suite):
//! the six files, each with one trailing newline; no `$ref` or `discriminator.mapping`
//! value pointing at nothing; openapi.3.0.json readable by `openapiv3`; every MCP tool
//! with client-safe names, compilable patterns and a request mapping that rebuilds its
//! OpenAPI operation (`mcp_tools.rs`); a second build and a streamed build giving the
//! same bytes. Returns the outputs for the caller to snapshot. The official schemas'
//! checks are the real-document suite's (they are not in the repository).
#![allow(dead_code)]

use std::sync::Arc;

use connectorgen_core::model::Target;
use connectorgen_core::render::Outputs;
use connectorgen_core::{GenerateError, Options, generate_with};

use super::mcp_tools as mcp;
use super::refs;

/// Builds `text` (named `name`) with every target and `options`' reading, checks what
/// every valid manifest's outputs must be, and returns them.
pub(crate) fn check(name: &str, text: Arc<String>, options: &Options) -> Outputs {
    let all_targets = || Options {
        targets: Some(<Target as strum::VariantArray>::VARIANTS.to_vec()),
        ..options.clone()
    };
    let outputs = match generate_with(name, text.clone(), &all_targets()) {
        Ok(outputs) => outputs,
        Err(GenerateError::Invalid(d)) => panic!(
            "{name} should be valid:\n{}",
            connectorgen_core::report::human_findings(&d, false)
        ),
        Err(e) => panic!("{name}: {e}"),
    };
    assert_eq!(
        outputs.keys().collect::<Vec<_>>(),
        [
            "descriptions.md",
            "llms.txt",
            "mcp-tools.json",
            "openapi.3.0.json",
            "openapi.json",
            "openapi.openai.json"
        ]
    );
    // `Target::files()` names exactly what each target writes.
    let mut named: Vec<&str> = <Target as strum::VariantArray>::VARIANTS
        .iter()
        .flat_map(|t| t.files().iter().copied())
        .collect();
    named.sort_unstable();
    assert_eq!(
        outputs.keys().map(String::as_str).collect::<Vec<_>>(),
        named
    );
    for (file, contents) in &outputs {
        assert!(
            contents.ends_with('\n') && !contents.ends_with("\n\n"),
            "{name}: {file}: one trailing newline"
        );
    }

    // Everything kept resolves (issue 20): no reference points at nothing.
    for file in ["openapi.json", "openapi.openai.json", "openapi.3.0.json"] {
        let doc: serde_json::Value = serde_json::from_str(&outputs[file]).expect("JSON");
        let dangling = refs::dangling_in_openapi(&doc);
        assert!(
            dangling.is_empty(),
            "{name}: {file}: dangling references:\n{dangling:#?}"
        );
    }
    let tools: serde_json::Value = serde_json::from_str(&outputs["mcp-tools.json"]).expect("JSON");
    let dangling = refs::dangling_in_tools(&tools);
    assert!(
        dangling.is_empty(),
        "{name}: mcp-tools.json: dangling references:\n{dangling:#?}"
    );
    let parsed: Result<openapiv3::OpenAPI, _> = serde_json::from_str(&outputs["openapi.3.0.json"]);
    assert!(
        parsed.is_ok(),
        "{name}: openapiv3 cannot read openapi.3.0.json: {parsed:?}"
    );
    mcp::check(name, &outputs["mcp-tools.json"], &outputs["openapi.json"]);

    let again = generate_with(name, text.clone(), &all_targets()).expect("second build");
    assert_eq!(outputs, again, "{name}: two builds differ");

    // `build` streams openapi.json into its file (`Options::stream`): the same bytes, and
    // the same other outputs.
    let streaming = Options {
        stream: true,
        ..all_targets()
    };
    let analysis = connectorgen_core::analyze_with(name, text, &streaming).expect("renders");
    let mut held = outputs.clone();
    let expected = held.remove("openapi.json").expect("openapi.json");
    assert_eq!(
        analysis.outputs.as_ref(),
        Some(&held),
        "{name}: streamed build"
    );
    let mut written = Vec::new();
    analysis
        .streamed
        .as_ref()
        .expect("openapi.json left to stream")
        .write(analysis.connector.as_ref().expect("valid"), &mut written)
        .expect("written to memory");
    assert!(
        written == expected.as_bytes(),
        "{name}: streamed openapi.json differs from the rendered one"
    );
    outputs
}
