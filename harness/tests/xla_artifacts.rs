//! Real XLA:GPU artifacts (testdata/xla_gpu, made by tools/xla_artifacts/gen.py): the envelope
//! and Riegeli reader, schema decoding, and the load verdicts.
use std::path::PathBuf;

use harness::xla_artifact::{self, Form};

fn testdata() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testdata/xla_gpu")
}

const TARGETS: [&str; 2] = ["h100_sxm", "a100_sxm_80"];
const MODULES: [&str; 5] = ["add", "softmax", "mlp", "cond", "fori_loop"];

fn read(target: &str, name: &str, ext: &str) -> Vec<u8> {
    let p = testdata().join(target).join(format!("{name}.{ext}"));
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn pjrt_envelope_holds_the_committed_executable() {
    for t in TARGETS {
        for m in MODULES {
            let u = xla_artifact::unwrap(&read(t, m, "pjrt")).unwrap();
            assert_eq!(u.form, Form::Pjrt, "{t}/{m}");
            let env = u.envelope.unwrap();
            assert_eq!(env.serializer, "pjrt_ifrt");
            assert!(env.compile_options_bytes > 0, "{t}/{m}: no CompileOptionsProto");
            assert_eq!(u.executable, read(t, m, "gpuexe"), "{t}/{m}");
            assert!(xla_artifact::looks_like_xla(&u.executable), "{t}/{m}");
        }
    }
}
