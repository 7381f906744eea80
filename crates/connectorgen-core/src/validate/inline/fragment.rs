//! An inline operation's `openapi:` fragment, checked once it is merged over the
//! generated Operation Object.
//!
//! Takes: the merged Operation Object, the operation's method and where the fragment is
//! written. Returns (through `Validator`): a problem for each way the fragment made the
//! operation something the rest of the manifest refuses or no OpenAPI 3.1 reader
//! accepts — a request body on a GET or DELETE (`input-not-allowed`, as for `input`), a
//! server URL that breaks the rules of `publicUrl` and `servers:` (credentials, a
//! scheme other than https, a query; `bad-url`), an Operation Object that breaks the
//! structure OpenAPI 3.1 defines (`validate/openapi_objects.rs`: unknown fields, wrong
//! types, a path parameter not required, a style its location does not take, …), or a
//! Schema Object the JSON Schema 2020-12 meta-schema (shipped by the `jsonschema`
//! crate) rejects (`invalid-openapi-fragment`, naming the place inside the fragment). The
//! fragment's `servers` are then left out of the operation, with a
//! `fragment-servers-replaced` warning: `publicUrl` is where the agent calls every
//! operation, and an operation's own servers would win over it (docs/servers.md).
//! Must never: check an operation without a fragment (the generator's own output is
//! proven valid by the test suite, not at run time), or let a fragment through because
//! the operation around it is valid.
//!
//! Spans: the fragment is one `serde_json::Value`, which keeps no positions, so every
//! finding points at the fragment and names the place inside it in its message.

use serde_json::{Map, Value};

use crate::diagnostics::{Diagnostic, Finding, Span};
use crate::model::Names as _;
use crate::model::{Method, OpenapiVersion, escape};
use crate::validate::context::Validator;
use crate::validate::openapi_objects;
use crate::validate::syntax::check_url;

/// At most this many findings per fragment: the first few say what is wrong.
const MAX_FINDINGS: usize = 8;

/// Checks an inline operation whose `openapi:` fragment (written at `at`) is merged
/// into `http`.
pub(in crate::validate) fn merged_fragment(
    v: &mut Validator,
    http: &mut Map<String, Value>,
    method: Method,
    at: Span,
) {
    if matches!(method, Method::Get | Method::Delete) && http.contains_key("requestBody") {
        v.findings.push(Diagnostic::InputNotAllowed {
            key: "openapi.requestBody",
            method: method.as_str().to_string(),
            span: at,
        });
    }
    fragment_servers(v, http, at);

    let operation = Value::Object(std::mem::take(http));
    let mut found = 0;
    for problem in openapi_objects::operation(OpenapiVersion::V31, &operation, MAX_FINDINGS) {
        found += 1;
        v.findings.push(fragment_problem(
            &operation,
            &problem.pointer,
            format!("OpenAPI 3.1 refuses it: {}", problem.message),
            at,
        ));
    }
    for (pointer, schema) in schema_objects(&operation) {
        if found == MAX_FINDINGS {
            break;
        }
        // Anything but a mapping or a boolean was refused above.
        if !(schema.is_object() || schema.is_boolean()) {
            continue;
        }
        if let Err(e) = jsonschema::meta::validate(schema) {
            found += 1;
            let inside = format!("{pointer}{}", e.instance_path());
            v.findings.push(fragment_problem(
                &operation,
                &inside,
                format!("not a valid JSON Schema (2020-12): {e}"),
                at,
            ));
        }
    }
    if let Value::Object(map) = operation {
        *http = map;
    }
}

/// Each `servers[].url` follows the rules of `publicUrl` and `servers:` (the author
/// is told of a bad URL); then the `servers` are left out, since `publicUrl` is where
/// the agent calls.
fn fragment_servers(v: &mut Validator, http: &mut Map<String, Value>, at: Span) {
    let Some(Value::Array(servers)) = http.get_mut("servers") else {
        return;
    };
    for server in servers.iter() {
        let Some(Value::String(url)) = server.get("url") else {
            // Not a string, or absent: `openapi_objects` reports it.
            continue;
        };
        if let Err(reason) = check_url(url.trim()) {
            v.findings.push(Diagnostic::BadUrl {
                key: "openapi.servers.url",
                reason: format!("`{}`: {reason}", url.escape_debug()),
                span: at,
            });
        }
    }
    // `publicUrl` (required inline) is where the agent calls every operation, as in
    // base mode (docs/servers.md); the operation's own `servers` would win over it.
    http.shift_remove("servers");
    v.findings
        .add(Finding::warning(Diagnostic::FragmentServersReplaced {
            span: at,
        }));
}

/// A finding about the place `pointer` of the merged operation.
fn fragment_problem(operation: &Value, pointer: &str, reason: String, at: Span) -> Diagnostic {
    let key = pointer.split('/').nth(1).unwrap_or_default();
    Diagnostic::InvalidOpenapiFragment {
        key: crate::model::unescape(key),
        reason: format!("at {}: {reason}", describe(operation, pointer)),
        span: at,
    }
}

