//! The calibration suite: which kernels run at which shapes, for how long, on one core and on
//! all cores, and what each measured. Pure measurement: no printing and no files (the progress
//! callback is the caller's business).
//!
//! Shapes (f32 unless noted; m×k times k×n):
//! - square GEMM, n = 1024, 2048, 4096: compute-bound, what prefill and large batches do;
//! - skinny GEMM, m = 1, 16, 64 rows against a k×n = 8192×8192 weight matrix (4096 with
//!   `--quick`): the decode and embedding shape, bound by reading the weights;
//! - int8 GEMM (VNNI where present), square;
//! - STREAM copy and triad over arrays of at least 4× the last-level cache each;
//! - register-only FMA (and VNNI) loops: the compute ceiling.
//!
//! All-core GEMM splits one GEMM's columns over the threads (each thread computes C[:, j0..j1]
//! = A·B[:, j0..j1] into its own buffer), which is how a BLAS parallelises one call, so the
//! figure compares with OpenBLAS at OPENBLAS_NUM_THREADS = cores.

use std::sync::Mutex;
use std::time::Duration;

use super::kernels::stream;
use super::kernels::{AlignedBuf, Isa, igemm, peak, sgemm};
use super::measure::{Budget, Measured, Workload, measure};

/// What a kernel measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    FmaCeiling,
    VnniCeiling,
    Sgemm,
    Igemm,
    Copy,
    Triad,
}

impl Kind {
    /// Unit of the rates: FLOP/s for f32, OP/s for int8, B/s for streams.
    pub fn unit(self) -> &'static str {
        match self {
            Kind::FmaCeiling | Kind::Sgemm => "FLOP/s",
            Kind::VnniCeiling | Kind::Igemm => "OP/s",
            Kind::Copy | Kind::Triad => "B/s",
        }
    }
}

/// One kernel at one shape, measured on one core and on all cores.
#[derive(Debug, Clone)]
pub struct KernelResult {
    pub kind: Kind,
    /// Short label, e.g. `sgemm 2048x2048x2048` or `triad 1920 MiB/array`.
    pub label: String,
    /// (m, n, k) for GEMMs.
    pub shape: Option<(usize, usize, usize)>,
    pub isa: Isa,
    pub one_core: Measured,
    pub all_cores: Measured,
    /// For streams: whether non-temporal stores were used.
    pub nt_stores: Option<bool>,
}

/// What to run and for how long.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Time for the timed trials of all kernels together; each gets an equal share.
    pub time: Duration,
    pub min_trials: usize,
    pub max_trials: usize,
    pub square: Vec<usize>,
    /// (m, k, n) with m the batch.
    pub skinny: Vec<(usize, usize, usize)>,
    pub int8_square: Vec<usize>,
    /// f32 elements per stream array (all threads together).
    pub stream_elems: usize,
    /// Why the stream arrays have the size they have (for the profile's method note).
    pub stream_sizing: String,
    /// FMA-loop steps per call.
    pub fma_steps: u64,
}

/// Bytes of one stream array: `factor` × the last-level cache (STREAM's rule is at least 4×,
/// which the default run uses; `--quick` uses 1× to stay under ten seconds and says so), at
/// least 64 MiB, at most a sixth of the available memory (three arrays may use half of it).
pub fn stream_array_bytes(factor: u64, llc: Option<u64>, available: Option<u64>) -> (u64, String) {
    let llc_known = llc.is_some();
    let llc = llc.unwrap_or(32 << 20);
    let want = (factor * llc).max(64 << 20);
    let cap = available.map(|a| a / 6).unwrap_or(u64::MAX);
    let bytes = want.min(cap).max(1 << 20);
    let mib = |b: u64| b as f64 / f64::from(1 << 20);
    let caveat = if factor < 4 {
        " (below STREAM's 4x rule: a quick run; caches may inflate the figure)"
    } else {
        ""
    };
    let why = match (llc_known, bytes < want) {
        (true, false) => format!(
            "{:.0} MiB per array = {factor} x the {:.0} MiB last-level cache{caveat}",
            mib(bytes),
            mib(llc)
        ),
        (true, true) => format!(
            "{:.0} MiB per array, capped at 1/6 of available memory; below {factor} x the {:.0} MiB last-level cache, so caches may inflate the figure",
            mib(bytes),
            mib(llc)
        ),
        (false, _) => format!(
            "{:.0} MiB per array (last-level cache size not shown by the OS; assumed 32 MiB){caveat}",
            mib(bytes)
        ),
    };
    (bytes, why)
}

