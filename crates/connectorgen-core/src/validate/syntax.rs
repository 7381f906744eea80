//! The syntax of single values: operation ids, path templates, URLs.
//!
//! Takes: one string. Returns: whether (or how) it is well-formed; no spans, no state.

use crate::model::Target;

/// An agent-facing operation id: 1 to 128 ASCII letters, digits, `_`, `.` or `-`, not
/// starting with `.` or `-` (the characters every agent platform's tool names share
/// except OpenAI's `.`; ids end up in URLs, code spans and tool names).
pub fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    s.len() <= 128
        && chars
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

/// Why a target cannot take an (otherwise valid) id: MCP tool names are at most 128 of
/// `A-Za-z0-9_.-`; OpenAI function names at most 64 of `A-Za-z0-9_-`.
pub(super) fn agent_id_problem(id: &str, target: Target) -> Option<&'static str> {
    match target {
        Target::Openai if id.len() > 64 => Some("OpenAI function names are at most 64 characters"),
        Target::Openai if id.contains('.') => {
            Some("OpenAI function names use only letters, digits, `_` and `-`")
        }
        Target::Mcp if !is_identifier(id) => {
            Some("MCP tool names are 1 to 128 letters, digits, `_`, `.` or `-`")
        }
        _ => None,
    }
}

/// The path with every `{name}` replaced by `{}`, the form OpenAPI compares paths by.
pub(super) fn path_shape(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    let mut in_param = false;
    for c in path.chars() {
        match c {
            '{' => {
                in_param = true;
                out.push('{');
            }
            '}' => {
                in_param = false;
                out.push('}');
            }
            _ if in_param => {}
            _ => out.push(c),
        }
    }
    out
}

/// Checks a path template and returns its parameter names in order (the one rule,
/// shared with base mode: `model::path_template`).
pub(super) fn parse_path(path: &str) -> Result<Vec<String>, String> {
    crate::model::path_template(path)
}

/// Absolute https (http only for localhost / 127.0.0.1), no credentials, query or
/// fragment; returns it without a trailing slash. For a base URL: a server URL with a
/// query breaks every client that appends a path to it.
pub fn check_url(url: &str) -> Result<String, String> {
    check(url, false)
}

/// A page the person opens or a file the model reads (`dashboardUrl`, `specUrl`): the
/// rules of `check_url`, but a query and a fragment are allowed and kept as written.
pub(super) fn check_link(url: &str) -> Result<String, String> {
    check(url, true)
}

