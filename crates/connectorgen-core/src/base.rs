//! The provider's own OpenAPI document, named by `openapi:` in a manifest ("base mode").
//!
//! Takes: the document's text and the name to show for it. Returns: a `Base` — the
//! document as one `serde_json::Value` in the order written, its OpenAPI version, an
//! index of its operations in document order, and a way to turn a JSON pointer into the
//! place in the file (line and column for YAML and JSON alike) — or one `Diagnostic`
//! pointing into the file when it is not an OpenAPI 3.0, 3.1 or 3.2 document we can read.
//! Must never: trust the document (it gets the manifest's size limit and YAML budgets),
//! follow a reference out of its folder (`bundle.rs` reads the files a multi-file
//! document refers to, within bounds, and bundles them in; `Base::parse` reads none),
//! or change what it keeps: validation copies the provider's HTTP description from
//! here, with the few edits `validate/base/` lists.
//!
//! JSON is parsed with `serde_json` (a 3 MB document in milliseconds); anything else is
//! read as YAML with the manifest's parser settings (strict booleans, `010` stays text).
//! Neither keeps positions, so a pointer is located only when a finding needs it, by
//! walking the text towards it (`locate.rs`), remembered afterwards.

pub(crate) mod bundle;
mod locate;
pub use locate::locate_all;
pub(crate) mod places;

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use serde_json::{Map, Value};

use crate::diagnostics::{Diagnostic, Span};
use crate::model::{OpenapiVersion as Version, escape, resolve_local};
use bundle::{Bundled, Read, RefProblem, RefReader, SourceFile};

/// The HTTP methods an OpenAPI path item can hold, in the order the specification lists them.
pub(crate) const METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

/// One operation of the base document.
#[derive(Debug, Clone)]
pub struct BaseOperation {
    /// The path template, as the `paths` key.
    pub path: String,
    /// Lower case, as the path item keys it.
    pub method: &'static str,
    pub operation_id: Option<String>,
}

impl BaseOperation {
    /// "POST /v1/predictions": how a manifest names an operation without an operationId.
    pub fn route(&self) -> String {
        format!("{} {}", self.method.to_ascii_uppercase(), self.path)
    }

    /// The JSON pointer of the operation object.
    pub fn pointer(&self) -> String {
        format!("/paths/{}/{}", escape(&self.path), self.method)
    }

    /// Why the path cannot be a URL path, if it cannot: the rules of an inline path
    /// (`model::path_template`), so both modes accept the same paths.
    pub(crate) fn path_problem(&self) -> Option<String> {
        crate::model::path_template(&self.path).err()
    }
}

/// A parsed base document.
#[derive(Debug)]
pub struct Base {
    /// How diagnostics name the file (the manifest's `openapi:` joined to its folder).
    pub name: String,
    pub text: Arc<String>,
    pub root: Value,
    pub version: Version,
    /// Every operation, in document order.
    pub operations: Vec<BaseOperation>,
    /// The root file, then every file its references led to (`bundle.rs`).
    files: Vec<SourceFile>,
    /// Pointer in `root` → (file, pointer in that file), for what was copied from a file.
    mounts: HashMap<String, (usize, String)>,
    /// Why each reference that was left as written was not followed.
    problems: HashMap<String, RefProblem>,
    /// Every file read besides the root, with what the read gave.
    reads: Vec<Read>,
    /// The operations of OpenAPI 3.2 that no 3.1 document can hold (`query`, and
    /// `additionalOperations` such as `LINK`), by route and operationId, with their
    /// pointers: a manifest naming one is told why it cannot be exposed.
    pub only_in_32: Vec<(String, Option<String>, String)>,
    /// operationId → first operation, and (method, path) → first operation, built on
    /// first use: `find` runs once per listed operation, which must not be quadratic.
    lookup: OnceLock<Lookup>,
}

