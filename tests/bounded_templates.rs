//! Templates run within bounds: a templates folder comes with the manifest, from the
//! same pull request, and a template is a program. docs/guarantees.md, "Bounded
//! templates".

use crate::support::cli;
use crate::support::sets;

use std::path::Path;
use std::process::{Command, Output};

use cli::{NO_HANG, build, names, plain as bin, run_within, says, text};
use sets::example;

// ---- Bounded templates ----------------------------------------------------------------

/// Template attacks a pull request can bring in the manifest's own `templates:` folder:
/// each would run for hours or take gigabytes without a bound.
const RUNAWAY_TEMPLATES: [(&str, &str); 10] = [
    (
        "nested loops",
        "{% for a in range(10000) %}{% for b in range(10000) %}{% for c in range(10000) %}x{% endfor %}{% endfor %}{% endfor %}",
    ),
    (
        "join in a loop",
        "{% for a in range(10000) %}{{ range(10000)|join(',') }}{% endfor %}",
    ),
    (
        "string doubling through namespace",
        "{% set ns = namespace(s='x') %}{% for i in range(100) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s }}",
    ),
    // Issue 21, defect 7: minijinja 3.1.0 adds sequences lazily, then copies the whole
    // chain once it is 33 additions deep, and charges that copy only after making it
    // (1.6 GB in 90 s, then out of memory; without the guard this test's 1 GiB cap
    // aborts the process, exit 134, after 35 s). The render memory bound of our own
    // (connectorgen-core's render/memory.rs) stops each of these, in the packaged
    // crate too (scripts/ci-distribution.sh runs this test against it).
    (
        "list doubling through namespace",
        "{% set ns = namespace(l=[1]) %}{% for i in range(100) %}{% set ns.l = ns.l + ns.l %}{% endfor %}{{ ns.l|length }}",
    ),
    (
        "list doubling through chain",
        "{% set ns = namespace(l=[1]) %}{% for i in range(100) %}{% set ns.l = ns.l|chain(ns.l) %}{% endfor %}{{ ns.l|length }}",
    ),
    (
        "list doubling through sum",
        "{% set ns = namespace(l=[1]) %}{% for i in range(100) %}{% set ns.l = [ns.l, ns.l]|sum(start=[]) %}{% endfor %}{{ ns.l|length }}",
    ),
    (
        "list doubling in 40 sets in a row",
        "{% set l = [1] %}{% set l = l + l %}{% set l = l + l %}{% set l = l + l %}{% set l = l + l %}{% set l = l + l %}{% set l = l + l %}{% set l = l + l %}{% set l = l + l %}{% set l = l + l %}{% set l = l + l %}{% set l = l + l %}{% set l = l + l %}{% set l = l + l %}{% set l = l + l %}{% set l = l + l %}{% set l = l + l %}{% set l = l + l %}{% set l = l + l %}{% set l = l + l %}{% set l = l + l %}{% set l = l + l %}{% set l = l + l %}{% set l = l + l %}{% set l = l + l %}{% set l = l + l %}{% set l = l + l %}{% set l = l + l %}{% set l = l + l %}{% set l = l + l %}{% set l = l + l %}{% set l = l + l %}{% set l = l + l %}{% set l = l + l %}{% set l = l + l %}{% set l = l + l %}{% set l = l + l %}{% set l = l + l %}{% set l = l + l %}{% set l = l + l %}{% set l = l + l %}{{ l|length }}",
    ),
    (
        "list doubling through a recursive macro",
        "{% macro f(l, n) %}{% if n %}{{ f(l + l, n - 1) }}{% else %}{{ l|length }}{% endif %}{% endmacro %}{{ f([1], 40) }}",
    ),
    ("string multiplication", "{{ 'x' * 10**9 }}"),
    (
        "a flood of output",
        "{% for a in range(10000) %}{% for b in range(10000) %}{{ 'x' * 1000 }}{% endfor %}{% endfor %}",
    ),
];

/// A folder holding `connector.yaml` (the video example) with `templates: tpl/`, whose
/// `llms.txt.j2` is `template`, and the outputs of a normal build of it.
fn workspace_with_template(template: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let yaml = std::fs::read_to_string(example("video.yaml")).unwrap();
    std::fs::write(dir.path().join("connector.yaml"), &yaml).unwrap();
    assert_eq!(build(dir.path(), &[]).status.code(), Some(0));
    std::fs::write(
        dir.path().join("connector.yaml"),
        format!("{yaml}\ntemplates: tpl/\n"),
    )
    .unwrap();
    std::fs::create_dir(dir.path().join("tpl")).unwrap();
    std::fs::write(dir.path().join("tpl/llms.txt.j2"), template).unwrap();
    dir
}

/// Every file in `dir/generated`, by name.
fn generated(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let out = dir.join("generated");
    names(&out)
        .into_iter()
        .map(|n| {
            let bytes = std::fs::read(out.join(&n)).unwrap();
            (n, bytes)
        })
        .collect()
}

/// The binary the attacks run against: `CONNECTORGEN_TEST_BIN` when set (the packaged
/// crate's build, scripts/ci-distribution.sh), else the one Cargo built for this test.
#[cfg(target_os = "linux")]
fn under_test() -> std::ffi::OsString {
    std::env::var_os("CONNECTORGEN_TEST_BIN")
        .unwrap_or_else(|| env!("CARGO_BIN_EXE_connectorgen").into())
}

