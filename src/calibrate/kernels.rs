//! The calibration kernels: the one module of tco-sim where `unsafe` is allowed.
//!
//! Each kernel has a safe entry point that checks every slice length up front, then dispatches
//! once per call to the fastest instruction set the CPU reports at run time (`Isa`):
//! AVX-512 or AVX2+FMA on x86_64, NEON on aarch64, and portable Rust everywhere else. Inside,
//! raw pointers walk the checked slices; every `unsafe` block says why it is sound.
//!
//! - [`sgemm`]: f32 GEMM, C = A·B, BLIS-style (packed panels, a register-blocked micro-kernel).
//! - [`igemm`]: int8 GEMM, C(i32) = A(i8)·B(i8), AVX-512 VNNI `vpdpbusd` where present.
//! - [`stream`]: STREAM copy and triad, with non-temporal stores where the ISA has them.
//! - [`peak`]: register-only FMA (and VNNI) loops: the measured compute ceiling of one core.
//!
//! Results are checked against the simple references in each submodule by the callers in
//! `calibrate::measure` and by the tests: a fast but wrong kernel is a failure, not a result.

pub mod igemm;
pub mod peak;
pub mod sgemm;
pub mod stream;

use std::fmt;

/// The slice-length checks of a row-major GEMM C (m×n) = A (m×k) · B (k×n) with row strides
/// `ld*`: what makes the pointer arithmetic of the micro-kernels sound. A violation is a bug in
/// the caller, so it panics.
#[allow(clippy::too_many_arguments)]
fn check_gemm_shapes(
    m: usize,
    n: usize,
    k: usize,
    a_len: usize,
    lda: usize,
    b_len: usize,
    ldb: usize,
    c_len: usize,
    ldc: usize,
) {
    assert!(
        lda >= k && ldb >= n && ldc >= n,
        "row strides shorter than rows"
    );
    let need = |rows: usize, cols: usize, ld: usize| {
        if rows == 0 || cols == 0 {
            0
        } else {
            (rows - 1) * ld + cols
        }
    };
    assert!(a_len >= need(m, k, lda), "a is shorter than m×k");
    assert!(b_len >= need(k, n, ldb), "b is shorter than k×n");
    assert!(c_len >= need(m, n, ldc), "c is shorter than m×n");
}

/// Call the micro-kernel `$kernel::<R>($args…)` compiled for exactly `R = $rows` rows, so a
/// short edge tile does not pay for a full tile's FMAs. Rows above the listed ones take the
/// largest (callers assert `rows` is within the tile).
macro_rules! by_rows {
    ($rows:expr, $kernel:ident, [$($r:literal),+ ; $max:literal], $args:tt) => {
        match $rows {
            $($r => $kernel::<$r> $args,)+
            _ => $kernel::<$max> $args,
        }
    };
}
pub(crate) use by_rows;

/// The instruction set a kernel runs with, chosen at run time from what the CPU reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Isa {
    /// Plain Rust, vectorised only as far as the compiler's baseline target allows.
    Portable,
    /// x86_64 AVX2 with FMA3: 256-bit vectors, 8 f32 lanes.
    Avx2Fma,
    /// x86_64 AVX-512F: 512-bit vectors, 16 f32 lanes.
    Avx512,
    /// x86_64 AVX-512 VNNI (`vpdpbusd`): 64 int8 multiply-adds per instruction.
    Avx512Vnni,
    /// aarch64 Advanced SIMD: 128-bit vectors, 4 f32 lanes.
    Neon,
}

impl Isa {
    pub fn label(self) -> &'static str {
        match self {
            Isa::Portable => "portable",
            Isa::Avx2Fma => "avx2+fma",
            Isa::Avx512 => "avx512f",
            Isa::Avx512Vnni => "avx512-vnni",
            Isa::Neon => "neon",
        }
    }

    /// f32 lanes of one vector register of this ISA.
    pub fn f32_lanes(self) -> usize {
        match self {
            Isa::Portable => 1,
            Isa::Avx2Fma => 8,
            Isa::Avx512 | Isa::Avx512Vnni => 16,
            Isa::Neon => 4,
        }
    }

    /// Whether the running CPU can execute this ISA.
    pub fn available(self) -> bool {
        match self {
            Isa::Portable => true,
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2Fma => is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma"),
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => is_x86_feature_detected!("avx512f"),
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512Vnni => {
                is_x86_feature_detected!("avx512f")
                    && is_x86_feature_detected!("avx512bw")
                    && is_x86_feature_detected!("avx512vnni")
            }
            #[cfg(target_arch = "aarch64")]
            Isa::Neon => std::arch::is_aarch64_feature_detected!("neon"),
            #[allow(unreachable_patterns)]
            _ => false,
        }
    }

    /// The fastest ISA for f32 work (GEMM, FMA ceiling, streams) on this CPU.
    pub fn best_f32() -> Isa {
        [Isa::Avx512, Isa::Avx2Fma, Isa::Neon]
            .into_iter()
            .find(|i| i.available())
            .unwrap_or(Isa::Portable)
    }

    /// The fastest ISA for int8 dot products on this CPU. aarch64 SDOT is not used yet: its
    /// intrinsics (`vdotq_s32`) are unstable in Rust 1.95 (`stdarch_neon_dotprod`, #117224), so
    /// Altra int8 runs the portable kernel and under-reports until they stabilise.
    pub fn best_int8() -> Isa {
        if Isa::Avx512Vnni.available() {
            Isa::Avx512Vnni
        } else {
            Isa::Portable
        }
    }
}

impl fmt::Display for Isa {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// A zero-initialised f32 buffer whose first element sits on a 64-byte boundary (AVX-512
/// loads, non-temporal stores), without an allocator API: a slightly longer `Vec` viewed from
/// its first aligned element.
///
/// `vec![0.0; n]` asks the allocator for zeroed memory, which for large buffers is fresh
/// `mmap`ed pages that nobody has touched yet: the thread that first writes a page owns it
/// (NUMA first touch). On Linux large buffers are also advised to use transparent huge pages,
/// which cuts the page faults of a multi-GiB STREAM array 512-fold.
pub struct AlignedBuf {
    data: Vec<f32>,
    offset: usize,
    len: usize,
}

impl AlignedBuf {
    pub fn new(len: usize) -> Self {
        let data = vec![0.0f32; len + 16];
        let offset = data.as_ptr().align_offset(64).min(16);
        advise_huge_pages(&data);
        AlignedBuf { data, offset, len }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn as_slice(&self) -> &[f32] {
        &self.data[self.offset..self.offset + self.len]
    }

    pub fn as_mut_slice(&mut self) -> &mut [f32] {
        &mut self.data[self.offset..self.offset + self.len]
    }
}

/// Ask Linux to back the 2 MiB-aligned interior of a large buffer with huge pages. Advice
/// only: failure (or THP switched off) changes speed, never results.
#[cfg(target_os = "linux")]
fn advise_huge_pages(data: &[f32]) {
    const HUGE: usize = 2 << 20;
    let bytes = std::mem::size_of_val(data);
    if bytes < 4 * HUGE {
        return;
    }
    let start = data.as_ptr() as usize;
    let first = start.next_multiple_of(HUGE);
    let end = (start + bytes) / HUGE * HUGE;
    if end > first {
        // SAFETY: [first, end) lies inside the allocation that `data` borrows, and
        // MADV_HUGEPAGE only changes how the kernel backs those pages, not their contents or
        // validity; the return value is ignored because the advice is optional.
        unsafe {
            libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages(_: &[f32]) {}
