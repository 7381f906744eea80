//! Findings and drift → text for people (`human`) and for CI tools (`json`, `github`,
//! `sarif`).
//!
//! Takes: a run's `Diagnostics` and drift. Returns: the text to print. Line and column
//! numbers are computed here from byte offsets (1-based; columns count characters; end
//! columns are exclusive, as SARIF defines them).
//! Must never: decide what passes — exit codes belong to `main.rs` — or print anything.

use std::fmt::Write as _;

use miette::{GraphicalReportHandler, GraphicalTheme, NamedSource};
use owo_colors::OwoColorize as _;
use serde::Serialize;
use serde_json::json;

use crate::check::Drift;
use crate::diagnostics::{Diagnostic, Diagnostics, Finding, Severity};
use crate::lint::{Level, Lint};

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
    /// one JSON document (see README, "Machine-readable output")
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
        let plural =
            |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
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

    fn human(&self, color: bool) -> String {
        let mut out = human_findings(self.diagnostics, color);
        for d in self.drift {
            let what = if d.missing {
                "is missing"
            } else {
                "is out of date"
            };
            let _ = writeln!(out, "drift: {} {what}", d.path.display());
            for line in d.diff.lines() {
                let line = match line.as_bytes().first() {
                    Some(b'+') if color && !line.starts_with("+++") => line.green().to_string(),
                    Some(b'-') if color && !line.starts_with("---") => line.red().to_string(),
                    Some(b'@') if color => line.cyan().to_string(),
                    _ => line.to_string(),
                };
                let _ = writeln!(out, "{line}");
            }
            out.push('\n');
        }
        if !self.drift.is_empty() {
            let _ = writeln!(out, "to update the generated files, run `{}`", self.fix);
        }
        let _ = writeln!(out, "{}", self.summary());
        out
    }

    fn json(&self) -> String {
        let lines = LineIndex::new(self.diagnostics.text());
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
                    file: self.diagnostics.name(),
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
        let lines = LineIndex::new(self.diagnostics.text());
        let mut out = String::new();
        for f in self.diagnostics.items() {
            let ((line, col), (end_line, end_col)) = lines.range(f);
            let command = match f.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
            };
            let mut message = f.diagnostic.to_string();
            if let Some(help) = help(&f.diagnostic) {
                message.push_str("\nhelp: ");
                message.push_str(&help);
            }
            let _ = writeln!(
                out,
                "::{command} file={},line={line},col={col},endLine={end_line},endColumn={end_col},title={}::{}",
                gh_property(self.diagnostics.name()),
                gh_property(&f.diagnostic.code_str()),
                gh_message(&message),
            );
        }
        for d in self.drift {
            let file = d.path.display().to_string();
            let what = if d.missing {
                "is missing"
            } else {
                "is out of date"
            };
            let _ = writeln!(
                out,
                "::error file={},title=drift::{}",
                gh_property(&file),
                gh_message(&format!("{file} {what}; run `{}` to update it", self.fix)),
            );
            if !d.diff.is_empty() {
                let _ = writeln!(out, "::group::diff {}", gh_message(&file));
                out.push_str(&d.diff);
                let _ = writeln!(out, "::endgroup::");
            }
        }
        let _ = writeln!(out, "{}", self.summary());
        out
    }

    fn sarif(&self) -> String {
        let lines = LineIndex::new(self.diagnostics.text());
        // One rule per lint id, always; problem codes and drift when they occur.
        let mut rules: Vec<serde_json::Value> = Lint::ALL
            .iter()
            .map(|l| {
                rule(
                    l.id(),
                    l.summary(),
                    match l.default_level() {
                        Level::Allow => "none",
                        Level::Warn => "warning",
                        Level::Deny => "error",
                    },
                )
            })
            .collect();
        let mut ids: Vec<String> = Lint::ALL.iter().map(|l| l.id().to_string()).collect();
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
            let index = rule_index(&code, problem_summary(&code), &mut rules);
            let ((line, col), (end_line, end_col)) = lines.range(f);
            let mut text = f.diagnostic.to_string();
            if let Some(help) = help(&f.diagnostic) {
                text.push_str("\nhelp: ");
                text.push_str(&help);
            }
            results.push(json!({
                "ruleId": code,
                "ruleIndex": index,
                "level": match f.severity { Severity::Error => "error", Severity::Warning => "warning" },
                "message": { "text": text },
                "locations": [{
                    "physicalLocation": {
                        "artifactLocation": { "uri": uri(self.diagnostics.name()) },
                        "region": {
                            "startLine": line, "startColumn": col,
                            "endLine": end_line, "endColumn": end_col
                        }
                    }
                }]
            }));
        }
        for d in self.drift {
            let index = rule_index(
                "drift",
                "A generated file does not match what the manifest generates.",
                &mut rules,
            );
            let file = d.path.display().to_string();
            let what = if d.missing {
                "is missing"
            } else {
                "is out of date"
            };
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
        let doc = json!({
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
        });
        to_pretty(&doc)
    }
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

fn rule(id: &str, summary: &str, level: &str) -> serde_json::Value {
    json!({
        "id": id,
        "shortDescription": { "text": summary },
        "defaultConfiguration": { "level": level }
    })
}

fn to_pretty(doc: &serde_json::Value) -> String {
    let mut text =
        serde_json::to_string_pretty(doc).expect("serialising in-memory JSON cannot fail");
    text.push('\n');
    text
}

fn help(d: &Diagnostic) -> Option<String> {
    use miette::Diagnostic as _;
    d.help().map(|h| h.to_string())
}

