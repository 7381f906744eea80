//! Pretty JSON text, byte for byte as `serde_json::to_string_pretty` writes it (two
//! spaces a level), with less work per line and per string.
//!
//! Takes: any `Serialize` value. Returns: its pretty JSON text (no trailing newline).
//! Must never: write other bytes than `serde_json`'s own pretty printer (the generated
//! files' bytes are fixed by it; the tests below compare the two, and every snapshot
//! holds it too).
//!
//! Why it exists (docs/PERFORMANCE.md, "Render and lowering"): `serde_json`'s
//! `PrettyFormatter` writes the indentation of each line as one two-byte write per level
//! (openapi.json at 10,000 operations: 850,000 lines at an average depth of 7.7), and its
//! serializer looks up every byte of every string in an escape table. Here each line's
//! comma, break and indentation are one write from a buffer of spaces, and strings are
//! scanned eight bytes at a time for the bytes JSON escapes. Numbers go through
//! `serde_json` itself, so their text is its own.

use serde::ser::{self, Impossible, Serialize};
use serde_json::Error;

/// `value` as pretty JSON text.
pub(super) fn to_string<T: Serialize + ?Sized>(value: &T) -> String {
    let mut writer = Pretty::default();
    value
        .serialize(&mut writer)
        .expect("in-memory JSON always serialises");
    // Only whole `str`s and ASCII are written: the check never fails.
    String::from_utf8(writer.out).expect("JSON text is UTF-8")
}

/// The text so far and `serde_json`'s `PrettyFormatter` state (`has_value` included,
/// which decides whether a closing bracket goes on a line of its own).
#[derive(Default)]
struct Pretty {
    out: Vec<u8>,
    level: usize,
    has_value: bool,
    /// `,\n` and then spaces, as many as the deepest line so far needs: a line start
    /// is a slice of it (from 1 without the comma).
    line: Vec<u8>,
}

impl Pretty {
    /// Starts a line at the current level: `,\n` or `\n`, then the indent.
    fn line_start(&mut self, comma: bool) {
        let end = 2 + 2 * self.level;
        if self.line.len() < end {
            if self.line.is_empty() {
                self.line.extend_from_slice(b",\n");
            }
            // Doubling keeps the growth rare however deep the document goes.
            let want = end.max(self.line.len() * 2);
            self.line.resize(want, b' ');
        }
        self.out
            .extend_from_slice(&self.line[usize::from(!comma)..end]);
    }

    fn open(&mut self, bracket: u8) {
        self.level += 1;
        self.has_value = false;
        self.out.push(bracket);
    }

    fn close(&mut self, bracket: u8) {
        self.level -= 1;
        if self.has_value {
            self.line_start(false);
        }
        self.out.push(bracket);
    }

    /// A scalar as `serde_json` writes it (compact and pretty text of a scalar are one).
    fn scalar<T: Serialize>(&mut self, value: T) -> Result<(), Error> {
        serde_json::to_writer(&mut self.out, &value)
    }

    /// `{` and the key of a one-entry object, as `serde_json` writes an enum variant with
    /// data; `close(b'}')` after the value ends it.
    fn variant_key(&mut self, variant: &str) {
        self.open(b'{');
        self.line_start(false);
        write_str(&mut self.out, variant);
        self.out.extend_from_slice(b": ");
    }
}

/// `s` as a JSON string: `"`, `\` and the control characters escaped as `serde_json`
/// escapes them, everything else (non-ASCII, `/`, DEL) as it is.
fn write_str(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut written = 0;
    let mut i = 0;
    while i < bytes.len() {
        if let Some(chunk) = bytes.get(i..i + 8) {
            let word = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
            if !may_need_escape(word) {
                i += 8;
                continue;
            }
        }
        let byte = bytes[i];
        let short: &[u8] = match byte {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            0x08 => b"\\b",
            b'\t' => b"\\t",
            b'\n' => b"\\n",
            0x0c => b"\\f",
            b'\r' => b"\\r",
            0x00..=0x1f => b"",
            _ => {
                i += 1;
                continue;
            }
        };
        out.extend_from_slice(&bytes[written..i]);
        if short.is_empty() {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.extend_from_slice(b"\\u00");
            out.push(HEX[usize::from(byte >> 4)]);
            out.push(HEX[usize::from(byte & 0xf)]);
        } else {
            out.extend_from_slice(short);
        }
        i += 1;
        written = i;
    }
    out.extend_from_slice(&bytes[written..]);
    out.push(b'"');
}

