//! Which listed GET reads back what a call makes: the target of an `async` suggestion.
//!
//! Takes: the manifest's rows (the listed GETs, with their agent ids, and those `build`
//! refuses) and, per call, its path and the schema its success response names.
//! Returns: the GET of the resource the call creates or changes, or why none is named.
//! Must never: name a GET `build` refuses (it is not in the manifest), or the parent of
//! what a call creates when the two are known to be different things (a refund made
//! from a capture is polled on the refund, never the capture).
//!
//! Paths are compared without the extension of their last segment, so
//! `/Calls.json` finds `/Calls/{Sid}.json`. In order: the item the call is made on
//! (`PATCH …/{id}`); an item of the collection it posts to (`POST /refunds` →
//! `GET /refunds/{id}`); an item of a collection named after what it posts
//! (`POST /captures/{id}/refund` → `GET /refunds/{refund_id}`, when the responses do not
//! say otherwise); the item an action acts on (`POST /jobs/{id}/cancel` →
//! `GET /jobs/{id}`), unless the two responses name different schemas.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::evidence::follow;
use super::{Entry, Row};
use crate::base::Base;

/// One listed GET.
struct Get<'a> {
    path: &'a str,
    id: &'a str,
    /// The schema its success response names (`#/components/schemas/Refund`).
    returns: Option<&'a str>,
    /// The property of its answer that says how a job stands, and the values listed.
    status: Option<(String, Vec<String>)>,
    refused: bool,
}

/// The listed GETs an operation could be polled with.
pub(super) struct PollTargets<'a> {
    gets: Vec<Get<'a>>,
    /// A path without its extension → the first GET of it.
    item: HashMap<String, usize>,
    /// A collection path without extension → the first GET `collection/{param}`.
    member: HashMap<String, usize>,
    /// A collection's last segment, lower case → every GET `…/that/{param}`.
    named: HashMap<String, Vec<usize>>,
}

/// Why no GET is named.
pub(super) enum NoTarget {
    /// None on the same resource.
    NotFound,
    /// The GET that would read it back is one `build` refuses.
    Refused(String),
    /// The item the action acts on returns another schema than the call.
    Different {
        path: String,
        theirs: String,
        ours: String,
    },
}

