//! The developer and user references that are derived from the code, and the tests that
//! fail when they are stale: docs/cli.md's generated part (every command's `--help`, as
//! clap prints it) and CONTRIBUTING.md's layout (every module of every crate named).
//! Regenerate docs/cli.md with `UPDATE_DOCS=1 cargo test --test integration reference_docs`.

use crate::support::cli::{plain, root, text};
use std::collections::BTreeSet;
use std::path::Path;

const BEGIN: &str = "<!-- generated: every command's --help, as clap prints it \
(UPDATE_DOCS=1 cargo test --test integration reference_docs); edit the clap definitions, \
not this part -->";
const END: &str = "<!-- end of the generated part -->";

/// What `connectorgen ARGS --help` prints (colour off, no terminal: clap's fixed width).
fn help(args: &[&str]) -> String {
    let out = plain()
        .args(args)
        .arg("--help")
        .env_remove("COLUMNS")
        .output()
        .expect("run connectorgen --help");
    assert!(
        out.status.success(),
        "{args:?} --help failed: {}",
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// The subcommands a help text lists under `Commands:`, `help` left out.
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|line| *line != "Commands:")
        .skip(1)
        .take_while(|line| line.starts_with("  "))
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect()
}

/// Every command path, depth first in the order clap lists them.
fn commands(path: &[String], out: &mut Vec<(Vec<String>, String)>) {
    let args: Vec<&str> = path.iter().map(String::as_str).collect();
    let text = help(&args);
    let children = subcommands(&text);
    out.push((path.to_vec(), text));
    for child in children {
        let mut next = path.to_vec();
        next.push(child);
        commands(&next, out);
    }
}

/// The generated part of docs/cli.md: a synopsis (each command's usage line), then each
/// command's whole help in a text block, so what the page says is what the binary says.
fn generated() -> String {
    let mut all = Vec::new();
    commands(&[], &mut all);
    let mut doc = format!("{BEGIN}\n\n## Commands\n\n```text\n");
    for (_, help) in &all[1..] {
        if let Some(usage) = help.lines().find_map(|l| l.strip_prefix("Usage: ")) {
            doc.push_str(usage);
            doc.push('\n');
        }
    }
    doc.push_str("```\n");
    for (path, help) in &all {
        let name = std::iter::once("connectorgen")
            .chain(path.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" ");
        doc.push_str(&format!(
            "\n### `{name}`\n\n`{name} --help` prints:\n\n```text\n{}\n```\n",
            help.trim_end()
        ));
    }
    doc.push('\n');
    doc.push_str(END);
    doc
}

/// docs/cli.md's commands and options are the binary's own help: a flag added, renamed or
/// described anew in the clap definitions without regenerating the page fails here. The
/// page documents the default build: without the runtime, `serve` and `probe` are absent.
#[cfg(feature = "runtime")]
#[test]
fn cli_doc_is_current() {
    let path = root().join("docs/cli.md");
    let committed = std::fs::read_to_string(&path).expect("docs/cli.md");
    let (Some(start), Some(end)) = (committed.find(BEGIN), committed.find(END)) else {
        panic!("docs/cli.md has lost its generated part's markers");
    };
    let fresh = generated();
    let updated = format!(
        "{}{fresh}{}",
        &committed[..start],
        &committed[end + END.len()..]
    );
    if std::env::var_os("UPDATE_DOCS").is_some() {
        std::fs::write(&path, &updated).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap();
    assert!(
        committed == updated,
        "docs/cli.md is stale: run `UPDATE_DOCS=1 cargo test --test integration reference_docs`"
    );
}

/// Every `.rs` file under `dir`, by file name.
fn modules(dir: &Path, found: &mut BTreeSet<String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            modules(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.insert(path.file_name().unwrap().to_string_lossy().into_owned());
        }
    }
}

/// CONTRIBUTING.md's layout names every module file of the command line and the two
/// library crates, and names none that is gone: a module added, removed or renamed
/// without the layout saying so fails here. (By file name: the layout groups a folder's
/// files after their parent, so a name is enough to notice a change.) Test files and
/// examples the tree names count as existing.
#[test]
fn contributing_layout_names_every_module() {
    let contributing = std::fs::read_to_string(root().join("CONTRIBUTING.md")).unwrap();
    let start = contributing
        .find("## Project layout")
        .expect("a layout section");
    // The tree: the section's first code block.
    let layout = contributing[start..]
        .split("```")
        .nth(1)
        .expect("a code block in the layout section");
    let mut files = BTreeSet::new();
    for dir in [
        "src",
        "crates/connectorgen-core/src",
        "crates/connectorgen-runtime/src",
    ] {
        modules(&root().join(dir), &mut files);
    }
    let unnamed: Vec<_> = files
        .iter()
        .filter(|name| !layout.contains(name.as_str()))
        .collect();
    assert!(
        unnamed.is_empty(),
        "CONTRIBUTING.md's layout does not name {unnamed:?}"
    );
    let named: BTreeSet<&str> = layout
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
        .filter(|word| Path::new(word).extension().is_some_and(|e| e == "rs") && word.len() > 3)
        .collect();
    let mut examples = BTreeSet::new();
    modules(&root().join("examples"), &mut examples);
    let gone: Vec<_> = named
        .iter()
        .filter(|name| !files.contains(**name) && !examples.contains(**name))
        .filter(|name| !root().join("tests").join(name).exists())
        .collect();
    assert!(
        gone.is_empty(),
        "CONTRIBUTING.md's layout names {gone:?}, which no crate has"
    );
}
