//! Consent tokens: the one-time `confirmation` value a model relays after the person
//! agreed, and the sealed `requestState` of an elicitation round trip.
//!
//! Takes: a secret (from the state folder), a clock, a tool name and its arguments'
//! hash. Returns: an opaque token that opens only for that tool and those exact
//! arguments, before its expiry, carrying a fresh nonce (the ledger makes it one-time:
//! a nonce names one logical request).
//! Must never: accept a token for other arguments or another tool, trust the token's
//! own words about time (the expiry is checked against our clock), or put anything
//! secret inside (the payload is signed, not encrypted).

use std::sync::Arc;

use rmcp::model::{RequestStateCodec, SealOptions};
use serde::{Deserialize, Serialize};

use super::clock::Clock;

/// How long a confirmation value stays good: long enough for a person to read the
/// question and answer, short enough that an old yes is not a standing permission.
pub(crate) const TOKEN_LIFETIME_SECONDS: u64 = 600;

/// What a token is for, mixed into its signature so one kind cannot pass for the other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Purpose {
    /// A `confirmation` argument relayed by the model.
    Confirmation,
    /// The `requestState` of an elicitation (multi round-trip) call.
    RequestState,
}

impl Purpose {
    fn as_str(self) -> &'static str {
        match self {
            Purpose::Confirmation => "confirmation",
            Purpose::RequestState => "request-state",
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

/// An issued token and what it carries.
#[derive(Debug, Clone)]
pub(crate) struct Issued {
    pub token: String,
    pub nonce: String,
}

#[derive(Clone)]
pub(crate) struct Sealer {
    codec: Arc<RequestStateCodec>,
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for Sealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Sealer")
    }
}

impl Sealer {
    /// `secret` must be at least 32 bytes (`state::secret` makes one).
    pub(crate) fn new(secret: &[u8], clock: Arc<dyn Clock>) -> Result<Sealer, String> {
        let codec = RequestStateCodec::try_new(secret.to_vec()).map_err(|e| e.to_string())?;
        Ok(Sealer {
            codec: Arc::new(codec),
            clock,
        })
    }

    pub(crate) fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    /// A fresh token for one call of `tool` with arguments hashing to `args_hash`.
    pub(crate) fn issue(&self, purpose: Purpose, tool: &str, args_hash: &str) -> Issued {
        let nonce = uuid::Uuid::new_v4().simple().to_string();
        let expires_at = self.clock.now() + TOKEN_LIFETIME_SECONDS;
        let payload = Payload {
            n: nonce.clone(),
            e: expires_at,
        };
        let bound = binding(purpose, tool, args_hash);
        let token = self
            .codec
            .seal_json_with(&payload, &SealOptions::new().associated_data(&bound))
            // A two-field struct of a string and a number always serialises.
            .unwrap_or_default();
        Issued { token, nonce }
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
        let bound = binding(purpose, tool, args_hash);
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

/// What the signature covers besides the payload: the purpose, the tool and the
/// arguments, each length-prefixed so no two different triples spell the same bytes.
fn binding(purpose: Purpose, tool: &str, args_hash: &str) -> Vec<u8> {
    let mut out = Vec::new();
    for part in [purpose.as_str(), tool, args_hash] {
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
        Sealer::new(&[7u8; 32], clock).unwrap()
    }

    #[test]
    fn a_token_opens_only_for_its_tool_and_arguments() {
        let clock = Arc::new(ManualClock::at(1_000));
        let s = sealer(clock);
        let issued = s.issue(Purpose::Confirmation, "createVideo", "h1");
        let opened = s.open(Purpose::Confirmation, "createVideo", "h1", &issued.token);
        assert_eq!(
            opened,
            Ok(Opened {
                nonce: issued.nonce
            })
        );
        for (tool, hash) in [("createVideo", "h2"), ("deleteVideo", "h1")] {
            assert_eq!(
                s.open(Purpose::Confirmation, tool, hash, &issued.token),
                Err(Refusal::NotForThisCall)
            );
        }
        assert_eq!(
            s.open(Purpose::RequestState, "createVideo", "h1", &issued.token),
            Err(Refusal::NotForThisCall)
        );
    }

    #[test]
    fn a_token_expires_by_our_clock() {
        let clock = Arc::new(ManualClock::at(1_000));
        let s = sealer(clock.clone());
        let issued = s.issue(Purpose::Confirmation, "t", "h");
        clock.advance(TOKEN_LIFETIME_SECONDS - 1);
        assert!(
            s.open(Purpose::Confirmation, "t", "h", &issued.token)
                .is_ok()
        );
        clock.advance(1);
        assert_eq!(
            s.open(Purpose::Confirmation, "t", "h", &issued.token),
            Err(Refusal::Expired)
        );
    }

    #[test]
    fn another_secret_or_a_changed_token_does_not_open() {
        let clock = Arc::new(ManualClock::at(5));
        let s = sealer(clock.clone());
        let other = Sealer::new(&[8u8; 32], clock).unwrap();
        let issued = s.issue(Purpose::Confirmation, "t", "h");
        assert!(
            other
                .open(Purpose::Confirmation, "t", "h", &issued.token)
                .is_err()
        );
        let mut changed = issued.token.clone();
        let last = changed.pop().unwrap();
        changed.push(if last == 'A' { 'B' } else { 'A' });
        assert!(s.open(Purpose::Confirmation, "t", "h", &changed).is_err());
        assert!(s.open(Purpose::Confirmation, "t", "h", "").is_err());
    }

    #[test]
    fn every_token_carries_a_new_nonce() {
        let s = sealer(Arc::new(ManualClock::at(5)));
        let a = s.issue(Purpose::Confirmation, "t", "h");
        let b = s.issue(Purpose::Confirmation, "t", "h");
        assert_ne!(a.nonce, b.nonce);
        assert_ne!(a.token, b.token);
    }
}
