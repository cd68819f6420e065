//! Prints the thunk tree of a module compiled for h100_sxm: `cargo run -p compiler --example
//! dump_thunks -- FILE.hlo`.
use proto::xla::gpu::{thunk_proto::Impl, ThunkProto};

fn slice(s: &Option<proto::xla::buffer_assignment::BufferAllocationSliceProto>) -> String {
    s.map_or("-".into(), |s| {
        format!("a{}[{}+{}]", s.buffer_allocation_index, s.offset, s.size)
    })
}

fn dump(thunks: &[ThunkProto], depth: usize) {
    for t in thunks {
        let pad = "  ".repeat(depth);
        let name = t
            .thunk_info
            .as_ref()
            .map_or("", |i| i.profile_annotation.as_str());
        match &t.r#impl {
            Some(Impl::KernelThunk(k)) => {
                let args: Vec<String> = k.args.iter().map(|a| slice(&Some(*a))).collect();
                println!(
                    "{pad}kernel {} ({name}) args {}",
                    k.kernel_name,
                    args.join(" ")
                );
            }
            Some(Impl::GemmThunk(g)) => println!(
                "{pad}gemm ({name}) {} x {} -> {}",
                slice(&g.lhs_buffer),
                slice(&g.rhs_buffer),
                slice(&g.output_buffer)
            ),
            Some(Impl::CopyThunk(c)) => {
                println!(
                    "{pad}copy ({name}) {} -> {}",
                    slice(&c.source_buffer),
                    slice(&c.destination_buffer)
                )
            }
            Some(Impl::WhileThunk(w)) => {
                println!(
                    "{pad}while ({name}) pred {}",
                    slice(&w.condition_result_buffer_index)
                );
                println!("{pad} cond:");
                dump(
                    &w.condition_thunk_sequence
                        .clone()
                        .unwrap_or_default()
                        .thunks,
                    depth + 1,
                );
                println!("{pad} body:");
                dump(
                    &w.body_thunk_sequence.clone().unwrap_or_default().thunks,
                    depth + 1,
                );
            }
            Some(Impl::ConditionalThunk(c)) => {
                println!("{pad}conditional ({name})");
                for (i, b) in c.branch_thunks.iter().enumerate() {
                    println!("{pad} branch {i}:");
                    dump(&b.thunks, depth + 1);
                }
            }
            other => println!("{pad}{name}: {other:?}"),
        }
    }
}

fn main() {
    let path = std::env::args()
        .nth(1)
        .expect("usage: dump_thunks FILE.hlo");
    let module =
        hlo_text::parse_module(&std::fs::read_to_string(&path).expect("read")).expect("parse");
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let target =
        compiler::Target::load(&root.join("testdata/target_specs/h100_sxm.txtpb")).expect("target");
    let exe =
        compiler::compile(&module, &target, &compiler::CompileOptions::default()).expect("compile");
    for a in &exe.buffer_allocations.clone().unwrap_or_default().values {
        println!(
            "a{}: {} bytes{}{}{}",
            a.index,
            a.size,
            if a.is_entry_computation_parameter {
                format!(" param {}", a.parameter_number)
            } else {
                String::new()
            },
            if a.is_constant { " constant" } else { "" },
            if a.maybe_live_out { " live-out" } else { "" }
        );
    }
    dump(&exe.thunks, 0);
}
