//! Prefix caching for continuous batching: each replica keeps the KV cache of prompt blocks it
//! has computed, and a request's prefill skips its leading blocks the replica still holds.
//!
//! The model follows vLLM's automatic prefix caching (V1 engine, on by default since "vLLM V1:
//! A Major Upgrade to vLLM's Core Architecture", <https://blog.vllm.ai/2025/01/27/v1-alpha-release.html>,
//! 2025-01-27: "hash-based prefix caching and LRU-based cache eviction … we now enable prefix
//! caching by default in V1"):
//!
//! * A prompt is a chain of fixed-size blocks (the trace's, [`PrefixBlocks`]); a block id covers
//!   its block and all before it, so a hit is a *leading run* of the request's blocks found in
//!   the replica's cache. The prefill computes the rest: `input − hit` tokens with
//!   `hit = min(k·block, input − 1)` for `k` leading blocks found ([`PrefixBlocks::hit_tokens`]:
//!   the last prompt token is always computed, to produce the first output token).
//! * Blocks of running sequences are held (reference-counted) and can be hit by any request
//!   admitted while they run. When a sequence completes its blocks become *evictable*: they stay
//!   cached in KV memory no running sequence reserves and are evicted least recently freed first.
//!   A request's blocks are freed last to first, so its tail goes before its shared head, as
//!   vLLM frees a finished request's blocks in reverse order.
//! * Capacity: at each admission the evictable blocks are cut to what fits in the replica's KV
//!   cache not reserved by running sequences, `⌊(kv_capacity − kv_used) / block⌋`, where
//!   `kv_used` counts every running sequence's full context reservation (continuous.rs). So the
//!   cache is large on a lightly loaded replica and shrinks to the running sequences' own blocks
//!   at full load, as vLLM's free-block queue does. A hit does not shrink the request's
//!   reservation (vLLM would share the blocks instead of allocating them): conservative.
//! * Caches are per replica; no blocks move between replicas (no Mooncake-style global store),
//!   so the dispatcher decides how often related requests meet the same cache.
//!
//! Hit and prompt tokens of the requests arriving after the warm-up are counted in the
//! replication's result; the report gives their ratio, the token hit rate.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

use serde::{Serialize, Serializer};

use super::core::Core;
use super::{FleetSpec, ServerModel};
use crate::traffic::Request;
use crate::traffic::prefix::PrefixBlocks;

/// Prefix caching on a continuous-batching fleet: the prompt blocks the requests refer to
/// ([`Request::prefix`]).
#[derive(Debug, Clone, PartialEq)]
pub struct PrefixCaching {
    pub blocks: Arc<PrefixBlocks>,
}

impl Serialize for PrefixCaching {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("PrefixCaching", 3)?;
        st.serialize_field("block_tokens", &self.blocks.block_tokens())?;
        st.serialize_field("requests", &self.blocks.requests())?;
        st.serialize_field("distinct_blocks", &self.blocks.distinct_blocks())?;
        st.end()
    }
}

/// Prompt and hit tokens of the measured requests of one replication.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct PrefixCounts {
    pub prompt_tokens: u64,
    pub hit_tokens: u64,
}

/// What prefix caching saved over a run, merged over replications.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PrefixCacheStats {
    /// Prompt tokens of the measured requests.
    pub prompt_tokens: u64,
    /// Of those, tokens whose prefill a replica's prefix cache skipped.
    pub hit_tokens: u64,
    /// `hit_tokens / prompt_tokens` (0 without prompt tokens).
    pub hit_rate: f64,
}

impl PrefixCacheStats {
    pub(crate) fn from_counts(c: PrefixCounts) -> Self {
        PrefixCacheStats {
            prompt_tokens: c.prompt_tokens,
            hit_tokens: c.hit_tokens,
            hit_rate: if c.prompt_tokens == 0 {
                0.0
            } else {
                c.hit_tokens as f64 / c.prompt_tokens as f64
            },
        }
    }
}

/// Multiplicative hashing of dense u32 block ids (Knuth, TAOCP vol. 3, §6.4): ids are small
/// consecutive integers, which SipHash would spend most of a lookup on. Lookups only, never
/// iteration order, so results do not depend on it.
#[derive(Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u32(&mut self, i: u32) {
        self.0 = u64::from(i).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

