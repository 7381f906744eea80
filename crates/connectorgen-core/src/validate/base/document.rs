//! The document around the exposed base operations: the base's own top level with
//! `info` overridden by `service:`, only the exposed paths, and only the components they
//! reach (transitively) plus the security schemes they use; and the credential prose
//! describes, read from those schemes.
//!
//! Takes: the parsed `Base`, the checked `Service` (when valid) and the model operations.
//! Returns (through `Validator`): the `Document`, and a finding for each reference met on
//! the way that does not resolve, or leaves the file or `#/components`.
//! Must never: keep a component nothing exposed reaches, or let a reference that does not
//! resolve (or leaves the file) through.

use std::collections::{BTreeSet, HashSet};

use serde_json::{Map, Value, json};

use crate::base::{Base, path_item_shared};
use crate::diagnostics::Diagnostic;
use crate::model::{AuthScheme, Document, Operation, Service, escape, unescape};
use crate::validate::base::invalid::base_repaired;
use crate::validate::context::Validator;

/// The document around the exposed operations: the base's top level in its order,
/// with `info` from `service`, the servers (`publicUrl` first when given), only the
/// exposed paths (shared path-item keys kept), only the tags they use, and only the
/// components they reach and the kept top-level parts refer to. `webhooks` (and
/// `x-webhooks`, 3.0's way of writing them) are dropped: the agent receives none.
///
/// Long (about 160 lines) because it is one pass over the base's top-level keys in their
/// order, one arm per key it rewrites, keeping the output's key order the base's; the
/// reach of components is its own function (`reachable_components`).
pub(in crate::validate) fn base_document(
    v: &mut Validator,
    base: &Base,
    service: Option<&Service>,
    public_url_given: bool,
    operations: &[Operation],
) -> Document {
    // Without a valid `service` nothing is rendered: only the reference checks matter.
    let public_url = service
        .filter(|_| public_url_given)
        .map(|s| s.public_url.as_str());
    let mut paths = Map::new();
    for op in operations {
        if paths.contains_key(&op.path) {
            continue;
        }
        let shared: Map<String, Value> = base
            .path_item(&op.path)
            .map(path_item_shared)
            .unwrap_or_default();
        paths.insert(op.path.clone(), Value::Object(shared));
    }
    let used_tags: HashSet<&str> = operations
        .iter()
        .filter_map(|op| op.http.get("tags").and_then(Value::as_array))
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    // Everything else the output keeps at the top level (`info`, the used tags,
    // `x-` extensions such as `x-tagGroups`) may refer to components too: their
    // targets are kept with them, so that every reference of the output resolves.
    let kept_around: Vec<(String, &Value)> = base
        .root
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(key, _)| !DROPPED_ROOT_KEYS.contains(&key.as_str()))
        .flat_map(|(key, value)| {
            let at = format!("/{}", escape(key));
            match (key.as_str(), value) {
                ("tags", Value::Array(tags)) => tags
                    .iter()
                    .enumerate()
                    .filter(|(_, t)| {
                        t.get("name")
                            .and_then(Value::as_str)
                            .is_some_and(|n| used_tags.contains(n))
                    })
                    .map(|(i, t)| (format!("{at}/{i}"), t))
                    .collect::<Vec<_>>(),
                _ => vec![(at, value)],
            }
        })
        .collect();
    let components = reachable_components(v, base, operations, &paths, &kept_around);

    let mut root = Map::new();
    let mut servers_written = false;
    // Only what is kept is copied: a provider's document can be megabytes of paths
    // and components, of which the connector exposes a few.
    let source = base.root.as_object().into_iter().flatten();
    for (key, value) in source {
        let (key, value) = (key.clone(), value);
        match key.as_str() {
            "info" => {
                let mut value = match service {
                    Some(service) => info(value.clone(), service),
                    None => value.clone(),
                };
                // OpenAPI has no `info.externalDocs` (Square's document writes one),
                // so the output would not validate: the link moves to the document's
                // own `externalDocs`, unless it has one.
                let docs = value
                    .as_object_mut()
                    .and_then(|i| i.shift_remove("externalDocs"));
                root.insert(key, value);
                if let Some(docs) = docs {
                    let taken = base
                        .root
                        .as_object()
                        .is_some_and(|r| r.contains_key("externalDocs"));
                    let repair = if taken {
                        "dropped (the document has its own `externalDocs`)"
                    } else {
                        root.insert("externalDocs".into(), docs);
                        "moved to the document's own `externalDocs`"
                    };
                    base_repaired(
                        v,
                        base,
                        "/info/externalDocs",
                        format!(
                            "`info.externalDocs` is no field of OpenAPI's Info Object; repaired in the outputs: {repair}"
                        ),
                    );
                }
                if let Some(url) = public_url
                    && !base
                        .root
                        .as_object()
                        .is_some_and(|r| r.contains_key("servers"))
                {
                    root.insert("servers".into(), json!([{ "url": url }]));
                    servers_written = true;
                }
            }
            "servers" if public_url.is_some() => {
                let url = public_url.unwrap_or_default();
                let mut list = vec![json!({ "url": url })];
                list.extend(
                    value
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter(|s| {
                            s.get("url")
                                .and_then(Value::as_str)
                                .map(|u| u.trim_end_matches('/'))
                                != Some(url)
                        })
                        .cloned(),
                );
                root.insert(key, Value::Array(list));
                servers_written = true;
            }
            "paths" => {
                root.insert(key, Value::Object(std::mem::take(&mut paths)));
            }
            "components" => {
                if !components.is_empty() {
                    root.insert(key, Value::Object(components.clone()));
                }
            }
            k if DROPPED_ROOT_KEYS.contains(&k) => {}
            "tags" => {
                let kept: Vec<Value> = value
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|t| {
                        t.get("name")
                            .and_then(Value::as_str)
                            .is_some_and(|n| used_tags.contains(n))
                    })
                    .cloned()
                    .collect();
                if !kept.is_empty() {
                    root.insert(key, Value::Array(kept));
                }
            }
            _ => {
                root.insert(key, value.clone());
            }
        }
    }
    trim_server_slashes(&mut root);
    if let Some(url) = public_url
        && !servers_written
    {
        root.insert("servers".into(), json!([{ "url": url }]));
    }
    Document { root }
}

