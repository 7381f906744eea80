//! Positions in the manifest, and the few lines of it a finding shows.
//!
//! Takes: the manifest text, indexed once (`LineIndex`), and the byte spans of one
//! finding's labels. Returns: line and column numbers (1-based, columns in characters)
//! and an `Excerpt`: the lines around the spans, each clipped to a window around its
//! value and escaped for the terminal, which miette reads as the finding's source code.
//! Must never: cost more than the lines it shows (miette's own `SourceCode` for a
//! string scans the text from its start for every finding, which made thousands of
//! findings quadratic), or show a line of unbounded length (miette panics on a caret
//! past column 65,535, and an 8 MB line is not a snippet).

use miette::{MietteError, MietteSpanContents, SourceSpan, SpanContents};

use crate::terminal;

/// Lines shown above and below a value (miette's handler is set to the same).
pub(super) const CONTEXT_LINES: usize = 1;
/// Characters of one source line shown at most; a longer line is clipped (`…`).
const LINE_CHARS: usize = 160;
/// Characters one shown line may take once escaped (`\u{202e}` is 8 for 1): a line
/// of escapes shows fewer of its characters. (Twice the window's line, for any window.)
#[cfg(test)]
const LINE_SHOWN_CHARS: usize = 2 * LINE_CHARS;
/// Characters kept before a value when its line is clipped at the start.
const LEAD_CHARS: usize = 40;
/// Characters of a line's start kept in view when the middle is clipped: its
/// indentation and key, so the snippet still says where the value is.
const HEAD_CHARS: usize = 24;
/// Lines of one value shown at most: a longer value is cut after this many.
const SPAN_LINES: usize = 12;
/// Lines between two values' snippets that are still shown, to draw them as one.
const JOIN_GAP: usize = 8;
/// How much of the file around a finding an excerpt may show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Window {
    /// Lines shown above and below a value.
    context: usize,
    /// Characters of one source line shown at most.
    line_chars: usize,
    /// Characters kept before a value when its line is clipped at the start.
    lead: usize,
    /// Characters of a line's start kept in view when the middle is clipped.
    head: usize,
    /// Lines of one value shown at most.
    span_lines: usize,
    /// Lines between two values' snippets that are still shown, to draw them as one.
    join_gap: usize,
}

impl Window {
    /// For the manifest and valid documents: the value's lines with one line of context.
    pub(super) const FULL: Window = Window {
        context: CONTEXT_LINES,
        line_chars: LINE_CHARS,
        lead: LEAD_CHARS,
        head: HEAD_CHARS,
        span_lines: SPAN_LINES,
        join_gap: JOIN_GAP,
    };
    /// For a file that is not a valid document (it may be anything a path led to): the
    /// one line of the error, at most `TIGHT_CHARS` characters around it, no context.
    pub(super) const TIGHT: Window = Window {
        context: 0,
        line_chars: TIGHT_CHARS,
        lead: TIGHT_CHARS / 2,
        head: 0,
        span_lines: 1,
        join_gap: 0,
    };
}

/// Characters of a line `Window::TIGHT` shows at most.
pub(super) const TIGHT_CHARS: usize = 80;

/// Bytes between the character-count checkpoints of `LineIndex`.
const BLOCK: usize = 4096;

/// Byte offset → line and column, answered in time independent of the file's size.
pub struct LineIndex<'a> {
    text: &'a str,
    /// The offset spans give the text's first byte (a later file of a multi-file base
    /// document starts past the earlier ones): subtracted from every offset asked about.
    start: usize,
    /// Byte offset at which each line starts; lines end at `\n`.
    starts: Vec<usize>,
    /// Characters before each block of `BLOCK` bytes, so a column is counted from the
    /// nearest checkpoint instead of the line's start (a one-line file can be 100 MB).
    chars_before_block: Vec<usize>,
}

/// Characters that start in `bytes` (UTF-8 continuation bytes do not): exact for any
/// byte range, even one that cuts a character.
fn count_chars(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| b & 0xC0 != 0x80).count()
}

impl<'a> LineIndex<'a> {
    pub fn new(text: &'a str) -> Self {
        let starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        let mut chars_before_block = Vec::with_capacity(text.len() / BLOCK + 2);
        let mut chars = 0;
        for block in text.as_bytes().chunks(BLOCK) {
            chars_before_block.push(chars);
            chars += count_chars(block);
        }
        chars_before_block.push(chars);
        LineIndex {
            text,
            start: 0,
            starts,
            chars_before_block,
        }
    }

