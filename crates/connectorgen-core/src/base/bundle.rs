//! Multi-file base documents: the files a base document's `$ref`s name, bundled into
//! the one document the rest of connectorgen reads.
//!
//! Takes: the root document's parsed value and, when the run may read files, a
//! `RefReader` (the root's path, the folders files may be in, the byte budget).
//! Returns: a `Bundled` document whose every followed reference is local: a component
//! (schema, response, parameter, request body, header, example, link, security scheme,
//! callback) is copied into `components` under a name of its own (`docs/multifile.md`
//! gives the naming rule); what has no component section (a path item, an operation, a
//! media type, anything in an extension) is copied into place. With it: where each
//! copied node came from (file and pointer, for spans), every file read (for `--watch`),
//! and why each reference that was not followed was not (a `RefProblem`, reported only
//! when an exposed operation reaches it).
//! Must never: fetch a URL, read a file outside the reader's scope once symlinks are
//! resolved (`input::read_named`), read more than `MAX_FILES` files, follow a chain of
//! files deeper than `MAX_DEPTH`, read more bytes in all than the reader's budget, or
//! loop on a cycle: a component is named before it is copied, so a cycle through
//! components ends; a cycle through nodes copied into place is a `RefProblem::Cycle`.
//! Names depend only on the document: the same files give the same bytes.

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value};

use super::places::Kind as Object;
use super::{Syntax, parse_json, parse_yaml};
use crate::diagnostics::{Diagnostic, Span};
use crate::input::{self, InputError, Scope, What};
use crate::model::{escape, unescape};

/// Files a document may have besides its root: the largest published multi-file
/// document we know (a cloud provider's) has about 2,900.
pub(crate) const MAX_FILES: usize = 10_000;

/// Files in one chain of references (the root refers to a file, which refers to a
/// file, …): real documents nest a handful deep.
pub(crate) const MAX_DEPTH: usize = 32;

/// Nodes copied into place (path items, operations, extensions) at most, in all: a file
/// copied into two places that copies another into two places, and so on, doubles at
/// every level.
pub(crate) const MAX_COPIED_NODES: usize = 4_000_000;

/// What copying into place may cost in all, charged before each copy (`copy_cost`):
/// `COPY_FACTOR` times the bytes of the files read so far, plus `COPY_FLOOR`. A document
/// that copies each file into place once costs about its own size; one whose files each
/// copy the next into two places (31 files of 4 KB, 2^31 copies) would have taken
/// gigabytes before `MAX_COPIED_NODES`, counted after each copy, stopped it (issue 30).
pub(crate) const COPY_FACTOR: u64 = 8;

/// See `COPY_FACTOR`.
pub(crate) const COPY_FLOOR: u64 = 4 << 20;

/// What one node costs in `copy_cost`, besides the bytes of its key and string: about
/// what a `serde_json` value and its map slot take.
const NODE_COST: u64 = 32;

/// How deep a node copied into place may sit in the bundled document: every later stage
/// walks it recursively.
const MAX_NESTING: usize = 256;

/// What copying `value` costs against `COPY_FACTOR`'s budget: `NODE_COST` per node plus
/// the bytes of its keys and strings. Walked with a stack: a copied node may sit
/// `MAX_NESTING` deep and its own nesting comes from the file.
fn copy_cost(value: &Value) -> u64 {
    let mut cost = 0u64;
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        cost = cost.saturating_add(NODE_COST);
        match v {
            Value::String(text) => cost = cost.saturating_add(text.len() as u64),
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => {
                for (key, child) in map {
                    cost = cost.saturating_add(key.len() as u64);
                    stack.push(child);
                }
            }
            _ => {}
        }
    }
    cost
}

/// How the files a document refers to may be read.
#[derive(Debug, Clone)]
pub struct RefReader {
    /// The root document's path, as joined (relative references start from its folder).
    pub root: PathBuf,
    /// The folders the files may be in: the root's folder and those `--allow-read`
    /// allows.
    pub scope: Arc<Scope>,
    /// Bytes of every file of the document together, the root included.
    pub max_bytes: u64,
    /// Files besides the root at most (`MAX_FILES`; lower in tests).
    pub max_files: usize,
    /// Files in one chain of references at most (`MAX_DEPTH`; lower in tests).
    pub max_depth: usize,
}

impl RefReader {
    /// A reader for the document at `root`: its own folder and `allowed` are the scope.
    pub fn new(root: &Path, allowed: &[PathBuf], max_bytes: u64) -> RefReader {
        let folder = match root.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        RefReader {
            root: root.to_path_buf(),
            scope: Arc::new(
                Scope::new(std::iter::once(folder).chain(allowed.iter().cloned()))
                    .calling_first("the document's folder"),
            ),
            max_bytes,
            max_files: MAX_FILES,
            max_depth: MAX_DEPTH,
        }
    }
}

/// One file of a document, as findings show it.
#[derive(Debug)]
pub(crate) struct SourceFile {
    pub name: String,
    pub text: Arc<String>,
    /// Where the file starts in the document's span space: spans into file `k` are
    /// offset by the lengths of the files before it (plus one each), so one `Span`
    /// says which file it points into (`Diagnostics::with_base_files`).
    pub start: usize,
    /// Where the nodes asked for are in `text`, found on first use.
    pub(super) spans: super::locate::Spans,
}

impl SourceFile {
    pub(super) fn new(name: &str, text: Arc<String>, start: usize) -> SourceFile {
        SourceFile {
            name: name.to_string(),
            text,
            start,
            spans: super::locate::Spans::default(),
        }
    }
}

/// A file the bundler tried to read, with what the read gave: what `--watch` watches.
#[derive(Debug, Clone)]
pub struct Read {
    pub path: PathBuf,
    /// The limit it was read with (what was left of the budget).
    pub max_bytes: u64,
    pub result: Result<Arc<String>, String>,
}

/// Why a reference was not followed.
#[derive(Debug, Clone)]
pub(crate) enum RefProblem {
    /// The run reads no files (fuzzing, `Base::parse`).
    NotRead,
    Url,
    Outside(String),
    Unreadable(String),
    /// The file does not parse: the parser's message and a span into the file.
    Syntax(String, Span),
    /// The file has nothing at the pointer.
    Pointer {
        file: String,
        pointer: String,
    },
    Cycle,
    Limit(String),
}

