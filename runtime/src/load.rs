//! Loading: bytes → a validated, ready [`Executable`], in DESIGN's order. Each step fails with a
//! typed [`Error`] naming the field, the value and the bound:
//!
//! 1. size limit, then protobuf decode;
//! 2. ABI: each of the device's versions ≥ the executable's;
//! 3. compute capability equal to the device's (2 and 3 both run first; when both fail the
//!    message names the compute capability first, then the ABI problem);
//! 4. the embedded HLO module is structurally valid (`hlo::convert::check_proto`; an unknown
//!    opcode fails the load);
//! 5. buffer allocations (and constants, parameters, outputs) within bounds, before anything is
//!    allocated;
//! 6. thunks (see [`crate::thunks::decode_sequence`]);
//! 7. load-time passes (command-buffer conversion);
//! 8. ready: the kernels are loaded on the device.
use std::sync::Arc;

use proto::stream_executor::{executable_abi_version_proto, gpu_compute_capability_proto};
use proto::xla::gpu::GpuExecutableProto;

use crate::device::{Device, DeviceDescription};
use crate::error::{invalid, Error, Result};
use crate::flags::RuntimeFlags;
use crate::passes;
use crate::registry::Registry;
use crate::streams;
use crate::thunks::{decode_encoded_sequence, decode_sequence, DecodeContext};
use crate::{Allocation, AllocationKind, Constant, Executable, Leaf};

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

/// Steps 1-7 (no device work): validates and deserializes against a device description.
pub fn validate(
    bytes: &[u8],
    device: &DeviceDescription,
    flags: &RuntimeFlags,
    registry: &Registry,
) -> Result<Executable> {
    // 1. Size limit, then decode.
    if bytes.len() > flags.max_artifact_bytes {
        return Err(Error::ResourceExhausted(format!(
            "the artifact is {} bytes, over the limit of {} bytes (RuntimeFlags::max_artifact_bytes)",
            bytes.len(),
            flags.max_artifact_bytes
        )));
    }
    // The embedded HLO module (field 1) stays in wire form: it is checked by streaming over it,
    // one instruction at a time, since prost's structs for it are many times its size.
    let split = proto::wire::decode_except::<GpuExecutableProto>(
        bytes,
        flags.max_artifact_bytes,
        &[HLO_MODULE_WITH_CONFIG, THUNKS],
    )
    .map_err(|e| {
        invalid(format!(
            "the artifact is not a valid GpuExecutableProto: {e}"
        ))
    })?;
    let hlo = split.payload(HLO_MODULE_WITH_CONFIG);
    let thunks: Vec<&[u8]> = split.occurrences(THUNKS).collect();
    finish(
        split.message,
        Hlo::Encoded(hlo.as_deref()),
        Thunks::Encoded(&thunks),
        device,
        flags,
        registry,
    )
}

/// `GpuExecutableProto.hlo_module_with_config`.
const HLO_MODULE_WITH_CONFIG: u32 = 1;
/// `GpuExecutableProto.thunks`.
const THUNKS: u32 = 13;

/// The entry thunk sequence: decoded, or the encodings of its elements (decoded one at a time).
enum Thunks<'a> {
    Decoded,
    Encoded(&'a [&'a [u8]]),
}

