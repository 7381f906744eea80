//! Connector → `openapi.json`: the document with the safety layer written in.
//!
//! Takes: the validated connector and each operation's model-facing description (from
//! `prose.rs`, so the text in the spec and in descriptions.md is one string). Returns:
//! the pretty-printed JSON text with a trailing newline, printed straight from the model
//! through borrowing wrappers (nothing is copied), as one `String` or into a writer
//! (`write`); or, for the targets that rewrite it,
//! the same document as one `serde_json::Value` (`document`).
//! Must never: be built from a text template, reorder or rewrite the HTTP description
//! (the author's schemas, or the provider's document in base mode), or emit keys in an
//! order that depends on anything but the inputs. What it adds to each operation is the
//! safety layer only: `operationId`, `summary` and the model-facing `description` (in
//! place when the operation already has them, first otherwise) and the `x-` hints.

use indexmap::IndexMap;
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Value};

use crate::model::Names as _;
use crate::model::{Connector, HINT_KEYS, Operation, Payer};

/// Renders the OpenAPI document. `descriptions[i]` is operation i's model-facing text.
pub(super) fn render(connector: &Connector, descriptions: &[String]) -> String {
    super::json_text(&Doc {
        connector,
        descriptions,
    })
}

/// `render`'s text written to `writer` as it is made, never held whole (`build` streams
/// it into its temporary file: at 10,000 operations the text is 25 MB).
pub(super) fn write(
    connector: &Connector,
    descriptions: &[String],
    writer: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    let mut writer = std::io::BufWriter::with_capacity(1 << 16, writer);
    super::pretty::to_writer(
        &mut writer,
        &Doc {
            connector,
            descriptions,
        },
    )?;
    std::io::Write::write_all(&mut writer, b"\n")?;
    std::io::Write::flush(&mut writer)
}

/// The same document as a JSON value, for the targets that rewrite it.
pub(super) fn document(connector: &Connector, descriptions: &[String]) -> Value {
    serde_json::to_value(Doc {
        connector,
        descriptions,
    })
    .expect("the document always serialises")
}

/// The whole document: the model's top level, with the operations written into `paths`.
struct Doc<'a> {
    connector: &'a Connector,
    descriptions: &'a [String],
}

impl Serialize for Doc<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let root = &self.connector.document.root;
        let mut map = serializer.serialize_map(Some(root.len()))?;
        for (key, value) in root {
            if key == "paths" {
                map.serialize_entry(key, &Paths(self))?;
            } else {
                map.serialize_entry(key, value)?;
            }
        }
        map.end()
    }
}

/// `paths`: each path's shared keys, then its operations in manifest order.
struct Paths<'a>(&'a Doc<'a>);

impl Serialize for Paths<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let Doc {
            connector,
            descriptions,
        } = self.0;
        // The manifest's own paths: foldhash (Cargo.toml says why that is safe here).
        let mut by_path: IndexMap<&str, Vec<(&Operation, &str)>, foldhash::fast::RandomState> =
            IndexMap::default();
        for (op, description) in connector.operations.iter().zip(descriptions.iter()) {
            by_path
                .entry(op.path.as_str())
                .or_default()
                .push((op, description));
        }
        let empty = Map::new();
        let mut map = serializer.serialize_map(Some(by_path.len()))?;
        for (path, ops) in by_path {
            let shared = connector.document.path_item(path).unwrap_or(&empty);
            map.serialize_entry(path, &PathItem { shared, ops })?;
        }
        map.end()
    }
}

struct PathItem<'a> {
    shared: &'a Map<String, Value>,
    ops: Vec<(&'a Operation, &'a str)>,
}

impl Serialize for PathItem<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.shared.len() + self.ops.len()))?;
        for (key, value) in self.shared {
            map.serialize_entry(key, value)?;
        }
        for (op, description) in &self.ops {
            map.serialize_entry(op.method.as_str(), &OperationObject { op, description })?;
        }
        map.end()
    }
}

/// One Operation Object: the HTTP description as the model holds it, with the id,
/// summary and model-facing description written over it and the hints added.
struct OperationObject<'a> {
    op: &'a Operation,
    description: &'a str,
}

