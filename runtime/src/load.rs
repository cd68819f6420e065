//! Loading: bytes → a validated, ready [`Executable`], in DESIGN's order. [`validate`] and
//! [`decode_executable`] call one `check_*` function per step, each failing with a typed [`Error`]
//! that names the field, the value and the bound:
//!
//! 1. `check_size`, then protobuf decode;
//! 2. `check_abi`: each of the device's versions ≥ the executable's;
//! 3. `check_capability`: compute capability equal to the device's, and the device has the
//!    features its feature extension asks for (2 and 3 both run first, in
//!    `check_environment`; when both fail the message names the compute capability first, then
//!    the ABI problem);
//! 4. `check_hlo`: the embedded HLO module is structurally valid
//!    (`hlo::check_proto`; an unknown opcode fails the load), with its replica and
//!    partition counts within what this runtime runs;
//! 5. `check_program_shape`, `check_allocations`, `check_constants`, `check_outputs`:
//!    everything sized by the artifact is within bounds before anything is allocated;
//! 6. `check_thunks` (see [`crate::thunks::decode_sequence`]), each kernel's PTX header held to
//!    `kernel_contract`: its `.version` needs no newer CUDA toolkit than the artifact declares
//!    (or, declaring none, than the device runtime has), its `.target` runs on the artifact's
//!    compute capability;
//! 7. load-time passes (command-buffer conversion);
//! 8. ready: the kernels are loaded on the device ([`load_with_registry`]).
//!
//! The artifact's messages are destructured without `..`, so a field added to the schema is a
//! compile error here until the loader decides what it means (checked, or ignored with a reason).
use std::sync::Arc;

use proto::fields::{EXECUTABLE_HLO_MODULE_WITH_CONFIG, EXECUTABLE_THUNKS};
use proto::stream_executor::executable_abi_version_proto::{
    CudaPlatformVersionProto, PlatformVersion,
};
use proto::stream_executor::{
    gpu_compute_capability_proto, CudaComputeCapabilityProto, ExecutableAbiVersionProto,
    GpuComputeCapabilityProto,
};
use proto::xla::gpu::gpu_executable_proto::{
    ConstantInfoProto, OutputInfoMapEntry, OutputInfoProto, RepeatedBufferAllocations,
};
use proto::xla::gpu::{GpuExecutableProto, ThunkProto};
use proto::xla::{BufferAllocationProto, HloModuleProtoWithConfig, ProgramShapeProto};
use proto::Version;

use crate::device::{Device, DeviceDescription};
use crate::error::{check_index, invalid, Code, Error, Result};
use crate::flags::RuntimeFlags;
use crate::kernel_ptx::KernelPtx;
use crate::passes;
use crate::registry::Registry;
use crate::streams;
use crate::thunks::{
    decode_encoded_sequence, decode_sequence, DecodeContext, KernelContract, KernelModule, Thunk,
    ToolkitBound,
};
use crate::{Allocation, AllocationKind, Constant, Executable, Leaf, TupleTable};

/// Loads an executable for `device` with the built-in registry.
pub fn load(bytes: &[u8], device: &dyn Device, flags: &RuntimeFlags) -> Result<Executable> {
    static BUILTIN: std::sync::OnceLock<Registry> = std::sync::OnceLock::new();
    load_with_registry(bytes, device, flags, BUILTIN.get_or_init(Registry::builtin))
}

/// Loads an executable for `device`, resolving custom calls through `registry`.
pub fn load_with_registry(
    bytes: &[u8],
    device: &dyn Device,
    flags: &RuntimeFlags,
    registry: &Registry,
) -> Result<Executable> {
    let exe = validate(bytes, device.description(), flags, registry)?;
    // 8. Ready: make every kernel launchable on this device.
    for m in &exe.kernels {
        device.load_module(m)?;
    }
    Ok(exe)
}

/// Loads an executable whose kernels carry only cubins (XLA:GPU's), launching each from the PTX
/// in `kernel_ptx` that defines its `.entry` (see [`crate::KernelPtx`]); kernels that embed PTX
/// run their own.
pub fn load_with_kernel_ptx(
    bytes: &[u8],
    device: &dyn Device,
    flags: &RuntimeFlags,
    registry: &Registry,
    kernel_ptx: &KernelPtx,
) -> Result<Executable> {
    let exe = validate_with(
        bytes,
        device.description(),
        flags,
        registry,
        Some(kernel_ptx),
    )?;
    for m in &exe.kernels {
        device.load_module(m)?;
    }
    Ok(exe)
}

