//! The hardening promises of `connectorgen build`, tested on the binary as a user runs
//! it: every byte of a manifest is untrusted, and whatever it holds the run ends with a
//! clear diagnostic or correct output, in bounded time and memory, with the files
//! already on disk intact. docs/guarantees.md lists each promise with its test; the
//! bounds on templates are tested in `tests/bounded_templates.rs`, and what happens to
//! the files on disk in `tests/nothing_lost.rs`.

use crate::support::cli;
use crate::support::sets;

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::Duration;

use cli::{
    ChildGuard, NO_HANG, assert_one_line_exit_2, build, names, plain as bin, run_within, says, text,
};
use sets::{case, example, outputs_of};

/// Tests that time the binary run one at a time, so parallel tests do not skew them.
static TIMED: Mutex<()> = Mutex::new(());

// ---- Resource limits ------------------------------------------------------------------

/// Refused by its size alone: the file is never opened, let alone read. Structurally:
/// the manifest cannot be opened by the user running the build (mode 000, run without
/// root's permissions), so any attempt to open it would fail with "Permission denied";
/// the refusal by size shows the size was judged first. A small file of the same mode
/// shows the open would indeed fail.
#[cfg(unix)]
#[test]
fn manifest_over_max_bytes_is_refused_before_reading() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    cli::open_to_others(dir.path());
    // Sparse: 200 MiB by its metadata, no disk used.
    let big = std::fs::File::create(dir.path().join("big.yaml")).unwrap();
    big.set_len(200 << 20).unwrap();
    std::fs::write(dir.path().join("small.yaml"), "version: 1\n").unwrap();
    for name in ["big.yaml", "small.yaml"] {
        let path = dir.path().join(name);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o000)).unwrap();
    }
    let unprivileged = |manifest: &str| {
        let mut cmd = bin();
        cmd.current_dir(dir.path()).args(["build", manifest]);
        cli::unprivileged(cmd)
    };
    match (unprivileged("small.yaml"), unprivileged("big.yaml")) {
        (Ok(small), Ok(big)) => {
            let (out, _) = run_within(small, NO_HANG);
            assert_one_line_exit_2(&out, "cannot read small.yaml: Permission denied");
            let (out, _) = run_within(big, NO_HANG);
            assert_one_line_exit_2(
                &out,
                "big.yaml is larger than the 128 MiB limit (134217728 bytes); if the manifest is legitimate, raise the limit with --max-bytes (e.g. --max-bytes 256M)",
            );
        }
        (Err(why), _) | (_, Err(why)) => {
            eprintln!("SKIPPED: refused before reading, structurally: {why}");
        }
    }

    // The limit is the user's to set, both ways.
    std::fs::copy(example("video.yaml"), dir.path().join("video.yaml")).unwrap();
    let out = build(dir.path(), &["video.yaml", "--max-bytes", "1K"]);
    assert_one_line_exit_2(
        &out,
        "video.yaml is larger than the 1 KiB limit (1024 bytes)",
    );
    let out = build(dir.path(), &["video.yaml", "--max-bytes", "64K"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = build(dir.path(), &["video.yaml", "--max-bytes", "lots"]);
    assert_eq!(out.status.code(), Some(2), "a bad value is a usage error");
}

/// A file whose size is not known in advance (here /proc, which reports 0) is still
/// read no further than the limit.
#[cfg(target_os = "linux")]
#[test]
fn unknown_size_input_is_still_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let out = build(dir.path(), &["/proc/self/maps", "--max-bytes", "16"]);
    assert_one_line_exit_2(&out, "/proc/self/maps is larger than the 16 bytes limit");
}

/// Runs a manifest with the address space capped at 256 MiB (more than that and an
/// allocation fails and the process aborts). The cap includes the binary's own mapped
/// code, which in a debug build with the serve runtime (tokio, rmcp, TLS, SQLite) is
/// well over 100 MiB; unbounded, these bombs need gigabytes and checks it is rejected within `limit`
/// with a `yaml-limit` diagnostic, writing nothing. Returns stderr.
fn rejected_within(yaml: &str, limit: Duration) -> String {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bomb.yaml"), yaml).unwrap();
    let mut cmd = Command::new("sh");
    cmd.current_dir(dir.path())
        .env("NO_COLOR", "1")
        .arg("-c")
        .arg(r#"ulimit -v 262144 && exec "$0" build bomb.yaml"#)
        .arg(env!("CARGO_BIN_EXE_connectorgen"));
    let _timed = TIMED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let (out, elapsed) = run_within(cmd, Duration::from_secs(60));
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("yaml-limit"), "{stderr}");
    assert!(elapsed < limit, "took {elapsed:?}: {stderr}");
    assert!(!dir.path().join("generated").exists());
    stderr
}

