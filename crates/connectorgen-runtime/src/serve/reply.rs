//! What the model and the person read: the tool results `serve` returns, and the
//! consent question.
//!
//! Takes: the provider's answer, or a ledger entry, or the operation's safety layer.
//! Returns: `CallToolResult`s and question texts.
//! Must never: claim something happened that did not (a refused call says "not sent"),
//! or soften the cost: the question quotes the manifest's own cost note and condition.

use base64::Engine as _;
use rmcp::model::{CallToolResult, ContentBlock, MetaObject, ResourceContents};
use serde_json::{Map, Value, json};

use crate::client::{HttpResponse, SendError};
use crate::ledger::{Entry, Status};
use connectorgen_core::model::{Operation, Payer, Returns, SpendKind};

/// The `_meta` key of serve's own machine-readable facts on a result.
pub(crate) const META_KEY: &str = "dev.connectorgen/serve";

/// The most of a provider's error body quoted back to the model.
const ERROR_BODY_MAX: usize = 4096;

#[expect(
    clippy::unnecessary_wraps,
    reason = "every caller sets `CallToolResult::meta`, an Option"
)]
fn meta(value: Value) -> Option<MetaObject> {
    let mut map = Map::new();
    map.insert(META_KEY.into(), value);
    Some(MetaObject(map))
}

/// What the person is asked, in the manifest's words.
pub(crate) fn consent_question(op: &Operation, args: &Map<String, Value>, second: bool) -> String {
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
) -> CallToolResult {
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
    let mut result = CallToolResult::error(vec![ContentBlock::text(text)]);
    result.meta = meta(json!({
        "consentRequired": true,
        "confirmation": token,
        "expiresInSeconds": expires_in,
    }));
    result
}

/// The person said no (or closed the question).
pub(crate) fn declined(op: &Operation) -> CallToolResult {
    let mut result = CallToolResult::error(vec![ContentBlock::text(format!(
        "NOT SENT: the person did not agree to {}. Nothing was charged or changed. Do not retry \
         unless they ask for it.",
        op.id
    ))]);
    result.meta = meta(json!({"declined": true}));
    result
}

/// An identical call is out at the provider right now.
pub(crate) fn in_flight(op: &Operation) -> CallToolResult {
    let mut result = CallToolResult::error(vec![ContentBlock::text(format!(
        "NOT SENT: the identical {} call is being sent right now. Wait for its answer instead of \
         calling again.",
        op.id
    ))]);
    result.meta = meta(json!({"inFlight": true}));
    result
}

/// The ledger is at its bound (`--ledger-max-bytes`): a new logical request is not
/// started, since making room would mean forgetting a call that can still be retried.
pub(crate) fn ledger_full(op: &Operation, why: &str) -> CallToolResult {
    let mut result = CallToolResult::error(vec![ContentBlock::text(format!(
        "NOT SENT: {why}. {} was not sent and nothing was charged. Calls already made can \
         still be retried or answered; a new one can be made once the oldest leaves the \
         ledger, or after the server is restarted with a larger --ledger-max-bytes.",
        op.id
    ))]);
    result.meta = meta(json!({"ledgerFull": true}));
    result
}

/// Appended to an answer whose outcome the ledger could not record: this process holds
/// it instead, so the identical call is answered, not sent again, until it ends.
pub(crate) fn unrecorded(mut result: CallToolResult, error: &str) -> CallToolResult {
    result.content.push(ContentBlock::text(format!(
        "NOTE: this outcome could not be recorded in the ledger ({error}). This server keeps \
         it in memory and answers the identical call from there, without sending it again, \
         for as long as it runs; after a restart the identical call would be sent again as a \
         retry of the same request (the same retry key). Free the disk before restarting."
    )));
    let facts = result
        .meta
        .get_or_insert_with(|| MetaObject(Map::new()))
        .0
        .entry(META_KEY)
        .or_insert_with(|| json!({}));
    if let Value::Object(facts) = facts {
        facts.insert("unrecorded".into(), json!(error));
    }
    result
}

/// The poll hint of an async operation: which tool, and the job id to give it.
pub(crate) struct Poll<'a> {
    pub tool: &'a str,
    pub param: &'a str,
}

