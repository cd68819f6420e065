//! Custom calls that only annotate a value: on one device each is its operand. JAX writes them
//! around values it shards or places (`Sharding`, `SPMDFullToShardShape`,
//! `SPMDShardToFullShape`, Shardy's `xla.sdy.FuncResultSharding`) and around values it moves
//! between memories (`annotate_device_placement`, whose `_xla_buffer_placement` this runtime,
//! with one memory space per device, has nothing to do with). XLA's SPMD partitioner and host
//! offloader remove them before code generation; with one partition that removal is all there
//! is. A module of more than one partition needs the partitioner, which this compiler does not
//! have yet: such a module is refused here, naming the call.
use hlo::Computation;
use hlo::{HloModule, Instruction, Opcode};

use crate::error::CompileError;
use crate::passes::rebuild::{for_each_computation, rebuild, Scope};
use crate::unsupported::UnsupportedSharding;

/// The targets that annotate a value and compute nothing.
pub const ANNOTATION_TARGETS: &[&str] = &[
    "Sharding",
    "SPMDFullToShardShape",
    "SPMDShardToFullShape",
    "annotate_device_placement",
    "xla.sdy.FuncResultSharding",
];

/// Runs the pass on every computation holding an annotation.
pub fn run(module: &mut HloModule) -> Result<(), CompileError> {
    let partitions = module.config.num_partitions.unwrap_or(1);
    // What runs: a partitioned program keeps its inlined callees' originals, annotations and
    // all, unreachable.
    for_each_computation(module, Scope::Reachable, |_, comp| {
        if !comp.instructions.iter().any(is_annotation) {
            return Ok(None);
        }
        rewrite(comp, partitions).map(Some)
    })
}

fn is_annotation(instr: &Instruction) -> bool {
    instr.opcode == Opcode::CustomCall
        && instr
            .attrs
            .custom_call_target
            .as_deref()
            .is_some_and(|t| ANNOTATION_TARGETS.contains(&t))
}

fn rewrite(comp: &Computation, partitions: i64) -> Result<Computation, CompileError> {
    rebuild(comp, |r, _, old| {
        if !is_annotation(old) {
            return r.keep(old).map(Some);
        }
        let refuse = |why: UnsupportedSharding| CompileError::unsupported(&comp.name, old, why);
        if partitions > 1 {
            return Err(refuse(UnsupportedSharding::AnnotationPartitions(
                partitions,
            )));
        }
        let operands = r.operands(old)?;
        let [operand] = operands.as_slice() else {
            return Err(refuse(UnsupportedSharding::AnnotationOperands(
                operands.len(),
            )));
        };
        let same = r
            .instrs()
            .get(operand.index())
            .is_some_and(|o| o.shape.compatible(&old.shape));
        if !same {
            return Err(refuse(UnsupportedSharding::AnnotationShape));
        }
        Ok(Some(*operand))
    })
}
