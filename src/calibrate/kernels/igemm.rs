//! int8 GEMM, C (i32) = A (i8, m×k) · B (i8, k×n), row-major: the arithmetic of quantized
//! inference on CPUs.
//!
//! The loops and packing follow `sgemm` (same `pc`, `ic`, `jc`, `ir`, `jr` order), with `k` taken four at a
//! time: AVX-512 VNNI `vpdpbusd` multiplies 4 unsigned bytes by 4 signed bytes and adds the
//! four products into one i32 lane, so one instruction does 16 lanes × 4 = 64 multiply-adds
//! (128 OP). Its first operand is *unsigned*, so A is packed as `a + 128` (u8) and the excess
//! is removed at the end (the oneDNN "compensation" trick):
//!
//! ```text
//! Σ_p (a_ip + 128)·b_pj = Σ_p a_ip·b_pj + 128·Σ_p b_pj   ⇒   c_ij = acc_ij − 128·colsum_j
//! ```
//!
//! Sums cannot overflow i32: |(a+128)·b| ≤ 255·128, so for k ≤ 65,536 the accumulator stays
//! below 2^31. The portable kernel runs the same packed format in plain integer code.
//! OPs of one call: 2·m·n·k.
//!
//! Not yet: aarch64 SDOT (its intrinsics are unstable in Rust 1.95, see `Isa::best_int8`) and
//! Intel AMX (`tdpbssd`, 1024 int8 multiply-adds per instruction; its intrinsics are unstable
//! too, and Linux needs an `arch_prctl` permission request first). On an AMX CPU the measured
//! int8 figure is therefore the VNNI figure, well below what AMX-aware runtimes reach.

use super::Isa;

/// Register tile and cache blocking (k counted in elements, a multiple of 4).
const MR: usize = 14;
const NR: usize = 32;
const KC: usize = 1024;
/// Large, so A is packed once per k panel rather than once per B panel (see `sgemm`).
const MC: usize = MR * 150;
const NC: usize = 768;

/// Largest k for which the i32 accumulators cannot overflow.
pub const MAX_K: usize = 65_536;

/// Packing buffers reused across calls.
pub struct Workspace {
    isa: Isa,
    /// A block: [sliver][k group][row][4] as u8 (a + 128).
    a_pack: Vec<u8>,
    /// B panel: [sliver][k group][column][4] as i8.
    b_pack: Vec<i8>,
    /// Σ_p b_pj of the current B panel, per column (padded to whole slivers).
    colsum: Vec<i32>,
}

impl Workspace {
    /// A workspace for `isa`; anything but an available AVX-512 VNNI runs the portable kernel.
    pub fn new(isa: Isa) -> Self {
        let isa = if isa == Isa::Avx512Vnni && isa.available() {
            isa
        } else {
            Isa::Portable
        };
        Workspace {
            isa,
            a_pack: vec![0; MC * KC],
            b_pack: vec![0; KC * NC.div_ceil(NR) * NR],
            colsum: vec![0; NC.div_ceil(NR) * NR],
        }
    }

    pub fn isa(&self) -> Isa {
        self.isa
    }
}

