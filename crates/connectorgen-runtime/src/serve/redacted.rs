//! MCP's answers with every secret replaced: a tool result, a protocol error's message,
//! a task's state.
//!
//! Takes: an answer as rmcp types it. Returns: the same answer, every string (keys
//! included) passed through the process's one `Redactor` (`crate::redact`: by value,
//! every encoded form). Must never: send an answer that could not be taken apart as it
//! was (it is replaced by an error saying so).

use crate::redact::Redactor;

impl Redactor {
    /// `answer` with every secret replaced, taken apart as JSON and put back together.
    fn redacted<T: serde::Serialize + serde::de::DeserializeOwned>(
        &self,
        answer: &T,
    ) -> serde_json::Result<T> {
        serde_json::to_value(answer)
            .map(|v| self.value(v))
            .and_then(serde_json::from_value)
    }

    /// A tool call's answer with every secret replaced: its text, structured content and
    /// `_meta`. A result that cannot be taken apart is replaced by an error saying so,
    /// never sent as it was.
    pub(crate) fn response(
        &self,
        response: rmcp::model::CallToolResponse,
    ) -> rmcp::model::CallToolResponse {
        use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock};
        if self.is_empty() {
            return response;
        }
        match response {
            CallToolResponse::Complete(result) => match self.redacted::<CallToolResult>(&result) {
                Ok(result) => result.into(),
                Err(e) => CallToolResult::error(vec![ContentBlock::text(format!(
                    "The answer could not be checked for the credential ({e}), so it is \
                         not shown."
                ))])
                .into(),
            },
            // An input-required result is the consent question (the manifest's text and
            // the model's arguments: nothing the process holds as a secret) and a sealed
            // state; rmcp cannot read one back to rebuild it.
            other => other,
        }
    }
}

impl Redactor {
    /// A protocol error with every secret replaced in its message (an error that quotes
    /// a URL, a provider that echoes the key).
    pub(crate) fn error(&self, mut error: rmcp::model::ErrorData) -> rmcp::model::ErrorData {
        error.message = self.text(&error.message).into();
        error
    }

    /// A `tasks/get` answer with every secret replaced: the status message (a poll that
    /// could not connect quotes its URL, a query key and all) and the inlined result. One
    /// that cannot be taken apart is an error, never sent as it was.
    pub(crate) fn task(
        &self,
        task: rmcp::model::GetTaskResult,
    ) -> Result<rmcp::model::GetTaskResult, rmcp::model::ErrorData> {
        if self.is_empty() {
            return Ok(task);
        }
        self.redacted(&task).map_err(|e| {
            rmcp::model::ErrorData::internal_error(
                format!(
                    "the task's state could not be checked for the credential ({e}), so \
                         it is not shown"
                ),
                None,
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::{DetailedTask, GetTaskResult, Task, TaskPayload, TaskStatus};

    use super::Redactor;

    #[test]
    fn a_task_state_leaves_without_the_credential() {
        let key = "sk_live_query_key_42";
        let mut task = Task::new(
            "1-abc".to_string(),
            TaskStatus::Working,
            "2026-12-03T00:00:00Z".to_string(),
            "2026-12-03T00:00:00Z".to_string(),
        );
        task.status_message = Some(format!(
            "Polling getVideo failed (could not connect: error sending request for url \
             (https://api.example/v1/videos/v1?api_key={key})); the next tasks/get asks again."
        ));
        let answer = GetTaskResult::new(DetailedTask::new(task, TaskPayload::Working));
        let redacted = Redactor::new([key]).unwrap().task(answer).unwrap();
        let text = serde_json::to_string(&redacted).unwrap();
        assert!(!text.contains(key), "{text}");
        assert!(text.contains("api_key=[redacted]"), "{text}");
        assert_eq!(redacted.task.task.task_id, "1-abc");
    }
}
