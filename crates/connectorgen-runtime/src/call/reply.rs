//! What the model and the person read: the tool results `serve` returns, and the
//! consent question.
//!
//! Takes: the provider's answer, or a ledger entry, or the operation's safety layer.
//! Returns: `Answer`s (call/answer.rs) and question texts.
//! Must never: claim something happened that did not (a refused call says "not sent"),
//! or soften the cost: the question quotes the manifest's own cost note and condition.

use serde_json::{Map, Value, json};

use super::answer::{Answer, Block};

mod body;

pub(crate) use body::stored;
use body::{body, replayed};

use crate::client::{HttpResponse, SendError};
use crate::ledger::{Entry, Status};
use connectorgen_core::model::{Operation, Payer, Returns, SpendKind};

/// The `_meta` key of serve's own machine-readable facts on a result.
pub(crate) const META_KEY: &str = "dev.connectorgen/serve";

/// The most of a provider's error body quoted back to the model.
const ERROR_BODY_MAX: usize = 4096;

/// The facts of `value`, an object literal.
fn meta(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(facts) => facts,
        _ => Map::new(),
    }
}

/// What the person is asked, in the manifest's words.
/// `priced`: the amount and the running totals of the budgets (`call::budget::priced`),
/// for a paid call.
pub(crate) fn consent_question(
    op: &Operation,
    args: &Map<String, Value>,
    second: bool,
    priced: Option<&str>,
) -> String {
    let mut parts = Vec::new();
    if second {
        parts.push(format!(
            "An identical {} was already started or done a moment ago; this would be a second, \
             identical one, in addition to the first. Agree only if you want a second, identical \
             one.",
            op.summary.trim_end_matches('.').to_lowercase()
        ));
    }
    if let Some(spends) = &op.spends {
        let what = match spends.kind {
            SpendKind::Money => "This call costs money",
            SpendKind::Credits => "This call uses credits",
        };
        let what = match spends.payer {
            Payer::Person => what.to_string(),
            // The person is asked to authorise a charge to someone else: say so first.
            Payer::Customer => {
                format!("{what} from your customer, not from you: you authorise it on their behalf")
            }
        };
        let mut sentence = format!("{what}: {}", spends.note.trim());
        if let Some(when) = &spends.when {
            sentence.push_str(&format!(" (only when: {})", when.trim()));
        }
        parts.push(sentence);
        parts.extend(priced.map(str::to_string));
    }
    if op.confirm {
        parts.push(match &op.confirm_when {
            Some(when) => format!("It cannot be undone when: {}.", when.trim()),
            None => "It cannot be undone.".to_string(),
        });
    }
    let shown = Value::Object(args.clone());
    let shown = serde_json::to_string_pretty(&shown).unwrap_or_default();
    format!(
        "{} — {}\n{}\nArguments:\n{}",
        op.id,
        op.summary,
        parts.join(" "),
        shown
    )
}

/// Why the person is asked (again).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Why {
    /// A new request that needs their yes.
    Fresh,
    /// The confirmation the call carried was used by a request the provider refused.
    Spent,
    /// The confirmation the call carried is expired or for other arguments.
    NotForThisCall,
    /// An identical request was already started or done: this would be a second one.
    Second,
}

/// The tool error that asks the model to get the person's yes and repeat the call with
/// the token.
pub(crate) fn consent_required(
    op: &Operation,
    question: &str,
    token: &str,
    expires_in: u64,
    why: Why,
) -> Answer {
    let again = match why {
        Why::Spent => {
            "The confirmation this call carried was already used by a request the provider \
             refused. "
        }
        Why::NotForThisCall => {
            "The confirmation this call carried has expired or was given for other arguments. "
        }
        Why::Fresh | Why::Second => "",
    };
    let text = format!(
        "NOT SENT: this call needs the person's explicit yes first. {again}Tell the person \
         exactly what it does:\n\n{question}\n\nOnly if they say yes, call {} again with exactly \
         the same arguments plus \"confirmation\": \"{token}\". That value works once, only for \
         these exact arguments, for {} minutes. Never add it without asking them.",
        op.id,
        expires_in / 60
    );
    let mut result = Answer::error(vec![Block::text(text)]);
    result.facts = meta(json!({
        "consentRequired": true,
        "confirmation": token,
        "expiresInSeconds": expires_in,
    }));
    result
}