/// Steps 1-7 (no device work): validates and deserializes against a device description.
pub fn validate(
    bytes: &[u8],
    device: &DeviceDescription,
    flags: &RuntimeFlags,
    registry: &Registry,
) -> Result<Executable> {
    validate_with(bytes, device, flags, registry, None)
}

/// [`validate`], with PTX supplied for cubin-only kernels.
pub fn validate_with(
    bytes: &[u8],
    device: &DeviceDescription,
    flags: &RuntimeFlags,
    registry: &Registry,
    kernel_ptx: Option<&KernelPtx>,
) -> Result<Executable> {
    check_size(bytes, flags)?;
    // The embedded HLO module stays in wire form: it is checked by streaming over it, one
    // instruction at a time, since prost's structs for it are many times its size. The thunks stay
    // in wire form too and are decoded one at a time.
    let split = proto::decode_except::<GpuExecutableProto>(
        bytes,
        flags.max_artifact_bytes,
        &[EXECUTABLE_HLO_MODULE_WITH_CONFIG, EXECUTABLE_THUNKS],
    )
    .map_err(|e| {
        invalid(format!(
            "the artifact is not a valid GpuExecutableProto: {e}"
        ))
    })?;
    let hlo = split.payload(EXECUTABLE_HLO_MODULE_WITH_CONFIG);
    let thunks: Vec<&[u8]> = split.occurrences(EXECUTABLE_THUNKS).collect();
    finish(
        split.message,
        Hlo::Encoded(hlo.as_deref()),
        Thunks::Encoded(&thunks),
        Environment {
            device,
            flags,
            registry,
            kernel_ptx,
        },
    )
}

/// What an artifact is loaded against.
struct Environment<'a> {
    device: &'a DeviceDescription,
    flags: &'a RuntimeFlags,
    registry: &'a Registry,
    kernel_ptx: Option<&'a KernelPtx>,
}

/// Where the entry thunk sequence is: in the decoded proto, or as the encodings of its elements.
enum Thunks<'a> {
    Decoded,
    Encoded(&'a [&'a [u8]]),
}

/// Where the embedded HLO module is: in the decoded proto, or in wire form.
enum Hlo<'a> {
    Decoded,
    Encoded(Option<&'a [u8]>),
}

/// Steps 2-7 on an already decoded proto.
pub fn decode_executable(
    p: GpuExecutableProto,
    device: &DeviceDescription,
    flags: &RuntimeFlags,
    registry: &Registry,
) -> Result<Executable> {
    let env = Environment {
        device,
        flags,
        registry,
        kernel_ptx: None,
    };
    finish(p, Hlo::Decoded, Thunks::Decoded, env)
}

/// Step 1, before a byte is decoded.
fn check_size(bytes: &[u8], flags: &RuntimeFlags) -> Result<()> {
    if bytes.len() > flags.max_artifact_bytes {
        return Err(Error::resource_exhausted(format!(
            "the artifact is {} bytes, over the limit of {} bytes (RuntimeFlags::max_artifact_bytes)",
            bytes.len(),
            flags.max_artifact_bytes
        )));
    }
    Ok(())
}

