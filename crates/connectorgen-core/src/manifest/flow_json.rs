//! A fast path for the JSON Schemas a manifest writes as one-line flow collections that
//! are also valid JSON (`output: {"type": "object", …}`, and `"schema": {…}` inside a
//! `- {…}` query, path or header entry): most of a generated manifest's bytes. The YAML
//! front end reads them event by event through serde; here they are read once by a small
//! JSON reader, and the YAML parser sees a two-character placeholder instead. So are
//! whole one-line `- {…}` query, path and header entries and an operation's `spends:`
//! and `async:` written as one-line JSON: read into their raw types, each field with the
//! location the parser would give it.
//!
//! Takes: the manifest text. Returns (`substitute`): the same text with each such
//! collection replaced by the empty flow sequence `[]` (a typed mapping by `{}`) at its
//! first byte and spaces over the rest (or, when nothing follows it on its line and it
//! holds non-ASCII text, a comment holding the rest),
//! so that every line, column, character and byte offset stays where it was and the
//! placeholder's span is the collection's (one character at its `{` or `[`); with the
//! values read, by byte offset. `restore` puts them back into the raw manifest.
//! Must never: change what a manifest means or where a finding points. Only the subset of
//! JSON that YAML reads to the same value is taken (no exponents, no `-0`, no surrogate
//! escapes, no characters YAML refuses, no duplicate keys, a bounded depth); a file with
//! anything that looks like an anchor is left alone (aliases would replay placeholders);
//! and unless every placeholder comes back exactly once, at its own offset, in a field
//! that holds a JSON Schema, the caller parses the original text instead — as it does for
//! any error, so every diagnostic comes from the original text.

use serde_json::{Map, Number, Value};
use serde_saphyr::{Location, Spanned};

use super::spans::Place;
use super::{RawAsync, RawManifest, RawQueryParam, RawSpends};

/// The placeholder the YAML parser reads where a collection was: an empty flow sequence,
/// whose span is the collection's (one character at the `{`). Not a plain scalar such as
/// `x`: the scanner would read the spaces after it as a scalar's possible continuation,
/// a character at a time into a buffer.
const PLACEHOLDER: &str = "[]";
/// The placeholder for a mapping read into one of the manifest's own types (a whole
/// `- {…}` query, path or header entry; `spends:`, `async:`): an empty flow mapping,
/// which gives the type with every field unset and the mapping's span (one character at
/// its `{`), so that `restore` can fill it in.
const TYPED_PLACEHOLDER: &str = "{}";
/// Collections nested deeper than this are left to the YAML parser, which owns the
/// nesting-depth limit and its message.
const MAX_JSON_DEPTH: usize = 20;
/// Lines indented further than this are left alone too, so that the key's own depth plus
/// the collection's stays under the parser's depth budget (64) whatever the layout.
const MAX_INDENT: usize = 16;
/// Collections shorter than this cost the YAML parser little: not worth a placeholder.
const MIN_LEN: usize = 8;

/// The manifest text with placeholders, and the values they stand for.
pub(super) struct Substituted {
    /// What the YAML parser reads.
    pub text: String,
    /// Byte offset of each placeholder → the value written there.
    /// (foldhash: offsets into the text; Cargo.toml says why that is safe here.)
    values: foldhash::HashMap<usize, Taken>,
}

/// What a placeholder stands for.
enum Taken {
    /// A JSON Schema (placeholder `[]`).
    Schema(Value),
    /// A whole query, path or header entry, its fields' spans included (`{}`).
    Param(RawQueryParam),
    /// An operation's `spends:` (`{}`).
    Spends(RawSpends),
    /// An operation's `async:` (`{}`).
    Async(RawAsync),
}

/// Where the current line is, for the locations of what the reader takes itself.
struct Line<'a> {
    /// 1-based.
    number: usize,
    /// Byte offset of its first byte.
    byte: usize,
    /// Characters before it.
    chars: usize,
    /// The line without its line break.
    body: &'a str,
}

impl Line<'_> {
    /// The place of `body[begin..end]`; a collection's place is its first character, as
    /// the parser gives it.
    fn place(&self, begin: usize, end: usize, collection: bool) -> Option<Location> {
        let column = char_count(self.body.get(..begin)?);
        let (char_len, byte_len) = if collection {
            (1, 1)
        } else {
            (char_count(self.body.get(begin..end)?), end - begin)
        };
        Place {
            line: self.number,
            column,
            char_offset: self.chars + column,
            char_len,
            byte_offset: self.byte + begin,
            byte_len,
        }
        .location()
    }
}

fn char_count(s: &str) -> usize {
    if s.is_ascii() {
        s.len()
    } else {
        s.chars().count()
    }
}

