//! Consent tokens: the one-time `confirmation` value a model relays after the person
//! agreed, and the sealed `requestState` of an elicitation round trip.
//!
//! Takes: a secret (from the state folder), the connector's identity (service name and
//! manifest digest), a clock, a tool name, its arguments' hash and which logical
//! request the question is for. Returns: an opaque token that opens only for that
//! connector, tool and those exact arguments, for its purpose, before its expiry,
//! carrying the nonce of that logical request (the ledger makes it one-time: a nonce
//! names one logical request).
//! Must never: accept a token for other arguments, another tool or another connector
//! (a state folder is shared by every connector by default), trust the token's own
//! words about time (the expiry is checked against our clock), or put anything secret
//! inside (the payload is signed, not encrypted).
//!
//! Consent is per logical request, not per question (docs/serve.md, "One yes, one
//! order"): the nonce is derived from the connector, the tool, the arguments and the
//! ledger row the request would follow (`after`), so every question asked for the same
//! call before the person answers names the same request, and two yeses are one order.
//! While a value is good, asking again hands out the very same value.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use sha2::{Digest as _, Sha256};

use rmcp::model::{RequestStateCodec, SealOptions};
use serde::{Deserialize, Serialize};

use super::clock::Clock;

/// How long a confirmation value stays good: long enough for a person to read the
/// question and answer, short enough that an old yes is not a standing permission.
pub(crate) const TOKEN_LIFETIME_SECONDS: u64 = 600;

/// What a token is for, mixed into its signature so one kind cannot pass for the other.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Purpose {
    /// A `confirmation` argument relayed by the model.
    Confirmation,
    /// The `requestState` of an elicitation (multi round-trip) call.
    RequestState,
    /// Relayed after "NOT SENT AGAIN": the person asked for a second, identical order.
    /// It opens only the question about that second order, never the order itself.
    Second,
}

impl Purpose {
    fn as_str(self) -> &'static str {
        match self {
            Purpose::Confirmation => "confirmation",
            Purpose::RequestState => "request-state",
            Purpose::Second => "second",
        }
    }
}

#[derive(Debug, Serialize, Deserialize)]
struct Payload {
    /// The nonce: names the one logical request this yes is for.
    n: String,
    /// Expiry, in seconds since the epoch, by the server's clock.
    e: u64,
}

/// Why a token did not open. The model is told only that it is not good for this call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// Forged, damaged, or for another tool or other arguments.
    NotForThisCall,
    Expired,
}

/// A token that opened: the nonce it carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Opened {
    pub nonce: String,
}

/// An issued token (it carries the nonce it was issued for).
#[derive(Debug, Clone)]
pub(crate) struct Issued {
    pub token: String,
}

/// A value handed out and its expiry.
type Handed = (String, u64);

#[derive(Clone)]
pub(crate) struct Sealer {
    codec: Arc<RequestStateCodec>,
    clock: Arc<dyn Clock>,
    /// The connector's identity, bound into every token and nonce.
    connector: Arc<str>,
    /// Values handed out and still good, by purpose and nonce: the same question asked
    /// again gets the same value.
    issued: Arc<Mutex<HashMap<(Purpose, String), Handed>>>,
}

impl std::fmt::Debug for Sealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Sealer")
    }
}

impl Sealer {
    /// `secret` must be at least 32 bytes (`state_dir::secret` makes one). `connector` names
    /// the connector: its service name and the digest of what its manifest produced.
    pub(crate) fn new(
        secret: &[u8],
        clock: Arc<dyn Clock>,
        connector: &str,
    ) -> Result<Sealer, String> {
        let codec = RequestStateCodec::try_new(secret.to_vec()).map_err(|e| e.to_string())?;
        Ok(Sealer {
            codec: Arc::new(codec),
            clock,
            connector: connector.into(),
            issued: Arc::default(),
        })
    }

