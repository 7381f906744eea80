//! A tool's arguments and the request mapping of the same arguments.
//!
//! Takes: the connector and one operation (its parameters, the path item's shared ones,
//! its body). Returns: the `inputSchema` and the `RequestMapping`, one entry per
//! argument, in the same order (then one for each body field only the body's
//! `oneOf`/`anyOf`/`allOf` branches name, which the root's copy of those keywords
//! describes); findings for `args:`/`fixed:` keys that name no input
//! and `args:` names that collide. A body field a credential part fills in (at the
//! body's top, in its root `allOf`/`anyOf`/`oneOf` branches, or in the whole-body
//! argument) is taken out of the schema everywhere it is named and listed in the
//! mapping's credential; the credential is the operation's own when its `security`
//! says another (`model::Auth::operations`).
//! Must never: give an argument a name outside `^[a-zA-Z0-9_.-]{1,64}$` or two arguments
//! one name (`crate::arguments`), or leave a parameter out of both the arguments and
//! `fixed` unless the connection supplies it (the credential, the headers OpenAPI
//! ignores). Known limit: a `$defs` entry a body branch names loses the credential
//! fields for every use within the tool (a component used both as a branch and deeper
//! in the body); a reference is rewritten, never inlined, so there is one copy.
//!
//! `input_schema` runs the parts in the order the arguments take: `parameters`, `body`,
//! `retry_key` (the header connectorgen names), `names` (`args:`, and the names of the
//! others), then writes the schema and the mapping here; `credential` says what the
//! connection fills in and takes it out of the schema.

mod body;
mod credential;
mod names;
mod parameters;
mod retry_key;

use serde_json::{Map, Value, json};

use super::document::Defs;
use super::mapping::{
    Argument, Encoding, FixedInput, IdempotencyMapping, Location, RequestMapping, ServerUrl,
};
use crate::diagnostics::{Finding, Span};
use crate::model::{Connector, Document, FixedSource, Operation};

/// One named input of a tool, where it goes, and where it comes from (for messages).
struct Input {
    location: Location,
    /// The HTTP name; `None` for the whole body.
    http: Option<String>,
    from: &'static str,
    schema: Value,
    required: bool,
    style: Option<String>,
    explode: Option<bool>,
    allow_reserved: bool,
    content_type: Option<String>,
    encoding: Option<Encoding>,
    /// A name connectorgen gives it whatever its HTTP name (`idempotencyKey`), or the
    /// author's from `args:`.
    chosen: Option<String>,
    /// The `args:` entry that chose the name, for messages.
    chosen_at: Option<Span>,
    idempotency: bool,
}

impl Input {
    fn new(
        location: Location,
        http: Option<String>,
        from: &'static str,
        schema: Value,
        required: bool,
    ) -> Self {
        Input {
            location,
            http,
            from,
            schema,
            required,
            style: None,
            explode: None,
            allow_reserved: false,
            content_type: None,
            encoding: None,
            chosen: None,
            chosen_at: None,
            idempotency: false,
        }
    }
}

/// What the parameters and the body give a tool, in the order they are met.
struct Gathered<'a> {
    op: &'a Operation,
    inputs: Vec<Input>,
    /// The header retry key's argument, which comes after every other.
    retry_key: Option<Input>,
    fixed: Vec<FixedInput>,
    /// Which of `op.fixed` named an input (the others are findings).
    fixed_used: Vec<bool>,
}

impl<'a> Gathered<'a> {
    fn new(op: &'a Operation) -> Self {
        Gathered {
            op,
            inputs: Vec::new(),
            retry_key: None,
            fixed: Vec::new(),
            fixed_used: vec![false; op.fixed.len()],
        }
    }

    /// Whether `name` is one of the operation's `fixed:` inputs; if so, it is recorded
    /// as one, sent where `location` says, and is no argument.
    fn fixed(
        &mut self,
        location: Location,
        name: &str,
        style: Option<String>,
        explode: Option<bool>,
    ) -> bool {
        let Some(i) = self.op.fixed.iter().position(|f| f.name == name) else {
            return false;
        };
        self.fixed_used[i] = true;
        let (env, value) = match &self.op.fixed[i].source {
            FixedSource::Env(e) => (Some(e.clone()), None),
            FixedSource::Value(v) => (None, Some(v.clone())),
        };
        self.fixed.push(FixedInput {
            location,
            name: name.to_string(),
            style,
            explode,
            env,
            value,
        });
        true
    }
}

