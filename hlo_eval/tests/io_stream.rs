//! The streaming io-file reader (no JSON tree) reads every io file of the repository exactly as
//! the tree reader does, and its limits refuse a list before converting it.
use hlo_eval::{parse_io_array, Expected, IoCase, IoError, IoFile};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn io_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for dir in ["testdata", "goldens"] {
        for entry in walkdir::WalkDir::new(root.join(dir)).sort_by_file_name() {
            let entry = entry.expect("walk");
            let name = entry.file_name().to_string_lossy();
            if entry.file_type().is_file() && name.ends_with("io.json") {
                files.push(entry.into_path());
            }
        }
    }
    files
}

/// The reference: the whole file as a tree, each array read from it.
fn tree_read(text: &str) -> Result<IoFile, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let list = |key: &str| -> Result<Vec<_>, String> {
        let items = v
            .get(key)
            .and_then(Value::as_array)
            .ok_or(format!("{key}: missing or not a list"))?;
        items
            .iter()
            .enumerate()
            .map(|(i, a)| parse_io_array(a, &format!("{key}[{i}]")).map_err(|e| e.to_string()))
            .collect()
    };
    Ok(IoFile {
        inputs: list("inputs")?,
        outputs: list("outputs")?,
    })
}

#[test]
fn every_io_file_reads_as_the_tree_reader_reads_it() {
    let files = io_files();
    assert!(files.len() > 500, "found only {} io files", files.len());
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        let streamed = IoFile::parse(&text).map_err(|e| e.to_string());
        // Debug text, so that NaN elements compare equal.
        assert_eq!(
            format!("{streamed:?}"),
            format!("{:?}", tree_read(&text)),
            "{}",
            path.display()
        );
    }
}

#[test]
fn errors_name_the_same_place_whatever_the_key_order() {
    for text in [
        r#"{"outputs": [], "inputs": [{"data": [1, 2], "shape": [3], "dtype": "s32"}]}"#,
        r#"{"inputs": [{"dtype": "s32", "shape": [3], "data": [1, 2]}], "outputs": []}"#,
    ] {
        assert_eq!(
            IoCase::parse(text).unwrap_err().to_string(),
            "inputs[0]: shape [3] needs 3 elements, data has 2"
        );
    }
    let cases = [
        ("[1, 2]", "inputs: missing or not a list"),
        (
            r#"{"inputs": 5, "outputs": []}"#,
            "inputs: missing or not a list",
        ),
        (
            r#"{"inputs": [], "outputs": {}}"#,
            "outputs: missing or not a list",
        ),
        (
            r#"{"inputs": [7], "outputs": []}"#,
            "inputs[0].dtype: missing or not a string",
        ),
        (
            r#"{"inputs": [{"dtype": "f32", "shape": [1], "data": 3}], "outputs": []}"#,
            "inputs[0].data: missing or not a list",
        ),
        (
            r#"{"inputs": [{"dtype": "f32", "shape": [2], "data": [1, [2]]}], "outputs": []}"#,
            "inputs[0].data: element 1 ([2]) is not a valid f32",
        ),
        (
            r#"{"inputs": [{"dtype": "u8", "shape": [1], "data": ["x"]}], "outputs": []}"#,
            r#"inputs[0].data: element 0 ("x") is not a valid u8"#,
        ),
        // An 8-bit float holds the file's value exactly, or the file is refused: 0.1 is not an
        // f8e4m3fn value (0.1015625 is), and f8e4m3fn has no infinity.
        (
            r#"{"inputs": [{"dtype": "f8e4m3fn", "shape": [2], "data": [0.1015625, 0.1]}], "outputs": []}"#,
            "inputs[0].data: element 1 (0.1) is not a valid f8e4m3fn",
        ),
        (
            r#"{"inputs": [{"dtype": "f8e4m3fn", "shape": [1], "data": ["inf"]}], "outputs": []}"#,
            r#"inputs[0].data: element 0 ("inf") is not a valid f8e4m3fn"#,
        ),
    ];
    for (text, want) in cases {
        assert_eq!(IoCase::parse(text).unwrap_err().to_string(), want, "{text}");
    }
}

#[test]
fn a_list_longer_than_the_module_needs_is_refused_when_counted() {
    let dir = std::env::temp_dir().join(format!("io-stream-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("big.io.json");
    let data = vec!["1"; 100_000].join(",");
    let text = format!(
        r#"{{"inputs": [{{"dtype": "f32", "shape": [100000], "data": [{data}]}}], "outputs": []}}"#
    );
    std::fs::write(&path, text).unwrap();
    let expected = Expected::new(vec![4], vec![4]);
    let e = IoCase::read_expecting(&path, &expected).unwrap_err();
    assert!(matches!(e, IoError::TooManyElements { .. }));
    assert_eq!(
        e.to_string(),
        "inputs[0]: data has 100000 numbers, more than the module's array of 4 elements is written with"
    );
    // Within the bound, the same file reads.
    let fits = Expected::new(vec![100_000], vec![]);
    assert_eq!(
        IoCase::read_expecting(&path, &fits).unwrap().inputs[0].dims(),
        [100_000]
    );
    let _ = std::fs::remove_dir_all(&dir);
}