/// The components the exposed operations reach, transitively, in the base's order,
/// plus the security schemes their security requirements name. Every reference met
/// on the way must point at a component of the same file.
fn reachable_components(
    v: &mut Validator,
    base: &Base,
    operations: &[Operation],
    paths: &Map<String, Value>,
    around: &[(String, &Value)],
) -> Map<String, Value> {
    let mut refs: Vec<(String, String)> = Vec::new();
    for (pointer, value) in around {
        collect_refs(value, &mut pointer.clone(), &mut refs);
    }
    for op in operations {
        let mut pointer = op.pointer();
        collect_map_refs(&op.http, &mut pointer, &mut refs);
    }
    for (path, item) in paths {
        let mut pointer = format!("/paths/{}", escape(path));
        collect_refs(item, &mut pointer, &mut refs);
    }
    let mut kept: BTreeSet<(String, String)> = BTreeSet::new();
    let mut reported: HashSet<String> = HashSet::new();
    while let Some((reference, at)) = refs.pop() {
        let Some(fragment) = reference.strip_prefix('#') else {
            // Files the document refers to are bundled in (`base/bundle.rs`): a
            // reference still naming a file is one that could not be followed.
            if reported.insert(reference.clone()) {
                let span = base.span(&at);
                v.findings.push_base(match base.ref_problem(&at) {
                    Some(problem) => problem.diagnostic(&reference, span),
                    // Where OpenAPI reads no reference (an example's value).
                    None => Diagnostic::BaseRefUnreadable {
                        reference,
                        message: "it is where OpenAPI reads no reference, so it was not followed"
                            .to_string(),
                        span,
                    },
                });
            }
            continue;
        };
        let segments: Vec<String> = fragment.split('/').skip(1).map(unescape).collect();
        let target = match segments.as_slice() {
            [first, section, name, ..] if first == "components" => {
                Some((section.clone(), name.clone()))
            }
            _ => None,
        };
        let pointer: String = segments.iter().map(|s| format!("/{}", escape(s))).collect();
        let resolves = !fragment.is_empty() && base.get(&pointer).is_some();
        let Some(target) = target.filter(|_| resolves) else {
            if reported.insert(reference.clone()) {
                v.findings.push_base(Diagnostic::BaseRefUnresolved {
                    span: base.span(&at),
                    reason: if resolves {
                        "points outside `#/components`, which connectorgen does not copy"
                    } else {
                        "does not resolve in the base document"
                    },
                    reference,
                });
            }
            continue;
        };
        if kept.insert(target.clone()) {
            let mut pointer = format!("/components/{}/{}", escape(&target.0), escape(&target.1));
            if let Some(value) = base.get(&pointer) {
                collect_refs(value, &mut pointer, &mut refs);
            }
        }
    }
    let mut schemes: Vec<&str> = Vec::new();
    let global = base.root.get("security");
    for op in operations {
        let requirements = op.http.get("security").or(global);
        for requirement in requirements.and_then(Value::as_array).into_iter().flatten() {
            for name in requirement
                .as_object()
                .into_iter()
                .flatten()
                .map(|(k, _)| k)
            {
                if !schemes.contains(&name.as_str()) {
                    schemes.push(name);
                }
            }
        }
    }
    for name in schemes {
        kept.insert(("securitySchemes".to_string(), name.to_string()));
    }

    let mut out = Map::new();
    let sections = base.root.get("components").and_then(Value::as_object);
    for (section, entries) in sections.into_iter().flatten() {
        let Some(entries) = entries.as_object() else {
            continue;
        };
        let section_kept: Map<String, Value> = entries
            .iter()
            .filter(|(name, _)| kept.contains(&(section.clone(), (*name).clone())))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if !section_kept.is_empty() {
            out.insert(section.clone(), Value::Object(section_kept));
        }
    }
    out
}