/// Steps 2-7. In the `Encoded` forms, `p`'s `hlo_module_with_config` and `thunks` are empty and
/// `hlo` / `encoded_thunks` hold them.
fn finish(
    p: GpuExecutableProto,
    hlo: Hlo<'_>,
    encoded_thunks: Thunks<'_>,
    env: Environment<'_>,
) -> Result<Executable> {
    let Environment {
        device,
        flags,
        registry,
        kernel_ptx,
    } = env;
    let GpuExecutableProto {
        hlo_module_with_config,
        binary,
        gpu_compute_capability,
        module_name,
        program_shape,
        buffer_allocations,
        output_info_map,
        constants: constant_protos,
        thunks,
        executable_abi_version,
    } = p;

    check_environment(
        gpu_compute_capability.as_ref(),
        executable_abi_version.as_ref(),
        device,
    )?;
    let contract = kernel_contract(
        gpu_compute_capability.as_ref(),
        executable_abi_version.as_ref(),
        device,
    );

    let hlo = match hlo {
        Hlo::Decoded => hlo_module_with_config.as_ref().map(HloSource::Decoded),
        Hlo::Encoded(b) => b.map(HloSource::Encoded),
    };
    let (num_replicas, num_partitions) = check_hlo(hlo, flags)?;
    drop(hlo_module_with_config);

    let (param_shapes, result_shape) = check_program_shape(program_shape.as_ref(), flags)?;
    let allocations = check_allocations(buffer_allocations.as_ref(), &param_shapes, device)?;
    let constants = check_constants(&constant_protos, &binary, &allocations)?;
    let (outputs, output_tuples) = check_outputs(&output_info_map, &result_shape, &allocations)?;
    let parameters = parameter_leaves(&param_shapes, &allocations);
    let sizes: Vec<u64> = allocations.iter().map(|a| a.size).collect();
    // What step 5 read is no longer needed: free it before the thunks and their PTX.
    drop((
        param_shapes,
        result_shape,
        program_shape,
        buffer_allocations,
        output_info_map,
        constant_protos,
    ));

    let thunk_source = match encoded_thunks {
        Thunks::Decoded => ThunkSource::Decoded(thunks),
        Thunks::Encoded(t) => ThunkSource::Encoded(t),
    };
    let env = Environment {
        device,
        flags,
        registry,
        kernel_ptx,
    };
    let (thunks, kernels) = check_thunks(
        thunk_source,
        &sizes,
        contract,
        &env,
        (num_replicas, num_partitions),
    )?;
    check_supplied_constants(&constants, &allocations, &thunks, kernel_ptx)?;

    // Cross-stream waits, from the artifact's own sequence.
    let events = streams::plan(&thunks);

    // 7. Load-time passes.
    let thunks = if flags.enable_command_buffers {
        passes::command_buffer::convert(thunks, flags.command_buffer_min_thunks)
    } else {
        thunks
    };
    let written = crate::thunks::written_allocations(&thunks, allocations.len());
    let read_only_parameters = allocations
        .iter()
        .zip(&written)
        .map(|(a, w)| matches!(a.kind, AllocationKind::Parameter { .. }) && !a.maybe_live_out && !w)
        .collect();
    Ok(Executable {
        module_name,
        allocations,
        read_only_parameters,
        constants,
        binary: Arc::new(binary),
        parameters,
        outputs,
        output_tuples,
        thunks,
        kernels,
        num_replicas,
        num_partitions,
        flags: flags.clone(),
        events,
        recordings: Default::default(),
    })
}

