//! Nothing already on disk is lost: all-or-nothing sets of outputs, builds killed at
//! every step, concurrent builds, symbolic links, and the user's own files beside the
//! outputs. docs/guarantees.md, "Nothing lost".

use crate::support::cli;
use crate::support::sets;

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use cli::{ChildGuard, assert_one_line_exit_2, build, names, plain as bin, run_within, text};
use connectorgen_core::render::Outputs;
use sets::{example, large_manifest, on_disk, outputs_of};

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
    let blocks = usize::midpoint(small, large) / 512;
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

/// The three files of the muse target, in the order they are written and renamed.
const OUTPUTS: [&str; 3] = ["descriptions.md", "llms.txt", "openapi.json"];

/// Files of the user's in the output folder that look like temporary files (the same
/// length of suffix as atomic-write-file's random names, which builds used to delete).
const USER_FILES: [&str; 2] = [".openapi.json.backup", ".llms.txt.drafts"];

/// A folder whose `generated/` holds the outputs of `old` (built) and the user's files,
/// with `connector.yaml` holding `new`.
fn kill_workspace(old: &str, new: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("generated");
    std::fs::create_dir(&out_dir).unwrap();
    for name in USER_FILES {
        std::fs::write(out_dir.join(name), format!("the user's {name}\n")).unwrap();
    }
    std::fs::write(dir.path().join("connector.yaml"), old).unwrap();
    assert_eq!(build(dir.path(), &[]).status.code(), Some(0));
    std::fs::write(dir.path().join("connector.yaml"), new).unwrap();
    dir
}

/// Spawns `build` in `dir` with the pause hook at `point` (src/output.rs), waits until
/// it says it is there, and returns it, paused.
fn build_paused_at(dir: &Path, point: &str) -> ChildGuard {
    use std::io::BufRead as _;
    let mut child = ChildGuard::spawn(
        bin()
            .current_dir(dir)
            .arg("build")
            .env("CONNECTORGEN_PAUSE_AT", point)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped()),
    );
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let expected = format!("connectorgen: paused at {point}");
    std::thread::spawn(move || {
        let mut seen = String::new();
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            if line == expected {
                let _ = tx.send(Ok(()));
                return;
            }
            seen.push_str(&line);
            seen.push('\n');
        }
        let _ = tx.send(Err(seen));
    });
    match rx.recv_timeout(Duration::from_secs(120)) {
        Ok(Ok(())) => child,
        Ok(Err(stderr)) => panic!("the build ended before {point}: {stderr}"),
        Err(e) => panic!("the build did not reach {point} within 2 minutes ({e})"),
    }
}

/// SIGKILL, and wait until the process is gone.
fn kill(mut child: ChildGuard) {
    child.kill().unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), None, "killed by a signal");
}

/// What a killed build left in `out_dir`, judged against the two complete sets: which
/// outputs are new, and whether its journal is there. Fails the test on a file that is
/// neither the old nor the new one, on a mix of the two without a journal, and on a
/// user's file gone or changed.
fn judge(out_dir: &Path, old: &Outputs, new: &Outputs, when: &str) -> (Vec<bool>, bool) {
    let fresh: Vec<bool> = OUTPUTS
        .iter()
        .map(|name| {
            let bytes = std::fs::read(out_dir.join(name)).unwrap();
            assert!(
                bytes == old[*name].as_bytes() || bytes == new[*name].as_bytes(),
                "{when}: {name} is neither the previous nor the new file ({} bytes)",
                bytes.len()
            );
            bytes == new[*name].as_bytes()
        })
        .collect();
    let journal = out_dir.join(".connectorgen-journal.json").exists();
    let mixed = fresh.iter().any(|f| *f) && fresh.iter().any(|f| !*f);
    assert!(
        !mixed || journal,
        "{when}: a mix of two builds without a journal: {fresh:?}"
    );
    for name in USER_FILES {
        assert_eq!(
            std::fs::read_to_string(out_dir.join(name)).unwrap(),
            format!("the user's {name}\n"),
            "{when}: the user's file survives"
        );
    }
    (fresh, journal)
}

/// Every file in a folder, by name, with its bytes.
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    names(dir)
        .into_iter()
        .map(|n| {
            let bytes = std::fs::read(dir.join(&n)).unwrap();
            (n, bytes)
        })
        .collect()
}

