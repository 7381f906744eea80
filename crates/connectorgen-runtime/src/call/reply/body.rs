//! The provider's answer body: as content the model reads (JSON as structured content
//! with a text copy, text as text, anything else as an embedded resource), and as the
//! ledger keeps it so that a replay is the same answer.
//!
//! Takes: an HTTP answer, or a ledger row's stored answer. Returns: content blocks and
//! structured content, or the stored text and media type (and back).
//! Must never: turn bytes into text they are not (a body that is not text is base64,
//! with its media type).

use base64::Engine as _;
use serde_json::Value;

use super::super::answer::Block;
use crate::client::HttpResponse;
use crate::ledger::Entry;

/// What the ledger keeps of a successful answer, so that a replay is the same answer:
/// the body as text when its media type is text (or unnamed and UTF-8), else base64 of
/// its bytes; and the media type (`application/octet-stream` for unnamed bytes, which
/// the first answer also sent as a resource).
pub(crate) fn stored(response: &HttpResponse) -> (String, Option<String>) {
    let content_type = response.header("content-type").map(str::to_string);
    let essence = content_type
        .as_deref()
        .map(connectorgen_core::model::media_essence)
        .unwrap_or_default();
    let utf8 = std::str::from_utf8(&response.body).is_ok();
    if is_text(&essence) || essence.is_empty() && utf8 {
        let text = String::from_utf8_lossy(&response.body).into_owned();
        (text, content_type)
    } else {
        let bytes = base64::engine::general_purpose::STANDARD.encode(&response.body);
        let media = content_type.unwrap_or_else(|| "application/octet-stream".to_string());
        (bytes, Some(media))
    }
}

/// The first answer back from its row (`stored`'s inverse); `None` when none was kept.
/// A row from before media types were kept holds text: JSON when it parses.
pub(super) fn replayed(entry: &Entry) -> Option<HttpResponse> {
    let result = entry.result.as_ref()?;
    let media = entry.media_type.clone().or_else(|| {
        serde_json::from_str::<Value>(result)
            .is_ok()
            .then(|| "application/json".to_string())
    });
    let essence = media
        .as_deref()
        .map(connectorgen_core::model::media_essence)
        .unwrap_or_default();
    let body = if is_text(&essence) || essence.is_empty() {
        result.clone().into_bytes()
    } else {
        base64::engine::general_purpose::STANDARD
            .decode(result)
            .ok()?
    };
    Some(HttpResponse {
        status: entry.http_status.unwrap_or(200),
        headers: media
            .map(|m| vec![("content-type".to_string(), m)])
            .unwrap_or_default(),
        body,
    })
}

/// JSON, text (`+xml` and XML included) by media type essence.
fn is_json(essence: &str) -> bool {
    essence == "application/json" || essence.ends_with("+json")
}

fn is_text(essence: &str) -> bool {
    essence.starts_with("text/")
        || is_json(essence)
        || essence.ends_with("+xml")
        || essence == "application/xml"
}

/// A successful answer's body as content: JSON as structured content with a text copy,
/// text as text, anything else as an embedded resource (base64, with its media type).
pub(super) fn body(response: &HttpResponse, uri: &str) -> (Vec<Block>, Option<Value>) {
    let content_type = response.header("content-type").unwrap_or_default();
    let essence = connectorgen_core::model::media_essence(content_type);
    if response.body.is_empty() {
        let done = format!(
            "Done: the provider answered HTTP {} with no body.",
            response.status
        );
        return (vec![Block::text(done)], None);
    }
    if is_json(&essence)
        && let Ok(value) = serde_json::from_slice::<Value>(&response.body)
    {
        let text = String::from_utf8_lossy(&response.body).into_owned();
        return (vec![Block::text(text)], Some(value));
    }
    if is_text(&essence) || std::str::from_utf8(&response.body).is_ok() && essence.is_empty() {
        let text = String::from_utf8_lossy(&response.body).into_owned();
        return (vec![Block::text(text)], None);
    }
    let blob = base64::engine::general_purpose::STANDARD.encode(&response.body);
    let mime_type = (!essence.is_empty()).then(|| content_type.to_string());
    (
        vec![Block::Blob {
            uri: uri.to_string(),
            blob,
            mime_type,
        }],
        None,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::Status;

    fn response(content_type: Option<&str>, body: &[u8]) -> HttpResponse {
        HttpResponse {
            status: 201,
            headers: content_type
                .map(|c| vec![("content-type".to_string(), c.to_string())])
                .unwrap_or_default(),
            body: body.to_vec(),
        }
    }

    fn row(result: String, media_type: Option<String>) -> Entry {
        Entry {
            id: 1,
            tool: "t".into(),
            args_hash: "h".into(),
            key: "k".into(),
            nonce: None,
            status: Status::Done,
            http_status: Some(201),
            job_id: None,
            result: Some(result),
            created: 0,
            updated: 0,
            attempts: 1,
            media_type,
            sending: false,
            task: None,
        }
    }

    /// What the ledger keeps gives back the same status, media type and bytes: JSON,
    /// text, bytes of a named type, bytes of none (then `application/octet-stream`).
    #[test]
    fn a_stored_answer_comes_back_whole() {
        let mpeg = b"ID3\x04\x00\xff\xfb\x90";
        for (content_type, body, back) in [
            (
                Some("application/json"),
                &b"{\"id\":1}"[..],
                Some("application/json"),
            ),
            (
                Some("text/plain; charset=utf-8"),
                b"hello",
                Some("text/plain; charset=utf-8"),
            ),
            (Some("audio/mpeg"), mpeg, Some("audio/mpeg")),
            (None, b"plain", None),
            (None, mpeg, Some("application/octet-stream")),
        ] {
            let (result, media) = stored(&response(content_type, body));
            let again = replayed(&row(result, media)).unwrap();
            assert_eq!(again.status, 201);
            assert_eq!(again.body, body, "{content_type:?}");
            assert_eq!(again.header("content-type"), back, "{content_type:?}");
        }
    }

    /// A row written before media types were kept holds text: JSON when it parses.
    #[test]
    fn an_old_row_replays_as_json_or_text() {
        let json = replayed(&row("{\"id\":1}".into(), None)).unwrap();
        assert_eq!(json.header("content-type"), Some("application/json"));
        let text = replayed(&row("done".into(), None)).unwrap();
        assert_eq!(
            (text.header("content-type"), text.body.as_slice()),
            (None, &b"done"[..])
        );
    }
}
