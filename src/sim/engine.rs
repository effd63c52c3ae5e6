//! The event loop shared by every server model: arrivals, dispatch, queues with caps and
//! timeouts, warm-up, time-integrated statistics, the queue guard, and replications in parallel.
//!
//! A server model (slots, shared bandwidth, batching, continuous batching) implements
//! [`Model`] (in `core.rs`, with the [`Core`] state it works through): it decides when a station's servers take waiting requests and what its own events do. The
//! engine is generic over the model, so the choice is made once per run and the hot loop has no
//! dynamic dispatch.

use rand::RngExt;
use rand::rngs::Xoshiro256PlusPlus;
use std::sync::{Arc, Mutex};

use rayon::prelude::*;

use super::batching::Batching;
use super::continuous::Continuous;
use super::core::{Clients, Core, KIND_CLIENT, KIND_TIMEOUT, Model, Station};
use super::cutoff::{Cutoff, CutoffState, Expected};
use super::event::unpack;
use super::fast;
use super::service::to_ns;
use super::shared_bandwidth::SharedBandwidth;
use super::slots::Slots;
use super::stats::{FleetShape, Merger, RepResult, SimReport};
use super::{
    ClosedLoop, Completion, Dispatch, Engine, FleetSpec, Outcome, RunSpec, ServerModel, SimError,
    validate,
};
use crate::rng;
use crate::traffic::Request;

/// Replications simulated in parallel before they are merged (bounds memory; far more than the
/// cores of any machine this runs on, so parallelism is not limited by it).
const REPLICATION_CHUNK: u64 = 64;

/// The per-replication state of a [`Dispatch`] policy (round-robin's next unit, power-of-two's
/// random stream), which chooses the station of each arriving request.
enum DispatchState {
    Shared,
    Shortest,
    RoundRobin { next: usize },
    TwoChoices { rng: Xoshiro256PlusPlus },
}

impl DispatchState {
    fn new(d: Dispatch, seed: u64, replication: u64) -> Self {
        match d {
            Dispatch::SharedQueue => DispatchState::Shared,
            Dispatch::JoinShortestQueue => DispatchState::Shortest,
            Dispatch::RoundRobin => DispatchState::RoundRobin { next: 0 },
            Dispatch::PowerOfTwoChoices => DispatchState::TwoChoices {
                rng: rng::stream(seed, replication, rng::streams::DISPATCH),
            },
        }
    }

    #[inline]
    fn choose(&mut self, stations: &[Station]) -> usize {
        let n = stations.len();
        match self {
            DispatchState::Shared => 0,
            DispatchState::Shortest => {
                let mut best = 0;
                for (i, s) in stations.iter().enumerate().skip(1) {
                    if s.in_system < stations[best].in_system {
                        best = i;
                    }
                }
                best
            }
            DispatchState::RoundRobin { next } => {
                let i = *next;
                *next = if i + 1 == n { 0 } else { i + 1 };
                i
            }
            DispatchState::TwoChoices { rng } => {
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
    dispatcher: &mut DispatchState,
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
                if core.halted {
                    break;
                }
            }
        }
    }
    Ok(())
}

/// Play one closed-loop replication: every client sends its first request a think time after the
/// start, and each request that leaves schedules its client's next ([`Core`]'s `client_done`).
/// `requests` gives the token counts of each request sent (its arrival time is replaced by the
/// send time); when it is exhausted, or after `stop_ns`, a client sends nothing more.
fn run_closed<M: Model, I: Iterator<Item = Request>>(
    model: &mut M,
    core: &mut Core,
    dispatcher: &mut DispatchState,
    queue_cap: Option<u32>,
    clients: u32,
    stop_ns: u64,
    mut requests: I,
) {
    let cap = queue_cap.map(|c| c as usize);
    if let Some(c) = core.clients.as_mut() {
        for _ in 0..clients {
            let at = c.think.draw_ns(&mut c.rng);
            core.events.push(at, super::event::pack(KIND_CLIENT, 0, 0));
        }
    }
    while let Some(e) = core.events.pop() {
        core.advance(e.time_ns);
        let (kind, id, generation) = unpack(e.payload);
        if kind == KIND_CLIENT {
            if core.now > stop_ns {
                continue; // the run is over for this client
            }
            let Some(mut req) = requests.next() else {
                continue;
            };
            req.arrival_ns = core.now;
            arrive(model, core, dispatcher, cap, req);
        } else if kind == KIND_TIMEOUT {
            core.expire(id as usize);
        } else {
            model.on_event(core, kind, id, generation);
        }
    }
}

#[inline]
fn arrive<M: Model>(
    model: &mut M,
    core: &mut Core,
    dispatcher: &mut DispatchState,
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
    for u in 0..core.units() {
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
    replicate_guarded(
        fleet,
        seed,
        replication,
        warmup_ns,
        arrivals,
        trace,
        Stops::default(),
    )
}

/// What may stop a replication before its arrivals are exhausted, besides the default queue
/// guards.
#[derive(Default)]
struct Stops<'a> {
    /// Lower guards (waiting, in system), for tests.
    guards: Option<(u64, u64)>,
    /// Stop once the run is certain to miss a bound ([`super::cutoff`]).
    cutoff: Option<&'a Arc<CutoffState>>,
}

