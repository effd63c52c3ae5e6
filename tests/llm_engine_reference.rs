//! The continuous-batching engine against a plain reference implementation of the scheduler its
//! module documents (src/sim/continuous.rs): one sequence at a time, oldest first, every
//! iteration. The engine keeps its decoding sequences in aggregate (offsets from a shared tick,
//! per-phase block counts, a completion order) and schedules them one by one only when they do
//! not all fit; this checks, request by request and to the nanosecond, that it schedules exactly
//! what the one-by-one rule would — over random small fleets chosen to run out of token budget
//! (decoders left waiting, prompt chunks or whole prompts held back) and out of KV blocks
//! (preemption of decoding and prefilling sequences), under paged and whole-context allocation.

use std::collections::{BTreeMap, VecDeque};

use tco_sim::sim::{
    self, Dispatch, FleetSpec, IterationCost, IterationWork, KvAllocation, Scheduler, ServerModel,
    Variability, attention_pairs,
};
use tco_sim::traffic::Request;

/// A small deterministic generator (SplitMix64), so the cases do not depend on a crate's stream.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len() as u64) as usize]
    }
}

#[derive(Clone, Copy, Debug)]
struct Case {
    max_batch: u32,
    kv_tokens: u64,
    budget: Option<u32>,
    /// Prompts chunked to fit the budget; else admitted whole.
    chunked: bool,
    /// `None`: whole-context reservation.
    block: Option<u32>,
}

struct Seq {
    req: Request,
    first: Option<u64>,
    emitted: u32,
    cached: u32,
    target: u32,
    scheduled: u32,
    held: u64,
}

/// The scheduler as the module documents it, written the plain way.
struct Reference {
    case: Case,
    cost: IterationCost,
    capacity: u64,
    unit: u64,
    running: Vec<Seq>,
    preempted: VecDeque<Seq>,
    queue: VecDeque<Request>,
    kv_used: u64,
    preemptions: u64,
    /// arrival → (first token, end).
    done: BTreeMap<u64, (u64, u64)>,
}

impl Reference {
    fn new(case: Case, cost: IterationCost) -> Self {
        let unit = u64::from(case.block.unwrap_or(1));
        Reference {
            case,
            cost,
            capacity: case.kv_tokens / unit,
            unit,
            running: Vec::new(),
            preempted: VecDeque::new(),
            queue: VecDeque::new(),
            kv_used: 0,
            preemptions: 0,
            done: BTreeMap::new(),
        }
    }

    fn blocks(&self, tokens: u64) -> u64 {
        tokens.div_ceil(self.unit)
    }

    fn preempt(&mut self, j: usize) {
        let mut s = self.running.remove(j);
        self.kv_used -= s.held;
        self.preemptions += 1;
        s.target = s.req.input_tokens + s.emitted;
        s.cached = 0;
        s.held = 0;
        s.scheduled = 0;
        self.preempted.push_front(s);
    }