/// Runs connectorgen with `args` in `dir`, its address space capped at 1 GiB (an
/// allocation past that aborts the process, failing the test), within the hang bound.
#[cfg(target_os = "linux")]
fn run_capped(dir: &Path, args: &str) -> Output {
    let mut cmd = Command::new("sh");
    cmd.current_dir(dir)
        .env("NO_COLOR", "1")
        .arg("-c")
        .arg(format!(r#"ulimit -v 1048576 && exec "$0" {args}"#))
        .arg(under_test());
    // Four times the usual bound: a list doubling walks its copy for about 10 s in a debug
    // build alone, and past 30 s when the full suite shares two cores with other builds
    // (seen three times this round). The bound only catches a hang.
    run_within(cmd, NO_HANG * 4).0
}

/// Each attack stops with the default limits (the list doublings with a quarter of the
/// default fuel, for time), as a template error (exit 1) that names
/// the template and the flag that raises the limit, and nothing is written. Measured speed is in docs/guarantees.md; the bound here only
/// catches a hang.
#[cfg(target_os = "linux")]
#[test]
fn runaway_templates_stop_at_the_limits_and_write_nothing() {
    for (attack, template) in RUNAWAY_TEMPLATES {
        let dir = workspace_with_template(template);
        let before = generated(dir.path());
        // Fuel also pays for output (one per 64 bytes), so the default fuel stops a flood
        // too; with fuel to spare, the output limit is what stops it.
        let (flag, extra) = if attack == "a flood of output" {
            ("--max-template-output", " --template-fuel 1000000000")
        } else if attack.starts_with("list doubling") {
            // The memory bound is the fuel's price (render/memory.rs): at the default
            // fuel, 244 MiB, a debug build under the full suite's load walks the copy for
            // over 30 s (10 s alone, docs/guarantees.md); a quarter of it is 61 MiB.
            ("--template-fuel", " --template-fuel 1000000")
        } else {
            ("--template-fuel", "")
        };
        // Every command reports both limits the same way (one path, `Source::analyze`):
        // `check` and `explain` run the two quick attacks, one per limit.
        let commands: &[&str] = match attack {
            "string multiplication" | "a flood of output" => &["build", "check", "explain --list"],
            _ => &["build"],
        };
        for command in commands {
            let out = run_capped(dir.path(), &format!("{command}{extra}"));
            let stderr = text(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{attack}, {command}: {stderr}");
            assert!(
                says(&stderr, "template `llms.txt.j2`") && says(&stderr, flag),
                "{attack}, {command}: names the template and {flag}: {stderr}"
            );
            // minijinja drops the location of a failed write; running out of fuel keeps
            // it. The memory bound stops the process inside the engine's copy, where no
            // location is known: it says what it measured instead.
            if attack.starts_with("list doubling") {
                assert!(
                    says(&stderr, "MiB of memory besides its output"),
                    "{attack}: names the memory it held: {stderr}"
                );
            } else if flag == "--template-fuel" {
                assert!(
                    says(&stderr, "llms.txt.j2:1:"),
                    "{attack}: points into the template: {stderr}"
                );
            }
            assert!(!stderr.contains("panicked"), "{stderr}");
            assert_eq!(
                generated(dir.path()),
                before,
                "{attack}, {command}: nothing written"
            );
        }
    }
}

/// Issue 21, defect 4: a 200 KB template of 50,000 `not`, unary minus or 100,000 chained
/// filters overflowed the stack while minijinja parsed it (SIGABRT, exit 134). Its
/// nesting is measured before parsing: a template error naming the place, and nothing
/// written.
#[test]
fn deeply_nested_templates_are_a_template_error_not_a_crash() {
    for (attack, template) in [
        ("not", format!("{{{{ {}true }}}}", "not ".repeat(50_000))),
        (
            "unary minus",
            format!("{{{{ {}1 }}}}", "- ".repeat(100_000)),
        ),
        ("filters", format!("{{{{ 'x'{} }}}}", "|e".repeat(100_000))),
    ] {
        let dir = workspace_with_template(&template);
        let before = generated(dir.path());
        let out = build(dir.path(), &[]);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{attack}: {stderr}");
        assert!(
            says(
                &stderr,
                "template `llms.txt.j2`: an expression nests more than 256 levels"
            ) && says(&stderr, "llms.txt.j2:1:"),
            "{attack}: {stderr}"
        );
        assert_eq!(generated(dir.path()), before, "{attack}: nothing written");
    }
}

/// The limits are the user's to set, both ways (lowered and raised on `build`:
/// tests/cmd/template-limits.trycmd), and `check` names them in the command that updates
/// the outputs.
#[test]
fn template_limits_can_be_lowered_and_raised() {
    let dir = workspace_with_template(RUNAWAY_TEMPLATES[0].1);
    let mut cmd = bin();
    cmd.current_dir(dir.path())
        .args(["check", "--template-fuel", "1000"]);
    let (out, _) = run_within(cmd, NO_HANG);
    assert!(
        says(&text(&out.stderr), "the run's budget of 1000"),
        "{}",
        text(&out.stderr)
    );
    std::fs::write(dir.path().join("tpl/llms.txt.j2"), "{{ 'x' * 100 }}\n").unwrap();
    let mut cmd = bin();
    cmd.current_dir(dir.path()).args([
        "check",
        "--template-fuel",
        "5000",
        "--max-template-output",
        "64K",
    ]);
    let (out, _) = run_within(cmd, NO_HANG);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "llms.txt drifted: {stdout}");
    assert!(
        stdout.contains("--template-fuel 5000 --max-template-output 65536"),
        "the fix command keeps the limits: {stdout}"
    );
}
