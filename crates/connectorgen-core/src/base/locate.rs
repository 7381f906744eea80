//! Where the node a JSON pointer names is written in one file of a base document.
//!
//! Takes: a file's text and a JSON pointer into the value it was read as. Returns: the
//! byte range of that node as the YAML event parser reports it (a collection: its first
//! character; a scalar: the scalar as written, quotes included), or of its nearest
//! ancestor that exists in the text when the node itself does not (a merged, bundled or
//! aliased value), or nothing when not even the root is there.
//! Must never: fail or panic on any text (a span is a convenience for a message, never
//! a reason to refuse a document), allocate per node, or give another range than one
//! pass of the YAML event parser over the whole file would give (`locate_all`, kept as
//! the full index and as the tests' oracle).
//!
//! A finding inside a 3 MB provider document used to pay for an index of every node of
//! the file (a `String` pointer and a map entry per node, after a full parse). Now a
//! lookup walks the text towards the pointer and stops there: a JSON text is skimmed
//! byte by byte, skipping the subtrees off the path without reading them, and starting
//! at the nearest member or item an earlier skim passed; anything else (or JSON the
//! skimmer does not take) is walked with the YAML event parser, up to the node. Results
//! are remembered per file; after one YAML walk of a file, or once the skims of a JSON
//! file passed over four times its length, the full index is built once instead, so
//! that many findings in one large file stay linear.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use serde_saphyr::granit_parser::{Event, Marker, Parser};

use crate::model::escape;

/// Walks with the YAML parser of one file before its full index is built instead: a
/// walk parses the text up to its node, the index all of it (at about one and a half
/// times a parse's cost). One walk serves the usual case (a finding or two in a large
/// document) and costs a file with many findings at most one parse more.
const YAML_WALKS: usize = 1;
/// The bytes all skims of one JSON file may pass over, in lengths of the file, before its
/// full index is built instead: a skim costs a small fraction of a parse per byte, and
/// resumes at the marks earlier skims left, so this is seldom reached.
const JSON_SKIM_LENGTHS: usize = 4;

/// What one file's lookups have found, built up as findings ask.
#[derive(Debug, Default)]
pub(crate) struct Spans {
    /// What the lookups of this file found and left.
    found: Mutex<Found>,
    /// Every node's range, once the walks of this file passed their budget.
    all: OnceLock<HashMap<String, (usize, usize)>>,
}

#[derive(Debug, Default)]
struct Found {
    /// In-file pointer → the range found (its own or its nearest ancestor's).
    ranges: HashMap<String, Option<(usize, usize)>>,
    /// For a JSON text: pointer → where its value starts, for the members and items that
    /// skims passed on their way (the siblings of each node on a path, not what is
    /// inside them), so that the next skim starts at the nearest one.
    marks: HashMap<String, usize>,
    /// The skimmer met something that is not JSON: only the YAML walk from now on.
    not_json: bool,
    skimmed: usize,
    yaml_walks: usize,
}

impl Spans {
    /// The byte range of the node at `pointer` in `text`, else of its nearest ancestor
    /// there, else `None`.
    pub(crate) fn locate(&self, text: &str, pointer: &str) -> Option<(usize, usize)> {
        if let Some(all) = self.all.get() {
            return nearest(all, pointer);
        }
        let mut found = self
            .found
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(range) = found.ranges.get(pointer) {
            return *range;
        }
        let f = &mut *found;
        let range = if !f.not_json && f.skimmed <= JSON_SKIM_LENGTHS * text.len() {
            if let Ok((range, skimmed)) = skim_json(text, pointer, &mut f.marks) {
                f.skimmed += skimmed;
                Some(range)
            } else {
                f.not_json = true;
                f.marks = HashMap::new();
                None
            }
        } else {
            None
        };
        let range = match range {
            Some(range) => range,
            None if f.not_json && f.yaml_walks < YAML_WALKS => {
                f.yaml_walks += 1;
                walk_yaml(text, pointer)
            }
            None => {
                drop(found);
                return nearest(self.all.get_or_init(|| locate_all(text)), pointer);
            }
        };
        found.ranges.insert(pointer.to_string(), range);
        range
    }
}

/// The range of `pointer` or of its nearest ancestor in a full index.
fn nearest(all: &HashMap<String, (usize, usize)>, mut pointer: &str) -> Option<(usize, usize)> {
    loop {
        if let Some(&range) = all.get(pointer) {
            return Some(range);
        }
        pointer = &pointer[..pointer.rfind('/')?];
    }
}

