//! Register-only loops: the measured compute ceiling of one core.
//!
//! Each loop keeps `CHAINS` independent accumulators in vector registers and updates each with
//! one fused multiply-add per step, `x ← x·m + a`, never touching memory. With at least
//! (FMA latency × FMA pipes) chains in flight (4 cycles × 2 pipes = 8 on recent x86 and
//! Neoverse cores; we use 12, which also fits the 16 registers of AVX2 and leaves room for the
//! two constants), the loop runs at the issue rate of the FMA
//! pipes, so
//!
//! ```text
//! ceiling [FLOP/s] = CHAINS · lanes · 2 [FLOP/FMA] · steps / t
//! ```
//!
//! The multiplier `m` and addend `a` come through `black_box`, so the compiler can neither fold
//! nor drop the chain; `m = 0.5` makes each chain converge to the normal number `2a`, so no
//! denormal slows a step. The int8 loop does the same with `vpdpbusd` (AVX-512 VNNI):
//! 16 lanes × 4 byte products = 64 multiply-adds = 128 OP per instruction.

use std::hint::black_box;

use super::Isa;

/// Independent accumulator chains per loop.
pub const CHAINS: usize = 12;

/// The fixed point each f32 chain reaches, `a / (1 − m)`, for the check.
pub const F32_ADDEND: f32 = 0.75;
pub const F32_MULTIPLIER: f32 = 0.5;

/// Run `steps` FMA steps on every chain; returns the lane-0 values of the chains, for the check.
/// FLOPs done: `CHAINS · isa.f32_lanes() · 2 · steps`.
pub fn fma_loop(isa: Isa, steps: u64) -> [f32; CHAINS] {
    let m = black_box(F32_MULTIPLIER);
    let a = black_box(F32_ADDEND);
    match isa {
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512 | Isa::Avx512Vnni if Isa::Avx512.available() => {
            // SAFETY: avx512f is present (checked in the guard).
            unsafe { x86::fma512(steps, m, a) }
        }
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2Fma if isa.available() => {
            // SAFETY: avx2 and fma are present (checked in the guard).
            unsafe { x86::fma256(steps, m, a) }
        }
        #[cfg(target_arch = "aarch64")]
        Isa::Neon if isa.available() => {
            // SAFETY: neon is present (checked in the guard).
            unsafe { arm::fma128(steps, m, a) }
        }
        _ => portable(steps, m, a),
    }
}

/// The reference: the same recurrence in scalar `mul_add`, which rounds exactly like a vector
/// FMA lane, so the results must agree bit for bit.
pub fn fma_reference(steps: u64) -> [f32; CHAINS] {
    let mut x = [0.0f32; CHAINS];
    for (c, v) in x.iter_mut().enumerate() {
        *v = c as f32;
    }
    for _ in 0..steps {
        for v in x.iter_mut() {
            *v = v.mul_add(F32_MULTIPLIER, F32_ADDEND);
        }
    }
    x
}

fn portable(steps: u64, m: f32, a: f32) -> [f32; CHAINS] {
    let mut x = [0.0f32; CHAINS];
    for (c, v) in x.iter_mut().enumerate() {
        *v = c as f32;
    }
    for _ in 0..steps {
        for v in x.iter_mut() {
            *v = v.mul_add(m, a);
        }
    }
    x
}

/// Run `steps` VNNI steps on every chain: each lane adds Σ_{q<4} u·s with u = 1 (u8) and
/// s = `black_box(1)` (i8), so each lane of chain c ends at c + 4·steps, exactly.
/// OPs done: `CHAINS · 64 · 2 · steps`. `None` if the CPU lacks AVX-512 VNNI.
pub fn vnni_loop(steps: u64) -> Option<[i32; CHAINS]> {
    #[cfg(target_arch = "x86_64")]
    if Isa::Avx512Vnni.available() {
        let s = black_box(1i8);
        // SAFETY: avx512f, avx512bw and avx512vnni are present (checked just above).
        return Some(unsafe { x86::vnni512(steps, s) });
    }
    let _ = steps;
    None
}

