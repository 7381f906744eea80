//! `serve` and `probe`: the two commands that run the manifest against a live provider.
//!
//! Takes the parsed command line from main.rs (`Ui`, the manifest, `--max-bytes`,
//! `--allow-read`, and the `serve::Config` or `probe::Config` main.rs built from the
//! flags). Both analyse the manifest for the mcp target alone; with errors they print
//! the findings and return exit 1 without starting anything. `serve` returns 0 when the
//! server ends and `Failure::Fatal` (exit 2) when it cannot run; `probe` prints its
//! report on stdout in the chosen format and returns 1 when a check failed. The exit code
//! itself is main.rs's to give.
//!
//! Must never send a request itself, nor read the manifest any other way than
//! `Source::analyze`: what reaches the provider is the library's (`connectorgen_runtime::serve`,
//! `connectorgen_runtime::probe`) to decide.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use connectorgen_core::Analysis;
use connectorgen_core::model::Target;
use connectorgen_core::report::Format;

use crate::{Failure, Source, Ui};

/// The manifest analysed for the mcp target alone, as `serve` and `probe` use it; `None`
/// when it has errors, which are printed.
fn runtime_analysis(
    ui: &Ui,
    manifest: &Path,
    max_bytes: u64,
    allow_read: Vec<PathBuf>,
) -> Result<Option<Analysis>, Failure> {
    let source = Source {
        max_bytes,
        targets: vec![Target::Mcp],
        templates: None,
        template_fuel: None,
        max_template_output: None,
        max_alias_expansion: None,
        allow_read,
    };
    let analysis = source.analyze(manifest)?;
    if analysis.has_errors() {
        ui.err(&connectorgen_core::report::human_findings(
            &analysis.diagnostics,
            ui.colored(&std::io::stderr()),
        ));
        return Ok(None);
    }
    Ok(Some(analysis))
}

pub(crate) fn run_serve(
    ui: &Ui,
    manifest: &Path,
    max_bytes: u64,
    allow_read: Vec<PathBuf>,
    config: &connectorgen_runtime::serve::Config,
) -> Result<ExitCode, Failure> {
    let Some(analysis) = runtime_analysis(ui, manifest, max_bytes, allow_read)? else {
        return Ok(ExitCode::from(1));
    };
    connectorgen_runtime::serve::run(&analysis, config).map_err(Failure::Fatal)?;
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn run_probe(
    ui: &Ui,
    manifest: &Path,
    max_bytes: u64,
    allow_read: Vec<PathBuf>,
    config: &connectorgen_runtime::probe::Config,
    format: Format,
) -> Result<ExitCode, Failure> {
    let Some(analysis) = runtime_analysis(ui, manifest, max_bytes, allow_read)? else {
        return Ok(ExitCode::from(1));
    };
    let report = connectorgen_runtime::probe::run(&analysis, config).map_err(Failure::Fatal)?;
    let text = connectorgen_runtime::probe::report::ProbeText {
        report: &report,
        manifest_name: analysis.diagnostics.name(),
        manifest_text: analysis.diagnostics.text(),
    };
    ui.out(&text.render(format));
    Ok(if report.failed() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
