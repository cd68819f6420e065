//! The emulator as a sanitizer: one exact-message test per kind of bad access (memcheck on
//! global, shared and local memory; initcheck; racecheck), each on both engines.
mod emu_common;
use emu_common::*;
use ptx::emu::{
    self, ArgSlice, DevicePtr, EmuError, LaunchOptions, LoadedModule, Memory, ParamValue,
};

/// `a[off] -> b[0]` as u32 (`off` in bytes, a kernel parameter), or with `store` the reverse
/// direction: `b[0] -> a[off]`.
fn copy_kernel(store: bool) -> String {
    let body = if store {
        "ld.global.u32 %r1, [%rd2];\n    st.global.u32 [%rd4], %r1;"
    } else {
        "ld.global.u32 %r1, [%rd4];\n    st.global.u32 [%rd2], %r1;"
    };
    module(&format!(
        r#"
.visible .entry k(.param .u64 a, .param .u64 b, .param .u64 off)
{{
    .reg .b32 %r<4>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [a];
    ld.param.u64 %rd2, [b];
    ld.param.u64 %rd3, [off];
    add.s64 %rd4, %rd1, %rd3;
    {body}
    ret;
}}
"#
    ))
}

/// Launches `k` with one block of `threads` threads on both engines; both must fail with the
/// same message, which is returned.
fn fails(
    m: &LoadedModule,
    threads: u32,
    params: &[ParamValue],
    slices: &[ArgSlice],
    mem: &mut Memory,
    opts: LaunchOptions,
) -> String {
    let mut messages = Vec::new();
    for reference_engine in [false, true] {
        let opts = LaunchOptions {
            reference_engine,
            threads: 1,
            ..opts.clone()
        };
        let dims = ([1, 1, 1], [threads, 1, 1], 0);
        let err = emu::launch_sliced(m, "k", dims, params, slices, mem, &opts)
            .expect_err("the launch must fault");
        messages.push(err.to_string());
    }
    assert_eq!(messages[0], messages[1], "the engines disagree");
    messages.swap_remove(0)
}

fn ptrs(a: DevicePtr, b: DevicePtr, off: i64) -> Vec<ParamValue> {
    vec![
        ParamValue::ptr(a),
        ParamValue::ptr(b),
        ParamValue::u64(off as u64),
    ]
}

#[test]
fn a_read_past_the_end_names_the_allocation_and_the_distance() {
    let m = load(&copy_kernel(false));
    let mut mem = Memory::new();
    let a = buf_u32(&mut mem, &[7; 20]);
    let b = buf_u32(&mut mem, &[9; 4]);
    let msg = fails(
        &m,
        1,
        &ptrs(a, b, 592),
        &[],
        &mut mem,
        LaunchOptions::default(),
    );
    assert_eq!(
        msg,
        "out-of-bounds global read of 4 bytes at address 0x100000250: 512 bytes past the end of the allocation of 80 bytes at 0x100000000 (kernel `k`, function `k`, pc 4 `ld.global.u32 %r1, [%rd4]`, ctaid (0,0,0), tid (0,0,0))"
    );
    assert_eq!(read_u32(&mut mem, b, 4), vec![9; 4], "nothing was stored");
}

