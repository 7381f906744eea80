//! Connector → `openapi.openai.json`: OpenAPI 3.1 within OpenAI GPT Actions' limits
//! (operation description 300 characters, parameter description 700).
//!
//! Takes: the connector, the full model-facing descriptions, the compact form of the
//! generated sentences, and a way to render that compact form again for an operation
//! whose author's words were shortened. Returns: the JSON text and an
//! `openai-description-shortened` warning for every author's text it had to shorten.
//! Must never: write a description over 300 characters or a parameter description over
//! 700, refuse an operation because of the generated text (there is no error here), or
//! drop the cost ("COSTS THE PERSON"), consent, permanence ("PERMANENT", "Cannot be
//! undone"), polling ("never resubmit", "calling again is not faster") or retry
//! sentences. When the full text does not fit, the generated sentences switch to their
//! short form (about 135 characters for an operation that spends, cannot be undone, is
//! async and has a retry key, besides the ids and the author's words: a 100-character
//! note always fits) and the author's prose is shortened first, keeping the sentence that
//! says what the call will not do, then as much of its first sentence (what the call
//! does) as fits, down to 60 characters. When even that does not fit,
//! the author's words inside the sentences (`spends.note`, `spends.when`,
//! `confirm.when`) are shortened, the longest first, down to 100 characters together;
//! then the conditions further, so that the prose keeps the start of its limit sentence
//! (the note stays whole up to 100 characters); and only then does the prose give up
//! its room. A condition shortened to nothing is left out, which makes the sentence
//! unconditional (the cautious reading). A retry key whose name alone does not fit is
//! the never-retry rule instead (the safe side). Every shortening is a warning naming the
//! text; the full texts stay in the other targets and in the operation's `x-cost-note`,
//! `x-cost-when` and `x-permanent-when` hints.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::base::Base;
use crate::diagnostics::{Diagnostic, Finding, Severity, Span};
use crate::model::{Connector, Idempotency, KeyLocation, Operation, Unsupported, escape, unescape};
use crate::model::{Level, Lint};

use super::{RenderError, openapi};

/// OpenAI's documented limit on an operation's description.
pub const DESCRIPTION_MAX: usize = 300;
/// OpenAI's documented limit on a parameter's description.
pub const PARAMETER_MAX: usize = 700;

/// What the author's prose keeps of the budget before the author's words inside the
/// generated sentences are shortened.
pub const PROSE_MIN: usize = 60;

/// What the author's words inside the generated sentences (note and conditions together)
/// keep before the prose gives up more than `PROSE_MIN`: a 100-character note always
/// fits whole.
pub const AUTHOR_ROOM: usize = 100;

/// What the prose keeps, if it can, once the author's words are down to `AUTHOR_ROOM`:
/// the start of its limit sentence.
const PROSE_FLOOR: usize = 24;

/// A shortened note or condition shorter than this is left out rather than kept as a
/// stub ("Charges…" says less than nothing about what is charged).
const PART_MIN: usize = 8;

/// Renders the compact notice of an operation (`description.compact.j2`), for the
/// copies of an operation whose author's words were shortened.
pub(crate) type Notice<'a> = dyn FnMut(&Operation) -> Result<String, RenderError> + 'a;

pub(crate) fn render(
    connector: &Connector,
    base: Option<&Base>,
    descriptions: &[String],
    compact: &[String],
    notice: &mut Notice<'_>,
) -> Result<(String, Vec<Finding>), RenderError> {
    let mut findings = Vec::new();
    let mut texts = Vec::with_capacity(descriptions.len());
    for (op, (full, compact)) in connector
        .operations
        .iter()
        .zip(descriptions.iter().zip(compact))
    {
        let text = if chars(full) <= DESCRIPTION_MAX {
            full.clone()
        } else {
            fit(connector, op, compact, notice, &mut findings)?
        };
        texts.push(text);
    }
    let mut doc = openapi::document(connector, &texts);
    let before = referenced_components(&doc);
    drop_header_keys(connector, &mut doc, &mut findings);
    drop_orphans(&mut doc, &before);
    fit_parameters(connector, base, &mut doc, &mut findings);
    Ok((super::json_text(&doc), findings))
}

