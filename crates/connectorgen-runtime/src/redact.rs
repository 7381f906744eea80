//! Redaction by value: every secret the process holds is registered here once, and every
//! text that leaves the process — tool results and errors (`serve`), log lines
//! (`serve::log`), probe reports in every format, the ledger's stored answers — passes
//! through the one `Redactor`, which replaces each secret, however it is encoded, with
//! `[redacted]`.
//!
//! Takes: the secret values (`credential::Environment` registers the credential as read,
//! as placed — `Bearer …`, a `format`, basic's `user:password` and its base64 — and every
//! `fixed:` value read from the environment). Returns: the same text with each of them
//! replaced wherever it appears, in its place in the original text.
//!
//! How: a list of encoded forms can never be complete (a JSON encoder may escape any
//! character as `\u00e9` or `\u00E9`, `/` as `\/`; a URL encoder may encode any character
//! in either hex case). So the text is *decoded* instead — JSON string escapes (any
//! case, surrogate pairs, `\/`), HTML character references (`&amp;`, `&#38;`, `&#x26;`),
//! percent-encoding (any hex case, `+` read both as `+` and as a space) — up to two
//! layers deep in any order (a URL inside JSON, JSON inside a URL, a URL encoded twice),
//! every decoded character remembering the bytes of the original it came from; each
//! secret is searched in every decoded view, and what is replaced is the original bytes
//! the match came from. Texts that are not UTF-8 are redacted chunk by chunk (a secret
//! is valid UTF-8, so it lies inside one valid chunk), before anything cuts them.
//!
//! Must never: keep a secret shorter than `MIN_SECRET` (replacing two letters everywhere
//! would make every text unreadable: `credential::Environment` refuses such a credential
//! at start-up and warns about such a `fixed:` value), be built when it cannot hold every
//! secret (`new` fails, and the command stops: fail closed), or change text that holds no
//! secret. A secret that occurs inside a word the process writes as structure (`content`,
//! `structuredContent`, a tool name: `STRUCTURAL`) would break answers and log lines when
//! replaced: `collides` finds it, and start-up refuses it.
//!
//! What it cannot see: a secret split across two texts, encoded more than two layers
//! deep, or transformed in another way (hashed, reversed, base64 of anything but
//! basic's pair).

use std::sync::{Arc, RwLock};

use aho_corasick::{AhoCorasick, MatchKind};
use base64::Engine as _;
use serde_json::Value;

use crate::client::HttpResponse;

/// What a secret becomes.
pub(crate) const REDACTED: &str = "[redacted]";

/// The shortest value that is redacted.
pub(crate) const MIN_SECRET: usize = 4;

/// Words the process writes as structure — MCP result fields and content types, the
/// serve log's event and field names, the `_meta` key — which a secret must not occur
/// in: replacing it there would break the answer or the line (`collides`). Tool names
/// and the service's name are added at start-up.
pub(crate) const STRUCTURAL: &[&str] = &[
    "content",
    "type",
    "text",
    "image",
    "audio",
    "resource",
    "resource_link",
    "uri",
    "mimeType",
    "blob",
    "data",
    "annotations",
    "structuredContent",
    "isError",
    "_meta",
    "dev.connectorgen/serve",
    "event",
    "start",
    "forwarded",
    "refused",
    "warning",
    "error",
    "tool",
    "method",
    "url",
    "status",
    "key",
    "retry",
    "attempt",
    "problem",
    "message",
    "[redacted]",
];

/// How deep encodings are decoded: a URL in JSON, JSON in a URL, a URL encoded twice.
const DEPTH: usize = 2;

/// The set of secrets, ready to replace. Clones share one set: a secret added to one
/// (`add`: a person's own credential, loaded after start-up) is redacted by all.
#[derive(Clone, Default)]
pub(crate) struct Redactor {
    shared: Arc<RwLock<Set>>,
}

#[derive(Default)]
struct Set {
    /// Every secret's form, as registered.
    all: Vec<String>,
    /// Every secret, as text (leftmost-longest, so a secret that contains another is
    /// replaced whole). `None`: no secret.
    matcher: Option<Arc<AhoCorasick>>,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let count = self.matcher().map_or(0, |m| m.patterns_len());
        write!(f, "Redactor({count} secrets: [redacted])")
    }
}

/// One character of a decoded view, and the bytes of the original text it came from.
#[derive(Clone, Copy)]
struct Unit {
    ch: char,
    start: usize,
    end: usize,
}