    /// Schedule the next iteration; its duration \[ns\], or `None` when nothing runs.
    fn start(&mut self) -> Option<u64> {
        let paged = self.case.block.is_some();
        let mut budget = self.case.budget.map_or(u64::MAX, u64::from);
        let mut w = IterationWork::default();
        let mut add = |cached: u32, target: u32, n: u64| {
            if cached < target {
                w.prefill_tokens += n as f64;
            } else {
                w.decode_seqs += 1.0;
            }
            w.attention_pairs += attention_pairs(u64::from(cached), n) as f64;
            w.context_tokens += (u64::from(cached) + n) as f64;
        };
        let mut preempted_now = false;
        // Prompt tokens scheduled so far in this iteration.
        let mut prefilled = 0u64;
        let mut i = 0;
        'running: while i < self.running.len() {
            let s = &self.running[i];
            let want = if s.cached < s.target {
                u64::from(s.target - s.cached).min(budget)
            } else {
                1.min(budget)
            };
            if want == 0 {
                break;
            }
            if paged {
                let need = self
                    .blocks(u64::from(s.cached) + want)
                    .saturating_sub(s.held);
                while self.kv_used + need > self.capacity {
                    let victim = self.running.len() - 1;
                    self.preempt(victim);
                    preempted_now = true;
                    if victim == i {
                        break 'running;
                    }
                }
                self.running[i].held += need;
                self.kv_used += need;
            }
            let s = &mut self.running[i];
            s.scheduled = want as u32;
            if s.cached < s.target {
                prefilled += want;
            }
            add(s.cached, s.target, want);
            budget -= want;
            i += 1;
        }
        while !preempted_now && self.running.len() < self.case.max_batch as usize && budget > 0 {
            let (target, from_queue) = match (self.preempted.front(), self.queue.front()) {
                (Some(s), _) => (s.target, false),
                (None, Some(r)) => (r.input_tokens, true),
                (None, None) => break,
            };
            // Whole prompts: all of it when it fits what is left, or as the iteration's first.
            let whole = u64::from(target).max(1);
            let want = if self.case.chunked {
                whole.min(budget)
            } else if whole <= budget || prefilled == 0 {
                whole
            } else {
                break;
            };
            let need = if paged {
                self.blocks(want)
            } else {
                // Whole context (nothing is preempted without paging).
                self.queue.front().map_or(0, |r| {
                    u64::from(r.input_tokens) + u64::from(r.output_tokens)
                })
            };
            if self.kv_used + need > self.capacity {
                break;
            }
            let mut s = if from_queue {
                let req = self.queue.pop_front().expect("a head");
                Seq {
                    req,
                    first: None,
                    emitted: 0,
                    cached: 0,
                    target,
                    scheduled: 0,
                    held: 0,
                }
            } else {
                self.preempted.pop_front().expect("a preempted head")
            };
            s.held = need;
            s.scheduled = want as u32;
            add(s.cached, s.target, want);
            if target > 0 {
                prefilled += want;
            }
            self.kv_used += need;
            budget = budget.saturating_sub(want);
            self.running.push(s);
        }
        if self.running.is_empty() {
            return None;
        }
        Some((self.cost.iteration_s(&w) * 1e9 + 0.5) as u64)
    }

    fn end(&mut self, now: u64) {
        let mut keep = Vec::new();
        for mut s in std::mem::take(&mut self.running) {
            let mut finished = false;
            if s.scheduled > 0 {
                s.cached += s.scheduled;
                s.scheduled = 0;
                if s.cached >= s.target {
                    s.emitted += 1;
                    s.first.get_or_insert(now);
                    finished = s.emitted >= s.req.output_tokens.max(1);
                }
            }
            if finished {
                self.kv_used -= s.held;
                self.done
                    .insert(s.req.arrival_ns, (s.first.expect("emitted"), now));
            } else {
                keep.push(s);
            }
        }
        self.running = keep;
    }

    fn run(mut self, reqs: &[Request]) -> (BTreeMap<u64, (u64, u64)>, u64) {
        let mut next = 0;
        let mut busy_until: Option<u64> = None;
        while next < reqs.len() || busy_until.is_some() {
            match busy_until {
                Some(end) if next == reqs.len() || end < reqs[next].arrival_ns => {
                    self.end(end);
                    busy_until = self.start().map(|d| end + d);
                }
                _ => {
                    let r = reqs[next];
                    next += 1;
                    self.queue.push_back(r);
                    if busy_until.is_none() {
                        busy_until = self.start().map(|d| r.arrival_ns + d);
                    }
                }
            }
        }
        (self.done, self.preemptions)
    }
}

fn fleet(case: Case, cost: IterationCost) -> FleetSpec {
    FleetSpec {
        units: 1,
        server: ServerModel::ContinuousBatching {
            replicas: 1,
            max_batch: case.max_batch,
            kv_capacity_tokens: case.kv_tokens,
            cost,
            variability: Variability::None,
            scheduler: Scheduler {
                max_batched_tokens: case.budget,
                chunked_prefill: case.chunked,
                kv: match case.block {
                    Some(block_tokens) => KvAllocation::Paged { block_tokens },
                    None => KvAllocation::Reserve,
                },
            },
            prefix_cache: None,
        },
        dispatch: Dispatch::SharedQueue,
        queue_cap: None,
        timeout_s: None,
    }
}