/// [`replicate`] with the guards optionally lowered, or stopped at a cutoff.
fn replicate_guarded<I: Iterator<Item = Request>>(
    fleet: &FleetSpec,
    seed: u64,
    replication: u64,
    warmup_ns: u64,
    arrivals: I,
    trace: bool,
    stops: Stops<'_>,
) -> Result<(RepResult, Option<Vec<Completion>>), SimError> {
    let mut core = Core::new(
        fleet,
        warmup_ns,
        rng::stream(seed, replication, rng::streams::SERVICE),
    );
    core.cutoff = stops.cutoff.cloned();
    if let Some((waiting, in_system)) = stops.guards {
        core.guard_waiting = waiting;
        core.guard_in_system = in_system;
    }
    if trace {
        core.trace = Some(Vec::new());
    }
    let mut dispatcher = DispatchState::new(fleet.dispatch, seed, replication);
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

/// One closed-loop replication.
fn replicate_closed<I: Iterator<Item = Request>>(
    fleet: &FleetSpec,
    seed: u64,
    replication: u64,
    warmup_ns: u64,
    closed: &ClosedLoop,
    requests: I,
    trace: bool,
) -> (RepResult, Option<Vec<Completion>>) {
    let mut core = Core::new(
        fleet,
        warmup_ns,
        rng::stream(seed, replication, rng::streams::SERVICE),
    );
    if trace {
        core.trace = Some(Vec::new());
    }
    core.clients = Some(Clients {
        think: closed.think,
        rng: rng::stream(seed, replication, rng::streams::THINK),
    });
    let mut dispatcher = DispatchState::new(fleet.dispatch, seed, replication);
    let stop_ns = to_ns(closed.duration_s);
    let requests = requests.take(usize::try_from(closed.max_requests).unwrap_or(usize::MAX));
    with_model!(fleet, &core, |model| run_closed(
        &mut model,
        &mut core,
        &mut dispatcher,
        fleet.queue_cap,
        closed.clients,
        stop_ns,
        requests
    ));
    finish(&mut core);
    let trace = core.trace.take();
    (core.rec, trace)
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
    merge(fleet, run, one)
}

/// [`simulate`], stopped as soon as the merged result is certain to miss a bound of `cutoff`
/// ([`super::cutoff`]): `None` then, else the report of the whole run. Fleets of the fast
/// recursion are played whole by it.
pub(crate) fn simulate_unless<F, I>(
    fleet: &FleetSpec,
    run: &RunSpec,
    cutoff: &Cutoff,
    arrivals: F,
) -> Result<Option<SimReport>, SimError>
where
    F: Fn(u64) -> I + Sync,
    I: Iterator<Item = Request>,
{
    if fast::applies(fleet) {
        return simulate(fleet, run, Engine::Auto, arrivals).map(Some);
    }
    let warmup_ns = to_ns(run.warmup_s);
    let mut expected = Expected::default();
    for rep in 0..u64::from(run.replications) {
        for r in arrivals(rep).filter(|r| r.arrival_ns >= warmup_ns) {
            expected.measured += 1;
            expected.multi_token += u64::from(r.output_tokens > 1);
        }
    }
    let tokens = matches!(fleet.server, ServerModel::ContinuousBatching { .. });
    let state = CutoffState::new(cutoff, expected, tokens);
    let one = |rep: u64| -> Result<RepResult, SimError> {
        let (r, _) = replicate_guarded(
            fleet,
            run.seed,
            rep,
            warmup_ns,
            arrivals(rep),
            false,
            Stops {
                guards: None,
                cutoff: Some(&state),
            },
        )?;
        Ok(r)
    };
    let report = merge(fleet, run, one)?;
    Ok((!state.fired()).then_some(report))
}

/// Closed-loop runs: [`ClosedLoop`] clients against `fleet`, `run.replications` times.
pub(crate) fn simulate_closed<F, I>(
    fleet: &FleetSpec,
    run: &RunSpec,
    closed: &ClosedLoop,
    requests: F,
) -> Result<SimReport, SimError>
where
    F: Fn(u64) -> I + Sync,
    I: Iterator<Item = Request>,
{
    let warmup_ns = to_ns(run.warmup_s);
    let one = |rep: u64| -> Result<RepResult, SimError> {
        Ok(replicate_closed(
            fleet,
            run.seed,
            rep,
            warmup_ns,
            closed,
            requests(rep),
            false,
        )
        .0)
    };
    merge(fleet, run, one)
}

/// The measured requests a replication served, in the order they left: those that arrived
/// after the warm-up and completed.
fn measured(trace: Option<Vec<Completion>>, warmup_ns: u64) -> Vec<Completion> {
    let mut t = trace.unwrap_or_default();
    t.retain(|c| c.outcome == super::Outcome::Served && c.request.arrival_ns >= warmup_ns);
    t
}

/// [`simulate`] (event engine) that also returns, per replication in index order, the life of
/// every measured request served: the rows behind the report's statistics.
pub(crate) fn simulate_recorded<F, I>(
    fleet: &FleetSpec,
    run: &RunSpec,
    arrivals: F,
) -> Result<(SimReport, Vec<Vec<Completion>>), SimError>
where
    F: Fn(u64) -> I + Sync,
    I: Iterator<Item = Request>,
{
    let warmup_ns = to_ns(run.warmup_s);
    let log = Mutex::new(vec![Vec::new(); run.replications as usize]);
    let one = |rep: u64| -> Result<RepResult, SimError> {
        let (r, t) = replicate(fleet, run.seed, rep, warmup_ns, arrivals(rep), true)?;
        if let Ok(mut l) = log.lock() {
            l[rep as usize] = measured(t, warmup_ns);
        }
        Ok(r)
    };
    let report = merge(fleet, run, one)?;
    Ok((report, log.into_inner().unwrap_or_default()))
}

/// [`simulate_closed`] that also returns the measured requests, as [`simulate_recorded`].
pub(crate) fn simulate_closed_recorded<F, I>(
    fleet: &FleetSpec,
    run: &RunSpec,
    closed: &ClosedLoop,
    requests: F,
) -> Result<(SimReport, Vec<Vec<Completion>>), SimError>
where
    F: Fn(u64) -> I + Sync,
    I: Iterator<Item = Request>,
{
    let warmup_ns = to_ns(run.warmup_s);
    let log = Mutex::new(vec![Vec::new(); run.replications as usize]);
    let one = |rep: u64| -> Result<RepResult, SimError> {
        let (r, t) = replicate_closed(fleet, run.seed, rep, warmup_ns, closed, requests(rep), true);
        if let Ok(mut l) = log.lock() {
            l[rep as usize] = measured(t, warmup_ns);
        }
        Ok(r)
    };
    let report = merge(fleet, run, one)?;
    Ok((report, log.into_inner().unwrap_or_default()))
}

/// Run `one(replication)` for every replication, in parallel a chunk at a time, and merge the
/// results in index order.
fn merge<G>(fleet: &FleetSpec, run: &RunSpec, one: G) -> Result<SimReport, SimError>
where
    G: Fn(u64) -> Result<RepResult, SimError> + Sync,
{
    let shape = FleetShape {
        servers_per_unit: validate::servers_per_unit(&fleet.server),
        unit_capacity_per_s: unit_capacity_per_s(&fleet.server),
        units: fleet.units,
        sheds_load: fleet.queue_cap.is_some() || fleet.timeout_s.is_some(),
        kv: match &fleet.server {
            ServerModel::ContinuousBatching {
                replicas,
                kv_capacity_tokens,
                scheduler,
                ..
            } => {
                let unit = match scheduler.kv {
                    super::KvAllocation::Reserve => 1,
                    super::KvAllocation::Paged { block_tokens } => u64::from(block_tokens.max(1)),
                };
                Some(super::stats::KvShape {
                    replicas: u64::from(*replicas) * u64::from(fleet.units),
                    capacity_units: kv_capacity_tokens / unit,
                    unit_tokens: unit,
                })
            }
            _ => None,
        },
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
            .map(&one)
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
    use crate::sim::{IterationCost, Scheduler, Variability};

    /// Continuous batching can hold many sequences in service with nobody waiting; the in-system
    /// guard stops such a run too (here lowered to 100 so the test is small: 4 replicas × 64
    /// sequences would otherwise absorb the overload without a queue for a while).
    #[test]
    fn in_system_guard_stops_a_fleet_that_absorbs_overload_in_service() {
        let fleet = FleetSpec {
            units: 4,
            server: ServerModel::ContinuousBatching {
                variability: Variability::None,
                prefix_cache: None,
                replicas: 1,
                max_batch: 64,
                kv_capacity_tokens: 1 << 30,
                scheduler: Scheduler::legacy(),
                cost: IterationCost {
                    fixed_s: 0.001,
                    prefill_s_per_token: 0.0,
                    decode_compute_s_per_seq: 0.0,
                    weight_read_s: 0.0,
                    kv_read_s_per_token: 0.0,
                    attention_s_per_pair: 0.0,
                    collective_s_per_token: 0.0,
                    compiled_context_tokens: 0.0,
                    stream_s_per_seq: 0.0,
                    attention_block_s_per_token: 0.0,
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
            prefix: 0,
        });
        let (rec, _) = replicate_guarded(
            &fleet,
            1,
            0,
            0,
            endless,
            false,
            Stops {
                guards: Some((1000, 100)),
                cutoff: None,
            },
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert!(rec.guard_tripped);
        // Stopped by the in-system guard: 101 inside, all in service, none waiting.
        assert_eq!(rec.counts.arrived_total, 101);
        assert_eq!(rec.counts.unfinished, 101);
    }
}