    /// The index of `text`, whose first byte spans call `start`.
    pub(crate) fn starting_at(text: &'a str, start: usize) -> Self {
        LineIndex {
            start,
            ..LineIndex::new(text)
        }
    }

    /// The offset spans give the text's first byte.
    pub(crate) fn start(&self) -> usize {
        self.start
    }

    fn chars_before(&self, offset: usize) -> usize {
        let offset = offset.min(self.text.len());
        let block = offset / BLOCK;
        self.chars_before_block[block] + count_chars(&self.text.as_bytes()[block * BLOCK..offset])
    }

    /// The line (0-based) holding byte `offset`; past the end, the last line.
    fn line_of(&self, offset: usize) -> usize {
        let offset = offset.min(self.text.len());
        self.starts.partition_point(|&s| s <= offset) - 1
    }

    /// The last line that has text or a line break: the empty "line" after a final
    /// newline is shown only when a span points at it.
    fn last_line(&self) -> usize {
        let last = self.starts.len() - 1;
        if self.starts[last] == self.text.len() {
            last.saturating_sub(1)
        } else {
            last
        }
    }

    /// The byte range of a line's text, without its line break (`\n` or `\r\n`).
    fn content(&self, line: usize) -> (usize, usize) {
        let start = self.starts[line];
        match self.starts.get(line + 1) {
            Some(&next) => {
                let end = next - 1;
                let cr = end > start && self.text.as_bytes()[end - 1] == b'\r';
                (start, end - usize::from(cr))
            }
            None => (start, self.text.len()),
        }
    }

    /// The 0-based column of byte `offset`, counted in characters from its line's start.
    fn column(&self, offset: usize) -> usize {
        let line = self.line_of(offset);
        self.chars_before(offset) - self.chars_before(self.starts[line])
    }

    /// Byte offset → (line, column), both 1-based, columns in characters.
    pub fn position(&self, offset: usize) -> (usize, usize) {
        let offset = offset.saturating_sub(self.start);
        (self.line_of(offset) + 1, self.column(offset) + 1)
    }
}

/// The lines around one finding's spans, clipped and escaped, as miette reads them.
///
/// Its offsets are its own (the spans are moved into it by `Excerpt::new`); its line
/// numbers and the header's column are those of the real file.
#[derive(Debug)]
pub(super) struct Excerpt {
    name: String,
    window: Window,
    text: String,
    lines: Vec<Line>,
    /// Each span's start in the excerpt, with the real line and column (0-based) it
    /// stands for, for the `file:line:col` header.
    anchors: Vec<(usize, usize, usize)>,
}

/// One shown line: its range in the excerpt's text (without the `\n` that follows),
/// its real line number (0-based), and the first and last line of its piece (a run of
/// consecutive real lines).
#[derive(Debug, Clone, Copy)]
struct Line {
    start: usize,
    end: usize,
    number: usize,
    first: usize,
    last: usize,
}

impl Excerpt {
    /// The lines around `spans` (byte offset and length into the indexed text; out of
    /// range is clamped). Returns the excerpt and each span's place in it.
    #[cfg(test)]
    pub(crate) fn new(
        index: &LineIndex,
        name: &str,
        spans: &[(usize, usize)],
    ) -> (Excerpt, Vec<(usize, usize)>) {
        Excerpt::within(index, name, spans, Window::FULL)
    }