/// What every lane of VNNI chain `c` must hold after `steps` steps.
pub fn vnni_reference(steps: u64) -> [i32; CHAINS] {
    let mut x = [0i32; CHAINS];
    for (c, v) in x.iter_mut().enumerate() {
        *v = (c as i64 + 4 * steps as i64) as i32;
    }
    x
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::CHAINS;
    use std::arch::x86_64::*;

    /// # Safety
    /// The CPU has avx512f.
    #[target_feature(enable = "avx512f")]
    pub unsafe fn fma512(steps: u64, m: f32, a: f32) -> [f32; CHAINS] {
        let (vm, va) = (_mm512_set1_ps(m), _mm512_set1_ps(a));
        let mut x: [__m512; CHAINS] = std::array::from_fn(|c| _mm512_set1_ps(c as f32));
        for _ in 0..steps {
            for v in x.iter_mut() {
                *v = _mm512_fmadd_ps(*v, vm, va);
            }
        }
        std::array::from_fn(|c| _mm512_cvtss_f32(x[c]))
    }

    /// # Safety
    /// The CPU has avx2 and fma.
    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn fma256(steps: u64, m: f32, a: f32) -> [f32; CHAINS] {
        let (vm, va) = (_mm256_set1_ps(m), _mm256_set1_ps(a));
        let mut x: [__m256; CHAINS] = std::array::from_fn(|c| _mm256_set1_ps(c as f32));
        for _ in 0..steps {
            for v in x.iter_mut() {
                *v = _mm256_fmadd_ps(*v, vm, va);
            }
        }
        std::array::from_fn(|c| _mm256_cvtss_f32(x[c]))
    }

    /// # Safety
    /// The CPU has avx512f, avx512bw and avx512vnni.
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    pub unsafe fn vnni512(steps: u64, s: i8) -> [i32; CHAINS] {
        let u = _mm512_set1_epi8(1);
        let w = _mm512_set1_epi8(s);
        let mut x: [__m512i; CHAINS] = std::array::from_fn(|c| _mm512_set1_epi32(c as i32));
        for _ in 0..steps {
            for v in x.iter_mut() {
                *v = _mm512_dpbusd_epi32(*v, u, w);
            }
        }
        std::array::from_fn(|c| _mm_cvtsi128_si32(_mm512_castsi512_si128(x[c])))
    }
}

#[cfg(target_arch = "aarch64")]
mod arm {
    use super::CHAINS;
    use std::arch::aarch64::*;

    /// # Safety
    /// The CPU has neon.
    #[target_feature(enable = "neon")]
    pub unsafe fn fma128(steps: u64, m: f32, a: f32) -> [f32; CHAINS] {
        // Register-only NEON intrinsics are safe functions in recent Rust and `unsafe fn` in
        // older releases; the block compiles either way (the lint covers the newer case).
        // SAFETY: no memory is touched; the caller guarantees neon.
        #[allow(unused_unsafe)]
        unsafe {
            let (vm, va) = (vdupq_n_f32(m), vdupq_n_f32(a));
            let mut x: [float32x4_t; CHAINS] = [vdupq_n_f32(0.0); CHAINS];
            for (c, v) in x.iter_mut().enumerate() {
                *v = vdupq_n_f32(c as f32);
            }
            for _ in 0..steps {
                for v in x.iter_mut() {
                    *v = vfmaq_f32(va, *v, vm);
                }
            }
            let mut out = [0.0f32; CHAINS];
            for (o, v) in out.iter_mut().zip(x) {
                *o = vgetq_lane_f32::<0>(v);
            }
            out
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fma_loops_agree_with_the_scalar_reference_bit_for_bit() {
        for isa in [Isa::Portable, Isa::Avx2Fma, Isa::Avx512, Isa::Neon] {
            if isa.available() {
                for steps in [0, 1, 3, 1000] {
                    assert_eq!(fma_loop(isa, steps), fma_reference(steps), "{isa} {steps}");
                }
            }
        }
    }

    #[test]
    fn vnni_loop_counts_exactly() {
        if let Some(got) = vnni_loop(1000) {
            assert_eq!(got, vnni_reference(1000));
        }
    }
}