/// Top-level keys of the base document the output does not copy as they are: `paths`
/// and `components` are rebuilt from what is exposed; webhooks are calls the provider
/// makes, which an agent never receives (`x-webhooks` is how 3.0 documents write them).
const DROPPED_ROOT_KEYS: [&str; 4] = ["paths", "components", "webhooks", "x-webhooks"];

/// Every `$ref` (and discriminator mapping target) in `value`, with the pointer of the
/// node that holds it. `pointer` is `value`'s own pointer, restored on return.
fn collect_refs(value: &Value, pointer: &mut String, out: &mut Vec<(String, String)>) {
    match value {
        Value::Object(map) => collect_map_refs(map, pointer, out),
        Value::Array(list) => {
            for (i, child) in list.iter().enumerate() {
                let len = pointer.len();
                pointer.push_str(&format!("/{i}"));
                collect_refs(child, pointer, out);
                pointer.truncate(len);
            }
        }
        _ => {}
    }
}

/// `collect_refs` over the entries of a mapping (`pointer` is the mapping's own).
fn collect_map_refs(
    map: &Map<String, Value>,
    pointer: &mut String,
    out: &mut Vec<(String, String)>,
) {
    for (key, child) in map {
        let len = pointer.len();
        pointer.push('/');
        pointer.push_str(&escape(key));
        match (key.as_str(), child) {
            ("$ref", Value::String(reference)) => {
                out.push((reference.clone(), pointer.clone()));
            }
            ("mapping", Value::Object(mapping)) if map.contains_key("propertyName") => {
                for (k, target) in mapping {
                    let Value::String(target) = target else {
                        continue;
                    };
                    // A mapping value is a reference, or a bare schema name.
                    let reference = if target.contains(['#', '/', '.']) {
                        target.clone()
                    } else {
                        format!("#/components/schemas/{}", escape(target))
                    };
                    out.push((reference, format!("{pointer}/{}", escape(k))));
                }
            }
            _ => collect_refs(child, pointer, out),
        }
        pointer.truncate(len);
    }
}