#[derive(Debug, Default)]
struct Lookup {
    by_id: HashMap<String, usize>,
    by_route: HashMap<(&'static str, String), usize>,
}

impl Base {
    /// Parses and indexes `text`. How it is read (`Syntax::of`): as JSON when the name
    /// ends in `.json`, as YAML when it ends in `.yaml` or `.yml`, otherwise as JSON
    /// when it starts with `{` and that parses, else as YAML (JSON is YAML, and so is a
    /// flow-style YAML document starting with `{`).
    /// References to other files are left as they are (`RefProblem::NotRead`).
    pub fn parse(name: &str, text: Arc<String>) -> Result<Base, Box<Diagnostic>> {
        Base::parse_with(name, text, None)
    }

    /// `parse`, following references to other files with `reader` (`bundle.rs`).
    pub fn load(
        name: &str,
        text: Arc<String>,
        reader: &RefReader,
    ) -> Result<Base, Box<Diagnostic>> {
        Base::parse_with(name, text, Some(reader))
    }

    fn parse_with(
        name: &str,
        text: Arc<String>,
        reader: Option<&RefReader>,
    ) -> Result<Base, Box<Diagnostic>> {
        let root = match Syntax::of(name, &text) {
            Syntax::Json => parse_json(&text)?,
            Syntax::Yaml => parse_yaml(&text)?,
            // The JSON error when neither reads it: the text looked like JSON.
            Syntax::Either => parse_json(&text).or_else(|e| parse_yaml(&text).map_err(|_| e))?,
        };
        let mut base = Base {
            name: name.to_string(),
            text: text.clone(),
            root,
            version: Version::V31,
            operations: Vec::new(),
            files: vec![SourceFile::new(name, text, 0)],
            mounts: HashMap::new(),
            problems: HashMap::new(),
            reads: Vec::new(),
            only_in_32: Vec::new(),
            lookup: OnceLock::new(),
        };
        base.version = base.check_version()?;
        // Bundled only once it is known to be OpenAPI: a file that is not must not lead
        // to others.
        let root = std::mem::take(&mut base.root);
        let first = base.files.pop().expect("the root file");
        let Bundled {
            root,
            files,
            mounts,
            problems,
            reads,
        } = bundle::bundle(root, first, reader);
        base.root = root;
        base.files = files;
        base.mounts = mounts;
        base.problems = problems;
        base.reads = reads;
        base.operations = index(&base.root);
        base.only_in_32 = index_32(&base.root);
        Ok(base)
    }

    fn check_version(&self) -> Result<Version, Box<Diagnostic>> {
        let not_openapi = |found: String, pointer: &str| {
            Box::new(Diagnostic::BaseNotOpenapi {
                found,
                span: self.span(pointer),
            })
        };
        let Some(object) = self.root.as_object() else {
            return Err(not_openapi("not a mapping at the top".to_string(), ""));
        };
        if let Some(v) = object.get("swagger") {
            return Err(not_openapi(format!("Swagger {}", show(v)), "/swagger"));
        }
        match object.get("openapi") {
            Some(Value::String(v)) if v.starts_with("3.0.") || v == "3.0" => Ok(Version::V30),
            Some(Value::String(v)) if v.starts_with("3.1.") || v == "3.1" => Ok(Version::V31),
            Some(Value::String(v)) if v.starts_with("3.2.") || v == "3.2" => Ok(Version::V32),
            Some(v) => Err(not_openapi(format!("OpenAPI {}", show(v)), "/openapi")),
            None => Err(not_openapi("no `openapi` version".to_string(), "")),
        }
    }

    /// The operation a manifest names: an operationId, or "METHOD /path" (the method in
    /// any case). `None` as well when the name is both an operationId and the route of
    /// another operation (`ambiguous` says which two): neither may win silently.
    pub fn find(&self, name: &str) -> Option<&BaseOperation> {
        match (self.by_id(name), self.by_route(name)) {
            (Some(a), Some(b)) if !std::ptr::eq(a, b) => None,
            (by_id, by_route) => by_id.or(by_route),
        }
    }

