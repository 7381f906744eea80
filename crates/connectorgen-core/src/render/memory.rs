//! A bound on the memory one template render may hold, kept by the process's allocator.
//!
//! Takes: every allocation of the process, once a binary installs [`BoundedAlloc`] as its
//! global allocator (`src/main.rs` does; so do this crate's unit tests); and, from
//! `prose.rs`, the renders to bound ([`bounded`]: a template name and a number of bytes).
//! Returns: the allocations, from the system allocator, unchanged — until a render on
//! this thread holds more than its bytes: then it prints one error line naming the
//! template and `--template-fuel`, and ends the process with exit code 1 (the code of
//! every other template error). Nothing is on disk yet then: `build` writes its outputs
//! only after every render (`output.rs`), and a watched build ends instead of reporting.
//! Must never: allocate or unwind inside the allocator (a global allocator that unwinds
//! is undefined behaviour), bound anything outside a render, or change what it returns.
//!
//! Why: minijinja (3.1.0, the newest release) adds two lists lazily and, once a chain of
//! additions is 33 deep, copies every item into one new list (or flattens the chain, for
//! `chain`), charging fuel for that only after the copy is made. So a template that
//! doubles a list (`{% set ns.l = ns.l + ns.l %}` in a loop, 33 `{% set l = l + l %}` in
//! a row, a recursive macro) allocated without bound: 1.6 GB in 90 s, then the machine's
//! memory (issue 21, defect 7). Fuel stops every other runaway template before it
//! allocates (docs/guarantees.md); the engine gives no hook inside that copy, and the
//! allocator is the one place that sees it wherever a template hides it. A patched copy
//! of minijinja did this before, but `cargo package` drops `[patch]`, so `cargo install`
//! users built upstream without it (issue 32).
//!
//! What a render may hold: what its fuel left pays for at minijinja's own price for
//! text, 64 bytes per fuel (`UNITS_PER_FUEL`), and at least 16 MiB: 244 MiB for the
//! default fuel of a small manifest, 3 GiB for 100,000 operations. Counted: bytes
//! allocated and not yet freed on the rendering thread while it runs, its output text
//! left out (`--max-template-output` bounds that). At that price a string doubled until
//! the fuel runs out (it held about 45 bytes per fuel, measured at the default fuel) is
//! still stopped by the fuel, which points at the template's line; this bound stops what
//! the fuel does not charge in advance. The default templates build every case and the
//! suite's large manifests under it. Measured (debug build, video example, default
//! limits): a list doubled through `namespace` stops after 10 s at 225 MB; without the
//! bound it took 1 GiB (the test's address-space cap) in 35 s, then aborted.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::io::Write as _;

/// Bytes of scratch memory a render may hold per fuel left (the module doc says why).
pub(crate) const BYTES_PER_FUEL: u64 = 64;

/// The system allocator, counting what a render on the current thread holds.
pub struct BoundedAlloc;

/// The render running on this thread, if any.
struct Render {
    /// Bytes allocated minus bytes freed since the render started (negative when it frees
    /// what was allocated before it).
    live: Cell<i64>,
    /// The most `live` may reach; `i64::MAX` when no render runs.
    limit: Cell<i64>,
    /// The template, for the error.
    template: Cell<&'static str>,
}

thread_local! {
    // `const` and without `Drop`: reading it never allocates nor registers a destructor,
    // so the allocator can use it at any point of a thread's life.
    static RENDER: Render = const {
        Render {
            live: Cell::new(0),
            limit: Cell::new(i64::MAX),
            template: Cell::new(""),
        }
    };
}