/// `check` of the new manifest after a kill: it writes nothing, passes only on the
/// complete new set, and says so when the set was interrupted.
fn check_after_kill(dir: &Path, fresh: &[bool], journal: bool, when: &str) {
    let out_dir = dir.join("generated");
    let before = snapshot(&out_dir);
    let mut cmd = bin();
    cmd.current_dir(dir).arg("check");
    let (out, _) = run_within(cmd, Duration::from_secs(120));
    let stdout = text(&out.stdout);
    assert_eq!(snapshot(&out_dir), before, "{when}: check wrote nothing");
    let all_new = fresh.iter().all(|f| *f);
    assert_eq!(
        out.status.code(),
        Some(i32::from(!all_new)),
        "{when}: {stdout}"
    );
    if journal && !all_new {
        assert!(
            stdout.contains("was interrupted while it replaced the files"),
            "{when}: check says the set was interrupted: {stdout}"
        );
    }
}

/// The folder holds exactly the outputs, the record of their manifest and the user's
/// files: no temporary file, no journal.
fn assert_clean(out_dir: &Path, when: &str) {
    let mut expected: Vec<String> = OUTPUTS
        .iter()
        .chain(&USER_FILES)
        .chain(&[".connectorgen-manifest"])
        .map(std::string::ToString::to_string)
        .collect();
    expected.sort();
    assert_eq!(names(out_dir), expected, "{when}");
}

/// SIGKILL at every step of writing the set, each reached through the pause hook
/// rather than by timing: after each temporary file, after the journal, after each
/// rename. The set on disk is then exactly the previous one until the first rename, a
/// mix of whole files with the journal beside it from there, and `check` (which writes
/// nothing) reports it; the next build finishes it and leaves nothing behind but the
/// outputs and the user's own files.
#[cfg(unix)]
#[test]
fn a_build_killed_at_each_step_leaves_a_whole_set_or_a_journal() {
    let (old_yaml, new_yaml) = (
        large_manifest(30, 2_000, "old"),
        large_manifest(30, 2_000, "new"),
    );
    let (old, new) = (outputs_of(&old_yaml), outputs_of(&new_yaml));
    assert_eq!(old.keys().collect::<Vec<_>>(), OUTPUTS);
    let dir = kill_workspace(&old_yaml, &new_yaml);
    let out_dir = dir.path().join("generated");
    let steps = [
        ("temporary:1", [false, false, false], false),
        ("temporary:2", [false, false, false], false),
        ("temporary:3", [false, false, false], false),
        ("journal", [false, false, false], true),
        ("renamed:1", [true, false, false], true),
        ("renamed:2", [true, true, false], true),
        ("renamed:3", [true, true, true], true),
    ];
    for (point, expected_fresh, expected_journal) in steps {
        kill(build_paused_at(dir.path(), point));
        let (fresh, journal) = judge(&out_dir, &old, &new, point);
        assert_eq!(
            fresh, expected_fresh,
            "killed at {point}: which files are new"
        );
        assert_eq!(journal, expected_journal, "killed at {point}: the journal");
        check_after_kill(dir.path(), &fresh, journal, point);
        // The next build (here of the previous manifest, to start the next step from
        // it) first finishes the interrupted set, then writes its own.
        std::fs::write(dir.path().join("connector.yaml"), &old_yaml).unwrap();
        let out = build(dir.path(), &[]);
        assert_eq!(out.status.code(), Some(0), "{point}: {}", text(&out.stderr));
        assert_eq!(
            on_disk(&out_dir, &old),
            old.values()
                .map(|v| v.as_bytes().to_vec())
                .collect::<Vec<_>>()
        );
        assert_clean(&out_dir, point);
        std::fs::write(dir.path().join("connector.yaml"), &new_yaml).unwrap();
    }
}