/// One layer of encoding a view can take off.
#[derive(Clone, Copy)]
enum Layer {
    Json,
    Html,
    /// Percent-encoding; `true`: `+` is a space (form encoding).
    Percent(bool),
}

impl Redactor {
    /// A redactor for `secrets` (each also trimmed). Fails when the matcher cannot be
    /// built: a command then stops rather than run without redaction.
    pub(crate) fn new<S: AsRef<str>>(
        secrets: impl IntoIterator<Item = S>,
    ) -> Result<Redactor, String> {
        let redactor = Redactor::default();
        redactor.add(secrets)?;
        Ok(redactor)
    }

    /// Adds `secrets` (each also trimmed) to the set every clone redacts. Fails, with the
    /// set unchanged, when the matcher cannot be built: the caller then does not use the
    /// secret (fail closed).
    pub(crate) fn add<S: AsRef<str>>(
        &self,
        secrets: impl IntoIterator<Item = S>,
    ) -> Result<(), String> {
        let mut set = self
            .shared
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut all = set.all.clone();
        for secret in secrets {
            let secret = secret.as_ref();
            for form in [secret, secret.trim()] {
                if form.chars().count() >= MIN_SECRET && !all.iter().any(|s| s == form) {
                    all.push(form.to_string());
                }
            }
        }
        if all.len() == set.all.len() {
            return Ok(());
        }
        let matcher = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .build(&all)
            .map_err(|e| format!("the secrets could not be prepared for redaction ({e})"))?;
        set.all = all;
        set.matcher = Some(Arc::new(matcher));
        Ok(())
    }

    fn matcher(&self) -> Option<Arc<AhoCorasick>> {
        self.shared
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .matcher
            .clone()
    }

    /// Whether there is nothing to redact.
    pub(crate) fn is_empty(&self) -> bool {
        self.matcher().is_none()
    }

    /// The first of `words` a secret occurs in (in any encoding): a secret that would be
    /// replaced inside the structure the process writes.
    pub(crate) fn collides<'w>(&self, words: impl IntoIterator<Item = &'w str>) -> Option<&'w str> {
        words.into_iter().find(|w| !self.spans(w).is_empty())
    }

    /// `text` with every secret replaced.
    pub(crate) fn text(&self, text: &str) -> String {
        let spans = self.spans(text);
        if spans.is_empty() {
            return text.to_string();
        }
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for (start, end) in spans {
            out.push_str(&text[at..start]);
            out.push_str(REDACTED);
            at = end;
        }
        out.push_str(&text[at..]);
        out
    }

    /// The byte ranges of `text` that hold a secret in some encoding, sorted and merged.
    fn spans(&self, text: &str) -> Vec<(usize, usize)> {
        let Some(matcher) = self.matcher() else {
            return Vec::new();
        };
        let raw: Vec<Unit> = text
            .char_indices()
            .map(|(i, ch)| Unit {
                ch,
                start: i,
                end: i + ch.len_utf8(),
            })
            .collect();
        let mut found = Vec::new();
        let mut views = vec![(raw, 0)];
        while let Some((units, depth)) = views.pop() {
            search(&matcher, &units, &mut found);
            if depth == DEPTH {
                continue;
            }
            for layer in [
                Layer::Json,
                Layer::Html,
                Layer::Percent(false),
                Layer::Percent(true),
            ] {
                if let Some(decoded) = decode(&units, layer) {
                    views.push((decoded, depth + 1));
                }
            }
        }
        found.sort_unstable();
        let mut merged: Vec<(usize, usize)> = Vec::with_capacity(found.len());
        for (start, end) in found {
            match merged.last_mut() {
                Some(last) if start <= last.1 => last.1 = last.1.max(end),
                _ => merged.push((start, end)),
            }
        }
        merged
    }

    /// Bytes with every secret replaced: UTF-8 text whole, anything else chunk by chunk
    /// (the valid runs between bytes that are not UTF-8), so a body is redacted before
    /// anything cuts or re-encodes it.
    pub(crate) fn bytes(&self, bytes: Vec<u8>) -> Vec<u8> {
        if self.is_empty() {
            return bytes;
        }
        match String::from_utf8(bytes) {
            Ok(text) => self.text(&text).into_bytes(),
            Err(e) => {
                let bytes = e.into_bytes();
                let mut out = Vec::with_capacity(bytes.len());
                for chunk in bytes.utf8_chunks() {
                    out.extend_from_slice(self.text(chunk.valid()).as_bytes());
                    out.extend_from_slice(chunk.invalid());
                }
                out
            }
        }
    }

    /// Every string of `value` (keys included) with every secret replaced, except the
    /// base64 text of a `blob` (binary data, redacted as bytes when it arrived).
    pub(crate) fn value(&self, value: Value) -> Value {
        if self.is_empty() {
            return value;
        }
        match value {
            Value::String(s) => Value::String(self.text(&s)),
            Value::Array(items) => Value::Array(items.into_iter().map(|v| self.value(v)).collect()),
            Value::Object(map) => Value::Object(
                map.into_iter()
                    .map(|(k, v)| {
                        if k == "blob" {
                            (k, v)
                        } else {
                            (self.text(&k), self.value(v))
                        }
                    })
                    .collect(),
            ),
            other => other,
        }
    }
}

