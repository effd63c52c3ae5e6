//! tco-sim: where to serve an ML model and what it will cost.
//!
//! The modules follow the data flow of `DESIGN.md`; a stage uses earlier stages, never later ones:
//!
//! ```text
//! input, cite, rng ─► hardware, workload ─► scenario ─► traffic ─► perf ─► sim ─► capacity ─► cost ─► report
//!                                                                  calibrate ─► hardware profile
//! ```
//!
//! `app` glues them into the subcommands; only `app` and `report` print or write files.

pub mod app;
pub mod calibrate;
pub mod capacity;
pub mod cite;
pub mod cli;
pub mod cost;
pub mod hardware;
pub mod input;
pub mod perf;
pub mod report;
pub mod results;
pub mod rng;
pub mod scenario;
pub mod sim;
pub mod sweep;
pub mod traffic;
pub mod workload;
