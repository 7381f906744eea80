//! The bare YAML parse floor: a whole process that reads a file and runs the YAML event
//! parser connectorgen's front end is built on (granit-parser, through serde-saphyr) over
//! it, building nothing. `scripts/bench.sh` times it beside `connectorgen build`: no
//! build of the same file can take less than this.
//!
//! ```sh
//! cargo run --release --example parse_floor -- /tmp/s10k.yaml
//! ```
//!
//! Takes: one file path. Prints: the number of parser events. Exit 1 on a read or parse
//! error. Must never: write anything.

use std::process::ExitCode;

use serde_saphyr::granit_parser::Parser;

fn main() -> ExitCode {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: parse_floor FILE");
        return ExitCode::from(2);
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{path}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut events = 0usize;
    for event in Parser::new_from_str(&text) {
        if let Err(e) = event {
            eprintln!("{path}: {e}");
            return ExitCode::FAILURE;
        }
        events += 1;
    }
    println!("{events}");
    ExitCode::SUCCESS
}
