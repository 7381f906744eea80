//! `connectorgen import`: a base-mode manifest from a provider's OpenAPI document.
//!
//! Takes: the document (read with the manifest's size limit and parsed by `Base::load`,
//! so JSON or YAML, OpenAPI 3.0, 3.1 or 3.2, the files its `$ref`s name bundled in, with the
//! same budgets and diagnostics as `build`), where the manifest goes, and the URLs the
//! person gave on the command line.
//! Returns: the manifest text (`manifest`) — every operation in document order, named by
//! operationId or route, with an `id:` wherever the operationId cannot be the agent's
//! id, suggestions as comments, and each operation `build` refuses as the document gives
//! it written commented out with `build`'s reason (`buildable.rs` asks `build`'s own
//! analysis) — or writes it (`run`).
//! Must never: apply a suggestion (spends, async and what to ask first are a person's
//! decision), let text from the document break or add to the YAML (values are checked
//! plain scalars or escaped double-quoted ones; comments hold no line break), write a
//! manifest that `build` refuses, overwrite a file without `--force`, replace or follow
//! a symlink, or overwrite the document itself.
//!
//! The suggestions read evidence only (`evidence.rs`): a 202 response,
//! `x-ms-long-running-operation`, a `status` enum with both in-flight and final job
//! states, the GET of what it makes to poll (`poll.rs`); an `Idempotency-Key` header; cost words
//! its own text affirms, or the payout or message it sends (`cost.rs`). `yaml.rs` writes the scalars and comments, `files.rs`
//! decides where the manifest may go and how it names the document from there.
//!
//! What it does not check: the naming rules of targets other than the default
//! (`muse`): an operationId such as `jobs.create` is kept as the id, which the `openai`
//! target refuses with a hint to set `id:`.

mod buildable;
mod cost;
mod evidence;
mod files;
mod poll;
mod servers;
mod yaml;

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::Options;
use crate::base::{Base, BaseOperation};
use crate::diagnostics::{Diagnostic, Diagnostics, Finding};
use crate::model::{Method, Names as _};
use crate::validate::{check_url, first_server, is_identifier};
use evidence::suggest;
use poll::PollTargets;
use yaml::{comment, shorten};
pub(crate) use yaml::{scalar, yaml_quote};

/// The URLs the person gave on the command line.
#[derive(Debug, Clone, Default)]
pub struct Flags {
    /// `--dashboard-url`: wins over what the document says.
    pub dashboard_url: Option<String>,
    /// `--public-url`: needed only when the document's first server is not usable.
    pub public_url: Option<String>,
}

/// A written (or writable) manifest and what it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Imported {
    pub text: String,
    pub listed: usize,
    pub skipped: usize,
    pub async_candidates: usize,
    pub paid_candidates: usize,
    pub deletes: usize,
    /// The document's folder, as given, when `openapi:` leads out of the manifest's
    /// folder: `build` reads it only when that folder is allowed (`--allow-read`).
    pub allow_read: Option<PathBuf>,
}

/// Why `import` wrote nothing.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The document could not be read (exit 2, like an unreadable manifest).
    #[error(transparent)]
    Unreadable(#[from] crate::input::InputError),
    /// The document is not OpenAPI 3.0/3.1/3.2 or does not parse (exit 1): the diagnostic
    /// `build` gives, pointing into the document.
    #[error("{}", crate::report::human_findings(.0, false))]
    Invalid(Diagnostics),
    /// Nothing in the document can be exposed (exit 1).
    #[error("{0} has no operation an agent can call (GET, POST, PUT, PATCH or DELETE)")]
    NoOperations(String),
    /// A URL base mode needs is not in the document, or a flag's URL is unusable (exit 2).
    #[error("{0}")]
    NeedsFlag(String),
    #[error("{} already exists; use --force to overwrite it", .0.display())]
    Exists(PathBuf),
    #[error(
        "{} is a symbolic link; import neither replaces a link nor writes through it: give the path of a regular file",
        .0.display()
    )]
    Symlink(PathBuf),
    #[error("{} is not a regular file; give the path of the manifest to write", .0.display())]
    NotAFile(PathBuf),
    #[error("{} is the OpenAPI document itself; write the manifest somewhere else", .0.display())]
    IsTheSpec(PathBuf),
    #[error("{} is not UTF-8; a manifest cannot name it", .0.display())]
    NotUtf8Path(PathBuf),
    /// A template failed while import checked what it writes (a bug, not the document's
    /// problem).
    #[error("checking the manifest failed: {0}")]
    Render(String),
    #[error("could not write {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl ImportError {
    /// 1: the document has a problem; 2: could not run (main.rs's convention).
    pub fn exit_code(&self) -> u8 {
        match self {
            ImportError::Invalid(_) | ImportError::NoOperations(_) => 1,
            _ => 2,
        }
    }
}

