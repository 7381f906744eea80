//! Asking the person: which way this client allows, the consent a call carries
//! (a relayed confirmation, or the answer to an input-required round trip), and the
//! question itself (a form elicitation, or a tool error with a confirmation value).
//!
//! Takes: the call, the client's capabilities and revision. Returns: a nonce when the
//! person said yes, or the result that asks them.
//! Must never: treat anything but the server's own sealed value, or the person's
//! accepted form, as a yes.

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ElicitRequest, ElicitRequestParams, ElicitationAction,
    ErrorData, InputRequest, InputRequests, InputRequiredResult, ProtocolVersion,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Map, Value, json};

use super::{CONSENT_INPUT, Served, Shared};
use crate::consent::{Purpose, TOKEN_LIFETIME_SECONDS};
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
                Err(_) => Consent::Invalid,
            },
            None => Consent::None,
        }
    }

    /// Asks the person (or has the model ask them). `Given` when they said yes in an
    /// elicitation just now.
    pub(super) async fn ask(
        &self,
        served: &Served,
        args: &Map<String, Value>,
        hash: &str,
        how: Asking,
        why: Why,
        context: &RequestContext<RoleServer>,
    ) -> Result<Asked, ErrorData> {
        let op = &served.op;
        let question = reply::consent_question(op, args, why == Why::Second);
        match how {
            Asking::Token => {
                let issued = self.sealer.issue(Purpose::Confirmation, &op.id, hash);
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
                let issued = self.sealer.issue(Purpose::RequestState, &op.id, hash);
                let mut requests = InputRequests::new();
                requests.insert(
                    CONSENT_INPUT.to_string(),
                    InputRequest::Elicitation(ElicitRequest::new(form(&question)?)),
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
                self.refuse(&op.id, "consent-required", json!({"asked": "elicitation"}));
                // A person who never answers does not hold the call open for longer than a
                // confirmation value would stay good.
                let answer = context
                    .peer
                    .create_elicitation_with_timeout(
                        form(&question)?,
                        Some(std::time::Duration::from_secs(TOKEN_LIFETIME_SECONDS)),
                    )
                    .await;
                match answer {
                    Ok(result)
                        if result.action == ElicitationAction::Accept
                            && result
                                .content
                                .as_ref()
                                .and_then(|c| c.get("confirm"))
                                .and_then(Value::as_bool)
                                == Some(true) =>
                    {
                        let issued = self.sealer.issue(Purpose::RequestState, &op.id, hash);
                        Ok(Asked::Given(issued.nonce))
                    }
                    _ => {
                        self.refuse(&op.id, "declined", json!({}));
                        Ok(Asked::Response(Box::new(reply::declined(op).into())))
                    }
                }
            }
        }
    }
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

fn form(question: &str) -> Result<ElicitRequestParams, ErrorData> {
    let schema = serde_json::from_value(json!({
        "type": "object",
        "properties": {
            "confirm": {
                "type": "boolean",
                "title": "Yes, do exactly this",
                "description": "Check to agree to this one call, with these arguments.",
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
