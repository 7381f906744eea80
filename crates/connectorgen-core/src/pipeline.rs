//! The pipeline: one manifest (and, in base mode, the provider's document it names)
//! through every stage up to the writing — parse, read the base, validate, render, lint —
//! as `analyze`; `generate` for the outputs alone; `Input` for what a build read, so that
//! `--watch` rebuilds only on a real change.
//!
//! Takes: the manifest's name and text, and `Options` (targets, templates, the folders a
//! manifest may read, limits). Returns: an `Analysis` (every finding, and the outputs
//! when the manifest is valid).
//! Must never: write anything (that is `output`'s, for `build`), or stop at the first
//! problem when the others can be found too.

use std::path::PathBuf;
use std::sync::Arc;

use crate::diagnostics::{Diagnostic, Diagnostics, Finding, Severity};
use crate::model::Connector;
use crate::render::{Outputs, RenderError};
use crate::{base, diagnostics, input, lint, manifest, model, render, templates, validate};

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
    /// What the run read from disk besides the manifest text (its `templates:` folder,
    /// its base document), with what each held then, so `build --watch` knows what to
    /// watch.
    pub inputs: Vec<Input>,
    /// With the mcp target: the tool descriptions `connectorgen serve` serves where they
    /// differ from `mcp-tools.json`'s, by operation id (`render::Rendered`).
    pub served_descriptions: std::collections::BTreeMap<String, String>,
    /// With `Options::stream`: what writes openapi.json, left out of `outputs` (with
    /// `connector`, the model it is written from).
    pub streamed: Option<render::Streamed>,
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
    /// Folders besides the manifest's own that files the manifest names (`openapi:`,
    /// `templates:`) may be in (`--allow-read DIR`). Every such file must be a regular
    /// file inside the manifest's folder or one of these once symlinks are resolved
    /// (`input::Scope`).
    pub allow_read: Vec<PathBuf>,
    /// Never read a file the manifest names (`openapi:`): for fuzzing and other runs on
    /// untrusted text that must not touch the file system.
    pub sandbox: bool,
    /// The base document as text (its name for messages, and the text), used for the
    /// manifest's `openapi:` instead of reading the file it names: for fuzzing base
    /// mode without the file system. Wins over `sandbox`.
    pub base_document: Option<(String, Arc<String>)>,
    /// The base document already parsed, used for the manifest's `openapi:` instead of
    /// reading or parsing anything: `import` checks the manifest it writes, operation by
    /// operation, against the document it has read once. Wins over `base_document`.
    pub parsed_base: Option<Arc<base::Base>>,
    /// Template fuel for the run (`--template-fuel`), instead of the default that grows
    /// with the manifest (`templates::Limits`).
    pub template_fuel: Option<u64>,
    /// The largest text one render may produce (`--max-template-output`), instead of
    /// `templates::DEFAULT_MAX_OUTPUT`.
    pub max_template_output: Option<u64>,
    /// Parser events aliases may replay in all (`--max-alias-expansion`); `None`: the
    /// default budget, which grows with the file (`manifest::alias_expansion_budget`).
    pub max_alias_expansion: Option<usize>,
    /// Read the manifest with the YAML parser alone, without the JSON fast path
    /// (`manifest::parse_plain`): for the tests that compare the two.
    #[doc(hidden)]
    pub plain_parse: bool,
    /// Leave openapi.json out of `Analysis::outputs` and give what writes it instead
    /// (`Analysis::streamed`): for `build`, which streams it into its temporary file
    /// rather than hold its whole text beside the model.
    pub stream: bool,
}