/// Whether the parser may count lines or characters otherwise than `substitute` does: a
/// byte order mark, a lone carriage return, or a character YAML 1.1 took for a line
/// break. Such a text keeps its mappings for the parser (only schemas, which carry no
/// span of their own, are read here).
fn counts_may_differ(text: &str) -> bool {
    let b = text.as_bytes();
    // One character at a time: each search is a memchr.
    text.starts_with('\u{feff}')
        || text
            .match_indices('\r')
            .any(|(i, _)| b.get(i + 1) != Some(&b'\n'))
        || ['\u{85}', '\u{2028}', '\u{2029}']
            .into_iter()
            .any(|c| text.contains(c))
}

/// Replaces the one-line JSON collections at the keys that hold JSON Schemas with
/// placeholders, or `None` when there is none, or when the file may use anchors.
pub(super) fn substitute(text: &str) -> Option<Substituted> {
    if may_have_anchor(text) {
        return None;
    }
    // (offset, length, value, whether nothing but spaces follows it on its line).
    let mut regions: Vec<(usize, usize, Taken, bool)> = Vec::new();
    let typed = !counts_may_differ(text);
    // (column, key) of the block mapping keys that contain the current line.
    let mut stack: Vec<(usize, String)> = Vec::new();
    // While inside a block scalar: the indentation its lines must exceed.
    let mut block_scalar: Option<usize> = None;
    let mut start = 0;
    let mut chars = 0;
    for (number, line) in text.split_inclusive('\n').enumerate() {
        let offset = start;
        start += line.len();
        let line_chars = chars;
        // Only what the typed entries' locations need.
        if typed {
            chars += char_count(line);
        }
        let body = line.trim_end_matches(['\n', '\r']);
        let at = Line {
            number: number + 1,
            byte: offset,
            chars: line_chars,
            body,
        };
        let indent = body.len() - body.trim_start_matches(' ').len();
        let rest = &body[indent..];
        if rest.is_empty() || rest.starts_with('#') {
            continue;
        }
        if let Some(min) = block_scalar {
            if indent > min {
                continue;
            }
            block_scalar = None;
        }
        let (dash, content_col, content) = match rest.strip_prefix("- ") {
            Some(after) => {
                let after_trim = after.trim_start_matches(' ');
                (
                    true,
                    indent + 2 + (after.len() - after_trim.len()),
                    after_trim,
                )
            }
            None => (false, indent, rest),
        };
        if dash {
            while stack.last().is_some_and(|(col, _)| *col > indent) {
                stack.pop();
            }
        } else {
            while stack.last().is_some_and(|(col, _)| *col >= indent) {
                stack.pop();
            }
        }
        if dash && content.starts_with('{') && is_entry_place(content_col, &stack) {
            if let Some((len, param)) = typed.then(|| whole_entry(&at, content_col)).flatten() {
                regions.push((offset + content_col, len, Taken::Param(param), true));
            } else if let Some(r) = entry_schema(content, content_col) {
                regions.push((offset + r.0, r.1, Taken::Schema(r.2), false));
            }
            continue;
        }
        if dash && content.starts_with('{') {
            continue;
        }
        let Some((key, value)) = plain_key(content) else {
            // Some other node (a quoted key, a nested list…): it still encloses what is
            // indented under it, so a key there is not where `restore` looks.
            stack.push((content_col, String::new()));
            continue;
        };
        let value_col = content_col + (content.len() - value.len());
        if value.starts_with(['|', '>']) {
            block_scalar = Some(indent);
        }
        if value.starts_with(['{', '['])
            && content_col <= MAX_INDENT
            && is_schema_place(&stack, key)
            && let Some((v, len)) = read_whole(value)
            && len >= MIN_LEN
        {
            regions.push((offset + value_col, len, Taken::Schema(v), true));
        } else if typed
            && value.starts_with('{')
            && content_col <= MAX_INDENT
            && let Some((len, taken)) = operation_mapping(&at, &stack, key, value_col)
        {
            regions.push((offset + value_col, len, taken, true));
        }
        stack.push((content_col, key.to_string()));
    }
    if regions.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut values = foldhash::HashMap::with_capacity_and_hasher(
        regions.len(),
        foldhash::fast::RandomState::default(),
    );
    let mut at = 0;
    for (begin, len, value, last) in regions {
        let region = &text[begin..begin + len];
        let placeholder = match value {
            Taken::Schema(_) => PLACEHOLDER,
            _ => TYPED_PLACEHOLDER,
        };
        // `placeholder #`: what a comment after the placeholder must start with.
        let head = placeholder.len() + 2;
        // Spans count characters as well as bytes: what replaces a region keeps both
        // counts, so every later location is exactly where it was.
        if region.is_ascii() {
            out.push_str(&text[at..begin]);
            out.push_str(placeholder);
            push_spaces(&mut out, len - placeholder.len());
        } else if last && region.is_char_boundary(head) && region[..head].is_ascii() {
            // Nothing follows the region on its line: the rest becomes a comment.
            out.push_str(&text[at..begin]);
            out.push_str(placeholder);
            out.push_str(" #");
            out.push_str(&region[head..]);
        } else {
            continue;
        }
        at = begin + len;
        values.insert(begin, value);
    }
    if values.is_empty() {
        return None;
    }
    out.push_str(&text[at..]);
    Some(Substituted { text: out, values })
}

