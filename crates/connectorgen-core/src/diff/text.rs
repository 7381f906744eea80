//! The generated sentences (cost, permanence, polling, retries) of each operation, in
//! every file both sides build that states them, compared as the model reads them.
//!
//! Takes: both sides and the operation pairs. Returns (pushes): `safety-text-changed`,
//! once per operation, naming the files whose sentences changed, with the
//! sentences before and after (of the first such file).
//! Must never: report a change to the author's own description (it is not a generated
//! sentence), a file only one side builds (a target added or removed is not a change
//! to what that target's model reads), or sentences that only name a renamed operation
//! by its new id (`operation-renamed` reports the rename, once).

use super::{Found, Renames, Side, Which};
use crate::diagnostics::Diagnostic;

/// `text` with every operation id renamed in this change written as its new id, where
/// the sentences name it (in a code span: `` `getRender` ``): a sentence that changed only
/// so is the rename, which `operation-renamed` reports once.
fn renamed(text: &str, renames: &Renames) -> String {
    // One pass over the code spans (every other piece between backticks), so that a
    // chain of renames (`a` → `b`, `b` → `c`) is not followed twice.
    text.split('`')
        .enumerate()
        .map(|(i, piece)| match renames.get(piece) {
            Some(new) if i % 2 == 1 => new.as_str(),
            _ => piece,
        })
        .collect::<Vec<_>>()
        .join("`")
}

pub(super) fn compare(
    old: &Side,
    new: &Side,
    pairs: &[(usize, usize)],
    renames: &Renames,
    found: &mut Vec<Found>,
) {
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
            if before != after && renamed(before, renames) != *after {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renamed_ids_are_read_once_and_only_in_code_spans() {
        let renames: Renames = [("a", "b"), ("b", "c")]
            .into_iter()
            .map(|(o, n)| (o.to_string(), n.to_string()))
            .collect();
        assert_eq!(
            renamed("poll `a`, then `b`; a and b stay", &renames),
            "poll `b`, then `c`; a and b stay"
        );
    }
}