/// The embedded HLO module, decoded or in wire form.
enum Hlo<'a> {
    Decoded(Option<&'a proto::xla::HloModuleProtoWithConfig>),
    Encoded(Option<&'a [u8]>),
}

/// Steps 2-7 on an already decoded proto.
pub fn decode_executable(
    mut p: GpuExecutableProto,
    device: &DeviceDescription,
    flags: &RuntimeFlags,
    registry: &Registry,
) -> Result<Executable> {
    let hlo = p.hlo_module_with_config.take();
    finish(
        p,
        Hlo::Decoded(hlo.as_ref()),
        Thunks::Decoded,
        device,
        flags,
        registry,
    )
}

/// Steps 2-7; `p` has no `hlo_module_with_config` (it is `hlo`).
fn finish(
    mut p: GpuExecutableProto,
    hlo: Hlo<'_>,
    encoded_thunks: Thunks<'_>,
    device: &DeviceDescription,
    flags: &RuntimeFlags,
    registry: &Registry,
) -> Result<Executable> {
    check_environment(&p, device)?;

    // 4. The embedded HLO. The runtime executes thunks, never the HLO: check its structure (ids,
    // opcodes, shapes, call graph) without building the IR or decoding attributes.
    let summary = match hlo {
        Hlo::Decoded(Some(h)) => hlo::convert::check_proto(h),
        Hlo::Encoded(Some(b)) => hlo::convert::check_proto_bytes(b),
        Hlo::Decoded(None) | Hlo::Encoded(None) => {
            return Err(invalid("hlo_module_with_config is not set"))
        }
    }
    .map_err(|e| match e {
        hlo::convert::ConvertError::UnknownOpcode { .. } => Error::Unimplemented(format!(
            "hlo_module_with_config: {e}; this runtime does not know that opcode"
        )),
        other => invalid(format!("hlo_module_with_config: {other}")),
    })?;
    let num_replicas = summary.replica_count.max(1) as u64;
    // Bounded here, before anything is sized by it: the replica-group check keeps one flag per
    // replica, and execution wants one device per replica.
    if num_replicas > flags.max_replicas {
        return Err(Error::ResourceExhausted(format!(
            "hlo_module_with_config.config.replica_count is {num_replicas}, over the limit of {} replicas (RuntimeFlags::max_replicas, aot run --max-replicas)",
            flags.max_replicas
        )));
    }
    let num_partitions = summary.num_partitions.max(1) as u64;
    if num_partitions > 1 {
        return Err(Error::Unimplemented(format!(
            "hlo_module_with_config.config.num_partitions is {num_partitions}; this runtime runs one partition"
        )));
    }

    // 5. Allocations, constants, parameters, outputs: all checked before allocating anything.
    let allocs = p
        .buffer_allocations
        .as_ref()
        .map(|b| b.values.as_slice())
        .unwrap_or(&[]);
    let program = p
        .program_shape
        .as_ref()
        .ok_or_else(|| invalid("program_shape is not set"))?;
    let param_shapes = program
        .parameters
        .iter()
        .enumerate()
        .map(|(i, s)| {
            hlo::convert::shape_from_proto(s)
                .map_err(|e| invalid(format!("program_shape.parameters[{i}]: {e}")))
        })
        .collect::<Result<Vec<_>>>()?;
    let result_shape = hlo::convert::shape_from_proto(
        program
            .result
            .as_ref()
            .ok_or_else(|| invalid("program_shape.result is not set"))?,
    )
    .map_err(|e| invalid(format!("program_shape.result: {e}")))?;

    let mut allocations = Vec::with_capacity(allocs.len());
    let mut total: u64 = 0;
    for (i, a) in allocs.iter().enumerate() {
        let path = format!("buffer_allocations.values[{i}]");
        if a.index != i as i64 {
            return Err(invalid(format!(
                "{path}.index is {}, expected {i}",
                a.index
            )));
        }
        let size = u64::try_from(a.size)
            .map_err(|_| invalid(format!("{path}.size is {}, must be >= 0", a.size)))?;
        if a.is_tuple {
            return Err(Error::Unimplemented(format!(
                "{path}.is_tuple is true; this runtime never materialises tuple index tables"
            )));
        }
        total = total.saturating_add(size);
        let kind = if a.is_entry_computation_parameter {
            let n = param_shapes.len();
            let number = usize::try_from(a.parameter_number)
                .ok()
                .filter(|&x| x < n)
                .ok_or_else(|| {
                    invalid(format!(
                        "{path}.parameter_number is {}, out of range [0, {n}) (program_shape.parameters)",
                        a.parameter_number
                    ))
                })?;
            let leaf = param_shapes
                .get(number)
                .and_then(|s| s.subshape(&a.parameter_shape_index))
                .filter(|s| s.is_array())
                .ok_or_else(|| {
                    invalid(format!(
                        "{path}.parameter_shape_index {:?} is not an array leaf of program_shape.parameters[{number}]",
                        a.parameter_shape_index
                    ))
                })?;
            let want = leaf.byte_size();
            if want != size {
                return Err(invalid(format!(
                    "{path}.size is {size}, but parameter {number} {:?} is {want} bytes",
                    a.parameter_shape_index
                )));
            }
            AllocationKind::Parameter {
                number,
                shape_index: a.parameter_shape_index.clone(),
            }
        } else if a.is_constant {
            AllocationKind::Constant
        } else {
            AllocationKind::Temporary
        };
        allocations.push(Allocation {
            index: i,
            size,
            kind,
            maybe_live_out: a.maybe_live_out,
        });
    }
    if total > device.device_memory_size {
        return Err(Error::ResourceExhausted(format!(
            "buffer_allocations need {total} bytes in total, over the device's device_memory_size of {} bytes",
            device.device_memory_size
        )));
    }
    let sizes: Vec<u64> = allocations.iter().map(|a| a.size).collect();

    let mut constants = Vec::with_capacity(p.constants.len());
    for (i, c) in p.constants.iter().enumerate() {
        let path = format!("constants[{i}]");
        let n = allocations.len();
        let allocation = usize::try_from(c.allocation_index)
            .ok()
            .filter(|&x| x < n)
            .ok_or_else(|| {
                invalid(format!(
                    "{path}.allocation_index is {}, out of range [0, {n})",
                    c.allocation_index
                ))
            })?;
        let offset = u64::try_from(c.offset_in_binary).map_err(|_| {
            invalid(format!(
                "{path}.offset_in_binary is {}, must be >= 0",
                c.offset_in_binary
            ))
        })?;
        let size = u64::try_from(c.size)
            .map_err(|_| invalid(format!("{path}.size is {}, must be >= 0", c.size)))?;
        let blen = p.binary.len() as u64;
        if offset.checked_add(size).is_none_or(|e| e > blen) {
            return Err(invalid(format!(
                "{path}: offset_in_binary {offset} + size {size} exceeds the {blen} bytes of binary"
            )));
        }
        let asize = sizes.get(allocation).copied().unwrap_or(0);
        if size > asize {
            return Err(invalid(format!(
                "{path}.size is {size}, larger than buffer_allocations[{allocation}].size {asize}"
            )));
        }
        constants.push(Constant {
            symbol_name: c.symbol_name.clone(),
            allocation,
            offset_in_binary: offset,
            size,
        });
    }

    let leaves = leaf_indices(&result_shape);
    if p.output_info_map.len() != leaves.len() {
        return Err(invalid(format!(
            "output_info_map has {} entries, the result has {} array leaves",
            p.output_info_map.len(),
            leaves.len()
        )));
    }
    let mut outputs = Vec::with_capacity(leaves.len());
    for (i, e) in p.output_info_map.iter().enumerate() {
        let path = format!("output_info_map[{i}]");
        let index = e
            .shape_index
            .as_ref()
            .map(|s| s.indices.clone())
            .unwrap_or_default();
        let leaf = result_shape
            .subshape(&index)
            .filter(|s| s.is_array())
            .ok_or_else(|| {
                invalid(format!(
                    "{path}.shape_index {index:?} is not an array leaf of program_shape.result"
                ))
            })?;
        let info = e
            .output_info
            .as_ref()
            .ok_or_else(|| invalid(format!("{path}.output_info is not set")))?;
        let n = allocations.len();
        let allocation = usize::try_from(info.allocation_index)
            .ok()
            .filter(|&x| x < n)
            .ok_or_else(|| {
                invalid(format!(
                    "{path}.output_info.allocation_index is {}, out of range [0, {n})",
                    info.allocation_index
                ))
            })?;
        let size = leaf.byte_size();
        let asize = sizes.get(allocation).copied().unwrap_or(0);
        if size > asize {
            return Err(invalid(format!(
                "{path}: the leaf {index:?} is {size} bytes, larger than buffer_allocations[{allocation}].size {asize}"
            )));
        }
        outputs.push(Leaf {
            shape_index: index,
            allocation,
            size,
            element_type: leaf
                .element_type()
                .map(|t| t.name().to_owned())
                .unwrap_or_default(),
            dims: leaf.dims().to_vec(),
            passthrough: info.passthrough,
        });
    }
    let mut parameters = Vec::new();
    for (number, shape) in param_shapes.iter().enumerate() {
        for index in leaf_indices(shape) {
            let Some(leaf) = shape.subshape(&index) else {
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
                    allocation: allocation.unwrap_or(usize::MAX),
                    size: leaf.byte_size(),
                    element_type: leaf
                        .element_type()
                        .map(|t| t.name().to_owned())
                        .unwrap_or_default(),
                    dims: leaf.dims().to_vec(),
                    passthrough: false,
                },
            ));
        }
    }

    // What step 5 read is no longer needed: free it before the thunks and their PTX.
    drop((param_shapes, result_shape, leaves));
    p.program_shape = None;
    p.buffer_allocations = None;
    p.output_info_map = Vec::new();
    p.constants = Vec::new();

    // 6. Thunks.
    let mut ctx = DecodeContext::new(&sizes, device, flags, registry, num_replicas);
    let thunks = match encoded_thunks {
        Thunks::Decoded => decode_sequence(&mut ctx, &mut p.thunks, "thunks")?,
        Thunks::Encoded(t) => decode_encoded_sequence(&mut ctx, t, "thunks")?,
    };
    let kernels = std::mem::take(&mut ctx.kernels.modules);
    drop(ctx);

    // Cross-stream waits, from the artifact's own sequence.
    let events = streams::plan(&thunks);

    // 7. Load-time passes.
    let thunks = if flags.enable_command_buffers {
        passes::command_buffer::convert(thunks, flags.command_buffer_min_thunks)
    } else {
        thunks
    };
    Ok(Executable {
        module_name: p.module_name,
        allocations,
        constants,
        binary: Arc::new(p.binary),
        parameters,
        outputs,
        thunks,
        kernels,
        num_replicas,
        flags: flags.clone(),
        events,
        recordings: Default::default(),
    })
}

