//! Shared bandwidth: a many-core CPU whose cores each serve one request while the cores of a chip
//! share its memory bandwidth, so every request on a chip slows down when more cores are busy.
//!
//! # Model
//!
//! Let k be the number of busy cores on a chip and t(k) \[s\] the time one request of work 1 takes
//! when k cores stay busy throughout (`time_at_busy_s[k-1]`). A request of work w then progresses
//! at rate 1/t(k) work per second while k changes under it: a processor-sharing discipline whose
//! rate depends on the occupancy (Kleinrock, *Queueing Systems* vol. 2, 1976, §4.4).
//!
//! All requests on a chip progress at the same rate, so one *virtual clock* per chip suffices:
//!
//! ```text
//! dV/dt = 1 / t(k)         (V advances by one unit of work per request-time)
//! ```
//!
//! A request of work w started at V₀ finishes when V = V₀ + w. Finish values sit in a min-heap per
//! chip, and the chip's next completion is at `now + (V_min − V)·t(k)`. When k changes only that
//! one event is rescheduled (O(log n)); the old one is invalidated lazily by a generation counter.
//! Each request's work w is the planned service time's multiplier, drawn at the start of service
//! from the fleet's [`Variability`](super::Variability) (mean 1; exactly 1 without variability).

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap};

use super::core::{Core, Model};
use super::event::{generation_bits, pack};
use super::service::{Multiplier, NS_PER_S, round_ns};
use super::{FleetSpec, ServerModel};
use crate::traffic::Request;

const KIND_CHIP_DONE: u8 = 3;

/// One request on a chip, ordered by finish value (as `f64` bits: for non-negative finite floats
/// the bit pattern orders like the number), then by start order.
type Running = Reverse<(u64, u64, u64, Request)>;

struct Chip {
    unit: u32,
    busy: u32,
    /// Virtual clock \[work\].
    v: f64,
    /// When `v` was last brought up to date \[ns\].
    synced_ns: u64,
    generation: u32,
    running: BinaryHeap<Running>,
}

pub(crate) struct SharedBandwidth {
    cores_per_chip: u32,
    /// t(k) in ns per unit of work, k = 1..=cores.
    ns_per_work: Vec<f64>,
    chips: Vec<Chip>,
    /// Per station, its chips that have an idle core, as (busy cores, chip): the first is the
    /// least busy, ties to the lowest index. O(log chips) per change, so a shared queue over
    /// hundreds of CPUs does not scan them all for every request.
    open: Vec<BTreeSet<(u32, u32)>>,
    started: u64,
    /// Work of a request, in units of "one request alone at the chip's rate".
    work: Multiplier,
}

impl SharedBandwidth {
    pub fn new(fleet: &FleetSpec, core: &Core) -> Self {
        let (chips, cores, table, variability) = match &fleet.server {
            ServerModel::SharedBandwidth {
                chips,
                cores_per_chip,
                time_at_busy_s,
                variability,
            } => (*chips, *cores_per_chip, time_at_busy_s, variability),
            _ => {
                unreachable!("SharedBandwidth::new is only called for ServerModel::SharedBandwidth")
            }
        };
        let total = fleet.units as usize * chips as usize;
        let chip_list = (0..total)
            .map(|c| Chip {
                unit: (c / chips as usize) as u32,
                busy: 0,
                v: 0.0,
                synced_ns: 0,
                generation: 0,
                running: BinaryHeap::with_capacity(cores as usize),
            })
            .collect();
        let mut open = vec![BTreeSet::new(); core.stations()];
        for c in 0..total as u32 {
            open[core.station_of_unit(c / chips)].insert((0, c));
        }
        SharedBandwidth {
            cores_per_chip: cores,
            ns_per_work: table.iter().map(|t| t * NS_PER_S).collect(),
            chips: chip_list,
            open,
            started: 0,
            work: Multiplier::new(variability),
        }
    }

    /// Advance chip `c`'s virtual clock to now.
    #[inline]
    fn sync(&mut self, c: usize, now: u64) {
        let chip = &mut self.chips[c];
        if chip.busy > 0 {
            chip.v += (now - chip.synced_ns) as f64 / self.ns_per_work[chip.busy as usize - 1];
        }
        chip.synced_ns = now;
    }

    /// Invalidate chip `c`'s pending completion and schedule the new one.
    fn reschedule(&mut self, core: &mut Core, c: usize) {
        let chip = &mut self.chips[c];
        chip.generation = generation_bits(chip.generation.wrapping_add(1));
        if let Some(Reverse((fv_bits, ..))) = chip.running.peek() {
            let left = (f64::from_bits(*fv_bits) - chip.v).max(0.0);
            let dt = round_ns(left * self.ns_per_work[chip.busy as usize - 1]);
            core.schedule_in(dt, pack(KIND_CHIP_DONE, c as u32, chip.generation));
        }
    }
}

impl Model for SharedBandwidth {
    fn kick(&mut self, core: &mut Core, st: usize) {
        // A new request goes to the chip where it slows others least: the fewest busy cores.
        while let Some(&(busy, chip)) = self.open[st].first() {
            let Some(req) = core.dequeue(st) else { break };
            let c = chip as usize;
            self.open[st].remove(&(busy, chip));
            if busy + 1 < self.cores_per_chip {
                self.open[st].insert((busy + 1, chip));
            }
            let now = core.now;
            self.sync(c, now);
            let chip = &mut self.chips[c];
            let finish = chip.v + self.work.draw_for(req.input_tokens, &mut core.service_rng);
            chip.running
                .push(Reverse((finish.to_bits(), self.started, now, req)));
            self.started += 1;
            chip.busy += 1;
            let unit = chip.unit;
            core.busy_change(unit, 1);
            self.reschedule(core, c);
        }
    }

    fn on_event(&mut self, core: &mut Core, _kind: u8, id: u32, generation: u32) {
        let c = id as usize;
        if generation != self.chips[c].generation {
            return; // superseded by a later change of this chip's busy count
        }
        let now = core.now;
        self.sync(c, now);
        let chip = &mut self.chips[c];
        let Some(Reverse((fv_bits, _, start_ns, req))) = chip.running.pop() else {
            return;
        };
        // Rounding the event to whole ns can leave V a hair short of the finish value: snap it,
        // so the error never accumulates.
        chip.v = chip.v.max(f64::from_bits(fv_bits));
        let unit = chip.unit;
        let st = core.station_of_unit(unit);
        if chip.busy < self.cores_per_chip {
            self.open[st].remove(&(chip.busy, id));
        }
        chip.busy -= 1;
        self.open[st].insert((chip.busy, id));
        if chip.busy == 0 {
            chip.v = 0.0; // restart the clock on an idle chip to keep full precision
        }
        core.busy_change(unit, -1);
        core.served(st, unit, &req, start_ns, None);
        self.reschedule(core, c);
        self.kick(core, st);
    }
}
