//! One tool call, run through its steps in order, with no protocol in it: the arguments
//! (checked and made canonical), the identity (the logical request: tool, principal, the
//! arguments' hash), consent (asked through `Ask`), the claim (the guard's decision and
//! the ledger's atomic write), the send, and the record of its outcome.
//!
//! Takes: a served tool's index, the model's arguments, and an `Ask`: how this caller
//! puts a question to the person (`serve` implements it for MCP: a round trip, a form,
//! or a confirmation value the model relays). Returns: an `Outcome` — the answer, with
//! the ledger row it concerns, or what the caller sends back to have the person asked.
//! Must never: send a call the guard did not clear, send it before its ledger row is
//! durable, or take anything but the server's own sealed value or the person's accepted
//! question as a yes.
//!
//! The steps, and where each lives: `budget.rs` (what the call costs, its receipt, and
//! the budgets: the running totals it is asked with, the refusal past a limit, which the
//! guard makes inside the claim), `ask.rs` (the consent a call carries, and asking),
//! `claim.rs` (the claim, the mark that a row is being sent, outcomes held in memory),
//! `send.rs` (carrying out a verdict: the send and its record, or the answer from the
//! ledger), `duplicate.rs` (a retry answered as a key the provider has seen, read back by
//! the key), `reply.rs` and `output.rs` (what the model reads, checked against the
//! output schema), `answer.rs` (that answer's type), `state.rs` (what this process
//! knows of calls besides the ledger).

mod answer;
mod ask;
pub(crate) mod budget;
mod claim;
mod duplicate;
pub(crate) mod output;
pub(crate) mod reply;
mod send;
mod state;

use std::collections::HashMap;

use serde_json::{Map, Value, json};

pub(crate) use answer::{Answer, Block};
pub(crate) use ask::{Ask, Carried, Way};
use ask::{Asked, Consent};
use reply::{Poll, Why};

use crate::client::Client;
use crate::credential::{Credential, ReadVariable};
use crate::guard::Verdict;
use crate::ledger::{self, LedgerError};
use crate::redact::Redactor;
use crate::request;
use crate::seal::Sealer;
use connectorgen_core::model::{Connector, Idempotency, Operation};
use connectorgen_core::render::mcp::mapping::{self, RequestMapping};

/// The argument serve adds to tracked tools: the one-time value of a consent.
pub(crate) const CONFIRMATION_ARGUMENT: &str = "confirmation";

/// What the stage needs of the command line.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    /// `--base-url`: where calls go instead of the document's servers.
    pub base_url: Option<String>,
    pub enforce_consent: bool,
    /// How long an identical call counts as a retry of the one before (seconds).
    pub retry_window: u64,
    /// The spending limits each principal is held to (`--budget`, else `budgets:`).
    pub budgets: Vec<connectorgen_core::budget::Budget>,
    /// The currency of money amounts and of a `money` budget (`Connector::currency`).
    pub currency: Option<String>,
}

/// A served tool, as the stage runs it.
pub(crate) struct Served {
    /// The arguments it takes, as served (the model was shown this): calls are checked
    /// against it.
    pub input_schema: Map<String, Value>,
    pub mapping: RequestMapping,
    pub op: Operation,
    pub credential: Option<Credential>,
    /// Goes out with the person's own credential (`auth.perPerson`), not `credential`.
    pub per_person: bool,
    /// Whose calls these are in the ledger: the credential's identity (a hash).
    pub principal: String,
    /// Recorded in the ledger: spends, async, needs consent, or carries a retry key.
    pub tracked: bool,
    /// The async operation's poll tool and the argument that takes the job id.
    pub poll: Option<Poll>,
    /// The tool's output schema, compiled once: every success is checked against it
    /// before it leaves (call/output.rs).
    pub output: Option<jsonschema::Validator>,
    /// The free read that shows whether a call went through, for the advice after a
    /// failure (the description's `checkWith`).
    pub check_with: Option<String>,
}