/// Shape indices of every array leaf, in order.
fn leaf_indices(s: &hlo::Shape) -> Vec<Vec<i64>> {
    s.leaves().into_iter().map(|(index, _)| index).collect()
}

/// Parses "X.Y.Z" (missing components are 0).
fn parse_version(s: &str) -> Option<[u64; 3]> {
    let mut out = [0u64; 3];
    let mut n = 0;
    for (i, part) in s.trim().split('.').enumerate() {
        let slot = out.get_mut(i)?;
        *slot = part.parse().ok()?;
        n += 1;
    }
    (n > 0).then_some(out)
}

/// Steps 2 and 3, the environment checks. Both run before either fails, because the compute
/// capability is the mismatch a user can act on (pick the right target or device) while an ABI
/// complaint on the wrong device is noise (an sm_90 artifact on an A100 whose target config has no
/// CUDA toolkit version must say "sm_90 vs sm_80" first). When both fail, the capability leads and
/// the ABI problem follows, so nothing is hidden.
fn check_environment(p: &GpuExecutableProto, device: &DeviceDescription) -> Result<()> {
    let abi = check_abi(p, device);
    match (check_capability(p, device), abi) {
        (Err(Error::FailedPrecondition(cc)), Err(Error::FailedPrecondition(abi))) => Err(
            Error::FailedPrecondition(format!("{cc}; the ABI check fails too: {abi}")),
        ),
        (Err(cc), _) => Err(cc),
        (Ok(()), abi) => abi,
    }
}

