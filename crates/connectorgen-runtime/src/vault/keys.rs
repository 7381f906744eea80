//! The key ring of the vault: the text it is read from (an environment value or a key
//! file), the keys it holds, and a new key's line.
//!
//! Takes: the key text and where it was read. Returns: `Keys` (the current key first,
//! then the older ones), or an error saying where and what is wrong.
//! Must never: echo key material — not in an error (only valid ids, line numbers and
//! lengths are named; the base64 decoder's own error, which quotes the offending
//! character, is dropped), not in a `Debug` (ids and the source only) — or keep a
//! decoded key anywhere but in its cipher (the decoded bytes are wiped, and so is the
//! cipher when dropped: the crate's `zeroize` feature).
//!
//! The text: keys separated by line breaks, spaces or commas, each `ID:BASE64` — an id
//! of 1 to 32 letters, digits, `-`, `_` or `.`, a colon, and 32 bytes in standard base64
//! (padding optional). The first key is the current one, the only one that seals; the
//! others only open, so a rotation is a new first line with the old key kept below it
//! until no row is sealed with it. Blank lines are allowed, and `#` starts a comment
//! that runs to the end of its line. Spaces and commas let one environment value hold
//! several keys.

use std::fmt;
use std::path::Path;

use base64::Engine as _;
use chacha20poly1305::XChaCha20Poly1305;
use chacha20poly1305::aead::{Generate as _, KeyInit as _};
use zeroize::Zeroizing;

/// The bytes of a key.
pub(super) const KEY_BYTES: usize = 32;

/// The longest key id.
const MAX_ID: usize = 32;

/// The largest key file read: a key line is under 80 bytes, so this is not a key file.
const MAX_KEY_TEXT: u64 = 64 << 10;

/// One key of the ring: its id and the cipher holding it (wiped when dropped: the
/// crate's `zeroize` feature).
pub(super) struct Key {
    pub(super) id: String,
    pub(super) cipher: XChaCha20Poly1305,
}

/// The key ring: the current key, which seals, then the older ones, which only open.
pub(crate) struct Keys {
    /// Never empty; the first seals.
    ring: Vec<Key>,
    /// Where they were read, for messages: "the environment variable …", "the key file …".
    pub(super) from: String,
}

impl fmt::Debug for Keys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ids: Vec<&str> = self.ring.iter().map(|k| k.id.as_str()).collect();
        f.debug_struct("Keys")
            .field("ids", &ids)
            .field("from", &self.from)
            .finish_non_exhaustive()
    }
}

/// Why a key text was refused. No message holds any part of a key: only ids that are
/// valid ids, line numbers and lengths.
#[derive(Debug, thiserror::Error)]
pub(crate) enum KeysError {
    #[error(
        "{from} holds no key: give one `ID:BASE64` per line, the current key first (32 random \
         bytes in base64)"
    )]
    Empty { from: String },
    #[error(
        "{from}, {at}: not `ID:BASE64` (a key id, a colon, then 32 bytes in base64); the entry \
         is not shown"
    )]
    Malformed { from: String, at: String },
    #[error(
        "{from}, {at}: a key id is 1 to {MAX_ID} letters, digits, `-`, `_` or `.`; the entry \
         is not shown"
    )]
    BadId { from: String, at: String },
    #[error("{from}, {at}: the key `{id}` is not in base64 (its value is not shown)")]
    NotBase64 {
        from: String,
        at: String,
        id: String,
    },
    #[error("{from}, {at}: the key `{id}` is {len} bytes; a key is {KEY_BYTES} random bytes")]
    WrongLength {
        from: String,
        at: String,
        id: String,
        len: usize,
    },
    #[error("{from}: the key id `{id}` is given twice (each key needs its own id)")]
    Duplicate { from: String, id: String },
    #[error("{from}: {error}")]
    Unreadable { from: String, error: String },
    #[error("{from} is larger than {MAX_KEY_TEXT} bytes: not a key file")]
    TooLarge { from: String },
    #[error("a key id is 1 to {MAX_ID} letters, digits, `-`, `_` or `.`")]
    NewId,
    #[error("no random bytes from the system: {0}")]
    Random(String),
}

