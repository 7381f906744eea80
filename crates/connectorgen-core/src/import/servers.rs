//! Which of the document's servers is the live API: base mode calls the first one unless
//! `service.publicUrl` says otherwise, and some documents list their sandbox first.
//!
//! Takes: the document's root `servers`. Returns: nothing to write when the first
//! server looks live; the first live-looking one as `publicUrl` (with a `# check:`
//! note) when the first looks like a sandbox; or why a `--public-url` is needed when
//! several servers are listed and every one's host names a sandbox.
//! Must never: refuse the document's only server, or a server whose host's labels name
//! no sandbox word (a description alone does not make a sandbox: it only ranks the
//! servers), without saying why; or read anything but the document's root `servers`.

use serde_json::Value;

use super::yaml::{comment, scalar};
use crate::base::Base;
use crate::model::server_url;
use crate::validate::check_url;

/// Words that mark a sandbox in a server's host labels or description.
const SANDBOX_WORDS: &[&str] = &[
    "sandbox",
    "test",
    "testing",
    "staging",
    "stage",
    "dev",
    "development",
    "mock",
    "demo",
];

/// What to do about the default server.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Choice {
    /// The first server looks live (or there is none usable: that is reported elsewhere).
    First,
    /// A `service:` line naming the first live-looking server instead of the sandbox.
    Line(String),
    /// Several usable servers, every one's host a sandbox's: why `--public-url` is
    /// needed.
    NeedsFlag(String),
}

/// Why a server looks like a sandbox.
struct Evidence {
    /// Its host's labels say so (`sandbox.example.com`), not only its description.
    host: bool,
    why: String,
}

/// The first server's fate: kept, replaced by a live-looking one, or a flag needed.
pub(super) fn default_server(base: &Base) -> Choice {
    let servers: Vec<(String, Option<Evidence>)> = base
        .root
        .get("servers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|server| Some((usable_url(server)?, sandbox_evidence(server))))
        .collect();
    let Some((first, Some(evidence))) = servers.first() else {
        return Choice::First;
    };
    let why = &evidence.why;
    if let Some((live, _)) = servers.iter().find(|(_, e)| e.is_none()) {
        return Choice::Line(format!(
            "publicUrl: {}  # check: the document lists {} first, but {why}; this is the first server that does not look like one",
            scalar(live),
            comment(first)
        ));
    }
    // Every server looks like a sandbox. One whose host does not say so is kept (a
    // description is a hint, not proof), and so is the only one there is: said, not
    // refused.
    if let Some((kept, Some(e))) = servers
        .iter()
        .find(|(_, e)| e.as_ref().is_some_and(|e| !e.host))
    {
        return Choice::Line(format!(
            "publicUrl: {}  # check: {}, but its host names no sandbox, so it is taken as the live API; if it is not, pass --public-url",
            scalar(kept),
            e.why
        ));
    }
    if servers.len() == 1 {
        return Choice::Line(format!(
            "publicUrl: {}  # check: {why}, but it is the document's only server, so it is taken as the live API; if it is not, pass --public-url",
            scalar(first)
        ));
    }
    Choice::NeedsFlag(format!(
        "every server the document lists has a sandbox's host (the first, {}: {why}); pass --public-url https://… (the live API's base URL)",
        comment(first)
    ))
}

/// A server's URL with its variables at their defaults, when it is a usable base URL
/// (as base mode reads the first server).
fn usable_url(server: &Value) -> Option<String> {
    server.get("url")?.as_str()?;
    let url = server_url(server);
    check_url(&url).ok()
}

/// Why a server looks like a sandbox, or `None`.
fn sandbox_evidence(server: &Value) -> Option<Evidence> {
    let url = usable_url(server)?;
    let host = url
        .split_once("://")
        .map_or(url.as_str(), |(_, rest)| rest)
        .split(['/', ':'])
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    // `api-m.sandbox.paypal.com`, `connect.squareupsandbox.com`, `api.dev.example`.
    let in_host = host
        .split(['.', '-'])
        .any(|label| label.contains("sandbox") || SANDBOX_WORDS.contains(&label));
    if in_host {
        return Some(Evidence {
            host: true,
            why: format!("its host {} looks like a sandbox's", comment(&host)),
        });
    }
    let description = server.get("description").and_then(Value::as_str)?;
    description
        .split(|c: char| !c.is_alphanumeric())
        .any(|w| SANDBOX_WORDS.contains(&w.to_lowercase().as_str()))
        .then(|| Evidence {
            host: false,
            why: format!(
                "its description says {}",
                comment(&format!("“{description}”"))
            ),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base(servers: Value) -> Base {
        let text = serde_json::json!({
            "openapi": "3.1.0",
            "info": { "title": "T", "version": "1" },
            "servers": servers,
            "paths": {}
        })
        .to_string();
        Base::parse("t.json", std::sync::Arc::new(text)).unwrap()
    }

    #[test]
    fn a_sandbox_listed_first_is_not_the_default() {
        let live_first = base(serde_json::json!([
            { "url": "https://api.example.com" },
            { "url": "https://sandbox.example.com" }
        ]));
        assert_eq!(default_server(&live_first), Choice::First);
        let sandbox_first = base(serde_json::json!([
            { "url": "https://api.example.com/v1", "description": "Test environment" },
            { "url": "https://api.example.com/live", "description": "Production" }
        ]));
        let Choice::Line(line) = default_server(&sandbox_first) else {
            panic!()
        };
        assert!(line.starts_with("publicUrl: \"https://api.example.com/live\"  # check:"));
        assert!(line.contains("“Test environment”"), "{line}");
        // The document's only server is kept, whatever its host looks like, and why it
        // looks like a sandbox is said (issue 49: a production host refused).
        for host in [
            "connect.squareupsandbox.com",
            "api.dev.example",
            "staging-api.example",
        ] {
            let only = base(serde_json::json!([{ "url": format!("https://{host}") }]));
            let Choice::Line(line) = default_server(&only) else {
                panic!("{host}: refused")
            };
            assert!(line.contains("the document's only server"), "{line}");
            assert!(line.contains(host), "{line}");
        }
        // Several servers, every host a sandbox's: a flag is needed.
        let all = base(serde_json::json!([
            { "url": "https://sandbox.example.com" },
            { "url": "https://api.test.example.com" }
        ]));
        assert!(matches!(default_server(&all), Choice::NeedsFlag(_)));
        // Every description says test, but no host does: the first is kept, not refused.
        let described = base(serde_json::json!([
            { "url": "https://api.example.com/v1", "description": "Test environment" },
            { "url": "https://api.example.com/v2", "description": "Staging" }
        ]));
        let Choice::Line(line) = default_server(&described) else {
            panic!("refused a server whose host names no sandbox")
        };
        assert!(
            line.starts_with("publicUrl: \"https://api.example.com/v1\"  # check:"),
            "{line}"
        );
        // A word inside a label is not a label: `latest`, `developer`.
        let live = base(serde_json::json!([{ "url": "https://latest.developer.example" }]));
        assert_eq!(default_server(&live), Choice::First);
    }
}
