//! Asking the person: which way this client allows, the consent a call carries
//! (a relayed confirmation, or the answer to an input-required round trip), and the
//! question itself (a form elicitation, or a tool error with a confirmation value).
//!
//! Takes: the call, the client's capabilities and revision, and the ledger row the
//! logical request would follow. Returns: the request's nonce when the person said yes,
//! or the result that asks them.
//!
//! One question per logical request: the value, the `requestState` and the form all
//! name the nonce `Sealer::nonce_for` derives, so the same call asked about twice before
//! the person answers is one question (a second form for it is not shown: the call
//! waits for the first form's answer), and two yeses are one order.
//! Must never: treat anything but the server's own sealed value, or the person's
//! accepted form, as a yes.

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ElicitRequest, ElicitRequestParams, ElicitationAction,
    ErrorData, InputRequest, InputRequests, InputRequiredResult, ProtocolVersion,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Map, Value, json};

use super::{CONSENT_INPUT, Served, Shared};
use crate::seal::{Purpose, TOKEN_LIFETIME_SECONDS};
use crate::serve::reply::{self, Why};

/// Which way consent can be asked of this client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Asking {
    /// 2026-07-28: an input-required result with a form elicitation.
    RoundTrip,
    /// Earlier revisions with the elicitation capability: `elicitation/create`.
    Elicit,
    /// No elicitation: a tool error with a confirmation value.
    Token,
}

pub(super) fn asking(context: &RequestContext<RoleServer>) -> Asking {
    let form = context
        .client_capabilities()
        .and_then(|c| c.elicitation)
        .is_some_and(|e| e.form.is_some() || e.url.is_none());
    let round_trip = context
        .protocol_version()
        .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28);
    match (form, round_trip) {
        (false, _) => Asking::Token,
        (true, true) => Asking::RoundTrip,
        (true, false) => Asking::Elicit,
    }
}

/// A consent the call carries, and where it came from.
pub(super) enum Consent {
    None,
    /// A `confirmation` that opened: its nonce.
    Token(String),
    /// The person accepted the question just now (round trip or elicitation): a fresh
    /// nonce for a new logical request.
    Given(String),
    /// The person declined.
    Declined,
    /// A confirmation or request state that did not open for this call.
    Invalid,
    /// The value "NOT SENT AGAIN" offers: the person asked for a second, identical
    /// order, which is put to them as its own question.
    Second,
}

/// A form shown (or answered yes) for one nonce; an identical call waits on it.
pub(super) struct Question {
    answer: tokio::sync::watch::Receiver<Option<bool>>,
    /// A yes is remembered as long as a confirmation value would stay good.
    until: u64,
}

impl Shared {
    pub(super) fn consent_of(
        &self,
        request: &CallToolRequestParams,
        tool: &str,
        hash: &str,
        token: Option<&str>,
    ) -> Consent {
        if let Some(state) = &request.request_state {
            let Ok(opened) = self.sealer.open(Purpose::RequestState, tool, hash, state) else {
                return Consent::Invalid;
            };
            let answer = request
                .input_responses
                .as_ref()
                .and_then(|r| r.get(CONSENT_INPUT));
            return match answer {
                Some(a) if accepted(a) => Consent::Given(opened.nonce),
                Some(_) => Consent::Declined,
                None => Consent::Invalid,
            };
        }
        match token {
            Some(token) => match self.sealer.open(Purpose::Confirmation, tool, hash, token) {
                Ok(opened) => Consent::Token(opened.nonce),
                Err(_) if self.sealer.open(Purpose::Second, tool, hash, token).is_ok() => {
                    Consent::Second
                }
                Err(_) => Consent::Invalid,
            },
            None => Consent::None,
        }
    }

