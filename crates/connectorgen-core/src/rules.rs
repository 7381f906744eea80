//! The rules as text: `connectorgen explain --rule CODE` and the generated
//! `docs/rules.md`.
//!
//! Takes: the declarations of `diagnostics::Rule` (code, doc comment, lint level,
//! severity) and `rules/examples.txt`, each rule's example finding. Returns: one
//! rule's explanation, the Markdown page of every rule, and the examples file's text
//! (written and read here, so its format is in one place).
//! Must never: hold text of its own about a rule: whatever it says about one comes
//! from that rule's declaration or from its case's snapshot, so the page cannot drift
//! from the code (`tests/rules_doc.rs` fails when the committed `docs/rules.md` or
//! `rules/examples.txt` is stale).
//!
//! The examples are a generated file in this crate, not read from `tests/` at run
//! time, because an installed binary has no `tests/` folder: `tests/rules_doc.rs`
//! takes the first finding of each rule from its case's snapshot (itself checked by
//! the cases tests) and writes the file with `UPDATE_DOCS=1`.

use std::collections::BTreeMap;

use strum::VariantArray as _;

use crate::diagnostics::{Rule, suggest};

/// How a rule is reported: a lint's default level (configurable), or the severity of a
/// rule that is not a lint.
fn kind(rule: Rule) -> String {
    match rule.lint_level() {
        Some(_) if rule.is_retired() => "lint (retired)".to_string(),
        Some(level) if rule.is_diff() => format!("diff, default `{}`", level.as_str()),
        Some(level) => format!("lint, default `{}`", level.as_str()),
        None => rule.severity().to_string(),
    }
}

/// Each rule's example, as `tests/rules_doc.rs` generated it from the case snapshots.
pub const EXAMPLES: &str = include_str!("rules/examples.txt");

/// Lines of a finding an example keeps: a finding with many labels (a schema error
/// deep in a base document) can run to a hundred, and the first lines show the rule.
pub const EXAMPLE_LINES: usize = 30;

/// What starts an example's record in the examples file: `== <code> <case path>`.
/// No line of a drawn finding starts with it (they all start with a space).
const RECORD: &str = "== ";

/// One rule's example: the case it comes from and the finding as `check` draws it
/// without colour (miette's snippet, carets and help line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Example<'a> {
    /// The case file (or, for a diff rule, the case folder), from the repository root.
    pub source: &'a str,
    /// The drawn finding without its code line, at most `EXAMPLE_LINES` lines and one
    /// that says how many were cut; no trailing newline.
    pub text: String,
}

/// The examples of an examples file, by rule code.
pub fn examples(file: &str) -> BTreeMap<&str, Example<'_>> {
    // (code, source, lines) per record; lines before the first record are the file's
    // header comment.
    let mut records: Vec<(&str, &str, Vec<&str>)> = Vec::new();
    for line in file.lines() {
        if let Some(header) = line.strip_prefix(RECORD) {
            let (code, source) = header.split_once(' ').unwrap_or((header, ""));
            records.push((code, source, Vec::new()));
        } else if let Some((_, _, lines)) = records.last_mut() {
            lines.push(line);
        }
    }
    records
        .into_iter()
        .map(|(code, source, lines)| {
            let text = lines.join("\n").trim_end().to_string();
            (code, Example { source, text })
        })
        .collect()
}

/// The examples file: a header saying where it comes from, then one record per rule
/// in code order. `findings` maps a code to its case and the finding as drawn (its
/// code line left out); a finding over `EXAMPLE_LINES` lines is cut, saying how many
/// lines were left out.
pub fn examples_file(findings: &BTreeMap<String, (String, String)>) -> String {
    let mut out = String::from(
        "# Generated from the case snapshots by `UPDATE_DOCS=1 cargo test --test integration\n\
         # rules_doc` (tests/rules_doc.rs): do not edit. Each record is one rule's example:\n\
         # `== <code> <case>`, then the first finding of that rule in the case's snapshot, as\n\
         # `check` draws it without colour, cut after 30 lines.\n",
    );
    for (code, (source, finding)) in findings {
        out.push('\n');
        out.push_str(&format!("{RECORD}{code} {source}\n"));
        let lines: Vec<&str> = finding.trim_end().lines().collect();
        for line in lines.iter().take(EXAMPLE_LINES) {
            out.push_str(line.trim_end());
            out.push('\n');
        }
        if lines.len() > EXAMPLE_LINES {
            out.push_str(&format!(
                "  … {} more lines (the whole finding is in the case's snapshot)\n",
                lines.len() - EXAMPLE_LINES
            ));
        }
    }
    out
}

