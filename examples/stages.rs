//! Where `build` spends its time: each pipeline stage timed in-process.
//!
//! ```sh
//! cargo run --release --example synth -- --ops 10000 --seed 42 > /tmp/big.yaml
//! cargo run --release --example stages -- /tmp/big.yaml --runs 5
//! ```
//!
//! Takes: a manifest path, `--runs N` (default 5) and `--out DIR` (default: a fresh
//! folder under the system temp folder, removed at the end). Prints: a Markdown table
//! with the median, minimum and maximum of each stage over N runs, then the build total
//! (sum of the stage medians) against the baseline.
//!
//! Stages, in the order `connectorgen build` runs them: read (`input::read_manifest`),
//! parse (`manifest::parse`), validate (`validate::validate`), render (`render::render`
//! with the default templates and the manifest's targets), lint
//! (`lint::run`), write (`output::write_all`), then drop (freeing the raw manifest, the
//! model and the outputs; `build` itself exits without freeing the model and outputs, so
//! it pays only for the raw manifest, whose schemas validation has moved out). After
//! a build, `check` compares the same outputs with the files just written: that is the
//! "drift" row (`check::drift`), so `check` ≈ read … lint + drift + drop.
//!
//! Baseline: serde-saphyr parsing the same text into a `serde_json::Value` with no
//! budget and no spans: the least any build could spend merely reading the YAML.
//!
//! Memory: a counting global allocator reports, per stage (first run), the heap still
//! held when the stage ends and the highest heap reached while it ran. The process's
//! peak RSS is a little above the highest of these (code, stacks, allocator slack).
//!
//! Must never: write anywhere but the output folder.

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::time::{Duration, Instant};

use connectorgen_core::{check, input, lint, manifest, output, render, templates, validate};

/// The system allocator, counting live bytes and their high-water mark.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded unchanged to `System`; only counters are added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let live = LIVE.fetch_add(layout.size(), Relaxed) + layout.size();
            PEAK.fetch_max(live, Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size >= layout.size() {
                let live =
                    LIVE.fetch_add(new_size - layout.size(), Relaxed) + new_size - layout.size();
                PEAK.fetch_max(live, Relaxed);
            } else {
                LIVE.fetch_sub(layout.size() - new_size, Relaxed);
            }
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// One stage of one run: wall time, heap held at its end, highest heap during it.
#[derive(Clone, Copy, Default)]
struct Sample {
    time: Duration,
    live: usize,
    peak: usize,
}

struct Args {
    manifest: PathBuf,
    runs: usize,
    out: Option<PathBuf>,
}

fn parse_args() -> Result<Args, String> {
    let mut manifest = None;
    let mut runs = 5;
    let mut out = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--runs" => {
                let v = args.next().ok_or("--runs needs a value")?;
                runs = v
                    .parse()
                    .map_err(|e| format!("--runs {v}: {e} (expected a whole number)"))?;
                if runs == 0 {
                    return Err("--runs must be at least 1".to_string());
                }
            }
            "--out" => out = Some(PathBuf::from(args.next().ok_or("--out needs a value")?)),
            "-h" | "--help" => return Err(String::new()),
            other if other.starts_with('-') => return Err(format!("unknown option `{other}`")),
            other => manifest = Some(PathBuf::from(other)),
        }
    }
    Ok(Args {
        manifest: manifest.ok_or("give the manifest to time")?,
        runs,
        out,
    })
}

/// One run's time per stage, in table order.
const STAGES: [&str; 9] = [
    "read",
    "parse",
    "validate",
    "render",
    "lint",
    "write",
    "drift (check)",
    "drop",
    "baseline: serde-saphyr → serde_json::Value",
];

fn time<T>(f: impl FnOnce() -> T) -> (T, Sample) {
    PEAK.store(LIVE.load(Relaxed), Relaxed);
    let start = Instant::now();
    let value = f();
    let time = start.elapsed();
    let sample = Sample {
        time,
        live: LIVE.load(Relaxed),
        peak: PEAK.load(Relaxed),
    };
    (value, sample)
}

