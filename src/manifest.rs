//! The manifest file as written: raw serde types for `connector.yaml`.
//!
//! Takes: the manifest text. Returns: a `RawManifest` whose every field that validation
//! points at carries its YAML location (`Spanned`), or one `Diagnostic` when the text is
//! not YAML of the right shape (syntax, wrong type, unknown or duplicate key).
//! Must never: apply defaults or judge values — that is `validate.rs`'s job, so that
//! every semantic problem is collected and reported together. Required keys are
//! `Option` here for the same reason: a missing one is reported with the others.
//! JSON Schemas (`input`, `output`, query `schema`) are kept as `serde_json::Value` in
//! the order written; YAML 1.1 surprises (`no`, `on`, `010`, `1_000`) stay strings.

use indexmap::IndexMap;
use serde::Deserialize;
use serde_saphyr::{Error as YamlError, budget::BudgetBreach};
use serde_saphyr::{Location, Spanned};

use crate::diagnostics::{Diagnostic, Span, suggest};

/// The whole manifest (`version`, `service`, `auth`, `operations`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawManifest {
    pub version: Option<Spanned<i64>>,
    pub service: Option<Spanned<RawService>>,
    pub auth: Option<Spanned<RawAuth>>,
    pub operations: Option<Spanned<Vec<Spanned<RawOperation>>>>,
    /// Lint id → level (or `{ level, max }`), as written.
    pub lint: Option<Spanned<RawLints>>,
    /// Which agent platforms to write for (default `[muse]`).
    pub targets: Option<Spanned<Vec<Spanned<String>>>>,
}

/// `lint:` — lint id → setting, in the order written.
pub type RawLints = IndexMap<Spanned<String>, Spanned<RawLintSetting>>;

/// One entry of `lint:`: a bare level, or a mapping for lints that take options.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum RawLintSetting {
    Level(String),
    Detailed(RawLintDetail),
}

/// `{ level: warn, max: 300 }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawLintDetail {
    pub level: Option<String>,
    pub max: Option<i64>,
}

/// `service:` — who the connector is and where it lives.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawService {
    pub name: Option<Spanned<String>>,
    pub title: Option<Spanned<String>>,
    pub version: Option<Spanned<String>>,
    pub description: Option<Spanned<String>>,
    pub public_url: Option<Spanned<String>>,
    pub dashboard_url: Option<Spanned<String>>,
}

/// `auth:` — how connector tokens look.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawAuth {
    pub token_prefix: Option<Spanned<String>>,
}

/// One entry of `operations:`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawOperation {
    pub id: Option<Spanned<String>>,
    pub method: Option<Spanned<String>>,
    pub path: Option<Spanned<String>>,
    pub summary: Option<Spanned<String>>,
    pub description: Option<Spanned<String>>,
    pub input: Option<Spanned<serde_json::Value>>,
    pub query: Option<Vec<Spanned<RawQueryParam>>>,
    pub output: Option<Spanned<serde_json::Value>>,
    pub spends: Option<Spanned<RawSpends>>,
    #[serde(rename = "async")]
    pub async_: Option<Spanned<RawAsync>>,
    pub idempotency: Option<Spanned<String>>,
    /// Lint ids not to report for this operation.
    pub lint_allow: Option<Vec<Spanned<String>>>,
}

/// One entry of an operation's `query:` list.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawQueryParam {
    pub name: Option<Spanned<String>>,
    pub description: Option<Spanned<String>>,
    pub required: Option<bool>,
    pub schema: Option<Spanned<serde_json::Value>>,
}

/// `spends:` — the operation costs the person something.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawSpends {
    pub kind: Option<Spanned<String>>,
    pub note: Option<Spanned<String>>,
}

/// `async:` — the operation returns a job to poll.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawAsync {
    pub poll_with: Option<Spanned<String>>,
    pub typical_seconds: Option<Spanned<i64>>,
}

/// Deeper than any manifest needs (JSON Schemas included), far below what hurts.
const MAX_DEPTH: usize = 64;
/// Anchors and aliases are allowed (they are handy for shared schemas) but bounded.
const MAX_ALIASES: usize = 1_000;