fn chars(s: &str) -> usize {
    s.chars().count()
}

/// The description of `op` within 300 characters, from its compact notice and the
/// author's prose, in the order of the module doc.
fn fit(
    connector: &Connector,
    op: &Operation,
    compact: &str,
    notice: &mut Notice<'_>,
    findings: &mut Vec<Finding>,
) -> Result<String, RenderError> {
    let prose_len = chars(&op.description);
    // The room the prose keeps first; the separator only when both are there.
    let keep = prose_len.min(PROSE_MIN);
    let sep = |prose: usize| if prose > 0 { 2 } else { 0 };
    let mut compact = compact.to_string();
    if chars(&compact) + sep(keep) + keep > DESCRIPTION_MAX {
        compact = fit_notice(connector, op, keep, notice, findings)?;
    }
    let room = match chars(&compact) {
        0 => DESCRIPTION_MAX,
        n => DESCRIPTION_MAX.saturating_sub(n + 2),
    };
    // A prose of a few characters would be "…" and nothing more.
    let prose = if room < PART_MIN {
        String::new()
    } else {
        fit_prose(&op.description, room)
    };
    if *prose != *op.description {
        warning(
            connector,
            op,
            "the author's description",
            prose_len,
            room,
            "keeps its limit sentence, then what the call does, and shortens the rest",
            op.origin.description,
            findings,
        );
    }
    let text = match (prose.is_empty(), compact.is_empty()) {
        (_, true) => prose,
        (true, false) => compact,
        (false, false) => format!("{prose}\n\n{compact}"),
    };
    // The steps above always fit (ids are at most 64 characters with the openai
    // target); this guard only keeps the promise if a template override does not.
    Ok(if chars(&text) > DESCRIPTION_MAX {
        crate::english::clip(&text, DESCRIPTION_MAX)
    } else {
        text
    })
}

/// The author's words inside the generated sentences: the cost note and the two
/// conditions, with what to call each, the hint keeping its full text, and its place.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Part {
    Note,
    When,
    ConfirmWhen,
}

impl Part {
    fn text(self, op: &Operation) -> Option<&str> {
        match self {
            Part::Note => op.spends.as_ref().map(|s| s.note.as_str()),
            Part::When => op.spends.as_ref().and_then(|s| s.when.as_deref()),
            Part::ConfirmWhen => op.confirm_when.as_deref(),
        }
    }

    fn set(self, op: &mut Operation, text: Option<String>) {
        match (self, op.spends.as_mut()) {
            (Part::Note, Some(s)) => s.note = text.unwrap_or_default(),
            (Part::When, Some(s)) => s.when = text,
            (Part::ConfirmWhen, _) => op.confirm_when = text,
            _ => {}
        }
    }

    fn name(self) -> &'static str {
        match self {
            Part::Note => "`spends.note`",
            Part::When => "`spends.when`",
            Part::ConfirmWhen => "`confirm.when`",
        }
    }

    fn action(self, dropped: bool) -> &'static str {
        match (self, dropped) {
            (Part::Note, false) => {
                "is shortened in the cost sentence (`x-cost-note` keeps it whole)"
            }
            (Part::Note, true) => "is left out of the cost sentence (`x-cost-note` keeps it)",
            (Part::When, false) => {
                "is shortened in the cost sentence (`x-cost-when` keeps it whole)"
            }
            (Part::When, true) => {
                "is left out, and the cost sentence reads as if every call costs (`x-cost-when` keeps it)"
            }
            (Part::ConfirmWhen, false) => {
                "is shortened in the permanence sentence (`x-permanent-when` keeps it whole)"
            }
            (Part::ConfirmWhen, true) => {
                "is left out, and the permanence sentence reads as if every call is permanent (`x-permanent-when` keeps it)"
            }
        }
    }

    fn span(self, op: &Operation) -> Span {
        match self {
            Part::Note => op.origin.note(),
            Part::When => op.origin.when(),
            Part::ConfirmWhen => op.origin.confirm_when(),
        }
        .or(op.origin.spends())
        .unwrap_or(op.origin.entry)
    }
}