impl RefProblem {
    /// The finding for `reference`, at `span`.
    pub(crate) fn diagnostic(&self, reference: &str, span: Span) -> Diagnostic {
        let reference = reference.to_string();
        match self.clone() {
            RefProblem::NotRead => Diagnostic::BaseRefUnreadable {
                reference,
                message: "this run reads no file besides the document's own text".to_string(),
                span,
            },
            RefProblem::Url => Diagnostic::BaseRefUrl { reference, span },
            RefProblem::Outside(message) => Diagnostic::BaseRefOutside {
                reference,
                message,
                span,
            },
            RefProblem::Unreadable(message) => Diagnostic::BaseRefUnreadable {
                reference,
                message,
                span,
            },
            RefProblem::Syntax(message, span) => Diagnostic::BaseSyntax { message, span },
            RefProblem::Pointer { file, pointer } => Diagnostic::BaseRefPointer {
                reference,
                file,
                pointer,
                span,
            },
            RefProblem::Cycle => Diagnostic::BaseRefCycle { reference, span },
            RefProblem::Limit(message) => Diagnostic::BaseRefLimit {
                reference,
                message,
                span,
            },
        }
    }
}

/// The document with its files bundled in.
#[derive(Debug)]
pub(crate) struct Bundled {
    pub root: Value,
    /// The root first, then every other file that was read, in the order first met.
    pub files: Vec<SourceFile>,
    /// Bundled pointer → (file, pointer in that file) for every node copied from a file.
    pub mounts: HashMap<String, (usize, String)>,
    /// Pointer of a `$ref` value (or of a discriminator mapping's value) left as it was
    /// → why.
    pub problems: HashMap<String, RefProblem>,
    pub reads: Vec<Read>,
}

/// Bundles the files `root` (the text of `file`) refers to. Without `reader`, no file is
/// read and every reference to another file stays as it is (`RefProblem::NotRead`).
pub(crate) fn bundle(mut root: Value, file: SourceFile, reader: Option<&RefReader>) -> Bundled {
    let mut b = Bundler::new(file, reader);
    if !has_file_refs(&root) {
        return b.finish(root);
    }
    if let Some(components) = root.get("components").and_then(Value::as_object) {
        for (section, entries) in components {
            let names = entries
                .as_object()
                .into_iter()
                .flatten()
                .map(|(k, _)| k.clone());
            b.taken.entry(section.clone()).or_default().extend(names);
        }
    }
    b.adopt_root_components(&root);
    let mut out = String::new();
    b.walk(&mut root, 0, Kind::Document, &mut out, 0);
    while let Some(job) = b.queue.pop_front() {
        let Some(mut value) = b.value_at(job.file, &job.pointer).cloned() else {
            continue;
        };
        let mut out = format!("/components/{}/{}", job.section, escape(&job.name));
        b.mounts
            .insert(out.clone(), (job.file, job.pointer.clone()));
        b.walk(&mut value, job.file, job.kind, &mut out, job.depth);
        b.added.push((job.section, job.name, value));
    }
    let added = std::mem::take(&mut b.added);
    if !added.is_empty()
        && let Value::Object(top) = &mut root
    {
        let components = top
            .entry("components")
            .or_insert_with(|| Value::Object(Map::new()));
        if !components.is_object() {
            *components = Value::Object(Map::new());
        }
        if let Value::Object(sections) = components {
            for (section, name, value) in added {
                let entries = sections
                    .entry(section)
                    .or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(entries) = entries {
                    entries.insert(name, value);
                }
            }
        }
    }
    b.finish(root)
}

/// Whether any `$ref` (or discriminator mapping value) in `value` names another file:
/// a one-file document is left untouched, without a copy.
fn has_file_refs(value: &Value) -> bool {
    match value {
        Value::Object(map) => map.iter().any(|(k, v)| match (k.as_str(), v) {
            ("$ref", Value::String(r)) => !r.starts_with('#'),
            // A discriminator's mapping may name a file (`dog: Dog.yaml`).
            ("mapping", Value::Object(m)) if map.contains_key("propertyName") => {
                m.values().any(|t| {
                    t.as_str()
                        .is_some_and(|t| !t.starts_with('#') && t.contains(['/', '.']))
                }) || has_file_refs(v)
            }
            _ => has_file_refs(v),
        }),
        Value::Array(list) => list.iter().any(has_file_refs),
        _ => false,
    }
}

/// A component to copy: the target, and the name it was given.
struct Job {
    file: usize,
    pointer: String,
    kind: Kind,
    section: &'static str,
    name: String,
    depth: usize,
}

