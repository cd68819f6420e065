//! Facts of the contract that more than one crate reads, kept here once: the `X.Y.Z` versions of
//! `ExecutableAbiVersionProto` and the target config (the runtime's ABI check, the compiler's
//! toolkit bound, the harness's ABI probes and the bot's kernel-header rule all parse them), and
//! the wire class of a field type (the bot's schema rules and the harness's forward replay both
//! compare them), and the compute capabilities a target config may name (the compiler and the
//! runtime both refuse one outside them, with the same message).
use std::fmt;
use std::ops::RangeInclusive;

use prost_reflect::Kind;

/// A version as the ABI and the target config write it: `X.Y.Z`, with missing components 0
/// (`12.4` is 12.4.0). Ordered component by component, as the ABI check compares them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Version {
    /// X.
    pub major: u64,
    /// Y.
    pub minor: u64,
    /// Z.
    pub patch: u64,
}

impl Version {
    /// Parses `X`, `X.Y` or `X.Y.Z` (surrounding whitespace ignored); `None` for anything else:
    /// an empty string, a non-numeric component, or more than three.
    pub fn parse(s: &str) -> Option<Version> {
        let mut out = [0u64; 3];
        let mut n = 0;
        for (i, part) in s.trim().split('.').enumerate() {
            let slot = out.get_mut(i)?;
            *slot = part.parse().ok()?;
            n += 1;
        }
        let [major, minor, patch] = out;
        (n > 0).then_some(Version {
            major,
            minor,
            patch,
        })
    }

    /// 0.0.0: what XLA records for a component its target config has no version of; a
    /// requirement of 0.0.0 asks for nothing.
    pub fn is_zero(self) -> bool {
        self == Version::default()
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// The majors a target config's `cuda_compute_capability` may have: sm_30 is the oldest target
/// ptxas ever accepted, and 20 leaves room above every device announced (today's newest is 12).
pub const COMPUTE_CAPABILITY_MAJOR: RangeInclusive<i32> = 3..=20;
/// The minors: one digit, as in `sm_XY`.
pub const COMPUTE_CAPABILITY_MINOR: RangeInclusive<i32> = 0..=9;

/// A `cuda_compute_capability` outside [`COMPUTE_CAPABILITY_MAJOR`] and
/// [`COMPUTE_CAPABILITY_MINOR`]: no CUDA device has it and no PTX `.target` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("cuda_compute_capability {major}.{minor} is not a CUDA compute capability")]
pub struct CapabilityOutOfRange {
    /// The config's major.
    pub major: i32,
    /// The config's minor.
    pub minor: i32,
}

/// Checks a target config's compute capability against the one bound both sides read.
pub fn check_compute_capability(major: i32, minor: i32) -> Result<(), CapabilityOutOfRange> {
    if COMPUTE_CAPABILITY_MAJOR.contains(&major) && COMPUTE_CAPABILITY_MINOR.contains(&minor) {
        Ok(())
    } else {
        Err(CapabilityOutOfRange { major, minor })
    }
}

/// How a value is laid out on the wire; changing it breaks every reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WireClass {
    /// int32, int64, uint32, uint64, bool, enum.
    Varint,
    /// sint32, sint64.
    ZigZag,
    /// fixed32, sfixed32, float.
    Fixed32,
    /// fixed64, sfixed64, double.
    Fixed64,
    /// string, bytes, messages.
    Length,
    /// proto2 groups.
    Group,
}

impl WireClass {
    /// The class of a field of type `kind` (`is_group`: a proto2 group, whose message is
    /// delimited by start and end tags instead of a length).
    pub fn of(kind: &Kind, is_group: bool) -> WireClass {
        match kind {
            Kind::Int32
            | Kind::Int64
            | Kind::Uint32
            | Kind::Uint64
            | Kind::Bool
            | Kind::Enum(_) => WireClass::Varint,
            Kind::Sint32 | Kind::Sint64 => WireClass::ZigZag,
            Kind::Fixed32 | Kind::Sfixed32 | Kind::Float => WireClass::Fixed32,
            Kind::Fixed64 | Kind::Sfixed64 | Kind::Double => WireClass::Fixed64,
            Kind::Message(_) if is_group => WireClass::Group,
            Kind::String | Kind::Bytes | Kind::Message(_) => WireClass::Length,
        }
    }

    /// The class within which protobuf documents a change of an integer type as
    /// wire-compatible (values are read back truncated or reinterpreted, so each value must also
    /// fit the older type); `None` for floats, strings, bytes and messages, whose type changes
    /// never are.
    pub fn of_integer(kind: &Kind) -> Option<WireClass> {
        match kind {
            Kind::Float | Kind::Double | Kind::String | Kind::Bytes | Kind::Message(_) => None,
            k => Some(WireClass::of(k, false)),
        }
    }

