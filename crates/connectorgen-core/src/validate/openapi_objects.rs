//! OpenAPI's objects, checked against the fields the specification lists for each
//! version (3.0, 3.1, 3.2).
//!
//! Takes: a whole document (`document`: the exposed part of a base document) or one
//! Operation Object (`operation`: an inline operation with its `openapi:` fragment merged
//! in), the version it is written in, and how many problems to keep. Returns: the
//! problems, each a JSON pointer into what was given and a sentence saying what is
//! wrong there, in document order, at most that many.
//!
//! What it checks, object by object (the tables below, written by the project from the
//! specification's field tables; connectorgen carries no copy of the official OpenAPI
//! JSON Schemas): that each object is a mapping; that each key is one of its fixed fields
//! in that version or an `x-` extension; each field's JSON type; the required fields; the
//! values a field may take (`in`, `style`, a security scheme's `type`); a path parameter
//! being required; `schema` or `content`, not both; `example` or `examples`, not both;
//! status codes and component names; a Schema Object of 3.0 against the keywords 3.0
//! allows (`schema.rs`), and one of 3.1 or 3.2, when asked, against the JSON Schema
//! 2020-12 meta-schema the `jsonschema` crate ships.
//!
//! What it leaves out (a validator may still refuse it): the syntax of URLs, emails and
//! runtime expressions, whether a `$ref` resolves (`base.rs` refuses what does not, and
//! what it points at is checked there if the document keeps it), a security
//! requirement naming a scheme that is declared, and the 3.1 and 3.2 Schema Objects'
//! OpenAPI vocabulary (`discriminator`, `xml`).
//! Must never: follow a `$ref`, stop at the first problem, or quote a value (the
//! findings quote only keys and pointers, so a message stays short).

mod schema;

use serde_json::{Map, Value};

use crate::diagnostics::suggest;
use crate::model::{OpenapiVersion, escape};

/// A place that breaks the structure of its version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(in crate::validate) struct Problem {
    /// A JSON pointer into the value given.
    pub pointer: String,
    /// What is wrong there, as a sentence without a final period.
    pub message: String,
    /// A Schema Object refused by the JSON Schema 2020-12 meta-schema (the rest are
    /// OpenAPI's own rules).
    pub meta_schema: bool,
}

/// The problems of a whole document written in `version`; its 3.1 or 3.2 Schema Objects
/// are checked against the JSON Schema meta-schema too.
pub(in crate::validate) fn document(
    version: OpenapiVersion,
    root: &Value,
    limit: usize,
) -> Vec<Problem> {
    let mut w = Walk::new(version, limit, true);
    w.object("", root, "OpenAPI", document_object);
    w.problems
}

/// The problems of one Operation Object written in `version`, Schema Objects checked
/// only for their type (the caller checks them against the meta-schema).
pub(in crate::validate) fn operation(
    version: OpenapiVersion,
    operation: &Value,
    limit: usize,
) -> Vec<Problem> {
    let mut w = Walk::new(version, limit, false);
    w.object("", operation, "Operation", operation_object);
    w.problems
}

/// What checks an object's mapping, once it is known to be one.
type Visit = fn(&mut Walk, &str, &Map<String, Value>);