impl Plan {
    /// The default run (about `seconds` of trials plus set-up), or `--quick`.
    pub fn new(quick: bool, seconds: f64, llc: Option<u64>, available: Option<u64>) -> Plan {
        let (bytes, why) = stream_array_bytes(if quick { 1 } else { 4 }, llc, available);
        if quick {
            Plan {
                time: Duration::from_secs_f64(seconds),
                min_trials: 3,
                max_trials: 20,
                square: vec![1024],
                skinny: vec![(1, 4096, 4096), (16, 4096, 4096)],
                int8_square: vec![1024],
                stream_elems: (bytes / 4) as usize,
                stream_sizing: why,
                fma_steps: 100_000,
            }
        } else {
            Plan {
                time: Duration::from_secs_f64(seconds),
                min_trials: 5,
                max_trials: 50,
                square: vec![1024, 2048, 4096],
                skinny: vec![(1, 8192, 8192), (16, 8192, 8192), (64, 8192, 8192)],
                int8_square: vec![2048],
                stream_elems: (bytes / 4) as usize,
                stream_sizing: why,
                fma_steps: 200_000,
            }
        }
    }

    /// Tiny shapes that run every kernel through the real path in well under a second, even
    /// in a debug build: for tests only, since caches hold everything.
    pub fn smoke() -> Plan {
        Plan {
            time: Duration::ZERO,
            min_trials: 2,
            max_trials: 2,
            square: vec![67],
            skinny: vec![(1, 129, 97)],
            int8_square: vec![45],
            stream_elems: 10_007,
            stream_sizing: "smoke test: 39 KiB per array (cache-resident; not a bandwidth figure)"
                .into(),
            fma_steps: 1_000,
        }
    }

    /// Measurements (each on one core and on all cores) the plan will run.
    pub fn measurements(&self, int8_ceiling: bool) -> usize {
        2 * (1
            + usize::from(int8_ceiling)
            + self.square.len()
            + self.skinny.len()
            + self.int8_square.len()
            + 2)
    }
}

/// One measurement of a kernel on a given set of CPUs.
type MeasureOn<'a> = dyn Fn(&[Option<core_affinity::CoreId>]) -> Result<Measured, String> + 'a;