/// The outcome of the identical call this one waited for: it was sent once, and both
/// calls get its answer.
pub(crate) fn shared(mut result: CallToolResult) -> CallToolResult {
    let mut facts = result
        .meta
        .as_ref()
        .and_then(|m| m.0.get(META_KEY))
        .cloned()
        .unwrap_or_else(|| json!({}));
    facts["sharedWithIdenticalCall"] = json!(true);
    result.meta = meta(facts);
    result.content.insert(
        0,
        ContentBlock::text(
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
pub(crate) fn already(
    op: &Operation,
    entry: &Entry,
    poll: Option<&Poll<'_>>,
    second: &str,
) -> CallToolResult {
    let stored: Option<Value> = entry
        .result
        .as_deref()
        .and_then(|text| serde_json::from_str(text).ok());
    let job = entry.job_id.as_deref();
    let mut text = match (entry.status, poll, job) {
        (Status::Job, Some(p), Some(id)) => format!(
            "NOT SENT AGAIN: this exact call already started a job ({id}). Its current status is \
             not known here: follow it with {} ({}: \"{id}\"); calling {} again does not make it \
             faster, and nothing was charged now.",
            p.tool, p.param, op.id
        ),
        (Status::Job, Some(p), None) => format!(
            "NOT SENT AGAIN: this exact call already started a job. Its current status is not \
             known here: follow it with {}; nothing was charged now.",
            p.tool
        ),
        _ => "NOT SENT AGAIN: this exact call already succeeded a moment ago. Nothing was sent \
              or charged now."
            .to_string(),
    };
    if entry.result.is_some() {
        text.push_str(
            " Below is the provider's answer to the first call, as it was then (any status in it \
             is the status at the first call, not now).",
        );
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
    let mut content = vec![ContentBlock::text(text)];
    if let Some(result) = &entry.result {
        content.push(ContentBlock::text(result.clone()));
    }
    let mut result = CallToolResult::success(content);
    result.structured_content = stored.filter(Value::is_object);
    result.meta = meta(json!({
        "notSent": true,
        "jobId": job,
        "statusAtFirstCall": entry.status_name(),
        "answeredAt": entry.updated,
        "secondOrder": second,
    }));
    result
}

/// A request that could not be sent or got no answer.
pub(crate) fn send_failed(op: &Operation, error: &SendError, retry_safe: bool) -> CallToolResult {
    let advice = if !error.maybe_sent() {
        "Nothing reached the provider."
    } else if retry_safe {
        "The provider may have received it. Calling again with the same arguments is safe: it is \
         sent as a retry of the same request (the same retry key)."
    } else {
        "The provider may have received it; check before calling again."
    };
    let mut result = CallToolResult::error(vec![ContentBlock::text(format!(
        "{} failed: {error}. {advice}",
        op.id
    ))]);
    result.meta = meta(json!({"sendError": error.to_string()}));
    result
}

/// The provider's answer as a tool result: JSON as `structuredContent` with a text
/// copy, text as text, anything else as an embedded resource; a status of 400 or more
/// is a tool error carrying the status and the body.
pub(crate) fn answer(
    op: &Operation,
    response: &HttpResponse,
    uri: &str,
    poll: Option<&Poll<'_>>,
    job_id: Option<&str>,
) -> CallToolResult {
    let content_type = response.header("content-type").unwrap_or_default();
    let essence = connectorgen_core::model::media_essence(content_type);
    let is_json = essence == "application/json" || essence.ends_with("+json");
    let is_text = essence.starts_with("text/")
        || is_json
        || essence.ends_with("+xml")
        || essence == "application/xml";
    if response.status >= 400 {
        let body = String::from_utf8_lossy(&response.body);
        let mut quoted: String = body.chars().take(ERROR_BODY_MAX).collect();
        if quoted.len() < body.len() {
            quoted.push_str(" […]");
        }
        let mut result = CallToolResult::error(vec![ContentBlock::text(format!(
            "The provider answered HTTP {} to {}:\n{quoted}",
            response.status, op.id
        ))]);
        result.meta = meta(json!({"status": response.status}));
        return result;
    }
    let mut content = Vec::new();
    let mut structured = None;
    if response.body.is_empty() {
        content.push(ContentBlock::text(format!(
            "Done: the provider answered HTTP {} with no body.",
            response.status
        )));
    } else if is_json && let Ok(value) = serde_json::from_slice::<Value>(&response.body) {
        content.push(ContentBlock::text(
            String::from_utf8_lossy(&response.body).into_owned(),
        ));
        structured = Some(value);
    } else if is_text || std::str::from_utf8(&response.body).is_ok() && essence.is_empty() {
        content.push(ContentBlock::text(
            String::from_utf8_lossy(&response.body).into_owned(),
        ));
    } else {
        let blob = base64::engine::general_purpose::STANDARD.encode(&response.body);
        let mut resource = ResourceContents::blob(blob, uri);
        if !essence.is_empty()
            && let ResourceContents::BlobResourceContents { mime_type, .. } = &mut resource
        {
            *mime_type = Some(content_type.to_string());
        }
        content.push(ContentBlock::resource(resource));
    }
    if let (Some(a), Some(p)) = (&op.async_, poll) {
        let hint = match (a.returns, job_id) {
            (Returns::Job, Some(id)) => format!(
                "Started a job ({id}). Follow it with {} ({}: \"{id}\"){}; do not call {} again for \
                 this: a second call would start a second job.",
                p.tool,
                p.param,
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
        content.push(ContentBlock::text(hint));
    }
    let mut result = CallToolResult::success(content);
    result.structured_content = structured;
    result.meta = meta(json!({"status": response.status, "jobId": job_id}));
    result
}
