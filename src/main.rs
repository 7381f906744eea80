//! The `connectorgen` command line: subcommands, file reading and exit codes only.
//!
//! Exit codes: 0 ok; 1 errors, denied warnings or (for `check`) drift — `build` then
//! writes nothing; 2 could not run (usage, unreadable manifest, unwritable output folder).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Args, Parser, Subcommand};
use connectorgen::diagnostics::Severity;
use connectorgen::model::Target;
use connectorgen::report::{Format, Report};
use connectorgen::{Analysis, Options, analyze_with, check, input, output};

#[derive(Parser)]
#[command(
    name = "connectorgen",
    version,
    about = "Generate openapi.json, llms.txt and model-facing descriptions for an AI-agent connector from one YAML manifest",
    after_help = "Exit codes: 0 ok; 1 errors, denied warnings or (check) drift; 2 could not run (usage, unreadable file, unwritable folder)."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Validate a manifest and write openapi.json, llms.txt and descriptions.md
    #[command(
        after_help = "Warnings are printed but do not block unless --deny-warnings.\n\n\
Examples:\n  connectorgen build\n  connectorgen build examples/manifests/video.yaml\n  connectorgen build connector.yaml --out public/\n\n\
Exit codes: 0 written; 1 errors (or warnings with --deny-warnings), nothing written; 2 could not run."
    )]
    Build {
        #[command(flatten)]
        common: Common,
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
}

#[derive(Args)]
struct Common {
    /// The manifest to read
    #[arg(default_value = "connector.yaml")]
    manifest: PathBuf,
    /// Output folder [default: `generated/` beside the manifest]
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Treat warnings as errors
    #[arg(long)]
    deny_warnings: bool,
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
        if !self.targets.is_empty() {
            let names: Vec<&str> = self.targets.iter().map(|t| t.as_str()).collect();
            cmd.push_str(&format!(" --target {}", names.join(",")));
        }
        cmd
    }

    fn analyze(&self) -> Result<Analysis, Fatal> {
        let text = input::read_manifest(&self.manifest, self.max_bytes)
            .map_err(|e| Fatal(e.to_string()))?;
        let options = Options {
            targets: Some(self.targets.clone()),
        };
        analyze_with(
            &self.manifest.display().to_string(),
            Arc::new(text),
            &options,
        )
        .map_err(|e| Fatal(e.to_string()))
    }
}

/// A failure to run at all (exit 2), as one line.
struct Fatal(String);

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Build { common } => build(&common),
        Command::Check { common, format } => check(&common, format),
    };
    match result {
        Ok(code) => code,
        Err(Fatal(message)) => {
            let _ = writeln!(std::io::stderr(), "error: {message}");
            ExitCode::from(2)
        }
    }
}

fn color_for(stream: &impl std::io::IsTerminal) -> bool {
    stream.is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

fn build(common: &Common) -> Result<ExitCode, Fatal> {
    let analysis = common.analyze()?;
    let diagnostics = &analysis.diagnostics;
    let mut stderr = std::io::stderr();
    if !diagnostics.is_empty() {
        let _ = stderr.write_all(diagnostics.render(color_for(&stderr)).as_bytes());
    }
    let errors = diagnostics.count(Severity::Error);
    let warnings = diagnostics.count(Severity::Warning);
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
            let _ = writeln!(
                stderr,
                "error: {summary} in {}{why}; nothing was written",
                common.manifest.display()
            );
            return Ok(ExitCode::from(1));
        }
    };
    let out = common.out_dir();
    output::write_all(&out, outputs).map_err(|e| Fatal(e.to_string()))?;
    let names: Vec<&str> = outputs.keys().map(String::as_str).collect();
    // A closed stdout (`connectorgen build | head -0`) is not a failure of the build.
    let _ = writeln!(
        std::io::stdout(),
        "wrote {} to {}",
        names.join(", "),
        out.display()
    );
    Ok(ExitCode::SUCCESS)
}

fn check(common: &Common, format: Format) -> Result<ExitCode, Fatal> {
    let analysis = common.analyze()?;
    let drift = match &analysis.outputs {
        Some(outputs) => {
            check::drift(&common.out_dir(), outputs).map_err(|e| Fatal(e.to_string()))?
        }
        None => Vec::new(),
    };
    let report = Report {
        diagnostics: &analysis.diagnostics,
        drift: &drift,
        fix: common.build_command(),
    };
    let mut stdout = std::io::stdout();
    let text = report.render(format, color_for(&stdout));
    // A closed stdout (`connectorgen check | head -1`) must not turn into a panic.
    let _ = stdout.write_all(text.as_bytes());
    let warnings = analysis.diagnostics.count(Severity::Warning);
    let failed =
        analysis.has_errors() || !drift.is_empty() || (common.deny_warnings && warnings > 0);
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// `generated/` beside the manifest.
fn default_out(manifest: &Path) -> PathBuf {
    match manifest.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.join("generated"),
        _ => PathBuf::from("generated"),
    }
}
