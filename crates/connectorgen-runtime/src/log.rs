//! One JSON line on stderr per event: start-up, every forwarded call, every refused one.
//!
//! Takes: an event name and fields. Returns: nothing (writes stderr).
//! Must never: write to stdout (in stdio mode stdout is the MCP channel), or write a
//! secret: every string, keys included, passes through the process's one `Redactor`
//! (`crate::redact`: by value, every encoded form) first.

use std::io::Write as _;

use serde_json::{Map, Value};

use crate::redact::Redactor;

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
