//! The HTTP each exposed operation sends, compared between its two versions: in base
//! mode this is where a change to the provider's document shows (the list oasdiff calls
//! breaking, limited to the operations the manifest exposes).
//!
//! Takes: a pair of operations with their request mappings, and the arguments the
//! surface rules already reported. Returns (pushes): `http-route-changed` (method or
//! path), `http-input-changed` (a parameter or body field removed, moved, or newly
//! required — one the body schema requires without declaring it too; the body newly
//! required).
//! Must never: report an input again that an argument rule already named.

use std::collections::{BTreeMap, BTreeSet};

use super::{Found, Pair, Which};
use crate::diagnostics::Diagnostic;
use crate::render::mcp::mapping::{Argument, Location};

/// "the query parameter `limit`", "the body field `prompt`", "the body".
fn input(location: Location, name: Option<&str>) -> String {
    match (location, name) {
        (Location::Body, Some(n)) => format!("the body field `{n}`"),
        (Location::Body, None) => "the body".to_string(),
        (l, Some(n)) => format!("the {} parameter `{n}`", l.as_str()),
        (l, None) => format!("a {} parameter", l.as_str()),
    }
}

pub(super) fn compare(pair: &Pair, reported: &BTreeSet<String>, found: &mut Vec<Found>) {
    let (Some(old), Some(new)) = (&pair.old_tool.request, &pair.new_tool.request) else {
        return;
    };
    let id = &pair.new.id;
    let mut push = |diagnostic| {
        found.push(Found {
            which: Which::New,
            diagnostic,
        });
    };
    let (old_route, new_route) = (
        format!("{} {}", old.method, old.path),
        format!("{} {}", new.method, new.path),
    );
    if old_route != new_route {
        push(Diagnostic::HttpRouteChanged {
            id: id.clone(),
            old: old_route,
            new: new_route,
            span: pair.new.origin.path,
        });
    }
    // HTTP inputs by where they go and their name; the retry key's is the safety
    // rules' to report.
    let by_http = |args: &BTreeMap<&str, &Argument>| -> BTreeMap<(Option<String>, &'static str), (Location, bool, String)> {
        args.values()
            .map(|a| {
                (
                    (a.name.clone(), a.location.as_str()),
                    (a.location, a.required, a.argument.clone()),
                )
            })
            .collect()
    };
    let old_args = super::surface::arguments(Some(old));
    let new_args = super::surface::arguments(Some(new));
    let (old_http, new_http) = (by_http(&old_args), by_http(&new_args));
    let mut changes = Vec::new();
    for ((name, _), (location, required, argument)) in &old_http {
        if reported.contains(argument) {
            continue;
        }
        let moved = new_http
            .iter()
            .find(|((n, _), _)| n == name && name.is_some())
            .map(|(_, (l, ..))| *l);
        match new_http.get(&(name.clone(), location.as_str())) {
            Some((_, now_required, _)) if *now_required && !required => changes.push(format!(
                "{} became required",
                input(*location, name.as_deref())
            )),
            Some(_) => {}
            None => match moved {
                Some(to) => changes.push(format!(
                    "{} moved to {}",
                    input(*location, name.as_deref()),
                    input(to, name.as_deref())
                )),
                None => changes.push(format!("{} was removed", input(*location, name.as_deref()))),
            },
        }
    }
    for ((name, l), (location, required, argument)) in &new_http {
        let before = old_http.contains_key(&(name.clone(), *l))
            || old_http.keys().any(|(n, _)| n == name && name.is_some());
        if !before && *required && !reported.contains(argument) {
            changes.push(format!(
                "new required {}",
                input(*location, name.as_deref())
            ));
        }
    }
    let body_required = |m: &crate::render::mcp::mapping::RequestMapping| {
        m.body.as_ref().is_some_and(|b| b.required)
    };
    if body_required(new) && !body_required(old) {
        changes.push("the request body became required".to_string());
    }
    // A body field newly required that no argument carries: no property declares it, so
    // no tool offers it, yet every target's request schema now requires it.
    for name in pair
        .new_tool
        .body_required
        .difference(&pair.old_tool.body_required)
    {
        // The retry key's field included: its rules are the safety pass's.
        let carried = new
            .arguments
            .iter()
            .any(|a| a.location == Location::Body && a.name.as_deref() == Some(name.as_str()));
        if !carried && !reported.contains(name) {
            changes.push(format!(
                "the body field `{name}` became required, and no property declares it"
            ));
        }
    }
    for change in changes {
        push(Diagnostic::HttpInputChanged {
            id: id.clone(),
            change,
            span: pair.new.origin.entry,
        });
    }
}
