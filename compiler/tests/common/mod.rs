//! Shared helpers of the compiler's tests: paths, targets, and structural checks of an
//! executable against docs/artifact.md.
#![allow(dead_code)]

use std::collections::BTreeSet;
use std::path::PathBuf;

use proto::xla::gpu::{thunk_proto::Impl, GpuExecutableProto, ThunkProto};

pub mod interp;

/// The workspace root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `testdata/target_specs/NAME.txtpb` as a target.
pub fn target(name: &str) -> compiler::Target {
    let path = root()
        .join("testdata/target_specs")
        .join(format!("{name}.txtpb"));
    compiler::Target::load(&path).unwrap_or_else(|e| panic!("{e}"))
}

/// Options for tests: the verifier runs between passes.
pub fn options() -> compiler::CompileOptions {
    let mut o = compiler::CompileOptions::default();
    o.verify_between_passes = true;
    o
}

/// Every thunk, depth-first (parents before children).
pub fn all_thunks(exe: &GpuExecutableProto) -> Vec<&ThunkProto> {
    fn go<'a>(t: &'a ThunkProto, out: &mut Vec<&'a ThunkProto>) {
        out.push(t);
        match &t.r#impl {
            Some(Impl::SequentialThunk(s)) => s.thunks.iter().for_each(|c| go(c, out)),
            Some(Impl::WhileThunk(w)) => {
                for seq in [&w.condition_thunk_sequence, &w.body_thunk_sequence]
                    .into_iter()
                    .flatten()
                {
                    seq.thunks.iter().for_each(|c| go(c, out));
                }
            }
            Some(Impl::ConditionalThunk(c)) => {
                c.branch_thunks
                    .iter()
                    .flat_map(|s| &s.thunks)
                    .for_each(|c| go(c, out));
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    exe.thunks.iter().for_each(|t| go(t, &mut out));
    out
}

/// Counts of thunk kinds: (kernels, gemms, others).
pub fn census(exe: &GpuExecutableProto) -> (usize, usize, usize) {
    let mut k = (0, 0, 0);
    for t in all_thunks(exe) {
        match t.r#impl {
            Some(Impl::KernelThunk(_)) => k.0 += 1,
            Some(Impl::GemmThunk(_)) => k.1 += 1,
            _ => k.2 += 1,
        }
    }
    k
}

/// Checks the structural rules of docs/artifact.md; returns every violation.
pub fn check_executable(exe: &GpuExecutableProto) -> Vec<String> {
    let mut errs = Vec::new();
    let allocs = exe
        .buffer_allocations
        .as_ref()
        .map(|a| a.values.as_slice())
        .unwrap_or(&[]);
    for (i, a) in allocs.iter().enumerate() {
        if a.index != i as i64 {
            errs.push(format!("allocation {i} has index {}", a.index));
        }
        if a.is_tuple {
            errs.push(format!("allocation {i} is a tuple"));
        }
    }
    let check_slice = |what: &str,
                       s: &Option<proto::xla::buffer_assignment::BufferAllocationSliceProto>,
                       errs: &mut Vec<String>| {
        let Some(s) = s else {
            errs.push(format!("{what}: slice missing"));
            return;
        };
        match allocs.get(s.buffer_allocation_index as usize) {
            None => errs.push(format!(
                "{what}: allocation {} out of range",
                s.buffer_allocation_index
            )),
            Some(a) => {
                if s.offset < 0 || s.size < 0 || s.offset + s.size > a.size {
                    errs.push(format!(
                        "{what}: slice {}+{} outside allocation {} of {} bytes",
                        s.offset, s.size, a.index, a.size
                    ));
                }
            }
        }
    };
    let mut ids = BTreeSet::new();
    for t in all_thunks(exe) {
        let info = t.thunk_info.clone().unwrap_or_default();
        if !ids.insert(info.thunk_id) || info.thunk_id < 1 {
            errs.push(format!("thunk id {} repeated or < 1", info.thunk_id));
        }
        let what = info.profile_annotation.clone();
        match &t.r#impl {
            None => errs.push(format!("{what}: impl unset")),
            Some(Impl::KernelThunk(k)) => {
                if k.args.len() != k.written.len() {
                    errs.push(format!("{what}: args/written differ"));
                }
                for a in &k.args {
                    check_slice(&what, &Some(*a), &mut errs);
                }
                let ptx = k
                    .kernel_binary
                    .as_ref()
                    .map(|b| b.ptx.as_str())
                    .unwrap_or("");
                if !ptx.contains(&format!(".entry {}", k.kernel_name))
                    && !ptx.contains(&format!(".entry {}(", k.kernel_name))
                {
                    errs.push(format!("{what}: PTX has no .entry {}", k.kernel_name));
                }
            }
            Some(Impl::GemmThunk(g)) => {
                check_slice(&what, &g.lhs_buffer, &mut errs);
                check_slice(&what, &g.rhs_buffer, &mut errs);
                check_slice(&what, &g.output_buffer, &mut errs);
            }
            Some(Impl::CopyThunk(c)) => {
                check_slice(&what, &c.source_buffer, &mut errs);
                check_slice(&what, &c.destination_buffer, &mut errs);
            }
            Some(Impl::WhileThunk(w)) => {
                check_slice(&what, &w.condition_result_buffer_index, &mut errs)
            }
            Some(Impl::ConditionalThunk(c)) => check_slice(
                &what,
                &c.branch_index_buffer.as_ref().and_then(|b| b.slice),
                &mut errs,
            ),
            _ => {}
        }
    }
    let entry_shape = exe
        .program_shape
        .as_ref()
        .and_then(|p| p.result.clone())
        .unwrap_or_default();
    let leaves = count_leaves(&entry_shape);
    if exe.output_info_map.len() != leaves {
        errs.push(format!(
            "{} output infos for {leaves} result leaves",
            exe.output_info_map.len()
        ));
    }
    for o in &exe.output_info_map {
        let a = o.output_info.as_ref().map_or(-1, |i| i.allocation_index);
        if allocs.get(a as usize).is_none() {
            errs.push(format!("output allocation {a} out of range"));
        }
    }
    for c in &exe.constants {
        let end = c.offset_in_binary + c.size;
        if end as usize > exe.binary.len() || c.offset_in_binary % 16 != 0 {
            errs.push(format!(
                "constant {} outside binary or misaligned",
                c.symbol_name
            ));
        }
        match allocs.get(c.allocation_index as usize) {
            Some(a) if a.is_constant && a.size >= c.size => {}
            _ => errs.push(format!("constant {} has a bad allocation", c.symbol_name)),
        }
    }
    errs
}

fn count_leaves(s: &proto::xla::ShapeProto) -> usize {
    if s.element_type == proto::xla::PrimitiveType::Tuple as i32 {
        s.tuple_shapes.iter().map(count_leaves).sum()
    } else if s.element_type == proto::xla::PrimitiveType::Token as i32 {
        0
    } else {
        1
    }
}
