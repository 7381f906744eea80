//! Redaction by value: every secret the process holds is registered here once, and every
//! text that leaves the process — tool results and errors (`serve`), log lines
//! (`serve::log`), probe reports in every format, the ledger's stored answers — passes
//! through the one `Redactor`, which replaces each secret and each of its encoded forms
//! with `[redacted]`.
//!
//! Takes: the secret values (`credential::Environment` registers the credential as read,
//! as placed — `Bearer …`, a `format`, basic's `user:password` and its base64 — and every
//! `fixed:` value read from the environment). Returns: the same text with each of them
//! replaced, wherever it appears: plainly, percent-encoded as a URL carries it (the
//! request builder's encoding, every other character encoded, upper- and lower-case hex),
//! form-encoded (`+` for a space), with only what a URL parser must encode encoded, and
//! JSON-escaped. So a reqwest or hyper error that quotes the URL, a provider that echoes
//! the key, a report that quotes a request line all come out without it — whatever
//! characters the key holds, where a pattern (`api_key=…`) would miss one.
//! Must never: keep a secret shorter than `MIN_SECRET` (replacing two letters everywhere
//! would make every text unreadable; `credential::Environment` warns about such a value
//! at start-up instead), or change text that holds no secret.
//!
//! What it cannot see: a secret split across two texts, or transformed in a way not
//! listed above (hashed, reversed, base64 of anything but basic's pair). Binary bodies
//! (a base64 resource blob) are left as they are.

use aho_corasick::{AhoCorasick, MatchKind};
use base64::Engine as _;
use percent_encoding::{AsciiSet, CONTROLS, NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::Value;

use crate::client::HttpResponse;

/// What a secret becomes.
pub(crate) const REDACTED: &str = "[redacted]";

/// The shortest value that is redacted.
pub(crate) const MIN_SECRET: usize = 4;

/// The request builder's set (`request::STRICT`): all but `A-Z a-z 0-9 - . _ ~`.
const STRICT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// What a URL parser encodes in a query it was handed unencoded (the WHATWG query set):
/// the form a secret takes in a URL some other code built and a parser normalised.
const URL_QUERY: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'<')
    .add(b'>')
    .add(b'\'');

/// The set of secrets, ready to replace.
#[derive(Clone, Default)]
pub(crate) struct Redactor {
    /// Every form of every secret, longest first in the match (leftmost-longest), so a
    /// secret that contains another is replaced whole. `None`: no secret.
    matcher: Option<AhoCorasick>,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let count = self.matcher.as_ref().map_or(0, AhoCorasick::patterns_len);
        write!(f, "Redactor({count} forms: [redacted])")
    }
}

impl Redactor {
    /// A redactor for `secrets` (each with every encoded form).
    pub(crate) fn new<S: AsRef<str>>(secrets: impl IntoIterator<Item = S>) -> Redactor {
        let mut all: Vec<String> = Vec::new();
        for secret in secrets {
            for form in forms(secret.as_ref()) {
                if form.chars().count() >= MIN_SECRET && !all.contains(&form) {
                    all.push(form);
                }
            }
        }
        if all.is_empty() {
            return Redactor { matcher: None };
        }
        let matcher = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .build(&all)
            .ok();
        Redactor { matcher }
    }

    /// Whether there is nothing to redact.
    pub(crate) fn is_empty(&self) -> bool {
        self.matcher.is_none()
    }

    /// `text` with every secret replaced.
    pub(crate) fn text(&self, text: &str) -> String {
        match &self.matcher {
            Some(matcher) if matcher.is_match(text) => {
                let mut out = String::with_capacity(text.len());
                matcher.replace_all_with(text, &mut out, |_, _, dst| {
                    dst.push_str(REDACTED);
                    true
                });
                out
            }
            _ => text.to_string(),
        }
    }

    /// Bytes that are UTF-8 text, with every secret replaced; other bytes unchanged (a
    /// binary answer is the provider's data, not text the process writes).
    pub(crate) fn bytes(&self, bytes: Vec<u8>) -> Vec<u8> {
        if self.is_empty() {
            return bytes;
        }
        match String::from_utf8(bytes) {
            Ok(text) => self.text(&text).into_bytes(),
            Err(e) => e.into_bytes(),
        }
    }

