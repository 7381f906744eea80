//! The block structure of a generated Markdown file, as a CommonMark reader would see
//! it: headings, quotes, list items, fenced code and anything else that starts a block.
//! Shared by tests/properties.rs and the fuzz target (through `#[path]`), so both judge
//! "forged structure" the same way.
//!
//! Takes: the text of llms.txt or descriptions.md. Returns: `Structure`.
//! Must never: be more lenient than CommonMark — it errs the other way (any line that
//! could open a block the generator does not write counts as `other`).

/// What starts each block of a Markdown file, outside fenced code.
#[derive(Debug, Default)]
pub(crate) struct Structure<'a> {
    /// ATX headings (`# …` to `###### …`), as whole lines.
    pub headings: Vec<&'a str>,
    /// Block quotes (`> …`).
    pub quotes: Vec<&'a str>,
    /// Bullet list items (`- `, `* `, `+ `).
    pub bullets: Vec<&'a str>,
    /// Ordered list items (`1. `, `2) `).
    pub ordered: Vec<&'a str>,
    /// The contents of every fenced code block, in order.
    pub fences: Vec<String>,
    /// Any other block start (HTML, table, setext underline, thematic break, link
    /// reference definition, indented code), with what it is.
    pub other: Vec<(&'static str, &'a str)>,
}

/// The lines of `text` as CommonMark splits them (at `\n`, `\r\n` or a lone `\r`),
/// each with the byte offset where it starts.
fn lines(text: &str) -> Vec<(usize, &str)> {
    let mut lines = Vec::new();
    let mut start = 0;
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => {
                lines.push((start, &text[start..i]));
                start = i + 1;
            }
            b'\r' => {
                lines.push((start, &text[start..i]));
                if bytes.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    if start < text.len() {
        lines.push((start, &text[start..]));
    }
    lines
}

/// Text without the one line ending it ends with, if any.
fn without_line_ending(text: &str) -> &str {
    text.strip_suffix("\r\n")
        .or_else(|| text.strip_suffix('\n'))
        .or_else(|| text.strip_suffix('\r'))
        .unwrap_or(text)
}

/// Reads the block structure of `markdown`.
pub(crate) fn structure(markdown: &str) -> Structure<'_> {
    let mut s = Structure::default();
    // The open fence's character and length, and where its contents start.
    let mut fence: Option<(char, usize, usize)> = None;
    for (offset, line) in lines(markdown) {
        let body = line.trim_start_matches(' ');
        let indent = line.len() - body.len();
        let marker = body.chars().next().filter(|c| *c == '`' || *c == '~');
        let run = marker.map_or(0, |m| body.chars().take_while(|&c| c == m).count());
        if let Some((m, len, from)) = fence {
            let closes =
                indent <= 3 && marker == Some(m) && run >= len && body[run..].trim().is_empty();
            if closes {
                // Byte for byte, line endings inside included.
                let inside = if offset > from {
                    &markdown[from..offset]
                } else {
                    ""
                };
                s.fences.push(without_line_ending(inside).to_string());
                fence = None;
            }
            continue;
        }
        if indent <= 3 && run >= 3 {
            // A backtick fence's info string may not contain backticks.
            if marker != Some('`') || !body[run..].contains('`') {
                let after_line = offset + line.len();
                let from = markdown[after_line..]
                    .strip_prefix("\r\n")
                    .or_else(|| markdown[after_line..].strip_prefix('\n'))
                    .or_else(|| markdown[after_line..].strip_prefix('\r'))
                    .map_or(markdown.len(), |rest| markdown.len() - rest.len());
                fence = marker.map(|m| (m, run, from));
                continue;
            }
        }
        match block_start(line) {
            None => {}
            Some("heading") => s.headings.push(line),
            Some("quote") => s.quotes.push(line),
            Some("bullet") => s.bullets.push(line),
            Some("ordered") => s.ordered.push(line),
            Some(kind) => s.other.push((kind, line)),
        }
    }
    if let Some((_, _, from)) = fence {
        // An unclosed fence runs to the end of the file: still a fence, and a finding.
        s.fences.push(markdown[from..].to_string());
        s.other.push(("unclosed fence", ""));
    }
    s
}

/// What kind of block `line` would start, if any (outside fenced code).
fn block_start(line: &str) -> Option<&'static str> {
    if line.starts_with('\t') || line.starts_with("    ") {
        return (!line.trim().is_empty()).then_some("indented code");
    }
    let body = line.trim_start_matches(' ');
    let first = body.chars().next()?;
    let after = |n: usize| body[n..].chars().next();
    let hashes = body.chars().take_while(|&c| c == '#').count();
    if (1..=6).contains(&hashes) && after(hashes).is_none_or(|c| c == ' ' || c == '\t') {
        return Some("heading");
    }
    // A setext underline (`=`, `---`) or a thematic break (`***`, `- - -`, `___`).
    let marks: Vec<char> = body.chars().filter(|c| !c.is_whitespace()).collect();
    if marks.iter().all(|&c| c == '=') {
        return Some("setext underline");
    }
    if marks.len() >= 3 && "-*_".contains(marks[0]) && marks.iter().all(|&c| c == marks[0]) {
        return Some("thematic break");
    }
    if first == '>' {
        return Some("quote");
    }
    if "-*+".contains(first) && after(1).is_none_or(|c| c == ' ' || c == '\t') {
        return Some("bullet");
    }
    let digits = body.chars().take_while(char::is_ascii_digit).count();
    if (1..=9).contains(&digits)
        && matches!(after(digits), Some('.' | ')'))
        && after(digits + 1).is_none_or(|c| c == ' ' || c == '\t')
    {
        return Some("ordered");
    }
    match first {
        '<' => Some("html"),
        '|' => Some("table"),
        '[' => Some("link reference definition"),
        _ => None,
    }
}
