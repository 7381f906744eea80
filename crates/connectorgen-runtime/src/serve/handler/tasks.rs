//! The tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) for async tools: a
//! client that declares it gets a job as a task it polls with `tasks/get`, so the
//! client, not the model, waits on the job.
//!
//! Takes: a call's ledger row (a job: status `job` with the provider's job id) and the
//! poll target the manifest names. Returns: the `CreateTaskResult` of a call, and the
//! task's state for `tasks/get`, read by polling the poll target server-side and mapping
//! the provider's status (`Async::status`) to `working` or `completed`: with the poll's
//! answer as the call's result for `done`, as a tool error (`isError: true`) for
//! `failed` — SEP-2663 keeps the task status `failed` for protocol errors (here: a poll
//! that cannot be built).
//! Must never: send the create (a task is only ever a row that already has a job), poll
//! the provider for one task more than once per poll interval, or answer a task id that
//! does not name its row (the id carries a digest of the row's retry key, which only
//! the ledger holds).
//!
//! `tasks/cancel` calls the cancel operation (`async.cancelWith`) as a call of that tool:
//! the person is asked first when it cannot be undone (by `elicitation/create`; a
//! client that asks with a round trip or a confirmation value is told to call the tool).
//! Without one the task is kept and the cancel refused. A task
//! lives as long as its row (the retry window after the job started); a terminal state
//! is kept with the row in the ledger (counted by its bound, pruned with it), so it is
//! answered after a restart and on every instance without polling again; only when the
//! ledger cannot take one is it held in memory, up to `HELD_MAX_BYTES` in all (a state
//! let go from there is polled once more: a free read, never the create). A poll
//! answered with anything but success, 404 or 410 (an auth refusal, a rate limit, a 5xx)
//! says nothing about the job: the task stays working and its polls back off
//! (`backoff`).

use rmcp::model::{
    CreateTaskResult, DetailedTask, ErrorData, GetTaskResult, ProtocolVersion, Task, TaskPayload,
    TaskStatus,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Map, Value, json};

use super::{Shared, result as mcp_result};
use crate::call::{Served, output, reply};
use crate::ledger::{Entry, Status};
use connectorgen_core::model::{Async, JobState, Returns};

mod cancel;
mod held;
mod states;

use cancel::Pending;
use held::{Held, backoff, due};
use states::{completed, ended, failed, iso8601, kept_task, row_of, task_id};

/// What only the tasks extension knows in this process: the last poll of each task and
/// the cancels waiting on the person's answer. Each behind its own lock, taken as it is
/// when a panicking holder left it poisoned (every change is one insert or remove).
#[derive(Default)]
pub(super) struct Tasks {
    /// What the last poll of each task found, by row.
    polled: std::sync::Mutex<Held>,
    /// Cancels waiting on the person's answer, by task row (tasks/cancel.rs).
    cancels: std::sync::Mutex<std::collections::HashMap<i64, Pending>>,
}

impl Tasks {
    fn polled(&self) -> std::sync::MutexGuard<'_, Held> {
        self.polled
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn cancels(&self) -> std::sync::MutexGuard<'_, std::collections::HashMap<i64, Pending>> {
        self.cancels
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Whether `served` is a tool whose calls become tasks: an async operation that returns
/// a job and has a poll target.
pub(super) fn is_job(served: &Served) -> bool {
    served
        .op
        .async_
        .as_ref()
        .is_some_and(|a| a.returns == Returns::Job)
        && served.poll.is_some()
}

/// Whether this request may use the tasks extension: it declares it, on a revision
/// that defines it. SEP-2663: the extension is not defined under 2025-11-25 (nor
/// before), and a server must not treat the capability as enabling tasks there — a
/// client of that revision cannot read a task, and its paid job would be started
/// unseen.
pub(super) fn declared(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|v| !v.has_initialize())
        && context
            .client_capabilities()
            .is_some_and(|c| c.supports_tasks())
}

/// The answer to `tasks/*` from a request that may not use tasks: as to a client that
/// declared no tasks capability (`-32021`), saying so on an earlier revision.
pub(super) fn undeclared(context: &RequestContext<RoleServer>) -> ErrorData {
    let mut error = ErrorData::missing_required_client_capability(
        rmcp::model::ClientCapabilities::builder()
            .enable_tasks()
            .build(),
    );
    // A client of an earlier revision may have declared it at initialize: say why
    // that does not count.
    if let Some(version) = context
        .protocol_version()
        .filter(ProtocolVersion::has_initialize)
    {
        error.message = format!(
            "{}: the tasks extension is defined from protocol revision 2026-07-28 on, and \
             this session speaks {version}",
            error.message
        )
        .into();
    }
    error
}