/// The next build finishes an interrupted set before anything of its own: killed right
/// after its first temporary file, it leaves the interrupted build's complete set; and
/// killed while finishing, it leaves the journal for the build after it.
#[cfg(unix)]
#[test]
fn the_next_build_finishes_an_interrupted_set_first() {
    let (old_yaml, new_yaml) = (
        large_manifest(30, 2_000, "old"),
        large_manifest(30, 2_000, "new"),
    );
    let (old, new) = (outputs_of(&old_yaml), outputs_of(&new_yaml));
    let dir = kill_workspace(&old_yaml, &new_yaml);
    let out_dir = dir.path().join("generated");

    kill(build_paused_at(dir.path(), "renamed:1"));
    std::fs::write(dir.path().join("connector.yaml"), &old_yaml).unwrap();
    kill(build_paused_at(dir.path(), "recovered:2"));
    let (fresh, journal) = judge(&out_dir, &old, &new, "killed while finishing");
    assert_eq!((fresh, journal), (vec![true, true, false], true));

    kill(build_paused_at(dir.path(), "temporary:1"));
    let (fresh, journal) = judge(&out_dir, &old, &new, "killed after finishing");
    assert_eq!(
        (fresh, journal),
        (vec![true, true, true], false),
        "the new set, whole"
    );

    let out = build(dir.path(), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_clean(&out_dir, "after a complete build");
}

/// SIGKILL at many moments, stepped through the part of a build that writes: each
/// build is held at its first temporary file (the pause hook), released, and killed
/// after 0, 1, 2, … 23 ms, which lands in writing, flushing, the journal and renames.
/// The builds alternate between two manifests, so each starts from what the killed one
/// before it left (and finishes it first). Wherever a kill lands, every file is one of
/// the two versions and a mix has its journal; a last build leaves a clean folder.
/// Where each kill lands depends on the machine; what is asserted does not.
#[cfg(unix)]
#[test]
fn builds_killed_at_stepped_moments_never_leave_an_unmarked_mix() {
    let yamls = [
        large_manifest(100, 10_000, "a"),
        large_manifest(100, 10_000, "b"),
    ];
    let sets = [outputs_of(&yamls[0]), outputs_of(&yamls[1])];
    let dir = kill_workspace(&yamls[0], &yamls[1]);
    let out_dir = dir.path().join("generated");
    let mut landed = std::collections::BTreeMap::new();
    for step in 0..24 {
        let (new, old) = if step % 2 == 0 { (1, 0) } else { (0, 1) };
        std::fs::write(dir.path().join("connector.yaml"), &yamls[new]).unwrap();
        let mut child = build_paused_at(dir.path(), "temporary:1");
        drop(child.stdin.take());
        std::thread::sleep(Duration::from_millis(step));
        let _ = child.kill();
        let status = child.wait().unwrap();
        let when = format!("killed {step} ms after its first temporary file");
        let (fresh, journal) = judge(&out_dir, &sets[old], &sets[new], &when);
        let state = match (status.code(), fresh.iter().filter(|f| **f).count(), journal) {
            (Some(0), _, _) => "finished".to_string(),
            (_, n, j) => format!("{n} of 3 new, journal {j}"),
        };
        *landed.entry(state).or_insert(0) += 1;
    }
    assert_eq!(build(dir.path(), &[]).status.code(), Some(0));
    assert_clean(&out_dir, "after the last build");
    // Where the kills landed, for whoever reads the test output.
    eprintln!("kill outcomes: {landed:?}");
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
            ChildGuard::spawn(
                bin()
                    .current_dir(dir.path())
                    // Two manifests into one folder: forced, so that each may take it
                    // over and what is tested is that they never mix.
                    .args([
                        "build",
                        &format!("{i}/connector.yaml"),
                        "--out",
                        "generated",
                        "--force",
                    ])
                    .stdout(Stdio::null())
                    .stderr(Stdio::piped()),
            )
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
        let whose = sets.iter().position(|set| {
            set.values()
                .map(|v| v.as_bytes().to_vec())
                .collect::<Vec<_>>()
                == files
        });
        assert!(
            whose.is_some(),
            "round {round}: the folder holds a mix of two builds"
        );
        assert_eq!(
            names(&out_dir),
            [
                ".connectorgen-manifest",
                "descriptions.md",
                "llms.txt",
                "openapi.json"
            ]
        );
        // The record of the folder's manifest is part of the same set.
        assert_eq!(
            std::fs::read_to_string(out_dir.join(".connectorgen-manifest")).unwrap(),
            format!("../{}/connector.yaml\n", whose.unwrap_or_default()),
            "round {round}: the record names the manifest whose set is on disk"
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
