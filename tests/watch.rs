//! `build --watch` as a user runs it: it rebuilds once for each real change of what a
//! build reads (the manifest, the folder its `templates:` names), never for anything
//! else written beside them (its own log, an editor's swap file, unrelated files, a save
//! of the same bytes), and survives a bad manifest.
//!
//! No sleeps: the test waits on what it can observe. The child's stdout and stderr lines
//! arrive on a channel; the test's own file-system watch on the folder shows when the
//! watcher has read its inputs again after the writes that must change nothing. Every
//! wait has a generous deadline that only catches a hang. The child is killed when the
//! test ends, passed or failed.

use crate::support::cli;

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use cli::{bin, root};
use notify::{EventKind, RecursiveMode, Watcher as _};

/// Only a hang takes this long.
const HANG: Duration = Duration::from_secs(120);

/// Kills the child when the test ends, also when it fails, so no watcher outlives it.
struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[derive(Debug, PartialEq)]
enum Line {
    Out(String),
    Err(String),
}

struct Session {
    dir: PathBuf,
    child: KillOnDrop,
    lines: Receiver<Line>,
    /// What the test's own watch on the folder saw: (kind, file name).
    seen: Receiver<(EventKind, String)>,
    _watch: notify::RecommendedWatcher,
    /// Markers written so far, to tell the test's own events from the watcher's.
    markers: usize,
}

impl Session {
    fn start(dir: &Path) -> Session {
        Session::start_with(dir, &[])
    }

    /// `build --watch` with `args` added.
    fn start_with(dir: &Path, args: &[&str]) -> Session {
        let (events, seen) = channel();
        let mut watch = notify::recommended_watcher(move |e: notify::Result<notify::Event>| {
            if let Ok(e) = e {
                for path in &e.paths {
                    let name = path.file_name().unwrap_or_default().to_string_lossy();
                    let _ = events.send((e.kind, name.into_owned()));
                }
            }
        })
        .unwrap();
        watch.watch(dir, RecursiveMode::NonRecursive).unwrap();

        let mut child = bin()
            .args(["build", "--watch", "--color", "never"])
            .args(args)
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (tx, lines) = channel();
        let out = child.stdout.take().unwrap();
        let err = child.stderr.take().unwrap();
        let tx2 = tx.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                let _ = tx.send(Line::Out(line));
            }
        });
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                let _ = tx2.send(Line::Err(line));
            }
        });
        Session {
            dir: dir.to_path_buf(),
            child: KillOnDrop(child),
            lines,
            seen,
            _watch: watch,
            markers: 0,
        }
    }

    /// The next line of stdout or stderr.
    fn next(&self, what: &str) -> Line {
        self.lines
            .recv_timeout(HANG)
            .unwrap_or_else(|_| panic!("no output from the watcher while waiting for {what}"))
    }

    /// The next stdout line, which must be a rebuild's success line; stderr lines before
    /// it are returned too.
    fn rebuilt(&self, what: &str) -> Vec<String> {
        let mut stderr = Vec::new();
        loop {
            match self.next(what) {
                Line::Out(line) => {
                    assert!(line.starts_with("wrote "), "{what}: {line:?}");
                    return stderr;
                }
                Line::Err(line) => stderr.push(line),
            }
        }
    }

    /// Stderr lines up to the one containing `needle`; fails on any stdout line (a
    /// build) before it.
    fn failed(&self, needle: &str) -> Vec<String> {
        let mut stderr = Vec::new();
        loop {
            match self.next(needle) {
                Line::Out(line) => panic!("built while waiting for {needle:?}: {line:?}"),
                Line::Err(line) => {
                    let done = line.contains(needle);
                    stderr.push(line);
                    if done {
                        return stderr;
                    }
                }
            }
        }
    }

    /// Waits until the test's watch reports `kind` for `name`.
    fn saw(&self, what: &str, name: &str, kind: impl Fn(&EventKind) -> bool) {
        let deadline = Instant::now() + HANG;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let (k, n) = self
                .seen
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("timed out waiting for {what}"));
            if n == name && kind(&k) {
                return;
            }
        }
    }

    /// Writes what a build does not read, then waits until the watcher has read its
    /// inputs again (it opens connector.yaml to compare it with what it built). A
    /// watcher that rebuilds on these writes has started that build by then, and its
    /// line comes before the next real change's.
    fn write_what_changes_nothing(&mut self, log_line: &str) {
        let manifest = std::fs::read(self.dir.join("connector.yaml")).unwrap();
        save(&self.dir.join("connector.yaml"), manifest).unwrap();
        let mut log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join("build.log"))
            .unwrap();
        writeln!(log, "{log_line}").unwrap();
        std::fs::write(self.dir.join(".connector.yaml.swp"), log_line).unwrap();
        std::fs::write(self.dir.join("notes.txt"), log_line).unwrap();
        std::fs::write(self.dir.join("tpl/README.md"), log_line).unwrap();
        std::fs::write(self.dir.join("tpl/.llms.txt.j2.swp"), log_line).unwrap();
        std::fs::write(self.dir.join("generated/notes.txt"), log_line).unwrap();
        // Everything the test did so far, its own opening of connector.yaml included,
        // is reported before this marker.
        self.markers += 1;
        let marker = format!("marker-{}", self.markers);
        std::fs::write(self.dir.join(&marker), "").unwrap();
        self.saw("the marker", &marker, |k| matches!(k, EventKind::Create(_)));
        self.saw(
            "the watcher to read connector.yaml",
            "connector.yaml",
            |k| matches!(k, EventKind::Access(notify::event::AccessKind::Open(_))),
        );
    }

    fn read(&self, file: &str) -> String {
        std::fs::read_to_string(self.dir.join(file)).unwrap_or_default()
    }
}