/// The embedded HLO module, decoded or in wire form.
enum HloSource<'a> {
    Decoded(&'a HloModuleProtoWithConfig),
    Encoded(&'a [u8]),
}

/// Step 4: the embedded HLO. The runtime executes thunks, never the HLO: its structure (ids,
/// opcodes, shapes, call graph) is checked without building the IR or decoding attributes.
/// Returns the numbers of replicas and partitions, each bounded here before anything is sized by
/// it: the replica-group check keeps one flag per device, and execution wants one device per
/// replica and partition (`replica_count * num_partitions`).
fn check_hlo(hlo: Option<HloSource<'_>>, flags: &RuntimeFlags) -> Result<(u64, u64)> {
    let summary = match hlo {
        Some(HloSource::Decoded(h)) => hlo::check_proto(h),
        Some(HloSource::Encoded(b)) => hlo::check_proto_bytes(b),
        None => return Err(invalid("hlo_module_with_config is not set")),
    }
    .map_err(|e| match e {
        hlo::ConvertError::UnknownOpcode { .. } => Error::unimplemented(format!(
            "hlo_module_with_config: {e}; this runtime does not know that opcode"
        )),
        other => invalid(format!("hlo_module_with_config: {other}")),
    })?;
    let num_replicas = summary.replica_count.max(1) as u64;
    if num_replicas > flags.max_replicas {
        return Err(Error::resource_exhausted(format!(
            "hlo_module_with_config.config.replica_count is {num_replicas}, over the limit of {} replicas (RuntimeFlags::max_replicas, aot run --max-replicas)",
            flags.max_replicas
        )));
    }
    let num_partitions = summary.num_partitions.max(1) as u64;
    if num_partitions > flags.max_partitions {
        return Err(Error::resource_exhausted(format!(
            "hlo_module_with_config.config.num_partitions is {num_partitions}, over the limit of {} partitions (RuntimeFlags::max_partitions, aot run --max-partitions)",
            flags.max_partitions
        )));
    }
    Ok((num_replicas, num_partitions))
}

/// Step 5a: the entry signature, as shapes (parameters, result).
fn check_program_shape(
    program: Option<&ProgramShapeProto>,
    flags: &RuntimeFlags,
) -> Result<(Vec<hlo::Shape>, hlo::Shape)> {
    let ProgramShapeProto {
        parameters,
        result,
        // Names are for people reading the module: nothing is looked up by them.
        parameter_names: _,
    } = program.ok_or_else(|| invalid("program_shape is not set"))?;
    let param_shapes = parameters
        .iter()
        .enumerate()
        .map(|(i, s)| {
            hlo::shape_from_proto(s)
                .map_err(|e| invalid(format!("program_shape.parameters[{i}]: {e}")))
        })
        .collect::<Result<Vec<_>>>()?;
    let result_shape = hlo::shape_from_proto(
        result
            .as_ref()
            .ok_or_else(|| invalid("program_shape.result is not set"))?,
    )
    .map_err(|e| invalid(format!("program_shape.result: {e}")))?;
    // The pipeline's one element limit (hlo::MAX_ELEMENTS by default), before a leaf sizes a
    // buffer, an argument check or a read-back.
    let limit = flags.max_array_elements;
    let too_many = |field: String, e: hlo::SizeError| {
        Error::resource_exhausted(format!(
            "{field}: {e} (RuntimeFlags::max_array_elements, aot run --max-array-elements)"
        ))
    };
    for (i, s) in param_shapes.iter().enumerate() {
        s.check_elements(limit)
            .map_err(|e| too_many(format!("program_shape.parameters[{i}]"), e))?;
    }
    result_shape
        .check_elements(limit)
        .map_err(|e| too_many("program_shape.result".into(), e))?;
    Ok((param_shapes, result_shape))
}

/// Step 5b: every allocation's index, size and role, and their total against the device memory.
fn check_allocations(
    allocs: Option<&RepeatedBufferAllocations>,
    param_shapes: &[hlo::Shape],
    device: &DeviceDescription,
) -> Result<Vec<Allocation>> {
    let allocs = allocs
        .map(|RepeatedBufferAllocations { values }| values.as_slice())
        .unwrap_or(&[]);
    let mut allocations = Vec::with_capacity(allocs.len());
    let mut total: u64 = 0;
    for (i, a) in allocs.iter().enumerate() {
        let path = format!("buffer_allocations.values[{i}]");
        let BufferAllocationProto {
            index,
            size,
            // Thread-local buffers and colors (memory spaces) are never emitted by the compiler;
            // the runtime places every allocation in device global memory.
            is_thread_local: _,
            color: _,
            // A tuple-holding allocation (XLA:GPU marks the temp that holds a while loop's or a
            // conditional's tuple so) is plain device memory here: every thunk XLA emits is given
            // the element slices themselves, never a tuple's index table, and XLA's own runtime has
            // written no index tables since its tuple thunk was removed. So nothing reads the table
            // bytes and nothing needs to write them.
            is_tuple: _,
            is_entry_computation_parameter,
            is_constant,
            parameter_number,
            parameter_shape_index,
            maybe_live_out,
        } = a;
        if *index != i as i64 {
            return Err(invalid(format!("{path}.index is {index}, expected {i}")));
        }
        let size = u64::try_from(*size)
            .map_err(|_| invalid(format!("{path}.size is {size}, must be >= 0")))?;
        total = total.saturating_add(size);
        let kind = if *is_entry_computation_parameter {
            let number = check_index(
                format_args!("{path}.parameter_number"),
                *parameter_number,
                param_shapes.len(),
                "program_shape.parameters",
            )?;
            let leaf = param_shapes
                .get(number)
                .and_then(|s| s.subshape(parameter_shape_index))
                .filter(|s| s.is_array())
                .ok_or_else(|| {
                    invalid(format!(
                        "{path}.parameter_shape_index {parameter_shape_index:?} is not an array leaf of program_shape.parameters[{number}]"
                    ))
                })?;
            let want = leaf.byte_size();
            if want != size {
                return Err(invalid(format!(
                    "{path}.size is {size}, but parameter {number} {parameter_shape_index:?} is {want} bytes"
                )));
            }
            AllocationKind::Parameter {
                number,
                shape_index: parameter_shape_index.clone(),
            }
        } else if *is_constant {
            AllocationKind::Constant
        } else {
            AllocationKind::Temporary
        };
        allocations.push(Allocation {
            index: i,
            size,
            kind,
            maybe_live_out: *maybe_live_out,
        });
    }
    if total > device.device_memory_size {
        return Err(Error::resource_exhausted(format!(
            "buffer_allocations need {total} bytes in total, over the device's device_memory_size of {} bytes",
            device.device_memory_size
        )));
    }
    Ok(allocations)
}

/// Step 5c: each constant's bytes lie inside `binary` and fit its allocation.
fn check_constants(
    constants: &[ConstantInfoProto],
    binary: &[u8],
    allocations: &[Allocation],
) -> Result<Vec<Constant>> {
    let mut out = Vec::with_capacity(constants.len());
    for (i, c) in constants.iter().enumerate() {
        let path = format!("constants[{i}]");
        let ConstantInfoProto {
            symbol_name,
            offset_in_binary,
            size,
            allocation_index,
        } = c;
        let allocation = check_index(
            format_args!("{path}.allocation_index"),
            *allocation_index,
            allocations.len(),
            "",
        )?;
        let offset = u64::try_from(*offset_in_binary).map_err(|_| {
            invalid(format!(
                "{path}.offset_in_binary is {offset_in_binary}, must be >= 0"
            ))
        })?;
        let size = u64::try_from(*size)
            .map_err(|_| invalid(format!("{path}.size is {size}, must be >= 0")))?;
        let blen = binary.len() as u64;
        if offset.checked_add(size).is_none_or(|e| e > blen) {
            return Err(invalid(format!(
                "{path}: offset_in_binary {offset} + size {size} exceeds the {blen} bytes of binary"
            )));
        }
        let asize = allocations.get(allocation).map_or(0, |a| a.size);
        if size > asize {
            return Err(invalid(format!(
                "{path}.size is {size}, larger than buffer_allocations[{allocation}].size {asize}"
            )));
        }
        out.push(Constant {
            symbol_name: symbol_name.clone(),
            allocation,
            offset_in_binary: offset,
            size,
        });
    }
    Ok(out)
}

/// After step 6, for an artifact run with supplied PTX: XLA:GPU writes no `constants` entries;
/// its constant allocations are `.global` arrays of its PTX (`buffer_for_<constant>`), bound by
/// name through the buffer assignment, which this runtime does not read. A constant allocation
/// no entry fills starts zeroed, which is its content when every array of the supplied PTX is
/// zero, and which no thunk sees when no thunk reads it (the kernels then read the arrays
/// themselves, which the device initializes). Otherwise which array holds it is unknown, and the
/// load is refused rather than run with a wrong constant.
fn check_supplied_constants(
    constants: &[Constant],
    allocations: &[Allocation],
    thunks: &[Thunk],
    kernel_ptx: Option<&KernelPtx>,
) -> Result<()> {
    let Some(k) = kernel_ptx else {
        return Ok(());
    };
    let Some(g) = k.globals().iter().find(|g| g.nonzero) else {
        return Ok(());
    };
    let read: std::collections::BTreeSet<usize> = thunks
        .iter()
        .flat_map(|t| streams::accesses(t).0)
        .map(|s| s.allocation)
        .collect();
    let unfilled = allocations.iter().find(|a| {
        a.kind == AllocationKind::Constant
            && read.contains(&a.index)
            && !constants.iter().any(|c| c.allocation == a.index)
    });
    match unfilled {
        Some(a) => Err(Error::unimplemented(format!(
            "buffer_allocations.values[{}] is a constant allocation that a thunk reads and no constants entry fills, and the supplied PTX {} initializes .global {} with non-zero bytes; which array holds which constant is recorded only in the buffer assignment (GpuExecutableProto field 2), which this runtime does not read",
            a.index, g.label, g.name
        ))),
        None => Ok(()),
    }
}

/// Step 5d: one `output_info_map` entry per array leaf of the result, each in an allocation that
/// holds it; XLA:GPU also gives a tuple node (the result tuple itself) an entry, whose allocation
/// receives the node's index table ([`TupleTable`]).
fn check_outputs(
    entries: &[OutputInfoMapEntry],
    result_shape: &hlo::Shape,
    allocations: &[Allocation],
) -> Result<(Vec<Leaf>, Vec<TupleTable>)> {
    let leaves = result_shape.leaves();
    let mut outputs = Vec::with_capacity(leaves.len());
    let mut tuples = Vec::new();
    // Allocation of every entry by shape index, for the tables' elements.
    let mut by_index: std::collections::BTreeMap<Vec<i64>, usize> = Default::default();
    for (i, e) in entries.iter().enumerate() {
        let path = format!("{path}[{i}]", path = "output_info_map");
        let OutputInfoMapEntry {
            shape_index,
            output_info,
        } = e;
        let index = shape_index
            .as_ref()
            .map(|s| s.indices.clone())
            .unwrap_or_default();
        let node = result_shape.subshape(&index).ok_or_else(|| {
            invalid(format!(
                "{path}.shape_index {index:?} is not a node of program_shape.result"
            ))
        })?;
        let OutputInfoProto {
            allocation_index,
            passthrough,
            // Aliasing is already in the buffer assignment (the output's allocation is the
            // parameter's): the runtime needs no second description of it.
            alias_config: _,
        } = output_info
            .as_ref()
            .ok_or_else(|| invalid(format!("{path}.output_info is not set")))?;
        let allocation = check_index(
            format_args!("{path}.output_info.allocation_index"),
            *allocation_index,
            allocations.len(),
            "",
        )?;
        if by_index.insert(index.clone(), allocation).is_some() {
            return Err(invalid(format!(
                "{path}.shape_index {index:?} has an earlier entry; each node has one"
            )));
        }
        let asize = allocations.get(allocation).map_or(0, |a| a.size);
        if let Some(elements) = node.tuple_shapes() {
            let size = 8 * elements.len() as u64;
            if size > asize {
                return Err(invalid(format!(
                    "{path}: the index table of tuple {index:?} is {size} bytes ({} elements), larger than buffer_allocations[{allocation}].size {asize}",
                    elements.len()
                )));
            }
            tuples.push(TupleTable {
                shape_index: index,
                allocation,
                elements: Vec::with_capacity(elements.len()),
            });
            continue;
        }
        let array = node.as_array().ok_or_else(|| {
            invalid(format!(
                "{path}.shape_index {index:?} is not an array leaf or a tuple of program_shape.result"
            ))
        })?;
        let size = node.byte_size();
        if size > asize {
            return Err(invalid(format!(
                "{path}: the leaf {index:?} is {size} bytes, larger than buffer_allocations[{allocation}].size {asize}"
            )));
        }
        outputs.push(Leaf {
            shape_index: index,
            allocation: Some(allocation),
            size,
            element_type: array.element_type,
            dims: array.dims.clone(),
            passthrough: *passthrough,
        });
    }
    if outputs.len() != leaves.len() {
        let tuple_note = if tuples.is_empty() {
            String::new()
        } else {
            format!(" ({} of them for tuple nodes)", tuples.len())
        };
        return Err(invalid(format!(
            "output_info_map has {} entries{tuple_note}, the result has {} array leaves",
            entries.len(),
            leaves.len()
        )));
    }
    for t in &mut tuples {
        let n = result_shape
            .subshape(&t.shape_index)
            .and_then(|s| s.tuple_shapes())
            .map_or(0, |e| e.len());
        for k in 0..n as i64 {
            let mut child = t.shape_index.clone();
            child.push(k);
            let a = by_index.get(&child).copied().ok_or_else(|| {
                invalid(format!(
                    "output_info_map gives tuple {:?} an allocation but not its element {child:?}, whose address its index table holds",
                    t.shape_index
                ))
            })?;
            t.elements.push(a);
        }
    }
    Ok((outputs, tuples))
}

/// The parameter leaves in the order [`Executable::execute`] takes them, each with the allocation
/// that receives it (none for a leaf the program never reads).
fn parameter_leaves(param_shapes: &[hlo::Shape], allocations: &[Allocation]) -> Vec<(usize, Leaf)> {
    let mut parameters = Vec::new();
    for (number, shape) in param_shapes.iter().enumerate() {
        for (index, leaf) in shape.leaves() {
            let Some(array) = leaf.as_array() else {
                continue;
            };
            let allocation = allocations
                .iter()
                .find(|a| {
                    matches!(&a.kind, AllocationKind::Parameter { number: n, shape_index } if *n == number && *shape_index == index)
                })
                .map(|a| a.index);
            parameters.push((
                number,
                Leaf {
                    shape_index: index,
                    allocation,
                    size: leaf.byte_size(),
                    element_type: array.element_type,
                    dims: array.dims.clone(),
                    passthrough: false,
                },
            ));
        }
    }
    parameters
}

/// The entry thunk sequence: decoded protos, or the encodings of its elements.
enum ThunkSource<'a> {
    Decoded(Vec<ThunkProto>),
    Encoded(&'a [&'a [u8]]),
}