/// The identical call waiting on one being sent gets its answer through this.
type InFlight = tokio::sync::watch::Receiver<Option<Answer>>;

/// Everything a call runs with: the tools, the client, the ledger, the sealer and what
/// this process knows of calls. One per server, shared by its sessions.
pub(crate) struct Stage {
    pub tools: Vec<Served>,
    pub by_name: HashMap<String, usize>,
    pub client: Client,
    /// Every store call off the event loop (ledger/handle.rs).
    pub ledger: ledger::Handle,
    pub sealer: Sealer,
    pub settings: Settings,
    pub redactor: Redactor,
    /// Reads a `fixed:` input's variable from the ones read at start-up.
    pub env: Box<ReadVariable>,
    /// Each person's own credential (`auth.perPerson`), when the connector has them.
    pub people: Option<crate::connect::People>,
    /// The state of calls in this process (call/state.rs).
    calls: state::Calls,
}

/// What a call came to.
pub(crate) enum Outcome<L> {
    /// The answer. `row`: the ledger row it concerns (the one sent, answered from, or
    /// waited on), for a caller that follows jobs as tasks.
    Answer { answer: Answer, row: Option<i64> },
    /// The person is asked in the caller's next round trip: what the caller sends back.
    Asking(L),
    /// Nothing was sent: the person has not connected their own account. `link` opens
    /// their connect page (a caller that can send the person to a URL does);
    /// `answer` says so to the model, link included.
    Connect { link: String, answer: Answer },
}

impl<L> Outcome<L> {
    fn answer(answer: Answer) -> Outcome<L> {
        Outcome::Answer { answer, row: None }
    }
}

/// Why a call got no answer at all.
#[derive(Debug)]
pub(crate) enum Failure<E> {
    /// The ledger failed (not a full one: that is an answer the model reads).
    Store(LedgerError),
    /// Asking failed (the caller's own error).
    Ask(E),
}

impl Stage {
    pub(crate) fn new(
        tools: Vec<Served>,
        client: Client,
        ledger: std::sync::Arc<dyn ledger::Ledger>,
        sealer: Sealer,
        settings: Settings,
        redactor: Redactor,
        env: Box<ReadVariable>,
    ) -> Stage {
        let by_name = tools
            .iter()
            .enumerate()
            .map(|(i, t)| (t.op.id.clone(), i))
            .collect();
        Stage {
            tools,
            by_name,
            client,
            ledger: ledger::Handle::new(ledger),
            sealer,
            settings,
            redactor,
            env,
            people: None,
            calls: state::Calls::default(),
        }
    }

