//! The event loop shared by every server model: arrivals, dispatch, queues with caps and
//! timeouts, warm-up, time-integrated statistics, the queue guard, and replications in parallel.
//!
//! A server model (slots, shared bandwidth, batching, continuous batching) implements [`Model`]:
//! it decides when a station's servers take waiting requests and what its own events do. The
//! engine is generic over the model, so the choice is made once per run and the hot loop has no
//! dynamic dispatch.

use std::collections::VecDeque;

use rand::RngExt;
use rand::rngs::Xoshiro256PlusPlus;
use rayon::prelude::*;

use super::batching::Batching;
use super::continuous::Continuous;
use super::event::{EventQueue, pack, unpack};
use super::fast;
use super::service::to_ns;
use super::shared_bandwidth::SharedBandwidth;
use super::slots::Slots;
use super::stats::{FleetShape, Merger, RepResult, SimReport};
use super::{
    Completion, Dispatch, Engine, FleetSpec, IN_SYSTEM_GUARD, Outcome, QUEUE_GUARD, RunSpec,
    ServerModel, SimError, validate,
};
use crate::rng;
use crate::traffic::Request;

/// Replications simulated in parallel before they are merged (bounds memory; far more than the
/// cores of any machine this runs on, so parallelism is not limited by it).
const REPLICATION_CHUNK: u64 = 64;

/// Event kind owned by the engine: the head of a station's queue may have timed out.
pub(crate) const KIND_TIMEOUT: u8 = 1;

/// A FIFO queue with a pool of servers. The pool itself lives in the model.
#[derive(Debug, Default)]
pub(crate) struct Station {
    queue: VecDeque<Request>,
    /// Requests in this station: waiting + in service (what dispatchers compare).
    in_system: u32,
    /// A timeout check is pending for this station.
    timeout_armed: bool,
}

/// Busy servers of one unit, integrated over time.
#[derive(Debug, Default, Clone)]
struct UnitBusy {
    busy: u32,
    last_ns: u64,
}

/// The engine state a model works through: clock, events, queues, statistics.
pub(crate) struct Core {
    /// Current simulated time \[ns\].
    pub now: u64,
    pub events: EventQueue,
    /// Stream [`rng::streams::SERVICE`] of this replication.
    pub service_rng: Xoshiro256PlusPlus,
    stations: Vec<Station>,
    shared: bool,
    timeout_ns: Option<u64>,
    warmup_ns: u64,
    /// Last time the time integrals were brought up to date \[ns\].
    last_ns: u64,
    waiting: u64,
    in_system: u64,
    units: Vec<UnitBusy>,
    /// Time of the last arrival, departure or drop \[ns\]: the end of the measured window.
    last_change_ns: u64,
    last_measured_arrival_ns: Option<u64>,
    pub rec: RepResult,
    trace: Option<Vec<Completion>>,
    /// Stop when more than this many wait ([`QUEUE_GUARD`]; lowered only by tests).
    guard_waiting: u64,
    /// Stop when more than this many are inside ([`IN_SYSTEM_GUARD`]; lowered only by tests).
    guard_in_system: u64,
}

impl Core {
    fn new(fleet: &FleetSpec, warmup_ns: u64, service_rng: Xoshiro256PlusPlus) -> Self {
        let shared = fleet.dispatch == Dispatch::SharedQueue;
        let n_stations = if shared { 1 } else { fleet.units as usize };
        let tokens = matches!(fleet.server, ServerModel::ContinuousBatching { .. });
        Core {
            now: 0,
            events: EventQueue::with_capacity(1024),
            service_rng,
            stations: (0..n_stations).map(|_| Station::default()).collect(),
            shared,
            timeout_ns: fleet.timeout_s.map(to_ns),
            warmup_ns,
            last_ns: 0,
            waiting: 0,
            in_system: 0,
            units: vec![UnitBusy::default(); fleet.units as usize],
            last_change_ns: 0,
            last_measured_arrival_ns: None,
            rec: RepResult::new(fleet.units as usize, tokens),
            trace: None,
            guard_waiting: QUEUE_GUARD as u64,
            guard_in_system: IN_SYSTEM_GUARD as u64,
        }
    }