fn check(url: &str, link: bool) -> Result<String, String> {
    // `http::Uri` knows no fragments: parse what comes before one.
    let uri: http::Uri = url
        .split('#')
        .next()
        .unwrap_or_default()
        .parse()
        .map_err(|e: http::uri::InvalidUri| format!("it does not parse as a URL ({e})"))?;
    let scheme = uri
        .scheme_str()
        .ok_or_else(|| "it is not absolute (no `https://`)".to_string())?;
    let authority = uri
        .authority()
        .ok_or_else(|| "it has no host".to_string())?;
    if authority.as_str().contains('@') {
        return Err("it contains credentials; never put secrets in a manifest".to_string());
    }
    let host = authority.host();
    if host.is_empty() {
        return Err("it has no host".to_string());
    }
    match scheme {
        "https" => {}
        "http" if matches!(host, "localhost" | "127.0.0.1") => {}
        "http" => return Err("plain http is allowed only for localhost and 127.0.0.1".to_string()),
        other => return Err(format!("the scheme is `{other}`, not https")),
    }
    let (before, after) = match url.find(['?', '#']) {
        Some(i) if link => url.split_at(i),
        Some(_) => return Err("it has a query or fragment".to_string()),
        None => (url, ""),
    };
    // The query was checked by the parser; a fragment is not, so it gets the same rule:
    // only what a URL may hold unencoded (no spaces, `<`, `>`, quotes or backticks).
    let allowed = |c: char| c.is_ascii_alphanumeric() || "-._~!$&'()*+,;=:@/?%#".contains(c);
    if let Some(bad) = after.chars().find(|&c| !allowed(c)) {
        return Err(format!(
            "`{}` cannot appear in a URL's query or fragment unencoded",
            bad.escape_default()
        ));
    }
    Ok(format!("{}{after}", before.trim_end_matches('/')))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        assert_eq!(
            check_url("https://a.example/").unwrap(),
            "https://a.example"
        );
        assert_eq!(
            check_url("https://a.example/v1//").unwrap(),
            "https://a.example/v1"
        );
        assert!(check_url("http://localhost:8080").is_ok());
        assert!(check_url("http://127.0.0.1").is_ok());
        assert!(check_url("http://a.example").is_err());
        assert!(check_url("ftp://a.example").is_err());
        assert!(check_url("/relative").is_err());
        assert!(check_url("https://user:pw@a.example").is_err());
        assert!(check_url("https://a.example/?q=1").is_err());
        assert!(check_url("https://a.example/#x").is_err());
        assert!(check_url("not a url").is_err());
        assert_eq!(
            check_link("https://a.example/settings/?tab=keys#api").unwrap(),
            "https://a.example/settings?tab=keys#api"
        );
        assert_eq!(
            check_link("https://a.example/keys#new").unwrap(),
            "https://a.example/keys#new"
        );
        assert!(check_link("https://user:pw@a.example/?q=1").is_err());
        assert!(check_link("http://a.example/?q=1").is_err());
        assert!(check_link("https://a.example/#a>b").is_err());
        assert!(check_link("https://a.example/#a b").is_err());
    }

    #[test]
    fn paths() {
        assert_eq!(parse_path("/v1/videos/{id}").unwrap(), vec!["id"]);
        assert_eq!(parse_path("/a/{x}/b/{y_2}").unwrap(), vec!["x", "y_2"]);
        assert!(parse_path("v1").is_err());
        assert!(parse_path("/a/{").is_err());
        assert!(parse_path("/a/}").is_err());
        assert!(parse_path("/a/{}").is_err());
        assert!(parse_path("/a/{x}/{x}").is_err());
        assert!(parse_path("/a/{x{y}}").is_err());
        assert!(parse_path("/a b").is_err());
        assert!(parse_path("/a`b").is_err());
        assert!(parse_path("/a?b=1").is_err());
        assert!(parse_path("/a#frag").is_err());
        assert!(parse_path("//evil.example/a").is_err());
        assert!(parse_path("/a\u{202e}b").is_err());
        assert!(parse_path("/a\u{200b}b").is_err());
        assert!(parse_path("/a\nb").is_err());
        assert_eq!(
            parse_path("/users/{user-id}/{v.2}").unwrap(),
            ["user-id", "v.2"]
        );
        assert!(parse_path("/a/{-x}").is_err());
        assert_eq!(path_shape("/a/{id}/b"), "/a/{}/b");
    }

    #[test]
    fn identifiers() {
        assert!(is_identifier("createVideo"));
        assert!(is_identifier("a_1"));
        assert!(is_identifier("predictions.create"));
        assert!(is_identifier("post-v2-transcript"));
        assert!(is_identifier("_a"));
        assert!(!is_identifier("-a"));
        assert!(!is_identifier("a b"));
        assert!(!is_identifier("a/b"));
        assert!(!is_identifier(""));
        assert!(!is_identifier(&"a".repeat(129)));
        assert_eq!(agent_id_problem("predictions.create", Target::Mcp), None);
        assert!(agent_id_problem("predictions.create", Target::Openai).is_some());
        assert!(agent_id_problem(&"a".repeat(65), Target::Openai).is_some());
        assert_eq!(agent_id_problem(&"a".repeat(65), Target::Muse), None);
    }
}