    /// The nonce of the logical request a question about `tool` with `args_hash` is
    /// for: the first one (`after: None`) or the one after ledger row `after`. The
    /// same inputs always give the same nonce, whatever the purpose: a confirmation
    /// value and a form asked at the same time name one request.
    pub(crate) fn nonce_for(&self, tool: &str, args_hash: &str, after: Option<i64>) -> String {
        let after = after.map_or_else(|| "first".to_string(), |id| format!("after-{id}"));
        let bound = length_prefixed(&["nonce", &self.connector, tool, args_hash, &after]);
        let digest = Sha256::digest(&bound);
        digest.iter().take(16).map(|b| format!("{b:02x}")).collect()
    }

    pub(crate) fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    /// The token for the logical request `nonce` of `tool` with arguments hashing to
    /// `args_hash`: the value handed out before while it has more than half its life
    /// left (so a person reading the question has time to answer), else a new one.
    pub(crate) fn issue(
        &self,
        purpose: Purpose,
        tool: &str,
        args_hash: &str,
        nonce: &str,
    ) -> Issued {
        let now = self.clock.now();
        let mut issued = self
            .issued
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        issued.retain(|_, (_, expires)| *expires > now);
        let slot = (purpose, nonce.to_string());
        if let Some((token, expires)) = issued.get(&slot)
            && expires.saturating_sub(now) > TOKEN_LIFETIME_SECONDS / 2
        {
            return Issued {
                token: token.clone(),
            };
        }
        let expires_at = now + TOKEN_LIFETIME_SECONDS;
        let payload = Payload {
            n: nonce.to_string(),
            e: expires_at,
        };
        let bound = self.binding(purpose, tool, args_hash);
        let token = self
            .codec
            .seal_json_with(&payload, &SealOptions::new().associated_data(&bound))
            // A two-field struct of a string and a number always serialises.
            .unwrap_or_default();
        issued.insert(slot, (token.clone(), expires_at));
        Issued { token }
    }

    /// The nonce of `token`, if it was issued for this purpose, tool and arguments and
    /// has not expired.
    pub(crate) fn open(
        &self,
        purpose: Purpose,
        tool: &str,
        args_hash: &str,
        token: &str,
    ) -> Result<Opened, Refusal> {
        let bound = self.binding(purpose, tool, args_hash);
        let payload: Payload = self
            .codec
            .open_json_with(token, &bound)
            .map_err(|_| Refusal::NotForThisCall)?;
        if self.clock.now() >= payload.e {
            return Err(Refusal::Expired);
        }
        Ok(Opened { nonce: payload.n })
    }
}

impl Sealer {
    /// What the signature covers besides the payload: the purpose, the connector, the
    /// tool and the arguments.
    fn binding(&self, purpose: Purpose, tool: &str, args_hash: &str) -> Vec<u8> {
        length_prefixed(&[purpose.as_str(), &self.connector, tool, args_hash])
    }
}

