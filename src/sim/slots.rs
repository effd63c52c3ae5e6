//! Slots: each unit has `slots` identical FIFO servers, one request each, with service times
//! drawn from a [`ServiceDist`](super::ServiceDist). This is the M/G/c queue of the textbooks
//! (Gross, Shortle, Thompson & Harris, *Fundamentals of Queueing Theory*, 4th ed., 2008, ch. 2–5)
//! and what the ground-truth tests check against.

use std::collections::VecDeque;

use super::core::{Core, Model};
use super::event::pack;
use super::service::ServiceSampler;
use super::{FleetSpec, ServerModel};
use crate::traffic::Request;

const KIND_DONE: u8 = 2;

pub(crate) struct Slots {
    sampler: ServiceSampler,
    slots_per_unit: u32,
    /// Per station, its idle slots, longest idle first (so work spreads over units).
    idle: Vec<VecDeque<u32>>,
    /// Per slot, the request in service and when it started \[ns\].
    serving: Vec<(Request, u64)>,
}

impl Slots {
    pub fn new(fleet: &FleetSpec, core: &Core) -> Self {
        let (slots, service) = match &fleet.server {
            ServerModel::Slots { slots, service } => (*slots, service),
            _ => unreachable!("Slots::new is only called for ServerModel::Slots"),
        };
        let total = fleet.units as usize * slots as usize;
        let mut idle = vec![VecDeque::new(); core.stations()];
        // Interleave units (unit 0 slot 0, unit 1 slot 0, ...) so that a light load spreads over
        // the whole fleet instead of filling unit 0 first.
        for s in 0..slots {
            for u in 0..fleet.units {
                idle[core.station_of_unit(u)].push_back(u * slots + s);
            }
        }
        Slots {
            sampler: ServiceSampler::new(service),
            slots_per_unit: slots,
            idle,
            serving: vec![(Request::default(), 0); total],
        }
    }

    #[inline]
    fn start(&mut self, core: &mut Core, slot: u32, req: Request) {
        let service_ns = self.sampler.sample(&mut core.service_rng);
        self.serving[slot as usize] = (req, core.now);
        core.schedule_in(service_ns, pack(KIND_DONE, slot, 0));
    }
}

impl Model for Slots {
    #[inline]
    fn kick(&mut self, core: &mut Core, st: usize) {
        while let Some(&slot) = self.idle[st].front() {
            let Some(req) = core.dequeue(st) else { break };
            self.idle[st].pop_front();
            core.busy_change(slot / self.slots_per_unit, 1);
            self.start(core, slot, req);
        }
    }

    #[inline]
    fn on_event(&mut self, core: &mut Core, _kind: u8, slot: u32, _generation: u32) {
        let unit = slot / self.slots_per_unit;
        let st = core.station_of_unit(unit);
        let (req, start_ns) = self.serving[slot as usize];
        core.served(st, unit, &req, start_ns, None);
        // A waiting request means no slot of this station is idle, so this one takes it.
        if let Some(next) = core.dequeue(st) {
            self.start(core, slot, next);
        } else {
            core.busy_change(unit, -1);
            self.idle[st].push_back(slot);
        }
    }
}