/// `n` spaces, a slice at a time (a character at a time costs more than the rest of
/// the copy).
fn push_spaces(out: &mut String, mut n: usize) {
    const SPACES: &str = "                                                                ";
    while n > 0 {
        let k = n.min(SPACES.len());
        out.push_str(&SPACES[..k]);
        n -= k;
    }
}

impl Substituted {
    /// Puts the values back in place of their placeholders; `false` when any placeholder
    /// did not come back exactly once where it was put (the caller then parses the
    /// original text).
    pub(super) fn restore(mut self, raw: &mut RawManifest) -> bool {
        let mut ok = true;
        if let Some(ops) = &mut raw.operations {
            for op in &mut ops.value {
                let op = &mut op.value;
                for field in [&mut op.input, &mut op.output].into_iter().flatten() {
                    ok &= self.take(field);
                }
                if let Some(spends) = &mut op.spends {
                    ok &= self.take_typed(spends, |t| match t {
                        Taken::Spends(s) => Some(s),
                        _ => None,
                    });
                }
                if let Some(a) = &mut op.async_ {
                    ok &= self.take_typed(a, |t| match t {
                        Taken::Async(a) => Some(a),
                        _ => None,
                    });
                }
                for list in [&mut op.query, &mut op.params, &mut op.headers]
                    .into_iter()
                    .flatten()
                {
                    for q in list {
                        ok &= self.take_typed(q, |t| match t {
                            Taken::Param(p) => Some(p),
                            _ => None,
                        });
                        let RawQueryParam { schema, .. } = &mut q.value;
                        if let Some(s) = schema {
                            ok &= self.take(s);
                        }
                    }
                }
            }
        }
        ok && self.values.is_empty()
    }

    /// Replaces one placeholder; `false` when a placeholder is where it should not be.
    fn take(&mut self, field: &mut Spanned<Value>) -> bool {
        if !matches!(&field.value, Value::Array(items) if items.is_empty()) {
            return true;
        }
        let at = super::span_of(&field.defined).offset();
        match self.values.remove(&at) {
            Some(Taken::Schema(value)) => {
                field.value = value;
                field.referenced == field.defined
            }
            Some(_) => false,
            // The author's own `[]`.
            None => true,
        }
    }

    /// Fills in a mapping the parser read from a `{}` placeholder; `false` when what was
    /// put there is of another kind, or the mapping is not the placeholder's (fields
    /// set, or reached through an alias).
    fn take_typed<T: Blank>(
        &mut self,
        field: &mut Spanned<T>,
        kind: impl FnOnce(Taken) -> Option<T>,
    ) -> bool {
        let at = super::span_of(&field.defined).offset();
        let Some(taken) = self.values.remove(&at) else {
            return true;
        };
        match kind(taken) {
            Some(value) if field.value.is_blank() && field.referenced == field.defined => {
                field.value = value;
                true
            }
            // (A schema's `[]` is never where a mapping starts.)
            _ => false,
        }
    }
}

/// Whether `&` appears where it could start an anchor (after a space, a flow indicator
/// or at the start of a line, and followed by a name character). A false positive only
/// costs the fast path.
fn may_have_anchor(text: &str) -> bool {
    let b = text.as_bytes();
    // `match_indices` of one character searches with memchr.
    text.match_indices('&').any(|(i, _)| {
        (i == 0 || matches!(b[i - 1], b' ' | b'\t' | b'\n' | b'\r' | b'[' | b'{' | b','))
            && b.get(i + 1)
                .is_some_and(|n| !matches!(n, b' ' | b'\t' | b'\n' | b'\r'))
    })
}

/// `key: value` or `key:` with a plain key of ASCII letters: the key and the value.
fn plain_key(content: &str) -> Option<(&str, &str)> {
    let end = content.find(|c: char| !c.is_ascii_alphabetic())?;
    let after = content[end..].strip_prefix(':')?;
    if end == 0 || !(after.is_empty() || after.starts_with(' ')) {
        return None;
    }
    Some((&content[..end], after.trim_start_matches(' ')))
}

/// Whether `key`, under the keys on `stack`, holds a JSON Schema that `restore` puts
/// back: an operation's `input` or `output`, a `schema` of a block-style query, path or
/// header entry.
fn is_schema_place(stack: &[(usize, String)], key: &str) -> bool {
    let keys: Vec<&str> = stack.iter().map(|(_, k)| k.as_str()).collect();
    match (keys.as_slice(), key) {
        (["operations"], "input" | "output") => stack[0].0 == 0,
        (["operations", "query" | "params" | "headers"], "schema") => stack[0].0 == 0,
        _ => false,
    }
}

