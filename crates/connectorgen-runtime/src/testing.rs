//! What tests and benchmarks outside this crate need from it, compiled only for this
//! crate's tests and under the `testing` feature (the root package's tests turn it
//! on; `cargo build` of the command line never does).
//!
//! Takes: nothing of the product. Returns: a throwaway PostgreSQL cluster (`postgres`).
//! Must never: be reached by `serve` or `probe`.

pub mod ledger;
pub mod postgres;
