//! Dynamic batching on accelerators: a free device takes up to `max_batch` waiting requests; when
//! fewer are waiting it holds them until the oldest has waited `window_s` (or the batch fills),
//! then runs what is there. A batch of b requests takes `batch_time_s[b-1]`, a table `perf`
//! already padded to the compiled shapes, times the batch's draw of the fleet's
//! [`Variability`](super::Variability) (mean 1) and, for work by request size, the mean relative
//! work of its requests (sequence lengths of an encoder run at their own length). This is the policy of NVIDIA Triton's dynamic batcher
//! (`max_queue_delay_microseconds`, `max_batch_size`) and of AWS Neuron's batching servers.

use std::collections::VecDeque;

use super::core::{Core, Model};
use super::event::{generation_bits, pack};
use super::service::{Multiplier, round_ns, to_ns};
use super::{FleetSpec, ServerModel};
use crate::traffic::Request;

const KIND_BATCH_DONE: u8 = 4;
const KIND_BATCH_TIMER: u8 = 5;

struct Device {
    unit: u32,
    batch: Vec<Request>,
    start_ns: u64,
}

/// The batch timer of a station: when it is due, and its generation (older ones are stale).
#[derive(Default, Clone, Copy)]
struct Timer {
    due_ns: Option<u64>,
    generation: u32,
}

pub(crate) struct Batching {
    max_batch: usize,
    window_ns: u64,
    batch_ns: Vec<u64>,
    devices: Vec<Device>,
    /// Per station, idle devices, longest idle first.
    idle: Vec<VecDeque<u32>>,
    timers: Vec<Timer>,
    /// Per-batch multiplier of the batch time.
    spread: Multiplier,
}

impl Batching {
    pub fn new(fleet: &FleetSpec, core: &Core) -> Self {
        let (devices, max_batch, window_s, table, variability) = match &fleet.server {
            ServerModel::Batching {
                devices,
                max_batch,
                window_s,
                batch_time_s,
                variability,
            } => (*devices, *max_batch, *window_s, batch_time_s, variability),
            _ => unreachable!("Batching::new is only called for ServerModel::Batching"),
        };
        let mut idle = vec![VecDeque::new(); core.stations()];
        for d in 0..devices {
            for u in 0..fleet.units {
                idle[core.station_of_unit(u)].push_back(u * devices + d);
            }
        }
        Batching {
            max_batch: max_batch as usize,
            window_ns: to_ns(window_s),
            batch_ns: table.iter().map(|&t| to_ns(t)).collect(),
            devices: (0..fleet.units * devices)
                .map(|d| Device {
                    unit: d / devices,
                    // Grown on demand: memory follows the batches actually formed.
                    batch: Vec::new(),
                    start_ns: 0,
                })
                .collect(),
            idle,
            timers: vec![Timer::default(); core.stations()],
            spread: Multiplier::new(variability),
        }
    }
}

impl Model for Batching {
    fn kick(&mut self, core: &mut Core, st: usize) {
        while let Some(&d) = self.idle[st].front() {
            let Some(head) = core.head(st) else { break };
            let waiting = core.queue_len(st);
            let due = head.arrival_ns.saturating_add(self.window_ns);
            if waiting >= self.max_batch || core.now >= due {
                self.idle[st].pop_front();
                let b = waiting.min(self.max_batch);
                let dev = &mut self.devices[d as usize];
                for _ in 0..b {
                    if let Some(r) = core.dequeue(st) {
                        dev.batch.push(r);
                    }
                }
                dev.start_ns = core.now;
                let unit = dev.unit;
                core.busy_change(unit, 1);
                let mut t = self
                    .spread
                    .scale_ns(self.batch_ns[b - 1], &mut core.service_rng);
                if let Multiplier::BySize { .. } = self.spread {
                    // Items of different lengths: the batch does the mean of its items' work
                    // (and pads their attention to its longest when the runtime does).
                    let size = self
                        .spread
                        .batch_size_of(dev.batch.iter().map(|r| r.input_tokens));
                    t = round_ns(t as f64 * size);
                }
                core.schedule_in(t, pack(KIND_BATCH_DONE, d, 0));
            } else {
                // Hold for a fuller batch until the oldest request has waited the window.
                let t = &mut self.timers[st];
                if t.due_ns != Some(due) {
                    t.generation = generation_bits(t.generation.wrapping_add(1));
                    t.due_ns = Some(due);
                    core.schedule_at(due, pack(KIND_BATCH_TIMER, st as u32, t.generation));
                }
                break;
            }
        }
    }

    fn on_event(&mut self, core: &mut Core, kind: u8, id: u32, generation: u32) {
        if kind == KIND_BATCH_TIMER {
            let st = id as usize;
            if self.timers[st].generation == generation && self.timers[st].due_ns.is_some() {
                self.timers[st].due_ns = None;
                self.kick(core, st);
            }
            return;
        }
        let d = id as usize;
        let unit = self.devices[d].unit;
        let st = core.station_of_unit(unit);
        let start_ns = self.devices[d].start_ns;
        for r in self.devices[d].batch.drain(..) {
            core.served(st, unit, &r, start_ns, None);
        }
        core.busy_change(unit, -1);
        self.idle[st].push_back(id);
        self.kick(core, st);
    }
}