/// Step 6: every thunk against the allocations, the device's limits and the registry. Returns the
/// thunks and the distinct kernel modules they launch.
fn check_thunks(
    source: ThunkSource<'_>,
    sizes: &[u64],
    contract: KernelContract,
    env: &Environment<'_>,
    (num_replicas, num_partitions): (u64, u64),
) -> Result<(Vec<Thunk>, Vec<Arc<KernelModule>>)> {
    let mut ctx = DecodeContext::new(sizes, env.device, env.flags, env.registry, num_replicas);
    ctx.num_partitions = num_partitions;
    ctx.contract = contract;
    ctx.kernel_ptx = env.kernel_ptx;
    let thunks = match source {
        ThunkSource::Decoded(mut t) => decode_sequence(&mut ctx, &mut t, "thunks")?,
        ThunkSource::Encoded(t) => decode_encoded_sequence(&mut ctx, t, "thunks")?,
    };
    let kernels = std::mem::take(&mut ctx.kernels.modules);
    Ok((thunks, kernels))
}

/// What step 6 holds each kernel's PTX header to (after steps 2 and 3 passed): the artifact's
/// declared CUDA toolkit, or, when it declares none (empty or 0.0.0, as XLA writes for a target
/// config without a runtime version), the device runtime's when it has one; and the artifact's
/// compute capability with its feature extension.
fn kernel_contract(
    cc: Option<&GpuComputeCapabilityProto>,
    abi: Option<&ExecutableAbiVersionProto>,
    device: &DeviceDescription,
) -> KernelContract {
    let toolkit_of = |s: &str| {
        Version::parse(s).filter(|v| !v.is_zero()).and_then(|v| {
            Some(ptx::Toolkit {
                major: u32::try_from(v.major).ok()?,
                minor: u32::try_from(v.minor).ok()?,
            })
        })
    };
    let declared = abi
        .and_then(|a| a.platform_version.as_ref())
        .map(|PlatformVersion::CudaPlatformVersion(v)| v.cuda_toolkit_version.as_str());
    let toolkit = match declared.and_then(|d| Some((toolkit_of(d)?, d))) {
        Some((t, d)) => Some(ToolkitBound::Declared(t, d.to_owned())),
        None => toolkit_of(&device.cuda_toolkit_version)
            .map(|t| ToolkitBound::Device(t, device.cuda_toolkit_version.clone())),
    };
    let capability = match cc.and_then(|c| c.compute_capability.as_ref()) {
        Some(gpu_compute_capability_proto::ComputeCapability::CudaComputeCapability(c)) => {
            Some(ptx::Arch {
                major: c.major.unsigned_abs(),
                minor: c.minor.unsigned_abs(),
                features: crate::device::features_of(c.feature_extension),
            })
        }
        _ => None,
    };
    KernelContract {
        toolkit,
        capability,
    }
}

