//! Continuous (iteration-level) batching for generative models, as in Orca (Yu et al., OSDI 2022)
//! and vLLM (Kwon et al., SOSP 2023).
//!
//! Each replica runs iterations back to back while it has work. At the start of an iteration it
//! schedules, in this order (vLLM V1's scheduler, "Optimization and Tuning: Chunked Prefill",
//! <https://docs.vllm.ai/en/stable/configuration/optimization/>, read 2026-12-01):
//!
//! 1. **Running sequences**, oldest first: one token each for those decoding, and the next chunk
//!    of the prompt for those still prefilling, while the iteration's token budget
//!    ([`Scheduler::max_batched_tokens`]) lasts. Under paged KV ([`KvAllocation::Paged`]) each
//!    scheduled token must have a slot in a KV block; when a sequence needs a block and none is
//!    free, the newest running sequence is preempted (its blocks freed, it waits at the head of
//!    this replica's queue to be recomputed: its prompt plus the tokens it had generated), until
//!    the block fits or the sequence itself was the newest.
//! 2. **Waiting requests**, FIFO — this replica's preempted sequences first, then its station's
//!    queue — while fewer than `max_batch` run, budget is left, the first chunk of the prompt
//!    (the whole prompt without a budget) has KV room, and nothing was preempted this iteration.
//!    A head that does not fit blocks those behind it (first-come-first-served).
//!
//! The iteration's time is [`IterationCost::iteration_s`] of what was scheduled. At its end each
//! scheduled sequence whose prompt is complete emits one token: for a new sequence that is its
//! first token (time to first token), and a sequence completes with its `output_tokens`-th token.
//! With [`Scheduler::legacy`] (no budget, whole-context reservation) this is the scheduler before
//! chunked prefill and paged KV: whole prompts prefilled at admission, nothing ever preempted.

use std::collections::VecDeque;

use super::core::{Core, Model};
use super::event::pack;
use super::prefix::PrefixCaches;
use super::service::{Multiplier, to_ns};
use super::{
    FleetSpec, IterationCost, IterationWork, KvAllocation, Scheduler, ServerModel, attention_pairs,
};
use crate::traffic::Request;

const KIND_ITERATION_DONE: u8 = 6;

/// A sequence admitted to a replica (running, or preempted and waiting to be recomputed).
struct Sequence {
    req: Request,
    /// First admission \[ns\] (a recompute keeps it).
    admitted_ns: u64,
    first_token_ns: Option<u64>,
    emitted: u32,
    /// Tokens whose keys and values are in the KV cache.
    cached: u32,
    /// Tokens to compute before the sequence decodes: its prompt, plus after a preemption the
    /// tokens it had generated.
    prefill_target: u32,
    /// Tokens computed in the iteration now running (0: not scheduled in it).
    scheduled: u32,
    /// KV held: blocks under paged allocation, reserved tokens under [`KvAllocation::Reserve`].
    kv_held: u64,
}

/// Tokens a request may hold in the KV cache at most (prompt and output).
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
    /// In admission order: the newest last (the preemption victim).
    running: Vec<Sequence>,
    /// Preempted sequences waiting to be recomputed, ahead of the station's queue.
    preempted: VecDeque<Sequence>,
    /// KV in use: blocks (paged) or tokens (reserve).
    kv_used: u64,
    /// When `kv_used` last changed \[ns\], for its time integral.
    kv_since_ns: u64,
    busy: bool,
}