/// Parser settings. Budgets scale with the input so that any manifest under the size
/// limit parses; alias expansion gets room for shared schemas reused across many
/// operations but stays bounded, and nesting stays shallow: a YAML bomb needs one of
/// the two, a connector needs neither in excess.
fn options(len: usize) -> serde_saphyr::Options {
    // Events an alias may replay in all: generous for `*sharedSchema` reuse, and still
    // far below what an exponential alias bomb asks for.
    let replay = (len / 4).clamp(100_000, 10_000_000);
    let nodes = len.saturating_add(replay).saturating_add(1024);
    serde_saphyr::options! {
        budget: serde_saphyr::budget! {
            max_events: nodes.saturating_mul(2),
            max_nodes: nodes,
            max_total_scalar_bytes: len.saturating_mul(4).saturating_add(64 << 20),
            max_depth: MAX_DEPTH,
            // The scanner's own cap on `[[[…` / `{{{…`, aligned with `max_depth` so a
            // deep flow collection reports the same limit as a deep block one.
            flow_nesting_limit: MAX_DEPTH,
            max_aliases: MAX_ALIASES,
            max_anchors: MAX_ALIASES,
            max_documents: 1,
        },
        alias_limits: serde_saphyr::alias_limits! {
            max_total_replayed_events: replay,
            max_replay_stack_depth: 16,
        },
        strict_booleans: true,
        legacy_octal_numbers: false,
        leading_zero_numbers_as_strings: true,
        underscored_numbers_as_strings: true,
        with_snippet: false,
    }
}

/// Parses manifest text into raw types, or the one structural problem that stopped the parser.
pub fn parse(text: &str) -> Result<Spanned<RawManifest>, Box<Diagnostic>> {
    serde_saphyr::from_str_with_options(text, options(text.len()))
        .map_err(|e| Box::new(to_diagnostic(&e, text)))
}

/// The byte range a location covers, for labels.
pub fn span_of(loc: &Location) -> Span {
    let span = loc.span();
    let offset = span.byte_offset().unwrap_or(0) as usize;
    let len = span.byte_len().unwrap_or(0) as usize;
    Span::from((offset, len))
}

/// The span of a spanned value (where it is referenced, i.e. where an alias was used).
pub fn span<T>(s: &Spanned<T>) -> Span {
    span_of(&s.referenced)
}

fn to_diagnostic(err: &YamlError, text: &str) -> Diagnostic {
    let span = err
        .location()
        .map(|l| span_of(&l))
        .unwrap_or_else(|| Span::from((text.len(), 0)));
    match err {
        // An error met while replaying an alias: judge it by what went wrong, and point
        // where the alias was used.
        YamlError::AliasError { error, .. } => match to_diagnostic(error, text) {
            Diagnostic::YamlLimit { message, .. } => Diagnostic::YamlLimit { message, span },
            other => other,
        },
        YamlError::SerdeUnknownField {
            field, expected, ..
        } => Diagnostic::UnknownKey {
            key: field.clone(),
            span,
            help: suggest(field, expected.iter().copied()),
        },
        YamlError::DuplicateMappingKey { key, .. } => Diagnostic::DuplicateKey {
            key: key.clone().unwrap_or_else(|| "(complex key)".to_string()),
            span,
        },
        YamlError::SerdeInvalidType {
            unexpected,
            expected,
            ..
        }
        | YamlError::SerdeInvalidValue {
            unexpected,
            expected,
            ..
        } => Diagnostic::WrongType {
            message: format!("found {unexpected}, expected {expected}"),
            span,
            help: Some(type_help(expected)),
        },
        YamlError::Unexpected { expected, .. } => Diagnostic::WrongType {
            message: format!("expected {expected} here"),
            span,
            help: Some(type_help(expected)),
        },
        YamlError::NonFiniteFloat { .. } => Diagnostic::WrongType {
            message: "infinity and NaN cannot be written in JSON".to_string(),
            span,
            help: Some("use a finite number, or quote the value to keep it as text".to_string()),
        },
        YamlError::Budget { breach, .. } => Diagnostic::YamlLimit {
            message: budget_message(breach),
            span,
        },
        YamlError::AliasReplayLimitExceeded {
            max_total_replayed_events,
            ..
        } => Diagnostic::YamlLimit {
            message: format!(
                "aliases expand to more than {max_total_replayed_events} parser events, the alias-expansion budget \
                 (a quarter of the file size, at least 100,000); {RAISE_ALIASES}"
            ),
            span,
        },
        YamlError::AliasExpansionLimitExceeded {
            max_expansions_per_anchor,
            ..
        } => Diagnostic::YamlLimit {
            message: format!(
                "one anchor is expanded more than {max_expansions_per_anchor} times, the per-anchor limit; {RAISE_ALIASES}"
            ),
            span,
        },
        YamlError::AliasReplayStackDepthExceeded { max_depth, .. } => Diagnostic::YamlLimit {
            message: format!(
                "aliases nest inside aliases more than {max_depth} deep, the alias-nesting limit; {RAISE_ALIASES}"
            ),
            span,
        },
        YamlError::AliasReplayCounterOverflow { .. } => Diagnostic::YamlLimit {
            message: format!("aliases expand beyond what can be counted; {RAISE_ALIASES}"),
            span,
        },
        // The scanner stops a deep flow collection (`[[[[…`) before any event reaches the
        // depth budget: the same limit, reported the same way.
        YamlError::ExternalMessage { source, .. }
            if matches!(
                &**source,
                serde_saphyr::ExternalMessageSource::Parser(e)
                    if matches!(e.kind(), serde_saphyr::granit_parser::ErrorKind::RecursionLimitExceeded)
            ) =>
        {
            Diagnostic::YamlLimit {
                message: format!(
                    "nesting is more than {MAX_DEPTH} levels deep, over the nesting-depth limit of {MAX_DEPTH}; {RAISE_DEPTH}"
                ),
                span,
            }
        }
        _ => Diagnostic::YamlSyntax {
            message: plain_message(err),
            span,
        },
    }
}