    /// Every string of `value` (keys included) with every secret replaced, except the
    /// base64 text of a `blob` (binary data).
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
    /// A provider's answer with every secret replaced in its headers and (text) body,
    /// before anything reads it.
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

/// A secret and every form it may take in a text the process writes.
fn forms(secret: &str) -> Vec<String> {
    let mut out = Vec::new();
    for value in [secret, secret.trim()] {
        if value.is_empty() {
            continue;
        }
        out.push(value.to_string());
        for set in [STRICT, NON_ALPHANUMERIC, URL_QUERY] {
            let upper = utf8_percent_encode(value, set).to_string();
            out.push(lower_hex(&upper));
            out.push(upper);
        }
        let form: String = form_urlencoded::byte_serialize(value.as_bytes()).collect();
        out.push(lower_hex(&form));
        out.push(form);
        // `%20` and `+` for a space, each with the rest strictly encoded.
        out.push(
            utf8_percent_encode(value, STRICT)
                .to_string()
                .replace("%20", "+"),
        );
        // Inside a JSON string (a provider's body, a report in JSON).
        if let Ok(json) = serde_json::to_string(value) {
            out.push(json.trim_matches('"').to_string());
            let escaped: String = value
                .chars()
                .map(|c| {
                    if c.is_ascii() && !c.is_ascii_control() {
                        c.to_string()
                    } else {
                        c.encode_utf16(&mut [0; 2])
                            .iter()
                            .map(|u| format!("\\u{u:04x}"))
                            .collect()
                    }
                })
                .collect();
            out.push(escaped);
        }
    }
    out
}

/// `%2F` → `%2f`: some encoders write lower-case hex.
fn lower_hex(encoded: &str) -> String {
    let mut out = String::with_capacity(encoded.len());
    let mut chars = encoded.chars();
    while let Some(c) = chars.next() {
        out.push(c);
        if c == '%' {
            for _ in 0..2 {
                if let Some(h) = chars.next() {
                    out.push(h.to_ascii_lowercase());
                }
            }
        }
    }
    out
}

/// The base64 forms of basic's `user:password`, as `Authorization: Basic` carries it.
pub(crate) fn base64_forms(text: &str) -> [String; 2] {
    [
        base64::engine::general_purpose::STANDARD.encode(text),
        base64::engine::general_purpose::STANDARD_NO_PAD.encode(text),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keys of every character class: alphanumerics, the unreserved `-._~`, base64's
    /// `+/=`, every reserved character, `%`, spaces, non-ASCII.
    const KEYS: [&str; 9] = [
        "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
        "a-b.c_d~e-f.g_h~",
        "ab+cd/ef==",
        "k:/?#[]@!$&'()*+,;=end",
        "100%-sure%20not",
        "two words here",
        "clé-sécrète-ünï",
        "Zm9v-YmFy_YmF6~+/=:?#",
        "tab\there\"quote\\back",
    ];

    #[test]
    fn every_form_of_every_key_is_replaced() {
        for key in KEYS {
            let r = Redactor::new([key]);
            for form in forms(key) {
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
            let r = Redactor::new([key]);
            let url = format!(
                "error sending request for url (http://127.0.0.1:1/v1/x?api_key={}&limit=2)",
                utf8_percent_encode(key, STRICT)
            );
            let out = r.text(&url);
            assert_eq!(
                out,
                "error sending request for url (http://127.0.0.1:1/v1/x?api_key=[redacted]&limit=2)",
                "{key:?}"
            );
        }
    }

    #[test]
    fn a_key_in_json_is_replaced_and_the_json_stays_valid() {
        for key in KEYS {
            let r = Redactor::new([key]);
            let body = serde_json::json!({ "echo": key, "n": 1 }).to_string();
            let out = r.text(&body);
            let value: Value = serde_json::from_str(&out).unwrap();
            assert_eq!(value["echo"], REDACTED, "{key:?}: {out}");
        }
    }

    #[test]
    fn the_longest_secret_wins_and_short_ones_are_not_kept() {
        let r = Redactor::new(["s3cr&t", "Bearer s3cr&t", "ab"]);
        assert_eq!(
            r.text("https://x/?api_key=s3cr%26t and Bearer s3cr&t, ab"),
            "https://x/?api_key=[redacted] and [redacted], ab"
        );
        assert!(Redactor::new(["abc"]).is_empty());
        assert!(!format!("{r:?}").contains("s3cr"));
    }

    #[test]
    fn values_are_redacted_everywhere_but_blobs() {
        let r = Redactor::new(["topsecret"]);
        let v = serde_json::json!({ "a": ["x topsecret"], "topsecret": 1, "blob": "topsecret" });
        assert_eq!(
            r.value(v),
            serde_json::json!({ "a": ["x [redacted]"], "[redacted]": 1, "blob": "topsecret" })
        );
        assert_eq!(r.bytes(b"k=topsecret".to_vec()), b"k=[redacted]");
        assert_eq!(r.bytes(vec![0xff, b't']), vec![0xff, b't']);
    }
}
