//! The generated sentences (cost, permanence, polling, retries) of each operation, in
//! every file both sides build that states them, compared as the model reads them.
//!
//! Takes: both sides and the operation pairs. Returns (pushes): `safety-text-changed`,
//! once per operation, naming the files whose sentences changed, with the
//! sentences before and after (of the first such file).
//! Must never: report a change to the author's own description (it is not a generated
//! sentence), or a file only one side builds (a target added or removed is not a
//! change to what that target's model reads).

use super::{Found, Side, Which};
use crate::diagnostics::Diagnostic;

pub(super) fn compare(old: &Side, new: &Side, pairs: &[(usize, usize)], found: &mut Vec<Found>) {
    let shown = |s: &str| {
        if s.is_empty() {
            "(none)".to_string()
        } else {
            s.split_whitespace().collect::<Vec<_>>().join(" ")
        }
    };
    for (o, n) in pairs {
        let (old_op, new_op) = (&old.connector.operations[*o], &new.connector.operations[*n]);
        // One finding per operation: the files whose sentences changed, and the first
        // one's sentences (the targets word them alike; `explain` shows each).
        let mut files = Vec::new();
        let mut first = None;
        for (file, new_texts) in &new.sentences {
            let Some(old_texts) = old.sentences.get(file) else {
                continue;
            };
            let (Some(before), Some(after)) =
                (old_texts.get(&old_op.id), new_texts.get(&new_op.id))
            else {
                continue;
            };
            if before != after {
                files.push(*file);
                first.get_or_insert((before, after));
            }
        }
        if let Some((before, after)) = first {
            found.push(Found {
                which: Which::New,
                diagnostic: Diagnostic::SafetyTextChanged {
                    id: new_op.id.clone(),
                    files: files.join(", "),
                    old: shown(before),
                    new: shown(after),
                    span: new_op.origin.entry,
                },
            });
        }
    }
}
