//! `service:` in base mode: every field but `dashboardUrl` defaults to the base
//! document's `info` (llms.txt's summary: the first paragraph of `info.description` as
//! plain text), its `externalDocs` (the Docs link) and first server.
//!
//! Takes: the raw `service:` and the parsed `Base`. Returns (through `Validator`): the
//! `Service`, and whether `publicUrl` was given (then the outputs call it instead of
//! the document's servers). `first_server` is what `import` reads too.
//! Must never: invent a value the base document does not hold and the author did not
//! write; let the document's Markdown reach llms.txt's summary as structure.

use serde_json::Value;
use serde_saphyr::Spanned;

use crate::base::Base;
use crate::diagnostics::Span;
use crate::manifest::{RawService, span};
use crate::model::{Service, server_url};
use crate::validate::context::Validator;
use crate::validate::context::{checked_url, link, missing, non_empty, url};
use crate::validate::syntax::check_url;

/// `service:` over the base's `info`, or the finding that it is missing; and whether
/// `publicUrl` was given.
pub(in crate::validate) fn service(
    v: &mut Validator,
    s: Option<&Spanned<RawService>>,
    root: Span,
    base: &Base,
) -> (Option<Service>, bool) {
    let Some(s) = s else {
        missing(
            v,
            "service",
            "the manifest",
            root,
            "add `service:` with at least `dashboardUrl: https://…` (where the person creates API keys); every other field defaults to the base document",
        );
        return (None, false);
    };
    match base_service(v, s, base) {
        Some((service, given)) => (Some(service), given),
        None => (None, false),
    }
}

/// `service:` in base mode: every field but `dashboardUrl` defaults to the base
/// document's `info` and first server. Also says whether `publicUrl` was given.
fn base_service(
    v: &mut Validator,
    s: &Spanned<RawService>,
    base: &Base,
) -> Option<(Service, bool)> {
    let at = span(s);
    let raw = &s.value;
    let info = base.root.get("info");
    let info_text = |key: &str| {
        info.and_then(|i| i.get(key))
            .and_then(|v| match v {
                Value::String(s) => Some(s.trim().to_string()),
                Value::Number(n) => Some(n.to_string()),
                _ => None,
            })
            .filter(|t| !t.is_empty())
    };
    let mut field = |value: &Option<Spanned<String>>,
                     key: &'static str,
                     default: Option<String>,
                     help: &str| {
        if let Some(given) = value {
            non_empty(v, given, key, help)
        } else {
            if default.is_none() {
                missing(v, key, "`service`", at, help);
            }
            default
        }
    };
    let title = field(
        &raw.title,
        "title",
        info_text("title"),
        "give a title, or remove `title` to use the base document's info.title",
    );
    let name = field(
        &raw.name,
        "name",
        info_text("title").map(|t| service_name(&t)),
        "give the service's name as people know it, e.g. `name: VidGen`",
    );
    let version = field(
        &raw.version,
        "version",
        info_text("version"),
        "give the API's version, e.g. `version: 1.0.0`",
    );
    let description = field(
        &raw.description,
        "description",
        info_text("description"),
        "the base document's info has no description: write one paragraph on who this connector is for and what it does",
    );
    let public_url = match &raw.public_url {
        Some(url) => checked_url(v, url, "publicUrl"),
        None => match first_server(base) {
            Ok(url) => Some(url),
            Err(reason) => {
                missing(
                    v,
                    "publicUrl",
                    "`service`",
                    at,
                    &format!("{reason}; add `publicUrl: https://…`, the API's base URL"),
                );
                None
            }
        },
    };
    let dashboard_url = url(v, raw.dashboard_url.as_ref(), "dashboardUrl", at);
    let spec_url = link(v, raw.spec_url.as_ref(), "specUrl");
    let docs_url = match &raw.docs_url {
        Some(url) => link(v, Some(url), "docsUrl"),
        None => Some(external_docs(base)),
    };
    let description = description?;
    // The author's words stand as written; the document's are a Markdown page.
    let summary = match &raw.description {
        Some(_) => description.clone(),
        None => summary(&description),
    };
    Some((
        Service {
            name: name?,
            title: title?,
            version: version?,
            summary,
            description,
            spec_url: spec_url?,
            docs_url: docs_url?,
            public_url: public_url?,
            dashboard_url: dashboard_url?,
        },
        raw.public_url.is_some(),
    ))
}

/// The document's `externalDocs.url` (or the `info.externalDocs.url` some documents
/// write, which the outputs move to the root), when it is a link llms.txt may give: an
/// absolute `https` URL without credentials. One that is not is not offered.
fn external_docs(base: &Base) -> Option<String> {
    ["/externalDocs/url", "/info/externalDocs/url"]
        .iter()
        .find_map(|pointer| base.root.pointer(pointer)?.as_str())
        .and_then(|url| crate::validate::syntax::check_link(url.trim()).ok())
}

/// Longest first paragraph used whole as the summary; a longer one gives its first
/// sentence.
const SUMMARY_MAX: usize = 300;

