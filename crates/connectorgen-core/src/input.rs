//! Reading a manifest, and the files it names, from disk, treating every byte of them
//! (and every path a manifest gives) as untrusted.
//!
//! Takes: a path, a size limit and what the file is for; for a file the manifest names
//! (its base document, its templates), also the `Scope` of folders it may be in.
//! Returns: the text, or one `InputError` whose message is a single line naming the file
//! and what to do about it.
//! Must never: block (a FIFO or a terminal is refused before it is opened, and opened
//! non-blocking so a swap between the check and the open cannot stall us either), read
//! without bound (`/dev/zero`, a file that keeps growing: at most `max_bytes + 1` bytes
//! are ever read), pass on text that is not UTF-8, or — for a file a manifest names —
//! read anything but a regular file inside the scope after every symlink is resolved:
//! never `/proc/self/environ`, a device, or a file outside the folders the person running
//! connectorgen allowed (a pull request's manifest must not be able to print the CI's
//! secrets into its log).
//!
//! `read_named` is the one way a file a manifest names is opened; `read_manifest` is for
//! paths the person gave on the command line.

use std::fs::{File, FileType, Metadata};
use std::io::Read as _;
use std::path::{Path, PathBuf};

/// The default `--max-bytes`: far above any real manifest (the largest bundled example
/// is a few kilobytes), still small enough that parsing stays in reasonable memory.
pub const DEFAULT_MAX_BYTES: u64 = 128 << 20;

/// Why a manifest could not be read. Every message is one line.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The OS refused (missing file, no permission, I/O error).
    #[error("cannot read {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// A folder, FIFO, socket or device: nothing a manifest, a base document or a
    /// template can be.
    #[error("{path} is not a regular file (it is {kind}); give the path of {}", what.article())]
    NotRegular {
        path: String,
        kind: &'static str,
        what: What,
    },
    /// A file a manifest names that leads, once symlinks are resolved, outside every
    /// folder of the scope.
    #[error(
        "{path} is outside the folders connectorgen reads for this manifest{}; move {} into {allowed} or below, or, if it is meant to be read, allow its folder on the command line: --allow-read {}",
        leads(path, real),
        what.pronoun(),
        Path::new(real).parent().map_or(real.clone(), |p| p.display().to_string())
    )]
    Outside {
        path: String,
        real: String,
        allowed: String,
        what: What,
    },
    /// A file a manifest names that is the operating system's, not a document. The real
    /// path is kept out of the message (`/proc/self` leads to a process id).
    #[error(
        "{path} is a file of the operating system (under /proc, /sys or /dev, or on a file system of theirs); connectorgen never reads those for a manifest: give the path of {}",
        what.article()
    )]
    System {
        path: String,
        real: String,
        what: What,
    },
    /// Over the size limit, by its metadata or while being read.
    #[error(
        "{path} is larger than the {} limit ({max} bytes); if the manifest is legitimate, raise the limit with --max-bytes (e.g. --max-bytes {})",
        human(*max),
        suggest_limit(*max)
    )]
    TooLarge { path: String, max: u64 },
    /// Not UTF-8; line and column (in characters) of the first bad byte.
    #[error(
        "{path} is not UTF-8 text (invalid byte at line {line}, column {column}){hint}; save it as UTF-8"
    )]
    NotUtf8 {
        path: String,
        line: usize,
        column: usize,
        hint: &'static str,
    },
}

/// What a file is for, as messages name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum What {
    Manifest,
    /// The provider's OpenAPI document (`openapi:`, or `import`'s SPEC).
    Openapi,
    Template,
    TemplatesFolder,
    /// A file the provider's OpenAPI document refers to (`$ref: schemas/thing.yaml`).
    DocumentFile,
}

impl What {
    fn article(self) -> &'static str {
        match self {
            What::Manifest => "a YAML manifest",
            What::Openapi => "the provider's OpenAPI document (JSON or YAML)",
            What::Template => "a template file",
            What::TemplatesFolder => "a folder of templates",
            What::DocumentFile => "a file of the provider's OpenAPI document (JSON or YAML)",
        }
    }

    fn pronoun(self) -> &'static str {
        match self {
            What::Manifest => "the manifest",
            What::Openapi => "the document",
            What::Template => "the template",
            What::TemplatesFolder => "the templates folder",
            What::DocumentFile => "the file",
        }
    }
}