/// Each part length-prefixed, so no two different lists spell the same bytes.
fn length_prefixed(parts: &[&str]) -> Vec<u8> {
    let mut out = Vec::new();
    for part in parts {
        out.extend_from_slice(&(part.len() as u64).to_be_bytes());
        out.extend_from_slice(part.as_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::ManualClock;

    fn sealer(clock: Arc<ManualClock>) -> Sealer {
        Sealer::new(&[7u8; 32], clock, "VidGen sha256:1").unwrap()
    }

    /// The token for the first request of `tool` with `hash`, and its nonce.
    fn issue(s: &Sealer, purpose: Purpose, tool: &str, hash: &str) -> (String, String) {
        let nonce = s.nonce_for(tool, hash, None);
        (s.issue(purpose, tool, hash, &nonce).token, nonce)
    }

    #[test]
    fn a_token_opens_only_for_its_tool_and_arguments() {
        let clock = Arc::new(ManualClock::at(1_000));
        let s = sealer(clock);
        let (token, nonce) = issue(&s, Purpose::Confirmation, "createVideo", "h1");
        let opened = s.open(Purpose::Confirmation, "createVideo", "h1", &token);
        assert_eq!(opened, Ok(Opened { nonce }));
        for (tool, hash) in [("createVideo", "h2"), ("deleteVideo", "h1")] {
            assert_eq!(
                s.open(Purpose::Confirmation, tool, hash, &token),
                Err(Refusal::NotForThisCall)
            );
        }
        for purpose in [Purpose::RequestState, Purpose::Second] {
            assert_eq!(
                s.open(purpose, "createVideo", "h1", &token),
                Err(Refusal::NotForThisCall)
            );
        }
    }

    #[test]
    fn a_token_opens_only_for_its_connector_even_with_the_same_secret() {
        let clock = Arc::new(ManualClock::at(1_000));
        let s = sealer(clock.clone());
        let (token, _) = issue(&s, Purpose::Confirmation, "createVideo", "h1");
        for other in ["OtherGen sha256:1", "VidGen sha256:2"] {
            let other = Sealer::new(&[7u8; 32], clock.clone(), other).unwrap();
            assert_eq!(
                other.open(Purpose::Confirmation, "createVideo", "h1", &token),
                Err(Refusal::NotForThisCall)
            );
            assert_ne!(
                other.nonce_for("createVideo", "h1", None),
                s.nonce_for("createVideo", "h1", None)
            );
        }
    }

    #[test]
    fn a_token_expires_by_our_clock() {
        let clock = Arc::new(ManualClock::at(1_000));
        let s = sealer(clock.clone());
        let (token, _) = issue(&s, Purpose::Confirmation, "t", "h");
        clock.advance(TOKEN_LIFETIME_SECONDS - 1);
        assert!(s.open(Purpose::Confirmation, "t", "h", &token).is_ok());
        clock.advance(1);
        assert_eq!(
            s.open(Purpose::Confirmation, "t", "h", &token),
            Err(Refusal::Expired)
        );
    }

    #[test]
    fn another_secret_or_a_changed_token_does_not_open() {
        let clock = Arc::new(ManualClock::at(5));
        let s = sealer(clock.clone());
        let other = Sealer::new(&[8u8; 32], clock, "VidGen sha256:1").unwrap();
        let (token, _) = issue(&s, Purpose::Confirmation, "t", "h");
        assert!(other.open(Purpose::Confirmation, "t", "h", &token).is_err());
        let mut changed = token.clone();
        let last = changed.pop().unwrap();
        changed.push(if last == 'A' { 'B' } else { 'A' });
        assert!(s.open(Purpose::Confirmation, "t", "h", &changed).is_err());
        assert!(s.open(Purpose::Confirmation, "t", "h", "").is_err());
    }

    #[test]
    fn the_same_question_gets_the_same_value_and_the_next_request_another() {
        let clock = Arc::new(ManualClock::at(5));
        let s = sealer(clock.clone());
        let a = issue(&s, Purpose::Confirmation, "t", "h");
        let b = issue(&s, Purpose::Confirmation, "t", "h");
        assert_eq!(a, b);
        // A form for the same call names the same request.
        let form = issue(&s, Purpose::RequestState, "t", "h").0;
        let opened = s.open(Purpose::RequestState, "t", "h", &form).unwrap();
        assert_eq!(opened.nonce, a.1);
        // Late in its life a new value is handed out, for the same request.
        clock.advance(TOKEN_LIFETIME_SECONDS / 2 + 1);
        let c = issue(&s, Purpose::Confirmation, "t", "h").0;
        assert_ne!(c, a.0);
        let opened = s.open(Purpose::Confirmation, "t", "h", &c).unwrap();
        assert_eq!(opened.nonce, a.1);
        // The request after row 1 is another one.
        let next = s.nonce_for("t", "h", Some(1));
        assert_ne!(next, a.1);
        assert_ne!(s.nonce_for("t", "h2", None), a.1);
    }
}