pub(crate) struct Continuous {
    max_batch: usize,
    /// KV capacity in the allocation's units: blocks (paged) or tokens (reserve).
    kv_capacity: u64,
    /// Tokens per allocation unit (the block size, or 1).
    kv_unit_tokens: u64,
    budget: Option<u32>,
    paged: bool,
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
        let (replicas, max_batch, kv, cost, variability, scheduler) = match &fleet.server {
            ServerModel::ContinuousBatching {
                replicas,
                max_batch,
                kv_capacity_tokens,
                cost,
                variability,
                scheduler,
                ..
            } => (
                *replicas,
                *max_batch,
                *kv_capacity_tokens,
                cost.clone(),
                variability,
                *scheduler,
            ),
            _ => unreachable!("Continuous::new is only called for ServerModel::ContinuousBatching"),
        };
        let Scheduler {
            max_batched_tokens,
            kv: allocation,
        } = scheduler;
        let (paged, unit) = match allocation {
            KvAllocation::Reserve => (false, 1),
            KvAllocation::Paged { block_tokens } => (true, u64::from(block_tokens.max(1))),
        };
        let mut idle = vec![VecDeque::new(); core.stations()];
        for r in 0..replicas {
            for u in 0..fleet.units {
                idle[core.station_of_unit(u)].push_back(u * replicas + r);
            }
        }
        Continuous {
            max_batch: max_batch as usize,
            kv_capacity: kv / unit,
            kv_unit_tokens: unit,
            budget: max_batched_tokens,
            paged,
            cost,
            replicas: (0..fleet.units * replicas)
                .map(|r| Replica {
                    unit: r / replicas,
                    // Grown on demand: max_batch may be large while few sequences ever run.
                    running: Vec::new(),
                    preempted: VecDeque::new(),
                    kv_used: 0,
                    kv_since_ns: 0,
                    busy: false,
                })
                .collect(),
            idle,
            spread: Multiplier::new(variability),
            prefix: PrefixCaches::new(fleet),
        }
    }

    /// KV a sequence holding `tokens` tokens needs under paged allocation \[blocks\].
    #[inline]
    fn blocks_for(&self, tokens: u64) -> u64 {
        tokens.div_ceil(self.kv_unit_tokens)
    }

    /// Admit what fits, schedule and start the next iteration of replica `r`; if it has nothing
    /// to run it goes idle. Returns whether an iteration started.
    fn start_iteration(&mut self, core: &mut Core, r: u32) -> bool {
        let st = core.station_of_unit(self.replicas[r as usize].unit);
        let now = core.now;
        let paged = self.paged;
        let capacity = self.kv_capacity;
        let unit_tokens = self.kv_unit_tokens;
        let blocks_for = |t: u64| t.div_ceil(unit_tokens);
        let mut budget = self.budget.map_or(u64::MAX, u64::from);
        let rep = &mut self.replicas[r as usize];
        kv_integrate(core, rep);
        // The iteration's work, summed as sequences are scheduled: in integers (exact, and no
        // int-to-float conversion per sequence), converted once.
        let (mut prefill, mut decode, mut pairs, mut ctx_tokens) = (0u64, 0u64, 0u128, 0u64);
        let mut add = |cached: u32, target: u32, n: u64| {
            if cached < target {
                prefill += n;
            } else {
                decode += 1;
            }
            pairs += u128::from(attention_pairs(u64::from(cached), n));
            ctx_tokens += u64::from(cached) + n;
        };
        // 1. Running sequences, oldest first.
        let mut preempted_now = false;
        let mut i = 0;
        while i < rep.running.len() {
            let s = &rep.running[i];
            let want = if s.cached < s.prefill_target {
                u64::from(s.prefill_target - s.cached).min(budget)
            } else {
                1.min(budget)
            };
            if want == 0 {
                // The budget is spent: the rest wait for the next iteration.
                for s in &mut rep.running[i..] {
                    s.scheduled = 0;
                }
                break;
            }
            if paged {
                let need = blocks_for(u64::from(s.cached) + want).saturating_sub(s.kv_held);
                let mut self_preempted = false;
                while rep.kv_used + need > capacity {
                    let victim = rep.running.len() - 1;
                    preempt(core, rep, victim);
                    preempted_now = true;
                    if victim == i {
                        self_preempted = true;
                        break;
                    }
                }
                if self_preempted {
                    break;
                }
                let s = &mut rep.running[i];
                s.kv_held += need;
                rep.kv_used += need;
            }
            let s = &mut rep.running[i];
            s.scheduled = want as u32;
            add(s.cached, s.prefill_target, want);
            budget -= want;
            i += 1;
        }
        // 2. Waiting requests, FIFO: this replica's preempted sequences, then the queue.
        while !preempted_now && rep.running.len() < self.max_batch && budget > 0 {
            let (target, cached, from_queue) = match rep.preempted.front() {
                Some(s) => (s.prefill_target, 0, false),
                None => match core.head(st) {
                    Some(h) => (
                        h.input_tokens,
                        self.prefix.peek_hit(r, h).min(h.input_tokens),
                        true,
                    ),
                    None => break,
                },
            };
            // A prompt-less request computes one token, as a decode step would.
            let want = u64::from(target - cached).max(1).min(budget);
            let need = if paged {
                blocks_for(u64::from(cached) + want)
            } else {
                // Reserve the whole context (a recompute never happens without paging).
                core.head(st).map_or(0, context)
            };
            if rep.kv_used + need > capacity {
                break;
            }
            let mut s = if from_queue {
                let Some(req) = core.dequeue(st) else { break };
                // The prefix cache takes hold of the request's blocks; evicting to make room
                // for this admission may lose some of the blocks the peek counted.
                let free = (capacity - (rep.kv_used + need)) * unit_tokens;
                let to_compute = self.prefix.admit(r, &req, free, core);
                let cached = req.input_tokens - to_compute as u32;
                Sequence {
                    req,
                    admitted_ns: now,
                    first_token_ns: None,
                    emitted: 0,
                    cached,
                    prefill_target: target,
                    scheduled: 0,
                    kv_held: 0,
                }
            } else {
                let Some(s) = rep.preempted.pop_front() else {
                    break;
                };
                s
            };
            s.kv_held = need;
            s.scheduled = want as u32;
            add(s.cached, s.prefill_target, want);
            rep.kv_used += need;
            budget -= want;
            rep.running.push(s);
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
        let work = IterationWork {
            prefill_tokens: prefill as f64,
            decode_seqs: decode as f64,
            attention_pairs: pairs as f64,
            context_tokens: ctx_tokens as f64,
        };
        kv_peak(core, rep, self.kv_unit_tokens);
        if !rep.busy {
            rep.busy = true;
            let unit = rep.unit;
            core.busy_change(unit, 1);
        }
        let t = self.cost.iteration_s(&work);
        let m = self.spread.draw(&mut core.service_rng);
        core.schedule_in(to_ns(t * m), pack(KIND_ITERATION_DONE, r, 0));
        true
    }
}

