//! The three forms an executable reaches `aot` in, and the unwrapping of the one that is not a
//! bare `GpuExecutableProto`:
//!
//! - this project's artifact (`xla_compile` output) and a bare XLA:GPU `GpuExecutableProto` are
//!   both protobuf binary of the same root message; [`looks_like_xla`] tells them apart by the
//!   fields only XLA writes;
//! - PjRt `SerializeExecutable` bytes (what `jax` `.serialize()` gives for a CUDA executable) are
//!   an IFRT envelope: a varint-length-prefixed header proto whose field 2 names the serializer
//!   (`pjrt_ifrt`), then a body message whose field 1 is a Riegeli file (its last record is the
//!   `GpuExecutableProto`) and field 2 the `CompileOptionsProto`.
//!
//! The Riegeli reader is hand-written because no well-kept Rust crate reads Riegeli; it supports
//! what XLA writes (simple chunks, uncompressed or snappy) and refuses the rest by name.
//! Decompression is the `snap` crate, the header hashes are checked with the `highway` crate
//! (Riegeli hashes headers with HighwayHash-64 under a fixed key). Every length is checked
//! against what is left of the input and against [`MAX_DECODED`] before anything is allocated, so
//! truncated or corrupt input is a typed error, never a panic or an unbounded allocation.
use highway::{HighwayHash, HighwayHasher, Key};

/// Largest decoded Riegeli chunk (and record) accepted: executables are far smaller; anything
/// above this is corrupt input asking for an allocation.
pub const MAX_DECODED: u64 = 1 << 30;

/// Riegeli's block size: a 24-byte block header sits at every multiple of it.
const BLOCK: usize = 1 << 16;
const BLOCK_HEADER: usize = 24;
const CHUNK_HEADER: usize = 40;
/// The HighwayHash key of Riegeli's header hashes ("Riegeli/", "records\n", twice).
const HASH_KEY: [u64; 4] = [
    0x2f69_6c65_6765_6952,
    0x0a73_6472_6f63_6572,
    0x2f69_6c65_6765_6952,
    0x0a73_6472_6f63_6572,
];

/// Which form the bytes were in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// A bare `GpuExecutableProto` (this project's artifact or XLA's; see [`looks_like_xla`]).
    Bare,
    /// PjRt `SerializeExecutable` bytes (IFRT envelope around a Riegeli file).
    Pjrt,
}

/// What the envelope held besides the executable.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Envelope {
    /// The serializer named by the header (`pjrt_ifrt`).
    pub serializer: String,
    /// Size of the header proto.
    pub header_bytes: usize,
    /// Size of the Riegeli file.
    pub riegeli_bytes: usize,
    /// Records in the Riegeli file (the executable is the last).
    pub records: usize,
    /// Size of the `CompileOptionsProto` after the Riegeli file (0 when absent).
    pub compile_options_bytes: usize,
}

/// The executable found in some bytes.
#[derive(Debug, Clone)]
pub struct Unwrapped {
    /// The form the bytes were in.
    pub form: Form,
    /// The `GpuExecutableProto` bytes.
    pub executable: Vec<u8>,
    /// The envelope, for the PjRt form.
    pub envelope: Option<Envelope>,
}