/// The pointer's segments, as written (escaped); `None` for what is not a pointer (it
/// names nothing, not even the root, as in the full index).
fn segments(pointer: &str) -> Option<Vec<Segment<'_>>> {
    if pointer.is_empty() {
        return Some(Vec::new());
    }
    let rest = pointer.strip_prefix('/')?;
    Some(rest.split('/').map(segment).collect())
}

/// One segment, with the index it names if it is written as one.
fn segment(raw: &str) -> Segment<'_> {
    {
        let canonical = raw == "0"
            || (!raw.is_empty()
                && !raw.starts_with('0')
                && raw.bytes().all(|b| b.is_ascii_digit()));
        Segment {
            raw,
            index: canonical.then(|| raw.parse().ok()).flatten(),
        }
    }
}

/// Whether the pointer segment `segment` (escaped: `~0`, `~1`) names the key `key`,
/// without building the key's escaped form.
fn names(segment: &str, key: &str) -> bool {
    let mut rest = segment.as_bytes();
    for &b in key.as_bytes() {
        let want: &[u8] = match b {
            b'~' => b"~0",
            b'/' => b"~1",
            _ => std::slice::from_ref(&b),
        };
        match rest.strip_prefix(want) {
            Some(r) => rest = r,
            None => return false,
        }
    }
    rest.is_empty()
}

/// A pointer's segment, and the sequence index it names (`format!("{i}")` of an index:
/// no sign, no leading zero), if any.
#[derive(Clone, Copy)]
struct Segment<'a> {
    raw: &'a str,
    index: Option<usize>,
}

impl Segment<'_> {
    fn names_index(self, index: usize) -> bool {
        self.index == Some(index)
    }
}

/// The skimmer met what it does not take (the text is YAML, or JSON that is broken).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct NotJson;

/// The JSON skim: the range as `locate_all` gives it when the text is JSON as far as the
/// skim went, and how many bytes it passed over; else `NotJson`, so that the YAML walk
/// decides. Starts at the nearest of `marks` on the pointer's path, and leaves marks
/// at the members and items it passes.
fn skim_json(
    text: &str,
    pointer: &str,
    marks: &mut HashMap<String, usize>,
) -> Result<(Option<(usize, usize)>, usize), NotJson> {
    let Some(segments) = segments(pointer) else {
        return Ok((None, 0));
    };
    // Where the pointer's first `depth` segments end.
    let ends: Vec<usize> = std::iter::once(0)
        .chain(
            pointer
                .match_indices('/')
                .map(|(i, _)| i)
                .skip(1)
                .chain(std::iter::once(pointer.len())),
        )
        .collect();
    let mut s = Skim {
        bytes: text.as_bytes(),
        at: 0,
    };
    let resume = (1..=segments.len())
        .rev()
        .find_map(|k| marks.get(&pointer[..ends[k]]).map(|&at| (k, at)));
    let mut depth = if let Some((k, at)) = resume {
        s.at = at;
        k
    } else {
        s.at = if text.starts_with('\u{feff}') { 3 } else { 0 };
        s.space();
        if !matches!(s.byte()?, b'{' | b'[') {
            // A document that is one scalar is not an OpenAPI document.
            return Err(NotJson);
        }
        0
    };
    let from = s.at;
    loop {
        // `s.at` is at a value on the path, `depth` segments down.
        let start = s.at;
        let open = s.byte()?;
        let len = match open {
            b'{' | b'[' => 1,
            _ => s.scalar()? - start,
        };
        let best = Some((start, len));
        let Some(&segment) = segments.get(depth) else {
            return Ok((best, s.at - from));
        };
        let parent = &pointer[..ends[depth]];
        let inside = match open {
            b'{' => {
                s.at += 1;
                s.find_member(segment.raw, parent, marks)?
            }
            b'[' => {
                s.at += 1;
                s.find_item(segment, parent, marks)?
            }
            // A scalar has nothing below it.
            _ => false,
        };
        if !inside {
            return Ok((best, s.at - from));
        }
        depth += 1;
    }
}

