//! STREAM-style bandwidth kernels (McCalpin, "Memory Bandwidth and Machine Balance in Current
//! High Performance Computers", IEEE TCCA Newsletter, 1995): copy `c[i] = a[i]` and triad
//! `a[i] = b[i] + s·c[i]`, over arrays far larger than the last-level cache.
//!
//! Bytes counted per element follow STREAM: copy 2 × 4 B, triad 3 × 4 B. A normal store first
//! reads the destination line (read-for-ownership), so real traffic is 3 and 4 words; a
//! non-temporal store (`vmovntps`) writes the line without reading it, so counted bytes equal
//! real bytes. The kernels use non-temporal stores when asked and the ISA has them (AVX-512,
//! AVX), after peeling scalar elements until the destination is 64-byte aligned, and end with
//! `sfence` so the streamed data is globally visible before the timer stops.

use super::Isa;

/// How a kernel stored its results.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stores {
    /// Ordinary stores through the cache.
    Cached,
    /// Non-temporal (streaming) stores that bypass the cache.
    NonTemporal,
}

/// Whether non-temporal stores are available with `isa`.
pub fn has_nt_stores(isa: Isa) -> bool {
    matches!(isa, Isa::Avx512 | Isa::Avx512Vnni | Isa::Avx2Fma) && isa.available()
}

/// `dst[i] = src[i]`. Returns how the stores were made.
pub fn copy(isa: Isa, src: &[f32], dst: &mut [f32], nt: bool) -> Stores {
    assert_eq!(src.len(), dst.len(), "copy needs equal lengths");
    if nt && has_nt_stores(isa) {
        #[cfg(target_arch = "x86_64")]
        {
            // SAFETY: has_nt_stores checked the ISA; lengths are equal (asserted above).
            unsafe { x86::copy(isa, src, dst) };
            return Stores::NonTemporal;
        }
    }
    dst.copy_from_slice(src);
    Stores::Cached
}

/// `a[i] = b[i] + s·c[i]`. Returns how the stores were made.
pub fn triad(isa: Isa, a: &mut [f32], b: &[f32], c: &[f32], s: f32, nt: bool) -> Stores {
    assert!(
        a.len() == b.len() && b.len() == c.len(),
        "triad needs equal lengths"
    );
    if nt && has_nt_stores(isa) {
        #[cfg(target_arch = "x86_64")]
        {
            // SAFETY: has_nt_stores checked the ISA; lengths are equal (asserted above).
            unsafe { x86::triad(isa, a, b, c, s) };
            return Stores::NonTemporal;
        }
    }
    // Multiply then add: without an FMA target feature, `mul_add` is a libm call per element.
    // The check's values make every result exact, so the rounding cannot differ.
    for ((x, y), z) in a.iter_mut().zip(b).zip(c) {
        *x = *y + s * *z;
    }
    Stores::Cached
}

/// Values that make every triad result exact in f32 (small integers times 3 plus halves), so
/// the check can demand equality: b_i = i mod 1021, c_i = (i mod 7) / 2, s = 3.
pub const TRIAD_SCALAR: f32 = 3.0;
pub fn triad_b(i: usize) -> f32 {
    (i % 1021) as f32
}
pub fn triad_c(i: usize) -> f32 {
    (i % 7) as f32 * 0.5
}