/// llms.txt's summary from a document's `info.description` (CommonMark, often a whole
/// page): its first paragraph of prose as plain text. Headings, fenced and indented code
/// blocks, HTML tags, tables and horizontal rules are skipped; links keep their text,
/// images and emphasis their words. A paragraph over `SUMMARY_MAX` characters gives its
/// first sentence. The text is still data: the template escapes it (`md_inline`).
fn summary(description: &str) -> String {
    let mut paragraph: Vec<&str> = Vec::new();
    let mut fence: Option<&str> = None;
    for line in description.lines() {
        let trimmed = line.trim();
        if let Some(open) = fence {
            if trimmed.starts_with(open) {
                fence = None;
            }
            continue;
        }
        if let Some(open) = ["```", "~~~"].into_iter().find(|f| trimmed.starts_with(f)) {
            fence = Some(open);
            if paragraph.is_empty() {
                continue;
            }
            break;
        }
        let skipped = trimmed.starts_with('#')
            || trimmed.starts_with('|')
            || line.starts_with("    ")
            || line.starts_with('\t')
            || trimmed
                .chars()
                .all(|c| matches!(c, '-' | '=' | '*' | '_' | ' '));
        if trimmed.is_empty() || skipped {
            // A setext underline (`===` under a line) makes that line a heading.
            if !trimmed.is_empty() && trimmed.chars().all(|c| matches!(c, '-' | '=')) {
                paragraph.clear();
                continue;
            }
            if paragraph.is_empty() {
                continue;
            }
            break;
        }
        paragraph.push(trimmed.trim_start_matches(['>', ' ']));
    }
    let text = inline_plain(&plain_html(&paragraph.join(" ")));
    if text.chars().count() <= SUMMARY_MAX {
        return text;
    }
    let first = crate::english::sentences(&text)
        .first()
        .map_or_else(String::new, |s| (*s).to_string());
    crate::english::clip(&first, SUMMARY_MAX)
}

/// The text without HTML tags (a `<` opens one only before a letter, `/` or `!`), an
/// autolink (`<https://…>`) written as its address.
fn plain_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('<') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let tag = after
            .chars()
            .next()
            .is_some_and(|n| n.is_ascii_alphabetic() || matches!(n, '/' | '!'));
        match after.find('>') {
            Some(end) if is_autolink(&after[..end]) => {
                out.push_str(&after[..end]);
                rest = &after[end + 1..];
            }
            Some(end) if tag => {
                out.push(' ');
                rest = &after[end + 1..];
            }
            _ => {
                out.push('<');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Whether the text between `<` and `>` is a CommonMark autolink's address.
fn is_autolink(inner: &str) -> bool {
    ["https://", "http://", "mailto:"]
        .iter()
        .any(|scheme| inner.starts_with(scheme))
        && !inner.contains(char::is_whitespace)
}

/// Inline Markdown to its words: `[text](url)` and `![alt](src)` → text, `` `code` ``
/// → code, `**`, `__` and `*` emphasis markers dropped; whitespace folded.
fn inline_plain(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if c == '!' && rest[1..].starts_with('[') {
            rest = &rest[1..];
            continue;
        }
        if c == '['
            && let Some(close) = rest.find("](")
            && let Some(end) = rest[close..].find(')')
        {
            out.push_str(&rest[1..close]);
            rest = &rest[close + end + 1..];
            continue;
        }
        if c == '`' || c == '*' || rest.starts_with("__") {
            rest = &rest[if rest.starts_with("__") { 2 } else { 1 }..];
            continue;
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// "Stripe API" → "Stripe": the name prose uses, from the document's title.
fn service_name(title: &str) -> String {
    let trimmed = title.trim();
    for suffix in [" REST API", " API", " Api"] {
        if let Some(name) = trimmed.strip_suffix(suffix)
            && !name.trim().is_empty()
        {
            return name.trim().to_string();
        }
    }
    trimmed.to_string()
}

/// The base document's first server as a usable base URL (its variables at their
/// defaults), or why there is none.
pub fn first_server(base: &Base) -> Result<String, String> {
    let Some(server) = base
        .root
        .get("servers")
        .and_then(Value::as_array)
        .and_then(|s| s.first())
    else {
        return Err("the base document lists no servers".to_string());
    };
    let url = server_url(server);
    check_url(&url).map_err(|reason| {
        format!("the base document's first server `{url}` is not a usable base URL: {reason}")
    })
}

#[cfg(test)]
mod tests {
    use super::summary;

    #[test]
    fn the_summary_is_the_first_paragraph_as_plain_text() {
        let page = "# Scribe API\n\n```bash\ncurl https://api.scribe.example\n```\n\nScribe **transcribes** the\nperson's [recordings](https://scribe.example/docs).\n\n## Setup\n\nMore.";
        assert_eq!(summary(page), "Scribe transcribes the person's recordings.");
        assert_eq!(
            summary("Intro\n=====\n\n<p>Reads `notes`.</p>\n"),
            "Reads notes."
        );
        assert_eq!(summary("    indented code\n\nText."), "Text.");
        assert_eq!(
            summary("More at <https://docs.example/sms>, if 1 < 2."),
            "More at https://docs.example/sms, if 1 < 2."
        );
        assert_eq!(
            summary("| a | b |\n|---|---|\n\n> Quoted words."),
            "Quoted words."
        );
    }

    #[test]
    fn a_long_first_paragraph_gives_its_first_sentence() {
        let long = format!("Short start. {}", "More words here. ".repeat(30));
        assert_eq!(summary(&long), "Short start.");
    }
}
