//! `explain`: what the model reads about one operation (`explain OP`), the operations
//! (`--list`), each MCP tool's size (`--list --stats`), or what a rule means
//! (`--rule CODE`).
//!
//! Takes the parsed command line from main.rs (`Ui`, the operation and manifest
//! positionals, the flags, the shared `Source`). Prints the text on stdout and returns
//! exit 0; an unknown operation or rule is one line on stderr and exit 1, a manifest with
//! errors its findings on stderr and exit 1, a manifest that cannot be read
//! `Failure::Fatal` (exit 2). The exit code itself is main.rs's to give.
//!
//! Must never write a file: it reads the manifest as `build` does and only prints.

use std::path::PathBuf;
use std::process::ExitCode;

use connectorgen_core::{explain, terminal};

use crate::{Failure, Source, Ui};

pub(crate) fn explain_rule(ui: &Ui, code: &str) -> ExitCode {
    match connectorgen_core::rules::explain(code) {
        Ok(text) => {
            ui.out(&text);
            ExitCode::SUCCESS
        }
        Err(message) => {
            ui.err(&format!("error: {}\n", terminal::one_line(&message)));
            ExitCode::from(1)
        }
    }
}

pub(crate) fn run_explain(
    ui: &Ui,
    operation: Option<String>,
    manifest: Option<PathBuf>,
    list: bool,
    stats: bool,
    source: &Source,
) -> Result<ExitCode, Failure> {
    // With --list, a lone positional is the manifest.
    let (operation, manifest) = match (list, operation, manifest) {
        (true, Some(op), None) => (None, Some(PathBuf::from(op))),
        (_, op, m) => (op, m),
    };
    let manifest = manifest.unwrap_or_else(|| PathBuf::from(crate::cli::DEFAULT_MANIFEST));
    let analysis = source.analyze(&manifest)?;
    let (Some(connector), Some(outputs)) = (&analysis.connector, &analysis.outputs) else {
        ui.err(&connectorgen_core::report::human_findings(
            &analysis.diagnostics,
            ui.colored(&std::io::stderr()),
        ));
        return Ok(ExitCode::from(1));
    };
    if stats {
        return match explain::stats(connector, outputs) {
            Ok(text) => {
                ui.out(&text);
                Ok(ExitCode::SUCCESS)
            }
            Err(message) => {
                ui.err(&format!("error: {message}\n"));
                Ok(ExitCode::from(1))
            }
        };
    }
    if list {
        ui.out(&explain::list(connector));
        return Ok(ExitCode::SUCCESS);
    }
    match explain::explain(
        connector,
        outputs,
        &analysis.served_descriptions,
        operation.as_deref().unwrap_or_default(),
    ) {
        Ok(text) => {
            ui.out(&text);
            Ok(ExitCode::SUCCESS)
        }
        Err(message) => {
            ui.err(&format!("error: {}\n", terminal::one_line(&message)));
            Ok(ExitCode::from(1))
        }
    }
}