/// Why bytes are not a readable PjRt envelope or Riegeli file.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum XlaArtifactError {
    /// A length or field runs past the end of the input.
    #[error("{what} at byte {at} needs {need} bytes, only {have} left (truncated input)")]
    Truncated {
        /// What was being read.
        what: &'static str,
        /// Offset in the part being read.
        at: usize,
        /// Bytes needed.
        need: u64,
        /// Bytes left.
        have: usize,
    },
    /// A varint longer than 10 bytes.
    #[error("{what} at byte {at}: varint longer than 10 bytes")]
    BadVarint {
        /// What was being read.
        what: &'static str,
        /// Offset.
        at: usize,
    },
    /// The envelope is not laid out as PjRt writes it.
    #[error("PjRt envelope: {0}")]
    Envelope(String),
    /// A Riegeli header hash does not match its contents.
    #[error("Riegeli {what} at byte {at}: header hash {found:#018x}, contents hash to {computed:#018x} (corrupt file)")]
    Hash {
        /// Block or chunk header.
        what: &'static str,
        /// Offset in the Riegeli file.
        at: usize,
        /// Hash stored in the header.
        found: u64,
        /// Hash of the header's contents.
        computed: u64,
    },
    /// The Riegeli file is well-formed but uses something this reader does not support.
    #[error("Riegeli chunk at byte {at}: {what} is not supported (XLA writes simple chunks, uncompressed or snappy)")]
    Unsupported {
        /// Offset of the chunk.
        at: usize,
        /// The construct.
        what: String,
    },
    /// The Riegeli file is inconsistent.
    #[error("Riegeli chunk at byte {at}: {what}")]
    Corrupt {
        /// Offset of the chunk.
        at: usize,
        /// What is inconsistent.
        what: String,
    },
    /// A size over `MAX_DECODED`.
    #[error(
        "Riegeli chunk at byte {at}: {what} of {size} bytes is over the limit of {limit} bytes"
    )]
    TooLarge {
        /// Offset of the chunk.
        at: usize,
        /// What is too large.
        what: &'static str,
        /// Declared size.
        size: u64,
        /// `MAX_DECODED`, the same for every size checked.
        limit: u64,
    },
    /// Snappy could not decompress a buffer.
    #[error("Riegeli chunk at byte {at}: snappy: {source}")]
    Snappy {
        /// Offset of the chunk.
        at: usize,
        /// The decoder's error.
        #[source]
        source: snap::Error,
    },
    /// The Riegeli file holds no record.
    #[error("Riegeli file holds no record (the executable should be the last)")]
    NoRecord,
}

/// A bounds-checked cursor over a byte slice.
struct Cursor<'a> {
    b: &'a [u8],
    at: usize,
    what: &'static str,
}

impl<'a> Cursor<'a> {
    fn new(b: &'a [u8], what: &'static str) -> Self {
        Cursor { b, at: 0, what }
    }
    fn left(&self) -> usize {
        self.b.len().saturating_sub(self.at)
    }
    fn varint(&mut self) -> Result<u64, XlaArtifactError> {
        let start = self.at;
        let mut v = 0u64;
        for i in 0..10 {
            let Some(&c) = self.b.get(self.at) else {
                return Err(XlaArtifactError::Truncated {
                    what: self.what,
                    at: start,
                    need: i + 1,
                    have: i as usize,
                });
            };
            self.at += 1;
            v |= u64::from(c & 0x7f) << (7 * i);
            if c < 0x80 {
                return Ok(v);
            }
        }
        Err(XlaArtifactError::BadVarint {
            what: self.what,
            at: start,
        })
    }
    fn take(&mut self, n: u64) -> Result<&'a [u8], XlaArtifactError> {
        let have = self.left();
        match usize::try_from(n) {
            Ok(n) if n <= have => {
                let s = &self.b[self.at..self.at + n];
                self.at += n;
                Ok(s)
            }
            _ => Err(XlaArtifactError::Truncated {
                what: self.what,
                at: self.at,
                need: n,
                have,
            }),
        }
    }
}

/// One field of a protobuf message, as far as the envelope needs: number and value.
enum Field<'a> {
    Varint,
    Bytes(&'a [u8]),
    Fixed,
}

fn fields<'a>(b: &'a [u8], what: &'static str) -> Result<Vec<(u64, Field<'a>)>, XlaArtifactError> {
    let mut c = Cursor::new(b, what);
    let mut out = Vec::new();
    while c.left() > 0 {
        let at = c.at;
        let key = c.varint()?;
        let f = match key & 7 {
            0 => {
                c.varint()?;
                Field::Varint
            }
            1 => {
                c.take(8)?;
                Field::Fixed
            }
            2 => {
                let n = c.varint()?;
                Field::Bytes(c.take(n)?)
            }
            5 => {
                c.take(4)?;
                Field::Fixed
            }
            wt => {
                return Err(XlaArtifactError::Envelope(format!(
                    "{what}: wire type {wt} at byte {at}"
                )))
            }
        };
        out.push((key >> 3, f));
    }
    Ok(out)
}

