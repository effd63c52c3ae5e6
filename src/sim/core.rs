//! The engine state every server model works through — clock, future-event list, station
//! queues, time-integrated statistics — and the [`Model`] trait a server model implements.
//!
//! It sits below both the engine loop (`engine.rs`) and the models (`slots.rs`, `batching.rs`,
//! `shared_bandwidth.rs`, `continuous.rs`), so the models depend on it rather than on the engine
//! that drives them.

use std::collections::VecDeque;
use std::sync::Arc;

use rand::rngs::Xoshiro256PlusPlus;

use super::cutoff::CutoffState;
use super::event::{EventQueue, pack};
use super::service::to_ns;
use super::stats::RepResult;
use super::{Completion, Dispatch, FleetSpec, IN_SYSTEM_GUARD, Outcome, QUEUE_GUARD, ServerModel};
use crate::traffic::Request;

/// Event kind owned by the engine: the head of a station's queue may have timed out.
pub(crate) const KIND_TIMEOUT: u8 = 1;
/// Event kind owned by the engine: a closed-loop client sends its next request.
pub(crate) const KIND_CLIENT: u8 = 7;

/// The clients of a closed-loop run: every request that leaves (served or dropped) sends its
/// client's next one a think time later.
pub(crate) struct Clients {
    pub think: super::ThinkTime,
    pub rng: Xoshiro256PlusPlus,
}

/// A FIFO queue with a pool of servers. The pool itself lives in the model.
#[derive(Debug, Default)]
pub(crate) struct Station {
    pub(super) queue: VecDeque<Request>,
    /// Requests in this station: waiting + in service (what dispatchers compare).
    pub(super) in_system: u32,
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
    pub(super) stations: Vec<Station>,
    shared: bool,
    timeout_ns: Option<u64>,
    pub(super) warmup_ns: u64,
    /// Last time the time integrals were brought up to date \[ns\].
    pub(super) last_ns: u64,
    pub(super) waiting: u64,
    pub(super) in_system: u64,
    units: Vec<UnitBusy>,
    /// Time of the last arrival, departure or drop \[ns\]: the end of the measured window.
    pub(super) last_change_ns: u64,
    pub(super) last_measured_arrival_ns: Option<u64>,
    pub rec: RepResult,
    pub(super) trace: Option<Vec<Completion>>,
    /// Stop when more than this many wait ([`QUEUE_GUARD`]; lowered only by tests).
    pub(super) guard_waiting: u64,
    /// Stop when more than this many are inside ([`IN_SYSTEM_GUARD`]; lowered only by tests).
    pub(super) guard_in_system: u64,
    /// Closed-loop runs only: the clients whose next requests completions trigger.
    pub(super) clients: Option<Clients>,
    /// Stop as soon as the run is certain to miss a bound ([`super::cutoff`]).
    pub(super) cutoff: Option<Arc<CutoffState>>,
    /// The cutoff fired: the engine loop stops.
    pub(super) halted: bool,
}

impl Core {
    pub(super) fn new(fleet: &FleetSpec, warmup_ns: u64, service_rng: Xoshiro256PlusPlus) -> Self {
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
            clients: None,
            cutoff: None,
            halted: false,
        }
    }

    /// The station that serves unit `unit`.
    #[inline]
    pub fn station_of_unit(&self, unit: u32) -> usize {
        if self.shared { 0 } else { unit as usize }
    }

    /// Number of units in the fleet.
    pub(super) fn units(&self) -> usize {
        self.units.len()
    }

    /// Number of stations (1 for a shared queue, else one per unit).
    pub fn stations(&self) -> usize {
        self.stations.len()
    }

    /// Bring the time integrals up to `t` with the counts that held since the last event, then
    /// move the clock. Only the part after the warm-up is integrated.
    #[inline]
    pub(super) fn advance(&mut self, t: u64) {
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

    pub(super) fn enqueue(&mut self, st: usize, req: Request) {
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
            rec.input_tokens += u64::from(req.input_tokens);
            rec.output_tokens += u64::from(req.output_tokens.max(1));
            rec.sojourn_sum_ns += u128::from(latency);
            rec.latency.record(latency);
            rec.queueing.record(start_ns - req.arrival_ns);
            rec.service.record(now - start_ns);
            let (mut ttft, mut tpot) = (None, None);
            if let Some(ft) = first_token_ns {
                if let Some(h) = rec.ttft.as_mut() {
                    let t = ft - req.arrival_ns;
                    h.record(t);
                    ttft = Some(t);
                }
                let tokens = req.output_tokens.max(1);
                if tokens > 1
                    && let Some(h) = rec.tpot.as_mut()
                {
                    let t = (now - ft) / u64::from(tokens - 1);
                    h.record(t);
                    tpot = Some(t);
                }
            }
            if let Some(c) = &self.cutoff {
                self.halted |= c.observe(
                    (latency, &rec.latency),
                    ttft.zip(rec.ttft.as_ref()),
                    tpot.zip(rec.tpot.as_ref()),
                );
            }
        }
        self.client_done();
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

    /// A request left: in a closed loop its client sends the next one a think time from now.
    #[inline]
    fn client_done(&mut self) {
        if let Some(c) = self.clients.as_mut() {
            let at = self.now.saturating_add(c.think.draw_ns(&mut c.rng));
            self.events.push(at, pack(KIND_CLIENT, 0, 0));
        }
    }

    pub(super) fn dropped(&mut self, req: &Request, outcome: Outcome) {
        self.client_done();
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
    pub(super) fn expire(&mut self, st: usize) {
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