/// C = A·B in exact integer arithmetic. Strides in elements, as in `sgemm::sgemm`. Panics on
/// slices too short for their shape or k > [`MAX_K`] (both caller bugs).
#[allow(clippy::too_many_arguments)]
pub fn igemm(
    m: usize,
    n: usize,
    k: usize,
    a: &[i8],
    lda: usize,
    b: &[i8],
    ldb: usize,
    c: &mut [i32],
    ldc: usize,
    ws: &mut Workspace,
) {
    assert!(k <= MAX_K, "k = {k} could overflow the i32 accumulators");
    assert!(
        lda >= k && ldb >= n && ldc >= n,
        "row strides shorter than rows"
    );
    super::check_gemm_shapes(m, n, k, a.len(), lda, b.len(), ldb, c.len(), ldc);
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        for i in 0..m {
            c[i * ldc..i * ldc + n].fill(0);
        }
        return;
    }
    let mut tile = [0i32; MR * NR];
    for pc in (0..k).step_by(KC) {
        let kc = KC.min(k - pc);
        let kg = kc.div_ceil(4);
        for ic in (0..m).step_by(MC) {
            let mc = MC.min(m - ic);
            pack_a(mc, kc, &a[ic * lda + pc..], lda, &mut ws.a_pack);
            for jc in (0..n).step_by(NC) {
                let nc = NC.min(n - jc);
                pack_b(
                    kc,
                    nc,
                    &b[pc * ldb + jc..],
                    ldb,
                    &mut ws.b_pack,
                    &mut ws.colsum,
                );
                for ir in (0..mc).step_by(MR) {
                    let rows = MR.min(mc - ir);
                    let a_sliver = &ws.a_pack[ir * kg * 4..(ir + MR) * kg * 4];
                    for jr in (0..nc).step_by(NR) {
                        let cols = NR.min(nc - jr);
                        let b_sliver = &ws.b_pack[jr * kg * 4..(jr + NR) * kg * 4];
                        let sums = &ws.colsum[jr..jr + NR];
                        let c0 = (ic + ir) * ldc + jc + jr;
                        if cols == NR {
                            let c_tile = &mut c[c0..c0 + (rows - 1) * ldc + NR];
                            micro(
                                ws.isa,
                                rows,
                                kg,
                                a_sliver,
                                b_sliver,
                                sums,
                                c_tile,
                                ldc,
                                pc > 0,
                            );
                        } else {
                            let t = &mut tile[..rows * NR];
                            micro(ws.isa, rows, kg, a_sliver, b_sliver, sums, t, NR, false);
                            for i in 0..rows {
                                let dst = &mut c[c0 + i * ldc..c0 + i * ldc + cols];
                                let src = &t[i * NR..i * NR + cols];
                                if pc > 0 {
                                    dst.iter_mut().zip(src).for_each(|(d, s)| *d += s);
                                } else {
                                    dst.copy_from_slice(src);
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Pack mc×kc of A as u8 (a + 128) into MR-row slivers of 4-byte k groups. Padding rows and the
/// k tail use a = 0 (byte 128); B's padding is 0, so they add nothing after compensation.
fn pack_a(mc: usize, kc: usize, a: &[i8], lda: usize, out: &mut [u8]) {
    let kg = kc.div_ceil(4);
    for (s, ir) in (0..mc).step_by(MR).enumerate() {
        let sliver = &mut out[s * MR * kg * 4..(s + 1) * MR * kg * 4];
        let rows = MR.min(mc - ir);
        for (g, group) in sliver.chunks_exact_mut(MR * 4).enumerate() {
            for (i, quad) in group.chunks_exact_mut(4).enumerate() {
                for (q, byte) in quad.iter_mut().enumerate() {
                    let p = g * 4 + q;
                    let v = if i < rows && p < kc {
                        a[(ir + i) * lda + p]
                    } else {
                        0
                    };
                    *byte = (i16::from(v) + 128) as u8;
                }
            }
        }
    }
}

/// Pack kc×nc of B into NR-column slivers of 4-byte k groups (zero padded) and sum each column.
fn pack_b(kc: usize, nc: usize, b: &[i8], ldb: usize, out: &mut [i8], colsum: &mut [i32]) {
    let kg = kc.div_ceil(4);
    let slivers = nc.div_ceil(NR);
    colsum[..slivers * NR].fill(0);
    for s in 0..slivers {
        let sliver = &mut out[s * NR * kg * 4..(s + 1) * NR * kg * 4];
        let j0 = s * NR;
        let cols = NR.min(nc - j0);
        for (g, group) in sliver.chunks_exact_mut(NR * 4).enumerate() {
            for (j, quad) in group.chunks_exact_mut(4).enumerate() {
                for (q, byte) in quad.iter_mut().enumerate() {
                    let p = g * 4 + q;
                    *byte = if j < cols && p < kc {
                        b[p * ldb + j0 + j]
                    } else {
                        0
                    };
                    colsum[j0 + j] += i32::from(*byte);
                }
            }
        }
    }
}

/// One tile: c[i·ldc + j] (+)= Σ_g Σ_q a_u8[g][i][q]·b[g][j][q] − 128·colsum[j].
#[allow(clippy::too_many_arguments)]
fn micro(
    isa: Isa,
    rows: usize,
    kg: usize,
    a: &[u8],
    b: &[i8],
    colsum: &[i32],
    c: &mut [i32],
    ldc: usize,
    accumulate: bool,
) {
    assert!((1..=MR).contains(&rows));
    assert!(a.len() >= kg * MR * 4 && b.len() >= kg * NR * 4 && colsum.len() >= NR);
    assert!(c.len() >= (rows - 1) * ldc + NR);
    match isa {
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512Vnni => {
            // SAFETY: the workspace selects VNNI only when the CPU reports avx512f, avx512bw and
            // avx512vnni; every length the kernel relies on was asserted just above.
            unsafe {
                x86::dispatch(
                    rows,
                    kg,
                    a.as_ptr(),
                    b.as_ptr(),
                    colsum.as_ptr(),
                    c.as_mut_ptr(),
                    ldc,
                    accumulate,
                )
            }
        }
        _ => portable(rows, kg, a, b, colsum, c, ldc, accumulate),
    }
}

#[allow(clippy::too_many_arguments)]
fn portable(
    rows: usize,
    kg: usize,
    a: &[u8],
    b: &[i8],
    colsum: &[i32],
    c: &mut [i32],
    ldc: usize,
    accumulate: bool,
) {
    let mut acc = [[0i32; NR]; MR];
    for g in 0..kg {
        let ag = &a[g * MR * 4..(g + 1) * MR * 4];
        let bg = &b[g * NR * 4..(g + 1) * NR * 4];
        for (i, row) in acc.iter_mut().enumerate().take(rows) {
            let ai = &ag[i * 4..i * 4 + 4];
            for (j, v) in row.iter_mut().enumerate() {
                let bj = &bg[j * 4..j * 4 + 4];
                for q in 0..4 {
                    *v += i32::from(ai[q]) * i32::from(bj[q]);
                }
            }
        }
    }
    for (i, row) in acc.iter().enumerate().take(rows) {
        for j in 0..NR {
            let v = row[j] - 128 * colsum[j];
            let d = &mut c[i * ldc + j];
            *d = if accumulate { *d + v } else { v };
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{MR, NR};
    use std::arch::x86_64::*;

    /// # Safety
    /// The CPU has avx512f, avx512bw, avx512vnni; `a` holds kg·MR·4 bytes, `b` kg·NR·4,
    /// `colsum` NR, and `c` (rows−1)·ldc + NR.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn dispatch(
        rows: usize,
        kg: usize,
        a: *const u8,
        b: *const i8,
        s: *const i32,
        c: *mut i32,
        ldc: usize,
        acc: bool,
    ) {
        // SAFETY: forwarded from this function's contract.
        unsafe {
            super::super::by_rows!(
                rows,
                k,
                [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13; 14],
                (kg, a, b, s, c, ldc, acc)
            )
        }
    }

    /// R×32 i32 tile in 2·R zmm: per k group, 2 loads of B (32 columns × 4 bytes), R broadcasts
    /// of one 4-byte word of A, 2·R `vpdpbusd`.
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    unsafe fn k<const R: usize>(
        kg: usize,
        a: *const u8,
        b: *const i8,
        s: *const i32,
        c: *mut i32,
        ldc: usize,
        accumulate: bool,
    ) {
        let mut lo = [_mm512_setzero_si512(); R];
        let mut hi = [_mm512_setzero_si512(); R];
        // SAFETY: g < kg keeps reads inside a[..kg·MR·4] and b[..kg·NR·4]; row i < R and
        // columns 0..32 keep writes inside c[..(R−1)·ldc + 32] (this function's contract).
        unsafe {
            for i in 0..R {
                _mm_prefetch::<_MM_HINT_T0>(c.add(i * ldc).cast());
                _mm_prefetch::<_MM_HINT_T0>(c.add(i * ldc + 16).cast());
            }
            for g in 0..kg {
                let bg = b.add(g * NR * 4);
                let b0 = _mm512_loadu_si512(bg.cast());
                let b1 = _mm512_loadu_si512(bg.add(64).cast());
                let ag = a.add(g * MR * 4);
                for i in 0..R {
                    let word = i32::from_le_bytes(ag.add(i * 4).cast::<[u8; 4]>().read_unaligned());
                    let ai = _mm512_set1_epi32(word);
                    lo[i] = _mm512_dpbusd_epi32(lo[i], ai, b0);
                    hi[i] = _mm512_dpbusd_epi32(hi[i], ai, b1);
                }
            }
            let k128 = _mm512_set1_epi32(128);
            let s0 = _mm512_mullo_epi32(_mm512_loadu_si512(s.cast()), k128);
            let s1 = _mm512_mullo_epi32(_mm512_loadu_si512(s.add(16).cast()), k128);
            for i in 0..R {
                let ci = c.add(i * ldc);
                let mut v0 = _mm512_sub_epi32(lo[i], s0);
                let mut v1 = _mm512_sub_epi32(hi[i], s1);
                if accumulate {
                    v0 = _mm512_add_epi32(v0, _mm512_loadu_si512(ci.cast()));
                    v1 = _mm512_add_epi32(v1, _mm512_loadu_si512(ci.add(16).cast()));
                }
                _mm512_storeu_si512(ci.cast(), v0);
                _mm512_storeu_si512(ci.add(16).cast(), v1);
            }
        }
    }
}

/// The reference: one exact i64 dot product.
pub fn reference_entry(
    k: usize,
    a: &[i8],
    lda: usize,
    b: &[i8],
    ldb: usize,
    i: usize,
    j: usize,
) -> i64 {
    (0..k)
        .map(|p| i64::from(a[i * lda + p]) * i64::from(b[p * ldb + j]))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(isa: Isa, m: usize, n: usize, k: usize) {
        // Cover the extremes −128 and 127, where an off-by-128 or a saturating add would show.
        let a: Vec<i8> = (0..m * k)
            .map(|x| ((x * 37 + 11) % 256) as u8 as i8)
            .collect();
        let b: Vec<i8> = (0..k * n)
            .map(|x| ((x * 53 + 7) % 256) as u8 as i8)
            .collect();
        let mut c = vec![i32::MIN; m * n];
        let mut ws = Workspace::new(isa);
        igemm(m, n, k, &a, k, &b, n, &mut c, n, &mut ws);
        for i in 0..m {
            for j in 0..n {
                let r = reference_entry(k, &a, k, &b, n, i, j);
                assert_eq!(i64::from(c[i * n + j]), r, "{isa} {m}x{n}x{k} at ({i},{j})");
            }
        }
    }

    #[test]
    fn every_isa_matches_the_reference_exactly_on_odd_shapes() {
        for isa in [Isa::Portable, Isa::Avx512Vnni] {
            if !isa.available() {
                continue;
            }
            for (m, n, k) in [
                (17, 33, 65),
                (1, 1000, 7),
                (1, 1, 1),
                (15, 31, 1030),
                (29, 65, 3),
                (3, 7, 0),
                (2, 800, 2051),
            ] {
                check(isa, m, n, k);
            }
        }
    }

    #[test]
    fn extreme_values_do_not_saturate() {
        let k = 4096;
        let a = vec![-128i8; k];
        let b = vec![-128i8; k * 32];
        let mut c = vec![0i32; 32];
        for isa in [Isa::Portable, Isa::Avx512Vnni] {
            if isa.available() {
                igemm(
                    1,
                    32,
                    k,
                    &a,
                    k,
                    &b,
                    32,
                    &mut c,
                    32,
                    &mut Workspace::new(isa),
                );
                assert!(c.iter().all(|&v| i64::from(v) == 16384 * k as i64), "{isa}");
            }
        }
    }
}
