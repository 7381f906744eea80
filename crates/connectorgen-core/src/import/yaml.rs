//! Writing YAML by hand, safely: the few scalar forms `import` needs.
//!
//! Takes: any text. Returns: a scalar that reads back as exactly that text, or comment
//! text that stays on its line.
//! Must never: let text end a line, start a key, or hide a character from a reviewer.

use std::fmt::Write as _;

/// `s` as a YAML scalar that reads back as exactly `s`: plain when it is a simple name or
/// relative path that no YAML reader takes for anything but a string, else quoted.
pub(crate) fn scalar(s: &str) -> String {
    const NOT_STRINGS: [&str; 9] = ["true", "false", "null", "yes", "no", "on", "off", "y", "n"];
    let first_ok = s
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || matches!(c, '_' | '/'))
        || s.starts_with("./")
        || s.starts_with("../");
    let plain = first_ok
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | '-'))
        && !NOT_STRINGS.contains(&s.to_ascii_lowercase().as_str());
    if plain { s.to_string() } else { yaml_quote(s) }
}

/// `s` as a YAML double-quoted scalar. Besides `"` and `\`, every character that is
/// not printable in YAML, that some reader takes for a line break, or that is invisible
/// (bidirectional controls, zero-width and tag characters) is escaped, so the text
/// reads back exactly and a reviewer sees what it holds.
pub(crate) fn yaml_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            // Whitespace other than a space (NBSP, the ideographic space, …) is escaped too:
            // it reads back the same, and a reviewer sees it.
            c if (hidden(c) || c.is_whitespace() && c != ' ') && u32::from(c) <= 0xFFFF => {
                let _ = write!(out, "\\u{:04X}", u32::from(c));
            }
            c if hidden(c) => {
                let _ = write!(out, "\\U{:08X}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Characters a YAML file should not hold as they are.
fn hidden(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061C}'
                | '\u{180E}'
                | '\u{200B}'..='\u{200F}'
                | '\u{2028}'..='\u{202E}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{2069}'
                | '\u{FEFF}'
                | '\u{FFF9}'..='\u{FFFB}'
                | '\u{FFFE}'
                | '\u{FFFF}'
                | '\u{E0000}'..='\u{E007F}'
        )
}

/// Text from the document for inside a comment: at most 100 characters, and quoted
/// (escaped) when it holds anything that could end the comment line or hide.
pub(super) fn comment(s: &str) -> String {
    let shown = shorten(s);
    if shown
        .chars()
        .any(|c| hidden(c) || c.is_whitespace() && c != ' ')
    {
        yaml_quote(&shown)
    } else {
        shown
    }
}

/// At most 100 characters of `s`, with `…` when cut.
pub(super) fn shorten(s: &str) -> String {
    let mut shown: String = s.chars().take(100).collect();
    if shown.len() < s.len() {
        shown.push('…');
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::{Map, Value};

    /// What the manifest parser reads back from `key: <text>`.
    fn read_back(line: &str) -> Value {
        crate::manifest::parse_value(line).unwrap_or_else(|e| panic!("{line:?}: {e}"))
    }

    /// Characters that matter to YAML, to JSON escapes, to line breaking and to hiding.
    fn tricky() -> impl Strategy<Value = String> {
        let c = prop_oneof![
            any::<char>(),
            prop::sample::select(vec![
                '\n',
                '\r',
                '\t',
                '#',
                ':',
                ' ',
                '"',
                '\'',
                '\\',
                '{',
                '}',
                '[',
                ']',
                '-',
                '?',
                '&',
                '*',
                '!',
                '|',
                '>',
                '%',
                '@',
                '`',
                ',',
                '~',
                '.',
                '/',
                '\u{85}',
                '\u{2028}',
                '\u{2029}',
                '\u{feff}',
                '\u{202e}',
                '\u{7f}',
                '\u{0}',
                '\u{e0041}',
                'y',
                'n',
                'e',
                '0',
                '1',
            ]),
        ];
        prop::collection::vec(c, 0..24).prop_map(|v| v.into_iter().collect())
    }

    proptest! {
        #[test]
        fn scalars_read_back_exactly(s in tricky()) {
            let doc = read_back(&format!("k: {}\nnext: 1\n", scalar(&s)));
            prop_assert_eq!(&doc["k"], &Value::String(s.clone()));
            prop_assert_eq!(doc.as_object().map(Map::len), Some(2));
        }

        #[test]
        fn comments_stay_on_their_line(s in tricky()) {
            let shown = comment(&s);
            prop_assert!(!shown.chars().any(|c| hidden(c) || c.is_whitespace() && c != ' '));
            let doc = read_back(&format!("k: v  # {shown}\nnext: 1\n"));
            prop_assert_eq!(doc, serde_json::json!({"k": "v", "next": 1}));
        }
    }

    #[test]
    fn scalars_are_plain_only_when_nothing_can_misread_them() {
        for plain in [
            "jobs.create",
            "post-v2",
            "_x",
            "../specs/api.json",
            "/abs/api.yaml",
        ] {
            assert_eq!(scalar(plain), plain);
        }
        for quoted in [
            "true",
            "No",
            "null",
            "123",
            "1e3",
            ".inf",
            "",
            "a b",
            "a: b",
            "a #b",
            "-a",
            "~",
            "GET /a",
            "https://a.example",
        ] {
            assert!(scalar(quoted).starts_with('"'), "{quoted}");
        }
        assert_eq!(
            yaml_quote("a\u{202e}b\u{e0041}\n"),
            "\"a\\u202Eb\\U000E0041\\n\""
        );
    }
}
