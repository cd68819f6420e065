//! `gemm_thunk`: a dot not fused into a kernel.
use proto::xla::gpu as pg;
use proto::xla::gpu::thunk_proto::Impl;

use super::ThunkBuilder;
use crate::error::CompileError;
use crate::lower::Loc;

pub(super) fn thunk(
    tb: &ThunkBuilder<'_>,
    config: &pg::GemmConfigProto,
    [lhs, rhs, out]: [Loc; 3],
) -> Result<Impl, CompileError> {
    let asg = tb.asg;
    Ok(Impl::GemmThunk(pg::GemmThunkProto {
        // Behind the flag the config moves to 1000 and 1 stays unset.
        gemm_config: (!tb.gemm_config_at_1000).then(|| config.clone()),
        gemm_config_xyz: tb.gemm_config_at_1000.then(|| config.into()),
        lhs_buffer: Some(asg.slice(lhs)?),
        rhs_buffer: Some(asg.slice(rhs)?),
        output_buffer: Some(asg.slice(out)?),
        workspace: None,
        deterministic: true,
    }))
}
