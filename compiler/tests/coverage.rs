//! `compiler::SUPPORTED_OPCODES` is what the golden suite's coverage check holds the goldens to, so
//! it must list every opcode the compiler actually accepts: every opcode of every corpus module
//! and golden case (all of which compile) must be in it, and the list names no opcode twice.
use std::collections::BTreeSet;
use std::path::Path;

#[test]
fn every_opcode_the_compiler_accepts_in_the_bundled_modules_is_declared() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let target =
        compiler::Target::load(&root.join("testdata/target_specs/h100_sxm.txtpb")).unwrap();
    let declared: BTreeSet<&str> = compiler::supported_opcodes().into_iter().collect();
    assert_eq!(
        declared.len(),
        compiler::SUPPORTED_OPCODES.len(),
        "an opcode is listed twice"
    );
    let mut checked = 0;
    for dir in ["testdata/corpus/hlo", "goldens/cases"] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if !name.ends_with(".hlo") || name.ends_with(".opt.hlo") {
                continue;
            }
            let module = hlo_text::parse_module(&std::fs::read_to_string(&path).unwrap()).unwrap();
            compiler::compile(&module, &target, &compiler::CompileOptions::default())
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            for instr in module.computations.iter().flat_map(|c| &c.instructions) {
                assert!(
                    declared.contains(instr.opcode.name()),
                    "{name} compiles `{}`, which compiler::SUPPORTED_OPCODES does not list",
                    instr.opcode
                );
            }
            checked += 1;
        }
    }
    assert!(checked >= 49, "only {checked} modules found");
}
