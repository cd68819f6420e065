//! What a PTX module needs of the software and hardware that run it: the CUDA toolkit a
//! `.version` needs ([`min_toolkit`]), and the compute capabilities a `.target` runs on
//! ([`Arch::runs_on`]).
//!
//! # The toolkit a `.version` needs
//!
//! A driver (or `ptxas`, nvPTXCompiler, nvJitLink) of CUDA toolkit X.Y accepts PTX up to the ISA
//! version released with X.Y and refuses newer ones. [`TOOLKIT_FOR_ISA`] is NVIDIA's release
//! history: the PTX ISA manual's "Release Notes" table
//! (<https://docs.nvidia.com/cuda/parallel-thread-execution/#release-notes-ptx-release-history>),
//! as NVIDIA's own `cuda-python` copies it (`cuda/bindings/utils/_ptx_utils.py`,
//! `get_minimal_required_cuda_ver_from_ptx_ver`). CUDA 12.6 shipped no new ISA, so 8.6 needs 12.7.
//!
//! # Where a `.target` runs
//!
//! `.target sm_XY` (X the major, Y the minor compute capability; `sm_90` is 9.0, `sm_103` 10.3):
//!
//! - plain `sm_XY`: on any device of compute capability X.Y or newer (the driver JIT-compiles
//!   the PTX for the newer device);
//! - `sm_XYa` (architecture-specific, PTX ISA 8.0+): only on exactly X.Y, with the features
//!   NVIDIA calls accelerated (`feature_extension: ACCELERATED_FEATURES`);
//! - `sm_XYf` (family-specific, PTX ISA 8.8+): on the members of X.Y's family, which the CUDA
//!   programming guide ("Family-Specific Features") defines as the same major version and a minor
//!   version ≥ Y (`sm_100f` runs on 10.0 and 10.3, not on 11.0 or 12.0).
//!
//! XLA's `CudaComputeCapability::CanRunOn` implements the same three rules. A capability that
//! declares `ACCELERATED_FEATURES` has the family features too (an `a` target is a superset of the
//! `f` target, which is a superset of the plain one).
use std::fmt;

use crate::ast::Version;

/// A CUDA toolkit version, major.minor (12.8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Toolkit {
    /// 12 in 12.8.
    pub major: u32,
    /// 8 in 12.8.
    pub minor: u32,
}

impl fmt::Display for Toolkit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

const fn row(isa: (u32, u32), toolkit: (u32, u32)) -> (Version, Toolkit) {
    (
        Version {
            major: isa.0,
            minor: isa.1,
        },
        Toolkit {
            major: toolkit.0,
            minor: toolkit.1,
        },
    )
}

/// Each PTX ISA version and the first CUDA toolkit that accepts it, oldest first (see the module
/// docs for the source).
pub const TOOLKIT_FOR_ISA: &[(Version, Toolkit)] = &[
    row((1, 0), (1, 0)),
    row((1, 1), (1, 1)),
    row((1, 2), (2, 0)),
    row((1, 3), (2, 1)),
    row((1, 4), (2, 2)),
    row((2, 0), (3, 0)),
    row((2, 1), (3, 1)),
    row((2, 2), (3, 2)),
    row((2, 3), (4, 0)),
    row((3, 0), (4, 1)),
    row((3, 1), (5, 0)),
    row((3, 2), (5, 5)),
    row((4, 0), (6, 0)),
    row((4, 1), (6, 5)),
    row((4, 2), (7, 0)),
    row((4, 3), (7, 5)),
    row((5, 0), (8, 0)),
    row((6, 0), (9, 0)),
    row((6, 1), (9, 1)),
    row((6, 2), (9, 2)),
    row((6, 3), (10, 0)),
    row((6, 4), (10, 1)),
    row((6, 5), (10, 2)),
    row((7, 0), (11, 0)),
    row((7, 1), (11, 1)),
    row((7, 2), (11, 2)),
    row((7, 3), (11, 3)),
    row((7, 4), (11, 4)),
    row((7, 5), (11, 5)),
    row((7, 6), (11, 6)),
    row((7, 7), (11, 7)),
    row((7, 8), (11, 8)),
    row((8, 0), (12, 0)),
    row((8, 1), (12, 1)),
    row((8, 2), (12, 2)),
    row((8, 3), (12, 3)),
    row((8, 4), (12, 4)),
    row((8, 5), (12, 5)),
    row((8, 6), (12, 7)),
    row((8, 7), (12, 8)),
    row((8, 8), (12, 9)),
    row((9, 0), (13, 0)),
    row((9, 1), (13, 1)),
];

