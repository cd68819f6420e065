//! io files as numpy `.npz` archives (`NAME.io.npz`): the binary twin of `NAME.io.json` for
//! inputs too large to write as decimal text (a 42 MB io.json took longer to read than its
//! model took to run).
//!
//! An archive holds `input_0.npy`, `input_1.npy`, ... and `output_0.npy`, ... (numpy:
//! `np.savez(path, input_0=x, output_0=y)`, or `np.savez_compressed`), each a C-ordered
//! little-endian array: `<f2 <f4 <f8 <c8 <c16 |b1 |i1 <i2 <i4 <i8 |u1 <u2 <u4 <u8`, and `<V2` for
//! `bfloat16`, `<V1` for `float8_e4m3fn` and `<f1` for `float8_e5m2` (what numpy writes for
//! those `ml_dtypes` types). Names are numbered from 0 without
//! gaps; other members are ignored. The data is the array's bytes as the runtime lays them out,
//! so nothing is converted through decimal and every value is exact.
//!
//! The `.npy` header (a Python dict literal of three keys) is read here rather than through the
//! `npyz` crate, whose header parser is a general Python-literal grammar (`py_literal`, `pest`):
//! this reader needs only `descr`, `fortran_order` and `shape`, and takes the data as raw bytes.
use std::io::{Read, Seek, Write};
use std::path::Path;

use anyhow::{anyhow, bail, Context};
use hlo::PrimitiveType;
use hlo::{Array, DType};
use hlo_eval::{Expected, IoCase};

/// Whether `path` names an npz io file (by its extension).
pub fn is_npz(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("npz"))
}

/// Reads an io file of either form: `.npz` here, anything else as io.json.
pub fn read_case(path: &Path, expected: &Expected) -> anyhow::Result<IoCase> {
    if is_npz(path) {
        read_npz(path, expected)
    } else {
        Ok(IoCase::read_expecting(path, expected)?)
    }
}

/// Reads an npz io file; an array with more elements than `expected` allows is refused from its
/// header, before its data is read.
pub fn read_npz(path: &Path, expected: &Expected) -> anyhow::Result<IoCase> {
    let file = std::fs::File::open(path)?;
    let mut zip = zip::ZipArchive::new(std::io::BufReader::new(file))
        .map_err(|e| anyhow!("not a zip archive (npz): {e}"))?;
    let inputs = read_list(&mut zip, "input", &expected.inputs)?;
    let outputs = read_list(&mut zip, "output", &expected.outputs)?;
    if inputs.is_empty() && outputs.is_empty() {
        bail!("no input_0.npy or output_0.npy in the archive");
    }
    Ok(IoCase { inputs, outputs })
}

fn read_list<R: Read + Seek>(
    zip: &mut zip::ZipArchive<R>,
    prefix: &str,
    bounds: &[usize],
) -> anyhow::Result<Vec<Array>> {
    let mut out = Vec::new();
    loop {
        let name = format!("{prefix}_{}.npy", out.len());
        let member = match zip.by_name(&name) {
            Ok(m) => m,
            Err(zip::result::ZipError::FileNotFound) => return Ok(out),
            Err(e) => bail!("{name}: {e}"),
        };
        let bound = bounds.get(out.len()).copied().unwrap_or(usize::MAX);
        let array = read_npy(member, bound).with_context(|| name.clone())?;
        out.push(array);
    }
}

/// One `.npy` member: header, then exactly the array's bytes.
fn read_npy(mut r: impl Read, max_elements: usize) -> anyhow::Result<Array> {
    let header = read_header(&mut r)?;
    let dtype = header.dtype;
    let count = header
        .shape
        .iter()
        .try_fold(1usize, |n, &d| n.checked_mul(d))
        .ok_or_else(|| {
            anyhow!(
                "shape {:?} has more elements than fit in memory",
                header.shape
            )
        })?;
    if count > max_elements {
        bail!(
            "shape {:?} has {count} elements, more than the module's array of {max_elements}",
            header.shape
        );
    }
    let size = dtype.byte_size() as usize;
    let bytes_len = count
        .checked_mul(size)
        .ok_or_else(|| anyhow!("shape {:?} of {dtype} is too large", header.shape))?;
    let mut bytes = Vec::with_capacity(bytes_len);
    r.take(bytes_len as u64 + 1).read_to_end(&mut bytes)?;
    if bytes.len() != bytes_len {
        bail!(
            "{dtype}{:?} needs {bytes_len} bytes of data, the member has {}",
            header.shape,
            bytes.len()
        );
    }
    let dims: Vec<i64> = header.shape.iter().map(|&d| d as i64).collect();
    Ok(runtime::array_from_bytes(dtype, &dims, &bytes)?)
}

