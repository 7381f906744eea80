//! The promises of the generated text, asserted directly (the snapshots show the
//! whole files; these say which parts must never change).

use crate::support::markdown;

use std::sync::Arc;

use connectorgen_core::generate;
use connectorgen_core::render::Outputs;
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
            "x-async-returns",
            "x-cost-kind",
            "x-cost-note",
            "x-idempotency",
            "x-requires-confirmation"
        ]
    );
    assert_eq!(create["x-long-running"], true);
    assert_eq!(create["x-poll-operationId"], "getVideo");
    assert_eq!(create["x-typical-seconds"], 90);
    assert_eq!(create["x-async-returns"], "job");
    assert_eq!(create["x-cost-kind"], "credits");
    assert_eq!(create["x-cost-note"], "Costs 1 generation credit.");
    assert_eq!(create["x-requires-confirmation"], true);
    assert_eq!(create["x-openai-isConsequential"], true);
    assert_eq!(
        create["description"],
        "Starts a generation. Returns a job to track. Does not publish or share the video.\n\n\
         COSTS THE PERSON: Costs 1 generation credit. Do not call this until they have agreed to this specific request. \
         This returns immediately with a job to track — poll `getVideo` (typically ready in about 90s). \
         Do not resubmit to \"check\" progress; that would create a second job. \
         RETRIES: send a fresh value (such as a UUID) in the `Idempotency-Key` header for each new request, \
         and the same value when retrying one that failed or timed out, so the provider returns the first result \
         instead of doing it twice."
    );
    assert_eq!(
        create["x-idempotency"],
        serde_json::json!({ "in": "header", "name": "Idempotency-Key", "required": false })
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
        "## Waiting on work\n\n- `createVideo` returns a job; poll `getVideo` (about 90s). Retry key: the `Idempotency-Key` header: a fresh value for each new request, the same value when retrying one that failed or timed out.\n\n\
         Polling is free and safe. **Re-submitting is not** — it starts a second job.\n\
         A timeout is not a failure: keep polling the same job.\n"
    ));
    assert!(llms.contains(
        "## Spending the person's money\n\n- `createVideo` (credits): Costs 1 generation credit. Retry key: the `Idempotency-Key` header: a fresh value for each new request, the same value when retrying one that failed or timed out.\n"
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
    assert!(every["llms.txt"].contains("- `asyncFree` returns a job; poll `getExport`. Retry key: the `Idempotency-Key` header: a fresh value for each new request, the same value when retrying one that failed or timed out.\n"));
    let doc = openapi(&every);
    let free = op(&doc, "/v1/exports", "post");
    assert!(free["description"].as_str().unwrap().ends_with(
        "This returns immediately with a job to track — poll `getExport`. Do not resubmit to \"check\" progress; that would create a second job. \
         RETRIES: send a fresh value (such as a UUID) in the `Idempotency-Key` header for each new request, and the same value when retrying one that failed or timed out, so the provider returns the first result instead of doing it twice."
    ));
    assert!(
        !free["description"]
            .as_str()
            .unwrap()
            .contains("COSTS THE PERSON")
    );
    // A free POST keeps OpenAI's own default: consequential (only `confirm: false` or a
    // GET says otherwise), but asks for no confirmation.
    assert_eq!(free["x-openai-isConsequential"], true);
    assert!(free.get("x-requires-confirmation").is_none());
    assert!(free.get("x-cost-kind").is_none());
    // Paid but synchronous: the cost sentence, then the retry rule (no polling).
    let plan = op(&doc, "/v1/plans/{planId}", "put");
    let text = plan["description"].as_str().unwrap();
    assert!(text.ends_with("COSTS THE PERSON: The new plan's price is charged monthly. Do not call this until they have agreed to this specific request. \
        RETRIES: send a fresh value (such as a UUID) in the `Idempotency-Key` header for each new request, and the same value when retrying one that failed or timed out, so the provider returns the first result instead of doing it twice."));
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
        &connectorgen_core::generate_with(
            "every-option.yaml",
            Arc::new(
                std::fs::read_to_string(
                    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                        .join("tests/cases/valid/every-option.yaml"),
                )
                .unwrap(),
            ),
            &connectorgen_core::Options {
                targets: Some(vec![connectorgen_core::model::Target::Openai]),
                ..connectorgen_core::Options::default()
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
            "## Rules for the assistant",
        ]
    );
    // Every block in llms.txt is one the generator wrote: the summary quote, the three
    // setup steps, the list items of operations, waiting, spending and the rules (no
    // Docs link: the manifest gives neither `docsUrl` nor `specUrl`), and no fence,
    // HTML, table or other block.
    assert_eq!(s.quotes.len(), 1, "{:?}", s.quotes);
    assert_eq!(s.ordered.len(), 3, "{:?}", s.ordered);
    assert_eq!(
        s.bullets.len(),
        2 + 1 + 1 + 4,
        "operations, waiting, spending, rules: {:?}",
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

#[test]
fn mcp_annotations_follow_the_documented_mapping() {
    let options = connectorgen_core::Options {
        targets: Some(vec![connectorgen_core::model::Target::Mcp]),
        ..connectorgen_core::Options::default()
    };
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/cases/valid/every-option.yaml");
    let outputs = connectorgen_core::generate_with(
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
    assert_eq!(hints("getExport"), (true, false, true, false), "GET");
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

/// Builds a manifest with every target, reading files it names beside it.
fn build_all(file: &str) -> (connectorgen_core::model::Connector, Outputs) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
    let options = connectorgen_core::Options {
        targets: Some(<connectorgen_core::model::Target as strum::VariantArray>::VARIANTS.to_vec()),
        manifest_dir: path.parent().map(std::path::Path::to_path_buf),
        // The documents are in `specs/` beside the manifests' folder.
        allow_read: path
            .parent()
            .map(|d| d.join("../specs"))
            .into_iter()
            .collect(),
        ..connectorgen_core::Options::default()
    };
    let text = std::fs::read_to_string(&path).unwrap();
    let analysis = connectorgen_core::analyze_with(file, Arc::new(text), &options).unwrap();
    assert!(!analysis.has_errors(), "{file}: {:?}", analysis.diagnostics);
    (analysis.connector.unwrap(), analysis.outputs.unwrap())
}

/// `confirm` in every target's flags: OpenAI's consequential flag is false only on GETs
/// and `confirm: false`; every call that needs a yes (it spends or cannot be undone) is
/// `x-requires-confirmation` and MCP `destructiveHint`; DELETE, PUT and PATCH stay
/// destructive for MCP even with `confirm: false`.
#[test]
fn confirm_maps_to_every_targets_flags() {
    let (_, outputs) = build_all("tests/cases/valid/safety-semantics.yaml");
    let tools: Value = serde_json::from_str(&outputs["mcp-tools.json"]).unwrap();
    // id → (isConsequential, x-requires-confirmation, x-permanent, destructiveHint)
    let expected = [
        ("createExport", (true, false, false, false)),
        ("getExport", (false, false, false, false)),
        ("cancelExport", (true, true, true, true)),
        ("startRender", (true, true, false, true)),
        ("refundRender", (true, false, false, false)),
        ("publishProject", (true, true, true, true)),
        ("archiveProject", (true, true, true, true)),
        ("renameProject", (true, false, false, true)),
        ("deleteDraft", (false, false, false, true)),
        ("deleteProject", (true, true, true, true)),
    ];
    for file in ["openapi.json", "openapi.openai.json", "openapi.3.0.json"] {
        let doc: Value = serde_json::from_str(&outputs[file]).unwrap();
        let ops: Vec<&Value> = doc["paths"]
            .as_object()
            .unwrap()
            .values()
            .flat_map(|item| item.as_object().unwrap().values())
            .collect();
        for (id, (consequential, confirmation, permanent, destructive)) in expected {
            let op = ops.iter().find(|o| o["operationId"] == id).unwrap();
            assert_eq!(op["x-openai-isConsequential"], consequential, "{file} {id}");
            assert_eq!(
                op.get("x-requires-confirmation") == Some(&Value::Bool(true)),
                confirmation,
                "{file} {id}"
            );
            assert_eq!(
                op.get("x-permanent") == Some(&Value::Bool(true)),
                permanent,
                "{file} {id}"
            );
            let tool = tools
                .as_array()
                .unwrap()
                .iter()
                .find(|t| t["name"] == id)
                .unwrap();
            assert_eq!(
                tool["annotations"]["destructiveHint"], destructive,
                "mcp {id}"
            );
        }
    }
}

/// The 409 response ("this Idempotency-Key was already used") is written exactly on
/// the inline operations that declare the header (and do not say, with
/// `idempotency.duplicate`, that the provider answers a reused key otherwise), and its
/// component only when one does.
#[test]
fn conflict_response_only_where_the_idempotency_key_is_declared() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut seen = (0, 0);
    for dir in ["examples/manifests", "tests/cases/valid"] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            let path = entry.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            if text.lines().any(|l| l.starts_with("openapi:")) {
                continue; // base mode never adds problem responses
            }
            // With the provider's own `errors:`, 409 is written only where it is listed
            // (tests/cases check that); this test is about the RFC 9457 default.
            if text.lines().any(|l| l.starts_with("errors:")) {
                continue;
            }
            let file = path
                .strip_prefix(root)
                .unwrap()
                .to_str()
                .unwrap()
                .to_string();
            let doc = openapi(&build(&file));
            let mut any_key = false;
            for item in doc["paths"].as_object().unwrap().values() {
                for op in item.as_object().unwrap().values() {
                    // Unless the manifest says how the provider answers a reused key
                    // (`idempotency.duplicate`): then that answer, not 409, is its.
                    let key = op["parameters"].as_array().is_some_and(|ps| {
                        ps.iter()
                            .any(|p| p["name"] == "Idempotency-Key" && p["in"] == "header")
                    }) && op["x-idempotency"].get("duplicate").is_none();
                    any_key |= key;
                    let conflict = op["responses"].get("409").is_some();
                    assert_eq!(conflict, key, "{file} {}", op["operationId"]);
                    if key {
                        seen.0 += 1;
                    } else if op.get("x-cost-kind").is_some() {
                        seen.1 += 1; // spends without the header: no 409
                    }
                }
            }
            assert_eq!(
                doc["components"]["responses"].get("Conflict").is_some(),
                any_key,
                "{file}"
            );
        }
    }
    assert!(
        seen.0 > 3 && seen.1 >= 2,
        "both kinds are exercised: {seen:?}"
    );
}

#[test]
fn llms_txt_says_what_to_do_about_lost_jobs_permanent_actions_and_errors() {
    let outputs = build("tests/cases/valid/safety-semantics.yaml");
    let llms = &outputs["llms.txt"];
    for expected in [
        "- `cancelExport` starts a change that settles in the background; poll `getExport` until it shows the result (about 30s). Retry key: the `Idempotency-Key` header: a fresh value for each new request, the same value when retrying one that failed or timed out.\n",
        "- `refundRender` starts a change that settles in the background; poll `getRender` until it shows the result. Retry key: the `Idempotency-Key` header: a fresh value for each new request, the same value when retrying one that failed or timed out.\n",
        "Calling a change again does not make it settle sooner: poll until it shows the result.\n",
        "Lost a job's id? Never start the work again to get a new one. For `createExport`, find the job with `listExports`. \
         For `startRender`, no operation lists the jobs: tell the person the id is lost and ask what to do.\n",
        "- `startRender` (credits, when the project is longer than one minute): Costs 5 render credits. Retry key: the `Idempotency-Key` header (required): a fresh value for each new request, the same value when retrying one that failed or timed out.\n",
        "## Actions that cannot be undone\n\n\
         - `cancelExport` (`POST /v1/exports/{exportId}/cancel`): Cancel an export.\n\
         - `publishProject` (`POST /v1/projects/{projectId}/publish`): Publish a project to the person's channel.\n\
         - `archiveProject` (`POST /v1/projects/{projectId}/archive`): Archive a project for good.\n\
         - `deleteProject` (`DELETE /v1/projects/{projectId}`): Delete a project.\n\n",
        "## Rules for the assistant\n\n- Use only the operations listed above.",
        "- A 401 means the connector token is missing, revoked or expired: ask the person to create a new one at \
         <https://studio.example/settings?tab=api-keys#create>",
        "- A 429 means too many requests: wait",
        "Never start new or different work to get around a limit.",
        "quote it back to the person",
        "## Docs\n\n- [API documentation](https://docs.studio.example/api): ",
        "\n- [OpenAPI document](https://docs.studio.example/connector%28v2%29/openapi.json): ",
    ] {
        assert!(llms.contains(expected), "missing {expected:?} in\n{llms}");
    }
    // Nothing says a change "returns a job", and `deleteDraft` (confirm: false) is routine.
    assert!(!llms.contains("`cancelExport` returns a job"));
    assert!(!llms.contains(
        "`deleteDraft` (`DELETE /v1/drafts/{draftId}`): Delete an unsaved draft. Cannot"
    ));
    // The dashboard link keeps its query and fragment wherever it is written.
    let doc = openapi(&outputs);
    assert!(
        doc["components"]["securitySchemes"]["bearerAuth"]["description"]
            .as_str()
            .unwrap()
            .contains("https://studio.example/settings?tab=api-keys#create")
    );
    // Without `specUrl` or `docsUrl` no link is guessed on the API's host: no Docs.
    let video = &build("examples/manifests/video.yaml")["llms.txt"];
    assert!(!video.contains("## Docs") && !video.contains("openapi.json"));
    assert!(video.contains("For `createVideo`, find the job with `listVideos`."));
}

/// The lines of one section of `explain`'s output (its indented lines after `title`).
fn explain_section<'a>(text: &'a str, title: &str) -> Vec<&'a str> {
    text.lines()
        .skip_while(|l| *l != title)
        .skip(1)
        .take_while(|l| l.is_empty() || l.starts_with("    "))
        .collect()
}