/// The compact notice of `op`, its author's words shortened (the longest first) only as
/// far as needed, in passes from the gentlest, while the author's words keep at least
/// `AUTHOR_ROOM` together: to leave the prose `keep` characters; to leave it
/// `PROSE_FLOOR`; to fit at all (the prose gets what is left, the operation's `summary`
/// still says what it does); then with the author's words shortened as far as needed;
/// and last with a retry key too long to name as the never-retry rule. The first pass that fits wins (the last one's result if none
/// does, which only a long template override can make). Each shortening is a warning.
fn fit_notice(
    connector: &Connector,
    op: &Operation,
    keep: usize,
    notice: &mut Notice<'_>,
    findings: &mut Vec<Finding>,
) -> Result<String, RenderError> {
    let parts: Vec<(Part, usize)> = [Part::Note, Part::When, Part::ConfirmWhen]
        .into_iter()
        .filter_map(|p| p.text(op).map(|t| (p, chars(t))))
        .collect();
    let room = |prose: usize| DESCRIPTION_MAX - prose - if prose > 0 { 2 } else { 0 };
    let floor = keep.min(PROSE_FLOOR);
    // What each part keeps in the pass that protects the note: the note up to
    // `AUTHOR_ROOM` (a 100-character note always fits), a condition nothing (left out,
    // its sentence reads as unconditional: the cautious reading).
    let note_kept: Vec<usize> = parts
        .iter()
        .map(|(p, n)| {
            if *p == Part::Note {
                (*n).min(AUTHOR_ROOM)
            } else {
                0
            }
        })
        .collect();
    let none = vec![0; parts.len()];
    let passes = [
        (room(keep), AUTHOR_ROOM, &none, false),
        (room(floor), AUTHOR_ROOM, &none, false),
        // The start of the limit sentence before a condition's words: what the call will
        // not do is said in every description.
        (room(floor), 0, &note_kept, false),
        (DESCRIPTION_MAX, AUTHOR_ROOM, &none, false),
        (DESCRIPTION_MAX, 0, &none, false),
        (DESCRIPTION_MAX, 0, &none, true),
    ];
    let mut copy = op.clone();
    let mut result = (String::new(), Vec::new(), false);
    for (target, author_room, part_floors, unnamed_key) in passes {
        if unnamed_key {
            if !matches!(op.idempotency, Idempotency::Key(_)) {
                break;
            }
            copy.idempotency = Idempotency::Unsupported(Unsupported::Stated);
        }
        let mut caps: Vec<usize> = parts.iter().map(|(_, n)| *n).collect();
        // Each round renders the notice, then takes what is over from the longest
        // parts; clipping at a word only shortens more, so a few rounds suffice.
        let mut rendered = String::new();
        for _ in 0..16 {
            for ((part, length), cap) in parts.iter().zip(&caps) {
                let text = part.text(op).unwrap_or_default();
                let clipped = match *cap {
                    c if c >= *length => Some(text.to_string()),
                    c if c < PART_MIN => None,
                    c => Some(crate::english::clip(text, c)),
                };
                part.set(&mut copy, clipped);
            }
            rendered = notice(&copy)?;
            let over = chars(&rendered).saturating_sub(target);
            if over == 0 || !shrink(&mut caps, over, author_room, part_floors) {
                break;
            }
        }
        let fits = chars(&rendered) <= target;
        result = (rendered, caps, unnamed_key);
        if fits {
            break;
        }
    }
    let (text, caps, unnamed_key) = result;
    report(connector, op, &parts, &caps, unnamed_key, findings);
    Ok(text)
}

/// Takes `over` characters from the longest of `caps`, one at a time (so two long
/// parts end up the same length rather than one vanishing), while they keep more than
/// `floor` together and each keeps more than its `part_floors` entry; a cap below
/// `PART_MIN` falls to zero, as the part is then left out. Whether anything was taken.
fn shrink(caps: &mut [usize], mut over: usize, floor: usize, part_floors: &[usize]) -> bool {
    let mut taken = false;
    while over > 0 && caps.iter().sum::<usize>() > floor {
        let Some((i, _)) = caps
            .iter()
            .zip(part_floors)
            .enumerate()
            .filter(|(_, (c, f))| **c > 0 && **c > **f)
            .map(|(i, (c, _))| (i, c))
            .max_by_key(|(i, c)| (**c, std::cmp::Reverse(*i)))
        else {
            break;
        };
        caps[i] -= 1;
        over -= 1;
        taken = true;
        if caps[i] < PART_MIN {
            caps[i] = 0;
        }
    }
    taken
}

