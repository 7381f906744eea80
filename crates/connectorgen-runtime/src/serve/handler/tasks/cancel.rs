//! `tasks/cancel`: the task's job cancelled through the manifest's cancel operation
//! (`async.cancelWith`), called as the model's call of that tool would be.
//!
//! Takes: a task id (and, for `tasks/update`, the person's answer) with the request's
//! context. Returns: the acknowledgement, or an error saying why the job was not
//! cancelled (the task is kept then).
//! Must never: send the cancel without the consent a call of that tool needs.
//!
//! A cancel that needs the person's yes (a delete, `confirm: true`) is asked through
//! the task, as SEP-2663 has it: `tasks/cancel` is acknowledged, the task shows
//! `input_required` with the question in `inputRequests` on the next `tasks/get`, and
//! the client's `tasks/update` carries the answer; a yes sends the cancel once (the
//! call's own consent and ledger), a no sends nothing and the task goes on. The
//! question waits in this instance's memory: on another instance, or after a restart,
//! the task shows `working` and the cancel must be asked for again.

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, DetailedTask, ErrorData, InputRequest, InputRequests,
    InputRequiredResult, InputResponses, Task, TaskPayload,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Map, Value};

use super::super::{CONSENT_INPUT, Shared};
use super::states::{iso8601, row_of};
use crate::call::argument_of;
use connectorgen_core::render::mcp::mapping::Location;

/// A cancel waiting on the person's answer, by task row.
pub(super) struct Pending {
    /// The question's key in the task's `inputRequests`: never used twice for one task
    /// (SEP-2663), so it carries when it was asked and a sequence number.
    key: String,
    question: InputRequest,
    /// The call's sealed request state, which the answer is sent back with.
    request_state: Option<String>,
    /// The cancel tool and its arguments, as the first attempt sent them.
    index: usize,
    args: Map<String, Value>,
    /// What the task says once cancelled.
    done: String,
    /// When the question was asked (seconds): the task's `lastUpdatedAt` while it is open.
    at: u64,
}

/// A number for each question asked, so two asked in one second get two keys.
static ASKED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

impl Pending {
    /// The question an input-required answer of the cancel tool asks (its consent form),
    /// under a key of its own, asked at `at`: `None` when it asks for nothing named.
    fn asked(
        asked: InputRequiredResult,
        at: u64,
        index: usize,
        args: Map<String, Value>,
        done: String,
    ) -> Option<Pending> {
        let question = asked.input_requests?.remove(CONSENT_INPUT)?;
        let n = ASKED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Some(Pending {
            key: format!("cancel-{at}-{n}"),
            question,
            request_state: asked.request_state,
            index,
            args,
            done,
            at,
        })
    }
}

impl Shared {
    /// `tasks/cancel`: the manifest's cancel operation (`async.cancelWith`) called for
    /// the task's job as the model's call of that tool would be — the same consent, the
    /// same ledger — and the task cancelled when it succeeds. Without one the task is
    /// kept, and the client told the job cannot be cancelled.
    pub(in crate::serve::handler) async fn cancel_task(
        &self,
        id: &str,
        context: &RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let who = super::super::who(context);
        // Known tasks only: an unknown id is the same error as for `tasks/get`.
        let current = self.get_task(id, who).await?;
        // Idempotent on an ended task (SEP-2663): the ack, and nothing sent.
        if current.task.status().is_terminal() {
            return Ok(());
        }
        let row = row_of(id).unwrap_or_default();
        // Asked for again while its question is open: that question, nothing new.
        if self.tasks.cancels().contains_key(&row) {
            return Ok(());
        }
        let entry = self.own_entry(row, who).await.ok().flatten();
        let served = entry
            .as_ref()
            .and_then(|e| self.stage.by_name.get(&e.tool))
            .map(|&i| &self.stage.tools[i]);
        let cancel = served
            .and_then(|s| s.op.async_.as_ref()?.cancel_with.as_ref())
            .and_then(|name| self.stage.by_name.get(name).copied());
        let (Some(index), Some(job)) = (cancel, entry.as_ref().and_then(|e| e.job_id.clone()))
        else {
            return Err(ErrorData::invalid_request(
                format!(
                    "task {id} cannot be cancelled: the connector declares no operation that \
                     cancels its job (async.cancelWith). The job goes on at the provider and \
                     the task is kept; tasks/get follows it."
                ),
                None,
            ));
        };
        let tool = &self.stage.tools[index];
        let Some(path_param) = tool.op.path_params.last() else {
            return Err(ErrorData::internal_error(
                format!("{} takes no job id in its path", tool.op.id),
                None,
            ));
        };
        // The argument the cancel tool takes the id in, as the model would send it.
        let param = &argument_of(&tool.mapping, Location::Path, path_param)
            .unwrap_or_else(|| path_param.clone());
        let mut args = Map::new();
        args.insert(param.clone(), Value::String(job.clone()));
        let request = CallToolRequestParams::new(tool.op.id.clone()).with_arguments(args.clone());
        let refused = |why: String| {
            Err(ErrorData::invalid_request(
                self.stage.redactor.text(&format!(
                    "task {id} was not cancelled: {why} The task is kept; tasks/get follows it."
                )),
                None,
            ))
        };
        let done = format!("Cancelled with {} ({param}: {job}).", tool.op.id);
        match self.call(index, request, context).await? {
            CallToolResponse::Complete(result) if result.is_error != Some(true) => {
                self.cancelled(row, current.task.task, done).await;
                Ok(())
            }
            CallToolResponse::Complete(result) => {
                refused(format!("{} answered: {}", tool.op.id, said(&result)))
            }
            // 2026-07-28: the person is asked through the task (`input_required`).
            CallToolResponse::InputRequired(asked) => {
                let at = self.stage.sealer.clock().now();
                let Some(pending) = Pending::asked(asked, at, index, args, done) else {
                    return refused(format!("{} asked for input it did not name.", tool.op.id));
                };
                self.tasks
                    .cancels()
                    .entry(row)
                    // Two cancels racing to ask: the first question stands.
                    .or_insert(pending);
                Ok(())
            }
            _ => refused(format!(
                "cancelling needs the person's yes, which this request cannot ask for: call \
                 the tool {} with {{\"{param}\": \"{job}\"}} (it asks them first).",
                tool.op.id
            )),
        }
    }

