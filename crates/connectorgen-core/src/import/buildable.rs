//! Which listed operations `build` would refuse, found by asking `build`'s own analysis.
//!
//! Takes: the parsed document, the `service:` and `openapi:` lines import writes, and the
//! listed operations. Returns: for each operation, `None` when the manifest builds with
//! it, or why `build` refuses it (its first error: code, place in the document, message),
//! so import can write it commented out and the manifest it writes always builds.
//! Must never: read a file (the document is passed in parsed, `Options::parsed_base`),
//! guess from rules of its own (the analysis is `build`'s, whatever it refuses), or
//! accept a set that still has an error: when the refused operations cannot be told
//! apart, import writes nothing and shows `build`'s findings (`ImportError::Invalid`).
//!
//! One analysis of the whole manifest when it builds (the usual case); otherwise halves
//! of it, down to the operations that fail alone (an external `$ref`, a parameter the
//! document gets wrong, an argument name MCP cannot take), then the rest together again,
//! taking out any operation a remaining error points at in the manifest.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::sync::Arc;

use crate::base::Base;
use crate::diagnostics::{Diagnostics, Finding, Severity, Source};

use super::yaml::comment;
use super::{Entry, ImportError};

/// How often the remaining operations are analysed together again after taking out
/// those errors point at: errors between operations are rare, and each round takes out
/// at least one operation or stops.
const ROUNDS: usize = 4;

/// Why `build` refuses each of `entries` (same order), or `None` for those it takes.
pub(super) fn refusals(
    base: &Arc<Base>,
    head: &str,
    entries: &[&Entry],
) -> Result<Vec<Option<String>>, ImportError> {
    let all: Vec<usize> = (0..entries.len()).collect();
    let whole = analyse(base, head, entries, &all)?;
    if whole.errors.is_empty() {
        return Ok(vec![None; entries.len()]);
    }
    let mut why: Vec<Option<String>> = vec![None; entries.len()];
    bisect(base, head, entries, &all, Some(&whole), &mut why)?;
    for _ in 0..ROUNDS {
        let kept: Vec<usize> = (0..entries.len()).filter(|&i| why[i].is_none()).collect();
        if kept.is_empty() {
            break;
        }
        let together = analyse(base, head, entries, &kept)?;
        if together.errors.is_empty() {
            return Ok(why);
        }
        // An error between operations points at the manifest line of one of them.
        let mut blamed = BTreeSet::new();
        for &e in &together.errors {
            let finding = together.finding(e);
            if let Some(k) = together.entry_at(finding) {
                blamed.insert((kept[k], reason(base, finding)));
            }
        }
        if blamed.is_empty() {
            return Err(ImportError::Invalid(together.diagnostics));
        }
        for (i, r) in blamed {
            why[i].get_or_insert(r);
        }
    }
    let kept: Vec<usize> = (0..entries.len()).filter(|&i| why[i].is_none()).collect();
    if kept.is_empty() {
        // Nothing it can take: `build`'s own words about the whole.
        return Err(ImportError::Invalid(whole.diagnostics));
    }
    let last = analyse(base, head, entries, &kept)?;
    if !last.errors.is_empty() {
        return Err(ImportError::Invalid(last.diagnostics));
    }
    Ok(why)
}

/// Finds the operations of `group` that fail on their own, halving the group while it
/// has errors: a few analyses for a few bad operations among hundreds (each alone would
/// be one analysis per operation). `known` is the group's analysis when already done.
fn bisect(
    base: &Arc<Base>,
    head: &str,
    entries: &[&Entry],
    group: &[usize],
    known: Option<&Analysed>,
    why: &mut [Option<String>],
) -> Result<(), ImportError> {
    let done;
    let analysed = if let Some(a) = known {
        a
    } else {
        done = analyse(base, head, entries, group)?;
        &done
    };
    match (analysed.errors.first(), group) {
        (None, _) => {}
        (Some(&e), [one]) => why[*one] = Some(reason(base, analysed.finding(e))),
        // Errors between operations that each build alone are left to the rounds after.
        (Some(_), _) => {
            let (left, right) = group.split_at(group.len() / 2);
            bisect(base, head, entries, left, None, why)?;
            bisect(base, head, entries, right, None, why)?;
        }
    }
    Ok(())
}

/// One analysis of the manifest holding `entries[chosen]`.
struct Analysed {
    diagnostics: Diagnostics,
    /// Indexes into `diagnostics.items()` of its errors.
    errors: Vec<usize>,
    /// Where each chosen entry starts in the manifest text, in order.
    starts: Vec<usize>,
}

impl Analysed {
    fn finding(&self, error: usize) -> &Finding {
        &self.diagnostics.items()[error]
    }

    /// The chosen entry (its place in `chosen`) whose lines hold the finding's first label.
    fn entry_at(&self, finding: &Finding) -> Option<usize> {
        if finding.source != Source::Manifest {
            return None;
        }
        let offset = first_offset(finding)?;
        self.starts.iter().rposition(|&start| start <= offset)
    }
}

fn analyse(
    base: &Arc<Base>,
    head: &str,
    entries: &[&Entry],
    chosen: &[usize],
) -> Result<Analysed, ImportError> {
    let mut text = String::from(head);
    let mut starts = Vec::with_capacity(chosen.len());
    for &i in chosen {
        starts.push(text.len());
        super::write_entry(&mut text, entries[i], "  ");
    }
    if chosen.is_empty() {
        // Without an operation the analysis stops at `no-operations`; none is refused.
        return Ok(Analysed {
            diagnostics: Diagnostics::new(&base.name, Arc::new(text), Vec::new()),
            errors: Vec::new(),
            starts,
        });
    }
    let options = crate::Options {
        parsed_base: Some(base.clone()),
        ..Default::default()
    };
    let analysis = crate::analyze_with("connector.yaml", Arc::new(text), &options)
        .map_err(|e| ImportError::Render(e.to_string()))?;
    let errors = analysis
        .diagnostics
        .items()
        .iter()
        .enumerate()
        .filter(|(_, f)| f.severity == Severity::Error)
        .map(|(i, _)| i)
        .collect();
    Ok(Analysed {
        diagnostics: analysis.diagnostics,
        errors,
        starts,
    })
}

fn first_offset(finding: &Finding) -> Option<usize> {
    use miette::Diagnostic as _;
    finding
        .diagnostic
        .labels()
        .and_then(|mut labels| labels.next())
        .map(|l| l.offset())
}

/// `build`'s reason, for a comment: "base-ref-url at line 23 of the document: …", or
/// "… at line 3 of paths/x.yaml: …" for a file the document refers to.
fn reason(base: &Base, finding: &Finding) -> String {
    let code = finding.diagnostic.code_str();
    let mut out = code.clone();
    if finding.source == Source::Base
        && let Some(offset) = first_offset(finding)
    {
        // Spans into file `k` are offset by the files before it, plus one each.
        let mut start = 0;
        for (k, (name, text)) in base.files().iter().enumerate() {
            if offset <= start + text.len() {
                let at = offset - start;
                let line = 1 + text.as_bytes()[..at]
                    .iter()
                    .filter(|&&b| b == b'\n')
                    .count();
                let file = if k == 0 {
                    "the document".to_string()
                } else {
                    comment(name)
                };
                let _ = write!(out, " at line {line} of {file}");
                break;
            }
            start += text.len() + 1;
        }
    }
    let _ = write!(out, ": {}", comment(&finding.diagnostic.to_string()));
    out
}
