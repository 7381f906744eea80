//! The `connectorgen` command line: subcommands, what goes to stdout or stderr, and exit
//! codes. Each command's handler is a module beside this file (source, build, watch,
//! `explain_cmd`, `init_import`, `serve_probe`); everything else lives in the library.
//!
//! Exit codes: 0 ok; 1 errors, denied warnings or (for `check`) drift — `build` then
//! writes nothing; 2 could not run (usage, unreadable manifest, unwritable output folder,
//! an output that is an input of the build, or stdout could not be written). A closed
//! stdout (`connectorgen … | head -1`) ends the printing quietly and leaves the exit
//! code as it was.
//! `import` follows the same split: 1 when the OpenAPI document itself has the problem
//! (not OpenAPI 3.0/3.1/3.2, does not parse, nothing an agent can call), 2 when it could not
//! run (unreadable document, an output it must not replace, a URL only a flag can give).

use std::cell::RefCell;
use std::io::{IsTerminal, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, CommandFactory, Parser, Subcommand, ValueEnum};
use connectorgen_core::model::Names as _;
use connectorgen_core::model::Target;
use connectorgen_core::report::Format;
use connectorgen_core::{import, input, templates, terminal};

mod build;
mod diff_cmd;
mod explain_cmd;
mod init_import;
mod serve_probe;
mod source;
mod watch;

/// The system allocator, with the bound on what one template render may hold: the
/// template engine copies a list doubled by `+` before its fuel is charged
/// (connectorgen-core's render/memory.rs).
#[global_allocator]
static ALLOC: connectorgen_core::render::memory::BoundedAlloc =
    connectorgen_core::render::memory::BoundedAlloc;

/// `0.1.0 (0123456789ab)` when built from a git checkout, else `0.1.0` (build.rs).
const VERSION: &str = env!("CONNECTORGEN_VERSION");