impl Options {
    /// Where the files the manifest names may be: its folder (the current one when not
    /// given), and the `allow_read` folders.
    pub fn scope(&self) -> input::Scope {
        let dir = self.manifest_dir.clone().unwrap_or_default();
        input::Scope::new(std::iter::once(dir).chain(self.allow_read.iter().cloned()))
    }
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
    let Validated {
        mut connector,
        warnings,
        base,
        mut inputs,
    } = match validated(name, &text, options) {
        Ok(valid) => valid,
        Err(invalid) => return Ok(*invalid),
    };
    let base_files = base.as_ref().map_or_else(Vec::new, |b| b.files());
    let invalid = |findings: Vec<Finding>, inputs: Vec<Input>| {
        invalid_analysis(name, &text, findings, &base_files, inputs)
    };
    if let Some(targets) = options.targets.as_ref().filter(|t| !t.is_empty()) {
        connector.targets.clone_from(targets);
        connector.targets.sort();
        connector.targets.dedup();
    }
    let sources = match (&options.templates, &connector.templates_dir) {
        (Some(sources), _) => sources.clone(),
        (None, Some((dir, span))) => {
            let dir = options.manifest_dir.clone().unwrap_or_default().join(dir);
            let scope = Arc::new(options.scope());
            let read = templates::load_dir(&dir, &scope);
            inputs.push(Input::templates(dir, scope, &read));
            match read {
                Ok(sources) => sources,
                Err(e) => {
                    let d = diagnostics::Diagnostic::BadTemplatesDir {
                        message: e.to_string(),
                        span: *span,
                    };
                    return Ok(invalid(vec![Finding::error(d)], inputs));
                }
            }
        }
        (None, None) => templates::defaults(),
    };
    // Templates work on the operations' text, which in base mode comes from the base
    // document too: the budget grows with both.
    let input_bytes = text.len() + base.as_ref().map_or(0, |b| b.total_bytes());
    let limits = templates::Limits::for_manifest(
        input_bytes,
        options.template_fuel,
        options.max_template_output,
    );
    let rendered = render::render_with(
        &connector,
        base.as_deref(),
        &file_name(name),
        &sources,
        limits,
        options.stream,
    )?;
    let mut findings = warnings;
    findings.extend(lint::run(
        &connector,
        &rendered.descriptions,
        &rendered.tool_weights,
    ));
    findings.extend(rendered.findings);
    let diagnostics = Diagnostics::new(name, text.clone(), findings).with_base_files(base_files);
    let streamed = rendered
        .streamed
        .then(|| render::Streamed::new(rendered.descriptions));
    Ok(Analysis {
        diagnostics,
        outputs: Some(rendered.outputs),
        connector: Some(connector),
        base,
        inputs,
        served_descriptions: rendered.served_descriptions,
        streamed,
    })
}

/// What the stages up to the model give: the connector, the warnings validation found,
/// the base document, and what was read besides the manifest.
struct Validated {
    connector: Connector,
    warnings: Vec<Finding>,
    base: Option<Arc<base::Base>>,
    inputs: Vec<Input>,
}

/// Parses the manifest, reads its base document and validates both; when that fails,
/// the analysis to report (boxed: it is much larger than the success).
fn validated(
    name: &str,
    text: &Arc<String>,
    options: &Options,
) -> Result<Validated, Box<Analysis>> {
    let parse = if options.plain_parse {
        manifest::parse_plain
    } else {
        manifest::parse_with
    };
    let mut raw = match parse(text, options.max_alias_expansion) {
        Ok(raw) => raw,
        Err(d) => {
            let findings = vec![Finding::error(*d)];
            return Err(Box::new(invalid_analysis(
                name,
                text,
                findings,
                &[],
                Vec::new(),
            )));
        }
    };
    let mut inputs = Vec::new();
    let base = match &raw.value.openapi {
        None => None,
        Some(_) if options.parsed_base.is_some() => options.parsed_base.clone(),
        Some(path) => match load_base(path, options, &mut inputs) {
            Ok(base) => Some(Arc::new(base)),
            Err(failure) => {
                let (finding, file) = *failure;
                let files: Vec<_> = file.into_iter().collect();
                let analysis = invalid_analysis(name, text, vec![finding], &files, inputs);
                return Err(Box::new(analysis));
            }
        },
    };
    match validate::validate(&mut raw, base.as_deref()) {
        Ok((connector, warnings)) => Ok(Validated {
            connector,
            warnings,
            base,
            inputs,
        }),
        Err(findings) => {
            let files = base.as_ref().map_or_else(Vec::new, |b| b.files());
            let analysis = invalid_analysis(name, text, findings, &files, inputs);
            Err(Box::new(analysis))
        }
    }
}

/// The analysis of a manifest that produced no connector or no outputs.
fn invalid_analysis(
    name: &str,
    text: &Arc<String>,
    findings: Vec<Finding>,
    base_files: &[(String, Arc<String>)],
    inputs: Vec<Input>,
) -> Analysis {
    let diagnostics =
        Diagnostics::new(name, text.clone(), findings).with_base_files(base_files.to_vec());
    Analysis {
        diagnostics,
        outputs: None,
        connector: None,
        base: None,
        inputs,
        served_descriptions: std::collections::BTreeMap::new(),
        streamed: None,
    }
}

/// A file or folder a run read, with a fingerprint of what it held then. `build --watch`
/// watches these and rebuilds only when one of them holds something else now: an event
/// alone (a log or an editor's swap file written beside the manifest, our own outputs,
/// a save of the same bytes) changes nothing a build reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Input {
    /// As the run named it (relative to the working folder, or absolute).
    pub path: PathBuf,
    pub kind: InputKind,
    /// What the run read: a hash of the text, or of the error that stopped the read
    /// (so a missing file that appears is a change too).
    read: u64,
}