/// Reads `spec`, writes the manifest to `out` (atomically) and says what it holds.
pub fn run(
    spec: &Path,
    out: &Path,
    force: bool,
    max_bytes: u64,
    flags: &Flags,
) -> Result<Imported, ImportError> {
    files::refuse_to_replace(out, spec, force)?;
    let name = spec.display().to_string();
    let text = crate::input::read_file(spec, &name, max_bytes, crate::input::What::Openapi)?;
    let text = Arc::new(text);
    // The files the document refers to (its operations may be in them) are read from its
    // own folder, as `build` reads them.
    let reader = crate::base::bundle::RefReader::new(spec, &[], max_bytes);
    let base = Base::load(&name, text.clone(), &reader).map_err(|d| {
        ImportError::Invalid(Diagnostics::new(&name, text, vec![Finding::error(*d)]))
    })?;
    let base = Arc::new(base);
    // `-o new/connector.yaml`: the folder is made once the document has been read, so a
    // bad document leaves nothing behind (the path from it to the document needs it).
    files::create_parent(out)?;
    let openapi = files::relative_path(spec, out)?;
    let mut imported = manifest(&base, &openapi, flags)?;
    files::write(out, spec, force, &imported.text)?;
    if openapi.starts_with("../") || Path::new(&openapi).is_absolute() {
        imported.allow_read = Some(match spec.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        });
    }
    Ok(imported)
}

/// The manifest for `base`, whose `openapi:` says `openapi` (the document's path from
/// the manifest's folder).
pub(crate) fn manifest(
    base: &Arc<Base>,
    openapi: &str,
    flags: &Flags,
) -> Result<Imported, ImportError> {
    let mut rows = rows(base);
    let listed: Vec<&Entry> = rows
        .iter()
        .filter_map(|r| match r {
            Row::Listed(entry) => Some(entry),
            Row::Skipped { .. } => None,
        })
        .collect();
    if listed.is_empty() {
        return Err(ImportError::NoOperations(base.name.clone()));
    }
    let mut head = format!("version: 1\nopenapi: {}\nservice:\n", scalar(openapi));
    for line in service_lines(base, flags)? {
        let _ = writeln!(head, "  {line}");
    }
    head.push_str("operations:\n");
    // What `build` refuses is written commented out, so the manifest always builds.
    let mut refused = buildable::refusals(base, &head, &listed)?.into_iter();
    for row in &mut rows {
        if let Row::Listed(entry) = row {
            entry.refused = refused.next().flatten();
        }
    }
    let listed = rows
        .iter()
        .filter(|r| matches!(r, Row::Listed(e) if e.refused.is_none()))
        .count();
    let mut out = String::with_capacity(80 * rows.len() + 1024);
    let (mut async_candidates, mut paid_candidates, mut deletes) = (0, 0, 0);
    out.push_str(HEADER);
    out.push_str(&head);
    let polls = PollTargets::new(base, &rows);
    let mut suggested: Vec<Option<evidence::Found>> = rows
        .iter()
        .map(|row| match row {
            Row::Listed(entry) if entry.refused.is_none() => Some(suggest(base, entry, &polls)),
            _ => None,
        })
        .collect();
    without_job_id(base, &head, &rows, &mut suggested)?;
    for (row, found) in rows.iter().zip(suggested) {
        match row {
            Row::Skipped { route, why } => {
                let _ = writeln!(out, "  # skipped {}: {why}", comment(route));
            }
            Row::Listed(
                entry @ Entry {
                    refused: Some(why), ..
                },
            ) => {
                let _ = writeln!(
                    out,
                    "  # left out: `build` refuses {} as the document gives it ({why})",
                    comment(&entry.op.route())
                );
                write_entry(&mut out, entry, "  # ");
            }
            Row::Listed(entry) => {
                write_entry(&mut out, entry, "  ");
                let found = found.unwrap_or_default();
                async_candidates += usize::from(found.is_async);
                paid_candidates += usize::from(found.is_paid);
                deletes += usize::from(found.is_delete);
                for line in found.lines {
                    let _ = writeln!(out, "    # {line}");
                }
            }
        }
    }
    Ok(Imported {
        text: out,
        listed,
        skipped: rows.len() - listed,
        async_candidates,
        paid_candidates,
        deletes,
        allow_read: None,
    })
}

