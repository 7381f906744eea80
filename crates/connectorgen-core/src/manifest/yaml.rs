//! Reading YAML with the manifest's settings: strict booleans, `010` kept as text, and
//! budgets against YAML bombs (nesting depth, what aliases expand to) — for the manifest
//! and for a base OpenAPI document written in YAML.
//!
//! Takes: text. Returns: the raw manifest (`parse`) or plain JSON values (`parse_value`),
//! or one `Diagnostic` at the place the parser stopped; and the spans later stages use.
//! Must never: let a YAML bomb through, or tell the user to edit the source (every
//! budget has a flag or a way to get under it).

use serde_saphyr::{Error as YamlError, budget::BudgetBreach};
use serde_saphyr::{Location, Spanned};

use super::RawManifest;
use crate::diagnostics::{Diagnostic, Span, suggest};

/// Deeper than any manifest needs (JSON Schemas included), far below what hurts. Not a
/// flag: the deserialiser recurses once per level, so a much higher limit could exhaust
/// the stack instead of giving a diagnostic.
const MAX_DEPTH: usize = 64;
/// The least alias-expansion budget, in parser events: room for a shared schema reused
/// in every operation of a mid-sized manifest, while a "billion laughs" stops within
/// 0.1 s and 30 MB (docs/guarantees.md).
const MIN_ALIAS_EXPANSION: usize = 100_000;
/// Text that aliases may add for each event of `--max-alias-expansion`, and of
/// `MIN_ALIAS_EXPANSION` without it (16 MB): room for shared descriptions, while a long
/// anchored string repeated by aliases stays under 30 MB of memory. It does not grow
/// with the file as the event budget does: that would let a 1 MB file of one long
/// string and its aliases take 50 MB.
const TEXT_PER_EXPANDED_EVENT: usize = 160;

/// The alias-expansion budget for a manifest of `len` bytes: the parser events that
/// aliases may replay in all (`--max-alias-expansion`, else a quarter of the file size
/// and at least `MIN_ALIAS_EXPANSION`).
pub(crate) fn alias_expansion_budget(len: usize, max_alias_expansion: Option<usize>) -> usize {
    max_alias_expansion.unwrap_or((len / 4).max(MIN_ALIAS_EXPANSION))
}

