//! `.local` memory is made per resident thread as it is written, under a byte limit (issue 33:
//! `.local` of 1 MiB per thread committed 1 GiB per emulator worker before the first
//! instruction, 16 GiB on a 16-core host).
use ptx::emu::{launch, EmuError, LaunchOptions, LoadedModule, Memory, ParamValue};

/// A kernel with `bytes` of `.local` per thread; each thread stores its id at every
/// `stride`-th byte of it, then reads back the first and last word into `out[tid]`.
fn kernel(bytes: u32, stride: u32) -> LoadedModule {
    let text = format!(
        r#".version 8.0
.target sm_90
.address_size 64

.visible .entry k(.param .u64 out)
{{
    .reg .pred %p<2>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<8>;
    .local .align 8 .b8 buf[{bytes}];
    mov.u32 %r0, %tid.x;
    mov.u32 %r1, 0;
    mov.u64 %rd1, buf;
LOOP:
    cvt.u64.u32 %rd2, %r1;
    add.s64 %rd3, %rd1, %rd2;
    st.local.u32 [%rd3], %r0;
    add.u32 %r1, %r1, {stride};
    setp.le.u32 %p1, %r1, {last};
    @%p1 bra LOOP;
    ld.local.u32 %r2, [buf];
    ld.local.u32 %r3, [buf+{last}];
    add.u32 %r4, %r2, %r3;
    ld.param.u64 %rd4, [out];
    mul.wide.u32 %rd5, %r0, 4;
    add.s64 %rd6, %rd4, %rd5;
    st.global.u32 [%rd6], %r4;
    ret;
}}
"#,
        last = bytes - 4
    );
    let ast = ptx::parse(&text).expect("the kernel parses");
    LoadedModule::load(&ast).expect("the kernel loads")
}

fn run(m: &LoadedModule, grid: u32, opts: &LaunchOptions) -> Result<Vec<u32>, EmuError> {
    let mut mem = Memory::new();
    let out = mem.alloc(1024 * 4).expect("alloc");
    launch(
        m,
        "k",
        [grid, 1, 1],
        [1024, 1, 1],
        0,
        &[ParamValue::ptr(out)],
        &mut mem,
        opts,
    )?;
    let mut bytes = vec![0u8; 1024 * 4];
    mem.read(out, &mut bytes).expect("read");
    Ok(bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}

/// 512 KiB per thread (CUDA's most) over 1024 threads and 64 blocks, each thread touching its
/// first and last word: two pages a thread are made, not 512 MiB a worker.
#[test]
fn declared_but_untouched_local_memory_is_not_made() {
    let m = kernel(512 * 1024, 512 * 1024 - 4);
    let opts = LaunchOptions {
        // 1024 threads x 2 pages x 4 KiB = 8 MiB a worker; 4 workers at most.
        local_memory_bytes: 64 << 20,
        threads: 4,
        ..LaunchOptions::default()
    };
    let out = run(&m, 64, &opts).expect("the launch runs");
    let want: Vec<u32> = (0..1024).map(|t| 2 * t).collect();
    assert_eq!(out, want);
}

/// Each thread writes every page of its 512 KiB: 512 MiB for one block, past a 64 MiB limit,
/// which stops it with a typed error before the pages are made.
#[test]
fn writing_past_the_local_memory_limit_is_a_typed_error() {
    let m = kernel(512 * 1024, 4096);
    let opts = LaunchOptions {
        local_memory_bytes: 64 << 20,
        threads: 2,
        ..LaunchOptions::default()
    };
    let start = std::time::Instant::now();
    let e = run(&m, 8, &opts).expect_err("512 MiB of local writes");
    assert!(matches!(e, EmuError::LocalMemoryExhausted { limit, .. } if limit == 64 << 20));
    let message = e.to_string();
    assert!(
        message.starts_with("local memory limit of 67108864 bytes reached: the launch's threads wrote that much `.local` memory (kernel `k`, function `k`, pc "),
        "{message}"
    );
    assert!(message.contains("st.local.u32 [%rd3], %r0"), "{message}");
    assert!(start.elapsed() < std::time::Duration::from_secs(30));
}

/// More than CUDA's 512 KiB a thread is refused at launch, as ptxas refuses it.
#[test]
fn more_local_memory_per_thread_than_cuda_allows_is_refused() {
    let m = kernel(1 << 20, 1 << 19);
    let e = run(&m, 1, &LaunchOptions::default()).expect_err("1 MiB a thread");
    assert_eq!(
        e.to_string(),
        "kernel `k`: invalid launch configuration: 1048576 bytes of local memory per thread, more than 524288 (CUDA's limit)"
    );
}