/// A cursor over JSON text; every method fails on what is not JSON.
struct Skim<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Skim<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    /// The byte at the cursor; the text may not end here.
    fn byte(&self) -> Result<u8, NotJson> {
        self.peek().ok_or(NotJson)
    }

    fn space(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.at += 1;
        }
    }

    /// Just past the opening `{` of the object at `parent`: moves to the value of the
    /// member named `segment` and returns true, or past the closing `}` and returns
    /// false; marks where each member it passes starts.
    fn find_member(
        &mut self,
        segment: &str,
        parent: &str,
        marks: &mut HashMap<String, usize>,
    ) -> Result<bool, NotJson> {
        self.space();
        if self.byte()? == b'}' {
            self.at += 1;
            return Ok(false);
        }
        loop {
            self.space();
            let key = self.string()?;
            self.space();
            if self.byte()? != b':' {
                return Err(NotJson);
            }
            self.at += 1;
            self.space();
            let name = key_segment(&self.bytes[key.0..key.1])?;
            let here = name == segment;
            marks.entry(format!("{parent}/{name}")).or_insert(self.at);
            if here {
                return Ok(true);
            }
            self.value()?;
            if !self.next(b'}')? {
                return Ok(false);
            }
        }
    }

    /// Just past the opening `[` of the array at `parent`: moves to item `segment` and
    /// returns true, or past the closing `]` and returns false; marks where each item
    /// it passes starts.
    fn find_item(
        &mut self,
        segment: Segment<'_>,
        parent: &str,
        marks: &mut HashMap<String, usize>,
    ) -> Result<bool, NotJson> {
        self.space();
        if self.byte()? == b']' {
            self.at += 1;
            return Ok(false);
        }
        let mut index = 0;
        loop {
            self.space();
            marks.entry(format!("{parent}/{index}")).or_insert(self.at);
            if segment.names_index(index) {
                return Ok(true);
            }
            self.value()?;
            if !self.next(b']')? {
                return Ok(false);
            }
            index += 1;
        }
    }

    /// After a member or item: true past a `,` (another follows), false past `close`.
    fn next(&mut self, close: u8) -> Result<bool, NotJson> {
        self.space();
        let b = self.byte()?;
        self.at += 1;
        match b {
            b',' => Ok(true),
            b if b == close => Ok(false),
            _ => Err(NotJson),
        }
    }

    /// Skips one value, whatever it holds, without looking inside its strings.
    fn value(&mut self) -> Result<(), NotJson> {
        match self.byte()? {
            b'"' => self.string().map(drop),
            b'{' | b'[' => {
                let mut depth = 0usize;
                loop {
                    match self.byte()? {
                        b'"' => {
                            self.string()?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                self.at += 1;
                                return Ok(());
                            }
                        }
                        // Only what JSON allows between tokens, and the tokens' bytes.
                        b',' | b':' | b' ' | b'\t' | b'\n' | b'\r' => {}
                        b if literal_byte(b) => {}
                        _ => return Err(NotJson),
                    }
                    self.at += 1;
                }
            }
            _ => self.scalar().map(drop),
        }
    }

    /// A string at the cursor: moves past it and returns its range without the quotes.
    fn string(&mut self) -> Result<(usize, usize), NotJson> {
        if self.byte()? != b'"' {
            return Err(NotJson);
        }
        let start = self.at + 1;
        let mut i = start;
        loop {
            match self.bytes.get(i).ok_or(NotJson)? {
                b'"' => {
                    self.at = i + 1;
                    return Ok((start, i));
                }
                b'\\' => i += 2,
                // JSON has no raw control character in a string; YAML folds a line break
                // inside a double-quoted one to a space, so a key there is another key.
                0..=0x1f => return Err(NotJson),
                _ => i += 1,
            }
        }
    }

    /// A number, `true`, `false` or `null` at the cursor: moves past it, returns its end.
    /// Only when what follows can end a JSON value: YAML reads `9"x"` or `1 : 2` in a flow
    /// sequence as one node of another extent.
    fn scalar(&mut self) -> Result<usize, NotJson> {
        if self.byte()? == b'"' {
            self.string()?;
            return self.ended();
        }
        let start = self.at;
        while self.peek().is_some_and(literal_byte) {
            self.at += 1;
        }
        let token = &self.bytes[start..self.at];
        let number = token
            .first()
            .is_some_and(|b| *b == b'-' || b.is_ascii_digit());
        if !(number || matches!(token, b"true" | b"false" | b"null")) {
            return Err(NotJson);
        }
        self.ended()
    }

    /// The cursor, when the value before it is followed (past spaces) by a `,`, a
    /// closing bracket or the end of the text.
    fn ended(&self) -> Result<usize, NotJson> {
        let rest = self.bytes[self.at..]
            .iter()
            .find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'));
        match rest {
            None | Some(b',' | b']' | b'}') => Ok(self.at),
            Some(_) => Err(NotJson),
        }
    }
}

