//! Findings drawn for people: miette's snippets, carets and help lines.
//!
//! Takes: a run's `Diagnostics` (or a template error) and whether to colour. Returns:
//! the text a terminal shows — at most `DETAILED_PER_CODE` findings of each code in
//! detail, in file order, then one "and N more" line per code that had more.
//! Must never: let text from the manifest act on the terminal (every message, label,
//! help line and snippet is escaped), print a line of unbounded length, or take more
//! than linear time in the number of findings (each finding gets its own small
//! `Excerpt` from one `LineIndex`).

use std::fmt::Write as _;

use miette::{GraphicalReportHandler, GraphicalTheme, LabeledSpan};

use super::excerpt::{CONTEXT_LINES, Excerpt, LineIndex, Window};
use crate::diagnostics::{Diagnostics, Severity};
use crate::terminal;

/// Findings of one code drawn in full; the rest are counted. Thousands of snippets of
/// one lint help nobody read them, and the machine formats list every one.
pub const DETAILED_PER_CODE: usize = 10;

/// Characters of a message, label or help line shown at most. No message of ours comes
/// near it; a key or value from the manifest inside one can.
const MESSAGE_CHARS: usize = 1_000;

/// A finding as miette is given it: the text escaped and clipped, the labels moved into
/// the finding's own excerpt.
#[derive(Debug)]
struct Shown {
    message: String,
    code: Option<String>,
    help: Option<String>,
    severity: miette::Severity,
    labels: Vec<LabeledSpan>,
    excerpt: Option<Excerpt>,
}

impl std::fmt::Display for Shown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Shown {}

impl miette::Diagnostic for Shown {
    fn code<'b>(&'b self) -> Option<Box<dyn std::fmt::Display + 'b>> {
        self.code
            .as_ref()
            .map(|c| Box::new(c) as Box<dyn std::fmt::Display>)
    }
    fn severity(&self) -> Option<miette::Severity> {
        Some(self.severity)
    }
    fn help<'b>(&'b self) -> Option<Box<dyn std::fmt::Display + 'b>> {
        self.help
            .as_ref()
            .map(|h| Box::new(h) as Box<dyn std::fmt::Display>)
    }
    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        if self.labels.is_empty() {
            return None;
        }
        Some(Box::new(self.labels.iter().cloned()))
    }
    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        self.excerpt.as_ref().map(|e| e as &dyn miette::SourceCode)
    }
}

fn shown_text(text: &str) -> String {
    terminal::escape(&terminal::clip(text, MESSAGE_CHARS)).into_owned()
}

impl Shown {
    /// `diagnostic`, whose labels point into the text `index` was built from.
    fn new(
        diagnostic: &dyn miette::Diagnostic,
        severity: miette::Severity,
        source: Option<(&LineIndex, &str)>,
        window: Window,
    ) -> Shown {
        let labels: Vec<LabeledSpan> = diagnostic.labels().into_iter().flatten().collect();
        let (excerpt, labels) = match source {
            Some((index, name)) if !labels.is_empty() => {
                let spans: Vec<(usize, usize)> =
                    labels.iter().map(|l| (l.offset(), l.len())).collect();
                let (excerpt, moved) = Excerpt::within(index, name, &spans, window);
                let labels = labels
                    .iter()
                    .zip(moved)
                    .map(|(l, span)| {
                        let text = l.label().map(shown_text);
                        if l.primary() {
                            LabeledSpan::new_primary_with_span(text, span)
                        } else {
                            LabeledSpan::new_with_span(text, span)
                        }
                    })
                    .collect();
                (Some(excerpt), labels)
            }
            // Without the text there is nothing to point into.
            _ => (None, Vec::new()),
        };
        Shown {
            message: shown_text(&diagnostic.to_string()),
            code: diagnostic.code().map(|c| shown_text(&c.to_string())),
            help: diagnostic.help().map(|h| shown_text(&h.to_string())),
            severity,
            labels,
            excerpt,
        }
    }
}

