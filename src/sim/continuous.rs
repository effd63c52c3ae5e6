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
//!    Without chunking ([`Scheduler::chunked_prefill`] false) a prompt is never split: it is
//!    admitted when all of it fits what the budget has left, or as the iteration's first prompt
//!    whatever its length (TensorRT-LLM's `max_num_tokens` without chunked context). A head
//!    that does not fit blocks those behind it (first-come-first-served).
//!
//! The iteration's time is [`IterationCost::iteration_s`] of what was scheduled. At its end each
//! scheduled sequence whose prompt is complete emits one token: for a new sequence that is its
//! first token (time to first token), and a sequence completes with its `output_tokens`-th token.
//! With [`Scheduler::legacy`] (no budget, whole-context reservation) this is the scheduler before
//! chunked prefill and paged KV: whole prompts prefilled at admission, nothing ever preempted.
//!
//! # Decoding sequences in aggregate
//!
//! Most of a replica's sequences, most of the time, are decoding: each takes one token per
//! iteration and nothing else about it changes. They are kept apart from the rest ([`Decoding`])
//! and stepped together: a replica counts its iterations (`tick`), and a decoding sequence stores
//! its cached and emitted tokens as offsets from it, so one increment of `tick` advances them
//! all. What an iteration needs from them is kept as running totals — how many there are, the sum
//! of their offsets (for the attention pairs and KV read), how many cross a KV block boundary at
//! each tick (counted by the offset's phase within a block), and when each completes (ordered by
//! completion tick) — so an iteration costs time in proportion to the sequences that start,
//! finish a prompt, or complete in it, not to the batch. Two facts make this exact:
//!
//! - every decoding sequence is older than every sequence still prefilling (prompts complete in
//!   admission order: an older prompt takes the budget first, so a newer one finishes its prompt
//!   only in an iteration that finishes the older's), so scheduling "decoders first, then the
//!   rest in order" is scheduling oldest first;
//! - a sequence holds exactly the KV blocks of the tokens it has cached, so a decoding sequence
//!   needs a new block exactly when its cached count is a multiple of the block size.
//!
//! - the budget always covers the decoders: a sequence is admitted only with budget left after
//!   every running one was scheduled, so no more sequences run than the budget has tokens.
//!
//! When the decoders' new blocks do not all fit the free KV (someone is preempted), the
//! iteration is scheduled one sequence at a time in admission order, as written above.
//! tests/llm_engine_reference.rs checks the engine, request by request, against a plain
//! one-by-one implementation of these rules.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use super::core::{Core, Model};
use super::event::pack;
use super::prefix::PrefixCaches;
use super::service::{Multiplier, to_ns};
use super::{
    FleetSpec, IterationCost, IterationWork, KvAllocation, Scheduler, ServerModel, attention_pairs,
};
use crate::traffic::Request;

const KIND_ITERATION_DONE: u8 = 6;

/// The largest KV block the engine accepts \[tokens\] (vLLM's block sizes are 8–128); the
/// per-phase counts of decoding sequences take one slot per token of a block.
pub(crate) const MAX_BLOCK_TOKENS: u32 = 1024;

/// A sequence admitted to a replica that is still prefilling (or has not emitted its first
/// token), or preempted and waiting to be recomputed.
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
}

