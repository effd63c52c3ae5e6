//! f32 GEMM, C = A·B with row-major A (m×k), B (k×n), C (m×n), written the BLIS way so that it
//! runs near the speed of the best BLAS on the CPU (Goto & van de Geijn, "Anatomy of
//! High-Performance Matrix Multiplication", ACM TOMS 34(3), 2008; Van Zee & van de Geijn, BLIS).
//!
//! Loops, outer to inner (`pc`, `ic`, `jc`, `ir`, `jr`):
//!
//! ```text
//! for pc in k by KC:
//!   for ic in m by MC:               A block mc×kc packed once per (pc, ic): lives in L3
//!     pack A[ic.., pc..] into MR-tall slivers, k-major
//!     for jc in n by NC:             B panel kc×nc packed once per (pc, jc) when m ≤ MC
//!       pack B[pc.., jc..] into NR-wide slivers, k-major: lives in L2
//!       for ir in mc by MR:          one A sliver MR×kc: stays in L1 across the jr loop
//!         for jr in nc by NR:        micro-kernel: C[MR×NR] (+)= A sliver · B sliver
//! ```
//!
//! The `ir`-outer order keeps the small A sliver (14×256×4 B = 14 KiB) in L1 and streams B
//! slivers from an L2-sized panel. The textbook BLIS order (`jr` outer) keeps a B sliver in L1
//! instead, but with NR = 32 that sliver is 32 KiB and shares a 48 KiB L1 with the streaming A
//! sliver; on Sapphire Rapids it measured ~10% slower at n = 2048. With an L2-sized B panel
//! (NC = 768), BLIS's `jc`-outermost order would pack A n/NC times; a large MC with `ic`
//! outside `jc` packs each part of A and of B once, which took packing from ~19% of a
//! 2048³ GEMM to a few per cent.
//!
//! The micro-kernel keeps an MR×NR tile of C in vector registers: each step `p` of `k` loads NR
//! values of B (NR / lanes vectors) and broadcasts MR values of A, then issues MR·NR/lanes FMAs.
//! AVX-512 uses 14×32 (28 accumulators of the 32 zmm registers), AVX2 6×16, NEON 8×12. Panels
//! are zero-padded, so the kernel always runs whole steps; edge tiles narrower than NR go
//! through a small buffer, and shorter ones use a kernel compiled for that many rows.
//!
//! FLOPs of one call: 2·m·n·k (one multiply and one add per term).

use super::{AlignedBuf, Isa};

/// Register and cache blocking of one ISA.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Blocking {
    /// Rows of the C tile held in registers.
    pub mr: usize,
    /// Columns of the C tile held in registers (a multiple of the vector lanes).
    pub nr: usize,
    /// Depth of one packed panel: an A sliver (mr·kc·4 bytes) sits in L1.
    pub kc: usize,
    /// Rows of one packed A block (mc·kc·4 bytes, ~4 MiB, in L3): large, so that A is packed
    /// once rather than once per B panel.
    pub mc: usize,
    /// Columns of one packed B panel: kc·nc·4 bytes should sit in L2.
    pub nc: usize,
}

impl Blocking {
    /// Blocking for an ISA, sized for ≥ 32 KiB L1d and ≥ 1 MiB L2 per core (Neoverse N1:
    /// 64 KiB / 1 MiB; Sapphire Rapids: 48 KiB / 2 MiB; most laptops: 32–48 KiB / 1–2 MiB).
    pub fn for_isa(isa: Isa) -> Blocking {
        match isa {
            Isa::Avx512 | Isa::Avx512Vnni => Blocking {
                mr: 14,
                nr: 32,
                kc: 256,
                mc: 14 * 300,
                nc: 768,
            },
            Isa::Avx2Fma => Blocking {
                mr: 6,
                nr: 16,
                kc: 256,
                mc: 6 * 700,
                nc: 768,
            },
            Isa::Neon => Blocking {
                mr: 8,
                nr: 12,
                kc: 256,
                mc: 8 * 525,
                nc: 768,
            },
            Isa::Portable => Blocking {
                mr: 4,
                nr: 8,
                kc: 256,
                mc: 4 * 1050,
                nc: 768,
            },
        }
    }
}

