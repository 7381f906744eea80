//! What `serve` needs to follow a job as a task (the MCP tasks extension): how the poll
//! target's answer says the job stands (`async.status`), and the operation that cancels
//! the job (`async.cancelWith`).
//!
//! Takes: the raw `async.status` of one operation; then, once the document is built,
//! every operation. Returns (through `Validator`): the `JobStatus`, checked against the
//! values the poll target's answer schema lists for the field (`unknown-job-status`),
//! or, not written, the default words narrowed to those values in their spelling; each
//! `cancelWith` checked to name an operation that is a write (`unknown-cancel-target`,
//! `unsafe-cancel-target`).
//! Must never: accept a mapping whose values the poll can never report (the task would
//! never end), or a cancel that is a read (a cancel that does nothing).

use serde_json::Value;
use serde_saphyr::Spanned;

use super::jobs::{answer_schema, first_by_id, follow, property_schema};
use crate::diagnostics::{Diagnostic, suggest};
use crate::manifest::RawJobStatus;
use crate::model::{Document, JobStatus, Operation, Returns, envelope};
use crate::validate::context::{Validator, non_empty};

/// `async.status` as written: `field` (default `status`), and `done` and `failed`
/// (each the default words when left out).
pub(in crate::validate) fn job_status(
    v: &mut Validator,
    s: &Spanned<RawJobStatus>,
) -> Option<JobStatus> {
    let defaults = JobStatus::default();
    let field = match &s.value.field {
        None => Some(defaults.field.clone()),
        Some(f) => non_empty(
            v,
            f,
            "async.status.field",
            "name the property of the poll target's answer that holds the job's state, e.g. `field: status`",
        ),
    };
    let values = |list: &Option<Vec<Spanned<String>>>, default: &[String]| match list {
        None => default.to_vec(),
        Some(list) => list.iter().map(|s| s.value.trim().to_string()).collect(),
    };
    Some(JobStatus {
        field: field?,
        done: values(&s.value.done, &defaults.done),
        failed: values(&s.value.failed, &defaults.failed),
    })
}

/// Each job's status mapping against its poll target's answer, and each
/// `cancelWith` against the operations.
pub(in crate::validate) fn job_tasks(
    v: &mut Validator,
    document: &Document,
    operations: &mut [Operation],
) {
    let by_id = first_by_id(operations);
    let mut mapped: Vec<Option<JobStatus>> = Vec::with_capacity(operations.len());
    for op in operations.iter() {
        let Some(a) = op.async_.as_ref().filter(|a| a.returns == Returns::Job) else {
            mapped.push(None);
            continue;
        };
        if let (Some(cancel), Some(at)) = (&a.cancel_with, op.origin.cancel_with()) {
            match by_id.get(cancel.as_str()).map(|&i| &operations[i]) {
                None => v.findings.push(Diagnostic::UnknownCancelTarget {
                    target: cancel.clone(),
                    span: at,
                    help: suggest(cancel, operations.iter().map(|o| o.id.as_str())),
                }),
                Some(target) => {
                    let reason = if target.id == op.id {
                        Some("it is the operation that starts the job")
                    } else if target.read {
                        Some("it is a read, which changes nothing at the provider")
                    } else if target.async_.is_some() {
                        Some("it is itself async: it would start other work")
                    } else if target.path_params.is_empty() {
                        // serve sends the job's id as the cancel's last path parameter.
                        Some("it takes no path parameter to name the job by")
                    } else {
                        None
                    };
                    if let Some(reason) = reason {
                        v.findings.push(Diagnostic::UnsafeCancelTarget {
                            target: cancel.clone(),
                            reason,
                            span: at,
                            target_span: Some(target.origin.id),
                        });
                    }
                }
            }
        }
        let target = by_id.get(a.poll_with.as_str()).map(|&i| &operations[i]);
        // The field, or the same inside the answer's one-property envelope when the top
        // has none (`status` → `job.status`), written or not.
        let field = target.and_then(|t| enveloped_status(document, t, &a.status.field));
        let Some(listed) = target
            .and_then(|t| answer_enum(document, t, field.as_deref().unwrap_or(&a.status.field)))
        else {
            mapped.push(field.map(|field| JobStatus {
                field,
                ..a.status.clone()
            }));
            continue;
        };
        let effective = field.clone().unwrap_or_else(|| a.status.field.clone());
        match op.origin.job_status() {
            Some(at) => {
                for value in a.status.done.iter().chain(&a.status.failed) {
                    if !listed.contains(value) {
                        v.findings.push(Diagnostic::UnknownJobStatus {
                            value: value.clone(),
                            field: effective.clone(),
                            target: a.poll_with.clone(),
                            span: at,
                            help: format!(
                                "{} (the values the poll target's answer lists for `{}`); map only values it can report, or the task would never end",
                                suggest(value, listed.iter().map(String::as_str)),
                                effective
                            ),
                        });
                    }
                }
                mapped.push(field.map(|field| JobStatus {
                    field,
                    ..a.status.clone()
                }));
            }
            // Not written: the default words, as the answer's schema spells them.
            None => mapped.push(Some(JobStatus {
                field: field.unwrap_or_else(|| a.status.field.clone()),
                ..a.status.narrowed(&listed)
            })),
        }
    }
    for (op, status) in operations.iter_mut().zip(mapped) {
        if let (Some(a), Some(status)) = (&mut op.async_, status) {
            a.status = status;
        }
    }
}
/// The values the JSON answer of `op` (its first 2xx response) lists for property
/// `field` (or the path to it inside an envelope, `job.status`: `at_path`) (`enum`, of
/// strings), when its schema says.
fn answer_enum(document: &Document, op: &Operation, field: &str) -> Option<Vec<String>> {
    let property = follow(document, answer_property(document, op, field)?)?;
    let values = property.get("enum")?.as_array()?;
    Some(
        values
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
    )
}

