//! Inline mode: `service:`, every field of which the manifest must give.
//!
//! Takes: the raw `service:` (or its absence) and where the manifest is. Returns: the
//! model's `Service`, or `None` with every problem reported.
//! Must never: fill a field from elsewhere (base mode's `base/service.rs` does, from the
//! document's `info`).

use serde_saphyr::Spanned;

use crate::diagnostics::Span;
use crate::manifest::{RawService, span};
use crate::model::Service;
use crate::validate::context::{Validator, link, missing, non_empty, text, url};

/// `service:`, or the finding that it is missing.
pub(in crate::validate) fn service(
    v: &mut Validator,
    s: Option<&Spanned<RawService>>,
    root: Span,
) -> Option<Service> {
    let Some(s) = s else {
        missing(
            v,
            "service",
            "the manifest",
            root,
            "add a `service:` mapping with name, version, description, publicUrl and dashboardUrl",
        );
        return None;
    };
    given(v, s)
}

fn given(v: &mut Validator, s: &Spanned<RawService>) -> Option<Service> {
    let at = span(s);
    let raw = &s.value;
    let ctx = "`service`";
    let name = text(
        v,
        raw.name.as_ref(),
        "name",
        ctx,
        at,
        "give the service's name as people know it, e.g. `name: VidGen`",
    );
    let title = raw.title.as_ref().map(|t| {
        non_empty(
            v,
            t,
            "title",
            "give a title, or remove `title` to use \"<name> Connector\"",
        )
    });
    let version = text(
        v,
        raw.version.as_ref(),
        "version",
        ctx,
        at,
        "give the connector's version, e.g. `version: 1.0.0`",
    );
    let description = text(
        v,
        raw.description.as_ref(),
        "description",
        ctx,
        at,
        "write one paragraph: who this connector is for and what it does",
    );
    let public_url = url(v, raw.public_url.as_ref(), "publicUrl", at);
    let dashboard_url = url(v, raw.dashboard_url.as_ref(), "dashboardUrl", at);
    let spec_url = link(v, raw.spec_url.as_ref(), "specUrl");
    let docs_url = link(v, raw.docs_url.as_ref(), "docsUrl");
    let name = name?;
    let title = match title {
        Some(t) => t?,
        None => format!("{name} Connector"),
    };
    let description = description?;
    Some(Service {
        title,
        name,
        version: version?,
        summary: description.clone(),
        description,
        spec_url: spec_url?,
        docs_url: docs_url?,
        public_url: public_url?,
        dashboard_url: dashboard_url?,
    })
}