/// Whether a `- {…}` entry at `content_col`, under the keys on `stack`, is an entry of an
/// operation's query, path or header list.
fn is_entry_place(content_col: usize, stack: &[(usize, String)]) -> bool {
    content_col <= MAX_INDENT
        && matches!(
            stack
                .iter()
                .map(|(_, k)| k.as_str())
                .collect::<Vec<_>>()
                .as_slice(),
            ["operations", "query" | "params" | "headers"]
        )
        && stack[0].0 == 0
}

/// A type the `{}` placeholder stands for: what the parser reads from `{}`.
trait Blank {
    /// Every field unset.
    fn is_blank(&self) -> bool;
}

impl Blank for RawQueryParam {
    fn is_blank(&self) -> bool {
        let RawQueryParam {
            name,
            description,
            required,
            schema,
            style,
            explode,
        } = self;
        name.is_none()
            && description.is_none()
            && required.is_none()
            && schema.is_none()
            && style.is_none()
            && explode.is_none()
    }
}

impl Blank for RawSpends {
    fn is_blank(&self) -> bool {
        let RawSpends {
            kind,
            note,
            when,
            payer,
            amount,
            currency,
        } = self;
        kind.is_none()
            && note.is_none()
            && when.is_none()
            && payer.is_none()
            && amount.is_none()
            && currency.is_none()
    }
}

impl Blank for RawAsync {
    fn is_blank(&self) -> bool {
        let RawAsync {
            poll_with,
            typical_seconds,
            returns,
            id_field,
            status,
            cancel_with,
        } = self;
        poll_with.is_none()
            && typical_seconds.is_none()
            && returns.is_none()
            && id_field.is_none()
            && status.is_none()
            && cancel_with.is_none()
    }
}

/// One member of a one-line JSON object, with where its value is in the line.
struct Member {
    key: String,
    /// The value's byte range in the line.
    begin: usize,
    end: usize,
    value: Value,
}

impl Member {
    fn spanned<T>(&self, at: &Line, value: T) -> Option<Spanned<T>> {
        let collection = matches!(self.value, Value::Object(_) | Value::Array(_));
        let loc = at.place(self.begin, self.end, collection)?;
        Some(Spanned::new(value, loc, loc))
    }

    fn string(self, at: &Line) -> Option<Spanned<String>> {
        let Value::String(s) = &self.value else {
            return None;
        };
        let s = s.clone();
        self.spanned(at, s)
    }

    fn bool(&self, at: &Line) -> Option<Spanned<bool>> {
        self.spanned(at, self.value.as_bool()?)
    }
}

/// The one-line JSON object starting at byte `col` of the line, followed by nothing but
/// spaces: its members (no key twice), and its length in bytes.
fn object_members(at: &Line, col: usize) -> Option<(Vec<Member>, usize)> {
    let mut r = Reader::new(at.body);
    r.pos = col;
    let members = r.members()?;
    let len = r.pos - col;
    r.at_end().then_some((members, len))
}

/// A whole `- {…}` query, path or header entry read into its type, every field as the
/// parser would give it; `None` when it holds anything else (an unknown key, a value of
/// another type, a `null`): the parser then reads it and says what is wrong.
fn whole_entry(at: &Line, col: usize) -> Option<(usize, RawQueryParam)> {
    let (members, len) = object_members(at, col)?;
    let mut p = RawQueryParam {
        name: None,
        description: None,
        required: None,
        schema: None,
        style: None,
        explode: None,
    };
    for m in members {
        match m.key.as_str() {
            "name" => p.name = Some(m.string(at)?),
            "description" => p.description = Some(m.string(at)?),
            "required" => p.required = Some(m.value.as_bool()?),
            // A collection, as for the schemas read alone: a scalar schema is rare, and
            // `null` would be no schema at all to the parser.
            "schema" if matches!(m.value, Value::Object(_) | Value::Array(_)) => {
                let loc = at.place(m.begin, m.end, true)?;
                p.schema = Some(Spanned::new(m.value, loc, loc));
            }
            "style" => p.style = Some(m.string(at)?),
            "explode" => p.explode = Some(m.bool(at)?),
            _ => return None,
        }
    }
    Some((len, p))
}

