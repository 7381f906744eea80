//! How MCP asks the person, for the call stage (`call::Ask`): which way this client
//! allows, the answer to an earlier round trip the request carries, and the question
//! itself (a form elicitation, in an input-required result or in `elicitation/create`).
//!
//! Takes: the `tools/call` request and its context (the client's capabilities and
//! revision). Returns: the way, the carried answer, the input-required result, or the
//! person's yes or no. What is asked, and when, is the call stage's (`call/ask.rs`).
//! Must never: read anything but the person's accepted, checked form as a yes.

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ElicitRequest, ElicitRequestParams, ElicitationAction,
    ErrorCode, ErrorData, InputRequest, InputRequests, InputRequiredResult, ProtocolVersion,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Value, json};

use super::CONSENT_INPUT;
use crate::call::{Ask, Carried, Way};
use crate::seal::TOKEN_LIFETIME_SECONDS;

/// Which way consent can be asked of this client.
pub(super) fn way(context: &RequestContext<RoleServer>) -> Way {
    let form = context
        .client_capabilities()
        .and_then(|c| c.elicitation)
        .is_some_and(|e| e.form.is_some() || e.url.is_none());
    let round_trip = context
        .protocol_version()
        .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28);
    match (form, round_trip) {
        (false, _) => Way::Token,
        (true, true) => Way::RoundTrip,
        (true, false) => Way::Elicit,
    }
}

/// One `tools/call`, as the call stage asks through it.
pub(super) struct Mcp<'a> {
    pub request: &'a CallToolRequestParams,
    pub context: &'a RequestContext<RoleServer>,
}

impl Ask for Mcp<'_> {
    type Later = CallToolResponse;
    type Error = ErrorData;

    fn way(&self) -> Way {
        way(self.context)
    }

    fn carried(&self) -> Option<Carried> {
        let state = self.request.request_state.clone()?;
        let accepted = self
            .request
            .input_responses
            .as_ref()
            .and_then(|r| r.get(CONSENT_INPUT))
            .map(accepted);
        Some(Carried { state, accepted })
    }

    fn later(
        &self,
        question: &str,
        second: bool,
        state: String,
    ) -> Result<CallToolResponse, ErrorData> {
        let mut requests = InputRequests::new();
        requests.insert(
            CONSENT_INPUT.to_string(),
            InputRequest::Elicitation(ElicitRequest::new(form(question, second)?)),
        );
        Ok(InputRequiredResult::new(Some(requests), Some(state)).into())
    }

    async fn now(&self, question: &str, second: bool) -> Result<bool, ErrorData> {
        // A person who never answers does not hold the call open for longer than a
        // confirmation value would stay good.
        let answer = self
            .context
            .peer
            .create_elicitation_with_timeout(
                form(question, second)?,
                Some(std::time::Duration::from_secs(TOKEN_LIFETIME_SECONDS)),
            )
            .await;
        Ok(matches!(&answer, Ok(result)
            if result.action == ElicitationAction::Accept
                && result
                    .content
                    .as_ref()
                    .and_then(|c| c.get("confirm"))
                    .and_then(Value::as_bool)
                    == Some(true)))
    }
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

/// JSON-RPC's code for "this request needs the person at a URL first" (MCP 2025-11-25,
/// `URLElicitationRequiredError`).
const URL_ELICITATION_REQUIRED: i32 = -32042;

/// The answer to a call whose person has not connected their account: URL-mode
/// elicitation for a client that declares it (an input-required result on a revision
/// with round trips, `URLElicitationRequiredError` before), else `answer`, the tool
/// error whose text gives the link. Never a form: a credential is not for the client.
pub(super) fn connect(
    context: &RequestContext<RoleServer>,
    link: String,
    answer: CallToolResponse,
) -> Result<CallToolResponse, ErrorData> {
    let url = context
        .client_capabilities()
        .and_then(|c| c.elicitation)
        .is_some_and(|e| e.url.is_some());
    if !url {
        return Ok(answer);
    }
    let message = "Connect your own account at the provider: open this page, sign in or enter \
                   your key there, then come back. Nothing was sent or charged."
        .to_string();
    let id = crate::digest(b"connectorgen elicitation 1", &[&link]);
    if context
        .protocol_version()
        .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28)
    {
        let mut requests = InputRequests::new();
        requests.insert(
            CONNECT_INPUT.to_string(),
            InputRequest::Elicitation(ElicitRequest::new(
                ElicitRequestParams::UrlElicitationParams {
                    meta: None,
                    message,
                    url: link,
                    elicitation_id: id,
                },
            )),
        );
        return Ok(InputRequiredResult::new(Some(requests), None).into());
    }
    Err(ErrorData::new(
        ErrorCode(URL_ELICITATION_REQUIRED),
        "this call needs the person's own account at the provider: nothing was sent",
        Some(json!({
            "elicitations": [{
                "mode": "url",
                "elicitationId": id,
                "url": link,
                "message": message,
            }]
        })),
    ))
}

/// The input key of the connect page's URL elicitation.
const CONNECT_INPUT: &str = "connect";