/// Parser settings for a manifest of `len` bytes (also what tests read YAML with, so they
/// see it exactly as a run does).
///
/// What aliases expand to is bounded, not how often they are used: the replayed events,
/// the nodes and the text after expansion all have budgets that grow with the file, so
/// any manifest under the size limit parses, a shared schema may be reused by thousands
/// of aliases, and a YAML bomb (which needs expansion far beyond its size, or deep
/// nesting) is stopped early. There is no alias count or alias-to-anchor ratio limit:
/// those refuse honest reuse and bound nothing an expansion budget does not.
pub fn parser_options(len: usize, max_alias_expansion: Option<usize>) -> serde_saphyr::Options {
    let replay = alias_expansion_budget(len, max_alias_expansion);
    let nodes = len.saturating_add(replay).saturating_add(1024);
    serde_saphyr::options! {
        budget: serde_saphyr::budget! {
            max_events: nodes.saturating_mul(2),
            max_nodes: nodes,
            // 4× the file: an explicit tag (`!!str`) counts its expanded spelling.
            max_total_scalar_bytes: len.saturating_mul(4).saturating_add(
                max_alias_expansion
                    .unwrap_or(MIN_ALIAS_EXPANSION)
                    .saturating_mul(TEXT_PER_EXPANDED_EVENT)
            ),
            max_depth: MAX_DEPTH,
            // The scanner's own cap on `[[[…` / `{{{…`, aligned with `max_depth` so a
            // deep flow collection reports the same limit as a deep block one.
            flow_nesting_limit: MAX_DEPTH,
            // Each alias is at least two bytes of the file, and what it expands to is
            // charged to the budgets above.
            max_aliases: usize::MAX,
            max_anchors: usize::MAX,
            enforce_alias_anchor_ratio: false,
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

/// Parses manifest text into raw types, or the one structural problem that stopped the
/// parser. The default budgets.
pub fn parse(text: &str) -> Result<Spanned<RawManifest>, Box<Diagnostic>> {
    parse_with(text, None)
}

/// `parse`, with `max_alias_expansion` over the default alias-expansion budget
/// (`--max-alias-expansion`).
pub fn parse_with(
    text: &str,
    max_alias_expansion: Option<usize>,
) -> Result<Spanned<RawManifest>, Box<Diagnostic>> {
    // Whenever the fast path does not account for every one-line JSON Schema, or the text
    // has a problem, the original text is parsed as before, so every diagnostic comes
    // from it.
    let mut raw = parse_fast(text, max_alias_expansion)
        .map_or_else(|| parse_plain(text, max_alias_expansion), Ok)?;
    fit_parameter_lists(&mut raw.value);
    Ok(raw)
}

/// Gives back the room the parser left at the end of each operation's query, path and
/// header list. Read item by item, a list starts with room for four entries of about
/// 500 bytes (spans included) and most operations list one to three; the lists live
/// until validation ends, where a build's memory peaks, and what is given back here is
/// reused by what validation makes.
fn fit_parameter_lists(raw: &mut RawManifest) {
    let Some(ops) = &mut raw.operations else {
        return;
    };
    for op in &mut ops.value {
        let op = &mut op.value;
        for list in [&mut op.query, &mut op.params, &mut op.headers]
            .into_iter()
            .flatten()
        {
            list.shrink_to_fit();
        }
    }
}

/// The JSON fast path alone (`flow_json`): the raw manifest when the one-line JSON
/// Schemas were read by it and every one came back in its place; `None` when the text
/// must be parsed as it is (no such schema, a doubt, or any error).
#[doc(hidden)]
pub fn parse_fast(text: &str, max_alias_expansion: Option<usize>) -> Option<Spanned<RawManifest>> {
    let sub = super::flow_json::substitute(text)?;
    let mut raw = serde_saphyr::from_str_with_options::<Spanned<RawManifest>>(
        &sub.text,
        parser_options(text.len(), max_alias_expansion),
    )
    .ok()?;
    sub.restore(&mut raw.value).then_some(raw)
}

/// `parse_with` by the YAML parser alone, without the JSON fast path: what the fast path
/// must agree with exactly (the differential tests and the fuzz target compare the two;
/// `Options::plain_parse` runs the whole pipeline on it).
#[doc(hidden)]
pub fn parse_plain(
    text: &str,
    max_alias_expansion: Option<usize>,
) -> Result<Spanned<RawManifest>, Box<Diagnostic>> {
    serde_saphyr::from_str_with_options(text, parser_options(text.len(), max_alias_expansion))
        .map_err(|e| Box::new(to_diagnostic(&e, text)))
}

/// Parses any YAML text with the manifest's settings and budgets into plain JSON values
/// (the base OpenAPI document, when it is YAML).
pub fn parse_value(text: &str) -> Result<serde_json::Value, Box<Diagnostic>> {
    serde_saphyr::from_str_with_options(text, parser_options(text.len(), None))
        .map_err(|e| Box::new(to_diagnostic(&e, text)))
}

/// The byte range a location covers, for labels.
pub(crate) fn span_of(loc: &Location) -> Span {
    let span = loc.span();
    // Offsets into a text held in memory fit in usize.
    let offset = usize::try_from(span.byte_offset().unwrap_or(0)).unwrap_or(usize::MAX);
    let len = usize::try_from(span.byte_len().unwrap_or(0)).unwrap_or(0);
    Span::from((offset, len))
}

/// The span of a spanned value (where it is referenced, i.e. where an alias was used).
pub(crate) fn span<T>(s: &Spanned<T>) -> Span {
    span_of(&s.referenced)
}

/// The byte position of a 1-based line and column (in characters), for parser errors
/// that carry no byte offset (the scanner's, e.g. a flow collection nested too deep).
pub(crate) fn span_at(text: &str, line: u64, column: u64) -> Span {
    let skip = usize::try_from(line.saturating_sub(1)).unwrap_or(usize::MAX);
    let start: usize = text.split_inclusive('\n').take(skip).map(str::len).sum();
    let nth = usize::try_from(column.saturating_sub(1)).unwrap_or(usize::MAX);
    let offset = text[start..]
        .char_indices()
        .nth(nth)
        .map_or(text.len(), |(i, _)| start + i);
    Span::from((offset, 0))
}

fn to_diagnostic(err: &YamlError, text: &str) -> Diagnostic {
    let span = match err.location() {
        Some(l) if l.span().byte_offset().is_none() => span_at(text, l.line(), l.column()),
        Some(l) => span_of(&l),
        None => Span::from((text.len(), 0)),
    };
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
        // A plain scalar where a number or a boolean belongs (`typicalSeconds: soon`):
        // the YAML is well-formed, the value is of the wrong kind.
        YamlError::InvalidScalar { ty, .. } => Diagnostic::WrongType {
            message: format!("`{}` is not {}", scalar_at(text, span), kind_of(ty)),
            span,
            help: Some(type_help(ty)),
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
                "aliases expand to more than {max_total_replayed_events} parser events, \
                 {EXPANSION_BUDGET}; {RAISE_ALIASES}"
            ),
            span,
        },
        YamlError::AliasExpansionLimitExceeded {
            max_expansions_per_anchor,
            ..
        } => Diagnostic::YamlLimit {
            message: format!(
                "one anchor is expanded more than {max_expansions_per_anchor} times, the per-anchor limit; {UNALIAS}"
            ),
            span,
        },
        YamlError::AliasReplayStackDepthExceeded { max_depth, .. } => Diagnostic::YamlLimit {
            message: format!(
                "aliases nest inside aliases more than {max_depth} deep, the alias-nesting limit; {UNALIAS}"
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
                    "nesting is more than {MAX_DEPTH} levels deep, over the nesting-depth limit of {MAX_DEPTH}; {FLATTEN}"
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

/// The plain scalar that starts at `span`, as written (at most 40 characters).
fn scalar_at(text: &str, span: Span) -> String {
    let rest = text.get(span.offset()..).unwrap_or_default();
    let end = rest.find([',', '}', ']', '\n', '#']).unwrap_or(rest.len());
    let value = rest[..end].trim();
    match value.char_indices().nth(40) {
        Some((i, _)) => format!("{}…", &value[..i]),
        None => value.to_string(),
    }
}

/// What serde-saphyr's scalar type name (`i64`, `u32`, `floating point`, `bool`) asks for.
fn kind_of(ty: &str) -> &'static str {
    match ty {
        "bool" => "`true` or `false`",
        "floating point" | "f32" | "f64" => "a number",
        "i8" | "i16" | "i32" | "i64" | "i128" | "isize" | "u8" | "u16" | "u32" | "u64" | "u128"
        | "usize" => "a whole number",
        _ => "a value of another kind",
    }
}

fn type_help(expected: &str) -> String {
    if expected.contains("sequence") || expected.contains("Vec") {
        "write a list: one `- item` per line, or `[a, b]`".to_string()
    } else if expected.contains("struct") || expected.contains("map") {
        "write a mapping of `key: value` lines, indented under this key".to_string()
    } else if expected.contains("string") {
        "write text here; quote it if it looks like a number, a list or a mapping".to_string()
    } else if expected.contains("integer") || kind_of(expected) == "a whole number" {
        "write a whole number here, without quotes".to_string()
    } else if kind_of(expected) == "a number" {
        "write a number here, without quotes".to_string()
    } else if expected.contains("bool") {
        "write `true` or `false`".to_string()
    } else {
        format!("expected {expected}")
    }
}

/// How to get under the nesting limit.
// Not "move parts into `$defs`": a `#/$defs` reference does not resolve inside the
// generated OpenAPI documents (an `unresolved-ref` error).
const FLATTEN: &str = "flatten the structure (a JSON Schema rarely needs more than a few levels)";
/// How to get under an alias limit that no flag changes.
const UNALIAS: &str = "write the repeated part out in full instead of through an alias";
/// How to get under the alias budgets, or raise them when a real manifest needs more.
const RAISE_ALIASES: &str = "write the repeated part out in full instead of through an alias, \
    or, if the manifest is yours and legitimately needs more, raise the budget with \
    `--max-alias-expansion N`";
/// What the alias-expansion budget is, for messages.
const EXPANSION_BUDGET: &str = "the alias-expansion budget (`--max-alias-expansion`; by \
    default a quarter of the file size, at least 100,000)";

/// Which budget was breached, its value, and how to get under it (or raise it).
fn budget_message(breach: &BudgetBreach) -> String {
    match breach {
        BudgetBreach::Depth { depth } => format!(
            "nesting is {depth} levels deep, over the nesting-depth limit of {MAX_DEPTH}; {FLATTEN}"
        ),
        BudgetBreach::ScalarBytes { total_scalar_bytes } => format!(
            "{total_scalar_bytes} bytes of text after alias expansion, over the text budget \
             (4 times the file size plus {TEXT_PER_EXPANDED_EVENT} bytes per event of \
             `--max-alias-expansion`, 16,000,000 bytes by default); {RAISE_ALIASES}"
        ),
        BudgetBreach::Nodes { nodes } => format!(
            "{nodes} YAML nodes after alias expansion, over the node budget (the file size plus \
             {EXPANSION_BUDGET}); {RAISE_ALIASES}"
        ),
        BudgetBreach::Events { events } => format!(
            "{events} parser events after alias expansion, over the event budget (twice the node \
             budget: the file size plus {EXPANSION_BUDGET}); {RAISE_ALIASES}"
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