#[derive(Parser)]
#[command(
    name = "connectorgen",
    version = VERSION,
    about = "Generate openapi.json, llms.txt and model-facing descriptions for an AI-agent connector from one YAML manifest",
    after_help = "Examples:\n  connectorgen init --name VidGen\n  connectorgen import specs/openapi.json\n  connectorgen build\n  connectorgen check --format github\n  connectorgen explain createVideo\n\n\
Exit codes: 0 ok; 1 errors, denied warnings or (check) drift; 2 could not run (usage, unreadable file, unwritable folder)."
)]
struct Cli {
    /// Print only errors (and, for check, drift): no success lines, no warnings
    #[arg(short, long, global = true)]
    quiet: bool,
    /// When to colour diagnostics and diffs (NO_COLOR turns `auto` off)
    #[expect(clippy::doc_markdown, reason = "the --help text, shown as written")]
    #[arg(long, value_enum, global = true, default_value_t = ColorWhen::Auto, value_name = "WHEN")]
    color: ColorWhen,
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ColorWhen {
    Auto,
    Always,
    Never,
}

#[derive(Subcommand)]
enum Command {
    /// Validate a manifest and write the generated files of its targets
    #[command(
        after_help = "Warnings are printed but do not block unless --deny-warnings.\n\n\
Examples:\n  connectorgen build\n  connectorgen build examples/manifests/video.yaml\n  connectorgen build connector.yaml --out public/ --target muse,mcp\n  connectorgen build --watch\n\n\
Exit codes: 0 written; 1 errors (or warnings with --deny-warnings), nothing written; 2 could not run \
(the output folder holds another manifest's outputs: use --out, or --force)."
    )]
    Build {
        #[command(flatten)]
        common: Common,
        /// Keep running: rebuild whenever the manifest or the templates folder changes
        #[arg(long)]
        watch: bool,
        /// Write into an output folder that holds another manifest's outputs (it becomes this manifest's)
        #[arg(long)]
        force: bool,
    },
    /// Check a manifest in CI: validation, safety lints and drift of the generated files; writes nothing
    #[command(
        after_help = "Examples:\n  connectorgen check\n  connectorgen check connector.yaml --format github\n  connectorgen check --format sarif > connectorgen.sarif\n  connectorgen check --deny-warnings\n\n\
Exit codes: 0 clean (warnings allowed unless --deny-warnings); 1 errors, denied warnings or drift; 2 could not run."
    )]
    Check {
        #[command(flatten)]
        common: Common,
        /// Output format
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
    },
    /// Compare two versions of a manifest: what the change does to what the model is told
    #[command(
        after_help = "Examples:\n  connectorgen diff old.yaml connector.yaml\n  connectorgen diff --base main\n  connectorgen diff --base origin/main connectors/vidgen.yaml --format markdown\n\n\
Exit codes: 0 no finding at or above the threshold (errors; warnings too with --deny-warnings); 1 findings; 2 could not run \
(a manifest unreadable or invalid, a revision git does not know)."
    )]
    Diff(diff_cmd::DiffArgs),
    /// Show exactly what each target's model reads about one operation
    #[command(
        after_help = "Examples:\n  connectorgen explain createVideo\n  connectorgen explain createVideo examples/manifests/video.yaml --target mcp,openai\n  connectorgen explain --list\n  connectorgen explain --list --stats --target mcp\n  connectorgen explain --rule missing-limit\n\n\
Exit codes: 0 shown; 1 the manifest has errors, or the operation or rule does not exist; 2 could not run."
    )]
    Explain {
        /// The operation id (with --list: may be left out)
        #[arg(required_unless_present_any = ["list", "rule"])]
        operation: Option<String>,
        /// The manifest to read [default: connector.yaml]
        manifest: Option<PathBuf>,
        /// List the operations with their flags instead
        #[arg(long)]
        list: bool,
        /// With --list: each MCP tool's size in bytes (and about how many tokens) and its
        /// heaviest parts, instead of the flags
        #[arg(long, requires = "list")]
        stats: bool,
        /// Explain a rule (an error code or a lint id) instead: what it checks and why
        #[arg(long, value_name = "CODE", conflicts_with_all = ["operation", "manifest", "list"])]
        rule: Option<String>,
        #[command(flatten)]
        source: Source,
    },
    /// Write a commented starter manifest
    #[command(
        after_help = "Examples:\n  connectorgen init\n  connectorgen init --name VidGen connectors/vidgen.yaml\n\n\
Exit codes: 0 written; 2 the file exists (use --force) or could not be written."
    )]
    Init {
        /// The service's name
        #[arg(long, default_value = "Example")]
        name: String,
        /// Where to write it
        #[arg(default_value = "connector.yaml")]
        file: PathBuf,
        /// Overwrite an existing file
        #[arg(long)]
        force: bool,
    },
    /// Write a manifest that builds on a provider's OpenAPI document, listing every operation
    #[command(
        after_help = "Every operation of SPEC is listed in document order, named by operationId (else by \
\"METHOD /path\"), with `openapi:` pointing at SPEC from the manifest's folder. Suggestions \
(async and its poll target, spends, the retry key the document declares, DELETE) are comments: none is applied.\n\n\
Examples:\n  connectorgen import specs/openapi.json\n  connectorgen import specs/api.yaml --out connectors/api.yaml --dashboard-url https://example.com/account/keys\n  connectorgen import specs/openapi.json --force\n\n\
Exit codes: 0 written; 1 SPEC is not an OpenAPI 3.0/3.1/3.2 document (the diagnostic points into it) or has no operation \
an agent can call; 2 could not run (unreadable SPEC, the output exists (use --force) or is a symlink, a URL the \
document lacks and no flag gives, unwritable output)."
    )]
    Import {
        /// The provider's OpenAPI document: JSON or YAML, OpenAPI 3.0, 3.1 or 3.2
        spec: PathBuf,
        /// Where to write the manifest (`--out`, as on build and check; `--output` is the
        /// older spelling)
        #[arg(
            short = 'o',
            long = "out",
            visible_alias = "output",
            value_name = "FILE",
            default_value = "connector.yaml"
        )]
        output: PathBuf,
        /// Overwrite an existing file
        #[arg(long)]
        force: bool,
        /// The page where the person creates API keys [default: the document's info.contact.url or externalDocs.url]
        #[arg(long, value_name = "URL")]
        dashboard_url: Option<String>,
        /// The API's base URL, when the document's first server is not a usable https URL
        #[arg(long, value_name = "URL")]
        public_url: Option<String>,
        /// Refuse a larger SPEC, checked before reading (K, M, G suffixes: powers of 1024)
        #[arg(long, value_name = "BYTES", default_value = "128M", value_parser = input::parse_size)]
        max_bytes: u64,
    },
    /// Run the connector as an MCP server that enforces consent, retry keys and one job per request
    #[cfg(feature = "runtime")]
    Serve(serve_probe::ServeArgs),
    /// Check against a sandbox that the provider keeps the promises the manifest makes
    #[cfg(feature = "runtime")]
    Probe(serve_probe::ProbeArgs),
    /// Not in this build: connectorgen was installed without its runtime
    #[cfg(not(feature = "runtime"))]
    #[command(hide = true, disable_help_flag = true)]
    Serve(serve_probe::Absent),
    /// Not in this build: connectorgen was installed without its runtime
    #[cfg(not(feature = "runtime"))]
    #[command(hide = true, disable_help_flag = true)]
    Probe(serve_probe::Absent),
    /// Print the JSON Schema of the manifest (for editors: see docs/editors.md)
    #[command(
        after_help = "Examples:\n  connectorgen schema > connector.schema.json\n\nExit codes: 0 printed."
    )]
    Schema,
    /// Work with the prose templates
    #[command(subcommand)]
    Templates(TemplatesCommand),
    /// Print a shell completion script
    #[command(
        after_help = "Examples:\n  connectorgen completions bash > ~/.local/share/bash-completion/completions/connectorgen\n  connectorgen completions zsh > ~/.zfunc/_connectorgen\n  connectorgen completions fish > ~/.config/fish/completions/connectorgen.fish\n\n\
Exit codes: 0 printed; 2 unknown shell."
    )]
    Completions {
        /// bash, zsh, fish, powershell or elvish
        shell: clap_complete::Shell,
    },
}