/// The `async` suggestions `build` would refuse once taken because the answer names no
/// id the poll can take (`no-job-id`), found by `build`'s own analysis of the manifest
/// with every complete `async` suggestion taken: each gets `idField: …`, a blank to
/// fill, and says why, so that a suggestion taken as written never makes a manifest
/// that does not build.
fn without_job_id(
    base: &Arc<Base>,
    head: &str,
    rows: &[Row<'_>],
    suggested: &mut [Option<evidence::Found>],
) -> Result<(), ImportError> {
    const TAKEN: &str = "async: { pollWith: ";
    let mut text = String::from(head);
    let mut any = false;
    for (row, found) in rows.iter().zip(suggested.iter()) {
        let (Row::Listed(entry), Some(found)) = (row, found) else {
            continue;
        };
        write_entry(&mut text, entry, "  ");
        let line = found
            .lines
            .iter()
            .find(|l| l.starts_with(TAKEN) && !l.starts_with("async: { pollWith: … }"));
        if let Some((taken, _)) = line.and_then(|l| l.split_once("?  # ")) {
            let _ = writeln!(text, "    {taken}");
            any = true;
        }
    }
    if !any {
        return Ok(());
    }
    let options = Options {
        parsed_base: Some(base.clone()),
        ..Default::default()
    };
    let analysis = crate::analyze_with("connector.yaml", Arc::new(text), &options)
        .map_err(|e| ImportError::Render(e.to_string()))?;
    let without: Vec<&str> = analysis
        .diagnostics
        .items()
        .iter()
        .filter_map(|f| match &f.diagnostic {
            Diagnostic::NoJobId { id, .. } => Some(id.as_str()),
            _ => None,
        })
        .collect();
    for (row, found) in rows.iter().zip(suggested.iter_mut()) {
        let (Row::Listed(entry), Some(found)) = (row, found) else {
            continue;
        };
        if !without.contains(&entry.agent_id()) {
            continue;
        }
        for line in &mut found.lines {
            if let Some((taken, evidence)) = line.split_once(" }?  # ")
                && taken.starts_with(TAKEN)
            {
                *line = format!(
                    "{taken}, idField: … }}?  # {evidence}; its answer names no id the poll takes: name the property that holds it"
                );
            }
        }
    }
    Ok(())
}

/// The `- operation:` line of `entry` and its `id:`, each line after `indent`
/// (`"  # "` to write it commented out).
fn write_entry(out: &mut String, entry: &Entry, indent: &str) {
    let _ = writeln!(out, "{indent}- operation: {}", scalar(&entry.name));
    if let Some((id, why)) = &entry.id {
        let _ = writeln!(out, "{indent}  id: {id}  # {why}");
    }
}

const HEADER: &str = "\
# yaml-language-server: $schema=connector.schema.json
# Written by `connectorgen import`: every operation of the OpenAPI document, in its
# order. Remove the ones the agent should not call.
# A commented-out key whose value ends in `?` is a suggestion read from the document,
# followed by its evidence: to take it, uncomment it and delete the `?`. None is
# applied for you: whether a call costs the person money or credits (`spends`), and
# what to ask them first, is yours to decide.
";

/// One base operation in the manifest: listed, or skipped (by its route) with the reason.
enum Row<'a> {
    Listed(Entry<'a>),
    Skipped { route: String, why: String },
}

struct Entry<'a> {
    op: &'a BaseOperation,
    object: &'a Map<String, Value>,
    /// What `operation:` says: the operationId, or the route when that does not name it.
    name: String,
    /// An `id:` to write, and why the operationId could not be the id.
    id: Option<(String, String)>,
    /// Why `build` refuses it: then it is written commented out, with this reason.
    refused: Option<String>,
}