impl Redactor {
    /// A provider's answer with every secret replaced in its headers and body, before
    /// anything reads it.
    pub(crate) fn http_response(&self, mut response: HttpResponse) -> HttpResponse {
        if self.is_empty() {
            return response;
        }
        for (_, value) in &mut response.headers {
            *value = self.text(value);
        }
        response.body = self.bytes(std::mem::take(&mut response.body));
        response
    }
}

/// Adds to `found` the original byte range of every secret in the view `units`.
fn search(matcher: &AhoCorasick, units: &[Unit], found: &mut Vec<(usize, usize)>) {
    let mut decoded = String::with_capacity(units.len());
    // The byte offset in `decoded` where each unit starts.
    let mut starts = Vec::with_capacity(units.len());
    for unit in units {
        starts.push(decoded.len());
        decoded.push(unit.ch);
    }
    for m in matcher.find_iter(&decoded) {
        let first = starts.partition_point(|&s| s < m.start());
        let last = starts.partition_point(|&s| s < m.end()) - 1;
        if let (Some(a), Some(b)) = (units.get(first), units.get(last)) {
            found.push((a.start, b.end));
        }
    }
}

/// The view with one `layer` of encoding taken off, or `None` when the view holds none.
fn decode(units: &[Unit], layer: Layer) -> Option<Vec<Unit>> {
    let trigger = match layer {
        Layer::Json => '\\',
        Layer::Html => '&',
        Layer::Percent(false) => '%',
        Layer::Percent(true) => '+',
    };
    if !units.iter().any(|u| u.ch == trigger) {
        return None;
    }
    let out = match layer {
        Layer::Json => json_unescape(units),
        Layer::Html => html_unescape(units),
        Layer::Percent(plus) => percent_decode(units, plus),
    };
    let changed = out.len() != units.len() || out.iter().zip(units).any(|(a, b)| a.ch != b.ch);
    changed.then_some(out)
}

/// A unit spanning the original bytes of `units[from..=to]`.
fn spanning(units: &[Unit], from: usize, to: usize, ch: char) -> Unit {
    Unit {
        ch,
        start: units[from].start,
        end: units[to].end,
    }
}

/// The value of `count` hex digits at `units[at..]`.
fn hex_at(units: &[Unit], at: usize, count: usize) -> Option<u32> {
    units
        .get(at..at + count)?
        .iter()
        .try_fold(0u32, |acc, u| u.ch.to_digit(16).map(|d| acc * 16 + d))
}