/// A pointer into the merged operation as the author can find it in the fragment: a
/// parameter by its name and location (its index in the merged list is not the one in
/// the fragment), everything else by its pointer.
fn describe(operation: &Value, pointer: &str) -> String {
    let mut segments = pointer.split('/').skip(1);
    if let (Some("parameters"), Some(index)) = (segments.next(), segments.next())
        && let Some(p) = index
            .parse::<usize>()
            .ok()
            .and_then(|i| operation.get("parameters")?.get(i))
    {
        let rest: Vec<&str> = segments.collect();
        let name = p.get("name").and_then(Value::as_str).unwrap_or_default();
        let location = p.get("in").and_then(Value::as_str).unwrap_or("?");
        let within = if rest.is_empty() {
            String::new()
        } else {
            format!(", `/{}`", rest.join("/"))
        };
        return format!("the {location} parameter `{}`{within}", name.escape_debug());
    }
    if pointer.is_empty() {
        "the operation".to_string()
    } else {
        format!("`{}`", pointer.escape_debug())
    }
}

/// The Schema Objects of an Operation Object, with their pointers: parameter schemas,
/// and the schemas of every media type in parameters, the request body, responses and
/// their headers (references are checked where they point).
fn schema_objects(operation: &Value) -> Vec<(String, &Value)> {
    let mut out = Vec::new();
    for (i, p) in operation
        .get("parameters")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        own_schema(p, &format!("/parameters/{i}"), &mut out);
        content_schemas(p, &format!("/parameters/{i}"), &mut out);
    }
    if let Some(body) = operation.get("requestBody") {
        content_schemas(body, "/requestBody", &mut out);
    }
    for (status, response) in operation
        .get("responses")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let at = format!("/responses/{}", escape(status));
        content_schemas(response, &at, &mut out);
        for (name, header) in response
            .get("headers")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            let at = format!("{at}/headers/{}", escape(name));
            own_schema(header, &at, &mut out);
            content_schemas(header, &at, &mut out);
        }
    }
    out
}

/// The `schema` of a parameter or header at `at`.
fn own_schema<'a>(value: &'a Value, at: &str, out: &mut Vec<(String, &'a Value)>) {
    if let Some(schema) = value.get("schema") {
        out.push((format!("{at}/schema"), schema));
    }
}

/// The schema of each media type in the `content` of the object at `at`.
fn content_schemas<'a>(value: &'a Value, at: &str, out: &mut Vec<(String, &'a Value)>) {
    for (media, object) in value
        .get("content")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        if let Some(schema) = object.get("schema") {
            out.push((format!("{at}/content/{}/schema", escape(media)), schema));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::Severity;
    use serde_json::json;

    fn problems(operation: &Value) -> Vec<String> {
        openapi_objects::operation(OpenapiVersion::V31, operation, MAX_FINDINGS)
            .into_iter()
            .map(|p| format!("{}: {}", p.pointer, p.message))
            .collect()
    }

    #[test]
    fn the_operation_checks_are_live() {
        let valid = json!({ "responses": { "200": { "description": "ok" } } });
        assert_eq!(problems(&valid), Vec::<String>::new());
        for invalid in [
            json!({ "tags": [5] }),
            json!({ "requestBody": "x" }),
            json!({ "responses": { "200": "x" } }),
            json!({ "parameters": [{ "name": "id", "in": "path", "required": false, "schema": {} }] }),
            json!({ "parameters": [{ "name": "q", "in": "query", "style": "matrix", "schema": {} }] }),
            json!({ "parameters": [{ "name": "q", "in": "query", "schema": 5 }] }),
            json!({ "summery": "x" }),
        ] {
            assert!(!problems(&invalid).is_empty(), "{invalid}");
        }
    }

    #[test]
    fn a_fragments_servers_are_left_out_with_a_warning() {
        let mut v = Validator::default();
        let mut http = json!({
            "servers": [{ "url": "https://eu.api.example/v1/" }],
            "externalDocs": { "url": "https://docs.example" },
            "responses": { "200": { "description": "ok",
                "content": { "application/json": { "schema": { "type": "object" } } } } }
        })
        .as_object()
        .cloned()
        .unwrap();
        merged_fragment(&mut v, &mut http, Method::Post, (0, 1).into());
        let findings = std::mem::take(&mut v.findings).into_vec();
        let found: Vec<_> = findings
            .iter()
            .map(|f| (&f.diagnostic, f.severity))
            .collect();
        assert!(
            matches!(
                found.as_slice(),
                [(
                    Diagnostic::FragmentServersReplaced { .. },
                    Severity::Warning
                )]
            ),
            "{found:?}"
        );
        assert!(!http.contains_key("servers"));
        assert!(http.contains_key("externalDocs") && http.contains_key("responses"));
    }

    #[test]
    fn schema_objects_are_found_everywhere_an_operation_holds_one() {
        let op = json!({
            "parameters": [{ "name": "a", "in": "query", "schema": { "type": "x" } },
                           { "name": "b", "in": "query", "content": { "application/json": { "schema": 1 } } }],
            "requestBody": { "content": { "application/json": { "schema": true } } },
            "responses": { "200": { "description": "ok",
                "headers": { "X-Rate": { "schema": {} } },
                "content": { "text/plain": { "schema": {} } } } }
        });
        let found = schema_objects(&op);
        let pointers: Vec<&str> = found.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(
            pointers,
            [
                "/parameters/0/schema",
                "/parameters/1/content/application~1json/schema",
                "/requestBody/content/application~1json/schema",
                "/responses/200/content/text~1plain/schema",
                "/responses/200/headers/X-Rate/schema",
            ]
        );
    }
}
