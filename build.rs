//! Build script: the version `connectorgen --version` prints.
//!
//! Takes: the crate's folder and, when that folder is the top of a git work tree, its
//! `HEAD`. Returns: `CONNECTORGEN_VERSION` for the compiler, `0.1.0 (0123456789ab)` from
//! git and plain `0.1.0` otherwise (a crate from crates.io, a source tarball).
//! Must never: fail the build — no git, or a crate unpacked inside somebody else's
//! repository (`cargo package` verifies in `target/package/` of this one), only means no
//! commit in the version.

use std::path::Path;
use std::process::Command;

fn main() {
    let version = std::env::var("CARGO_PKG_VERSION").unwrap_or_default();
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
    let commit = own_repository(Path::new(&dir)).and_then(|()| {
        // Rebuild the string when HEAD moves: HEAD itself, and the branch it names.
        for file in ["HEAD", "packed-refs"] {
            if let Some(path) = git(&dir, &["rev-parse", "--git-path", file]) {
                println!(
                    "cargo:rerun-if-changed={}",
                    Path::new(&dir).join(path).display()
                );
            }
        }
        if let Some(branch) = git(&dir, &["symbolic-ref", "-q", "HEAD"])
            && let Some(path) = git(&dir, &["rev-parse", "--git-path", &branch])
        {
            println!(
                "cargo:rerun-if-changed={}",
                Path::new(&dir).join(path).display()
            );
        }
        git(&dir, &["rev-parse", "--short=12", "HEAD"])
    });
    let shown = match commit {
        Some(commit) => format!("{version} ({commit})"),
        None => version,
    };
    println!("cargo:rustc-env=CONNECTORGEN_VERSION={shown}");
    println!("cargo:rerun-if-changed=build.rs");
}

/// `Some(())` when `dir` is the top of a git work tree (not merely inside one).
fn own_repository(dir: &Path) -> Option<()> {
    let top = git(&dir.to_string_lossy(), &["rev-parse", "--show-toplevel"])?;
    let same = Path::new(&top).canonicalize().ok()? == dir.canonicalize().ok()?;
    same.then_some(())
}

/// One git command's trimmed standard output, if it ran and succeeded.
fn git(dir: &str, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .current_dir(dir)
        .args(args)
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!text.is_empty()).then_some(text)
}
