//! Consent: the yes a call carries (a relayed confirmation value, or the answer to a
//! question asked in an earlier round trip), and asking the person when the guard says a
//! yes is needed, in the way the caller allows (`Ask`).
//!
//! Takes: the call, its identity, the ledger row the logical request would follow, and
//! an `Ask`. Returns: the request's nonce when the person said yes, or what goes back to
//! ask them (a tool error with a confirmation value, or the caller's round trip).
//!
//! One question per logical request: the value, the round trip's sealed state and the
//! form all name the nonce `Sealer::nonce_for` derives, so the same call asked about
//! twice before the person answers is one question (a second form for it is not shown:
//! the call waits for the first form's answer), and two yeses are one order.
//! Must never: treat anything but the server's own sealed value, or the person's
//! accepted question, as a yes.

use std::future::Future;

use serde_json::{Map, Value, json};

use super::reply::{self, Why};
use super::{Answer, Failure, Served, Stage};
use crate::seal::{Purpose, TOKEN_LIFETIME_SECONDS};

/// Which way consent can be asked of this caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Way {
    /// The question goes back in the answer, and the caller calls again with the
    /// person's answer and the sealed state (MCP 2026-07-28's input-required result).
    RoundTrip,
    /// The caller asks the person now, and the call waits (`elicitation/create`).
    Elicit,
    /// Neither: a tool error with a confirmation value the model relays.
    Token,
}

/// The answer to an earlier round trip's question that a call carries.
#[derive(Debug, Clone)]
pub(crate) struct Carried {
    /// The sealed state the question went out with.
    pub state: String,
    /// The person's answer: `None` when the call carries none for the question.
    pub accepted: Option<bool>,
}

/// How the caller asks the person: what `serve` implements for MCP.
pub(crate) trait Ask: Sync {
    /// What goes back to the caller to ask in a round trip.
    type Later: Send;
    /// Why asking failed.
    type Error: Send;

    fn way(&self) -> Way;

    /// The answer to an earlier question this call carries, if any.
    fn carried(&self) -> Option<Carried>;

    /// `Way::RoundTrip`: what asks `question` (`second`: about a second, identical
    /// order), to come back with `state`.
    fn later(
        &self,
        question: &str,
        second: bool,
        state: String,
    ) -> Result<Self::Later, Self::Error>;

    /// `Way::Elicit`: asks `question` now; whether the person said yes (no answer in a
    /// confirmation value's lifetime is a no).
    fn now(
        &self,
        question: &str,
        second: bool,
    ) -> impl Future<Output = Result<bool, Self::Error>> + Send;
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

/// What asking came to.
pub(super) enum Asked<L> {
    /// The person said yes: the logical request's nonce.
    Given(String),
    /// The answer goes back now (the question in a tool error, or the person's no).
    Answer(Answer),
    /// The caller's round trip asks.
    Later(L),
}

enum Open {
    Answered,
    Waiting(tokio::sync::watch::Receiver<Option<bool>>),
    Mine(tokio::sync::watch::Sender<Option<bool>>),
}

impl Stage {
    pub(super) fn consent_of(
        &self,
        carried: Option<Carried>,
        principal: &str,
        tool: &str,
        hash: &str,
        token: Option<&str>,
    ) -> Consent {
        if let Some(carried) = carried {
            let Ok(opened) =
                self.sealer
                    .open(Purpose::RequestState, principal, tool, hash, &carried.state)
            else {
                return Consent::Invalid;
            };
            return match carried.accepted {
                Some(true) => Consent::Given(opened.nonce),
                Some(false) => Consent::Declined,
                None => Consent::Invalid,
            };
        }
        match token {
            Some(token) => {
                match self
                    .sealer
                    .open(Purpose::Confirmation, principal, tool, hash, token)
                {
                    Ok(opened) => Consent::Token(opened.nonce),
                    Err(_)
                        if self
                            .sealer
                            .open(Purpose::Second, principal, tool, hash, token)
                            .is_ok() =>
                    {
                        Consent::Second
                    }
                    Err(_) => Consent::Invalid,
                }
            }
            None => Consent::None,
        }
    }

    /// Asks the person (or has the model ask them) about the logical request that
    /// follows ledger row `after`. `Given` when they said yes in a question just now
    /// (or in the form an identical call showed them).
    #[expect(
        clippy::too_many_arguments,
        reason = "the call, its person and identity, the way to ask and why: all needed here"
    )]
    pub(super) async fn ask<A: Ask>(
        &self,
        served: &Served,
        principal: &str,
        args: &Map<String, Value>,
        hash: &str,
        ask: &A,
        (why, priced): (Why, Option<&str>),
        after: Option<i64>,
    ) -> Result<Asked<A::Later>, Failure<A::Error>> {
        let op = &served.op;
        let second = why == Why::Second;
        let question = reply::consent_question(op, args, second, priced);
        let nonce = self.sealer.nonce_for(principal, &op.id, hash, after);
        match ask.way() {
            Way::Token => {
                let issued =
                    self.sealer
                        .issue(Purpose::Confirmation, principal, &op.id, hash, &nonce);
                self.refuse(&op.id, "consent-required", json!({"asked": "confirmation"}));
                Ok(Asked::Answer(reply::consent_required(
                    op,
                    &question,
                    &issued.token,
                    TOKEN_LIFETIME_SECONDS,
                    why,
                )))
            }
            Way::RoundTrip => {
                let issued =
                    self.sealer
                        .issue(Purpose::RequestState, principal, &op.id, hash, &nonce);
                let later = ask
                    .later(&question, second, issued.token)
                    .map_err(Failure::Ask)?;
                self.refuse(
                    &op.id,
                    "consent-required",
                    json!({"asked": "input-required"}),
                );
                Ok(Asked::Later(later))
            }
            Way::Elicit => {
                let yes = match self.open_question(principal, &nonce) {
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
                        let yes = ask.now(&question, second).await.map_err(Failure::Ask)?;
                        tell.send_replace(Some(yes));
                        if !yes {
                            // After a no, a later identical call may ask again.
                            self.calls
                                .questions()
                                .remove(&format!("{principal}\0{nonce}"));
                        }
                        yes
                    }
                };
                if yes {
                    Ok(Asked::Given(nonce))
                } else {
                    self.refuse(&op.id, "declined", json!({}));
                    Ok(Asked::Answer(reply::declined(op)))
                }
            }
        }
    }

    /// The form for `nonce`: answered yes already, open (wait on it), or this call's to
    /// show. A form whose call went away unanswered is shown again.
    fn open_question(&self, principal: &str, nonce: &str) -> Open {
        let now = self.sealer.clock().now();
        // A question is one person's: another's identical call is asked on its own.
        let key = format!("{principal}\0{nonce}");
        let mut open = self.calls.questions();
        open.retain(|_, q| q.until > now);
        if let Some(q) = open.get(&key) {
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
            key,
            Question {
                answer,
                until: now + TOKEN_LIFETIME_SECONDS,
            },
        );
        Open::Mine(tell)
    }
}