    /// The station that serves unit `unit`.
    #[inline]
    pub fn station_of_unit(&self, unit: u32) -> usize {
        if self.shared { 0 } else { unit as usize }
    }

    /// Number of stations (1 for a shared queue, else one per unit).
    pub fn stations(&self) -> usize {
        self.stations.len()
    }

    /// Bring the time integrals up to `t` with the counts that held since the last event, then
    /// move the clock. Only the part after the warm-up is integrated.
    #[inline]
    fn advance(&mut self, t: u64) {
        if t > self.last_ns {
            let from = self.last_ns.max(self.warmup_ns);
            if t > from {
                let dt = u128::from(t - from);
                self.rec.area_in_system += u128::from(self.in_system) * dt;
                self.rec.area_waiting += u128::from(self.waiting) * dt;
            }
            if self.last_ns < self.warmup_ns && t >= self.warmup_ns {
                // The window opens with whatever the warm-up left waiting.
                self.rec.max_waiting = self.rec.max_waiting.max(self.waiting);
            }
            self.last_ns = t;
        }
        self.now = t;
    }

    /// Schedule a model event `delay_ns` from now.
    #[inline]
    pub fn schedule_in(&mut self, delay_ns: u64, payload: u64) {
        self.events.push(self.now.saturating_add(delay_ns), payload);
    }

    /// Schedule a model event at `time_ns`.
    #[inline]
    pub fn schedule_at(&mut self, time_ns: u64, payload: u64) {
        self.events.push(time_ns, payload);
    }

    /// Requests waiting at station `st`.
    #[inline]
    pub fn queue_len(&self, st: usize) -> usize {
        self.stations[st].queue.len()
    }

    /// The oldest request waiting at station `st`.
    #[inline]
    pub fn head(&self, st: usize) -> Option<&Request> {
        self.stations[st].queue.front()
    }

    /// Take the oldest waiting request of station `st` into service.
    #[inline]
    pub fn dequeue(&mut self, st: usize) -> Option<Request> {
        let r = self.stations[st].queue.pop_front();
        if r.is_some() {
            self.waiting -= 1;
        }
        r
    }

    fn enqueue(&mut self, st: usize, req: Request) {
        let s = &mut self.stations[st];
        s.queue.push_back(req);
        s.in_system += 1;
        self.in_system += 1;
        self.waiting += 1;
        if let Some(timeout) = self.timeout_ns
            && !s.timeout_armed
            && let Some(head) = s.queue.front()
        {
            s.timeout_armed = true;
            let at = head.arrival_ns.saturating_add(timeout);
            self.events.push(at, pack(KIND_TIMEOUT, st as u32, 0));
        }
    }

    /// Unit `unit` gains (`+1`) or loses (`-1`) a busy server now.
    #[inline]
    pub fn busy_change(&mut self, unit: u32, delta: i32) {
        let u = &mut self.units[unit as usize];
        let from = u.last_ns.max(self.warmup_ns);
        if self.now > from {
            self.rec.busy_area[unit as usize] += u128::from(u.busy) * u128::from(self.now - from);
        }
        u.last_ns = self.now;
        u.busy = u.busy.wrapping_add_signed(delta);
    }

