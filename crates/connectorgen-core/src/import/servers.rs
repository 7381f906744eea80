//! Which of the document's servers is the live API: base mode calls the first one unless
//! `service.publicUrl` says otherwise, and some documents list their sandbox first.
//!
//! Takes: the document's root `servers`. Returns: nothing to write when the first
//! server looks live; the first live-looking one as `publicUrl` (with a `# check:`
//! note) when the first looks like a sandbox; or why a `--public-url` is needed when
//! every usable server looks like one.
//! Must never: make a server that looks like a sandbox, test, staging or development
//! server the default, or read anything but the document's root `servers`.

use serde_json::Value;

use super::yaml::{comment, scalar};
use crate::base::Base;
use crate::validate::{check_url, server_url};

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
    /// Every usable server looks like a sandbox: why `--public-url` is needed.
    NeedsFlag(String),
}

/// The first server's fate: kept, replaced by a live-looking one, or a flag needed.
pub(super) fn default_server(base: &Base) -> Choice {
    let servers: Vec<(String, Option<String>)> = base
        .root
        .get("servers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|server| Some((usable_url(server)?, sandbox_evidence(server))))
        .collect();
    let Some((first, Some(why))) = servers.first() else {
        return Choice::First;
    };
    match servers.iter().find(|(_, sandbox)| sandbox.is_none()) {
        Some((live, _)) => Choice::Line(format!(
            "publicUrl: {}  # check: the document lists {} first, but {why}; this is the first server that does not look like one",
            scalar(live),
            comment(first)
        )),
        None => Choice::NeedsFlag(format!(
            "every server the document lists looks like a sandbox (the first, {}: {why}); pass --public-url https://… (the live API's base URL)",
            comment(first)
        )),
    }
}

/// A server's URL with its variables at their defaults, when it is a usable base URL
/// (as base mode reads the first server).
fn usable_url(server: &Value) -> Option<String> {
    server.get("url")?.as_str()?;
    let url = server_url(server);
    check_url(&url).ok()
}

/// Why a server looks like a sandbox, in words, or `None`.
fn sandbox_evidence(server: &Value) -> Option<String> {
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
        return Some(format!(
            "its host {} looks like a sandbox's",
            comment(&host)
        ));
    }
    let description = server.get("description").and_then(Value::as_str)?;
    description
        .split(|c: char| !c.is_alphanumeric())
        .any(|w| SANDBOX_WORDS.contains(&w.to_lowercase().as_str()))
        .then(|| {
            format!(
                "its description says {}",
                comment(&format!("“{description}”"))
            )
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
        for host in [
            "connect.squareupsandbox.com",
            "api.dev.example",
            "staging-api.example",
        ] {
            let only = base(serde_json::json!([{ "url": format!("https://{host}") }]));
            assert!(
                matches!(default_server(&only), Choice::NeedsFlag(_)),
                "{host}"
            );
        }
        // A word inside a label is not a label: `latest`, `developer`.
        let live = base(serde_json::json!([{ "url": "https://latest.developer.example" }]));
        assert_eq!(default_server(&live), Choice::First);
    }
}