fn manifest_with_output(schema: &str) -> String {
    format!(
        "version: 1\nservice:\n  name: Bomb\n  version: 1.0.0\n  description: Tries to exhaust the parser.\n  publicUrl: https://api.bomb.example\n  dashboardUrl: https://bomb.example/tokens\noperations:\n  - id: getBomb\n    method: get\n    path: /v1/bomb\n    summary: Read the bomb\n    description: Read-only.\n    output:{schema}\n"
    )
}

#[cfg(target_os = "linux")]
#[test]
fn billion_laughs_is_rejected_fast_in_little_memory() {
    // Nine levels of ten: 10^9 strings if expanded.
    let mut schema = String::from(
        "\n      a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]",
    );
    let levels = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"];
    for pair in levels.windows(2) {
        let refs = vec![format!("*{}", pair[0]); 10].join(",");
        schema.push_str(&format!("\n      {}: &{} [{refs}]", pair[1], pair[1]));
    }
    let stderr = rejected_within(&manifest_with_output(&schema), NO_HANG);
    assert!(
        says(&stderr, "the alias-expansion budget")
            && says(&stderr, "raise the budget with `--max-alias-expansion N`")
            && !stderr.contains("src/"),
        "names the limit and the flag that raises it, never the source: {stderr}"
    );

    // The same with one long string repeated.
    let long = format!(
        "\n      a: &a \"{}\"\n      b: [{}]",
        "x".repeat(1 << 20),
        vec!["*a"; 500].join(",")
    );
    let stderr = rejected_within(&manifest_with_output(&long), NO_HANG);
    assert!(says(&stderr, "over the text budget"), "{stderr}");
}

/// Merge keys (`<<`) expanding aliases of merges: the same budget stops them, in little
/// memory, but each expanded event costs the parser several times more (about 0.5 s in
/// a release build at worst, 5 to 10 s unoptimised), hence the looser time bound.
#[cfg(target_os = "linux")]
#[test]
fn merge_key_bombs_are_rejected_in_little_memory() {
    let slow = Duration::from_secs(60);
    for (levels, keys) in [(30, 1), (12, 50)] {
        let base: Vec<String> = (0..keys).map(|k| format!("x{k}: lol")).collect();
        let mut merges = format!("\n      m0: &m0 {{{}}}", base.join(", "));
        for i in 1..levels {
            let p = i - 1;
            merges.push_str(&format!(
                "\n      m{i}: &m{i} {{<<: [*m{p}, *m{p}], k{i}: 1}}"
            ));
        }
        let stderr = rejected_within(&manifest_with_output(&merges), slow);
        assert!(says(&stderr, "alias-expansion budget"), "{stderr}");
    }
}