    /// `new`, showing no more than `window` allows.
    pub(super) fn within(
        index: &LineIndex,
        name: &str,
        spans: &[(usize, usize)],
        window: Window,
    ) -> (Excerpt, Vec<(usize, usize)>) {
        let len = index.text.len();
        let mut ranges = Vec::with_capacity(spans.len());
        // Every span's start and (clipped) end, with the line each is drawn on; the
        // slot `2 * i` is span i's start, `2 * i + 1` its end.
        let mut points = Vec::with_capacity(2 * spans.len());
        // Offsets of the file as spans give them, from here on the text's own.
        let spans: Vec<(usize, usize)> = spans
            .iter()
            .map(|&(o, l)| (o.saturating_sub(index.start), l))
            .collect();
        let spans = spans.as_slice();
        for (i, &(offset, length)) in spans.iter().enumerate() {
            let start = offset.min(len);
            let mut end = offset.saturating_add(length).min(len);
            let first = index.line_of(start);
            let mut last = if end > start {
                index.line_of(end - 1)
            } else {
                first
            };
            let mut after = window.context;
            if last - first >= window.span_lines {
                last = first + window.span_lines - 1;
                end = index.content(last).1;
                // The next line would be more of the value, drawn as if outside it.
                after = 0;
            }
            ranges.push((
                first.saturating_sub(window.context),
                (last + after).min(index.last_line()).max(last),
            ));
            points.push((first, start, 2 * i));
            points.push((last, end, 2 * i + 1));
        }
        // Pieces: runs of lines drawn as one snippet, when values are close; far apart
        // (a duplicate id 5,000 lines away), each is drawn with its own context.
        ranges.sort_unstable();
        let mut pieces: Vec<(usize, usize)> = Vec::new();
        for (top, bottom) in ranges {
            match pieces.last_mut() {
                Some(piece) if top <= piece.1 + 1 + window.join_gap => {
                    piece.1 = piece.1.max(bottom);
                }
                _ => pieces.push((top, bottom)),
            }
        }
        points.sort_unstable();

        let mut excerpt = Excerpt {
            name: terminal::escape(name).into_owned(),
            window,
            text: String::new(),
            lines: Vec::new(),
            anchors: Vec::with_capacity(spans.len()),
        };
        let mut mapped = vec![0; 2 * spans.len()];
        let mut next_point = 0;
        for (top, bottom) in pieces {
            let first = excerpt.lines.len();
            for line in top..=bottom {
                let from = next_point;
                while next_point < points.len() && points[next_point].0 == line {
                    next_point += 1;
                }
                excerpt.push_line(index, line, &points[from..next_point], &mut mapped);
            }
            let last = excerpt.lines.len() - 1;
            for shown in &mut excerpt.lines[first..] {
                shown.first = first;
                shown.last = last;
            }
        }
        let moved: Vec<(usize, usize)> = (0..spans.len())
            .map(|i| {
                (
                    mapped[2 * i],
                    mapped[2 * i + 1].saturating_sub(mapped[2 * i]),
                )
            })
            .collect();
        for (i, &(offset, _)) in spans.iter().enumerate() {
            let start = offset.min(len);
            excerpt
                .anchors
                .push((moved[i].0, index.line_of(start), index.column(start)));
        }
        (excerpt, moved)
    }