/// Run the plan. `cpus` lists the logical CPUs to pin to (all of them for all-core runs, the
/// first for one-core runs; `None` entries run unpinned). `on_trial` is called after each
/// trial, `on_start` before each measurement with its label.
pub fn run_plan(
    plan: &Plan,
    cpus: &[Option<core_affinity::CoreId>],
    on_start: &dyn Fn(&str),
    on_trial: &(dyn Fn() + Sync),
) -> Result<Vec<KernelResult>, String> {
    let isa = Isa::best_f32();
    let isa8 = Isa::best_int8();
    let vnni = peak::vnni_loop(1).is_some();
    let share = plan.time / plan.measurements(vnni).max(1) as u32;
    let budget = Budget {
        time: share,
        min_trials: plan.min_trials,
        max_trials: plan.max_trials,
    };
    let one = &cpus[..1.min(cpus.len())];
    let mut out = Vec::new();
    let mut both = |kind: Kind,
                    label: String,
                    shape: Option<(usize, usize, usize)>,
                    kisa: Isa,
                    nt: Option<bool>,
                    run: &MeasureOn|
     -> Result<(), String> {
        on_start(&format!("{label}, 1 core"));
        let one_core = run(one).map_err(|e| format!("{label} (1 core) is wrong: {e}"))?;
        on_start(&format!("{label}, {} cores", cpus.len()));
        let all_cores = run(cpus).map_err(|e| format!("{label} (all cores) is wrong: {e}"))?;
        out.push(KernelResult {
            kind,
            label,
            shape,
            isa: kisa,
            one_core,
            all_cores,
            nt_stores: nt,
        });
        Ok(())
    };

    let fma = FmaCeiling {
        isa,
        steps: plan.fma_steps,
    };
    both(
        Kind::FmaCeiling,
        format!("fma ceiling ({isa})"),
        None,
        isa,
        None,
        &|c| measure(&fma, c, budget, on_trial),
    )?;
    if vnni {
        let w = VnniCeiling {
            steps: plan.fma_steps,
        };
        both(
            Kind::VnniCeiling,
            "vnni ceiling (avx512-vnni)".into(),
            None,
            Isa::Avx512Vnni,
            None,
            &|c| measure(&w, c, budget, on_trial),
        )?;
    }
    for &n in &plan.square {
        let b = f32_matrix(n, n, 7);
        let w = Sgemm::new(isa, n, n, n, &b);
        both(
            Kind::Sgemm,
            format!("sgemm {n}x{n}x{n}"),
            Some((n, n, n)),
            isa,
            None,
            &|c| measure(&w, c, budget, on_trial),
        )?;
    }
    let mut weights: Option<((usize, usize), Vec<f32>)> = None;
    for &(m, k, n) in &plan.skinny {
        if weights.as_ref().is_none_or(|(shape, _)| *shape != (k, n)) {
            weights = Some(((k, n), f32_matrix(k, n, 7)));
        }
        let b = weights.as_ref().map_or(&[][..], |(_, b)| b.as_slice());
        let w = Sgemm::new(isa, m, n, k, b);
        both(
            Kind::Sgemm,
            format!("sgemm {m}x{k}x{n} (skinny)"),
            Some((m, n, k)),
            isa,
            None,
            &|c| measure(&w, c, budget, on_trial),
        )?;
    }
    for &n in &plan.int8_square {
        let w = Igemm::new(isa8, n, n, n);
        both(
            Kind::Igemm,
            format!("int8 gemm {n}x{n}x{n}"),
            Some((n, n, n)),
            isa8,
            None,
            &|c| measure(&w, c, budget, on_trial),
        )?;
    }
    let nt = stream::has_nt_stores(isa);
    let mib = (plan.stream_elems * 4) >> 20;
    on_start(&format!("allocating 3 x {mib} MiB stream arrays"));
    let arrays = Mutex::new(StreamArrays::new(plan.stream_elems, cpus));
    for kind in [Kind::Copy, Kind::Triad] {
        let name = if kind == Kind::Copy { "copy" } else { "triad" };
        both(
            kind,
            format!("{name} {mib} MiB/array"),
            None,
            isa,
            Some(nt),
            &|c| {
                let mut arrays = arrays.lock().unwrap_or_else(|e| e.into_inner());
                let w = Stream::new(kind, isa, nt, &mut arrays, c.len());
                measure(&w, c, budget, on_trial)
            },
        )?;
    }
    Ok(out)
}

/// One f32 GEMM measurement at m×k times k×n on `cpus` (the columns split over them), for
/// benchmarks that compare a single kernel with another library in alternation.
pub fn measure_sgemm(
    m: usize,
    n: usize,
    k: usize,
    cpus: &[Option<core_affinity::CoreId>],
    budget: Budget,
) -> Result<Measured, String> {
    let b = f32_matrix(k, n, 7);
    let w = Sgemm::new(Isa::best_f32(), m, n, k, &b);
    measure(&w, cpus, budget, &|| {})
}

/// One STREAM triad measurement over three arrays of `elems` f32 on `cpus`; also says whether
/// non-temporal stores were used.
pub fn measure_triad(
    elems: usize,
    cpus: &[Option<core_affinity::CoreId>],
    budget: Budget,
) -> Result<(Measured, bool), String> {
    let isa = Isa::best_f32();
    let nt = stream::has_nt_stores(isa);
    let mut arrays = StreamArrays::new(elems, cpus);
    let w = Stream::new(Kind::Triad, isa, nt, &mut arrays, cpus.len());
    Ok((measure(&w, cpus, budget, &|| {})?, nt))
}

struct FmaCeiling {
    isa: Isa,
    steps: u64,
}

impl Workload for FmaCeiling {
    type Local = [f32; peak::CHAINS];
    fn prepare(&self, _: usize, _: usize) -> Self::Local {
        [0.0; peak::CHAINS]
    }
    fn run(&self, local: &mut Self::Local) {
        *local = peak::fma_loop(self.isa, self.steps);
    }
    fn work(&self, threads: usize) -> f64 {
        (peak::CHAINS * self.isa.f32_lanes() * 2 * threads) as f64 * self.steps as f64
    }
    fn check(&self, local: &Self::Local) -> Result<(), String> {
        let want = peak::fma_reference(self.steps);
        if *local == want {
            Ok(())
        } else {
            Err(format!(
                "chains end at {local:?}, the scalar reference at {want:?}"
            ))
        }
    }
}

