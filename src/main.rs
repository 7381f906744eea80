//! The `connectorgen` command line: subcommands, file reading and exit codes only.
//!
//! Exit codes: 0 ok; 1 the manifest has problems (nothing written); 2 could not run
//! (usage, unreadable manifest, unwritable output folder).

use std::io::{IsTerminal as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, Subcommand};
use connectorgen::{GenerateError, generate, output};

#[derive(Parser)]
#[command(
    name = "connectorgen",
    version,
    about = "Generate openapi.json, llms.txt and model-facing descriptions for an AI-agent connector from one YAML manifest",
    after_help = "Exit codes: 0 ok, 1 the manifest has problems (nothing written), 2 could not run."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Validate a manifest and write openapi.json, llms.txt and descriptions.md
    #[command(
        after_help = "Examples:\n  connectorgen build\n  connectorgen build examples/manifests/video.yaml\n  connectorgen build connector.yaml --out public/"
    )]
    Build {
        /// The manifest to read
        #[arg(default_value = "connector.yaml")]
        manifest: PathBuf,
        /// Output folder [default: `generated/` beside the manifest]
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
    },
}

/// A failure to run at all (exit 2), as one line.
struct Fatal(String);

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Build { manifest, out } => build(&manifest, out),
    };
    match result {
        Ok(code) => code,
        Err(Fatal(message)) => {
            let _ = writeln!(std::io::stderr(), "error: {message}");
            ExitCode::from(2)
        }
    }
}

fn build(manifest: &Path, out: Option<PathBuf>) -> Result<ExitCode, Fatal> {
    let text = read_manifest(manifest)?;
    let name = manifest.display().to_string();
    let outputs = match generate(&name, Arc::new(text)) {
        Ok(outputs) => outputs,
        Err(GenerateError::Invalid(diagnostics)) => {
            let color = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
            let _ = std::io::stderr().write_all(diagnostics.render(color).as_bytes());
            return Ok(ExitCode::from(1));
        }
        Err(GenerateError::Render(e)) => return Err(Fatal(e.to_string())),
    };
    let out = out.unwrap_or_else(|| default_out(manifest));
    output::write_all(&out, &outputs).map_err(|e| Fatal(e.to_string()))?;
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

/// `generated/` beside the manifest.
fn default_out(manifest: &Path) -> PathBuf {
    match manifest.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.join("generated"),
        _ => PathBuf::from("generated"),
    }
}

fn read_manifest(path: &Path) -> Result<String, Fatal> {
    let shown = path.display();
    let meta = std::fs::metadata(path).map_err(|e| Fatal(format!("cannot read {shown}: {e}")))?;
    if !meta.is_file() {
        return Err(Fatal(format!("{shown} is not a regular file")));
    }
    let bytes = std::fs::read(path).map_err(|e| Fatal(format!("cannot read {shown}: {e}")))?;
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let before = &e.as_bytes()[..at];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let column = at - before.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1) + 1;
        Fatal(format!(
            "{shown} is not UTF-8 text (invalid byte at line {line}, column {column}); save it as UTF-8"
        ))
    })
}