#[derive(Subcommand)]
enum TemplatesCommand {
    /// Write the default templates into DIR as a starting point for --templates
    #[command(
        after_help = "Examples:\n  connectorgen templates export templates/\n\n\
Exit codes: 0 written; 2 a file exists (use --force) or could not be written."
    )]
    Export {
        /// The folder to write into (created if missing)
        dir: PathBuf,
        /// Overwrite existing files
        #[arg(long)]
        force: bool,
    },
}

/// How to read the manifest and render it (shared by build, check and explain).
#[derive(Args)]
struct Source {
    /// Refuse a manifest larger than this, checked before reading (K, M, G suffixes: powers of 1024)
    #[arg(long, value_name = "BYTES", default_value = "128M", value_parser = input::parse_size)]
    max_bytes: u64,
    /// Targets to produce instead of the manifest's `targets:` (repeat or comma-separate)
    #[arg(
        long = "target",
        value_enum,
        value_delimiter = ',',
        value_name = "TARGET"
    )]
    targets: Vec<Target>,
    /// A folder of templates overriding the embedded ones (replaces the manifest's `templates:`)
    #[arg(long, value_name = "DIR")]
    templates: Option<PathBuf>,
    /// Work and memory budget of all template rendering in this run [default: 4000000 + 1 per 2 manifest bytes]
    #[arg(long, value_name = "N")]
    template_fuel: Option<u64>,
    /// Refuse a rendered file or description larger than this (K, M, G suffixes) [default: 256M]
    #[arg(long, value_name = "BYTES", value_parser = input::parse_size)]
    max_template_output: Option<u64>,
    /// Parser events that YAML aliases may expand to in all [default: a quarter of the file size, at least 100000]
    #[arg(long, value_name = "N")]
    max_alias_expansion: Option<usize>,
    /// Let the manifest name files in DIR too (its `openapi:` document, its `templates:`), besides its own folder (repeatable)
    #[arg(long, value_name = "DIR")]
    allow_read: Vec<PathBuf>,
}