    /// Lower-case name for messages.
    pub fn name(self) -> &'static str {
        match self {
            WireClass::Varint => "varint",
            WireClass::ZigZag => "zigzag varint",
            WireClass::Fixed32 => "fixed32",
            WireClass::Fixed64 => "fixed64",
            WireClass::Length => "length-delimited",
            WireClass::Group => "group",
        }
    }
}

/// The library behind a custom-call target of XLA:CPU, which JAX lowers to when a function is
/// lowered for the CPU: LAPACK through jaxlib's `lapack_*` handlers (`lapack_strsm_ffi` for a
/// triangular solve, `lapack_sgetrf_ffi` for an LU factorization) and FFTs through DUCC
/// (`ducc_fft`, `dynamic_ducc_fft`). No GPU runtime has them (lowered for CUDA, the same
/// functions call `cusolver_*` and `cu*fft` targets or plain HLO): a module calling one was
/// lowered for the wrong platform, which both sides say rather than "not registered".
pub fn cpu_custom_call_library(target: &str) -> Option<&'static str> {
    if target.starts_with("lapack_") {
        Some("LAPACK")
    } else if target.starts_with("ducc_") || target.starts_with("dynamic_ducc_") {
        Some("DUCC FFT")
    } else {
        None
    }
}

/// What a user does about a [`cpu_custom_call_library`] target.
pub const CPU_TARGET_ADVICE: &str = "the module was lowered for the CPU; lower it for the GPU \
     (`jax.export.export(jax.jit(f), platforms=[\"cuda\"])`, or `jax.jit(f).lower(...)` with a \
     GPU backend)";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse_with_missing_components_zero_and_nothing_else() {
        let v = |major, minor, patch| {
            Some(Version {
                major,
                minor,
                patch,
            })
        };
        assert_eq!(Version::parse("12.4.1"), v(12, 4, 1));
        assert_eq!(Version::parse(" 12.4 "), v(12, 4, 0));
        assert_eq!(Version::parse("9"), v(9, 0, 0));
        for bad in ["", "12.x", "1.2.3.4", "12..1", "-1.0.0", "v12"] {
            assert_eq!(Version::parse(bad), None, "{bad:?}");
        }
        assert!(Version::parse("0.0").is_some_and(Version::is_zero));
        assert!(Version::parse("12.4.1") > Version::parse("12.4"));
        assert_eq!(
            Version::parse("12.4").map(|v| v.to_string()),
            Some("12.4.0".into())
        );
    }

    #[test]
    fn compute_capabilities_run_from_sm_30_to_major_20_with_one_digit_minors() {
        for (major, minor) in [(3, 0), (9, 0), (10, 3), (12, 1), (20, 9)] {
            assert_eq!(check_compute_capability(major, minor), Ok(()));
        }
        for (major, minor, message) in [
            (
                2,
                0,
                "cuda_compute_capability 2.0 is not a CUDA compute capability",
            ),
            (
                21,
                0,
                "cuda_compute_capability 21.0 is not a CUDA compute capability",
            ),
            (
                -1,
                0,
                "cuda_compute_capability -1.0 is not a CUDA compute capability",
            ),
            (
                9,
                10,
                "cuda_compute_capability 9.10 is not a CUDA compute capability",
            ),
            (
                9,
                -1,
                "cuda_compute_capability 9.-1 is not a CUDA compute capability",
            ),
        ] {
            let err = check_compute_capability(major, minor).unwrap_err();
            assert_eq!(err, CapabilityOutOfRange { major, minor });
            assert_eq!(err.to_string(), message);
        }
    }

    #[test]
    fn cpu_targets_are_lapack_and_ducc_only() {
        assert_eq!(cpu_custom_call_library("lapack_strsm_ffi"), Some("LAPACK"));
        assert_eq!(cpu_custom_call_library("lapack_sgetrf"), Some("LAPACK"));
        assert_eq!(cpu_custom_call_library("ducc_fft"), Some("DUCC FFT"));
        assert_eq!(
            cpu_custom_call_library("dynamic_ducc_fft"),
            Some("DUCC FFT")
        );
        for gpu in [
            "cusolver_getrf_ffi",
            "cu_lu_pivots_to_permutation",
            "__cublas$gemm",
            "lapack",
        ] {
            assert_eq!(cpu_custom_call_library(gpu), None, "{gpu}");
        }
    }
}