/// A SARIF artifact URI: the relative path with `/` separators, percent-encoded.
fn uri(path: &str) -> String {
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

/// Workflow-command message text: `%`, CR and LF are escaped, as GitHub documents.
fn gh_message(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Workflow-command property values additionally escape `:` and `,`.
fn gh_property(text: &str) -> String {
    gh_message(text).replace(':', "%3A").replace(',', "%2C")
}

/// Byte offset → (line, column), both 1-based, columns in characters.
struct LineIndex<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    fn new(text: &'a str) -> Self {
        let starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        LineIndex { text, starts }
    }

    fn position(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let line = self.starts.partition_point(|&s| s <= offset).max(1);
        let start = self.starts[line - 1];
        let column = self
            .text
            .get(start..offset)
            .map_or(offset - start, |s| s.chars().count());
        (line, column + 1)
    }

    /// The start and (exclusive) end of a finding's first label.
    fn range(&self, f: &Finding) -> ((usize, usize), (usize, usize)) {
        use miette::Diagnostic as _;
        let span = f.diagnostic.labels().and_then(|mut l| l.next());
        let (offset, len) = span.map_or((0, 0), |s| (s.offset(), s.len()));
        (self.position(offset), self.position(offset + len))
    }
}

/// Lends a finding the manifest text and its run's severity, so the renderer can draw
/// the snippet without copying either.
#[derive(Debug)]
struct WithSource<'a> {
    finding: &'a Finding,
    source: &'a NamedSource<std::sync::Arc<String>>,
}

impl std::fmt::Display for WithSource<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.finding.diagnostic.fmt(f)
    }
}

impl std::error::Error for WithSource<'_> {}

impl miette::Diagnostic for WithSource<'_> {
    fn code<'b>(&'b self) -> Option<Box<dyn std::fmt::Display + 'b>> {
        self.finding.diagnostic.code()
    }
    fn severity(&self) -> Option<miette::Severity> {
        Some(match self.finding.severity {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
        })
    }
    fn help<'b>(&'b self) -> Option<Box<dyn std::fmt::Display + 'b>> {
        self.finding.diagnostic.help()
    }
    fn labels(&self) -> Option<Box<dyn Iterator<Item = miette::LabeledSpan> + '_>> {
        self.finding.diagnostic.labels()
    }
    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        Some(self.source)
    }
}

/// Every finding as miette draws it: the snippet, a caret under the value, the help line.
pub fn human_findings(diagnostics: &Diagnostics, color: bool) -> String {
    let theme = if color {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    let handler = GraphicalReportHandler::new_themed(theme)
        .with_width(100)
        .with_links(false);
    let mut out = String::new();
    for finding in diagnostics.items() {
        let lent = WithSource {
            finding,
            source: diagnostics.source(),
        };
        // Writing into a String cannot fail; a renderer error would be a miette bug.
        if handler.render_report(&mut out, &lent).is_err() {
            let _ = writeln!(out, "error: {}", finding.diagnostic);
        }
        out.push('\n');
    }
    out
}

/// What each problem code means, for SARIF rule descriptions.
pub fn problem_summary(code: &str) -> &'static str {
    match code {
        "yaml-syntax" => "The file is not well-formed YAML.",
        "wrong-type" => "A value has the wrong YAML type.",
        "unknown-key" => "A mapping holds a key the manifest format does not know.",
        "duplicate-key" => "A mapping holds the same key twice.",
        "yaml-limit" => "A YAML resource limit (nesting depth, alias expansion) was exceeded.",
        "missing-key" => "A required key is absent.",
        "unsupported-version" => "`version` names a manifest format this build does not read.",
        "empty-text" => "A text the model or the person reads is empty.",
        "bad-url" => "A URL is not absolute https (http only for localhost).",
        "no-operations" => "The manifest lists no operations.",
        "invalid-operation-id" => "An operation id is not a valid operationId.",
        "duplicate-operation-id" => "Two operations share an id.",
        "unknown-method" => "`method` is not get, post, put, patch or delete.",
        "invalid-path" => "A path is malformed or conflicts with another.",
        "duplicate-route" => "Two operations share the same method and path.",
        "input-not-allowed" => "A request body is declared on a get or delete operation.",
        "invalid-schema" => "`input`, `output` or a query `schema` is not a JSON Schema.",
        "invalid-query-parameter" => "A query parameter name is empty, repeated or unusable.",
        "get-with-side-effect" => "A get operation spends or starts a job.",
        "unknown-spend-kind" => "`spends.kind` is not credits, money or irreversible.",
        "unknown-idempotency" => "`idempotency` is not optional, required or unsupported.",
        "non-positive-typical-seconds" => "`async.typicalSeconds` is not a positive number.",
        "unknown-poll-target" => "`async.pollWith` names no operation of this manifest.",
        "unsafe-poll-target" => "The poll target is not a free, side-effect-free read.",
        "invalid-token-prefix" => "`auth.tokenPrefix` is empty or contains whitespace.",
        "unknown-lint" => "An unknown lint id in `lint` or `lintAllow`.",
        "invalid-lint-setting" => "A lint level or option is invalid.",
        "bad-templates-dir" => "`templates` names a folder that cannot be used.",
        "unknown-target" => "`targets` names a platform connectorgen does not write for.",
        "mcp-input-collision" => {
            "Two inputs of one operation share a name, so no MCP inputSchema can hold both."
        }
        "openapi30-unsupported" => "A JSON Schema uses a construct OpenAPI 3.0 cannot express.",
        "openai-description-shortened" => {
            "A description was shortened to fit OpenAI's limits in openapi.openai.json."
        }
        _ => "A problem in the manifest.",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_count_characters() {
        let idx = LineIndex::new("ab\nçd\n");
        assert_eq!(idx.position(0), (1, 1));
        assert_eq!(idx.position(3), (2, 1));
        assert_eq!(idx.position(5), (2, 2));
        assert_eq!(idx.position(99), (3, 1));
    }

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
