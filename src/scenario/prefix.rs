//! `workload.prefix_caching`: whether replicas reuse the KV cache of prompt blocks they have
//! already computed (`sim/prefix.rs`).
//!
//! Default: on wherever it can act — a generative model replaying a trace that names its
//! prompt blocks (Mooncake `hash_ids`) with the trace's own token counts — because vLLM's V1
//! engine enables automatic prefix caching by default ("vLLM V1: A Major Upgrade to vLLM's Core
//! Architecture", <https://blog.vllm.ai/2025/01/27/v1-alpha-release.html>, 2025-01-27). Where it
//! cannot act (a classic model, traffic without prompt blocks, token counts drawn instead of
//! replayed) the key is refused with its line rather than ignored. Off, the trace's blocks are
//! dropped, so requests carry none and the simulator computes every prompt token.

use super::file::WorkloadFile;
use crate::input::{InputError, SourceFile};
use crate::traffic::TrafficSpec;
use crate::workload::Workload;

const HELP: &str = "prefix caching needs a generative model replaying a trace with prompt blocks (format = \"mooncake\" with `hash_ids`) and tokens_from_trace = true; remove the key otherwise";

pub(super) fn validate(
    src: &SourceFile,
    w: &WorkloadFile,
    workload: &Workload,
    traffic: &mut TrafficSpec,
) -> Result<(), InputError> {
    let from_trace = match workload {
        Workload::Generative {
            tokens_from_trace, ..
        } => Some(*tokens_from_trace),
        Workload::Classic { .. } => None,
    };
    let has_blocks = traffic.prefix_blocks().is_some();
    if let Some(key) = &w.prefix_caching {
        let why = match (from_trace, has_blocks) {
            (None, _) => Some("prefix caching applies only to generative models".to_string()),
            (Some(_), false) => Some(
                "has no effect: the traffic names no prompt blocks (only a Mooncake trace with `hash_ids` does)"
                    .to_string(),
            ),
            (Some(false), true) => Some(
                "has no effect: tokens_from_trace = false draws the prompts, which the trace's blocks do not describe"
                    .to_string(),
            ),
            (Some(true), true) => None,
        };
        if let Some(why) = why {
            return Err(src
                .error(key, "workload.prefix_caching", why)
                .with_help(HELP));
        }
    }
    let on = from_trace == Some(true) && w.prefix_caching.as_ref().is_none_or(|k| *k.get_ref());
    if !on {
        traffic.drop_prefix_blocks();
    }
    Ok(())
}