    /// Appends real line `line`, clipped to a window around the first span starting on
    /// it and escaped, and records where its `points` land in the excerpt.
    fn push_line(
        &mut self,
        index: &LineIndex,
        line: usize,
        points: &[(usize, usize, usize)],
        mapped: &mut [usize],
    ) {
        let text = index.text;
        let Window {
            line_chars,
            lead,
            head,
            ..
        } = self.window;
        let (ls, le) = index.content(line);
        let next_line = index.starts.get(line + 1).copied();
        let segments = if index.chars_before(le) - index.chars_before(ls) <= line_chars {
            [(ls, le), (le, le)]
        } else {
            // Anchor the window on the first span that starts on this line.
            let anchor = points
                .iter()
                .filter(|&&(_, offset, slot)| slot % 2 == 0 && (ls..=le).contains(&offset))
                .map(|&(_, offset, _)| floor_boundary(text, offset))
                .min()
                .unwrap_or(ls);
            let forward = |from: usize, chars: usize| {
                text[from..le]
                    .char_indices()
                    .nth(chars)
                    .map_or(le, |(i, _)| from + i)
            };
            if index.chars_before(anchor) - index.chars_before(ls) < line_chars - lead {
                [(ls, forward(ls, line_chars)), (le, le)]
            } else {
                // The line's start (its indentation and key) stays in view, then the
                // value with some text before it.
                let ws = text[ls..anchor]
                    .char_indices()
                    .rev()
                    .nth(lead - 1)
                    .map_or(ls, |(i, _)| ls + i);
                [
                    (ls, forward(ls, head).min(ws)),
                    (ws, forward(ws, line_chars - head)),
                ]
            }
        };

        let out = &mut self.text;
        let start = out.len();
        let mut pending = points.iter().peekable();
        let mut shown_to = ls;
        let mut shown_chars = 0;
        'segments: for (from, to) in segments {
            if from >= to {
                continue;
            }
            // Points in the part left out map to the `…` that stands for it.
            while let Some(&&(_, offset, slot)) = pending.peek() {
                if offset >= from {
                    break;
                }
                mapped[slot] = out.len();
                pending.next();
            }
            if from > shown_to {
                out.push('…');
            }
            for (i, c) in text[from..to].char_indices() {
                if shown_chars >= 2 * line_chars {
                    // Escapes made the window too wide: the rest counts as clipped.
                    shown_to = from + i;
                    break 'segments;
                }
                while let Some(&&(_, offset, slot)) = pending.peek() {
                    if offset > from + i {
                        break;
                    }
                    mapped[slot] = out.len();
                    pending.next();
                }
                let before = out.len();
                terminal::push(out, c);
                shown_chars += out[before..].chars().count();
            }
            shown_to = to;
        }
        while let Some(&&(_, offset, slot)) = pending.peek() {
            if offset > shown_to {
                break;
            }
            mapped[slot] = out.len();
            pending.next();
        }
        if shown_to < le {
            out.push('…');
        }
        let end = out.len();
        // Clipped away on the right, or in the line break: before the `\n` is the end
        // of the line, after it the start of the next.
        for &(_, offset, slot) in pending {
            mapped[slot] = match next_line {
                Some(next) if offset >= next => end + 1,
                _ => end,
            };
        }
        out.push('\n');
        self.lines.push(Line {
            start,
            end,
            number: line,
            first: 0,
            last: 0,
        });
    }

    /// The shown line holding excerpt offset `offset`.
    fn line_at(&self, offset: usize) -> usize {
        self.lines
            .partition_point(|l| l.start <= offset)
            .saturating_sub(1)
    }
}