/// What a `.npy` header says.
#[derive(Debug, PartialEq)]
struct Header {
    dtype: PrimitiveType,
    shape: Vec<usize>,
}

/// The largest header read (numpy pads to 64 bytes; a few KB for any real shape).
const MAX_HEADER_BYTES: usize = 1 << 16;

fn read_header(r: &mut impl Read) -> anyhow::Result<Header> {
    let mut magic = [0u8; 8];
    r.read_exact(&mut magic)
        .map_err(|_| anyhow!("not a .npy member (too short)"))?;
    if &magic[..6] != b"\x93NUMPY" {
        bail!("not a .npy member (no \\x93NUMPY magic)");
    }
    let len = match magic[6] {
        1 => {
            let mut l = [0u8; 2];
            r.read_exact(&mut l)?;
            usize::from(u16::from_le_bytes(l))
        }
        2 | 3 => {
            let mut l = [0u8; 4];
            r.read_exact(&mut l)?;
            u32::from_le_bytes(l) as usize
        }
        v => bail!(".npy format version {v} is not supported (1, 2 and 3 are)"),
    };
    if len > MAX_HEADER_BYTES {
        bail!(".npy header of {len} bytes (at most {MAX_HEADER_BYTES})");
    }
    let mut text = vec![0u8; len];
    r.read_exact(&mut text)?;
    let text = String::from_utf8(text).map_err(|_| anyhow!(".npy header is not text"))?;
    parse_header(&text)
}

/// `{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }`.
fn parse_header(text: &str) -> anyhow::Result<Header> {
    let value = |key: &str| -> anyhow::Result<&str> {
        let at = text
            .find(&format!("'{key}':"))
            .ok_or_else(|| anyhow!(".npy header has no '{key}': {text:?}"))?;
        Ok(text[at + key.len() + 3..].trim_start())
    };
    let descr = value("descr")?;
    let descr = descr
        .strip_prefix('\'')
        .and_then(|d| d.split_once('\''))
        .map(|(d, _)| d)
        .ok_or_else(|| {
            anyhow!(".npy descr is not a simple type string (structured arrays are not io arrays)")
        })?;
    let dtype = dtype_of(descr)?;
    if value("fortran_order")?.starts_with("True") {
        bail!("Fortran-ordered array: write it C-ordered (np.ascontiguousarray)");
    }
    let shape = value("shape")?;
    let inner = shape
        .strip_prefix('(')
        .and_then(|s| s.split_once(')'))
        .map(|(s, _)| s)
        .ok_or_else(|| anyhow!(".npy shape is not a tuple"))?;
    let shape = inner
        .split(',')
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(|d| d.trim_end_matches('L').parse::<usize>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| anyhow!(".npy shape ({inner}) is not a tuple of sizes"))?;
    Ok(Header { dtype, shape })
}

/// The element type of a numpy type string; big-endian data is refused (the runtime's bytes are
/// little-endian).
fn dtype_of(descr: &str) -> anyhow::Result<PrimitiveType> {
    use PrimitiveType as P;
    let (order, code) = descr.split_at(descr.len().min(1));
    if order == ">" && !matches!(code, "i1" | "u1" | "b1" | "V1" | "f1") {
        bail!("big-endian data ({descr}) is not supported: write it little-endian");
    }
    Ok(match code {
        "b1" => P::Pred,
        "i1" => P::S8,
        "i2" => P::S16,
        "i4" => P::S32,
        "i8" => P::S64,
        "u1" => P::U8,
        "u2" => P::U16,
        "u4" => P::U32,
        "u8" => P::U64,
        "f2" => P::F16,
        "f4" => P::F32,
        "f8" => P::F64,
        "c8" => P::C64,
        "c16" => P::C128,
        "V2" => P::Bf16,
        // What numpy writes for ml_dtypes' float8_e4m3fn and float8_e5m2 (ml_dtypes registers
        // the second as a float kind, the first as void).
        "V1" => P::F8E4M3FN,
        "f1" => P::F8E5M2,
        _ => bail!("numpy dtype {descr} has no io element type"),
    })
}

/// The numpy type string of an element type.
fn descr_of(t: DType) -> &'static str {
    match t {
        DType::Pred => "|b1",
        DType::S8 => "|i1",
        DType::S16 => "<i2",
        DType::S32 => "<i4",
        DType::S64 => "<i8",
        DType::U8 => "|u1",
        DType::U16 => "<u2",
        DType::U32 => "<u4",
        DType::U64 => "<u8",
        DType::F16 => "<f2",
        DType::BF16 => "<V2",
        DType::F8E4M3FN => "<V1",
        DType::F8E5M2 => "<f1",
        DType::F32 => "<f4",
        DType::F64 => "<f8",
        DType::C64 => "<c8",
        DType::C128 => "<c16",
    }
}