/// Index of the first element where `a ≠ b + s·c` (the reference, computed here), if any.
/// Exact comparison is right because every b + s·c here is exact in f32.
pub fn triad_mismatch(a: &[f32], b: &[f32], c: &[f32], s: f32) -> Option<usize> {
    a.iter()
        .zip(b.iter().zip(c))
        .position(|(x, (y, z))| *x != *y + s * *z)
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::Isa;
    use std::arch::x86_64::*;

    /// Elements to peel so `p + peel` is 64-byte aligned (f32 is 4-byte aligned, so 0..15).
    fn peel(p: *const f32, len: usize) -> usize {
        (p.align_offset(64)).min(len)
    }

    /// # Safety
    /// The CPU has avx512f (for `Isa::Avx512*`) or avx (for `Isa::Avx2Fma`); equal lengths.
    pub unsafe fn copy(isa: Isa, src: &[f32], dst: &mut [f32]) {
        let n = dst.len();
        let head = peel(dst.as_ptr(), n);
        dst[..head].copy_from_slice(&src[..head]);
        // SAFETY: the caller guarantees the ISA; the loops below touch [head, body_end) which
        // lies inside both slices; destination addresses are 64-byte aligned after the peel.
        unsafe {
            match isa {
                Isa::Avx512 | Isa::Avx512Vnni => copy512(src, dst, head),
                _ => copy256(src, dst, head),
            }
        }
    }

    #[target_feature(enable = "avx512f")]
    unsafe fn copy512(src: &[f32], dst: &mut [f32], head: usize) {
        let n = dst.len();
        let body_end = head + (n - head) / 64 * 64;
        let (s, d) = (src.as_ptr(), dst.as_mut_ptr());
        // SAFETY: i + 64 ≤ body_end ≤ n for every access; d + i is 64-byte aligned because
        // d + head is and i − head is a multiple of 16 floats (64 B).
        unsafe {
            let mut i = head;
            while i < body_end {
                for u in 0..4 {
                    let v = _mm512_loadu_ps(s.add(i + 16 * u));
                    _mm512_stream_ps(d.add(i + 16 * u), v);
                }
                i += 64;
            }
            _mm_sfence();
        }
        dst[body_end..].copy_from_slice(&src[body_end..]);
    }

    #[target_feature(enable = "avx")]
    unsafe fn copy256(src: &[f32], dst: &mut [f32], head: usize) {
        let n = dst.len();
        let body_end = head + (n - head) / 32 * 32;
        let (s, d) = (src.as_ptr(), dst.as_mut_ptr());
        // SAFETY: as in `copy512`, with 32-byte vectors (8 floats) and 32-byte alignment.
        unsafe {
            let mut i = head;
            while i < body_end {
                for u in 0..4 {
                    let v = _mm256_loadu_ps(s.add(i + 8 * u));
                    _mm256_stream_ps(d.add(i + 8 * u), v);
                }
                i += 32;
            }
            _mm_sfence();
        }
        dst[body_end..].copy_from_slice(&src[body_end..]);
    }

    /// # Safety
    /// As for `copy`; all three lengths equal.
    pub unsafe fn triad(isa: Isa, a: &mut [f32], b: &[f32], c: &[f32], s: f32) {
        let n = a.len();
        let head = peel(a.as_ptr(), n);
        for i in 0..head {
            a[i] = s.mul_add(c[i], b[i]);
        }
        // SAFETY: as in `copy`.
        unsafe {
            match isa {
                Isa::Avx512 | Isa::Avx512Vnni => triad512(a, b, c, s, head),
                _ => triad256(a, b, c, s, head),
            }
        }
    }

    #[target_feature(enable = "avx512f")]
    unsafe fn triad512(a: &mut [f32], b: &[f32], c: &[f32], s: f32, head: usize) {
        let n = a.len();
        let body_end = head + (n - head) / 64 * 64;
        let (pa, pb, pc) = (a.as_mut_ptr(), b.as_ptr(), c.as_ptr());
        let vs = _mm512_set1_ps(s);
        // SAFETY: as in `copy512`.
        unsafe {
            let mut i = head;
            while i < body_end {
                for u in 0..4 {
                    let o = i + 16 * u;
                    let v =
                        _mm512_fmadd_ps(vs, _mm512_loadu_ps(pc.add(o)), _mm512_loadu_ps(pb.add(o)));
                    _mm512_stream_ps(pa.add(o), v);
                }
                i += 64;
            }
            _mm_sfence();
        }
        for i in body_end..n {
            a[i] = s.mul_add(c[i], b[i]);
        }
    }

    #[target_feature(enable = "avx,fma")]
    unsafe fn triad256(a: &mut [f32], b: &[f32], c: &[f32], s: f32, head: usize) {
        let n = a.len();
        let body_end = head + (n - head) / 32 * 32;
        let (pa, pb, pc) = (a.as_mut_ptr(), b.as_ptr(), c.as_ptr());
        let vs = _mm256_set1_ps(s);
        // SAFETY: as in `copy256`.
        unsafe {
            let mut i = head;
            while i < body_end {
                for u in 0..4 {
                    let o = i + 8 * u;
                    let v =
                        _mm256_fmadd_ps(vs, _mm256_loadu_ps(pc.add(o)), _mm256_loadu_ps(pb.add(o)));
                    _mm256_stream_ps(pa.add(o), v);
                }
                i += 32;
            }
            _mm_sfence();
        }
        for i in body_end..n {
            a[i] = s.mul_add(c[i], b[i]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_and_triad_are_exact_at_every_alignment_and_length() {
        for isa in [Isa::Portable, Isa::Avx2Fma, Isa::Avx512] {
            for nt in [false, true] {
                for offset in 0..17 {
                    for len in [0, 1, 15, 16, 63, 64, 65, 200, 1037] {
                        let n = offset + len;
                        let b: Vec<f32> = (0..n).map(triad_b).collect();
                        let c: Vec<f32> = (0..n).map(triad_c).collect();
                        let mut a = vec![f32::NAN; n];
                        triad(
                            isa,
                            &mut a[offset..],
                            &b[offset..],
                            &c[offset..],
                            TRIAD_SCALAR,
                            nt,
                        );
                        assert_eq!(
                            triad_mismatch(&a[offset..], &b[offset..], &c[offset..], TRIAD_SCALAR),
                            None,
                            "{isa} nt={nt} +{offset} {len}"
                        );
                        let mut d = vec![f32::NAN; n];
                        copy(isa, &b[offset..], &mut d[offset..], nt);
                        assert_eq!(&d[offset..], &b[offset..], "{isa} nt={nt} +{offset} {len}");
                    }
                }
            }
        }
    }
}
