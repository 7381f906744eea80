//! connectorgen: one YAML manifest of a connector's operations → `openapi.json`,
//! `llms.txt` and `descriptions.md`, with the cost, polling and idempotency rules an AI
//! agent needs to act safely on a person's behalf.
//!
//! The pipeline runs one way: `manifest` (parse) → `validate` (raw → `model`) →
//! `render` (model → `Outputs`) → `lint` → `output` (write, for `build`) or `check`
//! (compare with disk). `analyze` runs everything up to the writing; `report` turns
//! its findings into text for people and CI tools.

pub mod atomic_file;
pub mod base;
pub mod check;
pub mod diagnostics;
pub mod english;
pub mod explain;
pub mod import;
pub mod init;
pub mod input;
pub mod lint;
pub mod manifest;
pub mod model;
pub mod output;
pub mod render;
pub mod report;
pub mod schema;
pub mod templates;
pub mod terminal;
pub mod validate;

use std::sync::Arc;

use diagnostics::{Diagnostic, Diagnostics, Finding, Severity};
use model::Connector;
use render::{Outputs, RenderError};

/// What one manifest gives: every finding, and the outputs whenever the manifest is
/// valid (a lint set to `deny` is an error, but the outputs still exist, so `check` can
/// report drift alongside it; `build` writes nothing when there is any error).
#[derive(Debug)]
pub struct Analysis {
    pub diagnostics: Diagnostics,
    pub outputs: Option<Outputs>,
    /// The validated connector, when the manifest validated.
    pub connector: Option<Connector>,
    /// The base OpenAPI document the manifest names (`openapi:`), when it could be read.
    pub base: Option<Arc<base::Base>>,
}

impl Analysis {
    pub fn has_errors(&self) -> bool {
        self.diagnostics.count(Severity::Error) > 0
    }
}

/// How a run differs from what the manifest alone says.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Replaces the manifest's `targets:` when set (`--target`).
    pub targets: Option<Vec<model::Target>>,
    /// Templates from `--templates DIR`, replacing the manifest's `templates:`.
    pub templates: Option<templates::Sources>,
    /// The manifest's folder, against which its `templates:` and `openapi:` are resolved.
    pub manifest_dir: Option<std::path::PathBuf>,
    /// The most bytes a file the manifest names (`openapi:`) may have; 0 means the
    /// default (`input::DEFAULT_MAX_BYTES`, as for manifests).
    pub max_bytes: u64,
    /// Never read a file the manifest names (`openapi:`): for fuzzing and other runs on
    /// untrusted text that must not touch the file system.
    pub sandbox: bool,
    /// Template fuel for the run (`--template-fuel`), instead of the default that grows
    /// with the manifest (`templates::Limits`).
    pub template_fuel: Option<u64>,
    /// The largest text one render may produce (`--max-template-output`), instead of
    /// `templates::DEFAULT_MAX_OUTPUT`.
    pub max_template_output: Option<u64>,
}

/// Parses, validates, renders and lints manifest text. `name` is how findings name the
/// file. A render error is a bug in a template, not a problem of the manifest.
pub fn analyze(name: &str, text: Arc<String>) -> Result<Analysis, RenderError> {
    analyze_with(name, text, &Options::default())
}

/// `analyze`, with command-line options applied over the manifest.
pub fn analyze_with(
    name: &str,
    text: Arc<String>,
    options: &Options,
) -> Result<Analysis, RenderError> {
    let invalid = |findings: Vec<Finding>, base: Option<&(String, Arc<String>)>| {
        let mut diagnostics = Diagnostics::new(name, text.clone(), findings);
        if let Some((base_name, base_text)) = base {
            diagnostics = diagnostics.with_base(base_name, base_text.clone());
        }
        Analysis {
            diagnostics,
            outputs: None,
            connector: None,
            base: None,
        }
    };
    let mut raw = match manifest::parse(&text) {
        Ok(raw) => raw,
        Err(d) => return Ok(invalid(vec![Finding::error(*d)], None)),
    };
    let base = match &raw.value.openapi {
        None => None,
        Some(path) => match load_base(path, options) {
            Ok(base) => Some(Arc::new(base)),
            Err(failure) => {
                let (finding, file) = *failure;
                return Ok(invalid(vec![finding], file.as_ref()));
            }
        },
    };
    let base_file = base.as_ref().map(|b| (b.name.clone(), b.text.clone()));
    let (mut connector, warnings) = match validate::validate(&mut raw, base.as_deref()) {
        Ok(valid) => valid,
        Err(findings) => return Ok(invalid(findings, base_file.as_ref())),
    };
    if let Some(targets) = options.targets.as_ref().filter(|t| !t.is_empty()) {
        connector.targets = targets.clone();
        connector.targets.sort();
        connector.targets.dedup();
    }
    let sources = match (&options.templates, &connector.templates_dir) {
        (Some(sources), _) => sources.clone(),
        (None, Some((dir, span))) => {
            let base = options.manifest_dir.clone().unwrap_or_default();
            match templates::load_dir(&base.join(dir)) {
                Ok(sources) => sources,
                Err(e) => {
                    let d = diagnostics::Diagnostic::BadTemplatesDir {
                        message: e.to_string(),
                        span: *span,
                    };
                    return Ok(invalid(vec![Finding::error(d)], base_file.as_ref()));
                }
            }
        }
        (None, None) => templates::defaults(),
    };
    drop(raw);
    // Templates work on the operations' text, which in base mode comes from the base
    // document too: the budget grows with both.
    let input_bytes = text.len() + base.as_ref().map_or(0, |b| b.text.len());
    let limits = templates::Limits::for_manifest(
        input_bytes,
        options.template_fuel,
        options.max_template_output,
    );
    let rendered = render::render(
        &connector,
        base.as_deref(),
        &file_name(name),
        &sources,
        limits,
    )?;
    let mut findings = warnings;
    findings.extend(lint::run(&connector, &rendered.descriptions));
    findings.extend(rendered.findings);
    let mut diagnostics = Diagnostics::new(name, text.clone(), findings);
    if let Some((base_name, base_text)) = base_file {
        diagnostics = diagnostics.with_base(&base_name, base_text);
    }
    Ok(Analysis {
        diagnostics,
        outputs: Some(rendered.outputs),
        connector: Some(connector),
        base,
    })
}

