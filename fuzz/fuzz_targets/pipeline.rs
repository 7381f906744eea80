//! The whole pipeline on arbitrary bytes: UTF-8 check → parse → validate → render → lint
//! → every report format, in inline mode and in base mode.
//!
//! Takes: any bytes (the seed corpus in `fuzz/seeds/` is every example and test case).
//! Up to the first NUL byte they are the manifest (YAML cannot hold a raw NUL, so no
//! manifest loses anything); after it, when there is one, the base OpenAPI document the
//! manifest's `openapi:` stands for, given in memory (`Options::base_document`) and read
//! as JSON when it parses as JSON, else as YAML (its name has no extension). Inline
//! `openapi:` fragments of operations come with the manifest (seeds hold some).
//! Must never: panic, hang or exhaust memory (libFuzzer's -timeout and -rss_limit_mb
//! catch the last two), fail to render a template, or break a promise of the outputs:
//! openapi.json is JSON, every file ends in exactly one newline, a second run gives the
//! same bytes, the same raw manifest, findings and outputs without the JSON fast path
//! of the manifest front end (`parse_plain`, `Options::plain_parse`), the same span for
//! every pointer of a base document from `Base::span` (the skim, the walk, what they
//! remember and their budgets: src/base/locate.rs) as from the full index `locate_all`,
//! and user text adds no heading, quote, list item, fence or HTML block to llms.txt or
//! descriptions.md.
//! Must never read the host's files: a fuzzed `templates: /etc` or `openapi: /etc/passwd`
//! would make a run depend on the machine (and read whatever it names), so the embedded
//! templates are passed in as if by `--templates`, which replaces the manifest's
//! `templates:`, and `sandbox` refuses any `openapi:` document.
#![no_main]

use std::sync::Arc;

use connectorgen_core::report::{Format, Report};
use libfuzzer_sys::fuzz_target;

#[path = "../../tests/support/markdown.rs"]
mod markdown;

const NAME: &str = "fuzz.yaml";
/// No extension: the base is read as JSON when it parses as JSON, else as YAML.
const BASE_NAME: &str = "fuzz-base";

fuzz_target!(|data: &[u8]| {
    let (manifest, base) = match data.iter().position(|&b| b == 0) {
        Some(at) => (&data[..at], Some(&data[at + 1..])),
        None => (data, None),
    };
    // Non-UTF-8 input stops here in the CLI too (`input::read_manifest`).
    let Ok(text) = connectorgen_core::input::decode(NAME, manifest.to_vec()) else {
        return;
    };
    let base_document = match base {
        None => None,
        Some(bytes) => match connectorgen_core::input::decode(BASE_NAME, bytes.to_vec()) {
            Ok(base) => Some((BASE_NAME.to_string(), Arc::new(base))),
            Err(_) => return,
        },
    };
    if let Some((_, base)) = &base_document {
        base_spans_agree(base);
    }
    let text = Arc::new(text);
    let options = connectorgen_core::Options {
        templates: Some(connectorgen_core::templates::defaults()),
        // A fuzzed `openapi: /etc/passwd` is refused, not read; with a base document
        // after the NUL, that text is used instead, and no file is read either.
        sandbox: true,
        base_document,
        ..connectorgen_core::Options::default()
    };
    let analysis = match connectorgen_core::analyze_with(NAME, text.clone(), &options) {
        Ok(analysis) => analysis,
        Err(e) => panic!("a template failed to render: {e}"),
    };

    // Findings point into the text: every renderer must cope with every span.
    let report = Report {
        diagnostics: &analysis.diagnostics,
        drift: &[],
        fix: format!("connectorgen build {NAME}"),
    };
    let _ = report.render(Format::Human, false);
    let _ = report.render(Format::Human, true);
    let _ = report.render(Format::Github, false);
    for format in [Format::Json, Format::Sarif] {
        let out = report.render(format, false);
        if let Err(e) = serde_json::from_str::<serde_json::Value>(&out) {
            panic!("{format:?} report is not JSON ({e}):\n{out}");
        }
    }
    let _ = report.summary();

    let Some(outputs) = &analysis.outputs else {
        return;
    };
    for (file, contents) in outputs {
        assert!(
            contents.ends_with('\n') && !contents.ends_with("\n\n"),
            "{file} does not end in exactly one newline"
        );
    }
    // llms.txt and descriptions.md are checked against openapi.json: they come together
    // (the `muse` target).
    if let Some(openapi) = outputs.get("openapi.json") {
        let doc: serde_json::Value = match serde_json::from_str(openapi) {
            Ok(doc) => doc,
            Err(e) => panic!("openapi.json is not JSON ({e}):\n{openapi}"),
        };
        let ops = operations(&doc);
        if let Some(llms) = outputs.get("llms.txt") {
            check_llms(llms, &ops);
        }
        if let Some(md) = outputs.get("descriptions.md") {
            check_descriptions(md, &ops);
        }
    }
    for (file, contents) in outputs {
        if file.ends_with(".json") {
            if let Err(e) = serde_json::from_str::<serde_json::Value>(contents) {
                panic!("{file} is not JSON ({e})");
            }
        }
    }
    let again = connectorgen_core::analyze_with(NAME, text.clone(), &options)
        .expect("rendered once, renders again");
    assert_eq!(
        analysis.outputs, again.outputs,
        "two runs gave different bytes"
    );
    same_without_fast_path(&text, &options, &analysis);
});