    /// `tasks/update`: the person's answer to a cancel's question. A yes sends the
    /// cancel (the call's own consent check opens the sealed request state); a no, or
    /// an answer to a question that is not open, changes nothing.
    pub(in crate::serve::handler) async fn update_task(
        &self,
        id: &str,
        responses: &InputResponses,
        context: &RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        // Known tasks only, as for `tasks/get`.
        let current = self.get_task(id, super::super::who(context)).await?;
        let row = row_of(id).unwrap_or_default();
        let pending = {
            let mut cancels = self.tasks.cancels();
            match cancels.get(&row) {
                Some(p) if responses.contains_key(&p.key) => cancels.remove(&row),
                // SEP-2663: an answer to a key that is not outstanding is ignored.
                _ => None,
            }
        };
        let Some(pending) = pending else {
            return Ok(());
        };
        if current.task.status().is_terminal() {
            return Ok(());
        }
        let tool = &self.stage.tools[pending.index];
        let mut request =
            CallToolRequestParams::new(tool.op.id.clone()).with_arguments(pending.args.clone());
        request.request_state = pending.request_state.clone();
        request.input_responses = Some(InputResponses::from_iter([(
            CONSENT_INPUT.to_string(),
            responses[&pending.key].clone(),
        )]));
        match self.call(pending.index, request, context).await? {
            CallToolResponse::Complete(result) if result.is_error != Some(true) => {
                self.cancelled(row, current.task.task, pending.done).await;
            }
            // Asked once more (a second question of the same call): shown in its turn.
            CallToolResponse::InputRequired(asked) => {
                let at = self.stage.sealer.clock().now();
                if let Some(again) =
                    Pending::asked(asked, at, pending.index, pending.args, pending.done)
                {
                    self.tasks.cancels().insert(row, again);
                }
            }
            // Declined, or refused by the cancel's own checks: nothing was sent, and
            // the job goes on (the call logged why); the task changed, back to working.
            _ => {
                let now = self.stage.sealer.clock().now();
                if let Some(held) = self.tasks.polled().get_mut(row) {
                    held.task.task.last_updated_at = iso8601(now);
                }
            }
        }
        Ok(())
    }

    /// The task of `row` with an open cancel question shown: `input_required`, with the
    /// question under its key, while the task has not ended.
    pub(in crate::serve::handler) fn with_question(
        &self,
        row: i64,
        task: DetailedTask,
    ) -> DetailedTask {
        if task.status().is_terminal() {
            return task;
        }
        let cancels = self.tasks.cancels();
        let Some(pending) = cancels.get(&row) else {
            return task;
        };
        let mut shown = task.task;
        shown.last_updated_at = iso8601(pending.at);
        shown.status_message = Some(format!(
            "Cancelling needs the person's yes: {} is asked in inputRequests; answer with \
             tasks/update. The job goes on meanwhile.",
            self.stage.tools[pending.index].op.id
        ));
        DetailedTask::new(
            shown,
            TaskPayload::InputRequired {
                input_requests: InputRequests::from_iter([(
                    pending.key.clone(),
                    pending.question.clone(),
                )]),
            },
        )
    }

    /// Holds row `row`'s task as cancelled, `message` saying how.
    async fn cancelled(&self, row: i64, mut task: Task, message: String) {
        task.status_message = Some(message);
        let now = self.stage.sealer.clock().now();
        task.last_updated_at = iso8601(now);
        self.hold(row, now, DetailedTask::new(task, TaskPayload::Cancelled))
            .await;
    }
}

/// The text of a tool answer, its blocks joined.
fn said(result: &rmcp::model::CallToolResult) -> String {
    let said: Vec<String> = result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect();
    said.join(" ")
}