/// A byte of a number or of `true`, `false`, `null`.
fn literal_byte(b: u8) -> bool {
    matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E' | b'a'..=b'z')
}

/// A key as written between its quotes → the pointer segment that names it (`~0`, `~1`
/// escaped); `NotJson` when its escapes are not JSON's.
fn key_segment(raw: &[u8]) -> Result<Cow<'_, str>, NotJson> {
    let raw = std::str::from_utf8(raw).map_err(|_| NotJson)?;
    let key: Cow<'_, str> = if raw.contains('\\') {
        let decoded: String = serde_json::from_str(&format!("\"{raw}\"")).map_err(|_| NotJson)?;
        Cow::Owned(decoded)
    } else {
        Cow::Borrowed(raw)
    };
    Ok(if key.contains(['~', '/']) {
        Cow::Owned(escape(&key))
    } else {
        key
    })
}

/// One open collection of the YAML walk.
enum Open {
    /// A mapping: whether it is on the path, and the next value's key (None: a key comes
    /// next; Some(true): the key names the path's next segment).
    Map { on_path: bool, key: Option<bool> },
    /// A sequence: whether it is on the path, and the index of the next item.
    Seq { on_path: bool, next: usize },
}

/// The YAML walk: the events of the text up to the node, reading them as `locate_all`
/// reads them, without a pointer string per node.
fn walk_yaml(text: &str, pointer: &str) -> Option<(usize, usize)> {
    let segments = segments(pointer)?;
    let mut open: Vec<Open> = Vec::new();
    let mut best = None;
    let mut parser = Parser::new_from_str(text);
    while let Some(Ok((event, span))) = parser.next_event() {
        let start = byte(text, &span.start);
        let end = byte(text, &span.end).max(start);
        let depth = open.len();
        if let (
            Event::Scalar(key, ..),
            Some(Open::Map {
                on_path,
                key: next @ None,
            }),
        ) = (&event, open.last_mut())
        {
            *next = Some(*on_path && names(segments[depth - 1].raw, key));
            continue;
        }
        if matches!(
            event,
            Event::Scalar(..)
                | Event::MappingStart(..)
                | Event::SequenceStart(..)
                | Event::Alias(..)
        ) {
            let on_path = match open.last() {
                None => best.is_none(),
                Some(Open::Map { key, .. }) => *key == Some(true),
                Some(Open::Seq { on_path, next }) => {
                    *on_path && segments[depth - 1].names_index(*next)
                }
            };
            if on_path {
                best = Some((start, end - start));
                if depth == segments.len() {
                    return best;
                }
            }
            match event {
                Event::MappingStart(..) => open.push(Open::Map { on_path, key: None }),
                Event::SequenceStart(..) => open.push(Open::Seq { on_path, next: 0 }),
                // A scalar or alias on the path has nothing below it in the text.
                _ if on_path => return best,
                _ => advance(&mut open),
            }
            continue;
        }
        if matches!(event, Event::MappingEnd | Event::SequenceEnd) {
            // The collection on the path ended without the next segment.
            if let Some(Open::Map { on_path: true, .. } | Open::Seq { on_path: true, .. }) =
                open.pop()
            {
                return best;
            }
            advance(&mut open);
        }
    }
    best
}

/// A value ended: the parent mapping expects a key next, the parent sequence an item.
fn advance(open: &mut [Open]) {
    match open.last_mut() {
        Some(Open::Map { key, .. }) => *key = None,
        Some(Open::Seq { next, .. }) => *next += 1,
        None => {}
    }
}

/// A marker's byte offset in `text`.
fn byte(text: &str, m: &Marker) -> usize {
    m.byte_offset().unwrap_or_else(|| {
        // Character index → byte offset, for inputs without byte offsets.
        text.char_indices()
            .nth(m.index())
            .map_or(text.len(), |(i, _)| i)
    })
}

