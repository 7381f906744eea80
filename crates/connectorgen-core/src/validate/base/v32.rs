//! OpenAPI 3.2 → 3.1, for base documents written in 3.2: every output is 3.1 (or 3.0,
//! converted from 3.1), so what 3.2 adds is written the way a 3.1 reader makes the same
//! requests from it.
//!
//! Takes: the kept document's top level and the exposed operations, as copied from a
//! 3.2 base. Returns (through `Validator`): nothing; rewrites them in place, with an
//! `openapi32-unsupported` finding for each construct: a warning naming the
//! conversion, an error where no 3.1 reader could make the same request.
//! - a media type given as a `$ref` into `components.mediaTypes` → the media type
//!   written in place (`components.mediaTypes` is left out);
//! - a media type's `itemSchema`, `itemEncoding`, `prefixEncoding`, `description`, an
//!   encoding's nested `encoding`/`itemEncoding`/`prefixEncoding`, a response's
//!   `summary`, a tag's `summary`/`parent`/`kind`, a server's `name`, a security
//!   scheme's `deprecated`/`oauth2MetadataUrl`, an OAuth `deviceAuthorization` flow, an
//!   example's `serializedValue` → the same key with `x-` before it;
//! - an example's `dataValue` → its `value` (when it has none);
//! - `$self` → dropped (the outputs are other documents, whose references are local);
//! - a `querystring` parameter, a request body described only by `itemSchema`: errors.
//!
//! The exposed `query` and `additionalOperations` operations are refused earlier, where
//! the manifest names them (`operation.rs`).
//! Must never: change a request a 3.1 reader makes, or drop a construct without a finding.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use crate::base::Base;
use crate::base::places::{self, Kind, Place};
use crate::diagnostics::{Diagnostic, Finding};
use crate::model::Operation;
use crate::validate::base::invalid::base_repaired;
use crate::validate::context::Validator;

/// References followed at most from one media type to the one it names.
const MAX_CHAIN: usize = 16;

/// The findings of one conversion, grouped by what was done: one finding per construct,
/// at its first place, with how many places had it.
#[derive(Default)]
struct Notes {
    /// what → (first base pointer, count, error?)
    by_what: BTreeMap<String, (String, usize, bool)>,
    /// The order constructs were first met in (findings follow the document).
    order: Vec<String>,
}

impl Notes {
    fn add(&mut self, what: String, pointer: String, error: bool) {
        if let Some(entry) = self.by_what.get_mut(&what) {
            entry.1 += 1;
        } else {
            self.order.push(what.clone());
            self.by_what.insert(what, (pointer, 1, error));
        }
    }
}

/// Writes the kept parts of a 3.2 base document as OpenAPI 3.1.
pub(in crate::validate) fn downgrade_32(
    v: &mut Validator,
    base: &Base,
    root: &mut Map<String, Value>,
    operations: &mut [Operation],
) {
    let mut notes = Notes::default();
    root.insert("openapi".into(), json!("3.1.0"));
    if root.shift_remove("$self").is_some() {
        notes.add(
            "`$self` (the document's own URI) is dropped: the outputs are other documents, whose references are all local".to_string(),
            "/$self".to_string(),
            false,
        );
    }
    for (i, tag) in root
        .get_mut("tags")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
        .enumerate()
    {
        if let Some(tag) = tag.as_object_mut() {
            for key in ["summary", "parent", "kind"] {
                moved(tag, key, "a tag's", &format!("/tags/{i}"), &mut notes);
            }
        }
    }
    servers(root, "", &mut notes);
    // Written in place wherever they are used (from the base document), so the
    // section itself goes before anything is converted.
    if let Some(Value::Object(components)) = root.get_mut("components") {
        components.shift_remove("mediaTypes");
        if components.is_empty() {
            root.remove("components");
        }
    }
    convert(base, root, "", places::document, &mut notes);
    for op in operations.iter_mut() {
        let at = op.pointer();
        servers(&mut op.http, &at, &mut notes);
        convert(
            base,
            &mut op.http,
            &at,
            |v| places::operation(v, ""),
            &mut notes,
        );
    }
    for what in notes.order {
        let (pointer, count, error) = notes.by_what[&what].clone();
        let what = match count {
            1 => what,
            n => format!("{what} ({n} places)"),
        };
        let d = Diagnostic::Openapi32Unsupported {
            what,
            span: base.span(&pointer),
            help: if error {
                "leave the operation out of `operations`, or expose another of the provider's operations that makes the same request in a way OpenAPI 3.1 can describe".to_string()
            } else {
                "nothing to do: the outputs are OpenAPI 3.1, and a 3.1 reader makes the same requests from what they say".to_string()
            },
        };
        let finding = if error {
            Finding::error(d)
        } else {
            Finding::warning(d)
        };
        v.findings.add(finding.in_base());
    }
}

