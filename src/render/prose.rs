//! Connector → the prose a model and a person read: each operation's model-facing
//! description, `llms.txt` and `descriptions.md`, through the minijinja templates in
//! `templates/` (embedded in the binary).
//!
//! Takes: the validated connector. Returns: strings.
//! Must never: evaluate text from the manifest as template code (values in a context
//! are data, never re-parsed), or let it forge Markdown structure — every piece of
//! user text goes through `md_inline` (one line, line-leading syntax escaped) or
//! `fence` (verbatim inside a code fence it cannot close).

use minijinja::value::Serde;
use minijinja::{AutoEscape, Environment, UndefinedBehavior, context, syntax::SyntaxConfig};
use serde::Serialize;

use super::RenderError;
use crate::model::{Connector, Operation};
use crate::templates::Sources;

/// The template environment, built once per run.
pub struct Prose {
    env: Environment<'static>,
    /// Kept so an error can show the template's own line.
    sources: Sources,
}

/// What a file template sees of one operation: the operation itself plus what the
/// model-facing text and flags derived from it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct OperationView<'a> {
    #[serde(flatten)]
    op: &'a Operation,
    model_description: &'a str,
    idempotency_key: bool,
}

impl Prose {
    /// The environment with `sources` (template name → text; see `templates.rs`).
    pub fn new(sources: &Sources) -> Result<Self, RenderError> {
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        env.set_auto_escape_callback(|_| AutoEscape::None);
        let syntax = SyntaxConfig::builder()
            .trim_blocks(true)
            .lstrip_blocks(true)
            .keep_trailing_newline(true)
            .build()
            .map_err(|e| RenderError::new("(syntax)", None, e))?;
        env.set_syntax(syntax);
        env.add_filter("oneline", oneline);
        env.add_filter("md_inline", md_inline);
        env.add_filter("md_code", md_code);
        env.add_filter("fence", fence);
        env.add_filter("sentence", sentence);
        for (name, source) in sources {
            env.add_template_owned(name.clone(), source.clone())
                .map_err(|e| RenderError::new(name, Some(source), e))?;
        }
        Ok(Prose {
            env,
            sources: sources.clone(),
        })
    }

    fn render(&self, name: &str, ctx: minijinja::Value) -> Result<String, RenderError> {
        self.env
            .get_template(name)
            .and_then(|t| t.render(ctx))
            .map_err(|e| RenderError::new(name, self.sources.get(name), e))
    }

    /// The text the model reads as the operation's description.
    pub fn description(&self, op: &Operation) -> Result<String, RenderError> {
        let text = self.render("description.j2", context! { operation => Serde(op) })?;
        Ok(text.trim_end().to_string())
    }

    /// The generated cost and polling sentences alone, in their shortest form (for
    /// targets with tight length limits); empty when the operation has neither.
    pub fn compact_notice(&self, op: &Operation) -> Result<String, RenderError> {
        let text = self.render(
            "description.compact.j2",
            context! { operation => Serde(op) },
        )?;
        Ok(text.trim().to_string())
    }

    fn file_context(
        connector: &Connector,
        descriptions: &[String],
        manifest_name: &str,
    ) -> minijinja::Value {
        let operations: Vec<OperationView> = connector
            .operations
            .iter()
            .zip(descriptions)
            .map(|(op, d)| OperationView {
                op,
                model_description: d,
                idempotency_key: op.takes_idempotency_key(),
            })
            .collect();
        context! {
            service => Serde(&connector.service),
            tokenPrefix => Serde(&connector.token_prefix),
            operations => Serde(operations),
            manifest => manifest_name,
        }
    }

    pub fn llms_txt(
        &self,
        connector: &Connector,
        descriptions: &[String],
        manifest_name: &str,
    ) -> Result<String, RenderError> {
        let ctx = Self::file_context(connector, descriptions, manifest_name);
        self.render("llms.txt.j2", ctx).map(tidy)
    }

    pub fn descriptions_md(
        &self,
        connector: &Connector,
        descriptions: &[String],
        manifest_name: &str,
    ) -> Result<String, RenderError> {
        let ctx = Self::file_context(connector, descriptions, manifest_name);
        // Not `tidy`: the fenced descriptions must stay byte-exact, blank lines included.
        let text = self.render("descriptions.md.j2", ctx)?;
        Ok(format!("{}\n", text.trim_end()))
    }
}

/// The model-facing description of one operation, for callers outside rendering
/// (tests, future `explain`).
pub fn model_description(op: &Operation) -> Result<String, RenderError> {
    Prose::new(&crate::templates::defaults())?.description(op)
}

/// Exactly one trailing newline, no runs of blank lines: templates stay readable
/// without whitespace-control noise, and files stay byte-stable.
fn tidy(text: String) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank_run = 0;
    for line in text.trim_end().lines() {
        let line = line.trim_end();
        if line.is_empty() {
            blank_run += 1;
            if blank_run > 1 {
                continue;
            }
        } else {
            blank_run = 0;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// Folds every run of whitespace (newlines included) into one space.
pub fn oneline(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// One line of Markdown text that cannot start a block: folded to one line, and a
/// leading character that would open a heading, quote, list, fence, table, HTML block
/// or thematic break is backslash-escaped (valid CommonMark; it renders as itself).
pub fn md_inline(text: &str) -> String {
    let line = oneline(text);
    let mut chars = line.char_indices();
    let Some((_, first)) = chars.next() else {
        return line;
    };
    if "#>+-*=|~`_<[!".contains(first) {
        return format!("\\{line}");
    }
    if first.is_ascii_digit() {
        // An ordered-list marker is digits then `.` or `)`: escape that punctuation.
        let digits = line
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(line.len());
        if let Some(p @ ('.' | ')')) = line[digits..].chars().next() {
            return format!("{}\\{p}{}", &line[..digits], &line[digits + 1..]);
        }
    }
    line
}

/// The text with a full stop added unless it already ends a sentence.
pub fn sentence(text: &str) -> String {
    let text = text.trim_end();
    if text.is_empty() || text.ends_with(['.', '!', '?', ':', ';']) {
        text.to_string()
    } else {
        format!("{text}.")
    }
}

/// Text for inside a one-line code span: folded, with backticks removed (they would end it).
pub fn md_code(text: &str) -> String {
    oneline(text).replace('`', "'")
}

/// Verbatim text inside a backtick fence longer than any backtick run in it, so nothing
/// in the text can close the fence early.
pub fn fence(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let ticks = "`".repeat((longest + 1).max(3));
    format!("{ticks}text\n{text}\n{ticks}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn md_inline_neutralises_block_starts() {
        assert_eq!(md_inline("# Heading"), "\\# Heading");
        assert_eq!(md_inline("a\n## b"), "a ## b");
        assert_eq!(md_inline("- item"), "\\- item");
        assert_eq!(md_inline("```rust"), "\\```rust");
        assert_eq!(md_inline("12. twelve"), "12\\. twelve");
        assert_eq!(md_inline("3) three"), "3\\) three");
        assert_eq!(md_inline("2026 was good"), "2026 was good");
        assert_eq!(md_inline("  <!-- x"), "\\<!-- x");
        assert_eq!(md_inline("plain"), "plain");
        assert_eq!(md_inline(""), "");
    }

    #[test]
    fn fence_outlasts_backticks_inside() {
        assert_eq!(fence("a"), "```text\na\n```");
        assert_eq!(fence("x ```` y"), "`````text\nx ```` y\n`````");
    }

    #[test]
    fn tidy_collapses_blank_runs() {
        assert_eq!(tidy("a\n\n\n\nb  \n\n".to_string()), "a\n\nb\n");
    }
}