/// Server URLs without a trailing slash: paths start with `/`, and a client that appends
/// one to `https://api.stripe.com/` calls `https://api.stripe.com//v1/…`.
fn trim_server_slashes(root: &mut Map<String, Value>) {
    let mut lists: Vec<&mut Value> = Vec::new();
    let (servers, paths) = {
        let mut servers = None;
        let mut paths = None;
        for (key, value) in root.iter_mut() {
            match key.as_str() {
                "servers" => servers = Some(value),
                "paths" => paths = Some(value),
                _ => {}
            }
        }
        (servers, paths)
    };
    lists.extend(servers);
    for item in paths.and_then(Value::as_object_mut).into_iter().flatten() {
        if let Some(servers) = item.1.get_mut("servers") {
            lists.push(servers);
        }
    }
    for list in lists {
        for server in list.as_array_mut().into_iter().flatten() {
            if let Some(Value::String(url)) = server.get_mut("url")
                && url.len() > 1
                && url.ends_with('/')
                && !url.ends_with("//")
            {
                url.pop();
            }
        }
    }
}

/// The base `info` with `service:`'s title, version and description over it.
fn info(value: Value, service: &Service) -> Value {
    let Value::Object(mut info) = value else {
        return value;
    };
    let mut set = |key: &str, text: &str| {
        let same = info
            .get(key)
            .and_then(Value::as_str)
            .is_some_and(|t| t.trim() == text);
        if !same {
            info.insert(key.to_string(), Value::String(text.to_string()));
        }
    };
    set("title", &service.title);
    set("version", &service.version);
    set("description", &service.description);
    Value::Object(info)
}

/// The credential prose describes: among the security schemes the exposed operations
/// use, the one an agent platform handles most simply.
pub(in crate::validate) fn auth_scheme(document: &Document) -> AuthScheme {
    let schemes = document
        .root
        .get("components")
        .and_then(|c| c.get("securitySchemes"))
        .and_then(Value::as_object);
    let mut found: Vec<AuthScheme> = schemes
        .into_iter()
        .flatten()
        .filter_map(|(_, scheme)| {
            let kind = scheme.get("type").and_then(Value::as_str)?;
            Some(match kind {
                "http" => match scheme
                    .get("scheme")
                    .and_then(Value::as_str)
                    .map(str::to_ascii_lowercase)
                    .as_deref()
                {
                    Some("bearer") => AuthScheme::Bearer,
                    Some("basic") => AuthScheme::Basic,
                    _ => return None,
                },
                "apiKey" => AuthScheme::ApiKey {
                    location: scheme
                        .get("in")
                        .and_then(Value::as_str)
                        .unwrap_or("header")
                        .to_string(),
                    name: scheme
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                },
                "oauth2" => AuthScheme::OAuth2,
                "openIdConnect" => AuthScheme::OpenIdConnect,
                _ => return None,
            })
        })
        .collect();
    let rank = |s: &AuthScheme| match s {
        AuthScheme::Bearer => 0,
        AuthScheme::ApiKey { location, .. } if location == "header" => 1,
        AuthScheme::ApiKey { .. } => 2,
        AuthScheme::Basic => 3,
        AuthScheme::OAuth2 => 4,
        AuthScheme::OpenIdConnect => 5,
        AuthScheme::Parts => 6,
        AuthScheme::None => 7,
    };
    found.sort_by_key(rank);
    found.into_iter().next().unwrap_or(AuthScheme::None)
}

/// Whether every OAuth 2 security scheme of the document offers only the
/// client-credentials flow: the connector, not a person, obtains the tokens, so there is
/// no sign-in to describe.
pub(in crate::validate) fn client_credentials_only(document: &Document) -> bool {
    let schemes = document
        .root
        .get("components")
        .and_then(|c| c.get("securitySchemes"))
        .and_then(Value::as_object);
    let flows: Vec<&Map<String, Value>> = schemes
        .into_iter()
        .flatten()
        .filter(|(_, s)| s.get("type").and_then(Value::as_str) == Some("oauth2"))
        .filter_map(|(_, s)| s.get("flows").and_then(Value::as_object))
        .collect();
    !flows.is_empty()
        && flows
            .iter()
            .all(|f| !f.is_empty() && f.keys().all(|k| k == "clientCredentials"))
}
