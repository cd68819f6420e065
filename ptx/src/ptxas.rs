//! Locating and running NVIDIA's `ptxas` to validate PTX text.
//!
//! [`find`] looks in `$PTXAS`, then `PATH`, then the `nvidia-cuda-nvcc-cu12` pip wheel;
//! [`assemble`] runs `ptxas --gpu-name <gpu> -o /dev/null` on a temporary copy of the text.
//! Neither panics.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};

use thiserror::Error;

/// Why [`assemble`] failed.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum PtxasError {
    /// No `ptxas` binary was found.
    #[error("ptxas not found (set PTXAS or pip install nvidia-cuda-nvcc-cu12)")]
    NotFound,
    /// Writing the temporary file or starting the process failed.
    #[error("running ptxas: {0}")]
    Io(#[from] std::io::Error),
    /// `ptxas` rejected the input.
    #[error("ptxas exited with {status}:\n{stderr}")]
    Rejected {
        /// Exit status, as text.
        status: String,
        /// ptxas's diagnostics.
        stderr: String,
    },
}

fn is_file(p: &Path) -> bool {
    p.is_file()
}

/// Finds `ptxas`: `$PTXAS` if it names a file, else the first `ptxas` on `PATH`, else
/// `<nvidia.cuda_nvcc package dir>/bin/ptxas` as reported by `python3`.
pub fn find() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("PTXAS") {
        let p = PathBuf::from(p);
        if is_file(&p) {
            return Some(p);
        }
    }
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            let p = dir.join("ptxas");
            if is_file(&p) {
                return Some(p);
            }
        }
    }
    let out = Command::new("python3")
        .args([
            "-c",
            "import nvidia.cuda_nvcc as m, os; \
             print(os.path.dirname(m.__file__) if m.__file__ else list(m.__path__)[0])",
        ])
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let dir = String::from_utf8(out.stdout).ok()?;
    let p = Path::new(dir.trim()).join("bin").join("ptxas");
    is_file(&p).then_some(p)
}

/// The highest PTX ISA version a `ptxas` accepts, read from its "Unsupported .version x.y;
/// current version is 'a.b'" diagnostic; `None` for any other message.
pub fn supported_version_from_diagnostic(stderr: &str) -> Option<(u32, u32)> {
    let rest = stderr.split("current version is '").nth(1)?;
    let v = rest.split('\'').next()?;
    let (a, b) = v.split_once('.')?;
    Some((a.trim().parse().ok()?, b.trim().parse().ok()?))
}

/// The newest PTX ISA version `ptxas` accepts, probed by assembling an empty module that
/// declares `.version 99.9` and reading the diagnostic. `None` when it cannot be determined.
pub fn max_ptx_version(ptxas: &Path) -> Option<(u32, u32)> {
    let probe = ".version 99.9\n.target sm_90\n.address_size 64\n";
    match assemble_with(ptxas, probe, "sm_90") {
        Err(PtxasError::Rejected { stderr, .. }) => supported_version_from_diagnostic(&stderr),
        _ => None,
    }
}

/// Assembles `ptx` for `gpu_name` (e.g. `sm_90`) with the `ptxas` from [`find`], discarding the
/// output. `Ok(stderr)` (warnings, usually empty) when ptxas accepts it.
pub fn assemble(ptx: &str, gpu_name: &str) -> Result<String, PtxasError> {
    let exe = find().ok_or(PtxasError::NotFound)?;
    assemble_with(&exe, ptx, gpu_name)
}

/// Like [`assemble`] with an explicit `ptxas` path.
pub fn assemble_with(ptxas: &Path, ptx: &str, gpu_name: &str) -> Result<String, PtxasError> {
    run(ptxas, ptx, gpu_name, None, &[])
}

/// Assembles `ptx` for `gpu_name` with the given `ptxas` and extra command-line arguments
/// (e.g. `["-lineinfo", "--suppress-debug-info"]`) and returns the cubin (ELF) bytes.
pub fn cubin_with(
    ptxas: &Path,
    ptx: &str,
    gpu_name: &str,
    extra_args: &[&str],
) -> Result<Vec<u8>, PtxasError> {
    let out = temp_path("cubin");
    let r =
        run(ptxas, ptx, gpu_name, Some(&out), extra_args).and_then(|_| Ok(std::fs::read(&out)?));
    let _ = std::fs::remove_file(&out);
    r
}

fn temp_path(ext: &str) -> PathBuf {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    std::env::temp_dir().join(format!("ptx-crate-{}-{n}.{ext}", std::process::id()))
}

fn run(
    ptxas: &Path,
    ptx: &str,
    gpu_name: &str,
    output: Option<&Path>,
    extra_args: &[&str],
) -> Result<String, PtxasError> {
    let path = temp_path("ptx");
    std::fs::write(&path, ptx)?;
    let out = Command::new(ptxas)
        .arg("--gpu-name")
        .arg(gpu_name)
        .arg("-o")
        .arg(output.unwrap_or(Path::new("/dev/null")))
        .args(extra_args)
        .arg(&path)
        .output();
    let _ = std::fs::remove_file(&path);
    let out = out?;
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if out.status.success() {
        Ok(stderr)
    } else {
        Err(PtxasError::Rejected {
            status: out.status.to_string(),
            stderr,
        })
    }
}
