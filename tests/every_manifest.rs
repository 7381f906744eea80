//! The tests every manifest of a set must pass, whoever wrote its document: compiled
//! into both test binaries, each with its own sets (`crate::sets()`): the integration
//! binary's are the bundled examples and the valid cases; the real-document suite's are
//! the manifests on real providers' documents (`tests/real_documents/`).

use std::sync::Arc;

use connectorgen_core::Options;
use connectorgen_core::model::{Returns, Target};
use connectorgen_core::render::Outputs;
use serde_json::Value;

use crate::support::sets;

/// Every text the model reads for one operation, per target file.
fn model_texts(outputs: &Outputs, id: &str, next: Option<&str>) -> Vec<(String, String)> {
    let mut texts = Vec::new();
    for file in ["openapi.json", "openapi.openai.json", "openapi.3.0.json"] {
        let doc: Value = serde_json::from_str(&outputs[file]).unwrap();
        for item in doc["paths"].as_object().unwrap().values() {
            for op in item.as_object().unwrap().values() {
                if op["operationId"] == id {
                    texts.push((
                        file.to_string(),
                        op["description"].as_str().unwrap().to_string(),
                    ));
                }
            }
        }
    }
    let tools: Value = serde_json::from_str(&outputs["mcp-tools.json"]).unwrap();
    for tool in tools.as_array().unwrap() {
        if tool["name"] == id {
            texts.push((
                "mcp-tools.json".to_string(),
                tool["description"].as_str().unwrap().to_string(),
            ));
        }
    }
    let md = &outputs["descriptions.md"];
    // The section runs to the next operation's heading (a "## " inside a fence is text).
    let section = md.split(&format!("\n## {id}\n")).nth(1).unwrap();
    let section = match next {
        Some(next) => section.split(&format!("\n## {next}\n")).next().unwrap(),
        None => section,
    };
    texts.push(("descriptions.md".to_string(), section.to_string()));
    texts
}