/// In a 3.0 or 3.1 document, a media type given as a `$ref` into
/// `components.mediaTypes` (which only 3.2 has) is written in place: a 3.0/3.1
/// reader does not follow it, and the outputs would not validate.
pub(in crate::validate) fn repair_media_type_refs(
    v: &mut Validator,
    base: &Base,
    root: &mut Map<String, Value>,
    operations: &mut [Operation],
) {
    let mut notes = Notes::default();
    let mut value = Value::Object(std::mem::take(root));
    inline_media_types(base, &mut value, "", &places::document, &mut notes);
    if let Value::Object(map) = value {
        *root = map;
    }
    for op in operations.iter_mut() {
        let at = op.pointer();
        let mut value = Value::Object(std::mem::take(&mut op.http));
        let find = |v: &Value| places::operation(v, "");
        inline_media_types(base, &mut value, &at, &find, &mut notes);
        if let Value::Object(map) = value {
            op.http = map;
        }
    }
    if notes.order.is_empty() {
        return;
    }
    if let Some(Value::Object(components)) = root.get_mut("components") {
        components.shift_remove("mediaTypes");
        if components.is_empty() {
            root.shift_remove("components");
        }
    }
    for what in notes.order {
        let (pointer, count, _) = notes.by_what[&what].clone();
        let what = format!(
            "a media type is a `$ref` into `components.mediaTypes`, which only OpenAPI 3.2 has{}; repaired in the outputs: the media type is written in place",
            match count {
                1 => String::new(),
                n => format!(" ({n} places)"),
            }
        );
        base_repaired(v, base, &pointer, what);
    }
}

/// Moves `key` of `map` to `x-<key>` (unless that is taken, when the 3.1 key is just
/// left out), noting it.
fn moved(map: &mut Map<String, Value>, key: &str, whose: &str, at: &str, notes: &mut Notes) {
    if !map.contains_key(key) {
        return;
    }
    let extension = format!("x-{key}");
    let what = if map.contains_key(&extension) {
        map.shift_remove(key);
        format!("{whose} `{key}` is dropped: 3.1 has no place for it, and `{extension}` is taken")
    } else {
        // Renamed where it is: the document's order is kept.
        for (k, v) in std::mem::take(map) {
            let k = if k == key { extension.clone() } else { k };
            map.insert(k, v);
        }
        format!("{whose} `{key}` is written as `{extension}`: 3.1 has no place for it")
    };
    notes.add(what, format!("{at}/{key}"), false);
}

/// A server's `name` (a list of servers at `at`, or an object holding one).
fn servers(object: &mut Map<String, Value>, at: &str, notes: &mut Notes) {
    for (i, server) in object
        .get_mut("servers")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
        .enumerate()
    {
        if let Some(server) = server.as_object_mut() {
            moved(
                server,
                "name",
                "a server's",
                &format!("{at}/servers/{i}"),
                notes,
            );
        }
    }
}