/// What a `.version` needs of the toolkit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolkitNeed {
    /// This toolkit or a newer one.
    AtLeast(Toolkit),
    /// A version newer than the newest in [`TOOLKIT_FOR_ISA`]: a toolkit newer than any the
    /// table knows.
    Unknown,
}

impl ToolkitNeed {
    /// Whether a toolkit of version `have` accepts the PTX.
    pub fn met_by(self, have: Toolkit) -> bool {
        match self {
            ToolkitNeed::AtLeast(need) => have >= need,
            ToolkitNeed::Unknown => false,
        }
    }
}

impl fmt::Display for ToolkitNeed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ToolkitNeed::AtLeast(t) => write!(f, "CUDA toolkit {t} or newer"),
            ToolkitNeed::Unknown => match TOOLKIT_FOR_ISA.last() {
                Some((isa, toolkit)) => write!(
                    f,
                    "a CUDA toolkit newer than any this table knows (the newest it knows is {toolkit}, for PTX ISA {}.{})",
                    isa.major, isa.minor
                ),
                None => f.write_str("a CUDA toolkit newer than any this table knows"),
            },
        }
    }
}

/// The oldest CUDA toolkit that accepts PTX of ISA `version`. A version between two of the
/// table's (none exists today) needs what the next newer one needs; one newer than all of them
/// is [`ToolkitNeed::Unknown`].
pub fn min_toolkit(version: Version) -> ToolkitNeed {
    let key = (version.major, version.minor);
    TOOLKIT_FOR_ISA
        .iter()
        .find(|(isa, _)| (isa.major, isa.minor) >= key)
        .map_or(ToolkitNeed::Unknown, |&(_, t)| ToolkitNeed::AtLeast(t))
}

/// The feature set of a target or a compute capability.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Features {
    /// Plain `sm_XY`: features every newer device has too.
    Baseline,
    /// `sm_XYf`: the features of X.Y's family (same major, minor ≥ Y).
    Family,
    /// `sm_XYa`: the architecture-specific features of exactly X.Y.
    Accelerated,
}

impl Features {
    fn suffix(self) -> &'static str {
        match self {
            Features::Baseline => "",
            Features::Family => "f",
            Features::Accelerated => "a",
        }
    }
}

/// A compute capability with its feature set: what `.target sm_90a` names, and what an
/// executable or a device declares (`major`, `minor`, `feature_extension`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Arch {
    /// 9 in `sm_90a`.
    pub major: u32,
    /// 0 in `sm_90a`.
    pub minor: u32,
    /// `a` in `sm_90a`.
    pub features: Features,
}

impl fmt::Display for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "sm_{}{}{}",
            self.major,
            self.minor,
            self.features.suffix()
        )
    }
}

/// Why a `.target` does not run on a compute capability ([`Arch::runs_on`]); its `Display` is
/// the rule, for messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mismatch {
    /// A plain target newer than the capability.
    Newer,
    /// An `a` target on another major.minor, or on a capability without accelerated features.
    Accelerated,
    /// An `f` target outside its family, or on a capability without the family features.
    Family,
}