#[test]
fn a_write_past_the_end_of_an_argument_slice_is_caught_inside_its_allocation() {
    // Two slices of one allocation, as buffer assignment packs them: `a` is bytes 0..80, `b`
    // bytes 128..144. A store 4 bytes past `a` lands in the allocation but in no slice.
    let m = load(&copy_kernel(true));
    let mut mem = Memory::new();
    let whole = buf_u32(&mut mem, &[5; 64]);
    let (a, b) = (whole, whole.offset(128));
    let slices = [
        ArgSlice {
            param: 0,
            address: a,
            size: 80,
            written: true,
        },
        ArgSlice {
            param: 1,
            address: b,
            size: 16,
            written: true,
        },
    ];
    let msg = fails(
        &m,
        1,
        &ptrs(a, b, 84),
        &slices,
        &mut mem,
        LaunchOptions::default(),
    );
    assert_eq!(
        msg,
        "out-of-bounds global write of 4 bytes at address 0x100000054: 4 bytes past the end of kernel argument 0 `a` (80 bytes at 0x100000000); the address is inside the device allocation 0x100000000..0x100000100, outside every buffer this launch was given (kernel `k`, function `k`, pc 5 `st.global.u32 [%rd4], %r1`, ctaid (0,0,0), tid (0,0,0))"
    );
    assert_eq!(
        read_u32(&mut mem, whole, 64),
        vec![5; 64],
        "nothing was stored"
    );
}

#[test]
fn a_read_between_two_allocations_names_the_nearer() {
    let m = load(&copy_kernel(false));
    let mut mem = Memory::new();
    let a = buf_u32(&mut mem, &[7; 20]);
    let b = buf_u32(&mut mem, &[9; 4]);
    // 3 GiB on from `a`: 1 GiB before `b` (4 GiB on), nearer than `a`'s end.
    let msg = fails(
        &m,
        1,
        &ptrs(a, b, 3 << 30),
        &[],
        &mut mem,
        LaunchOptions::default(),
    );
    assert_eq!(
        msg,
        "out-of-bounds global read of 4 bytes at address 0x1c0000000: 1073741824 bytes before the start of the allocation of 16 bytes at 0x200000000 (kernel `k`, function `k`, pc 4 `ld.global.u32 %r1, [%rd4]`, ctaid (0,0,0), tid (0,0,0))"
    );
}

#[test]
fn a_negative_offset_is_before_the_start() {
    let m = load(&copy_kernel(false));
    let mut mem = Memory::new();
    let a = buf_u32(&mut mem, &[7; 20]);
    let b = buf_u32(&mut mem, &[9; 4]);
    let slices = [
        ArgSlice {
            param: 0,
            address: a,
            size: 80,
            written: true,
        },
        ArgSlice {
            param: 1,
            address: b,
            size: 16,
            written: true,
        },
    ];
    let msg = fails(
        &m,
        1,
        &ptrs(b, a, -4),
        &slices,
        &mut mem,
        LaunchOptions::default(),
    );
    assert_eq!(
        msg,
        "out-of-bounds global read of 4 bytes at address 0x1fffffffc: 4 bytes before the start of kernel argument 1 `b` (16 bytes at 0x200000000) (kernel `k`, function `k`, pc 4 `ld.global.u32 %r1, [%rd4]`, ctaid (0,0,0), tid (0,0,0))"
    );
}

#[test]
fn shared_accesses_are_bounded_by_their_variable() {
    // Thread t stores to a[t]: a has 4 elements, so thread 4 runs off `a` (toward `b`).
    let text = module(
        r#"
.visible .entry k()
{
    .reg .b32 %r<4>;
    .shared .align 4 .b32 a[4];
    .shared .align 4 .b32 b[4];
    mov.u32 %r1, %tid.x;
    shl.b32 %r2, %r1, 2;
    mov.u32 %r3, a;
    add.s32 %r3, %r3, %r2;
    st.shared.u32 [%r3], %r1;
    ret;
}
"#,
    );
    let m = load(&text);
    let msg = fails(
        &m,
        8,
        &[],
        &[],
        &mut Memory::new(),
        LaunchOptions::default(),
    );
    assert_eq!(
        msg,
        "out-of-bounds shared write of 4 bytes at address 0x10: 0 bytes past the end of shared variable `a` (16 bytes at shared offset 0x0) (kernel `k`, function `k`, pc 4 `st.shared.u32 [%r3], %r1`, ctaid (0,0,0), tid (4,0,0))"
    );
}