struct VnniCeiling {
    steps: u64,
}

impl Workload for VnniCeiling {
    type Local = Option<[i32; peak::CHAINS]>;
    fn prepare(&self, _: usize, _: usize) -> Self::Local {
        None
    }
    fn run(&self, local: &mut Self::Local) {
        *local = peak::vnni_loop(self.steps);
    }
    fn work(&self, threads: usize) -> f64 {
        (peak::CHAINS * 128 * threads) as f64 * self.steps as f64
    }
    fn check(&self, local: &Self::Local) -> Result<(), String> {
        let want = peak::vnni_reference(self.steps);
        match local {
            Some(got) if *got == want => Ok(()),
            other => Err(format!("chains end at {other:?}, expected {want:?}")),
        }
    }
}

/// The columns of n that thread t of `threads` computes: equal shares in whole 32-column
/// slivers, so no two threads share a micro-tile.
fn columns(n: usize, t: usize, threads: usize) -> (usize, usize) {
    let slivers = n.div_ceil(32);
    let per = slivers.div_ceil(threads);
    let j0 = (t * per * 32).min(n);
    let j1 = ((t + 1) * per * 32).min(n);
    (j0, j1)
}

/// A deterministic sample of entries (i, j) of an m×w block, corners included, for checking
/// a large result against the O(k) reference without an O(m·n·k) pass.
fn sample(m: usize, w: usize) -> Vec<(usize, usize)> {
    if m == 0 || w == 0 {
        return vec![];
    }
    let mut v = vec![(0, 0), (m - 1, w - 1), (0, w - 1), (m - 1, 0)];
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for _ in 0..60 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v.push(((x % m as u64) as usize, ((x >> 32) % w as u64) as usize));
    }
    v
}

/// Test matrices: values in [-1, 1) with no pattern a kernel could exploit; all finite.
fn f32_matrix(rows: usize, cols: usize, seed: usize) -> Vec<f32> {
    (0..rows * cols)
        .map(|x| ((x * 104_729 + seed) % 4091) as f32 / 2045.5 - 1.0)
        .collect()
}

struct Sgemm<'b> {
    isa: Isa,
    m: usize,
    n: usize,
    k: usize,
    a: Vec<f32>,
    /// k×n; borrowed so the skinny shapes share one 256 MiB weight matrix.
    b: &'b [f32],
}

impl<'b> Sgemm<'b> {
    fn new(isa: Isa, m: usize, n: usize, k: usize, b: &'b [f32]) -> Self {
        assert_eq!(b.len(), k * n);
        Sgemm {
            isa,
            m,
            n,
            k,
            a: f32_matrix(m, k, 13),
            b,
        }
    }
}

struct SgemmLocal {
    j0: usize,
    w: usize,
    c: Vec<f32>,
    ws: sgemm::Workspace,
}

impl Workload for Sgemm<'_> {
    type Local = SgemmLocal;
    fn prepare(&self, t: usize, threads: usize) -> SgemmLocal {
        let (j0, j1) = columns(self.n, t, threads);
        SgemmLocal {
            j0,
            w: j1 - j0,
            c: vec![f32::NAN; self.m * (j1 - j0)],
            ws: sgemm::Workspace::new(self.isa),
        }
    }
    fn run(&self, l: &mut SgemmLocal) {
        if l.w > 0 {
            sgemm::sgemm(
                self.m,
                l.w,
                self.k,
                &self.a,
                self.k,
                &self.b[l.j0..],
                self.n,
                &mut l.c,
                l.w,
                &mut l.ws,
            );
        }
    }
    fn work(&self, _: usize) -> f64 {
        2.0 * self.m as f64 * self.n as f64 * self.k as f64
    }
    fn check(&self, l: &SgemmLocal) -> Result<(), String> {
        for (i, j) in sample(self.m, l.w) {
            let r = sgemm::reference_entry(self.k, &self.a, self.k, self.b, self.n, i, l.j0 + j);
            let got = l.c[i * l.w + j];
            if !sgemm::entry_ok(self.k, got, r) {
                return Err(format!(
                    "C[{i}, {}] = {got}, the reference gives {}",
                    l.j0 + j,
                    r.0
                ));
            }
        }
        Ok(())
    }
}

