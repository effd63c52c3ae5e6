//! Fast path for the commonest fleet: [`ServerModel::Slots`] behind [`Dispatch::SharedQueue`]
//! (the FIFO M/G/c queue), played by a recursion over requests instead of events.
//!
//! # Recursion
//!
//! With one FIFO queue in front of c identical servers, request n (arriving at aₙ) starts at
//!
//! ```text
//! sₙ = max(aₙ, f)      f = the earliest time any server becomes free
//! ```
//!
//! and that server is then busy until sₙ + Sₙ (Kiefer & Wolfowitz, "On the theory of queues with
//! many servers", Trans. AMS 78, 1955; Lindley's recursion for c = 1). The free times sit in a
//! min-heap of c entries, so a request costs one heap replacement instead of the general engine's
//! arrival + completion events. Everything the engine measures follows from the intervals:
//! waiting [aₙ, sₙ), in service [sₙ, dₙ), in system [aₙ, dₙ), each clipped to the window after the
//! warm-up, so the time integrals are the same sums in integer ns.
//!
//! The same random streams are drawn in the same order as the general engine (service times in
//! FIFO order of service start), and ties between free servers go to the one free longest, as the
//! engine's idle list does; so latencies, queueing delays and service times match the engine's
//! request for request. They can differ only when an arrival and a completion fall on the same
//! nanosecond with a queue cap or timeout in force (whether the freed server counts as free for
//! the newcomer), which the engine decides by event order and this path by "free at or before".
//!
//! A queue cap needs the number waiting when n arrives: the times at which accepted requests
//! leave the queue (start or drop) are non-decreasing in arrival order under FIFO, so they fit in
//! a deque popped from the front. A timeout drops n at aₙ + T when sₙ − aₙ ≥ T, without using a
//! server.

use std::collections::VecDeque;

use super::event::EventQueue;
use super::service::{ServiceSampler, to_ns};
use super::stats::RepResult;
use super::{FleetSpec, QUEUE_GUARD, ServerModel, SimError};
use crate::rng;
use crate::traffic::Request;

/// Whether the fast path can play `fleet` (it gives the same answers as the general engine).
pub(crate) fn applies(fleet: &FleetSpec) -> bool {
    matches!(fleet.server, ServerModel::Slots { .. })
        && fleet.dispatch == super::Dispatch::SharedQueue
}

/// ∫ over [from, to) clipped to start no earlier than `warmup` [ns].
#[inline(always)]
fn clipped(from: u64, to: u64, warmup: u64) -> u128 {
    u128::from(to.saturating_sub(from.max(warmup)))
}

/// Play one replication of a FIFO shared-queue slots fleet. `Ok(None)` when the queue guard
/// trips: the recursion has already accounted the future of every accepted request, so it cannot
/// report the state at the moment of stopping as the engine does; the caller replays the
/// replication with the engine instead (only unstable runs pay for that).
pub(crate) fn replicate<I: Iterator<Item = Request>>(
    fleet: &FleetSpec,
    seed: u64,
    replication: u64,
    warmup_ns: u64,
    arrivals: I,
) -> Result<Option<RepResult>, SimError> {
    let ServerModel::Slots { slots, service } = &fleet.server else {
        unreachable!("fast::replicate is only called when fast::applies");
    };
    let sampler = ServiceSampler::new(service);
    let mut service_rng = rng::stream(seed, replication, rng::streams::SERVICE);
    let timeout_ns = fleet.timeout_s.map(to_ns);
    let cap = fleet.queue_cap.map(|c| c as usize);
    let mut rec = RepResult::new(fleet.units as usize, false);

    // Free times of every slot, earliest first; ties to the one freed earliest (the heap's
    // insertion sequence), starting in the engine's interleaved order (unit 0 slot 0, unit 1
    // slot 0, ...).
    let mut free = EventQueue::with_capacity(fleet.units as usize * *slots as usize);
    for s in 0..*slots {
        for u in 0..fleet.units {
            free.push(0, u64::from(u * slots + s));
        }
    }
    // When each waiting request leaves the queue (starts or is dropped), in arrival order.
    let mut leaving: VecDeque<u64> = VecDeque::new();
    let mut previous_ns = 0u64;
    let mut end_ns = 0u64;
    let mut last_measured_arrival = None;
    let mut window_open = warmup_ns == 0;

    for req in arrivals {
        let a = req.arrival_ns;
        if a < previous_ns {
            return Err(SimError::ArrivalsOutOfOrder {
                arrival_ns: a,
                previous_ns,
            });
        }
        previous_ns = a;
        end_ns = end_ns.max(a);
        let measured = a >= warmup_ns;
        rec.counts.arrived_total += 1;
        if measured {
            rec.counts.arrived += 1;
            last_measured_arrival = Some(a);
        }
        if !window_open && measured {
            // The window opens with whoever the warm-up left waiting: those leaving after it.
            window_open = true;
            let waiting = leaving.len() - leaving.partition_point(|&t| t <= warmup_ns);
            rec.max_waiting = rec.max_waiting.max(waiting as u64);
        }
        while leaving.front().is_some_and(|&t| t <= a) {
            leaving.pop_front();
        }
        let Some(&next_free) = free.peek() else {
            break; // unreachable: validation guarantees at least one slot
        };
        let start = a.max(next_free.time_ns);
        let waits = start > a;
        if waits && cap.is_some_and(|c| leaving.len() >= c) {
            if measured {
                rec.counts.rejected_queue_full += 1;
            }
            continue;
        }
        if measured {
            rec.accepted += 1;
        }
        if let Some(t) = timeout_ns
            && start - a >= t
        {
            let dropped = a.saturating_add(t);
            leaving.push_back(dropped);
            end_ns = end_ns.max(dropped);
            rec.area_in_system += clipped(a, dropped, warmup_ns);
            rec.area_waiting += clipped(a, dropped, warmup_ns);
            if measured {
                rec.counts.timed_out += 1;
                rec.sojourn_sum_ns += u128::from(t);
            }
        } else {
            let Some(slot_event) = free.pop() else {
                break;
            };
            let slot = slot_event.payload as u32;
            let done = start.saturating_add(sampler.sample(&mut service_rng));
            free.push(done, u64::from(slot));
            if waits {
                leaving.push_back(start);
            }
            end_ns = end_ns.max(done);
            rec.area_in_system += clipped(a, done, warmup_ns);
            rec.area_waiting += clipped(a, start, warmup_ns);
            rec.busy_area[(slot / slots) as usize] += clipped(start, done, warmup_ns);
            if measured {
                let latency = done - a;
                rec.counts.completed += 1;
                rec.sojourn_sum_ns += u128::from(latency);
                rec.latency.record(latency);
                rec.queueing.record(start - a);
                rec.service.record(done - start);
            }
        }
        if a >= warmup_ns {
            rec.max_waiting = rec.max_waiting.max(leaving.len() as u64);
        }
        if leaving.len() > QUEUE_GUARD {
            return Ok(None);
        }
    }
    rec.window_ns = end_ns.saturating_sub(warmup_ns);
    rec.arrival_span_ns = last_measured_arrival.map_or(0, |t: u64| t.saturating_sub(warmup_ns));
    Ok(Some(rec))
}