/// A running sequence past its prompt and first token: one token per iteration until it
/// completes. Its cached and emitted tokens are `tick + offset` of its replica.
struct Decoding {
    req: Request,
    admitted_ns: u64,
    first_token_ns: u64,
    /// Cached tokens − the replica's tick.
    cached_off: i64,
    /// Emitted tokens − the replica's tick.
    emitted_off: i64,
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
    /// Iterations this replica has completed: the clock of its decoding sequences.
    tick: u64,
    /// `tick` modulo the KV block size (paged), kept without a division per iteration.
    tick_in_block: u64,
    /// Admission number of the next sequence admitted (running order: lower is older).
    next_key: u64,
    /// Decoding sequences by admission number. All are older than every entry of `prefilling`.
    decoding: BTreeMap<u64, Decoding>,
    /// Σ `cached_off` over `decoding`.
    decoding_cached_off: i128,
    /// How many of `decoding` have each `cached_off`: its last key is the longest context's.
    /// Kept only when the iteration cost reads the longest context (`track_longest`).
    decoding_offsets: BTreeMap<i64, u32>,
    /// Whether the iteration cost reads the longest decoding context
    /// ([`IterationCost::attention_block_s_per_token`] > 0); without it the work reports 0 and
    /// nothing is tracked, so a run that does not need it pays nothing for it.
    track_longest: bool,
    /// Paged KV: decoding sequences by `cached_off` modulo the block size (the ones that need a
    /// block at tick t are those whose phase is −t modulo the block size).
    decoding_phase: Vec<u32>,
    /// (tick at which it emits its last token, admission number) of every decoding sequence.
    decoding_done: BTreeSet<(u64, u64)>,
    /// The first tick of `decoding_done` (`u64::MAX` when empty): read every iteration, so
    /// kept apart from the tree.
    first_done: u64,
    /// The other running sequences, oldest first, with their admission numbers.
    prefilling: Vec<(u64, Sequence)>,
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
    /// The KV allocation: paged or reserved, its capacity and its unit.
    kv: Kv,
    budget: Option<u32>,
    /// Prompts are chunked to fit the budget (else admitted whole: [`Scheduler::chunked_prefill`]).
    chunked: bool,
    cost: IterationCost,
    replicas: Vec<Replica>,
    /// Per station, idle replicas, longest idle first.
    idle: Vec<VecDeque<u32>>,
    /// Per-iteration multiplier of the iteration time.
    spread: Spread,
    prefix: PrefixCaches,
}

/// Multipliers drawn per block.
const SPREAD_BLOCK: usize = 64;

/// The per-iteration multipliers, drawn [`SPREAD_BLOCK`] at a time. The same sequence as one
/// draw per iteration (the engine's service stream feeds nothing else), but the draws of a block
/// depend neither on one another nor on the iteration they scale, so the processor overlaps the
/// log-normal's `exp` calls instead of waiting on each one in the middle of scheduling.
struct Spread {
    multiplier: Multiplier,
    block: [f64; SPREAD_BLOCK],
    next: usize,
}

impl Spread {
    fn new(multiplier: Multiplier) -> Self {
        Spread {
            multiplier,
            block: [1.0; SPREAD_BLOCK],
            next: SPREAD_BLOCK,
        }
    }

    /// The next multiplier; 1.0 without touching `rng` when there is no variability.
    #[inline]
    fn draw(&mut self, rng: &mut rand::rngs::Xoshiro256PlusPlus) -> f64 {
        if self.multiplier.is_one() {
            return 1.0;
        }
        if self.next == SPREAD_BLOCK {
            self.refill(rng);
        }
        let m = self.block[self.next];
        self.next += 1;
        m
    }

    #[inline(never)]
    fn refill(&mut self, rng: &mut rand::rngs::Xoshiro256PlusPlus) {
        for x in &mut self.block {
            *x = self.multiplier.draw(rng);
        }
        self.next = 0;
    }
}

/// The KV allocation of every replica of the engine, shared by the replica methods.
#[derive(Clone, Copy)]
struct Kv {
    paged: bool,
    /// Capacity in allocation units.
    capacity: u64,
    unit_tokens: u64,
}

impl Kv {
    /// KV held by a sequence with `tokens` tokens cached (or scheduled): blocks under paged
    /// allocation, the whole context under reservation.
    #[inline]
    fn held(self, tokens: u64, req: &Request) -> u64 {
        if self.paged {
            tokens.div_ceil(self.unit_tokens)
        } else {
            context(req)
        }
    }

    /// The phase slot of a decoding sequence's cached offset.
    #[inline]
    fn phase(self, cached_off: i64) -> usize {
        cached_off.rem_euclid(self.unit_tokens as i64) as usize
    }
}

/// The work of an iteration, summed as sequences are scheduled: in integers (exact, and no
/// int-to-float conversion per sequence), converted once.
#[derive(Default)]
struct Work {
    prefill: u64,
    decode: u64,
    pairs: u128,
    ctx_tokens: u64,
    /// The longest context among the sequences taking a decode step.
    longest_decode: u64,
}