/// The warnings for the parts `caps` shortened, and for a retry key left unnamed.
fn report(
    connector: &Connector,
    op: &Operation,
    parts: &[(Part, usize)],
    caps: &[usize],
    key_dropped: bool,
    findings: &mut Vec<Finding>,
) {
    for ((part, length), cap) in parts.iter().zip(caps) {
        if cap < length {
            warning(
                connector,
                op,
                part.name(),
                *length,
                *cap,
                part.action(*cap < PART_MIN),
                part.span(op),
                findings,
            );
        }
    }
    if key_dropped && let Idempotency::Key(key) = &op.idempotency {
        warning(
            connector,
            op,
            "the retry key's name",
            chars(&key.name),
            0,
            "is not named: the description says never to retry on its own (the key stays in the request)",
            op.origin.idempotency().unwrap_or(op.origin.entry),
            findings,
        );
    }
}

/// The author's prose in at most `max` characters: the sentence that says what the call
/// will not do comes first in the budget, then the first sentence, which says what the
/// call does (cut at a word, with "…", when only part of it fits, and at least
/// `DOES_MIN` characters of it can), then the other sentences in their order as long as
/// they fit (the kept ones stay in the author's order); a limit sentence too long for the
/// budget is cut at a word, with "…".
pub(crate) fn fit_prose(text: &str, max: usize) -> String {
    let len = |s: &str| s.chars().count();
    if len(text) <= max {
        return text.to_string();
    }
    let sentences = crate::english::sentences(text);
    if sentences.is_empty() {
        return crate::english::clip(text.trim(), max);
    }
    let first = sentences
        .iter()
        .position(|s| crate::english::states_limit(s))
        .unwrap_or(0);
    // Each sentence as kept: whole, cut, or not at all.
    let mut kept: Vec<Option<String>> = vec![None; sentences.len()];
    let mut used = 0;
    for i in std::iter::once(first).chain((0..sentences.len()).filter(|&i| i != first)) {
        let cost = len(sentences[i]) + usize::from(used > 0);
        if used + cost <= max {
            kept[i] = Some(sentences[i].to_string());
            used += cost;
        } else if i == 0 && i != first {
            // What the call does, cut to the room left, rather than left out.
            let room = max.saturating_sub(used + 1);
            if room >= DOES_MIN {
                let cut = crate::english::clip(sentences[0], room);
                used += len(&cut) + 1;
                kept[0] = Some(cut);
            }
        }
    }
    if kept[first].is_none() {
        return crate::english::clip(sentences[first], max);
    }
    kept.into_iter().flatten().collect::<Vec<_>>().join(" ")
}

/// The fewest characters of the first sentence (what the call does) `fit_prose` keeps
/// when it cuts it: fewer say too little of it to be worth the room.
const DOES_MIN: usize = 20;