/// Path, query, header and cookie parameters, then the body, then `idempotencyKey`; and
/// the request mapping of the same arguments.
pub(super) fn input_schema(
    connector: &Connector,
    op: &Operation,
    defs: &mut Defs,
    findings: &mut Vec<Finding>,
) -> (Value, RequestMapping) {
    let doc = &connector.document;
    let mut gathered = Gathered::new(op);
    parameters::gather(connector, defs, &mut gathered);
    let body = body::gather(connector, defs, &mut gathered);
    names::unknown_fixed(doc, op, &gathered.fixed_used, &body.fields, findings);
    let Gathered {
        mut inputs,
        retry_key,
        fixed,
        ..
    } = gathered;
    inputs.extend(retry_key);
    names::choose(op, &mut inputs, findings);
    let names = names::assign(&inputs);
    let written = write_arguments(op, inputs, names);
    let mut arguments = written.arguments;
    branch_fields(&mut arguments, body.composed);
    let mut schema = Map::new();
    schema.insert("type".into(), json!("object"));
    if !written.properties.is_empty() {
        schema.insert("properties".into(), Value::Object(written.properties));
    }
    if !written.required.is_empty() {
        schema.insert("required".into(), Value::Array(written.required));
    }
    schema.extend(body.base);
    defs.write_into(&mut schema);
    let mut schema = Value::Object(schema);
    credential::strip_fields(connector, &mut schema, &arguments, &body.fields);
    let mapping = RequestMapping {
        method: op.method.upper().to_string(),
        path: op.path.clone(),
        servers: servers(doc, op),
        arguments,
        body: body.mapping,
        idempotency: written.idempotency,
        fixed,
        credential: credential::credential(connector, op, &body.fields),
        omitted: Vec::new(),
    };
    (schema, mapping)
}

/// The body fields only the body's branches name, after the other arguments: the root's
/// copy of the branches describes them.
fn branch_fields(arguments: &mut Vec<Argument>, names: Vec<String>) {
    for name in names {
        // A name an argument already has (a parameter called like a branch's field)
        // stays that argument's: the root's `properties` say where it goes.
        if arguments.iter().any(|a| a.argument == name) {
            continue;
        }
        arguments.push(Argument {
            argument: name.clone(),
            location: Location::Body,
            name: Some(name),
            style: None,
            explode: None,
            allow_reserved: false,
            content_type: None,
            encoding: None,
            required: false,
        });
    }
}

/// The inputs as the tool's `properties` and `required`, and as the mapping's arguments.
struct Written {
    properties: Map<String, Value>,
    required: Vec<Value>,
    arguments: Vec<Argument>,
    idempotency: Option<IdempotencyMapping>,
}

/// Each input under its argument name `names[i]`, in order.
fn write_arguments(op: &Operation, inputs: Vec<Input>, names: Vec<String>) -> Written {
    let mut written = Written {
        properties: Map::new(),
        required: Vec::new(),
        arguments: Vec::new(),
        idempotency: None,
    };
    for (input, name) in inputs.into_iter().zip(names) {
        if let Some(key) = retry_key::mapping(op, &input, &name) {
            written.idempotency = Some(key);
        }
        // MCP wants every property schema as an object: boolean schemas get their
        // object spelling, which means the same.
        let mut schema = match input.schema {
            Value::Bool(true) => json!({}),
            Value::Bool(false) => json!({ "not": {} }),
            other => other,
        };
        if let (Some(http), false) = (&input.http, input.idempotency)
            && *http != name
        {
            names::note_http_name(&mut schema, input.location, http);
        }
        if input.required {
            written.required.push(json!(name));
        }
        written.properties.insert(name.clone(), schema);
        written.arguments.push(Argument {
            argument: name,
            location: input.location,
            name: input.http,
            style: input.style,
            explode: input.explode,
            allow_reserved: input.allow_reserved,
            content_type: input.content_type,
            encoding: input.encoding,
            required: input.required,
        });
    }
    written
}

/// The operation's servers, else its path item's, else the document's
/// (`Document::servers_of`).
pub(super) fn servers(doc: &Document, op: &Operation) -> Vec<ServerUrl> {
    doc.servers_of(op)
        .iter()
        .filter_map(|s| {
            let url = s.get("url")?.as_str()?.to_string();
            let variables = s
                .get("variables")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
                .filter_map(|(k, v)| Some((k.clone(), v.get("default")?.as_str()?.to_string())))
                .collect();
            Some(ServerUrl { url, variables })
        })
        .collect()
}
