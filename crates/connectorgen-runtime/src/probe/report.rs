//! A `probe` run → text, in the four formats of `check` and with its helpers (JSON
//! layout, GitHub escaping, the SARIF skeleton, line and column from byte offsets).
//!
//! Takes: a `ProbeReport` and the manifest's name and text (results point at the
//! operation's id in it). Returns: the text to print. Must never: decide the exit code
//! or print; let a provider's body reach a terminal raw (`human` and `github` escape
//! control characters visibly, `json` and `sarif` as `\u` escapes).

use std::fmt::Write as _;

use serde_json::json;

use crate::probe::{Check, CheckResult, Outcome, ProbeReport};
use connectorgen_core::report::{Format, LineIndex, gh_message, gh_property, rule, to_pretty, uri};
use connectorgen_core::terminal;

/// A probe run with the manifest its results point into.
pub struct ProbeText<'a> {
    pub report: &'a ProbeReport,
    pub manifest_name: &'a str,
    pub manifest_text: &'a str,
}

impl ProbeText<'_> {
    pub fn render(&self, format: Format) -> String {
        match format {
            Format::Human => self.human(),
            Format::Json => self.json(),
            Format::Github => self.github(),
            Format::Sarif => self.sarif(),
        }
    }

    /// "3 passed, 1 failed, 2 skipped, 1 warning; 2 paid calls of 5 allowed".
    pub(crate) fn summary(&self) -> String {
        let r = self.report;
        let mut parts = vec![
            format!("{} passed", r.count("passed")),
            format!("{} failed", r.count("failed")),
            format!("{} skipped", r.count("skipped")),
        ];
        let warnings = r.count("warning");
        if warnings > 0 {
            parts.push(format!(
                "{warnings} {}",
                if warnings == 1 { "warning" } else { "warnings" }
            ));
        }
        format!(
            "{}; {} of {} allowed",
            parts.join(", "),
            paid(r.paid_calls),
            r.allow_spend
        )
    }

    #[expect(
        clippy::unused_self,
        reason = "called beside the report's other methods; the span is the result's"
    )]
    fn position(&self, lines: &LineIndex, result: &CheckResult) -> (usize, usize) {
        result
            .span
            .map_or((1, 1), |span| lines.position(span.offset()))
    }

    fn human(&self) -> String {
        let mut out = format!(
            "probe {} with {}\n",
            terminal::escape(&self.report.base_url),
            terminal::escape(self.manifest_name)
        );
        for r in &self.report.results {
            let _ = writeln!(
                out,
                "{:<8} {} · {}",
                r.outcome.word(),
                terminal::escape(&r.operation),
                r.check.title()
            );
            match &r.outcome {
                Outcome::Failed(evidence) | Outcome::Warning(evidence) => {
                    for e in evidence {
                        let _ = writeln!(out, "         {}", terminal::escape(e));
                    }
                }
                Outcome::Skipped(why) => {
                    let _ = writeln!(out, "         {}", terminal::escape(why));
                }
                Outcome::Passed => {}
            }
        }
        let _ = writeln!(out, "{}", self.summary());
        out
    }

    fn json(&self) -> String {
        let lines = LineIndex::new(self.manifest_text);
        let results: Vec<_> = self
            .report
            .results
            .iter()
            .map(|r| {
                let (line, column) = self.position(&lines, r);
                let (evidence, why) = match &r.outcome {
                    Outcome::Failed(e) | Outcome::Warning(e) => (e.clone(), None),
                    Outcome::Skipped(why) => (Vec::new(), Some(why.clone())),
                    Outcome::Passed => (Vec::new(), None),
                };
                json!({
                    "check": r.check.id(),
                    "title": r.check.title(),
                    "operation": r.operation,
                    "outcome": r.outcome.word(),
                    "evidence": evidence,
                    "why": why,
                    "file": self.manifest_name,
                    "line": line,
                    "column": column,
                })
            })
            .collect();
        let r = self.report;
        to_pretty(&json!({
            "baseUrl": r.base_url,
            "results": results,
            "summary": {
                "passed": r.count("passed"),
                "failed": r.count("failed"),
                "skipped": r.count("skipped"),
                "warnings": r.count("warning"),
                "paidCalls": r.paid_calls,
                "allowSpend": r.allow_spend,
            }
        }))
    }

    fn github(&self) -> String {
        let lines = LineIndex::new(self.manifest_text);
        let mut out = String::new();
        for r in &self.report.results {
            let (command, detail) = match &r.outcome {
                Outcome::Failed(e) => ("error", e.join("\n")),
                Outcome::Warning(e) => ("warning", e.join("\n")),
                Outcome::Skipped(why) => ("notice", why.clone()),
                Outcome::Passed => continue,
            };
            let (line, col) = self.position(&lines, r);
            let _ = writeln!(
                out,
                "::{command} file={},line={line},col={col},title={}::{}",
                gh_property(self.manifest_name),
                gh_property(&format!("probe {}", r.check.id())),
                gh_message(&format!(
                    "{}: {} {}\n{detail}",
                    r.operation,
                    r.check.title(),
                    r.outcome.word()
                )),
            );
        }
        let _ = writeln!(out, "{}", self.summary());
        out
    }

    fn sarif(&self) -> String {
        let lines = LineIndex::new(self.manifest_text);
        let rules: Vec<_> = <Check as strum::VariantArray>::VARIANTS
            .iter()
            .map(|c| rule(c.id(), c.title(), "error"))
            .collect();
        let mut results = Vec::new();
        for r in &self.report.results {
            let (level, text) = match &r.outcome {
                Outcome::Failed(e) => ("error", e.join("\n")),
                Outcome::Warning(e) => ("warning", e.join("\n")),
                Outcome::Skipped(why) => ("note", format!("skipped: {why}")),
                Outcome::Passed => continue,
            };
            let index = <Check as strum::VariantArray>::VARIANTS
                .iter()
                .position(|c| *c == r.check)
                .unwrap_or(0);
            let (line, col) = self.position(&lines, r);
            results.push(json!({
                "ruleId": r.check.id(),
                "ruleIndex": index,
                "level": level,
                "message": { "text": format!("{}: {}\n{text}", r.operation, r.check.title()) },
                "locations": [{
                    "physicalLocation": {
                        "artifactLocation": { "uri": uri(self.manifest_name) },
                        "region": { "startLine": line, "startColumn": col }
                    }
                }]
            }));
        }
        to_pretty(&json!({
            "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
            "version": "2.1.0",
            "runs": [{
                "tool": {
                    "driver": {
                        "name": "connectorgen probe",
                        "version": env!("CARGO_PKG_VERSION"),
                        "rules": rules
                    }
                },
                "results": results
            }]
        }))
    }
}

fn paid(n: u32) -> String {
    format!("{n} paid {}", if n == 1 { "call" } else { "calls" })
}
