//! The rules as text: `connectorgen explain --rule CODE` and the generated
//! `docs/rules.md`.
//!
//! Takes: the declarations of `diagnostics::Rule` (code, doc comment, lint level,
//! severity). Returns: one rule's explanation, and the Markdown page of every rule.
//! Must never: hold text of its own about a rule: whatever it says about one comes
//! from that rule's declaration, so the page cannot drift from the code
//! (`tests/cases.rs` fails when the committed `docs/rules.md` is stale).

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

/// One rule, for `explain --rule CODE`: its code and kind, its summary, its
/// explanation, and where its example case lives.
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
    Ok(out)
}

/// `docs/rules.md`: every rule, lints first, each with its kind, summary and
/// explanation. Regenerate with `UPDATE_DOCS=1 cargo test --test integration rules_doc`.
pub fn markdown() -> String {
    let mut out = String::from(
        "# Rules\n\n\
         <!-- Generated from the declarations in src/diagnostics.rs: do not edit. Regenerate\n\
         with `UPDATE_DOCS=1 cargo test --test integration rules_doc`. -->\n\n\
         Every finding connectorgen reports has one of these codes. Lints are findings on a\n\
         valid manifest: set their level in `lint:` and silence one on an operation with\n\
         `lintAllow` ([lints.md](lints.md)). The other rules are errors (the manifest is\n\
         refused and nothing is written) unless the table says warning.\n\
         `connectorgen explain --rule CODE` prints one rule's explanation; each rule has an\n\
         example under `tests/cases/invalid/` or `tests/cases/lint/`. Diff rules are what\n\
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