/// The folders the files a manifest names may be in: the manifest's own folder, and
/// those the person running connectorgen named (`--allow-read DIR`, `--templates DIR`).
/// Kept as real paths (symlinks resolved), so a path is judged by where it leads.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Scope {
    roots: Vec<PathBuf>,
    /// The first folder as it was given, for messages.
    shown: String,
    /// What the first folder is, for messages; "the manifest's folder" when empty.
    first: &'static str,
}

impl Scope {
    /// The scope of `folders` (the manifest's first). A folder that does not exist
    /// allows nothing.
    pub fn new(folders: impl IntoIterator<Item = PathBuf>) -> Scope {
        let mut scope = Scope::default();
        for folder in folders {
            let folder = if folder.as_os_str().is_empty() {
                PathBuf::from(".")
            } else {
                folder
            };
            if scope.shown.is_empty() {
                scope.shown = folder.display().to_string();
            }
            if let Ok(real) = folder.canonicalize() {
                scope.roots.push(real);
            }
        }
        scope
    }

    /// The same scope, its first folder called `first` in messages ("the document's
    /// folder").
    pub(crate) fn calling_first(mut self, first: &'static str) -> Scope {
        self.first = first;
        self
    }

    /// The same scope, also allowing `folder`.
    pub fn with(mut self, folder: &Path) -> Scope {
        if let Ok(real) = folder.canonicalize() {
            self.roots.push(real);
        }
        self
    }

    /// Where `path` really is, if a manifest may name it: inside a folder of the
    /// scope and not the operating system's. `shown` names it in the error.
    pub fn check(&self, path: &Path, shown: &str, what: What) -> Result<PathBuf, InputError> {
        let real = path.canonicalize().map_err(|source| InputError::Io {
            path: shown.to_string(),
            source,
        })?;
        if is_system(&real) {
            return Err(InputError::System {
                path: shown.to_string(),
                real: real.display().to_string(),
                what,
            });
        }
        if !self.roots.iter().any(|root| real.starts_with(root)) {
            return Err(InputError::Outside {
                path: shown.to_string(),
                real: real.display().to_string(),
                allowed: format!(
                    "{} ({})",
                    if self.first.is_empty() {
                        "the manifest's folder"
                    } else {
                        self.first
                    },
                    self.shown
                ),
                what,
            });
        }
        Ok(real)
    }
}

/// " (it leads to /real/path)", when that is not the path as shown.
fn leads(path: &str, real: &str) -> String {
    if path == real {
        String::new()
    } else {
        format!(" (it leads to {real})")
    }
}

/// Files of the operating system's own file systems: process state (`/proc/self/environ`
/// holds the environment, CI tokens included), kernel state and devices. Refused even
/// inside an allowed folder (a manifest at `/`, `--allow-read /`). By path, and on Linux
/// by the file system the file is on too: a procfs or sysfs mounted anywhere else (a
/// container's `/host/proc`, a folder of the manifest's own) is as much the system's.
fn is_system(real: &Path) -> bool {
    cfg!(unix)
        && (["/proc", "/sys", "/dev"]
            .iter()
            .any(|p| real.starts_with(p))
            || on_system_fs(real))
}

/// The file systems whose files are the kernel's state, not documents (magic numbers of
/// `statfs(2)`, from linux/magic.h): proc, sysfs, devpts, debugfs, tracefs, securityfs,
/// cgroup and cgroup2, bpf, pstore, efivarfs, configfs, `binfmt_misc`, fusectl, selinuxfs,
/// smackfs, mqueue and nsfs. A device file system (devtmpfs) reports tmpfs's number, so
/// it cannot be told from `/tmp`; its files are devices, which are refused anyway.
#[cfg(any(target_os = "linux", target_os = "android"))]
const SYSTEM_FILE_SYSTEMS: [u64; 18] = [
    0x9fa0,      // proc
    0x6265_6572, // sysfs
    0x1cd1,      // devpts
    0x6462_6720, // debugfs
    0x7472_6163, // tracefs
    0x7363_6673, // securityfs
    0x0027_e0eb, // cgroup
    0x6367_7270, // cgroup2
    0xcafe_4a11, // bpf
    0x6165_676c, // pstore
    0xde5e_81e4, // efivarfs
    0x6265_6570, // configfs
    0x4249_4e4d, // binfmt_misc
    0x6573_5543, // fusectl
    0xf97c_ff8c, // selinuxfs
    0x4341_5d53, // smackfs
    0x1980_0202, // mqueue
    0x6e73_6673, // nsfs
];