fn check_abi(p: &GpuExecutableProto, device: &DeviceDescription) -> Result<()> {
    let abi = p
        .executable_abi_version
        .as_ref()
        .ok_or_else(|| invalid("executable_abi_version is not set"))?;
    if !abi
        .platform_name
        .eq_ignore_ascii_case(&device.platform_name)
    {
        return Err(Error::FailedPrecondition(format!(
            "executable_abi_version.platform_name is \"{}\", the device's platform is \"{}\"",
            abi.platform_name.escape_debug(),
            device.platform_name
        )));
    }
    let Some(executable_abi_version_proto::PlatformVersion::CudaPlatformVersion(v)) =
        &abi.platform_version
    else {
        return Err(invalid(
            "executable_abi_version.cuda_platform_version is not set",
        ));
    };
    for (field, component, needed, have) in [
        (
            "cuda_toolkit_version",
            "CUDA toolkit",
            &v.cuda_toolkit_version,
            &device.cuda_toolkit_version,
        ),
        (
            "cudnn_version",
            "cuDNN",
            &v.cudnn_version,
            &device.cudnn_version,
        ),
        ("cub_version", "CUB", &v.cub_version, &device.cub_version),
    ] {
        let path = format!("executable_abi_version.cuda_platform_version.{field}");
        if needed.is_empty() {
            continue;
        }
        let need = parse_version(needed).ok_or_else(|| {
            invalid(format!(
                "{path} is \"{}\", not an X.Y.Z version",
                needed.escape_debug()
            ))
        })?;
        // A requirement of 0.0.0 asks for nothing: any runtime meets it, one without that
        // component's version too (XLA records the toolkit as 0.0.0 when its target config has
        // no runtime version, as the a100 specs do).
        if need == [0, 0, 0] {
            continue;
        }
        let Some(got) = parse_version(have) else {
            return Err(Error::FailedPrecondition(format!(
                "{path}: the executable needs {component} {needed}, the device's runtime has no {component} version"
            )));
        };
        if got < need {
            return Err(Error::FailedPrecondition(format!(
                "{path}: the executable needs {component} {needed} or newer, the device's runtime has {component} {have}"
            )));
        }
    }
    Ok(())
}

