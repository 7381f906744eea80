//! The hardening promises of `connectorgen build`, tested on the binary as a user runs
//! it: every byte of a manifest is untrusted, and whatever it holds the run ends with a
//! clear diagnostic or correct output, in bounded time and memory, with the files
//! already on disk intact. docs/GUARANTEES.md lists each promise with its test here.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use connectorgen::generate;
use connectorgen::render::Outputs;

/// Tests that time the binary run one at a time, so parallel tests do not skew them.
static TIMED: Mutex<()> = Mutex::new(());

/// A bound that only catches a hang or a runaway, never a slow machine: how fast bombs
/// are rejected (under 0.1 s in a release build) is a measured figure, stated in
/// README "Guarantees", not a timed test that would flake when CI shares the machine.
/// The memory bound, which is deterministic, is enforced with `ulimit -v` instead.
const NO_HANG: Duration = Duration::from_secs(30);

fn bin() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_connectorgen"));
    cmd.env("NO_COLOR", "1");
    cmd
}

/// Runs to completion, or fails the test if it takes longer than `limit` (a hang must
/// fail the test, not stall it).
fn run_within(mut cmd: Command, limit: Duration) -> (Output, Duration) {
    let start = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    // Drain both pipes on threads so a chatty child cannot block on a full pipe.
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = out.read_to_end(&mut buf);
        buf
    });
    let err_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = err.read_to_end(&mut buf);
        buf
    });
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("still running after {limit:?}: {cmd:?}");
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let elapsed = start.elapsed();
    let output = Output {
        status,
        stdout: out_reader.join().unwrap(),
        stderr: err_reader.join().unwrap(),
    };
    (output, elapsed)
}

fn build(dir: &Path, args: &[&str]) -> Output {
    let mut cmd = bin();
    cmd.current_dir(dir).arg("build").args(args);
    run_within(cmd, Duration::from_secs(60)).0
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Diagnostic text without whitespace or miette's gutter, so a phrase can be found
/// wherever the report wrapped it.
fn squash(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_whitespace() && *c != '│')
        .collect()
}

/// Whether `stderr` says `phrase`, however it was wrapped.
fn says(stderr: &str, phrase: &str) -> bool {
    squash(stderr).contains(&squash(phrase))
}

/// Exit 2 and exactly one line on stderr, starting `error: ` and containing `expect`.
fn assert_one_line_exit_2(out: &Output, expect: &str) {
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    assert!(
        stderr.starts_with("error: ") && stderr.contains(expect),
        "expected {expect:?} in {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/manifests")
        .join(name)
}

fn case(path: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/cases")
            .join(path),
    )
    .unwrap()
}

/// The names in a folder, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Every output file's bytes, read back from `dir`.
fn on_disk(dir: &Path, outputs: &Outputs) -> Vec<Vec<u8>> {
    outputs
        .keys()
        .map(|name| std::fs::read(dir.join(name)).unwrap())
        .collect()
}

/// A valid manifest whose outputs are several megabytes, so that writing them takes a
/// while: `ops` operations with `filler` bytes of description each. `tag` makes two
/// versions differ in every file.
fn large_manifest(ops: usize, filler: usize, tag: &str) -> String {
    let mut yaml = format!(
        "version: 1\nservice:\n  name: Large {tag}\n  version: 1.0.0\n  description: A large connector ({tag}).\n  publicUrl: https://api.large.example\n  dashboardUrl: https://large.example/tokens\noperations:\n"
    );
    let words = "Read-only and free to repeat; it never changes anything. ".repeat(filler / 57 + 1);
    for i in 0..ops {
        yaml.push_str(&format!(
            "  - id: getThing{i}\n    method: get\n    path: /v1/things{i}/{{id}}\n    summary: Read thing {i} ({tag})\n    description: \"{words}\"\n"
        ));
    }
    yaml
}

fn outputs_of(yaml: &str) -> Outputs {
    generate("connector.yaml", Arc::new(yaml.to_string())).expect("the manifest is valid")
}

// ---- Resource limits ------------------------------------------------------------------