/// `explain` shows the new sentences in every target it prints.
#[test]
fn explain_shows_confirm_change_and_when_in_every_target() {
    let (connector, outputs) = build_all("examples/manifests/form-encoded-payments.yaml");
    let cases = [
        (
            "createPaymentIntent",
            "COSTS THE PERSON when confirm is true:",
        ),
        ("cancelPaymentIntent", "PERMANENT"),
        ("cancelPaymentIntent", "poll `getPaymentIntent`"),
        ("deleteCustomer", "PERMANENT"),
    ];
    for (id, sentence) in cases {
        let text = connectorgen_core::explain::explain(
            &connector,
            &outputs,
            &std::collections::BTreeMap::default(),
            id,
        )
        .unwrap();
        for title in [
            "muse: openapi.json, description:",
            "openai: openapi.openai.json, description:",
            "openapi30: openapi.3.0.json, description:",
            "mcp: mcp-tools.json, description:",
        ] {
            let section = explain_section(&text, title).join("\n");
            assert!(
                section.contains(sentence),
                "{id} {title} lacks {sentence:?}:\n{text}"
            );
        }
        let llms = explain_section(&text, "muse: llms.txt, lines that name it:").join("\n");
        assert!(llms.contains(&format!("`{id}`")), "{id}: {text}");
    }
    let change = connectorgen_core::explain::explain(
        &connector,
        &outputs,
        &std::collections::BTreeMap::default(),
        "cancelPaymentIntent",
    )
    .unwrap();
    assert!(change.contains("x-async-returns: \"change\""));
    assert!(change.contains("destructiveHint: true"));
    assert!(change.contains(
        "- `cancelPaymentIntent` starts a change that settles in the background; poll `getPaymentIntent` until it shows the result."
    ));
    let list = connectorgen_core::explain::list(&connector);
    assert!(
        list.contains("spends (money, when confirm is true)"),
        "{list}"
    );
    assert!(
        list.contains("confirm (cannot be undone), async change, polls getPaymentIntent"),
        "{list}"
    );
}

