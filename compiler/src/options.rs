//! Compilation options.
//!
//! # Staged rollout of new constructs
//!
//! Everything the compiler writes into an executable is part of the contract with runtimes that
//! were built earlier (docs/compatibility.md). A new construct (a new thunk kind, a new field
//! whose meaning older runtimes would misread) therefore lands behind an emission flag here that
//! is **off by default**: runtimes gain support first, and the flag's default flips only once
//! every runtime inside the forward-compatibility window understands the construct. The legacy
//! emission path stays while the backward window requires it. Each flag's documentation says
//! which construct it guards and the date it may be turned on.

/// Options of one compilation. `CompileOptions::default()` is what `xla_compile` uses.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CompileOptions {
    /// Fuse instructions into kernels (on by default). Off gives one kernel per instruction,
    /// useful to isolate a fusion problem.
    pub fusion: bool,
    /// Emit `trip_count` hints on while thunks when the HLO says the trip count
    /// (`known_trip_count` backend config). The field is ignorable, so this is on by default.
    pub emit_trip_count_hints: bool,
    /// Staged-rollout example: mark sequences that a runtime could capture as command buffers.
    /// No runtime reads such hints yet and the compiler emits nothing for it today; the flag
    /// exists so the mechanism is in place. Off by default.
    pub emit_command_buffer_hints: bool,
    /// Staged rollout (docs/adding_a_thunk_kind.md), stage 1 of [`proto::rollout::MEMSET8`] (its
    /// dates are there): lower a fusion that only broadcasts an 8-bit scalar constant (`pred`,
    /// `s8`, `u8`) to a `memset8bit_value_thunk` (a device memset) instead of a kernel launch with
    /// its PTX. Runtimes older than stage 1 do not know the thunk and refuse the artifact, so this
    /// stays **off by default** until the forward window has passed: the default may flip at stage
    /// 2 (`aot schema diff` names that day until then).
    pub emit_memset8: bool,
    /// Staged rollout (docs/artifact.md, "Fidelity to XLA's schema"), stage 1 of
    /// [`proto::rollout::LAUNCH_DIMS`] (its dates are there): write each kernel thunk's launch
    /// dimensions at `LaunchDimensionsProto.block_counts_xyz` / `thread_counts_per_block_xyz`
    /// (1000, 1001) instead of 1 and 2, the numbers XLA declares with other types, so that 1 and 2
    /// can later take XLA's `BlockDimProto` / `ThreadDimProto`. Runtimes older than stage 1 do not
    /// read 1000/1001 and refuse such an artifact (`launch_dimensions.block_counts is not set`), so
    /// this stays **off by default** until stage 2.
    pub emit_launch_dims_at_1000: bool,
    /// Staged rollout, stage 1 of [`proto::rollout::COPY_SLICES`] (its dates are there), as
    /// `emit_launch_dims_at_1000`: write each copy thunk's slices at `CopyThunkProto.source_buffer_xyz`
    /// / `destination_buffer_xyz` (1000, 1001) instead of 1 and 2, where XLA declares
    /// `xla.ShapedSliceProto`. Runtimes older than stage 1 refuse such an artifact
    /// (`copy_thunk.source_buffer is not set`): **off by default** until stage 2.
    pub emit_copy_slices_at_1000: bool,
    /// Staged rollout, stage 1 of [`proto::rollout::GROUP_MODE`] (its dates are there), as
    /// `emit_launch_dims_at_1000`: write each collective's group mode at
    /// `CollectiveConfigProto.group_mode_xyz` (1001) instead of 3, where XLA's
    /// `xla.CollectiveOpGroupMode` gives the same number another mode (its values are this
    /// project's minus one). Runtimes older than stage 1 do not read 1001 and would take the mode
    /// as UNSPECIFIED: **off by default** until stage 2.
    pub emit_group_mode_at_1001: bool,
    /// Staged rollout, stage 1 of [`proto::rollout::GEMM_CONFIG`] (its dates are there), as
    /// `emit_launch_dims_at_1000`: write each gemm thunk's config at `GemmThunkProto.gemm_config_xyz`
    /// (1000, `GemmConfigXyzProto`: the same fields under a project name) instead of 1, where XLA
    /// declares its own `xla.GemmConfigProto` with other fields from 3 on. Runtimes older than
    /// stage 1 refuse such an artifact (`gemm_thunk.gemm_config is not set`): **off by default**
    /// until stage 2.
    pub emit_gemm_config_at_1000: bool,
    /// Staged rollout, stage 1 of [`proto::rollout::COLLECTIVE_SLICES`] (its dates are there), as
    /// `emit_copy_slices_at_1000`: write each collective buffer's slices at
    /// `CollectiveBufferProto.source_buffer_xyz` / `destination_buffer_xyz` (1000, 1001) instead of
    /// 2 and 3, where XLA declares `xla.ShapedSliceProto`. Runtimes older than stage 1 refuse such
    /// an artifact (`buffers[0].source_buffer is not set`): **off by default** until stage 2.
    pub emit_collective_slices_at_1000: bool,
    /// Staged rollout, stage 1 of [`proto::rollout::OP_ID`] (its dates are there), as
    /// `emit_group_mode_at_1001`: write each collective's channel id at
    /// `CollectiveConfigProto.op_id_xyz` (1000) instead of 4, XLA's `bool use_symmetric_buffer`.
    /// Runtimes older than stage 1 would read the id as 0: **off by default** until stage 2.
    pub emit_op_id_at_1000: bool,
    /// Staged rollout, stage 1 of [`proto::rollout::SPMD_PROPAGATION`] (its dates are there) (issue
    /// 19): write the embedded module config's `allow_spmd_sharding_propagation_to_parameters` /
    /// `_output` at XLA's numbers 33 and 27 instead of 23 and 24, where XLA declares
    /// `memory_space_assignment_config` and `phase_ordering_config`
    /// (`hlo::WriteOptions::spmd_propagation_at_xla_numbers`). Every JAX export carries
    /// them. Readers older than stage 1 do not read 33/27 and would drop the lists: **off by
    /// default** until stage 2.
    pub emit_spmd_propagation_xla: bool,
    /// Staged rollout, stage 1 of [`proto::rollout::MODULE_FRONTEND_ATTRIBUTES`] (its dates are
    /// there), as `emit_spmd_propagation_xla`: write the embedded module's own
    /// `frontend_attributes` at XLA's number 19 instead of 18, XLA's `buffer_donor`
    /// (`WriteOptions::frontend_attributes_at_19`). Readers older than stage 1 would drop them:
    /// **off by default** until stage 2.
    pub emit_module_frontend_attributes_19: bool,
    /// Staged rollout, stage 1 of [`proto::rollout::NARROW_FLOATS`] (its dates are there), as
    /// `emit_spmd_propagation_xla`: write the element types `F4E2M1FN` and `F8E8M0FNU` as XLA's 32
    /// and 33 instead of 30 and 31 (XLA's `S1` and `U1`) everywhere the executable carries an
    /// `xla.PrimitiveType`: the embedded module (`WriteOptions::narrow_floats_at_xla_numbers`),
    /// `program_shape` and the thunks' shapes and types (one reflective walk,
    /// `proto::map_enum_values`). Runtimes older than stage 1 refuse 32 and 33 (`unknown element
    /// type number 32`): **off by default** until stage 2.
    pub emit_narrow_floats_xla: bool,
    /// Staged rollout, stage 1 of [`proto::rollout::DOT_ALGORITHM`] (its dates are there): write
    /// each dot's `algorithm=` into the embedded module (`PrecisionConfig.algorithm`). The
    /// thunks compute the algorithm either way (the `dot-algorithm` pass rounds the operands
    /// in the emitted kernels); readers older than stage 1 would drop the field silently, so
    /// the embedded module leaves it out (`WriteOptions::omit_dot_algorithm`): **off by
    /// default** until stage 2.
    pub emit_dot_algorithm: bool,
    /// Staged rollout, stage 1 of [`proto::rollout::PARTITIONS`] (its dates are there) (issue 30):
    /// emit a module of `num_partitions = N` (a per-device program, with `partition-id` and
    /// collectives over partitions) as it is, `num_partitions = N` in the embedded module and
    /// `partition_id_thunk`s that read the device's partition. Runtimes older than stage 1 refuse
    /// `num_partitions > 1`, so this is **off by default** until the forward window has passed: the
    /// default may flip at stage 2. While off, a module with one replica and N partitions is
    /// emitted as N replicas of one partition, which computes the same
    /// (`passes::partitions`); one with several replicas and several partitions is a
    /// compile error.
    pub emit_partitions: bool,
    /// Staged rollout, stage 1 of [`proto::rollout::COLLECTIVE_PERMUTE`] (its dates are there)
    /// (issue 30): lower `collective-permute` to a `collective_permute_start_thunk`. Runtimes older
    /// than stage 1 refuse that thunk, so this is **off by default** until stage 2; while off, each
    /// permute becomes an all-gather of every participant's operand, a dynamic-slice at its source
    /// (a constant table indexed by the device's id) and a select with zeros where nothing arrives
    /// (`passes::permute`).
    pub emit_collective_permute: bool,
    /// Staged rollout, stage 1 of [`proto::rollout::FFT_THUNK`] (its dates are there) (issue 31):
    /// lower `fft` to an `fft_thunk` (cuFFT in XLA:GPU; the runtime's host FFT on the emulated
    /// device). Runtimes older than stage 1 refuse that thunk, so this is **off by default**; the
    /// default may flip at stage 2. While off, each fft becomes dots with twiddle-factor matrices
    /// (`passes::fft`): the same transform with a DFT's `O(n·eps)` error instead of an
    /// FFT's `O(log n·eps)`, for lengths up to 1024.
    pub emit_fft_thunk: bool,
    /// Staged rollout, stage 1 of [`proto::rollout::CUSOLVER_POTRF`] (its dates are there)
    /// (issue 27), when runtimes gained the `cusolver_potrf_ffi` handler: lower `cholesky` to
    /// that custom call (cuSOLVER `potrf`, as XLA:GPU's `GpusolverRewriter` does;
    /// `crate::passes::cholesky::to_potrf`). Runtimes older than stage 1 refuse the target at
    /// load, so this is **off by default** until stage 2. While off, each cholesky becomes a column loop of ops every
    /// runtime runs (`passes::cholesky::run`), with the same meaning.
    pub emit_cusolver_potrf: bool,
    /// Staged rollout, stage 1 of [`proto::rollout::CONVOLUTION_THUNK`] (its dates are there)
    /// (issue 32): lower each convolution that XLA's conv rewriter would hand to cuDNN
    /// (`conv_rewriter`: forward, backward data or backward filter) to a `convolution_thunk` (the
    /// runtime's implicit GEMM on the emulated device). Runtimes older than stage 1 refuse that
    /// thunk, so this is **off by default** until stage 2. While off, every convolution is a kernel of its own
    /// (`codegen/convolution.rs`: one thread per output element walking the window).
    pub emit_convolution_thunk: bool,
    /// Run the HLO verifier between passes (tests turn it on).
    pub verify_between_passes: bool,
    /// Also assemble every kernel's PTX into a cubin with NVIDIA's `ptxas` (found as
    /// [`ptx::ptxas::find`] does: `$PTXAS`, `PATH`, the `nvidia-cuda-nvcc-cu12` wheel) and embed
    /// it (`KernelBinaryProto.cubin`, an ignorable field), as XLA's compiler does: a CUDA runtime
    /// can then load SASS for the exact SM instead of JIT-compiling PTX. Off by default: a cubin
    /// depends on the `ptxas` version, and goldens must not.
    pub cubin: bool,
    /// XLA's `--xla_allow_excess_precision` (on by default, as in XLA): `f16`/`bf16` arithmetic
    /// whose result the program widens to `f32` is computed in `f32` without the intermediate
    /// rounding (`hlo::precision`, applied before the passes), as XLA does; the reference
    /// evaluator's `EvalOptions::allow_excess_precision` is the same rewrite. Off: every narrow
    /// result is rounded (strict). Not a new construct: the artifact holds the same kinds of
    /// kernels either way, so no runtime is affected.
    pub allow_excess_precision: bool,
    /// The most elements any array of the module may have, checked before the first pass and
    /// again on the optimized module (`xla_compile --max_array_elements`). Default
    /// [`hlo::MAX_ELEMENTS`] (2^28), the runtime's `RuntimeFlags::max_array_elements` default
    /// and the reference evaluator's limit: a larger array would not run in an emulated
    /// device's bounds anyway. Not a new construct: nothing the artifact holds changes.
    pub max_array_elements: u64,
}

