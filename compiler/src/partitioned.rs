//! A module written for several devices is refused before any pass, naming what says so.
//!
//! JAX marks SPMD programs in ways the HLO text keeps even when `num_partitions` is not printed:
//! a Shardy mesh of more than one device in the module's `frontend_attributes`
//! (`xla.sdy.meshes={mesh = #sdy.mesh<["x"=2]>}`), Shardy's manual-computation calls around a
//! `shard_map` body (`xla.sdy.GlobalToLocalShape` / `LocalToGlobalShape`), and GSPMD shardings
//! that tile a value over devices (`sharding={devices=[2]<=[2]}`) or mark it manual. Without a
//! partitioner (issue 30) the compiler would run such a module as one device's program: a
//! `psum` over one device, a `shard_map` body on the whole array. XLA would not; so the module
//! is refused here, with the first piece of evidence, instead of at load or not at all.
//!
//! `num_partitions` alone is not evidence: a module that is already one partition's program
//! (XLA's partitioned HLO, with `partition-id`) compiles as such, and the runtime decides whether
//! it runs that many partitions. The annotations pass refuses annotations in such a module.
use hlo::HloModule;
use hlo::{HloSharding, ShardingKind};

use crate::error::CompileError;

/// Shardy's calls around a manual computation (a `shard_map` body).
const SHARDY_MANUAL_CALLS: &[&str] = &["xla.sdy.GlobalToLocalShape", "xla.sdy.LocalToGlobalShape"];

/// Refuses a module written for more than one device.
pub fn check_single_device(module: &HloModule) -> Result<(), CompileError> {
    let refuse = |evidence: String| Err(CompileError::Partitioned { evidence });
    let attrs = module.config.frontend_attributes.as_deref().unwrap_or(&[]);
    if let Some((_, meshes)) = attrs.iter().find(|(k, _)| k == "xla.sdy.meshes") {
        if mesh_devices(meshes) > 1 {
            return refuse(format!("the Shardy mesh {meshes}"));
        }
    }
    for comp in &module.computations {
        for instr in &comp.instructions {
            let at = || format!("{}/{}", comp.name, instr.name);
            if let Some(t) = instr.attrs.custom_call_target.as_deref() {
                if SHARDY_MANUAL_CALLS.contains(&t) {
                    return refuse(format!("{}: a Shardy manual computation ({t})", at()));
                }
            }
            if let Some(s) = &instr.attrs.sharding {
                if splits(s) {
                    return refuse(format!("{}: sharding={s}", at()));
                }
            }
        }
    }
    Ok(())
}

/// The device count of the largest mesh in Shardy's `xla.sdy.meshes` text: the product of the
/// `"axis"=size` sizes of each `#sdy.mesh<[...]>` (a `maximal` or empty mesh is one device).
fn mesh_devices(text: &str) -> u64 {
    text.split("#sdy.mesh<")
        .skip(1)
        .map(|mesh| {
            let body = mesh.split('>').next().unwrap_or("");
            body.split('=')
                .skip(1)
                .filter_map(|size| {
                    let digits: String = size.chars().take_while(char::is_ascii_digit).collect();
                    digits.parse::<u64>().ok()
                })
                .fold(1u64, u64::saturating_mul)
        })
        .max()
        .unwrap_or(1)
}

/// Whether a sharding splits a value over devices or marks it manual (a tuple sharding when
/// any element does).
fn splits(s: &HloSharding) -> bool {
    match &s.kind {
        ShardingKind::Manual => true,
        ShardingKind::Tiled(_) => !s.is_replicated(),
        ShardingKind::Tuple(elems) => elems.iter().any(splits),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_meshes_and_tiles() {
        assert_eq!(mesh_devices(r#"{mesh = #sdy.mesh<["x"=2, "y"=4]>}"#), 8);
        assert_eq!(mesh_devices(r#"{mesh = #sdy.mesh<[]>}"#), 1);
        assert_eq!(
            mesh_devices(r#"{a = #sdy.mesh<["x"=1]>, b = #sdy.mesh<["x"=2]>}"#),
            2
        );
        let sharded = |t: &str| splits(&hlo_text::parse_sharding(t).unwrap());
        assert!(sharded("{devices=[2]<=[2]}"));
        assert!(sharded("{devices=[2,1]0,1}"));
        assert!(sharded("{manual}"));
        assert!(sharded("{{replicated}, {devices=[2]<=[2]}}"));
        assert!(!sharded("{devices=[1,2]<=[2] last_tile_dim_replicate}"));
        assert!(!sharded("{replicated}"));
        assert!(!sharded("{maximal device=0}"));
    }
}