const NIL: u32 = u32::MAX;

#[derive(Debug, Clone, Copy)]
struct Node {
    id: u32,
    /// Running sequences holding the block; evictable (in the LRU list) at 0.
    refs: u32,
    prev: u32,
    next: u32,
}

/// One replica's cache: held blocks plus an LRU list of evictable ones (head = most recently
/// freed, tail = next evicted). Nodes live in a slab indexed by u32.
#[derive(Debug, Default)]
pub(crate) struct BlockCache {
    slot_of: HashMap<u32, u32, BuildHasherDefault<IdHasher>>,
    nodes: Vec<Node>,
    free_slots: Vec<u32>,
    head: u32,
    tail: u32,
    evictable: usize,
}

impl BlockCache {
    pub fn new() -> Self {
        BlockCache {
            head: NIL,
            tail: NIL,
            ..Default::default()
        }
    }

    /// Blocks cached (held or evictable).
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.slot_of.len()
    }

    /// Evictable blocks.
    #[cfg(test)]
    pub fn evictable(&self) -> usize {
        self.evictable
    }

    pub fn contains(&self, id: u32) -> bool {
        self.slot_of.contains_key(&id)
    }

    fn unlink(&mut self, s: u32) {
        let Node { prev, next, .. } = self.nodes[s as usize];
        if prev == NIL {
            self.head = next;
        } else {
            self.nodes[prev as usize].next = next;
        }
        if next == NIL {
            self.tail = prev;
        } else {
            self.nodes[next as usize].prev = prev;
        }
        self.evictable -= 1;
    }

    fn push_head(&mut self, s: u32) {
        let old = self.head;
        let n = &mut self.nodes[s as usize];
        n.prev = NIL;
        n.next = old;
        if old == NIL {
            self.tail = s;
        } else {
            self.nodes[old as usize].prev = s;
        }
        self.head = s;
        self.evictable += 1;
    }

    /// Evict least recently freed blocks until at most `max_evictable` are evictable.
    pub fn evict_to(&mut self, max_evictable: usize) {
        while self.evictable > max_evictable {
            let s = self.tail;
            self.unlink(s);
            let id = self.nodes[s as usize].id;
            self.slot_of.remove(&id);
            self.free_slots.push(s);
        }
    }

    /// Leading blocks of `blocks` cached.
    pub fn leading_hits(&self, blocks: &[u32]) -> usize {
        blocks.iter().take_while(|&&b| self.contains(b)).count()
    }

    /// A running sequence takes hold of `blocks`: cached ones are held once more (leaving the
    /// LRU list if they were evictable), new ones are cached, held.
    pub fn hold(&mut self, blocks: &[u32]) {
        for &id in blocks {
            match self.slot_of.get(&id) {
                Some(&s) => {
                    if self.nodes[s as usize].refs == 0 {
                        self.unlink(s);
                    }
                    self.nodes[s as usize].refs += 1;
                }
                None => {
                    let node = Node {
                        id,
                        refs: 1,
                        prev: NIL,
                        next: NIL,
                    };
                    let s = match self.free_slots.pop() {
                        Some(s) => {
                            self.nodes[s as usize] = node;
                            s
                        }
                        None => {
                            self.nodes.push(node);
                            (self.nodes.len() - 1) as u32
                        }
                    };
                    self.slot_of.insert(id, s);
                }
            }
        }
    }

    /// A sequence completes and lets go of `blocks`, last to first: a block no one holds becomes
    /// the most recently freed evictable block, so the request's first block is evicted last.
    pub fn release(&mut self, blocks: &[u32]) {
        for &id in blocks.iter().rev() {
            if let Some(&s) = self.slot_of.get(&id) {
                let n = &mut self.nodes[s as usize];
                n.refs = n.refs.saturating_sub(1);
                if n.refs == 0 {
                    self.push_head(s);
                }
            }
        }
    }
}

struct Inner {
    blocks: Arc<PrefixBlocks>,
    block_tokens: u64,
    caches: Vec<BlockCache>,
}

/// The prefix caches of every replica of a continuous-batching fleet, or nothing when prefix
/// caching is off (then every call is a pass-through).
pub(crate) struct PrefixCaches(Option<Inner>);

