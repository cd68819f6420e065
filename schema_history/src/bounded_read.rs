//! Reading the files a pull request controls: policy, waivers, trust lists, golden manifests,
//! census indexes, descriptor images and the working tree's protos.
//!
//! Git stores symbolic links, so a pull request can carry `policy.toml -> /dev/zero` (or a FIFO
//! made by a checkout hook) to the pre-merge bot; read naively that is an unbounded read or a
//! hang. Every such file is therefore opened as XLA's own tools would want it: a regular file,
//! not a link (checked on the path itself and again on the opened descriptor, with `O_NOFOLLOW`
//! and `O_NONBLOCK` on Unix so the open neither follows a link swapped in nor blocks on a FIFO),
//! of at most [`MAX_FILE_BYTES`], read through a reader that stops one byte past the limit.
use crate::Error;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The most bytes any one repository file may have (256 MiB): far above the largest real input
/// (a golden executable, a few MiB; XLA's descriptor images, under 2 MiB) and far below what a
/// 2-core CI machine can hold several of.
pub const MAX_FILE_BYTES: u64 = 256 << 20;

/// Why a repository file is refused before its contents are read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The path is a symbolic link (to `target`).
    SymbolicLink {
        /// Where the link points, as stored in it.
        target: PathBuf,
    },
    /// The path is not a regular file.
    NotRegular {
        /// What it is instead ("a directory", "a FIFO", "a character device", ...).
        kind: &'static str,
    },
    /// The file is larger than the limit.
    TooLarge {
        /// Its size in bytes (at least `limit + 1` when it grew while being read).
        size: u64,
        /// The limit, [`MAX_FILE_BYTES`] unless a caller chose less.
        limit: u64,
    },
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::SymbolicLink { target } => write!(
                f,
                "is a symbolic link (to {}); repository files are read only as regular files",
                target.display()
            ),
            Refusal::NotRegular { kind } => write!(f, "is {kind}, not a regular file"),
            Refusal::TooLarge { size, limit } => {
                write!(f, "is {size} bytes, over the limit of {limit} bytes")
            }
        }
    }
}

/// The contents of `path`, `None` when it does not exist.
pub fn read_file(path: &Path) -> Result<Option<Vec<u8>>, Error> {
    read_file_limited(path, MAX_FILE_BYTES)
}

/// The contents of `path` as UTF-8 text, `None` when it does not exist.
pub fn read_text(path: &Path) -> Result<Option<String>, Error> {
    match read_file(path)? {
        None => Ok(None),
        Some(bytes) => String::from_utf8(bytes).map(Some).map_err(|e| {
            Error::io(
                path,
                std::io::Error::new(std::io::ErrorKind::InvalidData, e.utf8_error()),
            )
        }),
    }
}

/// As [`read_file`] with a caller's limit.
pub fn read_file_limited(path: &Path, limit: u64) -> Result<Option<Vec<u8>>, Error> {
    let refused = |refusal| Error::Unreadable {
        path: path.to_owned(),
        refusal,
    };
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(path, e)),
    };
    if meta.file_type().is_symlink() {
        let target = std::fs::read_link(path).unwrap_or_default();
        return Err(refused(Refusal::SymbolicLink { target }));
    }
    check_regular(&meta, limit).map_err(refused)?;
    let file = open_no_follow(path).map_err(|e| Error::io(path, e))?;
    // The path may have been swapped between the two looks: judge the descriptor itself.
    let meta = file.metadata().map_err(|e| Error::io(path, e))?;
    check_regular(&meta, limit).map_err(refused)?;
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, e))?;
    if bytes.len() as u64 > limit {
        return Err(refused(Refusal::TooLarge {
            size: bytes.len() as u64,
            limit,
        }));
    }
    Ok(Some(bytes))
}

/// A regular file within `limit`, or the refusal.
fn check_regular(meta: &std::fs::Metadata, limit: u64) -> Result<(), Refusal> {
    if !meta.is_file() {
        return Err(Refusal::NotRegular {
            kind: kind_of(&meta.file_type()),
        });
    }
    if meta.len() > limit {
        return Err(Refusal::TooLarge {
            size: meta.len(),
            limit,
        });
    }
    Ok(())
}

fn kind_of(t: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
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
    if t.is_dir() {
        "a directory"
    } else if t.is_symlink() {
        "a symbolic link"
    } else {
        "not a file"
    }
}

#[cfg(unix)]
fn open_no_follow(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
}

#[cfg(not(unix))]
fn open_no_follow(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::File::open(path)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("bounded-read-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_regular_file_reads_and_a_missing_one_is_none() {
        let dir = scratch("regular");
        std::fs::write(dir.join("policy.toml"), "x = 1\n").unwrap();
        assert_eq!(
            read_text(&dir.join("policy.toml")).unwrap().unwrap(),
            "x = 1\n"
        );
        assert!(read_file(&dir.join("absent.toml")).unwrap().is_none());
    }

    #[test]
    fn a_link_to_dev_zero_is_refused_without_reading_it() {
        let dir = scratch("link");
        let link = dir.join("manifest.json");
        std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
        let e = read_file(&link).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "{}: is a symbolic link (to /dev/zero); repository files are read only as regular files",
                link.display()
            )
        );
    }

    #[test]
    fn a_device_is_not_a_regular_file() {
        let e = read_file(Path::new("/dev/zero")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "/dev/zero: is a character device, not a regular file"
        );
    }

    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let dir = scratch("fifo");
        let fifo = dir.join("waivers.toml");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if !made.is_ok_and(|s| s.success()) {
            eprintln!("skipped: mkfifo unavailable");
            return;
        }
        let e = read_file(&fifo).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("{}: is a FIFO, not a regular file", fifo.display())
        );
    }

    #[test]
    fn a_file_over_the_limit_is_refused() {
        let dir = scratch("large");
        std::fs::write(dir.join("census.json"), vec![b' '; 100]).unwrap();
        let e = read_file_limited(&dir.join("census.json"), 64).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "{}: is 100 bytes, over the limit of 64 bytes",
                dir.join("census.json").display()
            )
        );
    }
}
