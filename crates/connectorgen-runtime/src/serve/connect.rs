//! The connect pages of `serve --http` (`auth.perPerson`): where a person, in their own
//! browser, connects their provider account to the connector and disconnects it.
//!
//! Takes: an HTTP request under `/connect/` and the call stage (its `People`, the check
//! read, the client). Returns: the page, or `None` for a request that is not a connect
//! page's (the MCP endpoint and the gate handle it).
//!
//! The person is named by the link they were given (`/connect/<link>`, sealed: it names
//! the principal and expires); opening it sets a cookie naming the same person, and each
//! form carries an anti-forgery value naming them too. A form is taken only when all
//! three name the same person: a form posted from another site has no cookie (it is
//! `SameSite=Lax`) and no form value, and one person's form value is refused on another
//! person's link.
//! Must never: show, echo or redirect with a key (the key goes only into the sealed row
//! and the check read), keep a key the check read did not answer with success, load a
//! script or a style from anywhere (one page, its own inline style, a CSP that forbids the
//! rest), or be cached or framed.

use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full, Limited};
use serde_json::{Map, json};

use super::Body;
use crate::call::Stage;
use crate::connect::{CALLBACK_PATH, CONNECT_PATH, COOKIE, Finished, Kept, LINK_SECONDS, People};
use connectorgen_core::model::PerPerson;

/// serve's own tool that gives a person the link to their connect page, to connect,
/// replace or disconnect their account (`auth.perPerson` only).
pub(crate) const TOOL: &str = connectorgen_core::model::CONNECT_TOOL;

/// `connectAccount` as `tools/list` shows it: a free read of serve's own.
pub(super) fn tool(service: &str) -> Result<rmcp::model::Tool, String> {
    serde_json::from_value(json!({
        "name": TOOL,
        "title": "Connect your account",
        "description": format!(
            "Gives the link to the person's own page for their {service} account: there, in \
             their browser, they connect it, replace its key, or disconnect it. Pass the link \
             to the person; never ask them for a key or password in the chat. Read-only: it \
             sends nothing to {service}, changes nothing and costs nothing."
        ),
        "inputSchema": { "type": "object", "properties": {}, "additionalProperties": false },
        "annotations": {
            "readOnlyHint": true,
            "destructiveHint": false,
            "idempotentHint": true,
            "openWorldHint": false
        }
    }))
    .map_err(|e| format!("tool {TOOL}: {e}"))
}

/// `connectAccount`'s answer for the person `who`.
pub(super) fn tool_answer(stage: &Stage, who: Option<&str>) -> rmcp::model::CallToolResult {
    use rmcp::model::{CallToolResult, ContentBlock, MetaObject};
    let (Some(people), Some(principal)) = (stage.people.as_ref(), who) else {
        return CallToolResult::error(vec![ContentBlock::text(
            "NOT AVAILABLE: this server does not keep people's own accounts.",
        )]);
    };
    let link = people.link(principal);
    let mut result = CallToolResult::success(vec![ContentBlock::text(format!(
        "Ask the person to open this page in their browser to connect, replace or disconnect \
         their own {} account: {link} . The link is theirs alone and expires in {} minutes. \
         Nothing was sent or changed.",
        people.connector(),
        LINK_SECONDS / 60
    ))]);
    let mut meta = Map::new();
    meta.insert(
        crate::call::reply::META_KEY.into(),
        json!({ "connectUrl": link }),
    );
    result.meta = Some(MetaObject(meta));
    result
}

/// The largest form read: a key and two sealed values fit many times over.
const MAX_FORM: usize = 16 << 10;

/// The longest key taken.
const MAX_KEY: usize = 4096;

/// The page for `request`, when it is a connect page's.
pub(super) async fn answer<B>(
    stage: &Arc<Stage>,
    request: http::Request<B>,
) -> Result<http::Response<Body>, http::Request<B>>
where
    B: hyper::body::Body<Data = Bytes> + Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let Some(people) = stage.people.as_ref() else {
        return Err(request);
    };
    let Some(link) = request
        .uri()
        .path()
        .strip_prefix(CONNECT_PATH)
        .map(str::to_string)
    else {
        return Err(request);
    };
    let page = Page { stage, people };
    if request.uri().path() == CALLBACK_PATH {
        return Ok(page.callback(&request).await);
    }
    Ok(match *request.method() {
        http::Method::GET => page.open(&link).await,
        http::Method::POST => page.post(&link, request).await,
        _ => page.say(
            http::StatusCode::METHOD_NOT_ALLOWED,
            "Not here",
            "This page is opened in a browser.",
            None,
        ),
    })
}

