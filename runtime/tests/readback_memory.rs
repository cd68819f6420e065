//! Issue 33: an output no thunk writes costs no host memory when it is read back.
//!
//! The reproducer was a 1.9 KB artifact whose 1 GiB output is never written: reading it back
//! took 2.1 GB of host memory. Now the emulated device commits a page only when it is written,
//! and `Executable::execute_reading` reads into fresh zeroed host memory copying only the
//! non-zero chunks, so the host pages of an unwritten output stay uncommitted.
//!
//! Its own test binary (one test, one process), so the process's peak resident set measures
//! this execution alone; Linux only (`/proc/self`).
#![cfg(target_os = "linux")]

#[path = "runtime/common.rs"]
mod common;

use common::*;
use proto::prost::Message;
use runtime::RuntimeFlags;

/// 2^27 f32: 512 MiB, under the element cap (`hlo::MAX_ELEMENTS`, 2^28) and the emulated
/// device's 1 GiB.
const ELEMS: u64 = 1 << 27;

/// A field of `/proc/self/status` in KiB (`VmRSS`, `VmHWM`).
fn status_kib(field: &str) -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = s
        .lines()
        .find(|l| l.starts_with(field))
        .unwrap_or_else(|| panic!("{field} missing from /proc/self/status"));
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn an_unwritten_512_mib_output_is_read_back_without_committing_it() {
    let hlo = format!(
        "HloModule unwritten\n\nENTRY e {{\n  p = f32[1] parameter(0)\n  z = f32[] constant(0)\n  ROOT r = f32[{ELEMS}] broadcast(z), dimensions={{}}\n}}\n"
    );
    let bytes = (ELEMS * 4) as i64;
    let mut p = artifact(&hlo, &["f32[1]"], &format!("f32[{ELEMS}]"));
    *allocs(&mut p) = vec![alloc(0, 4, Some(0), false), alloc(1, bytes, None, true)];
    p.output_info_map = vec![out(vec![], 1)];
    // One 4-byte memset into the output's first word: the rest is never written.
    p.thunks = vec![memset(1, sl(1, 0, 4), 0x3f80_0000)];

    let d = device();
    let exe = runtime::load(&p.encode_to_vec(), &d, &RuntimeFlags::default()).unwrap();
    let arg = f32s(&[2.0]);
    // Reset the peak to the current resident set (kernel >= 4.0; where it is refused the peak
    // since the process started is measured, which only makes the bound harder to meet).
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    let before = status_kib("VmRSS:");
    let r = exe.execute_reading(&d, &[&arg], &[true]).unwrap();
    let peak = status_kib("VmHWM:");

    let got = &r.outputs[0];
    assert_eq!(got.len() as u64, ELEMS * 4);
    assert_eq!(to_f32s(&got[..8]), vec![1.0, 0.0]);
    assert_eq!(&got[got.len() - 4..], &[0, 0, 0, 0]);
    let grew_mib = peak.saturating_sub(before) / 1024;
    assert!(
        grew_mib < 64,
        "reading back a 512 MiB output with one written word raised the peak resident set by {grew_mib} MiB"
    );
}
