//! An inline manifest describes requests the real API accepts: `examples/manifests/
//! payments.yaml` writes Stripe's refunds and payment intents by hand, and every request
//! its openapi.json describes must be one Stripe's own OpenAPI document describes too —
//! same method and path, same server, same credential scheme, each parameter in the same
//! place with the same serialisation (`style`, `explode`), the body in the same media
//! type with fields Stripe knows, nested fields encoded the same way. A client generated
//! from either document then sends the same bytes. Stripe's document is read from
//! `../shared/provider-docs/project/` (`support/real.rs`).
//!
//! The manifest may expose fewer optional parameters and fields than Stripe has; it may
//! not add any, or leave out a required one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use connectorgen_core::{Options, analyze_with};
use serde_json::Value;

use crate::support::real;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The value a `$ref` points at inside `doc`, or the value itself.
fn resolve<'a>(doc: &'a Value, v: &'a Value) -> &'a Value {
    match v.get("$ref").and_then(Value::as_str) {
        Some(r) => doc.pointer(r.trim_start_matches('#')).unwrap_or(v),
        None => v,
    }
}

/// A parameter's serialisation with OpenAPI's defaults applied: (style, explode, required).
fn serialisation(p: &Value) -> (String, bool, bool) {
    let location = p["in"].as_str().unwrap();
    let style = p["style"].as_str().map_or_else(
        || match location {
            "query" | "cookie" => "form".to_string(),
            _ => "simple".to_string(),
        },
        str::to_string,
    );
    let explode = p["explode"].as_bool().unwrap_or(style == "form");
    let required = p["required"].as_bool().unwrap_or(false);
    (style, explode, required)
}

fn parameters(doc: &Value, path: &str, method: &str) -> BTreeMap<(String, String), Value> {
    let item = &doc["paths"][path];
    let mut out = BTreeMap::new();
    for list in [&item["parameters"], &item[method]["parameters"]] {
        for p in list.as_array().into_iter().flatten() {
            let p = resolve(doc, p);
            let key = (
                p["in"].as_str().unwrap().to_string(),
                p["name"].as_str().unwrap().to_string(),
            );
            out.insert(key, p.clone());
        }
    }
    out
}

#[test]
fn payments_requests_are_stripes_requests() {
    let path = root().join("examples/manifests/payments.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    let options = Options {
        manifest_dir: path.parent().map(Path::to_path_buf),
        ..Options::default()
    };
    let analysis = analyze_with("payments.yaml", Arc::new(text), &options).unwrap();
    assert!(!analysis.has_errors(), "{:?}", analysis.diagnostics);
    let ours: Value = serde_json::from_str(&analysis.outputs.unwrap()["openapi.json"]).unwrap();
    let stripe_text = std::fs::read_to_string(real::file(
        "examples/specs/stripe/stripe-payments.trimmed.json",
    ))
    .unwrap();
    let theirs: Value = serde_json::from_str(&stripe_text).unwrap();

    // Same host, once the trailing slash Stripe writes is set aside.
    assert_eq!(
        ours["servers"][0]["url"].as_str().unwrap(),
        theirs["servers"][0]["url"]
            .as_str()
            .unwrap()
            .trim_end_matches('/')
    );
    // Our credential scheme is one of Stripe's alternatives.
    let scheme = |doc: &Value, name: &str| {
        let s = &doc["components"]["securitySchemes"][name];
        (
            s["type"].clone(),
            s["scheme"].clone(),
            s["in"].clone(),
            s["name"].clone(),
        )
    };
    let ours_scheme = ours["security"][0]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    let accepted: Vec<_> = theirs["security"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r.as_object().unwrap().keys().cloned())
        .map(|name| scheme(&theirs, &name))
        .collect();
    assert!(
        accepted.contains(&scheme(&ours, &ours_scheme)),
        "credential scheme"
    );

    let mut operations = 0;
    for (path, item) in ours["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            let at = format!("{} {path}", method.to_uppercase());
            assert!(
                theirs["paths"][path.as_str()][method.as_str()].is_object(),
                "{at}: Stripe has no such operation"
            );
            operations += 1;

            // Parameters: each of ours is Stripe's, serialised the same way; none of
            // Stripe's required ones is missing. The Idempotency-Key header is Stripe's
            // documented retry mechanism, which its document does not list.
            let mine = parameters(&ours, path, method);
            let stripes = parameters(&theirs, path, method);
            for ((location, name), p) in &mine {
                if location == "header" && name == "Idempotency-Key" {
                    continue;
                }
                let theirs_p = stripes
                    .get(&(location.clone(), name.clone()))
                    .unwrap_or_else(|| panic!("{at}: Stripe has no {location} parameter `{name}`"));
                let (style, explode, required) = serialisation(p);
                let (t_style, t_explode, t_required) = serialisation(theirs_p);
                assert_eq!(
                    (&style, explode),
                    (&t_style, t_explode),
                    "{at}: `{name}` serialisation"
                );
                assert!(
                    !t_required || required,
                    "{at}: `{name}` is required by Stripe"
                );
            }
            for ((location, name), p) in &stripes {
                if serialisation(p).2 {
                    assert!(
                        mine.contains_key(&(location.clone(), name.clone())),
                        "{at}: Stripe's required `{name}` is missing"
                    );
                }
            }

            // The body: Stripe's media type, Stripe's fields, Stripe's encodings.
            let Some(body) = op.get("requestBody") else {
                continue;
            };
            let content = body["content"].as_object().unwrap();
            let their_content =
                &theirs["paths"][path.as_str()][method.as_str()]["requestBody"]["content"];
            for (media, ours_media) in content {
                let their_media = &their_content[media.as_str()];
                assert!(
                    their_media.is_object(),
                    "{at}: Stripe takes no {media} body"
                );
                let fields = resolve(&ours, &ours_media["schema"])["properties"]
                    .as_object()
                    .cloned()
                    .unwrap_or_default();
                let their_fields = resolve(&theirs, &their_media["schema"])["properties"]
                    .as_object()
                    .cloned()
                    .unwrap_or_default();
                for field in fields.keys() {
                    assert!(
                        their_fields.contains_key(field),
                        "{at}: Stripe has no field `{field}`"
                    );
                    let encoding = |m: &Value| {
                        let e = &m["encoding"][field.as_str()];
                        (
                            e["style"].as_str().unwrap_or("form").to_string(),
                            e["explode"].as_bool().unwrap_or(true),
                        )
                    };
                    assert_eq!(
                        encoding(ours_media),
                        encoding(their_media),
                        "{at}: field `{field}` is encoded differently"
                    );
                }
            }
        }
    }
    assert_eq!(
        operations, 5,
        "every operation of payments.yaml was compared"
    );
}
