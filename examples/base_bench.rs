//! Inputs for the base-mode benchmark (scripts/bench.sh): a provider document as JSON
//! and as block-style YAML, and a manifest exposing ten of its operations.
//!
//! ```sh
//! cargo run --release --example base_bench -- --out /tmp/base --yaml-bytes 4000000
//! ```
//!
//! Takes: `--spec FILE` (default: OpenAI's document, 3.4 MB of JSON, in the team's
//! `../shared/provider-docs/project/examples/specs/openai/openapi.json`: the project
//! does not carry it), `--out
//! DIR`, and `--yaml-bytes N`: the YAML copy is padded to at least N bytes with copies of
//! component schemas nothing references (a real 4 MB YAML document cannot be fetched
//! here; the padding is parsed like the rest and then left out, as in any base). Writes:
//! `DIR/api.json` (the document as it is), `DIR/api.yaml`, and `DIR/json.yaml` and
//! `DIR/yaml.yaml`, manifests exposing the same ten operations of each.
//! Must never: change what the exposed operations say (only unreferenced schemas are
//! added), or write anywhere but `DIR`.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::{Map, Value};

/// The operations the manifests expose: files, batches and models, as in
/// tests/real_documents/manifests/openai-batches.yaml, plus one more list.
const OPERATIONS: [&str; 10] = [
    "listModels",
    "listFiles",
    "createFile",
    "retrieveFile",
    "downloadFile",
    "deleteFile",
    "createBatch",
    "retrieveBatch",
    "listBatches",
    "cancelBatch",
];

fn main() -> ExitCode {
    let mut spec =
        PathBuf::from("../shared/provider-docs/project/examples/specs/openai/openapi.json");
    let mut out = None;
    let mut yaml_bytes = 4_000_000usize;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = args.next();
        match (arg.as_str(), value) {
            ("--spec", Some(v)) => spec = PathBuf::from(v),
            ("--out", Some(v)) => out = Some(PathBuf::from(v)),
            ("--yaml-bytes", Some(v)) => match v.parse() {
                Ok(n) => yaml_bytes = n,
                Err(_) => return usage(),
            },
            _ => return usage(),
        }
    }
    let Some(out) = out else { return usage() };
    match run(&spec, &out, yaml_bytes) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

fn usage() -> ExitCode {
    eprintln!("usage: base_bench --out DIR [--spec FILE] [--yaml-bytes N]");
    ExitCode::from(2)
}

fn run(spec: &std::path::Path, out: &std::path::Path, yaml_bytes: usize) -> Result<(), String> {
    let text = std::fs::read_to_string(spec).map_err(|e| format!("{}: {e}", spec.display()))?;
    let mut doc: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    std::fs::create_dir_all(out).map_err(|e| e.to_string())?;
    std::fs::write(out.join("api.json"), &text).map_err(|e| e.to_string())?;

    let mut yaml = String::new();
    emit(&doc, 0, &mut yaml);
    let schemas: Vec<(String, Value)> = doc
        .pointer("/components/schemas")
        .and_then(Value::as_object)
        .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default();
    let mut round = 0;
    while yaml.len() < yaml_bytes && !schemas.is_empty() {
        round += 1;
        let target = doc
            .pointer_mut("/components/schemas")
            .and_then(Value::as_object_mut)
            .ok_or("the document has no components.schemas to pad with")?;
        let mut padding = Map::new();
        for (name, schema) in &schemas {
            padding.insert(format!("{name}Pad{round}"), unreferenced(schema.clone()));
        }
        target.extend(padding);
        yaml.clear();
        emit(&doc, 0, &mut yaml);
    }
    std::fs::write(out.join("api.yaml"), &yaml).map_err(|e| e.to_string())?;
    for (manifest, file) in [("json.yaml", "api.json"), ("yaml.yaml", "api.yaml")] {
        std::fs::write(out.join(manifest), self::manifest(file)).map_err(|e| e.to_string())?;
    }
    eprintln!(
        "wrote {} ({} bytes of JSON) and {} ({} bytes of YAML)",
        out.join("api.json").display(),
        text.len(),
        out.join("api.yaml").display(),
        yaml.len()
    );
    Ok(())
}

/// A copy of a schema whose references point nowhere it could be reached from: the
/// padding stays unreachable, so the outputs are the same for both documents.
fn unreferenced(mut schema: Value) -> Value {
    fn strip(v: &mut Value) {
        match v {
            Value::Object(map) => {
                map.remove("$ref");
                map.values_mut().for_each(strip);
            }
            Value::Array(list) => list.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut schema);
    schema
}

fn manifest(file: &str) -> String {
    let mut m = format!(
        "version: 1\nopenapi: {file}\nservice:\n  name: OpenAI\n  dashboardUrl: https://platform.openai.com/api-keys\ntargets: [muse, mcp, openai, openapi30]\noperations:\n"
    );
    for op in OPERATIONS {
        let _ = writeln!(m, "  - operation: {op}");
    }
    m
}

/// Block-style YAML: mappings and sequences one entry per line, every key and string
/// double-quoted (JSON's string escapes are YAML's too).
fn emit(value: &Value, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (k, v) in map {
                let key = serde_json::to_string(k).expect("a string");
                match v {
                    Value::Object(m) if !m.is_empty() => {
                        let _ = writeln!(out, "{pad}{key}:");
                        emit(v, indent + 2, out);
                    }
                    Value::Array(l) if !l.is_empty() => {
                        let _ = writeln!(out, "{pad}{key}:");
                        emit(v, indent, out);
                    }
                    _ => {
                        let _ = writeln!(out, "{pad}{key}: {}", scalar(v));
                    }
                }
            }
        }
        Value::Array(list) if !list.is_empty() => {
            for v in list {
                match v {
                    Value::Object(m) if !m.is_empty() => {
                        let mut item = String::new();
                        emit(v, indent + 2, &mut item);
                        // The first line of the mapping goes after the dash.
                        let item = item.trim_start();
                        let _ = write!(out, "{pad}- {item}");
                    }
                    Value::Array(l) if !l.is_empty() => {
                        let _ = writeln!(out, "{pad}-");
                        emit(v, indent + 2, out);
                    }
                    _ => {
                        let _ = writeln!(out, "{pad}- {}", scalar(v));
                    }
                }
            }
        }
        other => {
            let _ = writeln!(out, "{pad}{}", scalar(other));
        }
    }
}

fn scalar(v: &Value) -> String {
    match v {
        Value::Object(_) => "{}".to_string(),
        Value::Array(_) => "[]".to_string(),
        other => serde_json::to_string(other).expect("a scalar"),
    }
}
