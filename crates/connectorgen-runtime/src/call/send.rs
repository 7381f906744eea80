//! Carrying out a verdict that is not a question: the send and the record of its outcome,
//! or the answer from the ledger (a started job, an outcome not known, the identical call
//! being sent).
//!
//! Takes: a served tool, the arguments and the claim's verdict. Returns: the answer the
//! model reads, with the ledger row it concerns.
//! Must never: send for a verdict that is not `Send`, or leave an outcome unrecorded
//! without holding it (`Calls::hold_outcome`), since the identical call would then be
//! sent again.

use serde_json::{Map, Value, json};

use super::claim::Claimed;
use super::reply;
use super::{Answer, Block, Outcome, Served, Stage, retry_of};
use crate::client::{HttpRequest, HttpResponse, SendError};
use crate::credential::Credential;
use crate::guard::Verdict;
use crate::ledger::{self, Entry, Status};
use crate::request;
use crate::seal::Purpose;
use connectorgen_core::model::{Operation, Returns};

impl Stage {
    /// `act`, with the row the answer concerns: the row just sent, or the one a
    /// resubmitted identical call found (for a caller that follows jobs as tasks, the
    /// same task).
    pub(super) async fn acted<L>(
        &self,
        served: &Served,
        principal: &str,
        person: Option<&Credential>,
        args: &Map<String, Value>,
        claimed: Claimed<'_>,
    ) -> Outcome<L> {
        // The identical call made while the create is out waits for it (`act`), and then
        // gets the same row: one job, one way to follow it.
        let row = match &claimed.verdict {
            Verdict::Send { entry, .. }
            | Verdict::Answer { entry }
            | Verdict::InFlight { entry } => Some(entry.id),
            _ => None,
        };
        let answer = self.act(served, principal, person, args, claimed).await;
        Outcome::Answer { answer, row }
    }

    /// The value that opens the question about a second, identical order of this call
    /// (after a started job, or an attempt whose outcome is unknown): never the order
    /// itself, so a model relaying it still has the person asked.
    fn second_order_value(
        &self,
        principal: &str,
        tool: &str,
        hash: &str,
        after: Option<i64>,
    ) -> String {
        let nonce = self.sealer.nonce_for(principal, tool, hash, after);
        self.sealer
            .issue(Purpose::Second, principal, tool, hash, &nonce)
            .token
    }

    /// Carries out a verdict that is not a question.
    async fn act(
        &self,
        served: &Served,
        principal: &str,
        person: Option<&Credential>,
        args: &Map<String, Value>,
        claimed: Claimed<'_>,
    ) -> Answer {
        let op = &served.op;
        let hash = crate::args_hash(args);
        let Claimed {
            verdict,
            after,
            sending,
            waiting,
            ..
        } = claimed;
        match verdict {
            Verdict::Send { entry, retry } => {
                let result = self
                    .forward(served, principal, person, args, Some((&entry, retry)))
                    .await;
                if let Some(sending) = sending {
                    // Every identical call that waited on this one gets its outcome.
                    sending.tx.send_replace(Some(result.clone()));
                }
                result
            }
            Verdict::Answer { entry } => {
                let second = self.second_order_value(principal, &op.id, &hash, after);
                self.refuse(
                    &op.id,
                    "already-started",
                    json!({"jobId": entry.job_id, "status": entry.status_name()}),
                );
                let poll = served.poll.clone();
                // The resource address of a replayed body: the request's URL, as on the
                // first answer.
                let uri = request::build(
                    &served.mapping,
                    args,
                    &self.target(served, person, Some(&entry.key)),
                )
                .map(|r| r.url.split('?').next().unwrap_or_default().to_string())
                .unwrap_or_default();
                let answer = reply::already(op, &entry, poll.as_ref(), &second, &uri);
                match self.calls.unrecorded_error(entry.id) {
                    Some(error) => reply::unrecorded(answer, &error),
                    None => answer,
                }
            }
            Verdict::Unknown { entry } => {
                let second = self.second_order_value(principal, &op.id, &hash, after);
                self.refuse(
                    &op.id,
                    "outcome-unknown",
                    json!({"attempts": entry.attempts}),
                );
                let refused_retry = (entry.status == Status::Unknown)
                    .then_some(entry.http_status)
                    .flatten();
                reply::unknown(op, served.check_with.as_deref(), &second, refused_retry)
            }
            Verdict::InFlight { entry } => {
                self.refuse(&op.id, "in-flight", json!({}));
                let Some(mut waiting) = waiting else {
                    return if entry.sending {
                        reply::in_flight_elsewhere(op)
                    } else {
                        reply::in_flight(op)
                    };
                };
                match waiting.wait_for(Option::is_some).await {
                    Ok(outcome) => reply::shared((*outcome).clone().unwrap_or_default()),
                    // The call being sent went away (its client hung up): its row is still
                    // open, so the next identical call is a retry with the same key.
                    Err(_) => reply::in_flight(op),
                }
            }
            Verdict::AskConsent { .. } => {
                // `run` asks before acting; reaching here means a second claim asked again.
                self.refuse(&op.id, "consent-required", json!({}));
                reply::declined(op)
            }
            Verdict::OverBudget(_) => {
                // `run` answers a call over a budget before acting: not reached.
                self.refuse(&op.id, "over-budget", json!({}));
                Answer::error(vec![Block::text(format!(
                    "NOT SENT: {} would pass a spending limit. Nothing was sent or charged.",
                    op.id
                ))])
            }
        }
    }