/// An operation's `spends:` or `async:` written as one-line JSON, read into its type
/// (`None` when it holds anything else, as for `whole_entry`).
fn operation_mapping(
    at: &Line,
    stack: &[(usize, String)],
    key: &str,
    col: usize,
) -> Option<(usize, Taken)> {
    if !matches!(stack, [(0, k)] if k == "operations") {
        return None;
    }
    match key {
        "spends" => {
            let (members, len) = object_members(at, col)?;
            let mut s = RawSpends {
                kind: None,
                note: None,
                when: None,
                payer: None,
                amount: None,
                currency: None,
            };
            for m in members {
                match m.key.as_str() {
                    "kind" => s.kind = Some(m.string(at)?),
                    "note" => s.note = Some(m.string(at)?),
                    "when" => s.when = Some(m.string(at)?),
                    "payer" => s.payer = Some(m.string(at)?),
                    "currency" => s.currency = Some(m.string(at)?),
                    // A number, as the parser reads it; a mapping is the typed parse's.
                    "amount" if m.value.is_number() => {
                        let value = m.value.clone();
                        s.amount = Some(m.spanned(at, value)?);
                    }
                    _ => return None,
                }
            }
            Some((len, Taken::Spends(s)))
        }
        "async" => {
            let (members, len) = object_members(at, col)?;
            let mut a = RawAsync {
                poll_with: None,
                typical_seconds: None,
                returns: None,
                id_field: None,
                status: None,
                cancel_with: None,
            };
            for m in members {
                match m.key.as_str() {
                    "pollWith" => a.poll_with = Some(m.string(at)?),
                    "typicalSeconds" => {
                        // An integer as written: `5.0` is not one to the parser.
                        let n = m.value.as_i64()?;
                        a.typical_seconds = Some(m.spanned(at, n)?);
                    }
                    "returns" => a.returns = Some(m.string(at)?),
                    "idField" => a.id_field = Some(m.string(at)?),
                    "cancelWith" => a.cancel_with = Some(m.string(at)?),
                    // A mapping inside the mapping: the typed parse reads it.
                    _ => return None,
                }
            }
            Some((len, Taken::Async(a)))
        }
        _ => None,
    }
}

/// In a `- {…}` entry of a query, path or header list: the one-line JSON object's
/// `"schema"` member, as (offset in the line, length, value).
fn entry_schema(content: &str, content_col: usize) -> Option<(usize, usize, Value)> {
    let mut r = Reader::new(content);
    let schema = r.object_member_range("schema")?;
    if !r.at_end() {
        return None;
    }
    let (begin, end, value) = schema?;
    (end - begin >= MIN_LEN).then_some((content_col + begin, end - begin, value))
}

/// One JSON collection at the start of `s` followed by nothing but spaces: its value and
/// length in bytes.
fn read_whole(s: &str) -> Option<(Value, usize)> {
    let mut r = Reader::new(s);
    let v = r.value(0)?;
    let len = r.pos;
    r.at_end().then_some((v, len))
}

/// A reader of the JSON subset that YAML's flow syntax reads to the same value.
struct Reader<'a> {
    s: &'a str,
    pos: usize,
    /// The members of the objects being read, innermost last: each object's map is
    /// made once its members are known, at its size (a map grown member by member
    /// reallocates and copies its entries and index).
    members: Vec<(String, Value)>,
    /// The items of the arrays being read, innermost last, for the same reason: each
    /// array is made at its length (pushed one by one, a `Vec` of `Value`s starts at
    /// four, so `"required": ["id"]` held 320 bytes).
    items: Vec<Value>,
}

impl<'a> Reader<'a> {
    fn new(s: &'a str) -> Self {
        Reader {
            s,
            pos: 0,
            members: Vec::new(),
            items: Vec::new(),
        }
    }

    fn peek(&self) -> Option<u8> {
        self.s.as_bytes().get(self.pos).copied()
    }

    fn spaces(&mut self) {
        while self.peek() == Some(b' ') {
            self.pos += 1;
        }
    }

    /// Nothing but spaces left.
    fn at_end(&mut self) -> bool {
        self.spaces();
        self.pos == self.s.len()
    }

    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn value(&mut self, depth: usize) -> Option<Value> {
        if depth > MAX_JSON_DEPTH {
            return None;
        }
        match self.peek()? {
            b'{' => self.object(depth + 1).map(Value::Object),
            b'[' => self.array(depth + 1).map(Value::Array),
            b'"' => self.string().map(Value::String),
            b't' => self.word("true", Value::Bool(true)),
            b'f' => self.word("false", Value::Bool(false)),
            b'n' => self.word("null", Value::Null),
            _ => self.number(),
        }
    }

    fn word(&mut self, w: &str, v: Value) -> Option<Value> {
        self.s[self.pos..].starts_with(w).then(|| {
            self.pos += w.len();
            v
        })
    }

    /// A key, `": "` (YAML needs the space after a plain-looking value), the value.
    fn member(&mut self, depth: usize) -> Option<(String, Value)> {
        let key = self.string()?;
        if !self.s[self.pos..].starts_with(": ") {
            return None;
        }
        self.pos += 2;
        self.spaces();
        // A quoted `<<` could be read as a merge key.
        if key == "<<" {
            return None;
        }
        Some((key, self.value(depth)?))
    }

    /// A whole object's top-level members, each with its value's range; `None` for a
    /// key written twice, as for any object.
    fn members(&mut self) -> Option<Vec<Member>> {
        if !self.eat(b'{') {
            return None;
        }
        let mut members: Vec<Member> = Vec::new();
        self.spaces();
        if self.eat(b'}') {
            return Some(members);
        }
        loop {
            self.spaces();
            let key = self.string()?;
            if !self.s[self.pos..].starts_with(": ") || key == "<<" {
                return None;
            }
            self.pos += 2;
            self.spaces();
            let begin = self.pos;
            let value = self.value(1)?;
            if members.iter().any(|m| m.key == key) {
                return None;
            }
            members.push(Member {
                key,
                begin,
                end: self.pos,
                value,
            });
            self.spaces();
            if self.eat(b'}') {
                return Some(members);
            }
            if !self.eat(b',') {
                return None;
            }
        }
    }