/// The person said no (or closed the question).
pub(crate) fn declined(op: &Operation) -> Answer {
    let mut result = Answer::error(vec![Block::text(format!(
        "NOT SENT: the person did not agree to {}. Nothing was charged or changed. Do not retry \
         unless they ask for it.",
        op.id
    ))]);
    result.facts = meta(json!({"declined": true}));
    result
}

/// The person has not connected their own account at the provider: nothing was sent.
/// The link is for the person to open, in their browser; the model only passes it on.
pub(crate) fn connect(op: &Operation, link: &str) -> Answer {
    let mut result = Answer::error(vec![Block::text(format!(
        "NOT SENT: {} needs the person's own account at the provider, which they have not \
         connected yet. Nothing was sent or charged. Ask the person to open this link in \
         their browser and connect their account there (never ask them for a key or password \
         in the chat): {link} . Once they say it is done, make the same call again.",
        op.id
    ))]);
    result.facts = meta(json!({"connectRequired": true, "connectUrl": link}));
    result
}

/// An identical call is out at the provider right now.
pub(crate) fn in_flight(op: &Operation) -> Answer {
    let mut result = Answer::error(vec![Block::text(format!(
        "NOT SENT: the identical {} call is being sent right now. Wait for its answer instead of \
         calling again.",
        op.id
    ))]);
    result.facts = meta(json!({"inFlight": true}));
    result
}

/// The identical call is being sent by another instance sharing the ledger: this caller
/// cannot wait on it, but its next identical call is answered from the row.
pub(crate) fn in_flight_elsewhere(op: &Operation) -> Answer {
    let mut result = Answer::error(vec![Block::text(format!(
        "NOT SENT: the identical {} call is being sent right now by another instance of this \
         server. Make the same call again in a little while: once its answer is recorded, the \
         same call is answered with it, and nothing is sent or charged twice.",
        op.id
    ))]);
    result.facts = meta(json!({"inFlight": true, "elsewhere": true}));
    result
}

/// The identical call was sent before and no answer came, and the provider cannot
/// recognise a repeat (no retry key): sending it again could be a second order, so it is
/// not sent. `second` opens the question about another, identical order: only the person,
/// told the first may have gone through, can ask for it.
pub(crate) fn unknown(
    op: &Operation,
    check: Option<&str>,
    second: &str,
    refused_retry: Option<u16>,
) -> Answer {
    let check = check_sentence(check);
    let why = match refused_retry {
        // Keyed, and the retry was answered: the answer may be the provider's way of
        // saying the key was used already (issue 43).
        Some(status) => format!(
            "the identical {id} call was sent before and no answer came, and its retry with \
             the same retry key was answered HTTP {status}: a provider answers a reused key \
             so when the first attempt went through, so its outcome is unknown: it may have \
             gone through. Sending it again would go out with a new key, as a second order;",
            id = op.id
        ),
        None => format!(
            "the identical {id} call was sent before and no answer came (a timeout or an \
             error), so its outcome is unknown: it may have gone through. The provider cannot \
             recognise a repeat of this call, so sending it again could be a second order;",
            id = op.id
        ),
    };
    let mut result = Answer::error(vec![Block::text(format!(
        "NOT SENT AGAIN: {why} nothing was sent or charged now. {check} Only if the person, \
         knowing the first may have gone through, explicitly asks for another, identical \
         one, call {id} again with \"confirmation\": \"{second}\"{ask}.",
        id = op.id,
        ask = if op.consent() {
            ": that does not send anything, it puts the question about a second order, with its \
             cost or permanence, to the person"
        } else {
            ""
        }
    ))]);
    result.facts = meta(json!({"notSent": true, "outcomeUnknown": true}));
    result
}

