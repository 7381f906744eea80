//! Connector → `openapi.openai.json`: OpenAPI 3.1 within OpenAI GPT Actions' limits
//! (operation description 300 characters, parameter description 700).
//!
//! Takes: the connector, the full model-facing descriptions and the compact form of the
//! generated sentences. Returns: the JSON text and an `openai-description-shortened`
//! warning for every text it had to shorten.
//! Must never: drop or cut the cost ("COSTS THE PERSON") or do-not-resubmit sentences.
//! Only the author's own prose is shortened; if even the generated sentences alone do
//! not fit, they are kept whole and the warning says so.

use crate::diagnostics::{Diagnostic, Finding, Severity};
use crate::lint::{Level, Lint};
use crate::model::{Connector, Operation};

use super::openapi;

/// OpenAI's documented limit on an operation's description.
pub const DESCRIPTION_MAX: usize = 300;
/// OpenAI's documented limit on a parameter's description.
pub const PARAMETER_MAX: usize = 700;

pub fn render(
    connector: &Connector,
    descriptions: &[String],
    compact: &[String],
) -> (String, Vec<Finding>) {
    let mut findings = Vec::new();
    let mut fitted = connector.clone();
    let mut texts = Vec::with_capacity(descriptions.len());
    for (i, (full, compact)) in descriptions.iter().zip(compact).enumerate() {
        let op = &connector.operations[i];
        let mut warn = |what, length, max, action| {
            warning(connector, op, what, length, max, action, &mut findings)
        };
        let length = full.chars().count();
        let text = if length <= DESCRIPTION_MAX {
            full.clone()
        } else if compact.is_empty() {
            warn("the description", length, DESCRIPTION_MAX, "shortens it");
            shorten(&op.description, DESCRIPTION_MAX)
        } else {
            // The generated sentences come first in the budget; the author's prose gets
            // what is left, if enough is left to say something.
            let room = DESCRIPTION_MAX.saturating_sub(compact.chars().count() + 2);
            if room >= 40 {
                let prose = shorten(&op.description, room);
                warn(
                    "the description the model reads",
                    length,
                    DESCRIPTION_MAX,
                    if prose == op.description {
                        "uses the short form of the cost and polling sentences"
                    } else {
                        "uses the short form of the cost and polling sentences and shortens the author's text"
                    },
                );
                format!("{prose}\n\n{compact}")
            } else {
                warn(
                    "the description the model reads",
                    length,
                    DESCRIPTION_MAX,
                    "keeps only the cost and polling sentences (in short form); they are never cut, even past the limit",
                );
                compact.clone()
            }
        };
        for q in &mut fitted.operations[i].query {
            if let Some(d) = &mut q.description {
                let length = d.chars().count();
                if length > PARAMETER_MAX {
                    *d = shorten(d, PARAMETER_MAX);
                    warn(
                        "a query parameter's description",
                        length,
                        PARAMETER_MAX,
                        "shortens it",
                    );
                }
            }
        }
        texts.push(text);
    }
    (openapi::render(&fitted, &texts), findings)
}

fn warning(
    connector: &Connector,
    op: &Operation,
    what: &'static str,
    length: usize,
    max: usize,
    action: &'static str,
    findings: &mut Vec<Finding>,
) {
    // Shortening is never silent: it warns even while the lint is at its default
    // `allow`; `lintAllow: [description-too-long]` on the operation silences it.
    if op.lint_allow.contains(&Lint::DescriptionTooLong) {
        return;
    }
    let severity = match connector.lint.level(Lint::DescriptionTooLong) {
        Level::Deny => Severity::Error,
        _ => Severity::Warning,
    };
    findings.push(Finding {
        diagnostic: Diagnostic::OpenaiDescriptionShortened {
            id: op.id.clone(),
            what,
            length,
            max,
            action,
            span: op.origin.description,
        },
        severity,
    });
}

/// At most `max` characters: whole sentences if they fit, else whole words, with "…".
pub fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let budget = max.saturating_sub(1);
    let cut: String = text.chars().take(budget).collect();
    if let Some(end) = cut.rfind(". ").filter(|&i| i >= budget / 2) {
        return cut[..=end].to_string();
    }
    let words = match cut.rfind(char::is_whitespace) {
        Some(i) if i > 0 => &cut[..i],
        _ => cut.as_str(),
    };
    format!("{}…", words.trim_end_matches([',', ';', ':', ' ']))
}

#[cfg(test)]
mod tests {
    use super::shorten;

    #[test]
    fn shortens_at_sentence_then_word() {
        assert_eq!(shorten("short", 10), "short");
        assert_eq!(
            shorten("First sentence here. Second one is long.", 30),
            "First sentence here."
        );
        assert_eq!(shorten("one two three four five", 12), "one two…");
        assert!(shorten(&"x".repeat(50), 10).chars().count() <= 10);
    }
}