/// The suggested wait between two `tasks/get` of a job, in milliseconds: a tenth of its
/// `typicalSeconds`, between one second and a minute; five seconds when the manifest
/// gives no typical time.
pub(super) fn poll_interval_ms(a: &Async) -> u64 {
    a.typical_seconds
        .map_or(5_000, |s| s.saturating_mul(100).clamp(1_000, 60_000))
}

impl Shared {
    /// The task of row `id` after a call of the job tool `served`: `None` when the row
    /// holds no job (the create failed, was refused, or its outcome is unknown): the
    /// call's own answer goes out then, as to a client without the extension.
    pub(super) async fn created_task(
        &self,
        served: &Served,
        id: i64,
        who: Option<&str>,
    ) -> Option<CreateTaskResult> {
        let principal = who.unwrap_or(&served.principal).to_string();
        let entry = self.stage.ledger.entry(id, principal).await.ok()??;
        if entry.status != Status::Job || entry.job_id.is_none() {
            return None;
        }
        let a = served.op.async_.as_ref()?;
        // An identical call after the task ended says so (the result is for tasks/get),
        // rather than the state it started in.
        if let Some(ended) = kept_task(&entry) {
            return Some(CreateTaskResult::new(ended.task));
        }
        let held = self
            .tasks
            .polled()
            .get(id)
            .map(|p| p.task.task.clone())
            .filter(|t| t.status.is_terminal() && t.task_id == task_id(&entry));
        if let Some(held) = held {
            return Some(CreateTaskResult::new(held));
        }
        // Working, or waiting on the person's answer to a cancel: as `tasks/get` says it
        // (a client that read `working` here would not look for the question).
        let working = DetailedTask::new(
            self.task(&entry, a, TaskStatus::Working),
            TaskPayload::Working,
        );
        Some(CreateTaskResult::new(self.with_question(id, working).task))
    }

    /// Row `row` if it is the person `who`'s (an inbound token's principal), or, without
    /// one, if one of this instance's tools made it with the credential it is served
    /// with here: looked up under each principal this instance calls with (one per
    /// distinct credential, usually one), so another person's row on a shared ledger is
    /// never found, whatever id is guessed.
    pub(super) async fn own_entry(
        &self,
        row: i64,
        who: Option<&str>,
    ) -> Result<Option<Entry>, crate::ledger::LedgerError> {
        if let Some(principal) = who {
            let entry = self.stage.ledger.entry(row, principal.to_string()).await?;
            return Ok(entry.filter(|e| self.stage.by_name.contains_key(&e.tool)));
        }
        let mut principals: Vec<&str> = self
            .stage
            .tools
            .iter()
            .map(|s| s.principal.as_str())
            .collect();
        principals.sort_unstable();
        principals.dedup();
        for principal in principals {
            if let Some(entry) = self.stage.ledger.entry(row, principal.to_string()).await? {
                let ours = self
                    .stage
                    .by_name
                    .get(&entry.tool)
                    .is_some_and(|&i| self.stage.tools[i].principal == principal);
                return Ok(ours.then_some(entry));
            }
        }
        Ok(None)
    }

    fn task(&self, entry: &Entry, a: &Async, status: TaskStatus) -> Task {
        let mut task = Task::new(
            task_id(entry),
            status,
            iso8601(entry.created),
            iso8601(entry.updated),
        )
        .with_poll_interval_ms(poll_interval_ms(a))
        // The row decides calls for the retry window after its last write, then goes.
        .with_ttl_ms(self.stage.settings.retry_window.saturating_mul(1000));
        if let Some(job) = &entry.job_id {
            task = task.with_status_message(format!("Job {job} at the provider."));
        }
        task
    }

    /// `tasks/get`: the task's state, with a cancel's open question shown
    /// (`input_required`, handler/tasks/cancel.rs).
    pub(super) async fn get_task(
        &self,
        id: &str,
        who: Option<&str>,
    ) -> Result<GetTaskResult, ErrorData> {
        let state = self.task_state(id, who).await?;
        let row = row_of(id).unwrap_or_default();
        Ok(GetTaskResult::new(self.with_question(row, state.task)))
    }

