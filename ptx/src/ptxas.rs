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

/// Why [`cubin_arch`] rejects bytes as a cubin.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum CubinError {
    /// Shorter than an ELF64 header (64 bytes).
    #[error("{0} bytes, shorter than an ELF64 header")]
    Truncated(usize),
    /// Not `\x7fELF`, not 64-bit little-endian.
    #[error("not a 64-bit little-endian ELF file")]
    NotElf,
    /// `e_machine` is not `EM_CUDA` (190).
    #[error("e_machine is {0}, not EM_CUDA (190)")]
    NotCuda(u16),
    /// `e_ident[EI_ABIVERSION]` is neither CUDA's ELF ABI 7 nor 8, so where `e_flags` keeps the
    /// SM is unknown.
    #[error("CUDA ELF ABI version {0} is unknown (7 and 8 are read)")]
    UnknownAbi(u8),
}

/// The target a cubin was assembled for, as its ELF header says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CubinArch {
    /// `90` for `sm_90` and `sm_90a`, `100` for `sm_100a`.
    pub sm: u32,
    /// The architecture-specific feature set (`sm_90a`): such a cubin runs on its SM alone.
    pub accelerated: bool,
}

impl std::fmt::Display for CubinArch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let a = if self.accelerated { "a" } else { "" };
        write!(f, "sm_{}{a}", self.sm)
    }
}

/// `e_ident[EI_ABIVERSION]` of cubins with the SM in `e_flags`' low byte and the `a` feature set
/// at bit 11 (LLVM's `ELFABIVERSION_CUDA_V1`): ptxas up to 12.x for SMs below 100.
const CUDA_ABI_V1: u8 = 7;
/// Cubins with the SM in bits 8-15 and the `a` feature set at bit 3 (`ELFABIVERSION_CUDA_V2`):
/// ptxas 12.8+ for sm_100 and later, and ptxas 13 for every SM (its sm_90 is `0x06005a04`).
const CUDA_ABI_V2: u8 = 8;

/// The target a cubin was assembled for, read from its ELF header: `e_machine` must be
/// `EM_CUDA`, and `e_flags` is read in the layout `e_ident[EI_ABIVERSION]` names, as LLVM's
/// `ELFObjectFileBase::getNVPTXCPUName` does. Reads nothing past the 64-byte header.
pub fn cubin_arch(bytes: &[u8]) -> Result<CubinArch, CubinError> {
    let h = bytes.get(..64).ok_or(CubinError::Truncated(bytes.len()))?;
    // EI_CLASS = ELFCLASS64 (2), EI_DATA = little-endian (1).
    if &h[..4] != b"\x7fELF" || h[4] != 2 || h[5] != 1 {
        return Err(CubinError::NotElf);
    }
    let machine = u16::from_le_bytes([h[18], h[19]]);
    if machine != 190 {
        return Err(CubinError::NotCuda(machine));
    }
    let flags = u32::from_le_bytes([h[48], h[49], h[50], h[51]]);
    match h[8] {
        CUDA_ABI_V1 => Ok(CubinArch {
            sm: flags & 0xff,
            accelerated: flags & 0x800 != 0,
        }),
        CUDA_ABI_V2 => Ok(CubinArch {
            sm: (flags >> 8) & 0xff,
            accelerated: flags & 0x8 != 0,
        }),
        other => Err(CubinError::UnknownAbi(other)),
    }
}

#[cfg(test)]
mod cubin_tests {
    use super::*;

    fn header(abi: u8, machine: u16, flags: u32) -> Vec<u8> {
        let mut h = vec![0u8; 64];
        h[..4].copy_from_slice(b"\x7fELF");
        h[4] = 2;
        h[5] = 1;
        h[8] = abi;
        h[18..20].copy_from_slice(&machine.to_le_bytes());
        h[48..52].copy_from_slice(&flags.to_le_bytes());
        h
    }

    fn arch(sm: u32, accelerated: bool) -> Result<CubinArch, CubinError> {
        Ok(CubinArch { sm, accelerated })
    }

    #[test]
    fn reads_abi_7_headers_as_ptxas_12_writes_them() {
        // e_flags as ptxas 12.9 writes them for sm_90a, sm_90 and sm_80.
        assert_eq!(cubin_arch(&header(7, 190, 0x5a0d5a)), arch(90, true));
        assert_eq!(cubin_arch(&header(7, 190, 0x5a055a)), arch(90, false));
        assert_eq!(cubin_arch(&header(7, 190, 0x500550)), arch(80, false));
    }

    #[test]
    fn reads_abi_8_headers_as_ptxas_13_writes_them() {
        // ptxas 13.0 for sm_90, sm_80 and sm_120; ptxas 12.9 for sm_100a (seen on an H200's
        // CUDA 13 toolkit: reading the low byte gave "sm_4").
        assert_eq!(cubin_arch(&header(8, 190, 0x6005a04)), arch(90, false));
        assert_eq!(cubin_arch(&header(8, 190, 0x6005004)), arch(80, false));
        assert_eq!(cubin_arch(&header(8, 190, 0x6007802)), arch(120, false));
        assert_eq!(cubin_arch(&header(8, 190, 0x600640a)), arch(100, true));
        assert_eq!(arch(100, true).unwrap().to_string(), "sm_100a");
    }

    #[test]
    fn each_rejection_by_its_message() {
        let msg = |b: &[u8]| cubin_arch(b).unwrap_err().to_string();
        assert_eq!(msg(&header(7, 62, 0)), "e_machine is 62, not EM_CUDA (190)");
        assert_eq!(msg(b"\x7fELF"), "4 bytes, shorter than an ELF64 header");
        assert_eq!(msg(&[0u8; 64]), "not a 64-bit little-endian ELF file");
        assert_eq!(
            msg(&header(9, 190, 0x6005a04)),
            "CUDA ELF ABI version 9 is unknown (7 and 8 are read)"
        );
    }
}