fn floor_boundary(text: &str, mut offset: usize) -> usize {
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

impl miette::SourceCode for Excerpt {
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        context_lines_before: usize,
        context_lines_after: usize,
    ) -> Result<Box<dyn SpanContents<'a> + 'a>, MietteError> {
        let start = span.offset();
        let end = start + span.len();
        if self.lines.is_empty() || end > self.text.len() {
            return Err(MietteError::OutOfBounds);
        }
        let first = self.line_at(start);
        let last = if span.is_empty() {
            first
        } else {
            self.line_at(end - 1)
        };
        let piece = self.lines[first];
        if self.lines[last].first != piece.first {
            // Spans in two pieces are drawn apart, never as one snippet.
            return Err(MietteError::OutOfBounds);
        }
        let top = first.saturating_sub(context_lines_before).max(piece.first);
        let bottom = (last + context_lines_after).min(piece.last);
        let data_start = self.lines[top].start;
        let data_end = self.lines[bottom].end + 1;
        // miette draws two labels as one snippet when the first one's lines reach the
        // second's: claim the rest of the piece, so that happens exactly within a piece.
        let line_count = piece.last - top + 1;
        // miette asks with no context for the header's `file:line:col`: give the real
        // column, which clipping and escaping would otherwise shift.
        let column = match context_lines_before {
            0 => self.anchors.iter().find(|a| a.0 == start).map_or_else(
                || self.text[self.lines[first].start..start].chars().count(),
                |a| a.2,
            ),
            _ => 0,
        };
        Ok(Box::new(MietteSpanContents::new_named(
            self.name.clone(),
            &self.text.as_bytes()[data_start..data_end],
            (data_start, data_end - data_start).into(),
            self.lines[top].number,
            column,
            line_count,
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_count_characters() {
        let idx = LineIndex::new("ab\nçd\n");
        assert_eq!(idx.position(0), (1, 1));
        assert_eq!(idx.position(3), (2, 1));
        assert_eq!(idx.position(5), (2, 2));
        assert_eq!(idx.position(99), (3, 1));
    }

    #[test]
    fn positions_are_exact_across_checkpoints() {
        let text = format!("x\n{}z", "é".repeat(3 * BLOCK));
        let idx = LineIndex::new(&text);
        let z = text.len() - 1;
        assert_eq!(idx.position(z), (2, 3 * BLOCK + 1));
        assert_eq!(idx.position(text.len()), (2, 3 * BLOCK + 2));
    }

    fn excerpt_of(text: &str, spans: &[(usize, usize)]) -> (String, Vec<(usize, usize)>) {
        let idx = LineIndex::new(text);
        let (excerpt, moved) = Excerpt::new(&idx, "f", spans);
        (excerpt.text, moved)
    }

    #[test]
    fn a_short_line_is_shown_whole_with_its_neighbours() {
        let text = "a: 1\nb: two\nc: 3\nd: 4\n";
        let (shown, moved) = excerpt_of(text, &[(8, 3)]);
        assert_eq!(shown, "a: 1\nb: two\nc: 3\n");
        assert_eq!(&shown[moved[0].0..moved[0].0 + moved[0].1], "two");
    }

    #[test]
    fn a_long_line_is_clipped_around_the_value() {
        let text = format!("k: {}VALUE{}\n", "x".repeat(1000), "y".repeat(1000));
        let at = text.find("VALUE").unwrap();
        let (shown, moved) = excerpt_of(&text, &[(at, 5)]);
        let line = shown.lines().next().unwrap();
        let head = format!("k: {}…", "x".repeat(HEAD_CHARS - 3));
        assert!(line.starts_with(&head) && line.ends_with('…'), "{line}");
        assert_eq!(line.chars().count(), LINE_CHARS + 2);
        assert_eq!(&shown[moved[0].0..moved[0].0 + moved[0].1], "VALUE");
        assert_eq!(
            shown[..moved[0].0].chars().count(),
            HEAD_CHARS + 1 + LEAD_CHARS
        );
    }

    #[test]
    fn escapes_move_the_span_with_them() {
        let text = "k: \u{1b}[2J\u{202e}VALUE\n";
        let at = text.find("VALUE").unwrap();
        let (shown, moved) = excerpt_of(text, &[(at, 5)]);
        assert_eq!(shown, "k: \\u{1b}[2J\\u{202e}VALUE\n");
        assert_eq!(&shown[moved[0].0..moved[0].0 + moved[0].1], "VALUE");
    }

    #[test]
    fn a_line_of_escapes_is_clipped_by_its_shown_width() {
        let text = format!("k: {}VALUE\n", "\u{202e}".repeat(LINE_CHARS));
        let at = text.find("VALUE").unwrap();
        let (shown, moved) = excerpt_of(&text, &[(at, 5)]);
        let line = shown.lines().next().unwrap();
        assert!(line.ends_with('…'), "{line}");
        assert!(line.chars().count() <= LINE_SHOWN_CHARS + 10, "{line}");
        assert_eq!(
            moved[0].0,
            line.len(),
            "the value is past the clip: {moved:?}"
        );
    }

    #[test]
    fn a_tall_value_is_cut_and_far_spans_are_separate_pieces() {
        let text: String = (0..100).map(|i| format!("line {i}\n")).collect();
        let start = text.find("line 10\n").unwrap();
        let end = text.find("line 60\n").unwrap();
        let far = text.find("line 90").unwrap();
        let near = text.find("line 30").unwrap();
        let idx = LineIndex::new(&text);
        let spans = [(start, end - start), (near, 7), (far, 7)];
        let (excerpt, moved) = Excerpt::new(&idx, "f", &spans);
        let numbers: Vec<usize> = excerpt.lines.iter().map(|l| l.number).collect();
        // Lines 9 to 21 (the value's first SPAN_LINES), joined to 29–31 across the gap.
        let mut expected: Vec<usize> = (9..32).collect();
        expected.extend([89, 90, 91]);
        assert_eq!(numbers, expected);
        assert_eq!(excerpt.lines[0].last, 22);
        assert_eq!(excerpt.lines[23].first, 23);
        let cut = &excerpt.text[moved[0].0..moved[0].0 + moved[0].1];
        assert!(
            cut.starts_with("line 10\n") && cut.ends_with("line 21"),
            "{cut}"
        );
    }

    #[test]
    fn spans_past_the_end_are_clamped() {
        let (shown, moved) = excerpt_of("a: 1", &[(99, 5)]);
        assert_eq!(shown, "a: 1\n");
        assert_eq!(moved, vec![(4, 0)]);
        let (shown, moved) = excerpt_of("", &[(0, 0)]);
        assert_eq!(shown, "\n");
        assert_eq!(moved, vec![(0, 0)]);
    }
}
