//! The `kernel-header` rule: what the newest goldens (what today's compiler emits by default)
//! record of their kernels' PTX headers against the CUDA toolkit their artifacts declare.
//!
//! The census carries `ptx:needs-cuda:X.Y` (the oldest toolkit that JIT-compiles the kernels'
//! PTX ISA, worked out by the harness from `ptx::compat`, or `unknown` past its table) and
//! `abi:cuda-toolkit:X.Y.Z` (`executable_abi_version`). A runtime set up for the declared toolkit
//! cannot load kernels that need a newer one, so such a golden is an artifact that contradicts
//! itself; the compiler and the loader refuse it too, and this rule is the same check on the
//! census, for a pull request whose goldens were written by anything else. The bot itself knows no
//! PTX: it compares two versions.
use crate::census::Census;
use crate::finding::{Finding, Rule};

/// A version (`X.Y.Z` as the ABI writes it, missing components 0: `proto::Version`)
/// as (X, Y); anything else is `None`.
fn major_minor(version: &str) -> Option<(u64, u64)> {
    proto::Version::parse(version).map(|v| (v.major, v.minor))
}

/// One finding per newest golden whose kernels need a newer CUDA toolkit than it declares.
pub fn kernel_headers(census: &Census) -> Vec<Finding> {
    let mut out = Vec::new();
    for golden in census.newest_per_target() {
        let values = |prefix: &str| -> Vec<&str> {
            golden
                .constructs
                .iter()
                .filter_map(|c| c.strip_prefix(prefix))
                .collect()
        };
        let declared = values("abi:cuda-toolkit:");
        // The oldest declared toolkit bounds every kernel (a version's cases share one target).
        let Some((written, have)) = declared
            .iter()
            .filter_map(|d| Some((*d, major_minor(d)?)))
            .min_by_key(|(_, v)| *v)
        else {
            continue;
        };
        let too_new: Vec<&str> = values("ptx:needs-cuda:")
            .into_iter()
            .filter(|need| major_minor(need).is_none_or(|n| n > have))
            .collect();
        let Some(need) = too_new.iter().max_by_key(|n| major_minor(n)) else {
            continue;
        };
        let isas: Vec<&str> = values("ptx:isa:");
        out.push(Finding::new(
            Rule::KernelHeader,
            format!("ptx:needs-cuda:{need}"),
            format!(
                "golden {} (what today's compiler emits) has kernels whose PTX (ISA {}) needs CUDA toolkit {need}, but its artifacts declare CUDA toolkit {written}: a runtime set up for {written} cannot JIT-compile them",
                golden.label(),
                isas.join(", ")
            ),
            None,
            format!(
                "emit a PTX .version that CUDA {written} accepts, or declare the newer toolkit (a new target config) and regenerate the goldens"
            ),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::census::Golden;
    use crate::Date;

    fn census(constructs: &[&str]) -> Census {
        Census {
            goldens: vec![Golden {
                target: "h100".into(),
                version: 5,
                created: "2026-12-03".parse::<Date>().unwrap(),
                constructs: constructs.iter().map(|c| (*c).to_owned()).collect(),
            }],
        }
    }

    #[test]
    fn a_kernel_needing_a_newer_toolkit_than_declared_is_an_error() {
        let f = kernel_headers(&census(&[
            "abi:cuda-toolkit:12.8.0",
            "ptx:isa:9.0",
            "ptx:isa:8.7",
            "ptx:needs-cuda:13.0",
            "ptx:needs-cuda:12.8",
        ]));
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].rule, Rule::KernelHeader);
        assert_eq!(
            f[0].message,
            "golden h100/v5 (what today's compiler emits) has kernels whose PTX (ISA 8.7, 9.0) needs CUDA toolkit 13.0, but its artifacts declare CUDA toolkit 12.8.0: a runtime set up for 12.8.0 cannot JIT-compile them"
        );
    }

    #[test]
    fn an_isa_past_the_table_is_an_error_and_a_matching_one_is_not() {
        let unknown = kernel_headers(&census(&[
            "abi:cuda-toolkit:13.1.0",
            "ptx:needs-cuda:unknown",
        ]));
        assert_eq!(unknown.len(), 1);
        assert_eq!(unknown[0].construct, "ptx:needs-cuda:unknown");
        assert!(
            kernel_headers(&census(&["abi:cuda-toolkit:12.8.0", "ptx:needs-cuda:12.8"])).is_empty()
        );
        // No declared toolkit (XLA's a100 configs): the device's is checked at load instead.
        assert!(kernel_headers(&census(&["ptx:needs-cuda:13.0"])).is_empty());
    }
}
