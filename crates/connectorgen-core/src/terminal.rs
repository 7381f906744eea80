//! Text from a manifest on its way to a terminal or a CI log.
//!
//! Takes: any text (manifest values, snippets, generated prose, file contents). Returns:
//! the same text with every character that could act on a terminal or reorder what a
//! reviewer sees written visibly as `\u{…}` — C0 controls but tab and newline, DEL, C1
//! controls (with U+0085), bidi overrides, isolates and marks, and the Unicode line and
//! paragraph separators — or, for JSON, written as `\u` escapes without changing the
//! value.
//! `one_line` also escapes line breaks, for text that must stay on its own line.
//! Must never: change text that holds none of those characters, or decide where text
//! goes: callers escape what they print, and machine formats keep their values exact.

use std::borrow::Cow;
use std::fmt::Write as _;

/// Whether `c` must not reach a terminal raw. Tab and newline are layout and stay.
pub(crate) fn is_unsafe(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{8}' | '\u{b}'..='\u{1f}' | '\u{7f}'..='\u{9f}'
        // Arabic letter mark, left-to-right and right-to-left marks
        | '\u{61c}' | '\u{200e}' | '\u{200f}'
        // line and paragraph separators, then the embeddings and overrides (LRE … RLO)
        | '\u{2028}'..='\u{202e}'
        // the isolates (LRI, RLI, FSI, PDI)
        | '\u{2066}'..='\u{2069}')
}

/// `text` with each unsafe character written as `\u{1b}` (lowercase hex, Rust's form).
pub fn escape(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_unsafe) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        push(&mut out, c);
    }
    Cow::Owned(out)
}

/// `text` for a line of its own (a one-line error, a success line): `escape`, and the
/// line breaks escaped too, so that no part of it starts a line (a GitHub Actions log
/// runs a line that starts with `::error` as a workflow command).
pub fn one_line(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|c| c == '\n' || is_unsafe(c)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if c == '\n' {
            out.push_str("\\u{a}");
        } else {
            push(&mut out, c);
        }
    }
    Cow::Owned(out)
}

/// Appends `c`, escaped when it is unsafe.
pub(crate) fn push(out: &mut String, c: char) {
    if is_unsafe(c) {
        let _ = write!(out, "\\u{{{:x}}}", c as u32);
    } else {
        out.push(c);
    }
}

/// Serialised JSON with the unsafe characters `serde_json` leaves raw (DEL, C1, bidi,
/// U+2028/2029) written as `\uXXXX`: the document parses to the same values, and
/// printing it cannot drive a terminal. `serde_json` already escapes the C0 controls,
/// and these characters can only occur inside JSON strings, so replacing them in the
/// text is exact.
pub(crate) fn json_ascii_controls(json: String) -> String {
    if !json.chars().any(is_unsafe) {
        return json;
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if is_unsafe(c) {
            let _ = write!(out, "\\u{:04x}", c as u32);
        } else {
            out.push(c);
        }
    }
    out
}

/// At most `max` characters of `text`, with `…` standing for the rest.
pub(crate) fn clip(text: &str, max: usize) -> Cow<'_, str> {
    match text.char_indices().nth(max) {
        None => Cow::Borrowed(text),
        Some((end, _)) => Cow::Owned(format!("{}…", &text[..end])),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_only_what_acts_on_a_terminal() {
        assert_eq!(
            escape("plain\ttext\nnext é 日本"),
            "plain\ttext\nnext é 日本"
        );
        assert_eq!(
            escape("\u{1b}]0;t\u{7}\r\0\u{7f}\u{85}\u{9b}\u{202e}\u{2066}\u{2028}\u{200f}"),
            "\\u{1b}]0;t\\u{7}\\u{d}\\u{0}\\u{7f}\\u{85}\\u{9b}\\u{202e}\\u{2066}\\u{2028}\\u{200f}"
        );
    }

    #[test]
    fn one_line_escapes_line_breaks_too() {
        assert_eq!(one_line("a b\tc é"), "a b\tc é");
        assert_eq!(
            one_line("x\n::error title=forged::y\r\n\u{1b}[2J"),
            "x\\u{a}::error title=forged::y\\u{d}\\u{a}\\u{1b}[2J"
        );
    }

    #[test]
    fn json_keeps_its_values() {
        let value = serde_json::json!({ "m": "a\u{1b}\u{7f}\u{85}\u{202e}\u{2029}b é" });
        let text = json_ascii_controls(serde_json::to_string(&value).unwrap());
        assert_eq!(text, r#"{"m":"a\u001b\u007f\u0085\u202e\u2029b é"}"#);
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&text).unwrap(),
            value
        );
    }

    #[test]
    fn clips_at_a_character_count() {
        assert_eq!(clip("ééé", 3), "ééé");
        assert_eq!(clip("éééé", 3), "ééé…");
    }
}