#[test]
fn the_engine_schedules_exactly_what_the_one_by_one_rule_does() {
    // Compute- and memory-bound iterations both occur (weights 1 ms against up to ~2 ms of
    // prefill), and the attention and KV terms vary with every sequence's context.
    let cost = IterationCost {
        fixed_s: 0.000_2,
        prefill_s_per_token: 0.000_03,
        decode_compute_s_per_seq: 0.000_05,
        weight_read_s: 0.001,
        kv_read_s_per_token: 0.000_002,
        attention_s_per_pair: 0.000_000_1,
        collective_s_per_token: 0.0,
        compiled_context_tokens: 0.0,
        stream_s_per_seq: 0.0,
        attention_block_s_per_token: 0.0,
    };
    let (mut preemptions, mut cases_with_preemption, mut small_budget) = (0, 0, 0);
    let mut whole_prompt_budgets = 0;
    for seed in 0..90u64 {
        let mut g = Rng(seed);
        let block = g.pick(&[None, Some(1), Some(2), Some(3), Some(4), Some(16)]);
        let budget = g.pick(&[None, Some(1), Some(3), Some(8), Some(24), Some(64)]);
        // One case in three prefills prompts whole under its budget.
        let chunked = g.below(3) != 0;
        let max_batch = g.pick(&[1, 2, 3, 8, 64]);
        let (max_in, max_out) = (40u32, 24u32);
        // From one largest context's worth of KV to room for about four.
        let unit = u64::from(block.unwrap_or(1));
        let largest = u64::from(max_in + max_out).div_ceil(unit) * unit;
        let kv_tokens = largest + g.below(3 * largest + 1);
        let case = Case {
            max_batch,
            kv_tokens,
            budget,
            chunked,
            block,
        };
        let mut t = 0u64;
        let reqs: Vec<Request> = (0..80)
            .map(|_| {
                // 0–3 ms apart, at odd nanoseconds (never on another arrival).
                t += g.below(3_000_000) | 1;
                Request {
                    arrival_ns: t,
                    input_tokens: g.below(u64::from(max_in) + 1) as u32,
                    output_tokens: 1 + g.below(u64::from(max_out)) as u32,
                    prefix: 0,
                }
            })
            .collect();
        let (want, pre) = Reference::new(case, cost.clone()).run(&reqs);
        assert_eq!(want.len(), reqs.len(), "{case:?}: the reference serves all");
        let got = sim::simulate_traced(&fleet(case, cost.clone()), 1, reqs.clone())
            .unwrap_or_else(|e| panic!("{case:?}: {e}"));
        assert_eq!(got.len(), reqs.len(), "{case:?}");
        for c in &got {
            let (first, end) = want[&c.request.arrival_ns];
            assert_eq!(
                (c.first_token_ns, c.end_ns),
                (Some(first), end),
                "seed {seed}, {case:?}: request arriving at {} ns ({} in, {} out)",
                c.request.arrival_ns,
                c.request.input_tokens,
                c.request.output_tokens
            );
        }
        preemptions += pre;
        cases_with_preemption += u32::from(pre > 0);
        small_budget += u32::from(budget.is_some_and(|b| b < max_batch));
        // Prompts of up to 40 tokens against budgets of 1–64: some held back, some oversized.
        whole_prompt_budgets += u32::from(!chunked && budget.is_some_and(|b| b < max_in));
    }
    // The cases reach the paths that matter: preemptions (of decoding and prefilling
    // sequences), and budgets smaller than the batch (prompts chunked, admissions held back).
    assert!(
        preemptions > 100 && cases_with_preemption >= 5,
        "{preemptions} preemptions in {cases_with_preemption} cases"
    );
    assert!(small_budget >= 10, "{small_budget}");
    assert!(whole_prompt_budgets >= 10, "{whole_prompt_budgets}");
}