    /// Runs tool `index`'s call with `args` through its steps, asking through `ask`, for
    /// the person `who` (an inbound token's principal; `None`: the tool's own, the hash
    /// of the credential it goes out with).
    pub(crate) async fn run<A: Ask>(
        &self,
        index: usize,
        mut args: Map<String, Value>,
        ask: &A,
        who: Option<&str>,
    ) -> Result<Outcome<A::Later>, Failure<A::Error>> {
        let served = &self.tools[index];
        let op = &served.op;
        let principal = who.unwrap_or(&served.principal);
        let token = args
            .shift_remove(CONFIRMATION_ARGUMENT)
            .and_then(|v| v.as_str().map(str::to_string));
        if let Some(idem) = &served.mapping.idempotency {
            // The server's key replaces the model's: a model that makes up a fresh key for
            // every retry would turn each retry into a new request.
            args.shift_remove(&idem.argument);
        }

        // A strict client's `null` for an optional argument is the argument left out: taken
        // out before the hash, the question and the request (docs/serve.md, "Arguments").
        if let Err(problem) = request::absent_nulls(&served.input_schema, &mut args) {
            return Ok(Outcome::answer(self.not_sent(op, &problem.to_string())));
        }

        // The person's own credential: without one, nothing is sent or recorded.
        let person = match self.person(served, principal).await {
            Ok(Person::Ready(person)) => person,
            Ok(Person::Connect(link)) => {
                self.refuse(&op.id, "not-connected", json!({}));
                let answer = reply::connect(op, &link);
                return Ok(Outcome::Connect { link, answer });
            }
            Err(crate::connect::Unusable::Store(stop)) => return self.stopped(op, stop),
            Err(unusable) => {
                self.refuse(
                    &op.id,
                    "credential-unusable",
                    json!({"problem": unusable.to_string()}),
                );
                return Ok(Outcome::answer(Answer::error(vec![Block::text(
                    "NOT SENT: the account connected for you could not be read; nothing was sent. \
                     Tell the person that whoever runs this connector must check its credential key.",
                )])));
            }
        };
        let person = person.as_ref();

        // Bad arguments or a foreign host: refused before anything is recorded.
        let probe_target = self.target(served, person, Some("k"));
        let built = request::build(&served.mapping, &args, &probe_target)
            .map_err(|e| e.to_string())
            .and_then(|r| {
                self.client
                    .check(&r.url)
                    .map(|()| r)
                    .map_err(|e| e.to_string())
            });
        if let Err(problem) = built {
            return Ok(Outcome::answer(self.not_sent(op, &problem)));
        }

        // What it spends: a negative or unreadable amount is refused here.
        let cost = match budget::cost_of(served, &args) {
            Ok(cost) => cost,
            Err(problem) => return Ok(Outcome::answer(self.not_sent(op, &problem))),
        };

        if !served.tracked {
            let answer = self.forward(served, principal, person, &args, None).await;
            let answer = self.given_back(served, who, &args, answer).await;
            return Ok(Outcome::answer(answer));
        }
        let charge = claim::Charge {
            cost,
            receipt: budget::receipt(op, &args, cost, &self.redactor),
        };

        // The logical request: this tool, this principal, these arguments.
        let hash = crate::args_hash(&args);
        let needs_consent = op.consent() && self.settings.enforce_consent;
        let way = ask.way();
        let consent = self.consent_of(ask.carried(), principal, &op.id, &hash, token.as_deref());
        let invalid = matches!(consent, Consent::Invalid);
        let (nonce, second) = match consent {
            // On a client that can ask the person, a relayed confirmation is not the
            // person's yes: it is ignored, and the person is asked if a yes is needed.
            Consent::Token(_) if needs_consent && way != Way::Token => (None, false),
            Consent::Token(n) | Consent::Given(n) => (Some(n), false),
            Consent::Second => (None, true),
            Consent::Declined => {
                self.refuse(&op.id, "declined", json!({}));
                return Ok(Outcome::answer(reply::declined(op)));
            }
            Consent::None | Consent::Invalid => (None, false),
        };

        // Whether a repeat reaches the provider as the same request: without a key, an
        // open call (a timeout) is not sent again on its own (`Verdict::Unknown`).
        let retry_safe = matches!(
            retry_of(served, true),
            reply::Retry::SameKey | reply::Retry::Inherent
        );
        let claimed = match self
            .claim(
                served,
                principal,
                &hash,
                nonce.as_deref(),
                needs_consent,
                retry_safe,
                &charge,
            )
            .await
        {
            Ok(claimed) => claimed,
            Err(stop) => return self.stopped(op, stop),
        };
        if let Some(answer) = self.over_budget(op, cost.as_ref(), &claimed, second) {
            return Ok(Outcome::answer(answer));
        }
        let why = match &claimed.verdict {
            Verdict::AskConsent { spent: true } => {
                self.refuse(&op.id, "confirmation-spent", json!({}));
                Why::Spent
            }
            Verdict::AskConsent { .. } if invalid => {
                self.refuse(&op.id, "confirmation-invalid", json!({}));
                Why::NotForThisCall
            }
            Verdict::AskConsent { .. } => Why::Fresh,
            // The person asked for a second, identical order: put that question to them.
            Verdict::Answer { .. } | Verdict::Unknown { .. } if second => Why::Second,
            _ => {
                let outcome = self.acted(served, principal, person, &args, claimed).await;
                return Ok(self.given_back_outcome(served, who, &args, outcome).await);
            }
        };
        let after = claimed.after;
        // The question states the amount and where the call would leave each budget.
        let priced = cost.map(|cost| {
            budget::priced(
                &cost,
                &self.settings.budgets,
                &claimed.spent,
                self.settings.currency.as_deref(),
                self.sealer.clock().now(),
            )
        });
        drop(claimed);
        // A person is never asked about a call the ledger has no room to record.
        if let Err(stop) = self.ledger.room(self.sealer.clock().now()).await {
            return self.stopped(op, stop);
        }
        let nonce = if needs_consent {
            match self
                .ask(
                    served,
                    principal,
                    &args,
                    &hash,
                    ask,
                    (why, priced.as_deref()),
                    after,
                )
                .await?
            {
                Asked::Later(later) => return Ok(Outcome::Asking(later)),
                Asked::Answer(answer) => return Ok(Outcome::answer(answer)),
                Asked::Given(nonce) => nonce,
            }
        } else {
            // A free tracked tool (an async or keyed one without consent): the second
            // order needs no question, only its own logical request.
            self.sealer.nonce_for(principal, &op.id, &hash, after)
        };
        let claimed = match self
            .claim(
                served,
                principal,
                &hash,
                Some(&nonce),
                needs_consent,
                retry_safe,
                &charge,
            )
            .await
        {
            Ok(claimed) => claimed,
            Err(stop) => return self.stopped(op, stop),
        };
        // Another of this person's calls may have taken the room since the question.
        if let Some(answer) = self.over_budget(op, cost.as_ref(), &claimed, false) {
            return Ok(Outcome::answer(answer));
        }
        let outcome = self.acted(served, principal, person, &args, claimed).await;
        Ok(self.given_back_outcome(served, who, &args, outcome).await)
    }