fn run_once(manifest: &Path, out: &Path) -> Result<[Sample; 9], String> {
    let shown = manifest.display();
    let (text, read) = time(|| input::read_manifest(manifest, input::DEFAULT_MAX_BYTES));
    let text = text.map_err(|e| e.to_string())?;
    let (raw, parse) = time(|| manifest::parse(&text));
    let mut raw = raw.map_err(|d| format!("{shown} does not parse: {d}"))?;
    let (connector, validate) = time(|| validate::validate(&mut raw, None));
    let (connector, _) = connector.map_err(|p| format!("{shown} has {} problem(s)", p.len()))?;
    let name = manifest
        .file_name()
        .map_or_else(|| shown.to_string(), |n| n.to_string_lossy().into_owned());
    let (rendered, render) = time(|| {
        render::render(
            &connector,
            None,
            &name,
            &templates::defaults(),
            templates::Limits::for_manifest(text.len(), None, None),
        )
    });
    let rendered = rendered.map_err(|e| e.to_string())?;
    let (findings, lint) =
        time(|| lint::run(&connector, &rendered.descriptions, &rendered.tool_weights));
    let (written, write) = time(|| output::write_all(out, &rendered.outputs));
    written.map_err(|e| e.to_string())?;
    let (drift, check) = time(|| check::drift(out, &rendered.outputs));
    let drift = drift.map_err(|e| e.to_string())?;
    if !drift.is_empty() {
        return Err(format!(
            "{} file(s) differ right after writing",
            drift.len()
        ));
    }
    let ((), drop) = time(move || std::mem::drop((raw, connector, rendered, findings)));

    let (value, baseline) = time(|| {
        serde_saphyr::from_str_with_options::<serde_json::Value>(
            &text,
            serde_saphyr::options! { budget: None },
        )
    });
    value.map_err(|e| format!("the baseline parser rejects {shown}: {e}"))?;
    Ok([
        read, parse, validate, render, lint, write, check, drop, baseline,
    ])
}

fn median(sorted: &[Duration]) -> Duration {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2
    }
}

fn ms(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1e3)
}

#[expect(clippy::cast_precision_loss, reason = "megabytes to one decimal")]
fn mb(bytes: usize) -> String {
    format!("{:.1}", bytes as f64 / 1e6)
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(args) => args,
        Err(message) => {
            if !message.is_empty() {
                eprintln!("error: {message}");
            }
            eprintln!("usage: stages MANIFEST [--runs N] [--out DIR]");
            return ExitCode::from(2);
        }
    };
    let (out, temporary) = match &args.out {
        Some(dir) => (dir.clone(), false),
        None => (
            std::env::temp_dir().join(format!("connectorgen-stages-{}", std::process::id())),
            true,
        ),
    };
    let mut samples: Vec<[Sample; 9]> = Vec::with_capacity(args.runs);
    let mut failure = None;
    for _ in 0..args.runs {
        match run_once(&args.manifest, &out) {
            Ok(run) => samples.push(run),
            Err(e) => {
                failure = Some(e);
                break;
            }
        }
    }
    if temporary {
        let _ = std::fs::remove_dir_all(&out);
    }
    if let Some(e) = failure {
        eprintln!("error: {e}");
        return ExitCode::FAILURE;
    }

    let bytes = std::fs::metadata(&args.manifest).map_or(0, |m| m.len());
    println!(
        "{}: {} MB, median of {} run(s)\n",
        args.manifest.display(),
        mb(usize::try_from(bytes).unwrap_or(usize::MAX)),
        args.runs
    );
    println!("| stage | median ms | min ms | max ms | heap after MB | heap peak MB |");
    println!("|---|---:|---:|---:|---:|---:|");
    let mut medians = [Duration::ZERO; 9];
    for (i, stage) in STAGES.iter().enumerate() {
        let mut column: Vec<Duration> = samples.iter().map(|s| s[i].time).collect();
        column.sort();
        medians[i] = median(&column);
        let first = samples[0][i];
        println!(
            "| {stage} | {} | {} | {} | {} | {} |",
            ms(medians[i]),
            ms(column[0]),
            ms(column[column.len() - 1]),
            mb(first.live),
            mb(first.peak)
        );
    }
    // read, parse, validate, render, lint, write, drop.
    let build: Duration = [0, 1, 2, 3, 4, 5, 7].iter().map(|&i| medians[i]).sum();
    let check = build.saturating_sub(medians[5]) + medians[6];
    let baseline = medians[8];
    println!(
        "\nbuild (sum of stage medians): {} ms = {:.2}× the baseline parse ({} ms)",
        ms(build),
        build.as_secs_f64() / baseline.as_secs_f64(),
        ms(baseline)
    );
    println!(
        "check (build without write, plus drift): {} ms = {:.2}× build",
        ms(check),
        check.as_secs_f64() / build.as_secs_f64()
    );
    ExitCode::SUCCESS
}