struct Page<'a> {
    stage: &'a Arc<Stage>,
    people: &'a People,
}

/// What a page may show besides its text: the forms, for this person, and what went
/// wrong with the last one, shown apart from the text so that it stands out.
struct Forms {
    form_value: String,
    connected: bool,
    problem: Option<&'static str>,
}

impl Page<'_> {
    /// `GET /connect/<link>`: the page, and the cookie naming the person.
    async fn open(&self, link: &str) -> http::Response<Body> {
        let Ok(principal) = self.people.person_of_link(link) else {
            return self.expired();
        };
        let connected = matches!(self.people.kept(&principal).await, Ok(Some(_)));
        let oauth = matches!(self.people.way, PerPerson::OAuth(_));
        let mut response = if oauth && !connected {
            // Straight on to the provider's sign-in; the cookie comes back with the
            // callback (`SameSite=Lax`: a top-level navigation).
            match self.people.start_oauth(&principal).await {
                Ok(url) => redirect(&url),
                Err(e) => {
                    self.stage.redactor.line(
                        "connect",
                        json!({"outcome": "not-started", "problem": e.to_string()}),
                    );
                    self.say(
                        http::StatusCode::SERVICE_UNAVAILABLE,
                        "Not connected",
                        "The sign-in at the provider could not be started right now. Try \
                         again in a moment.",
                        None,
                    )
                }
            }
        } else if connected {
            self.say(
                http::StatusCode::OK,
                "Your account is connected",
                if oauth {
                    "The calls you agree to go out with your own account. You can disconnect: \
                     this connector then keeps nothing of yours."
                } else {
                    "The calls you agree to go out with your own account. You can replace the \
                     key, or disconnect: this connector then keeps nothing of yours."
                },
                Some(Forms {
                    form_value: self.people.form_value(&principal),
                    connected: true,
                    problem: None,
                }),
            )
        } else {
            self.form_page(&principal, None)
        };
        self.set_cookie(&mut response, &principal);
        response
    }

    /// The page with the key form, `problem` (what was wrong with the last key) above it.
    fn form_page(&self, principal: &str, problem: Option<&'static str>) -> http::Response<Body> {
        let forms = Forms {
            form_value: self.people.form_value(principal),
            connected: false,
            problem,
        };
        self.say(
            http::StatusCode::OK,
            "Connect your account",
            &format!(
                "Enter the API key of your {} account. It is kept encrypted on this server and \
                 used only for the calls you make through this connector.",
                self.people.connector()
            ),
            Some(forms),
        )
    }

    /// `POST /connect/<link>`: a key to check and keep, or a disconnect.
    async fn post<B>(&self, link: &str, request: http::Request<B>) -> http::Response<Body>
    where
        B: hyper::body::Body<Data = Bytes> + Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let Ok(principal) = self.people.person_of_link(link) else {
            return self.expired();
        };
        let browser = cookie(request.headers(), COOKIE)
            .and_then(|value| self.people.person_of_cookie(&value).ok());
        let form_type = request
            .headers()
            .get(http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("application/x-www-form-urlencoded"));
        let body = match Limited::new(request.into_body(), MAX_FORM).collect().await {
            Ok(body) if form_type => body.to_bytes(),
            _ => return self.refused("The form could not be read."),
        };
        let mut form_value = None;
        let mut action = None;
        let mut key = None;
        for (name, value) in form_urlencoded::parse(&body) {
            match &*name {
                "form" => form_value = Some(value.into_owned()),
                "action" => action = Some(value.into_owned()),
                "key" => key = Some(zeroize::Zeroizing::new(value.into_owned())),
                _ => {}
            }
        }
        let form_person = form_value.and_then(|v| self.people.person_of_form(&v).ok());
        // The link, the browser and the form name one person, or nothing is done.
        if browser.as_deref() != Some(principal.as_str())
            || form_person.as_deref() != Some(principal.as_str())
        {
            self.stage.redactor.line(
                "connect",
                json!({"outcome": "refused", "reason": "the form is not this person's"}),
            );
            return self.refused(
                "This form did not come from your own connect page, or it is too old. Open the \
                 link your assistant gave you again.",
            );
        }
        match action.as_deref() {
            Some("disconnect") => self.disconnect(&principal).await,
            Some("key") => match (&self.people.way, key) {
                (PerPerson::ApiKey { check_with }, Some(key)) => {
                    self.keep_key(&principal, check_with, key.trim()).await
                }
                _ => self.refused("The form could not be read."),
            },
            _ => self.refused("The form could not be read."),
        }
    }

    /// Checks `key` with the check read and keeps it when the provider answered it.
    async fn keep_key(&self, principal: &str, check_with: &str, key: &str) -> http::Response<Body> {
        let length = key.chars().count();
        if !(crate::redact::MIN_SECRET..=MAX_KEY).contains(&length) {
            return self.form_page(
                principal,
                Some("That does not look like a key (too short or too long). Nothing was kept."),
            );
        }
        let Some(candidate) = self.people.candidate(key) else {
            return self.refused("This connector takes no key.");
        };
        let checked = match self.stage.by_name.get(check_with) {
            Some(&index) => {
                let served = &self.stage.tools[index];
                let target = self.stage.target(served, Some(&candidate), None);
                match crate::request::build(&served.mapping, &Map::new(), &target) {
                    Ok(http) => match self.stage.client.send(&http).await {
                        Ok(response) => Some(response.status),
                        Err(_) => None,
                    },
                    Err(_) => None,
                }
            }
            None => None,
        };
        self.stage.redactor.line(
            "connect",
            json!({"outcome": "checked", "checkWith": check_with, "status": checked}),
        );
        match checked {
            Some(status) if (200..300).contains(&status) => {}
            Some(401 | 403) => {
                return self.form_page(
                    principal,
                    Some("The provider did not accept this key. Nothing was kept; check the key and try again."),
                );
            }
            _ => {
                return self.form_page(
                    principal,
                    Some("The key could not be checked with the provider right now. Nothing was kept; try again in a moment."),
                );
            }
        }
        let kept = Kept::ApiKey {
            value: key.to_string(),
        };
        match self.people.keep(principal, &kept).await {
            Ok(()) => {
                self.stage
                    .redactor
                    .line("connect", json!({"outcome": "connected"}));
                self.say(
                    http::StatusCode::OK,
                    "Connected",
                    "Your account is connected. You can close this page and go back to your \
                     assistant: the calls you agree to now go out with your own account.",
                    Some(Forms {
                        form_value: self.people.form_value(principal),
                        connected: true,
                        problem: None,
                    }),
                )
            }
            Err(e) => {
                self.stage.redactor.line(
                    "connect",
                    json!({"outcome": "not-kept", "problem": e.to_string()}),
                );
                self.say(
                    http::StatusCode::SERVICE_UNAVAILABLE,
                    "Not connected",
                    "The key could not be kept right now. Nothing was kept; try again in a moment.",
                    None,
                )
            }
        }
    }

    /// `GET /connect/callback?code&state`: the end of a sign-in at the provider.
    async fn callback<B>(&self, request: &http::Request<B>) -> http::Response<Body> {
        let callback =
            crate::provider_oauth::Callback::parse(request.uri().query().unwrap_or_default());
        let browser = cookie(request.headers(), COOKIE)
            .and_then(|value| self.people.person_of_cookie(&value).ok());
        let Some(state) = callback.state else {
            return self.refused("This sign-in is not one this server started.");
        };
        let finished = self
            .people
            .finish_oauth(&state, callback.code, browser.as_deref())
            .await;
        let (outcome, problem) = match &finished {
            Ok(Finished::Connected(_)) => ("connected", None),
            Ok(Finished::Unknown) => ("unknown-state", None),
            Ok(Finished::OtherPerson) => ("other-browser", None),
            Ok(Finished::Refused(why)) => ("refused", Some(why.clone())),
            Err(e) => ("failed", Some(e.to_string())),
        };
        self.stage.redactor.line(
            "connect",
            json!({"outcome": outcome, "via": "oauth", "problem": problem}),
        );
        match finished {
            Ok(Finished::Connected(principal)) => self.say(
                http::StatusCode::OK,
                "Connected",
                "Your account is connected. You can close this page and go back to your \
                 assistant: the calls you agree to now go out with your own account.",
                Some(Forms {
                    form_value: self.people.form_value(&principal),
                    connected: true,
                    problem: None,
                }),
            ),
            Ok(Finished::Unknown) => self.refused(
                "This sign-in is not one this server is waiting for: it was used already, or \
                 it is too old. Ask your assistant for a new link.",
            ),
            Ok(Finished::OtherPerson) => self.refused(
                "This sign-in was started in another browser, or for another person. Open \
                 the link your assistant gave you again, in this browser.",
            ),
            Ok(Finished::Refused(_)) => self.say(
                http::StatusCode::OK,
                "Not connected",
                "The provider did not connect your account (you may have declined). Nothing \
                 was kept. Ask your assistant for a new link to try again.",
                None,
            ),
            Err(_) => self.say(
                http::StatusCode::SERVICE_UNAVAILABLE,
                "Not connected",
                "Your account could not be connected right now. Nothing was kept; try again \
                 in a moment.",
                None,
            ),
        }
    }

    async fn disconnect(&self, principal: &str) -> http::Response<Body> {
        match self.people.disconnect(principal).await {
            Ok(was) => {
                self.stage
                    .redactor
                    .line("connect", json!({"outcome": "disconnected", "was": was}));
                self.say(
                    http::StatusCode::OK,
                    "Disconnected",
                    "Your account is disconnected: this connector keeps no key of yours now. \
                     A call that needs your account will give you a new link.",
                    None,
                )
            }
            Err(e) => {
                self.stage.redactor.line(
                    "connect",
                    json!({"outcome": "not-disconnected", "problem": e.to_string()}),
                );
                self.say(
                    http::StatusCode::SERVICE_UNAVAILABLE,
                    "Not disconnected",
                    "Your account could not be disconnected right now. Try again in a moment.",
                    None,
                )
            }
        }
    }

    fn expired(&self) -> http::Response<Body> {
        self.say(
            http::StatusCode::BAD_REQUEST,
            "This link has expired",
            "This link is not valid any more. Ask your assistant to make the call again: it \
             will give you a new link.",
            None,
        )
    }

    fn refused(&self, text: &str) -> http::Response<Body> {
        self.say(http::StatusCode::FORBIDDEN, "Not done", text, None)
    }

    fn set_cookie(&self, response: &mut http::Response<Body>, principal: &str) {
        let secure = if self.people.secure() { "; Secure" } else { "" };
        let value = format!(
            "{COOKIE}={}; Path={}; Max-Age={LINK_SECONDS}; HttpOnly; SameSite=Lax{secure}",
            self.people.cookie_for(principal),
            CONNECT_PATH.trim_end_matches('/'),
        );
        if let Ok(value) = http::HeaderValue::from_str(&value) {
            response
                .headers_mut()
                .insert(http::header::SET_COOKIE, value);
        }
    }

    /// A whole page: a title, a paragraph, and the forms for this person.
    fn say(
        &self,
        status: http::StatusCode,
        title: &str,
        text: &str,
        forms: Option<Forms>,
    ) -> http::Response<Body> {
        let service = self.people.connector();
        let mut html = format!(
            "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <title>{title} · {service}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<main>\n\
             <p class=\"service\">{service}</p>\n<h1>{title}</h1>\n<p>{text}</p>\n",
            title = escape(title),
            service = escape(service),
            text = escape(text),
        );
        if let Some(forms) = forms {
            if let Some(problem) = forms.problem {
                html.push_str(&format!(
                    "<p class=\"problem\" role=\"alert\">{}</p>\n",
                    escape(problem)
                ));
            }
            let value = escape(&forms.form_value);
            if matches!(self.people.way, PerPerson::ApiKey { .. }) {
                html.push_str(&format!(
                    "<form method=\"post\">\n<input type=\"hidden\" name=\"form\" value=\"{value}\">\n\
                     <input type=\"hidden\" name=\"action\" value=\"key\">\n\
                     <label for=\"key\">{label}</label>\n\
                     <input id=\"key\" name=\"key\" type=\"password\" autocomplete=\"off\" \
                     spellcheck=\"false\" required minlength=\"{min}\" maxlength=\"{MAX_KEY}\">\n\
                     <button type=\"submit\">{button}</button>\n</form>\n",
                    label = if forms.connected {
                        "Replace the key"
                    } else {
                        "Your API key"
                    },
                    button = if forms.connected {
                        "Check and replace"
                    } else {
                        "Check and connect"
                    },
                    min = crate::redact::MIN_SECRET,
                ));
            }
            if forms.connected {
                html.push_str(&format!(
                "<form method=\"post\" class=\"quiet\">\n<input type=\"hidden\" name=\"form\" value=\"{value}\">\n\
                 <input type=\"hidden\" name=\"action\" value=\"disconnect\">\n\
                 <button type=\"submit\">Disconnect my account</button>\n</form>\n"
                ));
            }
        }
        html.push_str("</main>\n</body>\n</html>\n");
        page(status, html)
    }
}