/// The header of a PjRt envelope, if `bytes` starts with one: the serializer's name and where
/// the body starts. `None` when the bytes do not begin with a length-prefixed header naming a
/// serializer (then they are a bare executable).
fn envelope_header(bytes: &[u8]) -> Option<(String, usize, usize)> {
    let mut c = Cursor::new(bytes, "envelope header length");
    let n = c.varint().ok()?;
    let start = c.at;
    let header = c.take(n).ok()?;
    let fs = fields(header, "envelope header").ok()?;
    fs.iter().find_map(|(num, f)| match (num, f) {
        (2, Field::Bytes(s)) => {
            let s = std::str::from_utf8(s).ok()?;
            // A serializer name is a short identifier; anything else is a bare executable whose
            // first bytes happen to parse.
            (!s.is_empty() && s.len() < 64 && s.bytes().all(|b| b.is_ascii_graphic()))
                .then(|| (s.to_string(), start, start + header.len()))
        }
        _ => None,
    })
}

/// Finds the executable in bytes of any of the three forms.
pub fn unwrap(bytes: &[u8]) -> Result<Unwrapped, XlaArtifactError> {
    let Some((serializer, _, body_start)) = envelope_header(bytes) else {
        return Ok(Unwrapped {
            form: Form::Bare,
            executable: bytes.to_vec(),
            envelope: None,
        });
    };
    if serializer != "pjrt_ifrt" {
        return Err(XlaArtifactError::Envelope(format!(
            "header names serializer {serializer:?}, expected \"pjrt_ifrt\""
        )));
    }
    let body = bytes.get(body_start..).unwrap_or_default();
    let mut riegeli = None;
    let mut compile_options = None;
    for (num, f) in fields(body, "envelope body")? {
        match (num, f) {
            (1, Field::Bytes(b)) => riegeli = Some(b),
            (2, Field::Bytes(b)) => compile_options = Some(b.len()),
            _ => {}
        }
    }
    let riegeli = riegeli.ok_or_else(|| {
        XlaArtifactError::Envelope("body has no field 1 (the Riegeli file)".into())
    })?;
    // PjRt always writes the options the executable was compiled with; without them the bytes
    // were cut right after the Riegeli file.
    let compile_options_bytes = compile_options.ok_or_else(|| {
        XlaArtifactError::Envelope(
            "body has no field 2 (the CompileOptionsProto): truncated after the Riegeli file"
                .into(),
        )
    })?;
    let mut records = riegeli_records(riegeli)?;
    let n = records.len();
    let executable = records.pop().ok_or(XlaArtifactError::NoRecord)?;
    Ok(Unwrapped {
        form: Form::Pjrt,
        executable,
        envelope: Some(Envelope {
            serializer,
            header_bytes: body_start,
            riegeli_bytes: riegeli.len(),
            records: n,
            compile_options_bytes,
        }),
    })
}

fn hash(b: &[u8]) -> u64 {
    HighwayHasher::new(Key(HASH_KEY)).hash64(b)
}

fn le64(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    if let Some(s) = b.get(at..at + 8) {
        a.copy_from_slice(s);
    }
    u64::from_le_bytes(a)
}

