//! npz io files written by numpy itself (`np.savez` stored, `np.savez_compressed` deflated;
//! `tools/npz/make_testdata.py`) read to the same arrays, bit for bit, as their io.json twin:
//! f32, c64, bf16 (numpy's `<V2`), pred, s64 extremes, an f16 scalar, u8, f64 NaN and -inf.
use hlo_eval::{Expected, IoCase};
use std::path::Path;

fn bytes(case: &IoCase) -> Vec<Vec<u8>> {
    case.inputs
        .iter()
        .chain(&case.outputs)
        .map(runtime::array_to_bytes)
        .collect()
}

#[test]
fn numpys_archives_read_as_their_json_twin() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/npz");
    let json = IoCase::read(&dir.join("case.io.json")).unwrap();
    for name in ["case.io.npz", "case_compressed.io.npz"] {
        let npz = harness::read_npz_case(&dir.join(name), &Expected::default()).unwrap();
        assert_eq!(npz.inputs.len(), 6, "{name}");
        assert_eq!(npz.outputs.len(), 2, "{name}");
        for (a, b) in npz
            .inputs
            .iter()
            .chain(&npz.outputs)
            .zip(json.inputs.iter().chain(&json.outputs))
        {
            assert_eq!(a.dtype(), b.dtype(), "{name}");
            assert_eq!(a.dims(), b.dims(), "{name}");
        }
        assert_eq!(bytes(&npz), bytes(&json), "{name}");
    }
}

#[test]
fn a_file_that_is_not_an_archive_says_so() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/npz");
    let e = harness::read_npz(&dir.join("case.io.json"), &Expected::default()).unwrap_err();
    assert!(
        e.to_string().starts_with("not a zip archive (npz): "),
        "{e}"
    );
}