/// Writes an npz io file (stored, not compressed: the arrays are read back at memory speed).
pub fn write_npz(path: &Path, inputs: &[Array], outputs: &[Array]) -> anyhow::Result<()> {
    let file = std::fs::File::create(path)?;
    let mut zip = zip::ZipWriter::new(std::io::BufWriter::new(file));
    let options =
        zip::write::FileOptions::default().compression_method(zip::CompressionMethod::Stored);
    for (prefix, list) in [("input", inputs), ("output", outputs)] {
        for (i, a) in list.iter().enumerate() {
            zip.start_file(format!("{prefix}_{i}.npy"), options.large_file(true))?;
            zip.write_all(&npy_bytes(a))?;
        }
    }
    zip.finish()?.flush()?;
    Ok(())
}

/// One array as `.npy` (format 1.0, header padded to 64 bytes as numpy pads it).
fn npy_bytes(a: &Array) -> Vec<u8> {
    let dims: Vec<String> = a.dims().iter().map(usize::to_string).collect();
    let shape = match dims.len() {
        1 => format!("({},)", dims[0]),
        _ => format!("({})", dims.join(", ")),
    };
    let dict = format!(
        "{{'descr': '{}', 'fortran_order': False, 'shape': {shape}, }}",
        descr_of(a.dtype())
    );
    let unpadded = 10 + dict.len() + 1;
    let padded = unpadded.div_ceil(64) * 64;
    let mut header = dict.into_bytes();
    header.resize(padded - 10 - 1, b' ');
    header.push(b'\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(&header);
    out.extend_from_slice(&runtime::array_to_bytes(a));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numpys_headers_parse() {
        let h = parse_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }  \n");
        assert_eq!(
            h.unwrap(),
            Header {
                dtype: PrimitiveType::F32,
                shape: vec![2, 3]
            }
        );
        let scalar = parse_header("{'descr': '<V2', 'fortran_order': False, 'shape': (), }");
        assert_eq!(scalar.unwrap().shape, Vec::<usize>::new());
        let one = parse_header("{'descr': '|b1', 'fortran_order': False, 'shape': (5,), }");
        assert_eq!(one.unwrap().shape, vec![5]);
        // What numpy writes for ml_dtypes' float8_e4m3fn and float8_e5m2.
        let e4 = parse_header("{'descr': '<V1', 'fortran_order': False, 'shape': (3,), }");
        assert_eq!(e4.unwrap().dtype, PrimitiveType::F8E4M3FN);
        let e5 = parse_header("{'descr': '<f1', 'fortran_order': False, 'shape': (3,), }");
        assert_eq!(e5.unwrap().dtype, PrimitiveType::F8E5M2);
    }

    #[test]
    fn unsupported_headers_say_why() {
        let e = |t: &str| parse_header(t).unwrap_err().to_string();
        assert_eq!(
            e("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }"),
            "Fortran-ordered array: write it C-ordered (np.ascontiguousarray)"
        );
        assert_eq!(
            e("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }"),
            "big-endian data (>f4) is not supported: write it little-endian"
        );
        assert_eq!(
            e("{'descr': '<M8[s]', 'fortran_order': False, 'shape': (2,), }"),
            "numpy dtype <M8[s] has no io element type"
        );
        assert_eq!(
            e("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }"),
            ".npy descr is not a simple type string (structured arrays are not io arrays)"
        );
    }

    #[test]
    fn arrays_round_trip_through_an_archive_and_bounds_hold() {
        let dir = std::env::temp_dir().join(format!("npz-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("case.io.npz");
        let x = hlo::Array::new(
            vec![2, 3],
            hlo::Data::F32(vec![1.0, -2.5, 3.25, f32::NAN, 0.0, 1e-30]),
        )
        .unwrap();
        let y = hlo::Array::new(vec![2], hlo::Data::S64(vec![i64::MIN, 7])).unwrap();
        write_npz(&path, std::slice::from_ref(&x), std::slice::from_ref(&y)).unwrap();
        let back = read_case(&path, &Expected::default()).unwrap();
        assert_eq!(
            runtime::array_to_bytes(&back.inputs[0]),
            runtime::array_to_bytes(&x)
        );
        assert_eq!(back.outputs, vec![y]);
        let small = Expected::new(vec![4], vec![]);
        let e = read_case(&path, &small).unwrap_err();
        assert_eq!(
            format!("{e:#}"),
            "input_0.npy: shape [2, 3] has 6 elements, more than the module's array of 4"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