fn handler(color: bool) -> GraphicalReportHandler {
    let theme = if color {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    GraphicalReportHandler::new_themed(theme)
        .with_width(100)
        .with_links(false)
        .with_context_lines(CONTEXT_LINES)
}

fn draw(handler: &GraphicalReportHandler, out: &mut String, shown: &Shown) {
    // Writing into a String cannot fail; a renderer error would be a miette bug.
    if handler.render_report(out, shown).is_err() {
        let _ = writeln!(out, "error: {}", shown.message);
    }
}

/// Every finding as miette draws it (the first `DETAILED_PER_CODE` of each code), then
/// how many of each code were left out.
pub fn findings(diagnostics: &Diagnostics, color: bool) -> String {
    if diagnostics.is_empty() {
        return String::new();
    }
    let files = super::Files::new(diagnostics);
    let handler = handler(color);
    let mut out = String::new();
    // (code, findings seen) in order of first appearance: a handful of codes at most.
    let mut seen: Vec<(String, usize)> = Vec::new();
    for finding in diagnostics.items() {
        let code = finding.diagnostic.code_str();
        let count = if let Some((_, count)) = seen.iter_mut().find(|(c, _)| *c == code) {
            count
        } else {
            seen.push((code, 0));
            &mut seen.last_mut().expect("just pushed").1
        };
        *count += 1;
        if *count > DETAILED_PER_CODE {
            continue;
        }
        let severity = match finding.severity {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
        };
        let window = if finding.diagnostic.in_unproven_file() {
            Window::TIGHT
        } else {
            Window::FULL
        };
        let mut shown = Shown::new(
            &finding.diagnostic,
            severity,
            Some(files.file(finding)),
            window,
        );
        // A rule's code is its variant's name (`Rule`), not a miette `code(…)`.
        shown.code = Some(finding.diagnostic.code_str());
        draw(&handler, &mut out, &shown);
        out.push('\n');
    }
    let mut left_out = false;
    for (code, count) in seen {
        if count > DETAILED_PER_CODE {
            left_out = true;
            let _ = writeln!(
                out,
                "and {} more `{}` findings (`connectorgen check --format json` lists every one)",
                count - DETAILED_PER_CODE,
                terminal::escape(&code)
            );
        }
    }
    if left_out {
        out.push('\n');
    }
    out
}

/// A template that failed to compile or render, drawn at its own line.
pub fn template_error(e: &crate::render::RenderError, color: bool) -> String {
    let mut out = String::new();
    let source = e.source_text.as_ref().map(|s| (s.name(), s.inner()));
    let shown = match source {
        Some((name, text)) => {
            let index = LineIndex::new(text);
            Shown::new(
                e,
                miette::Severity::Error,
                Some((&index, name)),
                Window::FULL,
            )
        }
        None => Shown::new(e, miette::Severity::Error, None, Window::FULL),
    };
    draw(&handler(color), &mut out, &shown);
    out
}

/// Characters of a diff line shown at most in the human report.
const DIFF_LINE_CHARS: usize = 1_000;

/// One line of a unified diff for the terminal: escaped, and clipped when very long
/// (the JSON report carries the whole diff).
pub(super) fn diff_line(line: &str) -> String {
    match terminal::clip(line, DIFF_LINE_CHARS) {
        std::borrow::Cow::Borrowed(whole) => terminal::escape(whole).into_owned(),
        std::borrow::Cow::Owned(clipped) => {
            let rest = line.chars().count() - DIFF_LINE_CHARS;
            format!("{} ({rest} more characters)", terminal::escape(&clipped))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Text with what breaks naive snippet code: multi-byte and wide characters, tabs,
    /// CRLF and lone CR, control and bidi characters, long lines.
    fn hostile_text() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            Just("a".to_string()),
            Just("é".to_string()),
            Just("日".to_string()),
            Just("\t".to_string()),
            Just("\n".to_string()),
            Just("\r\n".to_string()),
            Just("\r".to_string()),
            Just("\u{1b}[2J".to_string()),
            Just("\u{202e}".to_string()),
            Just("\u{85}".to_string()),
            (1usize..400).prop_map(|n| "x".repeat(n)),
        ];
        prop::collection::vec(piece, 0..60).prop_map(|p| p.concat())
    }

    #[test]
    fn a_template_error_far_along_a_line_is_clipped() {
        let text = format!("{}{{{{ broken }}\u{1b}[2J", "x".repeat(70_000));
        let e = crate::render::RenderError {
            template: "llms.txt.j2".into(),
            message: "syntax error".into(),
            source_text: Some(std::sync::Arc::new(miette::NamedSource::new(
                "llms.txt.j2",
                text,
            ))),
            span: Some((70_000, 10).into()),
        };
        let out = template_error(&e, false);
        assert!(out.contains("[llms.txt.j2:1:70001]"), "{out}");
        assert!(out.len() < 2_000, "{out}");
        assert!(!out.chars().any(terminal::is_unsafe), "{out}");
    }

    proptest! {
        #[test]
        fn any_spans_in_any_text_draw_safely(
            text in hostile_text(),
            spans in prop::collection::vec((0usize..6000, 0usize..3000), 1..4),
            tight in any::<bool>(),
        ) {
            let labels: Vec<LabeledSpan> = spans
                .iter()
                .map(|&(o, l)| LabeledSpan::new(Some("here".into()), o, l))
                .collect();
            let diagnostic = miette::MietteDiagnostic::new("a finding").with_labels(labels);
            let index = LineIndex::new(&text);
            let shown = Shown::new(
                &diagnostic,
                miette::Severity::Warning,
                Some((&index, "f.yaml")),
                if tight { Window::TIGHT } else { Window::FULL },
            );
            let mut out = String::new();
            draw(&handler(false), &mut out, &shown);
            prop_assert!(!out.contains("Failed to read contents"), "{}", out);
            prop_assert!(!out.chars().any(terminal::is_unsafe), "{}", out);
            for line in out.lines() {
                prop_assert!(line.chars().count() < 600, "{}", line);
            }
            if tight {
                // The file's own lines (`N │ text`): one per label at most, each within
                // the tight window (escapes may double it).
                let quoted: Vec<&str> = out
                    .lines()
                    .filter(|l| l.trim_start().split(' ').next().is_some_and(|n| n.parse::<usize>().is_ok()))
                    .collect();
                prop_assert!(quoted.len() <= spans.len(), "{}", out);
                for line in quoted {
                    let shown = line.split_once('│').map_or(line, |(_, t)| t);
                    prop_assert!(
                        shown.chars().count() <= 2 * super::super::excerpt::TIGHT_CHARS + 4,
                        "{}", line
                    );
                }
            }
        }
    }
}