#[derive(Args)]
struct Common {
    /// The manifest to read
    #[arg(default_value = "connector.yaml")]
    manifest: PathBuf,
    /// Output folder [default: `generated/` beside the manifest]
    #[arg(short = 'o', long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Treat warnings as errors
    #[arg(long)]
    deny_warnings: bool,
    #[command(flatten)]
    source: Source,
}

impl Common {
    fn out_dir(&self) -> PathBuf {
        self.out
            .clone()
            .unwrap_or_else(|| default_out(&self.manifest))
    }

    /// The command that regenerates the outputs this run looked at.
    fn build_command(&self) -> String {
        let mut cmd = format!("connectorgen build {}", self.manifest.display());
        if let Some(out) = &self.out {
            cmd.push_str(&format!(" --out {}", out.display()));
        }
        if !self.source.targets.is_empty() {
            let names: Vec<&str> = self.source.targets.iter().map(|t| t.as_str()).collect();
            cmd.push_str(&format!(" --target {}", names.join(",")));
        }
        if let Some(dir) = &self.source.templates {
            cmd.push_str(&format!(" --templates {}", dir.display()));
        }
        if let Some(fuel) = self.source.template_fuel {
            cmd.push_str(&format!(" --template-fuel {fuel}"));
        }
        if let Some(max) = self.source.max_template_output {
            cmd.push_str(&format!(" --max-template-output {max}"));
        }
        for dir in &self.source.allow_read {
            cmd.push_str(&format!(" --allow-read {}", dir.display()));
        }
        cmd
    }
}

/// Why a command stopped early.
enum Failure {
    /// Could not run at all (exit 2): one line.
    Fatal(String),
    /// A template failed (exit 1): shown at the template's own line.
    Template(Box<connectorgen_core::render::RenderError>),
}

fn fatal(e: impl std::fmt::Display) -> Failure {
    Failure::Fatal(e.to_string())
}

/// Where output goes and how it looks, from the global flags.
struct Ui {
    quiet: bool,
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
    fn new(quiet: bool, color: ColorWhen) -> Ui {
        Ui {
            quiet,
            color,
            stdout: RefCell::new(Stdout::Open),
        }
    }

    fn colored(&self, stream: &impl IsTerminal) -> bool {
        match self.color {
            ColorWhen::Always => true,
            ColorWhen::Never => false,
            ColorWhen::Auto => stream.is_terminal() && std::env::var_os("NO_COLOR").is_none(),
        }
    }

    /// Writes and flushes at once: a write error must be seen here, not lost when the
    /// buffer is flushed at exit.
    fn out(&self, text: &str) {
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
    fn err(&self, text: &str) {
        let _ = std::io::stderr().write_all(text.as_bytes());
    }

    /// Success lines and other chatter, which `--quiet` silences.
    fn note(&self, text: &str) {
        if !self.quiet {
            self.out(text);
        }
    }

    /// The exit code of a run that would end with `code`: 2, with one line saying why,
    /// when stdout could not be written.
    fn exit(&self, code: ExitCode) -> ExitCode {
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
fn clap_exit(e: clap::Error) -> ExitCode {
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

fn main() -> ExitCode {
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

fn render_template_error(e: &connectorgen_core::render::RenderError, color: bool) -> String {
    connectorgen_core::report::template_error(e, color)
}

/// A path for a success line: escaped as error lines are, so that a file name cannot
/// send a terminal sequence (or a CI workflow command on a line of its own).
fn shown(path: &Path) -> String {
    terminal::one_line(&path.display().to_string()).into_owned()
}

/// `generated/` beside the manifest.
fn default_out(manifest: &Path) -> PathBuf {
    match manifest.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.join("generated"),
        _ => PathBuf::from("generated"),
    }
}
