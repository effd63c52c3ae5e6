//! Measurement discipline: pinned threads, warm-up, repeated trials, median and spread.
//!
//! One measurement runs a [`Workload`] on `threads` threads, each pinned to its own logical CPU
//! (where the OS allows), which prepare their own data (so pages are first touched by the core
//! that uses them) and then run in lock step between barriers:
//!
//! ```text
//! prepare ─► barrier ─► warm-up call (times one call, sets reps per trial) ─► barrier
//!         ─► repeat { barrier ─► t0 ─► reps calls ─► barrier ─► t1 }  until budget and min trials
//!         ─► check every thread's result against the reference
//! ```
//!
//! A trial's rate is `work · reps / (t1 − t0)` [unit/s], where `work` is FLOP, OP or bytes per
//! call summed over all threads. We report the median rate and the relative spread
//! `(max − min) / median`; a wide spread means the machine was busy, throttling, or shared.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant};

/// Spread above which the summary warns and advises a rerun.
pub const NOISY_SPREAD: f64 = 0.10;

/// Median and spread of the trial rates of one measurement.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stats {
    /// Median rate [unit/s].
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub trials: usize,
    /// (max − min) / median.
    pub spread: f64,
}

impl Stats {
    /// Summarise trial rates; `None` for no trials.
    pub fn from_rates(rates: &[f64]) -> Option<Stats> {
        if rates.is_empty() {
            return None;
        }
        let mut v = rates.to_vec();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            0.5 * (v[n / 2 - 1] + v[n / 2])
        };
        let (min, max) = (v[0], v[n - 1]);
        let spread = if median > 0.0 {
            (max - min) / median
        } else {
            0.0
        };
        Some(Stats {
            median,
            min,
            max,
            trials: n,
            spread,
        })
    }

    pub fn noisy(&self) -> bool {
        self.spread > NOISY_SPREAD
    }
}

/// Something to measure. Each thread calls `prepare` once, then `run` many times on its own
/// local state, then `check` once.
pub trait Workload: Sync {
    type Local;
    /// Build thread `thread`'s data (of `threads`), inside that thread.
    fn prepare(&self, thread: usize, threads: usize) -> Self::Local;
    /// One call of the kernel.
    fn run(&self, local: &mut Self::Local);
    /// Work done by one call on all threads together [FLOP, OP or bytes].
    fn work(&self, threads: usize) -> f64;
    /// Compare thread's result with the reference; `Err` says where it differs.
    fn check(&self, local: &Self::Local) -> Result<(), String>;
}

/// How long and how often to measure.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    /// Time for the timed trials (the warm-up comes on top).
    pub time: Duration,
    pub min_trials: usize,
    pub max_trials: usize,
}

/// The outcome of one measurement.
#[derive(Debug, Clone)]
pub struct Measured {
    pub stats: Stats,
    pub threads: usize,
    /// Whether every thread was pinned to its own CPU.
    pub pinned: bool,
    /// Median fraction of the time the leading thread spent on its own share of each trial
    /// that it was actually on a CPU (Linux `/proc/thread-self/schedstat`); well below 1
    /// means other processes took the core.
    pub on_cpu: Option<f64>,
    /// One thread only: median rate per second the thread actually ran (rate ÷ on-CPU
    /// fraction). Other processes in the same OS do not lower it, so it compares kernels
    /// fairly on a shared machine; contention below the OS (a busy host) still does.
    pub on_cpu_rate: Option<f64>,
}

/// Time this thread has spent running on a CPU [s], from the scheduler's own accounting
/// (`/proc/thread-self/schedstat`, first field in ns); `None` where the OS does not show it.
fn thread_cpu_seconds() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: f64 = text.split_whitespace().next()?.parse().ok()?;
    Some(ns * 1e-9)
}

