//! `init` and `import`: the two commands that write a manifest rather than read one.
//!
//! Takes the parsed command line from main.rs (`Ui`, the file to write, `--force`, and
//! `init`'s `--name` or `import`'s document, `--max-bytes` and `import::Flags`). Writes
//! the manifest, prints one success line with the next step (silenced by `--quiet`) and
//! returns exit 0. `import` returns 1, with the findings or one line on stderr, when the
//! OpenAPI document itself has the problem, and `Failure::Fatal` (exit 2) when it could
//! not run, as `init` does; the exit code itself is main.rs's to give.
//!
//! Must never replace an existing file without `--force`: the library's `init::write`
//! and `import::run` write, and this module only reports what they did.

use std::path::Path;
use std::process::ExitCode;

use connectorgen_core::{import, init, terminal};

use crate::{Failure, Ui, fatal, shown};

pub(crate) fn run_init(ui: &Ui, file: &Path, name: &str, force: bool) -> Result<ExitCode, Failure> {
    init::write(file, name, force).map_err(fatal)?;
    ui.note(&format!(
        "wrote {}\nnext: edit it, then `connectorgen build {}`; for editor completion run \
         `connectorgen schema > connector.schema.json` beside it (the manifest's first line, \
         `# yaml-language-server: $schema=connector.schema.json`, points editors at it)\n",
        shown(file),
        shown(file)
    ));
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn run_import(
    ui: &Ui,
    spec: &Path,
    output: &Path,
    force: bool,
    max_bytes: u64,
    flags: &import::Flags,
) -> Result<ExitCode, Failure> {
    match import::run(spec, output, force, max_bytes, flags) {
        Ok(done) => {
            let mut build = format!("connectorgen build {}", shown(output));
            if let Some(dir) = &done.allow_read {
                build.push_str(&format!(" --allow-read {}", shown(dir)));
            }
            ui.note(&format!(
                "wrote {}: {} from {} ({} skipped); suggestions to review: {} async, {} paid, {} DELETE\n\
                 next: decide on the suggestions (commented-out keys whose value ends in `?`), remove what the agent should not call, \
                 then `{build}`\n",
                shown(output),
                connectorgen_core::english::plural(done.listed, "operation", "operations"),
                shown(spec),
                done.skipped,
                done.async_candidates,
                done.paid_candidates,
                done.deletes,
            ));
            Ok(ExitCode::SUCCESS)
        }
        Err(import::ImportError::Invalid(diagnostics)) => {
            ui.err(&connectorgen_core::report::human_findings(
                &diagnostics,
                ui.colored(&std::io::stderr()),
            ));
            Ok(ExitCode::from(1))
        }
        Err(e) if e.exit_code() == 1 => {
            ui.err(&format!("error: {}\n", terminal::one_line(&e.to_string())));
            Ok(ExitCode::from(1))
        }
        Err(e) => Err(fatal(e)),
    }
}