impl Arch {
    /// Parses a `.target` architecture: `sm_` then the capability's digits (the last one is the
    /// minor version), then an optional `a` or `f`. Anything else (`compute_90`, `sm_9`, `sm_90x`)
    /// is `None`.
    pub fn parse(arch: &str) -> Option<Arch> {
        let rest = arch.strip_prefix("sm_")?;
        let (digits, features) = match rest.as_bytes().last()? {
            b'a' => (&rest[..rest.len() - 1], Features::Accelerated),
            b'f' => (&rest[..rest.len() - 1], Features::Family),
            _ => (rest, Features::Baseline),
        };
        if digits.len() < 2 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let (major, minor) = digits.split_at(digits.len() - 1);
        Some(Arch {
            major: major.parse().ok()?,
            minor: minor.parse().ok()?,
            features,
        })
    }

    /// Whether code for this target runs on `cc` (see the module docs for the rules).
    pub fn runs_on(&self, cc: &Arch) -> Result<(), Mismatch> {
        let own = (self.major, self.minor);
        let other = (cc.major, cc.minor);
        match self.features {
            Features::Baseline if own <= other => Ok(()),
            Features::Baseline => Err(Mismatch::Newer),
            Features::Accelerated if own == other && cc.features == Features::Accelerated => Ok(()),
            Features::Accelerated => Err(Mismatch::Accelerated),
            Features::Family
                if self.major == cc.major
                    && self.minor <= cc.minor
                    && cc.features != Features::Baseline =>
            {
                Ok(())
            }
            Features::Family => Err(Mismatch::Family),
        }
    }