/// Run `w` on `cpus.len()` threads (at least one), pinned to those CPUs when possible.
/// `on_trial` is called after every trial (progress). Fails if any thread's check fails.
pub fn measure<W: Workload>(
    w: &W,
    cpus: &[Option<core_affinity::CoreId>],
    budget: Budget,
    on_trial: &(dyn Fn() + Sync),
) -> Result<Measured, String> {
    let threads = cpus.len().max(1);
    let barrier = Barrier::new(threads);
    let reps = AtomicUsize::new(1);
    let stop = AtomicBool::new(false);
    let rates = Mutex::new(Vec::new());
    let on_cpu = Mutex::new(Vec::new());
    let failures = Mutex::new(Vec::new());
    let pinned = AtomicUsize::new(0);
    let min_trials = budget.min_trials.max(1);
    let max_trials = budget.max_trials.max(min_trials);
    std::thread::scope(|s| {
        for t in 0..threads {
            let (barrier, reps, stop, rates, failures, pinned, on_cpu) =
                (&barrier, &reps, &stop, &rates, &failures, &pinned, &on_cpu);
            let cpu = cpus.get(t).copied().flatten();
            s.spawn(move || {
                if let Some(id) = cpu
                    && core_affinity::set_for_current(id)
                {
                    pinned.fetch_add(1, Ordering::Relaxed);
                }
                let mut local = w.prepare(t, threads);
                barrier.wait();
                // Warm-up: caches, TLBs, clocks and lazy page mappings settle; the leader times
                // the call to choose how many calls make one trial.
                let start = Instant::now();
                w.run(&mut local);
                let one = start.elapsed().as_secs_f64().max(1e-7);
                if t == 0 {
                    let per_trial = budget.time.as_secs_f64() / (min_trials as f64 + 1.0);
                    reps.store(
                        ((per_trial / one) as usize).clamp(1, 1 << 20),
                        Ordering::Relaxed,
                    );
                }
                barrier.wait();
                let reps = reps.load(Ordering::Relaxed);
                let began = Instant::now();
                let mut trials = 0;
                loop {
                    barrier.wait();
                    let cpu0 = if t == 0 { thread_cpu_seconds() } else { None };
                    let t0 = Instant::now();
                    for _ in 0..reps {
                        w.run(&mut local);
                    }
                    // The leader's own share ends here; waiting at the barrier for the others
                    // is off-CPU by design and must not count as lost to other processes.
                    let own = (t == 0)
                        .then(|| (t0.elapsed().as_secs_f64().max(1e-9), thread_cpu_seconds()));
                    barrier.wait();
                    if let Some((own_s, cpu1)) = own {
                        let dt = t0.elapsed().as_secs_f64().max(1e-9);
                        let rate = w.work(threads) * reps as f64 / dt;
                        if let (Some(c0), Some(c1)) = (cpu0, cpu1) {
                            let frac = ((c1 - c0) / own_s).clamp(1e-6, 1.0);
                            on_cpu
                                .lock()
                                .unwrap_or_else(|e| e.into_inner())
                                .push((frac, rate / frac));
                        }
                        let mut r = rates.lock().unwrap_or_else(|e| e.into_inner());
                        r.push(rate);
                        trials += 1;
                        on_trial();
                        let done = trials >= max_trials
                            || (trials >= min_trials && began.elapsed() >= budget.time);
                        stop.store(done, Ordering::Relaxed);
                    }
                    barrier.wait();
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                }
                if let Err(e) = w.check(&local) {
                    failures
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push(format!("thread {t}: {e}"));
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap_or_else(|e| e.into_inner());
    if !failures.is_empty() {
        return Err(failures.join("; "));
    }
    let rates = rates.into_inner().unwrap_or_else(|e| e.into_inner());
    let stats = Stats::from_rates(&rates).ok_or("no trial ran")?;
    let on_cpu: Vec<(f64, f64)> = on_cpu.into_inner().unwrap_or_else(|e| e.into_inner());
    let fractions: Vec<f64> = on_cpu.iter().map(|p| p.0).collect();
    let running: Vec<f64> = on_cpu.iter().map(|p| p.1).collect();
    Ok(Measured {
        stats,
        threads,
        pinned: pinned.load(Ordering::Relaxed) == threads,
        on_cpu: Stats::from_rates(&fractions).map(|s| s.median),
        on_cpu_rate: Stats::from_rates(&running)
            .filter(|_| threads == 1)
            .map(|s| s.median),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_spread() {
        let s = Stats::from_rates(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!((s.median, s.min, s.max, s.trials), (2.0, 1.0, 3.0, 3));
        assert_eq!(s.spread, 1.0);
        assert!(s.noisy());
        let s = Stats::from_rates(&[10.0, 10.5, 10.2, 10.1]).unwrap();
        assert!((s.median - 10.15).abs() < 1e-12);
        assert!(!s.noisy());
        assert!(Stats::from_rates(&[]).is_none());
    }

    /// A fake kernel whose "work" is counted, so the harness's bookkeeping can be checked
    /// exactly without timing anything.
    struct Count;
    impl Workload for Count {
        type Local = usize;
        fn prepare(&self, thread: usize, _: usize) -> usize {
            thread * 1000
        }
        fn run(&self, local: &mut usize) {
            *local += 1;
        }
        fn work(&self, threads: usize) -> f64 {
            threads as f64
        }
        fn check(&self, local: &usize) -> Result<(), String> {
            if local.is_multiple_of(1000) {
                Err("never ran".into())
            } else {
                Ok(())
            }
        }
    }

    #[test]
    fn runs_min_trials_on_every_thread_and_checks_each() {
        let budget = Budget {
            time: Duration::ZERO,
            min_trials: 3,
            max_trials: 3,
        };
        let calls = AtomicUsize::new(0);
        let m = measure(&Count, &[None, None], budget, &|| {
            calls.fetch_add(1, Ordering::Relaxed);
        })
        .unwrap();
        assert_eq!(m.stats.trials, 3);
        assert_eq!(calls.load(Ordering::Relaxed), 3);
        assert_eq!(m.threads, 2);
        assert!(!m.pinned);
    }

    struct Wrong;
    impl Workload for Wrong {
        type Local = ();
        fn prepare(&self, _: usize, _: usize) {}
        fn run(&self, _: &mut ()) {}
        fn work(&self, _: usize) -> f64 {
            1.0
        }
        fn check(&self, _: &()) -> Result<(), String> {
            Err("c[0] = 1, expected 2".into())
        }
    }

    #[test]
    fn a_wrong_result_fails_the_measurement() {
        let budget = Budget {
            time: Duration::ZERO,
            min_trials: 1,
            max_trials: 1,
        };
        let e = measure(&Wrong, &[None], budget, &|| {}).unwrap_err();
        assert_eq!(e, "thread 0: c[0] = 1, expected 2");
    }
}
