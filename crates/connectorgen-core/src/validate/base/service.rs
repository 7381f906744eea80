//! `service:` in base mode: every field but `dashboardUrl` defaults to the base
//! document's `info` and first server.
//!
//! Takes: the raw `service:` and the parsed `Base`. Returns (through `Validator`): the
//! `Service`, and whether `publicUrl` was given (then the outputs call it instead of
//! the document's servers). `first_server` and `server_url` are what `import` reads too.
//! Must never: invent a value the base document does not hold and the author did not write.

use serde_json::Value;
use serde_saphyr::Spanned;

use crate::base::Base;
use crate::manifest::{RawService, span};
use crate::model::Service;
use crate::validate::Validator;
use crate::validate::syntax::check_url;

impl Validator {
    /// `service:` in base mode: every field but `dashboardUrl` defaults to the base
    /// document's `info` and first server. Also says whether `publicUrl` was given.
    pub(in crate::validate) fn base_service(
        &mut self,
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
            if let Some(v) = value {
                self.non_empty(v, key, help)
            } else {
                if default.is_none() {
                    self.missing(key, "`service`", at, help);
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
            Some(url) => self.check_url(url, "publicUrl"),
            None => match first_server(base) {
                Ok(url) => Some(url),
                Err(reason) => {
                    self.missing(
                        "publicUrl",
                        "`service`",
                        at,
                        &format!("{reason}; add `publicUrl: https://…`, the API's base URL"),
                    );
                    None
                }
            },
        };
        let dashboard_url = self.url(raw.dashboard_url.as_ref(), "dashboardUrl", at);
        let spec_url = self.spec_url(raw);
        let public_url = public_url?;
        Some((
            Service {
                name: name?,
                title: title?,
                version: version?,
                description: description?,
                spec_url: spec_url?
                    .unwrap_or_else(|| crate::validate::default_spec_url(&public_url)),
                public_url,
                dashboard_url: dashboard_url?,
            },
            raw.public_url.is_some(),
        ))
    }
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

/// A Server Object's URL with its variables at their defaults (not yet checked).
pub fn server_url(server: &Value) -> String {
    let mut url = server
        .get("url")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    for (name, variable) in server
        .get("variables")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        if let Some(default) = variable.get("default").and_then(Value::as_str) {
            url = url.replace(&format!("{{{name}}}"), default);
        }
    }
    url
}