    /// Sends `http`, its answer redacted as it arrives (so the ledger, the answer and any
    /// cut of it hold no secret the provider echoed), and the resource address: the
    /// URL without its query.
    pub(crate) async fn send(
        &self,
        http: &HttpRequest,
    ) -> (Result<HttpResponse, SendError>, String) {
        let sent = self
            .client
            .send(http)
            .await
            .map(|response| self.redactor.http_response(response));
        let uri = http.url.split('?').next().unwrap_or_default().to_string();
        (sent, uri)
    }

    /// Builds and sends the request; for a tracked call records the outcome on `entry`.
    pub(super) async fn forward(
        &self,
        served: &Served,
        principal: &str,
        person: Option<&Credential>,
        args: &Map<String, Value>,
        tracked: Option<(&Entry, bool)>,
    ) -> Answer {
        let op = &served.op;
        let key = tracked.map(|(e, _)| e.key.as_str());
        let http = match request::build(&served.mapping, args, &self.target(served, person, key)) {
            Ok(r) => r,
            Err(e) => {
                self.refuse(&op.id, "bad-arguments", json!({"problem": e.to_string()}));
                return Answer::error(vec![Block::text(format!("NOT SENT: {e}"))]);
            }
        };
        let started = std::time::Instant::now();
        let (sent, uri) = self.send(&http).await;
        let ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let mut fields = forwarded_fields(served, &http, ms, tracked);
        let now = self.sealer.clock().now();
        match sent {
            Ok(response) => {
                fields["status"] = json!(response.status);
                self.redactor.line("forwarded", fields);
                let retry = tracked.is_some_and(|(_, retry)| retry);
                // A retry the provider answered as a key it has seen
                // (`idempotency.duplicate`): the first request went through, and its
                // result is read by the key where the manifest says how.
                let seen = retry
                    && op
                        .key()
                        .and_then(|k| k.duplicate.as_ref())
                        .is_some_and(|d| d.matches(response.status, &response.body));
                let found = match tracked {
                    Some((entry, _)) if seen => self.found_by_key(served, person, entry).await,
                    _ => None,
                };
                let seen_status = response.status;
                let (response, uri, found_with) = match found {
                    Some(found) => (found.response, found.uri, Some(found.read)),
                    None => (response, uri, None),
                };
                let job_id = job_id(served, &response);
                let mut unrecorded = None;
                let mut retry_unknown = false;
                if let Some((entry, _)) = tracked {
                    // What the read found is the first request's own answer.
                    let outcome =
                        outcome(op, &response, job_id.clone(), retry && found_with.is_none());
                    retry_unknown = outcome.status == Status::Unknown;
                    if let Err(e) = self.ledger.finish(entry.id, outcome.clone(), now).await {
                        let error = e.to_string();
                        self.redactor
                            .line("error", json!({"tool": op.id, "ledger": error}));
                        // A row left pending would make the identical call a retry, sent
                        // again; an open outcome (a 5xx) is pending anyway.
                        if outcome.status != Status::Pending {
                            self.calls.hold_outcome(entry.id, outcome, error.clone());
                            unrecorded = Some(error);
                        }
                    }
                }
                let poll = served.poll.clone();
                let retry = retry_of(served, tracked.is_some());
                let mut answer =
                    reply::answer(op, &response, &uri, poll.as_ref(), job_id.as_deref(), retry);
                if let Some(read) = &found_with {
                    answer = reply::first_found(answer, op, read, seen_status);
                } else if retry_unknown {
                    answer =
                        reply::retry_not_success(answer, op, served.check_with.as_deref(), seen);
                }
                if seen_status == 401 && served.per_person {
                    answer = self.refused_sign_in(answer, principal).await;
                }
                match unrecorded {
                    Some(error) => reply::unrecorded(answer, &error),
                    None => answer,
                }
            }
            Err(error) => {
                fields["error"] = json!(error.to_string());
                self.redactor.line("forwarded", fields);
                // The row stays pending: a retry is sent with the same key (when the
                // operation has one: the advice says which).
                reply::send_failed(op, &error, retry_of(served, tracked.is_some()))
            }
        }
    }
}