/// One open collection while indexing every node.
enum Frame {
    /// A mapping, and the key whose value comes next (None: a key comes next).
    Map(Option<String>),
    /// A sequence, and the index of the next item.
    Seq(usize),
}

/// Every node's JSON pointer → its byte range, from one pass of the YAML event parser
/// (which reads JSON too). A document the parser rejects gives what was seen before the
/// error: locations are a convenience for messages, never a reason to fail.
/// `pub` for the fuzz target's oracle of `Base::span`.
pub fn locate_all(text: &str) -> HashMap<String, (usize, usize)> {
    let mut places = HashMap::new();
    let mut frames: Vec<Frame> = Vec::new();
    // The pointer of each open collection, parallel to `frames`.
    let mut pointers: Vec<String> = Vec::new();
    let mut parser = Parser::new_from_str(text);
    while let Some(Ok((event, span))) = parser.next_event() {
        let start = byte(text, &span.start);
        let end = byte(text, &span.end).max(start);
        // A scalar in key position names the next value; anything else is a node.
        if let (Event::Scalar(key, ..), Some(Frame::Map(next @ None))) = (&event, frames.last_mut())
        {
            *next = Some(key.to_string());
            continue;
        }
        let is_node = matches!(
            event,
            Event::Scalar(..)
                | Event::MappingStart(..)
                | Event::SequenceStart(..)
                | Event::Alias(..)
        );
        if is_node {
            let here = match (frames.last_mut(), pointers.last()) {
                (None, _) => String::new(),
                (Some(Frame::Map(key)), Some(parent)) => {
                    format!("{parent}/{}", escape(key.as_deref().unwrap_or_default()))
                }
                (Some(Frame::Seq(i)), Some(parent)) => format!("{parent}/{i}"),
                _ => String::new(),
            };
            let range = (start, end - start);
            // Only a collection's pointer is needed again (its children's start with it).
            match event {
                Event::MappingStart(..) => {
                    places.entry(here.clone()).or_insert(range);
                    frames.push(Frame::Map(None));
                    pointers.push(here);
                }
                Event::SequenceStart(..) => {
                    places.entry(here.clone()).or_insert(range);
                    frames.push(Frame::Seq(0));
                    pointers.push(here);
                }
                _ => {
                    places.entry(here).or_insert(range);
                    advance_frames(&mut frames);
                }
            }
            continue;
        }
        if matches!(event, Event::MappingEnd | Event::SequenceEnd) {
            frames.pop();
            pointers.pop();
            advance_frames(&mut frames);
        }
    }
    places
}