    /// A request leaves station `st` served by `unit`, having started service at `start_ns`.
    /// `first_token_ns` is set by continuous batching.
    #[inline]
    pub fn served(
        &mut self,
        st: usize,
        unit: u32,
        req: &Request,
        start_ns: u64,
        first_token_ns: Option<u64>,
    ) {
        let now = self.now;
        self.stations[st].in_system -= 1;
        self.in_system -= 1;
        self.last_change_ns = now;
        if req.arrival_ns >= self.warmup_ns {
            let latency = now - req.arrival_ns;
            let rec = &mut self.rec;
            rec.counts.completed += 1;
            rec.sojourn_sum_ns += u128::from(latency);
            rec.latency.record(latency);
            rec.queueing.record(start_ns - req.arrival_ns);
            rec.service.record(now - start_ns);
            if let Some(ft) = first_token_ns {
                if let Some(h) = rec.ttft.as_mut() {
                    h.record(ft - req.arrival_ns);
                }
                let tokens = req.output_tokens.max(1);
                if tokens > 1
                    && let Some(h) = rec.tpot.as_mut()
                {
                    h.record((now - ft) / u64::from(tokens - 1));
                }
            }
        }
        if let Some(t) = self.trace.as_mut() {
            t.push(Completion {
                request: *req,
                outcome: Outcome::Served,
                unit: Some(unit),
                start_ns,
                end_ns: now,
                first_token_ns,
            });
        }
    }

    fn dropped(&mut self, req: &Request, outcome: Outcome) {
        if let Some(t) = self.trace.as_mut() {
            t.push(Completion {
                request: *req,
                outcome,
                unit: None,
                start_ns: self.now,
                end_ns: self.now,
                first_token_ns: None,
            });
        }
    }

    /// A timeout check fired at station `st`: drop every head that has waited `timeout_ns`, then
    /// re-arm for the new head. Heads are always the oldest, so only heads can time out.
    fn expire(&mut self, st: usize) {
        let Some(timeout) = self.timeout_ns else {
            return;
        };
        self.stations[st].timeout_armed = false;
        while let Some(&head) = self.stations[st].queue.front() {
            if head.arrival_ns.saturating_add(timeout) > self.now {
                break;
            }
            self.stations[st].queue.pop_front();
            self.stations[st].in_system -= 1;
            self.in_system -= 1;
            self.waiting -= 1;
            self.last_change_ns = self.now;
            if head.arrival_ns >= self.warmup_ns {
                self.rec.counts.timed_out += 1;
                self.rec.sojourn_sum_ns += u128::from(self.now - head.arrival_ns);
            }
            self.dropped(&head, Outcome::TimedOut);
        }
        if let Some(head_arrival_ns) = self.stations[st].queue.front().map(|h| h.arrival_ns) {
            self.stations[st].timeout_armed = true;
            let at = head_arrival_ns.saturating_add(timeout);
            self.events.push(at, pack(KIND_TIMEOUT, st as u32, 0));
        }
    }
}

/// A server model: when servers take work, and what its own events do.
pub(crate) trait Model {
    /// Start whatever work station `st` can start now (after an arrival, or after capacity
    /// freed up).
    fn kick(&mut self, core: &mut Core, st: usize);
    /// One of the model's own events fired.
    fn on_event(&mut self, core: &mut Core, kind: u8, id: u32, generation: u32);
    /// False when the request can never be served and must be rejected at arrival.
    fn admissible(&self, _req: &Request) -> bool {
        true
    }
}

/// Chooses the station of an arriving request.
enum Dispatcher {
    Shared,
    Shortest,
    RoundRobin { next: usize },
    TwoChoices { rng: Xoshiro256PlusPlus },
}

impl Dispatcher {
    fn new(d: Dispatch, seed: u64, replication: u64) -> Self {
        match d {
            Dispatch::SharedQueue => Dispatcher::Shared,
            Dispatch::JoinShortestQueue => Dispatcher::Shortest,
            Dispatch::RoundRobin => Dispatcher::RoundRobin { next: 0 },
            Dispatch::PowerOfTwoChoices => Dispatcher::TwoChoices {
                rng: rng::stream(seed, replication, rng::streams::DISPATCH),
            },
        }
    }