struct Bundler<'a> {
    reader: Option<&'a RefReader>,
    files: Vec<SourceFile>,
    /// Each file's value (`None` for the root, which is walked in place, and for a file
    /// that did not parse), its folder as joined, and why it cannot be used.
    values: Vec<Option<Value>>,
    folders: Vec<PathBuf>,
    broken: Vec<Option<RefProblem>>,
    by_real: HashMap<PathBuf, usize>,
    by_joined: HashMap<PathBuf, usize>,
    failed: HashMap<PathBuf, RefProblem>,
    bytes: u64,
    taken: HashMap<String, HashSet<String>>,
    assigned: HashMap<(usize, String, &'static str), String>,
    queue: VecDeque<Job>,
    added: Vec<(&'static str, String, Value)>,
    copying: Vec<(usize, String)>,
    copied_nodes: usize,
    /// What the copies into place made so far cost (`COPY_FACTOR`).
    copied_bytes: u64,
    mounts: HashMap<String, (usize, String)>,
    problems: HashMap<String, RefProblem>,
    reads: Vec<Read>,
}

impl<'a> Bundler<'a> {
    fn new(root: SourceFile, reader: Option<&'a RefReader>) -> Bundler<'a> {
        let mut by_real = HashMap::new();
        let mut folder = PathBuf::from(".");
        if let Some(r) = reader {
            if let Ok(real) = r.root.canonicalize() {
                by_real.insert(real, 0);
            }
            if let Some(p) = r.root.parent().filter(|p| !p.as_os_str().is_empty()) {
                folder = p.to_path_buf();
            }
        }
        let bytes = root.text.len() as u64;
        Bundler {
            reader,
            files: vec![root],
            values: vec![None],
            folders: vec![folder],
            broken: vec![None],
            by_real,
            by_joined: HashMap::new(),
            failed: HashMap::new(),
            bytes,
            taken: HashMap::new(),
            assigned: HashMap::new(),
            queue: VecDeque::new(),
            added: Vec::new(),
            copying: Vec::new(),
            copied_nodes: 0,
            copied_bytes: 0,
            mounts: HashMap::new(),
            problems: HashMap::new(),
            reads: Vec::new(),
        }
    }

    fn finish(self, root: Value) -> Bundled {
        Bundled {
            root,
            files: self.files,
            mounts: self.mounts,
            problems: self.problems,
            reads: self.reads,
        }
    }

    /// A root component that is only a file `$ref` (`Pet: {$ref: models/pet.yaml}`) is
    /// that file's object: it is bundled under the root's own name, and every other
    /// reference to the same target names it, instead of the root's entry becoming an
    /// alias of a new `pet` component. (With a key beside the `$ref`, the entry says more
    /// than its target: it stays an alias.)
    fn adopt_root_components(&mut self, root: &Value) {
        let Some(components) = root.get("components").and_then(Value::as_object) else {
            return;
        };
        for (section, entries) in components {
            let Kind::Each(object) = Kind::Components.child(section) else {
                continue;
            };
            let kind = Kind::Object(object);
            let Some(section) = kind.section() else {
                continue;
            };
            for (name, entry) in entries.as_object().into_iter().flatten() {
                let Some(Value::String(reference)) = entry.get("$ref") else {
                    continue;
                };
                if entry.as_object().is_none_or(|m| m.len() != 1) || reference.starts_with('#') {
                    continue;
                }
                // A reference that cannot be followed is reported by the walk.
                let Ok((target, pointer)) = self.target(reference, 0, 0) else {
                    continue;
                };
                let key = (target, pointer.clone(), section);
                if target == 0
                    || self.assigned.contains_key(&key)
                    || self.value_at(target, &pointer).is_none()
                {
                    continue;
                }
                let local = format!("#/components/{section}/{}", escape(name));
                self.assigned.insert(key, local);
                self.queue.push_back(Job {
                    file: target,
                    pointer,
                    kind,
                    section,
                    name: name.clone(),
                    depth: 1,
                });
            }
        }
    }

    /// Rewrites every reference in `value` (of `kind`, in file `file`, at bundled
    /// pointer `out`, `depth` files from the root).
    fn walk(&mut self, value: &mut Value, file: usize, kind: Kind, out: &mut String, depth: usize) {
        if file != 0 {
            self.copied_nodes += 1;
        }
        match value {
            Value::Object(map) => {
                if kind == Kind::Data {
                    return;
                }
                if let Some(Value::String(reference)) = map.get("$ref") {
                    let reference = reference.clone();
                    if file != 0 || !reference.starts_with('#') {
                        self.reference(value, &reference, file, kind, out, depth);
                    }
                    return;
                }
                for (key, child) in map.iter_mut() {
                    let len = out.len();
                    out.push('/');
                    out.push_str(&escape(key));
                    if kind == Kind::Mapping {
                        self.mapping(child, file, out, depth);
                    } else {
                        self.walk(child, file, kind.child(key), out, depth);
                    }
                    out.truncate(len);
                }
            }
            Value::Array(list) => {
                let item = kind.item();
                for (i, child) in list.iter_mut().enumerate() {
                    let len = out.len();
                    out.push('/');
                    out.push_str(&i.to_string());
                    self.walk(child, file, item, out, depth);
                    out.truncate(len);
                }
            }
            _ => {}
        }
    }

    /// A discriminator mapping's value: a reference (rewritten like a schema's
    /// `$ref`), or a bare schema name (left as it is).
    fn mapping(&mut self, value: &mut Value, file: usize, out: &str, depth: usize) {
        let Value::String(target) = value else {
            return;
        };
        let is_ref = target.contains(['#', '/', '.']);
        if !is_ref || (file == 0 && target.starts_with('#')) {
            return;
        }
        let reference = target.clone();
        match self.component_ref(
            &reference,
            file,
            Kind::Object(Object::Schema),
            "schemas",
            depth,
        ) {
            Ok(local) => *value = Value::String(local),
            Err(problem) => {
                self.problems.insert(out.to_string(), problem);
            }
        }
    }

    /// The object `value` holds `$ref: reference`: point it at a component, or copy
    /// its target into place.
    fn reference(
        &mut self,
        value: &mut Value,
        reference: &str,
        file: usize,
        kind: Kind,
        out: &mut String,
        depth: usize,
    ) {
        let at = format!("{out}/$ref");
        if let Some(section) = kind.section() {
            match self.component_ref(reference, file, kind, section, depth) {
                Ok(local) => {
                    if let Some(slot) = value.get_mut("$ref") {
                        *slot = Value::String(local);
                    }
                }
                Err(problem) => {
                    self.problems.insert(at, problem);
                }
            }
            return;
        }
        let (target, pointer) = match self.target(reference, file, depth) {
            Ok(found) => found,
            Err(problem) => {
                self.problems.insert(at, problem);
                return;
            }
        };
        if target == 0 {
            // Copying the root into itself is not done: a local reference says the same.
            if let Some(slot) = value.get_mut("$ref") {
                *slot = Value::String(format!("#{pointer}"));
            }
            return;
        }
        let problem = if self.copying.contains(&(target, pointer.clone())) {
            Some(RefProblem::Cycle)
        } else if self.copied_nodes > MAX_COPIED_NODES {
            Some(RefProblem::Limit(format!(
                "more than {MAX_COPIED_NODES} nodes would be copied into place; the document copies files into several places, which copy others into several places"
            )))
        } else if out.matches('/').count() > MAX_NESTING {
            Some(RefProblem::Limit(format!(
                "the copy would sit more than {MAX_NESTING} levels deep in the document"
            )))
        } else {
            None
        };
        if let Some(problem) = problem {
            self.problems.insert(at, problem);
            return;
        }
        let Some(cost) = self.value_at(target, &pointer).map(copy_cost) else {
            let problem = self.missing(target, &pointer);
            self.problems.insert(at, problem);
            return;
        };
        // Charged before the copy is made: what is copied in place is copied again for
        // every reference to it, so the copies can double at every file.
        let cost = cost.saturating_add(out.len() as u64);
        let budget = COPY_FLOOR.saturating_add(COPY_FACTOR.saturating_mul(self.bytes));
        if self.copied_bytes.saturating_add(cost) > budget {
            self.problems.insert(
                at,
                RefProblem::Limit(format!(
                    "copying it into place would take the copies past {} MiB ({COPY_FACTOR} times the {} bytes of the document's files read, plus {} MiB); the document copies files into several places, which copy others into several places",
                    budget >> 20,
                    self.bytes,
                    COPY_FLOOR >> 20,
                )),
            );
            return;
        }
        self.copied_bytes += cost;
        let mut copy = match self.value_at(target, &pointer) {
            Some(v) => v.clone(),
            None => return,
        };
        let next = if target == file { depth } else { depth + 1 };
        self.mounts.insert(out.clone(), (target, pointer.clone()));
        self.copying.push((target, pointer));
        self.walk(&mut copy, target, kind, out, next);
        self.copying.pop();
        // Keys beside `$ref` (a 3.1 `summary` or `description`) win over the target's.
        if let (Value::Object(beside), Value::Object(target)) = (&*value, &mut copy) {
            for (k, v) in beside {
                if k != "$ref" {
                    target.insert(k.clone(), v.clone());
                }
            }
        }
        *value = copy;
    }

    /// The local reference of the component `reference` names (from file `file`),
    /// naming and queueing it the first time.
    fn component_ref(
        &mut self,
        reference: &str,
        file: usize,
        kind: Kind,
        section: &'static str,
        depth: usize,
    ) -> Result<String, RefProblem> {
        let (target, pointer) = self.target(reference, file, depth)?;
        if target == 0 {
            return Ok(format!("#{pointer}"));
        }
        if let Some(local) = self.assigned.get(&(target, pointer.clone(), section)) {
            return Ok(local.clone());
        }
        if self.value_at(target, &pointer).is_none() {
            return Err(self.missing(target, &pointer));
        }
        let name = self.free_name(section, &self.candidate(target, &pointer));
        let local = format!("#/components/{section}/{}", escape(&name));
        self.assigned
            .insert((target, pointer.clone(), section), local.clone());
        let next = if target == file { depth } else { depth + 1 };
        self.queue.push_back(Job {
            file: target,
            pointer,
            kind,
            section,
            name,
            depth: next,
        });
        Ok(local)
    }

    /// Why file `file` has nothing at `pointer`.
    fn missing(&self, file: usize, pointer: &str) -> RefProblem {
        match &self.broken[file] {
            Some(problem) => problem.clone(),
            None => RefProblem::Pointer {
                file: self.files[file].name.clone(),
                pointer: pointer.to_string(),
            },
        }
    }

    /// The name a target asks for: the last segment of its pointer, else its file's
    /// name without the extension; only the characters a component name may hold.
    fn candidate(&self, file: usize, pointer: &str) -> String {
        let last = pointer.rsplit('/').next().map(unescape).unwrap_or_default();
        let raw = if last.is_empty() || last.chars().all(|c| c.is_ascii_digit()) {
            let name = &self.files[file].name;
            let stem = Path::new(name)
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            if last.is_empty() {
                stem
            } else {
                format!("{stem}_{last}")
            }
        } else {
            last
        };
        let clean: String = raw
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        if clean.is_empty() {
            "ref".to_string()
        } else {
            clean
        }
    }

    /// `wanted`, or `wanted_2`, `wanted_3`, …: the first that no component of the
    /// section has yet (the root's own included).
    fn free_name(&mut self, section: &str, wanted: &str) -> String {
        let taken = self.taken.entry(section.to_string()).or_default();
        let mut name = wanted.to_string();
        let mut n = 2;
        while taken.contains(&name) {
            name = format!("{wanted}_{n}");
            n += 1;
        }
        taken.insert(name.clone());
        name
    }

    /// The value at `pointer` in file `file` (never the root's: see `reference`).
    fn value_at(&self, file: usize, pointer: &str) -> Option<&Value> {
        self.values.get(file)?.as_ref()?.pointer(pointer)
    }

    /// The file and pointer `reference` (written in file `file`) names, reading the file
    /// the first time.
    fn target(
        &mut self,
        reference: &str,
        file: usize,
        depth: usize,
    ) -> Result<(usize, String), RefProblem> {
        let (path, fragment) = reference.split_once('#').unwrap_or((reference, ""));
        let pointer = decode_pointer(fragment).ok_or_else(|| RefProblem::Pointer {
            file: if path.is_empty() {
                self.files[file].name.clone()
            } else {
                path.to_string()
            },
            pointer: format!("#{fragment}"),
        })?;
        if path.is_empty() {
            return Ok((file, pointer));
        }
        if is_url(path) {
            return Err(RefProblem::Url);
        }
        let Some(reader) = self.reader else {
            return Err(RefProblem::NotRead);
        };
        let decoded = percent_encoding::percent_decode_str(path).decode_utf8_lossy();
        let joined = self.folders[file].join(&*decoded);
        let index = self.file_index(reader, &joined, depth)?;
        Ok((index, pointer))
    }

    /// The index of the file at `joined`, read and parsed the first time.
    fn file_index(
        &mut self,
        reader: &RefReader,
        joined: &Path,
        depth: usize,
    ) -> Result<usize, RefProblem> {
        // Keyed by the path as joined, not shortened: through a symlinked folder `..` is
        // the link target's parent, so two spellings that shorten alike may be two files.
        // Every reference to a file already read costs a lookup, not a walk of the path
        // by the OS (thousands of references canonicalized took most of a build).
        if let Some(&index) = self.by_joined.get(joined) {
            return Ok(index);
        }
        if let Some(problem) = self.failed.get(joined) {
            return Err(problem.clone());
        }
        let shown = input::normalize(joined).display().to_string();
        let result = self.read(reader, joined, &shown, depth);
        match &result {
            Ok(index) => {
                self.by_joined.insert(joined.to_path_buf(), *index);
            }
            // A file too deep on one chain may be near the root on another.
            Err(RefProblem::Limit(_)) => {}
            Err(problem) => {
                self.failed.insert(joined.to_path_buf(), problem.clone());
            }
        }
        result
    }

    fn read(
        &mut self,
        reader: &RefReader,
        joined: &Path,
        shown: &str,
        depth: usize,
    ) -> Result<usize, RefProblem> {
        let left = reader.max_bytes.saturating_sub(self.bytes);
        let record = |result: Result<Arc<String>, String>, reads: &mut Vec<Read>| {
            reads.push(Read {
                path: joined.to_path_buf(),
                max_bytes: left,
                result,
            });
        };
        // A file that cannot be found is watched too: it may appear.
        let real = match reader.scope.check(joined, shown, What::DocumentFile) {
            Ok(real) => real,
            Err(e) => {
                record(Err(e.to_string()), &mut self.reads);
                return Err(problem_of(e));
            }
        };
        if let Some(&index) = self.by_real.get(&real) {
            return Ok(index);
        }
        if depth + 1 > reader.max_depth {
            return Err(RefProblem::Limit(format!(
                "it is more than {} files away from the root document (each file refers to the next)",
                reader.max_depth
            )));
        }
        if self.files.len() > reader.max_files {
            return Err(RefProblem::Limit(format!(
                "the document has more than {} files besides its root, the most connectorgen reads for one document",
                reader.max_files
            )));
        }
        // What `read_file` does, without resolving the path a second time.
        let text = match input::read_file(&real, shown, left, What::DocumentFile) {
            Ok(text) => Arc::new(text),
            Err(e) => {
                record(Err(e.to_string()), &mut self.reads);
                return Err(match e {
                    InputError::TooLarge { .. } => RefProblem::Limit(format!(
                        "the document's files together are larger than the {} limit; raise it with --max-bytes",
                        input::human(reader.max_bytes)
                    )),
                    other => problem_of(other),
                });
            }
        };
        record(Ok(text.clone()), &mut self.reads);
        self.bytes += text.len() as u64;
        let last = self.files.last().expect("the root is first");
        let start = crate::diagnostics::next_start(last.start, last.text.len());
        let parsed = match Syntax::of(shown, &text) {
            Syntax::Json => parse_json(&text),
            Syntax::Yaml => parse_yaml(&text),
            Syntax::Either => parse_json(&text).or_else(|e| parse_yaml(&text).map_err(|_| e)),
        };
        let (value, broken) = match parsed {
            Ok(value) => (Some(value), None),
            Err(d) => {
                let (message, span) = match *d {
                    Diagnostic::BaseSyntax { message, span } => (message, span),
                    other => (other.to_string(), Span::from((0, 0))),
                };
                let span = Span::from((start + span.offset(), span.len()));
                (None, Some(RefProblem::Syntax(message, span)))
            }
        };
        let index = self.files.len();
        self.files.push(SourceFile::new(shown, text, start));
        self.values.push(value);
        self.broken.push(broken);
        self.folders.push(match joined.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        });
        self.by_real.insert(real, index);
        Ok(index)
    }
}

/// Reads a file the document refers to, as the bundler does (and `--watch` again): within
/// `scope`, at most `max_bytes`, named in errors by its lexically shortened path.
pub(crate) fn read_file(path: &Path, scope: &Scope, max_bytes: u64) -> Result<String, InputError> {
    let shown = input::normalize(path).display().to_string();
    input::read_named(path, &shown, scope, max_bytes, What::DocumentFile)
}

/// The problem a refused read is. A file outside the scope is named as the reference
/// leads to it, never by its real path (messages and snapshots stay the same on every
/// machine; the help line says how to allow a folder).
fn problem_of(e: InputError) -> RefProblem {
    match e {
        InputError::Outside { path, .. } => RefProblem::Outside(format!(
            "{path} is outside the document's folder (and any folder --allow-read allows) once symlinks are resolved"
        )),
        InputError::System { path, .. } => RefProblem::Outside(format!(
            "{path} is a file of the operating system (under /proc, /sys or /dev, or on a file system of theirs), which connectorgen never reads"
        )),
        other => RefProblem::Unreadable(other.to_string()),
    }
}

/// A reference's fragment as a JSON pointer (percent-decoding undone, `~` escapes
/// kept): empty, or starting with `/`.
fn decode_pointer(fragment: &str) -> Option<String> {
    let decoded = percent_encoding::percent_decode_str(fragment).decode_utf8_lossy();
    (decoded.is_empty() || decoded.starts_with('/')).then(|| decoded.into_owned())
}

/// `https://…`, `file:…`, `//host/…`: anything with a scheme or an authority.
fn is_url(path: &str) -> bool {
    if path.starts_with("//") || path.starts_with("\\\\") {
        return true;
    }
    match path.split_once(':') {
        Some((scheme, _)) => {
            let mut chars = scheme.chars();
            chars.next().is_some_and(|c| c.is_ascii_alphabetic())
                && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        }
        None => false,
    }
}

/// What an object is, by its place in the document: which component section a reference
/// to it is named in, or that it is copied into place, or that it is data whose `$ref`
/// keys mean nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Document,
    Components,
    /// An object the specification defines (a path item, a schema, …).
    Object(Object),
    /// A discriminator (its `mapping` holds references).
    Discriminator,
    /// A discriminator's mapping: each value a reference or a schema name.
    Mapping,
    /// A map or list whose every value is of one kind (`properties`, `parameters`,
    /// `responses`, `paths`, …).
    Each(Object),
    /// An enum's or a const's value: `$ref` there is data.
    Data,
    /// Anything else (`info`, `tags`, extensions): references are copied into place.
    Other,
}