    /// The two operations a name could mean, when it is one operation's operationId and
    /// another's route (`operation: "GET /v1/things"` where a DELETE has that id).
    pub fn ambiguous(&self, name: &str) -> Option<(&BaseOperation, &BaseOperation)> {
        match (self.by_id(name), self.by_route(name)) {
            (Some(a), Some(b)) if !std::ptr::eq(a, b) => Some((a, b)),
            _ => None,
        }
    }

    fn lookup(&self) -> &Lookup {
        self.lookup.get_or_init(|| {
            let mut lookup = Lookup::default();
            for (i, op) in self.operations.iter().enumerate() {
                if let Some(id) = &op.operation_id {
                    lookup.by_id.entry(id.clone()).or_insert(i);
                }
                lookup
                    .by_route
                    .entry((op.method, op.path.clone()))
                    .or_insert(i);
            }
            lookup
        })
    }

    fn by_id(&self, name: &str) -> Option<&BaseOperation> {
        let i = self.lookup().by_id.get(name.trim())?;
        self.operations.get(*i)
    }

    fn by_route(&self, name: &str) -> Option<&BaseOperation> {
        let (method, path) = name.trim().split_once(char::is_whitespace)?;
        let method = METHODS.iter().find(|m| m.eq_ignore_ascii_case(method))?;
        let i = self
            .lookup()
            .by_route
            .get(&(*method, path.trim().to_string()))?;
        self.operations.get(*i)
    }

    /// The value at a JSON pointer of the document.
    pub fn get(&self, pointer: &str) -> Option<&Value> {
        self.root.pointer(pointer)
    }

    /// The path item of `path` (a `paths` key as written), if it is a mapping.
    pub(crate) fn path_item(&self, path: &str) -> Option<&Map<String, Value>> {
        self.root.get("paths")?.get(path)?.as_object()
    }

    /// The value a local reference (`#/components/…`) points at, if it resolves.
    pub fn resolve(&self, reference: &str) -> Option<&Value> {
        resolve_local(self.root.as_object()?, reference)
    }

    /// Where the node at `pointer` is: in the file it was copied from (a multi-file
    /// document's spans are offset by the files before it: `SourceFile::start`), the
    /// node itself, else its nearest ancestor that exists in the text, else the start
    /// of that file.
    pub fn span(&self, pointer: &str) -> Span {
        let (file, in_file) = self.place(pointer);
        let source = &self.files[file];
        match source.spans.locate(&source.text, &in_file) {
            Some((offset, len)) => Span::from((source.start + offset, len)),
            None => Span::from((source.start, 0)),
        }
    }

    /// The file a pointer of the bundled document is in, and its pointer there.
    fn place(&self, pointer: &str) -> (usize, String) {
        if self.mounts.is_empty() {
            return (0, pointer.to_string());
        }
        let mut prefix = pointer;
        loop {
            if let Some((file, at)) = self.mounts.get(prefix) {
                return (*file, format!("{at}{}", &pointer[prefix.len()..]));
            }
            match prefix.rfind('/') {
                Some(i) => prefix = &prefix[..i],
                None => return (0, pointer.to_string()),
            }
        }
    }

    /// Why the reference at `pointer` (of a `$ref` value, or of a discriminator
    /// mapping's value) was left as written, when it names another file.
    pub(crate) fn ref_problem(&self, pointer: &str) -> Option<&RefProblem> {
        self.problems.get(pointer)
    }

    /// Every file of the document, the root first: (name, text) as findings show them,
    /// spans into file `k` offset as `span` offsets them.
    pub fn files(&self) -> Vec<(String, Arc<String>)> {
        self.files
            .iter()
            .map(|f| (f.name.clone(), f.text.clone()))
            .collect()
    }

    /// The bytes of every file of the document together.
    pub(crate) fn total_bytes(&self) -> usize {
        self.files.iter().map(|f| f.text.len()).sum()
    }

    /// Every file read besides the root (for `--watch`), with what each read gave.
    pub fn reads(&self) -> &[Read] {
        &self.reads
    }
}

/// How a document is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Syntax {
    Json,
    Yaml,
    /// JSON if it parses as JSON, else YAML.
    Either,
}