/// Every record of a Riegeli file, in order.
pub fn riegeli_records(file: &[u8]) -> Result<Vec<Vec<u8>>, XlaArtifactError> {
    // Take the block headers out (checking each one's hash), so that chunks can be followed in
    // one contiguous stream; `origin` maps a stream offset back to the file for messages.
    let mut flat = Vec::with_capacity(file.len());
    let mut pos = 0;
    while pos < file.len() {
        if pos % BLOCK == 0 {
            let h = file
                .get(pos..pos + BLOCK_HEADER)
                .ok_or(XlaArtifactError::Truncated {
                    what: "Riegeli block header",
                    at: pos,
                    need: BLOCK_HEADER as u64,
                    have: file.len() - pos,
                })?;
            let (found, computed) = (le64(h, 0), hash(&h[8..]));
            if found != computed {
                return Err(XlaArtifactError::Hash {
                    what: "block header",
                    at: pos,
                    found,
                    computed,
                });
            }
            pos += BLOCK_HEADER;
            continue;
        }
        let end = file.len().min((pos / BLOCK + 1) * BLOCK);
        flat.extend_from_slice(&file[pos..end]);
        pos = end;
    }
    let origin = |p: usize| p + (p / (BLOCK - BLOCK_HEADER) + 1) * BLOCK_HEADER;

    let mut records = Vec::new();
    let mut p = 0;
    let mut first = true;
    while p < flat.len() {
        let at = origin(p);
        let h = flat
            .get(p..p + CHUNK_HEADER)
            .ok_or(XlaArtifactError::Truncated {
                what: "Riegeli chunk header",
                at,
                need: CHUNK_HEADER as u64,
                have: flat.len() - p,
            })?;
        let (found, computed) = (le64(h, 0), hash(&h[8..]));
        if found != computed {
            return Err(XlaArtifactError::Hash {
                what: "chunk header",
                at,
                found,
                computed,
            });
        }
        let data_size = le64(h, 8);
        let kind = h[24];
        let num_records = le64(h, 24) >> 8;
        let decoded = le64(h, 32);
        if first && (kind != b's' || data_size != 0) {
            return Err(XlaArtifactError::Corrupt {
                at,
                what: "the file does not start with a Riegeli signature chunk".into(),
            });
        }
        first = false;
        let body_start = p + CHUNK_HEADER;
        let data = usize::try_from(data_size)
            .ok()
            .and_then(|n| flat.get(body_start..body_start.checked_add(n)?))
            .ok_or(XlaArtifactError::Truncated {
                what: "Riegeli chunk data",
                at,
                need: data_size,
                have: flat.len() - body_start,
            })?;
        if le64(h, 16) != hash(data) {
            return Err(XlaArtifactError::Hash {
                what: "chunk data",
                at,
                found: le64(h, 16),
                computed: hash(data),
            });
        }
        match kind {
            b's' | b'm' | b'p' => {}
            b'r' => simple_chunk(data, num_records, decoded, at, &mut records)?,
            b't' => {
                return Err(XlaArtifactError::Unsupported {
                    at,
                    what: "a transposed chunk ('t')".into(),
                })
            }
            k => {
                return Err(XlaArtifactError::Corrupt {
                    at,
                    what: format!("unknown chunk type {k:#04x}"),
                })
            }
        }
        // A chunk spans at least one byte per record, so that every record has its own
        // position (Riegeli pads short chunks with many records).
        let span = (CHUNK_HEADER as u64 + data_size).max(num_records);
        p = usize::try_from(span)
            .ok()
            .and_then(|s| p.checked_add(s))
            .ok_or(XlaArtifactError::Corrupt {
                at,
                what: format!("chunk spans {span} bytes"),
            })?;
    }
    Ok(records)
}

/// Decompresses one buffer of a simple chunk: raw bytes, or (snappy) a varint of the
/// decompressed size followed by snappy's raw format.
fn buffer(
    b: &[u8],
    compression: u8,
    at: usize,
    what: &'static str,
) -> Result<Vec<u8>, XlaArtifactError> {
    match compression {
        0 => Ok(b.to_vec()),
        b's' => {
            let mut c = Cursor::new(b, what);
            let size = c.varint()?;
            let raw = c.take(c.left() as u64)?;
            let len = snap::raw::decompress_len(raw)
                .map_err(|source| XlaArtifactError::Snappy { at, source })?;
            if len as u64 != size {
                return Err(XlaArtifactError::Corrupt {
                    at,
                    what: format!("{what}: snappy holds {len} bytes, the chunk says {size}"),
                });
            }
            if size > MAX_DECODED {
                return Err(XlaArtifactError::TooLarge {
                    at,
                    what,
                    size,
                    limit: MAX_DECODED,
                });
            }
            snap::raw::Decoder::new()
                .decompress_vec(raw)
                .map_err(|source| XlaArtifactError::Snappy { at, source })
        }
        b'b' | b'z' => Err(XlaArtifactError::Unsupported {
            at,
            what: format!(
                "{} compression",
                if compression == b'b' {
                    "brotli"
                } else {
                    "zstd"
                }
            ),
        }),
        c => Err(XlaArtifactError::Corrupt {
            at,
            what: format!("unknown compression type {c:#04x}"),
        }),
    }
}