/// The schema of property `field` of `op`'s answer: the property of that name, else each
/// dot-separated name in turn (as `at_path` reads the answer).
fn answer_property<'a>(
    document: &'a Document,
    op: &'a Operation,
    field: &str,
) -> Option<&'a Value> {
    let schema = answer_schema(document, op)?;
    property_schema(document, schema, field).or_else(|| {
        field
            .split('.')
            .try_fold(schema, |s, name| property_schema(document, s, name))
    })
}

/// Where a poll's answer keeps the default status field inside a one-property envelope
/// (`{"job": {"status": …}}` → `job.status`), when its schema says the top has none.
fn enveloped_status(document: &Document, target: &Operation, field: &str) -> Option<String> {
    if answer_property(document, target, field).is_some() {
        return None;
    }
    let schema = follow(document, answer_schema(document, target)?)?;
    let (envelope, inner) = envelope(schema.get("properties")?.as_object()?.iter())?;
    property_schema(document, inner, field).map(|_| format!("{envelope}.{field}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_words_take_the_spelling_of_the_enum() {
        let listed: Vec<String> = ["QUEUED", "RUNNING", "SUCCEEDED", "FAILED", "EXPIRED"]
            .map(String::from)
            .to_vec();
        let status = JobStatus::default().narrowed(&listed);
        assert_eq!(status.done, ["SUCCEEDED"]);
        assert_eq!(status.failed, ["FAILED", "EXPIRED"]);
        assert_eq!(status.field, "status");
    }

    #[test]
    fn a_poll_answer_is_working_until_its_field_holds_a_mapped_value() {
        use crate::model::JobState;
        let status = JobStatus {
            field: "state".into(),
            done: vec!["ok".into()],
            failed: vec!["bad".into()],
        };
        let state = |v: serde_json::Value| status.state(&v);
        assert_eq!(state(serde_json::json!({"state": "ok"})), JobState::Done);
        assert_eq!(state(serde_json::json!({"state": "bad"})), JobState::Failed);
        assert_eq!(
            state(serde_json::json!({"state": "queued"})),
            JobState::Working
        );
        // The default field is not read when another is named.
        assert_eq!(
            state(serde_json::json!({"status": "ok"})),
            JobState::Working
        );
    }
}
