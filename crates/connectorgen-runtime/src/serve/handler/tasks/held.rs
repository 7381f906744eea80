//! What the last poll of each task found, held in memory between `tasks/get`s within a
//! bound, and when the next poll is due.
//!
//! Takes: task states as polls find them, with when and after how many failed polls.
//! Returns: the state to answer with, and whether the provider may be polled again.
//! Must never: hold more than `HELD_MAX_BYTES` of states (the ones polled longest ago go
//! first; such a task is polled once more), or let a client's loop poll the provider
//! faster than the poll interval.

use rmcp::model::DetailedTask;

/// What the last poll of one task found, and when it was made (seconds).
#[derive(Debug, Clone)]
pub(in crate::serve::handler) struct Polled {
    pub(super) at: u64,
    pub(in crate::serve::handler) task: DetailedTask,
    /// Polls in a row that got no answer about the job (an auth refusal, a rate limit, a
    /// 5xx, no connection): each doubles the wait before the next (`backoff`).
    pub(super) failures: u32,
    /// The state's size as JSON: what `Held` counts against `HELD_MAX_BYTES`.
    bytes: usize,
}

/// The most the task states held in memory may weigh (their JSON; a finished task's is
/// its poll's whole answer). Past it the states polled longest ago are let go: such a
/// task's next `tasks/get` polls once more (a free read, never the create), as after a
/// restart. 16 MiB holds four 4 MB answers, or thousands of ordinary ones.
const HELD_MAX_BYTES: usize = 16 << 20;

/// The task states this process holds, by row (row ids are never used twice in a
/// store: `ledger/sqlite.rs`'s `NEVER_REUSED`, PostgreSQL's identity column), bounded by
/// `HELD_MAX_BYTES`.
#[derive(Debug, Default)]
pub(in crate::serve::handler) struct Held {
    tasks: std::collections::HashMap<i64, Polled>,
    bytes: usize,
}

impl Held {
    pub(in crate::serve::handler) fn get(&self, row: i64) -> Option<&Polled> {
        self.tasks.get(&row)
    }

    pub(in crate::serve::handler) fn get_mut(&mut self, row: i64) -> Option<&mut Polled> {
        self.tasks.get_mut(&row)
    }

    pub(in crate::serve::handler) fn remove(&mut self, row: i64) {
        if let Some(gone) = self.tasks.remove(&row) {
            self.bytes = self.bytes.saturating_sub(gone.bytes);
        }
    }

    /// Holds `task` as row `row`'s state, polled at `at` after `failures` failed polls in
    /// a row, and lets the states polled longest ago go while the whole is over the bound
    /// (never the one just held).
    pub(in crate::serve::handler) fn insert(
        &mut self,
        row: i64,
        at: u64,
        task: DetailedTask,
        failures: u32,
    ) {
        let bytes = serde_json::to_vec(&task).map_or(0, |json| json.len());
        let polled = Polled {
            at,
            task,
            failures,
            bytes,
        };
        if let Some(old) = self.tasks.insert(row, polled) {
            self.bytes = self.bytes.saturating_sub(old.bytes);
        }
        self.bytes = self.bytes.saturating_add(bytes);
        if self.bytes <= HELD_MAX_BYTES {
            return;
        }
        let mut oldest: Vec<(u64, i64)> = self
            .tasks
            .iter()
            .filter(|(id, _)| **id != row)
            .map(|(id, p)| (p.at, *id))
            .collect();
        oldest.sort_unstable();
        for (_, id) in oldest {
            if self.bytes <= HELD_MAX_BYTES {
                break;
            }
            if let Some(gone) = self.tasks.remove(&id) {
                self.bytes = self.bytes.saturating_sub(gone.bytes);
            }
        }
    }

    /// The bytes held now (tests).
    #[cfg(test)]
    fn bytes(&self) -> usize {
        self.bytes
    }
}

/// The wait before a task's next poll after `failures` failed ones in a row: the poll
/// interval, doubled for each failure, at most ten minutes (a provider refusing the
/// credential or rate limiting is not polled at the client's pace).
pub(super) fn backoff(interval_ms: u64, failures: u32) -> u64 {
    interval_ms
        .saturating_mul(1_u64 << failures.min(16))
        .min(600_000)
}

/// Whether a task last polled at `last` may be polled again at `now` (seconds): at
/// most once per poll interval, so a client polling in a loop cannot make the server
/// poll the provider in a loop. The clock reads whole seconds, so two readings `n`
/// apart may be as little as `n - 1` seconds apart: one second more makes the bound
/// hold (a poll may come up to a second late, never early).
pub(super) fn due(last: Option<u64>, now: u64, interval_ms: u64) -> bool {
    last.is_none_or(|at| now >= at.saturating_add(interval_ms.div_ceil(1000) + 1))
}

#[cfg(test)]
mod tests {
    use rmcp::model::{DetailedTask, Task, TaskPayload, TaskStatus};
    use serde_json::{Map, json};

    use super::*;

    #[test]
    fn a_task_is_polled_at_most_once_per_interval() {
        assert!(due(None, 100, 9_000));
        assert!(!due(Some(100), 100, 9_000));
        // 100 and 109 may be 100.9 and 109.0: 8.1 seconds apart.
        assert!(!due(Some(100), 109, 9_000));
        assert!(due(Some(100), 110, 9_000));
        // Less than a second rounds up to one, read as two whole seconds: 100.9 and
        // 101.0 are not a second apart.
        assert!(!due(Some(100), 100, 1));
        assert!(!due(Some(100), 101, 1));
        assert!(due(Some(100), 102, 1));
    }

    /// Finished tasks' answers are held up to `HELD_MAX_BYTES`, the ones polled longest
    /// ago let go first (issue 43: 40 finished 4 MB answers took RSS from 22 to 361 MB).
    #[test]
    fn held_task_states_are_bounded() {
        let big = |n: usize| {
            let task = Task::new(format!("{n}-x"), TaskStatus::Working, "a", "b");
            let mut result = Map::new();
            result.insert("text".into(), json!("x".repeat(4 << 20)));
            DetailedTask::new(task, TaskPayload::Completed { result })
        };
        let mut held = Held::default();
        for row in 1..=40 {
            held.insert(row, 1_000 + u64::try_from(row).unwrap(), big(40), 0);
            assert!(
                held.bytes() <= HELD_MAX_BYTES,
                "{} after {row}",
                held.bytes()
            );
        }
        assert!(held.get(40).is_some(), "the newest is held");
        assert!(held.get(1).is_none(), "the oldest was let go");
        assert_eq!(
            held.tasks.values().map(|p| p.bytes).sum::<usize>(),
            held.bytes()
        );
        // Held again under the same row: counted once.
        let before = held.bytes();
        held.insert(40, 2_000, big(40), 0);
        assert_eq!(held.bytes(), before);
    }

    #[test]
    fn failed_polls_back_off_up_to_ten_minutes() {
        assert_eq!(backoff(5_000, 0), 5_000);
        assert_eq!(backoff(5_000, 1), 10_000);
        assert_eq!(backoff(5_000, 3), 40_000);
        assert_eq!(backoff(5_000, 40), 600_000);
    }
}
