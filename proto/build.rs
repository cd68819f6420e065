//! Compiles the schema with protox (no protoc binary), generates prost types, and keeps the
//! encoded descriptor set (custom options included) for reflection.
use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?).join("proto");
    let files = [
        "xla/compat_options.proto",
        "xla/xla_data.proto",
        "xla/service/hlo.proto",
        "xla/service/buffer_assignment.proto",
        "stream_executor/device_description.proto",
        "stream_executor/launch_dim.proto",
        "stream_executor/dnn.proto",
        "stream_executor/kernel_spec.proto",
        "xla/gpu/thunk.proto",
        "xla/gpu/executable.proto",
    ];
    println!("cargo:rerun-if-changed={}", root.display());

    let mut compiler = protox::Compiler::new([&root])?;
    compiler.include_imports(true).include_source_info(true);
    compiler.open_files(files)?;

    let out = PathBuf::from(std::env::var("OUT_DIR")?);
    // The encoded set keeps custom options (such as `xla.compat.ignorable`) byte-exact, which a
    // round trip through prost_types would drop.
    std::fs::write(
        out.join("descriptor_set.bin"),
        compiler.encode_file_descriptor_set(),
    )?;

    let mut config = prost_build::Config::new();
    config.enable_type_names();
    config.btree_map(["."]);
    // Hand-written: decodes both forms XLA has given fields 2 and 3 (src/conv_thunk.rs).
    config.extern_path(
        ".xla.gpu.ConvolutionThunkProto",
        "crate::conv_thunk::ConvolutionThunkProto",
    );
    config.compile_fds(compiler.file_descriptor_set())?;
    Ok(())
}