impl Work {
    #[inline]
    fn add(&mut self, cached: u32, target: u32, n: u64) {
        if cached < target {
            self.prefill += n;
        } else {
            self.decode += 1;
            self.longest_decode = self.longest_decode.max(u64::from(cached) + n);
        }
        self.pairs += u128::from(attention_pairs(u64::from(cached), n));
        self.ctx_tokens += u64::from(cached) + n;
    }
}

impl Replica {
    fn new(unit: u32, kv: Kv, track_longest: bool) -> Self {
        Replica {
            unit,
            tick: 0,
            tick_in_block: 0,
            next_key: 0,
            decoding: BTreeMap::new(),
            decoding_cached_off: 0,
            decoding_offsets: BTreeMap::new(),
            track_longest,
            decoding_phase: vec![0; if kv.paged { kv.unit_tokens as usize } else { 0 }],
            decoding_done: BTreeSet::new(),
            first_done: u64::MAX,
            prefilling: Vec::new(),
            preempted: VecDeque::new(),
            kv_used: 0,
            kv_since_ns: 0,
            busy: false,
        }
    }

    fn running(&self) -> usize {
        self.decoding.len() + self.prefilling.len()
    }

    /// Start tracking `d` (admission number `key`) as decoding.
    fn insert_decoding(&mut self, key: u64, d: Decoding, kv: Kv) {
        self.decoding_cached_off += i128::from(d.cached_off);
        if self.track_longest {
            *self.decoding_offsets.entry(d.cached_off).or_default() += 1;
        }
        if kv.paged {
            self.decoding_phase[kv.phase(d.cached_off)] += 1;
        }
        let done = i64::from(tokens_to_emit(&d.req)) - d.emitted_off;
        self.decoding_done.insert((done as u64, key));
        self.first_done = self.first_done.min(done as u64);
        self.decoding.insert(key, d);
    }

    /// Stop tracking decoding sequence `key`.
    fn remove_decoding(&mut self, key: u64, kv: Kv) -> Decoding {
        let d = self.decoding.remove(&key).expect("a decoding sequence");
        self.decoding_cached_off -= i128::from(d.cached_off);
        if self.track_longest {
            match self.decoding_offsets.get_mut(&d.cached_off) {
                Some(n) if *n > 1 => *n -= 1,
                _ => {
                    self.decoding_offsets.remove(&d.cached_off);
                }
            }
        }
        if kv.paged {
            self.decoding_phase[kv.phase(d.cached_off)] -= 1;
        }
        let done = i64::from(tokens_to_emit(&d.req)) - d.emitted_off;
        self.decoding_done.remove(&(done as u64, key));
        self.first_done = self.decoding_done.first().map_or(u64::MAX, |&(t, _)| t);
        d
    }

    /// The longest context of the decoding sequences after the step at `tick` writes their
    /// tokens; 0 when none decodes or it is not tracked.
    #[inline]
    fn longest_decoding(&self, tick: u64) -> u64 {
        if !self.track_longest {
            return 0;
        }
        self.decoding_offsets
            .last_key_value()
            .map_or(0, |(&off, _)| (off + tick as i64 + 1) as u64)
    }

    #[inline]
    fn cached(&self, d: &Decoding) -> u64 {
        (d.cached_off + self.tick as i64) as u64
    }

    /// Preempt the newest running sequence: free its KV and put it at the head of the
    /// replica's queue, to be recomputed (prompt plus the tokens it had generated). Returns its
    /// admission number.
    fn preempt_newest(&mut self, core: &mut Core, kv: Kv) -> u64 {
        let (key, mut s) = match self.prefilling.pop() {
            Some(p) => p,
            None => {
                let (&key, _) = self.decoding.last_key_value().expect("a running sequence");
                let d = self.remove_decoding(key, kv);
                let s = Sequence {
                    cached: self.cached(&d) as u32,
                    emitted: (d.emitted_off + self.tick as i64) as u32,
                    req: d.req,
                    admitted_ns: d.admitted_ns,
                    first_token_ns: Some(d.first_token_ns),
                    prefill_target: 0,
                    scheduled: 0,
                };
                (key, s)
            }
        };
        self.kv_used -= kv.held(u64::from(s.cached + s.scheduled), &s.req);
        if core.now >= core.warmup_ns {
            core.rec.preemptions += 1;
        }
        s.prefill_target = s.req.input_tokens + s.emitted;
        s.cached = 0;
        s.scheduled = 0;
        self.preempted.push_front(s);
        key
    }

