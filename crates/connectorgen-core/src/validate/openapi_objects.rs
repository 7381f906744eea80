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

mod objects;
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
    w.object("", root, "OpenAPI", objects::document);
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
    w.object("", operation, "Operation", objects::operation);
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
                format!("{} is a mapping, not {}", an_object(what), a_type(other)),
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
                self.kind(
                    at,
                    key,
                    value,
                    Kind::Map("Media Type", objects::media_type, refs),
                );
            }
            Kind::Text | Kind::Bool => {}
        }
    }

    /// Each of `names` is present in `map`.
    fn require(&mut self, at: &str, map: &Map<String, Value>, what: &str, names: &[&str]) {
        for name in names {
            if !map.contains_key(*name) {
                self.problem(at, format!("{} requires `{name}`", an_object(what)));
            }
        }
    }

    /// At most one of `a` and `b`.
    fn not_both(&mut self, at: &str, map: &Map<String, Value>, what: &str, a: &str, b: &str) {
        if map.contains_key(a) && map.contains_key(b) {
            self.problem(
                at,
                format!("{} has `{a}` or `{b}`, not both", an_object(what)),
            );
        }
    }
}

/// An object's name with its article: "a Response Object", "an Example Object".
fn an_object(what: &str) -> String {
    crate::english::with_article(&format!("{what} Object"))
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
