//! What the commands write and how: stdout and stderr through one `Ui` (quiet, colour, a
//! failed or closed stdout), the `Failure` a command stops with, and clap's own output.
//! Takes: the global flags. Returns: text on the two streams, and the exit code a failed
//! stdout turns a run into.

use std::cell::RefCell;
use std::io::{IsTerminal, Write as _};
use std::path::Path;
use std::process::ExitCode;

use connectorgen_core::terminal;

use crate::cli::ColorWhen;

/// Why a command stopped early.
pub(crate) enum Failure {
    /// Could not run at all (exit 2): one line.
    Fatal(String),
    /// A template failed (exit 1): shown at the template's own line.
    Template(Box<connectorgen_core::render::RenderError>),
}

pub(crate) fn fatal(e: impl std::fmt::Display) -> Failure {
    Failure::Fatal(e.to_string())
}

/// Where output goes and how it looks, from the global flags.
pub(crate) struct Ui {
    pub(crate) quiet: bool,
    color: ColorWhen,
    /// How writing to stdout went: once it failed, nothing more is written there.
    stdout: RefCell<Stdout>,
}

enum Stdout {
    Open,
    /// The reader went away (`connectorgen … | head -1`): not an error of ours.
    Closed,
    /// A write failed (a full disk, `> /dev/full`): the run ends with exit code 2.
    Failed(std::io::Error),
}

impl Ui {
    pub(crate) fn new(quiet: bool, color: ColorWhen) -> Ui {
        Ui {
            quiet,
            color,
            stdout: RefCell::new(Stdout::Open),
        }
    }

    pub(crate) fn colored(&self, stream: &impl IsTerminal) -> bool {
        match self.color {
            ColorWhen::Always => true,
            ColorWhen::Never => false,
            ColorWhen::Auto => stream.is_terminal() && std::env::var_os("NO_COLOR").is_none(),
        }
    }

    /// Writes and flushes at once: a write error must be seen here, not lost when the
    /// buffer is flushed at exit.
    pub(crate) fn out(&self, text: &str) {
        let mut state = self.stdout.borrow_mut();
        if !matches!(*state, Stdout::Open) {
            return;
        }
        let mut stdout = std::io::stdout().lock();
        if let Err(e) = stdout
            .write_all(text.as_bytes())
            .and_then(|()| stdout.flush())
        {
            *state = match e.kind() {
                std::io::ErrorKind::BrokenPipe => Stdout::Closed,
                _ => Stdout::Failed(e),
            };
        }
    }

    /// Nothing is left to tell when stderr itself cannot be written.
    #[expect(
        clippy::unused_self,
        reason = "a method beside `out`, so every write goes through the Ui"
    )]
    pub(crate) fn err(&self, text: &str) {
        let _ = std::io::stderr().write_all(text.as_bytes());
    }

    /// Success lines and other chatter, which `--quiet` silences.
    pub(crate) fn note(&self, text: &str) {
        if !self.quiet {
            self.out(text);
        }
    }

    /// The exit code of a run that would end with `code`: 2, with one line saying why,
    /// when stdout could not be written.
    pub(crate) fn exit(&self, code: ExitCode) -> ExitCode {
        match &*self.stdout.borrow() {
            Stdout::Failed(e) => {
                self.err(&format!("error: could not write to stdout: {e}\n"));
                ExitCode::from(2)
            }
            Stdout::Open | Stdout::Closed => code,
        }
    }
}

/// `--help`, `--version` (stdout, exit 0) and usage errors (stderr, exit 2), written
/// through `Ui` so that a failed write is reported as for every other command.
pub(crate) fn clap_exit(e: clap::Error) -> ExitCode {
    let ui = Ui::new(false, ColorWhen::Auto);
    let code = ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2));
    let text = e.render();
    if e.use_stderr() {
        let colored = ui.colored(&std::io::stderr());
        ui.err(&if colored {
            text.ansi().to_string()
        } else {
            text.to_string()
        });
        code
    } else {
        let colored = ui.colored(&std::io::stdout());
        ui.out(&if colored {
            text.ansi().to_string()
        } else {
            text.to_string()
        });
        ui.exit(code)
    }
}

pub(crate) fn render_template_error(
    e: &connectorgen_core::render::RenderError,
    color: bool,
) -> String {
    connectorgen_core::report::template_error(e, color)
}

/// A path for a success line: escaped as error lines are, so that a file name cannot
/// send a terminal sequence (or a CI workflow command on a line of its own).
pub(crate) fn shown(path: &Path) -> String {
    terminal::one_line(&path.display().to_string()).into_owned()
}
