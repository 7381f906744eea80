//! The passes that compare operations with each other, written once for both modes.
//!
//! Takes: every operation with a usable id, method and path (`Checked`), and the chosen
//! targets. Returns: nothing; a finding for a repeated id, a repeated route or a second
//! spelling of one path (inline), an unsafe poll target (`safety/jobs.rs`), and an id a
//! target cannot call.
//! Must never: look at one operation alone (that is its mode's `operation.rs`).

// The manifest's own names: foldhash (connectorgen-core's Cargo.toml says why that is safe).
use foldhash::{HashMap, HashMapExt as _};

use super::context::{Checked, Validator};
use super::safety::jobs::{duplicate_reads, poll_targets};
use super::syntax::{agent_id_problem, path_shape};
use crate::diagnostics::{Diagnostic, Span};
use crate::model::Names as _;
use crate::model::{Method, Target};

/// The rules that compare operations: unique ids, unique routes (inline), one
/// spelling per path (inline), and poll targets that are free, safe reads.
pub(super) fn cross_operation(v: &mut Validator, checked: &[Checked]) {
    let mut ids: HashMap<&str, Span> = HashMap::with_capacity(checked.len());
    // Keyed by method and the path with parameter names blanked: OpenAPI treats
    // `/a/{id}` and `/a/{name}` as the same path.
    let mut routes: HashMap<(Method, String), Span> = HashMap::with_capacity(checked.len());
    let mut shapes: HashMap<String, &str> = HashMap::with_capacity(checked.len());
    for c in checked {
        match ids.get(c.op.id.as_str()) {
            Some(first) => v.findings.push(Diagnostic::DuplicateOperationId {
                id: c.op.id.clone(),
                span: c.op.origin.id,
                first: *first,
            }),
            None => {
                ids.insert(&c.op.id, c.op.origin.id);
            }
        }
        // A base document's routes are unique by construction (each is listed once).
        if c.names_base() {
            continue;
        }
        let shape = path_shape(&c.op.path);
        let path_span = c.op.origin.path;
        match shapes.get(&shape) {
            Some(literal) if *literal != c.op.path => v.findings.push(Diagnostic::InvalidPath {
                path: c.op.path.clone(),
                reason: format!(
                    "another operation declares the same path as `{literal}`; use the same parameter names"
                ),
                span: path_span,
            }),
            Some(_) => {}
            None => {
                shapes.insert(shape.clone(), &c.op.path);
            }
        }
        match routes.get(&(c.op.method, shape.clone())) {
            Some(first) => v.findings.push(Diagnostic::DuplicateRoute {
                method: c.op.method.upper().to_string(),
                path: c.op.path.clone(),
                span: path_span,
                first: *first,
            }),
            None => {
                routes.insert((c.op.method, shape), path_span);
            }
        }
    }
    poll_targets(v, checked);
    duplicate_reads(v, checked);
}

/// Every chosen target can call every operation by its id.
pub(super) fn ids_for_targets(v: &mut Validator, checked: &[Checked], targets: &[Target]) {
    for c in checked {
        for target in targets {
            if let Some(reason) = agent_id_problem(&c.op.id, *target) {
                let from_base = c.has_base_id();
                let help = if from_base {
                    "the id comes from the base document's operationId: set `id:` on this entry to a name the target accepts, e.g. `createPrediction`".to_string()
                } else {
                    format!(
                        "rename the operation, or leave the {} target out: remove it from `targets`, or pass `--target` without it for one run",
                        target.as_str()
                    )
                };
                v.findings.push(Diagnostic::IdNotForTarget {
                    id: c.op.id.clone(),
                    by: format!("by the {} target", target.as_str()),
                    reason: reason.to_string(),
                    span: c.op.origin.id,
                    help,
                });
            }
        }
    }
}