impl Entry<'_> {
    /// The id the agent calls it by (what `pollWith` names).
    fn agent_id(&self) -> &str {
        self.id.as_ref().map_or(&self.name, |(id, _)| id)
    }
}

/// The longest id written: OpenAI function names stop at 64, so every target takes it.
const MAX_ID: usize = 64;

/// Every base operation, named the way `Base::find` will find it again, with an `id:`
/// wherever the operationId is missing, is not an agent id, or is taken.
fn rows(base: &Base) -> Vec<Row<'_>> {
    let mut used: HashSet<String> = HashSet::new();
    let mut rows = Vec::with_capacity(base.operations.len());
    for op in &base.operations {
        if Method::named(op.method).is_none() {
            let why = format!(
                "agents call GET, POST, PUT, PATCH and DELETE, not {}",
                op.method.to_ascii_uppercase()
            );
            rows.push(Row::Skipped {
                route: op.route(),
                why,
            });
            continue;
        }
        if let Some(problem) = op.path_problem() {
            let why =
                format!("no URL path can be this one ({problem}): fix the document to expose it");
            rows.push(Row::Skipped {
                route: op.route(),
                why,
            });
            continue;
        }
        let Some(object) = base.get(&op.pointer()).and_then(Value::as_object) else {
            let why = "the operation is not a mapping in the document".to_string();
            rows.push(Row::Skipped {
                route: op.route(),
                why,
            });
            continue;
        };
        // `Base::find` is what `build` will use, so it decides; the first operation
        // with a repeated operationId keeps it, the others are named by route.
        let names_it = |name: &str| {
            base.find(name)
                .is_some_and(|o| o.method == op.method && o.path == op.path)
        };
        let by_id = op.operation_id.as_deref().filter(|id| names_it(id));
        let name = match by_id {
            Some(id) => id.to_string(),
            None if names_it(&op.route()) => op.route(),
            None => {
                // Paths with whitespace are skipped above: only an operationId spelt
                // like this route can take the name.
                let why =
                    "its route is another operation's operationId, so `operation:` cannot name it";
                rows.push(Row::Skipped {
                    route: op.route(),
                    why: why.to_string(),
                });
                continue;
            }
        };
        let keeps_id = by_id.is_some_and(|id| is_identifier(id) && id.len() <= MAX_ID);
        if keeps_id {
            used.insert(name.clone());
        }
        // Filled in below, once every kept operationId is known.
        let id = (!keeps_id).then(Default::default);
        rows.push(Row::Listed(Entry {
            op,
            object,
            name,
            id,
            refused: None,
        }));
    }
    // OpenAPI 3.2's own operations are not in `operations` (no 3.1 output can hold them):
    // they are skipped in the listing, with the reason, and counted as skipped.
    // Each goes after the rows of its path, before those of later paths: the listing
    // keeps the document's order of paths.
    let order: HashMap<&str, usize> = base
        .root
        .get("paths")
        .and_then(Value::as_object)
        .map(|paths| {
            paths
                .keys()
                .enumerate()
                .map(|(i, k)| (k.as_str(), i))
                .collect()
        })
        .unwrap_or_default();
    for (route, _, _) in &base.only_in_32 {
        let path = route.split_once(' ').map_or("", |(_, path)| path);
        let why = if route.starts_with("QUERY ") {
            "it uses OpenAPI 3.2's `query` method, which OpenAPI 3.1 (every output) cannot express"
        } else {
            "it is an OpenAPI 3.2 `additionalOperations` method: agents call GET, POST, PUT, PATCH and DELETE"
        };
        let rank = |p: &str| order.get(p).copied().unwrap_or(usize::MAX);
        let at = rows
            .iter()
            .position(|row| rank(row_path(row)) > rank(path))
            .unwrap_or(rows.len());
        rows.insert(
            at,
            Row::Skipped {
                route: route.clone(),
                why: why.to_string(),
            },
        );
    }
    // Generated ids come second, so that they never take an operationId's name.
    for row in &mut rows {
        let Row::Listed(entry) = row else { continue };
        let Some(slot) = entry.id.as_mut() else {
            continue;
        };
        let (id, why) = match &entry.op.operation_id {
            None => (
                route_id(entry.op),
                "the document gives no operationId".to_string(),
            ),
            Some(id) if is_identifier(id) && id.len() <= MAX_ID => (
                route_id(entry.op),
                format!(
                    "the operationId {} is also an earlier operation's",
                    yaml_quote(&shorten(id))
                ),
            ),
            // The operationId's own words keep what the provider called it (and its verb),
            // which the route alone loses: `emails/send` is `sendEmails`, not `postEmails`.
            Some(id) => {
                let why = if is_identifier(id) {
                    format!(
                        "the operationId {} is longer than {MAX_ID} characters, where OpenAI's function names stop",
                        yaml_quote(&shorten(id))
                    )
                } else {
                    format!(
                        "the operationId {} is not an agent id (1 to 128 letters, digits, `_`, `.` or `-`)",
                        yaml_quote(&shorten(id))
                    )
                };
                let words = id_from_words(id).filter(|words| {
                    // `GET /v1/hidden` on a POST must not read as a GET.
                    let method = ["get", "post", "put", "patch", "delete"]
                        .into_iter()
                        .find(|m| words.starts_with(m));
                    method.is_none_or(|m| m == entry.op.method)
                });
                (words.unwrap_or_else(|| route_id(entry.op)), why)
            }
        };
        *slot = (unique(id, &mut used), why);
    }
    rows
}