/// Whether any of the eight bytes of `word` may be one JSON escapes (below 0x20, `"`
/// or `\`). Never false when one is; may be true when none is (the bytes are then
/// looked at one by one).
fn may_need_escape(word: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // A byte below n (n <= 0x80) borrows into its high bit: `(x - n) & !x`.
    let below = |x: u64, n: u8| x.wrapping_sub(ONES * u64::from(n)) & !x;
    let control = below(word, 0x20);
    let quote = below(word ^ (ONES * u64::from(b'"')), 1);
    let backslash = below(word ^ (ONES * u64::from(b'\\')), 1);
    (control | quote | backslash) & HIGH != 0
}

/// Where a sequence, tuple or map is: `serde_json`'s `State` (an empty one with a known
/// length was closed when it was opened).
#[derive(PartialEq, Eq)]
enum State {
    Empty,
    First,
    Rest,
}

/// An open sequence or map, and what closes it: its own bracket and, for an enum
/// variant with data, the object around it.
struct Compound<'a> {
    ser: &'a mut Pretty,
    state: State,
    variant: bool,
}

impl Compound<'_> {
    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.ser.line_start(self.state != State::First);
        self.state = State::Rest;
        value.serialize(&mut *self.ser)?;
        self.ser.has_value = true;
        Ok(())
    }

    fn key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        self.ser.line_start(self.state != State::First);
        self.state = State::Rest;
        key.serialize(KeySerializer(&mut self.ser.out))
    }

    fn value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.ser.out.extend_from_slice(b": ");
        value.serialize(&mut *self.ser)?;
        self.ser.has_value = true;
        Ok(())
    }

    fn end(self, bracket: u8) {
        if self.state != State::Empty {
            self.ser.close(bracket);
        }
        if self.variant {
            self.ser.has_value = true;
            self.ser.close(b'}');
        }
    }
}

impl Pretty {
    fn seq(&mut self, len: Option<usize>, variant: bool) -> Compound<'_> {
        self.open(b'[');
        let state = if len == Some(0) {
            self.close(b']');
            State::Empty
        } else {
            State::First
        };
        Compound {
            ser: self,
            state,
            variant,
        }
    }

    fn map(&mut self, len: Option<usize>, variant: bool) -> Compound<'_> {
        self.open(b'{');
        let state = if len == Some(0) {
            self.close(b'}');
            State::Empty
        } else {
            State::First
        };
        Compound {
            ser: self,
            state,
            variant,
        }
    }
}

impl<'a> ser::Serializer for &'a mut Pretty {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Compound<'a>;
    type SerializeTuple = Compound<'a>;
    type SerializeTupleStruct = Compound<'a>;
    type SerializeTupleVariant = Compound<'a>;
    type SerializeMap = Compound<'a>;
    type SerializeStruct = Compound<'a>;
    type SerializeStructVariant = Compound<'a>;

