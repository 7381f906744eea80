//! The safety layer both modes share: what an operation costs, whether it starts a job,
//! whether a retry is safe, whether it needs the person's yes.
//!
//! Takes: the safety keys of one raw operation. Returns (through `Validator`): their
//! checked meaning. `idempotency.rs` holds the retry keys.
//! Must never: depend on which mode the manifest is in beyond what the caller passes.

pub(super) mod idempotency;