/// The conversions inside `object`, whose objects `find` lists (pointers relative to
/// it; `at` is its pointer in the base document).
fn convert(
    base: &Base,
    object: &mut Map<String, Value>,
    at: &str,
    find: impl Fn(&Value) -> Vec<Place>,
    notes: &mut Notes,
) {
    let mut value = Value::Object(std::mem::take(object));
    inline_media_types(base, &mut value, at, &find, notes);
    for place in find(&value) {
        let base_pointer = format!("{at}{}", place.pointer);
        if place.reference {
            continue;
        }
        let Some(map) = value
            .pointer_mut(&place.pointer)
            .and_then(Value::as_object_mut)
        else {
            continue;
        };
        let here = base_pointer.as_str();
        match place.kind {
            Kind::MediaType => {
                if place.pointer.contains("/requestBody/")
                    && map.contains_key("itemSchema")
                    && !map.contains_key("schema")
                {
                    notes.add(
                        "a request body described only by `itemSchema` (a stream of items), which 3.1 cannot describe".to_string(),
                        format!("{here}/itemSchema"),
                        true,
                    );
                }
                for key in [
                    "itemSchema",
                    "itemEncoding",
                    "prefixEncoding",
                    "description",
                ] {
                    moved(map, key, "a media type's", here, notes);
                }
            }
            Kind::Encoding => {
                for key in ["encoding", "itemEncoding", "prefixEncoding"] {
                    moved(map, key, "an encoding's", here, notes);
                }
            }
            Kind::Response => moved(map, "summary", "a response's", here, notes),
            Kind::Example => {
                if !map.contains_key("value")
                    && !map.contains_key("externalValue")
                    && map.contains_key("dataValue")
                {
                    for (k, v) in std::mem::take(map) {
                        let k = if k == "dataValue" {
                            "value".to_string()
                        } else {
                            k
                        };
                        map.insert(k, v);
                    }
                    notes.add(
                        "an example's `dataValue` is written as its `value`".to_string(),
                        format!("{here}/dataValue"),
                        false,
                    );
                }
                moved(map, "dataValue", "an example's", here, notes);
                moved(map, "serializedValue", "an example's", here, notes);
            }
            Kind::Parameter if map.get("in").and_then(Value::as_str) == Some("querystring") => {
                notes.add(
                    "a `querystring` parameter (the whole query string as one value), which 3.1 cannot describe".to_string(),
                    format!("{here}/in"),
                    true,
                );
            }
            Kind::SecurityScheme => {
                moved(map, "deprecated", "a security scheme's", here, notes);
                moved(map, "oauth2MetadataUrl", "a security scheme's", here, notes);
                if let Some(Value::Object(flows)) = map.get_mut("flows") {
                    let flows_at = format!("{here}/flows");
                    moved(flows, "deviceAuthorization", "OAuth's", &flows_at, notes);
                }
            }
            Kind::PathItem | Kind::Operation => servers(map, here, notes),
            _ => {}
        }
    }
    if let Value::Object(map) = value {
        *object = map;
    }
}

/// Every media type given as a `$ref` into `components.mediaTypes`, replaced by the
/// media type it names (through any chain), until none is left.
fn inline_media_types(
    base: &Base,
    value: &mut Value,
    at: &str,
    find: &impl Fn(&Value) -> Vec<Place>,
    notes: &mut Notes,
) {
    // Each round writes in the references the previous one brought in; a chain is
    // followed within `MAX_CHAIN`, so the rounds end.
    for _ in 0..MAX_CHAIN {
        let mut replaced = false;
        for place in find(value) {
            if place.kind != Kind::MediaType || !place.reference {
                continue;
            }
            let Some(target) = value
                .pointer(&place.pointer)
                .and_then(|m| media_type(base, m))
            else {
                continue;
            };
            if let Some(slot) = value.pointer_mut(&place.pointer) {
                *slot = target;
                replaced = true;
                notes.add(
                    "a media type given as a `$ref` into `components.mediaTypes` is written in place (3.1 has no `components.mediaTypes`)".to_string(),
                    format!("{at}{}", place.pointer),
                    false,
                );
            }
        }
        if !replaced {
            return;
        }
    }
}

/// The media type a Reference Object into `components.mediaTypes` names, followed
/// through references; `None` for any other reference (checked elsewhere).
fn media_type(base: &Base, value: &Value) -> Option<Value> {
    let mut value = value;
    for _ in 0..MAX_CHAIN {
        match value.get("$ref").and_then(Value::as_str) {
            Some(r) if r.starts_with("#/components/mediaTypes/") => value = base.resolve(r)?,
            Some(_) => return None,
            None => return Some(value.clone()),
        }
    }
    None
}
