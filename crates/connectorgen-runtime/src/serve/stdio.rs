//! `serve` over stdio: the process's stdin and stdout between the client and rmcp, with
//! the one answer rmcp leaves out.
//!
//! Takes: the process's stdin and stdout. Returns: a reader and a writer for rmcp's
//! transport, and the tasks that move the bytes.
//! Must never: change a message that is JSON (it goes to rmcp byte for byte), let two
//! writers interleave on stdout (every line goes out whole, under one lock), or stay
//! silent on a line that is not JSON: JSON-RPC 2.0 answers it with a parse error
//! (-32700, `id: null`), which rmcp does not send (it drops such lines, rust-sdk #938,
//! against an echo storm: our answer is itself valid JSON, so a peer echoing it does
//! not feed a loop).

use std::sync::Arc;

use tokio::io::{AsyncBufRead, AsyncBufReadExt as _, AsyncWrite, AsyncWriteExt as _, DuplexStream};
use tokio::sync::Mutex;

/// The longest line read, as rmcp's own transport bounds it.
pub(crate) const MAX_LINE: usize = rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH;

/// What a line of input is.
#[derive(Debug, PartialEq, Eq)]
enum Line {
    /// JSON (or empty): handed to rmcp as it is.
    Pass,
    /// Not JSON: answered with this error line.
    Refuse(String),
}

fn classify(line: &[u8]) -> Line {
    let body = line.strip_suffix(b"\n").unwrap_or(line);
    let body = body.strip_suffix(b"\r").unwrap_or(body);
    let body = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
    if body.iter().all(u8::is_ascii_whitespace)
        || serde_json::from_slice::<serde::de::IgnoredAny>(body).is_ok()
    {
        return Line::Pass;
    }
    Line::Refuse(error_line(-32700, "Parse error: the line is not JSON"))
}

fn error_line(code: i32, message: &str) -> String {
    let mut line = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": code, "message": message},
    })
    .to_string();
    line.push('\n');
    line
}

/// One line of at most `max` bytes (its `\n` included) into `buf`; `Ok(false)` at the
/// end of input. A longer line is consumed to its end and reported as `Err(())` inside
/// `Ok(true)`'s place: the caller answers it and goes on.
async fn read_line<R: AsyncBufRead + Unpin>(
    read: &mut R,
    buf: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<Option<bool>> {
    buf.clear();
    let mut oversized = false;
    loop {
        let available = read.fill_buf().await?;
        if available.is_empty() {
            // A last line without `\n` is incomplete: nothing to answer, as rmcp.
            return Ok(None);
        }
        let newline = available.iter().position(|b| *b == b'\n');
        let take = newline.map_or(available.len(), |i| i + 1);
        if !oversized && buf.len() + take > max {
            oversized = true;
            buf.clear();
        }
        if !oversized {
            buf.extend_from_slice(&available[..take]);
        }
        read.consume(take);
        if newline.is_some() {
            return Ok(Some(!oversized));
        }
    }
}

/// Writes `line` whole to the shared output.
async fn write_line<W: AsyncWrite + Unpin>(out: &Mutex<W>, line: &[u8]) -> std::io::Result<()> {
    let mut out = out.lock().await;
    out.write_all(line).await?;
    out.flush().await
}

/// Moves lines from `input` to rmcp and from rmcp to `output`, answering what is not
/// JSON. Returns the two ends rmcp's transport uses.
pub(crate) fn proxy<R, W>(input: R, output: W) -> (DuplexStream, DuplexStream)
where
    R: AsyncBufRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (mut to_rmcp, rmcp_reads) = tokio::io::duplex(64 * 1024);
    let (rmcp_writes, from_rmcp) = tokio::io::duplex(64 * 1024);
    let output = Arc::new(Mutex::new(output));
    let out = output.clone();
    tokio::spawn(async move {
        let mut input = input;
        let mut buf = Vec::new();
        loop {
            match read_line(&mut input, &mut buf, MAX_LINE).await {
                Ok(Some(true)) => match classify(&buf) {
                    Line::Pass => {
                        if to_rmcp.write_all(&buf).await.is_err() {
                            break;
                        }
                    }
                    Line::Refuse(answer) => {
                        if write_line(&out, answer.as_bytes()).await.is_err() {
                            break;
                        }
                    }
                },
                Ok(Some(false)) => {
                    let answer = error_line(
                        -32600,
                        &format!("Invalid Request: the line is longer than {MAX_LINE} bytes"),
                    );
                    if write_line(&out, answer.as_bytes()).await.is_err() {
                        break;
                    }
                }
                // End of input (or a broken stdin): rmcp sees the end and stops.
                Ok(None) | Err(_) => break,
            }
        }
        let _ = to_rmcp.shutdown().await;
    });
    tokio::spawn(async move {
        let mut from_rmcp = tokio::io::BufReader::new(from_rmcp);
        let mut buf = Vec::new();
        // rmcp writes one message per line; no bound here (our own output).
        while let Ok(n) = from_rmcp.read_until(b'\n', &mut buf).await {
            if n == 0 || write_line(&output, &buf).await.is_err() {
                break;
            }
            buf.clear();
        }
    });
    (rmcp_reads, rmcp_writes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_passes_and_anything_else_is_a_parse_error() {
        assert_eq!(classify(b"{\"jsonrpc\":\"2.0\"}\n"), Line::Pass);
        assert_eq!(classify(b"\xEF\xBB\xBF[1]\r\n"), Line::Pass);
        assert_eq!(classify(b"\n"), Line::Pass);
        let Line::Refuse(answer) = classify(b"hello\n") else {
            panic!("not refused")
        };
        let answer: serde_json::Value = serde_json::from_str(&answer).unwrap();
        assert_eq!(answer["error"]["code"], -32700);
        assert_eq!(answer["id"], serde_json::Value::Null);
        assert!(matches!(classify(b"{\"a\":\n"), Line::Refuse(_)));
    }

    #[test]
    fn a_line_over_the_bound_is_consumed_and_reported() {
        let data: &[u8] = b"0123456789\n{}\n";
        let mut reader = tokio::io::BufReader::with_capacity(4, data);
        let mut buf = Vec::new();
        crate::block_on(async {
            assert_eq!(
                read_line(&mut reader, &mut buf, 5).await.unwrap(),
                Some(false)
            );
            assert_eq!(
                read_line(&mut reader, &mut buf, 5).await.unwrap(),
                Some(true)
            );
            assert_eq!(buf, b"{}\n");
            assert_eq!(read_line(&mut reader, &mut buf, 5).await.unwrap(), None);
        })
        .unwrap();
    }
}