/// `advance` for the full index's frames.
fn advance_frames(frames: &mut [Frame]) {
    match frames.last_mut() {
        Some(Frame::Map(key)) => *key = None,
        Some(Frame::Seq(i)) => *i += 1,
        None => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A skim from the start of the text.
    fn skim(text: &str, pointer: &str) -> Result<Option<(usize, usize)>, NotJson> {
        skim_json(text, pointer, &mut HashMap::new()).map(|(range, _)| range)
    }

    /// Files of every kind the lookups meet: provider-style documents in JSON and YAML
    /// (the bundled examples' and the cases', one folder deep for multi-file ones, and
    /// each YAML one written as JSON too), and
    /// the manifests of the test cases (block and flow style, anchors, aliases, merge
    /// keys, block scalars, quoted and numeric keys).
    fn fixtures() -> Vec<(String, String)> {
        let root = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
        let mut names: Vec<std::path::PathBuf> = Vec::new();
        for folder in [
            "examples/specs",
            "tests/cases/specs",
            "tests/cases/valid",
            "tests/cases/invalid",
            "tests/cases/lint",
        ] {
            let mut more = Vec::new();
            for entry in std::fs::read_dir(root.join(folder)).unwrap() {
                let path = entry.unwrap().path();
                match std::fs::read_dir(&path) {
                    Ok(inner) => more.extend(inner.map(|e| e.unwrap().path())),
                    Err(_) => more.push(path),
                }
            }
            more.retain(|p| {
                p.is_file()
                    && p.extension()
                        .is_some_and(|e| e == "yaml" || e == "yml" || e == "json")
            });
            more.sort();
            names.extend(more);
        }
        let mut files: Vec<(String, String)> = names
            .into_iter()
            .map(|p| {
                (
                    p.display().to_string(),
                    std::fs::read_to_string(&p).unwrap(),
                )
            })
            .collect();
        // Each provider-style YAML document again as JSON, pretty and compact: the
        // documents the project wrote are mostly YAML, and JSON is what is skimmed.
        let mut as_json = Vec::new();
        for (name, text) in &files {
            let is_document = name.contains("/specs/")
                && std::path::Path::new(name)
                    .extension()
                    .is_some_and(|e| e == "yaml" || e == "yml");
            if let (true, Ok(value)) = (is_document, super::super::parse_yaml(text)) {
                as_json.push((
                    format!("{name}.json"),
                    serde_json::to_string_pretty(&value).unwrap(),
                ));
                as_json.push((
                    format!("{name}.compact.json"),
                    serde_json::to_string(&value).unwrap(),
                ));
            }
        }
        files.extend(as_json);
        files
    }

    /// The pointers to ask for in one file: every `step`-th of its nodes, each also with
    /// children that are not there.
    fn asked(all: &HashMap<String, (usize, usize)>, step: usize) -> Vec<String> {
        let mut pointers: Vec<&String> = all.keys().collect();
        pointers.sort_by_key(|p| all[*p]);
        let mut out = Vec::new();
        for p in pointers.into_iter().step_by(step) {
            out.push(p.clone());
            out.push(format!("{p}/no~1such~0key"));
            out.push(format!("{p}/7"));
        }
        out.push("/".into());
        out.push("no-slash".into());
        out
    }

    /// Every lookup gives what the full index gives: the node's range, else its nearest
    /// ancestor's. JSON is skimmed at a thousand nodes of each file (all of a small
    /// one), JSON and YAML walked at forty (a walk parses up to its node).
    #[test]
    fn lookups_agree_with_the_full_index() {
        let mut json_files = 0;
        let mut checked = 0;
        for (name, text) in fixtures() {
            // Only what a base document can be: a file the readers refuse (a repeated
            // key, a syntax error: on purpose, in tests/cases/) is never looked into.
            let is_json = std::path::Path::new(&name)
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("json"));
            let read = if is_json {
                super::super::parse_json(&text)
            } else {
                super::super::parse_yaml(&text)
            };
            if read.is_err() {
                continue;
            }
            let all = locate_all(&text);
            assert!(!all.is_empty(), "{name}: nothing indexed");
            json_files += usize::from(is_json);
            for pointer in asked(&all, all.len().div_ceil(40)) {
                let want = nearest(&all, &pointer);
                assert_eq!(
                    walk_yaml(&text, &pointer),
                    want,
                    "{name}: walk of {pointer:?}"
                );
                checked += 1;
            }
            // And as `Base::span` asks, with what is remembered, the budgets, the full index.
            let spans = Spans::default();
            for pointer in asked(&all, all.len().div_ceil(1000)) {
                let want = nearest(&all, &pointer);
                assert_eq!(spans.locate(&text, &pointer), want, "{name}: {pointer:?}");
            }
            // One file's marks, left by the lookups before, as `Spans` keeps them.
            let mut marks = HashMap::new();
            for pointer in asked(&all, all.len().div_ceil(1000)) {
                let want = nearest(&all, &pointer);
                let skimmed = skim_json(&text, &pointer, &mut marks).map(|(r, _)| r);
                let fresh = skim_json(&text, &pointer, &mut HashMap::new()).map(|(r, _)| r);
                assert_eq!(skimmed, fresh, "{name}: skim of {pointer:?} from a mark");
                if is_json {
                    assert_eq!(skimmed, Ok(want), "{name}: skim of {pointer:?}");
                } else {
                    assert!(
                        skimmed.is_err() || skimmed == Ok(want),
                        "{name}: skim of {pointer:?}"
                    );
                }
                checked += 1;
            }
        }
        assert!(
            json_files >= 2 && checked > 5_000,
            "{json_files} JSON files, {checked} lookups"
        );
    }

    /// JSON that is written unusually still skims to the same ranges: escapes in keys
    /// and strings, empty collections, numbers with exponents, a byte order mark,
    /// whitespace of every kind, keys that need `~0` and `~1` in a pointer.
    #[test]
    fn unusual_json_skims_like_the_full_index() {
        let text = "\u{feff} \r\n\t{\"a\" : [1, \"x\\n\\\"]\", {}, [], {\"b\": null, \"c\":-1.5e3}],\t\"d\":{ }, \"\\u0041\": true, \"a/b~c\": [[0, [false]]], \"\": {\"\": 2}}\n";
        let all = locate_all(text);
        assert_eq!(all.len(), 18, "{all:?}");
        for pointer in asked(&all, 1) {
            assert_eq!(
                skim(text, &pointer),
                Ok(nearest(&all, &pointer)),
                "{pointer:?}"
            );
            assert_eq!(
                walk_yaml(text, &pointer),
                nearest(&all, &pointer),
                "{pointer:?}"
            );
        }
        // An index is written without sign or leading zero.
        assert_eq!(skim(text, "/a/01"), Ok(all.get("/a").copied()));
        assert_eq!(skim(text, "/A"), Ok(Some((text.find("true").unwrap(), 4))));
    }

    /// A flow sequence YAML reads but JSON does not (`9"x"` is one plain scalar, not the
    /// number 9 and a string): found by the fuzz target's span oracle, where the skim gave
    /// the scalar one character.
    #[test]
    fn a_number_run_into_a_string_is_not_json() {
        let text = "{\"a\": [\"id\",9\"x\"], \"b\": 1}";
        let all = locate_all(text);
        for pointer in ["/a/1", "/a/1/~", "/b"] {
            let want = nearest(&all, pointer);
            assert!(
                matches!(skim(text, pointer), Err(NotJson)) || skim(text, pointer) == Ok(want),
                "{pointer}: {:?} against {want:?}",
                skim(text, pointer)
            );
            assert_eq!(Spans::default().locate(text, pointer), want, "{pointer}");
        }
    }

    /// A raw line break inside a quoted key is not JSON, and YAML folds it into a space
    /// (`"\n  "` is the key `" "`): found by the fuzz target's span oracle, where the skim
    /// compared the unfolded key and fell back to an ancestor.
    #[test]
    fn a_line_break_inside_a_quoted_key_is_not_json() {
        let text = "{\"a\": {\"\n  \": {\"b\": 1}}, \"c\": 2}";
        let all = locate_all(text);
        assert!(all.contains_key("/a/ /b"), "{all:?}");
        for pointer in ["/a/ /b", "/a/ ", "/c"] {
            let want = nearest(&all, pointer);
            assert!(
                matches!(skim(text, pointer), Err(NotJson)) || skim(text, pointer) == Ok(want),
                "{pointer}: {:?} against {want:?}",
                skim(text, pointer)
            );
            assert_eq!(Spans::default().locate(text, pointer), want, "{pointer}");
        }
    }

    /// What is not JSON is left to the YAML walk, and a text no parser reads gives what
    /// was seen before the error, as the full index does.
    #[test]
    fn what_the_skimmer_does_not_take_is_walked() {
        for text in [
            "{openapi: 3.1.0, paths: {}}",
            "{\"a\": 'single', \"b\": 1}",
            "{\"a\": [1, 2], # a comment\n \"b\": 1}",
            "openapi: 3.1.0\n",
        ] {
            assert_eq!(skim(text, "/b"), Err(NotJson), "{text}");
        }
        let broken = "a:\n  b: 1\n  c: [1, 2\nd: 3\n";
        let all = locate_all(broken);
        for pointer in ["/a/b", "/a/c/1", "/d", "/a/c/5"] {
            assert_eq!(
                walk_yaml(broken, pointer),
                nearest(&all, pointer),
                "{pointer}"
            );
        }
        assert_eq!(walk_yaml("", "/a"), None);
        assert_eq!(skim("", "/a"), Err(NotJson));
    }

    /// Many lookups in one file: remembered, then answered from the full index, all
    /// alike.
    #[test]
    fn many_lookups_in_one_file_stay_right() {
        for text in [
            "{\"a\": [1, 2, 3], \"b\": {\"c\": \"d\"}}",
            "a: [1, 2, 3]\nb:\n  c: d\n",
        ] {
            let all = locate_all(text);
            let spans = Spans::default();
            for round in 0..200 {
                for pointer in ["/a/0", "/a/2", "/b/c", "/b/x", "", &format!("/a/{round}")] {
                    assert_eq!(
                        spans.locate(text, pointer),
                        nearest(&all, pointer),
                        "{text} {pointer}"
                    );
                }
            }
            assert!(
                spans.all.get().is_some(),
                "{text}: the full index after many lookups"
            );
        }
    }
}