/// Packing buffers reused across calls, so a timed loop does not allocate.
pub struct Workspace {
    isa: Isa,
    blocking: Blocking,
    a_pack: AlignedBuf,
    b_pack: AlignedBuf,
}

impl Workspace {
    /// A workspace for `isa` with its default blocking. Falls back to portable code if the CPU
    /// lacks the ISA, so a caller can never run an instruction the CPU does not have.
    pub fn new(isa: Isa) -> Self {
        let isa = if isa.available() && isa != Isa::Avx512Vnni {
            isa
        } else if isa == Isa::Avx512Vnni && Isa::Avx512.available() {
            Isa::Avx512
        } else {
            Isa::Portable
        };
        Self::with_blocking(isa, Blocking::for_isa(isa))
    }

    /// A workspace with an explicit blocking (for tuning); `nr` and `mr` must be the ISA's.
    pub fn with_blocking(isa: Isa, blocking: Blocking) -> Self {
        assert_eq!(
            (blocking.mr, blocking.nr),
            {
                let d = Blocking::for_isa(isa);
                (d.mr, d.nr)
            },
            "the micro-kernel of {isa} has a fixed register tile"
        );
        Workspace {
            isa,
            blocking,
            a_pack: AlignedBuf::new(blocking.mc * blocking.kc),
            b_pack: AlignedBuf::new(blocking.kc * blocking.nc.div_ceil(blocking.nr) * blocking.nr),
        }
    }

    pub fn isa(&self) -> Isa {
        self.isa
    }
}