/// Steps 2 and 3, the environment checks. Both run before either fails, because the compute
/// capability is the mismatch a user can act on (pick the right target or device) while an ABI
/// complaint on the wrong device is noise (an sm_90 artifact on an A100 whose target config has no
/// CUDA toolkit version must say "sm_90 vs sm_80" first). When both fail, the capability leads and
/// the ABI problem follows, so nothing is hidden.
fn check_environment(
    cc: Option<&GpuComputeCapabilityProto>,
    abi: Option<&ExecutableAbiVersionProto>,
    device: &DeviceDescription,
) -> Result<()> {
    let abi = check_abi(abi, device);
    match (check_capability(cc, device), abi) {
        (Err(cc), Err(abi))
            if cc.code() == Code::FailedPrecondition && abi.code() == Code::FailedPrecondition =>
        {
            Err(Error::failed_precondition(format!(
                "{}; the ABI check fails too: {}",
                cc.message(),
                abi.message()
            )))
        }
        (Err(cc), _) => Err(cc),
        (Ok(()), abi) => abi,
    }
}

/// Step 2: the platform, then each version the executable needs against the device runtime's.
fn check_abi(abi: Option<&ExecutableAbiVersionProto>, device: &DeviceDescription) -> Result<()> {
    let ExecutableAbiVersionProto {
        platform_name,
        platform_version,
    } = abi.ok_or_else(|| invalid("executable_abi_version is not set"))?;
    if !platform_name.eq_ignore_ascii_case(&device.platform_name) {
        return Err(Error::failed_precondition(format!(
            "executable_abi_version.platform_name is \"{}\", the device's platform is \"{}\"",
            platform_name.escape_debug(),
            device.platform_name
        )));
    }
    let Some(PlatformVersion::CudaPlatformVersion(CudaPlatformVersionProto {
        cuda_toolkit_version,
        cudnn_version,
        cub_version,
    })) = platform_version
    else {
        return Err(invalid(
            "executable_abi_version.cuda_platform_version is not set",
        ));
    };
    for (field, component, needed, have) in [
        (
            "cuda_toolkit_version",
            "CUDA toolkit",
            cuda_toolkit_version,
            &device.cuda_toolkit_version,
        ),
        (
            "cudnn_version",
            "cuDNN",
            cudnn_version,
            &device.cudnn_version,
        ),
        ("cub_version", "CUB", cub_version, &device.cub_version),
    ] {
        check_version(field, component, needed, have)?;
    }
    Ok(())
}

