//! The one progress bar of every long command (`run`, `simulate`, `calibrate`): an indicatif
//! bar on stderr that stays hidden until the work has taken a second, so quick runs print
//! nothing extra; indicatif draws it only on a terminal. Library stages report progress through
//! plain callbacks; only `app` holds the bar.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::calibrate::Step;

/// What the bar counts, which decides how it reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Work {
    /// Simulated tier-years (or fleet sizes) of a plan.
    Planning,
    /// Measurements of a calibration, each named as it starts.
    Calibrating,
}

/// A bar that may be disabled (`--quiet`, JSON on stdout), in which case every call is a no-op.
pub struct Progress {
    bar: Option<ProgressBar>,
    start: Instant,
    shown: AtomicBool,
}

impl Progress {
    pub fn new(enabled: bool, work: Work) -> Progress {
        let bar = enabled.then(|| {
            let b = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
            let style = match work {
                Work::Planning => ProgressStyle::with_template(
                    "planning {bar:30} {pos}/{len} tier-years {elapsed}",
                ),
                Work::Calibrating => ProgressStyle::with_template(
                    "{spinner} calibrating [{bar:30}] {pos}/{len} {msg}",
                )
                .map(|s| s.progress_chars("=> ")),
            };
            if let Ok(style) = style {
                b.set_style(style);
            }
            b
        });
        Progress {
            bar,
            start: Instant::now(),
            shown: AtomicBool::new(false),
        }
    }

    /// `done` of `total` finished (callable from worker threads).
    pub fn tick(&self, done: usize, total: usize) {
        let Some(b) = &self.bar else { return };
        b.set_length(total as u64);
        b.set_position(done as u64);
        self.show_when_slow(b);
    }

    /// A calibration step: the plan's length, the next measurement, or a finished trial.
    pub fn calibration(&self, step: Step<'_>) {
        let Some(b) = &self.bar else { return };
        match step {
            Step::Planned(steps) => b.set_length(steps),
            Step::Measuring(label) => {
                // The first measurement starts the bar; each later one ends the one before.
                if !b.message().is_empty() {
                    b.inc(1);
                }
                b.set_message(label.to_string());
            }
            Step::Trial => b.tick(),
        }
        self.show_when_slow(b);
    }

    fn show_when_slow(&self, b: &ProgressBar) {
        if self.start.elapsed().as_secs_f64() > 1.0 && !self.shown.swap(true, Ordering::Relaxed) {
            b.set_draw_target(ProgressDrawTarget::stderr());
        }
    }

    /// Clear the bar before the command prints its answer.
    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}