/// Honest reuse: one shared schema behind 1,000 aliases (and a shared description behind
/// 1,000 more) builds; what bounds aliases is what they expand to, not how many there are
/// per anchor. A manifest over the expansion budget builds once `--max-alias-expansion`
/// raises it.
#[test]
fn many_aliases_to_one_anchor_build() {
    let op = |i: usize| {
        let (description, output) = match i {
            0 => (
                "&readOnly Read-only. Never changes a thing.",
                "&shared\n      type: object\n      properties:\n        id: { type: string }\n        tags: { type: array, items: { type: string } }",
            ),
            _ => ("*readOnly", "*shared"),
        };
        format!(
            "\n  - id: getThing{i}\n    method: get\n    path: /v1/things{i}/{{id}}\n    summary: Read thing number {i}\n    description: {description}\n    output: {output}"
        )
    };
    let ops: String = (0..1_001).map(op).collect();
    let yaml = format!(
        "version: 1\nservice:\n  name: Reuse\n  version: 1.0.0\n  description: Reuses one schema.\n  publicUrl: https://api.reuse.example\n  dashboardUrl: https://reuse.example/tokens\noperations:{ops}\n"
    );
    let outputs = outputs_of(&yaml);
    let doc: serde_json::Value = serde_json::from_str(&outputs["openapi.json"]).unwrap();
    let last = &doc["paths"]["/v1/things1000/{id}"]["get"];
    assert_eq!(
        last["responses"]["200"]["content"]["application/json"]["schema"]["properties"]["tags"]["items"]
            ["type"],
        "string",
        "the alias expanded to the shared schema: {last}"
    );

    // The same reuse at 40 times the size is over the default budget; the flag raises it.
    let big: String = (0..1_001)
        .map(|i| {
            let props: String = (0..40)
                .map(|p| format!("\n        p{p}: {{ type: string }}"))
                .collect();
            op(i).replace(
                "\n        tags: { type: array, items: { type: string } }",
                &props,
            )
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("connector.yaml"), yaml.replace(&ops, &big)).unwrap();
    let out = build(dir.path(), &[]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(says(&stderr, "--max-alias-expansion N"), "{stderr}");
    let out = build(dir.path(), &["--max-alias-expansion", "1000000"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

#[cfg(target_os = "linux")]
#[test]
fn deep_nesting_is_rejected_fast_in_little_memory() {
    const DEEP: usize = 100_000;
    for (style, schema) in [
        (
            "flow sequences",
            format!(" {}{}", "[".repeat(DEEP), "]".repeat(DEEP)),
        ),
        (
            "flow mappings",
            format!(" {}1{}", "{a: ".repeat(DEEP), "}".repeat(DEEP)),
        ),
        ("block sequences", format!("\n      {}x", "- ".repeat(DEEP))),
        ("unclosed", format!(" {}", "[{".repeat(DEEP / 2))),
    ] {
        let stderr = rejected_within(&manifest_with_output(&schema), NO_HANG);
        assert!(
            says(&stderr, "over the nesting-depth limit of 64")
                && says(&stderr, "flatten the structure")
                && !stderr.contains("src/"),
            "{style}: names the limit and how to get under it, never the source: {stderr}"
        );
        assert!(
            stderr.contains("output:"),
            "{style}: points at the nesting: {stderr}"
        );
    }
}

#[cfg(unix)]
#[test]
fn unreadable_inputs_give_one_line_and_exit_2() {
    // Not UTF-8, UTF-16, a folder and a missing file are tests/cmd/build-unreadable.trycmd;
    // a FIFO and a device are made here, and need a bound on the run.
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo.yaml");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let cases = [
        (
            "fifo.yaml",
            "fifo.yaml is not a regular file (it is a FIFO (named pipe))",
        ),
        (
            "/dev/zero",
            "/dev/zero is not a regular file (it is a character device)",
        ),
    ];
    for (manifest, expect) in cases {
        let mut cmd = bin();
        cmd.current_dir(dir.path()).args(["build", manifest]);
        // A FIFO with no writer, or /dev/zero, must not hang or fill memory.
        let (out, _) = run_within(cmd, Duration::from_secs(10));
        assert_one_line_exit_2(&out, expect);
    }
    assert!(!dir.path().join("generated").exists(), "nothing written");
}

// ---- Files a manifest names -----------------------------------------------------------

/// A secret in the environment of every child these tests run, as a CI token would be.
const SECRET: &str = "ghp_s3cr3t-t0ken-of-the-ci";

/// `connectorgen ARGS` in `dir`, colour off, with `SECRET` in its environment.
fn with_secret(dir: &Path, args: &[&str]) -> (std::process::Output, String) {
    let mut cmd = bin();
    cmd.current_dir(dir)
        .args(args)
        .env("CI_TOKEN", SECRET)
        .env("NO_COLOR", "1");
    let (out, _) = run_within(cmd, Duration::from_secs(30));
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(!all.contains("s3cr3t"), "the secret was printed:\n{all}");
    assert!(!all.contains("panicked"), "{all}");
    (out, all)
}

/// A base-mode manifest naming `openapi`, exposing one operation of the jobs document.
fn base_manifest(openapi: &str) -> String {
    format!(
        "version: 1\nopenapi: {openapi}\nservice:\n  dashboardUrl: https://jobs.example/account/keys\noperations:\n  - operation: jobs.get\n"
    )
}

/// Issue 21, defect 1: `openapi: /proc/self/environ` made `check` print the process
/// environment (CI tokens included) in the snippet of its parse error. No file of the
/// operating system is ever read for a manifest, directly or through a symlink, and no
/// format prints it.
#[cfg(target_os = "linux")]
#[test]
fn a_manifest_cannot_print_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink("/proc/self/environ", dir.path().join("env.json")).unwrap();
    for openapi in [
        "/proc/self/environ",
        "env.json",
        "../../../../../../../proc/self/environ",
    ] {
        std::fs::write(dir.path().join("connector.yaml"), base_manifest(openapi)).unwrap();
        for format in ["human", "json", "github", "sarif"] {
            let (out, all) = with_secret(dir.path(), &["check", "--format", format]);
            assert_eq!(out.status.code(), Some(1), "{openapi} {format}: {all}");
            assert!(all.contains("base-unreadable"), "{openapi} {format}: {all}");
        }
        let (out, all) = with_secret(dir.path(), &["build"]);
        assert_eq!(out.status.code(), Some(1), "{all}");
        assert!(says(&all, "a file of the operating system"), "{all}");
        // Allowing every folder does not allow the operating system's files.
        let (out, all) = with_secret(dir.path(), &["build", "--allow-read", "/"]);
        assert_eq!(out.status.code(), Some(1), "{all}");
    }
    assert!(!dir.path().join("generated").exists(), "nothing written");
}

/// Issue 30: "the `/proc` guard is by path (a procfs mounted elsewhere is read)". A
/// procfs mounted inside the manifest's own folder — for this command only, in its own
/// mount namespace (and user namespace, so that it needs no root where unprivileged
/// namespaces are allowed) — is refused as the system's, by the file system it is on.
/// Where namespaces cannot be made the test fails, saying why: it is never skipped.
#[cfg(target_os = "linux")]
#[test]
fn a_procfs_mounted_elsewhere_is_refused_too() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("p")).unwrap();
    std::fs::write(
        dir.path().join("connector.yaml"),
        base_manifest("p/self/environ"),
    )
    .unwrap();
    let mut cmd = Command::new("unshare");
    cmd.args([
        "--user",
        "--map-root-user",
        "--mount",
        "--pid",
        "--fork",
        "sh",
        "-c",
        r#"mount -t proc proc p || exit 99; exec "$0" "$@""#,
        env!("CARGO_BIN_EXE_connectorgen"),
        "build",
    ])
    .current_dir(dir.path())
    .env("CI_TOKEN", SECRET)
    .env("NO_COLOR", "1");
    let (out, _) = run_within(cmd, Duration::from_secs(30));
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(
        out.status.code() != Some(99) && !all.contains("unshare:"),
        "this test needs a private mount namespace to mount a procfs in (unshare --user \
         --map-root-user --mount --pid, util-linux) and could not make one here: {all}"
    );
    assert!(!all.contains("s3cr3t"), "the secret was printed:\n{all}");
    assert_eq!(out.status.code(), Some(1), "{all}");
    assert!(says(&all, "a file of the operating system"), "{all}");
    assert!(!dir.path().join("generated").exists(), "nothing written");
}

/// A manifest with a `templates:` folder holding `llms.txt.j2` as given.
fn templated(dir: &Path) -> std::path::PathBuf {
    let manifest = std::fs::read_to_string(example("video.yaml")).unwrap();
    std::fs::write(
        dir.join("connector.yaml"),
        format!("{manifest}templates: templates\n"),
    )
    .unwrap();
    let templates = dir.join("templates");
    std::fs::create_dir(&templates).unwrap();
    templates
}

/// Issue 21, defect 2: a template that is a symlink to `/proc/self/environ` was
/// followed: `build` wrote the environment into llms.txt, `check` printed it in the
/// drift diff. Whether the folder comes from `templates:` or `--templates`.
#[cfg(target_os = "linux")]
#[test]
fn a_template_linked_to_the_environment_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let templates = templated(dir.path());
    // A clean build first, so that `check` would have a drift diff to show.
    let (out, all) = with_secret(dir.path(), &["build"]);
    assert_eq!(out.status.code(), Some(0), "{all}");
    let before = std::fs::read(dir.path().join("generated/llms.txt")).unwrap();
    std::os::unix::fs::symlink("/proc/self/environ", templates.join("llms.txt.j2")).unwrap();
    let (out, all) = with_secret(dir.path(), &["build"]);
    assert_eq!(out.status.code(), Some(1), "{all}");
    assert!(all.contains("bad-templates-dir"), "{all}");
    assert!(says(&all, "a file of the operating system"), "{all}");
    for format in ["human", "json", "github", "sarif"] {
        let (out, all) = with_secret(dir.path(), &["check", "--format", format]);
        assert_eq!(out.status.code(), Some(1), "{format}: {all}");
    }
    // Named on the command line, the folder is trusted; the links in it are not.
    let (out, _) = with_secret(dir.path(), &["build", "--templates", "templates"]);
    assert_one_line_exit_2(&out, "a file of the operating system");
    assert_eq!(
        std::fs::read(dir.path().join("generated/llms.txt")).unwrap(),
        before,
        "llms.txt untouched"
    );
}

