//! `diff`: what a change between two versions of a manifest does to what the model is
//! told (the diff rules of docs/rules.md).
//!
//! Takes: `OLD NEW` (two manifests on disk), or `--base REF [MANIFEST]` (the manifest at
//! a git revision, read through git, against the working tree's). Each side is analysed
//! as `check` analyses it, with the shared flags (`Source`). Returns: the report on
//! stdout in `--format`, and exit 0 (no finding at or above the threshold: errors, or
//! warnings too under `--deny-warnings`), 1 (findings), or `Failure` (exit 2): a
//! manifest unreadable or invalid, a revision git does not know.
//! Must never: write anything, or check anything out (`git.rs` reads blobs only).

mod git;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;
use connectorgen_core::diagnostics::Severity;
use connectorgen_core::diff::{self, Format, Side};
use connectorgen_core::{analyze_with, input};

use crate::{Failure, Source, Ui, fatal};

#[derive(Args)]
pub(crate) struct DiffArgs {
    /// The old version's manifest (with --base: the manifest [default: connector.yaml])
    old: Option<PathBuf>,
    /// The new version's manifest
    new: Option<PathBuf>,
    /// Compare the manifest at this git revision (a branch, tag or commit) with the
    /// working tree's, reading the revision through git
    #[arg(long, value_name = "REF")]
    base: Option<String>,
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    /// Fail on warnings too
    #[arg(long)]
    deny_warnings: bool,
    #[command(flatten)]
    source: Source,
}

pub(crate) fn run(ui: &Ui, args: &DiffArgs) -> Result<ExitCode, Failure> {
    let (old, new) = match (&args.base, &args.old, &args.new) {
        (Some(_), _, Some(_)) => {
            return Err(Failure::Fatal(
                "--base REF compares one manifest with itself at REF: give one manifest, not two"
                    .to_string(),
            ));
        }
        (Some(rev), manifest, None) => {
            let manifest = manifest
                .clone()
                .unwrap_or_else(|| PathBuf::from(crate::cli::DEFAULT_MANIFEST));
            let old = git::side(ui, rev, &manifest, &args.source)?;
            let new = if manifest.exists() {
                Some(disk_side(ui, &manifest, &args.source)?)
            } else {
                None
            };
            (old, new)
        }
        (None, Some(old), Some(new)) => (
            Some(disk_side(ui, old, &args.source)?),
            Some(disk_side(ui, new, &args.source)?),
        ),
        (None, _, _) => {
            return Err(Failure::Fatal(
                "give two manifests (`connectorgen diff OLD NEW`), or one and a git revision (`connectorgen diff --base main`)"
                    .to_string(),
            ));
        }
    };
    let report = diff::diff(old.as_ref(), new.as_ref());
    let failed = report.count(Severity::Error) > 0
        || (args.deny_warnings && report.count(Severity::Warning) > 0);
    if args.format != Format::Human || !ui.quiet || failed {
        ui.out(&report.render(args.format, ui.colored(&std::io::stdout())));
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// A manifest on disk, analysed as `check` analyses it.
fn disk_side(ui: &Ui, manifest: &Path, source: &Source) -> Result<Side, Failure> {
    let text = input::read_manifest(manifest, source.max_bytes).map_err(fatal)?;
    let options = source.options(manifest, &mut Vec::new())?;
    analysed(ui, &manifest.display().to_string(), text, &options)
}

/// A side from manifest text: its analysis, or exit 2 with its findings on stderr when
/// it does not validate (there is no connector to compare).
fn analysed(
    ui: &Ui,
    name: &str,
    text: String,
    options: &connectorgen_core::Options,
) -> Result<Side, Failure> {
    let text = Arc::new(text);
    let analysis =
        analyze_with(name, text.clone(), options).map_err(|e| Failure::Template(Box::new(e)))?;
    Side::new(name, text, analysis).map_err(|diagnostics| {
        ui.err(&connectorgen_core::report::human_findings(
            &diagnostics,
            ui.colored(&std::io::stderr()),
        ));
        Failure::Fatal(format!(
            "{name} is not a valid manifest, so there is nothing to compare; `connectorgen check` shows why"
        ))
    })
}