#[test]
fn local_accesses_are_bounded_by_their_variable() {
    let text = module(
        r#"
.visible .entry k()
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<4>;
    .local .align 4 .b32 l[4];
    mov.u64 %rd1, l;
    ld.local.u32 %r1, [%rd1+-8];
    ret;
}
"#,
    );
    let m = load(&text);
    let msg = fails(
        &m,
        1,
        &[],
        &[],
        &mut Memory::new(),
        LaunchOptions::default(),
    );
    assert_eq!(
        msg,
        "out-of-bounds local read of 4 bytes at address 0xfffffff8: 8 bytes before the start of local variable `l` (16 bytes at local offset 0x0) (kernel `k`, function `k`, pc 1 `ld.local.u32 %r1, [%rd1+-8]`, ctaid (0,0,0), tid (0,0,0))"
    );
}

#[test]
fn an_atomic_past_the_end_is_an_atomic_fault() {
    let text = module(
        r#"
.visible .entry k(.param .u64 a)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [a];
    atom.global.add.u32 %r1, [%rd1+16], 1;
    ret;
}
"#,
    );
    let m = load(&text);
    let mut mem = Memory::new();
    let a = buf_u32(&mut mem, &[0; 4]);
    let msg = fails(
        &m,
        1,
        &[ParamValue::ptr(a)],
        &[],
        &mut mem,
        LaunchOptions::default(),
    );
    assert_eq!(
        msg,
        "out-of-bounds global atomic of 4 bytes at address 0x100000010: 0 bytes past the end of the allocation of 16 bytes at 0x100000000 (kernel `k`, function `k`, pc 1 `atom.global.add.u32 %r1, [%rd1+16], 1`, ctaid (0,0,0), tid (0,0,0))"
    );
}

#[test]
fn initcheck_reports_a_read_of_memory_nothing_wrote() {
    let m = load(&copy_kernel(false));
    let mut mem = Memory::new();
    mem.set_initcheck(true);
    let a = mem.alloc(80).expect("alloc");
    mem.write(a, &[1; 40]).expect("write");
    let b = buf_u32(&mut mem, &[9; 4]);
    let opts = LaunchOptions {
        initcheck: true,
        ..LaunchOptions::default()
    };
    let msg = fails(&m, 1, &ptrs(a, b, 40), &[], &mut mem, opts.clone());
    assert_eq!(
        msg,
        "uninitialised global read of 4 bytes at address 0x100000028 in the allocation of 80 bytes at 0x100000000 (kernel `k`, function `k`, pc 4 `ld.global.u32 %r1, [%rd4]`, ctaid (0,0,0), tid (0,0,0))"
    );
    // The written half reads fine, and the store marks `b` written.
    for off in [0, 36] {
        emu::launch_sliced(
            &m,
            "k",
            ([1; 3], [1; 3], 0),
            &ptrs(a, b, off),
            &[],
            &mut mem,
            &opts,
        )
        .expect("written bytes read fine");
    }
    // Off (the default), the same read passes and gets zeros.
    emu::launch(
        &m,
        "k",
        [1; 3],
        [1; 3],
        0,
        &ptrs(a, b, 40),
        &mut mem,
        &LaunchOptions::default(),
    )
    .expect("initcheck is off by default");
    assert_eq!(read_u32(&mut mem, b, 1), vec![0]);
}

#[test]
fn initcheck_covers_shared_memory() {
    let text = module(
        r#"
.visible .entry k(.param .u64 out)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<4>;
    .shared .align 4 .b32 s[2];
    st.shared.u32 [s], 1;
    ld.shared.u32 %r1, [s+4];
    ld.param.u64 %rd1, [out];
    st.global.u32 [%rd1], %r1;
    ret;
}
"#,
    );
    let m = load(&text);
    let mut mem = Memory::new();
    let out = buf_u32(&mut mem, &[0]);
    let opts = LaunchOptions {
        initcheck: true,
        ..LaunchOptions::default()
    };
    let msg = fails(&m, 1, &[ParamValue::ptr(out)], &[], &mut mem, opts);
    assert_eq!(
        msg,
        "uninitialised shared read of 4 bytes at address 0x4 in shared variable `s` (8 bytes at shared offset 0x0) (kernel `k`, function `k`, pc 1 `ld.shared.u32 %r1, [s+4]`, ctaid (0,0,0), tid (0,0,0))"
    );
}

