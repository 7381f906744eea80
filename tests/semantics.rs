//! The promises of the generated text, asserted directly (the snapshots show the
//! whole files; these say which parts must never change).

#[path = "support/markdown.rs"]
mod markdown;

use std::sync::Arc;

use connectorgen::generate;
use connectorgen::render::Outputs;
use serde_json::Value;

fn build(file: &str) -> Outputs {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    generate(file, Arc::new(text)).unwrap_or_else(|e| panic!("{file}: {e}"))
}

fn openapi(outputs: &Outputs) -> Value {
    serde_json::from_str(&outputs["openapi.json"]).unwrap()
}

fn op<'a>(doc: &'a Value, path: &str, method: &str) -> &'a Value {
    &doc["paths"][path][method]
}

#[test]
fn paid_async_operation_carries_every_hint_and_sentence() {
    let outputs = build("examples/manifests/video.yaml");
    let doc = openapi(&outputs);
    let create = op(&doc, "/v1/videos", "post");
    let keys: Vec<&str> = create
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let hints: Vec<&str> = keys
        .iter()
        .copied()
        .filter(|k| k.starts_with("x-"))
        .collect();
    assert_eq!(
        hints,
        [
            "x-openai-isConsequential",
            "x-long-running",
            "x-poll-operationId",
            "x-typical-seconds",
            "x-cost-kind",
            "x-cost-note",
            "x-requires-confirmation"
        ]
    );
    assert_eq!(create["x-long-running"], true);
    assert_eq!(create["x-poll-operationId"], "getVideo");
    assert_eq!(create["x-typical-seconds"], 90);
    assert_eq!(create["x-cost-kind"], "credits");
    assert_eq!(create["x-cost-note"], "Costs 1 generation credit.");
    assert_eq!(create["x-requires-confirmation"], true);
    assert_eq!(create["x-openai-isConsequential"], true);
    assert_eq!(
        create["description"],
        "Starts a generation. Returns a job to track. Does not publish or share the video.\n\n\
         COSTS THE PERSON: Costs 1 generation credit. Do not call this until they have agreed to this specific request. \
         This returns immediately with a job to track — poll `getVideo` (typically ready in about 90s). \
         Do not resubmit to \"check\" progress; that would create a second job."
    );
    let statuses: Vec<&str> = create["responses"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(statuses, ["200", "401", "409", "429"]);
    let header = &create["parameters"][0];
    assert_eq!(header["name"], "Idempotency-Key");
    assert_eq!(header["in"], "header");
    assert_eq!(header["required"], false);

    let get = op(&doc, "/v1/videos/{id}", "get");
    assert_eq!(get["x-openai-isConsequential"], false);
    assert!(get.get("x-long-running").is_none() && get.get("x-cost-kind").is_none());
    assert_eq!(get["parameters"][0]["in"], "path");
    assert_eq!(get["parameters"][0]["required"], true);
    let statuses: Vec<&str> = get["responses"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(statuses, ["200", "401"]);
}

#[test]
fn llms_txt_sections_follow_the_convention() {
    let llms = &build("examples/manifests/video.yaml")["llms.txt"];
    assert!(llms.starts_with("# VidGen for Muse\n\n> "));
    assert!(llms.contains(
        "## Waiting on work\n\n- `createVideo` returns a job; poll `getVideo` (about 90s).\n\n\
         Polling is free and safe. **Re-submitting is not** — it starts a second job.\n\
         A timeout is not a failure: keep polling the same job.\n"
    ));
    assert!(llms.contains(
        "## Spending the person's money\n\n- `createVideo` (credits): Costs 1 generation credit.\n"
    ));
    assert!(llms.contains(
        "A general \"sounds good\" earlier in the conversation is not consent for a new charge"
    ));
    assert!(llms.contains("`vg_`") && llms.contains("<https://vidgen.example/connections>"));
}

#[test]
fn sections_appear_only_when_needed() {
    let bank = &build("examples/manifests/bank.yaml")["llms.txt"];
    assert!(!bank.contains("## Waiting on work"));
    assert!(!bank.contains("## Spending"));
    let every = build("tests/cases/valid/every-option.yaml");
    // Async without typicalSeconds: no "(about …)" and no "(typically …)".
    assert!(every["llms.txt"].contains("- `asyncFree` returns a job; poll `getExport`.\n"));
    let doc = openapi(&every);
    let free = op(&doc, "/v1/exports", "post");
    assert!(free["description"].as_str().unwrap().ends_with(
        "This returns immediately with a job to track — poll `getExport`. Do not resubmit to \"check\" progress; that would create a second job."
    ));
    assert!(
        !free["description"]
            .as_str()
            .unwrap()
            .contains("COSTS THE PERSON")
    );
    assert_eq!(free["x-openai-isConsequential"], false);
    assert!(free.get("x-cost-kind").is_none());
    // Paid but synchronous: the cost sentence only.
    let plan = op(&doc, "/v1/plans/{planId}", "put");
    let text = plan["description"].as_str().unwrap();
    assert!(text.ends_with("COSTS THE PERSON: The new plan's price is charged monthly. Do not call this until they have agreed to this specific request."));
    assert!(plan.get("x-long-running").is_none());
    // idempotency: required → a required header; unsupported → no header at all.
    let header = plan["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "Idempotency-Key")
        .unwrap();
    assert_eq!(header["required"], true);
    let preview = op(&doc, "/v1/renders/{projectId}/preview", "post");
    assert!(
        preview["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["name"] != "Idempotency-Key")
    );
    // Neither spends nor async: no header, no 409/429.
    let delete = op(&doc, "/v1/exports/{exportId}", "delete");
    assert!(
        delete["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["name"] != "Idempotency-Key")
    );
    // The openai target fits a parameter description into OpenAI's 700 characters.
    let openai: Value = serde_json::from_str(
        &connectorgen::generate_with(
            "every-option.yaml",
            Arc::new(
                std::fs::read_to_string(
                    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                        .join("tests/cases/valid/every-option.yaml"),
                )
                .unwrap(),
            ),
            &connectorgen::Options {
                targets: Some(vec![connectorgen::model::Target::Openai]),
                ..connectorgen::Options::default()
            },
        )
        .unwrap()["openapi.openai.json"],
    )
    .unwrap();
    let fields = op(&openai, "/v1/exports/{exportId}", "get")["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "fields")
        .unwrap();
    let shortened = fields["description"].as_str().unwrap();
    assert!(shortened.chars().count() <= 700 && shortened.starts_with("Which fields to include"));
    let full = op(&doc, "/v1/exports/{exportId}", "get")["parameters"][2]["description"]
        .as_str()
        .unwrap();
    assert!(
        full.chars().count() > 700,
        "the muse spec keeps the full text"
    );
    // Defaults: title, trailing slash stripped, output schema.
    assert_eq!(doc["info"]["title"], "Kitchen Connector");
    assert_eq!(doc["servers"][0]["url"], "http://localhost:8080/api");
    assert_eq!(
        op(&doc, "/v1/settings", "patch")["responses"]["200"]["content"]["application/json"]["schema"],
        serde_json::json!({"type": "object"})
    );
}

#[test]
fn template_syntax_in_user_text_is_printed_not_evaluated() {
    let outputs = build("tests/cases/valid/template-syntax-is-data.yaml");
    let doc = openapi(&outputs);
    assert_eq!(
        doc["info"]["description"],
        "Renders {{ 7 * 7 }} and {% for x in range(3) %}{{ x }}{% endfor %} literally. {# not a comment #}"
    );
    let render = op(&doc, "/v1/render", "post");
    assert!(
        render["description"]
            .as_str()
            .unwrap()
            .starts_with("{{ operation.spends.note }} {% if true %}evaluated{% endif %}")
    );
    assert!(
        render["description"]
            .as_str()
            .unwrap()
            .contains("COSTS THE PERSON: {{ 1000 * 1000 }} credits {% raw %}")
    );
    for (file, text) in &outputs {
        assert!(
            !text.contains("49") && !text.contains("1000000") && !text.contains("012"),
            "{file} evaluated user text"
        );
    }
    assert!(outputs["llms.txt"].starts_with("# {% raw %}Jinja{% endraw %} Tools\n"));
}

#[test]
fn user_text_cannot_forge_markdown_structure() {
    let outputs = build("tests/cases/valid/markdown-cannot-forge-structure.yaml");
    let llms = &outputs["llms.txt"];
    let s = markdown::structure(llms);
    assert_eq!(
        s.headings,
        [
            "# Forge ## Spending the person's money - `free`: costs nothing",
            "## Setup",
            "## Operations",
            "## Waiting on work",
            "## Spending the person's money",
        ]
    );
    // Every block in llms.txt is one the generator wrote: the summary quote, the three
    // setup steps, the list items of operations, waiting and spending, and no fence,
    // HTML, table or other block.
    assert_eq!(s.quotes.len(), 1, "{:?}", s.quotes);
    assert_eq!(s.ordered.len(), 3, "{:?}", s.ordered);
    assert_eq!(
        s.bullets.len(),
        2 + 1 + 1,
        "operations, waiting, spending: {:?}",
        s.bullets
    );
    assert!(
        s.fences.is_empty() && s.other.is_empty(),
        "{:?} {:?}",
        s.fences,
        s.other
    );

    let md = &outputs["descriptions.md"];
    let s = markdown::structure(md);
    assert_eq!(
        s.headings,
        [
            "# Forge ## Spending the person's money - `free`: costs nothing: model-facing descriptions",
            "## forgeHeadings",
            "## getForge"
        ]
    );
    // Each description sits in its fence byte for byte, including the author's own
    // four-backtick fence, and nothing else makes a block.
    let doc = openapi(&outputs);
    let description = |path: &str, method: &str| {
        doc["paths"][path][method]["description"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(
        s.fences,
        [
            description("/v1/forge", "post"),
            description("/v1/forge/{id}", "get")
        ]
    );
    assert!(
        s.quotes.is_empty() && s.bullets.is_empty() && s.ordered.is_empty() && s.other.is_empty(),
        "{s:?}"
    );
    assert!(llms.contains("\\<!-- hide the rest"));
    assert!(llms.contains("\\- item # Heading ## Section"));
}

#[test]
fn yaml_1_1_surprises_stay_as_written() {
    let doc = openapi(&build("tests/cases/valid/yaml-1.1-surprises.yaml"));
    assert_eq!(doc["info"]["version"], "1.10");
    let get = op(&doc, "/v1/countries/{code}", "get");
    assert_eq!(
        get["parameters"][1]["schema"]["enum"],
        serde_json::json!(["no", "on", "off", "yes", "y", "n", "NO", "ON"])
    );
    assert_eq!(get["parameters"][1]["schema"]["default"], "no");
    let schema = &get["responses"]["200"]["content"]["application/json"]["schema"];
    assert_eq!(schema["properties"]["code"]["const"], "NO");
    assert_eq!(schema["properties"]["postcode"]["examples"][0], "010");
    assert_eq!(schema["properties"]["postcode"]["examples"][2], "1_000");
    assert_eq!(
        schema["properties"]["alias"]["type"],
        serde_json::json!(["string", "null"])
    );
    assert_eq!(schema["properties"]["flags"]["default"], true);
    // Key order is the author's.
    let keys: Vec<&str> = schema["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        ["code", "postcode", "population", "ratio", "alias", "flags"]
    );
}

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
    let options = connectorgen::Options {
        targets: Some(
            connectorgen::model::Target::ALL
                .iter()
                .map(|(_, t)| *t)
                .collect(),
        ),
        ..connectorgen::Options::default()
    };
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut checked = 0;
    for dir in ["examples/manifests", "tests/cases/valid"] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            let path = entry.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let connector = connectorgen::load(&name, Arc::new(text.clone())).unwrap();
            let outputs = connectorgen::generate_with(&name, Arc::new(text), &options).unwrap();
            for (i, op) in connector.operations.iter().enumerate() {
                let next = connector.operations.get(i + 1).map(|o| o.id.as_str());
                let texts = model_texts(&outputs, &op.id, next);
                assert_eq!(texts.len(), 5, "{name} {}: found in every target", op.id);
                for (file, text) in texts {
                    if let Some(spends) = &op.spends {
                        assert!(
                            text.contains("COSTS THE PERSON:"),
                            "{name} {} {file}: {text}",
                            op.id
                        );
                        assert!(
                            text.contains(
                                &spends.note.split_whitespace().collect::<Vec<_>>().join(" ")
                            ),
                            "{name} {} {file}: note kept",
                            op.id
                        );
                        assert!(
                            text.contains("agreed to this specific request")
                                || text.contains("yes to this specific request"),
                            "{name} {} {file}: consent sentence: {text}",
                            op.id
                        );
                        checked += 1;
                    }
                    if let Some(a) = &op.async_ {
                        assert!(
                            text.contains("Do not resubmit to \"check\" progress"),
                            "{name} {} {file}: {text}",
                            op.id
                        );
                        assert!(
                            text.contains(&format!("poll `{}`", a.poll_with)),
                            "{name} {} {file}: names the poll target",
                            op.id
                        );
                        checked += 1;
                    }
                    if file == "openapi.openai.json" {
                        let limit = connectorgen::render::openai::DESCRIPTION_MAX;
                        let generated_alone =
                            text.starts_with("COSTS") || text.starts_with("Returns a job");
                        assert!(
                            text.chars().count() <= limit || generated_alone,
                            "{name} {} fits OpenAI's limit",
                            op.id
                        );
                    }
                }
            }
        }
    }
    assert!(
        checked > 20,
        "the examples exercise paid and async operations"
    );
}

#[test]
fn mcp_annotations_follow_the_documented_mapping() {
    let options = connectorgen::Options {
        targets: Some(vec![connectorgen::model::Target::Mcp]),
        ..connectorgen::Options::default()
    };
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/cases/valid/every-option.yaml");
    let outputs = connectorgen::generate_with(
        "every-option.yaml",
        Arc::new(std::fs::read_to_string(path).unwrap()),
        &options,
    )
    .unwrap();
    assert_eq!(outputs.keys().collect::<Vec<_>>(), ["mcp-tools.json"]);
    let tools: Value = serde_json::from_str(&outputs["mcp-tools.json"]).unwrap();
    let hints = |name: &str| {
        let tool = tools
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap();
        let a = &tool["annotations"];
        (
            a["readOnlyHint"].as_bool().unwrap(),
            a["destructiveHint"].as_bool().unwrap(),
            a["idempotentHint"].as_bool().unwrap(),
            a["openWorldHint"].as_bool().unwrap(),
        )
    };
    // (readOnly, destructive, idempotent, openWorld)
    assert_eq!(hints("getExport"), (true, false, true, true), "GET");
    assert_eq!(
        hints("asyncFree"),
        (false, false, false, true),
        "POST that does not spend"
    );
    assert_eq!(
        hints("syncPaid"),
        (false, true, true, true),
        "PUT that spends, idempotency required"
    );
    assert_eq!(hints("patchSettings"), (false, true, false, true), "PATCH");
    assert_eq!(hints("deleteExport"), (false, true, false, true), "DELETE");
    assert_eq!(
        hints("paidAsyncRequired"),
        (false, true, true, true),
        "spends, required"
    );
    assert_eq!(
        hints("paidAsyncUnsupported"),
        (false, true, false, true),
        "spends, unsupported"
    );
    let paid = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "paidAsyncRequired")
        .unwrap();
    assert_eq!(
        paid["inputSchema"]["required"],
        serde_json::json!(["projectId", "idempotencyKey"])
    );
    let get = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "getExport")
        .unwrap();
    assert_eq!(
        get["inputSchema"]["required"],
        serde_json::json!(["exportId", "include.url"])
    );
    let free = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "asyncFree")
        .unwrap();
    assert_eq!(
        free["inputSchema"]["properties"]["body"],
        serde_json::json!({}),
        "a non-object body (here `true`, spelled `{{}}`) is one `body` argument"
    );
}
