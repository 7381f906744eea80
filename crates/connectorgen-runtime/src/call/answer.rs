//! A call's answer as the call stage makes it, before any protocol: what the model reads
//! (text, the provider's body as structured content or as a resource), whether it is a
//! tool error, and the server's own machine-readable facts about it.
//!
//! Takes: the parts, from `reply.rs` and `output.rs`. Returns: an `Answer`, which `serve`
//! turns into MCP's `CallToolResult` (`serve/handler.rs`, `result`).
//! Must never: hold anything the protocol adds (ids, tasks, the way consent is asked):
//! that is `serve`'s.

use serde_json::{Map, Value};

/// One tool call's answer.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Answer {
    pub content: Vec<Block>,
    /// The provider's JSON body, for a tool with an output schema to check.
    pub structured_content: Option<Value>,
    /// A tool error: the model reads it as "this did not work", with the text saying
    /// why and what to do.
    pub is_error: bool,
    /// The server's facts (`_meta["dev.connectorgen/serve"]`, `reply::META_KEY`); none
    /// when empty.
    pub facts: Map<String, Value>,
}

/// One block of an answer's content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Block {
    Text(String),
    /// Bytes of a body that is not text, base64, at the request's URL without its query.
    Blob {
        uri: String,
        blob: String,
        mime_type: Option<String>,
    },
}

impl Block {
    pub(crate) fn text(text: impl Into<String>) -> Block {
        Block::Text(text.into())
    }
}

impl Answer {
    pub(crate) fn success(content: Vec<Block>) -> Answer {
        Answer {
            content,
            ..Answer::default()
        }
    }

    pub(crate) fn error(content: Vec<Block>) -> Answer {
        Answer {
            content,
            is_error: true,
            ..Answer::default()
        }
    }
}