/// Shortens every parameter description over OpenAI's limit: the operations' own, their
/// path items' shared ones and the document's reusable ones (the last two exist only in
/// base mode, where the warning points into the base document).
fn fit_parameters(
    connector: &Connector,
    base: Option<&Base>,
    doc: &mut Value,
    findings: &mut Vec<Finding>,
) {
    // (pointer of the parameter list, the operation it belongs to)
    let mut lists: Vec<(String, Option<&Operation>)> = connector
        .operations
        .iter()
        .map(|op| (format!("{}/parameters", op.pointer()), Some(op)))
        .collect();
    let paths: Vec<String> = doc
        .get("paths")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(path, _)| format!("/paths/{}/parameters", escape(path)))
        .collect();
    lists.extend(paths.into_iter().map(|p| (p, None)));
    lists.push(("/components/parameters".to_string(), None));
    for (pointer, op) in lists {
        let entries: Vec<(String, &mut Value)> = match doc.pointer_mut(&pointer) {
            Some(Value::Array(items)) => items
                .iter_mut()
                .enumerate()
                .map(|(i, p)| (format!("{pointer}/{i}"), p))
                .collect(),
            Some(Value::Object(map)) => map
                .iter_mut()
                .map(|(k, p)| (format!("{pointer}/{}", escape(k)), p))
                .collect(),
            _ => Vec::new(),
        };
        for (at, p) in entries {
            let Some(Value::String(d)) = p.get_mut("description") else {
                continue;
            };
            let length = d.chars().count();
            if length <= PARAMETER_MAX {
                continue;
            }
            *d = crate::english::clip(d, PARAMETER_MAX);
            match (op, base) {
                (Some(op), _) => warning(
                    connector,
                    op,
                    "a parameter's description",
                    length,
                    PARAMETER_MAX,
                    "shortens it",
                    op.origin.description,
                    findings,
                ),
                (None, Some(base)) => findings.push(
                    Finding::warning(Diagnostic::OpenaiDescriptionShortened {
                        id: at.clone(),
                        what: "a shared parameter's description",
                        length,
                        max: PARAMETER_MAX,
                        action: "shortens it",
                        span: base.span(&format!("{at}/description")),
                    })
                    .in_base(),
                ),
                (None, None) => {}
            }
        }
    }
}

/// GPT Actions send no custom header ("Custom headers are not supported"), so a header
/// retry key is no defence there: each such operation loses the header parameter (its
/// own, or its path item's shared one; a component only it referenced goes too, in
/// `drop_orphans`), its `x-idempotency` says `none`, its description
/// already carries the never-repeat rule (`prose::Flavour::Openai`), and a warning says
/// what the provider can do.
fn drop_header_keys(connector: &Connector, doc: &mut Value, findings: &mut Vec<Finding>) {
    for op in &connector.operations {
        let Some(key) = op.key().filter(|k| k.location == KeyLocation::Header) else {
            continue;
        };
        let is_key = |p: &Value| {
            let p = match p.get("$ref").and_then(Value::as_str) {
                Some(reference) => connector.document.resolve(reference).unwrap_or(p),
                None => p,
            };
            p.get("in").and_then(Value::as_str) == Some("header")
                && p.get("name")
                    .and_then(Value::as_str)
                    .is_some_and(|n| n.eq_ignore_ascii_case(&key.name))
        };
        let shared = format!("/paths/{}/parameters", escape(&op.path));
        for pointer in [format!("{}/parameters", op.pointer()), shared] {
            if let Some(Value::Array(list)) = doc.pointer_mut(&pointer) {
                list.retain(|p| !is_key(p));
            }
        }
        if let Some(Value::Object(object)) = doc.pointer_mut(&op.pointer()) {
            if object
                .get("parameters")
                .and_then(Value::as_array)
                .is_some_and(Vec::is_empty)
            {
                object.remove("parameters");
            }
            if let Some(hint) = object.get_mut("x-idempotency") {
                *hint = Value::String("none".into());
            }
        }
        let severity = match connector.lint.level(Lint::OpenaiHeaderKey) {
            _ if op.lint_allow.contains(&Lint::OpenaiHeaderKey) => continue,
            Level::Allow => continue,
            Level::Warn => Severity::Warning,
            Level::Deny => Severity::Error,
        };
        findings.push(Finding {
            source: crate::diagnostics::Source::default(),
            diagnostic: Diagnostic::OpenaiHeaderKey {
                id: op.id.clone(),
                header: key.name.clone(),
                refused: if key.required {
                    "; and the header is required, so the provider will refuse every call of it from a GPT Action".to_string()
                } else {
                    String::new()
                },
                span: op.origin.idempotency().unwrap_or(op.origin.entry),
            },
            severity,
        });
    }
}