/// C = A·B. `a` is m×k with row stride `lda`, `b` is k×n with row stride `ldb`, `c` is m×n with
/// row stride `ldc` (all in elements). Panics if a slice is too short for its shape, since that
/// is a bug in the caller, never a property of the input.
#[allow(clippy::too_many_arguments)]
pub fn sgemm(
    m: usize,
    n: usize,
    k: usize,
    a: &[f32],
    lda: usize,
    b: &[f32],
    ldb: usize,
    c: &mut [f32],
    ldc: usize,
    ws: &mut Workspace,
) {
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
            c[i * ldc..i * ldc + n].fill(0.0);
        }
        return;
    }
    if m <= SMALL_M {
        small_m(ws.isa, m, n, k, a, lda, b, ldb, c, ldc);
        return;
    }
    let bl = ws.blocking;
    let (mr, nr) = (bl.mr, bl.nr);
    let isa = ws.isa;
    let mut tile = [0.0f32; 14 * 32];
    for pc in (0..k).step_by(bl.kc) {
        let kc = bl.kc.min(k - pc);
        for ic in (0..m).step_by(bl.mc) {
            let mc = bl.mc.min(m - ic);
            pack_a(
                mc,
                kc,
                mr,
                &a[ic * lda + pc..],
                lda,
                ws.a_pack.as_mut_slice(),
            );
            for jc in (0..n).step_by(bl.nc) {
                let nc = bl.nc.min(n - jc);
                pack_b(
                    isa,
                    kc,
                    nc,
                    nr,
                    &b[pc * ldb + jc..],
                    ldb,
                    ws.b_pack.as_mut_slice(),
                );
                let a_pack = ws.a_pack.as_slice();
                let b_pack = ws.b_pack.as_slice();
                for ir in (0..mc).step_by(mr) {
                    let rows = mr.min(mc - ir);
                    let a_sliver = &a_pack[ir * kc..(ir + mr) * kc];
                    for jr in (0..nc).step_by(nr) {
                        let cols = nr.min(nc - jr);
                        let b_sliver = &b_pack[jr * kc..(jr + nr) * kc];
                        let c0 = (ic + ir) * ldc + jc + jr;
                        if cols == nr {
                            // Whole-width tile: the kernel writes C directly. The last row it
                            // touches ends at c0 + (rows-1)·ldc + nr ≤ c.len() (checked above).
                            let c_tile = &mut c[c0..c0 + (rows - 1) * ldc + nr];
                            micro(isa, rows, kc, a_sliver, b_sliver, c_tile, ldc, pc > 0);
                        } else {
                            let t = &mut tile[..rows * nr];
                            micro(isa, rows, kc, a_sliver, b_sliver, t, nr, false);
                            for i in 0..rows {
                                let dst = &mut c[c0 + i * ldc..c0 + i * ldc + cols];
                                let src = &t[i * nr..i * nr + cols];
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

/// Up to this many rows of A, `small_m` runs instead of the packed path.
pub const SMALL_M: usize = 8;

/// Rows of B streamed side by side by [`small_m`].
const STRIPE: usize = 8;
/// Columns of C updated per pass of [`small_m`] (4 KiB of f32: 8 such B segments stay in L1).
const SEGMENT: usize = 1024;

/// C = A·B for a few rows of A: the decode and embedding shape, bound by reading B once.
///
/// Packing B would read it from memory, write it, and read it again for a GEMM that uses each
/// element of B only m times. Instead B is streamed as it lies: a stripe of 8 rows at a time,
/// left to right (8 sequential streams the hardware prefetchers follow), and each row of C is
/// updated with `c_i += Σ_q a_{i,p+q}·b_{p+q}` over 1024-column segments that stay in L1.
/// Per element of B this costs m FMAs, so the loop runs at memory speed for m ≤ 8.
#[allow(clippy::too_many_arguments)]
fn small_m(
    isa: Isa,
    m: usize,
    n: usize,
    k: usize,
    a: &[f32],
    lda: usize,
    b: &[f32],
    ldb: usize,
    c: &mut [f32],
    ldc: usize,
) {
    for i in 0..m {
        c[i * ldc..i * ldc + n].fill(0.0);
    }
    for p0 in (0..k).step_by(STRIPE) {
        let rows = STRIPE.min(k - p0);
        for j0 in (0..n).step_by(SEGMENT) {
            let w = SEGMENT.min(n - j0);
            let seg: [&[f32]; STRIPE] = std::array::from_fn(|q| {
                if q < rows {
                    &b[(p0 + q) * ldb + j0..(p0 + q) * ldb + j0 + w]
                } else {
                    &[]
                }
            });
            for i in 0..m {
                let coef: [f32; STRIPE] =
                    std::array::from_fn(|q| if q < rows { a[i * lda + p0 + q] } else { 0.0 });
                let y = &mut c[i * ldc + j0..i * ldc + j0 + w];
                axpy_stripe(isa, y, &coef, &seg, rows);
            }
        }
    }
}

/// y += Σ_{q<rows} coef[q]·seg[q], elementwise.
fn axpy_stripe(isa: Isa, y: &mut [f32], coef: &[f32; STRIPE], seg: &[&[f32]; STRIPE], rows: usize) {
    match isa {
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512 | Isa::Avx512Vnni if rows == STRIPE => {
            // SAFETY: the workspace only selects AVX-512 when the CPU has avx512f.
            unsafe { x86::axpy8_avx512(y, coef, seg) }
        }
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2Fma if rows == STRIPE => {
            // SAFETY: selected only when avx2 and fma are present.
            unsafe { x86::axpy8_avx2(y, coef, seg) }
        }
        _ => {
            for q in 0..rows {
                for (v, x) in y.iter_mut().zip(seg[q]) {
                    *v += coef[q] * x;
                }
            }
        }
    }
}

/// The whole-stripe update, written once and compiled per ISA by the callers below: with
/// the target feature on, the compiler vectorises it and turns `mul_add` into FMA.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn axpy8_body(y: &mut [f32], coef: &[f32; STRIPE], seg: &[&[f32]; STRIPE]) {
    let w = y.len();
    let s: [&[f32]; STRIPE] = std::array::from_fn(|q| &seg[q][..w]);
    for j in 0..w {
        let mut v = y[j];
        for q in 0..STRIPE {
            v = coef[q].mul_add(s[q][j], v);
        }
        y[j] = v;
    }
}

/// Pack `mc` rows × `kc` columns of A into MR-tall slivers, k-major (`[sliver][p][i]`), zero
/// padding the last sliver so the micro-kernel never reads past real rows into garbage.
fn pack_a(mc: usize, kc: usize, mr: usize, a: &[f32], lda: usize, out: &mut [f32]) {
    for (s, ir) in (0..mc).step_by(mr).enumerate() {
        let sliver = &mut out[s * mr * kc..(s + 1) * mr * kc];
        let rows = mr.min(mc - ir);
        // Write the sliver front to back (one k step of MR values at a time) and read the MR
        // rows of A side by side: the writes stay sequential, which is what the store buffer
        // wants; the reads are MR sequential streams.
        for (p, dst) in sliver.chunks_exact_mut(mr).enumerate() {
            for (i, d) in dst.iter_mut().enumerate() {
                *d = if i < rows { a[(ir + i) * lda + p] } else { 0.0 };
            }
        }
    }
}

/// Pack `kc` rows × `nc` columns of B into NR-wide slivers, k-major (`[sliver][p][j]`). Rows of
/// B are read front to back, so a skinny GEMM streams B from memory in order.
fn pack_b(isa: Isa, kc: usize, nc: usize, nr: usize, b: &[f32], ldb: usize, out: &mut [f32]) {
    // A fixed NR lets the compiler copy a sliver row with a few vector moves instead of a
    // `memcpy` call per 32 floats, which dominated skinny (m = 1) GEMMs; compiled for
    // AVX-512, each 32-float row is two zmm moves.
    match (isa, nr) {
        #[cfg(target_arch = "x86_64")]
        (Isa::Avx512 | Isa::Avx512Vnni, 32) => {
            // SAFETY: the workspace selects AVX-512 only when the CPU has avx512f.
            unsafe { x86::pack_b32_avx512(kc, nc, b, ldb, out) }
        }
        (_, 32) => pack_b_n::<32>(kc, nc, b, ldb, out),
        (_, 16) => pack_b_n::<16>(kc, nc, b, ldb, out),
        (_, 12) => pack_b_n::<12>(kc, nc, b, ldb, out),
        _ => pack_b_n::<8>(kc, nc, b, ldb, out),
    }
}

#[inline(always)]
fn pack_b_n<const NR: usize>(kc: usize, nc: usize, b: &[f32], ldb: usize, out: &mut [f32]) {
    let whole = nc / NR;
    for p in 0..kc {
        let row = &b[p * ldb..p * ldb + nc];
        for (s, src) in row.chunks_exact(NR).enumerate() {
            let at = s * NR * kc + p * NR;
            let dst: &mut [f32; NR] = (&mut out[at..at + NR]).try_into().expect("NR floats");
            let src: &[f32; NR] = src.try_into().expect("NR floats");
            *dst = *src;
        }
        let cols = nc - whole * NR;
        if cols > 0 {
            let at = whole * NR * kc + p * NR;
            out[at..at + cols].copy_from_slice(&row[whole * NR..]);
            out[at + cols..at + NR].fill(0.0);
        }
    }
}

/// Run the micro-kernel of `isa` on one tile: `c[i·ldc + j] (+)= Σ_p a[p·MR + i]·b[p·NR + j]` for
/// i < rows, j < NR. The slices were cut to exactly the sliver and tile sizes, which is what
/// makes the pointer arithmetic inside the kernels sound.
#[allow(clippy::too_many_arguments)]
fn micro(
    isa: Isa,
    rows: usize,
    kc: usize,
    a: &[f32],
    b: &[f32],
    c: &mut [f32],
    ldc: usize,
    accumulate: bool,
) {
    let bl = Blocking::for_isa(isa);
    assert!((1..=bl.mr).contains(&rows));
    assert!(a.len() >= kc * bl.mr && b.len() >= kc * bl.nr);
    assert!(c.len() >= (rows - 1) * ldc + bl.nr);
    match isa {
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512 | Isa::Avx512Vnni => {
            // SAFETY: the workspace only selects AVX-512 when the CPU reports avx512f; lengths
            // were checked just above against the 14×32 tile the kernel touches.
            unsafe {
                x86::dispatch_avx512(
                    rows,
                    kc,
                    a.as_ptr(),
                    b.as_ptr(),
                    c.as_mut_ptr(),
                    ldc,
                    accumulate,
                )
            }
        }
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2Fma => {
            // SAFETY: selected only when avx2 and fma are reported; lengths checked above.
            unsafe {
                x86::dispatch_avx2(
                    rows,
                    kc,
                    a.as_ptr(),
                    b.as_ptr(),
                    c.as_mut_ptr(),
                    ldc,
                    accumulate,
                )
            }
        }
        #[cfg(target_arch = "aarch64")]
        Isa::Neon => {
            // SAFETY: selected only when neon is reported; lengths checked above.
            unsafe {
                arm::dispatch_neon(
                    rows,
                    kc,
                    a.as_ptr(),
                    b.as_ptr(),
                    c.as_mut_ptr(),
                    ldc,
                    accumulate,
                )
            }
        }
        _ => portable(rows, kc, a, b, c, ldc, accumulate),
    }
}

/// The portable micro-kernel, 4×8: plain loops the compiler may vectorise.
fn portable(
    rows: usize,
    kc: usize,
    a: &[f32],
    b: &[f32],
    c: &mut [f32],
    ldc: usize,
    accumulate: bool,
) {
    const MR: usize = 4;
    const NR: usize = 8;
    let mut acc = [[0.0f32; NR]; MR];
    for p in 0..kc {
        let bp = &b[p * NR..p * NR + NR];
        for i in 0..MR {
            let ai = a[p * MR + i];
            for j in 0..NR {
                acc[i][j] = ai.mul_add(bp[j], acc[i][j]);
            }
        }
    }
    for (i, row) in acc.iter().enumerate().take(rows) {
        let dst = &mut c[i * ldc..i * ldc + NR];
        for j in 0..NR {
            dst[j] = if accumulate { dst[j] + row[j] } else { row[j] };
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{STRIPE, axpy8_body, pack_b_n};
    use std::arch::x86_64::*;

    /// # Safety
    /// The CPU has avx512f.
    #[target_feature(enable = "avx512f")]
    pub unsafe fn pack_b32_avx512(kc: usize, nc: usize, b: &[f32], ldb: usize, out: &mut [f32]) {
        pack_b_n::<32>(kc, nc, b, ldb, out)
    }

    /// # Safety
    /// The CPU has avx512f.
    #[target_feature(enable = "avx512f,fma")]
    pub unsafe fn axpy8_avx512(y: &mut [f32], coef: &[f32; STRIPE], seg: &[&[f32]; STRIPE]) {
        axpy8_body(y, coef, seg)
    }

    /// # Safety
    /// The CPU has avx2 and fma.
    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn axpy8_avx2(y: &mut [f32], coef: &[f32; STRIPE], seg: &[&[f32]; STRIPE]) {
        axpy8_body(y, coef, seg)
    }

    /// Pick the AVX-512 kernel compiled for `rows` rows, so a short edge tile (or a GEMV with
    /// m = 1) does not pay for 14 rows of FMAs.
    ///
    /// # Safety
    /// The CPU has avx512f; `a` holds kc·14 f32, `b` kc·32, and `c` (rows-1)·ldc + 32.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn dispatch_avx512(
        rows: usize,
        kc: usize,
        a: *const f32,
        b: *const f32,
        c: *mut f32,
        ldc: usize,
        acc: bool,
    ) {
        // SAFETY: forwarded from this function's contract.
        unsafe {
            super::super::by_rows!(
                rows,
                k512,
                [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13; 14],
                (kc, a, b, c, ldc, acc)
            )
        }
    }

    /// R×32 tile: 2·R zmm accumulators; per step 2 loads of B, R broadcasts of A (folded into
    /// the FMA as an embedded broadcast), 2·R FMAs.
    #[target_feature(enable = "avx512f")]
    unsafe fn k512<const R: usize>(
        kc: usize,
        a: *const f32,
        b: *const f32,
        c: *mut f32,
        ldc: usize,
        accumulate: bool,
    ) {
        const MR: usize = 14;
        const NR: usize = 32;
        let mut lo = [_mm512_setzero_ps(); R];
        let mut hi = [_mm512_setzero_ps(); R];
        // SAFETY: p < kc, so every read is inside a[..kc·MR] and b[..kc·NR]; every write is in
        // row i < R of the tile, columns 0..32, inside c[..(R-1)·ldc + 32] (caller's contract).
        // Prefetches only hint at addresses inside the tile and never fault.
        unsafe {
            // C lives in L3 or DRAM: ask for the tile now, so its lines arrive while the FMAs run
            // instead of stalling the stores at the end (BLIS does the same).
            for i in 0..R {
                _mm_prefetch::<_MM_HINT_T0>(c.add(i * ldc).cast());
                _mm_prefetch::<_MM_HINT_T0>(c.add(i * ldc + 16).cast());
            }
            // One step p of k: 2 loads of B, R broadcasts of A, 2·R FMAs.
            let mut step = |p: usize| {
                let bp = b.add(p * NR);
                // B slivers stream from L2: fetch 8 steps (1 KiB) ahead. The addresses past
                // the sliver's end are only hints and cannot fault.
                _mm_prefetch::<_MM_HINT_T0>(bp.wrapping_add(8 * NR).cast());
                _mm_prefetch::<_MM_HINT_T0>(bp.wrapping_add(8 * NR + 16).cast());
                let b0 = _mm512_loadu_ps(bp);
                let b1 = _mm512_loadu_ps(bp.add(16));
                let ap = a.add(p * MR);
                for i in 0..R {
                    let ai = _mm512_set1_ps(*ap.add(i));
                    lo[i] = _mm512_fmadd_ps(ai, b0, lo[i]);
                    hi[i] = _mm512_fmadd_ps(ai, b1, hi[i]);
                }
            };
            // Four steps per iteration: the loop's own add/compare/branch would otherwise
            // compete with the FMAs for ports 0 and 5 once every 14 cycles.
            let mut p = 0;
            while p + 4 <= kc {
                step(p);
                step(p + 1);
                step(p + 2);
                step(p + 3);
                p += 4;
            }
            while p < kc {
                step(p);
                p += 1;
            }
            for i in 0..R {
                let ci = c.add(i * ldc);
                if accumulate {
                    lo[i] = _mm512_add_ps(lo[i], _mm512_loadu_ps(ci));
                    hi[i] = _mm512_add_ps(hi[i], _mm512_loadu_ps(ci.add(16)));
                }
                _mm512_storeu_ps(ci, lo[i]);
                _mm512_storeu_ps(ci.add(16), hi[i]);
            }
        }
    }

    /// # Safety
    /// The CPU has avx2 and fma; `a` holds kc·6 f32, `b` kc·16, and `c` (rows-1)·ldc + 16.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn dispatch_avx2(
        rows: usize,
        kc: usize,
        a: *const f32,
        b: *const f32,
        c: *mut f32,
        ldc: usize,
        acc: bool,
    ) {
        // SAFETY: forwarded from this function's contract.
        unsafe {
            super::super::by_rows!(
                rows,
                k256,
                [1, 2, 3, 4, 5; 6],
                (kc, a, b, c, ldc, acc)
            )
        }
    }

    /// R×16 tile in ymm registers (the BLIS Haswell shape, 6×16).
    #[target_feature(enable = "avx2,fma")]
    unsafe fn k256<const R: usize>(
        kc: usize,
        a: *const f32,
        b: *const f32,
        c: *mut f32,
        ldc: usize,
        accumulate: bool,
    ) {
        const MR: usize = 6;
        const NR: usize = 16;
        let mut lo = [_mm256_setzero_ps(); R];
        let mut hi = [_mm256_setzero_ps(); R];
        // SAFETY: as in `k512`, with a 6×16 tile.
        unsafe {
            for p in 0..kc {
                let bp = b.add(p * NR);
                let b0 = _mm256_loadu_ps(bp);
                let b1 = _mm256_loadu_ps(bp.add(8));
                let ap = a.add(p * MR);
                for i in 0..R {
                    let ai = _mm256_broadcast_ss(&*ap.add(i));
                    lo[i] = _mm256_fmadd_ps(ai, b0, lo[i]);
                    hi[i] = _mm256_fmadd_ps(ai, b1, hi[i]);
                }
            }
            for i in 0..R {
                let ci = c.add(i * ldc);
                if accumulate {
                    lo[i] = _mm256_add_ps(lo[i], _mm256_loadu_ps(ci));
                    hi[i] = _mm256_add_ps(hi[i], _mm256_loadu_ps(ci.add(8)));
                }
                _mm256_storeu_ps(ci, lo[i]);
                _mm256_storeu_ps(ci.add(8), hi[i]);
            }
        }
    }
}

#[cfg(target_arch = "aarch64")]
mod arm {
    use std::arch::aarch64::*;

    /// # Safety
    /// The CPU has neon; `a` holds kc·8 f32, `b` kc·12, and `c` (rows-1)·ldc + 12.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn dispatch_neon(
        rows: usize,
        kc: usize,
        a: *const f32,
        b: *const f32,
        c: *mut f32,
        ldc: usize,
        acc: bool,
    ) {
        // SAFETY: forwarded from this function's contract.
        unsafe {
            super::super::by_rows!(
                rows,
                kneon,
                [1, 2, 3, 4, 5, 6, 7; 8],
                (kc, a, b, c, ldc, acc)
            )
        }
    }

    /// R×12 tile: 3·R q-register accumulators (24 of 32 for R = 8), 3 loads of B and R
    /// broadcasts of A per step. Neoverse N1 has two 128-bit FMA pipes.
    #[target_feature(enable = "neon")]
    unsafe fn kneon<const R: usize>(
        kc: usize,
        a: *const f32,
        b: *const f32,
        c: *mut f32,
        ldc: usize,
        accumulate: bool,
    ) {
        const MR: usize = 8;
        const NR: usize = 12;
        // SAFETY: as in the x86 kernels, with an 8×12 tile.
        unsafe {
            let mut v0 = [vdupq_n_f32(0.0); R];
            let mut v1 = [vdupq_n_f32(0.0); R];
            let mut v2 = [vdupq_n_f32(0.0); R];
            for p in 0..kc {
                let bp = b.add(p * NR);
                let b0 = vld1q_f32(bp);
                let b1 = vld1q_f32(bp.add(4));
                let b2 = vld1q_f32(bp.add(8));
                let ap = a.add(p * MR);
                for i in 0..R {
                    let ai = vdupq_n_f32(*ap.add(i));
                    v0[i] = vfmaq_f32(v0[i], b0, ai);
                    v1[i] = vfmaq_f32(v1[i], b1, ai);
                    v2[i] = vfmaq_f32(v2[i], b2, ai);
                }
            }
            for i in 0..R {
                let ci = c.add(i * ldc);
                if accumulate {
                    v0[i] = vaddq_f32(v0[i], vld1q_f32(ci));
                    v1[i] = vaddq_f32(v1[i], vld1q_f32(ci.add(4)));
                    v2[i] = vaddq_f32(v2[i], vld1q_f32(ci.add(8)));
                }
                vst1q_f32(ci, v0[i]);
                vst1q_f32(ci.add(4), v1[i]);
                vst1q_f32(ci.add(8), v2[i]);
            }
        }
    }
}

/// The reference: one f64 dot product per entry. Slow and obviously right.
pub fn reference_entry(
    k: usize,
    a: &[f32],
    lda: usize,
    b: &[f32],
    ldb: usize,
    i: usize,
    j: usize,
) -> (f64, f64) {
    let mut sum = 0.0f64;
    let mut abs = 0.0f64;
    for p in 0..k {
        let t = f64::from(a[i * lda + p]) * f64::from(b[p * ldb + j]);
        sum += t;
        abs += t.abs();
    }
    (sum, abs)
}

/// Whether a computed entry is within the f32 rounding bound of the reference:
/// |c − Σ a·b| ≤ γ·Σ|a·b| with γ = k·ε(f32) (Higham, *Accuracy and Stability of Numerical
/// Algorithms*, §3.1), plus a tiny absolute term for all-zero rows.
pub fn entry_ok(k: usize, got: f32, reference: (f64, f64)) -> bool {
    let (sum, abs) = reference;
    let bound = (k.max(1) as f64) * f64::from(f32::EPSILON) * abs + 1e-30;
    got.is_finite() && (f64::from(got) - sum).abs() <= bound
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(isa: Isa, m: usize, n: usize, k: usize) {
        check_with(Workspace::new(isa), m, n, k);
    }

    fn check_with(mut ws: Workspace, m: usize, n: usize, k: usize) {
        let isa = ws.isa();
        let a: Vec<f32> = (0..m * k)
            .map(|x| ((x * 7 + 3) % 19) as f32 / 8.0 - 1.0)
            .collect();
        let b: Vec<f32> = (0..k * n)
            .map(|x| ((x * 5 + 1) % 23) as f32 / 11.0 - 1.0)
            .collect();
        let mut c = vec![f32::NAN; m * n];
        sgemm(m, n, k, &a, k, &b, n, &mut c, n, &mut ws);
        for i in 0..m {
            for j in 0..n {
                let r = reference_entry(k, &a, k, &b, n, i, j);
                assert!(
                    entry_ok(k, c[i * n + j], r),
                    "{isa} {m}x{n}x{k} at ({i},{j}): {} vs {}",
                    c[i * n + j],
                    r.0
                );
            }
        }
    }

    /// Tiny cache blocks, so every loop of the packed path runs several times with a partial
    /// last block: several A blocks (ic), B panels (jc) and k panels (pc, the accumulate path).
    #[test]
    fn every_blocking_loop_and_edge_is_exercised() {
        for isa in [Isa::Portable, Isa::Avx2Fma, Isa::Avx512, Isa::Neon] {
            if !isa.available() {
                continue;
            }
            let d = Blocking::for_isa(isa);
            let small = Blocking {
                kc: 16,
                mc: 2 * d.mr,
                nc: 2 * d.nr,
                ..d
            };
            for (m, n, k) in [(45, 150, 70), (2 * d.mr + 1, 2 * d.nr + 1, 33)] {
                check_with(Workspace::with_blocking(isa, small), m, n, k);
            }
            check(isa, 20, 1000, 300);
        }
    }

    #[test]
    fn every_isa_matches_the_reference_on_odd_shapes() {
        for isa in [Isa::Portable, Isa::Avx2Fma, Isa::Avx512, Isa::Neon] {
            if !isa.available() {
                continue;
            }
            // m ≤ SMALL_M takes the streaming path, larger m the packed one; the odd sizes hit
            // every edge: partial stripes and segments, slivers and register tiles.
            for (m, n, k) in [
                (17, 33, 65),
                (1, 1000, 7),
                (1, 1, 1),
                (15, 31, 300),
                (29, 65, 513),
                (3, 7, 0),
                (5, 1100, 19),
                (8, 77, 130),
                (9, 40, 9),
            ] {
                check(isa, m, n, k);
            }
        }
    }
}
