//! Findings and drift → text for people (`human`) and for CI tools (`json`, `github`,
//! `sarif`).
//!
//! Takes: a run's `Diagnostics` and drift. Returns: the text to print. Line and column
//! numbers are computed here from byte offsets (1-based; columns count characters; end
//! columns are exclusive, as SARIF defines them). Every format lists every finding,
//! except `human`, which draws `DETAILED_PER_CODE` of each code and counts the rest.
//! Must never: decide what passes — exit codes belong to `main.rs` — or print anything;
//! let text from the manifest or the disk reach a terminal raw: `human` and `github`
//! escape control and bidi characters visibly (`\u{1b}`), `json` and `sarif` keep the
//! exact values and write those characters as `\u` escapes.

mod excerpt;
mod human;

use crate::english::plural;
use std::fmt::Write as _;

use owo_colors::OwoColorize as _;
use serde::Serialize;
use serde_json::json;

use crate::check::Drift;
use crate::diagnostics::{Diagnostic, Diagnostics, Finding, Level, Rule, Severity, Source};
use crate::terminal;
pub use excerpt::LineIndex;
pub use human::{DETAILED_PER_CODE, findings as human_findings, template_error};

/// Everything one `check` (or `build`) run has to say.
pub struct Report<'a> {
    pub diagnostics: &'a Diagnostics,
    pub drift: &'a [Drift],
    /// The command that brings drifted files up to date.
    pub fix: String,
}

/// The output formats of `check --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// miette diagnostics and coloured diffs, for people
    Human,
    /// one JSON document (see docs/cli.md, "Machine-readable output")
    Json,
    /// GitHub Actions workflow commands (annotations)
    Github,
    /// SARIF 2.1.0, for code-scanning dashboards
    Sarif,
}

impl Report<'_> {
    pub fn render(&self, format: Format, color: bool) -> String {
        match format {
            Format::Human => self.human(color),
            Format::Json => self.json(),
            Format::Github => self.github(),
            Format::Sarif => self.sarif(),
        }
    }

    /// "2 errors, 3 warnings, 1 file drifted".
    pub fn summary(&self) -> String {
        let errors = self.diagnostics.count(Severity::Error);
        let warnings = self.diagnostics.count(Severity::Warning);
        let mut parts = vec![
            plural(errors, "error", "errors"),
            plural(warnings, "warning", "warnings"),
        ];
        if !self.drift.is_empty() {
            parts.push(format!(
                "{} drifted",
                plural(self.drift.len(), "file", "files")
            ));
        }
        parts.join(", ")
    }

    /// The indexes the findings' positions come from; a clean run of a 100 MB manifest
    /// has no finding to place and skips the pass over its text.
    fn lines(&self) -> Files<'_> {
        Files::new(self.diagnostics)
    }

    fn human(&self, color: bool) -> String {
        let mut out = human_findings(self.diagnostics, color);
        for d in self.drift {
            let what = d.what();
            let _ = writeln!(
                out,
                "drift: {} {what}",
                terminal::escape(&d.path.display().to_string())
            );
            for line in d.diff.lines() {
                let line = human::diff_line(line);
                let line = match line.as_bytes().first() {
                    Some(b'+') if color && !line.starts_with("+++") => line.green().to_string(),
                    Some(b'-') if color && !line.starts_with("---") => line.red().to_string(),
                    Some(b'@') if color => line.cyan().to_string(),
                    _ => line,
                };
                let _ = writeln!(out, "{line}");
            }
            out.push('\n');
        }
        if !self.drift.is_empty() {
            let _ = writeln!(
                out,
                "to update the generated files, run `{}`",
                terminal::escape(&self.fix)
            );
        }
        let _ = writeln!(out, "{}", self.summary());
        out
    }

    fn json(&self) -> String {
        let lines = self.lines();
        let diagnostics: Vec<JsonDiagnostic> = self
            .diagnostics
            .items()
            .iter()
            .map(|f| {
                let (start, end) = lines.range(f);
                JsonDiagnostic {
                    code: f.diagnostic.code_str(),
                    severity: f.severity,
                    message: f.diagnostic.to_string(),
                    help: help(&f.diagnostic),
                    file: lines.name(f),
                    line: start.0,
                    column: start.1,
                    end_line: end.0,
                    end_column: end.1,
                }
            })
            .collect();
        let drift: Vec<_> = self
            .drift
            .iter()
            .map(|d| {
                json!({
                    "file": d.path.display().to_string(),
                    "missing": d.missing,
                    "diff": d.diff,
                })
            })
            .collect();
        let doc = json!({
            "diagnostics": diagnostics,
            "drift": drift,
            "summary": {
                "errors": self.diagnostics.count(Severity::Error),
                "warnings": self.diagnostics.count(Severity::Warning),
                "drifted": self.drift.len(),
                "fix": if self.drift.is_empty() { None } else { Some(&self.fix) },
            }
        });
        to_pretty(&doc)
    }

    fn github(&self) -> String {
        let lines = self.lines();
        let mut out = String::new();
        for f in self.diagnostics.items() {
            gh_annotation(&mut out, f, &lines);
        }
        for d in self.drift {
            let file = d.path.display().to_string();
            let what = d.what();
            let _ = writeln!(
                out,
                "::error file={},title=drift::{}",
                gh_property(&file),
                gh_message(&format!("{file} {what}; run `{}` to update it", self.fix)),
            );
            if !d.diff.is_empty() {
                let _ = writeln!(out, "::group::diff {}", gh_message(&file));
                out.push_str(&terminal::escape(&d.diff));
                let _ = writeln!(out, "::endgroup::");
            }
        }
        let _ = writeln!(out, "{}", self.summary());
        out
    }

    fn sarif(&self) -> String {
        let lines = self.lines();
        // One rule per lint id, always; problem codes and drift when they occur.
        let mut rules: Vec<serde_json::Value> = Rule::lints()
            .filter(|l| !l.is_diff())
            .map(sarif_rule)
            .collect();
        let mut ids: Vec<String> = Rule::lints()
            .filter(|l| !l.is_diff())
            .map(|l| l.code().to_string())
            .collect();
        let mut results = Vec::new();
        let mut rule_index = |code: &str, summary: &str, rules: &mut Vec<serde_json::Value>| {
            ids.iter().position(|c| c == code).unwrap_or_else(|| {
                ids.push(code.to_string());
                rules.push(rule(code, summary, "error"));
                ids.len() - 1
            })
        };
        for f in self.diagnostics.items() {
            let code = f.diagnostic.code_str();
            let summary = Rule::from(&f.diagnostic).summary();
            let index = rule_index(&code, &summary, &mut rules);
            results.push(sarif_result(f, &lines, index));
        }
        for d in self.drift {
            let index = rule_index(
                "drift",
                "A generated file does not match what the manifest generates.",
                &mut rules,
            );
            let file = d.path.display().to_string();
            let what = d.what();
            results.push(json!({
                "ruleId": "drift",
                "ruleIndex": index,
                "level": "error",
                "message": { "text": format!("{file} {what}; run `{}` to update it", self.fix) },
                "locations": [{
                    "physicalLocation": { "artifactLocation": { "uri": uri(&file) } }
                }]
            }));
        }
        sarif_log(rules, results)
    }
}

