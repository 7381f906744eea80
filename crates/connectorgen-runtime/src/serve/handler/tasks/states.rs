//! A task's ids, times and states: the task id of a ledger row (and the row of a task
//! id), the ISO 8601 times tasks carry, and the states a finished job leaves (completed
//! with the poll's answer, or with a tool error, or failed when it cannot be followed).
//!
//! Takes: ledger rows, seconds, poll answers. Returns: ids, timestamps, `DetailedTask`s.
//! Must never: give a task id that does not name its row alone (it carries a digest of
//! the row's retry key, which only the ledger holds).

use rmcp::model::{DetailedTask, Task, TaskPayload};
use serde_json::{Map, Value, json};

use crate::ledger::Entry;

/// The task id of row `entry`: its id and a digest of its retry key, so a task id names
/// one row and cannot be guessed from another's.
pub(super) fn task_id(entry: &Entry) -> String {
    use sha2::{Digest as _, Sha256};
    let digest = Sha256::digest(format!("task\0{}\0{}", entry.id, entry.key).as_bytes());
    let tail: String = digest.iter().take(12).map(|b| format!("{b:02x}")).collect();
    format!("{}-{tail}", entry.id)
}

/// The row id a task id names (its digest is checked against the row).
pub(super) fn row_of(task_id: &str) -> Option<i64> {
    let (id, tail) = task_id.split_once('-')?;
    if tail.len() != 24 {
        return None;
    }
    id.parse().ok().filter(|id: &i64| *id > 0)
}

/// Seconds since 1970 as ISO 8601 in UTC (`2026-12-03T13:20:49Z`).
pub(super) fn iso8601(seconds: u64) -> String {
    let days = i64::try_from(seconds / 86_400).unwrap_or(0);
    let rest = seconds % 86_400;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// The state row `entry`'s task ended in, as the ledger keeps it, when it is that task's
/// (the id names the row and its key).
pub(super) fn kept_task(entry: &Entry) -> Option<DetailedTask> {
    let task: DetailedTask = serde_json::from_str(entry.task.as_deref()?).ok()?;
    (task.task.task_id == task_id(entry) && task.status().is_terminal()).then_some(task)
}

/// A task that ended with `result` as the call's result.
pub(super) fn completed(task: Task, result: rmcp::model::CallToolResult) -> DetailedTask {
    let result = match serde_json::to_value(result) {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    };
    DetailedTask::new(task, TaskPayload::Completed { result })
}

/// The poll's answer as a tool error, `message` first: the job ended without its result.
pub(super) fn ended(
    mut result: rmcp::model::CallToolResult,
    message: &str,
) -> rmcp::model::CallToolResult {
    result.is_error = Some(true);
    result.structured_content = None;
    result
        .content
        .insert(0, rmcp::model::ContentBlock::text(message.to_string()));
    result
}

/// A task the server could not follow (its poll cannot be built): a JSON-RPC error.
pub(super) fn failed(task: Task, message: &str) -> DetailedTask {
    let mut error = Map::new();
    error.insert("code".into(), json!(-32603));
    error.insert(
        "message".into(),
        json!(format!("The job cannot be followed: {message}.")),
    );
    DetailedTask::new(task, TaskPayload::Failed { error })
}

#[cfg(test)]
mod tests {
    use rmcp::model::TaskStatus;

    use super::*;
    use crate::ledger::Status;

    #[test]
    fn timestamps_are_iso_8601_in_utc() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00Z");
        assert_eq!(iso8601(1_796_304_049), "2026-12-03T13:20:49Z");
        assert_eq!(iso8601(951_782_400), "2000-02-29T00:00:00Z");
    }

    #[test]
    fn a_failed_job_is_a_completed_task_whose_result_is_a_tool_error() {
        let task = Task::new("1-x", TaskStatus::Working, "a", "b");
        let mut result =
            rmcp::model::CallToolResult::success(vec![rmcp::model::ContentBlock::text("{}")]);
        result.structured_content = Some(json!({"status": "failed"}));
        let done = completed(task, ended(result, "The job failed."));
        assert_eq!(done.status(), TaskStatus::Completed);
        let TaskPayload::Completed { result } = done.payload else {
            panic!("not completed");
        };
        assert_eq!(result["isError"], true);
        assert_eq!(result["content"][0]["text"], "The job failed.");
    }

    #[test]
    fn task_ids_name_their_row_and_only_it() {
        let entry = |id: i64, key: &str| Entry {
            id,
            tool: "createVideo".into(),
            args_hash: "h".into(),
            key: key.into(),
            nonce: None,
            status: Status::Job,
            http_status: Some(200),
            job_id: Some("vid_1".into()),
            result: None,
            created: 0,
            updated: 0,
            attempts: 1,
            media_type: None,
            sending: false,
            task: None,
        };
        let id = task_id(&entry(7, "k1"));
        assert_eq!(row_of(&id), Some(7));
        assert_eq!(id, task_id(&entry(7, "k1")));
        assert_ne!(id, task_id(&entry(7, "k2")));
        assert_eq!(row_of("7"), None);
        assert_eq!(row_of("x-0123456789abcdef01234567"), None);
    }
}