/// What a field holds.
#[derive(Clone, Copy)]
enum Kind {
    /// Anything (an example, a default).
    Any,
    Text,
    Bool,
    /// A list of strings.
    Texts,
    /// A mapping of strings to strings.
    TextMap,
    /// One of these strings.
    OneOf(&'static [&'static str]),
    /// One object of this kind (its name, as the specification names it).
    One(&'static str, Visit),
    /// One object, or a Reference Object.
    RefOr(&'static str, Visit),
    /// A list of objects (or references, with `true`).
    List(&'static str, Visit, bool),
    /// A mapping of names to objects (or references, with `true`).
    Map(&'static str, Visit, bool),
    /// A Schema Object.
    Schema,
    /// A mapping of names to Schema Objects.
    Schemas,
    /// A mapping of media types to Media Type Objects (or, in 3.2, references to them).
    Content,
}

/// The versions a field belongs to.
#[derive(Clone, Copy, PartialEq)]
enum In {
    All,
    From31,
    From32,
    Before32,
}

impl In {
    fn holds(self, version: OpenapiVersion) -> bool {
        match self {
            In::All => true,
            In::From31 => version != OpenapiVersion::V30,
            In::From32 => version == OpenapiVersion::V32,
            In::Before32 => version != OpenapiVersion::V32,
        }
    }
}

/// One fixed field: its name, what it holds, the versions it is in.
type Field = (&'static str, Kind, In);

/// The walk and what it found.
struct Walk {
    version: OpenapiVersion,
    limit: usize,
    meta_schemas: bool,
    problems: Vec<Problem>,
}

impl Walk {
    fn new(version: OpenapiVersion, limit: usize, meta_schemas: bool) -> Self {
        Walk {
            version,
            limit,
            meta_schemas,
            problems: Vec::new(),
        }
    }

    fn full(&self) -> bool {
        self.problems.len() >= self.limit
    }

    fn problem(&mut self, at: &str, message: String) {
        if !self.full() {
            self.problems.push(Problem {
                pointer: at.to_string(),
                message,
                meta_schema: false,
            });
        }
    }

    fn version_name(&self) -> &'static str {
        match self.version {
            OpenapiVersion::V30 => "3.0",
            OpenapiVersion::V31 => "3.1",
            OpenapiVersion::V32 => "3.2",
        }
    }

    /// `value` must be a mapping; then `visit` checks it.
    fn object(&mut self, at: &str, value: &Value, what: &str, visit: Visit) {
        if self.full() {
            return;
        }
        match value {
            Value::Object(map) => visit(self, at, map),
            other => self.problem(
                at,
                format!(
                    "{} {what} Object is a mapping, not {}",
                    article(what),
                    a_type(other)
                ),
            ),
        }
    }

    /// A Reference Object (a mapping with `$ref`), or the object itself.
    fn ref_or(&mut self, at: &str, value: &Value, what: &str, visit: Visit) {
        match value.get("$ref") {
            Some(Value::String(_)) => self.reference(at, value),
            Some(_) => self.problem(&format!("{at}/$ref"), "`$ref` is a string".to_string()),
            None => self.object(at, value, what, visit),
        }
    }

    /// A Reference Object: 3.1 and 3.2 give it a `summary` and a `description`; what
    /// else it holds is ignored, as the specification says.
    fn reference(&mut self, at: &str, value: &Value) {
        if self.version == OpenapiVersion::V30 {
            return;
        }
        for key in ["summary", "description"] {
            if let Some(v) = value.get(key)
                && !v.is_string()
            {
                self.problem(
                    &format!("{at}/{key}"),
                    format!("`{key}` is a string, not {}", a_type(v)),
                );
            }
        }
    }

    /// Each key of `map` is one of `fields` in this version, or an extension; each field
    /// holds what it should.
    fn fields(&mut self, at: &str, map: &Map<String, Value>, what: &str, fields: &[Field]) {
        for (key, value) in map {
            if self.full() {
                return;
            }
            if key.starts_with("x-") {
                continue;
            }
            let here = format!("{at}/{}", escape(key));
            match fields.iter().find(|(name, _, _)| name == key) {
                Some((_, kind, versions)) if versions.holds(self.version) => {
                    self.kind(&here, key, value, *kind);
                }
                Some((_, _, versions)) => {
                    let which = match versions {
                        In::From31 => "only from OpenAPI 3.1 on",
                        In::From32 => "only in OpenAPI 3.2",
                        _ => "only before OpenAPI 3.2",
                    };
                    self.problem(
                        &here,
                        format!("`{key}` is a field of the {what} Object {which}"),
                    );
                }
                None => {
                    let known = fields
                        .iter()
                        .filter(|(_, _, v)| v.holds(self.version))
                        .map(|(name, _, _)| *name);
                    self.problem(
                        &here,
                        format!(
                            "`{key}` is no field of OpenAPI {}'s {what} Object (only `x-` extensions may be added); {}",
                            self.version_name(),
                            suggest(key, known)
                        ),
                    );
                }
            }
        }
    }

    /// `value`, the field `key`, holds what `kind` says.
    fn kind(&mut self, at: &str, key: &str, value: &Value, kind: Kind) {
        let wrong = |want: &str| format!("`{key}` is {want}, not {}", a_type(value));
        match kind {
            Kind::Any => {}
            Kind::Text if !value.is_string() => self.problem(at, wrong("a string")),
            Kind::Bool if !value.is_boolean() => self.problem(at, wrong("true or false")),
            Kind::Texts => match value {
                Value::Array(items) => {
                    for (i, item) in items.iter().enumerate() {
                        if !item.is_string() {
                            self.problem(
                                &format!("{at}/{i}"),
                                format!("each item of `{key}` is a string, not {}", a_type(item)),
                            );
                        }
                    }
                }
                _ => self.problem(at, wrong("a list of strings")),
            },
            Kind::TextMap => match value {
                Value::Object(map) => {
                    for (name, item) in map {
                        if !item.is_string() {
                            self.problem(
                                &format!("{at}/{}", escape(name)),
                                format!("each value of `{key}` is a string, not {}", a_type(item)),
                            );
                        }
                    }
                }
                _ => self.problem(at, wrong("a mapping of strings")),
            },
            Kind::OneOf(allowed) => match value.as_str() {
                Some(s) if allowed.contains(&s) => {}
                Some(s) => self.problem(
                    at,
                    format!(
                        "`{key}: {}` is not allowed here; {}",
                        s.escape_debug(),
                        suggest(s, allowed.iter().copied())
                    ),
                ),
                None => self.problem(at, wrong("a string")),
            },
            Kind::One(what, visit) => self.object(at, value, what, visit),
            Kind::RefOr(what, visit) => self.ref_or(at, value, what, visit),
            Kind::List(what, visit, refs) => match value {
                Value::Array(items) => {
                    for (i, item) in items.iter().enumerate() {
                        let here = format!("{at}/{i}");
                        if refs {
                            self.ref_or(&here, item, what, visit);
                        } else {
                            self.object(&here, item, what, visit);
                        }
                    }
                }
                _ => self.problem(at, wrong(&format!("a list of {what} Objects"))),
            },
            Kind::Map(what, visit, refs) => match value {
                Value::Object(map) => {
                    for (name, item) in map {
                        let here = format!("{at}/{}", escape(name));
                        if refs {
                            self.ref_or(&here, item, what, visit);
                        } else {
                            self.object(&here, item, what, visit);
                        }
                    }
                }
                _ => self.problem(at, wrong(&format!("a mapping of {what} Objects"))),
            },
            Kind::Schema => schema::schema(self, at, value),
            Kind::Schemas => match value {
                Value::Object(map) => {
                    for (name, item) in map {
                        schema::schema(self, &format!("{at}/{}", escape(name)), item);
                    }
                }
                _ => self.problem(at, wrong("a mapping of Schema Objects")),
            },
            Kind::Content => {
                let refs = self.version == OpenapiVersion::V32;
                self.kind(at, key, value, Kind::Map("Media Type", media_type, refs));
            }
            Kind::Text | Kind::Bool => {}
        }
    }

    /// Each of `names` is present in `map`.
    fn require(&mut self, at: &str, map: &Map<String, Value>, what: &str, names: &[&str]) {
        for name in names {
            if !map.contains_key(*name) {
                self.problem(
                    at,
                    format!("{} {what} Object requires `{name}`", article(what)),
                );
            }
        }
    }

    /// At most one of `a` and `b`.
    fn not_both(&mut self, at: &str, map: &Map<String, Value>, what: &str, a: &str, b: &str) {
        if map.contains_key(a) && map.contains_key(b) {
            self.problem(
                at,
                format!(
                    "{} {what} Object has `{a}` or `{b}`, not both",
                    article(what)
                ),
            );
        }
    }
}

/// "a" or "an" before an object's name.
fn article(what: &str) -> &'static str {
    if what.starts_with(['A', 'E', 'I', 'O', 'U']) {
        "an"
    } else {
        "a"
    }
}

/// How a message names the JSON type of a value it refuses.
fn a_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

const METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

fn document_object(w: &mut Walk, at: &str, map: &Map<String, Value>) {
    w.fields(
        at,
        map,
        "OpenAPI",
        &[
            ("openapi", Kind::Text, In::All),
            ("$self", Kind::Text, In::From32),
            ("info", Kind::One("Info", info), In::All),
            ("jsonSchemaDialect", Kind::Text, In::From31),
            ("servers", Kind::List("Server", server, false), In::All),
            ("paths", Kind::One("Paths", paths), In::All),
            (
                "webhooks",
                Kind::Map("Path Item", path_item, true),
                In::From31,
            ),
            ("components", Kind::One("Components", components), In::All),
            (
                "security",
                Kind::List("Security Requirement", security_requirement, false),
                In::All,
            ),
            ("tags", Kind::List("Tag", tag, false), In::All),
            (
                "externalDocs",
                Kind::One("External Documentation", external_docs),
                In::All,
            ),
        ],
    );
    w.require(at, map, "OpenAPI", &["openapi", "info"]);
    if w.version == OpenapiVersion::V30 {
        w.require(at, map, "OpenAPI", &["paths"]);
    } else if !["paths", "components", "webhooks"]
        .iter()
        .any(|k| map.contains_key(*k))
    {
        w.problem(
            at,
            "an OpenAPI document has `paths`, `components` or `webhooks`".to_string(),
        );
    }
}

fn info(w: &mut Walk, at: &str, map: &Map<String, Value>) {
    w.fields(
        at,
        map,
        "Info",
        &[
            ("title", Kind::Text, In::All),
            ("summary", Kind::Text, In::From31),
            ("description", Kind::Text, In::All),
            ("termsOfService", Kind::Text, In::All),
            ("contact", Kind::One("Contact", contact), In::All),
            ("license", Kind::One("License", license), In::All),
            ("version", Kind::Text, In::All),
        ],
    );
    w.require(at, map, "Info", &["title", "version"]);
}

fn contact(w: &mut Walk, at: &str, map: &Map<String, Value>) {
    let fields = [
        ("name", Kind::Text, In::All),
        ("url", Kind::Text, In::All),
        ("email", Kind::Text, In::All),
    ];
    w.fields(at, map, "Contact", &fields);
}

fn license(w: &mut Walk, at: &str, map: &Map<String, Value>) {
    let fields = [
        ("name", Kind::Text, In::All),
        ("identifier", Kind::Text, In::From31),
        ("url", Kind::Text, In::All),
    ];
    w.fields(at, map, "License", &fields);
    w.require(at, map, "License", &["name"]);
    w.not_both(at, map, "License", "identifier", "url");
}

fn server(w: &mut Walk, at: &str, map: &Map<String, Value>) {
    w.fields(
        at,
        map,
        "Server",
        &[
            ("url", Kind::Text, In::All),
            ("description", Kind::Text, In::All),
            ("name", Kind::Text, In::From32),
            (
                "variables",
                Kind::Map("Server Variable", server_variable, false),
                In::All,
            ),
        ],
    );
    w.require(at, map, "Server", &["url"]);
}

fn server_variable(w: &mut Walk, at: &str, map: &Map<String, Value>) {
    let fields = [
        ("enum", Kind::Texts, In::All),
        ("default", Kind::Text, In::All),
        ("description", Kind::Text, In::All),
    ];
    w.fields(at, map, "Server Variable", &fields);
    w.require(at, map, "Server Variable", &["default"]);
    if let Some(Value::Array(values)) = map.get("enum")
        && values.is_empty()
    {
        w.problem(
            &format!("{at}/enum"),
            "a server variable's `enum` lists at least one value".to_string(),
        );
    }
}

fn paths(w: &mut Walk, at: &str, map: &Map<String, Value>) {
    for (path, item) in map {
        let here = format!("{at}/{}", escape(path));
        if path.starts_with("x-") {
            continue;
        }
        if !path.starts_with('/') {
            w.problem(&here, "a path starts with `/`".to_string());
        }
        w.object(&here, item, "Path Item", path_item);
    }
}

fn path_item(w: &mut Walk, at: &str, map: &Map<String, Value>) {
    let mut fields: Vec<Field> = vec![
        ("$ref", Kind::Text, In::All),
        ("summary", Kind::Text, In::All),
        ("description", Kind::Text, In::All),
        ("servers", Kind::List("Server", server, false), In::All),
        (
            "parameters",
            Kind::List("Parameter", parameter, true),
            In::All,
        ),
        (
            "query",
            Kind::One("Operation", operation_object),
            In::From32,
        ),
        (
            "additionalOperations",
            Kind::Map("Operation", operation_object, false),
            In::From32,
        ),
    ];
    fields.extend(
        METHODS
            .iter()
            .map(|m| (*m, Kind::One("Operation", operation_object), In::All)),
    );
    w.fields(at, map, "Path Item", &fields);
}

fn operation_object(w: &mut Walk, at: &str, map: &Map<String, Value>) {
    w.fields(
        at,
        map,
        "Operation",
        &[
            ("tags", Kind::Texts, In::All),
            ("summary", Kind::Text, In::All),
            ("description", Kind::Text, In::All),
            (
                "externalDocs",
                Kind::One("External Documentation", external_docs),
                In::All,
            ),
            ("operationId", Kind::Text, In::All),
            (
                "parameters",
                Kind::List("Parameter", parameter, true),
                In::All,
            ),
            (
                "requestBody",
                Kind::RefOr("Request Body", request_body),
                In::All,
            ),
            ("responses", Kind::One("Responses", responses), In::All),
            ("callbacks", Kind::Map("Callback", callback, true), In::All),
            ("deprecated", Kind::Bool, In::All),
            (
                "security",
                Kind::List("Security Requirement", security_requirement, false),
                In::All,
            ),
            ("servers", Kind::List("Server", server, false), In::All),
        ],
    );
    if w.version == OpenapiVersion::V30 {
        w.require(at, map, "Operation", &["responses"]);
    }
}

/// Where a parameter may be, and the styles each place allows.
fn styles(location: &str, version: OpenapiVersion) -> Option<&'static [&'static str]> {
    Some(match location {
        "path" => &["matrix", "label", "simple"],
        "query" => &["form", "spaceDelimited", "pipeDelimited", "deepObject"],
        "header" => &["simple"],
        "cookie" if version == OpenapiVersion::V32 => &["form", "cookie"],
        "cookie" => &["form"],
        "querystring" if version == OpenapiVersion::V32 => &[],
        _ => return None,
    })
}

fn parameter(w: &mut Walk, at: &str, map: &Map<String, Value>) {
    w.fields(
        at,
        map,
        "Parameter",
        &[
            ("name", Kind::Text, In::All),
            ("in", Kind::Text, In::All),
            ("description", Kind::Text, In::All),
            ("required", Kind::Bool, In::All),
            ("deprecated", Kind::Bool, In::All),
            ("allowEmptyValue", Kind::Bool, In::All),
            ("style", Kind::Text, In::All),
            ("explode", Kind::Bool, In::All),
            ("allowReserved", Kind::Bool, In::All),
            ("schema", Kind::Schema, In::All),
            ("content", Kind::Content, In::All),
            ("example", Kind::Any, In::All),
            ("examples", Kind::Map("Example", example, true), In::All),
        ],
    );
    w.require(at, map, "Parameter", &["name", "in"]);
    let Some(location) = map.get("in").and_then(Value::as_str) else {
        return;
    };
    let Some(allowed) = styles(location, w.version) else {
        let places: &[&str] = if w.version == OpenapiVersion::V32 {
            &["path", "query", "querystring", "header", "cookie"]
        } else {
            &["path", "query", "header", "cookie"]
        };
        w.problem(
            &format!("{at}/in"),
            format!(
                "`in: {}` is no parameter location; {}",
                location.escape_debug(),
                suggest(location, places.iter().copied())
            ),
        );
        return;
    };
    if location == "path" && map.get("required") != Some(&Value::Bool(true)) {
        w.problem(at, "a path parameter must say `required: true`".to_string());
    }
    if let Some(Value::String(style)) = map.get("style")
        && !allowed.contains(&style.as_str())
    {
        w.problem(
            &format!("{at}/style"),
            format!(
                "`style: {}` is not for a {location} parameter; {}",
                style.escape_debug(),
                if allowed.is_empty() {
                    "it takes none".to_string()
                } else {
                    suggest(style, allowed.iter().copied())
                }
            ),
        );
    }
    if location == "querystring" && map.contains_key("schema") {
        w.problem(
            at,
            "a querystring parameter has `content`, not `schema`".to_string(),
        );
    }
    schema_or_content(w, at, map, "Parameter");
    w.not_both(at, map, "Parameter", "example", "examples");
}

/// A parameter or header has a `schema` or a `content` of one media type.
fn schema_or_content(w: &mut Walk, at: &str, map: &Map<String, Value>, what: &str) {
    match (map.get("schema"), map.get("content")) {
        (Some(_), Some(_)) => w.not_both(at, map, what, "schema", "content"),
        (None, None) => w.problem(
            at,
            format!(
                "{} {what} Object requires `schema` or `content`",
                article(what)
            ),
        ),
        (None, Some(Value::Object(content))) if content.len() != 1 => w.problem(
            &format!("{at}/content"),
            format!(
                "the `content` of {} {what} Object holds exactly one media type",
                article(what)
            ),
        ),
        _ => {}
    }
}

fn header(w: &mut Walk, at: &str, map: &Map<String, Value>) {
    w.fields(
        at,
        map,
        "Header",
        &[
            ("description", Kind::Text, In::All),
            ("required", Kind::Bool, In::All),
            ("deprecated", Kind::Bool, In::All),
            ("allowEmptyValue", Kind::Bool, In::Before32),
            ("style", Kind::OneOf(&["simple"]), In::All),
            ("explode", Kind::Bool, In::All),
            ("allowReserved", Kind::Bool, In::Before32),
            ("schema", Kind::Schema, In::All),
            ("content", Kind::Content, In::All),
            ("example", Kind::Any, In::All),
            ("examples", Kind::Map("Example", example, true), In::All),
        ],
    );
    schema_or_content(w, at, map, "Header");
    w.not_both(at, map, "Header", "example", "examples");
}

fn request_body(w: &mut Walk, at: &str, map: &Map<String, Value>) {
    w.fields(
        at,
        map,
        "Request Body",
        &[
            ("description", Kind::Text, In::All),
            ("content", Kind::Content, In::All),
            ("required", Kind::Bool, In::All),
        ],
    );
    w.require(at, map, "Request Body", &["content"]);
}

/// A Media Type Object; a `$ref` to one (which a `content` map may hold) is 3.2's.
fn media_type(w: &mut Walk, at: &str, map: &Map<String, Value>) {
    w.fields(
        at,
        map,
        "Media Type",
        &[
            ("description", Kind::Text, In::From32),
            ("schema", Kind::Schema, In::All),
            ("itemSchema", Kind::Schema, In::From32),
            ("example", Kind::Any, In::All),
            ("examples", Kind::Map("Example", example, true), In::All),
            ("encoding", Kind::Map("Encoding", encoding, false), In::All),
            (
                "prefixEncoding",
                Kind::List("Encoding", encoding, false),
                In::From32,
            ),
            ("itemEncoding", Kind::One("Encoding", encoding), In::From32),
        ],
    );
    w.not_both(at, map, "Media Type", "example", "examples");
}

fn encoding(w: &mut Walk, at: &str, map: &Map<String, Value>) {
    w.fields(
        at,
        map,
        "Encoding",
        &[
            ("contentType", Kind::Text, In::All),
            ("headers", Kind::Map("Header", header, true), In::All),
            (
                "style",
                Kind::OneOf(&["form", "spaceDelimited", "pipeDelimited", "deepObject"]),
                In::All,
            ),
            ("explode", Kind::Bool, In::All),
            ("allowReserved", Kind::Bool, In::All),
            (
                "encoding",
                Kind::Map("Encoding", encoding, false),
                In::From32,
            ),
            (
                "prefixEncoding",
                Kind::List("Encoding", encoding, false),
                In::From32,
            ),
            ("itemEncoding", Kind::One("Encoding", encoding), In::From32),
        ],
    );
}

fn responses(w: &mut Walk, at: &str, map: &Map<String, Value>) {
    let mut listed = 0;
    for (status, response) in map {
        if status.starts_with("x-") {
            continue;
        }
        listed += 1;
        let here = format!("{at}/{}", escape(status));
        if !(status == "default" || is_status(status)) {
            w.problem(
                &here,
                format!(
                    "`{}` is not a status code (100 to 599, or 1XX to 5XX) or `default`",
                    status.escape_debug()
                ),
            );
        }
        w.ref_or(&here, response, "Response", response_object);
    }
    if listed == 0 {
        w.problem(
            at,
            "a Responses Object lists at least one response".to_string(),
        );
    }
}

/// `200`, `404`, `2XX`: three characters, the first 1 to 5.
fn is_status(status: &str) -> bool {
    let b = status.as_bytes();
    b.len() == 3
        && (b'1'..=b'5').contains(&b[0])
        && (b[1..].iter().all(u8::is_ascii_digit) || &b[1..] == b"XX")
}

fn response_object(w: &mut Walk, at: &str, map: &Map<String, Value>) {
    w.fields(
        at,
        map,
        "Response",
        &[
            ("summary", Kind::Text, In::From32),
            ("description", Kind::Text, In::All),
            ("headers", Kind::Map("Header", header, true), In::All),
            ("content", Kind::Content, In::All),
            ("links", Kind::Map("Link", link, true), In::All),
        ],
    );
    if w.version != OpenapiVersion::V32 {
        w.require(at, map, "Response", &["description"]);
    }
}

fn callback(w: &mut Walk, at: &str, map: &Map<String, Value>) {
    for (expression, item) in map {
        if !expression.starts_with("x-") {
            let here = format!("{at}/{}", escape(expression));
            w.ref_or(&here, item, "Path Item", path_item);
        }
    }
}

fn example(w: &mut Walk, at: &str, map: &Map<String, Value>) {
    w.fields(
        at,
        map,
        "Example",
        &[
            ("summary", Kind::Text, In::All),
            ("description", Kind::Text, In::All),
            ("value", Kind::Any, In::All),
            ("dataValue", Kind::Any, In::From32),
            ("serializedValue", Kind::Text, In::From32),
            ("externalValue", Kind::Text, In::All),
        ],
    );
    w.not_both(at, map, "Example", "value", "externalValue");
}

fn link(w: &mut Walk, at: &str, map: &Map<String, Value>) {
    w.fields(
        at,
        map,
        "Link",
        &[
            ("operationRef", Kind::Text, In::All),
            ("operationId", Kind::Text, In::All),
            ("parameters", Kind::Any, In::All),
            ("requestBody", Kind::Any, In::All),
            ("description", Kind::Text, In::All),
            ("server", Kind::One("Server", server), In::All),
        ],
    );
    w.not_both(at, map, "Link", "operationRef", "operationId");
}

fn tag(w: &mut Walk, at: &str, map: &Map<String, Value>) {
    w.fields(
        at,
        map,
        "Tag",
        &[
            ("name", Kind::Text, In::All),
            ("summary", Kind::Text, In::From32),
            ("description", Kind::Text, In::All),
            (
                "externalDocs",
                Kind::One("External Documentation", external_docs),
                In::All,
            ),
            ("parent", Kind::Text, In::From32),
            ("kind", Kind::Text, In::From32),
        ],
    );
    w.require(at, map, "Tag", &["name"]);
}

fn external_docs(w: &mut Walk, at: &str, map: &Map<String, Value>) {
    let fields = [
        ("description", Kind::Text, In::All),
        ("url", Kind::Text, In::All),
    ];
    w.fields(at, map, "External Documentation", &fields);
    w.require(at, map, "External Documentation", &["url"]);
}

/// Scheme names to the scopes each needs: a list of strings each.
fn security_requirement(w: &mut Walk, at: &str, map: &Map<String, Value>) {
    for (name, scopes) in map {
        w.kind(&format!("{at}/{}", escape(name)), name, scopes, Kind::Texts);
    }
}

fn components(w: &mut Walk, at: &str, map: &Map<String, Value>) {
    w.fields(
        at,
        map,
        "Components",
        &[
            ("schemas", Kind::Schemas, In::All),
            (
                "responses",
                Kind::Map("Response", response_object, true),
                In::All,
            ),
            (
                "parameters",
                Kind::Map("Parameter", parameter, true),
                In::All,
            ),
            ("examples", Kind::Map("Example", example, true), In::All),
            (
                "requestBodies",
                Kind::Map("Request Body", request_body, true),
                In::All,
            ),
            ("headers", Kind::Map("Header", header, true), In::All),
            (
                "securitySchemes",
                Kind::Map("Security Scheme", security_scheme, true),
                In::All,
            ),
            ("links", Kind::Map("Link", link, true), In::All),
            ("callbacks", Kind::Map("Callback", callback, true), In::All),
            (
                "pathItems",
                Kind::Map("Path Item", path_item, true),
                In::From31,
            ),
            (
                "mediaTypes",
                Kind::Map("Media Type", media_type, true),
                In::From32,
            ),
        ],
    );
    // A component's name is what a reference ends with.
    for (group, entries) in map {
        let Value::Object(entries) = entries else {
            continue;
        };
        if group.starts_with("x-") {
            continue;
        }
        for name in entries.keys() {
            let usable = !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
            if !usable {
                w.problem(
                    &format!("{at}/{}/{}", escape(group), escape(name)),
                    format!(
                        "`{}` is no component name: letters, digits, `.`, `_` and `-` only",
                        name.escape_debug()
                    ),
                );
            }
        }
    }
}

fn security_scheme(w: &mut Walk, at: &str, map: &Map<String, Value>) {
    let types: &[&str] = if w.version == OpenapiVersion::V30 {
        &["apiKey", "http", "oauth2", "openIdConnect"]
    } else {
        &["apiKey", "http", "mutualTLS", "oauth2", "openIdConnect"]
    };
    let common = [
        ("type", Kind::OneOf(types), In::All),
        ("description", Kind::Text, In::All),
        ("deprecated", Kind::Bool, In::From32),
    ];
    let (own, required): (&[Field], &[&str]) = match map.get("type").and_then(Value::as_str) {
        Some("apiKey") => (
            &[
                ("name", Kind::Text, In::All),
                ("in", Kind::OneOf(&["query", "header", "cookie"]), In::All),
            ],
            &["name", "in"],
        ),
        Some("http") => (
            &[
                ("scheme", Kind::Text, In::All),
                ("bearerFormat", Kind::Text, In::All),
            ],
            &["scheme"],
        ),
        Some("oauth2") => (
            &[
                ("flows", Kind::One("OAuth Flows", oauth_flows), In::All),
                ("oauth2MetadataUrl", Kind::Text, In::From32),
            ],
            &["flows"],
        ),
        Some("openIdConnect") => (
            &[("openIdConnectUrl", Kind::Text, In::All)],
            &["openIdConnectUrl"],
        ),
        _ => (&[], &[]),
    };
    let fields: Vec<Field> = common.iter().chain(own).copied().collect();
    w.fields(at, map, "Security Scheme", &fields);
    w.require(at, map, "Security Scheme", &["type"]);
    w.require(at, map, "Security Scheme", required);
}

fn oauth_flows(w: &mut Walk, at: &str, map: &Map<String, Value>) {
    w.fields(
        at,
        map,
        "OAuth Flows",
        &[
            ("implicit", Kind::One("OAuth Flow", implicit_flow), In::All),
            ("password", Kind::One("OAuth Flow", token_flow), In::All),
            (
                "clientCredentials",
                Kind::One("OAuth Flow", token_flow),
                In::All,
            ),
            (
                "authorizationCode",
                Kind::One("OAuth Flow", code_flow),
                In::All,
            ),
            (
                "deviceAuthorization",
                Kind::One("OAuth Flow", device_flow),
                In::From32,
            ),
        ],
    );
}

/// An OAuth Flow Object, whose required URLs depend on the flow.
fn oauth_flow(w: &mut Walk, at: &str, map: &Map<String, Value>, required: &[&str]) {
    w.fields(
        at,
        map,
        "OAuth Flow",
        &[
            ("authorizationUrl", Kind::Text, In::All),
            ("deviceAuthorizationUrl", Kind::Text, In::From32),
            ("tokenUrl", Kind::Text, In::All),
            ("refreshUrl", Kind::Text, In::All),
            ("scopes", Kind::TextMap, In::All),
        ],
    );
    w.require(at, map, "OAuth Flow", required);
}

fn implicit_flow(w: &mut Walk, at: &str, map: &Map<String, Value>) {
    oauth_flow(w, at, map, &["authorizationUrl", "scopes"]);
}

fn token_flow(w: &mut Walk, at: &str, map: &Map<String, Value>) {
    oauth_flow(w, at, map, &["tokenUrl", "scopes"]);
}

fn code_flow(w: &mut Walk, at: &str, map: &Map<String, Value>) {
    oauth_flow(w, at, map, &["authorizationUrl", "tokenUrl", "scopes"]);
}

fn device_flow(w: &mut Walk, at: &str, map: &Map<String, Value>) {
    oauth_flow(
        w,
        at,
        map,
        &["deviceAuthorizationUrl", "tokenUrl", "scopes"],
    );
}