/// A finding's message followed by its help, as annotations and SARIF results show it.
fn message_with_help(f: &Finding) -> String {
    let mut message = f.diagnostic.to_string();
    if let Some(help) = help(&f.diagnostic) {
        message.push_str("\nhelp: ");
        message.push_str(&help);
    }
    message
}

/// One finding as a GitHub Actions annotation (a line of `out`), placed in its file.
pub(crate) fn gh_annotation(out: &mut String, f: &Finding, files: &Files) {
    let ((line, col), (end_line, end_col)) = files.range(f);
    let _ = writeln!(
        out,
        "::{} file={},line={line},col={col},endLine={end_line},endColumn={end_col},title={}::{}",
        f.severity.as_str(),
        gh_property(files.name(f)),
        gh_property(&f.diagnostic.code_str()),
        gh_message(&message_with_help(f)),
    );
}

/// A lint rule's SARIF descriptor, at the level it has by default.
pub(crate) fn sarif_rule(r: Rule) -> serde_json::Value {
    let level = match r.lint_level() {
        Some(Level::Allow) => "none",
        Some(Level::Warn) => "warning",
        Some(Level::Deny) | None => "error",
    };
    rule(r.code(), &r.summary(), level)
}

/// One finding as a SARIF result for the rule at `rule_index`, placed in its file.
pub(crate) fn sarif_result(f: &Finding, files: &Files, rule_index: usize) -> serde_json::Value {
    let ((line, col), (end_line, end_col)) = files.range(f);
    json!({
        "ruleId": f.diagnostic.code_str(),
        "ruleIndex": rule_index,
        "level": f.severity.as_str(),
        "message": { "text": message_with_help(f) },
        "locations": [{
            "physicalLocation": {
                "artifactLocation": { "uri": uri(files.name(f)) },
                "region": {
                    "startLine": line, "startColumn": col,
                    "endLine": end_line, "endColumn": end_col
                }
            }
        }]
    })
}

/// The SARIF 2.1.0 log of one connectorgen run: its rules and results.
pub(crate) fn sarif_log(rules: Vec<serde_json::Value>, results: Vec<serde_json::Value>) -> String {
    to_pretty(&json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {
                "driver": {
                    "name": "connectorgen",
                    "version": env!("CARGO_PKG_VERSION"),
                    "rules": rules
                }
            },
            "results": results
        }]
    }))
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct JsonDiagnostic<'a> {
    code: String,
    severity: Severity,
    message: String,
    help: Option<String>,
    file: &'a str,
    line: usize,
    column: usize,
    end_line: usize,
    end_column: usize,
}