/// Warp 0 writes `s`, warp 1 reads it: with `bar.sync` between them (`barrier`) or not.
fn race_kernel(barrier: bool) -> String {
    let bar = if barrier { "bar.sync 0;" } else { "" };
    module(&format!(
        r#"
.visible .entry k(.param .u64 out)
{{
    .reg .pred %p<2>;
    .reg .b32 %r<4>;
    .reg .b64 %rd<4>;
    .shared .align 4 .b32 s;
    mov.u32 %r1, %tid.x;
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra SKIP;
    st.shared.u32 [s], 7;
SKIP:
    {bar}
    setp.ne.u32 %p1, %r1, 32;
    @%p1 bra DONE;
    ld.shared.u32 %r2, [s];
    ld.param.u64 %rd1, [out];
    st.global.u32 [%rd1], %r2;
DONE:
    ret;
}}
"#
    ))
}

#[test]
fn racecheck_reports_shared_accesses_of_two_warps_between_barriers() {
    let opts = LaunchOptions {
        racecheck: true,
        ..LaunchOptions::default()
    };
    let m = load(&race_kernel(false));
    let mut mem = Memory::new();
    let out = buf_u32(&mut mem, &[0]);
    let msg = fails(&m, 64, &[ParamValue::ptr(out)], &[], &mut mem, opts.clone());
    assert_eq!(
        msg,
        "shared-memory race: read-after-write hazard on 4 bytes at shared address 0x0 with tid (0,0,0) since the last barrier (kernel `k`, function `k`, pc 6 `ld.shared.u32 %r2, [s]`, ctaid (0,0,0), tid (32,0,0))"
    );
    let m = load(&race_kernel(true));
    let dims = ([1; 3], [64, 1, 1], 0);
    emu::launch_sliced(&m, "k", dims, &[ParamValue::ptr(out)], &[], &mut mem, &opts)
        .expect("a barrier orders the two");
    assert_eq!(read_u32(&mut mem, out, 1), vec![7]);
}

#[test]
fn faults_are_typed() {
    let m = load(&copy_kernel(false));
    let mut mem = Memory::new();
    let a = buf_u32(&mut mem, &[7; 20]);
    let b = buf_u32(&mut mem, &[9; 4]);
    let err = emu::launch(
        &m,
        "k",
        [1; 3],
        [1; 3],
        0,
        &ptrs(a, b, 80),
        &mut mem,
        &LaunchOptions::default(),
    )
    .expect_err("past the end");
    assert!(
        matches!(
            &err,
            EmuError::OutOfBounds { access: emu::Access::Read, size: 4, address, .. }
                if *address == a.0 + 80
        ),
        "{err}"
    );
}

/// Threads 0 and 32 (two warps) store to `s` with no barrier: `value` is the stored register.
fn double_store_kernel(value: &str) -> String {
    module(&format!(
        r#"
.visible .entry k()
{{
    .reg .pred %p<2>;
    .reg .b32 %r<4>;
    .shared .align 4 .b32 s;
    mov.u32 %r1, %tid.x;
    and.b32 %r2, %r1, 31;
    setp.ne.u32 %p1, %r2, 0;
    @%p1 bra DONE;
    st.shared.u32 [s], {value};
DONE:
    ret;
}}
"#
    ))
}

