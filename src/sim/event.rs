//! The future-event list: a binary min-heap ordered by (time, insertion sequence).
//!
//! Time is integer nanoseconds so that two events never compare equal by floating-point accident;
//! the insertion sequence breaks exact ties first-in-first-out, which makes every run reproducible
//! (STYLE.md, "Deterministic events"). An event is 24 bytes: the heap moves small values.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// One scheduled event. `payload` is opaque here; the engine packs (kind, id, generation) into it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Event {
    /// When the event fires \[ns since the start of the run\].
    pub time_ns: u64,
    /// Insertion sequence number: ties in `time_ns` fire in the order they were scheduled.
    pub seq: u64,
    /// What happens, packed by [`pack`].
    pub payload: u64,
}

impl Ord for Event {
    /// Reversed so that `BinaryHeap` (a max-heap) pops the earliest event first. `seq` is unique,
    /// so `payload` never takes part in the order.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.time_ns, other.seq).cmp(&(self.time_ns, self.seq))
    }
}

impl PartialOrd for Event {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Pack an event kind (8 bits), an object id (32 bits) and a generation (24 bits, wrapping) into
/// one word. The generation lets a model invalidate an event lazily: a stale event whose
/// generation no longer matches its object's is ignored when it fires.
#[inline]
pub(crate) fn pack(kind: u8, id: u32, generation: u32) -> u64 {
    (u64::from(kind) << 56) | (u64::from(id) << 24) | u64::from(generation & 0x00FF_FFFF)
}

/// Inverse of [`pack`]: (kind, id, generation).
#[inline]
pub(crate) fn unpack(payload: u64) -> (u8, u32, u32) {
    (
        (payload >> 56) as u8,
        ((payload >> 24) & 0xFFFF_FFFF) as u32,
        (payload & 0x00FF_FFFF) as u32,
    )
}

/// Generations wrap at 24 bits; compare them after masking.
#[inline]
pub(crate) fn generation_bits(generation: u32) -> u32 {
    generation & 0x00FF_FFFF
}

/// The pending events of one replication. Reused for the whole run: no allocation per event once
/// the heap has grown to the number of concurrently pending events.
#[derive(Debug, Default)]
pub(crate) struct EventQueue {
    heap: BinaryHeap<Event>,
    next_seq: u64,
}

impl EventQueue {
    /// An empty queue with room for `capacity` pending events.
    pub fn with_capacity(capacity: usize) -> Self {
        EventQueue {
            heap: BinaryHeap::with_capacity(capacity),
            next_seq: 0,
        }
    }

    /// Take the next insertion sequence number. Arrivals, which are not stored in the heap, draw
    /// from the same counter so that their order against scheduled events is the same as if they
    /// had been pushed.
    #[inline]
    pub fn next_seq(&mut self) -> u64 {
        let s = self.next_seq;
        self.next_seq += 1;
        s
    }

    /// Schedule `payload` at `time_ns`.
    #[inline]
    pub fn push(&mut self, time_ns: u64, payload: u64) {
        let seq = self.next_seq();
        self.heap.push(Event {
            time_ns,
            seq,
            payload,
        });
    }

    /// The earliest pending event, if any.
    #[inline]
    pub fn peek(&self) -> Option<&Event> {
        self.heap.peek()
    }

    /// Remove and return the earliest pending event.
    #[inline]
    pub fn pop(&mut self) -> Option<Event> {
        self.heap.pop()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_time_then_insertion_order() {
        let mut q = EventQueue::with_capacity(4);
        q.push(20, 1);
        q.push(10, 2);
        q.push(20, 3);
        q.push(10, 4);
        let order: Vec<u64> = std::iter::from_fn(|| q.pop().map(|e| e.payload)).collect();
        assert_eq!(order, vec![2, 4, 1, 3]);
    }

    #[test]
    fn pack_round_trips() {
        let p = pack(7, 0xDEAD_BEEF, 0x0123_4567);
        assert_eq!(unpack(p), (7, 0xDEAD_BEEF, 0x0023_4567));
        assert_eq!(generation_bits(0x0123_4567), 0x0023_4567);
    }
}