pub fn rule(id: &str, summary: &str, level: &str) -> serde_json::Value {
    json!({
        "id": id,
        "shortDescription": { "text": summary },
        "defaultConfiguration": { "level": level }
    })
}

pub fn to_pretty(doc: &serde_json::Value) -> String {
    let mut text = terminal::json_ascii_controls(
        serde_json::to_string_pretty(doc).expect("serialising in-memory JSON cannot fail"),
    );
    text.push('\n');
    text
}

pub(crate) fn help(d: &Diagnostic) -> Option<String> {
    use miette::Diagnostic as _;
    d.help().map(|h| h.to_string())
}

/// A SARIF artifact URI: the relative path with `/` separators, percent-encoded.
pub fn uri(path: &str) -> String {
    use percent_encoding::{AsciiSet, CONTROLS, utf8_percent_encode};
    const PATH: &AsciiSet = &CONTROLS
        .add(b' ')
        .add(b'"')
        .add(b'#')
        .add(b'%')
        .add(b'<')
        .add(b'>')
        .add(b'?')
        .add(b'`')
        .add(b'{')
        .add(b'}');
    utf8_percent_encode(&path.replace('\\', "/"), PATH).to_string()
}

/// Workflow-command message text: `%`, CR and LF are escaped, as GitHub documents;
/// other control and bidi characters visibly, as for a terminal (the log is one).
pub fn gh_message(text: &str) -> String {
    terminal::escape(text)
        .replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Workflow-command property values additionally escape `:` and `,`.
pub fn gh_property(text: &str) -> String {
    gh_message(text).replace(':', "%3A").replace(',', "%2C")
}

/// The line indexes of the files findings point into: the manifest, and the files of
/// the base document in base mode. A file no finding points into is not indexed.
pub(crate) struct Files<'a> {
    manifest: (&'a str, LineIndex<'a>),
    /// Each file of the base document, in the order of the offsets they start at.
    base: Vec<(&'a str, LineIndex<'a>)>,
}

impl<'a> Files<'a> {
    pub(crate) fn new(diagnostics: &'a Diagnostics) -> Self {
        let needs = |source| diagnostics.items().iter().any(|f| f.source == source);
        let index = |text: &'a str, source| LineIndex::new(if needs(source) { text } else { "" });
        // A base file is indexed only when a finding points into its range of offsets.
        let starts: Vec<usize> = diagnostics
            .items()
            .iter()
            .filter(|f| f.source == Source::Base)
            .filter_map(|f| crate::diagnostics::first_offset(&f.diagnostic))
            .collect();
        let base = diagnostics
            .base_files()
            .map(|(name, text, start)| {
                let used = starts
                    .iter()
                    .any(|&o| o >= start && o <= start + text.len());
                let text = if used { text } else { "" };
                (name, LineIndex::starting_at(text, start))
            })
            .collect();
        Files {
            manifest: (
                diagnostics.name(),
                index(diagnostics.text(), Source::Manifest),
            ),
            base,
        }
    }

    /// The index and name of the file a finding points into.
    pub(crate) fn file(&self, f: &Finding) -> (&LineIndex<'a>, &'a str) {
        if f.source == Source::Base && !self.base.is_empty() {
            let offset = crate::diagnostics::first_offset(&f.diagnostic).unwrap_or(0);
            let i = self
                .base
                .partition_point(|(_, index)| index.start() <= offset)
                .saturating_sub(1);
            let (name, index) = &self.base[i];
            return (index, name);
        }
        (&self.manifest.1, self.manifest.0)
    }

    pub(crate) fn name(&self, f: &Finding) -> &'a str {
        self.file(f).1
    }

    pub(crate) fn range(&self, f: &Finding) -> ((usize, usize), (usize, usize)) {
        range(self.file(f).0, f)
    }
}

/// The start and (exclusive) end of a finding's first label.
fn range(lines: &LineIndex, f: &Finding) -> ((usize, usize), (usize, usize)) {
    use miette::Diagnostic as _;
    let span = f.diagnostic.labels().and_then(|mut l| l.next());
    let (offset, len) = span.map_or((0, 0), |s| (s.offset(), s.len()));
    (
        lines.position(offset),
        lines.position(offset.saturating_add(len)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn github_escaping() {
        assert_eq!(gh_message("50%\nnext"), "50%25%0Anext");
        assert_eq!(gh_property("a:b,c"), "a%3Ab%2Cc");
    }

    #[test]
    fn uris_are_encoded() {
        assert_eq!(uri("my dir/con#1.yaml"), "my%20dir/con%231.yaml");
    }
}