impl CompileOptions {
    /// The defaults with every staged-rollout emission option on: what
    /// `CompileOptions::default()` will be once every row's stage 2 ([`proto::rollout::ROLLOUTS`])
    /// has passed. For measuring what users will get (`aot bench`'s workloads
    /// section); an artifact compiled so before those dates is refused by older runtimes.
    pub fn after_staged_flips() -> CompileOptions {
        CompileOptions {
            emit_memset8: true,
            emit_launch_dims_at_1000: true,
            emit_copy_slices_at_1000: true,
            emit_group_mode_at_1001: true,
            emit_gemm_config_at_1000: true,
            emit_collective_slices_at_1000: true,
            emit_op_id_at_1000: true,
            emit_spmd_propagation_xla: true,
            emit_module_frontend_attributes_19: true,
            emit_narrow_floats_xla: true,
            emit_partitions: true,
            emit_collective_permute: true,
            emit_fft_thunk: true,
            emit_convolution_thunk: true,
            emit_cusolver_potrf: true,
            emit_dot_algorithm: true,
            ..CompileOptions::default()
        }
    }
}

impl Default for CompileOptions {
    fn default() -> Self {
        CompileOptions {
            fusion: true,
            emit_trip_count_hints: true,
            emit_command_buffer_hints: false,
            emit_memset8: false,
            emit_launch_dims_at_1000: false,
            emit_copy_slices_at_1000: false,
            emit_group_mode_at_1001: false,
            emit_gemm_config_at_1000: false,
            emit_collective_slices_at_1000: false,
            emit_op_id_at_1000: false,
            emit_spmd_propagation_xla: false,
            emit_module_frontend_attributes_19: false,
            emit_narrow_floats_xla: false,
            emit_partitions: false,
            emit_collective_permute: false,
            emit_fft_thunk: false,
            emit_cusolver_potrf: false,
            emit_convolution_thunk: false,
            emit_dot_algorithm: false,
            verify_between_passes: false,
            cubin: false,
            allow_excess_precision: true,
            max_array_elements: hlo::MAX_ELEMENTS,
        }
    }
}