/// Why a manifest produced no outputs.
#[derive(Debug, thiserror::Error)]
pub enum GenerateError {
    /// The manifest has errors (problems, or lints set to `deny`); every finding is listed.
    #[error("the manifest has {} error(s)", .0.count(Severity::Error))]
    Invalid(Diagnostics),
    /// A template failed to render (a bug in a template, not in the manifest).
    #[error(transparent)]
    Render(#[from] RenderError),
}

/// Manifest text → every output file's contents, or the findings that prevent them.
pub fn generate(name: &str, text: Arc<String>) -> Result<Outputs, GenerateError> {
    generate_with(name, text, &Options::default())
}

/// `generate`, with command-line options applied over the manifest.
pub fn generate_with(
    name: &str,
    text: Arc<String>,
    options: &Options,
) -> Result<Outputs, GenerateError> {
    let analysis = analyze_with(name, text, options)?;
    match analysis.outputs {
        Some(outputs) if !analysis.has_errors() => Ok(outputs),
        _ => Err(GenerateError::Invalid(analysis.diagnostics)),
    }
}

/// Parses and validates manifest text into the model (no rendering, no lints). A base
/// document is read relative to the current folder.
pub fn load(name: &str, text: Arc<String>) -> Result<Connector, Diagnostics> {
    let analysis = analyze(name, text).map_err(|e| {
        Diagnostics::new(
            name,
            Arc::new(String::new()),
            vec![Finding::error(Diagnostic::BadTemplatesDir {
                message: e.to_string(),
                span: (0, 0).into(),
            })],
        )
    })?;
    match analysis.connector {
        Some(connector) => Ok(connector),
        None => Err(analysis.diagnostics),
    }
}

/// Why the base document could not be used: the finding, and the document's name and
/// text when the finding points into it.
type BaseFailure = (Finding, Option<(String, Arc<String>)>);

/// Reads and parses the base document `openapi:` names.
fn load_base(
    path: &serde_saphyr::Spanned<String>,
    options: &Options,
) -> Result<base::Base, Box<BaseFailure>> {
    let at = manifest::span(path);
    let unreadable = |message: String| {
        let d = Diagnostic::BaseUnreadable { message, span: at };
        Box::new((Finding::error(d), None))
    };
    if options.sandbox {
        return Err(unreadable(
            "this run reads no files the manifest names".to_string(),
        ));
    }
    let file = normalize(&match &options.manifest_dir {
        Some(dir) => dir.join(path.value.trim()),
        None => std::path::PathBuf::from(path.value.trim()),
    });
    let max = match options.max_bytes {
        0 => input::DEFAULT_MAX_BYTES,
        n => n,
    };
    let text = input::read_manifest(&file, max).map_err(|e| unreadable(e.to_string()))?;
    let text = Arc::new(text);
    let shown = file.display().to_string();
    base::Base::parse(&shown, text.clone())
        .map_err(|d| Box::new((Finding::error(*d).in_base(), Some((shown, text)))))
}

/// `a/b/../c` → `a/c`, without touching the disk: how messages name a file the
/// manifest names relative to itself.
pub(crate) fn normalize(path: &std::path::Path) -> std::path::PathBuf {
    use std::path::Component;
    let mut out = std::path::PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir
                if matches!(out.components().next_back(), Some(Component::Normal(_))) =>
            {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The file name outputs mention: never the directory, which depends on where it ran.
fn file_name(name: &str) -> String {
    std::path::Path::new(name)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| name.to_string())
}
