//! `tasks/cancel`: the task's job cancelled through the manifest's cancel operation
//! (`async.cancelWith`), called as the model's call of that tool would be.
//!
//! Takes: a task id and the request's context. Returns: the acknowledgement, or an
//! error saying why the job was not cancelled (the task is kept then).
//! Must never: send the cancel without the consent a call of that tool needs.

use rmcp::model::{DetailedTask, ErrorData, TaskPayload};
use serde_json::{Map, Value};

use super::super::Shared;
use super::{Polled, iso8601, row_of};
use connectorgen_core::render::mcp::mapping::Location;

impl Shared {
    /// `tasks/cancel`: the manifest's cancel operation (`async.cancelWith`) called for
    /// the task's job as the model's call of that tool would be — the same consent, the
    /// same ledger — and the task cancelled when it succeeds. Without one the task is
    /// kept, and the client told the job cannot be cancelled.
    pub(in crate::serve::handler) async fn cancel_task(
        &self,
        id: &str,
        context: &rmcp::service::RequestContext<rmcp::service::RoleServer>,
    ) -> Result<(), ErrorData> {
        // Known tasks only: an unknown id is the same error as for `tasks/get`.
        let current = self.get_task(id).await?;
        // Idempotent on an ended task (SEP-2663): the ack, and nothing sent.
        if current.task.status().is_terminal() {
            return Ok(());
        }
        let row = row_of(id).unwrap_or_default();
        let entry = self.own_entry(row).ok().flatten();
        let served = entry
            .as_ref()
            .and_then(|e| self.by_name.get(&e.tool))
            .map(|&i| &self.tools[i]);
        let cancel = served
            .and_then(|s| s.op.async_.as_ref()?.cancel_with.as_ref())
            .and_then(|name| self.by_name.get(name).copied());
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
        let tool = &self.tools[index];
        let Some(path_param) = tool.op.path_params.last() else {
            return Err(ErrorData::internal_error(
                format!("{} takes no job id in its path", tool.op.id),
                None,
            ));
        };
        // The argument the cancel tool takes the id in, as the model would send it.
        let param = &super::super::argument_of(&tool.mapping, Location::Path, path_param)
            .unwrap_or_else(|| path_param.clone());
        let mut args = Map::new();
        args.insert(param.clone(), Value::String(job.clone()));
        let request = rmcp::model::CallToolRequestParams::new(tool.op.id.clone())
            .with_arguments(args.clone());
        let refused = |why: String| {
            Err(ErrorData::invalid_request(
                self.redactor.text(&format!(
                    "task {id} was not cancelled: {why} The task is kept; tasks/get follows it."
                )),
                None,
            ))
        };
        match self.call(index, request, context).await? {
            rmcp::model::CallToolResponse::Complete(result) if result.is_error != Some(true) => {
                let mut task = current.task.task;
                task.status_message =
                    Some(format!("Cancelled with {} ({param}: {job}).", tool.op.id));
                task.last_updated_at = iso8601(self.sealer.clock().now());
                self.polled
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .insert(
                        row,
                        Polled {
                            at: self.sealer.clock().now(),
                            task: DetailedTask::new(task, TaskPayload::Cancelled),
                        },
                    );
                Ok(())
            }
            rmcp::model::CallToolResponse::Complete(result) => {
                let said: Vec<String> = result
                    .content
                    .iter()
                    .filter_map(|c| c.as_text().map(|t| t.text.clone()))
                    .collect();
                refused(format!("{} answered: {}", tool.op.id, said.join(" ")))
            }
            // The person's yes is asked with a round trip tasks/cancel cannot carry.
            _ => refused(format!(
                "cancelling needs the person's yes, which this request cannot ask for: call \
                 the tool {} with {{\"{param}\": \"{job}\"}} (it asks them first).",
                tool.op.id
            )),
        }
    }
}