struct Igemm {
    isa: Isa,
    m: usize,
    n: usize,
    k: usize,
    a: Vec<i8>,
    b: Vec<i8>,
}

impl Igemm {
    fn new(isa: Isa, m: usize, n: usize, k: usize) -> Self {
        let a = (0..m * k)
            .map(|x| ((x * 7919 + 13) % 256) as u8 as i8)
            .collect();
        let b = (0..k * n)
            .map(|x| ((x * 104_729 + 7) % 256) as u8 as i8)
            .collect();
        Igemm { isa, m, n, k, a, b }
    }
}

struct IgemmLocal {
    j0: usize,
    w: usize,
    c: Vec<i32>,
    ws: igemm::Workspace,
}

impl Workload for Igemm {
    type Local = IgemmLocal;
    fn prepare(&self, t: usize, threads: usize) -> IgemmLocal {
        let (j0, j1) = columns(self.n, t, threads);
        IgemmLocal {
            j0,
            w: j1 - j0,
            c: vec![i32::MIN; self.m * (j1 - j0)],
            ws: igemm::Workspace::new(self.isa),
        }
    }
    fn run(&self, l: &mut IgemmLocal) {
        if l.w > 0 {
            igemm::igemm(
                self.m,
                l.w,
                self.k,
                &self.a,
                self.k,
                &self.b[l.j0..],
                self.n,
                &mut l.c,
                l.w,
                &mut l.ws,
            );
        }
    }
    fn work(&self, _: usize) -> f64 {
        2.0 * self.m as f64 * self.n as f64 * self.k as f64
    }
    fn check(&self, l: &IgemmLocal) -> Result<(), String> {
        for (i, j) in sample(self.m, l.w) {
            let r = igemm::reference_entry(self.k, &self.a, self.k, &self.b, self.n, i, l.j0 + j);
            let got = l.c[i * l.w + j];
            if i64::from(got) != r {
                return Err(format!(
                    "C[{i}, {}] = {got}, the reference gives {r}",
                    l.j0 + j
                ));
            }
        }
        Ok(())
    }
}

/// The three STREAM arrays, allocated once and shared by copy and triad, one core and all
/// cores: at 4× a large LLC they are gigabytes, and faulting them in is the slow part.
struct StreamArrays {
    a: AlignedBuf,
    b: AlignedBuf,
    c: AlignedBuf,
}

/// Split `len` into `parts` chunks, each a multiple of 16 elements (64 B) but the last, so
/// every chunk of an aligned array starts on a cache line.
fn chunk_len(len: usize, parts: usize) -> usize {
    len.div_ceil(parts.max(1)).next_multiple_of(16).max(16)
}

impl StreamArrays {
    /// Allocate, then fill in parallel on the pinned CPUs, so each core first-touches the part
    /// it will stream in the all-core runs.
    fn new(elems: usize, cpus: &[Option<core_affinity::CoreId>]) -> Self {
        let mut s = StreamArrays {
            a: AlignedBuf::new(elems),
            b: AlignedBuf::new(elems),
            c: AlignedBuf::new(elems),
        };
        let per = chunk_len(elems, cpus.len());
        std::thread::scope(|scope| {
            let chunks =
                s.a.as_mut_slice()
                    .chunks_mut(per)
                    .zip(s.b.as_mut_slice().chunks_mut(per))
                    .zip(s.c.as_mut_slice().chunks_mut(per));
            for (t, ((a, b), c)) in chunks.enumerate() {
                let cpu = cpus.get(t).copied().flatten();
                scope.spawn(move || {
                    if let Some(id) = cpu {
                        core_affinity::set_for_current(id);
                    }
                    let start = t * per;
                    a.fill(f32::NAN);
                    b.iter_mut()
                        .enumerate()
                        .for_each(|(i, v)| *v = stream::triad_b(start + i));
                    c.iter_mut()
                        .enumerate()
                        .for_each(|(i, v)| *v = stream::triad_c(start + i));
                });
            }
        });
        s
    }
}

/// One thread's share of the arrays.
struct StreamChunk<'a> {
    a: &'a mut [f32],
    b: &'a [f32],
    c: &'a [f32],
}