impl<'a> PollTargets<'a> {
    pub(super) fn new(base: &'a Base, rows: &'a [Row<'a>]) -> Self {
        let mut targets = PollTargets {
            gets: Vec::new(),
            item: HashMap::new(),
            member: HashMap::new(),
            named: HashMap::new(),
        };
        for row in rows {
            let Row::Listed(entry) = row else { continue };
            if entry.op.method != "get" {
                continue;
            }
            let i = targets.gets.len();
            targets.gets.push(Get {
                path: &entry.op.path,
                id: entry.agent_id(),
                returns: returns(base, entry.object),
                status: job_status(base, entry.object),
                refused: entry.refused.is_some(),
            });
            let path = stem(&entry.op.path);
            targets.item.entry(path.clone()).or_insert(i);
            if let Some((collection, last)) = path.rsplit_once('/')
                && is_param(last)
            {
                targets.member.entry(collection.to_string()).or_insert(i);
                if let Some((_, name)) = collection.rsplit_once('/')
                    && !name.is_empty()
                    && !is_param(name)
                {
                    let named = targets.named.entry(name.to_ascii_lowercase()).or_default();
                    named.push(i);
                }
            }
        }
        targets
    }

    /// How the answer of the GET of `path` says a job stands (`PollTargets::find`'s
    /// path): the property and the values its schema lists.
    pub(super) fn status(&self, path: &str) -> Option<(&str, &[String])> {
        let get = &self.gets[*self.item.get(&stem(path))?];
        get.status
            .as_ref()
            .map(|(field, listed)| (field.as_str(), listed.as_slice()))
    }

    /// The GET (its path and agent id) that reads back what `entry` makes or changes.
    pub(super) fn find(&self, base: &Base, entry: &Entry) -> Result<(&'a str, &'a str), NoTarget> {
        let path = stem(&entry.op.path);
        let ours = returns(base, entry.object);
        let mut refused = None;
        let mut take = |i: usize| -> Option<(&'a str, &'a str)> {
            let get = &self.gets[i];
            if get.refused {
                refused.get_or_insert(get.path);
                return None;
            }
            Some((get.path, get.id))
        };
        let Some((parent, last)) = path.rsplit_once('/') else {
            return Err(NoTarget::NotFound);
        };
        if is_param(last) {
            return match self.item.get(&path).and_then(|&i| take(i)) {
                Some(found) => Ok(found),
                None => Err(refused.map_or(NoTarget::NotFound, |p| NoTarget::Refused(p.into()))),
            };
        }
        if let Some(found) = self.member.get(&path).and_then(|&i| take(i)) {
            return Ok(found);
        }
        let differs = |get: &Get| matches!((ours, get.returns), (Some(a), Some(b)) if a != b);
        let name = last.to_ascii_lowercase();
        let mut named: Vec<usize> = [name.clone(), format!("{name}s"), format!("{name}es")]
            .iter()
            .filter_map(|n| self.named.get(n))
            .flatten()
            .copied()
            .filter(|&i| !differs(&self.gets[i]))
            .collect();
        // The nearest collection of that name: the longest common start with the call.
        named.sort_by_key(|&i| std::cmp::Reverse(shared_prefix(&path, self.gets[i].path)));
        if let Some(found) = named.into_iter().find_map(&mut take) {
            return Ok(found);
        }
        let parent_is_item = parent.rsplit_once('/').is_some_and(|(_, l)| is_param(l));
        if let Some(&i) = self.item.get(parent).filter(|_| parent_is_item) {
            let get = &self.gets[i];
            if differs(get) {
                return Err(NoTarget::Different {
                    path: get.path.to_string(),
                    theirs: short(get.returns.unwrap_or_default()),
                    ours: short(ours.unwrap_or_default()),
                });
            }
            if let Some(found) = take(i) {
                return Ok(found);
            }
        }
        Err(refused.map_or(NoTarget::NotFound, |p| NoTarget::Refused(p.into())))
    }
}

/// The property of the first success answer that says how a job stands (`status`, else
/// `state`; or the same inside a one-property envelope, `job.status`) and the values its
/// schema lists for it (an `enum` of strings).
fn job_status(base: &Base, object: &Map<String, Value>) -> Option<(String, Vec<String>)> {
    let responses = object.get("responses")?.as_object()?;
    let (_, response) = responses.iter().find(|(code, _)| code.starts_with('2'))?;
    let content = follow(base, response).get("content")?.as_object()?;
    let (_, media) = content.iter().next()?;
    let schema = follow(base, media.get("schema")?);
    let properties = schema.get("properties")?.as_object()?;
    let listed_in = |properties: &Map<String, Value>, prefix: &str| {
        ["status", "state"].into_iter().find_map(|field| {
            let values = follow(base, properties.get(field)?)
                .get("enum")?
                .as_array()?;
            let listed: Vec<String> = values
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect();
            (!listed.is_empty()).then(|| (format!("{prefix}{field}"), listed))
        })
    };
    listed_in(properties, "").or_else(|| {
        // `{"job": {"status": …}}`.
        let (envelope, inner) = crate::model::envelope(properties.iter())?;
        let inner = follow(base, inner).get("properties")?.as_object()?;
        listed_in(inner, &format!("{envelope}."))
    })
}

/// The local `$ref` of the schema the first success response with content names.
fn returns<'a>(base: &'a Base, object: &'a Map<String, Value>) -> Option<&'a str> {
    let responses = object.get("responses")?.as_object()?;
    responses
        .iter()
        .filter(|(code, _)| code.starts_with('2'))
        .find_map(|(_, response)| {
            let content = follow(base, response).get("content")?.as_object()?;
            let (_, media) = content.iter().next()?;
            media.get("schema")?.get("$ref")?.as_str()
        })
}

/// `#/components/schemas/Refund` → `Refund`.
fn short(reference: &str) -> String {
    reference
        .rsplit('/')
        .next()
        .unwrap_or(reference)
        .to_string()
}

/// `path` without the extension of its last segment (`/Calls/{Sid}.json` →
/// `/Calls/{Sid}`).
fn stem(path: &str) -> String {
    let (head, last) = path.rsplit_once('/').unwrap_or(("", path));
    match last.rsplit_once('.') {
        Some((name, ext)) if !name.is_empty() && ext.chars().all(|c| c.is_ascii_alphanumeric()) => {
            format!("{head}/{name}")
        }
        _ => path.to_string(),
    }
}

fn shared_prefix(a: &str, b: &str) -> usize {
    a.split('/')
        .zip(b.split('/'))
        .take_while(|(x, y)| x == y)
        .count()
}

fn is_param(segment: &str) -> bool {
    segment.len() > 2 && segment.starts_with('{') && segment.ends_with('}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extensions_are_left_out_of_the_comparison() {
        assert_eq!(stem("/A/{Sid}/Calls.json"), "/A/{Sid}/Calls");
        assert_eq!(
            stem("/A/{Sid}/Calls/{CallSid}.json"),
            "/A/{Sid}/Calls/{CallSid}"
        );
        assert_eq!(stem("/v1/jobs"), "/v1/jobs");
        assert_eq!(stem("/v1.2/jobs"), "/v1.2/jobs");
        assert_eq!(stem("/files/{name}.{ext}"), "/files/{name}.{ext}");
    }
}
