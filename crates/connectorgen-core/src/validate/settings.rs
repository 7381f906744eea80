//! Manifest-wide settings: `targets:`, `lint:` and `mcp.output`, and `Settings`, what the manifest-wide
//! keys say that each inline operation is checked against.
//!
//! Takes: the raw settings. Returns (through `Validator`): the targets in a fixed order
//! and the lint configuration, reporting unknown names with a did-you-mean.
//! Must never: hold a finding (those are `findings.rs`).

use serde_saphyr::Spanned;

use super::context::{Validator, checked_url};
use crate::diagnostics::{Diagnostic, Finding, Span, suggest};
use crate::lower::Errors;
use crate::manifest::{RawLintSetting, RawLints, RawManifestProbe, RawMcpDefaults, RawOAuth, span};
use crate::model::{Document, Level, Lint, LintConfig, McpOutput, OAuthScopes, Service};
use crate::model::{Names as _, Target};

/// What the manifest-wide keys say that inline operations are checked against, set
/// once before the operations are read (`validate/document.rs` checks the keys).
#[derive(Default)]
pub(super) struct Settings {
    /// Inline mode: `schemas:`, against which the author's `$ref`s resolve.
    pub shared: serde_json::Map<String, serde_json::Value>,
    /// Inline mode: the error responses every operation gets (`errors:`).
    pub error_responses: Errors,
    /// The header an inline API key travels in, which no operation may declare again.
    pub api_key_header: Option<String>,
}

/// An `mcp.output` value (an operation's, or the manifest's default): a known name, or
/// `None` with the finding.
pub(in crate::validate) fn mcp_output(
    v: &mut Validator,
    raw: &Spanned<String>,
) -> Option<McpOutput> {
    let written = raw.value.trim();
    McpOutput::named(written).or_else(|| {
        let suggestion = suggest(written, McpOutput::names());
        let stop = if suggestion.ends_with('?') { "" } else { "." };
        v.findings.push(Diagnostic::UnknownMcpOutput {
            value: raw.value.clone(),
            span: span(raw),
            help: format!(
                "{suggestion}{stop} `full` declares the whole answer, `summary` only the top-level properties the safety text and the poll read (ids, status, amount) with their types, `none` no `outputSchema`"
            ),
        });
        None
    })
}

/// The manifest's `mcp.output`, the default of every operation that does not write its
/// own (`full` when not written, or not valid: reported).
fn mcp_output_default(v: &mut Validator, raw: Option<&Spanned<RawMcpDefaults>>) -> McpOutput {
    raw.and_then(|m| m.value.output.as_ref())
        .and_then(|o| mcp_output(v, o))
        .unwrap_or_default()
}

/// `targets:` — known names, at least one; kept in a fixed order without repeats so
/// the outputs do not depend on how the list was written.
pub(in crate::validate) fn targets(
    v: &mut Validator,
    raw: Option<&Spanned<Vec<Spanned<String>>>>,
) -> Vec<Target> {
    let Some(raw) = raw else {
        return vec![Target::Muse];
    };
    if raw.value.is_empty() {
        v.findings.push(Diagnostic::UnknownTarget {
            target: String::new(),
            span: span(raw),
            help: "list at least one target, e.g. `targets: [muse]`".to_string(),
        });
    }
    let mut targets: Vec<Target> = raw
        .value
        .iter()
        .filter_map(|t| {
            let found = Target::named(t.value.trim());
            if found.is_none() {
                v.findings.push(Diagnostic::UnknownTarget {
                    target: t.value.clone(),
                    span: span(t),
                    help: suggest(t.value.trim(), Target::names()),
                });
            }
            found
        })
        .collect();
    targets.sort();
    targets.dedup();
    targets
}

