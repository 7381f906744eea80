//! Pretty JSON text, byte for byte as `serde_json::to_string_pretty` writes it (two
//! spaces a level), with less work per line.
//!
//! Takes: any `Serialize` value. Returns: its pretty JSON text (no trailing newline).
//! Must never: write other bytes than `serde_json`'s own pretty printer (the generated
//! files' bytes are fixed by it; the tests below compare the two).
//!
//! Why it exists: `serde_json`'s `PrettyFormatter` writes the indentation of each line as
//! one two-byte write per level. openapi.json at 10,000 operations has 850,000 lines at
//! an average depth of 7.7, so that was 6.5 million writes; here each line's break,
//! comma and indentation are one write from a buffer of spaces.

use std::io;

use serde::Serialize;
use serde_json::ser::Formatter;

/// `value` as pretty JSON text.
pub(super) fn to_string<T: Serialize + ?Sized>(value: &T) -> String {
    let mut bytes = Vec::new();
    let mut serializer = serde_json::Serializer::with_formatter(&mut bytes, Pretty::default());
    value
        .serialize(&mut serializer)
        .expect("in-memory JSON always serialises");
    // serde_json writes whole `str`s and ASCII punctuation: the check never fails.
    String::from_utf8(bytes).expect("serde_json writes UTF-8")
}

/// `value` as pretty JSON text, the same bytes as `to_string`, written to `writer`
/// (which should buffer: `serde_json` writes a few bytes at a time). Fails only when
/// `writer` does.
pub(super) fn to_writer<W: io::Write, T: Serialize + ?Sized>(
    writer: W,
    value: &T,
) -> io::Result<()> {
    let mut serializer = serde_json::Serializer::with_formatter(writer, Pretty::default());
    // The values are in memory and always serialise: an error is the writer's, which
    // the conversion hands back as it was.
    value.serialize(&mut serializer).map_err(io::Error::from)
}

/// `serde_json::ser::PrettyFormatter` with an indent of two spaces, its state kept the
/// same way (`has_value` included), its line starts written at once.
#[derive(Default)]
struct Pretty {
    level: usize,
    has_value: bool,
    /// `,\n` and then spaces, as many as the deepest line so far needs: a line start
    /// is a slice of it (from 1 without the comma).
    line: Vec<u8>,
}

impl Pretty {
    /// The bytes that start a line at the current level: `,\n` or `\n`, then the indent.
    fn line_start(&mut self, comma: bool) -> &[u8] {
        let end = 2 + 2 * self.level;
        if self.line.len() < end {
            if self.line.is_empty() {
                self.line.extend_from_slice(b",\n");
            }
            // Doubling keeps the growth rare however deep the document goes.
            let want = end.max(self.line.len() * 2);
            self.line.resize(want, b' ');
        }
        &self.line[usize::from(!comma)..end]
    }
}

impl Formatter for Pretty {
    #[inline]
    fn begin_array<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.level += 1;
        self.has_value = false;
        writer.write_all(b"[")
    }

    #[inline]
    fn end_array<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.level -= 1;
        if self.has_value {
            writer.write_all(self.line_start(false))?;
        }
        writer.write_all(b"]")
    }

    #[inline]
    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        writer.write_all(self.line_start(!first))
    }

    #[inline]
    fn end_array_value<W: ?Sized + io::Write>(&mut self, _writer: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    #[inline]
    fn begin_object<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.level += 1;
        self.has_value = false;
        writer.write_all(b"{")
    }

    #[inline]
    fn end_object<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.level -= 1;
        if self.has_value {
            writer.write_all(self.line_start(false))?;
        }
        writer.write_all(b"}")
    }

    #[inline]
    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        writer.write_all(self.line_start(!first))
    }

    #[inline]
    fn begin_object_value<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        writer.write_all(b": ")
    }

    #[inline]
    fn end_object_value<W: ?Sized + io::Write>(&mut self, _writer: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    /// Values with every shape the printer distinguishes: empty and nested containers
    /// (`has_value` after an empty one), every scalar, escapes, non-ASCII, and a depth
    /// past the first growth of the indent buffer.
    fn samples() -> Vec<Value> {
        let mut deep = json!("leaf");
        for i in 0..70 {
            deep = if i % 2 == 0 {
                json!({ "k": deep, "e": {}, "a": [] })
            } else {
                json!([deep, [], {}, 1])
            };
        }
        vec![
            json!(null),
            json!(true),
            json!(-12),
            json!(1.5e300),
            json!(u64::MAX),
            json!("tab\t quote\" back\\ nl\n ctrl\u{1} café 日本語 </script>"),
            json!({}),
            json!([]),
            json!([{}]),
            json!({ "a": [] }),
            json!({ "a": {}, "b": [[], [{}], {"c": []}], "d": [1, "x", null, false] }),
            json!([[[]], [[1]], {"x": {"y": {}}}]),
            deep,
        ]
    }

    #[test]
    fn same_bytes_as_serde_json() {
        for value in samples() {
            let expected = serde_json::to_string_pretty(&value).unwrap();
            assert_eq!(super::to_string(&value), expected);
        }
    }

    /// The indent buffer only grows: shallow lines after deep ones still get theirs.
    #[test]
    fn shallow_after_deep() {
        let values = samples();
        let expected = serde_json::to_string_pretty(&values).unwrap();
        assert_eq!(super::to_string(&values), expected);
    }
}