/// What the model is told to do about a call that may have gone through: check with the
/// free read that shows it (`checkWith`), or ask the person.
fn check_sentence(check: Option<&str>) -> String {
    match check {
        Some(read) => format!("Check with {read} whether it went through, and tell the person."),
        None => "Ask the person to check whether it went through.".to_string(),
    }
}

/// Appended to the provider's answer to a retry that was not a success (the row is
/// `unknown`): not a refusal, since a reused key is answered so when the first attempt
/// went through; the call is not sent again on its own. `seen`: the answer is the one
/// the manifest says the provider gives a key it has seen (`idempotency.duplicate`).
pub(crate) fn retry_not_success(
    mut result: Answer,
    op: &Operation,
    check: Option<&str>,
    seen: bool,
) -> Answer {
    let check = check_sentence(check);
    let first = if seen {
        format!(
            "The provider answers so when the key was used already: the first {id} went \
             through, and may be charged; this is not a refusal.",
            id = op.id
        )
    } else {
        format!(
            "A provider answers a reused key this way when the first one went through, so do \
             not take this as a refusal: the first {id} may exist and may be charged.",
            id = op.id
        )
    };
    result.content.push(Block::text(format!(
        "NOTE: this was a retry, with the same retry key, of an earlier {id} call that got no \
         answer. {first} It is not sent again on its own: an identical call is answered \
         without sending. {check}",
        id = op.id
    )));
    add_fact(&mut result, "outcomeUnknown", json!(true));
    result
}

/// Put before what `read` found: the retry was answered as a key the provider has seen
/// (`status`), so the first request went through, and this is its result. Nothing new
/// was ordered.
pub(crate) fn first_found(mut result: Answer, op: &Operation, read: &str, status: u16) -> Answer {
    result.content.insert(
        0,
        Block::text(format!(
            "The first {id} went through: this retry, with the same retry key, was answered \
             HTTP {status}, the provider's answer to a key it has seen, and {read} found what \
             the first one made (below). Nothing new was ordered or charged now.",
            id = op.id
        )),
    );
    add_fact(&mut result, "firstFoundWith", json!(read));
    result
}

/// The ledger is at its bound (`--ledger-max-bytes`): a new logical request is not
/// started, since making room would mean forgetting a call that can still be retried.
pub(crate) fn ledger_full(op: &Operation, why: &str) -> Answer {
    let mut result = Answer::error(vec![Block::text(format!(
        "NOT SENT: {why}. {} was not sent and nothing was charged. Calls already made can \
         still be retried or answered; a new one can be made once the oldest leaves the \
         ledger, or after the server is restarted with a larger --ledger-max-bytes.",
        op.id
    ))]);
    result.facts = meta(json!({"ledgerFull": true}));
    result
}

/// Appended to an answer whose outcome the ledger could not record: this process holds
/// it instead, so the identical call is answered, not sent again, until it ends.
pub(crate) fn unrecorded(mut result: Answer, error: &str) -> Answer {
    result.content.push(Block::text(format!(
        "NOTE: this outcome could not be recorded in the ledger ({error}). This server keeps \
         it in memory and answers the identical call from there, without sending it again, \
         for as long as it runs; after a restart the identical call would be sent again as a \
         retry of the same request (the same retry key). Free the disk before restarting."
    )));
    add_fact(&mut result, "unrecorded", json!(error));
    result
}

/// Adds one fact to the server's facts of `result`, keeping the facts already there.
pub(crate) fn add_fact(result: &mut Answer, key: &str, value: Value) {
    result.facts.insert(key.into(), value);
}

/// The poll hint of an async operation: which tool, and the argument that takes the job
/// id — a path parameter's (`GET /labels/{labelId}`), or, for an RPC-style poll (a
/// `read: true` POST), the body field's (`handle`), or `field` of the whole-body argument
/// when the tool takes the body as one.
#[derive(Debug, Clone)]
pub(crate) struct Poll {
    pub tool: String,
    pub param: String,
    pub field: Option<String>,
}

