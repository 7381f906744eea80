//! `build` (without `--watch`) and `check`: the manifest's outputs written, or compared
//! with what is on disk.
//!
//! Takes the parsed command line from main.rs (`Ui`, `Common`, `--force` or `--format`).
//! `build` reports the findings on stderr and, unless they block (errors, or warnings
//! under `--deny-warnings`), writes every output at once and returns exit 0; blocked, it
//! writes nothing and returns 1. `check` prints its report on stdout and returns 1 on
//! errors, drift or denied warnings. Either returns `Failure` when it could not run
//! (exit 2) or a template failed (exit 1); the exit code itself is main.rs's to give.
//! `write_outputs` is also each rebuild of `build --watch` (watch.rs).
//!
//! Must never write an output over a file the build read (the manifest, its document,
//! its templates), never write part of a set of outputs, and never write at all from
//! `check`.

use std::path::PathBuf;
use std::process::ExitCode;

use connectorgen_core::diagnostics::Severity;
use connectorgen_core::report::{Format, Report};
use connectorgen_core::{Analysis, Input, check, output, render};

use crate::{Common, Failure, Ui, fatal, shown};

pub(crate) fn build(ui: &Ui, common: &Common, force: bool) -> Result<ExitCode, Failure> {
    let mut inputs = Vec::new();
    let analysis = common
        .source
        .analyze_reading(&common.manifest, &mut inputs, true)?;
    let code = write_outputs(ui, common, &analysis, &inputs, force);
    exit_without_freeing(analysis);
    code
}

/// The process is about to exit, and freeing a large manifest's trees one node at a
/// time costs more than the OS reclaiming the pages at once (about 100 ms at 10,000
/// operations; docs/dev/PERFORMANCE-diary.md). Never used by `--watch`, which keeps running.
fn exit_without_freeing(analysis: Analysis) {
    std::mem::forget(analysis);
}

/// Reports the findings and, unless they block, writes the outputs, never over one of
/// the `inputs` the analysis read.
pub(crate) fn write_outputs(
    ui: &Ui,
    common: &Common,
    analysis: &Analysis,
    inputs: &[Input],
    force: bool,
) -> Result<ExitCode, Failure> {
    let diagnostics = &analysis.diagnostics;
    let errors = diagnostics.count(Severity::Error);
    let warnings = diagnostics.count(Severity::Warning);
    if errors > 0 || (warnings > 0 && (!ui.quiet || common.deny_warnings)) {
        ui.err(&connectorgen_core::report::human_findings(
            diagnostics,
            ui.colored(&std::io::stderr()),
        ));
    }
    let blocked = errors > 0 || (common.deny_warnings && warnings > 0);
    let outputs = match &analysis.outputs {
        Some(outputs) if !blocked => outputs,
        _ => {
            let summary = Report {
                diagnostics,
                drift: &[],
                fix: String::new(),
            }
            .summary();
            let why = if errors == 0 {
                " (--deny-warnings)"
            } else {
                ""
            };
            ui.err(&format!(
                "error: {summary} in {}{why}; nothing was written\n",
                shown(&common.manifest)
            ));
            return Ok(ExitCode::from(1));
        }
    };
    let out = common.out_dir();
    let spared: Vec<(PathBuf, &str)> = inputs
        .iter()
        .flat_map(|input| input.files().into_iter().map(|f| (f, input.what())))
        .collect();
    let owner = output::Owner {
        manifest: &common.manifest,
        force,
    };
    // openapi.json, when the analysis left it out of `outputs`, is written from the model
    // into its temporary file as it is made.
    let write = analysis
        .streamed
        .as_ref()
        .zip(analysis.connector.as_ref())
        .map(|(streamed, connector)| {
            move |w: &mut dyn std::io::Write| streamed.write(connector, w)
        });
    let streamed: Vec<output::Stream> = write
        .as_ref()
        .map(|write| output::Stream {
            name: render::Streamed::NAME,
            write,
        })
        .into_iter()
        .collect();
    output::write_all_streaming(&out, outputs, &streamed, &spared, Some(&owner)).map_err(fatal)?;
    let names = output::names(outputs, &streamed);
    ui.note(&format!("wrote {} to {}\n", names.join(", "), shown(&out)));
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn run_check(ui: &Ui, common: &Common, format: Format) -> Result<ExitCode, Failure> {
    let analysis = common.source.analyze(&common.manifest)?;
    let drift = match &analysis.outputs {
        Some(outputs) => check::drift(&common.out_dir(), outputs).map_err(fatal)?,
        None => Vec::new(),
    };
    let warnings = analysis.diagnostics.count(Severity::Warning);
    let failed =
        analysis.has_errors() || !drift.is_empty() || (common.deny_warnings && warnings > 0);
    let report = Report {
        diagnostics: &analysis.diagnostics,
        drift: &drift,
        fix: common.build_command(),
    };
    // Machine formats are the product and are always printed; the human report is
    // silent under --quiet when there is nothing that fails.
    if format != Format::Human || !ui.quiet || failed {
        ui.out(&report.render(format, ui.colored(&std::io::stdout())));
    }
    drop(report);
    exit_without_freeing(analysis);
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