#[test]
fn manifest_over_max_bytes_is_refused_before_reading() {
    let dir = tempfile::tempdir().unwrap();
    // Sparse: 200 MiB by its metadata, no disk used. Reading it would take a while;
    // refusing it must not.
    let big = std::fs::File::create(dir.path().join("big.yaml")).unwrap();
    big.set_len(200 << 20).unwrap();
    let _timed = TIMED.lock().unwrap_or_else(|e| e.into_inner());
    let mut cmd = bin();
    cmd.current_dir(dir.path()).args(["build", "big.yaml"]);
    let (out, elapsed) = run_within(cmd, Duration::from_secs(10));
    assert_one_line_exit_2(
        &out,
        "big.yaml is larger than the 128 MiB limit (134217728 bytes); if the manifest is legitimate, raise the limit with --max-bytes (e.g. --max-bytes 256M)",
    );
    assert!(elapsed < NO_HANG, "took {elapsed:?}");

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

/// Runs a manifest with the address space capped at 100 MiB (more than that and an
/// allocation fails and the process aborts) and checks it is rejected within `limit`
/// with a `yaml-limit` diagnostic, writing nothing. Returns stderr.
fn rejected_within(yaml: &str, limit: Duration) -> String {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bomb.yaml"), yaml).unwrap();
    let mut cmd = Command::new("sh");
    cmd.current_dir(dir.path())
        .env("NO_COLOR", "1")
        .arg("-c")
        .arg(r#"ulimit -v 102400 && exec "$0" build bomb.yaml"#)
        .arg(env!("CARGO_BIN_EXE_connectorgen"));
    let _timed = TIMED.lock().unwrap_or_else(|e| e.into_inner());
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

#[test]
fn unreadable_inputs_give_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("latin1.yaml"),
        b"version: 1\nname: caf\xe9\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("utf16.yaml"), b"\xff\xfev\x00e\x00").unwrap();
    std::fs::create_dir(dir.path().join("folder.yaml")).unwrap();
    let mut cases = vec![
        (
            "latin1.yaml",
            "latin1.yaml is not UTF-8 text (invalid byte at line 2, column 10); save it as UTF-8",
        ),
        (
            "utf16.yaml",
            "utf16.yaml is not UTF-8 text (invalid byte at line 1, column 1), it looks like UTF-16",
        ),
        (
            "folder.yaml",
            "folder.yaml is not a regular file (it is a folder)",
        ),
        (
            "missing/parent/connector.yaml",
            "cannot read missing/parent/connector.yaml",
        ),
    ];
    #[cfg(unix)]
    {
        let fifo = dir.path().join("fifo.yaml");
        let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(made.success());
        cases.push((
            "fifo.yaml",
            "fifo.yaml is not a regular file (it is a FIFO (named pipe))",
        ));
        cases.push((
            "/dev/zero",
            "/dev/zero is not a regular file (it is a character device)",
        ));
    }
    for (manifest, expect) in cases {
        let mut cmd = bin();
        cmd.current_dir(dir.path()).args(["build", manifest]);
        // A FIFO with no writer, or /dev/zero, must not hang or fill memory.
        let (out, _) = run_within(cmd, Duration::from_secs(10));
        assert_one_line_exit_2(&out, expect);
    }
    assert!(!dir.path().join("generated").exists(), "nothing written");
}

// ---- Nothing lost ---------------------------------------------------------------------

/// A write that fails part-way (a full disk; here the file-size limit, which fails a
/// write with EFBIG the same way) removes the temporary files and leaves the previous
/// outputs complete.
#[cfg(target_os = "linux")]
#[test]
fn failed_write_leaves_previous_outputs_intact() {
    let dir = tempfile::tempdir().unwrap();
    let yaml = large_manifest(300, 10, "new");
    std::fs::write(dir.path().join("connector.yaml"), &yaml).unwrap();
    let out_dir = dir.path().join("generated");
    std::fs::create_dir(&out_dir).unwrap();
    let previous = ["descriptions.md", "llms.txt", "openapi.json"];
    for name in previous {
        std::fs::write(out_dir.join(name), format!("previous {name}\n")).unwrap();
    }
    // Files are written in name order; openapi.json, the last, is by far the largest. A
    // size limit between it and the others fails the set on its last file, after two
    // temporary files were written in full.
    let outputs = outputs_of(&yaml);
    let (small, large) = (
        outputs["descriptions.md"]
            .len()
            .max(outputs["llms.txt"].len()),
        outputs["openapi.json"].len(),
    );
    assert!(2 * small < large, "{small} {large}");
    let blocks = (small + large) / 2 / 512;
    let mut cmd = Command::new("sh");
    cmd.current_dir(dir.path())
        .env("NO_COLOR", "1")
        .arg("-c")
        // SIGXFSZ ignored: the write fails with EFBIG instead of killing the process.
        // `ulimit -f` counts 512-byte blocks in POSIX sh.
        .arg(format!(
            r#"trap '' XFSZ; ulimit -f {blocks} && exec "$0" build connector.yaml"#
        ))
        .arg(env!("CARGO_BIN_EXE_connectorgen"));
    let (out, _) = run_within(cmd, Duration::from_secs(60));
    assert_one_line_exit_2(
        &out,
        "could not write generated/openapi.json: File too large",
    );
    for name in previous {
        assert_eq!(
            std::fs::read_to_string(out_dir.join(name)).unwrap(),
            format!("previous {name}\n")
        );
    }
    assert_eq!(names(&out_dir), previous, "no temporary file left");
}

/// SIGKILL at the moment a build's temporary files appear (and at other moments): every
/// output is still complete, either the previous one or the new one, and the next build
/// clears what the killed one left.
#[cfg(unix)]
#[test]
fn killed_build_leaves_previous_outputs_complete() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("generated");
    let old_yaml = large_manifest(100, 10_000, "old");
    let new_yaml = large_manifest(100, 10_000, "new");
    let old = outputs_of(&old_yaml);
    let new = outputs_of(&new_yaml);
    let manifest = dir.path().join("connector.yaml");
    std::fs::write(&manifest, &old_yaml).unwrap();
    assert_eq!(build(dir.path(), &[]).status.code(), Some(0));
    assert_eq!(
        on_disk(&out_dir, &old),
        old.values()
            .map(|v| v.as_bytes().to_vec())
            .collect::<Vec<_>>()
    );
    std::fs::write(&manifest, &new_yaml).unwrap();

    let mut killed_while_writing = 0;
    for attempt in 0..4 {
        let mut child: Child = bin()
            .current_dir(dir.path())
            .arg("build")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Odd attempts: kill as soon as a temporary file exists. Even ones: at a fixed
        // delay, wherever the build is then.
        let start = Instant::now();
        let mut saw_temp = false;
        loop {
            if attempt % 2 == 1 {
                saw_temp = std::fs::read_dir(&out_dir)
                    .unwrap()
                    .flatten()
                    .any(|e| e.file_name().to_string_lossy().starts_with('.'));
                if saw_temp {
                    break;
                }
            } else if start.elapsed() >= Duration::from_millis(20 * attempt) {
                break;
            }
            if child.try_wait().unwrap().is_some() || start.elapsed() > Duration::from_secs(60) {
                break;
            }
        }
        let _ = child.kill();
        let status = child.wait().unwrap();
        if saw_temp && status.code().is_none() {
            killed_while_writing += 1;
        }
        for (name, bytes) in old.keys().zip(on_disk(&out_dir, &old)) {
            assert!(
                bytes == old[name].as_bytes() || bytes == new[name].as_bytes(),
                "attempt {attempt}: {name} is neither the previous nor the new file ({} bytes)",
                bytes.len()
            );
        }
        // Back to the old outputs for the next attempt, through a normal build.
        std::fs::write(&manifest, &old_yaml).unwrap();
        assert_eq!(build(dir.path(), &[]).status.code(), Some(0));
        assert_eq!(
            names(&out_dir),
            ["descriptions.md", "llms.txt", "openapi.json"],
            "stale temporary files are cleared"
        );
        std::fs::write(&manifest, &new_yaml).unwrap();
    }
    assert!(
        killed_while_writing > 0,
        "no kill landed while temporary files existed"
    );
}

/// Two builds of different manifests into one folder at the same time, many times over,
/// with a reader watching: every file read is one build's complete file, and when both
/// are done the folder holds one build's complete set.
#[test]
fn concurrent_builds_never_mix_or_truncate() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("generated");
    let yamls = [
        large_manifest(50, 10_000, "a"),
        large_manifest(50, 10_000, "b"),
    ];
    let sets: Vec<Outputs> = yamls.iter().map(|y| outputs_of(y)).collect();
    // Same file name in two folders: the name is part of the outputs.
    for (i, yaml) in yamls.iter().enumerate() {
        std::fs::create_dir(dir.path().join(i.to_string())).unwrap();
        std::fs::write(dir.path().join(format!("{i}/connector.yaml")), yaml).unwrap();
    }
    assert_eq!(
        build(dir.path(), &["0/connector.yaml", "--out", "generated"])
            .status
            .code(),
        Some(0)
    );

    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reader = {
        let (done, out_dir, sets) = (done.clone(), out_dir.clone(), sets.clone());
        std::thread::spawn(move || {
            let mut reads = 0;
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                for name in sets[0].keys() {
                    let bytes = std::fs::read(out_dir.join(name)).unwrap();
                    assert!(
                        sets.iter().any(|set| set[name].as_bytes() == bytes),
                        "{name} read mixed or truncated ({} bytes)",
                        bytes.len()
                    );
                    reads += 1;
                }
            }
            reads
        })
    };
    for round in 0..6 {
        let spawn = |i: usize| {
            bin()
                .current_dir(dir.path())
                .args([
                    "build",
                    &format!("{i}/connector.yaml"),
                    "--out",
                    "generated",
                ])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        };
        let (a, b) = if round % 2 == 0 {
            (spawn(0), spawn(1))
        } else {
            (spawn(1), spawn(0))
        };
        for child in [a, b] {
            let out = child.wait_with_output().unwrap();
            assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        }
        let files = on_disk(&out_dir, &sets[0]);
        assert!(
            sets.iter().any(|set| set
                .values()
                .map(|v| v.as_bytes().to_vec())
                .collect::<Vec<_>>()
                == files),
            "round {round}: the folder holds a mix of two builds"
        );
        assert_eq!(
            names(&out_dir),
            ["descriptions.md", "llms.txt", "openapi.json"]
        );
    }
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    assert!(reader.join().unwrap() > 0);
}