/// Issue 21, defects 1 and 2: a file the manifest names must be inside the manifest's
/// folder once symlinks are resolved, or inside a folder given with `--allow-read`.
#[cfg(unix)]
#[test]
fn files_outside_the_manifests_folder_are_read_only_when_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let specs = dir.path().join("specs");
    let work = dir.path().join("work");
    std::fs::create_dir_all(&specs).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    std::fs::copy(
        cli::root().join("tests/cases/specs/jobs.yaml"),
        specs.join("jobs.yaml"),
    )
    .unwrap();
    std::os::unix::fs::symlink("../specs/jobs.yaml", work.join("api.yaml")).unwrap();
    for openapi in ["../specs/jobs.yaml", "api.yaml"] {
        std::fs::write(work.join("connector.yaml"), base_manifest(openapi)).unwrap();
        let (out, all) = with_secret(&work, &["check"]);
        assert_eq!(out.status.code(), Some(1), "{openapi}: {all}");
        assert!(
            says(
                &all,
                "is outside the folders connectorgen reads for this manifest"
            ) && says(&all, "--allow-read"),
            "{openapi}: {all}"
        );
        let (out, all) = with_secret(&work, &["build"]);
        assert_eq!(out.status.code(), Some(1), "{openapi}: {all}");
        assert!(!work.join("generated").exists(), "nothing written");
        for args in [
            &["build", "--allow-read", "../specs"][..],
            &["build", "--allow-read", "../specs", "--allow-read", "."],
        ] {
            let (out, all) = with_secret(&work, args);
            assert_eq!(out.status.code(), Some(0), "{openapi} {args:?}: {all}");
        }
        std::fs::remove_dir_all(work.join("generated")).unwrap();
    }
    // A template linked out of the folder is refused the same way.
    std::fs::write(specs.join("llms.txt.j2"), "outside\n").unwrap();
    let templates = templated(&work);
    std::os::unix::fs::symlink("../../specs/llms.txt.j2", templates.join("llms.txt.j2")).unwrap();
    let (out, all) = with_secret(&work, &["build"]);
    assert_eq!(out.status.code(), Some(1), "{all}");
    assert!(says(&all, "is outside the folders"), "{all}");
    let (out, all) = with_secret(&work, &["build", "--allow-read", "../specs"]);
    assert_eq!(out.status.code(), Some(0), "{all}");
    let (out, _) = with_secret(&work, &["build", "--allow-read", "no-such-folder"]);
    assert_one_line_exit_2(&out, "--allow-read no-such-folder: not a folder");
}

