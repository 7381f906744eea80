//! How findings and other text reach the terminal and stdout, run against the binary as
//! a user does: a finding far along a very long line, thousands of findings, control
//! and bidi characters from the manifest, and writes to stdout that fail.

use crate::support::cli;

use std::path::Path;
use std::process::{Output, Stdio};

use cli::{bin, run, text, workspace};
use connectorgen_core::report::DETAILED_PER_CODE;
use serde_json::{Value, json};

/// The service block every generated manifest here shares (valid, lint-clean).
fn service(description: &str) -> Value {
    json!({
        "name": "Probe",
        "version": "1.0.0",
        "description": description,
        "publicUrl": "https://probe.example",
        "dashboardUrl": "https://probe.example/settings"
    })
}

/// Characters that must never reach a terminal raw: C0 controls but tab and newline,
/// DEL, C1 controls (U+0085 among them), bidi overrides, isolates and marks, and the
/// Unicode line and paragraph separators.
fn is_raw_control(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{8}' | '\u{b}'..='\u{1f}' | '\u{7f}'..='\u{9f}'
        | '\u{61c}' | '\u{200e}' | '\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

fn assert_no_raw_controls(what: &str, output: &str) {
    if let Some((i, c)) = output.char_indices().find(|&(_, c)| is_raw_control(c)) {
        let from = output[..i].rfind('\n').map_or(0, |n| n + 1);
        panic!(
            "{what}: raw {:?} reaches the terminal in line {:?}",
            c,
            &output[from..output[i..].find('\n').map_or(output.len(), |n| i + n)]
        );
    }
}

/// The display column (0-based) of each character of a snippet line: every character
/// these tests put in a snippet is one column wide.
fn column_of(line: &str, needle: &str) -> usize {
    let byte = line
        .find(needle)
        .unwrap_or_else(|| panic!("{needle:?} in {line:?}"));
    line[..byte].chars().count()
}

/// The snippet line numbered `number` and the underline drawn below it.
fn snippet_and_underline(stderr: &str, number: usize) -> (&str, &str) {
    let lines: Vec<&str> = stderr.lines().collect();
    let prefix = format!(" {number} │ ");
    let i = lines
        .iter()
        .position(|l| l.starts_with(&prefix))
        .unwrap_or_else(|| panic!("no snippet line {number} in:\n{stderr}"));
    (lines[i], lines[i + 1])
}

/// Where the first caret mark of an underline starts.
fn caret_column(underline: &str) -> usize {
    underline
        .chars()
        .skip(4) // the gutter's ` · ` and its padding hold no marks
        .position(|c| matches!(c, '─' | '┬' | '▲'))
        .map_or_else(|| panic!("no caret in {underline:?}"), |p| p + 4)
}

#[test]
fn finding_past_column_65535_is_clipped_around_its_value() {
    let dir = tempfile::tempdir().unwrap();
    // One line of JSON, the warning's value past column 65,535 (80,002 characters in,
    // 120,002 bytes: columns count characters).
    let padding = format!("{}{} Read-only.", "é".repeat(40_000), "a".repeat(40_000));
    let doc = json!({
        "version": 1,
        "service": service(&padding),
        "operations": [{
            "id": "listThings", "method": "get", "path": "/v1/things",
            "summary": "List the person's things", "description": "Returns things."
        }]
    });
    let line = serde_json::to_string(&doc).unwrap();
    std::fs::write(dir.path().join("long.json"), &line).unwrap();
    let value = "\"Returns things.\"";
    let expected_col = line[..line.find(value).unwrap()].chars().count() + 1;
    assert!(expected_col > 80_000);

    let out = run(dir.path(), &["build", "long.json"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("missing-limit"), "{stderr}");
    assert!(
        stderr.contains(&format!("[long.json:1:{expected_col}]")),
        "names the real line and column: {stderr}"
    );
    assert!(
        stderr.len() < 4_000,
        "a {} byte line is clipped, not printed: {} bytes of stderr",
        line.len(),
        stderr.len()
    );
    let (snippet, underline) = snippet_and_underline(&stderr, 1);
    assert!(snippet.contains('…'), "the clip is marked: {snippet}");
    assert_eq!(
        caret_column(underline),
        column_of(snippet, value),
        "the caret is under the value:\n{snippet}\n{underline}"
    );

    // `check` draws the same finding (on stdout), and the JSON report agrees on the place.
    let out = run(dir.path(), &["check", "long.json"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}{stdout}", text(&out.stderr));
    assert!(
        stdout.contains(&format!("[long.json:1:{expected_col}]")),
        "{stdout}"
    );
    let out = run(dir.path(), &["check", "long.json", "--format", "json"]);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["diagnostics"][0]["line"], 1);
    assert_eq!(report["diagnostics"][0]["column"], expected_col);
}

#[test]
fn tabs_in_a_snippet_line_keep_the_caret_under_the_value() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = format!(
        "version: 1\nservice: {}\noperations:\n  - {{ id: listThings, method: get, path: /v1/things, summary: \"List\tthe\tthings\", description: \"Returns things.\" }}\n",
        service("Read-only probe.")
    );
    std::fs::write(dir.path().join("connector.yaml"), manifest).unwrap();
    let out = run(dir.path(), &["build"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let (snippet, underline) = snippet_and_underline(&stderr, 4);
    assert!(
        !snippet.contains('\t') && !snippet.contains("\\u{9}"),
        "tabs are drawn as spaces: {snippet:?}"
    );
    assert_eq!(
        caret_column(underline),
        column_of(snippet, "\"Returns things.\""),
        "\n{snippet}\n{underline}"
    );
}

/// `count` operations, each with one finding of each listed code.
fn many_findings(count: usize) -> String {
    let operations: Vec<Value> = (0..count)
        .flat_map(|i| {
            [
                // missing-limit: a GET that does not say what it will not do
                json!({ "id": format!("listThings{i}"), "method": "get", "path": format!("/v1/things{i}"),
                        "summary": "List the person's things", "description": "Returns things." }),
                // mutating-without-limit: a POST that does not spend and says no limit
                json!({ "id": format!("createThing{i}"), "method": "post", "path": format!("/v1/things{i}"),
                        "summary": "Create one new thing", "description": "Creates a thing." }),
            ]
        })
        .collect();
    let doc = json!({ "version": 1, "service": service("Probe."), "operations": operations });
    // One operation per line, as a person would write it.
    let mut yaml = format!(
        "version: 1\nservice: {}\noperations:\n",
        serde_json::to_string(&doc["service"]).unwrap()
    );
    for op in doc["operations"].as_array().unwrap() {
        yaml.push_str(&format!("  - {op}\n"));
    }
    yaml
}

#[test]
fn many_findings_show_a_bounded_number_in_detail_per_code() {
    let dir = tempfile::tempdir().unwrap();
    let count = DETAILED_PER_CODE * 3 + 7;
    std::fs::write(dir.path().join("connector.yaml"), many_findings(count)).unwrap();

    let out = run(dir.path(), &["build"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    for code in ["missing-limit", "mutating-without-limit"] {
        let detailed = stderr.lines().filter(|l| *l == code).count();
        assert_eq!(detailed, DETAILED_PER_CODE, "{code} in detail:\n{stderr}");
        let more = format!("and {} more `{code}` findings", count - DETAILED_PER_CODE);
        assert_eq!(stderr.matches(&more).count(), 1, "{more:?} in:\n{stderr}");
    }
    // Detailed findings stay in file order: the first of each code is shown.
    assert!(stderr.contains("`listThings0`") && stderr.contains("`createThing0`"));
    assert!(!stderr.contains(&format!("`listThings{}`", count - 1)));

    // The machine formats keep every finding; the summary counts them all.
    let out = run(dir.path(), &["check", "--format", "json"]);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["diagnostics"].as_array().unwrap().len(), 2 * count);
    let out = run(dir.path(), &["check", "--format", "github"]);
    assert_eq!(text(&out.stdout).matches("::warning ").count(), 2 * count);
    let out = run(dir.path(), &["check"]);
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains(&format!("0 errors, {} warnings", 2 * count)),
        "{stdout}"
    );
    assert_eq!(
        stdout.lines().filter(|l| *l == "missing-limit").count(),
        DETAILED_PER_CODE
    );
}

/// Decoded from YAML escapes: ESC with a window-title and a clear-screen sequence, BEL,
/// CSI as a C1 control, NUL, CR, the right-to-left override, NEL and the line separator.
const HOSTILE_ESCAPED: &str = r"\e]0;pwned\a\e[2J\x9b31m\0\r\u202e\x85\u2028";

#[test]
fn control_characters_from_the_manifest_are_escaped_visibly() {
    let dir = tempfile::tempdir().unwrap();
    // Raw in the file: the bidi override, NEL and the line separator are printable YAML.
    let manifest = format!(
        "version: 1\nservice:\n  name: \"Probe {HOSTILE_ESCAPED}\"\n  version: 1.0.0\n  description: Probe.\n  publicUrl: https://probe.example\n  dashboardUrl: https://probe.example/settings\noperations:\n  - id: listThings\n    method: get\n    path: /v1/things\n    summary: \"List the {HOSTILE_ESCAPED} things\"\n    description: \"Returns things \u{202e}gnp.exe\u{85}\u{2028}\u{2066} {HOSTILE_ESCAPED}.\"\n"
    );
    std::fs::write(dir.path().join("connector.yaml"), &manifest).unwrap();

    let out = run(dir.path(), &["build"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("missing-limit"), "{stderr}");
    assert_no_raw_controls("build's snippet", &stderr);
    assert!(stderr.contains("\\u{202e}gnp.exe\\u{85}"), "{stderr}");

    for args in [
        &["explain", "listThings"][..],
        &["explain", "--list"],
        &["check"],
        &["check", "--format", "github"],
    ] {
        let out = run(dir.path(), args);
        let stdout = text(&out.stdout);
        assert_no_raw_controls(&format!("{args:?}"), &stdout);
        assert_no_raw_controls(&format!("{args:?} (stderr)"), &text(&out.stderr));
    }
    let explained = text(&run(dir.path(), &["explain", "listThings"]).stdout);
    assert!(
        explained.contains("List the \\u{1b}]0;pwned\\u{7}\\u{1b}[2J\\u{9b}31m\\u{0}\\u{d}\\u{202e}\\u{85}\\u{2028} things"),
        "{explained}"
    );

    // Drift: a generated file changed on disk to hold an escape sequence.
    let llms = dir.path().join("generated/llms.txt");
    let changed = std::fs::read_to_string(&llms).unwrap() + "\u{1b}]0;title\u{7}\n";
    std::fs::write(&llms, changed).unwrap();
    for format in ["human", "github"] {
        let out = run(dir.path(), &["check", "--format", format]);
        assert_eq!(out.status.code(), Some(1));
        let stdout = text(&out.stdout);
        assert!(
            stdout.contains("\\u{1b}]0;title\\u{7}"),
            "{format}: {stdout}"
        );
        assert_no_raw_controls(&format!("check --format {format} (drift)"), &stdout);
    }
}

#[test]
fn control_characters_in_messages_are_escaped_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = format!(
        "version: 1\nservice:\n  name: Probe\n  \"{HOSTILE_ESCAPED}\": 1\n  version: 1.0.0\n"
    );
    std::fs::write(dir.path().join("connector.yaml"), &manifest).unwrap();
    let key = "\u{1b}]0;pwned\u{7}\u{1b}[2J\u{9b}31m\u{0}\r\u{202e}\u{85}\u{2028}";

    let out = run(dir.path(), &["build"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("unknown-key"), "{stderr}");
    assert_no_raw_controls("build", &stderr);
    let visible = "\\u{1b}]0;pwned\\u{7}\\u{1b}[2J\\u{9b}31m\\u{0}\\u{d}\\u{202e}\\u{85}\\u{2028}";
    assert!(stderr.contains(visible), "{stderr}");

    let out = run(dir.path(), &["check", "--format", "github"]);
    let stdout = text(&out.stdout);
    assert_no_raw_controls("github", &stdout);
    assert!(stdout.contains(visible), "{stdout}");

    // JSON and SARIF keep the exact text as data, written with \u escapes.
    for format in ["json", "sarif"] {
        let out = run(dir.path(), &["check", "--format", format]);
        let stdout = text(&out.stdout);
        assert_no_raw_controls(format, &stdout);
        let report: Value = serde_json::from_str(&stdout).unwrap();
        let message = match format {
            "json" => &report["diagnostics"][0]["message"],
            _ => &report["runs"][0]["results"][0]["message"]["text"],
        };
        assert!(
            message.as_str().unwrap().contains(&format!("`{key}`")),
            "{format}: {message}"
        );
    }

    // A raw escape byte in the file is a YAML error; its snippet shows it escaped.
    std::fs::write(
        dir.path().join("raw.yaml"),
        "version: 1\nservice:\n  name: Probe\u{1b}]0;pwned\u{7}\n",
    )
    .unwrap();
    let out = run(dir.path(), &["build", "raw.yaml"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert_no_raw_controls("yaml-syntax", &stderr);
    assert!(stderr.contains("Probe\\u{1b}]0;pwned\\u{7}"), "{stderr}");
}

/// Each command that prints to stdout, from a folder holding a built manifest.
const PRINTING: &[&[&str]] = &[
    &["build"],
    &["check"],
    &["check", "--format", "json"],
    &["check", "--format", "github"],
    &["check", "--format", "sarif"],
    &["explain", "createVideo"],
    &["explain", "--list"],
    &["schema"],
    &["completions", "bash"],
    &["templates", "export", "exported", "--force"],
    &["init", "started.yaml", "--force"],
    &["--help"],
    &["build", "--help"],
    &["--version"],
];

fn run_with_stdout(dir: &Path, args: &[&str], stdout: impl Into<Stdio>) -> Output {
    bin()
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .stdout(stdout)
        .stderr(Stdio::piped())
        .output()
        .expect("the binary runs")
}

#[test]
#[cfg(target_os = "linux")]
fn failed_write_to_stdout_is_exit_2_with_one_line() {
    let dir = workspace("examples/manifests/video.yaml", true);
    // Every command is tried, and every one that misbehaves is named.
    let mut wrong = Vec::new();
    for args in PRINTING {
        // /dev/full fails every write with ENOSPC, as a full disk does.
        let full = std::fs::File::options()
            .write(true)
            .open("/dev/full")
            .expect("/dev/full exists on Linux");
        let out = run_with_stdout(dir.path(), args, full);
        let stderr = text(&out.stderr);
        if out.status.code() != Some(2)
            || stderr.lines().count() != 1
            || !stderr.starts_with("error: could not write to stdout: ")
        {
            wrong.push(format!("{args:?}: {:?} {stderr:?}", out.status.code()));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // --quiet prints nothing on success, so there is nothing to fail.
    let full = std::fs::File::options()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = run_with_stdout(dir.path(), &["build", "--quiet"], full);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

#[test]
fn closed_stdout_is_quiet_and_keeps_the_exit_code() {
    let dir = workspace("examples/manifests/video.yaml", true);
    for args in PRINTING {
        // A check that fails still fails when nobody reads its report (`build` above
        // it in the list rewrites the file, so make it stale each time).
        let expected = if args[0] == "check" {
            std::fs::write(dir.path().join("generated/llms.txt"), "stale\n").unwrap();
            1
        } else {
            0
        };
        // The reading end is closed before the child starts: its first write meets it.
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = run_with_stdout(dir.path(), args, writer);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(expected), "{args:?}: {stderr}");
        assert!(stderr.is_empty(), "{args:?}: {stderr}");
    }
}

/// Issue 21, defect 11: the success lines of `init FILE`, `templates export DIR`,
/// `build --out DIR` and `import SPEC -o FILE` printed the path raw, so a file name
/// holding an ESC window-title sequence reached the terminal. Each is escaped now, as
/// error lines are, and a line break in a name cannot start a line of its own.
#[cfg(unix)]
#[test]
fn paths_in_success_lines_are_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    let hostile = "t\u{1b}]0;owned\u{7}\n::error ::x";
    let escaped = "t\\u{1b}]0;owned\\u{7}\\u{a}::error ::x";
    let manifest = format!("{hostile}.yaml");
    let runs: [Vec<&str>; 4] = [
        vec!["init", &manifest],
        vec!["templates", "export", hostile],
        vec!["build", &manifest, "--out", hostile],
        vec![
            "import",
            "spec.yaml",
            "-o",
            hostile,
            "--dashboard-url",
            "https://jobs.example/keys",
        ],
    ];
    std::fs::copy(
        cli::root().join("tests/cases/specs/jobs.yaml"),
        p.join("spec.yaml"),
    )
    .unwrap();
    for args in runs {
        if args[0] == "import" {
            // The folder export made is in the way of the manifest import writes.
            std::fs::remove_dir_all(p.join(hostile)).unwrap();
        }
        let out = run(p, &args);
        let stdout = text(&out.stdout);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert_no_raw_controls(&format!("{args:?}"), &stdout);
        assert!(stdout.contains(escaped), "{args:?}: {stdout}");
        assert!(
            !stdout.lines().any(|l| l.starts_with("::")),
            "{args:?}: {stdout}"
        );
    }
}
