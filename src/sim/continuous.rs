//! Continuous (iteration-level) batching for generative models, as in Orca (Yu et al., OSDI 2022)
//! and vLLM (Kwon et al., SOSP 2023).
//!
//! Each replica runs iterations back to back while it has work. At the start of an iteration it
//! admits waiting requests in FIFO order while fewer than `max_batch` run and the KV cache has
//! room for the request's whole context (`input_tokens + output_tokens`, reserved on admission so
//! nothing is ever preempted). The iteration prefills the new prompts and takes one decode step
//! for every sequence already running; its time is the roofline of [`IterationCost`]. Each
//! sequence in the iteration emits one token at its end: for a new sequence that is its first
//! token (time to first token), and a sequence completes with its `output_tokens`-th token.
//! Admission is strictly FIFO: a head that does not fit blocks those behind it, as in vLLM's
//! default first-come-first-served scheduler.

use std::collections::VecDeque;

use super::core::{Core, Model};
use super::event::pack;
use super::prefix::PrefixCaches;
use super::service::{Multiplier, to_ns};
use super::{FleetSpec, IterationCost, ServerModel};
use crate::traffic::Request;

const KIND_ITERATION_DONE: u8 = 6;

/// A sequence running on a replica.
struct Sequence {
    req: Request,
    admitted_ns: u64,
    first_token_ns: u64,
    emitted: u32,
    /// Prefilled in the iteration now running (its first token comes at the end of it).
    fresh: bool,
}

/// Tokens a request reserves in the KV cache.
#[inline]
fn context(req: &Request) -> u64 {
    u64::from(req.input_tokens) + u64::from(req.output_tokens)
}

/// Tokens a request generates (at least one: the prefill yields the first).
#[inline]
fn tokens_to_emit(req: &Request) -> u32 {
    req.output_tokens.max(1)
}

struct Replica {
    unit: u32,
    running: Vec<Sequence>,
    kv_used: u64,
    busy: bool,
}

pub(crate) struct Continuous {
    max_batch: usize,
    kv_capacity: u64,
    cost: IterationCost,
    replicas: Vec<Replica>,
    /// Per station, idle replicas, longest idle first.
    idle: Vec<VecDeque<u32>>,
    /// Per-iteration multiplier of the iteration time.
    spread: Multiplier,
    prefix: PrefixCaches,
}

impl Continuous {
    pub fn new(fleet: &FleetSpec, core: &Core) -> Self {
        let (replicas, max_batch, kv, cost, variability) = match &fleet.server {
            ServerModel::ContinuousBatching {
                replicas,
                max_batch,
                kv_capacity_tokens,
                cost,
                variability,
                ..
            } => (
                *replicas,
                *max_batch,
                *kv_capacity_tokens,
                cost.clone(),
                variability,
            ),
            _ => unreachable!("Continuous::new is only called for ServerModel::ContinuousBatching"),
        };
        let mut idle = vec![VecDeque::new(); core.stations()];
        for r in 0..replicas {
            for u in 0..fleet.units {
                idle[core.station_of_unit(u)].push_back(u * replicas + r);
            }
        }
        Continuous {
            max_batch: max_batch as usize,
            kv_capacity: kv,
            cost,
            replicas: (0..fleet.units * replicas)
                .map(|r| Replica {
                    unit: r / replicas,
                    // Grown on demand: max_batch may be large while few sequences ever run.
                    running: Vec::new(),
                    kv_used: 0,
                    busy: false,
                })
                .collect(),
            idle,
            spread: Multiplier::new(variability),
            prefix: PrefixCaches::new(fleet),
        }
    }

    /// Iteration time \[s\]: `fixed + max(P·prefill + D·decode, weights + K·kv)`, see
    /// [`IterationCost`].
    fn iteration_s(&self, prefill_tokens: u64, decode_seqs: u64, context_tokens: u64) -> f64 {
        let c = &self.cost;
        let compute = prefill_tokens as f64 * c.prefill_s_per_token
            + decode_seqs as f64 * c.decode_compute_s_per_seq;
        let memory = c.weight_read_s + context_tokens as f64 * c.kv_read_s_per_token;
        c.fixed_s + compute.max(memory)
    }

    /// Admit what fits and start the next iteration of replica `r`; if it has nothing to run it
    /// goes idle. Returns whether an iteration started.
    fn start_iteration(&mut self, core: &mut Core, r: u32) -> bool {
        let st = core.station_of_unit(self.replicas[r as usize].unit);
        let now = core.now;
        let rep = &mut self.replicas[r as usize];
        let mut prefill = 0u64;
        while rep.running.len() < self.max_batch {
            let Some(head) = core.head(st) else { break };
            let need = context(head);
            if rep.kv_used + need > self.kv_capacity {
                break;
            }
            let Some(req) = core.dequeue(st) else { break };
            rep.kv_used += need;
            prefill += self
                .prefix
                .admit(r, &req, self.kv_capacity - rep.kv_used, core);
            rep.running.push(Sequence {
                req,
                admitted_ns: now,
                first_token_ns: 0,
                emitted: 0,
                fresh: true,
            });
        }
        if rep.running.is_empty() {
            if rep.busy {
                rep.busy = false;
                let unit = rep.unit;
                core.busy_change(unit, -1);
            }
            self.idle[st].push_back(r);
            return false;
        }
        let decode = rep.running.iter().filter(|s| !s.fresh).count() as u64;
        let context_tokens: u64 = rep
            .running
            .iter()
            .map(|s| u64::from(s.req.input_tokens) + u64::from(s.emitted))
            .sum();
        if !rep.busy {
            rep.busy = true;
            let unit = rep.unit;
            core.busy_change(unit, 1);
        }
        let t = self.iteration_s(prefill, decode, context_tokens);
        let m = self.spread.draw(&mut core.service_rng);
        core.schedule_in(to_ns(t * m), pack(KIND_ITERATION_DONE, r, 0));
        true
    }
}

impl Model for Continuous {
    fn admissible(&self, req: &Request) -> bool {
        context(req) <= self.kv_capacity
    }

    fn kick(&mut self, core: &mut Core, st: usize) {
        while core.queue_len(st) > 0 {
            let Some(r) = self.idle[st].pop_front() else {
                break;
            };
            if !self.start_iteration(core, r) {
                break;
            }
        }
    }

    fn on_event(&mut self, core: &mut Core, _kind: u8, r: u32, _generation: u32) {
        let now = core.now;
        let rep = &mut self.replicas[r as usize];
        let unit = rep.unit;
        let st = core.station_of_unit(unit);
        let mut i = 0;
        while i < rep.running.len() {
            let s = &mut rep.running[i];
            s.emitted += 1;
            if s.fresh {
                s.fresh = false;
                s.first_token_ns = now;
            }
            if s.emitted >= tokens_to_emit(&s.req) {
                let done = rep.running.swap_remove(i);
                rep.kv_used -= context(&done.req);
                self.prefix.release(r, &done.req);
                core.served(
                    st,
                    unit,
                    &done.req,
                    done.admitted_ns,
                    Some(done.first_token_ns),
                );
            } else {
                i += 1;
            }
        }
        self.start_iteration(core, r);
    }
}
