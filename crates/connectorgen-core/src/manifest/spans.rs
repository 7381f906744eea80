//! Locations made outside the YAML parser, for the values the JSON fast path reads
//! itself (`flow_json`): the same `serde_saphyr::Location` the parser would attach.
//!
//! Takes: a position as the parser reports it (1-based line, 0-based column in
//! characters, character offset and length, byte offset and length). Returns: the
//! `Location`. Must never: round, clamp or otherwise differ from what the parser gives
//! for the same node (the differential tests compare them by `Debug`).
//!
//! `Location` has no public constructor, only its `Deserialize` (line, column and a
//! `Span` of offset, length and `(byte offset, byte length)`): this feeds it those
//! fields through a small in-memory deserializer that allocates nothing. Its fourth
//! field, `source_id`, is left out: it then defaults to 0, which is what the parser
//! gives a document read from one string (the differential tests would see a change).

use serde::de::value::{Error, SeqDeserializer, StrDeserializer, U32Deserializer};
use serde::de::{DeserializeSeed, Deserializer, IntoDeserializer, MapAccess, Visitor};
use serde::forward_to_deserialize_any;
use serde_saphyr::Location;

/// A node's place in the text, counted as the parser counts it.
#[derive(Clone, Copy)]
pub(super) struct Place {
    /// 1-based line.
    pub line: usize,
    /// 0-based column, in characters.
    pub column: usize,
    /// Characters before the node in the whole text.
    pub char_offset: usize,
    /// The node's length in characters.
    pub char_len: usize,
    /// Bytes before the node.
    pub byte_offset: usize,
    /// The node's length in bytes.
    pub byte_len: usize,
}

impl Place {
    /// The parser's `Location` for this place; `None` when a count does not fit the
    /// parser's 32-bit fields (the caller then leaves the node to the parser).
    pub(super) fn location(self) -> Option<Location> {
        let n = |v: usize| u32::try_from(v).ok().filter(|&v| v < u32::MAX);
        let fields = LocationFields {
            line: n(self.line)?,
            column: n(self.column + 1)?,
            span: [
                n(self.char_offset)?,
                n(self.char_len)?,
                n(self.byte_offset)?,
                n(self.byte_len)?,
            ],
            at: 0,
        };
        serde::Deserialize::deserialize(fields).ok()
    }
}

/// `Location`'s fields, handed out one by one as a map.
struct LocationFields {
    line: u32,
    column: u32,
    /// Character offset, character length, byte offset, byte length.
    span: [u32; 4],
    at: usize,
}

const LOCATION_KEYS: [&str; 3] = ["line", "column", "span"];

impl<'de> Deserializer<'de> for LocationFields {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_map(self)
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
        byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map struct
        enum identifier ignored_any
    }
}

impl<'de> MapAccess<'de> for LocationFields {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        let Some(key) = LOCATION_KEYS.get(self.at) else {
            return Ok(None);
        };
        seed.deserialize(StrDeserializer::<Error>::new(key))
            .map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        self.at += 1;
        match self.at {
            1 => seed.deserialize(U32Deserializer::<Error>::new(self.line)),
            2 => seed.deserialize(U32Deserializer::<Error>::new(self.column)),
            _ => seed.deserialize(SpanFields {
                span: self.span,
                at: 0,
            }),
        }
    }
}

/// `Span`'s fields: `offset`, `len`, `byte_info` (a pair).
struct SpanFields {
    span: [u32; 4],
    at: usize,
}

const SPAN_KEYS: [&str; 3] = ["offset", "len", "byte_info"];

impl<'de> Deserializer<'de> for SpanFields {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_map(self)
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
        byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map struct
        enum identifier ignored_any
    }
}

impl<'de> MapAccess<'de> for SpanFields {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        let Some(key) = SPAN_KEYS.get(self.at) else {
            return Ok(None);
        };
        seed.deserialize(StrDeserializer::<Error>::new(key))
            .map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        self.at += 1;
        match self.at {
            1 => seed.deserialize(self.span[0].into_deserializer()),
            2 => seed.deserialize(self.span[1].into_deserializer()),
            _ => seed.deserialize(SeqDeserializer::<_, Error>::new(
                self.span[2..].iter().copied(),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_place_becomes_the_parsers_location() {
        let text = "a: 1\nb: \"é\"\n";
        let parsed: serde_saphyr::Spanned<
            std::collections::BTreeMap<String, serde_saphyr::Spanned<String>>,
        > = serde_saphyr::from_str(text).unwrap();
        let b = &parsed.value["b"];
        let place = Place {
            line: 2,
            column: 3,
            char_offset: 8,
            char_len: 3,
            byte_offset: 8,
            byte_len: 4,
        };
        assert_eq!(place.location(), Some(b.defined));
    }
}