/// Verbs an operationId may end with (`emails/send`, `payments.capture`): put first, as
/// agent ids read (`sendEmails`).
const TRAILING_VERBS: &[&str] = &[
    "add", "cancel", "capture", "create", "delete", "get", "list", "refund", "remove", "retrieve",
    "search", "send", "start", "stop", "submit", "update", "upload", "verify", "void",
];

/// An agent id from the words of an operationId that cannot be one as written: its ASCII
/// words in camel case, a trailing verb put first, cut after the last whole word that
/// fits in `MAX_ID`. `None` (the route names it instead) when the operationId is not
/// plain words — anything but ASCII letters, digits, spaces and `/ . _ -` —, when fewer
/// than three characters are left, or when the id would start with a digit.
fn id_from_words(operation_id: &str) -> Option<String> {
    if !operation_id
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, ' ' | '/' | '.' | '_' | '-'))
    {
        return None;
    }
    let mut words: Vec<String> = Vec::new();
    for part in operation_id.split(|c: char| !c.is_ascii_alphanumeric()) {
        let mut word = String::new();
        for c in part.chars() {
            if c.is_ascii_uppercase() && word.chars().last().is_some_and(|p| p.is_ascii_lowercase())
            {
                words.push(std::mem::take(&mut word).to_ascii_lowercase());
            }
            word.push(c);
        }
        if !word.is_empty() {
            words.push(word.to_ascii_lowercase());
        }
    }
    if words.len() > 1
        && TRAILING_VERBS.contains(&words[words.len() - 1].as_str())
        && !TRAILING_VERBS.contains(&words[0].as_str())
    {
        words.rotate_right(1);
    }
    let mut id = String::new();
    for (i, word) in words.iter().enumerate() {
        if id.len() + word.len() > MAX_ID {
            break;
        }
        if i == 0 {
            id.push_str(word);
        } else {
            id.push_str(&word[..1].to_ascii_uppercase());
            id.push_str(&word[1..]);
        }
    }
    (id.len() >= 3 && !id.starts_with(|c: char| c.is_ascii_digit())).then_some(id)
}