fn check_capability(p: &GpuExecutableProto, device: &DeviceDescription) -> Result<()> {
    let (dm, dn) = device.compute_capability;
    let cc = p
        .gpu_compute_capability
        .as_ref()
        .and_then(|c| c.compute_capability.as_ref())
        .ok_or_else(|| invalid("gpu_compute_capability is not set"))?;
    match cc {
        gpu_compute_capability_proto::ComputeCapability::CudaComputeCapability(c) => {
            if (c.major, c.minor) != (dm, dn) {
                return Err(Error::FailedPrecondition(format!(
                    "gpu_compute_capability is sm_{}{} ({}.{}), the device is sm_{dm}{dn} ({dm}.{dn}); an executable runs only on a device with the same major and minor compute capability",
                    c.major, c.minor, c.major, c.minor
                )));
            }
            Ok(())
        }
        gpu_compute_capability_proto::ComputeCapability::RocmComputeCapability(r) => {
            Err(Error::FailedPrecondition(format!(
                "gpu_compute_capability is ROCm {}, the device is CUDA sm_{dm}{dn}",
                r.gcn_arch_name
            )))
        }
        gpu_compute_capability_proto::ComputeCapability::OneapiComputeCapability(o) => {
            Err(Error::FailedPrecondition(format!(
                "gpu_compute_capability is oneAPI {}, the device is CUDA sm_{dm}{dn}",
                o.architecture
            )))
        }
    }
}
