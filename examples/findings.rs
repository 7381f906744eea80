//! A compact manifest with many findings, for timing how they are printed.
//!
//! ```sh
//! cargo run --release --example findings -- --warnings 6000 > warnings.yaml
//! cargo run --release --example findings -- --errors 1000 > errors.yaml
//! ```
//!
//! Takes: `--warnings N` (N lint warnings, half `missing-limit` on GETs, half
//! `mutating-without-limit` on POSTs; N even) or `--errors N` (N operations, each with
//! an `invalid-path` error). Writes to stdout: one manifest, one operation per line (a
//! flow mapping), deterministic. 6,000 warnings are about 0.4 MB: the shape of the
//! report that took 21.6 s to print before the human report was made linear.
//!
//! Must never: produce any finding but the ones asked for.

use std::fmt::Write as _;
use std::io::Write as _;
use std::process::ExitCode;

const USAGE: &str = "usage: findings (--warnings N | --errors N)";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (kind, count) = match args.as_slice() {
        [flag, n] if flag == "--warnings" || flag == "--errors" => match n.parse::<usize>() {
            Ok(n) if n > 0 => (flag.as_str(), n),
            _ => {
                eprintln!("{USAGE}");
                return ExitCode::from(2);
            }
        },
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let mut out = String::from(
        "version: 1\nservice:\n  name: Findings\n  version: 1.0.0\n  description: Many findings, for timing the report.\n  publicUrl: https://findings.example\n  dashboardUrl: https://findings.example/settings\noperations:\n",
    );
    if kind == "--warnings" {
        for i in 0..count.div_ceil(2) {
            let _ = writeln!(
                out,
                "  - {{ id: listThings{i}, method: get, path: /v1/things{i}, summary: List the person's things, description: Returns the things of one folder. }}"
            );
            let _ = writeln!(
                out,
                "  - {{ id: createThing{i}, method: post, path: /v1/things{i}, summary: Create one new thing, description: Creates a thing in the folder. }}"
            );
        }
    } else {
        for i in 0..count {
            let _ = writeln!(
                out,
                "  - {{ id: listThings{i}, method: get, path: v1/things{i}, summary: List the person's things, description: Read-only. Returns things. }}"
            );
        }
    }
    if std::io::stdout().write_all(out.as_bytes()).is_err() {
        return ExitCode::from(2);
    }
    ExitCode::SUCCESS
}
