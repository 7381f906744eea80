use super::elicit::accepted;
use super::*;
use crate::call::tests::video;

#[test]
fn served_tools_lose_the_retry_key_argument_and_the_mapping_and_tracked_ones_gain_confirmation() {
    let (_, tools) = video();
    let (create, create_map) = tools
        .iter()
        .find(|(t, _)| t["name"] == "createVideo")
        .unwrap();
    assert!(
        create["inputSchema"]["properties"]
            .get("idempotencyKey")
            .is_some()
    );
    let served = served_definition(create.clone(), create_map, true);
    let props = &served["inputSchema"]["properties"];
    assert!(props.get("idempotencyKey").is_none());
    assert!(props.get(CONFIRMATION_ARGUMENT).is_some());
    assert!(
        !served["inputSchema"]["required"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r == "idempotencyKey" || r == CONFIRMATION_ARGUMENT)
    );
    let (get, get_map) = tools.iter().find(|(t, _)| t["name"] == "getVideo").unwrap();
    // An untracked tool is served as the file has it, without the request mapping.
    let mut expected = get.clone();
    expected.as_object_mut().unwrap().shift_remove("_meta");
    assert_eq!(served_definition(get.clone(), get_map, false), expected);
}

#[test]
fn a_non_object_output_schema_is_offered_only_on_the_current_revision() {
    let tool: Tool = serde_json::from_value(json!({
        "name": "listThings",
        "inputSchema": {"type": "object"},
        "_meta": {OUTPUT_SCHEMA_META_KEY: {"type": "array", "items": {"type": "string"}}}
    }))
    .unwrap();
    assert!(tool.output_schema.is_none());
    let current = with_any_output_schema(&tool);
    assert_eq!(
        current
            .output_schema
            .as_deref()
            .map(|s| s.get("type").cloned()),
        Some(Some(json!("array")))
    );
}

#[test]
fn only_an_accepted_checked_form_is_a_yes() {
    assert!(accepted(
        &json!({"action": "accept", "content": {"confirm": true}})
    ));
    assert!(!accepted(
        &json!({"action": "accept", "content": {"confirm": false}})
    ));
    assert!(!accepted(&json!({"action": "accept"})));
    assert!(!accepted(
        &json!({"action": "decline", "content": {"confirm": true}})
    ));
    assert!(!accepted(&json!({"action": "cancel"})));
}