#[cfg(unix)]
#[test]
fn symlink_outside_output_folder_is_refused() {
    use std::os::unix::fs::symlink;
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(example("video.yaml"), dir.path().join("connector.yaml")).unwrap();
    let out_dir = dir.path().join("generated");
    std::fs::create_dir(&out_dir).unwrap();
    let outside = dir.path().join("precious.txt");
    std::fs::write(&outside, "do not overwrite").unwrap();
    symlink(&outside, out_dir.join("openapi.json")).unwrap();
    let out = build(dir.path(), &[]);
    assert_one_line_exit_2(
        &out,
        &format!(
            "could not write generated/openapi.json: it is a symbolic link to {}, outside the output folder",
            outside.canonicalize().unwrap().display()
        ),
    );
    assert_eq!(
        std::fs::read_to_string(&outside).unwrap(),
        "do not overwrite"
    );
    assert_eq!(names(&out_dir), ["openapi.json"], "nothing else written");

    // A link inside the folder is followed, and kept.
    std::fs::remove_file(out_dir.join("openapi.json")).unwrap();
    std::fs::create_dir(out_dir.join("v1")).unwrap();
    std::fs::write(out_dir.join("v1/openapi.json"), "old").unwrap();
    symlink("v1/openapi.json", out_dir.join("openapi.json")).unwrap();
    let out = build(dir.path(), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        std::fs::symlink_metadata(out_dir.join("openapi.json"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(
        std::fs::read_to_string(out_dir.join("v1/openapi.json"))
            .unwrap()
            .starts_with('{')
    );
}

// ---- Clean failure surface ------------------------------------------------------------

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
        let mut child = bin()
            .current_dir(dir.path())
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
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
    std::fs::write(dir.path().join("file.txt"), "a file").unwrap();

    // A parent of the output folder is a file.
    let out = build(dir.path(), &["--out", "file.txt/generated"]);
    assert_one_line_exit_2(
        &out,
        "could not create the output folder file.txt/generated",
    );

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

    // A folder without write permission (skipped when running as root, which may write anyway).
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let locked = dir.path().join("locked");
        std::fs::create_dir(&locked).unwrap();
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o555)).unwrap();
        if std::fs::write(locked.join("probe"), "").is_err() {
            let out = build(dir.path(), &["--out", "locked"]);
            assert_one_line_exit_2(&out, "could not write locked/");
            assert_eq!(names(&locked), Vec::<String>::new());
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
