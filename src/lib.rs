//! tco-sim: where to serve an ML model and what it will cost.
//!
//! The modules follow the data flow of `DESIGN.md` in stages; a stage uses its own and earlier
//! stages, never later ones (`tests/architecture.rs` checks every `crate::` path against this
//! order):
//!
//! ```text
//! 0 foundation   input, cite, rng, format, units, output   parsing help, citations, random streams,
//!                                                          formatters, constants, the file writer
//! 1 domain       hardware, workload, traffic               profiles, what a request costs, arrivals
//! 2 models       perf, sim, calibrate                      service-time plan, discrete events,
//!                                                          measuring this machine
//! 3 cost inputs  cost::inputs, uncertainty::ranges         the declaration of every cost assumption;
//!                                                          the distributions an input may be given
//! 4 scenario     scenario                                  the validated question (with each tier's
//!                                                          service plan)
//! 5 capacity     capacity, accuracy                        units per tier and year meeting the SLO;
//!                                                          the planner against published benchmarks
//! 6 cost         cost                                      what each option costs, break-even
//! 7 results      results, uncertainty                      a run assembled: plan → cost → recommendation;
//!                                                          how sure it is (tornado, flips, Monte Carlo)
//! 8 report       report                                    terminal tables, JSON/CSV, charts, PDF
//! 9 glue         cli, app, sweep                           the command line; `app` sequences the
//!                                                          pipeline and writes files; `sweep`
//!                                                          runs it over a grid of scenarios
//! ```
//!
//! Only `app`, `sweep` and `report` print or write files; every other stage returns plain data.

pub mod accuracy;
pub mod app;
pub mod calibrate;
pub mod capacity;
pub mod cite;
pub mod cli;
pub mod cost;
pub mod format;
pub mod hardware;
pub mod input;
pub mod output;
pub mod perf;
pub mod report;
pub mod results;
pub mod rng;
pub mod scenario;
pub mod sim;
pub mod sweep;
pub mod traffic;
pub mod uncertainty;
pub mod units;
pub mod workload;