#[test]
fn every_target_keeps_the_consent_and_do_not_resubmit_sentences() {
    let mut checked = 0;
    for (path, read) in sets::every_manifest() {
        let text = std::fs::read_to_string(&path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let options = Options {
            targets: Some(<Target as strum::VariantArray>::VARIANTS.to_vec()),
            ..read
        };
        let analysis = connectorgen_core::analyze_with(&name, Arc::new(text), &options).unwrap();
        assert!(!analysis.has_errors(), "{name}: {:?}", analysis.diagnostics);
        let (Some(connector), Some(outputs)) = (analysis.connector, analysis.outputs) else {
            panic!("{name} must build");
        };
        for (i, op) in connector.operations.iter().enumerate() {
            let next = connector.operations.get(i + 1).map(|o| o.id.as_str());
            let texts = model_texts(&outputs, &op.id, next);
            assert_eq!(texts.len(), 5, "{name} {}: found in every target", op.id);
            for (file, text) in texts {
                // Whose money: the person's own, or their customer's (`spends.payer`).
                let payer = match op.spends.as_ref().map(|s| s.payer) {
                    Some(connectorgen_core::model::Payer::Customer) => "MOVES THE CUSTOMER'S MONEY",
                    _ => "COSTS THE PERSON",
                };
                if let Some(spends) = &op.spends {
                    assert!(
                        text.contains(&format!("{payer}:"))
                            || text.contains(&format!("{payer} when ")),
                        "{name} {} {file}: {text}",
                        op.id
                    );
                    if payer != "COSTS THE PERSON" {
                        assert!(
                            !text.contains("COSTS THE PERSON"),
                            "{name} {} {file}: names the wrong payer: {text}",
                            op.id
                        );
                    }
                    assert!(
                        text.contains(
                            &spends.note.split_whitespace().collect::<Vec<_>>().join(" ")
                        ),
                        "{name} {} {file}: note kept",
                        op.id
                    );
                    assert!(
                        text.contains("agreed to this specific request")
                            || text.contains("yes to this specific request")
                            || (file == "openapi.openai.json"
                                && text.contains("yes to this request first.")),
                        "{name} {} {file}: consent sentence: {text}",
                        op.id
                    );
                    checked += 1;
                }
                if let Some(when) = op.spends.as_ref().and_then(|s| s.when.as_ref()) {
                    assert!(
                        text.contains(&format!("{payer} when {when}:")),
                        "{name} {} {file}: the condition is in the cost sentence: {text}",
                        op.id
                    );
                    checked += 1;
                }
                if op.confirm {
                    assert!(
                        text.contains("PERMANENT") || text.contains("Cannot be undone"),
                        "{name} {} {file}: permanence sentence: {text}",
                        op.id
                    );
                    // A condition (`confirm.when`) is in the permanence sentence.
                    if let Some(when) = &op.confirm_when {
                        assert!(
                            text.contains(&format!("PERMANENT when {when}:"))
                                || text.contains(&format!("Cannot be undone when {when}.")),
                            "{name} {} {file}: the condition is in the permanence sentence: {text}",
                            op.id
                        );
                    }
                    assert!(
                        text.contains("to this specific action")
                            || text.contains("to this specific request")
                            || (file == "openapi.openai.json"
                                && (text.contains("yes to this action first.")
                                    || text.contains("yes to this request first."))),
                        "{name} {} {file}: consent sentence: {text}",
                        op.id
                    );
                    checked += 1;
                } else {
                    assert!(
                        !text.contains("PERMANENT") && !text.contains("Cannot be undone"),
                        "{name} {} {file}: no permanence sentence without confirm",
                        op.id
                    );
                }
                if let Some(a) = &op.async_ {
                    assert!(
                        text.contains(&format!("poll `{}`", a.poll_with)),
                        "{name} {} {file}: names the poll target",
                        op.id
                    );
                    match a.returns {
                        Returns::Job => assert!(
                            text.contains("Do not resubmit to \"check\" progress")
                                || (file == "openapi.openai.json"
                                    && text.contains("; never resubmit")),
                            "{name} {} {file}: {text}",
                            op.id
                        ),
                        Returns::Change => {
                            // The generated sentences only: the author may say "job".
                            let generated = text.rsplit("\n\n").next().unwrap_or_default();
                            assert!(
                                generated.contains("until it shows the result")
                                    || (file == "openapi.openai.json"
                                        && generated.contains("Settles later: poll")),
                                "{name} {} {file}: poll until done: {text}",
                                op.id
                            );
                            assert!(
                                generated.contains("does not make it faster")
                                    || generated.contains("is not faster"),
                                "{name} {} {file}: calling again is no faster: {text}",
                                op.id
                            );
                            assert!(
                                !generated.contains("job"),
                                "{name} {} {file}: a change is not a job: {text}",
                                op.id
                            );
                        }
                    }
                    checked += 1;
                }
                if file == "openapi.openai.json" {
                    let limit = connectorgen_core::render::openai::DESCRIPTION_MAX;
                    assert!(
                        text.chars().count() <= limit,
                        "{name} {} fits OpenAI's limit",
                        op.id
                    );
                }
            }
        }
    }
    assert!(
        checked > crate::PAID_OR_ASYNC,
        "the manifests exercise paid and async operations"
    );
}

/// The fuel the default templates need whatever the manifest: their own sections.
const FIXED_ALLOWANCE: u64 = 10_000;

/// The default fuel grows with the manifest (`BASE_FUEL` plus one per
/// `MANIFEST_BYTES_PER_FUEL` bytes); the default templates must fit in the growing part
/// and a small fixed allowance, with every target, so a manifest of any size has room to
/// spare.
#[test]
fn default_templates_fit_in_the_fuel_that_grows_with_the_manifest() {
    use connectorgen_core::templates::MANIFEST_BYTES_PER_FUEL;
    let mut manifests: Vec<(String, String, Options)> = sets::every_manifest()
        .into_iter()
        .map(|(p, read)| {
            (
                p.display().to_string(),
                std::fs::read_to_string(&p).unwrap(),
                read,
            )
        })
        .collect();
    manifests.push((
        "large".to_string(),
        sets::large_manifest(300, 10, "large"),
        Options::default(),
    ));
    for (name, yaml, read) in manifests {
        // A base-mode manifest's budget grows with its OpenAPI document too.
        let base_bytes = yaml
            .lines()
            .find_map(|l| l.strip_prefix("openapi: "))
            .and_then(|file| read.manifest_dir.as_ref().map(|dir| dir.join(file.trim())))
            .and_then(|file| std::fs::metadata(file).ok())
            .map_or(0, |m| m.len());
        let options = Options {
            targets: Some(<Target as strum::VariantArray>::VARIANTS.to_vec()),
            // The growing part, plus a fixed allowance far under `BASE_FUEL` for the
            // templates' own text (the sections every llms.txt has, whatever its size).
            template_fuel: Some(
                (yaml.len() as u64 + base_bytes) / MANIFEST_BYTES_PER_FUEL + FIXED_ALLOWANCE,
            ),
            // A base-mode manifest names its OpenAPI document relative to itself.
            ..read
        };
        let result = connectorgen_core::generate_with(&name, Arc::new(yaml), &options);
        assert!(result.is_ok(), "{name}: {:?}", result.err());
    }
}

/// Issue 21, defect 8: every tool copies each component it reaches, so mcp-tools.json
/// grew without bound (a 0.56 MB input made 600 MB). It is at most
/// `OUTPUT_FACTOR` × the connector's size + `OUTPUT_SLACK` (past it, the
/// `mcp-output-too-large` case); every manifest stays far inside the bound, and
/// the largest ratio is below 8, a quarter of the factor.
#[test]
fn mcp_tools_stay_within_their_bound() {
    use connectorgen_core::render::mcp::{OUTPUT_FACTOR, output_limit};
    for (path, read) in sets::every_manifest() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = Arc::new(std::fs::read_to_string(&path).unwrap());
        let options = Options {
            targets: Some(<Target as strum::VariantArray>::VARIANTS.to_vec()),
            ..read
        };
        let analysis = connectorgen_core::analyze_with(&name, text, &options).unwrap();
        let connector = analysis.connector.expect("valid");
        let (limit, input) = output_limit(&connector);
        let size = analysis.outputs.unwrap()["mcp-tools.json"].len();
        assert!(size <= limit, "{name}: {size} > {limit}");
        assert!(
            size < input * OUTPUT_FACTOR / 4,
            "{name}: mcp-tools.json is {size} bytes for an input of {input}"
        );
    }
}