impl Syntax {
    #[expect(
        clippy::case_sensitive_file_extension_comparisons,
        reason = "`lower` is the name lower-cased"
    )]
    fn of(name: &str, text: &str) -> Syntax {
        let lower = name.to_ascii_lowercase();
        if lower.ends_with(".json") {
            Syntax::Json
        } else if lower.ends_with(".yaml") || lower.ends_with(".yml") {
            Syntax::Yaml
        } else if text
            .trim_start_matches('\u{feff}')
            .trim_start()
            .starts_with('{')
        {
            Syntax::Either
        } else {
            Syntax::Yaml
        }
    }
}

/// Characters of a parser's message kept at most (it may quote the document).
const MESSAGE_CHARS: usize = 200;

/// The nesting `serde_json` allows (its recursion limit).
const JSON_DEPTH: usize = 128;

/// A JSON document → its value in the order written. A UTF-8 byte order mark is
/// skipped (editors on Windows write one; YAML skips it too), and a key repeated in one
/// object is refused, as YAML refuses it: with last-wins, a second `paths` would expose
/// operations a reviewer reading the first one does not see.
fn parse_json(text: &str) -> Result<Value, Box<Diagnostic>> {
    let bom = if text.starts_with('\u{feff}') { 3 } else { 0 };
    let body = &text[bom..];
    let mut de = serde_json::Deserializer::from_str(body);
    let parsed =
        serde::Deserialize::deserialize(&mut de).and_then(|Strict(value)| de.end().map(|()| value));
    parsed.map_err(|e| {
        let at = bom + json_offset(body, e.line(), e.column());
        let message = strip_position(&e.to_string());
        let (message, span) = if message.starts_with(DUPLICATE) {
            (message, key_before(text, at))
        } else if message.starts_with("recursion limit exceeded") {
            (
                format!(
                    "it nests deeper than {JSON_DEPTH} levels, the most connectorgen reads in a JSON document; no API needs that many: move deep schemas into `components` and refer to them with `$ref`"
                ),
                Span::from((at, 0)),
            )
        } else {
            (message, Span::from((at, 0)))
        };
        Box::new(Diagnostic::BaseSyntax {
            message: crate::terminal::clip(&message, MESSAGE_CHARS).into_owned(),
            span,
        })
    })
}

/// A YAML document → its value, with the manifest's parser settings and budgets.
fn parse_yaml(text: &str) -> Result<Value, Box<Diagnostic>> {
    crate::manifest::parse_value(text).map_err(|d| {
        let (message, span) = match *d {
            Diagnostic::YamlSyntax { message, span }
            | Diagnostic::WrongType { message, span, .. }
            | Diagnostic::YamlLimit { message, span } => (message, span),
            Diagnostic::DuplicateKey { key, span } => (format!("{DUPLICATE}`{key}`"), span),
            other => return Box::new(other),
        };
        Box::new(Diagnostic::BaseSyntax {
            message: crate::terminal::clip(&message, MESSAGE_CHARS).into_owned(),
            span,
        })
    })
}

const DUPLICATE: &str = "duplicate key ";

/// A JSON value, refusing a key repeated within an object.
struct Strict(Value);

impl<'de> serde::Deserialize<'de> for Strict {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(StrictVisitor).map(Strict)
    }
}

struct StrictVisitor;

impl<'de> serde::de::Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(Strict(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if object.contains_key(&key) {
                // Raised before the value is read, so the position is the key's end.
                return Err(serde::de::Error::custom(format!(
                    "{DUPLICATE}`{}`",
                    crate::terminal::clip(&key, 100)
                )));
            }
            let Strict(value) = map.next_value()?;
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

