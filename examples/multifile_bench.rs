//! Inputs for the multi-file benchmark (docs/dev/performance.md): a generated provider
//! document in the layout of a large cloud provider's published one — a root file whose
//! every operation is a `$ref` to a file of its own, which refer to responses, models,
//! attributes, parameters, links and code samples in further files, relative to
//! themselves — and a manifest exposing ten of its operations.
//!
//! ```sh
//! cargo run --release --example multifile_bench -- --out /tmp/multi --resources 110
//! ```
//!
//! Takes: `--out DIR` and `--resources N` (default 110: 660 operations in 3,751 files;
//! the published document has 659 operations in about 2,900). Writes `DIR/spec/` (the document:
//! `spec/api.yaml` and its files) and `DIR/connector.yaml`. The output depends only on
//! `N`: the same command writes the same bytes.
//! Must never: write anywhere but `DIR`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut out = None;
    let mut resources = 110usize;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = args.next();
        match (arg.as_str(), value) {
            ("--out", Some(v)) => out = Some(PathBuf::from(v)),
            ("--resources", Some(v)) => match v.parse() {
                Ok(n) if n > 0 => resources = n,
                _ => return usage(),
            },
            _ => return usage(),
        }
    }
    let Some(out) = out else { return usage() };
    match run(&out, resources) {
        Ok(files) => {
            println!(
                "wrote {files} files of the document to {}/spec and {}/connector.yaml",
                out.display(),
                out.display()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

fn usage() -> ExitCode {
    eprintln!("usage: multifile_bench --out DIR [--resources N]");
    ExitCode::from(2)
}

/// The operations of one resource: (file stem, method, path suffix, summary).
const OPERATIONS: [(&str, &str, &str, &str); 6] = [
    ("list", "get", "", "List all"),
    ("create", "post", "", "Create a new"),
    ("get", "get", "/{id}", "Retrieve an existing"),
    ("update", "put", "/{id}", "Update an existing"),
    ("delete", "delete", "/{id}", "Delete an existing"),
    (
        "actions_list",
        "get",
        "/{id}/actions",
        "List the actions of an existing",
    ),
];

/// Languages of the code samples each operation refers to.
const SAMPLES: [&str; 3] = ["curl", "go", "python"];

struct Writer {
    root: PathBuf,
    files: usize,
}

impl Writer {
    fn write(&mut self, rel: &str, text: &str) -> std::io::Result<()> {
        let path = self.root.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(path, text)?;
        self.files += 1;
        Ok(())
    }
}

fn run(out: &Path, resources: usize) -> std::io::Result<usize> {
    let mut w = Writer {
        root: out.join("spec"),
        files: 0,
    };
    shared(&mut w)?;
    let mut paths = String::new();
    let mut tags = String::new();
    for r in 0..resources {
        let name = format!("thing{r:03}");
        let _ = writeln!(
            tags,
            "  - name: {name}\n    description: The {name} resource."
        );
        resource(&mut w, &name)?;
        let mut last_path = String::new();
        for (stem, method, suffix, _) in OPERATIONS {
            let path = format!("/v2/{name}s{suffix}");
            if path != last_path {
                let _ = writeln!(paths, "  {path}:");
                last_path = path;
            }
            let _ = writeln!(
                paths,
                "    {method}:\n      $ref: 'resources/{name}/{name}_{stem}.yml'"
            );
        }
    }
    let root = format!(
        "openapi: 3.0.0\ninfo:\n  title: Generated Cloud API\n  version: '2.0'\n  description:\n    $ref: 'description.yml#/introduction'\nservers:\n  - url: https://api.cloud.example\ntags:\n{tags}paths:\n{paths}components:\n  securitySchemes:\n    bearer_auth:\n      type: http\n      scheme: bearer\nsecurity:\n  - bearer_auth: []\n"
    );
    w.write("api.yaml", &root)?;
    w.write(
        "description.yml",
        "introduction: |\n  A generated document in many files, for the multi-file benchmark.\n",
    )?;
    let mut manifest = String::from(
        "# Ten operations of the generated multi-file document (examples/multifile_bench.rs).\nversion: 1\nopenapi: spec/api.yaml\nservice:\n  dashboardUrl: https://cloud.example/account/api/tokens\noperations:\n",
    );
    for r in 0..resources.min(5) {
        let name = format!("thing{r:03}");
        let _ = writeln!(
            manifest,
            "  - operation: {name}_list\n    description: Read-only. Lists every {name}; cannot change them."
        );
        let _ = writeln!(
            manifest,
            "  - operation: {name}_get\n    description: Read-only. Returns one {name}; cannot change it."
        );
    }
    std::fs::write(out.join("connector.yaml"), manifest)?;
    Ok(w.files)
}

/// Responses, parameters, headers and models every resource refers to.
fn shared(w: &mut Writer) -> std::io::Result<()> {
    w.write(
        "shared/headers.yml",
        "ratelimit-limit:\n  schema: { type: integer }\n  description: Requests allowed per hour.\nratelimit-remaining:\n  schema: { type: integer }\n  description: Requests left this hour.\n",
    )?;
    w.write(
        "shared/parameters.yml",
        "per_page:\n  in: query\n  name: per_page\n  schema: { type: integer, minimum: 1, maximum: 200, default: 20 }\npage:\n  in: query\n  name: page\n  schema: { type: integer, minimum: 1, default: 1 }\n",
    )?;
    w.write(
        "shared/models/error.yml",
        "type: object\nrequired: [id, message]\nproperties:\n  id: { type: string, example: not_found }\n  message: { type: string }\n  request_id: { type: string }\n",
    )?;
    w.write(
        "shared/meta.yml",
        "type: object\nproperties:\n  meta:\n    type: object\n    properties:\n      total: { type: integer }\n",
    )?;
    for (stem, description) in [
        ("unauthorized", "Authentication failed."),
        ("not_found", "The resource was not found."),
        ("too_many_requests", "The API rate limit was exceeded."),
        ("server_error", "There was a server error."),
        ("unexpected_error", "There was an unexpected error."),
    ] {
        w.write(
            &format!("shared/responses/{stem}.yml"),
            &format!(
                "description: {description}\nheaders:\n  ratelimit-limit:\n    $ref: '../headers.yml#/ratelimit-limit'\n  ratelimit-remaining:\n    $ref: '../headers.yml#/ratelimit-remaining'\ncontent:\n  application/json:\n    schema:\n      $ref: '../models/error.yml'\n"
            ),
        )?;
    }
    Ok(())
}

/// One resource: six operation files, their responses, models, attributes,
/// parameters, links and code samples.
fn resource(w: &mut Writer, name: &str) -> std::io::Result<()> {
    let dir = format!("resources/{name}");
    for attribute in ["id", "name", "created_at", "status"] {
        let schema = match attribute {
            "created_at" => "type: string\nformat: date-time".to_string(),
            "status" => "type: string\nenum: [new, active, archived]".to_string(),
            _ => "type: string".to_string(),
        };
        w.write(
            &format!("{dir}/attributes/{name}_{attribute}.yml"),
            &format!("{schema}\ndescription: The {attribute} of the {name}.\n"),
        )?;
    }
    w.write(
        &format!("{dir}/models/{name}.yml"),
        &format!(
            "type: object\nrequired: [id, name]\nproperties:\n  id:\n    $ref: '../attributes/{name}_id.yml'\n  name:\n    $ref: '../attributes/{name}_name.yml'\n  created_at:\n    $ref: '../attributes/{name}_created_at.yml'\n  status:\n    $ref: '../attributes/{name}_status.yml'\n  tags:\n    type: array\n    items: {{ type: string }}\n"
        ),
    )?;
    w.write(
        &format!("{dir}/models/{name}_create.yml"),
        &format!(
            "type: object\nrequired: [name]\nproperties:\n  name:\n    $ref: '../attributes/{name}_name.yml'\n  tags:\n    type: array\n    items: {{ type: string }}\n"
        ),
    )?;
    w.write(
        &format!("{dir}/parameters.yml"),
        &format!(
            "{name}_id:\n  in: path\n  name: id\n  required: true\n  description: The id of the {name}.\n  schema: {{ type: string }}\n"
        ),
    )?;
    w.write(
        &format!("{dir}/links/{name}_get_by_id.yml"),
        &format!(
            "operationId: {name}_get\nparameters:\n  id: $response.body#/{name}/id\ndescription: The `id` can be used to retrieve the {name}.\n"
        ),
    )?;
    w.write(
        &format!("{dir}/responses/{name}_one.yml"),
        &format!(
            "description: One {name}.\nheaders:\n  ratelimit-limit:\n    $ref: '../../../shared/headers.yml#/ratelimit-limit'\ncontent:\n  application/json:\n    schema:\n      type: object\n      properties:\n        {name}:\n          $ref: '../models/{name}.yml'\nlinks:\n  {name}_get_by_id:\n    $ref: '../links/{name}_get_by_id.yml'\n"
        ),
    )?;
    w.write(
        &format!("{dir}/responses/{name}_all.yml"),
        &format!(
            "description: Every {name}.\ncontent:\n  application/json:\n    schema:\n      allOf:\n        - type: object\n          properties:\n            {name}s:\n              type: array\n              items:\n                $ref: '../models/{name}.yml'\n        - $ref: '../../../shared/meta.yml'\n"
        ),
    )?;
    for (stem, method, suffix, summary) in OPERATIONS {
        let id = format!("{name}_{stem}");
        let mut op = format!(
            "operationId: {id}\nsummary: {summary} {name}\ndescription: >-\n  To {summary_lower} {name}, send a {upper} request to `/v2/{name}s{suffix}`.\ntags:\n  - {name}\n",
            summary_lower = summary.to_lowercase(),
            upper = method.to_uppercase(),
        );
        let mut params = Vec::new();
        if suffix.contains("{id}") {
            params.push(format!("  - $ref: 'parameters.yml#/{name}_id'"));
        }
        if stem.ends_with("list") {
            params.push("  - $ref: '../../shared/parameters.yml#/per_page'".to_string());
            params.push("  - $ref: '../../shared/parameters.yml#/page'".to_string());
        }
        if !params.is_empty() {
            let _ = writeln!(op, "parameters:\n{}", params.join("\n"));
        }
        if matches!(method, "post" | "put") {
            let _ = writeln!(
                op,
                "requestBody:\n  required: true\n  content:\n    application/json:\n      schema:\n        $ref: 'models/{name}_create.yml'"
            );
        }
        let success = match (method, stem) {
            ("delete", _) => "  '204':\n    description: Deleted.".to_string(),
            (_, s) if s.ends_with("list") => {
                format!("  '200':\n    $ref: 'responses/{name}_all.yml'")
            }
            ("post", _) => format!("  '201':\n    $ref: 'responses/{name}_one.yml'"),
            _ => format!("  '200':\n    $ref: 'responses/{name}_one.yml'"),
        };
        let _ = writeln!(
            op,
            "responses:\n{success}\n  '401':\n    $ref: '../../shared/responses/unauthorized.yml'\n  '404':\n    $ref: '../../shared/responses/not_found.yml'\n  '429':\n    $ref: '../../shared/responses/too_many_requests.yml'\n  '500':\n    $ref: '../../shared/responses/server_error.yml'\n  default:\n    $ref: '../../shared/responses/unexpected_error.yml'"
        );
        let _ = writeln!(op, "x-codeSamples:");
        for lang in SAMPLES {
            let _ = writeln!(op, "  - $ref: 'examples/{lang}/{id}.yml'");
            w.write(
                &format!("{dir}/examples/{lang}/{id}.yml"),
                &format!(
                    "lang: {lang}\nsource: |-\n  # {summary} {name} with {lang}\n  call {upper} /v2/{name}s{suffix}\n",
                    upper = method.to_uppercase()
                ),
            )?;
        }
        let _ = writeln!(op, "security:\n  - bearer_auth: []");
        w.write(&format!("{dir}/{id}.yml"), &op)?;
    }
    Ok(())
}
