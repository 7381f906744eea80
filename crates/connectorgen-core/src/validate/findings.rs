//! The findings of one validation: every problem, in the order the checks met them.
//!
//! Takes: each diagnostic as a check finds it (an error, a warning, or a problem inside
//! the base document). Returns: how many errors there are so far (a check compares the
//! count before and after to know whether its part is usable), and the list at the end.
//! Must never: drop or reorder a finding (the report sorts them by place, keeping this
//! order among equals), or hold anything but findings.

use crate::diagnostics::{Diagnostic, Finding, Severity};

#[derive(Default)]
pub(super) struct Findings {
    list: Vec<Finding>,
}

impl Findings {
    /// An error in the manifest.
    pub(super) fn push(&mut self, d: Diagnostic) {
        self.list.push(Finding::error(d));
    }

    /// An error inside the base document (its span points into that file).
    pub(super) fn push_base(&mut self, d: Diagnostic) {
        self.list.push(Finding::error(d).in_base());
    }

    /// A finding as it is (a warning, or one already marked as the base document's).
    pub(super) fn add(&mut self, finding: Finding) {
        self.list.push(finding);
    }

    /// How many errors were found so far (warnings do not stop anything).
    pub(super) fn errors(&self) -> usize {
        self.list
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .count()
    }

    pub(super) fn into_vec(self) -> Vec<Finding> {
        self.list
    }
}