/// The JSON fast path (src/manifest/flow_json.rs) reads what the YAML parser alone
/// reads: the same raw manifest, spans included, when it takes the text, and the same
/// findings and outputs from the whole pipeline either way.
fn same_without_fast_path(
    text: &Arc<String>,
    options: &connectorgen_core::Options,
    analysis: &connectorgen_core::Analysis,
) {
    let plain = connectorgen_core::manifest::parse_plain(text, None);
    if let Some(fast) = connectorgen_core::manifest::parse_fast(text, None) {
        match &plain {
            Ok(plain) => assert_eq!(
                format!("{fast:?}"),
                format!("{plain:?}"),
                "the fast path read the manifest otherwise"
            ),
            Err(e) => panic!("the fast path took a manifest the YAML parser refuses: {e}"),
        }
    }
    let options = connectorgen_core::Options {
        plain_parse: true,
        ..options.clone()
    };
    let slow = connectorgen_core::analyze_with(NAME, text.clone(), &options)
        .expect("rendered with the fast path, renders without it");
    assert_eq!(
        format!("{:?}", analysis.diagnostics),
        format!("{:?}", slow.diagnostics),
        "the fast path changed the findings"
    );
    assert_eq!(
        analysis.outputs, slow.outputs,
        "the fast path changed the outputs"
    );
}

/// `Base::span` (src/base/locate.rs: a JSON skim from remembered marks, a YAML walk, the
/// full index once their budgets are spent) gives every pointer the range the full index
/// `locate_all` gives it, else its nearest ancestor's, else the start of the file: for
/// every node of a base document that parses, and for children of each that are not
/// there, asked in document order, in reverse, again (remembered), and alone.
fn base_spans_agree(text: &Arc<String>) {
    let Ok(base) = connectorgen_core::base::Base::parse(BASE_NAME, text.clone()) else {
        return;
    };
    let all = connectorgen_core::base::locate_all(text);
    let mut nodes: Vec<&String> = all.keys().collect();
    nodes.sort_by_key(|p| (all[*p], p.len()));
    let mut asked = Vec::new();
    for p in &nodes {
        asked.push((*p).clone());
        for child in ["/no~1such~0key", "/7", "/0", "/01", "/", "/~"] {
            asked.push(format!("{p}{child}"));
        }
    }
    asked.extend(["/".to_string(), "no-slash".to_string(), "~".to_string()]);
    let want = |pointer: &str| {
        let mut at = pointer;
        loop {
            if let Some(&range) = all.get(at) {
                return range;
            }
            match at.rfind('/') {
                Some(i) => at = &at[..i],
                None => return (0, 0),
            }
        }
    };
    let check = |base: &connectorgen_core::base::Base, pointer: &str, how: &str| {
        let span = base.span(pointer);
        assert_eq!(
            (span.offset(), span.len()),
            want(pointer),
            "{how}: Base::span({pointer:?}) differs from the full index"
        );
    };
    // Alone, each from a fresh document (no marks, no budget spent): a few, spread out.
    for pointer in asked.iter().step_by(asked.len().div_ceil(6)) {
        let fresh = connectorgen_core::base::Base::parse(BASE_NAME, text.clone())
            .expect("parsed once, parses again");
        check(&fresh, pointer, "alone");
    }
    for pointer in &asked {
        check(&base, pointer, "in document order");
    }
    for pointer in asked.iter().rev() {
        check(&base, pointer, "again, in reverse");
    }
    let reverse = connectorgen_core::base::Base::parse(BASE_NAME, text.clone())
        .expect("parsed once, parses again");
    for pointer in asked.iter().rev() {
        check(&reverse, pointer, "in reverse order");
    }
}

