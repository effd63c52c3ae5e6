//! Traffic: synthetic rate curves turned into arrivals by a non-homogeneous Poisson process, and
//! measured traffic (request traces, rate series) replayed as recorded.

/// One request as it enters the fleet. Integer nanoseconds, so event order never depends on
/// floating-point ties. Token counts are zero for classic (non-generative) workloads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Request {
    /// Arrival time since the start of the simulated window [ns].
    pub arrival_ns: u64,
    /// Prompt (input) tokens.
    pub input_tokens: u32,
    /// Generated (output) tokens.
    pub output_tokens: u32,
}

pub mod file;
pub use file::TrafficSpec;