/// The path of a row's operation.
fn row_path<'r>(row: &'r Row<'_>) -> &'r str {
    match row {
        Row::Listed(entry) => &entry.op.path,
        Row::Skipped { route, .. } => route.split_once(' ').map_or("", |(_, path)| path),
    }
}

/// `post` + `/v1/jobs/{job_id}/cancel` → `postV1JobsByJobIdCancel`.
fn route_id(op: &BaseOperation) -> String {
    let mut id = op.method.to_string();
    for segment in op.path.split('/') {
        let text = match segment.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
            Some(param) => {
                id.push_str("By");
                param
            }
            None => segment,
        };
        for word in text
            .split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|w| !w.is_empty())
        {
            id.push_str(&word[..1].to_ascii_uppercase());
            id.push_str(&word[1..]);
        }
    }
    if id.len() == op.method.len() {
        id.push_str("Root");
    }
    // ASCII only, so any byte index is a character boundary.
    id.truncate(MAX_ID);
    id
}

/// `id`, or `id2`, `id3`, … (within `MAX_ID`): the first not in `used`, which it joins.
fn unique(id: String, used: &mut HashSet<String>) -> String {
    if used.insert(id.clone()) {
        return id;
    }
    for n in 2usize.. {
        let suffix = n.to_string();
        let candidate = format!("{}{suffix}", &id[..id.len().min(MAX_ID - suffix.len())]);
        if used.insert(candidate.clone()) {
            return candidate;
        }
    }
    unreachable!("some suffix is free")
}