/// Whether `real` is on one of `SYSTEM_FILE_SYSTEMS`. A path `statfs` cannot look at is
/// not judged here: opening it fails with its own error.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn on_system_fs(real: &Path) -> bool {
    rustix::fs::statfs(real)
        .ok()
        .and_then(|stat| u64::try_from(stat.f_type).ok())
        .is_some_and(|magic| SYSTEM_FILE_SYSTEMS.contains(&magic))
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn on_system_fs(_real: &Path) -> bool {
    false
}

/// Reads a file a manifest names (`path`, shown as `shown`): it must lead, once every
/// symlink is resolved, to a regular file inside `scope` (`Scope::check`) of at most
/// `max_bytes` bytes of UTF-8.
pub(crate) fn read_named(
    path: &Path,
    shown: &str,
    scope: &Scope,
    max_bytes: u64,
    what: What,
) -> Result<String, InputError> {
    let real = scope.check(path, shown, what)?;
    // The real path is opened, so what was judged is what is read (short of someone
    // replacing a folder on it in between; a manifest cannot do that).
    read_file(&real, shown, max_bytes, what)
}

/// Reads the manifest at `path`: a regular file (or a symlink to one) of at most
/// `max_bytes` bytes of UTF-8.
pub fn read_manifest(path: &Path, max_bytes: u64) -> Result<String, InputError> {
    read_file(path, &path.display().to_string(), max_bytes, What::Manifest)
}

/// Reads `path`, named `shown` in errors: a regular file (or a symlink to one) of at
/// most `max_bytes` bytes of UTF-8. For a path the person gave on the command line.
pub(crate) fn read_file(
    path: &Path,
    shown: &str,
    max_bytes: u64,
    what: What,
) -> Result<String, InputError> {
    let shown = shown.to_string();
    let io = |source| InputError::Io {
        path: shown.clone(),
        source,
    };
    // The file type is checked before opening: opening a FIFO for reading blocks until
    // someone writes to it.
    let meta = std::fs::metadata(path).map_err(io)?;
    check_metadata(&shown, &meta, max_bytes, what)?;
    let file = open_nonblocking(path).map_err(io)?;
    // The same checks on what was actually opened, in case the path was swapped for
    // something else between the two calls.
    check_metadata(&shown, &file.metadata().map_err(io)?, max_bytes, what)?;

    // `take` bounds the read even when the size changes after the check (a file being
    // appended to, or a /proc-style file that reports size 0): one byte past the limit
    // is enough to know it is too large.
    let capacity = usize::try_from(meta.len().min(max_bytes)).unwrap_or(0);
    let mut bytes = Vec::with_capacity(capacity.saturating_add(1));
    file.take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > max_bytes {
        return Err(InputError::TooLarge {
            path: shown,
            max: max_bytes,
        });
    }
    decode(&shown, bytes)
}

/// Manifest bytes → text, or the line and column of the first byte that is not UTF-8.
/// `path` is only used in the message.
pub fn decode(path: &str, bytes: Vec<u8>) -> Result<String, InputError> {
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let bytes = e.as_bytes();
        let before = &bytes[..at];
        let line_start = before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        // `before` is the valid prefix, so counting its characters cannot fail; columns
        // count characters, as an editor shows them.
        let column = std::str::from_utf8(&before[line_start..])
            .map_or(at - line_start, |s| s.chars().count())
            + 1;
        // The usual non-UTF-8 manifest is a UTF-16 export from a Windows editor.
        let hint = if bytes.starts_with(&[0xFF, 0xFE]) || bytes.starts_with(&[0xFE, 0xFF]) {
            ", it looks like UTF-16"
        } else {
            ""
        };
        InputError::NotUtf8 {
            path: path.to_string(),
            line,
            column,
            hint,
        }
    })
}

/// Parses a `--max-bytes` value: a whole number of bytes, optionally followed by `K`,
/// `M` or `G` (powers of 1024; `KiB`, `MiB`, `GiB` and `B` are accepted too).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let digits = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(digits);
    let number: u64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a size; write e.g. 200000000, 256M or 1G"))?;
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        other => return Err(format!("unknown size unit `{other}`; use K, M or G")),
    };
    number
        .checked_mul(1 << shift)
        .ok_or_else(|| format!("`{text}` is too large"))
}