    #[inline]
    fn choose(&mut self, stations: &[Station]) -> usize {
        let n = stations.len();
        match self {
            Dispatcher::Shared => 0,
            Dispatcher::Shortest => {
                let mut best = 0;
                for (i, s) in stations.iter().enumerate().skip(1) {
                    if s.in_system < stations[best].in_system {
                        best = i;
                    }
                }
                best
            }
            Dispatcher::RoundRobin { next } => {
                let i = *next;
                *next = if i + 1 == n { 0 } else { i + 1 };
                i
            }
            Dispatcher::TwoChoices { rng } => {
                if n == 1 {
                    return 0;
                }
                let a = rng.random_range(0..n);
                let mut b = rng.random_range(0..n - 1);
                if b >= a {
                    b += 1;
                }
                if stations[b].in_system < stations[a].in_system {
                    b
                } else {
                    a
                }
            }
        }
    }
}

/// Play one replication to the end (or until the queue guard trips).
fn run_loop<M: Model, I: Iterator<Item = Request>>(
    model: &mut M,
    core: &mut Core,
    dispatcher: &mut Dispatcher,
    queue_cap: Option<u32>,
    mut arrivals: I,
) -> Result<(), SimError> {
    let cap = queue_cap.map(|c| c as usize);
    let mut next = arrivals.next().map(|r| (r, core.events.next_seq()));
    let mut previous_arrival_ns = 0u64;
    loop {
        // The next arrival competes with the heap on (time, seq), exactly as if it were in it.
        let arrival_first = match (&next, core.events.peek()) {
            (Some((r, s)), Some(e)) => (r.arrival_ns, *s) < (e.time_ns, e.seq),
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => break,
        };
        if arrival_first {
            let Some((req, _)) = next.take() else { break };
            if req.arrival_ns < previous_arrival_ns {
                return Err(SimError::ArrivalsOutOfOrder {
                    arrival_ns: req.arrival_ns,
                    previous_ns: previous_arrival_ns,
                });
            }
            previous_arrival_ns = req.arrival_ns;
            core.advance(req.arrival_ns);
            arrive(model, core, dispatcher, cap, req);
            if core.waiting > core.guard_waiting || core.in_system > core.guard_in_system {
                core.rec.guard_tripped = true;
                break;
            }
            next = arrivals.next().map(|r| (r, core.events.next_seq()));
        } else {
            let Some(e) = core.events.pop() else { break };
            core.advance(e.time_ns);
            let (kind, id, generation) = unpack(e.payload);
            if kind == KIND_TIMEOUT {
                core.expire(id as usize);
            } else {
                model.on_event(core, kind, id, generation);
            }
        }
    }
    Ok(())
}

#[inline]
fn arrive<M: Model>(
    model: &mut M,
    core: &mut Core,
    dispatcher: &mut Dispatcher,
    cap: Option<usize>,
    req: Request,
) {
    let measured = req.arrival_ns >= core.warmup_ns;
    core.rec.counts.arrived_total += 1;
    core.last_change_ns = core.now;
    if measured {
        core.rec.counts.arrived += 1;
        core.last_measured_arrival_ns = Some(req.arrival_ns);
    }
    if !model.admissible(&req) {
        if measured {
            core.rec.counts.rejected_too_large += 1;
        }
        core.dropped(&req, Outcome::RejectedTooLarge);
        return;
    }
    let st = dispatcher.choose(&core.stations);
    core.enqueue(st, req);
    model.kick(core, st);
    if let Some(cap) = cap
        && core.stations[st].queue.len() > cap
    {
        // The queue held `cap` before this arrival and nothing could start, so the newcomer is
        // the one at the back: it is turned away and never counted as in the system.
        let s = &mut core.stations[st];
        s.queue.pop_back();
        s.in_system -= 1;
        core.in_system -= 1;
        core.waiting -= 1;
        if measured {
            core.rec.counts.rejected_queue_full += 1;
        }
        core.dropped(&req, Outcome::RejectedQueueFull);
    } else if measured {
        core.rec.accepted += 1;
    }
    // The queue only grows at arrivals, so its maximum is seen here, after a full queue has
    // turned the newcomer away.
    if core.now >= core.warmup_ns {
        core.rec.max_waiting = core.rec.max_waiting.max(core.waiting);
    }
}