/// Issue 21, defect 1: a file that is not a valid document (it may be whatever a path
/// led to) is quoted only in a tight excerpt: the line of the error, clipped around it,
/// with no context lines; a document that is a bare multi-line text shows one line.
#[test]
fn a_file_that_is_not_a_document_is_quoted_only_around_the_error() {
    let dir = tempfile::tempdir().unwrap();
    let long = "x".repeat(300);
    std::fs::write(
        dir.path().join("api.json"),
        format!("{{\n\"line2\": \"above-the-error\",\n\"k\": \"{long}\" ]\n\"line4\": \"below-the-error\"\n}}\n"),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("notes.yaml"),
        "first line of a text\nSECOND_LINE=kept out\nthird line\n",
    )
    .unwrap();
    for (openapi, shown, hidden) in [
        ("api.json", "xxxxxxxxxx\" ]", "-the-error"),
        ("notes.yaml", "first line of a text", "SECOND_LINE"),
    ] {
        std::fs::write(dir.path().join("connector.yaml"), base_manifest(openapi)).unwrap();
        let (out, all) = with_secret(dir.path(), &["check"]);
        assert_eq!(out.status.code(), Some(1), "{all}");
        assert!(all.contains(shown), "{openapi}: {all}");
        assert!(!all.contains(hidden), "{openapi}: {all}");
        let quoted = all
            .lines()
            .filter(|l| l.contains(" │ "))
            .map(|l| l.chars().count())
            .max();
        assert!(quoted.is_some_and(|n| n < 100), "{openapi}: {all}");
    }
}