impl PrefixCaches {
    pub fn new(fleet: &FleetSpec) -> Self {
        match &fleet.server {
            ServerModel::ContinuousBatching {
                replicas,
                prefix_cache: Some(p),
                ..
            } => PrefixCaches(Some(Inner {
                block_tokens: u64::from(p.blocks.block_tokens().max(1)),
                blocks: p.blocks.clone(),
                caches: (0..fleet.units as usize * *replicas as usize)
                    .map(|_| BlockCache::new())
                    .collect(),
            })),
            _ => PrefixCaches(None),
        }
    }

    /// The admission hook: `req` is admitted to `replica`, whose KV cache has `free_kv_tokens`
    /// not reserved by running sequences (this one included). Returns the prompt tokens its
    /// prefill must compute, and counts the measured ones.
    #[inline]
    pub fn admit(
        &mut self,
        replica: u32,
        req: &Request,
        free_kv_tokens: u64,
        core: &mut Core,
    ) -> u64 {
        let Some(p) = self.0.as_mut() else {
            return u64::from(req.input_tokens);
        };
        let cache = &mut p.caches[replica as usize];
        cache.evict_to((free_kv_tokens / p.block_tokens) as usize);
        let blocks = p.blocks.blocks(req.prefix);
        let hit = p
            .blocks
            .hit_tokens(cache.leading_hits(blocks), req.input_tokens);
        cache.hold(blocks);
        if req.arrival_ns >= core.warmup_ns {
            let c = core.rec.prefix.get_or_insert_default();
            c.prompt_tokens += u64::from(req.input_tokens);
            c.hit_tokens += u64::from(hit);
        }
        u64::from(req.input_tokens - hit)
    }

    /// Prompt tokens of `req` the prefill on `replica` would skip if it were admitted now,
    /// leaving the cache as it is (the scheduler sizes the request's first chunk and KV with it
    /// before [`PrefixCaches::admit`] takes hold of the blocks); 0 with prefix caching off.
    #[inline]
    pub fn peek_hit(&self, replica: u32, req: &Request) -> u32 {
        let Some(p) = self.0.as_ref() else {
            return 0;
        };
        let cache = &p.caches[replica as usize];
        let blocks = p.blocks.blocks(req.prefix);
        p.blocks
            .hit_tokens(cache.leading_hits(blocks), req.input_tokens)
    }

    /// The completion hook: `req` leaves `replica`, its blocks stay cached, evictable.
    #[inline]
    pub fn release(&mut self, replica: u32, req: &Request) {
        if let Some(p) = self.0.as_mut() {
            p.caches[replica as usize].release(p.blocks.blocks(req.prefix));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evicts_the_least_recently_freed_and_a_request_tail_first() {
        let mut c = BlockCache::new();
        // Request A holds 1, 2, 3; request B holds 1, 4.
        c.hold(&[1, 2, 3]);
        c.hold(&[1, 4]);
        assert_eq!((c.len(), c.evictable()), (4, 0));
        // Nothing evictable while both run, whatever the room.
        c.evict_to(0);
        assert_eq!(c.len(), 4);
        // A completes: 3, then 2 freed (1 is still held by B). LRU order: 2 (newest), 3.
        c.release(&[1, 2, 3]);
        assert_eq!(c.evictable(), 2);
        c.evict_to(1);
        assert!(!c.contains(3) && c.contains(2) && c.contains(1));
        // B completes: 4, then 1 freed; order 1 (newest), 4, 2 (oldest).
        c.release(&[1, 4]);
        c.evict_to(2);
        assert!(!c.contains(2) && c.contains(4) && c.contains(1));
        c.evict_to(1);
        assert!(!c.contains(4) && c.contains(1));
        // Held again, 1 leaves the LRU list and survives any eviction.
        c.hold(&[1, 5]);
        c.evict_to(0);
        assert!(c.contains(1) && c.contains(5));
        assert_eq!(c.leading_hits(&[1, 5, 6, 5]), 2);
        assert_eq!(c.leading_hits(&[6, 1]), 0);
        // Slots are reused: never more nodes than blocks ever cached at once.
        assert!(c.nodes.len() <= 4);
    }
}