/// How an input is read, so that it can be read again the same way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputKind {
    /// One file, read whole with this size limit: by `input::read_manifest` (the
    /// manifest, named on the command line), or by `input::read_named` within `scope`
    /// (the base document the manifest names).
    File {
        max_bytes: u64,
        scope: Option<Arc<input::Scope>>,
    },
    /// A folder of template overrides, read by `templates::load_dir` (its `*.j2` files)
    /// within `scope`.
    Templates { scope: Arc<input::Scope> },
    /// A file the base document refers to (`$ref: schemas/thing.yaml`), read by
    /// `input::read_named` within `scope` with this size limit (what was left of the
    /// document's budget).
    DocumentFile {
        max_bytes: u64,
        scope: Arc<input::Scope>,
    },
}

impl Input {
    /// A file named on the command line (the manifest), and what reading it gave.
    pub fn file<E: std::fmt::Display>(
        path: PathBuf,
        max_bytes: u64,
        read: &Result<String, E>,
    ) -> Input {
        Input {
            path,
            kind: InputKind::File {
                max_bytes,
                scope: None,
            },
            read: fingerprint(read),
        }
    }

    /// A file the manifest names, read within `scope`, and what reading it gave.
    pub(crate) fn named_file<E: std::fmt::Display>(
        path: PathBuf,
        max_bytes: u64,
        scope: Arc<input::Scope>,
        read: &Result<String, E>,
    ) -> Input {
        Input {
            path,
            kind: InputKind::File {
                max_bytes,
                scope: Some(scope),
            },
            read: fingerprint(read),
        }
    }

    /// A file the base document refers to, and what reading it gave.
    pub(crate) fn document_file<T: std::hash::Hash, E: std::fmt::Display>(
        path: PathBuf,
        max_bytes: u64,
        scope: Arc<input::Scope>,
        read: &Result<T, E>,
    ) -> Input {
        Input {
            path,
            kind: InputKind::DocumentFile { max_bytes, scope },
            read: fingerprint(read),
        }
    }

    /// A templates folder, read within `scope`, and what loading it gave.
    pub fn templates<E: std::fmt::Display>(
        path: PathBuf,
        scope: Arc<input::Scope>,
        read: &Result<templates::Sources, E>,
    ) -> Input {
        Input {
            path,
            kind: InputKind::Templates { scope },
            read: fingerprint(read),
        }
    }

    /// Reads the input again, as the run did: whether it holds something else now.
    pub fn changed(&self) -> bool {
        let now = match &self.kind {
            InputKind::File {
                max_bytes,
                scope: None,
            } => fingerprint(&input::read_manifest(&self.path, *max_bytes)),
            InputKind::File {
                max_bytes,
                scope: Some(scope),
            } => fingerprint(&read_base_file(&self.path, scope, *max_bytes)),
            InputKind::Templates { scope } => fingerprint(&templates::load_dir(&self.path, scope)),
            InputKind::DocumentFile { max_bytes, scope } => {
                fingerprint(&base::bundle::read_file(&self.path, scope, *max_bytes))
            }
        };
        now != self.read
    }

    /// What the input is, for a message ("the manifest").
    pub fn what(&self) -> &'static str {
        match self.kind {
            InputKind::File { scope: None, .. } => "the manifest",
            InputKind::File { scope: Some(_), .. } => "the base OpenAPI document",
            InputKind::Templates { .. } => "a template",
            InputKind::DocumentFile { .. } => "a file of the base OpenAPI document",
        }
    }

    /// The files of this input that a build must never write over (the manifest, the
    /// base document, each template file of a templates folder), as real paths: an
    /// output is compared with them once its own symlinks are resolved.
    pub fn files(&self) -> Vec<PathBuf> {
        let mut files = Vec::new();
        match &self.kind {
            InputKind::File { .. } | InputKind::DocumentFile { .. } => {
                files.extend(self.path.canonicalize().ok());
            }
            InputKind::Templates { .. } => {
                if let Ok(entries) = std::fs::read_dir(&self.path) {
                    files.extend(
                        entries
                            .filter_map(Result::ok)
                            .map(|e| e.path())
                            .filter(|p| p.extension().is_some_and(|e| e == "j2"))
                            .filter_map(|p| p.canonicalize().ok()),
                    );
                }
            }
        }
        files
    }

    /// The folders whose entries hold the input: a file's folder (editors save by
    /// replacing the file, which would end a watch on the file itself); a templates
    /// folder and the folder holding it (which sees it created, removed or replaced).
    pub fn folders(&self) -> Vec<PathBuf> {
        let parent = match self.path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        match self.kind {
            InputKind::File { .. } | InputKind::DocumentFile { .. } => vec![parent],
            InputKind::Templates { .. } => vec![self.path.clone(), parent],
        }
    }
}