impl Poll {
    /// The call that follows job `id`, as the model writes it: `getLabel (labelId:
    /// "lbl_7")`, or `getTranscript (body: {"handle": "tr_9"})`.
    pub(crate) fn call(&self, id: &str) -> String {
        let quoted = |s: &str| serde_json::to_string(s).unwrap_or_default();
        match &self.field {
            None => format!("{} ({}: {})", self.tool, self.param, quoted(id)),
            Some(field) => format!(
                "{} ({}: {{{}: {}}})",
                self.tool,
                self.param,
                quoted(field),
                quoted(id)
            ),
        }
    }
}

/// The outcome of the identical call this one waited for: it was sent once, and both
/// calls get its answer.
pub(crate) fn shared(mut result: Answer) -> Answer {
    add_fact(&mut result, "sharedWithIdenticalCall", json!(true));
    result.content.insert(
        0,
        Block::text(
            "An identical call was being sent when this one came; it was sent once, and this \
             is its answer."
                .to_string(),
        ),
    );
    result
}

/// This exact call already started a job or succeeded: the stored answer, not sent again.
/// `second` is the value that opens the question about a second, identical order: it
/// never opens the order itself, so a model relaying it still has the person asked.
/// The stored answer goes out as the first one did (`body`: JSON as structured content,
/// text as text, bytes as a resource of their media type), at `uri`.
pub(crate) fn already(
    op: &Operation,
    entry: &Entry,
    poll: Option<&Poll>,
    second: &str,
    uri: &str,
) -> Answer {
    let job = entry.job_id.as_deref();
    let mut text = match (entry.status, poll, job) {
        (Status::Job, Some(p), Some(id)) => format!(
            "NOT SENT AGAIN: this exact call already started a job ({id}). Its current status is \
             not known here: follow it with {}; calling {} again does not make it faster, and \
             nothing was charged now.",
            p.call(id),
            op.id
        ),
        (Status::Job, Some(p), None) => format!(
            "NOT SENT AGAIN: this exact call already started a job. Its current status is not \
             known here: follow it with {}; nothing was charged now.",
            p.tool
        ),
        _ => "NOT SENT AGAIN: this exact call already succeeded. Nothing was sent or charged \
              now."
            .to_string(),
    };
    let first = replayed(entry);
    if let Some(response) = &first {
        text.push_str(&format!(
            " Below is the provider's answer to the first call, as it was then (HTTP {} at the \
             first call): any status in it is the status at the first call, not now.",
            response.status
        ));
    }
    text.push_str(&format!(
        " Only if the person explicitly asks for a second, identical one, call {} again with \
         \"confirmation\": \"{second}\"{}.",
        op.id,
        if op.consent() {
            ": that does not send anything, it puts the question about a second order, with its \
             cost or permanence, to the person"
        } else {
            ""
        }
    ));
    let mut content = vec![Block::text(text)];
    let mut structured = None;
    if let Some(response) = &first {
        let (blocks, value) = body(response, uri);
        content.extend(blocks);
        structured = value;
    }
    let mut result = Answer::success(content);
    result.structured_content = structured;
    result.facts = meta(json!({
        "notSent": true,
        "jobId": job,
        "statusAtFirstCall": entry.status_name(),
        "httpStatusAtFirstCall": entry.http_status,
        "answeredAt": entry.updated,
        "secondOrder": second,
    }));
    result
}

/// How a call that may have reached the provider can be repeated, as serve sends it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Retry<'a> {
    /// Not tracked (a read): nothing is recorded, so nothing is known about a repeat.
    Untracked,
    /// The same retry key goes out again (serve's own, or the one in the arguments):
    /// a provider that honours it answers with the first result.
    SameKey,
    /// Repeating it cannot do it twice (`idempotency: inherent`).
    Inherent,
    /// The provider cannot recognise a repeat (`unsupported`, or no key known): a
    /// second call may be a second order. `check` is the free read that shows whether
    /// the first went through (the job list, the thing a change settles on), if any.
    CheckFirst { check: Option<&'a str> },
}