/// Issue 21, defect 24: a base document or a template that is a FIFO (which would block
/// a read until someone writes), a folder or a device gets a message that names what
/// belongs there, without hanging.
#[cfg(unix)]
#[test]
fn fifos_folders_and_devices_named_by_a_manifest_are_refused_without_hanging() {
    let dir = tempfile::tempdir().unwrap();
    let made = Command::new("mkfifo")
        .arg(dir.path().join("pipe.json"))
        .status()
        .unwrap();
    assert!(made.success());
    std::os::unix::fs::symlink("/dev/zero", dir.path().join("zero.json")).unwrap();
    std::fs::create_dir(dir.path().join("folder.json")).unwrap();
    for (openapi, expect) in [
        (
            "pipe.json",
            "pipe.json is not a regular file (it is a FIFO (named pipe)); give the path of the provider's OpenAPI document",
        ),
        (
            "folder.json",
            "folder.json is not a regular file (it is a folder); give the path of the provider's OpenAPI document",
        ),
        (
            ".",
            ". is not a regular file (it is a folder); give the path of the provider's OpenAPI document",
        ),
        ("zero.json", "zero.json is a file of the operating system"),
        ("/dev/stdin", "/dev/stdin is a file of the operating system"),
    ] {
        std::fs::write(dir.path().join("connector.yaml"), base_manifest(openapi)).unwrap();
        let (out, all) = with_secret(dir.path(), &["check"]);
        assert_eq!(out.status.code(), Some(1), "{openapi}: {all}");
        assert!(says(&all, expect), "{openapi}: {all}");
    }
    let templates = templated(dir.path());
    let made = Command::new("mkfifo")
        .arg(templates.join("llms.txt.j2"))
        .status()
        .unwrap();
    assert!(made.success());
    let (out, all) = with_secret(dir.path(), &["build"]);
    assert_eq!(out.status.code(), Some(1), "{all}");
    assert!(
        says(
            &all,
            "is not a regular file (it is a FIFO (named pipe)); give the path of a template file"
        ),
        "{all}"
    );
}

/// The jobs document as JSON, for a base named `openapi.json`.
fn jobs_json() -> String {
    let yaml = std::fs::read_to_string(cli::root().join("tests/cases/specs/jobs.yaml")).unwrap();
    connectorgen_core::manifest::parse_value(&yaml)
        .unwrap()
        .to_string()
}

/// Issue 21, defect 10: `build --out .` beside a provider document named
/// `openapi.json` replaced the provider's document (exit 0); a manifest named
/// `llms.txt` was overwritten the same way, and an output symlink to an input wrote
/// through to it. Any output that is (or leads to) an input of the build is refused,
/// before anything is written: one line, exit 2.
#[cfg(unix)]
#[test]
fn an_output_never_replaces_an_input_of_the_build() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    let document = jobs_json();
    std::fs::write(p.join("openapi.json"), &document).unwrap();
    std::fs::write(p.join("connector.yaml"), base_manifest("openapi.json")).unwrap();
    let manifest = base_manifest("openapi.json");
    let out = build(p, &["--out", ".", "-q"]);
    assert_one_line_exit_2(
        &out,
        "could not write ./openapi.json: it is the base OpenAPI document this build reads",
    );
    assert_eq!(
        std::fs::read_to_string(p.join("openapi.json")).unwrap(),
        document
    );
    assert!(!p.join("llms.txt").exists(), "nothing written");

    // The manifest itself, named like an output.
    std::fs::write(p.join("llms.txt"), &manifest).unwrap();
    let out = build(p, &["llms.txt", "--out", ".", "-q"]);
    assert_one_line_exit_2(
        &out,
        "could not write ./llms.txt: it is the manifest this build reads",
    );
    assert_eq!(
        std::fs::read_to_string(p.join("llms.txt")).unwrap(),
        manifest
    );
    std::fs::remove_file(p.join("llms.txt")).unwrap();

    // An output that is a symlink (inside the output folder) to an input.
    std::fs::create_dir(p.join("out")).unwrap();
    std::fs::rename(p.join("openapi.json"), p.join("out/api.json")).unwrap();
    std::fs::write(p.join("connector.yaml"), base_manifest("out/api.json")).unwrap();
    std::os::unix::fs::symlink("api.json", p.join("out/llms.txt")).unwrap();
    let out = build(p, &["--out", "out", "-q"]);
    assert_one_line_exit_2(
        &out,
        "could not write out/llms.txt: it is a symbolic link to the base OpenAPI document this build reads",
    );
    assert_eq!(
        std::fs::read_to_string(p.join("out/api.json")).unwrap(),
        document
    );
    assert!(!p.join("out/openapi.json").exists(), "nothing written");

    // A template, when the output folder is the templates folder.
    let templates = templated(p);
    std::fs::write(templates.join("llms.txt.j2"), "{{ service.name }}\n").unwrap();
    std::os::unix::fs::symlink("llms.txt.j2", templates.join("llms.txt")).unwrap();
    let out = build(p, &["--out", "templates", "-q"]);
    assert_one_line_exit_2(
        &out,
        "could not write templates/llms.txt: it is a symbolic link to a template this build reads",
    );
    assert_eq!(
        std::fs::read_to_string(templates.join("llms.txt.j2")).unwrap(),
        "{{ service.name }}\n"
    );
}

// ---- Clean failure surface ------------------------------------------------------------