/// A hash of what a read gave. Collisions between two versions of a file an author
/// edits are negligible with a 64-bit hash, and the bytes need not be kept. foldhash
/// with a fixed seed rather than `SipHash`: the hash only ever meets another made by the
/// same process (`Input::changed`), it guards no table an input could flood, and `SipHash`
/// over a 9 MB manifest was 22 M instructions of every build.
fn fingerprint<T: std::hash::Hash, E: std::fmt::Display>(read: &Result<T, E>) -> u64 {
    use std::hash::{BuildHasher as _, Hash as _, Hasher as _};
    let mut hasher = foldhash::quality::FixedState::default().build_hasher();
    match read {
        Ok(value) => (0u8, value).hash(&mut hasher),
        Err(e) => (1u8, e.to_string()).hash(&mut hasher),
    }
    hasher.finish()
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
    validated(name, &text, &Options::default())
        .map(|valid| valid.connector)
        .map_err(|invalid| invalid.diagnostics)
}

/// `load` of a manifest file, its base document read beside it as the case tests read
/// it (`../specs/`); for the crate's own tests.
#[cfg(test)]
pub(crate) fn load_file(path: &str) -> Connector {
    let path = std::path::Path::new(path);
    let dir = path.parent().unwrap_or(std::path::Path::new("."));
    let options = Options {
        manifest_dir: Some(dir.to_path_buf()),
        allow_read: vec![dir.join("../specs")],
        ..Options::default()
    };
    let text = Arc::new(std::fs::read_to_string(path).expect("a readable manifest"));
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    match validated(&name, &text, &options) {
        Ok(valid) => valid.connector,
        Err(invalid) => panic!("{}: {:?}", path.display(), invalid.diagnostics),
    }
}

/// Why the base document could not be used: the finding, and the document's name and
/// text when the finding points into it.
type BaseFailure = (Finding, Option<(String, Arc<String>)>);

/// Reads and parses the base document `openapi:` names.
fn load_base(
    path: &serde_saphyr::Spanned<String>,
    options: &Options,
    inputs: &mut Vec<Input>,
) -> Result<base::Base, Box<BaseFailure>> {
    let at = manifest::span(path);
    let unreadable = |message: String| {
        let d = Diagnostic::BaseUnreadable { message, span: at };
        Box::new((Finding::error(d), None))
    };
    if let Some((name, text)) = &options.base_document {
        return base::Base::parse(name, text.clone()).map_err(|d| {
            Box::new((
                Finding::error(*d).in_base(),
                Some((name.clone(), text.clone())),
            ))
        });
    }
    if options.sandbox {
        return Err(unreadable(
            "this run reads no files the manifest names".to_string(),
        ));
    }
    // Read as joined: through a symlinked folder, `..` is the link target's parent,
    // which only the OS knows. The lexically shortened path is only for messages. The
    // value is taken as written (`import` quotes a name with outer spaces): a trimmed
    // name would be another file.
    let file = match &options.manifest_dir {
        Some(dir) => dir.join(&path.value),
        None => PathBuf::from(&path.value),
    };
    let max = match options.max_bytes {
        0 => input::DEFAULT_MAX_BYTES,
        n => n,
    };
    let scope = Arc::new(options.scope());
    let read = read_base_file(&file, &scope, max);
    // Watched whatever the read gave: a missing document that appears is a change.
    inputs.push(Input::named_file(file.clone(), max, scope, &read));
    let shown = input::normalize(&file).display().to_string();
    let text = read.map_err(|e| unreadable(e.to_string()))?;
    let text = Arc::new(text);
    // The files the document refers to may be in its own folder and in those the person
    // allowed; together they get the one size limit.
    let reader = base::bundle::RefReader::new(&file, &options.allow_read, max);
    let loaded = base::Base::load(&shown, text.clone(), &reader)
        .map_err(|d| Box::new((Finding::error(*d).in_base(), Some((shown, text)))))?;
    for read in loaded.reads() {
        inputs.push(Input::document_file(
            read.path.clone(),
            read.max_bytes,
            reader.scope.clone(),
            &read.result,
        ));
    }
    Ok(loaded)
}

/// The base document at `file`, read within `scope` and named in errors as messages
/// name it (the lexically shortened path).
fn read_base_file(
    file: &std::path::Path,
    scope: &input::Scope,
    max: u64,
) -> Result<String, input::InputError> {
    let shown = input::normalize(file).display().to_string();
    input::read_named(file, &shown, scope, max, input::What::Openapi)
}

/// The file name outputs mention: never the directory, which depends on where it ran.
fn file_name(name: &str) -> String {
    std::path::Path::new(name)
        .file_name()
        .map_or_else(|| name.to_string(), |n| n.to_string_lossy().into_owned())
}