/// Close the books of a finished (or stopped) replication.
fn finish(core: &mut Core) {
    let end = if core.rec.guard_tripped {
        core.now
    } else {
        core.last_change_ns
    };
    core.advance(end.max(core.last_ns));
    for u in 0..core.units.len() {
        core.busy_change(u as u32, 0);
    }
    core.rec.window_ns = end.saturating_sub(core.warmup_ns);
    core.rec.arrival_span_ns = core
        .last_measured_arrival_ns
        .map_or(0, |t| t.saturating_sub(core.warmup_ns));
    // Requests still inside when an unstable run was stopped (0 after a normal drain).
    core.rec.counts.unfinished =
        core.rec.accepted - core.rec.counts.completed - core.rec.counts.timed_out;
}

/// Build the model for `fleet` and run `body` with it: the one place the server model is matched.
macro_rules! with_model {
    ($fleet:expr, $core:expr, |$m:ident| $body:expr) => {
        match &$fleet.server {
            ServerModel::Slots { .. } => {
                let mut $m = Slots::new($fleet, $core);
                $body
            }
            ServerModel::SharedBandwidth { .. } => {
                let mut $m = SharedBandwidth::new($fleet, $core);
                $body
            }
            ServerModel::Batching { .. } => {
                let mut $m = Batching::new($fleet, $core);
                $body
            }
            ServerModel::ContinuousBatching { .. } => {
                let mut $m = Continuous::new($fleet, $core);
                $body
            }
        }
    };
}

fn replicate<I: Iterator<Item = Request>>(
    fleet: &FleetSpec,
    seed: u64,
    replication: u64,
    warmup_ns: u64,
    arrivals: I,
    trace: bool,
) -> Result<(RepResult, Option<Vec<Completion>>), SimError> {
    replicate_guarded(fleet, seed, replication, warmup_ns, arrivals, trace, None)
}

/// [`replicate`] with the guards optionally lowered to (waiting, in system), for tests.
fn replicate_guarded<I: Iterator<Item = Request>>(
    fleet: &FleetSpec,
    seed: u64,
    replication: u64,
    warmup_ns: u64,
    arrivals: I,
    trace: bool,
    guards: Option<(u64, u64)>,
) -> Result<(RepResult, Option<Vec<Completion>>), SimError> {
    let mut core = Core::new(
        fleet,
        warmup_ns,
        rng::stream(seed, replication, rng::streams::SERVICE),
    );
    if let Some((waiting, in_system)) = guards {
        core.guard_waiting = waiting;
        core.guard_in_system = in_system;
    }
    if trace {
        core.trace = Some(Vec::new());
    }
    let mut dispatcher = Dispatcher::new(fleet.dispatch, seed, replication);
    with_model!(fleet, &core, |model| run_loop(
        &mut model,
        &mut core,
        &mut dispatcher,
        fleet.queue_cap,
        arrivals
    ))?;
    finish(&mut core);
    let trace = core.trace.take();
    Ok((core.rec, trace))
}

/// Maximum throughput of one unit \[1/s\], for the offered-load check; `None` where the model has
/// no simple bound (continuous batching depends on the token mix).
fn unit_capacity_per_s(server: &ServerModel) -> Option<f64> {
    let cap = match server {
        ServerModel::Slots { slots, service } => {
            f64::from(*slots) / super::service::mean_s(service)
        }
        ServerModel::SharedBandwidth {
            chips,
            time_at_busy_s,
            ..
        } => {
            // A chip with k busy cores completes k / t(k) requests per second.
            let per_chip = time_at_busy_s
                .iter()
                .enumerate()
                .map(|(i, t)| (i + 1) as f64 / t)
                .fold(0.0, f64::max);
            f64::from(*chips) * per_chip
        }
        ServerModel::Batching {
            devices,
            batch_time_s,
            ..
        } => {
            let per_device = batch_time_s
                .iter()
                .enumerate()
                .map(|(i, t)| (i + 1) as f64 / t)
                .fold(0.0, f64::max);
            f64::from(*devices) * per_device
        }
        ServerModel::ContinuousBatching { .. } => return None,
    };
    cap.is_finite().then_some(cap)
}