/// Every operation's id and model-facing description in the document, sorted by id.
fn operations(doc: &serde_json::Value) -> Vec<(String, String)> {
    let mut ops = Vec::new();
    for item in doc["paths"]
        .as_object()
        .into_iter()
        .flat_map(|p| p.values())
    {
        // Only the methods' objects: a base document's path item may hold other keys.
        let methods = [
            "get", "put", "post", "delete", "options", "head", "patch", "trace",
        ];
        for op in item
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(k, _)| methods.contains(&k.as_str()))
            .map(|(_, v)| v)
        {
            if let Some(id) = op["operationId"].as_str() {
                let description = op["description"].as_str().unwrap_or_default();
                ops.push((id.to_string(), description.to_string()));
            }
        }
    }
    ops.sort();
    ops
}

const LLMS_SECTIONS: [&str; 8] = [
    "## Setup",
    "## Operations",
    "## Waiting on work",
    "## Spending the person's money",
    "## Spending a customer's money",
    "## Actions that cannot be undone",
    "## Rules for the assistant",
    "## Docs",
];

/// The generator's own list items, last in llms.txt, in order: the rules (the 401 one
/// only when the connector has a credential) and the OpenAPI document's link.
const LLMS_OWN_ITEMS: [&str; 5] = [
    "- Use only the operations listed above.",
    "- A 401 means ",
    "- A 429 means too many requests",
    "- When an operation returns an id",
    "- [OpenAPI document](",
];

fn check_llms(llms: &str, ops: &[(String, String)]) {
    let s = markdown::structure(llms);
    assert!(
        llms.starts_with("# ") && s.headings.first().is_some_and(|h| llms.starts_with(h)),
        "llms.txt does not start with its title:\n{llms}"
    );
    // The sections the generator writes, in its order: Setup and Operations first, the
    // rules and the docs last, always.
    let sections = &s.headings[1..];
    let mut known = LLMS_SECTIONS.iter();
    assert!(
        sections.len() >= 4
            && sections[..2] == LLMS_SECTIONS[..2]
            && sections[sections.len() - 2..] == LLMS_SECTIONS[6..]
            && sections.iter().all(|h| known.any(|k| k == h)),
        "forged sections {sections:?}:\n{llms}"
    );
    assert_eq!(s.quotes.len(), 1, "forged quotes {:?}:\n{llms}", s.quotes);
    // Three setup steps, or none for an API without a credential.
    let steps = if llms.contains("\n## Setup\n\nThis API needs no credential") {
        0
    } else {
        3
    };
    assert_eq!(
        s.ordered.len(),
        steps,
        "forged steps {:?}:\n{llms}",
        s.ordered
    );
    let own: Vec<&str> = LLMS_OWN_ITEMS
        .iter()
        .copied()
        .filter(|item| *item != LLMS_OWN_ITEMS[1] || s.bullets.iter().any(|b| b.starts_with(item)))
        .collect();
    assert!(
        s.bullets.len() >= own.len(),
        "items missing {:?}:\n{llms}",
        s.bullets
    );
    let (listed, tail) = s.bullets.split_at(s.bullets.len() - own.len());
    for (bullet, item) in tail.iter().zip(&own) {
        assert!(
            bullet.starts_with(item),
            "forged list item {bullet:?}:\n{llms}"
        );
    }
    for bullet in listed {
        assert!(
            ops.iter()
                .any(|(id, _)| bullet.starts_with(&format!("- `{id}` "))),
            "forged list item {bullet:?}:\n{llms}"
        );
    }
    assert!(s.fences.is_empty(), "forged fence:\n{llms}");
    assert!(s.other.is_empty(), "forged {:?}:\n{llms}", s.other);
}

fn check_descriptions(md: &str, ops: &[(String, String)]) {
    let s = markdown::structure(md);
    assert!(
        md.starts_with("# ") && s.headings.first().is_some_and(|h| md.starts_with(h)),
        "descriptions.md does not start with its title:\n{md}"
    );
    let mut sections: Vec<&str> = s.headings[1..].to_vec();
    sections.sort();
    let expected: Vec<String> = ops.iter().map(|(id, _)| format!("## {id}")).collect();
    assert_eq!(sections, expected, "forged sections:\n{md}");
    // Each fence holds exactly one operation's description, byte for byte.
    let mut fences = s.fences.clone();
    fences.sort();
    let mut descriptions: Vec<String> = ops.iter().map(|(_, d)| d.clone()).collect();
    descriptions.sort();
    assert_eq!(
        fences, descriptions,
        "fences do not hold the descriptions:\n{md}"
    );
    assert!(
        s.quotes.is_empty() && s.bullets.is_empty() && s.ordered.is_empty() && s.other.is_empty(),
        "forged blocks in descriptions.md:\n{md}"
    );
}