/// One component of step 2: the executable's `needed` ("X.Y.Z", or empty for none) against the
/// device runtime's `have`.
fn check_version(field: &str, component: &str, needed: &str, have: &str) -> Result<()> {
    if needed.is_empty() {
        return Ok(());
    }
    let path = format!("executable_abi_version.cuda_platform_version.{field}");
    let need = Version::parse(needed).ok_or_else(|| {
        invalid(format!(
            "{path} is \"{}\", not an X.Y.Z version",
            needed.escape_debug()
        ))
    })?;
    // A requirement of 0.0.0 asks for nothing: any runtime meets it, one without that component's
    // version too (XLA records the toolkit as 0.0.0 when its target config has no runtime
    // version, as the a100 specs do).
    if need.is_zero() {
        return Ok(());
    }
    let Some(got) = Version::parse(have) else {
        return Err(Error::failed_precondition(format!(
            "{path}: the executable needs {component} {needed}, the device's runtime has no {component} version"
        )));
    };
    if got < need {
        return Err(Error::failed_precondition(format!(
            "{path}: the executable needs {component} {needed} or newer, the device's runtime has {component} {have}"
        )));
    }
    Ok(())
}

/// Step 3: the executable's compute capability is the device's, major and minor.
fn check_capability(
    cc: Option<&GpuComputeCapabilityProto>,
    device: &DeviceDescription,
) -> Result<()> {
    let (dm, dn) = device.compute_capability;
    let cc = cc
        .and_then(|c| c.compute_capability.as_ref())
        .ok_or_else(|| invalid("gpu_compute_capability is not set"))?;
    match cc {
        gpu_compute_capability_proto::ComputeCapability::CudaComputeCapability(c) => {
            // Destructured without `..`: a field added to the capability is a compile error
            // here until the loader decides how it is compared.
            let CudaComputeCapabilityProto {
                major,
                minor,
                feature_extension,
            } = *c;
            if (major, minor) != (dm, dn) {
                return Err(Error::failed_precondition(format!(
                    "gpu_compute_capability is sm_{major}{minor} ({major}.{minor}), the device is sm_{dm}{dn} ({dm}.{dn}); an executable runs only on a device with the same major and minor compute capability"
                )));
            }
            // The feature extension, as XLA compares it: an `sm_90a` executable needs the
            // device's accelerated features, an `sm_100f` one its family features (which an
            // accelerated device has too).
            let need = capability_features(feature_extension)?;
            let have = device.compute_capability_features;
            if rank(need) > rank(have) {
                let arch = |features| ptx::Arch {
                    major: dm.unsigned_abs(),
                    minor: dn.unsigned_abs(),
                    features,
                };
                return Err(Error::failed_precondition(format!(
                    "gpu_compute_capability is {} ({dm}.{dn}, feature_extension {}), the device is {} ({dm}.{dn}, feature_extension {}); an executable compiled for {} runs only on a device with those features",
                    arch(need),
                    extension_name(need),
                    arch(have),
                    extension_name(have),
                    arch(need),
                )));
            }
            Ok(())
        }
        gpu_compute_capability_proto::ComputeCapability::RocmComputeCapability(r) => {
            Err(Error::failed_precondition(format!(
                "gpu_compute_capability is ROCm {}, the device is CUDA sm_{dm}{dn}",
                r.gcn_arch_name
            )))
        }
        gpu_compute_capability_proto::ComputeCapability::OneapiComputeCapability(o) => {
            Err(Error::failed_precondition(format!(
                "gpu_compute_capability is oneAPI {}, the device is CUDA sm_{dm}{dn}",
                o.architecture
            )))
        }
    }
}

/// The feature set an executable's CUDA compute capability declares; a `feature_extension` this
/// runtime does not know is refused (what it would need of the device is unknown).
fn capability_features(feature_extension: i32) -> Result<ptx::Features> {
    use proto::stream_executor::cuda_compute_capability_proto::FeatureExtension;
    if FeatureExtension::try_from(feature_extension).is_err() {
        return Err(invalid(format!(
            "gpu_compute_capability.cuda_compute_capability.feature_extension is {feature_extension}, not a known CudaComputeCapabilityProto.FeatureExtension"
        )));
    }
    Ok(crate::device::features_of(feature_extension))
}

/// Feature sets in inclusion order: baseline ⊂ family ⊂ accelerated.
fn rank(f: ptx::Features) -> u8 {
    match f {
        ptx::Features::Baseline => 0,
        ptx::Features::Family => 1,
        ptx::Features::Accelerated => 2,
    }
}

/// The `FeatureExtension` name of a feature set, for messages.
fn extension_name(f: ptx::Features) -> &'static str {
    match f {
        ptx::Features::Baseline => "NONE",
        ptx::Features::Family => "FAMILY_COMPATIBLE_FEATURES",
        ptx::Features::Accelerated => "ACCELERATED_FEATURES",
    }
}
