//! Outputs ↔ disk: what `connectorgen check` calls drift.
//!
//! Takes: the outputs a manifest generates now and the output folder. Returns: one
//! `Drift` per file that is missing or differs, with a unified diff (disk → expected);
//! when a build into the folder was interrupted between its renames (its journal is
//! there, `output::interrupted`), each diff starts with a note saying so.
//! Must never: write anything (finishing an interrupted set is the next build's job).
//! Files in the folder that connectorgen does not generate are not its business and are
//! ignored.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use crate::render::Outputs;

/// One generated file that does not match what the manifest generates now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Drift {
    /// The file on disk, as `--out` names it.
    pub path: PathBuf,
    pub missing: bool,
    /// Unified diff from the file on disk to what the manifest generates; empty when missing.
    pub diff: String,
}

impl Drift {
    /// What is wrong with the file, for messages: "is missing" or "is out of date".
    pub(crate) fn what(&self) -> &'static str {
        if self.missing {
            "is missing"
        } else {
            "is out of date"
        }
    }
}

/// Why the output folder could not be compared.
#[derive(Debug, thiserror::Error)]
#[error("could not read {}: {source}", path.display())]
pub struct CheckError {
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

/// Reads an output file for comparison: only a regular file (a FIFO would hang `check`),
/// and no more than a little past the expected size (a link to `/dev/zero` would never
/// end): a longer file differs anyway, and its diff shows the first part.
fn read_bounded(path: &Path, expected: usize) -> std::io::Result<Vec<u8>> {
    use std::io::Read as _;
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(std::io::Error::new(
            ErrorKind::InvalidInput,
            "it is not a regular file",
        ));
    }
    let limit = expected as u64 + (1 << 20);
    let mut bytes = Vec::with_capacity(expected);
    std::fs::File::open(path)?
        .take(limit)
        .read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// The most lines of the changed region (what lies between the lines both files start
/// and end with) a diff compares on each side. Myers' diff takes time in proportion to
/// the lines times the changes: a committed llms.txt of 100,000 short lines that differs
/// throughout took 18 s, and 400 KB 71 s (issue 21, defect 6). Past this, the diff
/// shows the first lines of the change and says how many more differ: the file is out
/// of date either way, and `build` rewrites it.
pub(crate) const MAX_DIFF_LINES: usize = 2_000;

/// A unified diff from `actual` (on disk) to `expected`, in time linear in their size
/// (cut as `MAX_DIFF_LINES` says, deterministically: no clock decides where).
fn unified_diff(actual: &str, expected: &str, shown: &str) -> String {
    let diff = |old: &str, new: &str| {
        similar::TextDiff::from_lines(old, new)
            .unified_diff()
            .context_radius(3)
            .header(
                &format!("{shown} (on disk)"),
                &format!("{shown} (generated)"),
            )
            .to_string()
    };
    let old: Vec<&str> = actual.split_inclusive('\n').collect();
    let new: Vec<&str> = expected.split_inclusive('\n').collect();
    let prefix = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
    let suffix = old[prefix..]
        .iter()
        .rev()
        .zip(new[prefix..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let (old_changed, new_changed) = (old.len() - prefix - suffix, new.len() - prefix - suffix);
    if old_changed <= MAX_DIFF_LINES && new_changed <= MAX_DIFF_LINES {
        return diff(actual, expected);
    }
    // The lines before the change stay, so the hunk's line numbers are the files' own.
    let old_shown = old_changed.min(MAX_DIFF_LINES);
    let new_shown = new_changed.min(MAX_DIFF_LINES);
    let mut out = diff(
        &old[..prefix + old_shown].concat(),
        &new[..prefix + new_shown].concat(),
    );
    if !out.ends_with('\n') {
        out.push('\n');
    }
    let more = (old_changed - old_shown) + (new_changed - new_shown);
    out.push_str(&format!(
        "... {more} more lines differ (the diff stops after the first {MAX_DIFF_LINES} changed lines on each side; `connectorgen build` rewrites the file)\n"
    ));
    out
}

/// Compares every output with the file of the same name in `dir`.
pub fn drift(dir: &Path, outputs: &Outputs) -> Result<Vec<Drift>, CheckError> {
    let mut found = Vec::new();
    for (name, expected) in outputs {
        let path = dir.join(name);
        let (actual, missing) = match read_bounded(&path, expected.len()) {
            // The common case in CI: up to date, compared without copying.
            Ok(bytes) if bytes == expected.as_bytes() => continue,
            Ok(bytes) => (String::from_utf8_lossy(&bytes).into_owned(), false),
            Err(e) if e.kind() == ErrorKind::NotFound => (String::new(), true),
            Err(source) => return Err(CheckError { path, source }),
        };
        // A missing file's diff would be the whole file: saying "missing" is clearer.
        let diff = if missing {
            String::new()
        } else {
            unified_diff(&actual, expected, &path.display().to_string())
        };
        found.push(Drift {
            path,
            missing,
            diff,
        });
    }
    // Only files that differ matter: a set that matches the manifest is whole, journal
    // or not.
    if let Some(journal) = crate::output::interrupted(dir).filter(|_| !found.is_empty()) {
        let note = format!(
            "note: a build into {} was interrupted while it replaced the files (its journal \
             {} is still there), so they may be a mix of two builds; the next \
             `connectorgen build` into this folder finishes the interrupted one first\n",
            dir.display(),
            journal.display()
        );
        for drift in &mut found {
            drift.diff.insert_str(0, &note);
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file that differs throughout is diffed in bounded work: the diff holds at most
    /// `MAX_DIFF_LINES` changed lines of each side and then says how many more differ.
    /// (Before the bound, 100,000 lines took 18 s; the shape, not the time, is asserted.)
    #[test]
    fn a_diff_of_a_file_that_differs_throughout_is_cut_and_says_so() {
        let on_disk: String = (0..20_000).map(|i| format!("old {i}\n")).collect();
        let generated: String = (0..15_000).map(|i| format!("new {i}\n")).collect();
        let diff = unified_diff(&on_disk, &generated, "llms.txt");
        let removed = diff.lines().filter(|l| l.starts_with("-old")).count();
        let added = diff.lines().filter(|l| l.starts_with("+new")).count();
        assert_eq!((removed, added), (MAX_DIFF_LINES, MAX_DIFF_LINES));
        let more = (20_000 - MAX_DIFF_LINES) + (15_000 - MAX_DIFF_LINES);
        assert!(
            diff.ends_with(&format!("... {more} more lines differ (the diff stops after the first {MAX_DIFF_LINES} changed lines on each side; `connectorgen build` rewrites the file)\n")),
            "{}",
            &diff[diff.len() - 300..]
        );
        assert!(diff.starts_with("--- llms.txt (on disk)\n+++ llms.txt (generated)\n@@ -1,"));
    }

    /// The lines the files share at the start and end do not count towards the bound,
    /// and the cut diff keeps the files' own line numbers.
    #[test]
    fn shared_lines_do_not_count_and_small_changes_are_diffed_whole() {
        let shared: String = (0..50_000).map(|i| format!("same {i}\n")).collect();
        let small_old = format!("{shared}old\n{shared}");
        let small_new = format!("{shared}new\n{shared}");
        let diff = unified_diff(&small_old, &small_new, "f");
        assert!(diff.contains("@@ -49998,7 +49998,7 @@\n") && diff.contains("-old\n+new\n"));
        assert!(!diff.contains("more lines differ"), "{diff}");

        let changed_old: String = (0..3_000).map(|i| format!("a {i}\n")).collect();
        let changed_new: String = (0..3_000).map(|i| format!("b {i}\n")).collect();
        let diff = unified_diff(
            &format!("{shared}{changed_old}"),
            &format!("{shared}{changed_new}"),
            "f",
        );
        assert!(diff.contains("@@ -49998,"), "{}", &diff[..200]);
        assert!(diff.ends_with(&format!("... 2000 more lines differ (the diff stops after the first {MAX_DIFF_LINES} changed lines on each side; `connectorgen build` rewrites the file)\n")));
    }
}