fn check_metadata(
    path: &str,
    meta: &Metadata,
    max_bytes: u64,
    what: What,
) -> Result<(), InputError> {
    if !meta.is_file() {
        return Err(InputError::NotRegular {
            path: path.to_string(),
            kind: kind_of(meta.file_type()),
            what,
        });
    }
    if meta.len() > max_bytes {
        return Err(InputError::TooLarge {
            path: path.to_string(),
            max: max_bytes,
        });
    }
    Ok(())
}

fn kind_of(t: FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        if t.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if t.is_dir() { "a folder" } else { "not a file" }
}

/// `a/b/../c` → `a/c`, without touching the disk: how messages name a file the
/// manifest names relative to itself (`.` for the folder itself).
pub(crate) fn normalize(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir
                if matches!(out.components().next_back(), Some(Component::Normal(_))) =>
            {
                out.pop();
            }
            other => out.push(other),
        }
    }
    // `.` would otherwise be shown as nothing at all.
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

/// `O_NONBLOCK` where its value is known without the libc crate: opening a FIFO with it
/// returns at once instead of waiting for a writer; on a regular file it changes nothing.
/// Elsewhere the type check before opening is what keeps FIFOs out.
const O_NONBLOCK: Option<i32> = if cfg!(all(
    target_os = "linux",
    any(
        target_arch = "x86",
        target_arch = "x86_64",
        target_arch = "arm",
        target_arch = "aarch64",
        target_arch = "riscv64",
        target_arch = "powerpc64",
        target_arch = "s390x",
        target_arch = "loongarch64"
    )
)) {
    Some(0o4000)
} else if cfg!(any(
    target_vendor = "apple",
    target_os = "freebsd",
    target_os = "openbsd",
    target_os = "netbsd",
    target_os = "dragonfly"
)) {
    Some(0x4)
} else {
    None
};

#[cfg(unix)]
fn open_nonblocking(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    if let Some(flag) = O_NONBLOCK {
        options.custom_flags(flag);
    }
    options.open(path)
}

#[cfg(not(unix))]
fn open_nonblocking(path: &Path) -> std::io::Result<File> {
    File::open(path)
}

/// A size for people: "128 MiB", "1.5 GiB", "300 bytes".
pub(crate) fn human(bytes: u64) -> String {
    const UNITS: [(u64, &str); 3] = [(1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")];
    for (size, unit) in UNITS {
        if bytes >= size {
            let whole = bytes / size;
            let tenth = (bytes % size) * 10 / size;
            return if tenth == 0 {
                format!("{whole} {unit}")
            } else {
                format!("{whole}.{tenth} {unit}")
            };
        }
    }
    format!("{bytes} bytes")
}

/// A limit worth suggesting when `max` was too small: the next power-of-two number of
/// MiB above twice the current one (`256M` for the default).
pub(crate) fn suggest_limit(max: u64) -> String {
    let mib = (max.saturating_mul(2) >> 20).max(1);
    format!("{}M", mib.next_power_of_two())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_units() {
        assert_eq!(parse_size("0"), Ok(0));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("16K"), Ok(16 << 10));
        assert_eq!(parse_size("256M"), Ok(256 << 20));
        assert_eq!(parse_size("256MiB"), Ok(256 << 20));
        assert_eq!(parse_size("1g"), Ok(1 << 30));
        assert!(parse_size("").is_err());
        assert!(parse_size("12 parsecs").is_err());
        assert!(parse_size("-1").is_err());
        assert!(parse_size("99999999999999G").is_err());
    }

    #[test]
    fn non_utf8_is_located_in_characters() {
        let err = decode("m.yaml", b"a: 1\nname: caf\xc3\xa9 \xff\n".to_vec()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "m.yaml is not UTF-8 text (invalid byte at line 2, column 12); save it as UTF-8"
        );
        let utf16 = decode("w.yaml", b"\xff\xfev\x00".to_vec()).unwrap_err();
        assert!(
            utf16
                .to_string()
                .contains("line 1, column 1), it looks like UTF-16")
        );
        assert_eq!(decode("ok.yaml", b"ok".to_vec()).unwrap(), "ok");
    }

    #[test]
    fn limits_read_like_people_write_them() {
        assert_eq!(human(DEFAULT_MAX_BYTES), "128 MiB");
        assert_eq!(human(1536), "1.5 KiB");
        assert_eq!(human(10), "10 bytes");
        assert_eq!(suggest_limit(DEFAULT_MAX_BYTES), "256M");
        assert_eq!(suggest_limit(10), "1M");
    }
}