/// Replaces a file the way editors save: the new text in a temporary file beside it,
/// then a rename. A plain write truncates first, and a watcher that reads the file in
/// that instant rightly sees an empty (invalid) manifest and then a change back, which
/// would be a rebuild the test did not ask for.
fn save(path: &Path, contents: impl AsRef<[u8]>) -> std::io::Result<()> {
    let name = path.file_name().unwrap().to_string_lossy();
    let temporary = path.with_file_name(format!(".{name}.saving"));
    std::fs::write(&temporary, contents)?;
    std::fs::rename(&temporary, path)
}

#[test]
fn watch_rebuilds_once_per_real_change_and_never_otherwise() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let manifest = std::fs::read_to_string(root().join("examples/manifests/placeholder.yaml"))
        .unwrap()
        + "templates: tpl\n";
    save(&dir.join("connector.yaml"), &manifest).unwrap();
    std::fs::create_dir(dir.join("tpl")).unwrap();
    let mut s = Session::start(dir);
    let llms = "generated/llms.txt";

    s.rebuilt("the first build");
    assert!(s.read(llms).contains("List the person's things"));
    match s.next("the watching line") {
        Line::Out(line) => assert!(line.starts_with("watching connector.yaml"), "{line}"),
        other @ Line::Err(_) => panic!("{other:?}"),
    }

    // A real change of the manifest: exactly one rebuild, the next line.
    s.write_what_changes_nothing("wrote once");
    save(
        &dir.join("connector.yaml"),
        manifest.replace("List the person's things", "List every thing"),
    )
    .unwrap();
    s.rebuilt("a rebuild after the manifest changed");
    assert!(s.read(llms).contains("List every thing"));
    let good = s.read(llms);

    // A bad manifest: reported, nothing written, still watching.
    s.write_what_changes_nothing("wrote twice");
    save(
        &dir.join("connector.yaml"),
        manifest.replace("pollWith: demoGetJob", "pollWith: nope"),
    )
    .unwrap();
    let stderr = s.failed("nothing was written").join("\n");
    assert!(stderr.contains("unknown-poll-target"), "{stderr}");
    assert_eq!(s.read(llms), good, "the last good outputs stay");

    s.write_what_changes_nothing("error: nothing was written");
    save(&dir.join("connector.yaml"), &manifest).unwrap();
    s.rebuilt("recovery");
    assert!(s.read(llms).contains("List the person's things"));

    // A real change in the folder the manifest's `templates:` names.
    s.write_what_changes_nothing("wrote thrice");
    let template =
        std::fs::read_to_string(root().join("crates/connectorgen-core/templates/llms.txt.j2"))
            .unwrap();
    save(
        &dir.join("tpl/llms.txt.j2"),
        template + "\nA custom closing line.\n",
    )
    .unwrap();
    s.rebuilt("a rebuild after a template changed");
    assert!(s.read(llms).contains("A custom closing line."));

    // And once more nothing: the next thing the watcher prints must be nothing at all,
    // which shows once it is killed and its output ends.
    s.write_what_changes_nothing("wrote four times");
    let _ = s.child.0.kill();
    let _ = s.child.0.wait();
    let rest: Vec<Line> = s.lines.iter().collect();
    assert!(
        rest.iter().all(|l| !matches!(l, Line::Out(_))),
        "rebuilt without a change: {rest:?}"
    );
}