pub(in crate::validate) fn lint_id(v: &mut Validator, id: &Spanned<String>) -> Option<Lint> {
    let found = Lint::lint_from_id(id.value.trim());
    if let Some(lint) = found.filter(|l| l.is_retired()) {
        v.findings.add(Finding::warning(Diagnostic::RetiredLint {
            id: lint.code().to_string(),
            span: span(id),
        }));
    }
    if found.is_none() {
        v.findings.push(Diagnostic::UnknownLint {
            id: id.value.clone(),
            span: span(id),
            help: suggest(id.value.trim(), Lint::lints().map(Lint::code)),
        });
    }
    found
}

pub(super) fn lint_level(v: &mut Validator, id: &str, level: &str, at: Span) -> Option<Level> {
    let found = Level::named(level.trim());
    if found.is_none() {
        v.findings.push(Diagnostic::InvalidLintSetting {
            id: id.to_string(),
            reason: format!(
                "`{level}` is not a level; {}",
                suggest(level.trim(), Level::names())
            ),
            span: at,
        });
    }
    found
}

pub(in crate::validate) fn lint_config(
    v: &mut Validator,
    raw: Option<&Spanned<RawLints>>,
) -> LintConfig {
    let mut config = LintConfig::default();
    let Some(raw) = raw else { return config };
    for (id, setting) in &raw.value {
        let Some(lint) = lint_id(v, id) else {
            continue;
        };
        let at = span(setting);
        match &setting.value {
            RawLintSetting::Level(level) => {
                if let Some(level) = lint_level(v, &id.value, level, at) {
                    config.set(lint, level);
                }
            }
            RawLintSetting::Detailed(detail) => {
                // `{ max: 200 }` alone means "check, with this maximum".
                let level = match &detail.level {
                    Some(level) => lint_level(v, &id.value, level, at),
                    None => Some(Level::Warn),
                };
                if let Some(level) = level {
                    config.set(lint, level);
                }
                let reason = match (detail.max, lint) {
                    (None, _) => None,
                    (Some(max), Lint::DescriptionTooLong) if max > 0 => {
                        config.description_max = usize::try_from(max).unwrap_or(usize::MAX);
                        None
                    }
                    (Some(max), Lint::McpToolTooLarge) if max > 0 => {
                        config.mcp_tool_max = usize::try_from(max).unwrap_or(usize::MAX);
                        None
                    }
                    (Some(max), Lint::DescriptionTooLong) => Some(format!(
                        "`max` must be a positive number of characters, not {max}"
                    )),
                    (Some(max), Lint::McpToolTooLarge) => Some(format!(
                        "`max` must be a positive number of bytes, not {max}"
                    )),
                    (Some(_), _) => Some(
                        "only description-too-long and mcp-tool-too-large take `max`".to_string(),
                    ),
                };
                if let Some(reason) = reason {
                    v.findings.push(Diagnostic::InvalidLintSetting {
                        id: id.value.clone(),
                        reason,
                        span: at,
                    });
                }
            }
        }
    }
    config
}

/// The manifest-wide settings every mode reads after its operations: `probe.sandboxUrl`,
/// `lint:` and `targets:`.
pub(super) struct Wide {
    pub sandbox_url: Option<String>,
    pub lint: LintConfig,
    pub targets: Vec<Target>,
    /// `mcp.output`: the default of the operations that do not write their own.
    pub mcp_output: McpOutput,
}

/// `probe.sandboxUrl` (a URL), `lint:`, `targets:` and `mcp.output`, in this order.
pub(super) fn wide(
    v: &mut Validator,
    probe: Option<&Spanned<RawManifestProbe>>,
    lint: Option<&Spanned<RawLints>>,
    raw_targets: Option<&Spanned<Vec<Spanned<String>>>>,
    mcp: Option<&Spanned<RawMcpDefaults>>,
) -> Wide {
    let sandbox_url = probe
        .and_then(|p| p.value.sandbox_url.as_ref())
        .and_then(|url| checked_url(v, url, "probe.sandboxUrl"));
    Wide {
        sandbox_url,
        lint: lint_config(v, lint),
        targets: targets(v, raw_targets),
        mcp_output: mcp_output_default(v, mcp),
    }
}