fn type_help(expected: &str) -> String {
    if expected.contains("sequence") || expected.contains("Vec") {
        "write a list: one `- item` per line, or `[a, b]`".to_string()
    } else if expected.contains("struct") || expected.contains("map") {
        "write a mapping of `key: value` lines, indented under this key".to_string()
    } else if expected.contains("string") {
        "write text here; quote it if it looks like a number, a list or a mapping".to_string()
    } else if expected.contains("integer") || expected.contains("i64") {
        "write a whole number here, without quotes".to_string()
    } else if expected.contains("bool") {
        "write `true` or `false`".to_string()
    } else {
        format!("expected {expected}")
    }
}

/// How to get under the fixed nesting limit, or raise it when a real manifest needs more.
const RAISE_DEPTH: &str = "flatten the structure (e.g. move deep schema parts into `$defs` and \
    `$ref` them); if a legitimate manifest needs more, raise MAX_DEPTH in src/manifest.rs";
/// How to get under the alias limits, or raise them when a real manifest needs more.
const RAISE_ALIASES: &str = "write the repeated part out in full instead of through an alias \
    (the expansion budget grows with the file size); if a legitimate manifest needs more, \
    raise MAX_ALIASES or the budgets in `options` in src/manifest.rs";

/// Which budget was breached, its value, and how to get under it (or raise it).
fn budget_message(breach: &BudgetBreach) -> String {
    match breach {
        BudgetBreach::Depth { depth } => format!(
            "nesting is {depth} levels deep, over the nesting-depth limit of {MAX_DEPTH}; {RAISE_DEPTH}"
        ),
        BudgetBreach::Aliases { aliases } => format!(
            "{aliases} aliases, over the alias-count limit of {MAX_ALIASES}; {RAISE_ALIASES}"
        ),
        BudgetBreach::Anchors { anchors } => format!(
            "{anchors} anchors, over the anchor-count limit of {MAX_ALIASES}; {RAISE_ALIASES}"
        ),
        BudgetBreach::AliasAnchorRatio { aliases, anchors } => format!(
            "{aliases} aliases for {anchors} anchors, over the alias-to-anchor ratio limit: \
             repeated alias expansion is how YAML bombs are built; {RAISE_ALIASES}"
        ),
        BudgetBreach::ScalarBytes { total_scalar_bytes } => format!(
            "{total_scalar_bytes} bytes of text after alias expansion, over the text budget \
             (4 times the file size plus 64 MiB); {RAISE_ALIASES}"
        ),
        BudgetBreach::Nodes { nodes } => format!(
            "{nodes} YAML nodes after alias expansion, over the node budget (the file size plus \
             the alias-expansion budget); {RAISE_ALIASES}"
        ),
        BudgetBreach::Events { events } => format!(
            "{events} parser events after alias expansion, over the event budget (twice the node \
             budget); {RAISE_ALIASES}"
        ),
        BudgetBreach::Documents { .. } => {
            "more than one YAML document (`---`); a manifest is one document".to_string()
        }
        other => format!("{other:?}; {RAISE_ALIASES}"),
    }
}

/// The parser's message without its own location suffix (our label carries the place).
fn plain_message(err: &YamlError) -> String {
    let text = err.to_string();
    match text.find(" at line ") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}