/// The page's only style: inline, so the CSP can forbid every other source. The body's
/// padding keeps the card off the edges of a phone's screen; a problem stands out from
/// the text (colour and a border, not colour alone); disconnecting sits apart, below a
/// rule, so that it is not taken for the form's own button.
const STYLE: &str = "body{font:16px/1.5 system-ui,sans-serif;margin:0;padding:1rem;\
background:#f6f7f9;color:#1c1e21}main{max-width:32rem;margin:3rem auto;padding:2rem;\
background:#fff;border-radius:8px;box-shadow:0 1px 3px rgba(0,0,0,.12)}\
.service{color:#5f6368;margin:0}h1{font-size:1.5rem;margin:.25rem 0 1rem}\
.problem{background:#fce8e6;color:#8c1d18;border-left:4px solid #d93025;border-radius:4px;\
padding:.5rem .75rem}label{display:block;font-weight:600;margin:1rem 0 .25rem}\
input[type=password]{width:100%;box-sizing:border-box;padding:.5rem;font:inherit;\
border:1px solid #9aa0a6;border-radius:4px}button{margin-top:1rem;padding:.5rem 1rem;font:inherit;\
border:0;border-radius:4px;background:#1a73e8;color:#fff;cursor:pointer}\
input:focus,button:focus-visible{outline:2px solid #1a73e8;outline-offset:2px}\
.quiet{margin-top:1.5rem;border-top:1px solid #e3e5e8}\
.quiet button{background:none;color:#1a73e8;padding:0;text-decoration:underline}";