/// `oauth.scopes`: each an OAuth scope (RFC 6749, section 3.3: printable ASCII without
/// spaces, `"` or a backslash), and the three classes' scopes, defaults included,
/// different: a token's scopes are read one by one, and one name for two classes would
/// let a token of the cheaper class make the dearer call.
pub(super) fn oauth_scopes(
    v: &mut Validator,
    oauth: Option<&Spanned<RawOAuth>>,
    service: &str,
) -> OAuthScopes {
    let Some(written) = oauth.and_then(|o| o.value.scopes.as_ref()) else {
        return OAuthScopes::default();
    };
    let written = &written.value;
    let defaults = OAuthScopes::default().resolved(service);
    let mut checked = OAuthScopes::default();
    let mut taken: Vec<(&'static str, String)> = Vec::new();
    let classes = [
        ("read", &written.read, &mut checked.read),
        ("change", &written.change, &mut checked.change),
        ("spend", &written.spend, &mut checked.spend),
    ];
    for ((class, value, slot), default) in classes.into_iter().zip(defaults) {
        let Some(value) = value else {
            taken.push((class, default));
            continue;
        };
        let reason = scope_problem(&value.value).or_else(|| {
            taken
                .iter()
                .find(|(_, scope)| *scope == value.value)
                .map(|(other, _)| format!("it is also the {other} scope"))
        });
        if let Some(reason) = reason {
            v.findings.push(Diagnostic::BadScope {
                class,
                reason,
                span: span(value),
            });
            continue;
        }
        taken.push((class, value.value.clone()));
        *slot = Some(value.value.clone());
    }
    checked
}

/// Why `scope` is no OAuth scope token, if it is not.
fn scope_problem(scope: &str) -> Option<String> {
    if scope.is_empty() {
        return Some("it is empty".into());
    }
    let bad = scope
        .chars()
        .find(|&c| !matches!(c, '!' | '#'..='[' | ']'..='~'))?;
    Some(match bad {
        ' ' => "it holds a space: a token's scopes are separated by spaces".into(),
        c => format!("it holds {c:?}, which a scope cannot"),
    })
}

/// A sandbox URL that is the production one (`service.publicUrl` or the document's
/// first server): `probe` would spend real money. `false` when it is.
pub(super) fn sandbox_apart(
    v: &mut Validator,
    wide: &Wide,
    probe: Option<&Spanned<RawManifestProbe>>,
    service: &Service,
    document: &Document,
    root: Span,
) -> bool {
    let Some(sandbox) = &wide.sandbox_url else {
        return true;
    };
    let Some(production) = production_twin(sandbox, &service.public_url, document) else {
        return true;
    };
    let at = probe
        .and_then(|p| p.value.sandbox_url.as_ref())
        .map_or(root, span);
    v.findings.push(Diagnostic::SandboxIsProduction {
        url: sandbox.clone(),
        production,
        span: at,
    });
    false
}

/// Which production URL `sandbox` is (`service.publicUrl` or the document's first
/// server), compared without case in scheme and host and without a trailing `/`.
fn production_twin(sandbox: &str, public_url: &str, document: &Document) -> Option<&'static str> {
    let same = |a: &str, b: &str| {
        let norm = |u: &str| {
            let u = u.trim().trim_end_matches('/');
            match u.split_once("://") {
                Some((scheme, rest)) => {
                    let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
                    format!(
                        "{}://{}{path}",
                        scheme.to_ascii_lowercase(),
                        host.to_ascii_lowercase()
                    )
                }
                None => u.to_string(),
            }
        };
        norm(a) == norm(b)
    };
    if same(sandbox, public_url) {
        return Some("service.publicUrl");
    }
    let first = document
        .root
        .get("servers")
        .and_then(|s| s.get(0))
        .and_then(|s| s.get("url"))
        .and_then(serde_json::Value::as_str);
    first
        .filter(|f| same(sandbox, f))
        .map(|_| "the first server")
}