/// What the model is told to do about a call whose outcome is not known.
fn retry_advice(retry: Retry<'_>) -> String {
    match retry {
        Retry::Untracked => "The provider may have received it; check before calling again.".into(),
        Retry::SameKey => "The provider may have received it. Calling again with the same \
            arguments is safe: it is sent as a retry of the same request (the same retry key)."
            .into(),
        Retry::Inherent => "The provider may have received it. Calling again with the same \
            arguments is safe: repeating this call cannot do it twice."
            .into(),
        Retry::CheckFirst { check } => {
            let check = match check {
                Some(tool) => format!(
                    "First check with {tool} whether it went through, and ask \
                    the person before calling again."
                ),
                None => "Ask the person before calling again.".to_string(),
            };
            format!(
                "The provider may have received it, and it cannot recognise a repeat: calling \
                 again may do it a second time (a second job, a second charge). Do not call \
                 again on your own. {check}"
            )
        }
    }
}

/// A request that could not be sent or got no answer.
pub(crate) fn send_failed(op: &Operation, error: &SendError, retry: Retry<'_>) -> Answer {
    let advice = if error.maybe_sent() {
        retry_advice(retry)
    } else {
        "Nothing reached the provider.".to_string()
    };
    let mut result = Answer::error(vec![Block::text(format!(
        "{} failed: {error}. {advice}",
        op.id
    ))]);
    result.facts = meta(json!({"sendError": error.to_string()}));
    result
}

/// A 3xx that reached the handler: a redirect the client did not follow (no usable
/// `Location`, or a status it does not follow such as 300 or 304). The provider
/// received the request and did not answer it: not a success, not a job.
fn unfollowed(op: &Operation, response: &HttpResponse, retry: Retry<'_>) -> Answer {
    let location = response
        .header("location")
        .map_or_else(|| "no Location".to_string(), |l| format!("Location {l}"));
    let mut result = Answer::error(vec![Block::text(format!(
        "{} failed: the provider answered HTTP {} ({location}), a redirect that was not \
         followed, so there is no answer. {}",
        op.id,
        response.status,
        retry_advice(retry)
    ))]);
    result.facts = meta(json!({"status": response.status, "redirectNotFollowed": true}));
    result
}

/// The provider's answer as a tool result: JSON as `structuredContent` with a text
/// copy, text as text, anything else as an embedded resource; a status of 400 or more
/// is a tool error carrying the status and the body.
pub(crate) fn answer(
    op: &Operation,
    response: &HttpResponse,
    uri: &str,
    poll: Option<&Poll>,
    job_id: Option<&str>,
    retry: Retry<'_>,
) -> Answer {
    if (300..400).contains(&response.status) {
        return unfollowed(op, response, retry);
    }
    if response.status >= 400 {
        let body = String::from_utf8_lossy(&response.body);
        let mut quoted: String = body.chars().take(ERROR_BODY_MAX).collect();
        if quoted.len() < body.len() {
            quoted.push_str(" […]");
        }
        let mut result = Answer::error(vec![Block::text(format!(
            "The provider answered HTTP {} to {}:\n{quoted}",
            response.status, op.id
        ))]);
        result.facts = meta(json!({"status": response.status}));
        return result;
    }
    let (mut content, structured) = body(response, uri);
    if let (Some(a), Some(p)) = (&op.async_, poll) {
        let hint = match (a.returns, job_id) {
            (Returns::Job, Some(id)) => format!(
                "Started a job ({id}). Follow it with {}{}; do not call {} again for this: a \
                 second call would start a second job.",
                p.call(id),
                a.typical_seconds
                    .map(|s| format!(", typically done in about {s} seconds"))
                    .unwrap_or_default(),
                op.id
            ),
            (Returns::Job, None) => format!("Started a job. Follow it with {}.", p.tool),
            (Returns::Change, _) => format!(
                "Accepted; it settles in the background. {} shows the result.",
                p.tool
            ),
        };
        content.push(Block::text(hint));
    }
    let mut result = Answer::success(content);
    result.structured_content = structured;
    result.facts = meta(json!({"status": response.status, "jobId": job_id}));
    result
}
