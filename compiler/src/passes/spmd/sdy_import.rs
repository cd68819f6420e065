//! JAX's HLO text keeps Shardy's form (`xla.sdy.*` custom calls and frontend attributes, the
//! meshes in the module's `xla.sdy.meshes`). XLA's importer turns it back into shardings; this
//! does the same into the GSPMD form the StableHLO front end writes:
//!
//! - `xla.sdy.GlobalToLocalShape(a, ...)` (`xla.sdy.in_shardings`, `xla.sdy.manual_axes`):
//!   per operand a `Sharding` custom call and an `SPMDFullToShardShape` to the manual shard;
//! - `xla.sdy.LocalToGlobalShape(v, ...)` (`xla.sdy.out_shardings`): per operand a `Sharding`
//!   custom call (manual) and an `SPMDShardToFullShape` back to the global shape;
//! - `xla.sdy.FuncResultSharding(x)` (`xla.sdy.sharding`): a `Sharding` custom call;
//! - an instruction with `xla.sdy.sharding` and no `sharding=`: that sharding.
//!
//! Several operands make a `tuple` of the results, as the custom call returned one.
use hlo::{Attrs, Computation, HloSharding, ShardingKind};
use hlo::{HloModule, InstrId, Instruction, Opcode, Shape};
use hlo_front::{
    parse_sdy_manual_axes, parse_sdy_mesh, parse_sdy_per_value, parse_sdy_sharding,
    sdy_to_hlo_sharding, SdyError, SdyMeshes as Meshes,
};

use crate::error::CompileError;
use crate::passes::rebuild::{for_each_computation, rebuild, Rebuild, Scope};
use crate::unsupported::UnsupportedSharding;

const GLOBAL_TO_LOCAL: &str = "xla.sdy.GlobalToLocalShape";
const LOCAL_TO_GLOBAL: &str = "xla.sdy.LocalToGlobalShape";
const RESULT_SHARDING: &str = "xla.sdy.FuncResultSharding";

/// What is wrong with a module's `xla.sdy.meshes` attribute.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MeshesError {
    /// An entry that is not `name = #sdy.mesh<...>`.
    #[error("xla.sdy.meshes: `{0}` is not `name = #sdy.mesh<...>`")]
    NotAnEntry(String),
    /// A mesh that does not parse.
    #[error("xla.sdy.meshes: {0}")]
    Mesh(#[from] SdyError),
}

/// The module's Shardy meshes (`xla.sdy.meshes={mesh = #sdy.mesh<...>, ...}`).
pub(crate) fn meshes(module: &HloModule) -> Result<Meshes, MeshesError> {
    let attrs = module.config.frontend_attributes.as_deref().unwrap_or(&[]);
    let Some((_, text)) = attrs.iter().find(|(k, _)| k == "xla.sdy.meshes") else {
        return Ok(Vec::new());
    };
    let body = text.trim().trim_start_matches('{').trim_end_matches('}');
    let mut out = Vec::new();
    for entry in top_level_split(body) {
        let Some((name, mesh)) = entry.split_once('=') else {
            return Err(MeshesError::NotAnEntry(entry.to_owned()));
        };
        let name = name.trim().trim_matches('"').to_string();
        let mesh = parse_sdy_mesh(mesh)?;
        out.push((name, mesh));
    }
    Ok(out)
}