/// The byte offset `serde_json`'s line and column (1-based, in bytes) stand for.
fn json_offset(text: &str, line: usize, column: usize) -> usize {
    let start: usize = text
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum();
    let mut at = (start + column.saturating_sub(1)).min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// The span of the JSON string ending at byte `end` (its closing quote), from its
/// opening quote; a point at `end` when there is none.
fn key_before(text: &str, end: usize) -> Span {
    let bytes = text.as_bytes();
    if bytes.get(end) != Some(&b'"') {
        return Span::from((end, 0));
    }
    let mut i = end;
    while i > 0 {
        i -= 1;
        if bytes[i] == b'"' {
            let escapes = bytes[..i].iter().rev().take_while(|&&b| b == b'\\').count();
            if escapes % 2 == 0 {
                return Span::from((i, end + 1 - i));
            }
        }
    }
    Span::from((end, 0))
}

/// Every operation of `paths`, in document order.
fn index(root: &Value) -> Vec<BaseOperation> {
    let Some(paths) = root.get("paths").and_then(Value::as_object) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (path, item) in paths {
        let Some(item) = item.as_object() else {
            continue;
        };
        for (key, op) in item {
            let Some(method) = METHODS.iter().find(|m| **m == key) else {
                continue;
            };
            out.push(BaseOperation {
                path: path.clone(),
                method,
                operation_id: op
                    .get("operationId")
                    .and_then(Value::as_str)
                    .map(str::to_string),
            });
        }
    }
    out
}

/// The 3.2-only operations of `paths` (`query`, `additionalOperations`): (route,
/// operationId, pointer) for each, in document order.
fn index_32(root: &Value) -> Vec<(String, Option<String>, String)> {
    let Some(paths) = root.get("paths").and_then(Value::as_object) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let id = |op: &Value| {
        op.get("operationId")
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    for (path, item) in paths {
        let at = format!("/paths/{}", escape(path));
        if let Some(op) = item.get("query") {
            out.push((format!("QUERY {path}"), id(op), format!("{at}/query")));
        }
        for (method, op) in item
            .get("additionalOperations")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            out.push((
                format!("{method} {path}"),
                id(op),
                format!("{at}/additionalOperations/{}", escape(method)),
            ));
        }
    }
    out
}

/// Characters of the document a message quotes at most: the document may be any file
/// a path led to, and machine formats print messages whole.
const QUOTED_CHARS: usize = 100;

/// A value for a message: strings without quotes, anything else as JSON; clipped.
fn show(v: &Value) -> String {
    let text = match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    crate::terminal::clip(&text, QUOTED_CHARS).into_owned()
}

/// `serde_json`'s message without its " at line 3 column 7" (the label shows the place).
fn strip_position(message: &str) -> String {
    match message.find(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}

/// The Operation Objects' HTTP parts that a path item may hold for all its operations.
pub(crate) fn path_item_shared(item: &Map<String, Value>) -> Map<String, Value> {
    // Only what a 3.1 Path Item Object may hold besides its operations: any other key (a
    // typo, a 3.2 `query` or `additionalOperations`) would make openapi.json invalid.
    const SHARED: [&str; 5] = ["$ref", "summary", "description", "servers", "parameters"];
    item.iter()
        .filter(|(k, _)| SHARED.contains(&k.as_str()) || k.starts_with("x-"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use miette::Diagnostic as _;

    fn base(name: &str, text: &str) -> Base {
        Base::parse(name, Arc::new(text.to_string())).unwrap()
    }

    /// Found by fuzzing: a path item key that is neither an operation nor a shared field
    /// was copied into openapi.json, which the OpenAPI 3.1 schema refuses.
    #[test]
    fn path_items_share_only_what_openapi_defines() {
        let item = serde_json::json!({
            "get": {}, "summary": "s", "parameters": [], "servers": [], "x-a": 1,
            "fetch": {}, "query": {}, "additionalOperations": {}
        });
        let shared = path_item_shared(item.as_object().unwrap());
        let keys: Vec<&str> = shared.keys().map(String::as_str).collect();
        assert_eq!(keys, ["summary", "parameters", "servers", "x-a"]);
    }

    #[test]
    fn yaml_and_json_read_alike_and_index_in_order() {
        let yaml = "openapi: 3.1.0\ninfo: {title: T, version: '1'}\npaths:\n  /a/{id}:\n    post: {operationId: a.create, responses: {201: {description: ok}}}\n    get: {responses: {'200': {description: ok}}}\n";
        let b = base("api.yaml", yaml);
        assert_eq!(b.version, Version::V31);
        let routes: Vec<String> = b.operations.iter().map(BaseOperation::route).collect();
        assert_eq!(routes, ["POST /a/{id}", "GET /a/{id}"]);
        assert_eq!(b.find("a.create").unwrap().method, "post");
        assert_eq!(b.find("get /a/{id}").unwrap().method, "get");
        assert!(b.find("GET /a/{other}").is_none());
        assert!(b.find("FETCH /a/{id}").is_none());
        assert_eq!(b.find("  a.create ").unwrap().method, "post");
        // A repeated operationId names its first operation; the others only by route.
        let twice = "openapi: 3.1.0\npaths:\n  /a:\n    get: {operationId: x}\n    put: {operationId: x}\n  /b:\n    post: {operationId: GET /a}\n";
        let t = base("t.yaml", twice);
        assert_eq!(t.find("x").unwrap().method, "get");
        assert_eq!(t.find("PUT /a").unwrap().method, "put");
        // An operationId spelled as another operation's route names neither.
        assert!(t.find("GET /a").is_none());
        let (by_id, by_route) = t.ambiguous("GET /a").unwrap();
        assert_eq!(
            (by_id.route(), by_route.route()),
            ("POST /b".into(), "GET /a".into())
        );
        assert!(t.ambiguous("POST /b").is_none() && t.ambiguous("x").is_none());
        // A bare YAML number as a key is the status code text.
        assert!(b.get("/paths/~1a~1{id}/post/responses/201").is_some());
        let json = serde_json::to_string(&b.root).unwrap();
        let j = base("api.json", &json);
        assert_eq!(j.root, b.root);
    }

    #[test]
    fn pointers_are_located_in_yaml_and_json() {
        let yaml = "openapi: 3.0.3\npaths:\n  /a:\n    get:\n      responses:\n        '200': {$ref: '#/nope'}\n";
        let b = base("api.yaml", yaml);
        let at = b.span("/paths/~1a/get/responses/200/$ref");
        assert_eq!(&yaml[at.offset()..at.offset() + at.len()], "'#/nope'");
        let json = "{\n  \"openapi\": \"3.0.3\",\n  \"paths\": {\"/a\": {\"get\": {\"x\": [1, {\"y\": true}]}}}\n}";
        let j = base("api.json", json);
        let at = j.span("/paths/~1a/get/x/1/y");
        assert_eq!(&json[at.offset()..at.offset() + at.len()], "true");
        // A pointer that does not exist falls back to its nearest ancestor.
        let at = j.span("/paths/~1a/get/missing");
        assert!(json[at.offset()..].starts_with("{\"x\""));
    }

    const SMALL: &str = r#"{"openapi": "3.1.0", "info": {"title": "T", "version": "1"}, "paths": {"/a": {"get": {"operationId": "getA"}}}}"#;

    /// Issue 21, defect 19: a JSON document with a UTF-8 byte order mark was refused
    /// with "expected value" at 1:1; YAML skipped it. Both skip it now.
    #[test]
    fn a_byte_order_mark_is_skipped_in_json_as_in_yaml() {
        let with_bom = format!("\u{feff}{SMALL}");
        let b = base("api.json", &with_bom);
        assert_eq!(b.find("getA").unwrap().path, "/a");
        // Positions still point into the text as it is, mark included.
        let broken = "\u{feff}{\"openapi\": }".to_string();
        let err = Base::parse("api.json", Arc::new(broken.clone())).unwrap_err();
        let at = err.labels().unwrap().next().unwrap().offset();
        assert_eq!(&broken[at..], "}", "{err}");
        let yaml = base("api.yaml", "\u{feff}openapi: 3.1.0\npaths: {}\n");
        assert_eq!(yaml.version, Version::V31);
    }

    /// Issue 21, defect 20: a key repeated in a JSON object was last-wins (a second
    /// `paths` exposed operations a reviewer reading the first did not see); it is
    /// refused as in YAML, pointing at the second key.
    #[test]
    fn a_repeated_json_key_is_refused_at_the_second_one() {
        let text = "{\"openapi\": \"3.1.0\",\n \"paths\": {\"/a\": {}},\n \"paths\": {\"/b\": {}}}";
        let err = Base::parse("api.json", Arc::new(text.to_string())).unwrap_err();
        assert!(err.to_string().contains("duplicate key `paths`"), "{err}");
        let label = err.labels().unwrap().next().unwrap();
        assert_eq!(label.offset(), text.rfind("\"paths\"").unwrap());
        assert_eq!(label.len(), "\"paths\"".len());
        // Deep inside, with an escaped quote in the key, and in YAML the same.
        let nested = r#"{"openapi": "3.1.0", "paths": {"/a": {"get": {"x\"y": 1, "x\"y": 2}}}}"#;
        let err = Base::parse("api.json", Arc::new(nested.to_string())).unwrap_err();
        let label = err.labels().unwrap().next().unwrap();
        assert_eq!(&nested[label.offset()..][..label.len()], r#""x\"y""#);
        let yaml = "openapi: 3.1.0\npaths: {}\npaths: {}\n";
        let err = Base::parse("api.yaml", Arc::new(yaml.to_string())).unwrap_err();
        assert!(err.to_string().contains("duplicate key `paths`"), "{err}");
        // Equal keys in different objects are fine.
        base(
            "api.json",
            r#"{"openapi": "3.1.0", "a": {"k": 1}, "b": {"k": 2}}"#,
        );
    }

    /// Issue 21, defect 21: a flow-style YAML document starting with `{` was read as
    /// JSON and refused. A `.yaml`/`.yml` name is always YAML; a name that says neither
    /// is read as JSON when that parses, else as YAML.
    #[test]
    fn flow_style_yaml_is_read_as_yaml() {
        let flow = "{openapi: 3.1.0, info: {title: T, version: '1'}, paths: {/a: {get: {operationId: getA}}}}\n";
        for name in ["api.yaml", "API.YML", "api", "api.txt"] {
            let b = base(name, flow);
            assert_eq!(b.find("getA").unwrap().path, "/a", "{name}");
        }
        assert!(Base::parse("api.json", Arc::new(flow.to_string())).is_err());
        // A JSON document without a `.json` name is still JSON (and duplicate-checked).
        assert_eq!(base("api", SMALL).root, base("api.json", SMALL).root);
    }

    /// Issue 21, defect 23: JSON nesting past `serde_json`'s limit said only "recursion
    /// limit exceeded"; the message gives the limit and what to do.
    #[test]
    fn json_nesting_past_the_limit_names_it() {
        let deep = format!(
            "{{\"openapi\": \"3.1.0\", \"x\": {}{}}}",
            "[".repeat(200),
            "]".repeat(200)
        );
        let err = Base::parse("api.json", Arc::new(deep)).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("deeper than 128 levels") && text.contains("`$ref`"),
            "{text}"
        );
        // Within the limit is fine.
        let ok = format!(
            "{{\"openapi\": \"3.1.0\", \"x\": {}{}}}",
            "[".repeat(100),
            "]".repeat(100)
        );
        base("api.json", &ok);
    }

    #[test]
    fn not_openapi_3_is_refused() {
        for (text, found) in [
            ("swagger: '2.0'\n", "Swagger 2.0"),
            ("openapi: 4.0.0\n", "OpenAPI 4.0.0"),
            ("info: {}\n", "no `openapi` version"),
            ("[1, 2]\n", "not a mapping"),
        ] {
            let err = Base::parse("a.yaml", Arc::new(text.to_string())).unwrap_err();
            assert!(err.to_string().contains(found), "{text}: {err}");
        }
        let err = Base::parse("a.json", Arc::new("{\"openapi\": ".to_string())).unwrap_err();
        assert!(err.to_string().contains("EOF"), "{err}");
    }
}