    fn object(&mut self, depth: usize) -> Option<Map<String, Value>> {
        self.pos += 1;
        self.spaces();
        if self.eat(b'}') {
            return Some(Map::new());
        }
        let first = self.members.len();
        loop {
            self.spaces();
            // On `None` the whole read is given up: what is left on the stack is dropped
            // with the reader.
            let member = self.member(depth)?;
            self.members.push(member);
            self.spaces();
            if self.eat(b'}') {
                break;
            }
            if !self.eat(b',') {
                return None;
            }
        }
        let mut map = Map::with_capacity(self.members.len() - first);
        for (k, v) in self.members.drain(first..) {
            if map.insert(k, v).is_some() {
                return None;
            }
        }
        Some(map)
    }

    /// Reads a whole object, noting where the value of its top-level member `name` is
    /// when it is a collection, and that value (read once, not again from its range):
    /// `Some(None)` when it has no such member.
    #[expect(
        clippy::option_option,
        reason = "not an object (None) and an object without the member (Some(None)) differ"
    )]
    fn object_member_range(&mut self, name: &str) -> Option<Option<(usize, usize, Value)>> {
        if !self.eat(b'{') {
            return None;
        }
        let mut seen = foldhash::HashSet::default();
        let mut range = None;
        self.spaces();
        if self.eat(b'}') {
            return Some(None);
        }
        loop {
            self.spaces();
            let key = self.string()?;
            if !self.s[self.pos..].starts_with(": ") || key == "<<" {
                return None;
            }
            self.pos += 2;
            self.spaces();
            let begin = self.pos;
            let collection = matches!(self.peek(), Some(b'{' | b'['));
            let value = self.value(1)?;
            if key == name && collection {
                range = Some((begin, self.pos, value));
            }
            if !seen.insert(key) {
                return None;
            }
            self.spaces();
            if self.eat(b'}') {
                return Some(range);
            }
            if !self.eat(b',') {
                return None;
            }
        }
    }

    fn array(&mut self, depth: usize) -> Option<Vec<Value>> {
        self.pos += 1;
        self.spaces();
        if self.eat(b']') {
            return Some(Vec::new());
        }
        let first = self.items.len();
        loop {
            self.spaces();
            // On `None` the whole read is given up, as for `object`.
            let item = self.value(depth)?;
            self.items.push(item);
            self.spaces();
            if self.eat(b']') {
                break;
            }
            if !self.eat(b',') {
                return None;
            }
        }
        Some(self.items.drain(first..).collect())
    }

    /// A double-quoted string with the escapes YAML reads the same way, and only
    /// characters YAML allows in a scalar.
    fn string(&mut self) -> Option<String> {
        if !self.eat(b'"') {
            return None;
        }
        let mut out = String::new();
        loop {
            let rest = &self.s[self.pos..];
            // Bytes, not characters: only a run with a non-ASCII byte is decoded.
            let mut ascii = true;
            let mut run = rest.len();
            for (i, &b) in rest.as_bytes().iter().enumerate() {
                match b {
                    b'"' | b'\\' => {
                        run = i;
                        break;
                    }
                    0..0x20 | 0x7f => return None,
                    0x80.. => ascii = false,
                    _ => {}
                }
            }
            let plain = &rest[..run];
            if !ascii && plain.chars().any(refused_char) {
                return None;
            }
            out.push_str(plain);
            self.pos += run;
            if self.peek()? == b'"' {
                self.pos += 1;
                // A string with an escape was grown piece by piece, to up to twice its
                // length; it is kept (in the model) to the end of the build.
                if out.len() != plain.len() {
                    out.shrink_to_fit();
                }
                return Some(out);
            }
            self.pos += 1;
            let c = match self.peek()? {
                b'"' => '"',
                b'\\' => '\\',
                b'n' => '\n',
                b'r' => '\r',
                b't' => '\t',
                b'u' => {
                    let hex = self.s.get(self.pos + 1..self.pos + 5)?;
                    if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                        return None;
                    }
                    let c = char::from_u32(u32::from_str_radix(hex, 16).ok()?)?;
                    self.pos += 4;
                    c
                }
                _ => return None,
            };
            self.pos += 1;
            out.push(c);
        }
    }

    /// An integer that fits 64 bits, or a decimal with a fraction and no exponent.
    fn number(&mut self) -> Option<Value> {
        let b = self.s.as_bytes();
        let begin = self.pos;
        let mut i = begin;
        let negative = b.get(i) == Some(&b'-');
        if negative {
            i += 1;
        }
        let digits = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        let int_len = i - digits;
        if int_len == 0 || int_len > 18 || (int_len > 1 && b[digits] == b'0') {
            return None;
        }
        let mut fraction = false;
        if b.get(i) == Some(&b'.') {
            i += 1;
            let f = i;
            while b.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            if i == f {
                return None;
            }
            fraction = true;
        }
        // What may follow a number in flow syntax without changing the scalar.
        if !matches!(b.get(i), None | Some(b' ' | b',' | b']' | b'}')) {
            return None;
        }
        let text = &self.s[begin..i];
        self.pos = i;
        if fraction {
            return Number::from_f64(text.parse().ok()?).map(Value::Number);
        }
        if negative {
            let n: i64 = text.parse().ok()?;
            // `-0` is 0 to YAML, and -0.0 or 0 to JSON readers: leave it to YAML.
            (n != 0).then(|| Value::Number(n.into()))
        } else {
            Some(Value::Number(text.parse::<u64>().ok()?.into()))
        }
    }
}

