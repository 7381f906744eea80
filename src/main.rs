//! The `connectorgen` command line: subcommands, what goes to stdout or stderr, and exit
//! codes. The grammar is `cli`, the streams `ui`; each command's handler is a module
//! beside this file (source, build, watch, `explain_cmd`, `init_import`, `diff_cmd`,
//! `serve_probe`); everything else lives in the library crates. This file only parses and
//! dispatches.
//!
//! Exit codes: 0 ok; 1 errors, denied warnings or (for `check`) drift — `build` then
//! writes nothing; 2 could not run (usage, unreadable manifest, unwritable output folder,
//! an output that is an input of the build, or stdout could not be written). A closed
//! stdout (`connectorgen … | head -1`) ends the printing quietly and leaves the exit
//! code as it was.
//! `import` follows the same split: 1 when the OpenAPI document itself has the problem
//! (not OpenAPI 3.0/3.1/3.2, does not parse, nothing an agent can call), 2 when it could not
//! run (unreadable document, an output it must not replace, a URL only a flag can give).

use std::process::ExitCode;

use clap::{CommandFactory as _, Parser as _};
use connectorgen_core::{import, templates, terminal};

mod build;
mod cli;
mod diff_cmd;
mod explain_cmd;
mod init_import;
mod serve_probe;
mod source;
mod ui;
mod watch;

use cli::{Cli, Command, Common, Source, TemplatesCommand};
use ui::{Failure, Ui, clap_exit, fatal, render_template_error, shown};

/// The system allocator, with the bound on what one template render may hold: the
/// template engine copies a list doubled by `+` before its fuel is charged
/// (connectorgen-core's render/memory.rs).
#[global_allocator]
static ALLOC: connectorgen_core::render::memory::BoundedAlloc =
    connectorgen_core::render::memory::BoundedAlloc;

/// glibc gives an allocation of 128 KiB or more its own mapping, returned to the system
/// when freed; but after a mapped block is freed it raises that threshold to the block's
/// size (up to 32 MiB), so that later the large buffers a build grows by doubling (the
/// outputs as they render, the model's lists) are made in the heap, where each copy
/// leaves a hole the size of the last. Kept at its default, a build at 10,000
/// operations peaks 5 MB lower, for no more CPU time (docs/dev/PERFORMANCE-diary.md,
/// "Round nine").
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn fixed_mmap_threshold() {
    // SAFETY: sets one parameter of the allocator, before the program has allocated
    // anything of its own or started a thread.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
    }
}

fn main() -> ExitCode {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    fixed_mmap_threshold();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return clap_exit(e),
    };
    let ui = Ui::new(cli.quiet, cli.color);
    let result = match cli.command {
        Command::Build {
            common,
            watch,
            force,
        } if watch => watch::watch_build(&ui, &common, force),
        Command::Build { common, force, .. } => build::build(&ui, &common, force),
        Command::Check { common, format } => build::run_check(&ui, &common, format),
        Command::Diff(args) => diff_cmd::run(&ui, &args),
        Command::Explain {
            rule: Some(code), ..
        } => Ok(explain_cmd::explain_rule(&ui, &code)),
        Command::Explain {
            operation,
            manifest,
            list,
            stats,
            source,
            ..
        } => explain_cmd::run_explain(&ui, operation, manifest, list, stats, &source),
        Command::Init { name, file, force } => init_import::run_init(&ui, &file, &name, force),
        Command::Import {
            spec,
            output,
            force,
            dashboard_url,
            public_url,
            max_bytes,
        } => {
            let flags = import::Flags {
                dashboard_url,
                public_url,
            };
            init_import::run_import(&ui, &spec, &output, force, max_bytes, &flags)
        }
        Command::Serve(args) => serve_probe::run_serve(&ui, args),
        Command::Probe(args) => serve_probe::run_probe(&ui, args),
        Command::Schema => {
            ui.out(&connectorgen_core::schema::manifest_schema());
            Ok(ExitCode::SUCCESS)
        }
        Command::Templates(TemplatesCommand::Export { dir, force }) => {
            templates::export(&dir, force)
                .map(|paths| {
                    for p in paths {
                        ui.note(&format!("wrote {}\n", shown(&p)));
                    }
                    ExitCode::SUCCESS
                })
                .map_err(fatal)
        }
        Command::Completions { shell } => {
            let mut buf = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "connectorgen", &mut buf);
            ui.out(&String::from_utf8_lossy(&buf));
            Ok(ExitCode::SUCCESS)
        }
    };
    let code = match result {
        Ok(code) => code,
        Err(Failure::Fatal(message)) => {
            ui.err(&format!("error: {}\n", terminal::one_line(&message)));
            ExitCode::from(2)
        }
        Err(Failure::Template(e)) => {
            ui.err(&render_template_error(&e, ui.colored(&std::io::stderr())));
            ExitCode::from(1)
        }
    };
    ui.exit(code)
}