    /// The task's state, polled from the provider at most once per poll interval, held
    /// once terminal.
    async fn task_state(&self, id: &str, who: Option<&str>) -> Result<GetTaskResult, ErrorData> {
        let unknown = || {
            ErrorData::invalid_params(
                format!(
                    "no task {id} on this server (a task lasts as long as the retry window \
                     after its job started)"
                ),
                None,
            )
        };
        let row = row_of(id).ok_or_else(unknown)?;
        let entry = self
            .own_entry(row, who)
            .await
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?
            .filter(|e| task_id(e) == id && e.status == Status::Job)
            .ok_or_else(unknown)?;
        let served = self
            .stage
            .by_name
            .get(&entry.tool)
            .map(|&i| &self.stage.tools[i])
            .filter(|s| is_job(s))
            .ok_or_else(unknown)?;
        // Ended: as it was kept, never polled again.
        if let Some(ended) = kept_task(&entry) {
            return Ok(GetTaskResult::new(ended));
        }
        let (
            Some(a),
            Some(reply::Poll {
                tool: poll_tool,
                param,
                field,
            }),
            Some(job),
        ) = (served.op.async_.as_ref(), &served.poll, &entry.job_id)
        else {
            return Err(unknown());
        };
        let now = self.stage.sealer.clock().now();
        let interval = poll_interval_ms(a);
        let failures = {
            let mut polled = self.tasks.polled();
            // A state held for another row of the same id cannot be (ids are never used
            // twice), but the task id, which names the row and its key, is checked too.
            let held = polled.get(row).filter(|p| p.task.task.task_id == id);
            if let Some(p) = held
                && (p.task.status().is_terminal()
                    || !due(Some(p.at), now, backoff(interval, p.failures)))
            {
                return Ok(GetTaskResult::new(p.task.clone()));
            }
            let failures = held.map_or(0, |p| p.failures);
            // Marked before the poll goes out: a second `tasks/get` meanwhile is answered
            // from here, not sent.
            let task = held.map_or_else(
                || {
                    DetailedTask::new(
                        self.task(&entry, a, TaskStatus::Working),
                        TaskPayload::Working,
                    )
                },
                |p| p.task.clone(),
            );
            polled.insert(row, now, task, failures);
            failures
        };
        let Some(poll) = self
            .stage
            .by_name
            .get(poll_tool)
            .map(|&i| &self.stage.tools[i])
        else {
            return Err(unknown());
        };
        let mut args = Map::new();
        // An RPC poll target takes the id inside its body argument (`field`).
        let id = Value::String(job.clone());
        let value = match field {
            None => id,
            Some(field) => Value::Object(Map::from_iter([(field.clone(), id)])),
        };
        args.insert(param.clone(), value);
        // The person's own credential polls their job (`auth.perPerson`); without one
        // (disconnected meanwhile) the poll goes out with none and is refused by the
        // provider: the task stays working until they connect again.
        let principal = who.unwrap_or(&served.principal);
        let person = match self.stage.person(poll, principal).await {
            Ok(crate::call::Person::Ready(person)) => person,
            Ok(crate::call::Person::Connect(_)) => None,
            Err(e) => return Err(ErrorData::internal_error(e.to_string(), None)),
        };
        let (task, answered) = self
            .poll_job(&entry, a, poll, person.as_ref(), &args, now)
            .await;
        let failures = if answered {
            0
        } else {
            failures.saturating_add(1)
        };
        let task = match task.payload {
            // Says when the next poll goes out, once polls back off.
            TaskPayload::Working if failures > 1 => {
                let mut task = task;
                let wait = backoff(interval, failures).div_ceil(1000);
                let message = task.task.status_message.take().unwrap_or_default();
                task.task.status_message = Some(format!(
                    "{message} {failures} polls in a row failed: the next is not sent before \
                     {wait} s from now."
                ));
                task
            }
            _ => task,
        };
        self.hold_after(row, now, task.clone(), failures).await;
        Ok(GetTaskResult::new(task))
    }

    /// Holds `task` as row `row`'s state, found at `at`: what `tasks/get` answers until
    /// the next poll is due (for good, once terminal).
    async fn hold(&self, row: i64, at: u64, task: DetailedTask) {
        self.hold_after(row, at, task, 0).await;
    }

    /// `hold`, after `failures` polls in a row that got no answer about the job. A state
    /// the task ended in is kept with the row in the ledger (`Ledger::keep_task`), and in
    /// memory only when the ledger cannot take it.
    async fn hold_after(&self, row: i64, at: u64, task: DetailedTask, failures: u32) {
        let json = if task.status().is_terminal() {
            serde_json::to_string(&task).ok()
        } else {
            None
        };
        let kept = match json {
            Some(json) => matches!(self.stage.ledger.keep_task(row, json).await, Ok(true)),
            None => false,
        };
        let mut polled = self.tasks.polled();
        if kept {
            polled.remove(row);
        } else {
            polled.insert(row, at, task, failures);
        }
    }