/// JSON string escapes: `\" \\ \/ \b \f \n \r \t` and `\uXXXX` in either hex case,
/// surrogate pairs joined. Anything else stays as it is.
fn json_unescape(units: &[Unit]) -> Vec<Unit> {
    let mut out = Vec::with_capacity(units.len());
    let mut i = 0;
    while i < units.len() {
        if units[i].ch == '\\'
            && let Some(next) = units.get(i + 1).map(|u| u.ch)
        {
            let simple = match next {
                '"' | '\\' | '/' => Some(next),
                'b' => Some('\u{8}'),
                'f' => Some('\u{c}'),
                'n' => Some('\n'),
                'r' => Some('\r'),
                't' => Some('\t'),
                _ => None,
            };
            if let Some(ch) = simple {
                out.push(spanning(units, i, i + 1, ch));
                i += 2;
                continue;
            }
            if next == 'u'
                && let Some(high) = hex_at(units, i + 2, 4)
            {
                if (0xD800..0xDC00).contains(&high)
                    && units.get(i + 6).map(|u| u.ch) == Some('\\')
                    && units.get(i + 7).map(|u| u.ch) == Some('u')
                    && let Some(low) = hex_at(units, i + 8, 4)
                    && (0xDC00..0xE000).contains(&low)
                    && let Some(ch) =
                        char::from_u32(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
                {
                    out.push(spanning(units, i, i + 11, ch));
                    i += 12;
                    continue;
                }
                if let Some(ch) = char::from_u32(high) {
                    out.push(spanning(units, i, i + 5, ch));
                    i += 6;
                    continue;
                }
            }
        }
        out.push(units[i]);
        i += 1;
    }
    out
}

/// HTML character references: `&#NN;`, `&#xHH;` (either case) and the named ones an
/// escaper writes (`&amp; &lt; &gt; &quot; &apos; &nbsp;`).
fn html_unescape(units: &[Unit]) -> Vec<Unit> {
    let mut out = Vec::with_capacity(units.len());
    let mut i = 0;
    while i < units.len() {
        if units[i].ch == '&'
            && let Some(semi) = units[i + 1..]
                .iter()
                .take(12)
                .position(|u| u.ch == ';')
                .map(|p| i + 1 + p)
        {
            let name: String = units[i + 1..semi].iter().map(|u| u.ch).collect();
            let ch = match name.as_str() {
                "amp" => Some('&'),
                "lt" => Some('<'),
                "gt" => Some('>'),
                "quot" => Some('"'),
                "apos" => Some('\''),
                "nbsp" => Some('\u{a0}'),
                _ => name.strip_prefix('#').and_then(|n| {
                    let code = match n.strip_prefix(['x', 'X']) {
                        Some(hex) => u32::from_str_radix(hex, 16).ok(),
                        None => n.parse::<u32>().ok(),
                    };
                    code.and_then(char::from_u32)
                }),
            };
            if let Some(ch) = ch {
                out.push(spanning(units, i, semi, ch));
                i = semi + 1;
                continue;
            }
        }
        out.push(units[i]);
        i += 1;
    }
    out
}

/// Percent-encoding in either hex case, runs of `%XX` read as UTF-8 (a run that is not
/// stays as it is); with `plus`, `+` is a space.
fn percent_decode(units: &[Unit], plus: bool) -> Vec<Unit> {
    let mut out = Vec::with_capacity(units.len());
    let mut i = 0;
    while i < units.len() {
        if units[i].ch == '%' {
            let mut bytes = Vec::new();
            let mut j = i;
            while units.get(j).map(|u| u.ch) == Some('%')
                && let Some(byte) = hex_at(units, j + 1, 2)
            {
                bytes.push(u8::try_from(byte).unwrap_or(0));
                j += 3;
            }
            if bytes.is_empty() {
                out.push(units[i]);
                i += 1;
                continue;
            }
            // Byte `k` of the run is `units[i + 3k ..= i + 3k + 2]`.
            let mut k = 0;
            for chunk in bytes.utf8_chunks() {
                for ch in chunk.valid().chars() {
                    let len = ch.len_utf8();
                    out.push(spanning(units, i + 3 * k, i + 3 * (k + len) - 1, ch));
                    k += len;
                }
                for _ in chunk.invalid() {
                    out.extend_from_slice(&units[i + 3 * k..i + 3 * k + 3]);
                    k += 1;
                }
            }
            i = j;
            continue;
        }
        if plus && units[i].ch == '+' {
            out.push(Unit {
                ch: ' ',
                ..units[i]
            });
        } else {
            out.push(units[i]);
        }
        i += 1;
    }
    out
}

/// The base64 forms of basic's `user:password`, as `Authorization: Basic` carries it
/// (and as a URL-safe encoder would write it).
pub(crate) fn base64_forms(text: &str) -> [String; 4] {
    use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
    [
        STANDARD.encode(text),
        STANDARD_NO_PAD.encode(text),
        URL_SAFE.encode(text),
        URL_SAFE_NO_PAD.encode(text),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use percent_encoding::{AsciiSet, CONTROLS, NON_ALPHANUMERIC, utf8_percent_encode};

    /// Keys of every character class: alphanumerics, the unreserved `-._~`, base64's
    /// `+/=`, every reserved character, `%`, spaces, non-ASCII (one outside the BMP, a
    /// surrogate pair in JSON), a control character, quotes and `&`.
    const KEYS: [&str; 11] = [
        "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
        "a-b.c_d~e-f.g_h~",
        "ab+cd/ef==",
        "k:/?#[]@!$&'()*+,;=end",
        "100%-sure%20not",
        "two words here",
        "clé-sécrète-ünï",
        "Zm9v-YmFy_YmF6~+/=:?#",
        "tab\there\"quote\\back",
        "key-🔑-with-astral",
        "<b>&amp;\"it's\"</b>",
    ];

    /// The request builder's set (`request::STRICT`): all but `A-Z a-z 0-9 - . _ ~`.
    const STRICT: &AsciiSet = &NON_ALPHANUMERIC
        .remove(b'-')
        .remove(b'.')
        .remove(b'_')
        .remove(b'~');

    /// What a URL parser encodes in a query it was handed unencoded (WHATWG).
    const URL_QUERY: &AsciiSet = &CONTROLS
        .add(b' ')
        .add(b'"')
        .add(b'#')
        .add(b'<')
        .add(b'>')
        .add(b'\'');

    /// `%2F` → `%2f`.
    fn lower_hex(encoded: &str) -> String {
        let mut out = String::new();
        let mut rest = encoded;
        while let Some(at) = rest.find('%') {
            out.push_str(&rest[..=at]);
            let hex = rest.get(at + 1..at + 3).unwrap_or_default();
            out.push_str(&hex.to_ascii_lowercase());
            rest = &rest[at + 1 + hex.len()..];
        }
        out.push_str(rest);
        out
    }

    /// Every character but ASCII letters and digits as `\uXXXX` (UTF-16, so a surrogate
    /// pair outside the BMP), hex in `upper` or lower case; `/` as `\/` when `solidus`.
    fn json_escaped(key: &str, upper: bool, solidus: bool) -> String {
        key.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_string()
                } else if c == '/' && solidus {
                    "\\/".to_string()
                } else {
                    c.encode_utf16(&mut [0; 2])
                        .iter()
                        .map(|u| {
                            if upper {
                                format!("\\u{u:04X}")
                            } else {
                                format!("\\u{u:04x}")
                            }
                        })
                        .collect()
                }
            })
            .collect()
    }

    /// Go's `encoding/json`: `<`, `>`, `&` as `\u003c`-style escapes, the rest as serde.
    fn go_json(key: &str) -> String {
        serde_json::to_string(key)
            .unwrap()
            .trim_matches('"')
            .replace('<', "\\u003c")
            .replace('>', "\\u003e")
            .replace('&', "\\u0026")
    }

    /// Every form an encoder this process or a provider uses may give `key`.
    fn encodings(key: &str) -> Vec<String> {
        let json = serde_json::to_string(key).unwrap();
        let json = json.trim_matches('"').to_string();
        let mut out = vec![
            key.to_string(),
            json.clone(),
            json.replace('/', "\\/"),
            go_json(key),
            json_escaped(key, true, false),
            json_escaped(key, false, false),
            json_escaped(key, true, true),
            // HTML: an escaper's named references, decimal and hex for every character.
            key.replace('&', "&amp;")
                .replace('<', "&lt;")
                .replace('>', "&gt;")
                .replace('"', "&quot;")
                .replace('\'', "&#x27;"),
            key.chars().map(|c| format!("&#{};", c as u32)).collect(),
            key.chars().map(|c| format!("&#X{:X};", c as u32)).collect(),
            form_urlencoded::byte_serialize(key.as_bytes()).collect(),
            lower_hex(&form_urlencoded::byte_serialize(key.as_bytes()).collect::<String>()),
            utf8_percent_encode(key, STRICT)
                .to_string()
                .replace("%20", "+"),
        ];
        for set in [STRICT, NON_ALPHANUMERIC, URL_QUERY] {
            let upper = utf8_percent_encode(key, set).to_string();
            out.push(lower_hex(&upper));
            // A URL in JSON (Go escapes `&`), a URL encoded twice, JSON in a URL.
            out.push(go_json(&upper));
            out.push(utf8_percent_encode(&upper, STRICT).to_string());
            out.push(utf8_percent_encode(&json_escaped(key, true, true), STRICT).to_string());
            out.push(upper);
        }
        out
    }

    #[test]
    fn every_encoding_of_every_key_is_replaced() {
        for key in KEYS {
            let r = Redactor::new([key]).unwrap();
            for form in encodings(key) {
                let text = format!("before {form} after");
                assert_eq!(
                    r.text(&text),
                    "before [redacted] after",
                    "{key:?} as {form:?}"
                );
            }
        }
    }

    #[test]
    fn a_key_in_a_url_the_request_builder_made_is_replaced() {
        for key in KEYS {
            let r = Redactor::new([key]).unwrap();
            let url = format!(
                "error sending request for url (http://127.0.0.1:1/v1/x?api_key={}&limit=2)",
                utf8_percent_encode(key, STRICT)
            );
            assert_eq!(
                r.text(&url),
                "error sending request for url (http://127.0.0.1:1/v1/x?api_key=[redacted]&limit=2)",
                "{key:?}"
            );
        }
    }

    #[test]
    fn a_key_in_json_is_replaced_and_the_json_stays_valid() {
        for key in KEYS {
            let r = Redactor::new([key]).unwrap();
            for body in [
                serde_json::json!({ "echo": key, "n": 1 }).to_string(),
                format!(r#"{{"echo":"{}","n":1}}"#, json_escaped(key, true, true)),
                format!(r#"{{"echo":"{}","n":1}}"#, go_json(key)),
            ] {
                let out = r.text(&body);
                let value: Value = serde_json::from_str(&out).unwrap();
                assert_eq!(value["echo"], REDACTED, "{key:?}: {body} -> {out}");
            }
        }
    }

    #[test]
    fn text_without_a_secret_is_unchanged() {
        let r = Redactor::new(["sk_live_4eC39Hq"]).unwrap();
        for text in [
            r#"{"a":"\u00E9\/x","b":"%41%zz%","c":"&amp;&#x41;&bogus;"}"#,
            "sk_live_4eC39H q, sk_live_4eC39%48",
            "",
        ] {
            assert_eq!(r.text(text), text);
        }
    }

    #[test]
    fn the_longest_secret_wins_and_short_ones_are_not_kept() {
        let r = Redactor::new(["s3cr&t", "Bearer s3cr&t", "ab"]).unwrap();
        assert_eq!(
            r.text("https://x/?api_key=s3cr%26t and Bearer s3cr&t, ab"),
            "https://x/?api_key=[redacted] and [redacted], ab"
        );
        assert!(Redactor::new(["abc"]).unwrap().is_empty());
        assert!(!format!("{r:?}").contains("s3cr"));
    }

    #[test]
    fn values_are_redacted_everywhere_but_blobs() {
        let r = Redactor::new(["topsecret"]).unwrap();
        let v = serde_json::json!({ "a": ["x topsecret"], "topsecret": 1, "blob": "topsecret" });
        assert_eq!(
            r.value(v),
            serde_json::json!({ "a": ["x [redacted]"], "[redacted]": 1, "blob": "topsecret" })
        );
        assert_eq!(r.bytes(b"k=topsecret".to_vec()), b"k=[redacted]");
    }

    /// Defect 4: a body that is not UTF-8 is redacted chunk by chunk, not passed on.
    #[test]
    fn bytes_that_are_not_utf8_are_redacted_around_the_bad_bytes() {
        let r = Redactor::new(["topsecret"]).unwrap();
        assert_eq!(
            r.bytes(b"\xff k=topsecret \xc3 top%73ecret\xfe".to_vec()),
            b"\xff k=[redacted] \xc3 [redacted]\xfe"
        );
        assert_eq!(r.bytes(vec![0xff, b't']), vec![0xff, b't']);
    }

    /// Defect 8: a secret inside a word the process writes as structure is found.
    #[test]
    fn a_secret_inside_a_structural_word_collides() {
        let r = Redactor::new(["sk_live_4eC39Hq"]).unwrap();
        assert_eq!(r.collides(STRUCTURAL.iter().copied()), None);
        let r = Redactor::new(["tructured"]).unwrap();
        assert_eq!(
            r.collides(STRUCTURAL.iter().copied()),
            Some("structuredContent")
        );
        let r = Redactor::new(["getThing"]).unwrap();
        assert_eq!(r.collides(["listThings", "getThing"]), Some("getThing"));
    }

    #[test]
    fn basic_pairs_have_every_base64_form() {
        let forms = base64_forms("us?er:pa>>ss");
        assert!(forms.contains(&"dXM/ZXI6cGE+PnNz".to_string()), "{forms:?}");
        assert!(forms.contains(&"dXM_ZXI6cGE-PnNz".to_string()), "{forms:?}");
    }
}
