//! Where the agent calls each exposed operation of a base document.
//!
//! Takes: the base-mode document, its operations, and whether `service.publicUrl` was
//! given. With `publicUrl`, it removes the path- and operation-level `servers` that would
//! override the connector's URL by OpenAPI's rules (a messaging provider declares them on
//! every path), so every output — and every client built from one — calls the URL the
//! author named. Without it, returns a `mixed-servers` warning when the exposed operations
//! resolve to different origins. Must never: change an operation's path, parameters or
//! body, or the document's own `servers` list (`publicUrl` already comes first there).

use serde_json::{Map, Value};

use crate::diagnostics::{Diagnostic, Finding};
use crate::model::{Document, Operation};

/// How many operation ids the warning names per origin before "and N more".
const NAMED: usize = 3;

/// `publicUrl` is where every exposed operation is called: drop the servers that would
/// say otherwise.
pub(in crate::validate) fn replace(document: &mut Document, operations: &mut [Operation]) {
    for op in operations {
        op.http.shift_remove("servers");
    }
    if let Some(paths) = document
        .root
        .get_mut("paths")
        .and_then(Value::as_object_mut)
    {
        for item in paths.values_mut().filter_map(Value::as_object_mut) {
            item.shift_remove("servers");
        }
    }
}

/// Without `publicUrl`: a warning when the operations go to more than one origin.
pub(in crate::validate) fn mixed(document: &Document, operations: &[Operation]) -> Option<Finding> {
    // (origin, the operations calling it), in the order the origins are first met.
    let mut origins: Vec<(String, Vec<&Operation>)> = Vec::new();
    for op in operations {
        let Some(origin) = effective_origin(document, op) else {
            continue;
        };
        match origins.iter_mut().find(|(o, _)| *o == origin) {
            Some((_, ops)) => ops.push(op),
            None => origins.push((origin, vec![op])),
        }
    }
    if origins.len() < 2 {
        return None;
    }
    let hosts = origins
        .iter()
        .map(|(origin, ops)| {
            let mut ids: Vec<String> = ops
                .iter()
                .take(NAMED)
                .map(|o| format!("`{}`", o.id))
                .collect();
            if ops.len() > NAMED {
                ids.push(format!("{} more", ops.len() - NAMED));
            }
            format!("{} at {origin}", and_list(&ids))
        })
        .collect::<Vec<_>>()
        .join("; ");
    Some(Finding::warning(Diagnostic::MixedServers {
        hosts,
        first: origins[0].0.clone(),
        span: origins[0].1[0].origin.entry,
        second: origins[1].0.clone(),
        other: origins[1].1[0].origin.entry,
    }))
}

/// The origin (`scheme://host[:port]`, lower case) of the first server that applies to
/// `op`: its own, else its path item's, else the document's. A relative URL is kept as
/// written: it is resolved against wherever the document is served.
fn effective_origin(document: &Document, op: &Operation) -> Option<String> {
    let server = op
        .http
        .get("servers")
        .or_else(|| document.path_item(&op.path).and_then(|i| i.get("servers")))
        .or_else(|| document.root.get("servers"))
        .and_then(Value::as_array)
        .and_then(|list| list.first())?;
    let url = with_defaults(server);
    Some(match url.split_once("://") {
        Some((scheme, rest)) => {
            let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
            format!("{scheme}://{authority}").to_ascii_lowercase()
        }
        None => url,
    })
}

/// A Server Object's URL with each `{variable}` at its default.
fn with_defaults(server: &Value) -> String {
    let mut url = server
        .get("url")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let empty = Map::new();
    let variables = server
        .get("variables")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    for (name, variable) in variables {
        if let Some(default) = variable.get("default").and_then(Value::as_str) {
            url = url.replace(&format!("{{{name}}}"), default);
        }
    }
    url
}

/// "`a`", "`a` and `b`", "`a`, `b` and 2 more".
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}
