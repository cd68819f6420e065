//! One global io file for a program of several devices (issue 30): JAX's multi-device pieces
//! come with the inputs and outputs of the whole program (what `jax.jit(f)(x)` takes and gives),
//! while each device runs its shard. The entry's shardings (as the compiler's partitioner reads
//! them: Shardy's attributes imported, calls inlined; `compiler::entry_shardings`)
//! say which piece of each global array a device holds, so the global case is split into one
//! case per device: its inputs are what the device is given, its outputs what it must compute.
//! Every element of a global output is then checked on each device that holds it.
use anyhow::{anyhow, bail, Context};
use hlo::Array;
use hlo::{HloSharding, ShardingKind};
use hlo_eval::IoCase;

/// The piece of `global` that device `device` holds under `sharding`.
pub fn shard_of(global: &Array, sharding: &HloSharding, device: i64) -> anyhow::Result<Array> {
    match &sharding.kind {
        // Every device holds the whole value (a maximal sharding's other devices too: the
        // per-device program still takes the parameter).
        ShardingKind::Replicated | ShardingKind::Maximal(_) => Ok(global.clone()),
        ShardingKind::Tiled(t) => {
            let devices = t.assignment.devices();
            let position = devices.iter().position(|&d| d == device).ok_or_else(|| {
                anyhow!("device {device} holds no tile of {}", sharding.print(false))
            })?;
            let tile_dims: Vec<usize> = t.assignment.dims().iter().map(|&d| d as usize).collect();
            let coords = hlo_eval::unravel(position, &tile_dims);
            let data = t.data_dims();
            if data.len() != global.dims().len() {
                bail!(
                    "{} splits {} dimensions of an array of rank {}",
                    sharding.print(false),
                    data.len(),
                    global.dims().len()
                );
            }
            let mut spec = Vec::with_capacity(data.len());
            for (k, (&n, &tiles)) in global.dims().iter().zip(data).enumerate() {
                let tiles = tiles as usize;
                if n % tiles != 0 {
                    bail!(
                        "dimension {k} of size {n} does not split evenly into {tiles} tiles ({})",
                        sharding.print(false)
                    );
                }
                let (size, start) = (n / tiles, coords[k] * (n / tiles));
                spec.push((start as i64, (start + size) as i64, 1));
            }
            Ok(hlo_eval::slice(global, &spec)?)
        }
        other => bail!("no global io split for a {other:?} sharding"),
    }
}

/// The per-device cases of a global `case`, for `devices` devices: each input split by its
/// parameter's sharding, each output by its result leaf's.
pub fn split_case(
    case: &IoCase,
    params: &[HloSharding],
    results: &[HloSharding],
    devices: i64,
) -> anyhow::Result<Vec<IoCase>> {
    if case.inputs.len() != params.len() || case.outputs.len() != results.len() {
        bail!(
            "the io file has {} inputs and {} outputs; the program has {} parameters and {} results",
            case.inputs.len(),
            case.outputs.len(),
            params.len(),
            results.len()
        );
    }
    (0..devices)
        .map(|d| {
            let split = |list: &[Array], shardings: &[HloSharding], what: &str| {
                list.iter()
                    .zip(shardings)
                    .enumerate()
                    .map(|(i, (a, s))| shard_of(a, s, d).with_context(|| format!("{what} {i}")))
                    .collect::<anyhow::Result<Vec<_>>>()
            };
            Ok(IoCase {
                inputs: split(&case.inputs, params, "input")?,
                outputs: split(&case.outputs, results, "output")?,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use hlo::Data;

    fn iota(dims: Vec<usize>) -> Array {
        let n: usize = dims.iter().product();
        Array::new(dims, Data::S32((0..n as i32).collect())).unwrap()
    }

    fn values(a: &Array) -> Vec<i64> {
        (0..a.data().len())
            .map(|i| a.data().get_i64(i).unwrap())
            .collect()
    }

    #[test]
    fn tiles_follow_the_assignment() {
        let g = iota(vec![4, 2]);
        // Rows split in two, the devices listed in reverse.
        let s = hlo_text::parse_sharding("{devices=[2,1]1,0}").unwrap();
        assert_eq!(values(&shard_of(&g, &s, 0).unwrap()), [4, 5, 6, 7]);
        assert_eq!(values(&shard_of(&g, &s, 1).unwrap()), [0, 1, 2, 3]);
        // Columns split, two replicas of each tile (last_tile_dim_replicate).
        let s = hlo_text::parse_sharding("{devices=[1,2,2]<=[4] last_tile_dim_replicate}").unwrap();
        assert_eq!(values(&shard_of(&g, &s, 1).unwrap()), [0, 2, 4, 6]);
        assert_eq!(values(&shard_of(&g, &s, 3).unwrap()), [1, 3, 5, 7]);
        let r = hlo_text::parse_sharding("{replicated}").unwrap();
        assert_eq!(values(&shard_of(&g, &r, 1).unwrap()), values(&g));
    }

    #[test]
    fn an_uneven_split_is_refused() {
        let g = iota(vec![3, 2]);
        let s = hlo_text::parse_sharding("{devices=[2,1]0,1}").unwrap();
        assert_eq!(
            shard_of(&g, &s, 0).unwrap_err().to_string(),
            "dimension 0 of size 3 does not split evenly into 2 tiles ({devices=[2,1]0,1})"
        );
    }
}