    /// The person's own credential for `served`'s call, loaded for this call (so a
    /// disconnect on another instance holds at the next call); `Ready(None)` for a tool
    /// that goes out with the operator's credential or none.
    pub(crate) async fn person(
        &self,
        served: &Served,
        principal: &str,
    ) -> Result<Person, crate::connect::Unusable> {
        let Some(people) = self.people.as_ref().filter(|_| served.per_person) else {
            return Ok(Person::Ready(None));
        };
        Ok(match people.credential(principal).await? {
            Some(credential) => Person::Ready(Some(credential)),
            None => Person::Connect(people.link(principal)),
        })
    }

    /// The answer to a call refused before anything was recorded, logged.
    fn not_sent(&self, op: &Operation, problem: &str) -> Answer {
        self.refuse(&op.id, "bad-arguments", json!({"problem": problem}));
        Answer::error(vec![Block::text(format!("NOT SENT: {problem}"))])
    }

    /// The answer to a claim that gave no verdict: a full ledger is the model's to hear
    /// about (a tool error); anything else is the server's failure.
    fn stopped<L, E>(&self, op: &Operation, stop: LedgerError) -> Result<Outcome<L>, Failure<E>> {
        match stop {
            LedgerError::Full { .. } => {
                let why = stop.to_string();
                self.refuse(&op.id, "ledger-full", json!({"problem": why}));
                Ok(Outcome::answer(reply::ledger_full(op, &why)))
            }
            LedgerError::Store(_) => Err(Failure::Store(stop)),
        }
    }

    pub(crate) fn refuse(&self, tool: &str, reason: &str, extra: Value) {
        let mut fields = json!({"tool": tool, "reason": reason});
        if let (Value::Object(f), Value::Object(e)) = (&mut fields, extra) {
            f.extend(e);
        }
        self.redactor.line("refused", fields);
    }