    /// Asks the person (or has the model ask them) about the logical request that
    /// follows ledger row `after`. `Given` when they said yes in an elicitation just now
    /// (or in the form an identical call showed them).
    #[expect(
        clippy::too_many_arguments,
        reason = "the call, its identity and the way to ask, all needed here"
    )]
    pub(super) async fn ask(
        &self,
        served: &Served,
        args: &Map<String, Value>,
        hash: &str,
        how: Asking,
        why: Why,
        after: Option<i64>,
        context: &RequestContext<RoleServer>,
    ) -> Result<Asked, ErrorData> {
        let op = &served.op;
        let second = why == Why::Second;
        let question = reply::consent_question(op, args, second);
        let nonce = self.sealer.nonce_for(&op.id, hash, after);
        match how {
            Asking::Token => {
                let issued = self
                    .sealer
                    .issue(Purpose::Confirmation, &op.id, hash, &nonce);
                self.refuse(&op.id, "consent-required", json!({"asked": "confirmation"}));
                Ok(Asked::Response(Box::new(
                    reply::consent_required(
                        op,
                        &question,
                        &issued.token,
                        TOKEN_LIFETIME_SECONDS,
                        why,
                    )
                    .into(),
                )))
            }
            Asking::RoundTrip => {
                let issued = self
                    .sealer
                    .issue(Purpose::RequestState, &op.id, hash, &nonce);
                let mut requests = InputRequests::new();
                requests.insert(
                    CONSENT_INPUT.to_string(),
                    InputRequest::Elicitation(ElicitRequest::new(form(&question, second)?)),
                );
                self.refuse(
                    &op.id,
                    "consent-required",
                    json!({"asked": "input-required"}),
                );
                Ok(Asked::Response(Box::new(
                    InputRequiredResult::new(Some(requests), Some(issued.token)).into(),
                )))
            }
            Asking::Elicit => {
                let yes = match self.open_question(&nonce) {
                    Open::Answered => true,
                    Open::Waiting(mut answer) => {
                        // The identical call's form is open: its answer is this call's.
                        self.refuse(&op.id, "consent-pending", json!({"asked": "same-question"}));
                        match answer.wait_for(Option::is_some).await {
                            Ok(said) => *said == Some(true),
                            Err(_) => false,
                        }
                    }
                    Open::Mine(tell) => {
                        self.refuse(&op.id, "consent-required", json!({"asked": "elicitation"}));
                        // A person who never answers does not hold the call open for longer
                        // than a confirmation value would stay good.
                        let answer = context
                            .peer
                            .create_elicitation_with_timeout(
                                form(&question, second)?,
                                Some(std::time::Duration::from_secs(TOKEN_LIFETIME_SECONDS)),
                            )
                            .await;
                        let yes = matches!(&answer, Ok(result)
                            if result.action == ElicitationAction::Accept
                                && result
                                    .content
                                    .as_ref()
                                    .and_then(|c| c.get("confirm"))
                                    .and_then(Value::as_bool)
                                    == Some(true));
                        tell.send_replace(Some(yes));
                        if !yes {
                            // After a no, a later identical call may ask again.
                            self.calls.questions().remove(&nonce);
                        }
                        yes
                    }
                };
                if yes {
                    Ok(Asked::Given(nonce))
                } else {
                    self.refuse(&op.id, "declined", json!({}));
                    Ok(Asked::Response(Box::new(reply::declined(op).into())))
                }
            }
        }
    }

    /// The form for `nonce`: answered yes already, open (wait on it), or this call's to
    /// show. A form whose call went away unanswered is shown again.
    fn open_question(&self, nonce: &str) -> Open {
        let now = self.sealer.clock().now();
        let mut open = self.calls.questions();
        open.retain(|_, q| q.until > now);
        if let Some(q) = open.get(nonce) {
            match *q.answer.borrow() {
                Some(true) => return Open::Answered,
                None if q.answer.has_changed().is_ok() => {
                    return Open::Waiting(q.answer.clone());
                }
                _ => {}
            }
        }
        let (tell, answer) = tokio::sync::watch::channel(None);
        open.insert(
            nonce.to_string(),
            Question {
                answer,
                until: now + TOKEN_LIFETIME_SECONDS,
            },
        );
        Open::Mine(tell)
    }
}

enum Open {
    Answered,
    Waiting(tokio::sync::watch::Receiver<Option<bool>>),
    Mine(tokio::sync::watch::Sender<Option<bool>>),
}

pub(super) enum Asked {
    Response(Box<CallToolResponse>),
    Given(String),
}

pub(super) fn accepted(answer: &Value) -> bool {
    answer.get("action").and_then(Value::as_str) == Some("accept")
        && answer
            .get("content")
            .and_then(|c| c.get("confirm"))
            .and_then(Value::as_bool)
            == Some(true)
}

/// The form: one checkbox. For a second order its words say so, and only those words
/// agree to it.
fn form(question: &str, second: bool) -> Result<ElicitRequestParams, ErrorData> {
    let (title, description) = if second {
        (
            "Yes, a second, identical one",
            "Check to order a second, identical one: the first is not undone or replaced.",
        )
    } else {
        (
            "Yes, do exactly this",
            "Check to agree to this one call, with these arguments.",
        )
    };
    let schema = serde_json::from_value(json!({
        "type": "object",
        "properties": {
            "confirm": {
                "type": "boolean",
                "title": title,
                "description": description,
                "default": false
            }
        },
        "required": ["confirm"]
    }))
    .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
    Ok(ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: question.to_string(),
        requested_schema: schema,
    })
}
