//! Time, behind a trait: the ledger's window and the tokens' expiry read it, and tests
//! move a manual clock instead of sleeping.
//!
//! Takes: nothing. Returns: whole seconds since the Unix epoch.
//! Must never: be read through `SystemTime` anywhere else in the runtime.

#[cfg(test)]
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

pub(crate) trait Clock: Send + Sync {
    /// Seconds since the Unix epoch.
    fn now(&self) -> u64;
}

/// The machine's clock.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs())
    }
}

/// A clock that moves only when told to (tests).
#[cfg(test)]
#[derive(Debug, Default)]
pub(crate) struct ManualClock(AtomicU64);

#[cfg(test)]
impl ManualClock {
    pub(crate) fn at(seconds: u64) -> Self {
        ManualClock(AtomicU64::new(seconds))
    }

    pub(crate) fn advance(&self, seconds: u64) {
        self.0.fetch_add(seconds, Ordering::SeqCst);
    }
}

#[cfg(test)]
impl Clock for ManualClock {
    fn now(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
}
