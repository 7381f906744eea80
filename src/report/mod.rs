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
pub mod probe;

use std::fmt::Write as _;

use owo_colors::OwoColorize as _;
use serde::Serialize;
use serde_json::json;

use crate::check::Drift;
use crate::diagnostics::{Diagnostic, Diagnostics, Finding, Severity, Source};
use crate::model::{Level, Lint};
use crate::terminal;
use excerpt::LineIndex;
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
                gh_property(lines.name(f)),
                gh_property(&f.diagnostic.code_str()),
                gh_message(&message),
            );
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
                        "artifactLocation": { "uri": uri(lines.name(f)) },
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
    let mut text = terminal::json_ascii_controls(
        serde_json::to_string_pretty(doc).expect("serialising in-memory JSON cannot fail"),
    );
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

/// Workflow-command message text: `%`, CR and LF are escaped, as GitHub documents;
/// other control and bidi characters visibly, as for a terminal (the log is one).
fn gh_message(text: &str) -> String {
    terminal::escape(text)
        .replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Workflow-command property values additionally escape `:` and `,`.
fn gh_property(text: &str) -> String {
    gh_message(text).replace(':', "%3A").replace(',', "%2C")
}

/// The line indexes of the files findings point into: the manifest, and the base
/// document in base mode. A file no finding points into is not indexed.
pub(crate) struct Files<'a> {
    manifest: (&'a str, LineIndex<'a>),
    base: Option<(&'a str, LineIndex<'a>)>,
}

impl<'a> Files<'a> {
    pub(crate) fn new(diagnostics: &'a Diagnostics) -> Self {
        let needs = |source| diagnostics.items().iter().any(|f| f.source == source);
        let index = |text: &'a str, source| LineIndex::new(if needs(source) { text } else { "" });
        Files {
            manifest: (
                diagnostics.name(),
                index(diagnostics.text(), Source::Manifest),
            ),
            base: diagnostics
                .base_file()
                .map(|(name, text)| (name, index(text, Source::Base))),
        }
    }

    /// The index and name of the file a finding points into.
    pub(crate) fn file(&self, f: &Finding) -> (&LineIndex<'a>, &'a str) {
        match (&self.base, f.source) {
            (Some((name, index)), Source::Base) => (index, name),
            _ => (&self.manifest.1, self.manifest.0),
        }
    }