fn simple_chunk(
    data: &[u8],
    num_records: u64,
    decoded: u64,
    at: usize,
    out: &mut Vec<Vec<u8>>,
) -> Result<(), XlaArtifactError> {
    if decoded > MAX_DECODED {
        return Err(XlaArtifactError::TooLarge {
            at,
            what: "decoded chunk",
            size: decoded,
            limit: MAX_DECODED,
        });
    }
    let mut c = Cursor::new(data, "Riegeli simple chunk");
    let compression = *data.first().ok_or(XlaArtifactError::Truncated {
        what: "Riegeli simple chunk",
        at,
        need: 1,
        have: 0,
    })?;
    c.at = 1;
    let sizes_size = c.varint()?;
    let sizes = buffer(c.take(sizes_size)?, compression, at, "record sizes")?;
    let values = buffer(c.take(c.left() as u64)?, compression, at, "record values")?;
    if values.len() as u64 != decoded {
        return Err(XlaArtifactError::Corrupt {
            at,
            what: format!(
                "records hold {} bytes, the chunk header says {decoded}",
                values.len()
            ),
        });
    }
    let mut s = Cursor::new(&sizes, "Riegeli record sizes");
    let mut v = Cursor::new(&values, "Riegeli record values");
    let mut n = 0u64;
    while s.left() > 0 {
        let size = s.varint()?;
        out.push(v.take(size)?.to_vec());
        n += 1;
    }
    if n != num_records || v.left() != 0 {
        return Err(XlaArtifactError::Corrupt {
            at,
            what: format!(
                "{n} record sizes covering {} of {} bytes, the chunk header says {num_records} records",
                values.len() - v.left(),
                values.len()
            ),
        });
    }
    Ok(())
}

/// Whether a `GpuExecutableProto` was written by XLA rather than this project's compiler: XLA
/// writes top-level fields this project's schema reserves or lacks (2 `buffer_assignment`, 15
/// `cpu_target_machine_options`), which this project's compiler never writes. Only the
/// top-level field numbers are looked at; bytes that do not parse are "not XLA".
pub fn looks_like_xla(executable: &[u8]) -> bool {
    fields(executable, "executable")
        .map(|fs| fs.iter().any(|(n, _)| *n == 2 || *n == 15))
        .unwrap_or(false)
}

/// A cubin's target as ptxas names it (`sm_90a`, `sm_80`), from its ELF header
/// ([`ptx::ptxas::cubin_arch`]). `None` when the bytes are not a CUDA ELF.
pub fn cubin_target(cubin: &[u8]) -> Option<String> {
    ptx::ptxas::cubin_arch(cubin).ok().map(|a| a.to_string())
}

/// XLA's name for a `ThunkProto` oneof number (xla/backends/gpu/runtime/thunk.proto at the
/// revision docs/artifact.md names), for messages about thunk kinds this schema lacks.
pub fn xla_thunk_kind(number: u32) -> Option<&'static str> {
    Some(match number {
        2 => "sequential_thunk",
        3 => "copy_thunk",
        4 => "device_to_host_copy_thunk",
        5 => "host_to_device_copy_thunk",
        6 => "conditional_thunk",
        7 => "while_thunk",
        8 => "kernel_thunk",
        9 => "gemm_thunk",
        11 => "triangular_solve_thunk",
        12 => "replica_id_thunk",
        13 => "device_to_device_copy_thunk",
        14 => "partition_id_thunk",
        15 => "cudnn_thunk",
        16 => "host_execute_start_thunk",
        17 => "host_execute_done_thunk",
        18 => "dynamic_slice_thunk",
        19 => "memzero_thunk",
        20 => "select_k_thunk",
        21 => "infeed_thunk",
        22 => "cublas_lt_matmul_thunk",
        23 => "outfeed_thunk",
        24 => "norm_thunk",
        25 => "convolution_thunk",
        26 => "convolution_reorder_thunk",
        27 => "fft_thunk",
        28 => "memset32bit_value_thunk",
        30 => "custom_call_thunk",
        32 => "host_send_thunk",
        33 => "host_send_done_thunk",
        34 => "host_recv_thunk",
        35 => "host_recv_done_thunk",
        36 => "custom_kernel_thunk",
        38 => "all_gather_thunk",
        39 => "all_reduce_thunk",
        40 => "reduce_scatter_thunk",
        41 => "all_to_all_thunk",
        42 => "ragged_all_to_all_thunk",
        43 => "collective_permute_thunk",
        44 => "send_thunk",
        45 => "recv_thunk",
        46 => "collective_broadcast_thunk",
        47 => "collective_group_thunk",
        57 => "async_start_thunk",
        58 => "async_done_thunk",
        59 => "collective_kernel_thunk",
        60 => "dynamic_slice_fusion_thunk",
        61 => "rng_seed_thunk",
        _ => return None,
    })
}