/// Bring replica `rep`'s KV-occupancy integral up to now (the measured part only).
#[inline]
fn kv_integrate(core: &mut Core, rep: &mut Replica) {
    let from = rep.kv_since_ns.max(core.warmup_ns);
    if core.now > from {
        core.rec.kv_area += u128::from(rep.kv_used) * u128::from(core.now - from);
    }
    rep.kv_since_ns = core.now;
}

/// Record replica `rep`'s KV occupancy in the measured window's peak \[tokens\].
#[inline]
fn kv_peak(core: &mut Core, rep: &Replica, unit_tokens: u64) {
    if core.now >= core.warmup_ns {
        core.rec.kv_peak_tokens = core.rec.kv_peak_tokens.max(rep.kv_used * unit_tokens);
    }
}

/// Preempt running sequence `j` of `rep`: free its KV and put it at the head of the replica's
/// queue, to be recomputed (prompt plus the tokens it had generated).
fn preempt(core: &mut Core, rep: &mut Replica, j: usize) {
    let mut s = rep.running.remove(j);
    rep.kv_used -= s.kv_held;
    if core.now >= core.warmup_ns {
        core.rec.preemptions += 1;
    }
    s.prefill_target = s.req.input_tokens + s.emitted;
    s.cached = 0;
    s.kv_held = 0;
    s.scheduled = 0;
    rep.preempted.push_front(s);
}

impl Model for Continuous {
    fn admissible(&self, req: &Request) -> bool {
        if self.paged {
            self.blocks_for(context(req)) <= self.kv_capacity
        } else {
            context(req) <= self.kv_capacity
        }
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
        kv_integrate(core, rep);
        let unit = rep.unit;
        let st = core.station_of_unit(unit);
        // Order-keeping removal: the running order is the preemption order.
        let mut keep = 0;
        for i in 0..rep.running.len() {
            let s = &mut rep.running[i];
            let mut done = false;
            if s.scheduled > 0 {
                s.cached += s.scheduled;
                s.scheduled = 0;
                if s.cached >= s.prefill_target {
                    s.emitted += 1;
                    if s.first_token_ns.is_none() {
                        s.first_token_ns = Some(now);
                    }
                    done = s.emitted >= tokens_to_emit(&s.req);
                }
            }
            if done {
                let s = &rep.running[i];
                rep.kv_used -= s.kv_held;
                self.prefix.release(r, &s.req);
                core.served(st, unit, &s.req, s.admitted_ns, s.first_token_ns);
            } else {
                // Nothing moves until the first completion: most iterations complete nothing,
                // and copying every sequence onto itself was most of this loop's time.
                if keep != i {
                    rep.running.swap(keep, i);
                }
                keep += 1;
            }
        }
        rep.running.truncate(keep);
        self.start_iteration(core, r);
    }
}