    /// Schedule every decoding sequence for one token, in admission order, when their new
    /// blocks do not all fit the free KV: the newest running sequences are preempted as needed.
    /// Returns whether the sequence being scheduled preempted itself (the rest, all newer, were
    /// preempted before it).
    fn schedule_decoding_one_by_one(
        &mut self,
        core: &mut Core,
        kv: Kv,
        budget: &mut u64,
        work: &mut Work,
        preempted_now: &mut bool,
    ) -> bool {
        let keys: Vec<u64> = self.decoding.keys().copied().collect();
        let need_phase = self.need_phase(kv);
        for key in keys {
            let Some(d) = self.decoding.get(&key) else {
                // Preempted by an older sequence's block.
                continue;
            };
            let cached = self.cached(d);
            if kv.paged && kv.phase(d.cached_off) == need_phase {
                while self.kv_used + 1 > kv.capacity {
                    *preempted_now = true;
                    if self.preempt_newest(core, kv) == key {
                        return true;
                    }
                }
                self.kv_used += 1;
            }
            work.add(cached as u32, 0, 1);
            *budget -= 1;
        }
        false
    }

    /// The phase of the decoding sequences that cross a block boundary in the next iteration:
    /// −tick modulo the block size.
    #[inline]
    fn need_phase(&self, kv: Kv) -> usize {
        need_phase_at(kv, self.tick_in_block)
    }
}

/// The phase of the decoding sequences that cross a block boundary when the tick is
/// `tick_in_block` modulo the block size: −tick modulo the block size.
#[inline]
fn need_phase_at(kv: Kv, tick_in_block: u64) -> usize {
    if !kv.paged {
        usize::MAX
    } else if tick_in_block == 0 {
        0
    } else {
        (kv.unit_tokens - tick_in_block) as usize
    }
}