/// Characters a JSON string may hold raw that YAML refuses or reads differently:
/// controls, DEL and the C1 range, the Unicode line and paragraph separators, the byte
/// order mark and the non-characters U+FFFE and U+FFFF.
fn refused_char(c: char) -> bool {
    matches!(c, '\0'..='\u{1f}' | '\u{7f}'..='\u{9f}' | '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}')
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the YAML parser alone reads.
    fn slow(text: &str) -> String {
        let raw: Spanned<RawManifest> = serde_saphyr::from_str_with_options(
            text,
            super::super::parser_options(text.len(), None),
        )
        .unwrap();
        format!("{raw:?}")
    }

    /// What the fast path reads (panics if it does not take it).
    fn fast(text: &str) -> String {
        let sub = substitute(text).expect("the fast path applies");
        let mut raw: Spanned<RawManifest> = serde_saphyr::from_str_with_options(
            &sub.text,
            super::super::parser_options(text.len(), None),
        )
        .unwrap();
        assert!(sub.restore(&mut raw.value), "every placeholder comes back");
        format!("{raw:?}")
    }

    fn manifest(output: &str) -> String {
        format!(
            "version: 1\noperations:\n  - id: a\n    method: get\n    path: /a\n    output: {output}\n    query:\n      - {{\"name\": \"q\", \"schema\": {output}}}\n      - name: r\n        schema: {output}\n"
        )
    }

    #[test]
    fn values_spans_and_order_are_those_yaml_reads() {
        for json in [
            r#"{"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}"#,
            r#"{"b": 1, "a": -2, "c": 1.5, "d": 0.1, "e": 123456789012345678, "f": null}"#,
            r#"{"t": true, "f": false, "e": [], "o": {}, "n": [[1], [2, [3]]]}"#,
            r#"{"s": "café 日本語 – “x”", "esc": "a\"b\\c\nd\re\tf", "u": "\u00e9\u0041"}"#,
            r##"{"010": "010", "yes": "no", "1_000": "~", "k": "#x", "": "", "a: b": "- c"}"##,
            r#"["x", "y", 1,2,3]"#,
            r#"{"type": ["string", "null"], "enum": ["on", "off", "null", "true"]}"#,
        ] {
            let text = manifest(json);
            assert_eq!(fast(&text), slow(&text), "{json}");
        }
    }

    #[test]
    fn what_yaml_reads_differently_is_left_to_yaml() {
        for json in [
            r#"{"a": 1, "a": 2}"#,
            r#"{"a":1, "b": 2222222}"#,
            r#"{"a": 1e5, "b": 22222222}"#,
            r#"{"a": -0, "b": 22222222}"#,
            r#"{"a": "\ud83d\ude00", "b": 1}"#,
            r#"{"a": "\/", "bbbbbbb": 1}"#,
            "{\"a\": \"\u{85}\", \"bbbbbbb\": 1}",
            r#"{"<<": {"a": 1}, "b": 1}"#,
            r#"{"a": 12345678901234567890}"#,
            r#"{"a": 01, "bbbbbbbbb": 1}"#,
            r#"{"a": 1} # comment"#,
        ] {
            let s = format!("{json}   ");
            assert!(read_whole(&s).is_none(), "{json}");
        }
    }

    #[test]
    fn anchors_turn_the_fast_path_off() {
        let text = manifest(r#"{"type": "object", "properties": {}}"#)
            .replace("    output:", "    output: &s");
        assert!(substitute(&text).is_none());
    }

    #[test]
    fn placeholders_outside_a_schema_field_send_the_caller_back_to_yaml() {
        // `output:` as a property of a block-style schema is not an operation's output.
        let text = "version: 1\noperations:\n  - id: a\n    input:\n      type: object\n      properties:\n        output: {\"type\": \"string\", \"x\": 1}\n";
        assert!(substitute(text).is_none());
        // A line the layout tracker takes for an operation's key, inside a quoted
        // scalar that spans lines: the placeholder lands in the description.
        let text = "version: 1\noperations:\n  - id: a\n    description: \"one\n    output: {\\\"type\\\": \\\"string\\\"}\"\n";
        if let Some(sub) = substitute(text) {
            let mut raw: Spanned<RawManifest> = serde_saphyr::from_str_with_options(
                &sub.text,
                super::super::parser_options(text.len(), None),
            )
            .unwrap();
            assert!(!sub.restore(&mut raw.value));
        }
    }

    /// Every manifest of the repository reads the same through the fast path as through
    /// the YAML parser alone, wherever the fast path applies.
    #[test]
    fn every_case_reads_the_same() {
        let root = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
        let mut taken = 0;
        let mut dirs = vec![root.join("tests/cases"), root.join("examples/manifests")];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                    continue;
                }
                if path.extension().is_none_or(|e| e != "yaml") {
                    continue;
                }
                let text = std::fs::read_to_string(&path).unwrap();
                let Some(sub) = substitute(&text) else {
                    continue;
                };
                let options = || super::super::parser_options(text.len(), None);
                let slow: Result<Spanned<RawManifest>, _> =
                    serde_saphyr::from_str_with_options(&text, options());
                let fast: Result<Spanned<RawManifest>, _> =
                    serde_saphyr::from_str_with_options(&sub.text, options());
                if let (Ok(slow), Ok(mut fast)) = (slow, fast)
                    && sub.restore(&mut fast.value)
                {
                    assert_eq!(
                        format!("{fast:?}"),
                        format!("{slow:?}"),
                        "{}",
                        path.display()
                    );
                    taken += 1;
                }
            }
        }
        assert!(
            taken >= 3,
            "the JSON-flow cases take the fast path ({taken})"
        );
    }

    /// Whole `- {…}` entries, `spends:` and `async:` are read here, into the manifest's
    /// types with every field's span; what they cannot hold is left to the parser.
    #[test]
    fn whole_entries_and_operation_mappings_are_read_into_their_types() {
        let text = "version: 1\noperations:\n  - id: a\n    method: post\n    path: /a/{id}\n    description: \"日本語 – “x”\"\n    query:\n      - {\"name\": \"l\\u00e9é\", \"description\": \"Only “fr-CA” – café.\", \"required\": false, \"explode\": true, \"style\": \"form\", \"schema\": {\"type\": \"string\"}}\n      - {\"name\": \"b\", \"required\": true}\n      - {\"name\": \"c\", \"required\": null, \"schema\": {\"type\": \"integer\"}}\n    params:\n      - {\"name\": \"id\", \"description\": \"\"}\n    headers:\n      - {\"name\": \"X-A\", \"required\": null}\n    spends: {\"kind\": \"credits\", \"note\": \"Costs 1 “credit”.\", \"when\": \"a\", \"payer\": \"customer\"}\n    async: {\"pollWith\": \"b\", \"typicalSeconds\": 90, \"returns\": \"job\", \"cancelWith\": \"c\"}\n  - id: b\n    spends: {\"kind\": \"credits\", \"note\": null}\n    async: {\"pollWith\": \"b\", \"typicalSeconds\": null}\n";
        let sub = substitute(text).unwrap();
        let count = |f: fn(&Taken) -> bool| sub.values.values().filter(|t| f(t)).count();
        assert_eq!(count(|t| matches!(t, Taken::Param(_))), 3);
        assert_eq!(count(|t| matches!(t, Taken::Spends(_))), 1);
        assert_eq!(count(|t| matches!(t, Taken::Async(_))), 1);
        // The entry with a `null` keeps its schema on the fast path.
        assert_eq!(count(|t| matches!(t, Taken::Schema(_))), 1);
        assert_eq!(fast(text), slow(text));
        // `async.status` is a mapping inside the mapping: left to the parser, the same.
        let nested = text.replace(
            "\"returns\": \"job\",",
            "\"returns\": \"job\", \"status\": {\"field\": \"state\", \"done\": [\"ok\"]},",
        );
        assert_ne!(nested, text);
        assert_eq!(
            substitute(&nested)
                .unwrap()
                .values
                .values()
                .filter(|t| matches!(t, Taken::Async(_)))
                .count(),
            0
        );
        assert_eq!(fast(&nested), slow(&nested));
        // The same over CR-LF line breaks.
        let crlf = text.replace('\n', "\r\n");
        assert_eq!(substitute(&crlf).unwrap().values.len(), 6);
        assert_eq!(fast(&crlf), slow(&crlf));
        // A lone CR counts as a line break to the parser: nothing is read with a span.
        let cr = format!("{text}\r");
        assert!(
            substitute(&cr)
                .unwrap()
                .values
                .values()
                .all(|t| matches!(t, Taken::Schema(_)))
        );
    }

    #[test]
    fn block_scalars_are_skipped() {
        let text = "version: 1\noperations:\n  - id: a\n    description: |\n      output: {\"type\": \"string\", \"x\": 1}\n    output: {\"type\": \"integer\", \"y\": 2}\n";
        let sub = substitute(text).unwrap();
        assert_eq!(sub.values.len(), 1);
        assert_eq!(fast(text), slow(text));
    }
}