/// The `service:` lines base mode needs beyond what the document gives: always
/// `dashboardUrl`, and whatever `info` or `servers` lack.
fn service_lines(base: &Base, flags: &Flags) -> Result<Vec<String>, ImportError> {
    let mut lines = Vec::new();
    let mut needed = Vec::new();
    // As base mode reads `info`: trimmed, non-empty text (or a number).
    let info = |key: &str| {
        base.root
            .get("info")
            .and_then(|i| i.get(key))
            .and_then(|v| match v {
                Value::String(s) => Some(s.trim().to_string()),
                Value::Number(n) => Some(n.to_string()),
                _ => None,
            })
            .filter(|t| !t.is_empty())
    };
    let name = if let Some(title) = info("title") {
        title
    } else {
        let stem = Path::new(&base.name)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .filter(|s| !s.trim().is_empty())
            .unwrap_or_else(|| "API".to_string());
        lines.push(format!(
            "name: {}  # check: the document's info has no title",
            scalar(&stem)
        ));
        lines.push(format!("title: {}", scalar(&stem)));
        stem
    };
    if info("version").is_none() {
        lines.push("version: \"1\"  # check: the document's info has no version".to_string());
    }
    if info("description").is_none() {
        lines.push(format!(
            "description: {}  # check: the document's info has no description: say who this connector is for and what it does",
            scalar(&format!("{name}, for an AI assistant acting for the person."))
        ));
    }
    match (&flags.public_url, first_server(base)) {
        (Some(url), _) => match check_url(url.trim()) {
            Ok(url) => lines.push(format!("publicUrl: {}", scalar(&url))),
            Err(reason) => needed.push(format!(
                "--public-url {} is not usable: {reason}",
                comment(url)
            )),
        },
        (None, Ok(_)) => match servers::default_server(base) {
            servers::Choice::First => {}
            servers::Choice::Line(line) => lines.push(line),
            servers::Choice::NeedsFlag(why) => needed.push(why),
        },
        (None, Err(reason)) => needed.push(format!(
            "{reason}; pass --public-url https://… (the API's base URL)"
        )),
    }
    let derived = [
        ("info.contact.url", base.root.pointer("/info/contact/url")),
        ("externalDocs.url", base.root.pointer("/externalDocs/url")),
    ]
    .into_iter()
    .find_map(|(from, url)| {
        let url = check_url(url?.as_str()?.trim()).ok()?;
        Some((url, from))
    });
    match (&flags.dashboard_url, derived) {
        (Some(url), _) => match check_url(url.trim()) {
            Ok(url) => lines.push(format!("dashboardUrl: {}", scalar(&url))),
            Err(reason) => needed.push(format!("--dashboard-url {} is not usable: {reason}", comment(url))),
        },
        (None, Some((url, from))) => lines.push(format!(
            "dashboardUrl: {}  # check: taken from {from}; it should be the page where the person creates API keys",
            scalar(&url)
        )),
        (None, None) => needed.push(
            "the document has no usable info.contact.url or externalDocs.url to take the dashboard URL from; pass --dashboard-url https://… (the page where the person creates API keys)".to_string(),
        ),
    }
    if needed.is_empty() {
        Ok(lines)
    } else {
        Err(ImportError::NeedsFlag(needed.join("; ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(method: &'static str, path: &str) -> BaseOperation {
        BaseOperation {
            path: path.to_string(),
            method,
            operation_id: None,
        }
    }

    #[test]
    fn ids_from_routes_are_camel_case_unique_and_short() {
        assert_eq!(
            route_id(&op("post", "/v1/jobs/{job_id}/cancel")),
            "postV1JobsByJobIdCancel"
        );
        assert_eq!(route_id(&op("get", "/")), "getRoot");
        assert_eq!(
            route_id(&op("get", "/word-search/ü/{x.y}")),
            "getWordSearchByXY"
        );
        let long = route_id(&op("get", &"/segment".repeat(20)));
        assert_eq!(long.len(), MAX_ID);
        let mut used = HashSet::new();
        assert_eq!(unique(long.clone(), &mut used), long);
        let second = unique(long.clone(), &mut used);
        assert_eq!(second.len(), MAX_ID);
        assert!(second.ends_with('2'));
        assert_eq!(unique("a".into(), &mut used), "a");
        assert_eq!(unique("a".into(), &mut used), "a2");
        assert!(is_identifier(&second));
    }

    #[test]
    fn ids_from_operation_ids_keep_their_words_and_verb() {
        assert_eq!(id_from_words("emails/send").as_deref(), Some("sendEmails"));
        assert_eq!(
            id_from_words("payments.capture").as_deref(),
            Some("capturePayments")
        );
        assert_eq!(id_from_words("create: item\n# spends"), None);
        assert_eq!(id_from_words("a b"), None);
        assert_eq!(
            id_from_words("Create a Payment Link").as_deref(),
            Some("createAPaymentLink")
        );
        assert_eq!(
            id_from_words("getHTTPStatus").as_deref(),
            Some("getHttpstatus")
        );
        assert_eq!(id_from_words("2fa/verify").as_deref(), Some("verify2fa"));
        assert_eq!(id_from_words("ü/ß"), None);
        assert_eq!(id_from_words("a\u{202e}b"), None);
        let long = "GetTheVeryLongNameOfAnOperationThatSomeGeneratorWroteForThisRouteAndMore";
        let id = id_from_words(long).unwrap();
        assert!(id.len() <= MAX_ID && is_identifier(&id), "{id}");
        assert!(
            id.starts_with("getTheVeryLong") && id.ends_with("This"),
            "{id}"
        );
    }
}