/// The answer carrying `html`, with the headers that keep it to itself.
fn page(status: http::StatusCode, html: String) -> http::Response<Body> {
    let mut response = http::Response::new(Full::new(Bytes::from(html)).boxed());
    *response.status_mut() = status;
    let headers = response.headers_mut();
    for (name, value) in [
        ("content-type", "text/html; charset=utf-8"),
        ("cache-control", "no-store"),
        ("referrer-policy", "no-referrer"),
        ("x-content-type-options", "nosniff"),
        ("x-frame-options", "DENY"),
        (
            "content-security-policy",
            "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; \
             frame-ancestors 'none'; base-uri 'none'",
        ),
    ] {
        headers.insert(name, http::HeaderValue::from_static(value));
    }
    response
}

/// A `303 See Other` to `url` (the provider's sign-in), uncached, with no referrer.
fn redirect(url: &str) -> http::Response<Body> {
    let mut response = page(http::StatusCode::SEE_OTHER, String::new());
    if let Ok(location) = http::HeaderValue::from_str(url) {
        response
            .headers_mut()
            .insert(http::header::LOCATION, location);
    }
    response
}

/// The value of cookie `name` in the request's `Cookie` headers.
fn cookie(headers: &http::HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(http::header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(n, _)| *n == name)
        .map(|(_, v)| v.to_string())
}

/// `text` safe inside HTML text and a double-quoted attribute.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{cookie, escape};

    #[test]
    fn text_the_user_wrote_cannot_open_a_tag_or_leave_an_attribute() {
        assert_eq!(
            escape("<script>\"x\" & 'y'</script>"),
            "&lt;script&gt;&quot;x&quot; &amp; &#39;y&#39;&lt;/script&gt;"
        );
    }

    #[test]
    fn the_cookie_is_read_by_its_exact_name() {
        let mut headers = http::HeaderMap::new();
        headers.insert(
            http::header::COOKIE,
            http::HeaderValue::from_static("a=1; connectorgen_personx=2; connectorgen_person=3"),
        );
        assert_eq!(
            cookie(&headers, "connectorgen_person").as_deref(),
            Some("3")
        );
        assert_eq!(cookie(&headers, "b"), None);
    }
}
