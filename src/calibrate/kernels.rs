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

/// One 64-byte cache line of f32, so buffers built from it start on a line (AVX-512 aligned
/// loads, non-temporal stores) without an allocator API.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line([f32; 16]);

/// A zero-initialised f32 buffer aligned to 64 bytes. Zeroing writes every page, so the
/// thread that creates it owns its pages (first touch), which is what NUMA placement needs.
pub struct AlignedBuf {
    lines: Vec<Line>,
    len: usize,
}

impl AlignedBuf {
    pub fn new(len: usize) -> Self {
        AlignedBuf {
            lines: vec![Line([0.0; 16]); len.div_ceil(16)],
            len,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn as_slice(&self) -> &[f32] {
        // SAFETY: `Line` is `repr(C)` over `[f32; 16]` with no padding (64 B = 16 × 4 B), so
        // `lines` is `16 × lines.len()` contiguous initialised f32, and `len` never exceeds that.
        unsafe { std::slice::from_raw_parts(self.lines.as_ptr().cast::<f32>(), self.len) }
    }

    pub fn as_mut_slice(&mut self) -> &mut [f32] {
        // SAFETY: as in `as_slice`; the unique borrow of `self` makes the slice unique.
        unsafe { std::slice::from_raw_parts_mut(self.lines.as_mut_ptr().cast::<f32>(), self.len) }
    }
}