impl CompileOptions {
    /// Each staged-rollout flag with its row of [`proto::rollout`] (stage dates, legacy and new
    /// numbers) and its value in these options. A flag without a row is left out (a test holds
    /// every flag to have one).
    pub fn staged(&self) -> Vec<(&'static proto::rollout::Rollout, bool)> {
        [
            ("emit_memset8", self.emit_memset8),
            ("emit_launch_dims_at_1000", self.emit_launch_dims_at_1000),
            ("emit_copy_slices_at_1000", self.emit_copy_slices_at_1000),
            ("emit_group_mode_at_1001", self.emit_group_mode_at_1001),
            ("emit_gemm_config_at_1000", self.emit_gemm_config_at_1000),
            (
                "emit_collective_slices_at_1000",
                self.emit_collective_slices_at_1000,
            ),
            ("emit_op_id_at_1000", self.emit_op_id_at_1000),
            ("emit_spmd_propagation_xla", self.emit_spmd_propagation_xla),
            (
                "emit_module_frontend_attributes_19",
                self.emit_module_frontend_attributes_19,
            ),
            ("emit_narrow_floats_xla", self.emit_narrow_floats_xla),
            ("emit_partitions", self.emit_partitions),
            ("emit_collective_permute", self.emit_collective_permute),
            ("emit_fft_thunk", self.emit_fft_thunk),
            ("emit_convolution_thunk", self.emit_convolution_thunk),
            ("emit_cusolver_potrf", self.emit_cusolver_potrf),
            ("emit_dot_algorithm", self.emit_dot_algorithm),
        ]
        .into_iter()
        .filter_map(|(option, on)| Some((proto::rollout::by_option(option)?, on)))
        .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every row of the rollout table that names a compiler flag is one of these options, each
    /// once, and every flag is off by default: none has reached its stage-2 date's flip yet
    /// (flipping one is the deliberate stage-2 change, which edits this test with the date).
    #[test]
    fn every_staged_flag_has_one_row_and_is_off_by_default() {
        let staged = CompileOptions::default().staged();
        let flagged: Vec<&str> = proto::rollout::ROLLOUTS
            .iter()
            .filter_map(|r| r.option)
            .collect();
        let mut names: Vec<&str> = staged.iter().filter_map(|(r, _)| r.option).collect();
        assert_eq!(names, flagged);
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), flagged.len());
        for (row, on) in staged {
            assert!(!on, "{} is on by default before {}", row.name, row.stage2);
        }
    }
}