/// `text` split at the commas outside brackets and quotes.
fn top_level_split(text: &str) -> Vec<&str> {
    let (mut depth, mut quoted, mut start) = (0i32, false, 0usize);
    let mut out = Vec::new();
    for (i, c) in text.char_indices() {
        match c {
            '"' => quoted = !quoted,
            '<' | '[' | '{' | '(' if !quoted => depth += 1,
            '>' | ']' | '}' | ')' if !quoted => depth -= 1,
            ',' if !quoted && depth == 0 => {
                out.push(text[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    if !text[start..].trim().is_empty() {
        out.push(text[start..].trim());
    }
    out
}

fn frontend<'a>(i: &'a Instruction, key: &str) -> Option<&'a str> {
    i.attrs
        .frontend_attributes
        .as_deref()?
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

fn target(i: &Instruction) -> Option<&str> {
    (i.opcode == Opcode::CustomCall)
        .then_some(i.attrs.custom_call_target.as_deref())
        .flatten()
}

/// Whether the module uses Shardy's HLO form.
pub(crate) fn uses_shardy(module: &HloModule) -> bool {
    // Only what runs: the partitioner leaves the inlined callees' originals unreachable, and a
    // partitioned program read again must not look unpartitioned because of them.
    let reachable = module.post_order();
    let mut comps = reachable.iter().filter_map(|&id| module.get(id));
    comps.any(|c| {
        c.instructions.iter().any(|i| {
            matches!(
                target(i),
                Some(GLOBAL_TO_LOCAL | LOCAL_TO_GLOBAL | RESULT_SHARDING)
            ) || (i.attrs.sharding.is_none() && frontend(i, "xla.sdy.sharding").is_some())
        })
    })
}

/// Rewrites the Shardy form into shardings and GSPMD custom calls.
pub(crate) fn run(module: &mut HloModule) -> Result<(), CompileError> {
    if !uses_shardy(module) {
        return Ok(());
    }
    let meshes = meshes(module)?;
    for_each_computation(module, Scope::All, |_, comp| {
        rewrite(comp, &meshes).map(Some)
    })
}

/// Shardings for each value of a per-value attribute, with `manual` axes manual.
fn per_value(text: &str, meshes: &Meshes, manual: &[String]) -> Result<Vec<HloSharding>, SdyError> {
    parse_sdy_per_value(text, meshes)?
        .iter()
        .map(|t| sdy_to_hlo_sharding(t, manual))
        .collect()
}

fn rewrite(comp: &Computation, meshes: &Meshes) -> Result<Computation, CompileError> {
    rebuild(comp, |r, _, old| {
        let refuse = |why: UnsupportedSharding| CompileError::unsupported(&comp.name, old, why);
        let refuse_sdy = |e: SdyError| refuse(UnsupportedSharding::Shardy(e));
        let get = |key: &str| {
            frontend(old, key)
                .ok_or_else(|| refuse(UnsupportedSharding::ShardyAttribute(key.to_owned())))
        };
        match target(old) {
            Some(t @ (GLOBAL_TO_LOCAL | LOCAL_TO_GLOBAL)) => {
                let into = t == GLOBAL_TO_LOCAL;
                let manual =
                    parse_sdy_manual_axes(get("xla.sdy.manual_axes")?).map_err(refuse_sdy)?;
                let key = if into {
                    "xla.sdy.in_shardings"
                } else {
                    "xla.sdy.out_shardings"
                };
                let text = get(key)?;
                let full = per_value(text, meshes, &[]).map_err(refuse_sdy)?;
                let shard = per_value(text, meshes, &manual).map_err(refuse_sdy)?;
                let operands = r.operands(old)?;
                if full.len() != operands.len() {
                    return Err(refuse(UnsupportedSharding::ShardyOperands {
                        shardings: full.len(),
                        operands: operands.len(),
                    }));
                }
                let results: Vec<Shape> = match &old.shape {
                    Shape::Tuple(t) if operands.len() != 1 => t.clone(),
                    s => vec![s.clone()],
                };
                let mut outs = Vec::new();
                for (i, &x) in operands.iter().enumerate() {
                    let result = results
                        .get(i)
                        .cloned()
                        .ok_or_else(|| refuse(UnsupportedSharding::ShardyResult(i)))?;
                    let here = r
                        .instrs()
                        .get(x.index())
                        .map(|o| o.shape.clone())
                        .unwrap_or(Shape::Tuple(Vec::new()));
                    let (first, second) = if into {
                        (
                            (full[i].clone(), "Sharding", here),
                            (shard[i].clone(), "SPMDFullToShardShape", result),
                        )
                    } else {
                        (
                            (shard[i].clone(), "Sharding", here),
                            (full[i].clone(), "SPMDShardToFullShape", result),
                        )
                    };
                    let a = annotation(r, old, x, first.2, first.1, first.0, i, 0);
                    outs.push(annotation(r, old, a, second.2, second.1, second.0, i, 1));
                }
                if let [one] = outs.as_slice() {
                    return Ok(Some(*one));
                }
                let shapes = outs
                    .iter()
                    .map(|&o| r.instrs()[o.index()].shape.clone())
                    .collect();
                let mut tuple = plain(old, Opcode::Tuple, Shape::Tuple(shapes), outs);
                tuple.name = old.name.clone();
                Ok(Some(r.push(tuple)))
            }
            Some(RESULT_SHARDING) => {
                let text = get("xla.sdy.sharding")?;
                let mut s = per_value(text, meshes, &[]).map_err(refuse_sdy)?;
                let sharding = match s.len() {
                    1 => s.remove(0),
                    _ => ShardingKind::Tuple(s).into(),
                };
                let mut new = r.remapped(old)?;
                new.attrs.custom_call_target = Some("Sharding".into());
                new.attrs.custom_call_has_side_effect = None;
                new.attrs.sharding = Some(sharding);
                Ok(Some(r.push(new)))
            }
            _ => {
                let mut new = r.remapped(old)?;
                if new.attrs.sharding.is_none() {
                    if let Some(text) = frontend(old, "xla.sdy.sharding") {
                        let s = if text.starts_with("#sdy.sharding_per_value") {
                            let mut v = per_value(text, meshes, &[]).map_err(refuse_sdy)?;
                            if v.len() == 1 {
                                v.remove(0)
                            } else {
                                ShardingKind::Tuple(v).into()
                            }
                        } else {
                            let t = parse_sdy_sharding(text, meshes).map_err(refuse_sdy)?;
                            sdy_to_hlo_sharding(&t, &[]).map_err(refuse_sdy)?
                        };
                        new.attrs.sharding = Some(s);
                    }
                }
                Ok(Some(r.push(new)))
            }
        }
    })
}

fn plain(like: &Instruction, opcode: Opcode, shape: Shape, operands: Vec<InstrId>) -> Instruction {
    Instruction {
        name: like.name.clone(),
        opcode,
        shape,
        operands,
        attrs: Attrs::default(),
        metadata: like.metadata.clone(),
        loc: like.loc,
    }
}

#[allow(clippy::too_many_arguments)]
fn annotation(
    r: &mut Rebuild<'_>,
    like: &Instruction,
    x: InstrId,
    shape: Shape,
    target: &str,
    sharding: HloSharding,
    value: usize,
    step: usize,
) -> InstrId {
    let mut i = plain(like, Opcode::CustomCall, shape, vec![x]);
    i.name = format!("{}.{value}.{step}", like.name);
    i.attrs.custom_call_target = Some(target.to_string());
    i.attrs.sharding = Some(sharding);
    r.push(i)
}
