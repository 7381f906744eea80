//! `build --watch`: `build`, then again after every change to what the last build read.
//!
//! Takes the parsed command line (`Ui`, `Common`, `--force`) from main.rs and runs each
//! build exactly as `build` does (`Source::analyze_reading`, then `write_outputs`).
//! Returns `Ok(ExitCode::SUCCESS)` only when the watcher's channel closes, and
//! `Failure::Fatal` (exit 2) when the folders cannot be watched; the exit code itself is
//! main.rs's to give.
//!
//! Must never exit, nor remove or touch the outputs, because one build failed: a bad
//! manifest, a failed template or a failed write is reported on stderr as `build`
//! reports it, and the last good outputs stay on disk. Must never rebuild on its own
//! reads, on its own outputs or on a save of the same bytes, and never use
//! `exit_without_freeing` (it keeps running).

use std::path::PathBuf;
use std::process::ExitCode;

use connectorgen_core::{Input, terminal};

use crate::build::write_outputs;
use crate::{Common, Failure, Ui, fatal, render_template_error, shown};

/// `build --watch`: build, then rebuild whenever what a build read (the manifest, its
/// templates) holds something else. Never exits on a bad manifest: the last good outputs
/// stay on disk.
///
/// Events only say where to look: after each burst, every input is read again and
/// compared with what the last build read, so a log or a swap file written beside the
/// manifest, our own outputs and saves of the same bytes rebuild nothing. The inputs
/// come from the build itself, so a manifest that changes its `templates:` is watched
/// anew.
pub(crate) fn watch_build(ui: &Ui, common: &Common, force: bool) -> Result<ExitCode, Failure> {
    use notify::event::{AccessKind, AccessMode};
    use notify::{EventKind, RecursiveMode, Watcher as _};

    /// Events that follow one another this closely are one save (editors write, rename
    /// and touch), read once.
    const SETTLE: std::time::Duration = std::time::Duration::from_millis(200);

    let once = |ui: &Ui| {
        let mut inputs = Vec::new();
        match common
            .source
            .analyze_reading(&common.manifest, &mut inputs, true)
            .and_then(|analysis| write_outputs(ui, common, &analysis, &inputs, force))
        {
            Ok(_) => {}
            Err(Failure::Fatal(m)) => ui.err(&format!("error: {}\n", terminal::one_line(&m))),
            Err(Failure::Template(e)) => {
                ui.err(&render_template_error(&e, ui.colored(&std::io::stderr())));
            }
        }
        inputs
    };
    let mut inputs = once(ui);
    let (tx, rx) = std::sync::mpsc::channel();
    let mut watcher = notify::recommended_watcher(tx).map_err(fatal)?;
    let manifest_dir = match common.manifest.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    watcher
        .watch(&manifest_dir, RecursiveMode::NonRecursive)
        .map_err(fatal)?;
    let mut watched = std::collections::BTreeSet::from([manifest_dir.clone()]);
    // Folders that do not exist yet (a `templates:` folder still to be made) are retried
    // after each build; their parent folder sees them appear.
    let mut rewatch = |inputs: &[Input]| {
        let wanted: std::collections::BTreeSet<PathBuf> = inputs
            .iter()
            .flat_map(Input::folders)
            .chain([manifest_dir.clone()])
            .collect();
        for gone in watched.difference(&wanted) {
            let _ = watcher.unwatch(gone);
        }
        watched.retain(|dir| wanted.contains(dir));
        for dir in wanted {
            if !watched.contains(&dir) && watcher.watch(&dir, RecursiveMode::NonRecursive).is_ok() {
                watched.insert(dir);
            }
        }
    };
    rewatch(&inputs);
    ui.note(&format!(
        "watching {} for changes (Ctrl-C to stop)\n",
        shown(&common.manifest)
    ));
    // Reading a file is an event too (open, close after reading): never one to look
    // at, or our own reads below would wake us again. Closing after a write is kept.
    let wakes = |event: &notify::Result<notify::Event>| {
        event.as_ref().is_ok_and(|e| match e.kind {
            EventKind::Access(access) => access == AccessKind::Close(AccessMode::Write),
            _ => true,
        })
    };
    while let Ok(event) = rx.recv() {
        if !wakes(&event) {
            continue;
        }
        let settled = std::time::Instant::now() + SETTLE;
        while let Some(left) = settled.checked_duration_since(std::time::Instant::now()) {
            if rx.recv_timeout(left).is_err() {
                break;
            }
        }
        if inputs.iter().any(Input::changed) {
            inputs = once(ui);
            rewatch(&inputs);
        }
    }
    Ok(ExitCode::SUCCESS)
}