    /// Where the request of `served` goes and what it carries (`key`: the retry key).
    /// `person`: the person's own credential, loaded for this call (`person`), sent by
    /// the tools that go out with it.
    pub(crate) fn target<'a>(
        &'a self,
        served: &'a Served,
        person: Option<&'a Credential>,
        key: Option<&'a str>,
    ) -> request::Target<'a> {
        request::Target {
            base_url: self.settings.base_url.as_deref(),
            credential: if served.per_person {
                person
            } else {
                served.credential.as_ref()
            },
            retry_key: key,
            env: &*self.env,
            // The arguments are checked against what the model was shown.
            schema: Some(&served.input_schema),
        }
    }
}

/// The ledger's principal for calls made with `credential` (`Credential::identity`); the
/// calls of a tool that goes out without one share `NO_CREDENTIAL`.
pub(crate) fn principal(credential: Option<&Credential>) -> String {
    credential.map_or_else(|| NO_CREDENTIAL.to_string(), Credential::identity)
}

/// Whose credential a call goes out with.
pub(crate) enum Person {
    /// This credential (`None`: the operator's, or none).
    Ready(Option<Credential>),
    /// The person has not connected: the link to their connect page.
    Connect(String),
}

/// The principal of calls made without a credential.
const NO_CREDENTIAL: &str = "none";

/// How a repeat of `served`'s call reaches the provider: with the same retry key (one
/// serve sends, or one in the arguments), harmlessly (`inherent`), or as a second order
/// that only a check and the person can rule out.
fn retry_of(served: &Served, tracked: bool) -> reply::Retry<'_> {
    let op = &served.op;
    if !tracked {
        reply::Retry::Untracked
    } else if served.mapping.idempotency.is_some() || op.key().is_some() {
        reply::Retry::SameKey
    } else if matches!(op.idempotency, Idempotency::Inherent) {
        reply::Retry::Inherent
    } else {
        // The read that shows whether it went through, as the description names it.
        reply::Retry::CheckFirst {
            check: served.check_with.as_deref(),
        }
    }
}

/// How the model follows `op`'s job: the poll tool and the argument that takes the id,
/// named as the poll tool's served arguments name it (an `args:` rename included). A
/// poll target whose path names the job takes it in its last path parameter; an
/// RPC-style one (a `read: true` POST) in the body field that names the job
/// (`Connector::poll_body_id`) — its own argument, or a field of the whole-body one.
/// `None` when the target takes no id (`returns: change` polls say no id).
pub(crate) fn poll_hint(
    connector: &Connector,
    op: &Operation,
    mappings: &HashMap<String, RequestMapping>,
) -> Option<Poll> {
    let a = op.async_.as_ref()?;
    let target = connector.operations.iter().find(|o| o.id == a.poll_with)?;
    let mapping = mappings.get(&target.id);
    let (param, field) = if let Some(param) = target.path_params.last() {
        (
            mapping
                .and_then(|m| argument_of(m, mapping::Location::Path, param))
                .unwrap_or_else(|| param.clone()),
            None,
        )
    } else {
        let field = connector.poll_body_id(op)?;
        if let Some(own) = mapping.and_then(|m| argument_of(m, mapping::Location::Body, &field)) {
            (own, None)
        } else {
            let whole = mapping?
                .arguments
                .iter()
                .find(|arg| arg.location == mapping::Location::Body && arg.name.is_none())?;
            (whole.argument.clone(), Some(field))
        }
    };
    Some(Poll {
        tool: a.poll_with.clone(),
        param,
        field,
    })
}

#[cfg(test)]
pub(crate) mod tests;

/// The tool argument that carries the HTTP parameter or body field `name` at `location`,
/// as the served tool names it (an `args:` rename, or a name made safe for MCP).
pub(crate) fn argument_of(
    mapping: &RequestMapping,
    location: mapping::Location,
    name: &str,
) -> Option<String> {
    mapping
        .arguments
        .iter()
        .find(|arg| arg.location == location && arg.name.as_deref() == Some(name))
        .map(|arg| arg.argument.clone())
}