impl Keys {
    /// The ring in `text` (the format in the module's doc); `from` says where it was read,
    /// for messages.
    pub(crate) fn parse(text: &str, from: &str) -> Result<Keys, KeysError> {
        let from = from.to_string();
        let mut ring: Vec<Key> = Vec::new();
        for (line, content) in text.lines().enumerate() {
            let content = content.split('#').next().unwrap_or_default();
            let entries = content
                .split(|c: char| c.is_whitespace() || c == ',')
                .filter(|entry| !entry.is_empty());
            let entries: Vec<&str> = entries.collect();
            for (i, entry) in entries.iter().enumerate() {
                let at = if entries.len() > 1 {
                    format!("line {}, key {}", line + 1, i + 1)
                } else {
                    format!("line {}", line + 1)
                };
                let key = key(entry, &from, at)?;
                if ring.iter().any(|k| k.id == key.id) {
                    return Err(KeysError::Duplicate { from, id: key.id });
                }
                ring.push(key);
            }
        }
        if ring.is_empty() {
            return Err(KeysError::Empty { from });
        }
        Ok(Keys { ring, from })
    }

    /// The ring in the environment variable `name`, whose value is `value`.
    pub(crate) fn from_env(name: &str, value: &str) -> Result<Keys, KeysError> {
        Keys::parse(value, &format!("the environment variable {name}"))
    }

    /// The ring in the key file at `path`.
    pub(crate) fn from_file(path: &Path) -> Result<Keys, KeysError> {
        use std::io::Read as _;
        let from = format!("the key file {}", path.display());
        let unreadable = |e: std::io::Error| KeysError::Unreadable {
            from: from.clone(),
            error: e.to_string(),
        };
        let file = std::fs::File::open(path).map_err(unreadable)?;
        let mut bytes = Zeroizing::new(Vec::new());
        file.take(MAX_KEY_TEXT + 1)
            .read_to_end(&mut bytes)
            .map_err(unreadable)?;
        if bytes.len() as u64 > MAX_KEY_TEXT {
            return Err(KeysError::TooLarge { from });
        }
        let Ok(text) = std::str::from_utf8(&bytes) else {
            return Err(KeysError::Unreadable {
                from,
                error: "not UTF-8 text".into(),
            });
        };
        Keys::parse(text, &from)
    }

    /// The id of the key that seals.
    pub(crate) fn current_id(&self) -> &str {
        &self.ring[0].id
    }

    /// Where the keys were read ("the key file …"), for messages.
    #[cfg_attr(
        not(test),
        expect(dead_code, reason = "messages read the field itself")
    )]
    pub(crate) fn from(&self) -> &str {
        &self.from
    }

    pub(super) fn current(&self) -> &Key {
        &self.ring[0]
    }

    pub(super) fn find(&self, id: &str) -> Option<&Key> {
        self.ring.iter().find(|k| k.id == id)
    }
}

/// One `ID:BASE64` entry as a key.
fn key(entry: &str, from: &str, at: String) -> Result<Key, KeysError> {
    let from = from.to_string();
    let Some((id, encoded)) = entry.split_once(':') else {
        return Err(KeysError::Malformed { from, at });
    };
    if !valid_id(id) {
        return Err(KeysError::BadId { from, at });
    }
    let id = id.to_string();
    // The decoder's own error names the offending byte: a character of the key.
    let Ok(bytes) = base64::engine::general_purpose::STANDARD_PAD_INDIFFERENT.decode(encoded)
    else {
        return Err(KeysError::NotBase64 { from, at, id });
    };
    let bytes = Zeroizing::new(bytes);
    let Ok(cipher) = XChaCha20Poly1305::new_from_slice(&bytes) else {
        return Err(KeysError::WrongLength {
            from,
            at,
            id,
            len: bytes.len(),
        });
    };
    Ok(Key { id, cipher })
}

fn valid_id(id: &str) -> bool {
    (1..=MAX_ID).contains(&id.len())
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// A new key's line, `ID:BASE64` (32 random bytes), for a key file or the environment
/// value: the first line of the ring when it becomes the current key. Wiped when dropped.
#[cfg_attr(
    not(test),
    expect(
        dead_code,
        reason = "a key is made with any 32 random bytes (docs/serve.md); the tests make theirs here"
    )
)]
pub(crate) fn new_key_line(id: &str) -> Result<Zeroizing<String>, KeysError> {
    if !valid_id(id) {
        return Err(KeysError::NewId);
    }
    let key = Zeroizing::new(
        chacha20poly1305::Key::try_generate().map_err(|e| KeysError::Random(e.to_string()))?,
    );
    let mut line = Zeroizing::new(format!("{id}:"));
    base64::engine::general_purpose::STANDARD.encode_string(key.as_slice(), &mut line);
    Ok(line)
}
