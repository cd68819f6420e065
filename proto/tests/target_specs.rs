//! Every XLA target config in testdata/target_specs parses unchanged as a
//! `stream_executor.GpuTargetConfigProto`, and re-printing it gives text that parses back to the
//! same message. One named test per file.
use std::path::{Path, PathBuf};

use libtest_mimic::{Arguments, Failed, Trial};
use proto::stream_executor::{gpu_device_info_proto::ComputeCapability, GpuTargetConfigProto};

fn specs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/target_specs")
}

fn check(path: &Path) -> Result<(), Failed> {
    let text = std::fs::read_to_string(path)?;
    let config: GpuTargetConfigProto =
        proto::parse_text_format(&text).map_err(|e| format!("{}:{e}", path.display()))?;
    let info = config
        .gpu_device_info
        .as_ref()
        .ok_or("gpu_device_info missing")?;
    if info.threads_per_block_limit <= 0 || info.core_count <= 0 {
        return Err("device limits not parsed".into());
    }
    if info.compute_capability.is_none() {
        return Err("compute capability not parsed".into());
    }
    if config.platform_name.is_empty() {
        return Err("platform_name not parsed".into());
    }
    let printed = proto::to_text_format(&config);
    let reparsed: GpuTargetConfigProto = proto::parse_text_format(&printed)
        .map_err(|e| format!("re-parsing the printed config: {e}\n{printed}"))?;
    if reparsed != config {
        let diff =
            similar::TextDiff::from_lines(&format!("{config:#?}"), &format!("{reparsed:#?}"))
                .unified_diff()
                .header("parsed", "printed and re-parsed")
                .to_string();
        return Err(format!("round trip changed the config:\n{diff}").into());
    }
    if let Some(ComputeCapability::CudaComputeCapability(cc)) = &info.compute_capability {
        if cc.major < 6 {
            return Err(format!("implausible compute capability {cc:?}").into());
        }
    }
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let mut paths: Vec<PathBuf> = std::fs::read_dir(specs_dir())
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    paths.retain(|p| p.extension().is_some_and(|e| e == "txtpb"));
    paths.sort();
    assert!(paths.len() >= 19, "target specs missing from testdata");
    let trials = paths
        .into_iter()
        .map(|p| {
            let name = p
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            Trial::test(format!("target_spec::{name}"), move || check(&p))
        })
        .collect();
    libtest_mimic::run(&args, trials).exit();
}