    fn name(&self, f: &Finding) -> &'a str {
        self.file(f).1
    }

    fn range(&self, f: &Finding) -> ((usize, usize), (usize, usize)) {
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
        "ambiguous-base-operation" => {
            "`operation:` is one base operation's operationId and another's route."
        }
        "invalid-base-parameter" => {
            "A parameter of an exposed base operation has no usable name or location, or is repeated."
        }
        "input-not-allowed" => "A request body is declared on a get or delete operation.",
        "invalid-schema" => "`input`, `output` or a query `schema` is not a JSON Schema.",
        "invalid-query-parameter" => "A query parameter name is empty, repeated or unusable.",
        "get-with-side-effect" => "A get operation spends, is async or asks for confirmation.",
        "unknown-spend-kind" => "`spends.kind` is not credits or money.",
        "spend-kind-irreversible" => "`spends.kind: irreversible`, which `confirm: true` replaced.",
        "confirm-contradicts-spends" => "`confirm: false` on an operation that spends.",
        "unknown-async-returns" => "`async.returns` is not job or change.",
        "unknown-idempotency" => "`idempotency` is no short form and no mapping naming one key.",
        "non-positive-typical-seconds" => "`async.typicalSeconds` is not a positive number.",
        "unknown-poll-target" => "`async.pollWith` names no operation of this manifest.",
        "unsafe-poll-target" => "The poll target is not a free, side-effect-free read.",
        "invalid-token-prefix" => "`auth.tokenPrefix` is empty or contains whitespace.",
        "unknown-lint" => "An unknown lint id in `lint` or `lintAllow`.",
        "invalid-lint-setting" => "A lint level or option is invalid.",
        "bad-templates-dir" => "`templates` names a folder that cannot be used.",
        "unknown-target" => "`targets` names a platform connectorgen does not write for.",
        "mcp-input-collision" => {
            "`args:` gives two inputs of one operation the same MCP argument name."
        }
        "invalid-argument-name" => {
            "An `args:` name outside ^[a-zA-Z0-9_.-]{1,64}$, which some MCP clients refuse."
        }
        "invalid-fixed" => "A `fixed:` entry without exactly one of `env` and `value`.",
        "unknown-mcp-input" => "An `args:` or `fixed:` key names no input of the operation.",
        "mcp-tool-name" => "A tool name over 64 characters or outside [A-Za-z0-9_-].",
        "mcp-pattern-dropped" => {
            "A `pattern` that is not an ECMAScript Unicode regular expression, left out of an MCP tool."
        }
        "mcp-output-too-large" => "mcp-tools.json would pass its bound (a multiple of the input).",
        "openapi30-unsupported" => "A JSON Schema uses a construct OpenAPI 3.0 cannot express.",
        "openai-description-shortened" => {
            "A description was shortened to fit OpenAI's limits in openapi.openai.json."
        }
        "openai-notice-too-long" => {
            "The generated sentences alone leave too little of OpenAI's 300 characters."
        }
        "invalid-parameter" => "A path or header parameter is unusable.",
        "invalid-style" => "A parameter's style or explode that OpenAPI does not allow there.",
        "invalid-media-type" => "A media type that is not `type/subtype`.",
        "invalid-status" => "A success status outside 2xx, or an error status outside 4xx/5xx.",
        "invalid-openapi-fragment" => {
            "An operation's `openapi:` fragment holds a field it may not."
        }
        "unresolved-ref" => "A `$ref` in a schema does not resolve in the generated documents.",
        "schema-not-valid" => "A JSON Schema the author wrote is not valid JSON Schema 2020-12.",
        "unknown-schema-keyword" => {
            "A schema keyword no JSON Schema or OpenAPI vocabulary defines."
        }
        "invalid-auth" => "`auth:` describes a credential no client can send.",
        "invalid-auth-env" => "`auth.env` is not a name an environment variable can have.",
        "base-unreadable" => "`openapi:` names a file that cannot be read.",
        "base-syntax" => "The base OpenAPI document is not well-formed JSON or YAML.",
        "base-not-openapi" => "The base document is not OpenAPI 3.0, 3.1 or 3.2.",
        "base-invalid" => {
            "The exposed part of the base document breaks the official OpenAPI schema of its version."
        }
        "openapi32-unsupported" => {
            "An OpenAPI 3.2 construct the 3.1 outputs cannot hold: converted (warning) or refused."
        }
        "base-ref-unresolved" => {
            "A `$ref` the exposed operations reach does not resolve to a component."
        }
        "base-ref-external" => {
            "A `$ref` the exposed operations reach points outside the base document."
        }
        "unknown-base-operation" => "`operation:` names nothing in the base document.",
        "invalid-base-path" => "A base operation's path cannot be a URL path.",
        "operation-listed-twice" => "The same base operation is listed twice.",
        "inline-key-with-base" => {
            "An inline-only key on an operation of a manifest with a base document."
        }
        "operation-without-base" => "`operation:` in a manifest without a base document.",
        "unsupported-method" => "The base operation's method is not one agents are given.",
        "id-not-for-target" => "An operation id that a chosen target cannot take.",
        "idempotency-contradicts-base" => {
            "`idempotency: unsupported` on an operation whose base declares the header."
        }
        "idempotency-second-key" => {
            "A short form of `idempotency` on a base operation that declares another retry key."
        }
        "idempotency-key-not-found" => {
            "`idempotency:` names a key the operation does not have or cannot be given."
        }
        "invalid-probe" => "An operation's `probe:` is not an example call.",
        _ => "A problem in the manifest.",
    }
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