    /// The rule `target` breaks, in words: "PTX for sm_90a runs only on compute capability 9.0
    /// with accelerated features".
    pub fn rule(&self, mismatch: Mismatch) -> String {
        let (m, n) = (self.major, self.minor);
        match mismatch {
            Mismatch::Newer => format!("PTX for {self} runs only on compute capability {m}.{n} or newer"),
            Mismatch::Accelerated => format!(
                "PTX for {self} runs only on compute capability {m}.{n} with accelerated features"
            ),
            Mismatch::Family => format!(
                "PTX for {self} runs only on compute capability {m}.x with x >= {n} and family or accelerated features"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(major: u32, minor: u32) -> Version {
        Version { major, minor }
    }

    fn tk(major: u32, minor: u32) -> ToolkitNeed {
        ToolkitNeed::AtLeast(Toolkit { major, minor })
    }

    fn arch(s: &str) -> Arch {
        Arch::parse(s).unwrap()
    }

    #[test]
    fn the_toolkit_of_each_isa_version() {
        assert_eq!(min_toolkit(v(7, 0)), tk(11, 0));
        assert_eq!(min_toolkit(v(7, 8)), tk(11, 8));
        assert_eq!(min_toolkit(v(8, 0)), tk(12, 0));
        assert_eq!(min_toolkit(v(8, 5)), tk(12, 5));
        // CUDA 12.6 brought no new ISA.
        assert_eq!(min_toolkit(v(8, 6)), tk(12, 7));
        assert_eq!(min_toolkit(v(8, 7)), tk(12, 8));
        assert_eq!(min_toolkit(v(8, 8)), tk(12, 9));
        assert_eq!(min_toolkit(v(9, 0)), tk(13, 0));
        assert_eq!(min_toolkit(v(6, 5)), tk(10, 2));
        // No 8.9 exists: it needs what 9.0 needs.
        assert_eq!(min_toolkit(v(8, 9)), tk(13, 0));
        assert_eq!(min_toolkit(v(9, 5)), ToolkitNeed::Unknown);
        assert_eq!(min_toolkit(v(10, 0)), ToolkitNeed::Unknown);
    }

    #[test]
    fn the_table_is_sorted_both_ways() {
        for w in TOOLKIT_FOR_ISA.windows(2) {
            let (a, b) = (w[0], w[1]);
            assert!(
                (a.0.major, a.0.minor) < (b.0.major, b.0.minor),
                "{a:?} {b:?}"
            );
            assert!(a.1 < b.1, "{a:?} {b:?}");
        }
    }

    #[test]
    fn needs_read_as_sentences() {
        assert_eq!(tk(13, 0).to_string(), "CUDA toolkit 13.0 or newer");
        assert_eq!(
            ToolkitNeed::Unknown.to_string(),
            "a CUDA toolkit newer than any this table knows (the newest it knows is 13.1, for PTX ISA 9.1)"
        );
        assert!(tk(12, 8).met_by(Toolkit {
            major: 12,
            minor: 8
        }));
        assert!(!tk(13, 0).met_by(Toolkit {
            major: 12,
            minor: 9
        }));
        assert!(!ToolkitNeed::Unknown.met_by(Toolkit {
            major: 99,
            minor: 0
        }));
    }

    #[test]
    fn targets_parse_and_print() {
        for (s, major, minor, f) in [
            ("sm_90a", 9, 0, Features::Accelerated),
            ("sm_80", 8, 0, Features::Baseline),
            ("sm_52", 5, 2, Features::Baseline),
            ("sm_100f", 10, 0, Features::Family),
            ("sm_103a", 10, 3, Features::Accelerated),
            ("sm_120", 12, 0, Features::Baseline),
        ] {
            let a = arch(s);
            assert_eq!((a.major, a.minor, a.features), (major, minor, f), "{s}");
            assert_eq!(a.to_string(), s);
        }
        for bad in [
            "compute_90",
            "sm_9",
            "sm_",
            "sm_90x",
            "sm_9a0",
            "sm_a",
            "90",
            "",
        ] {
            assert_eq!(Arch::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn plain_targets_run_on_newer_capabilities() {
        assert_eq!(arch("sm_80").runs_on(&arch("sm_80")), Ok(()));
        assert_eq!(arch("sm_80").runs_on(&arch("sm_90a")), Ok(()));
        assert_eq!(arch("sm_80").runs_on(&arch("sm_86")), Ok(()));
        assert_eq!(arch("sm_90").runs_on(&arch("sm_80")), Err(Mismatch::Newer));
        assert_eq!(
            arch("sm_100").runs_on(&arch("sm_90a")),
            Err(Mismatch::Newer)
        );
    }

    #[test]
    fn accelerated_targets_run_only_on_their_own_capability_with_the_features() {
        assert_eq!(arch("sm_90a").runs_on(&arch("sm_90a")), Ok(()));
        for cc in ["sm_90", "sm_100a", "sm_80", "sm_90f"] {
            assert_eq!(
                arch("sm_90a").runs_on(&arch(cc)),
                Err(Mismatch::Accelerated),
                "{cc}"
            );
        }
    }

    #[test]
    fn family_targets_run_on_their_family() {
        assert_eq!(arch("sm_100f").runs_on(&arch("sm_100f")), Ok(()));
        assert_eq!(arch("sm_100f").runs_on(&arch("sm_103a")), Ok(()));
        assert_eq!(arch("sm_100f").runs_on(&arch("sm_103f")), Ok(()));
        for cc in ["sm_103", "sm_110f", "sm_120a", "sm_90a"] {
            assert_eq!(
                arch("sm_100f").runs_on(&arch(cc)),
                Err(Mismatch::Family),
                "{cc}"
            );
        }
        assert_eq!(
            arch("sm_103f").runs_on(&arch("sm_100f")),
            Err(Mismatch::Family)
        );
    }

    #[test]
    fn rules_read_as_sentences() {
        assert_eq!(
            arch("sm_100").rule(Mismatch::Newer),
            "PTX for sm_100 runs only on compute capability 10.0 or newer"
        );
        assert_eq!(
            arch("sm_90a").rule(Mismatch::Accelerated),
            "PTX for sm_90a runs only on compute capability 9.0 with accelerated features"
        );
        assert_eq!(
            arch("sm_100f").rule(Mismatch::Family),
            "PTX for sm_100f runs only on compute capability 10.x with x >= 0 and family or accelerated features"
        );
    }
}
