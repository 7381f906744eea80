//! One JSON line on stderr per event: start-up, every forwarded call, every refused one.
//!
//! Takes: an event name and fields. Returns: nothing (writes stderr).
//! Must never: write to stdout (in stdio mode stdout is the MCP channel), or write a
//! credential: every string is passed through the redactor first.

use std::io::Write as _;

use serde_json::{Map, Value};

/// Replaces each of the secrets with `[redacted]` wherever it appears.
#[derive(Debug, Clone, Default)]
pub(crate) struct Redactor {
    secrets: Vec<String>,
}

impl Redactor {
    pub(crate) fn new(secrets: impl IntoIterator<Item = String>) -> Redactor {
        let mut secrets: Vec<String> = secrets.into_iter().filter(|s| s.len() >= 4).collect();
        // Longest first, so a secret that contains another is replaced whole.
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        Redactor { secrets }
    }

    pub(crate) fn text(&self, text: &str) -> String {
        let mut out = text.to_string();
        for secret in &self.secrets {
            out = out.replace(secret.as_str(), "[redacted]");
            let encoded =
                percent_encoding::utf8_percent_encode(secret, percent_encoding::NON_ALPHANUMERIC)
                    .to_string();
            out = out.replace(&encoded, "[redacted]");
        }
        out
    }

    fn value(&self, value: Value) -> Value {
        match value {
            Value::String(s) => Value::String(self.text(&s)),
            Value::Array(items) => Value::Array(items.into_iter().map(|v| self.value(v)).collect()),
            Value::Object(map) => {
                Value::Object(map.into_iter().map(|(k, v)| (k, self.value(v))).collect())
            }
            other => other,
        }
    }

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_redacted_plain_and_percent_encoded() {
        let r = Redactor::new(["s3cr&t".to_string(), "Bearer s3cr&t".to_string()]);
        assert_eq!(
            r.text("https://x/?api_key=s3cr%26t and Bearer s3cr&t"),
            "https://x/?api_key=[redacted] and [redacted]"
        );
    }
}