/// One rule, for `explain --rule CODE`: its code and kind, its summary, its
/// explanation, and its example finding with the case it comes from.
pub fn explain(code: &str) -> Result<String, String> {
    let rule = Rule::from_code(code.trim()).ok_or_else(|| {
        format!(
            "no rule has the code `{code}`; {}",
            suggest(code.trim(), Rule::VARIANTS.iter().map(|r| r.code()))
        )
    })?;
    let mut out = format!("{} ({})\n\n{}\n", rule.code(), kind(rule), rule.summary());
    if !rule.explanation().is_empty() {
        out.push('\n');
        out.push_str(rule.explanation());
        out.push('\n');
    }
    if let Some(example) = examples(EXAMPLES).get(rule.code()) {
        // Printed as drawn: miette already indents it, as `check` would show it.
        out.push_str(&format!(
            "\nExample, from {}:\n\n{}\n",
            example.source, example.text
        ));
    }
    Ok(out)
}

/// `docs/rules.md`: every rule, lints first, each with its kind, summary,
/// explanation and example. Regenerate with
/// `UPDATE_DOCS=1 cargo test --test integration rules_doc`.
pub fn markdown() -> String {
    markdown_with(EXAMPLES)
}

/// `docs/rules.md` with the examples of `examples_file` (the test that regenerates
/// both passes the new file's text, which this build has not embedded yet).
pub fn markdown_with(examples_file: &str) -> String {
    let examples = examples(examples_file);
    let mut out = String::from(
        "# Rules\n\n\
         <!-- Generated from the declarations in crates/connectorgen-core/src/diagnostics.rs\n\
         and the examples in crates/connectorgen-core/src/rules/examples.txt (taken from the\n\
         case snapshots): do not edit. Regenerate with\n\
         `UPDATE_DOCS=1 cargo test --test integration rules_doc`. -->\n\n\
         Every finding connectorgen reports has one of these codes. Lints are findings on a\n\
         valid manifest: set their level in `lint:` and silence one on an operation with\n\
         `lintAllow` ([lints.md](lints.md)). The other rules are errors (the manifest is\n\
         refused and nothing is written) unless the table says warning.\n\
         `connectorgen explain --rule CODE` prints one rule's explanation and example; each\n\
         example is the first finding of the rule in its case under `tests/cases/invalid/`\n\
         or `tests/cases/lint/` (cut after 30 lines). Diff rules are what\n\
         `connectorgen diff` reports about a change between two versions of a manifest\n\
         ([diff.md](diff.md)); their levels are set in `lint:` like a lint's, and each has a\n\
         case folder under `tests/cases/diff/`.\n\n\
         | code | kind | summary |\n|---|---|---|\n",
    );
    let lints = Rule::lints().filter(|r| !r.is_diff());
    let others = Rule::VARIANTS.iter().copied().filter(|r| !r.is_lint());
    let order: Vec<Rule> = lints.chain(Rule::diff_rules()).chain(others).collect();
    for rule in &order {
        out.push_str(&format!(
            "| [`{0}`](#{0}) | {1} | {2} |\n",
            rule.code(),
            kind(*rule),
            rule.summary().replace('|', "\\|")
        ));
    }
    for rule in &order {
        out.push_str(&format!(
            "\n## {}\n\n{}: {}\n",
            rule.code(),
            kind(*rule),
            rule.summary()
        ));
        if !rule.explanation().is_empty() {
            out.push('\n');
            out.push_str(rule.explanation());
            out.push('\n');
        }
        if let Some(example) = examples.get(rule.code()) {
            out.push_str(&format!(
                "\nExample, from `{}`:\n\n```text\n{}\n```\n",
                example.source, example.text
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rule_is_explained_from_its_declaration() {
        let text = explain("missing-limit").unwrap();
        assert!(text.starts_with("missing-limit (lint, default `warn`)\n\n"));
        assert!(text.contains("does not say what the call will not do"));
        let err = explain("missing-limt").unwrap_err();
        assert!(err.contains("did you mean `missing-limit`?"), "{err}");
    }

    /// The words of a text, lower-cased, without punctuation or Markdown.
    fn words(text: &str) -> Vec<String> {
        text.split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect()
    }

    /// An explanation that only says its summary again: it opens with the summary's
    /// first four words, or most words of its first sentence are the summary's.
    fn restates(summary: &str, explanation: &str) -> bool {
        let summary = words(summary);
        let first = explanation
            .split_once(". ")
            .map_or(explanation, |(sentence, _)| sentence);
        let first = words(first);
        let shared = first.iter().filter(|w| summary.contains(w)).count();
        first.starts_with(&summary[..summary.len().min(4)]) || shared * 10 >= first.len() * 6
    }

    #[test]
    fn restating_the_summary_is_no_explanation() {
        let summary = "A text the model or the person reads is empty.";
        assert!(restates(
            summary,
            "A text that the model or the person reads is empty or only whitespace."
        ));
        assert!(restates(summary, "A text the model reads, empty."));
        assert!(!restates(
            summary,
            "An empty description gives the model nothing to choose the tool by, and an \
             empty cost note leaves the person agreeing to a price nobody stated."
        ));
    }

    /// Issue 32: every rule says why it exists (a retired one, why it was retired), in
    /// more than its summary's words, and every rule that still reports has an example
    /// (each has a case, `tests/cases.rs` and `tests/diff.rs` check).
    #[test]
    fn every_rule_has_a_why_and_an_example() {
        let examples = examples(EXAMPLES);
        let mut missing = Vec::new();
        for rule in Rule::VARIANTS {
            let explanation = rule.explanation();
            if explanation.is_empty() {
                missing.push(format!("{}: no explanation", rule.code()));
            } else if restates(&rule.summary(), explanation) {
                missing.push(format!(
                    "{}: the explanation restates the summary",
                    rule.code()
                ));
            }
            if !rule.is_retired() && !examples.contains_key(rule.code()) {
                missing.push(format!("{}: no example", rule.code()));
            }
        }
        assert!(
            missing.is_empty(),
            "{} rules lack a why or an example (write the why in the variant's doc in \
             diagnostics.rs; regenerate the examples with `UPDATE_DOCS=1 cargo test --test \
             integration rules_doc`):\n{}",
            missing.len(),
            missing.join("\n")
        );
    }

    #[test]
    fn the_examples_file_reads_back_what_it_wrote() {
        let long: Vec<String> = (0..EXAMPLE_LINES + 5)
            .map(|i| format!("  line {i}"))
            .collect();
        let findings = BTreeMap::from([
            (
                "bad-url".to_string(),
                (
                    "tests/cases/invalid/bad-url.yaml".to_string(),
                    "  × a\n\n  help: b".to_string(),
                ),
            ),
            (
                "yaml-limit".to_string(),
                (
                    "tests/cases/invalid/yaml-limit.yaml".to_string(),
                    long.join("\n"),
                ),
            ),
        ]);
        let file = examples_file(&findings);
        let read = examples(&file);
        assert_eq!(read["bad-url"].source, "tests/cases/invalid/bad-url.yaml");
        assert_eq!(read["bad-url"].text, "  × a\n\n  help: b");
        let cut = &read["yaml-limit"].text;
        assert_eq!(cut.lines().count(), EXAMPLE_LINES + 1);
        assert!(
            cut.ends_with("  … 5 more lines (the whole finding is in the case's snapshot)"),
            "{cut}"
        );
    }

    #[test]
    fn every_rule_has_a_one_line_summary() {
        for rule in Rule::VARIANTS {
            let summary = rule.summary();
            assert!(
                summary.ends_with('.') && !summary.is_empty(),
                "`{}`: the first paragraph of its doc is its summary: {summary:?}",
                rule.code()
            );
        }
    }
}