#[test]
fn racecheck_reports_two_warps_writing_different_values_only() {
    let opts = LaunchOptions {
        racecheck: true,
        ..LaunchOptions::default()
    };
    // The same value from both warps (a replicated store, as Triton's epilogues do): benign.
    let m = load(&double_store_kernel("7"));
    let dims = ([1; 3], [64, 1, 1], 0);
    emu::launch_sliced(&m, "k", dims, &[], &[], &mut Memory::new(), &opts)
        .expect("identical bytes are no race");
    let m = load(&double_store_kernel("%r1"));
    let msg = fails(&m, 64, &[], &[], &mut Memory::new(), opts);
    assert_eq!(
        msg,
        "shared-memory race: write-after-write hazard on 4 bytes at shared address 0x0 with tid (0,0,0) since the last barrier (kernel `k`, function `k`, pc 4 `st.shared.u32 [s], %r1`, ctaid (0,0,0), tid (32,0,0))"
    );
}

/// `a` read-only, `b` written: the slices of [`copy_kernel`] as a launch that trusts the
/// executable's flags passes them.
fn flagged(a: DevicePtr, b: DevicePtr, a_written: bool) -> [ArgSlice; 2] {
    [
        ArgSlice {
            param: 0,
            address: a,
            size: 80,
            written: a_written,
        },
        ArgSlice {
            param: 1,
            address: b,
            size: 16,
            written: true,
        },
    ]
}

#[test]
fn a_store_into_an_argument_not_marked_written_is_caught() {
    // `b[0] -> a[4]`, with `a` marked read-only: the runtime may have handed the kernel the
    // caller's own buffer there, so the store must not land. 32 threads: the whole-warp path.
    let m = load(&copy_kernel(true));
    let mut mem = Memory::new();
    let a = buf_u32(&mut mem, &[7; 20]);
    let b = buf_u32(&mut mem, &[9; 4]);
    for threads in [1, 32] {
        let msg = fails(
            &m,
            threads,
            &ptrs(a, b, 4),
            &flagged(a, b, false),
            &mut mem,
            LaunchOptions::default(),
        );
        assert_eq!(
            msg,
            "write to kernel argument 0 `a` (80 bytes at 0x100000000), which the launch does not mark written, at address 0x100000004 (kernel `k`, function `k`, pc 5 `st.global.u32 [%rd4], %r1`, ctaid (0,0,0), tid (0,0,0))"
        );
        assert_eq!(read_u32(&mut mem, a, 20), vec![7; 20], "nothing was stored");
    }
    // Marked written, the same store lands.
    let opts = LaunchOptions::default();
    emu::launch_sliced(
        &m,
        "k",
        ([1, 1, 1], [1, 1, 1], 0),
        &ptrs(a, b, 4),
        &flagged(a, b, true),
        &mut mem,
        &opts,
    )
    .expect("a written argument takes the store");
    assert_eq!(read_u32(&mut mem, a, 2), vec![7, 9]);
}

#[test]
fn an_atomic_into_an_argument_not_marked_written_is_caught() {
    let m = load(&module(
        r#"
.visible .entry k(.param .u64 a, .param .u64 b, .param .u64 off)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [a];
    atom.global.add.u32 %r1, [%rd1], 1;
    ret;
}
"#,
    ));
    let mut mem = Memory::new();
    let a = buf_u32(&mut mem, &[7; 20]);
    let b = buf_u32(&mut mem, &[9; 4]);
    let msg = fails(
        &m,
        32,
        &ptrs(a, b, 0),
        &flagged(a, b, false),
        &mut mem,
        LaunchOptions::default(),
    );
    assert_eq!(
        msg,
        "write to kernel argument 0 `a` (80 bytes at 0x100000000), which the launch does not mark written, at address 0x100000000 (kernel `k`, function `k`, pc 1 `atom.global.add.u32 %r1, [%rd1], 1`, ctaid (0,0,0), tid (0,0,0))"
    );
    assert_eq!(read_u32(&mut mem, a, 20), vec![7; 20], "nothing was stored");
}