/// `tick_in_block` one tick later.
#[inline]
fn next_in_block(kv: Kv, tick_in_block: u64) -> u64 {
    if tick_in_block + 1 == kv.unit_tokens {
        0
    } else {
        tick_in_block + 1
    }
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
            chunked_prefill,
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
        let track_longest = cost.attention_block_s_per_token > 0.0;
        let engine_kv = Kv {
            paged,
            capacity: kv / unit,
            unit_tokens: unit,
        };
        Continuous {
            max_batch: max_batch as usize,
            kv: engine_kv,
            budget: max_batched_tokens,
            chunked: chunked_prefill,
            cost,
            replicas: (0..fleet.units * replicas)
                .map(|r| Replica::new(r / replicas, engine_kv, track_longest))
                .collect(),
            idle,
            spread: Spread::new(Multiplier::new(variability)),
            prefix: PrefixCaches::new(fleet),
        }
    }

    /// Admit what fits, schedule and start the next iteration of replica `r`; if it has nothing
    /// to run it goes idle. Returns whether an iteration started.
    fn start_iteration(&mut self, core: &mut Core, r: u32) -> bool {
        let kv = self.kv;
        let st = core.station_of_unit(self.replicas[r as usize].unit);
        let now = core.now;
        let mut budget = self.budget.map_or(u64::MAX, u64::from);
        let chunked = self.chunked;
        let rep = &mut self.replicas[r as usize];
        kv_integrate(core, rep);
        let mut work = Work::default();
        let mut preempted_now = false;
        // 1. Running sequences, oldest first: the decoding ones (all older than the rest)
        //    together when their new blocks fit, else one by one. The budget always covers
        //    them: a sequence is admitted only with budget left after every running one was
        //    scheduled, so no more sequences run than the budget has tokens.
        let n = rep.decoding.len() as u64;
        debug_assert!(n <= budget, "{n} decoding sequences, budget {budget}");
        let need = if kv.paged {
            u64::from(rep.decoding_phase[rep.need_phase(kv)])
        } else {
            0
        };
        let mut self_preempted = false;
        if rep.kv_used + need <= kv.capacity {
            rep.kv_used += need;
            // Never underflows (the invariant above, debug-asserted); saturating all the same,
            // so a release build could only schedule less, never wrap.
            budget = budget.saturating_sub(n);
            let cached = rep.decoding_cached_off + i128::from(n) * i128::from(rep.tick);
            let cached = u64::try_from(cached).expect("cached tokens are counts");
            work.decode += n;
            // One query token each: attention_pairs(cached, 1) = cached + 1.
            work.pairs += u128::from(cached + n);
            work.ctx_tokens += cached + n;
            work.longest_decode = work.longest_decode.max(rep.longest_decoding(rep.tick));
        } else {
            self_preempted = rep.schedule_decoding_one_by_one(
                core,
                kv,
                &mut budget,
                &mut work,
                &mut preempted_now,
            );
        }
        // Then the prefilling ones, oldest first.
        let mut i = 0;
        while !self_preempted && i < rep.prefilling.len() {
            let s = &rep.prefilling[i].1;
            let want = if s.cached < s.prefill_target {
                u64::from(s.prefill_target - s.cached).min(budget)
            } else {
                1.min(budget)
            };
            if want == 0 {
                // The budget is spent: the rest wait for the next iteration.
                break;
            }
            if kv.paged {
                let need = kv
                    .held(u64::from(s.cached) + want, &s.req)
                    .saturating_sub(kv.held(u64::from(s.cached), &s.req));
                while rep.kv_used + need > kv.capacity {
                    preempted_now = true;
                    rep.preempt_newest(core, kv);
                    if rep.prefilling.len() == i {
                        // The victim was this sequence itself.
                        self_preempted = true;
                        break;
                    }
                }
                if self_preempted {
                    break;
                }
                rep.kv_used += need;
            }
            let s = &mut rep.prefilling[i].1;
            s.scheduled = want as u32;
            work.add(s.cached, s.prefill_target, want);
            budget -= want;
            i += 1;
        }
        // 2. Waiting requests, FIFO: this replica's preempted sequences, then the queue.
        while !preempted_now && rep.running() < self.max_batch && budget > 0 {
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
            let Some(want) = admitted_tokens(
                chunked,
                u64::from(target - cached).max(1),
                budget,
                work.prefill,
            ) else {
                break;
            };
            let need = if kv.paged {
                (u64::from(cached) + want).div_ceil(kv.unit_tokens)
            } else {
                // Reserve the whole context (a recompute never happens without paging).
                core.head(st).map_or(0, context)
            };
            if rep.kv_used + need > kv.capacity {
                break;
            }
            let (mut s, want) = if from_queue {
                let Some(req) = core.dequeue(st) else { break };
                // The prefix cache takes hold of the request's blocks; evicting to make room
                // for this admission may lose some of the blocks the peek counted. The sequence
                // then computes them in this chunk (as vLLM counts computed tokens after
                // allocating), which fits the KV the peek asked for: the chunk still ends at or
                // before the peek's, and a prompt completes in this iteration whenever the peek
                // said it would.
                let free = (kv.capacity - (rep.kv_used + need)) * kv.unit_tokens;
                let to_compute = self.prefix.admit(r, &req, free, core);
                let cached = req.input_tokens - to_compute as u32;
                // Whole prompts take what the admission computes even if evictions made it
                // more than the peek counted (the budget then ends at 0).
                let whole = u64::from(target - cached).max(1);
                let want = if chunked { whole.min(budget) } else { whole };
                let s = Sequence {
                    req,
                    admitted_ns: now,
                    first_token_ns: None,
                    emitted: 0,
                    cached,
                    prefill_target: target,
                    scheduled: 0,
                };
                (s, want)
            } else {
                let Some(s) = rep.preempted.pop_front() else {
                    break;
                };
                (s, want)
            };
            s.scheduled = want as u32;
            work.add(s.cached, s.prefill_target, want);
            rep.kv_used += kv.held(u64::from(s.cached) + want, &s.req);
            budget = budget.saturating_sub(want);
            let key = rep.next_key;
            rep.next_key += 1;
            rep.prefilling.push((key, s));
        }
        if rep.running() == 0 {
            if rep.busy {
                rep.busy = false;
                let unit = rep.unit;
                core.busy_change(unit, -1);
            }
            self.idle[st].push_back(r);
            return false;
        }
        let work = IterationWork {
            prefill_tokens: work.prefill as f64,
            decode_seqs: work.decode as f64,
            // Through u64 when it fits (it always does in practice): the same value, without
            // the slow 128-bit conversion, which sits behind a call the optimizer cannot hoist
            // (a closure was inlined and computed on every iteration anyway).
            attention_pairs: match u64::try_from(work.pairs) {
                Ok(p) => p as f64,
                Err(_) => wide_to_f64(work.pairs),
            },
            context_tokens: work.ctx_tokens as f64,
            longest_decode_context: work.longest_decode as f64,
        };
        kv_peak(core, rep, self.kv.unit_tokens);
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

impl Continuous {
    /// The common iteration end, done in one step: every running sequence of replica `r` is
    /// decoding, none emits its last token now, the next iteration would admit nothing (nothing
    /// waits, or there is no room), and the decoders' new KV blocks fit. The general path
    /// ([`Model::on_event`] then [`Continuous::start_iteration`]) would then only advance the
    /// tick and schedule the decoders again; this does exactly that, with the same arithmetic
    /// in the same order (so the same iteration time and the same draw), and none of the
    /// general path's checks of what cannot happen. Returns false, having changed nothing,
    /// when the case does not hold.
    #[inline]
    fn decode_only_step(&mut self, core: &mut Core, r: u32) -> bool {
        let kv = self.kv;
        let rep = &mut self.replicas[r as usize];
        if !rep.prefilling.is_empty() || !rep.preempted.is_empty() {
            return false;
        }
        let tick = rep.tick + 1;
        if rep.decoding.is_empty() || rep.first_done <= tick {
            // Nothing runs, or someone completes: the general path.
            return false;
        }
        let n = rep.decoding.len() as u64;
        let budget = self.budget.map_or(u64::MAX, u64::from);
        // The general path's admission loop runs only with room and budget left after the
        // decoders; with nothing waiting it admits nothing.
        let room = rep.decoding.len() < self.max_batch && budget.saturating_sub(n) > 0;
        if room && core.queue_len(core.station_of_unit(rep.unit)) > 0 {
            return false;
        }
        let tick_in_block = next_in_block(kv, rep.tick_in_block);
        let need = if kv.paged {
            u64::from(rep.decoding_phase[need_phase_at(kv, tick_in_block)])
        } else {
            0
        };
        if rep.kv_used + need > kv.capacity {
            // Someone is preempted: the general path.
            return false;
        }
        debug_assert!(rep.busy, "a replica ending an iteration is busy");
        debug_assert!(n <= budget, "{n} decoding sequences, budget {budget}");
        kv_integrate(core, rep);
        rep.tick = tick;
        rep.tick_in_block = tick_in_block;
        rep.kv_used += need;
        let cached = rep.decoding_cached_off + i128::from(n) * i128::from(tick);
        let cached = u64::try_from(cached).expect("cached tokens are counts");
        // One query token each: attention_pairs(cached, 1) = cached + 1.
        let work = IterationWork {
            prefill_tokens: 0.0,
            decode_seqs: n as f64,
            attention_pairs: (cached + n) as f64,
            context_tokens: (cached + n) as f64,
            longest_decode_context: rep.longest_decoding(tick) as f64,
        };
        kv_peak(core, rep, kv.unit_tokens);
        let t = self.cost.iteration_s(&work);
        let m = self.spread.draw(&mut core.service_rng);
        core.schedule_in(to_ns(t * m), pack(KIND_ITERATION_DONE, r, 0));
        true
    }
}

/// Prompt tokens a waiting sequence that would compute `whole` tokens is given when it is
/// admitted with `budget` tokens left (of a budget that covered the decoders first) and
/// `prefilled` prompt tokens already scheduled in this iteration; `None` when it must wait.
/// Chunked: as much of it as the budget has left. Whole: all of it when it fits what is left,
/// or whatever its length as the iteration's first prompt — so an iteration with room always
/// admits one, and a prompt longer than the budget (which TensorRT-LLM and vLLM V0 refuse to
/// configure) still runs.
fn admitted_tokens(chunked: bool, whole: u64, budget: u64, prefilled: u64) -> Option<u64> {
    if chunked {
        Some(whole.min(budget))
    } else if whole <= budget || prefilled == 0 {
        Some(whole)
    } else {
        None
    }
}

/// A count beyond u64 as f64: the slow 128-bit conversion, out of line and cold so that the
/// common u64 path does not pay for it.
#[cold]
#[inline(never)]
fn wide_to_f64(x: u128) -> f64 {
    x as f64
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

impl Model for Continuous {
    fn admissible(&self, req: &Request) -> bool {
        self.kv.held(context(req), req) <= self.kv.capacity
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
        if self.decode_only_step(core, r) {
            return;
        }
        let kv = self.kv;
        let now = core.now;
        let rep = &mut self.replicas[r as usize];
        kv_integrate(core, rep);
        let unit = rep.unit;
        let st = core.station_of_unit(unit);
        // Every decoding sequence scheduled takes its token (those left out were held back).
        rep.tick += 1;
        rep.tick_in_block = next_in_block(kv, rep.tick_in_block);
        // Decoding sequences emitting their last token, oldest first (they are older than the
        // prefilling ones, so this is the running order).
        while let Some(&(done, key)) = rep.decoding_done.first()
            && done <= rep.tick
        {
            let d = rep.remove_decoding(key, kv);
            rep.kv_used -= kv.held(rep.cached(&d), &d.req);
            self.prefix.release(r, &d.req);
            core.served(st, unit, &d.req, d.admitted_ns, Some(d.first_token_ns));
        }
        // The prefilling ones, in order: a completed prompt emits its first token and the
        // sequence joins the decoding ones (or completes).
        let prefilling = std::mem::take(&mut rep.prefilling);
        for (key, mut s) in prefilling {
            if s.scheduled == 0 {
                rep.prefilling.push((key, s));
                continue;
            }
            s.cached += s.scheduled;
            s.scheduled = 0;
            if s.cached < s.prefill_target {
                rep.prefilling.push((key, s));
                continue;
            }
            debug_assert!(
                rep.prefilling.is_empty(),
                "a prompt completed before an older one: decoding sequences must be the oldest"
            );
            s.emitted += 1;
            let first = *s.first_token_ns.get_or_insert(now);
            if s.emitted >= tokens_to_emit(&s.req) {
                rep.kv_used -= kv.held(u64::from(s.cached), &s.req);
                self.prefix.release(r, &s.req);
                core.served(st, unit, &s.req, s.admitted_ns, Some(first));
            } else {
                let tick = rep.tick as i64;
                let d = Decoding {
                    cached_off: i64::from(s.cached) - tick,
                    emitted_off: i64::from(s.emitted) - tick,
                    req: s.req,
                    admitted_ns: s.admitted_ns,
                    first_token_ns: first,
                };
                rep.insert_decoding(key, d, kv);
            }
        }
        self.start_iteration(core, r);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::Variability;

    /// Drawing in blocks gives the multipliers one draw per iteration would, in the same order,
    /// across block boundaries; no variability draws nothing.
    #[test]
    fn block_draws_are_the_sequential_draws() {
        let m = Multiplier::new(&Variability::lognormal(0.3));
        let mut one_by_one = crate::rng::stream(7, 1, crate::rng::streams::SERVICE);
        let expected: Vec<f64> = (0..3 * SPREAD_BLOCK + 5)
            .map(|_| m.draw(&mut one_by_one))
            .collect();
        let mut spread = Spread::new(m);
        let mut rng = crate::rng::stream(7, 1, crate::rng::streams::SERVICE);
        let got: Vec<f64> = (0..expected.len()).map(|_| spread.draw(&mut rng)).collect();
        assert_eq!(got, expected);
        assert!(got.iter().any(|&x| x != got[0]), "the draws vary");

        let mut none = Spread::new(Multiplier::new(&Variability::None));
        let mut rng = crate::rng::stream(7, 1, crate::rng::streams::SERVICE);
        let before = rng.clone();
        assert!((0..100).all(|_| none.draw(&mut rng) == 1.0));
        assert_eq!(rng, before);
    }
}