impl Kind {
    /// The component section a reference to an object of this kind is named in.
    fn section(self) -> Option<&'static str> {
        Some(match self {
            Kind::Object(Object::Schema) => "schemas",
            Kind::Object(Object::Response) => "responses",
            Kind::Object(Object::Parameter) => "parameters",
            Kind::Object(Object::RequestBody) => "requestBodies",
            Kind::Object(Object::Header) => "headers",
            Kind::Object(Object::Example) => "examples",
            Kind::Object(Object::Link) => "links",
            Kind::Object(Object::SecurityScheme) => "securitySchemes",
            Kind::Object(Object::Callback) => "callbacks",
            _ => return None,
        })
    }

    /// The kind of the value under `key`.
    fn child(self, key: &str) -> Kind {
        use Object as I;
        let each = Kind::Each;
        match (self, key) {
            (Kind::Document, "paths" | "webhooks" | "x-webhooks") => each(I::PathItem),
            (Kind::Document, "components") => Kind::Components,
            (Kind::Components, section) => match section {
                "schemas" => each(I::Schema),
                "responses" => each(I::Response),
                "parameters" => each(I::Parameter),
                "examples" => each(I::Example),
                "requestBodies" => each(I::RequestBody),
                "headers" => each(I::Header),
                "securitySchemes" => each(I::SecurityScheme),
                "links" => each(I::Link),
                "callbacks" => each(I::Callback),
                "pathItems" => each(I::PathItem),
                "mediaTypes" => each(I::MediaType),
                _ => Kind::Other,
            },
            (Kind::Object(Object::PathItem | Object::Operation), "parameters") => {
                each(I::Parameter)
            }
            (Kind::Object(Object::PathItem), "additionalOperations") => each(I::Operation),
            (Kind::Object(Object::PathItem), m) if is_method(m) => Kind::Object(Object::Operation),
            (Kind::Object(Object::Operation), "requestBody") => Kind::Object(Object::RequestBody),
            (Kind::Object(Object::Operation), "responses") => each(I::Response),
            (Kind::Object(Object::Operation), "callbacks") => each(I::Callback),
            (Kind::Object(Object::Callback), _) => Kind::Object(Object::PathItem),
            (Kind::Object(Object::Parameter | Object::Header), "schema") => {
                Kind::Object(Object::Schema)
            }
            (Kind::Object(Object::Parameter | Object::Header | Object::MediaType), "examples") => {
                each(I::Example)
            }
            (
                Kind::Object(
                    Object::Parameter | Object::Header | Object::RequestBody | Object::Response,
                ),
                "content",
            ) => each(I::MediaType),
            (Kind::Object(Object::Response | Object::Encoding), "headers") => each(I::Header),
            (Kind::Object(Object::Response), "links") => each(I::Link),
            (Kind::Object(Object::MediaType), "schema" | "itemSchema") => {
                Kind::Object(Object::Schema)
            }
            (Kind::Object(Object::MediaType), "encoding") => each(I::Encoding),
            (Kind::Object(Object::Schema), k) => schema_child(k),
            (Kind::Discriminator, "mapping") => Kind::Mapping,
            (Kind::Each(_), k) if k.starts_with("x-") => Kind::Other,
            (Kind::Each(inner), _) => Kind::Object(inner),
            (Kind::Data, _) => Kind::Data,
            _ => Kind::Other,
        }
    }

    /// The kind of a list's items.
    fn item(self) -> Kind {
        match self {
            Kind::Each(inner) => Kind::Object(inner),
            Kind::Object(Object::Schema) => Kind::Object(Object::Schema),
            Kind::Data => Kind::Data,
            _ => Kind::Other,
        }
    }
}

