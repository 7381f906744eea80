//! The codec consent values are sealed with (`seal::Codec`): rmcp's `RequestStateCodec`,
//! the one MCP's `requestState` values are made with, keyed by the state's secret.
//!
//! Takes: the secret (at least 32 bytes). Returns: the codec, or why the secret will not
//! do. Must never: open a value sealed with another key or for other bound data.

use std::sync::Arc;

use rmcp::model::{RequestStateCodec, SealOptions};

use crate::seal::Codec;

struct RequestState(RequestStateCodec);

impl Codec for RequestState {
    fn seal(&self, payload: &[u8], bound: &[u8]) -> String {
        self.0
            .seal_with(payload, &SealOptions::new().associated_data(bound))
    }

    fn open(&self, sealed: &str, bound: &[u8]) -> Option<Vec<u8>> {
        self.0.open_with(sealed, bound).ok()
    }
}

/// The codec keyed by `secret`.
pub(crate) fn codec(secret: &[u8]) -> Result<Arc<dyn Codec>, String> {
    let codec = RequestStateCodec::try_new(secret.to_vec()).map_err(|e| e.to_string())?;
    Ok(Arc::new(RequestState(codec)))
}

/// The sealer's own tests (`crate::seal`), run with the codec it is given in `serve`.
#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::codec;
    use crate::clock::ManualClock;
    use crate::seal::{Opened, Purpose, Refusal, Sealer, TOKEN_LIFETIME_SECONDS};

    /// The person every value below is given to.
    const P: &str = "alice";

    fn sealer(clock: Arc<ManualClock>) -> Sealer {
        Sealer::new(codec(&[7u8; 32]).unwrap(), clock, "VidGen sha256:1")
    }

    /// The token for the first request of `tool` with `hash`, and its nonce.
    fn issue(s: &Sealer, purpose: Purpose, tool: &str, hash: &str) -> (String, String) {
        let nonce = s.nonce_for(P, tool, hash, None);
        (s.issue(purpose, P, tool, hash, &nonce).token, nonce)
    }

    #[test]
    fn a_token_opens_only_for_its_tool_and_arguments() {
        let clock = Arc::new(ManualClock::at(1_000));
        let s = sealer(clock);
        let (token, nonce) = issue(&s, Purpose::Confirmation, "createVideo", "h1");
        let opened = s.open(Purpose::Confirmation, P, "createVideo", "h1", &token);
        assert_eq!(opened, Ok(Opened { nonce }));
        for (tool, hash) in [("createVideo", "h2"), ("deleteVideo", "h1")] {
            assert_eq!(
                s.open(Purpose::Confirmation, P, tool, hash, &token),
                Err(Refusal::NotForThisCall)
            );
        }
        for purpose in [Purpose::RequestState, Purpose::Second] {
            assert_eq!(
                s.open(purpose, P, "createVideo", "h1", &token),
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
            let other = Sealer::new(codec(&[7u8; 32]).unwrap(), clock.clone(), other);
            assert_eq!(
                other.open(Purpose::Confirmation, P, "createVideo", "h1", &token),
                Err(Refusal::NotForThisCall)
            );
            assert_ne!(
                other.nonce_for(P, "createVideo", "h1", None),
                s.nonce_for(P, "createVideo", "h1", None)
            );
        }
    }

    #[test]
    fn a_token_expires_by_our_clock() {
        let clock = Arc::new(ManualClock::at(1_000));
        let s = sealer(clock.clone());
        let (token, _) = issue(&s, Purpose::Confirmation, "t", "h");
        clock.advance(TOKEN_LIFETIME_SECONDS - 1);
        assert!(s.open(Purpose::Confirmation, P, "t", "h", &token).is_ok());
        clock.advance(1);
        assert_eq!(
            s.open(Purpose::Confirmation, P, "t", "h", &token),
            Err(Refusal::Expired)
        );
    }

    #[test]
    fn another_secret_or_a_changed_token_does_not_open() {
        let clock = Arc::new(ManualClock::at(5));
        let s = sealer(clock.clone());
        let other = Sealer::new(codec(&[8u8; 32]).unwrap(), clock, "VidGen sha256:1");
        let (token, _) = issue(&s, Purpose::Confirmation, "t", "h");
        assert!(
            other
                .open(Purpose::Confirmation, P, "t", "h", &token)
                .is_err()
        );
        let mut changed = token.clone();
        let last = changed.pop().unwrap();
        changed.push(if last == 'A' { 'B' } else { 'A' });
        assert!(
            s.open(Purpose::Confirmation, P, "t", "h", &changed)
                .is_err()
        );
        assert!(s.open(Purpose::Confirmation, P, "t", "h", "").is_err());
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
        let opened = s.open(Purpose::RequestState, P, "t", "h", &form).unwrap();
        assert_eq!(opened.nonce, a.1);
        // Late in its life a new value is handed out, for the same request.
        clock.advance(TOKEN_LIFETIME_SECONDS / 2 + 1);
        let c = issue(&s, Purpose::Confirmation, "t", "h").0;
        assert_ne!(c, a.0);
        let opened = s.open(Purpose::Confirmation, P, "t", "h", &c).unwrap();
        assert_eq!(opened.nonce, a.1);
        // The request after row 1 is another one.
        let next = s.nonce_for(P, "t", "h", Some(1));
        assert_ne!(next, a.1);
        assert_ne!(s.nonce_for(P, "t", "h2", None), a.1);
    }

    /// A value given to one person (an inbound token's principal) opens for no one else,
    /// and their identical calls are two logical requests.
    #[test]
    fn a_token_opens_only_for_its_person() {
        let clock = Arc::new(ManualClock::at(1_000));
        let s = sealer(clock);
        let (token, nonce) = issue(&s, Purpose::Confirmation, "createVideo", "h1");
        assert_eq!(
            s.open(Purpose::Confirmation, "bob", "createVideo", "h1", &token),
            Err(Refusal::NotForThisCall)
        );
        assert_ne!(s.nonce_for("bob", "createVideo", "h1", None), nonce);
        let theirs = s.nonce_for("bob", "createVideo", "h1", None);
        let given = s.issue(Purpose::Confirmation, "bob", "createVideo", "h1", &theirs);
        assert_ne!(given.token, token);
    }
}
