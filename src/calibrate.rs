//! `tco-sim calibrate`: native GEMM and memory-bandwidth microbenchmarks that measure the CPU
//! this runs on and write a hardware profile.

pub mod cpu;
#[allow(unsafe_code)]
pub mod kernels;
pub mod measure;
pub mod suite;
