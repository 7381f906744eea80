//! A diff's findings → text: `human` (miette, as `check` draws findings), `json`,
//! `github` (workflow annotations), `sarif` 2.1.0 and `markdown` (one table, for a pull
//! request comment).
//!
//! Takes: a `Report`. Returns: the text to print. Positions are computed from byte
//! offsets as `check`'s formats compute them (`report::Files`).
//! Must never: decide the exit code (main's), let text from a manifest act on a terminal
//! (`human` and `github` escape it as `check` does), or let it shape the Markdown: every
//! character of a cell that Markdown or HTML could read as structure is escaped, so a
//! manifest cannot add a row, a link, an image or a heading to the comment.

use crate::english::plural;
use std::fmt::Write as _;

use serde_json::json;

use super::{Report, operation};
use crate::diagnostics::{Rule, Severity};
use crate::report::{
    Files, gh_annotation, help, human_findings, sarif_log, sarif_result, sarif_rule, to_pretty,
};
use crate::terminal;

/// The output formats of `diff --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// miette diagnostics, for people
    Human,
    /// one JSON document (see docs/diff.md)
    Json,
    /// GitHub Actions workflow commands (annotations)
    Github,
    /// SARIF 2.1.0, for code-scanning dashboards
    Sarif,
    /// one Markdown table, for a pull-request comment
    Markdown,
}

/// One finding with its place, as every machine format lists it.
struct Placed<'a> {
    code: String,
    severity: Severity,
    operation: &'a str,
    message: String,
    help: Option<String>,
    file: &'a str,
    start: (usize, usize),
    end: (usize, usize),
}

impl Report {
    pub fn render(&self, format: Format, color: bool) -> String {
        match format {
            Format::Human => self.human(color),
            Format::Json => self.json(),
            Format::Github => self.github(),
            Format::Sarif => self.sarif(),
            Format::Markdown => self.markdown(),
        }
    }

    /// "1 error, 2 warnings".
    pub fn summary(&self) -> String {
        format!(
            "{}, {}",
            plural(self.count(Severity::Error), "error", "errors"),
            plural(self.count(Severity::Warning), "warning", "warnings")
        )
    }

    fn placed(&self) -> Vec<Placed<'_>> {
        let mut out = Vec::new();
        for diagnostics in self.sides() {
            let files = Files::new(diagnostics);
            for f in diagnostics.items() {
                let (start, end) = files.range(f);
                out.push(Placed {
                    code: f.diagnostic.code_str(),
                    severity: f.severity,
                    operation: operation(&f.diagnostic).unwrap_or_default(),
                    message: f.diagnostic.to_string(),
                    help: help(&f.diagnostic),
                    file: files.name(f),
                    start,
                    end,
                });
            }
        }
        out
    }

    fn human(&self, color: bool) -> String {
        let mut out = String::new();
        for side in self.sides() {
            out.push_str(&human_findings(side, color));
        }
        if self.is_empty() {
            out.push_str("no change to what the model is told\n");
        } else {
            let _ = writeln!(out, "{}", self.summary());
        }
        out
    }

    fn json(&self) -> String {
        let findings: Vec<_> = self
            .placed()
            .into_iter()
            .map(|p| {
                json!({
                    "code": p.code,
                    "severity": p.severity,
                    "operation": p.operation,
                    "message": p.message,
                    "help": p.help,
                    "file": p.file,
                    "line": p.start.0,
                    "column": p.start.1,
                    "endLine": p.end.0,
                    "endColumn": p.end.1,
                })
            })
            .collect();
        to_pretty(&json!({
            "old": self.old.name(),
            "new": self.new.name(),
            "findings": findings,
            "summary": {
                "errors": self.count(Severity::Error),
                "warnings": self.count(Severity::Warning),
            }
        }))
    }

    fn github(&self) -> String {
        let mut out = String::new();
        for diagnostics in self.sides() {
            let files = Files::new(diagnostics);
            for f in diagnostics.items() {
                gh_annotation(&mut out, f, &files);
            }
        }
        let _ = writeln!(out, "{}", self.summary());
        out
    }

    fn sarif(&self) -> String {
        let rules = Rule::diff_rules().map(sarif_rule).collect();
        let ids: Vec<&str> = Rule::diff_rules().map(Rule::code).collect();
        let mut results = Vec::new();
        for diagnostics in self.sides() {
            let files = Files::new(diagnostics);
            for f in diagnostics.items() {
                let code = f.diagnostic.code_str();
                let index = ids.iter().position(|c| *c == code).unwrap_or(0);
                results.push(sarif_result(f, &files, index));
            }
        }
        sarif_log(rules, results)
    }

    fn markdown(&self) -> String {
        let mut out = String::from("### connectorgen diff\n\n");
        let placed = self.placed();
        if placed.is_empty() {
            out.push_str("No change to what the model is told.\n");
            return out;
        }
        out.push_str("| severity | rule | operation | finding |\n|---|---|---|---|\n");
        for p in &placed {
            let _ = writeln!(
                out,
                "| {} | `{}` | {} | {} |",
                p.severity.as_str(),
                p.code,
                md_cell(p.operation),
                md_cell(&p.message),
            );
        }
        let _ = writeln!(out, "\n{}", md_cell(&self.summary()));
        out
    }
}

/// Text as one table cell: every ASCII punctuation character backslash-escaped (which
/// CommonMark reads as that character, never as structure, HTML or an entity), control
/// and bidi characters shown as escapes, and each line break as `<br>` (the one piece
/// of HTML we write).
pub(crate) fn md_cell(text: &str) -> String {
    let visible = terminal::escape(text);
    let mut out = String::with_capacity(visible.len());
    for (i, line) in visible.split('\n').enumerate() {
        if i > 0 {
            out.push_str("<br>");
        }
        for c in line.chars() {
            if c.is_ascii_punctuation() {
                out.push('\\');
            }
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::md_cell;

    #[test]
    fn a_cell_cannot_make_structure() {
        assert_eq!(md_cell("a | b"), "a \\| b");
        assert_eq!(md_cell("<img src=x>"), "\\<img src\\=x\\>");
        assert_eq!(md_cell("[x](y)"), "\\[x\\]\\(y\\)");
        assert_eq!(md_cell("one\ntwo"), "one<br>two");
        assert_eq!(md_cell("&amp;"), "\\&amp\\;");
    }
}