/// The components `doc` references, transitively from outside `components`, as
/// (section, name).
fn referenced_components(doc: &Value) -> BTreeSet<(String, String)> {
    fn collect<'a>(value: &'a Value, out: &mut Vec<&'a str>) {
        match value {
            Value::Object(map) => {
                if let Some(Value::String(reference)) = map.get("$ref") {
                    out.push(reference);
                }
                map.values().for_each(|v| collect(v, out));
            }
            Value::Array(list) => list.iter().for_each(|v| collect(v, out)),
            _ => {}
        }
    }
    let mut pending = Vec::new();
    for (key, value) in doc.as_object().into_iter().flatten() {
        if key != "components" {
            collect(value, &mut pending);
        }
    }
    let mut seen = BTreeSet::new();
    while let Some(reference) = pending.pop() {
        let Some(rest) = reference.strip_prefix("#/components/") else {
            continue;
        };
        let mut parts = rest.split('/');
        let (Some(section), Some(name)) = (parts.next(), parts.next()) else {
            continue;
        };
        let target = (unescape(section), unescape(name));
        let component = doc
            .get("components")
            .and_then(|c| c.get(&target.0))
            .and_then(|s| s.get(&target.1));
        if seen.insert(target)
            && let Some(component) = component
        {
            collect(component, &mut pending);
        }
    }
    seen
}

/// Removes the components that were referenced in `before` and are no longer: what
/// dropping a header key left behind (its `components/parameters` entry, and what only
/// it reached). Components nothing referenced to begin with are left as they were.
fn drop_orphans(doc: &mut Value, before: &BTreeSet<(String, String)>) {
    let after = referenced_components(doc);
    let Some(Value::Object(components)) = doc.get_mut("components") else {
        return;
    };
    for (section, name) in before.difference(&after) {
        if let Some(Value::Object(entries)) = components.get_mut(section) {
            entries.remove(name);
            if entries.is_empty() {
                components.remove(section);
            }
        }
    }
    if components.is_empty() {
        doc.as_object_mut().map(|root| root.remove("components"));
    }
}

#[expect(
    clippy::too_many_arguments,
    reason = "one warning's fields, each from its caller"
)]
fn warning(
    connector: &Connector,
    op: &Operation,
    what: &'static str,
    length: usize,
    max: usize,
    action: &'static str,
    span: Span,
    findings: &mut Vec<Finding>,
) {
    // Shortening is never silent: it warns even while the lint is at its default
    // `allow`; `lintAllow: [description-too-long]` on the operation silences it.
    if op.lint_allow.contains(&Lint::DescriptionTooLong) {
        return;
    }
    let severity = match connector.lint.level(Lint::DescriptionTooLong) {
        Level::Deny => Severity::Error,
        _ => Severity::Warning,
    };
    findings.push(Finding {
        source: crate::diagnostics::Source::default(),
        diagnostic: Diagnostic::OpenaiDescriptionShortened {
            id: op.id.clone(),
            what,
            length,
            max,
            action,
            span,
        },
        severity,
    });
}

#[cfg(test)]
mod tests {
    use super::fit_prose;
    use crate::english::clip as shorten;

    #[test]
    fn prose_keeps_its_limit_sentence_first_then_what_the_call_does() {
        let text = "Starts a generation of a very long video. Returns a job to track. Does not publish the video.";
        assert_eq!(fit_prose(text, 200), text);
        // What the call does comes next, cut rather than left out (issue 49).
        assert_eq!(
            fit_prose(text, 60),
            "Starts a generation of a very… Does not publish the video."
        );
        assert_eq!(
            fit_prose(text, 75),
            "Starts a generation of a very long video. Does not publish the video."
        );
        // Too little room to say what it does: the limit sentence alone.
        assert_eq!(fit_prose(text, 40), "Does not publish the video.");
        assert_eq!(fit_prose(text, 30), "Does not publish the video.");
        assert_eq!(fit_prose(text, 20), "Does not publish…");
        assert!(
            fit_prose("No limit here at all, just words.", 12)
                .chars()
                .count()
                <= 12
        );
    }

    #[test]
    fn shortens_at_sentence_then_word() {
        assert_eq!(shorten("short", 10), "short");
        assert_eq!(
            shorten("First sentence here. Second one is long.", 30),
            "First sentence here."
        );
        assert_eq!(shorten("one two three four five", 12), "one two…");
        assert!(shorten(&"x".repeat(50), 10).chars().count() <= 10);
    }
}