/// The guard every test here spawns through: a panic while the child runs (a failed
/// assertion, a hang caught by a bound) must not leave the child running.
#[cfg(target_os = "linux")]
#[test]
fn child_guard_kills_and_reaps_its_child_when_a_test_panics() {
    let (tx, rx) = std::sync::mpsc::channel();
    let failing_test = std::thread::spawn(move || {
        let child = ChildGuard::spawn(
            Command::new("sleep")
                .arg("600")
                .stdout(Stdio::null())
                .stderr(Stdio::null()),
        );
        tx.send(child.id()).unwrap();
        panic!("a failing assertion while the child runs");
    });
    assert!(failing_test.join().is_err(), "the thread panicked");
    let pid = rx.recv().unwrap();
    // Killed and reaped: the process is gone from /proc, not a zombie.
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "sleep (pid {pid}) survived the panic"
    );
}

/// `connectorgen … | head -1` with head gone before anything is printed.
#[test]
fn closed_stdout_does_not_panic() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(example("video.yaml"), dir.path().join("connector.yaml")).unwrap();
    for args in [
        &["build"][..],
        &["--help"],
        &["build", "--help"],
        &["--version"],
    ] {
        let mut child = ChildGuard::spawn(
            bin()
                .current_dir(dir.path())
                .args(args)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped()),
        );
        // Closing our end now: the child's first write to stdout meets a closed pipe.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = text(&out.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
    }
    assert!(dir.path().join("generated/openapi.json").is_file());
}

#[test]
fn unwritable_outputs_give_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(example("bank.yaml"), dir.path().join("connector.yaml")).unwrap();
    // A parent of the output folder that is a file is tests/cmd/build-unwritable.trycmd.

    // An output that is read-only.
    assert_eq!(build(dir.path(), &[]).status.code(), Some(0));
    let llms = dir.path().join("generated/llms.txt");
    let before = std::fs::read(&llms).unwrap();
    let mut perms = std::fs::metadata(&llms).unwrap().permissions();
    perms.set_readonly(true);
    std::fs::set_permissions(&llms, perms).unwrap();
    let out = build(dir.path(), &[]);
    assert_one_line_exit_2(&out, "could not write generated/llms.txt: it is read-only");
    assert_eq!(std::fs::read(&llms).unwrap(), before);

    // An output folder that cannot be created (a read-only file system).
    #[cfg(target_os = "linux")]
    {
        let out = build(dir.path(), &["--out", "/proc/connectorgen-out"]);
        assert_one_line_exit_2(
            &out,
            "could not create the output folder /proc/connectorgen-out",
        );
    }

    // A folder without write permission, for a user who is not root (root may write
    // anyway: as root, the build runs as `nobody`, see `cli::unprivileged`).
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        cli::open_to_others(dir.path());
        let locked = dir.path().join("locked");
        std::fs::create_dir(&locked).unwrap();
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o555)).unwrap();
        let mut cmd = bin();
        cmd.current_dir(dir.path())
            .args(["build", "--out", "locked"]);
        match cli::unprivileged(cmd) {
            Ok(cmd) => {
                let (out, _) = run_within(cmd, NO_HANG);
                assert_one_line_exit_2(
                    &out,
                    "could not write locked/descriptions.md: Permission denied",
                );
                assert_eq!(names(&locked), Vec::<String>::new());
            }
            Err(why) => eprintln!("SKIPPED: a folder without write permission: {why}"),
        }
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

/// An invalid manifest writes nothing, and the regression cases the fuzzer found are
/// still rejected with a diagnostic (their snapshots are in tests/snapshots/).
#[test]
fn invalid_manifest_leaves_previous_outputs_intact() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(example("video.yaml"), dir.path().join("connector.yaml")).unwrap();
    assert_eq!(build(dir.path(), &[]).status.code(), Some(0));
    let out_dir = dir.path().join("generated");
    let before: Vec<Vec<u8>> = names(&out_dir)
        .iter()
        .map(|n| std::fs::read(out_dir.join(n)).unwrap())
        .collect();
    std::fs::write(
        dir.path().join("connector.yaml"),
        case("invalid/yaml-limit.yaml"),
    )
    .unwrap();
    let out = build(dir.path(), &[]);
    assert_eq!(out.status.code(), Some(1));
    let after: Vec<Vec<u8>> = names(&out_dir)
        .iter()
        .map(|n| std::fs::read(out_dir.join(n)).unwrap())
        .collect();
    assert_eq!(before, after);
}

// ---- The mcp target at scale ------------------------------------------------------------