/// The kind under a Schema Object's `key`.
fn schema_child(key: &str) -> Kind {
    match key {
        "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas" => {
            Kind::Each(Object::Schema)
        }
        // Values, not schemas: a `$ref` in `example` is copied into place (published
        // documents refer to example files so, and bundlers read them so), but one in an
        // enum or a const is the value itself.
        "example" | "examples" | "default" => Kind::Other,
        "enum" | "const" => Kind::Data,
        "discriminator" => Kind::Discriminator,
        "xml" | "externalDocs" => Kind::Other,
        k if k.starts_with("x-") => Kind::Other,
        // allOf, items, not, additionalProperties, …: subschemas, one or a list.
        _ => Kind::Object(Object::Schema),
    }
}

fn is_method(key: &str) -> bool {
    super::METHODS.contains(&key) || key == "query"
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::Base;

    /// A folder holding `files` (path, text), and the reader of its `api.yaml`.
    fn folder(files: &[(&str, &str)]) -> (tempfile::TempDir, RefReader) {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let reader = RefReader::new(&dir.path().join("api.yaml"), &[], 1 << 20);
        (dir, reader)
    }

    fn load(dir: &tempfile::TempDir, reader: &RefReader) -> Base {
        let text = std::fs::read_to_string(dir.path().join("api.yaml")).unwrap();
        Base::load("api.yaml", Arc::new(text), reader).unwrap()
    }

    const ROOT: &str = "openapi: 3.1.0\ninfo: {title: T, version: '1'}\npaths:\n  /a:\n    $ref: paths/a.yaml\ncomponents:\n  schemas:\n    Error: {type: string}\n";

    #[test]
    fn files_become_components_with_stable_collision_free_names() {
        let files = [
            ("api.yaml", ROOT),
            (
                "paths/a.yaml",
                "get:\n  operationId: getA\n  responses:\n    '200':\n      description: ok\n      content:\n        application/json:\n          schema: {$ref: '../models/Error.yaml'}\n    '400':\n      description: bad\n      content:\n        application/json:\n          schema: {$ref: '../shared/Error.json'}\n",
            ),
            (
                "models/Error.yaml",
                "type: object\nproperties:\n  again: {$ref: Error.yaml}\n  root: {$ref: '../api.yaml#/components/schemas/Error'}\n",
            ),
            ("shared/Error.json", "{\"type\": \"integer\"}"),
        ];
        let (dir, reader) = folder(&files);
        let base = load(&dir, &reader);
        let op = base.get("/paths/~1a/get").unwrap();
        assert_eq!(op["operationId"], "getA");
        let responses = &op["responses"];
        assert_eq!(
            responses["200"]["content"]["application/json"]["schema"]["$ref"],
            "#/components/schemas/Error_2"
        );
        assert_eq!(
            responses["400"]["content"]["application/json"]["schema"]["$ref"],
            "#/components/schemas/Error_3"
        );
        let schemas = base
            .get("/components/schemas")
            .unwrap()
            .as_object()
            .unwrap();
        let names: Vec<&str> = schemas.keys().map(String::as_str).collect();
        assert_eq!(names, ["Error", "Error_2", "Error_3"]);
        // A cycle through a component ends at its name; a reference back into the root
        // is the root's own.
        assert_eq!(
            schemas["Error_2"]["properties"]["again"]["$ref"],
            "#/components/schemas/Error_2"
        );
        assert_eq!(
            schemas["Error_2"]["properties"]["root"]["$ref"],
            "#/components/schemas/Error"
        );
        // The same files give the same document.
        assert_eq!(load(&dir, &reader).root, base.root);
        // Every file was read once, and is watched.
        let read: Vec<String> = base
            .reads()
            .iter()
            .map(|r| input::normalize(&r.path).display().to_string())
            .map(|p| p.rsplit('/').take(2).collect::<Vec<_>>().join("<"))
            .collect();
        assert_eq!(
            read,
            ["a.yaml<paths", "Error.yaml<models", "Error.json<shared"]
        );
    }

    /// A root component that is only a file `$ref` is that file's object: bundled
    /// under the root's name (references to the same target from other files name it
    /// too), not as an alias of a new component.
    #[test]
    fn a_root_component_that_is_a_file_ref_is_bundled_as_itself() {
        let root = "openapi: 3.1.0\ninfo: {title: T, version: '1'}\npaths:\n  /a:\n    $ref: paths/a.yaml\ncomponents:\n  schemas:\n    Pet: {$ref: models/pet.yaml}\n    Also: {$ref: models/pet.yaml}\n    Described: {$ref: models/owner.yaml, description: The owner.}\n";
        let files = [
            ("api.yaml", root),
            (
                "paths/a.yaml",
                "get:\n  operationId: getA\n  responses:\n    '200':\n      description: ok\n      content:\n        application/json:\n          schema: {$ref: '../models/pet.yaml'}\n",
            ),
            (
                "models/pet.yaml",
                "type: object\nproperties:\n  self: {$ref: pet.yaml}\n  owner: {$ref: owner.yaml}\n",
            ),
            ("models/owner.yaml", "type: string\n"),
        ];
        let (dir, reader) = folder(&files);
        let base = load(&dir, &reader);
        let op = base.get("/paths/~1a/get").unwrap();
        assert_eq!(
            op["responses"]["200"]["content"]["application/json"]["schema"]["$ref"],
            "#/components/schemas/Pet"
        );
        let schemas = base.get("/components/schemas").unwrap();
        let names: Vec<&str> = schemas
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        // `Described` has a key beside its `$ref`: it stays an alias of its own target.
        assert_eq!(names, ["Pet", "Also", "Described", "owner"]);
        assert_eq!(schemas["Pet"]["type"], "object");
        assert_eq!(
            schemas["Pet"]["properties"]["self"]["$ref"],
            "#/components/schemas/Pet"
        );
        assert_eq!(schemas["Also"]["$ref"], "#/components/schemas/Pet");
        assert_eq!(schemas["Described"]["$ref"], "#/components/schemas/owner");
        // Spans of the bundled component point into its file.
        let span = base.span("/components/schemas/Pet/properties");
        assert!(span.offset() >= crate::diagnostics::next_start(0, root.len()));
    }

    /// Spans of nodes copied from a file point into that file, offset past the files
    /// before it, so one span says which file it is in.
    #[test]
    fn spans_point_into_the_file_a_node_came_from() {
        let a = "get:\n  operationId: getA\n  responses:\n    '200': {description: ok}\n";
        let (dir, reader) = folder(&[("api.yaml", ROOT), ("paths/a.yaml", a)]);
        let base = load(&dir, &reader);
        let files = base.files();
        assert_eq!(files.len(), 2);
        assert!(files[1].0.ends_with("paths/a.yaml"), "{}", files[1].0);
        let start = crate::diagnostics::next_start(0, ROOT.len());
        let span = base.span("/paths/~1a/get/operationId");
        let local = span.offset() - start;
        assert_eq!(&a[local..local + span.len()], "getA");
        // The root's own nodes are in the root.
        let span = base.span("/components/schemas/Error");
        assert!(ROOT[span.offset()..].starts_with("{type: string}"));
    }

    #[test]
    fn what_is_not_followed_says_why() {
        let root = "openapi: 3.1.0\ninfo: {title: T, version: '1'}\npaths:\n  /a:\n    get:\n      parameters:\n        - $ref: 'https://example.com/p.yaml'\n        - $ref: '//host/p.yaml'\n        - $ref: 'file:///etc/passwd'\n        - $ref: missing.yaml\n        - $ref: 'p.yaml#/nope'\n        - $ref: 'p.yaml#nope'\n        - $ref: /etc/hostname\n        - $ref: chain1.yaml\n      responses: {}\n";
        let files = [
            ("api.yaml", root),
            ("p.yaml", "name: p\nin: query\n"),
            ("chain1.yaml", "$ref: chain2.yaml\n"),
            ("chain2.yaml", "$ref: chain3.yaml\n"),
            ("chain3.yaml", "name: c\nin: query\n"),
        ];
        let (dir, mut reader) = folder(&files);
        reader.max_files = 3;
        let base = load(&dir, &reader);
        let problem = |i: usize| {
            let at = format!("/paths/~1a/get/parameters/{i}/$ref");
            match base.ref_problem(&at) {
                Some(p) => format!("{p:?}"),
                None => "followed".to_string(),
            }
        };
        assert_eq!(problem(0), "Url");
        assert_eq!(problem(1), "Url");
        assert_eq!(problem(2), "Url");
        assert!(problem(3).starts_with("Unreadable"), "{}", problem(3));
        assert!(problem(4).starts_with("Pointer"), "{}", problem(4));
        assert!(problem(5).starts_with("Pointer"), "{}", problem(5));
        // p.yaml and chain1, chain2 are three files: chain3 is one too many.
        let chain = base
            .get("/components/parameters")
            .unwrap()
            .as_object()
            .unwrap();
        assert!(chain.contains_key("chain2"), "{chain:?}");
        let limited = base
            .problems
            .values()
            .any(|p| matches!(p, RefProblem::Limit(m) if m.contains("more than 3 files")));
        assert!(limited, "{:?}", base.problems);
    }

    /// A discriminator's mapping that names files, in a document with no other file
    /// reference, is rewritten with the schemas' `$ref`s.
    #[test]
    fn discriminator_mappings_to_files_are_bundled() {
        let root = "openapi: 3.1.0\ninfo: {title: T, version: '1'}\npaths: {}\ncomponents:\n  schemas:\n    Pet:\n      oneOf: [{$ref: '#/components/schemas/Cat'}]\n      discriminator:\n        propertyName: kind\n        mapping: {dog: schemas/Dog.yaml, cat: '#/components/schemas/Cat'}\n    Cat: {type: object}\n";
        let (dir, reader) = folder(&[("api.yaml", root), ("schemas/Dog.yaml", "type: object\n")]);
        let base = load(&dir, &reader);
        let mapping = base
            .get("/components/schemas/Pet/discriminator/mapping")
            .unwrap();
        assert_eq!(mapping["dog"], "#/components/schemas/Dog");
        assert_eq!(mapping["cat"], "#/components/schemas/Cat");
        assert_eq!(
            base.get("/components/schemas/Dog").unwrap()["type"],
            "object"
        );
    }

    #[test]
    fn a_cycle_of_copies_into_place_ends() {
        let root =
            "openapi: 3.1.0\ninfo: {title: T, version: '1'}\npaths:\n  /a:\n    $ref: a.yaml\n";
        let files = [
            ("api.yaml", root),
            ("a.yaml", "$ref: b.yaml\n"),
            (
                "b.yaml",
                "get:\n  x-next:\n    $ref: a.yaml\n  responses: {}\n",
            ),
        ];
        let (dir, reader) = folder(&files);
        let base = load(&dir, &reader);
        assert_eq!(base.operations.len(), 1);
        let at = "/paths/~1a/get/x-next/$ref";
        assert!(matches!(base.ref_problem(at), Some(RefProblem::Cycle)));
        // The finding points into b.yaml, where the reference is.
        let span = base.span(at);
        let (name, text) = &base.files()[2];
        assert!(name.ends_with("b.yaml"));
        let start = base.files[2].start;
        let local = span.offset() - start;
        assert_eq!(&text[local..local + span.len()], "a.yaml");
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_out_of_the_folder_is_not_followed() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.yaml"), "type: string\n").unwrap();
        let root = "openapi: 3.1.0\ninfo: {title: T, version: '1'}\npaths:\n  /a:\n    get:\n      responses:\n        '200':\n          description: ok\n          content:\n            application/json:\n              schema: {$ref: link.yaml}\n";
        let (dir, reader) = folder(&[("api.yaml", root)]);
        std::os::unix::fs::symlink(
            outside.path().join("secret.yaml"),
            dir.path().join("link.yaml"),
        )
        .unwrap();
        let base = load(&dir, &reader);
        let at = "/paths/~1a/get/responses/200/content/application~1json/schema/$ref";
        assert!(
            matches!(base.ref_problem(at), Some(RefProblem::Outside(_))),
            "{:?}",
            base.problems
        );
        // Allowed with --allow-read, it is followed.
        let allowed = RefReader::new(
            &dir.path().join("api.yaml"),
            &[outside.path().to_path_buf()],
            1 << 20,
        );
        let base = load(&dir, &allowed);
        assert!(base.ref_problem(at).is_none());
        assert_eq!(
            base.get("/components/schemas/link").unwrap()["type"],
            "string"
        );
    }

    #[test]
    fn the_byte_budget_covers_every_file() {
        let root =
            "openapi: 3.1.0\ninfo: {title: T, version: '1'}\npaths:\n  /a:\n    $ref: a.yaml\n";
        let big = format!(
            "get:\n  description: '{}'\n  responses: {{}}\n",
            "x".repeat(4000)
        );
        let (dir, mut reader) = folder(&[("api.yaml", root), ("a.yaml", &big)]);
        reader.max_bytes = 2000;
        let base = load(&dir, &reader);
        let problem = base.ref_problem("/paths/~1a/$ref");
        assert!(
            matches!(problem, Some(RefProblem::Limit(m)) if m.contains("--max-bytes")),
            "{problem:?}"
        );
    }

    /// Issue 30, item 8: 31 files of 4 KB (132 KB), each copying the next into two
    /// places inside an extension, made 2^31 copies: 2.4 GB and 10-15 s before the node
    /// count, taken after each copy, stopped it (5.9 GB and over 120 s in a debug
    /// build). Each copy is now charged before it is made, against one budget for all
    /// files: the bundled document stays within it (counted, not timed), and the copy
    /// that would pass it is a `base-ref-limit` problem.
    #[test]
    fn copies_into_place_are_charged_before_they_are_made() {
        let root = "openapi: 3.1.0\ninfo: {title: T, version: '1'}\npaths:\n  /a:\n    get:\n      operationId: getA\n      x-samples: {a: {$ref: f1.yaml}, b: {$ref: f1.yaml}}\n      responses: {}\n";
        let pad = "x".repeat(4200);
        let files: Vec<(String, String)> = (1..=31)
            .map(|i| {
                let mut text = format!("pad: {pad}\n");
                if i < 31 {
                    let next = i + 1;
                    text += &format!("a: {{$ref: f{next}.yaml}}\nb: {{$ref: f{next}.yaml}}\n");
                }
                (format!("f{i}.yaml"), text)
            })
            .collect();
        let mut all = vec![("api.yaml", root)];
        all.extend(files.iter().map(|(p, t)| (p.as_str(), t.as_str())));
        let (dir, reader) = folder(&all);
        let base = load(&dir, &reader);
        let read: u64 = all.iter().map(|(_, t)| t.len() as u64).sum();
        let budget = COPY_FLOOR + COPY_FACTOR * read;
        let bundled = copy_cost(&base.root);
        // The root's own nodes are not copies; a few KB of them at most.
        assert!(
            bundled <= budget + 4096,
            "the bundled document costs {bundled}, the budget is {budget}"
        );
        assert!(
            base.problems
                .values()
                .any(|p| matches!(p, RefProblem::Limit(m) if m.contains("copies past"))),
            "{:?}",
            base.problems
        );
    }

    /// `build --watch` and `explain` see every file the document refers to: each is an
    /// input of the analysis, and a change to one (or a missing one appearing) is seen.
    #[test]
    fn every_file_read_is_an_input_that_notices_changes() {
        let root = "openapi: 3.1.0\ninfo: {title: T, version: '1', description: D}\nservers: [{url: 'https://t.example'}]\npaths:\n  /a:\n    $ref: a.yaml\n";
        let a = "get:\n  operationId: getA\n  responses:\n    '200':\n      description: ok\n      content:\n        application/json:\n          schema: {$ref: missing.yaml}\n";
        let (dir, _) = folder(&[("api.yaml", root), ("a.yaml", a)]);
        let manifest = "version: 1\nopenapi: api.yaml\nservice:\n  dashboardUrl: https://t.example/keys\noperations:\n  - operation: getA\n    description: Read-only. Returns A; cannot change it.\n";
        let options = crate::Options {
            manifest_dir: Some(dir.path().to_path_buf()),
            ..Default::default()
        };
        let analysis =
            crate::analyze_with("m.yaml", Arc::new(manifest.to_string()), &options).unwrap();
        let codes: Vec<String> = analysis
            .diagnostics
            .items()
            .iter()
            .map(|f| f.diagnostic.code_str())
            .collect();
        assert_eq!(codes, ["base-ref-unreadable"]);
        let names: Vec<String> = analysis
            .inputs
            .iter()
            .map(|i| i.path.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["api.yaml", "a.yaml", "missing.yaml"]);
        assert!(analysis.inputs.iter().all(|i| !i.changed()));
        std::fs::write(dir.path().join("missing.yaml"), "type: string\n").unwrap();
        assert!(analysis.inputs[2].changed());
        assert!(!analysis.inputs[1].changed());
        std::fs::write(dir.path().join("a.yaml"), a.replace("ok", "fine")).unwrap();
        assert!(analysis.inputs[1].changed());
        let again =
            crate::analyze_with("m.yaml", Arc::new(manifest.to_string()), &options).unwrap();
        assert!(!again.has_errors(), "{:?}", again.diagnostics);
    }
}
