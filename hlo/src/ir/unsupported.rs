//! The opcodes no back end of this project implements (see [`UNSUPPORTED_OPCODES`]). They live
//! with the IR, not with the front end that refuses them, because the reference evaluator
//! derives its own list from this one and must not depend on a front end to do so.

use super::Opcode;

/// Opcodes the parser knows (they are XLA's) but neither the reference evaluator nor the
/// compiler implements: every tool that reads a user's module (`hlo_front::read_module`:
/// `xla_compile`, `aot eval`, `aot check-hlo`) refuses them there with `opcode X is not
/// supported` and the location, instead of failing later in one back end with its own words.
/// The runtime does not read modules this way (it parses an artifact's embedded module), so this
/// list is no part of the compatibility surface. `docs/opcodes.md` has the whole table.
pub const UNSUPPORTED_OPCODES: &[Opcode] = &[
    Opcode::AllGatherDone,
    Opcode::AllGatherStart,
    Opcode::AllReduceDone,
    Opcode::AllReduceStart,
    Opcode::AllToAll,
    Opcode::AsyncDone,
    Opcode::AsyncStart,
    Opcode::AsyncUpdate,
    Opcode::BatchNormGrad,
    Opcode::BatchNormInference,
    Opcode::BatchNormTraining,
    Opcode::CollectiveBroadcast,
    Opcode::CollectivePermuteDone,
    Opcode::CollectivePermuteStart,
    Opcode::CopyDone,
    Opcode::CopyStart,
    Opcode::Domain,
    Opcode::DynamicReshape,
    Opcode::GetDimensionSize,
    Opcode::Infeed,
    Opcode::Outfeed,
    Opcode::RaggedAllToAll,
    Opcode::RaggedDot,
    Opcode::Recv,
    Opcode::RecvDone,
    Opcode::Rng,
    Opcode::RngGetAndUpdateState,
    Opcode::ScaledDot,
    Opcode::Send,
    Opcode::SendDone,
    Opcode::SetDimensionSize,
    Opcode::StochasticConvert,
];