/// Issue 21, defect 9: with `--out .` beside a base document named `openapi.json`, each
/// build replaced the document it had read, which woke the watcher, which built again,
/// forever. The build refuses to write over its input, so there is nothing to wake it:
/// the first thing it says is the refusal (a watcher that wrote would say "wrote"
/// first), the document is untouched, and a real change gives one refusal more.
#[test]
fn watch_never_rebuilds_from_its_own_output() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let yaml = std::fs::read_to_string(root().join("tests/cases/specs/jobs.yaml")).unwrap();
    let document = connectorgen_core::manifest::parse_value(&yaml)
        .unwrap()
        .to_string();
    std::fs::write(dir.join("openapi.json"), &document).unwrap();
    let manifest = "version: 1\nopenapi: openapi.json\nservice:\n  dashboardUrl: https://jobs.example/account/keys\noperations:\n  - operation: jobs.get\n";
    std::fs::write(dir.join("connector.yaml"), manifest).unwrap();
    // Folders `write_what_changes_nothing` writes into.
    std::fs::create_dir(dir.join("tpl")).unwrap();
    std::fs::create_dir(dir.join("generated")).unwrap();
    let refusal = "it is the base OpenAPI document this build reads";
    let mut s = Session::start_with(dir, &["--out", "."]);
    // The refusal (stderr) and then the watching line (stdout, printed once the watch
    // is set up); the two streams may arrive in either order.
    let (mut refused, mut watching) = (false, false);
    while !(refused && watching) {
        match s.next("the first build and the watching line") {
            Line::Err(line) if line.contains(refusal) => {
                assert!(line.contains("could not write ./openapi.json"), "{line}");
                refused = true;
            }
            Line::Err(_) => {}
            Line::Out(line) => {
                assert!(line.starts_with("watching connector.yaml"), "{line}");
                watching = true;
            }
        }
    }
    assert_eq!(s.read("openapi.json"), document);

    s.write_what_changes_nothing("nothing to see");
    std::fs::write(
        dir.join("connector.yaml"),
        manifest.replace("jobs.get", "jobs.list"),
    )
    .unwrap();
    s.failed(refusal);
    assert_eq!(s.read("openapi.json"), document);
    assert!(!dir.join("llms.txt").exists(), "nothing written");

    let _ = s.child.0.kill();
    let _ = s.child.0.wait();
    let rest: Vec<Line> = s.lines.iter().collect();
    assert!(
        rest.iter()
            .all(|l| !matches!(l, Line::Out(_)) && !format!("{l:?}").contains(refusal)),
        "built again without a change: {rest:?}"
    );
}