    fn serialize_bool(self, v: bool) -> Result<(), Error> {
        self.out
            .extend_from_slice(if v { b"true" } else { b"false" });
        Ok(())
    }
    fn serialize_i8(self, v: i8) -> Result<(), Error> {
        self.scalar(v)
    }
    fn serialize_i16(self, v: i16) -> Result<(), Error> {
        self.scalar(v)
    }
    fn serialize_i32(self, v: i32) -> Result<(), Error> {
        self.scalar(v)
    }
    fn serialize_i64(self, v: i64) -> Result<(), Error> {
        self.scalar(v)
    }
    fn serialize_i128(self, v: i128) -> Result<(), Error> {
        self.scalar(v)
    }
    fn serialize_u8(self, v: u8) -> Result<(), Error> {
        self.scalar(v)
    }
    fn serialize_u16(self, v: u16) -> Result<(), Error> {
        self.scalar(v)
    }
    fn serialize_u32(self, v: u32) -> Result<(), Error> {
        self.scalar(v)
    }
    fn serialize_u64(self, v: u64) -> Result<(), Error> {
        self.scalar(v)
    }
    fn serialize_u128(self, v: u128) -> Result<(), Error> {
        self.scalar(v)
    }
    fn serialize_f32(self, v: f32) -> Result<(), Error> {
        self.scalar(v)
    }
    fn serialize_f64(self, v: f64) -> Result<(), Error> {
        self.scalar(v)
    }
    fn serialize_char(self, v: char) -> Result<(), Error> {
        write_str(&mut self.out, v.encode_utf8(&mut [0; 4]));
        Ok(())
    }
    fn serialize_str(self, v: &str) -> Result<(), Error> {
        write_str(&mut self.out, v);
        Ok(())
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<(), Error> {
        // serde_json writes bytes as an array of numbers.
        ser::Serializer::collect_seq(self, v)
    }
    fn serialize_none(self) -> Result<(), Error> {
        self.serialize_unit()
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), Error> {
        self.out.extend_from_slice(b"null");
        Ok(())
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), Error> {
        self.serialize_unit()
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<(), Error> {
        self.serialize_str(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.variant_key(variant);
        value.serialize(&mut *self)?;
        self.has_value = true;
        self.close(b'}');
        Ok(())
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<Compound<'a>, Error> {
        Ok(self.seq(len, false))
    }
    fn serialize_tuple(self, len: usize) -> Result<Compound<'a>, Error> {
        Ok(self.seq(Some(len), false))
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        len: usize,
    ) -> Result<Compound<'a>, Error> {
        Ok(self.seq(Some(len), false))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Compound<'a>, Error> {
        self.variant_key(variant);
        Ok(self.seq(Some(len), true))
    }
    fn serialize_map(self, len: Option<usize>) -> Result<Compound<'a>, Error> {
        Ok(self.map(len, false))
    }
    fn serialize_struct(self, _name: &'static str, len: usize) -> Result<Compound<'a>, Error> {
        Ok(self.map(Some(len), false))
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Compound<'a>, Error> {
        self.variant_key(variant);
        Ok(self.map(Some(len), true))
    }
}

impl ser::SerializeSeq for Compound<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.element(value)
    }
    fn end(self) -> Result<(), Error> {
        Compound::end(self, b']');
        Ok(())
    }
}

impl ser::SerializeTuple for Compound<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.element(value)
    }
    fn end(self) -> Result<(), Error> {
        Compound::end(self, b']');
        Ok(())
    }
}

impl ser::SerializeTupleStruct for Compound<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.element(value)
    }
    fn end(self) -> Result<(), Error> {
        Compound::end(self, b']');
        Ok(())
    }
}

impl ser::SerializeTupleVariant for Compound<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.element(value)
    }
    fn end(self) -> Result<(), Error> {
        Compound::end(self, b']');
        Ok(())
    }
}

impl ser::SerializeMap for Compound<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        self.key(key)
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.value(value)
    }
    fn end(self) -> Result<(), Error> {
        Compound::end(self, b'}');
        Ok(())
    }
}

impl ser::SerializeStruct for Compound<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.key(key)?;
        self.value(value)
    }
    fn end(self) -> Result<(), Error> {
        Compound::end(self, b'}');
        Ok(())
    }
}

impl ser::SerializeStructVariant for Compound<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.key(key)?;
        self.value(value)
    }
    fn end(self) -> Result<(), Error> {
        Compound::end(self, b'}');
        Ok(())
    }
}

/// A map key, as `serde_json`'s `MapKeySerializer` takes it: a string, or a number or
/// boolean written as a string; anything else is an error.
struct KeySerializer<'a>(&'a mut Vec<u8>);