/// A base document's credential and content-negotiation headers are not tool arguments
/// (the model would ask the person for their key), and hints the base carries that the
/// manifest does not imply are not kept beside the ones connectorgen writes.
#[test]
fn base_credentials_are_not_arguments_and_stale_hints_are_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let base = serde_json::json!({
        "openapi": "3.1.0",
        "info": { "title": "Things API", "version": "1", "description": "Things." },
        "servers": [{ "url": "https://api.things.example" }],
        "components": { "securitySchemes": {
            "key": { "type": "apiKey", "in": "header", "name": "X-API-Key" }
        } },
        "security": [{ "key": [] }],
        "paths": { "/things": { "get": {
            "operationId": "listThings",
            "x-poll-operationId": "somethingElse",
            "x-requires-confirmation": true,
            "x-internal": "kept",
            "parameters": [
                { "name": "x-api-key", "in": "header", "required": true, "schema": { "type": "string" } },
                { "name": "Authorization", "in": "header", "required": true, "schema": { "type": "string" } },
                { "name": "Accept", "in": "header", "schema": { "type": "string" } },
                { "name": "limit", "in": "query", "schema": { "type": "integer" } }
            ],
            "responses": { "200": { "description": "ok" } }
        } } }
    });
    std::fs::write(dir.path().join("api.json"), base.to_string()).unwrap();
    let manifest = "version: 1\nopenapi: api.json\nservice:\n  dashboardUrl: https://things.example/keys\ntargets: [muse, mcp]\noperations:\n  - operation: listThings\n    summary: List the person's things\n    description: Read-only. Lists things. Cannot change them.\n";
    let options = connectorgen_core::Options {
        manifest_dir: Some(dir.path().to_path_buf()),
        ..connectorgen_core::Options::default()
    };
    let analysis =
        connectorgen_core::analyze_with("m.yaml", Arc::new(manifest.to_string()), &options)
            .unwrap();
    assert!(!analysis.has_errors(), "{:?}", analysis.diagnostics);
    let outputs = analysis.outputs.unwrap();

    let tools: Value = serde_json::from_str(&outputs["mcp-tools.json"]).unwrap();
    let arguments: Vec<&str> = tools[0]["inputSchema"]["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(arguments, ["limit"]);

    let doc = openapi(&outputs);
    let get = op(&doc, "/things", "get");
    assert!(get.get("x-poll-operationId").is_none(), "{get}");
    assert!(get.get("x-requires-confirmation").is_none(), "{get}");
    assert_eq!(get["x-internal"], "kept");
    assert_eq!(get["x-openai-isConsequential"], false);
    // The HTTP description itself keeps every parameter, as the provider wrote it.
    assert_eq!(get["parameters"].as_array().unwrap().len(), 4);
}
