//! One JSON line on stderr per event: start-up, every forwarded call, every refused one.
//!
//! Takes: an event name and fields. Returns: nothing (writes stderr).
//! Must never: write to stdout (in stdio mode stdout is the MCP channel), or write a
//! secret: every string, keys included, passes through the process's one `Redactor`
//! (`crate::redact`: by value, every encoded form) first.

use std::io::Write as _;

use serde_json::{Map, Value};

pub(crate) use crate::redact::Redactor;

impl Redactor {
    /// Writes one line: `{"event": event, ...fields}`.
    pub(crate) fn line(&self, event: &str, fields: Value) {
        let mut map = Map::new();
        map.insert("event".into(), Value::String(event.into()));
        if let Value::Object(fields) = self.value(fields) {
            map.extend(fields);
        }
        let mut line = Value::Object(map).to_string();
        line.push('\n');
        // A closed stderr is not a reason to stop serving.
        let _ = std::io::stderr().lock().write_all(line.as_bytes());
    }
}

impl Redactor {
    /// A tool call's answer with every secret replaced: its text, structured content and
    /// `_meta`. A result that cannot be taken apart is replaced by an error saying so,
    /// never sent as it was.
    pub(crate) fn response(
        &self,
        response: rmcp::model::CallToolResponse,
    ) -> rmcp::model::CallToolResponse {
        use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock};
        if self.is_empty() {
            return response;
        }
        match response {
            CallToolResponse::Complete(result) => {
                let redacted = serde_json::to_value(&result)
                    .map(|v| self.value(v))
                    .and_then(serde_json::from_value::<CallToolResult>);
                match redacted {
                    Ok(result) => result.into(),
                    Err(e) => CallToolResult::error(vec![ContentBlock::text(format!(
                        "The answer could not be checked for the credential ({e}), so it is \
                         not shown."
                    ))])
                    .into(),
                }
            }
            // An input-required result is the consent question (the manifest's text and
            // the model's arguments: nothing the process holds as a secret) and a sealed
            // state; rmcp cannot read one back to rebuild it.
            other => other,
        }
    }
}