struct Stream<'a> {
    kind: Kind,
    isa: Isa,
    nt: bool,
    elems: usize,
    /// Chunk t goes to thread t in `prepare`.
    chunks: Mutex<Vec<Option<StreamChunk<'a>>>>,
}

impl<'a> Stream<'a> {
    fn new(kind: Kind, isa: Isa, nt: bool, arrays: &'a mut StreamArrays, threads: usize) -> Self {
        let elems = arrays.a.len();
        let per = chunk_len(elems, threads);
        let chunks = arrays
            .a
            .as_mut_slice()
            .chunks_mut(per)
            .zip(arrays.b.as_slice().chunks(per))
            .zip(arrays.c.as_slice().chunks(per))
            .map(|((a, b), c)| Some(StreamChunk { a, b, c }))
            .collect();
        Stream {
            kind,
            isa,
            nt,
            elems,
            chunks: Mutex::new(chunks),
        }
    }
}

impl<'a> Workload for Stream<'a> {
    type Local = Option<StreamChunk<'a>>;
    fn prepare(&self, t: usize, _: usize) -> Self::Local {
        let mut chunks = self.chunks.lock().unwrap_or_else(|e| e.into_inner());
        let mut chunk = chunks.get_mut(t).and_then(Option::take);
        // NaN in the destination: an element the kernel skips can never pass the check.
        if let Some(ch) = chunk.as_mut() {
            ch.a.fill(f32::NAN);
        }
        chunk
    }
    fn run(&self, l: &mut Self::Local) {
        if let Some(ch) = l {
            match self.kind {
                Kind::Copy => stream::copy(self.isa, ch.b, ch.a, self.nt),
                _ => stream::triad(self.isa, ch.a, ch.b, ch.c, stream::TRIAD_SCALAR, self.nt),
            };
        }
    }
    fn work(&self, _: usize) -> f64 {
        let words = if self.kind == Kind::Copy { 2.0 } else { 3.0 };
        words * 4.0 * self.elems as f64
    }
    fn check(&self, l: &Self::Local) -> Result<(), String> {
        let Some(ch) = l else { return Ok(()) };
        let bad = match self.kind {
            Kind::Copy => ch.a.iter().zip(ch.b.iter()).position(|(x, y)| x != y),
            _ => stream::triad_mismatch(ch.a, ch.b, ch.c, stream::TRIAD_SCALAR),
        };
        match bad {
            None => Ok(()),
            Some(i) => Err(format!("element {i} of the thread's chunk is {}", ch.a[i])),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_cover_n_once_in_whole_slivers() {
        for (n, threads) in [(4096, 2), (1000, 3), (31, 4), (64, 80)] {
            let mut next = 0;
            for t in 0..threads {
                let (j0, j1) = columns(n, t, threads);
                assert_eq!(j0, next.min(n));
                assert!(j0 % 32 == 0 || j0 == n);
                next = j1;
            }
            assert_eq!(next, n);
        }
    }

    #[test]
    fn stream_arrays_are_4x_llc_capped_by_memory() {
        let (b, why) = stream_array_bytes(4, Some(480 << 20), Some(24 << 30));
        assert_eq!(b, 1920 << 20);
        assert!(why.contains("4 x the 480 MiB"), "{why}");
        let (b, why) = stream_array_bytes(4, Some(480 << 20), Some(6 << 30));
        assert_eq!(b, 1 << 30);
        assert!(why.contains("capped"), "{why}");
        let (b, _) = stream_array_bytes(4, Some(1 << 20), None);
        assert_eq!(b, 64 << 20);
    }

    #[test]
    fn smoke_plan_runs_every_kernel_and_checks_it() {
        let cpus = vec![None, None];
        let r = run_plan(&Plan::smoke(), &cpus, &|_| {}, &|| {}).unwrap();
        let kinds: Vec<Kind> = r.iter().map(|k| k.kind).collect();
        for k in [
            Kind::FmaCeiling,
            Kind::Sgemm,
            Kind::Igemm,
            Kind::Copy,
            Kind::Triad,
        ] {
            assert!(kinds.contains(&k), "{k:?} missing");
        }
        assert!(
            r.iter()
                .all(|k| k.one_core.threads == 1 && k.all_cores.threads == 2)
        );
        assert!(r.iter().all(|k| k.one_core.stats.median > 0.0));
    }
}