    /// One poll of the job of `entry` through the poll target `poll`, as a task state, and
    /// whether the provider answered about the job (false: no connection, an auth
    /// refusal, a rate limit, a 5xx: the task stays working, and polls back off).
    async fn poll_job(
        &self,
        entry: &Entry,
        a: &Async,
        poll: &Served,
        person: Option<&crate::credential::Credential>,
        args: &Map<String, Value>,
        now: u64,
    ) -> (DetailedTask, bool) {
        let mut task = self.task(entry, a, TaskStatus::Working);
        task.last_updated_at = iso8601(now);
        let working = |mut task: Task, message: String| {
            task.status_message = Some(message);
            DetailedTask::new(task, TaskPayload::Working)
        };
        let http = match crate::request::build(
            &poll.mapping,
            args,
            &self.stage.target(poll, person, None),
        ) {
            Ok(http) => http,
            Err(e) => {
                return (
                    failed(task, &format!("the job cannot be polled: {e}")),
                    true,
                );
            }
        };
        let (sent, uri) = self.stage.send(&http).await;
        let response = match sent {
            Ok(response) => response,
            Err(e) => {
                self.stage.redactor.line(
                    "task-poll",
                    json!({"task": task.task_id, "tool": poll.op.id, "error": e.to_string()}),
                );
                return (
                    working(
                        task,
                        format!(
                            "Polling {} failed ({e}); the next tasks/get asks again.",
                            poll.op.id
                        ),
                    ),
                    false,
                );
            }
        };
        self.stage.redactor.line(
            "task-poll",
            json!({"task": task.task_id, "tool": poll.op.id, "status": response.status}),
        );
        match response.status {
            200..=299 => {}
            // The job is gone: the tool ran and reported an error.
            404 | 410 => {
                let answer = mcp_result(reply::answer(
                    &poll.op,
                    &response,
                    &uri,
                    None,
                    None,
                    reply::Retry::Untracked,
                ));
                let status = response.status;
                return (
                    completed(
                        task,
                        ended(
                            answer,
                            &format!("{} answered HTTP {status} for the job.", poll.op.id),
                        ),
                    ),
                    true,
                );
            }
            // Anything else says nothing about the job: the provider is busy, or refuses
            // the poll itself (a rotated credential, a rate limiter, a firewall: 401,
            // 403, 429). The job may well be running, and the task stays working.
            status => {
                let why = match status {
                    401 => " (the credential was refused)",
                    403 => " (the poll was forbidden)",
                    429 => " (rate limited)",
                    500.. => " (the provider failed)",
                    _ => "",
                };
                return (
                    working(
                        task,
                        format!(
                            "Polling {} is failing: it answered HTTP {status}{why}. That says \
                             nothing about the job, which may still be running at the \
                             provider; the task stays working and is polled again.",
                            poll.op.id
                        ),
                    ),
                    false,
                );
            }
        }
        let body: Value = serde_json::from_slice(&response.body).unwrap_or(Value::Null);
        let state = a.status.state(&body);
        let shown = a
            .status
            .value(&body)
            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string));
        let mut result = reply::answer(
            &poll.op,
            &response,
            &uri,
            None,
            None,
            reply::Retry::Untracked,
        );
        if let Some(validator) = &poll.output {
            result = output::checked(&poll.op, result, validator);
        }
        let result = match self
            .stage
            .redactor
            .response(rmcp::model::CallToolResponse::Complete(mcp_result(result)))
        {
            rmcp::model::CallToolResponse::Complete(r) => r,
            _ => rmcp::model::CallToolResult::default(),
        };
        let task = match state {
            JobState::Working => working(
                task,
                match shown {
                    Some(v) => format!("The provider reports {}: {v}.", a.status.field),
                    None => format!("The provider's answer has no {}.", a.status.field),
                },
            ),
            JobState::Done => completed(task, result),
            // SEP-2663: a tool that ran and reported an error is `completed` with
            // `isError: true`; `failed` is for protocol errors.
            JobState::Failed => completed(
                task,
                ended(
                    result,
                    &format!(
                        "The job failed: the provider reports {}: {}.",
                        a.status.field,
                        shown.unwrap_or_default()
                    ),
                ),
            ),
        };
        (task, true)
    }
}
