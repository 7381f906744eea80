//! Where the agent calls each exposed operation of a base document.
//!
//! Takes: the base-mode document, its operations, and whether `service.publicUrl` was
//! given. With `publicUrl`, it removes the path- and operation-level `servers` that would
//! override the connector's URL by OpenAPI's rules (a messaging provider declares them on
//! every path), so every output — and every client built from one — calls the URL the
//! author named. Without it, returns a `mixed-servers` warning when the exposed operations
//! resolve to different origins. Must never: change an operation's path, parameters or
//! body, or the document's own `servers` list (`publicUrl` already comes first there).

use serde_json::Value;

use crate::diagnostics::{Diagnostic, Finding};
use crate::model::{Document, Operation, origin, server_url};

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

/// The origin of the first server that applies to `op` (`Document::servers_of`),
/// variables at their defaults.
fn effective_origin(document: &Document, op: &Operation) -> Option<String> {
    let server = document.servers_of(op).first()?;
    Some(origin(&server_url(server)))
}

/// "`a`", "`a` and `b`", "`a`, `b` and 2 more".
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}