impl Serialize for OperationObject<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let op = self.op;
        let mut hints = hints(op);
        let mut map = serializer.serialize_map(None)?;
        for key in key_order(&op.http) {
            match key {
                "operationId" => map.serialize_entry(key, &op.id)?,
                "summary" => map.serialize_entry(key, &*op.summary)?,
                "description" => map.serialize_entry(key, self.description)?,
                _ => match hints.iter().position(|(k, _)| *k == key) {
                    Some(i) => {
                        let (k, v) = hints.remove(i);
                        map.serialize_entry(k, &v)?;
                    }
                    // A base document's own hint the manifest does not imply (a stale
                    // `x-poll-operationId`, say) would contradict the ones written here.
                    None if HINT_KEYS.contains(&key) => {}
                    None => map.serialize_entry(key, &op.http[key])?,
                },
            }
        }
        for (key, value) in &hints {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

/// The keys of an operation object in output order: the HTTP description's own order,
/// with `operationId` first when it has none, `summary` right after `operationId` and
/// `description` right after `summary` when it lacks them.
fn key_order(http: &Map<String, Value>) -> Vec<&str> {
    let mut keys: Vec<&str> = http.keys().map(String::as_str).collect();
    let mut after = |key: &'static str, previous: Option<&str>| {
        if keys.contains(&key) {
            return;
        }
        let at = previous
            .and_then(|p| keys.iter().position(|k| *k == p))
            .map_or(0, |i| i + 1);
        keys.insert(at, key);
    };
    after("operationId", None);
    after("summary", Some("operationId"));
    after("description", Some("summary"));
    keys
}

/// The machine-readable safety hints of one operation, in their fixed order. Absent
/// hints are left out; a hint the base document already carries is replaced in place.
///
/// `x-openai-isConsequential` is OpenAI's own default (true on every method but GET)
/// unless the author wrote `confirm: false`: writing `false` on a non-GET would switch
/// on OpenAI's "always allow" for it; a read (`read: true`) is the exception, free and
/// safe to repeat whatever its method. `x-read-only` marks such a declared read, whose
/// method does not say it. `x-requires-confirmation` marks every call that needs the
/// person's yes: it spends, or it cannot be undone.
fn hints(op: &Operation) -> Vec<(&'static str, Value)> {
    let mut hints = vec![("x-openai-isConsequential", Value::Bool(op.consequential))];
    if op.declared_read() {
        hints.push(("x-read-only", Value::Bool(true)));
    }
    if let Some(a) = &op.async_ {
        hints.push(("x-long-running", Value::Bool(true)));
        hints.push(("x-poll-operationId", Value::String(a.poll_with.clone())));
        if let Some(seconds) = a.typical_seconds {
            hints.push(("x-typical-seconds", Value::from(seconds)));
        }
        hints.push(("x-async-returns", Value::String(a.returns.as_str().into())));
    }
    if let Some(s) = &op.spends {
        hints.push(("x-cost-kind", Value::String(s.kind.as_str().to_string())));
        hints.push(("x-cost-note", Value::String(s.note.clone())));
        if let Some(when) = &s.when {
            hints.push(("x-cost-when", Value::String(when.clone())));
        }
        if s.payer != Payer::Person {
            hints.push(("x-cost-payer", Value::String(s.payer.as_str().to_string())));
        }
    }
    if op.confirm {
        hints.push(("x-permanent", Value::Bool(true)));
        if let Some(when) = &op.confirm_when {
            hints.push(("x-permanent-when", Value::String(when.clone())));
        }
    }
    // Where the retry rule is written (it spends or is async), and on any key.
    if op.spends.is_some() || op.async_.is_some() || op.key().is_some() {
        hints.push(("x-idempotency", op.idempotency.hint()));
    }
    if op.consent() {
        hints.push(("x-requires-confirmation", Value::Bool(true)));
    }
    debug_assert!(hints.iter().all(|(k, _)| HINT_KEYS.contains(k)));
    hints
}