/// Runs `f` as the render of `template`, holding at most `max_bytes` (see the module
/// doc). Renders nest: the outer one's count resumes when the inner one ends.
pub(crate) fn bounded<T>(template: &'static str, max_bytes: u64, f: impl FnOnce() -> T) -> T {
    /// Puts back the outer render's state, also when `f` unwinds.
    struct Restore(i64, i64, &'static str);
    impl Drop for Restore {
        fn drop(&mut self) {
            RENDER.with(|r| {
                r.live.set(self.0);
                r.limit.set(self.1);
                r.template.set(self.2);
            });
        }
    }
    let _restore = RENDER.with(|r| {
        let outer = Restore(r.live.get(), r.limit.get(), r.template.get());
        r.live.set(0);
        r.limit
            .set(i64::try_from(max_bytes).unwrap_or(i64::MAX - 1));
        r.template.set(template);
        outer
    });
    f()
}

/// The least a render may hold, whatever the fuel: with a small `--template-fuel` the
/// fuel stops the work first (a few hundred fuel renders a description, and holds more
/// than 64 bytes each while it does).
pub(crate) const MIN_BYTES: u64 = 16 << 20;

/// The bytes a render may hold with `fuel` left.
pub(crate) fn for_fuel(fuel: u64) -> u64 {
    fuel.saturating_mul(BYTES_PER_FUEL).max(MIN_BYTES)
}

/// Leaves `bytes` the render just allocated out of its count: its output text, which
/// `--max-template-output` bounds.
pub(crate) fn exempt(bytes: usize) {
    charge(-isize_of(bytes));
}

/// Counts `bytes` (negative: freed) against the render on this thread, if any.
#[inline]
fn charge(bytes: i64) {
    // `try_with`: during a thread's teardown there is nothing to bound.
    let _ = RENDER.try_with(|r| {
        let limit = r.limit.get();
        if limit == i64::MAX {
            return;
        }
        let live = r.live.get().saturating_add(bytes);
        r.live.set(live);
        if bytes > 0 && live > limit {
            // Disarmed first: what follows may allocate (it should not) without coming
            // back here.
            r.limit.set(i64::MAX);
            out_of_memory(r.template.get(), limit);
        }
    });
}

/// A fixed buffer that `write!` fills without allocating; what does not fit is cut.
struct Line {
    bytes: [u8; 1024],
    len: usize,
}

impl std::fmt::Write for Line {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let n = s.len().min(self.bytes.len() - self.len);
        self.bytes[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
        self.len += n;
        Ok(())
    }
}

/// Reports the runaway render and ends the process (exit code 1). Allocates nothing:
/// the line is formatted into a stack buffer and written to the unbuffered stderr.
#[cold]
fn out_of_memory(template: &str, limit: i64) -> ! {
    use std::fmt::Write as _;
    let mut line = Line {
        bytes: [0; 1024],
        len: 0,
    };
    let limit = u64::try_from(limit).unwrap_or(0);
    let fuel = limit / BYTES_PER_FUEL;
    // At the floor the fuel left was smaller than `fuel`: twice `fuel` is still more.
    let _ = writeln!(
        line,
        "error: template `{template}` could not be rendered: it ran out of template fuel: \
         it held more than {} MiB of memory besides its output ({limit} bytes: what the fuel \
         left to it pays for at {BYTES_PER_FUEL} bytes per fuel, {} MiB at least; see \
         --template-fuel), by a list that keeps doubling or far more work than the outputs \
         need; if the template is legitimate, raise the budget with --template-fuel {}. \
         Nothing was written.",
        limit >> 20,
        MIN_BYTES >> 20,
        fuel.saturating_mul(2).max(1),
    );
    let _ = std::io::stderr().write_all(&line.bytes[..line.len]);
    std::process::exit(1)
}

// SAFETY: every method passes the layout and pointer on to `System` unchanged; the
// counting beside it neither allocates nor unwinds.
unsafe impl GlobalAlloc for BoundedAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        charge(isize_of(layout.size()));
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        charge(isize_of(layout.size()));
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        charge(-isize_of(layout.size()));
        // SAFETY: the caller's contract, passed on.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        charge(isize_of(new_size) - isize_of(layout.size()));
        // SAFETY: the caller's contract, passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// A size as a signed count (a layout's size never exceeds `isize::MAX`).
fn isize_of(size: usize) -> i64 {
    i64::try_from(size).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_render_counts_what_it_holds_and_the_outer_count_resumes() {
        let held = |f: &dyn Fn()| {
            bounded("t", u64::MAX >> 2, || {
                f();
                RENDER.with(|r| r.live.get())
            })
        };
        // Counted only while a render runs: the crate's tests install the allocator
        // (lib.rs), so a vector kept past the closure shows.
        let kept = std::cell::RefCell::new(Vec::new());
        let live = held(&|| kept.borrow_mut().push(vec![0u8; 1 << 20]));
        assert!(live >= 1 << 20, "{live}");
        // Freed inside: not held.
        let live = held(&|| drop(std::hint::black_box(vec![0u8; 1 << 20])));
        assert!(live < 1 << 10, "{live}");
        // Nested: the inner render's bytes are its own, the outer one's limit is back.
        bounded("outer", 1 << 40, || {
            held(&|| ());
            RENDER.with(|r| assert_eq!(r.limit.get(), 1 << 40));
        });
        RENDER.with(|r| assert_eq!(r.limit.get(), i64::MAX));
    }
}