/// Issue 21, defect 5: the mcp target compared every path-item parameter with every
/// operation parameter, and every argument name with every earlier one: 12,000 + 12,000
/// parameters (0.72 MB) took 62 s. Both are one pass now (a set of keys). No time is
/// asserted: at this size the merge is a fraction of a second in a debug build, and the
/// quadratic one ran for minutes (the test run stalls, which is the failure). Half of
/// the operation's own parameters replace shared ones of the same name and location.
#[test]
fn mcp_parameters_merge_in_one_pass() {
    let n = 12_000;
    let param = |name: String| serde_json::json!({ "name": name, "in": "query", "schema": { "type": "string" } });
    let shared: Vec<_> = (0..n).map(|i| param(format!("s{i}"))).collect();
    let own: Vec<_> = (0..n)
        .map(|i| {
            param(if i % 2 == 0 {
                format!("s{i}")
            } else {
                format!("o{i}")
            })
        })
        .collect();
    let doc = serde_json::json!({
        "openapi": "3.1.0",
        "info": { "title": "Big", "version": "1", "description": "Many parameters." },
        "servers": [{ "url": "https://big.example" }],
        "paths": { "/things": {
            "parameters": shared,
            "get": { "operationId": "listThings", "summary": "List the things",
                "parameters": own, "responses": { "200": { "description": "ok" } } }
        } }
    });
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("api.json"), doc.to_string()).unwrap();
    let manifest = "version: 1\nopenapi: api.json\nservice:\n  dashboardUrl: https://big.example/keys\ntargets: [mcp]\nlint: { mcp-tool-too-large: allow }\noperations:\n  - operation: listThings\n    description: Read-only. Lists things. Cannot change them.\n";
    let options = connectorgen_core::Options {
        manifest_dir: Some(dir.path().to_path_buf()),
        ..Default::default()
    };
    let analysis =
        connectorgen_core::analyze_with("big.yaml", std::sync::Arc::new(manifest.into()), &options)
            .unwrap();
    assert!(!analysis.has_errors(), "{:?}", analysis.diagnostics);
    let outputs = analysis.outputs.unwrap();
    let tools: serde_json::Value = serde_json::from_str(&outputs["mcp-tools.json"]).unwrap();
    let properties = tools[0]["inputSchema"]["properties"].as_object().unwrap();
    // 12,000 shared, of which 6,000 replaced, and 12,000 own.
    assert_eq!(properties.len(), 18_000);
    assert!(properties.contains_key("s1") && properties.contains_key("o1"));
}

/// A base document over 2 MB (the project's stand-in for the real 3.4 MB ones of the
/// real-document suite): the batches example's document padded with 2.5 MB of component
/// schemas nothing refers to builds, with every target, to exactly the outputs of the
/// document itself: the padding is read and parsed, then left out.
#[test]
fn a_document_over_two_megabytes_builds_to_what_its_operations_reach() {
    use connectorgen_core::model::Target;
    use serde_json::{Value, json};
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = std::fs::read_to_string(example("multipart-upload-batches.yaml")).unwrap();
    let document =
        std::fs::read_to_string(root.join("examples/specs/multipart-upload-batches.json")).unwrap();
    let mut padded: Value = serde_json::from_str(&document).unwrap();
    let schemas = padded["components"]["schemas"].as_object_mut().unwrap();
    let mut added = 0;
    for i in 0.. {
        if added > 2_500_000 {
            break;
        }
        let schema = json!({
            "type": "object",
            "description": "Nothing refers to this schema. ".repeat(20),
            "properties": { "a": { "type": "string" }, "b": { "$ref": "#/components/schemas/Padding0" } },
        });
        added += schema.to_string().len();
        schemas.insert(format!("Padding{i}"), schema);
    }
    let padded = serde_json::to_string_pretty(&padded).unwrap();
    assert!(padded.len() > 2 << 20, "{} bytes", padded.len());
    let build = |text: &str| {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("specs")).unwrap();
        std::fs::create_dir_all(dir.path().join("manifests")).unwrap();
        std::fs::write(dir.path().join("specs/multipart-upload-batches.json"), text).unwrap();
        let options = connectorgen_core::Options {
            targets: Some(<Target as strum::VariantArray>::VARIANTS.to_vec()),
            manifest_dir: Some(dir.path().join("manifests")),
            allow_read: vec![dir.path().join("specs")],
            ..connectorgen_core::Options::default()
        };
        connectorgen_core::generate_with(
            "multipart-upload-batches.yaml",
            std::sync::Arc::new(manifest.clone()),
            &options,
        )
        .unwrap_or_else(|e| panic!("{e}"))
    };
    assert_eq!(build(&padded), build(&document));
}
