//! The future-event list: a binary min-heap ordered by (time, insertion sequence).
//!
//! Time is integer nanoseconds so that two events never compare equal by floating-point accident;
//! the insertion sequence breaks exact ties first-in-first-out, which makes every run reproducible
//! (STYLE.md, "Deterministic events").
//!
//! Hand-written rather than `std::collections::BinaryHeap` because the event list is the hot
//! spot of the simulator (a third of the time with std's heap). It is the same binary heap with
//! the same branch-free bottom-up removal, plus one trick std's API cannot offer: a handed-out
//! root stays in place until the next operation, so the common "a server finishes and starts the
//! next request" does one sift instead of a pop plus a push (the `heapreplace` of Python's heapq;
//! Knuth, *TAOCP* vol. 3, §5.2.3). A 4-ary heap was tried and lost: fewer levels, but picking
//! the least of four children mispredicts branches three times as often.

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

/// `a` fires before `b`. `seq` is unique, so this is a strict total order.
#[inline(always)]
fn before(a: &Event, b: &Event) -> bool {
    key(a) < key(b)
}

/// (time, seq) as one 128-bit number: one wide comparison instead of two branches, which lets
/// the compiler pick the smallest child without mispredicted jumps.
#[inline(always)]
fn key(e: &Event) -> u128 {
    (u128::from(e.time_ns) << 64) | u128::from(e.seq)
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
    heap: Vec<Event>,
    next_seq: u64,
    /// The root has been handed out by [`EventQueue::pop`] but not yet removed: the next push
    /// takes its place, anything else removes it first.
    root_taken: bool,
}

impl EventQueue {
    /// An empty queue with room for `capacity` pending events.
    pub fn with_capacity(capacity: usize) -> Self {
        EventQueue {
            heap: Vec::with_capacity(capacity),
            next_seq: 0,
            root_taken: false,
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
        let e = Event {
            time_ns,
            seq: self.next_seq(),
            payload,
        };
        if self.root_taken {
            self.root_taken = false;
            self.fill_root(e);
        } else {
            self.heap.push(e);
            self.sift_up(self.heap.len() - 1, e);
        }
    }

    /// The earliest pending event, if any.
    #[inline]
    pub fn peek(&mut self) -> Option<&Event> {
        self.settle();
        self.heap.first()
    }

    /// Remove and return the earliest pending event.
    #[inline]
    pub fn pop(&mut self) -> Option<Event> {
        self.settle();
        let e = *self.heap.first()?;
        self.root_taken = true;
        Some(e)
    }

    /// Finish removing a handed-out root: the last leaf refills it.
    #[inline]
    fn settle(&mut self) {
        if self.root_taken {
            self.root_taken = false;
            if let Some(last) = self.heap.pop()
                && !self.heap.is_empty()
            {
                self.fill_root(last);
            }
        }
    }

    /// Put `e` at `i` (a hole) and move it towards the root until its parent fires first.
    #[inline]
    fn sift_up(&mut self, mut i: usize, e: Event) {
        while i > 0 {
            let parent = (i - 1) / 2;
            if !before(&e, &self.heap[parent]) {
                break;
            }
            self.heap[i] = self.heap[parent];
            i = parent;
        }
        self.heap[i] = e;
    }

    /// Fill the hole at the root with `e`: walk the hole down to a leaf along the earlier child
    /// (one comparison per level, chosen without a branch), then let `e` rise from there. New
    /// events are mostly later than what is pending, so they rise little: Floyd's bottom-up
    /// heapsort trick, as in `std::collections::BinaryHeap::pop`.
    #[inline]
    fn fill_root(&mut self, e: Event) {
        let len = self.heap.len();
        let mut hole = 0;
        let mut child = 1;
        while child + 1 < len {
            child += usize::from(before(&self.heap[child + 1], &self.heap[child]));
            self.heap[hole] = self.heap[child];
            hole = child;
            child = 2 * hole + 1;
        }
        if child < len {
            self.heap[hole] = self.heap[child];
            hole = child;
        }
        self.sift_up(hole, e);
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

    /// Against a sorted reference: random times with many ties, pops interleaved with pushes
    /// (including the push-after-pop path that reuses the root).
    #[test]
    fn matches_a_sorted_reference_under_interleaving() {
        use rand::RngExt;
        let mut rng = crate::rng::stream(5, 0, 0);
        let mut q = EventQueue::with_capacity(0);
        let mut reference: Vec<(u64, u64)> = Vec::new();
        let mut now = 0u64;
        for step in 0..20_000u64 {
            if rng.random_bool(0.55) || reference.is_empty() {
                let t = now + rng.random_range(0..50u64);
                let seq = q.next_seq;
                q.push(t, step);
                reference.push((t, seq));
            } else {
                reference.sort_unstable();
                let (t, seq) = reference.remove(0);
                let e = q
                    .pop()
                    .unwrap_or_else(|| panic!("queue empty at step {step}"));
                assert_eq!((e.time_ns, e.seq), (t, seq), "step {step}");
                now = t;
            }
        }
    }

    #[test]
    fn pack_round_trips() {
        let p = pack(7, 0xDEAD_BEEF, 0x0123_4567);
        assert_eq!(unpack(p), (7, 0xDEAD_BEEF, 0x0023_4567));
        assert_eq!(generation_bits(0x0123_4567), 0x0023_4567);
    }
}
