//! The openai target's budget (issue 31): OpenAI's 300 characters always hold the
//! generated sentences' compact form and a 100-character author note, and the target
//! never refuses an operation because of generated text.
//!
//! Takes generated operations with every combination of `spends` (none, the person's
//! money, a customer's), `confirm`, `async` (none, a job, a change; with and without
//! `typicalSeconds`) and retry mechanism (a header, query or body key, `inherent`,
//! `unsupported`), each with a 100-character `spends.note` and a description longer than
//! 300 characters, and checks openapi.openai.json: every description is at most 300
//! characters, holds the note whole and every safety sentence in its compact form
//! (spelled out here, independently of the template), and the build has no error and
//! no warning about the note. A second property gives notes and conditions of any length
//! up to 600 characters: still no error, at most 300, every fixed safety phrase, and a
//! warning for each of the author's words that was shortened.
//!
//! `PROPTEST_CASES` raises the number of cases (default 32).

use std::sync::Arc;

use connectorgen_core::diagnostics::Severity;
use connectorgen_core::model::Target;
use connectorgen_core::render::openai::DESCRIPTION_MAX;
use connectorgen_core::{Options, analyze_with};
use proptest::prelude::*;
use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Payer {
    Person,
    Customer,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Returns {
    Job,
    Change,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Retry {
    Header,
    Query,
    Body,
    Inherent,
    Unsupported,
}

#[derive(Debug, Clone)]
struct Case {
    spends: Option<Payer>,
    confirm: bool,
    async_: Option<(Returns, Option<u32>)>,
    retry: Retry,
    note: String,
    /// `spends.when` and `confirm.when` (the second property only).
    when: Option<String>,
    confirm_when: Option<String>,
}

/// A description over 300 characters, so that the full text never fits, with its limit
/// sentence in the middle.
const DESCRIPTION: &str = "Starts the work for the given project, in the style, length and resolution the \
    person asked for, using the assets already uploaded. Never publishes or shares anything. The result \
    stays private until the person shares it themselves, and nothing else in the account is changed or \
    removed by this call.";

/// Text of exactly `len` characters made of `words`, ending with a full stop.
fn text(words: Vec<&'static str>, len: usize) -> String {
    let mut s = String::new();
    for w in words.iter().cycle() {
        if s.chars().count() >= len {
            break;
        }
        if !s.is_empty() {
            s.push(' ');
        }
        s.push_str(w);
    }
    let mut s: String = s.chars().take(len - 1).collect();
    while s.ends_with(' ') {
        s.pop();
        s.push('x');
    }
    s.push('.');
    s
}

fn words() -> impl Strategy<Value = Vec<&'static str>> {
    prop::collection::vec(
        prop::sample::select(
            &[
                "Charges", "the", "quoted", "total", "€12.40", "per", "minute", "of", "video",
                "to", "card", "saved", "in", "settings", "credits", "é", "naïve",
            ][..],
        ),
        3..12,
    )
}

fn case(note_len: impl Strategy<Value = usize>, conditions: bool) -> impl Strategy<Value = Case> {
    let condition = move || {
        if conditions {
            prop::option::of((words(), 10usize..600).prop_map(|(w, n)| text(w, n))).boxed()
        } else {
            Just(None).boxed()
        }
    };
    (
        prop::option::of(prop::sample::select(&[Payer::Person, Payer::Customer][..])),
        any::<bool>(),
        prop::option::of((
            prop::sample::select(&[Returns::Job, Returns::Change][..]),
            prop::option::of(1u32..100_000),
        )),
        prop::sample::select(
            &[
                Retry::Header,
                Retry::Query,
                Retry::Body,
                Retry::Inherent,
                Retry::Unsupported,
            ][..],
        ),
        (words(), note_len).prop_map(|(w, n)| text(w, n)),
        condition(),
        condition(),
    )
        .prop_map(
            |(spends, confirm, async_, retry, note, when, confirm_when)| Case {
                when: when.filter(|_| spends.is_some()),
                confirm_when: confirm_when.filter(|_| confirm),
                spends,
                confirm,
                async_,
                retry,
                note,
            },
        )
}

/// YAML text for a string: JSON is valid YAML flow syntax.
fn j(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

fn yaml(case: &Case) -> String {
    let mut y = String::from(
        "version: 1\nservice:\n  name: Studio\n  version: 1.0.0\n  description: Renders videos.\n  \
         publicUrl: https://api.studio.example\n  dashboardUrl: https://studio.example/keys\n\
         targets: [openai]\noperations:\n  - id: startRender\n    method: post\n    path: /v1/renders\n    \
         summary: Start a render of a project\n",
    );
    y += &format!("    description: {}\n", j(DESCRIPTION));
    y += "    input: { type: object, properties: { project: { type: string }, idempotency_key: { type: string } } }\n";
    if let Some(payer) = case.spends {
        y += &format!("    spends: {{ kind: money, note: {}", j(&case.note));
        if payer == Payer::Customer {
            y += ", payer: customer";
        }
        if let Some(when) = &case.when {
            y += &format!(", when: {}", j(when));
        }
        y += " }\n";
    }
    match (&case.confirm_when, case.confirm) {
        (Some(when), true) => y += &format!("    confirm: {{ when: {} }}\n", j(when)),
        (None, true) => y += "    confirm: true\n",
        // A paid call cannot be marked routine; otherwise say it is not permanent.
        (_, false) if case.spends.is_none() => y += "    confirm: false\n",
        _ => {}
    }
    if let Some((returns, seconds)) = case.async_ {
        y += "    async: { pollWith: pollJob";
        if returns == Returns::Change {
            y += ", returns: change";
        }
        if let Some(s) = seconds {
            y += &format!(", typicalSeconds: {s}");
        }
        y += " }\n";
    }
    y += match case.retry {
        Retry::Header => "    idempotency: { header: Acme-Request-Id }\n",
        Retry::Query => "    idempotency: { query: request_id }\n",
        Retry::Body => "    idempotency: { bodyField: idempotency_key }\n",
        Retry::Inherent => "    idempotency: inherent\n",
        Retry::Unsupported => "    idempotency: unsupported\n",
    };
    y += "  - id: pollJob\n    method: get\n    path: /v1/jobs/{jobId}\n    \
          summary: Check a job's status\n    description: Read-only. Never starts anything.\n";
    y
}

/// The compact safety sentences `case` must carry, spelled out: the cost and consent
/// sentence (with the note when `note` is given), permanence, polling and retry.
fn sentences(case: &Case, note: Option<&str>) -> Vec<String> {
    let mut out = Vec::new();
    let confirm = case.confirm;
    match case.spends {
        Some(payer) => {
            let (lead, whose) = match payer {
                Payer::Person => ("COSTS THE PERSON", "their"),
                Payer::Customer => ("MOVES THE CUSTOMER'S MONEY", "the person's"),
            };
            match note {
                Some(note) if case.when.is_none() => out.push(format!("{lead}: {note}")),
                _ => out.push(lead.to_string()),
            }
            out.push(format!(" Get {whose} yes to this request first."));
            if confirm {
                out.push(" Cannot be undone".to_string());
            }
        }
        None if confirm => {
            out.push("PERMANENT".to_string());
            out.push(": get the person's yes to this action first.".to_string());
        }
        None => {}
    }
    // As a person says a wait (issue 49): seconds under two minutes, then minutes, then
    // hours and minutes.
    let seconds = |s: Option<u32>| {
        s.map(|s| {
            let minutes = (s + 30) / 60;
            match (s, minutes / 60, minutes % 60) {
                (s, _, _) if s < 120 => format!(" (~{s}s)"),
                (_, 0, m) => format!(" (~{m} min)"),
                (_, h, 0) => format!(" (~{h} h)"),
                (_, h, m) => format!(" (~{h} h {m} min)"),
            }
        })
        .unwrap_or_default()
    };
    let named = matches!(case.retry, Retry::Query | Retry::Body);
    match case.async_ {
        Some((Returns::Job, s)) => out.push(format!(
            "Returns a job: poll `pollJob`{}; never resubmit{}.",
            seconds(s),
            if named || case.retry == Retry::Inherent {
                ""
            } else {
                " or retry"
            }
        )),
        Some((Returns::Change, s)) => out.push(format!(
            "Settles later: poll `pollJob`{}; calling again is not faster.",
            seconds(s)
        )),
        None => {}
    }
    if case.spends.is_some() || case.async_.is_some() {
        match case.retry {
            Retry::Query => out.push(" Retry: same `request_id`.".into()),
            Retry::Body => out.push(" Retry: same `idempotency_key`.".into()),
            Retry::Inherent => out.push(" Safe to retry.".into()),
            // GPT Actions send no custom header: the header key is the never-retry rule.
            Retry::Header | Retry::Unsupported => match case.async_ {
                None => out.push(" Never retry; ask the person.".into()),
                Some((Returns::Change, _)) => out.push(" Never retry.".into()),
                Some((Returns::Job, _)) => {}
            },
        }
    }
    out
}

/// A build's findings as (code, severity, message).
type Findings = Vec<(String, Severity, String)>;

/// The openai description of `startRender`, and the build's findings.
fn build(case: &Case) -> Result<(String, Findings), TestCaseError> {
    let yaml = yaml(case);
    let options = Options {
        targets: Some(vec![Target::Openai]),
        ..Options::default()
    };
    let analysis = analyze_with("connector.yaml", Arc::new(yaml.clone()), &options)
        .map_err(|e| TestCaseError::fail(format!("{e}\n{yaml}")))?;
    let findings: Findings = analysis
        .diagnostics
        .items()
        .iter()
        .map(|f| {
            (
                f.diagnostic.code_str(),
                f.severity,
                f.diagnostic.to_string(),
            )
        })
        .collect();
    let errors: Vec<_> = findings
        .iter()
        .filter(|(_, s, _)| *s == Severity::Error)
        .collect();
    prop_assert!(errors.is_empty(), "errors {errors:?}\n{yaml}");
    let outputs = analysis
        .outputs
        .ok_or_else(|| TestCaseError::fail(format!("no outputs\n{yaml}")))?;
    let doc: Value = serde_json::from_str(&outputs["openapi.openai.json"]).unwrap();
    let text = doc["paths"]["/v1/renders"]["post"]["description"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    Ok((text, findings))
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(32)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    /// Every combination with a 100-character note: at most 300, the note whole, every
    /// compact sentence, no warning about the note.
    #[test]
    fn a_100_character_note_always_fits(case in case(Just(100), false)) {
        let (text, findings) = build(&case)?;
        let at = format!("{text:?}\n{}", yaml(&case));
        prop_assert!(text.chars().count() <= DESCRIPTION_MAX, "{} chars: {at}", text.chars().count());
        for sentence in sentences(&case, Some(&case.note)) {
            prop_assert!(text.contains(&sentence), "lacks {sentence:?}: {at}");
        }
        prop_assert!(
            !findings.iter().any(|(_, _, m)| m.contains("`spends.note`")),
            "the note was shortened: {findings:?}\n{at}"
        );
        // The prose keeps the start of its limit sentence unless the generated sentences
        // and the note leave it fewer than 24 characters (then the note wins).
        let notice = text.rsplit("\n\n").next().unwrap_or_default().chars().count();
        prop_assert!(
            text.contains("Never publishes") || notice + 2 + 24 > DESCRIPTION_MAX,
            "limit: {at}"
        );
    }

    /// Notes and conditions of any length: never an error, at most 300, every fixed
    /// safety phrase, and each shortened text named by a warning.
    #[test]
    fn long_author_words_are_shortened_never_refused(case in case(10usize..600, true)) {
        let (text, findings) = build(&case)?;
        let at = format!("{text:?}\n{}", yaml(&case));
        prop_assert!(text.chars().count() <= DESCRIPTION_MAX, "{} chars: {at}", text.chars().count());
        for sentence in sentences(&case, None) {
            prop_assert!(text.contains(&sentence), "lacks {sentence:?}: {at}");
        }
        let warned = |part: &str| {
            findings.iter().any(|(c, s, m)| {
                c == "openai-description-shortened" && *s == Severity::Warning && m.contains(part)
            })
        };
        if case.spends.is_some() && !text.contains(&case.note) {
            prop_assert!(warned("`spends.note`"), "note cut silently: {at}");
        }
        if let Some(when) = &case.when && !text.contains(when.as_str()) {
            prop_assert!(warned("`spends.when`"), "condition cut silently: {at}");
        }
        if let Some(when) = &case.confirm_when && !text.contains(when.as_str()) {
            prop_assert!(warned("`confirm.when`"), "condition cut silently: {at}");
        }
    }
}

/// The checks above fail on a description that lacks a sentence or is too long.
#[test]
fn the_budget_checks_catch_what_they_look_for() {
    let case = Case {
        spends: Some(Payer::Person),
        confirm: true,
        async_: Some((Returns::Job, Some(20))),
        retry: Retry::Body,
        note: text(vec!["Charges", "the", "card"], 100),
        when: None,
        confirm_when: None,
    };
    let (text, _) = build(&case).unwrap();
    let expected = sentences(&case, Some(&case.note));
    assert!(expected.iter().all(|s| text.contains(s)), "{text}");
    for s in &expected {
        let broken = text.replace(s.as_str(), "");
        assert!(!expected.iter().all(|s| broken.contains(s)));
    }
    assert_eq!(case.note.chars().count(), 100);
}
