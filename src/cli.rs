//! The command line's grammar: every subcommand, flag and default as clap parses them, and
//! the few helpers that read the parsed values (`Common::out_dir`, `build_command`).
//! Takes: the process's arguments (through clap in main.rs). Returns: `Cli`. The help text
//! here is what `--help` prints and what docs/cli.md is generated from.

use std::path::{Path, PathBuf};

use clap::{Args, Parser, Subcommand, ValueEnum};
use connectorgen_core::input;
use connectorgen_core::model::Names as _;
use connectorgen_core::model::Target;
use connectorgen_core::report::Format;

use crate::{diff_cmd, serve_probe};

/// The manifest every command reads or writes when none is named: declared once, here.
pub(crate) const DEFAULT_MANIFEST: &str = "connector.yaml";

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
pub(crate) struct Cli {
    /// Print only errors (and, for check, drift): no success lines, no warnings
    #[arg(short, long, global = true)]
    pub(crate) quiet: bool,
    /// When to colour diagnostics and diffs (NO_COLOR turns `auto` off)
    #[expect(clippy::doc_markdown, reason = "the --help text, shown as written")]
    #[arg(long, value_enum, global = true, default_value_t = ColorWhen::Auto, value_name = "WHEN")]
    pub(crate) color: ColorWhen,
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ColorWhen {
    Auto,
    Always,
    Never,
}

#[derive(Subcommand)]
pub(crate) enum Command {
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
        #[arg(default_value = DEFAULT_MANIFEST)]
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
            default_value = DEFAULT_MANIFEST
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
pub(crate) enum TemplatesCommand {
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
pub(crate) struct Source {
    /// Refuse a manifest larger than this, checked before reading (K, M, G suffixes: powers of 1024)
    #[arg(long, value_name = "BYTES", default_value = "128M", value_parser = input::parse_size)]
    pub(crate) max_bytes: u64,
    /// Targets to produce instead of the manifest's `targets:` (repeat or comma-separate)
    #[arg(
        long = "target",
        value_enum,
        value_delimiter = ',',
        value_name = "TARGET"
    )]
    pub(crate) targets: Vec<Target>,
    /// A folder of templates overriding the embedded ones (replaces the manifest's `templates:`)
    #[arg(long, value_name = "DIR")]
    pub(crate) templates: Option<PathBuf>,
    /// Work and memory budget of all template rendering in this run [default: 4000000 + 1 per 2 manifest bytes]
    #[arg(long, value_name = "N")]
    pub(crate) template_fuel: Option<u64>,
    /// Refuse a rendered file or description larger than this (K, M, G suffixes) [default: 256M]
    #[arg(long, value_name = "BYTES", value_parser = input::parse_size)]
    pub(crate) max_template_output: Option<u64>,
    /// Parser events that YAML aliases may expand to in all [default: a quarter of the file size, at least 100000]
    #[arg(long, value_name = "N")]
    pub(crate) max_alias_expansion: Option<usize>,
    /// Let the manifest name files in DIR too (its `openapi:` document, its `templates:`), besides its own folder (repeatable)
    #[arg(long, value_name = "DIR")]
    pub(crate) allow_read: Vec<PathBuf>,
}

#[derive(Args)]
pub(crate) struct Common {
    /// The manifest to read
    #[arg(default_value = DEFAULT_MANIFEST)]
    pub(crate) manifest: PathBuf,
    /// Output folder [default: `generated/` beside the manifest]
    #[arg(short = 'o', long, value_name = "DIR")]
    pub(crate) out: Option<PathBuf>,
    /// Treat warnings as errors
    #[arg(long)]
    pub(crate) deny_warnings: bool,
    #[command(flatten)]
    pub(crate) source: Source,
}

impl Common {
    pub(crate) fn out_dir(&self) -> PathBuf {
        self.out
            .clone()
            .unwrap_or_else(|| default_out(&self.manifest))
    }

    /// The command that regenerates the outputs this run looked at.
    pub(crate) fn build_command(&self) -> String {
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

/// `generated/` beside the manifest.
fn default_out(manifest: &Path) -> PathBuf {
    match manifest.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.join("generated"),
        _ => PathBuf::from("generated"),
    }
}
