//! Consent tokens: the one-time `confirmation` value a model relays after the person
//! agreed, and the sealed `requestState` of an elicitation round trip.
//!
//! Takes: a secret (from the state folder), the connector's identity (service name and
//! manifest digest), a clock, the person (principal), a tool name, its arguments' hash
//! and which logical request the question is for. Returns: an opaque token that opens
//! only for that connector, person, tool and those exact arguments, for its purpose,
//! before its expiry,
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
//!
//! The sealing itself is a `Codec` given at start-up: `serve` gives rmcp's
//! `RequestStateCodec`, the one MCP's `requestState` values are made with
//! (`serve/codec.rs`, where this module's tests run with it).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use sha2::{Digest as _, Sha256};

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
    /// The link to a person's connect page (connect.rs): whose credential it sets.
    Connect,
    /// The cookie a browser gets when it opens a connect link: the person it is for, so
    /// a form or an OAuth callback from another person's browser is refused.
    Browser,
    /// The anti-forgery value of a connect page's form.
    Form,
}

impl Purpose {
    fn as_str(self) -> &'static str {
        match self {
            Purpose::Confirmation => "confirmation",
            Purpose::RequestState => "request-state",
            Purpose::Second => "second",
            Purpose::Connect => "connect",
            Purpose::Browser => "browser",
            Purpose::Form => "form",
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

/// Seals bytes so that only the holder of the key opens them, bound to `bound` (data the
/// value is only good with, not carried in it), and opens them again.
pub(crate) trait Codec: Send + Sync {
    fn seal(&self, payload: &[u8], bound: &[u8]) -> String;
    /// The payload, or `None` when `sealed` is damaged, forged or for another `bound`.
    fn open(&self, sealed: &str, bound: &[u8]) -> Option<Vec<u8>>;
}

/// A value handed out and its expiry.
type Handed = (String, u64);

#[derive(Clone)]
pub(crate) struct Sealer {
    codec: Arc<dyn Codec>,
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
    /// `codec` is keyed by the secret (`state_dir::secret` makes one). `connector` names the
    /// connector: its service name and the digest of what its manifest produced.
    pub(crate) fn new(codec: Arc<dyn Codec>, clock: Arc<dyn Clock>, connector: &str) -> Sealer {
        Sealer {
            codec,
            clock,
            connector: connector.into(),
            issued: Arc::default(),
        }
    }

    /// The nonce of the logical request a question about `tool` with `args_hash` is
    /// for: the first one (`after: None`) or the one after ledger row `after`. The
    /// same inputs always give the same nonce, whatever the purpose: a confirmation
    /// value and a form asked at the same time name one request.
    pub(crate) fn nonce_for(
        &self,
        principal: &str,
        tool: &str,
        args_hash: &str,
        after: Option<i64>,
    ) -> String {
        let after = after.map_or_else(|| "first".to_string(), |id| format!("after-{id}"));
        let bound =
            length_prefixed(&["nonce", &self.connector, principal, tool, args_hash, &after]);
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
        principal: &str,
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
        let slot = (purpose, format!("{principal}\0{nonce}"));
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
        let bound = self.binding(purpose, principal, tool, args_hash);
        // A two-field struct of a string and a number always serialises.
        let json = serde_json::to_vec(&payload).unwrap_or_default();
        let token = self.codec.seal(&json, &bound);
        issued.insert(slot, (token.clone(), expires_at));
        Issued { token }
    }

    /// The nonce of `token`, if it was issued for this purpose, tool and arguments and
    /// has not expired.
    pub(crate) fn open(
        &self,
        purpose: Purpose,
        principal: &str,
        tool: &str,
        args_hash: &str,
        token: &str,
    ) -> Result<Opened, Refusal> {
        let bound = self.binding(purpose, principal, tool, args_hash);
        let payload: Payload = self
            .codec
            .open(token, &bound)
            .and_then(|json| serde_json::from_slice(&json).ok())
            .ok_or(Refusal::NotForThisCall)?;
        if self.clock.now() >= payload.e {
            return Err(Refusal::Expired);
        }
        Ok(Opened { nonce: payload.n })
    }
}

impl Sealer {
    /// A value that names `principal` for `purpose`, good for `lifetime` seconds: the
    /// person a browser acts for, where the browser carries no token of its own (a
    /// connect link, its cookie, its form). Signed, not encrypted: a principal is a hash.
    pub(crate) fn person_token(&self, purpose: Purpose, principal: &str, lifetime: u64) -> String {
        let payload = Payload {
            n: principal.to_string(),
            e: self.clock.now() + lifetime,
        };
        let json = serde_json::to_vec(&payload).unwrap_or_default();
        self.codec.seal(&json, &self.binding(purpose, "", "", ""))
    }

    /// The principal `token` names for `purpose`, if it is one this server made and it
    /// has not expired.
    pub(crate) fn person_of(&self, purpose: Purpose, token: &str) -> Result<String, Refusal> {
        let payload: Payload = self
            .codec
            .open(token, &self.binding(purpose, "", "", ""))
            .and_then(|json| serde_json::from_slice(&json).ok())
            .ok_or(Refusal::NotForThisCall)?;
        if self.clock.now() >= payload.e {
            return Err(Refusal::Expired);
        }
        Ok(payload.n)
    }

    /// What the signature covers besides the payload: the purpose, the connector, the
    /// person (the principal), the tool and the arguments.
    fn binding(&self, purpose: Purpose, principal: &str, tool: &str, args_hash: &str) -> Vec<u8> {
        length_prefixed(&[
            purpose.as_str(),
            &self.connector,
            principal,
            tool,
            args_hash,
        ])
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