impl KeySerializer<'_> {
    fn quoted<T: Serialize>(self, value: T) -> Result<(), Error> {
        self.0.push(b'"');
        serde_json::to_writer(&mut *self.0, &value)?;
        self.0.push(b'"');
        Ok(())
    }

    fn finite<T: Serialize>(self, value: T, finite: bool) -> Result<(), Error> {
        if finite {
            self.quoted(value)
        } else {
            Err(ser::Error::custom(
                "float key must be finite (got NaN or +/-inf)",
            ))
        }
    }
}

fn key_must_be_a_string() -> Error {
    ser::Error::custom("key must be a string")
}

impl ser::Serializer for KeySerializer<'_> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Impossible<(), Error>;
    type SerializeTuple = Impossible<(), Error>;
    type SerializeTupleStruct = Impossible<(), Error>;
    type SerializeTupleVariant = Impossible<(), Error>;
    type SerializeMap = Impossible<(), Error>;
    type SerializeStruct = Impossible<(), Error>;
    type SerializeStructVariant = Impossible<(), Error>;

    fn serialize_str(self, v: &str) -> Result<(), Error> {
        write_str(self.0, v);
        Ok(())
    }
    fn serialize_char(self, v: char) -> Result<(), Error> {
        write_str(self.0, v.encode_utf8(&mut [0; 4]));
        Ok(())
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<(), Error> {
        self.serialize_str(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_bool(self, v: bool) -> Result<(), Error> {
        self.quoted(v)
    }
    fn serialize_i8(self, v: i8) -> Result<(), Error> {
        self.quoted(v)
    }
    fn serialize_i16(self, v: i16) -> Result<(), Error> {
        self.quoted(v)
    }
    fn serialize_i32(self, v: i32) -> Result<(), Error> {
        self.quoted(v)
    }
    fn serialize_i64(self, v: i64) -> Result<(), Error> {
        self.quoted(v)
    }
    fn serialize_i128(self, v: i128) -> Result<(), Error> {
        self.quoted(v)
    }
    fn serialize_u8(self, v: u8) -> Result<(), Error> {
        self.quoted(v)
    }
    fn serialize_u16(self, v: u16) -> Result<(), Error> {
        self.quoted(v)
    }
    fn serialize_u32(self, v: u32) -> Result<(), Error> {
        self.quoted(v)
    }
    fn serialize_u64(self, v: u64) -> Result<(), Error> {
        self.quoted(v)
    }
    fn serialize_u128(self, v: u128) -> Result<(), Error> {
        self.quoted(v)
    }
    fn serialize_f32(self, v: f32) -> Result<(), Error> {
        self.finite(v, v.is_finite())
    }
    fn serialize_f64(self, v: f64) -> Result<(), Error> {
        self.finite(v, v.is_finite())
    }
    fn serialize_bytes(self, _v: &[u8]) -> Result<(), Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_none(self) -> Result<(), Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, _value: &T) -> Result<(), Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_unit(self) -> Result<(), Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<(), Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Self::SerializeSeq, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_tuple(self, _len: usize) -> Result<Self::SerializeTuple, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleStruct, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Self::SerializeMap, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStruct, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant, Error> {
        Err(key_must_be_a_string())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::{Value, json};

    /// Values with every shape the printer distinguishes: empty and nested containers
    /// (`has_value` after an empty one), every scalar, every escape, non-ASCII, strings
    /// longer than the eight-byte scan with escapes at each position, and a depth past
    /// the first growth of the indent buffer.
    fn samples() -> Vec<Value> {
        let mut deep = json!("leaf");
        for i in 0..70 {
            deep = if i % 2 == 0 {
                json!({ "k": deep, "e": {}, "a": [] })
            } else {
                json!([deep, [], {}, 1])
            };
        }
        let every_byte: String = (0u8..=0x7f).map(char::from).collect();
        let mut shifted = Vec::new();
        for at in 0..20 {
            for special in ["\"", "\\", "\n", "\u{1}", "\u{1f}", "\u{7f}", "é", " "] {
                let mut text = "x".repeat(at);
                text.push_str(special);
                text.push_str(&"y".repeat(20 - at));
                shifted.push(Value::String(text));
            }
        }
        vec![
            json!(null),
            json!(true),
            json!(-12),
            json!(1.5e300),
            json!(0.1),
            json!(-0.0),
            json!(u64::MAX),
            json!(i64::MIN),
            json!("tab\t quote\" back\\ nl\n ctrl\u{1} café 日本語 </script>"),
            json!(""),
            Value::String(every_byte.clone()),
            json!({ every_byte.clone(): every_byte }),
            Value::Array(shifted),
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

    /// What serde's derive and the standard types hand a serializer besides JSON values:
    /// enum variants of every kind, tuples, options, bytes, chars, numeric keys.
    #[test]
    fn same_bytes_for_serde_data_model() {
        #[derive(serde::Serialize)]
        enum E {
            Unit,
            Newtype(u8),
            Tuple(i32, String),
            EmptyTuple(),
            Struct { a: Option<bool>, b: f32 },
            EmptyStruct {},
        }
        #[derive(serde::Serialize)]
        struct Unit;
        #[derive(serde::Serialize)]
        struct Newtype(Vec<E>);
        #[derive(serde::Serialize)]
        struct Tuple(char, (), Unit);
        #[derive(serde::Serialize)]
        struct All<'a> {
            e: Newtype,
            t: Tuple,
            bytes: &'a serde_bytes_like::Bytes,
            int_keys: BTreeMap<i64, u128>,
            bool_keys: BTreeMap<bool, i128>,
            char_keys: BTreeMap<char, f64>,
            none: Option<u8>,
            nan: f64,
            empty: Vec<u8>,
            tuple: (u16, i8, &'a str),
        }
        mod serde_bytes_like {
            pub(super) struct Bytes(pub(super) [u8; 3]);
            impl serde::Serialize for Bytes {
                fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                    s.serialize_bytes(&self.0)
                }
            }
        }
        let value = All {
            e: Newtype(vec![
                E::Unit,
                E::Newtype(7),
                E::Tuple(-1, "x\"".into()),
                E::EmptyTuple(),
                E::Struct {
                    a: Some(true),
                    b: 0.3,
                },
                E::Struct { a: None, b: 1e10 },
                E::EmptyStruct {},
            ]),
            t: Tuple('\n', (), Unit),
            bytes: &serde_bytes_like::Bytes([0, 127, 255]),
            int_keys: BTreeMap::from([(-3, 1), (4, u128::MAX)]),
            bool_keys: BTreeMap::from([(false, i128::MIN), (true, 0)]),
            char_keys: BTreeMap::from([('"', 2.5), ('k', f64::INFINITY)]),
            none: None,
            nan: f64::NAN,
            empty: Vec::new(),
            tuple: (1, -2, "three"),
        };
        let expected = serde_json::to_string_pretty(&value).unwrap();
        assert_eq!(super::to_string(&value), expected);
    }

    /// Any JSON value: arbitrary strings (control characters, quotes, backslashes,
    /// any Unicode) as keys and values, numbers of every kind, nesting.
    fn any_value() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        // ASCII half the time, so control characters, quotes and backslashes are common.
        let text = || proptest::string::string_regex("([\\x00-\\x7f]|(?s:.)){0,40}").unwrap();
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            text().prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 64, 6, move |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                proptest::collection::vec((text(), inner), 0..6)
                    .prop_map(|entries| Value::Object(entries.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        #[test]
        fn same_bytes_as_serde_json_for_any_value(value in any_value()) {
            let expected = serde_json::to_string_pretty(&value).unwrap();
            proptest::prop_assert_eq!(super::to_string(&value), expected);
        }
    }

    /// A key `serde_json` refuses is refused here too (not written as something else).
    #[test]
    fn refuses_what_serde_json_refuses() {
        let value = BTreeMap::from([(vec![1], 1)]);
        assert!(serde_json::to_string_pretty(&value).is_err());
        let mut writer = super::Pretty::default();
        assert!(serde::Serialize::serialize(&value, &mut writer).is_err());
    }
}