impl Stage {
    /// A person's own credential refused by the provider (`401`): their OAuth grant is
    /// refreshed once (renewed: the call can be made again; refused: they connect again),
    /// and an API key is theirs to replace. Never sent again on its own.
    async fn refused_sign_in(&self, mut answer: Answer, principal: &str) -> Answer {
        let Some(people) = &self.people else {
            return answer;
        };
        let note = match &people.way {
            connectorgen_core::model::PerPerson::OAuth(_) => {
                match people.unauthorized(principal).await {
                    Ok(true) => "NOTE: the provider refused the person's sign-in, and serve \
                                 renewed it. This call did nothing; it can be made again."
                        .to_string(),
                    Ok(false) => format!(
                        "NOTE: the person's connection to their account has ended. Ask them to \
                         open this link in their browser to connect again before the next \
                         call: {} .",
                        people.link(principal)
                    ),
                    Err(e) => format!(
                        "NOTE: the provider refused the person's sign-in, and it could not be \
                         renewed ({e}). Try again later."
                    ),
                }
            }
            connectorgen_core::model::PerPerson::ApiKey { .. } => format!(
                "NOTE: the provider refused the person's own key. They can replace it on their \
                 page: {} .",
                people.link(principal)
            ),
        };
        answer.content.push(Block::text(note));
        answer
    }
}

/// The fields of a `forwarded` log line. `key` is the retry key the request carried, so a
/// call whose operation takes none (`idempotency: unsupported`) shows none, though its
/// ledger row still has one (the ledger's own identity for the logical request).
pub(super) fn forwarded_fields(
    served: &Served,
    http: &HttpRequest,
    ms: u64,
    tracked: Option<(&Entry, bool)>,
) -> Value {
    let mut fields = json!({
        "tool": served.op.id,
        "method": http.method.as_str(),
        "url": http.url,
        "ms": ms,
    });
    if let Some((entry, retry)) = tracked {
        if served.mapping.idempotency.is_some() {
            fields["key"] = json!(entry.key);
        }
        fields["retry"] = json!(retry);
        fields["attempt"] = json!(entry.attempts);
    }
    fields
}

/// The job id an async operation's answer names, where validation said it is
/// (`Async::id_fields`: `async.idField`, or what the poll target's parameter and the
/// answer's schema point at, `object_id` among them).
pub(super) fn job_id(served: &Served, response: &HttpResponse) -> Option<String> {
    let a = served.op.async_.as_ref()?;
    if a.returns != Returns::Job || response.status >= 300 {
        return None;
    }
    let body: Value = serde_json::from_slice(&response.body).ok()?;
    a.job_id(&body)
}

/// How an answer leaves the logical request: 2xx answered; an unfollowed 3xx, 408, 409,
/// 425, 429 and 5xx unknown (a retry with the same key is right); any other 4xx refused.
/// A `retry` (the same key sent again after an attempt that got no answer) answered with
/// a refusal or a 409 is `Unknown`: a provider answers a reused key so when the first
/// attempt went through (`422 … must be unique`, `409 Conflict`), so it is neither
/// refused nor sent again on its own.
pub(super) fn outcome(
    op: &Operation,
    response: &HttpResponse,
    job_id: Option<String>,
    retry: bool,
) -> ledger::Outcome {
    let status = match response.status {
        200..=299
            if op
                .async_
                .as_ref()
                .is_some_and(|a| a.returns == Returns::Job) =>
        {
            Status::Job
        }
        200..=299 => Status::Done,
        409 if retry => Status::Unknown,
        // A 3xx here is a redirect the client did not follow: the provider received the
        // request and gave no answer, so the outcome is unknown (not a job, not done).
        300..=399 | 408 | 409 | 425 | 429 | 500.. => Status::Pending,
        _ if retry => Status::Unknown,
        _ => Status::Rejected,
    };
    // Kept so that a replay is the same answer: text as text, bytes as base64, with the
    // media type (a replayed `audio/mpeg` answer is the same resource).
    let (result, media_type) = if response.status < 300 && response.body.len() <= 1024 * 1024 {
        let (body, media) = reply::stored(response);
        (Some(body), media)
    } else {
        (None, None)
    };
    ledger::Outcome {
        status,
        http_status: Some(response.status),
        job_id,
        result,
        media_type,
    }
}