pub(crate) fn simulate<F, I>(
    fleet: &FleetSpec,
    run: &RunSpec,
    engine: Engine,
    arrivals: F,
) -> Result<SimReport, SimError>
where
    F: Fn(u64) -> I + Sync,
    I: Iterator<Item = Request>,
{
    let warmup_ns = to_ns(run.warmup_s);
    let fast = engine == Engine::Auto && fast::applies(fleet);
    let one = |rep: u64| -> Result<RepResult, SimError> {
        if fast && let Some(r) = fast::replicate(fleet, run.seed, rep, warmup_ns, arrivals(rep))? {
            return Ok(r);
        }
        replicate(fleet, run.seed, rep, warmup_ns, arrivals(rep), false).map(|r| r.0)
    };
    let shape = FleetShape {
        servers_per_unit: validate::servers_per_unit(&fleet.server),
        unit_capacity_per_s: unit_capacity_per_s(&fleet.server),
        units: fleet.units,
        sheds_load: fleet.queue_cap.is_some() || fleet.timeout_s.is_some(),
    };
    let mut merger = Merger::new(
        shape,
        matches!(fleet.server, ServerModel::ContinuousBatching { .. }),
        &run.quantiles,
    );
    // Replications run in parallel a chunk at a time and are merged in index order: memory
    // holds one chunk of histograms (~1 MB each) however many replications are asked for.
    let total = u64::from(run.replications);
    let mut first = 0;
    while first < total {
        let last = (first + REPLICATION_CHUNK).min(total);
        let chunk: Vec<RepResult> = (first..last)
            .into_par_iter()
            .map(one)
            .collect::<Result<_, _>>()?;
        for r in &chunk {
            merger.add(r);
        }
        first = last;
    }
    Ok(merger.finish())
}

pub(crate) fn simulate_traced<I: Iterator<Item = Request>>(
    fleet: &FleetSpec,
    seed: u64,
    arrivals: I,
) -> Result<Vec<Completion>, SimError> {
    let (_, trace) = replicate(fleet, seed, 0, 0, arrivals, true)?;
    Ok(trace.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::IterationCost;

    /// Continuous batching can hold many sequences in service with nobody waiting; the in-system
    /// guard stops such a run too (here lowered to 100 so the test is small: 4 replicas × 64
    /// sequences would otherwise absorb the overload without a queue for a while).
    #[test]
    fn in_system_guard_stops_a_fleet_that_absorbs_overload_in_service() {
        let fleet = FleetSpec {
            units: 4,
            server: ServerModel::ContinuousBatching {
                replicas: 1,
                max_batch: 64,
                kv_capacity_tokens: 1 << 30,
                cost: IterationCost {
                    fixed_s: 0.001,
                    prefill_s_per_token: 0.0,
                    decode_compute_s_per_seq: 0.0,
                    weight_read_s: 0.0,
                    kv_read_s_per_token: 0.0,
                },
            },
            dispatch: Dispatch::RoundRobin,
            queue_cap: None,
            timeout_s: None,
        };
        let endless = (1u64..).map(|i| Request {
            arrival_ns: i * 10_000,
            input_tokens: 1,
            output_tokens: 100_000,
        });
        let (rec, _) = replicate_guarded(&fleet, 1, 0, 0, endless, false, Some((1000, 100)))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(rec.guard_tripped);
        // Stopped by the in-system guard: 101 inside, all in service, none waiting.
        assert_eq!(rec.counts.arrived_total, 101);
        assert_eq!(rec.counts.unfinished, 101);
    }
}
